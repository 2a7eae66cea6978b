/* test_pagecache_pocl.c: end-to-end tests of pagecache/ over the real OpenCL backend on PoCL.
 * A pool of 4 MiB (64 KiB pages, chunks of 1 MiB) serves virtual buffers 8x and 64x larger,
 * one larger than PoCL's own maximum allocation (3 GiB, touched sparsely), and a
 * USE_HOST_PTR store over an mmap'ed file. Random host writes/reads/fills/copies and a real
 * kernel that reads-modifies-writes resident frames are checked against a shadow copy.
 * Then again with stores that are never pinned (VAST_DEVOPS_CL_NO_PIN, what VAST_PIN=0 does):
 * every transfer, however small, is staged through pinned slots of 256 KiB by two copy
 * threads, interleaved on the queue with the kernels; odd sizes through the device ops first.
 * Duplex (write-backs on the backend's second queue): read_unordered and its tickets, wait()
 * covering both queues, and dirty pages streamed through the pool (every random test above
 * runs duplex too, the default); the same with the second queue turned off.
 * Exit status 0 on success. Seed: VAST_TEST_SEED (printed). */
#include <CL/cl.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "devops_opencl.h"
#include "pagecache.h"

#define PG ((size_t)64 << 10)
#define BUDGET ((size_t)4 << 20)

static int failures;
#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond);               \
            failures++;                                                                      \
        }                                                                                    \
    } while (0)
#define CHECK_RC(expr)                                                                       \
    do {                                                                                     \
        int rc_ = (expr);                                                                    \
        if (rc_) {                                                                           \
            fprintf(stderr, "%s:%d: FAILED: %s = %s\n", __FILE__, __LINE__, #expr,           \
                    pagecache_status_string(rc_));                                           \
            failures++;                                                                      \
        }                                                                                    \
    } while (0)

static cl_context ctx;
static cl_command_queue queue;
static cl_kernel kern;
static uint64_t rng;

static uint32_t rnd(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 33);
}

static const char *kernel_src =
    "__kernel void rmw(__global uchar *c, uint off, uchar v) {\n"
    "  size_t i = off + get_global_id(0);\n"
    "  c[i] = (uchar)(c[i] * 3 + v);\n"
    "}\n";

static int setup_cl(void)
{
    cl_platform_id plats[8];
    cl_uint n = 0;
    if (clGetPlatformIDs(8, plats, &n) != CL_SUCCESS || n == 0)
        return -1;
    cl_device_id dev;
    if (clGetDeviceIDs(plats[0], CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
        return -1;
    cl_int err;
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    queue = clCreateCommandQueue(ctx, dev, 0, &err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
    if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
        return -1;
    kern = clCreateKernel(prog, "rmw", &err);
    clReleaseProgram(prog);
    return err == CL_SUCCESS ? 0 : -1;
}

/* The device ops alone: a chunk written, copied, filled and read back. */
static void test_devops(void *dev)
{
    const struct vast_device_ops *ops = &vast_devops_opencl;
    vast_dev_chunk a, b;
    CHECK_RC(ops->alloc_chunk(dev, 1 << 20, &a));
    CHECK_RC(ops->alloc_chunk(dev, 1 << 20, &b));
    unsigned char *src = malloc(1 << 20), *dst = malloc(1 << 20);
    for (size_t i = 0; i < (1 << 20); i++)
        src[i] = (unsigned char)(rnd() >> 5);
    vast_host_pin pin = NULL;
    CHECK_RC(ops->pin_host(dev, src, 1 << 20, &pin));
    CHECK_RC(ops->write(dev, a, 0, src, 1 << 20, pin));
    CHECK_RC(ops->copy(dev, b, 4096, a, 0, 65536));
    const unsigned char pat[4] = {7, 8, 9, 10};
    CHECK_RC(ops->fill(dev, b, 65536 + 4096, pat, 4, 3000));
    memset(dst, 0xEE, 1 << 20);
    CHECK_RC(ops->read(dev, b, 4096, dst, 65536 + 3000, NULL));
    CHECK_RC(ops->wait(dev));
    CHECK(memcmp(dst, src, 65536) == 0);
    for (size_t i = 0; i < 3000; i++)
        CHECK(dst[65536 + i] == pat[i % 4]);
    ops->unpin_host(dev, pin);
    ops->free_chunk(dev, a);
    ops->free_chunk(dev, b);
    free(src);
    free(dst);
}

/* read_unordered (on the second queue where there is one) and its ticket; wait() must cover
 * that queue: 32 MiB read back, checked after wait() and before its ticket is waited for. */
static void test_duplex_devops(void *dev, int expect_duplex)
{
    const struct vast_device_ops *ops = &vast_devops_opencl;
    CHECK(pagecache_devops_opencl_duplex(dev) == expect_duplex);
    size_t size = (size_t)32 << 20;
    vast_dev_chunk c;
    CHECK_RC(ops->alloc_chunk(dev, size, &c));
    unsigned char *src = aligned_alloc(4096, size), *dst = aligned_alloc(4096, size);
    vast_host_pin ps = NULL, pd = NULL;
    CHECK_RC(ops->pin_host(dev, src, size, &ps));
    CHECK_RC(ops->pin_host(dev, dst, size, &pd));
    for (int rep = 0; rep < 4; rep++) {
        for (size_t i = 0; i < size; i += 4096)
            memset(src + i, (int)(rnd() & 0xff), 4096);
        memset(dst, 0xEE, size);
        CHECK_RC(ops->write(dev, c, 0, src, size, ps));
        CHECK_RC(ops->wait(dev));
        void *ticket = NULL;
        CHECK_RC(ops->read_unordered(dev, c, 0, dst, size, pd, &ticket));
        CHECK(ticket != NULL);
        if (rep % 2 == 0) { /* wait() alone must have brought every byte */
            CHECK_RC(ops->wait(dev));
            CHECK(memcmp(dst, src, size) == 0);
        }
        CHECK_RC(ops->wait_ticket(dev, ticket));
        CHECK(memcmp(dst, src, size) == 0);
    }
    ops->unpin_host(dev, ps);
    ops->unpin_host(dev, pd);
    ops->free_chunk(dev, c);
    free(src);
    free(dst);
}

/* A kernel runs on [off, off+n) of buf: pages pinned resident, one launch per frame run. */
static void kernel_rmw(struct vast_pc_buffer *buf, unsigned char *shadow, size_t off, size_t n)
{
    size_t first, count;
    CHECK_RC(pagecache_page_range(buf, off, n, &first, &count));
    struct vast_frame_loc *locs = malloc(count * sizeof *locs);
    int rc = pagecache_make_resident(buf, first, count, VAST_PC_PIN, locs);
    CHECK_RC(rc);
    if (rc) {
        free(locs);
        return;
    }
    cl_uchar v = (cl_uchar)rnd();
    for (size_t b = off; b < off + n;) {
        size_t p = b / PG, in = b % PG, len = PG - in < off + n - b ? PG - in : off + n - b;
        cl_mem m = pagecache_devops_opencl_mem(locs[p - first].chunk);
        cl_uint o = (cl_uint)(locs[p - first].offset + in);
        clSetKernelArg(kern, 0, sizeof m, &m);
        clSetKernelArg(kern, 1, sizeof o, &o);
        clSetKernelArg(kern, 2, sizeof v, &v);
        CHECK(clEnqueueNDRangeKernel(queue, kern, 1, NULL, &len, NULL, 0, NULL, NULL) == CL_SUCCESS);
        for (size_t i = 0; i < len; i++)
            shadow[b + i] = (unsigned char)(shadow[b + i] * 3 + v);
        b += len;
    }
    CHECK(clFinish(queue) == CL_SUCCESS);
    CHECK_RC(pagecache_mark_dirty(buf, first, count));
    pagecache_unpin_range(buf, first, count);
    free(locs);
}

/* Random pieces: host writes, reads, fills, copies and kernels, against the shadow. */
static void random_pieces(struct vast_pc_buffer *buf, unsigned char *shadow, size_t size,
                          int steps, size_t span)
{
    unsigned char *tmp = malloc(span);
    for (int s = 0; s < steps; s++) {
        size_t n = 1 + rnd() % span, off = (size_t)(((uint64_t)rnd() << 31 ^ rnd()) % (size - n + 1));
        switch (rnd() % 5) {
        case 0:
            for (size_t i = 0; i < n; i++)
                tmp[i] = (unsigned char)rnd();
            CHECK_RC(pagecache_write(buf, off, n, tmp));
            memcpy(shadow + off, tmp, n);
            break;
        case 1:
            memset(tmp, 0xEE, n);
            CHECK_RC(pagecache_read(buf, off, n, tmp));
            CHECK(memcmp(tmp, shadow + off, n) == 0);
            break;
        case 2: {
            size_t psz = (size_t)1 << (rnd() % 8);
            n -= n % psz;
            unsigned char pat[128];
            for (size_t i = 0; i < psz; i++)
                pat[i] = (unsigned char)rnd();
            CHECK_RC(pagecache_fill(buf, off, n, pat, psz));
            for (size_t i = 0; i < n; i++)
                shadow[off + i] = pat[i % psz];
            break;
        }
        case 3: {
            size_t dst = (size_t)(((uint64_t)rnd() << 31 ^ rnd()) % (size - n + 1));
            if (dst + n <= off || off + n <= dst) {
                CHECK_RC(pagecache_copy(buf, dst, buf, off, n));
                memmove(shadow + dst, shadow + off, n);
            }
            break;
        }
        default:
            if (n > BUDGET / 2)
                n = BUDGET / 2;
            kernel_rmw(buf, shadow, off, n);
        }
    }
    free(tmp);
}

static void test_virtual_buffer(struct vast_pool *pool, size_t size, int steps, size_t span)
{
    struct vast_backing *store;
    struct vast_pc_buffer *buf;
    CHECK_RC(pagecache_create_backing(size, 0, &store));
    CHECK_RC(pagecache_create_buffer(pool, store, &buf));
    /* lazily committed shadow: untouched parts of both stay zero pages */
    unsigned char *shadow = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    random_pieces(buf, shadow, size, steps, span);
    struct vast_pool_stats st;
    pagecache_get_pool_stats(pool, &st);
    CHECK_RC(pagecache_flush_range(buf, 0, size));
    CHECK(memcmp(pagecache_backing_base(store), shadow, size) == 0);
    printf("  %zu MiB buffer (%zux pool): %d steps, evictions %llu (dirty %llu), "
           "h2d %llu transfers %.1f MiB, d2h %llu transfers %.1f MiB\n",
           size >> 20, size / BUDGET, steps, (unsigned long long)st.evictions,
           (unsigned long long)st.dirty_evictions, (unsigned long long)st.h2d_transfers,
           st.h2d_bytes / 1048576.0, (unsigned long long)st.d2h_transfers, st.d2h_bytes / 1048576.0);
    CHECK_RC(pagecache_release_buffer(buf));
    pagecache_destroy_backing(store);
    munmap(shadow, size);
}

/* A cheap "kernel" for streaming: every page of [first, first+count) filled on the device
 * (on the application's queue, not the pool's), checked first against what was loaded. */
static void device_fill(struct vast_pc_buffer *buf, unsigned char *shadow, size_t first,
                        size_t count, cl_uchar v)
{
    struct vast_frame_loc *locs = malloc(count * sizeof *locs);
    unsigned char *got = malloc(PG);
    CHECK_RC(pagecache_make_resident(buf, first, count, VAST_PC_PIN, locs));
    for (size_t i = 0; i < count; i++) {
        cl_mem m = pagecache_devops_opencl_mem(locs[i].chunk);
        CHECK(clEnqueueReadBuffer(queue, m, CL_TRUE, locs[i].offset, PG, got, 0, NULL, NULL) ==
              CL_SUCCESS);
        CHECK(memcmp(got, shadow + (first + i) * PG, PG) == 0);
        CHECK(clEnqueueFillBuffer(queue, m, &v, 1, locs[i].offset, PG, 0, NULL, NULL) ==
              CL_SUCCESS);
        memset(shadow + (first + i) * PG, v, PG);
    }
    CHECK(clFinish(queue) == CL_SUCCESS);
    CHECK_RC(pagecache_mark_dirty(buf, first, count));
    pagecache_unpin_range(buf, first, count);
    free(got);
    free(locs);
}

/* saxpy's y: 1 MiB partitions of a buffer 8x the pool, each checked and rewritten on the
 * device, so every partition evicts dirty pages of an earlier one; write-backs in windows of
 * `window` bytes (0: simplex). Three passes, then everything is checked. */
static void test_streaming(struct vast_pool *pool, size_t window)
{
    pagecache_configure_duplex(pool, window);
    size_t size = 8 * BUDGET, part = (size_t)1 << 20;
    struct vast_backing *store;
    struct vast_pc_buffer *buf;
    CHECK_RC(pagecache_create_backing(size, 0, &store));
    CHECK_RC(pagecache_create_buffer(pool, store, &buf));
    unsigned char *shadow = calloc(1, size);
    struct vast_pool_stats a, b;
    pagecache_get_pool_stats(pool, &a);
    for (int pass = 0; pass < 3; pass++)
        for (size_t off = 0; off < size; off += part)
            device_fill(buf, shadow, off / PG, part / PG, (cl_uchar)(pass * 37 + off / part));
    pagecache_get_pool_stats(pool, &b);
    CHECK_RC(pagecache_flush_range(buf, 0, size));
    CHECK(memcmp(pagecache_backing_base(store), shadow, size) == 0);
    printf("  streaming, window %zu KiB: dirty evictions %llu, unordered write-backs %llu, "
           "loads beside write-backs %.1f of %.1f MiB\n", window >> 10,
           (unsigned long long)(b.dirty_evictions - a.dirty_evictions),
           (unsigned long long)(b.unordered_d2h_transfers - a.unordered_d2h_transfers),
           (b.overlap_h2d_bytes - a.overlap_h2d_bytes) / 1048576.0,
           (b.h2d_bytes - a.h2d_bytes) / 1048576.0);
    CHECK(b.dirty_evictions - a.dirty_evictions >= 2 * size / PG);
    CHECK((b.unordered_d2h_transfers > a.unordered_d2h_transfers) == (window != 0));
    CHECK((b.overlap_h2d_bytes > a.overlap_h2d_bytes) == (window != 0));
    CHECK_RC(pagecache_release_buffer(buf));
    pagecache_destroy_backing(store);
    free(shadow);
    pagecache_configure_duplex(pool, VAST_DUPLEX_DEFAULT_WINDOW);
}

static void test_mmap_file(struct vast_pool *pool)
{
    size_t size = (size_t)64 << 20;
    char path[] = "/tmp/vast_pc_fileXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && ftruncate(fd, (off_t)size) == 0);
    unlink(path);
    unsigned char *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(map != MAP_FAILED);
    struct vast_backing *store;
    struct vast_pc_buffer *buf;
    CHECK_RC(pagecache_wrap_backing(map, size, &store));
    pagecache_set_pin_granule(store, (size_t)1 << 20);
    CHECK_RC(pagecache_create_buffer(pool, store, &buf));
    unsigned char *shadow = calloc(1, size);
    /* kernels and host writes in the first 16 MiB only: the rest is never read */
    random_pieces(buf, shadow, (size_t)16 << 20, 150, (size_t)256 << 10);
    CHECK_RC(pagecache_flush_range(buf, 0, size));
    unsigned char vec[(64 << 20) / 4096];
    CHECK(mincore(map, size, vec) == 0);
    size_t in_core = 0;
    for (size_t i = 0; i < sizeof vec; i++)
        in_core += vec[i] & 1;
    printf("  mmap'ed file: %zu of %zu pages in core after use\n", in_core, sizeof vec);
    /* never read whole: 16 MiB used, plus the kernel's readahead around faults */
    CHECK(in_core * 4096 <= size / 2);
    CHECK_RC(pagecache_release_buffer(buf));
    pagecache_destroy_backing(store);
    CHECK(munmap(map, size) == 0);
    /* what reached the file */
    unsigned char *back = malloc((size_t)16 << 20);
    CHECK(pread(fd, back, (size_t)16 << 20, 0) == (ssize_t)(16 << 20));
    CHECK(memcmp(back, shadow, (size_t)16 << 20) == 0);
    close(fd);
    free(back);
    free(shadow);
}

/* Staged device ops alone: odd sizes at odd offsets, both ways, against the source. */
static void test_staged_devops(void *dev, size_t slot)
{
    const struct vast_device_ops *ops = &vast_devops_opencl;
    const size_t sizes[] = {1, slot - 1, slot, slot + 1, 5 * slot + 4097, (3 << 20) + 5};
    size_t max = (3 << 20) + 5, dev_off = 333;
    vast_dev_chunk c;
    CHECK_RC(ops->alloc_chunk(dev, max + dev_off, &c));
    unsigned char *src = malloc(max + 8), *dst = malloc(max + 8);
    vast_host_pin pin = NULL;
    CHECK(ops->pin_host(dev, src, 4096, &pin) != 0); /* VAST_DEVOPS_CL_NO_PIN */
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        for (size_t k = 0; k < sizes[i]; k++)
            src[3 + k] = (unsigned char)rnd();
        memset(dst, 0xEE, max + 8);
        CHECK_RC(ops->write(dev, c, dev_off, src + 3, sizes[i], NULL));
        CHECK_RC(ops->read(dev, c, dev_off, dst + 1, sizes[i], NULL));
        CHECK_RC(ops->wait(dev));
        CHECK(memcmp(dst + 1, src + 3, sizes[i]) == 0);
        CHECK(dst[0] == 0xEE && dst[1 + sizes[i]] == 0xEE);
    }
    ops->free_chunk(dev, c);
    free(src);
    free(dst);
}

static void test_staged_pool(void)
{
    size_t slot = (size_t)256 << 10;
    struct vast_staging_config sc = {.slot_bytes = slot, .threads = 2, .direct_below = 1};
    void *dev;
    CHECK_RC(pagecache_create_devops_opencl_staged(ctx, queue, VAST_DEVOPS_CL_NO_PIN, &sc, &dev));
    test_staged_devops(dev, slot);
    struct vast_pool *pool;
    CHECK_RC(pagecache_create_pool(&vast_devops_opencl, dev, BUDGET, PG, (size_t)1 << 20, &pool));
    printf("staged (stores never pinned, %zu KiB slots, 2 threads):\n", slot >> 10);
    test_virtual_buffer(pool, 8 * BUDGET, 400, (size_t)1 << 20);
    test_mmap_file(pool);
    struct vast_staging_stats st;
    CHECK_RC(pagecache_devops_opencl_staging_stats(dev, &st));
    printf("  staging: %llu transfers (%.1f MiB) in %llu slot transfers, %llu failed, "
           "%llu declined\n", (unsigned long long)st.transfers, st.bytes / 1048576.0,
           (unsigned long long)st.slot_transfers, (unsigned long long)st.failures,
           (unsigned long long)st.declined);
    CHECK(st.transfers > 500 && st.slot_transfers >= st.transfers);
    CHECK(st.failures == 0 && st.declined == 0 && st.in_flight == 0);
    CHECK(st.slots == 3 && st.threads == 2);
    pagecache_destroy_pool(pool);
    pagecache_destroy_devops_opencl(dev);
}

int main(void)
{
    const char *s = getenv("VAST_TEST_SEED");
    rng = s ? strtoull(s, NULL, 0) : 4242;
    printf("seed %llu\n", (unsigned long long)rng);
    if (setup_cl()) {
        fprintf(stderr, "no OpenCL platform/kernel\n");
        return 1;
    }
    void *dev;
    CHECK_RC(pagecache_create_devops_opencl(ctx, queue, 0, &dev));
    test_devops(dev);
    test_duplex_devops(dev, 1);
    struct vast_pool *pool;
    CHECK_RC(pagecache_create_pool(&vast_devops_opencl, dev, BUDGET, PG, (size_t)1 << 20, &pool));
    printf("pool: %zu frames of %zu KiB in %zu chunks\n", pool->nframes, PG >> 10, pool->nchunks);
    test_streaming(pool, (size_t)256 << 10);
    test_streaming(pool, 0);
    test_virtual_buffer(pool, 8 * BUDGET, 400, (size_t)1 << 20);
    test_virtual_buffer(pool, 64 * BUDGET, 400, (size_t)2 << 20);
    test_virtual_buffer(pool, (size_t)3 << 30, 150, (size_t)1 << 20); /* > PoCL max alloc */
    test_mmap_file(pool);
    pagecache_destroy_pool(pool);
    pagecache_destroy_devops_opencl(dev);
    CHECK_RC(pagecache_create_devops_opencl(ctx, queue, VAST_DEVOPS_CL_NO_DUPLEX, &dev));
    test_duplex_devops(dev, 0); /* read_unordered on the one queue: still within contract */
    CHECK_RC(pagecache_create_pool(&vast_devops_opencl, dev, BUDGET, PG, (size_t)1 << 20, &pool));
    printf("one queue (VAST_DEVOPS_CL_NO_DUPLEX):\n");
    test_streaming(pool, (size_t)256 << 10);
    pagecache_destroy_pool(pool);
    pagecache_destroy_devops_opencl(dev);
    test_staged_pool();
    clReleaseKernel(kern);
    clReleaseCommandQueue(queue);
    clReleaseContext(ctx);
    printf("%s (%d failures)\n", failures ? "FAILED" : "OK", failures);
    return failures ? 1 : 0;
}
