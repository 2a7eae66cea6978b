/* peers.c: one backing store paged by several pools (a buffer of a context over several
 * devices): a root buffer per pool, joined in a group. The host store stays the point of
 * truth; what this file adds is that two pools may write disjoint bytes of one page and both
 * survive (GAIA's 3-way merge), and that a copy older than the host's bytes is known.
 *
 * - Twins. A grouped page is loaded from its frame's twin (pool->twins), which is first
 *   filled from the host under the group lock: the twin is exactly what the device got. A
 *   write-back reads the frame into a scratch page, synchronously, and under the group lock
 *   stores into the host (and the twin) only the bytes that differ from the twin: the bytes
 *   this device wrote. Another pool's bytes of the same page are never overwritten.
 * - Versions. The group keeps a clock and, per granule (the smallest page of the members),
 *   the clock of the last write that reached the host there (a merge that changed bytes, a
 *   host write). Each root keeps per page the clock its copy reflects (`seen`, set when a
 *   load copies the whole page). A copy is stale when a granule of its page is newer.
 *   pagecache_refresh_range drops stale copies (merging their own bytes back first); the
 *   interpose layer calls it before a command uses a range on a device, after flushing the
 *   other pools' dirty pages of the range (interpose/README.md "Several devices").
 * - Owned pages (pagecache_own_pages: a merged device's buffers). Only pages the caller marks
 *   (pagecache_want_twins: two pools may write them before a write-back) go through twins;
 *   the others load from the host store like a one-device pool's and write back whole, then
 *   publish (README.md "Owned pages": who owns a page when).
 * Principal entry points: pagecache_share_backing, pagecache_refresh_range,
 * pagecache_own_pages, pagecache_want_twins; for residency.c
 * and coherence.c pc_group_transfer, pc_group_stale, pc_group_host_written.
 * Locks: group->lock is a leaf, taken without the pool lock and never across a device
 * transfer (the write-back's scratch read has been waited for before it is taken).
 * See also: README.md "Several devices", residency.c (transfer), coherence.c. */
#include "pagecache_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int make_twins(struct vast_pool *pool)
{
    if (pool->twins)
        return VAST_PC_OK;
    void *p = mmap(NULL, (pool->nframes + pool->overdraft) << pool->page_shift, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return VAST_PC_ERR_HOST_MEMORY;
    pool->twins = p;
    return VAST_PC_OK;
}

void pagecache_free_twins(struct vast_pool *pool)
{
    if (pool->twins)
        munmap(pool->twins, (pool->nframes + pool->overdraft) << pool->page_shift);
    pool->twins = NULL;
}

int pagecache_share_backing(struct vast_pc_buffer *const *roots, size_t n)
{
    if (n < 2)
        return VAST_PC_OK;
    unsigned shift = roots[0]->pool->page_shift;
    for (size_t i = 0; i < n; i++) {
        if (!roots[i] || roots[i]->root != roots[i] || roots[i]->group ||
            roots[i]->backing != roots[0]->backing)
            return VAST_PC_ERR_INVALID;
        if (roots[i]->pool->page_shift < shift)
            shift = roots[i]->pool->page_shift;
    }
    VAST_PC_NEW(struct vast_pc_group, g);
    g->shift = shift;
    g->ngranules = (roots[0]->size + ((size_t)1 << shift) - 1) >> shift;
    g->version = calloc(g->ngranules, sizeof *g->version);
    int rc = g->version ? VAST_PC_OK : VAST_PC_ERR_HOST_MEMORY;
    for (size_t i = 0; i < n && rc == VAST_PC_OK; i++) {
        roots[i]->seen = calloc(roots[i]->pt.npages, sizeof *roots[i]->seen);
        roots[i]->twin = calloc(roots[i]->pt.npages ? roots[i]->pt.npages : 1, sizeof *roots[i]->twin);
        pthread_mutex_lock(&roots[i]->pool->lock);
        rc = roots[i]->seen && roots[i]->twin ? make_twins(roots[i]->pool) : VAST_PC_ERR_HOST_MEMORY;
        pthread_mutex_unlock(&roots[i]->pool->lock);
    }
    if (rc != VAST_PC_OK) {
        for (size_t i = 0; i < n; i++) {
            free(roots[i]->seen);
            free((void *)roots[i]->twin);
            roots[i]->seen = NULL;
            roots[i]->twin = NULL;
        }
        free(g->version);
        free(g);
        return rc;
    }
    pthread_mutex_init(&g->lock, NULL);
    atomic_init(&g->members, n);
    for (size_t i = 0; i < n; i++)
        roots[i]->group = g;
    return VAST_PC_OK;
}

void pc_group_leave(struct vast_pc_buffer *root)
{
    struct vast_pc_group *g = root->group;
    free(root->seen);
    free((void *)root->twin);
    root->seen = NULL;
    root->twin = NULL;
    root->group = NULL;
    if (atomic_fetch_sub(&g->members, 1) == 1) {
        pthread_mutex_destroy(&g->lock);
        free(g->version);
        free(g);
    }
}

/* Granules [*lo, *hi) of root bytes [start, end). */
static void granules(const struct vast_pc_group *g, size_t start, size_t end, size_t *lo, size_t *hi)
{
    *lo = start >> g->shift;
    *hi = (end + ((size_t)1 << g->shift) - 1) >> g->shift;
    if (*hi > g->ngranules)
        *hi = g->ngranules;
}

static uint32_t newest(const struct vast_pc_group *g, const struct vast_pc_buffer *root, size_t page)
{
    unsigned s = root->pool->page_shift;
    size_t lo, hi;
    granules(g, page << s, (page + 1) << s, &lo, &hi);
    uint32_t v = 0;
    for (size_t i = lo; i < hi; i++) {
        uint32_t x = atomic_load_explicit(&g->version[i], memory_order_acquire);
        v = x > v ? x : v;
    }
    return v;
}

/* Whether loads of root page `page` go through a twin. */
static bool wants_twin(const struct vast_pc_buffer *root, size_t page)
{
    return !atomic_load_explicit(&root->group->owned, memory_order_relaxed) ||
           (atomic_load_explicit(&root->twin[page], memory_order_relaxed) & PC_TWIN_WANT);
}

/* Whether the resident copy of root page `page` has a twin (its write-back merges). */
static bool has_twin(const struct vast_pc_buffer *root, size_t page)
{
    return !atomic_load_explicit(&root->group->owned, memory_order_relaxed) ||
           (atomic_load_explicit(&root->twin[page], memory_order_relaxed) & PC_TWIN_HAS);
}

bool pc_group_stale(const struct vast_pc_buffer *root, size_t page)
{
    return root->group && (newest(root->group, root, page) > atomic_load_explicit(&root->seen[page], memory_order_acquire) ||
                           (wants_twin(root, page) && !has_twin(root, page)));
}

int pagecache_own_pages(struct vast_pc_buffer *buf)
{
    if (!buf || !buf->root->group)
        return buf ? VAST_PC_OK : VAST_PC_ERR_INVALID;
    atomic_store(&buf->root->group->owned, true);
    return VAST_PC_OK;
}

int pagecache_want_twins(struct vast_pc_buffer *buf, size_t first, size_t count, const uint8_t *want)
{
    if (!buf || first > buf->root->pt.npages || count > buf->root->pt.npages - first)
        return VAST_PC_ERR_INVALID;
    struct vast_pc_buffer *root = buf->root;
    for (size_t i = 0; root->group && i < count; i++) {
        if (want == NULL || want[i])
            atomic_fetch_or_explicit(&root->twin[first + i], PC_TWIN_WANT, memory_order_relaxed);
        else
            atomic_fetch_and_explicit(&root->twin[first + i], (uint8_t)~PC_TWIN_WANT, memory_order_relaxed);
    }
    return VAST_PC_OK;
}

/* Group lock held: bytes [start, end) of root reached the host at a new clock value. When
 * they lie in one page of root whose copy was current, that copy stays current (the bytes
 * are its own). */
static void publish(struct vast_pc_group *g, struct vast_pc_buffer *root, size_t start, size_t end,
                    bool one_page)
{
    size_t page = start >> root->pool->page_shift;
    bool current = one_page && newest(g, root, page) <= atomic_load(&root->seen[page]);
    uint32_t c = atomic_fetch_add(&g->clock, 1) + 1;
    size_t lo, hi;
    granules(g, start, end, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        atomic_store_explicit(&g->version[i], c, memory_order_release);
    if (current)
        atomic_store(&root->seen[page], c);
}

/* Group lock held: store the bytes of `dev` that differ from `twin` into host and twin. */
static bool merge(unsigned char *host, unsigned char *twin, const unsigned char *dev, size_t len)
{
    bool changed = false;
    for (size_t at = 0; at < len; at += 64) {
        size_t n = len - at < 64 ? len - at : 64;
        if (memcmp(dev + at, twin + at, n) == 0)
            continue;
        for (size_t i = at; i < at + n; i++)
            if (dev[i] != twin[i]) {
                host[i] = twin[i] = dev[i];
                changed = true;
            }
    }
    return changed;
}

/* Group lock held: the pages a load of root bytes [start, start+len) holds whole (up to the
 * buffer's end) now reflect clock value `now`. */
static void seen_whole(struct vast_pc_buffer *root, size_t start, size_t len, uint32_t now)
{
    unsigned s = root->pool->page_shift;
    for (size_t p = start >> s; p << s < start + len; p++) {
        size_t end = (p + 1) << s;
        end = end > root->size ? root->size : end;
        if (p << s >= start && end <= start + len)
            atomic_store(&root->seen[p], now);
    }
}

static int group_load(struct vast_pool *pool, struct vast_pc_buffer *root, vast_dev_chunk chunk,
                      size_t dev_off, unsigned char *twin, size_t start, size_t len)
{
    struct vast_pc_group *g = root->group;
    const unsigned char *host = (const unsigned char *)pagecache_backing_base(root->backing) + start;
    pthread_mutex_lock(&g->lock);
    uint32_t now = atomic_load(&g->clock);
    memcpy(twin, host, len);
    seen_whole(root, start, len, now);
    pthread_mutex_unlock(&g->lock);
    atomic_fetch_add(&pool->stats.h2d_transfers, 1);
    atomic_fetch_add(&pool->stats.h2d_bytes, len);
    atomic_fetch_add(&pool->stats.twin_h2d_bytes, len);
    atomic_fetch_add(&root->h2d_bytes, len);
    atomic_fetch_add(&root->twin_bytes, len);
    return pool->ops->write(pool->dev, chunk, dev_off, twin, len, NULL);
}

/* A load of owned pages (no twin): the clock is read before the transfer reads the host, so a
 * copy is never thought newer than the bytes it got; then the plain (pinned) transfer. */
static int owned_load(struct vast_pool *pool, struct vast_pc_buffer *root, uint32_t frame, size_t dev_off,
                      size_t start, size_t len, struct pc_lane *lane)
{
    struct vast_pc_group *g = root->group;
    pthread_mutex_lock(&g->lock);
    seen_whole(root, start, len, atomic_load(&g->clock));
    pthread_mutex_unlock(&g->lock);
    return pc_plain_transfer(pool, root, frame, dev_off, start, len, lane);
}

bool pc_group_untwinned(const struct vast_pc_buffer *root, size_t first, size_t count)
{
    if (!atomic_load_explicit(&root->group->owned, memory_order_relaxed))
        return false;
    for (size_t p = first; p < first + count; p++)
        if (wants_twin(root, p))
            return false;
    return true;
}

void pc_group_granted(struct vast_pc_buffer *root, const size_t *pages, size_t n)
{
    struct vast_pc_group *g = root->group;
    unsigned s = root->pool->page_shift;
    pthread_mutex_lock(&g->lock);
    uint32_t now = atomic_load(&g->clock);
    for (size_t i = 0; i < n; i++) {
        seen_whole(root, pages[i] << s, (size_t)1 << s, now);
        atomic_fetch_and_explicit(&root->twin[pages[i]], (uint8_t)~PC_TWIN_HAS, memory_order_relaxed);
    }
    pthread_mutex_unlock(&g->lock);
}

/* A write-back of owned pages: the whole bytes straight into the host store (pinned), and
 * once they are there, published (pc_group_owned_landed). On an unordered lane (a duplex
 * pool's evictions and flushes) that is when its ticket is waited for, so owned pages travel
 * beside the loads as a single device's do; else it is waited for here. */
static int owned_write_back(struct vast_pool *pool, struct vast_pc_buffer *root, uint32_t frame, size_t dev_off,
                            size_t start, size_t len, struct pc_lane *lane)
{
    struct pc_landing landing = {root, start, len};
    size_t tickets = lane->ntickets;
    int rc = pc_plain_transfer(pool, root, frame, dev_off, start, len, lane);
    if (rc == VAST_PC_OK && lane->ntickets > tickets) { /* in flight: published when waited for */
        lane->landing[lane->ntickets - 1] = landing;
        return VAST_PC_OK;
    }
    if (rc == VAST_PC_OK && lane->dir == PC_WRITE_BACK)
        rc = pool->ops->wait(pool->dev) ? VAST_PC_ERR_TRANSFER : VAST_PC_OK;
    if (rc == VAST_PC_OK) /* on the host (an unordered one without a ticket was staged: complete) */
        pc_group_owned_landed(pool, &landing);
    return rc;
}

/* Nobody else wrote these pages since the copy was loaded (the owner's rule, README.md
 * "Several devices"), so the host's bytes there are the copy's but for its own changes; a
 * copy found stale (the rule broken) is counted (owned_stale_bytes). */
void pc_group_owned_landed(struct vast_pool *pool, const struct pc_landing *l)
{
    struct vast_pc_buffer *root = l->root;
    struct vast_pc_group *g = root->group;
    size_t start = l->start, len = l->len;
    atomic_fetch_add(&pool->stats.owned_d2h_bytes, len);
    size_t page = (size_t)1 << pool->page_shift;
    pthread_mutex_lock(&g->lock);
    for (size_t at = start; at < start + len;) {
        size_t stop = (at / page + 1) * page;
        stop = stop < start + len ? stop : start + len;
        size_t p = at >> pool->page_shift;
        if (newest(g, root, p) > atomic_load(&root->seen[p]))
            atomic_fetch_add(&pool->stats.owned_stale_bytes, stop - at);
        publish(g, root, at, stop, true);
        at = stop;
    }
    pthread_mutex_unlock(&g->lock);
}

static int group_write_back(struct vast_pool *pool, struct vast_pc_buffer *root, vast_dev_chunk chunk,
                            size_t dev_off, unsigned char *twin, size_t start, size_t len)
{
    struct vast_pc_group *g = root->group;
    unsigned char *scratch = malloc(len);
    if (!scratch)
        return VAST_PC_ERR_HOST_MEMORY;
    int rc = pool->ops->read(pool->dev, chunk, dev_off, scratch, len, NULL);
    if (rc == VAST_PC_OK)
        rc = pool->ops->wait(pool->dev);
    atomic_fetch_add(&pool->stats.d2h_transfers, 1);
    atomic_fetch_add(&pool->stats.d2h_bytes, len);
    atomic_fetch_add(&pool->stats.merged_d2h_bytes, len);
    if (rc == VAST_PC_OK) {
        unsigned char *host = (unsigned char *)pagecache_backing_base(root->backing);
        size_t page = (size_t)1 << pool->page_shift;
        pthread_mutex_lock(&g->lock);
        for (size_t at = start; at < start + len;) { /* page by page: each keeps its own seen */
            size_t stop = (at / page + 1) * page;
            stop = stop < start + len ? stop : start + len;
            if (merge(host + at, twin + (at - start), scratch + (at - start), stop - at))
                publish(g, root, at, stop, true);
            at = stop;
        }
        pthread_mutex_unlock(&g->lock);
    }
    free(scratch);
    return rc;
}

/* Root bytes [start, start+len) of a run of frames from `frame` at dev_off, cut where the
 * pages' way changes: through the twins (a load where the page wants one, a write-back where
 * the copy has one) or owned (plain transfers). */
int pc_group_transfer(struct vast_pool *pool, struct vast_pc_buffer *root, uint32_t frame,
                      size_t dev_off, size_t start, size_t len, struct pc_lane *lane)
{
    unsigned s = pool->page_shift;
    bool load = lane->dir == PC_LOAD;
    /* Frames of a run are adjacent, so their twins are too. */
    unsigned char *twins = pool->twins + ((size_t)frame << s) + (dev_off - pagecache_frame_offset(pool, frame));
    vast_dev_chunk chunk = pagecache_frame_chunk(pool, frame);
    int rc = VAST_PC_OK;
    for (size_t at = start; at < start + len && rc == VAST_PC_OK;) {
        size_t p = at >> s;
        bool twin = load ? wants_twin(root, p) : has_twin(root, p);
        size_t stop = (p + 1) << s;
        while (stop < start + len && (load ? wants_twin(root, stop >> s) : has_twin(root, stop >> s)) == twin)
            stop += (size_t)1 << s;
        stop = stop < start + len ? stop : start + len;
        size_t off = dev_off + (at - start);
        if (twin && load) {
            rc = group_load(pool, root, chunk, off, twins + (at - start), at, stop - at);
            for (size_t q = p; q << s < stop; q++)
                atomic_fetch_or_explicit(&root->twin[q], PC_TWIN_HAS, memory_order_relaxed);
        } else if (twin) {
            rc = group_write_back(pool, root, chunk, off, twins + (at - start), at, stop - at);
        } else if (load) {
            rc = owned_load(pool, root, frame, off, at, stop - at, lane);
            for (size_t q = p; q << s < stop; q++)
                atomic_fetch_and_explicit(&root->twin[q], (uint8_t)~PC_TWIN_HAS, memory_order_relaxed);
        } else {
            rc = owned_write_back(pool, root, frame, off, at, stop - at, lane); /* counts its bytes (issued) */
        }
        if (rc == VAST_PC_OK && twin)
            lane->bytes += stop - at;
        at = stop;
    }
    return rc ? VAST_PC_ERR_TRANSFER : VAST_PC_OK;
}

void pc_group_host_written(struct vast_pc_buffer *root, size_t lo, size_t hi,
                           const struct pc_io *pinned, size_t npinned)
{
    struct vast_pc_group *g = root->group;
    unsigned s = root->pool->page_shift;
    bool *current = calloc(npinned ? npinned : 1, sizeof *current); /* NULL: all stale */
    pthread_mutex_lock(&g->lock);
    /* A pinned page was updated with the written bytes: it is current after the write if it
     * was before, or if the write covered all of it. */
    for (size_t i = 0; current != NULL && i < npinned; i++) {
        size_t page = pinned[i].page, end = (page + 1) << s;
        end = end > root->size ? root->size : end;
        current[i] = newest(g, root, page) <= atomic_load(&root->seen[page]) || (lo <= page << s && end <= hi);
    }
    publish(g, root, lo, hi, false);
    uint32_t c = atomic_load(&g->clock);
    for (size_t i = 0; current != NULL && i < npinned; i++)
        if (current[i])
            atomic_store(&root->seen[pinned[i].page], c);
    pthread_mutex_unlock(&g->lock);
    free(current);
}
