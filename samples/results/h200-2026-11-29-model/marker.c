/* PoCL: a marker with a wait list on an out-of-order queue, behind a command waiting on a user
 * event. The marker waits for its listed (complete) event only, so it completes at once; PoCL 3.1
 * makes it wait for the earlier read too.   gcc -O1 -o marker marker.c -lOpenCL && ./marker */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
static void alarm_h(int s) { (void)s; write(1, "HANG: marker not complete after 5 s\n", 36); _exit(1); }
int main(void)
{
    cl_platform_id ps[8]; cl_uint np; clGetPlatformIDs(8, ps, &np);
    cl_platform_id p = NULL;
    for (cl_uint i = 0; i < np; i++) { char n[256]; clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof n, n, NULL); if (strstr(n, "Portable")) p = ps[i]; }
    cl_device_id d; clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
    cl_int e; cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    cl_queue_properties pr[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(c, d, pr, &e);
    char h[4096];
    cl_mem b = clCreateBuffer(c, CL_MEM_READ_WRITE, sizeof h, NULL, &e);
    cl_event done, u = clCreateUserEvent(c, &e), pend, mk;
    clEnqueueReadBuffer(q, b, CL_TRUE, 0, 64, h, 0, NULL, &done);          /* complete */
    clEnqueueReadBuffer(q, b, CL_FALSE, 64, 64, h + 64, 1, &u, &pend);   /* waits on u */
    clEnqueueMarkerWithWaitList(q, 1, &done, &mk);                       /* waits on done only */
    signal(SIGALRM, alarm_h); alarm(5);
    e = clWaitForEvents(1, &mk);
    printf("marker complete (%d)\n", e);
    clSetUserEventStatus(u, CL_COMPLETE); clFinish(q);
    return 0;
}
