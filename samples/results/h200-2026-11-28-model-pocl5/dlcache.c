/* PoCL's work-group function cache: one kernel, same local size, launches of growing global
 * size (and offset zero or not) in flight together, without VAST. Checks every result. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static const char *src = "__kernel void k(__global uint *a, uint v) { size_t i = get_global_id(0); a[i] = a[i] * 3u + v + (uint)i; }";
int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    cl_platform_id ps[8]; cl_uint np; clGetPlatformIDs(8, ps, &np);
    cl_platform_id p = NULL;
    for (cl_uint i = 0; i < np; i++) { char n[256]; clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof n, n, NULL); if (strstr(n, "Portable")) p = ps[i]; }
    if (!p) return printf("no PoCL\n"), 2;
    char ver[256]; clGetPlatformInfo(p, CL_PLATFORM_VERSION, sizeof ver, ver, NULL); printf("%s\n", ver);
    cl_device_id d; clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
    cl_int e; cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    int two = argc > 2; /* two in-order queues instead of one out-of-order queue */
    cl_command_queue q = clCreateCommandQueue(c, d, two ? 0 : CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &e);
    cl_command_queue q2 = two ? clCreateCommandQueue(c, d, 0, &e) : q;
    int n = 0;
    cl_program pr = clCreateProgramWithSource(c, 1, &src, NULL, &e); clBuildProgram(pr, 1, &d, "", NULL, NULL);
    cl_kernel k = clCreateKernel(pr, "k", &e);
    enum { N = 1 << 16 };
    cl_uint *h = malloc(N * 4), *ref = malloc(N * 4);
    cl_mem b = clCreateBuffer(c, CL_MEM_READ_WRITE, N * 4, NULL, &e);
    int bad = 0;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < N; i++) h[i] = ref[i] = (cl_uint)(i * 2654435761u + r);
        clEnqueueWriteBuffer(q, b, CL_TRUE, 0, N * 4, h, 0, NULL, NULL);
        /* disjoint ranges, each its own grid width and offset, all in flight */
        size_t off = 0, w = 1 + (size_t)(r % 7);
        while (off + w <= N) {
            cl_uint v = (cl_uint)(off * 7 + r);
            clSetKernelArg(k, 0, sizeof b, &b); clSetKernelArg(k, 1, sizeof v, &v);
            size_t lo = 1;
            if (clEnqueueNDRangeKernel(n++ % 2 ? q2 : q, k, 1, &off, &w, &lo, 0, NULL, NULL) != CL_SUCCESS) return printf("enqueue failed\n"), 2;
            for (size_t i = off; i < off + w; i++) ref[i] = ref[i] * 3u + v + (cl_uint)i;
            off += w; w = w * 2 + 1;
        }
        clFinish(q);
        clFinish(q2);
        clEnqueueReadBuffer(q, b, CL_TRUE, 0, N * 4, h, 0, NULL, NULL);
        for (int i = 0; i < N; i++) if (h[i] != ref[i]) { bad++; if (bad < 5) printf("round %d: a[%d] = %u, expected %u\n", r, i, h[i], ref[i]); break; }
    }
    printf("%d of %d rounds wrong\n", bad, rounds);
    return bad != 0;
}
