/*
 * test_launch_plan: a launch's whole plan (interpose/partition.c, vast_partition_plan) over
 * made-up page sets behind a fake struct vast_pas_ops (r->pas), with no device: the kept plan
 * of a kernel, a work-group over the budget sliced or refused, slices up front for
 * data-dependent loads (kept), exact sets after host supersets, grid-stride loops in iteration
 * ranges (stride.c). The refusals print their "vast: error:" lines, as they do in a launch.
 */
#include "fake_pas.h"

#include "pagecache.h"
#include "translate.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---- a launch's plan (vast_partition_plan) over made-up page sets: r->pas ---- */

/* A 1-D launch: work-item i touches `per` pages from 1 + per * i; or, with loop_iters, a
 * grid-stride loop whose iteration k touches its own pages in every work-item: one each for
 * the first loop_small iterations, loop_pages each after them. Host rows (host) also hold
 * pages [1, 1 + superset). */
struct fake_launch {
    size_t per, superset, loop_pages, loop_iters, loop_small;
    bool host;
    int sources, exacts, closes, iters;
    struct fake f;
    uint8_t *rows;
};
static struct fake_launch *fl;

/* The first page of loop iteration k (pages of iterations [0, k) come before it). */
static size_t iter_page(uint64_t k)
{
    return 1 + (k < fl->loop_small ? k : fl->loop_small + (k - fl->loop_small) * fl->loop_pages);
}

static cl_int fl_window(void *ctx, size_t first, size_t end, size_t w, size_t base, size_t nrows, uint8_t *dst)
{
    (void)ctx;
    fake_window(&fl->f, first, end, w, base, nrows, dst);
    for (size_t k = 0; fl->host && k < nrows; k++)
        memset(dst + k * fl->f.pages + 1, 1, fl->superset);
    return CL_SUCCESS;
}

static cl_int fl_source(struct vast_paged *r, struct vast_pas_source *src)
{
    fl->sources++;
    free(fl->f.wg);
    free(fl->rows);
    fake_init(&fl->f, r->total_groups, r->pages);
    for (size_t g = 0; g < r->total_groups; g++)
        if (fl->loop_iters != 0)
            fake_touch(&fl->f, g, 1, r->pages - 1);
        else
            fake_touch(&fl->f, g, 1 + fl->per * g * r->local[0], fl->per * r->local[0]);
    fl->f.max_rows = 8;
    fl->rows = malloc(fl->f.max_rows * r->pages);
    assert_non_null(fl->rows);
    *src = (struct vast_pas_source){r->pages, fl->f.max_rows, fl->rows, fl_window, NULL};
    return CL_SUCCESS;
}

static bool fl_host(const struct vast_paged *r)
{
    (void)r;
    return fl->host;
}

static void fl_exact(struct vast_paged *r)
{
    (void)r;
    fl->host = false;
    fl->exacts++;
}

static cl_int fl_iters(struct vast_paged *r, size_t first, size_t end, uint64_t it0, uint64_t it1, uint8_t *set,
                       bool *more)
{
    assert_true(first < end && end <= r->total_groups);
    fl->iters++;
    uint64_t hi = it1 == 0 || it1 > fl->loop_iters ? fl->loop_iters : it1;
    if (it0 < hi)
        memset(set + iter_page(it0), 1, iter_page(hi) - iter_page(it0));
    if (more != NULL)
        *more = it1 != 0 && it1 < fl->loop_iters;
    return CL_SUCCESS;
}

static void fl_close(struct vast_paged *r)
{
    (void)r;
    fl->closes++;
}

static const struct vast_pas_ops fake_pas = {fl_source, fl_host, fl_exact, fl_iters, fl_close};

/* Everything vast_partition_plan reads of a launch; one per launch, like launch.c's. */
struct plan_env {
    struct _cl_icd_dispatch d;
    struct _cl_device_id dev;
    struct translate_kernel tk;
    struct _cl_kernel k;
    struct vast_launch_cmd cmd;
    struct vast_pool pool;
};

static void env_init(struct plan_env *e)
{
    memset(e, 0, sizeof *e);
    e->d.clGetKernelWorkGroupInfo = fake_wg_info;
    strcpy(e->k.name, "fake");
    pthread_mutex_init(&e->k.obj.lock, NULL);
    memset(fake_reqd_size, 0, sizeof fake_reqd_size);
}

static void env_free(struct plan_env *e)
{
    vast_partition_forget(&e->k);
    pthread_mutex_destroy(&e->k.obj.lock);
}

/* A launch of `items` work-items in work-groups of `local` over `pages` virtual pages. */
static struct vast_paged env_launch(struct plan_env *e, size_t items, size_t local, size_t pages, size_t nframes)
{
    e->cmd.kernel = &e->k;
    e->cmd.sh.dims = 1;
    e->cmd.sh.global[0] = items;
    e->cmd.sh.global[1] = e->cmd.sh.global[2] = 1;
    e->cmd.sh.local[0] = local;
    e->cmd.sh.local[1] = e->cmd.sh.local[2] = 1;
    e->cmd.sh.local_given = true;
    e->pool = (struct vast_pool){.nframes = nframes, .page_size = 4096, .page_shift = 12};
    return (struct vast_paged){.cmd = &e->cmd, .d = &e->d, .dev = &e->dev, .pool = &e->pool, .tk = &e->tk,
                               .pas = &fake_pas, .pages = pages, .local = {local, 1, 1},
                               .groups = {items / local, 1, 1}, .total_groups = items / local};
}

static void fl_free(void)
{
    free(fl->f.wg);
    free(fl->rows);
    fl->f.wg = NULL;
    fl->rows = NULL;
}

/* A plan is kept and reused by the next equal launch without page sets (vast_plan_kept says
 * so beforehand, as admission asks); a launch with another budget plans again. */
static void test_launch_plan_kept(void **state)
{
    (void)state;
    struct plan_env e;
    env_init(&e);
    struct fake_launch f = {.per = 1};
    fl = &f;
    struct vast_partition *parts = NULL, *again = NULL;
    size_t n = 0, n2 = 0;
    struct vast_paged r = env_launch(&e, 256, 16, 1 + 256, 64);
    assert_false(vast_plan_kept(&r));
    assert_int_equal(vast_partition_plan(&r, &parts, &n), CL_SUCCESS);
    fake_check_plan(&f.f, parts, n, 64);
    assert_int_equal(n, 8);
    assert_int_equal(f.sources, 1);
    r = env_launch(&e, 256, 16, 1 + 256, 64);
    assert_true(vast_plan_kept(&r));
    assert_int_equal(vast_partition_plan(&r, &again, &n2), CL_SUCCESS);
    assert_int_equal(f.sources, 1);
    assert_int_equal(n2, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(vast_partition_unpack(&again[i], r.pages), CL_SUCCESS);
        assert_int_equal(vast_partition_unpack(&parts[i], r.pages), CL_SUCCESS);
        assert_int_equal(again[i].first, parts[i].first);
        assert_int_equal(again[i].end, parts[i].end);
        assert_memory_equal(again[i].set, parts[i].set, r.pages);
    }
    vast_partitions_free(again, n2);
    r = env_launch(&e, 256, 16, 1 + 256, 96);
    assert_false(vast_plan_kept(&r));
    assert_int_equal(vast_partition_plan(&r, &again, &n2), CL_SUCCESS);
    assert_int_equal(f.sources, 2);
    fake_check_plan(&f.f, again, n2, 96);
    vast_partitions_free(again, n2);
    vast_partitions_free(parts, n);
    fl_free();
    env_free(&e);
}

/* A work-group alone over the budget whose work-items are independent runs in slices; the
 * sliced plan is not kept (its key holds the application's local size). Work-items that meet
 * are refused, with nothing planned. */
static void test_launch_sliced_or_refused(void **state)
{
    (void)state;
    struct plan_env e;
    env_init(&e);
    struct fake_launch f = {.per = 2};
    fl = &f;
    struct vast_partition *parts = NULL;
    size_t n = 0;
    struct vast_paged r = env_launch(&e, 64, 16, 1 + 128, 20);
    assert_int_equal(vast_partition_plan(&r, &parts, &n), CL_SUCCESS);
    assert_int_equal(r.slices, 2);
    assert_int_equal(r.local[0], 8);
    assert_int_equal(f.sources, 2);
    assert_int_equal(f.closes, 1);
    fake_check_plan(&f.f, parts, n, 20);
    assert_int_equal(n, 8);
    vast_partitions_free(parts, n);
    r = env_launch(&e, 64, 16, 1 + 128, 20);
    assert_int_equal(vast_partition_plan(&r, &parts, &n), CL_SUCCESS);
    assert_int_equal(f.sources, 4);
    assert_int_equal(r.slices, 2);
    vast_partitions_free(parts, n);

    e.tk.work_group_bound = true;
    r = env_launch(&e, 64, 16, 1 + 128, 20);
    parts = (struct vast_partition *)&f;
    assert_int_equal(vast_partition_plan(&r, &parts, &n), CL_OUT_OF_RESOURCES);
    assert_null(parts);
    assert_int_equal(n, 0);
    assert_int_equal(r.slices, 0);
    assert_int_equal(f.closes, 2);
    fl_free();
    env_free(&e);
}

/* Data-dependent loads: work-groups of more work-items than half the frames run in slices
 * from the start, and that plan is kept. */
static void test_launch_data_dependent_slices_kept(void **state)
{
    (void)state;
    struct plan_env e;
    env_init(&e);
    e.tk.data_dependent_addresses = true;
    struct fake_launch f = {.per = 1};
    fl = &f;
    struct vast_partition *parts = NULL;
    size_t n = 0;
    struct vast_paged r = env_launch(&e, 64, 16, 1 + 64, 20);
    assert_int_equal(vast_partition_plan(&r, &parts, &n), CL_SUCCESS);
    assert_int_equal(r.local[0], 8);
    assert_int_equal(r.slices, 2);
    fake_check_plan(&f.f, parts, n, 20);
    vast_partitions_free(parts, n);
    r = env_launch(&e, 64, 16, 1 + 64, 20);
    assert_int_equal(vast_partition_plan(&r, &parts, &n), CL_SUCCESS);
    assert_int_equal(f.sources, 1);
    assert_int_equal(r.slices, 2);
    vast_partitions_free(parts, n);
    fl_free();
    env_free(&e);
}

/* Host page sets are supersets: when one puts a work-group over the budget, the plan is made
 * again from exact sets; a plan made from host sets is counted as such. */
static void test_launch_host_supersets(void **state)
{
    (void)state;
    struct plan_env e;
    env_init(&e);
    struct fake_launch f = {.per = 1, .superset = 30, .host = true};
    fl = &f;
    struct vast_partition *parts = NULL;
    size_t n = 0;
    struct vast_paged r = env_launch(&e, 256, 16, 1 + 256, 40);
    assert_int_equal(vast_partition_plan(&r, &parts, &n), CL_SUCCESS);
    assert_int_equal(f.exacts, 1);
    assert_int_equal(r.c.host_plans, 0);
    assert_int_equal(r.slices, 0);
    fake_check_plan(&f.f, parts, n, 40);
    vast_partitions_free(parts, n);
    f.host = true;
    f.superset = 4;
    r = env_launch(&e, 256, 16, 1 + 256, 41);
    assert_int_equal(vast_partition_plan(&r, &parts, &n), CL_SUCCESS);
    assert_int_equal(f.exacts, 1);
    assert_int_equal(r.c.host_plans, 1);
    vast_partitions_free(parts, n);
    fl_free();
    env_free(&e);
}

/* A work-group over the budget whose grid-stride loops may run in iteration ranges: every
 * work-group, iterations in ranges whose pages fit (stride.c); one iteration over the budget
 * is refused. */
static void test_launch_iteration_ranges(void **state)
{
    (void)state;
    struct plan_env e;
    env_init(&e);
    e.tk.iteration_ranges = true;
    struct fake_launch f = {.loop_pages = 2, .loop_iters = 50};
    fl = &f;
    struct vast_partition *parts = NULL;
    size_t n = 0;
    struct vast_paged r = env_launch(&e, 64, 16, 1 + 100, 16);
    assert_int_equal(vast_partition_plan(&r, &parts, &n), CL_SUCCESS);
    assert_true(f.iters > 0);
    assert_true(n >= 50 * 2 / 16);
    uint64_t next = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(parts[i].first, 0);
        assert_int_equal(parts[i].end, 4);
        assert_int_equal(parts[i].iter_first, next);
        assert_true(parts[i].iter_end > next);
        next = parts[i].iter_end;
        assert_true(parts[i].count <= 16);
        uint64_t hi = next < 50 ? next : 50;
        assert_int_equal(parts[i].count, iter_page(hi) - iter_page(parts[i].iter_first));
        assert_int_equal(vast_partition_unpack(&parts[i], r.pages), CL_SUCCESS);
        assert_int_equal(fake_popcount(parts[i].set, r.pages), parts[i].count);
        if (i > 0)
            assert_true(parts[i - 1].count + parts[i].count <= 16);
    }
    assert_true(next >= 50);
    vast_partitions_free(parts, n);
    fl_free();

    /* Iterations of different sizes: a range is kept only when it fits with its successor's
     * additions (two small iterations, not four that end in large ones). */
    f = (struct fake_launch){.loop_small = 2, .loop_pages = 5, .loop_iters = 20};
    vast_partition_forget(&e.k);
    r = env_launch(&e, 64, 16, iter_page(20), 16);
    assert_int_equal(vast_partition_plan(&r, &parts, &n), CL_SUCCESS);
    assert_int_equal(parts[0].iter_end, 2);
    for (size_t i = 1; i < n; i++)
        assert_true(parts[i - 1].count + parts[i].count <= 16);
    assert_true(parts[n - 1].iter_end >= 20);
    vast_partitions_free(parts, n);
    fl_free();

    f = (struct fake_launch){.loop_pages = 20, .loop_iters = 5};
    vast_partition_forget(&e.k); /* another kernel, as far as the kept plan knows */
    r = env_launch(&e, 64, 16, 1 + 100, 16);
    assert_int_equal(vast_partition_plan(&r, &parts, &n), CL_OUT_OF_RESOURCES);
    assert_null(parts);
    assert_int_equal(n, 0);
    fl_free();
    env_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_launch_plan_kept),
        cmocka_unit_test(test_launch_sliced_or_refused),
        cmocka_unit_test(test_launch_data_dependent_slices_kept),
        cmocka_unit_test(test_launch_host_supersets),
        cmocka_unit_test(test_launch_iteration_ranges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
