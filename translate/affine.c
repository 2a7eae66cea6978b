/* affine.c - host page sets, the translator's side: describes every __global access of a
 * kernel as (parameter, byte offset expression, size, read/write) for translate_affine
 * (translate.h), or gives up (NULL) when the kernel is outside the supported class.
 *
 * Design: one pre-pass over the kernel body records, per variable, how often it is modified
 * (assigned, compound-assigned, ++/--, address taken) and where. Then one pre-order walk
 * with a parent stack checks every place global memory can be reached:
 *  - a global lvalue (a[i], *p, s->f, a[i].f, v[i].x) must reduce to a root p[e], *p,
 *    *(p + e) or p->f on a __global pointer parameter p; the root records the site, its
 *    read/write use decided by what contains the root's lvalue chain (&root only as the
 *    pointer of an atomic builtin);
 *  - a builtin call with a __global pointer argument must be vloadn(e, p), vstoren(v, e, p)
 *    or an atomic on p, p + e or &root; a program function must get no __global pointer;
 *  - a DeclRefExpr of a __global pointer must name a parameter used in one of those forms
 *    (so no pointer escapes into a variable, a comparison or a call).
 * Index expressions compile to postfix nodes (translate_anode) from integer constants
 * (clang_Cursor_Evaluate), unmodified integer parameters, work-item functions, inlined
 * initialisers of unmodified locals, and the variables of counted for loops, which are
 * recognised at their ForStmt (pre-order, so enclosing loops get lower indices). Loops no
 * site needs are dropped at the end. Any failure makes the whole kernel NULL.
 * No global state: a unit may be translated from several threads at once. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 512       /* AST nesting of the walk */
#define MAX_EXPR_DEPTH 256  /* nesting of one compiled expression */
#define MAX_INLINE 32       /* locals inlined into one another */


struct mod {
    CXCursor decl, at; /* at: the (last) modifying operator */
    unsigned count;
};

struct loopvar {
    CXCursor decl;
    unsigned loop;
};

struct actx {
    struct tr_unit *u;
    struct tr_fn *fn;
    struct mod *mods;
    unsigned nmods;
    struct loopvar *lvars;
    unsigned nlvars;
    struct translate_affine *a;
    CXCursor body;
    int fail, inl;
    struct tr_frame st[MAX_DEPTH];
    int depth;
    /* The children of the last statement list reached() walked, and which of them cannot
     * jump: it is asked for every store, and walking a straight run again for each store
     * (tr_nth_child walks too) took a kernel of 4096 statements more than 15 minutes. */
    struct {
        CXCursor parent;
        CXCursor *c;
        unsigned char *no_jump;
        unsigned n;
    } kids;
    unsigned body_kids; /* statements of the body walked so far: st[0].index */
    unsigned ranged_loop[TR_MAX_RANGED]; /* per span of fn->ranged: its loop's index + 1, 0 none */
};

/* ---- cursors --------------------------------------------------------------------- */

static enum CXCursorKind kind(CXCursor c)
{
    return clang_getCursorKind(c);
}

static CXType ctype(CXCursor c)
{
    return clang_getCanonicalType(clang_getCursorType(c));
}

static int same_span(CXCursor a, CXCursor b)
{
    unsigned as, ae, bs, be;
    return tr_cursor_span(a, &as, &ae) == 0 && tr_cursor_span(b, &bs, &be) == 0 &&
           as == bs && ae == be;
}

/* Whether two expression cursors are the same node: clang_equalCursors tells declarations
 * apart, but not expressions reached along different paths (call arguments). */
static int same_expr(CXCursor a, CXCursor b)
{
    return kind(a) == kind(b) && same_span(a, b);
}

/* An implicit cast (or transparent wrapper): an UnexposedExpr with one child of its extent
 * (a vector swizzle is wider than its vector). */
static int is_implicit(CXCursor c)
{
    return kind(c) == CXCursor_UnexposedExpr && tr_num_children(c) == 1 && same_span(c, tr_nth_child(c, 0));
}

/* c without parentheses and implicit casts. */
static CXCursor strip(CXCursor c)
{
    while (kind(c) == CXCursor_ParenExpr || is_implicit(c))
        c = tr_nth_child(c, 0);
    return c;
}

static int binop(CXCursor c, enum CXBinaryOperatorKind op)
{
    return kind(c) == CXCursor_BinaryOperator && clang_getCursorBinaryOperatorKind(c) == op;
}

static int unop(CXCursor c, enum CXUnaryOperatorKind op)
{
    return kind(c) == CXCursor_UnaryOperator && clang_getCursorUnaryOperatorKind(c) == op;
}

static int name_is(CXCursor decl, const char *prefix, int whole)
{
    CXString s = clang_getCursorSpelling(decl);
    const char *n = clang_getCString(s);
    int r = whole ? !strcmp(n, prefix) : !strncmp(n, prefix, strlen(prefix));
    clang_disposeString(s);
    return r;
}

/* The callee of a call to a builtin (not a program function), else a null cursor. */
static CXCursor builtin_callee(struct actx *x, CXCursor call)
{
    CXCursor f = clang_getCursorReferenced(call);
    if (clang_Cursor_isNull(f) || tr_find_fn(x->u, f))
        return clang_getNullCursor();
    return f;
}

static int is_atomic(CXCursor f)
{
    return name_is(f, "atomic_", 0) || name_is(f, "atom_", 0);
}

/* n of vloadn / vstoren (*store set for vstoren), else 0. */
static unsigned vector_width(CXCursor f, int *store)
{
    static const char *const w[] = {"2", "3", "4", "8", "16"};
    CXString s = clang_getCursorSpelling(f);
    const char *n = clang_getCString(s);
    unsigned r = 0;
    *store = !strncmp(n, "vstore", 6);
    const char *rest = !strncmp(n, "vload", 5) ? n + 5 : *store ? n + 6 : NULL;
    for (size_t i = 0; rest && i < sizeof w / sizeof w[0]; i++)
        if (!strcmp(rest, w[i]))
            r = (unsigned)atoi(w[i]);
    clang_disposeString(s);
    return r;
}

static int is_arg(CXCursor call, unsigned i, CXCursor c)
{
    int n = clang_Cursor_getNumArguments(call);
    return n >= 0 && i < (unsigned)n && same_expr(clang_Cursor_getArgument(call, i), c);
}

static int param_index(struct actx *x, CXCursor decl)
{
    return tr_param_index(x->fn->cursor, x->fn->nparams, decl);
}

/* The index of the __global pointer parameter that expression c (stripped) names, or -1. */
static int pointer_param(struct actx *x, CXCursor c)
{
    c = strip(c);
    if (kind(c) != CXCursor_DeclRefExpr || !tr_is_global_pointer(clang_getCursorType(c)))
        return -1;
    return param_index(x, clang_getCursorReferenced(c));
}

/* The integer operand of `p + e` / `e + p` for a __global pointer parameter p (*pi). */
static CXCursor pointer_plus(struct actx *x, CXCursor c, int *pi)
{
    c = strip(c);
    if (!binop(c, CXBinaryOperator_Add))
        return clang_getNullCursor();
    for (unsigned i = 0; i < 2; i++)
        if ((*pi = pointer_param(x, tr_nth_child(c, i))) >= 0)
            return tr_nth_child(c, 1 - i);
    return clang_getNullCursor();
}

/* ---- modifications (pre-pass) ---------------------------------------------------- */

static struct mod *find_mod(struct actx *x, CXCursor decl)
{
    for (unsigned i = 0; i < x->nmods; i++)
        if (clang_equalCursors(x->mods[i].decl, decl))
            return &x->mods[i];
    return NULL;
}

static enum CXChildVisitResult note_mods(CXCursor c, CXCursor p, CXClientData d)
{
    (void)p;
    struct actx *x = d;
    int target = tr_modifies_operand(c);
    CXCursor t = target ? strip(tr_nth_child(c, 0)) : clang_getNullCursor();
    if (target && kind(t) == CXCursor_DeclRefExpr) {
        CXCursor decl = clang_getCursorReferenced(t);
        struct mod *m = find_mod(x, decl);
        if (!m) {
            x->mods = translate_xrealloc(x->mods, (x->nmods + 1) * sizeof *x->mods);
            m = &x->mods[x->nmods++];
            m->decl = decl;
            m->count = 0;
        }
        m->count++;
        m->at = c;
    }
    return CXChildVisit_Recurse;
}

static int modified(struct actx *x, CXCursor decl)
{
    return find_mod(x, decl) != NULL;
}

/* ---- expressions ----------------------------------------------------------------- */

struct ity {
    unsigned char bits, sgn;
};

static int int_type(CXType t, struct ity *ty)
{
    t = clang_getCanonicalType(t);
    switch (t.kind) {
    case CXType_Char_S: case CXType_SChar: case CXType_Short: case CXType_Int:
    case CXType_Long: case CXType_LongLong:
        ty->sgn = 1;
        break;
    case CXType_Bool: case CXType_Char_U: case CXType_UChar: case CXType_UShort:
    case CXType_UInt: case CXType_ULong: case CXType_ULongLong:
        ty->sgn = 0;
        break;
    default:
        return -1;
    }
    long long s = clang_Type_getSizeOf(t);
    if (s != 1 && s != 2 && s != 4 && s != 8)
        return -1;
    ty->bits = (unsigned char)(s * 8);
    return 0;
}

static void push(struct translate_aexpr *e, enum translate_aop op, struct ity ty, long long v)
{
    e->nodes = translate_xrealloc(e->nodes, (e->n + 1) * sizeof *e->nodes);
    e->nodes[e->n++] = (struct translate_anode){(unsigned char)op, ty.bits, ty.sgn, v};
}

static int eval_int(CXCursor c, long long *v)
{
    CXEvalResult r = clang_Cursor_Evaluate(c);
    if (!r)
        return 0;
    int ok = clang_EvalResult_getKind(r) == CXEval_Int;
    if (ok)
        *v = clang_EvalResult_isUnsignedInt(r) ? (long long)clang_EvalResult_getAsUnsigned(r)
                                               : clang_EvalResult_getAsLongLong(r);
    clang_EvalResult_dispose(r);
    return ok;
}

static int compile(struct actx *x, CXCursor c, struct translate_aexpr *e, int depth);

/* c, then a CAST when its type is not ty. */
static int compile_as(struct actx *x, CXCursor c, struct ity ty, struct translate_aexpr *e,
                      int depth)
{
    struct ity ct;
    if (int_type(clang_getCursorType(c), &ct) != 0 || compile(x, c, e, depth + 1) != 0)
        return -1;
    if (ct.bits != ty.bits || ct.sgn != ty.sgn)
        push(e, TRANSLATE_AOP_CAST, ty, 0);
    return 0;
}

static int loop_of(struct actx *x, CXCursor decl)
{
    for (unsigned i = 0; i < x->nlvars; i++)
        if (clang_equalCursors(x->lvars[i].decl, decl))
            return (int)x->lvars[i].loop;
    return -1;
}

static int compile_ref(struct actx *x, CXCursor c, struct ity ty, struct translate_aexpr *e,
                       int depth)
{
    CXCursor d = clang_getCursorReferenced(c);
    int i;
    if (kind(d) == CXCursor_ParmDecl) {
        if ((i = param_index(x, d)) < 0 || modified(x, d))
            return -1;
        push(e, TRANSLATE_AOP_ARG, ty, i);
        return 0;
    }
    if (kind(d) != CXCursor_VarDecl)
        return -1;
    if ((i = loop_of(x, d)) >= 0) {
        push(e, TRANSLATE_AOP_LOOP, ty, i);
        return 0;
    }
    CXCursor init = clang_Cursor_getVarDeclInitializer(d);
    if (modified(x, d) || clang_Cursor_isNull(init) || x->inl >= MAX_INLINE)
        return -1;
    x->inl++;
    int r = compile_as(x, init, ty, e, depth);
    x->inl--;
    return r;
}

static int compile_call(struct actx *x, CXCursor c, struct ity ty, struct translate_aexpr *e,
                        int depth)
{
    static const struct { const char *name; enum translate_aop op; } ids[] = {
        {"get_global_id", TRANSLATE_AOP_GLOBAL_ID}, {"get_local_id", TRANSLATE_AOP_LOCAL_ID},
        {"get_group_id", TRANSLATE_AOP_GROUP_ID}, {"get_global_size", TRANSLATE_AOP_GLOBAL_SIZE},
        {"get_local_size", TRANSLATE_AOP_LOCAL_SIZE},
        {"get_num_groups", TRANSLATE_AOP_NUM_GROUPS},
        {"get_global_offset", TRANSLATE_AOP_GLOBAL_OFFSET},
    };
    static const struct { const char *name; int nargs; enum translate_aop op[2]; } fns[] = {
        {"min", 2, {TRANSLATE_AOP_MIN, 0}}, {"max", 2, {TRANSLATE_AOP_MAX, 0}},
        {"clamp", 3, {TRANSLATE_AOP_MAX, TRANSLATE_AOP_MIN}},
        {"mul24", 2, {TRANSLATE_AOP_MUL, 0}},
        {"mad24", 3, {TRANSLATE_AOP_MUL, TRANSLATE_AOP_ADD}},
    };
    CXCursor f = builtin_callee(x, c);
    int n = clang_Cursor_getNumArguments(c);
    long long dim;
    if (clang_Cursor_isNull(f))
        return -1;
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (name_is(f, ids[i].name, 1)) {
            if (n != 1 || !eval_int(clang_Cursor_getArgument(c, 0), &dim) || dim < 0 || dim > 2)
                return -1;
            push(e, ids[i].op, ty, dim);
            return 0;
        }
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (name_is(f, fns[i].name, 1) && n == fns[i].nargs) {
            for (int a = 0; a < n; a++) {
                if (compile_as(x, clang_Cursor_getArgument(c, (unsigned)a), ty, e, depth) != 0)
                    return -1;
                if (a > 0)
                    push(e, fns[i].op[a - 1], ty, 0);
            }
            return 0;
        }
    return -1;
}

static int compile_binary(struct actx *x, CXCursor c, struct ity ty, struct translate_aexpr *e,
                          int depth)
{
    static const struct { enum CXBinaryOperatorKind k; enum translate_aop op; } ops[] = {
        {CXBinaryOperator_Add, TRANSLATE_AOP_ADD}, {CXBinaryOperator_Sub, TRANSLATE_AOP_SUB},
        {CXBinaryOperator_Mul, TRANSLATE_AOP_MUL}, {CXBinaryOperator_Div, TRANSLATE_AOP_DIV},
        {CXBinaryOperator_Rem, TRANSLATE_AOP_REM}, {CXBinaryOperator_Shl, TRANSLATE_AOP_SHL},
        {CXBinaryOperator_Shr, TRANSLATE_AOP_SHR},
    };
    enum CXBinaryOperatorKind k = clang_getCursorBinaryOperatorKind(c);
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (ops[i].k == k) {
            int shift = k == CXBinaryOperator_Shl || k == CXBinaryOperator_Shr;
            CXCursor r = tr_nth_child(c, 1);
            struct ity rt;
            if (compile_as(x, tr_nth_child(c, 0), ty, e, depth) != 0 ||
                int_type(clang_getCursorType(r), &rt) != 0 || /* a shift count keeps its type */
                compile_as(x, r, shift ? rt : ty, e, depth) != 0)
                return -1;
            push(e, ops[i].op, ty, 0);
            return 0;
        }
    return -1;
}

/* Appends the postfix program of integer expression c to e; -1 if unsupported. */
static int compile(struct actx *x, CXCursor c, struct translate_aexpr *e, int depth)
{
    struct ity ty;
    long long v;
    if (depth > MAX_EXPR_DEPTH || int_type(clang_getCursorType(c), &ty) != 0)
        return -1;
    if (eval_int(c, &v)) {
        push(e, TRANSLATE_AOP_CONST, ty, v);
        return 0;
    }
    switch (kind(c)) {
    case CXCursor_ParenExpr:
        return compile(x, tr_nth_child(c, 0), e, depth + 1);
    case CXCursor_UnexposedExpr:
        return is_implicit(c) ? compile_as(x, tr_nth_child(c, 0), ty, e, depth) : -1;
    case CXCursor_CStyleCastExpr: {
        CXCursor last = clang_getNullCursor();
        for (unsigned i = 0; !clang_Cursor_isNull(tr_nth_child(c, i)); i++)
            last = tr_nth_child(c, i);
        return clang_Cursor_isNull(last) ? -1 : compile_as(x, last, ty, e, depth);
    }
    case CXCursor_DeclRefExpr:
        return compile_ref(x, c, ty, e, depth);
    case CXCursor_CallExpr:
        return compile_call(x, c, ty, e, depth);
    case CXCursor_BinaryOperator:
        return compile_binary(x, c, ty, e, depth);
    case CXCursor_UnaryOperator:
        if (unop(c, CXUnaryOperator_Plus))
            return compile_as(x, tr_nth_child(c, 0), ty, e, depth);
        if (!unop(c, CXUnaryOperator_Minus) || compile_as(x, tr_nth_child(c, 0), ty, e, depth) != 0)
            return -1;
        push(e, TRANSLATE_AOP_NEG, ty, 0);
        return 0;
    case CXCursor_ConditionalOperator:
        if (compile_as(x, tr_nth_child(c, 1), ty, e, depth) != 0 ||
            compile_as(x, tr_nth_child(c, 2), ty, e, depth) != 0)
            return -1;
        push(e, TRANSLATE_AOP_EITHER, ty, 0);
        return 0;
    default:
        return -1;
    }
}

/* ---- sites ----------------------------------------------------------------------- */

static void free_guards(struct translate_aguard *g, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        free(g[i].lhs.nodes);
        free(g[i].rhs.nodes);
    }
    free(g);
}

/* Where a site at text offset `at` runs under iteration ranges: inside a ranged loop, after
 * one (it then runs where that loop ends), or neither (any range). The loop's number is its
 * span's index here until try_loop meets it (range_loop then becomes the loop's index; a
 * ranged loop the walk never recorded leaves the description without ranges). */
static void place_site(struct actx *x, struct translate_asite *site, unsigned at)
{
    for (unsigned k = 0; k < x->fn->nranged; k++) {
        if (at >= x->fn->ranged[k][0] && at < x->fn->ranged[k][1])
            site->range_part = 1, site->range_loop = k;
        else if (at >= x->fn->ranged[k][1] && site->range_part == 0)
            site->range_part = 2, site->range_loop = k;
    }
}

static void add_site(struct actx *x, int arg, CXCursor index, long long scale, unsigned bytes,
                     unsigned access, struct translate_aguard *guards, int nguards)
{
    static const struct ity s64 = {64, 1};
    struct translate_aexpr off = {NULL, 0};
    if (arg < 0 || scale <= 0) {
        free_guards(guards, nguards > 0 ? (unsigned)nguards : 0);
        x->fail = 1;
        return;
    }
    if (clang_Cursor_isNull(index)) {
        push(&off, TRANSLATE_AOP_CONST, s64, 0);
    } else if (compile(x, index, &off, 0) == 0) {
        push(&off, TRANSLATE_AOP_CAST, s64, 0);
        push(&off, TRANSLATE_AOP_CONST, s64, scale);
        push(&off, TRANSLATE_AOP_MUL, s64, 0);
    } else {
        free(off.nodes);
        free_guards(guards, nguards > 0 ? (unsigned)nguards : 0);
        x->fail = 1;
        return;
    }
    struct translate_affine *a = x->a;
    a->sites = translate_xrealloc(a->sites, (a->nsites + 1) * sizeof *a->sites);
    a->sites[a->nsites++] = (struct translate_asite){(unsigned)arg, bytes, access, nguards >= 0, off,
                                                     guards, nguards > 0 ? (unsigned)nguards : 0, 0, 0};
    place_site(x, &a->sites[a->nsites - 1], x->st[x->depth - 1].start);
}

/* The nearest ancestor of st[d] that is not a parenthesis or an implicit cast; *below gets
 * the depth of its child on the way. -1 at the top. */
static int up(struct actx *x, int d, int *below)
{
    while (d > 0 && (x->st[d - 1].kind == CXCursor_ParenExpr ||
                     (x->st[d - 1].kind == CXCursor_UnexposedExpr &&
                      x->st[d - 1].start == x->st[d].start && x->st[d - 1].end == x->st[d].end)))
        d--;
    *below = d;
    return d - 1;
}

/* Whether st[p] is a call to an atomic builtin whose pointer argument is st[below]. */
static int atomic_pointer(struct actx *x, int p, int below)
{
    if (p < 0 || x->st[p].kind != CXCursor_CallExpr)
        return 0;
    CXCursor f = builtin_callee(x, x->st[p].c);
    return !clang_Cursor_isNull(f) && is_atomic(f) && is_arg(x->st[p].c, 0, x->st[below].c);
}

/* How the root lvalue at depth d is used: climbs its lvalue chain (member '.', swizzle,
 * element of an array or vector member) and asks what contains it. 0: not supported. */
static unsigned root_access(struct actx *x, int d)
{
    for (;;) {
        if (d == 0)
            return TRANSLATE_READ;
        struct tr_frame *p = &x->st[d - 1], *me = &x->st[d];
        enum CXTypeKind mt = ctype(me->c).kind;
        int vec = mt == CXType_ExtVector || mt == CXType_Vector;
        if (p->kind == CXCursor_ParenExpr ||
            (p->kind == CXCursor_MemberRefExpr && mt != CXType_Pointer) ||
            (p->kind == CXCursor_UnexposedExpr && (p->start < me->start || p->end > me->end)) ||
            (p->kind == CXCursor_ArraySubscriptExpr && me->index == 0 && vec)) {
            d--;
            continue;
        }
        if (p->kind == CXCursor_UnexposedExpr && mt == CXType_ConstantArray && d >= 2 &&
            x->st[d - 2].kind == CXCursor_ArraySubscriptExpr && p->index == 0) {
            d -= 2; /* array member decays, then is subscripted */
            continue;
        }
        break;
    }
    struct tr_frame *p = &x->st[d - 1];
    int below;
    switch (p->kind) {
    case CXCursor_BinaryOperator:
        return binop(p->c, CXBinaryOperator_Assign) && x->st[d].index == 0
                   ? TRANSLATE_WRITE : TRANSLATE_READ;
    case CXCursor_CompoundAssignOperator:
        return x->st[d].index == 0 ? TRANSLATE_READ | TRANSLATE_WRITE : TRANSLATE_READ;
    case CXCursor_UnaryOperator:
        switch (clang_getCursorUnaryOperatorKind(p->c)) {
        case CXUnaryOperator_PostInc: case CXUnaryOperator_PostDec:
        case CXUnaryOperator_PreInc: case CXUnaryOperator_PreDec:
            return TRANSLATE_READ | TRANSLATE_WRITE;
        case CXUnaryOperator_AddrOf: {
            int call = up(x, d - 1, &below);
            return atomic_pointer(x, call, below) ? TRANSLATE_READ | TRANSLATE_WRITE : 0;
        }
        default:
            return TRANSLATE_READ;
        }
    default:
        return TRANSLATE_READ;
    }
}

/* ---- whole stores (translate_asite.whole) ------------------------------------------ */

struct guards {
    struct translate_aguard *g;
    int n;
};

static int has_loop_node(const struct translate_aexpr *e)
{
    for (unsigned i = 0; i < e->n; i++)
        if (e->nodes[i].op == TRANSLATE_AOP_LOOP)
            return 1;
    return 0;
}

/* Adds the guards under which condition c is true (negate: false); -1 when c is not
 * comparisons of compiled integer expressions joined by && (negated: ||). */
static int add_guards(struct actx *x, CXCursor c, int negate, struct guards *gs)
{
    c = strip(c);
    if (binop(c, negate ? CXBinaryOperator_LOr : CXBinaryOperator_LAnd))
        return add_guards(x, tr_nth_child(c, 0), negate, gs) || add_guards(x, tr_nth_child(c, 1), negate, gs) ? -1 : 0;
    if (kind(c) != CXCursor_BinaryOperator)
        return -1;
    enum CXBinaryOperatorKind k = clang_getCursorBinaryOperatorKind(c);
    int lt = k == CXBinaryOperator_LT, le = k == CXBinaryOperator_LE;
    int gt = k == CXBinaryOperator_GT, ge = k == CXBinaryOperator_GE;
    if (!(lt || le || gt || ge))
        return -1;
    /* a < b, !(a >= b): a < b; a <= b, !(a > b): a <= b; a > b, !(a <= b): b < a; ... */
    int swap = negate ? (lt || le) : (gt || ge);
    int strict = negate ? (ge || le) : (lt || gt);
    struct translate_aguard g = {{NULL, 0}, {NULL, 0}, strict ? TRANSLATE_ACMP_LT : TRANSLATE_ACMP_LE};
    int bad = compile(x, tr_nth_child(c, swap ? 1 : 0), &g.lhs, 0) != 0 ||
              compile(x, tr_nth_child(c, swap ? 0 : 1), &g.rhs, 0) != 0 ||
              has_loop_node(&g.lhs) || has_loop_node(&g.rhs);
    if (bad) {
        free(g.lhs.nodes);
        free(g.rhs.nodes);
        return -1;
    }
    gs->g = translate_xrealloc(gs->g, (size_t)(gs->n + 1) * sizeof *gs->g);
    gs->g[gs->n++] = g;
    return 0;
}

/* Whether nothing in statement c can leave the kernel or jump (return, goto, labels). */
static enum CXChildVisitResult find_jump(CXCursor c, CXCursor p, CXClientData d)
{
    (void)p;
    enum CXCursorKind k = kind(c);
    if (k == CXCursor_ReturnStmt || k == CXCursor_GotoStmt || k == CXCursor_IndirectGotoStmt ||
        k == CXCursor_LabelStmt) {
        *(int *)d = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

static int no_jump(CXCursor c)
{
    int found = 0;
    if (find_jump(c, c, &found) == CXChildVisit_Recurse)
        clang_visitChildren(c, find_jump, &found);
    return !found;
}

/* A statement before the store: one that cannot jump, or `if (c) return;` (guards: !c). */
static int before_store(struct actx *x, CXCursor c, struct guards *gs)
{
    if (no_jump(c))
        return 0;
    if (kind(c) != CXCursor_IfStmt || tr_num_children(c) != 2)
        return -1;
    CXCursor then = tr_nth_child(c, 1);
    if (kind(then) == CXCursor_CompoundStmt && tr_num_children(then) == 1)
        then = tr_nth_child(then, 0);
    if (kind(then) != CXCursor_ReturnStmt || tr_num_children(then) != 0)
        return -1;
    return add_guards(x, tr_nth_child(c, 0), 1, gs);
}

static enum CXChildVisitResult add_kid(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    struct actx *x = d;
    x->kids.c = translate_xrealloc(x->kids.c, (x->kids.n + 1) * sizeof *x->kids.c);
    x->kids.no_jump = translate_xrealloc(x->kids.no_jump, x->kids.n + 1);
    x->kids.c[x->kids.n] = c;
    x->kids.no_jump[x->kids.n++] = (unsigned char)no_jump(c);
    return CXChildVisit_Continue;
}

/* x->kids for parent. */
static void kids_of(struct actx *x, CXCursor parent)
{
    if (x->kids.c != NULL && clang_equalCursors(x->kids.parent, parent))
        return;
    x->kids.n = 0;
    x->kids.parent = parent;
    clang_visitChildren(parent, add_kid, x);
}

/* Statement st[s] (or, s < 0, the body) is reached by every work-item whose guards hold. */
static int reached(struct actx *x, int s, struct guards *gs)
{
    while (s >= 0) {
        if (s > 0 && x->st[s - 1].kind == CXCursor_IfStmt) {
            CXCursor i = x->st[s - 1].c;
            unsigned n = tr_num_children(i);
            if ((n != 2 && n != 3) || x->st[s].index != 1 || add_guards(x, tr_nth_child(i, 0), 0, gs) != 0)
                return -1;
            s--;
            continue;
        }
        if (s > 0 && x->st[s - 1].kind != CXCursor_CompoundStmt)
            return -1;
        kids_of(x, s > 0 ? x->st[s - 1].c : x->body);
        for (unsigned i = 0; i < x->st[s].index && i < x->kids.n; i++)
            if (!x->kids.no_jump[i] && before_store(x, x->kids.c[i], gs) != 0)
                return -1;
        s--;
    }
    return 0;
}

/* The root lvalue st[d] of `size` bytes, stored to: its guards (*out, the count returned)
 * when it is a whole store (translate.h, translate_asite.whole), else -1. */
static int whole_store(struct actx *x, int d, long long size, struct translate_aguard **out)
{
    CXType t = ctype(x->st[d].c);
    struct ity ty;
    int scalar = int_type(t, &ty) == 0 || t.kind == CXType_Float || t.kind == CXType_Double ||
                 t.kind == CXType_Half;
    int vector = (t.kind == CXType_ExtVector || t.kind == CXType_Vector) && clang_getNumElements(t) != 3;
    int below, p = up(x, d, &below);
    if (!(scalar || vector) || clang_Type_getSizeOf(t) != size || p < 0 ||
        !binop(x->st[p].c, CXBinaryOperator_Assign) || x->st[below].index != 0)
        return -1;
    struct guards gs = {NULL, 0};
    if (reached(x, p, &gs) != 0) {
        free_guards(gs.g, (unsigned)gs.n);
        return -1;
    }
    *out = gs.g;
    return gs.n;
}

/* Global lvalue st[d]: descends its lvalue chain to the root, which must be on a parameter;
 * at the root itself, records the site. */
static void check_lvalue(struct actx *x, int d)
{
    CXCursor c = x->st[d].c, index = clang_getNullCursor();
    int self = 1, arg = -1;
    for (;; self = 0) {
        enum CXCursorKind k = kind(c);
        CXCursor b = tr_nth_child(c, 0);
        enum CXTypeKind bt = ctype(b).kind;
        if (k == CXCursor_ParenExpr || k == CXCursor_UnexposedExpr ||
            (k == CXCursor_MemberRefExpr && bt != CXType_Pointer) ||
            (k == CXCursor_ArraySubscriptExpr && (bt == CXType_ExtVector || bt == CXType_Vector))) {
            c = b;
        } else if (k == CXCursor_ArraySubscriptExpr && bt == CXType_Pointer &&
                   is_implicit(b) && ctype(tr_nth_child(b, 0)).kind == CXType_ConstantArray) {
            c = tr_nth_child(b, 0);
        } else if (k == CXCursor_ArraySubscriptExpr || k == CXCursor_MemberRefExpr) {
            arg = pointer_param(x, b);
            index = k == CXCursor_ArraySubscriptExpr ? tr_nth_child(c, 1) : index;
            break;
        } else if (unop(c, CXUnaryOperator_Deref)) {
            if ((arg = pointer_param(x, b)) < 0)
                index = pointer_plus(x, b, &arg);
            break;
        } else {
            break;
        }
    }
    if (arg < 0) {
        x->fail = 1;
        return;
    }
    if (!self)
        return;
    long long size = clang_Type_getSizeOf(kind(c) == CXCursor_MemberRefExpr
        ? clang_getPointeeType(ctype(tr_nth_child(c, 0))) : clang_getCursorType(c));
    unsigned access = root_access(x, d);
    struct translate_aguard *g = NULL;
    int ng = access == TRANSLATE_WRITE ? whole_store(x, d, size, &g) : -1;
    if (!access)
        x->fail = 1;
    else
        add_site(x, arg, index, size, (unsigned)size, access, g, ng);
}

/* A DeclRefExpr of a __global pointer (st[d]): a parameter, used only as a site's base. */
static void check_pointer_ref(struct actx *x, int d)
{
    int below, p = up(x, d, &below), b2;
    if (param_index(x, clang_getCursorReferenced(x->st[d].c)) < 0 || p < 0) {
        x->fail = 1;
        return;
    }
    struct tr_frame *f = &x->st[p];
    CXCursor callee;
    int store, ok;
    switch (f->kind) {
    case CXCursor_ArraySubscriptExpr:
        ok = x->st[below].index == 0;
        break;
    case CXCursor_MemberRefExpr:
        ok = 1; /* p->f */
        break;
    case CXCursor_UnaryOperator:
        ok = unop(f->c, CXUnaryOperator_Deref);
        break;
    case CXCursor_BinaryOperator: {
        int pp = up(x, p, &b2);
        ok = binop(f->c, CXBinaryOperator_Add) &&
             ((pp >= 0 && unop(x->st[pp].c, CXUnaryOperator_Deref)) || atomic_pointer(x, pp, b2));
        break;
    }
    case CXCursor_CallExpr:
        callee = builtin_callee(x, f->c);
        ok = !clang_Cursor_isNull(callee);
        if (ok) {
            unsigned n = vector_width(callee, &store);
            ok = n ? is_arg(f->c, store ? 2 : 1, x->st[below].c) : atomic_pointer(x, p, below);
        }
        break;
    default:
        ok = 0;
    }
    if (!ok)
        x->fail = 1;
}

static void check_ref(struct actx *x, int d)
{
    CXCursor decl = clang_getCursorReferenced(x->st[d].c);
    if (kind(decl) != CXCursor_VarDecl && kind(decl) != CXCursor_ParmDecl)
        return;
    CXType t = clang_getCursorType(decl);
    if (tr_is_global_pointer(t))
        check_pointer_ref(x, d);
    else if (tr_address_space(t) == TR_AS_GLOBAL)
        x->fail = 1; /* a program-scope __global variable */
}

/* A call: program functions get no __global pointer; builtins only vloadn/vstoren/atomics. */
static void check_call(struct actx *x, CXCursor c)
{
    CXCursor f = clang_getCursorReferenced(c);
    struct tr_fn *pf = clang_Cursor_isNull(f) ? NULL : tr_find_fn(x->u, f);
    int n = clang_Cursor_getNumArguments(c), store, arg;
    if (clang_Cursor_isNull(f) || (pf && pf->unknown_access)) {
        x->fail = 1;
        return;
    }
    unsigned width = pf ? 0 : vector_width(f, &store);
    CXCursor e;
    for (int i = 0; i < n && !x->fail; i++) {
        CXCursor a = clang_Cursor_getArgument(c, (unsigned)i);
        if (!tr_is_global_pointer(clang_getCursorType(a)))
            continue;
        CXType pt = clang_getPointeeType(clang_getCanonicalType(clang_getCursorType(a)));
        long long elem = clang_Type_getSizeOf(pt);
        unsigned rw = TRANSLATE_READ | TRANSLATE_WRITE;
        if (pf) {
            x->fail = 1;
        } else if (width && i == (store ? 2 : 1)) {
            add_site(x, pointer_param(x, a), clang_Cursor_getArgument(c, store ? 1 : 0),
                     elem * width, (unsigned)(elem * width), store ? TRANSLATE_WRITE : TRANSLATE_READ, NULL, -1);
        } else if (is_atomic(f) && i == 0 && (arg = pointer_param(x, a)) >= 0) {
            add_site(x, arg, clang_getNullCursor(), elem, (unsigned)elem, rw, NULL, -1);
        } else if (is_atomic(f) && i == 0 && !clang_Cursor_isNull(e = pointer_plus(x, a, &arg))) {
            add_site(x, arg, e, elem, (unsigned)elem, rw, NULL, -1);
        } else if (!is_atomic(f) || i != 0 || !unop(strip(a), CXUnaryOperator_AddrOf)) {
            x->fail = 1; /* &root: the root records the site */
        }
    }
}

/* ---- counted loops --------------------------------------------------------------- */

static void free_loop(struct translate_aloop *l)
{
    free(l->first.nodes);
    free(l->bound.nodes);
    free(l->step.nodes);
}

static int refers_to(CXCursor c, CXCursor decl)
{
    c = strip(c);
    return kind(c) == CXCursor_DeclRefExpr &&
           clang_equalCursors(clang_getCursorReferenced(c), decl);
}

/* A step amount that is never negative: a constant > 0, a size function, an unsigned value. */
static int positive(CXCursor c)
{
    long long v;
    struct ity t;
    CXCursor s = strip(c), f;
    if (eval_int(c, &v))
        return v > 0;
    if (kind(s) == CXCursor_CallExpr && !clang_Cursor_isNull(f = clang_getCursorReferenced(s)) &&
        (name_is(f, "get_local_size", 1) || name_is(f, "get_global_size", 1) ||
         name_is(f, "get_num_groups", 1)))
        return 1;
    return int_type(clang_getCursorType(s), &t) == 0 && !t.sgn;
}

/* +1: the step increases var, -1: decreases it, 0: another form; *amount: the magnitude
 * added or subtracted (null: 1). */
static int step_direction(CXCursor step, CXCursor var, CXCursor *amount)
{
    step = strip(step);
    *amount = clang_getNullCursor();
    if (kind(step) == CXCursor_UnaryOperator)
        switch (clang_getCursorUnaryOperatorKind(step)) {
        case CXUnaryOperator_PostInc: case CXUnaryOperator_PreInc:
            return 1;
        case CXUnaryOperator_PostDec: case CXUnaryOperator_PreDec:
            return -1;
        default:
            return 0;
        }
    if (kind(step) == CXCursor_CompoundAssignOperator) {
        enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(step);
        if (!positive(*amount = tr_nth_child(step, 1)))
            return 0;
        return op == CXBinaryOperator_AddAssign ? 1 : op == CXBinaryOperator_SubAssign ? -1 : 0;
    }
    if (!binop(step, CXBinaryOperator_Assign))
        return 0;
    CXCursor r = strip(tr_nth_child(step, 1));
    if (binop(r, CXBinaryOperator_Add)) {
        for (unsigned i = 0; i < 2; i++)
            if (refers_to(tr_nth_child(r, i), var) && positive(*amount = tr_nth_child(r, 1 - i)))
                return 1;
    } else if (binop(r, CXBinaryOperator_Sub) && refers_to(tr_nth_child(r, 0), var) &&
               positive(*amount = tr_nth_child(r, 1))) {
        return -1;
    }
    return 0;
}

/* `for (T i = first; i CMP bound; step)` at st[d]: records the loop and its variable. */
static void try_loop(struct actx *x, int d)
{
    CXCursor f = x->st[d].c, init = tr_nth_child(f, 0), cond = tr_nth_child(f, 1), step = tr_nth_child(f, 2);
    if (tr_num_children(f) != 4 || kind(init) != CXCursor_DeclStmt || tr_num_children(init) != 1)
        return;
    CXCursor var = tr_nth_child(init, 0), first = clang_Cursor_getVarDeclInitializer(var);
    struct mod *m = find_mod(x, var);
    struct ity vt;
    if (kind(var) != CXCursor_VarDecl || clang_Cursor_isNull(first) ||
        int_type(clang_getCursorType(var), &vt) != 0 || !m || m->count != 1 ||
        !same_expr(m->at, strip(step)) || kind(cond) != CXCursor_BinaryOperator)
        return;
    static const enum translate_acmp cmps[4][2] = {
        {TRANSLATE_ACMP_LT, TRANSLATE_ACMP_GT}, {TRANSLATE_ACMP_LE, TRANSLATE_ACMP_GE},
        {TRANSLATE_ACMP_GT, TRANSLATE_ACMP_LT}, {TRANSLATE_ACMP_GE, TRANSLATE_ACMP_LE}};
    static const enum CXBinaryOperatorKind ops[4] = {CXBinaryOperator_LT, CXBinaryOperator_LE,
                                                     CXBinaryOperator_GT, CXBinaryOperator_GE};
    enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(cond);
    int side = refers_to(tr_nth_child(cond, 0), var) ? 0 : refers_to(tr_nth_child(cond, 1), var) ? 1 : -1;
    int cmp = -1;
    for (int i = 0; i < 4 && side >= 0; i++)
        if (ops[i] == op)
            cmp = cmps[i][side];
    CXCursor amount;
    int dir = step_direction(step, var, &amount);
    if (cmp < 0 || dir == 0 || (dir > 0) != (cmp == TRANSLATE_ACMP_LT || cmp == TRANSLATE_ACMP_LE))
        return;
    struct translate_aloop l = {{NULL, 0}, {NULL, 0}, {NULL, 0}, (unsigned char)cmp, 0};
    if (compile_as(x, first, vt, &l.first, 0) != 0 ||
        compile(x, tr_nth_child(cond, (unsigned)(1 - side)), &l.bound, 0) != 0) {
        free_loop(&l);
        return;
    }
    if (clang_Cursor_isNull(amount)) {
        push(&l.step, TRANSLATE_AOP_CONST, vt, 1);
    } else if (compile(x, amount, &l.step, 0) != 0) {
        free(l.step.nodes); /* unknown: the loop still counts */
        l.step = (struct translate_aexpr){NULL, 0};
    }
    struct translate_affine *a = x->a;
    for (unsigned k = 0; k < x->fn->nranged; k++)
        if (x->fn->ranged[k][0] == x->st[d].start) {
            l.ranged = 1;
            x->ranged_loop[k] = a->nloops + 1; /* +1: 0 is "not recorded" */
        }
    a->loops = translate_xrealloc(a->loops, (a->nloops + 1) * sizeof *a->loops);
    a->loops[a->nloops] = l;
    x->lvars = translate_xrealloc(x->lvars, (x->nlvars + 1) * sizeof *x->lvars);
    x->lvars[x->nlvars++] = (struct loopvar){var, a->nloops++};
}

static void mark_loops(const struct translate_aexpr *e, unsigned *used)
{
    for (unsigned i = 0; i < e->n; i++)
        if (e->nodes[i].op == TRANSLATE_AOP_LOOP)
            used[e->nodes[i].v] = 1;
}

static void renumber_loops(struct translate_aexpr *e, const unsigned *map)
{
    for (unsigned i = 0; i < e->n; i++)
        if (e->nodes[i].op == TRANSLATE_AOP_LOOP)
            e->nodes[i].v = map[e->nodes[i].v];
}

/* Drops the loops no site needs (directly or through a needed loop's bounds), renumbering
 * the rest in their order. */
static void prune_loops(struct translate_affine *a)
{
    unsigned *map = calloc(a->nloops + 1, sizeof *map), n = 0;
    if (!map)
        abort();
    for (unsigned s = 0; s < a->nsites; s++)
        mark_loops(&a->sites[s].offset, map);
    for (unsigned k = 0; k < a->nloops; k++)
        map[k] |= a->loops[k].ranged; /* its bounds tell where a range ends */
    for (unsigned k = a->nloops; k-- > 0;)
        if (map[k]) {
            mark_loops(&a->loops[k].first, map);
            mark_loops(&a->loops[k].bound, map);
            mark_loops(&a->loops[k].step, map);
        }
    for (unsigned k = 0; k < a->nloops; k++) {
        if (map[k]) {
            map[k] = n;
            a->loops[n++] = a->loops[k];
        } else {
            free_loop(&a->loops[k]);
        }
    }
    a->nloops = n;
    for (unsigned s = 0; s < a->nsites; s++) {
        renumber_loops(&a->sites[s].offset, map);
        if (a->sites[s].range_part != 0)
            a->sites[s].range_loop = map[a->sites[s].range_loop];
    }
    for (unsigned k = 0; k < n; k++) {
        renumber_loops(&a->loops[k].first, map);
        renumber_loops(&a->loops[k].bound, map);
        renumber_loops(&a->loops[k].step, map);
    }
    free(map);
}

/* ---- the walk -------------------------------------------------------------------- */

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    struct actx *x = data;
    if (x->depth >= MAX_DEPTH)
        x->fail = 1;
    if (x->fail)
        return CXChildVisit_Break;
    struct tr_frame *f = tr_frame_enter(x->st, x->depth, c);
    if (x->depth == 0)
        f->index = x->body_kids++; /* tr_frame_enter counts the children of st[depth - 1] only */
    int d = x->depth++;
    if (f->kind == CXCursor_ForStmt)
        try_loop(x, d);
    else if (f->kind == CXCursor_DeclRefExpr)
        check_ref(x, d);
    else if (f->kind == CXCursor_CallExpr)
        check_call(x, c);
    else if (f->kind == CXCursor_CStyleCastExpr && tr_is_global_pointer(clang_getCursorType(c)) &&
             ctype(strip(tr_nth_child(c, tr_num_children(c) - 1))).kind != CXType_Pointer)
        x->fail = 1; /* an integer made into a __global pointer */
    if (!x->fail && tr_is_global_lvalue(c))
        check_lvalue(x, d);
    if (!x->fail)
        clang_visitChildren(c, visit, x);
    x->depth--;
    return x->fail ? CXChildVisit_Break : CXChildVisit_Continue;
}

void translate_affine_free(struct translate_affine *a)
{
    if (!a)
        return;
    for (unsigned i = 0; i < a->nsites; i++) {
        free(a->sites[i].offset.nodes);
        free_guards(a->sites[i].guards, a->sites[i].nguards);
    }
    for (unsigned i = 0; i < a->nloops; i++)
        free_loop(&a->loops[i]);
    free(a->sites);
    free(a->loops);
    free(a);
}

struct translate_affine *tr_affine_kernel(struct tr_unit *u, struct tr_fn *fn)
{
    CXCursor body = clang_getNullCursor();
    for (unsigned i = 0; !clang_Cursor_isNull(tr_nth_child(fn->cursor, i)); i++)
        if (kind(tr_nth_child(fn->cursor, i)) == CXCursor_CompoundStmt)
            body = tr_nth_child(fn->cursor, i);
    struct actx *x = calloc(1, sizeof *x);
    if (!x)
        abort();
    x->u = u;
    x->fn = fn;
    x->body = body;
    x->a = calloc(1, sizeof *x->a);
    if (!x->a)
        abort();
    if (clang_Cursor_isNull(body))
        x->fail = 1;
    else
        clang_visitChildren(body, note_mods, x);
    if (!x->fail)
        clang_visitChildren(body, visit, x);
    struct translate_affine *a = x->a;
    if (x->fail) {
        translate_affine_free(a);
        a = NULL;
    } else {
        a->ranges = fn->nranged > 0;
        for (unsigned k = 0; k < fn->nranged; k++)
            a->ranges &= x->ranged_loop[k] != 0;
        for (unsigned i = 0; i < a->nsites; i++) { /* span index -> loop index */
            struct translate_asite *st = &a->sites[i];
            if (st->range_part != 0 && x->ranged_loop[st->range_loop] != 0)
                st->range_loop = x->ranged_loop[st->range_loop] - 1;
            else if (st->range_part != 0)
                st->range_part = 0, st->range_loop = 0, a->ranges = 0;
        }
        prune_loops(a);
    }
    free(x->mods);
    free(x->lvars);
    free(x->kids.c);
    free(x->kids.no_jump);
    free(x);
    return a;
}
