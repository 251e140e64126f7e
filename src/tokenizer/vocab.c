/* vocab.c - loading the embedded .tiktoken rank files, decode, model map.
 *
 * The build embeds OpenAI's cl100k_base / o200k_base files unchanged
 * (vocab_blob.S, .incbin). Each line is "<base64 token bytes> <rank>\n".
 * sy_tok_init() parses both once (pthread_once) into struct sy_tok and builds
 * the Unicode class table the pre-tokeniser uses. After that everything here
 * is read-only and thread-safe.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/errors.h"
#include "tokenizer/tok_internal.h"
#include "tokenizer/unicode_tables.h"

extern const char sy__vocab_cl100k_start[], sy__vocab_cl100k_end[];
extern const char sy__vocab_o200k_start[], sy__vocab_o200k_end[];

uint8_t sy__uc_class[0x110001];

static const struct sy__tok_special special_cl100k[] = {
    {"<|endoftext|>", 100257}, {"<|fim_prefix|>", 100258}, {"<|fim_middle|>", 100259},
    {"<|fim_suffix|>", 100260}, {"<|endofprompt|>", 100276},
};
static const struct sy__tok_special special_o200k[] = {
    {"<|endoftext|>", 199999}, {"<|endofprompt|>", 200018},
};

static struct sy_tok toks[SY_TOK__COUNT];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_rc = SY_EINTERNAL;

static int b64val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Decode base64 p[0..n) into out; returns the byte count or -1. */
static long b64dec(const char *p, size_t n, uint8_t *out)
{
    uint32_t acc = 0;
    int bits = 0;
    long o = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '=')
            break;
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

static int load(struct sy_tok *t, enum sy_tok_encoding e, const char *p, const char *end)
{
    /* Pass 1: line count and largest rank. */
    size_t lines = 0, b64bytes = 0;
    uint32_t maxrank = 0;
    for (const char *q = p; q < end;) {
        const char *nl = memchr(q, '\n', (size_t)(end - q));
        if (!nl)
            nl = end;
        const char *sp = memchr(q, ' ', (size_t)(nl - q));
        if (!sp)
            return SY_EINTERNAL;
        uint32_t r = 0;
        for (const char *d = sp + 1; d < nl; d++)
            r = r * 10 + (uint32_t)(*d - '0');
        if (r > maxrank)
            maxrank = r;
        b64bytes += (size_t)(sp - q);
        lines++;
        q = nl + 1;
    }
    t->enc = e;
    t->nranks = maxrank + 1;
    t->bytes = malloc(b64bytes / 4 * 3 + 8);
    t->off = calloc((size_t)t->nranks + 1, sizeof *t->off);
    uint32_t *len = calloc(t->nranks, sizeof *len);
    const char **src = calloc(t->nranks, sizeof *src);
    uint32_t slots = 1;
    while (slots < lines * 2)
        slots <<= 1;
    t->tab = malloc(sizeof *t->tab * slots);
    t->mask = slots - 1;
    t->pair_rank = malloc(sizeof *t->pair_rank * 65536);
    if (!t->bytes || !t->off || !len || !src || !t->tab || !t->pair_rank) {
        free(len);
        free(src);
        return SY_ENOMEM;
    }
    /* Pass 2: remember where each rank's base64 is, then decode in rank order. */
    for (const char *q = p; q < end;) {
        const char *nl = memchr(q, '\n', (size_t)(end - q));
        if (!nl)
            nl = end;
        const char *sp = memchr(q, ' ', (size_t)(nl - q));
        uint32_t r = 0;
        for (const char *d = sp + 1; d < nl; d++)
            r = r * 10 + (uint32_t)(*d - '0');
        src[r] = q;
        len[r] = (uint32_t)(sp - q);
        q = nl + 1;
    }
    uint32_t o = 0;
    for (uint32_t r = 0; r < t->nranks; r++) {
        t->off[r] = o;
        if (src[r]) {
            long k = b64dec(src[r], len[r], t->bytes + o);
            if (k <= 0) {
                free(len);
                free(src);
                return SY_EINTERNAL;
            }
            o += (uint32_t)k;
        }
    }
    t->off[t->nranks] = o;
    free(len);
    free(src);
    memset(t->tab, 0xff, sizeof *t->tab * slots);
    memset(t->pair_rank, 0xff, sizeof *t->pair_rank * 65536);
    memset(t->byte_rank, 0xff, sizeof t->byte_rank);
    for (uint32_t r = 0; r < t->nranks; r++) {
        const uint8_t *b = t->bytes + t->off[r];
        uint32_t n = t->off[r + 1] - t->off[r];
        if (n == 0)
            continue;
        if (n == 1)
            t->byte_rank[b[0]] = r;
        if (n == 2)
            t->pair_rank[(unsigned)b[0] << 8 | b[1]] = r;
        uint32_t h = (uint32_t)sy__tok_hash(b, n);
        uint32_t i = h & t->mask;
        while (t->tab[i].rank != SY__TOK_NONE)
            i = (i + 1) & t->mask;
        t->tab[i].hash = h;
        t->tab[i].rank = r;
    }
    for (int b = 0; b < 256; b++)
        if (t->byte_rank[b] == SY__TOK_NONE)
            return SY_EINTERNAL; /* byte-level BPE needs every byte */
    if (e == SY_TOK_CL100K) {
        t->special = special_cl100k;
        t->nspecial = sizeof special_cl100k / sizeof special_cl100k[0];
    } else {
        t->special = special_o200k;
        t->nspecial = sizeof special_o200k / sizeof special_o200k[0];
    }
    return 0;
}

static void do_init(void)
{
    for (size_t i = 0; i < sy__uc_nranges; i++)
        memset(sy__uc_class + sy__uc_ranges[i][0], (int)sy__uc_ranges[i][2],
               sy__uc_ranges[i][1] - sy__uc_ranges[i][0] + 1);
    int rc = load(&toks[SY_TOK_CL100K], SY_TOK_CL100K, sy__vocab_cl100k_start, sy__vocab_cl100k_end);
    if (rc == 0)
        rc = load(&toks[SY_TOK_O200K], SY_TOK_O200K, sy__vocab_o200k_start, sy__vocab_o200k_end);
    init_rc = rc;
}

int sy_tok_init(void)
{
    pthread_once(&once, do_init);
    return init_rc;
}

const struct sy_tok *sy_tok_get(enum sy_tok_encoding e)
{
    if ((unsigned)e >= SY_TOK__COUNT || init_rc != 0)
        return NULL;
    return &toks[e];
}

static const char *const enc_names[SY_TOK__COUNT] = {"cl100k_base", "o200k_base"};

int sy_tok_encoding_by_name(const char *name, size_t len)
{
    for (int e = 0; e < SY_TOK__COUNT; e++)
        if (name && strlen(enc_names[e]) == len && memcmp(enc_names[e], name, len) == 0)
            return e;
    return -1;
}

const char *sy_tok_encoding_name(enum sy_tok_encoding e)
{
    return (unsigned)e < SY_TOK__COUNT ? enc_names[e] : "cl100k_base";
}

/* Model-name prefixes that select o200k_base (tiktoken's model map plus
 * LiteLLM's "gpt-4o anywhere in the name" rule). */
static const char *const o200k_prefixes[] = {
    "gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o",
};

enum sy_tok_encoding sy_tok_encoding_for_model(const char *model, size_t len)
{
    if (!model)
        return SY_TOK_CL100K;
    /* Drop provider prefixes: "openai/", "azure/gpt-4o", ... */
    const char *slash = memrchr(model, '/', len);
    if (slash) {
        len -= (size_t)(slash + 1 - model);
        model = slash + 1;
    }
    if (memmem(model, len, "gpt-4o", 6))
        return SY_TOK_O200K;
    for (size_t i = 0; i < sizeof o200k_prefixes / sizeof o200k_prefixes[0]; i++) {
        size_t n = strlen(o200k_prefixes[i]);
        if (len < n || strncasecmp(model, o200k_prefixes[i], n) != 0)
            continue;
        /* "o1" must be the whole name or followed by '-' (not "o100-foo"). */
        if (model[0] == 'o' && len > n && model[n] != '-')
            continue;
        return SY_TOK_O200K;
    }
    return SY_TOK_CL100K;
}

int sy_tok_decode(const struct sy_tok *t, const uint32_t *ids, size_t n, struct sy_buf *out)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t id = ids[i];
        int rc;
        if (id < t->nranks && t->off[id + 1] > t->off[id]) {
            rc = sy_buf_append(out, t->bytes + t->off[id], t->off[id + 1] - t->off[id]);
        } else {
            rc = SY_EINVAL;
            for (size_t s = 0; s < t->nspecial; s++)
                if (t->special[s].id == id)
                    rc = sy_buf_puts(out, t->special[s].text);
        }
        if (rc)
            return rc;
    }
    return 0;
}
