/*
 * test_threads: 8 threads at once create, use and release every kind of object through VAST
 * (context, queue, buffers, program, kernel, events), each checking its results; afterwards
 * no VAST object is left alive (and, in the sanitizer build, nothing leaks).
 *
 * The executor's reaper frees finished commands after clFinish returns, and the last
 * reference to a queue (and through it its context) may be the reaper's, so the count is
 * polled until it is back where it started; a leaked object keeps it above for good, and the
 * test fails after the deadline.
 */
#include "common.h"
#include "interpose/object.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

enum { THREADS = 8, ROUNDS = 6, N = 4099 };

static cl_device_id device;

static void one_round(int seed)
{
    cl_int err;
    cl_context ctx = test_context(device);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    CHECK_CL(err);
    int *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out);
    for (int i = 0; i < N; i++)
        in[i] = (i * 7919 + seed) % 1000003;
    cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * sizeof *in, in, &err);
    CHECK_CL(err);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, N * sizeof *out, NULL, &err);
    CHECK_CL(err);
    int poison = -1;
    CHECK_CL(clEnqueueFillBuffer(q, b, &poison, sizeof poison, 0, N * sizeof *out, 0, NULL, NULL));
    cl_program prog = test_program(ctx, device, test_kernel_source);
    cl_kernel k = clCreateKernel(prog, "scale", &err);
    CHECK_CL(err);
    int factor = seed % 13 + 2;
    CHECK_CL(clSetKernelArg(k, 0, sizeof a, &a));
    CHECK_CL(clSetKernelArg(k, 1, sizeof b, &b));
    CHECK_CL(clSetKernelArg(k, 2, sizeof factor, &factor));
    size_t global = N;
    cl_event done;
    CHECK_CL(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, &done));
    CHECK_CL(clEnqueueReadBuffer(q, b, CL_FALSE, 0, N * sizeof *out, out, 1, &done, NULL));
    CHECK_CL(clFinish(q));
    for (int i = 0; i < N; i++)
        if (out[i] != in[i] * factor + i) {
            fprintf(stderr, "thread seed %d: out[%d] = %d, expected %d\n", seed, i, out[i], in[i] * factor + i);
            abort();
        }
    CHECK_CL(clReleaseEvent(done));
    CHECK_CL(clReleaseKernel(k));
    CHECK_CL(clReleaseProgram(prog));
    CHECK_CL(clReleaseMemObject(a));
    CHECK_CL(clReleaseMemObject(b));
    CHECK_CL(clReleaseCommandQueue(q));
    CHECK_CL(clReleaseContext(ctx));
    free(in);
    free(out);
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (int r = 0; r < ROUNDS; r++)
        one_round(id * 100 + r);
    return NULL;
}

int main(void)
{
    device = test_device(test_platform());
    long before = vast_object_live_count();
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i) != 0)
            return 2;
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    long after = vast_object_live_count();
    for (int ms = 0; after != before && ms < 10000; ms++) { /* the reaper may still hold some */
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
        after = vast_object_live_count();
    }
    printf("%d threads x %d rounds: VAST objects alive before %ld, after %ld\n", THREADS, ROUNDS, before, after);
    return after == before ? 0 : 1;
}
