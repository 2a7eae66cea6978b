/* corpus.c - OpenCL C programs and launch cases for the e2e translation test. Every
 * construct named in issue 3 appears at least once; kernels share few programs because
 * each PoCL build costs ~0.5 s. */
#include "corpus.h"

#define S(...) #__VA_ARGS__ "\n"

static const char prog_basic[] =
    "#define SUM2(p, i) (p[i] + p[i + 1])\n"
    "#define IDX(x, y, w) ((y) * (w) + (x))\n"
    "typedef struct { float4 pos; float4 vel; } particle;\n"
    "typedef struct { int a; float b; } pair;\n"
    "typedef struct { int a; uint b; int c; } trip;\n"
    "typedef struct __attribute__((packed)) { char c; int v; } pk5;\n"
    "typedef struct __attribute__((packed)) { char c; int v[2]; } pk9;\n"
    S(__kernel void vadd(__global const float *a, __global const float *b, __global float *c) {
        int i = get_global_id(0); c[i] = a[i] + b[i]; })
    S(__kernel void saxpy(float s, __global const float *x, __global float *y) {
        size_t i = get_global_id(0); y[i] += s * x[i]; })
    S(__kernel void incdec(__global int *up, __global int *down) {
        int i = get_global_id(0); up[i]++; --down[i]; up[i] *= 3; down[i] -= i; })
    S(__kernel void vec4(__global const float *a, __global float *b) {
        int i = get_global_id(0); float4 v = vload4(i, a + 1); vstore4(v * 2.0f, i, b + 3); })
    S(__kernel void comp(__global const float4 *a, __global float4 *o) {
        int i = get_global_id(0); o[i].x = a[i].y; o[i].yz = a[i].zw; o[i].w = 1.0f;
        o[i].s0 += a[i].s3; })
    S(__kernel void structs(__global particle *p, __global pair *q, float dt) {
        int i = get_global_id(0); p[i].pos += p[i].vel * dt; p[i].vel.y -= dt;
        q[i].b = q[i].a * 2 + q[i].b; })
    S(__kernel void macros(__global const float *a, __global float *o, int w) {
        int x = get_global_id(0), y = get_global_id(1);
        o[IDX(x, y, w)] = SUM2(a, IDX(x, y, w)); })
    S(__kernel void ptrcast(__global float *f, __global uint *out) {
        int i = get_global_id(0); __global uint *u = (__global uint *)f;
        u[i] ^= 0x80000000u; out[i] = ((__global uint *)f)[i] >> 3; })
    S(__kernel void ptrlocal(__global float *a, __global float *b) {
        int i = get_global_id(0); __global float *p = a + i * 4; __global float *q = (i & 1) ? a : b;
        p[1] = p[0] + p[2]; *(p + 3) = 1.0f; b[i] = q[i] * 0.5f; })
    S(__kernel void oddbytes(__global const uchar *a, __global uchar *b, __global ushort *s) {
        int i = get_global_id(0); b[i] = a[i] * 3 + 1; s[i] = (ushort)(a[i] << 4) ^ s[i]; })
    S(__kernel void uint4ops(__global uint4 *v) {
        int i = get_global_id(0); v[i] += (uint4)(1, 2, 3, 4); v[i].s3 ^= v[i].s0; })
    S(__kernel void halfs(__global const half *h, __global half *o, __global float *f) {
        int i = get_global_id(0); float x = vload_half(i, h); vstore_half(x * 2.0f, i, o);
        f[i] = x; float4 y = vload_half4(i, h + 1); vstore4(y, i, f + 4096); })
    S(__kernel void vec3(__global const int *a, __global int *b) {
        int i = get_global_id(0); int3 v = vload3(i, a); vstore3(v.zxy + 1, i, b); })
    S(__kernel void withconst(__constant float *k, __global const float *a, __global float *o) {
        int i = get_global_id(0); o[i] = a[i] * k[i & 7]; })
    /* whole structs of 12 and 5 bytes cross the 512-byte pages: split copies (straddle.c) */
    S(__kernel void structcopy(__global const trip *a, __global trip *b, __global const pk5 *p,
                               __global pk5 *q) {
        int i = get_global_id(0); trip t = a[i + 1]; t.a += t.c; b[i] = t;
        pk5 s = p[i]; s.v ^= s.c; q[i] = s; q[i].c = p[i + 1].c; })
    /* elements of an array member of a packed struct: misaligned, some cross the pages (the
     * random-kernel test found them translated as aligned accesses) */
    S(__kernel void packedarr(__global const pk9 *p, __global pk9 *q, __global int *o) {
        int i = get_global_id(0); o[i] = p[i].v[1] + p[i + 1].v[0];
        q[i].v[1] = o[i] ^ p[i].c; q[i].v[0] = p[i].v[1]; });

static const char prog_index[] =
    S(__kernel void geometry(__global uint *o) {
        size_t gx = get_global_id(0) - get_global_offset(0), gy = get_global_id(1) - get_global_offset(1);
        size_t i = gy * get_global_size(0) + gx;
        o[4 * i] = get_group_id(0) + 100 * get_group_id(1);
        o[4 * i + 1] = get_num_groups(0) + 100 * get_num_groups(1);
        o[4 * i + 2] = get_global_size(1) * 1000 + get_global_offset(0) + 10 * get_global_offset(1);
        o[4 * i + 3] = get_local_id(0) + 100 * get_global_id(1); })
    S(__kernel void transpose(__global const float *in, __global float *out, int w, int h) {
        int x = get_global_id(0), y = get_global_id(1);
        out[x * h + y] = in[y * w + x]; })
    S(__kernel void stencil3d(__global const float *in, __global float *out, int nx, int ny, int nz) {
        int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
        int i = (z * ny + y) * nx + x;
        if (x < 1 || y < 1 || z < 1 || x >= nx - 1 || y >= ny - 1 || z >= nz - 1) { out[i] = in[i]; return; }
        out[i] = 0.5f * in[i] + 0.1f * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]
                 + in[i - nx * ny] + in[i + nx * ny]); })
    S(__kernel void ids3d(__global uint *o) {
        size_t i = (get_global_id(2) * get_global_size(1) + get_global_id(1)) * get_global_size(0) + get_global_id(0);
        o[i] = get_group_id(2) * 10000 + get_group_id(1) * 100 + get_group_id(0); })
    S(__kernel void spmv(__global const uint *rowptr, __global const uint *col,
                         __global const float *val, __global const float *x, __global float *y) {
        int i = get_global_id(0); float s = 0.0f;
        for (uint j = rowptr[i]; j < rowptr[i + 1]; j++) s += val[j] * x[col[j]];
        y[i] = s; })
    S(__kernel void histogram(__global const uint *data, __global uint *hist) {
        int i = get_global_id(0); atomic_inc(&hist[data[i] % 64]); atomic_add(hist + 64 + (i & 3), 2u); })
    S(__kernel void dynloop(__global const uint *cnt, __global const float *v, __global float *o) {
        int i = get_global_id(0); float s = 0.0f; uint n = cnt[i];
        for (uint k = 0; k < n; k++) s += v[k * 7 + i];
        while (n > 3) n -= 2; o[i] = s + n; })
    /* FDTD3d's shape: 3-D local size, early returns after the prologue's barrier (a PoCL
     * 3.1 miscompile of a private context made some x >= nx items go on: fdtd_guard test) */
    S(__kernel void fdtd(__global float *out, __global const float *in, int nx, int ny, int nz,
                         float c0, float c1, float c2) {
        size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
        if (x >= nx || y >= ny || z >= nz) return;
        size_t sy = nx, sz = nx * ny, p = z * sz + y * sy + x;
        if (x < 2 || y < 2 || z < 2 || x >= nx - 2 || y >= ny - 2 || z >= nz - 2) {
            out[p] = in[p]; return; }
        float v = c0 * in[p];
        v += c1 * (in[p - 1] + in[p + 1] + in[p - sy] + in[p + sy] + in[p - sz] + in[p + sz]);
        v += c2 * (in[p - 2] + in[p + 2] + in[p - 2 * sy] + in[p + 2 * sy] + in[p - 2 * sz]
                   + in[p + 2 * sz]);
        out[p] = v; })
    /* b[k + 1] >= 1 in the data, a fabricated 0 when faulted (the trace run has no page
     * resident): a division by 0, a loop to 0xffffffff and a __local index 0xffffffff (guard.c) */
    S(__kernel void faulted(__global const uint *idx, __global const uint *b, __global int *o,
                            __local uint *lp) {
        int i = get_global_id(0); uint l = get_local_id(0); __local uint h[32];
        h[l & 31] = 0; lp[l & 31] = 0; barrier(CLK_LOCAL_MEM_FENCE);
        uint k = idx[i]; int s = i / (int)b[k + 1];
        for (uint j = 0; j <= b[k + 1] - 1u; j++) s += (int)j;
        atomic_inc(&h[b[k + 1] - 1u]); atomic_add(&lp[b[k + 1] - 1u], 2u); barrier(CLK_LOCAL_MEM_FENCE);
        o[i] = s + (int)h[l & 31] + (int)lp[(l + 1) & 31]; });

static const char prog_local[] =
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "#include \"vast_test_helpers.h\"\n"
    "#define TS 8\n"
    S(float ld(__global const float *m, int r, int c, int w) { return m[r * w + c]; })
    S(void put(__global float *o, int i, float v) { o[i] = v; })
    S(float dot_tile(__local float *As, __local float *Bs, int ty, int tx) {
        float s = 0.0f; for (int k = 0; k < TS; k++) s += As[ty * TS + k] * Bs[k * TS + tx]; return s; })
    S(__kernel void matmul(__global const float *A, __global const float *B, __global float *C, int n) {
        __local float As[TS * TS]; __local float Bs[TS * TS];
        int tx = get_local_id(0), ty = get_local_id(1), col = get_global_id(0), row = get_global_id(1);
        float acc = 0.0f;
        for (int t = 0; t < n / TS; t++) {
            As[ty * TS + tx] = ld(A, row, t * TS + tx, n); Bs[ty * TS + tx] = ld(B, t * TS + ty, col, n);
            barrier(CLK_LOCAL_MEM_FENCE); acc += dot_tile(As, Bs, ty, tx); barrier(CLK_LOCAL_MEM_FENCE); }
        put(C, row * n + col, acc); })
    S(__kernel void reduce(__global const float *in, __global float *out, __local float *tmp) {
        int l = get_local_id(0); tmp[l] = in[get_global_id(0)]; barrier(CLK_LOCAL_MEM_FENCE);
        for (int s = get_local_size(0) / 2; s > 0; s >>= 1) { if (l < s) tmp[l] += tmp[l + s];
            barrier(CLK_LOCAL_MEM_FENCE); }
        if (l == 0) out[get_group_id(0)] = tmp[0]; })
    /* async_work_group_copy and _strided_copy over __global memory, both directions, ranges
     * that cross 512-byte pages, a 3-component gentype (copied as 4), events joined */
    S(__kernel void awg_in(__global const float4 *a, __global const uchar *b, __global const char3 *c,
                           __global float4 *o, __local float4 *t, __local uchar *u, __local char3 *w, int n) {
        size_t g = get_group_id(0), l = get_local_id(0);
        event_t e = async_work_group_copy(t, a + g * n + 3, (size_t)n, 0);
        e = async_work_group_strided_copy(u, b + g * 7, (size_t)n, 5, e);
        event_t f = async_work_group_copy(w, c + g * n, (size_t)n, 0);
        wait_group_events(1, &e); wait_group_events(1, &f);
        float4 s = 0;
        for (int k = l; k < n; k += get_local_size(0)) s += t[k] * (float)u[k] + (float)(w[k].x + w[k].y - w[k].z);
        o[get_global_id(0)] = s + t[(l * 7) % n]; })
    S(__kernel void awg_out(__global const uint *a, __global int2 *o, __global ushort *p,
                            __local int2 *t, __local ushort *q, int n) {
        size_t g = get_group_id(0), l = get_local_id(0);
        for (int k = l; k < n; k += get_local_size(0)) {
            uint v = a[g * n + k]; t[k] = (int2)((int)v, (int)(v >> 3)); q[k] = (ushort)(v >> 5); }
        barrier(CLK_LOCAL_MEM_FENCE);
        event_t e = async_work_group_strided_copy(o + g * n * 3, t, (size_t)n, 3, 0);
        e = async_work_group_copy(p + g * n + 1, q, (size_t)n, e);
        wait_group_events(1, &e); })
    S(__kernel void included(__global const float *a, __global float *o) {
        int i = get_global_id(0); o[i] = scaled_load(a, i) + SCALE; })
    S(__kernel void dbl(__global const double *a, __global double *o) {
        int i = get_global_id(0); double s = a[i]; s = s * s + 1.0; o[i] = s; })
    S(__kernel void vec8(__global const short *a, __global short *o) {
        int i = get_global_id(0); short8 v = vload8(i, a + 3); vstore8(v + (short8)(7), i, o + 1); });

/* One work-item, 2048 statements in a row, 6144 accesses (the CTS's test_basic
 * vector_creation has 2367 in one kernel): translated with the page walk inlined at every
 * access, PoCL 3.1's kernel compiler recursed once per basic block and overflowed its
 * thread's stack (SIGSEGV; at 4 pool chunks vector_creation did too). The statements are
 * expanded here, by the host's preprocessor, as the CTS writes them out: one macro expanding
 * to all of them, or one line of all of them, aborts the process inside mcpp (translate/
 * preprocess.c refuses such lines now), so there are 32 lines of 64 statements. Run on
 * request only (paged_exec straight): it takes a while to build. */
#define ST1(i) o[i] = a[i] * 3 + a[(i) + 4099]; b[(i) * 2] = o[i] ^ 5;
#define ST4(i) ST1(i) ST1((i) + 1) ST1((i) + 2) ST1((i) + 3)
#define ST16(i) ST4(i) ST4((i) + 4) ST4((i) + 8) ST4((i) + 12)
#define ST64(i) ST16(i) ST16((i) + 16) ST16((i) + 32) ST16((i) + 48)
#define XS(...) S(__VA_ARGS__)
#define LN(i) XS(ST64(i))
#define LN4(i) LN(i) LN((i) + 64) LN((i) + 128) LN((i) + 192)
#define LN16(i) LN4(i) LN4((i) + 256) LN4((i) + 512) LN4((i) + 768)
/* OpenCL C 3.0 (built with -cl-std=CL3.0 on both sides): the linear ids and the enqueued local
 * size under a global offset, work_group_barrier */
static const char prog_cl30[] =
    S(__kernel void lin3(__global uint *o, __global const uint *a) {
        size_t i = get_global_linear_id();
        uint v = a[i] * 3u + (uint)get_local_linear_id() * 7u + (uint)get_enqueued_local_size(0)
                 + (uint)get_enqueued_local_size(1) * 5u + (uint)get_global_id(1);
        work_group_barrier(CLK_GLOBAL_MEM_FENCE);
        o[i] = v; });

static const char prog_straight[] =
    "__kernel void straight(__global int *o, __global const int *a, __global int *b) {\n"
    LN16(0) LN16(1024) "}\n";

const char *const corpus_programs[] = {prog_basic, prog_index, prog_local, prog_cl30, prog_straight};
const char *const corpus_program_options[] = {"", "-DUNUSED=1", "-I " VAST_TEST_INCLUDE_DIR, "-cl-std=CL3.0", ""};
const size_t corpus_num_programs = 5, corpus_num_default_programs = 4;

#define F(n) {G_F32, (n) * 4, 0, 0}
#define P(n) {G_POISON, (n), 0, 0}
#define U(n, m) {G_U32, (n) * 4, 0, (m)}
#define Z(n) {G_ZERO, (n), 0, 0}
#define I(v) {G_INT, 4, (v), 0}
#define FL(v) {G_FLOAT, 4, (v), 0}

const struct kcase corpus_cases[] = {
    {"vadd", 0, 1, {1024}, {64}, {0}, 0, {F(1024), F(1024), P(4096)}},
    {"saxpy", 0, 1, {1000}, {40}, {24}, 0, {FL(1.5), F(1100), F(1100)}},
    {"incdec", 0, 1, {512}, {32}, {0}, 0, {U(512, 0), U(512, 0)}},
    {"vec4", 0, 1, {256}, {32}, {0}, 0, {F(1040), P(4200)}},
    {"comp", 0, 1, {256}, {16}, {0}, 0, {F(1024), F(1024)}},
    {"structs", 0, 1, {256}, {32}, {0}, 0, {F(2048), F(512), FL(0.25)}},
    {"macros", 0, 2, {32, 16}, {8, 4}, {0, 0}, 0, {F(520), P(2048), I(32)}},
    {"ptrcast", 0, 1, {700}, {35}, {0}, 0, {F(700), P(2800)}},
    {"ptrlocal", 0, 1, {256}, {16}, {0}, 0, {F(1024), F(1024)}},
    {"oddbytes", 0, 1, {1000}, {8}, {0}, 0, {U(250, 0), P(1001), U(500, 0)}},
    {"uint4ops", 0, 1, {300}, {20}, {0}, 0, {U(1200, 0)}},
    {"halfs", 0, 1, {256}, {32}, {0}, 0, {U(520, 0x3bff3bff), P(514), P(4096 * 4 + 4096)}},
    {"vec3", 0, 1, {200}, {20}, {0}, 0, {U(600, 0), P(600 * 4)}},
    {"withconst", 0, 1, {512}, {64}, {0}, 0, {F(8), F(512), P(2048)}},
    {"structcopy", 0, 1, {1000}, {40}, {0}, 0, {U(3003, 0), P(12000), U(1252, 0), P(5000)}},
    {"packedarr", 0, 1, {1000}, {40}, {0}, 0, {U(2253, 0), P(9000), P(4000)}},
    {"geometry", 1, 2, {64, 24}, {16, 4}, {16, 8}, 0, {P(64 * 24 * 16)}},
    {"transpose", 1, 2, {64, 48}, {16, 8}, {0, 0}, 0, {F(64 * 48), P(64 * 48 * 4), I(64), I(48)}},
    {"stencil3d", 1, 3, {16, 12, 10}, {8, 4, 2}, {0, 0, 0}, 0,
     {F(16 * 12 * 10), P(16 * 12 * 10 * 4), I(16), I(12), I(10)}},
    {"ids3d", 1, 3, {16, 8, 8}, {4, 4, 2}, {4, 0, 2}, 0, {P(20 * 8 * 10 * 4)}},
    {"spmv", 1, 1, {512}, {32}, {0}, 1,
     {{G_RAMP, 513 * 4, 0, 5}, U(2565, 3000), F(2565), F(3000), P(2048)}},
    {"histogram", 1, 1, {1024}, {64}, {0}, 1, {U(1024, 0), Z(68 * 4)}},
    {"dynloop", 1, 1, {256}, {32}, {0}, 1, {U(256, 9), F(2048), P(1024)}},
    {"fdtd", 1, 3, {32, 24, 24}, {32, 4, 1}, {0, 0, 0}, 0,
     {P(24 * 24 * 24 * 4), F(24 * 24 * 24), I(24), I(24), I(24), FL(0.5), FL(0.05), FL(0.03)}},
    {"faulted", 1, 1, {1024}, {32}, {0}, 1, {U(1024, 32), {G_RAMP, 40 * 4, 0, 1}, P(4096), {G_LOCAL, 128, 0, 0}}},
    {"matmul", 2, 2, {32, 32}, {8, 8}, {0, 0}, 0, {F(1024), F(1024), P(4096), I(32)}},
    {"reduce", 2, 1, {1024}, {64}, {0}, 0, {F(1024), P(64), {G_LOCAL, 256, 0, 0}}},
    {"awg_in", 2, 1, {256}, {16}, {0}, 0,
     {F(2732), U(100, 0), U(640, 0), P(4096), {G_LOCAL, 640, 0, 0}, {G_LOCAL, 64, 0, 0}, {G_LOCAL, 160, 0, 0}, I(40)}},
    {"awg_out", 2, 1, {256}, {16}, {0}, 0,
     {U(640, 0), P(15360), P(1290), {G_LOCAL, 320, 0, 0}, {G_LOCAL, 80, 0, 0}, I(40)}},
    {"included", 2, 1, {600}, {30}, {0}, 0, {F(600), P(2400)}},
    {"dbl", 2, 1, {300}, {10}, {0}, 0, {F(600), P(2400)}},
    {"vec8", 2, 1, {128}, {16}, {0}, 0, {U(520, 0), P(2100)}},
    {"lin3", 3, 2, {64, 24}, {16, 4}, {16, 8}, 0, {P(64 * 24 * 4), U(64 * 24, 0)}},
    {"straight", 4, 1, {1}, {1}, {0}, 0, {P(2048 * 4), U(6147, 0), P(4096 * 4)}},
};
const size_t corpus_num_cases = sizeof corpus_cases / sizeof corpus_cases[0];
