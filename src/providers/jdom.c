/* jdom.c - flat JSON DOM (parser) and JSON writer; see jdom.h for the layout.
 *
 * The parser is recursive descent over the source with one node array grown
 * by realloc (freed by an arena cleanup), so a document costs one or two
 * mallocs whatever its size. Validation follows RFC 8259 like jscan.c: the
 * grammar, string escapes, control characters and UTF-8 (overlongs,
 * surrogates and code points above U+10FFFF refused).
 */
#include "providers/jdom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "core/hex.h"
#include "core/pyrepr.h"
#include "core/utf8.h"

struct parser {
    const char *p, *s, *e; /* cursor, start, end */
    struct sy_jnode *n;
    uint32_t count, cap, max;
    const char *err;
    int nomem;
    int fixed; /* n is arena memory of a size that cannot be outgrown */
};

/* Documents up to this size take their nodes from the arena (no malloc). */
#define SMALL_DOC 16384u

static int fail(struct parser *ps, const char *why)
{
    if (!ps->err)
        ps->err = why;
    return -1;
}

static void ws(struct parser *ps)
{
    while (ps->p < ps->e && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t'))
        ps->p++;
}

static int64_t new_node(struct parser *ps, char type)
{
    if (ps->count == ps->cap) {
        if (ps->fixed || (ps->max && ps->count >= ps->max)) {
            ps->nomem = 1;
            return fail(ps, "too many JSON values");
        }
        uint32_t nc = ps->cap ? ps->cap * 2 : 64;
        if (ps->max && nc > ps->max)
            nc = ps->max;
        struct sy_jnode *nn = realloc(ps->n, (size_t)nc * sizeof *nn);
        if (!nn) {
            ps->nomem = 1;
            return fail(ps, "out of memory");
        }
        ps->n = nn;
        ps->cap = nc;
    }
    struct sy_jnode *x = &ps->n[ps->count];
    x->off = (uint32_t)(ps->p - ps->s);
    x->len = 0;
    x->next = 0;
    x->kids = 0;
    x->type = type;
    x->esc = 0;
    return ps->count++;
}

/* 8 bytes at once: nonzero when any byte of w is '"', '\\', a control
 * character or >= 0x80 (the bytes a string scan must look at one by one). */
static inline uint64_t special8(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
    uint64_t zq = (q - ones) & ~q, zb = (b - ones) & ~b, lt = w - ones * 0x20;
    return (zq | zb | lt | w) & high;
}

/* Scan the inside of a string starting after its opening quote: the pointer
 * past the closing quote, or NULL with *why set. *esc: a backslash was seen. */
static const unsigned char *scan_str(const unsigned char *p, const unsigned char *e, int *esc, const char **why)
{
    for (;;) {
        /* the first byte to look at: 8 at a time (the lowest flagged byte of special8 is
         * exact: the borrows that can flag others only run upwards from it) */
        for (;;) {
            if (e - p >= 8) {
                uint64_t m = special8(p);
                if (m) {
                    p += __builtin_ctzll(m) >> 3;
                    break;
                }
                p += 8;
                continue;
            }
            while (p < e && *p >= 0x20 && *p != '"' && *p != '\\' && *p < 0x80)
                p++;
            break;
        }
        if (p >= e) {
            *why = "unterminated string";
            return NULL;
        }
        unsigned c = *p;
        if (c == '"')
            return p + 1;
        if (c < 0x20) {
            *why = "control character in string";
            return NULL;
        }
        if (c == '\\') {
            *esc = 1;
            if (p + 1 >= e) {
                *why = "unterminated string";
                return NULL;
            }
            switch (p[1]) {
            case '"':
            case '\\':
            case '/':
            case 'b':
            case 'f':
            case 'n':
            case 'r':
            case 't': p += 2; break;
            case 'u':
                if (e - p < 6 || sy_hex_val(p[2]) < 0 || sy_hex_val(p[3]) < 0 || sy_hex_val(p[4]) < 0 ||
                    sy_hex_val(p[5]) < 0) {
                    *why = "bad \\u escape";
                    return NULL;
                }
                p += 6;
                break;
            default: *why = "bad escape"; return NULL;
            }
            continue;
        }
        size_t l = sy_utf8_seq(p, (size_t)(e - p));
        if (!l) {
            *why = "invalid UTF-8";
            return NULL;
        }
        p += l;
    }
}

static int parse_string(struct parser *ps)
{
    int64_t i = new_node(ps, 's');
    if (i < 0)
        return -1;
    int esc = 0;
    const char *why = NULL;
    const unsigned char *q = scan_str((const unsigned char *)ps->p + 1, (const unsigned char *)ps->e, &esc, &why);
    if (!q)
        return fail(ps, why);
    ps->n[i].len = (uint32_t)((const char *)q - ps->p);
    ps->n[i].esc = (char)esc;
    ps->p = (const char *)q;
    return 0;
}

size_t sy_jdom_string_len(const char *p, size_t n, int *esc)
{
    int e = 0;
    const char *why;
    if (!n || p[0] != '"')
        return 0;
    const unsigned char *q = scan_str((const unsigned char *)p + 1, (const unsigned char *)p + n, &e, &why);
    if (esc)
        *esc = e;
    return q ? (size_t)((const char *)q - p) : 0;
}

static int parse_number(struct parser *ps)
{
    int64_t i = new_node(ps, 'n');
    if (i < 0)
        return -1;
    const char *p = ps->p, *e = ps->e;
    if (p < e && *p == '-')
        p++;
    if (p >= e)
        return fail(ps, "bad number");
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    } else {
        return fail(ps, "bad number");
    }
    if (p < e && *p == '.') {
        p++;
        if (p >= e || *p < '0' || *p > '9')
            return fail(ps, "bad number");
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-'))
            p++;
        if (p >= e || *p < '0' || *p > '9')
            return fail(ps, "bad number");
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    }
    ps->n[i].len = (uint32_t)(p - ps->p);
    ps->p = p;
    return 0;
}

static int parse_value(struct parser *ps, int depth);

static int parse_lit(struct parser *ps, const char *lit, size_t n, char type)
{
    if ((size_t)(ps->e - ps->p) < n || memcmp(ps->p, lit, n) != 0)
        return fail(ps, "unexpected character");
    int64_t i = new_node(ps, type);
    if (i < 0)
        return -1;
    ps->n[i].len = (uint32_t)n;
    ps->p += n;
    return 0;
}

static int parse_container(struct parser *ps, int depth, char type)
{
    if (depth >= SY_JDOM_MAX_DEPTH)
        return fail(ps, "nesting too deep");
    int64_t i = new_node(ps, type);
    if (i < 0)
        return -1;
    char close = type == 'o' ? '}' : ']';
    ps->p++;
    ws(ps);
    uint32_t prev = 0, kids = 0;
    if (ps->p < ps->e && *ps->p == close) {
        ps->p++;
    } else {
        for (;;) {
            uint32_t first = ps->count;
            if (type == 'o') {
                if (ps->p >= ps->e || *ps->p != '"')
                    return fail(ps, "expected a key");
                if (parse_string(ps))
                    return -1;
                ws(ps);
                if (ps->p >= ps->e || *ps->p != ':')
                    return fail(ps, "expected ':'");
                ps->p++;
                ws(ps);
                ps->n[first].next = ps->count; /* key -> value */
                uint32_t v = ps->count;
                if (parse_value(ps, depth + 1))
                    return -1;
                if (prev)
                    ps->n[prev].next = first;
                prev = v;
            } else {
                if (parse_value(ps, depth + 1))
                    return -1;
                if (prev)
                    ps->n[prev].next = first;
                prev = first;
            }
            kids++;
            ws(ps);
            if (ps->p >= ps->e)
                return fail(ps, "unterminated container");
            if (*ps->p == ',') {
                ps->p++;
                ws(ps);
                continue;
            }
            if (*ps->p == close) {
                ps->p++;
                break;
            }
            return fail(ps, "expected ',' or a closing bracket");
        }
    }
    ps->n[i].kids = kids;
    ps->n[i].len = (uint32_t)(ps->p - ps->s) - ps->n[i].off;
    return 0;
}

static int parse_value(struct parser *ps, int depth)
{
    if (ps->p >= ps->e)
        return fail(ps, "unexpected end");
    switch (*ps->p) {
    case '{': return parse_container(ps, depth, 'o');
    case '[': return parse_container(ps, depth, 'a');
    case '"': return parse_string(ps);
    case 't': return parse_lit(ps, "true", 4, 't');
    case 'f': return parse_lit(ps, "false", 5, 'f');
    case 'n': return parse_lit(ps, "null", 4, 'z');
    default:
        if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
            return parse_number(ps);
        return fail(ps, "unexpected character");
    }
}

static uint32_t khash(const char *k, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)k[i]) * 16777619u;
    return h;
}

/* Build d->root_idx (see jdom.h). Later duplicates replace earlier ones. */
static void index_root(struct sy_jdoc *d, struct sy_arena *a)
{
    if (d->n[0].type != 'o' || d->n[0].kids < 4 || d->n[0].kids > 4096)
        return;
    for (uint32_t k = 1; k; k = d->n[k + 1].next)
        if (d->n[k].esc)
            return;
    uint32_t size = 16;
    while (size < d->n[0].kids * 2)
        size *= 2;
    uint32_t *t = sy_arena_alloc(a, size * sizeof *t);
    memset(t, 0, size * sizeof *t);
    for (uint32_t k = 1; k; k = d->n[k + 1].next) {
        const char *kp = d->src + d->n[k].off + 1;
        size_t kl = d->n[k].len - 2;
        uint32_t h = khash(kp, kl) & (size - 1);
        while (t[h]) {
            const struct sy_jnode *o = &d->n[t[h]];
            if (o->len == d->n[k].len && memcmp(d->src + o->off + 1, kp, kl) == 0)
                break; /* a duplicate: the later one wins */
            h = (h + 1) & (size - 1);
        }
        t[h] = k;
    }
    d->root_idx = t;
    d->root_mask = size - 1;
}

int sy_jdom_parse(struct sy_jdoc *d, const char *p, size_t len, struct sy_arena *a, uint32_t max_nodes)
{
    memset(d, 0, sizeof *d);
    d->src = p;
    d->src_len = len;
    if (len >= UINT32_MAX) {
        d->err = "document too large";
        return SY_ENOSPC;
    }
    struct parser ps = {.p = p, .s = p, .e = p + len, .max = max_nodes};
    int in_arena = len <= SMALL_DOC; /* a document has at most len/2 + 1 values */
    if (in_arena) {
        ps.cap = (uint32_t)(len / 2 + 2);
        if (ps.max && ps.cap > ps.max)
            ps.cap = ps.max;
        ps.n = sy_arena_alloc(a, (size_t)ps.cap * sizeof *ps.n);
        ps.fixed = 1;
    }
    ws(&ps);
    int rc = parse_value(&ps, 0);
    if (!rc) {
        ws(&ps);
        if (ps.p != ps.e)
            rc = fail(&ps, "trailing characters");
    }
    if (rc) {
        if (!in_arena)
            free(ps.n);
        d->err = ps.err;
        d->err_off = (size_t)(ps.p - p);
        return ps.nomem ? SY_ENOSPC : SY_EJSON;
    }
    if (!in_arena)
        sy_arena_defer(a, free, ps.n);
    d->n = ps.n;
    d->count = ps.count;
    index_root(d, a);
    return 0;
}

/* ---- reading ------------------------------------------------------------ */

static uint32_t hex4(const char *p)
{
    unsigned v = 0;
    sy_hex4(p, &v); /* checked by the scan */
    return v;
}

/* Decode the inside of a validated string s[0..n) into o (room for n bytes:
 * decoding never grows a string). Returns the decoded length. */
static size_t decode(const char *s, size_t n, char *o)
{
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] != '\\') {
            o[k++] = s[i++];
            continue;
        }
        char c = s[i + 1];
        i += 2;
        switch (c) {
        case 'b': o[k++] = '\b'; break;
        case 'f': o[k++] = '\f'; break;
        case 'n': o[k++] = '\n'; break;
        case 'r': o[k++] = '\r'; break;
        case 't': o[k++] = '\t'; break;
        case 'u': {
            uint32_t cp = hex4(s + i);
            i += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u') {
                uint32_t lo = hex4(s + i + 2);
                if (lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                } else {
                    cp = 0xFFFD;
                }
            } else if (cp >= 0xD800 && cp <= 0xDFFF) {
                cp = 0xFFFD;
            }
            k += sy_utf8_put(o + k, cp);
            break;
        }
        default: o[k++] = c; break; /* " \ / */
        }
    }
    return k;
}

const char *sy_jdom_str(const struct sy_jdoc *d, uint32_t i, struct sy_arena *a, size_t *len)
{
    if (!i || i >= d->count || d->n[i].type != 's')
        return NULL;
    const char *s = d->src + d->n[i].off + 1;
    size_t n = d->n[i].len - 2;
    char *o = sy_arena_alloc(a, n + 1);
    size_t k = d->n[i].esc ? decode(s, n, o) : (memcpy(o, s, n), n);
    o[k] = 0;
    if (len)
        *len = k;
    return o;
}

const char *sy_jdom_view(const struct sy_jdoc *d, uint32_t i, struct sy_arena *a, size_t *n)
{
    *n = 0;
    if (!i || i >= d->count || d->n[i].type != 's')
        return NULL;
    if (!d->n[i].esc) {
        *n = d->n[i].len - 2;
        return d->src + d->n[i].off + 1;
    }
    return sy_jdom_str(d, i, a, n);
}

/* Compare the decoded string node i with lit[0..ln). */
static int str_eqn(const struct sy_jdoc *d, uint32_t i, const char *lit, size_t ln)
{
    const struct sy_jnode *x = &d->n[i];
    const char *s = d->src + x->off + 1;
    size_t n = x->len - 2;
    if (!x->esc)
        return n == ln && memcmp(s, lit, n) == 0;
    if (n > 4 * ln + 64)
        return 0; /* an escape is at most 12 source bytes for 4 decoded ones */
    char tmp[1024];
    char *o = n <= sizeof tmp ? tmp : malloc(n);
    if (!o)
        return 0;
    size_t k = decode(s, n, o);
    int eq = k == ln && memcmp(o, lit, k) == 0;
    if (o != tmp)
        free(o);
    return eq;
}

int sy_jdom_str_eq(const struct sy_jdoc *d, uint32_t i, const char *lit)
{
    if (!i || i >= d->count || d->n[i].type != 's')
        return 0;
    return str_eqn(d, i, lit, strlen(lit));
}

uint32_t sy_jdom_get(const struct sy_jdoc *d, uint32_t obj, const char *key)
{
    if (obj >= d->count || d->n[obj].type != 'o')
        return 0;
    size_t kl = strlen(key);
    uint32_t found = 0;
    if (obj == 0 && d->root_idx) {
        for (uint32_t h = khash(key, kl) & d->root_mask;; h = (h + 1) & d->root_mask) {
            uint32_t k = d->root_idx[h];
            if (!k)
                return 0;
            const struct sy_jnode *x = &d->n[k];
            if (x->len - 2 == kl && memcmp(d->src + x->off + 1, key, kl) == 0)
                return k + 1;
        }
    }
    for (uint32_t k = sy_jdom_first(d, obj); k; k = sy_jdom_next_key(d, k)) {
        const struct sy_jnode *x = &d->n[k];
        if (!x->esc) { /* the usual key: compare the raw bytes */
            if (x->len - 2 == kl && (kl == 0 || d->src[x->off + 1] == key[0]) &&
                memcmp(d->src + x->off + 1, key, kl) == 0)
                found = k + 1;
        } else if (str_eqn(d, k, key, kl)) {
            found = k + 1;
        }
    }
    return found;
}

int sy_jdom_num(const struct sy_jdoc *d, uint32_t i, double *out)
{
    if (!i || i >= d->count || d->n[i].type != 'n')
        return 0;
    char tmp[64];
    size_t n = d->n[i].len;
    if (n >= sizeof tmp) {
        char *b = malloc(n + 1);
        if (!b)
            return 0;
        memcpy(b, d->src + d->n[i].off, n);
        b[n] = 0;
        *out = strtod(b, NULL);
        free(b);
        return 1;
    }
    memcpy(tmp, d->src + d->n[i].off, n);
    tmp[n] = 0;
    *out = strtod(tmp, NULL);
    return 1;
}

int sy_jdom_i64(const struct sy_jdoc *d, uint32_t i, int64_t *out)
{
    if (!i || i >= d->count || d->n[i].type != 'n')
        return 0;
    const char *p = d->src + d->n[i].off;
    size_t n = d->n[i].len;
    int neg = 0;
    size_t k = 0;
    if (p[0] == '-') {
        neg = 1;
        k = 1;
    }
    uint64_t v = 0;
    for (; k < n; k++) {
        if (p[k] < '0' || p[k] > '9') {
            /* 1.0, 1e3: integral values written as floats */
            double dv;
            sy_jdom_num(d, i, &dv);
            if (dv != floor(dv) || fabs(dv) > 9.2e18)
                return 0;
            *out = (int64_t)dv;
            return 1;
        }
        if (v > (UINT64_MAX - 9) / 10)
            return 0;
        v = v * 10 + (uint64_t)(p[k] - '0');
    }
    if ((!neg && v > INT64_MAX) || (neg && v > (uint64_t)INT64_MAX + 1))
        return 0;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 1;
}

int sy_jdom_bool(const struct sy_jdoc *d, uint32_t i, int *out)
{
    if (!i || i >= d->count)
        return 0;
    if (d->n[i].type == 't')
        *out = 1;
    else if (d->n[i].type == 'f')
        *out = 0;
    else
        return 0;
    return 1;
}

/* ---- writing ------------------------------------------------------------ */

void sy_jw_init(struct sy_jw *w, struct sy_buf *b)
{
    w->b = b;
    w->err = 0;
    w->depth = 0;
    w->first[0] = 1;
    w->after_key = 0;
}

static void put(struct sy_jw *w, const char *s, size_t n)
{
    if (!w->err && sy_buf_append(w->b, s, n))
        w->err = SY_ENOSPC;
}

/* Separator before a value or key. */
static void sep(struct sy_jw *w)
{
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (!(w->first[w->depth] & 1))
        put(w, ",", 1);
    w->first[w->depth] &= (unsigned char)~1u;
}

/* Escape s[0..n) into the buffer: JSON escapes, invalid UTF-8 -> U+FFFD. */
static void esc(struct sy_jw *w, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *e = p + n, *run = p;
    while (p < e) {
        if (e - p >= 8) {
            uint64_t m = special8(p);
            if (!m) {
                p += 8;
                continue;
            }
            p += __builtin_ctzll(m) >> 3;
        }
        unsigned c = *p;
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            p++;
            continue;
        }
        size_t l = 1;
        if (c >= 0x80) {
            l = sy_utf8_seq(p, (size_t)(e - p));
            if (l) {
                p += l;
                continue;
            }
        }
        put(w, (const char *)run, (size_t)(p - run));
        char u[8];
        switch (c) {
        case '"': put(w, "\\\"", 2); break;
        case '\\': put(w, "\\\\", 2); break;
        case '\n': put(w, "\\n", 2); break;
        case '\r': put(w, "\\r", 2); break;
        case '\t': put(w, "\\t", 2); break;
        default:
            if (c < 0x20) {
                memcpy(u, "\\u00", 4);
                u[4] = sy_hex_lc[c >> 4];
                u[5] = sy_hex_lc[c & 15];
                put(w, u, 6);
            } else {
                put(w, "\xEF\xBF\xBD", 3); /* invalid UTF-8 byte */
            }
        }
        p++;
        run = p;
    }
    put(w, (const char *)run, (size_t)(p - run));
}

static void open_(struct sy_jw *w, const char *c)
{
    sep(w);
    put(w, c, 1);
    if (w->depth < SY_JDOM_MAX_DEPTH)
        w->first[++w->depth] = 1;
    else
        w->err = SY_EINVAL;
}

void sy_jw_obj(struct sy_jw *w)
{
    open_(w, "{"); /* first[depth]: bit 0 no member yet, bit 1 an array */
}

void sy_jw_arr(struct sy_jw *w)
{
    open_(w, "[");
    w->first[w->depth] |= 2; /* bit 1: this level is an array */
}

void sy_jw_end(struct sy_jw *w)
{
    if (w->depth <= 0) {
        w->err = SY_EINVAL;
        return;
    }
    int arr = w->first[w->depth] & 2;
    w->depth--;
    put(w, arr ? "]" : "}", 1);
}

void sy_jw_keyn(struct sy_jw *w, const char *k, size_t n)
{
    sep(w);
    put(w, "\"", 1);
    esc(w, k, n);
    put(w, "\":", 2);
    w->after_key = 1;
}

void sy_jw_key(struct sy_jw *w, const char *k)
{
    sy_jw_keyn(w, k, strlen(k));
}

void sy_jw_str(struct sy_jw *w, const char *s, size_t n)
{
    sep(w);
    put(w, "\"", 1);
    esc(w, s, n);
    put(w, "\"", 1);
}

void sy_jw_cstr(struct sy_jw *w, const char *s)
{
    if (!s)
        sy_jw_null(w);
    else
        sy_jw_str(w, s, strlen(s));
}

void sy_jw_int(struct sy_jw *w, int64_t v)
{
    char t[24];
    char *e = t + sizeof t, *p = e;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do
        *--p = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0)
        *--p = '-';
    sy_jw_raw(w, p, (size_t)(e - p));
}

void sy_jw_double(struct sy_jw *w, double v)
{
    if (!isfinite(v)) {
        sy_jw_null(w);
        return;
    }
    char t[SY_PY_FLOAT_MAX];
    size_t n = sy_py_float_str(t, v); /* as json.dumps: "1000.0", "0.1", "1e-05" */
    sy_jw_raw(w, t, n);
}

void sy_jw_bool(struct sy_jw *w, int v)
{
    if (v)
        sy_jw_raw(w, "true", 4);
    else
        sy_jw_raw(w, "false", 5);
}

void sy_jw_null(struct sy_jw *w)
{
    sy_jw_raw(w, "null", 4);
}

void sy_jw_raw(struct sy_jw *w, const char *json, size_t n)
{
    sep(w);
    put(w, json, n);
}

void sy_jw_node(struct sy_jw *w, const struct sy_jdoc *d, uint32_t i)
{
    if (!i || i >= d->count) {
        sy_jw_null(w);
        return;
    }
    sy_jw_raw(w, d->src + d->n[i].off, d->n[i].len);
}

void sy_jw_node_as_str(struct sy_jw *w, const struct sy_jdoc *d, uint32_t i)
{
    if (!i || i >= d->count) {
        sy_jw_str(w, "", 0);
        return;
    }
    if (d->n[i].type == 's') {
        sy_jw_raw(w, d->src + d->n[i].off, d->n[i].len);
        return;
    }
    sy_jw_str(w, d->src + d->n[i].off, d->n[i].len);
}

void sy_jw_join(struct sy_jw *w, const struct sy_jdoc *d, const uint32_t *nodes, size_t k, const char *sep,
                struct sy_arena *a)
{
    if (k == 1) {
        sy_jw_node(w, d, nodes[0]);
        return;
    }
    size_t sl = strlen(sep), total = 2;
    for (size_t i = 0; i < k; i++)
        total += d->n[nodes[i]].len - 2 + (i ? sl : 0);
    char *b = sy_arena_alloc(a, total), *p = b;
    *p++ = '"';
    for (size_t i = 0; i < k; i++) {
        if (i) {
            memcpy(p, sep, sl);
            p += sl;
        }
        memcpy(p, d->src + d->n[nodes[i]].off + 1, d->n[nodes[i]].len - 2);
        p += d->n[nodes[i]].len - 2;
    }
    *p++ = '"';
    sy_jw_raw(w, b, (size_t)(p - b));
}
