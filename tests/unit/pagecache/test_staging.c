/* test_staging.c: the staging engine (pagecache/staging.c, copypool.c) over the fake device,
 * whose slot transfers are deferred until their ticket is waited for (fake_device.h).
 * The copy pool: odd sizes and unaligned pointers with 1-4 threads, concurrent callers.
 * Staging: transfers of 1 byte, slot-1, slot, slot+1, many slots and non-page multiples at odd
 * host and device offsets are byte-identical both ways with 1, 2 and 4 threads, with exact
 * slot-transfer counts; small transfers and a ring that cannot be made are declined (the
 * direct path takes them); a failure injected in the middle slot, at issue or at completion,
 * in either direction, is reported and leaves no slot in flight, and the next transfer works;
 * several threads stage at once. Through the page cache: a failed staged load leaves the pages
 * absent, a failed staged write-back (flush or eviction) keeps the pages dirty and resident,
 * and a later flush brings every byte home. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copypool.h"
#include "fake_device.h"
#include "pagecache.h"
#include "staging.h"
#include "vast_cmocka.h"

#define SLOT ((size_t)256 << 10) /* 4 copy parts of VAST_COPY_MIN_PART: every thread works */
#define POISON 0xA5

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static unsigned char rnd8(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned char)(rng >> 56);
}

static void fill_random(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = rnd8();
}

static int all_bytes(const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

/* ---------- the copy pool ---------- */

static void test_copy_pool_sizes(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 4095, (64 << 10) - 1, (128 << 10) + 1,
                                   (1 << 20) + 333, (3 << 20) + 7};
    size_t max = (3 << 20) + 7;
    unsigned char *src = malloc(max + 16), *dst = malloc(max + 16);
    fill_random(src, max + 16);
    for (unsigned threads = 1; threads <= 4; threads++) {
        struct vast_copy_pool *p;
        assert_int_equal(pagecache_create_copy_pool(threads, &p), 0);
        assert_int_equal(pagecache_copy_pool_threads(p), threads);
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
            memset(dst, 0xEE, max + 16);
            pagecache_copy_parallel(p, dst + 5, src + 3, sizes[i]); /* unaligned both */
            if (sizes[i])
                assert_memory_equal(dst + 5, src + 3, sizes[i]);
            assert_true(all_bytes(dst, 5, 0xEE));
            assert_true(all_bytes(dst + 5 + sizes[i], 11, 0xEE));
        }
        pagecache_destroy_copy_pool(p);
    }
    struct vast_copy_pool *p;
    assert_int_equal(pagecache_create_copy_pool(0, &p), VAST_PC_ERR_INVALID);
    free(src);
    free(dst);
}

struct copy_user {
    struct vast_copy_pool *pool;
    uint64_t rng;
    int errors;
};

static void *copy_user_main(void *arg)
{
    struct copy_user *u = arg;
    size_t cap = 1 << 20;
    unsigned char *src = malloc(cap), *dst = malloc(cap);
    for (int i = 0; i < 200; i++) {
        u->rng = u->rng * 6364136223846793005ull + 1442695040888963407ull;
        size_t n = 1 + (size_t)(u->rng >> 33) % cap;
        memset(src, (int)(u->rng >> 20), n);
        src[n - 1] = (unsigned char)i;
        pagecache_copy_parallel(u->pool, dst, src, n);
        u->errors += memcmp(dst, src, n) != 0;
    }
    free(src);
    free(dst);
    return NULL;
}

static void test_copy_pool_concurrent_callers(void **state)
{
    (void)state;
    struct vast_copy_pool *p;
    assert_int_equal(pagecache_create_copy_pool(3, &p), 0);
    struct copy_user u[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        u[t] = (struct copy_user){p, 1000u + (uint64_t)t, 0};
        assert_int_equal(pthread_create(&th[t], NULL, copy_user_main, &u[t]), 0);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        assert_int_equal(u[t].errors, 0);
    }
    pagecache_destroy_copy_pool(p);
}

/* ---------- staging over the fake device ---------- */

struct rig {
    struct fake_device dev;
    vast_dev_chunk chunk;
    size_t chunk_size;
};

static struct rig *rig_new(unsigned threads, size_t slot, size_t direct_below, size_t chunk)
{
    struct rig *r = calloc(1, sizeof *r);
    fake_device_init(&r->dev);
    struct vast_staging_config cfg = {.slot_bytes = slot, .threads = threads,
                                      .direct_below = direct_below};
    assert_int_equal(fake_device_enable_staging(&r->dev, &cfg), 0);
    assert_int_equal(fake_device_ops.alloc_chunk(&r->dev, chunk, &r->chunk), 0);
    r->chunk_size = chunk;
    return r;
}

static void rig_free(struct rig *r)
{
    assert_int_equal(atomic_load(&r->dev.tickets_out), 0);
    fake_device_ops.free_chunk(&r->dev, r->chunk);
    fake_device_fini(&r->dev);
    assert_int_equal(r->dev.slot_pins, r->dev.slot_unpins);
    free(r);
}

/* No slot is in flight (between calls), in the engine's count and the device's. */
static void assert_idle(struct rig *r)
{
    struct vast_staging_stats st;
    pagecache_get_staging_stats(r->dev.staging, &st);
    assert_int_equal(st.in_flight, 0);
    assert_int_equal(atomic_load(&r->dev.tickets_out), 0);
}

/* Writes n random bytes at device offset off, reads them back, checks both ways and that
 * nothing around either range moved; the slot transfers counted are ceil(n / slot) each. */
static void round_trip(struct rig *r, size_t off, size_t n, size_t slot)
{
    unsigned char *src = malloc(n + 16), *dst = malloc(n + 16);
    unsigned char *mem = fake_chunk_mem(r->chunk);
    fill_random(src, n + 16);
    memset(mem, POISON, r->chunk_size);
    unsigned long w0 = r->dev.slot_writes, r0 = r->dev.slot_reads, d0 = r->dev.writes;
    size_t pieces = (n + slot - 1) / slot;
    long overlap = pieces < VAST_STAGING_DEFAULT_SLOTS ? (long)pieces : VAST_STAGING_DEFAULT_SLOTS;
    atomic_store(&r->dev.max_tickets_out, 0);
    assert_int_equal(pagecache_staging_write(r->dev.staging, r->chunk, off, src + 3, n), 0);
    assert_int_equal(r->dev.max_tickets_out, overlap); /* every slot in flight at once */
    assert_memory_equal(mem + off, src + 3, n);
    assert_true(all_bytes(mem, off, POISON));
    assert_true(all_bytes(mem + off + n, r->chunk_size - off - n, POISON));
    memset(dst, 0xEE, n + 16);
    atomic_store(&r->dev.max_tickets_out, 0);
    assert_int_equal(pagecache_staging_read(r->dev.staging, r->chunk, off, dst + 7, n), 0);
    assert_int_equal(r->dev.max_tickets_out, overlap); /* reads ahead into every slot */
    assert_memory_equal(dst + 7, src + 3, n);
    assert_true(all_bytes(dst, 7, 0xEE));
    assert_true(all_bytes(dst + 7 + n, 9, 0xEE));
    assert_int_equal(r->dev.slot_writes - w0, pieces);
    assert_int_equal(r->dev.slot_reads - r0, pieces);
    assert_int_equal(r->dev.writes, d0); /* nothing went direct */
    assert_idle(r);
    free(src);
    free(dst);
}

static void test_staged_sizes(void **state)
{
    (void)state;
    const size_t sizes[] = {1, SLOT - 1, SLOT, SLOT + 1, 7 * SLOT + 12345, 3 * SLOT - 4095,
                            2 * SLOT, 5000};
    static const unsigned threads[] = {1, 2, 4};
    for (size_t t = 0; t < 3; t++) {
        struct rig *r = rig_new(threads[t], SLOT, 1, 9 * SLOT);
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
            round_trip(r, 0, sizes[i], SLOT);
            round_trip(r, 777, sizes[i], SLOT); /* odd device offset */
        }
        struct vast_staging_stats st;
        pagecache_get_staging_stats(r->dev.staging, &st);
        assert_int_equal(st.slots, VAST_STAGING_DEFAULT_SLOTS);
        assert_int_equal(st.threads, threads[t]);
        assert_int_equal(st.slot_bytes, SLOT);
        assert_int_equal(st.transfers, 2 * 2 * (sizeof sizes / sizeof *sizes));
        assert_int_equal(st.failures, 0);
        assert_int_equal(r->dev.slot_pins, VAST_STAGING_DEFAULT_SLOTS); /* made once */
        rig_free(r);
    }
}

/* The same through the device ops: an unpinned write/read stages, a pinned one does not. */
static void test_devops_route(void **state)
{
    (void)state;
    struct rig *r = rig_new(2, 64 << 10, 1, 1 << 20);
    unsigned char *src = malloc(300000), *dst = malloc(300000);
    fill_random(src, 300000);
    assert_int_equal(fake_device_ops.write(&r->dev, r->chunk, 11, src, 300000, NULL), 0);
    assert_int_equal(r->dev.slot_writes, 5);
    assert_int_equal(r->dev.writes, 0);
    assert_int_equal(fake_device_ops.read(&r->dev, r->chunk, 11, dst, 300000, NULL), 0);
    assert_memory_equal(dst, src, 300000);
    assert_int_equal(r->dev.slot_reads, 5);
    vast_host_pin pin = src; /* any non-NULL pin: the direct path */
    assert_int_equal(fake_device_ops.write(&r->dev, r->chunk, 0, src, 1000, pin), 0);
    assert_int_equal(r->dev.writes, 1);
    assert_int_equal(r->dev.slot_writes, 5);
    /* pinning is refused once staging is on (VAST_PIN=0) */
    assert_int_not_equal(fake_device_ops.pin_host(&r->dev, src, 4096, &pin), 0);
    free(src);
    free(dst);
    rig_free(r);
}

static void test_declined(void **state)
{
    (void)state;
    /* default threshold: below 256 KiB goes direct */
    struct rig *r = rig_new(2, 0, 0, 1 << 20);
    unsigned char *buf = malloc(1 << 20);
    fill_random(buf, 1 << 20);
    assert_int_equal(pagecache_staging_write(r->dev.staging, r->chunk, 0, buf, 1000),
                     VAST_PC_ERR_UNSUPPORTED);
    assert_int_equal(pagecache_staging_write(r->dev.staging, r->chunk, 0, buf, 0),
                     VAST_PC_ERR_UNSUPPORTED);
    assert_int_equal(fake_device_ops.write(&r->dev, r->chunk, 0, buf, (256 << 10) - 1, NULL), 0);
    assert_int_equal(r->dev.writes, 1);
    assert_int_equal(r->dev.slot_pins, 0); /* nothing staged yet: no ring */
    assert_int_equal(fake_device_ops.write(&r->dev, r->chunk, 0, buf, 256 << 10, NULL), 0);
    assert_int_equal(r->dev.slot_writes, 1); /* one default 8 MiB slot */
    struct vast_staging_config cfg;
    pagecache_staging_config(r->dev.staging, &cfg);
    assert_int_equal(cfg.slot_bytes, VAST_STAGING_DEFAULT_SLOT);
    assert_int_equal(cfg.direct_below, VAST_STAGING_DEFAULT_DIRECT_BELOW);
    assert_int_equal(cfg.threads, pagecache_staging_default_threads());
    assert_true(cfg.threads >= 1 && cfg.threads <= 4);
    struct vast_staging_stats st;
    pagecache_get_staging_stats(r->dev.staging, &st);
    assert_int_equal(st.declined, 3);
    assert_int_equal(st.transfers, 1);
    rig_free(r);

    /* a ring that cannot be made: the slots pinned so far are unpinned (and the ring
     * unmapped), every later call declines without trying again, and the device ops still
     * move the bytes (directly) */
    r = rig_new(2, 64 << 10, 1, 1 << 20);
    atomic_store(&r->dev.fail_slot_pin_after, 2);
    assert_int_equal(pagecache_staging_write(r->dev.staging, r->chunk, 0, buf, 100000),
                     VAST_PC_ERR_UNSUPPORTED);
    assert_int_equal(r->dev.slot_pins, 2);
    assert_int_equal(r->dev.slot_unpins, 2);
    atomic_store(&r->dev.fail_slot_pin_after, -1);
    assert_int_equal(pagecache_staging_read(r->dev.staging, r->chunk, 0, buf, 100000),
                     VAST_PC_ERR_UNSUPPORTED);
    assert_int_equal(r->dev.slot_pins, 2);
    assert_int_equal(fake_device_ops.write(&r->dev, r->chunk, 5, buf, 100000, NULL), 0);
    assert_memory_equal(fake_chunk_mem(r->chunk) + 5, buf, 100000);
    free(buf);
    rig_free(r);

    /* clamps: slot rounded up to a page, at least two slots, threads capped */
    struct vast_staging *s;
    struct fake_device dev;
    fake_device_init(&dev);
    cfg = (struct vast_staging_config){.slot_bytes = 1000, .slots = 1, .threads = 1000};
    assert_int_equal(pagecache_create_staging(&fake_staging_ops, &dev, &cfg, &s), 0);
    pagecache_staging_config(s, &cfg);
    assert_int_equal(cfg.slot_bytes, 4096);
    assert_int_equal(cfg.slots, 2);
    assert_int_equal(cfg.threads, VAST_STAGING_MAX_THREADS);
    pagecache_destroy_staging(s);
    assert_int_equal(pagecache_create_staging(NULL, &dev, NULL, &s), VAST_PC_ERR_INVALID);
}

/* A failure in the third of five slots: reported, nothing in flight, next call fine. */
static void fail_middle(int to_device, int at_completion)
{
    size_t slot = 64 << 10, n = 5 * slot - 100;
    struct rig *r = rig_new(2, slot, 1, 1 << 20);
    unsigned char *src = malloc(n), *dst = malloc(n);
    fill_random(src, n);
    if (!to_device)
        memcpy(fake_chunk_mem(r->chunk) + 1, src, n);
    _Atomic long *counter = at_completion ? &r->dev.fail_ticket_after
                            : to_device   ? &r->dev.fail_write_after
                                          : &r->dev.fail_read_after;
    atomic_store(counter, 2);
    int rc = to_device ? pagecache_staging_write(r->dev.staging, r->chunk, 1, src, n)
                       : pagecache_staging_read(r->dev.staging, r->chunk, 1, dst, n);
    assert_int_equal(rc, VAST_PC_ERR_TRANSFER);
    assert_idle(r);
    struct vast_staging_stats st;
    pagecache_get_staging_stats(r->dev.staging, &st);
    assert_int_equal(st.failures, 1);
    assert_int_equal(st.transfers, 0);
    atomic_store(counter, -1);
    /* the pool of slots and threads is still usable */
    memset(dst, 0xEE, n);
    if (to_device) {
        assert_int_equal(pagecache_staging_write(r->dev.staging, r->chunk, 1, src, n), 0);
        assert_memory_equal(fake_chunk_mem(r->chunk) + 1, src, n);
    } else {
        assert_int_equal(pagecache_staging_read(r->dev.staging, r->chunk, 1, dst, n), 0);
        assert_memory_equal(dst, src, n);
    }
    assert_idle(r);
    pagecache_get_staging_stats(r->dev.staging, &st);
    assert_int_equal(st.transfers, 1);
    free(src);
    free(dst);
    rig_free(r);
}

static void test_fail_middle_slot(void **state)
{
    (void)state;
    fail_middle(1, 0);
    fail_middle(1, 1);
    fail_middle(0, 0);
    fail_middle(0, 1);
}

/* Several threads stage at once, each over its own device region. */
struct stager {
    struct rig *rig;
    size_t lo, len;
    uint64_t rng;
    int errors;
};

static void *stager_main(void *arg)
{
    struct stager *u = arg;
    unsigned char *src = malloc(u->len), *dst = malloc(u->len);
    for (int i = 0; i < 60; i++) {
        u->rng = u->rng * 6364136223846793005ull + 1442695040888963407ull;
        size_t n = 1 + (size_t)(u->rng >> 33) % u->len;
        size_t off = u->lo + (size_t)(u->rng >> 13) % (u->len - n + 1);
        for (size_t k = 0; k < n; k++)
            src[k] = (unsigned char)(k * 31 + i + u->lo);
        const struct vast_device_ops *ops = &fake_device_ops;
        u->errors += ops->write(&u->rig->dev, u->rig->chunk, off, src, n, NULL) != 0;
        memset(dst, 0xEE, n);
        u->errors += ops->read(&u->rig->dev, u->rig->chunk, off, dst, n, NULL) != 0;
        u->errors += memcmp(dst, src, n) != 0;
    }
    free(src);
    free(dst);
    return NULL;
}

static void test_concurrent_callers(void **state)
{
    (void)state;
    enum { USERS = 4 };
    size_t region = (size_t)400 << 10;
    struct rig *r = rig_new(2, 64 << 10, 1, USERS * region);
    struct stager u[USERS];
    pthread_t th[USERS];
    for (int t = 0; t < USERS; t++) {
        u[t] = (struct stager){r, (size_t)t * region, region, 77u + (uint64_t)t, 0};
        assert_int_equal(pthread_create(&th[t], NULL, stager_main, &u[t]), 0);
    }
    for (int t = 0; t < USERS; t++) {
        pthread_join(th[t], NULL);
        assert_int_equal(u[t].errors, 0);
    }
    assert_idle(r);
    struct vast_staging_stats st;
    pagecache_get_staging_stats(r->dev.staging, &st);
    assert_int_equal(st.transfers, USERS * 60 * 2);
    assert_int_equal(r->dev.writes + r->dev.reads, 0);
    rig_free(r);
}

/* ---------- through the page cache ---------- */

#define PG 4096u

struct pc_rig {
    struct fake_device dev;
    struct vast_pool *pool;
    struct vast_backing *store;
    struct vast_pc_buffer *buf;
    size_t size;
};

/* 8 frames of 4 KiB in one chunk, slots of 2 pages, every transfer staged. */
static struct pc_rig *pc_rig_new(void)
{
    struct pc_rig *r = calloc(1, sizeof *r);
    fake_device_init(&r->dev);
    struct vast_staging_config cfg = {.slot_bytes = 2 * PG, .threads = 2, .direct_below = 1};
    assert_int_equal(fake_device_enable_staging(&r->dev, &cfg), 0);
    assert_int_equal(pagecache_create_pool(&fake_device_ops, &r->dev, 8 * PG, PG, 8 * PG,
                                           &r->pool), 0);
    r->size = 16 * PG - 100;
    assert_int_equal(pagecache_create_backing(r->size, 0, &r->store), 0);
    fill_random(pagecache_backing_base(r->store), r->size);
    assert_int_equal(pagecache_create_buffer(r->pool, r->store, &r->buf), 0);
    return r;
}

static void pc_rig_free(struct pc_rig *r)
{
    assert_int_equal(atomic_load(&r->dev.tickets_out), 0);
    assert_int_equal(pagecache_release_buffer(r->buf), 0);
    pagecache_destroy_backing(r->store);
    pagecache_destroy_pool(r->pool);
    fake_device_fini(&r->dev);
    assert_int_equal(r->dev.slot_pins, r->dev.slot_unpins);
    assert_int_equal(r->dev.pins, 0); /* nothing was pinned: everything staged */
    free(r);
}

/* Device bytes of root pages [first, first+count) equal the host store's. */
static void assert_resident_equal(struct pc_rig *r, size_t first, size_t count,
                                  const unsigned char *host)
{
    struct vast_frame_loc locs[8];
    assert_int_equal(pagecache_make_resident(r->buf, first, count, VAST_PC_PIN, locs), 0);
    for (size_t i = 0; i < count; i++)
        assert_memory_equal(fake_chunk_mem(locs[i].chunk) + locs[i].offset,
                            host + (first + i) * PG, PG);
    pagecache_unpin_range(r->buf, first, count);
}

static void test_pagecache_failed_staged_load(void **state)
{
    (void)state;
    struct pc_rig *r = pc_rig_new();
    /* 6 pages in one run: 3 slots; the second slot fails when waited for */
    atomic_store(&r->dev.fail_ticket_after, 1);
    assert_int_equal(pagecache_make_resident(r->buf, 2, 6, VAST_PC_PIN, NULL),
                     VAST_PC_ERR_TRANSFER);
    size_t valid, dirty, pinned;
    pagecache_count_frames(r->pool, &valid, &dirty, &pinned);
    assert_int_equal(valid + dirty + pinned, 0);
    for (size_t p = 2; p < 8; p++)
        assert_int_equal(pagecache_page_frame(r->buf, p), VAST_PT_NO_FRAME);
    atomic_store(&r->dev.fail_ticket_after, -1);
    assert_resident_equal(r, 2, 6, pagecache_backing_base(r->store));
    assert_true(r->dev.slot_writes >= 3);
    pc_rig_free(r);
}

/* The "kernel" writes pages [first, first+count) on the device; returns what it wrote. */
static unsigned char *device_writes(struct pc_rig *r, size_t first, size_t count)
{
    struct vast_frame_loc locs[8];
    unsigned char *expect = malloc(count * PG);
    fill_random(expect, count * PG);
    assert_int_equal(pagecache_make_resident(r->buf, first, count, VAST_PC_PIN, locs), 0);
    for (size_t i = 0; i < count; i++)
        memcpy(fake_chunk_mem(locs[i].chunk) + locs[i].offset, expect + i * PG, PG);
    assert_int_equal(pagecache_mark_dirty(r->buf, first, count), 0);
    pagecache_unpin_range(r->buf, first, count);
    return expect;
}

static void test_pagecache_failed_staged_writeback(void **state)
{
    (void)state;
    struct pc_rig *r = pc_rig_new();
    unsigned char *host = pagecache_backing_base(r->store);
    unsigned char *expect = device_writes(r, 0, 6);
    /* flush: the second of three slots fails at issue; the pages stay dirty and resident */
    atomic_store(&r->dev.fail_read_after, 1);
    assert_int_equal(pagecache_flush_range(r->buf, 0, 6 * PG), VAST_PC_ERR_TRANSFER);
    for (size_t p = 0; p < 6; p++) {
        assert_true(pagecache_page_is_dirty(r->buf, p));
        assert_int_not_equal(pagecache_page_frame(r->buf, p), VAST_PT_NO_FRAME);
    }
    atomic_store(&r->dev.fail_read_after, -1);
    /* eviction: loading 6 other pages must evict the dirty ones; the write-back fails in
     * its middle slot at completion, so the victims keep frame, tag and dirty bit */
    atomic_store(&r->dev.fail_ticket_after, 1);
    assert_int_equal(pagecache_make_resident(r->buf, 8, 6, 0, NULL), VAST_PC_ERR_TRANSFER);
    size_t dirty_pages = 0;
    for (size_t p = 0; p < 6; p++)
        dirty_pages += pagecache_page_is_dirty(r->buf, p) != 0;
    assert_int_equal(dirty_pages, 6);
    atomic_store(&r->dev.fail_ticket_after, -1);
    /* nothing was lost: a flush now brings every byte home */
    assert_int_equal(pagecache_flush_range(r->buf, 0, r->size), 0);
    assert_memory_equal(host, expect, 6 * PG);
    assert_int_equal(pagecache_make_resident(r->buf, 8, 6, 0, NULL), 0);
    size_t valid, dirty, pinned;
    pagecache_count_frames(r->pool, &valid, &dirty, &pinned);
    assert_int_equal(dirty, 0);
    assert_int_equal(pinned, 0);
    free(expect);
    pc_rig_free(r);
}

VAST_CMOCKA_MAIN(NULL, NULL,
                 test_copy_pool_sizes, test_copy_pool_concurrent_callers, test_staged_sizes, test_devops_route,
                 test_declined, test_fail_middle_slot, test_concurrent_callers, test_pagecache_failed_staged_load,
                 test_pagecache_failed_staged_writeback)
