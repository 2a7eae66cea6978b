/*
 * driver.h: how every floor reaches a real OpenCL driver: through the dispatch table that the
 * real object's handle points at first (the ICD convention), never through the global cl*
 * symbols, which are VAST's own under LD_PRELOAD and would call VAST again.
 *
 * interpose/check.h builds VAST_REAL on it (a slot bounded by the real platform's OpenCL
 * version); icd/exports.c routes other platforms' handles with it.
 */
#ifndef VAST_BASE_DRIVER_H
#define VAST_BASE_DRIVER_H

#include <CL/cl_icd.h>
#include <stdio.h>

/* The dispatch table of the real object `obj` (any cl_* handle of a real platform). */
#define VAST_DISPATCH(obj) (*(const struct _cl_icd_dispatch *const *)(obj))

/* The version in a driver's version string ("OpenCL 3.0 <vendor text>": CL_PLATFORM_VERSION,
 * CL_DEVICE_VERSION); 0 and *major, *minor set, or -1 when the text is not of that form. */
static inline int vast_cl_version(const char *text, unsigned *major, unsigned *minor)
{
    return text != NULL && sscanf(text, "OpenCL %u.%u", major, minor) == 2 ? 0 : -1;
}

#endif
