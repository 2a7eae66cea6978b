/*
 * clock.h: the one clock of VAST: host monotonic time in ns. Profiling times of virtual
 * commands, statistics and trace spans all read it, so they compare with each other.
 */
#ifndef VAST_BASE_CLOCK_H
#define VAST_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t vast_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

#endif
