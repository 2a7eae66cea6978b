/*
 * paged.c: the virtual address space of one launch and the kernel ABI of its translated
 * kernels (translate.h).
 *
 * Every buffer argument is laid out page-aligned in one virtual space from virtual page 1
 * (layout; page 0 stays unmapped, so a null pointer faults); a global pointer argument
 * becomes its virtual address. The paged and inspector kernels take the original arguments
 * (vast_paged_set_args) followed by the ABI's: the page table (LPT), the pool's chunks, the
 * scratch frame, the fault log, the original NDRange (vast_paged_geometry), the partition's
 * configuration, the slab (vast_paged_enqueue) and, for kernels with grid-stride loops, the
 * iteration range (vast_paged_set_iters). This file makes the launch's real objects (page
 * tables, scratch, fault logs, the host side of the tables: host_tables) and enqueues a
 * translated kernel over a range of work-groups; what runs when is pipeline.c's.
 *
 * Principal entry points: vast_paged_open / vast_paged_close, vast_paged_set_args,
 * vast_paged_geometry, vast_paged_enqueue, vast_paged_set_iters, vast_paged_all_pages.
 * Invariants: virtual pages of different arguments never share a page; real launches have no
 * global work offset and stay below 2^31 work-items per dimension (REAL_MAX_ITEMS) and run
 * exactly the work-groups of their range (boxes: launch_range); a fault
 * log's header is the one each run starts from (hdr_start).
 * See also: pipeline.c (runs partitions over this space), pas.c (the inspector's runs),
 * launch_int.h (struct vast_paged), translate.h (the ABI on the kernel side).
 */
#include "launch_int.h"

#include "api.h"
#include "check.h"
#include "devops_opencl.h"
#include "executor.h"
#include "pagecache.h"
#include "../base/clock.h"
#include "../base/trace.h"
#include "translate.h"
#include "variant.h"
#include "vbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
#define HOST_BLOCK_MIN ((size_t)1 << 20) /* 256K pages' tables without growing */

/* The calling thread's block, at least `bytes` for pool's launches. */
static cl_int host_block(struct vast_pool *pool, size_t bytes)
{
    if (host_cache.block == NULL || host_cache.bytes < bytes || host_cache.pool != pool) {
        if (host_cache.pin != NULL)
            pagecache_unpin_host(host_cache.pool, host_cache.pin);
        if (host_cache.block != NULL)
            munmap(host_cache.block, host_cache.bytes);
        host_cache.block = host_cache.pin = NULL;
        if (bytes < HOST_BLOCK_MIN)
            bytes = HOST_BLOCK_MIN;
        void *block = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        VAST_RETURN_IF(block == MAP_FAILED, CL_OUT_OF_HOST_MEMORY, "page tables of a launch (%zu bytes)", bytes);
        memset(block, 0, bytes); /* committed now, not during a transfer */
        vast_host_pin pin = NULL;
        pagecache_pin_host(pool, block, bytes, &pin); /* NULL where it cannot */
        host_cache.block = block;
        host_cache.bytes = bytes;
        host_cache.pin = pin;
        host_cache.pool = pool;
    }
    return CL_SUCCESS;
}

static cl_int host_tables(struct vast_paged *r)
{
    size_t lpt_bytes = (r->pages * sizeof(uint32_t) + 63) & ~(size_t)63;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    cl_int err = host_block(r->pool, (3 * HDR_BYTES + 2 * lpt_bytes + page - 1) / page * page);
    if (err != CL_SUCCESS)
        return err;
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
        a->pc = vast_mem_pc(m, cmd->dev);
        if (pagecache_page_range(a->pc, 0, m->size, &a->first, &a->count) != 0)
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
    for (int b = 0; b < 2; b++) { /* both builds of a resumable kernel run it */
        cl_kernel k = b == 0 ? r->pk : r->pkr;
        if (k != NULL && r->d->clGetKernelWorkGroupInfo(k, r->dev->real, CL_KERNEL_WORK_GROUP_SIZE, sizeof kmax, &kmax,
                                                        NULL) == CL_SUCCESS && kmax > 0 && kmax < max)
            max = kmax;
    }
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
                struct vast_pc_buffer *pc = vast_mem_pc(a->vbuf, cmd->dev);
                int st = pagecache_flush_range(pc, 0, a->vbuf->size);
                VAST_RETURN_IF(st != VAST_PC_OK, vast_pc_error(st), "flush of a __constant argument");
                r->arg_const[i] = real_buffer(r, a->vbuf->size, pagecache_buffer_host(pc), &err);
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

/* The chunk arguments (vast_chunk0..3) of a kernel: the chunks of `used` (bit c: chunk c has
 * held a frame), the scratch frame for the others. Only chunks that hold pages go to the
 * driver: NVIDIA's OpenCL commits a buffer, all of it, when a kernel first takes it, and the
 * pool's chunks are made at the budget (an H200's default: four of up to 35 GiB). Given every
 * chunk, the first paged launch of forced paged NBody (8 MiB of data) spent 2.7-3.8 ms in its
 * clEnqueueNDRangeKernel against 0.04 ms with one chunk
 * (samples/results/h200-2026-11-30-paged/), and the process held the whole budget. */
static cl_int set_chunk_args(struct vast_paged *r, cl_kernel kernel, uint32_t used)
{
    cl_uint n = r->cmd->num_args + 1; /* after vast_lpt, set per partition */
    cl_int err = CL_SUCCESS;
    for (size_t c = 0; c < TRANSLATE_MAX_POOL_CHUNKS && err == CL_SUCCESS; c++) {
        cl_mem chunk = c < r->pool->nchunks && (used >> c & 1u) ? pagecache_devops_opencl_mem(r->pool->chunks[c])
                                                                : r->scratch;
        err = r->d->clSetKernelArg(kernel, n++, sizeof chunk, &chunk);
    }
    return err;
}

cl_int vast_paged_set_chunks(struct vast_paged *r)
{
    uint32_t used = pagecache_chunks_used(r->pool);
    if (used == r->chunks_set)
        return CL_SUCCESS;
    cl_int err = CL_SUCCESS;
    for (int b = 0; b < 2 && err == CL_SUCCESS; b++) {
        cl_kernel k = b == 0 ? r->pk : r->pkr;
        if (k != NULL)
            err = set_chunk_args(r, k, used);
    }
    if (err == CL_SUCCESS)
        r->chunks_set = used;
    return err;
}

/* The ABI arguments that stay the same for every partition (the chunks but for those used
 * later: vast_paged_set_chunks). */
static cl_int set_abi(struct vast_paged *r, cl_kernel kernel)
{
    cl_uint n = r->cmd->num_args + 1 + TRANSLATE_MAX_POOL_CHUNKS;
    cl_int err = set_chunk_args(r, kernel, r->chunks_set);
    cl_ulong4 gsize, goff;
    vast_paged_geometry(r, &gsize, &goff);
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(kernel, n++, sizeof(cl_mem), &r->scratch);
    n++; /* vast_faults: per partition, like vast_lpt */
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(kernel, n++, sizeof gsize, &gsize);
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(kernel, n++, sizeof goff, &goff);
    return err;
}

/* What planning needs: the virtual space, the paged kernel (its work-group size), the
 * work-group grid and the sticky pages. */
static cl_int open_plan(struct vast_paged *r, struct vast_launch_cmd *cmd, cl_command_queue rq, struct vast_pool *pool,
                        const struct translate_kernel *tk)
{
    memset(r, 0, sizeof *r);
    r->cmd = cmd;
    r->rq = rq;
    r->sq[0] = r->sq[1] = rq;
    r->dev = cmd->dev;
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
    if (tk->resumable) { /* its launches in iteration ranges run the build with the machinery */
        r->pkr = vast_variant_take(cmd->kernel, VAST_VARIANT_RANGES, r->dev);
        VAST_RETURN_IF(r->pkr == NULL, CL_OUT_OF_RESOURCES, "kernel '%s' has no paged variant for iteration ranges",
                       cmd->kernel->name);
    }
    cl_command_queue_properties props = 0;
    if (rq != NULL)
        r->d->clGetCommandQueueInfo(rq, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    r->profiling = (props & CL_QUEUE_PROFILING_ENABLE) != 0;
    choose_local(r);
    r->total_groups = 1;
    for (cl_uint i = 0; i < 3; i++) {
        r->groups[i] = cmd->sh.global[i] / r->local[i];
        r->total_groups *= r->groups[i];
    }
    r->sticky = calloc(r->pages, 1);
    VAST_RETURN_IF(r->sticky == NULL, CL_OUT_OF_HOST_MEMORY, "sticky pages of a launch");
    return CL_SUCCESS;
}

/* The scratch frame: the target of faulted accesses, for the paged and inspector kernels. One
 * per device, made by its first paged launch (or vast_paged_prepare) and kept while the
 * library is loaded: its zero page is never written (translate.h), and what faulted
 * work-groups store in its sink is garbage to every launch alike. Made per launch, its
 * blocking write cost every paged launch 0.2-0.6 ms on an H200
 * (samples/results/h200-2026-11-30-paged/, p1). Written on q. */
static cl_mem device_scratch(cl_device_id dev, struct vast_pool *pool, cl_command_queue q, cl_int *err)
{
    const struct _cl_icd_dispatch *d = dev->backend->dispatch;
    *err = CL_SUCCESS;
    pthread_mutex_lock(&dev->obj.lock);
    if (dev->scratch == NULL) {
        size_t bytes = TRANSLATE_SCRATCH_PAGES * pool->page_size;
        void *zeros = calloc(1, bytes);
        cl_mem m = NULL;
        if (zeros == NULL)
            *err = CL_OUT_OF_HOST_MEMORY;
        else
            m = d->clCreateBuffer(dev->backend->shared, CL_MEM_READ_WRITE, bytes, NULL, err);
        if (m != NULL && (*err = d->clEnqueueWriteBuffer(q, m, CL_TRUE, 0, bytes, zeros, 0, NULL, NULL)) != CL_SUCCESS) {
            d->clReleaseMemObject(m);
            m = NULL;
        }
        free(zeros);
        dev->scratch = m;
    }
    cl_mem m = dev->scratch;
    pthread_mutex_unlock(&dev->obj.lock);
    if (m == NULL && *err == CL_SUCCESS)
        *err = CL_OUT_OF_RESOURCES;
    return m;
}

static cl_int open_scratch(struct vast_paged *r)
{
    cl_int err;
    r->scratch = device_scratch(r->dev, r->pool, r->dev->pool_queue, &err); /* made with the pool */
    VAST_RETURN_IF(r->scratch == NULL, err, "scratch frame of %s", r->dev->name);
    return CL_SUCCESS;
}

struct prepare {
    pthread_mutex_t lock;
    pthread_cond_t done;
    cl_uint running;
};

struct prepare_one {
    struct prepare *all;
    cl_device_id dev;
};

/* On a device's lane (vast_paged_prepare): the lane's host tables, the scratch frame, and a
 * read of one word of the pool's first chunk, which the first frames come from: NVIDIA's
 * OpenCL allocates a buffer whole at its first transfer (about 1 ms for an H200's 35 GiB
 * chunk, n5 of samples/results/h200-2026-11-30-paged/), which the first load paid. Each step
 * is what the first paged launch would do itself; a failure leaves it to that launch. */
static void prepare_job(void *arg, cl_command_queue lane)
{
    struct prepare_one *one = arg;
    cl_device_id dev = one->dev;
    cl_int err;
    struct vast_pool *pool = vast_device_pool(dev, &err);
    if (pool != NULL && host_block(pool, HOST_BLOCK_MIN) == CL_SUCCESS &&
        device_scratch(dev, pool, lane, &err) != NULL && pool->nchunks > 0) {
        cl_uint word;
        cl_mem chunk = pagecache_devops_opencl_mem(pool->chunks[0]);
        (void)dev->backend->dispatch->clEnqueueReadBuffer(lane, chunk, CL_TRUE, 0, sizeof word, &word, 0, NULL, NULL);
    }
    pthread_mutex_lock(&one->all->lock);
    one->all->running--;
    pthread_cond_broadcast(&one->all->done);
    pthread_mutex_unlock(&one->all->lock);
}

/* Waits for the jobs: made in the background they ran into the application's first commands
 * after clBuildProgram (forced paged NBody's writes waited 2.8 ms for the lane's pins and the
 * chunk's commit, and the sample took longer than unprepared: t2 of
 * samples/results/h200x2-2026-11-30-multigpu/); a native build's allocations happen inside
 * the call too. */
void vast_paged_prepare(cl_device_id dev)
{
    struct prepare all = {.lock = PTHREAD_MUTEX_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};
    struct prepare_one one[8];
    cl_uint n = dev->num_members > 1 ? dev->num_members : 1;
    for (cl_uint i = 0; i < n && i < 8; i++) {
        cl_device_id m = n > 1 ? dev->members[i] : dev;
        one[i] = (struct prepare_one){&all, m};
        if (!m->is_root || m->backend->shared == NULL || atomic_exchange(&m->paged_prepared, true))
            continue;
        pthread_mutex_lock(&all.lock);
        all.running++;
        pthread_mutex_unlock(&all.lock);
        if (vast_executor_job(m, prepare_job, &one[i]) != CL_SUCCESS) { /* the first launch does it all */
            pthread_mutex_lock(&all.lock);
            all.running--;
            pthread_mutex_unlock(&all.lock);
        }
    }
    pthread_mutex_lock(&all.lock);
    while (all.running > 0)
        pthread_cond_wait(&all.done, &all.lock);
    pthread_mutex_unlock(&all.lock);
}

cl_int vast_paged_open_plan(struct vast_paged *r, struct vast_launch_cmd *cmd, struct vast_pool *pool,
                            const struct translate_kernel *tk)
{
    return open_plan(r, cmd, NULL, pool, tk);
}

cl_int vast_paged_plan_queue(struct vast_paged *r)
{
    if (r->rq != NULL)
        return CL_SUCCESS;
    struct vast_backend *be = r->cmd->queue->context->backend;
    cl_int err = CL_SUCCESS;
    cl_command_queue q = r->d->clCreateCommandQueue(be->shared, r->dev->real, 0, &err);
    if (q == NULL)
        return err != CL_SUCCESS ? err : CL_OUT_OF_RESOURCES;
    r->rq = r->sq[0] = r->sq[1] = q;
    r->owns_rq = true;
    return open_scratch(r);
}

cl_int vast_paged_open(struct vast_paged *r, struct vast_launch_cmd *cmd, cl_command_queue rq, struct vast_pool *pool,
                       const struct translate_kernel *tk)
{
    cl_int err = open_plan(r, cmd, rq, pool, tk);
    if (err != CL_SUCCESS)
        return err;
    err = host_tables(r); /* (fault_host: made by the first run that faults, pipeline.c) */
    for (int s = 0; s < 2 && err == CL_SUCCESS; s++)
        r->lpt[s] = real_buffer(r, r->pages * sizeof(uint32_t), NULL, &err);
    if (err == CL_SUCCESS)
        err = open_scratch(r);
    for (int s = 0; s < 2 && err == CL_SUCCESS; s++) /* each run writes its header first (hdr_start) */
        r->faults[s] = real_buffer(r, FAULT_WORDS * 4, NULL, &err);
    r->chunks_set = pagecache_chunks_used(pool);
    for (int b = 0; b < 2 && err == CL_SUCCESS; b++) {
        cl_kernel k = b == 0 ? r->pk : r->pkr;
        if (k != NULL)
            err = vast_paged_set_args(r, k);
        if (k != NULL && err == CL_SUCCESS)
            err = set_abi(r, k);
    }
    return err;
}

void vast_paged_close(struct vast_paged *r)
{
    if (r->d == NULL)
        return;
    cl_mem owned[6] = {r->lpt[0], r->lpt[1], r->faults[0], r->faults[1], r->spill[0], r->spill[1]};
    for (size_t i = 0; i < 6; i++)
        if (owned[i] != NULL)
            r->d->clReleaseMemObject(owned[i]);
    for (cl_uint i = 0; r->arg_const != NULL && i < r->cmd->num_args; i++)
        if (r->arg_const[i] != NULL)
            r->d->clReleaseMemObject(r->arg_const[i]);
    free(r->arg_const);
    vast_variant_give(r->cmd->kernel, VAST_VARIANT_PAGED, r->pk, r->dev);
    vast_variant_give(r->cmd->kernel, VAST_VARIANT_RANGES, r->pkr, r->dev);
    free(r->fault_host[0]);
    free(r->fault_host[1]);
    free(r->sticky);
    for (int i = 0; i < 3; i++)
        free(r->cover[i]);
    free(r->cover_arg);
    free(r->arg_va);
    free(r->va);
    if (r->owns_rq)
        r->d->clReleaseCommandQueue(r->rq);
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

struct box_launch {
    const struct vast_paged *r;
    cl_command_queue q;
    cl_kernel k;
    cl_uint slab_arg;
    unsigned launches;
    cl_event *kev; /* the event of the range's one launch, when it has one */
};

/* Launch the box of work-groups [lo, hi) per dimension, in real launches below 2^31 items. */
static cl_int launch_box(struct box_launch *b, const size_t lo[3], const size_t hi[3])
{
    const struct vast_paged *r = b->r;
    cl_uint dims = r->cmd->sh.dims;
    size_t step[3], g[3];
    for (cl_uint i = 0; i < 3; i++)
        step[i] = REAL_MAX_ITEMS / r->local[i];
    cl_int err = CL_SUCCESS;
    for (g[2] = lo[2]; g[2] < hi[2]; g[2] += step[2])
        for (g[1] = lo[1]; g[1] < hi[1]; g[1] += step[1])
            for (g[0] = lo[0]; g[0] < hi[0]; g[0] += step[0]) {
                cl_ulong4 slab = {{g[0], g[1], g[2], r->slices}};
                size_t global[3];
                for (cl_uint i = 0; i < 3; i++)
                    global[i] = (hi[i] - g[i] < step[i] ? hi[i] - g[i] : step[i]) * r->local[i];
                cl_event ev = NULL;
                err = r->d->clSetKernelArg(b->k, b->slab_arg, sizeof slab, &slab);
                if (err == CL_SUCCESS)
                    err = r->d->clEnqueueNDRangeKernel(b->q, b->k, dims, NULL, global, r->local, 0, NULL,
                                                       b->kev != NULL ? &ev : NULL);
                if (err != CL_SUCCESS)
                    return err;
                if (b->kev != NULL) {
                    if (*b->kev != NULL)
                        r->d->clReleaseEvent(*b->kev);
                    *b->kev = ev;
                }
                b->launches++;
            }
    return err;
}

/* Launch exactly the work-groups of the flat range [first, end) of dimensions 0..d, whose
 * indices above d are fixed in lo/hi: the range's partial first row of dimension d, its whole
 * rows, its partial last row, each a box (at most 2d + 1 of them). No work-group outside the
 * range runs, so the translated kernels need no early return for such work-groups: PoCL 3.1
 * miscompiles a kernel that returns uniformly before a barrier (a later `if (id == 0)` ran in
 * every work-item; the CTS's kernel_local_memory_size). */
static cl_int launch_range(struct box_launch *b, cl_uint d, size_t first, size_t end, size_t lo[3], size_t hi[3])
{
    const struct vast_paged *r = b->r;
    size_t row = 1; /* work-groups per index of dimension d */
    for (cl_uint i = 0; i < d; i++)
        row *= r->groups[i];
    for (cl_uint i = 0; i < d; i++)
        lo[i] = 0, hi[i] = r->groups[i];
    size_t a = first / row, z = end / row;
    cl_int err = CL_SUCCESS;
    if (d > 0 && a == z) { /* inside one row */
        lo[d] = a, hi[d] = a + 1;
        return launch_range(b, d - 1, first - a * row, end - a * row, lo, hi);
    }
    if (d > 0 && first % row != 0) { /* the partial first row */
        lo[d] = a, hi[d] = a + 1;
        err = launch_range(b, d - 1, first % row, row, lo, hi);
        a++;
        for (cl_uint i = 0; i < d; i++)
            lo[i] = 0, hi[i] = r->groups[i];
    }
    if (err == CL_SUCCESS && a < z) { /* whole rows */
        lo[d] = a, hi[d] = z;
        err = launch_box(b, lo, hi);
    }
    if (err == CL_SUCCESS && d > 0 && end % row != 0) { /* the partial last row */
        lo[d] = z, hi[d] = z + 1;
        err = launch_range(b, d - 1, 0, end % row, lo, hi);
    }
    return err;
}

cl_int vast_paged_enqueue(const struct vast_paged *r, cl_command_queue q, cl_kernel k, cl_uint slab_arg, size_t first,
                          size_t end, cl_event *kev)
{
    if (kev != NULL)
        *kev = NULL;
    struct box_launch b = {r, q, k, slab_arg, 0, kev};
    size_t lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    cl_int err = first < end ? launch_range(&b, r->cmd->sh.dims - 1, first, end, lo, hi) : CL_SUCCESS;
    if (kev != NULL && *kev != NULL && (err != CL_SUCCESS || b.launches != 1)) {
        r->d->clReleaseEvent(*kev); /* a span over several launches is not one kernel's */
        *kev = NULL;
    }
    return err;
}

/* The spill area of resumable loops (translate.h): two slots of a record per work-item and
 * per work-group. It lives outside the page cache's budget (the state is not the application's
 * data), so it is bounded on its own: each area at most 1/8 of the real device's memory and
 * one allocation. */
static cl_int spill_open(struct vast_paged *r, int which)
{
    if (r->spill[which] != NULL)
        return CL_SUCCESS;
    const struct launch_shape *sh = &r->cmd->sh;
    uint64_t items = (uint64_t)sh->global[0] * sh->global[1] * sh->global[2];
    uint64_t bytes = 2 * (items * r->tk->spill_item_bytes + (uint64_t)r->total_groups * r->tk->spill_group_bytes);
    cl_ulong mem = 0, max_alloc = 0;
    cl_device_id real = r->dev->real;
    cl_int err = r->d->clGetDeviceInfo(real, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
    if (err == CL_SUCCESS)
        err = r->d->clGetDeviceInfo(real, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
    if (err != CL_SUCCESS)
        return err;
    if (bytes > mem / 8 || bytes > max_alloc) {
        vast_error("kernel '%s': its loop carries %llu bytes of state per work-item (%llu per work-group); "
                   "splitting it in iteration ranges would keep %llu MiB of it on the device, over the bound "
                   "(1/8 of the device's memory, one allocation): it cannot run partitioned",
                   r->cmd->kernel->name, r->tk->spill_item_bytes, r->tk->spill_group_bytes,
                   (unsigned long long)(bytes >> 20));
        return CL_OUT_OF_RESOURCES;
    }
    r->spill[which] = r->d->clCreateBuffer(r->cmd->queue->context->backend->shared, CL_MEM_READ_WRITE, bytes, NULL,
                                           &err);
    static const cl_uchar none = 0xff; /* no record has a position yet */
    if (err == CL_SUCCESS)
        err = r->d->clEnqueueFillBuffer(r->rq, r->spill[which], &none, 1, 0, bytes, 0, NULL, NULL);
    r->c.spill_bytes += err == CL_SUCCESS ? bytes : 0;
    return err;
}

cl_int vast_paged_set_iters(struct vast_paged *r, cl_kernel real, bool inspector, uint64_t first, uint64_t end)
{
    if (r->tk == NULL || !r->tk->iteration_ranges)
        return CL_SUCCESS;
    cl_uint n = 0;
    cl_int err = r->d->clGetKernelInfo(real, CL_KERNEL_NUM_ARGS, sizeof n, &n, NULL);
    cl_ulong2 v = {{first, end != 0 ? end : CL_ULONG_MAX}};
    cl_uint at = r->tk->resumable ? 3 : 1; /* vast_iters: the last, or before the spill areas */
    if (err == CL_SUCCESS && n < at)
        err = CL_INVALID_KERNEL;
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(real, n - at, sizeof v, &v);
    if (err != CL_SUCCESS || !r->tk->resumable)
        return err;
    cl_mem own = NULL, in = NULL;
    if (end != 0 || first != 0) {
        err = spill_open(r, inspector);
        own = r->spill[inspector];
        in = inspector ? r->spill[0] : NULL;
    }
    if (err == CL_SUCCESS)
        err = r->d->clSetKernelArg(real, n - 2, sizeof own, &own);
    return err == CL_SUCCESS ? r->d->clSetKernelArg(real, n - 1, sizeof in, &in) : err;
}
