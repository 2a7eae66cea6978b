/*
 * test_fast: direct launches that skip VAST's executor (interpose/launch.c, launch_fast): a
 * kernel whose buffers are resident already goes straight onto the application's real queue.
 * Through VAST on PoCL with a 1 MiB budget of 4 KiB pages (set by CTest, with VAST_STATS=1:
 * CTest also requires some launches to be counted on_queue). Every result is checked against
 * the host's own computation.
 *
 *   repeat      one buffer (odd size), 60 launches, reads in between: the launches after the
 *               first run on the queue
 *   ordered     a launch, then at once a non-blocking read and a write on the same in-order
 *               queue, a launch (which waits behind them), a map: each sees the one before
 *   contention  a long kernel holds its buffer's frames (0.6 MiB) while another queue
 *               launches over a second 0.6 MiB buffer, which needs those frames: it waits
 *               for them, then runs; both results exact
 *   user_event  a launch behind a marker waiting for a user event, then another queue's launch
 *               needing its frames and that queue's clFinish, before the event is set
 *   release     the buffer and kernel released right after a launch, before it ends
 *   events      a launch's event: its status, a wait on it, an out-of-order queue's read
 *               waiting on it; a blocking read behind a barrier after a launch
 * Host-side commands without wait list run on the application's thread under the same
 * condition (executor.c, submit_inline): the reads above check their order.
 *   inline      non-blocking writes and reads on an idle queue of a profiling queue, with
 *               events: complete when the call returns (before, the executor's host lane
 *               ran them later), their times in order, a callback registered afterwards run
 *               at once; then a slow kernel still running on the queue and, at once, a
 *               non-blocking write over its buffer: the write lands after the kernel (its
 *               bytes are the final ones), whichever way it ran
 *   behind      non-blocking reads at once behind a slow kernel on the queue (a host worker
 *               waits for the queue's order itself, executor.c, order_by_worker, or the
 *               driver's callback does), then a kernel, a non-blocking write of the upper
 *               half and 2,501 one-word ones behind it: each command sees the ones before
 *   threads     4 threads, each its own queue and buffer, 150 launches and reads each
 *   stream      300 launches with nothing in between (VAST looks for those that ended only
 *               once enough are on its list, onqueue.c), then a read; and on an out-of-order
 *               queue, each launch waiting for the one before (through VAST's executor)
 *   mapwrite    a launch on the queue, then at once a blocking map for writing of its
 *               buffer, a patch, the unmap, 40 times: the map runs after the kernel, whose
 *               pages VAST must let go of first (a pinned page cannot be dropped for a write
 *               mapping)
 */
#include "../platform/common.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

static const char *source =
    "__kernel void bump(__global uint *a, uint k) {\n"
    "    size_t i = get_global_id(0);\n"
    "    a[i] = a[i] * 3u + k + (uint)i;\n"
    "}\n"
    "__kernel void slow(__global uint *a, uint rounds) {\n"
    "    size_t i = get_global_id(0);\n"
    "    uint x = a[i];\n"
    "    for (uint r = 0; r < rounds; r++)\n"
    "        x = x * 1664525u + 1013904223u;\n"
    "    a[i] = x;\n"
    "}\n";

static cl_device_id device;
static cl_context ctx;
static cl_program program;
static int failures;

#define EXPECT(cond, ...)                                                                         \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "FAIL %s:%d: ", __func__, __LINE__);                                  \
            fprintf(stderr, __VA_ARGS__);                                                         \
            fputc('\n', stderr);                                                                  \
            __atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);                                   \
        }                                                                                         \
    } while (0)

static uint32_t seed_word(size_t i, uint32_t seed) { return (uint32_t)(i * 2654435761u) ^ seed; }

static void host_bump(uint32_t *a, size_t n, uint32_t k)
{
    for (size_t i = 0; i < n; i++)
        a[i] = a[i] * 3u + k + (uint32_t)i;
}

/* `slow`'s rounds of x -> x * M + C are one affine map, its power taken by squaring (the
 * powers of one map commute), so the host's answer costs no more than the kernel's launch. */
static void host_slow(uint32_t *a, size_t n, uint32_t rounds)
{
    uint32_t mul = 1, add = 0, m = 1664525u, c = 1013904223u;
    for (uint32_t r = rounds; r != 0; r >>= 1) {
        if (r & 1) {
            mul *= m;
            add = add * m + c;
        }
        c = c * m + c;
        m *= m;
    }
    for (size_t i = 0; i < n; i++)
        a[i] = a[i] * mul + add;
}

static cl_mem make_buffer(const uint32_t *init, size_t n)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4, (void *)init, &err);
    CHECK_CL(err);
    return m;
}

static cl_kernel kernel(const char *name, cl_mem m, uint32_t k)
{
    cl_int err;
    cl_kernel kr = clCreateKernel(program, name, &err);
    CHECK_CL(err);
    CHECK_CL(clSetKernelArg(kr, 0, sizeof m, &m));
    CHECK_CL(clSetKernelArg(kr, 1, sizeof k, &k));
    return kr;
}

static void launch(cl_command_queue q, cl_kernel kr, size_t n, cl_event *ev)
{
    CHECK_CL(clEnqueueNDRangeKernel(q, kr, 1, NULL, &n, NULL, 0, NULL, ev));
}

static void compare(const char *what, const uint32_t *got, const uint32_t *want, size_t n)
{
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i] && bad++ == 0)
            first = i;
    EXPECT(bad == 0, "%s: %zu of %zu words differ, first at %zu (%u, want %u)", what, bad, n, first,
           first < n ? got[first] : 0, first < n ? want[first] : 0);
}

static cl_command_queue queue(cl_command_queue_properties props)
{
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(ctx, device, props, &err);
    CHECK_CL(err);
    return q;
}

/* One buffer of n words (seeded, with its expected contents), a queue and kernel `bump` over it. */
struct one {
    size_t n;
    uint32_t *want, *got;
    cl_mem m;
    cl_command_queue q;
    cl_kernel kr;
};

static void one_open(struct one *o, size_t n, uint32_t seed, uint32_t k, cl_command_queue_properties props)
{
    o->n = n;
    o->want = malloc(n * 4);
    o->got = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        o->want[i] = seed_word(i, seed);
    o->m = make_buffer(o->want, n);
    o->q = queue(props);
    o->kr = kernel("bump", o->m, k);
}

/* Reads the buffer back (output poisoned), compares, then releases everything. */
static void one_close(struct one *o, const char *what, int poison)
{
    memset(o->got, poison, o->n * 4);
    CHECK_CL(clEnqueueReadBuffer(o->q, o->m, CL_TRUE, 0, o->n * 4, o->got, 0, NULL, NULL));
    compare(what, o->got, o->want, o->n);
    CHECK_CL(clFinish(o->q));
    clReleaseKernel(o->kr);
    clReleaseMemObject(o->m);
    clReleaseCommandQueue(o->q);
    free(o->want);
    free(o->got);
}

static void test_repeat(void)
{
    struct one o;
    one_open(&o, 60001, 11, 0, 0); /* 234 KiB: not a page multiple */
    for (uint32_t round = 0; round < 60; round++) {
        CHECK_CL(clSetKernelArg(o.kr, 1, sizeof round, &round));
        launch(o.q, o.kr, o.n, NULL);
        host_bump(o.want, o.n, round);
        if (round % 20 == 19) {
            memset(o.got, 0xa5, o.n * 4);
            CHECK_CL(clEnqueueReadBuffer(o.q, o.m, CL_TRUE, 0, o.n * 4, o.got, 0, NULL, NULL));
            compare("repeat", o.got, o.want, o.n);
        }
    }
    one_close(&o, "repeat", 0xa5);
}

static void test_ordered(void)
{
    const size_t n = 50021;
    uint32_t *want = malloc(n * 4), *got = malloc(n * 4), *patch = malloc(4001 * 4);
    for (size_t i = 0; i < n; i++)
        want[i] = seed_word(i, 12);
    cl_mem m = make_buffer(want, n);
    cl_command_queue q = queue(0);
    cl_kernel kr = kernel("bump", m, 5);
    launch(q, kr, n, NULL); /* through the executor: its pages become resident */
    host_bump(want, n, 5);
    CHECK_CL(clFinish(q));
    launch(q, kr, n, NULL); /* on the queue */
    host_bump(want, n, 5);
    memset(got, 0x5a, n * 4);
    cl_event read;
    CHECK_CL(clEnqueueReadBuffer(q, m, CL_FALSE, 0, n * 4, got, 0, NULL, &read));
    for (size_t i = 0; i < 4001; i++)
        patch[i] = seed_word(i, 99);
    CHECK_CL(clEnqueueWriteBuffer(q, m, CL_FALSE, 4 * 1234, 4001 * 4, patch, 0, NULL, NULL));
    launch(q, kr, n, NULL); /* waits behind the read and the write */
    CHECK_CL(clWaitForEvents(1, &read));
    compare("ordered: read after a launch", got, want, n);
    memcpy(want + 1234, patch, 4001 * 4);
    host_bump(want, n, 5);
    cl_int err;
    uint32_t *p = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ, 0, n * 4, 0, NULL, NULL, &err);
    CHECK_CL(err);
    compare("ordered: map after write and launch", p, want, n);
    CHECK_CL(clEnqueueUnmapMemObject(q, m, p, 0, NULL, NULL));
    CHECK_CL(clFinish(q));
    clReleaseEvent(read);
    clReleaseKernel(kr);
    clReleaseMemObject(m);
    clReleaseCommandQueue(q);
    free(want);
    free(got);
    free(patch);
}

/* Two 625 KiB buffers (two do not fit the 1 MiB budget) with their expected contents, a queue
 * and a kernel each; a made resident by one launch of its kernel. */
struct pair {
    size_t n;
    uint32_t *wa, *wb, *got;
    cl_mem a, b;
    cl_command_queue qa, qb;
    cl_kernel ka, kb;
};

static void host_run(const char *name, uint32_t *a, size_t n, uint32_t k)
{
    if (strcmp(name, "slow") == 0)
        host_slow(a, n, k);
    else
        host_bump(a, n, k);
}

static void pair_open(struct pair *p, uint32_t seed, const char *kernel_a, uint32_t ka, uint32_t kb)
{
    p->n = 160001;
    p->wa = malloc(p->n * 4), p->wb = malloc(p->n * 4), p->got = malloc(p->n * 4);
    for (size_t i = 0; i < p->n; i++) {
        p->wa[i] = seed_word(i, seed);
        p->wb[i] = seed_word(i, seed + 1);
    }
    p->a = make_buffer(p->wa, p->n), p->b = make_buffer(p->wb, p->n);
    p->qa = queue(0), p->qb = queue(0);
    p->ka = kernel(kernel_a, p->a, ka), p->kb = kernel("bump", p->b, kb);
    launch(p->qa, p->ka, p->n, NULL); /* a becomes resident */
    host_run(kernel_a, p->wa, p->n, ka);
    CHECK_CL(clFinish(p->qa));
}

/* Both buffers read back and compared with what the host computed. */
static void pair_close(struct pair *p, const char *what)
{
    char label[96];
    CHECK_CL(clEnqueueReadBuffer(p->qb, p->b, CL_TRUE, 0, p->n * 4, p->got, 0, NULL, NULL));
    snprintf(label, sizeof label, "%s: the second queue's launch", what);
    compare(label, p->got, p->wb, p->n);
    CHECK_CL(clEnqueueReadBuffer(p->qa, p->a, CL_TRUE, 0, p->n * 4, p->got, 0, NULL, NULL));
    snprintf(label, sizeof label, "%s: the first queue's launches", what);
    compare(label, p->got, p->wa, p->n);
    clReleaseKernel(p->ka);
    clReleaseKernel(p->kb);
    clReleaseMemObject(p->a);
    clReleaseMemObject(p->b);
    clReleaseCommandQueue(p->qa);
    clReleaseCommandQueue(p->qb);
    free(p->wa);
    free(p->wb);
    free(p->got);
}

static void test_contention(void)
{
    const uint32_t rounds = 1000;
    struct pair p;
    pair_open(&p, 21, "slow", 1, 7);
    CHECK_CL(clSetKernelArg(p.ka, 1, sizeof rounds, &rounds));
    cl_event ea;
    launch(p.qa, p.ka, p.n, &ea); /* on the queue, a's frames held until it ends */
    launch(p.qb, p.kb, p.n, NULL); /* needs a's frames */
    host_slow(p.wa, p.n, rounds);
    host_bump(p.wb, p.n, 7);
    CHECK_CL(clFinish(p.qb));
    CHECK_CL(clWaitForEvents(1, &ea));
    cl_int st = 1;
    CHECK_CL(clGetEventInfo(ea, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    EXPECT(st == CL_COMPLETE, "contention: the long kernel's status is %d", st);
    clReleaseEvent(ea);
    pair_close(&p, "contention");
}

/* A kernel behind a marker that waits for a user event must not hold frames that another
 * queue's launch needs, or that launch (and the clFinish before the event is set) would
 * never end. */
static void test_user_event(void)
{
    struct pair p;
    pair_open(&p, 61, "bump", 3, 4);
    cl_int err;
    cl_event ue = clCreateUserEvent(ctx, &err);
    CHECK_CL(err);
    CHECK_CL(clEnqueueMarkerWithWaitList(p.qa, 1, &ue, NULL));
    launch(p.qa, p.ka, p.n, NULL); /* waits for the user event */
    host_bump(p.wa, p.n, 3);
    launch(p.qb, p.kb, p.n, NULL); /* needs a's frames */
    host_bump(p.wb, p.n, 4);
    CHECK_CL(clFinish(p.qb));
    CHECK_CL(clEnqueueReadBuffer(p.qb, p.b, CL_TRUE, 0, p.n * 4, p.got, 0, NULL, NULL));
    compare("user event: the other queue's launch, before the event", p.got, p.wb, p.n);
    CHECK_CL(clSetUserEventStatus(ue, CL_COMPLETE));
    launch(p.qa, p.ka, p.n, NULL); /* the marker has completed: on the queue again */
    host_bump(p.wa, p.n, 3);
    clReleaseEvent(ue);
    pair_close(&p, "user event");
}

static void test_release(void)
{
    const size_t n = 40009;
    uint32_t *init = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        init[i] = seed_word(i, 31);
    cl_command_queue q = queue(0);
    for (int round = 0; round < 20; round++) {
        cl_mem m = make_buffer(init, n);
        cl_kernel kr = kernel("slow", m, 200);
        launch(q, kr, n, NULL);
        CHECK_CL(clFinish(q)); /* resident now */
        launch(q, kr, n, NULL);
        clReleaseKernel(kr);
        clReleaseMemObject(m); /* while its launch may still run */
    }
    CHECK_CL(clFinish(q));
    clReleaseCommandQueue(q);
    free(init);
}

static void test_events(void)
{
    const size_t n = 30011;
    uint32_t *want = malloc(n * 4), *got = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        want[i] = seed_word(i, 41);
    cl_mem m = make_buffer(want, n);
    cl_command_queue q = queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    cl_kernel kr = kernel("slow", m, 500);
    cl_event e0, e1, rd;
    launch(q, kr, n, &e0);
    host_slow(want, n, 500);
    CHECK_CL(clWaitForEvents(1, &e0));
    launch(q, kr, n, &e1); /* on the queue: its event is the real kernel's */
    host_slow(want, n, 500);
    cl_command_type type = 0;
    CHECK_CL(clGetEventInfo(e1, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL));
    EXPECT(type == CL_COMMAND_NDRANGE_KERNEL, "events: command type 0x%x", (unsigned)type);
    memset(got, 0, n * 4);
    CHECK_CL(clEnqueueReadBuffer(q, m, CL_FALSE, 0, n * 4, got, 1, &e1, &rd));
    CHECK_CL(clWaitForEvents(1, &rd));
    compare("events: read waiting on the launch", got, want, n);
    cl_int st = 1;
    CHECK_CL(clGetEventInfo(e1, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    EXPECT(st == CL_COMPLETE, "events: status %d", st);
    launch(q, kr, n, NULL); /* on the queue; the barrier orders the blocking read after it */
    host_slow(want, n, 500);
    CHECK_CL(clEnqueueBarrierWithWaitList(q, 0, NULL, NULL));
    memset(got, 0, n * 4);
    CHECK_CL(clEnqueueReadBuffer(q, m, CL_TRUE, 0, n * 4, got, 0, NULL, NULL));
    compare("events: blocking read after a barrier", got, want, n);
    clReleaseEvent(e0);
    clReleaseEvent(e1);
    clReleaseEvent(rd);
    clReleaseKernel(kr);
    clReleaseMemObject(m);
    clReleaseCommandQueue(q);
    free(want);
    free(got);
}

static void *thread_main(void *arg)
{
    uint32_t seed = (uint32_t)(uintptr_t)arg;
    const size_t n = 20011 + seed;
    uint32_t *want = malloc(n * 4), *got = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        want[i] = seed_word(i, seed);
    cl_mem m = make_buffer(want, n);
    cl_command_queue q = queue(0);
    cl_kernel kr = kernel("bump", m, seed);
    for (int round = 0; round < 150; round++) {
        launch(q, kr, n, NULL);
        host_bump(want, n, seed);
        if (round % 25 == 24) {
            CHECK_CL(clEnqueueReadBuffer(q, m, CL_TRUE, 0, n * 4, got, 0, NULL, NULL));
            compare("threads", got, want, n);
        }
    }
    CHECK_CL(clFinish(q));
    clReleaseKernel(kr);
    clReleaseMemObject(m);
    clReleaseCommandQueue(q);
    free(want);
    free(got);
    return NULL;
}

static void test_threads(void)
{
    pthread_t t[4];
    for (uintptr_t i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, thread_main, (void *)(i + 51));
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
}

static void test_stream(cl_command_queue_properties props)
{
    struct one o;
    one_open(&o, 20011, 31, 7, props);
    cl_event first; /* through VAST: its pages become resident */
    launch(o.q, o.kr, o.n, &first);
    CHECK_CL(clWaitForEvents(1, &first));
    clReleaseEvent(first);
    host_bump(o.want, o.n, 7);
    cl_event prev = NULL; /* out of order: each launch waits for the one before */
    for (int i = 0; i < 300; i++) {
        cl_event ev = NULL;
        if (props != 0 && i > 0)
            CHECK_CL(clEnqueueNDRangeKernel(o.q, o.kr, 1, NULL, &o.n, NULL, 1, &prev, &ev));
        else
            launch(o.q, o.kr, o.n, props != 0 ? &ev : NULL);
        if (prev != NULL)
            clReleaseEvent(prev);
        prev = ev;
        host_bump(o.want, o.n, 7);
    }
    if (prev != NULL) {
        CHECK_CL(clWaitForEvents(1, &prev));
        clReleaseEvent(prev);
    }
    one_close(&o, props != 0 ? "stream, out of order" : "stream", 0x77);
}

static void test_mapwrite(void)
{
    struct one o;
    one_open(&o, 40009, 21, 3, 0);
    cl_int err = CL_SUCCESS;
    for (uint32_t round = 0; round < 40 && err == CL_SUCCESS; round++) {
        cl_event first; /* the write mapping dropped a page: this one loads it, through VAST */
        launch(o.q, o.kr, o.n, &first);
        CHECK_CL(clWaitForEvents(1, &first));
        clReleaseEvent(first);
        launch(o.q, o.kr, o.n, NULL); /* on the queue: its pages are resident */
        host_bump(o.want, o.n, 3);
        host_bump(o.want, o.n, 3);
        size_t at = (round * 997u) % (o.n - 300);
        uint32_t *p = clEnqueueMapBuffer(o.q, o.m, CL_TRUE, CL_MAP_WRITE, at * 4, 300 * 4, 0, NULL, NULL, &err);
        if (err != CL_SUCCESS) {
            fprintf(stderr, "mapwrite: round %u: clEnqueueMapBuffer = %d\n", round, err);
            failures++;
            break;
        }
        for (size_t i = 0; i < 300; i++)
            p[i] = o.want[at + i] = seed_word(at + i, round);
        CHECK_CL(clEnqueueUnmapMemObject(o.q, o.m, p, 0, NULL, NULL));
    }
    one_close(&o, "mapwrite", 0x3c);
}

static void CL_CALLBACK count_complete(cl_event e, cl_int status, void *data)
{
    (void)e;
    if (status == CL_COMPLETE)
        __atomic_add_fetch((int *)data, 1, __ATOMIC_SEQ_CST);
}

static void test_inline(void)
{
    const size_t n = 30011;
    struct one o;
    one_open(&o, n, 41, 0, CL_QUEUE_PROFILING_ENABLE);
    CHECK_CL(clFinish(o.q));
    int called = 0;
    for (uint32_t round = 0; round < 20; round++) {
        for (size_t i = 0; i < n; i++)
            o.want[i] = seed_word(i, round * 7 + 1);
        cl_event w = NULL, r = NULL;
        CHECK_CL(clEnqueueWriteBuffer(o.q, o.m, CL_FALSE, 0, n * 4, o.want, 0, NULL, &w));
        cl_int st = CL_QUEUED;
        CHECK_CL(clGetEventInfo(w, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
        EXPECT(st == CL_COMPLETE, "inline: round %u: a non-blocking write on an idle queue is %d at return", round, st);
        memset(o.got, 0x5c, n * 4);
        CHECK_CL(clEnqueueReadBuffer(o.q, o.m, CL_FALSE, 0, n * 4, o.got, 0, NULL, &r));
        CHECK_CL(clGetEventInfo(r, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
        EXPECT(st == CL_COMPLETE, "inline: round %u: a non-blocking read on an idle queue is %d at return", round, st);
        CHECK_CL(clSetEventCallback(r, CL_COMPLETE, count_complete, &called));
        CHECK_CL(clWaitForEvents(1, &r));
        compare("inline read", o.got, o.want, n);
        cl_ulong t[4];
        const cl_profiling_info what[4] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                          CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
        for (int i = 0; i < 4; i++)
            CHECK_CL(clGetEventProfilingInfo(w, what[i], sizeof t[i], &t[i], NULL));
        EXPECT(t[0] <= t[1] && t[1] <= t[2] && t[2] <= t[3] && t[3] > t[0],
               "inline: round %u: times %llu %llu %llu %llu", round, (unsigned long long)t[0],
               (unsigned long long)t[1], (unsigned long long)t[2], (unsigned long long)t[3]);
        clReleaseEvent(w);
        clReleaseEvent(r);
    }
    EXPECT(called == 20, "inline: %d of 20 callbacks ran", called);
    /* a non-blocking write behind a kernel still running lands after it */
    cl_kernel slow = kernel("slow", o.m, 20000);
    launch(o.q, slow, n, NULL);
    for (size_t i = 0; i < n; i++)
        o.want[i] = seed_word(i, 99);
    CHECK_CL(clEnqueueWriteBuffer(o.q, o.m, CL_FALSE, 0, n * 4, o.want, 0, NULL, NULL));
    CHECK_CL(clFinish(o.q));
    clReleaseKernel(slow);
    one_close(&o, "inline", 0x77);
}

/* Non-blocking reads behind a slow kernel on the queue: the first crosses to a host worker that
 * waits for the queue's order itself (executor.c, order_by_worker), the second, behind the
 * first, through the driver's callback; each sees the kernel's words. Then the same behind a
 * kernel and a non-blocking write. */
static void test_behind(void)
{
    const size_t n = 40009;
    struct one o;
    one_open(&o, n, 61, 0, 0);
    uint32_t *second = malloc(n * 4);
    cl_kernel slow = kernel("slow", o.m, 20000);
    for (int round = 0; round < 2; round++) {
        CHECK_CL(clFinish(o.q));
        host_slow(o.want, n, 20000); /* before the launch: the commands below go at once */
        memset(o.got, 0x3c, n * 4);
        memset(second, 0xc3, n * 4);
        launch(o.q, slow, n, NULL);
        cl_event r;
        CHECK_CL(clEnqueueReadBuffer(o.q, o.m, CL_FALSE, 0, n * 4, o.got, 0, NULL, &r));
        CHECK_CL(clEnqueueReadBuffer(o.q, o.m, CL_FALSE, 0, n * 4, second, 0, NULL, NULL));
        CHECK_CL(clWaitForEvents(1, &r));
        compare("behind: a read behind a kernel", o.got, o.want, n);
        CHECK_CL(clFinish(o.q));
        compare("behind: a second read behind it", second, o.want, n);
        clReleaseEvent(r);
        host_slow(o.want, n, 20000);
        launch(o.q, slow, n, NULL);
        size_t half = n / 2; /* the upper half in one write (whole pages), the lower one word
                              * in eight, one word each */
        for (size_t i = half; i < n; i++)
            o.want[i] = seed_word(i, 62 + (uint32_t)round);
        CHECK_CL(clEnqueueWriteBuffer(o.q, o.m, CL_FALSE, half * 4, (n - half) * 4, &o.want[half], 0, NULL, NULL));
        for (size_t i = 0; i < half; i += 8) {
            o.want[i] = seed_word(i, 72 + (uint32_t)round);
            CHECK_CL(clEnqueueWriteBuffer(o.q, o.m, CL_FALSE, i * 4, 4, &o.want[i], 0, NULL, NULL));
        }
    }
    CHECK_CL(clFinish(o.q));
    clReleaseKernel(slow);
    free(second);
    one_close(&o, "behind", 0x99);
}

int main(void)
{
    device = test_device(test_platform());
    ctx = test_context(device);
    program = test_program(ctx, device, source);
    test_repeat();
    test_ordered();
    test_contention();
    test_user_event();
    test_release();
    test_events();
    test_threads();
    test_mapwrite();
    test_inline();
    test_behind();
    test_stream(0);
    test_stream(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    clReleaseProgram(program);
    clReleaseContext(ctx);
    printf("test_fast: %s\n", failures ? "FAIL" : "PASS");
    return failures != 0;
}
