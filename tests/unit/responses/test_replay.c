/* test_replay.c - a whole response object as the Responses event stream
 * (responses/replay.c): the events per item type, their order and sequence
 * numbers, the text and arguments carried whole, the terminal event by status,
 * and what is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "core/errors.h"
#include "responses/responses.h"

struct ev {
    char type[64];
    const char *data;
    size_t n;
};

/* Split out into events; checks the framing and that sequence numbers count from 0. */
static size_t events(struct sy_arena *a, const struct sy_buf *out, struct ev *ev, size_t cap)
{
    const char *p = out->p, *e = out->p + out->len;
    size_t k = 0;
    while (p < e) {
        assert_true(e - p > 7 && !memcmp(p, "event: ", 7));
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        assert_non_null(nl);
        assert_true(k < cap);
        size_t tl = (size_t)(nl - p - 7);
        assert_true(tl < sizeof ev[k].type);
        memcpy(ev[k].type, p + 7, tl);
        ev[k].type[tl] = 0;
        assert_memory_equal(nl + 1, "data: ", 6);
        const char *d = nl + 7, *end = memmem(d, (size_t)(e - d), "\n\n", 2);
        assert_non_null(end);
        ev[k].data = d;
        ev[k].n = (size_t)(end - d);
        struct sy_jdoc doc;
        assert_int_equal(sy_jdom_parse(&doc, d, ev[k].n, a, 0), 0);
        assert_true(sy_jdom_str_eq(&doc, sy_jdom_get(&doc, 0, "type"), ev[k].type));
        int64_t seq;
        assert_int_equal(sy_jdom_i64(&doc, sy_jdom_get(&doc, 0, "sequence_number"), &seq), 1);
        assert_int_equal(seq, (int64_t)k);
        k++;
        p = end + 2;
    }
    return k;
}

static const char RESP[] =
    "{\"id\":\"resp_1\",\"object\":\"response\",\"created_at\":1,\"status\":\"completed\",\"model\":\"m\","
    "\"output\":[{\"id\":\"mcpl_1\",\"type\":\"mcp_list_tools\",\"server_label\":\"s\",\"tools\":[{\"name\":"
    "\"s-echo\",\"input_schema\":{}}],\"error\":null},"
    "{\"id\":\"mcp_1\",\"type\":\"mcp_call\",\"approval_request_id\":null,\"arguments\":\"{\\\"t\\\":1}\","
    "\"error\":null,\"name\":\"s-echo\",\"output\":\"one\",\"server_label\":\"s\",\"status\":\"completed\"},"
    "{\"id\":\"mcp_2\",\"type\":\"mcp_call\",\"arguments\":\"{}\",\"error\":\"boom\",\"name\":\"s-echo\","
    "\"output\":null,\"server_label\":\"s\",\"status\":\"failed\"},"
    "{\"id\":\"msg_1\",\"type\":\"message\",\"status\":\"completed\",\"role\":\"assistant\",\"content\":"
    "[{\"type\":\"output_text\",\"text\":\"Hello \\\"you\\\"\",\"annotations\":[]}]},"
    "{\"id\":\"fc_1\",\"type\":\"function_call\",\"call_id\":\"call_1\",\"name\":\"f\",\"arguments\":\"{}\","
    "\"status\":\"completed\"},"
    "{\"id\":\"mcpr_x\",\"type\":\"mcp_approval_request\",\"arguments\":\"{}\",\"name\":\"s-echo\","
    "\"server_label\":\"s\"}],\"usage\":{\"input_tokens\":3,\"output_tokens\":2,\"total_tokens\":5}}";

static void test_items(void **st)
{
    (void)st;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_buf out;
    sy_buf_init(&out, 1 << 20);
    assert_int_equal(sy_resp_sse_replay(RESP, sizeof RESP - 1, &a, &out), 0);
    struct ev ev[64];
    size_t n = events(&a, &out, ev, 64);
    static const char *const want[] = {
        "response.created", "response.in_progress",
        /* mcp_list_tools */
        "response.output_item.added", "response.mcp_list_tools.in_progress", "response.mcp_list_tools.completed",
        "response.output_item.done",
        /* mcp_call */
        "response.output_item.added", "response.mcp_call.in_progress", "response.mcp_call_arguments.delta",
        "response.mcp_call_arguments.done", "response.mcp_call.completed", "response.output_item.done",
        /* a failed mcp_call */
        "response.output_item.added", "response.mcp_call.in_progress", "response.mcp_call_arguments.delta",
        "response.mcp_call_arguments.done", "response.mcp_call.failed", "response.output_item.done",
        /* message */
        "response.output_item.added", "response.content_part.added", "response.output_text.delta",
        "response.output_text.done", "response.content_part.done", "response.output_item.done",
        /* function_call */
        "response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done",
        "response.output_item.done",
        /* anything else */
        "response.output_item.added", "response.output_item.done", "response.completed"};
    assert_int_equal(n, sizeof want / sizeof *want);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(ev[i].type, want[i]);
    /* the opening response: in progress, no output yet; the last: the object as given */
    struct sy_jdoc d;
    assert_int_equal(sy_jdom_parse(&d, ev[0].data, ev[0].n, &a, 0), 0);
    uint32_t r = sy_jdom_get(&d, 0, "response");
    assert_true(sy_jdom_str_eq(&d, sy_jdom_get(&d, r, "status"), "in_progress"));
    assert_int_equal(d.n[sy_jdom_get(&d, r, "output")].kids, 0);
    assert_int_equal(sy_jdom_type(&d, sy_jdom_get(&d, r, "usage")), 'z');
    assert_true(sy_jdom_str_eq(&d, sy_jdom_get(&d, r, "id"), "resp_1"));
    assert_int_equal(sy_jdom_parse(&d, ev[n - 1].data, ev[n - 1].n, &a, 0), 0);
    size_t rl;
    const char *rr = sy_jdom_raw(&d, sy_jdom_get(&d, 0, "response"), &rl);
    assert_int_equal(rl, sizeof RESP - 1);
    assert_memory_equal(rr, RESP, rl);
    /* the text delta carries the whole text, escapes as they were */
    assert_int_equal(sy_jdom_parse(&d, ev[20].data, ev[20].n, &a, 0), 0);
    size_t tl;
    const char *t = sy_jdom_str(&d, sy_jdom_get(&d, 0, "delta"), &a, &tl);
    assert_string_equal(t, "Hello \"you\"");
    assert_true(sy_jdom_str_eq(&d, sy_jdom_get(&d, 0, "item_id"), "msg_1"));
    int64_t oi;
    assert_int_equal(sy_jdom_i64(&d, sy_jdom_get(&d, 0, "output_index"), &oi), 1);
    assert_int_equal(oi, 3);
    /* the mcp_call's added item: arguments and output not there yet */
    assert_int_equal(sy_jdom_parse(&d, ev[6].data, ev[6].n, &a, 0), 0);
    uint32_t it = sy_jdom_get(&d, 0, "item");
    assert_true(sy_jdom_str_eq(&d, sy_jdom_get(&d, it, "arguments"), ""));
    assert_int_equal(sy_jdom_type(&d, sy_jdom_get(&d, it, "output")), 'z');
    assert_true(sy_jdom_str_eq(&d, sy_jdom_get(&d, it, "status"), "in_progress"));
    assert_true(sy_jdom_str_eq(&d, sy_jdom_get(&d, it, "name"), "s-echo"));
    /* its arguments delta: the whole string */
    assert_int_equal(sy_jdom_parse(&d, ev[8].data, ev[8].n, &a, 0), 0);
    t = sy_jdom_str(&d, sy_jdom_get(&d, 0, "delta"), &a, &tl);
    assert_string_equal(t, "{\"t\":1}");
    sy_buf_free(&out);
    sy_arena_free(&a);
}

static void test_status_and_refusals(void **st)
{
    (void)st;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_buf out;
    sy_buf_init(&out, 1 << 20);
    static const char inc[] = "{\"id\":\"r\",\"status\":\"incomplete\",\"output\":[]}";
    assert_int_equal(sy_resp_sse_replay(inc, sizeof inc - 1, &a, &out), 0);
    struct ev ev[8];
    assert_int_equal(events(&a, &out, ev, 8), 3);
    assert_string_equal(ev[2].type, "response.incomplete");
    sy_buf_reset(&out);
    static const char nooutput[] = "{\"id\":\"r\",\"status\":\"failed\"}";
    assert_int_equal(sy_resp_sse_replay(nooutput, sizeof nooutput - 1, &a, &out), 0);
    assert_int_equal(events(&a, &out, ev, 8), 3);
    assert_string_equal(ev[2].type, "response.failed");
    /* not a response object: refused, nothing half-written matters */
    static const char *const bad[] = {"[]", "{\"output\":{}}", "{\"output\":[1]}", "{", "", "{\"a\":1}x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sy_buf_reset(&out);
        assert_int_equal(sy_resp_sse_replay(bad[i], strlen(bad[i]), &a, &out), SY_EJSON);
    }
    /* the cap: SY_ENOSPC, never a cut event passed as whole */
    struct sy_buf small;
    sy_buf_init(&small, 64);
    assert_int_equal(sy_resp_sse_replay(RESP, sizeof RESP - 1, &a, &small), SY_ENOSPC);
    sy_buf_free(&small);
    sy_buf_free(&out);
    sy_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_items),
        cmocka_unit_test(test_status_and_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
