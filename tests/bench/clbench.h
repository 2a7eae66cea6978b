/*
 * clbench.h: what the OpenCL micro-benchmarks (overhead.c, driver_costs.c) share: a call
 * checked (exit 2 on failure), a monotonic clock in seconds, a platform by name.
 */
#ifndef VAST_TESTS_BENCH_CLBENCH_H
#define VAST_TESTS_BENCH_CLBENCH_H

#include <CL/cl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define CHECK(call)                                                                               \
    do {                                                                                          \
        cl_int e_ = (call);                                                                       \
        if (e_ != CL_SUCCESS) {                                                                   \
            fprintf(stderr, "%s = %d\n", #call, e_);                                              \
            exit(2);                                                                              \
        }                                                                                         \
    } while (0)

static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The first platform whose name contains `want` (any case); exits when there is none. */
static inline cl_platform_id find_platform(const char *want)
{
    cl_platform_id ps[16];
    cl_uint n = 0;
    CHECK(clGetPlatformIDs(16, ps, &n));
    for (cl_uint i = 0; i < n; i++) {
        char name[256];
        CHECK(clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL));
        if (strcasestr(name, want) != NULL)
            return ps[i];
    }
    fprintf(stderr, "no platform matching '%s'\n", want);
    exit(2);
}

/* The first device of the platform named `want`, a context (of it, or of every device of the
 * platform) and an in-order queue on it, and
 * the kernel both benchmarks launch: empty(__global int *a, int b). */
struct empty_bench {
    cl_device_id d;
    cl_context ctx;
    cl_command_queue q;
    cl_program prog;
    cl_kernel k;
};

static inline struct empty_bench empty_bench_open(const char *want, bool all_devices)
{
    struct empty_bench e;
    cl_device_id ds[16];
    cl_uint n = 0;
    CHECK(clGetDeviceIDs(find_platform(want), CL_DEVICE_TYPE_ALL, 16, ds, &n));
    e.d = ds[0];
    cl_int err; /* all_devices: the context holds every device of the platform, as VAST's own */
    e.ctx = clCreateContext(NULL, all_devices ? n : 1, ds, NULL, NULL, &err);
    CHECK(err);
    e.q = clCreateCommandQueueWithProperties(e.ctx, e.d, NULL, &err);
    CHECK(err);
    const char *src = "__kernel void empty(__global int *a, int b) { }\n";
    e.prog = clCreateProgramWithSource(e.ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(e.prog, 1, &e.d, NULL, NULL, NULL));
    e.k = clCreateKernel(e.prog, "empty", &err);
    CHECK(err);
    return e;
}

static inline void empty_bench_close(struct empty_bench *e)
{
    clReleaseKernel(e->k);
    clReleaseProgram(e->prog);
    clReleaseCommandQueue(e->q);
    clReleaseContext(e->ctx);
}

#endif
