/* test_xlat.c - translated kernels that must stay harmless and complete (issue 13, defects 4
 * and 9), each run on PoCL and through VAST in one process at a device budget far below its
 * data, 4 KiB pages (as test_api.c: child processes, VAST_STATS, bytes compared with PoCL's).
 *
 * Faulted work-groups (defect 4): loads through random indices fault; a faulted load reads 0
 * and the work-group's later work is thrown away, so what it computes from those zeros must
 * neither trap, nor run away, nor write out of bounds:
 *   fault_div     out[i] = a[i] / b[idx[i]] + a[i] % len[idx[i] & 3] (b, len >= 1; a fabricated
 *                 0 divisor traps with SIGFPE on the CPU)
 *   fault_loop    a loop to cnt[idx[i]] - 1 inclusive (cnt >= 1; a fabricated 0 makes the
 *                 bound 0xffffffff: the loop never ends), and a while loop walking a chain
 *   fault_local   a __local histogram and a private array indexed by key[idx[i]] - 1 (key >= 1:
 *                 a fabricated 0 indexes 0xffffffff, far out of bounds), then a loop with a
 *                 barrier to a bound loaded by the whole work-group (a fabricated 0: for ever;
 *                 the work-items must leave it together)
 *   fault_rmw     a read-modify-write of pages found by faults, then a gather at an address
 *                 computed from the value written (faults again in the retry): the retry's
 *                 restore must bring back what earlier partitions wrote to those pages
 * Accesses that may straddle a page (defect 9): whole-struct loads and stores of a 12-byte
 * struct, a packed 7-byte struct and its misaligned members, a complex-number union (as
 * pyopencl's cfloat_t), a 24-byte double struct, and vload/vstore of float16 and double8 at
 * odd offsets, over buffers whose elements cross 4 KiB boundaries; straddle_struct also gathers
 * and scatters whole structs through a permutation (faults on either page of a split access):
 *   straddle_struct, straddle_packed, straddle_vec
 * A barrier after the prologue: barrier_rows (2D, __local memory, partitions ending inside rows
 * of work-groups, work-item conditions after the barrier).
 *
 * Every launch must show mode=partitioned in VAST_STATS; the fault cases must show faults.
 * Usage: partition_xlat [--only NAME[,NAME]] [--flip]; --flip flips one byte of VAST's result
 * (every case must then fail: the comparison can fail). Exit 0 when all pass. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct xlat_test {
    const char *name, *kernel;
    size_t frac;  /* budget = ws / frac */
    int faults;   /* VAST_STATS must show faults > 0 */
    void (*make)(struct job *j);
};

static uint64_t seed;
static void *rnd_u32(size_t n, uint32_t lo, uint32_t mod)
{
    uint32_t *v = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        v[i] = lo + (mod ? (uint32_t)(harness_rand(&seed) % mod) : (uint32_t)harness_rand(&seed));
    return v;
}
static void *rnd_bytes(size_t n)
{
    unsigned char *v = malloc(n);
    for (size_t i = 0; i < n; i++)
        v[i] = (unsigned char)harness_rand(&seed);
    return v;
}
static void *rnd_f32(size_t n) { return harness_rnd_f32(&seed, n); }
static void *poison(size_t bytes) { return harness_poison(bytes); }

/* ---- faulted work-groups ---- */
static const size_t fn = 64u << 10, fm = 256u << 10; /* work-items; gathered table entries */

static void make_fault_div(struct job *j)
{
    static const char *src =
        "__kernel void fault_div(__global const int *a, __global const uint *idx, __global const int *b,\n"
        "                        __global const long *len, __global int *out) {\n"
        "  size_t i = get_global_id(0); uint k = idx[i];\n"
        "  int d = b[k]; long r = (long)a[i] % len[k & 3];\n"
        "  int q = a[i]; q /= d;\n"
        "  out[i] = a[i] / b[k ^ 1] + (int)r + q;\n"
        "}\n";
    static const long lens[4] = {3, 7, 1000003, 65537};
    long *len = malloc(sizeof lens * (fm / 4));
    for (size_t t = 0; t < fm; t++)
        len[t] = lens[t & 3];
    *j = (struct job){src, "", "fault_div", 1, {fn}, {64}, {0}, true, false, 0, 5,
                      {BUF(fn * 4, rnd_u32(fn, 0, 0)), BUF(fn * 4, rnd_u32(fn, 0, (uint32_t)fm)),
                       BUF(fm * 4, rnd_u32(fm, 1, 1000)), BUF(fm * 8, len), BUF(fn * 4, poison(fn * 4))}};
}

static void make_fault_loop(struct job *j)
{
    static const char *src =
        "__kernel void fault_loop(__global const uint *idx, __global const uint *cnt, __global const uint *next,\n"
        "                         __global uint *out, uint m) {\n"
        "  size_t i = get_global_id(0); uint k = idx[i], s = 0;\n"
        "  for (uint j = 0; j <= cnt[k] - 1u; j++) s = s * 31u + next[(k + j) % m];\n"
        "  uint p = k, steps = 0;\n"
        "  while (next[p] != 1u) { p = next[p] - 2u; steps++; }\n"
        "  out[i] = s ^ (steps << 20);\n"
        "}\n";
    /* next[p] = (p & 7) + 1: from p the walk goes to (p & 7) - 1, down to 0, where next is 1
     * (at most 8 steps); a fabricated 0 sends it to 0xfffffffe, past the buffer, for ever */
    uint32_t *next = malloc(fm * 4);
    for (size_t t = 0; t < fm; t++)
        next[t] = (uint32_t)(t & 7) + 1u;
    static cl_uint m = 256u << 10;
    *j = (struct job){src, "", "fault_loop", 1, {fn}, {64}, {0}, true, false, 0, 5,
                      {BUF(fn * 4, rnd_u32(fn, 0, (uint32_t)fm)), BUF(fm * 4, rnd_u32(fm, 1, 8)), BUF(fm * 4, next),
                       BUF(fn * 4, poison(fn * 4)), SCAL(m)}};
}

static void make_fault_local(struct job *j)
{
    static const char *src =
        "__kernel void fault_local(__global const uint *idx, __global const uint *key, __global uint *out) {\n"
        "  __local uint hist[64]; uint priv[16];\n"
        "  size_t i = get_global_id(0); uint l = get_local_id(0);\n"
        "  hist[l] = 0u; for (uint t = 0; t < 16u; t++) priv[t] = t;\n"
        "  barrier(CLK_LOCAL_MEM_FENCE);\n"
        "  uint k = key[idx[i]];\n"
        "  atomic_inc(&hist[k - 1u]);\n"
        "  priv[(k - 1u) >> 2] += k;\n"
        "  barrier(CLK_LOCAL_MEM_FENCE);\n"
        "  uint rounds = key[idx[get_group_id(0)]], acc = 0;\n"
        "  for (uint r = 0; r <= rounds - 1u; r++) { acc += hist[(l + r) & 63u]; barrier(CLK_LOCAL_MEM_FENCE); }\n"
        "  out[i] = hist[l] + priv[l & 15u] * 1000u + acc * 7u;\n"
        "}\n";
    *j = (struct job){src, "", "fault_local", 1, {fn}, {64}, {0}, true, false, 0, 3,
                      {BUF(fn * 4, rnd_u32(fn, 0, (uint32_t)fm)), BUF(fm * 4, rnd_u32(fm, 1, 64)),
                       BUF(fn * 4, poison(fn * 4))}};
}

/* ---- accesses that may straddle a page ---- */
static const size_t sn = 300007, sg = 299968; /* elements (odd: they cross pages); work-items */

static void make_straddle_struct(struct job *j)
{
    static const char *src =
        "typedef struct { uint a, b, c; } t3;\n"
        "typedef struct { double x; float y; int z; double w; } t24;\n"
        "typedef union { struct { float x, y; }; struct { float real, imag; }; } cfloat_t;\n"
        "t3 twice(t3 v) { v.a += v.b; v.c ^= v.a; return v; }\n"
        "void put3(__global t3 *p, size_t i, t3 v) { p[i] = v; }\n"
        "__kernel void straddle_struct(__global const t3 *in, __global t3 *out, __global t24 *d,\n"
        "                              __global cfloat_t *z, __global const t3 *in2, __global const uint *perm,\n"
        "                              __global t3 *sc) {\n"
        "  size_t i = get_global_id(0);\n"
        "  t3 s = in[i]; s.b = s.b * 3u + in[i + 1].c;\n"
        "  put3(out, i, twice(s));\n"
        "  out[i].c += in2[i].b;\n"
        "  t24 e = d[i]; e.x += (double)e.z; e.y = (float)e.w; d[i] = e;\n"
        "  cfloat_t c = z[i], r; r.real = c.real * c.real - c.imag * c.imag; r.imag = 2.0f * c.x * c.y;\n"
        "  z[i] = r;\n"
        "  t3 g = in2[perm[i]]; g.a ^= g.c; sc[perm[i + 1]] = g;\n"
        "}\n";
    uint32_t *perm = malloc(sn * 4);
    for (size_t t = 0; t < sn; t++)
        perm[t] = (uint32_t)t;
    for (size_t t = sn - 1; t > 0; t--) {
        size_t k = harness_rand(&seed) % (t + 1);
        uint32_t x = perm[t];
        perm[t] = perm[k], perm[k] = x;
    }
    *j = (struct job){src, "", "straddle_struct", 1, {sg}, {64}, {0}, true, false, 0, 7,
                      {BUF(sn * 12, rnd_bytes(sn * 12)), BUF(sn * 12, poison(sn * 12)),
                       BUF(sn * 24, rnd_bytes(sn * 24)), BUF(sn * 8, rnd_f32(sn * 2)),
                       BUF(sn * 12, rnd_bytes(sn * 12)), BUF(sn * 4, perm), BUF(sn * 12, poison(sn * 12))}};
    for (size_t t = 0; t < sn; t++) { /* t24: finite doubles, ints that convert exactly */
        unsigned char *e = (unsigned char *)j->args[2].data + t * 24;
        double x = (double)(t % 1000) * 0.5, w = -(double)(t % 777);
        memcpy(e, &x, 8), memcpy(e + 16, &w, 8);
    }
}

static void make_straddle_packed(struct job *j)
{
    static const char *src =
        "typedef struct __attribute__((packed)) { uchar tag; uint v; ushort w; } pk;\n"
        "__kernel void straddle_packed(__global const pk *in, __global pk *out, __global uint *vals) {\n"
        "  size_t i = get_global_id(0);\n"
        "  pk p = in[i]; p.v = p.v * 7u + p.tag; p.w = (ushort)(p.w + 1u);\n"
        "  out[i] = p;\n"
        "  vals[i] = in[i].v ^ (uint)in[i].w;\n"
        "  out[i].tag = (uchar)(in[i].tag + 1);\n"
        "}\n";
    *j = (struct job){src, "", "straddle_packed", 1, {sg}, {64}, {0}, true, false, 0, 3,
                      {BUF(sn * 7, rnd_bytes(sn * 7)), BUF(sn * 7, poison(sn * 7)), BUF(sn * 4, poison(sn * 4))}};
}

static void make_straddle_vec(struct job *j)
{
    static const char *src =
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
        "__kernel void straddle_vec(__global const float *f, __global float *g, __global const double *d,\n"
        "                           __global double *e) {\n"
        "  size_t i = get_global_id(0);\n"
        "  float16 v = vload16(i, f + 3); vstore16(v * 2.0f + 1.0f, i, g + 5);\n"
        "  double8 w = vload8(i, d + 1); vstore8(w - 1.0, i, e + 7);\n"
        "}\n";
    size_t n = 40000;
    *j = (struct job){src, "", "straddle_vec", 1, {n}, {16}, {0}, true, false, 0, 4,
                      {BUF(n * 64 + 64, rnd_f32(n * 16 + 16)), BUF(n * 64 + 64, poison(n * 64 + 64)),
                       BUF(n * 64 + 64, NULL), BUF(n * 64 + 64, poison(n * 64 + 64))}};
    double *dd = malloc(n * 64 + 64);
    for (size_t t = 0; t < n * 8 + 8; t++)
        dd[t] = (double)t * 0.25 - 3.0;
    j->args[2].data = dd;
}

/* ---- a barrier after the prologue ---- */
/* A 2D launch whose partitions end inside rows of work-groups, with __local memory, a
 * barrier and work-item conditions after it (the CTS's kernel_local_memory_size, 2D): PoCL 3.1
 * ran `if (id == 0)` in every work-item when the translated kernel returned early, uniformly,
 * before that barrier for work-groups outside the partition. */
static void make_barrier_rows(struct job *j)
{
    static const char *src =
        "__kernel void barrier_rows(__global const int *in, __global int *out) {\n"
        "  __local int tile[64];\n"
        "  size_t gx = get_global_id(0), gy = get_global_id(1), id = gy * get_global_size(0) + gx;\n"
        "  uint l = (uint)(get_local_id(1) * get_local_size(0) + get_local_id(0));\n"
        "  tile[l] = in[id] * 2;\n"
        "  out[id] = tile[l];\n"
        "  barrier(CLK_LOCAL_MEM_FENCE);\n"
        "  if (l == 0) { for (uint t = 0; t < 64u; t++) out[id] += tile[t]; }\n"
        "  if (id % 1000 == 7) { for (uint t = 0; t < 64u; t++) out[id] ^= tile[t]; }\n"
        "}\n";
    size_t n = 96 * 5468;
    *j = (struct job){src, "", "barrier_rows", 2, {96, 5468}, {16, 4}, {0}, true, false, 0, 2,
                      {BUF(n * 4, rnd_u32(n, 0, 0)), BUF(n * 4, poison(n * 4))}};
}

/* A read-modify-write on pages found by faults (perm's indices: the inspector reads 0), then a
 * gather whose address depends on the value written, which faults again in the retry: the
 * retry restores the faulted pages from the host, which must then hold what earlier
 * partitions wrote there (random kernels, seeds 200009 and 200040: one work-group's stores
 * to b were undone, or applied twice). */
static void make_fault_rmw(struct job *j)
{
    static const char *src =
        "__kernel void fault_rmw(__global const uint *perm, __global uint *b, __global const uint *tab,\n"
        "                        __global uint *out) {\n"
        "  size_t i = get_global_id(0); uint k = perm[i];\n"
        "  b[k] ^= 0x9e3779b9u * (uint)(i + 1);\n"
        "  uint v = b[k];\n"
        "  out[i] = tab[i * 4 + (v & 2047u)];\n"
        "}\n";
    uint32_t *perm = malloc(fn * 4);
    for (size_t t = 0; t < fn; t++)
        perm[t] = (uint32_t)(t ^ 1);
    size_t tn = fn * 4 + 2048;
    *j = (struct job){src, "", "fault_rmw", 1, {fn}, {64}, {0}, true, false, 0, 4,
                      {BUF(fn * 4, perm), BUF(fn * 4, rnd_u32(fn, 0, 0)), BUF(tn * 4, rnd_u32(tn, 0, 0)),
                       BUF(fn * 4, poison(fn * 4))}};
}

static const struct xlat_test tests[] = {
    {"fault_div", "fault_div", 3, 1, make_fault_div},
    {"fault_loop", "fault_loop", 3, 1, make_fault_loop},
    {"fault_local", "fault_local", 3, 1, make_fault_local},
    {"fault_rmw", "fault_rmw", 8, 1, make_fault_rmw},
    {"straddle_struct", "straddle_struct", 4, 1, make_straddle_struct},
    {"straddle_packed", "straddle_packed", 8, 0, make_straddle_packed},
    {"straddle_vec", "straddle_vec", 8, 0, make_straddle_vec},
    {"barrier_rows", "barrier_rows", 3, 0, make_barrier_rows},
};
#define NTESTS (sizeof tests / sizeof tests[0])

/* The test's job, seeded as in every run: VAST must run it. */
static void make(const void *c, const char *arg, struct harness_twin *tw)
{
    (void)arg;
    seed = 0x2545f4914f6cdd1dull;
    ((const struct xlat_test *)c)->make(&tw->job);
}

/* One run with 4 KiB pages at a fraction of the data. */
static int runs(const void *c, const struct harness_opts *o, struct harness_run *out, size_t max)
{
    (void)o, (void)max;
    struct harness_twin tw = {0};
    make(c, NULL, &tw);
    out[0] = (struct harness_run){.name = ((const struct xlat_test *)c)->name, .page = 4096, .quiet = true,
                                  .timeout_s = 60, .ws = job_ws(&tw.job)};
    out[0].budget = harness_budget(out[0].ws, ((const struct xlat_test *)c)->frac, 4096);
    job_free_inputs(&tw.job);
    return 1;
}

/* Partitioned, and where the test says so with faults (a timeout: most likely a runaway loop). */
static void judge(const void *c, const struct harness_run *run, const char *out, char *why, size_t n, char *what,
                  size_t nwhat)
{
    const struct xlat_test *t = c;
    long long parts = harness_stat(out, t->kernel, "partitioned", "partitions");
    long long faults = harness_stat(out, t->kernel, "partitioned", "faults");
    snprintf(what, nwhat, "%-16s budget %6zuK partitions=%lld faults=%lld", t->name, run->budget >> 10, parts, faults);
    if (parts < 2)
        snprintf(why, n, "no VAST_STATS line 'kernel=%s mode=partitioned' with partitions >= 2", t->kernel);
    else if (t->faults && faults <= 0)
        snprintf(why, n, "faults=%lld: no work-group faulted, the case proves nothing", faults);
}

int main(int argc, char **argv)
{
    static const struct harness_prog prog = {
        tests, NTESTS, sizeof tests[0], "runs", {0}, false, make, NULL, runs, judge};
    return harness_main(argc, argv, &prog);
}
