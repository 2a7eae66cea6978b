/* vecadd: c[i] = a[i] + b[i] over n floats, the "hello world" of OpenCL.
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

int main(int argc, char **argv)
{
    size_t n = 1 << 20;
    struct sample_args args = {0};
    sample_parse_count(argc, argv, "c = a + b over float vectors", &args, &n, "number of floats per vector");
    printf("vecadd: n=%zu (%.3f GiB total)\n", n, 3.0 * (double)n * sizeof(float) / (1u << 30));
    sample_report_data(3.0 * (double)n * sizeof(float));

    cl_platform_id platform;
    cl_device_id device;
    sample_select_device(&args, &platform, &device);

    size_t bytes = n * sizeof(float);
    float *a = sample_alloc(bytes), *b = sample_alloc(bytes), *c = sample_alloc(bytes);
    sample_fill_float(a, n, args.seed, 1, -1.0f, 1.0f);
    sample_fill_float(b, n, args.seed, 2, -1.0f, 1.0f);

    cl_context context = sample_context(platform, device);
    cl_command_queue queue = sample_queue(context, device);
    cl_mem da = sample_buffer(context, CL_MEM_READ_ONLY, bytes, "clCreateBuffer(a)");
    cl_mem db = sample_buffer(context, CL_MEM_READ_ONLY, bytes, "clCreateBuffer(b)");
    cl_mem dc = sample_buffer(context, CL_MEM_WRITE_ONLY, bytes, "clCreateBuffer(c)");
    cl_program program = sample_build_program(context, device, kernel_source, "");
    cl_kernel kernel = sample_kernel(program, "vecadd");

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
    sample_launch_1d(queue, kernel, n, 256, args.iterations);
    CL_CHECK(clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, bytes, c, 0, NULL, NULL));
    double seconds = sample_now() - t0;

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
    clReleaseMemObject(dc);
    clReleaseMemObject(db);
    clReleaseMemObject(da);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(a);
    free(b);
    free(c);
    return sample_finish("vecadd", errors == 0, seconds, hash);
}
