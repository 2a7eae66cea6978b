/* meta.c - per-kernel metadata from the per-function facts of walk.c: argument kinds and
 * sizes, read/write use per argument (through helper calls, mapping each callee
 * parameter to the kernel arguments it may point into), atomics, re-execution safety and
 * data-dependent addressing. A kernel that reaches a function with a diagnostic is
 * marked unusable and deleted from both generated programs. Called by translate.c. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define MAX_CALL_DEPTH 32

struct kacc {
    struct translate_kernel *k;
    unsigned *access;   /* per kernel argument */
    int diag;
    const char *diag_fn;
};

static struct tr_fn *find_fn(struct tr_unit *u, const char *usr)
{
    struct tr_fn *decl = NULL;
    for (size_t i = 0; i < u->nfns; i++)
        if (!strcmp(u->fns[i].usr, usr)) {
            if (u->fns[i].has_body)
                return &u->fns[i];
            decl = &u->fns[i];
        }
    return decl;
}

static void add_access(struct kacc *a, unsigned long long m, unsigned use)
{
    /* Arguments from index 63 have no bit of their own: only TR_MASK_UNKNOWN reaches them. */
    for (unsigned i = 0; i < a->k->num_args; i++)
        if (m & TR_MASK_UNKNOWN || (i < 63 && m & (1ull << i)))
            if (a->k->args[i].kind == TRANSLATE_ARG_GLOBAL_POINTER)
                a->access[i] |= use;
}

/* masks[p]: kernel arguments parameter p of fn may point into. */
static void accumulate(struct tr_unit *u, struct tr_fn *fn, const unsigned long long *masks,
                       struct kacc *a, int depth)
{
    if (fn->has_diag && !a->diag)
        a->diag = 1, a->diag_fn = fn->name;
    if (!fn->has_body) {
        if (!a->diag)
            a->diag = 1, a->diag_fn = fn->name;
        return;
    }
    a->k->uses_global_atomics |= fn->atomics;
    a->k->may_be_non_idempotent |= fn->rmw;
    a->k->data_dependent_addresses |= fn->data_dependent;
    a->k->work_group_bound |= fn->work_group;
    for (unsigned p = 0; p < fn->nparams; p++)
        if (fn->param_access[p])
            add_access(a, masks[p], fn->param_access[p]);
    if (fn->unknown_access)
        add_access(a, TR_MASK_UNKNOWN, fn->unknown_access);
    if (depth >= MAX_CALL_DEPTH)
        return;
    for (size_t c = 0; c < fn->ncalls; c++) {
        struct tr_call *call = &fn->calls[c];
        struct tr_fn *callee = find_fn(u, call->callee_usr);
        if (!callee)
            continue;
        unsigned long long *cm = calloc(callee->nparams + 1, sizeof *cm);
        for (unsigned i = 0; i < callee->nparams && i < call->nargs; i++) {
            unsigned long long m = call->arg_mask[i];
            if (m & TR_MASK_UNKNOWN)
                cm[i] = TR_MASK_UNKNOWN;
            for (unsigned p = 0; p < fn->nparams && p < 63; p++)
                if (m & (1ull << p))
                    cm[i] |= masks[p];
        }
        accumulate(u, callee, cm, a, depth + 1);
        free(cm);
    }
}

static enum translate_arg_kind arg_kind(CXType t, unsigned *elem)
{
    CXType c = clang_getCanonicalType(t);
    long long s = clang_Type_getSizeOf(c);
    *elem = s > 0 ? (unsigned)s : 0;
    if (c.kind == CXType_Pointer) {
        CXType pt = clang_getPointeeType(c);
        long long ps = clang_Type_getSizeOf(pt);
        *elem = ps > 0 ? (unsigned)ps : 0;
        switch (tr_address_space(pt)) {
        case TR_AS_GLOBAL: return TRANSLATE_ARG_GLOBAL_POINTER;
        case TR_AS_LOCAL: return TRANSLATE_ARG_LOCAL_POINTER;
        case TR_AS_CONSTANT: return TRANSLATE_ARG_CONSTANT_POINTER;
        default: return TRANSLATE_ARG_SCALAR;
        }
    }
    if (c.kind == CXType_OCLSampler)
        return TRANSLATE_ARG_SAMPLER;
    if (c.kind >= CXType_OCLImage1dRO && c.kind <= CXType_OCLImage2dArrayMSAADepthRW)
        return TRANSLATE_ARG_IMAGE;
    return TRANSLATE_ARG_SCALAR;
}

static void fill_args(struct translate_kernel *k, struct tr_fn *fn)
{
    k->num_args = fn->nparams;
    k->args = calloc(fn->nparams + 1, sizeof *k->args);
    for (unsigned i = 0; i < fn->nparams; i++) {
        CXCursor p = clang_Cursor_getArgument(fn->cursor, i);
        CXString n = clang_getCursorSpelling(p);
        k->args[i].name = translate_strdup(clang_getCString(n));
        clang_disposeString(n);
        k->args[i].type = tr_cursor_type_spelling(p);
        k->args[i].kind = arg_kind(clang_getCursorType(p), &k->args[i].elem_size);
    }
}

void tr_meta_unit(struct tr_unit *u)
{
    for (size_t i = 0; i < u->nfns; i++) {
        struct tr_fn *fn = &u->fns[i];
        if (!fn->is_kernel || !fn->has_body)
            continue;
        u->kernels = translate_xrealloc(u->kernels, (u->num_kernels + 1) * sizeof *u->kernels);
        struct translate_kernel *k = &u->kernels[u->num_kernels++];
        memset(k, 0, sizeof *k);
        k->name = translate_strdup(fn->name);
        fill_args(k, fn);
        struct kacc a = {k, calloc(k->num_args + 1, sizeof(unsigned)), 0, NULL};
        unsigned long long *masks = calloc(fn->nparams + 1, sizeof *masks);
        for (unsigned p = 0; p < fn->nparams && p < 63; p++)
            masks[p] = 1ull << p;
        accumulate(u, fn, masks, &a, 0);
        for (unsigned p = 0; p < k->num_args; p++) {
            k->work_group_bound |= k->args[p].kind == TRANSLATE_ARG_LOCAL_POINTER;
            k->args[p].access = a.access[p];
            if (a.access[p] == (TRANSLATE_READ | TRANSLATE_WRITE))
                k->may_be_non_idempotent = 1;
        }
        k->paged_ok = !a.diag;
        fn->nranged = 0; /* the ranged loops first: the host description marks them */
        if (k->paged_ok)
            k->iteration_ranges = tr_stride_kernel(u, fn);
        if (k->paged_ok && !k->iteration_ranges)
            k->iteration_ranges = k->resumable = tr_resume_kernel(u, fn, k);
        if (k->paged_ok)
            k->affine = tr_affine_kernel(u, fn);
        if (a.diag && a.diag_fn && strcmp(a.diag_fn, fn->name))
            tr_diag_add(u, fn->cursor, fn->name, "helper", "calls %s, which cannot be "
                        "translated (see its diagnostic)", a.diag_fn);
        if (a.diag) {
            unsigned s, e;
            if (tr_cursor_span(fn->cursor, &s, &e) == 0)
                tr_edit_delete(&u->edits, s, e, "/* vast: kernel not translated */",
                               "/* vast: kernel not translated */");
        }
        free(masks);
        free(a.access);
    }
}
