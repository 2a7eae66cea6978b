/* test_affine.c - unit tests of translate/affine.c (no device): the host page set
 * description (translate_affine) of small kernels, exact postfix programs for some sites and
 * loops, NULL for kernels outside the supported class, and two evaluations through
 * translate_affine_ranges (affine_eval.c) of what the translator produced. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "MatrixMul/matrixmul_kernel.h"
#include "NBody/nbody_kernel.h"
#include "translate.h"
#include "tr.h"
#include "vast_cmocka.h"

enum { C = TRANSLATE_AOP_CONST, ARG = TRANSLATE_AOP_ARG, GID = TRANSLATE_AOP_GLOBAL_ID,
       LID = TRANSLATE_AOP_LOCAL_ID, LOOP = TRANSLATE_AOP_LOOP, CAST = TRANSLATE_AOP_CAST,
       NEG = TRANSLATE_AOP_NEG, ADD = TRANSLATE_AOP_ADD, SUB = TRANSLATE_AOP_SUB,
       MUL = TRANSLATE_AOP_MUL, REM = TRANSLATE_AOP_REM, MIN = TRANSLATE_AOP_MIN,
       MAX = TRANSLATE_AOP_MAX, EITHER = TRANSLATE_AOP_EITHER };
enum { R = TRANSLATE_READ, W = TRANSLATE_WRITE, RW = TRANSLATE_READ | TRANSLATE_WRITE };

/* Node shorthands: op, bits, signedness, value. */
#define S32(op, v) {op, 32, 1, v}
#define U32(op, v) {op, 32, 0, v}
#define U64(op, v) {op, 64, 0, v}
#define S64(op, v) {op, 64, 1, v}
/* The tail of every subscript site: index as long, times the element size. */
#define SCALE(n) S64(CAST, 0), S64(C, n), S64(MUL, 0)

static struct translate_result *tr(const char *src) { return tr_program(src, NULL); }

static const struct translate_kernel *kernel(const struct translate_result *r, const char *name)
{
    for (size_t i = 0; i < r->num_kernels; i++)
        if (!strcmp(r->kernels[i].name, name))
            return &r->kernels[i];
    fail_msg("no kernel %s", name);
    return NULL;
}

/* The single kernel of r, usable and with affine sites and loops as counted. */
static const struct translate_affine *affine(const struct translate_result *r, const char *name,
                                             unsigned nsites, unsigned nloops)
{
    const struct translate_kernel *k = kernel(r, name);
    assert_true(k->paged_ok);
    if (!k->affine)
        fail_msg("kernel %s: no affine description", name);
    assert_int_equal(k->affine->nsites, nsites);
    assert_int_equal(k->affine->nloops, nloops);
    return k->affine;
}

static void expect_expr(const struct translate_aexpr *e, const struct translate_anode *want,
                        unsigned n)
{
    assert_int_equal(e->n, n);
    for (unsigned i = 0; i < n; i++) {
        if (e->nodes[i].op != want[i].op || e->nodes[i].bits != want[i].bits ||
            e->nodes[i].is_signed != want[i].is_signed || e->nodes[i].v != want[i].v)
            fail_msg("node %u: got op %u bits %u signed %u v %lld, want op %u bits %u signed %u "
                     "v %lld", i, e->nodes[i].op, e->nodes[i].bits, e->nodes[i].is_signed,
                     e->nodes[i].v, want[i].op, want[i].bits, want[i].is_signed, want[i].v);
    }
}

#define EXPECT(expr, ...)                                                                    \
    do {                                                                                     \
        const struct translate_anode want_[] = {__VA_ARGS__};                                \
        expect_expr(expr, want_, sizeof want_ / sizeof want_[0]);                            \
    } while (0)

static void expect_site(const struct translate_asite *s, unsigned arg, unsigned bytes,
                        unsigned access)
{
    assert_int_equal(s->arg, arg);
    assert_int_equal(s->bytes, bytes);
    assert_int_equal(s->access, access);
}

static void test_saxpy(void **state)
{
    (void)state;
    struct translate_result *r =
        tr("__kernel void saxpy(float a, __global const float *x, __global float *y) {\n"
           "  int i = get_global_id(0); y[i] = a * x[i] + y[i]; }\n");
    const struct translate_affine *a = affine(r, "saxpy", 3, 0);
    expect_site(&a->sites[0], 2, 4, W);
    expect_site(&a->sites[1], 1, 4, R);
    expect_site(&a->sites[2], 2, 4, R);
    for (unsigned s = 0; s < 3; s++) /* i: (int)get_global_id(0) */
        EXPECT(&a->sites[s].offset, U64(GID, 0), S32(CAST, 0), SCALE(4));
    translate_result_free(r);
}

static void test_matrixmul(void **state)
{
    (void)state;
    struct translate_result *r = tr(matrixmul_source);
    /* the k loop over __local tiles has no global access: dropped */
    const struct translate_affine *a = affine(r, "matrixMul", 3, 1);
    expect_site(&a->sites[0], 1, 4, R);
    expect_site(&a->sites[1], 2, 4, R);
    expect_site(&a->sites[2], 0, 4, W);
    /* for (size_t t = 0; t < n; t += BS) */
    assert_int_equal(a->loops[0].cmp, TRANSLATE_ACMP_LT);
    EXPECT(&a->loops[0].first, U64(C, 0));
    EXPECT(&a->loops[0].bound, U64(ARG, 4));
    EXPECT(&a->loops[0].step, U64(C, 16));
    /* A[row * n + t + tx] */
    EXPECT(&a->sites[0].offset, U64(GID, 1), U64(ARG, 4), U64(MUL, 0), U64(LOOP, 0),
           U64(ADD, 0), U64(LID, 0), U64(ADD, 0), SCALE(4));
    /* B[(t + ty) * n + col] */
    EXPECT(&a->sites[1].offset, U64(LOOP, 0), U64(LID, 1), U64(ADD, 0), U64(ARG, 4),
           U64(MUL, 0), U64(GID, 0), U64(ADD, 0), SCALE(4));
    /* C[row * n + col] */
    EXPECT(&a->sites[2].offset, U64(GID, 1), U64(ARG, 4), U64(MUL, 0), U64(GID, 0),
           U64(ADD, 0), SCALE(4));
    /* the t loop runs in iteration ranges (resumable): A and B inside it, C after it */
    assert_true(kernel(r, "matrixMul")->resumable);
    assert_int_equal(a->ranges, 1);
    assert_int_equal(a->loops[0].ranged, 1);
    assert_int_equal(a->sites[0].range_part, 1);
    assert_int_equal(a->sites[1].range_part, 1);
    assert_int_equal(a->sites[2].range_part, 2);
    assert_int_equal(a->sites[2].range_loop, 0);
    translate_result_free(r);
    /* a grid-stride loop (stride.c): its loop is ranged, its site inside; a while loop that is
     * ranged has no counted loop here, so the description has no ranges */
    r = tr("__kernel void axpy(__global const float *x, __global float *y, uint n) {\n"
           "  for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) { y[i] += 2.0f * x[i]; } }\n"
           "__kernel void w(__global float *y, uint n) { size_t i = get_global_id(0);\n"
           "  while (i < n) { y[i] = 1.0f; i += get_global_size(0); } }\n");
    a = affine(r, "axpy", 2, 1);
    assert_true(kernel(r, "axpy")->iteration_ranges);
    assert_int_equal(a->ranges, 1);
    assert_int_equal(a->loops[0].ranged, 1);
    for (unsigned i = 0; i < 2; i++)
        assert_int_equal(a->sites[i].range_part, 1);
    assert_false(kernel(r, "w")->affine != NULL && kernel(r, "w")->affine->ranges);
    translate_result_free(r);
    /* a load before a resumable loop (NBody's pos = oldPos[i]): the prologue runs in every
     * range (resume.c), so its site counts in every range (range_part 0) */
    r = tr("__kernel void pre(__global const float *a, __global float *o, int n) {\n"
           "  int i = get_global_id(0); float p = a[i]; float acc = 0;\n"
           "  for (int t = 0; t < n; t++) { acc += a[t] * p; }\n"
           "  o[i] = acc; }\n");
    assert_true(kernel(r, "pre")->resumable);
    a = affine(r, "pre", 3, 1);
    assert_int_equal(a->loops[0].ranged, 1);
    assert_int_equal(a->ranges, 1);
    assert_int_equal(a->sites[0].range_part, 0);
    assert_int_equal(a->sites[1].range_part, 1);
    assert_int_equal(a->sites[2].range_part, 2);
    translate_result_free(r);
}

static void test_locals_2d(void **state)
{
    (void)state;
    struct translate_result *r =
        tr("__kernel void k(__global const float *in, __global float *out, int w) {\n"
           "  int x = get_global_id(0), y = get_global_id(1);\n"
           "  int row = y * w; int c = row + x; size_t up = c - w;\n"
           "  out[c] = in[c - 1] + in[up]; }\n");
    const struct translate_affine *a = affine(r, "k", 3, 0);
    expect_site(&a->sites[0], 1, 4, W);
    EXPECT(&a->sites[0].offset, U64(GID, 1), S32(CAST, 0), S32(ARG, 2), S32(MUL, 0),
           U64(GID, 0), S32(CAST, 0), S32(ADD, 0), SCALE(4));
    expect_site(&a->sites[1], 0, 4, R);
    EXPECT(&a->sites[1].offset, U64(GID, 1), S32(CAST, 0), S32(ARG, 2), S32(MUL, 0),
           U64(GID, 0), S32(CAST, 0), S32(ADD, 0), S32(C, 1), S32(SUB, 0), SCALE(4));
    expect_site(&a->sites[2], 0, 4, R);
    EXPECT(&a->sites[2].offset, U64(GID, 1), S32(CAST, 0), S32(ARG, 2), S32(MUL, 0),
           U64(GID, 0), S32(CAST, 0), S32(ADD, 0), S32(ARG, 2), S32(SUB, 0), U64(CAST, 0),
           SCALE(4));
    translate_result_free(r);
}

static void test_loops(void **state)
{
    (void)state;
    struct translate_result *r =
        tr("__kernel void rowsum(__global const float *a, __global float *s, int n) {\n"
           "  int row = get_global_id(0); float acc = 0;\n"
           "  for (int k = 0; k < n; k++) acc += a[row*n + k];\n"
           "  s[row] = acc; }\n"
           "__kernel void down(__global float *a, int n, ulong m) {\n"
           "  for (int i = n - 1; i >= 0; i--) a[i] = 0;\n"
           "  for (uint j = n; 0 < j; j -= 2) a[j] = 1;\n"
           "  for (int r = 0; r < m; r++)\n"
           "    for (int c = r; c <= r + 8; c = c + 2) { int e = c * 2; a[e] += r; } }\n");
    const struct translate_affine *a = affine(r, "rowsum", 2, 1);
    assert_int_equal(a->loops[0].cmp, TRANSLATE_ACMP_LT);
    EXPECT(&a->loops[0].first, S32(C, 0));
    EXPECT(&a->loops[0].bound, S32(ARG, 2));
    EXPECT(&a->loops[0].step, S32(C, 1));
    expect_site(&a->sites[0], 0, 4, R);
    EXPECT(&a->sites[0].offset, U64(GID, 0), S32(CAST, 0), S32(ARG, 2), S32(MUL, 0),
           S32(LOOP, 0), S32(ADD, 0), SCALE(4));
    expect_site(&a->sites[1], 1, 4, W);

    a = affine(r, "down", 3, 4);
    assert_int_equal(a->loops[0].cmp, TRANSLATE_ACMP_GE);
    EXPECT(&a->loops[0].first, S32(ARG, 1), S32(C, 1), S32(SUB, 0));
    EXPECT(&a->loops[0].bound, S32(C, 0));
    EXPECT(&a->loops[0].step, S32(C, 1));
    assert_int_equal(a->loops[1].cmp, TRANSLATE_ACMP_GT); /* 0 < j mirrored */
    EXPECT(&a->loops[1].first, S32(ARG, 1), U32(CAST, 0));
    EXPECT(&a->loops[1].bound, U32(C, 0));
    EXPECT(&a->loops[1].step, U32(C, 2));
    EXPECT(&a->sites[1].offset, U32(LOOP, 1), SCALE(4));
    /* the inner loop's bounds use the outer variable; (ulong)r < m */
    assert_int_equal(a->loops[2].cmp, TRANSLATE_ACMP_LT);
    EXPECT(&a->loops[2].bound, U64(ARG, 2));
    assert_int_equal(a->loops[3].cmp, TRANSLATE_ACMP_LE);
    EXPECT(&a->loops[3].first, S32(LOOP, 2));
    EXPECT(&a->loops[3].bound, S32(LOOP, 2), S32(C, 8), S32(ADD, 0));
    EXPECT(&a->loops[3].step, S32(C, 2));
    expect_site(&a->sites[2], 0, 4, RW);
    EXPECT(&a->sites[2].offset, S32(LOOP, 3), S32(C, 2), S32(MUL, 0), SCALE(4));
    translate_result_free(r);
}

static void test_vectors_atomics_ternary(void **state)
{
    (void)state;
    struct translate_result *r =
        tr("__kernel void vec(__global const float *a, __global float *b) {\n"
           "  size_t i = get_global_id(0); float4 v = vload4(i, a); vstore4(v * 2, i + 1, b);\n"
           "  float3 w = vload3(i, a); b[0] = w.x; }\n"
           "__kernel void hist(__global const uint *d, __global int *h, uint bins) {\n"
           "  uint i = get_global_id(0); uint b = (i * 7) % bins;\n"
           "  atomic_add(&h[b], 1); atomic_inc(h + i); atomic_inc(h); }\n"
           "__kernel void tern(__global int *a, int n) {\n"
           "  int i = get_global_id(0); a[i < n ? i : n - 1] = 1;\n"
           "  a[clamp(i, 0, n)]++; a[-i] -= 1; }\n"
           "typedef struct { int x; float y; } S;\n"
           "__kernel void parts(__global S *s, __global float4 *v) {\n"
           "  int i = get_global_id(0); s[i].y = 1; s->x = 2; v[i].s1 = 3; v[i][2] += 4;\n"
           "  *(v + 1) = 0; }\n"
           "__kernel void none(__global float *a, int n) { int x = n * 2; }\n");
    const struct translate_affine *a = affine(r, "vec", 4, 0);
    expect_site(&a->sites[0], 0, 16, R);
    EXPECT(&a->sites[0].offset, U64(GID, 0), SCALE(16));
    expect_site(&a->sites[1], 1, 16, W);
    EXPECT(&a->sites[1].offset, U64(GID, 0), U64(C, 1), U64(ADD, 0), SCALE(16));
    expect_site(&a->sites[2], 0, 12, R);
    EXPECT(&a->sites[2].offset, U64(GID, 0), SCALE(12));
    expect_site(&a->sites[3], 1, 4, W);

    a = affine(r, "hist", 3, 0);
    expect_site(&a->sites[0], 1, 4, RW);
    EXPECT(&a->sites[0].offset, U64(GID, 0), U32(CAST, 0), U32(C, 7), U32(MUL, 0),
           U32(ARG, 2), U32(REM, 0), SCALE(4));
    expect_site(&a->sites[1], 1, 4, RW);
    EXPECT(&a->sites[1].offset, U64(GID, 0), U32(CAST, 0), SCALE(4));
    expect_site(&a->sites[2], 1, 4, RW);
    EXPECT(&a->sites[2].offset, S64(C, 0));
    assert_true(kernel(r, "hist")->uses_global_atomics);

    a = affine(r, "tern", 3, 0);
    expect_site(&a->sites[0], 0, 4, W);
    EXPECT(&a->sites[0].offset, U64(GID, 0), S32(CAST, 0), S32(ARG, 1), S32(C, 1),
           S32(SUB, 0), S32(EITHER, 0), SCALE(4));
    expect_site(&a->sites[1], 0, 4, RW);
    EXPECT(&a->sites[1].offset, U64(GID, 0), S32(CAST, 0), S32(C, 0), S32(MAX, 0),
           S32(ARG, 1), S32(MIN, 0), SCALE(4));
    expect_site(&a->sites[2], 0, 4, RW);
    EXPECT(&a->sites[2].offset, U64(GID, 0), S32(CAST, 0), S32(NEG, 0), SCALE(4));

    /* members, swizzles and vector elements access their whole element */
    a = affine(r, "parts", 5, 0);
    expect_site(&a->sites[0], 0, 8, W);
    expect_site(&a->sites[1], 0, 8, W);
    EXPECT(&a->sites[1].offset, S64(C, 0));
    expect_site(&a->sites[2], 1, 16, W);
    expect_site(&a->sites[3], 1, 16, RW);
    expect_site(&a->sites[4], 1, 16, W);
    EXPECT(&a->sites[4].offset, S32(C, 1), SCALE(16));

    affine(r, "none", 0, 0);
    translate_result_free(r);
}

/* An array member of a __global struct: t->arr[k] is recorded as the whole struct *t, at the
 * array-typed lvalue t->arr, a __global lvalue that is no access (cursor.h); t[i].arr[k] also
 * has the lvalue t[i] in it. */
static void test_array_member(void **state)
{
    (void)state;
    struct translate_result *r =
        tr("typedef struct { int n; float arr[4]; } T;\n"
           "__kernel void arrm(__global const T *t, __global float *o) {\n"
           "  int i = get_global_id(0); o[i] = t->arr[i & 3] + t[i].arr[1]; }\n");
    const struct translate_affine *a = affine(r, "arrm", 3, 0);
    expect_site(&a->sites[0], 1, 4, W);
    expect_site(&a->sites[1], 0, 20, R);
    EXPECT(&a->sites[1].offset, S64(C, 0));
    expect_site(&a->sites[2], 0, 20, R);
    EXPECT(&a->sites[2].offset, U64(GID, 0), S32(CAST, 0), SCALE(20));
    translate_result_free(r);
}

static void test_unsupported(void **state)
{
    (void)state;
    static const char *const names[] = {
        "gather", "localptr", "helper", "modparam", "whilevar", "dimvar", "bitand",
        "helperidx", "compare", "intcast", "addrescape", "vhalf", "loadedatomic", "selfinit",
        "bodymod", "negstep", "swizzle",
    };
    struct translate_result *r =
        tr("__kernel void gather(__global const float *a, __global const int *idx,\n"
           "                     __global float *o) {\n"
           "  int i = get_global_id(0); o[i] = a[idx[i]]; }\n"
           "__kernel void localptr(__global float *a) {\n"
           "  __global float *p = a + 1; int i = get_global_id(0); p[i] = 0; }\n"
           "float h(__global float *p, int i) { return p[i]; }\n"
           "__kernel void helper(__global float *a) { int i = get_global_id(0); a[i] = h(a, i); }\n"
           "__kernel void modparam(__global float *a, int n) { n -= 1; a[n] = 0; }\n"
           "__kernel void whilevar(__global float *a, int n) {\n"
           "  int k = 0; while (k < n) { a[k] = 0; k++; } }\n"
           "__kernel void dimvar(__global float *a, uint d) { a[get_global_id(d)] = 0; }\n"
           "__kernel void bitand(__global float *a) { a[get_global_id(0) & 15] = 0; }\n"
           "int sq(int v) { return v * v; }\n"
           "__kernel void helperidx(__global float *a) { a[sq(get_global_id(0))] = 0; }\n"
           "__kernel void compare(__global float *a, __global float *b) { if (a != b) a[0] = 1; }\n"
           "__kernel void intcast(__global float *a, ulong p) { ((__global float *)p)[0] = 1; }\n"
           "__kernel void addrescape(__global float *a) { __global float *q = &a[3]; *q = 1; }\n"
           "__kernel void vhalf(__global half *a, __global float *b) { b[0] = vload_half(0, a); }\n"
           "__kernel void loadedatomic(__global int *h, __global const int *d) {\n"
           "  atomic_add(&h[d[get_global_id(0)]], 1); }\n"
           "__kernel void selfinit(__global float *a) { int x = x + 1; a[x] = 0; }\n"
           "__kernel void bodymod(__global float *a, int n) {\n"
           "  for (int k = 0; k < n; k++) { a[k] = 0; k += 1; } }\n"
           "__kernel void negstep(__global float *a, int n) {\n"
           "  for (int k = 0; k < n; k += -1) a[k] = 0; }\n"
           "__kernel void swizzle(__global float *a, int2 d) { a[d.x] = 0; }\n"
           "__kernel void okhelper(__global float *a) { int i = get_global_id(0); a[i] = sq(i); }\n");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const struct translate_kernel *k = kernel(r, names[i]);
        if (!k->paged_ok || k->affine)
            fail_msg("kernel %s: paged_ok %d, affine %p", names[i], k->paged_ok,
                     (void *)k->affine);
    }
    /* a helper without pointers may compute values, not indices */
    affine(r, "okhelper", 1, 0);
    translate_result_free(r);
}

struct box {
    long long lo[4], end[4];
};

static void note_range(void *ctx, unsigned site, long long lo, long long end)
{
    struct box *b = ctx;
    assert_true(site < 4);
    if (lo < b->lo[site])
        b->lo[site] = lo;
    if (end > b->end[site])
        b->end[site] = end;
}

static void test_ranges(void **state)
{
    (void)state;
    struct translate_result *r = tr(matrixmul_source);
    const struct translate_affine *a = affine(r, "matrixMul", 3, 1);
    unsigned long long rows = 64, n = 64;
    const void *args[5] = {NULL, NULL, NULL, &rows, &n};
    size_t sizes[5] = {0, 0, 0, 8, 8};
    /* work-group (0, 1) of a 64 x 64 launch in 16 x 16 groups */
    struct translate_alaunch l = {2, {64, 64, 1}, {16, 16, 1}, {0, 0, 0}, args, sizes, 5,
                                  {0, 1, 0}, {0, 1, 0}, 0, 0};
    struct box b;
    for (int i = 0; i < 4; i++)
        b.lo[i] = 1ll << 60, b.end[i] = -(1ll << 60);
    assert_int_equal(translate_affine_ranges(a, &l, 4096, note_range, &b), 0);
    /* A: rows 16..31, columns 0..63 */
    assert_int_equal(b.lo[0], 16 * 64 * 4);
    assert_int_equal(b.end[0], 32 * 64 * 4);
    /* B: every row, columns 0..15; C: rows 16..31, columns 0..15 */
    assert_int_equal(b.lo[1], 0);
    assert_int_equal(b.end[1], (63 * 64 + 16) * 4);
    assert_int_equal(b.lo[2], 16 * 64 * 4);
    assert_int_equal(b.end[2], (31 * 64 + 16) * 4);
    translate_result_free(r);
}

/* Every byte a work-group's work-items access lies in a range translate_affine_ranges gives
 * its box: brute force over CLBlast's Xaxpy (a grid-stride loop, strided and offset doubles),
 * one work-group per box, for loops of 1 to 64 trips. Before the fix in split_var the last
 * iteration of work-items 1..63 of each group fell outside every range (the loop's range was
 * the one a trial had computed for work-item 0). */
static void test_grid_stride_covers(void **state)
{
    (void)state;
    struct translate_result *r =
        tr("typedef double real;\n"
           "__kernel __attribute__((reqd_work_group_size(64, 1, 1)))\n"
           "void Xaxpy(const int n, const real alpha, const __global real* restrict xgm, const int x_offset,\n"
           "           const int x_inc, __global real* ygm, const int y_offset, const int y_inc) {\n"
           "  for (int id = get_global_id(0); id < n; id += get_global_size(0)) {\n"
           "    real xvalue = xgm[id*x_inc + x_offset];\n"
           "    ygm[id*y_inc + y_offset] += alpha * xvalue; } }\n");
    const struct translate_affine *a = affine(r, "Xaxpy", 2, 1);
    static const int ns[] = {7, 93, 4096}, incs[] = {1, 2, 7}, offs[] = {0, 10};
    static const unsigned long long globals[] = {64, 256, 4096};
    for (unsigned c = 0; c < 3 * 3 * 2 * 3; c++) {
        int n = ns[c % 3], inc = incs[c / 3 % 3], off = offs[c / 9 % 2];
        unsigned long long global = globals[c / 18];
        double alpha = 1.5;
        void *buf = NULL;
        const void *args[8] = {&n, &alpha, &buf, &off, &inc, &buf, &off, &inc};
        size_t sizes[8] = {4, 8, sizeof buf, 4, 4, sizeof buf, 4, 4};
        for (unsigned long long g = 0; g < global / 64; g++) {
            struct translate_alaunch l = {1, {global, 1, 1}, {64, 1, 1}, {0, 0, 0}, args, sizes, 8,
                                          {g, 0, 0}, {g, 0, 0}, 0, 0};
            struct tr_ranges got = {.n = 0};
            assert_int_equal(translate_affine_ranges(a, &l, 4096, tr_collect, &got), 0);
            for (unsigned long long w = g * 64; w < (g + 1) * 64; w++)
                for (long long id = (long long)w; id < n; id += (long long)global)
                    for (unsigned site = 0; site < a->nsites; site++) {
                        long long byte = (id * inc + off) * 8;
                        int in = 0;
                        for (int i = 0; i < got.n && !in; i++)
                            in = got.site[i] == site && byte >= got.lo[i] && byte + 8 <= got.end[i];
                        if (!in)
                            fail_msg("n %d inc %d offset %d global %llu: work-item %llu, id %lld, site %u: "
                                     "byte %lld in no range", n, inc, off, global, w, id, site, byte);
                    }
        }
    }
    translate_result_free(r);
}

/* The NBody sample's tile loop planned in iteration ranges from the host description: the prologue's
 * `pos = oldPos[i]` counts in every range (it runs in every range: resume.c) instead of
 * leaving the kernel to the inspector, and `(t + start) % tiles` over a box whose sum passes
 * `tiles` gives its two intervals, not the whole period (affine_eval.c, pick). For boxes of 8
 * work-groups and ranges of 1 to 64 tiles: every byte a work-item reads lies in a reported
 * range, and the ranges of oldPos hold no byte that none reads. Before: no ranges (ranges 0),
 * and then the whole array for every box that wrapped. */
static void test_wrapped_tiles(void **state)
{
    (void)state;
    struct translate_result *r = tr(nbody_source);
    const struct translate_kernel *k = kernel(r, "integrateBodies");
    assert_true(k->iteration_ranges);
    assert_non_null(k->affine);
    assert_true(k->affine->ranges);
    enum { TILES = 64, BYTES = TILES * 64 * 16 };
    unsigned long long n = TILES * 64;
    void *buf = NULL;
    float f = 0.5f;
    const void *args[8] = {&buf, &buf, &buf, &buf, &f, &f, &f, &n};
    size_t sizes[8] = {sizeof buf, sizeof buf, sizeof buf, sizeof buf, 4, 4, 4, 8};
    static const unsigned long long firsts[] = {0, 5, 30, 60}, counts[] = {1, 3, 9, 64};
    for (unsigned long long g0 = 0; g0 < TILES; g0 += 8)
        for (unsigned c = 0; c < 16; c++) {
            unsigned long long s0 = firsts[c % 4], s1 = s0 + counts[c / 4];
            struct translate_alaunch l = {1, {n, 1, 1}, {64, 1, 1}, {0, 0, 0}, args, sizes, 8,
                                          {g0, 0, 0}, {g0 + 7, 0, 0}, s0, s1};
            struct tr_ranges got = {.n = 0};
            assert_int_equal(translate_affine_ranges(k->affine, &l, 1024, tr_collect, &got), 0);
            static unsigned char read[BYTES / 16], reported[BYTES / 16]; /* per float4 of oldPos */
            memset(read, 0, sizeof read);
            memset(reported, 0, sizeof reported);
            for (int i = 0; i < got.n; i++)
                if (k->affine->sites[got.site[i]].arg == 2) /* oldPos */
                    for (long long b = got.lo[i] < 0 ? 0 : got.lo[i]; b < got.end[i] && b < BYTES; b += 16)
                        reported[b / 16] = 1;
            for (unsigned long long g = g0; g < g0 + 8; g++)
                for (unsigned long long lid = 0; lid < 64; lid++) {
                    read[g * 64 + lid] = 1; /* the prologue, in every range */
                    for (unsigned long long t = s0; t < s1 && t < TILES; t++)
                        read[(t + g) % TILES * 64 + lid] = 1;
                }
            for (unsigned e = 0; e < BYTES / 16; e++)
                if (read[e] != reported[e])
                    fail_msg("groups %llu..%llu, iterations [%llu, %llu): oldPos[%u] %s", g0, g0 + 7, s0, s1, e,
                             read[e] ? "read but in no range" : "in a range but read by none");
        }
    translate_result_free(r);
}

/* Whole stores (translate_asite.whole) and their guards: plain stores of a whole element in
 * the body or then-branches, after statements that cannot leave but `if (c) return;`. */
static void expect_whole(const char *src, const char *name, unsigned site, unsigned whole, unsigned nguards)
{
    struct translate_result *r = tr(src);
    const struct translate_kernel *k = kernel(r, name);
    if (!k->affine)
        fail_msg("kernel %s: no affine description", name);
    assert_true(site < k->affine->nsites);
    if (k->affine->sites[site].whole != whole || k->affine->sites[site].nguards != nguards)
        fail_msg("kernel %s site %u: whole %u with %u guards, want %u with %u", name, site,
                 k->affine->sites[site].whole, k->affine->sites[site].nguards, whole, nguards);
    translate_result_free(r);
}

static void test_whole_stores(void **state)
{
    (void)state;
    /* saxpy: y is read too (its store is still whole; the runtime sees the read site) */
    expect_whole("__kernel void k(float a, __global const float *x, __global float *y) {\n"
                 "  int i = get_global_id(0); y[i] = a * x[i] + y[i]; }\n", "k", 0, 1, 0);
    /* the MatrixMul sample's C, after its tile loop, under row < rows && col < n */
    expect_whole(matrixmul_source, "matrixMul", 2, 1, 2);
    /* early return: one guard i < n */
    struct translate_result *r = tr("__kernel void k(__global uint *o, uint n) {\n"
                                    "  size_t i = get_global_id(0); if (i >= n) return; o[i] = 1; }\n");
    const struct translate_asite *s = &kernel(r, "k")->affine->sites[0];
    assert_int_equal(s->whole, 1);
    assert_int_equal(s->nguards, 1);
    assert_int_equal(s->guards[0].cmp, TRANSLATE_ACMP_LT);
    EXPECT(&s->guards[0].lhs, U64(GID, 0));
    EXPECT(&s->guards[0].rhs, U32(ARG, 1), U64(CAST, 0));
    translate_result_free(r);
    /* n > i, i <= n - 1 and 0 <= i, two ifs nested, || in a return */
    expect_whole("__kernel void k(__global uint *o, uint n) {\n"
                 "  uint i = get_global_id(0); if (n > i) { if (0 <= i) o[i] = 2; } }\n", "k", 0, 1, 2);
    expect_whole("__kernel void k(__global uint *o, uint n, uint m) {\n"
                 "  uint i = get_global_id(0), j = get_global_id(1);\n"
                 "  if (i >= n || j > m) return; o[j * n + i] = 2; }\n", "k", 0, 1, 2);
    /* not whole: a data-dependent condition, a loop, an else branch, a return it cannot
     * describe, a member or swizzle, a 3-component vector, a compound assignment, a value
     * used by an enclosing expression, a store after a label */
    expect_whole("__kernel void k(__global uint *o, __global const uint *x) {\n"
                 "  size_t i = get_global_id(0); if (x[i] > 3) o[i] = 1; }\n", "k", 1, 0, 0);
    expect_whole("__kernel void k(__global uint *o, uint n) {\n"
                 "  for (uint t = 0; t < n; t++) o[t] = 1; }\n", "k", 0, 0, 0);
    expect_whole("__kernel void k(__global uint *o, uint n) {\n"
                 "  uint i = get_global_id(0); if (i < n) {} else o[i] = 1; }\n", "k", 0, 0, 0);
    expect_whole("__kernel void k(__global uint *o, uint n) {\n"
                 "  uint i = get_global_id(0); if (i == n) return; o[i] = 1; }\n", "k", 0, 0, 0);
    expect_whole("__kernel void k(__global uint *o, uint n) {\n"
                 "  uint i = get_global_id(0); if (i < n) { o[i] = 1; return; } o[i + n] = 2; }\n", "k", 1, 0, 0);
    expect_whole("__kernel void k(__global float2 *o) {\n"
                 "  uint i = get_global_id(0); o[i].x = 1.0f; }\n", "k", 0, 0, 0);
    expect_whole("__kernel void k(__global float3 *o) {\n"
                 "  uint i = get_global_id(0); o[i] = (float3)(1.0f); }\n", "k", 0, 0, 0);
    expect_whole("__kernel void k(__global uint *o) {\n"
                 "  uint i = get_global_id(0); o[i] += 1; }\n", "k", 0, 0, 0);
    expect_whole("__kernel void k(__global uint *o, __global uint *p) {\n"
                 "  uint i = get_global_id(0); p[i] = o[i] = 1; }\n", "k", 1, 0, 0);
}

VAST_CMOCKA_MAIN(NULL, NULL,
                 test_saxpy, test_matrixmul, test_locals_2d, test_loops,
                 test_vectors_atomics_ternary, test_array_member, test_unsupported, test_ranges,
                 test_grid_stride_covers, test_wrapped_tiles, test_whole_stores)
