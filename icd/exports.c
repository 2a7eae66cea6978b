/*
 * exports.c: the cl* symbols libvast.so exports, for LD_PRELOAD (and for programs that link
 * libvast.so directly). Each routes the way an ICD loader does: on the dispatch table of its
 * first handle, so VAST objects reach vast_cl* and other platforms' objects reach their own
 * driver untouched. A NULL handle goes to VAST, which answers with the specified error (or,
 * for platform arguments, uses the VAST platform: it is listed first). clGetPlatformIDs lists
 * VAST first, then the platforms of the next libOpenCL in the search order.
 */
#include "../base/driver.h"
#include "../interpose/api.h"
#include "../interpose/object.h"
#include "icd.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define VAST_EXPORT __attribute__((visibility("default")))
#define OWN_OR_NULL(h) ((h) == NULL || vast_object_is_own(h))

#define VAST_API(ret, name, params, args, obj)                                                    \
    VAST_EXPORT CL_API_ENTRY ret CL_API_CALL name params                                          \
    {                                                                                             \
        if (obj == NULL)                                                                          \
            vast_icd_init();                                                                      \
        if (OWN_OR_NULL(obj))                                                                     \
            return vast_##name args;                                                              \
        return VAST_DISPATCH(obj)->name args;                                                     \
    }
#define VAST_API_CUSTOM(ret, name, params, args)
#define VAST_API_EXT(ret, name, params, args)
#define VAST_UNSUPPORTED_INT(name, params, code)
#define VAST_UNSUPPORTED_OBJ(ret, name, params, code)
#define VAST_NULL_SLOT(name)
#include "../interpose/entries.h"

typedef cl_int (*get_platforms_fn)(cl_uint, cl_platform_id *, cl_uint *);

/* Platforms of the next libOpenCL (the ICD loader), without VAST's own: a VAST loaded by the
 * loader too (vast.icd installed) is the same library, or another copy with suffix "VAST". */
static cl_uint next_platforms(cl_platform_id **out)
{
    *out = NULL;
    get_platforms_fn next = (get_platforms_fn)(uintptr_t)dlsym(RTLD_NEXT, "clGetPlatformIDs");
    cl_uint n = 0;
    if (next == NULL || next(0, NULL, &n) != CL_SUCCESS || n == 0)
        return 0;
    cl_platform_id *all = calloc(n, sizeof *all);
    if (all == NULL || next(n, all, NULL) != CL_SUCCESS) {
        free(all);
        return 0;
    }
    cl_uint kept = 0;
    for (cl_uint i = 0; i < n; i++) {
        char suffix[16] = "";
        if (vast_object_is_own(all[i]))
            continue;
        if (VAST_DISPATCH(all[i])->clGetPlatformInfo(all[i], CL_PLATFORM_ICD_SUFFIX_KHR, sizeof suffix, suffix, NULL) ==
                CL_SUCCESS &&
            !strcmp(suffix, "VAST"))
            continue;
        all[kept++] = all[i];
    }
    *out = all;
    return kept;
}

VAST_EXPORT CL_API_ENTRY cl_int CL_API_CALL clGetPlatformIDs(cl_uint num_entries, cl_platform_id *platforms,
                                                            cl_uint *num_platforms)
{
    vast_icd_init();
    if ((num_entries == 0 && platforms != NULL) || (platforms == NULL && num_platforms == NULL))
        return CL_INVALID_VALUE;
    cl_uint own = 0;
    cl_platform_id vast = NULL;
    if (vast_clGetPlatformIDs(1, &vast, &own) != CL_SUCCESS)
        own = 0;
    cl_platform_id *others;
    cl_uint n = next_platforms(&others);
    cl_uint total = own + n;
    for (cl_uint i = 0; platforms != NULL && i < total && i < num_entries; i++)
        platforms[i] = (own && i == 0) ? vast : others[i - own];
    free(others);
    if (num_platforms != NULL)
        *num_platforms = total;
    return total > 0 ? CL_SUCCESS : CL_PLATFORM_NOT_FOUND_KHR;
}

VAST_EXPORT CL_API_ENTRY cl_context CL_API_CALL clCreateContext(
    const cl_context_properties *properties, cl_uint num_devices, const cl_device_id *devices,
    void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *), void *user_data, cl_int *errcode_ret)
{
    vast_icd_init();
    if (num_devices > 0 && devices != NULL && !OWN_OR_NULL(devices[0]))
        return VAST_DISPATCH(devices[0])->clCreateContext(properties, num_devices, devices, pfn_notify, user_data,
                                                    errcode_ret);
    return vast_clCreateContext(properties, num_devices, devices, pfn_notify, user_data, errcode_ret);
}

VAST_EXPORT CL_API_ENTRY cl_context CL_API_CALL clCreateContextFromType(
    const cl_context_properties *properties, cl_device_type device_type,
    void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *), void *user_data, cl_int *errcode_ret)
{
    vast_icd_init();
    for (size_t i = 0; properties != NULL && properties[i] != 0; i += 2) {
        cl_platform_id p = (cl_platform_id)properties[i + 1];
        if (properties[i] == CL_CONTEXT_PLATFORM && !OWN_OR_NULL(p))
            return VAST_DISPATCH(p)->clCreateContextFromType(properties, device_type, pfn_notify, user_data, errcode_ret);
    }
    return vast_clCreateContextFromType(properties, device_type, pfn_notify, user_data, errcode_ret);
}

VAST_EXPORT CL_API_ENTRY cl_int CL_API_CALL clWaitForEvents(cl_uint num_events, const cl_event *event_list)
{
    if (num_events > 0 && event_list != NULL && !OWN_OR_NULL(event_list[0]))
        return VAST_DISPATCH(event_list[0])->clWaitForEvents(num_events, event_list);
    return vast_clWaitForEvents(num_events, event_list);
}

VAST_EXPORT CL_API_ENTRY cl_int CL_API_CALL clUnloadCompiler(void) { return vast_clUnloadCompiler(); }

VAST_EXPORT CL_API_ENTRY void *CL_API_CALL clGetExtensionFunctionAddress(const char *function_name)
{
    /* The Khronos loader finds an ICD's entry point this way. */
    if (function_name != NULL && !strcmp(function_name, "clIcdGetPlatformIDsKHR"))
        return (void *)(uintptr_t)clIcdGetPlatformIDsKHR;
    void *(*next)(const char *) = (void *(*)(const char *))(uintptr_t)dlsym(RTLD_NEXT, "clGetExtensionFunctionAddress");
    void *fn = vast_clGetExtensionFunctionAddress(function_name);
    return fn != NULL || next == NULL ? fn : next(function_name);
}

VAST_EXPORT CL_API_ENTRY void CL_API_CALL clSVMFree(cl_context context, void *svm_pointer)
{
    if (OWN_OR_NULL(context))
        vast_clSVMFree(context, svm_pointer);
    else
        VAST_DISPATCH(context)->clSVMFree(context, svm_pointer);
}
