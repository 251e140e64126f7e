/* test_count.c - the providers' token counters (providers/count.h): which
 * counter serves a deployment, each counter's request (URL, headers, body),
 * the counts read from their answers (and what is not one), Bedrock's model
 * ids, and the estimate's bias. The Bedrock signature is checked against the
 * signer's own canonical request, recomputed from what was sent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/buf.h"
#include "core/errors.h"
#include "providers/count.h"
#include "providers/sigv4.h"

struct fx {
    struct sy_arena a;
    struct sy_jdoc d;
    struct sy_xout o;
    struct sy_pconf pc;
    struct sy_xctx x;
};

static void fx_init(struct fx *f, const char *json, const char *model)
{
    memset(f, 0, sizeof *f);
    sy_arena_init(&f->a);
    assert_int_equal(sy_jdom_parse(&f->d, json, strlen(json), &f->a, 0), 0);
    sy_buf_init(&f->o.url, 1 << 16);
    sy_buf_init(&f->o.headers, 1 << 16);
    sy_buf_init(&f->o.body, 1 << 20);
    f->x.pc = &f->pc;
    f->x.model = model;
    f->x.arena = &f->a;
    f->x.now = 1700000000;
}

static void fx_free(struct fx *f)
{
    sy_buf_free(&f->o.url);
    sy_buf_free(&f->o.headers);
    sy_buf_free(&f->o.body);
    sy_arena_free(&f->a);
}

static int has_line(const struct sy_buf *h, const char *line)
{
    return h->p && strstr(h->p, line) != NULL;
}

static void kinds(void **state)
{
    (void)state;
    assert_int_equal(sy_count_kind_of("anthropic", "claude-sonnet-4-5"), SY_COUNT_ANTHROPIC);
    assert_int_equal(sy_count_kind_of("bedrock", "us.anthropic.claude-3-5-sonnet-20240620-v1:0"), SY_COUNT_BEDROCK);
    assert_int_equal(sy_count_kind_of("bedrock", "amazon.nova-pro-v1:0"), SY_COUNT_ESTIMATE);
    assert_int_equal(sy_count_kind_of("vertex_ai", "claude-sonnet-4-5@20250929"), SY_COUNT_VERTEX_CLAUDE);
    assert_int_equal(sy_count_kind_of("vertex_ai", "gemini-2.5-pro"), SY_COUNT_VERTEX_GEMINI);
    assert_int_equal(sy_count_kind_of("vertex_ai", "llama-3.1-405b"), SY_COUNT_ESTIMATE);
    assert_int_equal(sy_count_kind_of("gemini", "gemini-2.5-flash"), SY_COUNT_GEMINI);
    assert_int_equal(sy_count_kind_of("openai", "my-finetune"), SY_COUNT_EXACT);
    assert_int_equal(sy_count_kind_of("azure", "deployment-1"), SY_COUNT_EXACT);
    assert_int_equal(sy_count_kind_of("openrouter", "openai/gpt-4o"), SY_COUNT_EXACT);
    assert_int_equal(sy_count_kind_of("groq", "o3-mini"), SY_COUNT_EXACT);
    assert_int_equal(sy_count_kind_of("groq", "o3x"), SY_COUNT_ESTIMATE);
    assert_int_equal(sy_count_kind_of("cohere", "command-r-plus"), SY_COUNT_ESTIMATE);
    assert_int_equal(sy_count_kind_of(NULL, NULL), SY_COUNT_ESTIMATE);
    assert_string_equal(sy_count_label(SY_COUNT_BEDROCK), "provider");
    assert_string_equal(sy_count_label(SY_COUNT_EXACT), "exact");
    assert_string_equal(sy_count_label(SY_COUNT_ESTIMATE), "estimate");
}

static void anthropic_request(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f,
            "{\"model\":\"claude\",\"max_tokens\":10,\"stream\":true,\"system\":\"s\","
            "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":[],\"thinking\":{\"type\":\"enabled\"}}",
            "claude-sonnet-4-5-20250929");
    f.pc.key = "sk-ant";
    f.pc.base = "https://api.example.com/v1";
    static const char fwd[] = "anthropic-version: 2023-01-01\r\nanthropic-beta: a,b\r\n";
    f.x.fwd_headers = fwd;
    f.x.fwd_headers_len = sizeof fwd - 1;
    assert_int_equal(sy_count_anthropic(&f.x, &f.d, &f.o), 0);
    assert_string_equal(f.o.url.p, "https://api.example.com/v1/messages/count_tokens");
    assert_true(has_line(&f.o.headers, "x-api-key: sk-ant\r\n"));
    assert_true(has_line(&f.o.headers, "anthropic-version: 2023-01-01\r\n"));
    assert_true(has_line(&f.o.headers, "anthropic-beta: a,b\r\n"));
    assert_string_equal(f.o.body.p,
                        "{\"model\":\"claude-sonnet-4-5-20250929\",\"system\":\"s\",\"messages\":[{\"role\":"
                        "\"user\",\"content\":\"hi\"}],\"tools\":[],\"thinking\":{\"type\":\"enabled\"}}");
    fx_free(&f);

    /* no client headers: the deployment's version, no beta; the default base */
    fx_init(&f, "{\"messages\":[]}", "m");
    assert_int_equal(sy_count_anthropic(&f.x, &f.d, &f.o), 0);
    assert_string_equal(f.o.url.p, "https://api.anthropic.com/v1/messages/count_tokens");
    assert_true(has_line(&f.o.headers, "anthropic-version: 2023-06-01\r\n"));
    assert_false(has_line(&f.o.headers, "anthropic-beta"));
    assert_false(has_line(&f.o.headers, "x-api-key"));
    fx_free(&f);
}

static void vertex_claude_request(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, "{\"model\":\"x\",\"messages\":[],\"temperature\":1}", "claude-sonnet-4-5@20250929");
    f.pc.base = "https://us-east5-aiplatform.googleapis.com";
    f.pc.project = "p1";
    f.pc.region = "us-east5";
    assert_int_equal(sy_count_vertex_claude(&f.x, &f.d, &f.o), SY_EAUTH); /* no token */
    f.x.access_token = "ya29.t";
    sy_buf_reset(&f.o.url);
    sy_buf_reset(&f.o.headers);
    sy_buf_reset(&f.o.body);
    assert_int_equal(sy_count_vertex_claude(&f.x, &f.d, &f.o), 0);
    assert_string_equal(f.o.url.p, "https://us-east5-aiplatform.googleapis.com/v1/projects/p1/locations/us-east5/"
                                   "publishers/anthropic/models/count-tokens:rawPredict");
    assert_true(has_line(&f.o.headers, "Authorization: Bearer ya29.t\r\n"));
    assert_string_equal(f.o.body.p, "{\"model\":\"claude-sonnet-4-5@20250929\",\"messages\":[]}");
    fx_free(&f);
    /* an api_base naming a path: no count-tokens URL can be made from it */
    fx_init(&f, "{\"messages\":[]}", "claude");
    f.pc.base = "https://proxy.example.com/custom/path";
    f.x.access_token = "t";
    assert_int_equal(sy_count_vertex_claude(&f.x, &f.d, &f.o), SY_EINVAL);
    fx_free(&f);
}

static void bedrock_model_ids(void **state)
{
    (void)state;
    assert_string_equal(sy_count_bedrock_model("us.anthropic.claude-3-5-sonnet-20240620-v1:0"),
                        "anthropic.claude-3-5-sonnet-20240620-v1:0");
    assert_string_equal(sy_count_bedrock_model("converse/eu.anthropic.claude-x"), "anthropic.claude-x");
    assert_string_equal(sy_count_bedrock_model("global.anthropic.claude-x"), "anthropic.claude-x");
    assert_string_equal(sy_count_bedrock_model("anthropic.claude-x"), "anthropic.claude-x");
    assert_string_equal(sy_count_bedrock_model(NULL), "");
}

static void bedrock_request(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, "{\"model\":\"c\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"stream\":true}",
            "us.anthropic.claude-3-5-sonnet-20240620-v1:0");
    f.pc.base = "https://bedrock-runtime.us-east-1.amazonaws.com";
    f.pc.region = "us-east-1";
    assert_int_equal(sy_count_bedrock(&f.x, &f.d, &f.o), SY_EAUTH); /* no credentials */
    f.pc.access_key = "AKIDEXAMPLE";
    f.pc.secret_key = "secret";
    sy_buf_reset(&f.o.url);
    sy_buf_reset(&f.o.headers);
    sy_buf_reset(&f.o.body);
    assert_int_equal(sy_count_bedrock(&f.x, &f.d, &f.o), 0);
    assert_string_equal(f.o.url.p, "https://bedrock-runtime.us-east-1.amazonaws.com/model/"
                                   "anthropic.claude-3-5-sonnet-20240620-v1%3A0/count-tokens");
    /* the body: {"input":{"invokeModel":{"body":B64}}}, B64 the InvokeModel body */
    static const char pre[] = "{\"input\":{\"invokeModel\":{\"body\":\"";
    assert_memory_equal(f.o.body.p, pre, sizeof pre - 1);
    const char *b64 = f.o.body.p + sizeof pre - 1;
    size_t bl = (size_t)(strchr(b64, '"') - b64);
    unsigned char raw[1024];
    int rl = EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)bl);
    assert_true(rl > 0);
    while (bl && b64[bl - 1] == '=')
        bl--, rl--;
    raw[rl] = 0;
    assert_string_equal((char *)raw, "{\"anthropic_version\":\"bedrock-2023-05-31\",\"max_tokens\":4096,\"messages\":"
                                     "[{\"role\":\"user\",\"content\":\"hi\"}]}");
    /* the signature is the signer's over what is sent */
    struct sy_sigv4_header h[] = {{"content-type", "application/json"}};
    struct sy_sigv4 s = {.method = "POST",
                         .host = "bedrock-runtime.us-east-1.amazonaws.com",
                         .path = "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/count-tokens",
                         .headers = h,
                         .nheaders = 1,
                         .payload = f.o.body.p,
                         .payload_len = f.o.body.len,
                         .access_key = "AKIDEXAMPLE",
                         .secret_key = "secret",
                         .region = "us-east-1",
                         .service = "bedrock",
                         .amz_date = "20231114T221320Z"};
    struct sy_buf want;
    sy_buf_init(&want, 4096);
    assert_int_equal(sy_sigv4_sign(&s, &want), 0);
    assert_true(has_line(&f.o.headers, want.p));
    sy_buf_free(&want);
    fx_free(&f);

    /* a bearer key instead of SigV4; max_tokens and anthropic_version of the request kept */
    fx_init(&f, "{\"anthropic_version\":\"v\",\"max_tokens\":5,\"messages\":[]}", "anthropic.claude");
    f.pc.base = "http://127.0.0.1:1/prefix";
    f.pc.key = "bk";
    assert_int_equal(sy_count_bedrock(&f.x, &f.d, &f.o), 0);
    assert_string_equal(f.o.url.p, "http://127.0.0.1:1/prefix/model/anthropic.claude/count-tokens");
    assert_true(has_line(&f.o.headers, "Authorization: Bearer bk\r\n"));
    fx_free(&f);
}

static void gemini_request(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, "{}", "gemini-2.5-pro");
    sy_buf_puts(&f.o.url, "https://g.example.com/v1beta/models/gemini-2.5-pro:generateContent");
    sy_buf_puts(&f.o.body, "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"hi\"}]}],\"systemInstruction\":"
                           "{\"parts\":[{\"text\":\"s\"}]},\"generationConfig\":{\"maxOutputTokens\":5},"
                           "\"safetySettings\":[]}");
    assert_int_equal(sy_count_gemini(&f.x, SY_COUNT_GEMINI, &f.o), 0);
    assert_string_equal(f.o.url.p, "https://g.example.com/v1beta/models/gemini-2.5-pro:countTokens");
    assert_string_equal(
        f.o.body.p, "{\"generateContentRequest\":{\"model\":\"models/gemini-2.5-pro\",\"contents\":[{\"role\":"
                    "\"user\",\"parts\":[{\"text\":\"hi\"}]}],\"systemInstruction\":{\"parts\":[{\"text\":\"s\"}]}}}");
    fx_free(&f);

    fx_init(&f, "{}", "gemini-2.5-pro");
    sy_buf_puts(&f.o.url,
                "https://v/v1/projects/p/locations/l/publishers/google/models/gemini-2.5-pro:generateContent");
    sy_buf_puts(&f.o.body, "{\"contents\":[],\"tools\":[{\"functionDeclarations\":[]}],\"labels\":{}}");
    assert_int_equal(sy_count_gemini(&f.x, SY_COUNT_VERTEX_GEMINI, &f.o), 0);
    assert_string_equal(f.o.url.p, "https://v/v1/projects/p/locations/l/publishers/google/models/gemini-2.5-pro:"
                                   "countTokens");
    assert_string_equal(f.o.body.p, "{\"contents\":[],\"tools\":[{\"functionDeclarations\":[]}]}");
    fx_free(&f);

    /* a streamed call's URL is not one it rewrites */
    fx_init(&f, "{}", "g");
    sy_buf_puts(&f.o.url, "https://g/v1beta/models/g:streamGenerateContent?alt=sse");
    sy_buf_puts(&f.o.body, "{}");
    assert_int_equal(sy_count_gemini(&f.x, SY_COUNT_GEMINI, &f.o), SY_EINVAL);
    fx_free(&f);
}

static void answers(void **state)
{
    (void)state;
#define P(k, s) sy_count_parse(k, s, strlen(s))
    assert_int_equal(P(SY_COUNT_ANTHROPIC, "{\"input_tokens\":1234}"), 1234);
    assert_int_equal(P(SY_COUNT_VERTEX_CLAUDE, "{\"input_tokens\":0}"), 0);
    assert_int_equal(P(SY_COUNT_BEDROCK, "{\"inputTokens\":77}"), 77);
    assert_int_equal(P(SY_COUNT_GEMINI, "{\"totalTokens\":31,\"promptTokensDetails\":[]}"), 31);
    assert_int_equal(P(SY_COUNT_VERTEX_GEMINI, "{\"totalTokens\":5.0,\"totalBillableCharacters\":9}"), 5);
    /* not a count */
    assert_int_equal(P(SY_COUNT_ANTHROPIC, "{\"inputTokens\":3}"), -1);
    assert_int_equal(P(SY_COUNT_ANTHROPIC, "{\"input_tokens\":-3}"), -1);
    assert_int_equal(P(SY_COUNT_ANTHROPIC, "{\"input_tokens\":1.5}"), -1);
    assert_int_equal(P(SY_COUNT_ANTHROPIC, "{\"input_tokens\":\"3\"}"), -1);
    assert_int_equal(P(SY_COUNT_ANTHROPIC, "{\"input_tokens\":99999999999999999999999}"), -1);
    assert_int_equal(P(SY_COUNT_ANTHROPIC, "[3]"), -1);
    assert_int_equal(P(SY_COUNT_ANTHROPIC, "{\"input_tokens\":3"), -1);
    assert_int_equal(P(SY_COUNT_ANTHROPIC, ""), -1);
    assert_int_equal(P(SY_COUNT_EXACT, "{\"input_tokens\":3}"), -1);
    assert_int_equal(sy_count_parse(SY_COUNT_ANTHROPIC, NULL, 0), -1);
#undef P
}

static void estimate(void **state)
{
    (void)state;
    assert_int_equal(sy_count_estimate(100, 2, 0), 150 + 2 * SY_COUNT_PER_MSG);
    assert_int_equal(sy_count_estimate(101, 0, 1), (int64_t)ceil(101 * SY_COUNT_FACTOR) + SY_COUNT_TOOLS);
    assert_int_equal(sy_count_estimate(0, 0, 0), 0);
    assert_int_equal(sy_count_estimate(-5, 1, 0), SY_COUNT_PER_MSG);
    for (int64_t t = 1; t < 100000; t = t * 3 + 1) /* never below the count, and at least 15% above */
        assert_true(sy_count_estimate(t, 0, 0) >= t + (t * 15 + 99) / 100);
    assert_true(sy_count_estimate(INT64_MAX / 4, 1, 1) > 0);
    assert_true(SY_COUNT_FACTOR >= 1.15);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kinds),
        cmocka_unit_test(anthropic_request),
        cmocka_unit_test(vertex_claude_request),
        cmocka_unit_test(bedrock_model_ids),
        cmocka_unit_test(bedrock_request),
        cmocka_unit_test(gemini_request),
        cmocka_unit_test(answers),
        cmocka_unit_test(estimate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
