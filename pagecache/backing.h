/* backing.h: the host backing store of one virtual buffer (root buffers only).
 * Either memory VAST maps itself (anonymous, page-aligned, committed lazily by the kernel on
 * first touch, so a huge buffer costs nothing until used) or the application's own pointer
 * (CL_MEM_USE_HOST_PTR, possibly an mmap'ed file: never read whole). Pinning is per granule
 * (pin_granule bytes), through devops->pin_host: by the process-wide background pinner, which
 * works through the stores queued at creation (pagecache_pin_backing_in_background) granule
 * by granule at low priority, a granule of each store in turn, never while a transfer pins
 * (the driver pins one granule at a time); or, for a store not queued, by the first transfer
 * touching it (pagecache_pin_backing). A transfer never waits for a pin: a granule being
 * pinned, or still on the worker's list, is unpinned to it, and the device stages it through
 * its pinned slots (about 20 GB/s against the driver's 11-13 GB/s of pinning: the first
 * launch no longer waits for the pins of everything it touches). Pinning VAST's own mapping
 * may commit it (NVIDIA's driver faults the pages in); nothing past the store's size is ever
 * pinned. A granule is pinned once. Thread-safe: the pin table has its own mutex (a leaf
 * lock, not held across pin_host); the worker's queue has another. */
#ifndef VAST_PAGECACHE_BACKING_H
#define VAST_PAGECACHE_BACKING_H

#include <stddef.h>
#include <stdint.h>
#include "devops.h"

struct vast_backing;

/* Host memory VAST may back in total by default: physical memory (sysconf). */
size_t pagecache_host_memory_bytes(void);

/* Allocate `size` bytes (zero-filled, lazily committed; from 2 MiB, THP-aligned and advised
 * MADV_HUGEPAGE, so commitment is then per huge page where the kernel grants one). Fails with VAST_PC_ERR_HOST_MEMORY
 * when size > limit (0: pagecache_host_memory_bytes()) or the kernel refuses the mapping. */
int pagecache_create_backing(size_t size, size_t limit, struct vast_backing **out);
/* The mapping behind a store of VAST's own, for other host memory of the page cache (the
 * staging ring): `bytes` of anonymous memory, from one huge page up THP-aligned and advised
 * MADV_HUGEPAGE (*huge = 1 when the advice took); MAP_FAILED if the kernel refuses; munmap frees it. */
void *pagecache_map_huge(size_t bytes, int *huge);
/* Use the application's memory [ptr, ptr+size) (not freed by VAST). */
int pagecache_wrap_backing(void *ptr, size_t size, struct vast_backing **out);
/* Takes the store off the background queue, waits for the granule the worker may be pinning
 * in it (at most one), then unpins (through the ops each pin was made with) and unmaps what
 * VAST owns. No transfer may be using the store. */
void pagecache_destroy_backing(struct vast_backing *b);

void *pagecache_backing_base(const struct vast_backing *b);
/* 1 when VAST mapped the store aligned to the transparent huge page size and the kernel
 * accepted madvise(MADV_HUGEPAGE) (stores of at least one huge page, usually 2 MiB). */
int pagecache_backing_huge(const struct vast_backing *b);
size_t pagecache_backing_size(const struct vast_backing *b);

/* Pin every granule overlapping [off, off+len) through ops/dev (no-op where ops has no
 * pin_host or a previous attempt failed, and for granules being pinned or left to the
 * background pinner). Returns the pin covering `off` (or NULL: the transfer goes unpinned or
 * staged): the value to pass as the `pin` argument of write/read. pin_granule is a power of
 * two. */
vast_host_pin pagecache_pin_backing(struct vast_backing *b, const struct vast_device_ops *ops,
                                    void *dev, size_t off, size_t len);
/* Queues b for pinning in the background through ops/dev (which binds the store to that
 * device, like a first pin) and returns at once; the worker (started on first use, stopped
 * at exit) pins its granules in order, skipping those a transfer pinned first, and gives up
 * the store's remaining granules at the first refused pin (memory pressure: the transfers
 * then pin or stage as before). Only once per store. VAST_PC_ERR_UNSUPPORTED where ops has no
 * pin_host/unpin_host or b is bound to another device; the caller decides whether to pin at
 * all (VAST_PIN). Destroy the store before the device context its pins were made through. */
int pagecache_pin_backing_in_background(struct vast_backing *b,
                                        const struct vast_device_ops *ops, void *dev);
/* b's granules not pinned yet stay unpinned: b leaves the background pinner's queue (or never
 * joins it) and every transfer stages those granules through the device's pinned slots. For
 * stores whose bytes cross the link once behind long kernels, where the driver's pins (which
 * hold its other calls) cost more than they save (interpose/launch.c). */
void pagecache_backing_stage_rest(struct vast_backing *b);
/* A launch begins (+1) or ends (-1): while any holds it, the background pinner starts no
 * granule (the one in hand ends first). */
void pagecache_hold_background_pins(int delta);
/* Blocks until the background pinner has nothing queued or in progress (tests, benches). */
void pagecache_wait_background_pins(void);
/* Granule size for pins (default 256 MiB); set before the first transfer or queueing. */
void pagecache_set_pin_granule(struct vast_backing *b, size_t bytes);
size_t pagecache_backing_pin_granule(struct vast_backing *b);
/* Number of granules currently pinned (tests, stats). */
size_t pagecache_backing_pinned_granules(struct vast_backing *b);

#endif
