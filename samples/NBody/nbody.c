/* NBody: all-pairs gravitational n-body, the NVIDIA SDK's integrateBodies: positions and
 * velocities as float4 (x, y, z, mass), tiles of bodies staged in local memory, and each
 * work-group starting its walk over the tiles at its own index (so the work-groups read the
 * whole array from different places, as the paper notes). --iterations steps ping-pong two
 * pairs of buffers. n is rounded up to a multiple of the work-group size (64).
 * Paper size: 41 M bodies (1.3 GB in, 1.3 GB out).
 *
 * Verification: the last step, against a double-precision step from the state before it
 * (read back too). Per component: |a - a_ref| <= (n + 16) * FLT_EPSILON * sum |terms|, then
 * carried through v' = (v + a dt) damping and p' = p + v' dt with 4 ulps per operation. */
#include "nbody_kernel.h"
#include "sample.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define SOFTENING2 0.01f
#define DT 0.001f
#define DAMPING 0.995f


/* Check body i of the step from (pos, vel) to (npos, nvel). */
static bool check_body(size_t n, size_t i, const cl_float4 *pos, const cl_float4 *vel,
                       const cl_float4 *npos, const cl_float4 *nvel, size_t *errors)
{
    double acc[3] = {0, 0, 0}, mag[3] = {0, 0, 0};
    for (size_t j = 0; j < n; j++) {
        double r[3], d2 = SOFTENING2;
        for (int c = 0; c < 3; c++) {
            r[c] = (double)pos[j].s[c] - (double)pos[i].s[c];
            d2 += r[c] * r[c];
        }
        double s = pos[j].s[3] / (d2 * sqrt(d2));
        for (int c = 0; c < 3; c++) {
            acc[c] += r[c] * s;
            mag[c] += fabs(r[c] * s);
        }
    }
    const double u = FLT_EPSILON;
    bool ok = npos[i].s[3] == pos[i].s[3] && nvel[i].s[3] == vel[i].s[3];
    for (int c = 0; c < 3; c++) {
        double tol_a = (double)(n + 16) * u * mag[c];
        double v = ((double)vel[i].s[c] + acc[c] * DT) * DAMPING;
        double tol_v = DT * tol_a + 4 * u * (fabs(vel[i].s[c]) + fabs(acc[c] * DT) + fabs(v));
        double p = (double)pos[i].s[c] + v * DT;
        double tol_p = DT * tol_v + 4 * u * (fabs(pos[i].s[c]) + fabs(v * DT) + fabs(p));
        if (!(fabs(nvel[i].s[c] - v) <= tol_v) || !(fabs(npos[i].s[c] - p) <= tol_p))
            ok = false;
        if (!ok) {
            sample_report_mismatch(errors, "body %zu component %d: pos %.9g vel %.9g, expected %.9g %.9g",
                                   i, c, npos[i].s[c], nvel[i].s[c], p, v);
            return false;
        }
    }
    return true;
}

int main(int argc, char **argv)
{
    size_t n = 4096;
    struct sample_args args = {0};
    sample_parse_count(argc, argv, "all-pairs n-body integration", &args, &n,
                       "number of bodies (rounded up to a multiple of 64)");
    n = sample_round_up(n, LOCAL);
    size_t bytes = n * sizeof(cl_float4);
    printf("NBody: n=%zu bodies, %u steps (%.3f GiB total)\n", n, args.iterations,
           4.0 * (double)bytes / (1u << 30));
    sample_report_data(4.0 * (double)bytes);

    cl_platform_id platform;
    cl_device_id device;
    sample_select_device(&args, &platform, &device);

    cl_float4 *pos = sample_alloc(bytes), *vel = sample_alloc(bytes);
    cl_float4 *npos = sample_alloc(bytes), *nvel = sample_alloc(bytes);
    struct sample_rng rng;
    sample_rng_init(&rng, args.seed, 1);
    for (size_t i = 0; i < n; i++) {
        for (int c = 0; c < 3; c++) {
            pos[i].s[c] = sample_rng_float(&rng, -1.0f, 1.0f);
            vel[i].s[c] = sample_rng_float(&rng, -0.1f, 0.1f);
        }
        pos[i].s[3] = sample_rng_float(&rng, 0.5f, 1.5f) / (float)n;
        vel[i].s[3] = 0.0f;
    }

    cl_context context = sample_context(platform, device);
    cl_command_queue queue = sample_queue(context, device);
    cl_mem dpos[2], dvel[2];
    const cl_uint poison = 0x7fc0dead;
    for (int k = 0; k < 2; k++) {
        dpos[k] = sample_buffer(context, CL_MEM_READ_WRITE, bytes, "clCreateBuffer(pos)");
        dvel[k] = sample_buffer(context, CL_MEM_READ_WRITE, bytes, "clCreateBuffer(vel)");
    }
    sample_poison(queue, dpos[1], bytes, poison);
    sample_poison(queue, dvel[1], bytes, poison);
    CL_CHECK(clFinish(queue));
    cl_program program = sample_build_program(context, device, nbody_source, "");
    cl_kernel kernel = sample_kernel(program, "integrateBodies");

    double t0 = sample_now();
    CL_CHECK(clEnqueueWriteBuffer(queue, dpos[0], CL_FALSE, 0, bytes, pos, 0, NULL, NULL));
    CL_CHECK(clEnqueueWriteBuffer(queue, dvel[0], CL_FALSE, 0, bytes, vel, 0, NULL, NULL));
    float dt = DT, damping = DAMPING, soft = SOFTENING2;
    cl_ulong n_arg = n;
    sample_set_args(kernel, 4, 4, sizeof(float), &dt, sizeof(float), &damping, sizeof(float), &soft, sizeof(cl_ulong),
                    &n_arg);
    size_t local = LOCAL, global = n;
    for (unsigned it = 0; it < args.iterations; it++) {
        int src = it % 2, dst = 1 - src;
        sample_set_args(kernel, 0, 4, sizeof(cl_mem), &dpos[dst], sizeof(cl_mem), &dvel[dst], sizeof(cl_mem),
                        &dpos[src], sizeof(cl_mem), &dvel[src]);
        CL_CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL));
    }
    int last = args.iterations % 2;
    CL_CHECK(clEnqueueReadBuffer(queue, dpos[last], CL_FALSE, 0, bytes, npos, 0, NULL, NULL));
    CL_CHECK(clEnqueueReadBuffer(queue, dvel[last], CL_TRUE, 0, bytes, nvel, 0, NULL, NULL));
    double seconds = sample_now() - t0;
    printf("interactions: %.3f G/s\n", (double)n * (double)n * args.iterations / seconds * 1e-9);

    if (args.iterations > 1) { /* the state before the last step */
        CL_CHECK(clEnqueueReadBuffer(queue, dpos[1 - last], CL_FALSE, 0, bytes, pos, 0, NULL, NULL));
        CL_CHECK(clEnqueueReadBuffer(queue, dvel[1 - last], CL_TRUE, 0, bytes, vel, 0, NULL, NULL));
    }
    struct sample_checker check;
    sample_checker_init(&check, &args, n, 4096, 1024);
    size_t i, errors = 0;
    while (sample_checker_next(&check, &i))
        check_body(n, i, pos, vel, npos, nvel, &errors);
    uint64_t hash = sample_fnv1a(SAMPLE_FNV_INIT, npos, bytes);
    hash = sample_fnv1a(hash, nvel, bytes);

    clReleaseKernel(kernel);
    clReleaseProgram(program);
    for (int k = 0; k < 2; k++) {
        clReleaseMemObject(dpos[k]);
        clReleaseMemObject(dvel[k]);
    }
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(pos);
    free(vel);
    free(npos);
    free(nvel);
    return sample_finish("NBody", errors == 0, seconds, hash);
}
