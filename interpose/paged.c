/*
 * paged.c: running the paged kernel of one launch over page sets (launch_int.h). Used for
 * resident paged launches (one partition holding every page) and for partitioned ones.
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
 * to the partition and to a "sticky" set that later partitions get up front, and the faulted
 * work-groups run again. A kernel that is not safe to re-execute (reads and writes one buffer,
 * compound assignments, atomics) has the writable pages of each partition written back before
 * it runs, and restored from the host before a retry. That snapshot lives on the host rather
 * than in spare device frames: it costs PCIe time only for pages that were already dirty and
 * on retries, and it leaves the whole budget to partitions.
 *
 * Fault records: each run starts its fault log from a fresh header (host_tables), so that no
 * record of an earlier run or launch is read as one of its own, and every entry must name a
 * work-group of the run and a page of a buffer that the partition lacks (collect_faults). An
 * access outside every buffer (out of bounds) or a record the run did not write fails the
 * launch with a log line: the work-groups' stores after the fault were dropped, and a launch
 * whose stores were dropped never reports success.
 */
#include "launch_int.h"

#include "api.h"
#include "check.h"
#include "devops_opencl.h"
#include "executor.h"
#include "pagecache.h"
#include "trace.h"
#include "translate.h"
#include "variant.h"
#include "vbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FAULT_CAPACITY 65536u /* 1 MiB: few retries even when faults repeat pages */
#define FAULT_WORDS (TRANSLATE_FAULT_LOG_HEADER_WORDS + TRANSLATE_FAULT_ENTRY_WORDS * FAULT_CAPACITY)
#define MAX_RETRIES 4096 /* each retry adds at least one page, so this only bounds the time */
#define SPLIT_DEPTH 64

size_t vast_set_count(const uint8_t *set, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += set[i] != 0;
    return count;
}

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
    size_t done_pages; /* pages pinned so far (to undo on failure) */
    size_t limit;      /* undo: pages to unpin */
};

static int run_pin(struct vast_paged *r, struct vast_varg *a, size_t start, size_t len, void *ctx)
{
    struct pin_ctx *pc = ctx;
    struct vast_frame_loc *locs = malloc(len * sizeof *locs);
    if (locs == NULL)
        return VAST_PC_ERR_HOST_MEMORY;
    int st = pagecache_make_resident(a->m->pc, a->first + start, len, VAST_PC_PIN, locs);
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
        pagecache_unpin_range(a->m->pc, a->first + start, n);
    pc->limit -= n;
    return pc->limit == 0 ? 1 : 0;
}

static int run_unpin(struct vast_paged *r, struct vast_varg *a, size_t start, size_t len, void *ctx)
{
    (void)r, (void)ctx;
    pagecache_unpin_range(a->m->pc, a->first + start, len);
    return 0;
}

static int run_dirty(struct vast_paged *r, struct vast_varg *a, size_t start, size_t len, void *ctx)
{
    (void)r, (void)ctx;
    if (a->writable)
        pagecache_mark_dirty(a->m->pc, a->first + start, len);
    return 0;
}

static int run_prefetch(struct vast_paged *r, struct vast_varg *a, size_t start, size_t len, void *ctx)
{
    (void)r, (void)ctx;
    return pagecache_make_resident(a->m->pc, a->first + start, len, 0, NULL) == VAST_PC_OK ? 0 : 1;
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
    return pagecache_flush_range(root->pc, lo, hi - lo);
}

/* Rewrite the frames of writable pages from the backing store (flushed before the run). */
static int run_restore(struct vast_paged *r, struct vast_varg *a, size_t start, size_t len, void *ctx)
{
    const uint32_t *lpt = ctx;
    if (!a->writable)
        return 0;
    cl_mem root = vast_mem_root(a->m);
    const uint8_t *host = pagecache_buffer_host(root->pc);
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

/* Pin every page of `set` and enter its frames in lpt; all or nothing. `quiet`: a lack of
 * frames is not logged (the caller makes room and tries again). */
static cl_int pin_set(struct vast_paged *r, const uint8_t *set, uint32_t *lpt, bool quiet)
{
    uint64_t t0 = vast_now_ns();
    struct pin_ctx pc = {lpt, 0, 0};
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

static void prefetch_set(struct vast_paged *r, const uint8_t *set)
{
    uint64_t t0 = vast_now_ns();
    for_each_run(r, set, run_prefetch, NULL); /* best effort: a page that does not fit loads later */
    uint64_t t1 = vast_now_ns();
    r->c.transfer_ns += t1 - t0;
    vast_trace_span(VAST_TRACK_TRANSFER, "prefetch", t0, t1, r->cmd->kernel->name);
}

/* ---- setup ---- */

/* The host side of both slots' page tables and fault-log headers (and the header each run
 * starts from): one mmap'ed block pinned through the page cache's device ops when they can,
 * kept by the calling thread (the device lane's: one per device) across launches and grown
 * when a launch needs more; never freed, like the executor that owns the thread. The
 * transfers around each partition's kernel (page table up, fault header reset, fault header
 * down) then are DMA that needs no host thread; from pageable memory the driver stages them,
 * and the device idled 0.2-0.26 ms between consecutive partitions (H200, MatrixMul trace) even
 * with the next kernel already enqueued. Pinning per launch cost about 0.9 ms (saxpy, 10
 * resident paged launches). Unpinned (no pin_host, or it fails) is correct, only slower.
 * Fault log entries, read only after faults, stay in pageable memory (fault_host).
 *
 * The headers sit at fixed offsets in front of the page tables, whose size follows each
 * launch's pages: a launch with fewer pages than the one before must find nothing of it at
 * the places it reads from. (When the header's start value sat behind the page tables, a
 * larger earlier launch's page table entries became the next launch's "zero" fault count:
 * entries of earlier partitions were read as this run's faults, and this run's were lost or
 * never looked at.) The start header is written again at every launch. */
static _Thread_local struct {
    void *block;
    size_t bytes;
    void *pin;
    struct vast_pool *pool;
} host_cache;

#define HDR_BYTES 64 /* one header (16 bytes) per cache line */

static cl_int host_tables(struct vast_paged *r)
{
    size_t lpt_bytes = (r->pages * sizeof(uint32_t) + 63) & ~(size_t)63;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t bytes = (3 * HDR_BYTES + 2 * lpt_bytes + page - 1) / page * page;
    if (host_cache.block == NULL || host_cache.bytes < bytes || host_cache.pool != r->pool) {
        if (host_cache.pin != NULL)
            pagecache_unpin_host(host_cache.pool, host_cache.pin);
        if (host_cache.block != NULL)
            munmap(host_cache.block, host_cache.bytes);
        host_cache.block = host_cache.pin = NULL;
        if (bytes < ((size_t)1 << 20))
            bytes = (size_t)1 << 20; /* 256K pages' tables without growing */
        void *block = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        VAST_RETURN_IF(block == MAP_FAILED, CL_OUT_OF_HOST_MEMORY, "page tables of a launch (%zu bytes)", bytes);
        memset(block, 0, bytes); /* committed now, not during a transfer */
        vast_host_pin pin = NULL;
        pagecache_pin_host(r->pool, block, bytes, &pin); /* NULL where it cannot */
        host_cache.block = block;
        host_cache.bytes = bytes;
        host_cache.pin = pin;
        host_cache.pool = r->pool;
    }
    char *block = host_cache.block;
    uint32_t *start = (uint32_t *)block;
    memset(start, 0, HDR_BYTES);
    start[1] = FAULT_CAPACITY;
    r->hdr_start = start;
    for (int s = 0; s < 2; s++) {
        r->fault_hdr[s] = (uint32_t *)(block + (1 + s) * HDR_BYTES);
        r->lpt_host[s] = (uint32_t *)(block + 3 * HDR_BYTES + s * lpt_bytes);
    }
    return CL_SUCCESS;
}

/* A real buffer holding `bytes` copied from `host`, written on the queue. Not
 * CL_MEM_COPY_HOST_PTR: PoCL may fill such a buffer lazily on another thread, and a kernel on
 * it then read a zeroed page table (measured: wrong results only with several PoCL threads). */
static cl_mem real_buffer(struct vast_paged *r, size_t bytes, const void *host, cl_int *err)
{
    cl_mem m = r->d->clCreateBuffer(r->cmd->queue->context->backend->shared, CL_MEM_READ_WRITE, bytes, NULL, err);
    if (m != NULL && host != NULL &&
        (*err = r->d->clEnqueueWriteBuffer(r->rq, m, CL_TRUE, 0, bytes, host, 0, NULL, NULL)) != CL_SUCCESS) {
        r->d->clReleaseMemObject(m);
        m = NULL;
    }
    return m;
}

/* Lay the buffer arguments out in the virtual space (page-aligned, from page 1). */
static cl_int layout(struct vast_paged *r)
{
    struct vast_launch_cmd *cmd = r->cmd;
    size_t page = r->pool->page_size, cursor = 1;
    r->va = calloc(cmd->num_args ? cmd->num_args : 1, sizeof *r->va);
    r->arg_va = calloc(cmd->num_args ? cmd->num_args : 1, sizeof *r->arg_va);
    r->arg_const = calloc(cmd->num_args ? cmd->num_args : 1, sizeof *r->arg_const);
    VAST_RETURN_IF(r->va == NULL || r->arg_va == NULL || r->arg_const == NULL, CL_OUT_OF_HOST_MEMORY, "launch layout");
    for (cl_uint i = 0; i < cmd->num_args; i++) {
        cl_mem m = cmd->args[i].vbuf;
        if (m == NULL)
            continue;
        struct vast_varg *a = &r->va[r->nva++];
        a->index = i;
        a->m = m;
        if (vast_vbuf_pages(m, 0, m->size, &a->first, &a->count) != 0)
            return CL_INVALID_MEM_OBJECT;
        a->va_page = cursor;
        cursor += a->count;
        r->arg_va[i] = (uint64_t)a->va_page * page + (m->offset & (page - 1));
        a->writable = vast_variant_arg_written(r->tk, i);
    }
    r->pages = cursor;
    return CL_SUCCESS;
}

/* The local size of a paged launch: the application's, the kernel's required one, or the
 * largest divisor of the first dimension up to 64 (the paged kernel needs an explicit one). */
static void choose_local(struct vast_paged *r)
{
    const struct launch_shape *sh = &r->cmd->sh;
    for (cl_uint i = 0; i < 3; i++)
        r->local[i] = sh->local[i];
    if (sh->local_given)
        return;
    size_t reqd[3] = {0, 0, 0}, max = 64, kmax = 0;
    r->d->clGetKernelWorkGroupInfo(r->pk, r->dev->real, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof reqd, reqd, NULL);
    if (reqd[0] != 0) {
        memcpy(r->local, reqd, sizeof reqd);
        return;
    }
    if (r->d->clGetKernelWorkGroupInfo(r->pk, r->dev->real, CL_KERNEL_WORK_GROUP_SIZE, sizeof kmax, &kmax, NULL) ==
            CL_SUCCESS && kmax > 0 && kmax < max)
        max = kmax;
    for (size_t l = max; l >= 1; l--)
        if (sh->global[0] % l == 0) {
            r->local[0] = l;
            break;
        }
}

/* A kernel's original arguments: virtual addresses for global pointers, real copies for
 * virtual buffers passed as __constant (made once per launch), the recorded values for the rest. */
cl_int vast_paged_set_args(struct vast_paged *r, cl_kernel kernel)
{
    struct vast_launch_cmd *cmd = r->cmd;
    cl_int err = CL_SUCCESS;
    for (cl_uint i = 0; i < cmd->num_args && err == CL_SUCCESS; i++) {
        struct vast_arg *a = &cmd->args[i];
        enum translate_arg_kind kind = i < r->tk->num_args ? r->tk->args[i].kind : TRANSLATE_ARG_SCALAR;
        if (kind == TRANSLATE_ARG_GLOBAL_POINTER) {
            VAST_RETURN_IF(a->vbuf == NULL && a->value != NULL && *(void *const *)a->value != NULL,
                           CL_INVALID_KERNEL_ARGS, "argument %u of '%s' is not a buffer of this context", i,
                           cmd->kernel->name);
            err = r->d->clSetKernelArg(kernel, i, sizeof(cl_ulong), &r->arg_va[i]);
        } else if (a->vbuf != NULL) {
            if (r->arg_const[i] == NULL) {
                int st = pagecache_flush_range(a->vbuf->pc, 0, a->vbuf->size);
                VAST_RETURN_IF(st != VAST_PC_OK, vast_pc_error(st), "flush of a __constant argument");
                r->arg_const[i] = real_buffer(r, a->vbuf->size, pagecache_buffer_host(a->vbuf->pc), &err);
            }
            if (r->arg_const[i] != NULL)
                err = r->d->clSetKernelArg(kernel, i, sizeof(cl_mem), &r->arg_const[i]);
        } else {
            err = r->d->clSetKernelArg(kernel, i, a->size, a->value);
        }
    }
    return err;
}

void vast_paged_geometry(const struct vast_paged *r, cl_ulong4 *gsize, cl_ulong4 *goff)
{
    const struct launch_shape *sh = &r->cmd->sh;
    *gsize = (cl_ulong4){{1, 1, 1, 0}};
    *goff = (cl_ulong4){{0, 0, 0, 0}};
    for (cl_uint i = 0; i < sh->dims; i++) {
        gsize->s[i] = sh->global[i];
        goff->s[i] = sh->offset[i];
    }
}

/* The ABI arguments that stay the same for every partition. */
static cl_int set_abi(struct vast_paged *r)
{
    cl_uint n = r->cmd->num_args + 1; /* after vast_lpt, set per partition */
    cl_int err = CL_SUCCESS;
    for (size_t c = 0; c < TRANSLATE_MAX_POOL_CHUNKS && err == CL_SUCCESS; c++) {
        cl_mem chunk = pagecache_devops_opencl_mem(r->pool->chunks[c < r->pool->nchunks ? c : 0]);
        err = r->d->clSetKernelArg(r->pk, n++, sizeof chunk, &chunk);
    }
    cl_ulong4 gsize, goff;
    vast_paged_geometry(r, &gsize, &goff);
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(r->pk, n++, sizeof(cl_mem), &r->scratch);
    n++; /* vast_faults: per partition, like vast_lpt */
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(r->pk, n++, sizeof gsize, &gsize);
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(r->pk, n++, sizeof goff, &goff);
    return err;
}

cl_int vast_paged_open(struct vast_paged *r, struct vast_launch_cmd *cmd, cl_command_queue rq, struct vast_pool *pool,
                       const struct translate_kernel *tk)
{
    memset(r, 0, sizeof *r);
    r->cmd = cmd;
    r->rq = rq;
    r->sq[0] = r->sq[1] = rq;
    r->dev = cmd->queue->device;
    r->d = cmd->queue->context->backend->dispatch;
    r->pool = pool;
    r->tk = tk;
    VAST_RETURN_IF(pool->nchunks > TRANSLATE_MAX_POOL_CHUNKS, CL_OUT_OF_RESOURCES,
                   "the page cache has %zu chunks; paged kernels address %d", pool->nchunks, TRANSLATE_MAX_POOL_CHUNKS);
    cl_int err = layout(r);
    if (err != CL_SUCCESS)
        return err;
    r->pk = vast_variant_take(cmd->kernel, VAST_VARIANT_PAGED, r->dev);
    VAST_RETURN_IF(r->pk == NULL, CL_OUT_OF_RESOURCES, "kernel '%s' has no paged variant", cmd->kernel->name);
    cl_command_queue_properties props = 0;
    r->d->clGetCommandQueueInfo(rq, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    r->profiling = (props & CL_QUEUE_PROFILING_ENABLE) != 0;
    choose_local(r);
    r->total_groups = 1;
    for (cl_uint i = 0; i < 3; i++) {
        r->groups[i] = cmd->sh.global[i] / r->local[i];
        r->total_groups *= r->groups[i];
    }
    r->sticky = calloc(r->pages, 1);
    void *zeros = calloc(TRANSLATE_SCRATCH_PAGES, pool->page_size);
    for (int s = 0; s < 2; s++)
        r->fault_host[s] = calloc(FAULT_WORDS, 4);
    err = r->sticky && zeros && r->fault_host[0] && r->fault_host[1] ? host_tables(r) : CL_OUT_OF_HOST_MEMORY;
    for (int s = 0; s < 2 && err == CL_SUCCESS; s++)
        r->lpt[s] = real_buffer(r, r->pages * sizeof(uint32_t), NULL, &err);
    if (err == CL_SUCCESS)
        r->scratch = real_buffer(r, TRANSLATE_SCRATCH_PAGES * pool->page_size, zeros, &err);
    for (int s = 0; s < 2 && err == CL_SUCCESS; s++) /* each run writes its header first (hdr_start) */
        r->faults[s] = real_buffer(r, FAULT_WORDS * 4, NULL, &err);
    free(zeros);
    if (err == CL_SUCCESS)
        err = vast_paged_set_args(r, r->pk);
    if (err == CL_SUCCESS)
        err = set_abi(r);
    return err;
}

void vast_paged_close(struct vast_paged *r)
{
    if (r->d == NULL)
        return;
    cl_mem owned[5] = {r->lpt[0], r->lpt[1], r->scratch, r->faults[0], r->faults[1]};
    for (size_t i = 0; i < 5; i++)
        if (owned[i] != NULL)
            r->d->clReleaseMemObject(owned[i]);
    for (cl_uint i = 0; r->arg_const != NULL && i < r->cmd->num_args; i++)
        if (r->arg_const[i] != NULL)
            r->d->clReleaseMemObject(r->arg_const[i]);
    free(r->arg_const);
    vast_variant_give(r->cmd->kernel, VAST_VARIANT_PAGED, r->pk);
    free(r->fault_host[0]);
    free(r->fault_host[1]);
    free(r->sticky);
    vast_partition_close(r);
    free(r->arg_va);
    free(r->va);
}

uint8_t *vast_paged_all_pages(const struct vast_paged *r, size_t *count)
{
    uint8_t *set = calloc(r->pages, 1);
    *count = 0;
    for (size_t i = 0; set != NULL && i < r->nva; i++) {
        memset(set + r->va[i].va_page, 1, r->va[i].count);
        *count += r->va[i].count;
    }
    return set;
}

/* Drivers keep only 32 bits of a launch's offsets (NVIDIA: signed; 2^31 arrives as 2^64 - 2^31)
 * and ids, so the real launches of translated kernels have no global work offset and stay below
 * 2^31 work-items per dimension; the kernel adds the first work-group of its slab (translate.h,
 * vast_slab) and computes ids in 64 bits. */
#define REAL_MAX_ITEMS (((size_t)1 << 31) - 1)

cl_int vast_paged_enqueue(const struct vast_paged *r, cl_command_queue q, cl_kernel k, cl_uint slab_arg, size_t first,
                          size_t end, cl_event *kev)
{
    if (kev != NULL)
        *kev = NULL;
    cl_uint last = r->cmd->sh.dims - 1;
    size_t row = 1; /* work-groups per index of the slowest dimension */
    for (cl_uint i = 0; i < last; i++)
        row *= r->groups[i];
    size_t lo[3] = {0, 0, 0}, hi[3], step[3];
    for (cl_uint i = 0; i < 3; i++) {
        hi[i] = r->groups[i];
        step[i] = REAL_MAX_ITEMS / r->local[i];
    }
    lo[last] = first / row;
    hi[last] = (end + row - 1) / row;
    cl_int err = CL_SUCCESS;
    size_t g[3];
    for (g[2] = lo[2]; g[2] < hi[2]; g[2] += step[2])
        for (g[1] = lo[1]; g[1] < hi[1]; g[1] += step[1])
            for (g[0] = lo[0]; g[0] < hi[0]; g[0] += step[0]) {
                cl_ulong4 slab = {{g[0], g[1], g[2], r->slices}};
                size_t global[3];
                bool only = true; /* the slab's one launch */
                for (cl_uint i = 0; i < 3; i++) {
                    size_t n = hi[i] - g[i] < step[i] ? hi[i] - g[i] : step[i];
                    global[i] = n * r->local[i];
                    only &= g[i] == lo[i] && g[i] + n == hi[i];
                }
                err = r->d->clSetKernelArg(k, slab_arg, sizeof slab, &slab);
                if (err == CL_SUCCESS)
                    err = r->d->clEnqueueNDRangeKernel(q, k, last + 1, NULL, global, r->local, 0, NULL,
                                                       only ? kev : NULL);
                if (err != CL_SUCCESS)
                    return err;
            }
    return err;
}

/* ---- one partition ---- */

/* Upload the LPT of `slot`, reset the slot's fault log header, run work-groups [first, end), read
 * the fault log header; *kev is the kernel's event, *fev the header read's. Each slot has its
 * own page table and fault log, so that a partition can be enqueued behind the previous one
 * while that one's log is still to be read. */
static cl_int enqueue_partition(struct vast_paged *r, int slot, size_t first, size_t end, cl_event *kev, cl_event *fev)
{
    cl_ulong4 cfg = {{r->pool->page_shift, r->pages, first, end}};
    cl_command_queue q = r->sq[slot];
    cl_int err = r->d->clEnqueueWriteBuffer(q, r->lpt[slot], CL_FALSE, 0, r->pages * sizeof(uint32_t),
                                            r->lpt_host[slot], 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = r->d->clEnqueueWriteBuffer(q, r->faults[slot], CL_FALSE, 0, TRANSLATE_FAULT_LOG_HEADER_WORDS * 4,
                                         r->hdr_start, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(r->pk, r->cmd->num_args, sizeof(cl_mem), &r->lpt[slot]);
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(r->pk, r->cmd->num_args + 1 + TRANSLATE_MAX_POOL_CHUNKS + 1, sizeof(cl_mem),
                                   &r->faults[slot]);
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(r->pk, r->cmd->num_args + 1 + TRANSLATE_MAX_POOL_CHUNKS + 4, sizeof cfg, &cfg);
    if (err == CL_SUCCESS)
        err = vast_paged_enqueue(r, q, r->pk, r->cmd->num_args + 1 + TRANSLATE_MAX_POOL_CHUNKS + 5, first, end, kev);
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
        } else {
            fs->wg_lo = wg < fs->wg_lo ? wg : fs->wg_lo;
            fs->wg_hi = wg + 1 > fs->wg_hi ? wg + 1 : fs->wg_hi;
            fs->added += !add[vp];
            add[vp] = 1;
        }
    }
    return err;
}

static void add_to_sticky(struct vast_paged *r, const uint8_t *add)
{
    for (size_t vp = 0; vp < r->pages; vp++)
        if (add[vp] && !r->sticky[vp] && r->nsticky < r->pool->nframes / 4) {
            r->sticky[vp] = 1;
            r->nsticky++;
        }
}

/* Faults of the partition's run over [*first, *end): load the missing pages and say which
 * work-groups to run again (*again, *first, *end), or that the partition with its faulted
 * pages no longer fits and must be split (*split; its writable pages restored first when it
 * is not safe to re-execute). A log that cannot be used fails the launch, loudly. */
static cl_int handle_faults(struct vast_paged *r, struct vast_partition *p, int slot, size_t *first, size_t *end,
                            bool *again, bool *split)
{
    *again = *split = false;
    if (r->fault_hdr[slot][0] == 0)
        return CL_SUCCESS;
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
        add_to_sticky(r, add);
    bool fits = p->count + n <= r->pool->nframes;
    /* else split: own pages only, or halves of its loops' iterations (split_partition) */
    if (err == CL_SUCCESS && !fits && p->end - p->first < 2 && p->sticky == 0 && p->iter_end <= p->iter_first + 1) {
        vast_error("kernel '%s': work-group %zu needs %zu pages with its faulted ones, the device budget holds %zu "
                   "(VAST_DEVICE_MEMORY)",
                   r->cmd->kernel->name, p->first, p->count + n, r->pool->nframes);
        err = CL_OUT_OF_RESOURCES;
    }
    if (err == CL_SUCCESS && r->needs_restore) {
        err = for_each_run(r, p->set, run_restore, lpt) == 0 ? CL_SUCCESS : CL_OUT_OF_RESOURCES;
        if (err == CL_SUCCESS)
            err = r->d->clFinish(r->rq); /* restored before the frames may be unpinned */
    }
    if (err == CL_SUCCESS && !fits) {
        *split = true;
    } else if (err == CL_SUCCESS) {
        err = pin_set(r, add, lpt, false);
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

/* Sticky pages join a partition when they fit beside it. They are counted: a work-group
 * that does not fit the budget beside them runs again with its own pages only, before it may
 * be refused (handle_faults, split_partition). */
static void add_sticky(struct vast_paged *r, struct vast_partition *p)
{
    if (p->own_only || r->nsticky == 0 || p->count + r->nsticky > r->pool->nframes / 4 * 3)
        return;
    for (size_t vp = 0; vp < r->pages; vp++)
        if (r->sticky[vp] && !p->set[vp]) {
            p->set[vp] = 1;
            p->count++;
            p->sticky++;
        }
}

/* A partition's first run, enqueued: at most two are in flight. */
struct flight {
    struct vast_partition *p;
    int slot;
    cl_event kev, fev;
    uint64_t enqueued;
};

/* Pin p's pages into the LPT of its slot; with a snapshot (needs_restore) its writable pages
 * are written back first. `quiet`: see pin_set. */
static cl_int prepare_partition(struct vast_paged *r, struct vast_partition *p, int slot, bool quiet)
{
    memset(r->lpt_host[slot], 0xff, r->pages * sizeof(uint32_t));
    cl_int err = pin_set(r, p->set, r->lpt_host[slot], quiet);
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
    cl_int err = vast_paged_set_iters(r, r->pk, f->p->iter_first, f->p->iter_end);
    if (err == CL_SUCCESS)
        err = enqueue_partition(r, f->slot, first, end, &f->kev, &f->fev);
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
 * the newest) and it lets go of its frames. */
static void release_partition(struct vast_paged *r, struct vast_partition *p)
{
    for_each_run(r, p->set, run_dirty, NULL);
    for_each_run(r, p->set, run_unpin, NULL);
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
        struct flight f = {p, slot, NULL, NULL, 0};
        err = enqueue_flight(r, &f, first, end);
        if (err == CL_SUCCESS)
            err = wait_partition(r, f.kev, f.fev, f.enqueued);
    }
    release_partition(r, p);
    return err;
}

/* Wait for the first run of f and settle it. */
static cl_int land(struct vast_paged *r, struct flight *f, bool *split)
{
    cl_int err = wait_partition(r, f->kev, f->fev, f->enqueued);
    if (err != CL_SUCCESS) {
        release_partition(r, f->p);
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
            release_partition(r, q->p);
        return err != CL_SUCCESS ? err : settle(r, q->p, q->slot, &split[0]);
    }
    *p_landed = true;
    cl_int perr = wait_partition(r, p->kev, p->fev, p->enqueued);
    bool p_faulted = perr == CL_SUCCESS && r->fault_hdr[p->slot][0] != 0;
    release_partition(r, p->p);
    err = settle(r, q->p, q->slot, &split[0]);
    if (err == CL_SUCCESS)
        err = perr;
    if (err == CL_SUCCESS && p_faulted) {
        r->c.partitions--; /* counted once, when settled */
        /* the pages it ran with, no sticky ones: its faults must still name pages it lacks */
        err = prepare_partition(r, p->p, p->slot, false);
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
    bool iter_halves = alone && p->sticky == 0 && p->iter_end > p->iter_first + 1;
    bool own_only = alone && !iter_halves;
    size_t mid = alone ? p->end : p->first + (p->end - p->first) / 2;
    VAST_RETURN_IF(*depth + 2 > SPLIT_DEPTH, CL_OUT_OF_RESOURCES, "kernel '%s': partitions split too often",
                   r->cmd->kernel->name);
    struct vast_partition *h = calloc(2, sizeof *h);
    VAST_RETURN_IF(h == NULL, CL_OUT_OF_HOST_MEMORY, "split");
    h[0] = (struct vast_partition){.first = p->first, .end = mid, .own_only = own_only,
                                   .iter_first = p->iter_first, .iter_end = p->iter_end};
    h[1] = (struct vast_partition){.first = mid, .end = p->end, .iter_first = p->iter_first, .iter_end = p->iter_end};
    if (iter_halves) {
        uint64_t imid = p->iter_first + (p->iter_end - p->iter_first) / 2;
        h[0] = (struct vast_partition){.first = p->first, .end = p->end, .iter_first = p->iter_first, .iter_end = imid};
        h[1] = (struct vast_partition){.first = p->first, .end = p->end, .iter_first = imid, .iter_end = p->iter_end};
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

/* The partitions run in order; a split one is replaced by its halves (a stack in front).
 * While partition i runs, partition i+1's pages are prefetched. A kernel safe to re-execute
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
    size_t next_planned = 0;
    cl_int err = CL_SUCCESS;
    bool pipe = !r->needs_restore;
    cl_command_queue q2 = pipe ? vast_executor_queue2(r->dev) : NULL;
    if (q2 != NULL)
        r->sq[1] = q2;
    struct flight prev = {0}; /* prev.p != NULL: in flight, not yet waited for */
    while (err == CL_SUCCESS) {
        struct vast_partition *p = st.depth            ? st.stack[--st.depth]
                                   : next_planned < nparts ? &parts[next_planned++]
                                                           : NULL;
        if (p == NULL && prev.p == NULL)
            break;
        if (p == NULL) { /* the last one lands; when it splits, its halves run next */
            err = land_or_split(r, &st, &prev);
            prev.p = NULL;
            continue;
        }
        struct flight cur = {p, prev.p != NULL ? 1 - prev.slot : 0, NULL, NULL, 0};
        add_sticky(r, p);
        err = prepare_partition(r, p, cur.slot, prev.p != NULL);
        if (err == CL_OUT_OF_RESOURCES && prev.p != NULL) { /* p does not fit beside prev */
            err = land_or_split(r, &st, &prev);
            prev.p = NULL;
            if (err == CL_SUCCESS)
                err = prepare_partition(r, p, cur.slot, false);
        }
        bool cur_landed = err != CL_SUCCESS;
        if (err == CL_SUCCESS && (err = enqueue_flight(r, &cur, p->first, p->end)) != CL_SUCCESS) {
            release_partition(r, p);
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
            const uint8_t *next = st.depth               ? st.stack[st.depth - 1]->set
                                  : next_planned < nparts ? parts[next_planned].set
                                                          : NULL;
            if (next != NULL)
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
    for (size_t i = 0; i < st.nblocks; i++) {
        free(st.blocks[i][0].set);
        free(st.blocks[i][1].set);
        free(st.blocks[i]);
    }
    free(st.blocks);
    return err;
}
