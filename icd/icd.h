/*
 * icd.h: start-up of the library (configuration, real platforms, the VAST platform), done
 * once, on the first call that needs it, never from a constructor: loading vendor libraries
 * from inside dlopen is fragile, and an application that never calls OpenCL pays nothing.
 */
#ifndef VAST_ICD_ICD_H
#define VAST_ICD_ICD_H

#include "../interpose/platform.h"

void vast_icd_init(void);

/* The ICD entry point (exported). */
CL_API_ENTRY cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id *platforms,
                                                      cl_uint *num_platforms);

/* The real platforms found at start-up (for vastinfo). */
size_t vast_icd_backends(const struct vast_backend **backends);

#endif
