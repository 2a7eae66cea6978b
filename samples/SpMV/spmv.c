/* SpMV: y = A * x for a sparse matrix in ELL format: rows x width non-zeros stored
 * column-major (vals[k * rows + r], cols[k * rows + r]) with random column indices in
 * [0, cols), so x is read at data-dependent addresses (the paper's indirect-access case).
 * Paper size: 8 M rows x 64, a 4 M vector: 4 GB of matrix, 32 MB of y.
 *
 * --partitioned: the hand-chunked version by rows: x stays on the device (its reads are
 * random), vals and cols of a row range (width strided slices of the column-major arrays, one
 * clEnqueueWriteBufferRect each) and y of that range move in chunks over two queues; a chunk
 * is an ELL matrix of its own with `count` rows. Same kernel, same hash.
 *
 * Verification: each checked y[r] against a double dot product, within
 * (width + 2) * FLT_EPSILON * sum_k |val * x[col]|. */
#include "sample.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

struct matrix {
    size_t rows, width, ncols;
    const float *vals, *x;
    const cl_uint *cols;
};

static void set_kernel_args(cl_kernel kernel, const cl_mem d[4], size_t rows, size_t width)
{
    cl_ulong rows_arg = rows;
    cl_uint width_arg = (cl_uint)width;
    sample_set_args(kernel, 0, 6, sizeof(cl_mem), &d[0], sizeof(cl_mem), &d[1], sizeof(cl_mem), &d[2],
                    sizeof(cl_mem), &d[3], sizeof(cl_ulong), &rows_arg, sizeof(cl_uint), &width_arg);
}

static double run_whole(cl_context context, cl_device_id device, cl_kernel kernel, unsigned iterations,
                        const struct matrix *m, float *y)
{
    size_t nnz = m->rows * m->width;
    cl_command_queue queue = sample_queue(context, device);
    cl_mem d[4]; /* vals, cols, x, y */
    d[0] = sample_buffer(context, CL_MEM_READ_ONLY, nnz * sizeof(float), "clCreateBuffer(vals)");
    d[1] = sample_buffer(context, CL_MEM_READ_ONLY, nnz * sizeof(cl_uint), "clCreateBuffer(cols)");
    d[2] = sample_buffer(context, CL_MEM_READ_ONLY, m->ncols * sizeof(float), "clCreateBuffer(x)");
    d[3] = sample_buffer(context, CL_MEM_WRITE_ONLY, m->rows * sizeof(float), "clCreateBuffer(y)");
    const cl_uint poison = 0x7fc0dead;
    sample_poison(queue, d[3], m->rows * sizeof(float), poison);
    CL_CHECK(clFinish(queue));

    double t0 = sample_now();
    CL_CHECK(clEnqueueWriteBuffer(queue, d[0], CL_FALSE, 0, nnz * sizeof(float), m->vals, 0, NULL, NULL));
    CL_CHECK(clEnqueueWriteBuffer(queue, d[1], CL_FALSE, 0, nnz * sizeof(cl_uint), m->cols, 0, NULL, NULL));
    CL_CHECK(clEnqueueWriteBuffer(queue, d[2], CL_FALSE, 0, m->ncols * sizeof(float), m->x, 0, NULL, NULL));
    set_kernel_args(kernel, d, m->rows, m->width);
    sample_launch_1d(queue, kernel, m->rows, 128, iterations);
    CL_CHECK(clEnqueueReadBuffer(queue, d[3], CL_TRUE, 0, m->rows * sizeof(float), y, 0, NULL, NULL));
    double seconds = sample_now() - t0;
    for (int k = 3; k >= 0; k--)
        clReleaseMemObject(d[k]);
    clReleaseCommandQueue(queue);
    return seconds;
}

/* Rows first .. first + count - 1 of a column-major width x rows array (4-byte elements) into
 * a chunk buffer laid out as a count-row ELL matrix: one rectangle of width rows. */
static void write_slices(cl_command_queue q, cl_mem chunk, const void *host, size_t rows, size_t width,
                         size_t first, size_t count)
{
    size_t buffer_origin[3] = {0, 0, 0}, host_origin[3] = {first * 4, 0, 0}, region[3] = {count * 4, width, 1};
    CL_CHECK(clEnqueueWriteBufferRect(q, chunk, CL_FALSE, buffer_origin, host_origin, region, count * 4, 0,
                                      rows * 4, 0, host, 0, NULL, NULL));
}

static double run_partitioned(cl_context context, cl_device_id device, cl_kernel kernel,
                              const struct sample_args *args, const struct matrix *m, float *y)
{
    size_t chunk = sample_chunk_elements(device, args, m->rows, m->width * 8 + 4, m->width * 4,
                                         m->ncols * sizeof(float), 1);
    size_t chunks = (m->rows + chunk - 1) / chunk;
    printf("partitioned: %zu chunks of %zu rows, 2 queues\n", chunks, chunk);
    memset(y, 0xff, m->rows * sizeof(float)); /* poison (a NaN): chunks never read back cannot pass */
    cl_command_queue q[2];
    cl_mem d[2][4]; /* vals, cols, x (shared), y */
    cl_mem dx = sample_buffer(context, CL_MEM_READ_ONLY, m->ncols * sizeof(float), "clCreateBuffer(x)");
    for (int k = 0; k < 2; k++) {
        q[k] = sample_queue(context, device);
        d[k][0] = sample_buffer(context, CL_MEM_READ_ONLY, chunk * m->width * sizeof(float),
                                "clCreateBuffer(vals chunk)");
        d[k][1] = sample_buffer(context, CL_MEM_READ_ONLY, chunk * m->width * sizeof(cl_uint),
                                "clCreateBuffer(cols chunk)");
        d[k][2] = dx;
        d[k][3] = sample_buffer(context, CL_MEM_WRITE_ONLY, chunk * sizeof(float), "clCreateBuffer(y chunk)");
    }
    double t0 = sample_now();
    /* x once, on queue 0; queue 1's first kernel waits for it. */
    cl_event x_done;
    CL_CHECK(clEnqueueWriteBuffer(q[0], dx, CL_FALSE, 0, m->ncols * sizeof(float), m->x, 0, NULL, &x_done));
    for (size_t ch = 0; ch < chunks; ch++) {
        int k = (int)(ch % 2);
        size_t first = ch * chunk, count = m->rows - first < chunk ? m->rows - first : chunk;
        write_slices(q[k], d[k][0], m->vals, m->rows, m->width, first, count);
        write_slices(q[k], d[k][1], m->cols, m->rows, m->width, first, count);
        set_kernel_args(kernel, d[k], count, m->width);
        size_t local = 128, global = sample_round_up(count, local);
        for (unsigned it = 0; it < args->iterations; it++)
            CL_CHECK(clEnqueueNDRangeKernel(q[k], kernel, 1, NULL, &global, &local, ch == 1 && it == 0 ? 1 : 0,
                                            ch == 1 && it == 0 ? &x_done : NULL, NULL));
        CL_CHECK(clEnqueueReadBuffer(q[k], d[k][3], CL_FALSE, 0, count * sizeof(float), y + first, 0, NULL, NULL));
    }
    CL_CHECK(clFinish(q[0]));
    CL_CHECK(clFinish(q[1]));
    double seconds = sample_now() - t0;
    clReleaseEvent(x_done);
    for (int k = 0; k < 2; k++) {
        clReleaseMemObject(d[k][3]);
        clReleaseMemObject(d[k][1]);
        clReleaseMemObject(d[k][0]);
        clReleaseCommandQueue(q[k]);
    }
    clReleaseMemObject(dx);
    return seconds;
}

int main(int argc, char **argv)
{
    size_t rows = 1 << 18, width = 64, ncols = 1 << 17;
    struct sample_args args = {0};
    const struct sample_size_flag flags[] = {
        {"--rows", "-n", &rows, "matrix rows (length of y)"},
        {"--width", "-w", &width, "non-zeros per row (ELL width)"},
        {"--cols", "-c", &ncols, "matrix columns (length of x)"},
    };
    sample_parse_args(argc, argv, "sparse matrix-vector product, ELL format", &args, flags, 3, true);
    if (width > UINT32_MAX || ncols > UINT32_MAX) {
        fprintf(stderr, "error: --width and --cols must fit 32 bits\n");
        return 2;
    }
    size_t nnz = rows * width;
    printf("SpMV: %zu x %zu, %zu per row (%.3f GiB total)%s\n", rows, ncols, width,
           ((double)nnz * 8 + (double)ncols * 4 + (double)rows * 4) / (1u << 30),
           args.partitioned ? ", partitioned" : "");
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
    cl_program program = sample_build_program(context, device, kernel_source, "");
    cl_kernel kernel = sample_kernel(program, "SparseMV_ELL");
    const struct matrix m = {rows, width, ncols, vals, x, cols};
    double seconds = args.partitioned ? run_partitioned(context, device, kernel, &args, &m, y)
                                      : run_whole(context, device, kernel, args.iterations, &m, y);

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
    clReleaseContext(context);
    free(vals);
    free(cols);
    free(x);
    free(y);
    return sample_finish("SpMV", errors == 0, seconds, hash);
}
