/* residency.c: virtual buffers on a pool and the device side of the page cache: making page
 * ranges resident (with eviction and write-back of dirty victims), pins, dirty marks, and the
 * shared helpers (run-coalesced transfers, range iteration, waiting for I/O).
 * Protocol of a load: under the pool lock, frames are granted and retagged with VAST_FS_IO
 * set; the lock is dropped for the transfers (write-backs first, waited for, then loads);
 * the lock is retaken to publish the result and wake waiters. Rules: README.md. */
#include "pagecache_int.h"

#include <stdlib.h>

/* ---------- shared helpers ---------- */

int pc_root_range(const struct vast_pc_buffer *buf, size_t offset, size_t size, size_t *root_off)
{
    if (!buf || offset > buf->size || size > buf->size - offset)
        return VAST_PC_ERR_INVALID;
    *root_off = buf->offset + offset;
    return VAST_PC_OK;
}

/* One transfer of root bytes [start, start+len) <-> device at dev_off (within one granule). */
static int transfer(struct vast_pool *pool, struct vast_pc_buffer *root, uint32_t frame,
                    size_t dev_off, size_t start, size_t len, int to_device)
{
    char *host = (char *)pagecache_backing_base(root->backing) + start;
    vast_host_pin pin = pagecache_pin_backing(root->backing, pool->ops, pool->dev, start, len);
    vast_dev_chunk chunk = pagecache_frame_chunk(pool, frame);
    int rc;
    if (to_device) {
        rc = pool->ops->write(pool->dev, chunk, dev_off, host, len, pin);
        atomic_fetch_add(&pool->stats.h2d_transfers, 1);
        atomic_fetch_add(&pool->stats.h2d_bytes, len);
    } else {
        rc = pool->ops->read(pool->dev, chunk, dev_off, host, len, pin);
        atomic_fetch_add(&pool->stats.d2h_transfers, 1);
        atomic_fetch_add(&pool->stats.d2h_bytes, len);
    }
    return rc ? VAST_PC_ERR_TRANSFER : VAST_PC_OK;
}

/* A run of npages adjacent frames holding consecutive pages, clipped to [lo, hi) and split
 * at pin granule boundaries (see backing.h: a transfer must lie in one pinned wrapper). */
static int issue_one(struct vast_pool *pool, const struct pc_io *io, size_t npages,
                     int to_device, size_t lo, size_t hi)
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
        int rc = transfer(pool, root, io->frame, dev_off, start, len, to_device);
        if (rc)
            return rc;
        start += len;
    }
    return VAST_PC_OK;
}

int pc_issue_runs(struct vast_pool *pool, const struct pc_io *ios, size_t n, int to_device,
                  size_t lo, size_t hi)
{
    size_t i = 0;
    while (i < n) {
        size_t j = i + 1;
        while (j < n && ios[j].buf == ios[i].buf && ios[j].page == ios[j - 1].page + 1 &&
               pagecache_frames_adjacent(pool, ios[j - 1].frame, ios[j].frame))
            j++;
        int rc = issue_one(pool, &ios[i], j - i, to_device, lo, hi);
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
    if (count <= pool->nframes) {
        for (size_t p = first; p < first + count; p++) {
            uint32_t f = pagecache_pt_frame(&root->pt, p);
            if (f != VAST_PT_NO_FRAME)
                visit(pool, p, f, ctx);
        }
        return;
    }
    for (uint32_t f = 0; f < pool->nframes; f++) {
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
    struct vast_pc_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return VAST_PC_ERR_HOST_MEMORY;
    b->pool = pool;
    b->root = b;
    b->size = pagecache_backing_size(backing);
    b->backing = backing;
    if (pagecache_init_page_table(&b->pt, b->size, pool->page_shift)) {
        free(b);
        return VAST_PC_ERR_HOST_MEMORY;
    }
    *out = b;
    return VAST_PC_OK;
}

int pagecache_create_sub_buffer(struct vast_pc_buffer *parent, size_t offset, size_t size,
                                struct vast_pc_buffer **out)
{
    size_t root_off;
    if (!out || size == 0 || pc_root_range(parent, offset, size, &root_off))
        return VAST_PC_ERR_INVALID;
    struct vast_pc_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return VAST_PC_ERR_HOST_MEMORY;
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

static void visit_drop(struct vast_pool *pool, size_t page, uint32_t f, void *ctx)
{
    struct vast_pc_buffer *root = ctx;
    pagecache_pt_set_frame(&root->pt, page, VAST_PT_NO_FRAME);
    pagecache_free_frame(pool, f);
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
    if (!pinned)
        pc_for_each_resident(buf, 0, buf->pt.npages, 0, visit_drop, buf);
    pthread_mutex_unlock(&pool->lock);
    if (pinned)
        return VAST_PC_ERR_PINNED;
    pagecache_fini_page_table(&buf->pt);
    free(buf);
    return VAST_PC_OK;
}

size_t pagecache_buffer_size(const struct vast_pc_buffer *buf) { return buf->size; }
struct vast_pool *pagecache_buffer_pool(const struct vast_pc_buffer *buf) { return buf->pool; }

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
    size_t ngrants, hits;
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

/* Lock held. Undo of a failed call. written_back: the victims' write-backs succeeded, so
 * they leave (frames freed); otherwise every victim keeps its frame, tag and dirty bit. */
static void mr_undo(struct mr_call *c, int written_back)
{
    struct vast_pool *pool = c->root->pool;
    for (size_t i = 0; i < c->ngrants; i++) {
        const struct vast_frame_grant *g = &c->grants[i];
        struct vast_frame *fr = &pool->frames[g->frame];
        pagecache_pt_set_frame(&c->root->pt, c->grant_page[i], VAST_PT_NO_FRAME);
        fr->evicting = NULL;
        if (g->victim && !written_back) {
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
        atomic_fetch_or(&fr->state, VAST_FS_USAGE_ONE);
    }
    atomic_fetch_add(&pool->stats.evictions, victims);
    atomic_fetch_add(&pool->stats.dirty_evictions, dirty);
    atomic_fetch_add(&pool->stats.hits, c->hits);
    atomic_fetch_add(&pool->stats.misses, c->ngrants);
    pthread_cond_broadcast(&pool->io_done);
}

/* Without the lock: write back dirty victims (and wait), then load. 0, or 1 when a
 * write-back failed, 2 when a load failed. */
static int mr_transfer(struct mr_call *c, struct pc_io *ios)
{
    struct vast_pool *pool = c->root->pool;
    size_t n = 0;
    for (size_t i = 0; i < c->ngrants; i++)
        if (c->grants[i].victim_dirty)
            ios[n++] = (struct pc_io){c->grants[i].frame, c->grants[i].victim,
                                      c->grants[i].victim_page};
    if (n) {
        int rc = pc_issue_runs(pool, ios, n, 0, 0, SIZE_MAX);
        int wrc = pool->ops->wait(pool->dev);
        if (rc || wrc)
            return 1;
    }
    for (size_t i = 0; i < c->ngrants; i++)
        ios[i] = (struct pc_io){c->grants[i].frame, c->root, c->grant_page[i]};
    if (c->ngrants) {
        int rc = pc_issue_runs(pool, ios, c->ngrants, 1, 0, SIZE_MAX);
        int wrc = pool->ops->wait(pool->dev);
        if (rc || wrc)
            return 2;
    }
    return 0;
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

int pagecache_make_resident(struct vast_pc_buffer *buf, size_t first, size_t count,
                            unsigned flags, struct vast_frame_loc *locs)
{
    if (!buf || first > buf->root->pt.npages || count > buf->root->pt.npages - first)
        return VAST_PC_ERR_INVALID;
    struct vast_pool *pool = buf->pool;
    if (count > pool->nframes)
        return VAST_PC_ERR_NO_FRAMES;
    if (count == 0)
        return VAST_PC_OK;
    struct mr_call c = {.root = buf->root, .first = first, .count = count};
    c.grants = malloc(count * sizeof *c.grants);
    c.grant_page = malloc(count * sizeof *c.grant_page);
    struct pc_io *ios = malloc(count * sizeof *ios);
    int rc = c.grants && c.grant_page && ios ? VAST_PC_OK : VAST_PC_ERR_HOST_MEMORY;
    if (rc == VAST_PC_OK) {
        pthread_mutex_lock(&pool->lock);
        pc_wait_range_idle(c.root, first, count);
        mr_pin_resident(&c);
        rc = mr_grant_missing(&c);
        if (rc)
            mr_undo(&c, 0);
        pthread_mutex_unlock(&pool->lock);
    }
    if (rc == VAST_PC_OK) {
        int t = mr_transfer(&c, ios);
        pthread_mutex_lock(&pool->lock);
        if (t)
            mr_undo(&c, t == 2);
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
    free(ios);
    return rc;
}

void pagecache_unpin_range(struct vast_pc_buffer *buf, size_t first, size_t count)
{
    struct vast_pc_buffer *root = buf->root;
    for (size_t p = first; p < first + count && p < root->pt.npages; p++) {
        uint32_t f = pagecache_pt_frame(&root->pt, p);
        if (f != VAST_PT_NO_FRAME)
            atomic_fetch_sub_explicit(&buf->pool->frames[f].state, VAST_FS_PIN_ONE,
                                      memory_order_release);
    }
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
        atomic_fetch_or(&buf->pool->frames[f].state, VAST_FS_DIRTY);
        pagecache_pt_bump_version(&root->pt, p);
    }
    pthread_mutex_unlock(&buf->pool->lock);
    return rc;
}
