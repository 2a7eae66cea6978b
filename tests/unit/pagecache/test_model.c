/* test_model.c: randomised model tests of the page cache against a shadow copy.
 * One thread: random host writes/reads/fills/copies, "kernel" writes into pinned frames,
 * invalidations, discards and flushes over a buffer 8x the pool (forcing constant eviction);
 * every read is compared with the shadow, and at the end the whole store. Then 8 threads
 * share one pool (and one buffer, in disjoint page ranges, plus a private buffer each).
 * Both run again with the device refusing to pin, so every transfer is staged through a ring
 * of one-page slots with two copy threads (staging.h; the fake's slot transfers are deferred).
 * And both run with every host-side copy split over a shared pool of three copy threads in
 * one-page parts (hostcopy.h), so the 16 threads also contend for that pool. And both run
 * duplex: write-backs on the fake's unordered lane in windows of two pages, every transfer
 * deferred and the two lanes run in a hostile order (fake_device.h), direct and staged.
 * After every step pagecache_check verifies the pool's invariants (README.md), in the
 * threaded runs while the other threads' calls are in flight.
 * Seeds are fixed (VAST_TEST_SEED overrides) and printed; outputs are poisoned first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_device.h"
#include "pagecache.h"
#include "vast_cmocka.h"

#define PG 4096u

static unsigned seed_base(void)
{
    const char *s = getenv("VAST_TEST_SEED");
    return s ? (unsigned)strtoul(s, NULL, 0) : 12345u;
}

static uint32_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

struct model {
    struct vast_pool *pool;
    struct vast_pc_buffer *buf;
    unsigned char *shadow; /* what the buffer must contain, region [lo, lo + len) */
    size_t lo, len;        /* bytes of buf this model owns */
    uint64_t rng;
    unsigned char *tmp;
    int errors;
};

/* cmocka's asserts must not run off the main thread: the ops count failures instead. */
#define CHECK(m, cond)                                                                       \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);         \
            (m)->errors++;                                                                   \
        }                                                                                    \
    } while (0)

static void rand_range(struct model *m, size_t max, size_t *off, size_t *n)
{
    *n = 1 + rnd(&m->rng) % max;
    if (*n > m->len)
        *n = m->len;
    *off = m->lo + rnd(&m->rng) % (m->len - *n + 1);
}

/* The model's shadow starts at zero; a new store's bytes are undefined (a store released
 * earlier in the process may be given again: backing.c), so the store starts so too. */
static void zero_store(struct vast_backing *b, size_t size) { memset(pagecache_backing_base(b), 0, size); }

static void op_host_write(struct model *m)
{
    size_t off, n;
    rand_range(m, 5 * PG, &off, &n);
    for (size_t i = 0; i < n; i++)
        m->tmp[i] = (unsigned char)rnd(&m->rng);
    CHECK(m, (pagecache_write(m->buf, off, n, m->tmp)) == 0);
    memcpy(m->shadow + off - m->lo, m->tmp, n);
}

static void op_host_read(struct model *m)
{
    size_t off, n;
    rand_range(m, 5 * PG, &off, &n);
    memset(m->tmp, 0xEE, n);
    CHECK(m, (pagecache_read(m->buf, off, n, m->tmp)) == 0);
    CHECK(m, memcmp(m->tmp, m->shadow + off - m->lo, n) == 0);
}

/* A "kernel" writes random bytes into some resident pinned pages of the model's range. */
static void op_device_write(struct model *m, size_t max_pages)
{
    size_t off, n, first, count;
    rand_range(m, max_pages * PG, &off, &n);
    CHECK(m, (pagecache_page_range(m->buf, off, n, &first, &count)) == 0);
    struct vast_frame_loc locs[16];
    CHECK(m, count <= 16);
    if (count > 16)
        return;
    int rc = pagecache_make_resident(m->buf, first, count, VAST_PC_PIN, locs);
    CHECK(m, rc == 0);
    if (rc)
        fprintf(stderr, "make_resident: %s\n", pagecache_status_string(rc));
    if (rc)
        return;
    unsigned char v = (unsigned char)rnd(&m->rng);
    for (size_t b = off; b < off + n; b++) {
        size_t p = b / PG - first;
        fake_chunk_mem(locs[p].chunk)[locs[p].offset + b % PG] = (unsigned char)(v + b);
        m->shadow[b - m->lo] = (unsigned char)(v + b);
    }
    CHECK(m, (pagecache_mark_dirty(m->buf, first, count)) == 0);
    pagecache_unpin_range(m->buf, first, count);
}

static void op_fill(struct model *m)
{
    size_t psz = 1u << (rnd(&m->rng) % 8), off, n; /* 1..128 */
    rand_range(m, 3 * PG, &off, &n);
    n -= n % psz;
    if (n == 0)
        return;
    unsigned char pat[128];
    for (size_t i = 0; i < psz; i++)
        pat[i] = (unsigned char)rnd(&m->rng);
    CHECK(m, (pagecache_fill(m->buf, off, n, pat, psz)) == 0);
    for (size_t i = 0; i < n; i++)
        m->shadow[off - m->lo + i] = pat[i % psz];
}

static void op_copy(struct model *m)
{
    size_t n = 1 + rnd(&m->rng) % (2 * PG);
    if (2 * n > m->len)
        return;
    size_t a = m->lo + rnd(&m->rng) % (m->len - 2 * n + 1);
    size_t b = a + n + rnd(&m->rng) % (m->len - (a - m->lo) - 2 * n + 1);
    if (rnd(&m->rng) & 1) { size_t t = a; a = b; b = t; }
    CHECK(m, (pagecache_copy(m->buf, b, m->buf, a, n)) == 0);
    memmove(m->shadow + b - m->lo, m->shadow + a - m->lo, n);
}

static void op_invalidate(struct model *m, int discard)
{
    size_t off, n;
    rand_range(m, 6 * PG, &off, &n);
    int rc = pagecache_invalidate_range(m->buf, off, n, discard ? VAST_PC_DISCARD : 0);
    CHECK(m, (rc) == 0);
    if (discard) { /* wholly covered pages lose their device data: the host bytes remain */
        size_t first = (off + PG - 1) / PG * PG, last = (off + n) / PG * PG;
        for (size_t p = first; p + PG <= last; p += PG)
            memcpy(m->shadow + p - m->lo, (char *)pagecache_buffer_host(m->buf) + p, PG);
    }
}

static void run_model(struct model *m, int steps, int allow_discard, size_t dev_pages)
{
    for (int i = 0; i < steps; i++) {
        switch (rnd(&m->rng) % 10) {
        case 0: case 1: op_host_write(m); break;
        case 2: case 3: op_host_read(m); break;
        case 4: case 5: case 6: op_device_write(m, dev_pages); break;
        case 7: op_fill(m); break;
        case 8: op_copy(m); break;
        default:
            if (rnd(&m->rng) & 1)
                op_invalidate(m, allow_discard && (rnd(&m->rng) % 4 == 0));
            else
                CHECK(m, (pagecache_flush_range(m->buf, m->lo, m->len)) == 0);
        }
        const char *bad = pagecache_check(m->pool);
        CHECK(m, bad == NULL);
        if (bad)
            fprintf(stderr, "step %d: pagecache_check: %s\n", i, bad);
    }
}

#define SIMPLEX (-1) /* a synchronous device without read_unordered */

/* staged: no pin, every transfer through one-page slots (multi-page runs use several).
 * order: SIMPLEX, or the hostile order of the duplex lanes. Returns the ops for the pool. */
static const struct vast_device_ops *device_init(struct fake_device *dev, int staged, int order,
                                                 unsigned seed)
{
    fake_device_init(dev);
    struct vast_staging_config cfg = {.slot_bytes = PG, .threads = 2, .direct_below = 1};
    if (staged)
        assert_int_equal(fake_device_enable_staging(dev, &cfg), 0);
    if (order == SIMPLEX)
        return &fake_device_ops;
    printf("duplex, lanes %s\n", fake_order_name((enum fake_order)order));
    assert_int_equal(fake_device_enable_lanes(dev, (enum fake_order)order, seed), 0);
    return fake_duplex_ops();
}

/* Pools of duplex devices write back in windows of two pages. */
static void pool_init(struct vast_pool *pool, int order)
{
    if (order != SIMPLEX)
        pagecache_configure_duplex(pool, 2 * PG);
}

static void device_fini(struct fake_device *dev, int staged)
{
    if (dev->lanes)
        assert_int_equal(fake_lanes_pending(dev), 0);
    if (staged) {
        struct vast_staging_stats st;
        pagecache_get_staging_stats(dev->staging, &st);
        printf("staged: %llu transfers in %llu slot transfers, %llu failed\n",
               (unsigned long long)st.transfers, (unsigned long long)st.slot_transfers,
               (unsigned long long)st.failures);
        assert_true(st.transfers > 100);
        assert_int_equal(st.failures, 0);
        assert_int_equal(dev->writes + dev->reads, 0); /* nothing went direct */
        assert_int_equal(dev->pins, 0);
    }
    fake_device_fini(dev);
}

static void run_model_single(int staged, int order)
{
    unsigned seed = seed_base();
    printf("seed %u\n", seed);
    struct fake_device dev;
    const struct vast_device_ops *ops = device_init(&dev, staged, order, seed);
    struct vast_pool *pool;
    struct vast_backing *store;
    size_t size = 64 * PG - 123; /* 8x the pool, last page partial */
    assert_int_equal(pagecache_create_pool(ops, &dev, 8 * PG, PG, 3 * PG, &pool), 0);
    pool_init(pool, order);
    assert_int_equal(pagecache_create_backing(size, 0, &store), 0);
    zero_store(store, size);
    struct model m = {.pool = pool, .lo = 0, .len = size, .rng = seed};
    assert_int_equal(pagecache_create_buffer(pool, store, &m.buf), 0);
    m.shadow = calloc(1, size);
    m.tmp = malloc(8 * PG);
    run_model(&m, 4000, 1, 6);
    assert_int_equal(m.errors, 0);
    unsigned char *all = malloc(size);
    memset(all, 0xEE, size);
    assert_int_equal(pagecache_read(m.buf, 0, size, all), 0);
    assert_memory_equal(all, m.shadow, size);
    struct vast_pool_stats st;
    pagecache_get_pool_stats(pool, &st);
    printf("evictions %llu (dirty %llu), h2d %llu, d2h %llu (unordered %llu), overlap %llu B\n",
           (unsigned long long)st.evictions, (unsigned long long)st.dirty_evictions,
           (unsigned long long)st.h2d_transfers, (unsigned long long)st.d2h_transfers,
           (unsigned long long)st.unordered_d2h_transfers,
           (unsigned long long)st.overlap_h2d_bytes);
    assert_true(st.dirty_evictions > 100); /* the test exercised write-back under eviction */
    if (order != SIMPLEX)
        assert_true(st.unordered_d2h_transfers > 100 && (staged || st.overlap_h2d_bytes > 0));
    assert_int_equal(pagecache_release_buffer(m.buf), 0);
    pagecache_destroy_backing(store);
    pagecache_destroy_pool(pool);
    device_fini(&dev, staged);
    free(all);
    free(m.shadow);
    free(m.tmp);
}

static void test_model_single(void **state)
{
    (void)state;
    run_model_single(0, SIMPLEX);
}

static void test_model_single_staged(void **state)
{
    (void)state;
    run_model_single(1, SIMPLEX);
}

#define NTHREADS 8
#define SHARED_PAGES_PER_THREAD 8

static void *thread_main(void *arg)
{
    struct model *m = arg;
    run_model(m, 1500, 0, 2);
    return NULL;
}

static void run_model_threads(int staged, int order)
{
    unsigned seed = seed_base();
    struct fake_device dev;
    const struct vast_device_ops *ops = device_init(&dev, staged, order, seed);
    struct vast_pool *pool;
    /* 16 threads pin at most 3 pages each (a device write spans <= 3 pages, host writes
     * pin <= 2 boundary pages): 48 frames never run out; 64 keep eviction busy.
     * 8 users, each with a private buffer and a slice of a shared one: 16 threads. */
    assert_int_equal(pagecache_create_pool(ops, &dev, 64 * PG, PG, 16 * PG, &pool), 0);
    pool_init(pool, order);
    struct vast_backing *shared_store, *priv_store[NTHREADS];
    struct vast_pc_buffer *shared;
    size_t shared_size = NTHREADS * SHARED_PAGES_PER_THREAD * PG;
    assert_int_equal(pagecache_create_backing(shared_size, 0, &shared_store), 0);
    zero_store(shared_store, shared_size);
    assert_int_equal(pagecache_create_buffer(pool, shared_store, &shared), 0);
    struct model m[2 * NTHREADS];
    pthread_t th[2 * NTHREADS];
    for (int t = 0; t < NTHREADS; t++) {
        assert_int_equal(pagecache_create_backing(40 * PG, 0, &priv_store[t]), 0);
        zero_store(priv_store[t], 40 * PG);
        m[t] = (struct model){.pool = pool, .lo = 0, .len = 40 * PG, .rng = seed + 1000u * t};
        assert_int_equal(pagecache_create_buffer(pool, priv_store[t], &m[t].buf), 0);
        m[NTHREADS + t] = (struct model){.pool = pool, .buf = shared, .lo = (size_t)t * SHARED_PAGES_PER_THREAD * PG,
                                         .len = SHARED_PAGES_PER_THREAD * PG, .rng = seed + 7u * t};
    }
    for (int i = 0; i < 2 * NTHREADS; i++) {
        m[i].shadow = calloc(1, m[i].len);
        m[i].tmp = malloc(8 * PG);
    }
    for (int t = 0; t < NTHREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, thread_main, &m[t]), 0);
    for (int t = 0; t < NTHREADS; t++)
        assert_int_equal(pthread_create(&th[NTHREADS + t], NULL, thread_main, &m[NTHREADS + t]), 0);
    for (int t = 0; t < 2 * NTHREADS; t++)
        pthread_join(th[t], NULL);
    for (int i = 0; i < 2 * NTHREADS; i++) {
        unsigned char *out = malloc(m[i].len);
        memset(out, 0xEE, m[i].len);
        assert_int_equal(pagecache_read(m[i].buf, m[i].lo, m[i].len, out), 0);
        assert_memory_equal(out, m[i].shadow, m[i].len);
        assert_int_equal(m[i].errors, 0);
        free(out);
        free(m[i].shadow);
        free(m[i].tmp);
    }
    size_t valid, dirty, pinned;
    pagecache_count_frames(pool, &valid, &dirty, &pinned);
    assert_int_equal(pinned, 0);
    for (int t = 0; t < NTHREADS; t++) {
        assert_int_equal(pagecache_release_buffer(m[t].buf), 0);
        pagecache_destroy_backing(priv_store[t]);
    }
    assert_int_equal(pagecache_release_buffer(shared), 0);
    pagecache_destroy_backing(shared_store);
    pagecache_count_frames(pool, &valid, &dirty, &pinned);
    assert_int_equal(valid, 0);
    pagecache_destroy_pool(pool);
    device_fini(&dev, staged);
}

static void test_model_threads(void **state)
{
    (void)state;
    run_model_threads(0, SIMPLEX);
}

static void test_model_threads_staged(void **state)
{
    (void)state;
    run_model_threads(1, SIMPLEX);
}

/* Duplex: every order, direct and staged, one thread and sixteen. */
static void test_model_duplex(void **state)
{
    (void)state;
    for (int order = FAKE_H2D_FIRST; order <= FAKE_RANDOM; order++) {
        run_model_single(0, order);
        run_model_single(1, order);
        run_model_threads(0, order);
        run_model_threads(1, order);
    }
}

/* Every host copy (Read/Write/Fill/Copy) through the process's copy pool, in 4 KiB parts. */
static void parallel_host_copies(int on)
{
    pagecache_host_copy_shutdown();
    struct vast_host_copy_config cfg = {.threads = 3, .parallel_min = 1, .min_part = 1};
    assert_int_equal(pagecache_configure_host_copy(on ? &cfg : NULL), 0);
}

static void test_model_single_parallel_copy(void **state)
{
    (void)state;
    struct vast_host_copy_stats a, b;
    parallel_host_copies(1);
    pagecache_get_host_copy_stats(&a);
    run_model_single(0, SIMPLEX);
    pagecache_get_host_copy_stats(&b);
    assert_true(b.parallel - a.parallel > 1000);
    parallel_host_copies(0);
}

static void test_model_threads_parallel_copy(void **state)
{
    (void)state;
    parallel_host_copies(1);
    run_model_threads(0, SIMPLEX);
    run_model_threads(1, SIMPLEX);
    parallel_host_copies(0);
}

VAST_CMOCKA_MAIN(NULL, fake_host_copy_teardown,
                 test_model_single, test_model_threads, test_model_single_staged, test_model_threads_staged,
                 test_model_single_parallel_copy, test_model_threads_parallel_copy, test_model_duplex)
