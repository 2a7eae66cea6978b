/* test_svm.c - shared virtual memory through VAST (issue 13, defect 2): coarse-grained
 * clSVMAlloc allocations as kernel arguments (also pointers into the middle of one, beside
 * virtual buffers, after a buffer was set for the same argument), the SVM commands (map,
 * unmap, memcpy, memfill, free with a callback), and buffers made from SVM memory
 * (CL_MEM_USE_HOST_PTR over an allocation, pyopencl's SVMPointer.as_buffer) whose kernel
 * stores must be in the SVM memory once the launch completes. Every byte read back must equal
 * PoCL's, with the default budget, under VAST_FORCE_PAGED=1 and at a 1 MiB budget (the SVM
 * data itself is not paged; the other buffers are).
 *
 *   svm_args     a kernel given a buffer, then an SVM allocation for the same argument; a
 *                kernel with an SVM pointer into the middle of an allocation and a buffer
 *   svm_buffer   kernels through a buffer made from SVM memory, read through SVM maps and
 *                copies; SVM commands and SVM kernels, read through the buffer
 *   svm_ops      memcpy and memfill between allocations, map for writing, free with callback
 *   svm_refused  such a launch beside a buffer larger than the budget: refused at enqueue
 *   foreign_mem  clSetKernelArg with another platform's cl_mem: CL_INVALID_MEM_OBJECT
 * Usage: memsem_svm [--case a,b] [--config x,y] [--flip] (twin.h). */
#include "twin.h"

#include <stdlib.h>
#include <string.h>

#define N 100003u /* words per allocation: not a page multiple */
#define BYTES ((size_t)N * 4)

static const char *src =
    "__kernel void twice(__global uint *a, uint n) {\n"
    "    uint i = get_global_id(0);\n"
    "    if (i < n) a[i] = a[i] * 2u + 1u;\n"
    "}\n"
    "__kernel void scatter(__global uint *out, const __global uint *in, uint n) {\n"
    "    uint i = get_global_id(0);\n"
    "    if (i < n) { out[i] = in[(i * 31u) % n] ^ 0x5bd1e995u; if (i == 0) out[-1] = 7u; }\n"
    "}\n";

static bool is_vast(const struct clenv *e) { return strncmp(e->name, "VAST", 4) == 0; }

static cl_kernel kernel(cl_program p, const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(p, name, &err);
    CL_OK(err);
    return k;
}

static void run1(struct clenv *e, cl_kernel k, size_t n)
{
    size_t local = 64, global = (n + local - 1) / local * local;
    CL_OK(clEnqueueNDRangeKernel(e->q, k, 1, NULL, &global, &local, 0, NULL, NULL));
}

/* The allocation's bytes through an SVM read map. */
static void svm_read(struct clenv *e, void *p, size_t bytes, struct blob *out)
{
    CL_OK(clEnqueueSVMMap(e->q, CL_TRUE, CL_MAP_READ, p, bytes, 0, NULL, NULL));
    blob_add(out, p, bytes);
    CL_OK(clEnqueueSVMUnmap(e->q, p, 0, NULL, NULL));
    CL_OK(clFinish(e->q));
}

static void svm_write(struct clenv *e, void *p, const void *from, size_t bytes)
{
    CL_OK(clEnqueueSVMMap(e->q, CL_TRUE, CL_MAP_WRITE, p, bytes, 0, NULL, NULL));
    memcpy(p, from, bytes);
    CL_OK(clEnqueueSVMUnmap(e->q, p, 0, NULL, NULL));
}

static void *svm_alloc(struct clenv *e, size_t bytes)
{
    void *p = clSVMAlloc(e->ctx, CL_MEM_READ_WRITE, bytes, 64);
    if (p == NULL) {
        fprintf(stderr, "clSVMAlloc(%zu) failed on %s\n", bytes, e->name);
        exit(3);
    }
    return p;
}

static void case_svm_args(struct clenv *e, struct blob *out)
{
    uint32_t *init = twin_random_u32(N, 42), n = N;
    cl_program p = clenv_build(e, src, NULL);
    cl_kernel twice = kernel(p, "twice"), scatter = kernel(p, "scatter");
    cl_mem buf = clenv_buffer(e, BYTES, init);
    uint32_t *svm = svm_alloc(e, BYTES);
    svm_write(e, svm, init, BYTES);
    /* The case: argument 0 was a buffer, then an SVM pointer. */
    CL_OK(clSetKernelArg(twice, 0, sizeof buf, &buf));
    CL_OK(clSetKernelArg(twice, 1, sizeof n, &n));
    run1(e, twice, N);
    CL_OK(clSetKernelArgSVMPointer(twice, 0, svm));
    run1(e, twice, N);
    CL_OK(clSetKernelArg(twice, 0, sizeof buf, &buf)); /* and back to the buffer */
    run1(e, twice, N);
    CL_OK(clFinish(e->q));
    svm_read(e, svm, BYTES, out);
    twin_read(e, buf, 0, BYTES, out);
    /* An SVM pointer into the middle of an allocation (out[-1] is written too) beside a buffer. */
    uint32_t *dst = svm_alloc(e, BYTES + 4096);
    CL_OK(clEnqueueSVMMemFill(e->q, dst, &(uint32_t){0xdeadbeefu}, 4, BYTES + 4096, 0, NULL, NULL));
    uint32_t m = N - 500;
    CL_OK(clSetKernelArgSVMPointer(scatter, 0, dst + 101));
    CL_OK(clSetKernelArg(scatter, 1, sizeof buf, &buf));
    CL_OK(clSetKernelArg(scatter, 2, sizeof m, &m));
    run1(e, scatter, m);
    svm_read(e, dst, BYTES + 4096, out);
    /* And with the roles swapped: the buffer written from an SVM allocation. */
    CL_OK(clSetKernelArg(scatter, 0, sizeof buf, &buf));
    CL_OK(clSetKernelArgSVMPointer(scatter, 1, svm + 3));
    CL_OK(clSetKernelArg(scatter, 2, sizeof m, &m));
    size_t local = 64, off = 64, global = (m - 64) / 64 * 64; /* out[-1] stays inside the buffer */
    CL_OK(clEnqueueNDRangeKernel(e->q, scatter, 1, &off, &global, &local, 0, NULL, NULL));
    twin_read(e, buf, 0, BYTES, out);
    CL_OK(clFinish(e->q));
    clSVMFree(e->ctx, svm);
    clSVMFree(e->ctx, dst);
    clReleaseMemObject(buf);
    clReleaseKernel(twice);
    clReleaseKernel(scatter);
    clReleaseProgram(p);
    free(init);
}

static void case_svm_buffer(struct clenv *e, struct blob *out)
{
    uint32_t *init = twin_random_u32(N, 7), n = N;
    cl_program p = clenv_build(e, src, NULL);
    cl_kernel twice = kernel(p, "twice"), scatter = kernel(p, "scatter");
    uint32_t *svm = svm_alloc(e, BYTES + 8192);
    CL_OK(clEnqueueSVMMemFill(e->q, svm, &(uint32_t){0x01020304u}, 4, BYTES + 8192, 0, NULL, NULL));
    svm_write(e, svm + 1024, init, BYTES);
    cl_int err;
    cl_mem whole = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, BYTES + 8192, svm, &err);
    CL_OK(err);
    cl_mem part = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, BYTES, svm + 1024, &err);
    CL_OK(err);
    cl_bool uses = CL_FALSE;
    CL_OK(clGetMemObjectInfo(part, CL_MEM_USES_SVM_POINTER, sizeof uses, &uses, NULL));
    if (!is_vast(e))
        uses = CL_TRUE; /* the specification's answer; PoCL 3.1 says CL_FALSE */
    blob_add(out, &uses, sizeof uses);
    /* pyopencl's test_coarse_grain_svm: a kernel on the buffer, clFinish, an SVM read map. */
    CL_OK(clSetKernelArg(twice, 0, sizeof part, &part));
    CL_OK(clSetKernelArg(twice, 1, sizeof n, &n));
    run1(e, twice, N);
    CL_OK(clFinish(e->q));
    svm_read(e, svm, BYTES + 8192, out);
    /* The SVM memory changed by SVM commands and an SVM kernel: the buffer must see it. */
    CL_OK(clEnqueueSVMMemFill(e->q, svm + 2048, &(uint64_t){0x1111222233334444ull}, 8, 8192, 0, NULL, NULL));
    CL_OK(clSetKernelArgSVMPointer(twice, 0, svm + 1024));
    run1(e, twice, N);
    twin_read(e, part, 0, BYTES, out);
    twin_read(e, whole, 0, BYTES + 8192, out);
    /* Buffers made from SVM memory mixed with a plain buffer in one launch, and copies. */
    cl_mem plain = clenv_buffer(e, BYTES, init);
    CL_OK(clSetKernelArg(scatter, 0, sizeof plain, &plain));
    CL_OK(clSetKernelArg(scatter, 1, sizeof whole, &whole));
    uint32_t m = N - 64;
    CL_OK(clSetKernelArg(scatter, 2, sizeof m, &m));
    size_t local = 64, off = 64, global = (N - 128) / 64 * 64;
    CL_OK(clEnqueueNDRangeKernel(e->q, scatter, 1, &off, &global, &local, 0, NULL, NULL));
    CL_OK(clEnqueueCopyBuffer(e->q, plain, part, 40, 1000, 4000, 0, NULL, NULL));
    CL_OK(clSetKernelArg(twice, 0, sizeof whole, &whole));
    run1(e, twice, N);
    twin_read(e, plain, 0, BYTES, out);
    /* A buffer map of it: host stores through the map land in the SVM memory. */
    uint32_t *mp = clEnqueueMapBuffer(e->q, part, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 400, 4000, 0, NULL, NULL, &err);
    CL_OK(err);
    blob_add(out, mp, 4000);
    for (int i = 0; i < 1000; i++)
        mp[i] ^= 0x00ff00ffu;
    CL_OK(clEnqueueUnmapMemObject(e->q, part, mp, 0, NULL, NULL));
    CL_OK(clFinish(e->q));
    svm_read(e, svm, BYTES + 8192, out);
    clReleaseMemObject(part);
    clReleaseMemObject(whole);
    clReleaseMemObject(plain);
    CL_OK(clFinish(e->q));
    clSVMFree(e->ctx, svm);
    clReleaseKernel(twice);
    clReleaseKernel(scatter);
    clReleaseProgram(p);
    free(init);
}

struct freed {
    cl_context ctx;
    unsigned n;
};

/* clEnqueueSVMFree's callback frees the memory itself (the specification's contract). */
static void CL_CALLBACK free_cb(cl_command_queue q, cl_uint n, void **ptrs, void *user)
{
    (void)q;
    struct freed *f = user;
    for (cl_uint i = 0; i < n; i++)
        clSVMFree(f->ctx, ptrs[i]);
    f->n = n;
}

static void case_svm_ops(struct clenv *e, struct blob *out)
{
    uint32_t *init = twin_random_u32(N, 99), n = N;
    cl_program p = clenv_build(e, src, NULL);
    cl_kernel twice = kernel(p, "twice");
    uint32_t *a = svm_alloc(e, BYTES), *b = svm_alloc(e, BYTES);
    CL_OK(clEnqueueSVMMemcpy(e->q, CL_TRUE, a, init, BYTES, 0, NULL, NULL));
    CL_OK(clEnqueueSVMMemFill(e->q, b, &(uint16_t){0xabcd}, 2, BYTES, 0, NULL, NULL));
    CL_OK(clSetKernelArgSVMPointer(twice, 0, a));
    CL_OK(clSetKernelArg(twice, 1, sizeof n, &n));
    run1(e, twice, N);
    CL_OK(clEnqueueSVMMemcpy(e->q, CL_FALSE, b + 3, a + 5, BYTES - 40, 0, NULL, NULL));
    CL_OK(clSetKernelArgSVMPointer(twice, 0, b));
    run1(e, twice, N);
    uint32_t *host = malloc(BYTES);
    CL_OK(clEnqueueSVMMemcpy(e->q, CL_TRUE, host, b, BYTES, 0, NULL, NULL));
    blob_add(out, host, BYTES);
    svm_read(e, a, BYTES, out);
    struct freed freed = {e->ctx, 0};
    void *list[2] = {a, b};
    CL_OK(clEnqueueSVMFree(e->q, 2, list, free_cb, &freed, 0, NULL, NULL));
    CL_OK(clFinish(e->q));
    blob_add(out, &freed.n, sizeof freed.n);
    clReleaseKernel(twice);
    clReleaseProgram(p);
    free(host);
    free(init);
}

/* PoCL would not know VAST's objects; the answer VAST must give is the specification's. */
static void case_foreign_mem(struct clenv *e, struct blob *out)
{
    cl_int code = CL_INVALID_MEM_OBJECT, code2 = CL_SUCCESS;
    if (is_vast(e)) {
        struct clenv other;
        clenv_open(&other, "Portable");
        cl_mem theirs = clenv_buffer(&other, 4096, NULL);
        cl_program p = clenv_build(e, src, NULL);
        cl_kernel twice = kernel(p, "twice");
        code = clSetKernelArg(twice, 0, sizeof theirs, &theirs);
        cl_mem none = NULL;
        code2 = clSetKernelArg(twice, 0, sizeof none, &none); /* NULL stays allowed */
        clReleaseKernel(twice);
        clReleaseProgram(p);
        clReleaseMemObject(theirs);
        clenv_close(&other);
    }
    printf("  foreign_mem on %s: %d, NULL: %d\n", e->name, code, code2);
    blob_add(out, &code, sizeof code);
    blob_add(out, &code2, sizeof code2);
}

/* A launch on SVM memory beside a buffer larger than the budget cannot be paged (the kernel
 * addresses SVM memory itself): under a budget (VAST_DEVICE_MEMORY set) VAST must refuse it
 * at enqueue with CL_OUT_OF_RESOURCES and leave the buffer alone; without one it runs. */
static void case_svm_refused(struct clenv *e, struct blob *out)
{
    const size_t words = 600011, bytes = words * 4; /* 2.3 MiB */
    uint32_t *init = twin_random_u32(words, 5), m = (uint32_t)words - 64;
    bool budget = getenv("VAST_DEVICE_MEMORY") != NULL;
    cl_program p = clenv_build(e, src, NULL);
    cl_kernel scatter = kernel(p, "scatter");
    cl_mem buf = clenv_buffer(e, bytes, init);
    uint32_t *svm = svm_alloc(e, bytes);
    CL_OK(clEnqueueSVMMemFill(e->q, svm, &(uint32_t){3}, 4, bytes, 0, NULL, NULL));
    CL_OK(clSetKernelArg(scatter, 0, sizeof buf, &buf));
    CL_OK(clSetKernelArgSVMPointer(scatter, 1, svm));
    CL_OK(clSetKernelArg(scatter, 2, sizeof m, &m));
    size_t local = 64, off = 64, global = (m - 64) / 64 * 64;
    cl_int err = CL_OUT_OF_RESOURCES; /* PoCL under a budget: what VAST must answer */
    if (!budget || is_vast(e))
        err = clEnqueueNDRangeKernel(e->q, scatter, 1, &off, &global, &local, 0, NULL, NULL);
    printf("  svm_refused on %s: enqueue %s\n", e->name, cl_status_name(err));
    blob_add(out, &err, sizeof err);
    twin_read(e, buf, 0, bytes, out);
    CL_OK(clFinish(e->q));
    clSVMFree(e->ctx, svm);
    clReleaseMemObject(buf);
    clReleaseKernel(scatter);
    clReleaseProgram(p);
    free(init);
}

static const struct twin_case cases[] = {
    {"svm_refused", case_svm_refused},
    {"svm_args", case_svm_args},
    {"svm_buffer", case_svm_buffer},
    {"svm_ops", case_svm_ops},
    {"foreign_mem", case_foreign_mem},
};

static const struct twin_config configs[] = {
    {"default", {NULL}, NULL},
    {"paged", {"VAST_FORCE_PAGED=1", "VAST_PAGE_SIZE=4K"}, NULL},
    {"budget.1M", {"VAST_DEVICE_MEMORY=1M", "VAST_PAGE_SIZE=4K"}, NULL},
};

int main(int argc, char **argv)
{
    return twin_main(argc, argv, cases, sizeof cases / sizeof cases[0], configs, sizeof configs / sizeof configs[0]);
}
