/*
 * test_prebuild: background builds (interpose/prebuild.c) through VAST on PoCL, vast_core linked
 * in, VAST's cache off (every build is real), paging forced in a 2 MiB budget (CTest's
 * environment): programs released right after clBuildProgram while their builds run; a
 * launch right after the build waits for the background build and computes the right result
 * (odd size, output poisoned); after the worker drains, a kernel's translation is known
 * without any launch (the build ran off the application's thread); with "exit" as argument,
 * the process exits while a build is in hand: VAST waits for it before any exit handler runs,
 * also before one registered after the build began (like the destructors of the statics a
 * driver's compiler makes lazily during that build: torn down under the running build, they
 * crashed e2e.platform.test_api at exit in CI); a program built again with other options runs
 * the new build's paged kernel. With "wait" (VAST_BUILD_WAIT's default where paging is forced):
 * clBuildProgram returns with the translation made and nothing queued to the worker, the
 * device's scratch frame is made on its lane before it returns (vast_paged_prepare), and a
 * launch right after computes the right result.
 */
#include "../platform/common.h"
#include "interpose/object.h"
#include "interpose/prebuild.h"
#include "interpose/variant.h"
#include "vast_cmocka.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static cl_device_id device;
static cl_context ctx;

static int setup(void **state)
{
    (void)state;
    device = test_device(test_platform());
    ctx = test_context(device);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    vast_prebuild_drain();
    CHECK_CL(clReleaseContext(ctx));
    return 0;
}

/* A program whose source differs by k (so no two share a translation). */
static cl_program build_nth(unsigned k)
{
    char src[512];
    snprintf(src, sizeof src,
             "__kernel void axpb(__global const uint *x, __global uint *y, uint a) {\n"
             "    size_t i = get_global_id(0);\n"
             "    y[i] = a * x[i] + %uu + (uint)i;\n"
             "}\n",
             k);
    return test_program(ctx, device, src);
}

static void test_release_while_building(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 4; k++)
        CHECK_CL(clReleaseProgram(build_nth(100 + k)));
    vast_prebuild_drain();
}

static void test_launch_waits_for_background_build(void **state)
{
    (void)state;
    enum { N = 300007 }; /* 1.2 MB each: partitioned in the 2 MiB budget with both buffers */
    static cl_uint x[N], y[N];
    for (size_t i = 0; i < N; i++)
        x[i] = (cl_uint)(i * 2654435761u);
    cl_program p = build_nth(7);
    cl_int err;
    cl_kernel k = clCreateKernel(p, "axpb", &err);
    CHECK_CL(err);
    cl_mem bx = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof x, x, &err);
    CHECK_CL(err);
    memset(y, 0xa5, sizeof y); /* poison */
    cl_mem by = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY | CL_MEM_COPY_HOST_PTR, sizeof y, y, &err);
    CHECK_CL(err);
    cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &err);
    CHECK_CL(err);
    cl_uint a = 3;
    CHECK_CL(clSetKernelArg(k, 0, sizeof bx, &bx));
    CHECK_CL(clSetKernelArg(k, 1, sizeof by, &by));
    CHECK_CL(clSetKernelArg(k, 2, sizeof a, &a));
    size_t global = N;
    CHECK_CL(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK_CL(clEnqueueReadBuffer(q, by, CL_TRUE, 0, sizeof y, y, 0, NULL, NULL));
    for (size_t i = 0; i < N; i++)
        if (y[i] != 3u * x[i] + 7u + (cl_uint)i)
            fail_msg("y[%zu] = %u, expected %u", i, y[i], 3u * x[i] + 7u + (cl_uint)i);
    assert_non_null(vast_variant_meta_known(k)); /* it ran paged: the translation is there */
    CHECK_CL(clReleaseCommandQueue(q));
    CHECK_CL(clReleaseMemObject(bx));
    CHECK_CL(clReleaseMemObject(by));
    CHECK_CL(clReleaseKernel(k));
    CHECK_CL(clReleaseProgram(p));
}

/* One launch of axpb's kernel `k` of p over N items (odd), output poisoned; returns y[0..N). */
static void run_axpb(cl_program p, cl_uint *x, cl_uint *y, size_t n)
{
    cl_int err;
    cl_kernel k = clCreateKernel(p, "scaled", &err);
    CHECK_CL(err);
    cl_mem bx = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 4, x, &err);
    CHECK_CL(err);
    memset(y, 0xa5, n * 4);
    cl_mem by = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY | CL_MEM_COPY_HOST_PTR, n * 4, y, &err);
    CHECK_CL(err);
    cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &err);
    CHECK_CL(err);
    CHECK_CL(clSetKernelArg(k, 0, sizeof bx, &bx));
    CHECK_CL(clSetKernelArg(k, 1, sizeof by, &by));
    CHECK_CL(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK_CL(clEnqueueReadBuffer(q, by, CL_TRUE, 0, n * 4, y, 0, NULL, NULL));
    assert_non_null(vast_variant_meta_known(k)); /* it ran paged */
    /* a rebuild with a kernel attached is refused and changes nothing (the next run checks) */
    assert_int_equal(clBuildProgram(p, 1, &device, "-D VAL=9", NULL, NULL), CL_INVALID_OPERATION);
    CHECK_CL(clReleaseCommandQueue(q));
    CHECK_CL(clReleaseMemObject(bx));
    CHECK_CL(clReleaseMemObject(by));
    CHECK_CL(clReleaseKernel(k));
}

/* A program built again with other options runs the new build's paged kernel, not the first
 * one's (the CTS's compiler multiple_build_program, forced paged: the second kernel gave the
 * first build's values); a rebuild refused for an attached kernel keeps the old build's. */
static void test_rebuild_with_other_options(void **state)
{
    (void)state;
    enum { N = 300007 };
    static cl_uint x[N], y[N];
    for (size_t i = 0; i < N; i++)
        x[i] = (cl_uint)(i * 2654435761u);
    const char *src = "__kernel void scaled(__global const uint *x, __global uint *y) {\n"
                      "    size_t i = get_global_id(0);\n"
                      "    y[i] = x[i] * VAL + (uint)i;\n"
                      "}\n";
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK_CL(err);
    for (cl_uint val = 1; val <= 3; val++) {
        char opts[32];
        snprintf(opts, sizeof opts, "-D VAL=%uu", val);
        CHECK_CL(clBuildProgram(p, 1, &device, opts, NULL, NULL));
        run_axpb(p, x, y, N);
        for (size_t i = 0; i < N; i++)
            if (y[i] != x[i] * val + (cl_uint)i)
                fail_msg("build %u: y[%zu] = %u, expected %u", val, i, y[i], x[i] * val + (cl_uint)i);
    }
    /* as the CTS's compiler options_build_macro does: one work-item, the result read back, the
     * buffers and then the kernel released, and the program built again at once, many times on
     * one queue: VAST's launch may still hold the kernel (it is reaped a little later), which
     * must not make the rebuild fail (it did, 2 runs in 15 of that test at 16M) */
    cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &err);
    CHECK_CL(err);
    for (cl_uint round = 0; round < 100; round++) {
        cl_kernel k = clCreateKernel(p, "scaled", &err);
        CHECK_CL(err);
        cl_mem bx = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, 4, x, &err);
        CHECK_CL(err);
        cl_mem by = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4, NULL, &err);
        CHECK_CL(err);
        CHECK_CL(clSetKernelArg(k, 0, sizeof bx, &bx));
        CHECK_CL(clSetKernelArg(k, 1, sizeof by, &by));
        size_t one = 1;
        CHECK_CL(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, NULL, 0, NULL, NULL));
        CHECK_CL(clEnqueueReadBuffer(q, by, CL_TRUE, 0, 4, y, 0, NULL, NULL));
        assert_int_equal(y[0], x[0] * (round + 3));
        CHECK_CL(clReleaseMemObject(by));
        CHECK_CL(clReleaseMemObject(bx));
        CHECK_CL(clReleaseKernel(k));
        char opts[32];
        snprintf(opts, sizeof opts, "-D VAL=%uu", round + 4);
        err = clBuildProgram(p, 1, &device, opts, NULL, NULL);
        if (err != CL_SUCCESS)
            fail_msg("rebuild %u right after the kernel's release failed: %d", round, err);
    }
    CHECK_CL(clReleaseCommandQueue(q));
    CHECK_CL(clReleaseProgram(p));
}

static void test_translated_without_a_launch(void **state)
{
    (void)state;
    cl_program p = build_nth(8);
    cl_int err;
    cl_kernel k = clCreateKernel(p, "axpb", &err);
    CHECK_CL(err);
    vast_prebuild_drain();
    assert_non_null(vast_variant_meta_known(k));
    CHECK_CL(clReleaseKernel(k));
    CHECK_CL(clReleaseProgram(p));
}

/* Whether the device's scratch frame exists (made by a paged launch or vast_paged_prepare). */
static bool has_scratch(cl_device_id dev)
{
    pthread_mutex_lock(&dev->obj.lock);
    bool made = dev->scratch != NULL;
    pthread_mutex_unlock(&dev->obj.lock);
    return made;
}

/* VAST_BUILD_WAIT: the builds ran inside clBuildProgram (nothing ever went to the worker), the
 * device was prepared for paged launches before it returned (its scratch frame made on its
 * lane), and the launch after it computes the right result. */
static void test_built_inside_the_call(void **state)
{
    (void)state;
    assert_false(has_scratch(device));
    cl_program p = build_nth(11);
    assert_int_equal(vast_prebuild_queued(), 0);
    assert_false(vast_prebuild_busy());
    assert_true(has_scratch(device)); /* prepared before clBuildProgram returned */
    cl_int err;
    cl_kernel k = clCreateKernel(p, "axpb", &err);
    CHECK_CL(err);
    assert_non_null(vast_variant_meta_known(k));
    assert_int_equal(vast_prebuild_queued(), 0);
    CHECK_CL(clReleaseKernel(k));
    CHECK_CL(clReleaseProgram(p));
    test_launch_waits_for_background_build(state); /* build_nth(7): right values */
    assert_int_equal(vast_prebuild_queued(), 0);
}

static int prebuild_tests(void);
static int wait_tests(void);

static void check_idle_at_teardown(void)
{
    if (vast_prebuild_busy()) {
        fprintf(stderr, "FAIL: a background build was still running when a later exit handler ran\n");
        fflush(stderr);
        _exit(1);
    }
    printf("no background build in hand at teardown\n");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "exit") == 0) { /* exit with a build in hand */
        device = test_device(test_platform());
        ctx = test_context(device);
        build_nth(9);
        build_nth(10);
        atexit(check_idle_at_teardown);
        printf("exiting with builds queued\n");
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "wait") == 0)
        return wait_tests();
    return prebuild_tests();
}

#define main prebuild_tests
VAST_CMOCKA_MAIN(setup, teardown, test_release_while_building, test_launch_waits_for_background_build,
                 test_rebuild_with_other_options, test_translated_without_a_launch)
#undef main

#define main wait_tests
VAST_CMOCKA_MAIN(setup, teardown, test_built_inside_the_call)
#undef main
