/* check.c: pagecache_check, the rules of README.md as code (SQLite's page sanity checker):
 * tests call it after every step (test_model.c), and a corrupted state makes it fail
 * (test_pool.c). It checks, under the pool lock:
 *   - each frame's state word: no unknown bits, usage <= VAST_FS_USAGE_MAX; a frame is free
 *     (state 0, no tag) or holds a page (VALID) or is in I/O; so pins, DIRTY and usage only
 *     on a frame holding a page ("a pinned page stays resident", "dirty only when resident");
 *   - frame -> page: a frame holding a page is its root buffer's page table entry for it;
 *     `evicting` only during I/O;
 *   - page -> frame: every page-table entry names a frame that holds that page, or that is
 *     writing it back for a load (VAST_FS_IO, `evicting`: README "The I/O protocol"), and
 *     the table's count of such entries is right (walks skip a table that counts none);
 *   - the free count is the number of free frames; clock hand and free hint are frames;
 *   - host writes in progress lie inside their buffer and keep their pages pinned;
 *   - a frame holding a page or in I/O is in a chunk marked used (pagecache_chunks_used: the
 *     chunks paged kernels are given).
 * A frame in I/O belongs to a call between its phases: only what holds during I/O is asked of
 * it (compaction moves a page's entry before its old frame's write-back ends). */
#include "pagecache_int.h"

#include <stdio.h>

static _Thread_local char why[192];

#define FAIL(...)                                                                            \
    do {                                                                                     \
        snprintf(why, sizeof why, __VA_ARGS__);                                              \
        return why;                                                                          \
    } while (0)

static int maps_to(const struct vast_pc_buffer *root, size_t page, uint32_t f)
{
    return root && root->root == root && page < root->pt.npages && pagecache_pt_frame(&root->pt, page) == f;
}

static const char *check_frame(struct vast_pool *pool, uint32_t f, size_t *nfree)
{
    const struct vast_frame *fr = &pool->frames[f];
    uint32_t s = pc_state(pool, f);
    if (s & ~(VAST_FS_PIN_MASK | VAST_FS_USAGE_MASK | VAST_FS_FLAGS))
        FAIL("frame %u: unknown bits in state 0x%x", f, s);
    if (VAST_FS_USAGE(s) > VAST_FS_USAGE_MAX)
        FAIL("frame %u: usage count %u above %u", f, VAST_FS_USAGE(s), VAST_FS_USAGE_MAX);
    if (s == 0) {
        (*nfree)++;
        if (fr->owner || fr->evicting)
            FAIL("frame %u is free but tagged", f);
        return NULL;
    }
    if (fr->evicting && !(s & VAST_FS_IO))
        FAIL("frame %u evicts a page without I/O in flight", f);
    if ((s & VAST_FS_VALID) && !maps_to(fr->owner, fr->page, f))
        FAIL("frame %u holds page %zu of a buffer whose page table does not name it", f, fr->page);
    if (!(s & (VAST_FS_VALID | VAST_FS_IO)))
        FAIL("frame %u holds no page, is in no I/O, yet has state 0x%x (pins, usage or DIRTY)", f, s);
    uint32_t bit = pagecache_frame_chunk_bit(pool, f);
    if (bit && !(pagecache_chunks_used(pool) & bit))
        FAIL("frame %u is in use in chunk %zu, which is not marked used", f, (size_t)(f / pool->frames_per_chunk));
    /* README "Pages a kernel overwrites": a frame that was never loaded is pinned and clean */
    if ((s & VAST_FS_UNLOADED) && (VAST_FS_PINS(s) == 0 || (s & VAST_FS_DIRTY) || !(s & VAST_FS_VALID)))
        FAIL("frame %u was given without a load, yet is unpinned, dirty or holds no page (state 0x%x)", f, s);
    return NULL;
}

static const char *check_buffer(struct vast_pool *pool, const struct vast_pc_buffer *root)
{
    if (root->root != root || root->pool != pool)
        FAIL("buffer %p on the pool's list is no root of this pool", (const void *)root);
    size_t mapped = 0;
    for (size_t p = 0; p < root->pt.npages; p++) {
        uint32_t f = pagecache_pt_frame(&root->pt, p);
        if (f == VAST_PT_NO_FRAME)
            continue;
        mapped++;
        if (f >= pagecache_frames_now(pool))
            FAIL("page %zu maps to frame %u of %zu", p, f, pagecache_frames_now(pool));
        const struct vast_frame *fr = &pool->frames[f];
        uint32_t s = pc_state(pool, f);
        int holds = (s & VAST_FS_VALID) && fr->owner == root && fr->page == p;
        int evicts = (s & VAST_FS_IO) && fr->evicting == root && fr->evicting_page == p;
        if (!holds && !evicts)
            FAIL("page %zu maps to frame %u, which holds another page (state 0x%x)", p, f, s);
    }
    if (mapped != root->pt.mapped)
        FAIL("the page table names %zu frames but counts %zu", mapped, root->pt.mapped);
    for (const struct vast_host_write *w = root->writers; w; w = w->next) {
        if (w->root != root || w->first > root->pt.npages || w->count > root->pt.npages - w->first)
            FAIL("host write of pages %zu+%zu outside its buffer", w->first, w->count);
        for (size_t i = 0; i < w->npinned; i++)
            if (!maps_to(root, w->pinned[i].page, w->pinned[i].frame) ||
                VAST_FS_PINS(pc_state(pool, w->pinned[i].frame)) == 0)
                FAIL("host write keeps page %zu, but not pinned in frame %u", w->pinned[i].page,
                     w->pinned[i].frame);
    }
    return NULL;
}

static const char *check_locked(struct vast_pool *pool)
{
    size_t nfree = 0;
    const char *e = NULL;
    for (uint32_t f = 0; f < pagecache_frames_now(pool) && !e; f++)
        e = check_frame(pool, f, &nfree);
    for (const struct vast_pc_buffer *b = pool->roots; b && !e; b = b->next_root)
        e = check_buffer(pool, b);
    if (e)
        return e;
    if (nfree != pool->free_count)
        FAIL("free count %zu, but %zu frames are free", pool->free_count, nfree);
    if (pool->clock_hand >= pagecache_frames_now(pool) || pool->free_hint >= pagecache_frames_now(pool))
        FAIL("clock hand %zu or free hint %zu past %zu frames", pool->clock_hand, pool->free_hint,
             pagecache_frames_now(pool));
    size_t nwarm = 0; /* warm frames (framepool.h): free, below warm_hi, counted */
    for (size_t f = 0; f < pool->nframes + pool->overdraft; f++) {
        if (!pool->frames[f].warm)
            continue;
        nwarm++;
        if (atomic_load_explicit(&pool->frames[f].state, memory_order_relaxed) != 0 || f >= pool->warm_hi)
            FAIL("frame %zu is warm, but not free or not below warm_hi %zu", f, pool->warm_hi);
    }
    if (nwarm != pool->warm_count)
        FAIL("warm count %zu, but %zu frames are warm", pool->warm_count, nwarm);
    for (size_t f = 0; f < pool->free_hint; f++) /* free frames are granted lowest first */
        if (atomic_load_explicit(&pool->frames[f].state, memory_order_relaxed) == 0)
            FAIL("frame %zu is free below the free hint %zu", f, pool->free_hint);
    return NULL;
}

const char *pagecache_check(struct vast_pool *pool)
{
    pthread_mutex_lock(&pool->lock);
    const char *e = check_locked(pool);
    pthread_mutex_unlock(&pool->lock);
    return e;
}
