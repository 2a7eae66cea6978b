/*
 * vendors.h: finding the real OpenCL platforms underneath VAST without going through the ICD
 * loader (which would load VAST again). Reads OCL_ICD_FILENAMES, OCL_ICD_VENDORS and
 * /etc/OpenCL/vendors, skips VAST itself (any library exporting vastIcdMarker), dlopens each
 * vendor library once and asks its clIcdGetPlatformIDsKHR for platforms; then picks the real
 * devices the virtual devices will wrap (VAST_BACKEND, else GPUs, else everything).
 */
#ifndef VAST_ICD_VENDORS_H
#define VAST_ICD_VENDORS_H

#include "../interpose/platform.h"

#include <stdbool.h>
#include <stddef.h>

#define VAST_MAX_CANDIDATES 64

struct vast_candidates {
    size_t count;
    char path[VAST_MAX_CANDIDATES][512];
};

/* The library named by an .icd file (its first non-empty line, trimmed); false if none. */
bool vast_vendors_read_icd_file(const char *icd_path, char *library, size_t size);

/* Every candidate vendor library, in search order, without duplicates. `get` reads the
 * environment (getenv, or a fake in tests); `system_dir` is normally /etc/OpenCL/vendors. */
void vast_vendors_collect(const char *(*get)(const char *), const char *system_dir,
                          struct vast_candidates *out);

/* True when `selector` (VAST_BACKEND) names a library path rather than a platform name. */
bool vast_vendors_selector_is_path(const char *selector);

/* Load the real platforms and choose the devices to wrap; returns the number of devices. */
size_t vast_vendors_discover(const char *selector, struct vast_backend **backends,
                             size_t *num_backends, struct vast_real_device **devices);

#endif
