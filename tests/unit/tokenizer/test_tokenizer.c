/* test_tokenizer.c - unit tests for src/tokenizer: known tiktoken ids in both
 * encodings, byte round trips (including invalid UTF-8), the model map,
 * LiteLLM chat counting rules (names, tools, tool_choice, images, tool calls,
 * prompt/input), the /utils/token_counter response, and the encoder against
 * a plain byte-level reference BPE on random multi-script text. Expected ids come
 * from npm tiktoken 1.0.22. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "core/buf.h"
#include "core/errors.h"
#include "tokenizer/tok_internal.h"
#include "tokenizer/tokenizer.h"

static const struct sy_tok *cl, *o2;

static int setup(void **state)
{
    (void)state;
    if (sy_tok_init() != 0)
        return -1;
    cl = sy_tok_get(SY_TOK_CL100K);
    o2 = sy_tok_get(SY_TOK_O200K);
    return 0;
}

static void expect_ids(const struct sy_tok *t, const char *s, const uint32_t *want, size_t nwant)
{
    uint32_t *ids = NULL;
    size_t n = 0, cap = 0;
    assert_int_equal(sy_tok_encode(t, s, strlen(s), &ids, &n, &cap), 0);
    assert_int_equal(n, nwant);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(ids[i], want[i]);
    assert_int_equal(sy_tok_count(t, s, strlen(s)), nwant);
    free(ids);
}
#define IDS(t, s, ...)                                  \
    do {                                                \
        static const uint32_t w_[] = {__VA_ARGS__};     \
        expect_ids(t, s, w_, sizeof w_ / sizeof w_[0]); \
    } while (0)

static void test_known_ids(void **state)
{
    (void)state;
    IDS(cl, "hello world", 15339, 1917);
    IDS(o2, "hello world", 24912, 2375);
    IDS(cl, "I'm here, they'LL see 12345678!", 40, 2846, 1618, 11, 814, 6, 4178, 1518, 220, 4513, 10961, 2495, 0);
    IDS(o2, "I'm here, they'LL see 12345678!", 15390, 2105, 11, 1023, 6, 7454, 1921, 220, 7633, 19354, 4388, 0);
    IDS(cl, "  indented\n\n\tcode();", 220, 1280, 16243, 271, 44443, 2178);
    IDS(o2, "  indented\n\n\tcode();", 220, 1383, 23537, 279, 86873, 4177);
    IDS(cl, "中文テキスト 🙂", 16325, 17161, 57933, 62903, 71634, 28584);
    IDS(o2, "中文テキスト 🙂", 10667, 16056, 18368, 38236, 26192);
    IDS(cl, "<|endoftext|>", 27, 91, 8862, 728, 428, 91, 29); /* special tokens are text */
    IDS(o2, "<|endoftext|>", 27, 91, 419, 1440, 919, 91, 29);
    IDS(cl, "don't", 15357, 956);
    IDS(o2, "don't", 91418);
    IDS(cl, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 70540, 70540, 70540, 70540, 70540, 70540);
    IDS(o2, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 117525, 117525, 117525, 117525, 117525, 117525);
    assert_int_equal(sy_tok_count(cl, "", 0), 0);
}

static void roundtrip(const struct sy_tok *t, const char *s, size_t n)
{
    uint32_t *ids = NULL;
    size_t k = 0, cap = 0;
    assert_int_equal(sy_tok_encode(t, s, n, &ids, &k, &cap), 0);
    struct sy_buf b;
    sy_buf_init(&b, n + 16);
    assert_int_equal(sy_tok_decode(t, ids, k, &b), 0);
    assert_int_equal(b.len, n);
    assert_memory_equal(b.p ? b.p : "", s, n);
    sy_buf_free(&b);
    free(ids);
}

static void test_roundtrip_bytes(void **state)
{
    (void)state;
    static const char invalid[] = "\xff\xfe\x80 abc \xc3\x28 \xed\xa0\x80 \xf4\x90\x80\x80 \xe2\x82";
    roundtrip(cl, invalid, sizeof invalid - 1);
    roundtrip(o2, invalid, sizeof invalid - 1);
    char buf[4096];
    unsigned x = 12345;
    for (int round = 0; round < 50; round++) {
        size_t n = (size_t)(round * 81 % 4096);
        for (size_t i = 0; i < n; i++) {
            x = x * 1103515245u + 12345u;
            buf[i] = (char)(x >> 16);
        }
        roundtrip(cl, buf, n);
        roundtrip(o2, buf, n);
    }
    uint32_t bad = 300000;
    struct sy_buf b;
    sy_buf_init(&b, 64);
    assert_int_equal(sy_tok_decode(cl, &bad, 1, &b), SY_EINVAL);
    uint32_t eot = 100257;
    assert_int_equal(sy_tok_decode(cl, &eot, 1, &b), 0);
    assert_string_equal(b.p, "<|endoftext|>");
    sy_buf_free(&b);
}

static void test_long_word(void **state)
{
    (void)state;
    size_t n = 1 << 20;
    char *s = malloc(n);
    memset(s, 'a', n);
    assert_int_equal(sy_tok_count(cl, s, n), n / 8); /* "aaaaaaaa" is one token */
    roundtrip(o2, s, n);
    for (size_t i = 0; i < n; i++)
        s[i] = "ab"[i % 2];
    roundtrip(cl, s, n);
    free(s);
}

/* tiktoken's byte_pair_merge from single bytes, O(n^2), as the reference
 * for the encoder's shortcuts (whole-character start, heap, caches). */
static size_t ref_bpe(const struct sy_tok *t, const uint8_t *p, size_t m, uint32_t *out)
{
    size_t *st = malloc((m + 1) * sizeof *st), np = m;
    for (size_t i = 0; i <= m; i++)
        st[i] = i;
    for (;;) {
        uint32_t best = SY__TOK_NONE;
        size_t bi = 0;
        for (size_t i = 0; i + 1 < np; i++) {
            uint32_t r = sy__tok_rank(t, p + st[i], st[i + 2] - st[i]);
            if (r < best)
                best = r, bi = i;
        }
        if (best == SY__TOK_NONE)
            break;
        memmove(&st[bi + 1], &st[bi + 2], (np - bi - 1) * sizeof *st);
        np--;
    }
    for (size_t i = 0; i < np; i++)
        out[i] = sy__tok_rank(t, p + st[i], st[i + 1] - st[i]);
    free(st);
    return np;
}

/* Random text from CJK, kana, Hangul, Latin-1, Cyrillic, Arabic, Thai,
 * emoji, ASCII letters, spaces and punctuation (sometimes an invalid
 * byte), encoded by sy_tok_encode and by split + ref_bpe: equal ids. */
static void test_reference_bpe(void **state)
{
    (void)state;
    static const uint32_t ranges[][2] = {
        {0x4E00, 0x9FFF}, {0x4E00, 0x5FFF}, {0x3040, 0x30FF}, {0xAC00, 0xD7A3}, {0x00C0, 0x00FF},
        {0x0400, 0x04FF}, {0x0600, 0x06FF}, {0x0E00, 0x0E7F}, {0x3000, 0x303F}, {0x1F300, 0x1F64F},
        {'a', 'z'},       {' ', ' '},       {'0', '9'},       {0xFF01, 0xFF5E}, {0x0300, 0x036F},
    };
    const size_t nr = sizeof ranges / sizeof ranges[0];
    uint64_t rnd = 0x9E3779B97F4A7C15ull;
    uint8_t *s = malloc(4096);
    uint32_t *want = malloc(4096 * sizeof *want);
    for (int round = 0; round < 3000; round++) {
        size_t n = 0, len = 1 + (round % 7 == 0 ? 1500 : round % 60);
        while (n < len) {
            rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t x = (uint32_t)(rnd >> 33);
            const uint32_t *rg = ranges[(x >> 20) % (round % 3 ? 3 : nr)];
            uint32_t cp = rg[0] + x % (rg[1] - rg[0] + 1);
            if (x % 97 == 0) {
                s[n++] = (uint8_t)(0x80 + x % 64); /* stray continuation byte */
                continue;
            }
            if (cp < 0x80) {
                s[n++] = (uint8_t)cp;
            } else if (cp < 0x800) {
                s[n++] = (uint8_t)(0xC0 | cp >> 6), s[n++] = (uint8_t)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                s[n++] = (uint8_t)(0xE0 | cp >> 12), s[n++] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
                s[n++] = (uint8_t)(0x80 | (cp & 0x3F));
            } else {
                s[n++] = (uint8_t)(0xF0 | cp >> 18), s[n++] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
                s[n++] = (uint8_t)(0x80 | (cp >> 6 & 0x3F)), s[n++] = (uint8_t)(0x80 | (cp & 0x3F));
            }
        }
        for (int e = 0; e < 2; e++) {
            const struct sy_tok *t = e ? o2 : cl;
            size_t nw = 0;
            for (size_t i = 0; i < n;) {
                size_t j = sy__tok_split_next(t->enc, s, i, n);
                nw += ref_bpe(t, s + i, j - i, want + nw);
                i = j;
            }
            uint32_t *ids = NULL;
            size_t nid = 0, cap = 0;
            assert_int_equal(sy_tok_encode(t, (const char *)s, n, &ids, &nid, &cap), 0);
            assert_int_equal(nid, nw);
            assert_memory_equal(ids, want, nw * sizeof *want);
            assert_int_equal(sy_tok_count(t, (const char *)s, n), nw);
            free(ids);
        }
    }
    free(s);
    free(want);
}

/* Whether token r is whole, valid non-ASCII UTF-8 characters (a "pure"
 * token, the word-pair table's domain). */
static int pure_token(const struct sy_tok *t, uint32_t r)
{
    const uint8_t *b = t->bytes + t->off[r];
    size_t n = t->off[r + 1] - t->off[r], i = 0;
    if (!n)
        return 0;
    while (i < n) {
        uint8_t c = b[i];
        size_t l = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        if (!l || i + l > n)
            return 0;
        for (size_t k = 1; k < l; k++)
            if ((b[i + k] & 0xC0) != 0x80)
                return 0;
        uint32_t v = l == 2   ? (uint32_t)(c & 0x1F) << 6 | (b[i + 1] & 0x3F)
                     : l == 3 ? (uint32_t)(c & 0x0F) << 12 | (uint32_t)(b[i + 1] & 0x3F) << 6 | (b[i + 2] & 0x3F)
                              : (uint32_t)(c & 0x07) << 18 | (uint32_t)(b[i + 1] & 0x3F) << 12 |
                                    (uint32_t)(b[i + 2] & 0x3F) << 6 | (b[i + 3] & 0x3F);
        if ((l == 3 && (v < 0x800 || (v >= 0xD800 && v <= 0xDFFF))) || (l == 4 && (v < 0x10000 || v > 0x10FFFF)))
            return 0;
        i += l;
    }
    return 1;
}

/* Text made of real vocabulary words (pure tokens: CJK words, kana,
 * Hangul, Cyrillic...) with some punctuation, spaces and other tokens in
 * between, so that many adjacent parts join into real multi-character
 * tokens: encoder == reference BPE, and the word-pair table agrees with the
 * byte lookup on every pair of pure tokens drawn. */
static void test_reference_words(void **state)
{
    (void)state;
    uint64_t rnd = 0x2545F4914F6CDD1Dull;
    uint8_t *s = malloc(4096 + 256);
    uint32_t *want = malloc(4096 * sizeof *want);
    uint8_t cat[512];
    for (int e = 0; e < 2; e++) {
        const struct sy_tok *t = e ? o2 : cl;
        /* the pure tokens, for drawing */
        uint32_t *pure = malloc(t->nranks * sizeof *pure), npure = 0;
        for (uint32_t r = 0; r < t->nranks; r++)
            if (pure_token(t, r))
                pure[npure++] = r;
        assert_true(npure > 1000);
        size_t hits = 0;
        for (int i = 0; i < 200000; i++) {
            rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t l = pure[(rnd >> 20) % npure], r = pure[(rnd >> 42) % npure];
            if (i % 4 == 0) /* a real token split at a character boundary */
                r = pure[(rnd >> 42) % 64 + (uint32_t)(rnd >> 8) % (npure - 64)];
            size_t ln = t->off[l + 1] - t->off[l], rn = t->off[r + 1] - t->off[r];
            memcpy(cat, t->bytes + t->off[l], ln);
            memcpy(cat + ln, t->bytes + t->off[r], rn);
            uint32_t want1 = ln + rn <= t->maxlen ? sy__tok_rank(t, cat, ln + rn) : SY__TOK_NONE;
            assert_int_equal(sy__tok_pair(t, l, r), want1);
        }
        for (uint32_t i = 0; i < npure; i++) { /* every split of every pure token */
            uint32_t r = pure[i];
            const uint8_t *b = t->bytes + t->off[r];
            size_t n = t->off[r + 1] - t->off[r];
            for (size_t k = 1; k < n; k++) {
                if ((b[k] & 0xC0) == 0x80)
                    continue;
                uint32_t a = sy__tok_rank(t, b, k), c = sy__tok_rank(t, b + k, n - k);
                if (a != SY__TOK_NONE && c != SY__TOK_NONE) {
                    assert_int_equal(sy__tok_pair(t, a, c), r);
                    hits++;
                }
            }
        }
        assert_true(hits > 500);
        static const char *const glue[] = {"", "", "", "", "\xe3\x80\x82", "\xef\xbc\x8c", " ", "a", "1", "!"};
        for (int round = 0; round < 1500; round++) {
            size_t n = 0, len = 1 + (round % 5 == 0 ? 3000 : round % 200);
            while (n < len) {
                rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
                uint32_t x = (uint32_t)(rnd >> 33);
                uint32_t r = x % 5 ? pure[x % npure] : x % t->nranks;
                if (x % 3 == 0) /* favour frequent (low-rank) words */
                    r = pure[x % (npure < 3000 ? npure : 3000)];
                size_t rl = t->off[r + 1] - t->off[r];
                if (rl > 200)
                    continue;
                memcpy(s + n, t->bytes + t->off[r], rl);
                n += rl;
                const char *g = glue[(x >> 24) % 10];
                memcpy(s + n, g, strlen(g));
                n += strlen(g);
            }
            size_t nw = 0;
            for (size_t i = 0; i < n;) {
                size_t j = sy__tok_split_next(t->enc, s, i, n);
                nw += ref_bpe(t, s + i, j - i, want + nw);
                i = j;
            }
            uint32_t *ids = NULL;
            size_t nid = 0, cap = 0;
            assert_int_equal(sy_tok_encode(t, (const char *)s, n, &ids, &nid, &cap), 0);
            assert_int_equal(nid, nw);
            assert_memory_equal(ids, want, nw * sizeof *want);
            free(ids);
        }
        free(pure);
    }
    free(s);
    free(want);
}

static void test_model_map(void **state)
{
    (void)state;
#define M(s) sy_tok_encoding_for_model(s, strlen(s))
    assert_int_equal(M("gpt-4o"), SY_TOK_O200K);
    assert_int_equal(M("openai/gpt-4o-mini"), SY_TOK_O200K);
    assert_int_equal(M("azure/my-gpt-4o-deploy"), SY_TOK_O200K);
    assert_int_equal(M("gpt-4.1-nano"), SY_TOK_O200K);
    assert_int_equal(M("gpt-5"), SY_TOK_O200K);
    assert_int_equal(M("o1"), SY_TOK_O200K);
    assert_int_equal(M("o3-mini"), SY_TOK_O200K);
    assert_int_equal(M("o4-mini"), SY_TOK_O200K);
    assert_int_equal(M("chatgpt-4o-latest"), SY_TOK_O200K);
    assert_int_equal(M("gpt-4"), SY_TOK_CL100K);
    assert_int_equal(M("gpt-3.5-turbo"), SY_TOK_CL100K);
    assert_int_equal(M("text-embedding-3-small"), SY_TOK_CL100K);
    assert_int_equal(M("anthropic/claude-3-5-sonnet"), SY_TOK_CL100K);
    assert_int_equal(M("o100-foo"), SY_TOK_CL100K);
    assert_int_equal(sy_tok_encoding_by_name("o200k_base", 10), SY_TOK_O200K);
    assert_int_equal(sy_tok_encoding_by_name("p50k_base", 9), -1);
#undef M
}

static long req(const struct sy_tok *t, const char *json)
{
    return sy_tok_count_request(t, json, strlen(json));
}

#define TOOLS                                                                                                   \
    "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"description\":\"Get weather\"," \
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"location\":{\"type\":\"string\",\"description\":"    \
    "\"City\"},\"unit\":{\"type\":\"string\",\"enum\":[\"c\",\"f\"]}},\"required\":[\"location\"]}}}]"

static void test_chat_counts(void **state)
{
    (void)state;
    /* 3 per message + role + content + 3 priming */
    assert_int_equal(req(cl, "{\"messages\":[{\"role\":\"user\",\"content\":\"hello world\"}]}"), 3 + 1 + 2 + 3);
    /* name: its tokens + 1 */
    assert_int_equal(req(cl, "{\"messages\":[{\"role\":\"user\",\"name\":\"Alice\",\"content\":\"hello world\"}]}"),
                     3 + 1 + 1 + 1 + 2 + 3);
    /* tools rendering */
    struct json_object *req_obj = json_tokener_parse("{" TOOLS "}");
    struct sy_buf b;
    sy_buf_init(&b, 4096);
    sy__tok_tools_render(json_object_object_get(req_obj, "tools"), &b);
    json_object_put(req_obj);
    assert_string_equal(b.p, "namespace functions {\n\n// Get weather\ntype get_weather = (_: {\n// City\n"
                             "location: string,\nunit?: \"c\" | \"f\",\n}) => any;\n\n} // namespace functions");
    sy_buf_free(&b);
    /* tools: + render (38 cl100k / 36 o200k) + 9, - 4 with a system message */
    assert_int_equal(req(cl, "{\"messages\":[{\"role\":\"user\",\"content\":\"hello world\"}]," TOOLS "}"),
                     3 + 1 + 2 + 3 + 38 + 9);
    assert_int_equal(req(o2, "{\"messages\":[{\"role\":\"system\",\"content\":\"hello world\"}]," TOOLS "}"),
                     3 + 1 + 2 + 3 + 36 + 9 - 4);
    /* tool_choice */
    assert_int_equal(
        req(cl, "{\"messages\":[{\"role\":\"user\",\"content\":\"hello world\"}],\"tool_choice\":\"none\"}"), 9 + 1);
    assert_int_equal(req(cl, "{\"messages\":[{\"role\":\"user\",\"content\":\"hello world\"}],\"tool_choice\":"
                             "{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}}}"),
                     9 + 7 + 2);
    assert_int_equal(
        req(cl, "{\"messages\":[{\"role\":\"user\",\"content\":\"hello world\"}],\"tool_choice\":\"auto\"}"), 9);
    /* tool_calls count their arguments */
    assert_int_equal(
        req(cl, "{\"messages\":[{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\","
                "\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"hello world\"}}]}]}"),
        3 + 1 + 2 + 3);
    /* images: text part + low (85) / high from a data: URL's size */
    assert_int_equal(req(cl,
                         "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hello world\"},"
                         "{\"type\":\"image_url\",\"image_url\":{\"url\":\"https://x/y.png\",\"detail\":\"low\"}}]}]}"),
                     3 + 1 + 2 + 85 + 3);
    /* PNG 1024x2048 -> 768x1536 -> 6 tiles -> 85 + 1020 */
    assert_int_equal(
        req(cl, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":{\"url\":"
                "\"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAABAAAAAgACAYAAAA=\",\"detail\":\"high\"}}]}]}"),
        3 + 1 + 1105 + 3);
    /* GIF 100x50 -> 1 tile; JPEG 4000x3000 -> 1024x768 -> 4 tiles; remote high -> 85 */
    assert_int_equal(
        req(cl,
            "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":{\"url\":"
            "\"data:image/gif;base64,R0lGODlhZAAyAAAAAA==\",\"detail\":\"high\"}},"
            "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/jpeg;base64,"
            "/9j/4AAQSkZJRgABAQEBAQEBAQH/wAARCAu4D6ADAAAAAAAAAAAA\",\"detail\":\"high\"}},"
            "{\"type\":\"image_url\",\"image_url\":{\"url\":\"https://example.com/a.png\",\"detail\":\"high\"}}]}]}"),
        3 + 1 + 255 + 765 + 85 + 3);
    /* Anthropic blocks: tool_use counts name + str(input); tool_result its content */
    assert_int_equal(
        req(cl, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t1\","
                "\"content\":\"hello world\"}]}]}"),
        3 + 1 + 2 + 3);
    assert_int_equal(req(cl, "{\"messages\":[{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\","
                             "\"name\":\"get_weather\",\"input\":{\"a\":1}}]}]}"),
                     3 + 1 + 2 + (long)sy_tok_count(cl, "{'a': 1}", 8) + 3);
    /* prompt / input */
    assert_int_equal(req(cl, "{\"prompt\":\"hello world\"}"), 2);
    assert_int_equal(req(cl, "{\"prompt\":[\"hello\",\" world\"]}"), 2);
    assert_int_equal(req(cl, "{\"input\":[1,2,3]}"), 3);
    /* errors */
    assert_int_equal(req(cl, "{not json"), SY_EJSON);
    assert_int_equal(req(cl, "{\"model\":\"x\"}"), SY_EINVAL);
    assert_int_equal(req(cl, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"bogus\"}]}]}"), SY_EINVAL);
}

/* LiteLLM's Python semantics at the edges (token_counter.py): str(None) for
 * present nulls, KeyError/TypeError cases as errors, `in` on a string. */
static void test_litellm_edges(void **state)
{
    (void)state;
    const char *u = "{\"messages\":[{\"role\":\"user\",\"content\":\"hello world\"}]";
    char b[1024];
#define R(tail) (snprintf(b, sizeof b, "%s%s}", u, tail), req(cl, b))
    /* tool_choice dict without function.name: LiteLLM's KeyError */
    assert_int_equal(R(",\"tool_choice\":{\"type\":\"function\"}"), SY_EINVAL);
    assert_int_equal(R(",\"tool_choice\":{\"type\":\"function\",\"function\":{}}"), SY_EINVAL);
    /* name null -> str(None) = "None" (1 token) */
    assert_int_equal(R(",\"tool_choice\":{\"function\":{\"name\":null}}"), 9 + 7 + 1);
    /* tools that are not a list */
    assert_int_equal(R(",\"tools\":\"x\""), SY_EINVAL);
    assert_int_equal(R(",\"tools\":[]"), 9);
#undef R
    /* arguments null -> "None"; absent -> "" */
    assert_int_equal(
        req(cl, "{\"messages\":[{\"role\":\"assistant\",\"tool_calls\":[{\"function\":{\"arguments\":null}}]}]}"),
        3 + 1 + 1 + 3);
    assert_int_equal(req(cl, "{\"messages\":[{\"role\":\"assistant\",\"tool_calls\":[{\"function\":{}}]}]}"),
                     3 + 1 + 3);
    assert_int_equal(req(cl, "{\"messages\":[{\"role\":\"assistant\",\"tool_calls\":[{\"function\":\"f\"}]}]}"),
                     SY_EINVAL);
    /* text part with text null -> "None" */
    assert_int_equal(req(cl, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":null}]}]}"),
                     3 + 1 + 1 + 3);
    /* blank image_url string, non-string detail, image without source.type */
    assert_int_equal(
        req(cl, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":\" \"}]}]}"),
        SY_EINVAL);
    assert_int_equal(req(cl, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":"
                             "{\"url\":\"https://x\",\"detail\":null}}]}]}"),
                     SY_EINVAL);
    assert_int_equal(req(cl, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image\"}]}]}"), SY_EINVAL);
    /* required as a string: Python's substring test ("location" in "location,unit") */
    struct json_object *o = json_tokener_parse(
        "[{\"function\":{\"name\":\"f\",\"parameters\":{\"properties\":{\"unit\":{\"type\":\"string\"}},"
        "\"required\":\"location,unit\"}}}]");
    struct sy_buf bb;
    sy_buf_init(&bb, 4096);
    sy__tok_tools_render(o, &bb);
    json_object_put(o);
    assert_string_equal(
        bb.p, "namespace functions {\n\ntype f = (_: {\nunit: string,\n}) => any;\n\n} // namespace functions");
    sy_buf_free(&bb);
}

static void test_endpoint(void **state)
{
    (void)state;
    struct sy_buf out;
    sy_buf_init(&out, 1 << 20);
    const char *body = "{\"model\":\"my-group\",\"messages\":[{\"role\":\"user\",\"content\":\"hello world\"}]}";
    assert_int_equal(sy_tok_counter_response(body, strlen(body), "openai/gpt-4o", NULL, &out), 200);
    assert_string_equal(out.p, "{\"total_tokens\":9,\"request_model\":\"my-group\",\"model_used\":\"gpt-4o\","
                               "\"tokenizer_type\":\"openai_tokenizer\"}");
    body = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"hello "
           "world\"}],\"return_token_ids\":true}";
    assert_int_equal(sy_tok_counter_response(body, strlen(body), NULL, NULL, &out), 200);
    assert_string_equal(out.p, "{\"total_tokens\":9,\"request_model\":\"gpt-4o\",\"model_used\":\"gpt-4o\","
                               "\"tokenizer_type\":\"openai_tokenizer\",\"token_ids\":[1428,24912,2375]}");
    body = "{\"model\":\"gpt-4o\",\"prompt\":\"don't\"}";
    assert_int_equal(sy_tok_counter_response(body, strlen(body), NULL, "cl100k_base", &out), 200);
    assert_string_equal(out.p, "{\"total_tokens\":2,\"request_model\":\"gpt-4o\",\"model_used\":\"gpt-4o\","
                               "\"tokenizer_type\":\"openai_tokenizer\"}");
    body = "{\"model\":\"gpt-4o\"}";
    assert_int_equal(sy_tok_counter_response(body, strlen(body), NULL, NULL, &out), 400);
    assert_string_equal(out.p, "{\"error\":{\"message\":\"prompt or messages must be provided\","
                               "\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"400\"}}");
    assert_int_equal(sy_tok_counter_response("[", 1, NULL, NULL, &out), 400);
    sy_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_ids),     cmocka_unit_test(test_roundtrip_bytes), cmocka_unit_test(test_long_word),
        cmocka_unit_test(test_reference_bpe), cmocka_unit_test(test_reference_words), cmocka_unit_test(test_model_map),
        cmocka_unit_test(test_chat_counts),   cmocka_unit_test(test_litellm_edges),   cmocka_unit_test(test_endpoint),
    };
    return cmocka_run_group_tests_name("tokenizer", tests, setup, NULL);
}
