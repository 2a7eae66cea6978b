/* test_merged.c: many devices as one (issue 14 item 3, VAST_MERGE_DEVICES=1), through VAST and
 * directly on PoCL in one process: OCL_ICD_VENDORS names a folder holding vast.icd and PoCL's
 * icd, POCL_DEVICES="pthread pthread" (or three) makes PoCL show several devices.
 *
 * Through VAST the platform must show one device, "VAST: N x ...", with the compute units of
 * all N; a context, queue, program and kernel on it report that one device (context, program
 * devices, binaries, work-group info without a device). Then one sequence runs on PoCL's first
 * device and on the merged device with the same seeded input (odd sizes, above a 1M budget),
 * every read poisoned first, and the bytes must be equal: a launch doubling every int, a
 * blocking read; a write of a region and a map for writing of another between launches; the
 * launch again, then one over the buffer's last two thirds (on a merged device in ranges, each
 * member's range then holds pages another member wrote in the launch before); a scatter launch whose work-groups write blocks of 512 bytes all over the buffer (a page is
 * written by work-groups far apart in the NDRange, so by several members), waited for by its
 * event; a map for reading after clFinish.
 *
 * usage: test_merged N [--flip]   (N: the PoCL devices; --flip corrupts one byte of VAST's
 * output: the comparison must then fail)
 */
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

#define N 393241u     /* ints: 1.5 MiB, odd, no page multiple, above the 1M budget */
#define STEP 7919u    /* scatter: blocks of 128 ints, block b written by work-items of block b * STEP */
#define REGION 40009u /* ints written and mapped between launches */
#define SHIFT 131071u  /* dbl_from doubles [SHIFT, N): a partitioned launch of another layout */

static const char *src =
    "__kernel void dbl(__global int *a) { a[get_global_id(0)] *= 2; }\n"
    "__kernel void dbl_from(__global int *a, uint first) { a[first + get_global_id(0)] *= 2; }\n"
    "__kernel void scatter(__global int *a, uint n, uint step) {\n"
    "    size_t i = get_global_id(0), nb = (n + 127) / 128;\n"
    "    size_t j = ((i / 128) * (ulong)step) % nb * 128 + i % 128;\n"
    "    if (i < nb * 128 && j < n) a[j] = a[j] * 3 + (int)i;\n"
    "}\n";


static int32_t input[N], got[3][N], want[3][N];

/* The merged device as the application sees it. */
static int check_device(cl_platform_id vast, cl_platform_id pocl, cl_uint members)
{
    cl_int err;
    cl_device_id devs[4], pd;
    cl_uint n = 0, units = 0, pocl_units = 0;
    OK(clGetDeviceIDs(vast, CL_DEVICE_TYPE_ALL, 4, devs, &n));
    CHECK(n == 1, "the VAST platform shows %u devices, want 1 (VAST_MERGE_DEVICES=1)", n);
    char name[256] = "", want_prefix[32];
    OK(clGetDeviceInfo(devs[0], CL_DEVICE_NAME, sizeof name, name, NULL));
    snprintf(want_prefix, sizeof want_prefix, "VAST: %u x ", members);
    CHECK(!strncmp(name, want_prefix, strlen(want_prefix)), "device name '%s'", name);
    OK(clGetDeviceIDs(pocl, CL_DEVICE_TYPE_ALL, 1, &pd, NULL));
    OK(clGetDeviceInfo(devs[0], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL));
    OK(clGetDeviceInfo(pd, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof pocl_units, &pocl_units, NULL));
    CHECK(units == members * pocl_units, "%u compute units, want %u x %u", units, members, pocl_units);
    cl_context ctx = clCreateContext(NULL, 1, devs, NULL, NULL, &err);
    CHECK(ctx != NULL, "context: %d", err);
    cl_device_id got_dev = NULL;
    OK(clGetContextInfo(ctx, CL_CONTEXT_NUM_DEVICES, sizeof n, &n, NULL));
    CHECK(n == 1, "the context has %u devices", n);
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(p != NULL, "program: %d", err);
    OK(clBuildProgram(p, 0, NULL, "", NULL, NULL));
    OK(clGetProgramInfo(p, CL_PROGRAM_NUM_DEVICES, sizeof n, &n, NULL));
    CHECK(n == 1, "the program has %u devices", n);
    OK(clGetProgramInfo(p, CL_PROGRAM_DEVICES, sizeof got_dev, &got_dev, NULL));
    CHECK(got_dev == devs[0], "the program's device is not the merged one");
    size_t size = 0, wg = 0;
    OK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL));
    CHECK(size > 0, "no binary");
    cl_kernel k = clCreateKernel(p, "dbl", &err);
    CHECK(k != NULL, "kernel: %d", err);
    OK(clGetKernelWorkGroupInfo(k, NULL, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
    CHECK(wg > 0, "work-group size 0");
    clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseContext(ctx);
    return 0;
}

static void poison(int32_t *v) { memset(v, 0xa5, N * sizeof *v); }

/* The sequence on the platform's first device; out[0..2]: what the host saw at three points. */
static int sequence(cl_platform_id platform, int32_t out[3][N])
{
    cl_int err;
    cl_device_id dev;
    OK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(ctx != NULL, "context: %d", err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(q != NULL, "queue: %d", err);
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(p != NULL, "program: %d", err);
    OK(clBuildProgram(p, 1, &dev, "", NULL, NULL));
    cl_kernel dbl = clCreateKernel(p, "dbl", &err), scatter = clCreateKernel(p, "scatter", &err),
              from = clCreateKernel(p, "dbl_from", &err);
    CHECK(dbl != NULL && scatter != NULL && from != NULL, "kernels: %d", err);
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof input, input, &err);
    CHECK(m != NULL, "buffer: %d", err);
    size_t n = N, local = 64, scatter_global = (N + 127) / 128 * 128;
    cl_uint un = N, step = STEP;
    OK(clSetKernelArg(dbl, 0, sizeof m, &m));
    OK(clEnqueueNDRangeKernel(q, dbl, 1, NULL, &n, NULL, 0, NULL, NULL));
    poison(out[0]);
    OK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof input, out[0], 0, NULL, NULL));
    /* host writes between launches: a region by a write, another through a map */
    OK(clEnqueueWriteBuffer(q, m, CL_FALSE, 1000 * sizeof(int32_t), REGION * sizeof(int32_t), input + 5, 0, NULL,
                            NULL));
    int32_t *w = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_WRITE, 200003 * sizeof(int32_t), REGION * sizeof(int32_t),
                                    0, NULL, NULL, &err);
    CHECK(w != NULL, "map for writing: %d", err);
    for (cl_uint i = 0; i < REGION; i++)
        w[i] = (int32_t)(i * 2654435761u);
    OK(clEnqueueUnmapMemObject(q, m, w, 0, NULL, NULL));
    OK(clEnqueueNDRangeKernel(q, dbl, 1, NULL, &n, NULL, 0, NULL, NULL));
    /* the same pages in another layout: a member's range now covers what another wrote last */
    cl_uint first = SHIFT;
    size_t shifted = N - SHIFT;
    OK(clSetKernelArg(from, 0, sizeof m, &m));
    OK(clSetKernelArg(from, 1, sizeof first, &first));
    OK(clEnqueueNDRangeKernel(q, from, 1, NULL, &shifted, NULL, 0, NULL, NULL));
    cl_event done;
    OK(clSetKernelArg(scatter, 0, sizeof m, &m));
    OK(clSetKernelArg(scatter, 1, sizeof un, &un));
    OK(clSetKernelArg(scatter, 2, sizeof step, &step));
    OK(clEnqueueNDRangeKernel(q, scatter, 1, NULL, &scatter_global, &local, 0, NULL, &done));
    OK(clWaitForEvents(1, &done));
    cl_int status = 1;
    OK(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
    CHECK(status == CL_COMPLETE, "the scatter launch's event: %d", status);
    clReleaseEvent(done);
    poison(out[1]);
    OK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof input, out[1], 0, NULL, NULL));
    OK(clEnqueueNDRangeKernel(q, dbl, 1, NULL, &n, NULL, 0, NULL, NULL));
    OK(clFinish(q));
    int32_t *r = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ, 0, sizeof input, 0, NULL, NULL, &err);
    CHECK(r != NULL, "map for reading: %d", err);
    poison(out[2]);
    memcpy(out[2], r, sizeof input);
    OK(clEnqueueUnmapMemObject(q, m, r, 0, NULL, NULL));
    OK(clFinish(q));
    clReleaseMemObject(m);
    clReleaseKernel(dbl);
    clReleaseKernel(scatter);
    clReleaseKernel(from);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    unsigned members = argc > 1 ? (unsigned)atoi(argv[1]) : 0;
    bool flip = argc > 2 && !strcmp(argv[2], "--flip");
    if (members < 2) {
        fprintf(stderr, "usage: %s N [--flip]   (N >= 2: PoCL's devices)\n", argv[0]);
        return 2;
    }
    cl_platform_id pocl = find_platform("Portable"), vast = find_platform("VAST");
    if (pocl == NULL || vast == NULL) {
        fprintf(stderr, "need PoCL and VAST (OCL_ICD_VENDORS): pocl %p vast %p\n", (void *)pocl, (void *)vast);
        return 2;
    }
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < N; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        input[i] = (int32_t)(x >> 40) - (1 << 23);
    }
    int bad = check_device(vast, pocl, members) != 0;
    printf("%s device\n", bad ? "FAIL" : "ok  ");
    if (sequence(pocl, want) != 0) {
        fprintf(stderr, "the sequence failed on PoCL itself\n");
        return 1;
    }
    int seq = sequence(vast, got) != 0;
    if (flip)
        got[2][N / 2] ^= 1;
    for (int s = 0; !seq && s < 3; s++) {
        size_t wrong = 0, first = N;
        for (size_t k = 0; k < N; k++)
            if (got[s][k] != want[s][k]) {
                first = wrong++ ? first : k;
            }
        if (wrong) {
            fprintf(stderr, "read %d: %zu of %u values differ from PoCL's, the first at %zu (%d, want %d)\n", s, wrong,
                    N, first, got[s][first], want[s][first]);
            seq = 1;
        }
    }
    printf("%s sequence\n", seq ? "FAIL" : "ok  ");
    return bad || seq ? 1 : 0;
}
