/*
 * platform.h: the one VAST platform and its virtual devices, set up once from the real
 * devices icd/vendors.c chose. Root devices and the platform live as long as the library.
 */
#ifndef VAST_INTERPOSE_PLATFORM_H
#define VAST_INTERPOSE_PLATFORM_H

#include "object.h"

struct vast_real_device {
    struct vast_backend *backend;
    cl_device_id real;
};

/* Build the platform and one virtual device per real device (called once, by icd/icd.c). */
void vast_platform_setup(struct vast_backend *backends, size_t num_backends,
                         const struct vast_real_device *devices, size_t num_devices);

/* The VAST platform, or NULL when there is no real device to wrap. */
cl_platform_id vast_platform_get(void);

/* Root virtual devices, in order. */
size_t vast_platform_devices(cl_device_id **devices);

/* Query a real device (through its own dispatch table) into a malloc'ed buffer. */
void *vast_real_device_info(struct vast_backend *be, cl_device_id real, cl_device_info param,
                            size_t *size);

#endif
