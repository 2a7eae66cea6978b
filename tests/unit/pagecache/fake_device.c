/* fake_device.c: see fake_device.h. */
#include "fake_device.h"

#include <stdlib.h>
#include <string.h>

void fake_device_init(struct fake_device *d)
{
    memset(d, 0, sizeof *d);
    atomic_store(&d->fail_write_after, -1);
    atomic_store(&d->fail_read_after, -1);
    atomic_store(&d->fail_alloc_after, -1);
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
}

unsigned char *fake_chunk_mem(vast_dev_chunk chunk) { return ((struct fake_chunk *)chunk)->mem; }

/* Fault countdown: -1 never fails; n > 0 lets n calls pass; 0 fails (and stays 0). */
static int fault(_Atomic long *counter)
{
    long v = atomic_load(counter);
    while (v > 0 && !atomic_compare_exchange_weak(counter, &v, v - 1))
        ;
    return v == 0;
}

static int f_alloc(void *dev, size_t bytes, vast_dev_chunk *out)
{
    struct fake_device *d = dev;
    if (fault(&d->fail_alloc_after) || (d->max_alloc && bytes > d->max_alloc))
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
    (void)pin;
    struct fake_device *d = dev;
    struct fake_chunk *c = dst;
    if (fault(&d->fail_write_after) || off + n > c->size)
        return VAST_PC_ERR_TRANSFER;
    memcpy(c->mem + off, host, n);
    atomic_fetch_add(&d->writes, 1);
    atomic_fetch_add(&d->write_bytes, n);
    return VAST_PC_OK;
}

static int f_read(void *dev, vast_dev_chunk src, size_t off, void *host, size_t n,
                  vast_host_pin pin)
{
    (void)pin;
    struct fake_device *d = dev;
    struct fake_chunk *c = src;
    if (fault(&d->fail_read_after) || off + n > c->size)
        return VAST_PC_ERR_TRANSFER;
    memcpy(host, c->mem + off, n);
    atomic_fetch_add(&d->reads, 1);
    atomic_fetch_add(&d->read_bytes, n);
    return VAST_PC_OK;
}

static int f_copy(void *dev, vast_dev_chunk dst, size_t doff, vast_dev_chunk src, size_t soff,
                  size_t n)
{
    struct fake_device *d = dev;
    memmove(((struct fake_chunk *)dst)->mem + doff, ((struct fake_chunk *)src)->mem + soff, n);
    atomic_fetch_add(&d->copies, 1);
    return VAST_PC_OK;
}

static int f_pin(void *dev, void *host, size_t n, vast_host_pin *out)
{
    (void)n;
    struct fake_device *d = dev;
    atomic_fetch_add(&d->pins, 1);
    *out = host; /* any non-NULL handle */
    return VAST_PC_OK;
}

static void f_unpin(void *dev, vast_host_pin pin)
{
    (void)pin;
    atomic_fetch_add(&((struct fake_device *)dev)->unpins, 1);
}

static int f_wait(void *dev)
{
    atomic_fetch_add(&((struct fake_device *)dev)->waits, 1);
    return VAST_PC_OK;
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
    .wait = f_wait,
};
