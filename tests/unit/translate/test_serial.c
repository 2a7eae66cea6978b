/* test_serial.c - translate/serial.c: a real translation packed and unpacked equals itself in
 * every field (sources, options, kernels with their arguments, flags, host page-set
 * descriptions with loops, iteration ranges, diagnostics, error, time), and bytes that are not
 * a whole translation of this format (every truncation, a flipped format or ABI word, trailing
 * bytes, a length past the end) are refused without a crash or a leak. */
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

/* Every kind of metadata: an affine kernel with nested counted loops, a grid-stride loop
 * (iteration_ranges), loops that carry state (resumable, spill sizes; one counted, with a
 * store after it: ranged loop and sites placed inside and after), a whole store under
 * an early return and an if (guards), a work-group-bound
 * kernel with __local memory and atomics, data-dependent
 * addresses, and a rejected kernel (a diagnostic). */
static const char *const SRC =
    "typedef struct __attribute__((packed)) { char c; int x; } pk;\n"
    "__kernel void aff(__global float *a, __global const float *b, int n, int m) {\n"
    "  int row = get_global_id(0);\n"
    "  float acc = 0;\n"
    "  for (int r = 0; r < m; r++)\n"
    "    for (int c = r; c <= r + 8; c = c + 2) acc += b[row * n + c];\n"
    "  for (int i = n - 1; i >= 0; i--) a[i] = acc; }\n"
    "__kernel void acc(__global const float *b, __global float *o, int n) {\n"
    "  int row = get_global_id(0); float acc = 0;\n"
    "  for (int t = 0; t < n; t++) { acc += b[row * n + t]; }\n"
    "  o[row] = acc; }\n"
    "__kernel void grid(__global float *y, ulong n) {\n"
    "  for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) { y[i] = 1; } }\n"
    "typedef struct { uint a, b; } state_t;\n"
    "__kernel void res(__global const uint *seed, __global uint *out, ulong n, __global uint *fin) {\n"
    "  state_t s; s.a = (uint)get_global_id(0); s.b = 17u;\n"
    "  ulong idx = get_global_id(0);\n"
    "  while (idx < n) { s.a = s.a * 1664525u + seed[idx]; out[idx] = s.a ^ s.b; idx += get_global_size(0); }\n"
    "  fin[get_global_id(0)] = s.a; }\n"
    "__kernel void wg(__global int *h, __global const int *idx, __local int *t) {\n"
    "  t[get_local_id(0)] = idx[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  atomic_add(&h[idx[get_global_id(0)]], t[0]); }\n"
    "__kernel void guarded(__global uint *o, uint n, uint m) {\n"
    "  size_t i = get_global_id(0); if (i >= n) return;\n"
    "  if (i <= m) o[i] = 1u; }\n"
    "__kernel void gather(__global float *o, __global const int *ix, __global const float *v) {\n"
    "  int i = get_global_id(0);\n"
    "  o[i] = v[ix[i]]; }\n"
    "__kernel void bad(__global pk *a, __global pk *b) {\n"
    "  int i = get_global_id(0);\n"
    "  b[i].x += a[i].x; }\n";

static void assert_str_eq(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        assert_ptr_equal(a, b);
    else
        assert_string_equal(a, b);
}

static void assert_aexpr_eq(const struct translate_aexpr *a, const struct translate_aexpr *b)
{
    assert_int_equal(a->n, b->n);
    for (unsigned i = 0; i < a->n; i++) {
        assert_int_equal(a->nodes[i].op, b->nodes[i].op);
        assert_int_equal(a->nodes[i].bits, b->nodes[i].bits);
        assert_int_equal(a->nodes[i].is_signed, b->nodes[i].is_signed);
        assert_true(a->nodes[i].v == b->nodes[i].v);
    }
}

static void assert_affine_eq(const struct translate_affine *a, const struct translate_affine *b)
{
    if (a == NULL || b == NULL) {
        assert_ptr_equal(a, b);
        return;
    }
    assert_int_equal(a->nsites, b->nsites);
    for (unsigned i = 0; i < a->nsites; i++) {
        assert_int_equal(a->sites[i].arg, b->sites[i].arg);
        assert_int_equal(a->sites[i].bytes, b->sites[i].bytes);
        assert_int_equal(a->sites[i].access, b->sites[i].access);
        assert_int_equal(a->sites[i].whole, b->sites[i].whole);
        assert_aexpr_eq(&a->sites[i].offset, &b->sites[i].offset);
        assert_int_equal(a->sites[i].nguards, b->sites[i].nguards);
        for (unsigned g = 0; g < a->sites[i].nguards; g++) {
            assert_aexpr_eq(&a->sites[i].guards[g].lhs, &b->sites[i].guards[g].lhs);
            assert_aexpr_eq(&a->sites[i].guards[g].rhs, &b->sites[i].guards[g].rhs);
            assert_int_equal(a->sites[i].guards[g].cmp, b->sites[i].guards[g].cmp);
        }
        assert_int_equal(a->sites[i].range_part, b->sites[i].range_part);
        assert_int_equal(a->sites[i].range_loop, b->sites[i].range_loop);
    }
    assert_int_equal(a->nloops, b->nloops);
    for (unsigned i = 0; i < a->nloops; i++) {
        assert_aexpr_eq(&a->loops[i].first, &b->loops[i].first);
        assert_aexpr_eq(&a->loops[i].bound, &b->loops[i].bound);
        assert_aexpr_eq(&a->loops[i].step, &b->loops[i].step);
        assert_int_equal(a->loops[i].cmp, b->loops[i].cmp);
        assert_int_equal(a->loops[i].ranged, b->loops[i].ranged);
    }
    assert_int_equal(a->ranges, b->ranges);
}

static void assert_kernel_eq(const struct translate_kernel *a, const struct translate_kernel *b)
{
    assert_str_eq(a->name, b->name);
    assert_int_equal(a->num_args, b->num_args);
    for (unsigned i = 0; i < a->num_args; i++) {
        assert_str_eq(a->args[i].name, b->args[i].name);
        assert_str_eq(a->args[i].type, b->args[i].type);
        assert_int_equal(a->args[i].kind, b->args[i].kind);
        assert_int_equal(a->args[i].elem_size, b->args[i].elem_size);
        assert_int_equal(a->args[i].access, b->args[i].access);
    }
    assert_int_equal(a->paged_ok, b->paged_ok);
    assert_int_equal(a->uses_global_atomics, b->uses_global_atomics);
    assert_int_equal(a->may_be_non_idempotent, b->may_be_non_idempotent);
    assert_int_equal(a->data_dependent_addresses, b->data_dependent_addresses);
    assert_int_equal(a->work_group_bound, b->work_group_bound);
    assert_affine_eq(a->affine, b->affine);
    assert_int_equal(a->iteration_ranges, b->iteration_ranges);
    assert_int_equal(a->resumable, b->resumable);
    assert_int_equal(a->spill_item_bytes, b->spill_item_bytes);
    assert_int_equal(a->spill_group_bytes, b->spill_group_bytes);
}

static void assert_result_eq(const struct translate_result *a, const struct translate_result *b)
{
    assert_str_eq(a->paged_source, b->paged_source);
    assert_str_eq(a->inspector_source, b->inspector_source);
    assert_str_eq(a->build_options, b->build_options);
    assert_int_equal(a->num_kernels, b->num_kernels);
    for (size_t i = 0; i < a->num_kernels; i++)
        assert_kernel_eq(&a->kernels[i], &b->kernels[i]);
    assert_int_equal(a->num_diags, b->num_diags);
    for (size_t i = 0; i < a->num_diags; i++) {
        assert_str_eq(a->diags[i].kernel, b->diags[i].kernel);
        assert_str_eq(a->diags[i].construct, b->diags[i].construct);
        assert_str_eq(a->diags[i].file, b->diags[i].file);
        assert_int_equal(a->diags[i].line, b->diags[i].line);
        assert_str_eq(a->diags[i].message, b->diags[i].message);
    }
    assert_str_eq(a->error, b->error);
    assert_memory_equal(&a->seconds, &b->seconds, sizeof a->seconds);
}

static struct translate_result *unpacked(const void *bytes, size_t len)
{
    struct translate_result *r = NULL;
    assert_int_equal(translate_result_unpack(bytes, len, &r), 0);
    assert_non_null(r);
    return r;
}

/* The test program covers what it claims: otherwise a field could be skipped unseen. */
static void assert_covers_everything(const struct translate_result *r)
{
    int affine_loops = 0, ranges = 0, resumable = 0, bound = 0, atomics = 0, dd = 0, rejected = 0, const_ptr = 0, local = 0;
    int guards = 0; /* a whole store with guards of both kinds (<, <=) */
    int placed = 0; /* a description with ranged loops: sites inside and after one */
    for (size_t i = 0; i < r->num_kernels; i++) {
        const struct translate_kernel *k = &r->kernels[i];
        affine_loops += k->affine != NULL && k->affine->nloops >= 2 && k->affine->nsites >= 2;
        ranges += k->iteration_ranges;
        resumable += k->resumable && k->spill_item_bytes > 0;
        bound += k->work_group_bound;
        atomics += k->uses_global_atomics;
        dd += k->data_dependent_addresses;
        rejected += !k->paged_ok;
        for (unsigned t = 0; k->affine != NULL && k->affine->ranges && t < k->affine->nsites; t++)
            placed |= 1 << k->affine->sites[t].range_part;
        for (unsigned t = 0; k->affine != NULL && t < k->affine->nsites; t++)
            guards += k->affine->sites[t].whole && k->affine->sites[t].nguards == 2 &&
                      k->affine->sites[t].guards[0].cmp != k->affine->sites[t].guards[1].cmp;
        for (unsigned a = 0; a < k->num_args; a++) {
            const_ptr += k->args[a].kind == TRANSLATE_ARG_GLOBAL_POINTER && k->args[a].access == TRANSLATE_READ;
            local += k->args[a].kind == TRANSLATE_ARG_LOCAL_POINTER;
        }
    }
    assert_true(affine_loops && ranges && resumable && bound && atomics && dd && rejected && const_ptr && local && guards);
    assert_int_equal(placed & 6, 6);
    assert_true(r->num_diags >= 1 && r->paged_source != NULL && r->inspector_source != NULL);
    assert_true(r->seconds > 0);
}

static void test_round_trip_every_field(void **state)
{
    (void)state;
    struct translate_result *r = tr_program(SRC, "-D N=3 -cl-fast-relaxed-math");
    assert_covers_everything(r);
    size_t len = 0, len2 = 0;
    void *bytes = translate_result_pack(r, &len);
    assert_non_null(bytes);
    struct translate_result *back = unpacked(bytes, len);
    assert_result_eq(r, back);
    void *again = translate_result_pack(back, &len2); /* and the same bytes again */
    assert_int_equal(len, len2);
    assert_memory_equal(bytes, again, len);
    free(again);
    free(bytes);
    translate_result_free(back);
    translate_result_free(r);
}

/* A failed translation (error set, no sources) round-trips too: the cache keeps refusals. */
static void test_round_trip_failure(void **state)
{
    (void)state;
    struct translate_options o = {NULL, "cl_khr_fp64", 0, "t.cl", 0};
    struct translate_result *r = NULL;
    assert_int_not_equal(translate_program("__kernel void k( {", &o, &r), 0);
    assert_non_null(r->error);
    size_t len = 0;
    void *bytes = translate_result_pack(r, &len);
    struct translate_result *back = unpacked(bytes, len);
    assert_result_eq(r, back);
    free(bytes);
    translate_result_free(back);
    translate_result_free(r);
}

static void assert_refused(const void *bytes, size_t len)
{
    struct translate_result *r = (struct translate_result *)1;
    assert_int_equal(translate_result_unpack(bytes, len, &r), -1);
    assert_null(r);
}

static void test_damaged_bytes_are_refused(void **state)
{
    (void)state;
    struct translate_result *r = tr_program(SRC, NULL);
    size_t len = 0;
    unsigned char *bytes = translate_result_pack(r, &len);
    for (size_t cut = 0; cut < len; cut++) /* every truncation */
        assert_refused(bytes, cut);
    unsigned char *longer = malloc(len + 1);
    memcpy(longer, bytes, len);
    longer[len] = 0;
    assert_refused(longer, len + 1); /* trailing bytes */
    for (size_t word = 0; word < 3; word++) { /* magic, format, ABI */
        memcpy(longer, bytes, len);
        longer[8 * word] ^= 0x40;
        assert_refused(longer, len);
    }
    memcpy(longer, bytes, len);
    memset(longer + 24, 0x7f, 8); /* the paged source's length, far past the end */
    assert_refused(longer, len);
    free(longer);
    free(bytes);
    translate_result_free(r);
}

VAST_CMOCKA_MAIN(NULL, NULL, test_round_trip_every_field, test_round_trip_failure, test_damaged_bytes_are_refused)
