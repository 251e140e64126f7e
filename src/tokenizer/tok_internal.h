/* tok_internal.h - private structures shared by the tokenizer's files.
 *
 * A loaded encoding keeps the token bytes in rank order (off[r]..off[r+1]),
 * an open-addressing hash from byte string to rank (linear probing, the
 * stored 32-bit hash rejects most probes without a memcmp), and two direct
 * tables for the 1- and 2-byte strings that start every BPE merge. */
#ifndef SY_TOK_INTERNAL_H
#define SY_TOK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tokenizer/tokenizer.h"

#define SY__TOK_NONE UINT32_MAX

/* One hash slot: the token's first 8 bytes (zero padded) inline, so most
 * lookups (tokens up to 8 bytes) finish without touching the byte array. */
struct sy__tok_slot {
    uint64_t key8; /* first min(len, 8) bytes, little-endian, zero padded */
    uint32_t rl;   /* rank | length << 24; SY__TOK_NONE when the slot is empty */
    uint32_t off;  /* offset of the token's bytes */
};

struct sy__tok_special {
    const char *text;
    uint32_t id;
};

/* Header of the build-time vocabulary image (see vocab_gen.c). */
#define SY__TOK_MAGIC "SYTOKV6"
struct sy__tok_image {
    char magic[8];
    uint32_t nranks, nslots, nbytes, maxlen;
    uint32_t npslots, npbloom; /* word-pair table slots, its filter's words (powers of two) */
};

/* char_tok flags (vocab_gen.c): BPE may start from the character's token
 * when its left neighbour in the piece is nothing / ASCII / a multi-byte
 * character with LASCII / LMB set, and likewise on the right. */
#define SY__TOK_CT_LASCII (1u << 24)
#define SY__TOK_CT_LMB    (1u << 25)
#define SY__TOK_CT_RASCII (1u << 26)
#define SY__TOK_CT_RMB    (1u << 27)

/* Finer right-neighbour test (char_rmb, vocab_gen.c): when RMB is not set,
 * bit sy__tok_rcls(L) of char_rmb[cp] tells whether a multi-byte right
 * neighbour with lead byte L allows the pre-merge. Classes: E0..EF one
 * each, C0..DF in blocks of 8, F0..FF, and continuation bytes (which never
 * start a neighbour; only counted in RMB). */
#define SY__TOK_RCLS 22
static inline int sy__tok_rcls(uint8_t b)
{
    return b >= 0xE0 && b <= 0xEF ? b - 0xE0 : b >= 0xC0 && b < 0xE0 ? 16 + ((b - 0xC0) >> 3) : b >= 0xF0 ? 20 : 21;
}

/* All table pointers point into the embedded, read-only image. */
struct sy_tok {
    enum sy_tok_encoding enc;
    uint32_t nranks;                /* ranks are 0..nranks-1 */
    const uint8_t *bytes;           /* token bytes in rank order */
    const uint32_t *off;            /* nranks + 1 offsets into bytes */
    const struct sy__tok_slot *tab; /* mask + 1 slots */
    uint32_t mask;
    uint32_t maxlen;           /* longest token, bytes */
    const uint32_t *byte_rank; /* 256: rank of each single byte */
    const uint32_t *pair_rank; /* 65536: rank of each 2-byte string or NONE */
    const uint64_t *bloom;     /* SY__TOK_BLOOM_BITS: tokens longer than 8 bytes */
    const uint64_t *sbloom;    /* SY__TOK_SBLOOM_WORDS: tokens of 3..8 bytes */
    const uint32_t *char_tok;  /* 65536: token | SY__TOK_CT_* of each BMP character, or NONE */
    const uint32_t *char_rmb;  /* 65536: bit per right-neighbour lead-byte class (sy__tok_rcls) */
    const uint64_t *char_lmb;  /* 65536: bit per left neighbour's last byte & 0x3F (a continuation byte) */
    const uint64_t *ptab;      /* word-pair table, pmask + 1 slots */
    const uint64_t *pbloom;    /* its filter, pbmask + 1 words */
    uint32_t pmask, pbmask;
    const struct sy__tok_special *special;
    size_t nspecial;
};

/* Flat per-code-point class table (SY_UC_* bits); index 0x110000 is the
 * class of an invalid UTF-8 byte (none: it splits like U+FFFD). */
extern uint8_t sy__uc_class[0x110001];

static inline uint64_t sy__tok_rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static inline uint64_t sy__tok_rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t sy__tok_mum(uint64_t a, uint64_t b)
{
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* Word-pair table (vocab_gen.c, word_pairs): 64-bit slots holding
 * left | right << 21 | merged << 42 (token ids of 21 bits); all ones = empty.
 * Keyed by the ids of two "pure" tokens (whole non-ASCII characters). */
#define SY__TOK_PMAX ((1u << 21) - 1) /* most ranks */
static inline uint64_t sy__tok_pkey(uint32_t l, uint32_t r)
{
    return (uint64_t)l | (uint64_t)r << 21;
}
static inline uint32_t sy__tok_phash(uint64_t key)
{
    return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32);
}
/* Its blocked Bloom filter (one 64-bit word per pair, three bits in it;
 * ~16 bits per pair): most candidate pairs are not tokens, and the filter
 * answers them from L1/L2 without touching the table. */
static inline uint64_t sy__tok_pbhash(uint64_t key)
{
    return sy__tok_mum(key ^ 0xa0761d6478bd642full, 0xe7037ed1a0b428dbull);
}
static inline uint64_t sy__tok_pbmask(uint64_t h)
{
    return 1ull << (h >> 46 & 63) | 1ull << (h >> 52 & 63) | 1ull << (h >> 58 & 63);
}

/* First min(n, 8) bytes of p as a zero-padded little-endian word. */
static inline uint64_t sy__tok_key8(const uint8_t *p, size_t n)
{
    if (n >= 8)
        return sy__tok_rd64(p);
    if (n >= 4)
        return sy__tok_rd32(p) | sy__tok_rd32(p + n - 4) << (8 * (n - 4));
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Hash of a byte string whose key8 is k (wyhash-style multiply-fold). The
 * build-time generator uses the same function, so changing it changes the
 * vocabulary image too (it is rebuilt). Never reads outside p[0..n). */
static inline uint64_t sy__tok_hash(const uint8_t *p, size_t n, uint64_t k)
{
    const uint64_t k1 = 0xe7037ed1a0b428dbull, k2 = 0x8ebc6af09c88c6e3ull;
    if (n <= 8)
        return sy__tok_mum(k ^ k1 ^ n, k2);
    uint64_t seed = n;
    size_t i = 8;
    for (; i + 16 <= n; i += 16)
        seed = sy__tok_mum(sy__tok_rd64(p + i) ^ k1, sy__tok_rd64(p + i + 8) ^ seed);
    return sy__tok_mum(k ^ k1 ^ seed, sy__tok_rd64(p + n - 8) ^ k2);
}

/* Bloom filter over the tokens longer than 8 bytes (two bits from the
 * hash): most failed lookups of long strings stop here instead of missing
 * the cache on the big table. */
#define SY__TOK_BLOOM_BITS (1u << 19)
static inline uint32_t sy__tok_bloom1(uint64_t hh)
{
    return (uint32_t)hh & (SY__TOK_BLOOM_BITS - 1);
}
static inline uint32_t sy__tok_bloom2(uint64_t hh)
{
    return (uint32_t)(hh >> 13) & (SY__TOK_BLOOM_BITS - 1);
}
static inline int sy__tok_maybe(const uint64_t *bloom, uint64_t hh)
{
    uint32_t a = sy__tok_bloom1(hh), b = sy__tok_bloom2(hh);
    return (bloom[a >> 6] >> (a & 63) & 1) && (bloom[b >> 6] >> (b & 63) & 1);
}

/* Blocked Bloom filter over the tokens of 3..8 bytes: one 64-bit word per
 * string, three bits in it. 256 KB, so it stays in L2 while the big table
 * does not; most candidate pairs in a CJK/Indic merge are not tokens, and
 * this turns their L3/TLB-missing probe into an L2 hit. The bits used are
 * disjoint from the per-thread cache index (low 12 bits). */
#define SY__TOK_SBLOOM_WORDS (1u << 15)
static inline uint64_t sy__tok_sbloom_mask(uint64_t hh)
{
    return 1ull << (hh >> 46 & 63) | 1ull << (hh >> 52 & 63) | 1ull << (hh >> 58 & 63);
}
static inline uint32_t sy__tok_sbloom_word(uint64_t hh)
{
    return (uint32_t)(hh >> 12) & (SY__TOK_SBLOOM_WORDS - 1);
}

/* A prepared lookup: its first slot can be prefetched before probing, so
 * two lookups overlap their cache misses. */
struct sy__tok_probe {
    uint64_t k;
    uint32_t i;
};
static inline struct sy__tok_probe sy__tok_prep(const struct sy_tok *t, const uint8_t *p, size_t n)
{
    struct sy__tok_probe q = {sy__tok_key8(p, n), 0};
    uint64_t hh = sy__tok_hash(p, n, q.k);
    if (n > 8 && !sy__tok_maybe(t->bloom, hh)) {
        q.i = UINT32_MAX; /* certainly absent */
        return q;
    }
    q.i = (uint32_t)(hh >> 32) & t->mask;
    __builtin_prefetch(&t->tab[q.i]);
    return q;
}
static inline uint32_t sy__tok_probe(const struct sy_tok *t, struct sy__tok_probe q, const uint8_t *p, size_t n)
{
    uint64_t k = q.k;
    uint32_t want = (uint32_t)n << 24;
    if (q.i == UINT32_MAX)
        return SY__TOK_NONE;
    for (uint32_t i = q.i;; i = (i + 1) & t->mask) {
        const struct sy__tok_slot *s = &t->tab[i];
        if (s->rl == SY__TOK_NONE)
            return SY__TOK_NONE;
        if (s->key8 == k && (s->rl & 0xff000000u) == want &&
            (n <= 8 || memcmp(t->bytes + s->off + 8, p + 8, n - 8) == 0))
            return s->rl & 0xffffffu;
    }
}

/* Per-thread direct-mapped cache of recent lookups of 3..8-byte strings
 * (the merges inside and between CJK/Indic characters): it keeps the hot part
 * of the multi-megabyte hash table in L1/L2. An entry is valid for the
 * encoding and length in its tag. */
#define SY__TOK_CACHE 4096
struct sy__tok_cache_ent {
    uint64_t key8;
    uint32_t rank;
    uint32_t tag; /* length | (encoding + 1) << 8; 0 = empty */
};
extern __thread struct sy__tok_cache_ent sy__tok_cache[SY__TOK_CACHE];

/* Rank of the byte string p[0..n), or SY__TOK_NONE. */
static inline __attribute__((always_inline)) uint32_t sy__tok_rank(const struct sy_tok *t, const uint8_t *p, size_t n)
{
    if (n == 2)
        return t->pair_rank[(unsigned)p[0] << 8 | p[1]];
    if (n == 1)
        return t->byte_rank[p[0]];
    if (n > t->maxlen)
        return SY__TOK_NONE;
    if (n <= 8) {
        uint64_t k = sy__tok_key8(p, n);
        uint64_t hh = sy__tok_hash(p, n, k);
        uint32_t tag = (uint32_t)n | ((uint32_t)t->enc + 1) << 8;
        struct sy__tok_cache_ent *c = &sy__tok_cache[hh & (SY__TOK_CACHE - 1)];
        if (c->key8 == k && c->tag == tag)
            return c->rank;
        uint64_t bm = sy__tok_sbloom_mask(hh);
        uint32_t r = SY__TOK_NONE;
        if ((t->sbloom[sy__tok_sbloom_word(hh)] & bm) == bm) {
            struct sy__tok_probe q = {k, (uint32_t)(hh >> 32) & t->mask};
            r = sy__tok_probe(t, q, p, n);
        }
        *c = (struct sy__tok_cache_ent){k, r, tag};
        return r;
    }
    return sy__tok_probe(t, sy__tok_prep(t, p, n), p, n);
}

/* Rank of the concatenation of two pure tokens l and r (ids), or
 * SY__TOK_NONE: one probe of the small word-pair table. */
static inline uint32_t sy__tok_pair(const struct sy_tok *t, uint32_t l, uint32_t r)
{
    uint64_t key = sy__tok_pkey(l, r), h = sy__tok_pbhash(key), bm = sy__tok_pbmask(h);
    if ((t->pbloom[h & t->pbmask] & bm) != bm)
        return SY__TOK_NONE;
    for (uint32_t i = sy__tok_phash(key) & t->pmask;; i = (i + 1) & t->pmask) {
        uint64_t s = t->ptab[i];
        if (s == UINT64_MAX)
            return SY__TOK_NONE;
        if ((s & ((1ull << 42) - 1)) == key)
            return (uint32_t)(s >> 42);
    }
}

/* Ranks of two strings at once (their cache misses overlap). */
static inline void sy__tok_rank2(const struct sy_tok *t, const uint8_t *p1, size_t n1, uint32_t *r1, const uint8_t *p2,
                                 size_t n2, uint32_t *r2)
{
    if (n1 <= 8 || n1 > t->maxlen || n2 <= 8 || n2 > t->maxlen) {
        *r1 = sy__tok_rank(t, p1, n1);
        *r2 = sy__tok_rank(t, p2, n2);
        return;
    }
    struct sy__tok_probe a = sy__tok_prep(t, p1, n1), b = sy__tok_prep(t, p2, n2);
    *r1 = sy__tok_probe(t, a, p1, n1);
    *r2 = sy__tok_probe(t, b, p2, n2);
}

/* Calls for each token id of text; used by encode and count. */
struct sy__tok_sink {
    uint32_t *ids; /* NULL: count only */
    size_t n, cap;
    int err;
};
void sy__tok_run(const struct sy_tok *t, const uint8_t *s, size_t len, struct sy__tok_sink *k);

/* Split text into pre-tokenisation pieces; returns the end of the piece that
 * starts at i (i < n). Exposed for tests. */
size_t sy__tok_split_next(enum sy_tok_encoding e, const uint8_t *s, size_t i, size_t n);

/* Image size from a data: URL (PNG/JPEG/GIF/WebP header); 0 when found. */
int sy__tok_image_size(const char *url, size_t len, unsigned *w, unsigned *h);
/* LiteLLM's calculate_img_tokens for detail "high" given the image size. */
long sy__tok_image_high_tokens(unsigned w, unsigned h);

struct json_object;
struct sy_buf;
/* Count a parsed request (see sy_tok_count_request); with_tools = 0 ignores
 * tools/tool_choice as LiteLLM's /utils/token_counter does. */
long sy__tok_count_parsed(const struct sy_tok *t, struct json_object *req, int with_tools);
/* Append LiteLLM's TypeScript-like rendering of a `tools` array to b. */
long sy__tok_tools_render(struct json_object *tools, struct sy_buf *b);
/* Python truthiness of a JSON value (null, false, 0, "", [], {} are false). */
int sy__tok_truthy(struct json_object *o);

#endif
