/* test_duplex.c: the duplex write-back path (README.md "Duplex transfers") over the fake's two
 * deferred lanes, each test under every hostile order the contract allows (the ordered lane
 * first, the unordered lane first, seeded random interleavings; fake_device.h):
 * streaming eviction of dirty pages (the saxpy pattern: a clean and a dirty buffer, 4x the
 * pool) keeps the backing store and the device contents right; a flush after a load, and after
 * a host-write update, of the same frame reads the new bytes (the reverse hazard); failures
 * injected at issue or at run time in either direction lose no dirty byte and leave no pin;
 * wait() covers both lanes, first error wins. After every pool call nothing may be left on
 * either lane. VAST_TEST_SEED changes the random seeds (printed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_device.h"
#include "pagecache.h"
#include "vast_cmocka.h"

#define PG 4096u
#define NRANDOM 6 /* random interleavings per test */

static unsigned seed_base(void)
{
    const char *s = getenv("VAST_TEST_SEED");
    return s ? (unsigned)strtoul(s, NULL, 0) : 777u;
}

struct vbuf {
    struct vast_backing *store;
    struct vast_pc_buffer *buf;
    unsigned char *shadow; /* what the buffer must hold */
    size_t pages;
};

struct dx {
    struct fake_device dev;
    struct vast_pool *pool;
    struct vbuf x, y;
};

static void vbuf_open(struct dx *t, struct vbuf *b, size_t pages, unsigned char salt)
{
    b->pages = pages;
    assert_int_equal(pagecache_create_backing(pages * PG, 0, &b->store), 0);
    unsigned char *h = pagecache_backing_base(b->store);
    for (size_t i = 0; i < pages * PG; i++)
        h[i] = (unsigned char)(i * 13 + i / PG + salt);
    b->shadow = malloc(pages * PG);
    memcpy(b->shadow, h, pages * PG);
    assert_int_equal(pagecache_create_buffer(t->pool, b->store, &b->buf), 0);
}

static void vbuf_close(struct vbuf *b)
{
    assert_int_equal(pagecache_release_buffer(b->buf), 0);
    pagecache_destroy_backing(b->store);
    free(b->shadow);
}

/* frames in chunks of chunk_frames; write-back windows of window_pages. */
static struct dx *dx_open(enum fake_order order, unsigned seed, size_t frames,
                          size_t chunk_frames, size_t window_pages, size_t pages)
{
    struct dx *t = calloc(1, sizeof *t);
    fake_device_init(&t->dev);
    assert_int_equal(fake_device_enable_lanes(&t->dev, order, seed), 0);
    assert_int_equal(pagecache_create_pool(fake_duplex_ops(), &t->dev, frames * PG, PG,
                                           chunk_frames * PG, &t->pool), 0);
    pagecache_configure_duplex(t->pool, window_pages * PG);
    vbuf_open(t, &t->x, pages, 1);
    vbuf_open(t, &t->y, pages, 2);
    return t;
}

static void dx_close(struct dx *t)
{
    assert_int_equal(fake_lanes_pending(&t->dev), 0);
    vbuf_close(&t->x);
    vbuf_close(&t->y);
    pagecache_destroy_pool(t->pool);
    fake_device_fini(&t->dev);
    assert_int_equal(t->dev.allocs, t->dev.frees);
    free(t);
}

static unsigned char *frame_mem(struct dx *t, uint32_t f)
{
    return fake_frame_mem(t->pool, f);
}

/* Pages [first, first+n) of b are resident and hold the shadow's bytes. */
static void check_device(struct dx *t, struct vbuf *b, size_t first, size_t n)
{
    for (size_t p = first; p < first + n; p++) {
        uint32_t f = pagecache_page_frame(b->buf, p);
        assert_int_not_equal(f, VAST_PT_NO_FRAME);
        assert_memory_equal(frame_mem(t, f), b->shadow + p * PG, PG);
    }
}

/* The whole store through the page cache equals the shadow. */
static void check_store(struct dx *t, struct vbuf *b)
{
    unsigned char *out = malloc(b->pages * PG);
    memset(out, 0xEE, b->pages * PG);
    assert_int_equal(pagecache_read(b->buf, 0, b->pages * PG, out), 0);
    assert_memory_equal(out, b->shadow, b->pages * PG);
    assert_int_equal(fake_lanes_pending(&t->dev), 0);
    free(out);
}

/* A "kernel": makes the pages resident and pinned, checks what was loaded, writes, marks. */
static void kernel_write(struct dx *t, struct vbuf *b, size_t first, size_t n, unsigned v)
{
    assert_int_equal(pagecache_make_resident(b->buf, first, n, VAST_PC_PIN, NULL), 0);
    check_device(t, b, first, n);
    assert_int_equal(fake_lanes_pending(&t->dev), 0);
    for (size_t p = first; p < first + n; p++) {
        unsigned char *d = frame_mem(t, pagecache_page_frame(b->buf, p));
        for (size_t i = 0; i < PG; i++)
            d[i] = b->shadow[p * PG + i] = (unsigned char)(v + p * 3 + i);
    }
    assert_int_equal(pagecache_mark_dirty(b->buf, first, n), 0);
    pagecache_unpin_range(b->buf, first, n);
}

static void kernel_read(struct dx *t, struct vbuf *b, size_t first, size_t n)
{
    assert_int_equal(pagecache_make_resident(b->buf, first, n, VAST_PC_PIN, NULL), 0);
    check_device(t, b, first, n);
    assert_int_equal(fake_lanes_pending(&t->dev), 0);
    pagecache_unpin_range(b->buf, first, n);
}

static size_t pinned_frames(struct dx *t)
{
    size_t valid, dirty, pinned;
    pagecache_count_frames(t->pool, &valid, &dirty, &pinned);
    return pinned;
}

/* Runs fn under H2D_FIRST, D2H_FIRST and NRANDOM random orders. */
static void each_order(void (*fn)(enum fake_order, unsigned))
{
    fn(FAKE_H2D_FIRST, 0);
    fn(FAKE_D2H_FIRST, 0);
    for (unsigned i = 0; i < NRANDOM; i++)
        fn(FAKE_RANDOM, seed_base() + i);
}

/* ---------- streaming eviction of dirty pages ---------- */

/* saxpy y = a*x + y over buffers 4x the pool, in partitions of 4 pages of each: partition
 * i+1 evicts partition i-1, whose y pages are dirty; three passes, so later passes load pages
 * that were written back. Windows of 3 pages over chunks of 6 frames: windows, coalesced
 * runs and chunk boundaries never line up. */
static void streaming(enum fake_order order, unsigned seed)
{
    printf("streaming, %s, seed %u\n", fake_order_name(order), seed);
    struct dx *t = dx_open(order, seed, 16, 6, 3, 64);
    for (unsigned pass = 0; pass < 3; pass++)
        for (size_t p = 0; p < 64; p += 4) {
            kernel_read(t, &t->x, p, 4);
            kernel_write(t, &t->y, p, 4, pass * 41 + (unsigned)p);
        }
    check_store(t, &t->x);
    check_store(t, &t->y);
    struct vast_pool_stats st;
    pagecache_get_pool_stats(t->pool, &st);
    assert_true(st.dirty_evictions > 100);
    assert_true(st.unordered_d2h_transfers > 0);
    assert_true(st.overlap_h2d_bytes > 0); /* loads were issued beside write-backs */
    assert_true(atomic_load(&t->dev.lanes->loads_beside_writebacks) > 0);
    assert_true(atomic_load(&t->dev.lanes->max_unordered_pending) > 1);
    assert_int_equal(pinned_frames(t), 0);
    dx_close(t);
}

/* n dirty pages resident (the frames hold n), then n others loaded in one make_resident: the
 * write-backs go out in `windows` windows, every one but the last beside a load of
 * `overlap_pages` pages in all; then they are all read back. */
static void evict_in_windows(enum fake_order order, unsigned seed, size_t n, size_t window_pages, size_t pages,
                             uint64_t windows, size_t overlap_pages)
{
    struct dx *t = dx_open(order, seed, n, n, window_pages, pages);
    kernel_write(t, &t->y, 0, n, 5);
    kernel_write(t, &t->y, n, n, 9);
    struct vast_pool_stats st;
    pagecache_get_pool_stats(t->pool, &st);
    assert_int_equal(st.dirty_evictions, n);
    assert_int_equal(st.unordered_d2h_transfers, windows);
    assert_int_equal(st.overlap_h2d_bytes, overlap_pages * PG);
    check_store(t, &t->y);
    dx_close(t);
}

/* One call evicting many dirty pages: 24 and 24, 8 windows of 3. */
static void one_big_call(enum fake_order order, unsigned seed)
{
    evict_in_windows(order, seed, 24, 3, 64, 8, 7 * 3);
}

/* A call with less to write back than four windows of the configured size (8 MiB) cuts it
 * into about four, none below 1 MiB (256 pages here): 1280 dirty victims, windows of 320. */
static void adaptive_window(enum fake_order order, unsigned seed)
{
    evict_in_windows(order, seed, 1280, 2048, 2560, 4, 3 * 320);
}

static void test_streaming_dirty(void **state)
{
    (void)state;
    each_order(streaming);
    each_order(one_big_call);
    each_order(adaptive_window);
}

/* ---------- the reverse hazard: write-back after a load or update of the same frame ---------- */

static void flush_after_load(enum fake_order order, unsigned seed)
{
    printf("flush after load, %s, seed %u\n", fake_order_name(order), seed);
    struct dx *t = dx_open(order, seed, 4, 4, 2, 16);
    kernel_write(t, &t->y, 0, 4, 7); /* every frame holds a dirty page */
    /* page 9 is loaded over a dirty victim, marked dirty without being changed (a kernel
     * that declared a write), then flushed: the host must get the loaded bytes back */
    assert_int_equal(pagecache_make_resident(t->y.buf, 9, 1, VAST_PC_PIN, NULL), 0);
    assert_int_equal(pagecache_mark_dirty(t->y.buf, 9, 1), 0);
    pagecache_unpin_range(t->y.buf, 9, 1);
    assert_int_equal(pagecache_flush_range(t->y.buf, 9 * PG, PG), 0);
    assert_memory_equal((unsigned char *)pagecache_backing_base(t->y.store) + 9 * PG,
                        t->y.shadow + 9 * PG, PG);
    assert_int_equal(fake_lanes_pending(&t->dev), 0);
    /* a host write into a resident dirty page updates its frame; a read flushes it: the
     * write-back must carry the update, not overwrite the host's new bytes with the old */
    unsigned char src[100];
    memset(src, 0x5C, sizeof src);
    assert_int_equal(pagecache_write(t->y.buf, 2 * PG + 1000, sizeof src, src), 0);
    memcpy(t->y.shadow + 2 * PG + 1000, src, sizeof src);
    assert_true(pagecache_page_is_dirty(t->y.buf, 2));
    check_store(t, &t->y);
    dx_close(t);
}

static void test_flush_after_load(void **state)
{
    (void)state;
    each_order(flush_after_load);
}

/* ---------- failure injection ---------- */

enum fault_kind { WB_AT_RUN, WB_AT_ISSUE, LOAD_AT_RUN, LOAD_AT_ISSUE, FLUSH_AT_RUN };

/* 8 frames with dirty y pages 0..7; loading y 16..23 evicts them in 4 windows of 2 (one
 * transfer each). A failure lets `pass` transfers of its kind through. */
static void arm(struct dx *t, enum fault_kind kind, long pass)
{
    switch (kind) {
    case WB_AT_RUN: case FLUSH_AT_RUN: atomic_store(&t->dev.lanes->fail_run_d2h_after, pass); break;
    case WB_AT_ISSUE: atomic_store(&t->dev.fail_read_after, pass); break;
    case LOAD_AT_RUN: atomic_store(&t->dev.lanes->fail_run_h2d_after, pass); break;
    case LOAD_AT_ISSUE: atomic_store(&t->dev.fail_write_after, pass); break;
    }
}

static void disarm(struct dx *t)
{
    atomic_store(&t->dev.lanes->fail_run_d2h_after, -1);
    atomic_store(&t->dev.lanes->fail_run_h2d_after, -1);
    atomic_store(&t->dev.fail_read_after, -1);
    atomic_store(&t->dev.fail_write_after, -1);
}

/* Which victims still hold their frame (and are dirty) after the failure: those whose frame
 * received no load. A write-back failing at run time in window w: windows < w were loaded; a
 * write-back refused at issue: nothing was loaded (the call stops before its first load); a
 * load failing at run time is seen only at the end: all were loaded; a load refused at issue
 * in window w: windows <= w were (the loads of window w were attempted). */
static size_t victims_kept(enum fault_kind kind, long pass)
{
    switch (kind) {
    case WB_AT_RUN: return 8 - 2 * (size_t)pass;
    case WB_AT_ISSUE: return 8;
    case LOAD_AT_RUN: return 0;
    default: return 8 - 2 * ((size_t)pass + 1);
    }
}

static void fault_case(enum fake_order order, unsigned seed, enum fault_kind kind, long pass)
{
    struct dx *t = dx_open(order, seed, 8, 8, 2, 32);
    kernel_write(t, &t->y, 0, 8, 3);
    arm(t, kind, pass);
    if (kind == FLUSH_AT_RUN) {
        assert_int_equal(pagecache_flush_range(t->y.buf, 0, 8 * PG), VAST_PC_ERR_TRANSFER);
        for (size_t p = 0; p < 8; p++)
            assert_true(pagecache_page_is_dirty(t->y.buf, p));
        check_device(t, &t->y, 0, 8);
    } else {
        assert_int_equal(pagecache_make_resident(t->y.buf, 16, 8, VAST_PC_PIN, NULL),
                         VAST_PC_ERR_TRANSFER);
        size_t kept = victims_kept(kind, pass);
        for (size_t p = 0; p < 8; p++) { /* window order is frame order here */
            int stays = p >= 8 - kept;
            assert_int_equal(pagecache_page_frame(t->y.buf, p) != VAST_PT_NO_FRAME, stays);
            assert_int_equal(pagecache_page_is_dirty(t->y.buf, p), stays);
        }
        check_device(t, &t->y, 8 - kept, kept); /* no load touched a kept victim's frame */
        for (size_t p = 16; p < 24; p++)
            assert_int_equal(pagecache_page_frame(t->y.buf, p), VAST_PT_NO_FRAME);
    }
    assert_int_equal(fake_lanes_pending(&t->dev), 0);
    assert_int_equal(pinned_frames(t), 0);
    disarm(t);
    kernel_write(t, &t->y, 16, 8, 11); /* works again, and what it loads is right */
    check_store(t, &t->y);             /* no dirty byte was lost */
    dx_close(t);
}

static void faults(enum fake_order order, unsigned seed)
{
    for (long pass = 0; pass < 4; pass++) { /* the failure in window `pass` */
        fault_case(order, seed, WB_AT_RUN, pass);
        fault_case(order, seed, WB_AT_ISSUE, pass);
        fault_case(order, seed, LOAD_AT_ISSUE, pass);
    }
    fault_case(order, seed, LOAD_AT_RUN, 0); /* the first load to run fails */
    fault_case(order, seed, LOAD_AT_RUN, 3); /* the last */
    fault_case(order, seed, FLUSH_AT_RUN, 0); /* a flush is one transfer here */
}

static void test_faults(void **state)
{
    (void)state;
    each_order(faults);
}

/* ---------- wait() covers both lanes; first error wins ---------- */

static void wait_both(enum fake_order order, unsigned seed)
{
    struct fake_device dev;
    fake_device_init(&dev);
    assert_int_equal(fake_device_enable_lanes(&dev, order, seed), 0);
    const struct vast_device_ops *ops = fake_duplex_ops();
    vast_dev_chunk c;
    assert_int_equal(ops->alloc_chunk(&dev, 4 * PG, &c), 0);
    unsigned char in[PG], out[PG], pin_dummy;
    memset(in, 0x31, PG);
    memset(out, 0, PG);
    memset(fake_chunk_mem(c) + 2 * PG, 0x42, PG);
    void *ticket = NULL;
    assert_int_equal(ops->write(&dev, c, 0, in, PG, &pin_dummy), 0);
    assert_int_equal(ops->read_unordered(&dev, c, 2 * PG, out, PG, &pin_dummy, &ticket), 0);
    assert_non_null(ticket);
    assert_int_equal(fake_lanes_pending(&dev), 2); /* deferred: nothing ran yet */
    assert_int_equal(ops->wait(&dev), 0);
    assert_int_equal(fake_lanes_pending(&dev), 0);
    assert_int_equal(fake_chunk_mem(c)[0], 0x31);
    assert_int_equal(out[PG - 1], 0x42); /* the unordered read ran under wait() */
    assert_int_equal(ops->wait_ticket(&dev, ticket), 0);
    /* a write failing when it runs is reported by the next wait(), once; the others ran */
    memset(in, 0x77, PG);
    atomic_store(&dev.lanes->fail_run_h2d_after, 1);
    assert_int_equal(ops->write(&dev, c, 0, in, PG, &pin_dummy), 0);
    assert_int_equal(ops->write(&dev, c, PG, in, PG, &pin_dummy), 0);
    assert_int_equal(ops->wait(&dev), VAST_PC_ERR_TRANSFER);
    atomic_store(&dev.lanes->fail_run_h2d_after, -1);
    assert_int_equal(ops->wait(&dev), 0);
    assert_int_equal(fake_chunk_mem(c)[0], 0x77);
    assert_int_equal(fake_chunk_mem(c)[PG], 0xA5); /* the failed one moved nothing */
    /* a failed unordered read is its ticket's */
    atomic_store(&dev.lanes->fail_run_d2h_after, 0);
    assert_int_equal(ops->read_unordered(&dev, c, 2 * PG, out, PG, &pin_dummy, &ticket), 0);
    assert_int_equal(ops->wait_ticket(&dev, ticket), VAST_PC_ERR_TRANSFER);
    ops->free_chunk(&dev, c);
    fake_device_fini(&dev);
}

static void test_wait_covers_both(void **state)
{
    (void)state;
    each_order(wait_both);
}

/* The simplex switch: window 0 runs the serial protocol on the same device (no unordered
 * transfer), and a device without read_unordered cannot be switched to duplex. */
static void test_simplex_switch(void **state)
{
    (void)state;
    struct dx *t = dx_open(FAKE_H2D_FIRST, 0, 16, 6, 0, 64);
    for (size_t p = 0; p < 64; p += 4) {
        kernel_read(t, &t->x, p, 4);
        kernel_write(t, &t->y, p, 4, (unsigned)p);
    }
    check_store(t, &t->y);
    struct vast_pool_stats st;
    pagecache_get_pool_stats(t->pool, &st);
    assert_true(st.dirty_evictions > 0);
    assert_int_equal(st.unordered_d2h_transfers, 0);
    assert_int_equal(st.overlap_h2d_bytes, 0);
    dx_close(t);
    struct fake_device dev;
    struct vast_pool *pool = fake_pool_open(&dev, PG, 4, 4);
    assert_non_null(pool);
    pagecache_configure_duplex(pool, PG);
    assert_int_equal(atomic_load(&pool->duplex_pages), 0);
    pagecache_destroy_pool(pool);
}

VAST_CMOCKA_MAIN(NULL, NULL,
                 test_streaming_dirty, test_flush_after_load, test_faults, test_wait_covers_both, test_simplex_switch)
