/*
 * event.c: events. A VAST event wraps the real event of the command that made it (or a real
 * user event) and remembers its queue and context for queries. Event callbacks go through a
 * trampoline that hands the application its VAST event and keeps it alive until run.
 */
#include "api.h"
#include "check.h"

#include <stdlib.h>

static void event_destroy(struct vast_object *obj)
{
    cl_event e = (cl_event)obj;
    if (e->real != NULL)
        e->context->backend->dispatch->clReleaseEvent(e->real);
    if (e->queue != NULL)
        VAST_RELEASE(e->queue);
    VAST_RELEASE(e->context);
}

static cl_event event_wrap(cl_context context, cl_command_queue queue, cl_event real)
{
    cl_event e = vast_object_alloc(sizeof *e);
    if (e == NULL)
        return NULL;
    vast_object_init(&e->obj, VAST_MAGIC_EVENT, event_destroy);
    e->real = real;
    e->context = context;
    e->queue = queue;
    VAST_RETAIN(context);
    if (queue != NULL)
        VAST_RETAIN(queue);
    return e;
}

cl_int vast_event_wrap_out(cl_command_queue queue, cl_event real, cl_event *event)
{
    if (event == NULL)
        return CL_SUCCESS;
    *event = real ? event_wrap(queue->context, queue, real) : NULL;
    if (real != NULL && *event == NULL) {
        queue->context->backend->dispatch->clReleaseEvent(real);
        VAST_FAIL(CL_OUT_OF_HOST_MEMORY, "event");
    }
    return CL_SUCCESS;
}

cl_event vast_clCreateUserEvent(cl_context context, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    VAST_REAL_OR_NULL(context->backend, context->real, clCreateUserEvent, errcode_ret);
    cl_int err;
    cl_event real = fn_(context->real, &err);
    VAST_RETURN_NULL_IF(real == NULL, err, errcode_ret, "the real clCreateUserEvent failed");
    cl_event e = event_wrap(context, NULL, real);
    if (e == NULL)
        context->backend->dispatch->clReleaseEvent(real);
    vast_set_error(errcode_ret, e ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY);
    return e;
}

cl_int vast_clSetUserEventStatus(cl_event event, cl_int execution_status)
{
    VAST_CHECK(event, VAST_MAGIC_EVENT, CL_INVALID_EVENT);
    VAST_PASS(event->context->backend, event->real, clSetUserEventStatus, event->real, execution_status);
}

cl_int vast_clWaitForEvents(cl_uint num_events, const cl_event *event_list)
{
    VAST_RETURN_IF(num_events == 0 || event_list == NULL, CL_INVALID_VALUE, "no events to wait for");
    VAST_CHECK(event_list[0], VAST_MAGIC_EVENT, CL_INVALID_EVENT);
    cl_context context = event_list[0]->context;
    struct vast_list reals;
    cl_int err = vast_unwrap_events(context, num_events, event_list, &reals);
    if (err == CL_INVALID_EVENT_WAIT_LIST)
        err = CL_INVALID_EVENT;
    if (err != CL_SUCCESS)
        return err;
    err = context->backend->dispatch->clWaitForEvents(num_events, (const cl_event *)reals.items);
    vast_list_free(&reals);
    return err;
}

cl_int vast_clRetainEvent(cl_event event)
{
    VAST_CHECK(event, VAST_MAGIC_EVENT, CL_INVALID_EVENT);
    VAST_RETAIN(event);
    return CL_SUCCESS;
}

cl_int vast_clReleaseEvent(cl_event event)
{
    VAST_CHECK(event, VAST_MAGIC_EVENT, CL_INVALID_EVENT);
    VAST_RELEASE(event);
    return CL_SUCCESS;
}

cl_int vast_clGetEventInfo(cl_event event, cl_event_info param_name, size_t param_value_size, void *param_value,
                           size_t *param_value_size_ret)
{
    VAST_CHECK(event, VAST_MAGIC_EVENT, CL_INVALID_EVENT);
    cl_uint refs = atomic_load(&event->obj.refcount);
    switch (param_name) {
    case CL_EVENT_COMMAND_QUEUE:
        return vast_info_answer(&event->queue, sizeof event->queue, param_value_size, param_value, param_value_size_ret);
    case CL_EVENT_CONTEXT:
        return vast_info_answer(&event->context, sizeof event->context, param_value_size, param_value,
                                param_value_size_ret);
    case CL_EVENT_REFERENCE_COUNT:
        return vast_info_answer(&refs, sizeof refs, param_value_size, param_value, param_value_size_ret);
    case CL_EVENT_COMMAND_TYPE:
        if (event->command != 0)
            return vast_info_answer(&event->command, sizeof event->command, param_value_size, param_value,
                                    param_value_size_ret);
        __attribute__((fallthrough));
    default:
        VAST_PASS(event->context->backend, event->real, clGetEventInfo, event->real, param_name, param_value_size,
                  param_value, param_value_size_ret);
    }
}

cl_int vast_clGetEventProfilingInfo(cl_event event, cl_profiling_info param_name, size_t param_value_size,
                                    void *param_value, size_t *param_value_size_ret)
{
    VAST_CHECK(event, VAST_MAGIC_EVENT, CL_INVALID_EVENT);
    if (event->command != 0) { /* a virtual command: VAST timed it (host monotonic clock) */
        VAST_RETURN_IF(!event->timed, CL_PROFILING_INFO_NOT_AVAILABLE, "the queue does not profile");
        VAST_RETURN_IF(param_name < CL_PROFILING_COMMAND_QUEUED || param_name > CL_PROFILING_COMMAND_COMPLETE,
                       CL_INVALID_VALUE, "profiling query 0x%x", (unsigned)param_name);
        size_t i = param_name == CL_PROFILING_COMMAND_COMPLETE ? 3 : param_name - CL_PROFILING_COMMAND_QUEUED;
        return vast_info_answer(&event->times[i], sizeof(cl_ulong), param_value_size, param_value,
                                param_value_size_ret);
    }
    VAST_PASS(event->context->backend, event->real, clGetEventProfilingInfo, event->real, param_name,
              param_value_size, param_value, param_value_size_ret);
}

struct event_callback {
    void(CL_CALLBACK *fn)(cl_event, cl_int, void *);
    cl_event event; /* retained until the callback has run */
    void *user_data;
};

static void *event_release_thread(void *event)
{
    VAST_RELEASE((cl_event)event);
    return NULL;
}

/* The driver's callback thread must not run the event's destructor: releasing the real
 * event's queue from inside the driver's own callback may wait on that very thread. When the
 * callback holds the last reference, the release moves to a short-lived thread. */
static void CL_CALLBACK event_callback_run(cl_event real, cl_int status, void *data)
{
    (void)real;
    struct event_callback *cb = data;
    cl_event event = cb->event;
    cb->fn(event, status, cb->user_data);
    free(cb);
    pthread_t thread;
    if (atomic_load(&event->obj.refcount) > 1 || pthread_create(&thread, NULL, event_release_thread, event) != 0)
        VAST_RELEASE(event);
    else
        pthread_detach(thread);
}

cl_int vast_clSetEventCallback(cl_event event, cl_int command_exec_callback_type,
                               void(CL_CALLBACK *pfn_notify)(cl_event, cl_int, void *), void *user_data)
{
    VAST_CHECK(event, VAST_MAGIC_EVENT, CL_INVALID_EVENT);
    VAST_RETURN_IF(pfn_notify == NULL, CL_INVALID_VALUE, "pfn_notify is NULL");
    VAST_RETURN_IF(command_exec_callback_type != CL_COMPLETE && command_exec_callback_type != CL_SUBMITTED &&
                       command_exec_callback_type != CL_RUNNING,
                   CL_INVALID_VALUE, "command_exec_callback_type %d", command_exec_callback_type);
    cl_api_clSetEventCallback fn = VAST_REAL(event->context->backend, event->real, clSetEventCallback);
    VAST_RETURN_IF(fn == NULL, CL_INVALID_OPERATION, "the real platform has no clSetEventCallback");
    struct event_callback *cb = malloc(sizeof *cb);
    VAST_RETURN_IF(cb == NULL, CL_OUT_OF_HOST_MEMORY, "callback");
    *cb = (struct event_callback){pfn_notify, event, user_data};
    VAST_RETAIN(event);
    cl_int err = fn(event->real, command_exec_callback_type, event_callback_run, cb);
    if (err != CL_SUCCESS) {
        VAST_RELEASE(event);
        free(cb);
    }
    return err;
}
