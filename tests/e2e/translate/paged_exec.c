/* paged_exec.c - e2e test of translate/ on PoCL: for every corpus case, the original
 * kernel and the paged kernel (pages scattered at random over a 3-chunk frame pool; whole
 * range, slabs with global offsets, boxes split along dimension 0) must produce identical bytes in
 * every buffer; the inspector's page set per work-group must equal the pages the paged
 * kernel touches (traced through the fault log with no page resident), or contain them
 * for data-dependent kernels. A deliberately wrong page table must make the comparison
 * fail. Exit status 0 only if everything holds. Arguments: [case [runs]]. */
#include "corpus.h"
#include "translate.h"
#include "vspace.h"

#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHIFT 9 /* 512-byte pages: many pages with small buffers */
#define NCHUNKS 3
#define LOG_CAP 65536

static cl_context ctx;
static cl_command_queue q;
static cl_device_id dev;

#define CHECK(err, what)                                                                  \
    do {                                                                                  \
        if ((err) != CL_SUCCESS) {                                                        \
            fprintf(stderr, "%s failed: %d (line %d)\n", what, (int)(err), __LINE__);     \
            exit(2);                                                                      \
        }                                                                                 \
    } while (0)

static cl_program build(const char *src, const char *opts, const char *what)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err, "clCreateProgramWithSource");
    if (clBuildProgram(p, 1, &dev, opts, NULL, NULL) != CL_SUCCESS) {
        static char log[65536];
        clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build of %s failed:\n%s\n", what, log);
        exit(2);
    }
    return p;
}

static cl_mem mkbuf(size_t n, const void *init)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | (init ? CL_MEM_COPY_HOST_PTR : 0),
                              n ? n : 1, (void *)init, &err);
    CHECK(err, "clCreateBuffer");
    return m;
}

static void rd(cl_mem m, size_t n, void *dst)
{
    CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, n, dst, 0, NULL, NULL), "read");
}

struct run {
    const struct kcase *kc;
    const struct translate_kernel *meta;
    size_t nargs;
    void *init[10];      /* initial contents of buffer args */
    size_t bytes[10];
};

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static void make_inputs(struct run *r, uint64_t seed)
{
    uint64_t s = seed;
    for (size_t a = 0; a < 10 && r->kc->args[a].gen != G_END; a++, r->nargs = a) {
        const struct arg_spec *sp = &r->kc->args[a];
        r->bytes[a] = sp->bytes;
        if (sp->gen > G_ZERO)
            continue;
        unsigned char *b = malloc(sp->bytes + 4);
        uint32_t *u = (uint32_t *)b;
        float *f = (float *)b;
        for (size_t i = 0; i < sp->bytes / 4; i++) {
            uint64_t x = rnd(&s);
            switch (sp->gen) {
            case G_F32: f[i] = (float)((double)(x >> 40) / (double)(1 << 23) - 1.0); break;
            case G_U32: u[i] = sp->mod ? (uint32_t)(x % sp->mod) : (uint32_t)x; break;
            case G_RAMP: u[i] = (uint32_t)i * sp->mod; break;
            default: break;
            }
        }
        if (sp->gen == G_POISON)
            memset(b, 0xA5, sp->bytes);
        if (sp->gen == G_ZERO)
            memset(b, 0, sp->bytes);
        for (size_t i = sp->bytes / 4 * 4; i < sp->bytes; i++)
            b[i] = sp->gen == G_POISON ? 0xA5 : sp->gen == G_ZERO ? 0 : (unsigned char)rnd(&s);
        r->init[a] = b;
    }
}

static int is_buffer(const struct run *r, size_t a)
{
    return r->kc->args[a].gen <= G_ZERO;
}

static void set_scalar_or_local(cl_kernel k, const struct arg_spec *sp, cl_uint a)
{
    if (sp->gen == G_INT) {
        cl_int v = (cl_int)sp->value;
        CHECK(clSetKernelArg(k, a, sizeof v, &v), "arg int");
    } else if (sp->gen == G_FLOAT) {
        cl_float v = (cl_float)sp->value;
        CHECK(clSetKernelArg(k, a, sizeof v, &v), "arg float");
    } else {
        CHECK(clSetKernelArg(k, a, sp->bytes, NULL), "arg local");
    }
}

/* Original kernel: out[a] receives every buffer's final bytes. */
static void run_original(cl_program p, struct run *r, unsigned char **out)
{
    cl_int err;
    cl_kernel k = clCreateKernel(p, r->kc->name, &err);
    CHECK(err, "clCreateKernel original");
    cl_mem m[10] = {0};
    for (size_t a = 0; a < r->nargs; a++) {
        if (is_buffer(r, a)) {
            m[a] = mkbuf(r->bytes[a], r->init[a]);
            CHECK(clSetKernelArg(k, (cl_uint)a, sizeof m[a], &m[a]), "arg buf");
        } else {
            set_scalar_or_local(k, &r->kc->args[a], (cl_uint)a);
        }
    }
    CHECK(clEnqueueNDRangeKernel(q, k, r->kc->dim, r->kc->offset, r->kc->global,
                                 r->kc->local, 0, NULL, NULL), "launch original");
    for (size_t a = 0; a < r->nargs; a++)
        if (m[a]) {
            out[a] = malloc(r->bytes[a] + 1);
            rd(m[a], r->bytes[a], out[a]);
            clReleaseMemObject(m[a]);
        }
    clReleaseKernel(k);
}


struct launch {
    size_t off[3], gsz[3];
    uint64_t first, end; /* flat work-group range (vast_cfg.s2/.s3) */
};

static uint64_t total_groups(const struct kcase *kc)
{
    uint64_t n = 1;
    for (unsigned d = 0; d < kc->dim; d++)
        n *= kc->global[d] / kc->local[d];
    return n;
}

static struct launch full_launch(const struct kcase *kc)
{
    struct launch l = {{0}, {0}, 0, total_groups(kc)};
    for (unsigned d = 0; d < kc->dim; d++)
        l.off[d] = kc->offset[d], l.gsz[d] = kc->global[d];
    return l;
}

enum lpt_mode { LPT_SCATTER, LPT_EMPTY, LPT_CORRUPT };

struct paged_out {
    unsigned char *bytes[10];
    uint32_t nfaults;
    uint32_t *log;
};

static void set_abi_args(cl_kernel k, cl_uint n, cl_mem *abi, const struct kcase *kc,
                         cl_ulong4 cfg, size_t nmem)
{
    for (size_t i = 0; i < nmem; i++)
        CHECK(clSetKernelArg(k, n++, sizeof(cl_mem), &abi[i]), "abi mem");
    cl_ulong4 gs = {{1, 1, 1, 0}}, go = {{0, 0, 0, 0}};
    for (unsigned d = 0; d < kc->dim; d++)
        gs.s[d] = kc->global[d], go.s[d] = kc->offset[d];
    CHECK(clSetKernelArg(k, n++, sizeof gs, &gs), "gsize");
    CHECK(clSetKernelArg(k, n++, sizeof go, &go), "goff");
    CHECK(clSetKernelArg(k, n++, sizeof cfg, &cfg), "cfg");
}

/* The parameters after vast_slab (translate.h): `ulong2 vast_iters` of kernels with iteration
 * ranges, here every iteration (0, ~0), and for resumable loops `vast_spill` and
 * `vast_spill_in`, NULL (untouched when every iteration runs). */
static void set_loop_args(cl_kernel k, cl_uint first, const struct translate_kernel *meta)
{
    if (meta == NULL || !meta->iteration_ranges)
        return;
    cl_ulong2 all = {{0, ~(cl_ulong)0}};
    CHECK(clSetKernelArg(k, first, sizeof all, &all), "vast_iters");
    cl_mem none = NULL;
    for (cl_uint a = 1; meta->resumable && a <= 2; a++)
        CHECK(clSetKernelArg(k, first + a, sizeof none, &none), "vast_spill");
}

/* Launches a translated kernel as the runtime does: no global work offset, the slab's first
 * work-group per dimension in vast_slab (argument slab_arg). */
static void launch_slab(cl_kernel k, cl_uint slab_arg, const struct kcase *kc, const struct launch *l,
                        const char *what)
{
    cl_ulong4 slab = {{0, 0, 0, 0}};
    for (unsigned d = 0; d < kc->dim; d++)
        slab.s[d] = (l->off[d] - kc->offset[d]) / kc->local[d];
    CHECK(clSetKernelArg(k, slab_arg, sizeof slab, &slab), "slab");
    CHECK(clEnqueueNDRangeKernel(q, k, kc->dim, NULL, l->gsz, kc->local, 0, NULL, NULL), what);
}

/* Sets the original parameters: virtual addresses for __global pointers, real buffers
 * for __constant ones, values and __local sizes as given. Returns real buffers in m. */
static void set_app_args(cl_kernel k, const struct run *r, const struct vspace *vs,
                         cl_mem *m)
{
    for (size_t a = 0; a < r->nargs; a++) {
        enum translate_arg_kind kind = r->meta->args[a].kind;
        if (kind == TRANSLATE_ARG_GLOBAL_POINTER) {
            cl_ulong va = vs->va[a];
            CHECK(clSetKernelArg(k, (cl_uint)a, sizeof va, &va), "arg va");
        } else if (is_buffer(r, a)) {
            m[a] = mkbuf(r->bytes[a], r->init[a]);
            CHECK(clSetKernelArg(k, (cl_uint)a, sizeof m[a], &m[a]), "arg const buf");
        } else {
            set_scalar_or_local(k, &r->kc->args[a], (cl_uint)a);
        }
    }
}

static void run_paged(cl_program p, const struct run *r, enum lpt_mode mode,
                      const struct launch *ls, size_t nl, uint64_t seed, struct paged_out *o)
{
    size_t sizes[10] = {0};
    for (size_t a = 0; a < r->nargs; a++)
        if (r->meta->args[a].kind == TRANSLATE_ARG_GLOBAL_POINTER)
            sizes[a] = r->bytes[a];
    struct vspace vs;
    if (vspace_init(&vs, SHIFT, r->nargs, sizes, NCHUNKS) != 0)
        exit(2);
    unsigned char *none = calloc(vs.pages, 1);
    vspace_scatter(&vs, seed, mode == LPT_EMPTY ? none : NULL);
    size_t chunk_bytes = (size_t)vs.frames_per_chunk << SHIFT;
    unsigned char *pool[NCHUNKS];
    cl_mem abi[9], m[10] = {0};
    for (int c = 0; c < NCHUNKS; c++) {
        pool[c] = malloc(chunk_bytes);
        memset(pool[c], 0x5A, chunk_bytes);
    }
    vspace_to_frames(&vs, r->init, pool);
    uint32_t *lpt = malloc(vs.pages * 4);
    memcpy(lpt, vs.lpt, vs.pages * 4);
    if (mode == LPT_CORRUPT) { /* the kernel's table disagrees with the frames' contents */
        lpt[1] = vs.lpt[2];
        lpt[2] = vs.lpt[1];
    }
    abi[0] = mkbuf(vs.pages * 4, lpt);
    free(lpt);
    for (int c = 0; c < 4; c++)
        abi[1 + c] = c < NCHUNKS ? mkbuf(chunk_bytes, pool[c]) : abi[1];
    unsigned char *zeros = calloc(2, 1u << SHIFT);
    abi[5] = mkbuf(2u << SHIFT, zeros);
    uint32_t *log = calloc(4 + 4 * LOG_CAP, 4);
    log[1] = LOG_CAP;
    abi[6] = mkbuf((4 + 4 * LOG_CAP) * 4, log);
    cl_int err;
    cl_kernel k = clCreateKernel(p, r->kc->name, &err);
    CHECK(err, "clCreateKernel paged");
    set_app_args(k, r, &vs, m);
    for (size_t i = 0; i < nl; i++) {
        cl_ulong4 cfg = {{SHIFT, vs.pages, ls[i].first, ls[i].end}};
        set_abi_args(k, (cl_uint)r->nargs, abi, r->kc, cfg, 7);
        set_loop_args(k, (cl_uint)r->nargs + 11, r->meta);
        launch_slab(k, (cl_uint)r->nargs + 10, r->kc, &ls[i], "launch paged");
    }
    for (int c = 0; c < NCHUNKS; c++)
        rd(abi[1 + c], chunk_bytes, pool[c]);
    rd(abi[6], (4 + 4 * LOG_CAP) * 4, log);
    for (size_t a = 0; a < r->nargs; a++) {
        if (!is_buffer(r, a))
            continue;
        o->bytes[a] = malloc(r->bytes[a] + 1);
        if (m[a])
            rd(m[a], r->bytes[a], o->bytes[a]), clReleaseMemObject(m[a]);
        else
            memcpy(o->bytes[a], r->init[a], r->bytes[a]);
    }
    vspace_from_frames(&vs, (void **)o->bytes, pool);
    o->nfaults = log[0];
    o->log = log;
    for (int i = 0; i < 7; i++)
        if (i < 1 + NCHUNKS || i > 4)
            clReleaseMemObject(abi[i]);
    for (int c = 0; c < NCHUNKS; c++)
        free(pool[c]);
    free(zeros);
    free(none);
    clReleaseKernel(k);
    vspace_free(&vs);
}

static void free_out(struct paged_out *o, size_t n)
{
    for (size_t a = 0; a < n; a++)
        free(o->bytes[a]);
    free(o->log);
    memset(o, 0, sizeof *o);
}

/* Returns 0 when every buffer matches byte for byte. */
static int compare(const struct run *r, unsigned char **want, unsigned char **got,
                   const char *what, int quiet)
{
    for (size_t a = 0; a < r->nargs; a++) {
        if (!is_buffer(r, a) || !memcmp(want[a], got[a], r->bytes[a]))
            continue;
        size_t i = 0;
        while (want[a][i] == got[a][i])
            i++;
        if (!quiet)
            fprintf(stderr, "  %s %s: arg %zu differs at byte %zu (0x%02x vs 0x%02x)\n",
                    r->kc->name, what, a, i, want[a][i], got[a][i]);
        return 1;
    }
    return 0;
}

/* Inspector over the whole NDRange, one work-group per chunk: returns the PAS. */
static unsigned char *run_inspector(cl_program p, const struct run *r, uint64_t *pages)
{
    size_t sizes[10] = {0};
    for (size_t a = 0; a < r->nargs; a++)
        if (r->meta->args[a].kind == TRANSLATE_ARG_GLOBAL_POINTER)
            sizes[a] = r->bytes[a];
    struct vspace vs;
    vspace_init(&vs, SHIFT, r->nargs, sizes, 1);
    uint64_t groups = total_groups(r->kc);
    *pages = vs.pages;
    unsigned char *pas = calloc(groups * vs.pages, 1);
    unsigned char *zeros = calloc(2, 1u << SHIFT);
    uint32_t status[2] = {0, 0};
    cl_mem abi[3] = {mkbuf(groups * vs.pages, pas), mkbuf(2u << SHIFT, zeros),
                     mkbuf(sizeof status, status)}, m[10] = {0};
    cl_int err;
    cl_kernel k = clCreateKernel(p, r->kc->name, &err);
    CHECK(err, "clCreateKernel inspector");
    set_app_args(k, r, &vs, m);
    cl_ulong4 cfg = {{SHIFT, vs.pages, 0, groups}}, pascfg = {{1, 64, 0, 0}}; /* as the runtime */
    set_abi_args(k, (cl_uint)r->nargs, abi, r->kc, cfg, 3);
    CHECK(clSetKernelArg(k, (cl_uint)r->nargs + 6, sizeof pascfg, &pascfg), "pascfg");
    set_loop_args(k, (cl_uint)r->nargs + 8, r->meta);
    struct launch l = full_launch(r->kc);
    launch_slab(k, (cl_uint)r->nargs + 7, r->kc, &l, "launch inspector");
    rd(abi[0], groups * vs.pages, pas);
    rd(abi[2], sizeof status, status);
    if (status[1])
        fprintf(stderr, "  %s: inspector saw %u accesses past the virtual space\n",
                r->kc->name, status[1]);
    for (size_t a = 0; a < r->nargs; a++)
        if (m[a])
            clReleaseMemObject(m[a]);
    for (int i = 0; i < 3; i++)
        clReleaseMemObject(abi[i]);
    clReleaseKernel(k);
    free(zeros);
    vspace_free(&vs);
    return pas;
}

/* Pages work-group g touches, traced by the paged kernel with no page resident. */
static int check_inspector(cl_program paged, cl_program insp, const struct run *r)
{
    uint64_t pages, groups = total_groups(r->kc);
    unsigned char *pas = run_inspector(insp, r, &pages);
    uint64_t probe[3] = {0, groups / 2, groups - 1};
    int bad = 0;
    unsigned char *trace = malloc(pages);
    for (int t = 0; t < 3 && !bad; t++) {
        struct launch l = full_launch(r->kc); /* the one work-group probe[t], as a box */
        uint64_t rest = probe[t];
        for (unsigned d = 0; d < r->kc->dim; d++) {
            uint64_t n = r->kc->global[d] / r->kc->local[d];
            l.off[d] = r->kc->offset[d] + (size_t)(rest % n) * r->kc->local[d];
            l.gsz[d] = r->kc->local[d];
            rest /= n;
        }
        l.first = probe[t], l.end = probe[t] + 1;
        struct paged_out o = {0};
        run_paged(paged, r, LPT_EMPTY, &l, 1, 1, &o);
        memset(trace, 0, pages);
        for (uint32_t e = 0; e < o.nfaults && e < LOG_CAP; e++) {
            const uint32_t *en = o.log + 4 + 4 * e;
            uint64_t wg = en[0] | (uint64_t)(en[3] >> 2) << 32; /* translate.h: fault log entry */
            if (wg != probe[t] || (en[3] & 3) == 0 || (en[3] & 3) == 3)
                bad = fprintf(stderr, "  %s: fault entry %u names work-group %llu (kind %u), ran %llu\n",
                              r->kc->name, e, (unsigned long long)wg, en[3] & 3,
                              (unsigned long long)probe[t]);
            if (en[1] < pages)
                trace[en[1]] = 1;
        }
        if (o.nfaults > LOG_CAP)
            bad = fprintf(stderr, "  %s: fault log overflow\n", r->kc->name);
        const unsigned char *row = pas + probe[t] * pages;
        for (uint64_t pg = 0; pg < pages && !bad; pg++) {
            if (trace[pg] && !row[pg])
                bad = fprintf(stderr, "  %s: group %lu touches page %lu, inspector missed it\n",
                              r->kc->name, (unsigned long)probe[t], (unsigned long)pg);
            else if (row[pg] && !trace[pg] && !r->kc->data_dependent)
                bad = fprintf(stderr, "  %s: group %lu: inspector marks untouched page %lu\n",
                              r->kc->name, (unsigned long)probe[t], (unsigned long)pg);
        }
        free_out(&o, r->nargs);
    }
    free(trace);
    free(pas);
    return bad ? 1 : 0;
}

/* Slabs along the slowest dimension (global offsets), then guarded flat halves. */
static size_t plan_partitions(const struct kcase *kc, struct launch *ls)
{
    unsigned d = kc->dim - 1;
    size_t nd = kc->global[d] / kc->local[d], n = 0;
    size_t slabs = nd < 3 ? nd : 3;
    for (size_t s = 0; s < slabs; s++) {
        size_t a = nd * s / slabs, b = nd * (s + 1) / slabs;
        ls[n] = full_launch(kc);
        ls[n].off[d] = kc->offset[d] + a * kc->local[d];
        ls[n].gsz[d] = (b - a) * kc->local[d];
        n++;
    }
    return n;
}

static int run_case(cl_program orig, cl_program paged, cl_program insp,
                    const struct translate_kernel *meta, const struct kcase *kc, int negative)
{
    struct run r = {kc, meta, 0, {0}, {0}};
    make_inputs(&r, 12345 + (uint64_t)(kc - corpus_cases));
    unsigned char *want[10] = {0};
    run_original(orig, &r, want);
    int bad = 0;
    struct launch ls[8];
    struct paged_out o = {0};
    ls[0] = full_launch(kc);
    run_paged(paged, &r, LPT_SCATTER, ls, 1, 7, &o);
    bad |= compare(&r, want, o.bytes, "whole range", 0) || o.nfaults != 0;
    free_out(&o, r.nargs);
    size_t n = plan_partitions(kc, ls);
    run_paged(paged, &r, LPT_SCATTER, ls, n, 8, &o);
    bad |= compare(&r, want, o.bytes, "slabs", 0);
    free_out(&o, r.nargs);
    /* boxes split along dimension 0, as the runtime launches partial rows: slab.s0 > 0 */
    size_t n0 = kc->global[0] / kc->local[0], h = (n0 + 1) / 2;
    ls[0] = ls[1] = full_launch(kc);
    ls[0].gsz[0] = h * kc->local[0];
    ls[1].off[0] = kc->offset[0] + h * kc->local[0];
    ls[1].gsz[0] = (n0 - h) * kc->local[0];
    run_paged(paged, &r, LPT_SCATTER, ls, n0 > 1 ? 2 : 1, 9, &o);
    bad |= compare(&r, want, o.bytes, "boxes", 0);
    free_out(&o, r.nargs);
    bad |= check_inspector(paged, insp, &r);
    if (negative) { /* the comparison must be able to fail */
        ls[0] = full_launch(kc);
        run_paged(paged, &r, LPT_CORRUPT, ls, 1, 7, &o);
        if (!compare(&r, want, o.bytes, "corrupt LPT", 1))
            bad = fprintf(stderr, "  %s: a wrong page table went unnoticed\n", kc->name);
        free_out(&o, r.nargs);
    }
    for (size_t a = 0; a < r.nargs; a++)
        free(want[a]), free(r.init[a]);
    return bad;
}

static const struct translate_kernel *find_meta(const struct translate_result *t,
                                                const char *name)
{
    for (size_t i = 0; i < t->num_kernels; i++)
        if (!strcmp(t->kernels[i].name, name))
            return &t->kernels[i];
    return NULL;
}

/* The device's OpenCL version (its compiler's __OPENCL_VERSION__), as VAST passes it. */
static unsigned device_version(void)
{
    char v[256] = "";
    unsigned major = 0, minor = 0;
    if (clGetDeviceInfo(dev, CL_DEVICE_VERSION, sizeof v - 1, v, NULL) != CL_SUCCESS ||
        sscanf(v, "OpenCL %u.%u", &major, &minor) != 2)
        return 0;
    return 100 * major + 10 * minor;
}

static void init_cl(void)
{
    cl_platform_id plat;
    cl_int err = clGetPlatformIDs(1, &plat, NULL);
    CHECK(err, "clGetPlatformIDs");
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL), "clGetDeviceIDs");
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    q = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err, "clCreateCommandQueue");
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : NULL;
    int repeat = argc > 2 ? atoi(argv[2]) : 1; /* runs of each selected case */
    setvbuf(stdout, NULL, _IOLBF, 0);
    init_cl();
    static char ext[8192];
    clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sizeof ext, ext, NULL);
    int passed = 0, run = 0;
    for (size_t p = 0; p < corpus_num_programs; p++) {
        int named = 0;
        for (size_t c = 0; c < corpus_num_cases && only != NULL; c++)
            named |= corpus_cases[c].program == (int)p && !strcmp(only, corpus_cases[c].name);
        if (only != NULL ? !named : p >= corpus_num_default_programs)
            continue;
        struct translate_options to = {corpus_program_options[p], ext, 0, "corpus.cl", device_version()};
        struct translate_result *t;
        if (translate_program(corpus_programs[p], &to, &t) != 0) {
            fprintf(stderr, "program %zu: translation failed: %s\n", p, t->error);
            return 1;
        }
        for (size_t d = 0; d < t->num_diags; d++)
            fprintf(stderr, "program %zu: %s: %s line %u: %s\n", p, t->diags[d].kernel,
                    t->diags[d].construct, t->diags[d].line, t->diags[d].message);
        cl_program orig = build(corpus_programs[p], corpus_program_options[p], "original");
        cl_program paged = build(t->paged_source, t->build_options, "paged");
        cl_program insp = build(t->inspector_source, t->build_options, "inspector");
        for (size_t c = 0; c < corpus_num_cases; c++) {
            const struct kcase *kc = &corpus_cases[c];
            if (kc->program != (int)p || (only && strcmp(only, kc->name)))
                continue;
            const struct translate_kernel *m = find_meta(t, kc->name);
            run++;
            int bad = !m || !m->paged_ok;
            for (int k = 0; k < repeat && !bad; k++)
                bad = run_case(orig, paged, insp, m, kc, !strcmp(kc->name, "vadd"));
            printf("%s %s\n", bad ? "FAIL" : "ok  ", kc->name);
            passed += !bad;
        }
        clReleaseProgram(orig);
        clReleaseProgram(paged);
        clReleaseProgram(insp);
        translate_result_free(t);
    }
    printf("%d/%d cases passed\n", passed, run);
    return passed == run && run > 0 ? 0 : 1;
}
