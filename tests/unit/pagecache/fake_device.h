/* fake_device.h: a struct vast_device_ops over host memory for the page cache unit tests.
 * Chunks are malloc'ed and poisoned (0xA5) so a page used before it is loaded shows up;
 * every transfer is counted; writes, reads and allocations can be made to fail after N
 * successful calls (fault injection). Synchronous, thread-safe (atomic counters). */
#ifndef VAST_TEST_FAKE_DEVICE_H
#define VAST_TEST_FAKE_DEVICE_H

#include <stdatomic.h>
#include <stddef.h>
#include "devops.h"

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
};

extern const struct vast_device_ops fake_device_ops;

void fake_device_init(struct fake_device *d);
void fake_device_reset_counts(struct fake_device *d);
/* Device memory of a frame location (tests play "kernel" through it). */
unsigned char *fake_chunk_mem(vast_dev_chunk chunk);

#endif
