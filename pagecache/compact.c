/* compact.c: making a buffer's pages resident as ONE run of adjacent frames of one chunk
 * (pagecache_make_contiguous), compacting the pool where the free frames are scattered.
 * A kernel VAST cannot page runs on a real sub-buffer of a chunk, so its buffers need such
 * runs even when make_resident, which takes whatever frames are free or evictable, would
 * scatter them. Principal entry point: pagecache_make_contiguous.
 *
 * One call: (1) under the pool lock, wait until the range is idle, choose a window of
 * `count` frames in one chunk (no frame pinned or in I/O except the range's own pages
 * already in place; fewest frames to empty and pages to load, or the lowest such window
 * with VAST_PC_PACK), claim it: every frame of the window not already holding its page gets
 * VAST_FS_IO and one pin and is retagged to the page it will hold (`evicting` names the page
 * it held), and the range's pages resident elsewhere get VAST_FS_IO on their old frames;
 * (2) without the lock, write back every dirty page in the way (the window's occupants and
 * the range's own misplaced pages) and wait for all of it, then load the range's moved and
 * missing pages into their frames and wait; (3) retake the lock and publish, or undo.
 * Pages are moved through the host (write back, load again): the pool needs no device
 * copies, and a dirty page is on the host before its frame is reused (README.md, "The I/O
 * protocol"). All or nothing: a failed write-back leaves every page where it was, dirty
 * bits included; a failed load leaves the range's moved and missing pages absent and the
 * evicted pages on the host, with no pin of the call held.
 * See also residency.c (make_resident, whose protocol this follows) and README.md. */
#include "pagecache_int.h"

#include <stdlib.h>

/* A frame of the window that changes hands, or an own page's old frame outside it. */
struct cc_frame {
    uint32_t frame;
    struct vast_pc_buffer *old_owner; /* NULL: the frame was free */
    size_t old_page;
    uint32_t old_state;               /* state word before the call (flags only matter) */
    int in_window;                    /* 1: receives a page of the range */
};

struct cc_call {
    struct vast_pc_buffer *root;
    size_t first, count, start;       /* root pages, window's first frame */
    struct cc_frame *moves;           /* window frames that change hands, then old frames */
    size_t nmoves;
    uint32_t *was;                    /* per page of the range: its frame before the call */
    size_t nkept;                     /* pages already in place (pinned by the call) */
};

/* Lock held: cost of emptying frame f for the window (0 free, 1 clean, 2 dirty), or -1 when
 * it cannot be taken (pinned or in I/O for someone else). */
static int cc_frame_cost(struct vast_pool *pool, uint32_t f)
{
    uint32_t s = pc_state(pool, f);
    if (s == 0)
        return 0;
    if (VAST_FS_PINS(s) || (s & VAST_FS_IO))
        return -1;
    return (s & VAST_FS_DIRTY) ? 2 : 1;
}

/* Lock held: whether frame f holds page first + (f - start) of root, i.e. is in place. */
static int cc_in_place(const struct cc_call *c, struct vast_pool *pool, size_t f)
{
    const struct vast_frame *fr = &pool->frames[f];
    return (pc_state(pool, (uint32_t)f) & VAST_FS_VALID) && fr->owner == c->root &&
           fr->page == c->first + (f - c->start);
}

/* Per frame and per window start, what cc_choose_window adds up (uint32_t: frames < 2^32). */
struct cc_sums {
    uint32_t *cost, *blocked;        /* prefix sums over frames of cc_frame_cost, of -1s */
    uint32_t *placed, *placed_cost;  /* per window start: own pages in place, their cost, */
    uint32_t *placed_pinned;         /* and those of them that are pinned */
};

/* Lock held: the sums for c; fixed receives the start that own pinned pages impose
 * (SIZE_MAX: none, SIZE_MAX - 1: no window can keep them all). */
static int cc_sum(const struct cc_call *c, struct cc_sums *m, size_t *fixed)
{
    struct vast_pool *pool = c->root->pool;
    size_t n = pagecache_frames_now(pool);
    m->cost = calloc(n + 1, sizeof *m->cost);
    m->blocked = calloc(n + 1, sizeof *m->blocked);
    m->placed = calloc(n, sizeof *m->placed);
    m->placed_cost = calloc(n, sizeof *m->placed_cost);
    m->placed_pinned = calloc(n, sizeof *m->placed_pinned);
    if (!m->cost || !m->blocked || !m->placed || !m->placed_cost || !m->placed_pinned)
        return VAST_PC_ERR_HOST_MEMORY;
    for (size_t f = 0; f < n; f++) {
        int fc = cc_frame_cost(pool, (uint32_t)f);
        m->cost[f + 1] = m->cost[f] + (uint32_t)(fc < 0 ? 0 : fc);
        m->blocked[f + 1] = m->blocked[f] + (fc < 0);
    }
    *fixed = SIZE_MAX;
    for (size_t p = c->first; p < c->first + c->count; p++) {
        uint32_t f = pagecache_pt_frame(&c->root->pt, p);
        if (f == VAST_PT_NO_FRAME)
            continue;
        size_t k = p - c->first;
        int fits = f >= k && (f - k) / pool->frames_per_chunk == f / pool->frames_per_chunk;
        int fc = cc_frame_cost(pool, f);
        if (fits) {
            m->placed[f - k]++;
            m->placed_cost[f - k] += (uint32_t)(fc < 0 ? 0 : fc);
            m->placed_pinned[f - k] += fc < 0;
        }
        if (fc < 0) /* pinned (the range is idle: not in I/O): it stays where it is */
            *fixed = !fits || (*fixed != SIZE_MAX && *fixed != f - k) ? SIZE_MAX - 1 : f - k;
        if (*fixed == SIZE_MAX - 1)
            break;
    }
    return VAST_PC_OK;
}

static void cc_sums_free(struct cc_sums *m)
{
    free(m->cost);
    free(m->blocked);
    free(m->placed);
    free(m->placed_cost);
    free(m->placed_pinned);
}

/* Lock held. The window [start, start+count) in one chunk that costs least to fill (frames
 * to empty, dirty ones twice, plus pages to load), or the lowest one with pack; a frame
 * pinned or in I/O may only be one of the range's own pages in place, and own pages that
 * are pinned fix the window. Sets c->start; VAST_PC_ERR_NO_FRAMES when there is none. */
static int cc_choose_window(struct cc_call *c, int pack)
{
    struct vast_pool *pool = c->root->pool;
    struct cc_sums m = {0};
    size_t fixed, best = SIZE_MAX, best_cost = SIZE_MAX;
    int rc = cc_sum(c, &m, &fixed);
    for (size_t s = 0; rc == VAST_PC_OK && s + c->count <= pagecache_frames_now(pool) && fixed != SIZE_MAX - 1; s++) {
        size_t e = s + c->count;
        if (s / pool->frames_per_chunk != (e - 1) / pool->frames_per_chunk || (fixed != SIZE_MAX && s != fixed))
            continue;
        if (m.blocked[e] - m.blocked[s] != m.placed_pinned[s]) /* only own pages in place may be pinned */
            continue;
        size_t cost = (size_t)(m.cost[e] - m.cost[s]) - m.placed_cost[s] + (c->count - m.placed[s]);
        if (cost < best_cost) {
            best = s;
            best_cost = cost;
            if (pack || cost == 0)
                break;
        }
    }
    cc_sums_free(&m);
    if (rc != VAST_PC_OK)
        return rc;
    if (best == SIZE_MAX)
        return VAST_PC_ERR_NO_FRAMES;
    c->start = best;
    return VAST_PC_OK;
}

/* Lock held: claim the window and the old frames of misplaced own pages (see the header). */
static void cc_claim(struct cc_call *c, unsigned flags)
{
    struct vast_pool *pool = c->root->pool;
    struct vast_pc_buffer *root = c->root;
    for (size_t k = 0; k < c->count; k++)
        c->was[k] = pagecache_pt_frame(&root->pt, c->first + k);
    for (size_t k = 0; k < c->count; k++) {
        uint32_t f = (uint32_t)(c->start + k);
        struct vast_frame *fr = &pool->frames[f];
        uint32_t s = pc_state(pool, f);
        if (cc_in_place(c, pool, f)) {
            if (flags & VAST_PC_PIN)
                atomic_fetch_add(&fr->state, VAST_FS_PIN_ONE);
            c->nkept++;
            continue;
        }
        struct cc_frame *m = &c->moves[c->nmoves++];
        *m = (struct cc_frame){f, (s & VAST_FS_VALID) ? fr->owner : NULL, fr->page, s, 1};
        if (!m->old_owner)
            pagecache_take_free(pool, f);
        fr->evicting = m->old_owner;
        fr->evicting_page = m->old_page;
        fr->owner = root;
        fr->page = c->first + k;
        atomic_fetch_or(&fr->state, VAST_FS_VALID | VAST_FS_IO | VAST_FS_PIN_ONE);
    }
    for (size_t k = 0; k < c->count; k++) {
        uint32_t g = c->was[k];
        if (g == VAST_PT_NO_FRAME || (g >= c->start && g < c->start + c->count))
            continue; /* absent, or in the window (kept or already claimed) */
        struct vast_frame *fr = &pool->frames[g];
        c->moves[c->nmoves++] = (struct cc_frame){g, root, c->first + k, pc_state(pool, g), 0};
        fr->evicting = root;
        fr->evicting_page = c->first + k;
        fr->owner = NULL;
        atomic_fetch_and(&fr->state, ~VAST_FS_VALID);
        atomic_fetch_or(&fr->state, VAST_FS_IO);
    }
    for (size_t k = 0; k < c->count; k++)
        pagecache_pt_set_frame(&root->pt, c->first + k, (uint32_t)(c->start + k));
}

/* Lock held: every page back where it was (a write-back failed: nothing was loaded). */
static void cc_undo_all(struct cc_call *c, unsigned flags)
{
    struct vast_pool *pool = c->root->pool;
    for (size_t k = 0; k < c->count; k++)
        pagecache_pt_set_frame(&c->root->pt, c->first + k, c->was[k]);
    for (size_t i = 0; i < c->nmoves; i++) {
        struct cc_frame *m = &c->moves[i];
        struct vast_frame *fr = &pool->frames[m->frame];
        fr->evicting = NULL;
        if (!m->old_owner) {
            pagecache_free_frame(pool, m->frame);
            continue;
        }
        fr->owner = m->old_owner;
        fr->page = m->old_page;
        atomic_fetch_or(&fr->state, VAST_FS_VALID);
        atomic_fetch_and(&fr->state, ~VAST_FS_IO);
        if (m->in_window)
            atomic_fetch_sub(&fr->state, VAST_FS_PIN_ONE);
    }
    for (size_t k = 0; k < c->count && (flags & VAST_PC_PIN); k++)
        if (c->was[k] == c->start + k)
            atomic_fetch_sub(&pool->frames[c->was[k]].state, VAST_FS_PIN_ONE);
}

/* Lock held: the pages that lost their frame leave (a victim whose page table still points
 * at the frame it was evicted from). */
static void cc_drop_victim(const struct cc_frame *m)
{
    if (m->old_owner && pagecache_pt_frame(&m->old_owner->pt, m->old_page) == m->frame)
        pagecache_pt_set_frame(&m->old_owner->pt, m->old_page, VAST_PT_NO_FRAME);
}

/* Lock held: a load failed after every write-back succeeded: the evicted pages are on the
 * host; the range keeps only the pages that were in place, unpinned. */
static void cc_undo_loads(struct cc_call *c, unsigned flags)
{
    struct vast_pool *pool = c->root->pool;
    for (size_t i = 0; i < c->nmoves; i++) {
        struct cc_frame *m = &c->moves[i];
        cc_drop_victim(m);
        if (m->in_window)
            pagecache_pt_set_frame(&c->root->pt, m->frame - c->start + c->first, VAST_PT_NO_FRAME);
        pool->frames[m->frame].evicting = NULL;
        pagecache_free_frame(pool, m->frame);
    }
    for (size_t k = 0; k < c->count && (flags & VAST_PC_PIN); k++)
        if (c->was[k] == c->start + k)
            atomic_fetch_sub(&pool->frames[c->was[k]].state, VAST_FS_PIN_ONE);
}

/* Lock held: publish a successful call. */
static void cc_complete(struct cc_call *c, unsigned flags)
{
    struct vast_pool *pool = c->root->pool;
    size_t victims = 0, dirty = 0;
    for (size_t i = 0; i < c->nmoves; i++) {
        struct cc_frame *m = &c->moves[i];
        struct vast_frame *fr = &pool->frames[m->frame];
        cc_drop_victim(m);
        fr->evicting = NULL;
        if (!m->in_window) {
            pagecache_free_frame(pool, m->frame);
            continue;
        }
        if (m->old_owner && m->old_owner != c->root) {
            victims++;
            dirty += (m->old_state & VAST_FS_DIRTY) != 0;
        }
        atomic_fetch_and(&fr->state, ~(VAST_FS_IO | VAST_FS_DIRTY | VAST_FS_USAGE_MASK));
        atomic_fetch_or(&fr->state, VAST_FS_USAGE_ONE);
        if (!(flags & VAST_PC_PIN))
            atomic_fetch_sub(&fr->state, VAST_FS_PIN_ONE);
    }
    atomic_fetch_add(&pool->stats.evictions, victims);
    atomic_fetch_add(&pool->stats.dirty_evictions, dirty);
    atomic_fetch_add(&pool->stats.hits, c->nkept);
    atomic_fetch_add(&pool->stats.misses, c->count - c->nkept);
}

/* Without the lock: dirty pages in the way go to the host (all waited for), then the range's
 * pages load into the window. 1 when a write-back failed, 2 when a load failed, else 0. */
static int cc_transfer(struct cc_call *c)
{
    struct vast_pool *pool = c->root->pool;
    struct pc_io *ios = malloc((c->nmoves ? c->nmoves : 1) * sizeof *ios);
    if (!ios)
        return 1;
    size_t n = 0;
    for (size_t i = 0; i < c->nmoves; i++)
        if (c->moves[i].old_owner && (c->moves[i].old_state & VAST_FS_DIRTY))
            ios[n++] = (struct pc_io){c->moves[i].frame, c->moves[i].old_owner, c->moves[i].old_page};
    int rc = pc_write_back_runs(pool, ios, n) ? 1 : 0;
    n = 0;
    for (size_t i = 0; rc == 0 && i < c->nmoves; i++)
        if (c->moves[i].in_window)
            ios[n++] = (struct pc_io){c->moves[i].frame, c->root, c->moves[i].frame - c->start + c->first};
    if (rc == 0 && n > 0) {
        struct pc_lane ld = {.dir = PC_LOAD};
        int irc = pc_issue_runs(pool, ios, n, &ld, 0, SIZE_MAX);
        int wrc = pool->ops->wait(pool->dev); /* even after an error: nothing may be left running */
        rc = irc || wrc ? 2 : 0;
    }
    free(ios);
    return rc;
}

static void cc_fill_locs(const struct cc_call *c, struct vast_frame_loc *locs)
{
    for (size_t k = 0; k < c->count; k++) {
        uint32_t f = (uint32_t)(c->start + k);
        locs[k] = (struct vast_frame_loc){pagecache_frame_chunk(c->root->pool, f),
                                          pagecache_frame_offset(c->root->pool, f), f};
    }
}

/* Lock held: wait for the range, choose and claim a window; frames in I/O for other calls
 * are waited for (they come back without anything this call holds) before giving up. */
static int cc_prepare(struct cc_call *c, unsigned flags)
{
    for (;;) {
        pc_wait_range_idle(c->root, c->first, c->count);
        int rc = cc_choose_window(c, (flags & VAST_PC_PACK) != 0);
        if (rc == VAST_PC_OK) {
            cc_claim(c, flags);
            return VAST_PC_OK;
        }
        if (rc != VAST_PC_ERR_NO_FRAMES || !pc_wait_frames_back(c->root->pool))
            return rc;
    }
}

int pagecache_make_contiguous(struct vast_pc_buffer *buf, size_t first, size_t count,
                              unsigned flags, struct vast_frame_loc *locs)
{
    int rc = pc_check_request(buf, first, count, true);
    if (rc != VAST_PC_OK || count == 0)
        return rc;
    struct vast_pool *pool = buf->pool;
    struct cc_call c = {.root = buf->root, .first = first, .count = count};
    c.moves = malloc(2 * count * sizeof *c.moves);
    c.was = malloc(count * sizeof *c.was);
    rc = c.moves && c.was ? VAST_PC_OK : VAST_PC_ERR_HOST_MEMORY;
    if (rc == VAST_PC_OK) {
        pthread_mutex_lock(&pool->lock);
        rc = cc_prepare(&c, flags);
        pthread_mutex_unlock(&pool->lock);
    }
    if (rc == VAST_PC_OK) {
        int t = cc_transfer(&c);
        pthread_mutex_lock(&pool->lock);
        if (t == 1)
            cc_undo_all(&c, flags);
        else if (t == 2)
            cc_undo_loads(&c, flags);
        else
            cc_complete(&c, flags);
        pthread_cond_broadcast(&pool->io_done);
        pthread_mutex_unlock(&pool->lock);
        if (t == 0 && locs)
            cc_fill_locs(&c, locs);
        rc = t ? VAST_PC_ERR_TRANSFER : VAST_PC_OK;
    }
    free(c.moves);
    free(c.was);
    return rc;
}
