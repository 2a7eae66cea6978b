/* edits.c - the edit list: insertions and deletions on the preprocessed text.
 * Nested rewrites are expressed as pairs of insertions (open at the start of a span,
 * close at its end). Order at one offset: closes first, inner before outer; then
 * deletions; then opens, outer before inner. Insertions inside a deleted range vanish. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static struct tr_edit *edit_push(struct tr_edits *e)
{
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 64;
        e->v = translate_xrealloc(e->v, e->cap * sizeof *e->v);
    }
    struct tr_edit *x = &e->v[e->n];
    memset(x, 0, sizeof *x);
    x->seq = (unsigned)e->n++;
    return x;
}

void tr_edit_add(struct tr_edits *e, unsigned offset, int close, unsigned span,
                 const char *paged, const char *inspect)
{
    struct tr_edit *x = edit_push(e);
    x->offset = offset;
    x->close = close;
    x->span = span;
    x->text[TR_PAGED] = paged ? translate_strdup(paged) : NULL;
    x->text[TR_INSPECT] = inspect ? translate_strdup(inspect) : NULL;
}

void tr_edit_delete(struct tr_edits *e, unsigned start, unsigned end, const char *paged,
                    const char *inspect)
{
    tr_edit_add(e, start, 0, 0, paged, inspect);
    e->v[e->n - 1].del_end = end;
}

static int edit_rank(const struct tr_edit *x)
{
    return x->close ? 0 : x->del_end ? 1 : 2;
}

static int edit_cmp(const void *pa, const void *pb)
{
    const struct tr_edit *a = pa, *b = pb;
    if (a->offset != b->offset)
        return a->offset < b->offset ? -1 : 1;
    int ra = edit_rank(a), rb = edit_rank(b);
    if (ra != rb)
        return ra - rb;
    if (a->span != b->span) {
        int inner_first = a->span < b->span ? -1 : 1;
        return a->close ? inner_first : -inner_first;
    }
    if (a->seq != b->seq)
        return a->close ? (a->seq > b->seq ? -1 : 1) : (a->seq < b->seq ? -1 : 1);
    return 0;
}

char *tr_edits_apply(struct tr_edits *e, const char *text, size_t len, enum tr_variant v,
                     const char *prefix)
{
    qsort(e->v, e->n, sizeof *e->v, edit_cmp);
    struct strbuf out = {0};
    if (prefix)
        strbuf_puts(&out, prefix);
    size_t pos = 0;                   /* next byte of text to copy */
    size_t del_start = 0, del_end = 0; /* last deleted range */
    for (size_t i = 0; i < e->n; i++) {
        const struct tr_edit *x = &e->v[i];
        int inside = x->offset > del_start &&
                     (x->offset < del_end || (x->offset == del_end && x->close));
        if (inside)
            continue;
        if (x->offset > pos) {
            strbuf_append(&out, text + pos, x->offset - pos);
            pos = x->offset;
        }
        if (x->text[v])
            strbuf_puts(&out, x->text[v]);
        if (x->del_end > pos) {
            del_start = x->offset;
            del_end = pos = x->del_end;
        }
    }
    if (pos < len)
        strbuf_append(&out, text + pos, len - pos);
    return strbuf_take(&out);
}

void tr_edits_free(struct tr_edits *e)
{
    for (size_t i = 0; i < e->n; i++) {
        free(e->v[i].text[0]);
        free(e->v[i].text[1]);
    }
    free(e->v);
    memset(e, 0, sizeof *e);
}
