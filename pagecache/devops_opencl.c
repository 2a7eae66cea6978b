/* devops_opencl.c: the OpenCL device-operations backend (see devops_opencl.h). Each call
 * goes through the dispatch table at the start of the real object it operates on. All
 * transfers are non-blocking on one in-order queue; wait() is clFinish. Thread-safe as far
 * as the vendor's queue is (OpenCL requires that). */
#include "devops_opencl.h"

#include <CL/cl_icd.h>
#include <stdatomic.h>
#include <stdlib.h>

struct cl_dev {
    cl_context context;
    cl_command_queue queue;
    unsigned flags;
    _Atomic cl_int last_error;
};

#define DISPATCH(obj) ((const struct _cl_icd_dispatch *)*(void *const *)(obj))

static int check(struct cl_dev *d, cl_int err)
{
    if (err == CL_SUCCESS)
        return VAST_PC_OK;
    atomic_store(&d->last_error, err);
    return VAST_PC_ERR_TRANSFER;
}

int pagecache_create_devops_opencl(cl_context context, cl_command_queue queue, unsigned flags,
                                   void **dev)
{
    if (!context || !queue || !dev)
        return VAST_PC_ERR_INVALID;
    struct cl_dev *d = calloc(1, sizeof *d);
    if (!d)
        return VAST_PC_ERR_HOST_MEMORY;
    d->context = context;
    d->queue = queue;
    d->flags = flags;
    DISPATCH(context)->clRetainContext(context);
    DISPATCH(queue)->clRetainCommandQueue(queue);
    *dev = d;
    return VAST_PC_OK;
}

void pagecache_destroy_devops_opencl(void *dev)
{
    struct cl_dev *d = dev;
    if (!d)
        return;
    DISPATCH(d->queue)->clReleaseCommandQueue(d->queue);
    DISPATCH(d->context)->clReleaseContext(d->context);
    free(d);
}

cl_mem pagecache_devops_opencl_mem(vast_dev_chunk chunk) { return (cl_mem)chunk; }
cl_int pagecache_devops_opencl_last_error(void *dev)
{
    return atomic_load(&((struct cl_dev *)dev)->last_error);
}

static int cl_alloc_chunk(void *dev, size_t bytes, vast_dev_chunk *out)
{
    struct cl_dev *d = dev;
    cl_int err = CL_SUCCESS;
    cl_mem m = DISPATCH(d->context)->clCreateBuffer(d->context, CL_MEM_READ_WRITE, bytes, NULL,
                                                    &err);
    if (!m || err != CL_SUCCESS) {
        atomic_store(&d->last_error, err);
        return VAST_PC_ERR_DEVICE_MEMORY;
    }
    *out = m;
    return VAST_PC_OK;
}

static void cl_free_chunk(void *dev, vast_dev_chunk chunk)
{
    (void)dev;
    cl_mem m = chunk;
    DISPATCH(m)->clReleaseMemObject(m);
}

static int cl_write(void *dev, vast_dev_chunk dst, size_t dst_off, const void *host,
                    size_t bytes, vast_host_pin pin)
{
    (void)pin; /* the wrapper only has to be alive: the plain pointer is the fast path */
    struct cl_dev *d = dev;
    return check(d, DISPATCH(d->queue)->clEnqueueWriteBuffer(d->queue, (cl_mem)dst, CL_FALSE,
                                                             dst_off, bytes, host, 0, NULL,
                                                             NULL));
}

static int cl_read(void *dev, vast_dev_chunk src, size_t src_off, void *host, size_t bytes,
                   vast_host_pin pin)
{
    (void)pin;
    struct cl_dev *d = dev;
    return check(d, DISPATCH(d->queue)->clEnqueueReadBuffer(d->queue, (cl_mem)src, CL_FALSE,
                                                            src_off, bytes, host, 0, NULL,
                                                            NULL));
}

static int cl_copy(void *dev, vast_dev_chunk dst, size_t dst_off, vast_dev_chunk src,
                   size_t src_off, size_t bytes)
{
    struct cl_dev *d = dev;
    return check(d, DISPATCH(d->queue)->clEnqueueCopyBuffer(d->queue, (cl_mem)src, (cl_mem)dst,
                                                            src_off, dst_off, bytes, 0, NULL,
                                                            NULL));
}

static int cl_fill(void *dev, vast_dev_chunk dst, size_t dst_off, const void *pattern,
                   size_t pattern_size, size_t bytes)
{
    struct cl_dev *d = dev;
    return check(d, DISPATCH(d->queue)->clEnqueueFillBuffer(d->queue, (cl_mem)dst, pattern,
                                                            pattern_size, dst_off, bytes, 0,
                                                            NULL, NULL));
}

static int cl_pin_host(void *dev, void *host, size_t bytes, vast_host_pin *out)
{
    struct cl_dev *d = dev;
    if (d->flags & VAST_DEVOPS_CL_NO_PIN)
        return VAST_PC_ERR_UNSUPPORTED;
    cl_int err = CL_SUCCESS;
    cl_mem m = DISPATCH(d->context)->clCreateBuffer(d->context,
                                                    CL_MEM_USE_HOST_PTR | CL_MEM_READ_WRITE,
                                                    bytes, host, &err);
    if (!m || err != CL_SUCCESS) {
        atomic_store(&d->last_error, err);
        return VAST_PC_ERR_UNSUPPORTED;
    }
    *out = m;
    return VAST_PC_OK;
}

static void cl_unpin_host(void *dev, vast_host_pin pin)
{
    cl_free_chunk(dev, pin);
}

static int cl_wait(void *dev)
{
    struct cl_dev *d = dev;
    return check(d, DISPATCH(d->queue)->clFinish(d->queue));
}

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
    .wait = cl_wait,
};
