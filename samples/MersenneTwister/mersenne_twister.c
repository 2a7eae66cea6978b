/* MersenneTwister + BoxMuller (NVIDIA SDK oclMersenneTwister): 4096 Mersenne Twister
 * generators (the SDK's 19-word state, MT_MM 9, its tempering shifts; per-generator matrix_a
 * drawn from the seed instead of dcmt, so the period is not guaranteed) each produce nPerRng
 * uniform floats in (0, 1]; then BoxMuller turns pairs into normal floats, out of place.
 * Layout: generator g of work-group b writes block b, interleaved within the block
 * (out[b * 64 * nPerRng + i * 64 + lane]), so writes coalesce and each work-group's output is
 * one contiguous range. BoxMuller pairs element j with j + 32768 (128 KB apart, as in the
 * paper) within blocks of 65536. n is rounded up to a multiple of 65536.
 * Paper size: 1.15 G numbers (4.3 GB uniform, 4.3 GB normal).
 *
 * --partitioned: the hand-chunked version by output ranges. A chunk is a run of whole
 * work-groups (64 generators each, whose output blocks are contiguous) whose numbers are also
 * a multiple of BoxMuller's 65536-number blocks; per chunk its generators' parameters go in,
 * both kernels run on the chunk's own buffers, uniforms and normals come back. Two queues,
 * double-buffered. Same kernels, same hash.
 *
 * Verification: the uniforms bit-identical (integer recurrence, exact conversions) for every
 * checked generator; the normals within 1e-4 absolute of a double-precision Box-Muller of the
 * device's uniforms (|value| <= 6.7; float log/sqrt/sin/cos are within 4 ulp). */
#include "sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RNG_COUNT 4096
#define LANES 64
#define PAIR_DIST 32768
#define MT_NN 19
#define MT_MM 9

static const char *kernel_source =
    "#define LANES 64\n"
    "#define MT_NN 19\n"
    "#define MT_MM 9\n"
    "#define PAIR_DIST 32768\n"
    "typedef struct { uint matrix_a, mask_b, mask_c, seed; } mt_params;\n"
    "__kernel __attribute__((reqd_work_group_size(LANES, 1, 1)))\n"
    "void MersenneTwister(__global float *rnd, __global const mt_params *params, ulong nPerRng)\n"
    "{\n"
    "    size_t g = get_global_id(0), lane = get_local_id(0);\n"
    "    __global float *block = rnd + get_group_id(0) * LANES * nPerRng;\n"
    "    mt_params p = params[g];\n"
    "    uint mt[MT_NN];\n"
    "    mt[0] = p.seed;\n"
    "    for (int s = 1; s < MT_NN; s++)\n"
    "        mt[s] = 1812433253u * (mt[s - 1] ^ (mt[s - 1] >> 30)) + (uint)s;\n"
    "    int st = 0;\n"
    "    uint mti1 = mt[0];\n"
    "    for (size_t i = 0; i < nPerRng; i++) {\n"
    "        int st1 = st + 1 >= MT_NN ? st + 1 - MT_NN : st + 1;\n"
    "        int stM = st + MT_MM >= MT_NN ? st + MT_MM - MT_NN : st + MT_MM;\n"
    "        uint mti = mti1;\n"
    "        mti1 = mt[st1];\n"
    "        uint x = (mti & 0xfffffffeu) | (mti1 & 1u);\n"
    "        x = mt[stM] ^ (x >> 1) ^ ((x & 1u) ? p.matrix_a : 0u);\n"
    "        mt[st] = x;\n"
    "        st = st1;\n"
    "        x ^= x >> 12;\n"
    "        x ^= (x << 7) & p.mask_b;\n"
    "        x ^= (x << 15) & p.mask_c;\n"
    "        x ^= x >> 18;\n"
    "        block[i * LANES + lane] = ((float)x + 1.0f) / 4294967296.0f;\n"
    "    }\n"
    "}\n"
    "__kernel void BoxMuller(__global float *out, __global const float *in, ulong pairs)\n"
    "{\n"
    "    size_t k = get_global_id(0);\n"
    "    if (k >= pairs)\n"
    "        return;\n"
    "    size_t a = k / PAIR_DIST * (2 * PAIR_DIST) + k % PAIR_DIST, b = a + PAIR_DIST;\n"
    "    float r = sqrt(-2.0f * log(in[a]));\n"
    "    float phi = 2.0f * M_PI_F * in[b];\n"
    "    out[a] = r * cos(phi);\n"
    "    out[b] = r * sin(phi);\n"
    "}\n";

typedef struct {
    cl_uint matrix_a, mask_b, mask_c, seed;
} mt_params;

static void generate_ref(const mt_params *p, size_t count, float *out)
{
    cl_uint mt[MT_NN];
    mt[0] = p->seed;
    for (int s = 1; s < MT_NN; s++)
        mt[s] = 1812433253u * (mt[s - 1] ^ (mt[s - 1] >> 30)) + (cl_uint)s;
    int st = 0;
    cl_uint mti1 = mt[0];
    for (size_t i = 0; i < count; i++) {
        int st1 = st + 1 >= MT_NN ? st + 1 - MT_NN : st + 1;
        int stM = st + MT_MM >= MT_NN ? st + MT_MM - MT_NN : st + MT_MM;
        cl_uint mti = mti1;
        mti1 = mt[st1];
        cl_uint x = (mti & 0xfffffffeu) | (mti1 & 1u);
        x = mt[stM] ^ (x >> 1) ^ ((x & 1u) ? p->matrix_a : 0u);
        mt[st] = x;
        st = st1;
        x ^= x >> 12;
        x ^= (x << 7) & p->mask_b;
        x ^= (x << 15) & p->mask_c;
        x ^= x >> 18;
        out[i] = ((float)x + 1.0f) / 4294967296.0f;
    }
}

static size_t uniform_index(size_t g, size_t i, size_t per)
{
    return g / LANES * LANES * per + i * LANES + g % LANES;
}

struct mt_run {
    cl_kernel mt, bm;
    const mt_params *params;
    size_t n, per;
    unsigned iterations;
};

/* Both kernels over `count` numbers (count / (LANES * per) work-groups) in uni and norm, with
 * the generators' parameters in dparams. */
static void enqueue_mt(cl_command_queue q, const struct mt_run *r, cl_mem dparams, cl_mem duni, cl_mem dnorm,
                       size_t count)
{
    cl_ulong per_arg = r->per, pairs = count / 2;
    size_t mt_local = LANES, mt_global = count / r->per, bm_local = 256, bm_global = count / 2;
    for (unsigned it = 0; it < r->iterations; it++) {
        sample_set_args(r->mt, 0, 3, sizeof(cl_mem), &duni, sizeof(cl_mem), &dparams, sizeof(cl_ulong), &per_arg);
        sample_set_args(r->bm, 0, 3, sizeof(cl_mem), &dnorm, sizeof(cl_mem), &duni, sizeof(cl_ulong), &pairs);
        CL_CHECK(clEnqueueNDRangeKernel(q, r->mt, 1, NULL, &mt_global, &mt_local, 0, NULL, NULL));
        CL_CHECK(clEnqueueNDRangeKernel(q, r->bm, 1, NULL, &bm_global, &bm_local, 0, NULL, NULL));
    }
}

static double run_whole(cl_context context, cl_device_id device, const struct mt_run *r, float *uni, float *norm)
{
    size_t bytes = r->n * sizeof(float);
    cl_command_queue queue = sample_queue(context, device);
    cl_mem dparams = sample_buffer(context, CL_MEM_READ_ONLY, RNG_COUNT * sizeof(mt_params), "clCreateBuffer(params)");
    cl_mem duni = sample_buffer(context, CL_MEM_READ_WRITE, bytes, "clCreateBuffer(uniform)");
    cl_mem dnorm = sample_buffer(context, CL_MEM_WRITE_ONLY, bytes, "clCreateBuffer(normal)");
    const cl_uint poison = 0x7fc0dead;
    sample_poison(queue, duni, bytes, poison);
    sample_poison(queue, dnorm, bytes, poison);
    CL_CHECK(clFinish(queue));

    double t0 = sample_now();
    CL_CHECK(clEnqueueWriteBuffer(queue, dparams, CL_FALSE, 0, RNG_COUNT * sizeof(mt_params), r->params,
                                  0, NULL, NULL));
    enqueue_mt(queue, r, dparams, duni, dnorm, r->n);
    CL_CHECK(clEnqueueReadBuffer(queue, duni, CL_FALSE, 0, bytes, uni, 0, NULL, NULL));
    CL_CHECK(clEnqueueReadBuffer(queue, dnorm, CL_TRUE, 0, bytes, norm, 0, NULL, NULL));
    double seconds = sample_now() - t0;
    clReleaseMemObject(dnorm);
    clReleaseMemObject(duni);
    clReleaseMemObject(dparams);
    clReleaseCommandQueue(queue);
    return seconds;
}

static size_t gcd(size_t a, size_t b)
{
    while (b) {
        size_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static double run_partitioned(cl_context context, cl_device_id device, const struct sample_args *args,
                              const struct mt_run *r, float *uni, float *norm)
{
    /* The smallest chunk: whole work-groups whose numbers fill whole BoxMuller blocks. */
    size_t group = LANES * r->per, unit = group / gcd(group, 2 * PAIR_DIST) * (2 * PAIR_DIST);
    size_t chunk = sample_chunk_elements(device, args, r->n, 2 * sizeof(float), sizeof(float), 0, unit);
    size_t chunks = (r->n + chunk - 1) / chunk;
    printf("partitioned: %zu chunks of %zu numbers, 2 queues\n", chunks, chunk);
    memset(uni, 0xff, r->n * sizeof(float)); /* poison (a NaN): chunks never read back cannot pass */
    memset(norm, 0xff, r->n * sizeof(float));
    cl_command_queue q[2];
    cl_mem dparams[2], duni[2], dnorm[2];
    for (int k = 0; k < 2; k++) {
        q[k] = sample_queue(context, device);
        dparams[k] = sample_buffer(context, CL_MEM_READ_ONLY, chunk / r->per * sizeof(mt_params),
                                   "clCreateBuffer(params chunk)");
        duni[k] = sample_buffer(context, CL_MEM_READ_WRITE, chunk * sizeof(float), "clCreateBuffer(uniform chunk)");
        dnorm[k] = sample_buffer(context, CL_MEM_WRITE_ONLY, chunk * sizeof(float), "clCreateBuffer(normal chunk)");
    }
    double t0 = sample_now();
    for (size_t ch = 0; ch < chunks; ch++) {
        int k = (int)(ch % 2);
        size_t first = ch * chunk, count = r->n - first < chunk ? r->n - first : chunk;
        CL_CHECK(clEnqueueWriteBuffer(q[k], dparams[k], CL_FALSE, 0, count / r->per * sizeof(mt_params),
                                      r->params + first / r->per, 0, NULL, NULL));
        enqueue_mt(q[k], r, dparams[k], duni[k], dnorm[k], count);
        CL_CHECK(clEnqueueReadBuffer(q[k], duni[k], CL_FALSE, 0, count * sizeof(float), uni + first, 0, NULL, NULL));
        CL_CHECK(clEnqueueReadBuffer(q[k], dnorm[k], CL_FALSE, 0, count * sizeof(float), norm + first, 0, NULL, NULL));
    }
    CL_CHECK(clFinish(q[0]));
    CL_CHECK(clFinish(q[1]));
    double seconds = sample_now() - t0;
    for (int k = 0; k < 2; k++) {
        clReleaseMemObject(dnorm[k]);
        clReleaseMemObject(duni[k]);
        clReleaseMemObject(dparams[k]);
        clReleaseCommandQueue(q[k]);
    }
    return seconds;
}

int main(int argc, char **argv)
{
    size_t n = 1 << 22;
    struct sample_args args = {0};
    const struct sample_size_flag flags[] = {
        {"--size", "-n", &n, "count of random numbers (rounded up to a multiple of 65536)"},
    };
    sample_parse_args(argc, argv, "Mersenne Twister uniforms, then Box-Muller normals", &args,
                      flags, 1, true);
    n = sample_round_up(n, 2 * PAIR_DIST);
    size_t per = n / RNG_COUNT, bytes = n * sizeof(float);
    printf("MersenneTwister: n=%zu numbers, %d generators x %zu (%.3f GiB total)%s\n", n, RNG_COUNT,
           per, 2.0 * (double)bytes / (1u << 30), args.partitioned ? ", partitioned" : "");
    sample_report_data(2.0 * (double)bytes);

    cl_platform_id platform;
    cl_device_id device;
    sample_select_device(&args, &platform, &device);

    mt_params *params = sample_alloc(RNG_COUNT * sizeof(mt_params));
    struct sample_rng rng;
    sample_rng_init(&rng, args.seed, 1);
    for (size_t g = 0; g < RNG_COUNT; g++) {
        params[g].matrix_a = sample_rng_u32(&rng) | 0x80000000u;
        params[g].mask_b = 0x9d2c5680u;
        params[g].mask_c = 0xefc60000u;
        params[g].seed = sample_rng_u32(&rng);
    }
    float *uni = sample_alloc(bytes), *norm = sample_alloc(bytes);

    cl_context context = sample_context(platform, device);
    cl_program program = sample_build_program(context, device, kernel_source, "");
    cl_kernel mt = sample_kernel(program, "MersenneTwister");
    cl_kernel bm = sample_kernel(program, "BoxMuller");
    const struct mt_run run = {mt, bm, params, n, per, args.iterations};
    double seconds = args.partitioned ? run_partitioned(context, device, &args, &run, uni, norm)
                                      : run_whole(context, device, &run, uni, norm);
    printf("throughput: %.3f Gnumbers/s\n", (double)n * args.iterations / seconds * 1e-9);

    /* Uniforms: whole generators (all of them when small). */
    struct sample_checker check;
    sample_checker_init(&check, &args, RNG_COUNT, n <= ((size_t)1 << 28) ? RNG_COUNT : 0, 64);
    float *seq = sample_alloc(per * sizeof(float));
    size_t g, errors = 0;
    while (sample_checker_next(&check, &g)) {
        generate_ref(&params[g], per, seq);
        for (size_t i = 0; i < per; i++) {
            float got = uni[uniform_index(g, i, per)];
            if (memcmp(&got, &seq[i], sizeof got)) {
                sample_report_mismatch(&errors, "generator %zu number %zu = %.9g, expected %.9g", g,
                                       i, got, seq[i]);
                break;
            }
        }
    }
    free(seq);
    /* Normals: pairs. */
    sample_checker_init(&check, &args, n / 2, (size_t)1 << 26, 1 << 20);
    size_t k;
    while (sample_checker_next(&check, &k)) {
        size_t a = k / PAIR_DIST * (2 * PAIR_DIST) + k % PAIR_DIST, b = a + PAIR_DIST;
        double r = sqrt(-2.0 * log((double)uni[a])), phi = 2.0 * M_PI * (double)uni[b];
        double wa = r * cos(phi), wb = r * sin(phi);
        if (!(fabs(norm[a] - wa) <= 1e-4) || !(fabs(norm[b] - wb) <= 1e-4))
            sample_report_mismatch(&errors, "pair %zu = (%.7g, %.7g), expected (%.7g, %.7g)", k,
                                   norm[a], norm[b], wa, wb);
    }
    uint64_t hash = sample_fnv1a(SAMPLE_FNV_INIT, uni, bytes);
    hash = sample_fnv1a(hash, norm, bytes);

    clReleaseKernel(bm);
    clReleaseKernel(mt);
    clReleaseProgram(program);
    clReleaseContext(context);
    free(params);
    free(uni);
    free(norm);
    return sample_finish("MersenneTwister", errors == 0, seconds, hash);
}
