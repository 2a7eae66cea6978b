/* Reduction: sum of n unsigned 32-bit integers with the NVIDIA SDK's reduce6 (each work-item
 * first adds two elements per grid stride, then a tree in local memory). The kernel writes one
 * partial sum per work-group (16384 groups = 64 KB, paper Table 2); the host adds the partials.
 *
 * Verification: every partial sum bit-identical (unsigned addition wraps and is associative,
 * so any order gives the same bits), and the total. */
#include "sample.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

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

int main(int argc, char **argv)
{
    size_t n = 1 << 22;
    struct sample_args args = {0};
    sample_parse_count(argc, argv, "sum of unsigned integers (reduce6)", &args, &n, "number of 32-bit integers");
    size_t bytes = n * sizeof(cl_uint);
    size_t groups = (n + 2 * BLOCK - 1) / (2 * BLOCK);
    if (groups > MAX_GROUPS)
        groups = MAX_GROUPS;
    printf("Reduction: n=%zu (%.3f GiB), %zu work-groups\n", n, (double)bytes / (1u << 30), groups);
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
    cl_command_queue queue = sample_queue(context, device);
    cl_mem din = sample_buffer(context, CL_MEM_READ_ONLY, bytes, "clCreateBuffer(in)");
    cl_mem dpart = sample_buffer(context, CL_MEM_WRITE_ONLY, groups * sizeof(cl_uint), "clCreateBuffer(partial)");
    const cl_uint poison = 0xdeadbeef;
    CL_CHECK(clEnqueueFillBuffer(queue, dpart, &poison, sizeof poison, 0, groups * sizeof(cl_uint),
                                 0, NULL, NULL));
    CL_CHECK(clFinish(queue));
    cl_program program = sample_build_program(context, device, kernel_source, "");
    cl_kernel kernel = sample_kernel(program, "reduce6");

    double t0 = sample_now();
    CL_CHECK(clEnqueueWriteBuffer(queue, din, CL_FALSE, 0, bytes, in, 0, NULL, NULL));
    cl_ulong n_arg = n;
    sample_set_args(kernel, 0, 3, sizeof(cl_mem), &din, sizeof(cl_mem), &dpart, sizeof(cl_ulong), &n_arg);
    sample_launch_1d(queue, kernel, groups * BLOCK, BLOCK, args.iterations);
    CL_CHECK(clEnqueueReadBuffer(queue, dpart, CL_TRUE, 0, groups * sizeof(cl_uint), partial, 0,
                                 NULL, NULL));
    cl_uint total = 0;
    for (size_t g = 0; g < groups; g++)
        total += partial[g];
    double seconds = sample_now() - t0;
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
    clReleaseMemObject(dpart);
    clReleaseMemObject(din);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(want);
    free(in);
    free(partial);
    return sample_finish("Reduction", errors == 0, seconds, hash);
}
