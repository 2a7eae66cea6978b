/* test_devices.c: contexts over several devices (issue 14), through VAST and directly on
 * PoCL, in one process: OCL_ICD_VENDORS names a folder holding vast.icd and PoCL's icd, and
 * POCL_DEVICES="pthread pthread" (or three) makes PoCL show several devices. Every case runs
 * on each platform with the same seeded inputs; the outputs (poisoned before each read) and
 * the API codes that matter are compared byte for byte: VAST must equal PoCL.
 *
 * usage: test_devices [--only CASE[,CASE]] [--flip] [--native NAME]   (--flip corrupts one
 * byte of VAST's output: the comparison must then fail; --native: the platform VAST is compared
 * with, a substring of its name, "Portable" (PoCL) by default; "NVIDIA" on a machine with two
 * GPUs, where VAST wraps NVIDIA's platform). Cases:
 *   issue     one context over two devices, a queue each, each doubling its half of one
 *             buffer, then device 1 (waiting on both events) adding 1 to device 0's half
 *   busy      the same, but device 1 doubles slowly and device 0 has finished when the last
 *             launch is enqueued (its writes are newer than device 1's copies, still in use)
 *   ooo       the same on out-of-order queues
 *   halves    two devices write the even and the odd ints of one buffer, unordered (every
 *             page is written by both: no false sharing may lose either's bytes)
 *   pingpong  one buffer incremented 100 times, alternating devices, each launch waiting on
 *             the previous one's event
 *   hostio    host reads, writes and maps (for reading and writing) between launches on
 *             both devices, the host commands on either device's queue
 *   fromtype  clCreateContextFromType(CL_DEVICE_TYPE_ALL) with every device: the issue pattern
 *   buildlist clBuildProgram for a device list: one device only (build status per device,
 *             a launch there), then both (a launch on the other)
 *   subbuf    each device doubles its own sub-buffer (one half) of one buffer, then device 1
 *             adds 1 to the first half through the parent
 *   three     with three devices: each a third; device 2 adds 1 to device 0's third
 * and, through VAST only, "subdevices": a virtual device is not partitioned
 * (CL_DEVICE_PARTITION_PROPERTIES is {0}, clCreateSubDevices gives CL_INVALID_VALUE).
 */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "devices_common.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 393241u /* ints: 1.5 MiB, odd, no page multiple, above the 1M budget */

static const char *src =
    "__kernel void dbl(__global int *a, uint off) { a[off + get_global_id(0)] *= 2; }\n"
    "__kernel void inc(__global int *a, uint off) { a[off + get_global_id(0)] += 1; }\n"
    "__kernel void dbl_slow(__global int *a, uint off) {\n"
    "    size_t i = off + get_global_id(0);\n"
    "    uint s = (uint)a[i];\n"
    "    for (int r = 0; r < 3000; r++)\n"
    "        s = s * 1664525u + 1013904223u;\n"
    "    a[i] = a[i] * 2 + (s < 1000u);\n"
    "}\n"
    "__kernel void interleave(__global int *a, uint parity) {\n"
    "    size_t i = 2 * get_global_id(0) + parity;\n"
    "    a[i] = a[i] * 3 + (int)parity + 1;\n"
    "}\n";

static int failures;

/* What one platform gives: the bytes read back and the codes recorded along the way. */
struct outcome {
    int32_t data[N];
    cl_int codes[8];
};

struct env {
    cl_platform_id platform;
    cl_device_id dev[3];
    cl_uint ndev;
    cl_context ctx;
    cl_command_queue q[3];
    cl_program prog;
};

static void fill_input(int32_t *v, size_t n)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = (int32_t)(x >> 40) - (1 << 23);
    }
}

static int setup(struct env *e, cl_uint ndev, bool ooo, bool from_type, bool build)
{
    cl_int err;
    cl_uint avail = 0;
    OK(clGetDeviceIDs(e->platform, CL_DEVICE_TYPE_ALL, 3, e->dev, &avail));
    CHECK(avail >= ndev, "%u devices, the case needs %u (POCL_DEVICES)", avail, ndev);
    e->ndev = ndev;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)e->platform, 0};
    if (from_type) {
        e->ctx = clCreateContextFromType(props, CL_DEVICE_TYPE_ALL, NULL, NULL, &err);
        CHECK(e->ctx != NULL, "clCreateContextFromType: %d", err);
        cl_uint n = 0;
        OK(clGetContextInfo(e->ctx, CL_CONTEXT_NUM_DEVICES, sizeof n, &n, NULL));
        CHECK(n == avail, "context from type has %u devices of %u", n, avail);
        OK(clGetContextInfo(e->ctx, CL_CONTEXT_DEVICES, n * sizeof(cl_device_id), e->dev, NULL));
    } else {
        e->ctx = clCreateContext(props, ndev, e->dev, NULL, NULL, &err);
        CHECK(e->ctx != NULL, "clCreateContext: %d", err);
    }
    for (cl_uint i = 0; i < ndev; i++) {
        e->q[i] = clCreateCommandQueue(e->ctx, e->dev[i], ooo ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0, &err);
        CHECK(e->q[i] != NULL, "queue %u: %d", i, err);
    }
    e->prog = clCreateProgramWithSource(e->ctx, 1, &src, NULL, &err);
    CHECK(e->prog != NULL, "program: %d", err);
    if (build)
        OK(clBuildProgram(e->prog, ndev, e->dev, "", NULL, NULL));
    return 0;
}

static void teardown(struct env *e)
{
    if (e->prog)
        clReleaseProgram(e->prog);
    for (cl_uint i = 0; i < e->ndev; i++)
        if (e->q[i])
            clReleaseCommandQueue(e->q[i]);
    if (e->ctx)
        clReleaseContext(e->ctx);
}

static int launch(struct env *e, cl_uint d, const char *name, cl_mem m, cl_uint arg, size_t global, cl_uint nwait,
                  const cl_event *wait, cl_event *ev)
{
    cl_int err;
    cl_kernel k = clCreateKernel(e->prog, name, &err);
    CHECK(k != NULL, "kernel %s: %d", name, err);
    OK(clSetKernelArg(k, 0, sizeof m, &m));
    OK(clSetKernelArg(k, 1, sizeof arg, &arg));
    err = clEnqueueNDRangeKernel(e->q[d], k, 1, NULL, &global, NULL, nwait, wait, ev);
    clReleaseKernel(k);
    CHECK(err == CL_SUCCESS, "%s on device %u: %d", name, d, err);
    return 0;
}

static int read_all(struct env *e, cl_uint d, cl_mem m, struct outcome *o)
{
    cl_int err;
    memset(o->data, 0xa5, sizeof o->data); /* poison */
    OK(clEnqueueReadBuffer(e->q[d], m, CL_TRUE, 0, sizeof o->data, o->data, 0, NULL, NULL));
    return 0;
}

static cl_mem input_buffer(struct env *e)
{
    static int32_t in[N];
    fill_input(in, N);
    return clCreateBuffer(e->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof in, in, NULL);
}

/* Device k of n doubles its share; then the last device adds 1 to device 0's share. `busy`:
 * the last device doubles slowly, and the others have finished when the last launch is
 * enqueued: their writes are newer than the last device's copies, which its running kernel
 * still holds. */
static int split_pattern_(struct env *e, struct outcome *o, bool busy)
{
    cl_int err;
    cl_mem m = input_buffer(e);
    CHECK(m != NULL, "buffer");
    cl_event ev[3];
    cl_uint n = e->ndev, share = N / n;
    for (cl_uint d = 0; d < n; d++) {
        cl_uint lo = d * share, hi = d + 1 == n ? N : lo + share;
        if (launch(e, d, busy && d + 1 == n ? "dbl_slow" : "dbl", m, lo, hi - lo, 0, NULL, &ev[d]))
            return -1;
    }
    for (cl_uint d = 0; d < n; d++)
        OK(busy && d + 1 < n ? clFinish(e->q[d]) : clFlush(e->q[d]));
    cl_event last;
    if (launch(e, n - 1, "inc", m, 0, share, n, ev, &last))
        return -1;
    OK(clWaitForEvents(1, &last));
    for (cl_uint d = 0; d < n; d++) {
        OK(clFinish(e->q[d]));
        clReleaseEvent(ev[d]);
    }
    clReleaseEvent(last);
    int rc = read_all(e, 0, m, o);
    clReleaseMemObject(m);
    return rc;
}

static int split_pattern(struct env *e, struct outcome *o) { return split_pattern_(e, o, false); }
static int case_issue(struct env *e, struct outcome *o) { return setup(e, 2, false, false, true) || split_pattern(e, o); }
static int case_busy(struct env *e, struct outcome *o)
{
    return setup(e, 2, false, false, true) || split_pattern_(e, o, true);
}
static int case_ooo(struct env *e, struct outcome *o) { return setup(e, 2, true, false, true) || split_pattern(e, o); }
static int case_three(struct env *e, struct outcome *o) { return setup(e, 3, false, false, true) || split_pattern(e, o); }
static int case_fromtype(struct env *e, struct outcome *o)
{
    return setup(e, 2, false, true, true) || split_pattern(e, o);
}

static int case_halves(struct env *e, struct outcome *o)
{
    cl_int err;
    if (setup(e, 2, false, false, true))
        return -1;
    cl_mem m = input_buffer(e);
    CHECK(m != NULL, "buffer");
    for (int round = 0; round < 3; round++) { /* unordered with each other, ordered by clFinish */
        for (cl_uint d = 0; d < 2; d++)
            if (launch(e, d, "interleave", m, d, N / 2, 0, NULL, NULL))
                return -1;
        OK(clFinish(e->q[0]));
        OK(clFinish(e->q[1]));
    }
    int rc = read_all(e, 1, m, o);
    clReleaseMemObject(m);
    return rc;
}

static int case_pingpong(struct env *e, struct outcome *o)
{
    cl_int err;
    if (setup(e, 2, false, false, true))
        return -1;
    cl_mem m = input_buffer(e);
    CHECK(m != NULL, "buffer");
    cl_event prev = NULL;
    for (int i = 0; i < 100; i++) {
        cl_event ev;
        if (launch(e, i % 2, i % 3 ? "inc" : "dbl", m, 0, N, prev ? 1 : 0, prev ? &prev : NULL, &ev))
            return -1;
        OK(clFlush(e->q[i % 2]));
        if (prev)
            clReleaseEvent(prev);
        prev = ev;
    }
    OK(clWaitForEvents(1, &prev));
    clReleaseEvent(prev);
    int rc = read_all(e, 0, m, o);
    clReleaseMemObject(m);
    return rc;
}

static int case_hostio(struct env *e, struct outcome *o)
{
    cl_int err;
    if (setup(e, 2, false, false, true))
        return -1;
    cl_mem m = input_buffer(e);
    CHECK(m != NULL, "buffer");
    static int32_t tmp[N];
    if (launch(e, 0, "dbl", m, 0, N, 0, NULL, NULL))
        return -1;
    OK(clFinish(e->q[0]));
    OK(clEnqueueReadBuffer(e->q[1], m, CL_TRUE, 0, sizeof tmp, tmp, 0, NULL, NULL)); /* device 0's writes */
    for (size_t i = 0; i < N; i += 7)
        tmp[i] ^= 0x5a5a;
    OK(clEnqueueWriteBuffer(e->q[1], m, CL_TRUE, 4 * 1001, 4 * (N / 2), tmp + 1001, 0, NULL, NULL));
    if (launch(e, 1, "inc", m, 0, N, 0, NULL, NULL))
        return -1;
    OK(clFinish(e->q[1]));
    int32_t *p = clEnqueueMapBuffer(e->q[0], m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 4 * 333, 4 * (N - 666), 0,
                                    NULL, NULL, &err);
    CHECK(p != NULL, "map: %d", err);
    for (size_t i = 0; i < N - 666; i += 5)
        p[i] = p[i] * 7 + 1; /* reads device 1's increments */
    OK(clEnqueueUnmapMemObject(e->q[0], m, p, 0, NULL, NULL));
    OK(clFinish(e->q[0]));
    if (launch(e, 1, "dbl", m, 0, N / 3, 0, NULL, NULL) || launch(e, 0, "inc", m, N / 3, N - N / 3, 0, NULL, NULL))
        return -1;
    OK(clFinish(e->q[0]));
    OK(clFinish(e->q[1]));
    p = clEnqueueMapBuffer(e->q[1], m, CL_TRUE, CL_MAP_READ, 0, sizeof o->data, 0, NULL, NULL, &err);
    CHECK(p != NULL, "map: %d", err);
    memset(o->data, 0xa5, sizeof o->data);
    memcpy(o->data, p, sizeof o->data);
    OK(clEnqueueUnmapMemObject(e->q[1], m, p, 0, NULL, NULL));
    OK(clFinish(e->q[1]));
    clReleaseMemObject(m);
    return 0;
}

static int case_subbuf(struct env *e, struct outcome *o)
{
    cl_int err;
    if (setup(e, 2, false, false, true))
        return -1;
    cl_mem m = input_buffer(e);
    CHECK(m != NULL, "buffer");
    cl_uint half = N / 2 / 1024 * 1024; /* 4 KiB multiple: any base alignment, no 64K page */
    cl_buffer_region r[2] = {{0, 4 * (size_t)half}, {4 * (size_t)half, 4 * (size_t)(N - half)}};
    cl_mem sub[2];
    cl_event ev[2], last;
    for (cl_uint d = 0; d < 2; d++) {
        sub[d] = clCreateSubBuffer(m, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r[d], &err);
        CHECK(sub[d] != NULL, "sub-buffer %u: %d", d, err);
        if (launch(e, d, "dbl", sub[d], 0, r[d].size / 4, 0, NULL, &ev[d]))
            return -1;
        OK(clFlush(e->q[d]));
    }
    if (launch(e, 1, "inc", m, 0, half, 2, ev, &last))
        return -1;
    OK(clWaitForEvents(1, &last));
    for (cl_uint d = 0; d < 2; d++) {
        clReleaseEvent(ev[d]);
        clReleaseMemObject(sub[d]);
    }
    clReleaseEvent(last);
    int rc = read_all(e, 0, m, o);
    clReleaseMemObject(m);
    return rc;
}

static int case_buildlist(struct env *e, struct outcome *o)
{
    cl_int err;
    if (setup(e, 2, false, false, false))
        return -1;
    OK(clBuildProgram(e->prog, 1, &e->dev[1], "", NULL, NULL));
    for (cl_uint d = 0; d < 2; d++)
        OK(clGetProgramBuildInfo(e->prog, e->dev[d], CL_PROGRAM_BUILD_STATUS, sizeof o->codes[d], &o->codes[d], NULL));
    cl_mem m = input_buffer(e);
    CHECK(m != NULL, "buffer");
    cl_kernel k = clCreateKernel(e->prog, "dbl", &err);
    CHECK(k != NULL, "kernel: %d", err);
    cl_uint off = 0;
    size_t global = N;
    OK(clSetKernelArg(k, 0, sizeof m, &m));
    OK(clSetKernelArg(k, 1, sizeof off, &off));
    /* (a launch on device 0 now would be CL_INVALID_PROGRAM_EXECUTABLE; PoCL 3.1 asserts) */
    o->codes[3] = clEnqueueNDRangeKernel(e->q[1], k, 1, NULL, &global, NULL, 0, NULL, NULL);
    OK(clFinish(e->q[1]));
    clReleaseKernel(k);
    /* PoCL lets go of a finished launch's kernel on a thread of its own, a moment after
     * clFinish: a rebuild right then finds a kernel attached, CL_INVALID_OPERATION (seen once
     * in CI on PoCL itself, under load). The kernel is released: wait for that. */
    cl_int berr;
    for (int t = 0; (berr = clBuildProgram(e->prog, 2, e->dev, "", NULL, NULL)) == CL_INVALID_OPERATION && t < 500; t++)
        usleep(1000);
    OK(berr);
    if (launch(e, 0, "inc", m, 0, N / 2, 0, NULL, NULL))
        return -1;
    OK(clFinish(e->q[0]));
    int rc = read_all(e, 1, m, o);
    clReleaseMemObject(m);
    return rc;
}

struct test_case {
    const char *name;
    int (*run)(struct env *, struct outcome *);
};
static const struct test_case cases[] = {
    {"issue", case_issue},       {"busy", case_busy},         {"ooo", case_ooo},           {"halves", case_halves},
    {"pingpong", case_pingpong}, {"hostio", case_hostio},     {"fromtype", case_fromtype},
    {"buildlist", case_buildlist}, {"subbuf", case_subbuf},     {"three", case_three},
};

/* VAST's answer on sub-devices (PoCL partitions its devices, so there is nothing to compare). */
static int check_subdevices(cl_platform_id vast)
{
    cl_int err;
    cl_device_id dev;
    OK(clGetDeviceIDs(vast, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_device_partition_property props[4] = {-1, -1, -1, -1};
    size_t size = 0;
    OK(clGetDeviceInfo(dev, CL_DEVICE_PARTITION_PROPERTIES, sizeof props, props, &size));
    CHECK(size == sizeof props[0] && props[0] == 0, "partition properties: %zu bytes, first %ld", size, (long)props[0]);
    cl_device_partition_property equally[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
    cl_device_id sub[64];
    cl_uint n = 99;
    err = clCreateSubDevices(dev, equally, 64, sub, &n);
    CHECK(err == CL_INVALID_VALUE, "clCreateSubDevices: %d, want CL_INVALID_VALUE", err);
    return 0;
}

static bool selected(const char *only, const char *name)
{
    if (only == NULL)
        return true;
    size_t n = strlen(name);
    for (const char *p = only; (p = strstr(p, name)) != NULL; p += n)
        if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return true;
    return false;
}

static int run_on(cl_platform_id p, const struct test_case *c, struct outcome *o)
{
    struct env e = {.platform = p};
    memset(o, 0, sizeof *o);
    int rc = c->run(&e, o);
    teardown(&e);
    return rc;
}

int main(int argc, char **argv)
{
    const char *only = NULL, *native = "Portable";
    bool flip = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--flip"))
            flip = true;
        else if (!strcmp(argv[i], "--native") && i + 1 < argc)
            native = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--only CASE[,CASE]] [--flip] [--native NAME]\n", argv[0]);
            return 2;
        }
    }
    cl_platform_id pocl = find_platform(native), vast = find_platform("VAST");
    if (pocl == NULL || vast == NULL) {
        fprintf(stderr, "need %s and VAST (OCL_ICD_VENDORS): %p, vast %p\n", native, (void *)pocl, (void *)vast);
        return 2;
    }
    if (selected(only, "subdevices")) {
        int bad = check_subdevices(vast) != 0;
        printf("%s subdevices\n", bad ? "FAIL" : "ok  ");
        failures += bad;
    }
    static struct outcome want, got;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (!selected(only, cases[i].name))
            continue;
        int bad = 0;
        if (run_on(pocl, &cases[i], &want)) {
            fprintf(stderr, "%s: failed on %s itself\n", cases[i].name, native);
            bad = 1;
        } else if (run_on(vast, &cases[i], &got)) {
            fprintf(stderr, "%s: failed through VAST\n", cases[i].name);
            bad = 1;
        } else {
            if (flip)
                got.data[N / 2] ^= 1;
            size_t wrong = 0, first = N;
            for (size_t k = 0; k < N; k++)
                if (got.data[k] != want.data[k]) {
                    wrong++;
                    first = first < k ? first : k;
                }
            for (size_t k = 0; k < 8; k++)
                if (got.codes[k] != want.codes[k]) {
                    fprintf(stderr, "%s: code %zu is %d through VAST, %d on %s\n", cases[i].name, k, got.codes[k],
                            want.codes[k], native);
                    bad = 1;
                }
            if (wrong) {
                fprintf(stderr, "%s: %zu of %u values differ from %s's, the first at %zu (%d, want %d)\n",
                        cases[i].name, wrong, N, native, first, got.data[first], want.data[first]);
                bad = 1;
            }
        }
        printf("%s %s\n", bad ? "FAIL" : "ok  ", cases[i].name);
        failures += bad;
    }
    return failures ? 1 : 0;
}
