/* commit_icd.c - a vendor library for tests (e2e/commit): the real platforms of another vendor
 * library (COMMIT_REAL: PoCL's) with NVIDIA's commitment of device memory. NVIDIA's OpenCL
 * allocates a buffer, all of it, the first time a transfer or a kernel uses it (a kernel:
 * every buffer among its arguments); PoCL commits host pages as they are touched. Loaded as
 * VAST_BACKEND, this library patches the real library's dispatch table (the one its objects
 * carry, so every call VAST makes through them) to keep that account: a buffer (a sub-buffer
 * counts for its parent) is committed by a read, write, copy, fill or map of it, or by an
 * NDRange launch of a kernel whose arguments hold it; it stops counting when released for
 * good. commit_bytes() (through dlsym) is the size of the buffers committed and alive now.
 * COMMIT_MAX_ALLOC (bytes) lowers the CL_DEVICE_MAX_MEM_ALLOC_SIZE the device reports, so
 * that VAST's page cache of a small budget has several chunks. At exit: "commit: N bytes in
 * M buffers". */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl_icd.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define VENDOR_SHIM_ENV "COMMIT_REAL"
#define VENDOR_SHIM_NAME "commit"
#include "vendor_shim.h"

#define EXPORT __attribute__((visibility("default"))) /* the project builds with hidden visibility */
#define MAX_MEMS 4096
#define MAX_ARGS 8192

static struct {
    cl_api_clGetDeviceInfo device_info;
    cl_api_clCreateBuffer create_buffer;
    cl_api_clCreateSubBuffer create_sub_buffer;
    cl_api_clReleaseMemObject release;
    cl_api_clSetKernelArg set_arg;
    cl_api_clEnqueueNDRangeKernel ndrange;
    cl_api_clEnqueueReadBuffer read;
    cl_api_clEnqueueWriteBuffer write;
    cl_api_clEnqueueCopyBuffer copy;
    cl_api_clEnqueueFillBuffer fill;
    cl_api_clEnqueueMapBuffer map;
} real;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cl_ulong max_alloc;
/* Buffers made through this library: the root a sub-buffer belongs to, its size, committed. */
static struct mem {
    cl_mem m, root;
    size_t size;
    int committed;
} mems[MAX_MEMS];
static size_t nmems;
/* Buffer arguments set on kernels: (kernel, index) -> buffer. */
static struct arg {
    cl_kernel k;
    cl_uint index;
    cl_mem m;
} args[MAX_ARGS];
static size_t nargs;

static struct mem *find(cl_mem m) /* lock held */
{
    for (size_t i = 0; m != NULL && i < nmems; i++)
        if (mems[i].m == m)
            return &mems[i];
    return NULL;
}

static void commit(cl_mem m) /* lock held */
{
    struct mem *e = find(m);
    if (e != NULL && e->root != m)
        e = find(e->root);
    if (e != NULL)
        e->committed = 1;
}

static void commit_one(cl_mem m)
{
    pthread_mutex_lock(&lock);
    commit(m);
    pthread_mutex_unlock(&lock);
}

static void made(cl_mem m, cl_mem root, size_t size)
{
    if (m == NULL)
        return;
    pthread_mutex_lock(&lock);
    struct mem *e = find(m); /* a handle reused after a release */
    if (e == NULL && nmems < MAX_MEMS)
        e = &mems[nmems++];
    if (e != NULL)
        *e = (struct mem){m, root != NULL ? root : m, size, 0};
    pthread_mutex_unlock(&lock);
}

EXPORT size_t commit_bytes(void)
{
    size_t sum = 0;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nmems; i++)
        if (mems[i].committed && mems[i].root == mems[i].m)
            sum += mems[i].size;
    pthread_mutex_unlock(&lock);
    return sum;
}

static cl_int CL_API_CALL c_device_info(cl_device_id d, cl_device_info p, size_t n, void *v, size_t *ret)
{
    cl_int err = real.device_info(d, p, n, v, ret);
    if (err == CL_SUCCESS && p == CL_DEVICE_MAX_MEM_ALLOC_SIZE && v != NULL && n >= sizeof(cl_ulong) && max_alloc &&
        *(cl_ulong *)v > max_alloc)
        *(cl_ulong *)v = max_alloc;
    return err;
}

static cl_mem CL_API_CALL c_create_buffer(cl_context c, cl_mem_flags f, size_t n, void *h, cl_int *err)
{
    cl_mem m = real.create_buffer(c, f, n, h, err);
    made(m, NULL, n);
    return m;
}

static cl_mem CL_API_CALL c_create_sub_buffer(cl_mem p, cl_mem_flags f, cl_buffer_create_type t, const void *info,
                                              cl_int *err)
{
    cl_mem m = real.create_sub_buffer(p, f, t, info, err);
    pthread_mutex_lock(&lock);
    struct mem *e = find(p);
    cl_mem root = e != NULL ? e->root : p;
    pthread_mutex_unlock(&lock);
    made(m, root, 0);
    return m;
}

static cl_int CL_API_CALL c_release(cl_mem m)
{
    cl_uint refs = 0;
    const struct _cl_icd_dispatch *d = *(struct _cl_icd_dispatch **)m;
    cl_int err = d->clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL);
    if (err == CL_SUCCESS && refs == 1) { /* released for good: its handle may come back */
        pthread_mutex_lock(&lock);
        struct mem *e = find(m);
        if (e != NULL)
            *e = mems[--nmems];
        for (size_t i = 0; i < nargs;)
            if (args[i].m == m)
                args[i] = args[--nargs];
            else
                i++;
        pthread_mutex_unlock(&lock);
    }
    return real.release(m);
}

static cl_int CL_API_CALL c_set_arg(cl_kernel k, cl_uint index, size_t size, const void *value)
{
    cl_int err = real.set_arg(k, index, size, value);
    if (err != CL_SUCCESS)
        return err;
    pthread_mutex_lock(&lock);
    cl_mem m = size == sizeof(cl_mem) && value != NULL ? *(const cl_mem *)value : NULL;
    if (find(m) == NULL)
        m = NULL;
    size_t i = 0;
    while (i < nargs && !(args[i].k == k && args[i].index == index))
        i++;
    if (m == NULL && i < nargs)
        args[i] = args[--nargs];
    else if (m != NULL && i < nargs)
        args[i].m = m;
    else if (m != NULL && nargs < MAX_ARGS)
        args[nargs++] = (struct arg){k, index, m};
    pthread_mutex_unlock(&lock);
    return err;
}

static cl_int CL_API_CALL c_ndrange(cl_command_queue q, cl_kernel k, cl_uint d, const size_t *o, const size_t *g,
                                    const size_t *l, cl_uint nw, const cl_event *w, cl_event *ev)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nargs; i++)
        if (args[i].k == k)
            commit(args[i].m);
    pthread_mutex_unlock(&lock);
    return real.ndrange(q, k, d, o, g, l, nw, w, ev);
}

static cl_int CL_API_CALL c_read(cl_command_queue q, cl_mem m, cl_bool b, size_t off, size_t n, void *p, cl_uint nw,
                                 const cl_event *w, cl_event *ev)
{
    commit_one(m);
    return real.read(q, m, b, off, n, p, nw, w, ev);
}

static cl_int CL_API_CALL c_write(cl_command_queue q, cl_mem m, cl_bool b, size_t off, size_t n, const void *p,
                                  cl_uint nw, const cl_event *w, cl_event *ev)
{
    commit_one(m);
    return real.write(q, m, b, off, n, p, nw, w, ev);
}

static cl_int CL_API_CALL c_copy(cl_command_queue q, cl_mem s, cl_mem d, size_t so, size_t dof, size_t n, cl_uint nw,
                                 const cl_event *w, cl_event *ev)
{
    commit_one(s);
    commit_one(d);
    return real.copy(q, s, d, so, dof, n, nw, w, ev);
}

static cl_int CL_API_CALL c_fill(cl_command_queue q, cl_mem m, const void *pat, size_t ps, size_t off, size_t n,
                                 cl_uint nw, const cl_event *w, cl_event *ev)
{
    commit_one(m);
    return real.fill(q, m, pat, ps, off, n, nw, w, ev);
}

static void *CL_API_CALL c_map(cl_command_queue q, cl_mem m, cl_bool b, cl_map_flags f, size_t off, size_t n,
                               cl_uint nw, const cl_event *w, cl_event *ev, cl_int *err)
{
    commit_one(m);
    return real.map(q, m, b, f, off, n, nw, w, ev, err);
}

static void report(void)
{
    size_t n = 0;
    for (size_t i = 0; i < nmems; i++)
        n += mems[i].committed && mems[i].root == mems[i].m;
    fprintf(stderr, "commit: %zu bytes in %zu buffers\n", commit_bytes(), n);
}

static int shim_patch(cl_platform_id p)
{
    struct _cl_icd_dispatch *d = *(struct _cl_icd_dispatch **)p;
    if (shim_writable(d) != 0)
        return -1;
    SHIM_SWAP(clGetDeviceInfo, c_device_info, real.device_info);
    SHIM_SWAP(clCreateBuffer, c_create_buffer, real.create_buffer);
    SHIM_SWAP(clCreateSubBuffer, c_create_sub_buffer, real.create_sub_buffer);
    SHIM_SWAP(clReleaseMemObject, c_release, real.release);
    SHIM_SWAP(clSetKernelArg, c_set_arg, real.set_arg);
    SHIM_SWAP(clEnqueueNDRangeKernel, c_ndrange, real.ndrange);
    SHIM_SWAP(clEnqueueReadBuffer, c_read, real.read);
    SHIM_SWAP(clEnqueueWriteBuffer, c_write, real.write);
    SHIM_SWAP(clEnqueueCopyBuffer, c_copy, real.copy);
    SHIM_SWAP(clEnqueueFillBuffer, c_fill, real.fill);
    SHIM_SWAP(clEnqueueMapBuffer, c_map, real.map);
    return 0;
}

static void shim_loaded(void)
{
    const char *m = getenv("COMMIT_MAX_ALLOC");
    max_alloc = m != NULL ? strtoull(m, NULL, 0) : 0;
    atexit(report);
}
