/* test_mtraffic.c: what the merged device (VAST_MERGE_DEVICES=1) moves, and what must survive
 * it. One case runs on PoCL's first device and through VAST's first device in one process,
 * with the same seeded input, outputs poisoned first; the bytes must be equal. traffic.sh runs
 * a case on one device and on the merged one with VAST_STATS=1 and compares the counters.
 *   saxpy     y = a * x + y over N (odd) floats, x read only: one launch, a blocking read
 *   iter      y[i] = y[i] * 3 + i, 20 launches of the same NDRange, then a read
 *   disjoint  one launch whose work-groups of 24 ints write every other int: each 4K page
 *             holds the ints of several work-groups, so members write disjoint bytes of a
 *             page in one launch (the twin's merge must keep both)
 * usage: test_mtraffic CASE [--flip]   (--flip corrupts one byte: the comparison must fail) */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "devices_common.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 300007u /* elements: odd, no page multiple; 1.2 MB per buffer */
#define ITERS 20

static const char *src =
    "__kernel void saxpy(__global const float *x, __global float *y, float a, uint n) {\n"
    "    size_t i = get_global_id(0); if (i < n) y[i] = a * x[i] + y[i]; }\n"
    "__kernel void iter(__global int *y, uint n) {\n"
    "    size_t i = get_global_id(0); if (i < n) y[i] = y[i] * 3 + (int)i; }\n"
    "__kernel void disjoint(__global int *y, uint n) {\n"
    "    size_t i = get_global_id(0); if (2 * i < n) y[2 * i] = y[2 * i] * 5 + (int)i; }\n";

static uint32_t x0[N + 3], y0[N], out[2][N]; /* x: a size of its own (traffic.sh) */

/* Runs `name` on dev; the output into got. */
static int run(cl_device_id dev, const char *name, uint32_t *got)
{
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(ctx != NULL, "context: %d", err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(q != NULL, "queue: %d", err);
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    OK(clBuildProgram(p, 0, NULL, "", NULL, NULL));
    cl_kernel k = clCreateKernel(p, name, &err);
    CHECK(k != NULL, "kernel %s: %d", name, err);
    cl_mem x = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof x0, x0, &err);
    CHECK(x != NULL, "x: %d", err);
    cl_mem y = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof y0, NULL, &err);
    CHECK(y != NULL, "y: %d", err);
    OK(clEnqueueWriteBuffer(q, y, CL_TRUE, 0, sizeof y0, y0, 0, NULL, NULL));
    cl_uint n = N;
    float a = 1.5f;
    size_t local = 24, global = (N + local - 1) / local * local;
    int launches = 1;
    if (!strcmp(name, "saxpy")) {
        OK(clSetKernelArg(k, 0, sizeof x, &x));
        OK(clSetKernelArg(k, 1, sizeof y, &y));
        OK(clSetKernelArg(k, 2, sizeof a, &a));
        OK(clSetKernelArg(k, 3, sizeof n, &n));
    } else {
        OK(clSetKernelArg(k, 0, sizeof y, &y));
        OK(clSetKernelArg(k, 1, sizeof n, &n));
        launches = strcmp(name, "iter") ? 1 : ITERS;
    }
    for (int i = 0; i < launches; i++)
        OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
    memset(got, 0xA5, sizeof y0);
    OK(clEnqueueReadBuffer(q, y, CL_TRUE, 0, sizeof y0, got, 0, NULL, NULL));
    clReleaseMemObject(x);
    clReleaseMemObject(y);
    clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "";
    bool flip = argc > 2 && !strcmp(argv[2], "--flip");
    if (strcmp(name, "saxpy") && strcmp(name, "iter") && strcmp(name, "disjoint")) {
        fprintf(stderr, "usage: test_mtraffic saxpy|iter|disjoint [--flip]\n");
        return 2;
    }
    cl_platform_id pocl = find_platform("Portable"), vast = find_platform("VAST");
    if (pocl == NULL || vast == NULL) {
        fprintf(stderr, "need PoCL and VAST (OCL_ICD_VENDORS)\n");
        return 2;
    }
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < N + 3; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        x0[i] = (uint32_t)s & 0x3FFFFFFF; /* floats of moderate size, ints of any sign */
        if (i < N)
            y0[i] = (uint32_t)(s >> 32) & 0x3FFFFFFF;
    }
    cl_device_id pd, vd;
    cl_int err;
    if ((err = clGetDeviceIDs(pocl, CL_DEVICE_TYPE_ALL, 1, &pd, NULL)) != CL_SUCCESS ||
        (err = clGetDeviceIDs(vast, CL_DEVICE_TYPE_ALL, 1, &vd, NULL)) != CL_SUCCESS) {
        fprintf(stderr, "no device: %d\n", err);
        return 1;
    }
    if (run(pd, name, out[0]) || run(vd, name, out[1])) {
        printf("%s: FAIL (a call failed)\n", name);
        return 1;
    }
    if (flip)
        out[1][N / 2] ^= 0x40;
    for (size_t i = 0; i < N; i++)
        if (out[0][i] != out[1][i]) {
            printf("%s: FAIL: element %zu is %08x through VAST, %08x on PoCL\n", name, i, out[1][i], out[0][i]);
            return 1;
        }
    printf("%s: ok\n", name);
    return 0;
}
