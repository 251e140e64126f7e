/* usage.c - scan for "usage": {"prompt_tokens": N, "completion_tokens": M}.
 *
 * Responses put `usage` last (OpenAI, vLLM, Azure...), so the search runs
 * backwards from the end and touches only the tail of large bodies such as
 * embeddings. A usage of null (stream chunks before the last) does not match.
 */
#include "gateway/usage.h"

#include <string.h>

/* Last occurrence of nd in h, found backwards by the needle byte nd[k]
 * (memrchr is vectorised; pick a byte rare in responses): responses put
 * `usage` last, so only the tail is touched, and a byte-wise loop (~5
 * instructions per byte) is avoided. */
static const char *rmemmem(const char *h, size_t hn, const char *nd, size_t nn, size_t k)
{
    if (nn == 0 || nn > hn || k >= nn)
        return NULL;
    size_t lo = k, n = hn - (nn - 1 - k); /* the anchor lies in h[lo, n) */
    while (n > lo) {
        const char *q = memrchr(h + lo, nd[k], n - lo);
        if (!q)
            return NULL;
        const char *s = q - k;
        if (memcmp(s, nd, nn) == 0)
            return s;
        n = (size_t)(q - h);
    }
    return NULL;
}

static int read_num(const char *p, const char *end, const char *key, uint64_t *out)
{
    size_t kl = strlen(key);
    const char *k = memmem(p, (size_t)(end - p), key, kl);
    if (!k)
        return 0;
    k += kl;
    while (k < end && (*k == ' ' || *k == ':' || *k == '\t' || *k == '\n' || *k == '\r'))
        k++;
    uint64_t v = 0;
    int any = 0;
    while (k < end && *k >= '0' && *k <= '9') {
        v = v * 10 + (uint64_t)(*k - '0');
        k++;
        any = 1;
    }
    if (any)
        *out = v;
    return any;
}

int sy_usage_scan(const char *p, size_t n, uint64_t *prompt, uint64_t *completion)
{
    const char *u = rmemmem(p, n, "\"usage\"", 7, 4 /* g */);
    if (!u)
        return 0;
    const char *end = p + n;
    const char *q = u + 7;
    while (q < end && (*q == ' ' || *q == ':' || *q == '\t' || *q == '\n' || *q == '\r'))
        q++;
    if (q >= end || *q != '{')
        return 0;
    /* the usage object ends at its matching brace; nested *_details objects are small */
    int depth = 0;
    const char *e = q;
    for (; e < end; e++) {
        if (*e == '{')
            depth++;
        else if (*e == '}' && --depth == 0)
            break;
    }
    uint64_t pt = 0, ct = 0;
    int a = read_num(q, e, "\"prompt_tokens\"", &pt);
    int b = read_num(q, e, "\"completion_tokens\"", &ct);
    if (!a && !b)
        return 0;
    *prompt = pt;
    *completion = ct;
    return 1;
}
