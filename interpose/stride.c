/*
 * stride.c: planning a launch of a kernel with grid-stride loops in iteration ranges.
 *
 * pyopencl's elementwise kernels run a small NDRange whose work-items loop over the whole
 * data (`for (i = gid; i < n; i += gsize)`): one work-group touches every page, so the
 * work-group partitions of partition.c cannot fit a small budget. When the translator found
 * that the kernel's loops may run in iteration ranges (translate.h, iteration_ranges: the
 * kernels take `ulong2 vast_iters` as their last parameter), a partition is a range of
 * work-groups AND a range [iter_first, iter_end) of every work-item's loop iterations.
 *
 * The plan (vast_stride_plan, called by partition.c when a single work-group exceeds the
 * budget): the work-groups are taken in blocks (all of them, or halves until one iteration
 * of a block fits the budget); per block, iteration ranges are grown from the end of the last
 * one: the range's page set over the block and whether any work-item has iterations past the
 * range ("more") come from the host description where it knows the ranged loops
 * (translate_affine.ranges: interval arithmetic with the loop variable restricted to the range,
 * a superset; MatrixMul 512 x 512 at 192 KiB on PoCL: the same 272 ranges, 2.43 s of inspector
 * -> 3.5 ms), else from the inspector run over the block with the range restricted (exact,
 * vast_status[2]). A range
 * is kept when it fits beside its predecessor (the rule of partition.c's plan_fits), doubled
 * while it fits and the pages it adds to its predecessor stay small (a length that did not
 * fit is not tried again in the block), halved while it does not; a one-iteration range that fits
 * the budget alone runs without overlap. The block's plan ends when no work-item has more.
 * With the inspector, each range costs one or two launches; each launch skips the iterations before its
 * range (condition and step only), so a loop of K iterations in P partitions costs O(P * K)
 * loop steps per work-item in total.
 *
 * Faults, retries and splits work per partition as before (pipeline.c); a partition keeps its
 * iteration range through retries, and a single-work-group partition splits its range.
 */
#include "launch_int.h"

#include "api.h"
#include "check.h"
#include "pagecache.h"
#include "translate.h"
#include "vbuf.h"

#include <stdlib.h>
#include <string.h>

#define MAX_PARTITIONS ((size_t)1 << 22)
#define MAX_RANGE ((uint64_t)1 << 40)

struct splan {
    struct vast_paged *r;
    struct vast_partition *parts;
    size_t n, cap;
    const uint8_t *prev; /* the last partition's set, NULL at a block's start */
    size_t prev_count;
    size_t single;       /* the most one range of one block may hold: the budget, or with the overdraft */
};

/* The pages of a candidate set its predecessor does not hold (all of them at a block's start). */
static size_t added_pages(const struct splan *pl, const uint8_t *set, size_t count)
{
    size_t added = count;
    if (pl->prev != NULL)
        for (size_t i = 0; i < pl->r->pages; i++)
            added -= set[i] && pl->prev[i];
    return added;
}

/* partition.c's plan_fits for a candidate set: with its predecessor, and its successor's
 * additions, within the budget. */
static bool fits(const struct splan *pl, const uint8_t *set, size_t count)
{
    size_t nframes = pl->r->pool->nframes, added = added_pages(pl, set, count);
    return pl->prev_count + added <= nframes && count + added <= nframes;
}

static cl_int probe(struct splan *pl, size_t g0, size_t g1, uint64_t k, uint64_t c, uint8_t *set, size_t *count,
                    bool *more)
{
    memset(set, 0, pl->r->pages);
    cl_int err = pl->r->pas->iters(pl->r, g0, g1, k, k + c, set, more);
    *count = vast_set_count(set, pl->r->pages);
    return err;
}

static cl_int emit(struct splan *pl, size_t g0, size_t g1, uint64_t k, uint64_t c, uint8_t *set, size_t count)
{
    VAST_RETURN_IF(pl->n == MAX_PARTITIONS, CL_OUT_OF_RESOURCES, "kernel '%s': more than %zu partitions",
                   pl->r->cmd->kernel->name, MAX_PARTITIONS);
    cl_int err = vast_partitions_reserve(&pl->parts, pl->n, &pl->cap);
    if (err != CL_SUCCESS)
        return err;
    pl->parts[pl->n++] =
        (struct vast_partition){.first = g0, .end = g1, .set = set, .count = count, .iter_first = k, .iter_end = k + c};
    if (pl->n >= 2) /* only the last set is read again (prev); partition.c's plan_emit */
        vast_partition_pack(&pl->parts[pl->n - 2], pl->r->pages);
    pl->prev = set;
    pl->prev_count = count;
    return CL_SUCCESS;
}

/* The iteration ranges of work-groups [g0, g1); *too_big when one iteration of them alone
 * exceeds the budget. *c carries the range length from block to block. */
static cl_int plan_block(struct splan *pl, size_t g0, size_t g1, uint64_t *c, bool *too_big)
{
    struct vast_paged *r = pl->r;
    size_t nframes = r->pool->nframes, count = 0, count2 = 0;
    uint8_t *set = malloc(r->pages), *set2 = malloc(r->pages);
    cl_int err = set != NULL && set2 != NULL ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
    bool more = true, more2 = false;
    uint64_t no_fit = UINT64_MAX; /* the shortest doubled range of this block that did not fit */
    pl->prev = NULL;
    pl->prev_count = 0;
    for (uint64_t k = 0; err == CL_SUCCESS && more;) {
        bool ok = false;
        uint64_t last_c = 0; /* the range length of the latest probe */
        for (;;) { /* halve the range until it fits beside its predecessor */
            err = probe(pl, g0, g1, k, *c, set, &count, &more);
            last_c = *c;
            if (err != CL_SUCCESS || (ok = fits(pl, set, count)) || *c == 1)
                break;
            *c /= 2;
        }
        if (err == CL_SUCCESS && !ok && count > pl->single) {
            *too_big = true;
            break;
        }
        /* double while it fits and what it adds to its predecessor is small (a quarter of the
         * budget): in steady state one inspector launch per range. What every range of the
         * block touches (MatrixMul: a block's rows of A, whose pages each iteration's columns
         * share) does not count: measured on the whole set, a block whose rows took more than a
         * quarter of the budget ran one iteration per range (MatrixMul 1024 x 2048 at 640 pages
         * of 4 KiB on PoCL: 512 ranges and 6.8 s of inspector; now 88 and 3.6 s, with no
         * length probed twice; e2e.samples.MatrixMul.ranges_grow) */
        while (err == CL_SUCCESS && ok && more && added_pages(pl, set, count) * 4 <= nframes && *c < MAX_RANGE &&
               *c * 2 < no_fit) { /* a length that did not fit before is not probed again */
            err = probe(pl, g0, g1, k, *c * 2, set2, &count2, &more2);
            last_c = *c * 2;
            bool fit2 = err == CL_SUCCESS && fits(pl, set2, count2);
            if (err == CL_SUCCESS && !fit2)
                no_fit = *c * 2;
            if (!fit2)
                break;
            uint8_t *t = set;
            set = set2, set2 = t;
            count = count2, more = more2, *c *= 2;
        }
        /* a resumable loop's inspector left the state at k + c behind only if (k, c) ran last */
        if (err == CL_SUCCESS && r->tk->resumable && last_c != *c)
            err = probe(pl, g0, g1, k, *c, set, &count, &more);
        if (err == CL_SUCCESS)
            err = emit(pl, g0, g1, k, *c, set, count);
        if (err == CL_SUCCESS) {
            k += *c;
            set = malloc(r->pages); /* the partition owns the last one */
            err = set != NULL ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
        }
    }
    free(set);
    free(set2);
    return err;
}

/* Whether a written buffer reaches the kernel through two arguments: an iteration may then
 * read, through one, what an earlier iteration of its work-item wrote through the other. */
static bool aliased_writes(const struct vast_paged *r)
{
    for (size_t i = 0; i < r->nva; i++)
        for (size_t k = i + 1; k < r->nva; k++)
            if ((r->va[i].writable || r->va[k].writable) && vast_mem_root(r->va[i].m) == vast_mem_root(r->va[k].m))
                return true;
    return false;
}

bool vast_plan_ranged(const struct vast_partition *parts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (parts[i].iter_end != 0)
            return true;
    return false;
}

void vast_stride_prepare(struct vast_paged *r, const struct vast_partition *parts, size_t n)
{
    bool ranges = parts == NULL || vast_plan_ranged(parts, n);
    /* Partitions of one plan overlap on the device (pipeline.c), which work-groups
     * may, but iterations of one work-item may not when one reads what an earlier one wrote:
     * the translator's read-and-write buffers (needs_restore already) and aliased buffers
     * then run one partition at a time. */
    if (ranges && aliased_writes(r))
        r->needs_restore = true;
    /* A resumable loop's range starts from the state its predecessor saved: the ranges of a
     * work-group run in order, each after the retries of the one before (pipeline.c). */
    if (ranges && r->tk->resumable)
        r->sequential = true;
}

cl_int vast_stride_plan(struct vast_paged *r, struct vast_partition **parts, size_t *nparts, bool quiet)
{
    size_t block = r->total_groups, single = r->pool->nframes;
    cl_int err;
    vast_stride_prepare(r, NULL, 0);
    for (;;) {
        struct splan pl = {r, NULL, 0, 0, NULL, 0, single};
        uint64_t c = 1;
        bool too_big = false;
        err = CL_SUCCESS;
        for (size_t g0 = 0; g0 < r->total_groups && err == CL_SUCCESS && !too_big; g0 += block)
            err = plan_block(&pl, g0, g0 + block < r->total_groups ? g0 + block : r->total_groups, &c, &too_big);
        if (err == CL_SUCCESS && !too_big) {
            if (pl.n > 0)
                vast_partition_pack(&pl.parts[pl.n - 1], r->pages);
            *parts = pl.parts;
            *nparts = pl.n;
            vast_info("kernel '%s': a work-group alone exceeds the budget; its grid-stride loops run in %zu "
                      "partition(s) of iteration ranges over blocks of %zu work-group(s)",
                      r->cmd->kernel->name, pl.n, block);
            return CL_SUCCESS;
        }
        vast_partitions_free(pl.parts, pl.n);
        if (err != CL_SUCCESS)
            return err;
        /* The last resort before refusing: one iteration of one work-group on an overdraft
         * (pipeline.c borrows the frames past the budget; pagecache/README.md "Overdraft"). */
        if (block == 1 && !quiet && single == r->pool->nframes && r->pool->overdraft > 0) {
            single = r->pool->nframes + r->pool->overdraft;
            vast_info("kernel '%s': one loop iteration of a single work-group exceeds the budget of %zu pages: it "
                      "runs on an overdraft (VAST_OVERDRAFT: at most %zu pages past the budget)",
                      r->cmd->kernel->name, r->pool->nframes, r->pool->overdraft);
            continue;
        }
        if (block == 1 && quiet) {
            vast_info("kernel '%s': one loop iteration of a single work-group exceeds the budget", r->cmd->kernel->name);
            return CL_OUT_OF_RESOURCES;
        }
        if (block == 1) {
            vast_error("kernel '%s': one loop iteration of a single work-group touches more pages than the device "
                       "budget (VAST_DEVICE_MEMORY) holds (%zu) with its overdraft (VAST_OVERDRAFT: %zu pages): it "
                       "cannot run partitioned", r->cmd->kernel->name, r->pool->nframes, r->pool->overdraft);
            return CL_OUT_OF_RESOURCES;
        }
        block = (block + 1) / 2;
    }
}
