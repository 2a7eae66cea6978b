/* test_hostcopy.c: host-side bulk copies split over copy threads (copypool.h, hostcopy.h).
 * The copy pool's memcpy and periodic fill over 1/2/3/5 threads, odd sizes, odd source and
 * destination alignments, against a plain reference; pagecache_host_copy's overlap rule
 * (memmove); Read/Write/Fill/Copy on virtual buffers with the parallel path forced at every
 * size (parallel_min 1, 4 KiB parts, 3 threads) over a fake device, with dirty and clean
 * resident pages in and at the edges of each range: results byte-identical to a shadow copy,
 * resident copies equal to the host after each host write, dirty pages flushed before reads;
 * four threads sharing the process pool; THP-aligned backing stores. */
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
#include "vast_cmocka.h"

#define PG 4096u

static uint32_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

static void fill_random(unsigned char *p, size_t n, uint64_t *s)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)rnd(s);
}

static const size_t odd_sizes[] = {1, 3, 4095, 4097, 3 * PG - 1, (128u << 10) + 3,
                                   (1u << 20) + 12345, (3u << 20) + 1};
static const size_t odd_offsets[] = {0, 1, 7, 4093};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ---------- the copy pool itself ---------- */

static void test_copy_pool_odd(void **state)
{
    (void)state;
    const unsigned threads[] = {1, 2, 3, 5};
    size_t cap = (4u << 20) + 2 * PG;
    unsigned char *src = malloc(cap), *dst = malloc(cap), *ref = malloc(cap);
    uint64_t seed = 99;
    fill_random(src, cap, &seed);
    for (size_t t = 0; t < NELEM(threads); t++) {
        for (int small_parts = 0; small_parts < 2; small_parts++) {
            struct vast_copy_pool *p;
            assert_int_equal(pagecache_create_copy_pool(threads[t], &p), 0);
            if (small_parts)
                pagecache_copy_pool_set_min_part(p, 1); /* rounded up to a page */
            for (size_t s = 0; s < NELEM(odd_sizes); s++)
                for (size_t a = 0; a < NELEM(odd_offsets); a++) {
                    size_t n = odd_sizes[s], so = odd_offsets[a], d = odd_offsets[(a + s) % 4];
                    memset(dst, 0xEE, cap);
                    memcpy(ref, dst, cap);
                    memcpy(ref + d, src + so, n);
                    pagecache_copy_parallel(p, dst + d, src + so, n);
                    assert_memory_equal(dst, ref, cap);
                }
            /* periodic fill: block lengths that do not divide the parts */
            const size_t blocks[] = {1, 3, 128, PG + 5, 65536};
            for (size_t b = 0; b < NELEM(blocks); b++)
                for (size_t s = 0; s < NELEM(odd_sizes); s++) {
                    size_t n = odd_sizes[s], d = odd_offsets[(b + s) % 4];
                    memset(dst, 0xEE, cap);
                    memcpy(ref, dst, cap);
                    for (size_t i = 0; i < n; i++)
                        ref[d + i] = src[i % blocks[b]];
                    pagecache_fill_parallel(p, dst + d, n, src, blocks[b]);
                    assert_memory_equal(dst, ref, cap);
                }
            pagecache_destroy_copy_pool(p);
        }
    }
    free(src);
    free(dst);
    free(ref);
}

/* ---------- pagecache_host_copy / _fill ---------- */

static void force_parallel(unsigned threads)
{
    pagecache_host_copy_shutdown();
    struct vast_host_copy_config cfg = {.threads = threads, .parallel_min = 1, .min_part = 1};
    assert_int_equal(pagecache_configure_host_copy(&cfg), 0);
}

static void back_to_defaults(void)
{
    pagecache_host_copy_shutdown();
    assert_int_equal(pagecache_configure_host_copy(NULL), 0);
}

static void test_host_copy_fns(void **state)
{
    (void)state;
    force_parallel(3);
    size_t cap = (4u << 20) + 2 * PG;
    unsigned char *src = malloc(cap), *dst = malloc(cap), *ref = malloc(cap);
    uint64_t seed = 7;
    fill_random(src, cap, &seed);
    struct vast_host_copy_stats st0, st1;
    pagecache_get_host_copy_stats(&st0);
    for (size_t s = 0; s < NELEM(odd_sizes); s++)
        for (size_t a = 0; a < NELEM(odd_offsets); a++) {
            size_t n = odd_sizes[s], so = odd_offsets[a], d = odd_offsets[3 - a];
            memset(dst, 0xEE, cap);
            memcpy(ref, dst, cap);
            memcpy(ref + d, src + so, n);
            pagecache_host_copy(dst + d, src + so, n);
            assert_memory_equal(dst, ref, cap);
        }
    pagecache_get_host_copy_stats(&st1);
    assert_int_equal(st1.threads, 3);
    assert_int_equal(st1.parallel - st0.parallel, NELEM(odd_sizes) * NELEM(odd_offsets));
    /* overlapping ranges, both directions: memmove in the caller */
    size_t n = (1u << 20) + 333;
    for (int dir = 0; dir < 2; dir++) {
        memcpy(dst, src, cap);
        memcpy(ref, src, cap);
        size_t from = dir ? 5000 : 0, to = dir ? 0 : 5000;
        memmove(ref + to, ref + from, n);
        pagecache_host_copy(dst + to, dst + from, n);
        assert_memory_equal(dst, ref, cap);
    }
    pagecache_get_host_copy_stats(&st0);
    assert_int_equal(st0.plain - st1.plain, 2);
    /* fills: every OpenCL pattern size, odd destinations, sizes below and above the block */
    for (size_t psz = 1; psz <= 128; psz *= 2)
        for (size_t s = 0; s < NELEM(odd_sizes); s++) {
            size_t len = odd_sizes[s] / psz * psz, d = odd_offsets[(psz + s) % 4];
            memset(dst, 0xEE, cap);
            memcpy(ref, dst, cap);
            for (size_t i = 0; i < len; i++)
                ref[d + i] = src[i % psz];
            pagecache_host_fill(dst + d, len, src, psz);
            assert_memory_equal(dst, ref, cap);
        }
    /* a pattern that does not divide the length, and one longer than it */
    memset(dst, 0xEE, cap);
    memcpy(ref, dst, cap);
    for (size_t i = 0; i < (1u << 20) + 1; i++)
        ref[1 + i] = src[i % 100];
    pagecache_host_fill(dst + 1, (1u << 20) + 1, src, 100);
    pagecache_host_fill(dst + (2u << 20), 50, src + 1000, 100);
    memcpy(ref + (2u << 20), src + 1000, 50);
    assert_memory_equal(dst, ref, cap);
    free(src);
    free(dst);
    free(ref);
    back_to_defaults();
    /* defaults: small copies stay in the caller, the pool is made at the first 1 MiB */
    pagecache_get_host_copy_stats(&st0);
    unsigned char *big = malloc(8u << 20), *big2 = malloc(8u << 20);
    fill_random(big, 8u << 20, &seed);
    pagecache_host_copy(big2, big, VAST_HOST_COPY_PARALLEL_MIN - 1);
    pagecache_get_host_copy_stats(&st1);
    assert_int_equal(st1.plain - st0.plain, 1);
    pagecache_host_copy(big2, big, 8u << 20);
    assert_memory_equal(big, big2, 8u << 20);
    pagecache_get_host_copy_stats(&st0);
    assert_int_equal(st0.plain - st1.plain, st0.threads > 1 ? 0 : 1);
    free(big);
    free(big2);
    /* configuring a live pool is refused */
    struct vast_host_copy_config cfg = {.threads = 2};
    if (st0.threads)
        assert_int_equal(pagecache_configure_host_copy(&cfg), VAST_PC_ERR_INVALID);
    back_to_defaults();
}

/* ---------- virtual buffers ---------- */

struct fx {
    struct fake_device dev;
    struct vast_pool *pool;
    struct vast_backing *store[2];
    struct vast_pc_buffer *buf[2];
    unsigned char *shadow[2];
    size_t size;
    uint64_t rng;
};

static void fx_init(struct fx *f, size_t frames, size_t size)
{
    memset(f, 0, sizeof *f);
    fake_device_init(&f->dev);
    f->size = size;
    f->rng = 4242;
    assert_int_equal(pagecache_create_pool(&fake_device_ops, &f->dev, frames * PG, PG, 16 * PG,
                                           &f->pool), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pagecache_create_backing(size, 0, &f->store[i]), 0);
        assert_int_equal(pagecache_create_buffer(f->pool, f->store[i], &f->buf[i]), 0);
        f->shadow[i] = calloc(1, size);
    }
}

static void fx_fini(struct fx *f)
{
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pagecache_release_buffer(f->buf[i]), 0);
        pagecache_destroy_backing(f->store[i]);
        free(f->shadow[i]);
    }
    pagecache_destroy_pool(f->pool);
    fake_device_fini(&f->dev);
}

/* A "kernel" writes page p of buffer i on the device: resident, dirty, newer than the host. */
static void device_write(struct fx *f, int i, size_t p)
{
    size_t n = p * PG + PG <= f->size ? PG : f->size - p * PG;
    struct vast_frame_loc loc;
    assert_int_equal(pagecache_make_resident(f->buf[i], p, 1, VAST_PC_PIN, &loc), 0);
    unsigned char *mem = fake_chunk_mem(loc.chunk) + loc.offset;
    for (size_t b = 0; b < n; b++)
        mem[b] = f->shadow[i][p * PG + b] = (unsigned char)rnd(&f->rng);
    assert_int_equal(pagecache_mark_dirty(f->buf[i], p, 1), 0);
    pagecache_unpin_range(f->buf[i], p, 1);
}

/* Dirty pages at the edges of and inside [off, off+n), a clean one too, a pinned one held. */
static void scatter_resident(struct fx *f, int i, size_t off, size_t n)
{
    size_t first = off / PG, last = (off + n - 1) / PG;
    device_write(f, i, first);
    device_write(f, i, last);
    if (last > first + 2)
        device_write(f, i, (first + last) / 2);
    if (last > first + 4)
        assert_int_equal(pagecache_make_resident(f->buf[i], first + 1, 1, 0, NULL), 0);
}

/* Every resident page of buffer i holds what the host holds (after a flush) and the shadow. */
static void check_coherent(struct fx *f, int i)
{
    assert_int_equal(pagecache_flush_range(f->buf[i], 0, f->size), 0);
    const unsigned char *host = pagecache_buffer_host(f->buf[i]);
    assert_memory_equal(host, f->shadow[i], f->size);
    size_t pages = (f->size + PG - 1) / PG;
    for (size_t p = 0; p < pages; p++) {
        if (pagecache_page_frame(f->buf[i], p) == VAST_PT_NO_FRAME)
            continue;
        struct vast_frame_loc loc;
        assert_int_equal(pagecache_make_resident(f->buf[i], p, 1, VAST_PC_PIN, &loc), 0);
        size_t n = p * PG + PG <= f->size ? PG : f->size - p * PG;
        assert_memory_equal(fake_chunk_mem(loc.chunk) + loc.offset, host + p * PG, n);
        pagecache_unpin_range(f->buf[i], p, 1);
    }
}

static void test_buffers_parallel(void **state)
{
    (void)state;
    force_parallel(3);
    struct fx f;
    size_t size = (3u << 20) + 4321; /* last page partial; 48x the pool */
    fx_init(&f, 16, size);
    size_t cap = size + PG;
    unsigned char *app = malloc(cap), *out = malloc(cap);
    struct vast_host_copy_stats st0, st1;
    pagecache_get_host_copy_stats(&st0);
    size_t ncalls = 0;
    for (size_t s = 0; s < NELEM(odd_sizes); s++) {
        for (size_t a = 0; a < NELEM(odd_offsets); a++) {
            size_t n = odd_sizes[s] < size - 10000 ? odd_sizes[s] : size - 10000;
            size_t off = (odd_offsets[a] * 1237 + s * 4099) % (size - n + 1);
            size_t ao = odd_offsets[3 - a];
            /* write: dirty pages at its edges keep their bytes outside the range */
            scatter_resident(&f, 0, off, n);
            fill_random(app + ao, n, &f.rng);
            assert_int_equal(pagecache_write(f.buf[0], off, n, app + ao), 0);
            memcpy(f.shadow[0] + off, app + ao, n);
            /* read: dirty pages of the range are flushed first */
            scatter_resident(&f, 0, off, n);
            memset(out, 0xEE, cap);
            assert_int_equal(pagecache_read(f.buf[0], off, n, out + ao), 0);
            assert_memory_equal(out + ao, f.shadow[0] + off, n);
            /* fill with a pattern size picked by the case */
            size_t psz = (size_t)1 << ((s + a) % 8), fl = n / psz * psz;
            if (fl) {
                scatter_resident(&f, 0, off, fl);
                assert_int_equal(pagecache_fill(f.buf[0], off, fl, app, psz), 0);
                for (size_t i = 0; i < fl; i++)
                    f.shadow[0][off + i] = app[i % psz];
                ncalls++;
            }
            /* copy to the other buffer at another odd offset, dirty pages on both sides */
            size_t doff = (off + 3 * PG + 17) % (size - n + 1);
            scatter_resident(&f, 0, off, n);
            scatter_resident(&f, 1, doff, n);
            assert_int_equal(pagecache_copy(f.buf[1], doff, f.buf[0], off, n), 0);
            memmove(f.shadow[1] + doff, f.shadow[0] + off, n);
            ncalls += 3;
            check_coherent(&f, 0);
            check_coherent(&f, 1);
        }
    }
    pagecache_get_host_copy_stats(&st1);
    assert_int_equal(st1.parallel - st0.parallel, ncalls);
    /* a copy within one buffer whose ranges overlap: memmove, still coherent */
    size_t n = (1u << 20) + 5;
    scatter_resident(&f, 0, 100, n + 3000);
    assert_int_equal(pagecache_copy(f.buf[0], 3100, f.buf[0], 100, n), 0);
    memmove(f.shadow[0] + 3100, f.shadow[0] + 100, n);
    check_coherent(&f, 0);
    size_t valid, dirty, pinned;
    pagecache_count_frames(f.pool, &valid, &dirty, &pinned);
    assert_int_equal(pinned, 0);
    fx_fini(&f);
    free(app);
    free(out);
    back_to_defaults();
}

/* Four threads, one buffer each, one shared process pool (and one page pool). */
struct worker {
    struct vast_pool *pool;
    uint64_t rng;
    int errors;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    size_t size = (1u << 20) + 777;
    struct vast_backing *b;
    struct vast_pc_buffer *buf;
    unsigned char *a = malloc(size), *o = malloc(size);
    if (pagecache_create_backing(size, 0, &b) || pagecache_create_buffer(w->pool, b, &buf)) {
        w->errors++;
        return NULL;
    }
    for (int it = 0; it < 20; it++) {
        size_t n = 1 + rnd(&w->rng) % size, off = rnd(&w->rng) % (size - n + 1);
        fill_random(a, n, &w->rng);
        w->errors += pagecache_write(buf, off, n, a) != 0;
        if (pagecache_make_resident(buf, off / PG, 1, 0, NULL) != 0)
            w->errors++;
        memset(o, 0xEE, n);
        w->errors += pagecache_read(buf, off, n, o) != 0;
        w->errors += memcmp(a, o, n) != 0;
    }
    w->errors += pagecache_release_buffer(buf) != 0;
    pagecache_destroy_backing(b);
    free(a);
    free(o);
    return NULL;
}

static void test_threads_share_pool(void **state)
{
    (void)state;
    force_parallel(3);
    struct fake_device dev;
    struct vast_pool *pool = fake_pool_open(&dev, PG, 32, 16);
    assert_non_null(pool);
    struct worker w[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        w[t] = (struct worker){.pool = pool, .rng = 1000u + (unsigned)t};
        assert_int_equal(pthread_create(&th[t], NULL, worker_main, &w[t]), 0);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        assert_int_equal(w[t].errors, 0);
    }
    pagecache_destroy_pool(pool);
    fake_device_fini(&dev);
    back_to_defaults();
}

/* ---------- backing stores ---------- */

static size_t thp_size(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[128] = "";
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = 0;
        fclose(f);
    }
    if (!strstr(line, "[always]") && !strstr(line, "[madvise]"))
        return 0;
    f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
    unsigned long long v = 0;
    if (f) {
        if (fscanf(f, "%llu", &v) != 1)
            v = 0;
        fclose(f);
    }
    return (size_t)v;
}

static void test_backing_huge(void **state)
{
    (void)state;
    size_t h = thp_size();
    printf("THP page %zu bytes (0: off)\n", h);
    struct vast_backing *b;
    size_t size = (8u << 20) + 5;
    assert_int_equal(pagecache_create_backing(size, 0, &b), 0);
    unsigned char *p = pagecache_backing_base(b);
    if (h) {
        assert_true(pagecache_backing_huge(b));
        assert_int_equal((uintptr_t)p % h, 0);
    }
    for (size_t i = 0; i < size; i += 4093) /* zero-filled, writable to the last byte */
        assert_int_equal(p[i], 0);
    assert_int_equal(p[size - 1], 0);
    memset(p, 0x5A, size);
    pagecache_destroy_backing(b);
    /* a small store stays an ordinary mapping */
    assert_int_equal(pagecache_create_backing(3 * PG, 0, &b), 0);
    assert_false(pagecache_backing_huge(b));
    memset(pagecache_backing_base(b), 1, 3 * PG);
    pagecache_destroy_backing(b);
}

VAST_CMOCKA_MAIN(NULL, fake_host_copy_teardown,
                 test_copy_pool_odd, test_host_copy_fns, test_buffers_parallel, test_threads_share_pool,
                 test_backing_huge)
