/* copypool.h: a small persistent pool of host threads that runs one memcpy at a time split
 * into parts (FACTS.md: one thread copies pageable -> pinned at ~10 GB/s, four at ~34 GB/s).
 * The caller copies a part too, so a pool of N threads starts N-1 workers; with N = 1 it is a
 * plain memcpy and starts nothing. Used by staging.c; thread-safe (a second caller waits for
 * the running copy to finish). */
#ifndef VAST_PAGECACHE_COPYPOOL_H
#define VAST_PAGECACHE_COPYPOOL_H

#include <stddef.h>

struct vast_copy_pool;

/* Parts are at least this long by default: below it a thread costs more than it saves. */
#define VAST_COPY_MIN_PART ((size_t)64 << 10)

/* threads >= 1. VAST_PC_ERR_HOST_MEMORY when a thread cannot be started (none is left). */
int pagecache_create_copy_pool(unsigned threads, struct vast_copy_pool **out);
/* Joins the workers. No copy may be running. */
void pagecache_destroy_copy_pool(struct vast_copy_pool *p);
unsigned pagecache_copy_pool_threads(const struct vast_copy_pool *p);
/* Shortest part (0: VAST_COPY_MIN_PART; rounded up to 4 KiB when split). Set before the pool is
 * shared (tests use small parts to run small copies in parallel). */
void pagecache_copy_pool_set_min_part(struct vast_copy_pool *p, size_t bytes);
/* memcpy(dst, src, bytes) over up to `threads` threads; returns when every byte is copied.
 * The ranges must not overlap. */
void pagecache_copy_parallel(struct vast_copy_pool *p, void *dst, const void *src, size_t bytes);
/* Periodic fill: byte i of dst gets block[i % block_bytes], over up to `threads` threads. The
 * block must not overlap [dst, dst + bytes); keep it small (a few KiB to stay in cache). */
void pagecache_fill_parallel(struct vast_copy_pool *p, void *dst, size_t bytes, const void *block,
                             size_t block_bytes);

#endif
