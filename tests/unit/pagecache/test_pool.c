/* test_pool.c: deterministic unit tests of the frame pool over the fake device: geometry
 * (budget not a multiple of the page, several chunks), run coalescing with exact transfer
 * counts, clock-sweep eviction order, pins, out-of-frames, release, backing stores,
 * sub-buffers, fault injection (a failed write-back loses nothing), the pool's default shape,
 * page-table entries and host pins through the pool. */
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
#include "pagecache_int.h" /* test_check corrupts page tables */
#include "vast_cmocka.h"

#define PG 4096u

struct fixture {
    struct fake_device dev;
    struct vast_pool *pool;
    struct vast_backing *store;
    struct vast_pc_buffer *buf;
};

static struct fixture *setup_fx(size_t frames, size_t max_chunk_frames, size_t buf_bytes)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    fake_device_init(&fx->dev);
    assert_int_equal(pagecache_create_pool(&fake_device_ops, &fx->dev, frames * PG, PG,
                                           max_chunk_frames * PG, &fx->pool), 0);
    assert_int_equal(pagecache_create_backing(buf_bytes, 0, &fx->store), 0);
    unsigned char *h = pagecache_backing_base(fx->store);
    for (size_t i = 0; i < buf_bytes; i++)
        h[i] = (unsigned char)(i * 7 + i / PG);
    assert_int_equal(pagecache_create_buffer(fx->pool, fx->store, &fx->buf), 0);
    fake_device_reset_counts(&fx->dev);
    return fx;
}

static void teardown_fx(struct fixture *fx)
{
    assert_int_equal(pagecache_release_buffer(fx->buf), 0);
    pagecache_destroy_backing(fx->store);
    pagecache_destroy_pool(fx->pool);
    assert_int_equal(fx->dev.allocs, fx->dev.frees);
    free(fx);
}

static void test_geometry(void **state)
{
    (void)state;
    struct fake_device dev;
    fake_device_init(&dev);
    struct vast_pool *pool;
    /* 10 frames and 100 bytes: rounded down to 10 frames; chunks of at most 3 frames. */
    assert_int_equal(pagecache_create_pool(&fake_device_ops, &dev, 10 * PG + 100, PG, 3 * PG + 5,
                                           &pool), 0);
    assert_int_equal(pool->nframes, 10);
    assert_int_equal(pool->nchunks, 4);
    assert_int_equal(dev.allocs, 4);
    assert_int_equal(dev.alloc_sizes[0], 3 * PG);
    assert_int_equal(dev.alloc_sizes[3], 1 * PG);
    pagecache_destroy_pool(pool);
    assert_int_equal(dev.frees, 4);
    /* invalid: page not a power of two, < 4 KiB, budget below one page */
    assert_int_equal(pagecache_create_pool(&fake_device_ops, &dev, 1 << 20, 6000, 1 << 20, &pool),
                     VAST_PC_ERR_INVALID);
    assert_int_equal(pagecache_create_pool(&fake_device_ops, &dev, 1 << 20, 2048, 1 << 20, &pool),
                     VAST_PC_ERR_INVALID);
    assert_int_equal(pagecache_create_pool(&fake_device_ops, &dev, PG - 1, PG, 1 << 20, &pool),
                     VAST_PC_ERR_INVALID);
    /* the device refuses the third chunk: clean failure, the two others freed */
    fake_device_init(&dev);
    atomic_store(&dev.fail_alloc_after, 2);
    assert_int_equal(pagecache_create_pool(&fake_device_ops, &dev, 10 * PG, PG, 3 * PG, &pool),
                     VAST_PC_ERR_DEVICE_MEMORY);
    assert_int_equal(dev.allocs, 2);
    assert_int_equal(dev.frees, 2);
}

static void check_frames_hold(struct fixture *fx, size_t first, size_t count)
{
    const unsigned char *h = pagecache_backing_base(fx->store);
    for (size_t p = first; p < first + count; p++) {
        uint32_t f = pagecache_page_frame(fx->buf, p);
        assert_int_not_equal(f, VAST_PT_NO_FRAME);
        const unsigned char *d = fake_frame_mem(fx->pool, f);
        size_t n = (p + 1) * PG > pagecache_buffer_size(fx->buf) ? pagecache_buffer_size(fx->buf) - p * PG : PG;
        assert_memory_equal(d, h + p * PG, n);
    }
}

static void test_coalescing(void **state)
{
    (void)state;
    struct fixture *fx = setup_fx(16, 16, 32 * PG);
    struct vast_frame_loc locs[16];
    assert_int_equal(pagecache_make_resident(fx->buf, 0, 4, VAST_PC_PIN, locs), 0);
    assert_int_equal(fx->dev.writes, 1); /* 4 pages, one transfer */
    assert_int_equal(fx->dev.write_bytes, 4 * PG);
    for (int i = 1; i < 4; i++)
        assert_int_equal(locs[i].frame, locs[0].frame + i);
    /* pages 0-3 resident: 0..9 loads only 4..9, again one transfer */
    assert_int_equal(pagecache_make_resident(fx->buf, 0, 10, VAST_PC_PIN, locs), 0);
    assert_int_equal(fx->dev.writes, 2);
    assert_int_equal(fx->dev.write_bytes, 10 * PG);
    check_frames_hold(fx, 0, 10);
    /* dirty 2..7 then flush: one write-back */
    assert_int_equal(pagecache_mark_dirty(fx->buf, 2, 6), 0);
    pagecache_unpin_range(fx->buf, 0, 4);
    pagecache_unpin_range(fx->buf, 0, 10);
    assert_int_equal(pagecache_flush_range(fx->buf, 0, 32 * PG), 0);
    assert_int_equal(fx->dev.reads, 1);
    assert_int_equal(fx->dev.read_bytes, 6 * PG);
    assert_false(pagecache_page_is_dirty(fx->buf, 3));
    /* a flush of a clean range moves nothing */
    assert_int_equal(pagecache_flush_range(fx->buf, 0, 32 * PG), 0);
    assert_int_equal(fx->dev.reads, 1);
    teardown_fx(fx);
}

/* The frames of released buffers are kept warm up to the pool's warm_max; past it the highest
 * ones are given back, in runs, down to half of it; a grant takes the lowest free frame, warm
 * ones included, so the memory the pool commits stays low. Before, every release gave every
 * frame back (madvise and its TLB shootdown on PoCL; the next buffer faulted the pages in
 * again): CLBlast's xgemv spent 40% of its time there. */
static void test_release_warm(void **state)
{
    (void)state;
    struct fixture *fx = setup_fx(16, 6, 8 * PG);
    pagecache_configure_warm(fx->pool, 4 * PG);
    struct vast_pool *pool = fx->pool;
    /* frames 0-7 (chunks of 6: runs 0-5 and 6-7) */
    assert_int_equal(pagecache_make_resident(fx->buf, 0, 8, 0, NULL), 0);
    assert_int_equal(pagecache_release_buffer(fx->buf), 0);
    fx->buf = NULL;
    /* run 0-5: 6 warm > 4, trimmed to 2 by giving back 2-5; then 6-7: 4 warm, kept */
    assert_int_equal(fx->dev.discards, 1);
    assert_int_equal(fx->dev.discard_bytes, 4 * PG);
    assert_int_equal(pool->warm_count, 4);
    bool warm[8] = {true, true, false, false, false, false, true, true};
    for (int f = 0; f < 8; f++)
        assert_int_equal(pool->frames[f].warm, warm[f]);
    assert_null(pagecache_check(pool));
    /* a new buffer of 3 pages takes frames 0-2, the lowest: two of them warm */
    struct vast_backing *store2;
    struct vast_pc_buffer *b2;
    assert_int_equal(pagecache_create_backing(3 * PG, 0, &store2), 0);
    memset(pagecache_backing_base(store2), 0x5a, 3 * PG);
    assert_int_equal(pagecache_create_buffer(pool, store2, &b2), 0);
    assert_int_equal(pagecache_make_resident(b2, 0, 3, VAST_PC_PIN, NULL), 0);
    for (size_t p = 0; p < 3; p++)
        assert_int_equal(pagecache_page_frame(b2, p), p);
    assert_int_equal(pool->warm_count, 2);
    assert_false(pool->frames[0].warm);
    assert_false(pool->frames[1].warm);
    /* its frames hold its own bytes (a warm frame holds the released buffer's until loaded):
     * written back over a zeroed store, they bring 0x5a back */
    assert_int_equal(pagecache_mark_dirty(b2, 0, 3), 0);
    pagecache_unpin_range(b2, 0, 3);
    memset(pagecache_backing_base(store2), 0, 3 * PG);
    assert_int_equal(pagecache_flush_range(b2, 0, 3 * PG), 0);
    for (size_t i = 0; i < 3 * PG; i++)
        assert_int_equal(((unsigned char *)pagecache_backing_base(store2))[i], 0x5a);
    /* with none kept, a release gives its frames back at once */
    pagecache_configure_warm(pool, 0);
    assert_int_equal(pagecache_release_buffer(b2), 0);
    assert_int_equal(fx->dev.discards, 2);
    assert_int_equal(fx->dev.discard_bytes, 7 * PG);
    assert_null(pagecache_check(pool));
    pagecache_destroy_backing(store2);
    pagecache_destroy_backing(fx->store);
    pagecache_destroy_pool(pool);
    assert_int_equal(fx->dev.allocs, fx->dev.frees);
    free(fx);
}

/* Releasing a buffer gives its frames' memory back to the device (ops->discard) in runs of
 * adjacent frames, one run per chunk at most here, and touches no frame of another buffer: the
 * fake poisons what is discarded, so the other buffer's dirty pages must still write back
 * their bytes. Frames freed otherwise (a host write dropping pages) are not given back. */
static void test_release_discards(void **state)
{
    (void)state;
    struct fixture *fx = setup_fx(16, 6, 8 * PG);
    pagecache_configure_warm(fx->pool, 0); /* none kept (test_release_warm) */
    struct vast_backing *store2;
    struct vast_pc_buffer *other;
    assert_int_equal(pagecache_create_backing(4 * PG, 0, &store2), 0);
    unsigned char *h2 = pagecache_backing_base(store2);
    memset(h2, 0x11, 4 * PG);
    assert_int_equal(pagecache_create_buffer(fx->pool, store2, &other), 0);
    /* frames 0-7 for buf (chunks of 6 frames: runs 0-5 and 6-7), 8-11 for other */
    assert_int_equal(pagecache_make_resident(fx->buf, 0, 8, 0, NULL), 0);
    assert_int_equal(pagecache_make_resident(other, 0, 4, VAST_PC_PIN, NULL), 0);
    assert_int_equal(pagecache_mark_dirty(other, 0, 4), 0);
    pagecache_unpin_range(other, 0, 4);
    /* a host write over a whole page frees its frame and gives nothing back */
    assert_int_equal(pagecache_page_frame(fx->buf, 3) != VAST_PT_NO_FRAME, 1);
    struct vast_host_write *tok = NULL;
    assert_int_equal(pagecache_begin_host_write(fx->buf, 3 * PG, PG, &tok), 0);
    assert_int_equal(pagecache_end_host_write(tok), 0);
    assert_int_equal(fx->dev.discards, 0);
    assert_int_equal(pagecache_release_buffer(fx->buf), 0);
    fx->buf = NULL;
    assert_int_equal(fx->dev.discards, 3); /* frames 0-2, 4-5 (3 was freed before), 6-7 */
    assert_int_equal(fx->dev.discard_bytes, 7 * PG);
    assert_null(pagecache_check(fx->pool));
    memset(h2, 0, 4 * PG);
    assert_int_equal(pagecache_flush_range(other, 0, 4 * PG), 0);
    for (size_t i = 0; i < 4 * PG; i++)
        assert_int_equal(h2[i], 0x11);
    struct vast_pool_stats st;
    pagecache_get_pool_stats(fx->pool, &st);
    assert_int_equal(st.discarded_bytes, 7 * PG);
    assert_int_equal(pagecache_release_buffer(other), 0);
    pagecache_destroy_backing(store2);
    pagecache_destroy_backing(fx->store);
    pagecache_destroy_pool(fx->pool);
    free(fx);
}

static void test_coalescing_chunks(void **state)
{
    (void)state;
    /* 12 frames in chunks of 4: a 12-page run needs exactly 3 transfers */
    struct fixture *fx = setup_fx(12, 4, 12 * PG - 100); /* last page partial */
    assert_int_equal(pagecache_make_resident(fx->buf, 0, 12, 0, NULL), 0);
    assert_int_equal(fx->dev.writes, 3);
    assert_int_equal(fx->dev.write_bytes, 12 * PG - 100);
    check_frames_hold(fx, 0, 12);
    teardown_fx(fx);
}

static void test_streaming_runs(void **state)
{
    (void)state;
    /* stream a buffer 8x the pool in pool-sized windows: each window is one load and, once
     * dirty, one write-back, because the clock frees contiguous frames in order */
    struct fixture *fx = setup_fx(16, 16, 128 * PG);
    for (size_t w = 0; w < 8; w++) {
        assert_int_equal(pagecache_make_resident(fx->buf, w * 16, 16, VAST_PC_PIN, NULL), 0);
        assert_int_equal(pagecache_mark_dirty(fx->buf, w * 16, 16), 0);
        pagecache_unpin_range(fx->buf, w * 16, 16);
    }
    assert_int_equal(fx->dev.writes, 8);
    assert_int_equal(fx->dev.reads, 7);
    assert_int_equal(fx->dev.read_bytes, 7 * 16 * PG);
    teardown_fx(fx);
}

static int resident(struct fixture *fx, size_t p)
{
    return pagecache_page_frame(fx->buf, p) != VAST_PT_NO_FRAME;
}

static void test_clock_order(void **state)
{
    (void)state;
    struct fixture *fx = setup_fx(4, 4, 16 * PG);
    for (size_t p = 0; p < 4; p++)
        assert_int_equal(pagecache_make_resident(fx->buf, p, 1, 0, NULL), 0);
    assert_int_equal(pagecache_make_resident(fx->buf, 0, 1, 0, NULL), 0); /* page 0: usage 2 */
    /* sweep: 0:2->1, 1:1->0, 2:1->0, 3:1->0, 0:1->0, 1 is the victim */
    assert_int_equal(pagecache_make_resident(fx->buf, 4, 1, 0, NULL), 0);
    assert_false(resident(fx, 1));
    assert_true(resident(fx, 0) && resident(fx, 2) && resident(fx, 3));
    assert_int_equal(pagecache_make_resident(fx->buf, 5, 1, 0, NULL), 0);
    assert_false(resident(fx, 2));
    assert_int_equal(pagecache_make_resident(fx->buf, 6, 1, 0, NULL), 0);
    assert_false(resident(fx, 3));
    assert_int_equal(pagecache_make_resident(fx->buf, 7, 1, 0, NULL), 0);
    assert_false(resident(fx, 0));
    assert_true(resident(fx, 4) && resident(fx, 5) && resident(fx, 6) && resident(fx, 7));
    struct vast_pool_stats st;
    pagecache_get_pool_stats(fx->pool, &st);
    assert_int_equal(st.evictions, 4);
    assert_int_equal(st.hits, 1);
    assert_int_equal(st.misses, 8);
    teardown_fx(fx);
}

static void test_pins_never_evicted(void **state)
{
    (void)state;
    struct fixture *fx = setup_fx(8, 8, 256 * PG);
    struct vast_frame_loc pinned[3];
    assert_int_equal(pagecache_make_resident(fx->buf, 100, 3, VAST_PC_PIN, pinned), 0);
    srand(42);
    for (int i = 0; i < 2000; i++) {
        size_t p = (size_t)rand() % 250, n = 1 + (size_t)rand() % 5;
        if (p >= 97 && p <= 102)
            continue;
        assert_int_equal(pagecache_make_resident(fx->buf, p, n, 0, NULL), 0);
        for (size_t k = 0; k < 3; k++)
            assert_int_equal(pagecache_page_frame(fx->buf, 100 + k), pinned[k].frame);
    }
    check_frames_hold(fx, 100, 3);
    /* release refuses while pinned */
    assert_int_equal(pagecache_release_buffer(fx->buf), VAST_PC_ERR_PINNED);
    pagecache_unpin_range(fx->buf, 100, 3);
    teardown_fx(fx);
}

static void test_out_of_frames(void **state)
{
    (void)state;
    struct fixture *fx = setup_fx(4, 4, 64 * PG);
    assert_int_equal(pagecache_make_resident(fx->buf, 0, 5, VAST_PC_PIN, NULL),
                     VAST_PC_ERR_NO_FRAMES); /* more than the pool */
    assert_int_equal(pagecache_make_resident(fx->buf, 0, 3, VAST_PC_PIN, NULL), 0);
    /* one frame left, two missing pages: all or nothing */
    assert_int_equal(pagecache_make_resident(fx->buf, 10, 2, VAST_PC_PIN, NULL),
                     VAST_PC_ERR_NO_FRAMES);
    assert_false(resident(fx, 10) || resident(fx, 11));
    size_t valid, dirty, pinned;
    pagecache_count_frames(fx->pool, &valid, &dirty, &pinned);
    assert_int_equal(pinned, 3);
    assert_int_equal(pagecache_make_resident(fx->buf, 10, 1, VAST_PC_PIN, NULL), 0);
    assert_int_equal(pagecache_make_resident(fx->buf, 20, 1, VAST_PC_PIN, NULL),
                     VAST_PC_ERR_NO_FRAMES); /* everything pinned */
    assert_string_equal(pagecache_status_string(VAST_PC_ERR_NO_FRAMES),
                        "no evictable frame: every frame is pinned");
    pagecache_unpin_range(fx->buf, 0, 3);
    pagecache_unpin_range(fx->buf, 10, 1);
    assert_int_equal(pagecache_make_resident(fx->buf, 20, 4, 0, NULL), 0);
    teardown_fx(fx);
}

/* Write "kernel" data into resident pinned pages, mark them dirty. */
static void device_write(struct fixture *fx, size_t page, unsigned char v)
{
    struct vast_frame_loc loc;
    assert_int_equal(pagecache_make_resident(fx->buf, page, 1, VAST_PC_PIN, &loc), 0);
    memset(fake_chunk_mem(loc.chunk) + loc.offset, v, PG);
    assert_int_equal(pagecache_mark_dirty(fx->buf, page, 1), 0);
    pagecache_unpin_range(fx->buf, page, 1);
}

static void test_writeback_fault(void **state)
{
    (void)state;
    struct fixture *fx = setup_fx(2, 2, 8 * PG);
    device_write(fx, 0, 0x11);
    device_write(fx, 1, 0x22);
    atomic_store(&fx->dev.fail_read_after, 0);
    assert_int_equal(pagecache_make_resident(fx->buf, 5, 1, 0, NULL), VAST_PC_ERR_TRANSFER);
    assert_true(pagecache_page_is_dirty(fx->buf, 0) && pagecache_page_is_dirty(fx->buf, 1));
    assert_false(resident(fx, 5));
    /* a failed load after a good write-back: the victim is on the host, the page not loaded */
    atomic_store(&fx->dev.fail_read_after, -1);
    atomic_store(&fx->dev.fail_write_after, 0);
    assert_int_equal(pagecache_make_resident(fx->buf, 5, 1, 0, NULL), VAST_PC_ERR_TRANSFER);
    assert_false(resident(fx, 5));
    atomic_store(&fx->dev.fail_write_after, -1);
    unsigned char out[2 * PG];
    assert_int_equal(pagecache_read(fx->buf, 0, 2 * PG, out), 0);
    for (size_t i = 0; i < PG; i++)
        assert_true(out[i] == 0x11 && out[PG + i] == 0x22);
    /* flush failure: still dirty afterwards */
    device_write(fx, 3, 0x33);
    atomic_store(&fx->dev.fail_read_after, 0);
    assert_int_equal(pagecache_flush_range(fx->buf, 3 * PG, 1), VAST_PC_ERR_TRANSFER);
    assert_true(pagecache_page_is_dirty(fx->buf, 3));
    atomic_store(&fx->dev.fail_read_after, -1);
    assert_int_equal(pagecache_read(fx->buf, 3 * PG + 10, 1, out), 0);
    assert_int_equal(out[0], 0x33);
    teardown_fx(fx);
}

/* VAST_PC_NO_LOAD (README "Pages a kernel overwrites"): missing pages get frames with no
 * transfer (dirty victims are still written back first), resident ones stay as they are; a
 * page marked dirty is written back with the kernel's bytes; one whose pins all go without
 * mark_dirty (a failed run) is dropped, so the host keeps its bytes and a later load reads
 * them, never the frame's. Without a pin the flag is refused. */
static void test_no_load(void **state)
{
    (void)state;
    struct fixture *fx = setup_fx(4, 4, 16 * PG);
    const unsigned char *h = pagecache_backing_base(fx->store);
    unsigned char before[PG];
    memcpy(before, h + 6 * PG, PG);
    struct vast_frame_loc locs[4];
    assert_int_equal(pagecache_make_resident(fx->buf, 5, 1, VAST_PC_NO_LOAD, NULL), VAST_PC_ERR_INVALID);
    device_write(fx, 0, 0x11); /* dirty: the victims of the next call */
    device_write(fx, 1, 0x12);
    device_write(fx, 2, 0x13);
    device_write(fx, 3, 0x14);
    fake_device_reset_counts(&fx->dev);
    assert_int_equal(pagecache_make_resident(fx->buf, 5, 2, VAST_PC_PIN | VAST_PC_NO_LOAD, locs), 0);
    assert_int_equal(fx->dev.writes, 0);          /* nothing loaded */
    assert_int_equal(fx->dev.read_bytes, 2 * PG); /* the victims written back */
    assert_null(pagecache_check(fx->pool));
    struct vast_pool_stats st;
    pagecache_get_pool_stats(fx->pool, &st);
    assert_int_equal(st.noload_bytes, 2 * PG);
    uint64_t h2d, noload;
    pagecache_buffer_traffic(fx->buf, &h2d, &noload);
    assert_int_equal(noload, 2 * PG);
    /* page 5 overwritten and marked dirty; page 6's run failed: never marked */
    memset(fake_chunk_mem(locs[0].chunk) + locs[0].offset, 0x55, PG);
    memset(fake_chunk_mem(locs[1].chunk) + locs[1].offset, 0x66, PG);
    assert_int_equal(pagecache_mark_dirty(fx->buf, 5, 1), 0);
    pagecache_unpin_range(fx->buf, 5, 2);
    assert_null(pagecache_check(fx->pool));
    assert_true(resident(fx, 5) && pagecache_page_is_dirty(fx->buf, 5));
    assert_false(resident(fx, 6)); /* dropped, not written back */
    assert_int_equal(pagecache_flush_range(fx->buf, 0, 16 * PG), 0);
    for (size_t i = 0; i < PG; i++)
        assert_int_equal(h[5 * PG + i], 0x55);
    assert_memory_equal(h + 6 * PG, before, PG);
    /* a later load of page 6 reads the host's bytes */
    assert_int_equal(pagecache_make_resident(fx->buf, 6, 1, VAST_PC_PIN, locs), 0);
    check_frames_hold(fx, 6, 1);
    /* a resident page keeps its frame and bytes under NO_LOAD */
    assert_int_equal(pagecache_make_resident(fx->buf, 6, 1, VAST_PC_PIN | VAST_PC_NO_LOAD, locs), 0);
    pagecache_unpin_range(fx->buf, 6, 1);
    pagecache_unpin_range(fx->buf, 6, 1);
    assert_true(resident(fx, 6));
    check_frames_hold(fx, 6, 1);
    assert_null(pagecache_check(fx->pool));
    teardown_fx(fx);
}

static void test_host_write_update(void **state)
{
    (void)state;
    struct fixture *fx = setup_fx(8, 8, 16 * PG);
    device_write(fx, 1, 0x44); /* dirty page 1 */
    assert_int_equal(pagecache_make_resident(fx->buf, 2, 1, 0, NULL), 0); /* clean page 2 */
    uint32_t v1 = pagecache_page_version(fx->buf, 1);
    fake_device_reset_counts(&fx->dev);
    /* the host writes 100 bytes inside page 1 and all of page 2 */
    unsigned char src[PG + 200];
    memset(src, 0x55, sizeof src);
    assert_int_equal(pagecache_write(fx->buf, PG + 2000, 100, src), 0);
    assert_int_equal(fx->dev.writes, 1); /* update of the 100 bytes, no write-back */
    assert_int_equal(fx->dev.write_bytes, 100);
    assert_true(pagecache_page_is_dirty(fx->buf, 1));
    assert_int_equal(pagecache_page_version(fx->buf, 1), v1 + 1);
    assert_int_equal(pagecache_write(fx->buf, 2 * PG, PG, src), 0);
    assert_false(resident(fx, 2)); /* wholly covered, unpinned: dropped */
    unsigned char out[PG];
    assert_int_equal(pagecache_read(fx->buf, PG, PG, out), 0);
    for (size_t i = 0; i < PG; i++)
        assert_int_equal(out[i], i >= 2000 && i < 2100 ? 0x55 : 0x44);
    /* fill with a 3-byte pattern, copy within the buffer */
    const unsigned char pat[3] = {1, 2, 3};
    assert_int_equal(pagecache_fill(fx->buf, 3 * PG, 3 * 100, pat, 3), 0);
    assert_int_equal(pagecache_copy(fx->buf, 8 * PG, fx->buf, 3 * PG, 300), 0);
    assert_int_equal(pagecache_read(fx->buf, 8 * PG, 300, out), 0);
    for (size_t i = 0; i < 300; i++)
        assert_int_equal(out[i], pat[i % 3]);
    teardown_fx(fx);
}

static void test_map_discard(void **state)
{
    (void)state;
    struct fixture *fx = setup_fx(8, 8, 16 * PG);
    device_write(fx, 4, 0x66);
    device_write(fx, 5, 0x77);
    fake_device_reset_counts(&fx->dev);
    void *p;
    /* map for write with invalidate-region over page 4 and half of 5: only 5 written back */
    assert_int_equal(pagecache_map(fx->buf, 4 * PG, PG + PG / 2, 1, 1, &p), 0);
    assert_ptr_equal(p, (char *)pagecache_backing_base(fx->store) + 4 * PG);
    assert_int_equal(fx->dev.reads, 1);
    assert_int_equal(fx->dev.read_bytes, PG);
    assert_false(resident(fx, 4) || resident(fx, 5));
    assert_int_equal(((unsigned char *)p)[PG], 0x77);
    memset(p, 0x12, 8);
    assert_int_equal(pagecache_unmap(fx->buf, 4 * PG, PG + PG / 2, 1), 0);
    /* map for read flushes */
    device_write(fx, 6, 0x88);
    assert_int_equal(pagecache_map(fx->buf, 6 * PG, 10, 0, 0, &p), 0);
    assert_int_equal(*(unsigned char *)p, 0x88);
    assert_true(resident(fx, 6) && !pagecache_page_is_dirty(fx->buf, 6));
    teardown_fx(fx);
}

static void test_sub_buffer(void **state)
{
    (void)state;
    struct fixture *fx = setup_fx(8, 8, 16 * PG);
    struct vast_pc_buffer *sub;
    assert_int_equal(pagecache_create_sub_buffer(fx->buf, 5000, 10000, &sub), 0);
    struct vast_pc_buffer *bad = NULL;
    assert_int_equal(pagecache_create_sub_buffer(fx->buf, 16 * PG - 10, 11, &bad),
                     VAST_PC_ERR_INVALID);
    size_t first, count;
    assert_int_equal(pagecache_page_range(sub, 0, 10000, &first, &count), 0);
    assert_int_equal(first, 1);
    assert_int_equal(count, 3); /* bytes 5000..14999: pages 1..3 */
    device_write(fx, 2, 0x99);
    unsigned char out[16];
    assert_int_equal(pagecache_read(sub, 2 * PG - 5000, 16, out), 0); /* flushes through the parent */
    assert_int_equal(out[0], 0x99);
    assert_int_equal(pagecache_write(sub, 0, 4, "abcd"), 0);
    assert_memory_equal((char *)pagecache_backing_base(fx->store) + 5000, "abcd", 4);
    assert_int_equal(pagecache_read(sub, 10000, 1, out), VAST_PC_ERR_INVALID);
    assert_int_equal(pagecache_release_buffer(sub), 0);
    teardown_fx(fx);
}

static size_t rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, res = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &size, &res) != 2)
            res = 0;
        fclose(f);
    }
    return res * 4096;
}

static void test_backing(void **state)
{
    (void)state;
    struct vast_backing *b;
    assert_int_equal(pagecache_create_backing((size_t)1 << 40, (size_t)1 << 30, &b),
                     VAST_PC_ERR_HOST_MEMORY);
    assert_int_equal(pagecache_create_backing(0, 0, &b), VAST_PC_ERR_INVALID);
    /* 4 GiB costs nothing until touched */
    size_t before = rss_bytes();
    assert_int_equal(pagecache_create_backing((size_t)4 << 30, (size_t)1 << 40, &b), 0);
    ((char *)pagecache_backing_base(b))[((size_t)4 << 30) - 1] = 1;
    assert_true(rss_bytes() < before + (64u << 20));
    /* lazy pin granules through a pool */
    struct fake_device dev;
    struct vast_pool *pool = fake_pool_open(&dev, PG, 16, 16);
    assert_non_null(pool);
    struct vast_pc_buffer *buf;
    pagecache_set_pin_granule(b, 1 << 20);
    assert_int_equal(pagecache_create_buffer(pool, b, &buf), 0);
    assert_int_equal(pagecache_make_resident(buf, 300, 2, 0, NULL), 0);
    assert_int_equal(pagecache_backing_pinned_granules(b), 1);
    assert_int_equal(pagecache_make_resident(buf, 255, 2, 0, NULL), 0); /* crosses 1 MiB */
    assert_int_equal(pagecache_backing_pinned_granules(b), 2);
    assert_int_equal(pagecache_release_buffer(buf), 0);
    pagecache_destroy_backing(b);
    assert_int_equal(dev.unpins, 2);
    pagecache_destroy_pool(pool);
    /* a released small store is kept and given to the next store of its size, committed and
     * writable */
    assert_int_equal(pagecache_create_backing(5 * PG + 1, 0, &b), 0);
    void *kept = pagecache_backing_base(b);
    memset(kept, 0x3c, 5 * PG + 1);
    pagecache_destroy_backing(b);
    assert_int_equal(pagecache_create_backing(6 * PG, 0, &b), 0);
    assert_ptr_equal(pagecache_backing_base(b), kept);
    assert_int_equal(((unsigned char *)pagecache_backing_base(b))[5 * PG], 0x3c); /* not a fresh (zero) mapping */
    memset(pagecache_backing_base(b), 0x3d, 6 * PG);
    struct vast_backing *other;
    assert_int_equal(pagecache_create_backing(6 * PG, 0, &other), 0); /* none kept: a new one */
    assert_ptr_not_equal(pagecache_backing_base(other), kept);
    void *six = pagecache_backing_base(other);
    memset(six, 0x3e, 6 * PG);
    pagecache_destroy_backing(other);
    pagecache_destroy_backing(b); /* kept: two stores of 6 pages, 0x3e and 0x3d */
    /* a store takes a kept one of its mapped size to twice it; under half a kept one's size it
     * maps its own (CLBlast's xim2col: every case's buffers of other sizes) */
    assert_int_equal(pagecache_create_backing(2 * PG, 0, &b), 0);
    assert_true(pagecache_backing_base(b) != kept && pagecache_backing_base(b) != six);
    assert_int_equal(pagecache_create_backing(3 * PG + 1, 0, &other), 0);
    assert_true(pagecache_backing_base(other) == kept || pagecache_backing_base(other) == six);
    pagecache_destroy_backing(other);
    pagecache_destroy_backing(b);
    /* the list full (64 stores), each store released unmaps the oldest kept one: the stores
     * of 6 pages are gone, a new one is a fresh (zero) mapping */
    struct vast_backing *many[70];
    for (int i = 0; i < 70; i++)
        assert_int_equal(pagecache_create_backing(PG, 0, &many[i]), 0);
    for (int i = 0; i < 70; i++)
        pagecache_destroy_backing(many[i]);
    assert_int_equal(pagecache_create_backing(6 * PG, 0, &b), 0);
    assert_int_equal(((unsigned char *)pagecache_backing_base(b))[0], 0);
    pagecache_destroy_backing(b);
    /* the application's memory */
    char app[3 * PG];
    assert_int_equal(pagecache_wrap_backing(app, sizeof app, &b), 0);
    assert_ptr_equal(pagecache_backing_base(b), app);
    pagecache_destroy_backing(b);
}

/* The pool's shape from the device's facts: defaults and what the configuration fixes. */
static void test_pool_shape(void **state)
{
    (void)state;
    const uint64_t G = 1ull << 30;
    struct vast_pool_shape s = pagecache_pool_shape(16 * G, 4 * G, 0, 0);
    assert_int_equal(s.budget, 12 * G); /* three quarters of the device */
    assert_int_equal(s.page_size, 64 << 10);
    assert_int_equal(s.max_chunk, 4 * G);
    /* a small budget gets smaller pages, so that it holds VAST_POOL_MIN_FRAMES frames ... */
    s = pagecache_pool_shape(16 * G, 4 * G, 16 << 20, 0);
    assert_int_equal(s.budget, 16 << 20);
    assert_int_equal(s.page_size, 16 << 10);
    /* ... but never below 4 KiB */
    s = pagecache_pool_shape(16 * G, 4 * G, 1 << 20, 0);
    assert_int_equal(s.page_size, 4096);
    /* a configured page stays, however few frames; chunks are whole pages */
    s = pagecache_pool_shape(16 * G, (1 << 20) + 12345, 1 << 20, 256 << 10);
    assert_int_equal(s.page_size, 256 << 10);
    assert_int_equal(s.max_chunk, 1 << 20);
}

/* Page-table entries (the paged kernels' ABI, translate.h): chunk in the top bits, the frame's
 * index in its chunk below, decoded back to the frame's device location. */
static void test_frame_entry(void **state)
{
    (void)state;
    struct fake_device dev;
    fake_device_init(&dev);
    struct vast_pool *pool;
    assert_int_equal(pagecache_create_pool(&fake_device_ops, &dev, 10 * PG, PG, 3 * PG, &pool), 0);
    assert_int_equal(pagecache_frame_entry(pool, 0), 0);
    assert_int_equal(pagecache_frame_entry(pool, 2), 2);
    assert_int_equal(pagecache_frame_entry(pool, 3), 1u << 30);
    assert_int_equal(pagecache_frame_entry(pool, 7), 2u << 30 | 1);
    assert_int_equal(pagecache_frame_entry(pool, 9), 3u << 30);
    for (uint32_t f = 0; f < pool->nframes; f++) {
        uint32_t e = pagecache_frame_entry(pool, f);
        assert_int_not_equal(e, VAST_PC_NO_ENTRY);
        assert_ptr_equal(pagecache_entry_chunk(pool, e), pagecache_frame_chunk(pool, f));
        assert_int_equal(pagecache_entry_offset(pool, e), pagecache_frame_offset(pool, f));
    }
    pagecache_destroy_pool(pool);
}

/* Host memory pinned through the pool's device; a device that refuses leaves no pin. */
static void test_pin_host(void **state)
{
    (void)state;
    struct fake_device dev;
    fake_device_init(&dev);
    struct vast_pool *pool;
    assert_int_equal(pagecache_create_pool(&fake_device_ops, &dev, 4 * PG, PG, 4 * PG, &pool), 0);
    char mem[PG];
    vast_host_pin pin = NULL;
    assert_int_equal(pagecache_pin_host(pool, mem, sizeof mem, &pin), VAST_PC_OK);
    assert_non_null(pin);
    assert_int_equal(dev.pins, 1);
    pagecache_unpin_host(pool, pin);
    assert_int_equal(dev.unpins, 1);
    dev.no_pin = 1;
    assert_int_equal(pagecache_pin_host(pool, mem, sizeof mem, &pin), VAST_PC_ERR_UNSUPPORTED);
    assert_null(pin);
    pagecache_unpin_host(pool, pin); /* nothing to drop */
    assert_int_equal(dev.unpins, 1);
    pagecache_destroy_pool(pool);
}

/* pagecache_check finds each corruption of the bookkeeping, and nothing once it is undone. */
static void expect_bad(struct vast_pool *pool, const char *words)
{
    const char *bad = pagecache_check(pool);
    if (!bad || !strstr(bad, words))
        fail_msg("pagecache_check: got \"%s\", expected \"%s\"", bad ? bad : "(ok)", words);
}

static void test_check(void **state)
{
    (void)state;
    struct fixture *fx = setup_fx(8, 4, 16 * PG - 5);
    struct vast_frame_loc locs[4];
    assert_int_equal(pagecache_make_resident(fx->buf, 2, 4, VAST_PC_PIN, locs), 0);
    assert_int_equal(pagecache_mark_dirty(fx->buf, 3, 1), 0);
    pagecache_unpin_range(fx->buf, 2, 3); /* page 5 stays pinned */
    assert_null(pagecache_check(fx->pool));
    struct vast_pool *pool = fx->pool;
    uint32_t f = locs[1].frame, free_f = VAST_PT_NO_FRAME;
    for (uint32_t i = 0; i < pool->nframes && free_f == VAST_PT_NO_FRAME; i++)
        if (atomic_load(&pool->frames[i].state) == 0)
            free_f = i;
    assert_int_not_equal(free_f, VAST_PT_NO_FRAME);
    _Atomic uint32_t *fs = &pool->frames[free_f].state;

    /* a free frame that is dirty, pinned, or used */
    const uint32_t junk[] = {VAST_FS_DIRTY, VAST_FS_PIN_ONE, VAST_FS_USAGE_ONE};
    for (size_t i = 0; i < 3; i++) {
        atomic_store(fs, junk[i]);
        expect_bad(pool, "holds no page");
        atomic_store(fs, 0);
        assert_null(pagecache_check(pool));
    }
    /* a usage count past its maximum, an unknown bit */
    uint32_t s = atomic_load(&pool->frames[f].state);
    uint32_t over = (VAST_FS_USAGE_MAX + 1) << VAST_FS_USAGE_SHIFT;
    atomic_store(&pool->frames[f].state, (s & ~VAST_FS_USAGE_MASK) | over);
    expect_bad(pool, "usage count");
    atomic_store(&pool->frames[f].state, s | 1u << 30);
    expect_bad(pool, "unknown bits");
    atomic_store(&pool->frames[f].state, s);
    /* frame -> page: the frame names another page than the one mapping it */
    pool->frames[f].page = 9;
    expect_bad(pool, "does not name it");
    pool->frames[f].page = 3;
    /* page -> frame: an absent page mapped onto a frame holding another page */
    pagecache_pt_set_frame(&fx->buf->pt, 10, f);
    expect_bad(pool, "page 10 maps to frame");
    pagecache_pt_set_frame(&fx->buf->pt, 10, VAST_PT_NO_FRAME);
    /* a frame given without a load must stay pinned */
    atomic_store(&pool->frames[f].state, (s & ~VAST_FS_PIN_MASK) | VAST_FS_UNLOADED);
    expect_bad(pool, "without a load");
    atomic_store(&pool->frames[f].state, s);
    /* a write-back target outside I/O */
    pool->frames[f].evicting = fx->buf;
    expect_bad(pool, "without I/O");
    pool->frames[f].evicting = NULL;
    /* the free count */
    pool->free_count++;
    expect_bad(pool, "free count");
    pool->free_count--;
    /* a page in a chunk not marked used (paged kernels would not get that chunk) */
    uint32_t used = atomic_load(&pool->chunks_used);
    atomic_store(&pool->chunks_used, used & ~pagecache_frame_chunk_bit(pool, f));
    expect_bad(pool, "not marked used");
    atomic_store(&pool->chunks_used, used);
    assert_null(pagecache_check(pool));
    pagecache_unpin_range(fx->buf, 5, 1);
    teardown_fx(fx);
}

/* The chunks marked used are those whose frames were granted (free frames lowest first): a
 * pool of four chunks of 4 frames marks none at first, chunk 0 for 3 pages, chunks 0-2 for 10
 * (and keeps the marks when the pages go). */
static void test_chunks_used(void **state)
{
    (void)state;
    struct fixture *fx = setup_fx(16, 4, 16 * PG);
    assert_int_equal(fx->pool->nchunks, 4);
    assert_int_equal(pagecache_chunks_used(fx->pool), 0);
    assert_int_equal(pagecache_make_resident(fx->buf, 0, 3, 0, NULL), 0);
    assert_int_equal(pagecache_chunks_used(fx->pool), 0x1);
    assert_int_equal(pagecache_make_resident(fx->buf, 3, 7, 0, NULL), 0);
    assert_int_equal(pagecache_chunks_used(fx->pool), 0x7);
    assert_null(pagecache_check(fx->pool));
    assert_int_equal(pagecache_invalidate_range(fx->buf, 0, 16 * PG, 0), 0);
    assert_int_equal(pagecache_chunks_used(fx->pool), 0x7);
    teardown_fx(fx);
}

/* The overdraft (overdraft.c): frames past the budget are granted only while lent; ending
 * the loan writes back the dirty pages in them, drops their pages and leaves the budget. */
static void test_overdraft(void **state)
{
    (void)state;
    struct fixture *fx = calloc(1, sizeof *fx);
    fake_device_init(&fx->dev);
    assert_int_equal(pagecache_create_pool_overdraft(&fake_device_ops, &fx->dev, 4 * PG, 3 * PG, PG, 16 * PG,
                                                     &fx->pool), 0);
    assert_int_equal(fx->pool->nframes, 4);
    assert_int_equal(fx->pool->overdraft, 3);
    assert_int_equal(pagecache_create_backing(16 * PG, 0, &fx->store), 0);
    assert_int_equal(pagecache_create_buffer(fx->pool, fx->store, &fx->buf), 0);
    /* without a loan: the budget */
    assert_int_equal(pagecache_make_resident(fx->buf, 0, 6, VAST_PC_PIN, NULL), VAST_PC_ERR_NO_FRAMES);
    assert_int_equal(pagecache_overdraft_begin(fx->pool, 4), VAST_PC_ERR_NO_FRAMES);
    assert_int_equal(pagecache_overdraft_begin(fx->pool, 2), 0);
    struct vast_frame_loc locs[6];
    assert_int_equal(pagecache_make_resident(fx->buf, 0, 6, VAST_PC_PIN, locs), 0);
    for (size_t p = 0; p < 6; p++) {
        memset(fake_chunk_mem(locs[p].chunk) + locs[p].offset, 0x40 + (int)p, PG);
        assert_true(locs[p].frame < 6);
    }
    assert_int_equal(pagecache_mark_dirty(fx->buf, 0, 6), 0);
    assert_null(pagecache_check(fx->pool));
    /* pinned pages in lent frames: the loan cannot end */
    assert_int_equal(pagecache_overdraft_end(fx->pool), VAST_PC_ERR_PINNED);
    pagecache_unpin_range(fx->buf, 0, 6);
    assert_int_equal(pagecache_overdraft_end(fx->pool), 0);
    assert_null(pagecache_check(fx->pool));
    size_t valid, dirty, pinned;
    pagecache_count_frames(fx->pool, &valid, &dirty, &pinned);
    assert_int_equal(valid, 4); /* the pages of the lent frames left */
    for (uint32_t f = 4; f < 7; f++)
        assert_int_equal(atomic_load(&fx->pool->frames[f].state), 0);
    struct vast_pool_stats st;
    pagecache_get_pool_stats(fx->pool, &st);
    assert_int_equal(st.overdrafts, 1);
    assert_int_equal(st.overdraft_max_frames, 2);
    assert_int_equal(st.overdraft_write_backs, 2);
    /* every byte survives: the ones written back by the end and the ones still resident */
    unsigned char out[6 * PG];
    assert_int_equal(pagecache_read(fx->buf, 0, 6 * PG, out), 0);
    for (size_t i = 0; i < 6 * PG; i++)
        assert_int_equal(out[i], 0x40 + (int)(i / PG));
    /* the budget again */
    assert_int_equal(pagecache_make_resident(fx->buf, 8, 5, VAST_PC_PIN, NULL), VAST_PC_ERR_NO_FRAMES);
    teardown_fx(fx);
}

VAST_CMOCKA_MAIN(NULL, NULL,
                 test_geometry, test_coalescing, test_release_discards, test_release_warm, test_coalescing_chunks, test_streaming_runs,
                 test_clock_order, test_pins_never_evicted, test_out_of_frames,
                 test_writeback_fault, test_host_write_update, test_map_discard, test_sub_buffer,
                 test_backing, test_pool_shape, test_frame_entry, test_pin_host, test_check, test_chunks_used, test_no_load,
                 test_overdraft)
