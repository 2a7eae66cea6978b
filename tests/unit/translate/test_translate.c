/* test_translate.c - unit and golden tests of translate/ (no device): rewritten text of
 * small kernels, metadata, diagnostics, options and the edit ordering. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "translate.h"
#include "tr.h"
#include "vast_cmocka.h"

static struct translate_result *tr(const char *src, const char *opts) { return tr_program(src, opts); }

static void test_golden_vadd(void **state)
{
    (void)state;
    struct translate_result *r =
        tr("__kernel void k(__global const float *a, __global float *c) {\n"
           "  int i = get_global_id(0); c[i] = a[i] + 1.0f; }\n", NULL);
    assert_non_null(strstr(r->paged_source,
        "__kernel void k(ulong vast_va_a, ulong vast_va_c, __global const uint *vast_lpt,"));
    assert_non_null(strstr(r->paged_source,
        "(*(__global float *)vast_trw_k((ulong)&(c[i]), vast_lpt, vast_pool0, vast_pool1, "
        "vast_pool2, vast_pool3, vast_cfg.s1, vast_scratch, vast_cx)) = "
        "(*(const __global float *)vast_trr_k((ulong)&(a[i]), vast_lpt, vast_pool0, vast_pool1, "
        "vast_pool2, vast_pool3, vast_cfg.s1, vast_scratch, vast_cx)) + 1.0f;"));
    assert_non_null(strstr(r->paged_source, "const __global float * a = "
                                            "(const __global float *)vast_va_a;"));
    assert_non_null(strstr(r->inspector_source, "__global uchar *vast_pas"));
    /* the inspector's pure store goes to the private sink (dead), its load marks and
     * yields a constant zero; both through the kernel's parameters and PAS row */
    assert_non_null(strstr(r->inspector_source, "uchar vast_sink_b[128]"));
    assert_non_null(strstr(r->inspector_source,
        "(*(float *)vast_sink_k((ulong)&(c[i]), vast_pas_row, vast_cfg.s1, vast_status, vast_cx, "
        "vast_sink_b)) = (vast_mark_k((ulong)&(a[i]), vast_pas_row, vast_cfg.s1, vast_status, "
        "vast_cx), (const float)0) + 1.0f;"));
    assert_int_equal(r->num_kernels, 1);
    assert_true(r->kernels[0].paged_ok);
    assert_int_equal(r->kernels[0].args[0].access, TRANSLATE_READ);
    assert_int_equal(r->kernels[0].args[1].access, TRANSLATE_WRITE);
    assert_int_equal(r->kernels[0].args[1].elem_size, 4);
    assert_false(r->kernels[0].may_be_non_idempotent);
    translate_result_free(r);
}

static void test_line_markers_and_macros(void **state)
{
    (void)state;
    struct translate_result *r =
        tr("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
           "#define SUM2(p, i) (p[i] + p[i + 1])\n\n\n"
           "__kernel __attribute__((reqd_work_group_size(8, 1, 1))) void k(__global double *a)"
           " { a[0] = SUM2(a, N); }\n", "-DN=3 -cl-fast-relaxed-math");
    assert_non_null(strstr(r->paged_source, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable"));
    assert_non_null(strstr(r->paged_source, "reqd_work_group_size(8, 1, 1)"));
    assert_non_null(strstr(r->paged_source, "vast_trr_k((ulong)&(a[ 3 ]), vast_lpt,"));
    assert_non_null(strstr(r->paged_source, "vast_trr_k((ulong)&(a[ 3 + 1]), vast_lpt,"));
    /* the kernel stays on the application's line 5: marker, then the lines as they were */
    const char *m = strstr(r->paged_source, "#line 1 \"t.cl\"\n");
    assert_non_null(m);
    const char *kern = strstr(m, "__kernel");
    int lines = 0;
    for (const char *p = m; p < kern; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 5);
    assert_string_equal(r->build_options, "-cl-fast-relaxed-math");
    assert_true(r->kernels[0].may_be_non_idempotent); /* reads and writes a */
    translate_result_free(r);
}

static void test_metadata_through_helpers(void **state)
{
    (void)state;
    struct translate_result *r =
        tr("void put(__global float *o, int i, float v) { o[i] = v; }\n"
           "__kernel void k(__global const uint *col, __global const float *x,\n"
           "                __global float *y, __global uint *h, __local float *l,\n"
           "                __constant int *c, sampler_t s, int n) {\n"
           "  int i = get_global_id(0); __global float *p = y + 1;\n"
           "  put(p, i, x[col[i]]); atomic_inc(&h[i]); }\n", NULL);
    const struct translate_kernel *k = &r->kernels[0];
    assert_true(k->paged_ok);
    assert_int_equal(k->args[0].access, TRANSLATE_READ);
    assert_int_equal(k->args[1].access, TRANSLATE_READ);
    assert_int_equal(k->args[2].access, TRANSLATE_WRITE);
    assert_int_equal(k->args[3].access, TRANSLATE_READ | TRANSLATE_WRITE);
    assert_int_equal(k->args[4].kind, TRANSLATE_ARG_LOCAL_POINTER);
    assert_int_equal(k->args[5].kind, TRANSLATE_ARG_CONSTANT_POINTER);
    assert_int_equal(k->args[6].kind, TRANSLATE_ARG_SAMPLER);
    assert_int_equal(k->args[7].kind, TRANSLATE_ARG_SCALAR);
    assert_true(k->uses_global_atomics);
    assert_true(k->data_dependent_addresses);
    assert_non_null(strstr(r->paged_source, "put(p, i, (*(const __global float *)"));
    assert_non_null(strstr(r->paged_source, "float v, __local vast_ctx *vast_cx)"));
    translate_result_free(r);
}

/* A kernel of n long arguments then a written buffer (the CTS's min_max_parameter_size):
 * the buffer's access must be known at every index (bits of the argument masks end at 63,
 * the walker keeps 64 parameters); an unknown access made it read-only, never written back. */
static void test_metadata_past_63_args(void **state)
{
    (void)state;
    static const unsigned ns[] = {62, 63, 64, 127};
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        static char src[16384];
        size_t o = (size_t)snprintf(src, sizeof src, "__kernel void k(");
        for (unsigned i = 0; i < ns[t]; i++)
            o += (size_t)snprintf(src + o, sizeof src - o, "long a%u, ", i);
        o += (size_t)snprintf(src + o, sizeof src - o, "__global long *r) {\n  r[0] = 0;\n");
        for (unsigned i = 0; i < ns[t]; i++)
            o += (size_t)snprintf(src + o, sizeof src - o, "  r[0] += a%u;\n", i);
        snprintf(src + o, sizeof src - o, "}\n");
        struct translate_result *r = tr(src, NULL);
        const struct translate_kernel *k = &r->kernels[0];
        assert_int_equal(k->num_args, ns[t] + 1);
        assert_int_equal(k->args[ns[t]].kind, TRANSLATE_ARG_GLOBAL_POINTER);
        assert_true(k->args[ns[t]].access & TRANSLATE_WRITE);
        translate_result_free(r);
    }
}

static void test_unsupported_is_diagnosed(void **state)
{
    (void)state;
    struct translate_result *r =
        tr("typedef struct __attribute__((packed)) { char c; int x; } pk;\n"
           "__kernel void bad(__global pk *a, __global pk *b) {\n"
           "  int i = get_global_id(0);\n"
           "  b[i].x += a[i].x; }\n"
           "__kernel void good(__global pk *a) { a[0].c = 1; }\n", NULL);
    assert_int_equal(r->num_kernels, 2);
    assert_false(r->kernels[0].paged_ok);
    assert_true(r->kernels[1].paged_ok);
    assert_true(r->num_diags >= 1);
    assert_string_equal(r->diags[0].kernel, "bad");
    assert_string_equal(r->diags[0].construct, "straddling-access");
    assert_int_equal(r->diags[0].line, 4);
    assert_null(strstr(r->paged_source, "void bad("));
    assert_non_null(strstr(r->paged_source, "void good("));
    translate_result_free(r);
}

static void test_errors_say_why(void **state)
{
    (void)state;
    struct translate_result *r = NULL;
    struct translate_options o = {"-cl-std=CL2.0", NULL, 0, NULL, 0};
    assert_int_equal(translate_program("__kernel void k() {}", &o, &r), -1);
    assert_non_null(strstr(r->error, "CL2.0"));
    translate_result_free(r);
    o.build_options = NULL;
    assert_int_equal(translate_program("__kernel void k( {", &o, &r), -1);
    assert_non_null(r->error);
    translate_result_free(r);
    assert_int_equal(translate_program(NULL, &o, &r), -1);
    assert_non_null(strstr(r->error, "binaries"));
    translate_result_free(r);
}

/* A kernel of one statement on one line of n bytes, or spread over continuation lines of a
 * macro (a macro call below the line limit of each physical line). */
static char *long_line_kernel(size_t n, int continued)
{
    char *s = malloc(n + 256);
    size_t l = (size_t)sprintf(s, "#define SUM 0");
    for (size_t k = 0; l < n; k++)
        l += (size_t)sprintf(s + l, continued && k % 1000 == 999 ? " + 1 \\\n" : " + 1");
    sprintf(s + l, "\n__kernel void k(__global int *o) { o[0] = SUM; }\n");
    return s;
}

/* Debian's mcpp aborts the process (a fortified vsprintf of its message) on a logical line of
 * about 64 KiB; such a source is refused with the reason, never handed to mcpp. */
static void test_long_lines_refused(void **state)
{
    (void)state;
    struct translate_options o = {NULL, NULL, 0, NULL, 0};
    struct translate_result *r = NULL;
    char *ok = long_line_kernel(59000, 0);
    assert_int_equal(translate_program(ok, &o, &r), 0);
    translate_result_free(r);
    for (int continued = 0; continued < 2; continued++) {
        char *s = long_line_kernel(70000, continued);
        assert_int_equal(translate_program(s, &o, &r), -1);
        assert_non_null(strstr(r->error, "source line of"));
        translate_result_free(r);
        free(s);
    }
    free(ok);
}

/* A kernel of n statements in a row, each a load, a load and a store. */
static char *straight_kernel(unsigned n)
{
    struct { char *p; size_t len, cap; } b = {malloc(64), 0, 64};
    for (unsigned i = 0; i <= n + 1; i++) {
        char line[160];
        int m = i == 0 ? snprintf(line, sizeof line, "__kernel void k(__global int *o, __global const int *a) {\n")
                : i <= n ? snprintf(line, sizeof line, "o[%u] = a[%u] * 3 + a[%u];\n", i - 1, i - 1, i + n)
                         : snprintf(line, sizeof line, "}\n");
        if (b.len + (size_t)m + 1 > b.cap)
            b.p = realloc(b.p, b.cap = 2 * (b.cap + (size_t)m));
        memcpy(b.p + b.len, line, (size_t)m + 1);
        b.len += (size_t)m;
    }
    return b.p;
}

/* Past a few thousand edits in one function the page walk is called, not inlined (PoCL 3.1's
 * compiler overflowed its stack on the CTS's vector_creation, 2367 accesses in one kernel);
 * ordinary kernels keep it inlined. Translating 4096 statements in a row must also stay fast:
 * the whole-store analysis walked every earlier statement again for each store (over 15
 * minutes; ctest's time limit catches that). */
static void test_long_kernels_call_the_page_walk(void **state)
{
    (void)state;
    char *small = straight_kernel(16), *big = straight_kernel(4096);
    struct translate_result *r = tr(small, NULL);
    assert_non_null(strstr(r->paged_source, "#define VAST_OUTLINE\n"));
    assert_non_null(strstr(r->inspector_source, "#define VAST_OUTLINE\n"));
    translate_result_free(r);
    r = tr(big, NULL);
    assert_true(r->num_kernels == 1 && r->kernels[0].paged_ok);
    assert_non_null(strstr(r->paged_source, "#define VAST_OUTLINE __attribute__((noinline))\n"));
    assert_non_null(strstr(r->paged_source, "VAST_OUTLINE __global uchar *vast_frame_k("));
    assert_non_null(strstr(r->inspector_source, "#define VAST_OUTLINE __attribute__((noinline))\n"));
    assert_non_null(strstr(r->inspector_source, "VAST_OUTLINE void vast_mark_k("));
    translate_result_free(r);
    free(small);
    free(big);
}

static void test_inspector_loop_budget(void **state)
{
    (void)state;
    struct translate_result *r =
        tr("__kernel void k(__global const uint *n, __global float *o) {\n"
           "  int i = get_global_id(0); uint m = n[i]; float s = 0;\n"
           "  for (uint j = 0; j < m; j++) s += 1; for (int q = 0; q < 4; q++) s += q;\n"
           "  o[i] = s; }\n", NULL);
    assert_non_null(strstr(r->inspector_source, "(j < m) && vast_step(&vast_steps_0, vast_cx)"));
    assert_null(strstr(r->inspector_source, "vast_steps_1"));
    assert_null(strstr(r->paged_source, "vast_step("));
    translate_result_free(r);
}

/* Which inspector stores may go to the private sink: pure stores of spellable types, in
 * kernels and helpers alike; read-modify-writes and stores through typedef'd global types
 * keep the global sink. */
static void test_inspector_private_sink(void **state)
{
    (void)state;
    struct translate_result *r =
        tr("typedef __global float gfloat;\n"
           "void h(__global int4 *p, int i) { p[i] = (int4)(i); }\n"
           "__kernel void k(__global int4 *v, __global float *o, gfloat *g) {\n"
           "  int i = get_global_id(0); h(v, i); o[i] += 1.0f; o[i + 1]++; *(g + i) = 2.0f; }\n",
           NULL);
    const char *ins = r->inspector_source;
    assert_non_null(strstr(ins, "(*(int4 *)vast_sink((ulong)&(p[i]), vast_cx, vast_sink_b))"));
    assert_non_null(strstr(ins, "(*(__global float *)vast_trw_k((ulong)&(o[i]), vast_pas_row, "
                                "vast_cfg.s1, vast_status, vast_scratch, vast_cx)) +="));
    assert_non_null(strstr(ins, "(*(__global float *)vast_trw_k((ulong)&(o[i + 1]), vast_pas_row, "
                                "vast_cfg.s1, vast_status, vast_scratch, vast_cx))++"));
    assert_non_null(strstr(ins, "(*(float *)vast_sink_k((ulong)&(*(g + i)), vast_pas_row, vast_cfg.s1, "
                                "vast_status, vast_cx, vast_sink_b))"));
    /* one sink per function that needs one: h and k, not twice in k */
    const char *first = strstr(ins, "uchar vast_sink_b[128]");
    assert_non_null(first);
    const char *second = strstr(first + 1, "uchar vast_sink_b[128]");
    assert_non_null(second);
    assert_null(strstr(second + 1, "uchar vast_sink_b[128]"));
    assert_null(strstr(r->paged_source, "vast_sink"));
    /* paged: the helper translates through the context, the kernel through its parameters */
    assert_non_null(strstr(r->paged_source, "(*(__global int4 *)vast_trw((ulong)&(p[i]), vast_cx))"));
    assert_non_null(strstr(r->paged_source, "(*(__global float *)vast_trw_k((ulong)&(o[i]), vast_lpt,"));
    translate_result_free(r);
}

/* Which inspector loads become a constant zero: plain reads of arithmetic scalars and
 * vectors, in kernels and helpers; read-modify-writes, struct and pointer loads and
 * volatile ones still load the zero page. */
static void test_inspector_zero_loads(void **state)
{
    (void)state;
    struct translate_result *r =
        tr("typedef struct __attribute__((aligned(8))) { int a; int b; } pair;\n"
           "float4 h(__global const float4 *p, int i) { return p[i].s1032 * 2.0f; }\n"
           "__kernel void k(__global const float4 *v, __global const pair *s, __global int *o,\n"
           "                volatile __global int *vo) {\n"
           "  __global float * __global *pp = (__global float * __global *)o;\n"
           "  int i = get_global_id(0); pair q = s[i]; float4 f = h(v, i);\n"
           "  o[i] += q.a + s[i].b + (int)f.x + vo[i]; o[i + 1] = (int)*pp[i];\n"
           "  __global float4 *w4 = (__global float4 *)o; w4[i + 2][1] = w4[i + 3][2]; }\n",
           NULL);
    const char *ins = r->inspector_source;
    assert_non_null(strstr(ins, "(vast_mark((ulong)&(p[i]), vast_cx), (const float4)0).s1032"));
    assert_non_null(strstr(ins, "(vast_mark_k((ulong)&(s[i].b), vast_pas_row, vast_cfg.s1, vast_status, "
                                "vast_cx), (const int)0)"));
    /* a struct, a pointer, a volatile int and a read-modify-write still load */
    assert_non_null(strstr(ins, "pair q = (*(const __global pair *)vast_trr_k((ulong)&(s[i]), "));
    assert_non_null(strstr(ins, "(*(__global float *__global *)vast_trr_k((ulong)&(pp[i]), "));
    assert_non_null(strstr(ins, "(*(volatile __global int *)vast_trr_k((ulong)&(vo[i]), "));
    assert_non_null(strstr(ins, "(*(__global int *)vast_trw_k((ulong)&(o[i]), "));
    /* a subscripted vector stays an lvalue (it may be assigned), read or not */
    assert_non_null(strstr(ins, "(*(__global float4 *)vast_trr_k((ulong)&(w4[i + 2]), "));
    assert_non_null(strstr(ins, "(*(__global float4 *)vast_trr_k((ulong)&(w4[i + 3]), "));
    assert_null(strstr(r->paged_source, "vast_mark"));
    translate_result_free(r);
}

/* An array member of a __global struct is no access: its elements are (translate/cursor.h,
 * tr_is_global_access). Rewriting t->arr itself loaded the array into a temporary and the
 * store to its element went nowhere. */
static void test_array_member_elements(void **state)
{
    (void)state;
    struct translate_result *r =
        tr("typedef struct { int n; float arr[4]; } T;\n"
           "__kernel void arrm(__global T *t, __global float *o) {\n"
           "  int i = get_global_id(0); o[i] = t->arr[i & 3]; t->arr[1] = 2; }\n", NULL);
    assert_non_null(strstr(r->paged_source, "(*(__global float *)vast_trr_k((ulong)&(t->arr[i & 3]), "));
    assert_non_null(strstr(r->paged_source, "(*(__global float *)vast_trw_k((ulong)&(t->arr[1]), "));
    assert_null(strstr(r->paged_source, "(ulong)&(t->arr),"));
    translate_result_free(r);
}

/* Work-item functions report the original launch from the ABI's vast_slab (real launches carry
 * no offset); kernels whose work-items meet cannot be sliced. */
static void test_ids_and_work_group_bound(void **state)
{
    (void)state;
    struct translate_result *r =
        tr("void sync(void) { barrier(CLK_GLOBAL_MEM_FENCE); }\n"
           "__kernel void free_(__global int *o) { size_t i = get_global_id(0);\n"
           "  o[i] = (int)(get_local_id(0) + get_local_size(0) + get_group_id(0)); }\n"
           "__kernel void bar(__global int *o) { o[get_global_id(0)] = 1; barrier(CLK_GLOBAL_MEM_FENCE); }\n"
           "__kernel void lvar(__global int *o) { __local int t[4]; t[0] = 1; o[get_global_id(0)] = t[0]; }\n"
           "__kernel void lparam(__global int *o, __local int *t) { o[get_global_id(0)] = 1; }\n"
           "__kernel void helper(__global int *o) { sync(); o[get_global_id(0)] = 1; }\n", NULL);
    assert_int_equal(r->num_kernels, 5);
    int want[5] = {0, 1, 1, 1, 1};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(r->kernels[i].paged_ok, 1);
        assert_int_equal(r->kernels[i].work_group_bound, want[i]);
    }
    assert_non_null(strstr(r->paged_source, "size_t i = vast_get_global_id(0, vast_cx);"));
    assert_non_null(strstr(r->paged_source, "vast_get_local_id(0, vast_cx) + vast_get_local_size(0, vast_cx)"));
    assert_non_null(strstr(r->paged_source, "ulong4 vast_cfg, ulong4 vast_slab)"));
    assert_non_null(strstr(r->inspector_source, "ulong4 vast_pascfg, ulong4 vast_slab)"));
    assert_null(strstr(r->paged_source, "= get_global_id("));
    translate_result_free(r);
}

/* Work-group copies with a __global side: a helper copies element by element and the real
 * builtin runs with 0 elements joining the event; each argument appears once; a 3-component
 * gentype is copied as the 4-component one; a count loaded from memory makes the addresses
 * data-dependent; a loop around a copy exits as a loop with a barrier; no host page set. */
static void test_async_copies(void **state)
{
    (void)state;
    struct translate_result *r =
        tr("__kernel void in(__global const float4 *a, __local float4 *t, __global float *o) {\n"
           "  event_t e = async_work_group_copy(t, a + get_group_id(0) * 8, 8, 0);\n"
           "  wait_group_events(1, &e); o[get_global_id(0)] = t[get_local_id(0) & 7].x; }\n"
           "__kernel void out(__global char3 *a, __local char3 *t, __global const uint *n) {\n"
           "  t[get_local_id(0)] = (char3)(1);\n"
           "  for (uint k = 0; k < n[0]; k++) {\n"
           "    event_t e = async_work_group_strided_copy(a + k, t, n[1], 4, 0); wait_group_events(1, &e); } }\n",
           NULL);
    assert_int_equal(r->num_kernels, 2);
    assert_true(r->kernels[0].paged_ok && r->kernels[1].paged_ok);
    assert_int_equal(r->num_diags, 0);
    assert_non_null(strstr(r->paged_source,
                           "async_work_group_copy(vast_async_g2l_float4(t, (ulong)(a + vast_get_group_id(0, vast_cx) "
                           "* 8), 8, vast_cx), (const __global float4 *)vast_cx->scratch, 0, 0)"));
    assert_non_null(strstr(r->paged_source,
                           "async_work_group_strided_copy((__global char3 *)vast_cx->scratch, "
                           "vast_async_l2g_s_char3((ulong)(a + k), t, "));
    assert_non_null(strstr(r->paged_source, ", 4, vast_cx), 0, 1, 0)"));
    assert_non_null(strstr(r->paged_source, "*(__global char4 *)vast_trw(vast_d + (ulong)(vast_i * vast_k) * sizeof(char4)"));
    assert_non_null(strstr(r->inspector_source, "vast_async_g2l_float4("));
    assert_non_null(strstr(r->paged_source, "vast_live(vast_cx) && ("));
    assert_int_equal(r->kernels[0].data_dependent_addresses, 0);
    assert_int_equal(r->kernels[1].data_dependent_addresses, 1);
    assert_null(r->kernels[0].affine);
    assert_true(r->kernels[0].work_group_bound);
    translate_result_free(r);
}

/* OpenCL C 3.0: parsed and built as 3.0; the linear ids and the enqueued local size report the
 * original launch; the generic address space (which could hide a __global pointer) is off in
 * the parse, so a program that needs it is not translated. */
static void test_opencl_c_30(void **state)
{
    (void)state;
    struct translate_result *r =
        tr("__kernel void k(__global uint *o) { size_t i = get_global_linear_id();\n"
           "  o[i] = (uint)(get_local_linear_id() + get_enqueued_local_size(0));\n"
           "  work_group_barrier(CLK_GLOBAL_MEM_FENCE); }\n", "-cl-std=CL3.0");
    assert_true(r->kernels[0].paged_ok);
    assert_non_null(strstr(r->build_options, "-cl-std=CL3.0"));
    assert_non_null(strstr(r->paged_source, "size_t i = vast_get_global_linear_id(vast_cx);"));
    assert_non_null(strstr(r->paged_source, "(uint)(vast_get_local_linear_id(vast_cx) + vast_get_enqueued_local_size(0, vast_cx))"));
    assert_true(r->kernels[0].work_group_bound);
    translate_result_free(r);
    struct translate_options o = {"-cl-std=CL3.0", "cl_khr_fp64", 0, "t.cl", 300};
    r = NULL;
    assert_int_not_equal(translate_program("void f(int *p) { *p = 1; }\n"
                                           "__kernel void g(__global int *o) { f(o); }\n", &o, &r), 0);
    assert_non_null(strstr(r->error, "address space"));
    translate_result_free(r);
    /* __OPENCL_VERSION__ is the device's, as its compiler says it (the CTS and applications
     * choose code by it: another branch in the translation than in the real build would page
     * another program) */
    const char *by_version = "#if __OPENCL_VERSION__ >= 300\n__kernel void v3(__global int *o) { o[0] = 3; }\n"
                             "#else\n__kernel void v1(__global int *o) { o[0] = 1; }\n#endif\n";
    for (unsigned v = 0; v <= 300; v += 300) {
        struct translate_options ov = {NULL, NULL, 0, "t.cl", v};
        r = NULL;
        assert_int_equal(translate_program(by_version, &ov, &r), 0);
        assert_int_equal(r->num_kernels, 1);
        assert_string_equal(r->kernels[0].name, v == 300 ? "v3" : "v1");
        translate_result_free(r);
    }
}

/* Accesses that may straddle a page: whole structs (a load, a store, in a kernel and in a
 * helper) and a packed struct's member go through per-type helpers with a one-page fast path;
 * the inspector's mark every page of the access. */
static void test_straddle_split(void **state)
{
    (void)state;
    struct translate_result *r =
        tr("typedef struct { float x, y, z; } v3;\n"
           "typedef struct __attribute__((packed)) { char c; int x; } pk;\n"
           "void put(__global v3 *p, int i, v3 v) { p[i] = v; }\n"
           "__kernel void k(__global const v3 *a, __global v3 *b, __global pk *q, __global int *o) {\n"
           "  int i = get_global_id(0); v3 s = a[i]; b[i] = s; put(b, i + 1, a[i + 2]);\n"
           "  o[i] = q[i].x; q[i].x = 3; }\n", NULL);
    const char *p = r->paged_source, *ins = r->inspector_source;
    assert_true(r->kernels[0].paged_ok);
    assert_non_null(strstr(p, "v3 vast_ld_v3_12(ulong va, __global const uint *lpt, "));
    assert_non_null(strstr(p, "{ if (((va ^ (va + 11)) >> vast_shift(cx)) == 0) return *(__global v3 *)"
                              "vast_trr_k(va, lpt, p0, p1, p2, p3, entries, scratch, cx); v3 r; "
                              "vast_copy_in((uchar *)&r, va, 12, "));
    assert_non_null(strstr(p, "v3 s = vast_ld_v3_12((ulong)&(a[i]), vast_lpt, vast_pool0, vast_pool1, "
                              "vast_pool2, vast_pool3, vast_cfg.s1, vast_scratch, vast_cx);"));
    assert_non_null(strstr(p, "vast_st_v3_12((ulong)&(b[i]), ( s), vast_lpt, "));
    assert_non_null(strstr(p, "vast_st_v3_12((ulong)&(p[i]), ( v), vast_cx->lpt, vast_cx->pool0, "));
    /* the packed member (alignment 1) is copied byte-wise: no fast path through an int pointer */
    assert_non_null(strstr(p, "int vast_ld_int_4_u(ulong va, "));
    assert_non_null(strstr(p, "{ if (0 && ((va ^ (va + 3)) >> vast_shift(cx)) == 0)"));
    assert_non_null(strstr(p, "= vast_ld_int_4_u((ulong)&(q[i].x), vast_lpt, "));
    assert_non_null(strstr(p, "vast_st_int_4_u((ulong)&(q[i].x), ( 3), vast_lpt, "));
    /* one definition per type */
    const char *d = strstr(p, "v3 vast_ld_v3_12(");
    assert_null(strstr(d + 1, "v3 vast_ld_v3_12("));
    assert_non_null(strstr(ins, "{ vast_mark_range(va, 12, row, pages, status, cx); return *(__global v3 *)"
                                "scratch; }"));
    assert_non_null(strstr(ins, "vast_st_v3_12((ulong)&(b[i]), ( s), vast_pas_row, vast_cfg.s1, "
                                "vast_status, vast_scratch, vast_cx)"));
    translate_result_free(r);
    /* larger than the smallest page: never the fast path; the inspector zeroes its value
     * instead of reading past the zero page */
    r = tr("typedef struct { float m[200]; int n; } big;\n"
           "__kernel void k(__global const big *a, __global big *b) { b[0] = a[1]; }\n", NULL);
    assert_true(r->kernels[0].paged_ok);
    assert_non_null(strstr(r->paged_source, "vast_st_big_804((ulong)&(b[0]), ( vast_ld_big_804((ulong)&(a[1]), "));
    assert_non_null(strstr(r->inspector_source, "big r; uchar *b = (uchar *)&r; for (uint k = 0; k < 804; k++) "
                                                "b[k] = 0; return r; }"));
    translate_result_free(r);
}

/* An element of an array member of a packed struct is as misaligned as the member: it goes
 * through the byte-copying helper (a load, a plain store), and a read-modify-write of it is
 * diagnosed, as for any other packed member. Found by the random-kernel test (randk.py): such
 * an element was translated as an aligned access, so one crossing a page read and wrote the
 * wrong frame. */
static void test_straddle_packed_array(void **state)
{
    (void)state;
    struct translate_result *r =
        tr("typedef struct __attribute__((packed)) { char c; int v[2]; struct { short s[2]; } in; } pk;\n"
           "__kernel void k(__global pk *q, __global int *o) {\n"
           "  int i = get_global_id(0); o[i] = q[i].v[1] + q[i].in.s[1]; q[i].v[0] = o[i]; }\n"
           "__kernel void rmw(__global pk *q) { q[get_global_id(0)].v[1] ^= 3; }\n", NULL);
    const char *p = r->paged_source;
    assert_true(r->kernels[0].paged_ok);
    assert_non_null(strstr(p, "vast_ld_int_4_u((ulong)&(q[i].v[1]), vast_lpt, "));
    assert_non_null(strstr(p, "vast_ld_short_2_u((ulong)&(q[i].in.s[1]), vast_lpt, "));
    assert_non_null(strstr(p, "vast_st_int_4_u((ulong)&(q[i].v[0]), ( "));
    assert_false(r->kernels[1].paged_ok);
    assert_true(r->num_diags >= 1);
    assert_string_equal(r->diags[0].kernel, "rmw");
    assert_string_equal(r->diags[0].construct, "straddling-access");
    translate_result_free(r);
}

/* A faulted work-group stays harmless: divisions by loaded data, loops driven by it and
 * indices computed from it are guarded; constant divisors and untainted indices are not. */
static void test_faulted_guards(void **state)
{
    (void)state;
    struct translate_result *r =
        tr("int dv(int a, int b) { return a / b; }\n"
           "__kernel void k(__global const int *a, __global const uint *n, __global int *o, int w,\n"
           "                __local int *lp) {\n"
           "  int i = get_global_id(0); __local uint h[64]; uint pr[8]; uint c = n[i];\n"
           "  o[i] = a[i] / a[i + 1] + a[i] % 7 + i / w + dv(i, w);\n"
           "  for (uint j = 0; j < c; j++) o[i] += 1;\n"
           "  for (int t = 0; t < 4; t++) o[i] += t;\n"
           "  while (1) { if (n[i + 1] == 3) break; }\n"
           "  for (uint j = 0; j < c; j++) barrier(CLK_LOCAL_MEM_FENCE);\n"
           "  h[c - 1] = 1; pr[c & 7] = 2; pr[i & 7] = 3; lp[c] = 4; o[i] += h[i & 63] + pr[0]; }\n",
           NULL);
    const char *p = r->paged_source, *ins = r->inspector_source;
    assert_true(r->kernels[0].paged_ok);
    /* divisor from a load, and a helper's parameter: guarded; 7 and the kernel argument w: not */
    assert_non_null(strstr(p, "/ (vast_cx->wg_fault ? 1 : ((*(const __global int *)vast_trr_k((ulong)&(a[i + 1])"));
    assert_non_null(strstr(p, "% 7 + i / w + dv(i, w, vast_cx)"));
    assert_non_null(strstr(p, "return a / (vast_cx->wg_fault ? 1 : (b));"));
    assert_non_null(strstr(ins, "int vast_nz_int(int b) { return b == 0 || b == -1 ? (int)1 : b; }"));
    assert_non_null(strstr(ins, "return a / vast_nz_int(b);"));
    /* loops: a loaded bound exits after a fault; one with a barrier asks vast_live first */
    assert_non_null(strstr(p, "for (uint j = 0; (j < c) && !vast_cx->wg_fault; j++) (*"));
    assert_non_null(strstr(p, "for (int t = 0; t < 4; t++)"));
    assert_non_null(strstr(p, "while ((1) && !vast_cx->wg_fault)"));
    assert_non_null(strstr(p, "for (uint j = 0; vast_live(vast_cx) && (j < c); j++) barrier("));
    assert_non_null(strstr(ins, "while ((1) && vast_step(&vast_steps_"));
    /* indices: arrays clamped in both programs, a pointer zeroed after a fault (paged) */
    assert_non_null(strstr(p, "h[vast_ix((ulong)(c - 1), 64ul)] = 1; pr[vast_ix((ulong)(c & 7), 8ul)] = 2; "
                              "pr[i & 7] = 3; lp[(vast_cx->wg_fault ? 0 : (c))] = 4;"));
    assert_non_null(strstr(ins, "h[vast_ix((ulong)(c - 1), 64ul)] = 1;"));
    assert_non_null(strstr(ins, "lp[((c), 0)] = 4;"));
    assert_non_null(strstr(p, "h[i & 63] + pr[0]"));
    translate_result_free(r);
}

VAST_CMOCKA_MAIN(NULL, NULL,
                 test_golden_vadd, test_ids_and_work_group_bound, test_async_copies, test_opencl_c_30, test_line_markers_and_macros,
                 test_metadata_through_helpers, test_metadata_past_63_args,
                 test_unsupported_is_diagnosed, test_errors_say_why, test_inspector_loop_budget,
                 test_inspector_private_sink, test_inspector_zero_loads, test_array_member_elements,
                 test_straddle_split, test_straddle_packed_array, test_faulted_guards,
                 test_long_lines_refused, test_long_kernels_call_the_page_walk)
