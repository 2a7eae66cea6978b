/* saxpy: y = a * x + y over n floats, --iterations times in place: a streaming, memory-bound
 * kernel (8 bytes read and 4 written per 2 flops).
 *
 * --partitioned is the hand-written out-of-core version: x and y stream through the device in
 * chunks sized from its memory, double-buffered over two in-order queues (chunk k+1's
 * transfers overlap chunk k's kernels). Same kernel, same hash.
 *
 * --host-ptr 1 makes the buffers over the application's own arrays (CL_MEM_USE_HOST_PTR): no
 * copy in either direction, and the host holds the data once (through VAST too: the arrays are
 * the buffers' backing stores), so the data can approach the host's memory.
 *
 * --window N keeps x and y whole on the device but launches each iteration as kernels over
 * sub-buffer windows of N floats (how applications process a large buffer piece by piece):
 * through VAST, only a window's pages need to be on the device at a time.
 *
 * Verification: bit-identical to one of the two roundings OpenCL allows for a * x + y
 * (fused multiply-add or a rounded product then a rounded sum), replayed per iteration. */
#include "sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "saxpy_kernel.h"

struct setup {
    cl_context context;
    cl_device_id device;
    cl_kernel kernel;
    float a;
};

static void enqueue_saxpy(cl_command_queue q, const struct setup *s, cl_mem x, cl_mem y, size_t n)
{
    cl_ulong n_arg = n;
    CL_CHECK(clSetKernelArg(s->kernel, 0, sizeof(cl_mem), &x));
    CL_CHECK(clSetKernelArg(s->kernel, 1, sizeof(cl_mem), &y));
    CL_CHECK(clSetKernelArg(s->kernel, 2, sizeof(float), &s->a));
    CL_CHECK(clSetKernelArg(s->kernel, 3, sizeof(cl_ulong), &n_arg));
    size_t local = 256, global = sample_round_up(n, local);
    CL_CHECK(clEnqueueNDRangeKernel(q, s->kernel, 1, NULL, &global, &local, 0, NULL, NULL));
}

/* One iteration over sub-buffer windows of `window` floats (a multiple of 1024: 4 KiB). */
static void enqueue_windows(cl_command_queue q, const struct setup *s, cl_mem dx, cl_mem dy, size_t n, size_t window)
{
    for (size_t first = 0; first < n; first += window) {
        size_t count = n - first < window ? n - first : window;
        cl_buffer_region r = {first * sizeof(float), count * sizeof(float)};
        cl_int err;
        cl_mem wx = clCreateSubBuffer(dx, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
        CL_CHECK_ERR(err, "clCreateSubBuffer(x window)");
        cl_mem wy = clCreateSubBuffer(dy, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
        CL_CHECK_ERR(err, "clCreateSubBuffer(y window)");
        enqueue_saxpy(q, s, wx, wy, count);
        clReleaseMemObject(wx);
        clReleaseMemObject(wy);
    }
}

/* host_ptr: the buffers are the application's arrays (CL_MEM_USE_HOST_PTR), y's result made
 * visible there by a map; else copies, written and read back. */
static double run_whole(const struct setup *s, unsigned iterations, size_t n, size_t window, bool host_ptr, float *x,
                        float *y)
{
    size_t bytes = n * sizeof(float);
    cl_command_queue q = sample_queue(s->context, s->device);
    cl_mem dx, dy;
    double t0 = sample_now();
    if (host_ptr) {
        cl_int err;
        dx = clCreateBuffer(s->context, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, bytes, x, &err);
        CL_CHECK_ERR(err, "clCreateBuffer(x, CL_MEM_USE_HOST_PTR)");
        dy = clCreateBuffer(s->context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, y, &err);
        CL_CHECK_ERR(err, "clCreateBuffer(y, CL_MEM_USE_HOST_PTR)");
    } else {
        dx = sample_buffer(s->context, CL_MEM_READ_WRITE, bytes, "clCreateBuffer(x)");
        dy = sample_buffer(s->context, CL_MEM_READ_WRITE, bytes, "clCreateBuffer(y)");
        t0 = sample_now();
        CL_CHECK(clEnqueueWriteBuffer(q, dx, CL_FALSE, 0, bytes, x, 0, NULL, NULL));
        CL_CHECK(clEnqueueWriteBuffer(q, dy, CL_FALSE, 0, bytes, y, 0, NULL, NULL));
    }
    for (unsigned it = 0; it < iterations; it++) {
        if (window != 0 && window < n)
            enqueue_windows(q, s, dx, dy, n, window);
        else
            enqueue_saxpy(q, s, dx, dy, n);
    }
    CL_CHECK(clFinish(q));
    if (host_ptr) { /* the check reads y: unchanged values would fail it */
        cl_int err;
        void *p = clEnqueueMapBuffer(q, dy, CL_TRUE, CL_MAP_READ, 0, bytes, 0, NULL, NULL, &err);
        CL_CHECK_ERR(err, "clEnqueueMapBuffer(y)");
        if (p != (void *)y) /* the specification: a map of a USE_HOST_PTR buffer is host_ptr */
            memcpy(y, p, bytes);
        CL_CHECK(clEnqueueUnmapMemObject(q, dy, p, 0, NULL, NULL));
        CL_CHECK(clFinish(q));
    } else { /* y is in and out: poison the host copy so that a read that does not happen cannot pass */
        memset(y, 0xff, bytes);
        CL_CHECK(clEnqueueReadBuffer(q, dy, CL_TRUE, 0, bytes, y, 0, NULL, NULL));
    }
    double seconds = sample_now() - t0;
    clReleaseMemObject(dy);
    clReleaseMemObject(dx);
    clReleaseCommandQueue(q);
    return seconds;
}

static size_t chunk_elements(const struct setup *s, const struct sample_args *args, size_t n)
{
    if (args->chunk)
        return args->chunk < n ? args->chunk : n;
    cl_ulong mem = 0, max_alloc = 0;
    CL_CHECK(clGetDeviceInfo(s->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL));
    CL_CHECK(clGetDeviceInfo(s->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL));
    size_t chunk = (size_t)(mem / 10 * 9) / (4 * sizeof(float)); /* 2 sets of (x, y) */
    if (chunk > max_alloc / sizeof(float))
        chunk = max_alloc / sizeof(float);
    chunk = chunk / 4096 * 4096;
    return chunk && chunk < n ? chunk : n;
}

static double run_partitioned(const struct setup *s, const struct sample_args *args, size_t n,
                              const float *x, float *y)
{
    size_t chunk = chunk_elements(s, args, n), chunks = (n + chunk - 1) / chunk;
    size_t cbytes = chunk * sizeof(float);
    printf("partitioned: %zu chunks of %zu elements, 2 queues\n", chunks, chunk);
    cl_command_queue q[2];
    cl_mem dx[2], dy[2];
    for (int k = 0; k < 2; k++) {
        q[k] = sample_queue(s->context, s->device);
        dx[k] = sample_buffer(s->context, CL_MEM_READ_WRITE, cbytes, "clCreateBuffer(x chunk)");
        dy[k] = sample_buffer(s->context, CL_MEM_READ_WRITE, cbytes, "clCreateBuffer(y chunk)");
    }
    /* y is read and written in place chunk by chunk; the kernels run from the chunk on the
     * device, the read lands where the chunk came from once its writes have been consumed
     * (in-order queue: write, kernels, read). */
    double t0 = sample_now();
    for (size_t ch = 0; ch < chunks; ch++) {
        int k = (int)(ch % 2);
        size_t first = ch * chunk, count = n - first < chunk ? n - first : chunk;
        size_t bytes = count * sizeof(float);
        CL_CHECK(clEnqueueWriteBuffer(q[k], dx[k], CL_FALSE, 0, bytes, x + first, 0, NULL, NULL));
        CL_CHECK(clEnqueueWriteBuffer(q[k], dy[k], CL_FALSE, 0, bytes, y + first, 0, NULL, NULL));
        for (unsigned it = 0; it < args->iterations; it++)
            enqueue_saxpy(q[k], s, dx[k], dy[k], count);
        CL_CHECK(clEnqueueReadBuffer(q[k], dy[k], CL_FALSE, 0, bytes, y + first, 0, NULL, NULL));
    }
    CL_CHECK(clFinish(q[0]));
    CL_CHECK(clFinish(q[1]));
    double seconds = sample_now() - t0;
    for (int k = 0; k < 2; k++) {
        clReleaseMemObject(dy[k]);
        clReleaseMemObject(dx[k]);
        clReleaseCommandQueue(q[k]);
    }
    return seconds;
}

int main(int argc, char **argv)
{
    size_t n = 1 << 20, window = 0, host_ptr = 0;
    struct sample_args args = {0};
    const struct sample_size_flag flags[] = {
        {"--size", "-n", &n, "number of floats per vector"},
        {"--window", NULL, &window, "floats per kernel launch over sub-buffer windows (0: whole)"},
        {"--host-ptr", NULL, &host_ptr, "1: buffers over the application's arrays (CL_MEM_USE_HOST_PTR; host memory = data)"},
    };
    sample_parse_args(argc, argv, "streaming y = a * x + y", &args, flags, 3, true);
    window = window / 1024 * 1024;
    size_t bytes = n * sizeof(float);
    printf("saxpy: n=%zu (%.3f GiB total), %u iterations%s", n, 2.0 * (double)bytes / (1u << 30), args.iterations,
           args.partitioned ? ", partitioned" : "");
    if (window != 0 && !args.partitioned)
        printf(", windows of %zu floats", window);
    if (host_ptr != 0 && !args.partitioned)
        printf(", CL_MEM_USE_HOST_PTR");
    printf("\n");
    sample_report_data(2.0 * (double)bytes);

    struct setup s;
    cl_platform_id platform;
    sample_select_device(&args, &platform, &s.device);
    struct sample_rng rng;
    sample_rng_init(&rng, args.seed, 3);
    s.a = sample_rng_float(&rng, 0.5f, 2.0f);

    /* No copy of y's initial values: the check regenerates them (host memory = data, so the
     * harness's size sweep can go above the GPU's memory on a host of twice that). */
    float *x = sample_alloc(bytes), *y = sample_alloc(bytes);
    sample_fill_float(x, n, args.seed, 1, -1.0f, 1.0f);
    sample_fill_float(y, n, args.seed, 2, -1.0f, 1.0f);

    s.context = sample_context(platform, s.device);
    cl_program program = sample_build_program(s.context, s.device, saxpy_source, "");
    s.kernel = sample_kernel(program, "saxpy");

    double seconds = args.partitioned ? run_partitioned(&s, &args, n, x, y)
                                      : run_whole(&s, args.iterations, n, window, host_ptr != 0, x, y);
    printf("bandwidth: %.3f GB/s\n", 12.0 * (double)n * args.iterations / seconds * 1e-9);

    struct sample_checker check;
    sample_checker_init(&check, &args, n, (size_t)1 << 28, 1 << 20);
    size_t i, errors = 0;
    while (sample_checker_next(&check, &i)) {
        float y0 = sample_float_at(args.seed, 2, i, -1.0f, 1.0f), fused = y0, split = y0;
        for (unsigned it = 0; it < args.iterations; it++) {
            fused = fmaf(s.a, x[i], fused);
            float prod = s.a * x[i];
            split = prod + split;
        }
        if (memcmp(&y[i], &fused, sizeof(float)) && memcmp(&y[i], &split, sizeof(float)))
            sample_report_mismatch(&errors, "y[%zu] = %.9g, expected %.9g (fma) or %.9g", i,
                                   y[i], fused, split);
    }
    uint64_t hash = sample_fnv1a(SAMPLE_FNV_INIT, y, bytes);

    clReleaseKernel(s.kernel);
    clReleaseProgram(program);
    clReleaseContext(s.context);
    free(x);
    free(y);
    return sample_finish("saxpy", errors == 0, seconds, hash);
}
