/* jscan.c - strict one-pass JSON validator reporting top-level member spans. */
#include "gateway/jscan.h"

#include <string.h>

#include "core/errors.h"

struct st {
    const char *p;
    size_t n, i;
    const char *err;
};

static void ws(struct st *s)
{
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

static int hexv(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Validates UTF-8 too: JSON text must be UTF-8. */
static int str(struct st *s)
{
    s->i++; /* opening quote */
    while (s->i < s->n) {
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
                    if (hexv(s->p[s->i + k]) < 0)
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

static int key_is(struct st *s, size_t ks, size_t ke, const char *k)
{
    size_t kl = strlen(k);
    return ke - ks == kl + 2 && memcmp(s->p + ks + 1, k, kl) == 0;
}

static int object(struct st *s, int depth, struct sy_jscan *top)
{
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
        if (value(s, depth + 1, NULL))
            return -1;
        if (top) {
            struct sy_jspan sp = {vs, s->i - vs, span_type(c)};
            if (key_is(s, ks, ke, "model"))
                top->model = sp;
            else if (key_is(s, ks, ke, "stream"))
                top->stream = sp;
            else if (key_is(s, ks, ke, "stream_options"))
                top->stream_options = sp;
            else if (key_is(s, ks, ke, "messages"))
                top->messages = sp;
            else if (key_is(s, ks, ke, "input"))
                top->input = sp;
            else if (key_is(s, ks, ke, "prompt"))
                top->prompt = sp;
            else if (key_is(s, ks, ke, "user"))
                top->user = sp;
            else if (key_is(s, ks, ke, "n"))
                top->n = sp;
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
    case '{': return object(s, depth, top);
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

static int put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
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
                cp = cp * 16 + (unsigned)hexv(p[i + k]);
            i += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && i + 6 < len && p[i + 1] == '\\' && p[i + 2] == 'u') {
                unsigned lo = 0;
                for (int k = 3; k <= 6; k++)
                    lo = lo * 16 + (unsigned)hexv(p[i + k]);
                if (lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                }
            }
            if (cp == 0)
                return -1;
            if (cp >= 0xD800 && cp < 0xE000)
                cp = 0xFFFD;
            o += (size_t)put_utf8(out + o, cp);
            break;
        }
        default: out[o++] = c; break;
        }
    }
    out[o] = 0;
    return (long)o;
}

struct sy_jspan sy_jscan_member(const char *p, struct sy_jspan obj, const char *key)
{
    struct sy_jspan none = {0, 0, 0};
    if (obj.type != 'o')
        return none;
    struct st s = {p + obj.off, obj.len, 0, NULL};
    s.i = 1;
    for (;;) {
        ws(&s);
        if (s.i >= s.n || s.p[s.i] != '"')
            return none;
        size_t ks = s.i;
        if (str(&s))
            return none;
        size_t ke = s.i;
        ws(&s);
        s.i++; /* ':' */
        ws(&s);
        size_t vs = s.i;
        char c = s.p[s.i];
        if (value(&s, 1, NULL))
            return none;
        if (key_is(&s, ks, ke, key))
            return (struct sy_jspan){obj.off + vs, s.i - vs, span_type(c)};
        ws(&s);
        if (s.i >= s.n || s.p[s.i] != ',')
            return none;
        s.i++;
    }
}
