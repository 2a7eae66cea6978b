/* test_resume.c - the translator's resumable loops (translate/resume.c): which kernels may run
 * a loop that carries state in iteration ranges with the state spilled between them
 * (translate_kernel.resumable), the record sizes, the rewrite, and the refusals (anything the
 * translator cannot prove safe keeps today's behaviour: resumable 0). */
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

static const char *const gen_src =
    "typedef struct { uint a, b; uint2 c; } state_t;\n"
    "__kernel void gen(__global const uint *seed, __global uint *out, ulong n, __global uint *fin) {\n"
    "  state_t s; s.a = (uint)get_global_id(0); s.b = 17u; s.c = (uint2)(3u, 5u);\n"
    "  uint cnt = 0;\n"
    "  ulong idx = get_global_id(0) * 2;\n"
    "  while (idx + 2 < n) {\n"
    "    s.a = s.a * 1664525u + seed[idx / 2]; s.c += (uint2)(s.b, s.a);\n"
    "    out[idx] = s.a ^ s.c.x; cnt++;\n"
    "    idx += 2 * get_global_size(0);\n"
    "  }\n"
    "  fin[get_global_id(0)] = s.a + cnt;\n"
    "}\n";

/* A generator state in privates: position and done flag, then s (16), cnt (4 -> 8), idx (8). */
static void test_generator_state(void **state)
{
    (void)state;
    struct translate_result *r = tr(gen_src);
    const struct translate_kernel *k = &r->kernels[0];
    assert_true(k->paged_ok);
    assert_true(k->resumable);
    assert_true(k->iteration_ranges);
    assert_int_equal(k->spill_item_bytes, 48);
    assert_int_equal(k->spill_group_bytes, 0);
    const char *p = r->paged_source, *q = r->inspector_source;
    assert_non_null(strstr(p, ", ulong2 vast_iters, __global uchar *vast_spill, __global uchar *vast_spill_in)"));
    assert_non_null(strstr(q, ", ulong2 vast_iters, __global uchar *vast_spill, __global uchar *vast_spill_in)"));
    /* restored once before the loop, as typed values (no address taken: they stay in
     * registers); nothing restores inside the loop */
    assert_non_null(strstr(p, "if (vast_rr != 0) { vast_rs = ((__global const ulong *)vast_rr)[1] ? 2u : 0u; (s = "
                              "*(__global const state_t *)(vast_rr + 16)); (cnt = *(__global const uint *)(vast_rr + "
                              "32)); (idx = *(__global const ulong *)(vast_rr + 40)); }"));
    /* the machinery inside VAST_RG / VAST_RI: gone from the build with -D VAST_WHOLE */
    assert_non_null(strstr(p, "while (VAST_RG(vast_rs == 0 &&) (idx + 2 < n) VAST_RG(&& (vast_it < vast_iters.s1 || "
                              "(vast_rs = 1, 0)))) { VAST_RG(vast_it++;)"));
    assert_non_null(strstr(p, "{ VAST_RG(ulong vast_it = vast_iters.s0;"));
    assert_non_null(strstr(p, "#ifdef VAST_WHOLE\n#define VAST_RG(...)\n"));
    assert_null(strstr(p, "vast_ri"));
    /* the inspector says "more" when cut; a lost record: paged fault on page 0, inspector status[3] */
    assert_non_null(strstr(q, "(vast_it < vast_iters.s1 || (vast_rs = 1, vast_status[2] = 1u, 0))"));
    assert_non_null(strstr(p, "vast_rs = 3; vast_fault(vast_cx, 0, 1);"));
    assert_non_null(strstr(q, "vast_rs = 3; vast_status[3] = 1u;"));
    /* saved when cut, the epilogue only when the loop ended */
    assert_non_null(strstr(p, "if (vast_rs == 1) { (*(__global state_t *)(vast_ra.rw + 16) = s); (*(__global uint *)"
                              "(vast_ra.rw + 32) = cnt); (*(__global ulong *)(vast_ra.rw + 40) = idx); }"));
    assert_non_null(strstr(p, "if (vast_rs == 0)) {"));
    translate_result_free(r);
}

/* CLBlast's Xgemv shape: a __local tile (per work-group record), barriers in the loop, an
 * accumulator array and a for-declared counter (saved in the condition, where it is in scope). */
static void test_xgemv_shape(void **state)
{
    (void)state;
    struct translate_result *r = tr(
        "#define WGS 64\n"
        "__kernel void gemv(const int m, const int n, __global const float *agm, const int a_ld,\n"
        "                   __global const float *xgm, __global float *ygm) {\n"
        "  __local float xlm[WGS];\n"
        "  float acc[2];\n"
        "  for (int w = 0; w < 2; w += 1) acc[w] = 0.0f;\n"
        "  const int n_floor = n - n % WGS;\n"
        "  for (int kwg = 0; kwg < n_floor; kwg += WGS) {\n"
        "    xlm[get_local_id(0)] = xgm[kwg + get_local_id(0)];\n"
        "    barrier(CLK_LOCAL_MEM_FENCE);\n"
        "    for (int kl = 0; kl < WGS; ++kl) acc[0] += agm[(kwg + kl) * a_ld + get_global_id(0)] * xlm[kl];\n"
        "    barrier(CLK_LOCAL_MEM_FENCE);\n"
        "  }\n"
        "  ygm[get_global_id(0)] = acc[0] + acc[1];\n"
        "}\n");
    const struct translate_kernel *k = &r->kernels[0];
    assert_true(k->resumable);
    assert_true(k->work_group_bound);
    assert_int_equal(k->spill_item_bytes, 16 + 8 + 8);
    assert_int_equal(k->spill_group_bytes, 256);
    const char *p = r->paged_source;
    assert_non_null(strstr(p, "barrier(CLK_LOCAL_MEM_FENCE); vast_rs_lget((__local uchar *)&xlm, vast_ra.gr + 0, 256u, "
                              "vast_lid, vast_lsz); barrier(CLK_LOCAL_MEM_FENCE); }"));
    /* the array as bytes; the for-declared counter restored by its initializer */
    assert_non_null(strstr(p, "vast_rs_get((uchar *)&acc, vast_rr + 16, 8u)"));
    assert_non_null(strstr(p, "for (int kwg = VAST_RI(int, 24, 0); "));
    assert_non_null(strstr(p, "(kwg +=  64) VAST_RG(, vast_it++) )"));
    assert_non_null(strstr(p, "} if (vast_rs == 0)) { "));
    /* the cut copies the counter to its shadow, stored with the others after the loop */
    assert_non_null(strstr(p, "(vast_it < vast_iters.s1 || (vast_rs = 1, vast_sv_kwg = kwg, 0))"));
    assert_non_null(strstr(p, "(*(__global int *)(vast_ra.rw + 24) = vast_sv_kwg);"));
    assert_non_null(strstr(p, "barrier(CLK_LOCAL_MEM_FENCE); vast_rs_lput(vast_ra.gw + 0, (__local const uchar *)&xlm, "
                              "256u, vast_lid, vast_lsz);"));
    /* the const computed again by the prologue, not saved */
    assert_null(strstr(p, "&n_floor"));
    translate_result_free(r);
}

/* A loop whose init assigns a private of the body (`for (i = gid; ...)`): restored after the
 * init; a vector private aligned to its type, the record to the largest alignment. */
static void test_assigning_init(void **state)
{
    (void)state;
    struct translate_result *r = tr("__kernel void k(__global const float4 *a, __global float4 *b, long n) {\n"
                                    "  float s = 0; float4 v = 0; long i;\n"
                                    "  for (i = get_global_id(0); i < n; i += get_global_size(0)) { v += a[i]; s += v.x; }\n"
                                    "  b[get_global_id(0)] = v * s; }\n");
    const struct translate_kernel *k = &r->kernels[0];
    assert_true(k->resumable);
    /* position and flag 16, s 4 -> 8, v at 32 (16-aligned), i at 48: 56, rounded to 64 */
    assert_int_equal(k->spill_item_bytes, 64);
    const char *p = r->paged_source;
    assert_non_null(strstr(p, "(v = *(__global const float4 *)(vast_rr + 32));"));
    assert_non_null(strstr(p, ") VAST_RG(, (vast_rr != 0 ? ((i = *(__global const long *)(vast_rr + 48)), (void)0) : "
                              "(void)0)); "));
    assert_non_null(strstr(p, "(*(__global float4 *)(vast_ra.rw + 32) = v);"));
    translate_result_free(r);
}

/* A grid-stride loop that carries nothing stays stride.c's (no spill). */
static void test_stride_stays(void **state)
{
    (void)state;
    struct translate_result *r = tr("__kernel void k(__global float *a, long n) {\n"
                                    "  for (long i = get_global_id(0); i < n; i += get_global_size(0)) { a[i] = 1; } }\n");
    assert_true(r->kernels[0].iteration_ranges);
    assert_false(r->kernels[0].resumable);
    assert_null(strstr(r->paged_source, "vast_spill"));
    translate_result_free(r);
}

static void test_refused(void **state)
{
    (void)state;
    static const char *const cases[] = {
        /* a store to global memory before the loop: it would run once per range */
        "__kernel void k(__global float *a, __global float *b, long n) {\n"
        "  float s = 0; b[get_global_id(0)] = 1;\n"
        "  for (long i = 0; i < n; i++) { s += a[i]; }\n"
        "  b[get_global_id(0)] = s; }\n",
        /* an atomic before the loop */
        "__kernel void k(__global float *a, __global int *c, long n) {\n"
        "  float s = 0; atomic_inc(c);\n"
        "  for (long i = 0; i < n; i++) { s += a[i]; }\n"
        "  a[get_global_id(0)] = s; }\n",
        /* a helper given a __global pointer before the loop */
        "void put(__global float *p) { *p = 0; }\n"
        "__kernel void k(__global float *a, long n) {\n"
        "  float s = 0; put(a);\n"
        "  for (long i = 0; i < n; i++) { s += a[i]; }\n"
        "  a[get_global_id(0)] = s; }\n",
        /* the trip count comes from memory: the inspector (loads read 0) would see another */
        "__kernel void k(__global float *a, __global const int *len) {\n"
        "  float s = 0; int n = len[get_global_id(0)];\n"
        "  for (int i = 0; i < n; i++) { s += a[i]; }\n"
        "  a[get_global_id(0)] = s; }\n",
        /* ... or from a variable assigned in the loop from memory */
        "__kernel void k(__global float *a, long n) {\n"
        "  float s = 0; long lim = n;\n"
        "  for (long i = 0; i < lim; i++) { s += a[i]; lim = (long)a[i]; }\n"
        "  a[get_global_id(0)] = s; }\n",
        /* a private pointer into private memory carried across iterations */
        "__kernel void k(__global float *a, long n) {\n"
        "  float s[2] = {0, 0}; float *p = s;\n"
        "  for (long i = 0; i < n; i++) { *p += a[i]; p = s + (i & 1); }\n"
        "  a[get_global_id(0)] = s[0]; }\n",
        /* a return in the loop */
        "__kernel void k(__global float *a, long n) {\n"
        "  float s = 0;\n"
        "  for (long i = 0; i < n; i++) { s += a[i]; if (s > 4) return; }\n"
        "  a[get_global_id(0)] = s; }\n",
        /* a parameter changed in the loop */
        "__kernel void k(__global float *a, long n, float s) {\n"
        "  for (long i = 0; i < n; i++) { s += a[i]; }\n"
        "  a[get_global_id(0)] = s; }\n",
        /* a __local pointer parameter (its size is unknown here) */
        "__kernel void k(__global float *a, long n, __local float *t) {\n"
        "  float s = 0;\n"
        "  for (long i = 0; i < n; i++) { t[get_local_id(0)] = a[i]; barrier(CLK_LOCAL_MEM_FENCE); s += t[0]; "
        "barrier(CLK_LOCAL_MEM_FENCE); }\n"
        "  a[get_global_id(0)] = s; }\n",
        /* a const private computed from memory: the prologue would read it again */
        "__kernel void k(__global float *a, long n) {\n"
        "  const float base = a[0]; float s = 0;\n"
        "  for (long i = 0; i < n; i++) { s += a[i] * base; a[i] = 0; }\n"
        "  a[get_global_id(0)] = s; }\n",
        /* a barrier after a loop without one: its work-items may leave it in different ranges */
        "__kernel void k(__global float *a, long n) {\n"
        "  float s = 0;\n"
        "  for (long i = get_global_id(0); i < n; i += get_global_size(0)) { s += a[i]; }\n"
        "  barrier(CLK_GLOBAL_MEM_FENCE); a[get_global_id(0)] = s; }\n",
        /* __local state in a loop without a barrier */
        "__kernel void k(__global float *a, long n) {\n"
        "  __local float t[64]; float s = 0; t[get_local_id(0)] = 0;\n"
        "  for (long i = get_global_id(0); i < n; i += get_global_size(0)) { t[get_local_id(0)] += a[i]; }\n"
        "  a[get_global_id(0)] = t[get_local_id(0)]; }\n",
        /* a return before the loop */
        "__kernel void k(__global float *a, long n) {\n"
        "  float s = 0; if (get_global_id(0) > 5) return;\n"
        "  for (long i = 0; i < n; i++) { s += a[i]; }\n"
        "  a[get_global_id(0)] = s; }\n",
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct translate_result *r = tr(cases[c]);
        int k = (int)r->num_kernels - 1;
        if (!r->kernels[k].paged_ok)
            fail_msg("case %zu not translated:\n%s", c, cases[c]);
        if (r->kernels[k].resumable || r->kernels[k].iteration_ranges)
            fail_msg("case %zu resumable:\n%s", c, cases[c]);
        if (strstr(r->paged_source, "vast_spill ") || strstr(r->paged_source, "vast_iters"))
            fail_msg("case %zu has the spill parameters", c);
        translate_result_free(r);
    }
}

VAST_CMOCKA_MAIN(NULL, NULL, test_generator_state, test_xgemv_shape, test_assigning_init, test_stride_stays, test_refused)
