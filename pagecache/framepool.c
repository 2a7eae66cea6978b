/* framepool.c: device chunks, frame descriptors and the clock sweep (see framepool.h).
 * Everything here except pagecache_create_pool/destroy runs with the pool lock held; the
 * state word is still changed with atomic read-modify-writes only, because unpinning is
 * lock-free (pagecache_unpin_range decrements the pin count without the lock). */
#include "framepool.h"

#include <stdlib.h>

const char *pagecache_status_string(int status)
{
    switch (status) {
    case VAST_PC_OK: return "ok";
    case VAST_PC_ERR_INVALID: return "invalid argument";
    case VAST_PC_ERR_HOST_MEMORY: return "host cannot back this size";
    case VAST_PC_ERR_DEVICE_MEMORY: return "device chunk allocation failed";
    case VAST_PC_ERR_NO_FRAMES: return "no evictable frame: every frame is pinned";
    case VAST_PC_ERR_TRANSFER: return "device transfer failed";
    case VAST_PC_ERR_PINNED: return "range holds pages pinned by a command in flight";
    case VAST_PC_ERR_UNSUPPORTED: return "operation not supported by the device backend";
    case VAST_PC_ERR_NOT_RESIDENT: return "a page of the range is not resident";
    default: return "unknown status";
    }
}

static void free_chunks(struct vast_pool *pool)
{
    for (size_t i = 0; i < pool->nchunks; i++)
        if (pool->chunks[i])
            pool->ops->free_chunk(pool->dev, pool->chunks[i]);
}

static int alloc_chunks(struct vast_pool *pool)
{
    for (size_t i = 0; i < pool->nchunks; i++) {
        size_t first = i * pool->frames_per_chunk;
        size_t all = pool->nframes + pool->overdraft;
        size_t n = all - first < pool->frames_per_chunk ? all - first : pool->frames_per_chunk;
        if (pool->ops->alloc_chunk(pool->dev, n << pool->page_shift, &pool->chunks[i]) != 0 ||
            !pool->chunks[i]) {
            pool->chunks[i] = NULL;
            free_chunks(pool);
            return VAST_PC_ERR_DEVICE_MEMORY;
        }
    }
    return VAST_PC_OK;
}

int pagecache_create_pool(const struct vast_device_ops *ops, void *dev, size_t budget,
                          size_t page_size, size_t max_chunk, struct vast_pool **out)
{
    return pagecache_create_pool_overdraft(ops, dev, budget, 0, page_size, max_chunk, out);
}

/* The chunks' shape for nframes + overdraft frames; the overdraft is cut where it would make
 * a pool that paged kernels can name (VAST_PC_ENTRY_MAX_CHUNKS chunks) one they cannot. */
static void pool_layout(struct vast_pool *pool, size_t max_chunk_frames, size_t overdraft)
{
    size_t budget_chunks = (pool->nframes + max_chunk_frames - 1) / max_chunk_frames;
    size_t most = VAST_PC_ENTRY_MAX_CHUNKS * max_chunk_frames;
    if (budget_chunks <= VAST_PC_ENTRY_MAX_CHUNKS && pool->nframes + overdraft > most)
        overdraft = most - pool->nframes;
    pool->overdraft = overdraft;
    size_t all = pool->nframes + overdraft;
    pool->frames_per_chunk = max_chunk_frames < all ? max_chunk_frames : all;
    pool->nchunks = (all + pool->frames_per_chunk - 1) / pool->frames_per_chunk;
}

int pagecache_create_pool_overdraft(const struct vast_device_ops *ops, void *dev, size_t budget,
                                    size_t overdraft, size_t page_size, size_t max_chunk,
                                    struct vast_pool **out)
{
    if (!ops || !out || page_size < 4096 || (page_size & (page_size - 1)) ||
        budget < page_size || max_chunk < page_size)
        return VAST_PC_ERR_INVALID;
    unsigned shift = 0;
    while (((size_t)1 << shift) < page_size)
        shift++;
    if ((budget >> shift) >= UINT32_MAX - 1)
        return VAST_PC_ERR_INVALID;
    size_t extra = overdraft >> shift;
    if (extra > UINT32_MAX - 2 - (budget >> shift))
        extra = UINT32_MAX - 2 - (budget >> shift);
    VAST_PC_NEW(struct vast_pool, pool);
    pool->ops = ops;
    pool->dev = dev;
    pool->page_size = page_size;
    pool->page_shift = shift;
    pool->nframes = budget >> shift;
    int rc = VAST_PC_ERR_HOST_MEMORY;
    /* With the overdraft first; where the device cannot give it, without (no loans then). */
    for (int attempt = 0; attempt < 2 && rc != VAST_PC_OK; attempt++) {
        if (attempt == 1 && pool->overdraft == 0)
            break;
        pool_layout(pool, max_chunk >> shift, attempt == 0 ? extra : 0);
        pool->chunks = calloc(pool->nchunks, sizeof *pool->chunks);
        pool->frames = calloc(pool->nframes + pool->overdraft, sizeof *pool->frames);
        rc = pool->chunks && pool->frames ? alloc_chunks(pool) : VAST_PC_ERR_HOST_MEMORY;
        if (rc) {
            free(pool->chunks);
            free(pool->frames);
            pool->chunks = NULL;
            pool->frames = NULL;
        }
    }
    if (rc) {
        free(pool);
        return rc;
    }
    pool->free_count = pool->nframes;
    pagecache_configure_duplex(pool, VAST_DUPLEX_DEFAULT_WINDOW);
    pool->warm_max = VAST_WARM_DEFAULT >> shift;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->io_done, NULL);
    *out = pool;
    return VAST_PC_OK;
}

void pagecache_destroy_pool(struct vast_pool *pool)
{
    if (!pool)
        return;
    free_chunks(pool);
    pagecache_free_twins(pool);
    pthread_cond_destroy(&pool->io_done);
    pthread_mutex_destroy(&pool->lock);
    free(pool->chunks);
    free(pool->frames);
    free(pool);
}

struct vast_pool_shape pagecache_pool_shape(uint64_t device_memory, uint64_t max_alloc,
                                            size_t budget, size_t page_size)
{
    struct vast_pool_shape s = {.budget = budget, .page_size = page_size};
    if (s.budget == 0)
        s.budget = (size_t)(device_memory / 4 * 3);
    if (s.page_size == 0) {
        s.page_size = VAST_POOL_DEFAULT_PAGE_SIZE;
        while (s.page_size > 4096 && s.budget / s.page_size < VAST_POOL_MIN_FRAMES)
            s.page_size /= 2;
    }
    s.max_chunk = (size_t)(max_alloc & ~(uint64_t)(s.page_size - 1));
    return s;
}

int pagecache_pin_host(struct vast_pool *pool, void *host, size_t bytes, vast_host_pin *out)
{
    *out = NULL;
    if (!pool->ops->pin_host || !pool->ops->unpin_host)
        return VAST_PC_ERR_UNSUPPORTED;
    int rc = pool->ops->pin_host(pool->dev, host, bytes, out);
    if (rc != VAST_PC_OK)
        *out = NULL;
    return rc;
}

void pagecache_unpin_host(struct vast_pool *pool, vast_host_pin pin)
{
    if (pin)
        pool->ops->unpin_host(pool->dev, pin);
}

void pagecache_configure_duplex(struct vast_pool *pool, size_t window_bytes)
{
    size_t pages = window_bytes > SIZE_MAX - pool->page_size
                       ? SIZE_MAX >> pool->page_shift
                       : (window_bytes + pool->page_size - 1) >> pool->page_shift;
    if (!pool->ops->read_unordered || !pool->ops->wait_ticket)
        pages = 0;
    atomic_store(&pool->duplex_pages, pages);
}

static uint32_t frame_state(struct vast_pool *pool, size_t f)
{
    return atomic_load_explicit(&pool->frames[f].state, memory_order_acquire);
}

/* Claim frame f for a grant: pinned once, I/O in flight; a victim keeps tag and dirty bit. */
static void grant_one(struct vast_pool *pool, size_t f, struct vast_frame_grant *g)
{
    struct vast_frame *fr = &pool->frames[f];
    uint32_t s = frame_state(pool, f);
    g->frame = (uint32_t)f;
    if (s & VAST_FS_VALID) {
        g->victim = fr->owner;
        g->victim_page = fr->page;
        g->victim_dirty = (s & VAST_FS_DIRTY) != 0;
        atomic_fetch_and(&fr->state, ~VAST_FS_USAGE_MASK);
    } else {
        g->victim = NULL;
        g->victim_page = 0;
        g->victim_dirty = 0;
        pagecache_take_free(pool, (uint32_t)f);
    }
    atomic_fetch_or(&fr->state, VAST_FS_IO | VAST_FS_PIN_ONE);
}

static int frame_is_free(struct vast_pool *pool, size_t f)
{
    return frame_state(pool, f) == 0;
}

/* Extension of a run past its first frame: free frames, or unpinned idle frames the clock
 * would take on its next pass (usage <= 1), so streaming workloads keep long runs. */
static int frame_is_extendable(struct vast_pool *pool, size_t f)
{
    uint32_t s = frame_state(pool, f);
    if (s == 0)
        return 1;
    return VAST_FS_PINS(s) == 0 && !(s & VAST_FS_IO) && VAST_FS_USAGE(s) <= 1;
}

static size_t extend_run(struct vast_pool *pool, size_t f, size_t want,
                         struct vast_frame_grant *out, int (*ok)(struct vast_pool *, size_t))
{
    size_t n = 1;
    grant_one(pool, f, &out[0]);
    while (n < want && f + n < pagecache_frames_now(pool) && (f + n) % pool->frames_per_chunk != 0 &&
           ok(pool, f + n)) {
        grant_one(pool, f + n, &out[n]);
        n++;
    }
    return n;
}

static size_t grant_free(struct vast_pool *pool, size_t want, struct vast_frame_grant *out)
{
    size_t all = pagecache_frames_now(pool);
    for (size_t i = 0; i < all; i++) {
        size_t f = (pool->free_hint + i) % all;
        if (frame_is_free(pool, f)) {
            size_t n = extend_run(pool, f, want, out, frame_is_free);
            pool->free_hint = (f + n) % all;
            return n;
        }
    }
    return 0;
}

/* The clock sweep (PostgreSQL freelist.c): skip pinned and in-I/O frames, decrement usage
 * counts until one reaches zero. Gives up after a full pass in which nothing was evictable. */
static size_t grant_victims(struct vast_pool *pool, size_t want, struct vast_frame_grant *out)
{
    size_t all = pagecache_frames_now(pool), tries = all;
    while (tries > 0) {
        size_t f = pool->clock_hand;
        pool->clock_hand = (f + 1) % all;
        uint32_t s = frame_state(pool, f);
        if (VAST_FS_PINS(s) || (s & VAST_FS_IO)) {
            tries--;
            continue;
        }
        if (VAST_FS_USAGE(s) > 0) {
            atomic_fetch_sub(&pool->frames[f].state, VAST_FS_USAGE_ONE);
            tries = all;
            continue;
        }
        size_t n = extend_run(pool, f, want, out, frame_is_extendable);
        pool->clock_hand = (f + n) % all;
        return n;
    }
    return 0;
}

size_t pagecache_grant_frames(struct vast_pool *pool, size_t want, struct vast_frame_grant *out)
{
    if (want == 0)
        return 0;
    if (pool->free_count > 0)
        return grant_free(pool, want, out);
    return grant_victims(pool, want, out);
}

void pagecache_free_frame(struct vast_pool *pool, uint32_t f)
{
    struct vast_frame *fr = &pool->frames[f];
    /* It held a page or was in I/O for the caller: freed once, counted once. */
    assert(atomic_load_explicit(&fr->state, memory_order_relaxed) != 0 && "frame freed twice");
    atomic_store_explicit(&fr->state, 0, memory_order_release);
    fr->owner = NULL;
    fr->page = 0;
    pool->free_count++;
    /* Free frames are granted lowest first (grant_free scans up from the hint, and no frame
     * below it is free): a frame given back is reused before one never touched, so the memory
     * the pool's chunks commit follows the working set. Next-fit took untouched frames first: a
     * 64 MiB buffer made and released 24 times grew a PoCL process by 1472 MiB. */
    if (f < pool->free_hint)
        pool->free_hint = f;
}

void pagecache_configure_warm(struct vast_pool *pool, size_t bytes)
{
    pthread_mutex_lock(&pool->lock);
    pool->warm_max = bytes >> pool->page_shift;
    pthread_mutex_unlock(&pool->lock);
}

void pagecache_discard_frames(struct vast_pool *pool, uint32_t f, size_t n)
{
    for (size_t i = f; i < f + n; i++)
        if (pool->frames[i].warm) {
            pool->frames[i].warm = false;
            pool->warm_count--;
        }
    if (n == 0 || !pool->ops->discard)
        return;
    assert(f + n <= pool->nframes + pool->overdraft && f / pool->frames_per_chunk == (f + n - 1) / pool->frames_per_chunk);
    pool->ops->discard(pool->dev, pagecache_frame_chunk(pool, f), pagecache_frame_offset(pool, f),
                       n << pool->page_shift);
    atomic_fetch_add(&pool->stats.discarded_bytes, (uint64_t)n << pool->page_shift);
}

/* Gives back the highest warm frames, in runs of adjacent ones, until at most `keep` are left;
 * every warm frame is then below warm_hi. */
static void trim_warm(struct vast_pool *pool, size_t keep)
{
    size_t f = pool->warm_hi, end = 0; /* [f, end): warm frames gathered downwards; end 0: none */
    while (pool->warm_count > keep && f > 0) {
        f--;
        bool warm = pool->frames[f].warm;
        if (end != 0 && (!warm || !pagecache_frames_adjacent(pool, (uint32_t)f, (uint32_t)f + 1))) {
            pagecache_discard_frames(pool, (uint32_t)f + 1, end - f - 1);
            end = 0;
        }
        if (warm && end == 0)
            end = f + 1;
        if (end != 0 && pool->warm_count - (end - f) <= keep) { /* this run is enough */
            pagecache_discard_frames(pool, (uint32_t)f, end - f);
            end = 0;
        }
    }
    if (end != 0)
        pagecache_discard_frames(pool, (uint32_t)f, end - f);
    pool->warm_hi = f;
}

void pagecache_retire_frames(struct vast_pool *pool, uint32_t f, size_t n)
{
    if (n == 0)
        return;
    if (!pool->ops->discard)
        return; /* nothing could be given back: nothing to keep either */
    if (pool->warm_max == 0) {
        pagecache_discard_frames(pool, f, n);
        return;
    }
    for (size_t i = f; i < f + n; i++)
        if (!pool->frames[i].warm) {
            pool->frames[i].warm = true;
            pool->warm_count++;
        }
    if (f + n > pool->warm_hi)
        pool->warm_hi = f + n;
    if (pool->warm_count > pool->warm_max)
        trim_warm(pool, pool->warm_max / 2);
}

void pagecache_get_pool_stats(struct vast_pool *pool, struct vast_pool_stats *out)
{
    out->h2d_transfers = atomic_load(&pool->stats.h2d_transfers);
    out->h2d_bytes = atomic_load(&pool->stats.h2d_bytes);
    out->d2h_transfers = atomic_load(&pool->stats.d2h_transfers);
    out->d2h_bytes = atomic_load(&pool->stats.d2h_bytes);
    out->hits = atomic_load(&pool->stats.hits);
    out->misses = atomic_load(&pool->stats.misses);
    out->evictions = atomic_load(&pool->stats.evictions);
    out->dirty_evictions = atomic_load(&pool->stats.dirty_evictions);
    out->unordered_d2h_transfers = atomic_load(&pool->stats.unordered_d2h_transfers);
    out->overlap_h2d_bytes = atomic_load(&pool->stats.overlap_h2d_bytes);
    out->discarded_bytes = atomic_load(&pool->stats.discarded_bytes);
    out->noload_bytes = atomic_load(&pool->stats.noload_bytes);
    out->overdrafts = atomic_load(&pool->stats.overdrafts);
    out->overdraft_max_frames = atomic_load(&pool->stats.overdraft_max_frames);
    out->overdraft_write_backs = atomic_load(&pool->stats.overdraft_write_backs);
    out->twin_h2d_bytes = atomic_load(&pool->stats.twin_h2d_bytes);
    out->merged_d2h_bytes = atomic_load(&pool->stats.merged_d2h_bytes);
    out->owned_d2h_bytes = atomic_load(&pool->stats.owned_d2h_bytes);
    out->owned_stale_bytes = atomic_load(&pool->stats.owned_stale_bytes);
}

void pagecache_count_frames(struct vast_pool *pool, size_t *valid, size_t *dirty, size_t *pinned)
{
    size_t v = 0, d = 0, p = 0;
    for (size_t f = 0; f < pagecache_frames_now(pool); f++) {
        uint32_t s = frame_state(pool, f);
        v += (s & VAST_FS_VALID) != 0;
        d += (s & VAST_FS_DIRTY) != 0;
        p += VAST_FS_PINS(s) != 0;
    }
    if (valid) *valid = v;
    if (dirty) *dirty = d;
    if (pinned) *pinned = p;
}
