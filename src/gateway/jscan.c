/* jscan.c - strict one-pass JSON validator reporting top-level member spans.
 *
 * Invariants: no allocation, recursion bounded by SY_JSCAN_MAX_DEPTH, every
 * reported span lies inside the input. Keys are matched by their decoded
 * names; a key of interest seen twice in one object sets s->dup. */
#include "gateway/jscan.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "core/errors.h"
#include "core/hex.h"
#include "core/utf8.h"

struct st {
    const char *p;
    size_t n, i;
    const char *err;
};

static void ws(struct st *s)
{
    if (s->i < s->n && (unsigned char)s->p[s->i] > ' ')
        return; /* the common case in compact bodies */
    while (s->i < s->n) {
        char c = s->p[s->i];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            s->i++;
        else
            break;
    }
}

static int fail(struct st *s, const char *why)
{
    if (!s->err)
        s->err = why;
    return -1;
}

/* Validates UTF-8 too: JSON text must be UTF-8. Runs of plain ASCII are
 * skipped 16 bytes at a time (SSE2: no byte is '"', '\\', < 0x20 or >= 0x80;
 * the signed compare with 0x20 catches both of the last two). */
static int str(struct st *s)
{
    s->i++; /* opening quote */
    while (s->i < s->n) {
#ifdef __SSE2__
        while (s->i + 16 <= s->n) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s->p + s->i));
            __m128i m = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
            unsigned bits = (unsigned)_mm_movemask_epi8(m);
            if (bits) {
                s->i += (size_t)__builtin_ctz(bits);
                break;
            }
            s->i += 16;
        }
        if (s->i >= s->n)
            break;
#endif
        unsigned char c = (unsigned char)s->p[s->i];
        if (c == '"') {
            s->i++;
            return 0;
        }
        if (c == '\\') {
            if (++s->i >= s->n)
                break;
            char e = s->p[s->i];
            if (e == 'u') {
                if (s->i + 4 >= s->n)
                    break;
                for (int k = 1; k <= 4; k++)
                    if (sy_hex_val(s->p[s->i + k]) < 0)
                        return fail(s, "bad \\u escape in string");
                s->i += 5;
                continue;
            }
            if (!strchr("\"\\/bfnrt", e) || e == 0)
                return fail(s, "bad escape in string");
            s->i++;
            continue;
        }
        if (c < 0x20)
            return fail(s, "control character in string");
        if (c < 0x80) {
            s->i++;
            continue;
        }
        /* UTF-8 sequence */
        int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
        if (!len || c > 0xF4 || s->i + (size_t)len > s->n)
            return fail(s, "invalid UTF-8 in string");
        for (int k = 1; k < len; k++)
            if (((unsigned char)s->p[s->i + k] & 0xC0) != 0x80)
                return fail(s, "invalid UTF-8 in string");
        unsigned char c1 = (unsigned char)s->p[s->i + 1];
        if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) || (c == 0xF0 && c1 < 0x90) ||
            (c == 0xF4 && c1 > 0x8F))
            return fail(s, "invalid UTF-8 in string");
        s->i += (size_t)len;
    }
    return fail(s, "unterminated string");
}

static int num(struct st *s)
{
    size_t i = s->i;
    if (i < s->n && s->p[i] == '-')
        i++;
    if (i >= s->n)
        return fail(s, "bad number");
    if (s->p[i] == '0')
        i++;
    else if (s->p[i] >= '1' && s->p[i] <= '9')
        while (i < s->n && s->p[i] >= '0' && s->p[i] <= '9')
            i++;
    else
        return fail(s, "bad number");
    if (i < s->n && s->p[i] == '.') {
        i++;
        if (i >= s->n || s->p[i] < '0' || s->p[i] > '9')
            return fail(s, "bad number");
        while (i < s->n && s->p[i] >= '0' && s->p[i] <= '9')
            i++;
    }
    if (i < s->n && (s->p[i] == 'e' || s->p[i] == 'E')) {
        i++;
        if (i < s->n && (s->p[i] == '+' || s->p[i] == '-'))
            i++;
        if (i >= s->n || s->p[i] < '0' || s->p[i] > '9')
            return fail(s, "bad number");
        while (i < s->n && s->p[i] >= '0' && s->p[i] <= '9')
            i++;
    }
    s->i = i;
    return 0;
}

static int lit(struct st *s, const char *w, size_t wl)
{
    if (s->n - s->i < wl || memcmp(s->p + s->i, w, wl) != 0)
        return fail(s, "unexpected token");
    s->i += wl;
    return 0;
}

/* Span type letter for a value starting with c (see sy_jspan.type). */
static char span_type(char c)
{
    switch (c) {
    case '"': return 's';
    case '{': return 'o';
    case '[': return 'a';
    case 't': return 't';
    case 'f': return 'f';
    case 'n': return 'z';
    default: return 'n';
    }
}

/* After a member or element: 1 when ',' follows (more to come), 0 when the
 * container's closing byte does (consumed), -1 on a syntax error. */
static int next_member(struct st *s, char close)
{
    ws(s);
    if (s->i >= s->n)
        return fail(s, close == '}' ? "unterminated object" : "unterminated array");
    if (s->p[s->i] == ',') {
        s->i++;
        return 1;
    }
    if (s->p[s->i] == close) {
        s->i++;
        return 0;
    }
    return fail(s, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
}

static int value(struct st *s, int depth, struct sy_jscan *top);

enum {
    K_NONE,
    K_MODEL,
    K_STREAM,
    K_STREAM_OPTIONS,
    K_MESSAGES,
    K_INPUT,
    K_PROMPT,
    K_USER,
    K_N,
    K_INCLUDE_USAGE,
    K_STORE,
    K_PREV_RESPONSE,
    K_R0 /* K_R0 + enum sy_jrkey: router keys */
};

static const char *const kname[] = {NULL,
                                    "model",
                                    "stream",
                                    "stream_options",
                                    "messages",
                                    "input",
                                    "prompt",
                                    "user",
                                    "n",
                                    "stream_options.include_usage",
                                    "store",
                                    "previous_response_id",
                                    "fallbacks",
                                    "disable_fallbacks",
                                    "num_retries",
                                    "timeout",
                                    "stream_timeout",
                                    "context_window_fallbacks",
                                    "content_policy_fallbacks",
                                    "mock_testing_fallbacks",
                                    "cache",
                                    "mock_timeout",
                                    "mock_testing_rate_limit_error",
                                    "tags",
                                    "guardrails"};

/* Key id of a decoded name k[0..len): compare by length first, no strlen. */
static int kid(const char *k, size_t len)
{
    switch (len) {
    case 1: return k[0] == 'n' ? K_N : K_NONE;
    case 4: return memcmp(k, "user", 4) == 0 ? K_USER : memcmp(k, "tags", 4) == 0 ? K_R0 + SY_JR_TAGS : K_NONE;
    case 5:
        return memcmp(k, "model", 5) == 0   ? K_MODEL
               : memcmp(k, "input", 5) == 0 ? K_INPUT
               : memcmp(k, "store", 5) == 0 ? K_STORE
               : memcmp(k, "cache", 5) == 0 ? K_R0 + SY_JR_CACHE
                                            : K_NONE;
    case 6: return memcmp(k, "stream", 6) == 0 ? K_STREAM : memcmp(k, "prompt", 6) == 0 ? K_PROMPT : K_NONE;
    case 7: return memcmp(k, "timeout", 7) == 0 ? K_R0 + SY_JR_TIMEOUT : K_NONE;
    case 8: return memcmp(k, "messages", 8) == 0 ? K_MESSAGES : K_NONE;
    case 9: return memcmp(k, "fallbacks", 9) == 0 ? K_R0 + SY_JR_FALLBACKS : K_NONE;
    case 10: return memcmp(k, "guardrails", 10) == 0 ? K_R0 + SY_JR_GUARDRAILS : K_NONE;
    case 11: return memcmp(k, "num_retries", 11) == 0 ? K_R0 + SY_JR_NUM_RETRIES : K_NONE;
    case 12: return memcmp(k, "mock_timeout", 12) == 0 ? K_R0 + SY_JR_MOCK_TIMEOUT : K_NONE;
    case 13: return memcmp(k, "include_usage", 13) == 0 ? K_INCLUDE_USAGE : K_NONE;
    case 14:
        return memcmp(k, "stream_options", 14) == 0   ? K_STREAM_OPTIONS
               : memcmp(k, "stream_timeout", 14) == 0 ? K_R0 + SY_JR_STREAM_TIMEOUT
                                                      : K_NONE;
    case 17: return memcmp(k, "disable_fallbacks", 17) == 0 ? K_R0 + SY_JR_DISABLE_FALLBACKS : K_NONE;
    case 20: return memcmp(k, "previous_response_id", 20) == 0 ? K_PREV_RESPONSE : K_NONE;
    case 22: return memcmp(k, "mock_testing_fallbacks", 22) == 0 ? K_R0 + SY_JR_MOCK_TESTING_FALLBACKS : K_NONE;
    case 29: return memcmp(k, "mock_testing_rate_limit_error", 29) == 0 ? K_R0 + SY_JR_MOCK_RATE_LIMIT : K_NONE;
    case 24:
        return memcmp(k, "context_window_fallbacks", 24) == 0   ? K_R0 + SY_JR_CONTEXT_WINDOW_FALLBACKS
               : memcmp(k, "content_policy_fallbacks", 24) == 0 ? K_R0 + SY_JR_CONTENT_POLICY_FALLBACKS
                                                                : K_NONE;
    default: return K_NONE;
    }
}

/* Key id of the key string span [ks, ke) (with quotes), decoding escapes when
 * it has a backslash: "mod\u0065l" is "model" to every JSON reader. */
static int key_id(const char *p, size_t ks, size_t ke)
{
    if (!memchr(p + ks + 1, '\\', ke - ks - 2))
        return kid(p + ks + 1, ke - ks - 2);
    char buf[32];
    long l = sy_jstr_decode(p + ks, ke - ks, buf, sizeof buf);
    return l < 0 ? K_NONE : kid(buf, (size_t)l);
}

static struct sy_jspan *slot(struct sy_jscan *t, int k)
{
    switch (k) {
    case K_MODEL: return &t->model;
    case K_STREAM: return &t->stream;
    case K_STREAM_OPTIONS: return &t->stream_options;
    case K_MESSAGES: return &t->messages;
    case K_INPUT: return &t->input;
    case K_PROMPT: return &t->prompt;
    case K_USER: return &t->user;
    case K_N: return &t->n;
    case K_STORE: return &t->store;
    case K_PREV_RESPONSE: return &t->previous_response_id;
    default: return &t->include_usage;
    }
}

/* mode 0: a nested object; 1: the top-level object (records its keys of
 * interest in top); 2: the top-level stream_options (records include_usage). */
static int object(struct st *s, int depth, struct sy_jscan *top, int mode)
{
    unsigned seen = 0;
    if (depth > SY_JSCAN_MAX_DEPTH)
        return fail(s, "nesting too deep");
    s->i++;
    ws(s);
    if (s->i < s->n && s->p[s->i] == '}') {
        s->i++;
        return 0;
    }
    for (;;) {
        ws(s);
        if (s->i >= s->n || s->p[s->i] != '"')
            return fail(s, "expected a string key");
        size_t ks = s->i;
        if (str(s))
            return -1;
        size_t ke = s->i;
        ws(s);
        if (s->i >= s->n || s->p[s->i] != ':')
            return fail(s, "expected ':'");
        s->i++;
        ws(s);
        size_t vs = s->i;
        if (s->i >= s->n)
            return fail(s, "unexpected end of input");
        char c = s->p[s->i];
        int k = mode ? key_id(s->p, ks, ke) : K_NONE;
        if ((mode == 1 && k == K_INCLUDE_USAGE) || (mode == 2 && k != K_INCLUDE_USAGE))
            k = K_NONE;
        if (k == K_STREAM_OPTIONS) {
            top->include_usage = (struct sy_jspan){0, 0, 0};
            if (c == '{' ? object(s, depth + 1, top, 2) : value(s, depth + 1, NULL))
                return -1;
        } else if (value(s, depth + 1, NULL)) {
            return -1;
        }
        if (k) {
            if ((seen & (1u << k)) && !top->dup)
                top->dup = kname[k];
            seen |= 1u << k;
            if (k >= K_R0) {
                top->rk[k - K_R0] = (struct sy_jspan){vs, s->i - vs, span_type(c)};
                top->rk_key_off[k - K_R0] = ks;
                top->rk_mask |= 1u << (k - K_R0);
            } else {
                *slot(top, k) = (struct sy_jspan){vs, s->i - vs, span_type(c)};
            }
        }
        int more = next_member(s, '}');
        if (more <= 0)
            return more;
    }
}

static int array(struct st *s, int depth)
{
    s->i++;
    ws(s);
    if (s->i < s->n && s->p[s->i] == ']') {
        s->i++;
        return 0;
    }
    for (;;) {
        ws(s);
        if (value(s, depth + 1, NULL))
            return -1;
        int more = next_member(s, ']');
        if (more <= 0)
            return more;
    }
}

static int value(struct st *s, int depth, struct sy_jscan *top)
{
    if (depth > SY_JSCAN_MAX_DEPTH)
        return fail(s, "nesting too deep");
    ws(s);
    if (s->i >= s->n)
        return fail(s, "unexpected end of input");
    switch (s->p[s->i]) {
    case '{': return object(s, depth, top, top ? 1 : 0);
    case '[': return array(s, depth);
    case '"': return str(s);
    case 't': return lit(s, "true", 4);
    case 'f': return lit(s, "false", 5);
    case 'n': return lit(s, "null", 4);
    default: return num(s);
    }
}

int sy_jscan(const char *p, size_t n, struct sy_jscan *out)
{
    memset(out, 0, sizeof *out);
    struct st s = {p, n, 0, NULL};
    ws(&s);
    out->top_is_object = s.i < n && p[s.i] == '{';
    if (value(&s, 0, out) == 0) {
        ws(&s);
        if (s.i == n)
            return 0;
        fail(&s, "trailing characters after JSON value");
    }
    out->err = s.err;
    out->err_off = s.i;
    return SY_EJSON;
}

long sy_jstr_decode(const char *p, size_t len, char *out, size_t cap)
{
    if (len < 2 || p[0] != '"')
        return -1;
    size_t o = 0;
    for (size_t i = 1; i + 1 < len; i++) {
        if (o + 5 > cap)
            return -1;
        char c = p[i];
        if (c != '\\') {
            out[o++] = c;
            continue;
        }
        c = p[++i];
        switch (c) {
        case 'n': out[o++] = '\n'; break;
        case 't': out[o++] = '\t'; break;
        case 'r': out[o++] = '\r'; break;
        case 'b': out[o++] = '\b'; break;
        case 'f': out[o++] = '\f'; break;
        case 'u': {
            unsigned cp = 0;
            for (int k = 1; k <= 4; k++)
                cp = cp * 16 + (unsigned)sy_hex_val(p[i + k]);
            i += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && i + 6 < len && p[i + 1] == '\\' && p[i + 2] == 'u') {
                unsigned lo = 0;
                for (int k = 3; k <= 6; k++)
                    lo = lo * 16 + (unsigned)sy_hex_val(p[i + k]);
                if (lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                }
            }
            if (cp == 0)
                return -1;
            if (cp >= 0xD800 && cp < 0xE000)
                cp = 0xFFFD;
            o += sy_utf8_put(out + o, cp);
            break;
        }
        default: out[o++] = c; break;
        }
    }
    out[o] = 0;
    return (long)o;
}

/* Whether the key string span [ks, ke) decodes to k[0..kl). */
static int key_eq(const char *p, size_t ks, size_t ke, const char *k, size_t kl)
{
    if (!memchr(p + ks + 1, '\\', ke - ks - 2))
        return ke - ks - 2 == kl && memcmp(p + ks + 1, k, kl) == 0;
    char buf[256];
    long l = sy_jstr_decode(p + ks, ke - ks, buf, sizeof buf);
    return l >= 0 && (size_t)l == kl && memcmp(buf, k, kl) == 0;
}

struct sy_jspan sy_jscan_member(const char *p, struct sy_jspan obj, const char *key)
{
    struct sy_jspan none = {0, 0, 0}, found = none;
    if (obj.type != 'o')
        return none;
    size_t kl = strlen(key);
    struct st s = {p + obj.off, obj.len, 0, NULL};
    s.i = 1;
    for (;;) {
        ws(&s);
        if (s.i >= s.n || s.p[s.i] != '"')
            return found;
        size_t ks = s.i;
        if (str(&s))
            return found;
        size_t ke = s.i;
        ws(&s);
        s.i++; /* ':' */
        ws(&s);
        size_t vs = s.i;
        char c = s.p[s.i];
        if (value(&s, 1, NULL))
            return found;
        if (key_eq(p + obj.off, ks, ke, key, kl))
            found = (struct sy_jspan){obj.off + vs, s.i - vs, span_type(c)};
        ws(&s);
        if (s.i >= s.n || s.p[s.i] != ',')
            return found;
        s.i++;
    }
}

int sy_jscan_list_next(const char *p, struct sy_jspan arr, size_t *pos, struct sy_jspan *name)
{
    if (arr.type != 'a')
        return -1;
    struct st s = {p + arr.off, arr.len, *pos ? *pos : 1, NULL};
    ws(&s);
    if (s.i < s.n && s.p[s.i] == ',') {
        s.i++;
        ws(&s);
    }
    if (s.i >= s.n || s.p[s.i] == ']')
        return 0;
    size_t vs = s.i;
    char c = s.p[s.i];
    if (c == '"') {
        if (str(&s))
            return -1;
        *name = (struct sy_jspan){arr.off + vs, s.i - vs, 's'};
    } else if (c == '{') {
        /* {"group": [...]}: the first key names the group */
        struct st k = s;
        k.i++;
        ws(&k);
        if (k.i >= k.n || k.p[k.i] != '"')
            return -1;
        size_t ks = k.i;
        if (str(&k))
            return -1;
        *name = (struct sy_jspan){arr.off + ks, k.i - ks, 's'};
        if (value(&s, 1, NULL))
            return -1;
    } else {
        return -1;
    }
    *pos = s.i;
    return 1;
}

size_t sy_jscan_strip(const char *p, size_t n, const struct sy_jscan *sc, char *out, struct sy_jspan *model)
{
    memcpy(out, p, n);
    size_t len = n;
    unsigned mask = sc->rk_mask;
    for (;;) {
        int last = -1;
        for (int k = 0; k < SY_JR__COUNT; k++)
            if ((mask & (1u << k)) && (last < 0 || sc->rk_key_off[k] > sc->rk_key_off[last]))
                last = k;
        if (last < 0)
            break;
        mask &= ~(1u << last);
        size_t ks = sc->rk_key_off[last], ve = sc->rk[last].off + sc->rk[last].len;
        struct st s = {out, len, ve, NULL};
        ws(&s);
        size_t from = ks, to = ve;
        if (s.i < len && out[s.i] == ',') {
            to = s.i + 1; /* a member follows: take its comma */
        } else {
            size_t q = ks; /* the last member: take the comma before it */
            while (q > 0 && (out[q - 1] == ' ' || out[q - 1] == '\t' || out[q - 1] == '\r' || out[q - 1] == '\n'))
                q--;
            if (q > 0 && out[q - 1] == ',')
                from = q - 1;
        }
        memmove(out + from, out + to, len - to);
        len -= to - from;
        if (model && model->type && model->off >= to)
            model->off -= to - from; /* members never overlap: the model span moves as a whole */
    }
    return len;
}
