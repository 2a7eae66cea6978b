/* prelude.c - OpenCL C text the translator adds: the runtime side of the ABI in
 * translate.h (address translation, faults, work-group range remapping, PAS marking) and
 * the per-type helpers for vector loads/stores, which may cross a page boundary.
 * Everything here is OpenCL C 1.1/1.2 without extensions; helpers and prologues are one
 * line each so that the application's #line numbering is preserved. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Geometry shared by both variants: the original launch as the runtime passed it. Real
 * launches start at work-group (0,0,0) with no global work offset: drivers keep only 32 bits
 * of the offset (NVIDIA: 2^31 arrives as 2^64 - 2^31), so ids are computed here in 64 bits
 * from the slab's first work-group (vast_slab.s012). A real work-group may be a slice of an
 * original one (vast_slab.s3: slices per dimension); ids are reported as in the original, the
 * linear ids of OpenCL C 3.0 too (launches are uniform: the enqueued local size is the local
 * size; interpose refuses a global size that is not a multiple of the local size). */
#define TR_GEOMETRY                                                                       \
    "ulong vast_gsize_of(uint d, __local vast_ctx *cx) { return d == 0 ? cx->gsize.s0 : d == 1 ? " \
    "cx->gsize.s1 : d == 2 ? cx->gsize.s2 : 1; }\n"                                        \
    "size_t vast_get_global_size(uint d, __local vast_ctx *cx) { return (size_t)vast_gsize_of(d, " \
    "cx); }\n"                                                                             \
    "size_t vast_get_global_offset(uint d, __local vast_ctx *cx) { return (size_t)(d == 0 ? "      \
    "cx->goff.s0 : d == 1 ? cx->goff.s1 : d == 2 ? cx->goff.s2 : 0); }\n"                  \
    "uint vast_slices(uint d, __local vast_ctx *cx) { return d == 0 ? cx->ks.s0 : d == 1 ? "       \
    "cx->ks.s1 : d == 2 ? cx->ks.s2 : 1; }\n"                                              \
    "ulong vast_vgroup(uint d, __local vast_ctx *cx) { return d == 0 ? cx->slab.s0 + "             \
    "get_group_id(0) : d == 1 ? cx->slab.s1 + get_group_id(1) : d == 2 ? cx->slab.s2 + "   \
    "get_group_id(2) : 0; }\n"                                                             \
    "size_t vast_get_local_size(uint d, __local vast_ctx *cx) { return get_local_size(d) * "       \
    "vast_slices(d, cx); }\n"                                                              \
    "size_t vast_get_local_id(uint d, __local vast_ctx *cx) { uint k = vast_slices(d, cx); "       \
    "return k == 1 ? get_local_id(d) : (size_t)(vast_vgroup(d, cx) % k) * get_local_size(d) " \
    "+ get_local_id(d); }\n"                                                               \
    "size_t vast_get_global_id(uint d, __local vast_ctx *cx) { return (size_t)(vast_get_global_"   \
    "offset(d, cx) + vast_vgroup(d, cx) * get_local_size(d) + get_local_id(d)); }\n"       \
    "size_t vast_get_num_groups(uint d, __local vast_ctx *cx) { return (size_t)(vast_gsize_of(d, " \
    "cx) / vast_get_local_size(d, cx)); }\n"                                               \
    "size_t vast_get_group_id(uint d, __local vast_ctx *cx) { uint k = vast_slices(d, cx); "       \
    "return (size_t)(k == 1 ? vast_vgroup(d, cx) : vast_vgroup(d, cx) / k); }\n"           \
    "size_t vast_get_enqueued_local_size(uint d, __local vast_ctx *cx) { return "                  \
    "vast_get_local_size(d, cx); }\n"                                                      \
    "size_t vast_get_global_linear_id(__local vast_ctx *cx) { size_t i = 0; for (int d = 2; d >= " \
    "0; d--) i = i * vast_get_global_size((uint)d, cx) + (vast_get_global_id((uint)d, cx) - "   \
    "vast_get_global_offset((uint)d, cx)); return i; }\n"                                  \
    "size_t vast_get_local_linear_id(__local vast_ctx *cx) { size_t i = 0; for (int d = 2; d >= " \
    "0; d--) i = i * vast_get_local_size((uint)d, cx) + vast_get_local_id((uint)d, cx); return i; }\n" \
    "ulong vast_vgroups(uint d, __local vast_ctx *cx) { return vast_gsize_of(d, cx) / "            \
    "get_local_size(d); }\n"                                                               \
    "ulong vast_flat_group(__local vast_ctx *cx) { return vast_vgroup(0, cx) + vast_vgroups(0, "   \
    "cx) * (vast_vgroup(1, cx) + vast_vgroups(1, cx) * vast_vgroup(2, cx)); }\n"           \
    "void vast_set_slab(__local vast_ctx *cx, ulong4 slab) { cx->slab = slab; uint4 k = "          \
    "(uint4)((uint)(slab.s3 & 0x1fffff), (uint)((slab.s3 >> 21) & 0x1fffff), (uint)((slab.s3 " \
    ">> 42) & 0x1fffff), 1); cx->ks = max(k, (uint4)(1)); }\n"

/* Resumable loops (resume.c): the records of a work-item (and of its work-group) in the two
 * slots of a spill area, found by their position; byte copies of variables to and from them.
 * The machinery a kernel's text gets is written inside VAST_RG(...) (statements and operands)
 * and VAST_RI(type, offset, initializer) (a restoring initializer): the runtime builds the
 * program twice, with -D VAST_WHOLE (the machinery gone: launches of every iteration) and
 * without (launches in iteration ranges), because its mere presence costs the loop registers
 * (translate/README.md, "Resumable loops"). */
#define TR_RESUME                                                                         \
    "#ifdef VAST_WHOLE\n#define VAST_RG(...)\n#define VAST_RI(T, o, i) (i)\n#else\n"       \
    "#define VAST_RG(...) __VA_ARGS__\n"                                                   \
    "#define VAST_RI(T, o, i) (vast_rr != 0 ? *(__global const T *)(vast_rr + (o)) : (i))\n#endif\n" \
    "void vast_rs_put(__global uchar *d, const uchar *s, uint n) { for (uint i = 0; i < n; i++) d[i] = s[i]; }\n" \
    "void vast_rs_get(uchar *d, __global const uchar *s, uint n) { for (uint i = 0; i < n; i++) d[i] = s[i]; }\n" \
    "void vast_rs_lput(__global uchar *d, __local const uchar *s, uint n, uint i0, uint st) { for (uint i = i0; " \
    "i < n; i += st) d[i] = s[i]; }\n"                                                     \
    "void vast_rs_lget(__local uchar *d, __global const uchar *s, uint n, uint i0, uint st) { for (uint i = i0; " \
    "i < n; i += st) d[i] = s[i]; }\n"                                                     \
    "typedef struct { __global uchar *rr, *rw, *gr, *gw; } vast_rs_at;\n"                \
    "vast_rs_at vast_rs_find(__global uchar *sp, __global uchar *in, ulong s0, ulong R, ulong G, " \
    "__local vast_ctx *cx) { vast_rs_at a; a.rr = 0; a.rw = 0; a.gr = 0; a.gw = 0; if (sp == 0) return a; " \
    "ulong wi = 0, wg = 0; for (int d = 2; d >= 0; d--) { wi = wi * " \
    "vast_gsize_of((uint)d, cx) + (vast_get_global_id((uint)d, cx) - vast_get_global_offset((uint)d, cx)); " \
    "wg = wg * vast_get_num_groups((uint)d, cx) + vast_get_group_id((uint)d, cx); } ulong nwi = " \
    "vast_gsize_of(0, cx) * vast_gsize_of(1, cx) * vast_gsize_of(2, cx), nwg = vast_get_num_groups(0, cx) * " \
    "vast_get_num_groups(1, cx) * vast_get_num_groups(2, cx); ulong gb = 2 * nwi * R; uint ws = 0; if (s0 != " \
    "0) { if (in != 0 && *(__global const ulong *)(in + wi * R) == s0) { a.rr = in + wi * R; a.gr = in + gb + " \
    "wg * G; } else if (in != 0 && *(__global const ulong *)(in + (nwi + wi) * R) == s0) { a.rr = in + (nwi + " \
    "wi) * R; a.gr = in + gb + (nwg + wg) * G; } else if (*(__global const ulong *)(sp + wi * R) == s0) { a.rr " \
    "= sp + wi * R; a.gr = sp + gb + wg * G; ws = 1; } else if (*(__global const ulong *)(sp + (nwi + wi) * R) " \
    "== s0) { a.rr = sp + (nwi + wi) * R; a.gr = sp + gb + (nwg + wg) * G; } ws = *(__global const " \
    "ulong *)(sp + wi * R) == s0; } a.rw = sp + (ws * nwi + wi) * R; a.gw = sp + gb + (ws * nwg + wg) * G; return a; }\n"

/* Build-time constants: the runtime builds both programs for one page cache, whose page
 * size and number of pool chunks never change, so it may define VAST_PAGE_SHIFT (equal to
 * vast_cfg.s0) and VAST_POOL_CHUNKS (1..4). Translations then shift and mask by constants
 * and skip the chunk choice instead of reading the __local context, which a kernel must
 * reload after every barrier (MatrixMul's tile loop has two per iteration). Without them the
 * programs read the context, as before. */
#define TR_CONSTANTS                                                                      \
    "#ifndef VAST_POOL_CHUNKS\n#define VAST_POOL_CHUNKS 4\n#endif\n"                      \
    "#ifdef VAST_PAGE_SHIFT\n"                                                             \
    "uint vast_shift(__local vast_ctx *cx) { return VAST_PAGE_SHIFT; }\n"                  \
    "ulong vast_mask(__local vast_ctx *cx) { return ((ulong)1 << VAST_PAGE_SHIFT) - 1; }\n" \
    "#else\n"                                                                              \
    "uint vast_shift(__local vast_ctx *cx) { return cx->shift; }\n"                        \
    "ulong vast_mask(__local vast_ctx *cx) { return cx->mask; }\n"                         \
    "#endif\n"

/* Accesses that may straddle a page (straddle.c): the split path copies the bytes page piece
 * by page piece, each piece translated on its own (a fault on either page is handled as any
 * other; stores after a fault go to the sink). */
#define TR_STRADDLE_PAGED                                                                 \
    "void vast_copy_in(uchar *d, ulong va, uint n, __global const uint *lpt, __global uchar "  \
    "*p0, __global uchar *p1, __global uchar *p2, __global uchar *p3, ulong entries, __global " \
    "uchar *scratch, __local vast_ctx *cx) { for (uint k = 0; k < n;) { ulong a = va + k; uint " \
    "m = (uint)min((ulong)(n - k), vast_mask(cx) + 1 - (a & vast_mask(cx))); __global uchar *s " \
    "= vast_trr_k(a, lpt, p0, p1, p2, p3, entries, scratch, cx); for (uint j = 0; j < m; j++) " \
    "d[k + j] = s[j]; k += m; } }\n"                                                       \
    "void vast_copy_out(ulong va, const uchar *s, uint n, __global const uint *lpt, __global " \
    "uchar *p0, __global uchar *p1, __global uchar *p2, __global uchar *p3, ulong entries, "   \
    "__global uchar *scratch, __local vast_ctx *cx) { for (uint k = 0; k < n;) { ulong a = va " \
    "+ k; uint m = (uint)min((ulong)(n - k), vast_mask(cx) + 1 - (a & vast_mask(cx))); "       \
    "__global uchar *d = vast_trw_k(a, lpt, p0, p1, p2, p3, entries, scratch, cx); for (uint j " \
    "= 0; j < m; j++) d[j] = s[k + j]; k += m; } }\n"

/* A faulted work-group's values are fabricated (guard.c): an index into a private, __local or
 * __constant array computed from loaded data is clamped to the array (vast_ix), and a loop
 * whose condition depends on loaded data and whose body has a barrier exits, all work-items
 * together, once the work-group has faulted (vast_live: the flag read between two barriers is
 * the same for every work-item). */
#define TR_FAULTED                                                                        \
    "ulong vast_ix(ulong i, ulong n) { return i < n ? i : 0; }\n"                          \
    "int vast_live(__local vast_ctx *cx) { barrier(CLK_LOCAL_MEM_FENCE); int f = "          \
    "cx->wg_fault; barrier(CLK_LOCAL_MEM_FENCE); return !f; }\n"

/* The context lives in __local memory: its fields are the same for the whole work-group,
 * one work-item fills it and the kernel's first statement after that is an unconditional
 * barrier; only then does the guard return. A private context whose address is passed to
 * helpers and that stays live across a barrier following the guard's `return` is
 * miscompiled by PoCL 3.1 (pthread device, loops and cbs): measured, some work-items then
 * skip the application's own early `return` (FDTD3d, tests/e2e/translate case
 * fdtd_guard). Per-work-item state is kept out of the context: a work-item's fault is seen
 * through the volatile wg_fault it wrote itself, and the log's repeat filter is per
 * work-group (an atomic exchange). */
static const char paged_prelude[] =
    "/* VAST paged-access program (translate ABI 2): every __global access goes through "
    "the look-ahead page table. */\n"
    "typedef struct { __global const uint *lpt; __global uchar *pool0; __global uchar "
    "*pool1; __global uchar *pool2; __global uchar *pool3; __global uchar *scratch; "
    "__global uint *faults; ulong4 gsize; ulong4 goff; ulong4 slab; uint4 ks; ulong lpt_entries; ulong mask; ulong "
    "flat; uint shift; volatile int wg_fault; volatile uint last_fault; } vast_ctx;\n"
    TR_GEOMETRY TR_RESUME
    "void vast_fault(__local vast_ctx *cx, ulong vp, uint kind) { cx->wg_fault = 1; if (vp "
    "< 0xffffffffu && atomic_xchg(&cx->last_fault, (uint)vp) == (uint)vp) return; uint k = "
    "atomic_inc(cx->faults); if (k < cx->faults[1]) { __global uint *e = cx->faults + 4 + "
    "4 * (ulong)k; e[0] = (uint)cx->flat; e[1] = (uint)vp; e[2] = (uint)(vp >> 32); e[3] "
    "= kind | (uint)(cx->flat >> 32) << 2; } }\n"
    TR_CONSTANTS
    "VAST_OUTLINE __global uchar *vast_frame_k(ulong va, __global const uint *lpt, __global uchar *p0, "
    "__global uchar *p1, __global uchar *p2, __global uchar *p3, ulong entries, __global "
    "uchar *miss, __local vast_ctx *cx, uint kind) { ulong vp = va >> vast_shift(cx); uint e "
    "= vp < entries ? lpt[vp] : 0xffffffffu; if (e == 0xffffffffu) { vast_fault(cx, vp, "
    "kind); return miss + (va & vast_mask(cx)); } uint c = e >> 30; __global uchar *b = "
    "VAST_POOL_CHUNKS == 1 || c == 0 ? p0 : c == 1 ? p1 : c == 2 ? p2 : p3; return b + "
    "((ulong)(e & 0x3fffffffu) << vast_shift(cx)) + (va & vast_mask(cx)); }\n"
    "__global uchar *vast_trr_k(ulong va, __global const uint *lpt, __global uchar *p0, "
    "__global uchar *p1, __global uchar *p2, __global uchar *p3, ulong entries, __global "
    "uchar *scratch, __local vast_ctx *cx) { return vast_frame_k(va, lpt, p0, p1, p2, p3, "
    "entries, scratch, cx, 1); }\n"
    "__global uchar *vast_trw_k(ulong va, __global const uint *lpt, __global uchar *p0, "
    "__global uchar *p1, __global uchar *p2, __global uchar *p3, ulong entries, __global "
    "uchar *scratch, __local vast_ctx *cx) { __global uchar *sink = scratch + vast_mask(cx) "
    "+ 1; __global uchar *p = vast_frame_k(va, lpt, p0, p1, p2, p3, entries, sink, cx, 2); "
    "return cx->wg_fault ? sink + (va & vast_mask(cx)) : p; }\n"
    "__global uchar *vast_trr(ulong va, __local vast_ctx *cx) { return vast_trr_k(va, "
    "cx->lpt, cx->pool0, cx->pool1, cx->pool2, cx->pool3, cx->lpt_entries, cx->scratch, "
    "cx); }\n"
    "__global uchar *vast_trw(ulong va, __local vast_ctx *cx) { return vast_trw_k(va, "
    "cx->lpt, cx->pool0, cx->pool1, cx->pool2, cx->pool3, cx->lpt_entries, cx->scratch, "
    "cx); }\n"
    "void vast_init(__local vast_ctx *cx, __global const uint *lpt, __global uchar *p0, "
    "__global uchar *p1, __global uchar *p2, __global uchar *p3, __global uchar *scratch, "
    "__global uint *faults, ulong4 gsize, ulong4 goff, ulong4 cfg, ulong4 slab) { if (get_local_id(0) != "
    "0 || get_local_id(1) != 0 || get_local_id(2) != 0) return; cx->lpt = lpt; cx->pool0 = "
    "p0; cx->pool1 = p1; cx->pool2 = p2; cx->pool3 = p3; cx->scratch = scratch; cx->faults "
    "= faults; cx->gsize = gsize; cx->goff = goff; vast_set_slab(cx, slab); cx->shift = (uint)cfg.s0; cx->mask = "
    "((ulong)1 << cx->shift) - 1; cx->lpt_entries = cfg.s1; cx->wg_fault = 0; "
    "cx->last_fault = 0xffffffffu; cx->flat = vast_flat_group(cx); }\n"
    TR_STRADDLE_PAGED TR_FAULTED;

static const char inspect_prelude[] =
    "/* VAST inspector program (translate ABI 2): every __global access marks its page in "
    "the page accessed set; loads yield 0, stores vanish. */\n"
    "typedef struct { __global uchar *pas; __global uchar *scratch; __global uint *status; "
    "ulong4 gsize; ulong4 goff; ulong4 slab; uint4 ks; ulong pas_pages; ulong mask; ulong budget; ulong flat; uint "
    "shift; } vast_ctx;\n" TR_GEOMETRY TR_RESUME
    TR_CONSTANTS
    "VAST_OUTLINE void vast_mark_k(ulong va, __global uchar *row, ulong pages, __global uint *status, "
    "__local vast_ctx *cx) { ulong vp = va >> vast_shift(cx); if (vp < pages) { if "
    "(!row[vp]) row[vp] = 1; } else atomic_inc(status + 1); }\n"
    "__global uchar *vast_trr_k(ulong va, __global uchar *row, ulong pages, __global uint "
    "*status, __global uchar *scratch, __local vast_ctx *cx) { vast_mark_k(va, row, pages, "
    "status, cx); return scratch + (va & vast_mask(cx)); }\n"
    "__global uchar *vast_trw_k(ulong va, __global uchar *row, ulong pages, __global uint "
    "*status, __global uchar *scratch, __local vast_ctx *cx) { vast_mark_k(va, row, pages, "
    "status, cx); return scratch + vast_mask(cx) + 1 + (va & vast_mask(cx)); }\n"
    "uchar *vast_sink_k(ulong va, __global uchar *row, ulong pages, __global uint *status, "
    "__local vast_ctx *cx, uchar *b) { vast_mark_k(va, row, pages, status, cx); return b; }\n"
    "void vast_mark(ulong va, __local vast_ctx *cx) { vast_mark_k(va, cx->pas, "
    "cx->pas_pages, cx->status, cx); }\n"
    "__global uchar *vast_trr(ulong va, __local vast_ctx *cx) { return vast_trr_k(va, "
    "cx->pas, cx->pas_pages, cx->status, cx->scratch, cx); }\n"
    "__global uchar *vast_trw(ulong va, __local vast_ctx *cx) { return vast_trw_k(va, "
    "cx->pas, cx->pas_pages, cx->status, cx->scratch, cx); }\n"
    "uchar *vast_sink(ulong va, __local vast_ctx *cx, uchar *b) { return vast_sink_k(va, "
    "cx->pas, cx->pas_pages, cx->status, cx, b); }\n"
    "int vast_step(uint *n, __local vast_ctx *cx) { if (++*n <= cx->budget) return 1; "
    "cx->status[0] = 1; return 0; }\n"
    "void vast_init(__local vast_ctx *cx, __global uchar *pas, __global uchar *scratch, "
    "__global uint *status, ulong4 gsize, ulong4 goff, ulong4 cfg, ulong4 pascfg, ulong4 slab) { if "
    "(get_local_id(0) != 0 || get_local_id(1) != 0 || get_local_id(2) != 0) return; "
    "cx->gsize = gsize; cx->goff = goff; vast_set_slab(cx, slab); cx->shift = (uint)cfg.s0; cx->mask = ((ulong)1 << "
    "cx->shift) - 1; cx->pas_pages = cfg.s1; cx->budget = pascfg.s1; cx->scratch = "
    "scratch; cx->status = status; cx->flat = vast_flat_group(cx); cx->pas = pas + "
    "(cx->flat / pascfg.s0 - pascfg.s2) * cfg.s1; }\n"
    "void vast_mark_range(ulong va, uint n, __global uchar *row, ulong pages, __global uint "
    "*status, __local vast_ctx *cx) { for (ulong p = va >> vast_shift(cx); p <= (va + n - 1) >> "
    "vast_shift(cx); p++) vast_mark_k(p << vast_shift(cx), row, pages, status, cx); }\n"
    "ulong vast_ix(ulong i, ulong n) { return i < n ? i : 0; }\n";

const char *tr_prelude(enum tr_variant v)
{
    return v == TR_PAGED ? paged_prelude : inspect_prelude;
}

const char *tr_kernel_params(enum tr_variant v)
{
    return v == TR_PAGED
               ? "__global const uint *vast_lpt, __global uchar *vast_pool0, __global uchar "
                 "*vast_pool1, __global uchar *vast_pool2, __global uchar *vast_pool3, "
                 "__global uchar *vast_scratch, __global uint *vast_faults, ulong4 "
                 "vast_gsize, ulong4 vast_goff, ulong4 vast_cfg, ulong4 vast_slab"
               : "__global uchar *vast_pas, __global uchar *vast_scratch, __global uint "
                 "*vast_status, ulong4 vast_gsize, ulong4 vast_goff, ulong4 vast_cfg, ulong4 "
                 "vast_pascfg, ulong4 vast_slab";
}

const char *tr_kernel_prologue(enum tr_variant v)
{
    return v == TR_PAGED
               ? " __local vast_ctx vast_cx_s; __local vast_ctx *vast_cx = &vast_cx_s; "
                 "vast_init(vast_cx, vast_lpt, vast_pool0, vast_pool1, vast_pool2, "
                 "vast_pool3, vast_scratch, vast_faults, vast_gsize, vast_goff, vast_cfg, vast_slab); "
                 "barrier(CLK_LOCAL_MEM_FENCE);"
               : " __local vast_ctx vast_cx_s; __local vast_ctx *vast_cx = &vast_cx_s; "
                 "vast_init(vast_cx, vast_pas, vast_scratch, vast_status, vast_gsize, "
                 "vast_goff, vast_cfg, vast_pascfg, vast_slab); barrier(CLK_LOCAL_MEM_FENCE); "
                 "__global uchar *vast_pas_row = "
                 "vast_cx->pas;";
}

/* ---- vector loads and stores ----------------------------------------------------- */

struct vec_op {
    int store;        /* vstore* */
    int half;         /* *_half*: elements are half, values float/double */
    int aligned;      /* vloada_half / vstorea_half: stride 4 for n == 3 */
    unsigned n;       /* 1 for vload_half/vstore_half */
    char round[8];    /* "_rte" etc. for half stores */
};

static int parse_vec_name(const char *name, struct vec_op *op)
{
    memset(op, 0, sizeof *op);
    const char *p = name;
    if (!strncmp(p, "vload", 5))
        p += 5;
    else if (!strncmp(p, "vstore", 6))
        p += 6, op->store = 1;
    else
        return -1;
    if (*p == 'a' && !strncmp(p, "a_half", 6))
        op->aligned = 1, p++;
    if (!strncmp(p, "_half", 5))
        op->half = 1, p += 5;
    char *end;
    unsigned long n = strtoul(p, &end, 10);
    if (end == p)
        n = op->half ? 1 : 0;
    if (n != 1 && n != 2 && n != 3 && n != 4 && n != 8 && n != 16)
        return -1;
    if (n == 1 && !op->half)
        return -1;
    op->n = (unsigned)n;
    p = end;
    if (*p) {
        if (!op->half || !op->store || strlen(p) != 4 || strncmp(p, "_rt", 3))
            return -1;
        strcpy(op->round, p);
    }
    return 0;
}

static const char *component(unsigned k)
{
    static const char *names[] = {"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7",
                                  "s8", "s9", "sa", "sb", "sc", "sd", "se", "sf"};
    return names[k];
}

static void vec_type(char *buf, size_t size, const char *elem, unsigned n)
{
    if (n == 1)
        snprintf(buf, size, "%s", elem);
    else
        snprintf(buf, size, "%s%u", elem, n);
}

static void emit_load(struct strbuf *d, const char *name, const struct vec_op *op,
                      const char *elem, unsigned es, const char *fn)
{
    char rt[32];
    vec_type(rt, sizeof rt, op->half ? "float" : elem, op->n);
    const char *pt = op->half ? "half" : elem;
    unsigned stride = op->aligned && op->n == 3 ? 4 : op->n;
    strbuf_printf(d, "%s %s(size_t vast_o, ulong vast_va, __local vast_ctx *vast_cx) { ulong va = "
                     "vast_va + vast_o * %u; if (((va ^ (va + %u)) >> vast_cx->shift) == 0) "
                     "return %s(0, (const __global %s *)vast_trr(va, vast_cx)); return ",
                  rt, fn, stride * es, op->n * es - 1, name, pt);
    if (op->n > 1)
        strbuf_printf(d, "(%s)(", rt);
    for (unsigned k = 0; k < op->n; k++) {
        if (op->half)
            strbuf_printf(d, "%svload_half(0, (const __global half *)vast_trr(va + %u, "
                             "vast_cx))", k ? ", " : "", k * es);
        else
            strbuf_printf(d, "%s*(const __global %s *)vast_trr(va + %u, vast_cx)",
                          k ? ", " : "", pt, k * es);
    }
    strbuf_puts(d, op->n > 1 ? "); } " : "; } ");
}

static void emit_store(struct strbuf *d, const char *name, const struct vec_op *op,
                       const char *elem, unsigned es, const char *fn)
{
    char vt[32];
    vec_type(vt, sizeof vt, elem, op->n);
    const char *pt = op->half ? "half" : elem;
    unsigned stride = op->aligned && op->n == 3 ? 4 : op->n;
    strbuf_printf(d, "void %s(%s vast_v, size_t vast_o, ulong vast_va, __local vast_ctx *vast_cx) "
                     "{ ulong va = vast_va + vast_o * %u; if (((va ^ (va + %u)) >> "
                     "vast_cx->shift) == 0) { %s(vast_v, 0, (__global %s *)vast_trw(va, "
                     "vast_cx)); return; }",
                  fn, vt, stride * es, op->n * es - 1, name, pt);
    for (unsigned k = 0; k < op->n; k++) {
        char val[40];
        snprintf(val, sizeof val, op->n == 1 ? "vast_v" : "vast_v.%s", component(k));
        if (op->half)
            strbuf_printf(d, " vstore_half%s(%s, 0, (__global half *)vast_trw(va + %u, "
                             "vast_cx));", op->round, val, k * es);
        else
            strbuf_printf(d, " *(__global %s *)vast_trw(va + %u, vast_cx) = %s;", pt,
                          k * es, val);
    }
    strbuf_puts(d, " } ");
}

int tr_vector_helper(const char *name, const char *elem, unsigned elem_size, char **fn,
                     char **def)
{
    struct vec_op op;
    if (parse_vec_name(name, &op) != 0)
        return -1;
    unsigned es = op.half ? 2 : elem_size;
    struct strbuf f = {0}, d = {0};
    strbuf_printf(&f, "vast_%s_%s", name, elem);
    if (op.store)
        emit_store(&d, name, &op, elem, es, f.data);
    else
        emit_load(&d, name, &op, elem, es, f.data);
    *fn = strbuf_take(&f);
    *def = strbuf_take(&d);
    return 0;
}

/* ---- work-group copies ------------------------------------------------------------ */

/* async_work_group_copy and async_work_group_strided_copy with a __global side: the range
 * may cross pages, so the work-items of the work-group copy it element by element, each
 * element translated on its own (an element never straddles a page: natural alignment), a
 * work-item every local-size-th element. The helper returns the call's __local pointer, and
 * the rewritten call is the real builtin over that pointer and the scratch page with 0
 * elements: every argument is evaluated once, and the event (0, or one to join) is the real
 * builtin's, so wait_group_events and a later copy joining it work as before. Its barriers
 * (the __local side complete before a copy to global memory reads it; the copy complete when
 * the helper returns) are legal because every work-item must reach the copy with the same
 * arguments; wait_group_events then finds it done. A 3-component gentype is copied as the
 * 4-component one (OpenCL C 6.13.10). */
int tr_async_helper(int to_global, int strided, const char *elem, unsigned n, char **fn, char **def)
{
    if (n != 1 && n != 2 && n != 3 && n != 4 && n != 8 && n != 16)
        return -1;
    char t[32], c[32];
    vec_type(t, sizeof t, elem, n);
    vec_type(c, sizeof c, elem, n == 3 ? 4 : n);
    struct strbuf f = {0}, d = {0};
    strbuf_printf(&f, "vast_async_%s%s_%s", to_global ? "l2g" : "g2l", strided ? "_s" : "", t);
    if (to_global)
        strbuf_printf(&d, "const __local %s *%s(ulong vast_d, const __local %s *vast_s, size_t vast_n%s, "
                          "__local vast_ctx *vast_cx) { barrier(CLK_LOCAL_MEM_FENCE);",
                      t, f.data, t, strided ? ", size_t vast_k" : "");
    else
        strbuf_printf(&d, "__local %s *%s(__local %s *vast_d, ulong vast_s, size_t vast_n%s, "
                          "__local vast_ctx *vast_cx) {",
                      t, f.data, t, strided ? ", size_t vast_k" : "");
    strbuf_puts(&d, " size_t vast_l = get_local_id(0) + get_local_size(0) * (get_local_id(1) + "
                    "get_local_size(1) * get_local_id(2)), vast_m = get_local_size(0) * "
                    "get_local_size(1) * get_local_size(2); for (size_t vast_i = vast_l; vast_i < "
                    "vast_n; vast_i += vast_m) ");
    const char *step = strided ? "vast_i * vast_k" : "vast_i";
    if (to_global)
        strbuf_printf(&d, "*(__global %s *)vast_trw(vast_d + (ulong)(%s) * sizeof(%s), vast_cx) = "
                          "((const __local %s *)vast_s)[vast_i];",
                      c, step, c, c);
    else
        strbuf_printf(&d, "((__local %s *)vast_d)[vast_i] = *(const __global %s *)vast_trr(vast_s + "
                          "(ulong)(%s) * sizeof(%s), vast_cx);",
                      c, c, step, c);
    strbuf_printf(&d, " barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE); return vast_%c; } ",
                  to_global ? 's' : 'd');
    *fn = strbuf_take(&f);
    *def = strbuf_take(&d);
    return 0;
}
