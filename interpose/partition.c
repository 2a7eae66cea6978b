/*
 * partition.c: planning a partitioned launch (VAST paper section 4.1 and Algorithm 1).
 *
 * The planner reads page accessed sets through r->pas (struct vast_pas_ops; pas.c's
 * vast_pas_launch: the inspector kernel, or host page sets; the unit tests: made-up ones):
 * one row per chunk of consecutive work-groups, one byte per virtual page. The chunk size
 * comes from the paper's Eq. 1, rounded to a power of two (vast_plan_chunk): each chunk is
 * expected to touch about 1/32 of the budget. The rows are OR-reduced in work-group order
 * into partitions sized so that each fits the budget together with the pages its successor
 * adds (plan_fits: the next partition loads under this one's kernel; pages shared by
 * consecutive partitions count once). A chunk that does not fit is "too coarse": its
 * work-groups are read again in chunks 16 times smaller, down to single work-groups. The
 * whole plan is made before the first partition runs.
 *
 * A work-group that alone exceeds the whole budget (plan_over decides what then):
 *   - a kernel whose grid-stride loops may run in iteration ranges (translate.h,
 *     iteration_ranges): stride.c plans partitions of loop iterations instead;
 *   - with host page sets (supersets, guards ignored): the plan is made again with the
 *     inspector's exact sets;
 *   - independent work-items (no barriers, no __local memory: translate.h, vast_slab): the
 *     real local size shrinks by prime factors and the plan is made again (vast_plan_slice);
 *   - else the launch fails before any kernel ran (logged), so the application's buffers are
 *     untouched; for such kernels launch.c plans at enqueue (admit_plan), so that the refusal
 *     is clEnqueueNDRangeKernel's own result.
 *
 * Principal entry points: vast_partition_plan (a launch's plan: slices, page sets from r->pas,
 * Algorithm 1, the kept plan of the kernel), vast_plan_groups (Algorithm 1 alone, over any
 * struct vast_pas_source), vast_plan_chunk (Eq. 1), vast_plan_add_sticky and
 * vast_plan_note_faults (pages that faulted join later partitions), vast_partition_forget.
 * Invariants: partitions cover [0, total work-groups) in order without gaps; each one's set
 * fits the budget, and with its successor's additions where a plan_fits could be met; plans
 * depend only on what vast_plan_key holds, so a kept plan is reused only for equal keys.
 * See also: pas.c (the page sets), stride.c (iteration-range plans), pipeline.c (runs the
 * plan; faults and splits), tests/unit/interpose/test_plan.c.
 */
#include "launch_int.h"

#include "api.h"
#include "check.h"
#include "pagecache.h"
#include "../base/clock.h"
#include "../base/trace.h"
#include "translate.h"
#include "vbuf.h"

#include <stdlib.h>
#include <string.h>

#define REFINE 16 /* a too coarse chunk is inspected again in chunks this many times smaller */

/* What planning does about a work-group alone over the budget (plan_over). */
enum plan_over { OVER_NONE, OVER_LOOPS, OVER_HOST, OVER_GROUP, OVER_DRAFT };

struct plan {
    struct vast_partition *parts;
    size_t n, capacity;
    size_t nframes;       /* the budget in pages */
    size_t single;        /* the most a partition of one work-group may hold: budget + overdraft */
    const uint8_t *prev;  /* the last partition's set (owned by parts), NULL before the first */
    size_t prev_count;
    /* The open partition: its first work-group, its set, and its union with prev (bytemaps over
     * r->pages), with their page counts. */
    size_t open;
    uint8_t *set, *both;
    size_t count, ucount;
    struct vast_plan_over over; /* set when a single work-group does not fit the budget */
};

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
 * pages P adds to Q (N = ucount - |Q|) load while Q's are pinned (pipeline.c prefetches under
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
    cl_int err = vast_partitions_reserve(&pl->parts, pl->n, &pl->capacity);
    if (err != CL_SUCCESS)
        return err;
    pl->parts[pl->n++] = (struct vast_partition){.first = pl->open, .end = end, .set = pl->set, .count = pl->count};
    if (pl->n >= 2) /* only the last set is read again (prev) */
        vast_partition_pack(&pl->parts[pl->n - 2], pages);
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
bool vast_plan_can_slice(const struct vast_paged *r)
{
    size_t reqd[3] = {0, 0, 0};
    r->d->clGetKernelWorkGroupInfo(r->pk, r->dev->real, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof reqd, reqd, NULL);
    return !r->tk->work_group_bound && reqd[0] == 0 && r->local[0] * r->local[1] * r->local[2] > 1;
}

/* Divides the largest dimension of the real local size by its smallest prime factor (slices
 * stay divisors of the work-group) and counts the launch's real work-groups again. */
void vast_plan_slice(struct vast_paged *r)
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
 * partition. A chunk that does not fit is read again REFINE times finer; a single
 * work-group that does not fit beside its neighbours runs without overlap (its partition
 * only has to fit the budget); one that does not fit the budget ends the plan (pl->over). */
static cl_int plan_range(const struct vast_pas_source *src, struct plan *pl, size_t first, size_t end, size_t w,
                         uint8_t *rows)
{
    size_t pages = src->pages, c_end = (end + w - 1) / w, win_lo = 0, win_n = 0;
    cl_int err = CL_SUCCESS;
    uint8_t *fine = NULL; /* the window of refinements, so that this one stays valid */
    for (size_t c = first / w; c < c_end && err == CL_SUCCESS; c++) {
        size_t g0 = c * w > first ? c * w : first, g1 = (c + 1) * w < end ? (c + 1) * w : end;
        if (c < win_lo || c >= win_lo + win_n) {
            win_lo = c;
            win_n = c_end - c < src->max_rows ? c_end - c : src->max_rows;
            size_t last = (win_lo + win_n) * w < end ? (win_lo + win_n) * w : end;
            err = src->window(src->ctx, g0, last, w, win_lo, win_n, rows);
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
        if (plan_fits(pl, pl->count + add, pl->ucount + addu) || (w == 1 && pl->count + add <= pl->single)) {
            plan_add(pl, row, pages, add, addu);
            continue;
        }
        if (w == 1) { /* the caller decides (plan_over) */
            pl->over = (struct vast_plan_over){true, g0, add};
            err = CL_OUT_OF_RESOURCES;
            break;
        }
        if (fine == NULL)
            fine = malloc((REFINE < src->max_rows ? REFINE : src->max_rows) * pages);
        err = fine != NULL ? plan_range(src, pl, g0, g1, w / REFINE ? w / REFINE : 1, fine) /* too coarse: refine */
                           : CL_OUT_OF_HOST_MEMORY;
    }
    free(fine);
    return err;
}


cl_int vast_plan_groups(const struct vast_pas_source *src, size_t total, size_t nframes, size_t w,
                        struct vast_partition **parts, size_t *n, struct vast_plan_over *over)
{
    return vast_plan_groups_single(src, total, nframes, nframes, w, parts, n, over);
}

cl_int vast_plan_groups_single(const struct vast_pas_source *src, size_t total, size_t nframes, size_t single,
                               size_t w, struct vast_partition **parts, size_t *n, struct vast_plan_over *over)
{
    struct plan pl = {.nframes = nframes, .single = single > nframes ? single : nframes};
    cl_int err = plan_open(&pl, src->pages);
    if (err == CL_SUCCESS)
        err = plan_range(src, &pl, 0, total, w, src->rows);
    if (err == CL_SUCCESS && pl.open < total)
        err = plan_emit(&pl, total, src->pages);
    free(pl.set);
    free(pl.both);
    if (err == CL_SUCCESS && pl.n > 0)
        vast_partition_pack(&pl.parts[pl.n - 1], src->pages);
    if (err != CL_SUCCESS) {
        vast_partitions_free(pl.parts, pl.n);
        pl.parts = NULL;
        pl.n = 0;
    }
    *parts = pl.parts;
    *n = pl.n;
    if (over != NULL)
        *over = pl.over;
    return err;
}

size_t vast_plan_chunk(size_t pages, size_t page_size, size_t nframes, size_t total_groups)
{
    /* Eq. 1: work-groups per PAS row = (MEMSIZE / 32) / (AllocSize / TOTAL_WORKGROUPS). */
    double per_group = (double)(pages - 1) * page_size / (double)total_groups;
    double want = (double)nframes * page_size / 32.0 / (per_group > 0 ? per_group : 1);
    size_t w = 1;
    while ((double)w < want && w < total_groups)
        w *= 2;
    return w;
}

/* ---- pages that faulted join later partitions ---- */

void vast_plan_note_faults(struct vast_paged *r, const uint8_t *add)
{
    for (size_t vp = 0; vp < r->pages; vp++)
        if (add[vp] && !r->sticky[vp] && r->nsticky < r->pool->nframes / 4) {
            r->sticky[vp] = 1;
            r->nsticky++;
        }
}

/* Sticky pages join a partition when they fit beside it. They are counted: a work-group
 * that does not fit the budget beside them runs again with its own pages only, before it may
 * be refused (pipeline.c: handle_faults, split_partition). */
void vast_plan_add_sticky(struct vast_paged *r, struct vast_partition *p)
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
    bool exact; /* struct vast_paged, sets_exact */
};

static void key_put(uint8_t **at, const void *v, size_t n)
{
    memcpy(*at, v, n);
    *at += n;
}

uint8_t *vast_plan_key(const struct vast_paged *r, size_t *len)
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

/* A copy of a plan, each set as it is (packed, or a bytemap of `pages` bytes). */
static struct vast_partition *parts_copy(const struct vast_partition *from, size_t n, size_t pages)
{
    struct vast_partition *to = calloc(n ? n : 1, sizeof *to);
    for (size_t i = 0; to != NULL && i < n; i++) {
        to[i] = from[i];
        size_t runs = (from[i].nruns ? from[i].nruns : 1) * 2 * sizeof *from[i].runs;
        to[i].set = from[i].set != NULL ? malloc(pages) : NULL;
        to[i].runs = from[i].runs != NULL ? malloc(runs) : NULL;
        if ((from[i].set != NULL && to[i].set == NULL) || (from[i].runs != NULL && to[i].runs == NULL)) {
            vast_partitions_free(to, i + 1);
            return NULL;
        }
        if (to[i].set != NULL)
            memcpy(to[i].set, from[i].set, pages);
        if (to[i].runs != NULL)
            memcpy(to[i].runs, from[i].runs, runs);
    }
    return to;
}

/* What a plan holds in memory. */
static size_t parts_bytes(const struct vast_partition *parts, size_t n, size_t pages)
{
    size_t bytes = n * sizeof *parts;
    for (size_t i = 0; i < n; i++)
        bytes += (parts[i].set != NULL ? pages : 0) + parts[i].nruns * 2 * sizeof *parts[i].runs;
    return bytes;
}

static void cache_free(struct vast_plan_cache *c)
{
    if (c == NULL)
        return;
    vast_partitions_free(c->parts, c->n);
    free(c->key);
    free(c);
}

struct vast_partition *vast_plan_cache_get(cl_kernel k, const uint8_t *key, size_t len, size_t pages, size_t *n,
                                           bool *exact)
{
    struct vast_partition *parts = NULL;
    pthread_mutex_lock(&k->obj.lock);
    struct vast_plan_cache *c = k->plans;
    if (c != NULL && c->key_len == len && c->pages == pages && memcmp(c->key, key, len) == 0) {
        parts = parts_copy(c->parts, c->n, pages);
        *n = c->n;
        *exact = c->exact;
    }
    pthread_mutex_unlock(&k->obj.lock);
    return parts;
}

void vast_plan_cache_put(cl_kernel k, uint8_t *key, size_t len, const struct vast_partition *parts, size_t n,
                         size_t pages, bool exact)
{
    struct vast_plan_cache *c = parts_bytes(parts, n, pages) <= PLAN_CACHE_BYTES ? calloc(1, sizeof *c) : NULL;
    if (c != NULL)
        c->parts = parts_copy(parts, n, pages);
    if (c == NULL || c->parts == NULL) {
        free(c);
        free(key);
        return;
    }
    *c = (struct vast_plan_cache){key, len, c->parts, n, pages, exact};
    pthread_mutex_lock(&k->obj.lock);
    struct vast_plan_cache *old = k->plans;
    k->plans = c;
    pthread_mutex_unlock(&k->obj.lock);
    cache_free(old);
}

bool vast_plan_kept(const struct vast_paged *r)
{
    size_t len = 0;
    uint8_t *key = vast_plan_key(r, &len);
    cl_kernel k = r->cmd->kernel;
    pthread_mutex_lock(&k->obj.lock);
    const struct vast_plan_cache *c = k->plans;
    bool kept = key != NULL && c != NULL && c->key_len == len && c->pages == r->pages && memcmp(c->key, key, len) == 0;
    pthread_mutex_unlock(&k->obj.lock);
    free(key);
    return kept;
}

void vast_partition_forget(cl_kernel k)
{
    cache_free(k->plans);
    k->plans = NULL;
}


/* A work-group alone over the budget (vast_plan_groups' over): whose turn it is. Logs the
 * refusal when nothing can help. The overdraft comes last: loops, exact sets and slices keep
 * within the budget, a loan of frames past it does not. */
static enum plan_over plan_over(struct vast_paged *r, const struct vast_plan_over *o)
{
    if (r->tk->iteration_ranges) /* vast_partition_plan splits its loops */
        return OVER_LOOPS;
    if (r->pas->host(r)) /* perhaps only the superset is too big: vast_partition_plan asks the device */
        return OVER_HOST;
    if (vast_plan_can_slice(r))
        return OVER_GROUP;
    if (o->pages <= r->pool->nframes + r->pool->overdraft)
        return OVER_DRAFT;
    vast_plan_refuse_log(r, r->slices != 0 ? "the one work-item of real work-group" : "work-group", o->group, o->pages,
                         r->tk->work_group_bound ? " (its work-items meet: barriers or __local memory)" : "");
    return OVER_GROUP;
}

void vast_plan_refuse_log(const struct vast_paged *r, const char *what, size_t group, size_t pages, const char *why)
{
    size_t nframes = r->pool->nframes, kib = r->pool->page_size >> 10;
    vast_error("kernel '%s': %s %zu alone touches %zu pages (%zu KiB) but the device budget (VAST_DEVICE_MEMORY) "
               "holds %zu (%zu KiB) and its overdraft (VAST_OVERDRAFT) %zu more: it cannot run partitioned%s",
               r->cmd->kernel->name, what, group, pages, pages * kib, nframes, nframes * kib, r->pool->overdraft, why);
}

/* One plan for the launch's current work-group shape: rows of Eq. 1's size, from host sets, or
 * from the inspector where host supersets put a work-group over the budget, or with a
 * partition of one work-group over the budget that borrows frames past it (OVER_DRAFT; the
 * pipeline takes the loan). On failure *parts is NULL and *over says whether a work-group
 * alone exceeded the budget. */
static cl_int plan_once(struct vast_paged *r, struct vast_partition **parts, size_t *n, size_t *w_out,
                        enum plan_over *over)
{
    struct vast_pas_source src;
    struct vast_plan_over o = {0};
    size_t nframes = r->pool->nframes;
    size_t w = vast_plan_chunk(r->pages, r->pool->page_size, nframes, r->total_groups);
    *parts = NULL;
    *n = 0;
    *over = OVER_NONE;
    *w_out = w;
    cl_int err = r->pas->source(r, &src);
    if (err == CL_SUCCESS)
        err = vast_plan_groups(&src, r->total_groups, nframes, w, parts, n, &o);
    if (err == CL_OUT_OF_RESOURCES && o.over)
        *over = plan_over(r, &o);
    if (*over == OVER_HOST) { /* again with the inspector's exact sets */
        vast_info("kernel '%s': a work-group's host page set exceeds the budget; running the inspector",
                  r->cmd->kernel->name);
        r->pas->exact(r);
        *over = OVER_NONE;
        err = vast_plan_groups(&src, r->total_groups, nframes, w, parts, n, &o);
        if (err == CL_OUT_OF_RESOURCES && o.over)
            *over = plan_over(r, &o);
    }
    if (*over == OVER_DRAFT) { /* again, where one work-group may borrow past the budget */
        vast_info("kernel '%s': work-group %zu by itself has %zu pages, the budget holds %zu: it runs on an "
                  "overdraft (VAST_OVERDRAFT: at most %zu pages past the budget)",
                  r->cmd->kernel->name, o.group, o.pages, nframes, r->pool->overdraft);
        *over = OVER_NONE;
        err = vast_plan_groups_single(&src, r->total_groups, nframes, nframes + r->pool->overdraft, w, parts, n, &o);
        if (err == CL_OUT_OF_RESOURCES && o.over) {
            vast_plan_refuse_log(r, "work-group", o.group, o.pages,
                                 r->tk->work_group_bound ? " (its work-items meet: barriers or __local memory)" : "");
            *over = OVER_GROUP;
        }
    }
    return err;
}

/* Whether the plan's sets hold every page its work-groups may touch, so that a fault can only
 * be an access out of bounds: host page sets (supersets of every access the translator
 * described, pas.c) throughout, no address from loaded data, whole work-groups, and no
 * iteration ranges (their sets are the inspector's where the description knows no ranges). */
static bool sets_exact(const struct vast_paged *r, const struct vast_partition *plan, size_t n)
{
    return r->pas->host(r) && !r->tk->data_dependent_addresses && r->slices == 0 && !vast_plan_ranged(plan, n);
}

cl_int vast_partition_plan(struct vast_paged *r, struct vast_partition **parts, size_t *nparts)
{
    uint64_t t0 = vast_now_ns();
    /* Each work-item's data-dependent loads may land on pages of their own, which no page set
     * shows before the faults: a work-group of more work-items than half the frames could
     * not hold what it faults. Independent work-items run in slices that can, from the start
     * (the same slices for the same launch: a plan made with them is kept). */
    while (r->tk->data_dependent_addresses && vast_plan_can_slice(r) &&
           r->local[0] * r->local[1] * r->local[2] * 2 > r->pool->nframes)
        vast_plan_slice(r);
    if (r->slices != 0)
        vast_info("kernel '%s': data-dependent loads in a budget of %zu pages: work-groups run in slices of %zu x "
                  "%zu x %zu work-items", r->cmd->kernel->name, r->pool->nframes, r->local[0], r->local[1],
                  r->local[2]);
    cl_ulong kept_slices = r->slices;
    size_t key_len = 0;
    uint8_t *key = vast_plan_key(r, &key_len);
    *parts = key != NULL ? vast_plan_cache_get(r->cmd->kernel, key, key_len, r->pages, nparts, &r->sets_exact) : NULL;
    if (*parts != NULL) {
        vast_stride_prepare(r, *parts, *nparts);
        r->needs_restore = r->needs_restore && !r->sets_exact; /* as below */
        free(key);
        r->c.plan_ns += vast_now_ns() - t0;
        vast_info("kernel '%s': %zu partition(s), %s", r->cmd->kernel->name, *nparts,
                  r->cmd->planned ? "the plan made when it was enqueued"
                                  : "the plan of its previous launch (same layout, arguments and NDRange)");
        return CL_SUCCESS;
    }
    struct vast_partition *plan = NULL;
    size_t n = 0, w = 1;
    enum plan_over over = OVER_NONE;
    /* A grid-stride loop that gathers through loaded data: no page set shows what a
     * work-group's whole loop gathers, so work-group partitions would each meet all of it in
     * faults. Iteration ranges from the start keep each partition's gathers small, and a range
     * whose faults outgrow the budget splits (pipeline.c, split_partition). */
    bool by_iterations = r->tk->iteration_ranges && !r->tk->resumable && r->tk->data_dependent_addresses;
    cl_int err = by_iterations ? vast_stride_plan(r, &plan, &n, false) : plan_once(r, &plan, &n, &w, &over);
    while (err == CL_OUT_OF_RESOURCES && over == OVER_GROUP && vast_plan_can_slice(r)) {
        vast_plan_slice(r); /* independent work-items: run a work-group in slices */
        vast_info("kernel '%s': a work-group alone exceeds the budget; its work-items are independent, so it "
                  "runs in slices of %zu x %zu x %zu work-items", r->cmd->kernel->name, r->local[0], r->local[1],
                  r->local[2]);
        r->pas->close(r);
        err = plan_once(r, &plan, &n, &w, &over);
    }
    /* Loop iterations (stride.c); a resumable loop whose one iteration of a work-group is too
     * big runs in slices of work-groups where its work-items are independent, each in ranges. */
    while (err == CL_OUT_OF_RESOURCES && over == OVER_LOOPS) {
        bool slice = r->tk->resumable && vast_plan_can_slice(r);
        err = vast_stride_plan(r, &plan, &n, slice); /* frees its partitions on failure */
        if (err != CL_OUT_OF_RESOURCES || !slice)
            break;
        vast_plan_slice(r);
        vast_info("kernel '%s': its work-items are independent, so its work-groups run in slices of %zu x %zu x "
                  "%zu work-items", r->cmd->kernel->name, r->local[0], r->local[1], r->local[2]);
        r->pas->close(r);
    }
    r->sets_exact = err == CL_SUCCESS && sets_exact(r, plan, n);
    /* Sets that hold every page leave no fault to retry (one out of bounds fails the launch), so
     * nothing is saved, and the partitions overlap on the device: for every caller (one device,
     * a merged device's members, the plan at enqueue). */
    r->needs_restore = r->needs_restore && !r->sets_exact;
    if (err == CL_SUCCESS && key != NULL && r->slices == kept_slices)
        vast_plan_cache_put(r->cmd->kernel, key, key_len, plan, n, r->pages, r->sets_exact);
    else
        free(key); /* plans sliced by planning are not kept: the key holds the application's local size */
    *parts = plan;
    *nparts = n;
    uint64_t t1 = vast_now_ns();
    uint64_t other = r->c.inspector_ns + r->c.build_ns;
    r->c.plan_ns += (t1 - t0) - (other < t1 - t0 ? other : 0);
    vast_trace_span(VAST_TRACK_PLAN, r->cmd->kernel->name, t0, t1, "plan");
    if (err == CL_SUCCESS && r->pas->host(r))
        r->c.host_plans++;
    vast_info("kernel '%s': %zu partition(s) in a budget of %zu pages, %zu work-groups per PAS row, page sets %s",
              r->cmd->kernel->name, n, r->pool->nframes, w, r->pas->host(r) ? "on the host" : "by the inspector");
    return err;
}
