/*
 * vbuf.h: virtual buffers. In a context on a backend's shared real context every buffer is
 * virtual: its bytes live in a host backing store and, while kernels use them, in the device
 * page cache of its home device (pagecache/). Host-side commands work on the backing store,
 * kept coherent with the device pages. Called by buffer.c (creation, commands), kernel.c and
 * launch.c (residency for launches), device.c (reported sizes).
 *
 * Virtual commands. Every command that touches a virtual buffer is run by VAST, not by the
 * real driver: the application's thread checks the arguments, captures the command (buffers
 * retained, fill patterns and rects copied; host pointers kept, as the specification lets
 * the application touch them only after completion) and submits it to the executor of the
 * device (executor.c), which runs it when its wait list, and on in-order queues every earlier
 * command of the queue, have completed. Non-blocking commands return at once; blocking ones
 * wait for the command's event. The returned event is VAST's: its status, callbacks and
 * profiling times (QUEUED at enqueue, SUBMIT when the dependencies resolved, START and END
 * around the whole command, every partition and transfer included) come from the executor.
 * A map returns its pointer (into the backing store) at enqueue; the coherence work is the
 * command's. A command whose wait list failed is not run and fails with
 * CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST; a command that fails reports its error as
 * its event's status.
 */
#ifndef VAST_INTERPOSE_VBUF_H
#define VAST_INTERPOSE_VBUF_H

#include "executor.h"
#include "object.h"

static inline bool vast_mem_is_virtual(cl_mem m) { return m != NULL && m->pc != NULL; }

/* The buffer a sub-buffer views, or the buffer itself: views of one root share its pages. */
static inline cl_mem vast_mem_root(cl_mem m) { return m->parent ? m->parent : m; }

/* m's view in the page cache of dev, a device of m's context (a buffer belongs to its
 * context: each device pages it in its own cache; pagecache/README.md "Several devices"). */
struct vast_pc_buffer *vast_mem_pc(cl_mem m, cl_device_id dev);

/* Before a command on `dev` uses bytes [offset, offset+size) of m: the dirty pages of the
 * range in the other devices' caches reach the host (merged), and dev's copies older than
 * the host are dropped. dev NULL (host-side commands, which use m->pc): every cache but
 * m->pc's is flushed. Nothing to do in a context of one device. */
cl_int vast_vbuf_coherent(cl_mem m, cl_device_id dev, size_t offset, size_t size);

/* m's store goes to the background pinner now if it waits for its first use (a host write
 * that ended, a launch that runs: vbuf.c says why); nothing otherwise, once atomic. */
void vast_vbuf_pin(cl_mem m);
/* m's store is pinned no further: what the background pinner has not pinned of it yet is
 * staged by every transfer (pagecache_backing_stage_rest; launch.c says when). */
void vast_vbuf_stage(cl_mem m);

/* What a virtual device reports as its memory and largest allocation. */
cl_ulong vast_virtual_memory_bytes(void);

/* The device page cache of a root device, made on first use; NULL with *err set on failure. */
struct vast_pool *vast_device_pool(cl_device_id device, cl_int *err);

/* OpenCL error code for a pagecache status. */
cl_int vast_pc_error(int status);

cl_mem vast_vbuf_create(cl_context context, cl_mem_flags flags, size_t size, void *host_ptr, cl_int *errcode_ret);
cl_mem vast_vbuf_create_sub(cl_mem buffer, cl_mem_flags flags, cl_buffer_create_type type, const void *info,
                            cl_int *errcode_ret);
cl_int vast_vbuf_info(cl_mem m, cl_mem_info param, size_t size, void *value, size_t *size_ret);
cl_int vast_vbuf_add_destructor(cl_mem m, void(CL_CALLBACK *fn)(cl_mem, void *), void *user_data);

/* Rect commands: `buffer` side addressed by origin/pitches in the virtual buffer, the other
 * side by host memory (read/write) or another virtual buffer (copy). */
struct vast_rect {
    size_t origin[3], region[3];
    size_t row_pitch, slice_pitch;
};
cl_int vast_vbuf_read_rect(cl_mem m, const struct vast_rect *buf, const struct vast_rect *host, void *ptr);
cl_int vast_vbuf_write_rect(cl_mem m, const struct vast_rect *buf, const struct vast_rect *host, const void *ptr);
cl_int vast_vbuf_copy_rect(cl_mem src, cl_mem dst, const struct vast_rect *s, const struct vast_rect *d);

/* A host-side command on virtual buffers, as captured at enqueue (arguments checked by the
 * caller). `a` is the buffer (copies: the source), `b` a copy's destination; rects: `ra` on
 * a's side, `rb` on b's side or on host memory at `ptr`. */
enum vast_host_op {
    VAST_HOST_READ, VAST_HOST_WRITE, VAST_HOST_COPY, VAST_HOST_FILL, VAST_HOST_READ_RECT, VAST_HOST_WRITE_RECT,
    VAST_HOST_COPY_RECT, VAST_HOST_MAP, VAST_HOST_UNMAP, VAST_HOST_NOP,
    VAST_HOST_TO_IMAGE,   /* clEnqueueCopyBufferToImage: a's bytes [a_off, a_off+size) into `image` */
    VAST_HOST_FROM_IMAGE, /* clEnqueueCopyImageToBuffer: `image` into a's bytes [a_off, a_off+size) */
};
struct vast_host_cmd {
    enum vast_host_op op;
    cl_mem a, b;
    size_t a_off, b_off, size;
    void *ptr;
    struct vast_rect ra, rb;
    unsigned char pattern[128];
    size_t pattern_size;
    struct vast_map *map; /* maps and unmaps (vbuf.c) */
    cl_mem image;         /* image copies: the real image, at ra.origin over ra.region (image.c) */
    cl_command_type type; /* what its event reports, when not the op's own (commands on a 1D
                           * image buffer made from a virtual buffer are its buffer's, image.c) */
};

/* Submit a host-side command (the buffers are retained for it). */
cl_int vast_vbuf_enqueue(cl_command_queue q, const struct vast_host_cmd *cmd, bool blocking, cl_uint num_events,
                         const cl_event *wait_list, cl_event *event);
/* clEnqueueMapBuffer and clEnqueueUnmapMemObject on a virtual buffer (checked by the caller). */
void *vast_vbuf_enqueue_map(cl_command_queue q, cl_mem m, cl_map_flags flags, size_t offset, size_t size,
                            bool blocking, cl_uint num_events, const cl_event *wait_list, cl_event *event,
                            cl_int *errcode_ret);
cl_int vast_vbuf_enqueue_unmap(cl_command_queue q, cl_mem m, void *ptr, cl_uint num_events, const cl_event *wait_list,
                               cl_event *event);

/* Executor side of VAST_HOST_TO_IMAGE and VAST_HOST_FROM_IMAGE (image.c). */
cl_int vast_image_host_copy(const struct vast_host_cmd *cmd);

/* The root page range of bytes [offset, offset+size) of m. */
int vast_vbuf_pages(cl_mem m, size_t offset, size_t size, size_t *first, size_t *count);

/* A buffer made from SVM memory (m->uses_svm on its root) is that memory, which the real
 * driver may keep on the device between SVM maps (NVIDIA's coarse-grained SVM: host stores
 * without a map are lost, kernel stores unseen): host-side commands touch its bytes only
 * between begin (a blocking real SVM map of the buffer's range, for reading, or reading and
 * writing) and end (the unmap, waited for). No-ops (CL_SUCCESS) for other buffers and NULL. */
cl_int vast_vbuf_svm_begin(cl_mem m, bool write);
cl_int vast_vbuf_svm_end(cl_mem m);

#endif
