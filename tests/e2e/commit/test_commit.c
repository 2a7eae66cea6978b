/* test_commit.c - the device memory VAST's page cache commits, through VAST over commit_icd.c
 * (PoCL with NVIDIA's account of device memory: a real buffer is committed, all of it, by its
 * first transfer or by a kernel that takes it). The page cache's budget is made of several
 * chunks (COMMIT_MAX_ALLOC makes them small); paged launches must commit the chunks their
 * pages use, not all of them, and still address every chunk that holds their pages.
 *
 *   small  a forced paged launch over 2 x 0.5 MiB: committed below the budget's second chunk
 *   grow   then launches over 2 x 4.6 MiB (three chunks of 4 MiB hold the pages), then over
 *          2 x 0.5 MiB again: right results, the fourth chunk never committed
 *
 * Each launch computes b[i] = a[i] * 2654435761 + i over random a (seeded), b poisoned, odd
 * sizes; every word is checked. Expects VAST_DEVICE_MEMORY=16M, COMMIT_MAX_ALLOC=4M,
 * VAST_PAGE_SIZE=64K, VAST_FORCE_PAGED=1 (CMakeLists.txt). Usage: test_commit small|grow. */
#include "harness.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK ((size_t)4 << 20)
#define BUDGET ((size_t)16 << 20)

static const char *src = "__kernel void scramble(__global const uint *a, __global uint *b, uint n) {\n"
                         "  uint i = (uint)get_global_id(0);\n"
                         "  if (i < n) b[i] = a[i] * 2654435761u + i;\n"
                         "}\n";

static size_t committed(void)
{
    const char *lib = getenv("VAST_BACKEND");
    void *h = lib != NULL ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
    size_t (*fn)(void) = h != NULL ? (size_t (*)(void))dlsym(h, "commit_bytes") : NULL;
    if (fn == NULL) {
        fprintf(stderr, "FAIL: VAST_BACKEND is not the commit library\n");
        exit(1);
    }
    return fn();
}

/* One launch over n words; 0 when every word is right. */
static int launch(struct clenv *e, cl_kernel k, cl_uint n, uint64_t seed)
{
    uint32_t *a = harness_rnd_u32(&seed, n, 0), *b = malloc((size_t)n * 4);
    cl_mem ma = clenv_buffer(e, (size_t)n * 4, a), mb = clenv_buffer(e, (size_t)n * 4, NULL);
    const cl_uint poison = 0xA5A5A5A5u;
    CL_OK(clEnqueueFillBuffer(e->q, mb, &poison, sizeof poison, 0, (size_t)n * 4, 0, NULL, NULL));
    CL_OK(clSetKernelArg(k, 0, sizeof ma, &ma));
    CL_OK(clSetKernelArg(k, 1, sizeof mb, &mb));
    CL_OK(clSetKernelArg(k, 2, sizeof n, &n));
    size_t global = ((size_t)n + 63) / 64 * 64, local = 64;
    CL_OK(clEnqueueNDRangeKernel(e->q, k, 1, NULL, &global, &local, 0, NULL, NULL));
    CL_OK(clenv_read(e, mb, (size_t)n * 4, b));
    size_t bad = 0, first = 0;
    for (cl_uint i = 0; i < n; i++)
        if (b[i] != a[i] * 2654435761u + i && bad++ == 0)
            first = i;
    if (bad)
        fprintf(stderr, "FAIL: %zu of %u words wrong, first at %zu: 0x%08x, want 0x%08x\n", bad, n, first, b[first],
                a[first] * 2654435761u + (uint32_t)first);
    clReleaseMemObject(ma);
    clReleaseMemObject(mb);
    free(a);
    free(b);
    return bad != 0;
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "small") && strcmp(argv[1], "grow")))
        return fprintf(stderr, "usage: test_commit small|grow\n"), 2;
    bool grow = !strcmp(argv[1], "grow");
    struct clenv e;
    clenv_open(&e, "VAST");
    cl_program p = clenv_build(&e, src, NULL);
    cl_int err;
    cl_kernel k = clCreateKernel(p, "scramble", &err);
    CL_OK(err);
    int bad = launch(&e, k, 131071, 1); /* 2 x 0.5 MiB: 16 pages of chunk 0 */
    size_t small = committed();
    printf("after 2 x 0.5 MiB: %zu bytes committed\n", small);
    if (small >= 2 * CHUNK)
        bad = fprintf(stderr, "FAIL: %zu bytes committed for 1 MiB of pages (chunks of %zu)\n", small, CHUNK);
    if (grow) {
        bad |= launch(&e, k, 1200001, 2); /* 2 x 4.6 MiB: 147 pages over chunks 0-2 */
        bad |= launch(&e, k, 131071, 3);
        size_t after = committed();
        printf("after 2 x 4.6 MiB: %zu bytes committed\n", after);
        if (after < 3 * CHUNK || after >= BUDGET)
            bad = fprintf(stderr, "FAIL: %zu bytes committed for pages in three chunks of %zu\n", after, CHUNK);
    }
    printf("%s %s\n", bad ? "FAIL" : "ok", argv[1]);
    clReleaseKernel(k);
    clReleaseProgram(p);
    clenv_close(&e);
    return bad ? 1 : 0;
}
