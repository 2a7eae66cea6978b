/* walk.c - the rewriting walk: one pre-order pass over each function of the preprocessed
 * unit that emits edits for both variants and records what the function does with
 * global memory (struct tr_fn). Only memory accesses are rewritten; every pointer keeps
 * its type and holds a virtual address, so casts, arithmetic, locals and helpers need no
 * analysis. Invariant: an access is rewritten exactly once, at its maximal lvalue
 * (a[i].f, not a[i]; a vector, not its swizzle). Called by translate.c. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 512
#define MAX_VARS 256

enum use { USE_NONE = 0, USE_READ = TRANSLATE_READ, USE_WRITE = TRANSLATE_WRITE,
           USE_RW = TRANSLATE_READ | TRANSLATE_WRITE };


struct var {
    CXCursor decl;
    unsigned long long mask; /* parameters a pointer variable may point into */
    int tainted;             /* holds a value derived from loaded global data */
    int xtainted;            /* ... or from private/__local/__constant data or a call (guard.c) */
};

struct walk {
    struct tr_unit *u;
    struct tr_fn *fn;
    unsigned nparams;   /* parameters tracked: at most 64 (param_index) */
    struct var vars[MAX_VARS];
    unsigned nvars;
    int changed;        /* pre-pass: var facts grew */
    int emit;           /* 0: pre-pass (facts only), 1: edits */
    unsigned fn_start;  /* where helper definitions go */
    unsigned body_open; /* offset after the body's '{' */
    struct strbuf counters; /* inspector loop counters, declared at body start */
    int sink_declared;      /* counters holds the inspector's private store sink */
    struct tr_frame st[MAX_DEPTH];
    int depth;
};

static enum CXChildVisitResult walk_node(CXCursor c, CXCursor parent, CXClientData d);

/* ---- small helpers --------------------------------------------------------------- */

static int cursor_is(CXCursor a, CXCursor b)
{
    return clang_equalCursors(a, b);
}

static struct var *find_var(struct walk *w, CXCursor decl, int create)
{
    for (unsigned i = 0; i < w->nvars; i++)
        if (cursor_is(w->vars[i].decl, decl))
            return &w->vars[i];
    if (!create || w->nvars == MAX_VARS)
        return NULL;
    struct var *v = &w->vars[w->nvars++];
    memset(v, 0, sizeof *v);
    v->decl = decl;
    return v;
}

/* The parameters a walk tracks: the first 64 (argument masks end at bit 63). */
static int param_index(struct walk *w, CXCursor decl)
{
    return tr_param_index(w->fn->cursor, w->nparams, decl);
}

/* ---- facts about expressions ----------------------------------------------------- */

struct expr_scan {
    struct walk *w;
    int loads;        /* contains a global read, an atomic call or a tainted variable */
    int wide;         /* also count reads of other arrays and pointers, xtainted variables, a
                         helper's scalar parameters and program function calls: whatever may
                         carry a fabricated value in a faulted work-group (guard.c) */
};

static enum CXChildVisitResult scan_taint(CXCursor c, CXCursor p, CXClientData d)
{
    (void)p;
    struct expr_scan *s = d;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (tr_is_global_access(c))
        s->loads = 1;
    if (k == CXCursor_DeclRefExpr) {
        CXCursor d = clang_getCursorReferenced(c);
        struct var *v = find_var(s->w, d, 0);
        if (v && (v->tainted || (s->wide && v->xtainted)))
            s->loads = 1;
        if (s->wide && !s->w->fn->is_kernel && clang_getCursorKind(d) == CXCursor_ParmDecl)
            s->loads = 1;
    }
    if (k == CXCursor_CallExpr) {
        CXString n = clang_getCursorSpelling(c);
        if (!strncmp(clang_getCString(n), "atom", 4))
            s->loads = 1;
        clang_disposeString(n);
        if (s->wide && tr_find_fn(s->w->u, clang_getCursorReferenced(c)))
            s->loads = 1;
    }
    if (s->wide && (k == CXCursor_ArraySubscriptExpr ||
                    (k == CXCursor_UnaryOperator &&
                     clang_getCursorUnaryOperatorKind(c) == CXUnaryOperator_Deref)))
        s->loads = 1;
    return s->loads ? CXChildVisit_Break : CXChildVisit_Recurse;
}

static int expr_scan_run(struct walk *w, CXCursor e, int wide)
{
    struct expr_scan s = {w, 0, wide};
    scan_taint(e, e, &s);
    if (!s.loads)
        clang_visitChildren(e, scan_taint, &s);
    return s.loads;
}

static int expr_loads(struct walk *w, CXCursor e)
{
    return expr_scan_run(w, e, 0);
}

/* Whether e's value may be fabricated in a faulted work-group (struct expr_scan's wide). */
static int expr_xloads(struct walk *w, CXCursor e)
{
    return expr_scan_run(w, e, 1);
}

static unsigned long long pointer_mask(struct walk *w, CXCursor e);

static unsigned long long lvalue_base(struct walk *w, CXCursor lv)
{
    enum CXCursorKind k = clang_getCursorKind(lv);
    if (k == CXCursor_ArraySubscriptExpr) {
        CXCursor a = tr_nth_child(lv, 0), b = tr_nth_child(lv, 1);
        return clang_getCanonicalType(clang_getCursorType(a)).kind == CXType_Pointer
                   ? pointer_mask(w, a) : pointer_mask(w, b);
    }
    if (k == CXCursor_UnaryOperator)
        return pointer_mask(w, tr_nth_child(lv, 0));
    if (k == CXCursor_MemberRefExpr) {
        CXCursor b = tr_nth_child(lv, 0);
        if (clang_Cursor_isNull(b))
            return TR_MASK_UNKNOWN;
        return clang_getCanonicalType(clang_getCursorType(b)).kind == CXType_Pointer
                   ? pointer_mask(w, b) : lvalue_base(w, b);
    }
    if (k == CXCursor_ParenExpr || k == CXCursor_UnexposedExpr)
        return lvalue_base(w, tr_nth_child(lv, 0));
    return k == CXCursor_DeclRefExpr ? 0 : TR_MASK_UNKNOWN;
}

struct mask_acc {
    struct walk *w;
    unsigned long long m;
};

static enum CXChildVisitResult mask_children(CXCursor c, CXCursor p, CXClientData d)
{
    (void)p;
    struct mask_acc *a = d;
    a->m |= pointer_mask(a->w, c);
    return CXChildVisit_Continue;
}

/* Which of the current function's parameters a pointer-valued expression may point into. */
static unsigned long long pointer_mask(struct walk *w, CXCursor e)
{
    enum CXCursorKind k = clang_getCursorKind(e);
    switch (k) {
    case CXCursor_DeclRefExpr: {
        CXCursor d = clang_getCursorReferenced(e);
        int pi = param_index(w, d);
        if (pi >= 0)
            return pi < 63 ? 1ull << pi : TR_MASK_UNKNOWN;
        if (clang_getCursorKind(d) == CXCursor_ParmDecl) /* past the 64 params kept in w->params */
            return TR_MASK_UNKNOWN;
        struct var *v = find_var(w, d, 0);
        return v ? v->mask : 0;
    }
    case CXCursor_IntegerLiteral:
    case CXCursor_TypeRef:
        return 0;
    case CXCursor_UnaryOperator:
        if (clang_getCursorUnaryOperatorKind(e) == CXUnaryOperator_AddrOf)
            return lvalue_base(w, tr_nth_child(e, 0));
        break;
    case CXCursor_ArraySubscriptExpr:
    case CXCursor_MemberRefExpr:
    case CXCursor_CallExpr:
        return TR_MASK_UNKNOWN; /* a pointer loaded from memory or returned */
    default:
        break;
    }
    if (k == CXCursor_UnaryOperator && clang_getCursorUnaryOperatorKind(e) ==
                                           CXUnaryOperator_Deref)
        return TR_MASK_UNKNOWN;
    struct mask_acc a = {w, 0};
    clang_visitChildren(e, mask_children, &a);
    return a.m;
}

/* Pre-pass fact for `var = expr` or `T var = expr`. */
static void note_assignment(struct walk *w, CXCursor var_decl, CXCursor rhs)
{
    struct var *v = find_var(w, var_decl, 1);
    if (!v)
        return;
    unsigned long long m = v->mask;
    int t = v->tainted, xt = v->xtainted;
    if (clang_getCanonicalType(clang_getCursorType(var_decl)).kind == CXType_Pointer)
        v->mask |= pointer_mask(w, rhs);
    if (!v->tainted && expr_loads(w, rhs))
        v->tainted = 1;
    if (!v->xtainted && (v->tainted || expr_xloads(w, rhs)))
        v->xtainted = 1;
    if (v->mask != m || v->tainted != t || v->xtainted != xt)
        w->changed = 1;
}

/* ---- diagnostics ----------------------------------------------------------------- */

static void fn_diag(struct walk *w, const char *construct, const char *fmt, const char *arg)
{
    if (!w->emit)
        return;
    w->fn->has_diag = 1;
    tr_diag_add(w->u, w->st[w->depth - 1].c, w->fn->name, construct, fmt, arg);
}

/* ---- accesses -------------------------------------------------------------------- */

/* How the lvalue at stack depth `at` is used: decided by its parents. */
static enum use access_use(struct walk *w, int at)
{
    for (int cur = at; cur > 0; cur--) {
        struct tr_frame *p = &w->st[cur - 1], *me = &w->st[cur];
        CXType mt = clang_getCanonicalType(clang_getCursorType(me->c));
        switch (p->kind) {
        case CXCursor_ParenExpr:
            continue;
        case CXCursor_MemberRefExpr:
            return mt.kind == CXType_Record ? USE_NONE : USE_READ; /* '.' vs '->' */
        case CXCursor_UnexposedExpr:
            if (p->start < me->start || p->end > me->end)
                continue; /* vector swizzle: the vector is accessed, as its parent says */
            return USE_READ;
        case CXCursor_UnaryExpr:
            return USE_NONE; /* sizeof, vec_step: unevaluated */
        case CXCursor_UnaryOperator:
            switch (clang_getCursorUnaryOperatorKind(p->c)) {
            case CXUnaryOperator_AddrOf:
                return USE_NONE;
            case CXUnaryOperator_PostInc:
            case CXUnaryOperator_PostDec:
            case CXUnaryOperator_PreInc:
            case CXUnaryOperator_PreDec:
                return USE_RW;
            default:
                return USE_READ;
            }
        case CXCursor_BinaryOperator:
            return clang_getCursorBinaryOperatorKind(p->c) == CXBinaryOperator_Assign &&
                           me->index == 0 ? USE_WRITE : USE_READ;
        case CXCursor_CompoundAssignOperator:
            return me->index == 0 ? USE_RW : USE_READ;
        default:
            return USE_READ;
        }
    }
    return USE_READ;
}

static int type_spelling_ok(const char *s)
{
    return !strstr(s, "(unnamed") && !strstr(s, "(anonymous") && !strstr(s, "__attribute__");
}

/* The inspector's pure stores (`E = v`, no read) go to a private byte array that nothing
 * reads, after marking the page: the driver's dead-store elimination then removes the store
 * and every computation that only fed it (MatrixMul's k-loop), which a store to the global
 * sink kept alive (the inspector cost more than the kernel). Read-modify-writes keep the
 * global sink: their loaded value may steer control flow, and a private one would be
 * uninitialised. The type is spelled without its address space; a spelling that still names
 * one (a typedef'd global type) keeps the global sink. */
static char *strip_global(const char *c)
{
    const char *at = strstr(c, "__global ");
    if (at == NULL)
        return NULL;
    struct strbuf b = {0};
    strbuf_append(&b, c, (size_t)(at - c));
    strbuf_puts(&b, at + strlen("__global "));
    char *r = strbuf_take(&b);
    if (strstr(r, "global") || strstr(r, "volatile") || !type_spelling_ok(r)) {
        free(r);
        r = NULL;
    }
    return r;
}

/* The type as written (float4 stays float4), else its canonical form (a typedef of a
 * global type only names the address space there). */
static char *private_spelling(CXType t)
{
    char *r = NULL;
    CXType forms[2] = {t, clang_getCanonicalType(t)};
    for (int i = 0; i < 2 && r == NULL; i++) {
        CXString s = clang_getTypeSpelling(forms[i]);
        r = strip_global(clang_getCString(s));
        clang_disposeString(s);
    }
    return r;
}

static void declare_sink(struct walk *w)
{
    if (w->sink_declared)
        return;
    w->sink_declared = 1;
    strbuf_printf(&w->counters, " uchar vast_sink_b[%d] __attribute__((aligned(%d)));", TR_SINK_BYTES,
                  TR_SINK_BYTES);
}

/* Whether the inspector may replace the load of access f (type t) by a constant zero:
 * arithmetic scalars (half only through vload_half) and vectors of them, unless f is the base
 * of a subscript (v[0] of a vector, which may be assigned: the value must stay an lvalue). */
static int zero_load_ok(const struct walk *w, const struct tr_frame *f, CXType t)
{
    int at = (int)(f - w->st), par = at - 1;
    while (par >= 0 && w->st[par].kind == CXCursor_ParenExpr)
        par--;
    if (par >= 0 && w->st[par].kind == CXCursor_ArraySubscriptExpr && w->st[par + 1].index == 0)
        return 0;
    t = clang_getCanonicalType(t);
    if (t.kind == CXType_ExtVector || t.kind == CXType_Vector)
        t = clang_getCanonicalType(clang_getElementType(t));
    switch (t.kind) {
    case CXType_Char_S: case CXType_SChar: case CXType_Char_U: case CXType_UChar:
    case CXType_Short: case CXType_UShort: case CXType_Int: case CXType_UInt:
    case CXType_Long: case CXType_ULong: case CXType_Float: case CXType_Double:
        return 1;
    default:
        return 0;
    }
}

/* The edits of one access E of type t (spelled ty): paged and inspector text around it.
 * In a kernel's own body the page table, pools, scratch pages and PAS row are its
 * parameters or private copies (uniform, no __local reload after barriers); helpers reach
 * them through the context. Measured on the H200 (MatrixMul, tests/bench/xlat_bench.c): the paged
 * kernel at 1.05x the original's time with the fault branch returning the scratch page
 * itself, against 1.20x when it returned NULL for a second test; the inspector at 0.41x
 * with kernel-parameter marks and constant-zero loads, against 0.56x through the context
 * and the zero page. The inspector's plain loads of arithmetic type become (mark, (T)0): the
 * value is the zero page's, and no load is left for the driver to keep. */
static void emit_access(struct walk *w, struct tr_frame *f, CXType t, const char *ty, long long size, enum use use)
{
    char rw = use & USE_WRITE ? 'w' : 'r';
    int k = w->fn->is_kernel;
    const char *sfx = k ? "_k" : "";
    const char *iargs = k ? "vast_pas_row, vast_cfg.s1, vast_status, " : "";
    struct strbuf open = {0}, iopen = {0}, iclose = {0};
    strbuf_printf(&open, "(*(%s *)vast_tr%c%s((ulong)&(", ty, rw, sfx);
    const char *pclose = k ? "), vast_lpt, vast_pool0, vast_pool1, vast_pool2, vast_pool3, vast_cfg.s1, "
                             "vast_scratch, vast_cx))"
                           : "), vast_cx))";
    char *pty = (use == USE_WRITE && size <= TR_SINK_BYTES) || (use == USE_READ && zero_load_ok(w, f, t))
                    ? private_spelling(t)
                    : NULL;
    if (pty != NULL && use == USE_READ) {
        strbuf_printf(&iopen, "(vast_mark%s((ulong)&(", sfx);
        strbuf_printf(&iclose, "), %svast_cx), (%s)0)", iargs, pty);
    } else if (pty != NULL) {
        strbuf_printf(&iopen, "(*(%s *)vast_sink%s((ulong)&(", pty, sfx);
        strbuf_printf(&iclose, "), %svast_cx, vast_sink_b))", iargs);
        declare_sink(w);
    } else {
        strbuf_printf(&iopen, "(*(%s *)vast_tr%c%s((ulong)&(", ty, rw, sfx);
        strbuf_printf(&iclose, "), %s%svast_cx))", iargs, k ? "vast_scratch, " : "");
    }
    unsigned span = f->end - f->start;
    tr_edit_add(&w->u->edits, f->start, 0, span, open.data, iopen.data);
    tr_edit_add(&w->u->edits, f->end, 1, span, pclose, iclose.data);
    strbuf_free(&open);
    strbuf_free(&iopen);
    strbuf_free(&iclose);
    free(pty);
}

/* The plain assignment whose left side is the access at stack depth `at`, or NULL. */
static const struct tr_frame *assigned_by(const struct walk *w, int at)
{
    const struct tr_frame *p = at > 0 ? &w->st[at - 1] : NULL;
    if (p && p->kind == CXCursor_BinaryOperator && w->st[at].index == 0 &&
        clang_getCursorBinaryOperatorKind(p->c) == CXBinaryOperator_Assign)
        return p;
    return NULL;
}

/* An access that may straddle a page (straddle.c): a load, or the left side of `E = V`. */
static void rewrite_straddling(struct walk *w, struct tr_frame *f, enum use use, long long size,
                               const char *ty)
{
    int at = (int)(f - w->st);
    const struct tr_frame *asg = use == USE_WRITE ? assigned_by(w, at) : NULL;
    if ((use == USE_READ || asg != NULL) && type_spelling_ok(ty)) {
        if (!w->emit || tr_straddle_rewrite(w->u, w->fn_start, w->fn->is_kernel, f, asg, size) == 0)
            return;
    }
    fn_diag(w, "straddling-access", "access to '%s' could straddle a page boundary and is not a "
            "plain load or a plain assignment of the whole value: access its members instead", ty);
}

static void rewrite_access(struct walk *w, struct tr_frame *f, enum use use)
{
    CXType t = clang_getCursorType(f->c);
    long long size = clang_Type_getSizeOf(t);
    char *ty = tr_cursor_type_spelling(f->c);
    if (tr_may_straddle(f->c, size)) {
        rewrite_straddling(w, f, use, size, ty);
    } else if (!type_spelling_ok(ty)) {
        fn_diag(w, "unnamed-type", "access of type '%s' that cannot be spelled in source",
                ty);
    } else if (w->emit) {
        emit_access(w, f, t, ty, size, use);
    }
    free(ty);
}

static enum CXChildVisitResult scan_address(CXCursor c, CXCursor p, CXClientData d)
{
    (void)p;
    struct expr_scan *s = d;
    CXType t = clang_getCanonicalType(clang_getCursorType(c));
    if (tr_is_global_access(c) && t.kind == CXType_Record) /* same access: s[i] of s[i].f */
        clang_visitChildren(c, scan_address, s);
    else if (expr_loads(s->w, c))
        s->loads = 1;
    return s->loads ? CXChildVisit_Break : CXChildVisit_Continue;
}

/* Whether the address of an access depends on loaded data (x[col[j]]). */
static int address_loads(struct walk *w, CXCursor access)
{
    struct expr_scan s = {w, 0, 0};
    clang_visitChildren(access, scan_address, &s);
    return s.loads;
}

static void visit_access(struct walk *w)
{
    struct tr_frame *f = &w->st[w->depth - 1];
    enum use use = access_use(w, w->depth - 1);
    if (use == USE_NONE)
        return;
    unsigned long long m = lvalue_base(w, f->c);
    if (m & TR_MASK_UNKNOWN)
        w->fn->unknown_access |= use;
    for (unsigned i = 0; i < w->nparams && i < 63; i++)
        if (m & (1ull << i))
            w->fn->param_access[i] |= use;
    if (use & USE_WRITE && use & USE_READ)
        w->fn->rmw = 1;
    if (address_loads(w, f->c))
        w->fn->data_dependent = 1;
    rewrite_access(w, f, use);
}

/* ---- calls ----------------------------------------------------------------------- */

static void append_ctx_arg(struct walk *w, struct tr_frame *f)
{
    if (f->end == 0 || w->u->text[f->end - 1] != ')') {
        fn_diag(w, "call", "cannot find the closing parenthesis of a call to %s", "?");
        return;
    }
    int nargs = clang_Cursor_getNumArguments(f->c);
    const char *t = nargs > 0 ? ", vast_cx" : "vast_cx";
    tr_edit_add(&w->u->edits, f->end - 1, 1, f->end - f->start, t, t);
}

static void rename_callee(struct walk *w, struct tr_frame *f, const char *name,
                          const char *to)
{
    size_t n = strlen(name);
    if (strncmp(w->u->text + f->start, name, n)) {
        fn_diag(w, "call", "call to %s through an expression cannot be rewritten", name);
        return;
    }
    tr_edit_delete(&w->u->edits, f->start, f->start + (unsigned)n, to, to);
}

static const char *scalar_name(CXType t, unsigned *size)
{
    static const struct { enum CXTypeKind k; const char *n; unsigned s; } names[] = {
        {CXType_Char_S, "char", 1}, {CXType_SChar, "char", 1}, {CXType_Char_U, "uchar", 1},
        {CXType_UChar, "uchar", 1}, {CXType_Short, "short", 2}, {CXType_UShort, "ushort", 2},
        {CXType_Int, "int", 4}, {CXType_UInt, "uint", 4}, {CXType_Long, "long", 8},
        {CXType_ULong, "ulong", 8}, {CXType_Float, "float", 4}, {CXType_Double, "double", 8},
        {CXType_Half, "half", 2},
    };
    t = clang_getCanonicalType(t);
    if (t.kind == CXType_ExtVector || t.kind == CXType_Vector)
        t = clang_getCanonicalType(clang_getElementType(t));
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].k == t.kind) {
            *size = names[i].s;
            return names[i].n;
        }
    return NULL;
}

static void define_helper_once(struct walk *w, const char *fn, const char *def)
{
    struct strbuf key = {0};
    strbuf_printf(&key, "\n%s\n", fn);
    if (!w->u->helpers_seen.data || !strstr(w->u->helpers_seen.data, key.data)) {
        strbuf_printf(&w->u->helpers_seen, "%s", key.data);
        tr_edit_add(&w->u->edits, w->fn_start, 0, 0xffffffffu, def, def);
    }
    strbuf_free(&key);
}

/* vloadn/vstoren and the _half forms: the range may cross a page, so a helper checks. */
static void rewrite_vector_call(struct walk *w, struct tr_frame *f, const char *name,
                                CXCursor ptr)
{
    CXType pt = clang_getPointeeType(clang_getCanonicalType(clang_getCursorType(ptr)));
    unsigned es = 0;
    const char *elem = scalar_name(pt, &es);
    if (!strncmp(name, "vstore", 6) && strstr(name, "_half"))
        elem = scalar_name(clang_getCursorType(clang_Cursor_getArgument(f->c, 0)), &es);
    char *fn = NULL, *def = NULL;
    if (!elem || tr_vector_helper(name, elem, es, &fn, &def) != 0) {
        fn_diag(w, "vector-load-store", "%s on global memory with this element type is not "
                "supported", name);
        return;
    }
    define_helper_once(w, fn, def);
    rename_callee(w, f, name, fn);
    unsigned s, e;
    if (tr_cursor_span(ptr, &s, &e) == 0) {
        tr_edit_add(&w->u->edits, s, 0, e - s, "(ulong)(", "(ulong)(");
        tr_edit_add(&w->u->edits, e, 1, e - s, ")", ")");
    }
    append_ctx_arg(w, f);
    free(fn);
    free(def);
}

static void note_pointer_use(struct walk *w, CXCursor arg, unsigned use)
{
    unsigned long long m = pointer_mask(w, arg);
    if (m & TR_MASK_UNKNOWN)
        w->fn->unknown_access |= use;
    for (unsigned i = 0; i < w->nparams && i < 63; i++)
        if (m & (1ull << i))
            w->fn->param_access[i] |= use;
}

/* async_work_group_copy(D, S, N, E) and async_work_group_strided_copy(D, S, N, K, E) with a
 * __global side (argument g): the helper of prelude.c copies, and the real builtin runs over
 * the helper's __local result and the scratch page with 0 elements, joining E:
 *   async_work_group_copy(vast_async_g2l_T(D, (ulong)(S), N, vast_cx), scratch, 0, E)
 *   async_work_group_copy(scratch, vast_async_l2g_T((ulong)(D), S, N, vast_cx), 0, E)
 * Every argument is evaluated once. Anything else named async_work_group_* with a __global
 * pointer (the 2D/3D copies of cl_khr_extended_async_copies) is refused. */
static void rewrite_async_copy(struct walk *w, struct tr_frame *f, const char *name, int g)
{
    int strided = !strcmp(name, "async_work_group_strided_copy");
    int nargs = clang_Cursor_getNumArguments(f->c);
    CXCursor ptr = clang_Cursor_getArgument(f->c, (unsigned)g);
    CXType pt = clang_getCanonicalType(clang_getPointeeType(clang_getCanonicalType(clang_getCursorType(ptr))));
    unsigned es = 0, n = pt.kind == CXType_ExtVector || pt.kind == CXType_Vector ? (unsigned)clang_getNumElements(pt) : 1;
    const char *elem = scalar_name(pt, &es);
    char *fn = NULL, *def = NULL;
    if ((!strided && strcmp(name, "async_work_group_copy")) || nargs != (strided ? 5 : 4) || g > 1 || !elem ||
        tr_async_helper(g == 0, strided, elem, n, &fn, &def) != 0) {
        fn_diag(w, "async_work_group_copy", "%s on global memory with these arguments cannot be paged", name);
        return;
    }
    note_pointer_use(w, ptr, g == 0 ? USE_WRITE : USE_READ);
    for (int i = 0; i < nargs - 1; i++)
        if (i != 1 - g && expr_loads(w, clang_Cursor_getArgument(f->c, (unsigned)i)))
            w->fn->data_dependent = 1; /* the inspector reads 0 where the range comes from data */
    unsigned s0, e0, s1, e1, sn, en;
    if (tr_cursor_span(clang_Cursor_getArgument(f->c, 0), &s0, &e0) ||
        tr_cursor_span(clang_Cursor_getArgument(f->c, 1), &s1, &e1) ||
        tr_cursor_span(clang_Cursor_getArgument(f->c, (unsigned)nargs - 2), &sn, &en)) {
        fn_diag(w, "async_work_group_copy", "the arguments of %s cannot be rewritten", name);
    } else {
        char t[32];
        snprintf(t, sizeof t, n > 1 ? "%s%u" : "%s", elem, n);
        struct strbuf open = {0}, close = {0};
        unsigned span = en - s0;
        define_helper_once(w, fn, def);
        if (g == 0) {
            strbuf_printf(&open, "(__global %s *)vast_cx->scratch, %s((ulong)(", t, fn);
            tr_edit_add(&w->u->edits, s0, 0, span, open.data, open.data);
            tr_edit_add(&w->u->edits, e0, 1, e0 - s0, ")", ")");
            strbuf_printf(&close, ", vast_cx), 0%s", strided ? ", 1" : "");
        } else {
            strbuf_printf(&open, "%s(", fn);
            tr_edit_add(&w->u->edits, s0, 0, span, open.data, open.data);
            tr_edit_add(&w->u->edits, s1, 0, e1 - s1, "(ulong)(", "(ulong)(");
            tr_edit_add(&w->u->edits, e1, 1, e1 - s1, ")", ")");
            strbuf_printf(&close, ", vast_cx), (const __global %s *)vast_cx->scratch, 0%s", t,
                          strided ? ", 1" : "");
        }
        tr_edit_add(&w->u->edits, en, 1, span, close.data, close.data);
        strbuf_free(&open);
        strbuf_free(&close);
    }
    free(fn);
    free(def);
}

/* Builtins through which the work-items of a work-group meet or see its real shape: a kernel
 * calling one cannot run its work-groups in slices. */
static int work_group_builtin(const char *name)
{
    static const char *prefixes[] = {"barrier", "work_group_", "sub_group_", "async_work_group_",
                                     "wait_group_events", "get_sub_group", "get_num_sub_groups",
                                     "get_max_sub_group_size", "get_enqueued_num_sub_groups"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
            return 1;
    return 0;
}

static void rewrite_builtin_call(struct walk *w, struct tr_frame *f, const char *name)
{
    w->fn->work_group |= work_group_builtin(name);
    static const char *geometry[] = {"get_group_id",      "get_num_groups",      "get_global_size",
                                     "get_global_offset", "get_global_id",       "get_local_id",
                                     "get_local_size",    "get_enqueued_local_size",
                                     "get_global_linear_id", "get_local_linear_id"};
    for (size_t i = 0; i < sizeof geometry / sizeof *geometry; i++)
        if (!strcmp(name, geometry[i])) {
            char to[64];
            snprintf(to, sizeof to, "vast_%s", name);
            rename_callee(w, f, name, to);
            append_ctx_arg(w, f);
            return;
        }
    int nargs = clang_Cursor_getNumArguments(f->c);
    for (int i = 0; i < nargs; i++) {
        CXCursor a = clang_Cursor_getArgument(f->c, (unsigned)i);
        if (!tr_is_global_pointer(clang_getCursorType(a)))
            continue;
        int is_store = !strncmp(name, "vstore", 6), is_load = !strncmp(name, "vload", 5);
        if (is_load || is_store) {
            note_pointer_use(w, a, is_store ? USE_WRITE : USE_READ);
            rewrite_vector_call(w, f, name, a);
            return;
        }
        if (!strncmp(name, "async_work_group", 16)) {
            rewrite_async_copy(w, f, name, i);
            return;
        }
        int atomic = !strncmp(name, "atom", 4);
        w->fn->atomics |= atomic;
        w->fn->rmw |= atomic;
        note_pointer_use(w, a, atomic ? USE_RW : USE_WRITE);
        if (!w->emit)
            continue;
        char *ty = tr_cursor_type_spelling(a);
        unsigned s, e;
        if (tr_cursor_span(a, &s, &e) == 0 && type_spelling_ok(ty)) {
            struct strbuf open = {0};
            strbuf_printf(&open, "((%s)vast_trw((ulong)(", ty);
            tr_edit_add(&w->u->edits, s, 0, e - s, open.data, open.data);
            tr_edit_add(&w->u->edits, e, 1, e - s, "), vast_cx))", "), vast_cx))");
            strbuf_free(&open);
        } else {
            fn_diag(w, "builtin-pointer", "pointer argument of %s cannot be rewritten", name);
        }
        free(ty);
    }
}

static void record_call(struct walk *w, struct tr_frame *f, CXCursor callee)
{
    struct tr_fn *fn = w->fn;
    fn->calls = translate_xrealloc(fn->calls, (fn->ncalls + 1) * sizeof *fn->calls);
    struct tr_call *c = &fn->calls[fn->ncalls++];
    CXString usr = clang_getCursorUSR(callee);
    c->callee_usr = translate_strdup(clang_getCString(usr));
    clang_disposeString(usr);
    int n = clang_Cursor_getNumArguments(f->c);
    c->nargs = n > 0 ? (unsigned)n : 0;
    c->arg_mask = translate_xrealloc(NULL, (c->nargs + 1) * sizeof *c->arg_mask);
    for (unsigned i = 0; i < c->nargs; i++) {
        CXCursor a = clang_Cursor_getArgument(f->c, i);
        c->arg_mask[i] = tr_is_global_pointer(clang_getCursorType(a)) ? pointer_mask(w, a) : 0;
    }
}

static void visit_call(struct walk *w)
{
    struct tr_frame *f = &w->st[w->depth - 1];
    CXCursor callee = clang_getCursorReferenced(f->c);
    if (clang_Cursor_isNull(callee))
        return;
    CXString ns = clang_getCursorSpelling(callee);
    char *name = translate_strdup(clang_getCString(ns));
    clang_disposeString(ns);
    if (!tr_find_fn(w->u, callee)) {
        rewrite_builtin_call(w, f, name);
    } else if (tr_is_kernel(w->u, callee)) {
        fn_diag(w, "kernel-call", "a kernel calls kernel %s as a function", name);
    } else if (w->emit) {
        record_call(w, f, callee);
        append_ctx_arg(w, f);
    }
    free(name);
}

/* ---- loops (inspector step budget) ----------------------------------------------- */

/* Offsets of the two top-level ';' of a for header starting at `from`. */
static int for_semicolons(const char *t, unsigned from, unsigned to, unsigned semi[2])
{
    int depth = 0, n = 0;
    for (unsigned i = from; i < to && n < 2; i++) {
        if (t[i] == '(')
            depth++;
        else if (t[i] == ')')
            depth--;
        else if (t[i] == ';' && depth == 1)
            semi[n++] = i;
    }
    return n == 2 ? 0 : -1;
}

/* Inspector (budget): the loop's condition also counts steps against the budget. Paged
 * (exit, guard.c): the loop ends once the work-group has faulted; a loop with a barrier asks
 * vast_live first, which every work-item reaches as often as the barriers in the body. */
static void budget_condition(struct walk *w, CXCursor cond, unsigned empty_at, int budget, int exit,
                             int barrier)
{
    char close[96] = "", open_p[48] = "", close_p[48] = "";
    if (budget) {
        unsigned id = w->u->loop_seq++;
        strbuf_printf(&w->counters, " uint vast_steps_%u = 0;", id);
        snprintf(close, sizeof close, "%svast_step(&vast_steps_%u, vast_cx)",
                 clang_Cursor_isNull(cond) ? "" : ") && ", id);
    }
    if (exit && clang_Cursor_isNull(cond))
        snprintf(close_p, sizeof close_p, "%s", barrier ? "vast_live(vast_cx)" : "!vast_cx->wg_fault");
    else if (exit)
        snprintf(open_p, sizeof open_p, "%s", barrier ? "vast_live(vast_cx) && (" : "(");
    if (exit && !clang_Cursor_isNull(cond))
        snprintf(close_p, sizeof close_p, "%s", barrier ? ")" : ") && !vast_cx->wg_fault");
    const char *pc = close_p[0] ? close_p : NULL, *ic = close[0] ? close : NULL;
    if (clang_Cursor_isNull(cond)) {
        tr_edit_add(&w->u->edits, empty_at, 0, 0, pc, ic);
        return;
    }
    unsigned s, e;
    if (tr_cursor_span(cond, &s, &e) != 0)
        return;
    tr_edit_add(&w->u->edits, s, 0, e - s + 1, open_p[0] ? open_p : NULL, budget ? "(" : NULL);
    tr_edit_add(&w->u->edits, e, 1, e - s + 1, pc, ic);
}

/* `while (1)`: only a break ends it (`do ... while (0)` is not a loop at all). */
static int constant_true(CXCursor cond)
{
    CXEvalResult r = clang_Cursor_Evaluate(cond);
    if (r == NULL)
        return 0;
    int t = clang_EvalResult_getKind(r) == CXEval_Int && clang_EvalResult_getAsLongLong(r) != 0;
    clang_EvalResult_dispose(r);
    return t;
}

struct child_in {
    unsigned lo, hi;
    CXCursor found;
};

static enum CXChildVisitResult child_in_range(CXCursor c, CXCursor p, CXClientData d)
{
    (void)p;
    struct child_in *ci = d;
    unsigned s, e;
    if (tr_cursor_span(c, &s, &e) == 0 && s > ci->lo && e <= ci->hi) {
        ci->found = c;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

static void visit_loop(struct walk *w)
{
    struct tr_frame *f = &w->st[w->depth - 1];
    CXCursor cond = clang_getNullCursor();
    unsigned empty_at = 0;
    if (f->kind == CXCursor_WhileStmt) {
        cond = tr_nth_child(f->c, 0);
    } else if (f->kind == CXCursor_DoStmt) {
        cond = tr_nth_child(f->c, 1);
    } else {
        unsigned semi[2];
        if (for_semicolons(w->u->text, f->start, f->end, semi) != 0)
            return;
        struct child_in ci = {semi[0], semi[1], clang_getNullCursor()};
        clang_visitChildren(f->c, child_in_range, &ci);
        cond = ci.found;
        empty_at = semi[0] + 1;
    }
    int none = clang_Cursor_isNull(cond);
    if (none && f->kind != CXCursor_ForStmt)
        return;
    int constant = !none && constant_true(cond);
    int budget = none || constant || expr_loads(w, cond);
    int exit = none || constant || expr_xloads(w, cond);
    if (budget || exit)
        budget_condition(w, cond, empty_at, budget, exit, exit && tr_has_barrier(w->u, f->c));
}

/* Divisions and non-global subscripts whose divisor or index may be fabricated (guard.c). */
static void visit_guard(struct walk *w, struct tr_frame *f)
{
    if (tr_is_division(f->c)) {
        CXCursor d = tr_nth_child(f->c, 1);
        if (!clang_Cursor_isNull(d) && expr_xloads(w, d))
            tr_guard_division(w->u, w->fn_start, f->c);
    } else if (f->kind == CXCursor_ArraySubscriptExpr) {
        CXCursor i = tr_nth_child(f->c, 1);
        enum CXTypeKind ik = clang_getCanonicalType(clang_getCursorType(i)).kind;
        if (ik == CXType_Pointer || ik == CXType_ConstantArray) /* i[a] */
            i = tr_nth_child(f->c, 0);
        if (!clang_Cursor_isNull(i) && expr_xloads(w, i))
            tr_guard_index(w->u, f->c, expr_loads(w, i));
    }
}

/* ---- the traversal --------------------------------------------------------------- */

static void visit_prepass(struct walk *w, struct tr_frame *f)
{
    if (f->kind == CXCursor_VarDecl && tr_address_space(clang_getCursorType(f->c)) == TR_AS_LOCAL)
        w->fn->work_group = 1; /* a __local variable */
    if (f->kind == CXCursor_VarDecl) {
        CXCursor init = tr_nth_child(f->c, 0);
        for (unsigned i = 1; !clang_Cursor_isNull(init) &&
                             clang_getCursorKind(init) == CXCursor_TypeRef; i++)
            init = tr_nth_child(f->c, i);
        if (!clang_Cursor_isNull(init) && clang_isExpression(clang_getCursorKind(init)))
            note_assignment(w, f->c, init);
    } else if ((f->kind == CXCursor_BinaryOperator &&
                clang_getCursorBinaryOperatorKind(f->c) == CXBinaryOperator_Assign) ||
               f->kind == CXCursor_CompoundAssignOperator) {
        CXCursor lhs = tr_nth_child(f->c, 0), rhs = tr_nth_child(f->c, 1);
        while (clang_getCursorKind(lhs) == CXCursor_ParenExpr ||
               clang_getCursorKind(lhs) == CXCursor_UnexposedExpr)
            lhs = tr_nth_child(lhs, 0);
        if (clang_getCursorKind(lhs) == CXCursor_DeclRefExpr)
            note_assignment(w, clang_getCursorReferenced(lhs), rhs);
    }
}

static enum CXChildVisitResult walk_node(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    struct walk *w = d;
    if (w->depth >= MAX_DEPTH) {
        fn_diag(w, "nesting", "expression nesting deeper than %s", "512");
        return CXChildVisit_Continue;
    }
    struct tr_frame *f = tr_frame_enter(w->st, w->depth, c);
    w->depth++;
    if (!w->emit)
        visit_prepass(w, f);
    else if (tr_is_global_access(c))
        visit_access(w);
    else if (f->kind == CXCursor_CallExpr)
        visit_call(w);
    else if (f->kind == CXCursor_ForStmt || f->kind == CXCursor_WhileStmt ||
             f->kind == CXCursor_DoStmt)
        visit_loop(w);
    else
        visit_guard(w, f);
    clang_visitChildren(c, walk_node, w);
    w->depth--;
    return CXChildVisit_Continue;
}

static CXCursor function_body(CXCursor fn)
{
    CXCursor body = clang_getNullCursor();
    for (unsigned i = 0;; i++) {
        CXCursor c = tr_nth_child(fn, i);
        if (clang_Cursor_isNull(c))
            break;
        if (clang_getCursorKind(c) == CXCursor_CompoundStmt)
            body = c;
    }
    return body;
}

static void walk_function(struct tr_unit *u, struct tr_fn *fn)
{
    struct walk *w = calloc(1, sizeof *w);
    if (!w)
        abort();
    w->u = u;
    w->fn = fn;
    int n = clang_Cursor_getNumArguments(fn->cursor);
    w->nparams = n > 0 ? (unsigned)(n > 64 ? 64 : n) : 0;
    unsigned end;
    tr_cursor_span(fn->cursor, &w->fn_start, &end);
    CXCursor body = function_body(fn->cursor);
    if (!clang_Cursor_isNull(body)) {
        for (int pass = 0; pass < 8; pass++) { /* var facts to a fixpoint */
            w->changed = 0;
            clang_visitChildren(body, walk_node, w);
            if (!w->changed)
                break;
        }
        w->emit = 1;
        w->depth = 0;
        clang_visitChildren(body, walk_node, w);
        unsigned bs, be;
        tr_cursor_span(body, &bs, &be);
        tr_rewrite_signature(u, fn, bs + 1, w->counters.data);
    } else {
        tr_rewrite_signature(u, fn, 0, NULL);
    }
    strbuf_free(&w->counters);
    free(w);
}

static enum CXChildVisitResult collect_function(CXCursor c, CXCursor p, CXClientData d)
{
    (void)p;
    struct tr_unit *u = d;
    if (clang_getCursorKind(c) != CXCursor_FunctionDecl || !tr_in_main_file(c))
        return CXChildVisit_Continue;
    u->fns = translate_xrealloc(u->fns, (u->nfns + 1) * sizeof *u->fns);
    struct tr_fn *fn = &u->fns[u->nfns++];
    memset(fn, 0, sizeof *fn);
    fn->cursor = c;
    CXString s = clang_getCursorUSR(c);
    fn->usr = translate_strdup(clang_getCString(s));
    clang_disposeString(s);
    s = clang_getCursorSpelling(c);
    fn->name = translate_strdup(clang_getCString(s));
    clang_disposeString(s);
    fn->is_kernel = tr_is_kernel(u, c);
    fn->has_body = clang_isCursorDefinition(c);
    int n = clang_Cursor_getNumArguments(c);
    fn->nparams = n > 0 ? (unsigned)n : 0;
    fn->param_access = calloc(fn->nparams + 1, sizeof *fn->param_access);
    return CXChildVisit_Continue;
}

void tr_walk_unit(struct tr_unit *u)
{
    clang_visitChildren(clang_getTranslationUnitCursor(u->tu), collect_function, u);
    for (size_t i = 0; i < u->nfns; i++)
        walk_function(u, &u->fns[i]);
}
