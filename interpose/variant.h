/*
 * variant.h: the real kernels VAST runs for an application kernel. Three variants:
 *   original   the application's kernel, built as the application asked;
 *   paged      its translated paged-access form (translate/), built on first need;
 *   inspector  its translated inspector (page accessed sets), built on first need.
 * The program is translated once (for every device); each variant's program is built once
 * per device that launches it, for that device's page cache (its page shift and chunk count),
 * and pooled real kernels are handed out for the device their program was built for. Real kernel objects are pooled per application kernel, so concurrent launches of one
 * kernel never share a real kernel's arguments (the application keeps setting its own on
 * kernel->real). Called by launch.c, paged.c and pas.c.
 */
#ifndef VAST_INTERPOSE_VARIANT_H
#define VAST_INTERPOSE_VARIANT_H

#include "object.h"

struct translate_kernel;

/* PAGED: the paged program built with -D VAST_WHOLE (no iteration-range machinery: every
 * launch of every iteration); RANGES: the same program with the machinery, for the launches
 * of a resumable kernel in iteration ranges (translate/prelude.c, TR_RESUME). */
enum vast_variant {
    VAST_VARIANT_ORIGINAL,
    VAST_VARIANT_PAGED,
    VAST_VARIANT_INSPECTOR,
    VAST_VARIANT_RANGES,
    VAST_VARIANT_COUNT
};

/* The kernel's translation metadata, translating and building the paged programs on first
 * call; NULL when the kernel cannot be paged, with *why set to a static reason (the details
 * were logged once). Thread-safe. */
const struct translate_kernel *vast_variant_meta(cl_kernel kernel, cl_device_id device, const char **why);

/* The kernel's translation metadata if the program was translated already (never translates):
 * direct launches use it without paying for a translation; NULL when not known. */
const struct translate_kernel *vast_variant_meta_known(cl_kernel kernel);

/* Whether a launch may store through kernel argument `index`: what the translation says (a
 * __global pointer the kernel never stores to, a __constant pointer), else true. The memory
 * flags (CL_MEM_READ_ONLY, ...) are hints a program may break, so they never decide it. */
bool vast_variant_arg_written(const struct translate_kernel *tk, cl_uint index);

/* A real kernel of the variant for exclusive use until given back; NULL on failure (logged). */
cl_kernel vast_variant_take(cl_kernel kernel, enum vast_variant v, cl_device_id device);
void vast_variant_give(cl_kernel kernel, enum vast_variant v, cl_kernel real, cl_device_id device);

/* Background builds (prebuild.c): claims the program's translation for one (false when the
 * program has no source, or its translation was claimed or done already), and does it: the
 * translation and the paged variant, once; a launch that needs them while a background build
 * is doing them waits for it (the inspector is built by the first launch that needs it). Quiet: the
 * warnings and build errors are logged at the first launch that needs the variants. */
bool vast_variant_claim_prebuild(cl_program program);
void vast_variant_prebuild(cl_program program, cl_device_id device);

/* Free the pools of a kernel and the translation of a program (their destruction). */
void vast_variant_kernel_free(cl_kernel kernel);
void vast_variant_program_free(cl_program program);
/* A rebuild (clBuildProgram, clCompileProgram: new options, maybe new macros) makes the program's
 * translation and paged programs those of an earlier build: retired, they stay allocated until the
 * program goes (callers keep pointers into them past the lock), and the next launch translates
 * again. Unretire puts them back when the real rebuild did not happen (kernels attached). Program
 * lock held for both. */
struct vast_launch_program *vast_variant_program_retire(cl_program program);
void vast_variant_program_unretire(cl_program program, struct vast_launch_program *s);

#endif
