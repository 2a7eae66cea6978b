/* Reduction: sum of n unsigned 32-bit integers with the NVIDIA SDK's reduce6 (each work-item
 * first adds two elements per grid stride, then a tree in local memory). The kernel writes one
 * partial sum per work-group (16384 groups = 64 KB, paper Table 2); the host adds the partials.
 *
 * --partitioned: the hand-chunked version by input ranges. Element i belongs to work-group
 * (i mod grid) / (2 * BLOCK), grid = 2 * BLOCK * groups, so chunks of a multiple of grid
 * elements, each reduced by the same kernel over the same groups, give per-group partial sums
 * the host adds up per group: the same partials, the same hash. Two queues, double-buffered.
 *
 * Verification: every partial sum bit-identical (unsigned addition wraps and is associative,
 * so any order gives the same bits), and the total. */
#include "sample.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 256
#define MAX_GROUPS 16384

static const char *kernel_source =
    "#define BLOCK 256\n"
    "__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))\n"
    "void reduce6(__global const uint *in, __global uint *partial, ulong n)\n"
    "{\n"
    "    __local uint sdata[BLOCK];\n"
    "    size_t tid = get_local_id(0);\n"
    "    size_t i = get_group_id(0) * (BLOCK * 2) + tid;\n"
    "    size_t grid = (size_t)BLOCK * 2 * get_num_groups(0);\n"
    "    uint sum = 0;\n"
    "    while (i < n) {\n"
    "        sum += in[i];\n"
    "        if (i + BLOCK < n)\n"
    "            sum += in[i + BLOCK];\n"
    "        i += grid;\n"
    "    }\n"
    "    sdata[tid] = sum;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint s = BLOCK / 2; s > 0; s >>= 1) {\n"
    "        if (tid < s)\n"
    "            sdata[tid] = sum = sum + sdata[tid + s];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    if (tid == 0)\n"
    "        partial[get_group_id(0)] = sum;\n"
    "}\n";

static double run_whole(cl_context context, cl_device_id device, cl_kernel kernel, unsigned iterations,
                        size_t n, size_t groups, const cl_uint *in, cl_uint *partial)
{
    size_t bytes = n * sizeof(cl_uint);
    cl_command_queue queue = sample_queue(context, device);
    cl_mem din = sample_buffer(context, CL_MEM_READ_ONLY, bytes, "clCreateBuffer(in)");
    cl_mem dpart = sample_buffer(context, CL_MEM_WRITE_ONLY, groups * sizeof(cl_uint), "clCreateBuffer(partial)");
    const cl_uint poison = 0xdeadbeef;
    CL_CHECK(clEnqueueFillBuffer(queue, dpart, &poison, sizeof poison, 0, groups * sizeof(cl_uint),
                                 0, NULL, NULL));
    CL_CHECK(clFinish(queue));

    double t0 = sample_now();
    CL_CHECK(clEnqueueWriteBuffer(queue, din, CL_FALSE, 0, bytes, in, 0, NULL, NULL));
    cl_ulong n_arg = n;
    sample_set_args(kernel, 0, 3, sizeof(cl_mem), &din, sizeof(cl_mem), &dpart, sizeof(cl_ulong), &n_arg);
    sample_launch_1d(queue, kernel, groups * BLOCK, BLOCK, iterations);
    CL_CHECK(clEnqueueReadBuffer(queue, dpart, CL_TRUE, 0, groups * sizeof(cl_uint), partial, 0,
                                 NULL, NULL));
    double seconds = sample_now() - t0;
    clReleaseMemObject(dpart);
    clReleaseMemObject(din);
    clReleaseCommandQueue(queue);
    return seconds;
}

/* The partials of each chunk land in their own row of a chunks x groups array, added up per
 * group once every read is done (inside the timed region, as the plain version's sum). */
static double run_partitioned(cl_context context, cl_device_id device, cl_kernel kernel,
                              const struct sample_args *args, size_t n, size_t groups, const cl_uint *in,
                              cl_uint *partial)
{
    size_t grid = 2 * BLOCK * groups;
    size_t chunk = sample_chunk_elements(device, args, n, sizeof(cl_uint), sizeof(cl_uint),
                                         2 * groups * sizeof(cl_uint), grid);
    size_t chunks = (n + chunk - 1) / chunk, pbytes = groups * sizeof(cl_uint);
    printf("partitioned: %zu chunks of %zu elements, 2 queues\n", chunks, chunk);
    cl_uint *rows = sample_alloc(chunks * pbytes);
    memset(rows, 0xef, chunks * pbytes); /* poison: a chunk never read back cannot pass */
    cl_command_queue q[2];
    cl_mem din[2], dpart[2];
    for (int k = 0; k < 2; k++) {
        q[k] = sample_queue(context, device);
        din[k] = sample_buffer(context, CL_MEM_READ_ONLY, chunk * sizeof(cl_uint), "clCreateBuffer(in chunk)");
        dpart[k] = sample_buffer(context, CL_MEM_WRITE_ONLY, pbytes, "clCreateBuffer(partial chunk)");
    }
    double t0 = sample_now();
    for (size_t ch = 0; ch < chunks; ch++) {
        int k = (int)(ch % 2);
        size_t first = ch * chunk, count = n - first < chunk ? n - first : chunk;
        CL_CHECK(clEnqueueWriteBuffer(q[k], din[k], CL_FALSE, 0, count * sizeof(cl_uint), in + first, 0, NULL, NULL));
        cl_ulong n_arg = count;
        sample_set_args(kernel, 0, 3, sizeof(cl_mem), &din[k], sizeof(cl_mem), &dpart[k], sizeof(cl_ulong), &n_arg);
        sample_launch_1d(q[k], kernel, groups * BLOCK, BLOCK, args->iterations);
        CL_CHECK(clEnqueueReadBuffer(q[k], dpart[k], CL_FALSE, 0, pbytes, rows + ch * groups, 0, NULL, NULL));
    }
    CL_CHECK(clFinish(q[0]));
    CL_CHECK(clFinish(q[1]));
    for (size_t g = 0; g < groups; g++) {
        cl_uint sum = 0;
        for (size_t ch = 0; ch < chunks; ch++)
            sum += rows[ch * groups + g];
        partial[g] = sum;
    }
    double seconds = sample_now() - t0;
    for (int k = 0; k < 2; k++) {
        clReleaseMemObject(dpart[k]);
        clReleaseMemObject(din[k]);
        clReleaseCommandQueue(q[k]);
    }
    free(rows);
    return seconds;
}

int main(int argc, char **argv)
{
    size_t n = 1 << 22;
    struct sample_args args = {0};
    sample_parse_count_partitioned(argc, argv, "sum of unsigned integers (reduce6)", &args, &n,
                                   "number of 32-bit integers");
    size_t bytes = n * sizeof(cl_uint);
    size_t groups = (n + 2 * BLOCK - 1) / (2 * BLOCK);
    if (groups > MAX_GROUPS)
        groups = MAX_GROUPS;
    printf("Reduction: n=%zu (%.3f GiB), %zu work-groups%s\n", n, (double)bytes / (1u << 30), groups,
           args.partitioned ? ", partitioned" : "");
    sample_report_data((double)bytes);

    cl_platform_id platform;
    cl_device_id device;
    sample_select_device(&args, &platform, &device);

    cl_uint *in = sample_alloc(bytes), *partial = sample_alloc(groups * sizeof(cl_uint));
    struct sample_rng rng;
    sample_rng_init(&rng, args.seed, 1);
    for (size_t i = 0; i < n; i++)
        in[i] = sample_rng_u32(&rng);

    cl_context context = sample_context(platform, device);
    cl_program program = sample_build_program(context, device, kernel_source, "");
    cl_kernel kernel = sample_kernel(program, "reduce6");
    double seconds = args.partitioned ? run_partitioned(context, device, kernel, &args, n, groups, in, partial)
                                      : run_whole(context, device, kernel, args.iterations, n, groups, in, partial);
    double t0 = sample_now();
    cl_uint total = 0;
    for (size_t g = 0; g < groups; g++)
        total += partial[g];
    seconds += sample_now() - t0;
    printf("sum: %" PRIu32 "\n", (uint32_t)total);

    /* Element i belongs to group (i mod grid) / (2 * BLOCK). One pass suffices for every
     * group, so the check is always full: it costs no more than generating the input. */
    size_t grid = 2 * BLOCK * groups, errors = 0;
    cl_uint *want = calloc(groups, sizeof(cl_uint));
    if (!want)
        CL_CHECK_ERR(CL_OUT_OF_HOST_MEMORY, "calloc(reference)");
    cl_uint want_total = 0;
    for (size_t i = 0; i < n; i++) {
        want[(i % grid) / (2 * BLOCK)] += in[i];
        want_total += in[i];
    }
    printf("check: full (%zu of %zu outputs)\n", groups, groups);
    for (size_t g = 0; g < groups; g++)
        if (partial[g] != want[g])
            sample_report_mismatch(&errors, "partial[%zu] = %u, expected %u", g, partial[g], want[g]);
    if (total != want_total)
        sample_report_mismatch(&errors, "sum %u, expected %u", total, want_total);
    uint64_t hash = sample_fnv1a(SAMPLE_FNV_INIT, partial, groups * sizeof(cl_uint));

    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseContext(context);
    free(want);
    free(in);
    free(partial);
    return sample_finish("Reduction", errors == 0, seconds, hash);
}
