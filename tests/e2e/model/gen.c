/* gen.c - see gen.h. */
#include "gen.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

const char *const model_kernel_src =
    "__kernel void k_inplace(__global uint *a, uint n, uint k)\n"
    "{ size_t i = get_global_id(0); if (i < n) { uint v = a[i]; a[i] = v * 2654435761u + (k ^ (v >> 13)); } }\n"
    "__kernel void k_bytes(__global uchar *a, uint n, uint k)\n"
    "{ size_t i = get_global_id(0); if (i < n) a[i] = (uchar)(a[i] * 13u + k); }\n"
    "__kernel void k_gather(__global const uint *src, __global const uint *idx, __global uint *dst, uint n, uint m)\n"
    "{ size_t i = get_global_id(0); if (i < n) dst[i] = src[idx[i] % m] + (uint)i; }\n"
    "__kernel void k_mix(__global const uint *a, __global uint *b, uint n, uint na)\n"
    "{ size_t i = get_global_id(0); if (i < n) b[i] = a[i % na] ^ (a[(i * 7u + 3u) % na] << 1); }\n";
const char *const model_kernel_names[K_KERNELS] = {"k_inplace", "k_bytes", "k_gather", "k_mix"};

void gen_fill_bytes(void *p, size_t n, uint64_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    unsigned char *b = p;
    size_t i = 0;
    while (i < n) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        for (int k = 0; k < 8 && i < n; k++, i++)
            b[i] = (unsigned char)(s >> (8 * k));
    }
}

/* ---- the model ---- */

struct mobj {
    int live, root, sub;
    size_t origin, size; /* in the root */
    cl_mem_flags flags;  /* effective (a sub-buffer's inherited ones included) */
};

struct access {
    int obj, write, op;
};

#define GATHER_FEW_FRAMES 8          /* budgets of at most this many pages... */
#define GATHER_FEW_FRAMES_ITEMS 256u /* ...bound a gather to this many work-items */

struct gen {
    struct seq *s;
    uint64_t rng;
    size_t align;
    size_t frames; /* the configuration's budget in pages; 0: not known */
    int valid_only; /* no op that is invalid on purpose */
    struct mobj obj[MODEL_MAX_OPS];
    int live[MODEL_MAX_OPS], nlive;
    struct access acc[MODEL_MAX_OPS * 3];
    int nacc;
    uint32_t mask[MODEL_MAX_OPS]; /* user events an op's command waits for, transitively */
    uint32_t pending;             /* user events not complete */
    int user_op[MODEL_USER_EVENTS], nuser;
    int qlast[MODEL_QUEUES];
    int cmds[MODEL_MAX_OPS], ncmds; /* ops that have an event */
};

static uint64_t rnd(struct gen *g)
{
    g->rng ^= g->rng << 13, g->rng ^= g->rng >> 7, g->rng ^= g->rng << 17;
    return g->rng;
}

/* Uniform in [lo, hi]. */
static size_t between(struct gen *g, size_t lo, size_t hi)
{
    return hi <= lo ? lo : lo + (size_t)(rnd(g) % (hi - lo + 1));
}

static bool chance(struct gen *g, unsigned percent)
{
    return rnd(g) % 100 < percent;
}

/* Odd, never a multiple of 4 KiB: small, medium or large (beyond the smallest budgets). */
static size_t obj_size(struct gen *g)
{
    unsigned r = (unsigned)(rnd(g) % 10);
    size_t n = r < 3 ? between(g, 1, 5000) : r < 7 ? between(g, 5000, 200000) : between(g, 200000, 1500000);
    return n | 1;
}

static bool conflict(const struct gen *g, int x, int y)
{
    const struct mobj *a = &g->obj[x], *b = &g->obj[y];
    if (a->root != b->root)
        return false;
    if (x == y || !a->sub || !b->sub)
        return true;
    return a->origin < b->origin + b->size && b->origin < a->origin + a->size;
}

static void add_wait(struct op *o, int w)
{
    for (int i = 0; i < o->nw; i++)
        if (o->w[i] == w)
            return;
    if (o->nw < MODEL_MAX_WAITS)
        o->w[o->nw++] = w;
}

static int pick_live(struct gen *g)
{
    return g->nlive ? g->live[rnd(g) % (unsigned)g->nlive] : -1;
}

static void push(struct gen *g, const struct op *o)
{
    if (o->bad && g->valid_only)
        return;
    if (g->s->n < MODEL_MAX_OPS)
        g->s->ops[g->s->n++] = *o;
}

static struct op blank(int kind)
{
    struct op o;
    memset(&o, 0, sizeof o);
    o.kind = kind;
    o.a = o.b = o.c = -1;
    return o;
}

static void complete_users(struct gen *g, uint32_t need)
{
    for (int u = 0; u < g->nuser; u++)
        if (need & g->pending & (1u << u)) {
            struct op c = blank(OP_COMPLETE);
            c.a = g->user_op[u];
            push(g, &c);
            g->pending &= ~(1u << u);
        }
}

/* Every command recorded as having finished: no later command needs to wait for it. */
static void forget_ops(struct gen *g, int q_or_all, int op)
{
    int k = 0;
    for (int i = 0; i < g->nacc; i++) {
        const struct op *o = &g->s->ops[g->acc[i].op];
        bool done = op >= 0 ? g->acc[i].op == op : (q_or_all < 0 || o->q == q_or_all);
        if (!done)
            g->acc[k++] = g->acc[i];
    }
    g->nacc = k;
}

static void finish_queue(struct gen *g, int q)
{
    uint32_t need = 0;
    for (int i = 0; i < g->ncmds; i++)
        if (g->s->ops[g->cmds[i]].q == q)
            need |= g->mask[g->cmds[i]];
    complete_users(g, need);
    struct op f = blank(OP_FINISH);
    f.q = q;
    push(g, &f);
    forget_ops(g, q, -1);
}

/* A command o over objects objs (writes[k]: whether it writes objs[k]): its wait list (every
 * earlier command it conflicts with, and random extra events), its user-event mask, the
 * completions a blocking call needs first; then appends it and records its accesses. */
static void command(struct gen *g, struct op *o, const int *objs, const int *writes, int nobj)
{
    o->q = (int)(rnd(g) % MODEL_QUEUES);
    int need = 0;
    for (int i = 0; i < g->nacc; i++)
        for (int k = 0; k < nobj; k++)
            if (objs[k] >= 0 && conflict(g, g->acc[i].obj, objs[k]) && (g->acc[i].write || writes[k]))
                need++;
    if (need + 4 > MODEL_MAX_WAITS) { /* too many to list: a clFinish of every queue first */
        for (int q = 0; q < MODEL_QUEUES; q++)
            finish_queue(g, q);
    }
    for (int i = 0; i < g->nacc; i++)
        for (int k = 0; k < nobj; k++)
            if (objs[k] >= 0 && conflict(g, g->acc[i].obj, objs[k]) && (g->acc[i].write || writes[k]))
                add_wait(o, g->acc[i].op);
    if (g->ncmds > 0 && chance(g, 25))
        add_wait(o, g->cmds[rnd(g) % (unsigned)g->ncmds]);
    if (g->nuser > 0 && chance(g, 20))
        add_wait(o, g->user_op[rnd(g) % (unsigned)g->nuser]);
    uint32_t mask = 0;
    for (int i = 0; i < o->nw; i++) {
        const struct op *w = &g->s->ops[o->w[i]];
        if (w->kind == OP_USER) {
            for (int u = 0; u < g->nuser; u++)
                if (g->user_op[u] == o->w[i])
                    mask |= 1u << u;
        } else {
            mask |= g->mask[o->w[i]];
        }
    }
    if (o->q < 2 && g->qlast[o->q] >= 0)
        mask |= g->mask[g->qlast[o->q]];
    /* A marker without a wait list waits for every earlier command of its queue; on PoCL so does
     * a marker with a wait list (PoCL 3.1, out-of-order queue too, against the specification:
     * seed 2563269 waited for ever on one whose listed event was complete, behind a read that
     * waited on a user event), and a blocking call (it finishes the queue). The mask only says
     * which user events to complete before a blocking call or wait, so more is safe. */
    if (o->kind == OP_MARKER || o->blocking || o->kind == OP_MAP)
        for (int i = 0; i < g->ncmds; i++)
            if (g->s->ops[g->cmds[i]].q == o->q)
                mask |= g->mask[g->cmds[i]];
    if (o->blocking || o->kind == OP_MAP)
        complete_users(g, mask);
    int idx = g->s->n; /* after the completions */
    if (idx >= MODEL_MAX_OPS)
        return;
    mask &= g->pending;
    g->mask[idx] = mask;
    push(g, o);
    if (o->bad)
        return; /* fails at the call: no event, no access */
    g->cmds[g->ncmds++] = idx;
    g->qlast[o->q] = idx;
    if (o->blocking && o->kind != OP_MAP)
        return; /* done when the call returns */
    for (int k = 0; k < nobj; k++)
        if (objs[k] >= 0 && g->nacc < (int)(sizeof g->acc / sizeof g->acc[0]))
            g->acc[g->nacc++] = (struct access){objs[k], writes[k], idx};
}

/* An object usable for host access of `kind` (0 read, 1 write): one the flags allow, unless
 * the op is to be invalid. */
static bool host_allows(const struct mobj *m, int write)
{
    if (m->flags & CL_MEM_HOST_NO_ACCESS)
        return false;
    return write ? !(m->flags & CL_MEM_HOST_READ_ONLY) : !(m->flags & CL_MEM_HOST_WRITE_ONLY);
}

static int pick_host(struct gen *g, int write, bool *bad)
{
    for (int t = 0; t < 8; t++) {
        int x = pick_live(g);
        if (x >= 0 && host_allows(&g->obj[x], write))
            return x;
        if (x >= 0 && chance(g, 30)) {
            *bad = true;
            return x;
        }
    }
    return -1;
}

/* off and size of a range inside an object of `size` bytes; beyond it when bad. */
static void range(struct gen *g, size_t size, size_t *off, size_t *len, bool bad)
{
    if (bad) {
        *off = between(g, 0, size);
        *len = size - *off + between(g, 1, 64);
        return;
    }
    unsigned r = (unsigned)(rnd(g) % 4);
    if (r == 0) {
        *off = 0, *len = size;
    } else {
        *off = between(g, 0, size - 1);
        *len = between(g, 1, size - *off);
    }
}

static void gen_create(struct gen *g)
{
    struct op o = blank(OP_CREATE);
    o.size = obj_size(g);
    o.data = rnd(g);
    static const cl_mem_flags access[] = {CL_MEM_READ_WRITE, CL_MEM_READ_WRITE, CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY};
    static const cl_mem_flags host[] = {0, 0, 0, CL_MEM_USE_HOST_PTR, CL_MEM_COPY_HOST_PTR, CL_MEM_ALLOC_HOST_PTR,
                                        CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR};
    o.flags = access[rnd(g) % 4] | host[rnd(g) % 7];
    if (chance(g, 8))
        o.flags |= chance(g, 50) ? CL_MEM_HOST_READ_ONLY : chance(g, 50) ? CL_MEM_HOST_WRITE_ONLY : CL_MEM_HOST_NO_ACCESS;
    if (chance(g, 3))
        o.size = 0, o.bad = 1; /* CL_INVALID_BUFFER_SIZE */
    int idx = g->s->n;
    push(g, &o);
    if (o.bad || idx >= MODEL_MAX_OPS)
        return;
    g->obj[idx] = (struct mobj){1, idx, 0, 0, o.size, o.flags};
    g->live[g->nlive++] = idx;
}

static void gen_sub(struct gen *g)
{
    int p = pick_live(g);
    if (p < 0)
        return;
    struct op o = blank(OP_SUB);
    o.a = p;
    const struct mobj *m = &g->obj[p];
    size_t aligned = (m->size - 1) / g->align; /* origins k * align < size */
    o.off = between(g, 0, aligned) * g->align;
    o.size = between(g, 1, m->size - o.off);
    if (chance(g, 30) && o.size > 1)
        o.size = between(g, 1, o.size < 20000 ? o.size : 20000);
    o.flags = 0;
    if (m->sub) {
        o.bad = 1; /* a sub-buffer of a sub-buffer: CL_INVALID_MEM_OBJECT */
    } else if (chance(g, 4)) {
        o.bad = 1, o.size = m->size - o.off + between(g, 1, 100); /* beyond: CL_INVALID_VALUE */
    } else if (!(m->flags & (CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY)) && chance(g, 20)) {
        o.flags = chance(g, 50) ? CL_MEM_READ_ONLY : CL_MEM_WRITE_ONLY;
    }
    int idx = g->s->n;
    push(g, &o);
    if (o.bad || idx >= MODEL_MAX_OPS)
        return;
    cl_mem_flags inherit = m->flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS);
    if (o.flags == 0)
        inherit |= m->flags & (CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY | CL_MEM_READ_WRITE);
    g->obj[idx] = (struct mobj){1, m->root, 1, m->origin + o.off, o.size, o.flags | inherit};
    g->live[g->nlive++] = idx;
}

static void gen_rw(struct gen *g, int write)
{
    bool bad = false;
    int x = pick_host(g, write, &bad);
    if (x < 0)
        return;
    struct op o = blank(write ? OP_WRITE : OP_READ);
    o.a = x;
    if (!bad && chance(g, 4))
        bad = true;
    range(g, g->obj[x].size, &o.off, &o.size, bad && host_allows(&g->obj[x], write));
    o.bad = bad;
    o.blocking = chance(g, 40);
    o.data = rnd(g);
    int w = write;
    command(g, &o, &x, &w, 1);
}

static void gen_copy(struct gen *g)
{
    int x = pick_live(g), y = pick_live(g);
    if (x < 0)
        return;
    struct op o = blank(OP_COPY);
    o.a = x, o.b = y;
    size_t sx = g->obj[x].size, sy = g->obj[y].size, lim = sx < sy ? sx : sy;
    o.size = between(g, 1, lim);
    o.off = between(g, 0, sx - o.size);
    o.off2 = between(g, 0, sy - o.size);
    if (chance(g, 4))
        o.bad = 1, o.off2 = sy - o.size + 1; /* beyond dst: CL_INVALID_VALUE */
    size_t a0 = g->obj[x].origin + o.off, b0 = g->obj[y].origin + o.off2;
    if (!o.bad && g->obj[x].root == g->obj[y].root && a0 < b0 + o.size && b0 < a0 + o.size) {
        if (x != y && g->obj[x].sub != g->obj[y].sub)
            return; /* a buffer and its sub-buffer: undefined (no overlap error is specified for it) */
        o.bad = 1; /* CL_MEM_COPY_OVERLAP */
    }
    int objs[2] = {x, y}, w[2] = {0, 1};
    if (x != y && conflict(g, x, y) && !o.bad)
        return; /* one command over a buffer and its sub-buffer, or overlapping sub-buffers */
    command(g, &o, objs, w, 2);
}

/* A rect of rg with row and slice pitches rp, sp at origin org inside `size` bytes; false
 * when none fits. */
static bool rect_in(struct gen *g, size_t size, const size_t rg[3], size_t *rp, size_t *sp, size_t org[3])
{
    *rp = rg[0] + between(g, 0, 40);
    *sp = *rp * (rg[1] + between(g, 0, 2)); /* a multiple of the row pitch */
    size_t extent = (rg[2] - 1) * *sp + (rg[1] - 1) * *rp + rg[0];
    if (extent > size)
        return false;
    size_t slack = size - extent;
    size_t z = chance(g, 50) ? 0 : between(g, 0, slack / *sp);
    slack -= z * *sp;
    /* y within its slice, as an application lays out a box */
    size_t rows = *sp / *rp - rg[1], y = between(g, 0, slack / *rp < rows ? slack / *rp : rows);
    slack -= y * *rp;
    size_t x = between(g, 0, slack < *rp - rg[0] ? slack : *rp - rg[0]);
    org[0] = x, org[1] = y, org[2] = z;
    return true;
}

static void rect_region(struct gen *g, size_t lim, size_t rg[3])
{
    rg[0] = between(g, 1, lim < 300 ? lim : 300);
    rg[1] = between(g, 1, 6);
    rg[2] = chance(g, 40) ? between(g, 1, 3) : 1;
}

static void gen_rect(struct gen *g, int kind)
{
    struct op o = blank(kind);
    int x = pick_live(g);
    if (x < 0)
        return;
    o.a = x;
    rect_region(g, g->obj[x].size, o.rg);
    if (kind == OP_COPY_RECT) {
        int y = pick_live(g);
        if (g->obj[x].root == g->obj[y].root || g->obj[x].sub || g->obj[y].sub)
            return; /* overlap of rects is not modelled: different buffers only; PoCL 3.1 crashes
                     * on rect copies from or to a sub-buffer */
        o.b = y;
        if (!rect_in(g, g->obj[x].size, o.rg, &o.srp, &o.ssp, o.so) ||
            !rect_in(g, g->obj[y].size, o.rg, &o.drp, &o.dsp, o.dor))
            return;
        int objs[2] = {x, y}, w[2] = {0, 1};
        command(g, &o, objs, w, 2);
        return;
    }
    int write = kind == OP_WRITE_RECT;
    if (!host_allows(&g->obj[x], write))
        return;
    if (!rect_in(g, g->obj[x].size, o.rg, &o.srp, &o.ssp, o.so))
        return;
    size_t host = 1 << 16;
    if (!rect_in(g, host, o.rg, &o.drp, &o.dsp, o.dor))
        return;
    o.host_bytes = o.dor[2] * o.dsp + o.dor[1] * o.drp + o.dor[0] + (o.rg[2] - 1) * o.dsp + (o.rg[1] - 1) * o.drp +
                   o.rg[0];
    o.blocking = chance(g, 40);
    o.data = rnd(g);
    command(g, &o, &x, &write, 1);
}

static void gen_fill(struct gen *g)
{
    int x = pick_live(g);
    if (x < 0)
        return;
    struct op o = blank(OP_FILL);
    o.a = x;
    o.psize = 1u << between(g, 0, 7);
    size_t units = g->obj[x].size / o.psize;
    if (units == 0)
        return;
    size_t u0 = between(g, 0, units - 1);
    o.off = u0 * o.psize;
    o.size = between(g, 1, units - u0) * o.psize;
    if (o.psize > 1 && chance(g, 5))
        o.bad = 1, o.off += 1; /* not a multiple of the pattern: CL_INVALID_VALUE */
    o.data = rnd(g);
    int w = 1;
    command(g, &o, &x, &w, 1);
}

static void gen_map(struct gen *g)
{
    static const cl_map_flags kinds[] = {CL_MAP_READ, CL_MAP_WRITE, CL_MAP_READ | CL_MAP_WRITE,
                                         CL_MAP_WRITE_INVALIDATE_REGION};
    struct op o = blank(OP_MAP);
    o.flags = kinds[rnd(g) % 4];
    bool bad = false;
    int x = pick_host(g, o.flags != CL_MAP_READ, &bad);
    if (x < 0)
        return;
    if (!bad && o.flags == (CL_MAP_READ | CL_MAP_WRITE) && !host_allows(&g->obj[x], 0))
        bad = true;
    if (!bad && chance(g, 4))
        bad = true;
    o.a = x;
    range(g, g->obj[x].size, &o.off, &o.size, bad && host_allows(&g->obj[x], o.flags != CL_MAP_READ) &&
                                                   (o.flags != (CL_MAP_READ | CL_MAP_WRITE) || host_allows(&g->obj[x], 0)));
    o.bad = bad;
    o.blocking = chance(g, 50);
    o.data = rnd(g);
    int w = o.flags != CL_MAP_READ;
    command(g, &o, &x, &w, 1);
}

static bool kernel_reads(cl_mem_flags f)
{
    return !(f & CL_MEM_WRITE_ONLY);
}

static bool kernel_writes(cl_mem_flags f)
{
    return !(f & CL_MEM_READ_ONLY);
}

static void gen_launch(struct gen *g)
{
    struct op o = blank(OP_LAUNCH);
    o.kernel = (int)(rnd(g) % K_KERNELS);
    o.scalar = (unsigned)rnd(g);
    int objs[3] = {-1, -1, -1}, w[3] = {0, 0, 0};
    for (int t = 0; t < 3; t++) {
        int x = pick_live(g), y = pick_live(g), z = pick_live(g);
        if (x < 0)
            return;
        const struct mobj *mx = &g->obj[x], *my = &g->obj[y], *mz = &g->obj[z];
        switch (o.kernel) {
        case K_INPLACE:
        case K_BYTES: {
            size_t n = o.kernel == K_INPLACE ? mx->size / 4 : mx->size;
            if (n == 0 || !kernel_reads(mx->flags) || !kernel_writes(mx->flags))
                continue;
            o.a = x, o.n = (unsigned)(chance(g, 70) ? n : between(g, 1, n));
            objs[0] = x, w[0] = 1;
            break;
        }
        case K_GATHER: /* src x, idx y, dst z */
            if (mx->size < 4 || my->size < 4 || mz->size < 4 || !kernel_reads(mx->flags) ||
                !kernel_reads(my->flags) || !kernel_writes(mz->flags) || conflict(g, x, z) || conflict(g, y, z))
                continue;
            o.a = x, o.b = y, o.c = z;
            o.m = (unsigned)(mx->size / 4);
            o.n = (unsigned)((my->size < mz->size ? my->size : mz->size) / 4);
            /* Its source pages are random, so at a budget of a few frames a partition holds
             * about two of its work-items, each found by a fault and a split (seed 5085 at 256K in
             * 64K pages: 62,577 partition launches and 42,137 inspector windows, 12 s of a
             * sequence). Bounded there, a gather still runs in a hundred partitions, and CI
             * runs hundreds of sequences instead of a hundred. */
            if (g->frames != 0 && g->frames <= GATHER_FEW_FRAMES && o.n > GATHER_FEW_FRAMES_ITEMS)
                o.n = GATHER_FEW_FRAMES_ITEMS;
            objs[0] = x, objs[1] = y, objs[2] = z, w[2] = 1;
            break;
        case K_MIX: /* a x, b z */
            if (mx->size < 4 || mz->size < 4 || !kernel_reads(mx->flags) || !kernel_writes(mz->flags) ||
                conflict(g, x, z))
                continue;
            o.a = x, o.b = z;
            o.m = (unsigned)(mx->size / 4);
            o.n = (unsigned)(mz->size / 4);
            if (chance(g, 30))
                o.n = (unsigned)between(g, 1, o.n);
            objs[0] = x, objs[1] = z, w[1] = 1;
            break;
        }
        if (objs[0] >= 0)
            break;
    }
    if (objs[0] < 0)
        return;
    static const unsigned locals[] = {0, 0, 1, 8, 64, 256};
    o.local = locals[rnd(g) % 6];
    /* A gather's work-group of 8 can fault in 10 pages, past the 4 frames of 256K in 64K pages,
     * and VAST then refuses the launch when it runs (it slices work-groups by their planned
     * pages only): one work-item per group (3 pages at most) keeps every budget usable. */
    if (o.kernel == K_GATHER)
        o.local = 1;
    o.goff = chance(g, 20) ? (unsigned)between(g, 1, 100) : 0;
    command(g, &o, objs, w, 3);
}

static void gen_release(struct gen *g)
{
    if (g->nlive < 3)
        return;
    int k = (int)(rnd(g) % (unsigned)g->nlive), x = g->live[k];
    struct op o = blank(OP_RELEASE);
    o.a = x;
    push(g, &o);
    g->live[k] = g->live[--g->nlive];
    g->obj[x].live = 0;
    /* Commands already enqueued keep the object alive; no later command names it. */
}

void gen_sequence(struct seq *s, uint64_t seed, int steps, size_t align, size_t frames, int valid_only)
{
    static struct gen g; /* large: not on the stack */
    memset(&g, 0, sizeof g);
    memset(s, 0, sizeof *s);
    s->seed = seed;
    g.s = s;
    g.rng = seed * 0x2545F4914F6CDD1Dull + 0x9E3779B97F4A7C15ull;
    g.align = align ? align : 128;
    g.frames = frames;
    g.valid_only = valid_only;
    for (int q = 0; q < MODEL_QUEUES; q++)
        g.qlast[q] = -1;
    int creates = (int)between(&g, 2, 4);
    for (int i = 0; i < creates; i++)
        gen_create(&g);
    while (s->n < steps && s->n < MODEL_MAX_OPS - 40) {
        unsigned r = (unsigned)(rnd(&g) % 100);
        if (r < 8)
            gen_create(&g);
        else if (r < 13)
            gen_sub(&g);
        else if (r < 25)
            gen_rw(&g, 1);
        else if (r < 37)
            gen_rw(&g, 0);
        else if (r < 45)
            gen_copy(&g);
        else if (r < 51)
            gen_rect(&g, (int)(OP_COPY_RECT + rnd(&g) % 3));
        else if (r < 57)
            gen_fill(&g);
        else if (r < 64)
            gen_map(&g);
        else if (r < 80)
            gen_launch(&g);
        else if (r < 83)
            gen_release(&g);
        else if (r < 87 && g.nuser < MODEL_USER_EVENTS) {
            struct op o = blank(OP_USER);
            g.user_op[g.nuser] = s->n;
            g.pending |= 1u << g.nuser++;
            push(&g, &o);
        } else if (r < 91 && g.pending) {
            for (int u = 0; u < g.nuser; u++)
                if ((g.pending & (1u << u)) && chance(&g, 50)) {
                    complete_users(&g, 1u << u);
                    break;
                }
        } else if (r < 94) {
            finish_queue(&g, (int)(rnd(&g) % MODEL_QUEUES));
        } else if (r < 97 && g.ncmds > 0) {
            int c = g.cmds[rnd(&g) % (unsigned)g.ncmds];
            complete_users(&g, g.mask[c]);
            struct op o = blank(OP_WAIT);
            o.a = c;
            push(&g, &o);
            forget_ops(&g, -1, c);
        } else {
            struct op o = blank(OP_MARKER);
            command(&g, &o, NULL, NULL, 0);
        }
    }
}

void gen_describe(const struct seq *s, int i, char *buf, size_t n)
{
    static const char *const names[OP_KINDS] = {"create", "sub",  "write",   "read",    "copy",   "copy_rect",
                                                 "read_rect", "write_rect", "fill", "map", "launch", "release",
                                                 "user",   "complete", "finish", "wait", "marker"};
    const struct op *o = &s->ops[i];
    int k = snprintf(buf, n, "%3d %-10s q%d%s%s a=%d b=%d c=%d off=%zu off2=%zu size=%zu flags=0x%llx", i,
                     names[o->kind], o->q, o->blocking ? " blocking" : "", o->bad ? " BAD" : "", o->a, o->b, o->c,
                     o->off, o->off2, o->size, (unsigned long long)o->flags);
    if (o->kind == OP_LAUNCH && k > 0 && (size_t)k < n)
        k += snprintf(buf + k, n - (size_t)k, " %s n=%u m=%u local=%u goff=%u", model_kernel_names[o->kernel], o->n,
                      o->m, o->local, o->goff);
    if (o->kind == OP_FILL && k > 0 && (size_t)k < n)
        k += snprintf(buf + k, n - (size_t)k, " pattern=%u", o->psize);
    if ((o->kind == OP_COPY_RECT || o->kind == OP_READ_RECT || o->kind == OP_WRITE_RECT) && k > 0 && (size_t)k < n)
        k += snprintf(buf + k, n - (size_t)k, " rg=%zux%zux%zu so=%zu,%zu,%zu/%zu,%zu do=%zu,%zu,%zu/%zu,%zu", o->rg[0],
                      o->rg[1], o->rg[2], o->so[0], o->so[1], o->so[2], o->srp, o->ssp, o->dor[0], o->dor[1],
                      o->dor[2], o->drp, o->dsp);
    for (int w = 0; w < o->nw && k > 0 && (size_t)k < n; w++)
        k += snprintf(buf + k, n - (size_t)k, "%s%d", w ? "," : " waits=", o->w[w]);
}
