/* translate_bench.c - translation time and paged-kernel slowdown (not a test).
 * Part 1: translates a generated ~1,000-line program (60 kernels with helpers, loops,
 * vector and struct accesses) and prints the time per program and per kernel.
 * Part 2: on the first OpenCL device (PoCL here), runs a streaming kernel and a
 * compute-bound one original vs paged (all pages resident, 4 KiB pages) and prints
 * the slowdown. Usage: translate_bench [elements] */
#include "translate.h"

#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static char *generate_program(int kernels, int *lines)
{
    size_t cap = 1 << 20, len = 0;
    char *s = malloc(cap);
    *lines = 0;
#define EMIT(...) (len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__), (*lines)++)
    EMIT("typedef struct { float4 p; float4 v; } body;\n");
    EMIT("#define AT(a, i, j, w) a[(i) * (w) + (j)]\n");
    for (int k = 0; k < kernels; k++) {
        EMIT("float helper%d(__global const float *a, int i, int n) {\n", k);
        EMIT("  float s = 0.0f;\n");
        EMIT("  for (int j = 0; j < n; j++) s += AT(a, i, j, n) * %d.0f;\n", k);
        EMIT("  return s;\n}\n");
        (*lines)++;
        EMIT("__kernel void k%d(__global const float *a, __global float *b, __global body *bs,\n", k);
        EMIT("                 __global uint *h, __local float *l, int n) {\n");
        EMIT("  int i = get_global_id(0), g = get_group_id(0);\n");
        EMIT("  float4 v = vload4(i, a);\n");
        EMIT("  l[get_local_id(0)] = a[i] + helper%d(a, i, n);\n", k);
        EMIT("  barrier(CLK_LOCAL_MEM_FENCE);\n");
        EMIT("  bs[i].p += bs[i].v * l[0];\n");
        EMIT("  bs[i].v.x -= 0.5f;\n");
        EMIT("  if (i < n) b[i] += v.x * v.w;\n");
        EMIT("  atomic_inc(&h[(uint)a[i] & 63]);\n");
        EMIT("  vstore4(v * 2.0f, i, b + g);\n");
        EMIT("}\n");
    }
    return s;
}

static void bench_translation(void)
{
    int lines;
    char *src = generate_program(60, &lines);
    double best = 1e9;
    struct translate_result *r = NULL;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now();
        if (translate_program(src, NULL, &r) != 0) {
            fprintf(stderr, "translation failed: %s\n", r->error);
            exit(1);
        }
        double t = now() - t0;
        best = t < best ? t : best;
        if (rep < 4)
            translate_result_free(r);
    }
    printf("translation: %d lines, %zu kernels: %.1f ms (best of 5), %.2f ms per kernel\n",
           lines, r->num_kernels, best * 1e3, best * 1e3 / (double)r->num_kernels);
    translate_result_free(r);
    free(src);
}

static const char bench_src[] =
    "__kernel void stream(__global const float *x, __global float *y, float a) {\n"
    "  size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }\n"
    "__kernel void compute(__global const float *x, __global float *y, uint n) {\n"
    "  size_t i = get_global_id(0); float s = 0.0f;\n"
    "  for (uint k = 0; k < 64; k++) s += x[(i + k * 977) % n] * (float)k;\n"
    "  y[i] = s; }\n";

#define CK(e) do { cl_int e_ = (e); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "OpenCL error %d at line %d\n", e_, __LINE__); exit(1); } } while (0)

static double time_kernel(cl_command_queue q, cl_kernel k, size_t n)
{
    size_t local = 64;
    double best = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now();
        CK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, &local, 0, NULL, NULL));
        CK(clFinish(q));
        double t = now() - t0;
        best = t < best ? t : best;
    }
    return best;
}

/* Paged run with every page resident, frames in order in one pool chunk. */
static void set_paged_args(cl_context ctx, cl_kernel k, size_t n, cl_mem *mems, int nm,
                           const char *name)
{
    const unsigned shift = 12;
    size_t bytes = n * 4, pages_per = (bytes + 4095) >> shift;
    cl_ulong pages = 1 + 2 * pages_per;
    uint32_t *lpt = malloc(pages * 4);
    lpt[0] = TRANSLATE_NO_FRAME;
    for (cl_ulong p = 1; p < pages; p++)
        lpt[p] = (uint32_t)(p - 1);
    cl_int err;
    mems[0] = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, pages * 4, lpt, &err);
    CK(err);
    mems[1] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (pages - 1) << shift, NULL, &err);
    CK(err);
    mems[2] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 2u << shift, NULL, &err);
    CK(err);
    uint32_t log[4] = {0, 0, 0, 0};
    mems[3] = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, sizeof log, log, &err);
    CK(err);
    cl_ulong vx = 1ull << shift, vy = (1 + pages_per) << shift;
    CK(clSetKernelArg(k, 0, 8, &vx));
    CK(clSetKernelArg(k, 1, 8, &vy));
    if (!strcmp(name, "stream")) {
        cl_float a = 2.0f;
        CK(clSetKernelArg(k, 2, 4, &a));
    } else {
        cl_uint nn = (cl_uint)n;
        CK(clSetKernelArg(k, 2, 4, &nn));
    }
    cl_uint i = 3;
    CK(clSetKernelArg(k, i++, sizeof(cl_mem), &mems[0]));
    for (int c = 0; c < 4; c++)
        CK(clSetKernelArg(k, i++, sizeof(cl_mem), &mems[1]));
    CK(clSetKernelArg(k, i++, sizeof(cl_mem), &mems[2]));
    CK(clSetKernelArg(k, i++, sizeof(cl_mem), &mems[3]));
    cl_ulong4 gs = {{n, 1, 1, 0}}, go = {{0, 0, 0, 0}}, cfg = {{shift, pages, 0, n / 64}};
    CK(clSetKernelArg(k, i++, sizeof gs, &gs));
    CK(clSetKernelArg(k, i++, sizeof go, &go));
    CK(clSetKernelArg(k, i++, sizeof cfg, &cfg));
    (void)nm;
    free(lpt);
}

static void bench_slowdown(size_t n)
{
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    CK(clGetPlatformIDs(1, &plat, NULL));
    CK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CK(err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    CK(err);
    struct translate_result *r;
    if (translate_program(bench_src, NULL, &r) != 0) {
        fprintf(stderr, "translation failed: %s\n", r->error);
        exit(1);
    }
    const char *srcs[2] = {bench_src, r->paged_source};
    cl_program p[2];
    for (int v = 0; v < 2; v++) {
        p[v] = clCreateProgramWithSource(ctx, 1, &srcs[v], NULL, &err);
        CK(err);
        CK(clBuildProgram(p[v], 1, &dev, v ? r->build_options : "", NULL, NULL));
    }
    n = n / 64 * 64;
    cl_mem x = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * 4, NULL, &err), y;
    CK(err);
    y = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * 4, NULL, &err);
    CK(err);
    const char *names[2] = {"stream", "compute"};
    for (int kk = 0; kk < 2; kk++) {
        cl_kernel ko = clCreateKernel(p[0], names[kk], &err);
        CK(err);
        cl_kernel kp = clCreateKernel(p[1], names[kk], &err);
        CK(err);
        CK(clSetKernelArg(ko, 0, sizeof x, &x));
        CK(clSetKernelArg(ko, 1, sizeof y, &y));
        cl_float a = 2.0f;
        cl_uint nn = (cl_uint)n;
        CK(kk ? clSetKernelArg(ko, 2, 4, &nn) : clSetKernelArg(ko, 2, 4, &a));
        cl_mem mems[4];
        set_paged_args(ctx, kp, n, mems, 4, names[kk]);
        double to = time_kernel(q, ko, n), tp = time_kernel(q, kp, n);
        printf("%-8s %zu elements: original %.2f ms, paged %.2f ms, slowdown %.2fx\n",
               names[kk], n, to * 1e3, tp * 1e3, tp / to);
        for (int i = 0; i < 4; i++)
            clReleaseMemObject(mems[i]);
        clReleaseKernel(ko);
        clReleaseKernel(kp);
    }
    translate_result_free(r);
}

int main(int argc, char **argv)
{
    bench_translation();
    bench_slowdown(argc > 1 ? (size_t)atol(argv[1]) : (size_t)1 << 22);
    return 0;
}
