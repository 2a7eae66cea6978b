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
 *    no pointer to private or __local memory: these are saved and restored (a
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
 * Rewrite (both variants, vast_it counting L's iterations from 0), every piece of it inside
 * VAST_RG(...) or VAST_RI(...) (prelude.c, TR_RESUME), so that the runtime's build with
 * -D VAST_WHOLE, for launches of all iterations, has the original loop:
 *   { in a range run (vast_spill set): vast_rs_find(...): the record with position s0 (first
 *     in vast_spill_in, then in vast_spill), the done flag, the body's privates, __local <-
 *     group record (barriers, real local ids);
 *     L with its init restoring what it declares (`T v = VAST_RI(T, off, init)`) or assigns
 *       (`(init), restore`), so no restore runs inside the loop; condition
 *       `vast_rs == 0 && (cond) && (vast_it < s1 || (vast_rs = 1, shadows of L's init vars, 0))`
 *       and vast_it++ per iteration;
 *     in a range run: the write slot found again; position s1 and done (not cut);
 *     if cut (vast_rs == 1): privates and shadows, __local (behind a barrier);
 *     if (vast_rs == 0) { epilogue } }
 *   privates are copied as typed values where their type can be spelled (arrays as bytes),
 *   so that they stay in registers.
 * vast_rs: 0 running, 1 cut at s1 (more iterations), 2 finished in an earlier range, 3 the
 * record was lost (paged: logs a fault on virtual page 0, so the launch fails; inspector:
 * vast_status[3], the planner fails). Records: two
 * slots per work-item (and per work-group), each starting with its position, so a retry of a
 * range (faulted work-groups) reads the state at its start again and split halves find theirs.
 * The inspector reads the paged kernel's spill (vast_spill_in) first, then its own. Called by
 * meta.c per kernel that stride.c did not take. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VARS 64

struct rvar {
    CXCursor decl;
    char *name;
    char *type; /* the type as spelled, for a typed copy; NULL: copied as bytes (arrays) */
    unsigned long long size, off, align;
    int local;  /* __local: the work-group's record */
    int init;   /* declared in L's init */
    int reinit; /* a private of the body that L's init assigns */
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

/* A call given a __global pointer (vloadn reads memory). */
static int global_arg(CXCursor call)
{
    int n = clang_Cursor_getNumArguments(call);
    for (int i = 0; i < n; i++)
        if (tr_is_global_pointer(clang_getCursorType(clang_Cursor_getArgument(call, (unsigned)i))))
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
                                    tr_find_fn(x->u, clang_getCursorReferenced(c)) || global_arg(c))) ||
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

/* The spelling of a private variable's type for a typed copy (`v = *(__global const T *)p`,
 * which keeps v in registers where a byte copy through &v would put it in memory for the whole
 * loop), or NULL when it cannot be spelled as a cast: arrays, volatile, unnamed types. */
static char *copy_type(CXType t)
{
    if (clang_getCanonicalType(t).kind == CXType_ConstantArray || clang_isVolatileQualifiedType(t))
        return NULL;
    CXString s = clang_getTypeSpelling(t);
    const char *p = clang_getCString(s);
    if (!strncmp(p, "__private ", 10))
        p += 10;
    char *r = strchr(p, '(') || strstr(p, "__local") || strstr(p, "__private") ? NULL : translate_strdup(p);
    clang_disposeString(s);
    return r;
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
    long long align = clang_Type_getAlignOf(t);
    x->v[x->nv++] = (struct rvar){decl, spelling(decl), as == TR_AS_LOCAL ? NULL : copy_type(t), (unsigned long long)size,
                                  0, align > 8 ? (unsigned long long)align : 8, as == TR_AS_LOCAL, init, 0};
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
 * kernel's body, 1 __local ones (the work-group together), 2 L's init variables, 3 the
 * privates of the body that L's init assigns. Each copy is an expression. */
static void copies(struct strbuf *b, const struct rctx *x, int which, int put, const char *sep, const char *rec)
{
    for (unsigned i = 0; i < x->nv; i++) {
        const struct rvar *v = &x->v[i];
        int w = v->local ? 1 : v->init ? 2 : 0;
        if (w != which && !(which == 3 && w == 0 && v->reinit))
            continue;
        if (v->type && put)
            strbuf_printf(b, "(*(__global %s *)(%s + %llu) = %s)%s", v->type, rec, v->off, v->name, sep);
        else if (v->type)
            strbuf_printf(b, "(%s = *(__global const %s *)(%s + %llu))%s", v->name, v->type, rec, v->off, sep);
        else if (v->local && put)
            strbuf_printf(b, "vast_rs_lput(%s + %llu, (__local const uchar *)&%s, %lluu, vast_lid, vast_lsz)%s", rec,
                          v->off, v->name, v->size, sep);
        else if (v->local)
            strbuf_printf(b, "vast_rs_lget((__local uchar *)&%s, %s + %llu, %lluu, vast_lid, vast_lsz)%s", v->name,
                          rec, v->off, v->size, sep);
        else if (put)
            strbuf_printf(b, "vast_rs_put(%s + %llu, (const uchar *)&%s, %lluu)%s", rec, v->off, v->name, v->size, sep);
        else
            strbuf_printf(b, "vast_rs_get((uchar *)&%s, %s + %llu, %lluu)%s", v->name, rec, v->off, v->size, sep);
    }
}

static int has(const struct rctx *x, int which)
{
    for (unsigned i = 0; i < x->nv; i++) {
        int w = x->v[i].local ? 1 : x->v[i].init ? 2 : 0;
        if (w == which || (which == 3 && w == 0 && x->v[i].reinit))
            return 1;
    }
    return 0;
}

/* Every variable L's init declares has an initializer (no directive in it: it becomes an
 * argument of VAST_RI) and a type a cast can spell (the restore is a typed load in the
 * initializer), and the init assigns no private of the body. */
static int init_decls_ok(const struct rctx *x)
{
    for (unsigned i = 0; i < x->nv; i++) {
        if (!x->v[i].init)
            continue;
        CXCursor in = clang_Cursor_getVarDeclInitializer(x->v[i].decl);
        if (x->v[i].type == NULL || clang_Cursor_isNull(in) || kind(strip(in)) == CXCursor_InitListExpr)
            return 0;
        unsigned s, e; /* the initializer becomes a macro argument: no directive inside it */
        if (tr_cursor_span(in, &s, &e) != 0 || e > x->u->len || memchr(x->u->text + s, '#', e - s) != NULL)
            return 0;
    }
    for (unsigned i = 0; i < x->nv; i++)
        if (x->v[i].reinit)
            return 0;
    return 1;
}

static enum CXChildVisitResult reinit_node(CXCursor c, CXCursor p, CXClientData d)
{
    (void)p;
    struct rctx *x = d;
    if (tr_modifies_operand(c)) {
        CXCursor v = lvalue_var(tr_nth_child(c, 0));
        for (unsigned i = 0; i < x->nv && !clang_Cursor_isNull(v); i++)
            if (!x->v[i].local && !x->v[i].init && clang_equalCursors(x->v[i].decl, v))
                x->v[i].reinit = 1;
    }
    return CXChildVisit_Recurse;
}

/* The privates of the body that an expression init of L assigns (`for (i = gid; ...)`). */
static void mark_reinit(struct rctx *x, CXCursor init)
{
    reinit_node(init, clang_getNullCursor(), x);
    clang_visitChildren(init, reinit_node, x);
}

/* The work-item's flat local id and the work-group's size, for the copies of __local
 * variables: the real ids, in 32 bits (a kernel with __local variables is work-group bound and
 * never runs in slices, so its real work-group is the original one). */
#define LOCAL_IDS                                                                               \
    "uint vast_lid = (uint)(get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * " \
    "get_local_id(2))), vast_lsz = (uint)(get_local_size(0) * get_local_size(1) * get_local_size(2)); "

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
    int locals = has(x, 1);
    char *t[2];

    /* before L: in a range run (vast_spill set), find the records and restore. The records are
     * found again where they are written (the cut in the condition, after L) rather than kept
     * in variables, so that little of the machinery stays live across the loop (registers:
     * translate/README.md "Resumable loops"; the launches of every iteration run the build
     * without any of it, VAST_WHOLE). */
    char find[160];
    snprintf(find, sizeof find, "vast_rs_find(vast_spill, vast_spill_in, vast_iters.s0, %lluu, %lluu, vast_cx)", rbytes,
             gbytes);
    struct strbuf b = {0};
    strbuf_puts(&b, "{ VAST_RG(ulong vast_it = vast_iters.s0; uint vast_rs = 0; __global uchar *vast_rr = 0; ");
    for (unsigned i = 0; i < x->nv; i++)
        if (x->v[i].init)
            strbuf_printf(&b, "%s vast_sv_%s; ", x->v[i].type, x->v[i].name);
    strbuf_printf(&b, "if (vast_spill != 0) { vast_rs_at vast_ra = %s; vast_rr = vast_ra.rr; if (vast_iters.s0 != 0 && "
                      "vast_rr == 0) { vast_rs = 3; VAST_RS_LOST } if (vast_rr != 0) { vast_rs = ((__global const ulong "
                      "*)vast_rr)[1] ? 2u : 0u; ",
                  find);
    copies(&b, x, 0, 0, "; ", "vast_rr");
    strbuf_puts(&b, "} ");
    if (locals) {
        strbuf_puts(&b, "if (vast_ra.gr != 0) { " LOCAL_IDS "barrier(CLK_LOCAL_MEM_FENCE); ");
        copies(&b, x, 1, 0, "; ", "vast_ra.gr");
        strbuf_puts(&b, "barrier(CLK_LOCAL_MEM_FENCE); } ");
    }
    strbuf_puts(&b, "}) ");
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

    /* L's init restores what it declares or assigns: its declarators' initializers become
     * `vast_rr != 0 ? restored : (initializer)`; an expression init (`i = gid`) is followed by
     * the restore of the privates it assigns. So every restore runs once, before the loop, and
     * the loop sees its variables as the original does (a restore inside the loop, by bytes
     * through &v, kept every restored variable in memory and loop-variant: MatrixMul's paged
     * kernel ran 2.36x its original time that way on an H200, 1.89x with typed copies;
     * tests/bench/xlat.sh). */
    if (!clang_Cursor_isNull(init) && kind(init) == CXCursor_DeclStmt) {
        for (unsigned i = 0; i < x->nv; i++) {
            const struct rvar *v = &x->v[i];
            if (!v->init)
                continue;
            unsigned vs, ve;
            tr_cursor_span(clang_Cursor_getVarDeclInitializer(v->decl), &vs, &ve);
            strbuf_printf(&b, "VAST_RI(%s, %llu, ", v->type, v->off);
            char *w = strbuf_take(&b);
            tr_edit_add(e, vs, 0, ve - vs + 2, w, w);
            tr_edit_add(e, ve, 1, ve - vs + 2, ")", ")");
            free(w);
        }
    } else if (!clang_Cursor_isNull(init) && has(x, 3)) {
        unsigned is, ie;
        tr_cursor_span(init, &is, &ie);
        strbuf_puts(&b, ") VAST_RG(, (vast_rr != 0 ? (");
        copies(&b, x, 3, 0, ", ", "vast_rr");
        strbuf_puts(&b, "(void)0) : (void)0))");
        char *w = strbuf_take(&b);
        tr_edit_add(e, is, 0, ie - is + 2, "(", "(");
        tr_edit_add(e, ie, 1, ie - is + 2, w, w);
        free(w);
    }

    /* the condition: stop at s1 (cut: L's init variables, in scope only here, are copied to
     * their shadows, which the saving after L stores) */
    strbuf_puts(&b, "VAST_RG(vast_rs == 0 &&) (");
    char *copen = strbuf_take(&b);
    strbuf_puts(&b, ") VAST_RG(&& (vast_it < vast_iters.s1 || (vast_rs = 1, ");
    for (unsigned i = 0; i < x->nv; i++)
        if (x->v[i].init)
            strbuf_printf(&b, "vast_sv_%s = %s, ", x->v[i].name, x->v[i].name);
    char *cclose = strbuf_take(&b);
    strbuf_printf(&b, "%s0)))", cclose);
    t[0] = strbuf_take(&b);
    strbuf_printf(&b, "%svast_status[2] = 1u, 0)))", cclose);
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
        tr_edit_add(e, se, 1, se - ss + 1, ") VAST_RG(, vast_it++)", ") VAST_RG(, vast_it++)");
    } else {
        tr_edit_add(e, bs + 1, 0, 0, " VAST_RG(vast_it++;)", " VAST_RG(vast_it++;)");
    }

    /* after L: save what a cut (or finished) work-item carries; the epilogue when it ended */
    strbuf_printf(&b, " VAST_RG(if (vast_spill != 0) { vast_rs_at vast_ra = %s; if (vast_rs != 3) { ((__global "
                      "ulong *)vast_ra.rw)[0] = vast_iters.s1; ((__global ulong *)vast_ra.rw)[1] = vast_rs != 1; } if "
                      "(vast_rs == 1) { ",
                  find);
    copies(&b, x, 0, 1, "; ", "vast_ra.rw");
    for (unsigned i = 0; i < x->nv; i++)
        if (x->v[i].init)
            strbuf_printf(&b, "(*(__global %s *)(vast_ra.rw + %llu) = vast_sv_%s); ", x->v[i].type, x->v[i].off,
                          x->v[i].name);
    strbuf_puts(&b, "} ");
    if (locals) {
        strbuf_puts(&b, "if (vast_rs == 1) { " LOCAL_IDS "barrier(CLK_LOCAL_MEM_FENCE); ");
        copies(&b, x, 1, 1, "; ", "vast_ra.gw");
        strbuf_puts(&b, "} ");
    }
    strbuf_puts(&b, "} if (vast_rs == 0)) { ");
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
    if (ok && !clang_Cursor_isNull(init)) { /* L's init restores what it declares (through the
                                             * initializers) or assigns (after it) */
        mark_reinit(x, init);
        ok = kind(init) != CXCursor_DeclStmt || init_decls_ok(x);
    }
    if (ok) { /* the records: position and done flag, then the variables, each aligned to its
               * type (typed copies) and to 8; a work-item's record to the largest of those */
        unsigned long long r = 16, g = 0, a = 8;
        for (unsigned i = 0; i < x->nv; i++) {
            unsigned long long *o = x->v[i].local ? &g : &r, al = x->v[i].local ? 8 : x->v[i].align;
            *o = (*o + al - 1) / al * al;
            x->v[i].off = *o;
            *o += (x->v[i].size + 7) & ~7ull;
            a = x->v[i].local || al < a ? a : al;
        }
        r = (r + a - 1) / a * a;
        unsigned ps, pe;
        ok = tr_cursor_span(clang_Cursor_getArgument(fn->cursor, fn->nparams - 1), &ps, &pe) == 0;
        if (ok) {
            rewrite(x, body, l, r, g);
            if (tr_cursor_span(l, &fn->ranged[0][0], &fn->ranged[0][1]) == 0)
                fn->nranged = 1;
            tr_edit_add(&u->edits, pe, 0, 0, ", ulong2 vast_iters, __global uchar *vast_spill, __global uchar *vast_spill_in",
                        ", ulong2 vast_iters, __global uchar *vast_spill, __global uchar *vast_spill_in");
            k->spill_item_bytes = r;
            k->spill_group_bytes = g;
        }
    }
    for (unsigned i = 0; i < x->nv; i++) {
        free(x->v[i].name);
        free(x->v[i].type);
    }
    free(x);
    return ok;
}
