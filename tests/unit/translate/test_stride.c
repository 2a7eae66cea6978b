/* test_stride.c - the translator's grid-stride loops (translate/stride.c): which kernels may
 * run their loops in iteration ranges (translate_kernel.iteration_ranges) and the rewrite.
 * Eligible: pyopencl's elementwise shapes (pointer offsets in loop_prep, `long i` declared
 * before the loop, the use_range sign test), a for-declared counter, inner loops with their
 * own break, helpers without pointers. Ineligible: anything whose split runs would differ
 * from one launch (accumulators, barriers, stores outside the loop, loops in sequence, ...). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "translate.h"
#include "tr.h"
#include "vast_cmocka.h"

static struct translate_result *tr(const char *src) { return tr_program(src, NULL); }

/* iteration_ranges of the program's only kernel (paged_ok required). */
static int ranges_of(const char *src)
{
    struct translate_result *r = tr(src);
    assert_int_equal(r->num_kernels, 1);
    if (!r->kernels[0].paged_ok)
        fail_msg("kernel not translated");
    int v = r->kernels[0].iteration_ranges;
    translate_result_free(r);
    return v;
}

#define ELWISE_HEAD                                                                              \
    "__kernel void k(__global float *z__base, long z__offset, __global const float *x__base,\n" \
    "                long x__offset, float a, long n) {\n"                                       \
    "  int lid = get_local_id(0); int gsize = get_global_size(0);\n"                             \
    "  int work_group_start = get_local_size(0)*get_group_id(0); long i;\n"                      \
    "  __global float *z = (__global float *)((__global char *)z__base + z__offset);\n"        \
    "  __global const float *x = (__global const float *)((__global char *)x__base + x__offset);\n"

static void test_pyopencl_elementwise(void **state)
{
    (void)state;
    struct translate_result *r = tr(ELWISE_HEAD
        "  for (i = work_group_start + lid; i < n; i += gsize) { z[i] = a*x[i]; }\n"
        "  ;\n}\n");
    assert_true(r->kernels[0].iteration_ranges);
    const char *p = r->paged_source, *q = r->inspector_source;
    /* a 64-bit counter, `i < n` and a plain step: the first test jumps to iteration s0 */
    assert_non_null(strstr(p, "{ ulong vast_it = 0; for (i = work_group_start + lid; ((vast_it < vast_iters.s0 && "
                              "(gsize) > 0) ? (void)(i += (long)vast_iters.s0 * (gsize), vast_it = vast_iters.s0) "
                              ": (void)0, (i < n)) && vast_it < vast_iters.s1; (i += gsize), vast_it++) if "
                              "(vast_it >= vast_iters.s0) {"));
    assert_non_null(strstr(p, ", ulong2 vast_iters)"));
    assert_non_null(strstr(q, "(i < n)) && (vast_it < vast_iters.s1 || (vast_status[2] = 1u, 0))"));
    assert_non_null(strstr(q, ", ulong2 vast_iters)"));
    translate_result_free(r);
}

/* A step with a work-item function (renamed in the text) or a 32-bit counter: no jump, the
 * loop steps through the iterations before s0. */
static void test_no_jump(void **state)
{
    (void)state;
    static const char *const srcs[] = {
        "__kernel void k(__global float *y, ulong n) {\n"
        "  for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) { y[i] = 1; } }\n",
        "__kernel void k(__global float *y, int n) {\n"
        "  for (int i = get_global_id(0); i < n; i += 64) { y[i] = 1; } }\n",
        "__kernel void k(__global float *y, long n) {\n"
        "  for (long i = get_global_id(0); i != n; i += 64) { y[i] = 1; } }\n",
    };
    for (size_t c = 0; c < sizeof srcs / sizeof srcs[0]; c++) {
        struct translate_result *r = tr(srcs[c]);
        assert_true(r->kernels[0].iteration_ranges);
        assert_null(strstr(r->paged_source, "vast_it = vast_iters.s0"));
        assert_non_null(strstr(r->paged_source, "if (vast_it >= vast_iters.s0)"));
        translate_result_free(r);
    }
}

static void test_eligible_shapes(void **state)
{
    (void)state;
    /* pyopencl's use_range: both branches of the sign test */
    assert_true(ranges_of(ELWISE_HEAD
        "  long start = n / 4, stop = n, step = 2;\n"
        "  if (step < 0) { for (i = start + (work_group_start + lid)*step; i > stop; i += gsize*step)\n"
        "    { z[i] = a*x[i]; } }\n"
        "  else { for (i = start + (work_group_start + lid)*step; i < stop; i += gsize*step)\n"
        "    { z[i] = a*x[i]; } }\n"
        "  ;\n}\n"));
    /* a for-declared counter, a guard return before the loop, an inner loop with its own
     * break and private state of the body, continue, a helper without pointers */
    assert_true(ranges_of(
        "float twice(float v) { return 2.0f * v; }\n"
        "__kernel void k(__global const float *x, __global float *y, uint n) {\n"
        "  if (get_global_id(0) >= n) return;\n"
        "  for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) {\n"
        "    float s = 0; if (i % 7 == 3) continue;\n"
        "    for (int k = 0; k < 4; k++) { if (x[i] < k) break; s += twice(x[i]); }\n"
        "    y[i] = s; }\n"
        "  return;\n}\n"));
}

static void test_ineligible(void **state)
{
    (void)state;
    static const char *const cases[] = {
        /* accumulator carried across iterations and stored after the loop */
        "__kernel void k(__global const float *a, __global float *out, long n) {\n"
        "  float acc = 0; long i;\n"
        "  for (i = get_global_id(0); i < n; i += get_global_size(0)) { acc += a[i]; }\n"
        "  out[get_global_id(0)] = acc; }\n",
        /* the same accumulator, nothing after the loop but in the loop */
        "__kernel void k(__global const float *a, __global float *out, long n) {\n"
        "  float acc = 0;\n"
        "  for (long i = get_global_id(0); i < n; i += get_global_size(0)) { acc += a[i]; out[i] = acc; } }\n",
        /* barrier */
        "__kernel void k(__global float *a, long n) {\n"
        "  for (long i = get_global_id(0); i < n; i += get_global_size(0)) { a[i] += 1; }\n"
        "  barrier(CLK_GLOBAL_MEM_FENCE); }\n",
        /* a store before the loop */
        "__kernel void k(__global float *a, long n) {\n"
        "  a[get_global_id(0)] = 0;\n"
        "  for (long i = get_global_id(0); i < n; i += get_global_size(0)) { a[i] += 1; } }\n",
        /* two loops in sequence */
        "__kernel void k(__global float *a, __global float *b, long n) {\n"
        "  for (long i = get_global_id(0); i < n; i += get_global_size(0)) { a[i] += 1; }\n"
        "  for (long i = get_global_id(0); i < n; i += get_global_size(0)) { b[i] = a[i]; } }\n",
        /* break of the loop itself */
        "__kernel void k(__global float *a, long n) {\n"
        "  for (long i = get_global_id(0); i < n; i += get_global_size(0)) { if (a[i] < 0) break; a[i] = 1; } }\n",
        /* the loop variable changed in the body */
        "__kernel void k(__global float *a, long n) {\n"
        "  for (long i = get_global_id(0); i < n; i += get_global_size(0)) { a[i] = 1; if (a[i] > 2) i++; } }\n",
        /* __local memory */
        "__kernel void k(__global float *a, __local float *t, long n) {\n"
        "  for (long i = get_global_id(0); i < n; i += get_global_size(0)) { t[get_local_id(0)] += a[i]; a[i] = t[0]; } }\n",
        /* a while loop */
        "__kernel void k(__global float *a, long n) {\n"
        "  long i = get_global_id(0); while (i < n) { a[i] = 1; i += get_global_size(0); } }\n",
        /* the grid-stride loop nested in another loop */
        "__kernel void k(__global float *a, long n) {\n"
        "  for (int r = 0; r < 3; r++)\n"
        "    for (long i = get_global_id(0); i < n; i += get_global_size(0)) { a[i] += r; } }\n",
        /* return in the body */
        "__kernel void k(__global float *a, long n) {\n"
        "  for (long i = get_global_id(0); i < n; i += get_global_size(0)) { if (a[i] < 0) return; a[i] = 1; } }\n",
        /* an outer private array written */
        "__kernel void k(__global float *a, long n) {\n"
        "  float h[4] = {0, 0, 0, 0};\n"
        "  for (long i = get_global_id(0); i < n; i += get_global_size(0)) { h[i & 3] += a[i]; a[i] = h[0]; } }\n",
        /* the condition reads global memory */
        "__kernel void k(__global float *a, long n) {\n"
        "  for (long i = get_global_id(0); i < n && a[i] > 0; i += get_global_size(0)) { a[i] = 1; } }\n",
        /* a bare statement body */
        "__kernel void k(__global float *a, long n) {\n"
        "  for (long i = get_global_id(0); i < n; i += get_global_size(0)) a[i] = 1; }\n",
        /* a helper reached with the state's address */
        "void bump(float *s, float v) { *s += v; }\n"
        "__kernel void k(__global float *a, long n) {\n"
        "  float s = 0;\n"
        "  for (long i = get_global_id(0); i < n; i += get_global_size(0)) { bump(&s, a[i]); a[i] = s; } }\n",
        /* printf outside the loop: once per launch */
        "__kernel void k(__global float *a, long n) {\n"
        "  printf(\"start\\n\");\n"
        "  for (long i = get_global_id(0); i < n; i += get_global_size(0)) { a[i] = 1; } }\n",
        /* a helper with a barrier */
        "void sync(void) { barrier(CLK_LOCAL_MEM_FENCE); }\n"
        "__kernel void k(__global float *a, long n) {\n"
        "  for (long i = get_global_id(0); i < n; i += get_global_size(0)) { a[i] = 1; sync(); } }\n",
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct translate_result *r = tr(cases[c]);
        int k = (int)r->num_kernels - 1;
        if (r->kernels[k].iteration_ranges && !r->kernels[k].resumable)
            fail_msg("case %zu restricted:\n%s", c, cases[c]);
        if (!r->kernels[k].resumable && strstr(r->paged_source, "vast_iters"))
            fail_msg("case %zu has vast_iters", c);
        if (r->kernels[k].resumable) /* its state is spilled between ranges (resume.c, test_resume.c) */
            printf("case %zu: a resumable loop\n", c);
        translate_result_free(r);
    }
}

VAST_CMOCKA_MAIN(NULL, NULL, test_pyopencl_elementwise, test_no_jump, test_eligible_shapes, test_ineligible)
