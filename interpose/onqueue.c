/*
 * onqueue.c: see onqueue.h. One FIFO per root device under `lock`; `count` lets the common
 * case (nothing on the list) cost one atomic load.
 *
 * Asking the driver whether a kernel ended is not free (about 3.5 us per event on NVIDIA's
 * OpenCL, tests/bench/driver_costs.c, a third of a launch), so VAST asks rarely: a launch looks
 * only once POLL_AT kernels are on the list, clFinish asks nothing (after the real clFinish
 * every kernel of the queue has ended), and the kernels of an in-order queue end in the order
 * they were enqueued, so a binary search over them finds the newest that ended in log2(n)
 * queries (an out-of-order queue's are asked one by one, oldest first, up to the first
 * running), and a wait for all of them is a wait for the newest.
 */
#include "onqueue.h"

#include "executor.h"
#include "../pagecache/pagecache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define POLL_AT 32 /* kernels on the list before a launch looks for those that ended */

struct vast_onqueue {
    pthread_mutex_t lock;
    struct vast_onqueue_item *head, **tail;
    _Atomic size_t count;
    _Atomic size_t poll_at; /* a launch looks from this many on: twice what its last look left,
                             * so kernels that run long cost a launch log2(n) looks, not one each */
};

static struct vast_onqueue *list_of(cl_device_id dev)
{
    while (dev != NULL && dev->parent != NULL)
        dev = dev->parent;
    return dev != NULL ? atomic_load_explicit(&dev->onqueue, memory_order_acquire) : NULL;
}

static void reclaim(void *dev) { vast_onqueue_reap(dev, NULL, VAST_REAP_WAIT, false); }

cl_int vast_onqueue_init(cl_device_id dev)
{
    if (atomic_load(&dev->onqueue) != NULL)
        return CL_SUCCESS;
    struct vast_onqueue *o = calloc(1, sizeof *o);
    if (o == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    pthread_mutex_init(&o->lock, NULL);
    o->tail = &o->head;
    o->poll_at = POLL_AT;
    atomic_store_explicit(&dev->onqueue, o, memory_order_release); /* lives as long as the device */
    pagecache_set_reclaim(dev->pool, reclaim, dev);
    return CL_SUCCESS;
}

bool vast_onqueue_ready(cl_device_id dev) { return list_of(dev) != NULL; }

size_t vast_onqueue_count(cl_device_id dev)
{
    struct vast_onqueue *o = list_of(dev);
    return o != NULL ? atomic_load(&o->count) : 0;
}

void vast_onqueue_add(cl_device_id dev, struct vast_onqueue_item *it)
{
    struct vast_onqueue *o = list_of(dev);
    it->next = NULL;
    pthread_mutex_lock(&o->lock);
    *o->tail = it;
    o->tail = &it->next;
    atomic_fetch_add(&o->count, 1);
    pthread_mutex_unlock(&o->lock);
}

static bool ended(const struct vast_onqueue_item *it)
{
    cl_int st = CL_QUEUED;
    return it->queue->context->backend->dispatch->clGetEventInfo(it->real, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                                                 sizeof st, &st, NULL) != CL_SUCCESS ||
           st <= CL_COMPLETE; /* complete, or ended in an error (or gone: nothing to wait for) */
}

/* Lock held: how many of q's n items (oldest first) have ended, asking as few as it can. */
static size_t count_ended(cl_command_queue q, struct vast_onqueue_item **items, size_t n, enum vast_reap how)
{
    if (how == VAST_REAP_DONE || how == VAST_REAP_WAIT)
        return n;
    if (!q->in_order) {
        size_t k = 0;
        while (k < n && ended(items[k]))
            k++;
        return k;
    }
    size_t lo = 0, hi = n; /* items[0, lo) ended; items[hi, n) did not */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ended(items[mid]))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void release_deferred(void *arg)
{
    struct vast_onqueue_item *it = arg;
    it->release(it);
}

void vast_onqueue_reap(cl_device_id dev, cl_command_queue queue, enum vast_reap how, bool app)
{
    struct vast_onqueue *o = list_of(dev);
    size_t n = o != NULL ? atomic_load(&o->count) : 0;
    if (n == 0 || (how == VAST_REAP_HEAD && n < atomic_load(&o->poll_at)))
        return;
    struct vast_onqueue_item *taken = NULL, **end = &taken;
    pthread_mutex_lock(&o->lock);
    n = atomic_load(&o->count);
    struct vast_onqueue_item **items = malloc((n ? n : 1) * sizeof *items);
    /* Queue by queue, in the order their oldest items stand: each queue's items, oldest first,
     * the ones that ended taken off the list. */
    while (items != NULL) {
        cl_command_queue q = NULL;
        size_t k = 0;
        for (struct vast_onqueue_item *it = o->head; it != NULL; it = it->next)
            if (!it->seen && (queue == NULL || it->queue == queue) && (q == NULL || it->queue == q)) {
                q = it->queue;
                it->seen = true;
                items[k++] = it;
            }
        if (q == NULL)
            break;
        size_t done = count_ended(q, items, k, how);
        for (size_t i = 0; i < done; i++) /* taken: off the list (a singly linked FIFO) */
            items[i]->taken = true;
        if (how == VAST_REAP_WAIT && done > 0 && q->in_order)
            for (size_t i = 0; i + 1 < done; i++) /* the newest's end is every one's */
                items[i]->ended = true;
    }
    for (struct vast_onqueue_item **p = &o->head; *p != NULL;) {
        struct vast_onqueue_item *it = *p;
        it->seen = false;
        if (!it->taken) {
            p = &it->next;
            continue;
        }
        *p = it->next;
        if (o->tail == &it->next)
            o->tail = p;
        atomic_fetch_sub(&o->count, 1);
        it->next = NULL;
        *end = it;
        end = &it->next;
    }
    size_t left = atomic_load(&o->count);
    if (how == VAST_REAP_HEAD)
        atomic_store(&o->poll_at, left * 2 > POLL_AT ? left * 2 : POLL_AT);
    else if (left < POLL_AT)
        atomic_store(&o->poll_at, POLL_AT);
    pthread_mutex_unlock(&o->lock);
    free(items);
    /* Without memory for the list nothing was taken: the next call tries again. Of an in-order
     * queue's items only the newest is waited for (the others are marked ended). */
    for (struct vast_onqueue_item *it = taken; it != NULL; it = it->next)
        if (how == VAST_REAP_WAIT && !it->ended)
            it->queue->context->backend->dispatch->clWaitForEvents(1, &it->real);
    for (struct vast_onqueue_item *it = taken, *next; it != NULL; it = next) {
        next = it->next;
        it->queue->context->backend->dispatch->clReleaseEvent(it->real);
        it->unpin(it);
        if (app)
            it->release(it);
        else
            vast_executor_defer(dev, release_deferred, it);
    }
}

void vast_onqueue_reap_context(cl_context context)
{
    for (cl_uint i = 0; i < context->num_devices; i++)
        vast_onqueue_reap(context->devices[i], NULL, VAST_REAP_COMPLETE, true);
}
