/*
 * test_plan: the planner of partitioned launches (interpose/partition.c) driven by made-up
 * page sets, with no device: VAST's Algorithm 1 over a fake struct vast_pas_source (budgets,
 * the half-budget rule, pages shared by consecutive partitions, too coarse chunks read again
 * finer, PAS windows, a work-group alone over the budget), Eq. 1's chunk size, the sticky pages
 * that faulted in one partition and join later ones, the slicing of work-groups, and the kept
 * plan of a kernel (reused for an equal launch, never after a change the plan depends on).
 * A launch's whole plan is test_launch_plan.c's.
 *
 * The fake source (fake_pas.c) holds one page set per work-group and answers a window by
 * OR-ing them, as the inspector does per chunk; it fails the test when asked for more rows
 * than its window.
 */
#include "fake_pas.h"

#include "pagecache.h"
#include "translate.h"

#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Streaming: no page shared, so each partition holds half the budget (its successor loads
 * beside it). 64 work-groups of 2 pages in 32 frames: 8 partitions of 8 work-groups. */
static void test_half_budget(void **state)
{
    (void)state;
    struct fake f;
    fake_init(&f, 64, 1 + 128);
    for (size_t g = 0; g < 64; g++)
        fake_touch(&f, g, 1 + 2 * g, 2);
    struct vast_partition *parts = NULL;
    size_t n = 0;
    assert_int_equal(fake_plan(&f, 32, 1, &parts, &n, NULL), CL_SUCCESS);
    fake_check_plan(&f, parts, n, 32);
    assert_int_equal(n, 8);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(parts[i].end - parts[i].first, 8);
        assert_int_equal(parts[i].count, 16);
    }
    vast_partitions_free(parts, n);
    /* A budget of one page more changes nothing (16.5 pages a side is not a work-group more),
     * two pages more give one work-group more per partition. */
    assert_int_equal(fake_plan(&f, 34, 1, &parts, &n, NULL), CL_SUCCESS);
    fake_check_plan(&f, parts, n, 34);
    assert_int_equal(parts[1].end - parts[1].first, 8);
    vast_partitions_free(parts, n);
    assert_int_equal(fake_plan(&f, 36, 1, &parts, &n, NULL), CL_SUCCESS);
    fake_check_plan(&f, parts, n, 36);
    assert_int_equal(parts[1].end - parts[1].first, 9);
    vast_partitions_free(parts, n);
    free(f.wg);
}

/* A plan's memory grows with the launch's pages, not with partitions x pages: 1024 work-groups
 * streaming over 8192 pages in a budget of 16 frames make 1024 partitions, whose sets as
 * bytemaps held 8 MiB (pyopencl's test_zeros_large_array, 2 x 2 GiB at 256 KiB: 32 GiB, the
 * process killed). Measured as the heap the planner keeps (mallinfo2), so that the test reads
 * nothing of the plan's representation. */
static void test_plan_footprint(void **state)
{
    (void)state;
    size_t groups = 1024, pages = 1 + 8 * 1024;
    struct fake f;
    fake_init(&f, groups, pages);
    for (size_t g = 0; g < groups; g++)
        fake_touch(&f, g, 1 + 8 * g, 8);
    struct vast_partition *parts = NULL;
    size_t n = 0;
    struct mallinfo2 before = mallinfo2();
    assert_int_equal(fake_plan(&f, 16, 1, &parts, &n, NULL), CL_SUCCESS);
    struct mallinfo2 after = mallinfo2();
    size_t held = (after.uordblks + after.hblkhd) - (before.uordblks + before.hblkhd);
    print_message("%zu partitions over %zu pages: the plan holds %zu KiB\n", n, pages, held >> 10);
    assert_int_equal(n, groups);
    assert_true(held <= 4 * pages + n * (sizeof *parts + 64));
    fake_check_plan(&f, parts, n, 16); /* unpacks every set */
    vast_partitions_free(parts, n);
    free(f.wg);
}

/* MatrixMul's B: 8 pages every work-group reads, one page of its own. Shared pages count once
 * between consecutive partitions: the first partition is 8 + 8 pages (its successor adds 8
 * more), the next ones 8 + 12 (|P| + |new| = 8 + 12 + 12 = 32), not 8 + 8 as when the shared
 * pages were counted again. */
static void test_shared_pages_count_once(void **state)
{
    (void)state;
    struct fake f;
    fake_init(&f, 44, 1 + 8 + 44);
    for (size_t g = 0; g < 44; g++) {
        fake_touch(&f, g, 1, 8);
        fake_touch(&f, g, 9 + g, 1);
    }
    struct vast_partition *parts = NULL;
    size_t n = 0;
    assert_int_equal(fake_plan(&f, 32, 1, &parts, &n, NULL), CL_SUCCESS);
    fake_check_plan(&f, parts, n, 32);
    assert_int_equal(n, 4);
    size_t want[4] = {8, 12, 12, 12};
    for (size_t i = 0; i < n; i++)
        assert_int_equal(parts[i].end - parts[i].first, want[i]);
    vast_partitions_free(parts, n);
    free(f.wg);
}

/* A chunk of 16 work-groups that does not fit is read again 16 times finer: partitions end
 * where the budget says, not at chunk boundaries. */
static void test_too_coarse_refined(void **state)
{
    (void)state;
    struct fake f;
    fake_init(&f, 64, 1 + 3 * 64);
    for (size_t g = 0; g < 64; g++)
        fake_touch(&f, g, 1 + 3 * g, 3);
    struct vast_partition *parts = NULL;
    size_t n = 0;
    assert_int_equal(fake_plan(&f, 30, 16, &parts, &n, NULL), CL_SUCCESS);
    fake_check_plan(&f, parts, n, 30);
    assert_int_equal(f.min_w, 1);
    /* 5 work-groups (15 pages) a partition, within each chunk of 16: the chunk's last
     * work-group closes its partition when the next chunk is too coarse (5, 5, 5, 1). */
    assert_int_equal(n, 16);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(parts[i].end - parts[i].first, i % 4 == 3 ? 1 : 5);
    vast_partitions_free(parts, n);
    /* Chunks that fit are taken whole: 32 chunks of 2 work-groups in one window. */
    struct fake g;
    fake_init(&g, 64, 1 + 64);
    for (size_t k = 0; k < 64; k++)
        fake_touch(&g, k, 1 + k, 1);
    assert_int_equal(fake_plan(&g, 128, 2, &parts, &n, NULL), CL_SUCCESS);
    fake_check_plan(&g, parts, n, 128);
    assert_int_equal(n, 1);
    assert_int_equal(g.min_w, 2);
    assert_int_equal(g.windows, 1);
    vast_partitions_free(parts, n);
    free(g.wg);
    free(f.wg);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Random page sets (runs, shared pages, empty work-groups): every plan keeps the rules, and
 * the plan does not depend on the PAS window (rows read 3 at a time or 64). */
static void test_random_plans_and_windows(void **state)
{
    (void)state;
    for (int round = 0; round < 40; round++) {
        size_t groups = 1 + next_random() % 200, pages = 1 + 64 + next_random() % 300;
        size_t nframes = 12 + next_random() % 40;
        struct fake f;
        fake_init(&f, groups, pages);
        for (size_t g = 0; g < groups; g++) {
            size_t len = next_random() % (nframes / 2 - 1), p = 1 + next_random() % (pages - 1 - len);
            if (next_random() % 8 != 0)
                fake_touch(&f, g, p, len);
            if (next_random() % 2)
                fake_touch(&f, g, 1, 1 + next_random() % 4); /* shared */
        }
        size_t w = (size_t)1 << (next_random() % 7);
        struct vast_partition *wide = NULL, *narrow = NULL;
        size_t nw = 0, nn = 0;
        assert_int_equal(fake_plan(&f, nframes, w, &wide, &nw, NULL), CL_SUCCESS);
        fake_check_plan(&f, wide, nw, nframes);
        f.max_rows = 3;
        assert_int_equal(fake_plan(&f, nframes, w, &narrow, &nn, NULL), CL_SUCCESS);
        assert_int_equal(nn, nw);
        for (size_t i = 0; i < nw; i++) {
            assert_int_equal(vast_partition_unpack(&narrow[i], pages), CL_SUCCESS);
            assert_int_equal(vast_partition_unpack(&wide[i], pages), CL_SUCCESS);
            assert_int_equal(narrow[i].first, wide[i].first);
            assert_int_equal(narrow[i].end, wide[i].end);
            assert_memory_equal(narrow[i].set, wide[i].set, pages);
        }
        vast_partitions_free(wide, nw);
        vast_partitions_free(narrow, nn);
        free(f.wg);
    }
}

/* A work-group over half the budget runs alone (no overlap); one over the whole budget ends
 * the plan: CL_OUT_OF_RESOURCES, which work-group and how many pages, no partitions. */
static void test_group_over_budget(void **state)
{
    (void)state;
    struct fake f;
    fake_init(&f, 12, 1 + 100);
    for (size_t g = 0; g < 12; g++)
        fake_touch(&f, g, 1 + g, 1);
    fake_touch(&f, 5, 20, 24); /* 25 pages in 32 frames: alone */
    struct vast_partition *parts = NULL;
    size_t n = 0;
    struct vast_plan_over over = {true, 99, 99};
    assert_int_equal(fake_plan(&f, 32, 4, &parts, &n, &over), CL_SUCCESS);
    fake_check_plan(&f, parts, n, 32);
    assert_false(over.over);
    size_t alone = 0;
    for (size_t i = 0; i < n; i++)
        if (parts[i].first == 5) {
            assert_int_equal(parts[i].end, 6);
            alone++;
        }
    assert_int_equal(alone, 1);
    vast_partitions_free(parts, n);

    fake_touch(&f, 9, 50, 40); /* 41 pages in 32 frames */
    parts = (struct vast_partition *)&f; /* must become NULL */
    n = 7;
    assert_int_equal(fake_plan(&f, 32, 4, &parts, &n, &over), CL_OUT_OF_RESOURCES);
    assert_null(parts);
    assert_int_equal(n, 0);
    assert_true(over.over);
    assert_int_equal(over.group, 9);
    assert_int_equal(over.pages, 41);
    assert_int_equal(fake_plan(&f, 41, 4, &parts, &n, &over), CL_SUCCESS);
    fake_check_plan(&f, parts, n, 41);
    vast_partitions_free(parts, n);
    free(f.wg);
}

/* Eq. 1: work-groups per PAS row = (budget / 32) / (bytes per work-group), rounded up to a
 * power of two, at least 1, at most every work-group. */
static void test_eq1_chunk(void **state)
{
    (void)state;
    /* 1024 pages over 1024 work-groups: 4 KiB each; 256 frames / 32 = 8 pages a row. */
    assert_int_equal(vast_plan_chunk(1 + 1024, 4096, 256, 1024), 8);
    assert_int_equal(vast_plan_chunk(1 + 1024, 4096, 160, 1024), 8); /* 5 rounds up to 8 */
    assert_int_equal(vast_plan_chunk(1 + 1024, 4096, 264, 1024), 16);
    assert_int_equal(vast_plan_chunk(1 + 1024, 4096, 32, 1024), 1);
    assert_int_equal(vast_plan_chunk(1 + 8, 4096, 1 << 20, 100), 128); /* capped at a power of two >= 100 */
    assert_int_equal(vast_plan_chunk(1 + 8, 4096, 1 << 20, 64), 64);
    assert_int_equal(vast_plan_chunk(1, 4096, 256, 1000), 1024); /* no pages: one row for all */
}

/* ---- a work-group over the budget: slices or refusal ---- */

/* A launch whose work-item i touches pages [1 + per * i, 1 + per * (i + 1)): the sets of its
 * real work-groups (r->local[0] work-items each). */
static void fake_items(struct fake *f, const struct vast_paged *r, size_t items, size_t per)
{
    fake_init(f, r->total_groups, 1 + per * items);
    for (size_t i = 0; i < items; i++)
        fake_touch(f, i / r->local[0], 1 + per * i, per);
}

/* vast_partition_plan's answer to a work-group alone over the budget, step by step: while the
 * planner reports one and the work-items may run apart, slice and plan again. */
static cl_int plan_sliced(struct vast_paged *r, size_t items, size_t per, size_t nframes, struct vast_plan_over *over,
                          size_t *nparts)
{
    struct vast_partition *parts = NULL;
    cl_int err;
    for (;;) {
        struct fake f;
        fake_items(&f, r, items, per);
        err = fake_plan(&f, nframes, 1, &parts, nparts, over);
        if (err == CL_SUCCESS)
            fake_check_plan(&f, parts, *nparts, nframes);
        free(f.wg);
        if (err != CL_OUT_OF_RESOURCES || !over->over || !vast_plan_can_slice(r))
            break;
        vast_plan_slice(r);
    }
    vast_partitions_free(parts, *nparts);
    return err;
}

static void test_group_over_budget_sliced_or_refused(void **state)
{
    (void)state;
    struct _cl_icd_dispatch d;
    memset(&d, 0, sizeof d);
    d.clGetKernelWorkGroupInfo = fake_wg_info;
    struct _cl_device_id dev;
    memset(&dev, 0, sizeof dev);
    struct translate_kernel tk;
    memset(&tk, 0, sizeof tk);
    struct vast_launch_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    cmd.sh.dims = 1;
    cmd.sh.global[0] = 64;
    cmd.sh.global[1] = cmd.sh.global[2] = 1;
    struct vast_paged r = {.cmd = &cmd, .d = &d, .dev = &dev, .tk = &tk, .local = {16, 1, 1}, .groups = {4, 1, 1},
                           .total_groups = 4};
    memset(fake_reqd_size, 0, sizeof fake_reqd_size);

    /* 16 work-items of 2 pages: 32 pages in 20 frames; in slices of 8 work-items, 16 pages. */
    struct vast_plan_over over;
    size_t n = 0;
    assert_true(vast_plan_can_slice(&r));
    assert_int_equal(plan_sliced(&r, 64, 2, 20, &over, &n), CL_SUCCESS);
    assert_int_equal(r.local[0], 8);
    assert_int_equal(r.slices, 2);
    assert_int_equal(r.total_groups, 8);
    assert_int_equal(n, 8);

    /* Work-items that meet (barriers, __local), a required work-group size, or one work-item
     * a work-group: no slices, the launch is refused. */
    r = (struct vast_paged){.cmd = &cmd, .d = &d, .dev = &dev, .tk = &tk, .local = {16, 1, 1}, .groups = {4, 1, 1},
                            .total_groups = 4};
    tk.work_group_bound = true;
    assert_false(vast_plan_can_slice(&r));
    assert_int_equal(plan_sliced(&r, 64, 2, 20, &over, &n), CL_OUT_OF_RESOURCES);
    assert_true(over.over);
    assert_int_equal(over.group, 0);
    assert_int_equal(over.pages, 32);
    assert_int_equal(r.slices, 0);
    tk.work_group_bound = false;
    fake_reqd_size[0] = 16;
    assert_false(vast_plan_can_slice(&r));
    fake_reqd_size[0] = 0;
    /* One work-item alone over the budget: sliced down to single work-items, then refused. */
    assert_int_equal(plan_sliced(&r, 64, 24, 20, &over, &n), CL_OUT_OF_RESOURCES);
    assert_int_equal(r.local[0], 1);
    assert_int_equal(r.slices, 16);
    assert_int_equal(r.total_groups, 64);
    assert_int_equal(over.pages, 24);
    assert_false(vast_plan_can_slice(&r));

    /* Two dimensions: the largest local dimension shrinks by its smallest prime factor; each
     * dimension's factor is kept in 21 bits of vast_slab.s3. */
    cmd.sh.dims = 2;
    cmd.sh.global[0] = 48;
    cmd.sh.global[1] = 8;
    r = (struct vast_paged){.cmd = &cmd, .d = &d, .dev = &dev, .tk = &tk, .local = {12, 4, 1}, .groups = {4, 2, 1},
                            .total_groups = 8};
    vast_plan_slice(&r);
    assert_int_equal(r.local[0], 6);
    vast_plan_slice(&r);
    assert_int_equal(r.local[0], 3);
    vast_plan_slice(&r);
    assert_int_equal(r.local[1], 2);
    assert_int_equal(r.slices, 4 | (cl_ulong)2 << 21);
    assert_int_equal(r.groups[0], 16);
    assert_int_equal(r.groups[1], 4);
    assert_int_equal(r.total_groups, 64);
    vast_plan_slice(&r); /* 3 x 2: the 3 goes, by 3 */
    assert_int_equal(r.local[0], 1);
    assert_int_equal(r.local[1], 2);
    assert_int_equal(r.slices, 12 | (cl_ulong)2 << 21);
    assert_int_equal(r.total_groups, 48 * 4);
}

/* ---- sticky pages ---- */

static void test_faulted_pages_join_later_partitions(void **state)
{
    (void)state;
    struct vast_pool pool = {.nframes = 40};
    struct vast_paged r = {.pool = &pool, .pages = 100};
    r.sticky = calloc(r.pages, 1);
    uint8_t *add = calloc(r.pages, 1);
    assert_non_null(r.sticky);
    assert_non_null(add);
    memset(add + 10, 1, 6); /* 6 pages faulted */
    vast_plan_note_faults(&r, add);
    assert_int_equal(r.nsticky, 6);
    vast_plan_note_faults(&r, add); /* the same pages again: no more */
    assert_int_equal(r.nsticky, 6);
    memset(add, 0, r.pages);
    memset(add + 50, 1, 20);
    vast_plan_note_faults(&r, add); /* at most a quarter of the budget is sticky */
    assert_int_equal(r.nsticky, 10);
    assert_int_equal(fake_popcount(r.sticky, r.pages), 10);

    struct vast_partition p = {.first = 3, .end = 4, .set = calloc(r.pages, 1)};
    assert_non_null(p.set);
    memset(p.set + 10, 1, 2); /* two of the sticky pages are its own already */
    memset(p.set + 80, 1, 3);
    p.count = 5;
    vast_plan_add_sticky(&r, &p);
    assert_int_equal(p.count, 13);
    assert_int_equal(p.sticky, 8);
    for (size_t vp = 0; vp < r.pages; vp++)
        if (r.sticky[vp])
            assert_true(p.set[vp]);

    /* No room beside them (count + sticky over 3/4 of the budget), or own pages only: none. */
    struct vast_partition full = {.set = calloc(r.pages, 1), .count = 21};
    struct vast_partition own = {.set = calloc(r.pages, 1), .count = 1, .own_only = true};
    vast_plan_add_sticky(&r, &full);
    vast_plan_add_sticky(&r, &own);
    assert_int_equal(full.count, 21);
    assert_int_equal(own.count, 1);
    assert_int_equal(fake_popcount(full.set, r.pages) + fake_popcount(own.set, r.pages) + full.sticky + own.sticky, 0);
    struct vast_partition fits = {.set = calloc(r.pages, 1), .count = 20};
    vast_plan_add_sticky(&r, &fits);
    assert_int_equal(fits.sticky, 10);
    free(fits.set);
    free(full.set);
    free(own.set);
    free(p.set);
    free(add);
    free(r.sticky);
}

/* ---- the kept plan of a kernel ---- */

struct launch {
    struct vast_launch_cmd cmd;
    struct vast_arg args[3];
    cl_mem bufs[2];
    int scalar;
    struct vast_pool pool;
    struct vast_paged r;
    uint64_t arg_va[3];
};

/* A launch of (global a, int scalar, global b): a at virtual page 1, b behind it. */
static void launch_init(struct launch *l, size_t a_pages, size_t b_pages, int scalar)
{
    memset(l, 0, sizeof *l);
    static struct _cl_mem mems[4];
    l->bufs[0] = &mems[0];
    l->bufs[1] = &mems[1];
    l->scalar = scalar;
    l->args[0] = (struct vast_arg){.set = true, .size = sizeof(cl_mem), .value = &l->bufs[0], .vbuf = l->bufs[0]};
    l->args[1] = (struct vast_arg){.set = true, .size = sizeof(int), .value = &l->scalar};
    l->args[2] = (struct vast_arg){.set = true, .size = sizeof(cl_mem), .value = &l->bufs[1], .vbuf = l->bufs[1]};
    /* field by field: the key holds the shape's bytes, padding included (zero, as calloc'ed) */
    l->cmd.sh.dims = 1;
    l->cmd.sh.global[0] = 4096;
    l->cmd.sh.global[1] = l->cmd.sh.global[2] = 1;
    l->cmd.sh.local[0] = 64;
    l->cmd.sh.local[1] = l->cmd.sh.local[2] = 1;
    l->cmd.sh.local_given = true;
    l->cmd.num_args = 3;
    l->cmd.args = l->args;
    l->pool = (struct vast_pool){.nframes = 64, .page_size = 4096, .page_shift = 12};
    l->arg_va[0] = 4096;
    l->arg_va[2] = (1 + a_pages) * 4096;
    l->r = (struct vast_paged){.cmd = &l->cmd, .pool = &l->pool, .pages = 1 + a_pages + b_pages, .arg_va = l->arg_va,
                               .local = {64, 1, 1}};
}

static struct vast_partition *two_parts(size_t pages)
{
    struct vast_partition *p = calloc(2, sizeof *p);
    assert_non_null(p);
    for (int i = 0; i < 2; i++) {
        p[i] = (struct vast_partition){.first = 32 * i, .end = 32 * (i + 1), .set = calloc(pages, 1), .count = 1};
        assert_non_null(p[i].set);
        p[i].set[1 + i] = 1;
    }
    return p;
}

/* A copy of the kept plan for launch l, or NULL; its sets_exact in kept_exact. */
static bool kept_exact;
static struct vast_partition *lookup(struct _cl_kernel *k, const struct launch *l, size_t *n)
{
    size_t len = 0;
    uint8_t *key = vast_plan_key(&l->r, &len);
    assert_non_null(key);
    struct vast_partition *parts = vast_plan_cache_get(k, key, len, l->r.pages, n, &kept_exact);
    free(key);
    return parts;
}

static void test_plan_reuse(void **state)
{
    (void)state;
    struct _cl_kernel k;
    memset(&k, 0, sizeof k);
    pthread_mutex_init(&k.obj.lock, NULL);
    struct launch l, m;
    launch_init(&l, 10, 20, 7);
    size_t n = 0, len = 0;
    assert_null(lookup(&k, &l, &n));
    struct vast_partition *made = two_parts(l.r.pages);
    uint8_t *key = vast_plan_key(&l.r, &len);
    vast_plan_cache_put(&k, key, len, made, 2, l.r.pages, true);

    /* The same launch on other buffers of the same sizes (the application swapped them, or
     * released and made them again): the plan is reused, as a copy. */
    launch_init(&m, 10, 20, 7);
    static struct _cl_mem others[2];
    m.bufs[0] = &others[0];
    m.bufs[1] = &others[1];
    kept_exact = false;
    struct vast_partition *got = lookup(&k, &m, &n);
    assert_non_null(got);
    assert_int_equal(n, 2);
    assert_true(kept_exact); /* kept with the plan: a reused plan drops no snapshot it needs */
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(got[i].first, made[i].first);
        assert_int_equal(got[i].end, made[i].end);
        assert_int_equal(got[i].count, made[i].count);
        assert_ptr_not_equal(got[i].set, made[i].set);
        assert_memory_equal(got[i].set, made[i].set, l.r.pages);
    }
    vast_partitions_free(got, n);
    vast_partitions_free(made, 2);

    /* Every change the page sets or the plan depend on: no reuse. */
    launch_init(&m, 11, 20, 7); /* the first buffer grew a page: the second moved */
    assert_null(lookup(&k, &m, &n));
    launch_init(&m, 10, 21, 7); /* the second grew: more pages */
    assert_null(lookup(&k, &m, &n));
    launch_init(&m, 10, 20, 7);
    m.arg_va[2] += 256; /* a sub-buffer at another offset within its page */
    assert_null(lookup(&k, &m, &n));
    launch_init(&m, 10, 20, 8); /* a scalar argument */
    assert_null(lookup(&k, &m, &n));
    launch_init(&m, 10, 20, 7);
    m.pool.nframes = 63; /* the budget */
    assert_null(lookup(&k, &m, &n));
    launch_init(&m, 10, 20, 7);
    m.pool.page_shift = 13; /* the page size */
    assert_null(lookup(&k, &m, &n));
    launch_init(&m, 10, 20, 7);
    m.cmd.sh.global[0] = 8192; /* the NDRange */
    assert_null(lookup(&k, &m, &n));
    launch_init(&m, 10, 20, 7);
    m.r.local[0] = 32; /* the local size the launch runs with (slices) */
    assert_null(lookup(&k, &m, &n));
    launch_init(&m, 10, 20, 7);
    m.args[1].size = sizeof(long); /* the scalar's size */
    long wide = 7;
    m.args[1].value = &wide;
    assert_null(lookup(&k, &m, &n));

    /* A new plan replaces the kept one; forgetting it drops it. */
    launch_init(&m, 10, 20, 8);
    made = two_parts(m.r.pages);
    key = vast_plan_key(&m.r, &len);
    vast_plan_cache_put(&k, key, len, made, 1, m.r.pages, false);
    vast_partitions_free(made, 2);
    assert_null(lookup(&k, &l, &n));
    got = lookup(&k, &m, &n);
    assert_non_null(got);
    assert_int_equal(n, 1);
    assert_false(kept_exact);
    vast_partitions_free(got, n);
    vast_partition_forget(&k);
    assert_null(k.plans);
    assert_null(lookup(&k, &m, &n));
    pthread_mutex_destroy(&k.obj.lock);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_half_budget),
        cmocka_unit_test(test_shared_pages_count_once),
        cmocka_unit_test(test_plan_footprint),
        cmocka_unit_test(test_too_coarse_refined),
        cmocka_unit_test(test_random_plans_and_windows),
        cmocka_unit_test(test_group_over_budget),
        cmocka_unit_test(test_group_over_budget_sliced_or_refused),
        cmocka_unit_test(test_eq1_chunk),
        cmocka_unit_test(test_faulted_pages_join_later_partitions),
        cmocka_unit_test(test_plan_reuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
