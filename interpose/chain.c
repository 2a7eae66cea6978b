/*
 * chain.c: identical launches that follow each other on an in-order queue, over data above the
 * budget, run partition by partition together: partition 1 of every launch, then partition 2
 * of every launch, and so on, so their data moves once rather than once per launch. An
 * application that runs `y = a * x + y` ten times over arrays four times the budget otherwise
 * has VAST load and write back everything ten times (9.55 GiB moved for 0.95 GiB of data on
 * the H200), where a hand-chunked program runs the ten iterations per chunk.
 *
 * When it is the same answer: launches L1..Lk of one in-order queue, each the next command of
 * the queue after the one before (no command of any kind between, no wait list), with the
 * same kernel object, NDRange and argument values (so the same virtual space, the same
 * plan, the same page table for each partition), planned with exact page sets (no fault to
 * retry, nothing snapshotted) and no partition of resumable iteration ranges; and the plan's
 * partitions are disjoint wherever a launch writes: every page of a writable buffer is in at
 * most one partition's set, and no two buffer arguments overlap where one is writable
 * (vast_chain_may_carry, and vast_chain_disjoint at the first partition two launches share).
 * Then partition i of any launch touches only pages no other partition touches, except pages
 * no launch writes, so running Lj's partition i before Lh's partition i' (h < j, i' != i)
 * reads and writes exactly what it would after it: each partition's launches still run in
 * launch order, and partitions of one launch were unordered anyway.
 * A virtual buffer passed as __constant is copied once, at the leader's open (paged.c): the
 * copy holds for every member, since nothing between them writes it and a launch that writes
 * a buffer it reads through __constant races with itself already.
 *
 * How: submission (vast_chain_submitted, under the executor's submission lock, which orders
 * every virtual command of the queue) puts each launch either in the queue's open chain, as a
 * member, or at the head of a new one. The leader's run (launch.c, pipeline.c) carries the
 * chain when its plan fits: each partition of its first pass runs the paged kernel once for
 * the leader and once per member so far, with one page table; a launch submitted while the
 * first pass runs joins at the next partition and gets the partitions it missed in a second
 * pass. The leader's run ends after both passes, so its event completes after all of the
 * members' work; each member's own run (after the leader's event, queue order) only reports
 * the result. A leader that cannot carry its chain ends it, and its members run on their own.
 *
 * On a merged device (merge.c) the leader closes the chain before its members' shares start
 * (vast_chain_close_all): they claim partitions out of order, so there is no first pass a
 * launch could join in the middle of; each partition runs every launch of the chain on the
 * member that claims it, which writes pages no other partition touches (disjoint, as above).
 *
 * Principal entry points: vast_chain_submitted, vast_chain_may_carry, vast_chain_disjoint,
 * vast_chain_take, vast_chain_end, vast_chain_ran. VAST_CHAIN=0 turns it off (measuring).
 * Invariants: a chain takes members only while its leader's first pass has not ended; a
 * member joins with the number of partitions taken so far, and runs every partition once, in
 * its launch order among the chain; members never run before their leader's event.
 * Locks: one lock for every chain (chain_lock), taken under the executor's submission lock or
 * alone; nothing is called under it. A command racing on another thread with real commands
 * enqueued on the same queue (counted after their enqueue) may be ordered before them: the
 * order of unsynchronised enqueues from two threads is the application's to fix anyway.
 * See also: pipeline.c (vast_paged_run, the passes), launch.c (run_paged, vast_launch_execute),
 * executor.c (the submission hook), tests/e2e/partition/test_chain.c.
 */
#include "chain.h"

#include "../base/config.h"
#include "../base/log.h"
#include "check.h"
#include "launch_int.h"
#include "pagecache.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHAIN_MAX 64 /* members per chain: a leader's run is bounded, so other queues get the device */

struct member {
    size_t join;  /* partitions of the leader's first pass taken before it joined */
    bool ran;     /* the leader ran it (every partition, or until an error) */
    cl_int result;
};

struct vast_chain {
    int refs;                     /* the queue's, the leader's, each member's */
    bool closed;                  /* takes no member any more */
    struct vast_launch_cmd *leader; /* valid while not closed */
    uint64_t seq, real;           /* the queue's counts after the last launch of the chain */
    size_t steps;                 /* partitions the leader's first pass has taken */
    size_t n, cap;                /* members, and room for them in m (grown as they join: every
                                   * launch of an in-order queue makes a chain at submission) */
    struct member *m;
};

static pthread_mutex_t chain_lock = PTHREAD_MUTEX_INITIALIZER;

/* chain_lock held: it takes no member any more, and forgets its leader (which may be freed). */
static void close_locked(struct vast_chain *c)
{
    c->closed = true;
    c->leader = NULL;
}

static void chain_unref(struct vast_chain *c)
{
    if (c != NULL && --c->refs == 0) {
        free(c->m);
        free(c);
    }
}

/* chain_lock held: room for one more member (false: none, it leads no more). */
static bool room_locked(struct vast_chain *c)
{
    if (c->n < c->cap)
        return true;
    size_t cap = c->cap ? 2 * c->cap : 4;
    struct member *m = cap <= CHAIN_MAX ? realloc(c->m, cap * sizeof *m) : NULL;
    if (m == NULL)
        return false;
    c->m = m;
    c->cap = cap;
    return true;
}

/* Whether b is a's launch again: the same kernel object, NDRange and argument values. */
static bool same_launch(const struct vast_launch_cmd *a, const struct vast_launch_cmd *b)
{
    if (a->kernel != b->kernel || a->dev != b->dev || a->sh.dims != b->sh.dims || a->num_args != b->num_args)
        return false;
    for (int d = 0; d < 3; d++)
        if (a->sh.offset[d] != b->sh.offset[d] || a->sh.global[d] != b->sh.global[d] ||
            a->sh.local[d] != b->sh.local[d])
            return false;
    for (cl_uint i = 0; i < a->num_args; i++) {
        const struct vast_arg *x = &a->args[i], *y = &b->args[i];
        if (x->set != y->set || x->size != y->size || x->vbuf != y->vbuf || x->held != y->held || x->svm != y->svm ||
            (x->value == NULL) != (y->value == NULL) || (x->value != NULL && memcmp(x->value, y->value, x->size) != 0))
            return false;
    }
    for (int i = 0; i < VAST_EXEC_INFOS; i++)
        if (a->exec[i].size != 0 || b->exec[i].size != 0)
            return false;
    return true;
}

void vast_chain_submitted(struct vast_launch_cmd *cmd, cl_command_queue q, uint64_t seq)
{
    if (!q->in_order || cmd->waits || !vast_config_get()->chain)
        return;
    uint64_t real = vast_queue_real_count(q);
    pthread_mutex_lock(&chain_lock);
    struct vast_chain *c = q->chain;
    if (c != NULL && !c->closed && c->seq + 1 == seq && c->real == real && same_launch(c->leader, cmd) &&
        room_locked(c)) {
        c->m[c->n] = (struct member){.join = c->steps};
        cmd->chain = c;
        cmd->chain_index = ++c->n;
        c->refs++;
        c->seq = seq;
        pthread_mutex_unlock(&chain_lock);
        return;
    }
    struct vast_chain *fresh = calloc(1, sizeof *fresh);
    if (fresh != NULL) {
        *fresh = (struct vast_chain){.refs = 2, .leader = cmd, .seq = seq, .real = real};
        cmd->chain = fresh;
        cmd->chain_index = 0;
        q->chain = fresh;
    } else {
        q->chain = NULL; /* no chain: the next launch starts one */
    }
    chain_unref(c);
    pthread_mutex_unlock(&chain_lock);
}

struct vast_chain *vast_chain_led(const struct vast_launch_cmd *cmd)
{
    return cmd->chain != NULL && cmd->chain_index == 0 ? cmd->chain : NULL;
}

bool vast_chain_may_carry(const struct vast_paged *r, const struct vast_partition *parts, size_t nparts)
{
    return vast_chain_led(r->cmd) != NULL && nparts >= 2 && r->sets_exact && !r->needs_restore && !r->sequential &&
           r->claim == NULL && !vast_plan_ranged(parts, nparts);
}

/* owner[vp] of vast_chain_disjoint: 1 + the partition whose set holds vp, OWNER_SHARED when
 * more than one does; `me` (1 + a partition) holds vp too. */
enum { OWNER_NONE = 0, OWNER_SHARED = -1 };
static void own(int32_t *owner, size_t vp, int32_t me)
{
    owner[vp] = owner[vp] == OWNER_NONE || owner[vp] == me ? me : OWNER_SHARED;
}

bool vast_chain_disjoint(const struct vast_paged *r, const struct vast_partition *parts, size_t nparts)
{
    for (size_t i = 0; i < r->nva; i++) /* a writable buffer overlapping another argument */
        for (size_t j = i + 1; j < r->nva; j++) {
            const struct vast_varg *a = &r->va[i], *b = &r->va[j];
            if ((a->writable || b->writable) && a->pc == b->pc && a->first < b->first + b->count &&
                b->first < a->first + a->count)
                return false;
        }
    int32_t *owner = calloc(r->pages ? r->pages : 1, sizeof *owner);
    if (owner == NULL)
        return false;
    bool fits = true;
    for (size_t i = 0; i < nparts && fits; i++) {
        const struct vast_partition *p = &parts[i];
        if (!(fits = p->count <= r->pool->nframes && i < INT32_MAX))
            break;
        int32_t me = (int32_t)i + 1;
        if (p->set != NULL) {
            for (size_t vp = 0; vp < r->pages; vp++)
                if (p->set[vp])
                    own(owner, vp, me);
        } else { /* packed (launch_int.h): its runs, the pages it holds */
            for (size_t k = 0; k < p->nruns; k++)
                for (size_t vp = p->runs[2 * k]; vp < p->runs[2 * k] + p->runs[2 * k + 1]; vp++)
                    own(owner, vp, me);
        }
    }
    for (size_t i = 0; i < r->nva && fits; i++)
        for (size_t k = 0; r->va[i].writable && k < r->va[i].count && fits; k++)
            fits = owner[r->va[i].va_page + k] != OWNER_SHARED;
    free(owner);
    return fits;
}

size_t vast_chain_take(struct vast_chain *c, size_t step)
{
    pthread_mutex_lock(&chain_lock);
    c->steps = step + 1;
    size_t n = c->n;
    pthread_mutex_unlock(&chain_lock);
    return 1 + n;
}

size_t vast_chain_close_pass(struct vast_chain *c)
{
    pthread_mutex_lock(&chain_lock);
    c->closed = true;
    size_t most = 0;
    for (size_t i = 0; i < c->n; i++)
        most = c->m[i].join > most ? c->m[i].join : most;
    pthread_mutex_unlock(&chain_lock);
    return most;
}

size_t vast_chain_again(struct vast_chain *c, size_t step)
{
    size_t k = 0;
    pthread_mutex_lock(&chain_lock);
    for (size_t i = 0; i < c->n; i++)
        k += c->m[i].join > step;
    pthread_mutex_unlock(&chain_lock);
    return k;
}

size_t vast_chain_close_all(struct vast_chain *c)
{
    pthread_mutex_lock(&chain_lock);
    c->closed = true;
    size_t n = c->n;
    pthread_mutex_unlock(&chain_lock);
    return 1 + n;
}

void vast_chain_end(struct vast_launch_cmd *cmd, bool carried, cl_int err)
{
    struct vast_chain *c = vast_chain_led(cmd);
    if (c == NULL)
        return;
    pthread_mutex_lock(&chain_lock);
    close_locked(c);
    for (size_t i = 0; carried && i < c->n; i++) {
        c->m[i].ran = true;
        c->m[i].result = err;
    }
    pthread_mutex_unlock(&chain_lock);
}

bool vast_chain_ran(const struct vast_launch_cmd *cmd, cl_int *result)
{
    struct vast_chain *c = cmd->chain;
    if (c == NULL || cmd->chain_index == 0)
        return false;
    pthread_mutex_lock(&chain_lock);
    bool ran = c->closed && c->m[cmd->chain_index - 1].ran;
    *result = c->m[cmd->chain_index - 1].result;
    pthread_mutex_unlock(&chain_lock);
    return ran;
}

void vast_chain_cmd_free(struct vast_launch_cmd *cmd)
{
    pthread_mutex_lock(&chain_lock);
    if (cmd->chain != NULL && cmd->chain_index == 0) /* a leader that did not run */
        close_locked(cmd->chain);
    chain_unref(cmd->chain);
    cmd->chain = NULL;
    pthread_mutex_unlock(&chain_lock);
}

void vast_chain_queue_free(cl_command_queue q)
{
    pthread_mutex_lock(&chain_lock);
    chain_unref(q->chain);
    q->chain = NULL;
    pthread_mutex_unlock(&chain_lock);
}
