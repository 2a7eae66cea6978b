/*
 * overhead: the per-call cost of an OpenCL platform for the calls applications make most:
 * clGetDeviceInfo, clSetKernelArg (a buffer and a scalar) and clEnqueueNDRangeKernel of an
 * empty kernel. Run on PoCL directly and on VAST by overhead.sh, which prints the ratio.
 * Usage: overhead <platform-name-substring> [scale]
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
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

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static cl_platform_id find_platform(const char *want)
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

int main(int argc, char **argv)
{
    const char *want = argc > 1 ? argv[1] : "Portable";
    long scale = argc > 2 ? atol(argv[2]) : 1;
    cl_platform_id p = find_platform(want);
    cl_device_id d;
    CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, d, NULL, &err);
    CHECK(err);
    const char *src = "__kernel void empty(__global int *a, int b) { }\n";
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &d, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "empty", &err);
    CHECK(err);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    CHECK(err);
    int b = 1;
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    CHECK(clSetKernelArg(k, 1, sizeof b, &b));

    long n = 1000000 * scale;
    cl_uint units;
    double t0 = now();
    for (long i = 0; i < n; i++)
        clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
    double info_ns = (now() - t0) / n * 1e9;
    t0 = now();
    for (long i = 0; i < n; i++)
        clSetKernelArg(k, 0, sizeof buf, &buf);
    double arg_mem_ns = (now() - t0) / n * 1e9;
    t0 = now();
    for (long i = 0; i < n; i++)
        clSetKernelArg(k, 1, sizeof b, &b);
    double arg_int_ns = (now() - t0) / n * 1e9;
    long launches = 20000 * scale;
    size_t global = 1;
    CHECK(clFinish(q));
    t0 = now();
    for (long i = 0; i < launches; i++) {
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
        if (i % 100 == 99)
            CHECK(clFinish(q));
    }
    CHECK(clFinish(q));
    double launch_us = (now() - t0) / launches * 1e6;
    char bytes[4096];
    long copies = 20000 * scale;
    t0 = now();
    for (long i = 0; i < copies; i++)
        CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, sizeof bytes, bytes, 0, NULL, NULL));
    double write_us = (now() - t0) / copies * 1e6;
    t0 = now();
    for (long i = 0; i < copies; i++)
        CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof bytes, bytes, 0, NULL, NULL));
    double read_us = (now() - t0) / copies * 1e6;
    printf("clGetDeviceInfo_ns %.1f\nclSetKernelArg_buffer_ns %.1f\nclSetKernelArg_int_ns %.1f\n"
           "clEnqueueNDRangeKernel_empty_us %.2f\nclEnqueueReadBuffer_4K_blocking_us %.2f\n"
           "clEnqueueWriteBuffer_4K_blocking_us %.2f\n",
           info_ns, arg_mem_ns, arg_int_ns, launch_us, read_us, write_us);
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
