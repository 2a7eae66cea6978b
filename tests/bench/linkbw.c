/*
 * linkbw.c: the host links' transfer rates, the bound for VAST's partitioned runs: pinned
 * host memory (a mapped CL_MEM_ALLOC_HOST_PTR buffer) to each device of a platform and back,
 * one direction at a time and both at once (two queues), per device alone and on every device
 * at once (one thread per device): the summed bound of a merged device over all of them.
 *
 * usage: linkbw PLATFORM [MiB per transfer (default 1024)] [repeats (default 5)]
 * Prints one table row per case: the median rate in GB/s (10^9 bytes) of `repeats` runs,
 * after one untimed warm-up. Both directions: the bytes of both over the time of both.
 */
#include "clbench.h"

#include <pthread.h>

#define MAX_DEVICES 16

struct link {
    cl_device_id dev;
    cl_command_queue q[2];
    cl_mem pinned[2], dbuf[2];
    void *host[2];
    size_t bytes;
    int mode; /* 0 host to device, 1 device to host, 2 both */
    double rate[32];
    int reps;
};

/* One transfer (or a pair, both directions at once): its rate. */
static double once(struct link *l)
{
    double t0 = now();
    if (l->mode != 1)
        CHECK(clEnqueueWriteBuffer(l->q[0], l->dbuf[0], CL_FALSE, 0, l->bytes, l->host[0], 0, NULL, NULL));
    if (l->mode != 0)
        CHECK(clEnqueueReadBuffer(l->q[1], l->dbuf[1], CL_FALSE, 0, l->bytes, l->host[1], 0, NULL, NULL));
    CHECK(clFinish(l->q[0]));
    CHECK(clFinish(l->q[1]));
    return (l->mode == 2 ? 2.0 : 1.0) * (double)l->bytes / (now() - t0) * 1e-9;
}

static void *run(void *arg)
{
    struct link *l = arg;
    once(l); /* warm-up */
    for (int i = 0; i < l->reps; i++)
        l->rate[i] = once(l);
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(struct link *l)
{
    qsort(l->rate, (size_t)l->reps, sizeof l->rate[0], cmp);
    return l->rate[l->reps / 2];
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: linkbw PLATFORM [MiB] [repeats]\n");
        return 2;
    }
    size_t bytes = (argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 1024) << 20;
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    if (bytes == 0 || reps < 1 || reps > 32) {
        fprintf(stderr, "linkbw: MiB > 0, 1 <= repeats <= 32\n");
        return 2;
    }
    cl_device_id ds[MAX_DEVICES];
    cl_uint n = 0;
    CHECK(clGetDeviceIDs(find_platform(argv[1]), CL_DEVICE_TYPE_ALL, MAX_DEVICES, ds, &n));
    cl_int err;
    cl_context ctx = clCreateContext(NULL, n, ds, NULL, NULL, &err);
    CHECK(err);
    static struct link links[MAX_DEVICES];
    for (cl_uint d = 0; d < n; d++) {
        struct link *l = &links[d];
        *l = (struct link){.dev = ds[d], .bytes = bytes, .reps = reps};
        for (int k = 0; k < 2; k++) {
            l->q[k] = clCreateCommandQueueWithProperties(ctx, ds[d], NULL, &err);
            CHECK(err);
            l->pinned[k] = clCreateBuffer(ctx, CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
            CHECK(err);
            l->host[k] = clEnqueueMapBuffer(l->q[k], l->pinned[k], CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0,
                                            NULL, NULL, &err);
            CHECK(err);
            memset(l->host[k], k + 1, bytes);
            l->dbuf[k] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
            CHECK(err);
        }
    }
    static const char *modes[] = {"host to device", "device to host", "both at once"};
    printf("linkbw: %zu MiB per transfer, median of %d, GB/s\n", bytes >> 20, reps);
    printf("| devices | %s | %s | %s |\n|---|---|---|---|\n", modes[0], modes[1], modes[2]);
    for (cl_uint d = 0; d <= n; d++) { /* d < n: device d alone; d == n: all at once */
        char name[256] = "all at once (sum)";
        if (d < n)
            CHECK(clGetDeviceInfo(ds[d], CL_DEVICE_NAME, sizeof name, name, NULL));
        printf("| %s |", name);
        for (int mode = 0; mode < 3; mode++) {
            pthread_t t[MAX_DEVICES];
            cl_uint lo = d < n ? d : 0, hi = d < n ? d + 1 : n;
            for (cl_uint k = lo; k < hi; k++) {
                links[k].mode = mode;
                if (pthread_create(&t[k], NULL, run, &links[k]) != 0)
                    return 2;
            }
            double sum = 0;
            for (cl_uint k = lo; k < hi; k++) {
                pthread_join(t[k], NULL);
                sum += median(&links[k]);
            }
            printf(" %.1f |", sum);
        }
        printf("\n");
    }
    for (cl_uint d = 0; d < n; d++)
        for (int k = 0; k < 2; k++) {
            CHECK(clEnqueueUnmapMemObject(links[d].q[k], links[d].pinned[k], links[d].host[k], 0, NULL, NULL));
            CHECK(clFinish(links[d].q[k]));
            clReleaseMemObject(links[d].pinned[k]);
            clReleaseMemObject(links[d].dbuf[k]);
            clReleaseCommandQueue(links[d].q[k]);
        }
    clReleaseContext(ctx);
    return 0;
}
