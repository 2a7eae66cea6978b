/*
 * vbuf.h: virtual buffers. In a context on a backend's shared real context every buffer is
 * virtual: its bytes live in a host backing store and, while kernels use them, in the device
 * page cache of its home device (pagecache/). Host-side commands work on the backing store,
 * kept coherent with the device pages. Called by buffer.c (creation, commands), kernel.c and
 * launch.c (residency for launches), device.c (reported sizes).
 *
 * Until the per-device executor exists (issue 6), a virtual command runs in the calling
 * thread: it waits for its wait list and for the queue's earlier commands, does its work,
 * and returns a completed event. Results are those of in-order execution.
 */
#ifndef VAST_INTERPOSE_VBUF_H
#define VAST_INTERPOSE_VBUF_H

#include "object.h"

static inline bool vast_mem_is_virtual(cl_mem m) { return m != NULL && m->pc != NULL; }

/* The buffer a sub-buffer views, or the buffer itself: views of one root share its pages. */
static inline cl_mem vast_mem_root(cl_mem m) { return m->parent ? m->parent : m; }

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

/* Start and finish a virtual command on `queue` (see the file comment). `queued` is the
 * host monotonic time in ns when the application enqueued it (vast_now_ns). */
cl_ulong vast_now_ns(void);
cl_int vast_vcmd_begin(cl_command_queue queue, cl_uint num_events, const cl_event *wait_list);
cl_int vast_vcmd_end(cl_command_queue queue, cl_command_type command, cl_int status, cl_event *event,
                     cl_ulong queued, cl_ulong start);

/* The whole of a virtual command whose work is the expression `op` (a cl_int). */
#define VAST_VCMD(q, nw, wl, ev, type, op)                                                        \
    do {                                                                                          \
        cl_ulong queued_ = vast_now_ns();                                                         \
        cl_int e_ = vast_vcmd_begin((q), (nw), (wl));                                             \
        cl_ulong start_ = vast_now_ns();                                                          \
        if (e_ == CL_SUCCESS)                                                                     \
            e_ = (op);                                                                            \
        return vast_vcmd_end((q), (type), e_, (ev), queued_, start_);                             \
    } while (0)

/* The host-side commands on virtual buffers (arguments already checked by the caller). */
cl_int vast_vbuf_read(cl_mem m, size_t offset, size_t size, void *ptr);
cl_int vast_vbuf_write(cl_mem m, size_t offset, size_t size, const void *ptr);
cl_int vast_vbuf_copy(cl_mem src, cl_mem dst, size_t src_offset, size_t dst_offset, size_t size);
cl_int vast_vbuf_fill(cl_mem m, const void *pattern, size_t pattern_size, size_t offset, size_t size);
cl_int vast_vbuf_map(cl_mem m, cl_map_flags flags, size_t offset, size_t size, void **ptr);
cl_int vast_vbuf_unmap(cl_mem m, void *ptr);

/* Rect commands: `buffer` side addressed by origin/pitches in the virtual buffer, the other
 * side by host memory (read/write) or another virtual buffer (copy). */
struct vast_rect {
    size_t origin[3], region[3];
    size_t row_pitch, slice_pitch;
};
cl_int vast_vbuf_read_rect(cl_mem m, const struct vast_rect *buf, const struct vast_rect *host, void *ptr);
cl_int vast_vbuf_write_rect(cl_mem m, const struct vast_rect *buf, const struct vast_rect *host, const void *ptr);
cl_int vast_vbuf_copy_rect(cl_mem src, cl_mem dst, const struct vast_rect *s, const struct vast_rect *d);

/* The root page range of bytes [offset, offset+size) of m. */
int vast_vbuf_pages(cl_mem m, size_t offset, size_t size, size_t *first, size_t *count);

#endif
