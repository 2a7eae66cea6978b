/*
 * api.h: the prototype of every vast_cl* implementation, produced from entries.h, so that
 * each implementation is checked by the compiler against the signature in <CL/cl_icd.h>.
 */
#ifndef VAST_INTERPOSE_API_H
#define VAST_INTERPOSE_API_H

#include <CL/cl_icd.h>

#define VAST_API(ret, name, params, args, obj) ret vast_##name params;
#define VAST_API_CUSTOM(ret, name, params, args) ret vast_##name params;
#define VAST_API_EXT(ret, name, params, args) ret vast_##name params;
#define VAST_UNSUPPORTED_INT(name, params, code)
#define VAST_UNSUPPORTED_OBJ(ret, name, params, code)
#define VAST_NULL_SLOT(name)
#include "entries.h"

#endif
