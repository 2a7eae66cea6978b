/*
 * executor.h: the per-device executor of virtual commands (design: executor.c's header).
 * A virtual command is a closure (ops + ctx) captured at enqueue time; vast_vcmd_submit
 * gives it a VAST event, orders it after its wait list (and, on an in-order queue, after
 * every earlier command of the queue) and returns at once unless asked to block. The
 * executor of the queue's device runs it when its dependencies are complete. Called by
 * buffer.c/vbuf.c (host-side commands), kernel.c (native kernels), launch.c (NDRange).
 */
#ifndef VAST_INTERPOSE_EXECUTOR_H
#define VAST_INTERPOSE_EXECUTOR_H

#include "object.h"

/* Which workers run a command: launches use the device lane (one thread owning an in-order
 * real queue with profiling); host-side commands the host lane (several threads, so host
 * copies overlap kernels and each other). */
enum vast_lane { VAST_LANE_DEVICE, VAST_LANE_HOST, VAST_LANES };

struct vast_vcmd_ops {
    cl_command_type type; /* what CL_EVENT_COMMAND_TYPE reports */
    enum vast_lane lane;
    /* The work, run once by an executor thread; `exec_queue` is the device lane's real queue
     * (NULL on the host lane). Never enqueue on the application's queue's real queue. */
    cl_int (*run)(void *ctx, cl_command_queue exec_queue);
    /* Frees ctx and releases what it holds; called once, by the executor, after run (or
     * instead of it when the command does not run), or by submit on error. */
    void (*free)(void *ctx);
    /* Optional: called under the submission lock once the command is ordered in its queue, as
     * the queue's virtual command number `seq` (chain.c). */
    void (*submitted)(void *ctx, cl_command_queue queue, uint64_t seq);
};

/*
 * Submit a virtual command on `queue` (checked by the caller). The wait list is checked as
 * the specification says. ctx belongs to the executor from here on, error or not. With
 * `blocking`, returns when the command has completed: CL_SUCCESS, its error,
 * CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST when a waited-for event failed, or the error
 * of an earlier command of the queue not reported yet.
 */
cl_int vast_vcmd_submit(cl_command_queue queue, cl_uint num_events, const cl_event *wait_list,
                        const struct vast_vcmd_ops *ops, void *ctx, bool blocking, cl_event *event);

/* The first failure of a virtual command of `queue` since the last call (CL_SUCCESS if none):
 * clFinish and blocking commands report it. */
cl_int vast_queue_take_error(cl_command_queue queue);

/* The device lane's second real queue (in-order, profiling, on the same shared context), made
 * on the first call, or NULL: consecutive partitions of a launch alternate between the two so
 * that one starts while the other drains (pipeline.c). Only the device lane's thread calls it. */
cl_command_queue vast_executor_queue2(cl_device_id dev);

/*
 * Direct launches on the application's thread (launch.c, vast_launch_fast): between
 * vast_executor_fast_begin, when it returns an executor, and vast_executor_fast_end, no virtual
 * command of the device is pending (submitted and not complete) and none can be submitted,
 * so a real command enqueued on the application's queue in between waits for nothing VAST
 * runs. Returns NULL (and holds nothing) when a command is pending.
 */
struct vast_executor;
struct vast_executor *vast_executor_fast_begin(cl_device_id dev);
void vast_executor_fast_end(struct vast_executor *ex);
/* A command counted in q->submitted has been freed, with what it held: clFinish waits for
 * this (queue.c). The executor's commands, and direct launches on the application's queue. */
void vast_queue_reaped(cl_command_queue q);
/* Runs fn(arg) on the executor's reaper thread: releasing VAST objects there, never in a
 * driver callback (file comment of executor.c). Without memory, runs it in the caller. */
void vast_executor_defer(cl_device_id dev, void (*fn)(void *), void *arg);
/* Runs fn(arg, lane) on dev's device lane thread, after the lane's commands before it, with
 * the device's launches excluded (ex->exclusive for writing), as a launch of dev would run;
 * returns at once. The lane's real queue is `lane`. merge.c: a merged device's launch running
 * its partitions on a member device (fn signals its end itself). */
cl_int vast_executor_job(cl_device_id dev, void (*fn)(void *arg, cl_command_queue lane), void *arg);

/* kernel.c: a captured launch (launch.h) as a command of the device lane. */
extern const struct vast_vcmd_ops vast_launch_ops;

/* queue.c: whether every event that real commands of the queue wait for (vast_queue_unwrap)
 * has completed, so that a kernel put on the queue waits for nothing VAST runs. */
bool vast_queue_waits_done(cl_command_queue queue);
/* queue.c: the real event of the last barrier of an out-of-order queue, retained, or NULL. */
cl_event vast_queue_last_barrier(cl_command_queue queue);

/* event.c: the event of a virtual command (status CL_QUEUED, QUEUED time now), wrapping the
 * real user event `real` (taken over); NULL when out of memory. */
cl_event vast_event_virtual(cl_command_queue queue, cl_command_type command, cl_event real);
/* Move a virtual command's event to `status` (CL_SUBMITTED, CL_RUNNING, CL_COMPLETE or an
 * error) and run the callbacks that status is due to, in the calling thread, in order. */
void vast_event_set_status(cl_event event, cl_int status);

#endif
