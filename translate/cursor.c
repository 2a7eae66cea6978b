/* cursor.c - the libclang cursor and type helpers every pass shares (cursor.h): spans,
 * children, the walk's parent stack, address spaces, __global pointers, lvalues and accesses,
 * parameters, the unit's functions and its diagnostics. Depends on no other pass. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- address spaces, pointers, lvalues ------------------------------------------- */

unsigned tr_address_space(CXType t)
{
    return t.kind == CXType_Invalid ? TR_AS_DEFAULT : clang_getAddressSpace(t);
}

int tr_is_global_pointer(CXType t)
{
    t = clang_getCanonicalType(t);
    return t.kind == CXType_Pointer && tr_address_space(clang_getPointeeType(t)) == TR_AS_GLOBAL;
}

int tr_is_global_lvalue(CXCursor c)
{
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_UnaryOperator) {
        if (clang_getCursorUnaryOperatorKind(c) != CXUnaryOperator_Deref)
            return 0;
    } else if (k != CXCursor_ArraySubscriptExpr && k != CXCursor_MemberRefExpr) {
        return 0;
    }
    return tr_address_space(clang_getCursorType(c)) == TR_AS_GLOBAL;
}

int tr_is_global_access(CXCursor c)
{
    if (!tr_is_global_lvalue(c))
        return 0;
    enum CXTypeKind ck = clang_getCanonicalType(clang_getCursorType(c)).kind;
    return ck != CXType_ConstantArray && ck != CXType_IncompleteArray;
}

int tr_modifies_operand(CXCursor c)
{
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_BinaryOperator)
        return clang_getCursorBinaryOperatorKind(c) == CXBinaryOperator_Assign;
    if (k != CXCursor_UnaryOperator)
        return k == CXCursor_CompoundAssignOperator;
    switch (clang_getCursorUnaryOperatorKind(c)) {
    case CXUnaryOperator_PostInc: case CXUnaryOperator_PostDec:
    case CXUnaryOperator_PreInc: case CXUnaryOperator_PreDec:
    case CXUnaryOperator_AddrOf:
        return 1;
    default:
        return 0;
    }
}

int tr_param_index(CXCursor fn, unsigned nparams, CXCursor decl)
{
    for (unsigned i = 0; i < nparams; i++)
        if (clang_equalCursors(clang_Cursor_getArgument(fn, i), decl))
            return (int)i;
    return -1;
}

/* ---- spans and children ------------------------------------------------------------ */

int tr_cursor_span(CXCursor c, unsigned *start, unsigned *end)
{
    CXSourceRange r = clang_getCursorExtent(c);
    CXFile f1, f2;
    clang_getSpellingLocation(clang_getRangeStart(r), &f1, NULL, NULL, start);
    clang_getSpellingLocation(clang_getRangeEnd(r), &f2, NULL, NULL, end);
    return f1 && f2 && *end >= *start ? 0 : -1;
}

int tr_in_main_file(CXCursor c)
{
    return clang_Location_isFromMainFile(clang_getCursorLocation(c));
}

char *tr_cursor_type_spelling(CXCursor c)
{
    CXString s = clang_getTypeSpelling(clang_getCursorType(c));
    char *r = translate_strdup(clang_getCString(s));
    clang_disposeString(s);
    return r;
}

struct nth {
    CXCursor found;
    unsigned want, seen;
};

static enum CXChildVisitResult nth_child_visit(CXCursor c, CXCursor p, CXClientData d)
{
    (void)p;
    struct nth *n = d;
    if (n->seen++ == n->want) {
        n->found = c;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

CXCursor tr_nth_child(CXCursor c, unsigned i)
{
    struct nth n = {clang_getNullCursor(), i, 0};
    clang_visitChildren(c, nth_child_visit, &n);
    return n.found;
}

unsigned tr_num_children(CXCursor c)
{
    struct nth n = {clang_getNullCursor(), ~0u, 0};
    clang_visitChildren(c, nth_child_visit, &n);
    return n.seen;
}

CXCursor tr_fn_body(CXCursor fn)
{
    CXCursor body = clang_getNullCursor();
    for (unsigned i = 0; !clang_Cursor_isNull(tr_nth_child(fn, i)); i++)
        if (clang_getCursorKind(tr_nth_child(fn, i)) == CXCursor_CompoundStmt)
            body = tr_nth_child(fn, i);
    return body;
}

struct tr_frame *tr_frame_enter(struct tr_frame *st, int depth, CXCursor c)
{
    struct tr_frame *f = &st[depth];
    f->c = c;
    f->kind = clang_getCursorKind(c);
    f->index = depth > 0 ? st[depth - 1].nchildren++ : 0;
    f->nchildren = 0;
    if (tr_cursor_span(c, &f->start, &f->end) != 0)
        f->start = f->end = 0;
    return f;
}

/* ---- the unit's functions and diagnostics ------------------------------------------ */

struct tr_fn *tr_find_fn(struct tr_unit *u, CXCursor decl)
{
    CXString s = clang_getCursorUSR(decl);
    const char *usr = clang_getCString(s);
    struct tr_fn *found = NULL;
    for (size_t i = 0; i < u->nfns && !found; i++)
        if (!strcmp(u->fns[i].usr, usr))
            found = &u->fns[i];
    clang_disposeString(s);
    return found;
}

void tr_diag_add(struct tr_unit *u, CXCursor where, const char *kernel,
                 const char *construct, const char *fmt, ...)
{
    u->diags = translate_xrealloc(u->diags, (u->num_diags + 1) * sizeof *u->diags);
    struct translate_diag *d = &u->diags[u->num_diags++];
    memset(d, 0, sizeof *d);
    CXString file;
    unsigned line = 0;
    clang_getPresumedLocation(clang_getCursorLocation(where), &file, &line, NULL);
    d->file = translate_strdup(clang_getCString(file));
    clang_disposeString(file);
    d->line = line;
    d->kernel = kernel ? translate_strdup(kernel) : NULL;
    d->construct = translate_strdup(construct);
    struct strbuf m = {0};
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    strbuf_puts(&m, tmp);
    d->message = strbuf_take(&m);
}
