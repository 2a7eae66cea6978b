/* fake_device.h: a struct vast_device_ops over host memory for the page cache unit tests.
 * Chunks are malloc'ed and poisoned (0xA5) so a page used before it is loaded shows up, and
 * poisoned again where the pool discards frames;
 * every transfer is counted; writes, reads and allocations can be made to fail after N
 * successful calls (fault injection). Synchronous, thread-safe (atomic counters). pin_host
 * can fail after N pins too, and calls an optional hook first (tests of the background
 * pinner count pins per granule and hold the worker inside a pin through it).
 * It also offers struct vast_staging_ops (fake_staging_ops) and, once staging is enabled,
 * refuses to pin and stages unpinned transfers like devops_opencl.c. Its ticketed slot
 * transfers are deferred: the bytes move when the ticket is waited for, so staging that
 * touched a slot before waiting for its transfer would move wrong bytes and fail the tests. */
#ifndef VAST_TEST_FAKE_DEVICE_H
#define VAST_TEST_FAKE_DEVICE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include "devops.h"
#include "staging.h"

struct vast_pool;

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
    _Atomic long fail_pin_after;     /* pin_host fails (like no_pin) once it reaches 0 */
    _Atomic unsigned long pin_calls; /* every pin_host call, refused ones included */
    /* Called by pin_host on every call before it decides (any thread; NULL: none). */
    void (*on_pin)(struct fake_device *d, void *host, size_t bytes);
    void *on_pin_ctx;
    /* staging */
    int no_pin;                      /* pin_host fails */
    void *pin_domain;                /* what pin_domain returns (NULL: pins serve this device only) */
    _Atomic unsigned long pinned_writes; /* writes given a pin */
    struct vast_staging *staging;    /* unpinned write/read go through it (may decline) */
    _Atomic long fail_ticket_after;  /* a slot transfer fails when its ticket is waited for */
    _Atomic long fail_slot_pin_after;
    _Atomic unsigned long slot_writes, slot_reads, slot_pins, slot_unpins;
    _Atomic long tickets_out;        /* slot transfers issued and not yet waited for */
    _Atomic long max_tickets_out;    /* most ever at once (the ring overlapped transfers) */
    struct fake_lanes *lanes;        /* duplex model (below); NULL: synchronous */
    /* discard: the range is poisoned again (0xA5), so a frame discarded while it still held a
     * page shows up as corrupt data; calls and bytes counted. */
    _Atomic unsigned long discards, discard_bytes;
};

extern const struct vast_device_ops fake_device_ops;
extern const struct vast_staging_ops fake_staging_ops;

void fake_device_init(struct fake_device *d);
void fake_device_reset_counts(struct fake_device *d);
/* Stop pinning and stage unpinned transfers through a staging object over this device. */
int fake_device_enable_staging(struct fake_device *d, const struct vast_staging_config *cfg);
/* Destroys the staging object, if any. */
void fake_device_fini(struct fake_device *d);

/* d initialised and a pool over it (fake_device_ops): `frames` frames of `page` bytes, in
 * chunks of at most `chunk_frames`; NULL when the pool cannot be made. */
struct vast_pool *fake_pool_open(struct fake_device *d, size_t page, size_t frames, size_t chunk_frames);

/* A cmocka group tear-down for programs that used the host copy pool: its threads end. */
int fake_host_copy_teardown(void **state);
/* Device memory of a frame location (tests play "kernel" through it). */
unsigned char *fake_chunk_mem(vast_dev_chunk chunk);
/* Device memory of frame f of a pool over the fake device. */
unsigned char *fake_frame_mem(const struct vast_pool *pool, uint32_t f);

/* ---------- duplex: two deferred lanes (fake_lanes.c) ----------
 * fake_device_enable_lanes models devops_opencl.c's two queues, as hostile as devops.h lets
 * a device be. Every transfer is deferred: write, read, copy and staging's slot transfers go
 * on the ordered lane, read_unordered (fake_duplex_ops() only) on the unordered lane, each
 * lane in issue order, and nothing runs until someone must wait for it (wait(): both lanes;
 * a ticket: its lane up to it). Then, while both lanes have work, their heads run in the
 * order `order` picks, which nothing on the device constrains (devops.h: the page cache
 * orders the lanes only from the host, through tickets):
 *   FAKE_H2D_FIRST: the ordered lane (the loads) first: a load issued before the write-back
 *     reading its frame was waited for lands first, and the write-back saves the new bytes;
 *   FAKE_D2H_FIRST: the unordered lane (the write-backs) first: a write-back issued before an
 *     earlier load or update of its frame was waited for reads the old bytes;
 *   FAKE_RANDOM: a seeded random choice at every step.
 * Bytes move when an operation runs, host bytes included, so a buffer touched before its
 * transfer was waited for shows up too. Failures can be injected when an operation runs
 * (fail_run_*: -1 never, else after N more of that direction); a failed un-ticketed one is
 * reported by the next wait() (first error wins), a ticketed one by its ticket only, as
 * OpenCL's clFinish does not reliably report a failed command's status. Thread-safe (one
 * mutex; whoever waits runs every thread's operations, as a device would). */
enum fake_order { FAKE_H2D_FIRST, FAKE_D2H_FIRST, FAKE_RANDOM };

struct fake_op;
struct fake_lanes {
    pthread_mutex_t lock;            /* everything below but the atomics */
    enum fake_order order;
    uint64_t rng;
    struct fake_op *head[2], *tail[2]; /* [0] ordered, [1] unordered */
    size_t pending[2];
    int error;                       /* first failure of an un-ticketed op since wait() */
    _Atomic long fail_run_h2d_after, fail_run_d2h_after;
    _Atomic unsigned long unordered_reads;     /* read_unordered calls (direct ones) */
    _Atomic unsigned long loads_beside_writebacks; /* h2d issued while an unordered read pended */
    _Atomic unsigned long max_unordered_pending;
};

/* The fake's ops plus read_unordered and wait_ticket; use with lanes enabled. */
const struct vast_device_ops *fake_duplex_ops(void);
int fake_device_enable_lanes(struct fake_device *d, enum fake_order order, unsigned seed);
/* Operations issued and not yet run, both lanes (0 whenever nothing is in flight). */
size_t fake_lanes_pending(struct fake_device *d);
const char *fake_order_name(enum fake_order order);

#endif
