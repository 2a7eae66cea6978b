/* test_flags.c - memory flags are hints (issue 13, defect 1): kernels store to buffers made
 * CL_MEM_READ_ONLY, CL_MEM_HOST_NO_ACCESS, CL_MEM_HOST_WRITE_ONLY, CL_MEM_HOST_READ_ONLY and
 * to a sub-buffer inheriting CL_MEM_READ_ONLY; then every way of getting the data out: read,
 * copy (and rect copy) to a plain buffer, map, a second kernel reading them, host writes in
 * between. Every byte must equal PoCL's, in direct mode, forced paged mode and partitioned
 * (budgets far below the data, 4 KiB and 64 KiB pages), where pages of buffers wrongly taken
 * for unwritten are evicted without write-back.
 *
 *   flags        the sequence above, 300007 words per buffer (not a page multiple)
 *   flags_repeat the writing kernel run 3 times in place (ro[i] = ro[i] * 3 + 1), copies
 *                and reads between the launches
 * Usage: memsem_flags [--case a,b] [--config x,y] [--flip] (twin.h). */
#include "twin.h"

#include <stdlib.h>
#include <string.h>

#define N 300007u
#define BYTES ((size_t)N * 4)
#define SUB_ORIGIN 8192u /* a multiple of every base address alignment seen */

static const char *src =
    "uint h(uint x, uint k) { x ^= k * 0x9e3779b9u; x *= 0x85ebca6bu; return x ^ (x >> 13); }\n"
    "__kernel void write5(__global uint *ro, __global uint *hna, __global uint *hwo, __global uint *hro,\n"
    "                     __global uint *sub, const __global uint *in, uint n) {\n"
    "    uint i = get_global_id(0);\n"
    "    if (i >= n) return;\n"
    "    uint x = in[i];\n"
    "    ro[i] = h(x, 1); hna[i] = h(x, 2); hwo[i] = h(x, 3); hro[i] = h(x, 4); sub[i] = h(x, 5);\n"
    "}\n"
    "__kernel void mixall(__global uint *out, const __global uint *a, const __global uint *b,\n"
    "                  const __global uint *c, const __global uint *d, uint n) {\n"
    "    uint i = get_global_id(0);\n"
    "    if (i < n) out[i] = a[i] ^ (b[i] << 1) ^ (c[i] << 2) ^ (d[(i * 7u) % n] << 3);\n"
    "}\n"
    "__kernel void bump(__global uint *a, uint n) {\n"
    "    uint i = get_global_id(0);\n"
    "    if (i < n) a[i] = a[i] * 3u + 1u;\n"
    "}\n";

static cl_mem make(struct clenv *e, cl_mem_flags flags, size_t bytes, const void *init)
{
    cl_int err;
    cl_mem m = clCreateBuffer(e->ctx, flags | (init ? CL_MEM_COPY_HOST_PTR : 0), bytes, (void *)init, &err);
    CL_OK(err);
    return m;
}

/* A buffer's contents through a plain buffer (copy, then read): for buffers the host may not read. */
static void copy_out(struct clenv *e, cl_mem from, size_t off, size_t bytes, struct blob *out)
{
    cl_mem tmp = make(e, CL_MEM_READ_WRITE, bytes, NULL);
    static const uint32_t poison = 0xdeadbeefu;
    CL_OK(clEnqueueFillBuffer(e->q, tmp, &poison, 4, 0, bytes, 0, NULL, NULL));
    CL_OK(clEnqueueCopyBuffer(e->q, from, tmp, off, 0, bytes, 0, NULL, NULL));
    twin_read(e, tmp, 0, bytes, out);
    clReleaseMemObject(tmp);
}

static void map_into(struct clenv *e, cl_mem m, size_t off, size_t bytes, struct blob *out)
{
    cl_int err;
    void *p = clEnqueueMapBuffer(e->q, m, CL_TRUE, CL_MAP_READ, off, bytes, 0, NULL, NULL, &err);
    CL_OK(err);
    blob_add(out, p, bytes);
    CL_OK(clEnqueueUnmapMemObject(e->q, m, p, 0, NULL, NULL));
    CL_OK(clFinish(e->q));
}

static void launch(struct clenv *e, cl_kernel k, cl_uint nargs, const cl_mem *mems)
{
    cl_uint n = N;
    for (cl_uint i = 0; i < nargs; i++)
        CL_OK(clSetKernelArg(k, i, sizeof(cl_mem), &mems[i]));
    CL_OK(clSetKernelArg(k, nargs, sizeof n, &n));
    size_t local = 64, global = (N + local - 1) / local * local;
    CL_OK(clEnqueueNDRangeKernel(e->q, k, 1, NULL, &global, &local, 0, NULL, NULL));
}

struct bufs {
    cl_mem in, ro, hna, hwo, hro, par, sub, out;
    cl_kernel write5, mix, bump;
    cl_program prog;
};

static void setup(struct clenv *e, struct bufs *b)
{
    uint32_t *in = twin_random_u32(N, 0x1234567u), *poison = malloc(BYTES + SUB_ORIGIN + 4096);
    memset(poison, 0x5a, BYTES + SUB_ORIGIN + 4096);
    b->in = make(e, CL_MEM_READ_ONLY, BYTES, in);
    b->ro = make(e, CL_MEM_READ_ONLY, BYTES, poison);
    b->hna = make(e, CL_MEM_READ_ONLY | CL_MEM_HOST_NO_ACCESS, BYTES, poison);
    b->hwo = make(e, CL_MEM_WRITE_ONLY | CL_MEM_HOST_WRITE_ONLY, BYTES, poison);
    b->hro = make(e, CL_MEM_READ_ONLY | CL_MEM_HOST_READ_ONLY, BYTES, poison);
    b->par = make(e, CL_MEM_READ_ONLY, BYTES + SUB_ORIGIN + 4096, poison);
    cl_buffer_region r = {SUB_ORIGIN, BYTES};
    cl_int err;
    b->sub = clCreateSubBuffer(b->par, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err); /* inherits READ_ONLY */
    CL_OK(err);
    b->out = make(e, CL_MEM_READ_WRITE, BYTES, poison);
    b->prog = clenv_build(e, src, NULL);
    b->write5 = clCreateKernel(b->prog, "write5", &err);
    CL_OK(err);
    b->mix = clCreateKernel(b->prog, "mixall", &err);
    CL_OK(err);
    b->bump = clCreateKernel(b->prog, "bump", &err);
    CL_OK(err);
    free(in);
    free(poison);
}

static void teardown(struct bufs *b)
{
    cl_mem *all[] = {&b->in, &b->ro, &b->hna, &b->hwo, &b->hro, &b->sub, &b->par, &b->out};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        clReleaseMemObject(*all[i]);
    clReleaseKernel(b->write5);
    clReleaseKernel(b->mix);
    clReleaseKernel(b->bump);
    clReleaseProgram(b->prog);
}

static void case_flags(struct clenv *e, struct blob *out)
{
    struct bufs b;
    setup(e, &b);
    launch(e, b.write5, 6, (cl_mem[]){b.ro, b.hna, b.hwo, b.hro, b.sub, b.in});
    copy_out(e, b.ro, 0, BYTES, out);          /* the case: copy, then read both */
    twin_read(e, b.ro, 0, BYTES, out);
    copy_out(e, b.hna, 4, BYTES - 12, out);     /* odd offsets and sizes */
    copy_out(e, b.hwo, 0, BYTES, out);
    map_into(e, b.hro, 100, BYTES - 100, out);
    twin_read(e, b.par, 0, BYTES + SUB_ORIGIN + 4096, out); /* the sub-buffer's writes in its parent */
    /* A rect copy of the HOST_NO_ACCESS buffer (rows of 1000 bytes at a pitch of 1204). */
    cl_mem rect = make(e, CL_MEM_READ_WRITE, BYTES, NULL);
    size_t so[3] = {8, 3, 0}, dst[3] = {0, 0, 0}, reg[3] = {1000, 900, 1};
    CL_OK(clEnqueueCopyBufferRect(e->q, b.hna, rect, so, dst, reg, 1204, 0, 1000, 0, 0, NULL, NULL));
    twin_read(e, rect, 0, 1000 * 900, out);
    clReleaseMemObject(rect);
    /* The written data on the device again: another kernel reads every flagged buffer. */
    launch(e, b.mix, 5, (cl_mem[]){b.out, b.ro, b.hna, b.hwo, b.sub});
    twin_read(e, b.out, 0, BYTES, out);
    launch(e, b.mix, 5, (cl_mem[]){b.out, b.hro, b.sub, b.ro, b.hna});
    twin_read(e, b.out, 0, BYTES, out);
    teardown(&b);
}

static void case_flags_repeat(struct clenv *e, struct blob *out)
{
    struct bufs b;
    setup(e, &b);
    launch(e, b.write5, 6, (cl_mem[]){b.ro, b.hna, b.hwo, b.hro, b.sub, b.in});
    for (int round = 0; round < 3; round++) {
        launch(e, b.bump, 1, &b.ro);
        launch(e, b.bump, 1, &b.hna);
        launch(e, b.bump, 1, &b.sub);
        copy_out(e, b.hna, 0, BYTES, out);
        twin_read(e, b.ro, 4 * round, BYTES - 8 * round, out);
        uint32_t v[3] = {1u + round, 2u, 3u};
        CL_OK(clEnqueueWriteBuffer(e->q, b.sub, CL_TRUE, 4096 * round + 4, sizeof v, v, 0, NULL, NULL));
    }
    launch(e, b.mix, 5, (cl_mem[]){b.out, b.ro, b.hna, b.sub, b.ro});
    twin_read(e, b.out, 0, BYTES, out);
    twin_read(e, b.par, 0, BYTES + SUB_ORIGIN + 4096, out);
    teardown(&b);
}

static const struct twin_case cases[] = {
    {"flags", case_flags},
    {"flags_repeat", case_flags_repeat},
};

/* Data: 8 buffers of 1.2 MB (about 9.6 MB); the partitioned budgets hold a tenth of it. */
static const struct twin_config configs[] = {
    TWIN_CONFIGS_DIRECT_PAGED_PART4K,
    {"part.64K", {"VAST_DEVICE_MEMORY=2M", "VAST_PAGE_SIZE=64K"}, "partitioned"},
};

int main(int argc, char **argv)
{
    return twin_main(argc, argv, cases, sizeof cases / sizeof cases[0], configs, sizeof configs / sizeof configs[0]);
}
