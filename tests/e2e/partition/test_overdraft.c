/* test_overdraft.c - one work-group larger than the budget (issue 13): the overdraft.
 *
 * Kernels whose work-items meet (barriers, a __local tile), so a work-group cannot run in
 * slices, and whose one work-group touches more pages than the budget holds:
 *  - tile: every work-group loads 64 pages of x into a __local tile (affine, known at
 *    enqueue). With the overdraft (VAST_OVERDRAFT's default) it runs, bit-identical to PoCL,
 *    borrowing frames past the budget (VAST_STATS overdrafts >= 1); with VAST_OVERDRAFT=0 it
 *    is refused by clEnqueueNDRangeKernel itself, every buffer untouched.
 *  - gather: the same shape through indices (data-dependent: seen only as faults at run time);
 *    work-group 2500 gathers from all over x, the others from their own pages. With the
 *    overdraft it runs; with VAST_OVERDRAFT=0 it is refused at run time, after the partitions
 *    before it ran and wrote, and the output must still be exactly as before the launch (the
 *    poison intact): a refused launch leaves nothing half done.
 * Budget 256 KiB of 4 KiB pages (64 frames); the data is larger, sizes are no page multiples. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t seed;

struct od_case {
    const char *name, *kernel;
    void (*make)(struct job *j);
    enum harness_expect expect;
    const char *env; /* NULL: VAST's default overdraft */
    bool faults;     /* the overdraft is taken at run time, after faults */
};

#define LOCAL 64
#define X_STRIDE 1025 /* uints: a work-item's load is one page and 4 bytes past the previous one */

static cl_uint s_nx;

static const char *src_tile =
    "__kernel void tile(__global const uint *x, __global uint *out, uint nx, __local uint *t) {\n"
    "  size_t l = get_local_id(0), g = get_global_id(0), w = get_group_id(0);\n"
    "  t[l] = x[(w * 61 % 4096 + l * 1025) % nx];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  out[g] = t[l] * 2654435761u ^ t[(l + 1) % get_local_size(0)] ^ (uint)g;\n"
    "}\n";

static void make_tile(struct job *j)
{
    size_t groups = 301, n = groups * LOCAL;
    s_nx = LOCAL * X_STRIDE + 4097; /* 66 pages and a part: not a page multiple */
    *j = (struct job){src_tile, "", "tile", 1, {n}, {LOCAL}, {0}, true, false, 0, 4,
                      {BUF(s_nx * 4, harness_rnd_u32(&seed, s_nx, 0)), BUF(n * 4, harness_poison(n * 4)),
                       SCAL(s_nx), {JA_LOCAL, LOCAL * 4, NULL}}};
}

static const char *src_gather =
    "__kernel void gather(__global const uint *x, __global const uint *idx, __global uint *out,\n"
    "                     __local uint *t) {\n"
    "  size_t l = get_local_id(0), g = get_global_id(0);\n"
    "  t[l] = x[idx[g]];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  out[g] = t[l] * 2654435761u ^ t[(l + 1) % get_local_size(0)] ^ (uint)g;\n"
    "}\n";

#define GATHER_GROUPS 3001
#define WIDE_GROUP 2500

static void make_gather(struct job *j)
{
    size_t n = (size_t)GATHER_GROUPS * LOCAL;
    s_nx = 257 * 1024 + 333;
    uint32_t *idx = malloc(n * 4);
    for (size_t g = 0; g < n; g++) /* near its own index, so its pages are few ... */
        idx[g] = (uint32_t)((g / 4 + harness_rand(&seed) % 64) % s_nx);
    for (size_t l = 0; l < LOCAL; l++) /* ... but one work-group's land on 64 pages of x */
        idx[WIDE_GROUP * LOCAL + l] = (uint32_t)((l * 4 * 1024 + harness_rand(&seed) % 1024) % s_nx);
    *j = (struct job){src_gather, "", "gather", 1, {n}, {LOCAL}, {0}, true, false, 0, 4,
                      {BUF(s_nx * 4, harness_rnd_u32(&seed, s_nx, 0)), BUF(n * 4, idx), BUF(n * 4, harness_poison(n * 4)),
                       {JA_LOCAL, LOCAL * 4, NULL}}};
}

static const struct od_case cases[] = {
    {"tile", "tile", make_tile, HX_RUNS, NULL, false},
    {"tile_off", "tile", make_tile, HX_REFUSED_AT_ENQUEUE, "VAST_OVERDRAFT=0", false},
    {"gather", "gather", make_gather, HX_RUNS, NULL, true},
    {"gather_off", "gather", make_gather, HX_REFUSED, "VAST_OVERDRAFT=0", true},
};
#define NCASES (sizeof cases / sizeof cases[0])

static void make(const void *c, const char *arg, struct harness_twin *tw)
{
    (void)arg;
    const struct od_case *t = c;
    seed = 0x2545f4914f6cdd1dull;
    t->make(&tw->job);
    tw->expect = t->expect;
}

static int runs(const void *c, const struct harness_opts *o, struct harness_run *out, size_t max)
{
    (void)o;
    if (max < 1)
        return 0;
    const struct od_case *t = c;
    out[0] = (struct harness_run){.name = t->name, .page = 4u << 10, .budget = 256u << 10, .env = t->env};
    struct harness_twin tw = {0};
    make(c, "", &tw);
    out[0].ws = job_ws(&tw.job);
    job_free_inputs(&tw.job);
    return 1;
}

/* Runs: partitioned, with a loan past the budget. Refused: the log names the kernel, the
 * budget and the overdraft. */
static void judge(const void *c, const struct harness_run *run, const char *out, char *why, size_t n, char *what,
                  size_t nwhat)
{
    static const char *const reason[] = {"VAST_OVERDRAFT", NULL};
    const struct od_case *t = c;
    long long parts = harness_stat(out, t->kernel, "partitioned", "partitions");
    long long loans = harness_stat(out, t->kernel, "partitioned", "overdrafts");
    long long faults = harness_stat(out, t->kernel, "partitioned", "faults");
    snprintf(what, nwhat, "%-10s budget %zuK (ws %zuK) partitions=%lld overdrafts=%lld faults=%lld", t->name,
             run->budget >> 10, run->ws >> 10, parts, loans, faults);
    if (t->expect == HX_RUNS && (parts < 2 || loans < 1))
        snprintf(why, n, "no VAST_STATS line 'kernel=%s mode=partitioned' with partitions >= 2 and overdrafts >= 1",
                 t->kernel);
    else if (t->expect == HX_RUNS && t->faults && faults < 1)
        snprintf(why, n, "no faults: the loan at run time was not exercised");
    else if (t->expect != HX_RUNS && !harness_refusal_logged(out, t->kernel, reason))
        snprintf(why, n, "refused without a 'vast: error:' line naming '%s' and VAST_OVERDRAFT", t->kernel);
}

int main(int argc, char **argv)
{
    static const struct harness_prog prog = {cases, NCASES, sizeof cases[0], "cases", {0}, false, make, NULL, runs, judge};
    return harness_main(argc, argv, &prog);
}
