/* cover.c - written ranges of whole stores (translate.h, translate_affine_written): the bytes a
 * box of work-groups certainly writes, the subset that lets the runtime give a page a frame
 * without loading it (interpose/cover.c).
 *
 * An expression is evaluated as a linear form k + sum c_d * get_global_id(d) (constants,
 * scalar arguments and launch sizes fold into k; + - unary minus, products and left shifts by
 * constants). Each guard must bound one global id by a constant: `id + k < n`, `n <= id + k`
 * and so on; the box is narrowed to the ids where every guard holds. Then every node of the
 * guards and of the offset is checked to fit its C type over the narrowed box (linear forms
 * take their extremes at the box's corners), so C's wrap-around cannot make the values
 * differ from the linear forms'. A site whose offset moves by exactly its bytes along one
 * dimension (the dense one) writes, per value of the other dimensions, one contiguous run.
 * Anything else (divisions, min/max, ?:, loop variables, local or group ids, guards on two
 * ids at once) reports nothing for that site: the result is a subset, never a superset.
 * Pure functions; no global state. */
#include "translate.h"
#include "affine_arg.h"

#include <stdlib.h>
#include <string.h>

typedef __int128 wide;

#define MAX_STACK 64
#define COEF_LIMIT ((wide)1 << 62) /* |k|, |c|: products of two stay inside __int128 */
#define MAX_RUNS ((unsigned long long)1 << 22) /* runs per site and box */

struct lin {
    wide k, c[3];
};

struct box {
    wide lo[3], hi[3]; /* absolute global ids, inclusive */
};

static int constant(const struct lin *v)
{
    return v->c[0] == 0 && v->c[1] == 0 && v->c[2] == 0;
}

static int bounded(const struct lin *v)
{
    for (int d = 0; d < 3; d++)
        if (v->c[d] >= COEF_LIMIT || v->c[d] <= -COEF_LIMIT)
            return 0;
    return v->k < COEF_LIMIT && v->k > -COEF_LIMIT;
}

/* v's extremes over the box fit the node's C type. */
static int fits(const struct lin *v, const struct translate_anode *n, const struct box *b)
{
    wide lo = v->k, hi = v->k;
    for (int d = 0; d < 3; d++) {
        wide x = v->c[d] * b->lo[d], y = v->c[d] * b->hi[d];
        lo += x < y ? x : y;
        hi += x < y ? y : x;
    }
    unsigned bits = n->bits == 0 || n->bits > 64 ? 64 : n->bits;
    wide tlo = n->is_signed ? -((wide)1 << (bits - 1)) : 0;
    wide thi = n->is_signed ? ((wide)1 << (bits - 1)) - 1 : ((wide)1 << bits) - 1;
    return lo >= tlo && hi <= thi;
}

/* A leaf's linear form; -1 for what is not linear in the global ids. */
static int leaf(const struct translate_alaunch *l, const struct translate_anode *n, struct lin *v)
{
    memset(v, 0, sizeof *v);
    long long d = n->v;
    int in = n->op != TRANSLATE_AOP_CONST && n->op != TRANSLATE_AOP_ARG && d >= 0 && d < 3 &&
             (unsigned)d < (l->dims ? l->dims : 1);
    switch (n->op) {
    case TRANSLATE_AOP_CONST: v->k = n->is_signed ? (wide)n->v : (wide)(unsigned long long)n->v; return 0;
    case TRANSLATE_AOP_ARG: return tr_affine_arg_value(l, n, &v->k);
    case TRANSLATE_AOP_GLOBAL_ID:
        if (in)
            v->c[d] = 1;
        return d >= 0 ? 0 : -1;
    case TRANSLATE_AOP_GLOBAL_SIZE: v->k = in ? (wide)l->global_size[d] : 1; return d >= 0 ? 0 : -1;
    case TRANSLATE_AOP_LOCAL_SIZE: v->k = in ? (wide)l->local_size[d] : 1; return d >= 0 ? 0 : -1;
    case TRANSLATE_AOP_NUM_GROUPS:
        if (d < 0 || (in && l->local_size[d] == 0))
            return -1;
        v->k = in ? (wide)((l->global_size[d] + l->local_size[d] - 1) / l->local_size[d]) : 1;
        return 0;
    case TRANSLATE_AOP_GLOBAL_OFFSET: v->k = in ? (wide)l->global_offset[d] : 0; return d >= 0 ? 0 : -1;
    default: return -1;
    }
}

static void scale(struct lin *v, wide f)
{
    v->k *= f;
    for (int d = 0; d < 3; d++)
        v->c[d] *= f;
}

/* One operator node on the stack's top one or two forms (*a = a op b). */
static int apply(const struct translate_anode *n, struct lin *a, const struct lin *b)
{
    switch (n->op) {
    case TRANSLATE_AOP_CAST: return 0;
    case TRANSLATE_AOP_NEG: scale(a, -1); return 0;
    case TRANSLATE_AOP_ADD: case TRANSLATE_AOP_SUB: {
        wide s = n->op == TRANSLATE_AOP_ADD ? 1 : -1;
        a->k += s * b->k;
        for (int d = 0; d < 3; d++)
            a->c[d] += s * b->c[d];
        return 0;
    }
    case TRANSLATE_AOP_MUL:
        if (constant(b))
            scale(a, b->k);
        else if (constant(a)) {
            wide f = a->k;
            *a = *b;
            scale(a, f);
        } else
            return -1;
        return 0;
    case TRANSLATE_AOP_SHL:
        if (!constant(b) || b->k < 0 || b->k >= (n->bits ? n->bits : 64))
            return -1;
        scale(a, (wide)1 << (int)b->k);
        return 0;
    default: return -1;
    }
}

/* e's linear form; with a box, every node must also fit its type over it. */
static int eval(const struct translate_alaunch *l, const struct translate_aexpr *e, const struct box *b, struct lin *out)
{
    struct lin st[MAX_STACK];
    int sp = 0;
    for (unsigned i = 0; i < e->n; i++) {
        const struct translate_anode *n = &e->nodes[i];
        int unary = n->op == TRANSLATE_AOP_CAST || n->op == TRANSLATE_AOP_NEG;
        if (n->op <= TRANSLATE_AOP_LOOP) {
            if (sp == MAX_STACK || leaf(l, n, &st[sp]) != 0)
                return -1;
            sp++;
        } else if (sp < (unary ? 1 : 2) || apply(n, &st[sp - (unary ? 1 : 2)], unary ? NULL : &st[sp - 1]) != 0) {
            return -1;
        } else {
            sp -= unary ? 0 : 1;
        }
        if (!bounded(&st[sp - 1]) || (b != NULL && !fits(&st[sp - 1], n, b)))
            return -1;
    }
    if (sp != 1)
        return -1;
    *out = st[0];
    return 0;
}

/* Narrows the box to the ids where guard g holds; -1 when g is not a bound on one id. */
static int narrow(const struct translate_alaunch *l, const struct translate_aguard *g, struct box *b)
{
    struct lin x, y;
    if (eval(l, &g->lhs, NULL, &x) != 0 || eval(l, &g->rhs, NULL, &y) != 0)
        return -1;
    wide strict = g->cmp == TRANSLATE_ACMP_LT;
    const struct lin *var = constant(&y) ? &x : &y, *cst = constant(&y) ? &y : &x;
    int dim = -1;
    for (int d = 0; d < 3; d++)
        if (var->c[d] != 0) {
            if (dim >= 0 || var->c[d] != 1)
                return -1;
            dim = d;
        }
    if (dim < 0 || !constant(cst))
        return -1;
    if (var == &x) { /* id + k < n: id <= n - k - strict */
        wide hi = cst->k - var->k - strict;
        if (hi < b->hi[dim])
            b->hi[dim] = hi;
    } else { /* n < id + k: id >= n - k + strict */
        wide lo = cst->k - var->k + strict;
        if (lo > b->lo[dim])
            b->lo[dim] = lo;
    }
    return 0;
}

static void site_written(const struct translate_alaunch *l, const struct translate_asite *s, unsigned site,
                         struct box b, void (*range)(void *, unsigned, long long, long long), void *ctx)
{
    struct lin off;
    for (unsigned i = 0; i < s->nguards; i++)
        if (narrow(l, &s->guards[i], &b) != 0)
            return;
    for (int d = 0; d < 3; d++)
        if (b.lo[d] > b.hi[d])
            return;
    for (unsigned i = 0; i < s->nguards; i++) /* the values compared are the linear forms' */
        if (eval(l, &s->guards[i].lhs, &b, &off) != 0 || eval(l, &s->guards[i].rhs, &b, &off) != 0)
            return;
    if (eval(l, &s->offset, &b, &off) != 0)
        return;
    int dense = -1;
    for (int d = 0; d < 3 && dense < 0; d++)
        if (off.c[d] == (wide)s->bytes || off.c[d] == -(wide)s->bytes)
            dense = d;
    if (dense < 0)
        return;
    unsigned long long runs = 1;
    for (int d = 0; d < 3; d++)
        if (d != dense && off.c[d] != 0) {
            wide n = b.hi[d] - b.lo[d] + 1;
            if (n > (wide)MAX_RUNS || (runs *= (unsigned long long)n) > MAX_RUNS)
                return;
        }
    wide ca = off.c[dense];
    wide first = ca > 0 ? ca * b.lo[dense] : ca * b.hi[dense], last = ca > 0 ? ca * b.hi[dense] : ca * b.lo[dense];
    int o[2], no = 0;
    for (int d = 0; d < 3; d++)
        if (d != dense)
            o[no++] = d;
    wide n0 = off.c[o[0]] != 0 ? b.hi[o[0]] - b.lo[o[0]] + 1 : 1;
    wide n1 = off.c[o[1]] != 0 ? b.hi[o[1]] - b.lo[o[1]] + 1 : 1;
    for (wide j = 0; j < n1; j++)
        for (wide i = 0; i < n0; i++) {
            wide base = off.k + off.c[o[0]] * (b.lo[o[0]] + i) + off.c[o[1]] * (b.lo[o[1]] + j);
            range(ctx, site, (long long)(base + first), (long long)(base + last + (wide)s->bytes));
        }
}

int translate_affine_written(const struct translate_affine *a, const struct translate_alaunch *l,
                             void (*range)(void *ctx, unsigned site, long long lo, long long end), void *ctx)
{
    struct box b;
    for (int d = 0; d < 3; d++) {
        int in = (unsigned)d < (l->dims ? l->dims : 1);
        wide ls = in ? (wide)l->local_size[d] : 1, off = in ? (wide)l->global_offset[d] : 0;
        wide gs = in ? (wide)l->global_size[d] : 1;
        if (ls <= 0 || gs <= 0)
            return 0;
        b.lo[d] = off + (wide)l->group_first[d] * ls;
        b.hi[d] = off + ((wide)l->group_last[d] + 1) * ls - 1;
        if (b.hi[d] > off + gs - 1)
            b.hi[d] = off + gs - 1;
        if (!in)
            b.lo[d] = b.hi[d] = 0;
    }
    for (unsigned i = 0; i < a->nsites; i++)
        if (a->sites[i].whole && a->sites[i].access == TRANSLATE_WRITE)
            site_written(l, &a->sites[i], i, b, range, ctx);
    return 0;
}
