/*
 * dispatch.c: VAST's ICD dispatch table, filled from entries.h. Every object VAST hands out
 * points at this table, so the ICD loader (and LD_PRELOAD routing) reach vast_cl* for them.
 * Entries VAST does not support (GL/EGL sharing, device fission EXT) get stubs that return
 * the specification's error; Windows-only slots stay NULL (they are plain void * on Linux).
 */
#include "../interpose/api.h"

#include <stddef.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define VAST_API(ret, name, params, args, obj)
#define VAST_API_CUSTOM(ret, name, params, args)
#define VAST_API_EXT(ret, name, params, args)
#define VAST_UNSUPPORTED_INT(name, params, code)                                                  \
    static cl_int CL_API_CALL vast_##name params { return code; }
#define VAST_UNSUPPORTED_OBJ(ret, name, params, code)                                             \
    static ret CL_API_CALL vast_##name params                                                     \
    {                                                                                             \
        if (errcode_ret != NULL)                                                                  \
            *errcode_ret = code;                                                                  \
        return NULL;                                                                              \
    }
#define VAST_NULL_SLOT(name)
#include "../interpose/entries.h"
#pragma GCC diagnostic pop

const struct _cl_icd_dispatch vast_dispatch = {
#define VAST_API(ret, name, params, args, obj) .name = vast_##name,
#define VAST_API_CUSTOM(ret, name, params, args) .name = vast_##name,
#define VAST_API_EXT(ret, name, params, args) .name = vast_##name,
#define VAST_UNSUPPORTED_INT(name, params, code) .name = vast_##name,
#define VAST_UNSUPPORTED_OBJ(ret, name, params, code) .name = vast_##name,
#define VAST_NULL_SLOT(name) .name = NULL,
#include "../interpose/entries.h"
};
