/* coherence.c: the host side of the page cache: keeping the backing store and resident
 * pages coherent for Read/Write/Copy/Fill/Map/Unmap (and Rect variants, which call these on
 * their bounding range). Dirty pages reach the host before it reads (flush); host writes are
 * fenced (begin/end: pages of the range can neither be loaded nor written back meanwhile)
 * and then update the copies left resident. A dirty page is never dropped, except when the
 * host overwrites every byte of it or the caller discards it (VAST_PC_DISCARD). The bulk
 * copies themselves (between begin and end, or after the flush) go through hostcopy.h, which
 * splits large ones over a copy pool; nothing else changes for them. */
#include "pagecache_int.h"
#include "hostcopy.h"

#include <stdlib.h>
#include <string.h>

struct collect {
    struct pc_io *ios;
    size_t n, cap;
    struct vast_pc_buffer *root;
    size_t lo, hi;   /* root bytes of the range */
    unsigned flags;
    int pinned_seen; /* a pinned page was left alone */
};

static int collect_init(struct collect *c, struct vast_pc_buffer *root, size_t count,
                        size_t lo, size_t hi, unsigned flags)
{
    memset(c, 0, sizeof *c);
    c->cap = count < pagecache_frames_now(root->pool) ? count : pagecache_frames_now(root->pool);
    c->ios = malloc((c->cap ? c->cap : 1) * sizeof *c->ios);
    c->root = root;
    c->lo = lo;
    c->hi = hi;
    c->flags = flags;
    return c->ios ? VAST_PC_OK : VAST_PC_ERR_HOST_MEMORY;
}

static int page_wholly_inside(const struct collect *c, size_t page)
{
    unsigned s = c->root->pool->page_shift;
    size_t start = page << s, end = (page + 1) << s;
    if (end > c->root->size)
        end = c->root->size;
    return start >= c->lo && end <= c->hi;
}

static void drop_page(struct vast_pool *pool, struct vast_pc_buffer *root, size_t page,
                      uint32_t f)
{
    pagecache_pt_set_frame(&root->pt, page, VAST_PT_NO_FRAME);
    pagecache_free_frame(pool, f);
}

/* Lock held, I/O done: clear VAST_FS_IO; on failure the pages are dirty again. */
static void finish_writebacks(struct vast_pool *pool, struct collect *c, int failed, int drop)
{
    for (size_t i = 0; i < c->n; i++) {
        uint32_t f = c->ios[i].frame;
        if (failed)
            atomic_fetch_or(&pool->frames[f].state, VAST_FS_DIRTY);
        atomic_fetch_and(&pool->frames[f].state, ~VAST_FS_IO);
        if (!failed && drop)
            drop_page(pool, c->root, c->ios[i].page, f);
    }
    pthread_cond_broadcast(&pool->io_done);
}

/* Without the lock: write back c->ios (whole pages), wait. On a duplex pool this goes through
 * the unordered lane (pc_write_back_runs), so a flush on the executor's host lane runs beside
 * another thread's loads: safe because every frame here is IO-flagged by this call (nothing
 * else is issued on it or on its page's host bytes until finish_writebacks) and every earlier
 * operation on it was waited for by the call that issued it before that call cleared its IO
 * flag or fence. */
static int write_back(struct vast_pool *pool, struct collect *c)
{
    return pc_write_back_runs(pool, c->ios, c->n);
}

static void start_writeback(struct vast_pool *pool, struct collect *c, size_t page, uint32_t f)
{
    atomic_fetch_or(&pool->frames[f].state, VAST_FS_IO);
    atomic_fetch_and(&pool->frames[f].state, ~VAST_FS_DIRTY);
    c->ios[c->n++] = (struct pc_io){f, c->root, page};
}

static void visit_flush(struct vast_pool *pool, size_t page, uint32_t f, void *ctx)
{
    if (pc_state(pool, f) & VAST_FS_DIRTY)
        start_writeback(pool, ctx, page, f);
}

/* The resident pages of a range, visited under the pool lock (visit starts write-backs or
 * drops pages); the write-backs then run without it and finish (releasing the frames when
 * `drop`). *pinned_seen: visit met a pinned page. */
static int sweep_range(struct vast_pc_buffer *buf, size_t offset, size_t size, unsigned flags, pc_visit_fn visit,
                       int drop, int *pinned_seen)
{
    size_t ro, first, count;
    if (pc_root_range(buf, offset, size, &ro))
        return VAST_PC_ERR_INVALID;
    struct vast_pool *pool = buf->pool;
    pagecache_pages_of_range(ro, size, pool->page_shift, &first, &count);
    struct collect c;
    if (collect_init(&c, buf->root, count, ro, ro + size, flags))
        return VAST_PC_ERR_HOST_MEMORY;
    pthread_mutex_lock(&pool->lock);
    pc_wait_range_idle(c.root, first, count);
    pc_for_each_resident(c.root, first, count, 0, visit, &c);
    pthread_mutex_unlock(&pool->lock);
    int rc = write_back(pool, &c);
    pthread_mutex_lock(&pool->lock);
    finish_writebacks(pool, &c, rc != 0, drop);
    pthread_mutex_unlock(&pool->lock);
    free(c.ios);
    *pinned_seen = c.pinned_seen;
    return rc;
}

int pagecache_flush_range(struct vast_pc_buffer *buf, size_t offset, size_t size)
{
    int pinned_seen = 0;
    return sweep_range(buf, offset, size, 0, visit_flush, 0, &pinned_seen);
}

static void visit_invalidate(struct vast_pool *pool, size_t page, uint32_t f, void *ctx)
{
    struct collect *c = ctx;
    uint32_t s = pc_state(pool, f);
    if (VAST_FS_PINS(s)) {
        c->pinned_seen = 1;
        return;
    }
    if ((s & VAST_FS_DIRTY) && !((c->flags & VAST_PC_DISCARD) && page_wholly_inside(c, page)))
        start_writeback(pool, c, page, f);
    else
        drop_page(pool, c->root, page, f);
}

int pagecache_invalidate_range(struct vast_pc_buffer *buf, size_t offset, size_t size,
                               unsigned flags)
{
    int pinned_seen = 0;
    int rc = sweep_range(buf, offset, size, flags, visit_invalidate, 1, &pinned_seen);
    if (rc == VAST_PC_OK && pinned_seen)
        rc = VAST_PC_ERR_PINNED;
    return rc;
}

static void visit_refresh(struct vast_pool *pool, size_t page, uint32_t f, void *ctx)
{
    struct collect *c = ctx;
    if (!pc_group_stale(c->root, page))
        return;
    uint32_t s = pc_state(pool, f);
    if (VAST_FS_PINS(s))
        c->pinned_seen = 1;
    else if (s & VAST_FS_DIRTY) /* its own bytes are merged into the host, then it goes */
        start_writeback(pool, c, page, f);
    else
        drop_page(pool, c->root, page, f);
}

int pagecache_refresh_range(struct vast_pc_buffer *buf, size_t offset, size_t size)
{
    if (!buf || !buf->root->group)
        return buf ? VAST_PC_OK : VAST_PC_ERR_INVALID;
    int pinned_seen = 0;
    int rc = sweep_range(buf, offset, size, 0, visit_refresh, 1, &pinned_seen);
    if (rc == VAST_PC_OK && pinned_seen)
        rc = VAST_PC_ERR_PINNED;
    return rc;
}

/* ---------- host writes ---------- */

static void visit_begin_write(struct vast_pool *pool, size_t page, uint32_t f, void *ctx)
{
    struct collect *c = ctx;
    if (VAST_FS_PINS(pc_state(pool, f)) == 0 && page_wholly_inside(c, page)) {
        drop_page(pool, c->root, page, f);
        return;
    }
    atomic_fetch_add(&pool->frames[f].state, VAST_FS_PIN_ONE);
    c->ios[c->n++] = (struct pc_io){f, c->root, page};
}

int pagecache_begin_host_write(struct vast_pc_buffer *buf, size_t offset, size_t size,
                               struct vast_host_write **token)
{
    size_t ro;
    if (!token || pc_root_range(buf, offset, size, &ro))
        return VAST_PC_ERR_INVALID;
    struct vast_pool *pool = buf->pool;
    struct vast_host_write *w = calloc(1, sizeof *w);
    if (!w)
        return VAST_PC_ERR_HOST_MEMORY;
    w->root = buf->root;
    w->root_off = ro;
    w->size = size;
    pagecache_pages_of_range(ro, size, pool->page_shift, &w->first, &w->count);
    struct collect c;
    if (collect_init(&c, w->root, w->count, ro, ro + size, 0)) {
        free(w);
        return VAST_PC_ERR_HOST_MEMORY;
    }
    pthread_mutex_lock(&pool->lock);
    pc_wait_range_idle(w->root, w->first, w->count);
    pc_for_each_resident(w->root, w->first, w->count, 0, visit_begin_write, &c);
    w->pinned = c.ios; /* set before others can see w (pagecache_check reads them) */
    w->npinned = c.n;
    w->next = w->root->writers;
    w->root->writers = w;
    pthread_mutex_unlock(&pool->lock);
    *token = w;
    return VAST_PC_OK;
}

static void unregister_writer(struct vast_host_write *w)
{
    struct vast_host_write **pp = &w->root->writers;
    while (*pp != w)
        pp = &(*pp)->next;
    *pp = w->next;
}

int pagecache_end_host_write(struct vast_host_write *w)
{
    if (!w)
        return VAST_PC_ERR_INVALID;
    struct vast_pool *pool = w->root->pool;
    /* The fence kept every other page of the range off the device: the pinned ones are the
     * only resident copies. Their frames cannot move (pinned) nor be written back (fenced). */
    int rc = VAST_PC_OK;
    if (w->npinned) {
        struct pc_lane up = {.dir = PC_LOAD}; /* ordered: a later write-back waits anyway */
        rc = pc_issue_runs(pool, w->pinned, w->npinned, &up, w->root_off, w->root_off + w->size);
        int wrc = pool->ops->wait(pool->dev);
        rc = rc || wrc ? VAST_PC_ERR_TRANSFER : VAST_PC_OK;
    }
    pthread_mutex_lock(&pool->lock);
    for (size_t i = 0; i < w->npinned; i++) {
        struct vast_frame *fr = &pool->frames[w->pinned[i].frame];
        /* A failed update leaves a stale copy: make it dirty-proof by dropping it unless a
         * command holds it; the host bytes win. (A held, failed page is reported.) */
        atomic_fetch_sub(&fr->state, VAST_FS_PIN_ONE);
        if (rc && VAST_FS_PINS(pc_state(pool, w->pinned[i].frame)) == 0 &&
            !(pc_state(pool, w->pinned[i].frame) & VAST_FS_DIRTY))
            drop_page(pool, w->root, w->pinned[i].page, w->pinned[i].frame);
    }
    for (size_t p = w->first; p < w->first + w->count; p++)
        pagecache_pt_bump_version(&w->root->pt, p);
    if (w->root->group) /* copies on the other pools are now older than the host */
        pc_group_host_written(w->root, w->root_off, w->root_off + w->size, w->pinned, w->npinned);
    unregister_writer(w);
    pthread_cond_broadcast(&pool->io_done);
    pthread_mutex_unlock(&pool->lock);
    free(w->pinned);
    free(w);
    return rc;
}

/* ---------- whole host-side commands ---------- */

int pagecache_read(struct vast_pc_buffer *buf, size_t offset, size_t size, void *dst)
{
    int rc = pagecache_flush_range(buf, offset, size);
    if (rc == VAST_PC_OK && size)
        pagecache_host_copy(dst, (char *)pagecache_buffer_host(buf) + offset, size);
    return rc;
}

int pagecache_write(struct vast_pc_buffer *buf, size_t offset, size_t size, const void *src)
{
    struct vast_host_write *w;
    int rc = pagecache_begin_host_write(buf, offset, size, &w);
    if (rc)
        return rc;
    if (size)
        pagecache_host_copy((char *)pagecache_buffer_host(buf) + offset, src, size);
    return pagecache_end_host_write(w);
}

int pagecache_fill(struct vast_pc_buffer *buf, size_t offset, size_t size, const void *pattern,
                   size_t pattern_size)
{
    if (!pattern || pattern_size == 0 || pattern_size > 128 || size % pattern_size)
        return VAST_PC_ERR_INVALID;
    struct vast_host_write *w;
    int rc = pagecache_begin_host_write(buf, offset, size, &w);
    if (rc)
        return rc;
    if (size) /* split over the host copy pool when large (hostcopy.h) */
        pagecache_host_fill((char *)pagecache_buffer_host(buf) + offset, size, pattern,
                            pattern_size);
    return pagecache_end_host_write(w);
}

int pagecache_copy(struct vast_pc_buffer *dst, size_t dst_offset, struct vast_pc_buffer *src,
                   size_t src_offset, size_t size)
{
    int rc = pagecache_flush_range(src, src_offset, size);
    if (rc)
        return rc;
    struct vast_host_write *w;
    rc = pagecache_begin_host_write(dst, dst_offset, size, &w);
    if (rc)
        return rc;
    if (size) /* overlapping ranges (one store) are moved in the caller */
        pagecache_host_copy((char *)pagecache_buffer_host(dst) + dst_offset,
                            (char *)pagecache_buffer_host(src) + src_offset, size);
    return pagecache_end_host_write(w);
}

int pagecache_map(struct vast_pc_buffer *buf, size_t offset, size_t size, int write,
                  int discard, void **ptr)
{
    if (!ptr)
        return VAST_PC_ERR_INVALID;
    int rc = write ? pagecache_invalidate_range(buf, offset, size, discard ? VAST_PC_DISCARD : 0)
                   : pagecache_flush_range(buf, offset, size);
    if (rc == VAST_PC_OK)
        *ptr = (char *)pagecache_buffer_host(buf) + offset;
    return rc;
}

int pagecache_unmap(struct vast_pc_buffer *buf, size_t offset, size_t size, int write)
{
    if (!write)
        return VAST_PC_OK;
    /* Pages loaded while mapped (only a misbehaving application does that) get the host's
     * bytes: an empty host write over the range refreshes or drops them. */
    struct vast_host_write *w;
    int rc = pagecache_begin_host_write(buf, offset, size, &w);
    return rc ? rc : pagecache_end_host_write(w);
}
