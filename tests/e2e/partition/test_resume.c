/* test_resume.c - resumable loops (issue 13, items 6 and 8): a work-item's or work-group's loop
 * that walks more data than the device budget while carrying state from one iteration to the
 * next. Each runs on PoCL and through VAST in one process (ICD mode) at 4 MiB with 64 KiB pages
 * and at 256 KiB with 4 KiB pages; results must be byte-identical (integer work).
 *
 *   gen       a generator-like state in a struct and two more privates, in a `while` loop
 *             over strided outputs (pyopencl's Philox/Threefry shape), stored after the loop
 *   gemv      CLBlast's Xgemv shape: a __local tile of x loaded per iteration behind barriers,
 *             a private accumulator array carried across iterations, a for-declared counter,
 *             a tail loop and the store after the loop; y read and written (y = acc + 3y)
 *   gemv_perm the same with data-dependent columns (A[perm[k]], shuffled within blocks of 16):
 *             the inspector sees zeros, so the work-groups fault, outgrow the budget with their
 *             faulted pages and run their loops in parts (peeled iteration ranges), each part
 *             faulting and running again from the saved state (required with 4 KiB pages)
 *   accum     an accumulator stored after a grid-stride loop (before: refused or not split)
 *
 * Every case must run partitioned (VAST_STATS partitions >= 2) with a "vast: info:" line saying
 * that its loops ran in iteration ranges; before resumable loops, each was refused. Usage:
 *   partition_resume [--pages 4K,64K] [--only NAME[,NAME]] [--flip]
 * --flip flips one byte of VAST's result: every case that ran must then FAIL. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct resume_test {
    const char *name, *kernel;
    void (*make)(struct job *j, size_t page);
    bool faults_4k; /* with 4 KiB pages, VAST_STATS must show faults and retries */
};

static uint64_t seed;
static void *rnd_u32(size_t n) { return harness_rnd_u32(&seed, n, 0); }
static void *poison(size_t bytes) { return harness_poison(bytes); }

static bool big(size_t page) { return page >= (64u << 10); }

static cl_ulong s_n;
static void make_gen(struct job *j, size_t page)
{
    static const char *src =
        "typedef struct { uint a, b; uint2 c; } state_t;\n"
        "__kernel void gen(__global const uint *seed, __global uint *out, ulong n, __global uint *fin) {\n"
        "  state_t s; s.a = (uint)get_global_id(0) * 2654435761u; s.b = 17u; s.c = (uint2)(3u, 5u);\n"
        "  uint cnt = 0;\n"
        "  ulong idx = get_global_id(0) * 2;\n"
        "  while (idx + 2 < n) {\n"
        "    s.a = s.a * 1664525u + 1013904223u + seed[idx / 2]; s.b ^= s.a >> 3; s.c += (uint2)(s.b, s.a);\n"
        "    out[idx] = s.a ^ s.c.x; out[idx + 1] = s.b ^ s.c.y; cnt++;\n"
        "    idx += 2 * get_global_size(0);\n"
        "  }\n"
        "  if (idx < n) out[idx] = s.c.x;\n"
        "  fin[get_global_id(0)] = s.a + s.b + s.c.x + s.c.y + cnt;\n"
        "}\n";
    s_n = big(page) ? 3000017 : 300007; /* about 11x either budget */
    size_t n = (size_t)s_n, items = 2048, ns = n / 2 + 1;
    *j = (struct job){src, "", "gen", 1, {items}, {64}, {0}, true, false, 2, 4,
                      {BUF(ns * 4, rnd_u32(ns)), BUF(n * 4, poison(n * 4)), SCAL(s_n),
                       BUF(items * 4, poison(items * 4))}};
}

#define GEMV_SRC(name, col)                                                                       \
    "#define WGS 64\n#define WPT 2\n"                                                             \
    "__kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))\n"                                \
    "void " name "(const int m, const int n, __global const uint *agm, const int a_ld,\n"         \
    "          __global const uint *xgm, __global uint *ygm, __global const int *perm) {\n"     \
    "  __local uint xlm[WGS];\n"                                                                  \
    "  uint acc[WPT];\n"                                                                          \
    "  for (int w = 0; w < WPT; w += 1) acc[w] = 0;\n"                                            \
    "  const int n_tail = n % WGS;\n"                                                             \
    "  const int n_floor = n - n_tail;\n"                                                         \
    "  for (int kwg = 0; kwg < n_floor; kwg += WGS) {\n"                                          \
    "    const int lid = get_local_id(0);\n"                                                      \
    "    xlm[lid] = xgm[kwg + lid];\n"                                                            \
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"                                                         \
    "    for (int w = 0; w < WPT; w += 1) {\n"                                                    \
    "      const int gid = w * get_global_size(0) + get_global_id(0);\n"                          \
    "      if (gid < m) {\n"                                                                      \
    "        for (int kl = 0; kl < WGS; ++kl) {\n"                                                \
    "          int k = kwg + kl;\n"                                                               \
    "          acc[w] = acc[w] * 3u + agm[(" col ") * a_ld + gid] * xlm[kl];\n"                    \
    "        }\n"                                                                                 \
    "      }\n"                                                                                   \
    "    }\n"                                                                                     \
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"                                                         \
    "  }\n"                                                                                       \
    "  for (int w = 0; w < WPT; w += 1) {\n"                                                      \
    "    const int gid = w * get_global_size(0) + get_global_id(0);\n"                            \
    "    if (gid < m) {\n"                                                                        \
    "      for (int k = n_floor; k < n; ++k) acc[w] = acc[w] * 3u + agm[(" col ") * a_ld + gid] * xgm[k];\n" \
    "      ygm[gid] = acc[w] + 3u * ygm[gid];\n"                                                  \
    "    }\n"                                                                                     \
    "  }\n"                                                                                       \
    "}\n"

static cl_int s_m = 300, s_cols, s_ld = 301;
static void make_gemv_any(struct job *j, size_t page, const char *src, const char *kernel, bool permuted)
{
    /* a column is 1204 bytes: one iteration (64 columns) fits either budget, one work-group's
     * whole loop does not (about 1.2 MiB at 4 KiB pages, 4.8 MiB at 64 KiB) */
    s_cols = big(page) ? 4001 : 1001;
    size_t cols = (size_t)s_cols, a = cols * (size_t)s_ld;
    int *perm = malloc(cols * sizeof *perm);
    for (size_t i = 0; i < cols; i++)
        perm[i] = (int)i;
    for (size_t i = cols - 1; permuted && i > 0; i--) { /* shuffled within blocks of 16 columns */
        size_t k = (i & ~(size_t)15) + harness_rand(&seed) % ((i & 15) + 1);
        int t = perm[i];
        perm[i] = perm[k], perm[k] = t;
    }
    *j = (struct job){src, "", kernel, 1, {192}, {64}, {0}, true, false, 2, 7,
                      {SCAL(s_m), SCAL(s_cols), BUF(a * 4, rnd_u32(a)), SCAL(s_ld), BUF(cols * 4, rnd_u32(cols)),
                       BUF((size_t)s_m * 4, rnd_u32((size_t)s_m)), BUF(cols * 4, perm)}};
}
static void make_gemv(struct job *j, size_t page) { make_gemv_any(j, page, GEMV_SRC("gemv", "k"), "gemv", false); }
static void make_gemv_perm(struct job *j, size_t page)
{
    make_gemv_any(j, page, GEMV_SRC("gemv_perm", "perm[k]"), "gemv_perm", true);
}

static cl_long s_ln;
static void make_accum(struct job *j, size_t page)
{
    static const char *src =
        "__kernel void accum(__global const uint *a, __global uint *out, long n) {\n"
        "  uint acc = 0; long i;\n"
        "  for (i = get_global_id(0); i < n; i += get_global_size(0)) { acc = acc * 5u + a[i] * a[i]; }\n"
        "  out[get_global_id(0)] = acc;\n"
        "}\n";
    s_ln = big(page) ? 3000017 * 3 : 300007 * 3;
    size_t n = (size_t)s_ln;
    *j = (struct job){src, "", "accum", 1, {8192}, {128}, {0}, true, false, 0, 3,
                      {BUF(n * 4, rnd_u32(n)), BUF(8192 * 4, poison(8192 * 4)), SCAL(s_ln)}};
}

static const struct resume_test tests[] = {
    {"gen", "gen", make_gen, false},
    {"gemv", "gemv", make_gemv, false},
    {"gemv_perm", "gemv_perm", make_gemv_perm, true},
    {"accum", "accum", make_accum, false},
};
#define NTESTS (sizeof tests / sizeof tests[0])

static void make(const void *c, const char *page, struct harness_twin *tw)
{
    const struct resume_test *t = c;
    seed = 0x9e3779b97f4a7c15ull;
    t->make(&tw->job, harness_parse_size(page));
    tw->expect = HX_RUNS;
}

/* One run per page size: 4 MiB with 64 KiB pages, 256 KiB with smaller ones. */
static int runs(const void *c, const struct harness_opts *o, struct harness_run *out, size_t max)
{
    size_t pages[8], n = harness_sizes(o->pages, pages, max < 8 ? max : 8);
    for (size_t p = 0; p < n; p++) {
        out[p] = (struct harness_run){.name = *(const char *const *)c, .page = pages[p],
                                      .budget = big(pages[p]) ? 4u << 20 : 256u << 10};
        snprintf(out[p].arg, sizeof out[p].arg, "%zu", pages[p]);
        struct harness_twin tw = {0};
        make(c, out[p].arg, &tw);
        out[p].ws = job_ws(&tw.job);
        job_free_inputs(&tw.job);
    }
    return (int)n;
}

static void judge(const void *c, const struct harness_run *run, const char *out, char *why, size_t n, char *what,
                  size_t nwhat)
{
    const struct resume_test *t = c;
    const char *const ranges[] = {t->kernel, "iteration ranges", NULL};
    long long parts = harness_stat(out, t->kernel, "partitioned", "partitions");
    snprintf(what, nwhat, "%-10s page %3zuK budget %5zuK (ws %zuK) partitions=%lld", t->name, run->page >> 10,
             run->budget >> 10, run->ws >> 10, parts);
    if (parts < 2)
        snprintf(why, n, "no VAST_STATS line 'kernel=%s mode=partitioned' with partitions >= 2", t->kernel);
    else if (t->faults_4k && run->page == (4u << 10) &&
             (harness_stat(out, t->kernel, "partitioned", "faults") <= 0 ||
              harness_stat(out, t->kernel, "partitioned", "retries") <= 0))
        snprintf(why, n, "no faults and retries: the retry path of resumable ranges was not exercised");
    else if (!harness_find_line(out, "vast: info:", ranges))
        snprintf(why, n, "no 'vast: info:' line saying that '%s' ran its loops in iteration ranges", t->kernel);
    else if (harness_stat(out, t->kernel, "partitioned", "spill_bytes") <= 0)
        snprintf(why, n, "no spill area counted (VAST_STATS spill_bytes)");
}

int main(int argc, char **argv)
{
    static const struct harness_prog prog = {
        tests, NTESTS, sizeof tests[0], "runs", {.pages = "4K,64K"}, true, make, NULL, runs, judge};
    return harness_main(argc, argv, &prog);
}
