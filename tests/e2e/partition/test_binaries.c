/* test_binaries.c - programs from binaries, kernels VAST cannot page, and refusals at enqueue
 * (issue 13, defect 5), each run on PoCL and through VAST in one process (ICD mode), 4 KiB
 * pages. Applications cache CL_PROGRAM_BINARIES and load them with clCreateProgramWithBinary
 * on their next run (pyopencl, hashcat, darktable); VAST hands out a container that carries
 * the source and the build options with the real binary, so such programs page like programs
 * from source.
 *
 *   vast_binary     axpb over 2 x 8 MiB at a quarter of the data, from a binary VAST handed
 *                   out (built with -D SHIFT=3; the binary is built again without options, so
 *                   the container's options must be the ones translated): partitioned, equal
 *                   to PoCL; sizes and bytes of CL_PROGRAM_BINARIES agree from call to call
 *   foreign_fits    PoCL's own binary of the same program (one VAST did not make) over data
 *                   that fits: runs direct, equal to PoCL
 *   foreign_refused the same binary over data that does not fit: clEnqueueNDRangeKernel
 *                   itself returns CL_OUT_OF_RESOURCES, a "vast: error:" line names the kernel
 *                   and the reason, the buffers stay untouched
 *   source_refused  a kernel from source that the translator rejects (a packed member's
 *                   read-modify-write),
 *                   data that does not fit: refused at enqueue likewise
 *   corrupt         a VAST binary with one byte flipped, one cut short, and one repacked for
 *                   another device: clCreateProgramWithBinary returns CL_INVALID_BINARY,
 *                   binary_status too
 *   compile_link    clCompileProgram, the object's binary loaded back (binary type
 *                   COMPILED_OBJECT), clLinkProgram, and the linked program's binary loaded
 *                   back: each runs axpb direct over data that fits, equal to PoCL
 *   scattered       eight buffers fill the page cache, kernels write them, every other one is
 *                   released: the free frames are scattered; then a kernel VAST cannot page
 *                   over two buffers that fit only in runs longer than any hole: it must run
 *                   direct (the page cache compacts, writing back what it evicts), every
 *                   buffer equal to PoCL's
 *
 * Usage: partition_binaries [--only NAME[,NAME]] [--flip]. --flip flips one byte of VAST's
 * result before comparing (cases that compare data must then FAIL). Exit 0 when every case
 * behaves as expected. */
#include "harness.h"
#include "interpose/progbin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src_axpb =
    "__kernel void axpb(__global const uint *x, __global uint *y, uint a, uint b) {\n"
    "  size_t i = get_global_id(0);\n"
    "  y[i] = (a * x[i] + b) >> SHIFT;\n"
    "}\n";
static const char *opt_axpb = "-D SHIFT=3";

static const char *src_unpageable =
    HARNESS_SRC_UNPAGEABLE
    "__kernel void bump(__global uint *a, uint v, uint n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) a[i] = a[i] * 3u + v;\n"
    "}\n";

enum { AX_GLOBAL = 2u << 20, AX_N = AX_GLOBAL + 13 }; /* 8 MiB + 52 bytes per buffer */

static uint64_t seed;
static int flip;

static void *rnd_bytes(size_t n)
{
    unsigned char *v = malloc(n);
    for (size_t i = 0; i < n; i++)
        v[i] = (unsigned char)(harness_rand(&seed) >> 32);
    return v;
}

static void *poisoned(size_t n) { return harness_poison(n); }

/* ---- binaries ---- */

/* The program's one binary (malloc'ed); the sizes and bytes of two calls must agree. */
static unsigned char *program_binary(cl_program p, size_t *len)
{
    size_t size = 0, again = 0;
    CL_OK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL));
    if (size == 0) {
        printf("  CL_PROGRAM_BINARY_SIZES is 0\n");
        exit(1);
    }
    unsigned char *bin = malloc(size), *bin2 = malloc(size);
    CL_OK(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL));
    CL_OK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof again, &again, NULL));
    CL_OK(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin2, &bin2, NULL));
    if (again != size || memcmp(bin, bin2, size) != 0) {
        printf("  CL_PROGRAM_BINARY_SIZES/BINARIES disagree between calls (%zu, %zu)\n", size, again);
        exit(1);
    }
    free(bin2);
    *len = size;
    return bin;
}

/* A built program from a binary on e; *status receives the create (or build) error. */
static cl_program from_binary(struct clenv *e, const unsigned char *bin, size_t len, const char *options,
                              cl_int *status, cl_int *binary_status)
{
    cl_int bs = 12345, err = CL_SUCCESS;
    cl_program p = clCreateProgramWithBinary(e->ctx, 1, &e->device, &len, &bin, &bs, &err);
    if (binary_status != NULL)
        *binary_status = bs;
    if (p != NULL && err == CL_SUCCESS)
        err = clBuildProgram(p, 1, &e->device, options, NULL, NULL);
    *status = err;
    return p;
}

/* axpb from program p on e over x (AX_N uints); y read back into out (malloc'ed, poisoned
 * before). Returns the enqueue's status, or the event's / finish's when the enqueue passed. */
static cl_int run_axpb(struct clenv *e, cl_program p, const void *x, unsigned char **out, cl_int *enq)
{
    cl_int err;
    cl_kernel k = clCreateKernel(p, "axpb", &err);
    CL_OK(err);
    size_t bytes = (size_t)AX_N * 4;
    void *yinit = poisoned(bytes);
    cl_mem mx = clenv_buffer(e, bytes, x), my = clenv_buffer(e, bytes, yinit);
    free(yinit);
    cl_uint a = 2654435761u, b = 12345u;
    CL_OK(clSetKernelArg(k, 0, sizeof mx, &mx));
    CL_OK(clSetKernelArg(k, 1, sizeof my, &my));
    CL_OK(clSetKernelArg(k, 2, sizeof a, &a));
    CL_OK(clSetKernelArg(k, 3, sizeof b, &b));
    size_t global = AX_GLOBAL, local = 64;
    cl_event ev = NULL;
    *enq = clEnqueueNDRangeKernel(e->q, k, 1, NULL, &global, &local, 0, NULL, &ev);
    cl_int fin = clFinish(e->q), status = *enq, es = CL_COMPLETE;
    if (ev != NULL && clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof es, &es, NULL) == CL_SUCCESS &&
        es < 0 && status == CL_SUCCESS)
        status = es;
    if (status == CL_SUCCESS)
        status = fin;
    if (ev != NULL)
        clReleaseEvent(ev);
    *out = malloc(bytes);
    memset(*out, 0x5c, bytes);
    cl_int rd = clenv_read(e, my, bytes, *out);
    if (status == CL_SUCCESS)
        status = rd;
    clReleaseMemObject(mx);
    clReleaseMemObject(my);
    clReleaseKernel(k);
    return status;
}

static int compare(const char *what, const unsigned char *want, unsigned char *got, size_t n)
{
    if (flip)
        got[n / 2] ^= 1;
    return harness_compare_bytes(what, want, n, got, n);
}

static int case_vast_binary(struct clenv *pocl, struct clenv *vast)
{
    void *x = rnd_bytes((size_t)AX_N * 4);
    unsigned char *want = NULL, *got = NULL;
    cl_int enq;
    cl_program pp = clenv_build(pocl, src_axpb, opt_axpb);
    CL_OK(run_axpb(pocl, pp, x, &want, &enq));
    cl_program built = clenv_build(vast, src_axpb, opt_axpb);
    size_t len;
    unsigned char *bin = program_binary(built, &len);
    clReleaseProgram(built);
    cl_int st, bs;
    cl_program p = from_binary(vast, bin, len, NULL, &st, &bs);
    int bad = 0;
    if (st != CL_SUCCESS || bs != CL_SUCCESS)
        bad = printf("  program from VAST's binary: %s (binary_status %d)\n", cl_status_name(st), bs);
    size_t len2;
    unsigned char *bin2 = bad ? NULL : program_binary(p, &len2); /* a binary of a binary loads too */
    cl_program p2 = bad ? NULL : from_binary(vast, bin2, len2, opt_axpb, &st, &bs);
    if (!bad && (st != CL_SUCCESS || bs != CL_SUCCESS))
        bad = printf("  program from the binary of a binary program: %s\n", cl_status_name(st));
    cl_int err = bad ? CL_INVALID_PROGRAM : run_axpb(vast, p, x, &got, &enq);
    printf("  vast_binary: VAST launch: %s (enqueue %s)\n", cl_status_name(err), cl_status_name(enq));
    if (!bad && err != CL_SUCCESS)
        bad = printf("  vast_binary: VAST failed\n");
    if (!bad)
        bad = compare("vast_binary y", want, got, (size_t)AX_N * 4);
    free(got);
    if (p2 != NULL)
        clReleaseProgram(p2);
    if (p != NULL)
        clReleaseProgram(p);
    free(bin);
    free(bin2);
    free(want);
    free(x);
    clReleaseProgram(pp);
    return bad;
}

/* PoCL's own binary of axpb, loaded on VAST: direct when it fits, else refused at enqueue. */
static int case_foreign(struct clenv *pocl, struct clenv *vast, bool fits)
{
    void *x = rnd_bytes((size_t)AX_N * 4);
    unsigned char *want = NULL, *got = NULL;
    cl_int enq;
    cl_program pp = clenv_build(pocl, src_axpb, opt_axpb);
    CL_OK(run_axpb(pocl, pp, x, &want, &enq));
    size_t len;
    unsigned char *bin = program_binary(pp, &len);
    cl_int st, bs;
    cl_program p = from_binary(vast, bin, len, opt_axpb, &st, &bs);
    int bad = 0;
    if (st != CL_SUCCESS || bs != CL_SUCCESS)
        bad = printf("  PoCL's binary on VAST: %s (binary_status %d)\n", cl_status_name(st), bs);
    cl_int err = bad ? CL_INVALID_PROGRAM : run_axpb(vast, p, x, &got, &enq);
    printf("  foreign: VAST launch: %s (enqueue %s)\n", cl_status_name(err), cl_status_name(enq));
    if (!bad && fits) {
        bad = err != CL_SUCCESS ? printf("  foreign_fits: VAST failed\n") : compare("foreign y", want, got, (size_t)AX_N * 4);
    } else if (!bad) {
        if (enq != CL_OUT_OF_RESOURCES)
            bad = printf("  foreign_refused: clEnqueueNDRangeKernel returned %s, expected CL_OUT_OF_RESOURCES\n",
                         cl_status_name(enq));
        unsigned char *poison = poisoned((size_t)AX_N * 4);
        if (memcmp(got, poison, (size_t)AX_N * 4) != 0)
            bad = printf("  foreign_refused: y was written although the launch was refused\n");
        free(poison);
    }
    free(got);
    if (p != NULL)
        clReleaseProgram(p);
    free(bin);
    free(want);
    free(x);
    clReleaseProgram(pp);
    return bad;
}

static int case_source_refused(struct clenv *vast)
{
    size_t n = 1u << 20, bytes = n * 4;
    void *in = rnd_bytes(bytes), *poison = poisoned(bytes);
    cl_program p = clenv_build(vast, src_unpageable, "");
    cl_int err;
    cl_kernel k = clCreateKernel(p, "unpageable", &err);
    CL_OK(err);
    cl_mem mi = clenv_buffer(vast, bytes, in), mo = clenv_buffer(vast, bytes, poison);
    CL_OK(clSetKernelArg(k, 0, sizeof mi, &mi));
    CL_OK(clSetKernelArg(k, 1, sizeof mo, &mo));
    CL_OK(clSetKernelArg(k, 2, 64 * 4, NULL));
    size_t global = n, local = 64;
    cl_int enq = clEnqueueNDRangeKernel(vast->q, k, 1, NULL, &global, &local, 0, NULL, NULL);
    cl_int fin = clFinish(vast->q);
    printf("  source_refused: enqueue %s, finish %s\n", cl_status_name(enq), cl_status_name(fin));
    int bad = 0;
    if (enq != CL_OUT_OF_RESOURCES)
        bad = printf("  source_refused: clEnqueueNDRangeKernel returned %s, expected CL_OUT_OF_RESOURCES\n",
                     cl_status_name(enq));
    unsigned char *got = malloc(bytes);
    CL_OK(clenv_read(vast, mo, bytes, got));
    if (memcmp(got, poison, bytes) != 0)
        bad = printf("  source_refused: out was written although the launch was refused\n");
    free(got);
    free(in);
    free(poison);
    clReleaseMemObject(mi);
    clReleaseMemObject(mo);
    clReleaseKernel(k);
    clReleaseProgram(p);
    return bad;
}

static int case_corrupt(struct clenv *vast)
{
    cl_program built = clenv_build(vast, src_axpb, opt_axpb);
    size_t len;
    unsigned char *bin = program_binary(built, &len);
    clReleaseProgram(built);
    int bad = 0;
    struct vast_progbin pb;
    if (vast_progbin_unpack(bin, len, &pb) != VAST_PROGBIN_VALID) {
        printf("  corrupt: VAST's binary is not a valid container\n");
        return 1;
    }
    pb.device = "another device\nanother driver";
    pb.device_len = strlen(pb.device);
    size_t other_len = vast_progbin_size(&pb);
    unsigned char *other = malloc(other_len);
    vast_progbin_pack(&pb, other);
    for (int how = 0; how < 4; how++) {
        size_t l = how == 3 ? other_len : len;
        unsigned char *b = malloc(l);
        memcpy(b, how == 3 ? other : bin, l);
        const char *what = how == 0   ? "one byte flipped in the middle"
                           : how == 1 ? "last byte flipped"
                           : how == 2 ? "cut short"
                                      : "made for another device";
        if (how == 0)
            b[len / 2] ^= 0x40;
        else if (how == 1)
            b[len - 1] ^= 0x01;
        else if (how == 2)
            l = len - 7;
        cl_int err = CL_SUCCESS, bs = 12345;
        const unsigned char *cb = b;
        cl_program p = clCreateProgramWithBinary(vast->ctx, 1, &vast->device, &l, &cb, &bs, &err);
        printf("  corrupt (%s): %s, binary_status %d\n", what, cl_status_name(err), bs);
        if (err != CL_INVALID_BINARY || p != NULL || bs != CL_INVALID_BINARY)
            bad = printf("  corrupt (%s): expected CL_INVALID_BINARY, a NULL program and binary_status "
                         "CL_INVALID_BINARY\n", what);
        if (p != NULL)
            clReleaseProgram(p);
        free(b);
    }
    free(other);
    free(bin);
    return bad;
}

/* clCompileProgram and clLinkProgram keep working through binaries VAST hands out. */
static int case_compile_link(struct clenv *pocl, struct clenv *vast)
{
    void *x = rnd_bytes((size_t)AX_N * 4);
    unsigned char *want = NULL, *got = NULL, *got2 = NULL;
    cl_int enq, err;
    cl_program pp = clenv_build(pocl, src_axpb, opt_axpb);
    CL_OK(run_axpb(pocl, pp, x, &want, &enq));
    cl_program src = clCreateProgramWithSource(vast->ctx, 1, &src_axpb, NULL, &err);
    CL_OK(err);
    CL_OK(clCompileProgram(src, 1, &vast->device, opt_axpb, 0, NULL, NULL, NULL, NULL));
    size_t len, llen;
    unsigned char *obj = program_binary(src, &len);
    cl_int bs;
    const unsigned char *cobj = obj;
    cl_program loaded = clCreateProgramWithBinary(vast->ctx, 1, &vast->device, &len, &cobj, &bs, &err);
    CL_OK(err);
    cl_program_binary_type type = 0;
    CL_OK(clGetProgramBuildInfo(loaded, vast->device, CL_PROGRAM_BINARY_TYPE, sizeof type, &type, NULL));
    int bad = type != CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT
                  ? printf("  compile_link: the object loaded back has binary type %lu\n", (unsigned long)type)
                  : 0;
    cl_program linked = clLinkProgram(vast->ctx, 1, &vast->device, NULL, 1, &loaded, NULL, NULL, &err);
    CL_OK(err);
    unsigned char *lbin = program_binary(linked, &llen);
    cl_int st;
    cl_program relinked = from_binary(vast, lbin, llen, NULL, &st, &bs);
    CL_OK(st);
    cl_int e1 = run_axpb(vast, linked, x, &got, &enq), e2 = run_axpb(vast, relinked, x, &got2, &enq);
    printf("  compile_link: linked %s, its binary %s\n", cl_status_name(e1), cl_status_name(e2));
    if (!bad && (e1 != CL_SUCCESS || e2 != CL_SUCCESS))
        bad = printf("  compile_link: VAST failed\n");
    if (!bad)
        bad = compare("compile_link y (linked)", want, got, (size_t)AX_N * 4) ||
              compare("compile_link y (from its binary)", want, got2, (size_t)AX_N * 4);
    free(got);
    free(got2);
    free(want);
    free(obj);
    free(lbin);
    free(x);
    clReleaseProgram(relinked);
    clReleaseProgram(linked);
    clReleaseProgram(loaded);
    clReleaseProgram(src);
    clReleaseProgram(pp);
    return bad;
}

/* ---- scattered frames (budget 1 MiB, 4 KiB pages: 256 frames) ---- */

enum { SC_BUFS = 8, SC_N = 30 * 1024 - 25, SC_FN = 75 * 1024 - 40, SC_GLOBAL = 1199 * 64 };

/* The whole sequence on e; every buffer that survives is read into out[] (SC_BUFS / 2 + 2). */
static cl_int run_scattered(struct clenv *e, void *const init[SC_BUFS], const void *in, unsigned char **out)
{
    cl_program p = clenv_build(e, src_unpageable, "");
    cl_int err;
    cl_kernel bump = clCreateKernel(p, "bump", &err);
    CL_OK(err);
    cl_kernel ac = clCreateKernel(p, "unpageable", &err);
    CL_OK(err);
    cl_mem b[SC_BUFS];
    cl_uint n = SC_N;
    size_t global = (SC_N + 63) / 64 * 64, local = 64;
    for (cl_uint i = 0; i < SC_BUFS; i++) {
        b[i] = clenv_buffer(e, (size_t)SC_N * 4, init[i]);
        cl_uint v = 7 * i + 1;
        CL_OK(clSetKernelArg(bump, 0, sizeof b[i], &b[i]));
        CL_OK(clSetKernelArg(bump, 1, sizeof v, &v));
        CL_OK(clSetKernelArg(bump, 2, sizeof n, &n));
        CL_OK(clEnqueueNDRangeKernel(e->q, bump, 1, NULL, &global, &local, 0, NULL, NULL));
        CL_OK(clFinish(e->q));
    }
    for (cl_uint i = 1; i < SC_BUFS; i += 2)
        clReleaseMemObject(b[i]);
    void *poison = poisoned((size_t)SC_FN * 4);
    cl_mem mi = clenv_buffer(e, (size_t)SC_FN * 4, in), mo = clenv_buffer(e, (size_t)SC_FN * 4, poison);
    free(poison);
    CL_OK(clSetKernelArg(ac, 0, sizeof mi, &mi));
    CL_OK(clSetKernelArg(ac, 1, sizeof mo, &mo));
    CL_OK(clSetKernelArg(ac, 2, 64 * 4, NULL));
    size_t ag = SC_GLOBAL;
    cl_event ev = NULL;
    cl_int status = clEnqueueNDRangeKernel(e->q, ac, 1, NULL, &ag, &local, 0, NULL, &ev);
    cl_int fin = clFinish(e->q), es = CL_COMPLETE;
    if (ev != NULL && clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof es, &es, NULL) == CL_SUCCESS &&
        es < 0 && status == CL_SUCCESS)
        status = es;
    if (status == CL_SUCCESS)
        status = fin;
    if (ev != NULL)
        clReleaseEvent(ev);
    cl_mem keep[SC_BUFS / 2 + 2] = {b[0], b[2], b[4], b[6], mi, mo};
    for (int i = 0; i < SC_BUFS / 2 + 2; i++) {
        size_t bytes = i < SC_BUFS / 2 ? (size_t)SC_N * 4 : (size_t)SC_FN * 4;
        out[i] = malloc(bytes);
        memset(out[i], 0x5c, bytes);
        CL_OK(clenv_read(e, keep[i], bytes, out[i]));
        clReleaseMemObject(keep[i]);
    }
    clReleaseKernel(bump);
    clReleaseKernel(ac);
    clReleaseProgram(p);
    return status;
}

static int case_scattered(struct clenv *pocl, struct clenv *vast)
{
    void *init[SC_BUFS];
    for (int i = 0; i < SC_BUFS; i++)
        init[i] = rnd_bytes((size_t)SC_N * 4);
    float *in = malloc((size_t)SC_FN * 4);
    for (size_t i = 0; i < SC_FN; i++)
        in[i] = (float)(harness_rand(&seed) >> 40) / 1024.0f;
    unsigned char *want[SC_BUFS / 2 + 2], *got[SC_BUFS / 2 + 2];
    CL_OK(run_scattered(pocl, init, in, want));
    cl_int err = run_scattered(vast, init, in, got);
    printf("  scattered: VAST: %s\n", cl_status_name(err));
    int bad = err != CL_SUCCESS ? printf("  scattered: VAST failed\n") : 0;
    for (int i = 0; i < SC_BUFS / 2 + 2 && !bad; i++) {
        char what[64];
        snprintf(what, sizeof what, "scattered buffer %d", i);
        bad = compare(what, want[i], got[i], i < SC_BUFS / 2 ? (size_t)SC_N * 4 : (size_t)SC_FN * 4);
    }
    for (int i = 0; i < SC_BUFS / 2 + 2; i++)
        free(want[i]), free(got[i]);
    for (int i = 0; i < SC_BUFS; i++)
        free(init[i]);
    free(in);
    return bad;
}

/* ---- the cases and their judges ---- */

enum expect { E_PARTITIONED, E_DIRECT, E_REFUSED, E_NONE };
struct bcase {
    const char *name, *kernel;
    size_t budget;
    enum expect expect;
    bool compares; /* --flip applies */
    const char *const *reasons;
};

static const char *const reason_binary[] = {"binary", NULL};
static const char *const reason_unpageable[] = {"straddl", "cannot be paged", "translat", NULL};

#define AX_WS ((size_t)AX_N * 8)
static const struct bcase cases[] = {
    {"vast_binary", "axpb", AX_WS / 4, E_PARTITIONED, true, NULL},
    {"foreign_fits", "axpb", AX_WS * 2, E_DIRECT, true, NULL},
    {"foreign_refused", "axpb", AX_WS / 4, E_REFUSED, false, reason_binary},
    {"source_refused", "unpageable", 1u << 20, E_REFUSED, false, reason_unpageable},
    {"corrupt", "axpb", 4u << 20, E_NONE, false, NULL},
    {"compile_link", "axpb", AX_WS * 2, E_DIRECT, true, NULL},
    {"scattered", "unpageable", 1u << 20, E_DIRECT, true, NULL},
};
#define NCASES (sizeof cases / sizeof cases[0])

static int child(const void *bc, const char *arg, int flipped)
{
    const struct bcase *c = bc;
    (void)arg;
    flip = flipped;
    setvbuf(stdout, NULL, _IOLBF, 0);
    seed = 0x9e3779b97f4a7c15ull;
    struct clenv pocl, vast;
    clenv_open(&pocl, "Portable");
    clenv_open(&vast, "VAST");
    int bad;
    if (!strcmp(c->name, "vast_binary"))
        bad = case_vast_binary(&pocl, &vast);
    else if (!strcmp(c->name, "foreign_fits"))
        bad = case_foreign(&pocl, &vast, true);
    else if (!strcmp(c->name, "foreign_refused"))
        bad = case_foreign(&pocl, &vast, false);
    else if (!strcmp(c->name, "source_refused"))
        bad = case_source_refused(&vast);
    else if (!strcmp(c->name, "corrupt"))
        bad = case_corrupt(&vast);
    else if (!strcmp(c->name, "compile_link"))
        bad = case_compile_link(&pocl, &vast);
    else
        bad = case_scattered(&pocl, &vast);
    clenv_close(&pocl);
    clenv_close(&vast);
    return bad ? 1 : 0;
}

/* One run at the case's budget, 4 KiB pages; under --flip only the cases that compare. */
static int runs(const void *bc, const struct harness_opts *o, struct harness_run *out, size_t max)
{
    const struct bcase *c = bc;
    (void)max;
    out[0] = (struct harness_run){.name = c->name, .budget = c->budget, .page = 4096};
    return o->flip && !c->compares ? 0 : 1;
}

static void judge(const void *bc, const struct harness_run *run, const char *out, char *why, size_t n, char *what,
                  size_t nwhat)
{
    const struct bcase *c = bc;
    long long parts = harness_stat(out, c->kernel, "partitioned", "partitions");
    snprintf(what, nwhat, "%-16s budget %6zuK partitions=%lld", c->name, run->budget >> 10, parts);
    if (c->expect == E_PARTITIONED && parts < 2)
        snprintf(why, n, "no VAST_STATS line 'kernel=%s mode=partitioned' with partitions >= 2", c->kernel);
    else if (c->expect == E_DIRECT && harness_stat(out, c->kernel, "direct", "launches") < 1)
        snprintf(why, n, "no VAST_STATS line 'kernel=%s mode=direct'", c->kernel);
    else if (c->expect == E_REFUSED && !harness_refusal_logged(out, c->kernel, c->reasons))
        snprintf(why, n, "no 'vast: error:' line naming kernel '%s' and the reason (%s)", c->kernel, c->reasons[0]);
}

int main(int argc, char **argv)
{
    static const struct harness_prog prog = {
        cases, NCASES, sizeof cases[0], "cases", {0}, false, NULL, child, runs, judge};
    return harness_main(argc, argv, &prog);
}
