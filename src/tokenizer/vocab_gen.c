/* vocab_gen.c - build-time tool: convert a .tiktoken rank file into the
 * ready-to-use binary image that the library embeds (vocab_blob.S), so
 * sy_tok_init() does no parsing: the tables are used in place.
 *
 *   sy-tok-vocab-gen IN.tiktoken OUT.bin
 *
 * Image layout (native endianness, every section 8-byte aligned):
 *   struct sy__tok_image header (magic SY__TOK_MAGIC, counts)
 *   uint32_t off[nranks + 1]          token bytes of rank r: bytes[off[r]..off[r+1])
 *                                     (+ 4 zero bytes when nranks + 1 is odd)
 *   struct sy__tok_slot tab[nslots]   {key8, rank | len << 24, offset}, linear probing
 *   uint32_t pair_rank[65536]         rank of each 2-byte string or SY__TOK_NONE
 *   uint32_t byte_rank[256]
 *   uint64_t bloom[SY__TOK_BLOOM_BITS / 64]  tokens longer than 8 bytes
 *   uint64_t sbloom[SY__TOK_SBLOOM_WORDS]    tokens of 3..8 bytes (blocked)
 *   uint32_t char_tok[65536]          per BMP code point: its token when the
 *                                     character may be pre-merged (see below)
 *   uint32_t char_rmb[65536]          per BMP code point: bit sy__tok_rcls(L) set when
 *                                     a right neighbour with lead byte L allows it
 *   uint64_t char_lmb[65536]          per BMP code point: bit B & 0x3F set when a left
 *                                     neighbour ending with continuation byte B allows it
 *   uint64_t ptab[npslots]            CJK word table (see word_pairs below)
 *   uint64_t pbloom[npbloom]          its blocked Bloom filter
 *   uint8_t bytes[nbytes]
 * Fails (exit 1) on a malformed file, a duplicate or missing byte token.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer/tok_internal.h"

static int b64val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
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

/* Rank of p[0..n) in the finished table, or SY__TOK_NONE. */
static uint32_t lookup(const struct sy__tok_slot *tab, uint32_t nslots, const uint8_t *bytes, const uint32_t *off,
                       const uint8_t *p, size_t n)
{
    uint64_t k = sy__tok_key8(p, n);
    uint32_t i = (uint32_t)(sy__tok_hash(p, n, k) >> 32) & (nslots - 1);
    for (;; i = (i + 1) & (nslots - 1)) {
        uint32_t r = tab[i].rl & 0xffffffu;
        if (tab[i].rl == SY__TOK_NONE)
            return SY__TOK_NONE;
        if (off[r + 1] - off[r] == n && memcmp(bytes + off[r], p, n) == 0)
            return r;
    }
}

static void minr(uint32_t *a, uint32_t r)
{
    if (r < *a)
        *a = r;
}

/* The character pre-merge table. In a piece that is valid UTF-8, BPE may
 * start from a whole character c instead of its bytes when every merge that
 * BPE performs on c's bytes alone (ending in one token; highest rank M_c)
 * ranks below every token that could join a byte of c with a byte outside
 * c next to it ("straddling" tokens: one ending with a proper prefix of c,
 * one starting with a proper suffix of c, or one holding c and more). Proof
 * sketch: while c is unfinished, one of its own merges (rank <= M_c) is
 * available, so no straddling merge (rank > M_c) can be the minimum; every
 * merge touching c from outside thus happens after c is one token, and the
 * other merges are unaffected. Straddling tokens are split by the side they
 * extend to and the kind of neighbour byte there (ASCII, or a multi-byte
 * character), so the test is made per context:
 *   char_tok[cp] = token | SY__TOK_CT_* flags (contexts where it holds),
 *   or SY__TOK_NONE (c is not one token alone, or U+0000..U+007F, surrogates).
 * Finer, for a multi-byte neighbour when the coarse flag is not set: the
 * same minimum per class of the neighbour's byte next to c (its lead byte on
 * the right: char_rmb, classes sy__tok_rcls; its last, continuation byte on
 * the left: char_lmb, 64 classes). A merge joining c with that neighbour
 * makes a token holding that byte, so the same proof holds per class. Bytes
 * that cannot be there in valid UTF-8 only count in the coarse flags.
 */
static void char_table(const struct sy__tok_slot *tab, uint32_t nslots, const uint8_t *bytes, const uint32_t *off,
                       uint32_t nranks, uint32_t *char_tok, uint32_t *char_rmb, uint64_t *char_lmb)
{
    /* [k]: k = 0 the neighbour is ASCII, 1 it is (part of) a multi-byte character */
    static uint32_t lfull[2][65536], rfull[2][65536], suf1[2][256], suf2[2][65536], pre1[2][256], pre2[2][65536];
    /* the same right-side minima for a multi-byte neighbour, per class of its lead byte */
    static uint32_t rfullc[SY__TOK_RCLS][65536], suf1c[SY__TOK_RCLS][256], suf2c[SY__TOK_RCLS][65536];
    /* left side, per last byte of a multi-byte neighbour (a continuation byte) */
    static uint32_t lfullc[64][65536], pre1c[64][256], pre2c[64][65536];
    memset(lfullc, 0xff, sizeof lfullc);
    memset(pre1c, 0xff, sizeof pre1c);
    memset(pre2c, 0xff, sizeof pre2c);
    memset(rfullc, 0xff, sizeof rfullc);
    memset(suf1c, 0xff, sizeof suf1c);
    memset(suf2c, 0xff, sizeof suf2c);
    memset(lfull, 0xff, sizeof lfull);
    memset(rfull, 0xff, sizeof rfull);
    memset(suf1, 0xff, sizeof suf1);
    memset(suf2, 0xff, sizeof suf2);
    memset(pre1, 0xff, sizeof pre1);
    memset(pre2, 0xff, sizeof pre2);
    for (uint32_t r = 0; r < nranks; r++) {
        const uint8_t *b = bytes + off[r];
        size_t n = off[r + 1] - off[r], i = 0;
        while (i < n && (b[i] & 0xC0) == 0x80)
            i++;
        if (i > 3)
            continue; /* never occurs in valid UTF-8 */
        if (i > 0 && i < n) {
            int k = b[i] >= 0x80, c = sy__tok_rcls(b[i]);
            if (i == 1)
                minr(k ? &suf1c[c][b[0]] : &suf1[0][b[0]], r);
            else if (i == 2)
                minr(k ? &suf2c[c][b[0] << 8 | b[1]] : &suf2[0][b[0] << 8 | b[1]], r);
        }
        while (i < n) {
            uint8_t c = b[i];
            size_t len = c < 0x80                 ? 1
                         : c >= 0xC2 && c <= 0xDF ? 2
                         : c >= 0xE0 && c <= 0xEF ? 3
                         : c >= 0xF0 && c <= 0xF4 ? 4
                                                  : 0;
            if (!len)
                break; /* cannot occur in valid UTF-8 from here on */
            size_t have = 1;
            while (have < len && i + have < n && (b[i + have] & 0xC0) == 0x80)
                have++;
            int kl = i > 0 && b[i - 1] >= 0x80, lc = kl && (b[i - 1] & 0xC0) == 0x80 ? b[i - 1] & 0x3F : -1;
            if (have < len) {
                if (i + have == n && i > 0) { /* ends with a proper prefix of a character */
                    if (have == 1)
                        minr(lc >= 0 ? &pre1c[lc][c] : &pre1[kl][c], r);
                    else if (have == 2)
                        minr(lc >= 0 ? &pre2c[lc][c << 8 | b[i + 1]] : &pre2[kl][c << 8 | b[i + 1]], r);
                }
                break;
            }
            if (len == 2 || len == 3) {
                uint32_t cp = len == 2
                                  ? (uint32_t)(c & 0x1F) << 6 | (b[i + 1] & 0x3F)
                                  : (uint32_t)(c & 0x0F) << 12 | (uint32_t)(b[i + 1] & 0x3F) << 6 | (b[i + 2] & 0x3F);
                if (i > 0)
                    minr(lc >= 0 ? &lfullc[lc][cp] : &lfull[kl][cp], r);
                else if (n > len && b[len] < 0x80)
                    minr(&rfull[0][cp], r);
                else if (n > len)
                    minr(&rfullc[sy__tok_rcls(b[len])][cp], r);
            }
            i += len;
        }
    }
    for (uint32_t cp = 0; cp < 65536; cp++) {
        char_tok[cp] = SY__TOK_NONE;
        char_rmb[cp] = 0;
        char_lmb[cp] = 0;
        if (cp < 0x80 || (cp >= 0xD800 && cp <= 0xDFFF))
            continue;
        uint8_t u[3];
        size_t n;
        if (cp < 0x800) {
            u[0] = (uint8_t)(0xC0 | cp >> 6), u[1] = (uint8_t)(0x80 | (cp & 0x3F)), n = 2;
        } else {
            u[0] = (uint8_t)(0xE0 | cp >> 12), u[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
            u[2] = (uint8_t)(0x80 | (cp & 0x3F)), n = 3;
        }
        /* BPE of the character alone (leftmost lowest-ranked pair first) */
        uint32_t st[4] = {0, 1, 2, 3}, parts = (uint32_t)n, maxr = 0;
        while (parts > 1) {
            uint32_t best = SY__TOK_NONE, bi = 0;
            for (uint32_t j = 0; j + 1 < parts; j++) {
                uint32_t rr = lookup(tab, nslots, bytes, off, u + st[j], st[j + 2] - st[j]);
                if (rr < best)
                    best = rr, bi = j;
            }
            if (best == SY__TOK_NONE)
                break;
            if (best > maxr)
                maxr = best;
            for (uint32_t j = bi + 1; j < parts; j++)
                st[j] = st[j + 1];
            parts--;
            st[parts] = (uint32_t)n;
        }
        if (parts != 1)
            continue;
        uint32_t flags = 0, rm = 0;
        for (int c = 0; c < SY__TOK_RCLS; c++) {
            uint32_t right = rfullc[c][cp];
            minr(&right, suf1c[c][u[n - 1]]);
            if (n == 3)
                minr(&right, suf2c[c][u[1] << 8 | u[2]]);
            if (maxr < right)
                rm |= 1u << c;
            minr(&rfull[1][cp], right); /* RMB: the minimum over every class */
        }
        uint64_t lm = 0;
        for (int c = 0; c < 64; c++) {
            uint32_t left = lfullc[c][cp];
            minr(&left, pre1c[c][u[0]]);
            if (n == 3)
                minr(&left, pre2c[c][u[0] << 8 | u[1]]);
            if (maxr < left)
                lm |= 1ull << c;
            minr(&lfull[1][cp], left); /* LMB: the minimum over every class */
        }
        for (int k = 0; k < 2; k++) {
            uint32_t left = lfull[k][cp], right = rfull[k][cp];
            minr(&left, pre1[k][u[0]]);
            minr(&right, suf1[k][u[n - 1]]);
            if (n == 3) {
                minr(&left, pre2[k][u[0] << 8 | u[1]]);
                minr(&right, suf2[k][u[1] << 8 | u[2]]);
            }
            if (maxr < left)
                flags |= k ? SY__TOK_CT_LMB : SY__TOK_CT_LASCII;
            if (maxr < right)
                flags |= k ? SY__TOK_CT_RMB : SY__TOK_CT_RASCII;
        }
        char_tok[cp] = lookup(tab, nslots, bytes, off, u, n) | flags;
        char_rmb[cp] = rm;
        char_lmb[cp] = lm;
    }
}

/* Length of the UTF-8 character starting with lead byte c at b[0..n), or
 * 0 when it is not a whole, valid character of 2..4 bytes (the encoder's
 * dec() rules: no overlongs, surrogates or code points above U+10FFFF). */
static size_t mbchar(const uint8_t *b, size_t n)
{
    uint8_t c = b[0];
    size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (!len || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((b[i] & 0xC0) != 0x80)
            return 0;
    if (len == 3) {
        uint32_t v = (uint32_t)(c & 0x0F) << 12 | (uint32_t)(b[1] & 0x3F) << 6 | (b[2] & 0x3F);
        if (v < 0x800 || (v >= 0xD800 && v <= 0xDFFF))
            return 0;
    } else if (len == 4) {
        uint32_t v =
            (uint32_t)(c & 0x07) << 18 | (uint32_t)(b[1] & 0x3F) << 12 | (uint32_t)(b[2] & 0x3F) << 6 | (b[3] & 0x3F);
        if (v < 0x10000 || v > 0x10FFFF)
            return 0;
    }
    return len;
}

/* The word-pair table. A "pure" token is a whole sequence of valid 2..4-byte
 * UTF-8 characters (no ASCII). For every pure token T and every character
 * boundary splitting it into two tokens L | R, the table maps (L, R) -> T.
 * Both L and R are then pure, and conversely the concatenation of two pure
 * tokens is a token iff the table has their pair, so the encoder can join two
 * parts it knows to be pure with one probe of this small table (it stays in
 * L2) instead of hashing their bytes into the multi-megabyte table. Open
 * addressing, linear probing, load <= 0.6; returns the slot count (a power
 * of two) and the table in *out. */
static uint32_t word_pairs(const struct sy__tok_slot *tab, uint32_t nslots, const uint8_t *bytes, const uint32_t *off,
                           uint32_t nranks, uint64_t **out, uint64_t **bloom_out, uint32_t *nbloom)
{
    uint32_t cnt = 0, cap = 1024, *ent = malloc(sizeof *ent * 3 * cap);
    for (uint32_t r = 0; ent && r < nranks; r++) {
        const uint8_t *b = bytes + off[r];
        size_t n = off[r + 1] - off[r], i = 0, bounds[64], nb = 0;
        while (i < n) {
            size_t l = mbchar(b + i, n - i);
            if (!l)
                break;
            i += l;
            if (i < n && nb < 64)
                bounds[nb++] = i;
        }
        if (i != n || nb == 0 || nb == 64)
            continue; /* not pure, a single character, or absurdly long */
        for (size_t j = 0; j < nb; j++) {
            uint32_t lr = lookup(tab, nslots, bytes, off, b, bounds[j]);
            uint32_t rr = lookup(tab, nslots, bytes, off, b + bounds[j], n - bounds[j]);
            if (lr == SY__TOK_NONE || rr == SY__TOK_NONE)
                continue;
            if (cnt == cap) {
                cap *= 2;
                uint32_t *ne = realloc(ent, sizeof *ent * 3 * cap);
                if (!ne) {
                    free(ent);
                    ent = NULL;
                    break;
                }
                ent = ne;
            }
            ent[3 * cnt] = lr, ent[3 * cnt + 1] = rr, ent[3 * cnt + 2] = r, cnt++;
        }
    }
    if (!ent)
        return 0;
    uint32_t ns = 64;
    while (ns * 3 < cnt * 5) /* load <= 0.6 */
        ns <<= 1;
    uint32_t nw = 64;
    while (nw * 4 < cnt) /* ~16 bits per pair */
        nw <<= 1;
    uint64_t *pt = malloc(sizeof *pt * ns), *pb = calloc(nw, sizeof *pb);
    if (!pt || !pb) {
        free(ent);
        free(pt);
        free(pb);
        return 0;
    }
    memset(pt, 0xff, sizeof *pt * ns);
    for (uint32_t e = 0; e < cnt; e++) {
        uint64_t key = sy__tok_pkey(ent[3 * e], ent[3 * e + 1]);
        uint32_t i = sy__tok_phash(key) & (ns - 1);
        while (pt[i] != UINT64_MAX)
            i = (i + 1) & (ns - 1);
        pt[i] = key | (uint64_t)ent[3 * e + 2] << 42;
        uint64_t h = sy__tok_pbhash(key);
        pb[h & (nw - 1)] |= sy__tok_pbmask(h);
    }
    free(ent);
    *out = pt;
    *bloom_out = pb;
    *nbloom = nw;
    return ns;
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
    uint32_t *char_tok = malloc(sizeof *char_tok * 65536), *char_rmb = malloc(sizeof *char_rmb * 65536);
    uint64_t *char_lmb = malloc(sizeof *char_lmb * 65536);
    if (!char_tok || !char_rmb || !char_lmb)
        return die("out of memory");
    char_table(tab, nslots, bytes, off, nranks, char_tok, char_rmb, char_lmb);
    if (nranks > SY__TOK_PMAX)
        return die("too many ranks for the word-pair table");
    uint64_t *ptab = NULL, *pbloom = NULL;
    uint32_t npbloom = 0, npslots = word_pairs(tab, nslots, bytes, off, nranks, &ptab, &pbloom, &npbloom);
    if (!npslots)
        return die("out of memory");
    struct sy__tok_image hd = {.magic = SY__TOK_MAGIC,
                               .nranks = nranks,
                               .nslots = nslots,
                               .nbytes = o,
                               .maxlen = maxlen,
                               .npslots = npslots,
                               .npbloom = npbloom};
    FILE *w = fopen(argv[2], "wb");
    if (!w)
        return die("cannot open output");
    static const uint8_t zero[4];
    size_t offpad = ((nranks + 1) % 2) * 4; /* keep tab 8-byte aligned */
    int ok = fwrite(&hd, sizeof hd, 1, w) == 1 && fwrite(off, sizeof *off, nranks + 1, w) == nranks + 1 &&
             fwrite(zero, 1, offpad, w) == offpad && fwrite(tab, sizeof *tab, nslots, w) == nslots &&
             fwrite(pair, sizeof *pair, 65536, w) == 65536 && fwrite(byte_rank, sizeof byte_rank, 1, w) == 1 &&
             fwrite(bloom, sizeof *bloom, SY__TOK_BLOOM_BITS / 64, w) == SY__TOK_BLOOM_BITS / 64 &&
             fwrite(sbloom, sizeof *sbloom, SY__TOK_SBLOOM_WORDS, w) == SY__TOK_SBLOOM_WORDS &&
             fwrite(char_tok, sizeof *char_tok, 65536, w) == 65536 &&
             fwrite(char_rmb, sizeof *char_rmb, 65536, w) == 65536 &&
             fwrite(char_lmb, sizeof *char_lmb, 65536, w) == 65536 &&
             fwrite(ptab, sizeof *ptab, npslots, w) == npslots &&
             fwrite(pbloom, sizeof *pbloom, npbloom, w) == npbloom && fwrite(bytes, 1, o, w) == o &&
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
    free(char_tok);
    free(char_rmb);
    free(char_lmb);
    free(ptab);
    free(pbloom);
    return 0;
}
