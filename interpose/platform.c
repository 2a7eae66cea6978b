/*
 * platform.c: the VAST platform object and its queries. There is one VAST platform; it holds
 * one virtual device per real device chosen at start-up (icd/vendors.c), whatever real
 * platforms they come from. Its version is the lowest of the wrapped real platforms, since
 * VAST passes through what the real platform supports.
 */
#include "platform.h"

#include "../base/config.h"
#include "api.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

static struct _cl_platform_id the_platform;
static cl_device_id *root_devices;
static size_t num_root_devices;
static unsigned platform_version = 30;

void vast_device_init_root(struct _cl_device_id *dev, struct vast_backend *be, cl_device_id real);

void vast_device_merge(struct _cl_device_id *dev, struct _cl_device_id **members, cl_uint n);

/* VAST_MERGE_DEVICES: the root devices of each real platform become one virtual device, the
 * first of them, which runs launches on all (merge.c); the others are hidden. */
static void merge_devices(void)
{
    for (size_t i = 0; i < num_root_devices; i++) {
        if (root_devices[i]->merged_into != NULL || root_devices[i]->members != NULL)
            continue;
        struct _cl_device_id **members = calloc(num_root_devices, sizeof *members);
        cl_uint n = 0;
        for (size_t j = i; members != NULL && j < num_root_devices; j++)
            if (root_devices[j]->backend == root_devices[i]->backend)
                members[n++] = root_devices[j];
        if (n < 2) {
            free(members);
            continue;
        }
        vast_device_merge(root_devices[i], members, n);
    }
}

void vast_platform_setup(struct vast_backend *backends, size_t num_backends,
                         const struct vast_real_device *devices, size_t num_devices)
{
    (void)backends;
    (void)num_backends;
    vast_object_init(&the_platform.obj, VAST_MAGIC_PLATFORM, NULL);
    root_devices = calloc(num_devices ? num_devices : 1, sizeof *root_devices);
    for (size_t i = 0; root_devices != NULL && i < num_devices; i++) {
        struct _cl_device_id *dev = vast_object_alloc(sizeof *dev);
        if (dev == NULL)
            break;
        vast_device_init_root(dev, devices[i].backend, devices[i].real);
        root_devices[num_root_devices++] = dev;
        if (devices[i].backend->version < platform_version)
            platform_version = devices[i].backend->version;
    }
    if (vast_config_get()->merge_devices)
        merge_devices();
}

cl_platform_id vast_platform_get(void) { return num_root_devices > 0 ? &the_platform : NULL; }

size_t vast_platform_devices(cl_device_id **devices)
{
    *devices = root_devices;
    return num_root_devices;
}

cl_int vast_clGetPlatformIDs(cl_uint num_entries, cl_platform_id *platforms, cl_uint *num_platforms)
{
    VAST_RETURN_IF((num_entries == 0 && platforms != NULL) || (platforms == NULL && num_platforms == NULL),
                   CL_INVALID_VALUE, "num_entries %u, platforms %p, num_platforms %p", num_entries,
                   (void *)platforms, (void *)num_platforms);
    cl_uint n = vast_platform_get() != NULL ? 1 : 0;
    if (num_platforms != NULL)
        *num_platforms = n;
    if (platforms != NULL && n > 0)
        platforms[0] = &the_platform;
    return n > 0 ? CL_SUCCESS : CL_PLATFORM_NOT_FOUND_KHR;
}

static cl_int answer_string(const char *s, size_t size, void *value, size_t *ret)
{
    return vast_info_answer(s, strlen(s) + 1, size, value, ret);
}

cl_int vast_clGetPlatformInfo(cl_platform_id platform, cl_platform_info param_name,
                              size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
    if (platform == NULL)
        platform = vast_platform_get();
    VAST_CHECK(platform, VAST_MAGIC_PLATFORM, CL_INVALID_PLATFORM);
    char version[64];
    snprintf(version, sizeof version, "OpenCL %u.%u VAST", platform_version / 10, platform_version % 10);
    cl_version numeric = CL_MAKE_VERSION(platform_version / 10, platform_version % 10, 0);
    cl_name_version ext = {CL_MAKE_VERSION(1, 0, 0), "cl_khr_icd"};
    cl_ulong resolution = 0;
    switch (param_name) {
    case CL_PLATFORM_PROFILE: return answer_string("FULL_PROFILE", param_value_size, param_value, param_value_size_ret);
    case CL_PLATFORM_VERSION: return answer_string(version, param_value_size, param_value, param_value_size_ret);
    case CL_PLATFORM_NUMERIC_VERSION:
        return vast_info_answer(&numeric, sizeof numeric, param_value_size, param_value, param_value_size_ret);
    case CL_PLATFORM_NAME: return answer_string("VAST", param_value_size, param_value, param_value_size_ret);
    case CL_PLATFORM_VENDOR:
        return answer_string("VAST (virtual address space for OpenCL)", param_value_size, param_value, param_value_size_ret);
    case CL_PLATFORM_EXTENSIONS: return answer_string("cl_khr_icd", param_value_size, param_value, param_value_size_ret);
    case CL_PLATFORM_EXTENSIONS_WITH_VERSION:
        return vast_info_answer(&ext, sizeof ext, param_value_size, param_value, param_value_size_ret);
    case CL_PLATFORM_ICD_SUFFIX_KHR: return answer_string("VAST", param_value_size, param_value, param_value_size_ret);
    case CL_PLATFORM_HOST_TIMER_RESOLUTION:
        if (num_root_devices > 0) {
            struct vast_backend *be = root_devices[0]->backend;
            if (be->dispatch->clGetPlatformInfo(be->real, param_name, sizeof resolution, &resolution, NULL) != CL_SUCCESS)
                resolution = 0;
        }
        return vast_info_answer(&resolution, sizeof resolution, param_value_size, param_value, param_value_size_ret);
    default: break;
    }
    VAST_FAIL(CL_INVALID_VALUE, "unknown platform query 0x%x", (unsigned)param_name);
}

void *vast_clGetExtensionFunctionAddressForPlatform(cl_platform_id platform, const char *function_name)
{
    /* VAST offers no extension functions: a real platform's extension function would be
     * handed VAST objects it cannot read. The extensions VAST reports need none. */
    (void)platform;
    (void)function_name;
    return NULL;
}

void *vast_clGetExtensionFunctionAddress(const char *function_name)
{
    return vast_clGetExtensionFunctionAddressForPlatform(NULL, function_name);
}

cl_int vast_clUnloadPlatformCompiler(cl_platform_id platform)
{
    VAST_CHECK(platform, VAST_MAGIC_PLATFORM, CL_INVALID_PLATFORM);
    return CL_SUCCESS; /* a hint: the real compilers stay loaded for VAST's own translations */
}

cl_int vast_clUnloadCompiler(void) { return CL_SUCCESS; }
