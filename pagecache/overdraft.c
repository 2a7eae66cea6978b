/* overdraft.c: frames past the budget, lent to one launch at a time (README.md "Overdraft").
 * A pool made with an overdraft holds frames [nframes, nframes + overdraft) in its chunks
 * beside the budget's; nothing grants them until pagecache_overdraft_begin lends some, and
 * pagecache_overdraft_end takes them back: their pages leave (dirty ones written back first,
 * under the I/O protocol of README.md), the frames are given back to the device
 * (ops->discard) and the pool is the budget again.
 * Principal entry points: pagecache_overdraft_begin, pagecache_overdraft_end. */
#include "pagecache_int.h"

#include <stdlib.h>

int pagecache_overdraft_begin(struct vast_pool *pool, size_t frames)
{
    if (!pool)
        return VAST_PC_ERR_INVALID;
    int rc = VAST_PC_OK;
    pthread_mutex_lock(&pool->lock);
    if (frames > pool->overdraft) {
        rc = VAST_PC_ERR_NO_FRAMES;
    } else if (frames > pool->lent) {
        if (pool->lent == 0)
            atomic_fetch_add(&pool->stats.overdrafts, 1);
        /* Frames past the loan are free (an ended loan empties them), and above the free hint,
         * which stays below nframes + lent: "no frame below the hint is free" still holds. */
        pool->free_count += frames - pool->lent;
        pool->lent = frames;
        uint64_t most = atomic_load(&pool->stats.overdraft_max_frames);
        while (frames > most && !atomic_compare_exchange_weak(&pool->stats.overdraft_max_frames, &most, frames))
            ;
    }
    pthread_mutex_unlock(&pool->lock);
    return rc;
}

/* Lock held: 1 while a lent frame is in I/O (the caller waits), -1 when one is pinned. */
static int lent_busy(struct vast_pool *pool)
{
    for (size_t f = pool->nframes; f < pagecache_frames_now(pool); f++) {
        uint32_t s = pc_state(pool, (uint32_t)f);
        if (s & VAST_FS_IO)
            return 1;
        if (VAST_FS_PINS(s))
            return -1;
    }
    return 0;
}

/* Lock held: the lent frames are free: they leave the pool's count and go back to the device. */
static void lent_return(struct vast_pool *pool)
{
    size_t lo = pool->nframes, hi = pagecache_frames_now(pool);
    pool->free_count -= pool->lent;
    for (size_t f = lo; f < hi;) {
        size_t end = (f / pool->frames_per_chunk + 1) * pool->frames_per_chunk;
        end = end < hi ? end : hi;
        pagecache_discard_frames(pool, (uint32_t)f, end - f);
        f = end;
    }
    pool->lent = 0;
    if (pool->clock_hand >= pool->nframes)
        pool->clock_hand = 0;
    if (pool->free_hint >= pool->nframes)
        pool->free_hint = 0;
}

int pagecache_overdraft_end(struct vast_pool *pool)
{
    if (!pool)
        return VAST_PC_ERR_INVALID;
    pthread_mutex_lock(&pool->lock);
    int busy;
    while ((busy = lent_busy(pool)) > 0)
        pthread_cond_wait(&pool->io_done, &pool->lock);
    if (busy < 0 || pool->lent == 0) {
        pthread_mutex_unlock(&pool->lock);
        return busy < 0 ? VAST_PC_ERR_PINNED : VAST_PC_OK;
    }
    /* (1) Claim every page in a lent frame: IO set, the frame names it as `evicting` (its
     * page-table entry still points there until the write-back is done). */
    size_t lo = pool->nframes, hi = pagecache_frames_now(pool), n = 0, ndirty = 0;
    struct pc_io *ios = malloc((hi - lo) * sizeof *ios);
    uint8_t *dirty = malloc(hi - lo);
    if (!ios || !dirty) {
        pthread_mutex_unlock(&pool->lock);
        free(ios);
        free(dirty);
        return VAST_PC_ERR_HOST_MEMORY;
    }
    for (size_t f = lo; f < hi; f++) {
        struct vast_frame *fr = &pool->frames[f];
        uint32_t s = pc_state(pool, (uint32_t)f);
        if (!(s & VAST_FS_VALID))
            continue;
        dirty[n] = (s & VAST_FS_DIRTY) != 0;
        ios[n++] = (struct pc_io){(uint32_t)f, fr->owner, fr->page};
        fr->evicting = fr->owner;
        fr->evicting_page = fr->page;
        fr->owner = NULL;
        atomic_fetch_and(&fr->state, ~VAST_FS_VALID);
        atomic_fetch_or(&fr->state, VAST_FS_IO);
    }
    pthread_mutex_unlock(&pool->lock);
    /* (2) The dirty ones go to the host, all waited for (the clean ones are there already). */
    struct pc_io *wb = malloc((n ? n : 1) * sizeof *wb);
    for (size_t i = 0; wb && i < n; i++)
        if (dirty[i])
            wb[ndirty++] = ios[i];
    int rc = wb ? pc_write_back_runs(pool, wb, ndirty) : VAST_PC_ERR_HOST_MEMORY;
    /* (3) Publish: the pages leave and the loan ends; or, after a failure, every page stays
     * where it was, dirty bits included, and so does the loan. */
    pthread_mutex_lock(&pool->lock);
    for (size_t i = 0; i < n; i++) {
        struct vast_frame *fr = &pool->frames[ios[i].frame];
        if (rc != VAST_PC_OK) {
            fr->owner = fr->evicting;
            fr->page = fr->evicting_page;
            fr->evicting = NULL;
            atomic_fetch_or(&fr->state, VAST_FS_VALID);
            atomic_fetch_and(&fr->state, ~VAST_FS_IO);
            continue;
        }
        if (pagecache_pt_frame(&ios[i].buf->pt, ios[i].page) == ios[i].frame)
            pagecache_pt_set_frame(&ios[i].buf->pt, ios[i].page, VAST_PT_NO_FRAME);
        fr->evicting = NULL;
        pagecache_free_frame(pool, ios[i].frame);
    }
    if (rc == VAST_PC_OK) {
        atomic_fetch_add(&pool->stats.overdraft_write_backs, ndirty);
        atomic_fetch_add(&pool->stats.evictions, n);
        atomic_fetch_add(&pool->stats.dirty_evictions, ndirty);
        lent_return(pool);
    }
    pthread_cond_broadcast(&pool->io_done);
    pthread_mutex_unlock(&pool->lock);
    free(wb);
    free(ios);
    free(dirty);
    return rc == VAST_PC_OK ? VAST_PC_OK : VAST_PC_ERR_TRANSFER;
}
