/* devices_common.h: what test_devices.c and test_merged.c share: their failure macros (the
 * calling function returns -1 after printing where and why) and finding a platform by name. */
#ifndef VAST_TESTS_DEVICES_COMMON_H
#define VAST_TESTS_DEVICES_COMMON_H

#include <CL/cl.h>

#include <stdio.h>
#include <string.h>

#define CHECK(cond, ...)                                                                          \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__);                                     \
            fprintf(stderr, __VA_ARGS__);                                                         \
            fprintf(stderr, "\n");                                                                \
            return -1;                                                                            \
        }                                                                                         \
    } while (0)
#define OK(call) CHECK((err = (call)) == CL_SUCCESS, "%s = %d", #call, err)

/* The first platform whose name contains name_part, or NULL. */
static inline cl_platform_id find_platform(const char *name_part)
{
    cl_platform_id ps[8];
    cl_uint n = 0;
    clGetPlatformIDs(8, ps, &n);
    for (cl_uint i = 0; i < n && i < 8; i++) {
        char name[256] = "";
        clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strstr(name, name_part))
            return ps[i];
    }
    return NULL;
}

#endif
