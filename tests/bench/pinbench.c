/*
 * pinbench: what pinning an application's memory costs on the real driver, and whether it
 * scales with threads (issue 17, item 5: the first pass over application memory waits for
 * pins). The store: `gib` GiB of malloc'ed memory, touched. Each round wraps it granule by
 * granule (`mib` MiB) in CL_MEM_USE_HOST_PTR buffers (VAST's pin, pagecache/devops_opencl.c)
 * and writes every granule once to a device buffer, on T threads, each with its own queue and
 * its own share of granules; then the buffers are released (unpinned). Printed per T: the
 * time of the creates alone, of the first writes (the driver may pin there), of a second
 * write of everything (pinned: the link), as GB/s of the store.
 * Usage: pinbench PLATFORM [gib] [mib] [threads,...]
 */
#define CL_TARGET_OPENCL_VERSION 300
#include "clbench.h"

#include <pthread.h>

struct share {
    cl_context ctx;
    cl_device_id d;
    char *base;
    size_t granule, first, count;
    cl_mem dev;
    double create_s, write1_s, write2_s;
};

static void *run_share(void *arg)
{
    struct share *s = arg;
    cl_int err;
    cl_command_queue q = clCreateCommandQueueWithProperties(s->ctx, s->d, NULL, &err);
    CHECK(err);
    cl_mem *pins = calloc(s->count, sizeof *pins);
    double t0 = now();
    for (size_t g = 0; g < s->count; g++) {
        pins[g] = clCreateBuffer(s->ctx, CL_MEM_USE_HOST_PTR | CL_MEM_READ_WRITE, s->granule,
                                 s->base + (s->first + g) * s->granule, &err);
        CHECK(err);
    }
    double t1 = now();
    for (int pass = 0; pass < 2; pass++) {
        for (size_t g = 0; g < s->count; g++)
            CHECK(clEnqueueWriteBuffer(q, s->dev, CL_FALSE, 0, s->granule, s->base + (s->first + g) * s->granule, 0,
                                       NULL, NULL));
        CHECK(clFinish(q));
        if (pass == 0)
            s->write1_s = now() - t1;
    }
    s->write2_s = now() - t1 - s->write1_s;
    s->create_s = t1 - t0;
    for (size_t g = 0; g < s->count; g++)
        clReleaseMemObject(pins[g]);
    free(pins);
    clReleaseCommandQueue(q);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *want = argc > 1 ? argv[1] : "NVIDIA";
    size_t gib = argc > 2 ? strtoul(argv[2], NULL, 10) : 8, mib = argc > 3 ? strtoul(argv[3], NULL, 10) : 256;
    const char *tl = argc > 4 ? argv[4] : "1,2,4,8";
    cl_device_id d;
    CHECK(clGetDeviceIDs(find_platform(want), CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    CHECK(err);
    size_t bytes = gib << 30, granule = mib << 20, ng = bytes / granule;
    char *base = malloc(bytes);
    if (base == NULL || ng == 0)
        return fprintf(stderr, "no memory\n"), 2;
    memset(base, 1, bytes);
    printf("store %zu GiB, granules of %zu MiB; GB/s of the store\n", gib, mib);
    printf("| threads | create (pin?) | first write | create + first write | second write |\n|---|---|---|---|---|\n");
    for (const char *p = tl; *p;) {
        int t = atoi(p);
        struct share sh[64];
        pthread_t th[64];
        if (t < 1 || t > 64)
            break;
        for (int i = 0; i < t; i++) {
            size_t a = ng * i / t, b = ng * (i + 1) / t;
            sh[i] = (struct share){ctx, d, base, granule, a, b - a, NULL, 0, 0, 0};
            sh[i].dev = clCreateBuffer(ctx, CL_MEM_READ_WRITE, granule, NULL, &err);
            CHECK(err);
        }
        for (int i = 0; i < t; i++)
            pthread_create(&th[i], NULL, run_share, &sh[i]);
        double c = 0, w1 = 0, w2 = 0;
        for (int i = 0; i < t; i++) {
            pthread_join(th[i], NULL);
            c = sh[i].create_s > c ? sh[i].create_s : c;
            w1 = sh[i].create_s + sh[i].write1_s > w1 ? sh[i].create_s + sh[i].write1_s : w1;
            w2 = sh[i].write2_s > w2 ? sh[i].write2_s : w2;
            clReleaseMemObject(sh[i].dev);
        }
        double gb = bytes / 1e9;
        printf("| %d | %.1f | %.1f | %.1f | %.1f |\n", t, gb / c, gb / (w1 - c > 0 ? w1 - c : 1e-9), gb / w1, gb / w2);
        while (*p && *p != ',')
            p++;
        if (*p == ',')
            p++;
    }
    free(base);
    clReleaseContext(ctx);
    return 0;
}
