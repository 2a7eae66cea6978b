/* xlat_bench.c - kernel time of the original kernel against its translated paged and inspector
 * kernels (not a test). Two programs, MatrixMul (samples/MatrixMul: C = A x B, A rows x n,
 * B n x n, BS x BS tiles) and saxpy (samples/saxpy: y = a * x + y), translated here with
 * translate_program() and built with its build_options plus -D VAST_PAGE_SHIFT=16
 * -D VAST_POOL_CHUNKS=1 (and -D VAST_WHOLE for the paged kernel, as the runtime builds it for
 * launches of every iteration; a kernel with a resumable loop gets a row for its build with the
 * iteration-range machinery too). Every kernel runs once over the whole NDRange. The paged and inspector
 * kernels see one identity-mapped pool: the buffers page-aligned from virtual page 1 (64 KiB
 * pages), lpt[vp] = vp - 1, pool0..3 all that pool; the inspector's PAS has one row per chunk
 * of work-groups (MatrixMul: a row of work-groups; saxpy: the groups over one page of x).
 * Checks, so that a wrong kernel is never timed silently: the original's output is verified on
 * the host (MatrixMul: 64 sampled entries within the float dot-product bound; saxpy: every y,
 * fused or not); the paged output is bit-identical to the original's (outputs poisoned with
 * 0xff, in/out buffers restored, before every run) and no run logs a fault; the PAS marks
 * exactly the pages each chunk touches (expected bytemap computed on the host) and the
 * inspector's status words stay 0. Times: CL profiling of the kernel alone, min and median of
 * --reps runs after one warm-up. Platform: the first whose name contains NVIDIA, else the
 * first; its first device. Prints a Markdown table; exits 1 on a FAIL or error, 2 on bad usage.
 * Usage: xlat_bench [--matmul N ROWS] [--saxpy ELEMENTS] [--reps R] [--dump DIR] [--extra FILE]...
 *        defaults: --matmul 4096 8192 --saxpy 134217728 --reps 5; a size of 0 skips a program.
 *        --dump DIR writes each program's paged source to DIR/<kernel>.paged.cl; --extra FILE
 *        (repeatable) times a hand-edited paged source of the same ABI as one more row, named by
 *        the file, for the program whose kernel it defines (trying a translation by hand before
 *        changing the translator), checked like the paged kernel. */
#include "MatrixMul/matrixmul_kernel.h"
#include "saxpy/saxpy_kernel.h"
#include "translate.h"

#include <CL/cl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHIFT 16
#define PAGE ((size_t)1 << SHIFT)
#define LOG_CAPACITY 64

#define CK(e) do { cl_int e_ = (e); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "xlat_bench: OpenCL error %d at line %d: %s\n", e_, __LINE__, #e); exit(1); } } while (0)

enum variant { ORIGINAL, PAGED, INSPECTOR };
static const char *const variant_name[] = {"original", "paged", "inspector"};
enum role { IN, OUT, INOUT }; /* before every run OUT is poisoned, INOUT restored */

struct buffer {
    size_t bytes;
    enum role role;
    float *init;    /* IN, INOUT: the data; OUT: NULL */
    float *result;  /* OUT, INOUT: the original kernel's output */
    size_t va;      /* page-aligned virtual address; pool offset va - PAGE */
    cl_mem mem;     /* the original kernel's own buffer */
};

struct program {
    const char *name, *kernel, *source;
    cl_uint dims;
    size_t global[2], local[2], wg_per_chunk;
    int nbufs, nargs;
    struct buffer buf[3];
    struct { int buf; size_t size; const void *value; } arg[5]; /* buf >= 0: that buffer */
    /* bytes [*lo, *hi) of buffer b that chunk c touches */
    void (*touched)(const struct program *p, size_t c, int b, size_t *lo, size_t *hi);
    size_t (*wrong_results)(const struct program *p); /* checks the original's output */
    cl_ulong u[2];
    cl_float a;
};

/* The pool and the buffers of the generated kernels' ABI (translate.h). */
struct paging {
    size_t entries, groups, chunks;
    cl_mem pool, lpt, scratch, faults, pas, status;
};

static cl_context ctx;
static cl_device_id dev;
static cl_command_queue queue;

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (!p) {
        fprintf(stderr, "xlat_bench: out of host memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

static float *random_floats(size_t count, unsigned long long seed)
{
    float *f = xmalloc(count * sizeof *f);
    for (size_t i = 0; i < count; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        f[i] = (float)(seed >> 40) / (float)(1 << 23) - 1.0f;
    }
    return f;
}

static size_t round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }
static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* Buffers C, A, B: chunk c (work-group row c) reads A's and writes C's rows BS*c..BS*c+BS-1, reads all of B. */
static void matmul_touched(const struct program *p, size_t c, int b, size_t *lo, size_t *hi)
{
    size_t rows = p->u[0], row_bytes = p->u[1] * sizeof(float);
    *lo = b == 2 ? 0 : BS * c * row_bytes;
    *hi = b == 2 ? p->u[1] * row_bytes : min_size(BS * c + BS, rows) * row_bytes;
}

static size_t matmul_wrong(const struct program *p)
{
    size_t rows = p->u[0], n = p->u[1], wrong = 0;
    const float *a = p->buf[1].init, *b = p->buf[2].init, *c = p->buf[0].result;
    for (size_t s = 0; s < 64; s++) {
        size_t i = s * 7919 % rows, j = s * 104729 % n;
        double sum = 0.0, mag = 0.0;
        for (size_t k = 0; k < n; k++) {
            double t = (double)a[i * n + k] * (double)b[k * n + j];
            sum += t;
            mag += fabs(t);
        }
        wrong += !(fabs((double)c[i * n + j] - sum) <= (double)(n + 2) * FLT_EPSILON * mag);
    }
    return wrong;
}

static void matmul_setup(struct program *p, size_t n, size_t rows)
{
    *p = (struct program){
        .name = "MatrixMul", .kernel = "matrixMul", .source = matrixmul_source, .dims = 2,
        .global = {round_up(n, BS), round_up(rows, BS)}, .local = {BS, BS}, .nbufs = 3, .nargs = 5,
        .buf = {{rows * n * sizeof(float), OUT, NULL, NULL, 0, NULL},
                {rows * n * sizeof(float), IN, random_floats(rows * n, 1), NULL, 0, NULL},
                {n * n * sizeof(float), IN, random_floats(n * n, 2), NULL, 0, NULL}},
        .arg = {{0, 0, NULL}, {1, 0, NULL}, {2, 0, NULL}, {-1, 8, &p->u[0]}, {-1, 8, &p->u[1]}},
        .touched = matmul_touched, .wrong_results = matmul_wrong, .u = {rows, n}};
    p->wg_per_chunk = p->global[0] / BS;
}

/* Buffers x, y: chunk c covers the elements of its work-groups. */
static void saxpy_touched(const struct program *p, size_t c, int b, size_t *lo, size_t *hi)
{
    size_t per_chunk = p->wg_per_chunk * p->local[0];
    (void)b;
    *lo = c * per_chunk * sizeof(float);
    *hi = min_size(c * per_chunk + per_chunk, p->u[0]) * sizeof(float);
}

static size_t saxpy_wrong(const struct program *p)
{
    const float *x = p->buf[0].init, *y0 = p->buf[1].init, *y = p->buf[1].result;
    size_t wrong = 0;
    for (size_t i = 0; i < p->u[0]; i++) {
        float fused = fmaf(p->a, x[i], y0[i]), product = p->a * x[i], split = product + y0[i];
        wrong += memcmp(&y[i], &fused, 4) && memcmp(&y[i], &split, 4);
    }
    return wrong;
}

static void saxpy_setup(struct program *p, size_t n)
{
    *p = (struct program){
        .name = "saxpy", .kernel = "saxpy", .source = saxpy_source, .dims = 1,
        .global = {round_up(n, 256), 1}, .local = {256, 1}, .wg_per_chunk = PAGE / sizeof(float) / 256,
        .nbufs = 2, .nargs = 4,
        .buf = {{n * sizeof(float), IN, random_floats(n, 3), NULL, 0, NULL},
                {n * sizeof(float), INOUT, random_floats(n, 4), NULL, 0, NULL}},
        .arg = {{0, 0, NULL}, {1, 0, NULL}, {-1, 4, &p->a}, {-1, 8, &p->u[0]}},
        .touched = saxpy_touched, .wrong_results = saxpy_wrong, .u = {n, 0}, .a = 1.75f};
}

static cl_mem create_buffer(size_t bytes)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CK(err);
    return m;
}

/* Lays the buffers out from virtual page 1, creates the original's buffers, the pool (the
 * buffers' data at va - PAGE), the identity LPT and the ABI's small buffers. */
static void create_memory(struct program *p, struct paging *m)
{
    size_t va = PAGE;
    for (int b = 0; b < p->nbufs; b++) {
        p->buf[b].va = va;
        va += round_up(p->buf[b].bytes, PAGE);
        p->buf[b].mem = create_buffer(p->buf[b].bytes);
    }
    m->entries = va / PAGE;
    m->groups = p->global[0] / p->local[0] * (p->global[1] / p->local[1]);
    m->chunks = (m->groups + p->wg_per_chunk - 1) / p->wg_per_chunk;
    m->pool = create_buffer(va - PAGE);
    for (int b = 0; b < p->nbufs; b++)
        if (p->buf[b].role == IN) {
            CK(clEnqueueWriteBuffer(queue, p->buf[b].mem, CL_TRUE, 0, p->buf[b].bytes, p->buf[b].init, 0, NULL, NULL));
            CK(clEnqueueWriteBuffer(queue, m->pool, CL_TRUE, p->buf[b].va - PAGE, p->buf[b].bytes, p->buf[b].init,
                                    0, NULL, NULL));
        }
    cl_uint *lpt = xmalloc(m->entries * sizeof *lpt);
    lpt[0] = TRANSLATE_NO_FRAME;
    for (size_t vp = 1; vp < m->entries; vp++)
        lpt[vp] = (cl_uint)(vp - 1);
    m->lpt = create_buffer(m->entries * sizeof *lpt);
    CK(clEnqueueWriteBuffer(queue, m->lpt, CL_TRUE, 0, m->entries * sizeof *lpt, lpt, 0, NULL, NULL));
    free(lpt);
    const cl_uchar zero = 0;
    m->scratch = create_buffer(TRANSLATE_SCRATCH_PAGES * PAGE);
    CK(clEnqueueFillBuffer(queue, m->scratch, &zero, 1, 0, TRANSLATE_SCRATCH_PAGES * PAGE, 0, NULL, NULL));
    m->faults = create_buffer((TRANSLATE_FAULT_LOG_HEADER_WORDS + TRANSLATE_FAULT_ENTRY_WORDS * LOG_CAPACITY) * 4);
    m->pas = create_buffer(m->chunks * m->entries);
    m->status = create_buffer(2 * sizeof(cl_uint));
}

static void release_memory(struct program *p, struct paging *m)
{
    for (int b = 0; b < p->nbufs; b++) {
        CK(clReleaseMemObject(p->buf[b].mem));
        free(p->buf[b].init);
        free(p->buf[b].result);
    }
    cl_mem all[] = {m->pool, m->lpt, m->scratch, m->faults, m->pas, m->status};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        CK(clReleaseMemObject(all[i]));
}

static void set_args(cl_kernel k, const struct program *p, enum variant v, const struct paging *m)
{
    cl_uint i = 0;
    for (int a = 0; a < p->nargs; a++) {
        int b = p->arg[a].buf;
        cl_ulong va = b >= 0 ? p->buf[b].va : 0;
        if (b < 0)
            CK(clSetKernelArg(k, i++, p->arg[a].size, p->arg[a].value));
        else if (v == ORIGINAL)
            CK(clSetKernelArg(k, i++, sizeof(cl_mem), &p->buf[b].mem));
        else
            CK(clSetKernelArg(k, i++, sizeof va, &va));
    }
    if (v == ORIGINAL)
        return;
    if (v == PAGED) {
        CK(clSetKernelArg(k, i++, sizeof(cl_mem), &m->lpt));
        for (int c = 0; c < TRANSLATE_MAX_POOL_CHUNKS; c++)
            CK(clSetKernelArg(k, i++, sizeof(cl_mem), &m->pool));
        CK(clSetKernelArg(k, i++, sizeof(cl_mem), &m->scratch));
        CK(clSetKernelArg(k, i++, sizeof(cl_mem), &m->faults));
    } else {
        CK(clSetKernelArg(k, i++, sizeof(cl_mem), &m->pas));
        CK(clSetKernelArg(k, i++, sizeof(cl_mem), &m->scratch));
        CK(clSetKernelArg(k, i++, sizeof(cl_mem), &m->status));
    }
    cl_ulong4 gsize = {{p->global[0], p->global[1], 1, 0}}, goff = {{0, 0, 0, 0}};
    cl_ulong4 cfg = {{SHIFT, m->entries, 0, m->groups}}, pascfg = {{p->wg_per_chunk, 1ull << 40, 0, 0}};
    CK(clSetKernelArg(k, i++, sizeof gsize, &gsize));
    CK(clSetKernelArg(k, i++, sizeof goff, &goff));
    CK(clSetKernelArg(k, i++, sizeof cfg, &cfg));
    if (v == INSPECTOR)
        CK(clSetKernelArg(k, i++, sizeof pascfg, &pascfg));
    cl_ulong4 slab = {{0, 0, 0, 0}}; /* one launch from work-group 0, no offset */
    CK(clSetKernelArg(k, i++, sizeof slab, &slab));
    /* a kernel with iteration ranges (translate.h): every iteration, no spill records */
    cl_uint nargs = 0;
    CK(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL));
    if (i < nargs) {
        cl_ulong2 iters = {{0, ~(cl_ulong)0}};
        CK(clSetKernelArg(k, i++, sizeof iters, &iters));
    }
    while (i < nargs)
        CK(clSetKernelArg(k, i++, sizeof(cl_mem), NULL));
}

/* Before every run: outputs poisoned, in/out buffers restored, fault log or PAS and status reset. */
static void prepare_run(const struct program *p, enum variant v, const struct paging *m)
{
    const cl_uchar poison = 0xff, zero = 0;
    if (v == INSPECTOR) {
        CK(clEnqueueFillBuffer(queue, m->pas, &zero, 1, 0, m->chunks * m->entries, 0, NULL, NULL));
        CK(clEnqueueFillBuffer(queue, m->status, &zero, 1, 0, 2 * sizeof(cl_uint), 0, NULL, NULL));
        return;
    }
    for (int b = 0; b < p->nbufs; b++) {
        const struct buffer *f = &p->buf[b];
        cl_mem mem = v == ORIGINAL ? f->mem : m->pool;
        size_t off = v == ORIGINAL ? 0 : f->va - PAGE;
        if (f->role == OUT)
            CK(clEnqueueFillBuffer(queue, mem, &poison, 1, off, f->bytes, 0, NULL, NULL));
        else if (f->role == INOUT)
            CK(clEnqueueWriteBuffer(queue, mem, CL_TRUE, off, f->bytes, f->init, 0, NULL, NULL));
    }
    const cl_uint header[TRANSLATE_FAULT_LOG_HEADER_WORDS] = {0, LOG_CAPACITY, 0, 0};
    if (v == PAGED)
        CK(clEnqueueWriteBuffer(queue, m->faults, CL_TRUE, 0, sizeof header, header, 0, NULL, NULL));
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Runs the kernel reps + 1 times; t[0..reps) sorted kernel ms of all but the first. Returns the
 * most faults one paged run logged. */
static cl_uint time_kernel(cl_kernel k, const struct program *p, enum variant v, const struct paging *m,
                           int reps, double *t)
{
    cl_uint faults = 0;
    for (int r = 0; r <= reps; r++) {
        prepare_run(p, v, m);
        cl_event e;
        cl_ulong t0, t1;
        CK(clEnqueueNDRangeKernel(queue, k, p->dims, NULL, p->global, p->local, 0, NULL, &e));
        CK(clWaitForEvents(1, &e));
        CK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL));
        CK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL));
        CK(clReleaseEvent(e));
        if (r > 0)
            t[r - 1] = (double)(t1 - t0) * 1e-6;
        cl_uint count = 0;
        if (v == PAGED)
            CK(clEnqueueReadBuffer(queue, m->faults, CL_TRUE, 0, sizeof count, &count, 0, NULL, NULL));
        faults = count > faults ? count : faults;
    }
    qsort(t, (size_t)reps, sizeof *t, compare_double);
    return faults;
}

/* XLAT_OPTIONS (environment): more build options for every kernel, e.g. NVIDIA's
 * -cl-nv-verbose; its build log (registers, spills) then goes to stderr. */
static cl_kernel build_kernel(const char *source, const char *options, const char *name)
{
    cl_int err;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CK(err);
    const char *more = getenv("XLAT_OPTIONS");
    char all[2048];
    snprintf(all, sizeof all, "%s %s", options, more ? more : "");
    cl_int built = clBuildProgram(prog, 1, &dev, all, NULL, NULL);
    if (built != CL_SUCCESS || more) {
        size_t len = 0;
        CK(clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &len));
        char *log = xmalloc(len + 1);
        CK(clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, len, log, NULL));
        log[len] = '\0';
        fprintf(stderr, "xlat_bench: %s %s:\n%s\n", name, built != CL_SUCCESS ? "does not build" : "build log", log);
        free(log);
        if (built != CL_SUCCESS)
            exit(1);
    }
    cl_kernel k = clCreateKernel(prog, name, &err);
    CK(err);
    CK(clReleaseProgram(prog)); /* the kernel holds it */
    return k;
}

/* The generated kernel must exist and keep the original's parameters (buffers as ulong). */
static void check_metadata(const struct program *p, const struct translate_result *r)
{
    for (size_t i = 0; i < r->num_kernels; i++) {
        const struct translate_kernel *k = &r->kernels[i];
        if (strcmp(k->name, p->kernel))
            continue;
        int ok = k->paged_ok && k->num_args == (unsigned)p->nargs;
        for (int a = 0; ok && a < p->nargs; a++)
            ok = (k->args[a].kind == TRANSLATE_ARG_GLOBAL_POINTER) == (p->arg[a].buf >= 0);
        if (ok && r->paged_source && r->inspector_source)
            return;
    }
    fprintf(stderr, "xlat_bench: %s: no usable paged kernel %s%s%s\n", p->name, p->kernel,
            r->num_diags ? ": " : "", r->num_diags ? r->diags[0].message : "");
    exit(1);
}

/* The paged run's outputs against the original's: differing 32-bit words. */
static size_t paged_differences(const struct program *p, const struct paging *m, size_t *words)
{
    size_t differ = 0;
    *words = 0;
    for (int b = 0; b < p->nbufs; b++) {
        const struct buffer *f = &p->buf[b];
        if (f->role == IN)
            continue;
        float *out = xmalloc(f->bytes);
        CK(clEnqueueReadBuffer(queue, m->pool, CL_TRUE, f->va - PAGE, f->bytes, out, 0, NULL, NULL));
        for (size_t i = 0; i < f->bytes / 4; i++)
            differ += memcmp(&out[i], &f->result[i], 4) != 0;
        *words += f->bytes / 4;
        free(out);
    }
    return differ;
}

/* The PAS against the pages each chunk touches; status words into status[2]. */
static size_t pas_differences(const struct program *p, const struct paging *m, size_t *marks, cl_uint *status)
{
    size_t bytes = m->chunks * m->entries, differ = 0;
    unsigned char *pas = xmalloc(bytes), *expect = memset(xmalloc(bytes), 0, bytes);
    CK(clEnqueueReadBuffer(queue, m->pas, CL_TRUE, 0, bytes, pas, 0, NULL, NULL));
    CK(clEnqueueReadBuffer(queue, m->status, CL_TRUE, 0, 2 * sizeof *status, status, 0, NULL, NULL));
    for (size_t c = 0; c < m->chunks; c++)
        for (int b = 0; b < p->nbufs; b++) {
            size_t lo, hi;
            p->touched(p, c, b, &lo, &hi);
            if (lo >= hi)
                continue;
            size_t first = (p->buf[b].va + lo) / PAGE, last = (p->buf[b].va + hi - 1) / PAGE;
            memset(expect + c * m->entries + first, 1, last - first + 1);
        }
    *marks = 0;
    for (size_t i = 0; i < bytes; i++) {
        differ += pas[i] != expect[i];
        *marks += expect[i];
    }
    free(pas);
    free(expect);
    return differ;
}

/* The check column of one kernel's row; returns 1 on FAIL. Keeps the original's outputs. */
static int check_run(struct program *p, enum variant v, const struct paging *m, cl_uint faults, char *s,
                     size_t size)
{
    size_t n, bad;
    cl_uint status[2];
    if (v == ORIGINAL) {
        for (int b = 0; b < p->nbufs; b++)
            if (p->buf[b].role != IN) {
                p->buf[b].result = xmalloc(p->buf[b].bytes);
                CK(clEnqueueReadBuffer(queue, p->buf[b].mem, CL_TRUE, 0, p->buf[b].bytes, p->buf[b].result,
                                       0, NULL, NULL));
            }
        bad = p->wrong_results(p);
        snprintf(s, size, "%s: %zu results wrong", bad ? "FAIL" : "OK", bad);
        return bad != 0;
    }
    if (v == PAGED) {
        bad = paged_differences(p, m, &n);
        snprintf(s, size, "%s: %zu of %zu words differ from original, %u faults", bad || faults ? "FAIL" : "OK",
                 bad, n, faults);
        return bad || faults;
    }
    bad = pas_differences(p, m, &n, status);
    int fail = bad || status[0] || status[1];
    snprintf(s, size, "%s: %zu PAS bytes differ from expected (%zu marks), status %u %u", fail ? "FAIL" : "OK",
             bad, n, status[0], status[1]);
    return fail;
}

/* One program: original, paged, inspector; one table row each. Returns the number of FAILs. */
static const char *dump_dir;
static const char *extra_file[16];
static int num_extra;

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "xlat_bench: cannot open %s\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    char *text = xmalloc((size_t)len + 1);
    text[fread(text, 1, (size_t)len, f)] = '\0';
    fclose(f);
    return text;
}

/* One timed row: the kernel built from src, its check, its time against base (0: it is the base). */
static int bench_row(struct program *p, enum variant v, const char *label, const char *src, const char *options,
                     struct paging *m, int reps, double *t, double *base)
{
    cl_kernel k = build_kernel(src, v == ORIGINAL ? "" : options, p->kernel);
    set_args(k, p, v, m);
    cl_uint faults = time_kernel(k, p, v, m, reps, t);
    CK(clReleaseKernel(k));
    char check[160];
    int fail = check_run(p, v, m, faults, check, sizeof check);
    *base = v == ORIGINAL ? t[0] : *base;
    double median = (t[(reps - 1) / 2] + t[reps / 2]) / 2;
    printf("| %s | %s | %.3f | %.3f | %.2fx | %s |\n", p->name, label, t[0], median, t[0] / *base, check);
    fflush(stdout);
    return fail;
}

static int bench_program(struct program *p, int reps)
{
    struct translate_result *r = NULL;
    if (translate_program(p->source, NULL, &r) != 0) {
        fprintf(stderr, "xlat_bench: %s: translation failed: %s\n", p->name, r ? r->error : "?");
        exit(1);
    }
    check_metadata(p, r);
    char options[1024], whole[1100];
    snprintf(options, sizeof options, "%s -D VAST_PAGE_SHIFT=%d -D VAST_POOL_CHUNKS=1",
             r->build_options ? r->build_options : "", SHIFT);
    snprintf(whole, sizeof whole, "%s -D VAST_WHOLE", options); /* as the runtime builds the paged program */
    struct paging m;
    create_memory(p, &m);
    double *t = xmalloc((size_t)reps * sizeof *t), base = 0;
    int fails = 0;
    if (dump_dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.paged.cl", dump_dir, p->kernel);
        FILE *f = fopen(path, "w");
        if (!f || fputs(r->paged_source, f) < 0 || fclose(f) != 0) {
            fprintf(stderr, "xlat_bench: cannot write %s\n", path);
            exit(2);
        }
    }
    for (enum variant v = ORIGINAL; v <= INSPECTOR; v++) {
        const char *src = v == ORIGINAL ? p->source : v == PAGED ? r->paged_source : r->inspector_source;
        fails += bench_row(p, v, variant_name[v], src, v == PAGED ? whole : options, &m, reps, t, &base);
        if (v == PAGED && strstr(src, "{ VAST_RG(")) /* a resumable loop: its build for iteration ranges too */
            fails += bench_row(p, v, "paged, ranges build", src, options, &m, reps, t, &base);
        char needle[256];
        snprintf(needle, sizeof needle, "void %s(", p->kernel);
        for (int e = 0; v == PAGED && e < num_extra; e++) {
            char *text = read_text(extra_file[e]);
            if (strstr(text, needle)) {
                const char *label = strrchr(extra_file[e], '/');
                fails += bench_row(p, PAGED, label ? label + 1 : extra_file[e], text, whole, &m, reps, t, &base);
            }
            free(text);
        }
    }
    free(t);
    release_memory(p, &m);
    translate_result_free(r);
    return fails;
}

static void open_device(char *name, size_t size)
{
    cl_platform_id plats[16];
    cl_uint count = 0;
    CK(clGetPlatformIDs(16, plats, &count));
    cl_platform_id plat = plats[0];
    for (cl_uint i = 0; i < count; i++) {
        char pname[256];
        CK(clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof pname, pname, NULL));
        if (strstr(pname, "NVIDIA")) {
            plat = plats[i];
            break;
        }
    }
    CK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    CK(clGetDeviceInfo(dev, CL_DEVICE_NAME, size, name, NULL));
    cl_int err;
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CK(err);
    queue = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    CK(err);
}

int main(int argc, char **argv)
{
    size_t n = 4096, rows = 8192, elements = (size_t)128 << 20;
    int reps = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--matmul") && i + 2 < argc) {
            n = strtoull(argv[++i], NULL, 0);
            rows = strtoull(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--saxpy") && i + 1 < argc) {
            elements = strtoull(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--dump") && i + 1 < argc) {
            dump_dir = argv[++i];
        } else if (!strcmp(argv[i], "--extra") && i + 1 < argc && num_extra < 16) {
            extra_file[num_extra++] = argv[++i];
        } else {
            reps = 0;
            break;
        }
    }
    if (reps < 1) {
        fprintf(stderr, "usage: xlat_bench [--matmul N ROWS] [--saxpy ELEMENTS] [--reps R] [--dump DIR] [--extra FILE]...\n");
        return 2;
    }
    char name[256];
    open_device(name, sizeof name);
    printf("device: %s; MatrixMul n=%zu rows=%zu; saxpy %zu elements; %zu KiB pages; %d timed runs after a warm-up\n\n",
           name, n, rows, elements, PAGE >> 10, reps);
    printf("| program | kernel | min ms | median ms | vs original | check |\n|---|---|---|---|---|---|\n");
    int fails = 0;
    struct program p;
    if (n && rows) {
        matmul_setup(&p, n, rows);
        fails += bench_program(&p, reps);
    }
    if (elements) {
        saxpy_setup(&p, elements);
        fails += bench_program(&p, reps);
    }
    clReleaseCommandQueue(queue);
    clReleaseContext(ctx);
    return fails ? 1 : 0;
}
