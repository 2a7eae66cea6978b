/* fake_device.h: a struct vast_device_ops over host memory for the page cache unit tests.
 * Chunks are malloc'ed and poisoned (0xA5) so a page used before it is loaded shows up;
 * every transfer is counted; writes, reads and allocations can be made to fail after N
 * successful calls (fault injection). Synchronous, thread-safe (atomic counters).
 * It also offers struct vast_staging_ops (fake_staging_ops) and, once staging is enabled,
 * refuses to pin and stages unpinned transfers like devops_opencl.c. Its ticketed slot
 * transfers are deferred: the bytes move when the ticket is waited for, so staging that
 * touched a slot before waiting for its transfer would move wrong bytes and fail the tests. */
#ifndef VAST_TEST_FAKE_DEVICE_H
#define VAST_TEST_FAKE_DEVICE_H

#include <stdatomic.h>
#include <stddef.h>
#include "devops.h"
#include "staging.h"

struct fake_chunk {
    unsigned char *mem;
    size_t size;
};

struct fake_device {
    size_t max_alloc;                /* alloc_chunk fails above this (0: no limit) */
    _Atomic long fail_write_after;   /* < 0: never; else fail when it reaches 0 */
    _Atomic long fail_read_after;
    _Atomic long fail_alloc_after;
    _Atomic unsigned long writes, reads, copies, fills, allocs, frees, pins, unpins, waits;
    _Atomic unsigned long write_bytes, read_bytes;
    _Atomic size_t alloc_sizes[16];  /* first 16 chunk sizes */
    /* staging */
    int no_pin;                      /* pin_host fails */
    struct vast_staging *staging;    /* unpinned write/read go through it (may decline) */
    _Atomic long fail_ticket_after;  /* a slot transfer fails when its ticket is waited for */
    _Atomic long fail_slot_alloc_after;
    _Atomic unsigned long slot_writes, slot_reads, slot_allocs, slot_frees;
    _Atomic long tickets_out;        /* slot transfers issued and not yet waited for */
    _Atomic long max_tickets_out;    /* most ever at once (the ring overlapped transfers) */
};

extern const struct vast_device_ops fake_device_ops;
extern const struct vast_staging_ops fake_staging_ops;

void fake_device_init(struct fake_device *d);
void fake_device_reset_counts(struct fake_device *d);
/* Stop pinning and stage unpinned transfers through a staging object over this device. */
int fake_device_enable_staging(struct fake_device *d, const struct vast_staging_config *cfg);
/* Destroys the staging object, if any. */
void fake_device_fini(struct fake_device *d);
/* Device memory of a frame location (tests play "kernel" through it). */
unsigned char *fake_chunk_mem(vast_dev_chunk chunk);

#endif
