/* duration.c - LiteLLM's budget_duration grammar and its reset times.
 *
 * Grammar (litellm_core_utils/duration_parser.py::duration_in_seconds, whose
 * regex `(\d+)(mo|[smhdw]?)` matches a PREFIX of the text):
 *
 *   duration := digits unit rest       rest is ignored ("30days" = 30 d)
 *   unit     := "mo" | "s" | "m" | "h" | "d" | "w"
 *   "", "none", "null" (any case, surrounding spaces) and a missing unit are invalid.
 *   digits: at most 9 (a larger count is refused here; LiteLLM takes any int).
 *
 * sy_duration_seconds: s=1, m=60, h=3600, d=86400, w=604800, mo=30 days (LiteLLM
 * counts calendar months from now; spend.h fixes 30 days).
 *
 * sy_duration_next follows get_next_standardized_reset_time(duration, now, "UTC"),
 * what the proxy uses for budget_reset_at (litellm.timezone unset = UTC). Its
 * unit is the whole run of lowercase letters after the digits:
 *
 *   Nd   N=0: now; N=1: next midnight; N=7: next Monday 00:00 (a Monday goes
 *        to the following one); N=30: the 1st of next month 00:00;
 *        other N: today's midnight + N days
 *   Nw   as N*7 days ("1w" = next Monday, "2w" = today's midnight + 14 d)
 *   Nh   N=0: now; next hour of the day that is a multiple of N (strictly
 *        later, minutes dropped); past 23 it wraps, modulo 24, onto tomorrow
 *        ("30h" at 10:15 -> tomorrow 06:00, as LiteLLM)
 *   Nm   same on the minute of the hour, carrying into hours, then tomorrow
 *   Ns   same on the second of the minute
 *   1mo  the 1st of next month 00:00. LiteLLM raises for N != 1; we go to the
 *        1st of the month N months ahead (N=0: now)
 *   any other letters ("30days", "30min") -> next midnight, as LiteLLM
 *   All times UTC.
 */
#include <ctype.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "spend/spend.h"

/* Parse the leading "<digits><letters>". 0 ok (value, unit letters in
 * unit/ulen), -1 when the text is None-like or does not start with digits. */
static int lead(const char *s, int64_t *value, const char **unit, size_t *ulen)
{
    if (!s)
        return -1;
    const char *a = s, *b = s + strlen(s);
    while (a < b && isspace((unsigned char)*a))
        a++;
    while (b > a && isspace((unsigned char)b[-1]))
        b--;
    if (b == a || ((size_t)(b - a) == 4 && (!strncasecmp(a, "none", 4) || !strncasecmp(a, "null", 4))))
        return -1;
    int64_t v = 0;
    const char *p = s;
    while (*p >= '0' && *p <= '9') {
        if (p - s >= 9)
            return -1;
        v = v * 10 + (*p++ - '0');
    }
    if (p == s)
        return -1;
    const char *u = p;
    while (*p >= 'a' && *p <= 'z')
        p++;
    *value = v;
    *unit = u;
    *ulen = (size_t)(p - u);
    return 0;
}

/* duration_in_seconds's unit: 'o' for "mo" (tried first), else one of
 * s m h d w; 0 if none. */
static int unit_of(const char *u, size_t ulen)
{
    if (ulen >= 2 && u[0] == 'm' && u[1] == 'o')
        return 'o';
    if (ulen >= 1 && strchr("smhdw", u[0]))
        return u[0];
    return 0;
}

double sy_duration_seconds(const char *duration)
{
    int64_t v;
    const char *u;
    size_t ul;
    if (lead(duration, &v, &u, &ul) != 0)
        return -1;
    switch (unit_of(u, ul)) {
    case 's': return (double)v;
    case 'm': return (double)v * 60;
    case 'h': return (double)v * 3600;
    case 'd': return (double)v * 86400;
    case 'w': return (double)v * 604800;
    case 'o': return (double)v * 30 * 86400;
    default: return -1;
    }
}

/* Days since 1970-01-01 of a civil date (proleptic Gregorian; H. Hinnant). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

/* The first of the month `add` months after the one containing day `day`, as days. */
static int64_t first_of_month(int64_t day, int64_t add)
{
    int64_t y;
    int m, d;
    civil_from_days(day, &y, &m, &d);
    int64_t t = (int64_t)(m - 1) + add;
    return days_from_civil(y + t / 12, (int)(t % 12) + 1, 1);
}

/* The next multiple-of-v boundary strictly after cur: LiteLLM's
 * `cur + v - cur % v if cur % v else cur + v` (both give the same). */
static int64_t next_mult(int64_t cur, int64_t v)
{
    return cur + v - cur % v;
}

double sy_duration_next(const char *duration, double now_unix)
{
    int64_t v;
    const char *u;
    size_t ul;
    if (!isfinite(now_unix) || fabs(now_unix) > 1e13)
        return -1;
    if (lead(duration, &v, &u, &ul) != 0 || !unit_of(u, ul))
        return -1;
    int64_t secs = (int64_t)floor(now_unix);
    int64_t day = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
    int64_t sod = secs - day * 86400; /* second of the day */
    int64_t hh = sod / 3600, mm = sod / 60 % 60, ss = sod % 60;
    double midnight = (double)day * 86400, tomorrow = midnight + 86400;

    char unit[3] = {0};
    if (ul == 1 || (ul == 2 && u[0] == 'm' && u[1] == 'o'))
        memcpy(unit, u, ul);
    else
        return tomorrow; /* unrecognised unit: next midnight, as LiteLLM */

    if (unit[0] == 'd' || unit[0] == 'w') {
        int64_t n = unit[0] == 'w' ? v * 7 : v;
        if (n == 0)
            return now_unix;
        if (n == 1)
            return tomorrow;
        if (n == 7) {
            int wd = (int)(((day + 3) % 7 + 7) % 7); /* Monday = 0; 1970-01-01 was a Thursday */
            int until = (7 - wd) % 7;
            return midnight + (double)(until ? until : 7) * 86400;
        }
        if (n == 30)
            return (double)first_of_month(day, 1) * 86400;
        return midnight + (double)n * 86400;
    }
    if (!strcmp(unit, "mo")) {
        if (v == 0)
            return now_unix;
        return (double)first_of_month(day, v) * 86400;
    }
    if (v == 0)
        return now_unix;
    int64_t nh, nm = 0, ns = 0;
    switch (unit[0]) {
    case 'h': nh = next_mult(hh, v); break;
    case 'm':
        nm = next_mult(mm, v);
        nh = hh + nm / 60;
        nm %= 60;
        break;
    case 's':
        ns = next_mult(ss, v);
        nm = mm + ns / 60;
        ns %= 60;
        nh = hh + nm / 60;
        nm %= 60;
        break;
    default: return tomorrow;
    }
    double base = midnight;
    if (nh >= 24) {
        nh %= 24;
        base = tomorrow;
    }
    return base + (double)(nh * 3600 + nm * 60 + ns);
}
