/*
 * common.h: what the platform e2e tests share: the VAST platform and device (these tests link
 * VAST itself, vast_core, so every cl* call is VAST's and VAST finds PoCL on its own), a
 * context on it, programs built for it, and a small kernel.
 */
#ifndef VAST_TEST_PLATFORM_COMMON_H
#define VAST_TEST_PLATFORM_COMMON_H

#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK_CL(call)                                                                            \
    do {                                                                                          \
        cl_int err_ = (call);                                                                     \
        if (err_ != CL_SUCCESS) {                                                                 \
            fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #call, err_);                 \
            abort();                                                                              \
        }                                                                                         \
    } while (0)

static const char *test_kernel_source __attribute__((unused)) =
    "__kernel void scale(__global const int *in, __global int *out, int factor) {\n"
    "    size_t i = get_global_id(0);\n"
    "    out[i] = in[i] * factor + (int)i;\n"
    "}\n";

static inline cl_platform_id test_platform(void)
{
    cl_platform_id p = NULL;
    cl_uint n = 0;
    CHECK_CL(clGetPlatformIDs(1, &p, &n));
    char name[64];
    CHECK_CL(clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, NULL));
    if (n < 1 || name[0] != 'V') {
        fprintf(stderr, "the first platform is '%s', not VAST\n", name);
        abort();
    }
    return p;
}

static inline cl_device_id test_device(cl_platform_id p)
{
    cl_device_id d = NULL;
    CHECK_CL(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    return d;
}

/* A context on device d alone. */
static inline cl_context test_context(cl_device_id d)
{
    cl_int err;
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    CHECK_CL(err);
    return c;
}

/* The program of `source`, built for device d of context c. */
static inline cl_program test_program(cl_context c, cl_device_id d, const char *source)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(c, 1, &source, NULL, &err);
    CHECK_CL(err);
    CHECK_CL(clBuildProgram(p, 1, &d, NULL, NULL, NULL));
    return p;
}

#endif
