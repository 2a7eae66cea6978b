/* fake_device.c: see fake_device.h. Once lanes are enabled, transfers are queued on
 * fake_lanes.c's deferred lanes instead of moving bytes at once. */
#include "fake_device.h"

#include <assert.h>
#include "fake_lanes.h"
#include "framepool.h"
#include "hostcopy.h"

#include <stdlib.h>
#include <string.h>

void fake_device_init(struct fake_device *d)
{
    memset(d, 0, sizeof *d);
    atomic_store(&d->fail_write_after, -1);
    atomic_store(&d->fail_read_after, -1);
    atomic_store(&d->fail_alloc_after, -1);
    atomic_store(&d->fail_pin_after, -1);
    atomic_store(&d->fail_ticket_after, -1);
    atomic_store(&d->fail_slot_pin_after, -1);
}

struct vast_pool *fake_pool_open(struct fake_device *d, size_t page, size_t frames, size_t chunk_frames)
{
    struct vast_pool *pool = NULL;
    fake_device_init(d);
    if (pagecache_create_pool(&fake_device_ops, d, frames * page, page, chunk_frames * page, &pool) != 0)
        return NULL;
    return pool;
}

int fake_host_copy_teardown(void **state)
{
    (void)state;
    pagecache_host_copy_shutdown();
    return 0;
}

int fake_device_enable_staging(struct fake_device *d, const struct vast_staging_config *cfg)
{
    d->no_pin = 1;
    return pagecache_create_staging(&fake_staging_ops, d, cfg, &d->staging);
}

void fake_device_fini(struct fake_device *d)
{
    pagecache_destroy_staging(d->staging);
    d->staging = NULL;
    fake_lanes_fini(d);
}

void fake_device_reset_counts(struct fake_device *d)
{
    atomic_store(&d->writes, 0);
    atomic_store(&d->reads, 0);
    atomic_store(&d->copies, 0);
    atomic_store(&d->fills, 0);
    atomic_store(&d->write_bytes, 0);
    atomic_store(&d->read_bytes, 0);
    atomic_store(&d->waits, 0);
    atomic_store(&d->slot_writes, 0);
    atomic_store(&d->slot_reads, 0);
}

unsigned char *fake_chunk_mem(vast_dev_chunk chunk) { return ((struct fake_chunk *)chunk)->mem; }

unsigned char *fake_frame_mem(const struct vast_pool *pool, uint32_t f)
{
    return fake_chunk_mem(pagecache_frame_chunk(pool, f)) + pagecache_frame_offset(pool, f);
}

int fake_fault(_Atomic long *counter)
{
    long v = atomic_load(counter);
    while (v > 0 && !atomic_compare_exchange_weak(counter, &v, v - 1))
        ;
    return v == 0;
}

static int f_alloc(void *dev, size_t bytes, vast_dev_chunk *out)
{
    struct fake_device *d = dev;
    if (fake_fault(&d->fail_alloc_after) || (d->max_alloc && bytes > d->max_alloc))
        return VAST_PC_ERR_DEVICE_MEMORY;
    struct fake_chunk *c = malloc(sizeof *c);
    c->mem = malloc(bytes);
    c->size = bytes;
    memset(c->mem, 0xA5, bytes);
    unsigned long i = atomic_fetch_add(&d->allocs, 1);
    if (i < 16)
        atomic_store(&d->alloc_sizes[i], bytes);
    *out = c;
    return VAST_PC_OK;
}

static void f_free(void *dev, vast_dev_chunk chunk)
{
    struct fake_device *d = dev;
    struct fake_chunk *c = chunk;
    atomic_fetch_add(&d->frees, 1);
    free(c->mem);
    free(c);
}

static int f_write(void *dev, vast_dev_chunk dst, size_t off, const void *host, size_t n,
                   vast_host_pin pin)
{
    struct fake_device *d = dev;
    struct fake_chunk *c = dst;
    if (!pin && d->staging) {
        int rc = pagecache_staging_write(d->staging, dst, off, host, n);
        if (rc != VAST_PC_ERR_UNSUPPORTED)
            return rc;
    }
    if (fake_fault(&d->fail_write_after) || off + n > c->size)
        return VAST_PC_ERR_TRANSFER;
    atomic_fetch_add(&d->writes, 1);
    atomic_fetch_add(&d->pinned_writes, pin != NULL);
    atomic_fetch_add(&d->write_bytes, n);
    if (d->lanes)
        return fake_lanes_submit(d, 0, FAKE_OP_H2D, c, off, (void *)host, n, 0, NULL);
    memcpy(c->mem + off, host, n);
    return VAST_PC_OK;
}

int fake_read_begin(struct fake_device *d, struct fake_chunk *c, size_t off, void *host, size_t n,
                    vast_host_pin pin, int *rc)
{
    if (!pin && d->staging) {
        *rc = pagecache_staging_read(d->staging, c, off, host, n);
        if (*rc != VAST_PC_ERR_UNSUPPORTED)
            return 1;
    }
    *rc = VAST_PC_ERR_TRANSFER;
    if (fake_fault(&d->fail_read_after) || off + n > c->size)
        return 1;
    atomic_fetch_add(&d->reads, 1);
    atomic_fetch_add(&d->read_bytes, n);
    return 0;
}

static int f_read(void *dev, vast_dev_chunk src, size_t off, void *host, size_t n,
                  vast_host_pin pin)
{
    struct fake_device *d = dev;
    struct fake_chunk *c = src;
    int rc;
    if (fake_read_begin(d, c, off, host, n, pin, &rc))
        return rc;
    if (d->lanes)
        return fake_lanes_submit(d, 0, FAKE_OP_D2H, c, off, host, n, 0, NULL);
    memcpy(host, c->mem + off, n);
    return VAST_PC_OK;
}

static int f_copy(void *dev, vast_dev_chunk dst, size_t doff, vast_dev_chunk src, size_t soff,
                  size_t n)
{
    struct fake_device *d = dev;
    atomic_fetch_add(&d->copies, 1);
    if (d->lanes)
        return fake_lanes_submit(d, 0, FAKE_OP_COPY, dst, doff,
                                 ((struct fake_chunk *)src)->mem + soff, n, 0, NULL);
    memmove(((struct fake_chunk *)dst)->mem + doff, ((struct fake_chunk *)src)->mem + soff, n);
    return VAST_PC_OK;
}

static int f_pin(void *dev, void *host, size_t n, vast_host_pin *out)
{
    struct fake_device *d = dev;
    atomic_fetch_add(&d->pin_calls, 1);
    if (d->on_pin)
        d->on_pin(d, host, n);
    if (d->no_pin || fake_fault(&d->fail_pin_after))
        return VAST_PC_ERR_UNSUPPORTED;
    atomic_fetch_add(&d->pins, 1);
    *out = host; /* any non-NULL handle */
    return VAST_PC_OK;
}

static void f_unpin(void *dev, vast_host_pin pin)
{
    (void)pin;
    atomic_fetch_add(&((struct fake_device *)dev)->unpins, 1);
}

static void *f_pin_domain(void *dev)
{
    return ((struct fake_device *)dev)->pin_domain;
}

static int f_wait(void *dev)
{
    struct fake_device *d = dev;
    atomic_fetch_add(&d->waits, 1);
    return d->lanes ? fake_lanes_wait(d) : VAST_PC_OK;
}

static void f_discard(void *dev, vast_dev_chunk chunk, size_t off, size_t bytes)
{
    struct fake_device *d = dev;
    struct fake_chunk *c = chunk;
    assert(off <= c->size && bytes <= c->size - off);
    memset(c->mem + off, 0xA5, bytes);
    atomic_fetch_add(&d->discards, 1);
    atomic_fetch_add(&d->discard_bytes, bytes);
}

const struct vast_device_ops fake_device_ops = {
    .name = "fake",
    .alloc_chunk = f_alloc,
    .free_chunk = f_free,
    .write = f_write,
    .read = f_read,
    .copy = f_copy,
    .fill = NULL,
    .pin_host = f_pin,
    .unpin_host = f_unpin,
    .pin_domain = f_pin_domain,
    .wait = f_wait,
    .discard = f_discard,
};

/* ---------- staging: pinned slots and deferred, ticketed slot transfers ---------- */

struct fake_ticket {
    int to_device;
    struct fake_chunk *chunk;
    size_t off, n;
    unsigned char *slot;
};

static int f_pin_slot(void *dev, void *host, size_t bytes, vast_host_pin *pin)
{
    struct fake_device *d = dev;
    if (fake_fault(&d->fail_slot_pin_after))
        return VAST_PC_ERR_UNSUPPORTED;
    assert(((uintptr_t)host & 4095) == 0);
    memset(host, 0x5A, bytes); /* the slot is committed and writable; its old bytes are junk */
    atomic_fetch_add(&d->slot_pins, 1);
    *pin = host;
    return VAST_PC_OK;
}

static void f_unpin_slot(void *dev, vast_host_pin pin)
{
    (void)pin;
    atomic_fetch_add(&((struct fake_device *)dev)->slot_unpins, 1);
}

static int f_slot_transfer(struct fake_device *d, int to_device, struct fake_chunk *c,
                           size_t off, void *slot, size_t n, void **ticket)
{
    if (fake_fault(to_device ? &d->fail_write_after : &d->fail_read_after) || off + n > c->size)
        return VAST_PC_ERR_TRANSFER;
    if (d->lanes) /* on the ordered lane, in order with everything else there */
        return fake_lanes_submit(d, 0, to_device ? FAKE_OP_H2D : FAKE_OP_D2H, c, off, slot, n,
                                 1, ticket);
    struct fake_ticket *t = malloc(sizeof *t);
    if (!t)
        return VAST_PC_ERR_HOST_MEMORY;
    *t = (struct fake_ticket){to_device, c, off, n, slot};
    long out = atomic_fetch_add(&d->tickets_out, 1) + 1;
    long max = atomic_load(&d->max_tickets_out);
    while (out > max && !atomic_compare_exchange_weak(&d->max_tickets_out, &max, out))
        ;
    *ticket = t;
    return VAST_PC_OK;
}

static int f_slot_write(void *dev, vast_dev_chunk dst, size_t off, const void *slot, size_t n,
                        vast_host_pin pin, void **ticket)
{
    (void)pin;
    return f_slot_transfer(dev, 1, dst, off, (void *)slot, n, ticket);
}

static int f_slot_read(void *dev, vast_dev_chunk src, size_t off, void *slot, size_t n,
                       vast_host_pin pin, void **ticket)
{
    (void)pin;
    return f_slot_transfer(dev, 0, src, off, slot, n, ticket);
}

/* The transfer happens now (see fake_device.h), unless fault injection fails it. */
static int f_wait_ticket(void *dev, void *ticket)
{
    struct fake_device *d = dev;
    if (d->lanes)
        return fake_lanes_wait_ticket(d, ticket);
    struct fake_ticket *t = ticket;
    int failed = fake_fault(&d->fail_ticket_after);
    if (!failed && t->to_device) {
        memcpy(t->chunk->mem + t->off, t->slot, t->n);
        atomic_fetch_add(&d->slot_writes, 1);
    } else if (!failed) {
        memcpy(t->slot, t->chunk->mem + t->off, t->n);
        atomic_fetch_add(&d->slot_reads, 1);
    }
    atomic_fetch_sub(&d->tickets_out, 1);
    free(t);
    return failed ? VAST_PC_ERR_TRANSFER : VAST_PC_OK;
}

const struct vast_staging_ops fake_staging_ops = {
    .pin_slot = f_pin_slot,
    .unpin_slot = f_unpin_slot,
    .write = f_slot_write,
    .read = f_slot_read,
    .wait_ticket = f_wait_ticket,
};
