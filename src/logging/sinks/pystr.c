/* pystr.c - Python's str() of a JSON value (see pystr.h). */
#include "logging/sinks/pystr.h"

#include <stdlib.h>
#include <string.h>

#include "core/pyrepr.h"

#define DEDUP_MAX 256 /* objects with more members are printed without the duplicate-key pass */

static int repr_node(struct sy_buf *b, const struct sy_jdoc *d, uint32_t i, struct sy_arena *a, int depth);

static int num_node(struct sy_buf *b, const struct sy_jdoc *d, uint32_t i)
{
    size_t n;
    const char *p = sy_jdom_raw(d, i, &n);
    if (!memchr(p, '.', n) && !memchr(p, 'e', n) && !memchr(p, 'E', n)) {
        if (n == 2 && p[0] == '-' && p[1] == '0')
            return SY_BUF_LIT(b, "0");
        return sy_buf_append(b, p, n);
    }
    double v = 0;
    sy_jdom_num(d, i, &v);
    return sy_py_float_repr(b, v);
}

/* 1 when an earlier key of the object (before key node k) decodes to the same text. */
static int seen_before(const struct sy_jdoc *d, uint32_t obj, uint32_t k, struct sy_arena *a)
{
    size_t kl;
    const char *ks = sy_jdom_view(d, k, a, &kl);
    for (uint32_t e = sy_jdom_first(d, obj); e && e != k; e = sy_jdom_next_key(d, e)) {
        size_t el;
        const char *es = sy_jdom_view(d, e, a, &el);
        if (el == kl && memcmp(es, ks, kl) == 0)
            return 1;
    }
    return 0;
}

static int obj_node(struct sy_buf *b, const struct sy_jdoc *d, uint32_t i, struct sy_arena *a, int depth)
{
    int rc = SY_BUF_LIT(b, "{");
    int dedup = d->n[i].kids <= DEDUP_MAX, first = 1;
    for (uint32_t k = sy_jdom_first(d, i); k; k = sy_jdom_next_key(d, k)) {
        uint32_t v = sy_jdom_val(k);
        if (dedup) {
            if (seen_before(d, i, k, a))
                continue;
            size_t kl;
            const char *ks = sy_jdom_view(d, k, a, &kl);
            /* the last value of a repeated key, at the first key's place (a dict) */
            for (uint32_t e = sy_jdom_next_key(d, k); e; e = sy_jdom_next_key(d, e)) {
                size_t el;
                const char *es = sy_jdom_view(d, e, a, &el);
                if (el == kl && memcmp(es, ks, kl) == 0)
                    v = sy_jdom_val(e);
            }
        }
        if (!first)
            rc |= SY_BUF_LIT(b, ", ");
        first = 0;
        rc |= repr_node(b, d, k, a, depth + 1);
        rc |= SY_BUF_LIT(b, ": ");
        rc |= repr_node(b, d, v, a, depth + 1);
    }
    rc |= SY_BUF_LIT(b, "}");
    return rc;
}

static int repr_node(struct sy_buf *b, const struct sy_jdoc *d, uint32_t i, struct sy_arena *a, int depth)
{
    if (depth > SY_JDOM_MAX_DEPTH)
        return -1;
    switch (d->n[i].type) {
    case 's': {
        size_t n;
        const char *s = sy_jdom_str(d, i, a, &n);
        return s ? sy_py_str_repr(b, s, n) : -1;
    }
    case 'n': return num_node(b, d, i);
    case 't': return SY_BUF_LIT(b, "True");
    case 'f': return SY_BUF_LIT(b, "False");
    case 'z': return SY_BUF_LIT(b, "None");
    case 'a': {
        int rc = SY_BUF_LIT(b, "[");
        for (uint32_t e = sy_jdom_first(d, i); e; e = sy_jdom_next(d, e)) {
            if (e != i + 1)
                rc |= SY_BUF_LIT(b, ", ");
            rc |= repr_node(b, d, e, a, depth + 1);
        }
        rc |= SY_BUF_LIT(b, "]");
        return rc;
    }
    case 'o': return obj_node(b, d, i, a, depth);
    }
    return -1;
}

int sy_pystr_node(struct sy_buf *b, const struct sy_jdoc *d, uint32_t i, struct sy_arena *a)
{
    if (i >= d->count)
        return -1;
    if (d->n[i].type == 's') {
        if (i == 0) { /* jdom's string readers take node 0 for "absent": read it as [root] */
            size_t rl;
            const char *raw = sy_jdom_raw(d, 0, &rl);
            char *w = sy_arena_alloc(a, rl + 2);
            w[0] = '[';
            memcpy(w + 1, raw, rl);
            w[rl + 1] = ']';
            struct sy_jdoc wd;
            if (sy_jdom_parse(&wd, w, rl + 2, a, 0) != 0)
                return -1;
            return sy_pystr_node(b, &wd, 1, a);
        }
        size_t n;
        const char *s = sy_jdom_str(d, i, a, &n);
        return !s || sy_buf_append(b, s, n) ? -1 : 0;
    }
    return repr_node(b, d, i, a, 0) || sy_buf_failed(b) ? -1 : 0;
}

size_t sy_pystr_len(const char *s, size_t n)
{
    size_t i = 0, cps = 0;
    while (i < n) {
        sy_py_utf8_next((const unsigned char *)s, n, &i);
        cps++;
    }
    return cps;
}

size_t sy_pystr_prefix(const char *s, size_t n, size_t max)
{
    size_t i = 0, cps = 0;
    while (i < n && cps < max) {
        sy_py_utf8_next((const unsigned char *)s, n, &i);
        cps++;
    }
    return i;
}
