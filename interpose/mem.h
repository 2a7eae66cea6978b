/*
 * mem.h: what buffer.c shares with image.c and kernel.c about memory objects.
 */
#ifndef VAST_INTERPOSE_MEM_H
#define VAST_INTERPOSE_MEM_H

#include "object.h"

/* Wrap a real memory object the real driver just made (`err` is its error when NULL). */
cl_mem vast_mem_wrap(cl_context context, cl_mem parent, cl_mem real, cl_int err, cl_int *errcode_ret);

/* The end of a map command: wrap its event, set *errcode_ret, return the pointer or NULL. */
void *vast_map_finish(cl_command_queue queue, void *ptr, cl_int err, cl_event real_ev, cl_event *event,
                      cl_int *errcode_ret);

/*
 * The body of a pass-through map (VAST_ENQUEUE of check.h for the entries that return the
 * mapped pointer): `...` are the real entry's arguments between the real queue and the wait
 * list; handles among them must be checked and unwrapped by the caller beforehand.
 */
#define VAST_ENQUEUE_MAP(q, entry, nw, wl, ev, errcode_ret, ...)                                  \
    do {                                                                                          \
        VAST_REAL_OR_NULL((q)->context->backend, (q)->real, entry, errcode_ret);                  \
        struct vast_list waits_;                                                                  \
        cl_int err_ = vast_queue_unwrap((q), (nw), (wl), &waits_);                                \
        VAST_RETURN_NULL_IF(err_ != CL_SUCCESS, err_, errcode_ret, "wait list");                  \
        cl_event real_ev_ = NULL;                                                                 \
        void *ptr_ = fn_((q)->real, __VA_ARGS__, (nw), (nw) ? (const cl_event *)waits_.items : NULL, \
                         (ev) ? &real_ev_ : NULL, &err_);                                         \
        vast_queue_note_real((q));                                                                \
        vast_list_free(&waits_);                                                                  \
        return vast_map_finish((q), ptr_, err_, real_ev_, (ev), errcode_ret);                     \
    } while (0)

/* clEnqueueMigrateMemObjects on real memory objects. */
cl_int vast_enqueue_migrate(cl_command_queue command_queue, cl_uint n, const cl_mem *reals,
                            cl_mem_migration_flags flags, cl_uint num_events_in_wait_list,
                            const cl_event *event_wait_list, cl_event *event);

/* clEnqueueNativeKernel with real memory objects in an argument block VAST owns. */
cl_int vast_enqueue_native(cl_command_queue command_queue, void(CL_CALLBACK *user_func)(void *), void *args,
                           size_t cb_args, cl_uint num_mem_objects, const cl_mem *mem_list, const void **args_mem_loc,
                           cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event);

/* True when [ptr, ptr + size) lies in one live clSVMAlloc allocation of the context. */
bool vast_svm_covers(cl_context context, const void *ptr, size_t size);

/* clEnqueueSVMFree with VAST's own callback already in place. */
cl_int vast_enqueue_svm_free(cl_command_queue command_queue, cl_uint num_svm_pointers, void *svm_pointers[],
                             void(CL_CALLBACK *pfn_free_func)(cl_command_queue, cl_uint, void **, void *),
                             void *user_data, cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                             cl_event *event);

/* Launches whose arguments include images made from virtual buffers (image.c): at most this
 * many such images per launch. */
#define VAST_LAUNCH_MIRRORS 8
/* The launch between copies of the images' buffers into their real buffers and, for the
 * images the kernel may write, back: `images` are retained by the caller, released here. */
cl_int vast_image_launch(cl_command_queue queue, cl_kernel kernel, cl_uint work_dim, const size_t *offset,
                         const size_t *global, const size_t *local, cl_mem *images, const bool *written, size_t n,
                         cl_uint num_events, const cl_event *wait_list, cl_event *event);

#endif
