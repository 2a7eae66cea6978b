/*
 * test_vbuf: virtual buffers through VAST on PoCL with a device budget of a few MiB
 * (VAST_DEVICE_MEMORY, set by CTest). Buffers 8x and 64x the budget and one larger than
 * PoCL's own maximum allocation are written and read in random pieces, processed by a kernel
 * window by window (pages evicted dirty and written back), copied, filled, mapped and
 * accessed by rectangles, always against a shadow copy; an mmap'ed file backs a
 * USE_HOST_PTR buffer; the specification's error codes for bad arguments.
 */
#include "../platform/common.h"
#include "vast_cmocka.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

static cl_device_id device;
static cl_context ctx;
static cl_command_queue queue;
static cl_kernel bump; /* a[i] += k * (i + 1) over a window, uint */
static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static const char *bump_source = "__kernel void bump(__global uint *a, uint k) {\n"
                                 "    size_t i = get_global_id(0);\n"
                                 "    a[i] += k * (uint)(i + 1);\n"
                                 "}\n";

static int setup(void **state)
{
    (void)state;
    device = test_device(test_platform());
    ctx = test_context(device);
    cl_int err;
    queue = clCreateCommandQueue(ctx, device, 0, &err);
    CHECK_CL(err);
    cl_program p = test_program(ctx, device, bump_source);
    bump = clCreateKernel(p, "bump", &err);
    CHECK_CL(err);
    CHECK_CL(clReleaseProgram(p));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    CHECK_CL(clReleaseKernel(bump));
    CHECK_CL(clReleaseCommandQueue(queue));
    CHECK_CL(clReleaseContext(ctx));
    return 0;
}

/* Run `bump` over uint window [first, first+count) of buf, and the same on the shadow. */
static void bump_window(cl_mem buf, uint32_t *shadow, size_t first, size_t count, uint32_t k)
{
    cl_int err;
    cl_buffer_region r = {first * 4, count * 4};
    cl_mem sub = clCreateSubBuffer(buf, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
    CHECK_CL(err);
    CHECK_CL(clSetKernelArg(bump, 0, sizeof sub, &sub));
    CHECK_CL(clSetKernelArg(bump, 1, sizeof k, &k));
    CHECK_CL(clEnqueueNDRangeKernel(queue, bump, 1, NULL, &count, NULL, 0, NULL, NULL));
    CHECK_CL(clReleaseMemObject(sub));
    for (size_t i = 0; i < count; i++)
        shadow[first + i] += k * (uint32_t)(i + 1);
}

static void check_range(cl_mem buf, const uint32_t *shadow, size_t first, size_t count)
{
    uint32_t *back = malloc(count * 4);
    memset(back, 0xab, count * 4);
    CHECK_CL(clEnqueueReadBuffer(queue, buf, CL_TRUE, first * 4, count * 4, back, 0, NULL, NULL));
    for (size_t i = 0; i < count; i++)
        if (back[i] != shadow[first + i])
            fail_msg("word %zu: %u, expected %u", first + i, back[i], shadow[first + i]);
    free(back);
}

/* Random host writes, kernel windows and host reads over a buffer of `words` uints. */
static void exercise(size_t words, int rounds)
{
    cl_int err;
    uint32_t *shadow = malloc(words * 4);
    for (size_t i = 0; i < words; i++)
        shadow[i] = (uint32_t)next();
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, words * 4, shadow, &err);
    CHECK_CL(err);
    const size_t window = (1u << 20) / 4; /* 1 MiB: a quarter of the budget */
    for (int r = 0; r < rounds; r++) {
        size_t first = (next() % (words / 64)) * 64, count = 1 + next() % 50000;
        count = first + count > words ? words - first : count;
        switch (next() % 3) {
        case 0: {
            uint32_t *piece = malloc(count * 4);
            for (size_t i = 0; i < count; i++)
                shadow[first + i] = piece[i] = (uint32_t)next();
            CHECK_CL(clEnqueueWriteBuffer(queue, buf, r % 2, first * 4, count * 4, piece, 0, NULL, NULL));
            CHECK_CL(clFinish(queue));
            free(piece);
            break;
        }
        case 1:
            first = (first / 32) * 32; /* sub-buffer origins: 128-byte aligned */
            bump_window(buf, shadow, first, first + window > words ? words - first : window, (uint32_t)next() | 1);
            break;
        default: check_range(buf, shadow, first, count);
        }
    }
    for (size_t at = 0; at < words; at += 4 * window)
        check_range(buf, shadow, at, at + 4 * window > words ? words - at : 4 * window);
    CHECK_CL(clReleaseMemObject(buf));
    free(shadow);
}

static void test_8x_budget(void **state)
{
    (void)state;
    exercise((32u << 20) / 4 + 17, 60); /* 32 MiB + 68 bytes: not a page multiple */
}

static void test_64x_budget(void **state)
{
    (void)state;
    exercise((256u << 20) / 4, 40);
}

static void test_larger_than_real_max_alloc(void **state)
{
    (void)state;
    cl_ulong real_max = 0, virtual_max = 0;
    CHECK_CL(clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof virtual_max, &virtual_max, NULL));
    real_max = 2ull << 30; /* PoCL's own limit on this machine */
    assert_true(virtual_max > real_max);
    size_t size = (size_t)real_max + (1u << 30), words = size / 4;
    cl_int err;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, &err);
    CHECK_CL(err);
    uint32_t zero = 0;
    /* Touch windows below and above 2 GiB only: the rest stays uncommitted. */
    size_t windows[3] = {0, words / 2 + 4096, words - (1u << 18)};
    uint32_t *shadow = calloc(words, 4); /* lazily committed by the kernel too */
    for (int w = 0; w < 3; w++) {
        CHECK_CL(clEnqueueFillBuffer(queue, buf, &zero, 4, windows[w] * 4, (1u << 18) * 4, 0, NULL, NULL));
        bump_window(buf, shadow, windows[w], 1u << 18, 7u + (uint32_t)w);
    }
    for (int w = 0; w < 3; w++)
        check_range(buf, shadow, windows[w], 1u << 18);
    CHECK_CL(clReleaseMemObject(buf));
    free(shadow);
}

static void test_copy_fill_map_rect(void **state)
{
    (void)state;
    cl_int err;
    const size_t n = (12u << 20) + 4096 + 40; /* bytes: 3x the budget, odd */
    unsigned char *a = malloc(n), *b = malloc(n), *back = malloc(n);
    for (size_t i = 0; i < n; i++)
        a[i] = (unsigned char)next(), b[i] = (unsigned char)next();
    cl_mem ba = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, n, a, &err);
    CHECK_CL(err);
    cl_mem bb = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, n, b, &err);
    CHECK_CL(err);
    /* copies */
    CHECK_CL(clEnqueueCopyBuffer(queue, ba, bb, 1000, 5000000, 3000001, 0, NULL, NULL));
    memcpy(b + 5000000, a + 1000, 3000001);
    assert_int_equal(clEnqueueCopyBuffer(queue, ba, ba, 0, 100, 1000, 0, NULL, NULL), CL_MEM_COPY_OVERLAP);
    /* fills with every pattern size */
    for (size_t ps = 1; ps <= 128; ps *= 2) {
        unsigned char pat[128];
        for (size_t i = 0; i < ps; i++)
            pat[i] = (unsigned char)next();
        size_t off = ps * (1 + next() % 1000), size = ps * (1 + next() % 20000);
        CHECK_CL(clEnqueueFillBuffer(queue, bb, pat, ps, off, size, 0, NULL, NULL));
        for (size_t i = 0; i < size; i++)
            b[off + i] = pat[i % ps];
    }
    unsigned char pat3[3] = {1, 2, 3};
    assert_int_equal(clEnqueueFillBuffer(queue, bb, pat3, 3, 0, 9, 0, NULL, NULL), CL_INVALID_VALUE);
    /* maps: read, then write with invalidate */
    unsigned char *m = clEnqueueMapBuffer(queue, bb, CL_TRUE, CL_MAP_READ, 4096, 65536, 0, NULL, NULL, &err);
    CHECK_CL(err);
    assert_memory_equal(m, b + 4096, 65536);
    CHECK_CL(clEnqueueUnmapMemObject(queue, bb, m, 0, NULL, NULL));
    m = clEnqueueMapBuffer(queue, bb, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 200000, 300000, 0, NULL, NULL, &err);
    CHECK_CL(err);
    for (size_t i = 0; i < 300000; i++)
        m[i] = b[200000 + i] = (unsigned char)(i * 7);
    cl_uint maps = 0;
    CHECK_CL(clGetMemObjectInfo(bb, CL_MEM_MAP_COUNT, sizeof maps, &maps, NULL));
    assert_int_equal(maps, 1);
    CHECK_CL(clEnqueueUnmapMemObject(queue, bb, m, 0, NULL, NULL));
    assert_int_equal(clEnqueueUnmapMemObject(queue, bb, m, 0, NULL, NULL), CL_INVALID_VALUE);
    /* rects: a 3-D box written, then copied between buffers */
    size_t borig[3] = {16, 3, 2}, horig[3] = {0, 0, 0}, region[3] = {100, 20, 5};
    unsigned char box[100 * 20 * 5];
    for (size_t i = 0; i < sizeof box; i++)
        box[i] = (unsigned char)next();
    CHECK_CL(clEnqueueWriteBufferRect(queue, ba, CL_TRUE, borig, horig, region, 1000, 1000 * 50, 0, 0, box, 0, NULL,
                                      NULL));
    for (size_t z = 0; z < 5; z++)
        for (size_t y = 0; y < 20; y++)
            memcpy(a + (2 + z) * 50000 + (3 + y) * 1000 + 16, box + z * 2000 + y * 100, 100);
    size_t dorig[3] = {7, 1, 1};
    CHECK_CL(clEnqueueCopyBufferRect(queue, ba, bb, borig, dorig, region, 1000, 50000, 2000, 2000 * 30, 0, NULL, NULL));
    for (size_t z = 0; z < 5; z++)
        for (size_t y = 0; y < 20; y++)
            memcpy(b + (1 + z) * 60000 + (1 + y) * 2000 + 7, a + (2 + z) * 50000 + (3 + y) * 1000 + 16, 100);
    unsigned char rbox[sizeof box];
    CHECK_CL(clEnqueueReadBufferRect(queue, bb, CL_TRUE, dorig, horig, region, 2000, 60000, 0, 0, rbox, 0, NULL, NULL));
    assert_memory_equal(rbox, box, sizeof box);
    CHECK_CL(clEnqueueReadBuffer(queue, ba, CL_TRUE, 0, n, back, 0, NULL, NULL));
    assert_memory_equal(back, a, n);
    CHECK_CL(clEnqueueReadBuffer(queue, bb, CL_TRUE, 0, n, back, 0, NULL, NULL));
    assert_memory_equal(back, b, n);
    CHECK_CL(clReleaseMemObject(ba));
    CHECK_CL(clReleaseMemObject(bb));
    free(a);
    free(b);
    free(back);
}

static void test_mmapped_file(void **state)
{
    (void)state;
    char path[] = "/tmp/vast-vbuf-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const size_t size = 64u << 20, words = size / 4;
    assert_int_equal(ftruncate(fd, (off_t)size), 0);
    uint32_t *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    assert_true(map != MAP_FAILED);
    cl_int err;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_USE_HOST_PTR, size, map, &err);
    CHECK_CL(err);
    void *host = NULL;
    CHECK_CL(clGetMemObjectInfo(buf, CL_MEM_HOST_PTR, sizeof host, &host, NULL));
    assert_ptr_equal(host, map);
    uint32_t *shadow = calloc(words, 4);
    bump_window(buf, shadow, words - (1u << 18), 1u << 18, 3);
    bump_window(buf, shadow, 0, 1u << 18, 5);
    void *p = clEnqueueMapBuffer(queue, buf, CL_TRUE, CL_MAP_READ, 0, size, 0, NULL, NULL, &err);
    CHECK_CL(err);
    assert_ptr_equal(p, map); /* USE_HOST_PTR: the application's own memory, no copy */
    CHECK_CL(clEnqueueUnmapMemObject(queue, buf, p, 0, NULL, NULL));
    CHECK_CL(clFinish(queue));
    assert_memory_equal(map, shadow, size); /* the file holds the kernel's results */
    CHECK_CL(clReleaseMemObject(buf));
    munmap(map, size);
    close(fd);
    unlink(path);
    free(shadow);
}

static void test_errors(void **state)
{
    (void)state;
    cl_int err;
    int x = 0;
    cl_ulong max = 0;
    CHECK_CL(clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max, &max, NULL));
    assert_null(clCreateBuffer(ctx, 0, 0, NULL, &err));
    assert_int_equal(err, CL_INVALID_BUFFER_SIZE);
    assert_null(clCreateBuffer(ctx, 0, (size_t)max + 1, NULL, &err));
    assert_int_equal(err, CL_INVALID_BUFFER_SIZE);
    assert_null(clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 64, NULL, &err));
    assert_int_equal(err, CL_INVALID_VALUE);
    assert_null(clCreateBuffer(ctx, CL_MEM_USE_HOST_PTR, 64, NULL, &err));
    assert_int_equal(err, CL_INVALID_HOST_PTR);
    assert_null(clCreateBuffer(ctx, 0, 64, &x, &err));
    assert_int_equal(err, CL_INVALID_HOST_PTR);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_HOST_WRITE_ONLY, 4096, NULL, &err);
    CHECK_CL(err);
    char tmp[64];
    assert_int_equal(clEnqueueReadBuffer(queue, buf, CL_TRUE, 0, 64, tmp, 0, NULL, NULL), CL_INVALID_OPERATION);
    assert_int_equal(clEnqueueWriteBuffer(queue, buf, CL_TRUE, 4090, 64, tmp, 0, NULL, NULL), CL_INVALID_VALUE);
    cl_buffer_region r = {1, 64};
    assert_null(clCreateSubBuffer(buf, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err));
    assert_int_equal(err, CL_MISALIGNED_SUB_BUFFER_OFFSET);
    r.origin = 4096;
    assert_null(clCreateSubBuffer(buf, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err));
    assert_int_equal(err, CL_INVALID_VALUE);
    CHECK_CL(clReleaseMemObject(buf));
    /* A launch whose buffer does not fit the budget runs partitioned (zero-filled buffer). */
    size_t words = (16u << 20) / 4;
    cl_mem big = clCreateBuffer(ctx, CL_MEM_READ_WRITE, words * 4, NULL, &err);
    CHECK_CL(err);
    cl_uint k = 3;
    CHECK_CL(clSetKernelArg(bump, 0, sizeof big, &big));
    CHECK_CL(clSetKernelArg(bump, 1, sizeof k, &k));
    CHECK_CL(clEnqueueNDRangeKernel(queue, bump, 1, NULL, &words, NULL, 0, NULL, NULL));
    uint32_t *all = malloc(words * 4);
    assert_non_null(all);
    CHECK_CL(clEnqueueReadBuffer(queue, big, CL_TRUE, 0, words * 4, all, 0, NULL, NULL));
    for (size_t i = 0; i < words; i++)
        if (all[i] != k * (uint32_t)(i + 1))
            fail_msg("word %zu of the partitioned launch: %u, expected %u", i, all[i], k * (uint32_t)(i + 1));
    free(all);
    CHECK_CL(clReleaseMemObject(big));
}

VAST_CMOCKA_MAIN(setup, teardown,
                 test_8x_budget, test_64x_budget, test_larger_than_real_max_alloc, test_copy_fill_map_rect,
                 test_mmapped_file, test_errors)
