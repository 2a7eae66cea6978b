/* translate.h - OpenCL C source-to-source translation for VAST (translate/).
 * Pure functions: program source + build options in; paged-access program, inspector
 * program, per-kernel metadata and diagnostics out. No OpenCL runtime objects.
 * Called by interpose/ when a launch first needs paging; thread-safe (the mcpp
 * preprocessor is serialised internally). The runtime ABI of the generated kernels is
 * specified here and in translate/README.md; both must change together. */
#ifndef VAST_TRANSLATE_H
#define VAST_TRANSLATE_H

#include <stddef.h>
#include <stdint.h>

/* ---- Runtime ABI (version 2) ------------------------------------------------------
 * Both generated programs keep the application's kernel names. Every kernel keeps its
 * original parameters in order, except that each __global pointer parameter becomes a
 * `ulong` holding a 64-bit VIRTUAL address: the runtime lays the buffers of one launch
 * out page-aligned in one virtual space starting at page 1 (VA 0 is NULL; a NULL buffer
 * argument is passed as 0). Parameters appended after the original ones:
 *
 * Paged kernel:
 *   __global const uint *vast_lpt      look-ahead page table: entry per virtual page
 *   __global uchar *vast_pool0..3      frame pool chunks (unused ones: repeat chunk 0)
 *   __global uchar *vast_scratch       2 pages: [0,P) zero page (runtime zeroes it, kernels
 *                                      never write it), [P,2P) write sink
 *   __global uint *vast_faults         fault log (layout below)
 *   ulong4 vast_gsize                  .s012 original global size (1 for unused dims)
 *   ulong4 vast_goff                   .s012 original global work offset (0 unused dims)
 *   ulong4 vast_cfg                    .s0 page shift S (page size P = 1<<S, S in 9..30)
 *                                      .s1 number of LPT entries
 *                                      .s2 first, .s3 end (exclusive) flat work-group id
 *                                      of the partition (informational: see Launch)
 *   ulong4 vast_slab                   .s012 first real work-group of this launch per
 *                                      dimension; .s3 slices k per dimension: bits 0-20,
 *                                      21-41, 42-62 (0 = 1); see Launch
 * LPT entry: bits 31..30 pool chunk, bits 29..0 frame index in that chunk; frame address
 * = chunk + (index << S). TRANSLATE_NO_FRAME (0xffffffff) = page not resident. Pages at or
 * past .s1 are not resident.
 * Launch: real launches have no global work offset (drivers keep 32 bits of it: NVIDIA's
 * 2^31 arrives as 2^64 - 2^31) and a local size Lr (explicit; the runtime chooses it when the
 * application passed NULL) that divides the original one L by the slices k of vast_slab.s3
 * (k = 1: Lr = L). The original NDRange is cut into real work-groups of size Lr; real group
 * (r0,r1,r2) is real work-group v = vast_slab.s012 + r of that grid. The kernel computes in
 * 64 bits and reports the original launch: get_global_id = goff + v * Lr + local id,
 * get_group_id = v / k, get_local_id = (v % k) * Lr + local id, get_local_size = L,
 * get_num_groups, get_global_size, get_global_offset likewise. Flat real work-group id:
 * v0 + n0*(v1 + n1*v2), n = gsize / Lr (with k = 1, the original flat work-group id). The
 * runtime launches exactly the real work-groups of [.s2,.s3) (boxes of the grid), so kernels
 * have no guard: a uniform early return before a barrier is miscompiled by PoCL 3.1's
 * work-group code generation. Slices (k > 1) are for kernels whose work-items are
 * independent (no barriers, no __local memory).
 * Fault: a page without frame. Loads read the zero page, stores go to the sink; the
 * work-group sets a __local flag and all its later global stores go to the sink; the
 * page is appended to the fault log (a page below 2^32 - 1 equal to the last one the
 * work-group logged is dropped). The context is __local: every kernel opens with one
 * barrier that all work-items reach.
 * Fault log (uint words): [0] count (atomic; may exceed capacity = overflow: rerun the
 * whole range), [1] capacity in entries (runtime sets), [2..3] 0; entry k at 4+4k:
 * {flat work-group id low 32, virtual page low 32, virtual page high 32, bits 1..0: 1 = read /
 * 2 = write, bits 31..2: flat work-group id bits 61..32}.
 *
 * Inspector kernel:
 *   __global uchar *vast_pas           PAS: uchar[rows][pas_pages]; chunk = flat work-group
 *                                      id / wg_per_chunk (absolute, whole NDRange); byte
 *                                      [c - pascfg.s2][vp] set to 1 when chunk c touches
 *                                      virtual page vp
 *   __global uchar *vast_scratch       2 pages as above (loads yield 0, stores vanish)
 *   __global uint *vast_status         [0] loop step budget exhausted (nonzero: PAS may be
 *                                      incomplete), [1] accesses past pas_pages (count),
 *                                      [2] iterations remain past vast_iters.s1 (below),
 *                                      [3] a resumable loop found no record of s0 (below)
 *   ulong4 vast_gsize, vast_goff       as for the paged kernel
 *   ulong4 vast_cfg                    .s0 page shift, .s1 pas_pages, .s2/.s3 flat range
 *   ulong4 vast_pascfg                 .s0 wg_per_chunk (>= 1), .s1 loop step budget,
 *                                      .s2 first chunk of the PAS window: chunk c writes
 *                                      row c - .s2 (the runtime inspects a range of chunks
 *                                      at a time, .s2/.s3 of vast_cfg bounding its groups)
 *   ulong4 vast_slab                   as for the paged kernel; chunks count flat real
 *                                      work-groups
 * Page sets are exact for affine accesses; accesses through loaded values see zeros
 * (metadata data_dependent_addresses) and the paged kernel's fault protocol covers them.
 *
 * Kernels with iteration_ranges (struct translate_kernel) take, in both programs, one more
 * parameter after all the others: `ulong2 vast_iters`, the iterations [s0, s1) of each
 * work-item's grid-stride loops to run ((0, ~0): all).
 *
 * Resumable loops (resumable): after vast_iters, `__global uchar *vast_spill` and
 * `__global uchar *vast_spill_in`, real buffers (NULL: none; with vast_iters (0, ~0) neither is
 * touched). vast_spill holds two slots of records: per work-item w (flat global id over the
 * original NDRange, N items) at (slot * N + w) * spill_item_bytes: {ulong position, ulong done,
 * the loop's private variables}; then, from 2 * N * spill_item_bytes, per work-group g (flat
 * group id, G groups) at (slot * G + g) * spill_group_bytes: its __local variables. A run of
 * [s0, s1) with s0 > 0 restores from the record whose position is s0 (vast_spill_in's slots
 * first, then vast_spill's) and, when a work-item is cut at s1 (or finished earlier), writes
 * position s1 into the slot of vast_spill that does not hold s0: a retry of the range, or the
 * inspector reading the paged kernel's spill through vast_spill_in, finds the state at s0
 * again. A paged run that finds no record for s0 logs a fault on virtual page 0 (out of
 * bounds: the launch fails). The runtime fills a new spill area with 0xff (no position).
 *
 * Build options: the runtime may add -D VAST_PAGE_SHIFT=S (equal to vast_cfg.s0 of every
 * launch) and -D VAST_POOL_CHUNKS=N (1..4, the pool chunks in use) to the returned
 * build_options for either program; translations then use them as constants. */
#define TRANSLATE_ABI_VERSION 2
#define TRANSLATE_NO_FRAME 0xffffffffu
#define TRANSLATE_LPT_CHUNK_SHIFT 30
#define TRANSLATE_MAX_POOL_CHUNKS 4
#define TRANSLATE_FAULT_LOG_HEADER_WORDS 4
#define TRANSLATE_FAULT_ENTRY_WORDS 4
#define TRANSLATE_SCRATCH_PAGES 2

enum translate_arg_kind {
    TRANSLATE_ARG_SCALAR,          /* by value (scalar, vector or struct) */
    TRANSLATE_ARG_GLOBAL_POINTER,  /* becomes a ulong virtual address */
    TRANSLATE_ARG_CONSTANT_POINTER,/* unchanged: real buffer */
    TRANSLATE_ARG_LOCAL_POINTER,   /* unchanged */
    TRANSLATE_ARG_IMAGE,           /* unchanged */
    TRANSLATE_ARG_SAMPLER,         /* unchanged */
};

enum { TRANSLATE_READ = 1, TRANSLATE_WRITE = 2 };

struct translate_arg {
    char *name;
    char *type;           /* as spelled by clang, e.g. "__global float *" */
    enum translate_arg_kind kind;
    unsigned elem_size;   /* pointee size in bytes for pointers (0 if unknown/void), else size */
    unsigned access;      /* TRANSLATE_READ|TRANSLATE_WRITE for global pointers (conservative) */
};

/* ---- Host page sets: affine accesses (translate/affine.c, affine_eval.c) ----------------
 * When every __global access of a kernel is a subscript of one of its __global pointer
 * parameters (p[e], *(p + e), p[e].field, &p[e], vloadn(e, p), vstoren(v, e, p)) whose index
 * e is built from integer literals, integer scalar parameters, work-item functions with a
 * literal dimension, locals assigned only at their declaration, and the variables of counted
 * for loops, with + - * / % << >> unary minus, min, max and ?:, the translator describes
 * those accesses (translate_affine) and the runtime computes each work-group range's pages on
 * the host by interval arithmetic, without running the inspector. The sets are supersets of
 * what the work-items touch (guards and ?: conditions are ignored, a loop variable ranges
 * over its whole interval); a wrong description costs faults, never results, because the
 * paged kernel's fault protocol still covers every access.
 *
 * An expression is a postfix program of nodes. Every node carries the width and signedness
 * of its C type; the evaluator fails (the runtime then runs the inspector) when a node's
 * interval does not fit its type, so C's wrap-around never makes a set too small. */
enum translate_aop {
    TRANSLATE_AOP_CONST,         /* push v */
    TRANSLATE_AOP_ARG,           /* push scalar parameter v (its value as the node's type) */
    TRANSLATE_AOP_GLOBAL_ID,     /* push get_global_id(v) */
    TRANSLATE_AOP_LOCAL_ID,      /* get_local_id(v) */
    TRANSLATE_AOP_GROUP_ID,      /* get_group_id(v) */
    TRANSLATE_AOP_GLOBAL_SIZE,   /* get_global_size(v) */
    TRANSLATE_AOP_LOCAL_SIZE,    /* get_local_size(v) */
    TRANSLATE_AOP_NUM_GROUPS,    /* get_num_groups(v) */
    TRANSLATE_AOP_GLOBAL_OFFSET, /* get_global_offset(v) */
    TRANSLATE_AOP_LOOP,          /* push the variable of loops[v] */
    TRANSLATE_AOP_CAST,          /* pop a, push a converted to the node's type (fit-checked) */
    TRANSLATE_AOP_NEG,           /* pop a, push -a */
    TRANSLATE_AOP_ADD,           /* pop b, pop a, push a op b: */
    TRANSLATE_AOP_SUB,
    TRANSLATE_AOP_MUL,
    TRANSLATE_AOP_DIV,           /* C's truncating division */
    TRANSLATE_AOP_REM,
    TRANSLATE_AOP_SHL,
    TRANSLATE_AOP_SHR,
    TRANSLATE_AOP_MIN,
    TRANSLATE_AOP_MAX,
    TRANSLATE_AOP_EITHER,        /* pop b, pop a, push a or b (c ? a : b) */
};

struct translate_anode {
    unsigned char op;        /* enum translate_aop */
    unsigned char bits;      /* width of the node's C type: 8, 16, 32 or 64 */
    unsigned char is_signed;
    long long v;             /* CONST: value; ARG: parameter index; ids: dimension; LOOP: loop */
};

struct translate_aexpr {
    struct translate_anode *nodes; /* postfix; evaluates to one value */
    unsigned n;
};

/* A counted loop `for (T i = first; i CMP bound; step)`: i++, ++i, i += c (c > 0) with < or
 * <=; i--, --i, i -= c with > or >=; i is not assigned in the body. Its variable ranges over
 * [first, bound - 1] for <, [first, bound] for <=, [bound + 1, first] for >, [bound, first]
 * for >=. first and bound may use the variables of enclosing loops (lower indices). */
enum translate_acmp { TRANSLATE_ACMP_LT, TRANSLATE_ACMP_LE, TRANSLATE_ACMP_GT, TRANSLATE_ACMP_GE };

struct translate_aloop {
    struct translate_aexpr first, bound;
    struct translate_aexpr step; /* the step's magnitude (i++: 1); n = 0: unknown. When it and
                                    first are single values, the range ends at the last value
                                    the loop reaches (t < n, t += 16: n - 16 for n a multiple) */
    unsigned char cmp;       /* enum translate_acmp */
    unsigned char ranged;    /* 1: a loop whose iterations vast_iters restricts (iteration_ranges) */
};

/* A condition on a store (translate_asite.whole): holds when lhs < rhs (LT) or lhs <= rhs (LE),
 * both compared in their C type (the comparison's, after the usual conversions). */
struct translate_aguard {
    struct translate_aexpr lhs, rhs;
    unsigned char cmp;       /* TRANSLATE_ACMP_LT or TRANSLATE_ACMP_LE */
};

/* Bytes [offset, offset + bytes) of the buffer of parameter arg (a __global pointer).
 * whole = 1: the site is a plain store `p[e] = v` of a whole element (a scalar, or a vector
 * of 2, 4, 8 or 16 components: no padding) that every work-item whose guards all hold
 * executes: a statement of the kernel's body, or of then-branches of `if`s there, after only
 * statements that cannot leave the kernel but `if (c) return;` (the guards are the `if`
 * conditions and the negated return conditions: comparisons joined by && or, negated, ||).
 * Such a site writes every byte of its element for those work-items (translate_affine_written). */
struct translate_asite {
    unsigned arg;
    unsigned bytes;          /* the access's size: sizeof the element (vloadn: n elements) */
    unsigned access;         /* TRANSLATE_READ and/or TRANSLATE_WRITE */
    unsigned whole;          /* 1: a whole store, executed where every guard holds */
    struct translate_aexpr offset; /* in bytes (the index times the element size) */
    struct translate_aguard *guards;
    unsigned nguards;
    unsigned char range_part; /* iteration ranges: 0 the site runs in any range; 1 inside ranged loop
                                 range_loop; 2 after it (in the range where its loop ends) */
    unsigned range_loop;
};

struct translate_affine {
    struct translate_asite *sites;
    unsigned nsites;
    struct translate_aloop *loops; /* enclosing loops before the loops they enclose */
    unsigned nloops;
    unsigned char ranges; /* 1: every loop iteration ranges restrict is one of loops (ranged) and
                             every site is inside or after one, so the sets of an iteration
                             range can be evaluated (alaunch.iter_end) */
};

/* One launch as the evaluator sees it: the NDRange, the scalar arguments' recorded bytes
 * (args[i] / arg_sizes[i]; NULL for non-scalars), and a box of work-groups, inclusive
 * group ids of the original launch per dimension (unused dimensions: 0..0). */
struct translate_alaunch {
    unsigned dims;
    unsigned long long global_size[3], local_size[3], global_offset[3];
    const void *const *args;
    const size_t *arg_sizes;
    unsigned num_args;
    unsigned long long group_first[3], group_last[3];
    /* Iteration ranges (translate_kernel.iteration_ranges, translate_affine.ranges): when
     * iter_end != 0, only iterations [iter_first, iter_end) of the ranged loops (0-based, the
     * kernel's vast_iters) and the sites their range_part places there count. */
    unsigned long long iter_first, iter_end;
};

/* Calls range(ctx, site, lo, end) for byte ranges [lo, end) of site's buffer that together
 * hold every byte the box's work-items may access through it. Ranges are refined by splitting
 * the box and the loop ranges while a site's range spans more than `granule` bytes (a page)
 * and the refinement budget lasts, so strided accesses do not cover their gaps. lo may be
 * negative and end may pass the buffer: the caller clips. Returns 0, or -1 when the accesses
 * cannot be bounded for this launch (a node's interval does not fit its type, a division by
 * an interval holding 0, a missing argument); then the caller must inspect on the device. */
void translate_affine_free(struct translate_affine *a);
int translate_affine_ranges(const struct translate_affine *a, const struct translate_alaunch *l,
                            unsigned long long granule,
                            void (*range)(void *ctx, unsigned site, long long lo, long long end), void *ctx);

/* With iter_end set: *more = 1 when a work-item of the box may have iterations of a ranged loop
 * at or past iter_end (the inspector's vast_status[2]; an upper bound: it may say 1 where no
 * work-item has, never 0 where one has). Returns 0, or -1 when it cannot tell (no ranges, a
 * step that is not one positive value, an interval that does not fit). */
int translate_affine_more(const struct translate_affine *a, const struct translate_alaunch *l, int *more);

/* Traffic: the bytes one work-item of the box moves through the sites, estimated: each site's
 * bytes times the trip counts of the loops its offset names (their spans over the box over
 * their steps, so an upper bound for those loops; a site inside a loop whose variable it does
 * not use counts once). What a launch asks of the device's memory against what its buffers
 * hold, where the runtime tells kernels bound by their own work from those bound by the link
 * (issue 15). Returns 0, or -1 when a named loop's range or step (one positive value) cannot
 * be evaluated for this launch. */
int translate_affine_traffic(const struct translate_affine *a, const struct translate_alaunch *l, double *bytes);

/* Written ranges (translate/cover.c): calls range(ctx, site, lo, end) for byte ranges
 * [lo, end) of the buffer of a whole-store site (whole = 1) that the box's work-items
 * certainly write: the site's offset must be e = k + sum c_d * get_global_id(d) with one
 * |c_d| equal to its bytes, and each guard a bound on one global id by a value the same for
 * every work-item; each expression is evaluated exactly (every node's value fits its C type
 * over the work-items reported, else the site reports nothing). A subset: sites or launches
 * outside this class report nothing. Returns 0, or -1 when out of memory. */
int translate_affine_written(const struct translate_affine *a, const struct translate_alaunch *l,
                             void (*range)(void *ctx, unsigned site, long long lo, long long end), void *ctx);

struct translate_kernel {
    char *name;
    unsigned num_args;
    struct translate_arg *args;
    int paged_ok;                  /* paged + inspector kernels exist and are usable */
    int uses_global_atomics;
    int may_be_non_idempotent;     /* a buffer read and written, compound/++ or atomics */
    int data_dependent_addresses;  /* an address depends on loaded data: faults possible */
    int work_group_bound;          /* its work-items meet (barriers, __local memory, work-group
                                      builtins): a work-group cannot run in slices (vast_slab) */
    struct translate_affine *affine; /* host page sets (above); NULL: run the inspector */
    /* Grid-stride loops (translate/stride.c): 1 when both generated kernels take one more
     * parameter after all others, `ulong2 vast_iters`, and run only iterations [s0, s1) of
     * each work-item's loops (0-based; (0, ~0): all); running the ranges of a partition of
     * [0, ~0) in separate launches then equals one launch. The inspector sets vast_status[2]
     * when a work-item's loop has iterations at or past s1. */
    int iteration_ranges;
    /* Resumable loops (translate/resume.c): iteration_ranges and resumable are both 1 for a
     * kernel whose loop carries state from iteration to iteration; both kernels then take
     * `ulong2 vast_iters, __global uchar *vast_spill, __global uchar *vast_spill_in` after all
     * others (ABI above, "Resumable loops"). Record sizes: bytes per work-item (a multiple of
     * 8, position and done flag included) and per work-group (__local variables, 0: none). */
    int resumable;
    unsigned long long spill_item_bytes, spill_group_bytes;
};

struct translate_diag {
    char *kernel;     /* kernel affected (NULL: the whole program) */
    char *construct;  /* short name of the construct, e.g. "async_work_group_copy" */
    char *file;       /* application's file as in #line markers */
    unsigned line;    /* application's line */
    char *message;    /* why */
};

struct translate_options {
    const char *build_options;     /* the application's clBuildProgram options, or NULL */
    const char *device_extensions; /* CL_DEVICE_EXTENSIONS (space separated), or NULL */
    int image_support;             /* defines __IMAGE_SUPPORT__ when nonzero */
    const char *source_name;       /* file name used in #line markers; NULL: "input.cl" */
    unsigned opencl_version;       /* the device's OpenCL version (CL_DEVICE_VERSION), 100 * major +
                                      10 * minor, for __OPENCL_VERSION__; 0: 120 */
};

struct translate_result {
    char *paged_source;      /* OpenCL C of the program's version; NULL when it could not be parsed */
    char *inspector_source;  /* likewise */
    char *build_options;     /* options for building both: the input minus -D/-U/-I */
    struct translate_kernel *kernels;
    size_t num_kernels;
    struct translate_diag *diags;
    size_t num_diags;
    char *error;             /* NULL on success; else why the program was not translated */
    double seconds;          /* wall time spent translating */
};

/* Translates one program. Returns 0 and fills *out (always allocated; free with
 * translate_result_free) on success; on a program-wide failure returns -1 and
 * (*out)->error says why. Kernels with a diagnostic have paged_ok = 0 and are absent
 * from the generated programs. */
int translate_program(const char *source, const struct translate_options *opts,
                      struct translate_result **out);
void translate_result_free(struct translate_result *res);

/* A translation as bytes (translate/serial.c; VAST's persistent cache keeps them): every field,
 * in a versioned format that carries TRANSLATE_ABI_VERSION. Returns a malloc'ed buffer of *len
 * bytes, or NULL when out of memory. */
void *translate_result_pack(const struct translate_result *res, size_t *len);
/* The translation those bytes hold: 0 and *out (free with translate_result_free), or -1 when
 * they are not a whole translation of this format and ABI (*out NULL). Never trusts a length. */
int translate_result_unpack(const void *data, size_t len, struct translate_result **out);

#endif
