/* test_api.c - partitioned execution (issue 5) through the OpenCL API: hand-written kernels,
 * each run on PoCL and through VAST in one process (ICD mode), at a device budget far below
 * their data, with 4 KiB and 64 KiB pages. Integer results must be bit-identical (and equal
 * a CPU reference where one is given); float results byte-identical to PoCL's own.
 *
 *   stencil2d    2-D 5-point stencil, 1001 x 777 floats, local 24 x 3 (divides no page)
 *   stencil3d    3-D 7-point stencil, 131 x 67 x 97 floats, local 16 x 3 x 2
 *   offset1d     1-D launch with a global work offset (1000) that is not a multiple of the
 *                local size; elements outside the range keep their poison
 *   offset2d     2-D launch with global offset (13, 7)
 *   guard_row    2-D launch where one row of work-groups needs more than the budget: the
 *                partitions must split slabs (VAST's guard); partitions > rows of groups
 *   gather       out[i] = x[idx[i]], random idx (data-dependent reads)
 *   scatter      y[idx[i]] = f(x[i]), idx a random permutation (data-dependent writes)
 *   listwalk     every work-item follows a random next[] chain 8 steps
 *   spmv_ell     SpMV, ELL column-major, random columns
 *   histogram    atomic_inc on 64K global bins + atomic_add on one global counter
 *   inplace_retry a[i] = a[i] * 2 + 1 + tab[idx[i]]: not safe to re-execute, with data-
 *                dependent reads, so a faulting partition must be restored before its retry
 *                (VAST_STATS must show faults and retries)
 *   gather_moving 4 launches of out[i] += x[idx[i]]; idx[i] = hash(idx[i]): launches 2-4 reuse
 *                the first launch's plan (log line) although their indices differ, so faults
 *                complete the page sets (read-modify-write: restored around retries)
 *   async_paged  async_work_group_copy of each work-group's rows into __local memory, over data 4x
 *                the budget: partitioned (the translator rewrites the copy), equal to PoCL
 *   untranslatable_fits     a read-modify-write of a packed struct's member (VAST cannot page
 *                it) with data that fits: runs direct, same result
 *   untranslatable_refused  the same over data that does not fit: CL_OUT_OF_RESOURCES from
 *                clEnqueueNDRangeKernel itself, a "vast: error:" line naming the kernel and why,
 *                a log line naming the construct, buffers untouched
 *   group_slices  y[i] = row i of a (1500 uints) . x, and ids: a work-group of 64 alone reads
 *                more than the 256 KiB budget but its work-items are independent, so it runs
 *                in slices; get_group_id, get_local_id, get_local_size, get_num_groups must
 *                report the application's work-groups
 *   group_slices2d  the same over a 2-D NDRange (16 x 96 at offset (5, 3), local 8 x 8): slices
 *                in both dimensions
 *   group_barrier_overdraft  the same with a barrier: its work-groups cannot be sliced, so each
 *                runs alone on frames borrowed past the budget (the overdraft), same result
 *   group_barrier_refused  the same with the overdraft off (VAST_OVERDRAFT=0): refused by
 *                clEnqueueNDRangeKernel itself (CL_OUT_OF_RESOURCES, a log line naming the kernel
 *                and the work-group), buffers untouched: its page sets need no data
 *   guard_refused one work-item reads more than the budget, the overdraft off: CL_OUT_OF_RESOURCES,
 *                a log line naming the kernel and the reason, buffers untouched
 *   launches100  the same kernel launched 100 times over 1 MiB that fits the budget: the data
 *                moves host->device once (VAST_STATS h2d_bytes <= data + one page)
 *   grid_stride_axpy  CLBlast's Xaxpy in double: a grid-stride loop (256 work-items over 4099
 *                elements, stride 7, offset 10) reading and writing y: exact host page sets, no
 *                snapshot; under VAST_INSPECT=check, where a host set that misses a page the
 *                inspector marks fails the launch (as one did: a work-item's last iteration,
 *                translate/affine_eval.c, split_var)
 *   serpentine   y[i] = a * x[i] + y[i] (read-modify-write, affine: exact host page sets, so no
 *                snapshot and overlapping partitions) launched 6 times over data twice the
 *                budget: each launch starts at the end where the last one stopped, so every
 *                second one runs backwards (VAST_STATS backwards >= 3), and the data moves
 *                host->device at most 5 times (3.7x at 4 KiB pages, 4.6x at 64 KiB), where
 *                launches that all run forwards load it whole each time (6.2x: VAST_SERPENTINE=0)
 *                (with VAST_CHAIN=0: chained, the 6 launches move the data once, test_chain.c)
 *
 * Every kept launch must show mode=partitioned with partitions >= 2 in VAST_STATS (so a
 * budget that happens to fit cannot pass unnoticed). Usage:
 *   partition_api [--pages 4K,64K] [--only NAME[,NAME]] [--flip]
 * --flip flips one byte of VAST's result before comparing: every selected case must then
 * FAIL ("differs at byte"); that is how the comparison is shown to be able to fail.
 * Exit 0 when every case behaves as expected. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum expect { PARTITIONED, DIRECT, REFUSED, REFUSED_AT_ENQUEUE };
enum { F_FAULTS = 1, F_MIN_PARTS = 2, F_MOVE_ONCE = 4, F_PLAN_REUSED = 8, F_SERPENTINE = 16, F_CHECK_SETS = 32 };

struct api_test {
    const char *name, *kernel;
    size_t frac, budget; /* budget = ws / frac, or `budget` bytes when frac is 0 */
    enum expect expect;
    unsigned flags;
    long min_parts;
    const char *const *reasons; /* REFUSED: words one of which the log line must carry */
    void (*make)(struct job *j);
    int (*check)(const struct job *j, unsigned char **out); /* CPU reference, or NULL */
    const char *construct; /* REFUSED: a "vast:" line must name the kernel and this */
};

static const char *const reason_wg[] = {"work-group", "work group", "workgroup", NULL};
static const char *const reason_unpageable[] = {"straddl", "cannot be paged", "translat", NULL};

static uint64_t seed;
static void *rnd_u32(size_t n, uint32_t mod) { return harness_rnd_u32(&seed, n, mod); }
static void *rnd_f32(size_t n) { return harness_rnd_f32(&seed, n); }
static void *poison(size_t bytes) { return harness_poison(bytes); }
static void *perm(size_t n)
{
    uint32_t *v = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        v[i] = (uint32_t)i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t k = harness_rand(&seed) % (i + 1);
        uint32_t t = v[i];
        v[i] = v[k], v[k] = t;
    }
    return v;
}
static size_t up(size_t x, size_t m) { return (x + m - 1) / m * m; }


/* ---- stencils ---- */
static const cl_uint s2w = 1001, s2h = 777;
static void make_stencil2d(struct job *j)
{
    static const char *src =
        "__kernel void stencil2d(__global const float *in, __global float *out, uint w, uint h) {\n"
        "  size_t x = get_global_id(0), y = get_global_id(1);\n"
        "  if (x >= w || y >= h) return;\n"
        "  size_t c = y * w + x;\n"
        "  if (x == 0 || y == 0 || x == w - 1 || y == h - 1) { out[c] = in[c]; return; }\n"
        "  out[c] = 0.5f * in[c] + 0.125f * (in[c - 1] + in[c + 1] + in[c - w] + in[c + w]);\n"
        "}\n";
    size_t n = (size_t)s2w * s2h;
    *j = (struct job){src, "", "stencil2d", 2, {up(s2w, 24), up(s2h, 3)}, {24, 3}, {0}, true, false, 0, 4,
                      {BUF(n * 4, rnd_f32(n)), BUF(n * 4, poison(n * 4)), SCAL(s2w), SCAL(s2h)}};
}

static const cl_uint s3x = 131, s3y = 67, s3z = 97;
static void make_stencil3d(struct job *j)
{
    static const char *src =
        "__kernel void stencil3d(__global const float *in, __global float *out, uint nx, uint ny, uint nz) {\n"
        "  size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);\n"
        "  if (x >= nx || y >= ny || z >= nz) return;\n"
        "  size_t sy = nx, sz = (size_t)nx * ny, c = z * sz + y * sy + x;\n"
        "  if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) { out[c] = in[c]; return; }\n"
        "  out[c] = 0.4f * in[c] + 0.1f * (in[c - 1] + in[c + 1] + in[c - sy] + in[c + sy] + in[c - sz] + in[c + sz]);\n"
        "}\n";
    size_t n = (size_t)s3x * s3y * s3z;
    *j = (struct job){src, "", "stencil3d", 3, {up(s3x, 16), up(s3y, 3), up(s3z, 2)}, {16, 3, 2}, {0}, true, false, 0, 5,
                      {BUF(n * 4, rnd_f32(n)), BUF(n * 4, poison(n * 4)), SCAL(s3x), SCAL(s3y), SCAL(s3z)}};
}

/* ---- global offsets ---- */
static const char *src_offset =
    "__kernel void offset1d(__global const uint *in, __global uint *out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = in[i] * 3u + (uint)i + (uint)get_global_offset(0) * 7u;\n"
    "}\n"
    "__kernel void offset2d(__global const uint *in, __global uint *out, uint pitch) {\n"
    "  size_t x = get_global_id(0), y = get_global_id(1), c = y * pitch + x;\n"
    "  out[c] = in[c] ^ (uint)(x * 31u + y) ^ (uint)(get_global_offset(1) << 20);\n"
    "}\n";
static void make_offset1d(struct job *j)
{
    size_t n = 1001537;
    *j = (struct job){src_offset, "", "offset1d", 1, {1000000}, {64}, {1000}, true, true, 0, 2,
                      {BUF(n * 4, rnd_u32(n, 0)), BUF(n * 4, poison(n * 4))}};
}
static int check_offset1d(const struct job *j, unsigned char **out)
{
    const uint32_t *in = j->args[0].data, *o = (const uint32_t *)out[1];
    for (size_t i = 0; i < j->args[0].bytes / 4; i++) {
        uint32_t want = i >= 1000 && i < 1001000 ? in[i] * 3u + (uint32_t)i + 7000u : 0xA5A5A5A5u;
        if (o[i] != want)
            return printf("  offset1d: out[%zu] = 0x%x, expected 0x%x\n", i, o[i], want), 1;
    }
    return 0;
}
static cl_uint o2pitch = 1024;
static void make_offset2d(struct job *j)
{
    size_t n = (size_t)o2pitch * 620;
    *j = (struct job){src_offset, "", "offset2d", 2, {1000, 600}, {8, 8}, {13, 7}, true, true, 0, 3,
                      {BUF(n * 4, rnd_u32(n, 0)), BUF(n * 4, poison(n * 4)), SCAL(o2pitch)}};
}

/* ---- guard path: one row of work-groups larger than the budget ---- */
static const cl_uint grw = 40001, grh = 30;
static void make_guard_row(struct job *j)
{
    static const char *src =
        "__kernel void guard_row(__global const float *in, __global float *out, uint w) {\n"
        "  size_t x = get_global_id(0), y = get_global_id(1);\n"
        "  if (x >= w) return;\n"
        "  out[y * w + x] = in[y * w + x] * 2.0f + (float)y;\n"
        "}\n";
    size_t n = (size_t)grw * grh;
    *j = (struct job){src, "", "guard_row", 2, {up(grw, 64), grh}, {64, 2}, {0}, true, false, 0, 3,
                      {BUF(n * 4, rnd_f32(n)), BUF(n * 4, poison(n * 4)), SCAL(grw)}};
}

/* ---- data-dependent accesses ---- */
static void make_gather(struct job *j)
{
    static const char *src = "__kernel void gather(__global const float *x, __global const uint *idx,\n"
                             "                     __global float *out) {\n"
                             "  size_t i = get_global_id(0); out[i] = x[idx[i]];\n"
                             "}\n";
    size_t n = 2u << 20, nx = 65536;
    *j = (struct job){src, "", "gather", 1, {n}, {64}, {0}, true, false, 0, 3,
                      {BUF(nx * 4, rnd_f32(nx)), BUF(n * 4, rnd_u32(n, (uint32_t)nx)), BUF(n * 4, poison(n * 4))}};
}
static int check_gather(const struct job *j, unsigned char **out)
{
    const uint32_t *x = j->args[0].data, *idx = j->args[1].data, *o = (const uint32_t *)out[2];
    for (size_t i = 0; i < j->global[0]; i++)
        if (o[i] != x[idx[i]])
            return printf("  gather: out[%zu] wrong\n", i), 1;
    return 0;
}

static const char *src_scatter =
    "__kernel void scatter(__global const uint4 *x, __global const uint *idx, __global uint *y) {\n"
    "  size_t i = get_global_id(0);\n"
    "  uint4 a = x[2 * i], b = x[2 * i + 1];\n"
    "  y[idx[i]] = a.x + 3u * a.y + 5u * a.z + 7u * a.w + (b.x ^ b.y) + b.z * b.w;\n"
    "}\n";
static void make_scatter(struct job *j)
{
    size_t n = 128u << 10;
    *j = (struct job){src_scatter, "", "scatter", 1, {n}, {64}, {0}, true, false, 0, 3,
                      {BUF(n * 32, rnd_u32(n * 8, 0)), BUF(n * 4, perm(n)), BUF(n * 4, poison(n * 4))}};
}
static int check_scatter(const struct job *j, unsigned char **out)
{
    const uint32_t *x = j->args[0].data, *idx = j->args[1].data, *y = (const uint32_t *)out[2];
    for (size_t i = 0; i < j->global[0]; i++) {
        const uint32_t *a = x + 8 * i, *b = a + 4;
        uint32_t want = a[0] + 3u * a[1] + 5u * a[2] + 7u * a[3] + (b[0] ^ b[1]) + b[2] * b[3];
        if (y[idx[i]] != want)
            return printf("  scatter: y[%u] wrong\n", idx[i]), 1;
    }
    return 0;
}

static cl_uint walk_steps = 8;
static void make_listwalk(struct job *j)
{
    static const char *src =
        "__kernel void listwalk(__global const uint *start, __global const uint *next,\n"
        "                       __global const uint *payload, __global uint *out, uint steps) {\n"
        "  size_t i = get_global_id(0);\n"
        "  uint p = start[i], acc = 0;\n"
        "  for (uint s = 0; s < steps; s++) { acc = acc * 31u + payload[p]; p = next[p]; }\n"
        "  out[i] = acc ^ p;\n"
        "}\n";
    size_t n = 1u << 20, m = 65536;
    *j = (struct job){src, "", "listwalk", 1, {n}, {64}, {0}, true, false, 0, 5,
                      {BUF(n * 4, rnd_u32(n, (uint32_t)m)), BUF(m * 4, perm(m)), BUF(m * 4, rnd_u32(m, 0)),
                       BUF(n * 4, poison(n * 4)), SCAL(walk_steps)}};
}
static int check_listwalk(const struct job *j, unsigned char **out)
{
    const uint32_t *start = j->args[0].data, *next = j->args[1].data, *pay = j->args[2].data;
    const uint32_t *o = (const uint32_t *)out[3];
    for (size_t i = 0; i < j->global[0]; i++) {
        uint32_t p = start[i], acc = 0;
        for (unsigned s = 0; s < walk_steps; s++)
            acc = acc * 31u + pay[p], p = next[p];
        if (o[i] != (acc ^ p))
            return printf("  listwalk: out[%zu] wrong\n", i), 1;
    }
    return 0;
}

static cl_uint ell_rows = 200003, ell_width = 8;
static void make_spmv(struct job *j)
{
    static const char *src =
        "__kernel void spmv_ell(__global const float *val, __global const uint *col, __global const float *x,\n"
        "                       __global float *y, uint rows, uint width) {\n"
        "  size_t r = get_global_id(0);\n"
        "  if (r >= rows) return;\n"
        "  float s = 0.0f;\n"
        "  for (uint k = 0; k < width; k++) s += val[k * rows + r] * x[col[k * rows + r]];\n"
        "  y[r] = s;\n"
        "}\n";
    size_t nnz = (size_t)ell_rows * ell_width, nx = 65536;
    *j = (struct job){src, "", "spmv_ell", 1, {up(ell_rows, 64)}, {64}, {0}, true, false, 0, 6,
                      {BUF(nnz * 4, rnd_f32(nnz)), BUF(nnz * 4, rnd_u32(nnz, (uint32_t)nx)), BUF(nx * 4, rnd_f32(nx)),
                       BUF(ell_rows * 4, poison(ell_rows * 4)), SCAL(ell_rows), SCAL(ell_width)}};
}

/* ---- global atomics across partitions ---- */
static void make_histogram(struct job *j)
{
    static const char *src =
        "__kernel void histogram(__global const uint *data, __global uint *bins, __global uint *counter) {\n"
        "  uint d = data[get_global_id(0)];\n"
        "  atomic_inc(&bins[d & 0xffffu]);\n"
        "  atomic_add(counter, d >> 24);\n"
        "}\n";
    size_t n = 2u << 20;
    *j = (struct job){src, "", "histogram", 1, {n}, {256}, {0}, true, false, 0, 3,
                      {BUF(n * 4, rnd_u32(n, 0)), BUF(65536 * 4, NULL), BUF(4, NULL)}};
}
static int check_histogram(const struct job *j, unsigned char **out)
{
    const uint32_t *d = j->args[0].data, *bins = (const uint32_t *)out[1], *counter = (const uint32_t *)out[2];
    uint32_t *want = calloc(65536, 4), sum = 0;
    for (size_t i = 0; i < j->global[0]; i++)
        want[d[i] & 0xffff]++, sum += d[i] >> 24;
    int bad = memcmp(want, bins, 65536 * 4) != 0 || *counter != sum;
    if (bad)
        printf("  histogram: bins or counter differ from the CPU's (counter %u, expected %u)\n", *counter, sum);
    free(want);
    return bad;
}

static void make_inplace(struct job *j)
{
    static const char *src =
        "__kernel void inplace_retry(__global uint *a, __global const uint *idx, __global const uint *tab) {\n"
        "  size_t i = get_global_id(0);\n"
        "  uint t = tab[idx[i]];\n"
        "  a[i] = a[i] * 2u + 1u + t;\n"
        "}\n";
    size_t n = 1u << 20, m = 65536;
    *j = (struct job){src, "", "inplace_retry", 1, {n}, {64}, {0}, true, false, 0, 3,
                      {BUF(n * 4, rnd_u32(n, 0)), BUF(n * 4, rnd_u32(n, (uint32_t)m)), BUF(m * 4, rnd_u32(m, 0))}};
}
static int check_inplace(const struct job *j, unsigned char **out)
{
    const uint32_t *a = j->args[0].data, *idx = j->args[1].data, *tab = j->args[2].data, *o = (const uint32_t *)out[0];
    for (size_t i = 0; i < j->global[0]; i++)
        if (o[i] != a[i] * 2u + 1u + tab[idx[i]])
            return printf("  inplace_retry: a[%zu] = 0x%x, expected 0x%x (applied twice?)\n", i, o[i],
                          a[i] * 2u + 1u + tab[idx[i]]), 1;
    return 0;
}

/* ---- a work-group copy, and a kernel VAST cannot page ---- */
static const char *src_async =
    "__kernel void async_copy(__global const float *in, __global float *out, __local float *tmp) {\n"
    "  event_t e = async_work_group_copy(tmp, in + get_group_id(0) * get_local_size(0), get_local_size(0), 0);\n"
    "  wait_group_events(1, &e);\n"
    "  out[get_global_id(0)] = tmp[(get_local_id(0) * 7) % get_local_size(0)] * 2.0f + 1.0f;\n"
    "}\n";
static void make_async(struct job *j)
{
    size_t n = (1u << 20) + 64 * 3;
    *j = (struct job){src_async, "", "async_copy", 1, {n}, {64}, {0}, true, false, 0, 3,
                      {BUF(n * 4, rnd_f32(n)), BUF(n * 4, poison(n * 4)), {JA_LOCAL, 64 * 4, NULL}}};
}
static void make_unpageable(struct job *j, size_t n)
{
    *j = (struct job){HARNESS_SRC_UNPAGEABLE, "", "unpageable", 1, {n}, {64}, {0}, true, false, 0, 3,
                      {BUF(n * 4, rnd_f32(n)), BUF(n * 4, poison(n * 4)), {JA_LOCAL, 64 * 4, NULL}}};
}
static void make_unpageable_fits(struct job *j) { make_unpageable(j, 256u << 10); }
static void make_unpageable_big(struct job *j) { make_unpageable(j, 1u << 20); }

static cl_uint whole_m = 256u << 10;
static void make_guard_refused(struct job *j)
{
    static const char *src =
        "__kernel void whole_table(__global const uint *table, __global uint *out, uint m) {\n"
        "  size_t i = get_global_id(0); uint s = 0;\n"
        "  for (uint k = 0; k < 256; k++) s += table[k * (m / 256) + get_local_id(0)];\n"
        "  out[i] = s;\n"
        "}\n";
    size_t n = 8192;
    *j = (struct job){src, "", "whole_table", 1, {n}, {64}, {0}, true, false, 0, 3,
                      {BUF(whole_m * 4, rnd_u32(whole_m, 0)), BUF(n * 4, poison(n * 4)), SCAL(whole_m)}};
}

/* An xgemv-like kernel (CLBlast's at 256K: 66 pages for work-group 0, budget 64). */
static cl_uint rows_n = 1500;
static void make_rows(struct job *j, const char *kernel, const char *src)
{
    size_t m = 64 * 40 + 64 * 3; /* rows; 64 per work-group */
    *j = (struct job){src, "", kernel, 1, {m}, {64}, {0}, true, false, 0, 4,
                      {BUF(m * rows_n * 4, rnd_u32(m * rows_n, 0)), BUF(rows_n * 4, rnd_u32(rows_n, 0)),
                       BUF(m * 4, poison(m * 4)), SCAL(rows_n)}};
}
#define ROWS_SRC(name, sync)                                                                                \
    "__kernel void " name "(__global const uint *a, __global const uint *x, __global uint *y, uint n) {\n" \
    "  size_t i = get_global_id(0); uint s = 0;\n"                                                        \
    "  for (uint j = 0; j < n; j++) s += a[i * n + j] * x[j];\n" sync                                     \
    "  y[i] = s ^ (uint)(get_group_id(0) * 131u) ^ (uint)(get_local_id(0) << 20) ^\n"                     \
    "         (uint)(get_local_size(0) << 27) ^ (uint)get_num_groups(0);\n"                               \
    "}\n"
static void make_group_slices(struct job *j)
{
    make_rows(j, "row_dot", ROWS_SRC("row_dot", ""));
}
static void make_group_slices2d(struct job *j)
{
    static const char *src =
        "__kernel void row_dot2(__global const uint *a, __global const uint *x, __global uint *y, uint n) {\n"
        "  size_t i = (get_global_id(1) - get_global_offset(1)) * get_global_size(0) + get_global_id(0) -\n"
        "             get_global_offset(0); uint s = 0;\n"
        "  for (uint j = 0; j < n; j++) s += a[i * n + j] * x[j];\n"
        "  y[i] = s ^ (uint)((get_group_id(1) * get_num_groups(0) + get_group_id(0)) * 131u) ^\n"
        "         (uint)((get_local_id(1) * 16 + get_local_id(0)) << 20) ^\n"
        "         (uint)((get_local_size(1) * 16 + get_local_size(0)) << 12) ^ (uint)(get_num_groups(1) << 8);\n"
        "}\n";
    size_t m = 16 * 96;
    *j = (struct job){src, "", "row_dot2", 2, {16, 96}, {8, 8}, {5, 3}, true, true, 0, 4,
                      {BUF(m * rows_n * 4, rnd_u32(m * rows_n, 0)), BUF(rows_n * 4, rnd_u32(rows_n, 0)),
                       BUF(m * 4, poison(m * 4)), SCAL(rows_n)}};
}
static void make_group_barrier(struct job *j)
{
    make_rows(j, "row_dot_sync", ROWS_SRC("row_dot_sync", "  barrier(CLK_GLOBAL_MEM_FENCE);\n"));
}

static cl_uint moving_nx = 65536;
static void make_gather_moving(struct job *j)
{
    static const char *src = "__kernel void gather_moving(__global const float *x, __global uint *idx,\n"
                             "                            __global float *out, uint nx) {\n"
                             "  size_t i = get_global_id(0); uint k = idx[i]; out[i] += x[k];\n"
                             "  idx[i] = (k * 2654435761u + 12345u) % nx;\n"
                             "}\n";
    size_t n = 1u << 20;
    *j = (struct job){src, "", "gather_moving", 1, {n}, {64}, {0}, true, false, 4, 4,
                      {BUF(moving_nx * 4, rnd_f32(moving_nx)), BUF(n * 4, rnd_u32(n, moving_nx)),
                       BUF(n * 4, rnd_f32(n)), SCAL(moving_nx)}};
}

static void make_launches100(struct job *j)
{
    static const char *src = "__kernel void bump100(__global uint *a) { a[get_global_id(0)] += 1u; }\n";
    size_t n = 256u << 10;
    *j = (struct job){src, "", "bump100", 1, {n}, {64}, {0}, true, false, 100, 1, {BUF(n * 4, rnd_u32(n, 0))}};
}
static int check_launches100(const struct job *j, unsigned char **out)
{
    const uint32_t *a = j->args[0].data, *o = (const uint32_t *)out[0];
    for (size_t i = 0; i < j->global[0]; i++)
        if (o[i] != a[i] + 100u)
            return printf("  bump100: a[%zu] wrong\n", i), 1;
    return 0;
}

static double gs_alpha = 1.5;
static cl_int gs_n = 4099, gs_off = 10, gs_inc = 7;
static void make_grid_stride_axpy(struct job *j)
{
    static const char *src =
        "#pragma OPENCL EXTENSION cl_khr_fp64: enable\n"
        "typedef double real;\n"
        "__kernel __attribute__((reqd_work_group_size(64, 1, 1)))\n"
        "void Xaxpy(const int n, const real alpha, const __global real* restrict xgm, const int x_offset,\n"
        "           const int x_inc, __global real* ygm, const int y_offset, const int y_inc) {\n"
        "  for (int id = get_global_id(0); id < n; id += get_global_size(0))\n"
        "    ygm[id*y_inc + y_offset] += alpha * xgm[id*x_inc + x_offset];\n"
        "}\n";
    size_t elems = (size_t)gs_n * gs_inc + gs_off;
    *j = (struct job){src, "", "Xaxpy", 1, {256}, {64}, {0}, true, false, 1, 8,
                      {SCAL(gs_n), SCAL(gs_alpha), BUF(elems * 8, rnd_f32(elems * 2)), SCAL(gs_off),
                       SCAL(gs_inc), BUF(elems * 8, rnd_f32(elems * 2)), SCAL(gs_off), SCAL(gs_inc)}};
}

static float serp_a = 1.5f;
static cl_uint serp_n;
static void make_serpentine(struct job *j)
{
    static const char *src = "__kernel void serp(__global const float *x, __global float *y, float a, uint n) {\n"
                             "  size_t i = get_global_id(0); if (i < n) y[i] = a * x[i] + y[i];\n"
                             "}\n";
    serp_n = 300007; /* odd: the last work-group is cut by the guard */
    size_t global = (serp_n + 63) / 64 * 64;
    *j = (struct job){src, "", "serp", 1, {global}, {64}, {0}, true, false, 6, 4,
                      {BUF(serp_n * 4, rnd_f32(serp_n)), BUF(serp_n * 4, rnd_f32(serp_n)), SCAL(serp_a), SCAL(serp_n)}};
}

static const struct api_test tests[] = {
    {"stencil2d", "stencil2d", 8, 0, PARTITIONED, 0, 0, NULL, make_stencil2d, NULL, NULL},
    {"stencil3d", "stencil3d", 8, 0, PARTITIONED, 0, 0, NULL, make_stencil3d, NULL, NULL},
    {"offset1d", "offset1d", 8, 0, PARTITIONED, 0, 0, NULL, make_offset1d, check_offset1d, NULL},
    {"offset2d", "offset2d", 8, 0, PARTITIONED, 0, 0, NULL, make_offset2d, NULL, NULL},
    /* 15 rows of work-groups, each 2 x 2 x 160 KB = 640 KB of pages: more partitions than rows */
    {"guard_row", "guard_row", 0, 512u << 10, PARTITIONED, F_MIN_PARTS, 15, NULL, make_guard_row, NULL, NULL},
    {"gather", "gather", 16, 0, PARTITIONED, 0, 0, NULL, make_gather, check_gather, NULL},
    {"scatter", "scatter", 4, 0, PARTITIONED, 0, 0, NULL, make_scatter, check_scatter, NULL},
    {"listwalk", "listwalk", 8, 0, PARTITIONED, 0, 0, NULL, make_listwalk, check_listwalk, NULL},
    {"spmv_ell", "spmv_ell", 4, 0, PARTITIONED, 0, 0, NULL, make_spmv, NULL, NULL},
    {"histogram", "histogram", 8, 0, PARTITIONED, 0, 0, NULL, make_histogram, check_histogram, NULL},
    {"inplace_retry", "inplace_retry", 8, 0, PARTITIONED, F_FAULTS, 0, NULL, make_inplace, check_inplace, NULL},
    {"gather_moving", "gather_moving", 8, 0, PARTITIONED, F_FAULTS | F_PLAN_REUSED, 0, NULL, make_gather_moving, NULL,
     NULL},
    {"async_paged", "async_copy", 4, 0, PARTITIONED, 0, 0, NULL, make_async, NULL, NULL},
    {"untranslatable_fits", "unpageable", 0, 4u << 20, DIRECT, 0, 0, NULL, make_unpageable_fits, NULL, NULL},
    {"untranslatable_refused", "unpageable", 0, 1u << 20, REFUSED_AT_ENQUEUE, 0, 0, reason_unpageable,
     make_unpageable_big, NULL, "straddling-access"},
    {"group_slices", "row_dot", 0, 256u << 10, PARTITIONED, 0, 0, NULL, make_group_slices, NULL, NULL},
    {"group_slices2d", "row_dot2", 0, 256u << 10, PARTITIONED, 0, 0, NULL, make_group_slices2d, NULL, NULL},
    {"group_barrier_overdraft", "row_dot_sync", 0, 256u << 10, PARTITIONED, 0, 0, NULL, make_group_barrier, NULL,
     NULL},
    {"group_barrier_refused", "row_dot_sync", 0, 256u << 10, REFUSED_AT_ENQUEUE, 0, 0, reason_wg, make_group_barrier,
     NULL, NULL},
    {"guard_refused", "whole_table", 0, 512u << 10, REFUSED, 0, 0, reason_wg, make_guard_refused, NULL, NULL},
    {"launches100", "bump100", 0, 4u << 20, DIRECT, F_MOVE_ONCE, 0, NULL, make_launches100, check_launches100, NULL},
    {"grid_stride_axpy", "Xaxpy", 2, 0, PARTITIONED, F_CHECK_SETS, 0, NULL, make_grid_stride_axpy, NULL, NULL},
    {"serpentine", "serp", 2, 0, PARTITIONED, F_SERPENTINE, 0, NULL, make_serpentine, NULL, NULL},
};
#define NTESTS (sizeof tests / sizeof tests[0])

/* The test's job, seeded as in every run; VAST must run it or refuse it. */
static void make(const void *c, const char *arg, struct harness_twin *tw)
{
    const struct api_test *t = c;
    (void)arg;
    seed = 0x9e3779b97f4a7c15ull;
    t->make(&tw->job);
    tw->expect = t->expect == REFUSED ? HX_REFUSED : t->expect == REFUSED_AT_ENQUEUE ? HX_REFUSED_AT_ENQUEUE : HX_RUNS;
    tw->check = t->check;
}

/* One run per page size; the budget is a fraction of the data or the test's own. */
static int runs(const void *c, const struct harness_opts *o, struct harness_run *out, size_t max)
{
    const struct api_test *t = c;
    struct harness_twin tw = {0};
    make(c, NULL, &tw);
    size_t ws = job_ws(&tw.job), pages[8];
    job_free_inputs(&tw.job);
    size_t n = harness_sizes(o->pages, pages, max < 8 ? max : 8);
    for (size_t p = 0; p < n; p++)
        out[p] = (struct harness_run){.name = t->name, .page = pages[p], .ws = ws,
                                      .budget = t->frac ? harness_budget(ws, t->frac, pages[p]) : t->budget,
                                      /* a unit over the budget is refused only without the overdraft */
                                      .env = t->reasons == reason_wg         ? "VAST_OVERDRAFT=0"
                                             : t->flags & F_CHECK_SETS ? "VAST_INSPECT=check"
                                             /* identical launches would chain (test_chain.c) */
                                             : t->flags & F_SERPENTINE ? "VAST_CHAIN=0"
                                                                       : NULL};
    return (int)n;
}

/* What VAST_STATS and VAST's log must show. */
static void judge(const void *c, const struct harness_run *run, const char *out, char *why, size_t n, char *what,
                  size_t nwhat)
{
    const struct api_test *t = c;
    long long parts = harness_stat(out, t->kernel, "partitioned", "partitions");
    long long faults = harness_stat(out, t->kernel, "partitioned", "faults");
    long long retries = harness_stat(out, t->kernel, "partitioned", "retries");
    snprintf(what, nwhat, "%-24s page %3zuK budget %7zuK (ws %zuK) partitions=%lld faults=%lld retries=%lld", t->name,
             run->page >> 10, run->budget >> 10, run->ws >> 10, parts, faults, retries);
    if (t->expect == PARTITIONED && parts < 2)
        snprintf(why, n, "no VAST_STATS line 'kernel=%s mode=partitioned' with partitions >= 2", t->kernel);
    else if ((t->flags & F_MIN_PARTS) && parts <= t->min_parts)
        snprintf(why, n, "%lld partitions, expected more than %ld (slabs must be split)", parts, t->min_parts);
    else if ((t->flags & F_FAULTS) && (faults <= 0 || retries <= 0))
        snprintf(why, n, "faults=%lld retries=%lld: the fault/restore/retry path was not exercised", faults, retries);
    else if (t->expect == DIRECT && harness_stat(out, t->kernel, "direct", "launches") < 1)
        snprintf(why, n, "no VAST_STATS line 'kernel=%s mode=direct'", t->kernel);
    else if ((t->expect == REFUSED || t->expect == REFUSED_AT_ENQUEUE) &&
             !harness_refusal_logged(out, t->kernel, t->reasons))
        snprintf(why, n, "no 'vast: error:' line naming kernel '%s' and the reason (%s)", t->kernel, t->reasons[0]);
    else if (t->construct != NULL &&
             !harness_find_line(out, "vast: ", (const char *const[]){t->kernel, t->construct, NULL}))
        snprintf(why, n, "no 'vast:' line naming kernel '%s' and '%s'", t->kernel, t->construct);
    else if ((t->flags & F_PLAN_REUSED) &&
             !harness_find_line(out, "vast: info:",
                                (const char *const[]){t->kernel, "plan of its previous launch", NULL}))
        snprintf(why, n, "no 'vast: info:' line saying that a launch of '%s' reused the previous plan", t->kernel);
    else if ((t->flags & F_SERPENTINE) && harness_stat(out, t->kernel, "partitioned", "backwards") < 3)
        snprintf(why, n, "backwards=%lld: each launch must start where the last one stopped",
                 harness_stat(out, t->kernel, "partitioned", "backwards"));
    else if ((t->flags & F_SERPENTINE) && (harness_h2d_bytes(out) < 0 || harness_h2d_bytes(out) > 5 * (long long)run->ws))
        snprintf(why, n, "host->device bytes %lld for 6 launches over %zu bytes: more than 5 times the data",
                 harness_h2d_bytes(out), run->ws);
    else if (t->flags & F_MOVE_ONCE) {
        long long h2d = harness_h2d_bytes(out);
        if (h2d < 0 || (size_t)h2d > run->ws + run->page)
            snprintf(why, n, "host->device bytes %lld for %zu bytes of data: moved more than once", h2d, run->ws);
    }
}

int main(int argc, char **argv)
{
    static const struct harness_prog prog = {
        tests, NTESTS, sizeof tests[0], "runs", {.pages = "4K,64K"}, false, make, NULL, runs, judge};
    return harness_main(argc, argv, &prog);
}
