/* test_bedrock.c - the Bedrock adapter (providers/bedrock.c) against golden files.
 *
 *   golden/bedrock/<case>.in.json    an OpenAI request     -> <case>.out: rc, URL, header lines
 *                                                              (signed with the SigV4 test-suite
 *                                                              keys at 2015-08-30T12:36:00Z), body;
 *                                                              or rc, status, type, param, class,
 *                                                              message
 *   golden/bedrock/<case>.resp.json  a Bedrock 2xx body    -> <case>.out: the OpenAI response
 *   golden/bedrock/<case>.events     "type json" per line  -> <case>.out: the chunks written, the
 *                                    ("!type" exceptions)     return code, usage, error; the events
 *                                                              are encoded with sy_awses_encode and
 *                                                              fed through sy_awses_feed in many splits
 *
 * SY_GOLDEN_UPDATE=1 in the environment rewrites the .out files instead of
 * comparing (review the diff before committing). Every chunk and response is
 * also checked to be valid JSON with json-c.
 */
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
#include "providers/adapter.h"
#include "providers/jdom.h"
#include "providers/oai.h"
#include "upstream/framing.h"

#define NOW   1440938160 /* 2015-08-30T12:36:00Z, the SigV4 test suite's date */
#define AK    "AKIDEXAMPLE"
#define SK    "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define CREDS "aws_access_key_id", AK, "aws_secret_access_key", SK, "aws_region_name", "us-east-1"

static const struct sy_adapter *B = &sy_adapter_bedrock;

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    if (fread(p, 1, (size_t)n, f) != (size_t)n)
        n = 0;
    p[n] = 0;
    fclose(f);
    if (len)
        *len = (size_t)n;
    return p;
}

static char *gpath(const char *name, const char *ext)
{
    static char p[1024];
    snprintf(p, sizeof p, "%s/bedrock/%s%s", GOLDEN_DIR, name, ext);
    return p;
}

/* Compare got with golden <name>.out (or rewrite it under SY_GOLDEN_UPDATE). */
static void golden_check(const char *name, const char *got, size_t n)
{
    const char *path = gpath(name, ".out");
    if (getenv("SY_GOLDEN_UPDATE")) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fwrite(got, 1, n, f);
        fclose(f);
        return;
    }
    size_t wl;
    char *want = slurp(path, &wl);
    if (!want) {
        print_error("%s: no golden file %s\n", name, path);
        fail();
    }
    if (wl != n || memcmp(want, got, n)) {
        print_error("%s: output differs from %s\n--- got\n%.*s\n--- want\n%s\n", name, path, (int)n, got, want);
        free(want);
        fail();
    }
    free(want);
}

static void assert_json(const char *s, size_t n)
{
    struct json_tokener *t = json_tokener_new();
    json_object *o = json_tokener_parse_ex(t, s, (int)n);
    if (!o || json_tokener_get_error(t) != json_tokener_success || t->char_offset != (int)n) {
        print_error("not valid JSON: %.*s\n", (int)n, s);
        fail();
    }
    json_object_put(o);
    json_tokener_free(t);
}

/* ---- deployment + configure ------------------------------------------------------ */

struct dep {
    struct sy_deployment d;
    struct sy_kv kv[16];
    struct sy_pconf pc;
};

static void clear_env(void)
{
    static const char *const v[] = {
        "AWS_REGION_NAME",       "AWS_REGION",        "AWS_DEFAULT_REGION",       "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "AWS_BEDROCK_RUNTIME_ENDPOINT"};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        unsetenv(v[i]);
}

/* params: key, value, ..., NULL. Returns configure()'s result. */
static int dep_init(struct dep *t, const char *model, int global_drop, const char *const *params, char *err,
                    size_t errlen)
{
    memset(t, 0, sizeof *t);
    size_t k = 0;
    for (; params && params[2 * k]; k++)
        t->kv[k] = (struct sy_kv){params[2 * k], params[2 * k + 1]};
    t->d.model = model;
    t->d.provider = "bedrock";
    t->d.upstream_model = model;
    t->d.params = t->kv;
    t->d.n_params = k;
    t->d.max_tokens = -1;
    for (size_t i = 0; i < k; i++) {
        if (!strcmp(t->kv[i].key, "api_key"))
            t->d.api_key = t->kv[i].value;
        if (!strcmp(t->kv[i].key, "api_base"))
            t->d.api_base = t->kv[i].value;
    }
    char e2[256];
    return B->configure(&t->d, global_drop, &t->pc, err ? err : e2, err ? errlen : sizeof e2);
}

/* ---- encode ------------------------------------------------------------------------ */

struct ecase {
    const char *name;
    const char *model;
    int op, stream, gdrop;
    const char *params[16];
    const char *fwd;
};

static const struct ecase ecases[] = {
    {"enc_text", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_stream_token",
     "converse/us.anthropic.claude-3-7-sonnet-20250219-v1:0",
     0,
     1,
     0,
     {"aws_access_key_id", AK, "aws_secret_access_key", SK, "aws_region_name", "eu-west-3", "aws_session_token",
      "IQoJb3JpZ2luX2VjEXAMPLE//////////wEaCXVzLWVhc3QtMSJHMEUCIQEXAMPLE+token/with=chars", NULL},
     NULL},
    {"enc_bearer",
     "meta.llama3-1-70b-instruct-v1:0",
     0,
     0,
     0,
     {"api_key", "bedrock-api-key-123", "api_base", "http://localhost:8080/bedrock/", NULL},
     NULL},
    {"enc_media", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_image_http", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_image_badfmt", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_tools", "anthropic.claude-3-5-haiku-20241022-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_tool_named", "mistral.mistral-large-2407-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_tool_none", "anthropic.claude-3-5-haiku-20241022-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_tool_none_drop",
     "anthropic.claude-3-5-haiku-20241022-v1:0",
     0,
     0,
     0,
     {CREDS, "drop_params", "true", NULL},
     NULL},
    {"enc_tool_choice_nova", "amazon.nova-pro-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_json_schema", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_json_object_text", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_reasoning_effort", "us.anthropic.claude-3-7-sonnet-20250219-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_thinking_history", "anthropic.claude-sonnet-4-20250514-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_gpt_oss", "openai.gpt-oss-120b-1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_nova_effort", "us.amazon.nova-2-lite-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_effort_unsupported", "meta.llama3-1-70b-instruct-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_seed", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_seed_drop", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0, 0, 1, {CREDS, NULL}, NULL},
    {"enc_additional_drop",
     "anthropic.claude-3-5-sonnet-20240620-v1:0",
     0,
     0,
     0,
     {CREDS, "additional_drop_params", "[\"temperature\"]", NULL},
     NULL},
    {"enc_calls_without_tools", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_invoke_route", "invoke/anthropic.claude-3-5-sonnet-20240620-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_no_creds", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0, 0, 0, {NULL}, NULL},
    {"enc_only_system", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_bad_args", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_model_id_arn",
     "anthropic.claude-3-5-sonnet-20240620-v1:0",
     0,
     0,
     0,
     {CREDS, "model_id", "arn:aws:bedrock:us-east-1:123456789012:provisioned-model/abc123", NULL},
     NULL},
    {"enc_beta",
     "anthropic.claude-sonnet-4-20250514-v1:0",
     0,
     0,
     0,
     {CREDS, NULL},
     "anthropic-beta: context-1m-2025-08-07, interleaved-thinking-2025-05-14\r\nx-other: 1\r\n"},
    {"enc_misc_shapes", "mistral.mistral-large-2407-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_role_function", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_input_audio", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_effort_bad", "anthropic.claude-3-7-sonnet-20250219-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_thinking_drop", "meta.llama3-1-70b-instruct-v1:0", 0, 0, 1, {CREDS, NULL}, NULL},
    {"enc_data_not_base64", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"enc_file_id", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0, 0, 0, {CREDS, NULL}, NULL},
    {"emb_titan_v2", "amazon.titan-embed-text-v2:0", 1, 0, 0, {CREDS, NULL}, NULL},
    {"emb_titan_list", "amazon.titan-embed-text-v2:0", 1, 0, 0, {CREDS, NULL}, NULL},
    {"emb_titan_v1_dim", "amazon.titan-embed-text-v1", 1, 0, 0, {CREDS, NULL}, NULL},
    {"emb_titan_v1_dim_drop", "amazon.titan-embed-text-v1", 1, 0, 0, {CREDS, "drop_params", "True", NULL}, NULL},
    {"emb_cohere", "cohere.embed-multilingual-v3", 1, 0, 0, {CREDS, NULL}, NULL},
    {"emb_unknown_model", "amazon.nova-2-multimodal-embeddings-v1:0", 1, 0, 0, {CREDS, NULL}, NULL},
    {"emb_tokens", "amazon.titan-embed-text-v2:0", 1, 0, 0, {CREDS, NULL}, NULL},
};

static void err_text(struct sy_buf *b, int rc, const struct sy_xerr *e)
{
    sy_buf_printf(b, "rc=%d status=%d type=%s param=%s cls=%s\n%s\n", rc, e->status, e->type, e->param, e->cls,
                  e->message);
}

static void run_encode(const struct ecase *c)
{
    struct dep t;
    assert_int_equal(dep_init(&t, c->model, c->gdrop, c->params, NULL, 0), 0);
    size_t n;
    char *in = slurp(gpath(c->name, ".in.json"), &n);
    assert_non_null(in);
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    assert_int_equal(sy_jdom_parse(&d, in, n, &a, 0), 0);
    struct sy_xctx x = {.d = &t.d,
                        .pc = &t.pc,
                        .model = c->model,
                        .op = c->op ? SY_OP_EMBED : SY_OP_CHAT,
                        .stream = c->stream,
                        .now = NOW,
                        .arena = &a,
                        .fwd_headers = c->fwd,
                        .fwd_headers_len = c->fwd ? strlen(c->fwd) : 0};
    struct sy_xout o;
    memset(&o, 0, sizeof o);
    sy_buf_init(&o.url, 4096);
    sy_buf_init(&o.headers, 16384);
    sy_buf_init(&o.body, 1 << 20);
    int rc = B->encode(&x, &d, &o);
    struct sy_buf g;
    sy_buf_init(&g, 1 << 22);
    if (rc) {
        err_text(&g, rc, &o.err);
        assert_true(o.err.status >= 400);
    } else {
        sy_buf_printf(&g, "rc=0\nURL %s\n", o.url.p);
        for (size_t i = 0; i < o.headers.len; i++) /* CRLF -> LF for readable files */
            if (!(o.headers.p[i] == '\r' && i + 1 < o.headers.len && o.headers.p[i + 1] == '\n'))
                sy_buf_append(&g, &o.headers.p[i], 1);
        sy_buf_printf(&g, "BODY\n%s\n", o.body.p);
        assert_json(o.body.p, o.body.len);
    }
    golden_check(c->name, g.p, g.len);
    sy_buf_free(&g);
    sy_buf_free(&o.url);
    sy_buf_free(&o.headers);
    sy_buf_free(&o.body);
    sy_arena_free(&a);
    sy_pconf_free(&t.pc);
    free(in);
}

static void t_encode(void **st)
{
    for (size_t i = 0; i < sizeof ecases / sizeof ecases[0]; i++)
        run_encode(&ecases[i]);
}

/* ---- responses ------------------------------------------------------------------- */

struct rcase {
    const char *name;
    const char *model;
    int op;
};

static const struct rcase rcases[] = {
    {"resp_text", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0},
    {"resp_cache_ttl", "anthropic.claude-sonnet-4-5-20250929-v1:0", 0},      /* cacheDetails: 1-hour writes */
    {"resp_cache_ttl_huge", "anthropic.claude-sonnet-4-5-20250929-v1:0", 0}, /* ... capped at the writes */
    {"resp_tools", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0},
    {"resp_reasoning", "anthropic.claude-3-7-sonnet-20250219-v1:0", 0},
    {"resp_json_mode", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0},
    {"resp_json_mode_plain", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0},
    {"resp_guardrail", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0},
    {"resp_think_tags", "us.deepseek.r1-v1:0", 0},
    {"resp_no_message", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0},
    {"resp_bad", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0},
    {"resp_no_output", "anthropic.claude-3-5-sonnet-20240620-v1:0", 0},
    {"resp_emb_titan", "amazon.titan-embed-text-v1", 1},
    {"resp_emb_titan_v2_bytype", "amazon.titan-embed-text-v2:0", 1},
    {"resp_emb_cohere", "cohere.embed-english-v3", 1},
    {"resp_emb_cohere_bytype", "cohere.embed-english-v3", 1},
};

static void init_state(struct sy_xstate *st)
{
    memset(st, 0, sizeof *st);
    snprintf(st->id, sizeof st->id, "chatcmpl-test");
    snprintf(st->model, sizeof st->model, "bedrock-model");
    st->created = 1700000000;
    st->include_usage = 1;
}

static void usage_text(struct sy_buf *g, const struct sy_xusage *u)
{
    sy_buf_printf(g, "USAGE have=%d prompt=%lld completion=%lld cache_read=%lld cache_write=%lld\n", u->have,
                  (long long)u->prompt, (long long)u->completion, (long long)u->cache_read, (long long)u->cache_write);
    if (u->cache_write_1h) /* only where a case has some (older goldens unchanged) */
        sy_buf_printf(g, "USAGE cache_write_1h=%lld\n", (long long)u->cache_write_1h);
}

static void run_response(const struct rcase *c)
{
    struct dep t;
    const char *params[] = {CREDS, NULL};
    assert_int_equal(dep_init(&t, c->model, 0, params, NULL, 0), 0);
    size_t n;
    char *body = slurp(gpath(c->name, ".resp.json"), &n);
    assert_non_null(body);
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_xctx x = {
        .d = &t.d, .pc = &t.pc, .model = c->model, .op = c->op ? SY_OP_EMBED : SY_OP_CHAT, .now = NOW, .arena = &a};
    struct sy_xstate st;
    init_state(&st);
    struct sy_buf out, g;
    sy_buf_init(&out, 1 << 20);
    sy_buf_init(&g, 1 << 20);
    int rc = B->decode_response(&x, &st, body, n, &out);
    if (rc) {
        assert_int_equal(rc, SY_EUPPROTO);
        err_text(&g, rc, &st.err);
    } else {
        assert_json(out.p, out.len);
        sy_buf_printf(&g, "rc=0\n%s\n", out.p);
        usage_text(&g, &st.u);
    }
    golden_check(c->name, g.p, g.len);
    sy_buf_free(&out);
    sy_buf_free(&g);
    sy_arena_free(&a);
    sy_pconf_free(&t.pc);
    free(body);
}

static void t_responses(void **st)
{
    for (size_t i = 0; i < sizeof rcases / sizeof rcases[0]; i++)
        run_response(&rcases[i]);
}

/* ---- streams ------------------------------------------------------------------------- */

/* Events file -> the AWS event-stream bytes Bedrock would send. */
static void encode_events(const char *path, struct sy_buf *wire)
{
    size_t n;
    char *txt = slurp(path, &n);
    assert_non_null(txt);
    for (char *line = txt; *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        char *sp = strchr(line, ' ');
        if (sp) {
            *sp = 0;
            const char *json = sp + 1;
            if (line[0] == '!') {
                const char *names[] = {":exception-type", ":content-type", ":message-type"};
                const char *values[] = {line + 1, "application/json", "exception"};
                assert_int_equal(sy_awses_encode(wire, names, values, 3, json, strlen(json)), 0);
            } else {
                const char *names[] = {":event-type", ":content-type", ":message-type"};
                const char *values[] = {line, "application/json", "event"};
                assert_int_equal(sy_awses_encode(wire, names, values, 3, json, strlen(json)), 0);
            }
        }
        if (!nl)
            break;
        line = nl + 1;
    }
    free(txt);
}

struct sctx {
    const struct sy_xctx *x;
    struct sy_xstate *st;
    struct sy_buf *out;
};

static int on_event(void *ud, const char *type, size_t tl, const char *data, size_t dl)
{
    struct sctx *s = ud;
    return B->decode_event(s->x, s->st, type, tl, data, dl, s->out);
}

/* Feed wire through the framer in pieces (step 0: random from seed); the transcript into g. */
static void run_wire(const char *model, const char *wire, size_t n, size_t step, unsigned seed, struct sy_buf *g)
{
    struct dep t;
    const char *params[] = {CREDS, NULL};
    assert_int_equal(dep_init(&t, model, 0, params, NULL, 0), 0);
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_xctx x = {.d = &t.d, .pc = &t.pc, .model = model, .stream = 1, .now = NOW, .arena = &a};
    struct sy_xstate st;
    init_state(&st);
    struct sy_buf out;
    sy_buf_init(&out, 1 << 22);
    struct sctx s = {&x, &st, &out};
    struct sy_framer f;
    memset(&f, 0, sizeof f);
    f.kind = SY_FRAME_AWS_EVENTSTREAM;
    f.max_event = 1 << 20;
    sy_buf_init(&f.acc, f.max_event + 1);
    int rc = 0;
    for (size_t off = 0; off < n && !rc;) {
        size_t k = step;
        if (!k) {
            seed = seed * 1103515245u + 12345u;
            k = 1 + (seed >> 16) % 61;
        }
        if (k > n - off)
            k = n - off;
        rc = sy_awses_feed(&f, wire + off, k, on_event, &s);
        off += k;
    }
    if (!rc)
        rc = sy_awses_finish(&f, on_event, &s);
    /* every chunk is "data: <json>\n\n" */
    for (const char *p = out.p ? out.p : ""; *p;) {
        assert_true(!strncmp(p, "data: ", 6));
        const char *e = strstr(p, "\n\n");
        assert_non_null(e);
        assert_json(p + 6, (size_t)(e - p - 6));
        p = e + 2;
    }
    if (out.len)
        sy_buf_append(g, out.p, out.len);
    sy_buf_printf(g, "RC %d done=%d finished=%d ntools=%d\n", rc, st.done, st.finished, st.ntools);
    usage_text(g, &st.u);
    if (rc < 0)
        err_text(g, rc, &st.err);
    sy_buf_free(&out);
    sy_buf_free(&f.acc);
    sy_arena_free(&a);
    sy_pconf_free(&t.pc);
}

struct scase {
    const char *name;
    const char *model;
};

static const struct scase scases[] = {
    {"stream_text", "anthropic.claude-3-5-sonnet-20240620-v1:0"},
    {"stream_tools", "anthropic.claude-3-5-sonnet-20240620-v1:0"},
    {"stream_reasoning", "anthropic.claude-3-7-sonnet-20250219-v1:0"},
    {"stream_exception", "anthropic.claude-3-5-sonnet-20240620-v1:0"},
    {"stream_exception_ctx", "anthropic.claude-3-5-sonnet-20240620-v1:0"},
    {"stream_model_error", "anthropic.claude-3-5-sonnet-20240620-v1:0"},
    {"stream_unavailable", "anthropic.claude-3-5-sonnet-20240620-v1:0"},
    {"stream_internal", "anthropic.claude-3-5-sonnet-20240620-v1:0"},
    {"stream_json_mode", "anthropic.claude-3-5-sonnet-20240620-v1:0"},
    {"stream_unknown_event", "meta.llama3-1-70b-instruct-v1:0"},
    {"stream_no_metadata", "anthropic.claude-3-5-sonnet-20240620-v1:0"},
};

static void t_streams(void **st)
{
    for (size_t i = 0; i < sizeof scases / sizeof scases[0]; i++) {
        struct sy_buf wire, g, g2;
        sy_buf_init(&wire, 1 << 22);
        encode_events(gpath(scases[i].name, ".events"), &wire);
        sy_buf_init(&g, 1 << 22);
        run_wire(scases[i].model, wire.p, wire.len, wire.len, 0, &g);
        golden_check(scases[i].name, g.p, g.len);
        /* the same transcript whatever the split */
        for (unsigned seed = 0; seed < 12; seed++) {
            sy_buf_init(&g2, 1 << 22);
            run_wire(scases[i].model, wire.p, wire.len, seed == 0 ? 1 : seed == 1 ? 7 : 0, seed, &g2);
            assert_int_equal(g2.len, g.len);
            assert_memory_equal(g2.p, g.p, g.len);
            sy_buf_free(&g2);
        }
        sy_buf_free(&g);
        sy_buf_free(&wire);
    }
}

/* A flipped byte anywhere: SY_EUPPROTO (a CRC), never a wrong chunk after it. */
static void t_stream_corrupt(void **st)
{
    struct sy_buf wire, good;
    sy_buf_init(&wire, 1 << 20);
    encode_events(gpath("stream_text", ".events"), &wire);
    sy_buf_init(&good, 1 << 20);
    run_wire("anthropic.claude-3-5-sonnet-20240620-v1:0", wire.p, wire.len, wire.len, 0, &good);
    for (size_t i = 0; i < wire.len; i += 3) {
        char *w = malloc(wire.len);
        memcpy(w, wire.p, wire.len);
        w[i] ^= 0x20;
        struct sy_buf g;
        sy_buf_init(&g, 1 << 20);
        run_wire("anthropic.claude-3-5-sonnet-20240620-v1:0", w, wire.len, 0, (unsigned)i, &g);
        assert_non_null(strstr(g.p, "RC -16 ")); /* SY_EUPPROTO */
        /* what came before the damaged message is a prefix of the good transcript */
        const char *rcl = strstr(g.p, "RC ");
        assert_memory_equal(g.p, good.p, (size_t)(rcl - g.p));
        sy_buf_free(&g);
        free(w);
    }
    sy_buf_free(&good);
    sy_buf_free(&wire);
}

/* The upstream closes mid-message: finish says SY_EUPPROTO. */
static void t_stream_truncated(void **st)
{
    struct sy_buf wire;
    sy_buf_init(&wire, 1 << 20);
    encode_events(gpath("stream_text", ".events"), &wire);
    struct sy_buf g;
    sy_buf_init(&g, 1 << 20);
    run_wire("anthropic.claude-3-5-sonnet-20240620-v1:0", wire.p, wire.len - 5, 0, 3, &g);
    assert_non_null(strstr(g.p, "RC -16 done=0 finished=1"));
    assert_null(strstr(g.p, "\"usage\""));
    sy_buf_free(&g);
    sy_buf_free(&wire);
}

/* Every stopReason through messageStop and through a Converse response. */
static void t_stop_reasons(void **st)
{
    static const struct {
        const char *bedrock, *openai;
    } t[] = {{"end_turn", "stop"},
             {"stop_sequence", "stop"},
             {"max_tokens", "length"},
             {"tool_use", "tool_calls"},
             {"guardrail_intervened", "content_filter"},
             {"content_filtered", "content_filter"},
             {"model_context_window_exceeded", "length"},
             {"something_new", "stop"}};
    struct dep d;
    const char *params[] = {CREDS, NULL};
    assert_int_equal(dep_init(&d, "anthropic.claude-3-5-sonnet-20240620-v1:0", 0, params, NULL, 0), 0);
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_xctx x = {.d = &d.d,
                            .pc = &d.pc,
                            .model = "anthropic.claude-3-5-sonnet-20240620-v1:0",
                            .stream = 1,
                            .now = NOW,
                            .arena = &a};
        struct sy_xstate s;
        init_state(&s);
        struct sy_buf out;
        sy_buf_init(&out, 1 << 16);
        char ev[512], want[128];
        int n = snprintf(ev, sizeof ev, "{\"stopReason\":\"%s\"}", t[i].bedrock);
        assert_int_equal(B->decode_event(&x, &s, "messageStop", 11, ev, (size_t)n, &out), 0);
        snprintf(want, sizeof want, "\"delta\":{},\"finish_reason\":\"%s\"}]}", t[i].openai);
        assert_non_null(strstr(out.p, want));
        assert_int_equal(s.finished, 1);
        /* a second messageStop writes nothing */
        size_t l = out.len;
        assert_int_equal(B->decode_event(&x, &s, "messageStop", 11, ev, (size_t)n, &out), 0);
        assert_int_equal(out.len, l);
        sy_buf_reset(&out);
        n = snprintf(ev, sizeof ev,
                     "{\"output\":{\"message\":{\"role\":\"assistant\",\"content\":[{\"text\":\"x\"}]}},"
                     "\"stopReason\":\"%s\",\"usage\":{\"inputTokens\":1,\"outputTokens\":1,\"totalTokens\":2}}",
                     t[i].bedrock);
        init_state(&s);
        assert_int_equal(B->decode_response(&x, &s, ev, (size_t)n, &out), 0);
        snprintf(want, sizeof want, "\"finish_reason\":\"%s\"", t[i].openai);
        assert_non_null(strstr(out.p, want));
        sy_buf_free(&out);
        sy_arena_free(&a);
    }
    sy_pconf_free(&d.pc);
}

/* ---- errors -------------------------------------------------------------------------- */

static void t_errors(void **st)
{
    static const struct {
        int status;
        const char *body;
        int want;
        const char *type, *cls;
    } t[] = {
        {400, "{\"message\":\"Malformed input request: #: extraneous key [foo] is not permitted\"}", 400,
         "invalid_request_error", ""},
        {400, "{\"message\":\"Input is too long for requested model.\"}", 400, "invalid_request_error",
         "ContextWindowExceededError"},
        {400, "{\"message\":\"prompt is too long: 210000 tokens > 200000 maximum\"}", 400, "invalid_request_error",
         "ContextWindowExceededError"},
        {403, "{\"message\":\"The security token included in the request is invalid.\"}", 401, "authentication_error",
         ""},
        {403, "{\"message\":\"User: arn:aws:iam::1:user/x is not authorized to perform: bedrock:InvokeModel\"}", 403,
         "permission_denied", ""},
        {404, "{\"message\":\"The provided model identifier is invalid.\"}", 404, "not_found_error", ""},
        {422, "{\"message\":\"unprocessable\"}", 400, "invalid_request_error", ""},
        {429, "{\"message\":\"Too many requests, please wait before trying again.\"}", 429, "rate_limit_error", ""},
        {400, "{\"message\":\"ThrottlingException: slow down\"}", 429, "rate_limit_error", ""},
        {500, "{\"message\":\"Internal server error\"}", 503, "service_unavailable", ""},
        {500, "{\"message\":\"Could not process image\"}", 500, "api_error", ""},
        {503, "{\"message\":\"Bedrock is unable to process your request.\"}", 503, "service_unavailable", ""},
        {504, "upstream timed out\n", 408, "timeout", ""},
        {424, "{\"message\":\"Model stream error\"}", 424, "invalid_request_error", ""},
    };
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_xctx x = {.model = "anthropic.claude-3-5-sonnet-20240620-v1:0", .arena = &a};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        struct sy_xerr e;
        memset(&e, 0, sizeof e);
        B->decode_error(&x, t[i].status, t[i].body, strlen(t[i].body), &e);
        assert_int_equal(e.status, t[i].want);
        assert_string_equal(e.type, t[i].type);
        assert_string_equal(e.cls, t[i].cls);
        /* the message is the body (LiteLLM's BedrockException text), trailing newline cut */
        size_t bl = strlen(t[i].body);
        while (bl && t[i].body[bl - 1] == '\n')
            bl--;
        assert_int_equal(strlen(e.message), bl);
        assert_memory_equal(e.message, t[i].body, bl);
    }
    /* a huge body is cut to the message buffer */
    char *big = malloc(5000);
    memset(big, 'x', 5000);
    struct sy_xerr e;
    B->decode_error(&x, 400, big, 5000, &e);
    assert_int_equal(strlen(e.message), sizeof e.message - 1);
    B->decode_error(&x, 502, NULL, 0, &e);
    assert_int_equal(e.status, 502);
    assert_string_equal(e.message, "");
    free(big);
    sy_arena_free(&a);
}

/* ---- configure ------------------------------------------------------------------------- */

static void t_configure(void **st)
{
    struct dep t;
    char err[256];
    clear_env();
    /* defaults: us-west-2 (LiteLLM's), the regional endpoint, no credentials */
    assert_int_equal(dep_init(&t, "anthropic.claude-3-5-sonnet-20240620-v1:0", 0, NULL, err, sizeof err), 0);
    assert_string_equal(t.pc.region, "us-west-2");
    assert_string_equal(t.pc.base, "https://bedrock-runtime.us-west-2.amazonaws.com");
    assert_null(t.pc.access_key);
    assert_null(t.pc.key);
    assert_int_equal(t.pc.drop_params, 0);
    assert_int_equal(t.pc.max_tokens, -1);
    sy_pconf_free(&t.pc);
    /* the environment, in LiteLLM's order */
    setenv("AWS_DEFAULT_REGION", "eu-central-1", 1);
    assert_int_equal(dep_init(&t, "m", 1, NULL, err, sizeof err), 0);
    assert_string_equal(t.pc.region, "eu-central-1");
    assert_int_equal(t.pc.drop_params, 1);
    sy_pconf_free(&t.pc);
    setenv("AWS_REGION", "eu-west-1", 1);
    setenv("AWS_REGION_NAME", "ap-south-1", 1);
    setenv("AWS_ACCESS_KEY_ID", "AKENV", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "SKENV", 1);
    setenv("AWS_SESSION_TOKEN", "TKENV", 1);
    setenv("AWS_BEDROCK_RUNTIME_ENDPOINT", "https://vpce-1.bedrock-runtime.ap-south-1.vpce.amazonaws.com/", 1);
    assert_int_equal(dep_init(&t, "m", 0, NULL, err, sizeof err), 0);
    assert_string_equal(t.pc.region, "ap-south-1");
    assert_string_equal(t.pc.access_key, "AKENV");
    assert_string_equal(t.pc.secret_key, "SKENV");
    assert_string_equal(t.pc.session_token, "TKENV");
    assert_string_equal(t.pc.base, "https://vpce-1.bedrock-runtime.ap-south-1.vpce.amazonaws.com");
    sy_pconf_free(&t.pc);
    /* params win; the region of an ARN model comes before the environment */
    const char *p1[] = {"aws_access_key_id",
                        "AKP",
                        "aws_secret_access_key",
                        "SKP",
                        "aws_bedrock_runtime_endpoint",
                        "http://127.0.0.1:9000",
                        "drop_params",
                        "false",
                        NULL};
    assert_int_equal(
        dep_init(&t, "arn:aws:bedrock:us-gov-west-1:123:inference-profile/us.anthropic.x", 1, p1, err, sizeof err), 0);
    assert_string_equal(t.pc.region, "us-gov-west-1");
    assert_string_equal(t.pc.access_key, "AKP");
    assert_string_equal(t.pc.base, "http://127.0.0.1:9000");
    assert_int_equal(t.pc.drop_params, 0);
    sy_pconf_free(&t.pc);
    /* bearer from the environment; AWS_BEDROCK_RUNTIME_ENDPOINT comes before api_base (LiteLLM's
     * converse handler sends to it) */
    setenv("AWS_BEARER_TOKEN_BEDROCK", "ABSK-env", 1);
    const char *p2[] = {"aws_region_name", "us-east-2", "api_base", "https://proxy.example/bedrock", NULL};
    assert_int_equal(dep_init(&t, "m", 0, p2, err, sizeof err), 0);
    assert_string_equal(t.pc.key, "ABSK-env");
    assert_string_equal(t.pc.region, "us-east-2");
    assert_string_equal(t.pc.base, "https://vpce-1.bedrock-runtime.ap-south-1.vpce.amazonaws.com");
    sy_pconf_free(&t.pc);
    unsetenv("AWS_BEDROCK_RUNTIME_ENDPOINT");
    assert_int_equal(dep_init(&t, "m", 0, p2, err, sizeof err), 0);
    assert_string_equal(t.pc.base, "https://proxy.example/bedrock");
    sy_pconf_free(&t.pc);
    /* additional_drop_params and max_tokens */
    const char *p3[] = {"additional_drop_params", "[\"temperature\", \"top_p\"]", NULL};
    assert_int_equal(dep_init(&t, "m", 0, p3, err, sizeof err), 0);
    assert_int_equal(t.pc.n_drop_extra, 2);
    assert_string_equal(t.pc.drop_extra[1], "top_p");
    sy_pconf_free(&t.pc);
    /* refused settings */
    const char *p4[] = {"aws_role_name", "arn:aws:iam::1:role/x", NULL};
    assert_int_equal(dep_init(&t, "m", 0, p4, err, sizeof err), -1);
    assert_non_null(strstr(err, "aws_role_name"));
    sy_pconf_free(&t.pc);
    const char *p5[] = {"api_base", "ftp://x", NULL};
    assert_int_equal(dep_init(&t, "m", 0, p5, err, sizeof err), -1);
    sy_pconf_free(&t.pc);
    const char *p6[] = {"additional_drop_params", "temperature", NULL};
    assert_int_equal(dep_init(&t, "m", 0, p6, err, sizeof err), -1);
    sy_pconf_free(&t.pc);
    clear_env();
    memset(&t, 0, sizeof t);
    t.d.max_tokens = 8192;
    t.d.model = t.d.upstream_model = "m";
    assert_int_equal(B->configure(&t.d, 0, &t.pc, err, sizeof err), 0);
    assert_int_equal(t.pc.max_tokens, 8192);
    sy_pconf_free(&t.pc);
}

/* Bearer vs SigV4 with a fixed clock: the signature moves with the body and the time. */
static void t_signature_inputs(void **st)
{
    clear_env();
    struct dep t;
    const char *params[] = {CREDS, NULL};
    assert_int_equal(dep_init(&t, "anthropic.claude-3-5-sonnet-20240620-v1:0", 0, params, NULL, 0), 0);
    const char *bodies[] = {"{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}]}",
                            "{\"messages\":[{\"role\":\"user\",\"content\":\"b\"}]}"};
    char sig[3][80];
    for (int i = 0; i < 3; i++) {
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_jdoc d;
        const char *b = bodies[i == 1];
        assert_int_equal(sy_jdom_parse(&d, b, strlen(b), &a, 0), 0);
        struct sy_xctx x = {.d = &t.d, .pc = &t.pc, .model = t.d.model, .now = NOW + (i == 2), .arena = &a};
        struct sy_xout o;
        memset(&o, 0, sizeof o);
        sy_buf_init(&o.url, 4096);
        sy_buf_init(&o.headers, 4096);
        sy_buf_init(&o.body, 4096);
        assert_int_equal(B->encode(&x, &d, &o), 0);
        const char *s = strstr(o.headers.p, "Signature=");
        assert_non_null(s);
        snprintf(sig[i], sizeof sig[i], "%.74s", s);
        assert_non_null(strstr(o.headers.p, i == 2 ? "X-Amz-Date: 20150830T123601Z" : "X-Amz-Date: 20150830T123600Z"));
        sy_buf_free(&o.url);
        sy_buf_free(&o.headers);
        sy_buf_free(&o.body);
        sy_arena_free(&a);
    }
    assert_string_not_equal(sig[0], sig[1]);
    assert_string_not_equal(sig[0], sig[2]);
    sy_pconf_free(&t.pc);
}

/* Small output buffers: encode refuses cleanly. */
static void t_small_buffers(void **st)
{
    clear_env();
    struct dep t;
    const char *params[] = {CREDS, NULL};
    assert_int_equal(dep_init(&t, "anthropic.claude-3-5-sonnet-20240620-v1:0", 0, params, NULL, 0), 0);
    size_t n;
    char *in = slurp(gpath("enc_media", ".in.json"), &n);
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    assert_int_equal(sy_jdom_parse(&d, in, n, &a, 0), 0);
    struct sy_xctx x = {.d = &t.d, .pc = &t.pc, .model = t.d.model, .now = NOW, .arena = &a};
    size_t caps[][3] = {{4096, 4096, 64}, {4096, 16, 1 << 20}, {8, 4096, 1 << 20}};
    for (size_t i = 0; i < 3; i++) {
        struct sy_xout o;
        memset(&o, 0, sizeof o);
        sy_buf_init(&o.url, caps[i][0]);
        sy_buf_init(&o.headers, caps[i][1]);
        sy_buf_init(&o.body, caps[i][2]);
        int rc = B->encode(&x, &d, &o);
        assert_true(rc < 0);
        assert_int_equal(o.err.status, 413);
        sy_buf_free(&o.url);
        sy_buf_free(&o.headers);
        sy_buf_free(&o.body);
    }
    sy_arena_free(&a);
    sy_pconf_free(&t.pc);
    free(in);
}

static int setup(void **st)
{
    clear_env();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(t_encode, setup),           cmocka_unit_test_setup(t_responses, setup),
        cmocka_unit_test_setup(t_streams, setup),          cmocka_unit_test_setup(t_stream_corrupt, setup),
        cmocka_unit_test_setup(t_stream_truncated, setup), cmocka_unit_test_setup(t_stop_reasons, setup),
        cmocka_unit_test_setup(t_errors, setup),           cmocka_unit_test_setup(t_configure, setup),
        cmocka_unit_test_setup(t_signature_inputs, setup), cmocka_unit_test_setup(t_small_buffers, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
