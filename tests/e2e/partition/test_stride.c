/* test_stride.c - grid-stride loops (issue 13, defect 8) through the OpenCL API: kernels
 * shaped like pyopencl's elementwise ones, whose small NDRange loops over data many times the
 * device budget, so that one work-group alone touches every page. Each runs on PoCL and
 * through VAST in one process (ICD mode) at 4 MiB with 64 KiB pages and at 256 KiB with
 * 4 KiB pages; results must be byte-identical.
 *
 *   axpb       pyopencl's elementwise kernel: pointer offsets in loop_prep (x's is not 0),
 *              `long i` declared before `for (i = work_group_start + lid; i < n; i += gsize)`,
 *              an empty after_loop; z = a*x + b*y over an odd n; launched twice (the second
 *              launch reuses the plan)
 *   range      pyopencl's use_range variant with its sign test, start 5, step 3
 *   range_neg  the same kernel with a negative step (start n - 1, stop 0, step -2)
 *   hash       integer work, `for (size_t i = get_global_id(0); ...)`: bit-identical
 *   gather     out[i] = x[idx[i]] * 3: data-dependent reads fault (required with 4 KiB pages)
 *              and the faulted work-groups run again with the same iteration range
 *   inplace    y[i] = y[i] * a + x[i], launched twice: not safe to re-execute (restored
 *              around retries, one partition at a time)
 *   accum      an accumulator (acc += a[i] * a[i], stored after the loop): not a grid-stride
 *              loop that splits freely, but a resumable one (translate/resume.c): its ranges
 *              run with the accumulator saved between them (before resumable loops: refused)
 *
 * The grid-stride cases must run partitioned (VAST_STATS partitions >= 2) with a "vast: info:"
 * line saying that the kernel's loops ran in iteration ranges. Usage:
 *   partition_stride [--pages 4K,64K] [--only NAME[,NAME]] [--flip]
 * --flip flips one byte of VAST's result: every case that ran must then FAIL. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum expect { STRIDED, CORRECT_OR_REFUSED };

struct stride_test {
    const char *name, *kernel;
    enum expect expect;
    void (*make)(struct job *j, size_t page);
    bool faults_4k; /* with 4 KiB pages, VAST_STATS must show faults and retries */
};

static uint64_t seed;
static void *rnd_f32(size_t n) { return harness_rnd_f32(&seed, n); }
static void *rnd_u32(size_t n) { return harness_rnd_u32(&seed, n, 0); }
static void *poison(size_t bytes) { return harness_poison(bytes); }

/* Elements per array: data about 9x the 4 MiB budget with 64 KiB pages, 14x the 256 KiB one
 * with 4 KiB pages; odd, so that no array ends on a page boundary. */
static long elements(size_t page)
{
    return page >= (64u << 10) ? 3000017 : 300007;
}

#define PYOPENCL_HEAD(args)                                                                      \
    "#define PYOPENCL_ELWISE_CONTINUE continue\n"                                                \
    "__kernel void " args "\n{\n"                                                                \
    "  int lid = get_local_id(0);\n"                                                             \
    "  int gsize = get_global_size(0);\n"                                                        \
    "  int work_group_start = get_local_size(0)*get_group_id(0);\n"                              \
    "  long i;\n"                                                                                \
    "  __global float *z = (__global float *) ((__global char *) z__base + z__offset);\n"        \
    "  __global float *x = (__global float *) ((__global char *) x__base + x__offset);\n"        \
    "  __global float *y = (__global float *) ((__global char *) y__base + y__offset);\n"        \
    "  ;\n"

static float s_a = 1.75f, s_b = -0.5f;
static long s_n, s_off0 = 0, s_xoff = 12, s_start, s_stop, s_step;

static void make_axpb(struct job *j, size_t page)
{
    static const char *src = PYOPENCL_HEAD(
        "axpb(__global float *z__base, long z__offset, float a, __global float *x__base, long x__offset,"
        " float b, __global float *y__base, long y__offset, long n)")
        "  for (i = work_group_start + lid; i < n; i += gsize)\n"
        "  {\n"
        "    z[i] = a*x[i] + b*y[i];\n"
        "  }\n"
        "  ;\n"
        "}\n";
    s_n = elements(page);
    size_t n = (size_t)s_n;
    *j = (struct job){src, "", "axpb", 1, {8192}, {128}, {0}, true, false, 2, 9,
                      {BUF(n * 4, poison(n * 4)), SCAL(s_off0), SCAL(s_a), BUF(n * 4 + 12, rnd_f32(n + 3)),
                       SCAL(s_xoff), SCAL(s_b), BUF(n * 4, rnd_f32(n)), SCAL(s_off0), SCAL(s_n)}};
}

static const char *src_range = PYOPENCL_HEAD(
    "axpb_range(__global float *z__base, long z__offset, float a, __global float *x__base, long x__offset,"
    " float b, __global float *y__base, long y__offset, long start, long stop, long step)")
    "  if (step < 0)\n"
    "  {\n"
    "    for (i = start + (work_group_start + lid)*step;\n"
    "      i > stop; i += gsize*step)\n"
    "    {\n"
    "      z[i] = a*x[i] + b*y[i];\n"
    "    }\n"
    "  }\n"
    "  else\n"
    "  {\n"
    "    for (i = start + (work_group_start + lid)*step;\n"
    "      i < stop; i += gsize*step)\n"
    "    {\n"
    "      z[i] = a*x[i] + b*y[i];\n"
    "    }\n"
    "  }\n"
    "  ;\n"
    "}\n";

static void make_range_any(struct job *j, size_t page, long start, long stop, long step)
{
    s_n = elements(page);
    size_t n = (size_t)s_n;
    s_start = start, s_stop = stop, s_step = step;
    *j = (struct job){src_range, "", "axpb_range", 1, {4096}, {64}, {0}, true, false, 0, 11,
                      {BUF(n * 4, poison(n * 4)), SCAL(s_off0), SCAL(s_a), BUF(n * 4 + 12, rnd_f32(n + 3)),
                       SCAL(s_xoff), SCAL(s_b), BUF(n * 4, rnd_f32(n)), SCAL(s_off0), SCAL(s_start),
                       SCAL(s_stop), SCAL(s_step)}};
}
static void make_range(struct job *j, size_t page) { make_range_any(j, page, 5, elements(page) - 2, 3); }
static void make_range_neg(struct job *j, size_t page) { make_range_any(j, page, elements(page) - 1, 0, -2); }

static cl_uint s_un;
static void make_hash(struct job *j, size_t page)
{
    static const char *src =
        "__kernel void hash(__global const uint *in, __global uint *out, uint n) {\n"
        "  for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) {\n"
        "    uint v = in[i] * 2654435761u;\n"
        "    out[i] = v ^ (v >> 13) ^ (uint)i;\n"
        "  }\n"
        "}\n";
    s_un = (cl_uint)elements(page);
    size_t n = s_un;
    *j = (struct job){src, "", "hash", 1, {6144}, {96}, {0}, true, false, 0, 3,
                      {BUF(n * 4, rnd_u32(n)), BUF(n * 4, poison(n * 4)), SCAL(s_un)}};
}

static cl_uint s_nx = 12007;
static void make_gather(struct job *j, size_t page)
{
    static const char *src =
        "__kernel void gather(__global const uint *idx, __global const float *x, __global float *out, long n) {\n"
        "  for (long i = get_global_id(0); i < n; i += get_global_size(0)) { out[i] = x[idx[i]] * 3.0f; }\n"
        "}\n";
    s_n = elements(page);
    size_t n = (size_t)s_n;
    uint32_t *idx = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        idx[i] = (uint32_t)(harness_rand(&seed) % s_nx);
    *j = (struct job){src, "", "gather", 1, {8192}, {64}, {0}, true, false, 0, 4,
                      {BUF(n * 4, idx), BUF(s_nx * 4, rnd_f32(s_nx)), BUF(n * 4, poison(n * 4)), SCAL(s_n)}};
}

static void make_inplace(struct job *j, size_t page)
{
    static const char *src =
        "__kernel void inplace(__global float *y, __global const float *x, float a, long n) {\n"
        "  long i;\n"
        "  for (i = get_global_id(0); i < n; i += get_global_size(0)) { y[i] = y[i] * a + x[i]; }\n"
        "}\n";
    s_n = elements(page);
    size_t n = (size_t)s_n;
    *j = (struct job){src, "", "inplace", 1, {4096}, {128}, {0}, true, false, 2, 4,
                      {BUF(n * 4, rnd_f32(n)), BUF(n * 4, rnd_f32(n)), SCAL(s_a), SCAL(s_n)}};
}

static void make_accum(struct job *j, size_t page)
{
    static const char *src =
        "__kernel void accum(__global const float *a, __global float *out, long n) {\n"
        "  float acc = 0; long i;\n"
        "  for (i = get_global_id(0); i < n; i += get_global_size(0)) { acc += a[i] * a[i]; }\n"
        "  out[get_global_id(0)] = acc;\n"
        "}\n";
    s_n = elements(page) * 3;
    size_t n = (size_t)s_n;
    *j = (struct job){src, "", "accum", 1, {8192}, {128}, {0}, true, false, 0, 3,
                      {BUF(n * 4, rnd_f32(n)), BUF(8192 * 4, poison(8192 * 4)), SCAL(s_n)}};
}

static const struct stride_test tests[] = {
    {"axpb", "axpb", STRIDED, make_axpb, false},
    {"range", "axpb_range", STRIDED, make_range, false},
    {"range_neg", "axpb_range", STRIDED, make_range_neg, false},
    {"hash", "hash", STRIDED, make_hash, false},
    {"gather", "gather", STRIDED, make_gather, true},
    {"inplace", "inplace", STRIDED, make_inplace, false},
    {"accum", "accum", STRIDED, make_accum, false},
};
#define NTESTS (sizeof tests / sizeof tests[0])

/* The test's job at the page size the child is given; an accumulator may be refused. */
static void make(const void *c, const char *page, struct harness_twin *tw)
{
    const struct stride_test *t = c;
    seed = 0x9e3779b97f4a7c15ull;
    t->make(&tw->job, harness_parse_size(page));
    tw->expect = t->expect == CORRECT_OR_REFUSED ? HX_RUNS_OR_REFUSED : HX_RUNS;
}

/* One run per page size: 4 MiB with 64 KiB pages, 256 KiB with smaller ones. */
static int runs(const void *c, const struct harness_opts *o, struct harness_run *out, size_t max)
{
    size_t pages[8], n = harness_sizes(o->pages, pages, max < 8 ? max : 8);
    for (size_t p = 0; p < n; p++) {
        out[p] = (struct harness_run){.name = *(const char *const *)c, .page = pages[p],
                                      .budget = pages[p] >= (64u << 10) ? 4u << 20 : 256u << 10};
        snprintf(out[p].arg, sizeof out[p].arg, "%zu", pages[p]);
        struct harness_twin tw = {0};
        make(c, out[p].arg, &tw);
        out[p].ws = job_ws(&tw.job);
        job_free_inputs(&tw.job);
    }
    return (int)n;
}

/* Grid-stride loops ran in iteration ranges, partitioned; an accumulator's did not. */
static void judge(const void *c, const struct harness_run *run, const char *out, char *why, size_t n, char *what,
                  size_t nwhat)
{
    static const char *const reason_wg[] = {"work-group", "work group", NULL};
    const struct stride_test *t = c;
    const char *const ranges[] = {t->kernel, "iteration ranges", NULL};
    long long parts = harness_stat(out, t->kernel, "partitioned", "partitions");
    bool refused = strstr(out, ": refused\n") != NULL;
    snprintf(what, nwhat, "%-10s page %3zuK budget %5zuK (ws %zuK) partitions=%lld%s", t->name, run->page >> 10,
             run->budget >> 10, run->ws >> 10, parts, refused ? " refused" : "");
    if (t->expect == STRIDED && parts < 2)
        snprintf(why, n, "no VAST_STATS line 'kernel=%s mode=partitioned' with partitions >= 2", t->kernel);
    else if (t->faults_4k && run->page == (4u << 10) &&
             (harness_stat(out, t->kernel, "partitioned", "faults") <= 0 ||
              harness_stat(out, t->kernel, "partitioned", "retries") <= 0))
        snprintf(why, n, "no faults and retries: the retry path of iteration ranges was not exercised");
    else if (t->expect == STRIDED && !harness_find_line(out, "vast: info:", ranges))
        snprintf(why, n, "no 'vast: info:' line saying that '%s' ran its loops in iteration ranges", t->kernel);
    else if (refused && !harness_refusal_logged(out, t->kernel, reason_wg))
        snprintf(why, n, "refused without a 'vast: error:' line naming '%s' and the reason", t->kernel);
    else if (!refused && t->expect == CORRECT_OR_REFUSED && harness_find_line(out, "vast: info:", ranges))
        snprintf(why, n, "the accumulator's loop was split into iteration ranges");
}

int main(int argc, char **argv)
{
    static const struct harness_prog prog = {
        tests, NTESTS, sizeof tests[0], "runs", {.pages = "4K,64K"}, true, make, NULL, runs, judge};
    return harness_main(argc, argv, &prog);
}
