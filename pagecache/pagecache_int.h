/* pagecache_int.h: what residency.c and coherence.c share and nobody else sees: the
 * virtual buffer structure, the run-coalescing transfer issuer and range iteration.
 * Every function here except pc_issue_runs and pc_check_request runs with the pool lock held. */
#ifndef VAST_PAGECACHE_INT_H
#define VAST_PAGECACHE_INT_H

#include "pagecache.h"

#include <stdbool.h>

struct vast_pc_buffer {
    struct vast_pool *pool;
    struct vast_pc_buffer *root; /* itself for a root buffer */
    size_t offset, size;         /* bytes of root */
    struct vast_backing *backing;
    struct vast_page_table pt;   /* root only */
    struct vast_host_write *writers; /* root only, pool lock: host writes in progress */
    struct vast_pc_buffer *prev_root, *next_root; /* root only, pool lock: pool->roots */
};

/* A host write in progress (begin..end): its pages are fenced off, see coherence.c. */
struct vast_host_write {
    struct vast_host_write *next;
    struct vast_pc_buffer *root;
    size_t root_off, size; /* bytes of root being written */
    size_t first, count;   /* pages of root */
    size_t npinned;
    struct pc_io *pinned;  /* pages kept resident (pinned) across the write */
};

/* One page transfer to be coalesced: frame f <-> root page `page` of buf. */
struct pc_io {
    uint32_t frame;
    struct vast_pc_buffer *buf;
    size_t page;
};

/* Where pc_issue_runs sends transfers, and what they left to wait for. */
enum pc_dir {
    PC_LOAD,                 /* host -> device, ordered (ops->write) */
    PC_WRITE_BACK,           /* device -> host, ordered (ops->read): wait() covers it */
    PC_WRITE_BACK_UNORDERED, /* device -> host through ops->read_unordered: tickets */
};
struct pc_lane {
    enum pc_dir dir;
    size_t bytes;            /* issued so far */
    void **tickets;          /* PC_WRITE_BACK_UNORDERED: one per transfer not yet complete */
    size_t ntickets, waited, cap; /* tickets [0, waited) have been waited for */
};

/* Issues transfers (without the lock) for ios, one per run of adjacent frames holding
 * consecutive pages of one buffer, clipped to root bytes [lo, hi), through lane->dir.
 * Does not wait. Returns the first error (and issues nothing after it). */
int pc_issue_runs(struct vast_pool *pool, const struct pc_io *ios, size_t n,
                  struct pc_lane *lane, size_t lo, size_t hi);
/* Waits for the lane's tickets [waited, upto); every one is waited for, the first error is
 * returned. */
int pc_wait_tickets(struct vast_pool *pool, struct pc_lane *lane, size_t upto);
/* Waits for every ticket left, frees the lane's array; the first error is returned. */
int pc_finish_lane(struct vast_pool *pool, struct pc_lane *lane);
/* Writes back ios (whole pages of frames this call holds IO-flagged) and waits for them: on
 * the unordered lane when the pool runs duplex, else in order. VAST_PC_ERR_TRANSFER if any
 * failed. */
int pc_write_back_runs(struct vast_pool *pool, const struct pc_io *ios, size_t n);
/* Pages per duplex write-back window, 0 when the pool runs simplex (framepool.h). */
static inline size_t pc_duplex_pages(struct vast_pool *pool)
{
    return atomic_load_explicit(&pool->duplex_pages, memory_order_relaxed);
}

/* Calls visit for every page of root [first, first+count) with a frame: from the page table
 * or from the frames, whichever is shorter. with_evicting also visits pages whose frame is
 * being written back for a load (only wait needs them). */
typedef void (*pc_visit_fn)(struct vast_pool *pool, size_t page, uint32_t frame, void *ctx);
void pc_for_each_resident(struct vast_pc_buffer *root, size_t first, size_t count,
                          int with_evicting, pc_visit_fn visit, void *ctx);
/* Sleeps on io_done until no page of the range has a transfer in flight and no host write
 * in progress overlaps it. */
void pc_wait_range_idle(struct vast_pc_buffer *root, size_t first, size_t count);
/* Lock held, after a call found too few frames and gave back all it took: waits for frames
 * that come back without anything the caller holds (transfers in flight; pins of
 * VAST_PC_TRANSIENT calls, whose kernels need nothing of the page cache to end) and returns
 * 1, or returns 0 when none is coming. */
int pc_wait_frames_back(struct vast_pool *pool);
/* The argument check of a request for root pages [first, first+count) of buf, all resident
 * at once: VAST_PC_ERR_INVALID past the end, VAST_PC_ERR_NO_FRAMES when more than the pool (or,
 * one_chunk, one chunk) can hold, else VAST_PC_OK (count 0 included). */
int pc_check_request(const struct vast_pc_buffer *buf, size_t first, size_t count, bool one_chunk);
/* Resolves a byte range of buf to root bytes; VAST_PC_ERR_INVALID when past the end. */
int pc_root_range(const struct vast_pc_buffer *buf, size_t offset, size_t size, size_t *root_off);

static inline uint32_t pc_state(struct vast_pool *pool, uint32_t f)
{
    return atomic_load_explicit(&pool->frames[f].state, memory_order_acquire);
}

#endif
