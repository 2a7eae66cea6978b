/* SpMV: y = A * x for a sparse matrix in ELL format: rows x width non-zeros stored
 * column-major (vals[k * rows + r], cols[k * rows + r]) with random column indices in
 * [0, cols), so x is read at data-dependent addresses (the paper's indirect-access case).
 * Paper size: 8 M rows x 64, a 4 M vector: 4 GB of matrix, 32 MB of y.
 *
 * Verification: each checked y[r] against a double dot product, within
 * (width + 2) * FLT_EPSILON * sum_k |val * x[col]|. */
#include "sample.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char *kernel_source =
    "__kernel void SparseMV_ELL(__global const float *vals, __global const uint *cols,\n"
    "                           __global const float *x, __global float *y,\n"
    "                           ulong rows, uint width)\n"
    "{\n"
    "    size_t r = get_global_id(0);\n"
    "    if (r >= rows)\n"
    "        return;\n"
    "    float sum = 0.0f;\n"
    "    for (uint k = 0; k < width; k++) {\n"
    "        size_t e = (size_t)k * rows + r;\n"
    "        sum += vals[e] * x[cols[e]];\n"
    "    }\n"
    "    y[r] = sum;\n"
    "}\n";

int main(int argc, char **argv)
{
    size_t rows = 1 << 18, width = 64, ncols = 1 << 17;
    struct sample_args args = {0};
    const struct sample_size_flag flags[] = {
        {"--rows", "-n", &rows, "matrix rows (length of y)"},
        {"--width", "-w", &width, "non-zeros per row (ELL width)"},
        {"--cols", "-c", &ncols, "matrix columns (length of x)"},
    };
    sample_parse_args(argc, argv, "sparse matrix-vector product, ELL format", &args, flags, 3, false);
    if (width > UINT32_MAX || ncols > UINT32_MAX) {
        fprintf(stderr, "error: --width and --cols must fit 32 bits\n");
        return 2;
    }
    size_t nnz = rows * width;
    printf("SpMV: %zu x %zu, %zu per row (%.3f GiB total)\n", rows, ncols, width,
           ((double)nnz * 8 + (double)ncols * 4 + (double)rows * 4) / (1u << 30));
    sample_report_data((double)nnz * 8 + (double)ncols * 4 + (double)rows * 4);

    cl_platform_id platform;
    cl_device_id device;
    sample_select_device(&args, &platform, &device);

    float *vals = sample_alloc(nnz * sizeof(float)), *x = sample_alloc(ncols * sizeof(float));
    float *y = sample_alloc(rows * sizeof(float));
    cl_uint *cols = sample_alloc(nnz * sizeof(cl_uint));
    sample_fill_float(vals, nnz, args.seed, 1, -1.0f, 1.0f);
    sample_fill_float(x, ncols, args.seed, 2, -1.0f, 1.0f);
    struct sample_rng rng;
    sample_rng_init(&rng, args.seed, 3);
    for (size_t e = 0; e < nnz; e++)
        cols[e] = (cl_uint)sample_rng_below(&rng, ncols);

    cl_context context = sample_context(platform, device);
    cl_command_queue queue = sample_queue(context, device);
    cl_mem dvals = sample_buffer(context, CL_MEM_READ_ONLY, nnz * sizeof(float), "clCreateBuffer(vals)");
    cl_mem dcols = sample_buffer(context, CL_MEM_READ_ONLY, nnz * sizeof(cl_uint), "clCreateBuffer(cols)");
    cl_mem dx = sample_buffer(context, CL_MEM_READ_ONLY, ncols * sizeof(float), "clCreateBuffer(x)");
    cl_mem dy = sample_buffer(context, CL_MEM_WRITE_ONLY, rows * sizeof(float), "clCreateBuffer(y)");
    const cl_uint poison = 0x7fc0dead;
    sample_poison(queue, dy, rows * sizeof(float), poison);
    CL_CHECK(clFinish(queue));
    cl_program program = sample_build_program(context, device, kernel_source, "");
    cl_kernel kernel = sample_kernel(program, "SparseMV_ELL");

    double t0 = sample_now();
    CL_CHECK(clEnqueueWriteBuffer(queue, dvals, CL_FALSE, 0, nnz * sizeof(float), vals, 0, NULL, NULL));
    CL_CHECK(clEnqueueWriteBuffer(queue, dcols, CL_FALSE, 0, nnz * sizeof(cl_uint), cols, 0, NULL, NULL));
    CL_CHECK(clEnqueueWriteBuffer(queue, dx, CL_FALSE, 0, ncols * sizeof(float), x, 0, NULL, NULL));
    cl_ulong rows_arg = rows;
    cl_uint width_arg = (cl_uint)width;
    sample_set_args(kernel, 0, 6, sizeof(cl_mem), &dvals, sizeof(cl_mem), &dcols, sizeof(cl_mem), &dx,
                    sizeof(cl_mem), &dy, sizeof(cl_ulong), &rows_arg, sizeof(cl_uint), &width_arg);
    sample_launch_1d(queue, kernel, rows, 128, args.iterations);
    CL_CHECK(clEnqueueReadBuffer(queue, dy, CL_TRUE, 0, rows * sizeof(float), y, 0, NULL, NULL));
    double seconds = sample_now() - t0;

    struct sample_checker check;
    sample_checker_init(&check, &args, rows, (size_t)1 << 24, 1 << 16);
    size_t r, errors = 0;
    while (sample_checker_next(&check, &r)) {
        double sum = 0.0, mag = 0.0;
        for (size_t k = 0; k < width; k++) {
            size_t e = k * rows + r;
            double p = (double)vals[e] * (double)x[cols[e]];
            sum += p;
            mag += fabs(p);
        }
        double tol = (double)(width + 2) * FLT_EPSILON * mag;
        if (!(fabs((double)y[r] - sum) <= tol))
            sample_report_mismatch(&errors, "y[%zu] = %.9g, expected %.9g (tolerance %.3g)", r, y[r],
                                   sum, tol);
    }
    uint64_t hash = sample_fnv1a(SAMPLE_FNV_INIT, y, rows * sizeof(float));

    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseMemObject(dy);
    clReleaseMemObject(dx);
    clReleaseMemObject(dcols);
    clReleaseMemObject(dvals);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(vals);
    free(cols);
    free(x);
    free(y);
    return sample_finish("SpMV", errors == 0, seconds, hash);
}
