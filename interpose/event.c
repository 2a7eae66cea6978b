/*
 * event.c: events. A VAST event wraps the real event of the command that made it (or a real
 * user event) and remembers its queue and context for queries. Event callbacks go through a
 * trampoline that hands the application its VAST event and keeps it alive until run.
 * Events of virtual commands (executor.c) wrap a real user event that completes only at the
 * end of the whole command; their status, profiling times and callbacks are VAST's own (and
 * so are the status and callbacks of the application's user events, see below): the
 * executor moves them through SUBMITTED, RUNNING and COMPLETE (or an error), and each
 * callback runs once, at the first status at or past the one it was registered for, with
 * that status (or the error), in the order of the statuses.
 */
#include "api.h"
#include "../base/clock.h"
#include "check.h"
#include "executor.h"
#include "onqueue.h"
#include "vbuf.h"

#include <stdlib.h>

struct vast_event_callback {
    struct vast_event_callback *next;
    void(CL_CALLBACK *fn)(cl_event, cl_int, void *);
    void *user_data;
    cl_int when; /* CL_SUBMITTED, CL_RUNNING or CL_COMPLETE */
};

static void event_destroy(struct vast_object *obj)
{
    cl_event e = (cl_event)obj;
    for (struct vast_event_callback *c = e->callbacks, *next; c != NULL; c = next) {
        next = c->next;
        free(c);
    }
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

cl_event vast_event_virtual(cl_command_queue queue, cl_command_type command, cl_event real)
{
    cl_event e = event_wrap(queue->context, queue, real);
    if (e == NULL)
        return NULL;
    e->command = command;
    e->timed = queue->profiling;
    e->times[0] = vast_now_ns();
    atomic_init(&e->status, CL_QUEUED);
    return e;
}

/* Run the callbacks of `list` (taken off the event) in status order: SUBMITTED, RUNNING,
 * COMPLETE; each gets its own status, or `status` when the command failed. */
static void callbacks_run(cl_event e, struct vast_event_callback *list, cl_int status)
{
    static const cl_int order[] = {CL_SUBMITTED, CL_RUNNING, CL_COMPLETE};
    for (size_t i = 0; i < sizeof order / sizeof *order; i++)
        for (struct vast_event_callback *c = list; c != NULL; c = c->next)
            if (c->when == order[i])
                c->fn(e, status < 0 ? status : c->when, c->user_data);
    for (struct vast_event_callback *c = list, *next; c != NULL; c = next) {
        next = c->next;
        free(c);
    }
}

/* A status is "at or past" `when` when it is numerically lower (CL_COMPLETE is 0), or an error. */
static bool status_reached(cl_int status, cl_int when) { return status <= when; }

void vast_event_set_status(cl_event e, cl_int status)
{
    atomic_store(&e->status, status);
    struct vast_event_callback *due = NULL, **tail = &due;
    pthread_mutex_lock(&e->obj.lock);
    for (struct vast_event_callback **p = &e->callbacks; *p != NULL;) {
        struct vast_event_callback *c = *p;
        if (status_reached(status, c->when)) {
            *p = c->next;
            c->next = NULL;
            *tail = c;
            tail = &c->next;
        } else {
            p = &c->next;
        }
    }
    pthread_mutex_unlock(&e->obj.lock);
    callbacks_run(e, due, status);
}

/* A callback on a virtual command's event: kept until its status comes, or run now. */
static cl_int virtual_callback(cl_event e, cl_int when, void(CL_CALLBACK *fn)(cl_event, cl_int, void *),
                               void *user_data)
{
    struct vast_event_callback *c = malloc(sizeof *c);
    VAST_RETURN_IF(c == NULL, CL_OUT_OF_HOST_MEMORY, "callback");
    *c = (struct vast_event_callback){NULL, fn, user_data, when};
    pthread_mutex_lock(&e->obj.lock);
    cl_int status = atomic_load(&e->status);
    bool now = status_reached(status, when);
    if (!now) {
        struct vast_event_callback **p = &e->callbacks;
        while (*p != NULL)
            p = &(*p)->next;
        *p = c;
    }
    pthread_mutex_unlock(&e->obj.lock);
    if (now)
        callbacks_run(e, c, status);
    return CL_SUCCESS;
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
    if (e != NULL) {
        e->command = CL_COMMAND_USER; /* VAST keeps its status and callbacks, see below */
        atomic_init(&e->status, CL_SUBMITTED);
    }
    vast_set_error(errcode_ret, e ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY);
    return e;
}

/*
 * User events keep their status in VAST, like virtual commands: the real user event is always
 * completed with CL_COMPLETE, after VAST's status and callbacks. PoCL 3.1 runs no CL_COMPLETE
 * callback for an event that ends with an error (it calls those whose trigger equals the new
 * status), which the executor's dependencies rely on, and aborts when a real command waits on
 * a user event set to an error (executor.c).
 */
cl_int vast_clSetUserEventStatus(cl_event event, cl_int execution_status)
{
    VAST_CHECK(event, VAST_MAGIC_EVENT, CL_INVALID_EVENT);
    VAST_RETURN_IF(event->command != CL_COMMAND_USER || event->queue != NULL, CL_INVALID_EVENT,
                   "not a user event");
    VAST_RETURN_IF(execution_status > CL_COMPLETE, CL_INVALID_VALUE, "execution_status %d", execution_status);
    cl_int expected = CL_SUBMITTED;
    VAST_RETURN_IF(!atomic_compare_exchange_strong(&event->status, &expected, execution_status),
                   CL_INVALID_OPERATION, "the user event's status was already set");
    vast_event_set_status(event, execution_status);
    VAST_PASS(event->context->backend, event->real, clSetUserEventStatus, event->real, CL_COMPLETE);
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
    vast_onqueue_reap_context(context); /* kernels that ended give back what they hold */
    for (cl_uint i = 0; err == CL_SUCCESS && i < num_events; i++) /* virtual commands' failures */
        if (event_list[i]->command != 0 && atomic_load(&event_list[i]->status) < 0)
            err = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    return err;
}

VAST_RETAIN_RELEASE(vast_clRetainEvent, vast_clReleaseEvent, cl_event, event, VAST_MAGIC_EVENT, CL_INVALID_EVENT)

static cl_int vast_event_real_info(cl_event event, cl_event_info param_name, size_t param_value_size,
                                   void *param_value, size_t *param_value_size_ret)
{
    VAST_PASS(event->context->backend, event->real, clGetEventInfo, event->real, param_name, param_value_size,
              param_value, param_value_size_ret);
}

cl_int vast_clGetEventInfo(cl_event event, cl_event_info param_name, size_t param_value_size, void *param_value,
                           size_t *param_value_size_ret)
{
    VAST_CHECK(event, VAST_MAGIC_EVENT, CL_INVALID_EVENT);
    switch (param_name) {
    case CL_EVENT_COMMAND_QUEUE:
        return vast_info_answer(&event->queue, sizeof event->queue, param_value_size, param_value, param_value_size_ret);
    case CL_EVENT_CONTEXT:
        return vast_info_answer(&event->context, sizeof event->context, param_value_size, param_value,
                                param_value_size_ret);
    case CL_EVENT_REFERENCE_COUNT:
        return vast_info_refcount(&event->obj, param_value_size, param_value, param_value_size_ret);
    case CL_EVENT_COMMAND_EXECUTION_STATUS:
        if (event->command != 0) {
            cl_int status = atomic_load(&event->status);
            return vast_info_answer(&status, sizeof status, param_value_size, param_value, param_value_size_ret);
        }
        return vast_event_real_info(event, param_name, param_value_size, param_value, param_value_size_ret);
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
        VAST_RETURN_IF(atomic_load(&event->status) != CL_COMPLETE, CL_PROFILING_INFO_NOT_AVAILABLE,
                       "the command has not completed");
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
    if (event->command != 0)
        return virtual_callback(event, command_exec_callback_type, pfn_notify, user_data);
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
