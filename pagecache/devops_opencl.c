/* devops_opencl.c: the OpenCL device-operations backend (see devops_opencl.h). Each call
 * goes through the dispatch table at the start of the real object it operates on. Transfers
 * of pinned memory are non-blocking on one in-order queue (`queue`), except read_unordered,
 * which goes on a second in-order queue (`d2h`) with an event as its ticket, so write-backs
 * and loads use both directions of the link; nothing on one queue waits for the other on
 * the device (the page cache orders them on the host, through tickets), so no cross-queue
 * event has to be flushed for progress. wait() is clFinish of both queues. Transfers of
 * unpinned memory (pin == NULL) go through the staging ring (staging.h) when it takes them:
 * its slots (the staging engine's memory) are each wrapped once in a CL_MEM_USE_HOST_PTR buffer
 * (the same pinning as the backing stores; never ALLOC_HOST_PTR, which costs GPU memory on
 * NVIDIA), each slot transfer carries an event (the staging ticket) and is flushed at once so
 * the device starts while the next slot is copied. A staged call is complete when it returns.
 * Staged transfers (read_unordered's included) stay on `queue` and are complete on return.
 * Thread-safe: the vendor's queues are (OpenCL requires it), staging serialises itself. */
#include "devops_opencl.h"

#include "../base/driver.h"
#include "../base/log.h"

#include <CL/cl_icd.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct cl_dev {
    cl_context context;
    cl_command_queue queue;
    cl_command_queue d2h; /* read_unordered's queue (made here), or NULL: it uses `queue` */
    unsigned flags;
    struct vast_staging *staging; /* NULL with VAST_DEVOPS_CL_NO_STAGING */
    int host_chunks; /* chunks are VAST's mappings (devops_opencl.h, "Host chunks") */
};

static const struct vast_staging_ops cl_staging_ops;
static int wait_event(cl_event ev);

static int check(cl_int err)
{
    if (err == CL_SUCCESS)
        return VAST_PC_OK;
    vast_debug("pagecache: the real driver refused a transfer or its wait: error %d", err);
    return VAST_PC_ERR_TRANSFER;
}

/* Whether the device of `queue` runs kernels on the host's own memory: a CPU device with
 * unified memory, whose USE_HOST_PTR buffers are the host range itself (PoCL). */
static int host_memory_device(cl_command_queue queue)
{
    cl_device_id device = NULL;
    cl_device_type type = 0;
    cl_bool unified = CL_FALSE;
    if (VAST_DISPATCH(queue)->clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, NULL) !=
            CL_SUCCESS ||
        !device)
        return 0;
    const struct _cl_icd_dispatch *t = VAST_DISPATCH(device);
    if (t->clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, NULL) != CL_SUCCESS ||
        t->clGetDeviceInfo(device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL) != CL_SUCCESS)
        return 0;
    return (type & CL_DEVICE_TYPE_CPU) && unified == CL_TRUE;
}

/* A second in-order queue on the device of `queue`, for write-backs; NULL when the driver
 * refuses (read_unordered then shares `queue`: slower, still correct). */
static cl_command_queue make_d2h_queue(cl_context context, cl_command_queue queue)
{
    cl_device_id device = NULL;
    if (VAST_DISPATCH(queue)->clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device,
                                                    NULL) != CL_SUCCESS || !device)
        return NULL;
    cl_int err = CL_SUCCESS;
    cl_command_queue q = VAST_DISPATCH(context)->clCreateCommandQueue(context, device, 0, &err);
    return err == CL_SUCCESS ? q : NULL;
}

int pagecache_create_devops_opencl_staged(cl_context context, cl_command_queue queue,
                                          unsigned flags,
                                          const struct vast_staging_config *staging, void **dev)
{
    if (!context || !queue || !dev)
        return VAST_PC_ERR_INVALID;
    VAST_PC_NEW(struct cl_dev, d);
    d->context = context;
    d->queue = queue;
    d->flags = flags;
    if (!(flags & VAST_DEVOPS_CL_NO_STAGING)) {
        int rc = pagecache_create_staging(&cl_staging_ops, d, staging, &d->staging);
        if (rc) {
            free(d);
            return rc;
        }
    }
    VAST_DISPATCH(context)->clRetainContext(context);
    VAST_DISPATCH(queue)->clRetainCommandQueue(queue);
    if (!(flags & VAST_DEVOPS_CL_NO_DUPLEX))
        d->d2h = make_d2h_queue(context, queue);
    d->host_chunks = !(flags & VAST_DEVOPS_CL_NO_HOST_CHUNKS) && host_memory_device(queue);
    *dev = d;
    return VAST_PC_OK;
}

int pagecache_create_devops_opencl(cl_context context, cl_command_queue queue, unsigned flags,
                                   void **dev)
{
    return pagecache_create_devops_opencl_staged(context, queue, flags, NULL, dev);
}

void pagecache_destroy_devops_opencl(void *dev)
{
    struct cl_dev *d = dev;
    if (!d)
        return;
    pagecache_destroy_staging(d->staging); /* its slots' wrappers need the context alive */
    if (d->d2h)
        VAST_DISPATCH(d->d2h)->clReleaseCommandQueue(d->d2h);
    VAST_DISPATCH(d->queue)->clReleaseCommandQueue(d->queue);
    VAST_DISPATCH(d->context)->clReleaseContext(d->context);
    free(d);
}

cl_mem pagecache_devops_opencl_mem(vast_dev_chunk chunk) { return (cl_mem)chunk; }
int pagecache_devops_opencl_duplex(void *dev) { return ((struct cl_dev *)dev)->d2h != NULL; }

int pagecache_devops_opencl_staging_stats(void *dev, struct vast_staging_stats *out)
{
    struct cl_dev *d = dev;
    if (!d->staging)
        return VAST_PC_ERR_UNSUPPORTED;
    pagecache_get_staging_stats(d->staging, out);
    return VAST_PC_OK;
}

/* A USE_HOST_PTR buffer over [host, host + bytes), or NULL. */
static cl_mem wrap_host(struct cl_dev *d, void *host, size_t bytes)
{
    cl_int err = CL_SUCCESS;
    cl_mem m = VAST_DISPATCH(d->context)->clCreateBuffer(d->context,
                                                         CL_MEM_USE_HOST_PTR | CL_MEM_READ_WRITE,
                                                         bytes, host, &err);
    return m && err == CL_SUCCESS ? m : NULL;
}

static void release_mem(cl_mem m)
{
    VAST_DISPATCH(m)->clReleaseMemObject(m);
}

static int cl_alloc_chunk(void *dev, size_t bytes, vast_dev_chunk *out)
{
    struct cl_dev *d = dev;
    cl_mem m = NULL;
    if (d->host_chunks) { /* committed on first touch; discard gives pages back */
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return VAST_PC_ERR_DEVICE_MEMORY;
        m = wrap_host(d, p, bytes);
        if (!m)
            munmap(p, bytes);
    } else {
        cl_int err = CL_SUCCESS;
        m = VAST_DISPATCH(d->context)->clCreateBuffer(d->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
        if (err != CL_SUCCESS)
            m = NULL;
    }
    if (!m)
        return VAST_PC_ERR_DEVICE_MEMORY;
    *out = m;
    return VAST_PC_OK;
}

/* The host range of a host chunk (NULL for the driver's own). */
static void *chunk_host(struct cl_dev *d, cl_mem m, size_t *bytes)
{
    void *host = NULL;
    *bytes = 0;
    if (!d->host_chunks ||
        VAST_DISPATCH(m)->clGetMemObjectInfo(m, CL_MEM_HOST_PTR, sizeof host, &host, NULL) != CL_SUCCESS ||
        VAST_DISPATCH(m)->clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof *bytes, bytes, NULL) != CL_SUCCESS)
        return NULL;
    return host;
}

static void cl_free_chunk(void *dev, vast_dev_chunk chunk)
{
    size_t bytes;
    void *host = chunk_host(dev, chunk, &bytes);
    release_mem(chunk);
    if (host)
        munmap(host, bytes);
}

static void cl_discard(void *dev, vast_dev_chunk chunk, size_t off, size_t bytes)
{
    size_t size;
    char *host = chunk_host(dev, chunk, &size);
    if (host && off <= size && bytes <= size - off)
        (void)madvise(host + off, bytes, MADV_DONTNEED); /* advice: nothing to undo if refused */
}

/* Every transfer's enqueue: a non-blocking write (host -> m) or read (m -> host) on q, with
 * its event in *ev when ev is not NULL. The write never stores to host. */
static cl_int cl_enqueue_rw(cl_command_queue q, int write, cl_mem m, size_t off, void *host,
                            size_t bytes, cl_event *ev)
{
    const struct _cl_icd_dispatch *t = VAST_DISPATCH(q);
    return write ? t->clEnqueueWriteBuffer(q, m, CL_FALSE, off, bytes, host, 0, NULL, ev)
                 : t->clEnqueueReadBuffer(q, m, CL_FALSE, off, bytes, host, 0, NULL, ev);
}

/* An enqueue that made an event is flushed so the device starts while the host copies on. */
static int enqueued(cl_command_queue q, cl_int err, cl_event ev, void **ticket)
{
    if (err != CL_SUCCESS || !ev) {
        vast_debug("pagecache: the real driver refused a transfer's enqueue: error %d", err);
        return VAST_PC_ERR_TRANSFER;
    }
    *ticket = ev;
    VAST_DISPATCH(q)->clFlush(q);
    return VAST_PC_OK;
}

/* Unpinned memory goes through the staging ring when it takes the transfer (complete when this
 * returns); VAST_PC_ERR_UNSUPPORTED when the caller transfers directly. A pin's wrapper only
 * has to be alive: the plain pointer is the fast path. */
static int cl_staged(struct cl_dev *d, int write, vast_dev_chunk chunk, size_t off, void *host,
                     size_t bytes, vast_host_pin pin)
{
    if (pin || !d->staging)
        return VAST_PC_ERR_UNSUPPORTED;
    return write ? pagecache_staging_write(d->staging, chunk, off, host, bytes)
                 : pagecache_staging_read(d->staging, chunk, off, host, bytes);
}

static int cl_transfer(struct cl_dev *d, int write, vast_dev_chunk chunk, size_t off, void *host,
                       size_t bytes, vast_host_pin pin)
{
    int rc = cl_staged(d, write, chunk, off, host, bytes, pin);
    if (rc != VAST_PC_ERR_UNSUPPORTED)
        return rc;
    return check(cl_enqueue_rw(d->queue, write, (cl_mem)chunk, off, host, bytes, NULL));
}

static int cl_write(void *dev, vast_dev_chunk dst, size_t dst_off, const void *host,
                    size_t bytes, vast_host_pin pin)
{
    return cl_transfer(dev, 1, dst, dst_off, (void *)host, bytes, pin);
}

static int cl_read(void *dev, vast_dev_chunk src, size_t src_off, void *host, size_t bytes,
                   vast_host_pin pin)
{
    return cl_transfer(dev, 0, src, src_off, host, bytes, pin);
}

static int cl_copy(void *dev, vast_dev_chunk dst, size_t dst_off, vast_dev_chunk src,
                   size_t src_off, size_t bytes)
{
    struct cl_dev *d = dev;
    return check(VAST_DISPATCH(d->queue)->clEnqueueCopyBuffer(d->queue, (cl_mem)src, (cl_mem)dst,
                                                              src_off, dst_off, bytes, 0, NULL,
                                                              NULL));
}

static int cl_fill(void *dev, vast_dev_chunk dst, size_t dst_off, const void *pattern,
                   size_t pattern_size, size_t bytes)
{
    struct cl_dev *d = dev;
    return check(VAST_DISPATCH(d->queue)->clEnqueueFillBuffer(d->queue, (cl_mem)dst, pattern,
                                                              pattern_size, dst_off, bytes, 0,
                                                              NULL, NULL));
}

/* Pins [host, host + bytes) with a USE_HOST_PTR wrapper: the staging ring's slots always,
 * backing stores unless VAST_DEVOPS_CL_NO_PIN (VAST_PIN=0). */
static int cl_pin_slot(void *dev, void *host, size_t bytes, vast_host_pin *out)
{
    cl_mem m = wrap_host(dev, host, bytes);
    if (!m)
        return VAST_PC_ERR_UNSUPPORTED;
    *out = m;
    return VAST_PC_OK;
}

static int cl_pin_host(void *dev, void *host, size_t bytes, vast_host_pin *out)
{
    if (((struct cl_dev *)dev)->flags & VAST_DEVOPS_CL_NO_PIN)
        return VAST_PC_ERR_UNSUPPORTED;
    return cl_pin_slot(dev, host, bytes, out);
}

static void cl_unpin_host(void *dev, vast_host_pin pin)
{
    (void)dev;
    release_mem(pin); /* the memory is the caller's (a store's, or the staging ring's) */
}

/* A pin is a USE_HOST_PTR buffer of the context: every device of it may use it. */
static void *cl_pin_domain(void *dev)
{
    return ((struct cl_dev *)dev)->context;
}

/* Both queues, both always finished (nothing may be left running); the first error wins. */
static int cl_wait(void *dev)
{
    struct cl_dev *d = dev;
    int rc = check(VAST_DISPATCH(d->queue)->clFinish(d->queue));
    int drc = d->d2h ? check(VAST_DISPATCH(d->d2h)->clFinish(d->d2h)) : VAST_PC_OK;
    return rc ? rc : drc;
}

/* A write-back on the second queue, its event the ticket. Flushed at once: the device starts
 * it while the caller issues loads on the first queue. */
static int cl_read_unordered(void *dev, vast_dev_chunk src, size_t src_off, void *host,
                             size_t bytes, vast_host_pin pin, void **ticket)
{
    struct cl_dev *d = dev;
    *ticket = NULL;
    int rc = cl_staged(d, 0, src, src_off, host, bytes, pin); /* complete: no ticket needed */
    if (rc != VAST_PC_ERR_UNSUPPORTED)
        return rc;
    cl_command_queue q = d->d2h ? d->d2h : d->queue;
    cl_event ev = NULL;
    cl_int err = cl_enqueue_rw(q, 0, (cl_mem)src, src_off, host, bytes, &ev);
    return enqueued(q, err, ev, ticket);
}

/* The loads issued since the last ticket wait are submitted before the caller sleeps. */
static int cl_wait_unordered(void *dev, void *ticket)
{
    struct cl_dev *d = dev;
    VAST_DISPATCH(d->queue)->clFlush(d->queue);
    return ticket ? wait_event(ticket) : VAST_PC_OK;
}

/* ---------- staging slots and ticketed transfers (staging.h) ---------- */

/* A slot transfer on the in-order queue; its event is the staging ticket. */
static int cl_slot_transfer(struct cl_dev *d, int write, vast_dev_chunk chunk, size_t off,
                            void *slot, size_t bytes, void **ticket)
{
    cl_event ev = NULL;
    cl_int err = cl_enqueue_rw(d->queue, write, (cl_mem)chunk, off, slot, bytes, &ev);
    return enqueued(d->queue, err, ev, ticket);
}

static int cl_slot_write(void *dev, vast_dev_chunk dst, size_t dst_off, const void *slot,
                         size_t bytes, vast_host_pin pin, void **ticket)
{
    (void)pin; /* slots are pinned by the ring */
    return cl_slot_transfer(dev, 1, dst, dst_off, (void *)slot, bytes, ticket);
}

static int cl_slot_read(void *dev, vast_dev_chunk src, size_t src_off, void *slot,
                        size_t bytes, vast_host_pin pin, void **ticket)
{
    (void)pin; /* slots are pinned by the ring */
    return cl_slot_transfer(dev, 0, src, src_off, slot, bytes, ticket);
}

/* Waits for the event and checks how its command ended (a failed command's event has a
 * negative execution status even where clWaitForEvents succeeds); releases it. */
static int wait_event(cl_event ev)
{
    const struct _cl_icd_dispatch *t = VAST_DISPATCH(ev);
    cl_int err = t->clWaitForEvents(1, &ev);
    cl_int status = CL_COMPLETE;
    if (err == CL_SUCCESS)
        err = t->clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                                NULL);
    if (err == CL_SUCCESS && status < 0)
        err = status;
    t->clReleaseEvent(ev);
    return check(err);
}

static int cl_wait_ticket(void *dev, void *ticket)
{
    (void)dev;
    return wait_event(ticket);
}

static const struct vast_staging_ops cl_staging_ops = {
    .pin_slot = cl_pin_slot,
    .unpin_slot = cl_unpin_host,
    .write = cl_slot_write,
    .read = cl_slot_read,
    .wait_ticket = cl_wait_ticket,
};

const struct vast_device_ops vast_devops_opencl = {
    .name = "opencl",
    .alloc_chunk = cl_alloc_chunk,
    .free_chunk = cl_free_chunk,
    .write = cl_write,
    .read = cl_read,
    .copy = cl_copy,
    .fill = cl_fill,
    .pin_host = cl_pin_host,
    .unpin_host = cl_unpin_host,
    .pin_domain = cl_pin_domain,
    .wait = cl_wait,
    .read_unordered = cl_read_unordered,
    .wait_ticket = cl_wait_unordered,
    .discard = cl_discard,
};
