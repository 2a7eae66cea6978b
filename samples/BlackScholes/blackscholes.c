/* BlackScholes: European call and put prices for n options (NVIDIA SDK kernel: the
 * Abramowitz-Stegun polynomial for the cumulative normal). Inputs S, X, T (3 floats per
 * option), outputs call and put (2 floats per option): 256 M options = 5 GB (paper Table 2).
 * --partitioned: the hand-chunked version (options in chunks over two queues; samples/common's
 * sample_run_chunks). Same kernel, same hash.
 *
 * Verification: against the same formula in double; |gpu - ref| <= 1e-4 * (1 + S + X) per
 * price (float log/exp/sqrt are within 4 ulp; the prices are bounded by S + X). */
#include "sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RISKFREE 0.02f
#define VOLATILITY 0.30f

static const char *kernel_source =
    "static float cnd(float d)\n"
    "{\n"
    "    const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f;\n"
    "    const float A4 = -1.821255978f, A5 = 1.330274429f;\n"
    "    const float RSQRT2PI = 0.39894228040143267793994605993438f;\n"
    "    float K = 1.0f / (1.0f + 0.2316419f * fabs(d));\n"
    "    float c = RSQRT2PI * exp(-0.5f * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));\n"
    "    return d > 0 ? 1.0f - c : c;\n"
    "}\n"
    "__kernel void BlackScholes(__global float *call, __global float *put,\n"
    "                           __global const float *S, __global const float *X,\n"
    "                           __global const float *T, float R, float V, ulong n)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i >= n)\n"
    "        return;\n"
    "    float s = S[i], x = X[i], t = T[i];\n"
    "    float sqrtT = sqrt(t);\n"
    "    float d1 = (log(s / x) + (R + 0.5f * V * V) * t) / (V * sqrtT);\n"
    "    float d2 = d1 - V * sqrtT;\n"
    "    float cndd1 = cnd(d1), cndd2 = cnd(d2);\n"
    "    float expRT = exp(-R * t);\n"
    "    call[i] = s * cndd1 - x * expRT * cndd2;\n"
    "    put[i] = x * expRT * (1.0f - cndd2) - s * (1.0f - cndd1);\n"
    "}\n";

static double cnd_ref(double d)
{
    const double A1 = 0.31938153, A2 = -0.356563782, A3 = 1.781477937, A4 = -1.821255978,
                 A5 = 1.330274429, RSQRT2PI = 0.39894228040143267793994605993438;
    double K = 1.0 / (1.0 + 0.2316419 * fabs(d));
    double c = RSQRT2PI * exp(-0.5 * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
    return d > 0 ? 1.0 - c : c;
}

static void price_ref(double s, double x, double t, double *call, double *put)
{
    double r = RISKFREE, v = VOLATILITY, sqrtT = sqrt(t);
    double d1 = (log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrtT), d2 = d1 - v * sqrtT;
    double c1 = cnd_ref(d1), c2 = cnd_ref(d2), expRT = exp(-r * t);
    *call = s * c1 - x * expRT * c2;
    *put = x * expRT * (1.0 - c2) - s * (1.0 - c1);
}

static void set_kernel_args(cl_kernel kernel, const cl_mem *out, const cl_mem *in, size_t n)
{
    float r = RISKFREE, v = VOLATILITY;
    cl_ulong n_arg = n;
    sample_set_args(kernel, 0, 8, sizeof(cl_mem), &out[0], sizeof(cl_mem), &out[1], sizeof(cl_mem), &in[0],
                    sizeof(cl_mem), &in[1], sizeof(cl_mem), &in[2], sizeof(float), &r, sizeof(float), &v,
                    sizeof(cl_ulong), &n_arg);
}

static double run_whole(cl_context context, cl_device_id device, cl_kernel kernel, unsigned iterations,
                        size_t n, float *const host_in[3], float *const host_out[2])
{
    size_t bytes = n * sizeof(float);
    cl_command_queue queue = sample_queue(context, device);
    cl_mem in[3], out[2];
    for (int k = 0; k < 3; k++)
        in[k] = sample_buffer(context, CL_MEM_READ_ONLY, bytes, "clCreateBuffer(input)");
    for (int k = 0; k < 2; k++) {
        out[k] = sample_buffer(context, CL_MEM_WRITE_ONLY, bytes, "clCreateBuffer(output)");
        const cl_uint poison = 0x7fc0dead;
        sample_poison(queue, out[k], bytes, poison);
    }
    CL_CHECK(clFinish(queue));

    double t0 = sample_now();
    for (int k = 0; k < 3; k++)
        CL_CHECK(clEnqueueWriteBuffer(queue, in[k], CL_FALSE, 0, bytes, host_in[k], 0, NULL, NULL));
    set_kernel_args(kernel, out, in, n);
    sample_launch_1d(queue, kernel, n, 128, iterations);
    CL_CHECK(clEnqueueReadBuffer(queue, out[0], CL_FALSE, 0, bytes, host_out[0], 0, NULL, NULL));
    CL_CHECK(clEnqueueReadBuffer(queue, out[1], CL_TRUE, 0, bytes, host_out[1], 0, NULL, NULL));
    double seconds = sample_now() - t0;
    for (int k = 0; k < 3; k++)
        clReleaseMemObject(in[k]);
    for (int k = 0; k < 2; k++)
        clReleaseMemObject(out[k]);
    clReleaseCommandQueue(queue);
    return seconds;
}

struct chunk_ctx {
    cl_kernel kernel;
    unsigned iterations;
};

/* chunk buffers: S, X, T, call, put */
static void enqueue_chunk(cl_command_queue q, const cl_mem *d, size_t first, size_t count, void *ctx)
{
    const struct chunk_ctx *c = ctx;
    (void)first;
    set_kernel_args(c->kernel, d + 3, d, count);
    sample_launch_1d(q, c->kernel, count, 128, c->iterations);
}

static double run_partitioned(cl_context context, cl_device_id device, cl_kernel kernel,
                              const struct sample_args *args, size_t n, float *const host_in[3],
                              float *const host_out[2])
{
    struct sample_chunk_buffer bufs[5];
    for (int k = 0; k < 5; k++) {
        bufs[k].host = k < 3 ? host_in[k] : host_out[k - 3];
        bufs[k].elem_bytes = sizeof(float);
        bufs[k].dir = k < 3 ? SAMPLE_CHUNK_IN : SAMPLE_CHUNK_OUT;
        if (k >= 3)
            memset(host_out[k - 3], 0xff, n * sizeof(float)); /* poison: a NaN */
    }
    struct chunk_ctx ctx = {kernel, args->iterations};
    size_t chunk = sample_chunk_elements(device, args, n, 5 * sizeof(float), sizeof(float), 0, 1);
    return sample_run_chunks(context, device, n, chunk, bufs, 5, enqueue_chunk, &ctx);
}

int main(int argc, char **argv)
{
    size_t n = 1 << 20;
    struct sample_args args = {0};
    sample_parse_count_partitioned(argc, argv, "Black-Scholes option pricing", &args, &n, "number of options");
    size_t bytes = n * sizeof(float);
    printf("BlackScholes: n=%zu options (%.3f GiB total)%s\n", n, 5.0 * (double)bytes / (1u << 30),
           args.partitioned ? ", partitioned" : "");
    sample_report_data(5.0 * (double)bytes);

    cl_platform_id platform;
    cl_device_id device;
    sample_select_device(&args, &platform, &device);

    float *S = sample_alloc(bytes), *X = sample_alloc(bytes), *T = sample_alloc(bytes);
    float *call = sample_alloc(bytes), *put = sample_alloc(bytes);
    sample_fill_float(S, n, args.seed, 1, 5.0f, 30.0f);
    sample_fill_float(X, n, args.seed, 2, 1.0f, 100.0f);
    sample_fill_float(T, n, args.seed, 3, 0.25f, 10.0f);

    cl_context context = sample_context(platform, device);
    cl_program program = sample_build_program(context, device, kernel_source, "");
    cl_kernel kernel = sample_kernel(program, "BlackScholes");
    float *const host_in[3] = {S, X, T}, *const host_out[2] = {call, put};
    double seconds = args.partitioned ? run_partitioned(context, device, kernel, &args, n, host_in, host_out)
                                      : run_whole(context, device, kernel, args.iterations, n, host_in, host_out);

    struct sample_checker check;
    sample_checker_init(&check, &args, n, (size_t)1 << 26, 1 << 20);
    size_t i, errors = 0;
    double max_err = 0.0;
    while (sample_checker_next(&check, &i)) {
        double c, p;
        price_ref(S[i], X[i], T[i], &c, &p);
        double tol = 1e-4 * (1.0 + S[i] + X[i]);
        double e = fmax(fabs(call[i] - c), fabs(put[i] - p));
        if (e > max_err)
            max_err = e;
        if (!(e <= tol))
            sample_report_mismatch(&errors, "option %zu: call %.7g put %.7g, expected %.7g %.7g", i,
                                   call[i], put[i], c, p);
    }
    printf("max abs error: %.3g\n", max_err);
    uint64_t hash = sample_fnv1a(SAMPLE_FNV_INIT, call, bytes);
    hash = sample_fnv1a(hash, put, bytes);

    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseContext(context);
    free(S);
    free(X);
    free(T);
    free(call);
    free(put);
    return sample_finish("BlackScholes", errors == 0, seconds, hash);
}
