/*
 * kcache.h: VAST's persistent cache of what it compiles (issue 17): translations
 * (translate/serial.c's bytes) and the real binaries of the paged and inspector programs
 * (CL_PROGRAM_BINARIES), kept in base/diskcache.h's folder (VAST_CACHE_DIR, VAST_CACHE_MAX)
 * so that a second process translates and builds nothing. Keys are SHA-256 over everything
 * the result depends on: the input source and build options, the real device's name, vendor
 * and version, the driver's version, the real platform (name, version, library), this build of
 * VAST (its ELF build id) and the translator's ABI; binaries also over the generated source
 * and the final options (VAST_PAGE_SHIFT, VAST_POOL_CHUNKS). A binary the driver rejects is
 * rebuilt from source. Binaries are kept where VAST_CACHE_BINARIES says (auto: not on PoCL). Called by variant.c; thread-safe.
 */
#ifndef VAST_INTERPOSE_KCACHE_H
#define VAST_INTERPOSE_KCACHE_H

#include "object.h"

#include <stdio.h>

struct translate_options;
struct translate_result;

/* translate_program for the device, through the cache (same contract). */
int vast_kcache_translate(cl_device_id dev, const char *source, const struct translate_options *opts,
                          struct translate_result **out);

/* A real program of src for dev on the backend's shared context, built with options: from the
 * cached binary, else from source. *status is CL_SUCCESS when it built, else the driver's error
 * (a failed program is returned for its build log; NULL when none could be made). *store says
 * that its binary belongs in the cache: the caller hands the program to vast_kcache_store once
 * it has published it, so that exporting the binary delays no launch. */
cl_program vast_kcache_build(cl_device_id dev, const char *src, const char *options, cl_int *status, bool *store);

/* Stores p's binary for dev (built from src with options) in the cache. */
void vast_kcache_store(cl_device_id dev, const char *src, const char *options, cl_program p);

/* One `vast: stats: cache ...` line (VAST_STATS=1), when anything was translated or built:
 * hits and misses of each kind, build_s (time translating and building on any thread, cache
 * lookups included) and critical_s (the launches' build time: what they waited for). */
void vast_kcache_stats_print(FILE *out, uint64_t critical_ns);

#endif
