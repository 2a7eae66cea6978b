/*
 * merge.c: launches of a merged device (VAST_MERGE_DEVICES=1): the plan, made as on one device
 * by the first member, dispatched over the member devices, each claiming the next partition
 * nobody took as it starts one, in its own page cache and on its own device lane.
 *
 * Principal entry point: vast_merge_run (launch.c's execute, on the merged device's lane).
 * Invariants: a partition runs on exactly one member, and the iteration ranges of one block of
 * work-groups of a resumable loop (stride.c) on one member, in order (the state one range saves
 * for the next lives on that member's device); before any share starts, every member's
 * views are coherent over the pages it may touch (a launch that fits: its own partition's;
 * else the launch's whole buffers) and every page two blocks may write wants a twin on
 * every member (mark_twins; the others are owned by the member that writes them); the merged
 * device's lane returns only when every share has ended, so the launch's event covers every
 * partition.
 * See also: interpose/README.md "Many devices as one" (the design: dispatch, who owns a page
 * when, locks, what stays on the first member), pipeline.c (r->claim), executor.c
 * (vast_executor_job), vbuf.c (views over a context's members).
 */
#include "../base/clock.h"
#include "../base/log.h"
#include "chain.h"
#include "executor.h"
#include "launch_int.h"
#include "pagecache.h"
#include "stats.h"
#include "translate.h"
#include "variant.h"
#include "vbuf.h"

#include <stdlib.h>
#include <string.h>

struct merge_run {
    struct vast_launch_cmd *cmd;
    const struct translate_kernel *tk;
    bool needs_restore, sets_exact; /* the plan's (launch_int.h) */
    struct vast_chain *chain;       /* the chain every share carries (chain.c), or NULL */
    size_t pages, total_groups, page_size, nframes; /* the planning member's */
    struct vast_partition *parts;
    size_t nparts;
    bool fixed;          /* partition k is member k's (a launch that fits: one each) */
    bool sequential;     /* resumable iteration ranges: a block's ranges run in order, on one member */
    size_t *block;       /* block b's first partition, b < nblocks; block[nblocks] = nparts */
    size_t nblocks;
    cl_uint members;
    _Atomic size_t next; /* the next block no member claimed */
    pthread_mutex_t lock;
    pthread_cond_t done;
    cl_uint running; /* members' shares not finished (lock) */
    cl_uint opening; /* members' shares not ready to claim yet (lock) */
};

/* One member's share. */
struct merge_share {
    struct merge_run *run;
    cl_device_id dev;
    cl_uint index; /* in the merged device's members */
    cl_int err;
    struct vast_launch_counters c;
    unsigned long claimed;
    size_t cur, end; /* the partitions of its block not run yet */
};

/* The next partition for a member: its own one (fixed), else the next of its block, else the
 * first of the next block nobody claimed; a block is one partition, or (sequential) the
 * iteration ranges of one range of work-groups, whose saved state stays on the member that
 * runs them. For a prefetch (ahead), a new block only while as many are left as there are
 * members, so that a member prefetching never takes the block another one would start now. */
static struct vast_partition *claim(void *ctx, bool ahead)
{
    struct merge_share *sh = ctx;
    struct merge_run *m = sh->run;
    if (m->fixed) {
        if (sh->claimed > 0 || sh->index >= m->nparts)
            return NULL;
        sh->claimed++;
        return &m->parts[sh->index];
    }
    if (sh->cur == sh->end) {
        size_t b = atomic_load(&m->next);
        do {
            if (b >= m->nblocks || (ahead && m->nblocks - b < m->members))
                return NULL;
        } while (!atomic_compare_exchange_weak(&m->next, &b, b + 1));
        sh->cur = m->block != NULL ? m->block[b] : b;
        sh->end = m->block != NULL ? m->block[b + 1] : b + 1;
    }
    sh->claimed++;
    return &m->parts[sh->cur++];
}

/* Whether partition i continues the block of partition i - 1: the next iteration range of the
 * same work-groups, in a plan of resumable ranges (stride.c). */
static bool same_block(const struct vast_partition *parts, size_t i, bool sequential)
{
    return sequential && i > 0 && parts[i].first == parts[i - 1].first && parts[i].end == parts[i - 1].end;
}

/* The blocks of a sequential plan (m->block); other plans' blocks are their partitions. */
static cl_int find_blocks(struct merge_run *m)
{
    m->nblocks = m->nparts;
    if (!m->sequential)
        return CL_SUCCESS;
    m->nblocks = 0;
    for (size_t i = 0; i < m->nparts; i++)
        m->nblocks += !same_block(m->parts, i, true);
    if ((m->block = malloc((m->nblocks + 1) * sizeof *m->block)) == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    for (size_t i = 0, b = 0; i < m->nparts; i++)
        if (!same_block(m->parts, i, true))
            m->block[b++] = i;
    m->block[m->nblocks] = m->nparts;
    return CL_SUCCESS;
}

/* A member is ready to claim partitions (or takes none): once per member. */
static void share_ready(struct merge_run *m)
{
    pthread_mutex_lock(&m->lock);
    m->opening--;
    pthread_cond_broadcast(&m->done);
    pthread_mutex_unlock(&m->lock);
}

/* A member's partitions, on its device lane (rq). */
static void share_run(struct merge_share *sh, cl_command_queue rq)
{
    struct merge_run *m = sh->run;
    struct vast_launch_cmd cmd = *m->cmd; /* the same launch, run by this member */
    cmd.dev = sh->dev;
    const char *why = NULL;
    uint64_t t0 = vast_now_ns();
    const struct translate_kernel *tk = vast_variant_meta(cmd.kernel, sh->dev, &why); /* its builds */
    sh->c.build_ns += vast_now_ns() - t0;
    cl_int err;
    struct vast_pool *pool = vast_device_pool(sh->dev, &err);
    if (tk == NULL || pool == NULL || pool->page_size != m->page_size || pool->nframes < m->nframes ||
        pool->nchunks > TRANSLATE_MAX_POOL_CHUNKS) {
        vast_info("kernel '%s': %s takes no partition of the merged launch", cmd.kernel->name, sh->dev->name);
        share_ready(m);
        return;
    }
    struct vast_paged r;
    err = vast_paged_open(&r, &cmd, rq, pool, tk);
    r.pas = &vast_pas_launch;
    r.needs_restore = m->needs_restore;
    r.sets_exact = m->sets_exact; /* a fault is then out of bounds, never retried (no snapshot) */
    r.sequential = m->sequential;
    r.chain = m->chain;
    r.claim = claim;
    r.claim_ctx = sh;
    bool same = err == CL_SUCCESS && r.pages == m->pages && r.total_groups == m->total_groups;
    if (err == CL_SUCCESS && !same)
        vast_info("kernel '%s': %s lays the launch out otherwise; it takes no partition", cmd.kernel->name,
                  sh->dev->name);
    share_ready(m);
    if (same)
        err = vast_paged_run(&r, NULL, 0);
    r.c.build_ns += sh->c.build_ns;
    sh->c = r.c;
    sh->err = err;
    vast_partition_close(&r);
    vast_paged_close(&r);
}

static void share_job(void *arg, cl_command_queue lane)
{
    struct merge_share *sh = arg;
    share_run(sh, lane);
    pthread_mutex_lock(&sh->run->lock);
    sh->run->running--;
    pthread_cond_broadcast(&sh->run->done);
    pthread_mutex_unlock(&sh->run->lock);
}

/* Every member's view of every buffer argument coherent for its share, members 0 .. n-1
 * (launch.c's count_pages leaves a merged device's launch to this file). */
static cl_int members_coherent(struct vast_launch_cmd *cmd, cl_uint n)
{
    cl_device_id dev = cmd->queue->device;
    for (cl_uint k = 0; k < n; k++)
        for (cl_uint i = 0; i < cmd->num_args; i++) {
            cl_mem m = cmd->args[i].vbuf;
            cl_int err = m != NULL ? vast_vbuf_coherent(m, dev->members[k], 0, m->size) : CL_SUCCESS;
            if (err != CL_SUCCESS)
                return err;
        }
    return CL_SUCCESS;
}

/* Whether the plan's page sets hold every page each partition may write, so that a page in
 * one partition's set alone is written by one member alone: the kernel's accesses are affine
 * (host page sets, no faults, no pages added at run time), whole work-groups, no SVM or image
 * argument. Else every written page wants a twin. */
static bool sets_exact(const struct vast_paged *r)
{
    const struct translate_kernel *tk = r->tk;
    bool ok = tk->affine != NULL && !tk->data_dependent_addresses && r->slices == 0;
    for (cl_uint i = 0; ok && i < r->cmd->num_args; i++)
        ok = !r->cmd->args[i].svm && (i >= tk->num_args || tk->args[i].kind != TRANSLATE_ARG_IMAGE);
    return ok;
}

/* Whether virtual page vp is in partition p's set (a bytemap, or packed runs). */
static bool in_set(const struct vast_partition *p, size_t vp)
{
    if (p->set != NULL)
        return p->set[vp] != 0;
    for (size_t k = 0; k < p->nruns; k++)
        if (vp >= p->runs[2 * k] && vp < p->runs[2 * k] + p->runs[2 * k + 1])
            return true;
    return false;
}

/* Member `member`'s views coherent over the pages of partition p only (a launch that fits:
 * the member touches nothing else): the other members' dirty pages there are written back,
 * its stale copies there dropped; pages no other member touches stay dirty where they are
 * (an iterative kernel keeps its pages on its member from launch to launch). */
static cl_int set_coherent(const struct vast_paged *r, cl_device_id member, const struct vast_partition *p)
{
    size_t ps = r->pool->page_size;
    for (size_t v = 0; v < r->nva; v++) {
        const struct vast_varg *a = &r->va[v];
        cl_mem root = vast_mem_root(a->m);
        for (size_t q = 0, e; q < a->count; q = e) {
            bool in = in_set(p, a->va_page + q);
            for (e = q + 1; e < a->count && in_set(p, a->va_page + e) == in; e++)
                ;
            if (!in)
                continue;
            size_t lo = (a->first + q) * ps, hi = (a->first + e) * ps;
            hi = hi < root->size ? hi : root->size;
            cl_int err = lo < hi ? vast_vbuf_coherent(root, member, lo, hi - lo) : CL_SUCCESS;
            if (err != CL_SUCCESS)
                return err;
        }
    }
    return CL_SUCCESS;
}

/* One partition per member, of equal work-group ranges: with exact sets, the pages of its
 * range (a member loads only what its work-groups touch); else every page. */
static cl_int split_resident(struct vast_paged *r, cl_uint n, bool exact, struct vast_partition **parts,
                             size_t *nparts)
{
    *parts = calloc(n, sizeof **parts);
    if (*parts == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    *nparts = n;
    for (cl_uint i = 0; i < n; i++) {
        struct vast_partition *p = &(*parts)[i];
        p->first = r->total_groups * i / n;
        p->end = r->total_groups * (i + 1) / n;
        if (exact && (p->set = calloc(r->pages, 1)) != NULL) {
            cl_int err = vast_partition_inspect(r, p->first, p->end, p->set);
            if (err != CL_SUCCESS)
                return err;
            p->count = vast_set_count(p->set, r->pages);
        } else {
            p->set = vast_paged_all_pages(r, &p->count);
        }
        if (p->set == NULL)
            return CL_OUT_OF_HOST_MEMORY;
    }
    return CL_SUCCESS;
}

/* The pages each written root buffer of the launch wants twins for, on every member
 * (pagecache_want_twins): with exact sets, those that the sets of two partitions or more hold
 * through a writable argument (a partition boundary inside a page: two members may write it;
 * the ranges of one block count as one partition); else all of them. Pages one partition
 * writes are owned by whichever member claims it: loaded
 * from the host store, or given a frame without a load where the partition overwrites them
 * whole (cover.c), and written back whole (pagecache/README.md "Owned pages"). */
static cl_int mark_twins(struct vast_paged *r, const struct vast_partition *parts, size_t nparts, bool exact)
{
    cl_device_id dev = r->cmd->queue->device;
    size_t ps = r->pool->page_size;
    for (size_t v = 0; v < r->nva; v++) {
        cl_mem root = vast_mem_root(r->va[v].m);
        bool first = r->va[v].writable;
        for (size_t u = 0; first && u < v; u++)
            first = !(r->va[u].writable && vast_mem_root(r->va[u].m) == root);
        if (!first)
            continue;
        size_t npages = (root->size + ps - 1) / ps;
        uint8_t *want = exact ? calloc(npages ? npages : 1, 1) : NULL;
        size_t *owner = exact ? malloc((npages ? npages : 1) * sizeof *owner) : NULL;
        if (exact && (want == NULL || owner == NULL)) {
            free(want);
            free(owner);
            return CL_OUT_OF_HOST_MEMORY;
        }
        for (size_t q = 0; exact && q < npages; q++)
            owner[q] = SIZE_MAX;
        for (size_t i = 0, o = 0; exact && i < nparts; i++) {
            o = same_block(parts, i, r->sequential) ? o : i; /* a block's ranges run on one member */
            for (size_t u = v; u < r->nva; u++) {
                const struct vast_varg *a = &r->va[u];
                if (!a->writable || vast_mem_root(a->m) != root)
                    continue;
                for (size_t q = 0; q < a->count; q++)
                    if (in_set(&parts[i], a->va_page + q)) {
                        size_t rp = a->first + q;
                        if (owner[rp] == SIZE_MAX)
                            owner[rp] = o;
                        else if (owner[rp] != o)
                            want[rp] = 1;
                    }
            }
        }
        cl_int err = CL_SUCCESS;
        for (cl_uint k = 0; k < dev->num_members && err == CL_SUCCESS; k++) {
            struct vast_pc_buffer *pc = vast_mem_pc(root, dev->members[k]);
            struct vast_pool *pool = vast_device_pool(dev->members[k], &err);
            if (pool != NULL) /* a member of another page size takes no partition: all twins */
                err = vast_pc_error(pagecache_want_twins(pc, 0, npages, pool->page_size == ps ? want : NULL));
        }
        free(want);
        free(owner);
        if (err != CL_SUCCESS)
            return err;
    }
    return CL_SUCCESS;
}

/* Dispatch over the members: shares on the members' lanes, the first one's here. */
static cl_int dispatch(struct merge_run *m, struct vast_paged *r0)
{
    cl_device_id dev = m->cmd->queue->device;
    struct merge_share *sh = calloc(dev->num_members, sizeof *sh);
    if (sh == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->done, NULL);
    m->members = dev->num_members;
    for (cl_uint k = 1; k < dev->num_members; k++) {
        sh[k] = (struct merge_share){.run = m, .dev = dev->members[k], .index = k};
        pthread_mutex_lock(&m->lock);
        m->running++;
        m->opening++;
        pthread_mutex_unlock(&m->lock);
        if (vast_executor_job(dev->members[k], share_job, &sh[k]) != CL_SUCCESS) {
            pthread_mutex_lock(&m->lock);
            m->running--;
            m->opening--; /* its partition: the first member runs it (below) */
            pthread_mutex_unlock(&m->lock);
        }
    }
    /* Every member starts claiming at once: a member's first launch builds its paged variant
     * (once per program and device), and the first one would take every partition meanwhile. */
    pthread_mutex_lock(&m->lock);
    while (m->opening > 0)
        pthread_cond_wait(&m->done, &m->lock);
    pthread_mutex_unlock(&m->lock);
    sh[0] = (struct merge_share){.run = m, .dev = dev};
    r0->claim = claim;
    r0->claim_ctx = &sh[0];
    cl_int err = vast_paged_run(r0, NULL, 0);
    pthread_mutex_lock(&m->lock);
    while (m->running > 0)
        pthread_cond_wait(&m->done, &m->lock);
    pthread_mutex_unlock(&m->lock);
    sh[0].c = r0->c;
    for (cl_uint k = 0; k < dev->num_members; k++) {
        if (k > 0) {
            vast_stats_add(&r0->c, &sh[k].c);
            err = err != CL_SUCCESS ? err : sh[k].err;
        }
        if (sh[k].claimed > 0) {
            atomic_fetch_add(&dev->members[k]->merged_launches, 1);
            atomic_fetch_add(&dev->members[k]->merged_partitions, sh[k].claimed);
        }
    }
    /* A partition no member took: its member could not run it (logged); the first runs it. */
    r0->claim = NULL;
    for (size_t i = 0; m->fixed && err == CL_SUCCESS && i < m->nparts; i++)
        if ((i >= dev->num_members || sh[i].claimed == 0) && (err = set_coherent(r0, dev, &m->parts[i])) == CL_SUCCESS)
            err = vast_paged_run(r0, &m->parts[i], 1);
    pthread_cond_destroy(&m->done);
    pthread_mutex_destroy(&m->lock);
    free(sh);
    return err;
}

cl_int vast_merge_run(struct vast_launch_cmd *cmd, cl_command_queue rq, struct vast_pool *pool,
                      const struct translate_kernel *tk, size_t total, enum vast_launch_mode *mode,
                      struct vast_launch_counters *c, bool *ran)
{
    cl_device_id dev = cmd->queue->device;
    *ran = false;
    if (tk->uses_global_atomics)
        return CL_SUCCESS;
    struct vast_paged r;
    struct vast_partition *parts = NULL;
    size_t nparts = 0;
    cl_int err = vast_paged_open(&r, cmd, rq, pool, tk);
    r.pas = &vast_pas_launch;
    bool fits = total <= pool->nframes;
    if (err == CL_SUCCESS && r.total_groups < dev->num_members) {
        vast_paged_close(&r);
        return CL_SUCCESS;
    }
    *ran = true;
    bool held = err == CL_SUCCESS && !fits && vast_launch_stage_if_kernel_bound(&r, total);
    bool exact = err == CL_SUCCESS && sets_exact(&r);
    if (err == CL_SUCCESS && !exact) /* the inspector reads data: the first member's as on one device */
        err = members_coherent(cmd, 1);
    if (err == CL_SUCCESS) {
        r.needs_restore = fits ? false : tk->may_be_non_idempotent;
        *mode = fits ? VAST_MODE_PAGED : VAST_MODE_PARTITIONED;
        err = fits ? split_resident(&r, dev->num_members, exact, &parts, &nparts)
                   : vast_partition_plan(&r, &parts, &nparts); /* no snapshot where the sets are exact */
    }
    /* Twins where two members may write one page, before the members are made coherent (a
     * copy that now wants a twin it lacks is dropped there). A plan run by the first member
     * alone (below) needs none, but twins are always correct: the marks stay as they are. */
    if (err == CL_SUCCESS && r.slices == 0)
        err = mark_twins(&r, parts, nparts, exact);
    bool alone = r.slices != 0;
    /* Identical launches queued behind this one run with it, partition by partition, on the
     * member that claims the partition (chain.c). Unlike on one device, the chain closes here:
     * a launch submitted after this takes no part (it leads a chain of its own). */
    struct vast_chain *chain = NULL;
    if (err == CL_SUCCESS && !fits && !alone && vast_chain_may_carry(&r, parts, nparts)) {
        chain = vast_chain_led(cmd);
        if (vast_chain_close_all(chain) > 1 && !vast_chain_disjoint(&r, parts, nparts)) {
            vast_chain_end(cmd, false, CL_SUCCESS); /* the members run on their own */
            chain = NULL;
        }
    }
    for (cl_uint k = 0; err == CL_SUCCESS && fits && !alone && k < dev->num_members; k++)
        err = set_coherent(&r, dev->members[k], &parts[k]);
    if (err == CL_SUCCESS && !(fits && !alone))
        err = members_coherent(cmd, alone ? 1 : dev->num_members);
    if (err == CL_SUCCESS && alone) { /* the planning device's geometry and state */
        err = vast_paged_run(&r, parts, nparts);
    } else if (err == CL_SUCCESS) {
        r.chain = chain;
        struct merge_run m = {.cmd = cmd, .tk = tk, .needs_restore = r.needs_restore,
                              .sets_exact = r.sets_exact, .chain = chain, .pages = r.pages,
                              .total_groups = r.total_groups, .page_size = pool->page_size,
                              .nframes = pool->nframes, .parts = parts, .nparts = nparts, .fixed = fits,
                              .sequential = r.sequential};
        err = find_blocks(&m);
        if (err == CL_SUCCESS)
            err = dispatch(&m, &r);
        free(m.block);
    }
    if (chain != NULL)
        vast_chain_end(cmd, true, err);
    if (held)
        pagecache_hold_background_pins(-1);
    vast_partitions_free(parts, nparts);
    r.c.build_ns += c->build_ns;
    *c = r.c;
    vast_partition_close(&r);
    vast_paged_close(&r);
    return err;
}
