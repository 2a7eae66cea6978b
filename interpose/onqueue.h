/*
 * onqueue.h: kernels VAST put straight on the application's real queue (launch.c, launch_fast),
 * from their enqueue until VAST sees them complete. Such a kernel holds transient pins on its
 * pages (pagecache.h, VAST_PC_TRANSIENT) and its captured launch (the VAST objects it holds).
 * Nothing waits for its end: no callback is registered per launch (on NVIDIA's OpenCL one
 * costs about 8 us, as much as the launch itself: tests/bench/driver_costs.c). Instead the
 * items are reaped where VAST runs anyway:
 *   - a launch on the application's queue looks for those that ended once enough are on the
 *     list (REAP_HEAD; asking the driver costs about 3.5 us per event on NVIDIA's OpenCL);
 *   - a virtual command of the device, before it runs, and the entry points that end an
 *     application's wait (clWaitForEvents, clReleaseMemObject) take every item already complete
 *     (REAP_COMPLETE), so pages a command is ordered after are never still pinned for it;
 *   - clFinish takes the queue's items (REAP_DONE: its real clFinish saw them end), and
 *     clReleaseCommandQueue waits for them (REAP_WAIT);
 *   - a page-cache call short of frames while transient pins are out waits for every item of
 *     the device (vast_onqueue_reclaim, the pool's reclaim hook): those kernels wait for
 *     nothing VAST runs, so the wait ends.
 * Pins are given back by the thread that reaps; what the item holds is released there on the
 * application's threads and on the executor's reaper thread otherwise (vast_executor_defer).
 * Lock order: the device's list lock is a leaf; no page-cache or object lock is held while
 * waiting for an item's event or giving back its pins.
 */
#ifndef VAST_INTERPOSE_ONQUEUE_H
#define VAST_INTERPOSE_ONQUEUE_H

#include "object.h"

#include <stdbool.h>

struct vast_onqueue_item {
    struct vast_onqueue_item *next;
    bool seen, taken, ended; /* vast_onqueue_reap's marks (the list's lock) */
    cl_event real;          /* the kernel's real event: the item's reference */
    cl_command_queue queue; /* the application's (VAST) queue it is on */
    void (*unpin)(struct vast_onqueue_item *);   /* gives its pages back (any thread) */
    void (*release)(struct vast_onqueue_item *); /* frees it and what it holds */
};

/* The device's list (root device), made with its page cache; hooks the pool's reclaim. */
cl_int vast_onqueue_init(cl_device_id dev);

/* Whether the device has its list (launches may then go on the application's queue). */
bool vast_onqueue_ready(cl_device_id dev);
/* How many items the device's list holds now (0 without a list): kernels VAST put on
 * applications' queues that it has not seen end. */
size_t vast_onqueue_count(cl_device_id dev);

/* Puts an enqueued kernel's item on its device's list (vast_onqueue_ready). */
void vast_onqueue_add(cl_device_id dev, struct vast_onqueue_item *it);

enum vast_reap {
    VAST_REAP_HEAD,     /* from a launch: those complete, once enough are on the list */
    VAST_REAP_COMPLETE, /* every item complete now */
    VAST_REAP_WAIT,     /* every item of `queue` (NULL: all), waited for */
    VAST_REAP_DONE,     /* every item of `queue`, known complete (after the real clFinish) */
};
/* Reaps items of dev's list; `app`: the caller is on an application's thread and holds no
 * VAST lock, so what the items hold is released here (else on the reaper thread). */
void vast_onqueue_reap(cl_device_id dev, cl_command_queue queue, enum vast_reap how, bool app);

/* Every device of the context: VAST_REAP_COMPLETE from an application's thread. */
void vast_onqueue_reap_context(cl_context context);

#endif
