/* clock.h - clock helpers: monotonic time, and wall time in Unix seconds. */
#ifndef SY_CLOCK_H
#define SY_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t sy_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static inline uint64_t sy_now_us(void)
{
    return sy_now_ns() / 1000u;
}
static inline uint64_t sy_wall_s(void)
{
    return (uint64_t)time(NULL);
}
/* Wall time in Unix seconds with the fraction (limit windows, cache ages, spend rows). */
static inline double sy_wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
