/* staging.c: the staging engine (see staging.h): a ring of pinned slots and a copy pool.
 * Invariants, under s->lock: a slot holds a ticket exactly while its device transfer may still
 * be running, and is neither filled nor read by the host until that ticket has been waited
 * for; every call waits for all the tickets it issued before it returns (so between calls
 * in_flight is 0, errors belong to the call that caused them, and a slot is never freed or
 * reused under a running transfer). Slots are used round robin; the ring and the copy threads
 * are made once, on the first staged call, and a failure to make them is final (later calls
 * are declined and go direct). */
#include "staging.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../base/clock.h"
#include "../base/trace.h"
#include "backing.h"
#include "copypool.h"

struct slot {
    void *host;
    vast_host_pin pin;
    void *ticket; /* device transfer not yet waited for, or NULL */
};

struct vast_staging {
    const struct vast_staging_ops *ops;
    void *dev;
    struct vast_staging_config cfg; /* resolved */
    pthread_mutex_t lock;           /* everything below except stats: one staged call at a time */
    int ready, broken;
    struct slot *slots;             /* cfg.slots once ready, within ring */
    unsigned nslots;                /* slots pinned */
    char *ring;                     /* the slots' memory, ring_bytes, or NULL */
    size_t ring_bytes;
    struct vast_copy_pool *copy;
    unsigned in_flight;
    uint64_t wait_ns, copy_ns;      /* this call's time waiting for tickets and copying (trace) */
    struct {
        _Atomic uint64_t transfers, bytes, slot_transfers, failures, declined;
    } stats;
};

unsigned pagecache_staging_default_threads(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        return 1;
    return cores < 16 ? (unsigned)cores : 16u;
}

static void resolve_config(const struct vast_staging_config *in, struct vast_staging_config *c)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    *c = in ? *in : (struct vast_staging_config){0};
    if (c->slot_bytes == 0)
        c->slot_bytes = VAST_STAGING_DEFAULT_SLOT;
    if (c->slot_bytes > SIZE_MAX / 2)
        c->slot_bytes = SIZE_MAX / 2;
    c->slot_bytes = (c->slot_bytes + page - 1) / page * page;
    if (c->slots == 0)
        c->slots = VAST_STAGING_DEFAULT_SLOTS;
    if (c->slots < 2)
        c->slots = 2;
    if (c->threads == 0)
        c->threads = pagecache_staging_default_threads();
    if (c->threads > VAST_STAGING_MAX_THREADS)
        c->threads = VAST_STAGING_MAX_THREADS;
    if (c->direct_below == 0)
        c->direct_below = VAST_STAGING_DEFAULT_DIRECT_BELOW;
}

int pagecache_create_staging(const struct vast_staging_ops *ops, void *dev,
                             const struct vast_staging_config *cfg, struct vast_staging **out)
{
    if (!ops || !ops->pin_slot || !ops->unpin_slot || !ops->write || !ops->read ||
        !ops->wait_ticket || !out)
        return VAST_PC_ERR_INVALID;
    VAST_PC_NEW(struct vast_staging, s);
    s->ops = ops;
    s->dev = dev;
    resolve_config(cfg, &s->cfg);
    pthread_mutex_init(&s->lock, NULL);
    *out = s;
    return VAST_PC_OK;
}

/* Lock held (or no other user): unpins the slots pinned so far, unmaps the ring, joins the
 * copy threads. */
static void free_ring(struct vast_staging *s)
{
    for (unsigned i = 0; i < s->nslots; i++)
        s->ops->unpin_slot(s->dev, s->slots[i].pin);
    free(s->slots);
    s->slots = NULL;
    s->nslots = 0;
    if (s->ring)
        munmap(s->ring, s->ring_bytes);
    s->ring = NULL;
    pagecache_destroy_copy_pool(s->copy);
    s->copy = NULL;
}

void pagecache_destroy_staging(struct vast_staging *s)
{
    if (!s)
        return;
    free_ring(s);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

void pagecache_staging_config(const struct vast_staging *s, struct vast_staging_config *out)
{
    *out = s->cfg;
}

/* Lock held: makes the copy threads and the ring on first use. The slots are one mapping
 * (THP-advised, like a store) committed by the copy threads before the device pins each slot:
 * on the H200 each slot's memset on one thread took 3.7 ms of the ring's 13.5-15.3 ms, its pin
 * 0.4-0.8 ms, and the first staged transfer waited for all of it; made so, 4.9 ms
 * (samples/results/h200-2026-11-29-staging, s2 and s3). */
static int ring_ready(struct vast_staging *s)
{
    if (s->ready)
        return VAST_PC_OK;
    if (s->broken)
        return VAST_PC_ERR_UNSUPPORTED;
    uint64_t t0 = vast_now_ns();
    size_t sb = s->cfg.slot_bytes;
    int rc = sb <= SIZE_MAX / s->cfg.slots ? VAST_PC_OK : VAST_PC_ERR_HOST_MEMORY;
    if (rc == VAST_PC_OK && (s->slots = calloc(s->cfg.slots, sizeof *s->slots)) == NULL)
        rc = VAST_PC_ERR_HOST_MEMORY;
    if (rc == VAST_PC_OK)
        rc = pagecache_create_copy_pool(s->cfg.threads, &s->copy);
    if (rc == VAST_PC_OK) {
        int huge;
        void *ring = pagecache_map_huge(sb * s->cfg.slots, &huge);
        if (ring == MAP_FAILED) {
            rc = VAST_PC_ERR_HOST_MEMORY;
        } else {
            static const char zero[4096];
            s->ring = ring;
            s->ring_bytes = sb * s->cfg.slots;
            pagecache_fill_parallel(s->copy, ring, s->ring_bytes, zero, sizeof zero);
        }
    }
    while (rc == VAST_PC_OK && s->nslots < s->cfg.slots) {
        struct slot *sl = &s->slots[s->nslots];
        sl->host = s->ring + s->nslots * sb;
        rc = s->ops->pin_slot(s->dev, sl->host, sb, &sl->pin);
        if (rc == VAST_PC_OK)
            s->nslots++;
    }
    if (rc != VAST_PC_OK) {
        free_ring(s);
        s->broken = 1;
        return VAST_PC_ERR_UNSUPPORTED;
    }
    s->ready = 1;
    vast_trace_span(VAST_TRACK_TRANSFER, "staging ring", t0, vast_now_ns(), "slots and copy threads made");
    return VAST_PC_OK;
}

/* Lock held: waits for the slot's transfer, if any. */
static int retire(struct vast_staging *s, struct slot *sl)
{
    if (!sl->ticket)
        return VAST_PC_OK;
    uint64_t t0 = vast_now_ns();
    int rc = s->ops->wait_ticket(s->dev, sl->ticket);
    s->wait_ns += vast_now_ns() - t0;
    sl->ticket = NULL;
    s->in_flight--;
    return rc ? VAST_PC_ERR_TRANSFER : VAST_PC_OK;
}

/* Lock held: waits for every slot; the first error wins. */
static int drain(struct vast_staging *s)
{
    int rc = VAST_PC_OK;
    for (unsigned i = 0; i < s->nslots; i++) {
        int r = retire(s, &s->slots[i]);
        if (rc == VAST_PC_OK)
            rc = r;
    }
    return rc;
}

/* Lock held: starts slot <-> device [off, off+len) on an idle slot. */
static int issue(struct vast_staging *s, struct slot *sl, int to_device, vast_dev_chunk chunk,
                 size_t off, size_t len)
{
    void *t = NULL;
    int rc = to_device ? s->ops->write(s->dev, chunk, off, sl->host, len, sl->pin, &t)
                       : s->ops->read(s->dev, chunk, off, sl->host, len, sl->pin, &t);
    if (rc)
        return VAST_PC_ERR_TRANSFER;
    sl->ticket = t;
    s->in_flight++;
    atomic_fetch_add(&s->stats.slot_transfers, 1);
    return VAST_PC_OK;
}

/* Lock held. Fill slot k while slot k-1 (and older ones) travel to the device. */
static int write_through_ring(struct vast_staging *s, vast_dev_chunk dst, size_t dst_off,
                              const char *host, size_t bytes)
{
    size_t sb = s->cfg.slot_bytes;
    int rc = VAST_PC_OK;
    for (size_t done = 0, k = 0; done < bytes && rc == VAST_PC_OK; k++) {
        struct slot *sl = &s->slots[k % s->nslots];
        size_t len = bytes - done < sb ? bytes - done : sb;
        rc = retire(s, sl);
        if (rc == VAST_PC_OK) {
            uint64_t t0 = vast_now_ns();
            pagecache_copy_parallel(s->copy, sl->host, host + done, len);
            s->copy_ns += vast_now_ns() - t0;
            rc = issue(s, sl, 1, dst, dst_off + done, len);
        }
        done += len;
    }
    int drc = drain(s);
    return rc ? rc : drc;
}

/* Lock held. Every slot reads ahead; slot k is copied out while k+1.. arrive, then refilled
 * with piece k + nslots. */
static int read_through_ring(struct vast_staging *s, vast_dev_chunk src, size_t src_off,
                             char *host, size_t bytes)
{
    size_t sb = s->cfg.slot_bytes, pieces = (bytes + sb - 1) / sb, issued = 0;
    int rc = VAST_PC_OK;
    for (; issued < pieces && issued < s->nslots && rc == VAST_PC_OK; issued++) {
        size_t off = issued * sb;
        rc = issue(s, &s->slots[issued], 0, src, src_off + off,
                   bytes - off < sb ? bytes - off : sb);
    }
    for (size_t k = 0; k < pieces && rc == VAST_PC_OK; k++) {
        struct slot *sl = &s->slots[k % s->nslots];
        size_t off = k * sb, len = bytes - off < sb ? bytes - off : sb;
        rc = retire(s, sl);
        if (rc == VAST_PC_OK) {
            uint64_t t0 = vast_now_ns();
            pagecache_copy_parallel(s->copy, host + off, sl->host, len);
            s->copy_ns += vast_now_ns() - t0;
        }
        if (rc == VAST_PC_OK && issued < pieces) {
            size_t next = issued++ * sb;
            rc = issue(s, sl, 0, src, src_off + next, bytes - next < sb ? bytes - next : sb);
        }
    }
    int drc = drain(s);
    return rc ? rc : drc;
}

static int staged(struct vast_staging *s, int to_device, vast_dev_chunk chunk, size_t off,
                  void *host, size_t bytes)
{
    if (!s || bytes == 0 || bytes < s->cfg.direct_below) {
        if (s)
            atomic_fetch_add(&s->stats.declined, 1);
        return VAST_PC_ERR_UNSUPPORTED;
    }
    uint64_t t0 = vast_now_ns();
    pthread_mutex_lock(&s->lock);
    uint64_t t1 = vast_now_ns();
    int rc = ring_ready(s);
    uint64_t t2 = vast_now_ns();
    s->wait_ns = s->copy_ns = 0;
    if (rc == VAST_PC_OK)
        rc = to_device ? write_through_ring(s, chunk, off, host, bytes)
                       : read_through_ring(s, chunk, off, host, bytes);
    uint64_t wait_ns = s->wait_ns, copy_ns = s->copy_ns;
    pthread_mutex_unlock(&s->lock);
    if (vast_trace_on()) {
        char detail[128];
        snprintf(detail, sizeof detail, "%zu KiB; ms: %.3f lock, %.3f copying, %.3f waiting", bytes >> 10,
                 (double)(t1 - t0) * 1e-6, (double)copy_ns * 1e-6, (double)wait_ns * 1e-6);
        vast_trace_span(VAST_TRACK_TRANSFER, to_device ? "staged write" : "staged read", t2, vast_now_ns(), detail);
    }
    if (rc == VAST_PC_OK) {
        atomic_fetch_add(&s->stats.transfers, 1);
        atomic_fetch_add(&s->stats.bytes, bytes);
    } else if (rc == VAST_PC_ERR_TRANSFER) {
        atomic_fetch_add(&s->stats.failures, 1);
    } else {
        atomic_fetch_add(&s->stats.declined, 1);
    }
    return rc;
}

int pagecache_staging_write(struct vast_staging *s, vast_dev_chunk dst, size_t dst_off,
                            const void *host, size_t bytes)
{
    return staged(s, 1, dst, dst_off, (void *)host, bytes);
}

int pagecache_staging_read(struct vast_staging *s, vast_dev_chunk src, size_t src_off,
                           void *host, size_t bytes)
{
    return staged(s, 0, src, src_off, host, bytes);
}

void pagecache_get_staging_stats(struct vast_staging *s, struct vast_staging_stats *out)
{
    out->transfers = atomic_load(&s->stats.transfers);
    out->bytes = atomic_load(&s->stats.bytes);
    out->slot_transfers = atomic_load(&s->stats.slot_transfers);
    out->failures = atomic_load(&s->stats.failures);
    out->declined = atomic_load(&s->stats.declined);
    pthread_mutex_lock(&s->lock);
    out->slots = s->nslots;
    out->threads = s->cfg.threads;
    out->slot_bytes = s->cfg.slot_bytes;
    out->in_flight = s->in_flight;
    pthread_mutex_unlock(&s->lock);
}
