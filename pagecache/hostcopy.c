/* hostcopy.c: see hostcopy.h. The pool pointer is published with release order once made
 * (under hc_lock) and read with acquire order; a failure to make it is final until shutdown
 * (copies then run in the caller, still correct). */
#include "hostcopy.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "copypool.h"
#include "devops.h"
#include "staging.h"

/* A fill first writes one block of whole patterns by doubling, then replicates the block. */
#define FILL_BLOCK ((size_t)64 << 10)

static pthread_mutex_t hc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vast_host_copy_config hc_cfg;     /* hc_lock; resolved when the pool is made */
static _Atomic(struct vast_copy_pool *) hc_pool; /* set under hc_lock */
static _Atomic size_t hc_parallel_min = VAST_HOST_COPY_PARALLEL_MIN;
static int hc_broken;                           /* hc_lock */
static _Atomic uint64_t st_parallel, st_parallel_bytes, st_plain, st_plain_bytes;

int pagecache_configure_host_copy(const struct vast_host_copy_config *cfg)
{
    pthread_mutex_lock(&hc_lock);
    int rc = VAST_PC_OK;
    if (atomic_load(&hc_pool))
        rc = VAST_PC_ERR_INVALID;
    else {
        hc_cfg = cfg ? *cfg : (struct vast_host_copy_config){0};
        atomic_store(&hc_parallel_min,
                     hc_cfg.parallel_min ? hc_cfg.parallel_min : VAST_HOST_COPY_PARALLEL_MIN);
        hc_broken = 0;
    }
    pthread_mutex_unlock(&hc_lock);
    return rc;
}

void pagecache_host_copy_shutdown(void)
{
    pthread_mutex_lock(&hc_lock);
    struct vast_copy_pool *p = atomic_exchange(&hc_pool, NULL);
    hc_broken = 0;
    pthread_mutex_unlock(&hc_lock);
    pagecache_destroy_copy_pool(p);
}

/* The pool for a copy of `bytes`, or NULL: small copy, one thread, or no pool to be had. */
static struct vast_copy_pool *pool_for(size_t bytes)
{
    if (bytes < atomic_load_explicit(&hc_parallel_min, memory_order_relaxed))
        return NULL;
    struct vast_copy_pool *p = atomic_load_explicit(&hc_pool, memory_order_acquire);
    if (p)
        return p;
    pthread_mutex_lock(&hc_lock);
    p = atomic_load(&hc_pool);
    if (!p && !hc_broken) {
        unsigned threads = hc_cfg.threads ? hc_cfg.threads : pagecache_staging_default_threads();
        if (threads > VAST_STAGING_MAX_THREADS)
            threads = VAST_STAGING_MAX_THREADS;
        if (threads > 1 && pagecache_create_copy_pool(threads, &p) == VAST_PC_OK) {
            pagecache_copy_pool_set_min_part(p, hc_cfg.min_part);
            atomic_store_explicit(&hc_pool, p, memory_order_release);
        } else {
            p = NULL;
            hc_broken = 1; /* one thread asked for, or threads refused: copy in the caller */
        }
    }
    pthread_mutex_unlock(&hc_lock);
    return p;
}

static void count(struct vast_copy_pool *p, size_t bytes)
{
    atomic_fetch_add_explicit(p ? &st_parallel : &st_plain, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(p ? &st_parallel_bytes : &st_plain_bytes, bytes,
                              memory_order_relaxed);
}

void pagecache_host_copy(void *dst, const void *src, size_t bytes)
{
    if (bytes == 0 || dst == src)
        return;
    const char *d = dst, *s = src;
    int overlap = d < s + bytes && s < d + bytes;
    struct vast_copy_pool *p = overlap ? NULL : pool_for(bytes);
    if (p)
        pagecache_copy_parallel(p, dst, src, bytes);
    else if (overlap)
        memmove(dst, src, bytes);
    else
        memcpy(dst, src, bytes);
    count(p, bytes);
}

void pagecache_host_fill(void *dst, size_t bytes, const void *pattern, size_t pattern_bytes)
{
    if (bytes == 0 || pattern_bytes == 0)
        return;
    char *d = dst;
    /* The block: whole patterns, about FILL_BLOCK bytes, written by doubling copies. */
    size_t block = pattern_bytes >= FILL_BLOCK ? pattern_bytes
                                               : FILL_BLOCK / pattern_bytes * pattern_bytes;
    if (block > bytes)
        block = bytes;
    size_t first = pattern_bytes < block ? pattern_bytes : block;
    memcpy(d, pattern, first);
    for (size_t done = first; done < block;) {
        size_t n = done < block - done ? done : block - done;
        memcpy(d + done, d, n);
        done += n;
    }
    /* The rest repeats the block (block is a multiple of the pattern unless it is all). */
    struct vast_copy_pool *p = pool_for(bytes);
    if (bytes > block) {
        if (p)
            pagecache_fill_parallel(p, d + block, bytes - block, d, block);
        else
            for (size_t done = block; done < bytes;) { /* doubling, as before */
                size_t n = done < bytes - done ? done : bytes - done;
                memcpy(d + done, d, n);
                done += n;
            }
    }
    count(p, bytes);
}

void pagecache_get_host_copy_stats(struct vast_host_copy_stats *out)
{
    out->parallel = atomic_load(&st_parallel);
    out->parallel_bytes = atomic_load(&st_parallel_bytes);
    out->plain = atomic_load(&st_plain);
    out->plain_bytes = atomic_load(&st_plain_bytes);
    struct vast_copy_pool *p = atomic_load(&hc_pool);
    out->threads = p ? pagecache_copy_pool_threads(p) : 0;
}
