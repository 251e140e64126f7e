/* test_request.c - the Responses request -> chat request translation
 * (src/responses/request.c, sy_resp_to_openai): golden files plus direct
 * checks of each mapping rule, the errors and the caps.
 *
 * Golden layout ($SY_GOLDEN_DIR, id_seed "0123456789abcdef0123456789abcdef"):
 *
 *   file                    content
 *   req_NAME.json           the Responses request (NAME without dots)
 *   req_NAME.prior.json     optional: the stored conversation (prior)
 *   req_NAME.chat.json      expected chat request, or
 *   req_NAME.err            expected error: "<status> <param> <message>"
 *   req_NAME.items.json     expected input items (checked when the file exists)
 *
 * Expected files hold the output followed by one newline; the comparison is
 * byte for byte. With SY_GOLDEN_UPDATE=1 in the environment the expected files
 * are (re)written instead (items only for cases without an error).
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "core/errors.h"
#include "responses/responses.h"

#define SEED "0123456789abcdef0123456789abcdef"

static int update;

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long l = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)l + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)l, f), (size_t)l);
    p[l] = 0;
    fclose(f);
    *n = (size_t)l;
    return p;
}

static void spit(const char *path, const char *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fwrite("\n", 1, 1, f), 1);
    fclose(f);
}

/* got + "\n" against the file (or written to it when updating). */
static void expect_file(const char *path, const char *got, size_t n)
{
    if (update) {
        spit(path, got, n);
        return;
    }
    size_t en;
    char *exp = slurp(path, &en);
    if (!exp)
        fail_msg("missing %s", path);
    if (en != n + 1 || memcmp(exp, got, n) || exp[n] != '\n') {
        fprintf(stderr, "--- %s\n--- expected\n%s--- got\n%.*s\n", path, exp, (int)n, got);
        fail_msg("%s differs", path);
    }
    free(exp);
}

/* p[0..n) parses (strictly) as one JSON value of type want. */
static void check_json(const char *p, size_t n, json_type want)
{
    json_tokener *t = json_tokener_new();
    json_tokener_set_flags(t, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = json_tokener_parse_ex(t, p, (int)n);
    if (json_tokener_get_error(t) != json_tokener_success || json_tokener_get_parse_end(t) != n ||
        !json_object_is_type(o, want))
        fail_msg("not valid JSON of the expected type: %.*s", (int)n, p);
    json_object_put(o);
    json_tokener_free(t);
}

struct run {
    struct sy_arena a;
    struct sy_buf out, items;
    struct sy_xerr e;
    int rc;
};

/* Translates req (with prior, may be NULL) into r; checks the invariants. */
static int run_cap(struct run *r, const char *req, size_t n, const char *prior, size_t cap, int want_items)
{
    sy_arena_init(&r->a);
    sy_buf_init(&r->out, cap);
    sy_buf_init(&r->items, cap);
    memset(&r->e, 0, sizeof r->e);
    struct sy_jdoc d;
    assert_int_equal(sy_jdom_parse(&d, req, n, &r->a, 0), 0);
    r->rc = sy_resp_to_openai(&d, prior, prior ? strlen(prior) : 0, SEED, &r->a, &r->out, want_items ? &r->items : NULL,
                              &r->e);
    if (r->rc == 0) {
        check_json(r->out.p, r->out.len, json_type_object);
        if (want_items)
            check_json(r->items.p, r->items.len, json_type_array);
    } else {
        assert_true(r->rc == SY_EINVAL || r->rc == SY_ENOSPC);
        assert_int_equal(r->out.len, 0);
        assert_int_equal(r->items.len, 0);
        assert_true(r->e.message[0]);
        assert_string_equal(r->e.type, "invalid_request_error");
        assert_int_equal(r->e.status, r->rc == SY_EINVAL ? 400 : 413);
    }
    return r->rc;
}

static int run(struct run *r, const char *req, const char *prior)
{
    return run_cap(r, req, strlen(req), prior, 1 << 20, 1);
}

static void done(struct run *r)
{
    sy_buf_free(&r->out);
    sy_buf_free(&r->items);
    sy_arena_free(&r->a);
}

/* The chat request is exactly `want`. */
static void expect_chat(const char *req, const char *prior, const char *want)
{
    struct run r;
    assert_int_equal(run(&r, req, prior), 0);
    assert_string_equal(r.out.p, want);
    done(&r);
}

/* 400 with this param and a message containing `msg`. */
static void expect_400(const char *req, const char *param, const char *msg)
{
    struct run r;
    if (run(&r, req, NULL) != SY_EINVAL)
        fail_msg("accepted: %s -> %s", req, r.out.p ? r.out.p : "");
    assert_string_equal(r.e.param, param);
    if (!strstr(r.e.message, msg))
        fail_msg("message '%s' lacks '%s'", r.e.message, msg);
    done(&r);
}

/* ---- direct checks ---------------------------------------------------------- */

static void string_input(void **st)
{
    (void)st;
    struct run r;
    assert_int_equal(run(&r, "{\"model\":\"m\",\"input\":\"Hi\"}", NULL), 0);
    assert_string_equal(r.out.p, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
    assert_string_equal(r.items.p, "[{\"type\":\"message\",\"id\":\"msg_" SEED "_i0\",\"role\":\"user\",\"content\":"
                                   "[{\"type\":\"input_text\",\"text\":\"Hi\"}]}]");
    done(&r);
    /* items NULL is fine */
    assert_int_equal(run_cap(&r, "{\"model\":\"m\",\"input\":\"Hi\"}", 26, NULL, 1 << 20, 0), 0);
    done(&r);
}

static void messages_with_parts(void **st)
{
    (void)st;
    expect_chat(
        "{\"model\":\"m\",\"input\":[{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\","
        "\"text\":\"a\"},\"b\",{\"type\":\"output_text\",\"text\":\"c\"}]}]}",
        NULL,
        "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
        "{\"type\":\"text\",\"text\":\"b\"},{\"type\":\"text\",\"text\":\"c\"}]}]}");
    /* developer -> system, texts joined "\n"; assistant texts joined "", refusal as text */
    expect_chat("{\"model\":\"m\",\"input\":[{\"role\":\"developer\",\"content\":[{\"type\":\"input_text\",\"text\":"
                "\"x\"},{\"type\":\"input_text\",\"text\":\"y\"}]},{\"role\":\"assistant\",\"content\":[{\"type\":"
                "\"output_text\",\"text\":\"p\"},{\"type\":\"refusal\",\"refusal\":\"q\"}]}]}",
                NULL,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"x\\ny\"},{\"role\":\"assistant\","
                "\"content\":\"pq\"}]}");
    /* content null: no message; only that -> 400 (nothing to send) */
    expect_400("{\"model\":\"m\",\"input\":[{\"role\":\"user\",\"content\":null}]}", "input", "no message");
    expect_400("{\"model\":\"m\",\"input\":[]}", "input", "no message");
    /* but instructions alone are something to send */
    expect_chat("{\"model\":\"m\",\"input\":[],\"instructions\":\"I\"}", NULL,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"I\"}]}");
}

static void images(void **st)
{
    (void)st;
    expect_chat("{\"model\":\"m\",\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_image\",\"image_url\":"
                "\"https://x/y.png\"},{\"type\":\"input_image\",\"image_url\":\"https://x/z.png\",\"detail\":\"low\"},"
                "{\"type\":\"input_image\",\"file_id\":\"file-1\"},{\"type\":\"input_file\",\"file_id\":\"file-2\","
                "\"file_data\":\"\"}]}]}",
                NULL,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":"
                "{\"url\":\"https://x/y.png\",\"detail\":\"auto\"}},{\"type\":\"image_url\",\"image_url\":{\"url\":"
                "\"https://x/z.png\",\"detail\":\"low\"}},{\"type\":\"file\",\"file\":{\"file_id\":\"file-1\"}},"
                "{\"type\":\"file\",\"file\":{\"file_id\":\"file-2\"}}]}]}");
    expect_400("{\"model\":\"m\",\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_image\"}]}]}", "input",
               "input_image needs an image_url or a file_id");
    expect_400("{\"model\":\"m\",\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_image\",\"image_url\":"
               "\"u\",\"detail\":3}]}]}",
               "input", "detail");
}

static void instructions(void **st)
{
    (void)st;
    expect_chat("{\"model\":\"m\",\"instructions\":\"Be nice.\",\"input\":\"Hi\"}", NULL,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"Be nice.\"},{\"role\":\"user\","
                "\"content\":\"Hi\"}]}");
    /* empty or null instructions: no system message (LiteLLM: falsy) */
    expect_chat("{\"model\":\"m\",\"instructions\":\"\",\"input\":\"Hi\"}", NULL,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
    expect_chat("{\"model\":\"m\",\"instructions\":null,\"input\":\"Hi\"}", NULL,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
    expect_400("{\"model\":\"m\",\"instructions\":[],\"input\":\"Hi\"}", "instructions", "instructions");
}

static void prior_history(void **st)
{
    (void)st;
    const char *prior = "[{\"type\":\"message\",\"id\":\"msg_a\",\"role\":\"user\",\"content\":[{\"type\":"
                        "\"input_text\",\"text\":\"Q1\"}]},{\"type\":\"message\",\"id\":\"msg_b\",\"status\":"
                        "\"completed\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"A1\","
                        "\"annotations\":[]}]}]";
    struct run r;
    assert_int_equal(run(&r, "{\"model\":\"m\",\"instructions\":\"S\",\"input\":\"Q2\"}", prior), 0);
    assert_string_equal(r.out.p, "{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"S\"},{\"role\":"
                                 "\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Q1\"}]},{\"role\":\"assistant\","
                                 "\"content\":\"A1\"},{\"role\":\"user\",\"content\":\"Q2\"}]}");
    /* items: this request's input only */
    assert_string_equal(r.items.p, "[{\"type\":\"message\",\"id\":\"msg_" SEED "_i0\",\"role\":\"user\",\"content\":"
                                   "[{\"type\":\"input_text\",\"text\":\"Q2\"}]}]");
    done(&r);
    /* an empty prior, "[]", and a prior that is not an array */
    expect_chat("{\"model\":\"m\",\"input\":\"x\"}", "[]",
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}");
    assert_int_equal(run(&r, "{\"model\":\"m\",\"input\":\"x\"}", "{\"a\":1}"), SY_EINVAL);
    assert_string_equal(r.e.param, "previous_response_id");
    done(&r);
    assert_int_equal(run(&r, "{\"model\":\"m\",\"input\":\"x\"}", "[1,"), SY_EINVAL);
    assert_string_equal(r.e.param, "previous_response_id");
    done(&r);
    assert_int_equal(run(&r, "{\"model\":\"m\",\"input\":\"x\"}", "[{\"type\":\"item_reference\"}]"), SY_EINVAL);
    assert_string_equal(r.e.param, "previous_response_id");
    done(&r);
}

static void function_call_round_trip(void **st)
{
    (void)st;
    struct run r;
    assert_int_equal(
        run(&r,
            "{\"model\":\"m\",\"input\":[{\"role\":\"user\",\"content\":\"w?\"},{\"type\":\"function_call\","
            "\"call_id\":\"c1\",\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}\"},{\"type\":"
            "\"function_call_output\",\"call_id\":\"c1\",\"output\":\"ok\"}]}",
            NULL),
        0);
    assert_string_equal(r.out.p, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"w?\"},{\"role\":"
                                 "\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
                                 "\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}\"}}]},{\"role\":\"tool\","
                                 "\"tool_call_id\":\"c1\",\"content\":\"ok\"}]}");
    assert_string_equal(r.items.p,
                        "[{\"type\":\"message\",\"id\":\"msg_" SEED "_i0\",\"role\":\"user\",\"content\":[{\"type\":"
                        "\"input_text\",\"text\":\"w?\"}]},{\"type\":\"function_call\",\"id\":\"fc_" SEED "_i1\","
                        "\"call_id\":\"c1\",\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}\"},{\"type\":"
                        "\"function_call_output\",\"id\":\"fco_" SEED "_i2\",\"call_id\":\"c1\",\"output\":\"ok\"}]");
    done(&r);
    /* a preceding assistant message takes the calls; a call without call_id uses its id */
    expect_chat("{\"model\":\"m\",\"input\":[{\"role\":\"assistant\",\"content\":\"t\"},{\"type\":\"function_call\","
                "\"id\":\"fc9\",\"name\":\"g\"}]}",
                NULL,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"assistant\",\"content\":\"t\",\"tool_calls\":[{\"id\":"
                "\"fc9\",\"type\":\"function\",\"function\":{\"name\":\"g\",\"arguments\":\"\"}}]}]}");
    /* a user message in between: two assistant messages */
    expect_chat(
        "{\"model\":\"m\",\"input\":[{\"type\":\"function_call\",\"call_id\":\"a\",\"name\":\"g\",\"arguments\":"
        "\"{}\"},{\"role\":\"user\",\"content\":\"u\"},{\"type\":\"function_call\",\"call_id\":\"b\",\"name\":"
        "\"g\",\"arguments\":\"{}\"}]}",
        NULL,
        "{\"model\":\"m\",\"messages\":[{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"a\","
        "\"type\":\"function\",\"function\":{\"name\":\"g\",\"arguments\":\"{}\"}}]},{\"role\":\"user\","
        "\"content\":\"u\"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"b\",\"type\":"
        "\"function\",\"function\":{\"name\":\"g\",\"arguments\":\"{}\"}}]}]}");
    expect_400("{\"model\":\"m\",\"input\":[{\"type\":\"function_call\",\"call_id\":5}]}", "input", "call_id");
}

static void tools_and_choice(void **st)
{
    (void)st;
    const char *pre = "{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"function\",\"name\":\"f\","
                      "\"parameters\":{\"type\":\"object\"},\"strict\":true}]";
    const char *chat = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":[{\"type\":"
                       "\"function\",\"function\":{\"name\":\"f\",\"description\":\"\",\"parameters\":{\"type\":"
                       "\"object\"},\"strict\":true}}]";
    static const char *const cases[][2] = {
        {"\"auto\"", "\"auto\""},
        {"\"none\"", "\"none\""},
        {"\"required\"", "\"required\""},
        {"{\"type\":\"function\",\"name\":\"f\"}", "{\"type\":\"function\",\"function\":{\"name\":\"f\"}}"},
        {"{\"type\":\"function\",\"function\":{\"name\":\"f\"}}",
         "{\"type\":\"function\",\"function\":{\"name\":\"f\"}}"},
        {"{\"type\":\"function\"}", "\"required\""},
        {"{\"type\":\"auto\"}", "\"auto\""},
        {"{\"type\":\"none\"}", "\"none\""},
        {"{\"type\":\"tool\"}", "\"required\""},
        {"{\"type\":\"allowed_tools\",\"mode\":\"required\",\"tools\":[]}", "\"required\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char req[512], want[512];
        snprintf(req, sizeof req, "%s,\"tool_choice\":%s,\"parallel_tool_calls\":false}", pre, cases[i][0]);
        snprintf(want, sizeof want, "%s,\"tool_choice\":%s,\"parallel_tool_calls\":false}", chat, cases[i][1]);
        expect_chat(req, NULL, want);
    }
    /* without tools: tool_choice and parallel_tool_calls are not sent */
    expect_chat("{\"model\":\"m\",\"input\":\"x\",\"tool_choice\":\"auto\",\"parallel_tool_calls\":true,\"tools\":[]}",
                NULL, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}");
    /* a tool_choice naming a hosted tool (dropped, or web search chat cannot force): auto */
    expect_chat("{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"function\",\"name\":\"f\"}],\"tool_choice\":"
                "{\"type\":\"file_search\"}}",
                NULL,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":[{\"type\":"
                "\"function\",\"function\":{\"name\":\"f\",\"description\":\"\",\"parameters\":{\"type\":"
                "\"object\"},\"strict\":false}}],\"tool_choice\":\"auto\"}");
    expect_400("{\"model\":\"m\",\"input\":\"x\",\"tool_choice\":3}", "tool_choice", "tool_choice");
    expect_400("{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"custom\"}]}", "tools", "tools[0].name");
    expect_400("{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"name\":\"f\"}]}", "tools", "tools[0].type");
    expect_400("{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"function\"}]}", "tools", "tools[0].name");
    expect_400("{\"model\":\"m\",\"input\":\"x\",\"tools\":{}}", "tools", "tools");
    expect_400("{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"function\",\"name\":\"f\",\"parameters\":[]}]}",
               "tools", "parameters");
}

/* sy_resp_to_chat with web search on or off: the chat request and the report. */
static char *tx_run(const char *req, int ws, struct sy_resp_tx *tx, struct sy_arena *a)
{
    struct sy_jdoc d;
    assert_int_equal(sy_jdom_parse(&d, req, strlen(req), a, 0), 0);
    struct sy_buf out;
    sy_buf_init(&out, 1 << 20);
    struct sy_xerr e = {0};
    memset(tx, 0x55, sizeof *tx); /* every field is the translation's to set */
    tx->web_search = ws;
    int rc = sy_resp_to_chat(&d, NULL, 0, SEED, tx, a, &out, NULL, &e);
    if (rc)
        fail_msg("%s: %s", req, e.message);
    check_json(out.p, out.len, json_type_object);
    char *r = sy_arena_strndup(a, out.p, out.len);
    sy_buf_free(&out);
    return r;
}

static void hosted_tools(void **st)
{
    (void)st;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_resp_tx tx;
    const char *req =
        "{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"web_search_preview_2025_03_11\","
        "\"search_context_size\":\"high\",\"user_location\":{\"type\":\"approximate\",\"country\":\"GB\","
        "\"timezone\":\"Europe/London\",\"extra\":1}},{\"type\":\"tool_search\"},{\"type\":\"image_generation\"},"
        "{\"type\":\"tool_search\"},{\"type\":\"file_search\",\"vector_store_ids\":[\"v\"]},{\"type\":\"mcp\"},"
        "{\"type\":\"computer_use_preview\"},{\"type\":\"code_interpreter\"},{\"type\":\"local_shell\"}]}";
    /* off: dropped, each type named once, in order; no tools at all remain */
    char *chat = tx_run(req, 0, &tx, &a);
    assert_string_equal(chat, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}");
    assert_string_equal(tx.dropped, "web_search_preview_2025_03_11,tool_search,image_generation,file_search,mcp,"
                                    "computer_use_preview,code_interpreter,local_shell");
    assert_int_equal(tx.had_web_search, 1);
    /* on: web_search_options in chat's shape (user_location nested under approximate) */
    chat = tx_run(req, 1, &tx, &a);
    assert_string_equal(chat, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
                              "\"web_search_options\":{\"search_context_size\":\"high\",\"user_location\":{\"type\":"
                              "\"approximate\",\"approximate\":{\"country\":\"GB\",\"timezone\":\"Europe/London\"}}}}");
    assert_string_equal(
        tx.dropped, "tool_search,image_generation,file_search,mcp,computer_use_preview,code_interpreter,local_shell");
    /* a user_location already in chat's shape is kept as it is; a bare web_search is {} */
    chat = tx_run("{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"web_search\",\"user_location\":"
                  "{\"type\":\"approximate\",\"approximate\":{\"city\":\"Oslo\"}}}]}",
                  1, &tx, &a);
    assert_non_null(strstr(chat, "\"web_search_options\":{\"user_location\":{\"type\":\"approximate\",\"approximate\":"
                                 "{\"city\":\"Oslo\"}}}"));
    assert_string_equal(tx.dropped, "");
    chat = tx_run("{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"web_search\"}]}", 1, &tx, &a);
    assert_non_null(strstr(chat, "\"web_search_options\":{}"));
    /* what counts as web search */
    static const char *const types[][2] = {
        {"web_search", "1"},           {"web_search_preview", "1"}, {"web_search_2025_08_26", "1"},
        {"web_search_preview_x", "0"}, {"web_search_call", "0"},    {"web_searchx", "0"},
        {"web_\\u0073earch", "0"},     {"Web_search", "0"},         {"web_search_", "0"},
    };
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        char r[256];
        snprintf(r, sizeof r, "{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"%s\"}]}", types[i][0]);
        struct sy_jdoc d;
        assert_int_equal(sy_jdom_parse(&d, r, strlen(r), &a, 0), 0);
        if (sy_resp_wants_web_search(&d) != (types[i][1][0] == '1'))
            fail_msg("web search? %s", types[i][0]);
        tx_run(r, 1, &tx, &a);
        assert_int_equal(tx.had_web_search, types[i][1][0] == '1');
        assert_int_equal(tx.dropped[0] != 0, types[i][1][0] == '0');
    }
    /* the report is a header value: odd types are dropped unnamed, the list is bounded */
    tx_run("{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"a\\r\\nx-evil: 1\"},{\"type\":\"b c\"},"
           "{\"type\":\"\"},{\"type\":\"\\u00e9\"},{\"type\":\"ok.v1-x\"}]}",
           0, &tx, &a);
    assert_string_equal(tx.dropped, "ok.v1-x");
    struct sy_buf many;
    sy_buf_init(&many, 1 << 20);
    SY_BUF_LIT(&many, "{\"model\":\"m\",\"input\":\"x\",\"tools\":[");
    for (int i = 0; i < 500; i++)
        sy_buf_printf(&many, "%s{\"type\":\"hosted_%03d\"}", i ? "," : "", i);
    SY_BUF_LIT(&many, "]}");
    tx_run(many.p, 0, &tx, &a);
    assert_true(strlen(tx.dropped) < sizeof tx.dropped);
    assert_int_equal(strncmp(tx.dropped, "hosted_000,hosted_001,", 22), 0);
    assert_true(tx.dropped[strlen(tx.dropped) - 1] != ',');
    sy_buf_free(&many);
    /* sy_resp_to_openai: the same request, web search off */
    expect_chat("{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"web_search\"},{\"type\":\"function\","
                "\"name\":\"f\"}],\"tool_choice\":{\"type\":\"web_search\"}}",
                NULL,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":[{\"type\":"
                "\"function\",\"function\":{\"name\":\"f\",\"description\":\"\",\"parameters\":{\"type\":"
                "\"object\"},\"strict\":false}}],\"tool_choice\":\"auto\"}");
    sy_arena_free(&a);
}

/* namespace and custom tools, and their calls in the history */
static void namespace_and_custom(void **st)
{
    (void)st;
    /* escaped names are decoded before they are joined; "functions" and "" keep bare names */
    expect_chat("{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"namespace\",\"name\":\"n\\u0073\","
                "\"tools\":[{\"type\":\"function\",\"name\":\"\\u0066\"}]},{\"type\":\"namespace\",\"name\":\"\","
                "\"tools\":[{\"type\":\"function\",\"name\":\"g\"}]},{\"type\":\"namespace\",\"name\":\"functions\","
                "\"tools\":[]}],\"tool_choice\":{\"type\":\"custom\",\"name\":\"z\"}}",
                NULL,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":[{\"type\":"
                "\"function\",\"function\":{\"name\":\"ns__f\",\"description\":\"\",\"parameters\":{\"type\":"
                "\"object\"},\"strict\":false}},{\"type\":\"function\",\"function\":{\"name\":\"g\",\"description\":"
                "\"\",\"parameters\":{\"type\":\"object\"},\"strict\":false}}],\"tool_choice\":{\"type\":\"function\","
                "\"function\":{\"name\":\"z\"}}}");
    /* an empty namespace alone: no tools, so no tool_choice either */
    expect_chat("{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"namespace\",\"name\":\"n\",\"tools\":[]}],"
                "\"tool_choice\":\"required\"}",
                NULL, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}");
    /* a custom tool: one required string "input"; the grammar only when there is a definition */
    expect_chat(
        "{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"custom\",\"name\":\"p\",\"description\":"
        "\"d\",\"format\":{\"type\":\"grammar\",\"syntax\":\"regex\",\"definition\":\"^a+$\"}},{\"type\":"
        "\"custom\",\"name\":\"q\",\"format\":{\"type\":\"text\"}}]}",
        NULL,
        "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":[{\"type\":"
        "\"function\",\"function\":{\"name\":\"p\",\"description\":\"d\\n\\nFormat:\\n```regex\\n^a+$\\n```\","
        "\"parameters\":{\"type\":\"object\",\"properties\":{\"input\":{\"type\":\"string\",\"description\":"
        "\"The p input, in the format described above\"}},\"required\":[\"input\"]},\"strict\":false}},{\"type\":"
        "\"function\",\"function\":{\"name\":\"q\",\"description\":\"\",\"parameters\":{\"type\":\"object\","
        "\"properties\":{\"input\":{\"type\":\"string\",\"description\":\"The q input, in the format described "
        "above\"}},\"required\":[\"input\"]},\"strict\":false}}]}");
    /* history: a namespaced call, a custom call (input escaped again inside the arguments), its
     * output; hosted tools' items dropped */
    expect_chat("{\"model\":\"m\",\"input\":[{\"type\":\"function_call\",\"call_id\":\"a\",\"name\":\"f\","
                "\"namespace\":\"ns\",\"arguments\":\"{}\"},{\"type\":\"custom_tool_call\",\"call_id\":\"b\",\"name\":"
                "\"p\",\"namespace\":\"functions\",\"input\":\"l1\\n\\\"q\\\"\"},{\"type\":\"custom_tool_call\","
                "\"call_id\":\"c\",\"name\":\"p\"},{\"type\":\"function_call_output\",\"call_id\":\"a\",\"output\":"
                "\"o1\"},{\"type\":\"custom_tool_call_output\",\"call_id\":\"b\",\"output\":[{\"type\":\"input_text\","
                "\"text\":\"o2\"}]},{\"type\":\"tool_search_call\"},{\"type\":\"tool_search_output\"},{\"type\":"
                "\"image_generation_call\",\"result\":\"AAAA\"},{\"type\":\"file_search_call\"},{\"type\":"
                "\"code_interpreter_call\"},{\"type\":\"web_search_call\"}]}",
                NULL,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"a\","
                "\"type\":\"function\",\"function\":{\"name\":\"ns__f\",\"arguments\":\"{}\"}},{\"id\":\"b\",\"type\":"
                "\"function\",\"function\":{\"name\":\"p\",\"arguments\":\"{\\\"input\\\":"
                "\\\"l1\\\\n\\\\\\\"q\\\\\\\"\\\"}\"}},"
                "{\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"p\",\"arguments\":\"{\\\"input\\\":"
                "\\\"\\\"}\"}}]},"
                "{\"role\":\"tool\",\"tool_call_id\":\"a\",\"content\":\"o1\"},{\"role\":\"tool\",\"tool_call_id\":"
                "\"b\",\"content\":\"o2\"}]}");
    /* malformed */
    expect_400("{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"namespace\",\"name\":\"n\"}]}", "tools",
               "tools[0].tools");
    expect_400("{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"namespace\",\"name\":5,\"tools\":[]}]}",
               "tools", "tools[0].name");
    expect_400("{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"namespace\",\"name\":\"n\",\"tools\":"
               "[{\"type\":\"namespace\",\"name\":\"m\",\"tools\":[]}]}]}",
               "tools", "tools[0].tools[0].type");
    expect_400("{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"namespace\",\"name\":\"n\",\"tools\":"
               "[1]}]}",
               "tools", "tools[0].tools[0].type");
    expect_400("{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"namespace\",\"name\":\"n\",\"tools\":"
               "[{\"type\":\"function\",\"name\":\"f\",\"parameters\":3}]}]}",
               "tools", "tools[0].tools[0].parameters");
    expect_400("{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"custom\",\"name\":\"p\",\"format\":[]}]}",
               "tools", "tools[0].format");
    expect_400("{\"model\":\"m\",\"input\":[{\"type\":\"custom_tool_call\",\"call_id\":\"c\",\"name\":\"p\","
               "\"input\":{}}]}",
               "input", "input[0].input");
    expect_400("{\"model\":\"m\",\"input\":[{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"p\","
               "\"namespace\":[]}]}",
               "input", "input[0].namespace");
}

/* A flattened name past 64 characters (Codex's MCP namespaces): cut as LiteLLM
 * cuts tool names, the same in the tools and in the history, and mapped back
 * to name + namespace in the answer. */
static void long_names(void **st)
{
    (void)st;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_resp_tx tx;
    const char *ns = "mcp__a_rather_long_server_name_for_tests__";
    const char *tool = "create_pull_request_review_comment_thread";
    char req[1024];
    snprintf(req, sizeof req,
             "{\"model\":\"m\",\"input\":[{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"%s\","
             "\"namespace\":\"%s\",\"arguments\":\"{}\"}],\"tools\":[{\"type\":\"namespace\",\"name\":\"%s\","
             "\"tools\":[{\"type\":\"function\",\"name\":\"%s\"}]}]}",
             tool, ns, ns, tool);
    char *chat = tx_run(req, 0, &tx, &a);
    struct sy_jdoc d;
    assert_int_equal(sy_jdom_parse(&d, chat, strlen(chat), &a, 0), 0);
    uint32_t tn = sy_jdom_get(&d, sy_jdom_get(&d, sy_jdom_first(&d, sy_jdom_get(&d, 0, "tools")), "function"), "name");
    size_t nl;
    const char *name = sy_jdom_str(&d, tn, &a, &nl);
    assert_int_equal(nl, 64);
    char full[256];
    snprintf(full, sizeof full, "%s__%s", ns, tool);
    assert_memory_equal(name, full, 55);
    assert_int_equal(name[55], '_');
    for (int i = 56; i < 64; i++)
        assert_true((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f'));
    /* the history's call got the same name */
    char want[128];
    snprintf(want, sizeof want, "\"name\":\"%s\"", name);
    assert_non_null(strstr(strstr(chat, "\"messages\""), want));
    assert_true(strstr(chat, want) != strstr(strrchr(chat, '['), want)); /* twice: history and tools */
    /* the answer: the cut name back to the tool and its namespace */
    char ans[512];
    snprintf(ans, sizeof ans,
             "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{"
             "\"id\":\"t\",\"type\":\"function\",\"function\":{\"name\":\"%s\",\"arguments\":\"{}\"}}]},"
             "\"finish_reason\":\"tool_calls\"}]}",
             name);
    struct sy_jdoc rq;
    assert_int_equal(sy_jdom_parse(&rq, req, strlen(req), &a, 0), 0);
    struct sy_resp_meta m = {.id = "resp_x", .model = "m", .id_seed = SEED, .req = &rq};
    struct sy_buf out;
    sy_buf_init(&out, 1 << 20);
    assert_int_equal(sy_resp_from_openai(ans, strlen(ans), &m, &a, &out), 0);
    snprintf(want, sizeof want, "\"name\":\"%s\",\"namespace\":\"%s\"", tool, ns);
    assert_non_null(strstr(out.p, want));
    sy_buf_free(&out);
    /* a top-level function named past 64 characters is cut the same way */
    char big[300];
    snprintf(big, sizeof big, "{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"function\",\"name\":\"%s%s\"}]}",
             ns, tool);
    chat = tx_run(big, 0, &tx, &a);
    assert_non_null(strstr(chat, "\"name\":\"mcp__a_rather_long_server_name_for_tests__create_pull_r_"));
    sy_arena_free(&a);
}

static void text_format(void **st)
{
    (void)st;
    expect_chat("{\"model\":\"m\",\"input\":\"x\",\"text\":{\"format\":{\"type\":\"json_schema\",\"name\":\"n\","
                "\"schema\":{\"type\":\"object\"},\"strict\":true}}}",
                NULL,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"response_format\":{\"type\":"
                "\"json_schema\",\"json_schema\":{\"name\":\"n\",\"schema\":{\"type\":\"object\"},\"strict\":true}}}");
    /* LiteLLM's defaults */
    expect_chat("{\"model\":\"m\",\"input\":\"x\",\"text\":{\"format\":{\"type\":\"json_schema\"}}}", NULL,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"response_format\":{\"type\":"
                "\"json_schema\",\"json_schema\":{\"name\":\"response_schema\",\"schema\":{},\"strict\":false}}}");
    expect_chat("{\"model\":\"m\",\"input\":\"x\",\"text\":{\"format\":{\"type\":\"json_object\"}}}", NULL,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"response_format\":{\"type\":"
                "\"json_object\"}}");
    expect_chat("{\"model\":\"m\",\"input\":\"x\",\"text\":{\"format\":{\"type\":\"text\"}}}", NULL,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}");
    expect_400("{\"model\":\"m\",\"input\":\"x\",\"text\":{\"format\":{\"type\":\"yaml\"}}}", "text",
               "text.format.type");
    expect_400("{\"model\":\"m\",\"input\":\"x\",\"text\":\"json\"}", "text", "text");
}

static void reasoning_and_scalars(void **st)
{
    (void)st;
    expect_chat("{\"model\":\"m\",\"input\":\"x\",\"reasoning\":{\"effort\":\"medium\",\"summary\":\"auto\"}}", NULL,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"reasoning_effort\":"
                "\"medium\"}");
    expect_chat("{\"model\":\"m\",\"input\":\"x\",\"reasoning\":{\"effort\":null}}", NULL,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}");
    expect_400("{\"model\":\"m\",\"input\":\"x\",\"reasoning\":{\"effort\":1}}", "reasoning", "reasoning.effort");
    expect_chat("{\"model\":\"m\",\"input\":\"x\",\"stream\":true,\"max_output_tokens\":5,\"temperature\":1.5,"
                "\"top_p\":1,\"user\":\"u\",\"metadata\":{\"a\":\"b\"},\"seed\":3,\"top_logprobs\":2,\"service_tier\":"
                "\"auto\",\"store\":true,\"truncation\":\"disabled\"}",
                NULL,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"temperature\":1.5,\"top_p\":1,"
                "\"max_tokens\":5,\"user\":\"u\",\"metadata\":{\"a\":\"b\"},\"seed\":3,\"logprobs\":true,"
                "\"top_logprobs\":2,\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
    expect_chat("{\"model\":\"m\",\"input\":\"x\",\"stream\":false}", NULL,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stream\":false}");
    expect_400("{\"model\":\"m\",\"input\":\"x\",\"stream\":\"yes\"}", "stream", "stream");
    expect_400("{\"model\":\"m\",\"input\":\"x\",\"max_output_tokens\":1.5}", "max_output_tokens", "integer");
    expect_400("{\"model\":\"m\",\"input\":\"x\",\"temperature\":\"hot\"}", "temperature", "number");
    expect_400("{\"model\":\"m\",\"input\":\"x\",\"metadata\":[]}", "metadata", "object");
    expect_400("{\"model\":\"m\",\"input\":\"x\",\"parallel_tool_calls\":1}", "parallel_tool_calls", "boolean");
}

static void errors(void **st)
{
    (void)st;
    expect_400("{\"model\":\"m\"}", "input", "Missing required parameter: 'input'");
    expect_400("{\"model\":\"m\",\"input\":null}", "input", "Missing required parameter: 'input'");
    expect_400("{\"model\":\"m\",\"input\":5}", "input", "Invalid type for 'input'");
    expect_400("{\"model\":\"m\",\"input\":{\"role\":\"user\"}}", "input", "Invalid type for 'input'");
    expect_400("{\"input\":\"x\"}", "model", "Missing required parameter: 'model'");
    expect_400("{\"model\":1,\"input\":\"x\"}", "model", "Invalid type for 'model'");
    expect_400("[1]", "", "JSON object");
    expect_400("\"s\"", "", "JSON object");
    expect_400("{\"model\":\"m\",\"input\":[\"x\"]}", "input", "'input[0]'");
    expect_400("{\"model\":\"m\",\"input\":[{\"role\":\"tool\",\"content\":\"x\"}]}", "input", "input[0].role");
    expect_400("{\"model\":\"m\",\"input\":[{\"role\":\"user\",\"content\":3}]}", "input", "input[0].content");
    expect_400("{\"model\":\"m\",\"input\":[{\"role\":\"user\",\"content\":[3]}]}", "input", "input[0].content[0]");
    expect_400("{\"model\":\"m\",\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":[]}]}]}",
               "input", "input[0].content[0].text");
    expect_400("{\"model\":\"m\",\"input\":[{\"role\":\"user\",\"content\":\"x\"},{\"type\":\"item_reference\","
               "\"id\":\"msg_1\"}]}",
               "input", "'item_reference' (input[1]) need a deployment with OpenAI's Responses API");
    expect_400("{\"model\":\"m\",\"input\":[{\"type\":\"computer_call_output\"}]}", "input", "computer_call_output");
    expect_400("{\"model\":\"m\",\"input\":[{\"type\":7}]}", "input", "input[0].type");
    /* caps: too small -> 413, nothing left behind */
    struct run r;
    const char *req = "{\"model\":\"m\",\"input\":\"a long enough input for a tiny cap\"}";
    for (size_t cap = 1; cap < 120; cap += 7) {
        int rc = run_cap(&r, req, strlen(req), NULL, cap, 1);
        assert_true(rc == 0 || rc == SY_ENOSPC);
        if (rc)
            assert_int_equal(r.e.status, 413);
        done(&r);
    }
}

static void escaped_and_duplicate_keys(void **st)
{
    (void)st;
    struct run r;
    /* escaped member names are matched decoded; repeated keys: the last counts */
    assert_int_equal(
        run(&r,
            "{\"m\\u006fdel\":\"m1\",\"model\":\"m2\",\"input\":\"first\",\"\\u0069nput\":[{\"r\\u006fle\":"
            "\"user\",\"content\":\"a\",\"content\":\"b\",\"id\":\"x\",\"id\":\"keep\"}]}",
            NULL),
        0);
    assert_string_equal(r.out.p, "{\"model\":\"m2\",\"messages\":[{\"role\":\"user\",\"content\":\"b\"}]}");
    /* the item keeps the last id and content; keys come out canonical */
    assert_string_equal(r.items.p, "[{\"type\":\"message\",\"id\":\"keep\",\"role\":\"user\",\"content\":[{\"type\":"
                                   "\"input_text\",\"text\":\"b\"}]}]");
    done(&r);
    /* escapes inside values are copied as they are */
    expect_chat(
        "{\"model\":\"m\",\"input\":\"a\\\"b\\\\c\\n\\u00e9\\ud83d\\ude00\"}", NULL,
        "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"a\\\"b\\\\c\\n\\u00e9\\ud83d\\ude00\"}]}");
    /* an escaped type value still selects the item kind */
    expect_chat("{\"model\":\"m\",\"input\":[{\"type\":\"function_c\\u0061ll\",\"call_id\":\"c\",\"name\":\"f\","
                "\"arguments\":\"{}\"}]}",
                NULL,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c\","
                "\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}]}");
}

static void utf8_text(void **st)
{
    (void)st;
    struct run r;
    const char *req =
        "{\"model\":\"m\",\"instructions\":\"日本語\",\"input\":[{\"role\":\"user\",\"content\":[{\"type\":"
        "\"input_text\",\"text\":\"Grüße 😀\"},{\"type\":\"input_text\",\"text\":\"Ωμέγα\"}]},{\"role\":"
        "\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"Привет \"},{\"type\":"
        "\"output_text\",\"text\":\"мир ✓\"}]}]}";
    assert_int_equal(run(&r, req, NULL), 0);
    assert_string_equal(r.out.p,
                        "{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"日本語\"},{\"role\":"
                        "\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Grüße 😀\"},{\"type\":\"text\","
                        "\"text\":\"Ωμέγα\"}]},{\"role\":\"assistant\",\"content\":\"Привет мир ✓\"}]}");
    done(&r);
}

/* ---- golden files ------------------------------------------------------------ */

static void golden(void **st)
{
    (void)st;
    const char *dir = getenv("SY_GOLDEN_DIR");
    assert_non_null(dir);
    DIR *dh = opendir(dir);
    assert_non_null(dh);
    struct dirent *de;
    int cases = 0;
    while ((de = readdir(dh))) {
        const char *n = de->d_name;
        size_t l = strlen(n);
        if (strncmp(n, "req_", 4) || l < 9 || strcmp(n + l - 5, ".json") || memchr(n, '.', l - 5))
            continue;
        char base[512], path[1024];
        snprintf(base, sizeof base, "%s/%.*s", dir, (int)(l - 5), n);
        size_t rn, pn = 0;
        snprintf(path, sizeof path, "%s.json", base);
        char *req = slurp(path, &rn);
        assert_non_null(req);
        snprintf(path, sizeof path, "%s.prior.json", base);
        char *prior = slurp(path, &pn);
        if (prior)
            while (pn && (prior[pn - 1] == '\n' || prior[pn - 1] == ' '))
                prior[--pn] = 0;
        struct run r;
        int rc = run_cap(&r, req, rn, prior, 1 << 20, 1);
        char errpath[1024];
        snprintf(errpath, sizeof errpath, "%s.err", base);
        FILE *ef = fopen(errpath, "rb");
        if (ef)
            fclose(ef);
        if (rc || ef) {
            char got[1200];
            int gl = snprintf(got, sizeof got, "%d %s %s", r.e.status, r.e.param[0] ? r.e.param : "-", r.e.message);
            if (!rc)
                fail_msg("%s: accepted, expected an error", n);
            expect_file(errpath, got, (size_t)gl);
        } else {
            snprintf(path, sizeof path, "%s.chat.json", base);
            expect_file(path, r.out.p, r.out.len);
            snprintf(path, sizeof path, "%s.items.json", base);
            FILE *f = fopen(path, "rb");
            if (f)
                fclose(f);
            if (f || update)
                expect_file(path, r.items.p, r.items.len);
        }
        done(&r);
        free(req);
        free(prior);
        cases++;
    }
    closedir(dh);
    print_message("responses request golden cases: %d\n", cases);
    assert_true(cases >= 6);
}

int main(void)
{
    const char *u = getenv("SY_GOLDEN_UPDATE");
    update = u && !strcmp(u, "1");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(string_input),
        cmocka_unit_test(messages_with_parts),
        cmocka_unit_test(images),
        cmocka_unit_test(instructions),
        cmocka_unit_test(prior_history),
        cmocka_unit_test(function_call_round_trip),
        cmocka_unit_test(tools_and_choice),
        cmocka_unit_test(hosted_tools),
        cmocka_unit_test(namespace_and_custom),
        cmocka_unit_test(long_names),
        cmocka_unit_test(text_format),
        cmocka_unit_test(reasoning_and_scalars),
        cmocka_unit_test(errors),
        cmocka_unit_test(escaped_and_duplicate_keys),
        cmocka_unit_test(utf8_text),
        cmocka_unit_test(golden),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
