/* vecadd: c[i] = a[i] + b[i] over n floats, the "hello world" of OpenCL.
 * --partitioned: the hand-chunked version (a and b in, c out, chunk by chunk over two queues;
 * samples/common's sample_run_chunks). Same kernel, same hash.
 * Verification: bit-identical (IEEE addition is correctly rounded on every device). */
#include "sample.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *kernel_source =
    "__kernel void vecadd(__global const float *a, __global const float *b,\n"
    "                     __global float *c, ulong n)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n)\n"
    "        c[i] = a[i] + b[i];\n"
    "}\n";

struct chunk_ctx {
    cl_kernel kernel;
    unsigned iterations;
};

static void enqueue_chunk(cl_command_queue q, const cl_mem *d, size_t first, size_t count, void *ctx)
{
    const struct chunk_ctx *c = ctx;
    cl_ulong n_arg = count;
    (void)first;
    sample_set_args(c->kernel, 0, 4, sizeof(cl_mem), &d[0], sizeof(cl_mem), &d[1], sizeof(cl_mem), &d[2],
                    sizeof(cl_ulong), &n_arg);
    sample_launch_1d(q, c->kernel, count, 256, c->iterations);
}

static double run_whole(cl_context context, cl_device_id device, cl_kernel kernel, unsigned iterations,
                        size_t n, const float *a, const float *b, float *c)
{
    size_t bytes = n * sizeof(float);
    cl_command_queue queue = sample_queue(context, device);
    cl_mem da = sample_buffer(context, CL_MEM_READ_ONLY, bytes, "clCreateBuffer(a)");
    cl_mem db = sample_buffer(context, CL_MEM_READ_ONLY, bytes, "clCreateBuffer(b)");
    cl_mem dc = sample_buffer(context, CL_MEM_WRITE_ONLY, bytes, "clCreateBuffer(c)");
    /* Poison the output so that elements the kernel never writes cannot pass. */
    const cl_uint poison = 0x7fc0dead; /* a NaN */
    sample_poison(queue, dc, bytes, poison);
    CL_CHECK(clFinish(queue));

    double t0 = sample_now();
    CL_CHECK(clEnqueueWriteBuffer(queue, da, CL_FALSE, 0, bytes, a, 0, NULL, NULL));
    CL_CHECK(clEnqueueWriteBuffer(queue, db, CL_FALSE, 0, bytes, b, 0, NULL, NULL));
    cl_ulong n_arg = n;
    sample_set_args(kernel, 0, 4, sizeof(cl_mem), &da, sizeof(cl_mem), &db, sizeof(cl_mem), &dc, sizeof(cl_ulong),
                    &n_arg);
    sample_launch_1d(queue, kernel, n, 256, iterations);
    CL_CHECK(clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, bytes, c, 0, NULL, NULL));
    double seconds = sample_now() - t0;
    clReleaseMemObject(dc);
    clReleaseMemObject(db);
    clReleaseMemObject(da);
    clReleaseCommandQueue(queue);
    return seconds;
}

static double run_partitioned(cl_context context, cl_device_id device, cl_kernel kernel,
                              const struct sample_args *args, size_t n, float *a, float *b, float *c)
{
    memset(c, 0xff, n * sizeof(float)); /* poison (a NaN): chunks never read back cannot pass */
    struct sample_chunk_buffer bufs[] = {
        {a, sizeof(float), SAMPLE_CHUNK_IN}, {b, sizeof(float), SAMPLE_CHUNK_IN}, {c, sizeof(float), SAMPLE_CHUNK_OUT}};
    struct chunk_ctx ctx = {kernel, args->iterations};
    size_t chunk = sample_chunk_elements(device, args, n, 3 * sizeof(float), sizeof(float), 0, 1);
    return sample_run_chunks(context, device, n, chunk, bufs, 3, enqueue_chunk, &ctx);
}

int main(int argc, char **argv)
{
    size_t n = 1 << 20;
    struct sample_args args = {0};
    sample_parse_count_partitioned(argc, argv, "c = a + b over float vectors", &args, &n,
                                   "number of floats per vector");
    printf("vecadd: n=%zu (%.3f GiB total)%s\n", n, 3.0 * (double)n * sizeof(float) / (1u << 30),
           args.partitioned ? ", partitioned" : "");
    sample_report_data(3.0 * (double)n * sizeof(float));

    cl_platform_id platform;
    cl_device_id device;
    sample_select_device(&args, &platform, &device);

    size_t bytes = n * sizeof(float);
    float *a = sample_alloc(bytes), *b = sample_alloc(bytes), *c = sample_alloc(bytes);
    sample_fill_float(a, n, args.seed, 1, -1.0f, 1.0f);
    sample_fill_float(b, n, args.seed, 2, -1.0f, 1.0f);

    cl_context context = sample_context(platform, device);
    cl_program program = sample_build_program(context, device, kernel_source, "");
    cl_kernel kernel = sample_kernel(program, "vecadd");
    double seconds = args.partitioned ? run_partitioned(context, device, kernel, &args, n, a, b, c)
                                      : run_whole(context, device, kernel, args.iterations, n, a, b, c);

    struct sample_checker check;
    sample_checker_init(&check, &args, n, (size_t)1 << 28, 1 << 20);
    size_t i, errors = 0;
    while (sample_checker_next(&check, &i)) {
        float want = a[i] + b[i];
        if (memcmp(&want, &c[i], sizeof want))
            sample_report_mismatch(&errors, "c[%zu] = %.9g, expected %.9g", i, c[i], want);
    }
    uint64_t hash = sample_fnv1a(SAMPLE_FNV_INIT, c, bytes);

    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseContext(context);
    free(a);
    free(b);
    free(c);
    return sample_finish("vecadd", errors == 0, seconds, hash);
}
