/*
 * svm.c: shared virtual memory, passed through where the real device supports it. SVM
 * pointers are the application's own addresses, so VAST cannot page them: they stay as the
 * real driver manages them (allocations of the shared real context), SVM commands pass
 * through (ordered with virtual commands by the executor's markers), and kernels get SVM
 * arguments as they are (kernel.c records them; launch.c runs such launches direct). A
 * buffer made from SVM memory (CL_MEM_USE_HOST_PTR) is that memory too: this file keeps the
 * live allocations so that vbuf.c can tell such buffers (vast_svm_covers).
 */
#include "api.h"
#include "check.h"
#include "mem.h"

#include <stdlib.h>

struct svm_alloc {
    cl_context context; /* not retained: the allocation dies with it */
    const char *base;
    size_t size;
};

static pthread_mutex_t svm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct svm_alloc *svm_allocs;
static size_t svm_count, svm_cap;

static void svm_remember(cl_context context, const void *base, size_t size)
{
    pthread_mutex_lock(&svm_lock);
    if (svm_count == svm_cap) {
        size_t cap = svm_cap ? 2 * svm_cap : 64;
        struct svm_alloc *grown = realloc(svm_allocs, cap * sizeof *grown);
        if (grown != NULL) {
            svm_allocs = grown;
            svm_cap = cap;
        }
    }
    if (svm_count < svm_cap) /* else buffers made from it are taken for host memory (logged) */
        svm_allocs[svm_count++] = (struct svm_alloc){context, base, size};
    else
        vast_error("out of host memory recording an SVM allocation");
    pthread_mutex_unlock(&svm_lock);
}

static void svm_forget(const void *base)
{
    pthread_mutex_lock(&svm_lock);
    for (size_t i = 0; i < svm_count; i++)
        if (svm_allocs[i].base == base) {
            svm_allocs[i] = svm_allocs[--svm_count];
            break;
        }
    pthread_mutex_unlock(&svm_lock);
}

bool vast_svm_covers(cl_context context, const void *ptr, size_t size)
{
    const char *p = ptr;
    bool found = false;
    pthread_mutex_lock(&svm_lock);
    for (size_t i = 0; i < svm_count && !found; i++) {
        const struct svm_alloc *a = &svm_allocs[i];
        found = a->context == context && p >= a->base && p < a->base + a->size &&
                size <= (size_t)(a->base + a->size - p);
    }
    pthread_mutex_unlock(&svm_lock);
    return found;
}

void *vast_clSVMAlloc(cl_context context, cl_svm_mem_flags flags, size_t size, cl_uint alignment)
{
    if (!vast_object_is(context, VAST_MAGIC_CONTEXT))
        return NULL;
    cl_api_clSVMAlloc fn = VAST_REAL(context->backend, context->real, clSVMAlloc);
    void *p = fn ? fn(context->real, flags, size, alignment) : NULL;
    if (p != NULL)
        svm_remember(context, p, size);
    return p;
}

void vast_clSVMFree(cl_context context, void *svm_pointer)
{
    if (!vast_object_is(context, VAST_MAGIC_CONTEXT))
        return;
    cl_api_clSVMFree fn = VAST_REAL(context->backend, context->real, clSVMFree);
    svm_forget(svm_pointer);
    if (fn != NULL)
        fn(context->real, svm_pointer);
}

struct svm_free_callback {
    void(CL_CALLBACK *fn)(cl_command_queue, cl_uint, void **, void *);
    cl_command_queue queue; /* retained until the callback has run */
    void *user_data;
};

static void CL_CALLBACK svm_free_run(cl_command_queue real, cl_uint n, void **pointers, void *data)
{
    (void)real;
    struct svm_free_callback *cb = data;
    cb->fn(cb->queue, n, pointers, cb->user_data);
    VAST_RELEASE(cb->queue);
    free(cb);
}

cl_int vast_clEnqueueSVMFree(cl_command_queue command_queue, cl_uint num_svm_pointers, void *svm_pointers[],
                             void(CL_CALLBACK *pfn_free_func)(cl_command_queue, cl_uint, void **, void *),
                             void *user_data, cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                             cl_event *event)
{
    VAST_CHECK(command_queue, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE);
    struct svm_free_callback *cb = NULL;
    if (pfn_free_func != NULL) {
        cb = malloc(sizeof *cb);
        VAST_RETURN_IF(cb == NULL, CL_OUT_OF_HOST_MEMORY, "callback");
        *cb = (struct svm_free_callback){pfn_free_func, command_queue, user_data};
        VAST_RETAIN(command_queue);
    }
    cl_int err = vast_enqueue_svm_free(command_queue, num_svm_pointers, svm_pointers, cb ? svm_free_run : NULL, cb,
                                       num_events_in_wait_list, event_wait_list, event);
    if (err != CL_SUCCESS && cb != NULL) {
        VAST_RELEASE(command_queue);
        free(cb);
    }
    for (cl_uint i = 0; err == CL_SUCCESS && svm_pointers != NULL && i < num_svm_pointers; i++)
        svm_forget(svm_pointers[i]); /* no new buffer may be made from memory about to go */
    return err;
}

cl_int vast_enqueue_svm_free(cl_command_queue command_queue, cl_uint num_svm_pointers, void *svm_pointers[],
                             void(CL_CALLBACK *pfn_free_func)(cl_command_queue, cl_uint, void **, void *),
                             void *user_data, cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                             cl_event *event)
{
    VAST_ENQUEUE(command_queue, clEnqueueSVMFree, num_events_in_wait_list, event_wait_list, event, num_svm_pointers,
                 svm_pointers, pfn_free_func, user_data);
}

cl_int vast_clEnqueueSVMMemcpy(cl_command_queue command_queue, cl_bool blocking_copy, void *dst_ptr,
                               const void *src_ptr, size_t size, cl_uint num_events_in_wait_list,
                               const cl_event *event_wait_list, cl_event *event)
{
    VAST_ENQUEUE(command_queue, clEnqueueSVMMemcpy, num_events_in_wait_list, event_wait_list, event, blocking_copy,
                 dst_ptr, src_ptr, size);
}

cl_int vast_clEnqueueSVMMemFill(cl_command_queue command_queue, void *svm_ptr, const void *pattern,
                                size_t pattern_size, size_t size, cl_uint num_events_in_wait_list,
                                const cl_event *event_wait_list, cl_event *event)
{
    VAST_ENQUEUE(command_queue, clEnqueueSVMMemFill, num_events_in_wait_list, event_wait_list, event, svm_ptr, pattern,
                 pattern_size, size);
}

cl_int vast_clEnqueueSVMMap(cl_command_queue command_queue, cl_bool blocking_map, cl_map_flags map_flags,
                            void *svm_ptr, size_t size, cl_uint num_events_in_wait_list,
                            const cl_event *event_wait_list, cl_event *event)
{
    VAST_ENQUEUE(command_queue, clEnqueueSVMMap, num_events_in_wait_list, event_wait_list, event, blocking_map,
                 map_flags, svm_ptr, size);
}

cl_int vast_clEnqueueSVMUnmap(cl_command_queue command_queue, void *svm_ptr, cl_uint num_events_in_wait_list,
                              const cl_event *event_wait_list, cl_event *event)
{
    VAST_ENQUEUE(command_queue, clEnqueueSVMUnmap, num_events_in_wait_list, event_wait_list, event, svm_ptr);
}

cl_int vast_clEnqueueSVMMigrateMem(cl_command_queue command_queue, cl_uint num_svm_pointers,
                                   const void **svm_pointers, const size_t *sizes, cl_mem_migration_flags flags,
                                   cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event)
{
    VAST_ENQUEUE(command_queue, clEnqueueSVMMigrateMem, num_events_in_wait_list, event_wait_list, event,
                 num_svm_pointers, svm_pointers, sizes, flags);
}
