/*
 * log.h: VAST's one logging function. Everything goes to stderr with a "vast:" prefix, filtered
 * by VAST_LOG (error|warn|info|debug, default warn). Thread-safe: one fprintf per line.
 */
#ifndef VAST_BASE_LOG_H
#define VAST_BASE_LOG_H

enum vast_log_level { VAST_LOG_ERROR = 0, VAST_LOG_WARN, VAST_LOG_INFO, VAST_LOG_DEBUG };

void vast_log_set_level(enum vast_log_level level);
enum vast_log_level vast_log_get_level(void);
void vast_log(enum vast_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define vast_error(...) vast_log(VAST_LOG_ERROR, __VA_ARGS__)
#define vast_warn(...) vast_log(VAST_LOG_WARN, __VA_ARGS__)
#define vast_info(...) vast_log(VAST_LOG_INFO, __VA_ARGS__)
#define vast_debug(...)                                                                           \
    do {                                                                                          \
        if (vast_log_get_level() >= VAST_LOG_DEBUG)                                               \
            vast_log(VAST_LOG_DEBUG, __VA_ARGS__);                                                \
    } while (0)

#endif
