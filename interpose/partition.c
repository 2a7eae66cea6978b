/*
 * partition.c: planning a partitioned launch (VAST paper section 4.1 and Algorithm 1).
 *
 * The inspector kernel runs over the work-groups (no data moves) and fills page accessed
 * sets: one row per chunk of consecutive work-groups, one byte per virtual page. The chunk
 * size comes from the paper's Eq. 1, rounded to a power of two: each chunk is expected to
 * touch about 1/32 of the budget. The rows are OR-reduced in work-group order into partitions
 * whose union fits `cap` pages. A chunk that alone exceeds cap is "too coarse": its work-groups
 * are inspected again in chunks 16 times smaller, down to single work-groups; a work-group
 * that alone exceeds cap cannot run and the launch fails before any kernel ran, so the
 * application's buffers are untouched.
 *
 * The inspector runs over windows of at most PAS_WINDOW_BYTES of rows (translate.h: the
 * window's first chunk is vast_pascfg.s2), so the PAS memory is bounded whatever the number
 * of work-groups and pages. The whole plan is made before the first partition runs.
 */
#include "launch_int.h"

#include "api.h"
#include "check.h"
#include "pagecache.h"
#include "trace.h"
#include "translate.h"
#include "variant.h"
#include "vbuf.h"

#include <stdlib.h>
#include <string.h>

#define PAS_WINDOW_BYTES ((size_t)32 << 20)
#define INSPECTOR_STEP_BUDGET ((cl_ulong)1 << 16)
#define REFINE 16 /* a too coarse chunk is inspected again in chunks this many times smaller */

struct vast_inspect {
    struct vast_paged *r;
    cl_kernel ik;
    cl_mem pas, status;
    size_t max_rows;
    uint8_t *rows; /* host copy of the last window */
};

struct plan {
    struct vast_partition *parts;
    size_t n, capacity;
    size_t cap;
    bool last_try; /* a failure is final (logged as an error), else the caller tries a larger cap */
};

static cl_int inspect_open(struct vast_inspect *in, struct vast_paged *r)
{
    memset(in, 0, sizeof *in);
    in->r = r;
    in->max_rows = PAS_WINDOW_BYTES / r->pages;
    if (in->max_rows == 0)
        in->max_rows = 1;
    if (in->max_rows > r->total_groups)
        in->max_rows = r->total_groups;
    if (in->max_rows < 2)
        in->max_rows = 2; /* vast_partition_inspect reads two rows */
    in->rows = malloc(in->max_rows * r->pages);
    VAST_RETURN_IF(in->rows == NULL, CL_OUT_OF_HOST_MEMORY, "PAS window");
    uint64_t t0 = vast_now_ns();
    in->ik = vast_variant_take(r->cmd->kernel, VAST_VARIANT_INSPECTOR, r->dev); /* built on first use */
    r->c.build_ns += vast_now_ns() - t0;
    VAST_RETURN_IF(in->ik == NULL, CL_OUT_OF_RESOURCES, "kernel '%s' has no inspector", r->cmd->kernel->name);
    cl_context ctx = r->cmd->queue->context->backend->shared;
    cl_int err;
    in->pas = r->d->clCreateBuffer(ctx, CL_MEM_READ_WRITE, in->max_rows * r->pages, NULL, &err);
    if (in->pas != NULL)
        in->status = r->d->clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4 * sizeof(cl_uint), NULL, &err);
    if (err == CL_SUCCESS)
        err = vast_paged_set_args(r, in->ik);
    cl_ulong4 gsize, goff;
    vast_paged_geometry(r, &gsize, &goff);
    cl_uint n = r->cmd->num_args;
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(in->ik, n, sizeof(cl_mem), &in->pas);
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(in->ik, n + 1, sizeof(cl_mem), &r->scratch);
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(in->ik, n + 2, sizeof(cl_mem), &in->status);
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(in->ik, n + 3, sizeof gsize, &gsize);
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(in->ik, n + 4, sizeof goff, &goff);
    return err;
}

static void inspect_close(struct vast_inspect *in)
{
    if (in->pas != NULL)
        in->r->d->clReleaseMemObject(in->pas);
    if (in->status != NULL)
        in->r->d->clReleaseMemObject(in->status);
    vast_variant_give(in->r->cmd->kernel, VAST_VARIANT_INSPECTOR, in->ik);
    free(in->rows);
}

/* Inspect work-groups [first, end) in chunks of w, rows from chunk `base` (nrows of them). */
static cl_int inspect_window(struct vast_inspect *in, size_t first, size_t end, size_t w, size_t base, size_t nrows)
{
    struct vast_paged *r = in->r;
    uint64_t t0 = vast_now_ns();
    static const cl_uchar zero = 0;
    static const cl_uint zeros[4] = {0, 0, 0, 0};
    cl_uint status[4] = {0, 0, 0, 0};
    cl_ulong4 cfg = {{r->pool->page_shift, r->pages, first, end}};
    cl_ulong4 pascfg = {{w, INSPECTOR_STEP_BUDGET, base, 0}};
    size_t off[3], gl[3], bytes = nrows * r->pages;
    vast_paged_slab(r, first, end, off, gl);
    cl_uint n = r->cmd->num_args;
    cl_int err = r->d->clEnqueueFillBuffer(r->rq, in->pas, &zero, 1, 0, bytes, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = r->d->clEnqueueWriteBuffer(r->rq, in->status, CL_FALSE, 0, sizeof zeros, zeros, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(in->ik, n + 5, sizeof cfg, &cfg);
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(in->ik, n + 6, sizeof pascfg, &pascfg);
    if (err == CL_SUCCESS)
        err = r->d->clEnqueueNDRangeKernel(r->rq, in->ik, r->cmd->sh.dims, off, gl, r->local, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = r->d->clEnqueueReadBuffer(r->rq, in->status, CL_FALSE, 0, sizeof status, status, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = r->d->clEnqueueReadBuffer(r->rq, in->pas, CL_TRUE, 0, bytes, in->rows, 0, NULL, NULL);
    if (err == CL_SUCCESS && status[0] != 0)
        vast_info("kernel '%s': the inspector's loop budget ran out; faults will complete its page sets",
                  r->cmd->kernel->name);
    uint64_t t1 = vast_now_ns();
    r->c.inspector_ns += t1 - t0;
    vast_trace_span(VAST_TRACK_INSPECTOR, r->cmd->kernel->name, t0, t1, "inspector window");
    return err;
}

static cl_int emit(struct plan *pl, size_t first, size_t end, uint8_t *set, size_t count)
{
    if (pl->n == pl->capacity) {
        size_t cap = pl->capacity ? pl->capacity * 2 : 16;
        struct vast_partition *grown = realloc(pl->parts, cap * sizeof *grown);
        VAST_RETURN_IF(grown == NULL, CL_OUT_OF_HOST_MEMORY, "partitions");
        pl->parts = grown;
        pl->capacity = cap;
    }
    pl->parts[pl->n++] = (struct vast_partition){first, end, set, count};
    return CL_SUCCESS;
}

/* Pages of row not yet in set. */
static size_t count_new(const uint8_t *row, const uint8_t *set, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += row[i] && !set[i];
    return k;
}

/* Algorithm 1 over work-groups [first, end) (first a multiple of w). */
static cl_int plan_range(struct vast_inspect *in, struct plan *pl, size_t first, size_t end, size_t w)
{
    struct vast_paged *r = in->r;
    size_t pages = r->pages, c_end = (end + w - 1) / w, win_lo = 0, win_n = 0;
    uint8_t *set = calloc(pages, 1);
    size_t count = 0, open = first;
    cl_int err = set ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
    for (size_t c = first / w; c < c_end && err == CL_SUCCESS; c++) {
        size_t g0 = c * w > first ? c * w : first, g1 = (c + 1) * w < end ? (c + 1) * w : end;
        if (c < win_lo || c >= win_lo + win_n) {
            win_lo = c;
            win_n = c_end - c < in->max_rows ? c_end - c : in->max_rows;
            size_t last = (win_lo + win_n) * w < end ? (win_lo + win_n) * w : end;
            err = inspect_window(in, g0, last, w, win_lo, win_n);
            if (err != CL_SUCCESS)
                break;
        }
        const uint8_t *row = in->rows + (c - win_lo) * pages;
        size_t add = count_new(row, set, pages);
        if (count + add > pl->cap && open < g0) { /* close the open partition before this chunk */
            err = emit(pl, open, g0, set, count);
            set = err == CL_SUCCESS ? calloc(pages, 1) : NULL;
            if (set == NULL) {
                err = err == CL_SUCCESS ? CL_OUT_OF_HOST_MEMORY : err;
                break;
            }
            count = 0;
            open = g0;
            add = count_new(row, set, pages);
        }
        if (add <= pl->cap) {
            for (size_t i = 0; i < pages; i++)
                set[i] |= row[i];
            count += add;
            continue;
        }
        if (w == 1) {
            vast_log(pl->last_try ? VAST_LOG_ERROR : VAST_LOG_INFO,
                     "kernel '%s': work-group %zu alone touches %zu pages (%zu KiB) but a partition may hold %zu "
                     "(%zu KiB of the device budget, VAST_DEVICE_MEMORY)%s",
                     r->cmd->kernel->name, g0, add, add * r->pool->page_size >> 10, pl->cap,
                     pl->cap * r->pool->page_size >> 10, pl->last_try ? ": it cannot run partitioned" : "");
            err = CL_OUT_OF_RESOURCES;
            break;
        }
        err = plan_range(in, pl, g0, g1, w / REFINE ? w / REFINE : 1); /* too coarse: refine this chunk */
        win_n = 0;                                                        /* the window was overwritten */
        open = g1;
    }
    if (err == CL_SUCCESS && open < end)
        err = emit(pl, open, end, set, count);
    else
        free(set);
    return err;
}

void vast_partitions_free(struct vast_partition *parts, size_t n)
{
    for (size_t i = 0; parts != NULL && i < n; i++)
        free(parts[i].set);
    free(parts);
}

cl_int vast_partition_plan(struct vast_paged *r, size_t cap, struct vast_partition **parts, size_t *nparts)
{
    uint64_t t0 = vast_now_ns();
    struct plan pl = {NULL, 0, 0, cap, cap >= r->pool->nframes};
    cl_int err = CL_SUCCESS;
    if (r->insp == NULL) {
        r->insp = calloc(1, sizeof *r->insp);
        err = r->insp == NULL ? CL_OUT_OF_HOST_MEMORY : inspect_open(r->insp, r);
    }
    /* Eq. 1: work-groups per PAS row = (MEMSIZE / 32) / (AllocSize / TOTAL_WORKGROUPS). */
    double per_group = (double)(r->pages - 1) * r->pool->page_size / (double)r->total_groups;
    double want = (double)r->pool->nframes * r->pool->page_size / 32.0 / (per_group > 0 ? per_group : 1);
    size_t w = 1;
    while ((double)w < want && w < r->total_groups)
        w *= 2;
    if (err == CL_SUCCESS)
        err = plan_range(r->insp, &pl, 0, r->total_groups, w);
    if (err != CL_SUCCESS) {
        vast_partitions_free(pl.parts, pl.n);
        pl.parts = NULL;
        pl.n = 0;
    }
    *parts = pl.parts;
    *nparts = pl.n;
    uint64_t t1 = vast_now_ns();
    uint64_t other = r->c.inspector_ns + r->c.build_ns;
    r->c.plan_ns += (t1 - t0) - (other < t1 - t0 ? other : 0);
    vast_trace_span(VAST_TRACK_PLAN, r->cmd->kernel->name, t0, t1, "plan");
    vast_info("kernel '%s': %zu partition(s) of at most %zu pages, %zu work-groups per PAS row", r->cmd->kernel->name,
              pl.n, cap, w);
    return err;
}

cl_int vast_partition_inspect(struct vast_paged *r, size_t first, size_t end, uint8_t *set)
{
    VAST_RETURN_IF(r->insp == NULL || end <= first, CL_INVALID_VALUE, "no inspector");
    size_t w = end - first, base = first / w, rows = (end - 1) / w - base + 1;
    cl_int err = inspect_window(r->insp, first, end, w, base, rows);
    for (size_t k = 0; err == CL_SUCCESS && k < rows; k++)
        for (size_t vp = 0; vp < r->pages; vp++)
            set[vp] |= r->insp->rows[k * r->pages + vp];
    return err;
}

void vast_partition_close(struct vast_paged *r)
{
    if (r->insp == NULL)
        return;
    inspect_close(r->insp);
    free(r->insp);
    r->insp = NULL;
}
