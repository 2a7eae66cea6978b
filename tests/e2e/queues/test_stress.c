/*
 * test_stress: 16 host threads, each with its own queue on one context, hammer shared virtual
 * buffers through VAST (paging forced, a budget smaller than the buffers; set by CTest) for
 * VAST_STRESS_SECONDS seconds (or argv[1]; 30 by default): each thread reads random ranges of
 * a shared read-only source, launches kernels over its own disjoint window of a shared
 * destination (non-blocking, joined by events), writes and maps pieces of it, and checks every
 * result against the host's own computation. Exit 0 when every check held and every thread
 * finished at least one round.
 */
#include "../platform/common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

enum { THREADS = 16, SRC_WORDS = 1u << 20, WINDOW = 32u << 10 }; /* 4 MiB source, 2 MiB destination */

static const char *source =
    "__kernel void scale(__global const uint *in, __global uint *out, uint k) {\n"
    "    size_t i = get_global_id(0);\n"
    "    out[i] = in[i] * k + (uint)i;\n"
    "}\n"
    "__kernel void bump(__global uint *a, uint k) {\n"
    "    a[get_global_id(0)] += k;\n"
    "}\n";

static cl_device_id device;
static cl_context ctx;
static cl_program program;
static cl_mem src, dst;
static double seconds;
static _Atomic int failures;
static long rounds[THREADS];

static uint32_t word(size_t i) { return (uint32_t)(i * 2654435761u) ^ 0x5a5a1234u; }

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define FAIL(...)                                                                                 \
    do {                                                                                          \
        fprintf(stderr, __VA_ARGS__);                                                             \
        fputc('\n', stderr);                                                                      \
        atomic_fetch_add(&failures, 1);                                                           \
        return;                                                                                   \
    } while (0)

struct worker {
    int id;
    cl_command_queue q;
    cl_kernel scale, bump;
    uint64_t rng;
    uint32_t *got;
};

static uint32_t rnd(struct worker *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return (uint32_t)w->rng;
}

/* A random range of the shared source, read and checked. */
static void read_source(struct worker *w)
{
    size_t n = 1 + rnd(w) % WINDOW, at = rnd(w) % (SRC_WORDS - n);
    CHECK_CL(clEnqueueReadBuffer(w->q, src, rnd(w) % 2, at * 4, n * 4, w->got, 0, NULL, NULL));
    CHECK_CL(clFinish(w->q));
    for (size_t i = 0; i < n; i++)
        if (w->got[i] != word(at + i))
            FAIL("thread %d: source word %zu is %u, expected %u", w->id, at + i, w->got[i], word(at + i));
}

/* scale then bump over the thread's window (joined by an event), read back, checked. */
static void launch_window(struct worker *w)
{
    size_t base = (size_t)w->id * WINDOW, global = WINDOW;
    uint32_t k = 1 + rnd(w) % 7, j = rnd(w) % 1000;
    cl_event scaled, bumped, read;
    CHECK_CL(clSetKernelArg(w->scale, 0, sizeof src, &src));
    CHECK_CL(clSetKernelArg(w->scale, 1, sizeof dst, &dst));
    CHECK_CL(clSetKernelArg(w->scale, 2, sizeof k, &k));
    CHECK_CL(clEnqueueNDRangeKernel(w->q, w->scale, 1, &base, &global, NULL, 0, NULL, &scaled));
    CHECK_CL(clSetKernelArg(w->bump, 0, sizeof dst, &dst));
    CHECK_CL(clSetKernelArg(w->bump, 1, sizeof j, &j));
    CHECK_CL(clEnqueueNDRangeKernel(w->q, w->bump, 1, &base, &global, NULL, 1, &scaled, &bumped));
    CHECK_CL(clEnqueueReadBuffer(w->q, dst, CL_FALSE, base * 4, WINDOW * 4, w->got, 1, &bumped, &read));
    CHECK_CL(clWaitForEvents(1, &read));
    CHECK_CL(clReleaseEvent(scaled));
    CHECK_CL(clReleaseEvent(bumped));
    CHECK_CL(clReleaseEvent(read));
    for (size_t i = 0; i < WINDOW; i++) {
        uint32_t expect = word(base + i) * k + (uint32_t)(base + i) + j;
        if (w->got[i] != expect)
            FAIL("thread %d: window word %zu is %u, expected %u (k %u, j %u)", w->id, base + i, w->got[i], expect,
                 k, j);
    }
}

/* A write of a piece of the window, then a map of it, checked. */
static void write_and_map(struct worker *w)
{
    size_t n = 1 + rnd(w) % 4096, at = (size_t)w->id * WINDOW + rnd(w) % (WINDOW - n);
    uint32_t seed = rnd(w);
    for (size_t i = 0; i < n; i++)
        w->got[i] = seed + (uint32_t)i;
    CHECK_CL(clEnqueueWriteBuffer(w->q, dst, CL_FALSE, at * 4, n * 4, w->got, 0, NULL, NULL));
    cl_int err;
    cl_event mapped;
    uint32_t *p = clEnqueueMapBuffer(w->q, dst, CL_FALSE, CL_MAP_READ, at * 4, n * 4, 0, NULL, &mapped, &err);
    CHECK_CL(err);
    CHECK_CL(clWaitForEvents(1, &mapped));
    CHECK_CL(clReleaseEvent(mapped));
    for (size_t i = 0; i < n; i++)
        if (p[i] != seed + (uint32_t)i)
            FAIL("thread %d: mapped word %zu is %u, expected %u", w->id, at + i, p[i], seed + (uint32_t)i);
    CHECK_CL(clEnqueueUnmapMemObject(w->q, dst, p, 0, NULL, NULL));
    CHECK_CL(clFinish(w->q));
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    cl_int err;
    w->q = clCreateCommandQueue(ctx, device, 0, &err);
    CHECK_CL(err);
    w->scale = clCreateKernel(program, "scale", &err);
    CHECK_CL(err);
    w->bump = clCreateKernel(program, "bump", &err);
    CHECK_CL(err);
    w->got = malloc(WINDOW * 4);
    w->rng = 0x9e3779b97f4a7c15ull * (uint64_t)(w->id + 1);
    double end = now() + seconds;
    while (now() < end && atomic_load(&failures) == 0) {
        read_source(w);
        launch_window(w);
        write_and_map(w);
        rounds[w->id]++;
    }
    CHECK_CL(clReleaseKernel(w->scale));
    CHECK_CL(clReleaseKernel(w->bump));
    CHECK_CL(clReleaseCommandQueue(w->q));
    free(w->got);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *env = getenv("VAST_STRESS_SECONDS");
    seconds = argc > 1 ? atof(argv[1]) : env != NULL ? atof(env) : 30.0;
    device = test_device(test_platform());
    ctx = test_context(device);
    program = test_program(ctx, device, source);
    cl_int err;
    uint32_t *init = malloc(SRC_WORDS * 4);
    for (size_t i = 0; i < SRC_WORDS; i++)
        init[i] = word(i);
    src = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, SRC_WORDS * 4, init, &err);
    CHECK_CL(err);
    dst = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)THREADS * WINDOW * 4, NULL, &err);
    CHECK_CL(err);
    free(init);
    pthread_t threads[THREADS];
    struct worker workers[THREADS];
    for (int t = 0; t < THREADS; t++) {
        workers[t] = (struct worker){.id = t};
        pthread_create(&threads[t], NULL, worker_main, &workers[t]);
    }
    long total = 0, least = -1;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        total += rounds[t];
        least = least < 0 || rounds[t] < least ? rounds[t] : least;
    }
    CHECK_CL(clReleaseMemObject(src));
    CHECK_CL(clReleaseMemObject(dst));
    CHECK_CL(clReleaseProgram(program));
    CHECK_CL(clReleaseContext(ctx));
    printf("test_stress: %d threads, %.0f s: %ld rounds (fewest in one thread: %ld), %d failures\n", THREADS,
           seconds, total, least, atomic_load(&failures));
    return atomic_load(&failures) == 0 && least > 0 ? 0 : 1;
}
