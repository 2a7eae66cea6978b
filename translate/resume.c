/* resume.c - resumable loops: a kernel whose work-items (or work-groups) walk their data in one
 * loop that carries state from iteration to iteration (CLBlast's Xgemv: __local tiles, barriers
 * and a private accumulator array stored after the loop; pyopencl's random-number kernels: a
 * generator state in privates) is rewritten so that a launch runs iterations [s0, s1) of that
 * loop only, saving the loop's live state at the end of a range that is cut and restoring it at
 * the start of the next (translate.h, resumable).
 *
 * The loop L is the first statement of the kernel's body that is a `for` (all three header
 * parts) or `while` with a compound body touching __global memory. What precedes it is the
 * prologue (it runs again in every range), what follows it the epilogue (it runs once per
 * work-item, in the range where its loop ends). A kernel qualifies when:
 *  - the prologue stores nothing to __global memory, calls no helper or builtin with a __global
 *    pointer (but vloadn), no atomic, image write or printf, and does not return;
 *  - every non-const private variable declared in the body before L (and in L's init) holds
 *    no pointer to private or __local memory: these are saved and restored as bytes (a
 *    __global pointer's virtual address is the same in every range); const ones are computed
 *    again by the prologue, so their initializers read no __global memory and call no helper;
 *  - __local variables declared in the body are saved and restored by the work-group together
 *    (behind barriers); __local pointer parameters are not supported (their sizes are unknown);
 *  - no parameter is modified before or in L;
 *  - L's header has no __global access, helper or work-group call, and depends on no value
 *    loaded from memory (no subscript, dereference or helper call in it or in what its
 *    variables are assigned from, transitively): the inspector (whose loads read 0) then sees
 *    the same trip counts as the paged kernel, so its "more" is true;
 *  - L's body has no return or goto (break and continue are the loop's own business);
 *  - where __local variables are saved or a barrier follows L, L's body has a barrier, so
 *    that the work-items of a work-group run the same iterations and are cut together.
 *
 * Rewrite (both variants, vast_it counting L's iterations from 0):
 *   { ulong vast_it = s0; vast_rs_find(...): the record with position s0 (first in
 *     vast_spill_in, then in vast_spill), the other slot of vast_spill to write;
 *     if restoring: done flag, __local <- group record (barriers);
 *     L with condition `(restore privates once, after L's init), vast_rs == 0 && (cond) &&
 *       (vast_it < s1 || (vast_rs = 1, save L's init vars, 0))` and vast_it++ per iteration;
 *     in a range run (vast_spill set): position s1 and done (not cut) into the write slot;
 *     if cut (vast_rs == 1): privates, __local (behind a barrier);
 *     if (vast_rs == 0) { epilogue } }
 * vast_rs: 0 running, 1 cut at s1 (more iterations), 2 finished in an earlier range, 3 the
 * record was lost (paged: logs a fault on virtual page 0, so the launch fails; inspector:
 * vast_status[3], the planner fails). Records: two
 * slots per work-item (and per work-group), each starting with its position, so a retry of a
 * range (faulted work-groups) reads the state at its start again and split halves find theirs.
 * The inspector reads the paged kernel's spill (vast_spill_in) first, then its own. Called by
 * meta.c per kernel that stride.c did not take. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define MAX_VARS 64

struct rvar {
    CXCursor decl;
    char *name;
    unsigned long long size, off;
    int local; /* __local: the work-group's record */
    int init;  /* declared in L's init */
};

struct rctx {
    struct tr_unit *u;
    struct tr_fn *fn;
    struct rvar v[MAX_VARS];
    unsigned nv;
    CXCursor loaded[MAX_VARS * 4]; /* variables assigned from loaded values */
    unsigned nloaded;
    int fail;
};

static enum CXCursorKind kind(CXCursor c)
{
    return clang_getCursorKind(c);
}

static CXCursor strip(CXCursor c)
{
    while (kind(c) == CXCursor_ParenExpr || (kind(c) == CXCursor_UnexposedExpr && tr_num_children(c) == 1))
        c = tr_nth_child(c, 0);
    return c;
}

static char *spelling(CXCursor c)
{
    CXString s = clang_getCursorSpelling(c);
    char *r = translate_strdup(clang_getCString(s));
    clang_disposeString(s);
    return r;
}

static int name_starts(CXCursor f, const char *prefix)
{
    CXString s = clang_getCursorSpelling(f);
    int r = !strncmp(clang_getCString(s), prefix, strlen(prefix));
    clang_disposeString(s);
    return r;
}

/* ---- the prologue: no effect but on private and __local variables ---------------------- */

static enum CXChildVisitResult prologue_node(CXCursor c, CXCursor p, CXClientData d)
{
    (void)p;
    struct rctx *x = d;
    enum CXCursorKind k = kind(c);
    if (k == CXCursor_ReturnStmt || k == CXCursor_GotoStmt || k == CXCursor_IndirectGotoStmt) {
        x->fail = 1;
        return CXChildVisit_Break;
    }
    if (tr_modifies_operand(c) && tr_address_space(clang_getCursorType(strip(tr_nth_child(c, 0)))) == TR_AS_GLOBAL) {
        x->fail = 1;
        return CXChildVisit_Break;
    }
    if (tr_modifies_operand(c) && tr_is_global_lvalue(strip(tr_nth_child(c, 0)))) {
        x->fail = 1;
        return CXChildVisit_Break;
    }
    if (k == CXCursor_CallExpr) {
        CXCursor f = clang_getCursorReferenced(c);
        int n = clang_Cursor_getNumArguments(c), global = 0;
        for (int i = 0; i < n; i++)
            global |= tr_is_global_pointer(clang_getCursorType(clang_Cursor_getArgument(c, (unsigned)i)));
        if (clang_Cursor_isNull(f) || (global && (tr_find_fn(x->u, f) || !name_starts(f, "vload"))) ||
            name_starts(f, "atom") || name_starts(f, "write_image") || name_starts(f, "printf")) {
            x->fail = 1;
            return CXChildVisit_Break;
        }
    }
    return CXChildVisit_Recurse;
}

/* ---- loaded values --------------------------------------------------------------------- */

static int is_loaded_var(const struct rctx *x, CXCursor decl)
{
    for (unsigned i = 0; i < x->nloaded; i++)
        if (clang_equalCursors(x->loaded[i], decl))
            return 1;
    return 0;
}

/* Whether an expression's value may come from memory: a subscript, a dereference, a member
 * through a pointer, a helper call, a __global lvalue, or a variable assigned from such. */
static enum CXChildVisitResult loads_node(CXCursor c, CXCursor p, CXClientData d)
{
    (void)p;
    void **a = d;
    const struct rctx *x = a[0];
    int *r = a[1];
    enum CXCursorKind k = kind(c);
    if (k == CXCursor_ArraySubscriptExpr || tr_is_global_lvalue(c) ||
        (k == CXCursor_UnaryOperator && clang_getCursorUnaryOperatorKind(c) == CXUnaryOperator_Deref) ||
        (k == CXCursor_MemberRefExpr && clang_getCanonicalType(clang_getCursorType(tr_nth_child(c, 0))).kind ==
                                            CXType_Pointer) ||
        (k == CXCursor_CallExpr && (clang_Cursor_isNull(clang_getCursorReferenced(c)) ||
                                    tr_find_fn(x->u, clang_getCursorReferenced(c)))) ||
        (k == CXCursor_DeclRefExpr && is_loaded_var(x, clang_getCursorReferenced(c)))) {
        *r = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

static int loads(const struct rctx *x, CXCursor c)
{
    int r = 0;
    void *a[2] = {(void *)x, &r};
    if (loads_node(c, clang_getNullCursor(), a) == CXChildVisit_Break)
        return 1;
    clang_visitChildren(c, loads_node, a);
    return r;
}

static void mark_loaded(struct rctx *x, CXCursor decl, int *changed)
{
    if (is_loaded_var(x, decl))
        return;
    if (x->nloaded == sizeof x->loaded / sizeof x->loaded[0]) {
        x->fail = 1;
        return;
    }
    x->loaded[x->nloaded++] = decl;
    *changed = 1;
}

/* The variable an lvalue names (through subscripts of arrays and members of structs it holds,
 * never through a pointer), or a null cursor. */
static CXCursor lvalue_var(CXCursor lv)
{
    for (lv = strip(lv);; lv = strip(tr_nth_child(lv, 0))) {
        enum CXCursorKind k = kind(lv);
        if (k == CXCursor_DeclRefExpr)
            return clang_getCursorReferenced(lv);
        if (k != CXCursor_ArraySubscriptExpr && k != CXCursor_MemberRefExpr)
            return clang_getNullCursor();
        if (clang_getCanonicalType(clang_getCursorType(strip(tr_nth_child(lv, 0)))).kind == CXType_Pointer)
            return clang_getNullCursor(); /* p[i], p->f: memory, not the variable p */
    }
}

static enum CXChildVisitResult taint_node(CXCursor c, CXCursor p, CXClientData d)
{
    (void)p;
    void **a = d;
    struct rctx *x = a[0];
    int *changed = a[1];
    enum CXCursorKind k = kind(c);
    if (k == CXCursor_VarDecl && tr_num_children(c) > 0 && loads(x, tr_nth_child(c, tr_num_children(c) - 1)))
        mark_loaded(x, c, changed);
    if (tr_modifies_operand(c)) {
        CXCursor v = lvalue_var(tr_nth_child(c, 0));
        int addr = k == CXCursor_UnaryOperator && clang_getCursorUnaryOperatorKind(c) == CXUnaryOperator_AddrOf;
        int from_memory = (k == CXCursor_BinaryOperator || k == CXCursor_CompoundAssignOperator) &&
                          loads(x, tr_nth_child(c, 1));
        if (!clang_Cursor_isNull(v) && (addr || from_memory))
            mark_loaded(x, v, changed);
    }
    return CXChildVisit_Recurse;
}

static void compute_loaded(struct rctx *x, CXCursor body)
{
    for (int changed = 1, round = 0; changed && !x->fail && round < 64; round++) {
        changed = 0;
        void *a[2] = {x, &changed};
        clang_visitChildren(body, taint_node, a);
    }
}

/* ---- variables ---------------------------------------------------------------------------- */

static int is_const(CXType t)
{
    t = clang_getCanonicalType(t);
    while (t.kind == CXType_ConstantArray)
        t = clang_getCanonicalType(clang_getArrayElementType(t));
    return clang_isConstQualifiedType(t);
}

/* A pointer (or array of pointers) to memory other than __global or __constant. */
static int private_pointer(CXType t)
{
    t = clang_getCanonicalType(t);
    while (t.kind == CXType_ConstantArray)
        t = clang_getCanonicalType(clang_getArrayElementType(t));
    if (t.kind != CXType_Pointer)
        return 0;
    unsigned as = tr_address_space(clang_getPointeeType(t));
    return as != TR_AS_GLOBAL && as != TR_AS_CONSTANT;
}

static unsigned var_space(CXType t)
{
    t = clang_getCanonicalType(t);
    unsigned as = tr_address_space(t);
    while (as == TR_AS_DEFAULT && t.kind == CXType_ConstantArray) {
        t = clang_getArrayElementType(t);
        as = tr_address_space(t);
    }
    return as;
}

static void add_var(struct rctx *x, CXCursor decl, int init)
{
    CXType t = clang_getCursorType(decl);
    unsigned as = var_space(t);
    if (as == TR_AS_CONSTANT)
        return;
    if (as != TR_AS_LOCAL && is_const(t)) { /* computed again by the prologue */
        unsigned n = tr_num_children(decl);
        if (n > 0) {
            struct tr_scan s = tr_scan_subtree(x->u, tr_nth_child(decl, n - 1));
            if (s.global || s.helper)
                x->fail = 1;
        }
        return;
    }
    long long size = clang_Type_getSizeOf(t);
    if (size <= 0 || private_pointer(t) || x->nv == MAX_VARS) {
        x->fail = 1;
        return;
    }
    x->v[x->nv++] = (struct rvar){decl, spelling(decl), (unsigned long long)size, 0, as == TR_AS_LOCAL, init};
}

static enum CXChildVisitResult decl_child(CXCursor c, CXCursor p, CXClientData d)
{
    (void)p;
    void **a = d;
    if (kind(c) == CXCursor_VarDecl)
        add_var(a[0], c, *(int *)a[1]);
    return CXChildVisit_Continue;
}

static void add_decls(struct rctx *x, CXCursor declstmt, int init)
{
    void *a[2] = {x, &init};
    clang_visitChildren(declstmt, decl_child, a);
}

/* A parameter modified (or its address taken) in c. */
static enum CXChildVisitResult param_node(CXCursor c, CXCursor p, CXClientData d)
{
    (void)p;
    int *r = d;
    if (tr_modifies_operand(c)) {
        CXCursor v = lvalue_var(tr_nth_child(c, 0));
        if (!clang_Cursor_isNull(v) && kind(v) == CXCursor_ParmDecl) {
            *r = 1;
            return CXChildVisit_Break;
        }
    }
    return CXChildVisit_Recurse;
}

static int modifies_param(CXCursor c)
{
    int r = 0;
    param_node(c, clang_getNullCursor(), &r);
    if (!r)
        clang_visitChildren(c, param_node, &r);
    return r;
}

static enum CXChildVisitResult body_node(CXCursor c, CXCursor p, CXClientData d)
{
    (void)p;
    int *r = d;
    enum CXCursorKind k = kind(c);
    if (k == CXCursor_ReturnStmt || k == CXCursor_GotoStmt || k == CXCursor_IndirectGotoStmt) {
        *r = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

/* ---- the loop --------------------------------------------------------------------------- */

/* L's condition and step (step: null cursor for while) and body, when L has the shape. */
static int loop_parts(CXCursor l, CXCursor *init, CXCursor *cond, CXCursor *step, CXCursor *body)
{
    *init = *step = clang_getNullCursor();
    if (kind(l) == CXCursor_ForStmt) {
        if (tr_num_children(l) != 4)
            return 0; /* a missing header part: libclang skips it */
        *init = tr_nth_child(l, 0);
        *cond = tr_nth_child(l, 1);
        *step = tr_nth_child(l, 2);
        *body = tr_nth_child(l, 3);
    } else if (kind(l) == CXCursor_WhileStmt) {
        if (tr_num_children(l) != 2)
            return 0; /* a declaration in the condition */
        *cond = tr_nth_child(l, 0);
        *body = tr_nth_child(l, 1);
    } else {
        return 0;
    }
    return kind(*body) == CXCursor_CompoundStmt;
}

static int header_ok(struct rctx *x, CXCursor c)
{
    if (clang_Cursor_isNull(c))
        return 1;
    struct tr_scan s = tr_scan_subtree(x->u, c);
    return !s.global && !s.helper && !s.sync && !loads(x, c);
}

/* ---- text ----------------------------------------------------------------------------------- */

/* Restores (get) or saves (put) the variables of one kind (`which`): 0 privates of the
 * kernel's body, 1 __local ones (the work-group together), 2 L's init variables. */
static void copies(struct strbuf *b, const struct rctx *x, int which, int put, const char *sep)
{
    for (unsigned i = 0; i < x->nv; i++) {
        const struct rvar *v = &x->v[i];
        int w = v->local ? 1 : v->init ? 2 : 0;
        if (w != which)
            continue;
        if (v->local && put)
            strbuf_printf(b, "vast_rs_lput(vast_gw + %llu, (__local const uchar *)&%s, %lluu, vast_lid, vast_lsz)%s",
                          v->off, v->name, v->size, sep);
        else if (v->local)
            strbuf_printf(b, "vast_rs_lget((__local uchar *)&%s, vast_gr + %llu, %lluu, vast_lid, vast_lsz)%s",
                          v->name, v->off, v->size, sep);
        else if (put)
            strbuf_printf(b, "vast_rs_put(vast_rw + %llu, (const uchar *)&%s, %lluu)%s", v->off, v->name, v->size, sep);
        else
            strbuf_printf(b, "vast_rs_get((uchar *)&%s, vast_rr + %llu, %lluu)%s", v->name, v->off, v->size, sep);
    }
}

static int has(const struct rctx *x, int which)
{
    for (unsigned i = 0; i < x->nv; i++)
        if ((x->v[i].local ? 1 : x->v[i].init ? 2 : 0) == which)
            return 1;
    return 0;
}

static void rewrite(struct rctx *x, CXCursor body, CXCursor l, unsigned long long rbytes, unsigned long long gbytes)
{
    CXCursor init, cond, step, lbody;
    loop_parts(l, &init, &cond, &step, &lbody);
    unsigned ks, ke, ls, le, cs, ce, bs, be;
    tr_cursor_span(body, &ks, &ke);
    tr_cursor_span(l, &ls, &le);
    tr_cursor_span(cond, &cs, &ce);
    tr_cursor_span(lbody, &bs, &be);
    unsigned outer = ke - ks + 2;
    struct tr_edits *e = &x->u->edits;
    int locals = has(x, 1), inits = has(x, 2);
    char *t[2];

    /* before L: find the records, restore */
    struct strbuf b = {0};
    strbuf_printf(&b, "{ ulong vast_it = vast_iters.s0; uint vast_rs = 0, vast_ri = 0; __global uchar *vast_rr, "
                      "*vast_rw, *vast_gr, *vast_gw; uint vast_lid = vast_rs_lid(vast_cx), vast_lsz = "
                      "vast_rs_lsz(vast_cx); vast_rs_find(vast_spill, vast_spill_in, vast_iters.s0, %lluu, %lluu, "
                      "&vast_rr, &vast_rw, &vast_gr, &vast_gw, vast_cx); if (vast_iters.s0 != 0 && vast_spill != 0 && "
                      "vast_rr == 0) { vast_rs = 3; VAST_RS_LOST } if (vast_rr != 0) { vast_rs = ((__global const "
                      "ulong *)vast_rr)[1] ? 2u : 0u; vast_ri = 1; } ",
                  rbytes, gbytes);
    if (locals) {
        strbuf_puts(&b, "if (vast_gr != 0) { barrier(CLK_LOCAL_MEM_FENCE); ");
        copies(&b, x, 1, 0, "; ");
        strbuf_puts(&b, "barrier(CLK_LOCAL_MEM_FENCE); } ");
    }
    char *open = strbuf_take(&b);
    for (int v = 0; v < 2; v++) {
        struct strbuf s = {0};
        const char *lost = v == TR_PAGED ? "vast_fault(vast_cx, 0, 1);" : "vast_status[3] = 1u;";
        const char *m = strstr(open, "VAST_RS_LOST");
        strbuf_append(&s, open, (size_t)(m - open));
        strbuf_puts(&s, lost);
        strbuf_puts(&s, m + strlen("VAST_RS_LOST"));
        t[v] = strbuf_take(&s);
    }
    free(open);
    tr_edit_add(e, ls, 0, outer, t[0], t[1]);
    free(t[0]);
    free(t[1]);

    /* the condition: restore the privates once, after L's init (which may assign them, as
     * `for (i = gid; ...)` does); stop at s1 (cut: save L's init variables, in scope only here) */
    strbuf_puts(&b, "(vast_ri ? (vast_ri = 0, ");
    copies(&b, x, 0, 0, ", ");
    if (inits)
        copies(&b, x, 2, 0, ", ");
    strbuf_puts(&b, "(void)0) : (void)0), vast_rs == 0 && (");
    char *copen = strbuf_take(&b);
    strbuf_puts(&b, ") && (vast_it < vast_iters.s1 || (vast_rs = 1, ");
    if (inits) {
        strbuf_puts(&b, "vast_rw != 0 ? (");
        copies(&b, x, 2, 1, ", ");
        strbuf_puts(&b, "(void)0) : (void)0, ");
    }
    char *cclose = strbuf_take(&b);
    strbuf_printf(&b, "%s0))", cclose);
    t[0] = strbuf_take(&b);
    strbuf_printf(&b, "%svast_status[2] = 1u, 0))", cclose);
    t[1] = strbuf_take(&b);
    tr_edit_add(e, cs, 0, ce - cs + 2, copen, copen);
    tr_edit_add(e, ce, 1, ce - cs + 2, t[0], t[1]);
    free(copen);
    free(cclose);
    free(t[0]);
    free(t[1]);

    /* counting iterations */
    if (!clang_Cursor_isNull(step)) {
        unsigned ss, se;
        tr_cursor_span(step, &ss, &se);
        tr_edit_add(e, ss, 0, se - ss + 1, "(", "(");
        tr_edit_add(e, se, 1, se - ss + 1, "), vast_it++", "), vast_it++");
    } else {
        tr_edit_add(e, bs + 1, 0, 0, " vast_it++;", " vast_it++;");
    }

    /* after L: save what a cut (or finished) work-item carries; the epilogue when it ended */
    strbuf_puts(&b, " if (vast_rw != 0 && vast_rs != 3) { ((__global ulong *)vast_rw)[0] = vast_iters.s1; "
                    "((__global ulong *)vast_rw)[1] = vast_rs != 1; } if (vast_rs == 1 && vast_rw != 0) { ");
    copies(&b, x, 0, 1, "; ");
    strbuf_puts(&b, "} ");
    if (locals) {
        strbuf_puts(&b, "if (vast_rs == 1 && vast_gw != 0) { barrier(CLK_LOCAL_MEM_FENCE); ");
        copies(&b, x, 1, 1, "; ");
        strbuf_puts(&b, "} ");
    }
    strbuf_puts(&b, "if (vast_rs == 0) { ");
    char *after = strbuf_take(&b);
    tr_edit_add(e, le, 1, outer, after, after);
    free(after);
    tr_edit_add(e, ke - 1, 1, outer, "} } ", "} } ");
}

int tr_resume_kernel(struct tr_unit *u, struct tr_fn *fn, struct translate_kernel *k)
{
    CXCursor body = tr_fn_body(fn->cursor);
    if (clang_Cursor_isNull(body) || fn->nparams == 0)
        return 0;
    for (unsigned p = 0; p < k->num_args; p++)
        if (k->args[p].kind == TRANSLATE_ARG_LOCAL_POINTER)
            return 0; /* sizes unknown here */
    struct rctx *x = calloc(1, sizeof *x);
    if (x == NULL)
        return 0;
    x->u = u;
    x->fn = fn;
    unsigned n = tr_num_children(body), li = n;
    CXCursor l = clang_getNullCursor(), init, cond, step, lbody;
    for (unsigned i = 0; i < n && !x->fail; i++) {
        CXCursor s = tr_nth_child(body, i);
        if ((kind(s) == CXCursor_ForStmt || kind(s) == CXCursor_WhileStmt) && loop_parts(s, &init, &cond, &step, &lbody) &&
            tr_scan_subtree(u, lbody).global) {
            l = s, li = i;
            break;
        }
        prologue_node(s, clang_getNullCursor(), x);
        if (!x->fail)
            clang_visitChildren(s, prologue_node, x);
        if (kind(s) == CXCursor_DeclStmt)
            add_decls(x, s, 0);
        x->fail |= modifies_param(s);
    }
    int ok = !x->fail && li < n;
    if (ok) {
        compute_loaded(x, body);
        if (!clang_Cursor_isNull(init) && kind(init) == CXCursor_DeclStmt)
            add_decls(x, init, 1);
        int ret = 0;
        clang_visitChildren(lbody, body_node, &ret);
        ok = !x->fail && !ret && !modifies_param(l) && header_ok(x, init) && header_ok(x, cond) && header_ok(x, step);
        /* Work-items leave L in the same range only when its body has a barrier (all of a
         * work-group then run the same iterations): else a barrier after L, or the saving of
         * __local variables behind one, would be reached by some work-items only. */
        int sync_after = 0;
        for (unsigned i = li + 1; i < n; i++)
            sync_after |= tr_scan_subtree(u, tr_nth_child(body, i)).sync;
        if (ok && (sync_after || has(x, 1)) && !tr_scan_subtree(u, lbody).sync)
            ok = 0;
    }
    if (ok) { /* the records: position and done flag, then the variables, 8-byte aligned */
        unsigned long long r = 16, g = 0;
        for (unsigned i = 0; i < x->nv; i++) {
            unsigned long long *o = x->v[i].local ? &g : &r;
            x->v[i].off = *o;
            *o += (x->v[i].size + 7) & ~7ull;
        }
        unsigned ps, pe;
        ok = tr_cursor_span(clang_Cursor_getArgument(fn->cursor, fn->nparams - 1), &ps, &pe) == 0;
        if (ok) {
            rewrite(x, body, l, r, g);
            tr_edit_add(&u->edits, pe, 0, 0, ", ulong2 vast_iters, __global uchar *vast_spill, __global uchar *vast_spill_in",
                        ", ulong2 vast_iters, __global uchar *vast_spill, __global uchar *vast_spill_in");
            k->spill_item_bytes = r;
            k->spill_group_bytes = g;
        }
    }
    for (unsigned i = 0; i < x->nv; i++)
        free(x->v[i].name);
    free(x);
    return ok;
}
