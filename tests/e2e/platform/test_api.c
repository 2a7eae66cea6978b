/*
 * test_api: the OpenCL API through VAST on PoCL. Every handle the application gets back
 * (from creation calls, info queries and callbacks) is VAST's; invalid, foreign and released
 * handles get the specified CL_INVALID_* code; objects of every family work (sub-buffers,
 * sub-devices, images, samplers, user events, compile + link, kernel cloning, native kernels
 * where the device runs them).
 */
#include "common.h"
#include "interpose/object.h"
#include "vast_cmocka.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static cl_platform_id platform;
static cl_device_id device;
static cl_context ctx;
static cl_command_queue queue;

static int setup(void **state)
{
    (void)state;
    platform = test_platform();
    device = test_device(platform);
    cl_int err;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
    ctx = clCreateContext(props, 1, &device, NULL, NULL, &err);
    CHECK_CL(err);
    queue = clCreateCommandQueue(ctx, device, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK_CL(err);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    CHECK_CL(clReleaseCommandQueue(queue));
    CHECK_CL(clReleaseContext(ctx));
    return 0;
}

static void test_platform_and_device_identity(void **state)
{
    (void)state;
    char name[256], suffix[16];
    CHECK_CL(clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name, name, NULL));
    assert_string_equal(name, "VAST");
    CHECK_CL(clGetPlatformInfo(platform, CL_PLATFORM_ICD_SUFFIX_KHR, sizeof suffix, suffix, NULL));
    assert_string_equal(suffix, "VAST");
    CHECK_CL(clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name, name, NULL));
    assert_memory_equal(name, "VAST: ", 6);
    cl_platform_id p = NULL;
    CHECK_CL(clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof p, &p, NULL));
    assert_ptr_equal(p, platform);
    size_t size = 0;
    assert_int_equal(clGetDeviceInfo(device, CL_DEVICE_NAME, 3, name, NULL), CL_INVALID_VALUE);
    CHECK_CL(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, NULL, &size));
    char *ext = malloc(size);
    CHECK_CL(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, size, ext, NULL));
    assert_null(strstr(ext, "cl_khr_command_buffer")); /* needs entry points VAST lacks */
    assert_non_null(strstr(ext, "cl_khr_fp64"));
    free(ext);
    cl_uint n = 0;
    assert_int_equal(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, NULL, NULL), CL_INVALID_VALUE);
    assert_int_equal(clGetDeviceIDs(platform, 1ull << 40, 1, &p == NULL ? NULL : &device, &n), CL_INVALID_DEVICE_TYPE);
    assert_int_equal(clGetPlatformInfo(platform, 0x7777, 0, NULL, &size), CL_INVALID_VALUE);
}

static void test_queries_return_vast_handles(void **state)
{
    (void)state;
    cl_int err;
    cl_context c = NULL;
    cl_device_id d = NULL;
    CHECK_CL(clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof c, &c, NULL));
    assert_ptr_equal(c, ctx);
    CHECK_CL(clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof d, &d, NULL));
    assert_ptr_equal(d, device);
    CHECK_CL(clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof d, &d, NULL));
    assert_ptr_equal(d, device);
    cl_context_properties props[3];
    CHECK_CL(clGetContextInfo(ctx, CL_CONTEXT_PROPERTIES, sizeof props, props, NULL));
    assert_ptr_equal((void *)props[1], platform);

    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    CHECK_CL(err);
    cl_buffer_region region = {1024, 512};
    cl_mem sub = clCreateSubBuffer(buf, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    CHECK_CL(err);
    cl_mem parent = NULL;
    CHECK_CL(clGetMemObjectInfo(sub, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL));
    assert_ptr_equal(parent, buf);
    CHECK_CL(clGetMemObjectInfo(sub, CL_MEM_CONTEXT, sizeof c, &c, NULL));
    assert_ptr_equal(c, ctx);
    size_t offset = 0;
    CHECK_CL(clGetMemObjectInfo(sub, CL_MEM_OFFSET, sizeof offset, &offset, NULL));
    assert_int_equal(offset, 1024);

    cl_program prog = clCreateProgramWithSource(ctx, 1, &test_kernel_source, NULL, &err);
    CHECK_CL(err);
    CHECK_CL(clBuildProgram(prog, 0, NULL, "-cl-std=CL1.2", NULL, NULL));
    CHECK_CL(clGetProgramInfo(prog, CL_PROGRAM_DEVICES, sizeof d, &d, NULL));
    assert_ptr_equal(d, device);
    cl_kernel k = clCreateKernel(prog, "scale", &err);
    CHECK_CL(err);
    cl_program p = NULL;
    CHECK_CL(clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof p, &p, NULL));
    assert_ptr_equal(p, prog);
    cl_kernel clone = clCloneKernel(k, &err);
    CHECK_CL(err);
    CHECK_CL(clGetKernelInfo(clone, CL_KERNEL_CONTEXT, sizeof c, &c, NULL));
    assert_ptr_equal(c, ctx);
    size_t wg = 0;
    CHECK_CL(clGetKernelWorkGroupInfo(k, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
    assert_true(wg > 0);

    cl_event ev;
    int pattern = 7;
    CHECK_CL(clEnqueueFillBuffer(queue, buf, &pattern, sizeof pattern, 0, 4096, 0, NULL, &ev));
    cl_command_queue q = NULL;
    CHECK_CL(clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL));
    assert_ptr_equal(q, queue);
    CHECK_CL(clWaitForEvents(1, &ev));
    cl_ulong start = 0, end = 0;
    CHECK_CL(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL));
    CHECK_CL(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL));
    assert_true(start <= end);
    int host[128];
    CHECK_CL(clEnqueueReadBuffer(queue, sub, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
    for (int i = 0; i < 128; i++)
        assert_int_equal(host[i], 7);
    CHECK_CL(clReleaseEvent(ev));
    CHECK_CL(clReleaseKernel(clone));
    CHECK_CL(clReleaseKernel(k));
    CHECK_CL(clReleaseProgram(prog));
    CHECK_CL(clReleaseMemObject(sub));
    CHECK_CL(clReleaseMemObject(buf));
}

static void test_invalid_handles(void **state)
{
    (void)state;
    cl_int err = CL_SUCCESS;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
    CHECK_CL(err);
    CHECK_CL(clReleaseMemObject(buf));
    int x[16];
    assert_int_equal(clEnqueueReadBuffer(queue, buf, CL_TRUE, 0, 64, x, 0, NULL, NULL), CL_INVALID_MEM_OBJECT);
    assert_int_equal(clReleaseMemObject(buf), CL_INVALID_MEM_OBJECT);
    assert_int_equal(clRetainMemObject(NULL), CL_INVALID_MEM_OBJECT);
    assert_int_equal(clRetainContext((cl_context)(void *)queue), CL_INVALID_CONTEXT);
    assert_null(clCreateBuffer(NULL, CL_MEM_READ_WRITE, 64, NULL, &err));
    assert_int_equal(err, CL_INVALID_CONTEXT);
    assert_null(clCreateBuffer(ctx, CL_MEM_READ_WRITE, 0, NULL, &err));
    assert_int_equal(err, CL_INVALID_BUFFER_SIZE);
    assert_null(clCreateCommandQueue(ctx, (cl_device_id)(void *)ctx, 0, &err));
    assert_int_equal(err, CL_INVALID_DEVICE);
    cl_event bogus = (cl_event)(void *)ctx;
    assert_int_equal(clEnqueueMarkerWithWaitList(queue, 1, &bogus, NULL), CL_INVALID_EVENT_WAIT_LIST);
    assert_int_equal(clEnqueueMarkerWithWaitList(queue, 1, NULL, NULL), CL_INVALID_EVENT_WAIT_LIST);
    assert_int_equal(clWaitForEvents(1, &bogus), CL_INVALID_EVENT);
    cl_context_properties bad[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)ctx, 0};
    assert_null(clCreateContext(bad, 1, &device, NULL, NULL, &err));
    assert_int_equal(err, CL_INVALID_PLATFORM);
    assert_null(clCreateContext(NULL, 0, NULL, NULL, NULL, &err));
    assert_int_equal(err, CL_INVALID_VALUE);
    assert_null(clCreateProgramWithSource(ctx, 0, NULL, NULL, &err));
    assert_int_equal(err, CL_INVALID_VALUE);
}

static int callbacks_seen;
static cl_event callback_event;
static void CL_CALLBACK on_event(cl_event e, cl_int status, void *user)
{
    assert_ptr_equal(e, callback_event);
    assert_int_equal(status, CL_COMPLETE);
    assert_ptr_equal(user, &callbacks_seen);
    callbacks_seen++;
}

static cl_mem destroyed_mem;
static void CL_CALLBACK on_mem_destroyed(cl_mem m, void *user)
{
    (void)user;
    destroyed_mem = m;
}

static cl_program built_program;
static void CL_CALLBACK on_built(cl_program p, void *user)
{
    (void)user;
    built_program = p;
}

static void test_callbacks_get_vast_handles(void **state)
{
    (void)state;
    cl_int err;
    cl_event user = clCreateUserEvent(ctx, &err);
    CHECK_CL(err);
    cl_event marker;
    CHECK_CL(clEnqueueMarkerWithWaitList(queue, 1, &user, &marker));
    callback_event = marker;
    CHECK_CL(clSetEventCallback(marker, CL_COMPLETE, on_event, &callbacks_seen));
    cl_int status = 0;
    CHECK_CL(clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
    assert_true(status > CL_COMPLETE); /* gated by the user event */
    CHECK_CL(clSetUserEventStatus(user, CL_COMPLETE));
    CHECK_CL(clWaitForEvents(1, &marker));
    CHECK_CL(clFinish(queue));
    for (int i = 0; i < 1000 && callbacks_seen == 0; i++)
        CHECK_CL(clFinish(queue));
    assert_int_equal(callbacks_seen, 1);
    CHECK_CL(clReleaseEvent(marker));
    CHECK_CL(clReleaseEvent(user));

    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
    CHECK_CL(err);
    CHECK_CL(clSetMemObjectDestructorCallback(m, on_mem_destroyed, NULL));
    CHECK_CL(clReleaseMemObject(m));
    CHECK_CL(clFinish(queue));
    assert_ptr_equal(destroyed_mem, m);

    cl_program prog = clCreateProgramWithSource(ctx, 1, &test_kernel_source, NULL, &err);
    CHECK_CL(err);
    CHECK_CL(clBuildProgram(prog, 1, &device, NULL, on_built, NULL));
    cl_build_status bs = CL_BUILD_IN_PROGRESS;
    while (bs == CL_BUILD_IN_PROGRESS)
        CHECK_CL(clGetProgramBuildInfo(prog, device, CL_PROGRAM_BUILD_STATUS, sizeof bs, &bs, NULL));
    assert_int_equal(bs, CL_BUILD_SUCCESS);
    CHECK_CL(clReleaseProgram(prog));
    assert_ptr_equal(built_program, prog);
}

/* ---- API details the CTS checks (issue 18) ---- */

static int destructor_order[4], destructor_calls;
static cl_context destructed_context;

static void CL_CALLBACK on_context_destroyed(cl_context c, void *user_data)
{
    destructed_context = c;
    destructor_order[destructor_calls++ & 3] = (int)(intptr_t)user_data;
}

static void test_api_details(void **state)
{
    (void)state;
    cl_int err;
    /* Context destructor callbacks: called when the application's context goes, in reverse
     * order of registration, with VAST's handle (contexts share one real context, so the real
     * context's callbacks would never run). */
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
    cl_context c = clCreateContext(props, 1, &device, NULL, NULL, &err);
    CHECK_CL(err);
    destructor_calls = 0;
    CHECK_CL(clSetContextDestructorCallback(c, on_context_destroyed, (void *)(intptr_t)1));
    CHECK_CL(clSetContextDestructorCallback(c, on_context_destroyed, (void *)(intptr_t)2));
    assert_int_equal(clSetContextDestructorCallback(c, NULL, NULL), CL_INVALID_VALUE);
    CHECK_CL(clReleaseContext(c));
    assert_int_equal(destructor_calls, 2);
    assert_int_equal(destructor_order[0], 2);
    assert_int_equal(destructor_order[1], 1);
    assert_ptr_equal(destructed_context, c);

    /* The virtual device offers no device-side enqueue: the default device queue cannot be set. */
    cl_device_device_enqueue_capabilities dec = 1;
    CHECK_CL(clGetDeviceInfo(device, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, sizeof dec, &dec, NULL));
    assert_int_equal(dec, 0);
    assert_int_equal(clSetDefaultDeviceCommandQueue(ctx, device, queue), CL_INVALID_OPERATION);
    assert_int_equal(clSetDefaultDeviceCommandQueue(ctx, device, NULL), CL_INVALID_OPERATION);

    /* A buffer (virtual: it has no real object) is no pipe. */
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    CHECK_CL(err);
    cl_uint packet = 0;
    assert_int_equal(clGetPipeInfo(m, CL_PIPE_PACKET_SIZE, sizeof packet, &packet, NULL), CL_INVALID_MEM_OBJECT);
    /* CL_MEM_PROPERTIES: the list as given ({0}: one zero), nothing for clCreateBuffer. */
    cl_mem_properties none = 0, got = 7;
    size_t psize = 1;
    cl_mem wp = clCreateBufferWithProperties(ctx, &none, CL_MEM_READ_WRITE, 4096, NULL, &err);
    CHECK_CL(err);
    CHECK_CL(clGetMemObjectInfo(wp, CL_MEM_PROPERTIES, sizeof got, &got, &psize));
    assert_int_equal(psize, sizeof none);
    assert_int_equal(got, 0);
    CHECK_CL(clGetMemObjectInfo(m, CL_MEM_PROPERTIES, 0, NULL, &psize));
    assert_int_equal(psize, 0);
    CHECK_CL(clReleaseMemObject(wp));
    size_t width = 0;
    assert_int_equal(clGetImageInfo(m, CL_IMAGE_WIDTH, sizeof width, &width, NULL), CL_INVALID_MEM_OBJECT);

    /* An NDRange of size 0 is valid from OpenCL 2.1 on: nothing runs, the event completes. */
    cl_program prog = test_program(ctx, device, test_kernel_source);
    cl_kernel k = clCreateKernel(prog, "scale", &err);
    CHECK_CL(err);
    cl_int factor = 3;
    CHECK_CL(clSetKernelArg(k, 0, sizeof m, &m));
    CHECK_CL(clSetKernelArg(k, 1, sizeof m, &m));
    CHECK_CL(clSetKernelArg(k, 2, sizeof factor, &factor));
    size_t zero[2] = {0, 4}, local[2] = {1, 1};
    cl_event ev;
    CHECK_CL(clEnqueueNDRangeKernel(queue, k, 2, NULL, zero, NULL, 0, NULL, &ev));
    cl_command_type type = 0;
    CHECK_CL(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL));
    assert_int_equal(type, CL_COMMAND_NDRANGE_KERNEL);
    CHECK_CL(clWaitForEvents(1, &ev));
    CHECK_CL(clReleaseEvent(ev));
    CHECK_CL(clEnqueueNDRangeKernel(queue, k, 2, NULL, zero, local, 0, NULL, NULL));
    CHECK_CL(clEnqueueNDRangeKernel(queue, k, 2, NULL, NULL, NULL, 0, NULL, NULL)); /* NULL: size 0 */
    /* Launches take uniform work-groups, and the device says so, whatever the real one offers. */
    cl_bool nonuniform = CL_TRUE;
    CHECK_CL(clGetDeviceInfo(device, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, sizeof nonuniform, &nonuniform, NULL));
    assert_int_equal(nonuniform, CL_FALSE);
    size_t odd[1] = {5}, two[1] = {2};
    assert_int_equal(clEnqueueNDRangeKernel(queue, k, 1, NULL, odd, two, 0, NULL, NULL), CL_INVALID_WORK_GROUP_SIZE);
    CHECK_CL(clFinish(queue));
    CHECK_CL(clReleaseKernel(k));
    CHECK_CL(clReleaseProgram(prog));
    CHECK_CL(clReleaseMemObject(m));
}

static void test_compile_and_link(void **state)
{
    (void)state;
    cl_int err;
    const char *helper = "int twice(int x) { return 2 * x; }\n";
    const char *main_src = "int twice(int x);\n__kernel void k(__global int *a) { a[get_global_id(0)] = twice(21); }\n";
    cl_program h = clCreateProgramWithSource(ctx, 1, &helper, NULL, &err);
    CHECK_CL(err);
    cl_program m = clCreateProgramWithSource(ctx, 1, &main_src, NULL, &err);
    CHECK_CL(err);
    CHECK_CL(clCompileProgram(h, 1, &device, NULL, 0, NULL, NULL, NULL, NULL));
    CHECK_CL(clCompileProgram(m, 1, &device, NULL, 0, NULL, NULL, NULL, NULL));
    cl_program inputs[2] = {m, h};
    built_program = NULL;
    cl_program linked = clLinkProgram(ctx, 1, &device, NULL, 2, inputs, on_built, NULL, &err);
    CHECK_CL(err);
    cl_kernel k = clCreateKernel(linked, "k", &err);
    CHECK_CL(err);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4 * sizeof(int), NULL, &err);
    CHECK_CL(err);
    CHECK_CL(clSetKernelArg(k, 0, sizeof buf, &buf));
    size_t global = 4;
    CHECK_CL(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    int out[4] = {0};
    CHECK_CL(clEnqueueReadBuffer(queue, buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    for (int i = 0; i < 4; i++)
        assert_int_equal(out[i], 42);
    assert_ptr_equal(built_program, linked);
    CHECK_CL(clReleaseMemObject(buf));
    CHECK_CL(clReleaseKernel(k));
    CHECK_CL(clReleaseProgram(linked));
    CHECK_CL(clReleaseProgram(m));
    CHECK_CL(clReleaseProgram(h));
}

static void test_sub_devices_images_samplers(void **state)
{
    (void)state;
    cl_int err;
    cl_device_partition_property props[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
    cl_device_id subs[8];
    cl_uint n = 0;
    if (clCreateSubDevices(device, props, 8, subs, &n) == CL_SUCCESS) {
        assert_true(n >= 1);
        cl_device_id parent = NULL;
        CHECK_CL(clGetDeviceInfo(subs[0], CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, NULL));
        assert_ptr_equal(parent, device);
        char name[256];
        CHECK_CL(clGetDeviceInfo(subs[0], CL_DEVICE_NAME, sizeof name, name, NULL));
        assert_memory_equal(name, "VAST: ", 6);
        for (cl_uint i = 0; i < n && i < 8; i++)
            CHECK_CL(clReleaseDevice(subs[i]));
    }
    cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 16, .image_height = 8};
    cl_mem img = clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
    CHECK_CL(err);
    unsigned char pixels[16 * 8 * 4], back[16 * 8 * 4];
    for (size_t i = 0; i < sizeof pixels; i++)
        pixels[i] = (unsigned char)(i * 31);
    size_t origin[3] = {0, 0, 0}, region[3] = {16, 8, 1};
    CHECK_CL(clEnqueueWriteImage(queue, img, CL_TRUE, origin, region, 0, 0, pixels, 0, NULL, NULL));
    CHECK_CL(clEnqueueReadImage(queue, img, CL_TRUE, origin, region, 0, 0, back, 0, NULL, NULL));
    assert_memory_equal(pixels, back, sizeof back);
    cl_sampler s = clCreateSampler(ctx, CL_FALSE, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST, &err);
    CHECK_CL(err);
    cl_context c = NULL;
    CHECK_CL(clGetSamplerInfo(s, CL_SAMPLER_CONTEXT, sizeof c, &c, NULL));
    assert_ptr_equal(c, ctx);
    CHECK_CL(clReleaseSampler(s));
    CHECK_CL(clReleaseMemObject(img));
}

static void CL_CALLBACK native_double(void *args)
{
    struct { int *data; int n; } *a = args;
    for (int i = 0; i < a->n; i++)
        a->data[i] *= 2;
}

static void test_native_kernel(void **state)
{
    (void)state;
    cl_device_exec_capabilities caps = 0;
    CHECK_CL(clGetDeviceInfo(device, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof caps, &caps, NULL));
    if (!(caps & CL_EXEC_NATIVE_KERNEL))
        skip();
    cl_int err;
    int host[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
    CHECK_CL(err);
    struct { cl_mem data; int n; } args = {buf, 8};
    const void *loc = &args.data;
    CHECK_CL(clEnqueueNativeKernel(queue, native_double, &args, sizeof args, 1, &buf, &loc, 0, NULL, NULL));
    CHECK_CL(clEnqueueReadBuffer(queue, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
    for (int i = 0; i < 8; i++)
        assert_int_equal(host[i], 2 * (i + 1));
    CHECK_CL(clReleaseMemObject(buf));
}

VAST_CMOCKA_MAIN(setup, teardown,
                 test_platform_and_device_identity, test_queries_return_vast_handles, test_invalid_handles,
                 test_callbacks_get_vast_handles, test_compile_and_link, test_sub_devices_images_samplers,
                 test_native_kernel, test_api_details)
