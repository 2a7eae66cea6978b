/*
 * stats.h: what VAST did, printed at exit when VAST_STATS=1, one key=value line per kernel and
 * mode (launches, partitions, faults, retries, bytes moved each way, time in inspector /
 * planning / transfers / kernels, and the first-use translation and builds) and per device page cache (transfers and bytes each way,
 * hits, misses, evictions). The benchmark harness parses these lines: keep keys stable.
 * Counting is cheap and always on; printing happens once, from an atexit handler.
 */
#ifndef VAST_INTERPOSE_STATS_H
#define VAST_INTERPOSE_STATS_H

#include <stdint.h>

enum vast_launch_mode { VAST_MODE_DIRECT, VAST_MODE_PAGED, VAST_MODE_PARTITIONED, VAST_MODE_REFUSED, VAST_MODE_COUNT };

/* What one launch did. Bytes are the page cache's traffic during the launch (other users of
 * the same page cache at the same time are counted too). */
struct vast_launch_counters {
    unsigned long partitions, faults, retries;
    unsigned long host_plans; /* plans made from host page sets (partition.c), not the inspector */
    unsigned long kernel_bound; /* launches bound by their kernels: stores staged (launch.c) */
    unsigned long on_queue;   /* direct launches put on the application's queue (launch.c, launch_fast) */
    unsigned long backwards;  /* partitioned runs from the last partition to the first (pipeline.c) */
    unsigned long chained;    /* launches run by an identical launch before them, in its run (chain.c) */
    uint64_t h2d_bytes, d2h_bytes;
    uint64_t spill_bytes; /* resumable loops' state areas made (paged.c), outside the budget */
    unsigned long overdrafts;    /* launches that borrowed frames past the budget (pipeline.c) */
    uint64_t overdraft_bytes;    /* the most they borrowed at once, summed over those launches */
    uint64_t build_ns, inspector_ns, plan_ns, transfer_ns, kernel_ns, total_ns; /* build: translation, builds */
};

/* Arrange the print at exit when VAST_STATS=1 (idempotent). */
void vast_stats_start(void);

/* t += c, field by field. */
void vast_stats_add(struct vast_launch_counters *t, const struct vast_launch_counters *c);

void vast_stats_launch(const char *kernel, enum vast_launch_mode mode, const struct vast_launch_counters *c);

/* "direct", "paged", "partitioned", "refused" (the stats lines' mode=, log lines). */
const char *vast_launch_mode_name(enum vast_launch_mode mode);

/* Print now (vastinfo, tests); the atexit handler calls this when VAST_STATS=1. */
void vast_stats_print(void);

#endif
