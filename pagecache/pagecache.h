/* pagecache.h: the public API of VAST's device page cache, as the interpose layer uses it.
 * A pool (framepool.h) per real device holds frames; a virtual buffer (struct vast_pc_buffer)
 * is a host backing store (backing.h) plus a page table (pagetable.h) on one pool. Commands
 * make page ranges resident and pinned, mark them dirty, unpin; host-side commands keep the
 * backing store coherent through flush / host-write / invalidate. Knows nothing of OpenCL
 * objects: the device is reached through struct vast_device_ops (devops.h).
 * Page numbers are always pages of the ROOT buffer (a sub-buffer is a view: root + offset);
 * byte offsets are relative to the buffer passed. Rules and lock order: README.md. */
#ifndef VAST_PAGECACHE_H
#define VAST_PAGECACHE_H

#include <stddef.h>
#include <stdint.h>
#include "backing.h"
#include "devops.h"
#include "framepool.h"
#include "hostcopy.h"
#include "pagetable.h"

struct vast_pc_buffer;

/* Where a resident page lives on the device. */
struct vast_frame_loc {
    vast_dev_chunk chunk;
    size_t offset; /* byte offset of the frame in chunk */
    uint32_t frame;
};

/* ---- buffers ---- */
/* A root buffer over `backing` (not owned: destroy it after releasing every buffer on it). */
int pagecache_create_buffer(struct vast_pool *pool, struct vast_backing *backing,
                            struct vast_pc_buffer **out);
/* A view [offset, offset+size) of parent (a sub of a sub is flattened to the root). */
int pagecache_create_sub_buffer(struct vast_pc_buffer *parent, size_t offset, size_t size,
                                struct vast_pc_buffer **out);
/* Root: drops its frames (no write-back: the buffer is gone) and frees it; fails with
 * VAST_PC_ERR_PINNED (nothing freed) while a page is pinned. Sub: frees the view. */
int pagecache_release_buffer(struct vast_pc_buffer *buf);
size_t pagecache_buffer_size(const struct vast_pc_buffer *buf);
/* Host address of byte 0 of buf in the backing store (what Map returns, plus offset). */
void *pagecache_buffer_host(const struct vast_pc_buffer *buf);
/* Root pages [*first, *first + *count) covering bytes [offset, offset+size) of buf. */
int pagecache_page_range(const struct vast_pc_buffer *buf, size_t offset, size_t size,
                         size_t *first, size_t *count);

/* ---- residency (device side: launches) ---- */
#define VAST_PC_PIN 1u /* keep the pages pinned until pagecache_unpin_range */

/* Makes root pages [first, first+count) resident, loading missing ones in runs (contiguous
 * frames for contiguous pages where possible; dirty victims written back first). locs (may be
 * NULL) receives count locations. Without VAST_PC_PIN the pages may be evicted as soon as it
 * returns (prefetch). All or nothing: on error no page of the call stays pinned.
 * VAST_PC_ERR_NO_FRAMES when the pinned pages leave too few frames (frames in I/O for other
 * calls are waited for). */
int pagecache_make_resident(struct vast_pc_buffer *buf, size_t first, size_t count,
                            unsigned flags, struct vast_frame_loc *locs);
/* ---- overdraft (overdraft.c, README.md "Overdraft") ---- */
/* Lends `frames` frames past the budget (pool->overdraft at most; VAST_PC_ERR_NO_FRAMES past
 * it): grants and the clock then see nframes + frames. A larger loan grows the one lent; one
 * loan at a time per pool (interpose: the launch that runs). */
int pagecache_overdraft_begin(struct vast_pool *pool, size_t frames);
/* Ends the loan: the pages in lent frames leave (dirty ones written back and waited for), the
 * frames go back to the device (ops->discard) and the pool is its budget again. Waits for
 * transfers in flight there; VAST_PC_ERR_PINNED (nothing changed) while a lent frame is
 * pinned; VAST_PC_ERR_TRANSFER when a write-back failed (every page stays, so does the loan). */
int pagecache_overdraft_end(struct vast_pool *pool);

#define VAST_PC_PACK 2u /* make_contiguous: the lowest window that can be taken, not the cheapest */

/* Makes root pages [first, first+count) resident as ONE run of adjacent frames of one chunk,
 * in page order (what a kernel on a real sub-buffer needs; compact.c). Pages already in such
 * a run stay; otherwise the cheapest window of frames is taken (none pinned or in I/O except
 * the range's own pages in place): the pages in the way are evicted (dirty ones written back
 * first) and the range's pages elsewhere move in through the host. VAST_PC_PIN and locs as
 * for make_resident; all or nothing. VAST_PC_ERR_NO_FRAMES when no window can be taken (pins
 * of commands in flight, or count exceeds a chunk). Several buffers: call it largest first,
 * and with VAST_PC_PACK again, after unpinning, where one found no window. */
int pagecache_make_contiguous(struct vast_pc_buffer *buf, size_t first, size_t count,
                              unsigned flags, struct vast_frame_loc *locs);
/* make_resident: pin the range only if every page is resident already (no transfer, no
 * eviction); else VAST_PC_ERR_NOT_RESIDENT and nothing pinned. */
#define VAST_PC_RESIDENT_ONLY 4u
/* make_resident with VAST_PC_PIN: the pins belong to a kernel already on the device that
 * ends without anything else of VAST (a direct launch on the application's queue, waiting
 * for no command VAST runs); they are given back with pagecache_unpin_transient. Calls short
 * of frames wait for them as for transfers in flight, after calling the pool's reclaim hook
 * (pagecache_set_reclaim) where one is set. */
#define VAST_PC_TRANSIENT 8u
/* The hook a call short of frames calls, without the pool lock, while transient pins are out:
 * it gives back (pagecache_unpin_transient) the pins of kernels that ended, waiting for them
 * (the pins' owner sees their end lazily; interpose/onqueue.h). Set once, before such pins. */
void pagecache_set_reclaim(struct vast_pool *pool, void (*fn)(void *arg), void *arg);
/* make_resident with VAST_PC_PIN: missing pages get frames without a load (dirty victims are
 * still written back first), for a kernel that overwrites every byte of them. Until
 * pagecache_mark_dirty their frames hold no page's bytes: pinned, never read back, and dropped
 * (no write-back) when their last pin goes without mark_dirty (a run that failed). README
 * "Pages a kernel overwrites". */
#define VAST_PC_NO_LOAD 16u
/* Drops one pin per page (pages must be pinned). Lock-free. */
void pagecache_unpin_range(struct vast_pc_buffer *buf, size_t first, size_t count);
/* pagecache_unpin_range of pins taken with VAST_PC_TRANSIENT; wakes calls waiting for frames. */
void pagecache_unpin_transient(struct vast_pc_buffer *buf, size_t first, size_t count);
/* A command wrote these pinned pages on the device: they are dirty (newer than the host). */
int pagecache_mark_dirty(struct vast_pc_buffer *buf, size_t first, size_t count);

/* ---- coherence (host side: Read/Write/Copy/Fill/Map/Unmap and Rect variants) ---- */
/* Dirty resident pages overlapping the range are written back (they stay resident, clean).
 * After it returns the backing store holds the newest bytes of the range. */
int pagecache_flush_range(struct vast_pc_buffer *buf, size_t offset, size_t size);

/* Host writes: begin, write into pagecache_buffer_host(buf) + offset, end. Between the two,
 * resident pages of the range cannot be written back (they are pinned) and pages wholly
 * covered and unpinned are dropped (their bytes are all about to be replaced); end uploads
 * the written bytes into the pages still resident ("update") and bumps their versions. */
struct vast_host_write;
int pagecache_begin_host_write(struct vast_pc_buffer *buf, size_t offset, size_t size,
                               struct vast_host_write **token);
int pagecache_end_host_write(struct vast_host_write *token);

#define VAST_PC_DISCARD 1u /* pages wholly inside the range are dropped without write-back */
/* Resident pages overlapping the range leave the device (dirty ones written back first unless
 * VAST_PC_DISCARD and wholly covered). Pinned pages stay: VAST_PC_ERR_PINNED. */
int pagecache_invalidate_range(struct vast_pc_buffer *buf, size_t offset, size_t size,
                               unsigned flags);

/* Conveniences built on the above: the whole host-side command. */
int pagecache_read(struct vast_pc_buffer *buf, size_t offset, size_t size, void *dst);
int pagecache_write(struct vast_pc_buffer *buf, size_t offset, size_t size, const void *src);
int pagecache_fill(struct vast_pc_buffer *buf, size_t offset, size_t size, const void *pattern,
                   size_t pattern_size);
int pagecache_copy(struct vast_pc_buffer *dst, size_t dst_offset, struct vast_pc_buffer *src,
                   size_t src_offset, size_t size);
/* Map: flushes the range; for writing (write != 0) also drops resident copies (discard:
 * CL_MAP_WRITE_INVALIDATE_REGION, no write-back of wholly covered pages). Returns the host
 * pointer (no copy). Unmap after a write mapping refreshes pages that became resident. */
int pagecache_map(struct vast_pc_buffer *buf, size_t offset, size_t size, int write,
                  int discard, void **ptr);
int pagecache_unmap(struct vast_pc_buffer *buf, size_t offset, size_t size, int write);

/* ---- several pools over one backing store (peers.c; README.md "Several devices") ---- */
/* Joins n root buffers over the same backing store, each on its own pool, before any of them
 * is used: their pages are loaded from per-frame twins and written back by merging the bytes
 * that differ from the twin (never a whole page over another pool's bytes), and the group
 * keeps per-granule versions of the host's bytes. n < 2: nothing to do. */
int pagecache_share_backing(struct vast_pc_buffer *const *roots, size_t n);
/* Drops the copies of the range on buf's pool that are older than the host's bytes (a
 * host write or another pool's write-back since they were loaded); their own dirty bytes are
 * merged into the host first. Nothing to do for a buffer in no group. VAST_PC_ERR_PINNED when
 * a stale page is pinned (it stays). */
int pagecache_refresh_range(struct vast_pc_buffer *buf, size_t offset, size_t size);
/* Owned pages (README.md "Several devices", "Owned pages"): buf's group promises that between
 * two write-backs a page is written by at most one pool, except the pages marked with
 * pagecache_want_twins; then only those are loaded through a twin and merged, the others load
 * from the host store and write back whole. Set once, before the group's pages are used by
 * more than one pool; nothing to do for a buffer in no group. */
int pagecache_own_pages(struct vast_pc_buffer *buf);
/* Root pages [first, first+count) of buf's root want a twin where want[i] (want NULL: all)
 * and want none elsewhere, from their next load on; a resident copy that wants one and lacks
 * it counts as stale (pagecache_refresh_range drops it). */
int pagecache_want_twins(struct vast_pc_buffer *buf, size_t first, size_t count, const uint8_t *want);

/* Version of a root page (bumped by device writes and host writes). */
uint32_t pagecache_page_version(const struct vast_pc_buffer *buf, size_t page);
/* Resident frame of a root page, VAST_PT_NO_FRAME if none (racy unless pinned). */
uint32_t pagecache_page_frame(const struct vast_pc_buffer *buf, size_t page);
/* How many of root pages [first, first+count) have a frame now (a hint for ordering work: it
 * may change as soon as the pool lock is dropped). */
size_t pagecache_resident_pages(const struct vast_pc_buffer *buf, size_t first, size_t count);
int pagecache_page_is_dirty(const struct vast_pc_buffer *buf, size_t page);
/* Bytes loaded into buf's root's pages (loads and host-write updates of resident pages) and
 * bytes of its pages given frames without a load (VAST_PC_NO_LOAD), since it was made. */
void pagecache_buffer_traffic(const struct vast_pc_buffer *buf, uint64_t *h2d_bytes, uint64_t *noload_bytes);
/* Of buf's root's loaded bytes, those loaded through a twin (a buffer shared by pools). */
uint64_t pagecache_buffer_twin_bytes(const struct vast_pc_buffer *buf);

/* The invariants of README.md, checked (check.c): NULL when they hold, else what is wrong
 * (a thread's own buffer, valid until its next call). Takes the pool lock; any time is fine,
 * frames in I/O for a call in flight are held to what holds during I/O. Costs a visit of
 * every frame and every page of every buffer: for tests, after every step. */
const char *pagecache_check(struct vast_pool *pool);

#endif
