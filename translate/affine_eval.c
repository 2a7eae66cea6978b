/* affine_eval.c - the host side of affine page sets (translate.h, "Host page sets"): the byte
 * ranges a box of work-groups may touch through each access site, by interval arithmetic
 * over the postfix expressions of translate/affine.c.
 *
 * Values are intervals of __int128, so that 64-bit operands never overflow while they are
 * combined; after every node the interval must fit the node's C type, else the evaluation
 * fails (C would wrap, and a wrapped value is outside any interval we could report), except
 * where the wrapped value only flows through ring operations into the byte offset (eval).
 * Products are taken only of operands within +-2^64, which keeps them inside __int128.
 *
 * Refinement: one interval per site is exact for contiguous accesses but covers the gaps of a
 * strided one (a column of a wide matrix touches one page per row). When fixing one variable
 * (a group id, a local id or a loop variable) to a single value shrinks the site's range so
 * much that all its values together would cover less than half of it, that variable is split
 * in two and each half evaluated on its own, recursively, within a budget of evaluations per
 * site; what is left unsplit when the budget runs out is reported whole (a superset). */
#include "translate.h"
#include "affine_arg.h"

#include <stdlib.h>
#include <string.h>

typedef __int128 wide;

struct ival {
    wide lo, hi;
};

#define MAX_STACK 64
#define MAX_LOOPS 64
#define REFINE_EVALS 256 /* evaluations per site and call */
#define WIDE_LIMIT ((wide)1 << 64)

/* The variables a site can depend on: 3 group dims, 3 local dims, then the loops. */
#define VAR_GROUP 0
#define VAR_LOCAL 3
#define VAR_LOOP 6

struct env {
    const struct translate_alaunch *l;
    unsigned nloops;
    struct ival var[VAR_LOOP + MAX_LOOPS]; /* group and local ids, loop variables */
    unsigned char fixed[VAR_LOOP + MAX_LOOPS]; /* loop ranges set by refinement, not by their loop */
    const struct translate_affine *a;
    int evals;
    /* A remainder whose operand crosses one multiple of its constant divisor (NBody's
     * `(t + group) % tiles` over a box whose sum passes `tiles`) takes two intervals,
     * [lo % b, b - 1] and [0, hi % b], where the hull is the whole period. refine evaluates a
     * site once per interval (pick 0, 1) when the hull saw one (wraps); pick -1: the hull.
     * Only the first such remainder of an offset is picked; loop bounds never are. */
    int pick, wraps;
};

static wide wmin(wide a, wide b) { return a < b ? a : b; }
static wide wmax(wide a, wide b) { return a > b ? a : b; }

static int fits(struct ival v, const struct translate_anode *n)
{
    unsigned bits = n->bits == 0 || n->bits > 64 ? 64 : n->bits;
    wide lo = n->is_signed ? -((wide)1 << (bits - 1)) : 0;
    wide hi = n->is_signed ? ((wide)1 << (bits - 1)) - 1 : ((wide)1 << bits) - 1;
    return v.lo >= lo && v.hi <= hi && v.lo <= v.hi;
}

int tr_affine_arg_value(const struct translate_alaunch *l, const struct translate_anode *n, wide *out)
{
    if (n->v < 0 || (unsigned long long)n->v >= l->num_args || l->args == NULL || l->args[n->v] == NULL)
        return -1;
    size_t size = l->arg_sizes[n->v];
    const void *p = l->args[n->v];
    switch (size) {
    case 1: { uint8_t u; memcpy(&u, p, 1); *out = n->is_signed ? (wide)(int8_t)u : (wide)u; return 0; }
    case 2: { uint16_t u; memcpy(&u, p, 2); *out = n->is_signed ? (wide)(int16_t)u : (wide)u; return 0; }
    case 4: { uint32_t u; memcpy(&u, p, 4); *out = n->is_signed ? (wide)(int32_t)u : (wide)u; return 0; }
    case 8: { uint64_t u; memcpy(&u, p, 8); *out = n->is_signed ? (wide)(int64_t)u : (wide)u; return 0; }
    default: return -1;
    }
}

static struct ival point(wide v) { return (struct ival){v, v}; }

/* Work-item functions; dimensions past the NDRange's report what OpenCL says (sizes 1, ids 0). */
static int item_value(const struct env *e, const struct translate_anode *n, struct ival *out)
{
    const struct translate_alaunch *l = e->l;
    long long d = n->v;
    if (d < 0)
        return -1;
    int in = d < 3 && (unsigned)d < (l->dims ? l->dims : 1);
    wide gs = in ? (wide)l->global_size[d] : 1, ls = in ? (wide)l->local_size[d] : 1;
    wide off = in ? (wide)l->global_offset[d] : 0;
    if (ls <= 0)
        return -1;
    switch (n->op) {
    case TRANSLATE_AOP_GROUP_ID: *out = in ? e->var[VAR_GROUP + d] : point(0); return 0;
    case TRANSLATE_AOP_LOCAL_ID: *out = in ? e->var[VAR_LOCAL + d] : point(0); return 0;
    case TRANSLATE_AOP_GLOBAL_ID:
        if (!in) {
            *out = point(0);
            return 0;
        }
        *out = (struct ival){off + e->var[VAR_GROUP + d].lo * ls + e->var[VAR_LOCAL + d].lo,
                             wmin(off + e->var[VAR_GROUP + d].hi * ls + e->var[VAR_LOCAL + d].hi, off + gs - 1)};
        return out->lo <= out->hi ? 0 : -1;
    case TRANSLATE_AOP_GLOBAL_SIZE: *out = point(gs); return 0;
    case TRANSLATE_AOP_LOCAL_SIZE: *out = point(ls); return 0;
    case TRANSLATE_AOP_NUM_GROUPS: *out = point((gs + ls - 1) / ls); return 0;
    case TRANSLATE_AOP_GLOBAL_OFFSET: *out = point(off); return 0;
    default: return -1;
    }
}

/* The smallest interval holding the four corner values of a monotone operation. */
static struct ival hull(const wide p[4])
{
    struct ival v = {p[0], p[0]};
    for (int i = 1; i < 4; i++) {
        v.lo = wmin(v.lo, p[i]);
        v.hi = wmax(v.hi, p[i]);
    }
    return v;
}

static int mul(struct ival a, struct ival b, struct ival *out)
{
    if (a.lo < -WIDE_LIMIT || a.hi > WIDE_LIMIT || b.lo < -WIDE_LIMIT || b.hi > WIDE_LIMIT)
        return -1;
    wide p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
    *out = hull(p);
    return 0;
}

/* C's truncating division (b does not hold 0): a / b is monotone in each operand on each side
 * of 0, so its extremes are at the corners. */
static int divide(struct ival a, struct ival b, struct ival *out)
{
    if (b.lo <= 0 && b.hi >= 0)
        return -1;
    wide p[4] = {a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi};
    *out = hull(p);
    return 0;
}

/* C's remainder: its sign is a's, its magnitude below |b|'s largest. */
static int rem(struct ival a, struct ival b, struct ival *out)
{
    if (b.lo <= 0 && b.hi >= 0)
        return -1;
    if (b.lo == b.hi && a.lo >= 0 && a.lo / b.lo == a.hi / b.lo) { /* one period: exact */
        *out = (struct ival){a.lo % b.lo, a.hi % b.lo};
        return 0;
    }
    wide m = wmax(b.hi < 0 ? -b.lo : b.hi, b.lo < 0 ? -b.lo : b.lo) - 1;
    *out = (struct ival){a.lo >= 0 ? 0 : wmax(a.lo, -m), a.hi <= 0 ? 0 : wmin(a.hi, m)};
    return 0;
}

static int shift(struct ival a, struct ival b, int left, struct ival *out)
{
    if (b.lo < 0 || b.hi > 63)
        return -1;
    if (left)
        return mul(a, (struct ival){(wide)1 << b.lo, (wide)1 << b.hi}, out);
    wide p[4] = {a.lo >> b.lo, a.lo >> b.hi, a.hi >> b.lo, a.hi >> b.hi}; /* floor(a / 2^b) */
    *out = hull(p);
    return 0;
}

/* Whether op computes the same value modulo 2^bits of its operands modulo 2^bits: then a
 * value that left its type's range (wrapped) may pass through it and stay exact. */
static int ring_op(unsigned char op)
{
    return op == TRANSLATE_AOP_ADD || op == TRANSLATE_AOP_SUB || op == TRANSLATE_AOP_MUL || op == TRANSLATE_AOP_NEG ||
           op == TRANSLATE_AOP_SHL || op == TRANSLATE_AOP_EITHER;
}

/* Evaluates x. A value may leave its type's range (C wraps it) only on its way through ring
 * operations and same-width or narrowing casts to the result (the integers modulo 2^64 are
 * what pointer arithmetic adds, so the mathematical offset is then the machine's where it fits
 * 64 bits: FDTD3d's `in[p - 2 * sz]` with size_t p, whose negative values only guarded-out
 * work-items would compute); a wrapped operand of any other operation, and a wrapped result
 * where wrapped is 0 (loop bounds: C compares the wrapped value), fail. */
static int eval(struct env *e, const struct translate_aexpr *x, struct ival *out, int wrapped_ok)
{
    struct ival st[MAX_STACK];
    unsigned char wrapped[MAX_STACK], bits[MAX_STACK];
    unsigned sp = 0;
    e->evals++;
    for (unsigned i = 0; i < x->n; i++) {
        const struct translate_anode *n = &x->nodes[i];
        struct ival v, a, b;
        int rc = 0, wa = 0, wb = 0;
        unsigned char ba = 64;
        if (n->op >= TRANSLATE_AOP_ADD) {
            if (sp < 2)
                return -1;
            sp--;
            b = st[sp];
            wb = wrapped[sp];
            sp--;
            a = st[sp];
            wa = wrapped[sp];
        } else if (n->op >= TRANSLATE_AOP_CAST) {
            if (sp < 1)
                return -1;
            sp--;
            a = st[sp];
            wa = wrapped[sp];
            ba = bits[sp];
        } else if (sp == MAX_STACK) {
            return -1;
        }
        if ((wa || wb) && !ring_op(n->op) && !(n->op == TRANSLATE_AOP_CAST && n->bits <= ba))
            return -1;
        switch (n->op) {
        case TRANSLATE_AOP_CONST:
            v = point(n->is_signed || n->bits < 64 ? (wide)n->v : (wide)(unsigned long long)n->v);
            break;
        case TRANSLATE_AOP_ARG: {
            wide w;
            rc = tr_affine_arg_value(e->l, n, &w);
            v = point(w);
            break;
        }
        case TRANSLATE_AOP_GLOBAL_ID: case TRANSLATE_AOP_LOCAL_ID: case TRANSLATE_AOP_GROUP_ID:
        case TRANSLATE_AOP_GLOBAL_SIZE: case TRANSLATE_AOP_LOCAL_SIZE: case TRANSLATE_AOP_NUM_GROUPS:
        case TRANSLATE_AOP_GLOBAL_OFFSET:
            rc = item_value(e, n, &v);
            break;
        case TRANSLATE_AOP_LOOP:
            if (n->v < 0 || (unsigned long long)n->v >= e->nloops)
                return -1;
            v = e->var[VAR_LOOP + n->v];
            break;
        case TRANSLATE_AOP_CAST: v = a; break;
        case TRANSLATE_AOP_NEG: v = (struct ival){-a.hi, -a.lo}; break;
        case TRANSLATE_AOP_ADD: v = (struct ival){a.lo + b.lo, a.hi + b.hi}; break;
        case TRANSLATE_AOP_SUB: v = (struct ival){a.lo - b.hi, a.hi - b.lo}; break;
        case TRANSLATE_AOP_MUL: rc = mul(a, b, &v); break;
        case TRANSLATE_AOP_DIV: rc = divide(a, b, &v); break;
        case TRANSLATE_AOP_REM:
            if (b.lo == b.hi && b.lo > 0 && a.lo >= 0 && a.hi / b.lo == a.lo / b.lo + 1 && e->wraps++ == 0 &&
                e->pick >= 0) {
                v = e->pick == 0 ? (struct ival){a.lo % b.lo, b.lo - 1} : (struct ival){0, a.hi % b.lo};
                break;
            }
            rc = rem(a, b, &v);
            break;
        case TRANSLATE_AOP_SHL: rc = wb ? -1 : shift(a, b, 1, &v); break;
        case TRANSLATE_AOP_SHR: rc = shift(a, b, 0, &v); break;
        case TRANSLATE_AOP_MIN: v = (struct ival){wmin(a.lo, b.lo), wmin(a.hi, b.hi)}; break;
        case TRANSLATE_AOP_MAX: v = (struct ival){wmax(a.lo, b.lo), wmax(a.hi, b.hi)}; break;
        case TRANSLATE_AOP_EITHER: v = (struct ival){wmin(a.lo, b.lo), wmax(a.hi, b.hi)}; break;
        default: return -1;
        }
        if (rc != 0 || v.lo > v.hi || v.lo < -WIDE_LIMIT * 2 || v.hi > WIDE_LIMIT * 2)
            return -1;
        wrapped[sp] = wa || wb || !fits(v, n);
        if (wrapped[sp] && !ring_op(n->op) && n->op != TRANSLATE_AOP_CAST)
            return -1;
        bits[sp] = n->bits;
        st[sp++] = v;
    }
    if (sp != 1 || (wrapped[0] && !wrapped_ok))
        return -1;
    *out = st[0];
    return 0;
}

/* The loops' ranges from their bounds, outer loops first (refinement may have fixed some). A
 * loop that cannot run gets its first value: a superset, and no site inside it runs anyway. */
static int loop_ranges(struct env *e)
{
    for (unsigned k = 0; k < e->nloops; k++) {
        if (e->fixed[VAR_LOOP + k])
            continue;
        const struct translate_aloop *lp = &e->a->loops[k];
        struct ival f, b, r;
        if (eval(e, &lp->first, &f, 0) != 0 || eval(e, &lp->bound, &b, 0) != 0)
            return -1;
        switch (lp->cmp) {
        case TRANSLATE_ACMP_LT: r = (struct ival){f.lo, b.hi - 1}; break;
        case TRANSLATE_ACMP_LE: r = (struct ival){f.lo, b.hi}; break;
        case TRANSLATE_ACMP_GT: r = (struct ival){b.lo + 1, f.hi}; break;
        case TRANSLATE_ACMP_GE: r = (struct ival){b.lo, f.hi}; break;
        default: return -1;
        }
        struct ival s;
        if (r.hi < r.lo)
            r.hi = r.lo;
        else if (lp->step.n > 0 && f.lo == f.hi && eval(e, &lp->step, &s, 0) == 0 && s.lo == s.hi && s.lo > 0) {
            if (lp->cmp <= TRANSLATE_ACMP_LE)
                r.hi = f.lo + (r.hi - f.lo) / s.lo * s.lo; /* the last value reached */
            else
                r.lo = f.lo - (f.lo - r.lo) / s.lo * s.lo;
        }
        e->var[VAR_LOOP + k] = r;
    }
    return 0;
}

struct out {
    void (*range)(void *, unsigned, long long, long long);
    void *ctx;
};

static int site_ival(struct env *e, const struct translate_asite *s, struct ival *r)
{
    int pick = e->pick;
    e->pick = -1;
    int rc = loop_ranges(e);
    e->pick = pick;
    e->wraps = 0;
    if (rc != 0 || eval(e, &s->offset, r, 1) != 0)
        return -1;
    r->hi += s->bytes; /* exclusive end */
    wide half = (wide)1 << 63; /* the offset is pointer arithmetic: a 64-bit signed value */
    return r->lo >= -half && r->hi <= half ? 0 : -1;
}

static void report(const struct out *o, unsigned site, struct ival r)
{
    wide lim = (wide)1 << 62;
    o->range(o->ctx, site, (long long)wmax(r.lo, -lim), (long long)wmin(r.hi, lim));
}

/* The variable to split: the one whose fixing shrinks the range most, if its values together
 * would cover less than half of it (a stride with gaps). -1: none. Each trial evaluates the
 * loops' ranges for its narrower box (loop_ranges writes them into e->var), so the loops'
 * ranges of the whole box, which the caller computed and splits, are put back after each:
 * else the caller halved the last trial's range (one work-item's), and the box's other
 * work-items' last iterations fell outside every range (CLBlast's Xaxpy, a grid-stride loop). */
static int split_var(struct env *e, const struct translate_asite *s, struct ival whole)
{
    wide span = whole.hi - whole.lo, best_cover = span / 2;
    int best = -1;
    unsigned nv = VAR_LOOP + e->nloops;
    struct ival loops[MAX_LOOPS];
    memcpy(loops, &e->var[VAR_LOOP], e->nloops * sizeof *loops);
    for (unsigned v = 0; v < nv; v++) {
        memcpy(&e->var[VAR_LOOP], loops, e->nloops * sizeof *loops);
        struct ival keep = e->var[v];
        wide count = keep.hi - keep.lo + 1;
        if (count < 2)
            continue;
        unsigned char was = e->fixed[v];
        e->var[v].hi = e->var[v].lo;
        e->fixed[v] = v >= VAR_LOOP;
        struct ival one;
        int rc = site_ival(e, s, &one);
        e->var[v] = keep;
        e->fixed[v] = was;
        if (rc != 0)
            return -1;
        wide cover = (one.hi - one.lo) * count;
        if (cover < best_cover) {
            best_cover = cover;
            best = (int)v;
        }
    }
    memcpy(&e->var[VAR_LOOP], loops, e->nloops * sizeof *loops);
    return best;
}

static int refine(struct env *e, const struct translate_asite *s, unsigned site, wide granule, const struct out *o)
{
    struct ival whole;
    if (site_ival(e, s, &whole) != 0)
        return -1;
    if (e->pick < 0 && e->wraps > 0 && whole.hi - whole.lo > 2 * granule) { /* a remainder's two intervals */
        int rc = 0;
        for (e->pick = 0; rc == 0 && e->pick < 2; e->pick++)
            rc = refine(e, s, site, granule, o);
        e->pick = -1;
        return rc;
    }
    int v = whole.hi - whole.lo > 2 * granule && e->evals < REFINE_EVALS ? split_var(e, s, whole) : -1;
    if (v < 0) {
        report(o, site, whole);
        return 0;
    }
    struct ival keep = e->var[v];
    unsigned char was = e->fixed[v];
    wide mid = keep.lo + (keep.hi - keep.lo) / 2;
    e->fixed[v] = v >= VAR_LOOP;
    e->var[v] = (struct ival){keep.lo, mid};
    int rc = refine(e, s, site, granule, o);
    e->var[v] = (struct ival){mid + 1, keep.hi};
    if (rc == 0)
        rc = refine(e, s, site, granule, o);
    e->var[v] = keep;
    e->fixed[v] = was;
    return rc;
}

static int env_init(struct env *e, const struct translate_affine *a, const struct translate_alaunch *l)
{
    if (a == NULL || l == NULL || a->nloops > MAX_LOOPS)
        return -1;
    *e = (struct env){.l = l, .nloops = a->nloops, .a = a, .pick = -1};
    for (unsigned d = 0; d < 3; d++) {
        int in = d < (l->dims ? l->dims : 1);
        unsigned long long ls = in ? l->local_size[d] : 1;
        if (ls == 0 || l->group_last[d] < l->group_first[d])
            return -1;
        e->var[VAR_GROUP + d] = in ? (struct ival){l->group_first[d], l->group_last[d]} : point(0);
        e->var[VAR_LOCAL + d] = (struct ival){0, (wide)ls - 1};
    }
    return 0;
}

/* ---- iteration ranges ---- */

/* A ranged loop over the box within iterations [iter_first, iter_end): the values its variable
 * takes there (empty: no work-item has such an iteration), and its trip counts. */
struct rloop {
    int empty;
    struct ival var;
    wide tmin, tmax;
};

/* Trips of one work-item whose first and bound are d apart (in the loop's direction). */
static wide trips(wide d, wide s, int strict)
{
    return strict ? (d > 0 ? (d + s - 1) / s : 0) : (d >= 0 ? d / s + 1 : 0);
}

static int ranged_loop(struct env *e, unsigned k, struct rloop *rl)
{
    const struct translate_aloop *lp = &e->a->loops[k];
    struct ival f, b, st;
    if (eval(e, &lp->first, &f, 0) != 0 || eval(e, &lp->bound, &b, 0) != 0 || lp->step.n == 0 ||
        eval(e, &lp->step, &st, 0) != 0 || st.lo != st.hi || st.lo <= 0)
        return -1; /* the iteration -> value map is unknown */
    wide s = st.lo;
    int inc = lp->cmp == TRANSLATE_ACMP_LT || lp->cmp == TRANSLATE_ACMP_LE;
    int strict = lp->cmp == TRANSLATE_ACMP_LT || lp->cmp == TRANSLATE_ACMP_GT;
    rl->tmax = trips(inc ? b.hi - f.lo : f.hi - b.lo, s, strict);
    rl->tmin = trips(inc ? b.lo - f.hi : f.lo - b.hi, s, strict);
    wide i0 = (wide)e->l->iter_first, i1 = wmin((wide)e->l->iter_end, rl->tmax);
    rl->empty = i0 >= i1;
    if (rl->empty) {
        rl->var = point(f.lo);
        return 0;
    }
    if (inc) /* within the loop's own range: [f.lo, bound] */
        rl->var = (struct ival){f.lo + i0 * s, wmin(f.hi + (i1 - 1) * s, strict ? b.hi - 1 : b.hi)};
    else
        rl->var = (struct ival){wmax(f.lo - (i1 - 1) * s, strict ? b.lo + 1 : b.lo), f.hi - i0 * s};
    rl->empty = rl->var.lo > rl->var.hi;
    return 0;
}

/* The ranged loops of the box (iter_end set): fixes their variables to the range's values. */
static int ranged_loops(struct env *e, struct rloop *rl)
{
    if (!e->a->ranges)
        return -1;
    for (unsigned k = 0; k < e->nloops; k++) {
        if (!e->a->loops[k].ranged)
            continue;
        if (ranged_loop(e, k, &rl[k]) != 0)
            return -1;
        e->var[VAR_LOOP + k] = rl[k].var;
        e->fixed[VAR_LOOP + k] = 1;
    }
    return 0;
}

/* Whether a site runs in the range: inside its loop when the loop has iterations there; after
 * it where a work-item's loop may end there (its last iteration in the range, or none at all
 * in the first range; the next range's start too, whichever side of the check it falls on). */
static int site_in_range(const struct env *e, const struct translate_asite *s, const struct rloop *rl)
{
    if (s->range_part == 0 || s->range_loop >= e->nloops)
        return 1;
    const struct rloop *r = &rl[s->range_loop];
    if (s->range_part == 1)
        return !r->empty;
    wide i0 = (wide)e->l->iter_first, i1 = (wide)e->l->iter_end;
    return r->tmax >= i0 && r->tmin <= i1; /* some trip count t in [i0, i1] */
}

int translate_affine_ranges(const struct translate_affine *a, const struct translate_alaunch *l,
                            unsigned long long granule,
                            void (*range)(void *ctx, unsigned site, long long lo, long long end), void *ctx)
{
    struct env e;
    struct rloop rl[MAX_LOOPS];
    if (env_init(&e, a, l) != 0 || (l->iter_end != 0 && ranged_loops(&e, rl) != 0))
        return -1;
    struct out o = {range, ctx};
    for (unsigned i = 0; i < a->nsites; i++) {
        e.evals = 0;
        if (l->iter_end != 0 && !site_in_range(&e, &a->sites[i], rl))
            continue;
        if (refine(&e, &a->sites[i], i, (wide)(granule ? granule : 1), &o) != 0)
            return -1;
    }
    return 0;
}

/* Iterations of loop k over the box (loop_ranges done): its values' span over its step; -1
 * when the step is not one positive value (a grid-stride loop's span over the whole grid would
 * count every element once per work-item). */
static double loop_trips(struct env *e, unsigned k)
{
    const struct translate_aloop *lp = &e->a->loops[k];
    struct ival r = e->var[VAR_LOOP + k], st;
    if (lp->step.n == 0 || eval(e, &lp->step, &st, 0) != 0 || st.lo != st.hi || st.lo <= 0)
        return -1;
    return (double)((r.hi - r.lo) / st.lo + 1);
}

int translate_affine_traffic(const struct translate_affine *a, const struct translate_alaunch *l, double *bytes)
{
    struct env e;
    if (env_init(&e, a, l) != 0 || loop_ranges(&e) != 0)
        return -1;
    double sum = 0;
    for (unsigned i = 0; i < a->nsites; i++) {
        const struct translate_asite *s = &a->sites[i];
        unsigned char named[MAX_LOOPS] = {0};
        for (unsigned n = 0; n < s->offset.n; n++) {
            const struct translate_anode *node = &s->offset.nodes[n];
            if (node->op == TRANSLATE_AOP_LOOP && node->v >= 0 && node->v < (long long)a->nloops)
                named[node->v] = 1;
        }
        double site = s->bytes;
        for (unsigned k = 0; k < a->nloops; k++) {
            double trips = named[k] ? loop_trips(&e, k) : 1;
            if (trips < 0)
                return -1;
            site *= trips;
        }
        sum += site;
    }
    *bytes = sum;
    return 0;
}

int translate_affine_more(const struct translate_affine *a, const struct translate_alaunch *l, int *more)
{
    struct env e;
    struct rloop rl[MAX_LOOPS];
    if (env_init(&e, a, l) != 0 || l->iter_end == 0 || ranged_loops(&e, rl) != 0)
        return -1;
    *more = 0;
    for (unsigned k = 0; k < e.nloops; k++)
        *more |= a->loops[k].ranged && rl[k].tmax > (wide)l->iter_end;
    return 0;
}
