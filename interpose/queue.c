/*
 * queue.c: command queues, and the queue-level commands that carry no data (markers,
 * barriers, flush, finish). Every VAST queue has one real queue; virtual commands run in the
 * executor (executor.c) and appear on the real queue as a marker waiting on their event, so
 * markers, barriers, clFlush and clFinish pass through and still cover them. Out-of-order
 * queues remember their last barrier: virtual commands enqueued after it wait for it.
 */
#include "api.h"
#include "check.h"
#include "chain.h"
#include "executor.h"
#include "onqueue.h"

#include <stdlib.h>

static void queue_destroy(struct vast_object *obj)
{
    cl_command_queue q = (cl_command_queue)obj;
    vast_chain_queue_free(q);
    for (size_t i = 0; i < q->nwaited; i++)
        q->context->backend->dispatch->clReleaseEvent(q->waited[i]);
    free(q->waited);
    if (q->barrier != NULL)
        q->context->backend->dispatch->clReleaseEvent(q->barrier);
    if (q->real != NULL)
        q->context->backend->dispatch->clReleaseCommandQueue(q->real);
    pthread_cond_destroy(&q->reaped_cond);
    VAST_RELEASE(q->context);
}

static cl_command_queue queue_wrap(cl_context context, cl_device_id device, cl_command_queue real, cl_int *errcode_ret)
{
    cl_command_queue q = vast_object_alloc(sizeof *q);
    if (q == NULL) {
        context->backend->dispatch->clReleaseCommandQueue(real);
        vast_set_error(errcode_ret, CL_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    vast_object_init(&q->obj, VAST_MAGIC_QUEUE, queue_destroy);
    pthread_cond_init(&q->reaped_cond, NULL);
    q->real = real;
    q->context = context;
    q->device = device;
    cl_command_queue_properties props = 0;
    context->backend->dispatch->clGetCommandQueueInfo(real, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    q->profiling = (props & CL_QUEUE_PROFILING_ENABLE) != 0;
    q->in_order = (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) == 0;
    VAST_RETAIN(context);
    vast_set_error(errcode_ret, CL_SUCCESS);
    return q;
}

static cl_int queue_check_device(cl_context context, cl_device_id device)
{
    VAST_CHECK(device, VAST_MAGIC_DEVICE, CL_INVALID_DEVICE);
    for (cl_uint i = 0; i < context->num_devices; i++)
        if (context->devices[i] == device)
            return CL_SUCCESS;
    VAST_FAIL(CL_INVALID_DEVICE, "device %s is not in the context", device->name);
}

cl_command_queue vast_clCreateCommandQueue(cl_context context, cl_device_id device,
                                           cl_command_queue_properties properties, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    cl_int err = queue_check_device(context, device);
    VAST_RETURN_NULL_IF(err != CL_SUCCESS, err, errcode_ret, "device");
    VAST_REAL_OR_NULL(context->backend, context->real, clCreateCommandQueue, errcode_ret);
    cl_command_queue real = fn_(context->real, device->real, properties, &err);
    VAST_RETURN_NULL_IF(real == NULL, err, errcode_ret, "the real clCreateCommandQueue failed");
    return queue_wrap(context, device, real, errcode_ret);
}

cl_command_queue vast_clCreateCommandQueueWithProperties(cl_context context, cl_device_id device,
                                                         const cl_queue_properties *properties, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    cl_int err = queue_check_device(context, device);
    VAST_RETURN_NULL_IF(err != CL_SUCCESS, err, errcode_ret, "device");
    VAST_REAL_OR_NULL(context->backend, context->real, clCreateCommandQueueWithProperties, errcode_ret);
    cl_command_queue real = fn_(context->real, device->real, properties, &err);
    VAST_RETURN_NULL_IF(real == NULL, err, errcode_ret, "the real clCreateCommandQueueWithProperties failed");
    return queue_wrap(context, device, real, errcode_ret);
}

/* The specification makes the last release flush the queue; the real release does. Kernels
 * VAST put on it hold it until VAST sees them end (onqueue.h): waited for here. */
VAST_RETAIN_RELEASE_AFTER(vast_clRetainCommandQueue, vast_clReleaseCommandQueue, cl_command_queue, command_queue,
                          VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE,
                          vast_onqueue_reap(command_queue->device, command_queue, VAST_REAP_WAIT, true))

cl_int vast_clGetCommandQueueInfo(cl_command_queue command_queue, cl_command_queue_info param_name,
                                  size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
    VAST_CHECK(command_queue, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE);
    cl_command_queue none = NULL;
    switch (param_name) {
    case CL_QUEUE_CONTEXT:
        return vast_info_answer(&command_queue->context, sizeof(cl_context), param_value_size, param_value,
                                param_value_size_ret);
    case CL_QUEUE_DEVICE:
        return vast_info_answer(&command_queue->device, sizeof(cl_device_id), param_value_size, param_value,
                                param_value_size_ret);
    case CL_QUEUE_REFERENCE_COUNT:
        return vast_info_refcount(&command_queue->obj, param_value_size, param_value, param_value_size_ret);
    case CL_QUEUE_DEVICE_DEFAULT: /* device-side queues are not wrapped */
        return vast_info_answer(&none, sizeof none, param_value_size, param_value, param_value_size_ret);
    default:
        VAST_PASS(command_queue->context->backend, command_queue->real, clGetCommandQueueInfo, command_queue->real,
                  param_name, param_value_size, param_value, param_value_size_ret);
    }
}

cl_int vast_clSetCommandQueueProperty(cl_command_queue command_queue, cl_command_queue_properties properties,
                                      cl_bool enable, cl_command_queue_properties *old_properties)
{
    VAST_CHECK(command_queue, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE);
    VAST_PASS(command_queue->context->backend, command_queue->real, clSetCommandQueueProperty, command_queue->real,
              properties, enable, old_properties);
}

cl_int vast_clSetDefaultDeviceCommandQueue(cl_context context, cl_device_id device, cl_command_queue command_queue)
{
    VAST_CHECK(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT);
    VAST_CHECK(device, VAST_MAGIC_DEVICE, CL_INVALID_DEVICE);
    /* Virtual devices report no device-side enqueue (device.c), so none can be replaced,
     * whatever the queue (the CTS passes NULL). */
    VAST_RETURN_IF(device->is_root, CL_INVALID_OPERATION, "the virtual device has no device-side enqueue");
    VAST_CHECK(command_queue, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE);
    VAST_PASS(context->backend, context->real, clSetDefaultDeviceCommandQueue, context->real, device->real,
              command_queue->real);
}

cl_int vast_clFlush(cl_command_queue command_queue)
{
    VAST_CHECK(command_queue, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE);
    VAST_PASS(command_queue->context->backend, command_queue->real, clFlush, command_queue->real);
}

/* The real clFinish waits for virtual commands too (their markers), then for the executor to
 * have freed the ones submitted before (the objects they held are released when clFinish
 * returns); the first failure of one of them not yet reported is returned, as drivers report
 * a failed launch. */
cl_int vast_clFinish(cl_command_queue command_queue)
{
    VAST_CHECK(command_queue, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE);
    cl_api_clFinish fn = VAST_REAL(command_queue->context->backend, command_queue->real, clFinish);
    VAST_RETURN_IF(fn == NULL, CL_INVALID_OPERATION, "the real platform has no clFinish");
    uint64_t before = atomic_load(&command_queue->submitted);
    uint64_t real_before = vast_queue_real_count(command_queue);
    cl_int err = fn(command_queue->real);
    if (err == CL_SUCCESS)
        vast_queue_real_ended(command_queue, real_before);
    vast_onqueue_reap(command_queue->device, command_queue, err == CL_SUCCESS ? VAST_REAP_DONE : VAST_REAP_WAIT,
                      true);
    pthread_mutex_lock(&command_queue->obj.lock); /* and what they held is released */
    while (command_queue->reaped < before)
        pthread_cond_wait(&command_queue->reaped_cond, &command_queue->obj.lock);
    pthread_mutex_unlock(&command_queue->obj.lock);
    cl_int failed = vast_queue_take_error(command_queue);
    return err != CL_SUCCESS ? err : failed;
}

static bool event_complete(const struct _cl_icd_dispatch *d, cl_event real)
{
    cl_int st = CL_QUEUED;
    return d->clGetEventInfo(real, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) == CL_SUCCESS &&
           st <= CL_COMPLETE; /* complete, or ended in an error */
}

/* Lock held: drops the noted events that have completed. */
static void prune_waited(cl_command_queue q)
{
    const struct _cl_icd_dispatch *d = q->context->backend->dispatch;
    size_t kept = 0;
    for (size_t i = 0; i < q->nwaited; i++)
        if (event_complete(d, q->waited[i]))
            d->clReleaseEvent(q->waited[i]);
        else
            q->waited[kept++] = q->waited[i];
    q->nwaited = kept;
}

cl_int vast_queue_unwrap(cl_command_queue q, cl_uint n, const cl_event *events, struct vast_list *out)
{
    cl_int err = vast_unwrap_events(q->context, n, events, out);
    const struct _cl_icd_dispatch *d = q->context->backend->dispatch;
    for (cl_uint i = 0; err == CL_SUCCESS && i < n; i++) {
        cl_event real = out->items[i];
        if (event_complete(d, real))
            continue;
        pthread_mutex_lock(&q->obj.lock);
        prune_waited(q);
        if (q->nwaited == q->capwaited) {
            size_t cap = q->capwaited ? 2 * q->capwaited : 8;
            cl_event *grown = realloc(q->waited, cap * sizeof *grown);
            if (grown != NULL) {
                q->waited = grown;
                q->capwaited = cap;
            }
        }
        bool noted = q->nwaited < q->capwaited;
        if (noted) {
            d->clRetainEvent(real);
            q->waited[q->nwaited++] = real;
        }
        pthread_mutex_unlock(&q->obj.lock);
        if (!noted) {
            vast_list_free(out);
            VAST_FAIL(CL_OUT_OF_HOST_MEMORY, "wait list");
        }
    }
    return err;
}

void vast_queue_note_real(cl_command_queue q) { atomic_fetch_add(&q->real_enqueued, 1); }

uint64_t vast_queue_real_count(cl_command_queue q) { return atomic_load(&q->real_enqueued); }

void vast_queue_real_ended(cl_command_queue q, uint64_t count)
{
    uint64_t was = atomic_load(&q->real_ended);
    while (was < count && !atomic_compare_exchange_weak(&q->real_ended, &was, count))
        ;
}

bool vast_queue_real_idle(cl_command_queue q) { return atomic_load(&q->real_ended) == atomic_load(&q->real_enqueued); }

bool vast_queue_waits_done(cl_command_queue q)
{
    pthread_mutex_lock(&q->obj.lock);
    prune_waited(q);
    bool done = q->nwaited == 0;
    pthread_mutex_unlock(&q->obj.lock);
    return done;
}

/* Markers and barriers: commands made of a wait list alone (both entries share one type). */
static cl_int enqueue_wait_list_only(cl_command_queue q, cl_api_clEnqueueMarkerWithWaitList fn, const char *what,
                                     cl_uint num_events, const cl_event *wait_list, cl_event *event)
{
    VAST_RETURN_IF(fn == NULL, CL_INVALID_OPERATION, "the real platform has no %s", what);
    struct vast_list waits;
    cl_int err = vast_queue_unwrap(q, num_events, wait_list, &waits);
    if (err != CL_SUCCESS)
        return err;
    cl_event real_ev = NULL;
    err = fn(q->real, num_events, num_events ? (const cl_event *)waits.items : NULL, event ? &real_ev : NULL);
    vast_queue_note_real(q);
    vast_list_free(&waits);
    return err == CL_SUCCESS ? vast_event_wrap_out(q, real_ev, event) : err;
}

cl_int vast_clEnqueueMarkerWithWaitList(cl_command_queue command_queue, cl_uint num_events_in_wait_list,
                                        const cl_event *event_wait_list, cl_event *event)
{
    VAST_CHECK(command_queue, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE);
    return enqueue_wait_list_only(command_queue,
                                  VAST_REAL(command_queue->context->backend, command_queue->real,
                                            clEnqueueMarkerWithWaitList),
                                  "clEnqueueMarkerWithWaitList", num_events_in_wait_list, event_wait_list, event);
}

cl_event vast_queue_last_barrier(cl_command_queue q)
{
    pthread_mutex_lock(&q->obj.lock);
    cl_event b = q->barrier;
    if (b != NULL)
        q->context->backend->dispatch->clRetainEvent(b);
    pthread_mutex_unlock(&q->obj.lock);
    return b;
}

/* A barrier on an out-of-order queue: virtual commands are not real commands of the queue,
 * so the barrier's event is kept for the virtual commands enqueued after it (executor.c). */
static cl_int enqueue_ooo_barrier(cl_command_queue q, cl_api_clEnqueueBarrierWithWaitList fn, cl_uint num_events,
                                  const cl_event *wait_list, cl_event *event)
{
    VAST_RETURN_IF(fn == NULL, CL_INVALID_OPERATION, "the real platform has no clEnqueueBarrierWithWaitList");
    struct vast_list waits;
    cl_int err = vast_queue_unwrap(q, num_events, wait_list, &waits);
    if (err != CL_SUCCESS)
        return err;
    const struct _cl_icd_dispatch *d = q->context->backend->dispatch;
    cl_event real_ev = NULL;
    pthread_mutex_lock(&q->obj.lock);
    err = fn(q->real, num_events, num_events ? (const cl_event *)waits.items : NULL, &real_ev);
    vast_queue_note_real(q);
    if (err == CL_SUCCESS) {
        if (q->barrier != NULL)
            d->clReleaseEvent(q->barrier);
        q->barrier = real_ev;
        d->clRetainEvent(real_ev);
    }
    pthread_mutex_unlock(&q->obj.lock);
    vast_list_free(&waits);
    if (err != CL_SUCCESS)
        return err;
    if (event == NULL) {
        d->clReleaseEvent(real_ev);
        return CL_SUCCESS;
    }
    return vast_event_wrap_out(q, real_ev, event);
}

cl_int vast_clEnqueueBarrierWithWaitList(cl_command_queue command_queue, cl_uint num_events_in_wait_list,
                                         const cl_event *event_wait_list, cl_event *event)
{
    VAST_CHECK(command_queue, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE);
    cl_api_clEnqueueBarrierWithWaitList fn =
        VAST_REAL(command_queue->context->backend, command_queue->real, clEnqueueBarrierWithWaitList);
    if (!command_queue->in_order && command_queue->context->virtual_buffers)
        return enqueue_ooo_barrier(command_queue, fn, num_events_in_wait_list, event_wait_list, event);
    return enqueue_wait_list_only(command_queue, fn, "clEnqueueBarrierWithWaitList", num_events_in_wait_list,
                                  event_wait_list, event);
}

cl_int vast_clEnqueueMarker(cl_command_queue command_queue, cl_event *event)
{
    VAST_RETURN_IF(event == NULL, CL_INVALID_VALUE, "event is NULL");
    return vast_clEnqueueMarkerWithWaitList(command_queue, 0, NULL, event);
}

cl_int vast_clEnqueueBarrier(cl_command_queue command_queue)
{
    return vast_clEnqueueBarrierWithWaitList(command_queue, 0, NULL, NULL);
}

cl_int vast_clEnqueueWaitForEvents(cl_command_queue command_queue, cl_uint num_events, const cl_event *event_list)
{
    VAST_CHECK(command_queue, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE);
    VAST_RETURN_IF(num_events == 0 || event_list == NULL, CL_INVALID_VALUE, "no events to wait for");
    return vast_clEnqueueBarrierWithWaitList(command_queue, num_events, event_list, NULL);
}
