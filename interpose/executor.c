/*
 * executor.c: one executor per root device runs the virtual commands of every queue of every
 * context on that device (ARCHITECTURE.md section 7). The application's threads only check
 * arguments, capture the command (a closure: vast_vcmd_ops + ctx) and submit it here.
 *
 * A command's completion is a real user event U of the backend's shared context; the VAST
 * event handed to the application wraps U, and VAST keeps its status, profiling times and
 * callbacks (event.c). Ordering uses the real driver's own events, so pass-through commands
 * and virtual ones order against each other without VAST tracking either:
 *   - dependencies of a command: the real events of its wait list, plus, on an in-order
 *     queue, a marker enqueued on the queue's real queue (it completes when every earlier
 *     command of the queue has: real ones, and virtual ones through the next rule), or, on an
 *     out-of-order queue, the queue's last barrier;
 *   - after submitting, a marker waiting on U is enqueued on the real queue, so later real
 *     commands, markers, barriers and clFinish of that queue wait for the virtual command.
 * Closures therefore never enqueue on the application's real queue (they would wait behind
 * their own marker); launches use the device lane's queue.
 *
 * Readiness: a callback on each dependency (clSetEventCallback, CL_COMPLETE) counts it down;
 * the last one puts the command on its lane's ready list, so a command waiting on a user
 * event blocks nobody (no head-of-line blocking). Except where a host-side command has no
 * wait list and its queue's order marker waits for device work alone (order_by_worker): it is
 * ready at once and its worker waits for the marker itself, since a driver may run a callback
 * milliseconds after the event ended; at most all host workers but one wait so. A wait-list
 * event that ends with a negative status fails the command with
 * CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST without running it; queue-order dependencies
 * (marker, barrier) only order.
 *
 * Failures: a command that fails records its error in its queue (the first one not yet
 * reported); the next clFinish of that queue returns it, as drivers report a failed launch,
 * and the next blocking command reports it as CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
 * a later command of an in-order queue is ordered after the failed one but still runs (only
 * wait-list events carry failure).
 * U itself is always completed with CL_COMPLETE, the error living in the VAST
 * event's status (what clGetEventInfo, callbacks, clWaitForEvents and dependent virtual
 * commands see). PoCL 3.1 aborts when a real command waits on a user event set to a negative
 * status (pocl_broadcast -> pocl_update_event_failed unlocks a mutex it does not hold), and
 * the marker after every virtual command is such a command. The cost: a real (pass-through)
 * command that waits on a failed virtual command still runs.
 *
 * Threads per executor: the device lane (one thread, owning an in-order real queue with
 * CL_QUEUE_PROFILING_ENABLE, runs launches), the host lane (2-4 threads, host-side commands on
 * backing stores, run concurrently with each other), and a reaper that frees finished commands:
 * releasing the objects a command held may release a real queue, which the driver may make
 * wait for that queue's commands, so it never happens on a worker or in a driver callback.
 * A worker runs one command: SUBMITTED and RUNNING callbacks, the closure, the END time, the
 * status and COMPLETE callbacks, then U (so an application woken by U sees everything).
 *
 * A launch excludes host-side commands of its device (ex->exclusive, writer-preferring): the
 * launch planner treats a pool whose frames are all pinned or in I/O as too small
 * (VAST_PC_ERR_NO_FRAMES fails the launch, pagecache/README.md), and a concurrent host read
 * flushing a large dirty range holds that many frames in I/O, so overlapping them made launches
 * fail spuriously under small budgets. pagecache_make_resident now waits for frames that are
 * only in I/O (pagecache/README.md), so host copies could overlap kernels again; the exclusion
 * stays until that is measured.
 *
 * Lifetime: the command holds its VAST event (which holds its queue and context), the real
 * events it depends on, and whatever the closure retained at capture (buffers, kernels), until
 * the reaper frees it: objects released by the application meanwhile stay alive, and a
 * released context or queue still runs its pending commands. Executors live as long as the
 * process, like the page cache.
 *
 * Locks: ex->lock protects the ready and done lists only; nothing is called under it. No
 * VAST lock is held while waiting on a real event. Order: queue -> object -> executor ->
 * page cache.
 */
#include "executor.h"
#include "onqueue.h"

#include "../base/clock.h"
#include "check.h"
#include "vbuf.h"

#include <stdlib.h>
#include <unistd.h>

#define REAPER VAST_LANES /* index of the done list, after the lanes' ready lists */
#define HOST_WORKERS_MIN 2
#define HOST_WORKERS_MAX 4
#define WORKER_STACK (64u << 20)

struct vast_vcmd;

struct vcmd_dep {
    struct vast_vcmd *cmd;
    cl_event real;   /* retained until the command is freed */
    cl_event vast;   /* the wait-list event (retained), NULL for queue-order dependencies */
};

struct vast_vcmd {
    struct vast_vcmd *next;
    struct vast_executor *ex;
    const struct vast_vcmd_ops *ops;
    void *ctx;
    cl_event event; /* one reference */
    cl_uint ndeps;
    struct vcmd_dep *deps;
    cl_event wait_first;     /* the order marker its worker waits for itself (no callback) */
    _Atomic cl_uint pending; /* dependencies not complete, plus the submitter's hold */
    _Atomic bool failed;     /* a wait-list event failed */
    bool submitted;          /* counted in its queue's `submitted` */
    bool job;                /* a struct lane_job (vast_executor_job) */
};

struct cmd_list {
    struct vast_vcmd *head, *tail;
};

struct vast_executor {
    cl_device_id device;
    const struct _cl_icd_dispatch *d;
    cl_command_queue queue; /* the device lane's real queue */
    cl_command_queue queue2; /* a second one for consecutive partitions (pipeline.c): made on
                              * first use by the device lane's thread, which alone uses it */
    bool queue2_tried;
    pthread_mutex_t lock;
    /* Submissions (counting and ordering a command in its queue) and direct launches on the
     * application's thread (vast_executor_fast_begin) exclude each other; `pending` counts
     * commands submitted and not complete. */
    pthread_mutex_t submit;
    _Atomic size_t pending;
    _Atomic int waiting; /* host workers in a wait of cmd_run (order_by_worker) */
    int max_waiting;     /* at most this many */
    pthread_rwlock_t exclusive; /* launches: write; host-side commands: read (file comment) */
    pthread_cond_t wake[VAST_LANES + 1];
    struct cmd_list lists[VAST_LANES + 1]; /* ready per lane; done (REAPER) */
};

struct worker {
    struct vast_executor *ex;
    int list;
};

static struct vast_executor *executor_get(cl_device_id dev, cl_int *err);

static void list_put(struct vast_executor *ex, int which, struct vast_vcmd *c)
{
    c->next = NULL;
    pthread_mutex_lock(&ex->lock);
    struct cmd_list *l = &ex->lists[which];
    if (l->tail != NULL)
        l->tail->next = c;
    else
        l->head = c;
    l->tail = c;
    pthread_cond_signal(&ex->wake[which]);
    pthread_mutex_unlock(&ex->lock);
}

static struct vast_vcmd *list_take(struct vast_executor *ex, int which)
{
    pthread_mutex_lock(&ex->lock);
    struct cmd_list *l = &ex->lists[which];
    while (l->head == NULL)
        pthread_cond_wait(&ex->wake[which], &ex->lock);
    struct vast_vcmd *c = l->head;
    l->head = c->next;
    if (l->head == NULL)
        l->tail = NULL;
    pthread_mutex_unlock(&ex->lock);
    return c;
}

/* Frees a command (the reaper, or submit on error): the closure, then what it held. */
static void cmd_destroy(struct vast_vcmd *c)
{
    cl_command_queue q = c->submitted ? c->event->queue : NULL;
    if (q != NULL)
        VAST_RETAIN(q);
    if (c->ops != NULL)
        c->ops->free(c->ctx);
    for (cl_uint i = 0; i < c->ndeps; i++) {
        c->ex->d->clReleaseEvent(c->deps[i].real);
        if (c->deps[i].vast != NULL)
            VAST_RELEASE(c->deps[i].vast);
    }
    if (c->event != NULL)
        VAST_RELEASE(c->event);
    free(c->deps);
    free(c);
    if (q != NULL) { /* clFinish waits for this */
        vast_queue_reaped(q);
        VAST_RELEASE(q);
    }
}

void vast_queue_reaped(cl_command_queue q)
{
    pthread_mutex_lock(&q->obj.lock);
    q->reaped++;
    pthread_cond_broadcast(&q->reaped_cond);
    pthread_mutex_unlock(&q->obj.lock);
}

/* Runs a command's closure as its lane does (ex->exclusive: launches write, host-side commands
 * read), with its event's START and END times and RUNNING status where it has an event (e
 * NULL: a blocking command run inline without one). A positive result is not an OpenCL code:
 * it becomes a generic failure, never "complete". */
static cl_int run_closure(struct vast_executor *ex, cl_event e, const struct vast_vcmd_ops *ops, void *ctx,
                          cl_command_queue queue)
{
    if (e != NULL) {
        e->times[2] = vast_now_ns();
        vast_event_set_status(e, CL_RUNNING);
    }
    /* kernels on the application's queue it is ordered after have ended: their pins go */
    vast_onqueue_reap(ex->device, NULL, VAST_REAP_COMPLETE, false);
    if (ops->lane == VAST_LANE_DEVICE)
        pthread_rwlock_wrlock(&ex->exclusive);
    else
        pthread_rwlock_rdlock(&ex->exclusive);
    cl_int st = ops->run(ctx, queue);
    pthread_rwlock_unlock(&ex->exclusive);
    if (e != NULL)
        e->times[3] = vast_now_ns();
    return st > 0 ? CL_OUT_OF_RESOURCES : st;
}

/* A command that ended with st: a failure of its own (not of its wait list) is its queue's q,
 * for clFinish and the next blocking command (q NULL: a blocking command returns it itself);
 * its event, if any, gets st, then its real event is complete (never negative: see the file
 * comment). */
static void cmd_end(struct vast_executor *ex, cl_command_queue q, cl_command_type type, cl_event e, cl_int st)
{
    cl_int none = CL_SUCCESS;
    if (q != NULL && st != CL_SUCCESS && st != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) {
        vast_info("a virtual command (type 0x%x) failed: %d", (unsigned)type, st);
        atomic_compare_exchange_strong(&q->error, &none, st);
    }
    if (e != NULL) {
        vast_event_set_status(e, st);
        ex->d->clSetUserEventStatus(e->real, CL_COMPLETE);
    }
}

/* Runs one ready command on a worker (see the file comment for the order of events). */
static void cmd_run(struct vast_vcmd *c, cl_command_queue queue)
{
    cl_event e = c->event;
    cl_int st;
    if (c->wait_first != NULL) { /* device work only (order_by_worker): it ends by itself */
        c->ex->d->clWaitForEvents(1, &c->wait_first); /* an order marker only orders */
        atomic_fetch_sub(&c->ex->waiting, 1);
    }
    if (atomic_load(&c->failed)) { /* never submitted: every callback gets the error */
        e->times[2] = e->times[3] = vast_now_ns();
        st = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    } else {
        vast_event_set_status(e, CL_SUBMITTED);
        st = run_closure(c->ex, e, c->ops, c->ctx, queue);
    }
    cmd_end(c->ex, e->queue, e->command, e, st);
    atomic_fetch_sub(&e->queue->vcmds_open, 1);
    atomic_fetch_sub(&c->ex->pending, 1);
}

/* A job of a merged device's launch on a member's device lane (vast_executor_job): no event,
 * no queue; the lane's exclusion as for a launch of the device. */
struct lane_job {
    struct vast_vcmd c; /* c.job set */
    void (*fn)(void *arg, cl_command_queue lane);
    void *arg;
};

static void job_run(struct vast_vcmd *c, cl_command_queue queue)
{
    struct lane_job *j = (struct lane_job *)c;
    pthread_rwlock_wrlock(&c->ex->exclusive);
    j->fn(j->arg, queue);
    pthread_rwlock_unlock(&c->ex->exclusive);
    atomic_fetch_sub(&c->ex->pending, 1);
    free(j);
}

cl_int vast_executor_job(cl_device_id dev, void (*fn)(void *arg, cl_command_queue lane), void *arg)
{
    cl_int err;
    struct vast_executor *ex = executor_get(dev, &err);
    if (ex == NULL)
        return err;
    struct lane_job *j = calloc(1, sizeof *j);
    VAST_RETURN_IF(j == NULL, CL_OUT_OF_HOST_MEMORY, "a device lane job");
    j->c.ex = ex;
    j->c.job = true;
    j->fn = fn;
    j->arg = arg;
    atomic_fetch_add(&ex->pending, 1);
    list_put(ex, VAST_LANE_DEVICE, &j->c);
    return CL_SUCCESS;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct vast_executor *ex = w->ex;
    int which = w->list;
    free(w);
    for (;;) {
        struct vast_vcmd *c = list_take(ex, which);
        if (c->job) {
            job_run(c, ex->queue);
            continue;
        }
        if (which == REAPER) {
            cmd_destroy(c);
            continue;
        }
        cmd_run(c, which == VAST_LANE_DEVICE ? ex->queue : NULL);
        list_put(ex, REAPER, c);
    }
    return NULL;
}

static bool worker_start(struct vast_executor *ex, int which)
{
    struct worker *w = malloc(sizeof *w);
    if (w == NULL)
        return false;
    *w = (struct worker){ex, which};
    /* Launches translate kernels (libclang, mcpp) on the device lane: they want the deep stack
     * an application's main thread has, more than the default under the sanitizers. */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, WORKER_STACK);
    pthread_t t;
    int rc = pthread_create(&t, &attr, worker_main, w);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        free(w);
        return false;
    }
    pthread_detach(t);
    return true;
}

static int host_workers(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN) / 2;
    return n < HOST_WORKERS_MIN ? HOST_WORKERS_MIN : n > HOST_WORKERS_MAX ? HOST_WORKERS_MAX : (int)n;
}

/* A half-made executor is never freed: threads that did start may reference it. */
static struct vast_executor *executor_create(cl_device_id dev, cl_int *err)
{
    struct vast_executor *ex = calloc(1, sizeof *ex);
    VAST_RETURN_NULL_IF(ex == NULL, CL_OUT_OF_HOST_MEMORY, err, "executor");
    ex->device = dev;
    ex->d = dev->backend->dispatch;
    ex->queue = ex->d->clCreateCommandQueue(dev->backend->shared, dev->real, CL_QUEUE_PROFILING_ENABLE, err);
    if (ex->queue == NULL) {
        vast_error("cannot make the executor's queue on %s (error %d)", dev->name, *err);
        free(ex);
        return NULL;
    }
    pthread_mutex_init(&ex->lock, NULL);
    pthread_mutex_init(&ex->submit, NULL);
    pthread_rwlockattr_t attr; /* launches must not starve behind a stream of host commands */
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&ex->exclusive, &attr);
    pthread_rwlockattr_destroy(&attr);
    for (int i = 0; i <= VAST_LANES; i++)
        pthread_cond_init(&ex->wake[i], NULL);
    int hosts = host_workers();
    ex->max_waiting = hosts - 1; /* one host worker always takes ready commands */
    bool ok = worker_start(ex, VAST_LANE_DEVICE) && worker_start(ex, REAPER);
    for (int i = 0; ok && i < hosts; i++)
        ok = worker_start(ex, VAST_LANE_HOST);
    VAST_RETURN_NULL_IF(!ok, CL_OUT_OF_HOST_MEMORY, err, "cannot start the executor's threads");
    vast_info("executor of %s: 1 device thread, %d host threads", dev->name, hosts);
    return ex;
}

static struct vast_executor *executor_get(cl_device_id dev, cl_int *err)
{
    pthread_mutex_lock(&dev->obj.lock);
    *err = CL_SUCCESS;
    if (dev->executor == NULL)
        dev->executor = dev->backend->shared ? executor_create(dev, err) : NULL;
    struct vast_executor *ex = dev->executor;
    if (ex == NULL && *err == CL_SUCCESS)
        *err = CL_OUT_OF_RESOURCES;
    pthread_mutex_unlock(&dev->obj.lock);
    return ex;
}

/* The last dependency resolved: SUBMIT time, and onto its lane. */
static void cmd_release_hold(struct vast_vcmd *c)
{
    if (atomic_fetch_sub(&c->pending, 1) != 1)
        return;
    c->event->times[1] = vast_now_ns();
    atomic_store(&c->event->status, CL_SUBMITTED);
    list_put(c->ex, c->ops->lane, c);
}

cl_int vast_queue_take_error(cl_command_queue q) { return atomic_exchange(&q->error, CL_SUCCESS); }

/* Runs in the driver's callback thread: counting only, never a VAST object's release. A
 * virtual command's failure is in its VAST event (set before its real event completes). */
static void CL_CALLBACK dep_complete(cl_event real, cl_int status, void *data)
{
    (void)real;
    struct vcmd_dep *dep = data;
    if (dep->vast != NULL && (status < 0 || (dep->vast->command != 0 && atomic_load(&dep->vast->status) < 0)))
        atomic_store(&dep->cmd->failed, true);
    cmd_release_hold(dep->cmd);
}

static void cmd_add_dep(struct vast_vcmd *c, cl_event real, cl_event vast)
{
    c->deps[c->ndeps++] = (struct vcmd_dep){c, real, vast};
}

/* The command's event, its dependencies, and the marker that orders later work after it. */
static cl_int cmd_prepare(struct vast_vcmd *c, cl_command_queue q, cl_uint nw, const cl_event *wait_list)
{
    const struct _cl_icd_dispatch *d = c->ex->d;
    cl_int err;
    cl_event u = d->clCreateUserEvent(q->context->real, &err);
    VAST_RETURN_IF(u == NULL, err, "cannot make the command's real event");
    c->event = vast_event_virtual(q, c->ops->type, u);
    if (c->event == NULL)
        d->clReleaseEvent(u);
    VAST_RETURN_IF(c->event == NULL, CL_OUT_OF_HOST_MEMORY, "event");
    for (cl_uint i = 0; i < nw; i++) {
        d->clRetainEvent(wait_list[i]->real);
        VAST_RETAIN(wait_list[i]);
        cmd_add_dep(c, wait_list[i]->real, wait_list[i]);
    }
    cl_event order = NULL;
    if (q->in_order) {
        err = d->clEnqueueMarkerWithWaitList(q->real, 0, NULL, &order);
        VAST_RETURN_IF(err != CL_SUCCESS, err, "cannot order the command in its queue");
    } else {
        order = vast_queue_last_barrier(q);
    }
    if (order != NULL)
        cmd_add_dep(c, order, NULL);
    err = d->clEnqueueMarkerWithWaitList(q->real, 1, &u, NULL);
    VAST_RETURN_IF(err != CL_SUCCESS, err, "cannot order the queue after the command");
    d->clFlush(q->real); /* the order marker must reach the device to complete */
    return CL_SUCCESS;
}

static cl_int submit_failed(struct vast_vcmd *c, const struct vast_vcmd_ops *ops, void *ctx, cl_int err)
{
    if (c != NULL)
        cmd_destroy(c);
    else
        ops->free(ctx);
    return err;
}

/* Waits for every earlier real command of q (kernels put on the application's queue among
 * them): a marker on an in-order queue, the last barrier on an out-of-order one. On an in-order
 * queue with no real command since the last wait (vast_queue_real_idle), nothing: the marker and
 * its wait cost a round trip through the driver's queue thread for each command (CLBlast's
 * xim2col through VAST on PoCL: 30% of its time, a write and a read per case, 16,384 cases). */
static cl_int wait_queue_order(struct vast_executor *ex, cl_command_queue q)
{
    cl_event order = NULL;
    cl_int err = CL_SUCCESS;
    uint64_t enqueued = vast_queue_real_count(q);
    if (q->in_order && vast_queue_real_idle(q))
        return CL_SUCCESS;
    if (q->in_order)
        err = ex->d->clEnqueueMarkerWithWaitList(q->real, 0, NULL, &order);
    else
        order = vast_queue_last_barrier(q);
    if (order != NULL) {
        err = ex->d->clWaitForEvents(1, &order);
        ex->d->clReleaseEvent(order);
        if (err == CL_SUCCESS && q->in_order)
            vast_queue_real_ended(q, enqueued);
    }
    return err;
}

/*
 * A host-side command without wait list, run on the application's thread while nothing else of
 * VAST is pending on the device (as launch.c's launch_fast): it waits for the queue's earlier
 * real commands, then runs its closure as a host-lane thread would (ex->exclusive for reading),
 * counted in ex->pending meanwhile so that launches taking the same shortcut wait. A blocking
 * command returns its result. A non-blocking one runs here too, as the specification allows
 * (it is complete when the call returns), but only where waiting for the queue's order waits
 * for nothing in the usual case: a context of one device, no kernel that VAST put on an
 * application's queue of the device still in flight (vast_onqueue_count; a pass-through
 * command of the queue still running is waited for: the call returns later, never out of
 * order). Its failure is then the queue's, reported as an executor's command's is (clFinish,
 * the next blocking command); its event, when asked for, is complete, with its times. Before,
 * every non-blocking command crossed to a host-lane thread and back: CLBlast's test programs
 * enqueue each write and read so (xgemv: 24,120 of its 25,200 commands). Returns false
 * (nothing done) where it does not apply.
 */
static bool submit_inline(cl_command_queue q, cl_uint nw, const struct vast_vcmd_ops *ops, void *ctx, bool blocking,
                          cl_event *event, cl_int *result)
{
    if (nw != 0 || ops->lane != VAST_LANE_HOST || !vast_queue_waits_done(q))
        return false;
    if (!blocking) {
        if (q->context->num_members != 1)
            return false;
        vast_onqueue_reap(q->device, NULL, VAST_REAP_COMPLETE, true);
        if (vast_onqueue_count(q->device) != 0)
            return false;
    }
    struct vast_executor *ex = vast_executor_fast_begin(q->device);
    if (ex == NULL)
        return false;
    cl_event e = NULL, u = NULL;
    if (event != NULL) { /* made before anything runs: without it, the executor takes the command */
        cl_int err;
        u = ex->d->clCreateUserEvent(q->context->real, &err);
        e = u != NULL ? vast_event_virtual(q, ops->type, u) : NULL;
        if (e == NULL) {
            if (u != NULL)
                ex->d->clReleaseEvent(u);
            vast_executor_fast_end(ex);
            return false;
        }
        e->times[1] = e->times[0];
        vast_event_set_status(e, CL_SUBMITTED);
    }
    atomic_fetch_add(&ex->pending, 1);
    vast_executor_fast_end(ex);
    cl_int st = wait_queue_order(ex, q);
    if (st == CL_SUCCESS)
        st = run_closure(ex, e, ops, ctx, NULL);
    else if (e != NULL)
        e->times[2] = e->times[3] = vast_now_ns();
    atomic_fetch_sub(&ex->pending, 1);
    ops->free(ctx);
    if (blocking) { /* its result is the call's own; an earlier command's failure, the wait's */
        cl_int earlier = vast_queue_take_error(q);
        *result = st < 0 ? st : earlier != CL_SUCCESS ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_SUCCESS;
    } else {
        *result = CL_SUCCESS;
    }
    cmd_end(ex, blocking ? NULL : q, ops->type, e, st);
    if (e != NULL)
        *event = e;
    return true;
}

/*
 * Whether a host-side command's worker waits for its queue's order marker itself instead of a
 * callback on it: the real driver may run an event's callbacks milliseconds after the event
 * ends (NVIDIA's OpenCL: a non-blocking read behind a 12 ms kernel ended 6-8 ms after the
 * kernel in most runs, within 0.5 ms where its worker waits; NBody's direct run took 0.040 s
 * against 0.019 natively, 0.020 now: samples/results/h200-2026-11-29-goals/). Only where the
 * marker waits for device work alone, which ends by itself: an in-order queue, no wait list,
 * no virtual command of the queue still open, every event its real commands wait for complete
 * (vast_queue_waits_done); and only while another host worker stays free for commands that are
 * ready (ex->max_waiting). Called before ex->submit is taken (the queue's lock comes first);
 * takes a waiting slot that cmd_run gives back.
 */
static bool order_by_worker(struct vast_executor *ex, cl_command_queue q, cl_uint nw, const struct vast_vcmd_ops *ops)
{
    if (!q->in_order || nw != 0 || ops->lane != VAST_LANE_HOST || atomic_load(&q->vcmds_open) != 0 ||
        !vast_queue_waits_done(q))
        return false;
    if (atomic_fetch_add(&ex->waiting, 1) < ex->max_waiting)
        return true;
    atomic_fetch_sub(&ex->waiting, 1);
    return false;
}

cl_int vast_vcmd_submit(cl_command_queue q, cl_uint nw, const cl_event *wait_list, const struct vast_vcmd_ops *ops,
                        void *ctx, bool blocking, cl_event *event)
{
    struct vast_list waits; /* checks the wait list; the VAST events are used */
    cl_int err = vast_unwrap_events(q->context, nw, wait_list, &waits);
    vast_list_free(&waits);
    if (err == CL_SUCCESS && submit_inline(q, nw, ops, ctx, blocking, event, &err))
        return err;
    struct vast_executor *ex = err == CL_SUCCESS ? executor_get(q->device, &err) : NULL;
    struct vast_vcmd *c = ex != NULL ? calloc(1, sizeof *c) : NULL;
    if (c != NULL && (c->deps = calloc(nw + 1, sizeof *c->deps)) == NULL) {
        free(c);
        c = NULL;
    }
    if (c == NULL)
        return submit_failed(NULL, ops, ctx, err != CL_SUCCESS ? err : CL_OUT_OF_HOST_MEMORY);
    c->ex = ex;
    c->ops = ops;
    c->ctx = ctx;
    bool slot = order_by_worker(ex, q, nw, ops);
    pthread_mutex_lock(&ex->submit);
    err = cmd_prepare(c, q, nw, wait_list);
    if (err == CL_SUCCESS) {
        atomic_fetch_add(&ex->pending, 1); /* cmd_run takes both back once U is complete */
        atomic_fetch_add(&q->vcmds_open, 1);
        uint64_t seq = ++q->vcmd_seq;
        if (ops->submitted != NULL)
            ops->submitted(ctx, q, seq);
    }
    pthread_mutex_unlock(&ex->submit);
    /* the order marker, cmd_prepare's only dependency without a wait list */
    if (slot && err == CL_SUCCESS && c->ndeps == 1 && c->deps[0].vast == NULL)
        c->wait_first = c->deps[0].real;
    else if (slot)
        atomic_fetch_sub(&ex->waiting, 1);
    if (err != CL_SUCCESS)
        return submit_failed(c, ops, ctx, err);
    cl_event waiter = blocking ? c->event : NULL;
    if (waiter != NULL)
        VAST_RETAIN(waiter);
    if (event != NULL) {
        VAST_RETAIN(c->event);
        *event = c->event;
    }
    c->submitted = true;
    atomic_fetch_add(&q->submitted, 1);
    cl_uint callbacks = c->wait_first != NULL ? 0 : c->ndeps;
    atomic_init(&c->pending, callbacks + 1);
    atomic_init(&c->failed, false);
    for (cl_uint i = 0; i < callbacks; i++)
        if (ex->d->clSetEventCallback(c->deps[i].real, CL_COMPLETE, dep_complete, &c->deps[i]) != CL_SUCCESS) {
            vast_error("the real driver refused a callback on a dependency: the command fails");
            atomic_store(&c->failed, true);
            cmd_release_hold(c);
        }
    cmd_release_hold(c); /* from here on, c belongs to the executor */
    if (waiter == NULL)
        return CL_SUCCESS;
    ex->d->clWaitForEvents(1, &waiter->real);
    cl_int st = atomic_load(&waiter->status);
    cl_int earlier = vast_queue_take_error(q);
    VAST_RELEASE(waiter);
    /* An earlier command's failure reaches the application here as a failed wait, never as
     * its own code: a read answered CL_OUT_OF_RESOURCES looks like memory pressure, which
     * pyopencl answers by retrying the read, and the retry would succeed with what the failed
     * command never wrote. clFinish returns the code itself (queue.c). */
    return st < 0 ? st : earlier != CL_SUCCESS ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_SUCCESS;
}

struct vast_executor *vast_executor_fast_begin(cl_device_id dev)
{
    cl_int err;
    struct vast_executor *ex = executor_get(dev, &err);
    if (ex == NULL || atomic_load(&ex->pending) != 0)
        return NULL;
    pthread_mutex_lock(&ex->submit);
    if (atomic_load(&ex->pending) == 0)
        return ex;
    pthread_mutex_unlock(&ex->submit);
    return NULL;
}

void vast_executor_fast_end(struct vast_executor *ex) { pthread_mutex_unlock(&ex->submit); }

static cl_int run_never(void *ctx, cl_command_queue exec_queue)
{
    (void)ctx;
    (void)exec_queue;
    return CL_SUCCESS;
}

void vast_executor_defer(cl_device_id dev, void (*fn)(void *), void *arg)
{
    cl_int err;
    struct vast_executor *ex = executor_get(dev, &err);
    struct vast_vcmd *c = ex != NULL ? calloc(1, sizeof *c + sizeof(struct vast_vcmd_ops)) : NULL;
    if (c == NULL) {
        fn(arg);
        return;
    }
    struct vast_vcmd_ops *ops = (struct vast_vcmd_ops *)(c + 1); /* freed with c */
    *ops = (struct vast_vcmd_ops){0, VAST_LANE_HOST, run_never, fn, NULL};
    c->ex = ex;
    c->ops = ops;
    c->ctx = arg;
    list_put(ex, REAPER, c); /* cmd_destroy: fn(arg), nothing else (no event, no dependency) */
}

cl_command_queue vast_executor_queue2(cl_device_id dev)
{
    while (dev->parent != NULL)
        dev = dev->parent;
    struct vast_executor *ex = dev->executor;
    if (ex == NULL || ex->queue2_tried)
        return ex != NULL ? ex->queue2 : NULL;
    ex->queue2_tried = true;
    cl_int err = CL_SUCCESS;
    ex->queue2 = ex->d->clCreateCommandQueue(dev->backend->shared, dev->real, CL_QUEUE_PROFILING_ENABLE, &err);
    if (ex->queue2 == NULL)
        vast_info("no second device-lane queue on %s (error %d): partitions will not overlap", dev->name, err);
    return ex->queue2;
}
