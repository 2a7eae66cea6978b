/*
 * pipeline.c: running the paged kernel of one launch over its partitions, with faults and
 * retries. Used for resident paged launches (one partition holding every page) and for
 * partitioned ones.
 *
 * Per partition: pin its pages in the page cache, fill the look-ahead page table (LPT), upload
 * it, run the paged kernel on the slab of the NDRange that covers the partition's work-groups
 * (the kernel's guard drops the others), and read the fault log. The pipeline: while the
 * kernel of partition i runs on the launch's queue, the pages of partition i+1 are loaded
 * (not pinned: a prefetch) through the page cache's own queue; partitions are planned so that
 * both fit (partition.c, plan_fits). After the kernel, the pages of writable buffers are marked dirty and
 * unpinned: they are written back only when evicted or read by the host.
 *
 * Faults (data-dependent addresses the inspector could not see): the faulting pages are added
 * to the partition and to a "sticky" set that later partitions get up front (partition.c,
 * vast_plan_add_sticky), and the faulted work-groups run again. A kernel that is not safe to
 * re-execute (reads and writes one buffer, compound assignments, atomics), unless its plan's
 * page sets are exact (no fault to retry: launch.c), has the writable pages of each partition
 * written back before it runs (and the pages that faulted, before the retry that has them),
 * and restored from the host before a retry. That snapshot lives on the host rather
 * than in spare device frames: it costs PCIe time only for pages that were already dirty and
 * on retries, and it leaves the whole budget to partitions. A partition whose faulted pages
 * no longer fit is split in halves whose page sets are inspected again (split_partition).
 *
 * Fault records: each run starts its fault log from a fresh header (paged.c, host_tables), so
 * that no record of an earlier run or launch is read as one of its own, and every entry must
 * name a work-group of the run and a page of a buffer that the partition lacks (collect_faults).
 * An access outside every buffer (out of bounds) or a record the run did not write fails the
 * launch with a log line: the work-groups' stores after the fault were dropped, and a launch
 * whose stores were dropped never reports success.
 *
 * Principal entry point: vast_paged_run.
 * Invariants: a partition's pages stay pinned from prepare_partition until release_partition,
 * so its LPT stays true while its kernel may run; at most two partitions are in flight, one
 * per slot (page table and fault log); a partition whose kernel was enqueued has its writable
 * pages marked dirty before they are unpinned, even after an error.
 * See also: paged.c (the virtual space, the ABI and the enqueue of one slab), partition.c (the
 * plan, sticky pages), pas.c (page sets of split halves), pagecache/README.md (what a pin
 * guarantees).
 */
#include "launch_int.h"

#include "api.h"
#include "chain.h"
#include "check.h"
#include "devops_opencl.h"
#include "executor.h"
#include "pagecache.h"
#include "../base/clock.h"
#include "../base/config.h"
#include "../base/trace.h"
#include "translate.h"
#include "vbuf.h"

#include <stdlib.h>
#include <string.h>

#define MAX_RETRIES 4096 /* each retry adds at least one page, so this only bounds the time */
#define SPLIT_DEPTH 64

/* ---- page runs of a set ---- */

/* Calls fn for each run of consecutive pages of `set` inside one buffer argument; stops at the
 * first nonzero return and returns it. */
typedef int (*run_fn)(struct vast_paged *r, struct vast_varg *a, size_t start, size_t len, void *ctx);

static int for_each_run(struct vast_paged *r, const uint8_t *set, run_fn fn, void *ctx)
{
    for (size_t i = 0; i < r->nva; i++) {
        struct vast_varg *a = &r->va[i];
        const uint8_t *s = set + a->va_page;
        for (size_t p = 0; p < a->count;) {
            if (!s[p]) {
                p++;
                continue;
            }
            size_t q = p;
            while (q < a->count && s[q])
                q++;
            int rc = fn(r, a, p, q - p, ctx);
            if (rc != 0)
                return rc;
            p = q;
        }
    }
    return 0;
}

struct pin_ctx {
    uint32_t *lpt;
    const uint8_t *cover; /* pages the partition overwrites: no load (cover.c); NULL: none */
    size_t done_pages; /* pages pinned so far (to undo on failure) */
    size_t limit;      /* undo: pages to unpin */
};

/* Pins pages [start, start + len) of a; covered ones, in runs of their own, without a load. */
static int run_pin(struct vast_paged *r, struct vast_varg *a, size_t start, size_t len, void *ctx)
{
    struct pin_ctx *pc = ctx;
    struct vast_frame_loc *locs = malloc(len * sizeof *locs);
    if (locs == NULL)
        return VAST_PC_ERR_HOST_MEMORY;
    const uint8_t *cv = pc->cover != NULL ? pc->cover + a->va_page + start : NULL;
    int st = VAST_PC_OK;
    for (size_t p = 0, q; p < len && st == VAST_PC_OK; p = q) {
        bool no_load = cv != NULL && cv[p];
        for (q = p + 1; q < len && (cv != NULL && cv[q]) == no_load; q++)
            ;
        st = pagecache_make_resident(a->pc, a->first + start + p, q - p,
                                     VAST_PC_PIN | (no_load ? VAST_PC_NO_LOAD : 0), locs + p);
        if (st != VAST_PC_OK && p > 0)
            pagecache_unpin_range(a->pc, a->first + start, p); /* all or nothing, as one call */
    }
    if (st == VAST_PC_OK) {
        for (size_t p = 0; p < len; p++) {
            uint32_t f = locs[p].frame;
            pc->lpt[a->va_page + start + p] = pagecache_frame_entry(r->pool, f);
        }
        pc->done_pages += len;
    }
    free(locs);
    return st;
}

static int run_unpin_limited(struct vast_paged *r, struct vast_varg *a, size_t start, size_t len, void *ctx)
{
    (void)r;
    struct pin_ctx *pc = ctx;
    size_t n = len < pc->limit ? len : pc->limit;
    if (n > 0)
        pagecache_unpin_range(a->pc, a->first + start, n);
    pc->limit -= n;
    return pc->limit == 0 ? 1 : 0;
}

static int run_unpin(struct vast_paged *r, struct vast_varg *a, size_t start, size_t len, void *ctx)
{
    (void)r, (void)ctx;
    pagecache_unpin_range(a->pc, a->first + start, len);
    return 0;
}

/* ctx: pages not to mark (covered pages of a failed run: they leave unwritten), or NULL. */
static int run_dirty(struct vast_paged *r, struct vast_varg *a, size_t start, size_t len, void *ctx)
{
    const uint8_t *skip = ctx != NULL ? (const uint8_t *)ctx + a->va_page + start : NULL;
    (void)r;
    if (!a->writable)
        return 0;
    for (size_t p = 0, q; p < len; p = q) {
        for (q = p + 1; q < len && (skip != NULL && skip[q]) == (skip != NULL && skip[p]); q++)
            ;
        if (skip == NULL || !skip[p])
            pagecache_mark_dirty(a->pc, a->first + start + p, q - p);
    }
    return 0;
}

/* ctx: pages the partition overwrites (not loaded), or NULL. */
static int run_prefetch(struct vast_paged *r, struct vast_varg *a, size_t start, size_t len, void *ctx)
{
    const uint8_t *skip = ctx != NULL ? (const uint8_t *)ctx + a->va_page + start : NULL;
    (void)r;
    int rc = 0;
    for (size_t p = 0, q; p < len && rc == 0; p = q) {
        for (q = p + 1; q < len && (skip != NULL && skip[q]) == (skip != NULL && skip[p]); q++)
            ;
        if (skip == NULL || !skip[p])
            rc = pagecache_make_resident(a->pc, a->first + start + p, q - p, 0, NULL) == VAST_PC_OK ? 0 : 1;
    }
    return rc;
}

/* Root bytes [lo, hi) of pages [first, first+len) of a's root buffer. */
static void root_bytes(const struct vast_paged *r, cl_mem root, size_t first, size_t len, size_t *lo, size_t *hi)
{
    *lo = first * r->pool->page_size;
    *hi = (first + len) * r->pool->page_size;
    if (*hi > root->size)
        *hi = root->size;
}

static int run_flush(struct vast_paged *r, struct vast_varg *a, size_t start, size_t len, void *ctx)
{
    (void)ctx;
    if (!a->writable)
        return 0;
    cl_mem root = vast_mem_root(a->m);
    size_t lo, hi;
    root_bytes(r, root, a->first + start, len, &lo, &hi);
    return pagecache_flush_range(vast_mem_pc(root, r->cmd->dev), lo, hi - lo);
}

/* Rewrite the frames of writable pages from the backing store (flushed before the run). */
static int run_restore(struct vast_paged *r, struct vast_varg *a, size_t start, size_t len, void *ctx)
{
    const uint32_t *lpt = ctx;
    if (!a->writable)
        return 0;
    cl_mem root = vast_mem_root(a->m);
    const uint8_t *host = pagecache_buffer_host(vast_mem_pc(root, r->cmd->dev));
    for (size_t p = 0; p < len; p++) {
        uint32_t e = lpt[a->va_page + start + p];
        size_t lo, hi;
        root_bytes(r, root, a->first + start + p, 1, &lo, &hi);
        cl_mem chunk = pagecache_devops_opencl_mem(pagecache_entry_chunk(r->pool, e));
        size_t off = pagecache_entry_offset(r->pool, e);
        if (r->d->clEnqueueWriteBuffer(r->rq, chunk, CL_FALSE, off, hi - lo, host + lo, 0, NULL, NULL) != CL_SUCCESS)
            return VAST_PC_ERR_TRANSFER;
    }
    return 0;
}

/* The pages partition p's work-groups overwrite, into r->cover[slot] (cover.c); false: none. */
static bool partition_cover(struct vast_paged *r, const struct vast_partition *p, int slot)
{
    if (r->cover_rule < 0 || (r->cover[slot] == NULL && (r->cover[slot] = malloc(r->pages)) == NULL))
        return r->cover_any[slot] = false;
    /* all iterations: a range after the first skips the stores of loops that ended before it */
    return r->cover_any[slot] = p->iter_first == 0 && p->iter_end == 0 && !p->own_only &&
                                vast_partition_cover(r, p->first, p->end, r->cover[slot]);
}

/* Pin every page of `set` and enter its frames in lpt; all or nothing. `quiet`: a lack of
 * frames is not logged (the caller makes room and tries again). */
static cl_int pin_set(struct vast_paged *r, const uint8_t *set, const uint8_t *cover, uint32_t *lpt, bool quiet)
{
    uint64_t t0 = vast_now_ns();
    struct pin_ctx pc = {lpt, cover, 0, 0};
    int st = for_each_run(r, set, run_pin, &pc);
    if (st != VAST_PC_OK && pc.done_pages > 0) {
        pc.limit = pc.done_pages;
        for_each_run(r, set, run_unpin_limited, &pc);
    }
    uint64_t t1 = vast_now_ns();
    r->c.transfer_ns += t1 - t0;
    vast_trace_span(VAST_TRACK_TRANSFER, "pin", t0, t1, r->cmd->kernel->name);
    if (st != VAST_PC_OK && !(quiet && st == VAST_PC_ERR_NO_FRAMES))
        vast_error("kernel '%s': cannot make a partition's pages resident: %s", r->cmd->kernel->name,
                   pagecache_status_string(st));
    return st == VAST_PC_OK ? CL_SUCCESS : st == VAST_PC_ERR_NO_FRAMES ? CL_OUT_OF_RESOURCES : vast_pc_error(st);
}

static void prefetch_set(struct vast_paged *r, const struct vast_partition *p)
{
    uint64_t t0 = vast_now_ns();
    const uint8_t *skip = partition_cover(r, p, 2) ? r->cover[2] : NULL;
    for_each_run(r, p->set, run_prefetch, (void *)skip); /* best effort: a page that does not fit loads later */
    uint64_t t1 = vast_now_ns();
    r->c.transfer_ns += t1 - t0;
    vast_trace_span(VAST_TRACK_TRANSFER, "prefetch", t0, t1, r->cmd->kernel->name);
}

/* ---- nothing half done: the written buffers before a launch that may be refused ---- */

/* A partitioned launch whose page sets miss data-dependent pages learns at run time, from
 * faults, that a work-group needs more than the budget and its overdraft: it is refused then,
 * after earlier partitions wrote their pages (some already written back by evictions). So the
 * bytes its writable buffers hold before the launch are copied aside (after a flush: the host
 * store is then current) and, when the run fails, written back through the host-write protocol
 * (pagecache_begin_host_write: wholly covered pages are dropped, partly covered ones updated),
 * so the buffers are exactly as they were. A copy on the host, not on the device: it costs a
 * memcpy of what the launch may write, only for launches that can fault, and no frames.
 * Buffers over VAST_UNDO_MAX bytes in all are not copied (a refusal then leaves what ran). */
#define VAST_UNDO_MAX ((size_t)1 << 30)

static void undo_free(struct vast_undo *u)
{
    for (size_t i = 0; i < u->n; i++)
        free(u->saved[i].bytes);
    free(u->saved);
    *u = (struct vast_undo){0};
}

cl_int vast_paged_undo_open(struct vast_paged *r, struct vast_undo *u)
{
    *u = (struct vast_undo){0};
    size_t total = 0;
    u->saved = calloc(r->nva ? r->nva : 1, sizeof *u->saved);
    VAST_RETURN_IF(u->saved == NULL, CL_OUT_OF_HOST_MEMORY, "undo");
    for (size_t i = 0; i < r->nva; i++) {
        const struct vast_varg *a = &r->va[i];
        if (!a->writable)
            continue;
        cl_mem root = vast_mem_root(a->m);
        size_t lo, hi, k = 0;
        root_bytes(r, root, a->first, a->count, &lo, &hi);
        while (k < u->n && u->saved[k].root != root)
            k++;
        if (k == u->n)
            u->saved[u->n++] = (struct vast_saved){root, lo, hi, NULL};
        u->saved[k].lo = lo < u->saved[k].lo ? lo : u->saved[k].lo;
        u->saved[k].hi = hi > u->saved[k].hi ? hi : u->saved[k].hi;
    }
    for (size_t k = 0; k < u->n; k++)
        total += u->saved[k].hi - u->saved[k].lo;
    if (total > VAST_UNDO_MAX) {
        vast_info("kernel '%s': its written buffers (%zu MiB) are not kept for a refusal at run time", r->cmd->kernel->name,
                  total >> 20);
        undo_free(u);
        return CL_SUCCESS;
    }
    for (size_t k = 0; k < u->n; k++) {
        struct vast_saved *sv = &u->saved[k];
        struct vast_pc_buffer *pc = vast_mem_pc(sv->root, r->cmd->queue->device);
        int st = pagecache_flush_range(pc, sv->lo, sv->hi - sv->lo);
        sv->bytes = st == VAST_PC_OK ? malloc(sv->hi - sv->lo ? sv->hi - sv->lo : 1) : NULL;
        if (sv->bytes == NULL) {
            undo_free(u);
            return st == VAST_PC_OK ? CL_OUT_OF_HOST_MEMORY : vast_pc_error(st);
        }
        memcpy(sv->bytes, (const uint8_t *)pagecache_buffer_host(pc) + sv->lo, sv->hi - sv->lo);
    }
    return CL_SUCCESS;
}

void vast_paged_undo_close(struct vast_paged *r, struct vast_undo *u, bool restore)
{
    for (size_t k = 0; restore && k < u->n; k++) {
        struct vast_saved *sv = &u->saved[k];
        struct vast_pc_buffer *pc = vast_mem_pc(sv->root, r->cmd->queue->device);
        struct vast_host_write *w = NULL;
        int st = pagecache_begin_host_write(pc, sv->lo, sv->hi - sv->lo, &w);
        if (st == VAST_PC_OK) {
            memcpy((uint8_t *)pagecache_buffer_host(pc) + sv->lo, sv->bytes, sv->hi - sv->lo);
            st = pagecache_end_host_write(w);
        }
        if (st != VAST_PC_OK)
            vast_error("kernel '%s': a refused launch's buffer could not be put back as it was: %s",
                       r->cmd->kernel->name, pagecache_status_string(st));
    }
    if (restore && u->n > 0)
        vast_info("kernel '%s': refused at run time; its written buffers are back as they were before the launch",
                  r->cmd->kernel->name);
    undo_free(u);
}

/* ---- the overdraft ---- */

/* A partition of `pages` pages (one work-group, or one loop iteration of one, that no split
 * makes smaller) runs on frames borrowed past the budget (pagecache/README.md "Overdraft"):
 * the loan grows to what the largest such partition needs and ends with the run
 * (vast_paged_run). CL_OUT_OF_RESOURCES, logged, past the pool's overdraft. */
static cl_int overdraft_for(struct vast_paged *r, size_t pages, size_t group)
{
    size_t nframes = r->pool->nframes;
    if (pages <= nframes + r->lent)
        return CL_SUCCESS;
    size_t need = pages - nframes;
    if (need > r->pool->overdraft || pagecache_overdraft_begin(r->pool, need) != VAST_PC_OK) {
        vast_plan_refuse_log(r, "work-group", group, pages, " at run time (its faulted pages included)");
        return CL_OUT_OF_RESOURCES;
    }
    vast_info("kernel '%s': a partition of work-group %zu has %zu pages, the budget holds %zu: %zu frame(s) (%zu KiB) "
              "borrowed past it until the launch ends (VAST_OVERDRAFT)",
              r->cmd->kernel->name, group, pages, nframes, need, need * r->pool->page_size >> 10);
    r->c.overdrafts = 1;
    r->c.overdraft_bytes = (uint64_t)need * r->pool->page_size;
    r->lent = need;
    return CL_SUCCESS;
}

/* The run is over: the borrowed frames go back (their pages written back and dropped). */
static cl_int overdraft_end(struct vast_paged *r)
{
    if (r->lent == 0)
        return CL_SUCCESS;
    int st = pagecache_overdraft_end(r->pool);
    r->lent = 0;
    if (st != VAST_PC_OK) {
        vast_error("kernel '%s': cannot give back the frames borrowed past the budget: %s", r->cmd->kernel->name,
                   pagecache_status_string(st));
        return vast_pc_error(st);
    }
    return CL_SUCCESS;
}

/* ---- one partition ---- */

/* Upload the LPT of `slot`, reset the slot's fault log header, run work-groups [first, end) (reps
 * times, for a chain), read the fault log header; *kev is the kernel's event, *fev the header read's. Each slot has its
 * own page table and fault log, so that a partition can be enqueued behind the previous one
 * while that one's log is still to be read. */
static cl_int enqueue_partition(struct vast_paged *r, cl_kernel pk, int slot, size_t first, size_t end, size_t reps,
                                cl_event *kev, cl_event *fev)
{
    cl_ulong4 cfg = {{r->pool->page_shift, r->pages, first, end}};
    cl_command_queue q = r->sq[slot];
    cl_int err = vast_paged_set_chunks(r); /* a chunk the partition's pages use for the first time */
    if (err == CL_SUCCESS)
        err = r->d->clEnqueueWriteBuffer(q, r->lpt[slot], CL_FALSE, 0, r->pages * sizeof(uint32_t),
                                            r->lpt_host[slot], 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = r->d->clEnqueueWriteBuffer(q, r->faults[slot], CL_FALSE, 0, TRANSLATE_FAULT_LOG_HEADER_WORDS * 4,
                                         r->hdr_start, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(pk, r->cmd->num_args, sizeof(cl_mem), &r->lpt[slot]);
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(pk, r->cmd->num_args + 1 + TRANSLATE_MAX_POOL_CHUNKS + 1, sizeof(cl_mem),
                                   &r->faults[slot]);
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(pk, r->cmd->num_args + 1 + TRANSLATE_MAX_POOL_CHUNKS + 4, sizeof cfg, &cfg);
    /* a chain's partition (chain.c): the same kernel once per launch, in launch order, one log */
    for (size_t i = 0; i < reps && err == CL_SUCCESS; i++)
        err = vast_paged_enqueue(r, q, pk, r->cmd->num_args + 1 + TRANSLATE_MAX_POOL_CHUNKS + 5, first, end,
                                 reps == 1 ? kev : NULL);
    if (reps != 1)
        *kev = NULL;
    if (err == CL_SUCCESS)
        err = r->d->clEnqueueReadBuffer(q, r->faults[slot], CL_FALSE, 0, TRANSLATE_FAULT_LOG_HEADER_WORDS * 4,
                                        r->fault_hdr[slot], 0, NULL, fev);
    if (err == CL_SUCCESS)
        err = r->d->clFlush(q);
    return err;
}

bool vast_kernel_span(const struct _cl_icd_dispatch *d, cl_event kev, uint64_t enqueued, uint64_t *t0, uint64_t *t1)
{
    cl_ulong q = 0, s = 0, e = 0;
    if (d->clGetEventProfilingInfo(kev, CL_PROFILING_COMMAND_QUEUED, sizeof q, &q, NULL) != CL_SUCCESS ||
        d->clGetEventProfilingInfo(kev, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL) != CL_SUCCESS ||
        d->clGetEventProfilingInfo(kev, CL_PROFILING_COMMAND_END, sizeof e, &e, NULL) != CL_SUCCESS || e < s || s < q)
        return false;
    *t0 = enqueued + (s - q);
    *t1 = enqueued + (e - q);
    return true;
}

/* Wait for a partition's kernel; account its time (device time on a profiling queue). Kernels
 * of consecutive partitions overlap (two queues): only the part of a span after the end of
 * the previous one counts, so kernel time is the time the device ran the kernel at all. */
static cl_int wait_partition(struct vast_paged *r, cl_event kev, cl_event fev, uint64_t enqueued)
{
    cl_int err = r->d->clWaitForEvents(1, &fev);
    uint64_t t1 = vast_now_ns(), t0 = enqueued;
    if (r->profiling && kev != NULL) /* NULL: several launches, timed by the host */
        vast_kernel_span(r->d, kev, enqueued, &t0, &t1);
    uint64_t from = t0 > r->kernel_end ? t0 : r->kernel_end;
    r->c.kernel_ns += t1 > from ? t1 - from : 0;
    r->kernel_end = t1 > r->kernel_end ? t1 : r->kernel_end;
    vast_trace_span(VAST_TRACK_KERNEL, r->cmd->kernel->name, t0, t1, "partition");
    if (kev != NULL)
        r->d->clReleaseEvent(kev);
    r->d->clReleaseEvent(fev);
    return err;
}

/* The launch's buffer argument holding virtual page vp, or NULL (outside every buffer). */
static const struct vast_varg *varg_of(const struct vast_paged *r, uint64_t vp)
{
    size_t lo = 0, hi = r->nva;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (vp < r->va[mid].va_page)
            hi = mid;
        else if (vp >= r->va[mid].va_page + r->va[mid].count)
            lo = mid + 1;
        else
            return &r->va[mid];
    }
    return NULL;
}

/* What the fault log of one run over work-groups [first, end) says. */
struct fault_scan {
    uint32_t count;        /* faults the run counted */
    size_t added;          /* pages of buffers the partition lacks (marked in `add`) */
    size_t wg_lo, wg_hi;   /* the work-groups that logged them */
    bool overflow;         /* more faults than entries: every work-group runs again */
    const char *bad;       /* NULL, or why the log cannot be used: the launch fails */
    size_t bad_wg;         /* ... the entry that says so */
    uint64_t bad_vp;
};

static void scan_bad(struct fault_scan *fs, const char *why, size_t wg, uint64_t vp)
{
    if (fs->bad == NULL) {
        fs->bad = why;
        fs->bad_wg = wg;
        fs->bad_vp = vp;
    }
}

/* Read the fault log of `slot`. Every entry must name a work-group of the run and a page of a
 * buffer that the partition lacks: a page outside every buffer is an access out of bounds,
 * anything else is a record that this run did not write. Either way the faulted work-groups'
 * later stores were dropped, so the caller fails the launch rather than report success. */
static cl_int collect_faults(struct vast_paged *r, int slot, const uint8_t *set, size_t first, size_t end,
                             uint8_t *add, struct fault_scan *fs)
{
    const uint32_t *hdr = r->fault_hdr[slot];
    uint32_t *log = r->fault_host[slot];
    *fs = (struct fault_scan){.count = hdr[0], .wg_lo = SIZE_MAX, .overflow = hdr[0] > FAULT_CAPACITY};
    r->c.faults += fs->count;
    if (hdr[1] != FAULT_CAPACITY || hdr[2] != 0 || hdr[3] != 0) {
        scan_bad(fs, "its header is not the one the run started from", first, 0);
        return CL_SUCCESS;
    }
    uint32_t n = fs->overflow ? FAULT_CAPACITY : fs->count;
    /* The log's host side is made for the first run that faults: two 1 MiB callocs in every
     * launch's open took 1.0-1.3 ms on an H200's host when they came from a heap page-faulting
     * them in (forced paged NBody, samples/results/h200-2026-11-30-paged/). */
    if (log == NULL && (log = r->fault_host[slot] = malloc((size_t)FAULT_WORDS * 4)) == NULL) {
        vast_error("kernel '%s': no host memory for a fault log", r->cmd->kernel->name);
        return CL_OUT_OF_HOST_MEMORY;
    }
    cl_int err = r->d->clEnqueueReadBuffer(r->sq[slot], r->faults[slot], CL_TRUE, TRANSLATE_FAULT_LOG_HEADER_WORDS * 4,
                                           (size_t)n * TRANSLATE_FAULT_ENTRY_WORDS * 4,
                                           log + TRANSLATE_FAULT_LOG_HEADER_WORDS, 0, NULL, NULL);
    for (uint32_t k = 0; err == CL_SUCCESS && k < n; k++) {
        const uint32_t *e = log + TRANSLATE_FAULT_LOG_HEADER_WORDS + k * TRANSLATE_FAULT_ENTRY_WORDS;
        /* word 3: the kind in bits 1..0, bits 61..32 of the work-group above them (translate.h) */
        size_t wg = e[0] | (uint64_t)(e[3] >> 2) << 32, kind = e[3] & 3;
        uint64_t vp = e[1] | (uint64_t)e[2] << 32;
        if (wg < first || wg >= end || (kind != 1 && kind != 2)) {
            scan_bad(fs, "an entry names no work-group of the run", wg, vp);
        } else if (varg_of(r, vp) == NULL) {
            scan_bad(fs, vp == 0 ? "below its first buffer argument (out of bounds)"
                                 : "outside its buffer arguments (out of bounds)", wg, vp);
        } else if (set[vp]) {
            scan_bad(fs, "an entry names a page the partition holds", wg, vp);
        } else if (r->sets_exact) { /* no snapshot to retry from (launch.c): a defect, said so */
            scan_bad(fs, "a page the host page sets did not show (VAST's description of the kernel is wrong)",
                     wg, vp);
        } else {
            fs->wg_lo = wg < fs->wg_lo ? wg : fs->wg_lo;
            fs->wg_hi = wg + 1 > fs->wg_hi ? wg + 1 : fs->wg_hi;
            fs->added += !add[vp];
            add[vp] = 1;
        }
    }
    return err;
}

/* Faults of the partition's run over [*first, *end): load the missing pages and say which
 * work-groups to run again (*again, *first, *end), or that the partition with its faulted
 * pages no longer fits and must be split (*split; its writable pages restored first when it
 * is not safe to re-execute). A log that cannot be used fails the launch, loudly. */
/* A partition of all iterations from iter_first of a kernel with iteration ranges: when one
 * work-group of it outgrows the budget with its faults, a first part of its iterations runs
 * alone and the rest after it (split_partition). */
static bool peelable(const struct vast_paged *r, const struct vast_partition *p)
{
    return r->tk->iteration_ranges && p->iter_end == 0;
}

static cl_int handle_faults(struct vast_paged *r, struct vast_partition *p, int slot, size_t *first, size_t *end,
                            bool *again, bool *split)
{
    *again = *split = false;
    if (r->fault_hdr[slot][0] == 0)
        return CL_SUCCESS;
    /* A chain's partition has exact page sets: a fault is out of bounds, and the launches after
     * the faulting one ran on what its dropped stores left (chain.c) */
    VAST_RETURN_IF(r->reps[slot] > 1, CL_OUT_OF_RESOURCES,
                   "kernel '%s': a fault in a partition run for %zu launches of a chain; they fail",
                   r->cmd->kernel->name, r->reps[slot]);
    uint32_t *lpt = r->lpt_host[slot];
    uint8_t *add = calloc(r->pages, 1);
    VAST_RETURN_IF(add == NULL, CL_OUT_OF_HOST_MEMORY, "fault set");
    struct fault_scan fs;
    cl_int err = collect_faults(r, slot, p->set, *first, *end, add, &fs);
    size_t n = fs.added;
    if (err == CL_SUCCESS && fs.bad != NULL) {
        vast_error("kernel '%s': work-group %zu faulted on virtual page %llu, %s (%u faults in the run): the "
                   "work-group's stores after that were dropped, so the launch fails",
                   r->cmd->kernel->name, fs.bad_wg, (unsigned long long)fs.bad_vp, fs.bad, fs.count);
        err = CL_OUT_OF_RESOURCES;
    }
    if (err == CL_SUCCESS)
        vast_plan_note_faults(r, add);
    bool fits = p->count + n <= r->pool->nframes + r->lent;
    /* else split: own pages only, or halves of its loops' iterations (split_partition); a unit
     * no split makes smaller borrows frames past the budget, or is refused */
    if (err == CL_SUCCESS && !fits && p->end - p->first < 2 && p->sticky == 0 && !peelable(r, p) &&
        p->iter_end <= p->iter_first + 1) {
        err = overdraft_for(r, p->count + n, p->first);
        fits = err == CL_SUCCESS;
    }
    if (err == CL_SUCCESS && r->needs_restore) {
        err = for_each_run(r, p->set, run_restore, lpt) == 0 ? CL_SUCCESS : CL_OUT_OF_RESOURCES;
        if (err == CL_SUCCESS)
            err = r->d->clFinish(r->rq); /* restored before the frames may be unpinned */
    }
    if (err == CL_SUCCESS && !fits) {
        *split = true;
    } else if (err == CL_SUCCESS) {
        err = pin_set(r, add, NULL, lpt, false);
        /* The snapshot a later retry restores from must hold the faulted pages too: this
         * partition never wrote them (its stores there went to the sink), but the host copy
         * of a page dirty from an earlier partition is older than its frame. */
        if (err == CL_SUCCESS && r->needs_restore && for_each_run(r, add, run_flush, NULL) != 0) {
            for_each_run(r, add, run_unpin, NULL);
            err = CL_OUT_OF_RESOURCES;
        }
        for (size_t vp = 0; err == CL_SUCCESS && vp < r->pages; vp++)
            p->set[vp] |= add[vp];
        p->count += err == CL_SUCCESS ? n : 0;
        if (fs.overflow || r->needs_restore) { /* every work-group again */
            *first = p->first;
            *end = p->end;
        } else { /* safe to re-execute: only the faulted work-groups again */
            *first = fs.wg_lo;
            *end = fs.wg_hi;
        }
        *again = err == CL_SUCCESS;
    }
    r->c.retries += *again || *split;
    free(add);
    return err;
}

/* A partition's first run, enqueued: at most two are in flight. */
struct flight {
    struct vast_partition *p;
    int slot;
    cl_event kev, fev;
    uint64_t enqueued;
    size_t reps; /* launches it runs: 1, or more for a chain (chain.c) */
};

/* Pin p's pages into the LPT of its slot; with a snapshot (needs_restore) its writable pages
 * are written back first. `quiet`: see pin_set. `whole`: all of p's work-groups run next, so
 * the pages they overwrite need no load (cover.c); a partition pinned again for the retry of
 * some of its work-groups loads everything. */
static cl_int prepare_partition(struct vast_paged *r, struct vast_partition *p, int slot, bool quiet, bool whole)
{
    memset(r->lpt_host[slot], 0xff, r->pages * sizeof(uint32_t));
    r->cover_any[slot] = false;
    const uint8_t *cover = whole && partition_cover(r, p, slot) ? r->cover[slot] : NULL;
    cl_int err = pin_set(r, p->set, cover, r->lpt_host[slot], quiet);
    if (err == CL_SUCCESS && r->needs_restore && for_each_run(r, p->set, run_flush, NULL) != 0) {
        for_each_run(r, p->set, run_unpin, NULL);
        err = CL_OUT_OF_RESOURCES;
    }
    return err;
}

/* Enqueue a run of work-groups [first, end) of f's partition (all of them at first, the
 * faulted ones in a retry from settle). */
static cl_int enqueue_flight(struct vast_paged *r, struct flight *f, size_t first, size_t end)
{
    f->kev = f->fev = NULL;
    f->enqueued = vast_now_ns();
    /* a resumable kernel's range runs its ranges build; everything else the build without the
     * machinery (whole launches: the same iterations as the original) */
    bool ranged = r->pkr != NULL && (f->p->iter_first != 0 || f->p->iter_end != 0);
    cl_kernel pk = ranged ? r->pkr : r->pk;
    cl_int err = vast_paged_set_iters(r, pk, false, f->p->iter_first, f->p->iter_end);
    r->reps[f->slot] = f->reps;
    if (err == CL_SUCCESS)
        err = enqueue_partition(r, pk, f->slot, first, end, f->reps, &f->kev, &f->fev);
    if (err != CL_SUCCESS) {
        cl_event ev[2] = {f->kev, f->fev};
        for (int i = 0; i < 2; i++)
            if (ev[i] != NULL)
                r->d->clReleaseEvent(ev[i]);
        r->d->clFinish(r->sq[f->slot]);
    }
    return err;
}

/* A partition is done: its writable pages are dirty (even after an error: the device copy is
 * the newest), but for pages it got without a load when its run failed (`ok` false): those
 * leave unwritten (the page cache drops them at the last unpin) and the host keeps their bytes
 * from before the launch. Then it lets go of its frames. */
static void release_partition(struct vast_paged *r, struct vast_partition *p, int slot, bool ok)
{
    for_each_run(r, p->set, run_dirty, !ok && r->cover_any[slot] ? r->cover[slot] : NULL);
    for_each_run(r, p->set, run_unpin, NULL);
    r->cover_any[slot] = false;
    r->c.partitions++;
}

/* After a completed run of p (pinned, LPT in slot): its faults are loaded and the faulted
 * work-groups run again until none fault (or p must be split); then p is released. */
static cl_int settle(struct vast_paged *r, struct vast_partition *p, int slot, bool *split)
{
    size_t first = p->first, end = p->end;
    cl_int err = CL_SUCCESS;
    for (int attempt = 0; err == CL_SUCCESS; attempt++) {
        bool again = false;
        err = handle_faults(r, p, slot, &first, &end, &again, split);
        if (err != CL_SUCCESS || !again)
            break;
        if (attempt >= MAX_RETRIES) {
            vast_error("kernel '%s': still faulting after %d retries", r->cmd->kernel->name, MAX_RETRIES);
            err = CL_OUT_OF_RESOURCES;
            break;
        }
        struct flight f = {p, slot, NULL, NULL, 0, 1};
        err = enqueue_flight(r, &f, first, end);
        if (err == CL_SUCCESS)
            err = wait_partition(r, f.kev, f.fev, f.enqueued);
    }
    release_partition(r, p, slot, err == CL_SUCCESS);
    return err;
}

/* Wait for the first run of f and settle it. */
static cl_int land(struct vast_paged *r, struct flight *f, bool *split)
{
    cl_int err = wait_partition(r, f->kev, f->fev, f->enqueued);
    if (err != CL_SUCCESS) {
        release_partition(r, f->p, f->slot, false);
        return err;
    }
    return settle(r, f->p, f->slot, split);
}

/* Land q while p, enqueued behind it, may still run. A fault of q (data-dependent addresses,
 * or out of bounds) needs frames that p holds: p then completes and is released first, q is
 * settled, and p's own faults after it, with its pages pinned again. Work-groups of one
 * launch are unordered and the kernel is safe to re-execute, so q's retries may follow p.
 * *p_landed says whether p was landed here too. */
static cl_int land_behind(struct vast_paged *r, struct flight *q, struct flight *p, bool split[2], bool *p_landed)
{
    *p_landed = false;
    cl_int err = wait_partition(r, q->kev, q->fev, q->enqueued);
    if (err != CL_SUCCESS || r->fault_hdr[q->slot][0] == 0) {
        if (err != CL_SUCCESS)
            release_partition(r, q->p, q->slot, false);
        return err != CL_SUCCESS ? err : settle(r, q->p, q->slot, &split[0]);
    }
    *p_landed = true;
    cl_int perr = wait_partition(r, p->kev, p->fev, p->enqueued);
    bool p_faulted = perr == CL_SUCCESS && r->fault_hdr[p->slot][0] != 0;
    release_partition(r, p->p, p->slot, perr == CL_SUCCESS);
    err = settle(r, q->p, q->slot, &split[0]);
    if (err == CL_SUCCESS)
        err = perr;
    if (err == CL_SUCCESS && p_faulted) {
        r->c.partitions--; /* counted once, when settled */
        /* the pages it ran with, no sticky ones: its faults must still name pages it lacks */
        err = prepare_partition(r, p->p, p->slot, false, false);
        if (err == CL_SUCCESS)
            err = settle(r, p->p, p->slot, &split[1]);
    }
    return err;
}

/* Split p in two halves with their own page sets (inspected again), pushed on the stack; a
 * single work-group is pushed again alone, with its own pages only. */
static cl_int split_partition(struct vast_paged *r, const struct vast_partition *p, struct vast_partition **stack,
                              size_t *depth)
{
    /* One work-group: halves of its loops' iterations where it has them (stride.c) and no
     * pages of other partitions, else once more with its own pages only. */
    bool alone = p->end - p->first < 2;
    bool peel = alone && p->sticky == 0 && peelable(r, p);
    bool iter_halves = alone && p->sticky == 0 && (peel || p->iter_end > p->iter_first + 1);
    bool own_only = alone && !iter_halves;
    size_t mid = alone ? p->end : p->first + (p->end - p->first) / 2;
    VAST_RETURN_IF(*depth + 2 > SPLIT_DEPTH, CL_OUT_OF_RESOURCES, "kernel '%s': partitions split too often",
                   r->cmd->kernel->name);
    struct vast_partition *h = calloc(2, sizeof *h);
    VAST_RETURN_IF(h == NULL, CL_OUT_OF_HOST_MEMORY, "split");
    h[0] = (struct vast_partition){.first = p->first, .end = mid, .own_only = own_only,
                                   .iter_first = p->iter_first, .iter_end = p->iter_end};
    h[1] = (struct vast_partition){.first = mid, .end = p->end, .iter_first = p->iter_first, .iter_end = p->iter_end};
    if (peel && p->iter_first == 0)
        vast_info("kernel '%s': work-group %zu exceeds the budget with its faulted pages; its loop runs in "
                  "iteration ranges (peeled from its start, doubling)", r->cmd->kernel->name, p->first);
    if (iter_halves) { /* of a range; of all iterations: a first part, doubling from one at each peel */
        uint64_t c = p->iter_peel != 0 ? p->iter_peel : 1;
        uint64_t imid = peel ? p->iter_first + c : p->iter_first + (p->iter_end - p->iter_first) / 2;
        h[0] = (struct vast_partition){.first = p->first, .end = p->end, .iter_first = p->iter_first, .iter_end = imid};
        h[1] = (struct vast_partition){.first = p->first, .end = p->end, .iter_first = imid, .iter_end = p->iter_end,
                                       .iter_peel = c * 2};
    }
    cl_int err = CL_SUCCESS;
    for (int k = 0; k < 2 - own_only && err == CL_SUCCESS; k++) {
        h[k].set = calloc(r->pages, 1);
        err = h[k].set == NULL ? CL_OUT_OF_HOST_MEMORY
                               : vast_partition_inspect_iters(r, h[k].first, h[k].end, h[k].iter_first,
                                                              h[k].iter_end, h[k].set, NULL);
        h[k].count = h[k].set ? vast_set_count(h[k].set, r->pages) : 0;
    }
    if (err != CL_SUCCESS) {
        free(h[0].set);
        free(h[1].set);
        free(h);
        return err;
    }
    if (!own_only)
        stack[(*depth)++] = &h[1]; /* h[0] runs first; h owns both (freed with h[0]) */
    stack[(*depth)++] = &h[0];
    return CL_SUCCESS;
}

/* The partitions still to run in front of the plan: split halves, on a stack. blocks owns
 * them (two per block) until the run ends. */
struct run_stack {
    struct vast_partition *stack[SPLIT_DEPTH];
    size_t depth;
    struct vast_partition **blocks;
    size_t nblocks;
};

/* A split partition's halves go on the stack. */
static cl_int push_split(struct vast_paged *r, struct run_stack *st, const struct vast_partition *p)
{
    struct vast_partition **grown = realloc(st->blocks, (st->nblocks + 1) * sizeof *st->blocks);
    if (grown == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    st->blocks = grown;
    cl_int err = split_partition(r, p, st->stack, &st->depth);
    if (err == CL_SUCCESS)
        grown[st->nblocks++] = st->stack[st->depth - 1]; /* h[0], which starts the block */
    return err;
}

/* Land f; when it must be split, its halves go on the stack. */
static cl_int land_or_split(struct vast_paged *r, struct run_stack *st, struct flight *f)
{
    bool split = false;
    cl_int err = land(r, f, &split);
    return err == CL_SUCCESS && split ? push_split(r, st, f->p) : err;
}

/* The planned partitions as a run takes them: in order, or (r->claim: one member device's
 * share of a merged device's launch, merge.c) claimed one at a time from the launch's shared
 * plan, the next one when it is prefetched. The last four taken, for dropping their sets.
 * A chain (r->chain, chain.c): each partition runs `reps` launches, the leader's and its
 * members'; after the first pass, a second one over the first `limit` partitions for the
 * members that joined late. A merged device's chain was closed and found disjoint before
 * its members' shares started (merge.c): one pass, every partition for every launch. */
struct planned {
    struct vast_partition *parts;
    size_t nparts, next;
    bool backwards; /* from the last partition to the first (serpentine) */
    struct vast_partition *ahead; /* claimed for the prefetch, not taken yet */
    size_t ahead_step;            /* its place in its pass */
    struct vast_partition *taken[4];
    size_t ntaken;
    struct vast_chain *chain;
    bool disjoint; /* vast_chain_disjoint said so (checked once a member has joined) */
    bool second;
    size_t limit;
    size_t reps; /* launches the partition taken last runs */
};

static struct vast_partition *planned_peek(struct vast_paged *r, struct planned *pl, bool ahead)
{
    if (pl->ahead == NULL && pl->chain != NULL && r->claim == NULL && !pl->second && pl->next == pl->nparts) {
        pl->limit = vast_chain_close_pass(pl->chain);
        pl->second = true;
        pl->next = 0;
    }
    if (pl->ahead == NULL && r->claim != NULL) {
        pl->ahead = r->claim(r->claim_ctx, ahead);
    } else if (pl->ahead == NULL && pl->next < (pl->second ? pl->limit : pl->nparts)) {
        pl->ahead_step = pl->next++;
        pl->ahead = &pl->parts[pl->backwards ? pl->nparts - 1 - pl->ahead_step : pl->ahead_step];
    }
    return pl->ahead;
}

static struct vast_partition *planned_take(struct vast_paged *r, struct planned *pl)
{
    struct vast_partition *p = planned_peek(r, pl, false);
    pl->ahead = NULL;
    pl->reps = 1;
    if (p != NULL && pl->chain != NULL && r->claim != NULL) /* closed before dispatch: one count */
        pl->reps = vast_chain_close_all(pl->chain);
    else if (p != NULL && pl->chain != NULL)
        pl->reps = pl->second ? vast_chain_again(pl->chain, pl->ahead_step)
                              : vast_chain_take(pl->chain, pl->ahead_step);
    /* Once two launches would share a partition (the first such take: no member ran yet), the
     * plan must keep written pages apart; else the members run on their own, after it. */
    if (pl->reps > 1 && !pl->disjoint && !(pl->disjoint = vast_chain_disjoint(r, pl->parts, pl->nparts))) {
        vast_chain_end(r->cmd, false, CL_SUCCESS);
        pl->chain = r->chain = NULL;
        pl->reps = 1;
        if (pl->second) { /* the leader ran every partition: the second pass was its members' */
            pl->limit = 0;
            p = NULL;
        }
    }
    if (p != NULL)
        pl->taken[pl->ntaken++ & 3] = p;
    return p;
}

static int run_resident(struct vast_paged *r, struct vast_varg *a, size_t start, size_t len, void *ctx)
{
    (void)r;
    *(size_t *)ctx += pagecache_resident_pages(a->pc, a->first + start, len);
    return 0;
}

/* Whether the plan runs from its last partition to its first: when more of the last one's
 * pages are resident than of the first one's. A plan over more data than the budget, run
 * forwards launch after launch, finds at each start that the least recently used pages are the
 * first partition's, evicted while the last ones loaded: every page loads again. Run
 * backwards, the next launch starts where the last one ended (a serpentine), on the resident
 * partitions, so a launch that repeats over data twice the budget loads about half of it.
 * Work-groups may run in any order; iterations of one work-item (iteration ranges) and a
 * merged device's claims keep theirs. The sets are unpacked here (dropped again as the run
 * goes). */
static bool run_backwards(struct vast_paged *r, struct vast_partition *parts, size_t nparts)
{
    if (nparts < 2 || r->claim != NULL || r->sequential || !vast_config_get()->serpentine ||
        vast_plan_ranged(parts, nparts))
        return false;
    size_t first = 0, last = 0;
    if (vast_partition_unpack(&parts[0], r->pages) != CL_SUCCESS ||
        vast_partition_unpack(&parts[nparts - 1], r->pages) != CL_SUCCESS)
        return false;
    for_each_run(r, parts[0].set, run_resident, &first);
    for_each_run(r, parts[nparts - 1].set, run_resident, &last);
    vast_partition_drop_set(&parts[last > first ? 0 : nparts - 1]); /* the one that runs last */
    return last > first;
}

/* The partitions run in order (or backwards: run_backwards); a split one is replaced by its
 * halves (a stack in front). While partition i runs, partition i+1's pages are prefetched. A kernel safe to re-execute
 * has partition i+1 pinned and enqueued before i is waited for (the plan makes consecutive
 * partitions fit together; when they do not, i lands first), on the device lane's second
 * queue (slot 1; slot 0 on the launch's): i+1's work-groups start while i's last ones drain,
 * as the work-groups of one NDRange may. Measured on the H200 (MatrixMul, 33 partitions):
 * 0.15 ms of idle device between partitions when i+1 waited for the host, 0.03 ms once
 * enqueued behind i, and a kernel in 32 slabs on one queue at 1.19x its whole-range time
 * (each kernel's tail: its last wave drains alone). A kernel that needs its writable pages
 * snapshotted runs one partition at a time, on one queue. */
cl_int vast_paged_run(struct vast_paged *r, struct vast_partition *parts, size_t nparts)
{
    struct run_stack st = {.depth = 0};
    struct planned pl = {.parts = parts, .nparts = nparts, .backwards = run_backwards(r, parts, nparts),
                         .chain = r->chain, .disjoint = r->claim != NULL};
    cl_int err = CL_SUCCESS;
    r->c.backwards += pl.backwards;
    bool pipe = !r->needs_restore && !r->sequential;
    cl_command_queue q2 = pipe ? vast_executor_queue2(r->dev) : NULL;
    if (q2 != NULL)
        r->sq[1] = q2;
    struct flight prev = {0}; /* prev.p != NULL: in flight, not yet waited for */
    while (err == CL_SUCCESS) {
        bool from_plan = st.depth == 0;
        struct vast_partition *p = st.depth ? st.stack[--st.depth] : planned_take(r, &pl);
        if (p == NULL && prev.p == NULL)
            break;
        /* Planned sets are packed (partition.c): p's is unpacked for its run, and the one three
         * behind, landed by now (prev is at most the last one), is dropped again, so a run
         * holds at most four bytemaps however many partitions its plan has. */
        if (p != NULL && (err = vast_partition_unpack(p, r->pages)) != CL_SUCCESS)
            continue;
        /* (a chain's second pass takes partitions again: never the one in flight or this one) */
        struct vast_partition *old = pl.ntaken >= 4 ? pl.taken[(pl.ntaken - 4) & 3] : NULL;
        if (p != NULL && from_plan && old != NULL && old != p && old != prev.p)
            vast_partition_drop_set(old);
        if (p == NULL) { /* the last one lands; when it splits, its halves run next */
            err = land_or_split(r, &st, &prev);
            prev.p = NULL;
            continue;
        }
        struct flight cur = {p, prev.p != NULL ? 1 - prev.slot : 0, NULL, NULL, 0, from_plan ? pl.reps : 1};
        vast_plan_add_sticky(r, p);
        if (p->count > r->pool->nframes + r->lent && (err = overdraft_for(r, p->count, p->first)) != CL_SUCCESS)
            continue;
        err = prepare_partition(r, p, cur.slot, prev.p != NULL, true);
        if (err == CL_OUT_OF_RESOURCES && prev.p != NULL) { /* p does not fit beside prev */
            err = land_or_split(r, &st, &prev);
            prev.p = NULL;
            if (err == CL_SUCCESS)
                err = prepare_partition(r, p, cur.slot, false, true);
        }
        bool cur_landed = err != CL_SUCCESS;
        if (err == CL_SUCCESS && (err = enqueue_flight(r, &cur, p->first, p->end)) != CL_SUCCESS) {
            release_partition(r, p, cur.slot, false);
            cur_landed = true;
        }
        if (prev.p != NULL) {
            bool split[2] = {false, false}, landed = false;
            cl_int e = err == CL_SUCCESS ? land_behind(r, &prev, &cur, split, &landed) : land(r, &prev, &split[0]);
            cur_landed = cur_landed || landed;
            err = err != CL_SUCCESS ? err : e;
            if (err == CL_SUCCESS && split[0])
                err = push_split(r, &st, prev.p);
            if (err == CL_SUCCESS && split[1])
                err = push_split(r, &st, p);
            prev.p = NULL;
        }
        if (!cur_landed) {
            struct vast_partition *next = st.depth ? st.stack[st.depth - 1] : planned_peek(r, &pl, true);
            if (next != NULL && vast_partition_unpack(next, r->pages) == CL_SUCCESS)
                prefetch_set(r, next);
            if (pipe)
                prev = cur;
            else
                err = land_or_split(r, &st, &cur);
        }
    }
    if (prev.p != NULL) { /* after an error */
        bool s = false;
        land(r, &prev, &s);
    }
    if (r->sq[1] != r->rq)
        r->d->clFinish(r->sq[1]);
    cl_int oerr = overdraft_end(r);
    err = err != CL_SUCCESS ? err : oerr;
    for (size_t i = 0; i < st.nblocks; i++) {
        free(st.blocks[i][0].set);
        free(st.blocks[i][1].set);
        free(st.blocks[i]);
    }
    free(st.blocks);
    return err;
}
