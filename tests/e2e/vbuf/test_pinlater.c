/*
 * test_pinlater: when the background pinner takes a buffer's host store (vbuf.c,
 * vast_vbuf_pin), through VAST on PoCL (whose pins are USE_HOST_PTR buffers of the context).
 * A store VAST maps for a buffer without a host pointer holds no data until its first use, and
 * pinning it faults its pages in: beside the application's first write into it the two fault
 * the same pages (on two H200s the write waited about 40 ms behind the pinner). So such a
 * store is queued at its first use: a host command that wrote it (write, fill, copy into it,
 * the unmap of a write mapping), or a launch that runs with it. Memory that holds data already
 * (USE_HOST_PTR, COPY_HOST_PTR) is queued at creation.
 *
 * Each case makes a buffer of 1 MiB + 12 KiB (an odd size, 17 granules of 64 KiB, the last
 * partial), waits for the pinner (pagecache_wait_background_pins) and counts the granules
 * pinned: none until the use, all after it (the worker pins the whole store, whatever part
 * the command touched), with the bytes read back as written.
 */
#include "../platform/common.h"
#include "interpose/object.h"
#include "pagecache/backing.h"
#include "vast_cmocka.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define GRANULE ((size_t)64 << 10)
#define BYTES (((size_t)1 << 20) + (12 << 10))
#define GRANULES ((BYTES + GRANULE - 1) / GRANULE)

static const char *source = "__kernel void stamp(__global uint *a, uint k) {\n"
                            "    size_t i = get_global_id(0);\n"
                            "    a[i] = k ^ (uint)i;\n"
                            "}\n";

struct env {
    cl_context ctx;
    cl_command_queue q;
    cl_program p;
    cl_kernel k;
    cl_uint *host; /* BYTES */
};

static int setup(void **state)
{
    static struct env e;
    cl_device_id device = test_device(test_platform());
    cl_int err;
    e.ctx = test_context(device);
    e.q = clCreateCommandQueue(e.ctx, device, 0, &err);
    CHECK_CL(err);
    e.p = test_program(e.ctx, device, source);
    e.k = clCreateKernel(e.p, "stamp", &err);
    CHECK_CL(err);
    e.host = malloc(BYTES);
    assert_non_null(e.host);
    *state = &e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;
    free(e->host);
    CHECK_CL(clReleaseKernel(e->k));
    CHECK_CL(clReleaseProgram(e->p));
    CHECK_CL(clReleaseCommandQueue(e->q));
    CHECK_CL(clReleaseContext(e->ctx));
    return 0;
}

/* A buffer, whose store pins in GRANULE granules from its creation on (CTest sets
 * VAST_PIN_GRANULE=64K). */
static cl_mem make(struct env *e, cl_mem_flags flags, void *host_ptr)
{
    cl_int err;
    cl_mem m = clCreateBuffer(e->ctx, flags, BYTES, host_ptr, &err);
    CHECK_CL(err);
    assert_int_equal(pagecache_backing_pin_granule(m->backing), GRANULE); /* VAST_PIN_GRANULE */
    return m;
}

/* Granules of m's store pinned once the background pinner has nothing left to do. */
static size_t pinned(cl_mem m)
{
    pagecache_wait_background_pins();
    return pagecache_backing_pinned_granules(m->backing);
}

static void fill_host(cl_uint *h, cl_uint seed)
{
    for (size_t i = 0; i < BYTES / 4; i++)
        h[i] = seed * 2654435761u + (cl_uint)i;
}

/* m holds fill_host(seed)'s bytes (read back into a poisoned array). */
static void check_bytes(struct env *e, cl_mem m, cl_uint seed)
{
    cl_uint *want = malloc(BYTES);
    assert_non_null(want);
    fill_host(want, seed);
    memset(e->host, 0xa5, BYTES);
    CHECK_CL(clEnqueueReadBuffer(e->q, m, CL_TRUE, 0, BYTES, e->host, 0, NULL, NULL));
    assert_memory_equal(e->host, want, BYTES);
    free(want);
}

/* Not pinned when made; a write of its first 4 KiB (non-blocking, then clFinish) queues it. */
static void test_write(void **state)
{
    struct env *e = *state;
    cl_mem m = make(e, CL_MEM_READ_WRITE, NULL);
    assert_int_equal(pinned(m), 0);
    fill_host(e->host, 1);
    CHECK_CL(clEnqueueWriteBuffer(e->q, m, CL_FALSE, 0, 4096, e->host, 0, NULL, NULL));
    CHECK_CL(clFinish(e->q));
    assert_int_equal(pinned(m), GRANULES);
    CHECK_CL(clEnqueueWriteBuffer(e->q, m, CL_TRUE, 4096, BYTES - 4096, (char *)e->host + 4096, 0, NULL, NULL));
    check_bytes(e, m, 1);
    CHECK_CL(clReleaseMemObject(m));
}

/* A fill, and a copy into a second buffer, each queue the buffer they wrote; a read queues
 * nothing. */
static void test_fill_copy(void **state)
{
    struct env *e = *state;
    cl_mem a = make(e, CL_MEM_READ_WRITE, NULL), b = make(e, CL_MEM_READ_WRITE, NULL);
    CHECK_CL(clEnqueueReadBuffer(e->q, b, CL_TRUE, 0, 4096, e->host, 0, NULL, NULL));
    assert_int_equal(pinned(b), 0);
    cl_uint pattern = 0x5eed1234u;
    CHECK_CL(clEnqueueFillBuffer(e->q, a, &pattern, sizeof pattern, 0, BYTES, 0, NULL, NULL));
    CHECK_CL(clFinish(e->q));
    assert_int_equal(pinned(a), GRANULES);
    assert_int_equal(pinned(b), 0);
    CHECK_CL(clEnqueueCopyBuffer(e->q, a, b, 0, 0, BYTES, 0, NULL, NULL));
    CHECK_CL(clFinish(e->q));
    assert_int_equal(pinned(b), GRANULES);
    memset(e->host, 0, BYTES);
    CHECK_CL(clEnqueueReadBuffer(e->q, b, CL_TRUE, 0, BYTES, e->host, 0, NULL, NULL));
    for (size_t i = 0; i < BYTES / 4; i++)
        assert_int_equal(e->host[i], pattern);
    CHECK_CL(clReleaseMemObject(b));
    CHECK_CL(clReleaseMemObject(a));
}

/* A read mapping queues nothing; a write mapping queues the store at its unmap. */
static void test_map(void **state)
{
    struct env *e = *state;
    cl_mem m = make(e, CL_MEM_READ_WRITE, NULL);
    cl_int err;
    void *p = clEnqueueMapBuffer(e->q, m, CL_TRUE, CL_MAP_READ, 0, BYTES, 0, NULL, NULL, &err);
    CHECK_CL(err);
    CHECK_CL(clEnqueueUnmapMemObject(e->q, m, p, 0, NULL, NULL));
    CHECK_CL(clFinish(e->q));
    assert_int_equal(pinned(m), 0);
    cl_uint *w = clEnqueueMapBuffer(e->q, m, CL_TRUE, CL_MAP_WRITE, 0, BYTES, 0, NULL, NULL, &err);
    CHECK_CL(err);
    fill_host(w, 3);
    assert_int_equal(pinned(m), 0); /* the application is writing it */
    CHECK_CL(clEnqueueUnmapMemObject(e->q, m, w, 0, NULL, NULL));
    CHECK_CL(clFinish(e->q));
    assert_int_equal(pinned(m), GRANULES);
    check_bytes(e, m, 3);
    CHECK_CL(clReleaseMemObject(m));
}

/* A launch that runs with the buffer queues it (the kernel writes every element; no host
 * command touched the store before). */
static void test_launch(void **state)
{
    struct env *e = *state;
    cl_mem m = make(e, CL_MEM_WRITE_ONLY, NULL);
    assert_int_equal(pinned(m), 0);
    cl_uint k = 0x9e3779b9u;
    size_t n = BYTES / 4;
    CHECK_CL(clSetKernelArg(e->k, 0, sizeof m, &m));
    CHECK_CL(clSetKernelArg(e->k, 1, sizeof k, &k));
    CHECK_CL(clEnqueueNDRangeKernel(e->q, e->k, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK_CL(clFinish(e->q));
    assert_false(atomic_load(&m->pin_later));
    assert_int_equal(pinned(m), GRANULES);
    memset(e->host, 0xa5, BYTES);
    CHECK_CL(clEnqueueReadBuffer(e->q, m, CL_TRUE, 0, BYTES, e->host, 0, NULL, NULL));
    for (size_t i = 0; i < n; i++)
        assert_int_equal(e->host[i], k ^ (cl_uint)i);
    CHECK_CL(clReleaseMemObject(m));
}

/* The application's memory, or a copy of it, is queued when the buffer is made. */
static void test_host_ptr(void **state)
{
    struct env *e = *state;
    cl_uint *app = aligned_alloc(4096, BYTES) /* BYTES: a multiple of 4 KiB */;
    assert_non_null(app);
    fill_host(app, 4);
    fill_host(e->host, 5);
    cl_mem use = make(e, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, app);
    cl_mem copy = make(e, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, e->host);
    assert_false(atomic_load(&use->pin_later));
    assert_false(atomic_load(&copy->pin_later));
    assert_int_equal(pinned(use), GRANULES);
    assert_int_equal(pinned(copy), GRANULES);
    check_bytes(e, use, 4);
    check_bytes(e, copy, 5);
    CHECK_CL(clReleaseMemObject(copy));
    CHECK_CL(clReleaseMemObject(use));
    free(app);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write),    cmocka_unit_test(test_fill_copy), cmocka_unit_test(test_map),
        cmocka_unit_test(test_launch),   cmocka_unit_test(test_host_ptr),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
