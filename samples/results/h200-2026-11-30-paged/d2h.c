/* d2h: what one 2 MiB device-to-host read costs on the real driver, the ways the page cache
 * issues it (its write-back of a dirty page run before a host read: a second in-order queue,
 * the event waited for with clWaitForEvents), against a blocking read. Cases: the device
 * buffer small (64 MiB) or as large as a pool chunk; the host memory pinned (a live
 * CL_MEM_USE_HOST_PTR buffer over it, as VAST pins stores) or not; the read right after a
 * kernel wrote the buffer on the other queue, or not. Prints the median and minimum of 30.
 * Build: cc -O2 d2h.c -l:libOpenCL.so.1 -o d2h; run: ./d2h NVIDIA [big_bytes] */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>

#define CHECK(c) do { cl_int e_ = (c); if (e_ != CL_SUCCESS) { fprintf(stderr, "%s = %d\n", #c, e_); exit(2); } } while (0)
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec * 1e-3; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

static cl_context ctx; static cl_command_queue q1, q2; static cl_kernel k;
enum { BLOCKING, EVENT_WAIT, FINISH, POLL };
static const char *wname[] = {"blocking read", "event + clWaitForEvents", "clFlush + clFinish", "event, status polled"};

static double one(cl_mem buf, size_t off, void *host, size_t bytes, int how, int after_kernel)
{
    if (after_kernel) {
        cl_uint o = (cl_uint)(off / 4);
        CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
        CHECK(clSetKernelArg(k, 1, sizeof o, &o));
        size_t g = 256;
        CHECK(clEnqueueNDRangeKernel(q1, k, 1, NULL, &g, NULL, 0, NULL, NULL));
        CHECK(clFinish(q1));
    }
    double t0 = now();
    cl_event ev = NULL;
    if (how == BLOCKING) {
        CHECK(clEnqueueReadBuffer(q2, buf, CL_TRUE, off, bytes, host, 0, NULL, NULL));
    } else {
        CHECK(clEnqueueReadBuffer(q2, buf, CL_FALSE, off, bytes, host, 0, NULL, &ev));
        if (how == EVENT_WAIT) { CHECK(clFlush(q2)); CHECK(clWaitForEvents(1, &ev)); }
        else if (how == FINISH) { CHECK(clFlush(q2)); CHECK(clFinish(q2)); }
        else { CHECK(clFlush(q2)); cl_int st = 1; while (st > 0) CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL)); }
        CHECK(clReleaseEvent(ev));
    }
    return now() - t0;
}

int main(int argc, char **argv)
{
    const char *want = argc > 1 ? argv[1] : "NVIDIA";
    size_t big = argc > 2 ? strtoull(argv[2], NULL, 0) : ((size_t)32 << 30);
    cl_platform_id ps[8]; cl_uint np = 0, i;
    CHECK(clGetPlatformIDs(8, ps, &np));
    for (i = 0; i < np; i++) { char n[256]; CHECK(clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof n, n, NULL)); if (strcasestr(n, want)) break; }
    if (i == np) return 2;
    cl_device_id d; CHECK(clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_int err; ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err); CHECK(err);
    q1 = clCreateCommandQueue(ctx, d, 0, &err); CHECK(err);
    q2 = clCreateCommandQueue(ctx, d, 0, &err); CHECK(err);
    const char *src = "__kernel void w(__global uint *a, uint o) { a[o + get_global_id(0)] = get_global_id(0); }";
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err); CHECK(err);
    CHECK(clBuildProgram(p, 1, &d, "", NULL, NULL));
    k = clCreateKernel(p, "w", &err); CHECK(err);
    size_t bytes = 2 << 20, hostb = 64 << 20;
    char *host = mmap(NULL, hostb, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(host, 1, hostb);
    size_t sizes[2] = {(size_t)64 << 20, big};
    for (int s = 0; s < 2; s++) {
        double t0 = now();
        cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizes[s], NULL, &err); CHECK(err);
        char z = 0;
        CHECK(clEnqueueWriteBuffer(q1, buf, CL_TRUE, sizes[s] / 2, 1, &z, 0, NULL, NULL));
        printf("device buffer %zu MiB: made and first written in %.0f us\n", sizes[s] >> 20, now() - t0);
        for (int pinned = 0; pinned < 2; pinned++) {
            cl_mem pin = NULL;
            if (pinned) { pin = clCreateBuffer(ctx, CL_MEM_USE_HOST_PTR, hostb, host, &err); CHECK(err); }
            for (int ak = 0; ak < 2; ak++)
                for (int how = 0; how < 4; how++) {
                    double t[30];
                    one(buf, 0, host, bytes, how, ak); /* warm-up */
                    for (int r = 0; r < 30; r++)
                        t[r] = one(buf, (size_t)(r % 8) * bytes, host + (size_t)(r % 8) * bytes, bytes, how, ak);
                    qsort(t, 30, sizeof *t, cmp);
                    printf("  %-9s %s host, %-14s %-26s median %7.1f us  min %7.1f us\n", s ? "big" : "64 MiB",
                           pinned ? "pinned" : "pageable", ak ? "after a kernel" : "", wname[how], t[15], t[0]);
                }
            if (pin) CHECK(clReleaseMemObject(pin));
        }
        CHECK(clReleaseMemObject(buf));
    }
    return 0;
}
