/*
 * partition.c: planning a partitioned launch (VAST paper section 4.1 and Algorithm 1).
 *
 * The inspector kernel runs over the work-groups (no data moves) and fills page accessed
 * sets: one row per chunk of consecutive work-groups, one byte per virtual page. The chunk
 * size comes from the paper's Eq. 1, rounded to a power of two: each chunk is expected to
 * touch about 1/32 of the budget. The rows are OR-reduced in work-group order into partitions
 * sized so that each fits the budget together with the pages its successor adds (plan_fits:
 * the next partition loads under this one's kernel; pages shared by consecutive partitions
 * count once). A chunk that does not fit is "too coarse": its work-groups are inspected again
 * in chunks 16 times smaller, down to single work-groups; a work-group that alone exceeds the
 * whole budget runs in slices when its work-items are independent (no barriers, no __local
 * memory: translate.h, vast_slab; the real local size shrinks by prime factors and the plan is
 * made again), else the launch fails before any kernel ran, so the application's buffers are
 * untouched.
 *
 * The inspector runs over windows of at most PAS_WINDOW_BYTES of rows (translate.h: the
 * window's first chunk is vast_pascfg.s2), so the PAS memory is bounded whatever the number
 * of work-groups and pages. The whole plan is made before the first partition runs.
 *
 * Host page sets: when the translator described every access of the kernel as an affine
 * expression (translate.h, "Host page sets"), the rows are computed on the host by interval
 * arithmetic instead (host_window), and the inspector program is neither built nor run. On
 * the H200 the MatrixMul inspector cost 17.6 ms per 4x launch against a 42 ms kernel; the host
 * computes its 128 rows in microseconds. Host sets are supersets (guards are ignored), so a plan
 * that cannot be made with them (a work-group alone over the budget) is made again with the
 * inspector, and so is a launch whose arguments the evaluation cannot bound. VAST_INSPECT=device
 * always runs the inspector; VAST_INSPECT=check runs both and fails the launch when a host row
 * misses a page the inspector marked (tests).
 *
 * A work-group alone over the budget in a kernel whose grid-stride loops may run in iteration
 * ranges (translate.h, iteration_ranges): stride.c plans partitions of loop iterations instead.
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
#define REFINE 16 /* a too coarse chunk is inspected again in chunks this many times smaller */
#define HOST_SETS_NS 100000000ull /* host page sets of one launch: past this, the inspector takes over */

struct vast_inspect {
    struct vast_paged *r;
    bool host;      /* rows from the kernel's affine description (host_window) */
    bool device_ok; /* the inspector kernel and its buffers are set up (device_open) */
    bool host_over; /* a work-group's host set alone exceeded the budget */
    bool group_over; /* a work-group's exact set alone exceeded the budget (slices may help) */
    cl_kernel ik;
    cl_mem pas, status;
    size_t max_rows;
    uint8_t *rows; /* host copy of the last window */
    uint64_t iter_first, iter_end; /* iteration range of the inspector's runs (stride.c) */
    bool more;     /* the last run: a work-item has iterations past iter_end */
    bool wg_over;  /* a work-group alone exceeded the budget (its loops may be split) */
};

struct plan {
    struct vast_partition *parts;
    size_t n, capacity;
    size_t nframes;       /* the budget in pages */
    const uint8_t *prev;  /* the last partition's set (owned by parts), NULL before the first */
    size_t prev_count;
    /* The open partition: its first work-group, its set, and its union with prev (bytemaps over
     * r->pages), with their page counts. */
    size_t open;
    uint8_t *set, *both;
    size_t count, ucount;
};

/* The inspector kernel, its PAS and status buffers and its fixed arguments (built on first use). */
static cl_int device_open(struct vast_inspect *in)
{
    struct vast_paged *r = in->r;
    if (in->device_ok)
        return CL_SUCCESS;
    uint64_t t0 = vast_now_ns();
    if (in->ik == NULL)
        in->ik = vast_variant_take(r->cmd->kernel, VAST_VARIANT_INSPECTOR, r->dev); /* built on first use */
    r->c.build_ns += vast_now_ns() - t0;
    VAST_RETURN_IF(in->ik == NULL, CL_OUT_OF_RESOURCES, "kernel '%s' has no inspector", r->cmd->kernel->name);
    cl_context ctx = r->cmd->queue->context->backend->shared;
    cl_int err = CL_SUCCESS;
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
        vast_variant_give(in->r->cmd->kernel, VAST_VARIANT_INSPECTOR, in->ik);
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
        err = vast_paged_set_iters(r, in->ik, in->iter_first, in->iter_end);
    if (err == CL_SUCCESS)
        err = vast_paged_enqueue(r, r->rq, in->ik, n + 7, first, end, NULL);
    if (err == CL_SUCCESS)
        err = r->d->clEnqueueReadBuffer(r->rq, in->status, CL_FALSE, 0, sizeof status, status, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = r->d->clEnqueueReadBuffer(r->rq, in->pas, CL_TRUE, 0, bytes, dst, 0, NULL, NULL);
    in->more = status[2] != 0;
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

/* The pages of work-groups [a, b) (flat ids) into row: the range is cut into boxes of whole
 * rows and planes of the group grid, and each box evaluated. */
static int host_row(struct vast_inspect *in, size_t a, size_t b, uint8_t *row)
{
    struct vast_paged *r = in->r;
    const struct launch_shape *sh = &r->cmd->sh;
    const struct translate_affine *aff = r->tk->affine;
    struct translate_alaunch l = {.dims = sh->dims, .num_args = r->cmd->num_args};
    const void *values[64];
    size_t sizes[64];
    if (l.num_args > 64)
        return -1;
    for (cl_uint i = 0; i < l.num_args; i++) {
        values[i] = r->cmd->args[i].vbuf == NULL ? r->cmd->args[i].value : NULL;
        sizes[i] = r->cmd->args[i].size;
    }
    l.args = values;
    l.arg_sizes = sizes;
    for (int d = 0; d < 3; d++) {
        l.global_size[d] = sh->global[d];
        l.local_size[d] = r->local[d];
        l.global_offset[d] = sh->offset[d];
    }
    size_t n0 = r->groups[0], n01 = r->groups[0] * r->groups[1];
    struct host_row h = {r, aff, row};
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
            l.group_first[d] = box[d][0];
            l.group_last[d] = box[d][1];
        }
        if (translate_affine_ranges(aff, &l, r->pool->page_size, host_mark, &h) != 0)
            return -1;
        a += take;
    }
    return 0;
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
    for (size_t k = 0; k < nrows && rc == 0; k++) {
        size_t a = (base + k) * w > first ? (base + k) * w : first, b = (base + k + 1) * w < end ? (base + k + 1) * w : end;
        if (a < b)
            rc = host_row(in, a, b, dst + k * r->pages);
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
    if (in->host && !in->device_ok)
        return CL_SUCCESS;
    cl_int err = device_open(in);
    if (err != CL_SUCCESS || !in->host)
        return err == CL_SUCCESS ? device_window(in, first, end, w, base, nrows, dst) : err;
    uint8_t *device = malloc(nrows * r->pages); /* check mode */
    VAST_RETURN_IF(device == NULL, CL_OUT_OF_HOST_MEMORY, "PAS check");
    err = device_window(in, first, end, w, base, nrows, device);
    if (err == CL_SUCCESS)
        err = check_window(in, nrows, dst, device);
    free(device);
    return err;
}

/* Page sets are bytemaps of 0/1, so 8 pages are one 64-bit word: a page of row not yet in
 * set is a set bit of row & ~set, counted with popcount (planning touches every row of the
 * PAS once per partition it joins, and rows are as wide as the launch's pages). */
static size_t count_new(const uint8_t *row, const uint8_t *set, size_t n)
{
    size_t k = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t a, b;
        memcpy(&a, row + i, 8);
        memcpy(&b, set + i, 8);
        k += (size_t)__builtin_popcountll(a & ~b);
    }
    for (; i < n; i++)
        k += row[i] && !set[i];
    return k;
}

static void or_into(uint8_t *set, const uint8_t *row, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t a, b;
        memcpy(&a, row + i, 8);
        memcpy(&b, set + i, 8);
        b |= a;
        memcpy(set + i, &b, 8);
    }
    for (; i < n; i++)
        set[i] |= row[i];
}

/* Whether the open partition P may grow to count pages, ucount with its predecessor Q. The
 * pages P adds to Q (N = ucount - |Q|) load while Q's are pinned (paged.c prefetches under
 * Q's kernel), so |Q| + |N| must fit the budget, and so must |P| + |N'| for P's successor;
 * asking |P| + |N| to fit too keeps consecutive partitions alike in size (a greedy plan on
 * the first rule alone alternates large and tiny partitions). Pages shared by consecutive
 * partitions (MatrixMul's B) count once, so such a launch is not cut to half the budget; with
 * no sharing this is the half-budget rule. */
static bool plan_fits(const struct plan *pl, size_t count, size_t ucount)
{
    size_t added = ucount - pl->prev_count;
    return ucount <= pl->nframes && count + added <= pl->nframes;
}

static cl_int plan_open(struct plan *pl, size_t pages)
{
    pl->set = calloc(pages, 1);
    pl->both = malloc(pages);
    if (pl->set == NULL || pl->both == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    if (pl->prev != NULL)
        memcpy(pl->both, pl->prev, pages);
    else
        memset(pl->both, 0, pages);
    pl->count = 0;
    pl->ucount = pl->prev_count;
    return CL_SUCCESS;
}

/* Close the open partition at work-group end and open an empty one there. */
static cl_int plan_emit(struct plan *pl, size_t end, size_t pages)
{
    if (pl->n == pl->capacity) {
        size_t cap = pl->capacity ? pl->capacity * 2 : 16;
        struct vast_partition *grown = realloc(pl->parts, cap * sizeof *grown);
        VAST_RETURN_IF(grown == NULL, CL_OUT_OF_HOST_MEMORY, "partitions");
        pl->parts = grown;
        pl->capacity = cap;
    }
    pl->parts[pl->n++] = (struct vast_partition){.first = pl->open, .end = end, .set = pl->set, .count = pl->count};
    pl->prev = pl->set;
    pl->prev_count = pl->count;
    pl->open = end;
    free(pl->both);
    pl->set = pl->both = NULL;
    return plan_open(pl, pages);
}

static void plan_add(struct plan *pl, const uint8_t *row, size_t pages, size_t add, size_t addu)
{
    or_into(pl->set, row, pages);
    or_into(pl->both, row, pages);
    pl->count += add;
    pl->ucount += addu;
}

/* Whether the work-groups of this launch may run in smaller slices (translate.h, vast_slab):
 * the kernel's work-items never meet (no barriers, no __local memory), it does not require its
 * work-group size, and a work-group has more than one work-item. */
static bool can_slice(const struct vast_paged *r)
{
    size_t reqd[3] = {0, 0, 0};
    r->d->clGetKernelWorkGroupInfo(r->pk, r->dev->real, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof reqd, reqd, NULL);
    return !r->tk->work_group_bound && reqd[0] == 0 && r->local[0] * r->local[1] * r->local[2] > 1;
}

/* Divides the largest dimension of the real local size by its smallest prime factor (slices
 * stay divisors of the work-group) and counts the launch's real work-groups again. */
static void slice_groups(struct vast_paged *r)
{
    unsigned d = 0;
    for (unsigned i = 1; i < 3; i++)
        if (r->local[i] > r->local[d])
            d = i;
    size_t p = 2;
    while (r->local[d] % p != 0)
        p++;
    unsigned shift = 21 * d;
    cl_ulong k = r->slices >> shift & 0x1fffff;
    k = (k != 0 ? k : 1) * p;
    r->slices = (r->slices & ~((cl_ulong)0x1fffff << shift)) | k << shift;
    r->local[d] /= p;
    r->total_groups = 1;
    for (unsigned i = 0; i < 3; i++) {
        r->groups[i] = r->cmd->sh.global[i] / r->local[i];
        r->total_groups *= r->groups[i];
    }
}

/* Algorithm 1 over work-groups [first, end) (first a multiple of w), continuing the open
 * partition. A chunk that does not fit is inspected again REFINE times finer; a single
 * work-group that does not fit beside its neighbours runs without overlap (its partition
 * only has to fit the budget). */
static cl_int plan_range(struct vast_inspect *in, struct plan *pl, size_t first, size_t end, size_t w,
                         uint8_t *rows)
{
    struct vast_paged *r = in->r;
    size_t pages = r->pages, c_end = (end + w - 1) / w, win_lo = 0, win_n = 0;
    cl_int err = CL_SUCCESS;
    uint8_t *fine = NULL; /* the window of refinements, so that this one stays valid */
    for (size_t c = first / w; c < c_end && err == CL_SUCCESS; c++) {
        size_t g0 = c * w > first ? c * w : first, g1 = (c + 1) * w < end ? (c + 1) * w : end;
        if (c < win_lo || c >= win_lo + win_n) {
            win_lo = c;
            win_n = c_end - c < in->max_rows ? c_end - c : in->max_rows;
            size_t last = (win_lo + win_n) * w < end ? (win_lo + win_n) * w : end;
            err = inspect_window(in, g0, last, w, win_lo, win_n, rows);
            if (err != CL_SUCCESS)
                break;
        }
        const uint8_t *row = rows + (c - win_lo) * pages;
        size_t add = count_new(row, pl->set, pages), addu = count_new(row, pl->both, pages);
        if (!plan_fits(pl, pl->count + add, pl->ucount + addu) && pl->open < g0) {
            err = plan_emit(pl, g0, pages); /* close the open partition before this chunk */
            if (err != CL_SUCCESS)
                break;
            add = count_new(row, pl->set, pages);
            addu = count_new(row, pl->both, pages);
        }
        if (plan_fits(pl, pl->count + add, pl->ucount + addu) || (w == 1 && pl->count + add <= pl->nframes)) {
            plan_add(pl, row, pages, add, addu);
            continue;
        }
        if (w == 1 && r->tk->iteration_ranges) { /* vast_partition_plan splits its loops */
            in->wg_over = true;
            err = CL_OUT_OF_RESOURCES;
            break;
        }
        if (w == 1 && in->host) { /* perhaps only the superset is too big: vast_partition_plan asks the device */
            in->host_over = true;
            err = CL_OUT_OF_RESOURCES;
            break;
        }
        if (w == 1) {
            in->group_over = true;
            if (!can_slice(r))
                vast_error("kernel '%s': %s %zu alone touches %zu pages (%zu KiB) but the device budget "
                           "(VAST_DEVICE_MEMORY) holds %zu (%zu KiB): it cannot run partitioned%s",
                           r->cmd->kernel->name, r->slices != 0 ? "the one work-item of real work-group" : "work-group", g0, add,
                           add * r->pool->page_size >> 10, pl->nframes, pl->nframes * r->pool->page_size >> 10,
                           r->tk->work_group_bound ? " (its work-items meet: barriers or __local memory)" : "");
            err = CL_OUT_OF_RESOURCES;
            break;
        }
        if (fine == NULL)
            fine = malloc((REFINE < in->max_rows ? REFINE : in->max_rows) * pages);
        err = fine != NULL ? plan_range(in, pl, g0, g1, w / REFINE ? w / REFINE : 1, fine) /* too coarse: refine */
                           : CL_OUT_OF_HOST_MEMORY;
    }
    free(fine);
    return err;
}

void vast_partitions_free(struct vast_partition *parts, size_t n)
{
    for (size_t i = 0; parts != NULL && i < n; i++)
        free(parts[i].set);
    free(parts);
}

/* ---- the last plan of each kernel object ----
 * The inspector reads no data: its page sets, and so the plan, are a function of the
 * virtual layout, the scalar arguments, the NDRange and the budget alone. A launch whose
 * inputs equal the previous launch's of the same kernel object (an iterative solver, a
 * benchmark loop) reuses that plan instead of inspecting again; faults are handled per run
 * as always, so data-dependent kernels reuse plans too. Plans larger than PLAN_CACHE_BYTES
 * are not kept. The cache is guarded by the kernel's object lock, held only to copy. */
#define PLAN_CACHE_BYTES ((size_t)64 << 20)

struct vast_plan_cache {
    uint8_t *key;
    size_t key_len;
    struct vast_partition *parts;
    size_t n, pages;
};

static void key_put(uint8_t **at, const void *v, size_t n)
{
    memcpy(*at, v, n);
    *at += n;
}

/* Everything the inspector and the planner depend on, as bytes. */
static uint8_t *plan_key(const struct vast_paged *r, size_t *len)
{
    const struct vast_launch_cmd *cmd = r->cmd;
    size_t n = sizeof cmd->sh + sizeof r->local + 3 * sizeof(size_t);
    for (cl_uint i = 0; i < cmd->num_args; i++)
        n += sizeof(uint64_t) + sizeof(size_t) + (cmd->args[i].vbuf == NULL && cmd->args[i].value ? cmd->args[i].size : 0);
    uint8_t *key = calloc(1, n), *at = key;
    if (key == NULL)
        return NULL;
    size_t geometry[3] = {r->pages, r->pool->nframes, r->pool->page_shift};
    key_put(&at, &cmd->sh, sizeof cmd->sh);
    key_put(&at, r->local, sizeof r->local);
    key_put(&at, geometry, sizeof geometry);
    for (cl_uint i = 0; i < cmd->num_args; i++) {
        key_put(&at, &r->arg_va[i], sizeof(uint64_t));
        key_put(&at, &cmd->args[i].size, sizeof(size_t));
        if (cmd->args[i].vbuf == NULL && cmd->args[i].value)
            key_put(&at, cmd->args[i].value, cmd->args[i].size);
    }
    *len = n;
    return key;
}

static struct vast_partition *parts_copy(const struct vast_partition *from, size_t n, size_t pages)
{
    struct vast_partition *to = calloc(n ? n : 1, sizeof *to);
    for (size_t i = 0; to != NULL && i < n; i++) {
        to[i] = from[i];
        to[i].set = malloc(pages);
        if (to[i].set == NULL) {
            vast_partitions_free(to, i);
            return NULL;
        }
        memcpy(to[i].set, from[i].set, pages);
    }
    return to;
}

static void cache_free(struct vast_plan_cache *c)
{
    if (c == NULL)
        return;
    vast_partitions_free(c->parts, c->n);
    free(c->key);
    free(c);
}

/* A copy of the kernel's last plan when its key matches (the caller owns it), else NULL. */
static struct vast_partition *cache_get(cl_kernel k, const uint8_t *key, size_t len, size_t pages, size_t *n)
{
    struct vast_partition *parts = NULL;
    pthread_mutex_lock(&k->obj.lock);
    struct vast_plan_cache *c = k->plans;
    if (c != NULL && c->key_len == len && c->pages == pages && memcmp(c->key, key, len) == 0) {
        parts = parts_copy(c->parts, c->n, pages);
        *n = c->n;
    }
    pthread_mutex_unlock(&k->obj.lock);
    return parts;
}

/* Keep a copy of a new plan as the kernel's last one (takes key). */
static void cache_put(cl_kernel k, uint8_t *key, size_t len, const struct vast_partition *parts, size_t n, size_t pages)
{
    struct vast_plan_cache *c = n * pages <= PLAN_CACHE_BYTES ? calloc(1, sizeof *c) : NULL;
    if (c != NULL)
        c->parts = parts_copy(parts, n, pages);
    if (c == NULL || c->parts == NULL) {
        free(c);
        free(key);
        return;
    }
    *c = (struct vast_plan_cache){key, len, c->parts, n, pages};
    pthread_mutex_lock(&k->obj.lock);
    struct vast_plan_cache *old = k->plans;
    k->plans = c;
    pthread_mutex_unlock(&k->obj.lock);
    cache_free(old);
}

void vast_partition_forget(cl_kernel k)
{
    cache_free(k->plans);
    k->plans = NULL;
}

static cl_int inspector_ready(struct vast_paged *r)
{
    if (r->insp != NULL)
        return CL_SUCCESS;
    r->insp = calloc(1, sizeof *r->insp);
    return r->insp == NULL ? CL_OUT_OF_HOST_MEMORY : inspect_open(r->insp, r);
}

/* One plan for the launch's current work-group shape: rows of Eq. 1's size, from host sets, or
 * from the inspector where host supersets put a work-group over the budget. On failure
 * pl->parts is NULL. */
static cl_int plan_once(struct vast_paged *r, struct plan *pl, size_t *w_out)
{
    *pl = (struct plan){.nframes = r->pool->nframes};
    cl_int err = plan_open(pl, r->pages);
    if (err == CL_SUCCESS)
        err = inspector_ready(r);
    /* Eq. 1: work-groups per PAS row = (MEMSIZE / 32) / (AllocSize / TOTAL_WORKGROUPS). */
    double per_group = (double)(r->pages - 1) * r->pool->page_size / (double)r->total_groups;
    double want = (double)r->pool->nframes * r->pool->page_size / 32.0 / (per_group > 0 ? per_group : 1);
    size_t w = 1;
    while ((double)w < want && w < r->total_groups)
        w *= 2;
    if (err == CL_SUCCESS)
        err = plan_range(r->insp, pl, 0, r->total_groups, w, r->insp->rows);
    if (err == CL_OUT_OF_RESOURCES && r->insp->host_over) { /* again with the inspector's exact sets */
        vast_info("kernel '%s': a work-group's host page set exceeds the budget; running the inspector",
                  r->cmd->kernel->name);
        r->insp->host = r->insp->host_over = false;
        free(pl->set);
        free(pl->both);
        vast_partitions_free(pl->parts, pl->n);
        *pl = (struct plan){.nframes = r->pool->nframes};
        err = plan_open(pl, r->pages);
        if (err == CL_SUCCESS)
            err = plan_range(r->insp, pl, 0, r->total_groups, w, r->insp->rows);
    }
    if (err == CL_SUCCESS && pl->open < r->total_groups)
        err = plan_emit(pl, r->total_groups, r->pages);
    free(pl->set);
    free(pl->both);
    pl->set = pl->both = NULL;
    if (err != CL_SUCCESS) {
        vast_partitions_free(pl->parts, pl->n);
        pl->parts = NULL;
        pl->n = 0;
    }
    *w_out = w;
    return err;
}

cl_int vast_partition_plan(struct vast_paged *r, struct vast_partition **parts, size_t *nparts)
{
    uint64_t t0 = vast_now_ns();
    /* Each work-item's data-dependent loads may land on pages of their own, which no page set
     * shows before the faults: a work-group of more work-items than half the frames could
     * not hold what it faults. Independent work-items run in slices that can, from the start
     * (the same slices for the same launch: a plan made with them is kept). */
    while (r->tk->data_dependent_addresses && can_slice(r) &&
           r->local[0] * r->local[1] * r->local[2] * 2 > r->pool->nframes)
        slice_groups(r);
    if (r->slices != 0)
        vast_info("kernel '%s': data-dependent loads in a budget of %zu pages: work-groups run in slices of %zu x "
                  "%zu x %zu work-items", r->cmd->kernel->name, r->pool->nframes, r->local[0], r->local[1],
                  r->local[2]);
    cl_ulong kept_slices = r->slices;
    size_t key_len = 0;
    uint8_t *key = plan_key(r, &key_len);
    *parts = key != NULL ? cache_get(r->cmd->kernel, key, key_len, r->pages, nparts) : NULL;
    if (*parts != NULL) {
        vast_stride_prepare(r, *parts, *nparts);
        free(key);
        r->c.plan_ns += vast_now_ns() - t0;
        vast_info("kernel '%s': %zu partition(s), the plan of its previous launch (same layout, arguments and "
                  "NDRange)", r->cmd->kernel->name, *nparts);
        return CL_SUCCESS;
    }
    struct plan pl = {.nframes = r->pool->nframes, .open = r->total_groups};
    size_t w = 1;
    /* A grid-stride loop that gathers through loaded data: no page set shows what a
     * work-group's whole loop gathers, so work-group partitions would each meet all of it in
     * faults. Iteration ranges from the start keep each partition's gathers small, and a range
     * whose faults outgrow the budget splits (paged.c, split_partition). */
    bool by_iterations = r->tk->iteration_ranges && r->tk->data_dependent_addresses;
    cl_int err = by_iterations ? vast_stride_plan(r, &pl.parts, &pl.n) : plan_once(r, &pl, &w);
    while (err == CL_OUT_OF_RESOURCES && r->insp != NULL && r->insp->group_over && can_slice(r)) {
        slice_groups(r); /* independent work-items: run a work-group in slices */
        vast_info("kernel '%s': a work-group alone exceeds the budget; its work-items are independent, so it "
                  "runs in slices of %zu x %zu x %zu work-items", r->cmd->kernel->name, r->local[0], r->local[1],
                  r->local[2]);
        vast_partition_close(r);
        err = plan_once(r, &pl, &w);
    }
    if (err == CL_OUT_OF_RESOURCES && r->insp != NULL && r->insp->wg_over) { /* loop iterations (stride.c) */
        pl = (struct plan){.nframes = r->pool->nframes, .open = r->total_groups};
        err = vast_stride_plan(r, &pl.parts, &pl.n); /* frees its partitions on failure */
    }
    if (err == CL_SUCCESS && key != NULL && r->slices == kept_slices)
        cache_put(r->cmd->kernel, key, key_len, pl.parts, pl.n, r->pages);
    else
        free(key); /* plans sliced by planning are not kept: the key holds the application's local size */
    *parts = pl.parts;
    *nparts = pl.n;
    uint64_t t1 = vast_now_ns();
    uint64_t other = r->c.inspector_ns + r->c.build_ns;
    r->c.plan_ns += (t1 - t0) - (other < t1 - t0 ? other : 0);
    vast_trace_span(VAST_TRACK_PLAN, r->cmd->kernel->name, t0, t1, "plan");
    if (err == CL_SUCCESS && r->insp->host)
        r->c.host_plans++;
    vast_info("kernel '%s': %zu partition(s) in a budget of %zu pages, %zu work-groups per PAS row, page sets %s",
              r->cmd->kernel->name, pl.n, pl.nframes, w, r->insp != NULL && r->insp->host ? "on the host" : "by the inspector");
    return err;
}

cl_int vast_partition_inspect_iters(struct vast_paged *r, size_t first, size_t end, uint64_t it0, uint64_t it1,
                                    uint8_t *set, bool *more)
{
    cl_int err = inspector_ready(r);
    if (err != CL_SUCCESS)
        return err;
    r->insp->iter_first = it0;
    r->insp->iter_end = it1;
    if (it1 != 0)
        r->insp->host = false; /* host sets know no iteration ranges */
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
