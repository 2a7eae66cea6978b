/* pagecache_bench.c: host <-> virtual-buffer throughput through the page cache against the
 * device's own raw transfer rate (pinned and pageable), and transfers per MiB moved.
 * Usage: pagecache_bench [--platform NAME] [--device NAME] [--budget MiB] [--page KiB]
 *                        [--size MiB] [--chunk MiB] [--no-pin] [--reps N]
 * NAME matches a substring of CL_PLATFORM_NAME / CL_DEVICE_NAME (e.g. "NVIDIA", "H100").
 * Not a test: prints a table. Built by tests/e2e/pagecache/CMakeLists.txt. */
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devops_opencl.h"
#include "pagecache.h"

struct opts {
    const char *platform, *device;
    size_t budget, page, size, chunk;
    int no_pin, reps;
};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int pick_device(const struct opts *o, cl_device_id *out)
{
    cl_platform_id plats[16];
    cl_uint np = 0;
    clGetPlatformIDs(16, plats, &np);
    for (cl_uint p = 0; p < np; p++) {
        char name[256] = "";
        clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (o->platform && !strstr(name, o->platform))
            continue;
        cl_device_id devs[16];
        cl_uint nd = 0;
        clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd);
        for (cl_uint d = 0; d < nd; d++) {
            char dname[256] = "";
            clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof dname, dname, NULL);
            if (o->device && !strstr(dname, o->device))
                continue;
            printf("platform: %s\ndevice:   %s\n", name, dname);
            *out = devs[d];
            return 0;
        }
    }
    return -1;
}

static void row(const char *what, double mib, double sec, double transfers)
{
    printf("%-34s %9.0f %8.3f %8.2f %10.0f %8.3f\n", what, mib, sec, mib / 1024.0 * 1.073741824 / sec,
           transfers, transfers / mib);
}

/* The device's own rate: whole-buffer writes/reads from host memory, optionally pinned
 * by a live USE_HOST_PTR wrapper (as the pool pins its backing stores). */
static void raw_rate(cl_context ctx, cl_command_queue q, size_t bytes, int pinned, int reps)
{
    cl_int err;
    char *host = aligned_alloc(4096, bytes);
    memset(host, 1, bytes);
    cl_mem wrap = pinned ? clCreateBuffer(ctx, CL_MEM_USE_HOST_PTR, bytes, host, &err) : NULL;
    cl_mem d = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    clEnqueueWriteBuffer(q, d, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
    double t = now();
    for (int r = 0; r < reps; r++)
        clEnqueueWriteBuffer(q, d, CL_FALSE, 0, bytes, host, 0, NULL, NULL);
    clFinish(q);
    double tw = now() - t;
    t = now();
    for (int r = 0; r < reps; r++)
        clEnqueueReadBuffer(q, d, CL_FALSE, 0, bytes, host, 0, NULL, NULL);
    clFinish(q);
    double tr = now() - t;
    double mib = (double)bytes * reps / 1048576.0;
    row(pinned ? "raw h2d, pinned (USE_HOST_PTR)" : "raw h2d, pageable", mib, tw, reps);
    row(pinned ? "raw d2h, pinned (USE_HOST_PTR)" : "raw d2h, pageable", mib, tr, reps);
    clReleaseMemObject(d);
    if (wrap)
        clReleaseMemObject(wrap);
    free(host);
}

static uint64_t transfers(struct vast_pool *pool, int h2d)
{
    struct vast_pool_stats s;
    pagecache_get_pool_stats(pool, &s);
    return h2d ? s.h2d_transfers : s.d2h_transfers;
}

/* Stream the whole buffer through the pool in windows of half the pool. */
static double stream(struct vast_pc_buffer *buf, size_t npages, size_t window, int dirty)
{
    double t = now();
    for (size_t p = 0; p < npages; p += window) {
        size_t n = npages - p < window ? npages - p : window;
        if (pagecache_make_resident(buf, p, n, VAST_PC_PIN, NULL) != 0) {
            fprintf(stderr, "make_resident failed\n");
            exit(1);
        }
        if (dirty)
            pagecache_mark_dirty(buf, p, n);
        pagecache_unpin_range(buf, p, n);
    }
    if (dirty)
        pagecache_flush_range(buf, 0, pagecache_buffer_size(buf));
    return now() - t;
}

static void pool_rates(cl_context ctx, cl_command_queue q, const struct opts *o)
{
    void *dev;
    struct vast_pool *pool;
    if (pagecache_create_devops_opencl(ctx, q, o->no_pin ? VAST_DEVOPS_CL_NO_PIN : 0, &dev) ||
        pagecache_create_pool(&vast_devops_opencl, dev, o->budget, o->page, o->chunk, &pool)) {
        fprintf(stderr, "pool creation failed\n");
        exit(1);
    }
    struct vast_backing *store;
    struct vast_pc_buffer *buf;
    if (pagecache_create_backing(o->size, 0, &store) || pagecache_create_buffer(pool, store, &buf)) {
        fprintf(stderr, "virtual buffer of %zu MiB failed\n", o->size >> 20);
        exit(1);
    }
    memset(pagecache_backing_base(store), 3, o->size); /* commit host pages outside timing */
    size_t npages = (o->size + o->page - 1) / o->page, window = pool->nframes / 2;
    double mib = (double)o->size / 1048576.0;
    /* warm-up: pins the backing store's granules (41-47 ms/GiB on NVIDIA) */
    double tpin = stream(buf, npages, window, 0);
    row("pool h2d, first pass (pins store)", mib, tpin, (double)transfers(pool, 1));
    for (int r = 0; r < o->reps; r++) {
        uint64_t h0 = transfers(pool, 1);
        double t = stream(buf, npages, window, 0);
        row("pool h2d, streaming clean", mib, t, (double)(transfers(pool, 1) - h0));
    }
    for (int r = 0; r < o->reps; r++) {
        uint64_t h0 = transfers(pool, 1), d0 = transfers(pool, 0);
        double t = stream(buf, npages, window, 1);
        row("pool h2d+d2h, streaming dirty", 2 * mib, t,
            (double)(transfers(pool, 1) - h0 + transfers(pool, 0) - d0));
    }
    /* d2h alone: the resident set made dirty, then flushed */
    size_t res = window * 2 < npages ? window * 2 : npages;
    pagecache_make_resident(buf, 0, res, VAST_PC_PIN, NULL);
    pagecache_mark_dirty(buf, 0, res);
    uint64_t d0 = transfers(pool, 0);
    double t = now();
    pagecache_flush_range(buf, 0, res * o->page);
    row("pool d2h, flush of resident set", (double)(res * o->page) / 1048576.0, now() - t,
        (double)(transfers(pool, 0) - d0));
    pagecache_unpin_range(buf, 0, res);
    pagecache_release_buffer(buf);
    pagecache_destroy_backing(store);
    pagecache_destroy_pool(pool);
    pagecache_destroy_devops_opencl(dev);
}

static size_t arg_size(const char *s, size_t unit) { return (size_t)strtoull(s, NULL, 0) * unit; }

int main(int argc, char **argv)
{
    struct opts o = {NULL, NULL, (size_t)256 << 20, (size_t)1 << 20, (size_t)1 << 30,
                     (size_t)1 << 30, 0, 3};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "0";
        if (!strcmp(a, "--platform")) o.platform = v, i++;
        else if (!strcmp(a, "--device")) o.device = v, i++;
        else if (!strcmp(a, "--budget")) o.budget = arg_size(v, 1 << 20), i++;
        else if (!strcmp(a, "--page")) o.page = arg_size(v, 1 << 10), i++;
        else if (!strcmp(a, "--size")) o.size = arg_size(v, 1 << 20), i++;
        else if (!strcmp(a, "--chunk")) o.chunk = arg_size(v, 1 << 20), i++;
        else if (!strcmp(a, "--reps")) o.reps = atoi(v), i++;
        else if (!strcmp(a, "--no-pin")) o.no_pin = 1;
        else {
            fprintf(stderr, "usage: %s [--platform NAME] [--device NAME] [--budget MiB] "
                            "[--page KiB] [--size MiB] [--chunk MiB] [--no-pin] [--reps N]\n", argv[0]);
            return 2;
        }
    }
    cl_device_id dev;
    if (pick_device(&o, &dev)) {
        fprintf(stderr, "no device matches\n");
        return 1;
    }
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    printf("budget %zu MiB, page %zu KiB, virtual buffer %zu MiB, chunk <= %zu MiB, %s\n\n",
           o.budget >> 20, o.page >> 10, o.size >> 20, o.chunk >> 20,
           o.no_pin ? "store not pinned" : "store pinned (USE_HOST_PTR wrappers)");
    printf("%-34s %9s %8s %8s %10s %8s\n", "path", "MiB", "s", "GB/s", "transfers", "per MiB");
    size_t raw = o.budget < o.size ? o.budget : o.size;
    raw_rate(ctx, q, raw, 1, o.reps * 4);
    raw_rate(ctx, q, raw, 0, o.reps * 4);
    pool_rates(ctx, q, &o);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
