/* unmask.c - reversible masking undone (guardrail.h sy_gunmask): the
 * placeholders of a request's masks put back as the texts they hid, in one
 * left-to-right pass (a placeholder starts with one of few first bytes: each
 * position is tested only where such a byte is). */
#include <string.h>

#include "guardrails/guardrail.h"

size_t sy_gunmask(const struct sy_gpair *pairs, size_t npairs, const char *p, size_t n, struct sy_buf *b)
{
    unsigned char first[256] = {0};
    for (size_t k = 0; k < npairs; k++)
        if (pairs[k].placeholder[0])
            first[(unsigned char)pairs[k].placeholder[0]] = 1;
    size_t done = 0, from = 0;
    for (size_t i = 0; i < n; i++) {
        if (!first[(unsigned char)p[i]])
            continue;
        size_t best = 0, bk = 0;
        for (size_t k = 0; k < npairs; k++) { /* the longest placeholder that starts here */
            size_t l = strlen(pairs[k].placeholder);
            if (l > best && l <= n - i && !memcmp(p + i, pairs[k].placeholder, l)) {
                best = l;
                bk = k;
            }
        }
        if (!best)
            continue;
        sy_buf_append(b, p + from, i - from);
        sy_buf_puts(b, pairs[bk].original);
        i += best - 1;
        from = i + 1;
        done++;
    }
    if (done)
        sy_buf_append(b, p + from, n - from);
    return done;
}

size_t sy_gunmask_hold(const struct sy_gpair *pairs, size_t npairs, const char *p, size_t n)
{
    size_t hold = 0;
    for (size_t k = 0; k < npairs; k++) {
        const char *ph = pairs[k].placeholder;
        size_t l = strlen(ph);
        for (size_t h = (l - 1 < n ? l - 1 : n); h > hold; h--) /* a proper prefix of ph ends p */
            if (!memcmp(p + n - h, ph, h)) {
                hold = h;
                break;
            }
    }
    return hold;
}
