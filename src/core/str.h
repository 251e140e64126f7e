/* str.h - string views: a pointer and a length, never NUL-terminated by contract.
 *
 * Views point into buffers owned by someone else (a request arena, a config
 * snapshot, a receive buffer); the owner's lifetime bounds the view's. */
#ifndef SY_STR_H
#define SY_STR_H

#include <stddef.h>
#include <string.h>
#include <strings.h>

struct sy_str {
    const char *p;
    size_t n;
};

#define SY_STR(lit) ((struct sy_str){(lit), sizeof(lit) - 1})
#define SY_STR_NULL ((struct sy_str){NULL, 0})

static inline struct sy_str sy_str_c(const char *s)
{
    return (struct sy_str){s, s ? strlen(s) : 0};
}

static inline int sy_str_eq(struct sy_str a, const char *lit, size_t n)
{
    return a.n == n && memcmp(a.p, lit, n) == 0;
}
#define SY_STR_EQ(s, lit) sy_str_eq((s), (lit), sizeof(lit) - 1)

static inline int sy_str_caseeq(struct sy_str a, const char *lit, size_t n)
{
    return a.n == n && strncasecmp(a.p, lit, n) == 0;
}
#define SY_STR_CASEEQ(s, lit) sy_str_caseeq((s), (lit), sizeof(lit) - 1)

static inline int sy_str_startswith(struct sy_str a, const char *lit, size_t n)
{
    return a.n >= n && memcmp(a.p, lit, n) == 0;
}

/* Glob match of s[0..n) against pattern (NUL-terminated): '*' matches any
 * run of bytes, everything else itself (model-group wildcards "openai/<star>"). */
static inline int sy_glob(const char *pattern, const char *s, size_t n)
{
    const char *p = pattern, *star = NULL, *ss = NULL, *e = s + n;
    while (s < e) {
        if (*p == '*') {
            star = p++;
            ss = s;
        } else if (*p && *p == *s) {
            p++;
            s++;
        } else if (star) {
            p = star + 1;
            s = ++ss;
        } else {
            return 0;
        }
    }
    while (*p == '*')
        p++;
    return *p == 0;
}

#endif
