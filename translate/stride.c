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
 *  - every __global access (lvalue, builtin or helper call with a __global pointer; image
 *    and printf calls count too) is in
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
        if (tr_is_global_pointer(clang_getCursorType(clang_Cursor_getArgument(c, (unsigned)i))))
            s->global = 1;
    if (clang_Cursor_isNull(f)) {
        s->sync = s->global = 1; /* an unknown callee */
        return;
    }
    if (!tr_find_fn(s->u, f)) {
        s->sync |= is_sync(f);
        /* effects outside buffers: they must happen once per iteration, not once per launch */
        if (name_starts(f, "write_image") || name_starts(f, "read_image") || name_starts(f, "printf"))
            s->global = 1;
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
    if (s->depth == 0 && tr_is_global_lvalue(c))
        s->global = 1;
    if (k == CXCursor_CallExpr)
        scan_call(s, c);
    if (k == CXCursor_DeclRefExpr || k == CXCursor_VarDecl) {
        CXCursor decl = k == CXCursor_VarDecl ? c : clang_getCursorReferenced(c);
        CXType t = clang_getCanonicalType(clang_getCursorType(decl));
        unsigned sp = tr_address_space(t);
        if (sp == TR_AS_LOCAL ||
            (t.kind == CXType_Pointer && tr_address_space(clang_getPointeeType(t)) == TR_AS_LOCAL) ||
            (t.kind == CXType_ConstantArray && tr_address_space(clang_getArrayElementType(t)) == TR_AS_LOCAL))
            s->local = 1;
        if (s->depth == 0 && k == CXCursor_DeclRefExpr && sp == TR_AS_GLOBAL)
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

struct tr_scan tr_scan_subtree(struct tr_unit *u, CXCursor c)
{
    struct scan s = scan_of(u, c);
    return (struct tr_scan){s.global, s.sync, s.local, s.helper};
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
    if (tr_address_space(clang_getCursorType(lv)) == TR_AS_GLOBAL)
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
    if (tr_modifies_operand(c) && !own_lvalue(x, tr_nth_child(c, 0))) {
        x->fail = 1; /* an accumulator, or the loop variable */
        return;
    }
    if (k == CXCursor_DeclRefExpr) {
        CXCursor d = clang_getCursorReferenced(c);
        CXType t = clang_getCanonicalType(clang_getCursorType(d));
        if (outer(x, d) && (t.kind == CXType_ConstantArray ||
                            (t.kind == CXType_Pointer &&
                             tr_address_space(clang_getPointeeType(t)) != TR_AS_GLOBAL &&
                             tr_address_space(clang_getPointeeType(t)) != TR_AS_CONSTANT))) {
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

/* ---- the jump to iteration s0 ----------------------------------------------------- */

/* An expression that is the same in every iteration and every launch, with no effect and no
 * work-item function (those are renamed in the body's text, not in a copy): variables,
 * literals, arithmetic and casts; not referring to var. */
static int plain_invariant(CXCursor c, CXCursor var)
{
    c = strip(c);
    switch (kind(c)) {
    case CXCursor_IntegerLiteral:
        return 1;
    case CXCursor_DeclRefExpr:
        return !clang_equalCursors(clang_getCursorReferenced(c), var);
    case CXCursor_BinaryOperator: {
        enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(c);
        return (op == CXBinaryOperator_Add || op == CXBinaryOperator_Sub || op == CXBinaryOperator_Mul) &&
               plain_invariant(tr_nth_child(c, 0), var) && plain_invariant(tr_nth_child(c, 1), var);
    }
    case CXCursor_CStyleCastExpr:
        return tr_num_children(c) >= 1 && plain_invariant(tr_nth_child(c, tr_num_children(c) - 1), var);
    default:
        return 0;
    }
}

static int refers(CXCursor c, CXCursor var)
{
    c = strip(c);
    return kind(c) == CXCursor_DeclRefExpr && clang_equalCursors(clang_getCursorReferenced(c), var);
}

static int mentions(CXCursor c, CXCursor var);

static enum CXChildVisitResult mention_node(CXCursor c, CXCursor p, CXClientData d)
{
    (void)p;
    CXCursor *v = d;
    if (kind(c) == CXCursor_DeclRefExpr && clang_equalCursors(clang_getCursorReferenced(c), v[0])) {
        v[1] = c;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

static int mentions(CXCursor c, CXCursor var)
{
    CXCursor v[2] = {var, clang_getNullCursor()};
    if (refers(c, var))
        return 1;
    clang_visitChildren(c, mention_node, v);
    return !clang_Cursor_isNull(v[1]);
}

/* The loop variable a step `i += S`, `i -= S`, `i = i + S`, `i++`, `i--` (and prefix forms)
 * changes; *sign: +1 adds, -1 subtracts; *amount: S (null cursor: 1). */
static CXCursor step_var(CXCursor step, int *sign, CXCursor *amount)
{
    step = strip(step);
    *amount = clang_getNullCursor();
    CXCursor t = strip(tr_nth_child(step, 0));
    if (kind(step) == CXCursor_UnaryOperator) {
        enum CXUnaryOperatorKind op = clang_getCursorUnaryOperatorKind(step);
        *sign = op == CXUnaryOperator_PostInc || op == CXUnaryOperator_PreInc ? 1
              : op == CXUnaryOperator_PostDec || op == CXUnaryOperator_PreDec ? -1 : 0;
    } else if (kind(step) == CXCursor_CompoundAssignOperator) {
        enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(step);
        *sign = op == CXBinaryOperator_AddAssign ? 1 : op == CXBinaryOperator_SubAssign ? -1 : 0;
        *amount = tr_nth_child(step, 1);
    } else if (kind(step) == CXCursor_BinaryOperator &&
               clang_getCursorBinaryOperatorKind(step) == CXBinaryOperator_Assign) {
        CXCursor r = strip(tr_nth_child(step, 1));
        *sign = kind(r) == CXCursor_BinaryOperator && clang_getCursorBinaryOperatorKind(r) == CXBinaryOperator_Add &&
                        refers(tr_nth_child(r, 0), clang_getCursorReferenced(t)) ? 1 : 0;
        *amount = tr_nth_child(r, 1);
    } else {
        *sign = 0;
    }
    return kind(t) == CXCursor_DeclRefExpr && *sign ? clang_getCursorReferenced(t) : clang_getNullCursor();
}

/* Text that moves the loop variable straight to iteration vast_iters.s0 at the first test of
 * the condition, where that is what stepping would do: `i OP B` (B not mentioning i) with a
 * 64-bit i, a plain invariant step S, and the step going the condition's way at run time
 * (tested: else the loop steps there as without it). The condition is monotone in i then, so
 * an item whose loop ends before s0 still fails it after the jump. NULL when not applicable;
 * without it each launch steps through the iterations before its range. */
static char *jump_text(struct tr_unit *u, CXCursor f)
{
    int sign;
    CXCursor amount, cond = strip(tr_nth_child(f, 1)), var = step_var(tr_nth_child(f, 2), &sign, &amount);
    CXType vt = clang_getCanonicalType(clang_getCursorType(var));
    if (clang_Cursor_isNull(var) || clang_Type_getSizeOf(vt) != 8 || kind(cond) != CXCursor_BinaryOperator ||
        (!clang_Cursor_isNull(amount) && !plain_invariant(amount, var)))
        return NULL;
    int sgn;
    switch (vt.kind) {
    case CXType_Long: case CXType_LongLong: sgn = 1; break;
    case CXType_ULong: case CXType_ULongLong: sgn = 0; break;
    default: return NULL;
    }
    enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(cond);
    int up = op == CXBinaryOperator_LT || op == CXBinaryOperator_LE, down = op == CXBinaryOperator_GT ||
                                                                         op == CXBinaryOperator_GE;
    if (!(up || down))
        return NULL;
    if (refers(tr_nth_child(cond, 1), var) && !mentions(tr_nth_child(cond, 0), var))
        up = !up, down = !down; /* B < i */
    else if (!refers(tr_nth_child(cond, 0), var) || mentions(tr_nth_child(cond, 1), var))
        return NULL;
    unsigned as = 0, ae = 0;
    if (!clang_Cursor_isNull(amount) && tr_cursor_span(amount, &as, &ae) != 0)
        return NULL;
    CXString name = clang_getCursorSpelling(var);
    struct strbuf b = {0}, s = {0};
    if (clang_Cursor_isNull(amount))
        strbuf_puts(&s, "1");
    else
        strbuf_append(&s, u->text + as, ae - as);
    strbuf_printf(&b, "((vast_it < vast_iters.s0 && (%s) %s 0) ? (void)(%s %s= (%s)vast_iters.s0 * (%s), vast_it = "
                      "vast_iters.s0) : (void)0, ",
                  s.data, (sign > 0) == (up != 0) ? ">" : "<", clang_getCString(name), sign > 0 ? "+" : "-",
                  sgn ? "long" : "ulong", s.data);
    clang_disposeString(name);
    strbuf_free(&s);
    return strbuf_take(&b);
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
    char *jump = jump_text(u, f);
    struct strbuf open = {0};
    strbuf_printf(&open, "%s(", jump ? jump : "");
    tr_edit_add(e, cs, 0, ce - cs + 1, open.data, open.data);
    tr_edit_add(e, ce, 1, ce - cs + 1, jump ? ")) && vast_it < vast_iters.s1" : ") && vast_it < vast_iters.s1",
                jump ? ")) && (vast_it < vast_iters.s1 || (vast_status[2] = 1u, 0))"
                     : ") && (vast_it < vast_iters.s1 || (vast_status[2] = 1u, 0))");
    strbuf_free(&open);
    free(jump);
    tr_edit_add(e, ss, 0, se - ss + 1, "(", "(");
    tr_edit_add(e, se, 1, se - ss + 1, "), vast_it++", "), vast_it++");
    tr_edit_add(e, bs, 0, be - bs + 1, "if (vast_it >= vast_iters.s0) ", "if (vast_it >= vast_iters.s0) ");
}

int tr_stride_kernel(struct tr_unit *u, struct tr_fn *fn)
{
    CXCursor body = tr_fn_body(fn->cursor);
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
    for (unsigned i = 0; i < x.nloops; i++) {
        rewrite_loop(u, x.loops[i]);
        if (fn->nranged < TR_MAX_RANGED && tr_cursor_span(x.loops[i], &fn->ranged[fn->nranged][0],
                                                          &fn->ranged[fn->nranged][1]) == 0)
            fn->nranged++;
    }
    tr_edit_add(&u->edits, pe, 0, 0, ", ulong2 vast_iters", ", ulong2 vast_iters");
    return 1;
}
