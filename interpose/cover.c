/*
 * cover.c: the pages a partition's kernel overwrites whole, which the pipeline gives frames
 * without loading them (pagecache's VAST_PC_NO_LOAD; interpose/README.md "Pages a partition
 * overwrites").
 *
 * The rule, per launch: the kernel has a host description (translate.h, "Host page sets")
 * with no data-dependent address (so no work-group faults and runs again over a page it
 * half wrote), no image argument, no SVM argument and no work-group slices; per partition, it
 * runs every iteration of its work-items (a kernel with iteration ranges, translate/stride.c
 * and resume.c, only in a partition of the range (0, all): a later range may skip the store of
 * a work-item whose loop ended in an earlier one, so it covers nothing); a buffer argument qualifies when the
 * kernel only stores to it (no load, compound assignment or atomic: every site of its
 * parameter is a plain write) and no other argument of the launch shares its root buffer (an
 * alias, the same buffer passed twice or an overlapping sub-buffer, would read it). Per
 * partition, the whole-store sites give the bytes its work-groups certainly write
 * (translate_affine_written); a root page of a qualifying buffer is covered when those bytes
 * hold every byte of it (the last page: up to the root's end). A page only partly covered is
 * loaded as before. Flags such as CL_MEM_WRITE_ONLY play no part: the proof is the kernel's.
 *
 * Principal entry point: vast_partition_cover.
 * See also: pipeline.c (pins covered pages with VAST_PC_NO_LOAD, prefetches the rest, marks
 * them dirty after a successful run), translate/cover.c (the written ranges),
 * pagecache/README.md "Pages a kernel overwrites" (what an unloaded frame may hold and when).
 */
#include "launch_int.h"

#include "../base/config.h"

#include "framepool.h"
#include "translate.h"
#include "vbuf.h"

#include <stdlib.h>
#include <string.h>

/* Whether the launch's kernel is inside the rule, and which of its buffers are (r->cover_arg). */
static bool cover_rule(struct vast_paged *r)
{
    if (r->cover_rule != 0)
        return r->cover_rule > 0;
    const struct translate_kernel *tk = r->tk;
    bool ok = vast_config_get()->skip_overwritten && tk != NULL && tk->affine != NULL &&
              !tk->data_dependent_addresses && r->slices == 0 && r->nva > 0 &&
              (r->cover_arg = calloc(r->nva, 1)) != NULL;
    for (cl_uint i = 0; ok && i < r->cmd->num_args; i++)
        ok = !r->cmd->args[i].svm && (i >= tk->num_args || tk->args[i].kind != TRANSLATE_ARG_IMAGE);
    bool any = false;
    for (size_t v = 0; ok && v < r->nva; v++) {
        cl_uint arg = r->va[v].index;
        bool whole = false, pure = arg < tk->num_args && tk->args[arg].access == TRANSLATE_WRITE;
        for (unsigned s = 0; pure && s < tk->affine->nsites; s++)
            if (tk->affine->sites[s].arg == arg) {
                pure = tk->affine->sites[s].access == TRANSLATE_WRITE;
                whole = whole || tk->affine->sites[s].whole;
            }
        cl_mem root = vast_mem_root(r->va[v].m);
        for (cl_uint i = 0; pure && whole && i < r->cmd->num_args; i++)
            if (i != arg && r->cmd->args[i].vbuf != NULL && vast_mem_root(r->cmd->args[i].vbuf) == root)
                pure = false; /* aliased: the other argument may read what this one writes */
        r->cover_arg[v] = pure && whole && r->va[v].writable;
        any = any || r->cover_arg[v];
    }
    r->cover_rule = ok && any ? 1 : -1;
    return r->cover_rule > 0;
}

/* Root byte ranges written, per qualifying buffer argument. */
struct seg {
    size_t v;
    long long lo, end;
};

struct collect {
    struct vast_paged *r;
    struct seg *segs;
    size_t n, cap;
    bool oom;
};

static void collect_range(void *ctx, unsigned site, long long lo, long long end)
{
    struct collect *c = ctx;
    struct vast_paged *r = c->r;
    unsigned arg = r->tk->affine->sites[site].arg;
    for (size_t v = 0; v < r->nva; v++) {
        if (r->va[v].index != arg || !r->cover_arg[v])
            continue;
        long long size = (long long)r->va[v].m->size, off = (long long)r->va[v].m->offset;
        lo = lo > 0 ? lo : 0; /* writes outside the buffer are not its bytes */
        end = end < size ? end : size;
        if (lo >= end)
            return;
        if (c->n == c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 64;
            struct seg *s = realloc(c->segs, cap * sizeof *s);
            if (s == NULL) {
                c->oom = true;
                return;
            }
            c->segs = s;
            c->cap = cap;
        }
        c->segs[c->n++] = (struct seg){v, off + lo, off + end};
        return;
    }
}

static int collect_box(void *ctx, const struct translate_alaunch *l)
{
    struct collect *c = ctx;
    return translate_affine_written(c->r->tk->affine, l, collect_range, c) != 0 || c->oom ? -1 : 0;
}

static int seg_order(const void *a, const void *b)
{
    const struct seg *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? -1 : 1;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Marks the pages of va[v] whole inside root bytes [lo, end). */
static bool mark_whole(struct vast_paged *r, size_t v, long long lo, long long end, uint8_t *cover)
{
    const struct vast_varg *a = &r->va[v];
    long long page = (long long)r->pool->page_size, root_size = (long long)vast_mem_root(a->m)->size;
    bool any = false;
    for (long long p = (lo + page - 1) / page; p < (long long)(a->first + a->count); p++) {
        long long pend = (p + 1) * page < root_size ? (p + 1) * page : root_size;
        if (pend > end)
            break;
        if (p >= (long long)a->first) {
            cover[a->va_page + (size_t)(p - (long long)a->first)] = 1;
            any = true;
        }
    }
    return any;
}

bool vast_partition_cover(struct vast_paged *r, size_t first, size_t end, uint8_t *cover)
{
    memset(cover, 0, r->pages);
    if (!cover_rule(r))
        return false;
    struct translate_alaunch l;
    const void *values[64];
    size_t sizes[64];
    struct collect c = {r, NULL, 0, 0, false};
    bool any = false;
    if (vast_affine_launch(r, &l, values, sizes) == 0 && vast_group_boxes(r, first, end, &l, collect_box, &c) == 0) {
        if (c.n > 1) /* c.segs is NULL when no box wrote (qsort's pointer must not be) */
            qsort(c.segs, c.n, sizeof *c.segs, seg_order);
        for (size_t i = 0; i < c.n;) { /* merge overlapping and adjacent ranges of one buffer */
            size_t v = c.segs[i].v;
            long long lo = c.segs[i].lo, hi = c.segs[i].end;
            for (i++; i < c.n && c.segs[i].v == v && c.segs[i].lo <= hi; i++)
                hi = c.segs[i].end > hi ? c.segs[i].end : hi;
            any = mark_whole(r, v, lo, hi, cover) || any;
        }
    } else {
        memset(cover, 0, r->pages); /* a failed evaluation covers nothing */
    }
    free(c.segs);
    return any;
}
