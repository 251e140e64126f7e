/* encode.c - tiktoken's pre-tokenisation split and byte-level BPE.
 *
 * The splitter is a hand-written, exact equivalent of tiktoken's regexes
 * (fancy-regex, leftmost-first alternation with backtracking):
 *
 * cl100k_base:
 *   (?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N}{1,3}
 *   | ' '?[^\s\p{L}\p{N}]+[\r\n]* | \s*[\r\n]+ | \s+(?!\S) | \s+
 * o200k_base:
 *   [^\r\n\p{L}\p{N}]?[Lu Lt Lm Lo M]*[Ll Lm Lo M]+(?i:contraction)?
 *   | [^\r\n\p{L}\p{N}]?[Lu Lt Lm Lo M]+[Ll Lm Lo M]*(?i:contraction)?
 *   | \p{N}{1,3} | ' '?[^\s\p{L}\p{N}]+[\r\n/]* | \s*[\r\n]+ | \s+(?!\S) | \s+
 *
 * Classes come from Unicode 16.0 (the regex-syntax version tiktoken links).
 * Case-insensitive 's also matches U+017F (long s), as Unicode simple case
 * folding does. Every byte string is accepted: a byte that does not start a
 * valid UTF-8 sequence is one "character" with no class (it splits like
 * U+FFFD) and keeps its own byte, so decode(encode(x)) == x for any x.
 *
 * Each piece is first looked up whole (most pieces are one token); otherwise
 * BPE merges the lowest-ranked adjacent pair, leftmost first, like tiktoken's
 * byte_pair_merge: an O(m^2) array scan for pieces of <= 16 bytes, a binary
 * heap over a linked list for longer ones (O(m log m): a 1 MB "word" takes
 * ~0.3 s where tiktoken's quadratic merge does not finish). Rank lookups go
 * through tok_internal.h (direct tables, per-thread cache, Bloom filter).
 */
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "tokenizer/tok_internal.h"
#include "tokenizer/unicode_tables.h"

#define INVALID_CP 0x110000u

__thread struct sy__tok_cache_ent sy__tok_cache[SY__TOK_CACHE];

/* Decode one character at s[i] (i < n); returns its length, sets *cp. */
static inline size_t dec(const uint8_t *s, size_t i, size_t n, uint32_t *cp)
{
    uint8_t c = s[i];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t r = n - i;
    if (c >= 0xC2 && c <= 0xDF) {
        if (r >= 2 && (s[i + 1] & 0xC0) == 0x80) {
            *cp = (uint32_t)(c & 0x1F) << 6 | (s[i + 1] & 0x3F);
            return 2;
        }
    } else if (c >= 0xE0 && c <= 0xEF) {
        if (r >= 3 && (s[i + 1] & 0xC0) == 0x80 && (s[i + 2] & 0xC0) == 0x80) {
            uint32_t v = (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[i + 1] & 0x3F) << 6 | (s[i + 2] & 0x3F);
            if (v >= 0x800 && (v < 0xD800 || v > 0xDFFF)) {
                *cp = v;
                return 3;
            }
        }
    } else if (c >= 0xF0 && c <= 0xF4) {
        if (r >= 4 && (s[i + 1] & 0xC0) == 0x80 && (s[i + 2] & 0xC0) == 0x80 && (s[i + 3] & 0xC0) == 0x80) {
            uint32_t v = (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[i + 1] & 0x3F) << 12 |
                         (uint32_t)(s[i + 2] & 0x3F) << 6 | (s[i + 3] & 0x3F);
            if (v >= 0x10000 && v <= 0x10FFFF) {
                *cp = v;
                return 4;
            }
        }
    }
    *cp = INVALID_CP;
    return 1;
}

static inline unsigned cls(uint32_t cp) { return sy__uc_class[cp]; }
static inline int is_crlf(uint32_t cp) { return cp == '\r' || cp == '\n'; }

/* Length of a case-insensitive contraction ('s 't 're 've 'm 'll 'd) at s[i]
 * (which is '\''), or 0. */
static size_t contraction(const uint8_t *s, size_t i, size_t n)
{
    if (i + 1 >= n)
        return 0;
    uint8_t a = s[i + 1] | 0x20;
    if (a == 's' || a == 't' || a == 'm' || a == 'd')
        return (s[i + 1] >= 'A' && s[i + 1] <= 'z') ? 2 : 0;
    if (s[i + 1] == 0xC5 && i + 2 < n && s[i + 2] == 0xBF) /* U+017F folds to s */
        return 3;
    if (i + 2 >= n || !((s[i + 1] >= 'A' && s[i + 1] <= 'Z') || (s[i + 1] >= 'a' && s[i + 1] <= 'z')))
        return 0;
    uint8_t b = s[i + 2] | 0x20;
    if (!((s[i + 2] >= 'A' && s[i + 2] <= 'Z') || (s[i + 2] >= 'a' && s[i + 2] <= 'z')))
        return 0;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
        return 3;
    return 0;
}

/* Advance over characters whose class has any of `mask`. */
static inline size_t scan(const uint8_t *s, size_t i, size_t n, unsigned mask)
{
    while (i < n) {
        uint32_t cp;
        size_t l = dec(s, i, n, &cp);
        if (!(cls(cp) & mask))
            break;
        i += l;
    }
    return i;
}

/* \p{N}{1,3} at i (s[i] is a number). */
static size_t digits(const uint8_t *s, size_t i, size_t n)
{
    for (int k = 0; k < 3 && i < n; k++) {
        uint32_t cp;
        size_t l = dec(s, i, n, &cp);
        if (!(cls(cp) & SY_UC_N))
            break;
        i += l;
    }
    return i;
}

/* Whether ' '?[^\s\p{L}\p{N}]+ matches at i (cp0 is the character there). */
static int punct(const uint8_t *s, size_t i, size_t n, uint32_t cp0)
{
    const unsigned notp = SY_UC_WS | SY_UC_L | SY_UC_N;
    if (cp0 == ' ') {
        if (i + 1 >= n)
            return 0;
        uint32_t cp;
        dec(s, i + 1, n, &cp);
        return !(cls(cp) & notp);
    }
    return !(cls(cp0) & notp);
}

/* The whitespace rules at i (s[i] is \s): \s*[\r\n]+ | \s+(?!\S) | \s+. */
static size_t spaces(const uint8_t *s, size_t i, size_t n)
{
    size_t j = i, last = i, nl_end = 0;
    while (j < n) {
        uint32_t cp;
        size_t l = dec(s, j, n, &cp);
        if (!(cls(cp) & SY_UC_WS))
            break;
        last = j;
        j += l;
        if (is_crlf(cp))
            nl_end = j;
    }
    if (nl_end)
        return nl_end;
    if (j == n || last == i)
        return j;
    return last;
}

static size_t punct_run(const uint8_t *s, size_t j, size_t n, int slash)
{
    const unsigned notp = SY_UC_WS | SY_UC_L | SY_UC_N;
    while (j < n) {
        uint32_t cp;
        size_t l = dec(s, j, n, &cp);
        if (cls(cp) & notp)
            break;
        j += l;
    }
    while (j < n && (s[j] == '\r' || s[j] == '\n' || (slash && s[j] == '/')))
        j++;
    return j;
}

static size_t next_cl100k(const uint8_t *s, size_t i, size_t n)
{
    uint32_t cp0;
    size_t l0 = dec(s, i, n, &cp0);
    if (cp0 == '\'') {
        size_t c = contraction(s, i, n);
        if (c)
            return i + c;
    }
    unsigned c0 = cls(cp0);
    if (c0 & SY_UC_L)
        return scan(s, i + l0, n, SY_UC_L);
    if (!(c0 & SY_UC_N) && !is_crlf(cp0) && i + l0 < n) {
        uint32_t cp1;
        size_t l1 = dec(s, i + l0, n, &cp1);
        if (cls(cp1) & SY_UC_L)
            return scan(s, i + l0 + l1, n, SY_UC_L);
    }
    if (c0 & SY_UC_N)
        return digits(s, i, n);
    if (punct(s, i, n, cp0))
        return punct_run(s, cp0 == ' ' ? i + 1 : i, n, 0);
    return spaces(s, i, n);
}

/* o200k: [Lu Lt Lm Lo M]*[Ll Lm Lo M]+ at j; 0 when no match. */
static size_t o200k_rule1(const uint8_t *s, size_t j, size_t n)
{
    size_t k = j, last_lo_end = 0;
    while (k < n) {
        uint32_t cp;
        size_t l = dec(s, k, n, &cp);
        unsigned c = cls(cp);
        if (!(c & SY_UC_UP))
            break;
        k += l;
        if (c & SY_UC_LO)
            last_lo_end = k;
    }
    if (k < n) {
        uint32_t cp;
        dec(s, k, n, &cp);
        if (cls(cp) & SY_UC_LO)
            return scan(s, k, n, SY_UC_LO);
    }
    return last_lo_end;
}

/* o200k: [Lu Lt Lm Lo M]+[Ll Lm Lo M]* at j; 0 when no match. */
static size_t o200k_rule2(const uint8_t *s, size_t j, size_t n)
{
    size_t k = scan(s, j, n, SY_UC_UP);
    if (k == j)
        return 0;
    return scan(s, k, n, SY_UC_LO);
}

static size_t next_o200k(const uint8_t *s, size_t i, size_t n)
{
    uint32_t cp0;
    size_t l0 = dec(s, i, n, &cp0);
    unsigned c0 = cls(cp0);
    int pre = !(c0 & (SY_UC_L | SY_UC_N)) && !is_crlf(cp0) && i + l0 < n;
    size_t e = 0;
    if (pre)
        e = o200k_rule1(s, i + l0, n);
    if (!e && (c0 & (SY_UC_UP | SY_UC_LO)))
        e = o200k_rule1(s, i, n);
    if (!e && pre)
        e = o200k_rule2(s, i + l0, n);
    if (!e && (c0 & SY_UC_UP))
        e = o200k_rule2(s, i, n);
    if (e) {
        if (e < n && s[e] == '\'')
            e += contraction(s, e, n);
        return e;
    }
    if (c0 & SY_UC_N)
        return digits(s, i, n);
    if (punct(s, i, n, cp0))
        return punct_run(s, cp0 == ' ' ? i + 1 : i, n, 1);
    return spaces(s, i, n);
}

size_t sy__tok_split_next(enum sy_tok_encoding e, const uint8_t *s, size_t i, size_t n)
{
    return e == SY_TOK_O200K ? next_o200k(s, i, n) : next_cl100k(s, i, n);
}

/* ---- BPE ---------------------------------------------------------------- */

static inline void emit(struct sy__tok_sink *k, uint32_t id)
{
    if (k->ids) {
        if (k->n == k->cap) {
            size_t nc = k->cap ? k->cap * 2 : 256;
            uint32_t *p = realloc(k->ids, nc * sizeof *p);
            if (!p) {
                k->err = SY_ENOMEM;
                return;
            }
            k->ids = p;
            k->cap = nc;
        }
        k->ids[k->n] = id;
    }
    k->n++;
}

#define SMALL 16

/* tiktoken's byte_pair_merge on an array of parts; m <= SMALL. part[i]
 * starts at byte part[i].start; part[i].rank is the rank of merging parts i
 * and i + 1 (NONE when impossible). */
struct part {
    uint32_t start, rank;
};

static void bpe_small(const struct sy_tok *t, const uint8_t *p, size_t m, struct sy__tok_sink *k)
{
    struct part pt[SMALL + 1];
    size_t parts = m; /* pt[parts].start == m */
    for (size_t i = 0; i + 1 < m; i++)
        pt[i] = (struct part){(uint32_t)i, t->pair_rank[(unsigned)p[i] << 8 | p[i + 1]]};
    pt[m - 1] = (struct part){(uint32_t)m - 1, SY__TOK_NONE};
    pt[m] = (struct part){(uint32_t)m, SY__TOK_NONE};
    while (parts > 1) {
        uint32_t best = SY__TOK_NONE;
        size_t bi = 0;
        for (size_t i = 0; i + 1 < parts; i++)
            if (pt[i].rank < best) {
                best = pt[i].rank;
                bi = i;
            }
        if (best == SY__TOK_NONE)
            break;
        /* merge parts bi and bi+1: drop entry bi+1 */
        memmove(&pt[bi + 1], &pt[bi + 2], (parts - bi - 1) * sizeof pt[0]);
        parts--;
        uint32_t s0 = pt[bi].start, s2 = pt[bi + 1].start;
        if (bi > 0 && bi + 1 < parts) {
            uint32_t sp = pt[bi - 1].start, s3 = pt[bi + 2].start;
            sy__tok_rank2(t, p + s0, s3 - s0, &pt[bi].rank, p + sp, s2 - sp, &pt[bi - 1].rank);
        } else {
            pt[bi].rank = bi + 1 < parts ? sy__tok_rank(t, p + s0, pt[bi + 2].start - s0) : SY__TOK_NONE;
            if (bi > 0)
                pt[bi - 1].rank = sy__tok_rank(t, p + pt[bi - 1].start, s2 - pt[bi - 1].start);
        }
    }
    for (size_t i = 0; i < parts; i++)
        emit(k, sy__tok_rank(t, p + pt[i].start, pt[i + 1].start - pt[i].start));
}

/* Long pieces: doubly linked parts + binary heap of (rank, start) with lazy
 * invalidation through a per-part version. Same merge order as bpe_small. */
struct hent {
    uint64_t key; /* rank << 32 | start: the order tiktoken merges in */
    uint32_t ver;
};
static inline int hless(const struct hent *a, const struct hent *b) { return a->key < b->key; }
#define HENT(rank, pos, v) ((struct hent){(uint64_t)(rank) << 32 | (pos), (v)})
static void hpush(struct hent *h, size_t *hn, struct hent e)
{
    size_t i = (*hn)++;
    while (i > 0) {
        size_t pa = (i - 1) / 2;
        if (!hless(&e, &h[pa]))
            break;
        h[i] = h[pa];
        i = pa;
    }
    h[i] = e;
}
static struct hent hpop(struct hent *h, size_t *hn)
{
    struct hent top = h[0], e = h[--(*hn)];
    size_t i = 0, n = *hn;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && hless(&h[c + 1], &h[c]))
            c++;
        if (!hless(&h[c], &e))
            break;
        h[i] = h[c];
        i = c;
    }
    if (n)
        h[i] = e;
    return top;
}

static void hsift(struct hent *h, size_t n, size_t i)
{
    struct hent e = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && hless(&h[c + 1], &h[c]))
            c++;
        if (!hless(&h[c], &e))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = e;
}

#define STACK_PARTS 256

static void bpe_large(const struct sy_tok *t, const uint8_t *p, size_t m, struct sy__tok_sink *k)
{
    /* part i starts at byte i; nxt/prv link live parts; end of part = nxt. */
    uint32_t s_nxt[STACK_PARTS + 1], s_prv[STACK_PARTS + 1], s_ver[STACK_PARTS + 1], s_cur[STACK_PARTS + 1];
    struct hent s_h[3 * STACK_PARTS];
    uint32_t *nxt = s_nxt, *prv = s_prv, *ver = s_ver, *cur = s_cur;
    struct hent *h = s_h;
    if (m > STACK_PARTS) {
        nxt = malloc((m + 1) * sizeof *nxt);
        prv = malloc((m + 1) * sizeof *prv);
        ver = malloc((m + 1) * sizeof *ver);
        cur = malloc((m + 1) * sizeof *cur);
        h = malloc(3 * m * sizeof *h); /* live pairs + two per merge */
        if (!nxt || !prv || !ver || !cur || !h) {
            k->err = SY_ENOMEM;
            goto out;
        }
    }
    size_t hn = 0;
    for (size_t i = 0; i <= m; i++) {
        nxt[i] = (uint32_t)i + 1;
        prv[i] = (uint32_t)i - 1;
        ver[i] = 0;
    }
    for (size_t i = 0; i + 1 < m; i++) {
        cur[i] = t->pair_rank[(unsigned)p[i] << 8 | p[i + 1]];
        if (cur[i] != SY__TOK_NONE)
            h[hn++] = HENT(cur[i], (uint32_t)i, 0);
    }
    cur[m - 1] = SY__TOK_NONE;
    for (size_t i = hn / 2; i-- > 0;)
        hsift(h, hn, i);
    while (hn) {
        struct hent e = hpop(h, &hn);
        uint32_t a = (uint32_t)e.key, rank = (uint32_t)(e.key >> 32);
        if (e.ver != ver[a] || cur[a] != rank || nxt[a] >= m)
            continue;
        uint32_t b = nxt[a], c = nxt[b];
        nxt[a] = c;
        if (c <= m)
            prv[c] = a;
        ver[b]++; /* part b is gone */
        cur[b] = SY__TOK_NONE;
        /* new pairs (a, c) and (prev, a) */
        ver[a]++;
        if (a > 0 && c < m) {
            uint32_t z = prv[a];
            ver[z]++;
            sy__tok_rank2(t, p + a, nxt[c] - a, &cur[a], p + z, c - z, &cur[z]);
            if (cur[z] != SY__TOK_NONE)
                hpush(h, &hn, HENT(cur[z], z, ver[z]));
        } else if (a > 0) {
            uint32_t z = prv[a];
            ver[z]++;
            cur[a] = SY__TOK_NONE;
            cur[z] = sy__tok_rank(t, p + z, c - z);
            if (cur[z] != SY__TOK_NONE)
                hpush(h, &hn, HENT(cur[z], z, ver[z]));
        } else {
            cur[a] = c < m ? sy__tok_rank(t, p + a, nxt[c] - a) : SY__TOK_NONE;
        }
        if (cur[a] != SY__TOK_NONE)
            hpush(h, &hn, HENT(cur[a], a, ver[a]));
    }
    for (uint32_t i = 0; i < m; i = nxt[i])
        emit(k, sy__tok_rank(t, p + i, nxt[i] - i));
out:
    if (m > STACK_PARTS) {
        free(nxt);
        free(prv);
        free(ver);
        free(cur);
        free(h);
    }
}

static inline void piece(const struct sy_tok *t, const uint8_t *p, size_t m, struct sy__tok_sink *k)
{
    uint32_t r = sy__tok_rank(t, p, m);
    if (r != SY__TOK_NONE)
        emit(k, r);
    else if (m <= SMALL)
        bpe_small(t, p, m, k);
    else
        bpe_large(t, p, m, k);
}

void sy__tok_run(const struct sy_tok *t, const uint8_t *s, size_t len, struct sy__tok_sink *k)
{
    size_t i = 0;
    if (t->enc == SY_TOK_O200K) {
        while (i < len && !k->err) {
            size_t e = next_o200k(s, i, len);
            piece(t, s + i, e - i, k);
            i = e;
        }
    } else {
        while (i < len && !k->err) {
            size_t e = next_cl100k(s, i, len);
            piece(t, s + i, e - i, k);
            i = e;
        }
    }
}

size_t sy_tok_count(const struct sy_tok *t, const char *text, size_t len)
{
    struct sy__tok_sink k = {0};
    sy__tok_run(t, (const uint8_t *)text, len, &k);
    return k.n;
}

int sy_tok_encode(const struct sy_tok *t, const char *text, size_t len, uint32_t **ids, size_t *n, size_t *cap)
{
    struct sy__tok_sink k = {.ids = *ids, .n = *n, .cap = *cap};
    if (!k.ids) {
        k.cap = len / 3 + 16;
        k.ids = malloc(k.cap * sizeof *k.ids);
        if (!k.ids)
            return SY_ENOMEM;
    }
    sy__tok_run(t, (const uint8_t *)text, len, &k);
    *ids = k.ids;
    *n = k.n;
    *cap = k.cap;
    return k.err;
}
