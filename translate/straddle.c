/* straddle.c - accesses that may straddle a page: whole structs and unions (`s = p[i]`,
 * `p[i] = s`), members of packed structs, anything whose size is not a power of two no
 * larger than its alignment. Such an access becomes a call of a per-type helper that
 * checks, at run time, whether the access lies within one page: then it is the plain
 * translated access (one compare more than any other access); else the bytes are copied page
 * piece by page piece (vast_copy_in/out of prelude.c), each piece translated on its own, so
 * a fault on either page is logged and handled as any other. The inspector's helpers mark
 * every page the access touches. Called by walk.c for one access at a time. */
#include "internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int is_array_type(CXType t)
{
    enum CXTypeKind k = clang_getCanonicalType(t).kind;
    return k == CXType_ConstantArray || k == CXType_IncompleteArray || k == CXType_VariableArray ||
           k == CXType_DependentSizedArray;
}

/* The array an element access `arr[i]` indexes, when it is an array lvalue (a member
 * `s->m[i]`, through the implicit decay to a pointer and parentheses); else a null cursor
 * (a subscript of a pointer, whose alignment is its pointee's). */
static CXCursor subscripted_array(CXCursor c)
{
    CXCursor b = tr_nth_child(c, 0);
    while (!clang_Cursor_isNull(b) && !is_array_type(clang_getCursorType(b))) {
        enum CXCursorKind k = clang_getCursorKind(b);
        if (k != CXCursor_ParenExpr && k != CXCursor_UnexposedExpr)
            return clang_getNullCursor();
        b = tr_nth_child(b, 0);
    }
    return b;
}

/* The alignment the access's address is known to have: its type's, but a member's is
 * bounded by its base's and by its offset there (a packed struct's members have 1), and an
 * element of an array member by the array's. */
long long tr_access_align(CXCursor c)
{
    enum CXCursorKind k = clang_getCursorKind(c);
    long long a = clang_Type_getAlignOf(clang_getCursorType(c));
    if (k == CXCursor_ParenExpr || k == CXCursor_UnexposedExpr) {
        CXCursor in = tr_nth_child(c, 0);
        return clang_Cursor_isNull(in) ? a : tr_access_align(in);
    }
    if (k == CXCursor_ArraySubscriptExpr) {
        CXCursor arr = subscripted_array(c);
        long long ba = clang_Cursor_isNull(arr) ? a : tr_access_align(arr);
        return ba < a ? ba : a;
    }
    if (k != CXCursor_MemberRefExpr)
        return a;
    CXCursor base = tr_nth_child(c, 0);
    if (clang_Cursor_isNull(base))
        return 1;
    CXType bt = clang_getCanonicalType(clang_getCursorType(base));
    long long ba = bt.kind == CXType_Pointer ? clang_Type_getAlignOf(clang_getPointeeType(bt))
                                             : tr_access_align(base);
    long long off = clang_Cursor_getOffsetOfField(clang_getCursorReferenced(c));
    if (off < 0 || ba <= 0)
        return 1;
    off /= 8;
    long long oa = off ? off & -off : ba;
    return oa < ba ? oa : ba;
}

int tr_may_straddle(CXCursor c, long long size)
{
    long long align = tr_access_align(c);
    return size <= 0 || (size & (size - 1)) || align < size || size > 512;
}

/* The access's value type: its spelling without address space and qualifiers
 * ("const __global t3" -> "t3"), or NULL when that cannot be spelled. */
static char *value_spelling(CXType t)
{
    CXString s = clang_getTypeSpelling(t);
    const char *in = clang_getCString(s);
    static const char *drop[] = {"__global", "const", "volatile", "restrict"};
    struct strbuf b = {0};
    while (*in) {
        size_t n = 0;
        while (in[n] && !isspace((unsigned char)in[n]))
            n++;
        int keep = 1;
        for (size_t d = 0; d < sizeof drop / sizeof drop[0]; d++)
            if (strlen(drop[d]) == n && !strncmp(in, drop[d], n))
                keep = 0;
        if (keep && n)
            strbuf_printf(&b, "%s%.*s", b.len ? " " : "", (int)n, in);
        in += n;
        while (isspace((unsigned char)*in))
            in++;
    }
    clang_disposeString(s);
    char *r = b.data ? strbuf_take(&b) : NULL;
    if (r && (strchr(r, '(') || strstr(r, "global"))) {
        free(r);
        r = NULL;
    }
    return r;
}

static const char paged_params[] = "__global const uint *lpt, __global uchar *p0, __global uchar *p1, "
                                   "__global uchar *p2, __global uchar *p3, ulong entries, __global uchar "
                                   "*scratch, __local vast_ctx *cx";
static const char paged_pass[] = "lpt, p0, p1, p2, p3, entries, scratch, cx";
static const char inspect_params[] = "__global uchar *row, ulong pages, __global uint *status, __global "
                                     "uchar *scratch, __local vast_ctx *cx";

/* Helpers vast_ld_<tag> and vast_st_<tag> for value type `ty` of `size` bytes. An access less
 * aligned than its type (a packed struct's member) always copies bytes: a plain access
 * through the type's pointer would assume its alignment. */
static void helper_defs(const char *ty, const char *tag, long long size, int aligned, char *def[TR_VARIANTS])
{
    struct strbuf p = {0}, i = {0};
    const char *fast = aligned ? "" : "0 && ";
    strbuf_printf(&p, "%s vast_ld_%s(ulong va, %s) { if (%s((va ^ (va + %lld)) >> vast_shift(cx)) == 0) "
                      "return *(__global %s *)vast_trr_k(va, %s); %s r; vast_copy_in((uchar *)&r, va, %lld, %s); "
                      "return r; }\n",
                  ty, tag, paged_params, fast, size - 1, ty, paged_pass, ty, size, paged_pass);
    strbuf_printf(&p, "%s vast_st_%s(ulong va, %s v, %s) { if (%s((va ^ (va + %lld)) >> vast_shift(cx)) == 0) "
                      "*(__global %s *)vast_trw_k(va, %s) = v; else vast_copy_out(va, (const uchar *)&v, %lld, "
                      "%s); return v; }\n",
                  ty, tag, ty, paged_params, fast, size - 1, ty, paged_pass, size, paged_pass);
    if (size <= 512) /* the zero page holds it (pages have 512 bytes at least) */
        strbuf_printf(&i, "%s vast_ld_%s(ulong va, %s) { vast_mark_range(va, %lld, row, pages, status, "
                          "cx); return *(__global %s *)scratch; }\n",
                      ty, tag, inspect_params, size, ty);
    else
        strbuf_printf(&i, "%s vast_ld_%s(ulong va, %s) { vast_mark_range(va, %lld, row, pages, status, "
                          "cx); %s r; uchar *b = (uchar *)&r; for (uint k = 0; k < %lld; k++) b[k] = 0; "
                          "return r; }\n",
                      ty, tag, inspect_params, size, ty, size);
    strbuf_printf(&i, "%s vast_st_%s(ulong va, %s v, %s) { vast_mark_range(va, %lld, row, pages, status, "
                      "cx); return v; }\n",
                  ty, tag, ty, inspect_params, size);
    def[TR_PAGED] = strbuf_take(&p);
    def[TR_INSPECT] = strbuf_take(&i);
}

static void define_once(struct tr_unit *u, unsigned fn_start, const char *key, char *def[TR_VARIANTS])
{
    struct strbuf k = {0};
    strbuf_printf(&k, "\n%s\n", key);
    if (!u->helpers_seen.data || !strstr(u->helpers_seen.data, k.data)) {
        strbuf_puts(&u->helpers_seen, k.data);
        tr_edit_add(&u->edits, fn_start, 0, 0xffffffffu, def[TR_PAGED], def[TR_INSPECT]);
    }
    strbuf_free(&k);
}

/* The translation arguments at a call site: a kernel's own parameters, else the context. */
static const char *site_args(int kernel, enum tr_variant v)
{
    if (v == TR_PAGED)
        return kernel ? "vast_lpt, vast_pool0, vast_pool1, vast_pool2, vast_pool3, vast_cfg.s1, "
                        "vast_scratch, vast_cx"
                      : "vast_cx->lpt, vast_cx->pool0, vast_cx->pool1, vast_cx->pool2, vast_cx->pool3, "
                        "vast_cx->lpt_entries, vast_cx->scratch, vast_cx";
    return kernel ? "vast_pas_row, vast_cfg.s1, vast_status, vast_scratch, vast_cx"
                  : "vast_cx->pas, vast_cx->pas_pages, vast_cx->status, vast_cx->scratch, vast_cx";
}

/* Offset of the first '=' at or after `from` (the assignment's operator). */
static int find_assign(const struct tr_unit *u, unsigned from, unsigned to, unsigned *at)
{
    for (unsigned i = from; i < to && i < u->len; i++)
        if (u->text[i] == '=') {
            *at = i;
            return 0;
        }
    return -1;
}

/* Rewrites access f (a load, or the left side of the plain assignment `asg`). Returns 0, or
 * -1 when the access cannot be split (a read-modify-write, a partial store, an unspellable
 * type): the caller reports it. */
int tr_straddle_rewrite(struct tr_unit *u, unsigned fn_start, int kernel, const struct tr_frame *f,
                        const struct tr_frame *asg, long long size)
{
    char *ty = value_spelling(clang_getCursorType(f->c));
    if (ty == NULL || size <= 0)
        return free(ty), -1;
    unsigned eq = 0;
    if (asg && (asg->start != f->start || find_assign(u, f->end, asg->end, &eq) != 0))
        return free(ty), -1;
    struct strbuf tag = {0}, key = {0};
    for (const char *c = ty; *c; c++)
        strbuf_printf(&tag, "%c", isalnum((unsigned char)*c) ? *c : '_');
    int aligned = tr_access_align(f->c) >= clang_Type_getAlignOf(clang_getCursorType(f->c));
    strbuf_printf(&tag, "_%lld%s", size, aligned ? "" : "_u");
    strbuf_printf(&key, "vast_ld_%s", tag.data);
    char *def[TR_VARIANTS];
    helper_defs(ty, tag.data, size, aligned, def);
    define_once(u, fn_start, key.data, def);
    struct strbuf open = {0}, close[TR_VARIANTS] = {{0}};
    strbuf_printf(&open, "vast_%s_%s((ulong)&(", asg ? "st" : "ld", tag.data);
    for (int v = 0; v < TR_VARIANTS; v++)
        strbuf_printf(&close[v], "), %s)", site_args(kernel, (enum tr_variant)v));
    if (asg == NULL) {
        unsigned span = f->end - f->start;
        tr_edit_add(&u->edits, f->start, 0, span, open.data, open.data);
        tr_edit_add(&u->edits, f->end, 1, span, close[TR_PAGED].data, close[TR_INSPECT].data);
    } else { /* E = V  ->  vast_st((ulong)&(E), (V), args) */
        unsigned span = asg->end - asg->start;
        tr_edit_add(&u->edits, f->start, 0, span, open.data, open.data);
        tr_edit_delete(&u->edits, f->end, eq + 1, "), (", "), (");
        tr_edit_add(&u->edits, asg->end, 1, span, close[TR_PAGED].data, close[TR_INSPECT].data);
    }
    for (int v = 0; v < TR_VARIANTS; v++) {
        free(def[v]);
        strbuf_free(&close[v]);
    }
    strbuf_free(&open);
    strbuf_free(&tag);
    strbuf_free(&key);
    free(ty);
    return 0;
}
