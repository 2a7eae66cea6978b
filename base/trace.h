/*
 * trace.h: VAST_TRACE=file.json writes a Chrome/Perfetto trace (the "traceEvents" JSON
 * format; open it in ui.perfetto.dev or chrome://tracing) of VAST's work: one complete event
 * per kernel, page transfer batch, inspector run and partition plan, each kind on its own
 * track, so the pipeline of a partitioned launch (transfers of partition i+1 under the kernel
 * of partition i; VAST paper figure 9) can be seen. Times are host monotonic ns (vast_now_ns, clock.h);
 * device times are mapped onto that clock by the caller. Off (one branch) unless VAST_TRACE
 * is set; thread-safe; the file is completed at exit.
 */
#ifndef VAST_BASE_TRACE_H
#define VAST_BASE_TRACE_H

#include <stdbool.h>
#include <stdint.h>

enum vast_trace_track { VAST_TRACK_KERNEL, VAST_TRACK_TRANSFER, VAST_TRACK_INSPECTOR, VAST_TRACK_PLAN,
                        VAST_TRACK_HOST, VAST_TRACK_PIN, VAST_TRACK_COUNT };

bool vast_trace_on(void);
/* One span [t0, t1) on `track`, named `name` ("%s" of the kernel, ...), with a short detail
 * string shown as its argument (may be NULL). */
void vast_trace_span(enum vast_trace_track track, const char *name, uint64_t t0_ns, uint64_t t1_ns,
                     const char *detail);

#endif
