/* texts.c - what a guardrail reads: the texts and tools of a request, an
 * answer or one stream event in any of the gateway's dialects, each with the
 * span of the JSON string it came from; and a verdict's replacements spliced
 * back into the body (guardrail.h, "Texts").
 *
 * Reading. No tree is built: a body may be 32 MB and this runs on every
 * guarded call. A small cursor reader walks only the members that hold texts:
 * an object is read once to find the last occurrence of each key of interest
 * (the one json-c and Python keep; keys compared after decoding their
 * escapes, so "con\u0074ent" is "content"), then those values are visited in
 * body order. Every other value is skipped by a validating scan (strict RFC
 * 8259 grammar, nesting capped at MAX_DEPTH, eight string bytes at a time), so
 * the first pass over the root object validates the whole body before any
 * text is taken, and each byte is looked at a bounded number of times (once
 * per level of interest, at most six): linear in the body, no recursion on
 * hostile nesting. Strings are decoded leniently: a byte that does not start
 * valid UTF-8 becomes U+FFFD, as a Python decoder with errors="replace"
 * would read it, so an answer with broken bytes is still checked instead of
 * slipping through unread. Values of the wrong type (a number where a string
 * belongs, `content: null`) are skipped, never an error.
 *
 * Storage. Decoded texts are NUL-terminated copies in chunks listed in
 * t->strs (a chunk starts with its fill and size); a text larger than a
 * quarter chunk gets a chunk of its own. Each read empties t first and keeps
 * its first chunk and arrays, so one struct sy_gtexts (zeroed before first
 * use) serves every event of a stream without allocating.
 *
 * msg: the index of the message (request messages[] / input[] items), of the
 * choice or output item (answers), or of the choice / content block / output
 * item a stream piece extends; -1 for texts outside the list (a /v1/messages
 * `system`, a Responses `instructions`). A stream's chat tool call pieces use
 * choice * 65536 + the call's `index` (just the call's index on choice 0),
 * for their segments and their tool alike.
 *
 * Tool inputs that are JSON objects (Anthropic tool_use.input): each string
 * inside, keys and values, is a SY_GK_TOOL_ARGS segment with its own span,
 * so a masking verdict reaches them; the tool (answers) carries the whole
 * object's text as args.
 *
 * Splicing writes each replacement as a JSON string (quotes, backslashes and
 * control characters escaped, invalid UTF-8 as \ufffd, other non-ASCII raw)
 * over its segment's span, in body order, every other byte copied as is.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/hex.h"
#include "core/utf8.h"
#include "guardrails/guardrail.h"

#define MAX_DEPTH 128
#define CHUNK     16384

/* ---- storage ------------------------------------------------------------ */

struct chunk {
    size_t used, cap;
    char data[];
};

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    size_t nc = *cap ? *cap * 2 : 16;
    while (nc < need)
        nc *= 2;
    void *np = realloc(p, nc * elem);
    if (!np)
        return NULL;
    *cap = nc;
    return np;
}

/* n bytes of t's text storage, NULL when out of memory. */
static char *t_alloc(struct sy_gtexts *t, size_t n)
{
    if (t->nstrs) {
        struct chunk *c = (struct chunk *)t->strs[t->nstrs - 1];
        if (c->cap - c->used >= n) {
            char *p = c->data + c->used;
            c->used += n;
            return p;
        }
    }
    char **ns = grow(t->strs, &t->strcap, t->nstrs + 1, sizeof *t->strs);
    if (!ns)
        return NULL;
    t->strs = ns;
    int own = n > CHUNK / 4;
    size_t cap = own ? n : CHUNK;
    struct chunk *c = malloc(sizeof *c + cap);
    if (!c)
        return NULL;
    c->cap = cap;
    c->used = n;
    if (own && t->nstrs) { /* keep the current chunk last: it still has room */
        t->strs[t->nstrs] = t->strs[t->nstrs - 1];
        t->strs[t->nstrs - 1] = (char *)c;
    } else {
        t->strs[t->nstrs] = (char *)c;
    }
    t->nstrs++;
    return c->data;
}

/* Empty t for a read of an n-byte body: keep the arrays, and one chunk big
 * enough for the body's texts (decoded texts are never longer than their
 * JSON strings, NULs included, so one chunk of about n bytes holds them all:
 * one allocation per read, none when t is reused for events of a stream;
 * only invalid UTF-8, which grows, needs another). */
static void t_reset(struct sy_gtexts *t, size_t n)
{
    t->nseg = t->ntool = 0;
    size_t want = n + 64 > 256 ? n + 64 : 256;
    struct chunk *keep = NULL;
    for (size_t i = 0; i < t->nstrs; i++) {
        struct chunk *c = (struct chunk *)t->strs[i];
        if (!keep && c->cap >= want && (c->cap <= CHUNK || c->cap / 4 <= want)) {
            keep = c; /* not one far larger than needed: memory goes back */
            c->used = 0;
        } else {
            free(c);
        }
    }
    t->nstrs = 0;
    if (!keep && (keep = malloc(sizeof *keep + want)) != NULL) {
        keep->cap = want;
        keep->used = 0;
    }
    if (!keep)
        return; /* out of memory: t_alloc tries again and reports it */
    char **ns = grow(t->strs, &t->strcap, 1, sizeof *t->strs);
    if (!ns) {
        free(keep);
        return;
    }
    t->strs = ns;
    t->strs[t->nstrs++] = (char *)keep;
}

void sy_gtexts_free(struct sy_gtexts *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nstrs; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t->seg);
    free(t->tool);
    memset(t, 0, sizeof *t);
}

/* ---- scanning ----------------------------------------------------------- */

/* A value in the body: [a, b), its type ('o' 'a' 's' 'n' 't' 'f' 'z'); type 0
 * absent. */
struct sp {
    size_t a, b;
    char t;
};

/* Ends of values already scanned (see memo_put), direct-mapped by start
 * offset: a + 1 (0 empty) and the end. */
struct memo {
    uint32_t a1, b;
};

struct rd {
    const unsigned char *s;
    size_t n;
    struct sy_gtexts *t;
    int skip_system, skip_tool;
    int oom;
    struct memo *memo; /* NULL: none */
    uint32_t mmask;
};

/* The validating pass over the root records where the outer containers
 * (depth 3 or less: the root, messages[], each message, its content list)
 * and the long strings end, so the later walk skips them in one step
 * instead of scanning them again: the bytes of a long text are scanned twice
 * (validated, decoded), not once per level. A lost entry (a collision) only
 * costs a scan. */
#define MEMO_DEPTH 3
#define MEMO_STR   128

static inline uint32_t memo_slot(const struct rd *r, size_t a)
{
    uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 40) & r->mmask;
}

static inline void memo_put(const struct rd *r, size_t a, size_t b)
{
    struct memo *m = &r->memo[memo_slot(r, a)];
    m->a1 = (uint32_t)a + 1;
    m->b = (uint32_t)b;
}

static inline size_t memo_get(const struct rd *r, size_t a)
{
    const struct memo *m = &r->memo[memo_slot(r, a)];
    return m->a1 == (uint32_t)a + 1 ? m->b : 0;
}

static inline size_t ws(const struct rd *r, size_t i)
{
    while (i < r->n && (r->s[i] == ' ' || r->s[i] == '\n' || r->s[i] == '\r' || r->s[i] == '\t'))
        i++;
    return i;
}

/* Nonzero when one of the 8 bytes at p is '"', '\\' or a control character;
 * the lowest flagged byte is exact (borrows only run upwards from it). Bytes
 * >= 0x80 are not flagged: strings are read leniently (see the top). */
static inline uint64_t special8(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
    uint64_t zq = (q - ones) & ~q, zb = (b - ones) & ~b, lt = (w - ones * 0x20) & ~w;
    return (zq | zb | lt) & high;
}

/* The string at s[i] == '"': the offset past its closing quote, 0 when it is
 * not a valid string (bad escape, control character, unterminated). *esc: it
 * has a backslash. */
static size_t str_end(const struct rd *r, size_t i, int *esc)
{
    const unsigned char *s = r->s;
    size_t n = r->n;
    i++;
    for (;;) {
        while (n - i >= 8) {
            uint64_t m = special8(s + i);
            if (m) {
                i += (size_t)__builtin_ctzll(m) >> 3;
                goto look;
            }
            i += 8;
        }
        while (i < n && s[i] >= 0x20 && s[i] != '"' && s[i] != '\\')
            i++;
    look:
        if (i >= n || s[i] < 0x20)
            return 0;
        if (s[i] == '"')
            return i + 1;
        /* a backslash */
        *esc = 1;
        if (i + 1 >= n)
            return 0;
        switch (s[i + 1]) {
        case '"':
        case '\\':
        case '/':
        case 'b':
        case 'f':
        case 'n':
        case 'r':
        case 't': i += 2; break;
        case 'u':
            if (n - i < 6 || sy_hex_val(s[i + 2]) < 0 || sy_hex_val(s[i + 3]) < 0 || sy_hex_val(s[i + 4]) < 0 ||
                sy_hex_val(s[i + 5]) < 0)
                return 0;
            i += 6;
            break;
        default: return 0;
        }
    }
}

static size_t num_end(const struct rd *r, size_t i)
{
    const unsigned char *s = r->s;
    size_t n = r->n;
    if (i < n && s[i] == '-')
        i++;
    if (i >= n)
        return 0;
    if (s[i] == '0') {
        i++;
    } else if (s[i] >= '1' && s[i] <= '9') {
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    } else {
        return 0;
    }
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || s[i] < '0' || s[i] > '9')
            return 0;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= n || s[i] < '0' || s[i] > '9')
            return 0;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    return i;
}

/* One value starting at i (no leading space): the offset past it and its
 * type in *type, or 0 when it is not valid JSON or nests deeper than
 * MAX_DEPTH. Iterative: a stack of the closers expected. */
static size_t val_end(const struct rd *r, size_t i, char *type)
{
    const unsigned char *s = r->s;
    size_t n = r->n;
    unsigned char stack[MAX_DEPTH];
    size_t start[MAX_DEPTH];
    int d = 0, esc = 0;
    if (i >= n)
        return 0;
    *type = s[i] == '{'   ? 'o'
            : s[i] == '[' ? 'a'
            : s[i] == '"' ? 's'
            : s[i] == 't' ? 't'
            : s[i] == 'f' ? 'f'
            : s[i] == 'n' ? 'z'
                          : 'n';
    if (r->memo) {
        size_t e = memo_get(r, i);
        if (e)
            return e;
    }
    for (;;) {
        /* a value at i */
        if (i >= n)
            return 0;
        switch (s[i]) {
        case '{':
        case '[':
            if (d == MAX_DEPTH)
                return 0;
            start[d] = i;
            stack[d++] = s[i] == '{' ? '}' : ']';
            i = ws(r, i + 1);
            if (i < n && s[i] == stack[d - 1]) {
                i++;
                d--;
                break;
            }
            if (stack[d - 1] == '}')
                goto key;
            continue;
        case '"': {
            size_t a = i;
            if (!(i = str_end(r, i, &esc)))
                return 0;
            if (r->memo && i - a >= MEMO_STR)
                memo_put(r, a, i);
            break;
        }
        case 't':
            if (n - i < 4 || memcmp(s + i, "true", 4))
                return 0;
            i += 4;
            break;
        case 'f':
            if (n - i < 5 || memcmp(s + i, "false", 5))
                return 0;
            i += 5;
            break;
        case 'n':
            if (n - i < 4 || memcmp(s + i, "null", 4))
                return 0;
            i += 4;
            break;
        default:
            if (!(i = num_end(r, i)))
                return 0;
        }
    after: /* a value ended at i */
        if (!d)
            return i;
        i = ws(r, i);
        if (i >= n)
            return 0;
        if (s[i] == stack[d - 1]) {
            i++;
            d--;
            if (r->memo && d <= MEMO_DEPTH)
                memo_put(r, start[d], i);
            goto after;
        }
        if (s[i] != ',')
            return 0;
        i = ws(r, i + 1);
        if (stack[d - 1] == ']')
            continue;
    key:
        if (i >= n || s[i] != '"' || !(i = str_end(r, i, &esc)))
            return 0;
        i = ws(r, i);
        if (i >= n || s[i] != ':')
            return 0;
        i = ws(r, i + 1);
    }
}

/* Iterating a container at c (an object or array span): *i is the cursor
 * (0 before the first member). For objects *key gets the member's key. 1 and
 * *v set, 0 at the end, -1 on bad JSON. */
static int next(const struct rd *r, struct sp c, size_t *i, struct sp *key, struct sp *v)
{
    size_t p = *i ? *i : c.a + 1;
    p = ws(r, p);
    if (p >= c.b)
        return -1;
    if (*i) {
        if (r->s[p] != ',')
            return r->s[p] == (c.t == 'o' ? '}' : ']') ? 0 : -1;
        p = ws(r, p + 1);
    } else if (r->s[p] == (c.t == 'o' ? '}' : ']')) {
        return 0;
    }
    if (c.t == 'o') {
        int esc = 0;
        if (p >= c.b || r->s[p] != '"')
            return -1;
        size_t e = str_end(r, p, &esc);
        if (!e)
            return -1;
        key->a = p;
        key->b = e;
        key->t = 's';
        p = ws(r, e);
        if (p >= c.b || r->s[p] != ':')
            return -1;
        p = ws(r, p + 1);
    }
    v->a = p;
    v->b = val_end(r, p, &v->t);
    if (!v->b || v->b > c.b)
        return -1;
    *i = v->b;
    return 1;
}

/* Decode the inside of the string s[0..n) into o (room for cap bytes).
 * Invalid UTF-8 bytes and lone surrogates become U+FFFD. Returns the length,
 * or SIZE_MAX when it would not fit. */
static size_t decode(const unsigned char *s, size_t n, char *o, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        if (c < 0x80 && c != '\\') {
            size_t j = i + 1;
            while (n - j >= 8) { /* 8 at a time to the next backslash or non-ASCII byte */
                uint64_t w, ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
                memcpy(&w, s + j, 8);
                uint64_t b = w ^ (ones * '\\'), m = (((b - ones) & ~b) | w) & high;
                if (m) {
                    j += (size_t)__builtin_ctzll(m) >> 3;
                    break;
                }
                j += 8;
            }
            while (j < n && s[j] < 0x80 && s[j] != '\\')
                j++;
            if (cap - k < j - i)
                return SIZE_MAX;
            memcpy(o + k, s + i, j - i);
            k += j - i;
            i = j;
            continue;
        }
        /* only invalid bytes grow (1 -> 3): while none was met k <= i and the
         * checks below cannot fail for cap >= n */
        if (c >= 0x80) {
            size_t l = sy_utf8_seq(s + i, n - i);
            if (cap - k < (l ? l : 3))
                return SIZE_MAX;
            if (l) {
                memcpy(o + k, s + i, l);
                k += l;
                i += l;
            } else {
                k += sy_utf8_put(o + k, 0xFFFD);
                i++;
            }
            continue;
        }
        char e = (char)s[i + 1]; /* validated: an escape is complete */
        if (cap - k < (e == 'u' ? 4u : 1u))
            return SIZE_MAX;
        i += 2;
        switch (e) {
        case 'b': o[k++] = '\b'; break;
        case 'f': o[k++] = '\f'; break;
        case 'n': o[k++] = '\n'; break;
        case 'r': o[k++] = '\r'; break;
        case 't': o[k++] = '\t'; break;
        case 'u': {
            unsigned cp = 0, lo = 0;
            sy_hex4((const char *)s + i, &cp);
            i += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u' &&
                sy_hex4((const char *)s + i + 2, &lo) == 0 && lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                i += 6;
            } else if (cp >= 0xD800 && cp <= 0xDFFF) {
                cp = 0xFFFD;
            }
            k += sy_utf8_put(o + k, cp);
            break;
        }
        default: o[k++] = e; break; /* " \ / */
        }
    }
    return k;
}

/* The decoded string v in t's storage (NUL-terminated), NULL when out of
 * memory. */
static const char *text_of(struct rd *r, struct sp v, size_t *len)
{
    const unsigned char *in = r->s + v.a + 1;
    size_t n = v.b - v.a - 2;
    char *o = t_alloc(r->t, n + 1);
    if (!o)
        return NULL;
    size_t k = decode(in, n, o, n);
    if (k == SIZE_MAX) { /* invalid bytes: each may become 3 */
        o = t_alloc(r->t, 3 * n + 1);
        if (!o)
            return NULL;
        k = decode(in, n, o, 3 * n);
    }
    o[k] = 0;
    *len = k;
    return o;
}

/* 1 when the key span k decodes to name. */
static int key_is(const struct rd *r, struct sp k, const char *name)
{
    size_t nl = strlen(name), raw = k.b - k.a - 2;
    const unsigned char *p = r->s + k.a + 1;
    if (raw == nl && memcmp(p, name, nl) == 0)
        return 1;
    if (raw <= nl || raw > 12 * nl || !memchr(p, '\\', raw))
        return 0;
    char tmp[12 * 64];
    if (raw > sizeof tmp)
        return 0;
    size_t got = decode(p, raw, tmp, sizeof tmp);
    return got == nl && memcmp(tmp, name, nl) == 0;
}

/* The last member of object o named names[j] into out[j] (type 0: none; a
 * null value counts as none). 0, or -1 on bad JSON. */
static int get(const struct rd *r, struct sp o, const char *const *names, size_t k, struct sp *out)
{
    memset(out, 0, k * sizeof *out);
    if (o.t != 'o')
        return 0;
    size_t i = 0;
    struct sp key, v;
    int rc;
    while ((rc = next(r, o, &i, &key, &v)) > 0) {
        for (size_t j = 0; j < k; j++)
            if (key_is(r, key, names[j])) {
                out[j] = v.t == 'z' ? (struct sp){0} : v;
                break;
            }
    }
    return rc;
}

static struct sp get1(const struct rd *r, struct sp o, const char *name)
{
    struct sp v;
    const char *names[1] = {name};
    if (get(r, o, names, 1, &v))
        v.t = 0;
    return v;
}

/* 1 when the string v decodes to lit, case-insensitively for ASCII when ci. */
static int str_is(const struct rd *r, struct sp v, const char *lit, int ci)
{
    if (v.t != 's')
        return 0;
    size_t raw = v.b - v.a - 2, nl = strlen(lit);
    char tmp[256];
    if (raw > sizeof tmp)
        return 0;
    size_t got = decode(r->s + v.a + 1, raw, tmp, sizeof tmp);
    if (got != nl)
        return 0;
    return ci ? strncasecmp(tmp, lit, nl) == 0 : memcmp(tmp, lit, nl) == 0;
}

/* The integer value of a number node, or dflt. */
static int int_of(const struct rd *r, struct sp v, int dflt)
{
    if (v.t != 'n')
        return dflt;
    long x = 0;
    size_t i = v.a;
    if (r->s[i] == '-')
        return dflt;
    for (; i < v.b && r->s[i] >= '0' && r->s[i] <= '9'; i++) {
        x = x * 10 + (r->s[i] - '0');
        if (x > 1000000000)
            return dflt;
    }
    return i == v.b ? (int)x : dflt;
}

/* ---- building the result ------------------------------------------------ */

static int skipped(const struct rd *r, int role)
{
    return (role == SY_GR_SYSTEM && r->skip_system) || (role == SY_GR_TOOL && r->skip_tool);
}

/* The string v as a segment (anything else is skipped). */
static void seg(struct rd *r, struct sp v, int role, int kind, int msg, int delta)
{
    if (v.t != 's' || skipped(r, role) || r->oom)
        return;
    struct sy_gtexts *t = r->t;
    struct sy_gseg *ns = grow(t->seg, &t->segcap, t->nseg + 1, sizeof *t->seg);
    size_t len = 0;
    const char *txt = ns ? text_of(r, v, &len) : NULL;
    if (ns)
        t->seg = ns;
    if (!txt) {
        r->oom = 1;
        return;
    }
    t->seg[t->nseg++] = (struct sy_gseg){.text = txt,
                                         .len = len,
                                         .off = v.a,
                                         .raw_len = v.b - v.a,
                                         .role = (unsigned char)role,
                                         .kind = (unsigned char)kind,
                                         .delta = (unsigned char)delta,
                                         .msg = msg};
}

/* A tool: its name (a string value, or none), its object's span, its
 * arguments (args: a string to decode, raw: JSON text to copy; either may be
 * absent). */
static void tool(struct rd *r, struct sp name, struct sp obj, struct sp args, int raw, int index)
{
    if (r->oom)
        return;
    struct sy_gtexts *t = r->t;
    struct sy_gtool *nt = grow(t->tool, &t->toolcap, t->ntool + 1, sizeof *t->tool);
    if (!nt) {
        r->oom = 1;
        return;
    }
    t->tool = nt;
    struct sy_gtool x = {.off = obj.t ? obj.a : 0, .raw_len = obj.t ? obj.b - obj.a : 0, .index = index};
    if (name.t == 's' && !(x.name = text_of(r, name, &x.name_len))) {
        r->oom = 1;
        return;
    }
    if (!x.name)
        x.name = "";
    if (args.t == 's' && !raw) {
        if (!(x.args = text_of(r, args, &x.args_len))) {
            r->oom = 1;
            return;
        }
    } else if (args.t && raw) {
        char *o = t_alloc(t, args.b - args.a + 1);
        if (!o) {
            r->oom = 1;
            return;
        }
        memcpy(o, r->s + args.a, args.b - args.a);
        o[args.b - args.a] = 0;
        x.args = o;
        x.args_len = args.b - args.a;
    }
    t->tool[t->ntool++] = x;
}

static int role_of(const struct rd *r, struct sp v)
{
    if (str_is(r, v, "user", 1))
        return SY_GR_USER;
    if (str_is(r, v, "assistant", 1))
        return SY_GR_ASSISTANT;
    if (str_is(r, v, "system", 1) || str_is(r, v, "developer", 1))
        return SY_GR_SYSTEM;
    if (str_is(r, v, "tool", 1) || str_is(r, v, "function", 1))
        return SY_GR_TOOL;
    return SY_GR_OTHER;
}

/* Every element of array a to fn (its position as the second argument). */
#define EACH(r, arr, e, k) \
    for (size_t it_##k = 0, k = 0; (arr).t == 'a' && next((r), (arr), &it_##k, &(struct sp){0}, &(e)) > 0; k++)

/* Content that is a string or a list of parts whose `text` strings are the
 * texts (chat parts of any type with a text, as LiteLLM reads them; Responses
 * input_text / output_text; Anthropic text blocks). */
static void content(struct rd *r, struct sp c, int role, int kind, int msg)
{
    if (c.t == 's') {
        seg(r, c, role, kind, msg, 0);
        return;
    }
    struct sp part;
    EACH(r, c, part, k)
    {
        (void)k;
        if (part.t == 's') /* a bare string in the list (Responses output, lenient) */
            seg(r, part, role, kind, msg, 0);
        else
            seg(r, get1(r, part, "text"), role, kind, msg, 0);
    }
}

/* Every string inside v (an object or array of a tool's input: keys and
 * values), in body order, depth-first: segments of kind SY_GK_TOOL_ARGS. */
static void strings_in(struct rd *r, struct sp v, int role, int msg, int depth)
{
    if (v.t == 's') {
        seg(r, v, role, SY_GK_TOOL_ARGS, msg, 0);
        return;
    }
    if ((v.t != 'o' && v.t != 'a') || depth >= MAX_DEPTH)
        return;
    size_t i = 0;
    struct sp key, e;
    while (next(r, v, &i, &key, &e) > 0) {
        if (v.t == 'o') /* a key is the model's text too */
            seg(r, key, role, SY_GK_TOOL_ARGS, msg, 0);
        strings_in(r, e, role, msg, depth + 1);
    }
}

/* Run up to 4 visits in body order: the members vs[] of one object, each
 * with a code the caller switches on. Returns the order as indices. */
static size_t order(const struct sp *vs, size_t k, size_t *idx)
{
    size_t m = 0;
    for (size_t j = 0; j < k; j++)
        if (vs[j].t)
            idx[m++] = j;
    for (size_t a = 1; a < m; a++)
        for (size_t b = a; b > 0 && vs[idx[b - 1]].a > vs[idx[b]].a; b--) {
            size_t x = idx[b];
            idx[b] = idx[b - 1];
            idx[b - 1] = x;
        }
    return m;
}

/* ---- chat --------------------------------------------------------------- */

/* A chat tool call {id, type, function: {name, arguments}}: a tool (answers)
 * and its arguments as a segment. */
static void chat_call(struct rd *r, struct sp call, int msg, int index, int as_tool)
{
    if (call.t != 'o')
        return;
    struct sp fn = get1(r, call, "function");
    static const char *const names[] = {"name", "arguments"};
    struct sp f[2];
    if (get(r, fn, names, 2, f))
        return;
    if (as_tool)
        tool(r, f[0], call, f[1], 0, index);
    seg(r, f[1], SY_GR_ASSISTANT, SY_GK_TOOL_ARGS, msg, 0);
}

/* A chat message (request messages[] or an answer's choices[].message). */
static void chat_message(struct rd *r, struct sp m, int msg, int answer)
{
    static const char *const names[] = {"role", "content", "tool_calls", "function_call"};
    struct sp f[4];
    size_t idx[4];
    if (get(r, m, names, 4, f))
        return;
    int role = answer ? SY_GR_ASSISTANT : role_of(r, f[0]);
    if (skipped(r, role))
        return;
    int kind = role == SY_GR_TOOL ? SY_GK_TOOL_OUT : SY_GK_TEXT;
    size_t k = order(f + 1, 3, idx);
    for (size_t j = 0; j < k; j++) {
        struct sp v = f[1 + idx[j]], call;
        switch (idx[j]) {
        case 0: content(r, v, role, kind, msg); break;
        case 1:
            EACH(r, v, call, ci)
            chat_call(r, call, msg, (int)ci, answer);
            break;
        case 2: /* the legacy function_call {name, arguments} */
            if (answer)
                tool(r, get1(r, v, "name"), v, get1(r, v, "arguments"), 0, 0);
            seg(r, get1(r, v, "arguments"), SY_GR_ASSISTANT, SY_GK_TOOL_ARGS, msg, 0);
            break;
        }
    }
}

/* A tool the request offers: its name (chat function.name, a custom tool's
 * custom.name or name; a hosted tool by its type). */
static void offered_tool(struct rd *r, struct sp t, int index)
{
    static const char *const names[] = {"function", "custom", "name", "type"};
    struct sp f[4];
    if (t.t != 'o' || get(r, t, names, 4, f))
        return;
    struct sp name = get1(r, f[0], "name");
    if (name.t != 's')
        name = get1(r, f[1], "name");
    if (name.t != 's')
        name = f[2];
    if (name.t != 's')
        name = f[3];
    tool(r, name, t, (struct sp){0}, 0, index);
}

static void tools_list(struct rd *r, struct sp arr, int *index)
{
    struct sp t;
    EACH(r, arr, t, k)
    {
        (void)k;
        offered_tool(r, t, (*index)++);
    }
}

static void chat_request(struct rd *r, struct sp root)
{
    static const char *const names[] = {"messages", "tools", "functions"};
    struct sp f[3], m;
    size_t idx[3];
    if (get(r, root, names, 3, f))
        return;
    int ti = 0;
    size_t k = order(f, 3, idx);
    for (size_t j = 0; j < k; j++) {
        if (idx[j] == 0) {
            EACH(r, f[0], m, mi)
            chat_message(r, m, (int)mi, 0);
        } else {
            tools_list(r, f[idx[j]], &ti);
        }
    }
}

static void chat_answer(struct rd *r, struct sp root)
{
    struct sp choices = get1(r, root, "choices"), c;
    EACH(r, choices, c, ci)
    chat_message(r, get1(r, c, "message"), (int)ci, 1);
}

/* ---- completions, embeddings -------------------------------------------- */

/* A prompt / input: a string or a list of strings (token lists skipped). */
static void strings_list(struct rd *r, struct sp v)
{
    if (v.t == 's') {
        seg(r, v, SY_GR_USER, SY_GK_TEXT, 0, 0);
        return;
    }
    struct sp e;
    EACH(r, v, e, k)
    seg(r, e, SY_GR_USER, SY_GK_TEXT, (int)k, 0);
}

static void completions_answer(struct rd *r, struct sp root)
{
    struct sp choices = get1(r, root, "choices"), c;
    EACH(r, choices, c, ci)
    seg(r, get1(r, c, "text"), SY_GR_ASSISTANT, SY_GK_TEXT, (int)ci, 0);
}

/* ---- /v1/messages ------------------------------------------------------- */

/* Content blocks (or a string) of a message with role role. Answers: a
 * tool_use block is a tool too (index: its place among the calls). */
static void msg_blocks(struct rd *r, struct sp c, int role, int msg, int answer, int *calls)
{
    if (c.t == 's') {
        seg(r, c, role, SY_GK_TEXT, msg, 0);
        return;
    }
    struct sp b;
    EACH(r, c, b, k)
    {
        (void)k;
        static const char *const names[] = {"type", "text", "input", "content", "name"};
        struct sp f[5];
        if (get(r, b, names, 5, f))
            return;
        if (str_is(r, f[0], "text", 0)) {
            seg(r, f[1], role, SY_GK_TEXT, msg, 0);
        } else if (str_is(r, f[0], "tool_use", 0) || str_is(r, f[0], "server_tool_use", 0)) {
            if (answer)
                tool(r, f[4], b, f[2], 1, (*calls)++);
            strings_in(r, f[2], SY_GR_ASSISTANT, msg, 0);
        } else if (str_is(r, f[0], "tool_result", 0)) {
            content(r, f[3], SY_GR_TOOL, SY_GK_TOOL_OUT, msg);
        }
    }
}

static void messages_request(struct rd *r, struct sp root)
{
    static const char *const names[] = {"system", "messages", "tools"};
    struct sp f[3], m;
    size_t idx[3];
    if (get(r, root, names, 3, f))
        return;
    int ti = 0, calls = 0;
    size_t k = order(f, 3, idx);
    for (size_t j = 0; j < k; j++) {
        switch (idx[j]) {
        case 0: content(r, f[0], SY_GR_SYSTEM, SY_GK_TEXT, -1); break;
        case 1:
            EACH(r, f[1], m, mi)
            {
                static const char *const mn[] = {"role", "content"};
                struct sp g[2];
                if (get(r, m, mn, 2, g))
                    return;
                /* only user and assistant turns exist here: a "system" entry
                 * is the client's text, never skipped as the system prompt */
                int role = role_of(r, g[0]);
                msg_blocks(r, g[1], role == SY_GR_SYSTEM ? SY_GR_OTHER : role, (int)mi, 0, &calls);
            }
            break;
        case 2: tools_list(r, f[2], &ti); break;
        }
    }
}

static void messages_answer(struct rd *r, struct sp root)
{
    int calls = 0;
    msg_blocks(r, get1(r, root, "content"), SY_GR_ASSISTANT, 0, 1, &calls);
}

/* ---- /v1/responses ------------------------------------------------------ */

/* One input or output item at position msg: a message ({role, content}), a
 * function / custom tool call (answers: a tool too) or its output. Reasoning
 * and hosted tools' items carry no text of the call's. */
static void resp_item(struct rd *r, struct sp it, int msg, int answer, int *calls)
{
    static const char *const names[] = {"type", "role", "content", "arguments", "output", "input", "name"};
    struct sp f[7];
    if (get(r, it, names, 7, f))
        return;
    if (f[1].t && (!f[0].t || str_is(r, f[0], "message", 0))) {
        content(r, f[2], answer ? SY_GR_ASSISTANT : role_of(r, f[1]), SY_GK_TEXT, msg);
        return;
    }
    int call = str_is(r, f[0], "function_call", 0), custom = !call && str_is(r, f[0], "custom_tool_call", 0);
    if (call || custom) {
        struct sp args = call ? f[3] : f[5];
        if (answer)
            tool(r, f[6], it, args, 0, (*calls)++);
        seg(r, args, SY_GR_ASSISTANT, SY_GK_TOOL_ARGS, msg, 0);
    } else if (str_is(r, f[0], "function_call_output", 0) || str_is(r, f[0], "custom_tool_call_output", 0)) {
        content(r, f[4], SY_GR_TOOL, SY_GK_TOOL_OUT, msg);
    }
}

static void responses_request(struct rd *r, struct sp root)
{
    static const char *const names[] = {"instructions", "input", "tools"};
    struct sp f[3], it;
    size_t idx[3];
    if (get(r, root, names, 3, f))
        return;
    int ti = 0, calls = 0;
    size_t k = order(f, 3, idx);
    for (size_t j = 0; j < k; j++) {
        switch (idx[j]) {
        case 0: seg(r, f[0], SY_GR_SYSTEM, SY_GK_TEXT, -1, 0); break;
        case 1:
            if (f[1].t == 's')
                seg(r, f[1], SY_GR_USER, SY_GK_TEXT, 0, 0);
            EACH(r, f[1], it, ii)
            resp_item(r, it, (int)ii, 0, &calls);
            break;
        case 2: tools_list(r, f[2], &ti); break;
        }
    }
}

static void responses_output(struct rd *r, struct sp resp)
{
    struct sp out = get1(r, resp, "output"), it;
    int calls = 0;
    EACH(r, out, it, oi)
    resp_item(r, it, (int)oi, 1, &calls);
}

/* ---- reading ------------------------------------------------------------ */

/* The memo for a body of r->n bytes: local (64 entries) for small ones, one
 * entry per 128 bytes up to 1M entries for larger ones; none when that
 * allocation fails (slower, same result). */
#define MEMO_LOCAL 64
static void memo_init(struct rd *r, struct memo *local)
{
    size_t want = MEMO_LOCAL;
    while (want < r->n / 128 && want < (1u << 20))
        want *= 2;
    if (r->n >= UINT32_MAX)
        return;
    if (want == MEMO_LOCAL) {
        memset(local, 0, MEMO_LOCAL * sizeof *local);
        r->memo = local;
    } else {
        r->memo = calloc(want, sizeof *r->memo);
    }
    r->mmask = (uint32_t)want - 1;
}

static void memo_done(struct rd *r, struct memo *local)
{
    if (r->memo != local)
        free(r->memo);
    r->memo = NULL;
}

/* The root of the body: an object, validated whole. type 0 when not. */
static struct sp root_of(const struct rd *r)
{
    struct sp root = {0};
    size_t i = ws(r, 0);
    if (i >= r->n || r->s[i] != '{')
        return root;
    root.a = i;
    root.b = val_end(r, i, &root.t);
    if (!root.b || ws(r, root.b) != r->n)
        root.t = 0;
    return root;
}

int sy_gtexts_read(struct sy_gtexts *t, enum sy_gdialect d, unsigned phase, const char *body, size_t n, int skip_system,
                   int skip_tool)
{
    t_reset(t, body ? n : 0);
    if ((unsigned)d > SY_GD_EMBEDDINGS)
        return -1;
    struct rd r = {.s = (const unsigned char *)body,
                   .n = body ? n : 0,
                   .t = t,
                   .skip_system = skip_system,
                   .skip_tool = skip_tool};
    struct memo local[MEMO_LOCAL];
    memo_init(&r, local);
    struct sp root = root_of(&r);
    if (root.t != 'o') {
        memo_done(&r, local);
        return -1;
    }
    int post = (phase & SY_GM_POST) != 0;
    switch (d) {
    case SY_GD_CHAT: post ? chat_answer(&r, root) : chat_request(&r, root); break;
    case SY_GD_COMPLETIONS:
        if (post)
            completions_answer(&r, root);
        else
            strings_list(&r, get1(&r, root, "prompt"));
        break;
    case SY_GD_EMBEDDINGS:
        if (!post)
            strings_list(&r, get1(&r, root, "input"));
        break;
    case SY_GD_MESSAGES: post ? messages_answer(&r, root) : messages_request(&r, root); break;
    case SY_GD_RESPONSES: post ? responses_output(&r, root) : responses_request(&r, root); break;
    default: break;
    }
    memo_done(&r, local);
    if (r.oom) {
        t->nseg = t->ntool = 0;
        return -1;
    }
    return 0;
}

/* ---- stream events ------------------------------------------------------ */

/* A chat chunk: choices[] each {index, delta: {content, tool_calls[]}}. */
static void chat_event(struct rd *r, struct sp root)
{
    struct sp choices = get1(r, root, "choices"), c;
    EACH(r, choices, c, pos)
    {
        static const char *const cn[] = {"index", "delta"};
        struct sp f[2], call;
        if (get(r, c, cn, 2, f))
            return;
        int ci = int_of(r, f[0], (int)pos) & 0x7fff;
        static const char *const dn[] = {"content", "tool_calls"};
        struct sp g[2];
        size_t idx[2];
        if (get(r, f[1], dn, 2, g))
            return;
        size_t k = order(g, 2, idx);
        for (size_t j = 0; j < k; j++) {
            if (idx[j] == 0) {
                seg(r, g[0], SY_GR_ASSISTANT, SY_GK_TEXT, ci, 1);
                continue;
            }
            EACH(r, g[1], call, cpos)
            {
                int key = ci * 65536 + (int_of(r, get1(r, call, "index"), (int)cpos) & 0xffff);
                static const char *const fnames[] = {"name", "arguments"};
                struct sp fn[2];
                if (get(r, get1(r, call, "function"), fnames, 2, fn))
                    return;
                if (fn[0].t == 's')
                    tool(r, fn[0], call, (struct sp){0}, 0, key);
                seg(r, fn[1], SY_GR_ASSISTANT, SY_GK_TOOL_ARGS, key, 1);
            }
        }
    }
}

/* An Anthropic event: content_block_start (a tool_use's name, a text
 * block's first text), content_block_delta (text_delta, input_json_delta);
 * message_stop ends the stream. */
static int messages_event(struct rd *r, struct sp root)
{
    static const char *const names[] = {"type", "index", "content_block", "delta"};
    struct sp f[4];
    if (get(r, root, names, 4, f))
        return 0;
    int bi = int_of(r, f[1], 0);
    if (str_is(r, f[0], "content_block_start", 0)) {
        static const char *const bn[] = {"type", "name", "text"};
        struct sp b[3];
        if (get(r, f[2], bn, 3, b))
            return 0;
        if (str_is(r, b[0], "tool_use", 0) || str_is(r, b[0], "server_tool_use", 0))
            tool(r, b[1], f[2], (struct sp){0}, 0, bi);
        else if (str_is(r, b[0], "text", 0))
            seg(r, b[2], SY_GR_ASSISTANT, SY_GK_TEXT, bi, 1);
    } else if (str_is(r, f[0], "content_block_delta", 0)) {
        static const char *const dn[] = {"type", "text", "partial_json"};
        struct sp dv[3];
        if (get(r, f[3], dn, 3, dv))
            return 0;
        if (str_is(r, dv[0], "text_delta", 0))
            seg(r, dv[1], SY_GR_ASSISTANT, SY_GK_TEXT, bi, 1);
        else if (str_is(r, dv[0], "input_json_delta", 0))
            seg(r, dv[2], SY_GR_ASSISTANT, SY_GK_TOOL_ARGS, bi, 1);
    } else if (str_is(r, f[0], "message_stop", 0)) {
        return 1;
    }
    return 0;
}

/* A Responses event: text and argument deltas, the whole texts of the .done
 * events, a function call's name when its item is added; response.completed
 * (and the other terminal events, incomplete and failed) end the stream
 * with the whole output. */
static int responses_event(struct rd *r, struct sp root)
{
    static const char *const names[] = {"type",  "output_index", "delta", "text",    "arguments",
                                        "input", "item",         "part",  "response"};
    enum { TYPE, OI, DELTA, TEXT, ARGS, INPUT, ITEM, PART, RESP };
    struct sp f[9];
    if (get(r, root, names, 9, f) || f[TYPE].t != 's')
        return 0;
    int oi = int_of(r, f[OI], 0), calls = 0;
    struct sp ty = f[TYPE];
    if (str_is(r, ty, "response.output_text.delta", 0)) {
        seg(r, f[DELTA], SY_GR_ASSISTANT, SY_GK_TEXT, oi, 1);
    } else if (str_is(r, ty, "response.output_text.done", 0)) {
        seg(r, f[TEXT], SY_GR_ASSISTANT, SY_GK_TEXT, oi, 0);
    } else if (str_is(r, ty, "response.content_part.done", 0)) {
        if (str_is(r, get1(r, f[PART], "type"), "output_text", 0))
            seg(r, get1(r, f[PART], "text"), SY_GR_ASSISTANT, SY_GK_TEXT, oi, 0);
    } else if (str_is(r, ty, "response.function_call_arguments.delta", 0) ||
               str_is(r, ty, "response.custom_tool_call_input.delta", 0)) {
        seg(r, f[DELTA], SY_GR_ASSISTANT, SY_GK_TOOL_ARGS, oi, 1);
    } else if (str_is(r, ty, "response.function_call_arguments.done", 0)) {
        seg(r, f[ARGS], SY_GR_ASSISTANT, SY_GK_TOOL_ARGS, oi, 0);
    } else if (str_is(r, ty, "response.custom_tool_call_input.done", 0)) {
        seg(r, f[INPUT], SY_GR_ASSISTANT, SY_GK_TOOL_ARGS, oi, 0);
    } else if (str_is(r, ty, "response.output_item.added", 0)) {
        struct sp it = f[ITEM], t = get1(r, it, "type");
        if (str_is(r, t, "function_call", 0) || str_is(r, t, "custom_tool_call", 0))
            tool(r, get1(r, it, "name"), it, (struct sp){0}, 0, oi);
    } else if (str_is(r, ty, "response.output_item.done", 0)) {
        size_t before = r->t->ntool;
        resp_item(r, f[ITEM], oi, 1, &calls);
        if (r->t->ntool > before)
            r->t->tool[before].index = oi;
    } else if (str_is(r, ty, "response.completed", 0) || str_is(r, ty, "response.incomplete", 0) ||
               str_is(r, ty, "response.failed", 0)) {
        responses_output(r, f[RESP]);
        return 1;
    }
    return 0;
}

int sy_gevent_read(struct sy_gtexts *t, enum sy_gdialect d, const char *ev, size_t n)
{
    t_reset(t, ev ? n : 0);
    struct rd r = {.s = (const unsigned char *)ev, .n = ev ? n : 0, .t = t};
    size_t i = ws(&r, 0), e = r.n;
    while (e > i && (r.s[e - 1] == ' ' || r.s[e - 1] == '\n' || r.s[e - 1] == '\r' || r.s[e - 1] == '\t'))
        e--;
    if (d == SY_GD_CHAT && e - i == 6 && !memcmp(r.s + i, "[DONE]", 6))
        return 1;
    if (d != SY_GD_CHAT && d != SY_GD_MESSAGES && d != SY_GD_RESPONSES)
        return -1;
    struct memo local[MEMO_LOCAL];
    memo_init(&r, local);
    struct sp root = root_of(&r);
    int end = 0;
    if (root.t != 'o')
        end = -1;
    else if (d == SY_GD_CHAT)
        chat_event(&r, root);
    else if (d == SY_GD_MESSAGES)
        end = messages_event(&r, root);
    else
        end = responses_event(&r, root);
    memo_done(&r, local);
    if (end < 0)
        return -1;
    if (r.oom) {
        t->nseg = t->ntool = 0;
        return -1;
    }
    return end;
}

/* ---- splicing ----------------------------------------------------------- */

struct edit {
    size_t off, i;
};

static int by_off(const void *a, const void *b)
{
    const struct edit *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

int sy_gtext_splice(const char *body, size_t n, const struct sy_gseg *seg, size_t nseg, char *const *repl, char **out,
                    size_t *outlen)
{
    *out = NULL;
    *outlen = 0;
    struct edit *ed = malloc((nseg ? nseg : 1) * sizeof *ed);
    if (!ed)
        return -1;
    size_t m = 0;
    int sorted = 1;
    for (size_t i = 0; repl && i < nseg; i++) {
        if (!repl[i])
            continue;
        const struct sy_gseg *g = &seg[i];
        /* a replacement needs a string span of its own inside the body (a
         * text without one, raw_len 0, cannot be replaced: refused rather
         * than a mask silently dropped) */
        if (g->raw_len < 2 || g->off > n || n - g->off < g->raw_len || body[g->off] != '"' ||
            body[g->off + g->raw_len - 1] != '"') {
            free(ed);
            return -1;
        }
        if (m && ed[m - 1].off > g->off)
            sorted = 0;
        ed[m++] = (struct edit){g->off, i};
    }
    if (!sorted)
        qsort(ed, m, sizeof *ed, by_off);
    struct sy_buf b;
    sy_buf_init(&b, SIZE_MAX / 2);
    size_t at = 0;
    for (size_t j = 0; j < m; j++) {
        const struct sy_gseg *g = &seg[ed[j].i];
        if (g->off < at) { /* overlapping spans: not a segment list of this body */
            sy_buf_free(&b);
            free(ed);
            return -1;
        }
        const char *x = repl[ed[j].i];
        sy_buf_append(&b, body + at, g->off - at);
        SY_BUF_LIT(&b, "\"");
        sy_utf8_json_escape(&b, x, strlen(x));
        SY_BUF_LIT(&b, "\"");
        at = g->off + g->raw_len;
    }
    free(ed);
    sy_buf_append(&b, body + at, n - at);
    if (sy_buf_failed(&b) || (!b.p && sy_buf_reserve(&b, 1))) {
        sy_buf_free(&b);
        return -1;
    }
    *out = b.p;
    *outlen = b.len;
    return 0;
}
