/* vocab.c - the embedded vocabularies, decode, the model -> encoding map.
 *
 * At build time OpenAI's cl100k_base / o200k_base .tiktoken files (fetched
 * and sha256-verified by scripts/fetch-vocab.sh) are turned into ready-made
 * tables by vocab_gen.c and embedded read-only with .incbin (vocab_blob.S).
 * sy_tok_init() (once, pthread_once) only checks the image headers, points
 * struct sy_tok into them and expands the Unicode class table (1.1 MB): a
 * few milliseconds, and the vocabulary pages are shared, read-only memory.
 * After init everything here is read-only and thread-safe.
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
    {"<|endoftext|>", 100257},  {"<|fim_prefix|>", 100258},  {"<|fim_middle|>", 100259},
    {"<|fim_suffix|>", 100260}, {"<|endofprompt|>", 100276},
};
static const struct sy__tok_special special_o200k[] = {
    {"<|endoftext|>", 199999},
    {"<|endofprompt|>", 200018},
};

static struct sy_tok toks[SY_TOK__COUNT];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_rc = SY_EINTERNAL;

static int load(struct sy_tok *t, enum sy_tok_encoding e, const char *p, const char *end)
{
    struct sy__tok_image hd;
    if ((size_t)(end - p) < sizeof hd || ((uintptr_t)p & 7))
        return SY_EINTERNAL;
    memcpy(&hd, p, sizeof hd);
    size_t offsz = 4 * ((size_t)hd.nranks + 1 + (hd.nranks + 1) % 2);
    size_t need = sizeof hd + offsz + sizeof(struct sy__tok_slot) * hd.nslots + 4 * (65536 + 256) +
                  SY__TOK_BLOOM_BITS / 8 + 8 * SY__TOK_SBLOOM_WORDS + 16 * 65536 +
                  8 * ((size_t)hd.npslots + hd.npbloom) + hd.nbytes;
    if (memcmp(hd.magic, SY__TOK_MAGIC, sizeof hd.magic) != 0 || (size_t)(end - p) < need ||
        (hd.nslots & (hd.nslots - 1)) || !hd.npslots || (hd.npslots & (hd.npslots - 1)) || !hd.npbloom ||
        (hd.npbloom & (hd.npbloom - 1)))
        return SY_EINTERNAL;
    const char *q = p + sizeof hd;
    t->enc = e;
    t->nranks = hd.nranks;
    t->off = (const uint32_t *)(const void *)q;
    q += offsz;
    t->tab = (const struct sy__tok_slot *)(const void *)q;
    t->mask = hd.nslots - 1;
    t->maxlen = hd.maxlen;
    q += sizeof(struct sy__tok_slot) * hd.nslots;
    t->pair_rank = (const uint32_t *)(const void *)q;
    q += 4 * 65536;
    t->byte_rank = (const uint32_t *)(const void *)q;
    q += 4 * 256;
    t->bloom = (const uint64_t *)(const void *)q;
    q += SY__TOK_BLOOM_BITS / 8;
    t->sbloom = (const uint64_t *)(const void *)q;
    q += 8 * SY__TOK_SBLOOM_WORDS;
    t->char_tok = (const uint32_t *)(const void *)q;
    q += 4 * 65536;
    t->char_rmb = (const uint32_t *)(const void *)q;
    q += 4 * 65536;
    t->char_lmb = (const uint64_t *)(const void *)q;
    q += 8 * 65536;
    t->ptab = (const uint64_t *)(const void *)q;
    t->pmask = hd.npslots - 1;
    q += 8 * (size_t)hd.npslots;
    t->pbloom = (const uint64_t *)(const void *)q;
    t->pbmask = hd.npbloom - 1;
    q += 8 * (size_t)hd.npbloom;
    t->bytes = (const uint8_t *)q;
    if (t->off[hd.nranks] != hd.nbytes)
        return SY_EINTERNAL;
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
