/*
 * overhead: the per-call cost of an OpenCL platform for the calls applications make most:
 * clGetDeviceInfo, clSetKernelArg (a buffer and a scalar) and clEnqueueNDRangeKernel of an
 * empty kernel. Run on PoCL directly and on VAST by overhead.sh, which prints the ratio.
 * Usage: overhead <platform-name-substring> [scale]
 */
#define CL_TARGET_OPENCL_VERSION 300
#include "clbench.h"

int main(int argc, char **argv)
{
    const char *want = argc > 1 ? argv[1] : "Portable";
    long scale = argc > 2 ? atol(argv[2]) : 1;
    struct empty_bench e = empty_bench_open(want, false);
    cl_device_id d = e.d;
    cl_context ctx = e.ctx;
    cl_command_queue q = e.q;
    cl_kernel k = e.k;
    cl_int err;
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
    empty_bench_close(&e);
    return 0;
}
