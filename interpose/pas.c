/*
 * pas.c: page accessed sets (PAS) of a launch, the planner's input (VAST paper section 4.1).
 *
 * A page set is a bytemap over the launch's virtual pages (launch_int.h). The planner
 * (partition.c) reads them as rows, one per chunk of consecutive work-groups, through a
 * struct vast_pas_source that r->pas opens (struct vast_pas_ops); this file provides the
 * launch's, vast_pas_launch, in two forms:
 *   - the inspector kernel (translate.h) runs over the work-groups (no data moves) and marks
 *     the pages each chunk touches (device_window). It runs over windows of at most
 *     PAS_WINDOW_BYTES of rows (the window's first chunk is vast_pascfg.s2), so the PAS memory
 *     is bounded whatever the number of work-groups and pages;
 *   - host page sets: when the translator described every access of the kernel as an affine
 *     expression (translate.h, "Host page sets"), the rows are computed on the host by interval
 *     arithmetic instead (host_window), and the inspector program is neither built nor run. On
 *     the H200 the MatrixMul inspector cost 17.6 ms per 4x launch against a 42 ms kernel; the
 *     host computes its 128 rows in microseconds. Host sets are supersets (guards are
 *     ignored): a launch whose arguments the evaluation cannot bound, or whose host sets take
 *     too long, falls back to the inspector (inspect_window), and the planner asks for exact
 *     sets (pas_exact) when a work-group's host set alone exceeds the budget.
 * VAST_INSPECT=device always runs the inspector; VAST_INSPECT=check runs both and fails the
 * launch when a host row misses a page the inspector marked (tests).
 *
 * Principal entry points: vast_pas_launch (the planner's page sets), vast_partition_inspect and
 * vast_partition_inspect_iters (one set for a range of work-groups and loop iterations: splits
 * in pipeline.c, iteration ranges in stride.c), vast_partition_close.
 * Invariant: rows are supersets of what the work-groups touch, except where the inspector's
 * loop budget ran out or addresses depend on data; the pipeline's faults complete them.
 * See also: partition.c (Algorithm 1 over these rows), paged.c (the virtual space the pages
 * number, and the launch of the inspector kernel), translate.h (the inspector's ABI).
 */
#include "launch_int.h"

#include "../base/config.h"

#include "api.h"
#include "check.h"
#include "pagecache.h"
#include "../base/clock.h"
#include "../base/trace.h"
#include "translate.h"
#include "variant.h"
#include "vbuf.h"

#include <stdlib.h>
#include <string.h>

#define PAS_WINDOW_BYTES ((size_t)32 << 20)
/* Steps of each loop whose condition depends on loaded data, per work-item: the inspector's
 * loads all read 0, so such a loop's trip count is fabricated (0 for a count, for ever for
 * `while (x != 1)`); its pages past a few steps are not the real ones anyway, and 2^16 steps
 * times 256K work-items took minutes on the CPU (tests/e2e/partition/test_xlat.c fault_loop). */
#define INSPECTOR_STEP_BUDGET ((cl_ulong)64)
#define HOST_SETS_NS 100000000ull /* host page sets of one launch: past this, the inspector takes over */

struct vast_inspect {
    struct vast_paged *r;
    bool host;      /* rows from the kernel's affine description (host_window) */
    bool device_ok; /* the inspector kernel and its buffers are set up (device_open) */
    cl_kernel ik;
    cl_mem pas, status;
    size_t max_rows;
    uint8_t *rows; /* host copy of the last window */
    uint64_t iter_first, iter_end; /* iteration range of the inspector's runs (stride.c) */
    bool more;     /* the last run: a work-item has iterations past iter_end */
    bool host_more; /* the same from the host description (an upper bound) */
};

/* The inspector kernel, its PAS and status buffers and its fixed arguments (built on first use). */
static cl_int device_open(struct vast_inspect *in)
{
    struct vast_paged *r = in->r;
    if (in->device_ok)
        return CL_SUCCESS;
    cl_int err = vast_paged_plan_queue(r); /* planning at enqueue: the inspector's queue */
    if (err != CL_SUCCESS)
        return err;
    uint64_t t0 = vast_now_ns();
    if (in->ik == NULL)
        in->ik = vast_variant_take(r->cmd->kernel, VAST_VARIANT_INSPECTOR, r->dev); /* built on first use */
    r->c.build_ns += vast_now_ns() - t0;
    VAST_RETURN_IF(in->ik == NULL, CL_OUT_OF_RESOURCES, "kernel '%s' has no inspector", r->cmd->kernel->name);
    cl_context ctx = r->cmd->queue->context->backend->shared;
    if (in->pas == NULL)
        in->pas = r->d->clCreateBuffer(ctx, CL_MEM_READ_WRITE, in->max_rows * r->pages, NULL, &err);
    if (in->pas != NULL && in->status == NULL)
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
    in->device_ok = err == CL_SUCCESS;
    return err;
}

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
    enum vast_inspect_mode mode = vast_config_get()->inspect;
    /* Host sets describe whole work-groups (ids by the original local size), not slices. */
    in->host = mode != VAST_INSPECT_DEVICE && r->tk != NULL && r->tk->affine != NULL && r->slices == 0;
    return in->host && mode == VAST_INSPECT_AUTO ? CL_SUCCESS : device_open(in);
}

static void inspect_close(struct vast_inspect *in)
{
    if (in->pas != NULL)
        in->r->d->clReleaseMemObject(in->pas);
    if (in->status != NULL)
        in->r->d->clReleaseMemObject(in->status);
    if (in->ik != NULL)
        vast_variant_give(in->r->cmd->kernel, VAST_VARIANT_INSPECTOR, in->ik, in->r->dev);
    free(in->rows);
}

/* Inspect work-groups [first, end) in chunks of w, rows from chunk `base` (nrows of them,
 * at most in->max_rows) into dst, with the inspector kernel. */
static cl_int device_window(struct vast_inspect *in, size_t first, size_t end, size_t w, size_t base, size_t nrows,
                            uint8_t *dst)
{
    struct vast_paged *r = in->r;
    uint64_t t0 = vast_now_ns();
    static const cl_uchar zero = 0;
    static const cl_uint zeros[4] = {0, 0, 0, 0};
    cl_uint status[4] = {0, 0, 0, 0};
    cl_ulong4 cfg = {{r->pool->page_shift, r->pages, first, end}};
    cl_ulong4 pascfg = {{w, INSPECTOR_STEP_BUDGET, base, 0}};
    size_t bytes = nrows * r->pages;
    cl_uint n = r->cmd->num_args;
    cl_int err = r->d->clEnqueueFillBuffer(r->rq, in->pas, &zero, 1, 0, bytes, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = r->d->clEnqueueWriteBuffer(r->rq, in->status, CL_FALSE, 0, sizeof zeros, zeros, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(in->ik, n + 5, sizeof cfg, &cfg);
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(in->ik, n + 6, sizeof pascfg, &pascfg);
    if (err == CL_SUCCESS)
        err = vast_paged_set_iters(r, in->ik, true, in->iter_first, in->iter_end);
    if (err == CL_SUCCESS)
        err = vast_paged_enqueue(r, r->rq, in->ik, n + 7, first, end, NULL);
    if (err == CL_SUCCESS)
        err = r->d->clEnqueueReadBuffer(r->rq, in->status, CL_FALSE, 0, sizeof status, status, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = r->d->clEnqueueReadBuffer(r->rq, in->pas, CL_TRUE, 0, bytes, dst, 0, NULL, NULL);
    in->more = status[2] != 0;
    if (err != CL_SUCCESS) /* a plan that fails here refuses the launch: say why */
        vast_error("kernel '%s': the inspector over work-groups [%zu, %zu) failed on the device: error %d",
                   r->cmd->kernel->name, first, end, err);
    if (err == CL_SUCCESS && status[3] != 0) { /* resumable loops: no record of the range's start */
        vast_error("kernel '%s': the inspector found no saved loop state for iteration %llu",
                   r->cmd->kernel->name, (unsigned long long)in->iter_first);
        err = CL_OUT_OF_RESOURCES;
    }
    if (err == CL_SUCCESS && status[0] != 0)
        vast_info("kernel '%s': the inspector's loop budget ran out; faults will complete its page sets",
                  r->cmd->kernel->name);
    uint64_t t1 = vast_now_ns();
    r->c.inspector_ns += t1 - t0;
    vast_trace_span(VAST_TRACK_INSPECTOR, r->cmd->kernel->name, t0, t1, "inspector window");
    return err;
}

/* ---- host page sets ---- */

struct host_row {
    const struct vast_paged *r;
    const struct translate_affine *a;
    uint8_t *row;
};

/* Marks the pages of bytes [lo, end) of a site's buffer, clipped to the buffer. */
static void host_mark(void *ctx, unsigned site, long long lo, long long end)
{
    struct host_row *h = ctx;
    const struct vast_paged *r = h->r;
    unsigned arg = h->a->sites[site].arg;
    for (size_t i = 0; i < r->nva; i++) {
        if (r->va[i].index != arg)
            continue;
        long long size = (long long)r->va[i].m->size;
        lo = lo > 0 ? lo : 0;
        end = end < size ? end : size;
        if (lo >= end)
            return;
        unsigned shift = r->pool->page_shift;
        size_t p0 = (size_t)((r->arg_va[arg] + (uint64_t)lo) >> shift);
        size_t p1 = (size_t)((r->arg_va[arg] + (uint64_t)end - 1) >> shift);
        if (p1 >= r->pages)
            p1 = r->pages - 1;
        if (p0 <= p1)
            memset(h->row + p0, 1, p1 - p0 + 1);
        return;
    }
}

/* The launch as translate_affine_ranges sees it (values and sizes: arrays of 64, filled); -1
 * when the kernel has more arguments. */
int vast_affine_launch(const struct vast_paged *r, struct translate_alaunch *l, const void **values, size_t *sizes)
{
    const struct launch_shape *sh = &r->cmd->sh;
    *l = (struct translate_alaunch){.dims = sh->dims, .num_args = r->cmd->num_args};
    if (l->num_args > 64)
        return -1;
    for (cl_uint i = 0; i < l->num_args; i++) {
        values[i] = r->cmd->args[i].vbuf == NULL ? r->cmd->args[i].value : NULL;
        sizes[i] = r->cmd->args[i].size;
    }
    l->args = values;
    l->arg_sizes = sizes;
    for (int d = 0; d < 3; d++) {
        l->global_size[d] = sh->global[d];
        l->local_size[d] = r->local[d];
        l->global_offset[d] = sh->offset[d];
    }
    return 0;
}

double vast_launch_traffic(const struct vast_paged *r)
{
    struct translate_alaunch l;
    const void *values[64];
    size_t sizes[64];
    double per_item, items = 1;
    if (r->tk->affine == NULL || vast_affine_launch(r, &l, values, sizes) != 0)
        return -1;
    for (int d = 0; d < 3; d++) {
        l.group_first[d] = 0;
        l.group_last[d] = r->groups[d] - 1;
        items *= (double)r->cmd->sh.global[d];
    }
    return translate_affine_traffic(r->tk->affine, &l, &per_item) == 0 ? per_item * items : -1;
}

/* Work-groups [a, b) (flat ids) as boxes of whole rows and planes of the group grid, each
 * set in l's group_first/group_last and passed to fn; stops at fn's first nonzero return. */
int vast_group_boxes(const struct vast_paged *r, size_t a, size_t b, struct translate_alaunch *l,
                     int (*fn)(void *ctx, const struct translate_alaunch *l), void *ctx)
{
    size_t n0 = r->groups[0], n01 = r->groups[0] * r->groups[1];
    while (a < b) {
        size_t x = a % n0, y = a / n0 % r->groups[1], z = a / n01, take;
        size_t box[3][2] = {{x, x}, {y, y}, {z, z}};
        if (x != 0 || b - a < n0) { /* part of a row */
            take = n0 - x < b - a ? n0 - x : b - a;
            box[0][1] = x + take - 1;
        } else if (y != 0 || b - a < n01) { /* whole rows of one plane */
            size_t rows = (b - a) / n0 < r->groups[1] - y ? (b - a) / n0 : r->groups[1] - y;
            take = rows * n0;
            box[0][1] = n0 - 1;
            box[1][1] = y + rows - 1;
        } else { /* whole planes */
            take = (b - a) / n01 * n01;
            box[0][1] = n0 - 1;
            box[1][1] = r->groups[1] - 1;
            box[2][1] = z + take / n01 - 1;
        }
        for (int d = 0; d < 3; d++) {
            l->group_first[d] = box[d][0];
            l->group_last[d] = box[d][1];
        }
        int rc = fn(ctx, l);
        if (rc != 0)
            return rc;
        a += take;
    }
    return 0;
}

static int host_box(void *ctx, const struct translate_alaunch *l)
{
    struct host_row *h = ctx;
    return translate_affine_ranges(h->a, l, h->r->pool->page_size, host_mark, h) != 0 ? -1 : 0;
}

static int more_box(void *ctx, const struct translate_alaunch *l)
{
    struct vast_inspect *in = ctx;
    int more = 0;
    if (translate_affine_more(in->r->tk->affine, l, &more) != 0)
        return -1;
    in->host_more = in->host_more || more;
    return 0;
}

/* The pages of work-groups [a, b) (flat ids) into row, within the inspector's iteration range;
 * with more != NULL, whether a work-item of them has iterations past it (in->host_more). */
static int host_row(struct vast_inspect *in, size_t a, size_t b, uint8_t *row, bool more)
{
    struct vast_paged *r = in->r;
    struct translate_alaunch l;
    const void *values[64];
    size_t sizes[64];
    if (vast_affine_launch(r, &l, values, sizes) != 0)
        return -1;
    l.iter_first = in->iter_first;
    l.iter_end = in->iter_end;
    struct host_row h = {r, r->tk->affine, row};
    int rc = vast_group_boxes(r, a, b, &l, host_box, &h);
    return rc == 0 && more ? vast_group_boxes(r, a, b, &l, more_box, in) : rc;
}

/* Like device_window, from the affine description; -1 when it cannot bound this launch, -2
 * when the launch's host sets took HOST_SETS_NS. */
static int host_window(struct vast_inspect *in, size_t first, size_t end, size_t w, size_t base, size_t nrows,
                       uint8_t *dst)
{
    struct vast_paged *r = in->r;
    uint64_t t0 = vast_now_ns();
    memset(dst, 0, nrows * r->pages);
    int rc = 0;
    in->host_more = false;
    for (size_t k = 0; k < nrows && rc == 0; k++) {
        size_t a = (base + k) * w > first ? (base + k) * w : first, b = (base + k + 1) * w < end ? (base + k + 1) * w : end;
        if (a < b)
            rc = host_row(in, a, b, dst + k * r->pages, in->iter_end != 0);
        if (rc == 0 && k % 64 == 63 && r->c.inspector_ns + (vast_now_ns() - t0) > HOST_SETS_NS)
            rc = -2; /* many fine rows of many sites: the inspector kernel does this faster */
    }
    uint64_t t1 = vast_now_ns();
    r->c.inspector_ns += t1 - t0;
    vast_trace_span(VAST_TRACK_INSPECTOR, r->cmd->kernel->name, t0, t1, "host page sets");
    return rc;
}

/* VAST_INSPECT=check: every page the inspector marked must be in the host's row. */
static cl_int check_window(struct vast_inspect *in, size_t nrows, const uint8_t *host, const uint8_t *device)
{
    struct vast_paged *r = in->r;
    for (size_t i = 0; i < nrows * r->pages; i++)
        VAST_RETURN_IF(device[i] && !host[i], CL_OUT_OF_RESOURCES,
                       "kernel '%s': the host page set of PAS row %zu misses virtual page %zu (VAST_INSPECT=check)",
                       r->cmd->kernel->name, i / r->pages, i % r->pages);
    return CL_SUCCESS;
}

static cl_int inspect_window(struct vast_inspect *in, size_t first, size_t end, size_t w, size_t base, size_t nrows,
                             uint8_t *dst)
{
    struct vast_paged *r = in->r;
    int rc = in->host ? host_window(in, first, end, w, base, nrows, dst) : 0;
    if (rc != 0) {
        vast_info("kernel '%s': %s; running the inspector", r->cmd->kernel->name,
                  rc == -1 ? "host page sets cannot bound this launch's accesses" : "host page sets take too long");
        in->host = false;
    }
    if (in->host && !in->device_ok) {
        in->more = in->host_more;
        return CL_SUCCESS;
    }
    cl_int err = device_open(in);
    if (err != CL_SUCCESS || !in->host)
        return err == CL_SUCCESS ? device_window(in, first, end, w, base, nrows, dst) : err;
    uint8_t *device = malloc(nrows * r->pages); /* check mode */
    VAST_RETURN_IF(device == NULL, CL_OUT_OF_HOST_MEMORY, "PAS check");
    err = device_window(in, first, end, w, base, nrows, device);
    if (err == CL_SUCCESS)
        err = check_window(in, nrows, dst, device);
    free(device);
    VAST_RETURN_IF(err == CL_SUCCESS && in->iter_end != 0 && in->more && !in->host_more, CL_OUT_OF_RESOURCES,
                   "kernel '%s': the host says no work-item has iterations past %llu, the inspector says one has "
                   "(VAST_INSPECT=check)", r->cmd->kernel->name, (unsigned long long)in->iter_end);
    return err;
}

static cl_int inspector_ready(struct vast_paged *r)
{
    if (r->insp != NULL)
        return CL_SUCCESS;
    r->insp = calloc(1, sizeof *r->insp);
    return r->insp == NULL ? CL_OUT_OF_HOST_MEMORY : inspect_open(r->insp, r);
}

/* The planner's view of inspect_window. */
static cl_int source_window(void *ctx, size_t first, size_t end, size_t w, size_t base, size_t nrows, uint8_t *dst)
{
    return inspect_window(ctx, first, end, w, base, nrows, dst);
}

static cl_int pas_source(struct vast_paged *r, struct vast_pas_source *src)
{
    cl_int err = inspector_ready(r);
    if (err != CL_SUCCESS)
        return err;
    *src = (struct vast_pas_source){.pages = r->pages, .max_rows = r->insp->max_rows, .rows = r->insp->rows,
                                    .window = source_window, .ctx = r->insp};
    return CL_SUCCESS;
}

static bool pas_host(const struct vast_paged *r)
{
    return r->insp != NULL && r->insp->host;
}

static void pas_exact(struct vast_paged *r)
{
    if (r->insp != NULL)
        r->insp->host = false;
}

cl_int vast_partition_inspect_iters(struct vast_paged *r, size_t first, size_t end, uint64_t it0, uint64_t it1,
                                    uint8_t *set, bool *more)
{
    cl_int err = inspector_ready(r);
    if (err != CL_SUCCESS)
        return err;
    r->insp->iter_first = it0;
    r->insp->iter_end = it1;
    if (it1 != 0 && (r->tk->affine == NULL || !r->tk->affine->ranges))
        r->insp->host = false; /* no description, or one that knows no iteration ranges */
    err = vast_partition_inspect(r, first, end, set);
    if (more != NULL)
        *more = r->insp->more;
    return err;
}

cl_int vast_partition_inspect(struct vast_paged *r, size_t first, size_t end, uint8_t *set)
{
    VAST_RETURN_IF(end <= first, CL_INVALID_VALUE, "empty work-group range");
    cl_int err = inspector_ready(r); /* a reused plan did not open it */
    if (err != CL_SUCCESS)
        return err;
    size_t w = end - first, base = first / w, rows = (end - 1) / w - base + 1;
    err = inspect_window(r->insp, first, end, w, base, rows, r->insp->rows);
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


size_t vast_set_count(const uint8_t *set, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += set[i] != 0;
    return count;
}

void vast_partitions_free(struct vast_partition *parts, size_t n)
{
    for (size_t i = 0; parts != NULL && i < n; i++) {
        free(parts[i].set);
        free(parts[i].runs);
    }
    free(parts);
}

/* A plan of P partitions over a launch of V virtual pages held P bytemaps of V bytes: with the
 * partitions' number growing with the data too, quadratic (pyopencl's test_zeros_large_array,
 * 2 x 2 GiB at a 256 KiB budget of 4 KiB pages: 32768 partitions of 1 MiB each, 32 GiB, the
 * process killed). Packed, a set costs 16 bytes per run of pages, at most one per page of the
 * budget. */
void vast_partition_pack(struct vast_partition *p, size_t pages)
{
    if (p->set == NULL)
        return;
    size_t n = 0;
    for (size_t i = 0; i < pages; i++)
        n += p->set[i] && (i == 0 || !p->set[i - 1]);
    size_t *runs = malloc((n ? n : 1) * 2 * sizeof *runs), k = 0;
    if (runs == NULL)
        return; /* the bytemap stays: correct, only larger */
    for (size_t i = 0; i < pages; i++) {
        if (!p->set[i])
            continue;
        if (i == 0 || !p->set[i - 1]) {
            runs[2 * k] = i;
            runs[2 * k + 1] = 0;
            k++;
        }
        runs[2 * k - 1]++;
    }
    free(p->runs);
    p->runs = runs;
    p->nruns = n;
    free(p->set);
    p->set = NULL;
}

cl_int vast_partition_unpack(struct vast_partition *p, size_t pages)
{
    if (p->set != NULL)
        return CL_SUCCESS;
    p->set = calloc(pages ? pages : 1, 1);
    VAST_RETURN_IF(p->set == NULL, CL_OUT_OF_HOST_MEMORY, "page set of %zu pages", pages);
    for (size_t k = 0; k < p->nruns; k++)
        memset(p->set + p->runs[2 * k], 1, p->runs[2 * k + 1]);
    return CL_SUCCESS;
}

void vast_partition_drop_set(struct vast_partition *p)
{
    if (p->runs == NULL)
        return; /* never packed: the bytemap is the only copy */
    free(p->set);
    p->set = NULL;
}

cl_int vast_partitions_reserve(struct vast_partition **parts, size_t n, size_t *cap)
{
    if (n < *cap)
        return CL_SUCCESS;
    size_t grown_cap = *cap ? *cap * 2 : 16;
    struct vast_partition *grown = realloc(*parts, grown_cap * sizeof *grown);
    VAST_RETURN_IF(grown == NULL, CL_OUT_OF_HOST_MEMORY, "partitions");
    *parts = grown;
    *cap = grown_cap;
    return CL_SUCCESS;
}

const struct vast_pas_ops vast_pas_launch = {pas_source, pas_host, pas_exact, vast_partition_inspect_iters,
                                             vast_partition_close};
