/* test_chain.c - identical launches that follow each other on an in-order queue run partition by
 * partition together (interpose/chain.c; issue 17), through the OpenCL API on PoCL. Every case
 * runs the same commands on PoCL and through VAST at VAST_DEVICE_MEMORY=1M with 4 KiB pages
 * (x and y of 1,000,003 uint each, 7.6x the budget), from seeded inputs, and compares y byte for
 * byte with PoCL's and with a CPU reference; a gate (a marker waiting on a user event, set
 * once everything is enqueued) makes the launches wait in the queue where a case needs them
 * to, so what may chain is decided, not raced:
 *   chain      10 launches of y = y * 3 + x behind the gate, each with its event (all must end
 *              CL_COMPLETE): judged chained = 9 (VAST_STATS)
 *   late       6 times: a launch right after blocking writes, no gate, then 9 more after
 *              0, 4, ..., 20 ms: they join it before its first partition, during its first
 *              pass (its second pass runs what they missed) or after it (a chain of their
 *              own); every sequence leaves the same bytes; judged chained >= 6 x 8
 *   between    behind the gate: 3 launches, a write of x, 3 launches, a launch with another
 *              scalar, a launch with a wait list, 2 launches: the write, the scalar and the
 *              wait list each end a chain (chained = 2 + 2 + 0 + 0 + 1 = 5; a chain across
 *              any of them makes the bytes differ)
 *   atomic     2 launches of out[i] = atomic_inc(count) behind the gate: the counter's page is
 *              written by every partition, so they must not chain (chained = 0); judged on the
 *              second launch's values (a permutation of [n, 2n)) and the count (2n)
 *   ooo        10 launches on an out-of-order queue, each waiting for the last one's event:
 *              no chain (chained = 0), the same bytes
 * On a merged device (VAST_MERGE_DEVICES=1) the same cases; late then counts at least 4 x 6.
 * With --flip one byte of VAST's y is flipped, and every case must then FAIL.
 * Usage: partition_chain [--only NAME[,NAME]] [--flip]; PARTITION_REAL_PLATFORM names the real
 * platform where it is not PoCL. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUDGET ((size_t)1 << 20)
#define PAGE ((size_t)4 << 10)
#define N 1000003u
#define WG 256u
#define ROUNDS 10
#define LATE_SEQS 6

struct ccase {
    const char *name;
    int chained; /* what VAST_STATS must count; -k: at least k */
};

static const struct ccase cases[] = {
    {"chain", 9}, {"late", -LATE_SEQS * 8}, {"between", 5}, {"atomic", 0}, {"ooo", 0},
};
#define NCASES (sizeof cases / sizeof cases[0])

static const char src[] =
    "__kernel void axpy(__global uint *y, __global const uint *x, uint a, uint n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) y[i] = y[i] * a + x[i];\n"
    "}\n"
    "__kernel void ticket(__global uint *out, __global uint *count, uint n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) out[i] = atomic_inc(count);\n"
    "}\n";

struct run {
    struct clenv e;
    cl_program prog;
    cl_kernel k;
    cl_mem y, x, count;
    cl_event gate;
};

static void set_scalar(cl_kernel k, cl_uint i, cl_uint v) { CL_OK(clSetKernelArg(k, i, sizeof v, &v)); }

static void axpy(struct run *r, cl_command_queue q, cl_uint nw, const cl_event *wl, cl_event *ev)
{
    size_t global = (N + WG - 1) / WG * WG, local = WG;
    CL_OK(clEnqueueNDRangeKernel(q, r->k, 1, NULL, &global, &local, nw, wl, ev));
}

/* A marker behind a user event: the queue's later commands wait for open_gate. */
static void close_gate(struct run *r, cl_command_queue q)
{
    cl_int err;
    r->gate = clCreateUserEvent(r->e.ctx, &err);
    CL_OK(err);
    CL_OK(clEnqueueMarkerWithWaitList(q, 1, &r->gate, NULL));
}

static void open_gate(struct run *r) { CL_OK(clSetUserEventStatus(r->gate, CL_COMPLETE)); }

/* One case on the platform named like `prefix`: y (and for atomic the counter) into got. */
static void run_case(const char *name, const char *prefix, const uint32_t *x0, const uint32_t *y0, uint32_t *got,
                     uint32_t *count)
{
    struct run r = {0};
    clenv_open(&r.e, prefix);
    r.prog = clenv_build(&r.e, src, NULL);
    cl_int err;
    bool atomic = strcmp(name, "atomic") == 0;
    r.k = clCreateKernel(r.prog, atomic ? "ticket" : "axpy", &err);
    CL_OK(err);
    size_t bytes = (size_t)N * 4;
    r.y = clCreateBuffer(r.e.ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CL_OK(err);
    r.x = clCreateBuffer(r.e.ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CL_OK(err);
    cl_command_queue q = r.e.q;
    if (atomic) {
        cl_uint zero = 0;
        r.count = clCreateBuffer(r.e.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4, &zero, &err);
        CL_OK(err);
        CL_OK(clSetKernelArg(r.k, 0, sizeof r.y, &r.y));
        CL_OK(clSetKernelArg(r.k, 1, sizeof r.count, &r.count));
        set_scalar(r.k, 2, N);
        close_gate(&r, q);
        axpy(&r, q, 0, NULL, NULL);
        axpy(&r, q, 0, NULL, NULL);
        open_gate(&r);
    } else {
        CL_OK(clSetKernelArg(r.k, 0, sizeof r.y, &r.y));
        CL_OK(clSetKernelArg(r.k, 1, sizeof r.x, &r.x));
        set_scalar(r.k, 2, 3);
        set_scalar(r.k, 3, N);
    }
    if (strcmp(name, "chain") == 0) {
        close_gate(&r, q);
        CL_OK(clEnqueueWriteBuffer(q, r.x, CL_FALSE, 0, bytes, x0, 0, NULL, NULL));
        CL_OK(clEnqueueWriteBuffer(q, r.y, CL_FALSE, 0, bytes, y0, 0, NULL, NULL));
        cl_event ev[ROUNDS];
        for (int i = 0; i < ROUNDS; i++)
            axpy(&r, q, 0, NULL, &ev[i]);
        open_gate(&r);
        CL_OK(clWaitForEvents(ROUNDS, ev));
        for (int i = 0; i < ROUNDS; i++) {
            cl_int st = 1;
            CL_OK(clGetEventInfo(ev[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
            if (st != CL_COMPLETE) {
                fprintf(stderr, "%s: launch %d ended with status %d\n", prefix, i, st);
                exit(1);
            }
            clReleaseEvent(ev[i]);
        }
    } else if (strcmp(name, "late") == 0) {
        /* the first launch alone, then the others after 0-20 ms: they join it before its first
         * partition, during its first pass, or lead a chain of their own once it has ended;
         * every sequence must leave the same bytes (the last one's are compared below) */
        uint32_t *first = malloc(bytes);
        for (int s = 0; s < LATE_SEQS; s++) {
            CL_OK(clEnqueueWriteBuffer(q, r.x, CL_TRUE, 0, bytes, x0, 0, NULL, NULL));
            CL_OK(clEnqueueWriteBuffer(q, r.y, CL_TRUE, 0, bytes, y0, 0, NULL, NULL));
            axpy(&r, q, 0, NULL, NULL);
            usleep(4000 * s);
            for (int i = 1; i < ROUNDS; i++)
                axpy(&r, q, 0, NULL, NULL);
            CL_OK(clenv_read(&r.e, r.y, bytes, s == 0 ? first : got));
            if (s > 0 && memcmp(first, got, bytes) != 0) {
                printf("%s: sequence %d (launches after %d ms) left other bytes than sequence 0\n", prefix, s, 4 * s);
                exit(1);
            }
        }
        free(first);
    } else if (strcmp(name, "between") == 0) {
        uint32_t *x1 = malloc(bytes);
        for (size_t i = 0; i < N; i++)
            x1[i] = x0[i] ^ 0x5bd1e995u;
        close_gate(&r, q);
        CL_OK(clEnqueueWriteBuffer(q, r.x, CL_FALSE, 0, bytes, x0, 0, NULL, NULL));
        CL_OK(clEnqueueWriteBuffer(q, r.y, CL_FALSE, 0, bytes, y0, 0, NULL, NULL));
        for (int i = 0; i < 3; i++)
            axpy(&r, q, 0, NULL, NULL);
        CL_OK(clEnqueueWriteBuffer(q, r.x, CL_FALSE, 0, bytes, x1, 0, NULL, NULL));
        for (int i = 0; i < 3; i++)
            axpy(&r, q, 0, NULL, NULL);
        set_scalar(r.k, 2, 5);
        cl_event last;
        axpy(&r, q, 0, NULL, &last);
        set_scalar(r.k, 2, 3);
        axpy(&r, q, 1, &last, NULL);
        for (int i = 0; i < 2; i++)
            axpy(&r, q, 0, NULL, NULL);
        open_gate(&r);
        CL_OK(clFinish(q));
        clReleaseEvent(last);
        free(x1);
    } else if (strcmp(name, "ooo") == 0) {
        cl_command_queue oq = clCreateCommandQueue(r.e.ctx, r.e.device, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
        CL_OK(err);
        CL_OK(clEnqueueWriteBuffer(oq, r.x, CL_TRUE, 0, bytes, x0, 0, NULL, NULL));
        CL_OK(clEnqueueWriteBuffer(oq, r.y, CL_TRUE, 0, bytes, y0, 0, NULL, NULL));
        cl_event prev = NULL;
        for (int i = 0; i < ROUNDS; i++) {
            cl_event ev;
            axpy(&r, oq, prev != NULL, prev != NULL ? &prev : NULL, &ev);
            if (prev != NULL)
                clReleaseEvent(prev);
            prev = ev;
        }
        CL_OK(clWaitForEvents(1, &prev));
        clReleaseEvent(prev);
        CL_OK(clFinish(oq));
        clReleaseCommandQueue(oq);
    }
    CL_OK(clFinish(q));
    CL_OK(clenv_read(&r.e, r.y, bytes, got));
    if (atomic)
        CL_OK(clenv_read(&r.e, r.count, 4, count));
    if (r.gate != NULL)
        clReleaseEvent(r.gate);
    if (r.count != NULL)
        clReleaseMemObject(r.count);
    clReleaseMemObject(r.y);
    clReleaseMemObject(r.x);
    clReleaseKernel(r.k);
    clReleaseProgram(r.prog);
    clenv_close(&r.e);
}

/* y after the case's launches, on the CPU. */
static void reference(const char *name, const uint32_t *x0, const uint32_t *y0, uint32_t *y)
{
    memcpy(y, y0, (size_t)N * 4);
    for (size_t i = 0; i < N; i++) {
        uint32_t v = y[i];
        if (strcmp(name, "between") == 0) {
            uint32_t x1 = x0[i] ^ 0x5bd1e995u;
            for (int k = 0; k < 3; k++)
                v = v * 3 + x0[i];
            for (int k = 0; k < 3; k++)
                v = v * 3 + x1;
            v = v * 5 + x1;
            for (int k = 0; k < 3; k++)
                v = v * 3 + x1;
        } else {
            for (int k = 0; k < ROUNDS; k++)
                v = v * 3 + x0[i];
        }
        y[i] = v;
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int child(const void *cv, const char *arg, int flip)
{
    (void)arg;
    const struct ccase *c = cv;
    uint64_t seed = 20261129;
    uint32_t *x0 = harness_rnd_u32(&seed, N, 0), *y0 = harness_rnd_u32(&seed, N, 0);
    uint32_t *want = malloc((size_t)N * 4), *got = malloc((size_t)N * 4), *ref = malloc((size_t)N * 4);
    uint32_t cwant = 0, cgot = 0;
    const char *real = getenv("PARTITION_REAL_PLATFORM"); /* e.g. "NVIDIA CUDA" on the GPU machine */
    run_case(c->name, real != NULL ? real : "Portable", x0, y0, want, &cwant);
    memset(got, 0xA5, (size_t)N * 4);
    run_case(c->name, "VAST", x0, y0, got, &cgot);
    if (flip)
        ((unsigned char *)got)[(size_t)N * 2 + 1] ^= 0x10;
    int bad = 0;
    if (strcmp(c->name, "atomic") == 0) { /* tickets are handed out in any order: sorted */
        qsort(want, N, 4, cmp_u32);
        qsort(got, N, 4, cmp_u32);
        for (size_t i = 0; i < N; i++)
            ref[i] = N + (uint32_t)i;
        if (cgot != 2 * N || cwant != 2 * N) {
            printf("%s: the count is %u through VAST, %u on PoCL, want %u\n", c->name, cgot, cwant, 2 * N);
            bad = 1;
        }
    } else {
        reference(c->name, x0, y0, ref);
    }
    bad |= harness_compare_bytes(c->name, (unsigned char *)want, (size_t)N * 4, (unsigned char *)got, (size_t)N * 4);
    if (!bad && harness_first_diff(ref, got, (size_t)N * 4) != (size_t)-1) {
        printf("%s: PoCL and VAST agree, but not with the CPU reference\n", c->name);
        bad = 1;
    }
    free(x0);
    free(y0);
    free(want);
    free(got);
    free(ref);
    return bad ? 1 : 0;
}

static int runs(const void *c, const struct harness_opts *o, struct harness_run *out, size_t max)
{
    (void)o;
    if (max < 1)
        return 0;
    const struct ccase *k = c;
    out[0] = (struct harness_run){.name = k->name, .budget = BUDGET, .page = PAGE, .ws = (size_t)N * 8};
    return 1;
}

static void judge(const void *cv, const struct harness_run *run, const char *out, char *why, size_t n, char *what,
                  size_t nwhat)
{
    const struct ccase *c = cv;
    const char *kernel = strcmp(c->name, "atomic") == 0 ? "ticket" : "axpy";
    long long parts = harness_stat(out, kernel, "partitioned", "partitions");
    long long chained = harness_stat(out, kernel, "partitioned", "chained");
    snprintf(what, nwhat, "%-8s budget %zuK page %zuK (ws %zuK) partitions=%lld chained=%lld", c->name,
             run->budget >> 10, run->page >> 10, run->ws >> 10, parts, chained);
    /* a merged device's chain closes when its leader's partitions start: a launch after that
     * leads a chain of its own (interpose/merge.c), so late keeps at least 4 of each 9 */
    const char *merge = getenv("VAST_MERGE_DEVICES");
    int want = merge != NULL && strcmp(merge, "1") == 0 && strcmp(c->name, "late") == 0 ? -LATE_SEQS * 4 : c->chained;
    if (parts < 2)
        snprintf(why, n, "no VAST_STATS line 'kernel=%s mode=partitioned' with partitions >= 2", kernel);
    else if (want >= 0 ? chained != want : chained < -want)
        snprintf(why, n, "chained=%lld, want %s%d", chained, want < 0 ? "at least " : "", abs(want));
}

int main(int argc, char **argv)
{
    static const struct harness_prog prog = {
        cases, NCASES, sizeof cases[0], "cases", {0}, false, NULL, child, runs, judge};
    return harness_main(argc, argv, &prog);
}
