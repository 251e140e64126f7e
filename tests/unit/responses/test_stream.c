/* test_stream.c - OpenAI chat chunks -> Responses events (responses/stream.c).
 *
 * Every stream is checked by an accumulator built like the openai SDK's
 * ResponseStream: sequence_number 0..N-1 with no gap, response.created then
 * response.in_progress first, output_item.added at output_index = the items
 * so far, content_part.added before output_text.delta, item_id /
 * output_index / content_index of every delta naming the open item, the
 * deltas adding up to the .done text, one terminal event last, and its
 * response equal to sy_resp_stream_final. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "core/errors.h"
#include "responses/responses.h"

#define SEED "0123456789abcdef0123456789abcdef"

struct t {
    struct sy_arena a;
    struct sy_buf out;
    struct sy_respstream s;
    struct sy_resp_meta m;
};

static void setup(struct t *t)
{
    sy_arena_init(&t->a);
    sy_buf_init(&t->out, 1 << 22);
    memset(&t->m, 0, sizeof t->m);
    t->m.id = "resp_test";
    t->m.model = "m";
    t->m.created_at = 1700000000;
    t->m.id_seed = SEED;
    sy_resp_stream_init(&t->s, &t->m);
}

static void done(struct t *t)
{
    sy_resp_stream_free(&t->s);
    sy_buf_free(&t->out);
    sy_arena_free(&t->a);
}

static int feed(struct t *t, const char *data)
{
    return sy_resp_stream_chunk(&t->s, data, strlen(data), &t->out);
}

/* ---- the accumulator ------------------------------------------------------ */

struct acc {
    int n;              /* events */
    char types[64][64]; /* their types (the first 64) */
    int items;          /* output items added */
    char ids[16][128];
    char kinds[16][24];
    struct sy_buf text[16]; /* accumulated deltas per item */
    int parts[16];          /* content / summary parts added */
    int closed[16];
    const char *terminal; /* type of the last event */
    const char *response; /* its response JSON */
    size_t response_len;
    char done_text[16][4096]; /* the .done text per item */
};

static const char *str(const struct sy_jdoc *d, uint32_t obj, const char *key, struct sy_arena *a, size_t *n)
{
    size_t l = 0;
    const char *s = sy_jdom_str(d, sy_jdom_get(d, obj, key), a, &l);
    if (n)
        *n = l;
    return s;
}

static int64_t num(const struct sy_jdoc *d, uint32_t obj, const char *key)
{
    int64_t v = -1;
    assert_true(sy_jdom_i64(d, sy_jdom_get(d, obj, key), &v));
    return v;
}

/* The item an event refers to (by output_index), checked against item_id. */
static int ref(struct acc *c, const struct sy_jdoc *d, struct sy_arena *a)
{
    int64_t oi = num(d, 0, "output_index");
    assert_true(oi >= 0 && oi < c->items);
    const char *id = str(d, 0, "item_id", a, NULL);
    assert_non_null(id);
    assert_string_equal(id, c->ids[oi]);
    assert_false(c->closed[oi]);
    return (int)oi;
}

static void check_events(const char *p, size_t n, struct acc *c, struct sy_arena *a)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < 16; i++)
        sy_buf_init(&c->text[i], 1 << 20);
    const char *e = p + n;
    while (p < e) {
        assert_true(c->terminal == NULL); /* nothing after the terminal event */
        assert_memory_equal(p, "event: ", 7);
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        assert_non_null(nl);
        char type[64];
        size_t tl = (size_t)(nl - p - 7);
        assert_true(tl < sizeof type);
        memcpy(type, p + 7, tl);
        type[tl] = 0;
        p = nl + 1;
        assert_memory_equal(p, "data: ", 6);
        p += 6;
        const char *end = strstr(p, "\n\n");
        assert_non_null(end);
        struct sy_jdoc d;
        assert_int_equal(sy_jdom_parse(&d, p, (size_t)(end - p), a, 0), 0);
        const char *jt = str(&d, 0, "type", a, NULL);
        assert_non_null(jt);
        assert_string_equal(jt, type);
        assert_int_equal(num(&d, 0, "sequence_number"), c->n);
        if (c->n < 64)
            snprintf(c->types[c->n], sizeof c->types[0], "%s", type);
        if (c->n == 0)
            assert_string_equal(type, "response.created");
        if (c->n == 1)
            assert_string_equal(type, "response.in_progress");
        c->n++;
        if (!strcmp(type, "response.output_item.added")) {
            assert_int_equal(num(&d, 0, "output_index"), c->items);
            uint32_t item = sy_jdom_get(&d, 0, "item");
            snprintf(c->ids[c->items], sizeof c->ids[0], "%s", str(&d, item, "id", a, NULL));
            snprintf(c->kinds[c->items], sizeof c->kinds[0], "%s", str(&d, item, "type", a, NULL));
            if (!strcmp(c->kinds[c->items], "function_call")) {
                assert_non_null(str(&d, item, "call_id", a, NULL));
                assert_non_null(str(&d, item, "name", a, NULL));
                assert_string_equal(str(&d, item, "arguments", a, NULL), "");
            }
            if (!strcmp(c->kinds[c->items], "custom_tool_call")) {
                assert_non_null(str(&d, item, "call_id", a, NULL));
                assert_non_null(str(&d, item, "name", a, NULL));
                assert_string_equal(str(&d, item, "input", a, NULL), "");
            }
            c->items++;
        } else if (!strcmp(type, "response.content_part.added") ||
                   !strcmp(type, "response.reasoning_summary_part.added")) {
            int k = ref(c, &d, a);
            assert_int_equal(c->parts[k], 0);
            c->parts[k]++;
        } else if (strstr(type, ".delta")) {
            int k = ref(c, &d, a);
            if (!strcmp(type, "response.output_text.delta")) {
                assert_string_equal(c->kinds[k], "message");
                assert_int_equal(c->parts[k], 1);
                assert_int_equal(num(&d, 0, "content_index"), 0);
            } else if (!strcmp(type, "response.function_call_arguments.delta")) {
                assert_string_equal(c->kinds[k], "function_call");
            } else if (!strcmp(type, "response.custom_tool_call_input.delta")) {
                assert_string_equal(c->kinds[k], "custom_tool_call");
            } else if (!strcmp(type, "response.reasoning_summary_text.delta")) {
                assert_string_equal(c->kinds[k], "reasoning");
                assert_int_equal(c->parts[k], 1);
            }
            size_t dl;
            const char *ds = str(&d, 0, "delta", a, &dl);
            assert_non_null(ds);
            sy_buf_append(&c->text[k], ds, dl);
        } else if (!strcmp(type, "response.output_text.done") || !strcmp(type, "response.refusal.done") ||
                   !strcmp(type, "response.function_call_arguments.done") ||
                   !strcmp(type, "response.custom_tool_call_input.done") ||
                   !strcmp(type, "response.reasoning_summary_text.done")) {
            int k = ref(c, &d, a);
            size_t dl;
            const char *ds = str(&d, 0,
                                 !strcmp(type, "response.function_call_arguments.done")  ? "arguments"
                                 : !strcmp(type, "response.custom_tool_call_input.done") ? "input"
                                 : !strcmp(type, "response.refusal.done")                ? "refusal"
                                                                                         : "text",
                                 a, &dl);
            assert_non_null(ds);
            assert_int_equal(dl, c->text[k].len); /* the deltas add up to the .done text */
            assert_memory_equal(ds, c->text[k].p ? c->text[k].p : "", dl);
            snprintf(c->done_text[k], sizeof c->done_text[0], "%.*s", (int)dl, ds);
        } else if (!strcmp(type, "response.output_item.done")) {
            int64_t oi = num(&d, 0, "output_index");
            assert_true(oi >= 0 && oi < c->items && !c->closed[oi]);
            uint32_t item = sy_jdom_get(&d, 0, "item");
            assert_string_equal(str(&d, item, "id", a, NULL), c->ids[oi]);
            c->closed[oi] = 1;
        } else if (!strcmp(type, "response.completed") || !strcmp(type, "response.incomplete") ||
                   !strcmp(type, "response.failed")) {
            uint32_t r = sy_jdom_get(&d, 0, "response");
            size_t rl;
            const char *rr = sy_jdom_raw(&d, r, &rl);
            c->terminal = sy_arena_strndup(a, type, strlen(type));
            c->response = rr;
            c->response_len = rl;
            if (strcmp(type, "response.failed"))
                for (int k = 0; k < c->items; k++)
                    assert_true(c->closed[k]);
        }
        p = end + 2;
    }
    for (int i = 0; i < 16; i++)
        sy_buf_free(&c->text[i]);
}

/* Check the events written so far; the terminal response equals
 * sy_resp_stream_final (when the stream completed). */
static void check(struct t *t, struct acc *c, const char *terminal)
{
    check_events(t->out.p, t->out.len, c, &t->a);
    assert_non_null(c->terminal);
    assert_string_equal(c->terminal, terminal);
    struct sy_buf f;
    sy_buf_init(&f, 1 << 22);
    if (strcmp(terminal, "response.failed")) {
        assert_int_equal(sy_resp_stream_final(&t->s, &f), 0);
        assert_int_equal(f.len, c->response_len);
        assert_memory_equal(f.p, c->response, f.len);
    } else {
        assert_int_equal(sy_resp_stream_final(&t->s, &f), -1);
    }
    sy_buf_free(&f);
}

static const char *resp_raw(struct t *t, struct acc *c, const char *key)
{
    struct sy_jdoc d;
    assert_int_equal(sy_jdom_parse(&d, c->response, c->response_len, &t->a, 0), 0);
    uint32_t n = sy_jdom_get(&d, 0, key);
    assert_true(n != 0);
    size_t l;
    const char *r = sy_jdom_raw(&d, n, &l);
    return sy_arena_strndup(&t->a, r, l);
}

/* ---- tests ------------------------------------------------------------------ */

#define CH(delta, fin)                                                                              \
    "{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":" delta \
    ",\"finish_reason\":" fin "}]}"

static void text_stream(void **st)
{
    (void)st;
    struct t t;
    setup(&t);
    assert_int_equal(feed(&t, CH("{\"role\":\"assistant\",\"content\":\"\"}", "null")), 0);
    assert_int_equal(feed(&t, CH("{\"content\":\"Hel\"}", "null")), 0);
    assert_int_equal(feed(&t, CH("{\"content\":\"lo \\\"w\\\"\\n\"}", "null")), 0);
    assert_int_equal(feed(&t, CH("{}", "\"stop\"")), 0);
    assert_int_equal(feed(&t, "{\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":2,"
                              "\"total_tokens\":9,\"prompt_tokens_details\":{\"cached_tokens\":3}}}"),
                     SY_DONE);
    size_t len = t.out.len;
    assert_int_equal(feed(&t, "[DONE]"), SY_DONE);
    assert_int_equal(t.out.len, len);
    sy_resp_stream_end(&t.s, &t.out);
    assert_int_equal(t.out.len, len);
    struct acc c;
    check(&t, &c, "response.completed");
    const char *want[] = {"response.created",           "response.in_progress",
                          "response.output_item.added", "response.content_part.added",
                          "response.output_text.delta", "response.output_text.delta",
                          "response.output_text.done",  "response.content_part.done",
                          "response.output_item.done",  "response.completed"};
    assert_int_equal(c.n, 10);
    for (int i = 0; i < 10; i++)
        assert_string_equal(c.types[i], want[i]);
    assert_string_equal(c.ids[0], "msg_" SEED);
    assert_string_equal(c.done_text[0], "Hello \"w\"\n");
    assert_string_equal(resp_raw(&t, &c, "usage"),
                        "{\"input_tokens\":7,\"input_tokens_details\":{\"cached_tokens\":3},\"output_tokens\":2,"
                        "\"output_tokens_details\":{\"reasoning_tokens\":0},\"total_tokens\":9}");
    assert_string_equal(resp_raw(&t, &c, "status"), "\"completed\"");
    assert_string_equal(
        resp_raw(&t, &c, "output"),
        "[{\"type\":\"message\",\"id\":\"msg_" SEED "\",\"status\":\"completed\",\"role\":\"assistant\","
        "\"content\":[{\"type\":\"output_text\",\"text\":\"Hello \\\"w\\\"\\n\",\"annotations\":[]}]}]");
    /* the created event carries an in_progress response with no output */
    assert_non_null(strstr(t.out.p, "\"status\":\"in_progress\""));
    done(&t);
}

static void tool_stream(void **st)
{
    (void)st;
    struct t t;
    setup(&t);
    feed(&t, CH("{\"role\":\"assistant\",\"content\":\"Checking.\"}", "null"));
    feed(&t, CH("{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_"
                "weather\","
                "\"arguments\":\"\"}}]}",
                "null"));
    feed(&t, CH("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"ci\"}}]}", "null"));
    feed(&t, CH("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"ty\\\":\\\"Par\"}}]}", "null"));
    feed(&t, CH("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"is\\\"}\"}}]}", "null"));
    /* a second call by index, without an id */
    feed(&t, CH("{\"tool_calls\":[{\"index\":1,\"function\":{\"name\":\"time\",\"arguments\":\"{}\"}}]}", "null"));
    /* a late piece of the closed call 0: dropped */
    feed(&t, CH("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"xx\"}}]}", "null"));
    assert_int_equal(feed(&t, CH("{}", "\"tool_calls\"")), 0);
    assert_int_equal(feed(&t, "[DONE]"), SY_DONE);
    struct acc c;
    check(&t, &c, "response.completed");
    assert_int_equal(c.items, 3);
    assert_string_equal(c.kinds[0], "message");
    assert_string_equal(c.kinds[1], "function_call");
    assert_string_equal(c.kinds[2], "function_call");
    assert_string_equal(c.ids[1], "fc_" SEED "_0");
    assert_string_equal(c.ids[2], "fc_" SEED "_1");
    assert_string_equal(c.done_text[1], "{\"city\":\"Paris\"}");
    assert_string_equal(c.done_text[2], "{}");
    const char *out = resp_raw(&t, &c, "output");
    assert_non_null(strstr(out, "{\"type\":\"function_call\",\"id\":\"fc_" SEED "_0\",\"call_id\":\"call_1\","
                                "\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\","
                                "\"status\":\"completed\"}"));
    assert_non_null(strstr(out, "\"call_id\":\"call_" SEED "_1\",\"name\":\"time\""));
    assert_string_equal(resp_raw(&t, &c, "usage"),
                        "{\"input_tokens\":0,\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens\":0,"
                        "\"output_tokens_details\":{\"reasoning_tokens\":0},\"total_tokens\":0}");
    done(&t);
}

static void same_index_new_id(void **st)
{
    (void)st;
    struct t t;
    setup(&t);
    /* providers that number every call 0 but give each its own id */
    feed(&t, CH("{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}",
                "null"));
    feed(&t, CH("{\"tool_calls\":[{\"index\":0,\"id\":\"b\",\"function\":{\"name\":\"g\",\"arguments\":\"{}\"}}]}",
                "null"));
    feed(&t, CH("{}", "\"tool_calls\""));
    sy_resp_stream_end(&t.s, &t.out);
    struct acc c;
    check(&t, &c, "response.completed");
    assert_int_equal(c.items, 2);
    done(&t);
}

static void reasoning_stream(void **st)
{
    (void)st;
    struct t t;
    setup(&t);
    feed(&t, CH("{\"role\":\"assistant\",\"reasoning_content\":\"Let me \"}", "null"));
    feed(&t, CH("{\"reasoning_content\":\"think.\"}", "null"));
    feed(&t, CH("{\"content\":\"42\"}", "null"));
    feed(&t, "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,"
             "\"completion_tokens\":5,\"completion_tokens_details\":{\"reasoning_tokens\":4}}}");
    struct acc c;
    check(&t, &c, "response.completed");
    assert_string_equal(c.types[2], "response.output_item.added");
    assert_string_equal(c.types[3], "response.reasoning_summary_part.added");
    assert_string_equal(c.types[4], "response.reasoning_summary_text.delta");
    assert_string_equal(c.kinds[0], "reasoning");
    assert_string_equal(c.ids[0], "rs_" SEED);
    assert_string_equal(c.done_text[0], "Let me think.");
    assert_string_equal(c.kinds[1], "message");
    assert_non_null(strstr(t.out.p, "event: response.reasoning_summary_part.done\n"));
    assert_non_null(strstr(resp_raw(&t, &c, "output"),
                           "{\"type\":\"reasoning\",\"id\":\"rs_" SEED "\",\"summary\":[{\"type\":\"summary_text\","
                           "\"text\":\"Let me think.\"}]}"));
    assert_string_equal(resp_raw(&t, &c, "usage"),
                        "{\"input_tokens\":1,\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens\":5,"
                        "\"output_tokens_details\":{\"reasoning_tokens\":4},\"total_tokens\":6}");
    done(&t);
}

static void incomplete_stream(void **st)
{
    (void)st;
    struct t t;
    setup(&t);
    feed(&t, CH("{\"content\":\"trunc\"}", "null"));
    feed(&t, CH("{}", "\"length\""));
    sy_resp_stream_end(&t.s, &t.out);
    struct acc c;
    check(&t, &c, "response.incomplete");
    assert_string_equal(resp_raw(&t, &c, "status"), "\"incomplete\"");
    assert_string_equal(resp_raw(&t, &c, "incomplete_details"), "{\"reason\":\"max_output_tokens\"}");
    assert_non_null(strstr(resp_raw(&t, &c, "output"), "\"status\":\"incomplete\""));
    done(&t);
    /* content_filter, and an answer with no text at all: an empty message */
    setup(&t);
    feed(&t, CH("{\"role\":\"assistant\"}", "null"));
    feed(&t, CH("{}", "\"content_filter\""));
    feed(&t, "[DONE]");
    check(&t, &c, "response.incomplete");
    assert_string_equal(resp_raw(&t, &c, "incomplete_details"), "{\"reason\":\"content_filter\"}");
    assert_int_equal(c.items, 1);
    assert_string_equal(c.done_text[0], "");
    done(&t);
}

static void error_stream(void **st)
{
    (void)st;
    struct t t;
    setup(&t);
    feed(&t, CH("{\"content\":\"par\"}", "null"));
    assert_int_equal(feed(&t, "{\"error\":{\"message\":\"boom \\u00e9\",\"type\":\"api_error\",\"code\":\"500\"}}"),
                     SY_DONE);
    assert_int_equal(feed(&t, CH("{\"content\":\"more\"}", "null")), SY_DONE);
    struct acc c;
    check(&t, &c, "response.failed");
    assert_non_null(strstr(t.out.p, "event: error\ndata: {\"type\":\"error\",\"sequence_number\":"));
    assert_non_null(strstr(t.out.p, "\"code\":\"500\",\"message\":\"boom \xc3\xa9\",\"param\":null}"));
    assert_string_equal(resp_raw(&t, &c, "error"), "{\"code\":\"500\",\"message\":\"boom \xc3\xa9\"}");
    assert_string_equal(resp_raw(&t, &c, "status"), "\"failed\"");
    size_t len = t.out.len;
    sy_resp_stream_end(&t.s, &t.out);
    sy_resp_stream_error(&t.s, 500, "x", 1, &t.out);
    assert_int_equal(t.out.len, len);
    done(&t);

    /* a failure before anything: created / in_progress first */
    setup(&t);
    sy_resp_stream_error(&t.s, 429, "slow down", 9, &t.out);
    check(&t, &c, "response.failed");
    assert_int_equal(c.n, 4);
    assert_string_equal(resp_raw(&t, &c, "error"), "{\"code\":\"rate_limit_exceeded\",\"message\":\"slow down\"}");
    done(&t);

    /* not JSON / not a chunk: nothing written */
    setup(&t);
    assert_int_equal(feed(&t, "{nope"), SY_EJSON);
    assert_int_equal(feed(&t, "[1]"), SY_EUPPROTO);
    assert_int_equal(t.out.len, 0);
    assert_int_equal(sy_resp_stream_final(&t.s, &t.out), -1);
    sy_resp_stream_end(&t.s, &t.out);
    check(&t, &c, "response.completed");
    done(&t);
}

/* Text made of multi-byte characters (2, 3 and 4 bytes, some as \u escapes
 * with surrogate pairs): one character per chunk, and every split of the text
 * into two chunks at a character boundary. */
static void utf8_stream(void **st)
{
    (void)st;
    static const char *chars[] = {"h",       "\xc3\xa9",       "\xe6\x97\xa5", "\xf0\x9f\x98\x80",
                                  "\\u00e9", "\\ud83d\\ude00", "\\u65e5",      "\\\"",
                                  "\xc2\xa0"};
    static const char *decoded[] = {"h",        "\xc3\xa9",         "\xe6\x97\xa5", "\xf0\x9f\x98\x80",
                                    "\xc3\xa9", "\xf0\x9f\x98\x80", "\xe6\x97\xa5", "\"",
                                    "\xc2\xa0"};
    size_t nc = sizeof chars / sizeof chars[0];
    char want[256] = "";
    for (size_t i = 0; i < nc; i++)
        strcat(want, decoded[i]);
    struct t t;
    struct acc c;
    char chunk[512];
    /* one character per chunk */
    setup(&t);
    for (size_t i = 0; i < nc; i++) {
        snprintf(chunk, sizeof chunk, CH("{\"content\":\"%s\"}", "null"), chars[i]);
        assert_int_equal(feed(&t, chunk), 0);
    }
    feed(&t, CH("{}", "\"stop\""));
    feed(&t, "[DONE]");
    check(&t, &c, "response.completed");
    assert_string_equal(c.done_text[0], want);
    done(&t);
    /* two chunks, split after character k, for every k; also as arguments and reasoning */
    for (size_t k = 0; k <= nc; k++)
        for (int kind = 0; kind < 3; kind++) {
            char a[256] = "", b[256] = "";
            for (size_t i = 0; i < nc; i++)
                strcat(i < k ? a : b, chars[i]);
            setup(&t);
            const char *fmt = kind == 0 ? CH("{\"content\":\"%s\"}", "null")
                              : kind == 1
                                  ? CH("{\"reasoning_content\":\"%s\"}", "null")
                                  : CH("{\"tool_calls\":[{\"index\":0,\"id\":\"x\",\"function\":{\"name\":\"f\","
                                       "\"arguments\":\"%s\"}}]}",
                                       "null");
            snprintf(chunk, sizeof chunk, fmt, a);
            assert_int_equal(feed(&t, chunk), 0);
            snprintf(chunk, sizeof chunk, fmt, b);
            assert_int_equal(feed(&t, chunk), 0);
            sy_resp_stream_end(&t.s, &t.out);
            check(&t, &c, "response.completed");
            assert_string_equal(c.done_text[0], want);
            done(&t);
        }
}

/* A custom tool's {"input":"..."} arguments cut at every pair of places
 * (inside escapes, \u sequences and surrogate pairs): the input deltas add up
 * to the raw input each time (the accumulator checks them against .done),
 * which is the decoded string; namespaced calls keep their name and namespace. */
static void custom_split_everywhere(void **st)
{
    (void)st;
    static const char REQ[] =
        "{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"custom\",\"name\":\"p\"},"
        "{\"type\":\"namespace\",\"name\":\"ns\",\"tools\":[{\"type\":\"custom\",\"name\":\"q\"}]}]}";
    static const char ARGS[] = "{ \"input\" : \"a\\n\\u00e9\\ud83d\\ude00\\\"\\\\z\\/\" }";
    static const char WANT[] = "a\n\xc3\xa9\xf0\x9f\x98\x80\"\\z/";
    size_t n = sizeof ARGS - 1;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j < n; j++) {
            struct t t;
            setup(&t);
            struct sy_jdoc req;
            assert_int_equal(sy_jdom_parse(&req, REQ, sizeof REQ - 1, &t.a, 0), 0);
            sy_resp_stream_free(&t.s);
            t.m.req = &req;
            sy_resp_stream_init(&t.s, &t.m);
            const char *name = (i + j) % 2 ? "p" : "ns__q";
            size_t cut[4] = {0, i, j, n};
            for (int k = 0; k < 3; k++) {
                struct sy_buf b;
                sy_buf_init(&b, 1 << 16);
                sy_buf_printf(&b, "{\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,");
                if (!k)
                    sy_buf_printf(&b, "\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"%s\",", name);
                else
                    sy_buf_printf(&b, "\"function\":{");
                SY_BUF_LIT(&b, "\"arguments\":\"");
                sy_buf_json_escape(&b, ARGS + cut[k], cut[k + 1] - cut[k]);
                SY_BUF_LIT(&b, "\"}}]},\"finish_reason\":null}]}");
                assert_int_equal(sy_resp_stream_chunk(&t.s, b.p, b.len, &t.out), 0);
                sy_buf_free(&b);
            }
            feed(&t, CH("{}", "\"tool_calls\""));
            assert_int_equal(feed(&t, "[DONE]"), SY_DONE);
            struct acc c;
            check(&t, &c, "response.completed");
            assert_int_equal(c.items, 1);
            assert_string_equal(c.kinds[0], "custom_tool_call");
            assert_string_equal(c.done_text[0], WANT);
            const char *out = resp_raw(&t, &c, "output");
            assert_non_null(
                strstr(out, (i + j) % 2 ? "\"name\":\"p\",\"input\"" : "\"name\":\"q\",\"namespace\":\"ns\""));
            done(&t);
        }
}

static void out_cap(void **st)
{
    (void)st;
    struct t t;
    setup(&t);
    struct sy_buf small;
    sy_buf_init(&small, 100);
    assert_int_equal(sy_resp_stream_chunk(&t.s, CH("{\"content\":\"x\"}", "null"),
                                          strlen(CH("{\"content\":\"x\"}", "null")), &small),
                     SY_ENOSPC);
    sy_buf_free(&small);
    done(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(text_stream),
        cmocka_unit_test(tool_stream),
        cmocka_unit_test(same_index_new_id),
        cmocka_unit_test(reasoning_stream),
        cmocka_unit_test(incomplete_stream),
        cmocka_unit_test(error_stream),
        cmocka_unit_test(utf8_stream),
        cmocka_unit_test(out_cap),
        cmocka_unit_test(custom_split_everywhere),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
