/* test_faults.c - fault records must not survive a launch (issue 13, defect 3): sequences of
 * launches of different kernels and sizes on one context, each run on PoCL and through VAST
 * in one process, every kept output compared byte for byte. The paged engine keeps per-thread
 * host tables (page tables, fault log headers) and per-kernel plans across launches; what
 * launch A leaves there must never be read by launch B as a fault of its own.
 *
 *   gather_other_gather  1M/4K: out[i] = x[idx[i]] (x 2 MiB, idx/out 512 KiB, odd sizes,
 *                        work-groups of 64), a different kernel over two 4 MiB buffers, the
 *                        gather again over the same buffers with new indices
 *   forced_mix           VAST_FORCE_PAGED=1 at the default budget: histogram (atomics),
 *                        2-D stencil, vload4/vstore4, particles (struct), scatter through a
 *                        permutation, each at four different sizes, interleaved
 *   mix_2M_4K, mix_4M_64K the same kernels over data larger than the budget (partitioned)
 *   scatter_2M_4K        y[perm[i]] = f(x[i]) at 2M/4K, larger than the budget, before and
 *                        after a launch over more pages (issue 13 saw such a scatter refused:
 *                        "work-group N needs 2050 pages", where one work-group touches ~70)
 *   gather_wide_256K     256K/4K: work-groups that need ~53 of the budget's 64 pages; they
 *                        fit alone, not beside the pages other work-groups faulted before
 *                        (defect 6's overestimate: refused as "needs 68 pages")
 *   reach_fails          VAST_FORCE_PAGED=1: a kernel that reads pages past its last buffer;
 *                        its work-group's later store is dropped, so VAST must fail the
 *                        launch (CL_OUT_OF_RESOURCES, a "vast: error:" line saying "out of
 *                        bounds"), not report success
 *
 * Every other kernel here stays inside its buffers: an "out of bounds" line in the child's
 * output fails the case, and so does any "vast: error:" line (nothing is refused) and a case
 * in which VAST never ran a paged kernel (the sequence must exercise the paged engine).
 * Usage: partition_faults [--only NAME[,NAME]] [--flip]; --flip flips a byte of VAST's
 * output before comparing: every case that compares (all but reach_fails) must then fail. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src =
    "typedef struct { float4 pos; float4 vel; } particle;\n"
    "__kernel void gather(__global const float *x, __global const uint *idx, __global float *out, uint n) {\n"
    "  size_t i = get_global_id(0); if (i < n) out[i] = x[idx[i]];\n"
    "}\n"
    "__kernel void other(__global const uint *a, __global uint *b, uint n) {\n"
    "  size_t i = get_global_id(0); if (i < n) b[i] = a[i] * 2654435761u + (uint)i;\n"
    "}\n"
    "__kernel void histogram(__global const uint *d, __global uint *bins, __global uint *counter, uint n,\n"
    "                        uint nbins) {\n"
    "  size_t i = get_global_id(0); if (i >= n) return;\n"
    "  uint v = d[i]; atomic_inc(&bins[v % nbins]); atomic_add(counter, v >> 24);\n"
    "}\n"
    "__kernel void stencil(__global const float *in, __global float *out, uint w, uint h) {\n"
    "  size_t x = get_global_id(0), y = get_global_id(1);\n"
    "  if (x >= w || y >= h) return;\n"
    "  size_t c = y * w + x;\n"
    "  if (x == 0 || y == 0 || x == w - 1 || y == h - 1) { out[c] = in[c]; return; }\n"
    "  out[c] = 0.5f * in[c] + 0.125f * (in[c - 1] + in[c + 1] + in[c - w] + in[c + w]);\n"
    "}\n"
    "__kernel void vec4(__global const float *a, __global float *b, uint n4) {\n"
    "  size_t i = get_global_id(0); if (i >= n4) return;\n"
    "  float4 v = vload4(i, a + 1); vstore4(v * 2.0f + 1.0f, i, b + 3);\n"
    "}\n"
    "__kernel void particles(__global particle *p, uint n, float dt) {\n"
    "  size_t i = get_global_id(0); if (i >= n) return;\n"
    "  p[i].pos += p[i].vel * dt; p[i].vel.y -= dt;\n"
    "}\n"
    "__kernel void reach(__global uint *out, __global const uint *in, uint n, uint far) {\n"
    "  size_t i = get_global_id(0); if (i >= n) return;\n"
    "  uint v = in[i]; if (i == n - 1) v += in[i + far]; out[i] = v;\n"
    "}\n"
    "__kernel void scatter(__global const uint *x, __global const uint *perm, __global uint *y, uint n) {\n"
    "  size_t i = get_global_id(0); if (i < n) y[perm[i]] = x[i] * 3u + 1u;\n"
    "}\n";

/* ---- a sequence on one platform: its kept outputs, appended to one blob ---- */

struct seq {
    struct clenv *e;
    cl_program prog;
    cl_kernel kernels[8];
    const char *names[8];
    unsigned nk;
    unsigned char *blob;
    size_t len, cap;
    cl_int status; /* the first failure of a launch or read */
    uint64_t seed;
};

static cl_kernel seq_kernel(struct seq *s, const char *name)
{
    for (unsigned i = 0; i < s->nk; i++)
        if (!strcmp(s->names[i], name))
            return s->kernels[i]; /* the same kernel object: its plan is kept between launches */
    cl_int err;
    cl_kernel k = clCreateKernel(s->prog, name, &err);
    CL_OK(err);
    s->names[s->nk] = name;
    s->kernels[s->nk++] = k;
    return k;
}

static cl_mem seq_buffer(struct seq *s, size_t bytes, const void *init)
{
    return clenv_buffer(s->e, bytes, init);
}

struct karg {
    size_t size;
    const void *value;
};
#define KBUF(m) ((struct karg){sizeof(cl_mem), &(m)})
#define KVAL(v) ((struct karg){sizeof(v), &(v)})

/* One launch (global rounded up to the local size), waited for; its status joins s->status. */
static void seq_launch(struct seq *s, const char *name, cl_uint dim, const size_t *global, const size_t *local,
                       const struct karg *args, unsigned nargs)
{
    cl_kernel k = seq_kernel(s, name);
    size_t g[3];
    for (cl_uint d = 0; d < dim; d++)
        g[d] = (global[d] + local[d] - 1) / local[d] * local[d];
    for (unsigned a = 0; a < nargs; a++)
        CL_OK(clSetKernelArg(k, a, args[a].size, args[a].value));
    cl_event ev = NULL;
    cl_int err = clEnqueueNDRangeKernel(s->e->q, k, dim, NULL, g, local, 0, NULL, &ev);
    cl_int fin = clFinish(s->e->q);
    cl_int es = CL_COMPLETE;
    if (ev != NULL) {
        if (clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof es, &es, NULL) != CL_SUCCESS)
            es = CL_COMPLETE;
        clReleaseEvent(ev);
    }
    err = err != CL_SUCCESS ? err : es < 0 ? es : fin;
    if (err != CL_SUCCESS) {
        printf("  %s on %s: launch failed: %s (%d)\n", name, s->e->name, cl_status_name(err), err);
        if (s->status == CL_SUCCESS)
            s->status = err;
    }
}

/* Reads m (poisoned first) and appends it to the blob. */
static void seq_keep(struct seq *s, cl_mem m, size_t bytes)
{
    if (s->len + bytes > s->cap) {
        s->cap = (s->len + bytes) * 2;
        s->blob = realloc(s->blob, s->cap);
    }
    memset(s->blob + s->len, 0x5c, bytes);
    cl_int err = clenv_read(s->e, m, bytes, s->blob + s->len);
    if (err != CL_SUCCESS && s->status == CL_SUCCESS) {
        printf("  read on %s failed: %s (%d)\n", s->e->name, cl_status_name(err), err);
        s->status = err;
    }
    s->len += bytes;
}

static void *rnd_u32(struct seq *s, size_t n, uint32_t mod) { return harness_rnd_u32(&s->seed, n, mod); }
static void *rnd_f32(struct seq *s, size_t n) { return harness_rnd_f32(&s->seed, n); }
static void *poison(size_t bytes) { return harness_poison(bytes); }
static void *perm(struct seq *s, size_t n)
{
    uint32_t *v = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        v[i] = (uint32_t)i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t k = harness_rand(&s->seed) % (i + 1);
        uint32_t t = v[i];
        v[i] = v[k], v[k] = t;
    }
    return v;
}

/* ---- the kernels, one launch each over fresh buffers of n elements ---- */

static const size_t l64[3] = {64, 1, 1};

static void step_gather(struct seq *s, cl_mem x, cl_mem idx, cl_mem out, cl_uint n)
{
    size_t g[1] = {n};
    seq_launch(s, "gather", 1, g, l64, (struct karg[]){KBUF(x), KBUF(idx), KBUF(out), KVAL(n)}, 4);
    seq_keep(s, out, (size_t)n * 4);
}

static void step_other(struct seq *s, cl_uint n)
{
    void *a = rnd_u32(s, n, 0), *b = poison((size_t)n * 4);
    cl_mem ma = seq_buffer(s, (size_t)n * 4, a), mb = seq_buffer(s, (size_t)n * 4, b);
    size_t g[1] = {n};
    seq_launch(s, "other", 1, g, l64, (struct karg[]){KBUF(ma), KBUF(mb), KVAL(n)}, 3);
    seq_keep(s, mb, (size_t)n * 4);
    clReleaseMemObject(ma), clReleaseMemObject(mb);
    free(a), free(b);
}

static void step_histogram(struct seq *s, cl_uint n)
{
    cl_uint nbins = 65521; /* bins over several pages; a prime: no alignment with the page */
    void *d = rnd_u32(s, n, 0), *zero = calloc(nbins + 1, 4);
    cl_mem md = seq_buffer(s, (size_t)n * 4, d), mb = seq_buffer(s, (size_t)nbins * 4, zero),
           mc = seq_buffer(s, 4, zero);
    size_t g[1] = {n}, l[3] = {256, 1, 1};
    seq_launch(s, "histogram", 1, g, l, (struct karg[]){KBUF(md), KBUF(mb), KBUF(mc), KVAL(n), KVAL(nbins)}, 5);
    seq_keep(s, mb, (size_t)nbins * 4);
    seq_keep(s, mc, 4);
    clReleaseMemObject(md), clReleaseMemObject(mb), clReleaseMemObject(mc);
    free(d), free(zero);
}

static void step_stencil(struct seq *s, cl_uint n)
{
    cl_uint w = 1001, h = n / w;
    size_t cells = (size_t)w * h;
    void *in = rnd_f32(s, cells), *out = poison(cells * 4);
    cl_mem mi = seq_buffer(s, cells * 4, in), mo = seq_buffer(s, cells * 4, out);
    size_t g[2] = {w, h}, l[3] = {24, 3, 1};
    seq_launch(s, "stencil", 2, g, l, (struct karg[]){KBUF(mi), KBUF(mo), KVAL(w), KVAL(h)}, 4);
    seq_keep(s, mo, cells * 4);
    clReleaseMemObject(mi), clReleaseMemObject(mo);
    free(in), free(out);
}

static void step_vec4(struct seq *s, cl_uint n)
{
    cl_uint n4 = n / 4;
    size_t na = (size_t)n4 * 4 + 1, nb = (size_t)n4 * 4 + 3;
    void *a = rnd_f32(s, na), *b = poison(nb * 4);
    cl_mem ma = seq_buffer(s, na * 4, a), mb = seq_buffer(s, nb * 4, b);
    size_t g[1] = {n4};
    seq_launch(s, "vec4", 1, g, l64, (struct karg[]){KBUF(ma), KBUF(mb), KVAL(n4)}, 3);
    seq_keep(s, mb, nb * 4);
    clReleaseMemObject(ma), clReleaseMemObject(mb);
    free(a), free(b);
}

static void step_particles(struct seq *s, cl_uint n)
{
    cl_uint np = n / 8; /* 32 bytes each */
    float dt = 0.125f;
    void *p = rnd_f32(s, (size_t)np * 8);
    cl_mem mp = seq_buffer(s, (size_t)np * 32, p);
    size_t g[1] = {np};
    seq_launch(s, "particles", 1, g, l64, (struct karg[]){KBUF(mp), KVAL(np), KVAL(dt)}, 3);
    seq_keep(s, mp, (size_t)np * 32);
    clReleaseMemObject(mp);
    free(p);
}

static void step_scatter(struct seq *s, cl_uint n, size_t local)
{
    void *x = rnd_u32(s, n, 0), *pm = perm(s, n), *y = poison((size_t)n * 4);
    cl_mem mx = seq_buffer(s, (size_t)n * 4, x), mp = seq_buffer(s, (size_t)n * 4, pm),
           my = seq_buffer(s, (size_t)n * 4, y);
    size_t g[1] = {n}, l[3] = {local, 1, 1};
    seq_launch(s, "scatter", 1, g, l, (struct karg[]){KBUF(mx), KBUF(mp), KBUF(my), KVAL(n)}, 4);
    seq_keep(s, my, (size_t)n * 4);
    clReleaseMemObject(mx), clReleaseMemObject(mp), clReleaseMemObject(my);
    free(x), free(pm), free(y);
}

/* ---- the sequences ---- */

static void seq_gather_other_gather(struct seq *s)
{
    cl_uint nx = (2u << 20) / 4 + 21, n = (512u << 10) / 4 - 45;
    void *x = rnd_f32(s, nx), *idx = rnd_u32(s, n, nx), *out = poison((size_t)n * 4);
    cl_mem mx = seq_buffer(s, (size_t)nx * 4, x), mi = seq_buffer(s, (size_t)n * 4, idx),
           mo = seq_buffer(s, (size_t)n * 4, out);
    step_gather(s, mx, mi, mo, n);
    step_other(s, (4u << 20) / 4 + 7);
    void *idx2 = rnd_u32(s, n, nx);
    CL_OK(clEnqueueWriteBuffer(s->e->q, mi, CL_TRUE, 0, (size_t)n * 4, idx2, 0, NULL, NULL));
    CL_OK(clEnqueueWriteBuffer(s->e->q, mo, CL_TRUE, 0, (size_t)n * 4, out, 0, NULL, NULL));
    step_gather(s, mx, mi, mo, n);
    clReleaseMemObject(mx), clReleaseMemObject(mi), clReleaseMemObject(mo);
    free(x), free(idx), free(idx2), free(out);
}

/* Five kernels at four sizes (elements of 4 bytes), interleaved so that each launch follows
 * launches of other kernels and other sizes. */
static void seq_mix(struct seq *s, cl_uint base)
{
    static const unsigned num[4] = {10, 2, 17, 5}, den = 10;
    for (unsigned r = 0; r < 4; r++) {
        cl_uint n = (cl_uint)((uint64_t)base * num[r] / den) | 1u;
        step_histogram(s, n);
        step_stencil(s, n + 3000);
        step_vec4(s, n);
        step_particles(s, n);
        step_scatter(s, n / 4, 16); /* 16 random pages per work-group: fits 64 KiB pages' budget */
    }
}
static void seq_forced(struct seq *s) { seq_mix(s, 300007); }
static void seq_mix_2m(struct seq *s) { seq_mix(s, 1000003); }
static void seq_mix_4m(struct seq *s) { seq_mix(s, 1500007); }
static void seq_scatter(struct seq *s)
{
    step_scatter(s, 400009, 64);
    step_other(s, (6u << 20) / 4 + 5); /* more pages than the scatter's */
    step_scatter(s, 400009, 64);
}

/* One work-group of 56 gathers from about 50 random pages of x; with its idx and out pages it
 * needs ~53 of the budget's 64: it fits, though not beside the pages other work-groups faulted
 * (the launch's sticky set). */
static void seq_gather_wide(struct seq *s)
{
    cl_uint nx = 200 * 1024 - 13, n = 56 * 300 - 5;
    void *x = rnd_f32(s, nx), *idx = rnd_u32(s, n, nx), *out = poison((size_t)n * 4);
    cl_mem mx = seq_buffer(s, (size_t)nx * 4, x), mi = seq_buffer(s, (size_t)n * 4, idx),
           mo = seq_buffer(s, (size_t)n * 4, out);
    size_t g[1] = {n}, l[3] = {56, 1, 1};
    seq_launch(s, "gather", 1, g, l, (struct karg[]){KBUF(mx), KBUF(mi), KBUF(mo), KVAL(n)}, 4);
    seq_keep(s, mo, (size_t)n * 4);
    clReleaseMemObject(mx), clReleaseMemObject(mi), clReleaseMemObject(mo);
    free(x), free(idx), free(out);
}

/* The last work-item reads 8 pages past the end of the last buffer: VAST cannot give it the
 * page, its work-group's store is dropped, so the launch must fail (PoCL is not asked: the
 * access is undefined there). */
static void seq_reach(struct seq *s)
{
    cl_uint n = 70001, far = 8 * 1024;
    void *in = rnd_u32(s, n, 0), *out = poison((size_t)n * 4);
    cl_mem mo = seq_buffer(s, (size_t)n * 4, out), mi = seq_buffer(s, (size_t)n * 4, in);
    size_t g[1] = {n};
    seq_launch(s, "reach", 1, g, l64, (struct karg[]){KBUF(mo), KBUF(mi), KVAL(n), KVAL(far)}, 4);
    clReleaseMemObject(mo), clReleaseMemObject(mi);
    free(in), free(out);
}

struct fcase {
    const char *name;
    const char *budget, *page; /* NULL: the default */
    int forced;
    int out_of_bounds; /* VAST must fail the launch, saying so; PoCL does not run it */
    const char *paged_mode; /* a VAST_STATS mode that must appear: "paged" or "partitioned" */
    const char *kernel;     /* ... for this kernel */
    void (*run)(struct seq *s);
};

static const struct fcase cases[] = {
    {"gather_other_gather", "1M", "4K", 0, 0, "partitioned", "gather", seq_gather_other_gather},
    {"forced_mix", NULL, "4K", 1, 0, "paged", "scatter", seq_forced},
    {"mix_2M_4K", "2M", "4K", 0, 0, "partitioned", "scatter", seq_mix_2m},
    {"mix_4M_64K", "4M", "64K", 0, 0, "partitioned", "histogram", seq_mix_4m},
    {"scatter_2M_4K", "2M", "4K", 0, 0, "partitioned", "scatter", seq_scatter},
    {"gather_wide_256K", "256K", "4K", 0, 0, "partitioned", "gather", seq_gather_wide},
    {"reach_fails", NULL, "4K", 1, 1, "paged", "reach", seq_reach},
};
#define NCASES (sizeof cases / sizeof cases[0])

static cl_int run_on(const char *platform, const struct fcase *c, unsigned char **blob, size_t *len)
{
    struct clenv e;
    clenv_open(&e, platform);
    struct seq s = {.e = &e, .seed = 0x2545f4914f6cdd1dull};
    s.prog = clenv_build(&e, src, "");
    c->run(&s);
    for (unsigned i = 0; i < s.nk; i++)
        clReleaseKernel(s.kernels[i]);
    clReleaseProgram(s.prog);
    clenv_close(&e);
    *blob = s.blob;
    *len = s.len;
    return s.status;
}

static int child(const void *fc, const char *arg, int flip)
{
    const struct fcase *c = fc;
    (void)arg;
    unsigned char *want, *got;
    size_t nwant, ngot;
    if (c->out_of_bounds) {
        cl_int err = run_on("VAST", c, &got, &ngot);
        free(got);
        if (err == CL_OUT_OF_RESOURCES)
            return 0;
        return printf("  %s: VAST returned %s, expected CL_OUT_OF_RESOURCES\n", c->name, cl_status_name(err)), 1;
    }
    if (run_on("Portable", c, &want, &nwant) != CL_SUCCESS)
        return printf("  %s: PoCL itself failed\n", c->name), 3;
    cl_int err = run_on("VAST", c, &got, &ngot);
    int bad = 0;
    if (err != CL_SUCCESS)
        bad = printf("  %s: VAST failed: %s (%d)\n", c->name, cl_status_name(err), err);
    if (flip && ngot > 0)
        got[ngot / 2] ^= 1;
    bad |= harness_compare_bytes(c->name, want, nwant, got, ngot);
    free(want), free(got);
    return bad ? 1 : 0;
}

/* One run at the case's budget and page size. */
static int runs(const void *fc, const struct harness_opts *o, struct harness_run *out, size_t max)
{
    const struct fcase *c = fc;
    (void)o, (void)max;
    out[0] = (struct harness_run){.name = c->name, .forced = c->forced,
                                  .budget = c->budget ? harness_parse_size(c->budget) : 0,
                                  .page = c->page ? harness_parse_size(c->page) : 0};
    return 1;
}

/* No "out of bounds" and no error line but where the case wants one; the paged engine ran. */
static void judge(const void *fc, const struct harness_run *run, const char *out, char *why, size_t n, char *what,
                  size_t nwhat)
{
    const struct fcase *c = fc;
    static const char *const oob_words[] = {"out of bounds", NULL};
    (void)run;
    snprintf(what, nwhat, "%-20s budget %-4s page %-3s%s", c->name, c->budget ? c->budget : "-",
             c->page ? c->page : "-", c->forced ? " forced paged" : "");
    if (c->out_of_bounds) {
        if (!harness_refusal_logged(out, c->kernel, oob_words))
            snprintf(why, n, "no 'vast: error:' line naming kernel '%s' and 'out of bounds'", c->kernel);
    } else if (harness_find_line(out, "vast: ", oob_words) != NULL)
        snprintf(why, n, "VAST reported an out-of-bounds access; every kernel here stays in bounds");
    else if (harness_find_line(out, "vast: error:", (const char *const[]){"", NULL}) != NULL)
        snprintf(why, n, "VAST logged an error");
    else if (harness_stat(out, c->kernel, c->paged_mode, "launches") < 1)
        snprintf(why, n, "no VAST_STATS line 'kernel=%s mode=%s'", c->kernel, c->paged_mode);
}

int main(int argc, char **argv)
{
    static const struct harness_prog prog = {
        cases, NCASES, sizeof cases[0], "cases", {0}, false, NULL, child, runs, judge};
    return harness_main(argc, argv, &prog);
}
