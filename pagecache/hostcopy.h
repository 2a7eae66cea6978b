/* hostcopy.h: the bulk host-side copies of Read/Write/Copy/Fill on virtual buffers (between
 * the application's memory and backing stores, or between two stores), split over one copy
 * pool per process (copypool.h) when they are large. FACTS.md: one thread copies pageable
 * memory at ~10 GB/s, four at ~34 GB/s; on a freshly mapped store the threads also take the
 * first-touch page faults in parallel. Only the memcpy is parallel: the coherence protocol
 * around it (flush before a read, begin/end host write) is the caller's, unchanged.
 * The pool is made on the first large copy and lives until pagecache_host_copy_shutdown (or
 * the process's end). Copies of concurrent callers share it: a second large copy waits for
 * the running one (the memory bandwidth is shared anyway). No page-cache lock is held while
 * copying, and the pool's lock is a leaf. Thread-safe. */
#ifndef VAST_PAGECACHE_HOSTCOPY_H
#define VAST_PAGECACHE_HOSTCOPY_H

#include <stddef.h>
#include <stdint.h>

/* Copies of at least this many bytes go through the pool by default. A read into memory the
 * application has not touched yet copies at about 2 GB/s on one thread (its page faults): on an
 * H200's host, forced paged NBody's two 2 MiB reads took 1.0 ms of copying each from 4 MiB
 * and 0.3-0.4 ms from 1 MiB, the sample 0.94 -> 1.02 of native
 * (samples/results/h200x2-2026-11-30-multigpu/, t3; 256 KiB gave no more). */
#define VAST_HOST_COPY_PARALLEL_MIN ((size_t)1 << 20)

/* Zero in a field means its default. */
struct vast_host_copy_config {
    unsigned threads;    /* the caller included (default pagecache_staging_default_threads(),
                          * min(16, cores), the same as VAST_STAGING_THREADS' default) */
    size_t parallel_min; /* smaller copies are one plain memcpy (default 1 MiB) */
    size_t min_part;     /* shortest part per thread (default VAST_COPY_MIN_PART, 64 KiB) */
};

/* Sets the configuration used when the pool is made (the interpose layer passes
 * VAST_STAGING_THREADS). VAST_PC_ERR_INVALID once the pool exists (shut it down first). */
int pagecache_configure_host_copy(const struct vast_host_copy_config *cfg);
/* Joins the pool's threads; the next large copy makes a new pool. No copy may be running. */
void pagecache_host_copy_shutdown(void);

/* memcpy (memmove where the ranges overlap, done in the caller). */
void pagecache_host_copy(void *dst, const void *src, size_t bytes);
/* dst[i] = pattern[i % pattern_bytes] for i < bytes; bytes % pattern_bytes == 0 is not needed. */
void pagecache_host_fill(void *dst, size_t bytes, const void *pattern, size_t pattern_bytes);

struct vast_host_copy_stats {
    uint64_t parallel, parallel_bytes; /* copies and fills that went through the pool */
    uint64_t plain, plain_bytes;       /* done by the caller alone */
    unsigned threads;                  /* of the pool, 0 before it is made */
};
void pagecache_get_host_copy_stats(struct vast_host_copy_stats *out);

#endif
