/* test_affine_eval.c - translate_affine_ranges (translate/affine_eval.c) on hand-written
 * descriptions: exact ranges of contiguous accesses, refinement of strided ones, loops, and
 * the cases it must refuse (C wrap-around, division by an interval holding 0, bad arguments);
 * translate_affine_traffic's estimate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "translate.h"
#include "tr.h"
#include "vast_cmocka.h"

#define U64(o, v) {TRANSLATE_AOP_##o, 64, 0, v}
#define S64(o, v) {TRANSLATE_AOP_##o, 64, 1, v}
#define S32(o, v) {TRANSLATE_AOP_##o, 32, 1, v}
#define EXPR(a) {a, sizeof a / sizeof a[0]}

/* One dimension of `global` work-items in groups of `local`; box = groups [first, last]. */
static struct translate_alaunch launch1(unsigned long long global, unsigned long long local, unsigned long long first,
                                        unsigned long long last)
{
    struct translate_alaunch l = {.dims = 1, .global_size = {global, 1, 1}, .local_size = {local, 1, 1},
                                  .group_first = {first, 0, 0}, .group_last = {last, 0, 0}};
    return l;
}

static void test_contiguous_exact(void **state)
{
    (void)state;
    /* y[i] with int i = get_global_id(0), float elements */
    struct translate_anode off[] = {U64(GLOBAL_ID, 0), S32(CAST, 0), S64(CAST, 0), S64(CONST, 4), S64(MUL, 0)};
    struct translate_asite site = {1, 4, TRANSLATE_READ | TRANSLATE_WRITE, .offset = EXPR(off)};
    struct translate_affine a = {&site, 1, NULL, 0, 0};
    struct translate_alaunch l = launch1(1000, 64, 2, 3);
    struct tr_ranges g = {0};
    assert_int_equal(translate_affine_ranges(&a, &l, 4096, tr_collect, &g), 0);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.lo[0], 2 * 64 * 4);
    assert_int_equal(g.end[0], 4 * 64 * 4);
    /* the last group stops at the global size; a global offset moves everything */
    l = launch1(1000, 64, 15, 15);
    l.global_offset[0] = 10;
    g.n = 0;
    assert_int_equal(translate_affine_ranges(&a, &l, 4096, tr_collect, &g), 0);
    assert_int_equal(g.lo[0], (10 + 15 * 64) * 4);
    assert_int_equal(g.end[0], (10 + 999 + 1) * 4);
}

static void test_strided_refined(void **state)
{
    (void)state;
    /* a column of a wide row-major matrix: a[get_local_id(0) * W + get_group_id(1)], W = 32768
     * floats (128 KiB rows): 16 accesses 128 KiB apart, not one 2 MiB range */
    struct translate_anode off[] = {U64(LOCAL_ID, 0), U64(CONST, 32768), U64(MUL, 0), U64(GROUP_ID, 1),
                                    U64(ADD, 0),      S64(CAST, 0),      S64(CONST, 4), S64(MUL, 0)};
    struct translate_asite site = {0, 4, TRANSLATE_READ, .offset = EXPR(off)};
    struct translate_affine a = {&site, 1, NULL, 0, 0};
    struct translate_alaunch l = {.dims = 2, .global_size = {16, 64, 1}, .local_size = {16, 1, 1},
                                  .group_first = {0, 5, 0}, .group_last = {0, 5, 0}};
    struct tr_ranges g = {0};
    assert_int_equal(translate_affine_ranges(&a, &l, 65536, tr_collect, &g), 0);
    assert_int_equal(g.n, 16);
    long long bytes = 0;
    for (int i = 0; i < g.n; i++) {
        bytes += g.end[i] - g.lo[i];
        assert_int_equal((g.lo[i] / 4 - 5) % 32768, 0);
    }
    assert_int_equal(bytes, 16 * 4);
}

static void test_matrixmul_loop(void **state)
{
    (void)state;
    /* B[(t + ty) * n + col] with for (size_t t = 0; t < n; t += 16): every row of B, one range */
    struct translate_anode off[] = {U64(LOOP, 0), U64(LOCAL_ID, 1), U64(ADD, 0), U64(ARG, 4), U64(MUL, 0),
                                    U64(GLOBAL_ID, 0), U64(ADD, 0), S64(CAST, 0), S64(CONST, 4), S64(MUL, 0)};
    struct translate_anode first[] = {U64(CONST, 0)}, bound[] = {U64(ARG, 4)}, step[] = {U64(CONST, 16)};
    struct translate_aloop loop = {EXPR(first), EXPR(bound), EXPR(step), TRANSLATE_ACMP_LT, 0};
    struct translate_asite site = {2, 4, TRANSLATE_READ, .offset = EXPR(off)};
    struct translate_affine a = {&site, 1, &loop, 1, 0};
    unsigned long long n = 256;
    const void *args[5] = {NULL, NULL, NULL, NULL, &n};
    size_t sizes[5] = {8, 8, 8, 8, 8};
    struct translate_alaunch l = {.dims = 2, .global_size = {256, 512, 1}, .local_size = {16, 16, 1},
                                  .args = args, .arg_sizes = sizes, .num_args = 5,
                                  .group_first = {3, 7, 0}, .group_last = {3, 7, 0}};
    struct tr_ranges g = {0};
    assert_int_equal(translate_affine_ranges(&a, &l, 4096, tr_collect, &g), 0);
    long long lo = g.lo[0], end = g.end[0];
    for (int i = 1; i < g.n; i++) {
        lo = g.lo[i] < lo ? g.lo[i] : lo;
        end = g.end[i] > end ? g.end[i] : end;
    }
    assert_int_equal(lo, 3 * 16 * 4);
    assert_int_equal(end, ((n - 1) * n + 3 * 16 + 15 + 1) * 4);
    /* t's last value is n - 16, so t + ty stays in B; without the step it would pass B's end */
    loop.step.n = 0;
    g.n = 0;
    assert_int_equal(translate_affine_ranges(&a, &l, 4096, tr_collect, &g), 0);
    assert_int_equal(g.end[g.n - 1], ((n - 1 + 15) * n + 3 * 16 + 15 + 1) * 4);
    /* 1 KiB rows, 4 KiB pages: each row's 64 bytes are in a page every row touches; not split
     * into rows */
    assert_true(g.n <= 2);
    /* a decreasing loop for (long k = n; k >= 1; k--) a[k - 1]: [0, n) */
    struct translate_anode off2[] = {S64(LOOP, 0), S64(CONST, 1), S64(SUB, 0), S64(CONST, 4), S64(MUL, 0)};
    struct translate_anode first2[] = {U64(ARG, 4), S64(CAST, 0)}, bound2[] = {S64(CONST, 1)};
    struct translate_anode step2[] = {S64(CONST, 1)};
    struct translate_aloop down = {EXPR(first2), EXPR(bound2), EXPR(step2), TRANSLATE_ACMP_GE, 0};
    struct translate_asite site2 = {0, 4, TRANSLATE_READ, .offset = EXPR(off2)};
    struct translate_affine a2 = {&site2, 1, &down, 1, 0};
    g.n = 0;
    assert_int_equal(translate_affine_ranges(&a2, &l, 1 << 20, tr_collect, &g), 0);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.lo[0], 0);
    assert_int_equal(g.end[0], n * 4);
}

static void test_remainder_and_shifts(void **state)
{
    (void)state;
    /* a[(gid % 64) << 2 >> 1]: within one period of 64 the remainder is exact */
    struct translate_anode off[] = {U64(GLOBAL_ID, 0), U64(CONST, 64), U64(REM, 0), U64(CONST, 2), U64(SHL, 0),
                                    U64(CONST, 1),     U64(SHR, 0),    S64(CAST, 0), S64(CONST, 1), S64(MUL, 0)};
    struct translate_asite site = {0, 1, TRANSLATE_READ, .offset = EXPR(off)};
    struct translate_affine a = {&site, 1, NULL, 0, 0};
    struct translate_alaunch l = launch1(1024, 16, 5, 5); /* gids 80..95: 16..31 */
    struct tr_ranges g = {0};
    assert_int_equal(translate_affine_ranges(&a, &l, 4096, tr_collect, &g), 0);
    assert_int_equal(g.lo[0], 32);
    assert_int_equal(g.end[0], 63);
    l = launch1(1024, 16, 3, 4); /* gids 48..79 wrap: 0..63 */
    g.n = 0;
    assert_int_equal(translate_affine_ranges(&a, &l, 4096, tr_collect, &g), 0);
    assert_int_equal(g.lo[0], 0);
    assert_int_equal(g.end[0], 127);
}

static void test_refused(void **state)
{
    (void)state;
    struct translate_alaunch l = launch1(1024, 16, 0, 3);
    struct tr_ranges g = {0};
    /* size_t gid - 1 wraps for work-item 0; as a byte offset that is pointer arithmetic
     * modulo 2^64, so the range holds it as -1 (FDTD3d's guarded-out edges) */
    struct translate_anode wrap[] = {U64(GLOBAL_ID, 0), U64(CONST, 1), U64(SUB, 0), S64(CAST, 0)};
    struct translate_asite s1 = {0, 4, TRANSLATE_READ, .offset = EXPR(wrap)};
    struct translate_affine a1 = {&s1, 1, NULL, 0, 0};
    assert_int_equal(translate_affine_ranges(&a1, &l, 4096, tr_collect, &g), 0);
    assert_int_equal(g.lo[g.n - 1], -1);
    assert_int_equal(g.end[g.n - 1], 63 - 1 + 4);
    /* but not through a division (C divides the wrapped value), nor into a wider type */
    struct translate_anode wdiv[] = {U64(GLOBAL_ID, 0), U64(CONST, 1), U64(SUB, 0), U64(CONST, 2), U64(DIV, 0),
                                     S64(CAST, 0)};
    struct translate_asite s1d = {0, 4, TRANSLATE_READ, .offset = EXPR(wdiv)};
    struct translate_affine a1d = {&s1d, 1, NULL, 0, 0};
    assert_int_equal(translate_affine_ranges(&a1d, &l, 4096, tr_collect, &g), -1);
    struct translate_anode wwide[] = {U64(GLOBAL_ID, 0), {TRANSLATE_AOP_CAST, 32, 0, 0}, {TRANSLATE_AOP_CONST, 32, 0, 1},
                                      {TRANSLATE_AOP_SUB, 32, 0, 0}, S64(CAST, 0)};
    struct translate_asite s1w = {0, 4, TRANSLATE_READ, .offset = EXPR(wwide)};
    struct translate_affine a1w = {&s1w, 1, NULL, 0, 0};
    assert_int_equal(translate_affine_ranges(&a1w, &l, 4096, tr_collect, &g), -1);
    /* nor as a loop bound: for (size_t k = 0; k < gid - 1; k++) a[k] */
    struct translate_anode lfirst[] = {U64(CONST, 0)}, lbound[] = {U64(GLOBAL_ID, 0), U64(CONST, 1), U64(SUB, 0)};
    struct translate_anode loff[] = {U64(LOOP, 0), S64(CAST, 0)};
    struct translate_aloop lp = {EXPR(lfirst), EXPR(lbound), {NULL, 0}, TRANSLATE_ACMP_LT, 0};
    struct translate_asite s1l = {0, 4, TRANSLATE_READ, .offset = EXPR(loff)};
    struct translate_affine a1l = {&s1l, 1, &lp, 1, 0};
    assert_int_equal(translate_affine_ranges(&a1l, &l, 4096, tr_collect, &g), -1);
    /* all fine for groups past the first */
    l.group_first[0] = 1;
    assert_int_equal(translate_affine_ranges(&a1d, &l, 4096, tr_collect, &g), 0);
    assert_int_equal(translate_affine_ranges(&a1w, &l, 4096, tr_collect, &g), 0);
    assert_int_equal(translate_affine_ranges(&a1l, &l, 4096, tr_collect, &g), 0);
    /* int overflow: gid * 2^30 as int */
    struct translate_anode ovf[] = {U64(GLOBAL_ID, 0), S32(CAST, 0), S32(CONST, 1 << 30), S32(MUL, 0),
                                    S64(CAST, 0)};
    struct translate_asite s2 = {0, 4, TRANSLATE_READ, .offset = EXPR(ovf)};
    struct translate_affine a2 = {&s2, 1, NULL, 0, 0};
    assert_int_equal(translate_affine_ranges(&a2, &l, 4096, tr_collect, &g), -1);
    /* division by a local id that may be 0 */
    struct translate_anode div0[] = {U64(GLOBAL_ID, 0), U64(LOCAL_ID, 0), U64(DIV, 0), S64(CAST, 0)};
    struct translate_asite s3 = {0, 4, TRANSLATE_READ, .offset = EXPR(div0)};
    struct translate_affine a3 = {&s3, 1, NULL, 0, 0};
    assert_int_equal(translate_affine_ranges(&a3, &l, 4096, tr_collect, &g), -1);
    /* a scalar argument that was not recorded, a malformed expression */
    struct translate_anode arg[] = {S64(ARG, 0)};
    struct translate_asite s4 = {0, 4, TRANSLATE_READ, .offset = EXPR(arg)};
    struct translate_affine a4 = {&s4, 1, NULL, 0, 0};
    assert_int_equal(translate_affine_ranges(&a4, &l, 4096, tr_collect, &g), -1);
    struct translate_anode bad[] = {S64(ADD, 0)};
    struct translate_asite s5 = {0, 4, TRANSLATE_READ, .offset = EXPR(bad)};
    struct translate_affine a5 = {&s5, 1, NULL, 0, 0};
    assert_int_equal(translate_affine_ranges(&a5, &l, 4096, tr_collect, &g), -1);
}

/* translate_affine_written (translate/cover.c): the bytes whole stores certainly write, exact
 * for linear offsets under bounds guards, nothing where the site is not whole, not dense, or a
 * node could wrap. */
static void test_written(void **state)
{
    (void)state;
    unsigned n = 200;
    const void *args[2] = {NULL, &n};
    size_t sizes[2] = {8, 4};
    /* out[i] with size_t i = get_global_id(0), if (i < n) */
    struct translate_anode off[] = {U64(GLOBAL_ID, 0), S64(CAST, 0), S64(CONST, 4), S64(MUL, 0)};
    struct translate_anode gid[] = {U64(GLOBAL_ID, 0)};
    struct translate_anode narg[] = {{TRANSLATE_AOP_ARG, 32, 0, 1}, U64(CAST, 0)};
    struct translate_aguard lt = {EXPR(gid), EXPR(narg), TRANSLATE_ACMP_LT};
    struct translate_asite site = {0, 4, TRANSLATE_WRITE, 1, EXPR(off), &lt, 1, 0, 0};
    struct translate_affine a = {&site, 1, NULL, 0, 0};
    struct translate_alaunch l = launch1(1024, 64, 0, 3);
    l.args = args;
    l.arg_sizes = sizes;
    l.num_args = 2;
    struct tr_ranges g = {0};
    assert_int_equal(translate_affine_written(&a, &l, tr_collect, &g), 0);
    assert_int_equal(g.n, 1);
    assert_true(g.lo[0] == 0 && g.end[0] == 800); /* ids 0..199 of the box 0..255 */
    /* groups 4..5 (ids 256..383): all past n, nothing */
    l.group_first[0] = 4, l.group_last[0] = 5, g.n = 0;
    translate_affine_written(&a, &l, tr_collect, &g);
    assert_int_equal(g.n, 0);
    /* without the guard: every id of the box; with a global offset of 10: ids 10..265 */
    site.nguards = 0, l.group_first[0] = 0, l.group_last[0] = 3, l.global_offset[0] = 10, g.n = 0;
    translate_affine_written(&a, &l, tr_collect, &g);
    assert_true(g.n == 1 && g.lo[0] == 40 && g.end[0] == 1064);
    l.global_offset[0] = 0;
    /* a lower bound, 10 < i: ids 11..255 */
    struct translate_anode ten[] = {U64(CONST, 10)};
    struct translate_aguard gt = {EXPR(ten), EXPR(gid), TRANSLATE_ACMP_LT};
    site.guards = &gt, site.nguards = 1, g.n = 0;
    translate_affine_written(&a, &l, tr_collect, &g);
    assert_true(g.n == 1 && g.lo[0] == 44 && g.end[0] == 1024);
    /* not whole, or a guard that is no bound on one id (10 < 2 * i): nothing */
    site.whole = 0, g.n = 0;
    translate_affine_written(&a, &l, tr_collect, &g);
    assert_int_equal(g.n, 0);
    struct translate_anode twice[] = {U64(GLOBAL_ID, 0), U64(CONST, 2), U64(MUL, 0)};
    struct translate_aguard odd = {EXPR(ten), EXPR(twice), TRANSLATE_ACMP_LT};
    site.whole = 1, site.guards = &odd, g.n = 0;
    translate_affine_written(&a, &l, tr_collect, &g);
    assert_int_equal(g.n, 0);
    /* every other element, out[2 * i]: not dense */
    struct translate_anode off2[] = {U64(GLOBAL_ID, 0), S64(CAST, 0), S64(CONST, 8), S64(MUL, 0)};
    struct translate_asite sparse = {0, 4, TRANSLATE_WRITE, 1, EXPR(off2), NULL, 0, 0, 0};
    a.sites = &sparse, g.n = 0;
    translate_affine_written(&a, &l, tr_collect, &g);
    assert_int_equal(g.n, 0);
    /* out[(int)(i - 10)] over ids 0..255: (i - 10) wraps in size_t for i < 10: nothing */
    struct translate_anode wrap[] = {U64(GLOBAL_ID, 0), U64(CONST, 10), U64(SUB, 0), S32(CAST, 0), S64(CAST, 0),
                                     S64(CONST, 4), S64(MUL, 0)};
    struct translate_asite wraps = {0, 4, TRANSLATE_WRITE, 1, EXPR(wrap), NULL, 0, 0, 0};
    a.sites = &wraps, g.n = 0;
    translate_affine_written(&a, &l, tr_collect, &g);
    assert_int_equal(g.n, 0);
    /* C[row * 100 + col], 2-D: one run per row of the box, adjacent */
    struct translate_anode mm[] = {U64(GLOBAL_ID, 1), U64(CONST, 100), U64(MUL, 0), U64(GLOBAL_ID, 0), U64(ADD, 0),
                                   S64(CAST, 0), S64(CONST, 4), S64(MUL, 0)};
    struct translate_asite msite = {0, 4, TRANSLATE_WRITE, 1, EXPR(mm), NULL, 0, 0, 0};
    struct translate_alaunch l2 = {.dims = 2, .global_size = {100, 12, 1}, .local_size = {50, 4, 1},
                                   .group_first = {0, 1, 0}, .group_last = {1, 1, 0}};
    a.sites = &msite, g.n = 0;
    translate_affine_written(&a, &l2, tr_collect, &g);
    assert_int_equal(g.n, 4); /* rows 4..7 */
    for (int i = 0; i < 4; i++)
        assert_true(g.lo[i] == (4 + i) * 400 && g.end[i] == (5 + i) * 400);
}

/* Iteration ranges: B[(t * 16 + ty) * n + col] inside the ranged loop for (t = 0; t < n / 16;
 * t++), C[row * n + col] after it; only iterations [iter_first, iter_end) count. */
static void test_iteration_ranges(void **state)
{
    (void)state;
    struct translate_anode boff[] = {U64(LOOP, 0), U64(CONST, 16), U64(MUL, 0), U64(LOCAL_ID, 1), U64(ADD, 0),
                                     U64(ARG, 0), U64(MUL, 0), U64(GLOBAL_ID, 0), U64(ADD, 0), S64(CAST, 0),
                                     S64(CONST, 4), S64(MUL, 0)};
    struct translate_anode coff[] = {U64(GLOBAL_ID, 1), U64(ARG, 0), U64(MUL, 0), U64(GLOBAL_ID, 0), U64(ADD, 0),
                                     S64(CAST, 0), S64(CONST, 4), S64(MUL, 0)};
    struct translate_anode first[] = {U64(CONST, 0)}, bound[] = {U64(ARG, 0), U64(CONST, 16), U64(DIV, 0)},
                           step[] = {U64(CONST, 1)};
    struct translate_aloop loop = {EXPR(first), EXPR(bound), EXPR(step), TRANSLATE_ACMP_LT, 1};
    struct translate_asite sites[2] = {{1, 4, TRANSLATE_READ, .offset = EXPR(boff), .range_part = 1},
                                       {2, 4, TRANSLATE_WRITE, .offset = EXPR(coff), .range_part = 2}};
    struct translate_affine a = {sites, 2, &loop, 1, 1};
    unsigned long long n = 256; /* 16 iterations */
    const void *args[1] = {&n};
    size_t sizes[1] = {8};
    /* the whole first row of work-groups: all 256 columns, rows 0..15 */
    struct translate_alaunch l = {.dims = 2, .global_size = {256, 256, 1}, .local_size = {16, 16, 1},
                                  .args = args, .arg_sizes = sizes, .num_args = 1,
                                  .group_first = {0, 0, 0}, .group_last = {15, 0, 0}, .iter_first = 2, .iter_end = 4};
    struct tr_ranges g = {0};
    assert_int_equal(translate_affine_ranges(&a, &l, 1024, tr_collect, &g), 0);
    long long lo = 1ll << 62, end = 0;
    for (int i = 0; i < g.n; i++) {
        assert_int_equal(g.site[i], 0); /* C's store is not in this range */
        lo = g.lo[i] < lo ? g.lo[i] : lo, end = g.end[i] > end ? g.end[i] : end;
    }
    assert_int_equal(lo, 32 * 256 * 4); /* rows 32..63 of B */
    assert_int_equal(end, 64 * 256 * 4);
    int more = 0;
    assert_int_equal(translate_affine_more(&a, &l, &more), 0);
    assert_true(more);
    /* the last range: B's rows 224..255 and C's rows 0..15; nothing past it */
    l.iter_first = 14, l.iter_end = 16, g.n = 0;
    assert_int_equal(translate_affine_ranges(&a, &l, 1024, tr_collect, &g), 0);
    int c = 0;
    for (int i = 0; i < g.n; i++)
        if (g.site[i] == 1) {
            c++;
            assert_true(g.lo[i] >= 0 && g.end[i] <= 16 * 256 * 4);
        } else {
            assert_true(g.lo[i] >= 224 * 256 * 4);
        }
    assert_true(c > 0);
    assert_int_equal(translate_affine_more(&a, &l, &more), 0);
    assert_false(more);
    /* past the end: no B; C's store still counts where a loop ends at the range's start (which
     * side of the range's boundary runs it is the kernel's: a superset takes both) */
    l.iter_first = 16, l.iter_end = 32, g.n = 0;
    assert_int_equal(translate_affine_ranges(&a, &l, 1024, tr_collect, &g), 0);
    for (int i = 0; i < g.n; i++)
        assert_int_equal(g.site[i], 1);
    l.iter_first = 17, g.n = 0;
    assert_int_equal(translate_affine_ranges(&a, &l, 1024, tr_collect, &g), 0);
    assert_int_equal(g.n, 0);
    /* without the range: everything, as before */
    l.iter_first = 0, l.iter_end = 0, g.n = 0;
    assert_int_equal(translate_affine_ranges(&a, &l, 1 << 30, tr_collect, &g), 0);
    assert_int_equal(g.n, 2);
    assert_int_equal(translate_affine_more(&a, &l, &more), -1);
    /* a description without ranges cannot evaluate one */
    a.ranges = 0;
    l.iter_end = 4;
    assert_int_equal(translate_affine_ranges(&a, &l, 1024, tr_collect, &g), -1);
    /* nor a loop whose step is not one positive value */
    a.ranges = 1;
    struct translate_anode vstep[] = {U64(GLOBAL_ID, 0)};
    loop.step = (struct translate_aexpr)EXPR(vstep);
    assert_int_equal(translate_affine_ranges(&a, &l, 1024, tr_collect, &g), -1);
}

/* translate_affine_traffic: a site's bytes times the trips of the loops its offset names. */
static void test_traffic(void **state)
{
    (void)state;
    double bytes = -1;
    /* saxpy: y[i] = a * x[i] + y[i], three 4-byte sites, no loop */
    struct translate_anode gid[] = {U64(GLOBAL_ID, 0), S64(CAST, 0), S64(CONST, 4), S64(MUL, 0)};
    struct translate_asite sx[3] = {{1, 4, TRANSLATE_READ, .offset = EXPR(gid)},
                                    {2, 4, TRANSLATE_READ, .offset = EXPR(gid)},
                                    {2, 4, TRANSLATE_WRITE, .offset = EXPR(gid)}};
    struct translate_affine ax = {sx, 3, NULL, 0, 0};
    struct translate_alaunch l1 = launch1(1000, 64, 0, 15);
    assert_int_equal(translate_affine_traffic(&ax, &l1, &bytes), 0);
    assert_true(bytes == 12);
    /* MatrixMul's tiles: A[row * n + t + tx] and B[(t + ty) * n + col] in
     * for (size_t t = 0; t < n; t += 16), C[row * n + col] after it: n / 16 trips of the two
     * loads, one store */
    struct translate_anode offa[] = {U64(GLOBAL_ID, 1), U64(ARG, 4), U64(MUL, 0), U64(LOOP, 0), U64(ADD, 0),
                                     U64(LOCAL_ID, 0), U64(ADD, 0), S64(CAST, 0), S64(CONST, 4), S64(MUL, 0)};
    struct translate_anode offb[] = {U64(LOOP, 0), U64(LOCAL_ID, 1), U64(ADD, 0), U64(ARG, 4), U64(MUL, 0),
                                     U64(GLOBAL_ID, 0), U64(ADD, 0), S64(CAST, 0), S64(CONST, 4), S64(MUL, 0)};
    struct translate_anode offc[] = {U64(GLOBAL_ID, 1), U64(ARG, 4), U64(MUL, 0), U64(GLOBAL_ID, 0),
                                     U64(ADD, 0), S64(CAST, 0), S64(CONST, 4), S64(MUL, 0)};
    struct translate_anode first[] = {U64(CONST, 0)}, bound[] = {U64(ARG, 4)}, step[] = {U64(CONST, 16)};
    struct translate_aloop loop = {EXPR(first), EXPR(bound), EXPR(step), TRANSLATE_ACMP_LT, 0};
    struct translate_asite sm[3] = {{1, 4, TRANSLATE_READ, .offset = EXPR(offa)},
                                    {2, 4, TRANSLATE_READ, .offset = EXPR(offb)},
                                    {0, 4, TRANSLATE_WRITE, .offset = EXPR(offc)}};
    struct translate_affine am = {sm, 3, &loop, 1, 0};
    unsigned long long n = 4096;
    const void *args[5] = {NULL, NULL, NULL, NULL, &n};
    size_t sizes[5] = {8, 8, 8, 8, 8};
    struct translate_alaunch l2 = {.dims = 2, .global_size = {4096, 8192, 1}, .local_size = {16, 16, 1},
                                   .args = args, .arg_sizes = sizes, .num_args = 5,
                                   .group_first = {0, 0, 0}, .group_last = {255, 511, 0}};
    assert_int_equal(translate_affine_traffic(&am, &l2, &bytes), 0);
    assert_true(bytes == 2 * 4 * (4096 / 16) + 4);
    /* without a known step the trips are unknown: no estimate (a grid-stride loop's span would
     * count the whole buffer once per work-item) */
    loop.step.n = 0;
    assert_int_equal(translate_affine_traffic(&am, &l2, &bytes), -1);
    loop.step.n = 1;
    /* a site naming two nested loops: for (i = 0; i < 10; i++) for (j = i; j < 20; j++) a[i * 20 + j];
     * j spans [0, 19] over every i: 10 * 20 trips, an upper bound of the 155 it makes */
    struct translate_anode c0[] = {U64(CONST, 0)}, c10[] = {U64(CONST, 10)}, c20[] = {U64(CONST, 20)};
    struct translate_anode fj[] = {U64(LOOP, 0)}, one[] = {U64(CONST, 1)};
    struct translate_aloop nest[2] = {{EXPR(c0), EXPR(c10), EXPR(one), TRANSLATE_ACMP_LT, 0},
                                      {EXPR(fj), EXPR(c20), EXPR(one), TRANSLATE_ACMP_LT, 0}};
    struct translate_anode offn[] = {U64(LOOP, 0), U64(CONST, 20), U64(MUL, 0), U64(LOOP, 1), U64(ADD, 0),
                                     S64(CAST, 0), S64(CONST, 4), S64(MUL, 0)};
    struct translate_asite sn = {0, 4, TRANSLATE_READ, .offset = EXPR(offn)};
    struct translate_affine an = {&sn, 1, nest, 2, 0};
    assert_int_equal(translate_affine_traffic(&an, &l1, &bytes), 0);
    assert_true(bytes == 4 * 10 * 20);
    /* a bound it cannot evaluate: n not recorded */
    l2.num_args = 4;
    assert_int_equal(translate_affine_traffic(&am, &l2, &bytes), -1);
}

VAST_CMOCKA_MAIN(NULL, NULL,
                 test_contiguous_exact, test_strided_refined, test_matrixmul_loop, test_remainder_and_shifts,
                 test_refused, test_written, test_iteration_ranges, test_traffic)
