/*
 * test_queues: command queues, events and threads on a virtual device (issue 6), through VAST
 * on PoCL with paging forced and a 2 MiB device budget (set by CTest), so every command below
 * is a virtual command run by VAST's executor: a producer/consumer pipeline over two queues
 * joined by events; a diamond dependency graph on an out-of-order queue with a barrier; a user
 * event gating 100 commands; event callbacks counted and ordered; profiling timestamps; failed
 * wait lists and a kernel that cannot be paged; objects released while their commands wait;
 * two contexts on one page cache; non-blocking maps. Every result is checked against the
 * host's own computation.
 */
#include "../platform/common.h"
#include "vast_cmocka.h"

#include <setjmp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static cl_device_id device;
static cl_context ctx;
static cl_program program;

static const char *source =
    "__kernel void scale(__global const uint *in, __global uint *out, uint k) {\n"
    "    size_t i = get_global_id(0);\n"
    "    out[i] = in[i] * k + (uint)i;\n"
    "}\n"
    "__kernel void add2(__global const uint *a, __global const uint *b, __global uint *c) {\n"
    "    size_t i = get_global_id(0);\n"
    "    c[i] = a[i] + b[i];\n"
    "}\n"
    "__kernel void bump(__global uint *a, uint k) {\n"
    "    a[get_global_id(0)] += k;\n"
    "}\n";

static uint32_t word(size_t i, uint32_t seed) { return (uint32_t)(i * 2654435761u) ^ seed; }

static cl_program build(cl_context c) { return test_program(c, device, source); }

static int setup(void **state)
{
    (void)state;
    device = test_device(test_platform());
    ctx = test_context(device);
    program = build(ctx);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    CHECK_CL(clReleaseProgram(program));
    CHECK_CL(clReleaseContext(ctx));
    return 0;
}

static cl_command_queue queue(cl_command_queue_properties props)
{
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(ctx, device, props, &err);
    CHECK_CL(err);
    return q;
}

static cl_kernel kernel(cl_program p, const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(p, name, &err);
    CHECK_CL(err);
    return k;
}

/* A buffer of n words, word(i, seed) each (seed 0: uninitialised). */
static cl_mem words(cl_context c, size_t n, uint32_t seed)
{
    cl_int err;
    uint32_t *h = NULL;
    if (seed != 0) {
        h = malloc(n * 4);
        for (size_t i = 0; i < n; i++)
            h[i] = word(i, seed);
    }
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE | (h ? CL_MEM_COPY_HOST_PTR : 0), n * 4, h, &err);
    CHECK_CL(err);
    free(h);
    return m;
}

static void args(cl_kernel k, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        size_t size = va_arg(ap, size_t);
        const void *value = va_arg(ap, const void *);
        CHECK_CL(clSetKernelArg(k, (cl_uint)i, size, value));
    }
    va_end(ap);
}

static cl_int status_of(cl_event e)
{
    cl_int st;
    CHECK_CL(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    return st;
}

static void check_words(const uint32_t *got, size_t n, uint32_t (*expect)(size_t, const void *), const void *arg)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != expect(i, arg))
            fail_msg("word %zu: %u, expected %u", i, got[i], expect(i, arg));
}

/* ---- a producer/consumer pipeline over two queues ---- */

enum { CHUNKS = 4, CHUNK = 128u << 10 }; /* 4 x 512 KiB per buffer: 2 MiB each, 4 MiB in all */

static uint32_t pipeline_expect(size_t i, const void *arg)
{
    (void)arg;
    return word(i, 11) * 3u + (uint32_t)i + (uint32_t)(i / CHUNK + 1);
}

static void test_pipeline_two_queues(void **state)
{
    (void)state;
    cl_command_queue producer = queue(0), consumer = queue(0);
    cl_mem x = words(ctx, CHUNKS * CHUNK, 0), y = words(ctx, CHUNKS * CHUNK, 0);
    cl_kernel scale = kernel(program, "scale"), bump = kernel(program, "bump");
    uint32_t *in = malloc(CHUNKS * CHUNK * 4), *out = malloc(CHUNKS * CHUNK * 4);
    for (size_t i = 0; i < CHUNKS * CHUNK; i++)
        in[i] = word(i, 11);
    memset(out, 0xee, CHUNKS * CHUNK * 4);
    cl_event produced[CHUNKS], read[CHUNKS];
    uint32_t three = 3;
    size_t global = CHUNK;
    for (cl_uint c = 0; c < CHUNKS; c++) {
        size_t at = (size_t)c * CHUNK;
        CHECK_CL(clEnqueueWriteBuffer(producer, x, CL_FALSE, at * 4, CHUNK * 4, in + at, 0, NULL, NULL));
        args(scale, 3, sizeof x, &x, sizeof y, &y, sizeof three, &three);
        CHECK_CL(clEnqueueNDRangeKernel(producer, scale, 1, &at, &global, NULL, 0, NULL, &produced[c]));
        uint32_t k = c + 1;
        args(bump, 2, sizeof y, &y, sizeof k, &k);
        CHECK_CL(clEnqueueNDRangeKernel(consumer, bump, 1, &at, &global, NULL, 1, &produced[c], NULL));
        CHECK_CL(clEnqueueReadBuffer(consumer, y, CL_FALSE, at * 4, CHUNK * 4, out + at, 0, NULL, &read[c]));
    }
    cl_event all;
    CHECK_CL(clEnqueueMarkerWithWaitList(consumer, CHUNKS, produced, &all));
    CHECK_CL(clWaitForEvents(CHUNKS, read)); /* events of the consumer queue */
    CHECK_CL(clWaitForEvents(1, &all));
    CHECK_CL(clWaitForEvents(CHUNKS, produced)); /* and of the producer queue */
    check_words(out, CHUNKS * CHUNK, pipeline_expect, NULL);
    for (int c = 0; c < CHUNKS; c++) {
        cl_command_type type;
        CHECK_CL(clGetEventInfo(read[c], CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL));
        assert_int_equal(type, CL_COMMAND_READ_BUFFER);
        assert_int_equal(status_of(produced[c]), CL_COMPLETE);
        CHECK_CL(clReleaseEvent(produced[c]));
        CHECK_CL(clReleaseEvent(read[c]));
    }
    CHECK_CL(clReleaseEvent(all));
    CHECK_CL(clFinish(producer));
    CHECK_CL(clFinish(consumer));
    CHECK_CL(clReleaseKernel(scale));
    CHECK_CL(clReleaseKernel(bump));
    CHECK_CL(clReleaseMemObject(x));
    CHECK_CL(clReleaseMemObject(y));
    CHECK_CL(clReleaseCommandQueue(producer));
    CHECK_CL(clReleaseCommandQueue(consumer));
    free(in);
    free(out);
}

/* ---- a diamond on an out-of-order queue, then a barrier ---- */

enum { DIAMOND = 384u << 10 }; /* 1.5 MiB per buffer, 6 MiB in all */

static uint32_t diamond_expect(size_t i, const void *plus)
{
    return (word(i, 7) * 2u + (uint32_t)i) + (word(i, 7) * 5u + (uint32_t)i) + *(const uint32_t *)plus;
}

static void test_out_of_order_diamond(void **state)
{
    (void)state;
    cl_command_queue q = queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    cl_command_queue_properties props;
    CHECK_CL(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL));
    assert_true(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    cl_mem a = words(ctx, DIAMOND, 0), b1 = words(ctx, DIAMOND, 0), b2 = words(ctx, DIAMOND, 0),
           c = words(ctx, DIAMOND, 0);
    cl_kernel s1 = kernel(program, "scale"), s2 = kernel(program, "scale"), add = kernel(program, "add2"),
              bump = kernel(program, "bump");
    uint32_t *in = malloc(DIAMOND * 4), *out = malloc(DIAMOND * 4);
    for (size_t i = 0; i < DIAMOND; i++)
        in[i] = word(i, 7);
    size_t global = DIAMOND;
    uint32_t two = 2, five = 5, seven = 7, zero = 0;
    cl_event wrote, left, right, joined, done;
    CHECK_CL(clEnqueueWriteBuffer(q, a, CL_FALSE, 0, DIAMOND * 4, in, 0, NULL, &wrote));
    args(s1, 3, sizeof a, &a, sizeof b1, &b1, sizeof two, &two);
    args(s2, 3, sizeof a, &a, sizeof b2, &b2, sizeof five, &five);
    args(add, 3, sizeof b1, &b1, sizeof b2, &b2, sizeof c, &c);
    CHECK_CL(clEnqueueNDRangeKernel(q, s1, 1, NULL, &global, NULL, 1, &wrote, &left));
    CHECK_CL(clEnqueueNDRangeKernel(q, s2, 1, NULL, &global, NULL, 1, &wrote, &right));
    cl_event both[2] = {left, right};
    CHECK_CL(clEnqueueNDRangeKernel(q, add, 1, NULL, &global, NULL, 2, both, &joined));
    CHECK_CL(clEnqueueReadBuffer(q, c, CL_FALSE, 0, DIAMOND * 4, out, 1, &joined, &done));
    CHECK_CL(clWaitForEvents(1, &done));
    check_words(out, DIAMOND, diamond_expect, &zero);
    /* A barrier orders what follows it after everything before it, virtual commands included. */
    args(bump, 2, sizeof c, &c, sizeof seven, &seven);
    CHECK_CL(clEnqueueNDRangeKernel(q, bump, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK_CL(clEnqueueBarrierWithWaitList(q, 0, NULL, NULL));
    memset(out, 0, DIAMOND * 4);
    CHECK_CL(clEnqueueReadBuffer(q, c, CL_TRUE, 0, DIAMOND * 4, out, 0, NULL, NULL));
    check_words(out, DIAMOND, diamond_expect, &seven);
    CHECK_CL(clFinish(q));
    cl_event evs[] = {wrote, left, right, joined, done};
    for (size_t i = 0; i < 5; i++)
        CHECK_CL(clReleaseEvent(evs[i]));
    cl_kernel ks[] = {s1, s2, add, bump};
    for (size_t i = 0; i < 4; i++)
        CHECK_CL(clReleaseKernel(ks[i]));
    cl_mem ms[] = {a, b1, b2, c};
    for (size_t i = 0; i < 4; i++)
        CHECK_CL(clReleaseMemObject(ms[i]));
    CHECK_CL(clReleaseCommandQueue(q));
    free(in);
    free(out);
}

/* ---- a user event gating 100 commands ---- */

enum { GATED = 100, GATE_WORDS = 256u << 10, PIECE = 1024 };

struct plus {
    uint32_t seed, add;
};
static uint32_t plus_expect(size_t i, const void *arg)
{
    const struct plus *p = arg;
    return word(i, p->seed) + p->add;
}
static uint32_t piece_expect(size_t i, const void *arg)
{
    (void)arg;
    return (i / PIECE) % 2 ? (uint32_t)(i * 3) : word(i, 9);
}

static void test_user_event_gates_100(void **state)
{
    (void)state;
    cl_command_queue q = queue(0), other = queue(0);
    cl_mem a = words(ctx, GATE_WORDS, 5), b = words(ctx, GATED * PIECE, 9);
    cl_kernel bump = kernel(program, "bump");
    cl_int err;
    cl_event gate = clCreateUserEvent(ctx, &err);
    CHECK_CL(err);
    uint32_t *pieces = malloc(GATED * PIECE * 4), *got = malloc(GATE_WORDS * 4), sum = 0;
    for (size_t i = 0; i < GATED * PIECE; i++)
        pieces[i] = (uint32_t)(i * 3);
    cl_event evs[GATED];
    size_t global = GATE_WORDS;
    for (uint32_t i = 0; i < GATED; i++) {
        if (i % 2 == 0) {
            uint32_t k = i + 1;
            sum += k;
            args(bump, 2, sizeof a, &a, sizeof k, &k);
            CHECK_CL(clEnqueueNDRangeKernel(q, bump, 1, NULL, &global, NULL, 1, &gate, &evs[i]));
        } else {
            CHECK_CL(clEnqueueWriteBuffer(q, b, CL_FALSE, i * PIECE * 4, PIECE * 4, pieces + i * PIECE, 1, &gate,
                                          &evs[i]));
        }
    }
    usleep(100 * 1000);
    for (int i = 0; i < GATED; i++)
        assert_int_not_equal(status_of(evs[i]), CL_COMPLETE);
    /* Another queue is not held up, and sees nothing of the gated commands yet. */
    CHECK_CL(clEnqueueReadBuffer(other, a, CL_TRUE, 0, GATE_WORDS * 4, got, 0, NULL, NULL));
    check_words(got, GATE_WORDS, plus_expect, &(struct plus){5, 0});
    CHECK_CL(clSetUserEventStatus(gate, CL_COMPLETE));
    CHECK_CL(clWaitForEvents(GATED, evs));
    for (int i = 0; i < GATED; i++) {
        assert_int_equal(status_of(evs[i]), CL_COMPLETE);
        CHECK_CL(clReleaseEvent(evs[i]));
    }
    CHECK_CL(clEnqueueReadBuffer(other, a, CL_TRUE, 0, GATE_WORDS * 4, got, 0, NULL, NULL));
    check_words(got, GATE_WORDS, plus_expect, &(struct plus){5, sum});
    uint32_t *gotb = malloc(GATED * PIECE * 4);
    CHECK_CL(clEnqueueReadBuffer(other, b, CL_TRUE, 0, GATED * PIECE * 4, gotb, 0, NULL, NULL));
    check_words(gotb, GATED * PIECE, piece_expect, NULL);
    CHECK_CL(clReleaseEvent(gate));
    CHECK_CL(clReleaseKernel(bump));
    CHECK_CL(clReleaseMemObject(a));
    CHECK_CL(clReleaseMemObject(b));
    CHECK_CL(clReleaseCommandQueue(q));
    CHECK_CL(clReleaseCommandQueue(other));
    free(pieces);
    free(got);
    free(gotb);
}

/* ---- callbacks: each once, in status order, with the right status ---- */

enum { CB_EVENTS = 12 };
struct cb_record {
    _Atomic int seq;          /* order of arrival on this event */
    _Atomic int calls[3];     /* SUBMITTED, RUNNING, COMPLETE */
    int at[3];
    cl_int status[3];
};
struct cb_slot {
    struct cb_record *r;
    int which;
};
static _Atomic int cb_total;

static void CL_CALLBACK count_cb(cl_event e, cl_int status, void *data)
{
    (void)e;
    struct cb_slot *s = data;
    s->r->at[s->which] = atomic_fetch_add(&s->r->seq, 1);
    s->r->status[s->which] = status;
    atomic_fetch_add(&s->r->calls[s->which], 1);
    atomic_fetch_add(&cb_total, 1);
}

static void register_all(cl_event e, struct cb_record *r, struct cb_slot *slots)
{
    static const cl_int types[3] = {CL_SUBMITTED, CL_RUNNING, CL_COMPLETE};
    for (int w = 2; w >= 0; w--) { /* registered in reverse: they must still run in status order */
        slots[w] = (struct cb_slot){r, w};
        CHECK_CL(clSetEventCallback(e, types[w], count_cb, &slots[w]));
    }
}

static void test_callbacks_counted(void **state)
{
    (void)state;
    cl_command_queue q = queue(0);
    cl_mem a = words(ctx, 64u << 10, 3);
    cl_kernel bump = kernel(program, "bump");
    cl_int err;
    cl_event gate = clCreateUserEvent(ctx, &err), failing = clCreateUserEvent(ctx, &err);
    CHECK_CL(err);
    static struct cb_record rec[CB_EVENTS + 2];
    static struct cb_slot slots[CB_EVENTS + 2][3];
    memset(rec, 0, sizeof rec);
    atomic_store(&cb_total, 0);
    cl_event evs[CB_EVENTS + 2];
    size_t global = 64u << 10;
    uint32_t one = 1, scratch[16];
    for (int i = 0; i < CB_EVENTS; i++) {
        if (i % 3 == 2) {
            CHECK_CL(clEnqueueReadBuffer(q, a, CL_FALSE, 0, sizeof scratch, scratch, 1, &gate, &evs[i]));
        } else {
            args(bump, 2, sizeof a, &a, sizeof one, &one);
            CHECK_CL(clEnqueueNDRangeKernel(q, bump, 1, NULL, &global, NULL, 1, &gate, &evs[i]));
        }
        register_all(evs[i], &rec[i], slots[i]);
    }
    /* Two commands that will fail: a wait list with a failed event, and one waiting on that. */
    CHECK_CL(clEnqueueReadBuffer(q, a, CL_FALSE, 0, sizeof scratch, scratch, 1, &failing, &evs[CB_EVENTS]));
    CHECK_CL(clEnqueueReadBuffer(q, a, CL_FALSE, 0, sizeof scratch, scratch, 1, &evs[CB_EVENTS], &evs[CB_EVENTS + 1]));
    for (int i = CB_EVENTS; i < CB_EVENTS + 2; i++)
        register_all(evs[i], &rec[i], slots[i]);
    usleep(50 * 1000);
    assert_int_equal(atomic_load(&cb_total), 0);
    CHECK_CL(clSetUserEventStatus(failing, -1234));
    CHECK_CL(clSetUserEventStatus(gate, CL_COMPLETE));
    assert_int_equal(clWaitForEvents(CB_EVENTS + 2, evs), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    CHECK_CL(clWaitForEvents(CB_EVENTS, evs));
    CHECK_CL(clFinish(q));
    assert_int_equal(atomic_load(&cb_total), 3 * (CB_EVENTS + 2));
    for (int i = 0; i < CB_EVENTS + 2; i++) {
        bool failed = i >= CB_EVENTS;
        for (int w = 0; w < 3; w++) {
            assert_int_equal(atomic_load(&rec[i].calls[w]), 1);
            if (!failed)
                assert_int_equal(rec[i].status[w], w == 0 ? CL_SUBMITTED : w == 1 ? CL_RUNNING : CL_COMPLETE);
            else
                assert_true(rec[i].status[w] < 0);
        }
        if (!failed)
            assert_true(rec[i].at[0] < rec[i].at[1] && rec[i].at[1] < rec[i].at[2]);
        assert_int_equal(status_of(evs[i]), failed ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_COMPLETE);
    }
    /* A callback registered after its status is reached runs at once. */
    struct cb_record late = {0};
    struct cb_slot late_slot = {&late, 2};
    CHECK_CL(clSetEventCallback(evs[0], CL_COMPLETE, count_cb, &late_slot));
    assert_int_equal(atomic_load(&late.calls[2]), 1);
    assert_int_equal(late.status[2], CL_COMPLETE);
    for (int i = 0; i < CB_EVENTS + 2; i++)
        CHECK_CL(clReleaseEvent(evs[i]));
    CHECK_CL(clReleaseEvent(gate));
    CHECK_CL(clReleaseEvent(failing));
    CHECK_CL(clReleaseKernel(bump));
    CHECK_CL(clReleaseMemObject(a));
    CHECK_CL(clReleaseCommandQueue(q));
}

/* ---- profiling ---- */

static cl_ulong prof(cl_event e, cl_profiling_info what)
{
    cl_ulong t = 0;
    CHECK_CL(clGetEventProfilingInfo(e, what, sizeof t, &t, NULL));
    return t;
}

static void test_profiling_timestamps(void **state)
{
    (void)state;
    enum { N = 10, W = 512u << 10 }; /* 2 MiB: as large as the budget */
    cl_command_queue q = queue(CL_QUEUE_PROFILING_ENABLE);
    cl_mem a = words(ctx, W, 4);
    cl_kernel bump = kernel(program, "bump");
    cl_int err;
    cl_event gate = clCreateUserEvent(ctx, &err);
    CHECK_CL(err);
    uint32_t *got = malloc(W * 4), k = 2;
    size_t global = W;
    cl_event evs[N];
    for (int i = 0; i < N; i++) {
        if (i % 2 == 0) {
            args(bump, 2, sizeof a, &a, sizeof k, &k);
            CHECK_CL(clEnqueueNDRangeKernel(q, bump, 1, NULL, &global, NULL, i == 0, i == 0 ? &gate : NULL, &evs[i]));
        } else {
            CHECK_CL(clEnqueueReadBuffer(q, a, CL_FALSE, 0, W * 4, got, 0, NULL, &evs[i]));
        }
    }
    cl_ulong t;
    assert_int_equal(clGetEventProfilingInfo(evs[0], CL_PROFILING_COMMAND_END, sizeof t, &t, NULL),
                     CL_PROFILING_INFO_NOT_AVAILABLE);
    usleep(30 * 1000);
    CHECK_CL(clSetUserEventStatus(gate, CL_COMPLETE));
    CHECK_CL(clFinish(q));
    cl_ulong prev_end = 0;
    for (int i = 0; i < N; i++) {
        cl_ulong queued = prof(evs[i], CL_PROFILING_COMMAND_QUEUED), submit = prof(evs[i], CL_PROFILING_COMMAND_SUBMIT),
                 start = prof(evs[i], CL_PROFILING_COMMAND_START), end = prof(evs[i], CL_PROFILING_COMMAND_END),
                 complete = prof(evs[i], CL_PROFILING_COMMAND_COMPLETE);
        if (!(queued <= submit && submit <= start && start <= end && end <= complete))
            fail_msg("event %d: QUEUED %llu SUBMIT %llu START %llu END %llu", i, (unsigned long long)queued,
                     (unsigned long long)submit, (unsigned long long)start, (unsigned long long)end);
        if (start < prev_end) /* an in-order queue: each starts after the previous one ended */
            fail_msg("event %d starts at %llu, before the previous one's end %llu", i, (unsigned long long)start,
                     (unsigned long long)prev_end);
        prev_end = end;
        if (i == 0 && submit - queued < 30ull * 1000 * 1000)
            fail_msg("the gated command was submitted %llu ns after its enqueue, before its gate opened",
                     (unsigned long long)(submit - queued));
        assert_true(end > start); /* the whole command: a paged launch or a 2 MiB read */
        CHECK_CL(clReleaseEvent(evs[i]));
    }
    check_words(got, W, plus_expect, &(struct plus){4, k * (N / 2)});
    CHECK_CL(clReleaseEvent(gate));
    CHECK_CL(clReleaseKernel(bump));
    CHECK_CL(clReleaseMemObject(a));
    CHECK_CL(clReleaseCommandQueue(q));
    free(got);
}

/* ---- errors: a failed wait list, a kernel that cannot be paged ---- */

/* A program VAST refuses only when a launch runs: every work-item of `wide` reads 1024 pages
 * of its 4 MiB (4 KiB pages), more than the 2 MiB budget; no slice of a work-group fits, and
 * enqueue-time planning is kept for kernels whose work-items meet (launch.c, admit_plan). */
static cl_program late_refusal_program(void)
{
    static const char *src = "__kernel void wide(__global uint *a, uint k) {\n"
                             "  uint s = 0, m = (uint)get_global_size(0);\n"
                             "  for (uint j = 0; j < 1024u; j++) s += a[j * (m / 1024u) + (a[0] & 0u)];\n"
                             "  a[get_global_id(0)] += k + (s & 0u);\n"
                             "}\n";
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK_CL(err);
    CHECK_CL(clBuildProgram(p, 1, &device, NULL, NULL, NULL));
    return p;
}

/* The test program again, from the binary VAST hands out (which carries its source). */
static cl_program binary_program(void)
{
    size_t size = 0;
    CHECK_CL(clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL));
    unsigned char *bin = malloc(size);
    CHECK_CL(clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL));
    cl_int err, status;
    const unsigned char *cbin = bin;
    cl_program p = clCreateProgramWithBinary(ctx, 1, &device, &size, &cbin, &status, &err);
    CHECK_CL(err);
    CHECK_CL(clBuildProgram(p, 1, &device, NULL, NULL, NULL));
    free(bin);
    return p;
}

static void test_errors(void **state)
{
    (void)state;
    enum { W = 1u << 20 }; /* 4 MiB: twice the budget, so a launch over it must be paged */
    cl_command_queue q = queue(0);
    cl_mem a = words(ctx, W, 8);
    uint32_t *got = malloc(W * 4), *piece = calloc(4096, 4);
    cl_int err;
    /* A failed user event: the commands waiting on it, directly or not, do not run. */
    cl_event failing = clCreateUserEvent(ctx, &err), wrote, bumped;
    CHECK_CL(err);
    cl_kernel bump = kernel(program, "bump");
    uint32_t k = 1;
    size_t global = W;
    CHECK_CL(clEnqueueWriteBuffer(q, a, CL_FALSE, 0, 4096 * 4, piece, 1, &failing, &wrote));
    args(bump, 2, sizeof a, &a, sizeof k, &k);
    CHECK_CL(clEnqueueNDRangeKernel(q, bump, 1, NULL, &global, NULL, 1, &wrote, &bumped));
    CHECK_CL(clSetUserEventStatus(failing, -77));
    assert_int_equal(clWaitForEvents(1, &bumped), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    assert_true(status_of(wrote) < 0);
    assert_true(status_of(bumped) < 0);
    memset(got, 0, 16);
    assert_int_equal(clEnqueueReadBuffer(q, a, CL_TRUE, 0, 16, got, 1, &bumped, NULL),
                     CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    assert_int_equal(got[0], 0); /* not run */
    CHECK_CL(clFinish(q)); /* failures of wait lists are not the queue's own */
    CHECK_CL(clEnqueueReadBuffer(q, a, CL_TRUE, 0, W * 4, got, 0, NULL, NULL));
    check_words(got, W, plus_expect, &(struct plus){8, 0});
    /* A launch refused when it runs (one work-item reads more than the budget; a work-group
     * whose work-items meet and that alone exceeds the budget is refused by the enqueue call
     * itself: e2e.partition.api): it fails, as its event says, and so do the commands that
     * wait for it. */
    cl_program late = late_refusal_program();
    cl_kernel refused = kernel(late, "wide");
    args(refused, 2, sizeof a, &a, sizeof k, &k);
    cl_event launch, after;
    size_t wg = 64;
    CHECK_CL(clEnqueueNDRangeKernel(q, refused, 1, NULL, &global, &wg, 0, NULL, &launch));
    CHECK_CL(clEnqueueReadBuffer(q, a, CL_FALSE, 0, 16, got, 1, &launch, &after));
    assert_int_equal(clWaitForEvents(1, &launch), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    cl_int st = status_of(launch);
    assert_true(st < 0 && st != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    assert_int_equal(clWaitForEvents(1, &after), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    assert_int_equal(clFinish(q), st); /* the queue reports its failed launch once */
    CHECK_CL(clFinish(q));
    /* A blocking command after such a launch reports it as a failed wait, not as memory
     * pressure: pyopencl retries a read that fails with CL_OUT_OF_RESOURCES, and the retry
     * would succeed with what the launch never wrote. */
    CHECK_CL(clEnqueueNDRangeKernel(q, refused, 1, NULL, &global, &wg, 0, NULL, NULL));
    assert_int_equal(clEnqueueReadBuffer(q, a, CL_TRUE, 0, 16, got, 0, NULL, NULL),
                     CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    CHECK_CL(clFinish(q));
    CHECK_CL(clEnqueueReadBuffer(q, a, CL_TRUE, 0, W * 4, got, 0, NULL, NULL));
    check_words(got, W, plus_expect, &(struct plus){8, 0}); /* untouched */
    /* The same data through a program from VAST's own binary: it pages (4 MiB, 2 MiB budget). */
    cl_program bin = binary_program();
    cl_kernel from_bin = kernel(bin, "bump");
    args(from_bin, 2, sizeof a, &a, sizeof k, &k);
    CHECK_CL(clEnqueueNDRangeKernel(q, from_bin, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK_CL(clEnqueueReadBuffer(q, a, CL_TRUE, 0, W * 4, got, 0, NULL, NULL));
    check_words(got, W, plus_expect, &(struct plus){8, k});
    CHECK_CL(clReleaseKernel(from_bin));
    CHECK_CL(clReleaseProgram(late));
    cl_event evs[] = {failing, wrote, bumped, launch, after};
    for (size_t i = 0; i < 5; i++)
        CHECK_CL(clReleaseEvent(evs[i]));
    CHECK_CL(clReleaseKernel(bump));
    CHECK_CL(clReleaseKernel(refused));
    CHECK_CL(clReleaseProgram(bin));
    CHECK_CL(clReleaseMemObject(a));
    CHECK_CL(clReleaseCommandQueue(q));
    free(got);
    free(piece);
}

/* ---- objects released while their commands wait; a context released with work pending ---- */

static void test_release_while_pending(void **state)
{
    (void)state;
    enum { W = 768u << 10 }; /* 3 MiB */
    cl_int err;
    cl_context c2 = test_context(device);
    cl_command_queue q = clCreateCommandQueue(c2, device, 0, &err);
    CHECK_CL(err);
    cl_program p = build(c2);
    cl_kernel bump = kernel(p, "bump");
    uint32_t *host = malloc(W * 4), *got = malloc(W * 4), k = 9;
    for (size_t i = 0; i < W; i++)
        host[i] = word(i, 6);
    cl_mem a = clCreateBuffer(c2, CL_MEM_USE_HOST_PTR, W * 4, host, &err);
    CHECK_CL(err);
    cl_event gate = clCreateUserEvent(c2, &err), read;
    CHECK_CL(err);
    size_t global = W;
    args(bump, 2, sizeof a, &a, sizeof k, &k);
    CHECK_CL(clEnqueueNDRangeKernel(q, bump, 1, NULL, &global, NULL, 1, &gate, NULL));
    CHECK_CL(clEnqueueReadBuffer(q, a, CL_FALSE, 0, W * 4, got, 0, NULL, &read));
    CHECK_CL(clReleaseKernel(bump));
    CHECK_CL(clReleaseProgram(p));
    CHECK_CL(clReleaseMemObject(a));
    CHECK_CL(clReleaseCommandQueue(q));
    CHECK_CL(clReleaseContext(c2));
    CHECK_CL(clSetUserEventStatus(gate, CL_COMPLETE));
    CHECK_CL(clWaitForEvents(1, &read));
    check_words(got, W, plus_expect, &(struct plus){6, k});
    CHECK_CL(clReleaseEvent(read));
    CHECK_CL(clReleaseEvent(gate));
    free(host);
    free(got);
}

/* ---- two contexts on one device share its page cache ---- */

static void test_two_contexts(void **state)
{
    (void)state;
    enum { W = 384u << 10 };
    cl_int err;
    cl_context c2 = test_context(device);
    cl_context cs[2] = {ctx, c2};
    cl_command_queue qs[2];
    cl_program ps[2] = {program, build(c2)};
    cl_kernel ks[2];
    cl_mem ms[2];
    uint32_t *got[2];
    size_t global = W;
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < 2; i++) {
            if (r == 0) {
                qs[i] = clCreateCommandQueue(cs[i], device, 0, &err);
                CHECK_CL(err);
                ks[i] = kernel(ps[i], "bump");
                ms[i] = words(cs[i], W, 20 + i);
                got[i] = malloc(W * 4);
            }
            uint32_t k = 1 + (uint32_t)i;
            args(ks[i], 2, sizeof ms[i], &ms[i], sizeof k, &k);
            CHECK_CL(clEnqueueNDRangeKernel(qs[i], ks[i], 1, NULL, &global, NULL, 0, NULL, NULL));
        }
    for (int i = 0; i < 2; i++)
        CHECK_CL(clEnqueueReadBuffer(qs[i], ms[i], CL_FALSE, 0, W * 4, got[i], 0, NULL, NULL));
    for (int i = 0; i < 2; i++) {
        CHECK_CL(clFinish(qs[i]));
        check_words(got[i], W, plus_expect, &(struct plus){20 + (uint32_t)i, 3 * (1 + (uint32_t)i)});
        CHECK_CL(clReleaseKernel(ks[i]));
        CHECK_CL(clReleaseMemObject(ms[i]));
        CHECK_CL(clReleaseCommandQueue(qs[i]));
        free(got[i]);
    }
    CHECK_CL(clReleaseProgram(ps[1]));
    CHECK_CL(clReleaseContext(c2));
}

/* ---- non-blocking maps: the pointer at once, the bytes when the event completes ---- */

static void test_nonblocking_map(void **state)
{
    (void)state;
    enum { W = 256u << 10 };
    cl_command_queue q = queue(0);
    cl_mem a = words(ctx, W, 2);
    cl_kernel bump = kernel(program, "bump");
    cl_int err;
    cl_event gate = clCreateUserEvent(ctx, &err), mapped, unmapped;
    CHECK_CL(err);
    uint32_t k = 4;
    size_t global = W;
    args(bump, 2, sizeof a, &a, sizeof k, &k);
    CHECK_CL(clEnqueueNDRangeKernel(q, bump, 1, NULL, &global, NULL, 1, &gate, NULL));
    uint32_t *p = clEnqueueMapBuffer(q, a, CL_FALSE, CL_MAP_READ | CL_MAP_WRITE, 0, W * 4, 0, NULL, &mapped, &err);
    CHECK_CL(err);
    assert_non_null(p);
    assert_int_not_equal(status_of(mapped), CL_COMPLETE);
    CHECK_CL(clSetUserEventStatus(gate, CL_COMPLETE));
    CHECK_CL(clWaitForEvents(1, &mapped));
    check_words(p, W, plus_expect, &(struct plus){2, k});
    for (size_t i = 0; i < W; i++)
        p[i] += 100;
    CHECK_CL(clEnqueueUnmapMemObject(q, a, p, 0, NULL, &unmapped));
    args(bump, 2, sizeof a, &a, sizeof k, &k);
    CHECK_CL(clEnqueueNDRangeKernel(q, bump, 1, NULL, &global, NULL, 1, &unmapped, NULL));
    uint32_t *got = malloc(W * 4);
    CHECK_CL(clEnqueueReadBuffer(q, a, CL_TRUE, 0, W * 4, got, 0, NULL, NULL));
    check_words(got, W, plus_expect, &(struct plus){2, 2 * k + 100});
    cl_uint maps = 1;
    CHECK_CL(clGetMemObjectInfo(a, CL_MEM_MAP_COUNT, sizeof maps, &maps, NULL));
    assert_int_equal(maps, 0);
    CHECK_CL(clReleaseEvent(gate));
    CHECK_CL(clReleaseEvent(mapped));
    CHECK_CL(clReleaseEvent(unmapped));
    CHECK_CL(clReleaseKernel(bump));
    CHECK_CL(clReleaseMemObject(a));
    CHECK_CL(clReleaseCommandQueue(q));
    free(got);
}

VAST_CMOCKA_MAIN(setup, teardown,
                 test_pipeline_two_queues, test_out_of_order_diamond, test_user_event_gates_100, test_callbacks_counted,
                 test_profiling_timestamps, test_errors, test_release_while_pending, test_two_contexts,
                 test_nonblocking_map)
