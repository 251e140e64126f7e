/* log.h - leveled logging to stderr, one line per call, safe from any thread.
 * Level is set once at start (`--log-level`, env SWITCHYARD_LOG). */
#ifndef SY_LOG_H
#define SY_LOG_H

enum sy_log_level { SY_LOG_DEBUG, SY_LOG_INFO, SY_LOG_WARN, SY_LOG_ERROR };

extern enum sy_log_level sy_log_level;

void sy_log(enum sy_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define sy_debug(...)                          \
    do {                                       \
        if (sy_log_level <= SY_LOG_DEBUG)      \
            sy_log(SY_LOG_DEBUG, __VA_ARGS__); \
    } while (0)
#define sy_info(...)  sy_log(SY_LOG_INFO, __VA_ARGS__)
#define sy_warn(...)  sy_log(SY_LOG_WARN, __VA_ARGS__)
#define sy_error(...) sy_log(SY_LOG_ERROR, __VA_ARGS__)

#endif
