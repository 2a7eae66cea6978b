/* staging.h: host <-> device transfers of memory that cannot be pinned, through a ring of
 * pinned bounce buffers ("slots") and a small persistent pool of copy threads.
 * Host->device: slot k is filled by a memcpy split over the threads while the device
 * transfer of slot k-1 runs; device->host: the device fills slot k+1.. while the threads copy
 * slot k out. FACTS.md: pageable transfers run at ~7 GB/s, pinned at ~55 GB/s, and 1/2/4/16
 * threads copy pageable -> pinned at 10/20/34/42 GB/s, so staging with 4 threads is ~5x faster.
 * Owned by one device context (devops_opencl.c, the unit tests' fake device) and driven by
 * struct vast_staging_ops, so the engine is tested without OpenCL. The ring and the threads
 * are made on the first staged transfer (a device that never stages costs nothing) and live
 * until pagecache_destroy_staging: the ring is one THP-advised mapping of the engine's,
 * committed by the copy threads, each slot pinned by the device (pin_slot). Every staged call
 * is a trace span with its bytes and its time copying and waiting for slot transfers.
 * Thread-safe: one staged transfer at a time (a mutex over ring and threads); a staged
 * transfer is complete (or failed) when its call returns. */
#ifndef VAST_PAGECACHE_STAGING_H
#define VAST_PAGECACHE_STAGING_H

#include <stddef.h>
#include <stdint.h>
#include "devops.h"

/* What the device offers to staging: pins of the engine's slot memory and transfers with
 * per-transfer completion ("tickets"), issued on the device context's in-order queue. */
struct vast_staging_ops {
    /* Pin the slot [host, host + bytes) (page-aligned, committed); *pin keeps it pinned
     * until unpin_slot. */
    int (*pin_slot)(void *dev, void *host, size_t bytes, vast_host_pin *pin);
    void (*unpin_slot)(void *dev, vast_host_pin pin);
    /* Start slot -> device / device -> slot; *ticket identifies the transfer. On error no
     * ticket is made. */
    int (*write)(void *dev, vast_dev_chunk dst, size_t dst_off, const void *slot, size_t bytes,
                 vast_host_pin pin, void **ticket);
    int (*read)(void *dev, vast_dev_chunk src, size_t src_off, void *slot, size_t bytes,
                vast_host_pin pin, void **ticket);
    /* Block until the ticket's transfer is over, release the ticket; nonzero if it failed. */
    int (*wait_ticket)(void *dev, void *ticket);
};

/* Zero in a field means its default. */
struct vast_staging_config {
    size_t slot_bytes;   /* bytes per slot, rounded up to the host page (default 8 MiB) */
    unsigned slots;      /* ring length, >= 2 (default 3) */
    unsigned threads;    /* copy threads, the caller included (default min(16, online cores)) */
    size_t direct_below; /* transfers smaller than this are declined (default 256 KiB) */
};

#define VAST_STAGING_DEFAULT_SLOT ((size_t)8 << 20)
#define VAST_STAGING_DEFAULT_SLOTS 3u
#define VAST_STAGING_DEFAULT_DIRECT_BELOW ((size_t)256 << 10)
#define VAST_STAGING_MAX_THREADS 64u

struct vast_staging_stats {
    uint64_t transfers, bytes;       /* staged calls that succeeded and their bytes */
    uint64_t slot_transfers;         /* device transfers of slots (both directions) */
    uint64_t failures;               /* staged calls that returned VAST_PC_ERR_TRANSFER */
    uint64_t declined;               /* calls left to the direct path */
    unsigned slots, threads;         /* slots allocated (0 before the first use), threads */
    size_t slot_bytes;
    unsigned in_flight;              /* tickets not yet waited for (0 between calls) */
};

struct vast_staging;

/* The default thread count: min(16, online cores). FACTS.md: into memory already touched, 4
 * threads copy at 34 GB/s and 16 only reach 42; but the first copy into a store also takes its
 * page faults, which scale with the threads: saxpy through VAST on an H200 host with 32 cores
 * (samples/results/h200x2-2026-11-27-oversub) ran 8 GiB in 2.42 / 1.51 / 1.34 / 1.33 s with
 * 2 / 8 / 16 / 32 threads (native: 2.35-2.47 s), and 96 GiB in 46.0 s with 4 and 16.1 s with 16. */
unsigned pagecache_staging_default_threads(void);
/* cfg may be NULL (all defaults). Makes no slot and no thread yet. */
int pagecache_create_staging(const struct vast_staging_ops *ops, void *dev,
                             const struct vast_staging_config *cfg, struct vast_staging **out);
/* Frees the slots (through ops) and joins the threads. No staged call may be running. */
void pagecache_destroy_staging(struct vast_staging *s);
/* The resolved configuration (defaults filled in). */
void pagecache_staging_config(const struct vast_staging *s, struct vast_staging_config *out);

/* host -> device / device -> host through the ring. Returns VAST_PC_OK when every byte has
 * arrived, VAST_PC_ERR_TRANSFER when a slot transfer failed (no slot is left in flight; the
 * destination range may be partly written), or VAST_PC_ERR_UNSUPPORTED when staging declines:
 * below direct_below, or the ring or threads could not be made (the caller then transfers
 * directly from pageable memory, still correct). */
int pagecache_staging_write(struct vast_staging *s, vast_dev_chunk dst, size_t dst_off,
                            const void *host, size_t bytes);
int pagecache_staging_read(struct vast_staging *s, vast_dev_chunk src, size_t src_off,
                           void *host, size_t bytes);

void pagecache_get_staging_stats(struct vast_staging *s, struct vast_staging_stats *out);

#endif
