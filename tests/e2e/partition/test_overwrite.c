/* test_overwrite.c - pages a partition overwrites are not loaded (issue 17 item 2), and launches
 * bound by their kernels stage their stores (issue 15), through the OpenCL API on PoCL. Every case runs on PoCL and through VAST at VAST_DEVICE_MEMORY=1M with
 * 4 KiB pages (data 2.5x to 8x the budget, so launches run in partitions); inputs are random
 * (seeded), outputs poisoned (0xA5) and every root buffer is compared byte for byte with PoCL's.
 *
 * Counter cases (judged on the VAST_STATS "buffer" line of the output's root, whose size is
 * unique in the case): the output's host-to-device bytes must be at most two pages per
 * partition (the pages a partition boundary cuts; matmul: the rows of the work-groups a boundary
 * cuts, 36 pages), and its noload bytes the rest:
 *   fill       out[i] = hash(i) under `if (i < n)`, n odd
 *   saxpy      y[i] = a * x[i] + b: x is loaded whole, y not
 *   matmul     C[row * n + col] = acc under `row < m && col < n`, sizes not multiples of 16
 *   early      `if (i >= n) return;` then out[i - 3] with a global offset of 3
 *   deep       matmul with k = 512 (B transposed): the only case whose kernel moves more than
 *              128 bytes through device memory per byte of its buffers (about 320), so the only
 *              one whose VAST_STATS line must count a kernel-bound launch (kernel_bound=1: its
 *              stores' transfers staged, launch.c); every other case must count none
 * Fidelity cases (a wrong "covered" proof shows as bytes that differ from PoCL's; their output
 * must be loaded, so they are judged by the bytes only):
 *   every_other  out[2 * i] = v: the odd elements keep their bytes
 *   data_cond    if (x[i] > 0) out[i] = v
 *   read_first   out[i] = out[i] * 3 + 1
 *   read_only    the output created CL_MEM_READ_ONLY, written by the kernel
 *   alias_same   the same buffer passed as input and output: out[i] = in[i] + 1
 *   alias_sub    two sub-buffers over the same bytes of one root, as output and input
 *   sub_offset   the output a sub-buffer at a 128-byte offset (no page boundary) of a larger
 *                root: the root's bytes around it keep theirs (edge pages loaded)
 *   guard_tail   `if (i < n)` over a buffer longer than n elements, more work-items than n: the
 *                tail keeps its bytes
 *   guard_low    `if (i > 1000)`: the head keeps its bytes
 * Usage: partition_overwrite [--only NAME[,NAME]] [--flip]; --flip flips one byte of VAST's
 * result, and every case must then FAIL. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUDGET ((size_t)1 << 20)
#define PAGE ((size_t)4 << 10)
#define MAXB 4
#define MAXA 8

/* A root buffer: bytes, random or poisoned, flags. */
struct rbuf {
    size_t bytes;
    bool random;
    cl_mem_flags flags; /* 0: CL_MEM_READ_WRITE */
};

/* A kernel argument: a root buffer, a sub-buffer of one, or a 32-bit scalar. */
enum { A_BUF, A_SUB, A_U32, A_F32 };
struct karg {
    int kind;
    int buf;
    size_t off, size; /* A_SUB */
    double v;         /* scalars */
};

struct ocase {
    const char *name, *kernel, *src;
    struct rbuf bufs[MAXB];
    int nbufs;
    struct karg args[MAXA];
    int nargs;
    cl_uint dim;
    size_t global[2], local[2], offset[2];
    int counted; /* the output's root buffer, for the counters; -1: judged by bytes only */
    int cut;     /* pages of the output a partition boundary may cut (loaded), per partition */
    int bound;   /* the launch is bound by its kernel (VAST_STATS kernel_bound) */
};

#define N1 1000003u   /* elements: 4 MB of uint, 3.8x the budget */
#define MM 301u       /* matmul: C is MM x NN, A is MM x KK, B is KK x NN */
#define NN 1003u
#define KK 3u

static const char fill_src[] =
    "__kernel void fill(__global uint *out, uint n, uint seed) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) out[i] = ((uint)i * 2654435761u) ^ seed;\n"
    "}\n";
static const char saxpy_src[] =
    "__kernel void saxpy(__global float *y, __global const float *x, float a, float b) {\n"
    "  int i = get_global_id(0);\n"
    "  y[i] = a * x[i] + b;\n"
    "}\n";
static const char matmul_src[] =
    "__kernel void matmul(__global float *C, __global const float *A, __global const float *B,\n"
    "                     uint m, uint n, uint k) {\n"
    "  int col = get_global_id(0), row = get_global_id(1);\n"
    "  if (row < m && col < n) {\n"
    "    float acc = 0.0f;\n"
    "    for (uint t = 0; t < k; t++)\n"
    "      acc += A[row * k + t] * B[t * n + col];\n"
    "    C[row * n + col] = acc;\n"
    "  }\n"
    "}\n";
#define KD 512u /* deep: the inner dimension */
static const char deep_src[] =
    "__kernel void deep(__global float *C, __global const float *A, __global const float *Bt,\n"
    "                   uint m, uint n, uint k) {\n"
    "  int col = get_global_id(0), row = get_global_id(1);\n"
    "  if (row < m && col < n) {\n"
    "    float acc = 0.0f;\n"
    "    for (uint t = 0; t < k; t++)\n"
    "      acc += A[row * k + t] * Bt[col * k + t];\n"
    "    C[row * n + col] = acc;\n"
    "  }\n"
    "}\n";
static const char early_src[] =
    "__kernel void early(__global uint *out, uint n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i >= n + 3) return;\n"
    "  out[i - 3] = (uint)i * 7u + 1u;\n"
    "}\n";
static const char every_other_src[] =
    "__kernel void every_other(__global uint *out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[2 * i] = (uint)i + 11u;\n"
    "}\n";
static const char data_cond_src[] =
    "__kernel void data_cond(__global uint *out, __global const uint *x) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (x[i] > 2147483648u) out[i] = x[i] ^ 0x5555u;\n"
    "}\n";
static const char read_first_src[] =
    "__kernel void read_first(__global uint *out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = out[i] * 3u + 1u;\n"
    "}\n";
static const char copy_src[] =
    "__kernel void copy1(__global uint *out, __global const uint *in) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = in[i] + 1u;\n"
    "}\n";
static const char tail_src[] =
    "__kernel void tail(__global uint *out, uint n) {\n"
    "  uint i = get_global_id(0);\n"
    "  if (i < n) out[i] = i * 3u;\n"
    "}\n";
static const char low_src[] =
    "__kernel void low(__global uint *out) {\n"
    "  long i = get_global_id(0);\n"
    "  if (i > 1000) out[i] = (uint)i;\n"
    "}\n";

#define ARG(i) {A_BUF, (i), 0, 0, 0}
#define SUB(i, o, s) {A_SUB, (i), (o), (s), 0}
#define U32(x) {A_U32, 0, 0, 0, (x)}
#define F32(x) {A_F32, 0, 0, 0, (x)}
#define RND(b) {(b), true, 0}
#define POI(b) {(b), false, 0}
#define G1(g) 1, {(g), 1}, {64, 1}, {0, 0}

static const struct ocase cases[] = {
    {"fill", "fill", fill_src, {POI(N1 * 4)}, 1, {ARG(0), U32(N1), U32(0x1234567)}, 3, G1(1000064), 0, 2, 0},
    {"saxpy", "saxpy", saxpy_src, {POI(N1 * 4 - 4 * 3), RND(N1 * 4 - 4 * 3 + 8)}, 2,
     {ARG(0), ARG(1), F32(1.75), F32(-0.5)}, 4, G1(N1 - 3), 0, 2, 0},
    {"matmul", "matmul", matmul_src, {POI(MM * NN * 4), RND(MM * KK * 4), RND(KK * NN * 4)}, 3,
     {ARG(0), ARG(1), ARG(2), U32(MM), U32(NN), U32(KK)}, 6, 2, {1008, 304}, {16, 16}, {0, 0}, 0, 36, 0},
    {"deep", "deep", deep_src, {POI(MM * NN * 4), RND(MM * KD * 4), RND(NN * KD * 4)}, 3,
     {ARG(0), ARG(1), ARG(2), U32(MM), U32(NN), U32(KD)}, 6, 2, {1008, 304}, {16, 16}, {0, 0}, -1, 0, 1},
    {"early", "early", early_src, {POI(N1 * 4)}, 1, {ARG(0), U32(N1)}, 2, 1, {1000064, 1}, {64, 1}, {3, 0}, 0, 2, 0},
    {"every_other", "every_other", every_other_src, {POI(N1 * 4)}, 1, {ARG(0)}, 1, G1(500032 - 64), -1, 0, 0},
    {"data_cond", "data_cond", data_cond_src, {POI(N1 * 4 + 4), RND(N1 * 4 + 8)}, 2, {ARG(0), ARG(1)}, 2,
     G1(1000000), -1, 0, 0},
    {"read_first", "read_first", read_first_src, {RND(N1 * 4)}, 1, {ARG(0)}, 1, G1(1000000), -1, 0, 0},
    {"read_only", "copy1", copy_src, {{N1 * 4, false, CL_MEM_READ_ONLY}, RND(N1 * 4 + 4)}, 2, {ARG(0), ARG(1)}, 2,
     G1(1000000), -1, 0, 0},
    {"alias_same", "copy1", copy_src, {RND(N1 * 4)}, 1, {ARG(0), ARG(0)}, 2, G1(1000000), -1, 0, 0},
    {"alias_sub", "copy1", copy_src, {RND(N1 * 4 + 512)}, 1, {SUB(0, 384, N1 * 4), SUB(0, 384, N1 * 4)}, 2,
     G1(1000000), -1, 0, 0},
    {"sub_offset", "copy1", copy_src, {POI(N1 * 4 + 3 * 4096 + 8192), RND(N1 * 4 + 4)}, 2,
     {SUB(0, 3 * 4096 + 128, N1 * 4), ARG(1)}, 2, G1(1000000), -1, 0, 0},
    {"guard_tail", "tail", tail_src, {POI(N1 * 4 + 3 * 4096 + 100)}, 1, {ARG(0), U32(N1)}, 2, G1(1004160), -1, 0, 0},
    {"guard_low", "low", low_src, {POI(N1 * 4)}, 1, {ARG(0)}, 1, G1(1000000), -1, 0, 0},
};
#define NCASES (sizeof cases / sizeof cases[0])

/* Runs c on e: every root buffer read back into out[b] (malloc'ed). The launch's status. */
static cl_int run_case(struct clenv *e, const struct ocase *c, unsigned char **out)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    cl_mem roots[MAXB], args[MAXA] = {0};
    for (int b = 0; b < c->nbufs; b++) {
        unsigned char *init = c->bufs[b].random ? harness_rnd_u32(&seed, c->bufs[b].bytes / 4 + 1, 0)
                                                : harness_poison(c->bufs[b].bytes);
        cl_int err;
        roots[b] = clCreateBuffer(e->ctx, (c->bufs[b].flags ? c->bufs[b].flags : CL_MEM_READ_WRITE) |
                                              CL_MEM_COPY_HOST_PTR, c->bufs[b].bytes, init, &err);
        CL_OK(err);
        free(init);
    }
    cl_program p = clenv_build(e, c->src, NULL);
    cl_int err;
    cl_kernel k = clCreateKernel(p, c->kernel, &err);
    CL_OK(err);
    for (int a = 0; a < c->nargs; a++) {
        const struct karg *g = &c->args[a];
        if (g->kind == A_BUF) {
            CL_OK(clSetKernelArg(k, (cl_uint)a, sizeof(cl_mem), &roots[g->buf]));
        } else if (g->kind == A_SUB) {
            cl_buffer_region reg = {g->off, g->size};
            args[a] = clCreateSubBuffer(roots[g->buf], 0, CL_BUFFER_CREATE_TYPE_REGION, &reg, &err);
            CL_OK(err);
            CL_OK(clSetKernelArg(k, (cl_uint)a, sizeof(cl_mem), &args[a]));
        } else if (g->kind == A_U32) {
            cl_uint v = (cl_uint)g->v;
            CL_OK(clSetKernelArg(k, (cl_uint)a, sizeof v, &v));
        } else {
            cl_float v = (cl_float)g->v;
            CL_OK(clSetKernelArg(k, (cl_uint)a, sizeof v, &v));
        }
    }
    cl_int status = clEnqueueNDRangeKernel(e->q, k, c->dim, c->offset[0] ? c->offset : NULL, c->global, c->local,
                                           0, NULL, NULL);
    cl_int fin = clFinish(e->q);
    if (status == CL_SUCCESS)
        status = fin;
    for (int b = 0; b < c->nbufs; b++) {
        out[b] = malloc(c->bufs[b].bytes);
        CL_OK(clenv_read(e, roots[b], c->bufs[b].bytes, out[b]));
    }
    for (int a = 0; a < c->nargs; a++)
        if (args[a] != NULL)
            clReleaseMemObject(args[a]);
    for (int b = 0; b < c->nbufs; b++)
        clReleaseMemObject(roots[b]);
    clReleaseKernel(k);
    clReleaseProgram(p);
    return status;
}

static int child(const void *cv, const char *arg, int flip)
{
    const struct ocase *c = cv;
    (void)arg;
    unsigned char *want[MAXB], *got[MAXB];
    struct clenv pocl, vast;
    clenv_open(&pocl, "Portable");
    cl_int st = run_case(&pocl, c, want);
    clenv_close(&pocl);
    if (st != CL_SUCCESS)
        return printf("  %s: PoCL failed: %s\n", c->name, cl_status_name(st)), 3;
    clenv_open(&vast, "VAST");
    st = run_case(&vast, c, got);
    clenv_close(&vast);
    int bad = st != CL_SUCCESS;
    if (bad)
        printf("  %s: VAST failed: %s\n", c->name, cl_status_name(st));
    if (flip)
        got[0][c->bufs[0].bytes / 2] ^= 0x40;
    for (int b = 0; b < c->nbufs; b++) {
        char what[64];
        snprintf(what, sizeof what, "%s buffer %d", c->name, b);
        bad |= harness_compare_bytes(what, want[b], c->bufs[b].bytes, got[b], c->bufs[b].bytes);
        free(want[b]);
        free(got[b]);
    }
    return bad;
}

static int runs(const void *c, const struct harness_opts *o, struct harness_run *out, size_t max)
{
    (void)o;
    if (max < 1)
        return 0;
    const struct ocase *k = c;
    size_t ws = 0;
    for (int b = 0; b < k->nbufs; b++)
        ws += k->bufs[b].bytes;
    out[0] = (struct harness_run){.name = k->name, .budget = BUDGET, .page = PAGE, .ws = ws};
    return 1;
}

/* The value of key on the "vast: stats: buffer bytes=<bytes>" line, or -1. */
static long long buffer_stat(const char *out, size_t bytes, const char *key)
{
    char head[96];
    snprintf(head, sizeof head, "vast: stats: buffer bytes=%zu ", bytes);
    const char *l = strstr(out, head);
    if (l == NULL)
        return -1;
    const char *e = strchr(l, '\n'), *k = strstr(l, key);
    if (k == NULL || (e != NULL && k > e))
        return -1;
    return strtoll(k + strlen(key), NULL, 10);
}

static void judge(const void *cv, const struct harness_run *run, const char *out, char *why, size_t n, char *what,
                  size_t nwhat)
{
    const struct ocase *c = cv;
    long long parts = harness_stat(out, c->kernel, "partitioned", "partitions");
    snprintf(what, nwhat, "%-11s budget %zuK page %zuK (ws %zuK) partitions=%lld", c->name, run->budget >> 10,
             run->page >> 10, run->ws >> 10, parts);
    if (parts < 2) {
        snprintf(why, n, "no VAST_STATS line 'kernel=%s mode=partitioned' with partitions >= 2", c->kernel);
        return;
    }
    long long bound = harness_stat(out, c->kernel, "partitioned", "kernel_bound");
    if (bound != c->bound) {
        snprintf(why, n, "kernel_bound=%lld on the VAST_STATS line, expected %d", bound, c->bound);
        return;
    }
    if (c->counted < 0)
        return;
    size_t bytes = c->bufs[c->counted].bytes;
    long long h2d = buffer_stat(out, bytes, "h2d_bytes="), noload = buffer_stat(out, bytes, "noload_bytes=");
    long long edge = c->cut * parts * (long long)PAGE;
    size_t len = strlen(what);
    snprintf(what + len, nwhat - len, " output h2d=%lld noload=%lld", h2d, noload);
    if (h2d < 0 || noload < 0)
        snprintf(why, n, "no 'vast: stats: buffer bytes=%zu' line with h2d_bytes and noload_bytes", bytes);
    else if (h2d > edge)
        snprintf(why, n, "the write-only output loaded %lld bytes, more than its cut pages (%lld)", h2d, edge);
    else if (noload + h2d < (long long)bytes)
        snprintf(why, n, "the output's pages were given frames for %lld bytes without a load, %lld loaded: not all",
                 noload, h2d);
}

int main(int argc, char **argv)
{
    static const struct harness_prog prog = {
        cases, NCASES, sizeof cases[0], "cases", {0}, false, NULL, child, runs, judge};
    return harness_main(argc, argv, &prog);
}
