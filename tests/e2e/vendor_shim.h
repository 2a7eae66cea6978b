/* vendor_shim.h - what the test vendor libraries share (e2e/ids/offset32_icd.c,
 * e2e/faults/fault_icd.c): each is an ICD vendor library standing for the real one (the
 * library named by an environment variable, PoCL's) whose platforms it hands out after
 * patching their dispatch table. Header-only: each library is one MODULE of its own folder.
 *
 * The including file defines VENDOR_SHIM_ENV (the variable naming the real library) and
 * VENDOR_SHIM_NAME (its log prefix) before including this header, and, before or after it:
 *   static int shim_patch(cl_platform_id p);  (0 when patched)
 *   static void shim_loaded(void);            (once, after the real library loaded)
 * and gets the exported clIcdGetPlatformIDsKHR, and for shim_patch shim_writable and SHIM_SWAP. */
#ifndef VAST_TESTS_VENDOR_SHIM_H
#define VAST_TESTS_VENDOR_SHIM_H

#include <CL/cl_icd.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* For shim_patch: makes the dispatch table d writable (0 when it is), so that entries can be
 * replaced with SHIM_SWAP(slot, mine, keep) on the table named `d` in the caller: keep gets the
 * real entry, once (patching a table twice keeps the first real one). */
static int shim_writable(struct _cl_icd_dispatch *d)
{
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)d & ~(uintptr_t)(page - 1);
    uintptr_t hi = ((uintptr_t)(d + 1) + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
    return mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE) != 0 ? -1 : 0;
}

#define SHIM_SWAP(slot, mine, keep)                                                                                    \
    do {                                                                                                               \
        if (d->slot != (mine)) {                                                                                       \
            keep = d->slot;                                                                                            \
            d->slot = (mine);                                                                                          \
        }                                                                                                              \
    } while (0)

static int shim_patch(cl_platform_id p);
static void shim_loaded(void);

typedef cl_int (*shim_get_platforms_fn)(cl_uint, cl_platform_id *, cl_uint *);
static shim_get_platforms_fn shim_real_get;

static int shim_load(void)
{
    if (shim_real_get != NULL)
        return 0;
    const char *lib = getenv(VENDOR_SHIM_ENV);
    void *h = lib != NULL ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (h == NULL) {
        fprintf(stderr, "%s: cannot load %s='%s'\n", VENDOR_SHIM_NAME, VENDOR_SHIM_ENV, lib ? lib : "");
        return -1;
    }
    shim_real_get = (shim_get_platforms_fn)(uintptr_t)dlsym(h, "clIcdGetPlatformIDsKHR");
    void *(*addr)(const char *) = (void *(*)(const char *))(uintptr_t)dlsym(h, "clGetExtensionFunctionAddress");
    if (shim_real_get == NULL && addr != NULL)
        shim_real_get = (shim_get_platforms_fn)(uintptr_t)addr("clIcdGetPlatformIDsKHR");
    if (shim_real_get == NULL)
        return -1;
    shim_loaded();
    return 0;
}

__attribute__((visibility("default"))) cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint n, cl_platform_id *ids,
                                                                               cl_uint *count)
{
    if (shim_load() != 0)
        return CL_PLATFORM_NOT_FOUND_KHR;
    cl_uint c = 0;
    cl_int err = shim_real_get(0, NULL, &c);
    cl_platform_id all[16];
    if (err != CL_SUCCESS || c == 0 || c > 16 || (err = shim_real_get(c, all, NULL)) != CL_SUCCESS)
        return err != CL_SUCCESS ? err : CL_PLATFORM_NOT_FOUND_KHR;
    for (cl_uint i = 0; i < c; i++)
        if (shim_patch(all[i]) != 0)
            return CL_PLATFORM_NOT_FOUND_KHR;
    for (cl_uint i = 0; ids != NULL && i < n && i < c; i++)
        ids[i] = all[i];
    if (count != NULL)
        *count = c;
    return CL_SUCCESS;
}

#endif
