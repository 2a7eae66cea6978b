/* test_ids.c - work-item ids past 32 bits through VAST (issue 13, defect 7), in ICD mode with
 * VAST alone visible, over offset32_icd.c: PoCL with NVIDIA's 32-bit launch offsets. Each case
 * fills a buffer with one byte per work-item computed from its 64-bit global id, group id,
 * local id and the launch's geometry; the host computes the same bytes. Poisoned buffers, odd
 * sizes; every byte is checked (huge: windows at the ends and across 2^31 and 2^32).
 *
 *   offset1d  global offset 2^32 - 3 Mi + 5, 6 Mi + 320 items, local 64: ids cross 2^32
 *   offset2d  offset (3, 2^31 - 2500), global (1000, 5000), local (8, 4): dimension 1 crosses 2^31
 *   huge      4 Gi + 192 items from offset 0, local 64 (label long: about a minute)
 *
 * Passing needs the right bytes and no real launch by VAST beyond 32 bits (the library counts
 * offsets it truncated and sizes it refused; the cases run partitioned or paged, never direct).
 * Usage: test_ids CASE. Exit 0 when right, 1 when a byte or the count is wrong. */
#include "harness.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src =
    "uchar mix(ulong v) { return (uchar)((v * 0x9E3779B97F4A7C15UL) >> 56); }\n"
    "__kernel void ids1(__global uchar *out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i - get_global_offset(0)] = mix(i) ^ (uchar)(get_group_id(0) * 13) ^ (uchar)(get_local_id(0) * 5)\n"
    "      ^ (uchar)(get_num_groups(0) + get_local_size(0) + get_global_size(0));\n"
    "}\n"
    "__kernel void ids2(__global uchar *out) {\n"
    "  size_t x = get_global_id(0), y = get_global_id(1);\n"
    "  size_t w = get_global_size(0);\n"
    "  out[(y - get_global_offset(1)) * w + x - get_global_offset(0)] = mix((y << 20) ^ x)\n"
    "      ^ (uchar)(get_group_id(1) * 13 + get_group_id(0)) ^ (uchar)(get_local_id(1) * 5 + get_local_id(0))\n"
    "      ^ (uchar)(get_num_groups(1) + get_local_size(1));\n"
    "}\n";

static uint8_t mix(uint64_t v)
{
    return (uint8_t)((v * 0x9E3779B97F4A7C15ull) >> 56);
}

struct shape {
    cl_uint dims;
    size_t off[2], global[2], local[2];
};

/* The byte work-item (x, y) writes, and where (relative to the buffer). */
static uint8_t expect(const struct shape *s, uint64_t x, uint64_t y)
{
    uint64_t gx = (x - s->off[0]) / s->local[0], lx = (x - s->off[0]) % s->local[0];
    if (s->dims == 1)
        return mix(x) ^ (uint8_t)(gx * 13) ^ (uint8_t)(lx * 5) ^
               (uint8_t)(s->global[0] / s->local[0] + s->local[0] + s->global[0]);
    uint64_t gy = (y - s->off[1]) / s->local[1], ly = (y - s->off[1]) % s->local[1];
    return mix((y << 20) ^ x) ^ (uint8_t)(gy * 13 + gx) ^ (uint8_t)(ly * 5 + lx) ^
           (uint8_t)(s->global[1] / s->local[1] + s->local[1]);
}

/* Checks bytes [lo, hi) of the buffer (read back from VAST); 0 when right. */
static int check_window(struct clenv *e, cl_mem m, const struct shape *s, size_t lo, size_t hi)
{
    uint8_t *got = malloc(hi - lo);
    CL_OK(clEnqueueReadBuffer(e->q, m, CL_TRUE, lo, hi - lo, got, 0, NULL, NULL));
    size_t bad = 0, first = 0;
    for (size_t b = lo; b < hi; b++) {
        uint64_t x = s->dims == 1 ? s->off[0] + b : s->off[0] + b % s->global[0];
        uint64_t y = s->dims == 1 ? 0 : s->off[1] + b / s->global[0];
        if (got[b - lo] != expect(s, x, y) && bad++ == 0)
            first = b;
    }
    if (bad)
        fprintf(stderr, "FAIL: %zu of bytes [%zu, %zu) wrong, first at %zu: 0x%02x, want 0x%02x\n", bad, lo, hi,
                first, got[first - lo],
                expect(s, s->dims == 1 ? s->off[0] + first : s->off[0] + first % s->global[0],
                       s->dims == 1 ? 0 : s->off[1] + first / s->global[0]));
    free(got);
    return bad != 0;
}

static unsigned long beyond_32_bits(void)
{
    const char *lib = getenv("VAST_BACKEND");
    void *h = lib != NULL ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
    unsigned long *n = h != NULL ? dlsym(h, "offset32_beyond") : NULL;
    if (n == NULL) {
        fprintf(stderr, "FAIL: VAST_BACKEND is not the offset32 library\n");
        exit(1);
    }
    return *n;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return fprintf(stderr, "usage: test_ids offset1d|offset2d|huge\n"), 2;
    struct shape s;
    const char *name = argv[1];
    if (!strcmp(name, "offset1d"))
        s = (struct shape){1, {(1ull << 32) - (3u << 20) + 5, 0}, {(6u << 20) + 320, 1}, {64, 1}};
    else if (!strcmp(name, "offset2d"))
        s = (struct shape){2, {3, (1ull << 31) - 2500}, {1000, 5000}, {8, 4}};
    else if (!strcmp(name, "huge"))
        s = (struct shape){1, {0, 0}, {(4ull << 30) + 192, 1}, {64, 1}};
    else
        return fprintf(stderr, "unknown case %s\n", name), 2;
    size_t bytes = s.global[0] * s.global[1];
    struct clenv e;
    clenv_open(&e, "VAST");
    cl_program p = clenv_build(&e, src, NULL);
    cl_int err;
    cl_kernel k = clCreateKernel(p, s.dims == 1 ? "ids1" : "ids2", &err);
    CL_OK(err);
    cl_mem out = clCreateBuffer(e.ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CL_OK(err);
    const cl_uchar poison = 0xA5;
    CL_OK(clEnqueueFillBuffer(e.q, out, &poison, 1, 0, bytes, 0, NULL, NULL));
    CL_OK(clSetKernelArg(k, 0, sizeof out, &out));
    CL_OK(clEnqueueNDRangeKernel(e.q, k, s.dims, s.off, s.global, s.local, 0, NULL, NULL));
    CL_OK(clFinish(e.q));
    int bad = 0;
    if (bytes < (64u << 20)) {
        bad |= check_window(&e, out, &s, 0, bytes);
    } else {
        const size_t w = 1 << 16, at[] = {w, (size_t)1 << 31, (size_t)1 << 32, bytes - w};
        for (size_t i = 0; i < sizeof at / sizeof *at; i++)
            bad |= check_window(&e, out, &s, at[i] - w, at[i] + w < bytes ? at[i] + w : bytes);
    }
    unsigned long beyond = beyond_32_bits();
    if (beyond != 0)
        bad = fprintf(stderr, "FAIL: VAST made %lu real launches with offsets or sizes beyond 32 bits\n", beyond);
    printf("%s %s: %zu bytes\n", bad ? "FAIL" : "ok", name, bytes);
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(p);
    clenv_close(&e);
    return bad ? 1 : 0;
}
