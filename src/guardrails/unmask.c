/* unmask.c - reversible masking's way back (guardrail.h: sy_gunmask,
 * sy_gunmask_hold): the placeholders a masking guardrail put in the request
 * (<EMAIL_ADDRESS_1>, ...) replaced by the originals in the answer.
 *
 * One left-to-right pass over the text, never one pass per pair: the
 * placeholders are sorted once per call, and at each position whose byte can
 * start a placeholder (a 256-bit set; memchr when they all start with the
 * same byte, as presidio's "<...>" do) a binary search finds the last
 * placeholder <= the text there. If that one is a prefix of the text it is
 * the longest placeholder that is (a longer one would sort between it and
 * the text); if not, the longest that is must be a prefix of it no longer
 * than their common prefix, found by walking each placeholder's "longest
 * proper prefix in the set" link (computed once with a stack over the sorted
 * order). So the cost is O(n + matches * log k) for k pairs, plus the sort.
 *
 * sy_gunmask_hold serves streams: a placeholder cut between two pieces is
 * held back until the next piece completes it (or the stream ends). */
#include <stdlib.h>
#include <string.h>

#include "guardrails/guardrail.h"

struct ph {
    const char *s;
    size_t n;
    size_t pair;
    long parent; /* index (sorted) of the longest placeholder that is a proper prefix of this one, or -1 */
};

static int ph_cmp(const void *a, const void *b)
{
    const struct ph *x = a, *y = b;
    size_t m = x->n < y->n ? x->n : y->n;
    int c = memcmp(x->s, y->s, m);
    if (c)
        return c;
    return x->n < y->n ? -1 : x->n > y->n;
}

/* Compare placeholder h with the text t[0..tn): <0, 0 (h is a prefix of t), >0;
 * *common gets the length of their common prefix. */
static int ph_vs_text(const struct ph *h, const char *t, size_t tn, size_t *common)
{
    size_t m = h->n < tn ? h->n : tn, i = 0;
    while (i < m && h->s[i] == t[i])
        i++;
    *common = i;
    if (i == h->n)
        return 0;
    if (i == tn)
        return 1; /* the text ends inside h: h sorts after it */
    return (unsigned char)h->s[i] < (unsigned char)t[i] ? -1 : 1;
}

/* The longest placeholder that is a prefix of t[0..tn), or -1. */
static long longest_at(const struct ph *v, size_t k, const char *t, size_t tn)
{
    size_t lo = 0, hi = k; /* find the last index with v[i] <= t (prefix counts as <=) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2, common;
        if (ph_vs_text(&v[mid], t, tn, &common) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo)
        return -1;
    long j = (long)lo - 1;
    size_t common;
    if (ph_vs_text(&v[j], t, tn, &common) == 0)
        return j;
    while (j >= 0 && v[j].n > common)
        j = v[j].parent;
    return j; /* every link is a prefix of the one before, so of t[0..common) */
}

size_t sy_gunmask(const struct sy_gpair *pairs, size_t npairs, const char *p, size_t n, struct sy_buf *b)
{
    struct ph *v = npairs ? malloc(npairs * sizeof *v) : NULL;
    size_t k = 0;
    for (size_t i = 0; v && i < npairs; i++)
        if (pairs[i].placeholder && pairs[i].placeholder[0] && pairs[i].original)
            v[k++] = (struct ph){pairs[i].placeholder, strlen(pairs[i].placeholder), i, -1};
    if (!k) {
        free(v);
        sy_buf_append(b, p, n);
        return 0;
    }
    qsort(v, k, sizeof *v, ph_cmp);
    long *stack = malloc(k * sizeof *stack);
    if (!stack) {
        free(v);
        sy_buf_append(b, p, n);
        return 0;
    }
    size_t top = 0;
    unsigned char first[256] = {0};
    int nfirst = 0;
    for (size_t i = 0; i < k; i++) {
        while (top && !(v[stack[top - 1]].n < v[i].n && !memcmp(v[stack[top - 1]].s, v[i].s, v[stack[top - 1]].n)))
            top--;
        v[i].parent = top ? stack[top - 1] : -1;
        stack[top++] = (long)i;
        unsigned char c = (unsigned char)v[i].s[0];
        nfirst += !first[c];
        first[c] = 1;
    }
    free(stack);
    unsigned char only = (unsigned char)v[0].s[0];
    size_t done = 0, i = 0, count = 0;
    while (i < n) {
        if (nfirst == 1) {
            const char *q = memchr(p + i, only, n - i);
            if (!q)
                break;
            i = (size_t)(q - p);
        } else if (!first[(unsigned char)p[i]]) {
            i++;
            continue;
        }
        long j = longest_at(v, k, p + i, n - i);
        if (j < 0) {
            i++;
            continue;
        }
        sy_buf_append(b, p + done, i - done);
        sy_buf_puts(b, pairs[v[j].pair].original);
        i += v[j].n;
        done = i;
        count++;
    }
    sy_buf_append(b, p + done, n - done);
    free(v);
    return count;
}

size_t sy_gunmask_hold(const struct sy_gpair *pairs, size_t npairs, const char *p, size_t n)
{
    size_t best = 0;
    for (size_t i = 0; i < npairs; i++) {
        const char *h = pairs[i].placeholder;
        if (!h || !h[0])
            continue;
        size_t hn = strlen(h);
        /* suffixes of p no longer than hn - 1, longest first; only those longer than best matter */
        size_t from = n > hn - 1 ? n - (hn - 1) : 0;
        for (size_t s = from; s < n && n - s > best; s++)
            if (p[s] == h[0] && !memcmp(p + s, h, n - s)) {
                best = n - s;
                break;
            }
    }
    return best;
}
