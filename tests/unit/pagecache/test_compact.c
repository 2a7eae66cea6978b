/* test_compact.c: pagecache_make_contiguous (compact.c) over the fake device: a range lands
 * as one run of adjacent frames of one chunk in page order, whatever the pool looked like
 * (free frames scattered, other buffers' clean and dirty pages in the way, the range's own
 * pages scattered and dirty); pinned frames are never taken and own pinned pages fix the
 * window; the cheapest window is taken, or the lowest with VAST_PC_PACK; failed write-backs
 * and failed loads lose nothing (all or nothing); a random model checks every byte and the
 * pool's bookkeeping after every step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fake_device.h"
#include "pagecache.h"
#include "vast_cmocka.h"

#define PG 4096u
#define NBUF 3

struct fixture {
    struct fake_device dev;
    struct vast_pool *pool;
    struct vast_backing *store[NBUF];
    struct vast_pc_buffer *buf[NBUF];
    unsigned char *model[NBUF]; /* what every byte of each buffer must read as */
    size_t bytes[NBUF];
};

static struct fixture *setup_fx(size_t frames, size_t chunk_frames, const size_t pages[NBUF])
{
    struct fixture *fx = calloc(1, sizeof *fx);
    fake_device_init(&fx->dev);
    assert_int_equal(pagecache_create_pool(&fake_device_ops, &fx->dev, frames * PG, PG, chunk_frames * PG,
                                           &fx->pool), 0);
    for (int b = 0; b < NBUF; b++) {
        fx->bytes[b] = pages[b] * PG - (b == 1 ? 100 : 0); /* one buffer ends inside a page */
        assert_int_equal(pagecache_create_backing(fx->bytes[b], 0, &fx->store[b]), 0);
        unsigned char *h = pagecache_backing_base(fx->store[b]);
        for (size_t i = 0; i < fx->bytes[b]; i++)
            h[i] = (unsigned char)(i * 7 + i / PG + 31 * b);
        fx->model[b] = malloc(fx->bytes[b]);
        memcpy(fx->model[b], h, fx->bytes[b]);
        assert_int_equal(pagecache_create_buffer(fx->pool, fx->store[b], &fx->buf[b]), 0);
    }
    fake_device_reset_counts(&fx->dev);
    return fx;
}

static void teardown_fx(struct fixture *fx)
{
    for (int b = 0; b < NBUF; b++) {
        assert_int_equal(pagecache_release_buffer(fx->buf[b]), 0);
        pagecache_destroy_backing(fx->store[b]);
        free(fx->model[b]);
    }
    pagecache_destroy_pool(fx->pool);
    free(fx);
}

static size_t page_bytes(struct fixture *fx, int b, size_t p)
{
    return (p + 1) * PG > fx->bytes[b] ? fx->bytes[b] - p * PG : PG;
}

static unsigned char *frame_mem(struct fixture *fx, uint32_t f)
{
    return fake_frame_mem(fx->pool, f);
}

/* The pool's bookkeeping: page tables and frame tags agree, the free count is right, no I/O
 * is left, every resident page holds the model's bytes. */
static void check_pool(struct fixture *fx)
{
    size_t used = 0;
    for (int b = 0; b < NBUF; b++)
        for (size_t p = 0; p * PG < fx->bytes[b]; p++) {
            uint32_t f = pagecache_page_frame(fx->buf[b], p);
            if (f == VAST_PT_NO_FRAME)
                continue;
            used++;
            uint32_t s = atomic_load(&fx->pool->frames[f].state);
            assert_true(s & VAST_FS_VALID);
            assert_false(s & VAST_FS_IO);
            assert_ptr_equal(fx->pool->frames[f].owner, fx->buf[b]);
            assert_int_equal(fx->pool->frames[f].page, p);
            assert_null(fx->pool->frames[f].evicting);
            assert_memory_equal(frame_mem(fx, f), fx->model[b] + p * PG, page_bytes(fx, b, p));
        }
    size_t valid, dirty, pinned;
    pagecache_count_frames(fx->pool, &valid, &dirty, &pinned);
    assert_int_equal(valid, used);
    assert_int_equal(fx->pool->free_count, fx->pool->nframes - used);
    const char *bad = pagecache_check(fx->pool);
    if (bad)
        fail_msg("pagecache_check: %s", bad);
}

/* Every byte of every buffer as the host reads it (flushes dirty pages). */
static void check_host(struct fixture *fx)
{
    for (int b = 0; b < NBUF; b++) {
        unsigned char *out = malloc(fx->bytes[b]);
        assert_int_equal(pagecache_read(fx->buf[b], 0, fx->bytes[b], out), 0);
        assert_memory_equal(out, fx->model[b], fx->bytes[b]);
        free(out);
    }
}

/* The last checks of a test, then the fixture goes: the pool's bookkeeping and bytes, the
 * host's copies. */
static void finish(struct fixture *fx)
{
    check_pool(fx);
    check_host(fx);
    teardown_fx(fx);
}

/* A "kernel" writes page p of buffer b on the device: dirty, and the model follows. */
static void device_write(struct fixture *fx, int b, size_t p, unsigned char v)
{
    struct vast_frame_loc loc;
    assert_int_equal(pagecache_make_resident(fx->buf[b], p, 1, VAST_PC_PIN, &loc), 0);
    size_t n = page_bytes(fx, b, p);
    memset(fake_chunk_mem(loc.chunk) + loc.offset, v, n);
    memset(fx->model[b] + p * PG, v, n);
    assert_int_equal(pagecache_mark_dirty(fx->buf[b], p, 1), 0);
    pagecache_unpin_range(fx->buf[b], p, 1);
}

/* pages [first, first+count) of b are one run in page order, locs agree, bytes right. */
static void check_run(struct fixture *fx, int b, size_t first, size_t count, const struct vast_frame_loc *locs)
{
    uint32_t f0 = pagecache_page_frame(fx->buf[b], first);
    assert_int_not_equal(f0, VAST_PT_NO_FRAME);
    for (size_t k = 0; k < count; k++) {
        uint32_t f = pagecache_page_frame(fx->buf[b], first + k);
        assert_int_equal(f, f0 + k);
        assert_ptr_equal(pagecache_frame_chunk(fx->pool, f), pagecache_frame_chunk(fx->pool, f0));
        if (locs != NULL) {
            assert_int_equal(locs[k].frame, f);
            assert_int_equal(locs[k].offset, pagecache_frame_offset(fx->pool, f));
        }
    }
}

static const size_t pages_std[NBUF] = {64, 40, 40};

/* Free frames scattered between other buffers' pages: the range still lands in one run. */
static void test_scattered_free(void **state)
{
    (void)state;
    struct fixture *fx = setup_fx(32, 32, pages_std);
    for (size_t p = 0; p < 32; p++) /* fill the pool with buffer 0, then punch holes */
        assert_int_equal(pagecache_make_resident(fx->buf[0], p, 1, 0, NULL), 0);
    for (size_t p = 0; p < 32; p += 2)
        device_write(fx, 0, p, (unsigned char)(0x40 + p));
    assert_int_equal(pagecache_invalidate_range(fx->buf[0], 1 * PG, PG, 0), 0);
    assert_int_equal(pagecache_invalidate_range(fx->buf[0], 9 * PG, PG, 0), 0);
    assert_int_equal(pagecache_invalidate_range(fx->buf[0], 21 * PG, PG, 0), 0);
    /* make_resident would take the three holes; make_contiguous takes a run of 10 */
    struct vast_frame_loc locs[10];
    assert_int_equal(pagecache_make_contiguous(fx->buf[1], 5, 10, VAST_PC_PIN, locs), 0);
    check_run(fx, 1, 5, 10, locs);
    size_t valid, dirty, pinned;
    pagecache_count_frames(fx->pool, &valid, &dirty, &pinned);
    assert_int_equal(pinned, 10);
    pagecache_unpin_range(fx->buf[1], 5, 10);
    finish(fx); /* the dirty pages it evicted reached the host */
}

/* The range's own pages scattered and dirty: they move into the run through the host. */
static void test_own_pages_move(void **state)
{
    (void)state;
    struct fixture *fx = setup_fx(16, 16, pages_std);
    /* interleave buffers 0 and 1 so that buffer 1's pages sit on every other frame */
    for (size_t p = 0; p < 8; p++) {
        assert_int_equal(pagecache_make_resident(fx->buf[0], p, 1, 0, NULL), 0);
        device_write(fx, 1, p, (unsigned char)(0x90 + p));
    }
    assert_int_not_equal(pagecache_page_frame(fx->buf[1], 1), pagecache_page_frame(fx->buf[1], 0) + 1);
    assert_int_equal(pagecache_make_contiguous(fx->buf[1], 0, 8, 0, NULL), 0);
    check_run(fx, 1, 0, 8, NULL);
    finish(fx); /* the moved pages hold the device's bytes, not the host's old ones */
}

/* Already a run: nothing moves. Pinned frames are never taken; own pinned pages fix it. */
static void test_pins(void **state)
{
    (void)state;
    struct fixture *fx = setup_fx(16, 16, pages_std);
    assert_int_equal(pagecache_make_contiguous(fx->buf[1], 0, 6, 0, NULL), 0);
    fake_device_reset_counts(&fx->dev);
    assert_int_equal(pagecache_make_contiguous(fx->buf[1], 0, 6, VAST_PC_PIN, NULL), 0);
    assert_int_equal(fx->dev.writes + fx->dev.reads, 0);
    uint32_t at = pagecache_page_frame(fx->buf[1], 0);
    /* a sub-range and an overlapping range of a pinned run stay where the run is */
    assert_int_equal(pagecache_make_contiguous(fx->buf[1], 2, 8, VAST_PC_PIN, NULL), 0);
    assert_int_equal(pagecache_page_frame(fx->buf[1], 0), at);
    check_run(fx, 1, 0, 10, NULL);
    pagecache_unpin_range(fx->buf[1], 2, 8);
    /* pin buffer 0 on frames around: a window of 7 must avoid them */
    assert_int_equal(pagecache_make_resident(fx->buf[0], 0, 6, VAST_PC_PIN, NULL), 0);
    assert_int_equal(pagecache_make_contiguous(fx->buf[2], 0, 11, VAST_PC_PIN, NULL), VAST_PC_ERR_NO_FRAMES);
    check_pool(fx);
    assert_int_equal(pagecache_make_contiguous(fx->buf[2], 0, 4, VAST_PC_PIN, NULL), 0);
    check_run(fx, 2, 0, 4, NULL);
    for (uint32_t k = 0; k < 4; k++) {
        uint32_t f = pagecache_page_frame(fx->buf[2], k);
        assert_false(f >= at && f < at + 6);
    }
    /* own pages pinned out of order with the asked range: no window can keep them */
    pagecache_unpin_range(fx->buf[1], 0, 6);
    pagecache_unpin_range(fx->buf[2], 0, 4);
    pagecache_unpin_range(fx->buf[0], 0, 6);
    assert_int_equal(pagecache_invalidate_range(fx->buf[1], 0, fx->bytes[1], 0), 0);
    assert_int_equal(pagecache_make_resident(fx->buf[1], 3, 1, VAST_PC_PIN, NULL), 0);
    assert_int_equal(pagecache_make_resident(fx->buf[1], 0, 1, VAST_PC_PIN, NULL), 0);
    if (pagecache_page_frame(fx->buf[1], 3) != pagecache_page_frame(fx->buf[1], 0) + 3)
        assert_int_equal(pagecache_make_contiguous(fx->buf[1], 0, 4, 0, NULL), VAST_PC_ERR_NO_FRAMES);
    pagecache_unpin_range(fx->buf[1], 0, 1);
    pagecache_unpin_range(fx->buf[1], 3, 1);
    assert_int_equal(pagecache_make_contiguous(fx->buf[1], 0, 4, 0, NULL), 0);
    check_run(fx, 1, 0, 4, NULL);
    finish(fx);
}

/* Cheapest window: free frames before clean pages before dirty ones; PACK takes the lowest;
 * a range never spans two chunks. */
static void test_window_choice(void **state)
{
    (void)state;
    struct fixture *fx = setup_fx(24, 8, pages_std); /* chunks of 8 frames */
    for (size_t p = 0; p < 24; p++)
        assert_int_equal(pagecache_make_resident(fx->buf[0], p, 1, 0, NULL), 0);
    for (size_t p = 0; p < 8; p++)
        device_write(fx, 0, p, 0x11); /* chunk 0 dirty, chunk 1 clean */
    for (size_t p = 20; p < 24; p++)
        device_write(fx, 0, p, 0x22); /* chunk 2: four free frames, then four dirty */
    assert_int_equal(pagecache_invalidate_range(fx->buf[0], 16 * PG, 4 * PG, 0), 0);
    fake_device_reset_counts(&fx->dev);
    assert_int_equal(pagecache_make_contiguous(fx->buf[1], 0, 4, 0, NULL), 0);
    assert_int_equal(pagecache_page_frame(fx->buf[1], 0), 16); /* the free frames */
    assert_int_equal(fx->dev.reads, 0);
    /* 6 frames: chunk 1 (6 clean) costs less than chunk 2 (4 clean + 2 dirty) or chunk 0 */
    assert_int_equal(pagecache_make_contiguous(fx->buf[2], 0, 6, 0, NULL), 0);
    uint32_t f = pagecache_page_frame(fx->buf[2], 0);
    assert_true(f >= 8 && f + 6 <= 16);
    assert_int_equal(fx->dev.reads, 0);
    assert_int_equal(pagecache_make_contiguous(fx->buf[2], 10, 9, 0, NULL), VAST_PC_ERR_NO_FRAMES);
    assert_int_equal(pagecache_make_contiguous(fx->buf[2], 10, 4, VAST_PC_PACK, NULL), 0);
    assert_int_equal(pagecache_page_frame(fx->buf[2], 10), 0); /* lowest, dirty or not */
    finish(fx);
}

/* A failed write-back leaves everything where it was; a failed load loses nothing either. */
static void test_failures(void **state)
{
    (void)state;
    struct fixture *fx = setup_fx(12, 12, pages_std);
    for (size_t p = 0; p < 12; p++)
        device_write(fx, p % 2 ? 0 : 1, p / 2, (unsigned char)(0x20 + p));
    uint32_t before[12];
    for (size_t p = 0; p < 6; p++) {
        before[p] = pagecache_page_frame(fx->buf[0], p);
        before[6 + p] = pagecache_page_frame(fx->buf[1], p);
    }
    atomic_store(&fx->dev.fail_read_after, 0);
    assert_int_equal(pagecache_make_contiguous(fx->buf[1], 0, 6, VAST_PC_PIN, NULL), VAST_PC_ERR_TRANSFER);
    atomic_store(&fx->dev.fail_read_after, -1);
    for (size_t p = 0; p < 6; p++) {
        assert_int_equal(pagecache_page_frame(fx->buf[0], p), before[p]);
        assert_int_equal(pagecache_page_frame(fx->buf[1], p), before[6 + p]);
        assert_true(pagecache_page_is_dirty(fx->buf[0], p) && pagecache_page_is_dirty(fx->buf[1], p));
    }
    size_t valid, dirty, pinned;
    pagecache_count_frames(fx->pool, &valid, &dirty, &pinned);
    assert_int_equal(pinned, 0);
    check_pool(fx);
    atomic_store(&fx->dev.fail_write_after, 0);
    assert_int_equal(pagecache_make_contiguous(fx->buf[1], 0, 6, VAST_PC_PIN, NULL), VAST_PC_ERR_TRANSFER);
    atomic_store(&fx->dev.fail_write_after, -1);
    pagecache_count_frames(fx->pool, &valid, &dirty, &pinned);
    assert_int_equal(pinned, 0);
    check_pool(fx);
    check_host(fx);
    assert_int_equal(pagecache_make_contiguous(fx->buf[1], 0, 6, 0, NULL), 0);
    check_run(fx, 1, 0, 6, NULL);
    finish(fx);
}

/* Random steps over three buffers in two chunks: loads, device writes, host writes,
 * contiguous runs with and without pins; the bytes and the bookkeeping after each step. */
static void test_model(void **state)
{
    (void)state;
    struct fixture *fx = setup_fx(40, 20, pages_std);
    uint64_t seed = 0x1234567;
    for (int step = 0; step < 3000; step++) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        int b = (int)(seed % NBUF), op = (int)(seed >> 8) % 5;
        size_t np = (fx->bytes[b] + PG - 1) / PG;
        size_t first = (seed >> 16) % np, count = 1 + (seed >> 32) % 12;
        if (first + count > np)
            count = np - first;
        if (op == 0) {
            assert_int_equal(pagecache_make_resident(fx->buf[b], first, count, 0, NULL), 0);
        } else if (op == 1) {
            device_write(fx, b, first, (unsigned char)step);
        } else if (op == 2) {
            unsigned char v = (unsigned char)(step * 3);
            size_t off = first * PG + 77, n = count * PG;
            if (off + n > fx->bytes[b])
                n = fx->bytes[b] - off;
            unsigned char *src = malloc(n);
            memset(src, v, n);
            memcpy(fx->model[b] + off, src, n);
            assert_int_equal(pagecache_write(fx->buf[b], off, n, src), 0);
            free(src);
        } else {
            /* a second buffer pinned elsewhere first, like a launch binding its arguments */
            int o = (b + 1) % NBUF;
            size_t oc = 1 + (seed >> 40) % 8;
            int pinned_other = op == 4 && pagecache_make_contiguous(fx->buf[o], 0, oc, VAST_PC_PIN, NULL) == 0;
            struct vast_frame_loc locs[12];
            int rc = pagecache_make_contiguous(fx->buf[b], first, count, VAST_PC_PIN, locs);
            if (rc == VAST_PC_ERR_NO_FRAMES)
                rc = pagecache_make_contiguous(fx->buf[b], first, count, VAST_PC_PIN | VAST_PC_PACK, locs);
            assert_true(rc == 0 || (pinned_other && rc == VAST_PC_ERR_NO_FRAMES));
            if (rc == 0) {
                check_run(fx, b, first, count, locs);
                pagecache_unpin_range(fx->buf[b], first, count);
            }
            if (pinned_other)
                pagecache_unpin_range(fx->buf[o], 0, oc);
        }
        check_pool(fx);
    }
    check_host(fx);
    teardown_fx(fx);
}

VAST_CMOCKA_MAIN(NULL, NULL,
                 test_scattered_free, test_own_pages_move, test_pins, test_window_choice, test_failures, test_model)
