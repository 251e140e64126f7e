/* usage.c - scan for "usage": {"prompt_tokens": N, "completion_tokens": M, ...}.
 *
 * Responses put `usage` last (OpenAI, vLLM, Azure...), so the search runs
 * backwards from the end and touches only the tail of large bodies such as
 * embeddings. A usage of null (stream chunks before the last) does not match.
 * Besides the two totals, the parts priced apart are read from inside the
 * usage object: prompt_tokens_details.cached_tokens (else a top-level
 * cache_read_input_tokens, as LiteLLM's own usage carries for Anthropic),
 * cache_creation_input_tokens (its 1-hour part: ephemeral_1h_input_tokens, in
 * Anthropic's usage.cache_creation or LiteLLM's
 * prompt_tokens_details.cache_creation_token_details),
 * completion_tokens_details.reasoning_tokens.
 */
#include "gateway/usage.h"

#include "spend/spend.h"

#include <stddef.h>
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

/* The members sy_usage_read prices, read in one pass over the usage object
 * (one memchr per quote instead of a memmem per name). As a search for
 * "name" would, the first member of each name counts, at any depth, and it
 * counts only when a number follows it. */
enum { U_PROMPT, U_COMPLETION, U_CACHED, U_CACHE_READ, U_CACHE_CREATION, U_REASONING, U_CACHE_1H, U__N };

static int member_id(const char *k, size_t n)
{
    switch (n) {
    case 13: return !memcmp(k, "prompt_tokens", 13) ? U_PROMPT : !memcmp(k, "cached_tokens", 13) ? U_CACHED : -1;
    case 17: return !memcmp(k, "completion_tokens", 17) ? U_COMPLETION : -1;
    case 23: return !memcmp(k, "cache_read_input_tokens", 23) ? U_CACHE_READ : -1;
    case 25: return !memcmp(k, "ephemeral_1h_input_tokens", 25) ? U_CACHE_1H : -1;
    case 27: return !memcmp(k, "cache_creation_input_tokens", 27) ? U_CACHE_CREATION : -1;
    case 16: return !memcmp(k, "reasoning_tokens", 16) ? U_REASONING : -1;
    default: return -1;
    }
}

/* Bit i of the result: v[i] was read. */
static unsigned read_members(const char *p, const char *end, uint64_t v[U__N])
{
    unsigned got = 0, seen = 0;
    while (p < end) {
        const char *s = memchr(p, '"', (size_t)(end - p));
        if (!s)
            break;
        const char *t = s + 1;
        for (;;) { /* the closing quote, past escaped ones */
            t = memchr(t, '"', (size_t)(end - t));
            if (!t)
                return got;
            size_t bs = 0;
            while (t - bs > s + 1 && t[-1 - (ptrdiff_t)bs] == '\\')
                bs++;
            if (!(bs & 1))
                break;
            t++;
        }
        int id = member_id(s + 1, (size_t)(t - s - 1));
        p = t + 1;
        if (id < 0 || (seen & 1u << id))
            continue;
        seen |= 1u << id;
        const char *k = p;
        while (k < end && (*k == ' ' || *k == ':' || *k == '\t' || *k == '\n' || *k == '\r'))
            k++;
        uint64_t x = 0;
        int any = 0;
        while (k < end && *k >= '0' && *k <= '9') {
            x = x * 10 + (uint64_t)(*k - '0');
            k++;
            any = 1;
        }
        if (any) {
            v[id] = x;
            got |= 1u << id;
        }
    }
    return got;
}

/* The last "usage":{...} object of p[0..n): *q its '{', *e its '}' (or end). */
static int usage_obj(const char *p, size_t n, const char **qo, const char **eo)
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
    /* the usage object ends at its matching brace; nested *_details objects
     * are small: jump from '}' to '}' (memchr), counting the '{' between */
    int depth = 1;
    const char *e = q + 1;
    for (;;) {
        const char *c = memchr(e, '}', (size_t)(end - e));
        if (!c) {
            e = end;
            break;
        }
        for (const char *o = memchr(e, '{', (size_t)(c - e)); o; o = memchr(o + 1, '{', (size_t)(c - o - 1)))
            depth++;
        if (--depth == 0) {
            e = c;
            break;
        }
        e = c + 1;
    }
    *qo = q;
    *eo = e;
    return 1;
}

long sy_usage_close(const char *p, size_t n)
{
    size_t o, e;
    return sy_usage_span(p, n, &o, &e) ? (long)e : -1;
}

int sy_usage_span(const char *p, size_t n, size_t *open, size_t *close)
{
    const char *q, *e;
    if (!usage_obj(p, n, &q, &e) || e >= p + n)
        return 0;
    *open = (size_t)(q - p);
    *close = (size_t)(e - p);
    return 1;
}

int sy_usage_read(const char *p, size_t n, struct sy_usage *out)
{
    const char *q, *e;
    if (!usage_obj(p, n, &q, &e))
        return 0;
    uint64_t v[U__N] = {0};
    unsigned got = read_members(q, e, v);
    if (!(got & (1u << U_PROMPT | 1u << U_COMPLETION)))
        return 0;
    uint64_t pt = v[U_PROMPT], ct = v[U_COMPLETION];
    struct sy_usage x = {0};
    x.prompt_tokens = pt;
    x.completion_tokens = ct;
    x.cached_tokens = got & 1u << U_CACHED ? v[U_CACHED] : v[U_CACHE_READ];
    x.cache_creation_tokens = v[U_CACHE_CREATION];
    x.reasoning_tokens = v[U_REASONING];
    x.cache_creation_1h_tokens = v[U_CACHE_1H];
    /* parts never exceed their totals (a malformed usage must not price negative text) */
    if (x.cached_tokens > pt)
        x.cached_tokens = pt;
    if (x.cache_creation_tokens > pt - x.cached_tokens)
        x.cache_creation_tokens = pt - x.cached_tokens;
    if (x.cache_creation_1h_tokens > x.cache_creation_tokens)
        x.cache_creation_1h_tokens = x.cache_creation_tokens;
    if (x.reasoning_tokens > ct)
        x.reasoning_tokens = ct;
    *out = x;
    return 1;
}

int sy_usage_scan(const char *p, size_t n, uint64_t *prompt, uint64_t *completion)
{
    struct sy_usage u;
    if (!sy_usage_read(p, n, &u))
        return 0;
    *prompt = u.prompt_tokens;
    *completion = u.completion_tokens;
    return 1;
}

int64_t sy_usage_last_num(const char *p, size_t n, const char *key, size_t kl)
{
    int64_t v = -1;
    const char *e = p + n, *k = p;
    while ((k = memmem(k, (size_t)(e - k), key, kl)) != NULL) {
        const char *q = k + kl;
        while (q < e && (*q == ' ' || *q == ':'))
            q++;
        if (q < e && *q >= '0' && *q <= '9') {
            int64_t t = 0;
            while (q < e && *q >= '0' && *q <= '9' && t < (int64_t)1 << 50)
                t = t * 10 + (*q++ - '0');
            v = t;
        }
        k = q;
    }
    return v;
}
