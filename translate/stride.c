/* stride.c - grid-stride loops: finds the loops of a kernel whose iterations may run in
 * separate launches, and rewrites them so that each work-item runs only iterations
 * [vast_iters.s0, vast_iters.s1) of its loop (translate.h, iteration_ranges).
 *
 * pyopencl's elementwise kernels (and CLBlast's Xgemv, random-number kernels) launch a
 * fixed global size and loop `for (i = gid; i < n; i += gsize)`: one work-group touches
 * every page, so no partition of work-groups fits a small budget. Restricting the loop's
 * iterations shrinks the pages a launch touches with the range. That is only legal when
 * running iterations [a, b) in one launch and [b, c) in a later one gives what one launch
 * gives, so a kernel qualifies only when:
 *  - every __global access (lvalue, builtin or helper call with a __global pointer) is in
 *    the body of a restricted loop; a restricted loop is a `for` with all three header
 *    parts and a compound body, reached from the kernel body through compound statements
 *    and if/else branches only, its header free of global accesses and helper calls;
 *  - nothing with an effect follows a restricted loop (only `;` and `return;`), so no loop
 *    runs after another and nothing reads what a loop left behind;
 *  - a loop body changes no variable declared outside it (no accumulator, no loop variable
 *    assignment), takes no address of one, touches no outer private array or private
 *    pointer, and has no return, goto, or break of the loop itself;
 *  - the kernel has no barrier or other work-group function (nor do helpers it calls) and
 *    uses no __local memory.
 * Then the iteration sequence (init, condition, step) is the same in every launch, each
 * iteration's effects are its own global stores, and a launch that skips the body of
 * iterations outside its range does exactly its share. The step need not be positive.
 *
 * Rewrite (both variants): `{ ulong vast_it = 0; for (init; (cond) && vast_it < s1;
 * (step), vast_it++) if (vast_it >= s0) {body} }`; the inspector's condition also sets
 * vast_status[2] when a work-item reaches s1 with iterations left (the runtime's "more").
 * The kernel gets `ulong2 vast_iters` as its last parameter. Called by meta.c per kernel. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define MAX_LOOPS 16
#define MAX_CALL_DEPTH 8

struct sctx {
    struct tr_unit *u;
    CXCursor loops[MAX_LOOPS];
    unsigned nloops;
    int fail;
    unsigned lo, hi; /* span of the loop body being checked */
};

static enum CXCursorKind kind(CXCursor c)
{
    return clang_getCursorKind(c);
}

static unsigned space_of(CXType t)
{
    return t.kind == CXType_Invalid ? 0 : clang_getAddressSpace(t);
}

static int is_global_pointer(CXType t)
{
    t = clang_getCanonicalType(t);
    return t.kind == CXType_Pointer && space_of(clang_getPointeeType(t)) == 1;
}

static int is_loop_or_switch(enum CXCursorKind k)
{
    return k == CXCursor_ForStmt || k == CXCursor_WhileStmt || k == CXCursor_DoStmt || k == CXCursor_SwitchStmt;
}

static int name_starts(CXCursor f, const char *prefix)
{
    CXString s = clang_getCursorSpelling(f);
    int r = !strncmp(clang_getCString(s), prefix, strlen(prefix));
    clang_disposeString(s);
    return r;
}

/* ---- whole-subtree facts ---------------------------------------------------------- */

struct scan {
    struct tr_unit *u;
    int global, sync, local, helper;
    int depth; /* helper call depth (sync) */
};

static int is_global_lvalue(CXCursor c)
{
    enum CXCursorKind k = kind(c);
    if (k == CXCursor_UnaryOperator ? clang_getCursorUnaryOperatorKind(c) != CXUnaryOperator_Deref
                                    : k != CXCursor_ArraySubscriptExpr && k != CXCursor_MemberRefExpr)
        return 0;
    return space_of(clang_getCursorType(c)) == 1;
}

/* Work-group functions: a work-item's iterations in different launches would meet other
 * work-items' at different points. */
static int is_sync(CXCursor f)
{
    static const char *const names[] = {"barrier", "work_group_", "sub_group_", "async_work_group",
                                        "wait_group_events", "prefetch"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (name_starts(f, names[i]))
            return 1;
    return 0;
}

static enum CXChildVisitResult scan_node(CXCursor c, CXCursor p, CXClientData d);

static void scan_call(struct scan *s, CXCursor c)
{
    CXCursor f = clang_getCursorReferenced(c);
    int n = clang_Cursor_getNumArguments(c);
    for (int i = 0; i < n; i++)
        if (is_global_pointer(clang_getCursorType(clang_Cursor_getArgument(c, (unsigned)i))))
            s->global = 1;
    if (clang_Cursor_isNull(f)) {
        s->sync = s->global = 1; /* an unknown callee */
        return;
    }
    if (!tr_find_fn(s->u, f)) {
        s->sync |= is_sync(f);
        return;
    }
    s->helper = 1;
    CXCursor def = clang_getCursorDefinition(f);
    if (s->depth >= MAX_CALL_DEPTH || clang_Cursor_isNull(def)) {
        s->sync = 1;
        return;
    }
    s->depth++;
    clang_visitChildren(def, scan_node, s);
    s->depth--;
}

static enum CXChildVisitResult scan_node(CXCursor c, CXCursor p, CXClientData d)
{
    (void)p;
    struct scan *s = d;
    enum CXCursorKind k = kind(c);
    if (s->depth == 0 && is_global_lvalue(c))
        s->global = 1;
    if (k == CXCursor_CallExpr)
        scan_call(s, c);
    if (k == CXCursor_DeclRefExpr || k == CXCursor_VarDecl) {
        CXCursor decl = k == CXCursor_VarDecl ? c : clang_getCursorReferenced(c);
        CXType t = clang_getCanonicalType(clang_getCursorType(decl));
        unsigned sp = space_of(t);
        if (sp == 2 || (t.kind == CXType_Pointer && space_of(clang_getPointeeType(t)) == 2) ||
            (t.kind == CXType_ConstantArray && space_of(clang_getArrayElementType(t)) == 2))
            s->local = 1;
        if (s->depth == 0 && k == CXCursor_DeclRefExpr && sp == 1)
            s->global = 1; /* a program-scope __global variable */
    }
    return CXChildVisit_Recurse;
}

static struct scan scan_of(struct tr_unit *u, CXCursor c)
{
    struct scan s = {u, 0, 0, 0, 0, 0};
    scan_node(c, clang_getNullCursor(), &s);
    clang_visitChildren(c, scan_node, &s);
    return s;
}

static int touches_global(struct tr_unit *u, CXCursor c)
{
    return scan_of(u, c).global;
}

/* ---- where the loops are ---------------------------------------------------------- */

static void add_loop(struct sctx *x, CXCursor f)
{
    if (x->nloops == MAX_LOOPS)
        x->fail = 1;
    else
        x->loops[x->nloops++] = f;
}

/* Statements after a restricted loop may only be `;` or `return;`. */
static int inert(CXCursor s)
{
    return kind(s) == CXCursor_NullStmt || (kind(s) == CXCursor_ReturnStmt && tr_num_children(s) == 0);
}

static void scan_compound(struct sctx *x, CXCursor comp);

/* A branch of an if, or a statement of a compound that touches global memory. */
static void scan_stmt(struct sctx *x, CXCursor s)
{
    switch (kind(s)) {
    case CXCursor_ForStmt:
        add_loop(x, s);
        break;
    case CXCursor_CompoundStmt:
        scan_compound(x, s);
        break;
    case CXCursor_IfStmt: {
        unsigned n = tr_num_children(s);
        if (n < 2 || n > 3 || touches_global(x->u, tr_nth_child(s, 0))) {
            x->fail = 1;
            break;
        }
        for (unsigned i = 1; i < n && !x->fail; i++)
            if (touches_global(x->u, tr_nth_child(s, i)))
                scan_stmt(x, tr_nth_child(s, i));
        break;
    }
    default:
        x->fail = 1; /* a global access outside a restricted loop */
    }
}

static void scan_compound(struct sctx *x, CXCursor comp)
{
    unsigned n = tr_num_children(comp);
    for (unsigned i = 0; i < n && !x->fail; i++) {
        CXCursor s = tr_nth_child(comp, i);
        if (!touches_global(x->u, s))
            continue;
        scan_stmt(x, s);
        for (unsigned j = i + 1; j < n && !x->fail; j++)
            if (!inert(tr_nth_child(comp, j)))
                x->fail = 1;
    }
}

/* ---- one loop's body ---------------------------------------------------------------- */

static CXCursor strip(CXCursor c)
{
    while (kind(c) == CXCursor_ParenExpr ||
           (kind(c) == CXCursor_UnexposedExpr && tr_num_children(c) == 1))
        c = tr_nth_child(c, 0);
    return c;
}

/* Whether decl (a variable or parameter) is declared outside the loop body. */
static int outer(struct sctx *x, CXCursor decl)
{
    unsigned s, e;
    if (kind(decl) != CXCursor_VarDecl && kind(decl) != CXCursor_ParmDecl)
        return 0;
    return tr_cursor_span(decl, &s, &e) != 0 || s < x->lo || s >= x->hi;
}

/* A modified lvalue: global memory, or private state declared in the body. */
static int own_lvalue(struct sctx *x, CXCursor lv)
{
    lv = strip(lv);
    if (space_of(clang_getCursorType(lv)) == 1)
        return 1;
    for (;;) {
        enum CXCursorKind k = kind(lv);
        if (k == CXCursor_DeclRefExpr)
            return !outer(x, clang_getCursorReferenced(lv));
        if (k == CXCursor_ArraySubscriptExpr || k == CXCursor_MemberRefExpr ||
            (k == CXCursor_UnaryOperator && clang_getCursorUnaryOperatorKind(lv) == CXUnaryOperator_Deref))
            lv = strip(tr_nth_child(lv, 0));
        else
            return 0;
    }
}

static void check_body_node(struct sctx *x, CXCursor c, int nested);

static enum CXChildVisitResult body_child(CXCursor c, CXCursor p, CXClientData d)
{
    (void)p;
    int *nested = ((void **)d)[1];
    check_body_node(((void **)d)[0], c, *nested);
    return CXChildVisit_Continue;
}

static void check_body_node(struct sctx *x, CXCursor c, int nested)
{
    enum CXCursorKind k = kind(c);
    if (x->fail)
        return;
    if (k == CXCursor_ReturnStmt || k == CXCursor_GotoStmt || k == CXCursor_IndirectGotoStmt ||
        (k == CXCursor_BreakStmt && !nested)) {
        x->fail = 1;
        return;
    }
    int modifies = (k == CXCursor_BinaryOperator && clang_getCursorBinaryOperatorKind(c) == CXBinaryOperator_Assign) ||
                   k == CXCursor_CompoundAssignOperator;
    if (k == CXCursor_UnaryOperator)
        switch (clang_getCursorUnaryOperatorKind(c)) {
        case CXUnaryOperator_PostInc: case CXUnaryOperator_PostDec:
        case CXUnaryOperator_PreInc: case CXUnaryOperator_PreDec:
        case CXUnaryOperator_AddrOf:
            modifies = 1;
            break;
        default:
            break;
        }
    if (modifies && !own_lvalue(x, tr_nth_child(c, 0))) {
        x->fail = 1; /* an accumulator, or the loop variable */
        return;
    }
    if (k == CXCursor_DeclRefExpr) {
        CXCursor d = clang_getCursorReferenced(c);
        CXType t = clang_getCanonicalType(clang_getCursorType(d));
        if (outer(x, d) && (t.kind == CXType_ConstantArray ||
                            (t.kind == CXType_Pointer && space_of(clang_getPointeeType(t)) != 1 &&
                             space_of(clang_getPointeeType(t)) != 3))) {
            x->fail = 1; /* private memory reachable from outside the body */
            return;
        }
    }
    int inner = nested + is_loop_or_switch(k);
    void *d[2] = {x, &inner};
    clang_visitChildren(c, body_child, d);
}

/* Spans of the loop, its condition, step and body. */
static int loop_spans(CXCursor f, unsigned sp[4][2])
{
    if (tr_cursor_span(f, &sp[0][0], &sp[0][1]) != 0)
        return -1;
    for (unsigned i = 1; i < 4; i++)
        if (tr_cursor_span(tr_nth_child(f, i), &sp[i][0], &sp[i][1]) != 0)
            return -1;
    return 0;
}

static int loop_ok(struct sctx *x, CXCursor f)
{
    unsigned sp[4][2];
    if (tr_num_children(f) != 4 || kind(tr_nth_child(f, 3)) != CXCursor_CompoundStmt || loop_spans(f, sp) != 0)
        return 0; /* missing header parts (libclang skips them) or a bare statement body */
    for (unsigned i = 0; i < 3; i++) {
        struct scan s = scan_of(x->u, tr_nth_child(f, i));
        if (s.global || s.helper || s.sync)
            return 0;
    }
    CXCursor body = tr_nth_child(f, 3);
    if (tr_cursor_span(body, &x->lo, &x->hi) != 0)
        return 0;
    x->fail = 0;
    check_body_node(x, body, 0);
    return !x->fail;
}

/* ---- rewrite ---------------------------------------------------------------------- */

static void rewrite_loop(struct tr_unit *u, CXCursor f)
{
    unsigned sp[4][2];
    loop_spans(f, sp); /* checked by loop_ok */
    unsigned fs = sp[0][0], fe = sp[0][1], cs = sp[1][0], ce = sp[1][1], ss = sp[2][0], se = sp[2][1];
    unsigned bs = sp[3][0], be = sp[3][1];
    struct tr_edits *e = &u->edits;
    tr_edit_add(e, fs, 0, fe - fs + 2, "{ ulong vast_it = 0; ", "{ ulong vast_it = 0; ");
    tr_edit_add(e, fe, 1, fe - fs + 2, " }", " }");
    tr_edit_add(e, cs, 0, ce - cs + 1, "(", "(");
    tr_edit_add(e, ce, 1, ce - cs + 1, ") && vast_it < vast_iters.s1",
                ") && (vast_it < vast_iters.s1 || (vast_status[2] = 1u, 0))");
    tr_edit_add(e, ss, 0, se - ss + 1, "(", "(");
    tr_edit_add(e, se, 1, se - ss + 1, "), vast_it++", "), vast_it++");
    tr_edit_add(e, bs, 0, be - bs + 1, "if (vast_it >= vast_iters.s0) ", "if (vast_it >= vast_iters.s0) ");
}

int tr_stride_kernel(struct tr_unit *u, struct tr_fn *fn)
{
    CXCursor body = clang_getNullCursor();
    for (unsigned i = 0; !clang_Cursor_isNull(tr_nth_child(fn->cursor, i)); i++)
        if (kind(tr_nth_child(fn->cursor, i)) == CXCursor_CompoundStmt)
            body = tr_nth_child(fn->cursor, i);
    if (clang_Cursor_isNull(body) || fn->nparams == 0)
        return 0;
    struct scan all = scan_of(u, body);
    if (!all.global || all.sync || all.local)
        return 0;
    struct sctx x = {.u = u};
    scan_compound(&x, body);
    if (x.fail || x.nloops == 0)
        return 0;
    for (unsigned i = 0; i < x.nloops; i++)
        if (!loop_ok(&x, x.loops[i]))
            return 0;
    unsigned ps, pe;
    if (tr_cursor_span(clang_Cursor_getArgument(fn->cursor, fn->nparams - 1), &ps, &pe) != 0)
        return 0;
    for (unsigned i = 0; i < x.nloops; i++)
        rewrite_loop(u, x.loops[i]);
    tr_edit_add(&u->edits, pe, 0, 0, ", ulong2 vast_iters", ", ulong2 vast_iters");
    return 1;
}
