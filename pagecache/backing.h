/* backing.h: the host backing store of one virtual buffer (root buffers only).
 * Either memory VAST maps itself (anonymous, page-aligned, committed lazily by the kernel on
 * first touch, so a huge buffer costs nothing until used) or the application's own pointer
 * (CL_MEM_USE_HOST_PTR, possibly an mmap'ed file: never read whole). Pinning is lazy and per
 * granule (pin_granule bytes): a granule is wrapped by devops->pin_host the first time a
 * transfer touches it, so pinning never commits or reads the whole store up front.
 * Thread-safe: the pin table has its own mutex (a leaf lock). */
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
/* Use the application's memory [ptr, ptr+size) (not freed by VAST). */
int pagecache_wrap_backing(void *ptr, size_t size, struct vast_backing **out);
/* Unpins (through the ops each pin was made with) and unmaps what VAST owns. */
void pagecache_destroy_backing(struct vast_backing *b);

void *pagecache_backing_base(const struct vast_backing *b);
/* 1 when VAST mapped the store aligned to the transparent huge page size and the kernel
 * accepted madvise(MADV_HUGEPAGE) (stores of at least one huge page, usually 2 MiB). */
int pagecache_backing_huge(const struct vast_backing *b);
size_t pagecache_backing_size(const struct vast_backing *b);

/* Pin every granule overlapping [off, off+len) through ops/dev (no-op where ops has no
 * pin_host or a previous attempt failed). Returns the pin covering `off` (or NULL): the
 * value to pass as the `pin` argument of write/read. pin_granule is a power of two. */
vast_host_pin pagecache_pin_backing(struct vast_backing *b, const struct vast_device_ops *ops,
                                    void *dev, size_t off, size_t len);
/* Granule size for lazy pins (default 256 MiB); set before the first transfer. */
void pagecache_set_pin_granule(struct vast_backing *b, size_t bytes);
size_t pagecache_backing_pin_granule(struct vast_backing *b);
/* Number of granules currently pinned (tests, stats). */
size_t pagecache_backing_pinned_granules(struct vast_backing *b);

#endif
