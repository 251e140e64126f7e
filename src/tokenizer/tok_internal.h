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

struct sy__tok_slot {
    uint32_t hash; /* low 32 bits of the key's hash */
    uint32_t rank; /* SY__TOK_NONE when the slot is empty */
};

struct sy__tok_special {
    const char *text;
    uint32_t id;
};

struct sy_tok {
    enum sy_tok_encoding enc;
    uint32_t nranks;              /* ranks are 0..nranks-1 */
    uint8_t *bytes;               /* token bytes in rank order */
    uint32_t *off;                /* nranks + 1 offsets into bytes */
    struct sy__tok_slot *tab;     /* mask + 1 slots */
    uint32_t mask;
    uint32_t byte_rank[256];      /* rank of each single byte */
    uint32_t *pair_rank;          /* 65536: rank of each 2-byte string or NONE */
    const struct sy__tok_special *special;
    size_t nspecial;
};

/* Flat per-code-point class table (SY_UC_* bits); index 0x110000 is the
 * class of an invalid UTF-8 byte (none: it splits like U+FFFD). */
extern uint8_t sy__uc_class[0x110001];

static inline uint64_t sy__tok_hash(const uint8_t *p, size_t n)
{
    uint64_t h = (uint64_t)n * 0x9E3779B97F4A7C15ull;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        h = (h ^ v) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
        p += 8;
        n -= 8;
    }
    if (n) {
        uint64_t v = 0;
        memcpy(&v, p, n);
        h = (h ^ v) * 0x94d049bb133111ebull;
    }
    h ^= h >> 33; /* murmur3 finaliser: every input bit reaches the low bits */
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

/* Rank of the byte string p[0..n), or SY__TOK_NONE. */
static inline uint32_t sy__tok_rank(const struct sy_tok *t, const uint8_t *p, size_t n)
{
    if (n == 2)
        return t->pair_rank[(unsigned)p[0] << 8 | p[1]];
    if (n == 1)
        return t->byte_rank[p[0]];
    uint32_t h = (uint32_t)sy__tok_hash(p, n);
    for (uint32_t i = h & t->mask;; i = (i + 1) & t->mask) {
        const struct sy__tok_slot *s = &t->tab[i];
        if (s->rank == SY__TOK_NONE)
            return SY__TOK_NONE;
        if (s->hash == h && t->off[s->rank + 1] - t->off[s->rank] == n &&
            memcmp(t->bytes + t->off[s->rank], p, n) == 0)
            return s->rank;
    }
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

#endif
