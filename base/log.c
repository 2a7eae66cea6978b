/*
 * log.c: the level filter and the line writer behind log.h. The level is set once from
 * VAST_LOG when the configuration is read and may be changed by tests.
 */
#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

static _Atomic int current_level = VAST_LOG_WARN;

void vast_log_set_level(enum vast_log_level level) { atomic_store(&current_level, (int)level); }

enum vast_log_level vast_log_get_level(void) { return (enum vast_log_level)atomic_load(&current_level); }

void vast_log(enum vast_log_level level, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    if ((int)level > atomic_load(&current_level))
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "vast: %s: %s\n", names[level], line);
}
