/*
 * driver_costs: what the real driver charges for the calls VAST's direct launch on the
 * application's queue adds to an application's empty launch (interpose/launch.c, launch_fast):
 * an event with a completion callback, a sub-buffer of the pool's chunk per buffer argument
 * (made, set, released), and the scalar arguments set again. Each variant runs `launches`
 * empty kernels with a clFinish every 100, as overhead.c does, and prints microseconds per
 * launch, so that the part of VAST's overhead each call explains can be read off.
 * Usage: driver_costs <platform-name-substring> [scale [all]]   (all: the context holds every
 * device of the platform, as VAST's shared real context does)
 */
#define CL_TARGET_OPENCL_VERSION 300
#include "clbench.h"

#include <stdatomic.h>

static atomic_long called;

static void CL_CALLBACK done(cl_event ev, cl_int status, void *arg)
{
    (void)ev;
    (void)status;
    (void)arg;
    atomic_fetch_add(&called, 1);
}

enum { EVENT = 1, CALLBACK = 2, SUBBUF = 4, SCALAR = 8, BUFARG = 16, POLL = 32, KEEP = 64, BIG = 128, ONEVIEW = 256 };

static const struct {
    const char *name;
    int what;
} variants[] = {
    {"enqueue", 0},
    {"+ clSetKernelArg(buffer)", BUFARG},
    {"+ clSetKernelArg(int)", SCALAR},
    {"+ event, released", EVENT},
    {"+ event + callback", EVENT | CALLBACK},
    {"+ event, the previous one's status queried", EVENT | POLL},
    {"+ sub-buffer made, set, released", SUBBUF},
    {"+ event, kept until the clFinish", EVENT | KEEP},
    {"+ one sub-buffer of a 4 GiB buffer, set each time", ONEVIEW | BIG},
    {"+ sub-buffers of a 4 GiB buffer made, set, released", SUBBUF | BIG},
    {"+ all of the above but the callback", EVENT | POLL | SUBBUF | SCALAR},
    {"as VAST: one sub-buffer of a 4 GiB buffer, events kept", ONEVIEW | BIG | EVENT | KEEP},
    {"+ all of the above", EVENT | CALLBACK | SUBBUF | SCALAR},
};

int main(int argc, char **argv)
{
    const char *want = argc > 1 ? argv[1] : "Portable";
    long scale = argc > 2 ? atol(argv[2]) : 1;
    struct empty_bench e = empty_bench_open(want, argc > 3 && strcmp(argv[3], "all") == 0);
    cl_device_id d = e.d;
    cl_context ctx = e.ctx;
    cl_command_queue q = e.q;
    cl_kernel k = e.k;
    cl_int err;
    cl_uint align_bits = 0;
    CHECK(clGetDeviceInfo(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL));
    size_t align = align_bits / 8 ? align_bits / 8 : 4096;
    cl_mem chunk = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 * align, NULL, &err);
    CHECK(err);
    cl_mem big = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)4 << 30, NULL, &err);
    CHECK(err);
    cl_buffer_region one = {(size_t)1 << 30, 4096};
    cl_mem oneview = clCreateSubBuffer(big, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &one, &err);
    CHECK(err);
    cl_event kept[100];
    int b = 1;
    CHECK(clSetKernelArg(k, 0, sizeof chunk, &chunk));
    CHECK(clSetKernelArg(k, 1, sizeof b, &b));
    long launches = 20000 * scale;
    size_t global = 1;
    printf("| per launch | us |\n|---|---|\n");
    for (int rep = 0; rep < 2; rep++) /* the first round warms up */
        for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
            int w = variants[v].what;
            CHECK(clFinish(q));
            cl_event prev = NULL;
            double t0 = now();
            for (long i = 0; i < launches; i++) {
                cl_mem view = NULL;
                if (w & ONEVIEW)
                    CHECK(clSetKernelArg(k, 0, sizeof oneview, &oneview));
                if (w & SUBBUF) {
                    cl_buffer_region r = {(size_t)(i % 8) * align + (w & BIG ? (size_t)1 << 30 : 0), align};
                    view = clCreateSubBuffer(w & BIG ? big : chunk, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r,
                                             &err);
                    CHECK(err);
                    CHECK(clSetKernelArg(k, 0, sizeof view, &view));
                }
                if (w & BUFARG)
                    CHECK(clSetKernelArg(k, 0, sizeof chunk, &chunk));
                if (w & SCALAR)
                    CHECK(clSetKernelArg(k, 1, sizeof b, &b));
                cl_event ev = NULL;
                CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, w & EVENT ? &ev : NULL));
                if (w & CALLBACK)
                    CHECK(clSetEventCallback(ev, CL_COMPLETE, done, NULL));
                if (w & POLL) { /* as VAST's reaping: the oldest kernel's status, then it goes */
                    cl_int st;
                    if (prev != NULL) {
                        CHECK(clGetEventInfo(prev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
                        CHECK(clReleaseEvent(prev));
                    }
                    prev = ev;
                    ev = NULL;
                }
                if (w & KEEP) {
                    kept[i % 100] = ev;
                    ev = NULL;
                }
                if (ev != NULL)
                    CHECK(clReleaseEvent(ev));
                if (view != NULL)
                    CHECK(clReleaseMemObject(view));
                if (i % 100 == 99) {
                    CHECK(clFinish(q));
                    for (int j = 0; j < 100 && (w & KEEP); j++)
                        CHECK(clReleaseEvent(kept[j]));
                }
            }
            CHECK(clFinish(q));
            CHECK(clSetKernelArg(k, 0, sizeof chunk, &chunk));
            if (prev != NULL)
                CHECK(clReleaseEvent(prev));
            double us = (now() - t0) / launches * 1e6;
            if (rep == 1)
                printf("| %s | %.2f |\n", variants[v].name, us);
        }
    clReleaseMemObject(oneview);
    clReleaseMemObject(big);
    clReleaseMemObject(chunk);
    empty_bench_close(&e);
    return 0;
}
