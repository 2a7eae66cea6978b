/* fault_icd.c - a vendor library for tests (e2e/faults): the real platforms of another vendor
 * library (FAULT_REAL: PoCL's) whose driver fails on demand. Loaded as VAST_BACKEND, it patches
 * the real library's dispatch table (the one its objects carry, so every call VAST makes
 * through them) so that the FAULT_N-th call (1-based, counted over the whole process) of the
 * entry point FAULT_ENTRY returns FAULT_CODE, as a driver does when it runs out of memory or
 * cannot build: clCreateBuffer, clCreateSubBuffer, clEnqueueNDRangeKernel, clEnqueueReadBuffer,
 * clEnqueueWriteBuffer, clEnqueueCopyBuffer, clEnqueueMapBuffer, clBuildProgram,
 * clCreateKernel. That call does nothing else (the real one is not made). Without FAULT_N (or
 * 0) nothing fails; at exit the library prints how many calls each entry point had
 * ("fault: calls NAME=N ...") and, when it failed one, "fault: failed NAME call N". */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl_icd.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define VENDOR_SHIM_ENV "FAULT_REAL"
#define VENDOR_SHIM_NAME "fault"
#include "vendor_shim.h"

enum {
    F_CREATE_BUFFER,
    F_CREATE_SUB_BUFFER,
    F_NDRANGE,
    F_READ,
    F_WRITE,
    F_COPY,
    F_MAP,
    F_BUILD,
    F_CREATE_KERNEL,
    F_ENTRIES
};
static const char *const names[F_ENTRIES] = {
    "clCreateBuffer",      "clCreateSubBuffer", "clEnqueueNDRangeKernel", "clEnqueueReadBuffer", "clEnqueueWriteBuffer",
    "clEnqueueCopyBuffer", "clEnqueueMapBuffer", "clBuildProgram",        "clCreateKernel"};
static unsigned long calls[F_ENTRIES];
static int target = -1;
static unsigned long target_n;
static cl_int target_code;
static int failed;

static struct {
    cl_api_clCreateBuffer create_buffer;
    cl_api_clCreateSubBuffer create_sub_buffer;
    cl_api_clEnqueueNDRangeKernel ndrange;
    cl_api_clEnqueueReadBuffer read;
    cl_api_clEnqueueWriteBuffer write;
    cl_api_clEnqueueCopyBuffer copy;
    cl_api_clEnqueueMapBuffer map;
    cl_api_clBuildProgram build;
    cl_api_clCreateKernel create_kernel;
} real;

/* Counts a call of entry e; true when this one is to fail. */
static int fail_now(int e)
{
    unsigned long n = __atomic_add_fetch(&calls[e], 1, __ATOMIC_RELAXED);
    if (e != target || n != target_n)
        return 0;
    failed = 1;
    return 1;
}

static cl_mem CL_API_CALL f_create_buffer(cl_context c, cl_mem_flags f, size_t n, void *h, cl_int *err)
{
    if (fail_now(F_CREATE_BUFFER)) {
        if (err)
            *err = target_code;
        return NULL;
    }
    return real.create_buffer(c, f, n, h, err);
}

static cl_mem CL_API_CALL f_create_sub_buffer(cl_mem m, cl_mem_flags f, cl_buffer_create_type t, const void *info,
                                              cl_int *err)
{
    if (fail_now(F_CREATE_SUB_BUFFER)) {
        if (err)
            *err = target_code;
        return NULL;
    }
    return real.create_sub_buffer(m, f, t, info, err);
}

static cl_int CL_API_CALL f_ndrange(cl_command_queue q, cl_kernel k, cl_uint d, const size_t *o, const size_t *g,
                                    const size_t *l, cl_uint nw, const cl_event *w, cl_event *ev)
{
    return fail_now(F_NDRANGE) ? target_code : real.ndrange(q, k, d, o, g, l, nw, w, ev);
}

static cl_int CL_API_CALL f_read(cl_command_queue q, cl_mem m, cl_bool b, size_t off, size_t n, void *p, cl_uint nw,
                                 const cl_event *w, cl_event *ev)
{
    return fail_now(F_READ) ? target_code : real.read(q, m, b, off, n, p, nw, w, ev);
}

static cl_int CL_API_CALL f_write(cl_command_queue q, cl_mem m, cl_bool b, size_t off, size_t n, const void *p,
                                  cl_uint nw, const cl_event *w, cl_event *ev)
{
    return fail_now(F_WRITE) ? target_code : real.write(q, m, b, off, n, p, nw, w, ev);
}

static cl_int CL_API_CALL f_copy(cl_command_queue q, cl_mem s, cl_mem d, size_t so, size_t dof, size_t n, cl_uint nw,
                                 const cl_event *w, cl_event *ev)
{
    return fail_now(F_COPY) ? target_code : real.copy(q, s, d, so, dof, n, nw, w, ev);
}

static void *CL_API_CALL f_map(cl_command_queue q, cl_mem m, cl_bool b, cl_map_flags f, size_t off, size_t n,
                               cl_uint nw, const cl_event *w, cl_event *ev, cl_int *err)
{
    if (fail_now(F_MAP)) {
        if (err)
            *err = target_code;
        return NULL;
    }
    return real.map(q, m, b, f, off, n, nw, w, ev, err);
}

static cl_int CL_API_CALL f_build(cl_program p, cl_uint nd, const cl_device_id *d, const char *o,
                                  void(CL_CALLBACK *cb)(cl_program, void *), void *u)
{
    return fail_now(F_BUILD) ? target_code : real.build(p, nd, d, o, cb, u);
}

static cl_kernel CL_API_CALL f_create_kernel(cl_program p, const char *name, cl_int *err)
{
    if (fail_now(F_CREATE_KERNEL)) {
        if (err)
            *err = target_code;
        return NULL;
    }
    return real.create_kernel(p, name, err);
}

static void report(void)
{
    fprintf(stderr, "fault: calls");
    for (int e = 0; e < F_ENTRIES; e++)
        fprintf(stderr, " %s=%lu", names[e], calls[e]);
    fprintf(stderr, "\n");
    if (failed)
        fprintf(stderr, "fault: failed %s call %lu with %d\n", names[target], target_n, target_code);
}

static int shim_patch(cl_platform_id p)
{
    struct _cl_icd_dispatch *d = *(struct _cl_icd_dispatch **)p;
    if (shim_writable(d) != 0)
        return -1;
    SHIM_SWAP(clCreateBuffer, f_create_buffer, real.create_buffer);
    SHIM_SWAP(clCreateSubBuffer, f_create_sub_buffer, real.create_sub_buffer);
    SHIM_SWAP(clEnqueueNDRangeKernel, f_ndrange, real.ndrange);
    SHIM_SWAP(clEnqueueReadBuffer, f_read, real.read);
    SHIM_SWAP(clEnqueueWriteBuffer, f_write, real.write);
    SHIM_SWAP(clEnqueueCopyBuffer, f_copy, real.copy);
    SHIM_SWAP(clEnqueueMapBuffer, f_map, real.map);
    SHIM_SWAP(clBuildProgram, f_build, real.build);
    SHIM_SWAP(clCreateKernel, f_create_kernel, real.create_kernel);
    return 0;
}

/* After the real library loaded: which call fails, and the report at exit. */
static void shim_loaded(void)
{
    const char *entry = getenv("FAULT_ENTRY"), *n = getenv("FAULT_N"), *code = getenv("FAULT_CODE");
    for (int e = 0; entry != NULL && e < F_ENTRIES; e++)
        if (!strcmp(entry, names[e]))
            target = e;
    target_n = n ? strtoul(n, NULL, 10) : 0;
    target_code = code ? (cl_int)strtol(code, NULL, 10) : CL_OUT_OF_RESOURCES;
    atexit(report);
}
