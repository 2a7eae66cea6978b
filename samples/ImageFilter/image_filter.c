/* MedianFilter and SobelFilter: 3 x 3 filters over an RGBA8 image (one uint per pixel, the
 * NVIDIA SDK's ckMedian and ckSobel layout), edges clamped. Built twice from this file:
 * -DFILTER_MEDIAN (per-channel median of the 9 neighbours) and -DFILTER_SOBEL (per-channel
 * min(255, (|Gx| + |Gy|) / 2) with the Sobel operators). Paper size: 30720 x 17820 pixels,
 * 2 GB in and 2 GB out.
 *
 * Verification: integer arithmetic only, so bit-identical to the CPU reference. */
#include "sample.h"

#include <stdio.h>
#include <stdlib.h>

#define KERNEL_PROLOGUE                                                                        \
    "static uint chan(uint p, int c) { return (p >> (8 * c)) & 0xffu; }\n"                    \
    "__kernel void FILTER_NAME(__global const uint *in, __global uint *out, uint w, uint h)\n" \
    "{\n"                                                                                      \
    "    size_t x = get_global_id(0), y = get_global_id(1);\n"                                 \
    "    if (x >= w || y >= h)\n"                                                              \
    "        return;\n"                                                                        \
    "    uint px[9];\n"                                                                        \
    "    for (int dy = -1; dy <= 1; dy++)\n"                                                   \
    "        for (int dx = -1; dx <= 1; dx++) {\n"                                             \
    "            long xx = clamp((long)x + dx, 0L, (long)w - 1);\n"                            \
    "            long yy = clamp((long)y + dy, 0L, (long)h - 1);\n"                            \
    "            px[(dy + 1) * 3 + dx + 1] = in[(size_t)yy * w + (size_t)xx];\n"              \
    "        }\n"                                                                              \
    "    uint result = 0;\n"                                                                   \
    "    for (int c = 0; c < 4; c++) {\n"

#ifdef FILTER_MEDIAN
#define NAME "MedianFilter"
#define KERNEL_NAME "ckMedian"
static const char *kernel_source =
    "#define FILTER_NAME ckMedian\n" KERNEL_PROLOGUE
    "        uint v[9];\n"
    "        for (int i = 0; i < 9; i++)\n"
    "            v[i] = chan(px[i], c);\n"
    "        for (int i = 0; i <= 4; i++) {\n"
    "            int m = i;\n"
    "            for (int j = i + 1; j < 9; j++)\n"
    "                if (v[j] < v[m])\n"
    "                    m = j;\n"
    "            uint t = v[i]; v[i] = v[m]; v[m] = t;\n"
    "        }\n"
    "        result |= v[4] << (8 * c);\n"
    "    }\n"
    "    out[y * w + x] = result;\n"
    "}\n";

static int cmp_uint(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

static unsigned filter_channel(const unsigned v[9])
{
    unsigned s[9];
    for (int i = 0; i < 9; i++)
        s[i] = v[i];
    qsort(s, 9, sizeof s[0], cmp_uint);
    return s[4];
}
#elif defined(FILTER_SOBEL)
#define NAME "SobelFilter"
#define KERNEL_NAME "ckSobel"
static const char *kernel_source =
    "#define FILTER_NAME ckSobel\n" KERNEL_PROLOGUE
    "        int p[9];\n"
    "        for (int i = 0; i < 9; i++)\n"
    "            p[i] = (int)chan(px[i], c);\n"
    "        int gx = (p[2] + 2 * p[5] + p[8]) - (p[0] + 2 * p[3] + p[6]);\n"
    "        int gy = (p[6] + 2 * p[7] + p[8]) - (p[0] + 2 * p[1] + p[2]);\n"
    "        uint mag = (uint)(abs(gx) + abs(gy)) / 2;\n"
    "        result |= min(mag, 255u) << (8 * c);\n"
    "    }\n"
    "    out[y * w + x] = result;\n"
    "}\n";

static unsigned filter_channel(const unsigned v[9])
{
    int p[9];
    for (int i = 0; i < 9; i++)
        p[i] = (int)v[i];
    int gx = (p[2] + 2 * p[5] + p[8]) - (p[0] + 2 * p[3] + p[6]);
    int gy = (p[6] + 2 * p[7] + p[8]) - (p[0] + 2 * p[1] + p[2]);
    unsigned mag = (unsigned)(abs(gx) + abs(gy)) / 2;
    return mag < 255 ? mag : 255;
}
#else
#error "define FILTER_MEDIAN or FILTER_SOBEL"
#endif

static cl_uint filter_pixel(const cl_uint *in, size_t w, size_t h, size_t x, size_t y)
{
    cl_uint px[9];
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            long xx = (long)x + dx, yy = (long)y + dy;
            xx = xx < 0 ? 0 : xx >= (long)w ? (long)w - 1 : xx;
            yy = yy < 0 ? 0 : yy >= (long)h ? (long)h - 1 : yy;
            px[(dy + 1) * 3 + dx + 1] = in[(size_t)yy * w + (size_t)xx];
        }
    cl_uint result = 0;
    for (int c = 0; c < 4; c++) {
        unsigned v[9];
        for (int i = 0; i < 9; i++)
            v[i] = (px[i] >> (8 * c)) & 0xffu;
        result |= (cl_uint)filter_channel(v) << (8 * c);
    }
    return result;
}

int main(int argc, char **argv)
{
    size_t w = 1024, h = 768;
    struct sample_args args = {0};
    const struct sample_size_flag flags[] = {
        {"--width", "-x", &w, "image width in pixels"},
        {"--height", "-y", &h, "image height in pixels"},
    };
    sample_parse_args(argc, argv, NAME ": 3x3 filter over an RGBA8 image", &args, flags, 2, false);
    if (w > UINT32_MAX || h > UINT32_MAX) {
        fprintf(stderr, "error: width and height must fit 32 bits\n");
        return 2;
    }
    size_t pixels = w * h, bytes = pixels * sizeof(cl_uint);
    printf(NAME ": %zu x %zu (%.3f GiB total)\n", w, h, 2.0 * (double)bytes / (1u << 30));
    sample_report_data(2.0 * (double)bytes);

    cl_platform_id platform;
    cl_device_id device;
    sample_select_device(&args, &platform, &device);

    cl_uint *in = sample_alloc(bytes), *out = sample_alloc(bytes);
    struct sample_rng rng;
    sample_rng_init(&rng, args.seed, 1);
    for (size_t i = 0; i < pixels; i++)
        in[i] = sample_rng_u32(&rng);

    cl_int err;
    cl_context context = sample_context(platform, device);
    cl_command_queue queue = sample_queue(context, device);
    cl_mem din = sample_buffer(context, CL_MEM_READ_ONLY, bytes, "clCreateBuffer(in)");
    cl_mem dout = sample_buffer(context, CL_MEM_WRITE_ONLY, bytes, "clCreateBuffer(out)");
    const cl_uint poison = 0xdeadbeef;
    sample_poison(queue, dout, bytes, poison);
    CL_CHECK(clFinish(queue));
    cl_program program = sample_build_program(context, device, kernel_source, "");
    cl_kernel kernel = clCreateKernel(program, KERNEL_NAME, &err);
    CL_CHECK_ERR(err, "clCreateKernel(" KERNEL_NAME ")");

    double t0 = sample_now();
    CL_CHECK(clEnqueueWriteBuffer(queue, din, CL_FALSE, 0, bytes, in, 0, NULL, NULL));
    cl_uint w_arg = (cl_uint)w, h_arg = (cl_uint)h;
    CL_CHECK(clSetKernelArg(kernel, 0, sizeof(cl_mem), &din));
    CL_CHECK(clSetKernelArg(kernel, 1, sizeof(cl_mem), &dout));
    CL_CHECK(clSetKernelArg(kernel, 2, sizeof(cl_uint), &w_arg));
    CL_CHECK(clSetKernelArg(kernel, 3, sizeof(cl_uint), &h_arg));
    size_t local[2] = {16, 16}, global[2] = {sample_round_up(w, 16), sample_round_up(h, 16)};
    for (unsigned it = 0; it < args.iterations; it++)
        CL_CHECK(clEnqueueNDRangeKernel(queue, kernel, 2, NULL, global, local, 0, NULL, NULL));
    CL_CHECK(clEnqueueReadBuffer(queue, dout, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
    double seconds = sample_now() - t0;

    struct sample_checker check;
    sample_checker_init(&check, &args, pixels, (size_t)1 << 24, 1 << 20);
    size_t i, errors = 0;
    while (sample_checker_next(&check, &i)) {
        cl_uint want = filter_pixel(in, w, h, i % w, i / w);
        if (out[i] != want)
            sample_report_mismatch(&errors, "pixel (%zu, %zu) = %08x, expected %08x", i % w, i / w,
                                   out[i], want);
    }
    uint64_t hash = sample_fnv1a(SAMPLE_FNV_INIT, out, bytes);

    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseMemObject(dout);
    clReleaseMemObject(din);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(in);
    free(out);
    return sample_finish(NAME, errors == 0, seconds, hash);
}
