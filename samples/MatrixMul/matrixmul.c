/* MatrixMul: C = A * B for n x n float matrices with the NVIDIA SDK's tiled kernel (16 x 16
 * work-groups, tiles of A and B staged in local memory). Sizes need not be multiples of 16.
 * --rows M makes A and C M x n (B stays n x n; default M = n): the data grows while every
 * work-group still reads one full column stripe of B, so a device budget of B plus a few row
 * stripes suffices however large M is (the benchmark harness sizes oversubscription by this).
 *
 * --partitioned is the "expert programmer" of the VAST paper's section 5.4: B is sent once,
 * A and C move in row chunks sized from the device's memory, double-buffered over two
 * in-order queues so that one chunk's transfers overlap the other's kernel. Both versions run
 * the same kernel, so they print the same hash.
 *
 * Verification: each checked C[i][j] against a double-precision dot product, within
 * (n + 2) * FLT_EPSILON * sum_k |A[i][k] * B[k][j]| (the classic bound for a float dot product
 * of length n in any order, with or without fused multiply-add). */
#include "sample.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matrixmul_kernel.h"

struct setup {
    cl_context context;
    cl_device_id device;
    cl_kernel kernel;
    size_t n;    /* columns of A, B and C; rows of B */
    size_t rows; /* rows of A and C */
};

static void enqueue_matmul(cl_command_queue q, const struct setup *s, cl_mem c, cl_mem a, cl_mem b,
                           size_t rows, cl_uint nwait, const cl_event *wait)
{
    cl_ulong rows_arg = rows, n_arg = s->n;
    CL_CHECK(clSetKernelArg(s->kernel, 0, sizeof(cl_mem), &c));
    CL_CHECK(clSetKernelArg(s->kernel, 1, sizeof(cl_mem), &a));
    CL_CHECK(clSetKernelArg(s->kernel, 2, sizeof(cl_mem), &b));
    CL_CHECK(clSetKernelArg(s->kernel, 3, sizeof(cl_ulong), &rows_arg));
    CL_CHECK(clSetKernelArg(s->kernel, 4, sizeof(cl_ulong), &n_arg));
    size_t local[2] = {BS, BS};
    size_t global[2] = {sample_round_up(s->n, BS), sample_round_up(rows, BS)};
    CL_CHECK(clEnqueueNDRangeKernel(q, s->kernel, 2, NULL, global, local, nwait, wait, NULL));
}

/* The plain version: three buffers, one queue. */
static double run_whole(const struct setup *s, const struct sample_args *args, const float *a,
                        const float *b, float *c)
{
    size_t ac_bytes = s->rows * s->n * sizeof(float), b_bytes = s->n * s->n * sizeof(float);
    cl_command_queue q = sample_queue(s->context, s->device);
    cl_mem da = sample_buffer(s->context, CL_MEM_READ_ONLY, ac_bytes, "clCreateBuffer(A)");
    cl_mem db = sample_buffer(s->context, CL_MEM_READ_ONLY, b_bytes, "clCreateBuffer(B)");
    cl_mem dc = sample_buffer(s->context, CL_MEM_WRITE_ONLY, ac_bytes, "clCreateBuffer(C)");
    const cl_uint poison = 0x7fc0dead;
    sample_poison(q, dc, ac_bytes, poison);
    CL_CHECK(clFinish(q));

    double t0 = sample_now();
    CL_CHECK(clEnqueueWriteBuffer(q, da, CL_FALSE, 0, ac_bytes, a, 0, NULL, NULL));
    CL_CHECK(clEnqueueWriteBuffer(q, db, CL_FALSE, 0, b_bytes, b, 0, NULL, NULL));
    for (unsigned it = 0; it < args->iterations; it++)
        enqueue_matmul(q, s, dc, da, db, s->rows, 0, NULL);
    CL_CHECK(clEnqueueReadBuffer(q, dc, CL_TRUE, 0, ac_bytes, c, 0, NULL, NULL));
    double seconds = sample_now() - t0;

    clReleaseMemObject(dc);
    clReleaseMemObject(db);
    clReleaseMemObject(da);
    clReleaseCommandQueue(q);
    return seconds;
}

/* Rows per chunk as the expert computes them: what is left after B, shared by two sets of
 * (A rows, C rows), each set within one allocation. */
static size_t chunk_rows(const struct setup *s, const struct sample_args *args)
{
    size_t row_bytes = s->n * sizeof(float);
    if (args->chunk)
        return args->chunk < s->rows ? args->chunk : s->rows;
    cl_ulong mem = 0, max_alloc = 0;
    CL_CHECK(clGetDeviceInfo(s->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL));
    CL_CHECK(clGetDeviceInfo(s->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL));
    size_t b_bytes = s->n * row_bytes;
    size_t usable = (size_t)(mem / 10 * 9);
    if (b_bytes > max_alloc || b_bytes >= usable) {
        fprintf(stderr, "error: B (%zu bytes) does not fit the device; the partitioned version needs it resident\n",
                b_bytes);
        printf("SETUP ERROR\n");
        exit(2);
    }
    size_t rows = (usable - b_bytes) / (4 * row_bytes);
    if (rows > max_alloc / row_bytes)
        rows = max_alloc / row_bytes;
    rows = rows / BS * BS;
    if (rows < BS)
        rows = BS;
    return rows < s->rows ? rows : s->rows;
}

static double run_partitioned(const struct setup *s, const struct sample_args *args,
                              const float *a, const float *b, float *c)
{
    size_t n = s->n, m = s->rows, rows = chunk_rows(s, args), row_bytes = n * sizeof(float);
    size_t chunks = (m + rows - 1) / rows;
    printf("partitioned: %zu chunks of %zu rows, 2 queues\n", chunks, rows);
    cl_command_queue q[2];
    cl_mem da[2], dc[2];
    for (int k = 0; k < 2; k++) {
        q[k] = sample_queue(s->context, s->device);
        da[k] = sample_buffer(s->context, CL_MEM_READ_ONLY, rows * row_bytes, "clCreateBuffer(A chunk)");
        dc[k] = sample_buffer(s->context, CL_MEM_WRITE_ONLY, rows * row_bytes, "clCreateBuffer(C chunk)");
        const cl_uint poison = 0x7fc0dead;
        sample_poison(q[k], dc[k], rows * row_bytes, poison);
        CL_CHECK(clFinish(q[k]));
    }
    cl_mem db = sample_buffer(s->context, CL_MEM_READ_ONLY, n * row_bytes, "clCreateBuffer(B)");

    double t0 = sample_now();
    cl_event b_written;
    CL_CHECK(clEnqueueWriteBuffer(q[0], db, CL_FALSE, 0, n * row_bytes, b, 0, NULL, &b_written));
    for (unsigned it = 0; it < args->iterations; it++) {
        for (size_t ch = 0; ch < chunks; ch++) {
            int k = (int)(ch % 2);
            size_t row0 = ch * rows, nrows = m - row0 < rows ? m - row0 : rows;
            CL_CHECK(clEnqueueWriteBuffer(q[k], da[k], CL_FALSE, 0, nrows * row_bytes, a + row0 * n,
                                          0, NULL, NULL));
            enqueue_matmul(q[k], s, dc[k], da[k], db, nrows, 1, &b_written);
            CL_CHECK(clEnqueueReadBuffer(q[k], dc[k], CL_FALSE, 0, nrows * row_bytes, c + row0 * n,
                                         0, NULL, NULL));
        }
    }
    CL_CHECK(clFinish(q[0]));
    CL_CHECK(clFinish(q[1]));
    double seconds = sample_now() - t0;

    clReleaseEvent(b_written);
    clReleaseMemObject(db);
    for (int k = 0; k < 2; k++) {
        clReleaseMemObject(dc[k]);
        clReleaseMemObject(da[k]);
        clReleaseCommandQueue(q[k]);
    }
    return seconds;
}

static size_t verify(const struct sample_args *args, size_t m, size_t n, const float *a,
                     const float *b, const float *c)
{
    struct sample_checker check;
    sample_checker_init(&check, args, m * n, (size_t)1 << 18, 4096);
    size_t idx, errors = 0;
    while (sample_checker_next(&check, &idx)) {
        size_t i = idx / n, j = idx % n;
        double sum = 0.0, mag = 0.0;
        for (size_t k = 0; k < n; k++) {
            double p = (double)a[i * n + k] * (double)b[k * n + j];
            sum += p;
            mag += fabs(p);
        }
        double tol = (double)(n + 2) * FLT_EPSILON * mag;
        if (!(fabs((double)c[idx] - sum) <= tol))
            sample_report_mismatch(&errors, "C[%zu][%zu] = %.9g, expected %.9g (tolerance %.3g)",
                                   i, j, c[idx], sum, tol);
    }
    return errors;
}

int main(int argc, char **argv)
{
    size_t n = 256, m = 0;
    struct sample_args args = {0};
    const struct sample_size_flag flags[] = {
        {"--size", "-n", &n, "matrix dimension (B is n x n)"},
        {"--rows", "-m", &m, "rows of A and C (M x n; 0 = n)"},
    };
    sample_parse_args(argc, argv, "C = A * B, tiled with local memory", &args, flags, 2, true);
    if (m == 0)
        m = n;
    size_t ac_bytes = m * n * sizeof(float), b_bytes = n * n * sizeof(float);
    double total = 2.0 * (double)ac_bytes + (double)b_bytes;
    if (m == n)
        printf("MatrixMul: n=%zu (%.3f GiB total)%s\n", n, total / (1u << 30),
               args.partitioned ? ", partitioned" : "");
    else
        printf("MatrixMul: n=%zu, rows=%zu (A, C %zu x %zu; B %zu x %zu; %.3f GiB total)%s\n", n, m,
               m, n, n, n, total / (1u << 30), args.partitioned ? ", partitioned" : "");
    sample_report_data(total);

    struct setup s = {.n = n, .rows = m};
    cl_platform_id platform;
    sample_select_device(&args, &platform, &s.device);

    float *a = sample_alloc(ac_bytes), *b = sample_alloc(b_bytes), *c = sample_alloc(ac_bytes);
    sample_fill_float(a, m * n, args.seed, 1, -1.0f, 1.0f);
    sample_fill_float(b, n * n, args.seed, 2, -1.0f, 1.0f);
    memset(c, 0xff, ac_bytes);

    s.context = sample_context(platform, s.device);
    cl_program program = sample_build_program(s.context, s.device, matrixmul_source, "");
    s.kernel = sample_kernel(program, "matrixMul");

    double seconds = args.partitioned ? run_partitioned(&s, &args, a, b, c)
                                      : run_whole(&s, &args, a, b, c);
    printf("gflops: %.3f\n", 2.0 * (double)m * (double)n * (double)n * args.iterations / seconds * 1e-9);

    size_t errors = verify(&args, m, n, a, b, c);
    uint64_t hash = sample_fnv1a(SAMPLE_FNV_INIT, c, ac_bytes);

    clReleaseKernel(s.kernel);
    clReleaseProgram(program);
    clReleaseContext(s.context);
    free(a);
    free(b);
    free(c);
    return sample_finish("MatrixMul", errors == 0, seconds, hash);
}
