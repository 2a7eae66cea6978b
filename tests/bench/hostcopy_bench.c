/* hostcopy_bench.c: the host side of clEnqueueWriteBuffer / clEnqueueReadBuffer on a virtual
 * buffer, without a device: pagecache_write of SIZE bytes from malloc'ed memory into a fresh
 * backing store (first time: the store's pages are faulted in), again (second time), then
 * pagecache_read into fresh malloc'ed memory (first: the application's pages are faulted in)
 * and again. Rows: 1 copy thread or the host copy pool (hostcopy.h), over a store mapped the
 * old way (plain mmap, 4 KiB faults) or as pagecache_create_backing maps it now (THP-aligned,
 * MADV_HUGEPAGE). Each cell is the best of --reps runs, each on fresh memory; "THP MiB" is the
 * store's AnonHugePages after the first write (/proc/self/smaps).
 * Usage: hostcopy_bench [--size MiB] [--threads N] [--reps N]    (defaults 1024, min(16,cores), 3)
 * Not a test: prints a table. Needs no OpenCL (a host-memory stand-in device, nothing resident). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "pagecache.h"
#include "staging.h"

/* ---- a device that holds nothing: the buffer stays wholly on the host ---- */
static int d_alloc(void *dev, size_t bytes, vast_dev_chunk *out)
{
    (void)dev;
    *out = malloc(bytes);
    return *out ? 0 : VAST_PC_ERR_DEVICE_MEMORY;
}
static void d_free(void *dev, vast_dev_chunk c) { (void)dev; free(c); }
static int d_write(void *dev, vast_dev_chunk dst, size_t off, const void *h, size_t n, vast_host_pin p)
{
    (void)dev, (void)p;
    memcpy((char *)dst + off, h, n);
    return 0;
}
static int d_read(void *dev, vast_dev_chunk src, size_t off, void *h, size_t n, vast_host_pin p)
{
    (void)dev, (void)p;
    memcpy(h, (char *)src + off, n);
    return 0;
}
static int d_wait(void *dev) { (void)dev; return 0; }
static const struct vast_device_ops host_ops = {
    .name = "host", .alloc_chunk = d_alloc, .free_chunk = d_free, .write = d_write,
    .read = d_read, .wait = d_wait};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* AnonHugePages (KiB) of the mapping that contains p. */
static long thp_kib(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    int in = 0;
    long kib = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        else if (in && sscanf(line, "AnonHugePages: %ld kB", &kib) == 1)
            break;
    }
    fclose(f);
    return kib;
}

struct result {
    double w1, w2, r1, r2;
    long thp;
};

static void one_run(size_t size, int huge, const unsigned char *src, struct result *r)
{
    struct vast_pool *pool;
    struct vast_backing *store;
    struct vast_pc_buffer *buf;
    void *plain = NULL;
    if (pagecache_create_pool(&host_ops, NULL, 16 << 16, 1 << 16, 16 << 16, &pool)) {
        fprintf(stderr, "pool failed\n");
        exit(1);
    }
    if (huge) {
        if (pagecache_create_backing(size, 0, &store))
            exit(1);
    } else { /* the store as VAST mapped it before: plain lazily committed mmap */
        plain = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (plain == MAP_FAILED || pagecache_wrap_backing(plain, size, &store))
            exit(1);
    }
    if (pagecache_create_buffer(pool, store, &buf))
        exit(1);
    unsigned char *dst = malloc(size); /* untouched: first read faults it in */
    double t = now();
    int rc = pagecache_write(buf, 0, size, src);
    r->w1 = now() - t;
    r->thp = thp_kib(pagecache_buffer_host(buf)) / 1024;
    t = now();
    rc |= pagecache_write(buf, 0, size, src);
    r->w2 = now() - t;
    t = now();
    rc |= pagecache_read(buf, 0, size, dst);
    r->r1 = now() - t;
    t = now();
    rc |= pagecache_read(buf, 0, size, dst);
    r->r2 = now() - t;
    if (rc || memcmp(dst, src, size)) {
        fprintf(stderr, "wrong bytes\n");
        exit(1);
    }
    free(dst);
    pagecache_release_buffer(buf);
    pagecache_destroy_backing(store);
    if (plain)
        munmap(plain, size);
    pagecache_destroy_pool(pool);
}

static double best(double a, double b) { return a < b ? a : b; }

int main(int argc, char **argv)
{
    size_t mib = 1024;
    unsigned threads = pagecache_staging_default_threads();
    int reps = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--size"))
            mib = strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--threads"))
            threads = (unsigned)strtoul(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--reps"))
            reps = atoi(argv[i + 1]);
    }
    size_t size = mib << 20;
    unsigned char *src = malloc(size);
    for (size_t i = 0; i < size; i++)
        src[i] = (unsigned char)(i * 131 + (i >> 12));
    printf("%zu MiB, pagecache_write from / pagecache_read into malloc'ed memory, best of %d; GB/s (s)\n",
           mib, reps);
    printf("| threads | store | THP MiB | write 1st | write 2nd | read 1st | read 2nd |\n");
    printf("|---|---|---|---|---|---|---|\n");
    unsigned tlist[2] = {1, threads};
    for (int ti = 0; ti < (threads > 1 ? 2 : 1); ti++) {
        pagecache_host_copy_shutdown();
        struct vast_host_copy_config cfg = {.threads = tlist[ti]};
        pagecache_configure_host_copy(&cfg);
        for (int huge = 0; huge < 2; huge++) {
            struct result b = {1e9, 1e9, 1e9, 1e9, 0}, r;
            for (int k = 0; k < reps; k++) {
                one_run(size, huge, src, &r);
                b.w1 = best(b.w1, r.w1);
                b.w2 = best(b.w2, r.w2);
                b.r1 = best(b.r1, r.r1);
                b.r2 = best(b.r2, r.r2);
                b.thp = r.thp;
            }
            double gb = size / 1e9;
            printf("| %u | %s | %ld | %.2f (%.3f) | %.2f (%.3f) | %.2f (%.3f) | %.2f (%.3f) |\n",
                   tlist[ti], huge ? "THP mmap (now)" : "plain mmap (before)", b.thp, gb / b.w1,
                   b.w1, gb / b.w2, b.w2, gb / b.r1, b.r1, gb / b.r2, b.r2);
        }
    }
    struct vast_host_copy_stats st;
    pagecache_get_host_copy_stats(&st);
    printf("host copies: %llu through the pool, %llu in the caller\n",
           (unsigned long long)st.parallel, (unsigned long long)st.plain);
    pagecache_host_copy_shutdown();
    free(src);
    return 0;
}
