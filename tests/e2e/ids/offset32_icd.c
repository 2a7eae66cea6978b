/* offset32_icd.c - a vendor library for tests (e2e/ids): the real platforms of another
 * vendor library (OFFSET32_REAL: PoCL's) with NVIDIA's treatment of launch geometry.
 * NVIDIA's OpenCL keeps only the low 32 bits, signed, of global_work_offset (2^31 arrives as
 * 2^64 - 2^31, 2^32 as 0); PoCL keeps all 64. Loaded as VAST_BACKEND, this library patches
 * the real library's dispatch table (the one its objects carry, so every call VAST makes
 * through them) so that clEnqueueNDRangeKernel truncates offsets the same way, refuses
 * global sizes of 2^32 or more per dimension, and counts launches whose offset or size it
 * changed or refused (stderr line at exit: "offset32: N launches beyond 32 bits"). */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl_icd.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define VENDOR_SHIM_ENV "OFFSET32_REAL"
#define VENDOR_SHIM_NAME "offset32"
#include "vendor_shim.h"

static cl_api_clEnqueueNDRangeKernel real_enqueue;
#define EXPORT __attribute__((visibility("default"))) /* the project builds with hidden visibility */

EXPORT unsigned long offset32_beyond; /* read by the test through dlsym */

static void report(void)
{
    fprintf(stderr, "offset32: %lu launches beyond 32 bits\n", offset32_beyond);
}

static cl_int CL_API_CALL enqueue32(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t *offset,
                                    const size_t *global, const size_t *local, cl_uint nw, const cl_event *w,
                                    cl_event *ev)
{
    size_t off[3] = {0, 0, 0};
    int changed = 0;
    for (cl_uint d = 0; d < dims && d < 3; d++) {
        if (global != NULL && global[d] >= ((size_t)1 << 32)) {
            offset32_beyond++;
            return CL_INVALID_GLOBAL_WORK_SIZE;
        }
        if (offset != NULL) {
            off[d] = (size_t)(int64_t)(int32_t)(uint32_t)offset[d];
            changed |= off[d] != offset[d];
        }
    }
    offset32_beyond += changed;
    return real_enqueue(q, k, dims, offset != NULL ? off : NULL, global, local, nw, w, ev);
}

static int shim_patch(cl_platform_id p)
{
    struct _cl_icd_dispatch *d = *(struct _cl_icd_dispatch **)p;
    if (shim_writable(d) != 0)
        return -1;
    SHIM_SWAP(clEnqueueNDRangeKernel, enqueue32, real_enqueue);
    return 0;
}

static void shim_loaded(void)
{
    atexit(report);
}
