/* vocab_gen.c - build-time tool: convert a .tiktoken rank file into the
 * ready-to-use binary image that the library embeds (vocab_blob.S), so
 * sy_tok_init() does no parsing: the tables are used in place.
 *
 *   sy-tok-vocab-gen IN.tiktoken OUT.bin
 *
 * Image layout (native endianness, every section 8-byte aligned):
 *   struct sy__tok_image header (magic "SYTOKV1", counts)
 *   uint32_t off[nranks + 1]          token bytes of rank r: bytes[off[r]..off[r+1])
 *                                     (+ 4 zero bytes when nranks + 1 is odd)
 *   struct sy__tok_slot tab[nslots]   {key8, rank | len << 24, offset}, linear probing
 *   uint32_t pair_rank[65536]         rank of each 2-byte string or SY__TOK_NONE
 *   uint32_t byte_rank[256]
 *   uint64_t bloom[SY__TOK_BLOOM_BITS / 64]  tokens longer than 8 bytes
 *   uint64_t sbloom[SY__TOK_SBLOOM_WORDS]    tokens of 3..8 bytes (blocked)
 *   uint8_t bytes[nbytes]
 * Fails (exit 1) on a malformed file, a duplicate or missing byte token.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer/tok_internal.h"

static int b64val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

static long b64dec(const char *p, size_t n, uint8_t *out)
{
    uint32_t acc = 0;
    int bits = 0;
    long o = 0;
    for (size_t i = 0; i < n && p[i] != '='; i++) {
        int v = b64val((unsigned char)p[i]);
        if (v < 0)
            return -1;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (uint8_t)(acc >> bits);
        }
    }
    return o;
}

static int die(const char *m)
{
    fprintf(stderr, "sy-tok-vocab-gen: %s\n", m);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return die("usage: sy-tok-vocab-gen IN.tiktoken OUT.bin");
    FILE *f = fopen(argv[1], "rb");
    if (!f)
        return die("cannot open input");
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *txt = malloc((size_t)sz + 1);
    if (!txt || fread(txt, 1, (size_t)sz, f) != (size_t)sz)
        return die("cannot read input");
    fclose(f);
    const char *end = txt + sz;
    /* pass 1: ranks */
    uint32_t maxrank = 0, lines = 0;
    for (const char *q = txt; q < end;) {
        const char *nl = memchr(q, '\n', (size_t)(end - q));
        if (!nl)
            nl = end;
        const char *sp = memchr(q, ' ', (size_t)(nl - q));
        if (!sp || sp + 1 >= nl)
            return die("malformed line");
        uint32_t r = 0;
        for (const char *d = sp + 1; d < nl; d++) {
            if (*d < '0' || *d > '9')
                return die("malformed rank");
            r = r * 10 + (uint32_t)(*d - '0');
        }
        if (r > maxrank)
            maxrank = r;
        lines++;
        q = nl + 1;
    }
    uint32_t nranks = maxrank + 1;
    const char **src = calloc(nranks, sizeof *src);
    uint32_t *srclen = calloc(nranks, sizeof *srclen);
    uint32_t *off = calloc((size_t)nranks + 1, sizeof *off);
    uint8_t *bytes = malloc((size_t)sz);
    uint32_t nslots = 1;
    while (nslots < lines * 2u)
        nslots <<= 1;
    struct sy__tok_slot *tab = malloc(sizeof *tab * nslots);
    uint32_t *pair = malloc(sizeof *pair * 65536);
    uint32_t byte_rank[256];
    uint64_t *bloom = calloc(SY__TOK_BLOOM_BITS / 64, sizeof *bloom);
    uint64_t *sbloom = calloc(SY__TOK_SBLOOM_WORDS, sizeof *sbloom);
    if (!src || !srclen || !off || !bytes || !tab || !pair || !bloom || !sbloom)
        return die("out of memory");
    for (const char *q = txt; q < end;) {
        const char *nl = memchr(q, '\n', (size_t)(end - q));
        if (!nl)
            nl = end;
        const char *sp = memchr(q, ' ', (size_t)(nl - q));
        uint32_t r = 0;
        for (const char *d = sp + 1; d < nl; d++)
            r = r * 10 + (uint32_t)(*d - '0');
        if (src[r])
            return die("duplicate rank");
        src[r] = q;
        srclen[r] = (uint32_t)(sp - q);
        q = nl + 1;
    }
    uint32_t o = 0;
    for (uint32_t r = 0; r < nranks; r++) {
        off[r] = o;
        if (src[r]) {
            long k = b64dec(src[r], srclen[r], bytes + o);
            if (k <= 0)
                return die("bad base64");
            o += (uint32_t)k;
        }
    }
    off[nranks] = o;
    memset(tab, 0xff, sizeof *tab * nslots);
    memset(pair, 0xff, sizeof *pair * 65536);
    memset(byte_rank, 0xff, sizeof byte_rank);
    uint32_t maxlen = 0;
    for (uint32_t r = 0; r < nranks; r++) {
        const uint8_t *b = bytes + off[r];
        uint32_t n = off[r + 1] - off[r];
        if (n == 0)
            continue;
        if (n == 1)
            byte_rank[b[0]] = r;
        if (n == 2)
            pair[(unsigned)b[0] << 8 | b[1]] = r;
        if (n > 255 || r >= (1u << 24))
            return die("token too long or rank too large for the slot format");
        if (n > maxlen)
            maxlen = n;
        uint64_t k = sy__tok_key8(b, n);
        uint64_t hh = sy__tok_hash(b, n, k);
        uint32_t i = (uint32_t)(hh >> 32) & (nslots - 1);
        while (tab[i].rl != SY__TOK_NONE) {
            const struct sy__tok_slot *s = &tab[i];
            uint32_t sr = s->rl & 0xffffffu;
            if (off[sr + 1] - off[sr] == n && memcmp(bytes + off[sr], b, n) == 0)
                return die("duplicate token bytes");
            i = (i + 1) & (nslots - 1);
        }
        if (n > 8) {
            uint32_t b1 = sy__tok_bloom1(hh), b2 = sy__tok_bloom2(hh);
            bloom[b1 >> 6] |= 1ull << (b1 & 63);
            bloom[b2 >> 6] |= 1ull << (b2 & 63);
        } else if (n >= 3) {
            sbloom[sy__tok_sbloom_word(hh)] |= sy__tok_sbloom_mask(hh);
        }
        tab[i].key8 = k;
        tab[i].off = off[r];
        tab[i].rl = r | n << 24;
    }
    for (int b = 0; b < 256; b++)
        if (byte_rank[b] == SY__TOK_NONE)
            return die("a single byte has no rank");
    struct sy__tok_image hd = {.magic = SY__TOK_MAGIC, .nranks = nranks, .nslots = nslots, .nbytes = o, .maxlen = maxlen};
    FILE *w = fopen(argv[2], "wb");
    if (!w)
        return die("cannot open output");
    static const uint8_t zero[4];
    size_t offpad = ((nranks + 1) % 2) * 4; /* keep tab 8-byte aligned */
    int ok = fwrite(&hd, sizeof hd, 1, w) == 1 && fwrite(off, sizeof *off, nranks + 1, w) == nranks + 1 &&
             fwrite(zero, 1, offpad, w) == offpad &&
             fwrite(tab, sizeof *tab, nslots, w) == nslots && fwrite(pair, sizeof *pair, 65536, w) == 65536 &&
             fwrite(byte_rank, sizeof byte_rank, 1, w) == 1 &&
             fwrite(bloom, sizeof *bloom, SY__TOK_BLOOM_BITS / 64, w) == SY__TOK_BLOOM_BITS / 64 &&
             fwrite(sbloom, sizeof *sbloom, SY__TOK_SBLOOM_WORDS, w) == SY__TOK_SBLOOM_WORDS &&
             fwrite(bytes, 1, o, w) == o &&
             fwrite(zero, 1, (4 - o % 4) % 4, w) == (4 - o % 4) % 4;
    if (fclose(w) != 0 || !ok)
        return die("write failed");
    free(txt);
    free(src);
    free(srclen);
    free(off);
    free(bytes);
    free(tab);
    free(pair);
    free(bloom);
    free(sbloom);
    return 0;
}
