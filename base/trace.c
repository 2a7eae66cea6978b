/*
 * trace.c: see trace.h. Events are appended to the file as they come, under one mutex; the
 * closing bracket is written by an atexit handler (a trace cut short by a crash still opens
 * in Perfetto, which tolerates a missing bracket).
 */
#include "trace.h"

#include "config.h"
#include "log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_once_t trace_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *trace_file;
static bool trace_first = true;

static const char *const track_names[VAST_TRACK_COUNT] = {"kernels", "page transfers", "inspector", "planning",
                                                          "host commands", "host memory pins"};

static void trace_close(void)
{
    pthread_mutex_lock(&trace_lock);
    if (trace_file != NULL) {
        fputs("\n]}\n", trace_file);
        fclose(trace_file);
        trace_file = NULL;
    }
    pthread_mutex_unlock(&trace_lock);
}

static void trace_open(void)
{
    const char *path = vast_config_get()->trace;
    if (path[0] == '\0')
        return;
    trace_file = fopen(path, "w");
    if (trace_file == NULL) {
        vast_error("VAST_TRACE: cannot write %s", path);
        return;
    }
    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", trace_file);
    for (int t = 0; t < VAST_TRACK_COUNT; t++) {
        fprintf(trace_file, "%s\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
                trace_first ? "" : ",", (int)getpid(), t + 1, track_names[t]);
        trace_first = false;
    }
    atexit(trace_close);
}

bool vast_trace_on(void)
{
    pthread_once(&trace_once, trace_open);
    return trace_file != NULL;
}

void vast_trace_span(enum vast_trace_track track, const char *name, uint64_t t0_ns, uint64_t t1_ns,
                     const char *detail)
{
    if (!vast_trace_on())
        return;
    pthread_mutex_lock(&trace_lock);
    if (trace_file != NULL)
        fprintf(trace_file,
                ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"name\":\"%s\",\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"detail\":\"%s\"}}",
                (int)getpid(), (int)track + 1, name, t0_ns / 1e3, (t1_ns > t0_ns ? t1_ns - t0_ns : 0) / 1e3,
                detail ? detail : "");
    pthread_mutex_unlock(&trace_lock);
}
