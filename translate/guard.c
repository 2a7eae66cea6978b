/* guard.c - a faulted work-group stays harmless. After a fault the paged kernel's loads of
 * missing pages read 0 and the work-group's results are thrown away (it runs again), but its
 * work-items go on computing from those fabricated values: the rewrites here keep that cheap
 * and harmless. walk.c decides what depends on loaded data (its taint facts) and calls these:
 *  - integer `/` and `%` (and `/=`, `%=`) by a divisor that depends on loaded data divide by
 *    1 once the work-group has faulted (paged), or by a divisor that is never 0 or -1
 *    (inspector, whose loads all read 0); divisions by other constants are untouched (they stay
 *    multiplications), other divisors cost a select;
 *  - a subscript of a private, __local or __constant array by such an index is clamped to the
 *    array (vast_ix), of such a pointer it becomes 0 after a fault (paged) or, when it comes
 *    from global loads, always (inspector);
 *  - loops: see walk.c's visit_loop (vast_live in prelude.c).
 * Stores through fabricated global addresses need nothing here: after a fault every global
 * store of the work-group goes to the write sink. Integer division by zero and out-of-bounds
 * indices are undefined in OpenCL C, so none of this changes a correct program's results. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CALL_DEPTH 16

struct barrier_scan {
    struct tr_unit *u;
    int depth, found;
};

static enum CXChildVisitResult scan_barrier(CXCursor c, CXCursor p, CXClientData d)
{
    (void)p;
    struct barrier_scan *s = d;
    if (clang_getCursorKind(c) == CXCursor_CallExpr) {
        CXCursor callee = clang_getCursorReferenced(c);
        CXString n = clang_getCursorSpelling(callee);
        const char *name = clang_getCString(n);
        if (!strcmp(name, "barrier") || !strcmp(name, "work_group_barrier") ||
            !strncmp(name, "async_work_group_", 17)) /* the paged copy's helper has barriers */
            s->found = 1;
        clang_disposeString(n);
        CXCursor def = clang_getCursorDefinition(callee);
        if (!s->found && !clang_Cursor_isNull(def) && tr_find_fn(s->u, callee) && s->depth < MAX_CALL_DEPTH) {
            s->depth++;
            clang_visitChildren(def, scan_barrier, s);
            s->depth--;
        }
    }
    if (s->found)
        return CXChildVisit_Break;
    return CXChildVisit_Recurse;
}

/* Whether c, or a program function it calls, has a barrier. */
int tr_has_barrier(struct tr_unit *u, CXCursor c)
{
    struct barrier_scan s = {u, 0, 0};
    clang_visitChildren(c, scan_barrier, &s);
    return s.found;
}

static const char *int_name(CXType t, int *is_signed)
{
    static const struct { enum CXTypeKind k; const char *n; int s; } names[] = {
        {CXType_Char_S, "char", 1}, {CXType_SChar, "char", 1}, {CXType_Char_U, "uchar", 0},
        {CXType_UChar, "uchar", 0}, {CXType_Short, "short", 1}, {CXType_UShort, "ushort", 0},
        {CXType_Int, "int", 1}, {CXType_UInt, "uint", 0}, {CXType_Long, "long", 1},
        {CXType_ULong, "ulong", 0}, {CXType_Bool, "int", 1},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].k == t.kind) {
            *is_signed = names[i].s;
            return names[i].n;
        }
    return NULL;
}

/* The divisor's type after the integer promotions ("int", "uint4"), or 0 when it is not an
 * integer scalar or vector. */
static int divisor_type(CXType t, char *buf, size_t size, int *is_signed)
{
    t = clang_getCanonicalType(t);
    long long n = 1;
    if (t.kind == CXType_ExtVector || t.kind == CXType_Vector) {
        n = clang_getNumElements(t);
        t = clang_getCanonicalType(clang_getElementType(t));
    }
    const char *e = int_name(t, is_signed);
    if (e == NULL)
        return 0;
    if (n == 1 && clang_Type_getSizeOf(t) < 4)
        e = "int", *is_signed = 1;
    if (n == 1)
        snprintf(buf, size, "%s", e);
    else
        snprintf(buf, size, "%s%lld", e, n);
    return 1;
}

/* A constant divisor other than 0 and -1 cannot trap. */
static int safe_constant(CXCursor e)
{
    CXEvalResult r = clang_Cursor_Evaluate(e);
    if (r == NULL)
        return 0;
    int safe = 0;
    if (clang_EvalResult_getKind(r) == CXEval_Int) {
        long long v = clang_EvalResult_getAsLongLong(r);
        safe = v != 0 && v != -1;
    }
    clang_EvalResult_dispose(r);
    return safe;
}

int tr_is_division(CXCursor c)
{
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k != CXCursor_BinaryOperator && k != CXCursor_CompoundAssignOperator)
        return 0;
    enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(c);
    return op == CXBinaryOperator_Div || op == CXBinaryOperator_Rem || op == CXBinaryOperator_DivAssign ||
           op == CXBinaryOperator_RemAssign;
}

/* Guards the divisor of division c (walk.c checked that it depends on loaded data). */
void tr_guard_division(struct tr_unit *u, unsigned fn_start, CXCursor c)
{
    CXCursor d = tr_nth_child(c, 1);
    char ty[32];
    int is_signed = 0;
    unsigned s, e;
    if (clang_Cursor_isNull(d) || safe_constant(d) || tr_cursor_span(d, &s, &e) != 0 ||
        !divisor_type(clang_getCursorType(d), ty, sizeof ty, &is_signed))
        return;
    int vec = strpbrk(ty, "0123456789") != NULL;
    struct strbuf fn = {0}, def = {0}, open = {0};
    strbuf_printf(&fn, "vast_nz_%s", ty);
    if (vec && is_signed) /* -1 traps too (INT_MIN / -1) */
        strbuf_printf(&def, "%s %s(%s b) { return select(b, (%s)1, (b == (%s)0) | (b == (%s)-1)); }\n", ty,
                      fn.data, ty, ty, ty, ty);
    else if (vec)
        strbuf_printf(&def, "%s %s(%s b) { return select(b, (%s)1, b == (%s)0); }\n", ty, fn.data, ty, ty, ty);
    else
        strbuf_printf(&def, "%s %s(%s b) { return b == 0%s ? (%s)1 : b; }\n", ty, fn.data, ty,
                      is_signed ? " || b == -1" : "", ty);
    struct strbuf key = {0};
    strbuf_printf(&key, "\n%s\n", fn.data);
    if (!u->helpers_seen.data || !strstr(u->helpers_seen.data, key.data)) {
        strbuf_puts(&u->helpers_seen, key.data);
        tr_edit_add(&u->edits, fn_start, 0, 0xffffffffu, NULL, def.data);
    }
    strbuf_printf(&open, "%s(", fn.data);
    tr_edit_add(&u->edits, s, 0, e - s + 2, "(vast_cx->wg_fault ? 1 : (", open.data);
    tr_edit_add(&u->edits, e, 1, e - s + 2, "))", ")");
    strbuf_free(&fn);
    strbuf_free(&def);
    strbuf_free(&open);
    strbuf_free(&key);
}

/* The array a subscript's base names (through decay and parentheses), or a null type. */
static CXType base_array(CXCursor base)
{
    for (int i = 0; i < 8 && !clang_Cursor_isNull(base); i++) {
        CXType t = clang_getCanonicalType(clang_getCursorType(base));
        if (t.kind == CXType_ConstantArray || t.kind == CXType_ExtVector || t.kind == CXType_Vector)
            return t;
        enum CXCursorKind k = clang_getCursorKind(base);
        if (k != CXCursor_UnexposedExpr && k != CXCursor_ParenExpr)
            break;
        base = tr_nth_child(base, 0);
    }
    CXType none = {CXType_Invalid, {0, 0}};
    return none;
}

/* Guards the index of subscript c of a non-global array or pointer (walk.c checked that the
 * index may be fabricated; `loaded`: it comes from global loads, which the inspector
 * fabricates always, so its subscript of a pointer uses element 0). */
void tr_guard_index(struct tr_unit *u, CXCursor c, int loaded)
{
    CXCursor base = tr_nth_child(c, 0), index = tr_nth_child(c, 1);
    if (clang_Cursor_isNull(index))
        return;
    CXType it = clang_getCanonicalType(clang_getCursorType(index));
    if (it.kind == CXType_Pointer || it.kind == CXType_ConstantArray) { /* i[a] */
        CXCursor t = base;
        base = index, index = t;
    }
    unsigned s, e;
    if (tr_cursor_span(index, &s, &e) != 0)
        return;
    CXType at = base_array(base);
    long long n = at.kind == CXType_ConstantArray ? clang_getArraySize(at)
                  : at.kind != CXType_Invalid ? clang_getNumElements(at)
                                              : -1;
    if (n > 0) {
        char close[48];
        snprintf(close, sizeof close, "), %lldul)", n);
        tr_edit_add(&u->edits, s, 0, e - s + 2, "vast_ix((ulong)(", "vast_ix((ulong)(");
        tr_edit_add(&u->edits, e, 1, e - s + 2, close, close);
    } else {
        tr_edit_add(&u->edits, s, 0, e - s + 2, "(vast_cx->wg_fault ? 0 : (", loaded ? "((" : NULL);
        tr_edit_add(&u->edits, e, 1, e - s + 2, "))", loaded ? "), 0)" : NULL);
    }
}
