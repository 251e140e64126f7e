/* test_services_a.c - the service kinds generic_guardrail_api,
 * openai_moderation, presidio and lakera_v2 (src/guardrails/services/) without
 * a network: open() with good and bad settings, the exact request (URL,
 * headers, body bytes) for chat-shaped inputs built by hand, and every answer
 * mapped: allow, block (LiteLLM's exact message), mask, garbage, 500, and the
 * multi-step exchange of presidio.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "guardrails/guardrail.h"

/* ---- fixtures ---- */

struct fx {
    struct sy_guard g;
    struct sy_ginput in;
    struct sy_gseg seg[16];
    struct sy_gtool tool[4];
};

/* Open kind `kind` with litellm_params JSON `params`; 0 or -1 (err). */
static int open_kind(struct fx *f, const char *kind, const char *params, const struct sy_genv *env, char *err,
                     size_t errlen)
{
    memset(&f->g, 0, sizeof f->g);
    f->g.ops = sy_guard_kind(kind);
    assert_non_null(f->g.ops);
    f->g.name = "my-guard";
    struct json_object *p = json_tokener_parse(params);
    assert_non_null(p);
    err[0] = 0;
    int rc = f->g.ops->open(&f->g, p, env, err, errlen);
    json_object_put(p);
    return rc;
}

static void open_ok(struct fx *f, const char *kind, const char *params)
{
    char err[512];
    int rc = open_kind(f, kind, params, NULL, err, sizeof err);
    if (rc)
        fprintf(stderr, "open: %s\n", err);
    assert_int_equal(rc, 0);
}

static void close_kind(struct fx *f)
{
    if (f->g.ops->close)
        f->g.ops->close(&f->g);
}

/* Texts of body: each texts[i] (NULL-terminated list) is found as a JSON
 * string after the previous one; role / msg from the arrays. */
static void input(struct fx *f, enum sy_gdialect dl, unsigned phase, const char *body, const char *const *texts,
                  const unsigned char *roles, const int *msgs)
{
    memset(&f->in, 0, sizeof f->in);
    f->in.phase = phase;
    f->in.dialect = dl;
    f->in.model = "gpt-4o";
    f->in.call_id = "call-1";
    f->in.body = body;
    f->in.body_len = strlen(body);
    f->in.seg = f->seg;
    f->in.tool = f->tool;
    size_t at = 0;
    for (size_t i = 0; texts[i]; i++) {
        char q[512];
        snprintf(q, sizeof q, "\"%s\"", texts[i]);
        const char *p = strstr(body + at, q);
        assert_non_null(p);
        f->seg[i] = (struct sy_gseg){.text = texts[i],
                                     .len = strlen(texts[i]),
                                     .off = (size_t)(p - body),
                                     .raw_len = strlen(q),
                                     .role = roles[i],
                                     .kind = SY_GK_TEXT,
                                     .msg = msgs[i]};
        at = (size_t)(p - body) + strlen(q);
        f->in.nseg = i + 1;
    }
}

/* The step's request, checked against url, a header line and the body (NULL: not checked). */
static void expect_request(struct fx *f, int step, void **state, const char *url, const char *hdr, const char *body)
{
    struct sy_ghttp req;
    assert_int_equal(f->g.ops->request(&f->g, &f->in, step, state, &req), 0);
    assert_non_null(req.url);
    assert_string_equal(req.method, "POST");
    assert_string_equal(req.url, url);
    if (hdr) {
        assert_non_null(req.headers.p);
        if (!strstr(req.headers.p, hdr))
            fprintf(stderr, "headers: %s\n", req.headers.p);
        assert_non_null(strstr(req.headers.p, hdr));
    }
    if (body) {
        if (strcmp(req.body.p, body))
            fprintf(stderr, "body:\n%s\nwant:\n%s\n", req.body.p, body);
        assert_string_equal(req.body.p, body);
    }
    sy_ghttp_free(&req);
}

static void expect_nothing(struct fx *f)
{
    struct sy_ghttp req;
    void *st = NULL;
    assert_int_equal(f->g.ops->request(&f->g, &f->in, 0, &st, &req), 0);
    assert_null(req.url);
    assert_null(st);
}

static int answer(struct fx *f, int step, void **state, int status, const char *body, struct sy_gresult *r)
{
    memset(r, 0, sizeof *r);
    return f->g.ops->answer(&f->g, &f->in, step, state, status, body, body ? strlen(body) : 0, r);
}

/* A one-step check: request, then answer (status, body) into r. */
static void one_step(struct fx *f, int status, const char *body, struct sy_gresult *r)
{
    struct sy_ghttp req;
    void *st = NULL;
    assert_int_equal(f->g.ops->request(&f->g, &f->in, 0, &st, &req), 0);
    sy_ghttp_free(&req);
    assert_int_equal(answer(f, 0, &st, status, body, r), SY_GSTEP_DONE);
    if (f->g.ops->free_state)
        f->g.ops->free_state(st);
}

static const char CHAT[] = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},"
                           "{\"role\":\"user\",\"content\":\"hello there\"}]}";
static const char *const CHAT_T[] = {"be brief", "hello there", NULL};
static const unsigned char CHAT_R[] = {SY_GR_SYSTEM, SY_GR_USER};
static const int CHAT_M[] = {0, 1};

/* ---- generic_guardrail_api ---- */

static void test_generic_open(void **s)
{
    (void)s;
    struct fx f;
    char err[512];
    unsetenv("GENERIC_GUARDRAIL_API_BASE");
    assert_int_equal(open_kind(&f, "generic_guardrail_api", "{}", NULL, err, sizeof err), -1);
    assert_string_equal(err, "api_base is required for Generic Guardrail API. Set GENERIC_GUARDRAIL_API_BASE "
                             "environment variable or pass it in litellm_params");
    assert_int_equal(open_kind(&f, "generic_guardrail_api", "{\"api_base\":\"http://x\",\"headers\":{\"a\":[1]}}", NULL,
                               err, sizeof err),
                     -1);
    assert_int_equal(open_kind(&f, "generic_guardrail_api",
                               "{\"api_base\":\"http://x\",\"headers\":{\"x-evil\":\"a\\r\\nInjected: 1\"}}", NULL, err,
                               sizeof err),
                     -1);
    /* the environment; the path is not doubled */
    setenv("GENERIC_GUARDRAIL_API_BASE", "http://env:9/beta/litellm_basic_guardrail_api", 1);
    open_ok(&f, "generic_guardrail_api", "{}");
    input(&f, SY_GD_CHAT, SY_GM_PRE, CHAT, CHAT_T, CHAT_R, CHAT_M);
    void *st = NULL;
    expect_request(&f, 0, &st, "http://env:9/beta/litellm_basic_guardrail_api", NULL, NULL);
    close_kind(&f);
    unsetenv("GENERIC_GUARDRAIL_API_BASE");
}

static void test_generic_request(void **s)
{
    (void)s;
    struct fx f;
    open_ok(&f, "generic_guardrail_api",
            "{\"api_base\":\"http://guard:8080/\",\"api_key\":\"k1\",\"headers\":{\"X-Team\":\"blue\",\"x-api-key\":"
            "\"old\"},\"additional_provider_specific_params\":{\"threshold\":0.8,\"lang\":\"en\"}}");
    static const char body[] =
        "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},{\"role\":\"user\","
        "\"content\":\"hello there\"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\","
        "\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}],\"tools\":[{\"type\":"
        "\"function\",\"function\":{\"name\":\"f\"}}]}";
    input(&f, SY_GD_CHAT, SY_GM_PRE, body, CHAT_T, CHAT_R, CHAT_M);
    static const char tj[] = "{\"type\":\"function\",\"function\":{\"name\":\"f\"}}";
    const char *tool = strstr(body, tj);
    f.tool[0] = (struct sy_gtool){.name = "f", .name_len = 1, .off = (size_t)(tool - body), .raw_len = strlen(tj)};
    f.in.ntool = 1;
    f.in.user_key_alias = "alice-key";
    f.in.team_id = "team-9";
    f.in.extra_body = "{\"lang\":\"fr\",\"x\":1}";
    void *st = NULL;
    expect_request(
        &f, 0, &st, "http://guard:8080/beta/litellm_basic_guardrail_api", "Content-Type: application/json\r\n",
        "{\"input_type\":\"request\",\"litellm_call_id\":\"call-1\",\"litellm_trace_id\":\"call-1\","
        "\"structured_messages\":[{\"role\":\"system\",\"content\":\"be brief\"},{\"role\":\"user\",\"content\":"
        "\"hello there\"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":"
        "\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}],\"images\":null,\"tools\":[{\"type\":"
        "\"function\",\"function\":{\"name\":\"f\"}}],\"texts\":[\"be brief\",\"hello there\"],\"request_data\":{"
        "\"user_api_key_alias\":\"alice-key\",\"user_api_key_team_id\":\"team-9\"},\"request_headers\":null,"
        "\"litellm_version\":null,\"additional_provider_specific_params\":{\"threshold\":0.8,\"lang\":\"fr\","
        "\"x\":1},\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":"
        "\"{}\"}}],\"model\":\"gpt-4o\"}");
    struct sy_ghttp req;
    assert_int_equal(f.g.ops->request(&f.g, &f.in, 0, &st, &req), 0);
    assert_string_equal(req.headers.p,
                        "Content-Type: application/json\r\nX-Team: blue\r\nx-api-key: k1\r\n"); /* api_key wins */
    sy_ghttp_free(&req);
    /* an answer: nothing of LiteLLM's request is sent when there is no text */
    static const char empty[] = "{\"model\":\"m\",\"choices\":[]}";
    static const char *const none[] = {NULL};
    input(&f, SY_GD_CHAT, SY_GM_POST, empty, none, NULL, NULL);
    expect_nothing(&f);
    close_kind(&f);
}

static void test_generic_answers(void **s)
{
    (void)s;
    struct fx f;
    struct sy_gresult r;
    open_ok(&f, "generic_guardrail_api", "{\"api_base\":\"http://guard\"}");
    input(&f, SY_GD_CHAT, SY_GM_PRE, CHAT, CHAT_T, CHAT_R, CHAT_M);

    one_step(&f, 200, "{\"action\":\"NONE\"}", &r);
    assert_int_equal(r.verdict, SY_GV_PASS);
    sy_gresult_free(&r);

    one_step(&f, 200, "{\"action\":\"BLOCKED\",\"blocked_reason\":\"Tool 'rm' is not allowed\"}", &r);
    assert_int_equal(r.verdict, SY_GV_BLOCK);
    assert_int_equal(r.status, 400);
    assert_string_equal(r.message, "Tool 'rm' is not allowed");
    sy_gresult_free(&r);

    one_step(&f, 200, "{\"action\":\"BLOCKED\",\"blocked_reason\":\"\"}", &r);
    assert_string_equal(r.message, "Content violates policy");
    sy_gresult_free(&r);

    one_step(&f, 200, "{\"action\":\"BLOCKED\",\"blocked_reason\":{\"code\":7,\"ok\":false}}", &r);
    assert_string_equal(r.message, "{'code': 7, 'ok': False}");
    sy_gresult_free(&r);

    one_step(&f, 200, "{\"action\":\"GUARDRAIL_INTERVENED\",\"texts\":[\"be brief\",\"hello [NAME]\"]}", &r);
    assert_int_equal(r.verdict, SY_GV_MASKED);
    assert_null(r.repl[0]);
    assert_string_equal(r.repl[1], "hello [NAME]");
    assert_int_equal(r.masked, 1);
    sy_gresult_free(&r);

    /* more texts than were sent: the extra ones are ignored */
    one_step(&f, 200, "{\"action\":\"GUARDRAIL_INTERVENED\",\"texts\":[\"x\",\"y\",\"z\"]}", &r);
    assert_int_equal(r.verdict, SY_GV_MASKED);
    assert_string_equal(r.repl[0], "x");
    sy_gresult_free(&r);

    one_step(&f, 200, "{\"action\":\"GUARDRAIL_INTERVENED\",\"texts\":[1]}", &r);
    assert_int_equal(r.verdict, SY_GV_ERROR);
    sy_gresult_free(&r);

    one_step(&f, 500, "{\"action\":\"NONE\"}", &r);
    assert_int_equal(r.verdict, SY_GV_ERROR);
    assert_string_equal(r.message, "Generic Guardrail API failed: HTTP 500");
    sy_gresult_free(&r);

    const char *garbage[] = {"", "not json", "[1,2]", "{\"action\":", "\"BLOCKED\""};
    for (size_t i = 0; i < sizeof garbage / sizeof *garbage; i++) {
        one_step(&f, 200, garbage[i], &r);
        assert_int_equal(r.verdict, SY_GV_ERROR);
        sy_gresult_free(&r);
    }
    close_kind(&f);
}

/* ---- openai_moderation ---- */

static int group_target(void *ud, const char *model, char *url, size_t urlcap, char *auth, size_t authcap)
{
    (void)ud;
    if (strcmp(model, "mod-group"))
        return -1;
    snprintf(url, urlcap, "http://127.0.0.1:4010/v1");
    snprintf(auth, authcap, "Authorization: Bearer sk-dep\r\n");
    return 0;
}

static void test_moderation_open(void **s)
{
    (void)s;
    struct fx f;
    char err[512];
    unsetenv("OPENAI_API_KEY");
    /* no key: the config loads (LiteLLM fails the check, not the start); every check is an error */
    assert_int_equal(open_kind(&f, "openai_moderation", "{}", NULL, err, sizeof err), 0);
    {
        struct sy_gseg sg = {.text = "hi", .len = 2, .off = 1, .raw_len = 4, .role = SY_GR_USER};
        struct sy_ginput in = {.phase = SY_GM_PRE, .seg = &sg, .nseg = 1, .body = "\"hi\"", .body_len = 4};
        struct sy_ghttp req;
        void *st = NULL;
        assert_int_equal(f.g.ops->request(&f.g, &in, 0, &st, &req), -1);
        f.g.ops->close(&f.g);
    }
    assert_int_equal(
        open_kind(&f, "openai_moderation", "{\"model\":\"mod-group\",\"api_key\":\"k\"}", NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "mod-group"));
    struct sy_genv env = {group_target, NULL, NULL, NULL};
    assert_int_equal(open_kind(&f, "openai_moderation", "{\"model\":\"other\"}", &env, err, sizeof err), -1);

    /* through the group: its deployment, its key, no model in the body */
    assert_int_equal(open_kind(&f, "openai_moderation", "{\"model\":\"mod-group\"}", &env, err, sizeof err), 0);
    static const char body[] = "{\"messages\":[{\"role\":\"user\",\"content\":\"kill it\"}]}";
    static const char *const t[] = {"kill it", NULL};
    static const unsigned char ro[] = {SY_GR_USER};
    static const int mo[] = {0};
    input(&f, SY_GD_CHAT, SY_GM_PRE, body, t, ro, mo);
    void *st = NULL;
    expect_request(&f, 0, &st, "http://127.0.0.1:4010/v1/moderations", "Authorization: Bearer sk-dep\r\n",
                   "{\"input\":\"kill it\"}");
    close_kind(&f);
}

static void test_moderation_request(void **s)
{
    (void)s;
    struct fx f;
    setenv("OPENAI_API_KEY", "sk-env", 1);
    open_ok(&f, "openai_moderation", "{\"api_base\":\"http://mod:1/v1/\",\"model\":\"text-moderation-latest\"}");
    static const char body[] =
        "{\"messages\":[{\"role\":\"user\",\"content\":\"first\"},{\"role\":\"assistant\",\"content\":\"ok\"},"
        "{\"role\":\"user\",\"content\":\"  second\"},{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":"
        "\"third\"},{\"type\":\"text\",\"text\":\" part\"}]}]}";
    static const char *const t[] = {"first", "ok", "  second", "third", " part", NULL};
    static const unsigned char ro[] = {SY_GR_USER, SY_GR_ASSISTANT, SY_GR_USER, SY_GR_USER, SY_GR_USER};
    static const int mo[] = {0, 1, 2, 3, 3};
    input(&f, SY_GD_CHAT, SY_GM_PRE, body, t, ro, mo);
    void *st = NULL;
    expect_request(&f, 0, &st, "http://mod:1/v1/moderations", "Authorization: Bearer sk-env\r\n",
                   "{\"model\":\"text-moderation-latest\",\"input\":\"second\\nthird part\"}");
    /* the last message is the assistant's: nothing to moderate */
    static const char b2[] = "{\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\","
                             "\"content\":\"b\"}]}";
    static const char *const t2[] = {"a", "b", NULL};
    static const unsigned char r2[] = {SY_GR_USER, SY_GR_ASSISTANT};
    static const int m2[] = {0, 1};
    input(&f, SY_GD_CHAT, SY_GM_PRE, b2, t2, r2, m2);
    expect_nothing(&f);
    /* an answer: its choices' texts joined by newlines */
    static const char ans[] = "{\"choices\":[{\"message\":{\"content\":\"one\"}},{\"message\":{\"content\":"
                              "\"two\"}}]}";
    static const char *const ta[] = {"one", "two", NULL};
    static const unsigned char ra[] = {SY_GR_ASSISTANT, SY_GR_ASSISTANT};
    static const int ma[] = {0, 1};
    input(&f, SY_GD_CHAT, SY_GM_POST, ans, ta, ra, ma);
    expect_request(&f, 0, &st, "http://mod:1/v1/moderations", NULL,
                   "{\"model\":\"text-moderation-latest\",\"input\":\"one\\ntwo\"}");
    /* /v1/responses: its user input is read too */
    static const char rb[] = "{\"model\":\"m\",\"instructions\":\"be kind\",\"input\":\"hurt them\"}";
    static const char *const tr[] = {"be kind", "hurt them", NULL};
    static const unsigned char rr[] = {SY_GR_SYSTEM, SY_GR_USER};
    static const int mr[] = {0, 1};
    input(&f, SY_GD_RESPONSES, SY_GM_PRE, rb, tr, rr, mr);
    expect_request(&f, 0, &st, "http://mod:1/v1/moderations", NULL,
                   "{\"model\":\"text-moderation-latest\",\"input\":\"hurt them\"}");
    close_kind(&f);
    unsetenv("OPENAI_API_KEY");
}

static void test_moderation_answers(void **s)
{
    (void)s;
    struct fx f;
    struct sy_gresult r;
    open_ok(&f, "openai_moderation", "{\"api_key\":\"k\"}");
    input(&f, SY_GD_CHAT, SY_GM_PRE, CHAT, CHAT_T, CHAT_R, CHAT_M);
    one_step(&f, 200,
             "{\"id\":\"modr-1\",\"model\":\"omni-moderation-latest\",\"results\":[{\"flagged\":false,\"categories\":"
             "{\"hate\":false}}]}",
             &r);
    assert_int_equal(r.verdict, SY_GV_PASS);
    sy_gresult_free(&r);

    one_step(&f, 200,
             "{\"id\":\"modr-2\",\"model\":\"omni-moderation-latest\",\"results\":[{\"flagged\":true,\"categories\":"
             "{\"harassment\":true,\"hate\":false,\"self-harm/intent\":true},\"category_scores\":{\"harassment\":"
             "0.91,\"hate\":1.2e-05,\"self-harm/intent\":0.5}}]}",
             &r);
    assert_int_equal(r.verdict, SY_GV_BLOCK);
    assert_int_equal(r.status, 400);
    assert_string_equal(r.message, "{'error': 'Violated OpenAI moderation policy', 'moderation_result': "
                                   "{'violated_categories': ['harassment', 'self-harm/intent'], 'category_scores': "
                                   "{'harassment': 0.91, 'hate': 1.2e-05, 'self-harm/intent': 0.5}}}");
    assert_non_null(r.detail);
    struct json_object *dj = json_tokener_parse(r.detail);
    assert_non_null(dj);
    json_object_put(dj);
    sy_gresult_free(&r);

    one_step(&f, 200, "{\"results\":[{\"flagged\":true}]}", &r);
    assert_string_equal(r.message, "{'error': 'Violated OpenAI moderation policy', 'moderation_result': "
                                   "{'violated_categories': [], 'category_scores': {}}}");
    sy_gresult_free(&r);

    one_step(&f, 500, "{\"error\":{\"message\":\"down\"}}", &r);
    assert_int_equal(r.verdict, SY_GV_ERROR);
    sy_gresult_free(&r);
    one_step(&f, 200, "{\"error\":\"x\"}", &r);
    assert_int_equal(r.verdict, SY_GV_ERROR);
    sy_gresult_free(&r);
    one_step(&f, 200, "<html>", &r);
    assert_int_equal(r.verdict, SY_GV_ERROR);
    sy_gresult_free(&r);
    close_kind(&f);
}

/* ---- presidio ---- */

static void test_presidio_open(void **s)
{
    (void)s;
    struct fx f;
    char err[512];
    unsetenv("PRESIDIO_ANALYZER_API_BASE");
    unsetenv("PRESIDIO_ANONYMIZER_API_BASE");
    assert_int_equal(open_kind(&f, "presidio", "{}", NULL, err, sizeof err), -1);
    assert_string_equal(err, "Missing `PRESIDIO_ANALYZER_API_BASE` from environment");
    assert_int_equal(open_kind(&f, "presidio", "{\"presidio_analyzer_api_base\":\"a:1\"}", NULL, err, sizeof err), -1);
    assert_string_equal(err, "Missing `PRESIDIO_ANONYMIZER_API_BASE` from environment");
    assert_int_equal(open_kind(&f, "presidio",
                               "{\"presidio_analyzer_api_base\":\"a\",\"presidio_anonymizer_api_base\":\"b\","
                               "\"pii_entities_config\":{\"EMAIL_ADDRESS\":\"HIDE\"}}",
                               NULL, err, sizeof err),
                     -1);
    assert_int_equal(open_kind(&f, "presidio",
                               "{\"presidio_analyzer_api_base\":\"a\",\"presidio_anonymizer_api_base\":\"b\","
                               "\"presidio_ad_hoc_recognizers\":\"/nonexistent/recognizers.json\"}",
                               NULL, err, sizeof err),
                     -1);
    assert_string_equal(err, "File not found. file_path=/nonexistent/recognizers.json");
    /* fail_open by default, as LiteLLM's presidio; closed when asked */
    open_ok(&f, "presidio", "{\"presidio_analyzer_api_base\":\"a\",\"presidio_anonymizer_api_base\":\"b\"}");
    assert_int_equal(f.g.fail_open, 1);
    close_kind(&f);
    open_ok(&f, "presidio",
            "{\"presidio_analyzer_api_base\":\"a\",\"presidio_anonymizer_api_base\":\"b\","
            "\"unreachable_fallback\":\"fail_closed\"}");
    assert_int_equal(f.g.fail_open, 0);
    close_kind(&f);
}

static const char PR_CFG[] = "{\"presidio_analyzer_api_base\":\"analyzer:3000\",\"presidio_anonymizer_api_base\":"
                             "\"https://anon.example/\",\"presidio_language\":\"de\",\"pii_entities_config\":{"
                             "\"EMAIL_ADDRESS\":\"MASK\",\"PERSON\":\"MASK\",\"US_SSN\":\"BLOCK\"}}";

/* The step's request: its body (malloc'd) and its "text" member (malloc'd, *text). */
static char *take_request(struct fx *f, int step, void **state, const char *url, char **text)
{
    struct sy_ghttp req;
    assert_int_equal(f->g.ops->request(&f->g, &f->in, step, state, &req), 0);
    assert_non_null(req.url);
    assert_string_equal(req.url, url);
    char *body = strdup(req.body.p);
    struct json_object *o = json_tokener_parse(body), *t;
    assert_non_null(o);
    assert_true(json_object_object_get_ex(o, "text", &t));
    *text = strdup(json_object_get_string(t));
    json_object_put(o);
    sy_ghttp_free(&req);
    return body;
}

/* The separator between the first text (n0 bytes) and the rest of the joined text j. */
static char *sep_of(const char *j, size_t n0)
{
    const char *p = j + n0, *e = strstr(p + 8, " -----\n\n");
    assert_non_null(e);
    assert_memory_equal(p, "\n\n----- ", 8);
    assert_int_equal(e - (p + 8), 24); /* 12 random bytes in hex */
    return strndup(p, (size_t)(e + 8 - p));
}

static void test_presidio_mask(void **s)
{
    (void)s;
    struct fx f;
    open_ok(&f, "presidio", PR_CFG);
    static const char body[] =
        "{\"messages\":[{\"role\":\"system\",\"content\":\"   \"},{\"role\":\"user\",\"content\":\"mail bob@x.io "
        "now\"},{\"role\":\"user\",\"content\":\"nothing here\"}]}";
    static const char *const t[] = {"   ", "mail bob@x.io now", "nothing here", NULL};
    static const unsigned char ro[] = {SY_GR_SYSTEM, SY_GR_USER, SY_GR_USER};
    static const int mo[] = {0, 1, 2};
    input(&f, SY_GD_CHAT, SY_GM_PRE, body, t, ro, mo);
    f.in.extra_body = "{\"score_threshold\":0.4}";
    void *st = NULL;
    struct sy_gresult r;
    /* one analyze for both texts (the blank one left out), joined by a separator line */
    char *j, *b = take_request(&f, 0, &st, "http://analyzer:3000/analyze", &j);
    char *sep = sep_of(j, 17);
    char want[1024];
    snprintf(want, sizeof want, "mail bob@x.io now%snothing here", sep);
    assert_string_equal(j, want);
    assert_non_null(strstr(b, "\",\"language\":\"de\",\"entities\":[\"EMAIL_ADDRESS\",\"PERSON\",\"US_SSN\"],"
                              "\"score_threshold\":0.4}"));
    free(b);
    free(j);
    /* a finding in the separator and one across it are dropped */
    size_t sl = strlen(sep);
    char ans[1024];
    snprintf(ans, sizeof ans,
             "[{\"entity_type\":\"EMAIL_ADDRESS\",\"start\":5,\"end\":13,\"score\":1.0},{\"entity_type\":\"PERSON\","
             "\"start\":%zu,\"end\":%zu,\"score\":0.9},{\"entity_type\":\"PERSON\",\"start\":15,\"end\":%zu,\"score\":"
             "0.9}]",
             (size_t)21, (size_t)27, 17 + sl + 3);
    assert_int_equal(answer(&f, 0, &st, 200, ans, &r), SY_GSTEP_MORE);
    char *jt;
    b = take_request(&f, 1, &st, "https://anon.example/anonymize", &jt);
    snprintf(
        want, sizeof want,
        "{\"text\":\"mail bob@x.io now\\n\\n%.30s -----\\n\\nnothing here\",\"analyzer_results\":[{\"entity_type\":"
        "\"EMAIL_ADDRESS\",\"start\":5,\"end\":13,\"score\":1.0}]}",
        sep + 2);
    assert_string_equal(b, want);
    free(b);
    free(jt);
    /* the anonymizer's text is cut at the separator */
    snprintf(ans, sizeof ans,
             "{\"text\":\"mail <EMAIL_ADDRESS> now\\n\\n%.30s -----\\n\\nnothing here\",\"items\":[{\"start\":5,"
             "\"end\":20,\"entity_type\":\"EMAIL_ADDRESS\",\"text\":\"<EMAIL_ADDRESS>\",\"operator\":\"replace\"}]}",
             sep + 2);
    assert_int_equal(answer(&f, 1, &st, 200, ans, &r), SY_GSTEP_DONE);
    assert_int_equal(r.verdict, SY_GV_MASKED);
    assert_null(r.repl[0]);
    assert_string_equal(r.repl[1], "mail <EMAIL_ADDRESS> now");
    assert_null(r.repl[2]);
    assert_int_equal(r.masked, 1);
    assert_string_equal(r.detail, "{\"masked_entity_count\":{\"EMAIL_ADDRESS\":1}}");
    assert_int_equal(r.npairs, 0);
    sy_gresult_free(&r);
    f.g.ops->free_state(st);

    /* an anonymizer that loses a separator: an error, nothing half-masked */
    st = NULL;
    free(take_request(&f, 0, &st, "http://analyzer:3000/analyze", &j));
    free(j);
    assert_int_equal(answer(&f, 0, &st, 200, "[{\"entity_type\":\"EMAIL_ADDRESS\",\"start\":5,\"end\":13}]", &r),
                     SY_GSTEP_MORE);
    free(take_request(&f, 1, &st, "https://anon.example/anonymize", &j));
    free(j);
    assert_int_equal(answer(&f, 1, &st, 200, "{\"text\":\"mail <EMAIL_ADDRESS> now nothing here\"}", &r),
                     SY_GSTEP_DONE);
    assert_int_equal(r.verdict, SY_GV_ERROR);
    assert_null(r.repl);
    sy_gresult_free(&r);
    f.g.ops->free_state(st);
    free(sep);
    close_kind(&f);
}

static void test_presidio_reversible(void **s)
{
    (void)s;
    struct fx f;
    open_ok(&f, "presidio",
            "{\"presidio_analyzer_api_base\":\"http://an\",\"presidio_anonymizer_api_base\":"
            "\"http://anon\",\"output_parse_pii\":true,\"pii_entities_config\":{\"PERSON\":\"MASK\"}}");
    /* code points, not bytes: "Zoë" is 3 code points, 4 bytes */
    static const char body[] = "{\"messages\":[{\"role\":\"user\",\"content\":\"Zoë met Al <PERSON_1>\"},"
                               "{\"role\":\"user\",\"content\":\"Ana again\"}]}";
    static const char *const t[] = {"Zoë met Al <PERSON_1>", "Ana again", NULL};
    static const unsigned char ro[] = {SY_GR_USER, SY_GR_USER};
    static const int mo[] = {0, 1};
    input(&f, SY_GD_CHAT, SY_GM_PRE, body, t, ro, mo);
    void *st = NULL;
    struct sy_gresult r;
    /* an earlier token is blanked out of what the analyzer reads */
    char *j, *b = take_request(&f, 0, &st, "http://an/analyze", &j);
    assert_memory_equal(j, "Zoë met Al           \n\n----- ", strlen("Zoë met Al           \n\n----- "));
    free(b);
    char *sep = sep_of(j, strlen("Zoë met Al           "));
    size_t second = 21 + strlen(sep); /* code points */
    free(j);
    /* PERSON_2 resolves to the configured PERSON; an overlapping span is left out; no anonymize */
    char ans[1024];
    snprintf(ans, sizeof ans,
             "[{\"entity_type\":\"PERSON\",\"start\":8,\"end\":10,\"score\":0.85},{\"entity_type\":\"PERSON_2\","
             "\"start\":0,\"end\":3,\"score\":0.9},{\"entity_type\":\"PERSON\",\"start\":1,\"end\":2,\"score\":0.9},"
             "{\"entity_type\":\"PERSON\",\"start\":%zu,\"end\":%zu,\"score\":0.8}]",
             second, second + 3);
    assert_int_equal(answer(&f, 0, &st, 200, ans, &r), SY_GSTEP_DONE);
    assert_int_equal(r.verdict, SY_GV_MASKED);
    assert_string_equal(r.repl[0], "<PERSON_1> met <PERSON_2> <PERSON_1>");
    assert_string_equal(r.repl[1], "<PERSON_3> again");
    assert_int_equal(r.npairs, 3);
    assert_string_equal(r.pairs[0].placeholder, "<PERSON_1>");
    assert_string_equal(r.pairs[0].original, "Zoë");
    assert_string_equal(r.pairs[1].placeholder, "<PERSON_2>");
    assert_string_equal(r.pairs[1].original, "Al");
    assert_string_equal(r.pairs[2].original, "Ana");
    assert_int_equal(r.masked, 3);
    sy_gresult_free(&r);
    f.g.ops->free_state(st);
    free(sep);
    close_kind(&f);
}

static void test_presidio_language(void **s)
{
    (void)s;
    struct fx f;
    open_ok(&f, "presidio",
            "{\"presidio_analyzer_api_base\":\"http://an\",\"presidio_anonymizer_api_base\":"
            "\"http://anon\"}");
    static const char body[] = "{\"metadata\":{\"guardrail_config\":{\"language\":\"es\"}},\"messages\":[{"
                               "\"role\":\"user\",\"content\":\"hola\"}]}";
    static const char *const t[] = {"hola", NULL};
    static const unsigned char ro[] = {SY_GR_USER};
    static const int mo[] = {0};
    input(&f, SY_GD_CHAT, SY_GM_PRE, body, t, ro, mo);
    void *st = NULL;
    expect_request(&f, 0, &st, "http://an/analyze", NULL, "{\"text\":\"hola\",\"language\":\"es\"}");
    f.g.ops->free_state(st);
    close_kind(&f);
}

static void test_presidio_block_and_errors(void **s)
{
    (void)s;
    struct fx f;
    struct sy_gresult r;
    open_ok(&f, "presidio",
            "{\"presidio_analyzer_api_base\":\"http://an\",\"presidio_anonymizer_api_base\":\"http://anon\","
            "\"pii_entities_config\":{\"US_SSN\":\"BLOCK\",\"EMAIL_ADDRESS\":\"MASK\"},\"presidio_score_thresholds\":"
            "{\"EMAIL_ADDRESS\":0.9,\"ALL\":0.5},\"presidio_entities_deny_list\":[\"PHONE_NUMBER\"]}");
    input(&f, SY_GD_CHAT, SY_GM_PRE, CHAT, CHAT_T, CHAT_R, CHAT_M);
    one_step(&f, 200, "[{\"entity_type\":\"US_SSN\",\"start\":0,\"end\":2,\"score\":0.6}]", &r);
    assert_int_equal(r.verdict, SY_GV_BLOCK);
    assert_string_equal(r.message, "Blocked entity detected: US_SSN by Guardrail: my-guard. This entity is not "
                                   "allowed to be used in this request.");
    sy_gresult_free(&r);
    /* one object instead of a list */
    one_step(&f, 200, "{\"entity_type\":\"US_SSN\",\"start\":0,\"end\":2,\"score\":0.6}", &r);
    assert_int_equal(r.verdict, SY_GV_BLOCK);
    sy_gresult_free(&r);
    /* below the ALL threshold, below EMAIL_ADDRESS's own, a denied type: all dropped */
    one_step(
        &f, 200,
        "[{\"entity_type\":\"US_SSN\",\"start\":0,\"end\":2,\"score\":0.4},{\"entity_type\":\"EMAIL_ADDRESS\","
        "\"start\":0,\"end\":2,\"score\":0.8},{\"entity_type\":\"PHONE_NUMBER\",\"start\":0,\"end\":2,\"score\":1}]",
        &r);
    assert_int_equal(r.verdict, SY_GV_PASS);
    sy_gresult_free(&r);
    one_step(&f, 200, "{\"error\":\"No text provided\"}", &r);
    assert_int_equal(r.verdict, SY_GV_ERROR); /* the guardrail protects entities: the error counts */
    sy_gresult_free(&r);

    const char *bad[] = {"nope", "\"str\"", "[", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        one_step(&f, 200, bad[i], &r);
        assert_int_equal(r.verdict, SY_GV_ERROR);
        sy_gresult_free(&r);
    }
    one_step(&f, 500, "oops", &r);
    assert_int_equal(r.verdict, SY_GV_ERROR);
    sy_gresult_free(&r);
    close_kind(&f);

    /* nothing protected: an analyzer failure lets the texts pass (LiteLLM returns []) */
    open_ok(&f, "presidio",
            "{\"presidio_analyzer_api_base\":\"http://an\",\"presidio_anonymizer_api_base\":"
            "\"http://anon\"}");
    input(&f, SY_GD_CHAT, SY_GM_PRE, CHAT, CHAT_T, CHAT_R, CHAT_M);
    one_step(&f, 503, "down", &r);
    assert_int_equal(r.verdict, SY_GV_PASS);
    sy_gresult_free(&r);
    /* the anonymizer failing is an error */
    void *st = NULL;
    struct sy_ghttp req;
    assert_int_equal(f.g.ops->request(&f.g, &f.in, 0, &st, &req), 0);
    sy_ghttp_free(&req);
    assert_int_equal(answer(&f, 0, &st, 200, "[{\"entity_type\":\"X\",\"start\":0,\"end\":5}]", &r), SY_GSTEP_MORE);
    assert_int_equal(f.g.ops->request(&f.g, &f.in, 1, &st, &req), 0);
    assert_non_null(strstr(req.url, "/anonymize"));
    sy_ghttp_free(&req);
    assert_int_equal(answer(&f, 1, &st, 200, "{\"items\":[]}", &r), SY_GSTEP_DONE);
    assert_int_equal(r.verdict, SY_GV_ERROR);
    sy_gresult_free(&r);
    f.g.ops->free_state(st);
    /* the answer is not read without apply_to_output */
    input(&f, SY_GD_CHAT, SY_GM_POST, CHAT, CHAT_T, CHAT_R, CHAT_M);
    expect_nothing(&f);
    close_kind(&f);
}

/* ---- lakera_v2 ---- */

static void test_lakera_request(void **s)
{
    (void)s;
    struct fx f;
    unsetenv("LAKERA_API_KEY");
    setenv("LAKERA_API_BASE", "http://lakera:9/", 1);
    open_ok(&f, "lakera_v2",
            "{\"api_key\":\"lk\",\"project_id\":\"p-1\",\"breakdown\":false,\"metadata\":{\"env\":"
            "\"prod\"}}");
    input(&f, SY_GD_CHAT, SY_GM_PRE, CHAT, CHAT_T, CHAT_R, CHAT_M);
    void *st = NULL;
    expect_request(&f, 0, &st, "http://lakera:9/v2/guard", "Authorization: Bearer lk\r\n",
                   "{\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},{\"role\":\"user\",\"content\":"
                   "\"hello there\"}],\"project_id\":\"p-1\",\"payload\":true,\"breakdown\":false,\"metadata\":{"
                   "\"env\":\"prod\"},\"dev_info\":true}");
    close_kind(&f);
    unsetenv("LAKERA_API_BASE");
    open_ok(&f, "lakera_v2", "{}");
    expect_request(&f, 0, &st, "https://api.lakera.ai/v2/guard", "Authorization: Bearer \r\n",
                   "{\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},{\"role\":\"user\",\"content\":"
                   "\"hello there\"}],\"project_id\":null,\"payload\":true,\"breakdown\":true,\"metadata\":null,"
                   "\"dev_info\":true}");
    /* chat only */
    input(&f, SY_GD_MESSAGES, SY_GM_PRE, CHAT, CHAT_T, CHAT_R, CHAT_M);
    expect_nothing(&f);
    close_kind(&f);
    char err[256];
    assert_int_equal(open_kind(&f, "lakera_v2", "{\"on_flagged\":\"mask\"}", NULL, err, sizeof err), -1);
}

static void test_lakera_answers(void **s)
{
    (void)s;
    struct fx f;
    struct sy_gresult r;
    open_ok(&f, "lakera_v2", "{\"api_key\":\"lk\"}");
    static const char body[] = "{\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},{\"role\":\"user\","
                               "\"content\":\"I'm Zoë, mail zoe@x.io or call 555-1234\"}]}";
    static const char *const t[] = {"be brief", "I'm Zoë, mail zoe@x.io or call 555-1234", NULL};
    input(&f, SY_GD_CHAT, SY_GM_PRE, body, t, CHAT_R, CHAT_M);

    one_step(&f, 200, "{\"flagged\":false,\"breakdown\":[]}", &r);
    assert_int_equal(r.verdict, SY_GV_PASS);
    sy_gresult_free(&r);

    static const char flagged[] =
        "{\"payload\":[],\"flagged\":true,\"dev_info\":{\"git_revision\":\"c1\",\"version\":\"1.3\"},\"breakdown\":"
        "[{\"project_id\":\"p\",\"policy_id\":\"pol\",\"detector_id\":\"d1\",\"detector_type\":\"prompt_attack\","
        "\"detected\":true},{\"detector_type\":\"pii/email\",\"detected\":false,\"score\":0.25}]}";
    one_step(&f, 200, flagged, &r);
    assert_int_equal(r.verdict, SY_GV_BLOCK);
    assert_string_equal(r.message,
                        "{'error': 'Violated guardrail policy', 'lakera_guardrail_response': {'payload': [], "
                        "'flagged': True, 'dev_info': {'git_revision': 'c1', 'version': '1.3'}, 'breakdown': "
                        "[{'project_id': 'p', 'policy_id': 'pol', 'detector_id': 'd1', 'detector_type': "
                        "'prompt_attack', 'detected': True}, {'detector_type': 'pii/email', 'detected': False, "
                        "'score': 0.25}]}}");
    assert_null(strstr(r.detail, "payload"));
    sy_gresult_free(&r);

    /* PII only: masked at code-point offsets (Zoë = 3), the later span first */
    one_step(&f, 200,
             "{\"flagged\":true,\"breakdown\":[{\"detector_type\":\"pii/email\",\"detected\":true},{\"detector_type\":"
             "\"pii/phone_number\",\"detected\":true},{\"detector_type\":\"moderated_content/hate\",\"detected\":"
             "false}],\"payload\":[{\"start\":14,\"end\":22,\"text\":\"zoe@x.io\",\"detector_type\":\"pii/email\","
             "\"message_id\":1},{\"start\":31,\"end\":39,\"detector_type\":\"pii/phone_number\",\"message_id\":1},"
             "{\"start\":0,\"end\":2,\"detector_type\":\"pii/email\",\"message_id\":7}]}",
             &r);
    assert_int_equal(r.verdict, SY_GV_MASKED);
    assert_null(r.repl[0]);
    assert_string_equal(r.repl[1], "I'm Zoë, mail [MASKED EMAIL] or call [MASKED PHONE_NUMBER]");
    assert_int_equal(r.masked, 2);
    sy_gresult_free(&r);
    close_kind(&f);

    open_ok(&f, "lakera_v2", "{\"on_flagged\":\"monitor\"}");
    input(&f, SY_GD_CHAT, SY_GM_PRE, body, t, CHAT_R, CHAT_M);
    one_step(&f, 200, flagged, &r);
    assert_int_equal(r.verdict, SY_GV_PASS);
    assert_non_null(strstr(r.detail, "\"flagged\":true"));
    sy_gresult_free(&r);
    one_step(&f, 500, "{\"flagged\":true}", &r);
    assert_int_equal(r.verdict, SY_GV_ERROR);
    sy_gresult_free(&r);
    one_step(&f, 401, "{\"error\":\"unauthorized\"}", &r);
    assert_int_equal(r.verdict, SY_GV_ERROR);
    sy_gresult_free(&r);
    one_step(&f, 200, "]]", &r);
    assert_int_equal(r.verdict, SY_GV_ERROR);
    sy_gresult_free(&r);
    close_kind(&f);
}

/* Throwaway cost measure: a 1 MB user text through each kind's request (not asserted). */
static void test_cost(void **s)
{
    (void)s;
    size_t n = 1 << 20;
    char *text = malloc(n + 1), *body = malloc(n + 64);
    for (size_t i = 0; i < n; i++)
        text[i] = (char)('a' + i % 26);
    text[n] = 0;
    int bl = snprintf(body, n + 64, "{\"messages\":[{\"role\":\"user\",\"content\":\"%s\"}]}", text);
    const char *kinds[] = {"generic_guardrail_api", "openai_moderation", "lakera_v2", "presidio"};
    const char *cfg = "{\"api_base\":\"http://x\",\"api_key\":\"k\",\"presidio_analyzer_api_base\":\"a\","
                      "\"presidio_anonymizer_api_base\":\"b\"}";
    for (size_t k = 0; k < 4; k++) {
        struct fx f;
        open_ok(&f, kinds[k], cfg);
        memset(&f.in, 0, sizeof f.in);
        f.in.phase = SY_GM_PRE;
        f.in.dialect = SY_GD_CHAT;
        f.in.body = body;
        f.in.body_len = (size_t)bl;
        f.in.seg = f.seg;
        f.seg[0] = (struct sy_gseg){.text = text, .len = n, .off = 40, .raw_len = n + 2, .role = SY_GR_USER};
        f.in.nseg = 1;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < 5; i++) {
            struct sy_ghttp req;
            void *st = NULL;
            assert_int_equal(f.g.ops->request(&f.g, &f.in, 0, &st, &req), 0);
            assert_true(req.body.len > n);
            sy_ghttp_free(&req);
            if (f.g.ops->free_state)
                f.g.ops->free_state(st);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3) / 5;
        fprintf(stderr, "# %s request of 1 MB: %.1f us/KB\n", kinds[k], us / 1024);
        close_kind(&f);
    }
    free(text);
    free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generic_open),        cmocka_unit_test(test_generic_request),
        cmocka_unit_test(test_generic_answers),     cmocka_unit_test(test_moderation_open),
        cmocka_unit_test(test_moderation_request),  cmocka_unit_test(test_moderation_answers),
        cmocka_unit_test(test_presidio_open),       cmocka_unit_test(test_presidio_mask),
        cmocka_unit_test(test_presidio_reversible), cmocka_unit_test(test_presidio_block_and_errors),
        cmocka_unit_test(test_presidio_language),   cmocka_unit_test(test_lakera_request),
        cmocka_unit_test(test_lakera_answers),      cmocka_unit_test(test_cost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
