/* pagecache_bench.c: host <-> virtual-buffer throughput through the page cache, in one table:
 * the device's own raw rate (pinned and pageable), then a virtual buffer (1 GiB by default)
 * streamed through the pool with its store pinned, staged through pinned slots with 1, 2, 4
 * and N (online cores) copy threads, and pageable directly; transfers per MiB count what the
 * device saw (a staged transfer counts its slot transfers). Duplex: the raw rate of both
 * directions at once on two queues, and dirty streaming through a pinned store (each window
 * evicts a dirty one: write-back + load, MiB counts both directions) with the pool simplex
 * (write-backs, wait, loads) and duplex (write-backs on the second queue beside the loads;
 * pagecache/README.md "Duplex transfers").
 * Usage: pagecache_bench [--platform NAME] [--device NAME] [--budget MiB] [--page KiB]
 *                        [--size MiB] [--chunk MiB] [--slot KiB] [--threads 1,2,4,N] [--reps N]
 * NAME matches a substring of CL_PLATFORM_NAME / CL_DEVICE_NAME (e.g. "NVIDIA", "H100").
 * Not a test: prints a table. Built by tests/bench/CMakeLists.txt. */
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "devops_opencl.h"
#include "pagecache.h"

struct opts {
    const char *platform, *device, *threads;
    size_t budget, page, size, chunk, slot;
    int reps;
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

/* Both directions at once: writes on q, reads on a second queue of the same device, each
 * its own pinned buffer (FACTS.md: 88.5 GB/s in all on the H200). */
static void raw_duplex_rate(cl_context ctx, cl_command_queue q, size_t bytes, int reps)
{
    cl_int err;
    cl_device_id dev;
    clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL);
    cl_command_queue q2 = clCreateCommandQueue(ctx, dev, 0, &err);
    char *a = aligned_alloc(4096, bytes), *b = aligned_alloc(4096, bytes);
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    cl_mem wa = clCreateBuffer(ctx, CL_MEM_USE_HOST_PTR, bytes, a, &err);
    cl_mem wb = clCreateBuffer(ctx, CL_MEM_USE_HOST_PTR, bytes, b, &err);
    cl_mem da = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    cl_mem db = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    clEnqueueWriteBuffer(q, db, CL_TRUE, 0, bytes, b, 0, NULL, NULL);
    double t = now();
    for (int r = 0; r < reps; r++) {
        clEnqueueWriteBuffer(q, da, CL_FALSE, 0, bytes, a, 0, NULL, NULL);
        clEnqueueReadBuffer(q2, db, CL_FALSE, 0, bytes, b, 0, NULL, NULL);
    }
    clFlush(q);
    clFlush(q2);
    clFinish(q);
    clFinish(q2);
    row("raw h2d+d2h, two queues, pinned", 2.0 * bytes * reps / 1048576.0, now() - t, 2.0 * reps);
    clReleaseMemObject(da);
    clReleaseMemObject(db);
    clReleaseMemObject(wa);
    clReleaseMemObject(wb);
    clReleaseCommandQueue(q2);
    free(a);
    free(b);
}

/* How a virtual buffer's store meets the device: pinned (USE_HOST_PTR wrappers), staged
 * through the ring of pinned slots with `threads` copy threads, or pageable directly. */
enum store_path { PINNED, STAGED, PAGEABLE };
struct mode {
    enum store_path path;
    unsigned threads;
};

struct run {
    void *dev;
    struct vast_pool *pool;
    struct vast_backing *store;
    struct vast_pc_buffer *buf;
    size_t npages, window, page;
};

/* Transfers the device really saw so far in one direction: the pool's, where each staged
 * one counts as its slot transfers (staging is one direction at a time in this program). */
static uint64_t device_transfers(struct run *r, int h2d)
{
    struct vast_pool_stats s;
    pagecache_get_pool_stats(r->pool, &s);
    uint64_t n = h2d ? s.h2d_transfers : s.d2h_transfers;
    struct vast_staging_stats st;
    if (pagecache_devops_opencl_staging_stats(r->dev, &st) == 0)
        n = n - st.transfers + st.slot_transfers;
    return n;
}

static void run_open(cl_context ctx, cl_command_queue q, const struct opts *o,
                     const struct mode *m, struct run *r)
{
    unsigned flags = m->path == PINNED ? 0 : VAST_DEVOPS_CL_NO_PIN;
    if (m->path == PAGEABLE)
        flags |= VAST_DEVOPS_CL_NO_STAGING;
    struct vast_staging_config sc = {.slot_bytes = o->slot, .threads = m->threads};
    if (pagecache_create_devops_opencl_staged(ctx, q, flags, &sc, &r->dev) ||
        pagecache_create_pool(&vast_devops_opencl, r->dev, o->budget, o->page, o->chunk,
                              &r->pool)) {
        fprintf(stderr, "pool creation failed\n");
        exit(1);
    }
    if (pagecache_create_backing(o->size, 0, &r->store) ||
        pagecache_create_buffer(r->pool, r->store, &r->buf)) {
        fprintf(stderr, "virtual buffer of %zu MiB failed\n", o->size >> 20);
        exit(1);
    }
    memset(pagecache_backing_base(r->store), 3, o->size); /* commit host pages outside timing */
    r->page = o->page;
    r->npages = (o->size + o->page - 1) / o->page;
    r->window = r->pool->nframes / 2;
}

static void run_close(struct run *r)
{
    pagecache_release_buffer(r->buf);
    pagecache_destroy_backing(r->store);
    pagecache_destroy_pool(r->pool);
    pagecache_destroy_devops_opencl(r->dev);
}

/* h2d: stream the whole buffer through the pool, windows of half the pool, clean pages. */
static double stream_h2d(struct run *r)
{
    double t = now();
    for (size_t p = 0; p < r->npages; p += r->window) {
        size_t n = r->npages - p < r->window ? r->npages - p : r->window;
        if (pagecache_make_resident(r->buf, p, n, 0, NULL) != 0) {
            fprintf(stderr, "make_resident failed\n");
            exit(1);
        }
    }
    return now() - t;
}

/* d2h: window by window, pages made resident and dirty (not timed), then flushed (timed). */
static double stream_d2h(struct run *r, uint64_t *xfers)
{
    double total = 0;
    *xfers = 0;
    for (size_t p = 0; p < r->npages; p += r->window) {
        size_t n = r->npages - p < r->window ? r->npages - p : r->window;
        if (pagecache_make_resident(r->buf, p, n, VAST_PC_PIN, NULL) != 0) {
            fprintf(stderr, "make_resident failed\n");
            exit(1);
        }
        pagecache_mark_dirty(r->buf, p, n);
        pagecache_unpin_range(r->buf, p, n);
        uint64_t d0 = device_transfers(r, 0);
        double t = now();
        size_t off = p * r->page, len = n * r->page;
        if (off + len > pagecache_buffer_size(r->buf))
            len = pagecache_buffer_size(r->buf) - off;
        if (pagecache_flush_range(r->buf, off, len) != 0) {
            fprintf(stderr, "flush failed\n");
            exit(1);
        }
        total += now() - t;
        *xfers += device_transfers(r, 0) - d0;
    }
    return total;
}

/* Dirty streaming: window after window made resident (timed: each evicts an earlier, dirty
 * window, written back and loaded) and marked dirty (as saxpy's y). *mib: both directions. */
static double stream_evict(struct run *r, double *mib, uint64_t *xfers)
{
    struct vast_pool_stats a, b;
    pagecache_get_pool_stats(r->pool, &a);
    uint64_t x0 = device_transfers(r, 0) + device_transfers(r, 1);
    double total = 0;
    for (size_t p = 0; p < r->npages; p += r->window) {
        size_t n = r->npages - p < r->window ? r->npages - p : r->window;
        double t = now();
        if (pagecache_make_resident(r->buf, p, n, VAST_PC_PIN, NULL) != 0) {
            fprintf(stderr, "make_resident failed\n");
            exit(1);
        }
        total += now() - t;
        pagecache_mark_dirty(r->buf, p, n);
        pagecache_unpin_range(r->buf, p, n);
    }
    pagecache_get_pool_stats(r->pool, &b);
    *mib = (double)(b.h2d_bytes - a.h2d_bytes + b.d2h_bytes - a.d2h_bytes) / 1048576.0;
    *xfers = device_transfers(r, 0) + device_transfers(r, 1) - x0;
    return total;
}

/* Dirty streaming, simplex then duplex, the best of o->reps passes each (pinned store). */
static void evict_rates(struct run *r, const struct opts *o)
{
    for (int duplex = 0; duplex < 2; duplex++) {
        pagecache_configure_duplex(r->pool, duplex ? VAST_DUPLEX_DEFAULT_WINDOW : 0);
        double best = 1e30, best_mib = 0, mib;
        uint64_t best_x = 0, x;
        stream_evict(r, &mib, &x); /* every page dirty and evicted once before timing */
        for (int rep = 0; rep < o->reps; rep++) {
            double t = stream_evict(r, &mib, &x);
            if (t < best)
                best = t, best_mib = mib, best_x = x;
        }
        row(duplex ? "pool evict+load, duplex" : "pool evict+load, simplex", best_mib, best,
            (double)best_x);
    }
    pagecache_configure_duplex(r->pool, VAST_DUPLEX_DEFAULT_WINDOW);
}

/* Two rows per mode, the best of o->reps passes each (a first pass, not timed, pins the
 * store or makes the staging ring). */
static void mode_rates(cl_context ctx, cl_command_queue q, const struct opts *o,
                       const struct mode *m)
{
    struct run r;
    run_open(ctx, q, o, m, &r);
    char what[2][64];
    for (int h2d = 0; h2d < 2; h2d++) {
        const char *dir = h2d ? "h2d" : "d2h";
        if (m->path == PINNED)
            snprintf(what[h2d], sizeof what[h2d], "pool %s, pinned store", dir);
        else if (m->path == STAGED)
            snprintf(what[h2d], sizeof what[h2d], "pool %s, staged, %u thread%s", dir,
                     m->threads, m->threads > 1 ? "s" : "");
        else
            snprintf(what[h2d], sizeof what[h2d], "pool %s, pageable direct", dir);
    }
    double mib = (double)o->size / 1048576.0;
    double t0 = stream_h2d(&r);
    if (m->path == PINNED)
        row("pool h2d, first pass (pins store)", mib, t0, (double)device_transfers(&r, 1));
    double best_h = 1e30, best_d = 1e30;
    uint64_t xh = 0, xd = 0;
    for (int rep = 0; rep < o->reps; rep++) {
        uint64_t h0 = device_transfers(&r, 1), x;
        double t = stream_h2d(&r);
        if (t < best_h)
            best_h = t, xh = device_transfers(&r, 1) - h0;
        t = stream_d2h(&r, &x);
        if (t < best_d)
            best_d = t, xd = x;
    }
    row(what[1], mib, best_h, (double)xh);
    row(what[0], mib, best_d, (double)xd);
    if (m->path == PINNED)
        evict_rates(&r, o);
    run_close(&r);
}

/* Thread counts to stage with: "1,2,4" and the number of online cores. */
static size_t thread_list(const char *text, unsigned *out, size_t cap)
{
    size_t n = 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *tok = strtok(buf, ","); tok && n < cap; tok = strtok(NULL, ","))
        if (atoi(tok) > 0)
            out[n++] = (unsigned)atoi(tok);
    return n;
}

static size_t arg_size(const char *s, size_t unit) { return (size_t)strtoull(s, NULL, 0) * unit; }

int main(int argc, char **argv)
{
    char cores[64];
    snprintf(cores, sizeof cores, "1,2,4,%ld", sysconf(_SC_NPROCESSORS_ONLN));
    struct opts o = {NULL, NULL, cores, (size_t)256 << 20, (size_t)1 << 20, (size_t)1 << 30,
                     (size_t)1 << 30, 0, 3};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "0";
        if (!strcmp(a, "--platform")) o.platform = v, i++;
        else if (!strcmp(a, "--device")) o.device = v, i++;
        else if (!strcmp(a, "--budget")) o.budget = arg_size(v, 1 << 20), i++;
        else if (!strcmp(a, "--page")) o.page = arg_size(v, 1 << 10), i++;
        else if (!strcmp(a, "--size")) o.size = arg_size(v, 1 << 20), i++;
        else if (!strcmp(a, "--chunk")) o.chunk = arg_size(v, 1 << 20), i++;
        else if (!strcmp(a, "--slot")) o.slot = arg_size(v, 1 << 10), i++;
        else if (!strcmp(a, "--threads")) o.threads = v, i++;
        else if (!strcmp(a, "--reps")) o.reps = atoi(v), i++;
        else {
            fprintf(stderr, "usage: %s [--platform NAME] [--device NAME] [--budget MiB] "
                            "[--page KiB] [--size MiB] [--chunk MiB] [--slot KiB] "
                            "[--threads 1,2,4,N] [--reps N]\n", argv[0]);
            return 2;
        }
    }
    if (o.reps < 1)
        o.reps = 1;
    cl_device_id dev;
    if (pick_device(&o, &dev)) {
        fprintf(stderr, "no device matches\n");
        return 1;
    }
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    printf("budget %zu MiB, page %zu KiB, virtual buffer %zu MiB, chunk <= %zu MiB, "
           "staging slot %zu KiB x %u, best of %d\n\n", o.budget >> 20, o.page >> 10,
           o.size >> 20, o.chunk >> 20, (o.slot ? o.slot : VAST_STAGING_DEFAULT_SLOT) >> 10,
           VAST_STAGING_DEFAULT_SLOTS, o.reps);
    printf("%-34s %9s %8s %8s %10s %8s\n", "path", "MiB", "s", "GB/s", "transfers", "per MiB");
    size_t raw = o.budget < o.size ? o.budget : o.size;
    raw_rate(ctx, q, raw, 1, o.reps * 4);
    raw_rate(ctx, q, raw, 0, o.reps * 4);
    raw_duplex_rate(ctx, q, raw, o.reps * 4);
    mode_rates(ctx, q, &o, &(struct mode){PINNED, 0});
    unsigned threads[16];
    size_t nt = thread_list(o.threads, threads, 16);
    for (size_t i = 0; i < nt; i++) {
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            seen |= threads[j] == threads[i];
        if (!seen)
            mode_rates(ctx, q, &o, &(struct mode){STAGED, threads[i]});
    }
    mode_rates(ctx, q, &o, &(struct mode){PAGEABLE, 0});
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
