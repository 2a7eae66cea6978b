/* fake_lanes.c: the fake device's two deferred lanes, its model of devops_opencl.c's two
 * queues (fake_device.h, "duplex"). Owns the lane queues, the hostile scheduler that runs
 * them, run-time failure injection and fake_duplex_ops(). Invariants, under lanes->lock: an
 * operation is on exactly one lane until it runs; a lane runs in issue order; an un-ticketed
 * operation is freed when it runs, a ticketed one when its ticket is waited for (after it
 * ran). fake_device.c routes its transfers here once lanes are enabled. */
#include "fake_lanes.h"

#include <stdlib.h>
#include <string.h>

enum { ORDERED, UNORDERED };

struct fake_op {
    struct fake_op *next;
    enum fake_op_kind kind;
    int ticketed, slot, done, failed;
    struct fake_chunk *chunk;
    size_t off, n;
    unsigned char *host;
};

const char *fake_order_name(enum fake_order order)
{
    switch (order) {
    case FAKE_H2D_FIRST: return "h2d-first";
    case FAKE_D2H_FIRST: return "d2h-first";
    default: return "random";
    }
}

int fake_device_enable_lanes(struct fake_device *d, enum fake_order order, unsigned seed)
{
    struct fake_lanes *l = calloc(1, sizeof *l);
    if (!l)
        return VAST_PC_ERR_HOST_MEMORY;
    pthread_mutex_init(&l->lock, NULL);
    l->order = order;
    l->rng = seed * 2654435761u + 1;
    atomic_store(&l->fail_run_h2d_after, -1);
    atomic_store(&l->fail_run_d2h_after, -1);
    d->lanes = l;
    return VAST_PC_OK;
}

size_t fake_lanes_pending(struct fake_device *d)
{
    struct fake_lanes *l = d->lanes;
    pthread_mutex_lock(&l->lock);
    size_t n = l->pending[ORDERED] + l->pending[UNORDERED];
    pthread_mutex_unlock(&l->lock);
    return n;
}

/* Lock held. The bytes move now, unless a failure is injected. */
static void run_op(struct fake_device *d, struct fake_op *op)
{
    struct fake_lanes *l = d->lanes;
    int fail = op->kind == FAKE_OP_H2D   ? fake_fault(&l->fail_run_h2d_after)
               : op->kind == FAKE_OP_D2H ? fake_fault(&l->fail_run_d2h_after)
                                         : 0;
    if (!fail && op->slot)
        fail = fake_fault(&d->fail_ticket_after);
    if (!fail && op->kind == FAKE_OP_D2H)
        memcpy(op->host, op->chunk->mem + op->off, op->n);
    else if (!fail)
        memmove(op->chunk->mem + op->off, op->host, op->n);
    if (!fail && op->slot)
        atomic_fetch_add(op->kind == FAKE_OP_H2D ? &d->slot_writes : &d->slot_reads, 1);
    op->done = 1;
    op->failed = fail;
    if (fail && !op->ticketed && !l->error)
        l->error = VAST_PC_ERR_TRANSFER;
}

/* Lock held: which lane's head runs next, when both have one. */
static int pick(struct fake_lanes *l)
{
    int a = l->head[ORDERED] != NULL, b = l->head[UNORDERED] != NULL;
    if (!(a && b))
        return a ? ORDERED : UNORDERED;
    if (l->order == FAKE_H2D_FIRST)
        return ORDERED;
    if (l->order == FAKE_D2H_FIRST)
        return UNORDERED;
    l->rng = l->rng * 6364136223846793005ull + 1442695040888963407ull;
    return (int)((l->rng >> 33) & 1);
}

/* Lock held, some lane not empty. */
static void run_next(struct fake_device *d)
{
    struct fake_lanes *l = d->lanes;
    int lane = pick(l);
    struct fake_op *op = l->head[lane];
    l->head[lane] = op->next;
    if (!op->next)
        l->tail[lane] = NULL;
    l->pending[lane]--;
    run_op(d, op);
    if (!op->ticketed)
        free(op);
}

static void note_max(_Atomic unsigned long *max, unsigned long v)
{
    unsigned long m = atomic_load(max);
    while (v > m && !atomic_compare_exchange_weak(max, &m, v))
        ;
}

int fake_lanes_submit(struct fake_device *d, int unordered, enum fake_op_kind kind,
                      struct fake_chunk *chunk, size_t off, void *host, size_t n, int slot,
                      void **ticket)
{
    struct fake_lanes *l = d->lanes;
    struct fake_op *op = calloc(1, sizeof *op);
    if (!op)
        return VAST_PC_ERR_HOST_MEMORY;
    *op = (struct fake_op){.kind = kind, .ticketed = ticket != NULL, .slot = slot,
                           .chunk = chunk, .off = off, .n = n, .host = host};
    int lane = unordered ? UNORDERED : ORDERED;
    pthread_mutex_lock(&l->lock);
    if (lane == ORDERED && kind == FAKE_OP_H2D && l->pending[UNORDERED])
        atomic_fetch_add(&l->loads_beside_writebacks, 1);
    if (l->tail[lane])
        l->tail[lane]->next = op;
    else
        l->head[lane] = op;
    l->tail[lane] = op;
    l->pending[lane]++;
    if (lane == UNORDERED)
        note_max(&l->max_unordered_pending, l->pending[lane]);
    if (slot) {
        long out = atomic_fetch_add(&d->tickets_out, 1) + 1;
        long max = atomic_load(&d->max_tickets_out);
        while (out > max && !atomic_compare_exchange_weak(&d->max_tickets_out, &max, out))
            ;
    }
    pthread_mutex_unlock(&l->lock);
    if (ticket)
        *ticket = op;
    return VAST_PC_OK;
}

int fake_lanes_wait(struct fake_device *d)
{
    struct fake_lanes *l = d->lanes;
    pthread_mutex_lock(&l->lock);
    while (l->head[ORDERED] || l->head[UNORDERED])
        run_next(d);
    int rc = l->error;
    l->error = VAST_PC_OK;
    pthread_mutex_unlock(&l->lock);
    return rc;
}

int fake_lanes_wait_ticket(struct fake_device *d, void *ticket)
{
    struct fake_lanes *l = d->lanes;
    struct fake_op *op = ticket;
    pthread_mutex_lock(&l->lock);
    while (!op->done)
        run_next(d);
    if (op->slot)
        atomic_fetch_sub(&d->tickets_out, 1);
    pthread_mutex_unlock(&l->lock);
    int failed = op->failed;
    free(op);
    return failed ? VAST_PC_ERR_TRANSFER : VAST_PC_OK;
}

void fake_lanes_fini(struct fake_device *d)
{
    struct fake_lanes *l = d->lanes;
    if (!l)
        return;
    fake_lanes_wait(d); /* a ticketed leftover is the caller's leak, as on a real device */
    pthread_mutex_destroy(&l->lock);
    free(l);
    d->lanes = NULL;
}

/* ---------- the duplex method table ---------- */

static int f_read_unordered(void *dev, vast_dev_chunk src, size_t off, void *host, size_t n,
                            vast_host_pin pin, void **ticket)
{
    struct fake_device *d = dev;
    struct fake_chunk *c = src;
    int rc;
    *ticket = NULL;
    if (!d->lanes)
        return VAST_PC_ERR_UNSUPPORTED;
    if (fake_read_begin(d, c, off, host, n, pin, &rc)) /* staged: complete on return, like devops_opencl.c */
        return rc;
    atomic_fetch_add(&d->lanes->unordered_reads, 1);
    return fake_lanes_submit(d, 1, FAKE_OP_D2H, c, off, host, n, 0, ticket);
}

static int f_wait_read(void *dev, void *ticket)
{
    return ticket ? fake_lanes_wait_ticket(dev, ticket) : VAST_PC_OK;
}

static struct vast_device_ops duplex_ops;
static pthread_once_t duplex_once = PTHREAD_ONCE_INIT;

static void make_duplex_ops(void)
{
    duplex_ops = fake_device_ops;
    duplex_ops.name = "fake-duplex";
    duplex_ops.read_unordered = f_read_unordered;
    duplex_ops.wait_ticket = f_wait_read;
}

const struct vast_device_ops *fake_duplex_ops(void)
{
    pthread_once(&duplex_once, make_duplex_ops);
    return &duplex_ops;
}
