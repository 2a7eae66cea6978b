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
    /* Root only, set once before the buffer is used: the roots over the same backing store
     * on other pools (peers.c), and per page the group clock its copy reflects. */
    struct vast_pc_group *group;
    _Atomic uint32_t *seen;
    /* Root only, grouped: per page, PC_TWIN_WANT (loads go through a twin; set by the
     * interpose layer, pagecache_want_twins, on a group of owned pages) and PC_TWIN_HAS (the
     * resident copy was loaded through its frame's twin). */
    _Atomic uint8_t *twin;
    /* Root only: bytes loaded into its pages, and given frames without a load, and of the
     * loaded bytes those that went through a twin (statistics). */
    _Atomic uint64_t h2d_bytes, noload_bytes, twin_bytes;
};

/* Root buffers over one backing store on several pools (peers.c; README.md "Several
 * devices"). version[g]: the group clock when bytes of granule g last reached the host. */
struct vast_pc_group {
    pthread_mutex_t lock; /* leaf: merges into the host, twin copies, clock and seen updates */
    unsigned shift;       /* granule: the smallest page of the members */
    size_t ngranules;
    _Atomic uint32_t *version;
    _Atomic uint32_t clock;
    _Atomic size_t members; /* roots not yet released; the last frees the group */
    /* Owned pages (pagecache_own_pages): a page's twin only where PC_TWIN_WANT is set; else
     * every load goes through a twin and every write-back merges. */
    _Atomic bool owned;
};

enum { PC_TWIN_WANT = 1, PC_TWIN_HAS = 2 };

struct pc_io;
struct pc_lane;
struct pc_landing;
/* peers.c: transfers of a grouped root's pages (loads from the twin, write-backs merged
 * against it); called by residency.c's transfer() without the pool lock. */
int pc_group_transfer(struct vast_pool *pool, struct vast_pc_buffer *root, uint32_t frame,
                      size_t dev_off, size_t start, size_t len, struct pc_lane *lane);
/* Pool lock held: whether the copy of root page `page` is older than the host's bytes, or
 * lacks the twin its page now wants (either way refresh drops it). */
bool pc_group_stale(const struct vast_pc_buffer *root, size_t page);
/* residency.c: one transfer of root bytes [start, start+len) between the host store (pinned
 * where the backing is) and the frame, in the lane's direction, as for a buffer in no group. */
int pc_plain_transfer(struct vast_pool *pool, struct vast_pc_buffer *root, uint32_t frame,
                      size_t dev_off, size_t start, size_t len, struct pc_lane *lane);
/* Whether pages [first, first+count) of a grouped root may be given frames without a load
 * (VAST_PC_NO_LOAD): an owned group and none of them wants a twin, so each goes back whole
 * (a twin's merge would compare the kernel's bytes with what the load did not put there). */
bool pc_group_untwinned(const struct vast_pc_buffer *root, size_t first, size_t count);
/* Root pages[0..n) were given frames without a load (no pool lock): each copy is current as
 * of now, as an owned load's would be, and has no twin. */
void pc_group_granted(struct vast_pc_buffer *root, const size_t *pages, size_t n);
/* end_host_write of a grouped root: the host bytes [lo, hi) changed; copies of `pinned`
 * (updated with them) stay current. */
void pc_group_host_written(struct vast_pc_buffer *root, size_t lo, size_t hi,
                           const struct pc_io *pinned, size_t npinned);
/* An owned write-back has reached the host store: its bytes are published to the group
 * (called without the pool lock, by whoever waits for its transfer). */
void pc_group_owned_landed(struct vast_pool *pool, const struct pc_landing *l);
/* release of a grouped root: leaves the group (the last member frees it). */
void pc_group_leave(struct vast_pc_buffer *root);

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
/* An owned write-back of a grouped root in flight on an unordered lane: published to the
 * group (peers.c) once its ticket reports the bytes on the host. */
struct pc_landing {
    struct vast_pc_buffer *root; /* NULL: the ticket is a plain write-back */
    size_t start, len;
};
struct pc_lane {
    enum pc_dir dir;
    size_t bytes;            /* issued so far */
    void **tickets;          /* PC_WRITE_BACK_UNORDERED: one per transfer not yet complete */
    struct pc_landing *landing; /* per ticket */
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
