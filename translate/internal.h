/* internal.h - what the translate/ files share and nobody else sees.
 * The pipeline: options -> preprocess (mcpp) -> parse (libclang) -> walk (edits and
 * metadata) -> apply edits twice (paged, inspector). Offsets are byte offsets into the
 * preprocessed text, which is the only buffer libclang sees. */
#ifndef VAST_TRANSLATE_INTERNAL_H
#define VAST_TRANSLATE_INTERNAL_H

#include "cursor.h"
#include "strbuf.h"
#include "translate.h"

#include <clang-c/Index.h>

/* Parsed build options. */
struct tr_options {
    char **pp_args;   /* -D/-U/-I arguments for the preprocessor */
    size_t num_pp_args;
    char *cl_std;     /* "CL1.2" etc. */
    int opencl_c_version; /* 100, 110, 120, 300 */
    struct strbuf rest;   /* options passed on to the driver */
};

int tr_parse_options(const char *opts, struct tr_options *o, char **error);
void tr_free_options(struct tr_options *o);

/* Preprocesses source with mcpp; returns the text with #line markers naming
 * source_name, or NULL and *error. */
char *tr_preprocess(const char *source, const struct tr_options *o,
                    const struct translate_options *to, char **error);

/* ---- Edits: insertions and deletions on the preprocessed text, applied per variant. */
enum tr_variant { TR_PAGED = 0, TR_INSPECT = 1, TR_VARIANTS = 2 };

/* Bytes of the inspector's private store sink: the largest access that can use it (double16). */
#define TR_SINK_BYTES 128

struct tr_edit {
    unsigned offset;
    unsigned del_end;   /* > offset: delete [offset, del_end) (then insert text) */
    int close;          /* 1: closes a span ending here (sorted before opens) */
    unsigned span;      /* length of the enclosing span, orders nested edits */
    unsigned seq;
    char *text[TR_VARIANTS]; /* NULL: nothing for that variant */
};

struct tr_edits {
    struct tr_edit *v;
    size_t n, cap;
};

void tr_edit_add(struct tr_edits *e, unsigned offset, int close, unsigned span,
                 const char *paged, const char *inspect);
void tr_edit_delete(struct tr_edits *e, unsigned start, unsigned end, const char *paged,
                    const char *inspect);
char *tr_edits_apply(struct tr_edits *e, const char *text, size_t len, enum tr_variant v,
                     const char *prefix);
void tr_edits_free(struct tr_edits *e);

/* ---- Prelude and per-site helpers (prelude.c). */
const char *tr_prelude(enum tr_variant v);
const char *tr_kernel_params(enum tr_variant v);
const char *tr_kernel_prologue(enum tr_variant v);
/* Builds the vloadn/vstoren/..._half helper for builtin `name` on element type `elem`
 * (e.g. "float"); returns 0 and the helper's function name in *fn, text in *def, or -1
 * when the name is not a vector load/store. */
int tr_vector_helper(const char *name, const char *elem, unsigned elem_size, char **fn,
                     char **def);
/* Builds the helper of async_work_group_copy (strided: _strided_copy) whose __global side is
 * the destination (to_global) or the source, for gentype elem (e.g. "float") with n
 * components; returns 0 and the helper's name in *fn, text in *def, or -1 for another n. */
int tr_async_helper(int to_global, int strided, const char *elem, unsigned n, char **fn, char **def);

/* ---- The walk over one translation unit (walk.c, meta.c). */
#define TR_MASK_UNKNOWN (1ull << 63) /* pointer may come from anywhere */

struct tr_call {
    char *callee_usr;
    unsigned nargs;
    unsigned long long *arg_mask; /* per argument: caller parameters it may point into */
};

/* What one function does with global memory, in terms of its own parameters. */
#define TR_MAX_RANGED 16
struct tr_fn {
    char *usr, *name;
    CXCursor cursor;
    int is_kernel, has_body, has_diag;
    unsigned nparams;
    unsigned *param_access;   /* TRANSLATE_READ/WRITE per parameter */
    unsigned unknown_access;  /* accesses whose base pointer could not be resolved */
    int atomics, rmw, data_dependent;
    int work_group; /* barriers, __local variables or work-group builtins (translate_kernel) */
    struct tr_call *calls;
    size_t ncalls;
    /* Kernels: the spans of the loops whose iterations vast_iters restricts (stride.c, resume.c;
     * set before affine.c describes the kernel, which marks them ranged). */
    unsigned ranged[TR_MAX_RANGED][2];
    unsigned nranged;
};

struct tr_unit {
    CXTranslationUnit tu;
    const char *text;   /* preprocessed text */
    size_t len;
    struct tr_edits edits;
    struct strbuf helpers_seen; /* "\n"-separated helper names already defined */
    struct translate_kernel *kernels;
    size_t num_kernels;
    struct translate_diag *diags;
    size_t num_diags;
    unsigned loop_seq;
    struct tr_fn *fns;
    size_t nfns;
};

int tr_is_kernel(struct tr_unit *u, CXCursor fn); /* signature.c */

/* Walks every function in the unit, producing edits and recording diagnostics (with
 * the function's name as `kernel`; tr_meta_* maps helpers to kernels). */
void tr_walk_unit(struct tr_unit *u);
/* Rewrites a function's parameter list (and, for a kernel with a body, its prologue
 * after offset body_open; `counters` are the inspector's loop counters). */
void tr_rewrite_signature(struct tr_unit *u, struct tr_fn *fn, unsigned body_open,
                          const char *counters);
/* Fills u->kernels with metadata and marks kernels unusable when they or a function they
 * call carry a diagnostic; then deletes unusable kernels from the generated programs. */
void tr_meta_unit(struct tr_unit *u);
/* Accesses that may straddle a page (straddle.c): the alignment an access's address is known
 * to have (a packed struct's members: 1); whether an access of `size` bytes may straddle;
 * rewrites a load (asg NULL) or the left side of the plain assignment asg into a per-type
 * helper with a one-page fast path. Returns -1 when the type cannot be spelled. */
long long tr_access_align(CXCursor c);
int tr_may_straddle(CXCursor c, long long size);
int tr_straddle_rewrite(struct tr_unit *u, unsigned fn_start, int kernel, const struct tr_frame *f,
                        const struct tr_frame *asg, long long size);
/* A faulted work-group stays harmless (guard.c): barriers in c or the functions it calls;
 * whether c is an integer-capable division (/ % /= %=); guards of a division's divisor and of
 * a non-global subscript's index that depend on loaded data. */
int tr_has_barrier(struct tr_unit *u, CXCursor c);
int tr_is_division(CXCursor c);
void tr_guard_division(struct tr_unit *u, unsigned fn_start, CXCursor c);
void tr_guard_index(struct tr_unit *u, CXCursor c, int loaded);
/* Host page sets of a kernel with a body (affine.c): its __global accesses as affine-ish
 * offsets, or NULL when one is outside the supported class. */
struct translate_affine *tr_affine_kernel(struct tr_unit *u, struct tr_fn *fn);
/* Grid-stride loops (stride.c): 1 when the kernel's loops may run in iteration ranges, after
 * rewriting them and appending the `ulong2 vast_iters` parameter (translate.h); else 0. */
int tr_stride_kernel(struct tr_unit *u, struct tr_fn *fn);
/* What a subtree does (stride.c, helpers it calls included): touches __global memory (or
 * images, printf), calls a work-group function, uses __local memory, calls a helper. */
struct tr_scan {
    int global, sync, local, helper;
};
struct tr_scan tr_scan_subtree(struct tr_unit *u, CXCursor c);
/* Resumable loops (resume.c): 1 when the kernel's loop carrying state may run in iteration
 * ranges with its live state spilled between them, after rewriting it (translate.h,
 * resumable; k's spill sizes filled); else 0. */
int tr_resume_kernel(struct tr_unit *u, struct tr_fn *fn, struct translate_kernel *k);

#endif
