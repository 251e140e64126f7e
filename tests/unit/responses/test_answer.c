/* test_answer.c - chat.completion -> Responses `response` object
 * (responses/answer.c): items, ids, status, usage, the request echo. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "responses/responses.h"

#define SEED "0123456789abcdef0123456789abcdef"

struct t {
    struct sy_arena a;
    struct sy_buf out;
    struct sy_jdoc req, res;
    struct sy_resp_meta m;
};

static void setup(struct t *t, const char *req)
{
    sy_arena_init(&t->a);
    sy_buf_init(&t->out, 1 << 20);
    memset(&t->m, 0, sizeof t->m);
    t->m.id = "resp_test";
    t->m.model = "m";
    t->m.created_at = 1700000000;
    t->m.id_seed = SEED;
    if (req) {
        assert_int_equal(sy_jdom_parse(&t->req, req, strlen(req), &t->a, 0), 0);
        t->m.req = &t->req;
    }
}

static void done(struct t *t)
{
    sy_buf_free(&t->out);
    sy_arena_free(&t->a);
}

/* Convert and parse the result (it must be valid JSON). */
static void conv(struct t *t, const char *chat)
{
    sy_buf_reset(&t->out);
    assert_int_equal(sy_resp_from_openai(chat, strlen(chat), &t->m, &t->a, &t->out), 0);
    assert_int_equal(sy_jdom_parse(&t->res, t->out.p, t->out.len, &t->a, 0), 0);
}

/* Node at a path of member names / array positions ("output.0.content.0.text"). */
static uint32_t path(const struct sy_jdoc *d, const char *p)
{
    uint32_t n = 0;
    char seg[64];
    while (*p) {
        size_t l = strcspn(p, ".");
        memcpy(seg, p, l);
        seg[l] = 0;
        p += l + (p[l] == '.');
        if (d->n[n].type == 'a') {
            int k = atoi(seg);
            n = sy_jdom_first(d, n);
            while (n && k--)
                n = sy_jdom_next(d, n);
        } else {
            n = sy_jdom_get(d, n, seg);
        }
        if (!n)
            return 0;
    }
    return n;
}

/* Raw JSON text at a path, as a C string in the arena ("" when absent). */
static const char *raw(struct t *t, const char *p)
{
    uint32_t n = path(&t->res, p);
    if (!n)
        return "";
    size_t l;
    const char *r = sy_jdom_raw(&t->res, n, &l);
    return sy_arena_strndup(&t->a, r, l);
}

static void text_answer(void **st)
{
    (void)st;
    struct t t;
    setup(&t, NULL);
    conv(&t,
         "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"up\",\"choices\":[{\"index\":"
         "0,"
         "\"message\":{\"role\":\"assistant\",\"content\":\"Hello \\u00e9\\\"x\\\"\"},\"finish_reason\":\"stop\"}],"
         "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":3,\"total_tokens\":8,"
         "\"prompt_tokens_details\":{\"cached_tokens\":2},\"completion_tokens_details\":{\"reasoning_tokens\":1}}}");
    assert_string_equal(raw(&t, "id"), "\"resp_test\"");
    assert_string_equal(raw(&t, "object"), "\"response\"");
    assert_string_equal(raw(&t, "created_at"), "1700000000");
    assert_string_equal(raw(&t, "status"), "\"completed\"");
    assert_string_equal(raw(&t, "model"), "\"m\"");
    assert_string_equal(raw(&t, "error"), "null");
    assert_string_equal(raw(&t, "incomplete_details"), "null");
    assert_string_equal(raw(&t, "output.0.type"), "\"message\"");
    assert_string_equal(raw(&t, "output.0.id"), "\"msg_" SEED "\"");
    assert_string_equal(raw(&t, "output.0.status"), "\"completed\"");
    assert_string_equal(raw(&t, "output.0.role"), "\"assistant\"");
    assert_string_equal(raw(&t, "output.0.content.0.type"), "\"output_text\"");
    assert_string_equal(raw(&t, "output.0.content.0.text"), "\"Hello \\u00e9\\\"x\\\"\"");
    assert_string_equal(raw(&t, "output.0.content.0.annotations"), "[]");
    assert_int_equal(path(&t.res, "output.1"), 0);
    assert_string_equal(raw(&t, "usage.input_tokens"), "5");
    assert_string_equal(raw(&t, "usage.input_tokens_details.cached_tokens"), "2");
    assert_string_equal(raw(&t, "usage.output_tokens"), "3");
    assert_string_equal(raw(&t, "usage.output_tokens_details.reasoning_tokens"), "1");
    assert_string_equal(raw(&t, "usage.total_tokens"), "8");
    /* defaults without a request */
    assert_string_equal(raw(&t, "instructions"), "null");
    assert_string_equal(raw(&t, "max_output_tokens"), "null");
    assert_string_equal(raw(&t, "parallel_tool_calls"), "true");
    assert_string_equal(raw(&t, "previous_response_id"), "null");
    assert_string_equal(raw(&t, "reasoning"), "{\"effort\":null,\"summary\":null}");
    assert_string_equal(raw(&t, "store"), "true");
    assert_string_equal(raw(&t, "temperature"), "1");
    assert_string_equal(raw(&t, "top_p"), "1");
    assert_string_equal(raw(&t, "text"), "{\"format\":{\"type\":\"text\"}}");
    assert_string_equal(raw(&t, "tool_choice"), "\"auto\"");
    assert_string_equal(raw(&t, "tools"), "[]");
    assert_string_equal(raw(&t, "truncation"), "\"disabled\"");
    assert_string_equal(raw(&t, "user"), "null");
    assert_string_equal(raw(&t, "metadata"), "{}");
    assert_string_equal(raw(&t, "background"), "false");
    done(&t);
}

static void tool_calls(void **st)
{
    (void)st;
    struct t t;
    setup(&t, NULL);
    conv(&t, "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
             "{\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{"
             "\\\"city\\\":\\\"Paris\\\"}\"}},"
             "{\"type\":\"function\",\"function\":{\"name\":\"f2\",\"arguments\":{\"x\":1}}}]},"
             "\"finish_reason\":\"tool_calls\"}]}");
    assert_string_equal(raw(&t, "status"), "\"completed\"");
    assert_string_equal(raw(&t, "output.0.type"), "\"function_call\"");
    assert_string_equal(raw(&t, "output.0.id"), "\"fc_" SEED "_0\"");
    assert_string_equal(raw(&t, "output.0.call_id"), "\"call_a\"");
    assert_string_equal(raw(&t, "output.0.name"), "\"get_weather\"");
    assert_string_equal(raw(&t, "output.0.arguments"), "\"{\\\"city\\\":\\\"Paris\\\"}\"");
    assert_string_equal(raw(&t, "output.0.status"), "\"completed\"");
    assert_string_equal(raw(&t, "output.1.id"), "\"fc_" SEED "_1\"");
    assert_string_equal(raw(&t, "output.1.call_id"), "\"call_" SEED "_1\"");
    assert_string_equal(raw(&t, "output.1.arguments"), "\"{\\\"x\\\":1}\"");
    assert_int_equal(path(&t.res, "output.2"), 0);
    /* no usage: zeros */
    assert_string_equal(raw(&t, "usage.total_tokens"), "0");
    /* text then a tool call: message first */
    conv(&t, "{\"choices\":[{\"message\":{\"content\":\"Let me look.\",\"tool_calls\":[{\"id\":\"c1\",\"function\":"
             "{\"name\":\"f\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}");
    assert_string_equal(raw(&t, "output.0.type"), "\"message\"");
    assert_string_equal(raw(&t, "output.1.type"), "\"function_call\"");
    assert_string_equal(raw(&t, "output.1.id"), "\"fc_" SEED "_0\"");
    /* legacy function_call */
    conv(&t, "{\"choices\":[{\"message\":{\"function_call\":{\"name\":\"f\",\"arguments\":\"{}\"}}}]}");
    assert_string_equal(raw(&t, "output.0.type"), "\"function_call\"");
    assert_string_equal(raw(&t, "output.0.call_id"), "\"call_" SEED "_0\"");
    done(&t);
}

static void status_and_reasoning(void **st)
{
    (void)st;
    struct t t;
    setup(&t, NULL);
    conv(&t, "{\"choices\":[{\"message\":{\"content\":\"cut\"},\"finish_reason\":\"length\"}]}");
    assert_string_equal(raw(&t, "status"), "\"incomplete\"");
    assert_string_equal(raw(&t, "incomplete_details"), "{\"reason\":\"max_output_tokens\"}");
    assert_string_equal(raw(&t, "output.0.status"), "\"incomplete\"");
    conv(&t, "{\"choices\":[{\"message\":{\"content\":\"\"},\"finish_reason\":\"content_filter\"}]}");
    assert_string_equal(raw(&t, "status"), "\"incomplete\"");
    assert_string_equal(raw(&t, "incomplete_details"), "{\"reason\":\"content_filter\"}");
    assert_string_equal(raw(&t, "output.0.content.0.text"), "\"\"");
    conv(&t, "{\"choices\":[{\"message\":{\"content\":\"42\",\"reasoning_content\":\"think\"},\"finish_reason\":"
             "\"stop\"}]}");
    assert_string_equal(raw(&t, "output.0.type"), "\"reasoning\"");
    assert_string_equal(raw(&t, "output.0.id"), "\"rs_" SEED "\"");
    assert_string_equal(raw(&t, "output.0.summary"), "[{\"type\":\"summary_text\",\"text\":\"think\"}]");
    assert_string_equal(raw(&t, "output.1.type"), "\"message\"");
    conv(&t, "{\"choices\":[{\"message\":{\"content\":null,\"refusal\":\"no\"},\"finish_reason\":\"stop\"}]}");
    assert_string_equal(raw(&t, "output.0.content"), "[{\"type\":\"refusal\",\"refusal\":\"no\"}]");
    conv(&t, "{\"choices\":[{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\",\"text\":"
             "\"\\u00e9\"}]}}]}");
    assert_string_equal(raw(&t, "output.0.content.0.text"), "\"a\xc3\xa9\"");
    done(&t);
}

static void request_echo(void **st)
{
    (void)st;
    struct t t;
    setup(&t, "{\"model\":\"x\",\"input\":\"hi\",\"instructions\":\"be brief\",\"max_output_tokens\":50,"
              "\"tools\":[{\"type\":\"function\",\"name\":\"f\",\"parameters\":{\"type\":\"object\"}}],"
              "\"tool_choice\":{\"type\":\"function\",\"name\":\"f\"},\"temperature\":0.2,\"top_p\":null,"
              "\"metadata\":{\"k\":\"v\"},\"parallel_tool_calls\":false,\"reasoning\":{\"effort\":\"low\"},"
              "\"text\":{\"verbosity\":\"low\",\"format\":{\"type\":\"json_object\"}},\"store\":false,\"user\":\"u1\","
              "\"truncation\":\"auto\"}");
    t.m.previous_response_id = "resp_prev";
    conv(&t, "{\"choices\":[{\"message\":{\"content\":\"ok\"}}]}");
    assert_string_equal(raw(&t, "instructions"), "\"be brief\"");
    assert_string_equal(raw(&t, "max_output_tokens"), "50");
    assert_string_equal(raw(&t, "tools"),
                        "[{\"type\":\"function\",\"name\":\"f\",\"parameters\":{\"type\":\"object\"}}]");
    assert_string_equal(raw(&t, "tool_choice"), "{\"type\":\"function\",\"name\":\"f\"}");
    assert_string_equal(raw(&t, "temperature"), "0.2");
    assert_string_equal(raw(&t, "top_p"), "1");
    assert_string_equal(raw(&t, "metadata"), "{\"k\":\"v\"}");
    assert_string_equal(raw(&t, "parallel_tool_calls"), "false");
    assert_string_equal(raw(&t, "reasoning"), "{\"effort\":\"low\",\"summary\":null}");
    assert_string_equal(raw(&t, "text"), "{\"format\":{\"type\":\"json_object\"},\"verbosity\":\"low\"}");
    assert_string_equal(raw(&t, "store"), "false");
    assert_string_equal(raw(&t, "user"), "\"u1\"");
    assert_string_equal(raw(&t, "truncation"), "\"auto\"");
    assert_string_equal(raw(&t, "previous_response_id"), "\"resp_prev\"");
    done(&t);
}

static void errors(void **st)
{
    (void)st;
    struct t t;
    setup(&t, NULL);
    assert_int_equal(sy_resp_from_openai("{", 1, &t.m, &t.a, &t.out), SY_EJSON);
    assert_int_equal(sy_resp_from_openai("[]", 2, &t.m, &t.a, &t.out), SY_EUPPROTO);
    assert_int_equal(sy_resp_from_openai("{\"choices\":[]}", 14, &t.m, &t.a, &t.out), SY_EUPPROTO);
    assert_int_equal(sy_resp_from_openai("{\"choices\":[{\"delta\":{}}]}", 26, &t.m, &t.a, &t.out), SY_EUPPROTO);
    assert_int_equal(t.out.len, 0);
    struct sy_buf small;
    sy_buf_init(&small, 64);
    const char *c = "{\"choices\":[{\"message\":{\"content\":\"ok\"}}]}";
    assert_int_equal(sy_resp_from_openai(c, strlen(c), &t.m, &t.a, &small), SY_ENOSPC);
    assert_int_equal(small.len, 0);
    sy_buf_free(&small);
    done(&t);
}

static void output_items(void **st)
{
    (void)st;
    struct t t;
    setup(&t, NULL);
    conv(&t,
         "{\"choices\":[{\"message\":{\"content\":\"ok\",\"tool_calls\":[{\"id\":\"c\",\"function\":{\"name\":\"f\","
         "\"arguments\":\"{}\"}}]}}]}");
    struct sy_buf items;
    sy_buf_init(&items, 1 << 20);
    assert_int_equal(sy_resp_output_items(t.out.p, t.out.len, &t.a, &items), 0);
    assert_string_equal(items.p, raw(&t, "output"));
    sy_buf_reset(&items);
    assert_int_equal(sy_resp_output_items("{\"id\":1}", 8, &t.a, &items), 0);
    assert_string_equal(items.p, "[]");
    assert_int_equal(sy_resp_output_items("nope", 4, &t.a, &items), SY_EJSON);
    sy_buf_free(&items);
    done(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(text_answer),  cmocka_unit_test(tool_calls), cmocka_unit_test(status_and_reasoning),
        cmocka_unit_test(request_echo), cmocka_unit_test(errors),     cmocka_unit_test(output_items),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
