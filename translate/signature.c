/* signature.c - parameter lists and prologues of rewritten functions.
 * Kernels: each __global pointer parameter becomes `ulong vast_va_<name>` and the body
 * re-declares <name> with its original type, holding the virtual address; the ABI
 * parameters (prelude.c) are appended and the prologue sets up the translation context.
 * Other functions of the program get `__local vast_ctx *vast_cx` appended (walk.c appends the
 * argument at their call sites). Called by walk.c once per function. */
#include "internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static unsigned name_offset(CXCursor c)
{
    unsigned off = 0;
    clang_getSpellingLocation(clang_getCursorLocation(c), NULL, NULL, NULL, &off);
    return off;
}

static int is_word_at(const char *t, size_t i, const char *w, size_t start)
{
    size_t n = strlen(w);
    return !strncmp(t + i, w, n) && (i == start || !(isalnum((unsigned char)t[i - 1]) ||
                                                     t[i - 1] == '_')) &&
           !(isalnum((unsigned char)t[i + n]) || t[i + n] == '_');
}

int tr_is_kernel(struct tr_unit *u, CXCursor fn)
{
    unsigned s, e;
    if (tr_cursor_span(fn, &s, &e) != 0)
        return 0;
    unsigned name = name_offset(fn);
    for (unsigned i = s; i < name && i < u->len; i++)
        if (is_word_at(u->text, i, "__kernel", s) || is_word_at(u->text, i, "kernel", s))
            return 1;
    return 0;
}

/* "__global float *__private restrict" -> "__global float * restrict" */
static char *strip_private(const char *ty)
{
    struct strbuf b = {0};
    for (const char *p = ty; *p;) {
        if (!strncmp(p, "__private", 9)) {
            p += 9;
            continue;
        }
        strbuf_append(&b, p++, 1);
    }
    return strbuf_take(&b);
}

/* Offset where appended parameters go, and whether a separating comma is needed. */
static int append_point(struct tr_unit *u, struct tr_fn *fn, unsigned *at, int *comma)
{
    if (fn->nparams > 0) {
        unsigned s, e;
        if (tr_cursor_span(clang_Cursor_getArgument(fn->cursor, fn->nparams - 1), &s, &e))
            return -1;
        *at = e;
        *comma = 1;
        return 0;
    }
    unsigned i = name_offset(fn->cursor);
    while (i < u->len && u->text[i] != '(')
        i++;
    for (i++; i < u->len && isspace((unsigned char)u->text[i]); i++)
        ;
    *comma = 0;
    *at = i;
    if (is_word_at(u->text, i, "void", i)) {
        unsigned j = i + 4;
        while (j < u->len && isspace((unsigned char)u->text[j]))
            j++;
        if (u->text[j] == ')')
            tr_edit_delete(&u->edits, i, i + 4, NULL, NULL);
        *at = i + 4;
    }
    return 0;
}

static void rewrite_kernel_params(struct tr_unit *u, struct tr_fn *fn, struct strbuf *decls)
{
    for (unsigned i = 0; i < fn->nparams; i++) {
        CXCursor p = clang_Cursor_getArgument(fn->cursor, i);
        if (!tr_is_global_pointer(clang_getCursorType(p)))
            continue;
        unsigned s, e;
        CXString ns = clang_getCursorSpelling(p);
        const char *name = clang_getCString(ns);
        char *ty = tr_cursor_type_spelling(p), *clean = strip_private(ty);
        if (tr_cursor_span(p, &s, &e) == 0 && *name) {
            struct strbuf r = {0};
            strbuf_printf(&r, "ulong vast_va_%s", name);
            tr_edit_delete(&u->edits, s, e, r.data, r.data);
            strbuf_printf(decls, " %s %s = (%s)vast_va_%s;", clean, name, clean, name);
            strbuf_free(&r);
        } else {
            fn->has_diag = 1;
            tr_diag_add(u, p, fn->name, "parameter", "unnamed __global pointer parameter %u",
                        i);
        }
        free(ty);
        free(clean);
        clang_disposeString(ns);
    }
}

void tr_rewrite_signature(struct tr_unit *u, struct tr_fn *fn, unsigned body_open,
                          const char *counters)
{
    unsigned at;
    int comma;
    struct strbuf decls = {0}, add[TR_VARIANTS] = {{0}};
    if (fn->is_kernel)
        rewrite_kernel_params(u, fn, &decls);
    if (append_point(u, fn, &at, &comma) != 0) {
        fn->has_diag = 1;
        tr_diag_add(u, fn->cursor, fn->name, "parameter", "%s", "cannot locate parameters");
        return;
    }
    for (int v = 0; v < TR_VARIANTS; v++)
        strbuf_printf(&add[v], "%s%s", comma ? ", " : "",
                      fn->is_kernel ? tr_kernel_params(v) : "__local vast_ctx *vast_cx");
    tr_edit_add(&u->edits, at, 0, 0, add[TR_PAGED].data, add[TR_INSPECT].data);
    if (body_open) {
        struct strbuf pro[TR_VARIANTS] = {{0}};
        for (int v = 0; v < TR_VARIANTS; v++) {
            if (fn->is_kernel)
                strbuf_printf(&pro[v], "%s%s", tr_kernel_prologue(v), decls.data ? decls.data : "");
            if (v == TR_INSPECT && counters)
                strbuf_puts(&pro[v], counters);
        }
        tr_edit_add(&u->edits, body_open, 0, 0xfffffffeu, pro[0].data, pro[1].data);
        strbuf_free(&pro[0]);
        strbuf_free(&pro[1]);
    }
    strbuf_free(&decls);
    strbuf_free(&add[0]);
    strbuf_free(&add[1]);
}
