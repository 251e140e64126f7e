/* test_thinking.c - signed thinking blocks through the Responses bridge
 * (responses/thinking.c): a chat answer's thinking_blocks become the
 * reasoning item's encrypted_content (whole answers and streams), and that
 * item sent back becomes the assistant message's thinking_blocks, first,
 * with the same signatures. Foreign, null, altered and malformed
 * encrypted_content is dropped, never an error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "responses/resp_impl.h"
#include "responses/responses.h"

#define SEED "0123456789abcdef0123456789abcdef"

/* The encrypted_content string of the first reasoning item in json (the
 * value, unquoted, malloc'd), NULL when there is none. */
static char *enc_of(const char *json)
{
    const char *k = strstr(json, "\"encrypted_content\":\"");
    if (!k)
        return NULL;
    k += strlen("\"encrypted_content\":\"");
    const char *e = strchr(k, '"');
    assert_non_null(e);
    return strndup(k, (size_t)(e - k));
}

static const char *answer_chat =
    "{\"id\":\"c1\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"finish_reason\":\"tool_calls\","
    "\"message\":{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"Let me write \\\"it\\\".\","
    "\"thinking_blocks\":[{\"type\":\"thinking\",\"thinking\":\"Let me write \\\"it\\\".\",\"signature\":"
    "\"SIG-abc/+=\"},{\"type\":\"redacted_thinking\",\"data\":\"REDACTED-1\"},{\"type\":\"thinking\","
    "\"thinking\":\"unsigned\"}],"
    "\"tool_calls\":[{\"id\":\"toolu_1\",\"type\":\"function\",\"function\":{\"name\":\"write\",\"arguments\":"
    "\"{}\"}}]}}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4,\"total_tokens\":7}}";

/* The whole answer -> response JSON (malloc'd). */
static char *answer(const char *chat)
{
    struct sy_arena a;
    struct sy_buf out;
    sy_arena_init(&a);
    sy_buf_init(&out, 1 << 20);
    struct sy_resp_meta m = {.id = "resp_t", .model = "m", .created_at = 1, .id_seed = SEED};
    assert_int_equal(sy_resp_from_openai(chat, strlen(chat), &m, &a, &out), 0);
    char *r = strndup(out.p, out.len);
    sy_buf_free(&out);
    sy_arena_free(&a);
    return r;
}

/* A Responses request body -> the chat request (malloc'd); prior may be NULL. */
static char *to_chat(const char *req, const char *prior)
{
    struct sy_arena a;
    struct sy_buf out;
    struct sy_jdoc d;
    struct sy_xerr e = {0};
    sy_arena_init(&a);
    sy_buf_init(&out, 1 << 20);
    assert_int_equal(sy_jdom_parse(&d, req, strlen(req), &a, 0), 0);
    assert_int_equal(sy_resp_to_chat(&d, prior, prior ? strlen(prior) : 0, SEED, NULL, &a, &out, NULL, &e), 0);
    char *r = strndup(out.p, out.len);
    sy_buf_free(&out);
    sy_arena_free(&a);
    return r;
}

/* The second turn Codex sends: the reasoning item (encrypted_content enc,
 * a JSON value), the call, its output. */
static char *turn2(const char *enc)
{
    static char b[8192];
    snprintf(b, sizeof b,
             "{\"model\":\"m\",\"store\":false,\"input\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"go\"},"
             "{\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"x\"}],"
             "\"encrypted_content\":%s},"
             "{\"type\":\"function_call\",\"call_id\":\"toolu_1\",\"name\":\"write\",\"arguments\":\"{}\"},"
             "{\"type\":\"function_call_output\",\"call_id\":\"toolu_1\",\"output\":\"ok\"}]}",
             enc);
    return to_chat(b, NULL);
}

static const char *want_blocks =
    "\"thinking_blocks\":[{\"type\":\"thinking\",\"thinking\":\"Let me write \\\"it\\\".\",\"signature\":"
    "\"SIG-abc/+=\"},{\"type\":\"redacted_thinking\",\"data\":\"REDACTED-1\"}]";

static void json_answer_round_trip(void **state)
{
    (void)state;
    char *r = answer(answer_chat);
    /* the reasoning item keeps the summary and carries the blocks */
    assert_non_null(strstr(r, "\"type\":\"reasoning\",\"id\":\"rs_" SEED
                              "\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"Let me write \\\"it\\\".\"}],"
                              "\"encrypted_content\":\"" SY__RESP_THINK_PREFIX));
    char *enc = enc_of(r);
    assert_non_null(enc);
    char q[4096];
    snprintf(q, sizeof q, "\"%s\"", enc);
    char *chat = turn2(q);
    /* the assistant message: thinking_blocks (the unsigned block dropped), then the call */
    const char *tb = strstr(chat, want_blocks);
    assert_non_null(tb);
    const char *tc = strstr(chat, "\"tool_calls\":[{\"id\":\"toolu_1\"");
    assert_non_null(tc);
    assert_true(tb < tc);
    assert_non_null(strstr(chat, "\"reasoning_content\":\"Let me write \\\"it\\\".\""));
    assert_non_null(strstr(chat, "{\"role\":\"assistant\",\"thinking_blocks\""));
    free(chat);
    free(enc);
    free(r);
}

static void answer_without_blocks(void **state)
{
    (void)state;
    /* reasoning text only (a deployment without signatures): no encrypted_content */
    char *r = answer("{\"choices\":[{\"finish_reason\":\"stop\",\"message\":{\"role\":\"assistant\",\"content\":\"hi\","
                     "\"reasoning_content\":\"think\"}}]}");
    assert_non_null(strstr(r, "\"summary\":[{\"type\":\"summary_text\",\"text\":\"think\"}]}"));
    assert_null(strstr(r, "encrypted_content"));
    free(r);
    /* redacted only: a reasoning item with an empty summary and the blocks */
    r = answer("{\"choices\":[{\"finish_reason\":\"stop\",\"message\":{\"role\":\"assistant\",\"content\":\"hi\","
               "\"thinking_blocks\":[{\"type\":\"redacted_thinking\",\"data\":\"D\"}]}}]}");
    assert_non_null(strstr(r, "\"summary\":[],\"encrypted_content\":\"" SY__RESP_THINK_PREFIX));
    char *enc = enc_of(r);
    char q[1024];
    snprintf(q, sizeof q, "\"%s\"", enc);
    char *chat = turn2(q);
    assert_non_null(strstr(chat, "\"thinking_blocks\":[{\"type\":\"redacted_thinking\",\"data\":\"D\"}]"));
    free(chat);
    free(enc);
    free(r);
}

/* encrypted_content that is not ours, or ours altered: the item is dropped,
 * the request still converts, no thinking_blocks. */
static void foreign_and_altered(void **state)
{
    (void)state;
    char *r = answer(answer_chat);
    char *enc = enc_of(r);
    size_t n = strlen(enc);
    char bad[4096];
    const char *cases[8];
    int k = 0;
    cases[k++] = "null";
    cases[k++] = "\"gAAAAABoFernetTokenFromOpenAI==\"";
    cases[k++] = "\"" SY__RESP_THINK_PREFIX "\"";
    cases[k++] = "\"" SY__RESP_THINK_PREFIX "!!!not base64\"";
    cases[k++] = "\"" SY__RESP_THINK_PREFIX "W10=\"";                         /* [] */
    cases[k++] = "\"" SY__RESP_THINK_PREFIX "eyJ0eXBlIjoidGhpbmtpbmcifQ==\""; /* not an array */
    cases[k++] = "{\"x\":1}";
    /* ours, truncated: not JSON any more */
    snprintf(bad, sizeof bad, "\"%.*s\"", (int)(n - 8), enc);
    cases[k++] = bad;
    for (int i = 0; i < k; i++) {
        char *chat = turn2(cases[i]);
        assert_null(strstr(chat, "thinking_blocks"));
        assert_non_null(strstr(chat, "\"tool_calls\":[{\"id\":\"toolu_1\""));
        free(chat);
    }
    /* ours re-encoded with a block that lost its signature: refused whole */
    {
        struct sy_arena a;
        sy_arena_init(&a);
        const char *j = "[{\"type\":\"thinking\",\"thinking\":\"t\"}]";
        char b64[256], v[512];
        size_t bl = sy__resp_b64_encode((const unsigned char *)j, strlen(j), b64);
        snprintf(v, sizeof v, "%s%.*s", SY__RESP_THINK_PREFIX, (int)bl, b64);
        size_t on;
        assert_null(sy__resp_think_read(v, strlen(v), &a, &on, NULL));
        sy_arena_free(&a);
    }
    free(enc);
    free(r);
}

/* A reasoning item followed by a user message (no assistant turn): dropped;
 * a reasoning item after an assistant text message joins that message. */
static void placement(void **state)
{
    (void)state;
    char *r = answer(answer_chat);
    char *enc = enc_of(r);
    char b[8192];
    snprintf(b, sizeof b,
             "{\"model\":\"m\",\"input\":[{\"type\":\"reasoning\",\"encrypted_content\":\"%s\"},"
             "{\"role\":\"user\",\"content\":\"hi\"}]}",
             enc);
    char *chat = to_chat(b, NULL);
    assert_null(strstr(chat, "thinking_blocks"));
    free(chat);
    snprintf(b, sizeof b,
             "{\"model\":\"m\",\"input\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\","
             "\"content\":\"sure\"},{\"type\":\"reasoning\",\"encrypted_content\":\"%s\"},{\"type\":\"function_call\","
             "\"call_id\":\"c\",\"name\":\"f\",\"arguments\":\"{}\"},{\"type\":\"function_call_output\","
             "\"call_id\":\"c\",\"output\":\"o\"}]}",
             enc);
    chat = to_chat(b, NULL);
    const char *tb = strstr(chat, "\"thinking_blocks\"");
    assert_non_null(tb);
    assert_true(tb < strstr(chat, "\"tool_calls\""));
    assert_non_null(strstr(chat, "{\"role\":\"assistant\",\"content\":\"sure\",\"thinking_blocks\""));
    free(chat);
    /* the stored conversation (previous_response_id) carries it the same way */
    char prior[8192];
    snprintf(prior, sizeof prior,
             "[{\"type\":\"message\",\"role\":\"user\",\"content\":\"go\"},{\"type\":\"reasoning\",\"id\":\"rs_1\","
             "\"summary\":[],\"encrypted_content\":\"%s\"},{\"type\":\"function_call\",\"call_id\":\"toolu_1\","
             "\"name\":\"write\",\"arguments\":\"{}\",\"status\":\"completed\"}]",
             enc);
    chat = to_chat("{\"model\":\"m\",\"input\":[{\"type\":\"function_call_output\",\"call_id\":\"toolu_1\","
                   "\"output\":\"ok\"}]}",
                   prior);
    tb = strstr(chat, want_blocks);
    assert_non_null(tb);
    assert_true(tb < strstr(chat, "\"tool_calls\""));
    free(chat);
    free(enc);
    free(r);
}

/* The anthropic adapter's chunks -> events: the reasoning item's
 * output_item.done and the final response carry the blocks. */
static void streamed(void **state)
{
    (void)state;
    struct sy_respstream s;
    struct sy_buf out;
    sy_buf_init(&out, 1 << 20);
    struct sy_resp_meta m = {.id = "resp_t", .model = "m", .created_at = 1, .id_seed = SEED};
    sy_resp_stream_init(&s, &m);
#define CH(delta) "{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":" delta "}]}"
    static const char *const chunks[] = {
        CH("{\"role\":\"assistant\",\"content\":\"\"}"),
        CH("{\"reasoning_content\":\"Let me \",\"thinking_blocks\":[{\"type\":\"thinking\",\"thinking\":\"Let me "
           "\",\"signature\":\"\"}]}"),
        CH("{\"reasoning_content\":\"write \\\"it\\\".\",\"thinking_blocks\":[{\"type\":\"thinking\",\"thinking\":"
           "\"write \\\"it\\\".\",\"signature\":\"\"}]}"),
        CH("{\"reasoning_content\":\"\",\"thinking_blocks\":[{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":"
           "\"SIG-abc\"}]}"),
        CH("{\"reasoning_content\":\"\",\"thinking_blocks\":[{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":"
           "\"/+=\"}]}"),
        CH("{\"thinking_blocks\":[{\"type\":\"redacted_thinking\",\"data\":\"REDACTED-1\"}]}"),
        CH("{\"tool_calls\":[{\"index\":0,\"id\":\"toolu_1\",\"type\":\"function\",\"function\":{\"name\":"
           "\"write\",\"arguments\":\"\"}}]}"),
        CH("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{}\"}}]}"),
        ("{\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}],"
         "\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":3}}"),
        "[DONE]",
    };
    for (size_t i = 0; i < sizeof chunks / sizeof *chunks; i++)
        sy_resp_stream_chunk(&s, chunks[i], strlen(chunks[i]), &out);
    sy_buf_append(&out, "", 1);
    /* one reasoning item; its .done item carries the blocks, the added one does not */
    const char *added = strstr(out.p, "\"type\":\"response.output_item.added\"");
    assert_non_null(added);
    const char *done = strstr(out.p, "\"type\":\"response.output_item.done\"");
    assert_non_null(done);
    const char *e1 = strstr(out.p, "\"encrypted_content\"");
    assert_true(e1 > done);
    assert_non_null(strstr(out.p, "\"delta\":\"write \\\"it\\\".\""));
    char *enc = enc_of(done);
    assert_non_null(enc);
    /* the final response has the same item */
    const char *fin = strstr(out.p, "\"type\":\"response.completed\"");
    assert_non_null(fin);
    char *enc2 = enc_of(fin);
    assert_string_equal(enc, enc2);
    char q[4096];
    snprintf(q, sizeof q, "\"%s\"", enc);
    char *chat = turn2(q);
    const char *tb = strstr(chat, want_blocks);
    assert_non_null(tb);
    assert_true(tb < strstr(chat, "\"tool_calls\""));
    free(chat);
    free(enc);
    free(enc2);
    sy_resp_stream_free(&s);
    sy_buf_free(&out);
}

/* Two signed blocks in one item: a thinking piece after a signature starts
 * the next block. */
static void streamed_two_blocks(void **state)
{
    (void)state;
    struct sy_respstream s;
    struct sy_buf out;
    sy_buf_init(&out, 1 << 20);
    struct sy_resp_meta m = {.id = "resp_t", .model = "m", .created_at = 1, .id_seed = SEED};
    sy_resp_stream_init(&s, &m);
    static const char *const chunks[] = {
        CH("{\"reasoning_content\":\"a\",\"thinking_blocks\":[{\"type\":\"thinking\",\"thinking\":\"a\"}]}"),
        CH("{\"thinking_blocks\":[{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"S1\"}]}"),
        CH("{\"reasoning_content\":\"b\",\"thinking_blocks\":[{\"type\":\"thinking\",\"thinking\":\"b\"}]}"),
        CH("{\"thinking_blocks\":[{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"S2\"}]}"),
        CH("{\"content\":\"DONE\"}"),
        "[DONE]",
    };
    for (size_t i = 0; i < sizeof chunks / sizeof *chunks; i++)
        sy_resp_stream_chunk(&s, chunks[i], strlen(chunks[i]), &out);
    sy_buf_append(&out, "", 1);
    char *enc = enc_of(out.p);
    assert_non_null(enc);
    struct sy_arena a;
    sy_arena_init(&a);
    size_t n;
    const char *blocks = sy__resp_think_read(enc, strlen(enc), &a, &n, NULL);
    assert_non_null(blocks);
    assert_string_equal(blocks, "{\"type\":\"thinking\",\"thinking\":\"a\",\"signature\":\"S1\"},"
                                "{\"type\":\"thinking\",\"thinking\":\"b\",\"signature\":\"S2\"}");
    sy_arena_free(&a);
    free(enc);
    sy_resp_stream_free(&s);
    sy_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_answer_round_trip),
        cmocka_unit_test(answer_without_blocks),
        cmocka_unit_test(foreign_and_altered),
        cmocka_unit_test(placement),
        cmocka_unit_test(streamed),
        cmocka_unit_test(streamed_two_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
