/*
 * test_churn: the page cache's footprint follows the working set (issue 17, item 4). A program
 * creates a 64 MiB buffer, runs a kernel over it, reads it and releases it, 24 times, through
 * VAST at the default budget on PoCL (whose device memory is the host's: the pool's frames are
 * resident memory once touched). The process's peak resident memory after the first round (the
 * compilers and the first buffer) may grow by at most one buffer's worth over the next 23
 * rounds: frames a released buffer gave back must be reused before untouched ones. Before,
 * each round took frames nobody had touched and the peak grew by about 23 x 128 MiB.
 */
#include "../platform/common.h"
#include "vast_cmocka.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define ROUNDS 24
#define BYTES ((size_t)64 << 20)

static const char *fill_source = "__kernel void fill(__global uint *a, uint k) {\n"
                                 "    size_t i = get_global_id(0);\n"
                                 "    a[i] = k * (uint)(i + 1);\n"
                                 "}\n";

/* VmHWM of this process, bytes. */
static size_t peak_rss(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    size_t kib = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmHWM: %zu kB", &kib) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kib << 10;
}

static void test_churn(void **state)
{
    (void)state;
    cl_device_id device = test_device(test_platform());
    cl_context ctx = test_context(device);
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &err);
    CHECK_CL(err);
    cl_program p = test_program(ctx, device, fill_source);
    cl_kernel fill = clCreateKernel(p, "fill", &err);
    CHECK_CL(err);
    size_t n = BYTES / 4, after_first = 0;
    for (cl_uint round = 0; round < ROUNDS; round++) {
        cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, BYTES, NULL, &err);
        CHECK_CL(err);
        cl_uint k = round + 1, got[2];
        CHECK_CL(clSetKernelArg(fill, 0, sizeof b, &b));
        CHECK_CL(clSetKernelArg(fill, 1, sizeof k, &k));
        CHECK_CL(clEnqueueNDRangeKernel(q, fill, 1, NULL, &n, NULL, 0, NULL, NULL));
        CHECK_CL(clEnqueueReadBuffer(q, b, CL_TRUE, 0, 4, &got[0], 0, NULL, NULL));
        CHECK_CL(clEnqueueReadBuffer(q, b, CL_TRUE, BYTES - 4, 4, &got[1], 0, NULL, NULL));
        assert_int_equal(got[0], k);
        assert_int_equal(got[1], k * (cl_uint)n);
        CHECK_CL(clReleaseMemObject(b));
        CHECK_CL(clFinish(q));
        if (round == 0)
            after_first = peak_rss();
    }
    size_t last = peak_rss();
    printf("peak resident memory: %zu MiB after round 1, %zu MiB after round %d (buffer %zu MiB)\n",
           after_first >> 20, last >> 20, ROUNDS, BYTES >> 20);
    assert_true(last <= after_first + BYTES);
    CHECK_CL(clReleaseKernel(fill));
    CHECK_CL(clReleaseProgram(p));
    CHECK_CL(clReleaseCommandQueue(q));
    CHECK_CL(clReleaseContext(ctx));
}

VAST_CMOCKA_MAIN(NULL, NULL, test_churn)
