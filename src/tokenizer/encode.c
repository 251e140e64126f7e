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
 * byte_pair_merge. In a valid UTF-8 piece, a 2- or 3-byte character whose
 * own merges all rank below every token that could join it to its
 * neighbours starts as one token (char_tok, and char_lmb / char_rmb keyed on
 * the neighbours' adjacent bytes, built by vocab_gen.c; the result
 * is provably the same), which removes most merges and lookups on CJK text.
 * Parts made of whole non-ASCII characters are flagged PURE; two pure parts
 * join through the small word-pair table (vocab_gen.c, word_pairs) keyed by
 * their token ids instead of a byte lookup.
 * Then: an O(n^2) array scan for <= 16 parts, a binary heap over a linked
 * list for more (O(n log n): a 1 MB "word" takes ~0.3 s where tiktoken's
 * quadratic merge does not finish). Parts carry their token id, so the
 * result needs no final lookups. Rank lookups go through tok_internal.h
 * (direct tables, per-thread cache, Bloom filters).
 */
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "tokenizer/tok_internal.h"
#include "tokenizer/unicode_tables.h"

#define INVALID_CP 0x110000u
/* Flags on a part's token in a valid UTF-8 piece: NOASC, the part has no
 * ASCII byte; PURE, it is whole non-ASCII characters (a pre-merged character,
 * or a part with NOASC from a lead byte to a character boundary), so its
 * joins with other pure parts go through the word-pair table. */
#define PURE  (1u << 31)
#define NOASC (1u << 30)
#define ID    0xffffffu
/* Smallest word-pair table (slots) the encoder uses: cl100k's (922 pairs,
 * 2048 slots) joins too few words to pay for the flag checks. */
#define PAIRS_MIN 8192u

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

static inline unsigned cls(uint32_t cp)
{
    return sy__uc_class[cp];
}
static inline int is_crlf(uint32_t cp)
{
    return cp == '\r' || cp == '\n';
}

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

/* Initial parts of piece p[0..m): single bytes, except that in a piece of
 * valid UTF-8 a 2- or 3-byte character whose char_tok entry allows its
 * neighbours starts as its own token (vocab_gen.c explains why exactly the
 * same merges follow). st[j] is the start of part j, tok[j] its token;
 * returns the number of parts (st[np] = m). st and tok have m + 2 slots. */
static size_t init_parts(const struct sy_tok *t, const uint8_t *p, size_t m, uint32_t *st, uint32_t *tok)
{
    size_t nc = 0, mb = 0, i0 = 0;
    while (i0 < m && p[i0] < 0x80)
        i0++;
    /* pass 1: characters (st = start, tok = char_tok entry or byte rank) */
    for (size_t i = i0 == m ? m : 0; i < m;) {
        uint32_t cp;
        size_t l = dec(p, i, m, &cp);
        if (cp == INVALID_CP) {
            nc = 0;
            break; /* not valid UTF-8: bytes only */
        }
        st[nc] = (uint32_t)i;
        tok[nc++] = l == 1 ? t->byte_rank[p[i]] : l < 4 ? t->char_tok[cp] : SY__TOK_NONE;
        mb += l > 1;
        i += l;
    }
    if (!nc || !mb) {
        for (size_t i = 0; i < m; i++) {
            st[i] = (uint32_t)i;
            tok[i] = t->byte_rank[p[i]];
        }
        st[m] = (uint32_t)m;
        return m;
    }
    /* pass 2: keep a character whole when both neighbours allow it */
    size_t np = 0;
    for (size_t j = 0; j < nc; j++) {
        size_t len = (j + 1 < nc ? st[j + 1] : m) - st[j];
        if (len > 1 && tok[j] != SY__TOK_NONE) {
            uint32_t need = 0;
            if (j > 0)
                need |= p[st[j] - 1] < 0x80 ? SY__TOK_CT_LASCII : SY__TOK_CT_LMB;
            if (j + 1 < nc)
                need |= p[st[j + 1]] < 0x80 ? SY__TOK_CT_RASCII : SY__TOK_CT_RMB;
            uint32_t miss = need & ~tok[j];
            if (miss && !(miss & (SY__TOK_CT_LASCII | SY__TOK_CT_RASCII))) {
                /* the finer tests, on the multi-byte neighbours' adjacent bytes */
                const uint8_t *c = p + st[j];
                uint32_t cp = len == 2 ? (uint32_t)(c[0] & 0x1F) << 6 | (c[1] & 0x3F)
                                       : (uint32_t)(c[0] & 0x0F) << 12 | (uint32_t)(c[1] & 0x3F) << 6 | (c[2] & 0x3F);
                if (!(miss & SY__TOK_CT_LMB) || (t->char_lmb[cp] >> (c[-1] & 0x3F) & 1))
                    miss &= ~SY__TOK_CT_LMB;
                if (!(miss & SY__TOK_CT_RMB) || (t->char_rmb[cp] >> sy__tok_rcls(c[len]) & 1))
                    miss &= ~SY__TOK_CT_RMB;
            }
            if (!miss)
                len = 1;
            else
                tok[j] = SY__TOK_NONE;
        } else if (len > 1) {
            tok[j] = SY__TOK_NONE;
        }
        np += len;
    }
    /* pass 3 (backwards, parts never move left): expand split characters;
     * flag parts for the word-pair table when it is worth its checks */
    const uint32_t pf = t->pmask >= PAIRS_MIN - 1 ? PURE | NOASC : 0, nf = pf & NOASC;
    size_t o = np;
    st[np] = (uint32_t)m;
    for (size_t j = nc; j-- > 0;) {
        uint32_t s0 = st[j], e = j + 1 < nc ? st[j + 1] : (uint32_t)m;
        if (e - s0 == 1 || tok[j] != SY__TOK_NONE) {
            o--;
            tok[o] = e - s0 == 1 ? tok[j] : (tok[j] & ID) | pf;
            st[o] = s0;
        } else {
            for (uint32_t i = e; i-- > s0;) {
                o--;
                st[o] = i;
                tok[o] = t->byte_rank[p[i]] | nf;
            }
        }
    }
    return np;
}

/* Rank of joining the parts [a, b) and [b, e) whose tokens are tl and tr:
 * through the word-pair table when both are pure, else by their bytes. */
static inline __attribute__((always_inline)) uint32_t join_rank(const struct sy_tok *t, const uint8_t *p, uint32_t a,
                                                                uint32_t e, uint32_t tl, uint32_t tr)
{
    if (tl & tr & PURE)
        return sy__tok_pair(t, tl & ID, tr & ID);
    return sy__tok_rank(t, p + a, e - a);
}

/* Flags of the part [a, e) joined from parts with tokens tl and tr (m: the
 * piece's length). */
static inline uint32_t join_flags(const uint8_t *p, uint32_t a, uint32_t e, uint32_t m, uint32_t tl, uint32_t tr)
{
    uint32_t f = tl & tr & (PURE | NOASC);
    if (f == NOASC && p[a] >= 0xC0 && (e == m || (p[e] & 0xC0) != 0x80))
        f |= PURE;
    return f;
}

/* Two joins at once: [a1, e1) and [a2, e2) (overlapping their misses). */
static inline __attribute__((always_inline)) void join_rank2(const struct sy_tok *t, const uint8_t *p, uint32_t a1,
                                                             uint32_t e1, uint32_t tl1, uint32_t tr1, uint32_t *r1,
                                                             uint32_t a2, uint32_t e2, uint32_t tl2, uint32_t tr2,
                                                             uint32_t *r2)
{
    if ((tl1 & tr1 & PURE) || (tl2 & tr2 & PURE)) {
        *r1 = join_rank(t, p, a1, e1, tl1, tr1);
        *r2 = join_rank(t, p, a2, e2, tl2, tr2);
    } else {
        sy__tok_rank2(t, p + a1, e1 - a1, r1, p + a2, e2 - a2, r2);
    }
}

#define SMALL 16

/* tiktoken's byte_pair_merge on an array of np <= SMALL parts: merge the
 * lowest-ranked adjacent pair, leftmost first. rk[j] is the rank of joining
 * parts j and j + 1 (NONE when impossible). */
static void bpe_small(const struct sy_tok *t, const uint8_t *p, size_t np, uint32_t *st, uint32_t *tok,
                      struct sy__tok_sink *k)
{
    uint32_t rk[SMALL + 1];
    for (size_t i = 0; i + 1 < np; i++)
        rk[i] = join_rank(t, p, st[i], st[i + 2], tok[i], tok[i + 1]);
    rk[np - 1] = SY__TOK_NONE;
    while (np > 1) {
        uint32_t best = SY__TOK_NONE;
        size_t bi = 0;
        for (size_t i = 0; i + 1 < np; i++)
            if (rk[i] < best) {
                best = rk[i];
                bi = i;
            }
        if (best == SY__TOK_NONE)
            break;
        /* merge parts bi and bi+1: drop entry bi+1 */
        tok[bi] = best | join_flags(p, st[bi], st[bi + 2], st[np], tok[bi], tok[bi + 1]);
        for (size_t i = bi + 1; i + 1 < np; i++) { /* short: a loop beats memmove */
            st[i] = st[i + 1];
            tok[i] = tok[i + 1];
            rk[i] = rk[i + 1];
        }
        st[np - 1] = st[np];
        np--;
        if (bi > 0 && bi + 1 < np) {
            join_rank2(t, p, st[bi], st[bi + 2], tok[bi], tok[bi + 1], &rk[bi], st[bi - 1], st[bi + 1], tok[bi - 1],
                       tok[bi], &rk[bi - 1]);
        } else {
            rk[bi] = bi + 1 < np ? join_rank(t, p, st[bi], st[bi + 2], tok[bi], tok[bi + 1]) : SY__TOK_NONE;
            if (bi > 0)
                rk[bi - 1] = join_rank(t, p, st[bi - 1], st[bi + 1], tok[bi - 1], tok[bi]);
        }
    }
    for (size_t i = 0; i < np; i++)
        emit(k, tok[i] & ID);
}

/* Long pieces: doubly linked parts + binary heap of (rank, part) with lazy
 * invalidation. Same merge order as bpe_small. A heap entry (rank, a) is
 * current iff cur[a] == rank: a part only grows to the right, so each
 * recomputation of cur[a] is for a longer string, i.e. a different rank
 * (or NONE), and a dead part has cur = NONE. */
static inline int hless(uint64_t a, uint64_t b)
{
    return a < b;
}
#define HENT(rank, part) ((uint64_t)(rank) << 32 | (part))
static void hpush(uint64_t *h, size_t *hn, uint64_t e)
{
    size_t i = (*hn)++;
    while (i > 0) {
        size_t pa = (i - 1) / 2;
        if (!hless(e, h[pa]))
            break;
        h[i] = h[pa];
        i = pa;
    }
    h[i] = e;
}

static void hsift(uint64_t *h, size_t n, size_t i)
{
    uint64_t e = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && hless(h[c + 1], h[c]))
            c++;
        if (!hless(h[c], e))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = e;
}

static uint64_t hpop(uint64_t *h, size_t *hn)
{
    uint64_t top = h[0];
    h[0] = h[--(*hn)];
    if (*hn)
        hsift(h, *hn, 0);
    return top;
}

static void bpe_large(const struct sy_tok *t, const uint8_t *p, size_t np, const uint32_t *st, uint32_t *tok,
                      uint32_t *scratch, struct sy__tok_sink *k)
{
    /* part j spans st[j]..st[nxt[j]]; nxt/prv link live parts */
    uint32_t *nxt = scratch, *prv = nxt + np + 1, *cur = prv + np + 1;
    uint64_t *h = (uint64_t *)(((uintptr_t)(cur + np + 1) + 7) & ~(uintptr_t)7); /* live pairs + 2 per merge */
    size_t hn = 0;
    for (size_t i = 0; i <= np; i++) {
        nxt[i] = (uint32_t)i + 1;
        prv[i] = (uint32_t)i - 1;
    }
    for (size_t i = 0; i + 1 < np; i++) {
        cur[i] = join_rank(t, p, st[i], st[i + 2], tok[i], tok[i + 1]);
        if (cur[i] != SY__TOK_NONE)
            h[hn++] = HENT(cur[i], i);
    }
    cur[np - 1] = SY__TOK_NONE;
    for (size_t i = hn / 2; i-- > 0;)
        hsift(h, hn, i);
    while (hn) {
        uint64_t e = hpop(h, &hn);
        uint32_t a = (uint32_t)e, rank = (uint32_t)(e >> 32);
        if (cur[a] != rank)
            continue;
        uint32_t b = nxt[a], c = nxt[b];
        nxt[a] = c;
        if (c <= np)
            prv[c] = a;
        cur[b] = SY__TOK_NONE; /* part b is gone */
        tok[a] = rank | join_flags(p, st[a], st[c], st[np], tok[a], tok[b]);
        /* new pairs (a, c) and (prev, a) */
        if (a > 0 && c < np) {
            uint32_t z = prv[a];
            join_rank2(t, p, st[a], st[nxt[c]], tok[a], tok[c], &cur[a], st[z], st[c], tok[z], tok[a], &cur[z]);
            if (cur[z] != SY__TOK_NONE)
                hpush(h, &hn, HENT(cur[z], z));
        } else if (a > 0) {
            uint32_t z = prv[a];
            cur[a] = SY__TOK_NONE;
            cur[z] = join_rank(t, p, st[z], st[c], tok[z], tok[a]);
            if (cur[z] != SY__TOK_NONE)
                hpush(h, &hn, HENT(cur[z], z));
        } else {
            cur[a] = c < np ? join_rank(t, p, st[a], st[nxt[c]], tok[a], tok[c]) : SY__TOK_NONE;
        }
        if (cur[a] != SY__TOK_NONE)
            hpush(h, &hn, HENT(cur[a], a));
    }
    for (uint32_t i = 0; i < np; i = nxt[i])
        emit(k, tok[i] & ID);
}

#define STACK_PARTS 256
/* scratch words per part: st, tok, nxt, prv, cur (+ alignment) and 3 heap
 * entries of 2 words */
#define SCRATCH_WORDS(n) (12 * ((n) + 2))

static void piece(const struct sy_tok *t, const uint8_t *p, size_t m, struct sy__tok_sink *k)
{
    uint32_t r = sy__tok_rank(t, p, m);
    if (r != SY__TOK_NONE) {
        emit(k, r);
        return;
    }
    uint64_t stack[SCRATCH_WORDS(STACK_PARTS) / 2];
    uint32_t *w = (uint32_t *)(void *)stack;
    if (m > STACK_PARTS) {
        w = malloc(SCRATCH_WORDS(m) * sizeof *w);
        if (!w) {
            k->err = SY_ENOMEM;
            return;
        }
    }
    uint32_t *st = w, *tok = st + m + 2;
    size_t np = init_parts(t, p, m, st, tok);
    if (np <= SMALL)
        bpe_small(t, p, np, st, tok, k);
    else
        bpe_large(t, p, np, st, tok, tok + m + 2, k);
    if (w != (uint32_t *)(void *)stack)
        free(w);
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
