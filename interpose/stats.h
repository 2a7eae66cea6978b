/*
 * stats.h: what VAST did, printed at exit when VAST_STATS=1: per kernel, launches by mode
 * and time; per device page cache, transfers and bytes each way, hits, misses, evictions.
 * Counting is cheap and always on; printing happens once, from an atexit handler.
 */
#ifndef VAST_INTERPOSE_STATS_H
#define VAST_INTERPOSE_STATS_H

enum vast_launch_mode { VAST_MODE_DIRECT, VAST_MODE_PAGED, VAST_MODE_REFUSED, VAST_MODE_COUNT };

/* Arrange the print at exit when VAST_STATS=1 (idempotent). */
void vast_stats_start(void);

void vast_stats_launch(const char *kernel, enum vast_launch_mode mode, double seconds);

/* Print now (vastinfo, tests); the atexit handler calls this when VAST_STATS=1. */
void vast_stats_print(void);

#endif
