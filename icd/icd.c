/*
 * icd.c: the ICD entry points proper (clIcdGetPlatformIDsKHR and the marker that tells other
 * VAST instances to skip this library) and the one-time start-up behind vast_icd_init.
 */
#include "icd.h"

#include "../interpose/api.h"
#include "../base/config.h"
#include "../base/log.h"
#include "vendors.h"

#include <pthread.h>
#include <stdlib.h>

#define VAST_EXPORT __attribute__((visibility("default")))

/* Its presence marks a library as VAST: discovery never wraps a VAST library. */
VAST_EXPORT const int vastIcdMarker = 1;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static struct vast_backend *backends;
static size_t num_backends;

static void init(void)
{
    const struct vast_config *cfg = vast_config_get();
    struct vast_real_device *devices;
    size_t n = vast_vendors_discover(cfg->backend, &backends, &num_backends, &devices);
    vast_platform_setup(backends, num_backends, devices, n);
    free(devices);
    vast_info("%zu virtual device(s) over %zu real platform(s)", n, num_backends);
}

void vast_icd_init(void) { pthread_once(&init_once, init); }

size_t vast_icd_backends(const struct vast_backend **out)
{
    vast_icd_init();
    *out = backends;
    return num_backends;
}

VAST_EXPORT CL_API_ENTRY cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id *platforms,
                                                                  cl_uint *num_platforms)
{
    vast_icd_init();
    return vast_clGetPlatformIDs(num_entries, platforms, num_platforms);
}
