/* test_cursor.c - unit tests of translate/cursor.c (no device): the address space, __global
 * pointer, lvalue and access predicates every pass shares, on a kernel parsed by libclang as
 * translate.c parses programs. The two lvalue predicates differ on an array-typed member:
 * p->arr is a __global lvalue (affine.c records p->arr[i] there) but no access (walk.c
 * rewrites p->arr[i] only). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char SRC[] =
    "typedef struct { int a; float arr[4]; } S;\n"
    "__kernel void k(__global S *p, __global int *q, __local int *l, __constant int *c, int n) {\n"
    "    q[0] = p->arr[n] + p->a + *q + l[0] + c[1];\n"
    "}\n";

struct seen {
    const char *text;   /* spelling of the expression */
    int lvalue, access; /* tr_is_global_lvalue, tr_is_global_access */
    int found;
};

static struct seen expect[] = {
    {"p->arr", 1, 0, 0}, /* an array: names memory, is not loaded */
    {"p->arr[n]", 1, 1, 0},
    {"p->a", 1, 1, 0},
    {"*q", 1, 1, 0},
    {"q[0]", 1, 1, 0},
    {"l[0]", 0, 0, 0}, /* __local */
    {"c[1]", 0, 0, 0}, /* __constant */
};

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    (void)d;
    enum CXCursorKind k = clang_getCursorKind(c);
    unsigned s, e;
    if ((k == CXCursor_ArraySubscriptExpr || k == CXCursor_MemberRefExpr || k == CXCursor_UnaryOperator) &&
        tr_cursor_span(c, &s, &e) == 0) {
        for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
            if (strlen(expect[i].text) != e - s || strncmp(SRC + s, expect[i].text, e - s) != 0)
                continue;
            expect[i].found++;
            if (tr_is_global_lvalue(c) != expect[i].lvalue || tr_is_global_access(c) != expect[i].access)
                fail_msg("%s: global lvalue %d, access %d; expected %d, %d", expect[i].text,
                         tr_is_global_lvalue(c), tr_is_global_access(c), expect[i].lvalue, expect[i].access);
        }
    }
    return CXChildVisit_Recurse;
}

static CXCursor kernel_of(CXTranslationUnit tu)
{
    CXCursor found = clang_getNullCursor();
    CXCursor root = clang_getTranslationUnitCursor(tu);
    for (unsigned i = 0;; i++) {
        CXCursor c = tr_nth_child(root, i);
        if (clang_Cursor_isNull(c))
            break;
        if (clang_getCursorKind(c) == CXCursor_FunctionDecl)
            found = c;
    }
    assert_false(clang_Cursor_isNull(found));
    return found;
}

static void test_predicates(void **state)
{
    (void)state;
    CXIndex idx = clang_createIndex(0, 0);
    const char *args[] = {"-x", "cl", "-cl-std=CL1.2", "-w"};
    struct CXUnsavedFile f = {"t.cl", SRC, sizeof SRC - 1};
    CXTranslationUnit tu = NULL;
    assert_int_equal(clang_parseTranslationUnit2(idx, f.Filename, args, 4, &f, 1,
                                                 CXTranslationUnit_None, &tu), CXError_Success);
    CXCursor k = kernel_of(tu);
    clang_visitChildren(k, visit, NULL);
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++)
        if (expect[i].found != 1)
            fail_msg("%s seen %d times", expect[i].text, expect[i].found);

    /* parameters: address spaces, __global pointers, indices */
    const unsigned space[] = {TR_AS_GLOBAL, TR_AS_GLOBAL, TR_AS_LOCAL, TR_AS_CONSTANT};
    for (unsigned i = 0; i < 5; i++) {
        CXCursor p = clang_Cursor_getArgument(k, i);
        CXType t = clang_getCanonicalType(clang_getCursorType(p));
        assert_int_equal(tr_is_global_pointer(clang_getCursorType(p)), i < 2);
        if (i < 4)
            assert_int_equal(tr_address_space(clang_getPointeeType(t)), space[i]);
        assert_int_equal(tr_param_index(k, 5, p), (int)i);
        assert_int_equal(tr_param_index(k, i, p), -1); /* past the parameters asked about */
    }
    assert_int_equal(tr_address_space((CXType){.kind = CXType_Invalid}), TR_AS_DEFAULT);
    clang_disposeTranslationUnit(tu);
    clang_disposeIndex(idx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_predicates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
