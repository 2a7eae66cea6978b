/* FDTD3d: a 3-D finite-difference stencil of radius 2 over a dimx x dimy x dimz float
 * volume (NVIDIA SDK FiniteDifferences), --iterations time steps ping-ponging two buffers.
 * out = c0 * in + sum_{r=1,2} c_r * (the 6 neighbours at distance r); points within 2 of a
 * face copy their input. Paper size: 1024^3 (4 GB in, 4 GB out).
 *
 * Verification: full mode replays every step on the CPU in float (same association); sample
 * mode checks the last step against the state before it (read back too). Tolerance: the
 * coefficients are positive and sum to 1 and inputs lie in [0, 1), so each step adds at most a
 * few ulps of 1: |gpu - ref| <= 1e-6 * iterations (fused multiply-add may or may not be used). */
#include "sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RADIUS 2
static const float coeff[RADIUS + 1] = {0.5f, 0.05f, 0.1f / 3.0f};

static const char *kernel_source =
    "#define RADIUS 2\n"
    "__kernel void FiniteDifferences(__global float *out, __global const float *in,\n"
    "                                ulong dimx, ulong dimy, ulong dimz,\n"
    "                                float c0, float c1, float c2)\n"
    "{\n"
    "    size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);\n"
    "    if (x >= dimx || y >= dimy || z >= dimz)\n"
    "        return;\n"
    "    size_t sy = dimx, sz = dimx * dimy, p = z * sz + y * sy + x;\n"
    "    if (x < RADIUS || y < RADIUS || z < RADIUS ||\n"
    "        x >= dimx - RADIUS || y >= dimy - RADIUS || z >= dimz - RADIUS) {\n"
    "        out[p] = in[p];\n"
    "        return;\n"
    "    }\n"
    "    float v = c0 * in[p];\n"
    "    v += c1 * (in[p - 1] + in[p + 1] + in[p - sy] + in[p + sy] + in[p - sz] + in[p + sz]);\n"
    "    v += c2 * (in[p - 2] + in[p + 2] + in[p - 2 * sy] + in[p + 2 * sy] + in[p - 2 * sz] + in[p + 2 * sz]);\n"
    "    out[p] = v;\n"
    "}\n";

static float stencil_point(const float *in, size_t dx, size_t dy, size_t dz, size_t p)
{
    size_t x = p % dx, y = p / dx % dy, z = p / (dx * dy), sy = dx, sz = dx * dy;
    if (x < RADIUS || y < RADIUS || z < RADIUS || x >= dx - RADIUS || y >= dy - RADIUS ||
        z >= dz - RADIUS)
        return in[p];
    float v = coeff[0] * in[p];
    v += coeff[1] * (in[p - 1] + in[p + 1] + in[p - sy] + in[p + sy] + in[p - sz] + in[p + sz]);
    v += coeff[2] * (in[p - 2] + in[p + 2] + in[p - 2 * sy] + in[p + 2 * sy] + in[p - 2 * sz] +
                     in[p + 2 * sz]);
    return v;
}

int main(int argc, char **argv)
{
    size_t n = 64, dimx = 0, dimy = 0, dimz = 0;
    struct sample_args args = {0};
    const struct sample_size_flag flags[] = {
        {"--size", "-n", &n, "edge of a cubic volume"},
        {"--dimx", NULL, &dimx, "x extent (overrides --size; 0 = size)"},
        {"--dimy", NULL, &dimy, "y extent"},
        {"--dimz", NULL, &dimz, "z extent"},
    };
    sample_parse_args(argc, argv, "3-D stencil of radius 2", &args, flags, 4, false);
    dimx = dimx ? dimx : n;
    dimy = dimy ? dimy : n;
    dimz = dimz ? dimz : n;
    size_t points = dimx * dimy * dimz, bytes = points * sizeof(float);
    printf("FDTD3d: %zu x %zu x %zu, radius %d, %u steps (%.3f GiB total)\n", dimx, dimy, dimz,
           RADIUS, args.iterations, 2.0 * (double)bytes / (1u << 30));
    sample_report_data(2.0 * (double)bytes);

    cl_platform_id platform;
    cl_device_id device;
    sample_select_device(&args, &platform, &device);

    float *in = sample_alloc(bytes), *out = sample_alloc(bytes);
    float *prev = args.iterations > 1 ? sample_alloc(bytes) : in;
    sample_fill_float(in, points, args.seed, 1, 0.0f, 1.0f);

    cl_context context = sample_context(platform, device);
    cl_command_queue queue = sample_queue(context, device);
    cl_mem buf[2];
    for (int k = 0; k < 2; k++) {
        buf[k] = sample_buffer(context, CL_MEM_READ_WRITE, bytes, "clCreateBuffer(volume)");
    }
    const cl_uint poison = 0x7fc0dead;
    sample_poison(queue, buf[1], bytes, poison);
    CL_CHECK(clFinish(queue));
    cl_program program = sample_build_program(context, device, kernel_source, "");
    cl_kernel kernel = sample_kernel(program, "FiniteDifferences");

    double t0 = sample_now();
    CL_CHECK(clEnqueueWriteBuffer(queue, buf[0], CL_FALSE, 0, bytes, in, 0, NULL, NULL));
    cl_ulong d[3] = {dimx, dimy, dimz};
    for (int k = 0; k < 3; k++) {
        CL_CHECK(clSetKernelArg(kernel, 2 + k, sizeof(cl_ulong), &d[k]));
        CL_CHECK(clSetKernelArg(kernel, 5 + k, sizeof(float), &coeff[k]));
    }
    size_t local[3] = {32, 4, 1};
    size_t global[3] = {sample_round_up(dimx, 32), sample_round_up(dimy, 4), dimz};
    for (unsigned it = 0; it < args.iterations; it++) {
        CL_CHECK(clSetKernelArg(kernel, 0, sizeof(cl_mem), &buf[(it + 1) % 2]));
        CL_CHECK(clSetKernelArg(kernel, 1, sizeof(cl_mem), &buf[it % 2]));
        CL_CHECK(clEnqueueNDRangeKernel(queue, kernel, 3, NULL, global, local, 0, NULL, NULL));
    }
    cl_mem last = buf[args.iterations % 2];
    CL_CHECK(clEnqueueReadBuffer(queue, last, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
    double seconds = sample_now() - t0;
    printf("throughput: %.3f Mpoints/s\n", (double)points * args.iterations / seconds * 1e-6);

    struct sample_checker check;
    sample_checker_init(&check, &args, points, (size_t)1 << 24, 1 << 20);
    float *ref = out; /* replaced by the replayed volume in full mode */
    if (check.full) {
        float *a = sample_alloc(bytes), *b = sample_alloc(bytes);
        memcpy(a, in, bytes);
        for (unsigned it = 0; it < args.iterations; it++) {
            for (size_t p = 0; p < points; p++)
                b[p] = stencil_point(a, dimx, dimy, dimz, p);
            float *t = a;
            a = b;
            b = t;
        }
        free(b);
        ref = a;
    } else if (args.iterations > 1) {
        cl_mem before = buf[(args.iterations + 1) % 2];
        CL_CHECK(clEnqueueReadBuffer(queue, before, CL_TRUE, 0, bytes, prev, 0, NULL, NULL));
    }
    double tol = 1e-6 * args.iterations;
    size_t p, errors = 0;
    while (sample_checker_next(&check, &p)) {
        float want = check.full ? ref[p] : stencil_point(prev, dimx, dimy, dimz, p);
        if (!(fabsf(out[p] - want) <= tol))
            sample_report_mismatch(&errors, "point %zu = %.9g, expected %.9g", p, out[p], want);
    }
    if (ref != out)
        free(ref);
    uint64_t hash = sample_fnv1a(SAMPLE_FNV_INIT, out, bytes);

    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseMemObject(buf[0]);
    clReleaseMemObject(buf[1]);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    if (prev != in)
        free(prev);
    free(in);
    free(out);
    return sample_finish("FDTD3d", errors == 0, seconds, hash);
}
