/* framepool.h: the device frame pool of one real device (PostgreSQL's buffer manager, on a GPU).
 * Owns the device chunks (budget carved into chunks <= max chunk size), the frame
 * descriptors, the clock hand and the transfer statistics. A frame's pin count, usage count
 * and flags live in one atomic word; its tag (which buffer page it holds) is protected by the
 * pool lock. This file knows frames, not page tables: pagecache.c maps pages to frames and
 * calls the allocator here with the pool lock held. Rules: pagecache/README.md. */
#ifndef VAST_PAGECACHE_FRAMEPOOL_H
#define VAST_PAGECACHE_FRAMEPOOL_H

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include "devops.h"

/* Frame state word layout. */
#define VAST_FS_PIN_ONE    1u
#define VAST_FS_PIN_MASK   0xffffu
#define VAST_FS_USAGE_SHIFT 16
#define VAST_FS_USAGE_ONE  (1u << VAST_FS_USAGE_SHIFT)
#define VAST_FS_USAGE_MASK (0xfu << VAST_FS_USAGE_SHIFT)
#define VAST_FS_USAGE_MAX  5u
#define VAST_FS_VALID      (1u << 24) /* holds a page (tag valid) */
#define VAST_FS_DIRTY      (1u << 25) /* device copy newer than the host store */
#define VAST_FS_IO         (1u << 26) /* a load or write-back is in flight: wait on io_done */
#define VAST_FS_UNLOADED   (1u << 27) /* given a frame without a load (VAST_PC_NO_LOAD): the bytes
                                         are not the page's until mark_dirty; pinned meanwhile */

#define VAST_FS_FLAGS      (VAST_FS_VALID | VAST_FS_DIRTY | VAST_FS_IO | VAST_FS_UNLOADED)

#define VAST_FS_PINS(s)  ((s) & VAST_FS_PIN_MASK)
#define VAST_FS_USAGE(s) (((s) & VAST_FS_USAGE_MASK) >> VAST_FS_USAGE_SHIFT)

/* The fields of the state word do not overlap and fit its 32 bits (a pin count that carried
 * into the usage count would make a frame look recently used, or free). */
_Static_assert(VAST_FS_PIN_MASK == VAST_FS_USAGE_ONE - 1, "pin count: the bits below the usage count");
_Static_assert((VAST_FS_PIN_MASK & VAST_FS_USAGE_MASK) == 0, "pin and usage counts overlap");
_Static_assert(((VAST_FS_PIN_MASK | VAST_FS_USAGE_MASK) & VAST_FS_FLAGS) == 0, "flags overlap the counts");
_Static_assert((VAST_FS_VALID ^ VAST_FS_DIRTY ^ VAST_FS_IO ^ VAST_FS_UNLOADED) == VAST_FS_FLAGS, "flags are distinct bits");
_Static_assert(VAST_FS_USAGE_MAX <= VAST_FS_USAGE_MASK >> VAST_FS_USAGE_SHIFT, "usage count overflows");
_Static_assert(VAST_FS_UNLOADED <= 0x80000000u, "flags beyond 32 bits");

struct vast_pc_buffer;

struct vast_frame {
    _Atomic uint32_t state;
    bool warm; /* free, from a released buffer, not given back yet (pool lock; retire_frames) */
    struct vast_pc_buffer *owner; /* root buffer; valid when VAST_FS_VALID (pool lock) */
    size_t page;
    /* While a load evicts this frame's previous page (VAST_FS_IO set), that page: its
     * page-table entry still points here until the write-back is done (pool lock). */
    struct vast_pc_buffer *evicting;
    size_t evicting_page;
};

struct vast_pool_stats {
    uint64_t h2d_transfers, h2d_bytes; /* loads and host-write updates */
    uint64_t d2h_transfers, d2h_bytes; /* write-backs (eviction and flush) */
    uint64_t hits, misses;             /* pages found resident / loaded by make_resident */
    uint64_t evictions, dirty_evictions;
    /* Duplex (README.md "Duplex transfers"); new fields go last, the ones above keep their
     * meaning. unordered_d2h_transfers: write-backs (also counted in d2h_transfers) issued
     * through read_unordered, beside the loads. overlap_h2d_bytes: load bytes a make_resident
     * issued while write-backs of the same call were still in flight, i.e. what the schedule
     * lets the device move in both directions at once (whether it does is the device's). */
    uint64_t unordered_d2h_transfers, overlap_h2d_bytes;
    /* Frames given back to the device (ops->discard) when their buffer was released. */
    uint64_t discarded_bytes;
    /* Pages given a frame without a load (VAST_PC_NO_LOAD: a kernel overwrites them), in bytes. */
    uint64_t noload_bytes;
    /* Overdrafts (README.md "Overdraft"): loans begun, the most frames lent at once, and the
     * pages written back when a loan ended. */
    uint64_t overdrafts, overdraft_max_frames, overdraft_write_backs;
    /* Pages of buffers shared with other pools (README.md "Several devices"), in bytes: loaded
     * through a twin (a host copy, then a transfer from it), written back by a merge against
     * the twin, written back whole (a page one pool owns: no twin), and such whole write-backs
     * of a copy that was stale (an ownership rule broken: must stay 0). */
    uint64_t twin_h2d_bytes, merged_d2h_bytes, owned_d2h_bytes, owned_stale_bytes;
};

/* Write-backs of one make_resident go out in windows of at most this many bytes (default):
 * the loads into window k's frames start once window k is on the host, while window k+1 is
 * still travelling. 8 MiB transfers run at ~54 GB/s (FACTS.md: 4 MiB 53, 16 MiB 54.4). A
 * call with less to write back uses smaller windows, about four of them, so that it still
 * pipelines, but none below VAST_DUPLEX_MIN_WINDOW (1 MiB: 47.7 GB/s) unless configured so. */
#define VAST_DUPLEX_DEFAULT_WINDOW ((size_t)8 << 20)
#define VAST_DUPLEX_MIN_WINDOW ((size_t)1 << 20)

struct vast_pool {
    const struct vast_device_ops *ops;
    void *dev;
    size_t page_size;
    unsigned page_shift;
    /* nframes: the budget in frames, what planners plan for. overdraft: frames past it that
     * the chunks also hold (frames [nframes, nframes + overdraft)), used only while lent
     * (pagecache_overdraft_begin/end, README.md "Overdraft"); lent (pool lock): how many of
     * them are in use now. Frames [0, pagecache_frames_now) are the ones grants and sweeps see. */
    size_t nframes, overdraft, lent, frames_per_chunk, nchunks;
    vast_dev_chunk *chunks;
    /* Bit c: chunk c (c < 32) has held a frame (pagecache_take_free sets it, never cleared).
     * Paged kernels are given only these chunks (interpose/paged.c): a real buffer passed to a
     * kernel is committed, all of it, by NVIDIA's OpenCL. */
    _Atomic uint32_t chunks_used;
    struct vast_frame *frames;
    pthread_mutex_t lock;    /* frame tags, page-table entries, hands, free count */
    pthread_cond_t io_done;  /* broadcast whenever VAST_FS_IO is cleared */
    size_t clock_hand, free_hint, free_count;
    /* Warm frames (pagecache_retire_frames): how many, the most kept, and a bound above the
     * highest one's index (pool lock). */
    size_t warm_count, warm_max, warm_hi;
    size_t transient_pins;   /* pins of VAST_PC_TRANSIENT calls not yet given back */
    uint64_t transient_returns; /* pagecache_unpin_transient calls so far (pool lock) */
    void (*reclaim)(void *arg); /* gives transient pins back (pagecache_set_reclaim) */
    void *reclaim_arg;
    struct vast_pc_buffer *roots; /* root buffers on this pool (pool lock; pagecache_check) */
    /* Twins (peers.c): per frame, the bytes its page was loaded with, for pages of buffers
     * shared with other pools; a lazily committed mapping of nframes pages, made when the
     * first shared buffer joins (pool lock), unmapped with the pool. */
    unsigned char *twins;
    /* Duplex window in pages; 0: simplex (also when ops lack read_unordered). */
    _Atomic size_t duplex_pages;
    struct {
        _Atomic uint64_t h2d_transfers, h2d_bytes, d2h_transfers, d2h_bytes;
        _Atomic uint64_t hits, misses, evictions, dirty_evictions;
        _Atomic uint64_t unordered_d2h_transfers, overlap_h2d_bytes;
        _Atomic uint64_t discarded_bytes, noload_bytes;
        _Atomic uint64_t overdrafts, overdraft_max_frames, overdraft_write_backs;
        _Atomic uint64_t twin_h2d_bytes, merged_d2h_bytes, owned_d2h_bytes, owned_stale_bytes;
    } stats;
};

/* A frame the allocator hands out; when it held a page, that page is the victim. */
struct vast_frame_grant {
    uint32_t frame;
    struct vast_pc_buffer *victim; /* NULL when the frame was free */
    size_t victim_page;
    int victim_dirty;
};

/* budget and max_chunk in bytes; page_size a power of two >= 4096; budget >= page_size.
 * The budget is rounded down to whole frames; chunks hold at most max_chunk bytes. */
int pagecache_create_pool(const struct vast_device_ops *ops, void *dev, size_t budget,
                          size_t page_size, size_t max_chunk, struct vast_pool **out);
/* The same with an overdraft of up to `overdraft` bytes (rounded down to whole frames) past the
 * budget, allocated with the chunks and lent by pagecache_overdraft_begin. It is cut so that
 * the pool keeps within VAST_PC_ENTRY_MAX_CHUNKS chunks where the budget alone does; when the
 * device cannot allocate budget and overdraft, the pool is made with none (pool->overdraft 0). */
int pagecache_create_pool_overdraft(const struct vast_device_ops *ops, void *dev, size_t budget,
                                    size_t overdraft, size_t page_size, size_t max_chunk,
                                    struct vast_pool **out);

/* The shape of a device's pool. Default budget: three quarters of the device's memory. Default
 * page: 64 KiB (runs of pages coalesce into transfers of 1 MiB and more, which FACTS.md shows
 * reach 48-55 GB/s; small pages keep partitions and faults fine), halved down to 4 KiB while
 * the budget holds fewer than VAST_POOL_MIN_FRAMES frames: a budget of few frames refuses
 * work-groups whose gathers scatter over pages. Chunks: the device's largest allocation,
 * in whole pages. */
#define VAST_POOL_DEFAULT_PAGE_SIZE ((size_t)64 << 10)
#define VAST_POOL_MIN_FRAMES 1024 /* a work-group of 1024 items gathering at random touches as many pages */
struct vast_pool_shape {
    size_t budget, page_size, max_chunk; /* bytes: pagecache_create_pool's arguments */
};
/* device_memory, max_alloc: the device's global memory and largest allocation; budget and
 * page_size as configured (VAST_DEVICE_MEMORY, VAST_PAGE_SIZE), 0 for the default. */
struct vast_pool_shape pagecache_pool_shape(uint64_t device_memory, uint64_t max_alloc,
                                            size_t budget, size_t page_size);
void pagecache_destroy_pool(struct vast_pool *pool);
/* Duplex write-backs (README.md "Duplex transfers"): window_bytes > 0 (rounded up to whole
 * pages; default VAST_DUPLEX_DEFAULT_WINDOW) uses ops->read_unordered where the device
 * offers it; 0 goes back to the simplex protocol (every write-back of a call, wait, then the
 * loads), e.g. to measure the difference. Takes effect for calls that start afterwards. */
void pagecache_configure_duplex(struct vast_pool *pool, size_t window_bytes);
/* Frames of released buffers kept committed for reuse (README.md "Footprint"): at most
 * `bytes` of them (rounded down to whole frames; default VAST_WARM_DEFAULT); 0 gives every
 * one back at its release. */
#define VAST_WARM_DEFAULT ((size_t)4 << 20)
void pagecache_configure_warm(struct vast_pool *pool, size_t bytes);

/* Device location of a frame. */
static inline vast_dev_chunk pagecache_frame_chunk(const struct vast_pool *p, uint32_t f)
{
    return p->chunks[f / p->frames_per_chunk];
}
static inline size_t pagecache_frame_offset(const struct vast_pool *p, uint32_t f)
{
    return (size_t)(f % p->frames_per_chunk) << p->page_shift;
}
/* Page-table entries of paged kernels (translate.h's look-ahead page table, LPT): the frame's
 * chunk in the top two bits, its index in the chunk below; the kernel addresses chunk
 * (e >> VAST_PC_ENTRY_CHUNK_SHIFT) at byte (e & VAST_PC_ENTRY_FRAME_MASK) << page_shift, so only
 * the first VAST_PC_ENTRY_MAX_CHUNKS chunks can be named (interpose refuses paged launches on
 * larger pools) and VAST_PC_NO_ENTRY (all ones) is no frame. translate.h states the kernel's
 * side of this ABI (TRANSLATE_LPT_CHUNK_SHIFT, TRANSLATE_NO_FRAME, TRANSLATE_MAX_POOL_CHUNKS);
 * interpose/variant.c asserts that both agree. */
#define VAST_PC_ENTRY_CHUNK_SHIFT 30
#define VAST_PC_ENTRY_FRAME_MASK ((1u << VAST_PC_ENTRY_CHUNK_SHIFT) - 1)
#define VAST_PC_ENTRY_MAX_CHUNKS 4
#define VAST_PC_NO_ENTRY 0xffffffffu
_Static_assert(((uint64_t)VAST_PC_ENTRY_MAX_CHUNKS << VAST_PC_ENTRY_CHUNK_SHIFT) - 1 == VAST_PC_NO_ENTRY,
               "page-table entries: every chunk number fits the bits above the frame index");
static inline uint32_t pagecache_frame_entry(const struct vast_pool *p, uint32_t f)
{
    size_t chunk = f / p->frames_per_chunk, index = f % p->frames_per_chunk;
    assert(chunk < VAST_PC_ENTRY_MAX_CHUNKS && index < VAST_PC_ENTRY_FRAME_MASK);
    return (uint32_t)chunk << VAST_PC_ENTRY_CHUNK_SHIFT | (uint32_t)index;
}
static inline vast_dev_chunk pagecache_entry_chunk(const struct vast_pool *p, uint32_t e)
{
    return p->chunks[e >> VAST_PC_ENTRY_CHUNK_SHIFT];
}
static inline size_t pagecache_entry_offset(const struct vast_pool *p, uint32_t e)
{
    return (size_t)(e & VAST_PC_ENTRY_FRAME_MASK) << p->page_shift;
}

/* Pins host memory through the pool's device for fast transfers (a USE_HOST_PTR wrapper on
 * OpenCL), for memory that is no backing store (backing.h pins those). VAST_PC_ERR_UNSUPPORTED
 * when the device cannot pin; unpinned memory is correct, only slower. */
int pagecache_pin_host(struct vast_pool *pool, void *host, size_t bytes, vast_host_pin *out);
void pagecache_unpin_host(struct vast_pool *pool, vast_host_pin pin);

/* Pool lock held (or a racy snapshot): the frames in use now, the budget and what is lent. */
static inline size_t pagecache_frames_now(const struct vast_pool *p)
{
    return p->nframes + p->lent;
}

static inline int pagecache_frames_adjacent(const struct vast_pool *p, uint32_t a, uint32_t b)
{
    return b == a + 1 && b % p->frames_per_chunk != 0;
}

/* Pool lock held. Grants up to `want` frames contiguous in one chunk (free frames first,
 * then clock-sweep victims), each returned pinned once and with VAST_FS_IO set (victims
 * keep their tag and dirty bit until the caller retags them). Returns the number granted,
 * 0 when no frame is free or evictable (every frame pinned or in I/O). */
size_t pagecache_grant_frames(struct vast_pool *pool, size_t want, struct vast_frame_grant *out);
/* Frame f's chunk as a bit of chunks_used (0 for chunks from the 33rd on, which no paged
 * kernel names). */
static inline uint32_t pagecache_frame_chunk_bit(const struct vast_pool *p, uint32_t f)
{
    size_t chunk = f / p->frames_per_chunk;
    return chunk < 32 ? 1u << chunk : 0;
}
/* Pool lock held: free frame f is taken (granted, or claimed by compaction): out of the free
 * count, and no longer warm. */
static inline void pagecache_take_free(struct vast_pool *pool, uint32_t f)
{
    uint32_t bit = pagecache_frame_chunk_bit(pool, f);
    if (bit)
        atomic_fetch_or_explicit(&pool->chunks_used, bit, memory_order_release);
    pool->free_count--;
    if (pool->frames[f].warm) {
        pool->frames[f].warm = false;
        pool->warm_count--;
    }
}
/* The chunks that have held a frame (bit c: chunk c, c < 32), without the lock: a frame the
 * caller holds (granted, pinned) has its chunk's bit seen. */
static inline uint32_t pagecache_chunks_used(const struct vast_pool *p)
{
    return atomic_load_explicit(&p->chunks_used, memory_order_acquire);
}
/* Pool lock held: the frame becomes free (no tag, no flags, no pins). */
void pagecache_free_frame(struct vast_pool *pool, uint32_t f);
/* Pool lock held: frames [f, f + n), free and adjacent (one chunk), give their memory back to
 * the device (ops->discard; nothing where the device has none). */
void pagecache_discard_frames(struct vast_pool *pool, uint32_t f, size_t n);
/* Pool lock held: frames [f, f + n), free and adjacent (one chunk), of a released buffer.
 * They stay committed as warm frames, the next to be granted, as long as the pool keeps at
 * most warm_max; past that the highest warm frames are given back (pagecache_discard_frames)
 * until half of warm_max is left. */
void pagecache_retire_frames(struct vast_pool *pool, uint32_t f, size_t n);

/* Unmaps the pool's twins (peers.c), if it has any. */
void pagecache_free_twins(struct vast_pool *pool);

void pagecache_get_pool_stats(struct vast_pool *pool, struct vast_pool_stats *out);
/* Frames holding a page, dirty ones, pinned ones (racy snapshot, for tests and stats). */
void pagecache_count_frames(struct vast_pool *pool, size_t *valid, size_t *dirty, size_t *pinned);

#endif
