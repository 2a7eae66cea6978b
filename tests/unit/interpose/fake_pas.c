/*
 * fake_pas.c: made-up page sets for the planner's unit tests (see fake_pas.h).
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

cl_int fake_window(void *ctx, size_t first, size_t end, size_t w, size_t base, size_t nrows, uint8_t *dst)
{
    struct fake *f = ctx;
    assert_true(nrows >= 1 && nrows <= f->max_rows);
    assert_true(first < end && end <= f->groups);
    f->windows++;
    f->min_w = w < f->min_w ? w : f->min_w;
    memset(dst, 0, nrows * f->pages);
    for (size_t k = 0; k < nrows; k++) {
        size_t a = (base + k) * w > first ? (base + k) * w : first;
        size_t b = (base + k + 1) * w < end ? (base + k + 1) * w : end;
        for (size_t g = a; g < b; g++)
            for (size_t p = 0; p < f->pages; p++)
                dst[k * f->pages + p] |= f->wg[g * f->pages + p];
    }
    return CL_SUCCESS;
}

void fake_init(struct fake *f, size_t groups, size_t pages)
{
    *f = (struct fake){.groups = groups, .pages = pages, .min_w = SIZE_MAX, .max_rows = 64};
    f->wg = calloc(groups * pages, 1);
    assert_non_null(f->wg);
}

void fake_touch(struct fake *f, size_t g, size_t p, size_t n)
{
    assert_true(p + n <= f->pages);
    memset(f->wg + g * f->pages + p, 1, n);
}

static cl_int plan(struct fake *f, uint8_t *rows, size_t nframes, size_t w, struct vast_partition **parts, size_t *n,
                   struct vast_plan_over *over)
{
    struct vast_pas_source src = {f->pages, f->max_rows, rows, fake_window, f};
    return vast_plan_groups(&src, f->groups, nframes, w, parts, n, over);
}

cl_int fake_plan(struct fake *f, size_t nframes, size_t w, struct vast_partition **parts, size_t *n,
                     struct vast_plan_over *over)
{
    uint8_t *rows = malloc(f->max_rows * f->pages);
    assert_non_null(rows);
    cl_int err = plan(f, rows, nframes, w, parts, n, over);
    free(rows);
    return err;
}

size_t fake_popcount(const uint8_t *set, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += set[i] != 0;
    return k;
}

size_t fake_union_count(const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += a[i] || b[i];
    return k;
}

void fake_check_plan(const struct fake *f, struct vast_partition *parts, size_t n, size_t nframes)
{
    assert_true(n >= 1);
    assert_int_equal(parts[0].first, 0);
    assert_int_equal(parts[n - 1].end, f->groups);
    uint8_t *want = malloc(f->pages);
    assert_non_null(want);
    for (size_t i = 0; i < n; i++) {
        /* a plan keeps its sets packed (its memory grows with pages, not partitions x pages) */
        assert_null(parts[i].set);
        assert_non_null(parts[i].runs);
        assert_true(parts[i].nruns <= parts[i].count);
    }
    for (size_t i = 0; i < n; i++)
        assert_int_equal(vast_partition_unpack(&parts[i], f->pages), CL_SUCCESS);
    for (size_t i = 0; i < n; i++) {
        assert_true(parts[i].first < parts[i].end);
        if (i > 0)
            assert_int_equal(parts[i].first, parts[i - 1].end);
        memset(want, 0, f->pages);
        for (size_t g = parts[i].first; g < parts[i].end; g++)
            for (size_t p = 0; p < f->pages; p++)
                want[p] |= f->wg[g * f->pages + p];
        assert_memory_equal(parts[i].set, want, f->pages);
        assert_int_equal(parts[i].count, fake_popcount(want, f->pages));
        assert_true(parts[i].count <= nframes);
        assert_int_equal(parts[i].sticky, 0);
        assert_false(parts[i].own_only);
        bool alone = parts[i].end - parts[i].first == 1 || (i > 0 && parts[i - 1].end - parts[i - 1].first == 1);
        if (i > 0 && !alone)
            assert_true(fake_union_count(parts[i - 1].set, parts[i].set, f->pages) <= nframes);
    }
    free(want);
}

size_t fake_reqd_size[3];
cl_int CL_API_CALL fake_wg_info(cl_kernel k, cl_device_id dev, cl_kernel_work_group_info param, size_t size,
                                void *value, size_t *size_ret)
{
    (void)k, (void)dev, (void)size_ret;
    assert_int_equal(param, CL_KERNEL_COMPILE_WORK_GROUP_SIZE);
    assert_int_equal(size, sizeof fake_reqd_size);
    memcpy(value, fake_reqd_size, sizeof fake_reqd_size);
    return CL_SUCCESS;
}
