/* copypool.c: see copypool.h. One job at a time, described under the pool mutex: the caller
 * posts it, workers and caller take parts (next++) until none is left, the caller sleeps until
 * every part is finished and only then clears the job; so no worker ever touches a job that is
 * over, and the job needs no generation counter. Parts are page multiples. A job is a memcpy
 * (period 0) or a periodic fill: byte i of dst gets src[i % period]. */
#include "copypool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "devops.h"

struct vast_copy_pool {
    unsigned threads;    /* the caller included */
    pthread_t *workers;  /* threads - 1 */
    pthread_mutex_t lock;
    pthread_cond_t work; /* a job was posted, or stop */
    pthread_cond_t done; /* a job's last part finished, or a job was cleared */
    int stop, active;
    /* the job (lock) */
    char *dst;
    const char *src;
    size_t bytes, part, period;
    unsigned nparts, next, finished;
    size_t min_part; /* set before use; read by the posting caller only */
};

/* dst[i] = src[(phase + i) % period] for i < len; phase < period. */
static void fill_periodic(char *dst, size_t len, const char *src, size_t period, size_t phase)
{
    while (len) {
        size_t n = period - phase < len ? period - phase : len;
        memcpy(dst, src + phase, n);
        dst += n;
        len -= n;
        phase = 0;
    }
}

/* Lock held: takes part i and copies it without the lock, then counts it. */
static void run_part(struct vast_copy_pool *p)
{
    unsigned i = p->next++;
    size_t off = (size_t)i * p->part;
    size_t len = p->bytes - off < p->part ? p->bytes - off : p->part;
    char *dst = p->dst + off;
    const char *src = p->src;
    size_t period = p->period;
    pthread_mutex_unlock(&p->lock);
    if (period)
        fill_periodic(dst, len, src, period, off % period);
    else
        memcpy(dst, src + off, len);
    pthread_mutex_lock(&p->lock);
    if (++p->finished == p->nparts)
        pthread_cond_broadcast(&p->done);
}

static void *worker_main(void *arg)
{
    struct vast_copy_pool *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->stop && !(p->active && p->next < p->nparts))
            pthread_cond_wait(&p->work, &p->lock);
        if (p->stop)
            break;
        run_part(p);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

static void stop_workers(struct vast_copy_pool *p, unsigned started)
{
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < started; i++)
        pthread_join(p->workers[i], NULL);
}

static void free_pool(struct vast_copy_pool *p)
{
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->lock);
    free(p->workers);
    free(p);
}

int pagecache_create_copy_pool(unsigned threads, struct vast_copy_pool **out)
{
    if (!out || threads == 0)
        return VAST_PC_ERR_INVALID;
    VAST_PC_NEW(struct vast_copy_pool, p);
    p->threads = threads;
    p->min_part = VAST_COPY_MIN_PART;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    p->workers = calloc(threads, sizeof *p->workers);
    unsigned started = 0;
    while (p->workers && started + 1 < threads &&
           pthread_create(&p->workers[started], NULL, worker_main, p) == 0)
        started++;
    if (!p->workers || started + 1 < threads) {
        stop_workers(p, started);
        free_pool(p);
        return VAST_PC_ERR_HOST_MEMORY;
    }
    *out = p;
    return VAST_PC_OK;
}

void pagecache_destroy_copy_pool(struct vast_copy_pool *p)
{
    if (!p)
        return;
    stop_workers(p, p->threads - 1);
    free_pool(p);
}

unsigned pagecache_copy_pool_threads(const struct vast_copy_pool *p) { return p->threads; }

void pagecache_copy_pool_set_min_part(struct vast_copy_pool *p, size_t bytes)
{
    p->min_part = bytes ? bytes : VAST_COPY_MIN_PART;
}

/* Parts: as many as threads, none shorter than min_part, page multiples. */
static void split(struct vast_copy_pool *p, size_t bytes)
{
    size_t n = bytes / p->min_part + (bytes % p->min_part != 0);
    if (n > p->threads)
        n = p->threads;
    size_t part = bytes / n + (bytes % n != 0);
    part = (part + 4095) & ~(size_t)4095;
    p->part = part;
    p->nparts = (unsigned)(bytes / part + (bytes % part != 0));
}

/* Posts one job and takes parts until every one is finished. */
static void run_job(struct vast_copy_pool *p, char *dst, const char *src, size_t bytes,
                    size_t period)
{
    pthread_mutex_lock(&p->lock);
    while (p->active)
        pthread_cond_wait(&p->done, &p->lock);
    p->active = 1;
    p->dst = dst;
    p->src = src;
    p->bytes = bytes;
    p->period = period;
    split(p, bytes);
    p->next = p->finished = 0;
    pthread_cond_broadcast(&p->work);
    while (p->next < p->nparts)
        run_part(p);
    while (p->finished < p->nparts)
        pthread_cond_wait(&p->done, &p->lock);
    p->active = 0;
    pthread_cond_broadcast(&p->done); /* a second caller may be waiting for the job */
    pthread_mutex_unlock(&p->lock);
}

void pagecache_copy_parallel(struct vast_copy_pool *p, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0)
        return;
    if (p->threads == 1 || bytes < 2 * p->min_part) {
        memcpy(dst, src, bytes);
        return;
    }
    run_job(p, dst, src, bytes, 0);
}

void pagecache_fill_parallel(struct vast_copy_pool *p, void *dst, size_t bytes, const void *block,
                             size_t block_bytes)
{
    if (bytes == 0 || block_bytes == 0)
        return;
    if (p->threads == 1 || bytes < 2 * p->min_part) {
        fill_periodic(dst, bytes, block, block_bytes, 0);
        return;
    }
    run_job(p, dst, block, bytes, block_bytes);
}
