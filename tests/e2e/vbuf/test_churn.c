/*
 * test_churn: the page cache's footprint follows the working set (issue 17 item 4, issue 18
 * "Memory and paging"), through VAST at the default budget on PoCL, whose device memory is the
 * host's: the pool's frames are resident memory once touched. A buffer of B bytes through VAST
 * costs at most 2B while it lives (its backing store and its frames) and nothing once released.
 * Each test measures resident memory against `base`, taken after the program is built and the
 * application's own arrays are touched, before the first buffer.
 *
 * - churn: a 64 MiB buffer written from the host, updated by a kernel, read back whole and
 *   released, 24 times. The peak stays within 2B of base, and after each release resident
 *   memory is back within a few MiB of base. Before, each round took frames nobody had touched
 *   (1472 MiB more after 24 rounds); then the frames were reused but kept (B more after the
 *   first release, for good).
 * - fill_map: CTS test_thread_dimensions' pattern: one 128 MiB buffer, 8 rounds of
 *   clEnqueueFillBuffer, a kernel over 1, 2 or 3 dimensions, a read mapping of the whole
 *   buffer and its unmap. The peak stays within 2B of base (before frames of released pages
 *   were reused, each round's fill and kernel took fresh frames: the CTS test grew past 6 GB).
 *
 * Under AddressSanitizer resident memory also holds the sanitizer's own: its quarantine of freed
 * blocks (PoCL's device buffers are heap blocks), which is turned off here, and its shadow,
 * which keeps a poisoned byte for every 8 bytes of heap ever freed and is never given back
 * (about 25 MiB after churn's 24 rounds). The shadow's resident bytes are left out of every
 * figure: `after` exactly; `peak` (VmHWM, which cannot be split) by allowing the shadow's size
 * at the end, an upper bound of its size at the peak.
 */
#include "../platform/common.h"
#include "interpose/prebuild.h"
#include "vast_cmocka.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MIB ((size_t)1 << 20)
/* A few pages of the stores' huge pages, PoCL's small allocations, and the device's staging
 * ring (3 slots of VAST_STAGING_SLOT, 8 MiB), made once, at the first transfer that stages: a
 * transfer from a store the background pinner has not pinned yet stages, and a store of VAST's
 * own goes to the pinner at its first use (interpose/vbuf.c), so the first round's launch
 * right after its write may find it unpinned. */
#define SLACK (16 * MIB + 3 * 8 * MIB)

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#ifdef UNDER_ASAN
/* Freed blocks go back at once: the quarantine would keep the released buffers resident. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "quarantine_size_mb=0";
}
#endif

static const char *source = "__kernel void add(__global uint *a, uint k) {\n"
                            "    size_t i = get_global_id(0);\n"
                            "    a[i] += k * (uint)(i + 1);\n"
                            "}\n"
                            "__kernel void count(__global uint *dst, uint fx, uint fy) {\n"
                            "    size_t t = (get_global_id(2) * fy + get_global_id(1)) * fx + get_global_id(0);\n"
                            "    dst[t]++;\n"
                            "}\n";

/* VmHWM (peak) or VmRSS (now) of this process, bytes. */
static size_t status_bytes(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    size_t kib = 0, n = strlen(key);
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, key, n) == 0 && sscanf(line + n, ": %zu kB", &kib) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kib << 10;
}

/* Resident bytes of AddressSanitizer's shadow (x86-64: [0x7fff8000, 0x10007fff8000)); 0 without
 * it. */
static size_t shadow_bytes(void)
{
    size_t sum = 0;
#ifdef UNDER_ASAN
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int in_shadow = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        unsigned long long lo, hi;
        size_t kib;
        if (sscanf(line, "%llx-%llx ", &lo, &hi) == 2)
            in_shadow = lo >= 0x7fff8000ull && hi <= 0x10007fff8000ull;
        else if (in_shadow && sscanf(line, "Rss: %zu kB", &kib) == 1)
            sum += kib << 10;
    }
    if (f != NULL)
        fclose(f);
#endif
    return sum;
}

/* Resident memory now, and the peak since the last reset_peak, less the shadow. */
static size_t rss_now(void)
{
    return status_bytes("VmRSS") - shadow_bytes();
}

static size_t rss_peak(void)
{
    return status_bytes("VmHWM") - shadow_bytes();
}

/* The peak since now starts again from the current resident memory. */
static void reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f != NULL) {
        fputs("5", f);
        fclose(f);
    }
}

struct env {
    cl_context ctx;
    cl_command_queue q;
    cl_program p;
    cl_kernel k;
};

static void env_open(struct env *e, const char *kernel)
{
    cl_device_id device = test_device(test_platform());
    cl_int err;
    e->ctx = test_context(device);
    e->q = clCreateCommandQueue(e->ctx, device, 0, &err);
    CHECK_CL(err);
    e->p = test_program(e->ctx, device, source);
    e->k = clCreateKernel(e->p, kernel, &err);
    CHECK_CL(err);
    vast_prebuild_drain(); /* the background translation's memory belongs in the base */
}

static void env_close(struct env *e)
{
    CHECK_CL(clReleaseKernel(e->k));
    CHECK_CL(clReleaseProgram(e->p));
    CHECK_CL(clReleaseCommandQueue(e->q));
    CHECK_CL(clReleaseContext(e->ctx));
}

static void test_churn(void **state)
{
    (void)state;
    enum { ROUNDS = 24 };
    const size_t bytes = 64 * MIB, n = bytes / 4;
    struct env e;
    env_open(&e, "add");
    cl_uint *host = malloc(bytes);
    assert_non_null(host);
    memset(host, 0, bytes);
    size_t base = rss_now(), peak = 0, after = 0;
    reset_peak();
    for (cl_uint round = 0; round < ROUNDS; round++) {
        cl_int err;
        cl_mem b = clCreateBuffer(e.ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
        CHECK_CL(err);
        for (size_t i = 0; i < n; i++)
            host[i] = round * 7 + (cl_uint)i;
        CHECK_CL(clEnqueueWriteBuffer(e.q, b, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
        cl_uint k = round + 1;
        CHECK_CL(clSetKernelArg(e.k, 0, sizeof b, &b));
        CHECK_CL(clSetKernelArg(e.k, 1, sizeof k, &k));
        CHECK_CL(clEnqueueNDRangeKernel(e.q, e.k, 1, NULL, &n, NULL, 0, NULL, NULL));
        memset(host, 0xa5, bytes); /* poisoned before the read */
        CHECK_CL(clEnqueueReadBuffer(e.q, b, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
        for (size_t i = 0; i < n; i += 4099)
            assert_int_equal(host[i], round * 7 + (cl_uint)i + k * (cl_uint)(i + 1));
        assert_int_equal(host[n - 1], round * 7 + (cl_uint)(n - 1) + k * (cl_uint)n);
        CHECK_CL(clReleaseMemObject(b));
        CHECK_CL(clFinish(e.q));
        size_t now = rss_now();
        after = now > after ? now : after;
    }
    peak = rss_peak();
    printf("churn: base %zu MiB, peak %zu MiB, largest after a release %zu MiB (buffer %zu MiB, %d rounds)\n",
           base / MIB, peak / MIB, after / MIB, bytes / MIB, ROUNDS);
    assert_true(peak <= base + 2 * bytes + SLACK);
    assert_true(after <= base + SLACK);
    free(host);
    env_close(&e);
}

static void test_fill_map(void **state)
{
    (void)state;
    enum { ROUNDS = 8 };
    const size_t bytes = 128 * MIB;
    struct env e;
    env_open(&e, "count");
    cl_int err;
    size_t base = rss_now();
    reset_peak();
    cl_mem b = clCreateBuffer(e.ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK_CL(err);
    for (cl_uint round = 0; round < ROUNDS; round++) {
        cl_uint zero = 0, dims = 1 + round % 3;
        CHECK_CL(clEnqueueFillBuffer(e.q, b, &zero, sizeof zero, 0, bytes, 0, NULL, NULL));
        size_t items = bytes / 4 - round * 1001, g[3] = {items, 1, 1};
        if (dims == 2)
            g[0] = 4096, g[1] = items / 4096;
        if (dims == 3)
            g[0] = 256, g[1] = 256, g[2] = items / 65536;
        cl_uint fx = (cl_uint)g[0], fy = (cl_uint)g[1];
        size_t total = g[0] * g[1] * g[2];
        CHECK_CL(clSetKernelArg(e.k, 0, sizeof b, &b));
        CHECK_CL(clSetKernelArg(e.k, 1, sizeof fx, &fx));
        CHECK_CL(clSetKernelArg(e.k, 2, sizeof fy, &fy));
        CHECK_CL(clEnqueueNDRangeKernel(e.q, e.k, dims, NULL, g, NULL, 0, NULL, NULL));
        cl_uint *m = clEnqueueMapBuffer(e.q, b, CL_TRUE, CL_MAP_READ, 0, bytes, 0, NULL, NULL, &err);
        CHECK_CL(err);
        size_t bad = 0;
        for (size_t i = 0; i < bytes / 4; i++)
            bad += m[i] != (i < total ? 1u : 0u);
        assert_int_equal(bad, 0);
        CHECK_CL(clEnqueueUnmapMemObject(e.q, b, m, 0, NULL, NULL));
        CHECK_CL(clFinish(e.q));
    }
    size_t peak = rss_peak();
    CHECK_CL(clReleaseMemObject(b));
    CHECK_CL(clFinish(e.q));
    size_t after = rss_now();
    printf("fill_map: base %zu MiB, peak %zu MiB, after the release %zu MiB (buffer %zu MiB, %d rounds)\n",
           base / MIB, peak / MIB, after / MIB, bytes / MIB, ROUNDS);
    assert_true(peak <= base + 2 * bytes + SLACK);
    assert_true(after <= base + SLACK);
    env_close(&e);
}

VAST_CMOCKA_MAIN(NULL, NULL, test_churn, test_fill_map)
