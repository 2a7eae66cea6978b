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

/* The dispatch table of the real object `obj` (any cl_* handle of a real platform). */
#define VAST_DISPATCH(obj) (*(const struct _cl_icd_dispatch *const *)(obj))

#endif
