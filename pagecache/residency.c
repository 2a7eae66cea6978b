/* residency.c: virtual buffers on a pool and the device side of the page cache: making page
 * ranges resident (with eviction and write-back of dirty victims), pins, dirty marks, and the
 * shared helpers (run-coalesced transfers, range iteration, waiting for I/O).
 * Protocol of a load: under the pool lock, frames are granted and retagged with VAST_FS_IO
 * set; the lock is dropped for the transfers (a load into a frame is issued only after the
 * write-back of its dirty victim has been waited for and succeeded: simplex, all write-backs
 * then all loads; duplex, window by window with the next windows' write-backs in flight on
 * the unordered lane, so both directions of the link are busy); the lock is retaken to
 * publish the result and wake waiters. Rules: README.md ("Duplex transfers"). */
#include "pagecache_int.h"

#include <stdlib.h>
#include <time.h>

/* ---------- shared helpers ---------- */

int pc_root_range(const struct vast_pc_buffer *buf, size_t offset, size_t size, size_t *root_off)
{
    if (!buf || offset > buf->size || size > buf->size - offset)
        return VAST_PC_ERR_INVALID;
    *root_off = buf->offset + offset;
    return VAST_PC_OK;
}

/* Room for one more ticket, made before the transfer so that a ticket is never lost. */
static int reserve_ticket(struct pc_lane *lane)
{
    if (lane->ntickets < lane->cap)
        return VAST_PC_OK;
    size_t cap = lane->cap ? 2 * lane->cap : 16;
    void **t = realloc(lane->tickets, cap * sizeof *t);
    if (!t)
        return VAST_PC_ERR_HOST_MEMORY;
    lane->tickets = t;
    struct pc_landing *l = realloc(lane->landing, cap * sizeof *l);
    if (!l)
        return VAST_PC_ERR_HOST_MEMORY;
    lane->landing = l;
    lane->cap = cap;
    return VAST_PC_OK;
}

static int write_back_unordered(struct vast_pool *pool, struct pc_lane *lane,
                                vast_dev_chunk chunk, size_t dev_off, char *host, size_t len,
                                vast_host_pin pin)
{
    if (reserve_ticket(lane))
        return VAST_PC_ERR_HOST_MEMORY;
    void *ticket = NULL;
    int rc = pool->ops->read_unordered(pool->dev, chunk, dev_off, host, len, pin, &ticket);
    if (rc == VAST_PC_OK && ticket) { /* NULL: already complete (staged) */
        lane->landing[lane->ntickets] = (struct pc_landing){NULL, 0, 0};
        lane->tickets[lane->ntickets++] = ticket;
    }
    atomic_fetch_add(&pool->stats.unordered_d2h_transfers, 1);
    return rc;
}

int pc_plain_transfer(struct vast_pool *pool, struct vast_pc_buffer *root, uint32_t frame,
                      size_t dev_off, size_t start, size_t len, struct pc_lane *lane)
{
    char *host = (char *)pagecache_backing_base(root->backing) + start;
    vast_host_pin pin = pagecache_pin_backing(root->backing, pool->ops, pool->dev, start, len);
    vast_dev_chunk chunk = pagecache_frame_chunk(pool, frame);
    int rc;
    if (lane->dir == PC_LOAD) {
        rc = pool->ops->write(pool->dev, chunk, dev_off, host, len, pin);
        atomic_fetch_add(&pool->stats.h2d_transfers, 1);
        atomic_fetch_add(&pool->stats.h2d_bytes, len);
        atomic_fetch_add(&root->h2d_bytes, len);
    } else {
        rc = lane->dir == PC_WRITE_BACK_UNORDERED
                 ? write_back_unordered(pool, lane, chunk, dev_off, host, len, pin)
                 : pool->ops->read(pool->dev, chunk, dev_off, host, len, pin);
        atomic_fetch_add(&pool->stats.d2h_transfers, 1);
        atomic_fetch_add(&pool->stats.d2h_bytes, len);
    }
    if (rc == VAST_PC_OK)
        lane->bytes += len;
    return rc ? VAST_PC_ERR_TRANSFER : VAST_PC_OK;
}

/* One transfer of root bytes [start, start+len) <-> device at dev_off (within one granule). */
static int transfer(struct vast_pool *pool, struct vast_pc_buffer *root, uint32_t frame,
                    size_t dev_off, size_t start, size_t len, struct pc_lane *lane)
{
    if (root->group) /* shared with other pools: twins and merges, or owned pages (peers.c) */
        return pc_group_transfer(pool, root, frame, dev_off, start, len, lane);
    return pc_plain_transfer(pool, root, frame, dev_off, start, len, lane);
}

int pc_wait_tickets(struct vast_pool *pool, struct pc_lane *lane, size_t upto)
{
    int rc = VAST_PC_OK;
    for (; lane->waited < upto && lane->waited < lane->ntickets; lane->waited++) {
        int r = pool->ops->wait_ticket(pool->dev, lane->tickets[lane->waited]);
        lane->tickets[lane->waited] = NULL;
        if (r == 0 && lane->landing[lane->waited].root != NULL) /* on the host now */
            pc_group_owned_landed(pool, &lane->landing[lane->waited]);
        if (rc == VAST_PC_OK && r)
            rc = VAST_PC_ERR_TRANSFER;
    }
    return rc;
}

int pc_finish_lane(struct vast_pool *pool, struct pc_lane *lane)
{
    int rc = pc_wait_tickets(pool, lane, lane->ntickets);
    free(lane->tickets);
    free(lane->landing);
    lane->tickets = NULL;
    lane->landing = NULL;
    lane->ntickets = lane->waited = lane->cap = 0;
    return rc;
}

int pc_write_back_runs(struct vast_pool *pool, const struct pc_io *ios, size_t n)
{
    if (n == 0)
        return VAST_PC_OK;
    struct pc_lane wb = {.dir = pc_duplex_pages(pool) ? PC_WRITE_BACK_UNORDERED : PC_WRITE_BACK};
    int rc = pc_issue_runs(pool, ios, n, &wb, 0, SIZE_MAX);
    int wrc = wb.dir == PC_WRITE_BACK_UNORDERED ? pc_finish_lane(pool, &wb) : pool->ops->wait(pool->dev);
    return rc || wrc ? VAST_PC_ERR_TRANSFER : VAST_PC_OK;
}

/* A run of npages adjacent frames holding consecutive pages, clipped to [lo, hi) and split
 * at pin granule boundaries (see backing.h: a transfer must lie in one pinned wrapper). */
static int issue_one(struct vast_pool *pool, const struct pc_io *io, size_t npages,
                     struct pc_lane *lane, size_t lo, size_t hi)
{
    struct vast_pc_buffer *root = io->buf;
    size_t base = io->page << pool->page_shift;
    size_t start = base, end = (io->page + npages) << pool->page_shift;
    if (end > root->size) end = root->size;
    if (start < lo) start = lo;
    if (end > hi) end = hi;
    size_t granule = pagecache_backing_pin_granule(root->backing);
    while (start < end) {
        size_t stop = (start / granule + 1) * granule;
        size_t len = (stop < end ? stop : end) - start;
        size_t dev_off = pagecache_frame_offset(pool, io->frame) + (start - base);
        int rc = transfer(pool, root, io->frame, dev_off, start, len, lane);
        if (rc)
            return rc;
        start += len;
    }
    return VAST_PC_OK;
}

int pc_issue_runs(struct vast_pool *pool, const struct pc_io *ios, size_t n,
                  struct pc_lane *lane, size_t lo, size_t hi)
{
    size_t i = 0;
    while (i < n) {
        size_t j = i + 1;
        while (j < n && ios[j].buf == ios[i].buf && ios[j].page == ios[j - 1].page + 1 &&
               pagecache_frames_adjacent(pool, ios[j - 1].frame, ios[j].frame))
            j++;
        int rc = issue_one(pool, &ios[i], j - i, lane, lo, hi);
        if (rc)
            return rc;
        i = j;
    }
    return VAST_PC_OK;
}

void pc_for_each_resident(struct vast_pc_buffer *root, size_t first, size_t count,
                          int with_evicting, pc_visit_fn visit, void *ctx)
{
    struct vast_pool *pool = root->pool;
    if (count <= pagecache_frames_now(pool)) {
        /* No page of the buffer resident: nothing to visit. A blocking map of 64 MiB that only
         * the host wrote walked every page twice (range idle, then flush): its command took
         * 2.2 us through VAST on PoCL, 1.3-1.8 us without the walks (PoCL itself 0.2-0.5 us;
         * clpeak divides by these times). */
        if (root->pt.mapped == 0)
            return;
        for (size_t p = first; p < first + count; p++) {
            uint32_t f = pagecache_pt_frame(&root->pt, p);
            if (f != VAST_PT_NO_FRAME)
                visit(pool, p, f, ctx);
        }
        return;
    }
    for (uint32_t f = 0; f < pagecache_frames_now(pool); f++) {
        struct vast_frame *fr = &pool->frames[f];
        if ((pc_state(pool, f) & VAST_FS_VALID) && fr->owner == root && fr->page >= first &&
            fr->page - first < count)
            visit(pool, fr->page, f, ctx);
        if (with_evicting && fr->evicting == root && fr->evicting_page >= first &&
            fr->evicting_page - first < count)
            visit(pool, fr->evicting_page, f, ctx);
    }
}

static void visit_busy(struct vast_pool *pool, size_t page, uint32_t f, void *ctx)
{
    (void)page;
    if (pc_state(pool, f) & VAST_FS_IO)
        *(int *)ctx = 1;
}

static int host_write_overlaps(struct vast_pc_buffer *root, size_t first, size_t count)
{
    for (struct vast_host_write *w = root->writers; w; w = w->next)
        if (w->first < first + count && first < w->first + w->count)
            return 1;
    return 0;
}

void pc_wait_range_idle(struct vast_pc_buffer *root, size_t first, size_t count)
{
    for (;;) {
        int busy = host_write_overlaps(root, first, count);
        if (!busy)
            pc_for_each_resident(root, first, count, 1, visit_busy, &busy);
        if (!busy)
            return;
        pthread_cond_wait(&root->pool->io_done, &root->pool->lock);
    }
}

/* ---------- buffers ---------- */

int pagecache_create_buffer(struct vast_pool *pool, struct vast_backing *backing,
                            struct vast_pc_buffer **out)
{
    if (!pool || !backing || !out)
        return VAST_PC_ERR_INVALID;
    VAST_PC_NEW(struct vast_pc_buffer, b);
    b->pool = pool;
    b->root = b;
    b->size = pagecache_backing_size(backing);
    b->backing = backing;
    if (pagecache_init_page_table(&b->pt, b->size, pool->page_shift)) {
        free(b);
        return VAST_PC_ERR_HOST_MEMORY;
    }
    pthread_mutex_lock(&pool->lock);
    b->next_root = pool->roots;
    if (pool->roots)
        pool->roots->prev_root = b;
    pool->roots = b;
    pthread_mutex_unlock(&pool->lock);
    *out = b;
    return VAST_PC_OK;
}

int pagecache_create_sub_buffer(struct vast_pc_buffer *parent, size_t offset, size_t size,
                                struct vast_pc_buffer **out)
{
    size_t root_off;
    if (!out || size == 0 || pc_root_range(parent, offset, size, &root_off))
        return VAST_PC_ERR_INVALID;
    VAST_PC_NEW(struct vast_pc_buffer, b);
    b->pool = parent->pool;
    b->root = parent->root;
    b->offset = root_off;
    b->size = size;
    b->backing = parent->root->backing;
    *out = b;
    return VAST_PC_OK;
}

static void visit_pinned(struct vast_pool *pool, size_t page, uint32_t f, void *ctx)
{
    (void)page;
    if (VAST_FS_PINS(pc_state(pool, f)))
        *(int *)ctx = 1;
}

/* Releasing a buffer frees its frames and gives their memory back to the device in runs of
 * adjacent frames (pagecache_retire_frames: past the few kept warm for the next buffers), so
 * that the pool's footprint follows the buffers alive, as the real driver's does when a buffer
 * is released. Frames freed otherwise (a host write covering a page, compaction) are not given
 * back: their buffer usually needs frames again at once. */
struct drop_ctx {
    struct vast_pc_buffer *root;
    uint32_t run, n; /* the run of freed frames not yet given back */
};

static void visit_drop(struct vast_pool *pool, size_t page, uint32_t f, void *ctx)
{
    struct drop_ctx *d = ctx;
    pagecache_pt_set_frame(&d->root->pt, page, VAST_PT_NO_FRAME);
    pagecache_free_frame(pool, f);
    if (d->n > 0 && pagecache_frames_adjacent(pool, d->run + d->n - 1, f)) {
        d->n++;
        return;
    }
    pagecache_retire_frames(pool, d->run, d->n);
    d->run = f;
    d->n = 1;
}

int pagecache_release_buffer(struct vast_pc_buffer *buf)
{
    if (!buf)
        return VAST_PC_ERR_INVALID;
    if (buf->root != buf) {
        free(buf);
        return VAST_PC_OK;
    }
    struct vast_pool *pool = buf->pool;
    int pinned = 0;
    pthread_mutex_lock(&pool->lock);
    pc_wait_range_idle(buf, 0, buf->pt.npages);
    pc_for_each_resident(buf, 0, buf->pt.npages, 0, visit_pinned, &pinned);
    if (!pinned) {
        struct drop_ctx d = {buf, 0, 0};
        pc_for_each_resident(buf, 0, buf->pt.npages, 0, visit_drop, &d);
        pagecache_retire_frames(pool, d.run, d.n);
        *(buf->prev_root ? &buf->prev_root->next_root : &pool->roots) = buf->next_root;
        if (buf->next_root)
            buf->next_root->prev_root = buf->prev_root;
    }
    pthread_mutex_unlock(&pool->lock);
    if (pinned)
        return VAST_PC_ERR_PINNED;
    if (buf->group)
        pc_group_leave(buf);
    pagecache_fini_page_table(&buf->pt);
    free(buf);
    return VAST_PC_OK;
}

size_t pagecache_buffer_size(const struct vast_pc_buffer *buf) { return buf->size; }

void *pagecache_buffer_host(const struct vast_pc_buffer *buf)
{
    return (char *)pagecache_backing_base(buf->backing) + buf->offset;
}

int pagecache_page_range(const struct vast_pc_buffer *buf, size_t offset, size_t size,
                         size_t *first, size_t *count)
{
    size_t root_off;
    if (!first || !count || pc_root_range(buf, offset, size, &root_off))
        return VAST_PC_ERR_INVALID;
    pagecache_pages_of_range(root_off, size, buf->pool->page_shift, first, count);
    return VAST_PC_OK;
}

uint32_t pagecache_page_version(const struct vast_pc_buffer *buf, size_t page)
{
    return pagecache_pt_version(&buf->root->pt, page);
}

uint32_t pagecache_page_frame(const struct vast_pc_buffer *buf, size_t page)
{
    return pagecache_pt_frame(&buf->root->pt, page);
}

static void visit_count(struct vast_pool *pool, size_t page, uint32_t frame, void *ctx)
{
    (void)pool, (void)page, (void)frame;
    (*(size_t *)ctx)++;
}

size_t pagecache_resident_pages(const struct vast_pc_buffer *buf, size_t first, size_t count)
{
    size_t n = 0;
    pthread_mutex_lock(&buf->pool->lock);
    pc_for_each_resident(buf->root, first, count, 0, visit_count, &n);
    pthread_mutex_unlock(&buf->pool->lock);
    return n;
}

void pagecache_buffer_traffic(const struct vast_pc_buffer *buf, uint64_t *h2d_bytes, uint64_t *noload_bytes)
{
    *h2d_bytes = atomic_load(&buf->root->h2d_bytes);
    *noload_bytes = atomic_load(&buf->root->noload_bytes);
}

uint64_t pagecache_buffer_twin_bytes(const struct vast_pc_buffer *buf)
{
    return atomic_load(&buf->root->twin_bytes);
}

int pagecache_page_is_dirty(const struct vast_pc_buffer *buf, size_t page)
{
    uint32_t f = pagecache_pt_frame(&buf->root->pt, page);
    return f != VAST_PT_NO_FRAME && (pc_state(buf->pool, f) & VAST_FS_DIRTY) != 0;
}

/* ---------- making pages resident ---------- */

struct mr_call {
    struct vast_pc_buffer *root;
    size_t first, count;
    struct vast_frame_grant *grants;
    size_t *grant_page;
    unsigned char *loading; /* per grant: a load into its frame was issued, so its victim
                             * (clean, or already on the host) can no longer stay there */
    size_t ngrants, hits;
    bool no_load; /* VAST_PC_NO_LOAD: grants are not loaded */
};

static void mr_pin_resident(struct mr_call *c)
{
    struct vast_pool *pool = c->root->pool;
    for (size_t p = c->first; p < c->first + c->count; p++) {
        uint32_t f = pagecache_pt_frame(&c->root->pt, p);
        if (f == VAST_PT_NO_FRAME)
            continue;
        uint32_t s = atomic_fetch_add(&pool->frames[f].state, VAST_FS_PIN_ONE);
        if (VAST_FS_USAGE(s) < VAST_FS_USAGE_MAX)
            atomic_fetch_add(&pool->frames[f].state, VAST_FS_USAGE_ONE);
        c->hits++;
    }
}

static void mr_retag(struct mr_call *c, const struct vast_frame_grant *g, size_t page)
{
    struct vast_frame *fr = &c->root->pool->frames[g->frame];
    fr->evicting = g->victim;
    fr->evicting_page = g->victim_page;
    fr->owner = c->root;
    fr->page = page;
    atomic_fetch_or(&fr->state, VAST_FS_VALID);
    pagecache_pt_set_frame(&c->root->pt, page, g->frame);
    c->grant_page[c->ngrants] = page;
}

static int mr_grant_missing(struct mr_call *c)
{
    size_t end = c->first + c->count;
    for (size_t p = c->first; p < end;) {
        if (pagecache_pt_frame(&c->root->pt, p) != VAST_PT_NO_FRAME) {
            p++;
            continue;
        }
        size_t run = 1;
        while (p + run < end && pagecache_pt_frame(&c->root->pt, p + run) == VAST_PT_NO_FRAME)
            run++;
        while (run > 0) {
            size_t n = pagecache_grant_frames(c->root->pool, run, &c->grants[c->ngrants]);
            if (n == 0)
                return VAST_PC_ERR_NO_FRAMES;
            for (size_t i = 0; i < n; i++, c->ngrants++)
                mr_retag(c, &c->grants[c->ngrants], p + i);
            p += n;
            run -= n;
        }
    }
    return VAST_PC_OK;
}

static void mr_unpin_call(struct mr_call *c)
{
    struct vast_pool *pool = c->root->pool;
    for (size_t p = c->first; p < c->first + c->count; p++) {
        uint32_t f = pagecache_pt_frame(&c->root->pt, p);
        if (f != VAST_PT_NO_FRAME)
            atomic_fetch_sub(&pool->frames[f].state, VAST_FS_PIN_ONE);
    }
}

/* Lock held. Undo of a failed call, grant by grant. A victim whose frame received no load
 * keeps frame, tag and dirty bit (the bytes there are still its own, written back or not);
 * a victim whose frame received a load was clean or is on the host (a load into a dirty
 * victim's frame is issued only after its write-back succeeded), so it leaves and the frame
 * is freed. The call's own new pages stay absent. */
static void mr_undo(struct mr_call *c)
{
    struct vast_pool *pool = c->root->pool;
    for (size_t i = 0; i < c->ngrants; i++) {
        const struct vast_frame_grant *g = &c->grants[i];
        struct vast_frame *fr = &pool->frames[g->frame];
        pagecache_pt_set_frame(&c->root->pt, c->grant_page[i], VAST_PT_NO_FRAME);
        fr->evicting = NULL;
        if (g->victim && !c->loading[i]) {
            fr->owner = g->victim;
            fr->page = g->victim_page;
            atomic_fetch_and(&fr->state, ~VAST_FS_IO);
            atomic_fetch_sub(&fr->state, VAST_FS_PIN_ONE);
        } else {
            if (g->victim)
                pagecache_pt_set_frame(&g->victim->pt, g->victim_page, VAST_PT_NO_FRAME);
            pagecache_free_frame(pool, g->frame);
        }
    }
    mr_unpin_call(c);
    pthread_cond_broadcast(&pool->io_done);
}

/* Lock held: the call's transfers are done; publish. */
static void mr_complete(struct mr_call *c)
{
    struct vast_pool *pool = c->root->pool;
    size_t dirty = 0, victims = 0;
    for (size_t i = 0; i < c->ngrants; i++) {
        const struct vast_frame_grant *g = &c->grants[i];
        struct vast_frame *fr = &pool->frames[g->frame];
        if (g->victim) {
            pagecache_pt_set_frame(&g->victim->pt, g->victim_page, VAST_PT_NO_FRAME);
            victims++;
            dirty += g->victim_dirty != 0;
        }
        fr->evicting = NULL;
        atomic_fetch_and(&fr->state, ~(VAST_FS_IO | VAST_FS_DIRTY | VAST_FS_USAGE_MASK));
        atomic_fetch_or(&fr->state, VAST_FS_USAGE_ONE | (c->no_load ? VAST_FS_UNLOADED : 0));
    }
    if (c->no_load) {
        atomic_fetch_add(&pool->stats.noload_bytes, (uint64_t)c->ngrants << pool->page_shift);
        atomic_fetch_add(&c->root->noload_bytes, (uint64_t)c->ngrants << pool->page_shift);
    }
    atomic_fetch_add(&pool->stats.evictions, victims);
    atomic_fetch_add(&pool->stats.dirty_evictions, dirty);
    atomic_fetch_add(&pool->stats.hits, c->hits);
    atomic_fetch_add(&pool->stats.misses, c->ngrants);
    pthread_cond_broadcast(&pool->io_done);
}

/* Issues the loads into grants which[0..n) (which NULL: grants 0..n) on the ordered lane;
 * from here on their victims cannot keep those frames. overlapped: write-backs of the call
 * are still in flight beside them (statistics only). */
static int mr_issue_loads(struct mr_call *c, struct pc_io *ios, const size_t *which, size_t n,
                          int overlapped)
{
    struct vast_pool *pool = c->root->pool;
    for (size_t i = 0; i < n; i++) {
        size_t g = which ? which[i] : i;
        ios[i] = (struct pc_io){c->grants[g].frame, c->root, c->grant_page[g]};
        c->loading[g] = 1;
    }
    struct pc_lane ld = {.dir = PC_LOAD};
    int rc = pc_issue_runs(pool, ios, n, &ld, 0, SIZE_MAX);
    if (overlapped)
        atomic_fetch_add(&pool->stats.overlap_h2d_bytes, ld.bytes);
    return rc;
}

/* Simplex: every dirty victim written back and waited for, then every load. */
static int mr_transfer_simplex(struct mr_call *c, struct pc_io *ios)
{
    struct vast_pool *pool = c->root->pool;
    size_t n = 0;
    for (size_t i = 0; i < c->ngrants; i++)
        if (c->grants[i].victim_dirty)
            ios[n++] = (struct pc_io){c->grants[i].frame, c->grants[i].victim,
                                      c->grants[i].victim_page};
    if (pc_write_back_runs(pool, ios, n))
        return VAST_PC_ERR_TRANSFER;
    if (c->no_load && c->ngrants > 0 && c->root->group != NULL)
        pc_group_granted(c->root, c->grant_page, c->ngrants);
    if (c->ngrants == 0 || c->no_load)
        return VAST_PC_OK;
    int rc = mr_issue_loads(c, ios, NULL, c->ngrants, 0);
    int wrc = pool->ops->wait(pool->dev);
    return rc || wrc ? VAST_PC_ERR_TRANSFER : VAST_PC_OK;
}

/* The duplex schedule of one call (README.md "Duplex transfers"). Grants are ordered: first
 * those whose frame holds nothing to save (free, or a clean victim), then those with a dirty
 * victim, cut into windows of `window` grants; window k's write-backs are tickets
 * [ticket_end[k-1], ticket_end[k]) of wb. */
struct mr_duplex {
    size_t *order;
    size_t nfree, window, nwin;
    size_t *ticket_end;
    size_t issued; /* windows whose write-backs were all issued */
    struct pc_lane wb;
};

static int mr_duplex_plan(const struct mr_call *c, struct mr_duplex *d, size_t window)
{
    size_t ndirty = 0;
    for (size_t i = 0; i < c->ngrants; i++)
        ndirty += c->grants[i].victim_dirty != 0;
    /* about four windows, so that a smaller call pipelines too (framepool.h) */
    size_t least = VAST_DUPLEX_MIN_WINDOW >> c->root->pool->page_shift;
    size_t quarter = (ndirty + 3) / 4; /* >= 1: the call has a dirty victim */
    size_t want = quarter > least ? quarter : least;
    d->window = window < want ? window : want;
    d->nwin = (ndirty + d->window - 1) / d->window;
    d->nfree = c->ngrants - ndirty;
    d->order = malloc(c->ngrants * sizeof *d->order);
    d->ticket_end = malloc((d->nwin + 1) * sizeof *d->ticket_end);
    d->wb = (struct pc_lane){.dir = PC_WRITE_BACK_UNORDERED};
    if (!d->order || !d->ticket_end) {
        free(d->order);
        free(d->ticket_end);
        return VAST_PC_ERR_HOST_MEMORY;
    }
    size_t f = 0, k = d->nfree;
    for (size_t i = 0; i < c->ngrants; i++)
        d->order[c->grants[i].victim_dirty ? k++ : f++] = i;
    return VAST_PC_OK;
}

/* The grants of window k: *which, count returned. */
static size_t mr_window(const struct mr_duplex *d, size_t k, size_t ngrants,
                        const size_t **which)
{
    size_t lo = d->nfree + k * d->window;
    size_t hi = ngrants - lo < d->window ? ngrants : lo + d->window;
    *which = d->order + lo;
    return hi - lo;
}

/* Every window's write-backs, back to back on the unordered lane; stops at the first error
 * (that window and the later ones are never loaded). */
static int mr_issue_writebacks(struct mr_call *c, struct mr_duplex *d, struct pc_io *ios)
{
    for (size_t k = 0; k < d->nwin; k++) {
        const size_t *w;
        size_t n = mr_window(d, k, c->ngrants, &w);
        for (size_t i = 0; i < n; i++) {
            const struct vast_frame_grant *g = &c->grants[w[i]];
            ios[i] = (struct pc_io){g->frame, g->victim, g->victim_page};
        }
        int rc = pc_issue_runs(c->root->pool, ios, n, &d->wb, 0, SIZE_MAX);
        d->ticket_end[k] = d->wb.ntickets;
        if (rc)
            return rc;
        d->issued = k + 1;
    }
    return VAST_PC_OK;
}

/* Duplex: the write-backs go first, all of them, on the unordered lane; the loads that need
 * none follow at once on the ordered lane; then window by window, once window k's tickets
 * report its write-backs on the host, the loads into its frames, which travel while window
 * k+1 is still being written back. A load into a frame is never issued before the write-back
 * reading that frame has succeeded, and nothing of the call is left running on return. */
static int mr_transfer_duplex(struct mr_call *c, struct pc_io *ios, size_t window)
{
    struct vast_pool *pool = c->root->pool;
    struct mr_duplex d = {0};
    if (mr_duplex_plan(c, &d, window))
        return mr_transfer_simplex(c, ios); /* no memory for the plan: the serial way */
    int rc = mr_issue_writebacks(c, &d, ios);
    if (rc == VAST_PC_OK && d.nfree)
        rc = mr_issue_loads(c, ios, d.order, d.nfree, d.wb.ntickets > 0);
    for (size_t k = 0; rc == VAST_PC_OK && k < d.issued; k++) {
        rc = pc_wait_tickets(pool, &d.wb, d.ticket_end[k]);
        const size_t *w;
        size_t n = mr_window(&d, k, c->ngrants, &w);
        if (rc == VAST_PC_OK)
            rc = mr_issue_loads(c, ios, w, n, d.wb.ntickets > d.ticket_end[k]);
    }
    int frc = pc_finish_lane(pool, &d.wb); /* even after an error: no read may be left */
    int wrc = pool->ops->wait(pool->dev);  /* the loads */
    for (size_t i = 0; rc == VAST_PC_OK && i < c->ngrants; i++)
        if (!c->loading[i]) /* a grant the plan missed: never publish an unloaded frame */
            rc = VAST_PC_ERR_TRANSFER;
    free(d.order);
    free(d.ticket_end);
    return rc || frc || wrc ? VAST_PC_ERR_TRANSFER : VAST_PC_OK;
}

/* Without the lock: write back dirty victims, load the new pages. Nonzero on failure;
 * c->loading says which frames received a load (mr_undo). */
static int mr_transfer(struct mr_call *c, struct pc_io *ios)
{
    size_t window = pc_duplex_pages(c->root->pool);
    int dirty = 0;
    for (size_t i = 0; i < c->ngrants && !dirty; i++)
        dirty = c->grants[i].victim_dirty;
    return window && dirty && !c->no_load ? mr_transfer_duplex(c, ios, window) : mr_transfer_simplex(c, ios);
}

/* Lock held: whether some frame has a transfer in flight (VAST_FS_IO; cleared under the lock,
 * with io_done broadcast). */
static int io_in_flight(struct vast_pool *pool)
{
    for (size_t f = 0; f < pagecache_frames_now(pool); f++)
        if (pc_state(pool, f) & VAST_FS_IO)
            return 1;
    return 0;
}

int pc_wait_frames_back(struct vast_pool *pool)
{
    if (!io_in_flight(pool) && pool->transient_pins == 0)
        return 0;
    if (pool->transient_pins != 0 && pool->reclaim != NULL) {
        uint64_t returns = pool->transient_returns;
        pthread_mutex_unlock(&pool->lock);
        pool->reclaim(pool->reclaim_arg);
        pthread_mutex_lock(&pool->lock);
        if (pool->transient_returns != returns)
            return 1; /* pins came back: try again */
        if (!io_in_flight(pool) && pool->transient_pins == 0)
            return 1;
        /* Pins of kernels enqueued after the hook looked: a bounded wait, then the hook again. */
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 10 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&pool->io_done, &pool->lock, &until);
        return 1;
    }
    pthread_cond_wait(&pool->io_done, &pool->lock);
    return 1;
}

void pagecache_set_reclaim(struct vast_pool *pool, void (*fn)(void *arg), void *arg)
{
    pthread_mutex_lock(&pool->lock);
    pool->reclaim = fn;
    pool->reclaim_arg = arg;
    pthread_mutex_unlock(&pool->lock);
}

static void mr_fill_locs(struct mr_call *c, struct vast_frame_loc *locs)
{
    for (size_t i = 0; i < c->count; i++) {
        uint32_t f = pagecache_pt_frame(&c->root->pt, c->first + i);
        locs[i].frame = f;
        locs[i].chunk = pagecache_frame_chunk(c->root->pool, f);
        locs[i].offset = pagecache_frame_offset(c->root->pool, f);
    }
}

int pc_check_request(const struct vast_pc_buffer *buf, size_t first, size_t count, bool one_chunk)
{
    if (!buf || first > buf->root->pt.npages || count > buf->root->pt.npages - first)
        return VAST_PC_ERR_INVALID;
    size_t most = one_chunk ? buf->pool->frames_per_chunk : pagecache_frames_now(buf->pool);
    return count > most ? VAST_PC_ERR_NO_FRAMES : VAST_PC_OK;
}

int pagecache_make_resident(struct vast_pc_buffer *buf, size_t first, size_t count,
                            unsigned flags, struct vast_frame_loc *locs)
{
    int rc = pc_check_request(buf, first, count, false);
    if (rc != VAST_PC_OK || count == 0)
        return rc;
    struct vast_pool *pool = buf->pool;
    if ((flags & VAST_PC_NO_LOAD) && (!(flags & VAST_PC_PIN) || (flags & VAST_PC_RESIDENT_ONLY)))
        return VAST_PC_ERR_INVALID; /* an unloaded page must stay pinned until it is written */
    struct mr_call c = {.root = buf->root, .first = first, .count = count, 
                      /* a twinned page's merge compares the frame with the twin its load filled */
                      .no_load = (flags & VAST_PC_NO_LOAD) &&
                                 (buf->root->group == NULL || pc_group_untwinned(buf->root, first, count))};
    c.grants = malloc(count * sizeof *c.grants);
    c.grant_page = malloc(count * sizeof *c.grant_page);
    c.loading = calloc(count, 1);
    struct pc_io *ios = malloc(count * sizeof *ios);
    rc = c.grants && c.grant_page && c.loading && ios ? VAST_PC_OK : VAST_PC_ERR_HOST_MEMORY;
    if (rc == VAST_PC_OK) {
        pthread_mutex_lock(&pool->lock);
        for (;;) {
            pc_wait_range_idle(c.root, first, count);
            mr_pin_resident(&c);
            rc = c.hits < count && (flags & VAST_PC_RESIDENT_ONLY) ? VAST_PC_ERR_NOT_RESIDENT
                                                                   : mr_grant_missing(&c);
            if (rc == VAST_PC_OK)
                break;
            mr_undo(&c);
            /* Frames that other calls are loading, writing back, flushing or running kernels
             * on come back without anything this call holds (it holds nothing now). */
            c.ngrants = c.hits = 0;
            if (rc != VAST_PC_ERR_NO_FRAMES || !pc_wait_frames_back(pool))
                break;
        }
        if (rc == VAST_PC_OK && (flags & VAST_PC_TRANSIENT))
            pool->transient_pins += count;
        pthread_mutex_unlock(&pool->lock);
    }
    if (rc == VAST_PC_OK) {
        int t = mr_transfer(&c, ios);
        pthread_mutex_lock(&pool->lock);
        if (t)
            mr_undo(&c);
        else
            mr_complete(&c);
        if (!t && locs)
            mr_fill_locs(&c, locs);
        if (!t && !(flags & VAST_PC_PIN))
            mr_unpin_call(&c);
        pthread_mutex_unlock(&pool->lock);
        rc = t ? VAST_PC_ERR_TRANSFER : VAST_PC_OK;
    }
    free(c.grants);
    free(c.grant_page);
    free(c.loading);
    free(ios);
    return rc;
}

/* The last pin of a page given without a load and never marked dirty: its frame holds no
 * page's bytes, so the page leaves without a write-back (README "Pages a kernel overwrites").
 * Under the pool lock, so no call sees the frame unpinned and still holding the page. */
static void unpin_unloaded(struct vast_pc_buffer *root, size_t p)
{
    struct vast_pool *pool = root->pool;
    pthread_mutex_lock(&pool->lock);
    uint32_t f = pagecache_pt_frame(&root->pt, p);
    uint32_t s = atomic_fetch_sub(&pool->frames[f].state, VAST_FS_PIN_ONE);
    assert(VAST_FS_PINS(s) > 0 && "unpin of a page that is not pinned");
    if (VAST_FS_PINS(s) == 1 && (s & VAST_FS_UNLOADED)) {
        pagecache_pt_set_frame(&root->pt, p, VAST_PT_NO_FRAME);
        pagecache_free_frame(pool, f);
        pthread_cond_broadcast(&pool->io_done);
    }
    pthread_mutex_unlock(&pool->lock);
}

void pagecache_unpin_range(struct vast_pc_buffer *buf, size_t first, size_t count)
{
    struct vast_pc_buffer *root = buf->root;
    for (size_t p = first; p < first + count && p < root->pt.npages; p++) {
        uint32_t f = pagecache_pt_frame(&root->pt, p);
        if (f == VAST_PT_NO_FRAME)
            continue;
        /* UNLOADED is set only on a page that had no frame, and cleared under the lock: a
         * pinned page that lacks it now never gets it. */
        if (pc_state(buf->pool, f) & VAST_FS_UNLOADED) {
            unpin_unloaded(root, p);
            continue;
        }
        uint32_t s = atomic_fetch_sub_explicit(&buf->pool->frames[f].state, VAST_FS_PIN_ONE,
                                               memory_order_release);
        /* README "What a pin guarantees": only pinned pages are unpinned */
        assert(VAST_FS_PINS(s) > 0 && "unpin of a page that is not pinned");
        (void)s;
    }
}

void pagecache_unpin_transient(struct vast_pc_buffer *buf, size_t first, size_t count)
{
    struct vast_pool *pool = buf->pool;
    pagecache_unpin_range(buf, first, count);
    pthread_mutex_lock(&pool->lock);
    assert(pool->transient_pins >= count && "more transient pins given back than taken");
    pool->transient_pins -= count;
    pool->transient_returns++;
    pthread_cond_broadcast(&pool->io_done);
    pthread_mutex_unlock(&pool->lock);
}

int pagecache_mark_dirty(struct vast_pc_buffer *buf, size_t first, size_t count)
{
    struct vast_pc_buffer *root = buf->root;
    if (first > root->pt.npages || count > root->pt.npages - first)
        return VAST_PC_ERR_INVALID;
    int rc = VAST_PC_OK;
    pthread_mutex_lock(&buf->pool->lock);
    for (size_t p = first; p < first + count; p++) {
        uint32_t f = pagecache_pt_frame(&root->pt, p);
        if (f == VAST_PT_NO_FRAME) {
            rc = VAST_PC_ERR_INVALID;
            continue;
        }
        /* Only a command holding the page pinned wrote it (README "What a pin guarantees"). */
        assert(VAST_FS_PINS(pc_state(buf->pool, f)) > 0 && "a page marked dirty must be pinned");
        atomic_fetch_and(&buf->pool->frames[f].state, ~VAST_FS_UNLOADED); /* its bytes now are its own */
        atomic_fetch_or(&buf->pool->frames[f].state, VAST_FS_DIRTY);
        pagecache_pt_bump_version(&root->pt, p);
    }
    pthread_mutex_unlock(&buf->pool->lock);
    return rc;
}
