/* test_anthropic.c - the Anthropic Messages adapter (providers/anthropic.c)
 * against its golden files, plus configure() and a few direct checks.
 *
 * Each directory under golden/anthropic/ is one case; the files present say
 * what it checks (expected files are compared byte for byte):
 *
 *   ctx            optional settings, "key=value" lines: model, stream, vertex,
 *                  op=embed, drop_params, drop_extra=a,b, max_tokens, key (empty:
 *                  none), base, fwd (a forwarded header line, repeatable), status
 *   req.json       an OpenAI request -> url, headers (CRLF shown as LF), body.json;
 *                  or encode_error when encode fails
 *   resp.json      an Anthropic response body -> resp_out.json (or resp_error)
 *   stream.sse     a recorded SSE stream (event:/data: blocks) -> stream_out.txt:
 *                  the chunks written, then "=> DONE" / "=> ERROR ..." and the
 *                  final id, model and usage
 *   error_body     an error body, with ctx status=N -> error_out
 *
 *   errors are written "<status> <type> <cls>\n<message>\n".
 *
 * Every body, response and chunk is also checked to be JSON with json-c.
 * SY_GOLDEN_UPDATE=1 in the environment rewrites the expected files (=new
 * writes only the missing ones).
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
#include <json.h>

#include "core/errors.h"
#include "providers/anthropic.h"
#include "providers/oai.h"

#define CASES GOLDEN_DIR "/anthropic"

static char *slurp(const char *dir, const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    size_t r = fread(p, 1, (size_t)n, f);
    fclose(f);
    p[r] = 0;
    if (len)
        *len = r;
    return p;
}

/* SY_GOLDEN_UPDATE=1: rewrite every expected file; =new: write the missing ones. */
static int updating(const char *path)
{
    const char *u = getenv("SY_GOLDEN_UPDATE");
    if (u && !strcmp(u, "new")) {
        FILE *f = fopen(path, "rb");
        if (f)
            fclose(f);
        return !f;
    }
    return u && *u == '1';
}

/* Compare actual against the expected file (or write it when updating). */
static void expect(const char *dir, const char *name, const char *actual, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (updating(path)) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fwrite(actual, 1, n, f);
        fclose(f);
        return;
    }
    size_t el;
    char *want = slurp(dir, name, &el);
    if (!want)
        fail_msg("%s: missing expected file %s", dir, name);
    if (el != n || memcmp(want, actual, n)) {
        print_error("%s/%s differs\n--- expected\n%s\n--- actual\n%.*s\n", dir, name, want, (int)n, actual);
        free(want);
        fail();
    }
    free(want);
}

static void json_ok(const char *what, const char *p, size_t n)
{
    char *s = strndup(p, n);
    struct json_tokener *tok = json_tokener_new();
    json_object *o = json_tokener_parse_ex(tok, s, (int)n);
    int ok = o && json_tokener_get_error(tok) == json_tokener_success && tok->char_offset == (int)n;
    if (!ok)
        print_error("%s is not JSON: %s\n", what, s);
    json_object_put(o);
    json_tokener_free(tok);
    free(s);
    assert_true(ok);
}

struct ctx {
    char model[128], key[128], base[256];
    char fwd[1024];
    char drop_extra_buf[256];
    char *drop_extra[8];
    int stream, vertex, embed, drop_params, status, have_key;
    int64_t max_tokens;
};

static void read_ctx(const char *dir, struct ctx *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->model, sizeof c->model, "claude-3-5-sonnet-20241022");
    snprintf(c->key, sizeof c->key, "sk-ant-test");
    snprintf(c->base, sizeof c->base, "https://api.anthropic.com");
    c->have_key = 1;
    c->max_tokens = -1;
    char *t = slurp(dir, "ctx", NULL);
    if (!t)
        return;
    size_t fl = 0;
    for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n")) {
        char *eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = 0;
        const char *v = eq + 1;
        if (!strcmp(line, "model"))
            snprintf(c->model, sizeof c->model, "%s", v);
        else if (!strcmp(line, "key"))
            snprintf(c->key, sizeof c->key, "%s", v), c->have_key = *v != 0;
        else if (!strcmp(line, "base"))
            snprintf(c->base, sizeof c->base, "%s", v);
        else if (!strcmp(line, "stream"))
            c->stream = atoi(v);
        else if (!strcmp(line, "vertex"))
            c->vertex = atoi(v);
        else if (!strcmp(line, "op"))
            c->embed = !strcmp(v, "embed");
        else if (!strcmp(line, "drop_params"))
            c->drop_params = atoi(v);
        else if (!strcmp(line, "max_tokens"))
            c->max_tokens = atoll(v);
        else if (!strcmp(line, "status"))
            c->status = atoi(v);
        else if (!strcmp(line, "fwd"))
            fl += (size_t)snprintf(c->fwd + fl, sizeof c->fwd - fl, "%s\r\n", v);
        else if (!strcmp(line, "drop_extra")) {
            snprintf(c->drop_extra_buf, sizeof c->drop_extra_buf, "%s", v);
            size_t n = 0;
            for (char *p = c->drop_extra_buf; p && n < 8; n++) {
                c->drop_extra[n] = p;
                p = strchr(p, ',');
                if (p)
                    *p++ = 0;
            }
        }
    }
    free(t);
}

static void make(struct ctx *c, struct sy_pconf *pc, struct sy_xctx *x, struct sy_arena *a)
{
    memset(pc, 0, sizeof *pc);
    pc->base = c->base;
    pc->key = c->have_key ? c->key : NULL;
    pc->version = "2023-06-01";
    pc->drop_params = c->drop_params;
    pc->max_tokens = c->max_tokens;
    pc->drop_extra = c->drop_extra;
    while (pc->n_drop_extra < 8 && c->drop_extra[pc->n_drop_extra])
        pc->n_drop_extra++;
    memset(x, 0, sizeof *x);
    x->pc = pc;
    x->model = c->model;
    x->op = c->embed ? SY_OP_EMBED : SY_OP_CHAT;
    x->stream = c->stream;
    x->now = 1700000000;
    x->arena = a;
    x->fwd_headers = c->fwd[0] ? c->fwd : NULL;
    x->fwd_headers_len = strlen(c->fwd);
}

static void fmt_err(struct sy_buf *b, const struct sy_xerr *e)
{
    sy_buf_printf(b, "%d %s %s\n%s\n", e->status, e->type, e->cls, e->message);
}

static void init_state(struct sy_xstate *st, const struct ctx *c)
{
    memset(st, 0, sizeof *st);
    snprintf(st->id, sizeof st->id, "chatcmpl-test");
    snprintf(st->model, sizeof st->model, "%s", c->model);
    st->created = 1700000000;
}

static void run_encode(const char *dir, struct ctx *c, const char *req, size_t rl)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_pconf pc;
    struct sy_xctx x;
    make(c, &pc, &x, &a);
    struct sy_jdoc d;
    assert_int_equal(sy_jdom_parse(&d, req, rl, &a, 0), 0);
    struct sy_xout o;
    memset(&o, 0, sizeof o);
    sy_buf_init(&o.url, 4096);
    sy_buf_init(&o.headers, 16384);
    sy_buf_init(&o.body, 1 << 24);
    int rc = c->vertex ? sy_anthropic_encode_body(&x, &d, 1, &o.body, &o.err) : sy_adapter_anthropic.encode(&x, &d, &o);
    if (rc) {
        struct sy_buf b;
        sy_buf_init(&b, 1 << 16);
        fmt_err(&b, &o.err);
        assert_true(o.err.status >= 400);
        expect(dir, "encode_error", b.p, b.len);
        sy_buf_free(&b);
    } else {
        json_ok("body", o.body.p, o.body.len);
        sy_buf_append(&o.body, "\n", 1);
        expect(dir, "body.json", o.body.p, o.body.len);
        if (!c->vertex) {
            sy_buf_append(&o.url, "\n", 1);
            expect(dir, "url", o.url.p, o.url.len);
            /* every header line ends in CRLF; the file shows LF */
            struct sy_buf h;
            sy_buf_init(&h, 1 << 16);
            for (size_t i = 0; i < o.headers.len; i++) {
                if (o.headers.p[i] == '\r') {
                    assert_true(i + 1 < o.headers.len && o.headers.p[i + 1] == '\n');
                    continue;
                }
                if (o.headers.p[i] == '\n')
                    assert_true(i > 0 && o.headers.p[i - 1] == '\r');
                sy_buf_append(&h, o.headers.p + i, 1);
            }
            expect(dir, "headers", h.p ? h.p : "", h.len);
            sy_buf_free(&h);
        }
    }
    sy_buf_free(&o.url);
    sy_buf_free(&o.headers);
    sy_buf_free(&o.body);
    sy_arena_free(&a);
}

static void run_response(const char *dir, struct ctx *c, const char *body, size_t n)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_pconf pc;
    struct sy_xctx x;
    make(c, &pc, &x, &a);
    struct sy_xstate st;
    init_state(&st, c);
    struct sy_buf out;
    sy_buf_init(&out, 1 << 24);
    int rc = sy_adapter_anthropic.decode_response(&x, &st, body, n, &out);
    if (rc) {
        assert_int_equal(rc, SY_EUPPROTO);
        struct sy_buf b;
        sy_buf_init(&b, 1 << 16);
        fmt_err(&b, &st.err);
        expect(dir, "resp_error", b.p, b.len);
        sy_buf_free(&b);
    } else {
        json_ok("response", out.p, out.len);
        sy_buf_append(&out, "\n", 1);
        expect(dir, "resp_out.json", out.p, out.len);
    }
    sy_buf_free(&out);
    sy_arena_free(&a);
}

/* Split the recorded SSE text into events (blank-line separated blocks of
 * `event:` / `data:` lines; data lines joined by "\n") and decode each. */
static void run_stream(const char *dir, struct ctx *c, char *sse)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_pconf pc;
    struct sy_xctx x;
    make(c, &pc, &x, &a);
    struct sy_xstate st;
    init_state(&st, c);
    struct sy_buf out, data;
    sy_buf_init(&out, 1 << 24);
    sy_buf_init(&data, 1 << 20);
    char type[128] = "";
    int rc = 0, nev = 0;
    char *p = sse;
    for (;;) {
        char *nl = strchr(p, '\n');
        size_t ll = nl ? (size_t)(nl - p) : strlen(p);
        if (ll == 0) { /* dispatch */
            if (data.len) {
                size_t before = out.len;
                rc = sy_adapter_anthropic.decode_event(&x, &st, type, strlen(type), data.p, data.len, &out);
                nev++;
                /* every frame is "data: <json>\n\n" */
                for (size_t q = before; q < out.len;) {
                    assert_memory_equal(out.p + q, "data: ", 6);
                    char *end = strstr(out.p + q, "\n\n");
                    assert_non_null(end);
                    json_ok("chunk", out.p + q + 6, (size_t)(end - out.p - q - 6));
                    q = (size_t)(end - out.p) + 2;
                }
                if (rc)
                    break;
            }
            type[0] = 0;
            sy_buf_reset(&data);
        } else if (ll >= 6 && !memcmp(p, "event:", 6)) {
            const char *v = p + 6 + (p[6] == ' ');
            snprintf(type, sizeof type, "%.*s", (int)(ll - (size_t)(v - p)), v);
        } else if (ll >= 5 && !memcmp(p, "data:", 5)) {
            const char *v = p + 5 + (p[5] == ' ');
            if (data.len)
                sy_buf_append(&data, "\n", 1);
            sy_buf_append(&data, v, ll - (size_t)(v - p));
        }
        if (!nl)
            break;
        p = nl + 1;
    }
    assert_true(nev > 0);
    if (rc == SY_DONE)
        sy_buf_printf(&out, "=> DONE\n");
    else if (rc)
        sy_buf_printf(&out, "=> ERROR %d %s %s: %s\n", st.err.status, st.err.type, st.err.cls, st.err.message);
    else
        sy_buf_printf(&out, "=> (stream not ended)\n");
    sy_buf_printf(&out, "=> id %s model %s finished %d tools %d\n=> usage {", st.id, st.model, st.finished, st.ntools);
    sy_oai_usage_members(&st.u, &out);
    sy_buf_printf(&out, "}\n");
    expect(dir, "stream_out.txt", out.p, out.len);
    sy_buf_free(&out);
    sy_buf_free(&data);
    sy_arena_free(&a);
}

static void run_error(const char *dir, struct ctx *c, const char *body, size_t n)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_pconf pc;
    struct sy_xctx x;
    make(c, &pc, &x, &a);
    struct sy_xerr e;
    memset(&e, 0, sizeof e);
    sy_adapter_anthropic.decode_error(&x, c->status, body, n, &e);
    struct sy_buf b;
    sy_buf_init(&b, 1 << 16);
    fmt_err(&b, &e);
    expect(dir, "error_out", b.p, b.len);
    sy_buf_free(&b);
    sy_arena_free(&a);
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_golden(void **state)
{
    (void)state;
    DIR *dp = opendir(CASES);
    assert_non_null(dp);
    char *names[512];
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(dp)) && n < 512)
        if (de->d_name[0] != '.')
            names[n++] = strdup(de->d_name);
    closedir(dp);
    qsort(names, n, sizeof names[0], cmp);
    int checked = 0;
    for (size_t i = 0; i < n; i++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", CASES, names[i]);
        struct ctx c;
        read_ctx(dir, &c);
        size_t l;
        char *s;
        int any = 0;
        if ((s = slurp(dir, "req.json", &l))) {
            run_encode(dir, &c, s, l);
            free(s);
            any = 1;
        }
        if ((s = slurp(dir, "resp.json", &l))) {
            run_response(dir, &c, s, l);
            free(s);
            any = 1;
        }
        if ((s = slurp(dir, "stream.sse", &l))) {
            run_stream(dir, &c, s);
            free(s);
            any = 1;
        }
        if ((s = slurp(dir, "error_body", &l))) {
            run_error(dir, &c, s, l);
            free(s);
            any = 1;
        }
        if (!any)
            fail_msg("%s: no input file", dir);
        checked++;
        free(names[i]);
    }
    print_message("anthropic golden cases: %d\n", checked);
    assert_true(checked >= 25);
}

/* ---- configure ---------------------------------------------------------- */

static int configure(struct sy_deployment *d, struct sy_kv *kv, size_t nkv, int global, struct sy_pconf *pc)
{
    d->params = kv;
    d->n_params = nkv;
    memset(pc, 0, sizeof *pc);
    char err[128];
    return sy_adapter_anthropic.configure(d, global, pc, err, sizeof err);
}

static void test_configure(void **state)
{
    (void)state;
    struct sy_deployment d;
    struct sy_pconf pc;
    memset(&d, 0, sizeof d);
    d.max_tokens = -1;
    unsetenv("ANTHROPIC_API_BASE");
    unsetenv("ANTHROPIC_BASE_URL");
    setenv("ANTHROPIC_API_KEY", "sk-env", 1);
    assert_int_equal(configure(&d, NULL, 0, 0, &pc), 0);
    assert_string_equal(pc.base, "https://api.anthropic.com");
    assert_string_equal(pc.key, "sk-env");
    assert_string_equal(pc.version, "2023-06-01");
    assert_int_equal(pc.drop_params, 0);
    assert_int_equal(pc.max_tokens, -1);
    assert_int_equal(pc.n_drop_extra, 0);
    sy_pconf_free(&pc);

    /* litellm_params win; a base ending in /v1/messages or /v1 is trimmed */
    d.api_base = "https://gw.example.com/anthropic/v1/messages/";
    d.api_key = "sk-param";
    d.max_tokens = 8192;
    struct sy_kv kv[] = {{"drop_params", "true"}, {"additional_drop_params", "[\"logit_bias\", \"seed\"]"}};
    assert_int_equal(configure(&d, kv, 2, 0, &pc), 0);
    assert_string_equal(pc.base, "https://gw.example.com/anthropic");
    assert_string_equal(pc.key, "sk-param");
    assert_int_equal(pc.drop_params, 1);
    assert_int_equal(pc.max_tokens, 8192);
    assert_int_equal(pc.n_drop_extra, 2);
    assert_string_equal(pc.drop_extra[0], "logit_bias");
    assert_string_equal(pc.drop_extra[1], "seed");
    sy_pconf_free(&pc);

    d.api_base = "http://localhost:8080/v1";
    struct sy_kv kv2[] = {{"drop_params", "false"}, {"additional_drop_params", "['user']"}};
    assert_int_equal(configure(&d, kv2, 2, 1, &pc), 0);
    assert_string_equal(pc.base, "http://localhost:8080");
    assert_int_equal(pc.drop_params, 0); /* the deployment's false beats the global true */
    assert_int_equal(pc.n_drop_extra, 1);
    assert_string_equal(pc.drop_extra[0], "user");
    sy_pconf_free(&pc);

    /* environment fallbacks; global drop_params */
    d.api_base = NULL;
    d.api_key = NULL;
    d.max_tokens = -1;
    setenv("ANTHROPIC_BASE_URL", "https://proxy.example.com/", 1);
    unsetenv("ANTHROPIC_API_KEY");
    assert_int_equal(configure(&d, NULL, 0, 1, &pc), 0);
    assert_string_equal(pc.base, "https://proxy.example.com");
    assert_null(pc.key);
    assert_int_equal(pc.drop_params, 1);
    sy_pconf_free(&pc);
    setenv("ANTHROPIC_API_BASE", "https://first.example.com", 1);
    assert_int_equal(configure(&d, NULL, 0, 0, &pc), 0);
    assert_string_equal(pc.base, "https://first.example.com");
    sy_pconf_free(&pc);
    unsetenv("ANTHROPIC_API_BASE");
    unsetenv("ANTHROPIC_BASE_URL");
}

/* ---- direct checks ------------------------------------------------------ */

/* The stream state is per call: text split anywhere, many events, the same
 * content-block index reused after a stop. */
static void test_stream_many_blocks(void **state)
{
    (void)state;
    struct sy_arena a;
    sy_arena_init(&a);
    struct ctx c;
    memset(&c, 0, sizeof c);
    snprintf(c.model, sizeof c.model, "m");
    struct sy_pconf pc;
    struct sy_xctx x;
    make(&c, &pc, &x, &a);
    struct sy_xstate st;
    init_state(&st, &c);
    struct sy_buf out;
    sy_buf_init(&out, 1 << 24);
    char ev[256];
    for (int i = 0; i < 300; i++) { /* 300 tool blocks: more than the slot table holds at once */
        int n = snprintf(ev, sizeof ev,
                         "{\"type\":\"content_block_start\",\"index\":%d,\"content_block\":{\"type\":\"tool_use\","
                         "\"id\":\"toolu_%d\",\"name\":\"f\",\"input\":{}}}",
                         i, i);
        assert_int_equal(sy_adapter_anthropic.decode_event(&x, &st, "", 0, ev, (size_t)n, &out), 0);
        n = snprintf(ev, sizeof ev,
                     "{\"type\":\"content_block_delta\",\"index\":%d,\"delta\":{\"type\":\"input_json_delta\","
                     "\"partial_json\":\"{\\\"i\\\":%d}\"}}",
                     i, i);
        size_t before = out.len;
        assert_int_equal(sy_adapter_anthropic.decode_event(&x, &st, "", 0, ev, (size_t)n, &out), 0);
        char want[96];
        snprintf(want, sizeof want, "\"tool_calls\":[{\"index\":%d,\"function\":{\"arguments\":\"{\\\"i\\\":%d}\"}}]",
                 i, i);
        assert_non_null(strstr(out.p + before, want));
        n = snprintf(ev, sizeof ev, "{\"type\":\"content_block_stop\",\"index\":%d}", i);
        before = out.len;
        assert_int_equal(sy_adapter_anthropic.decode_event(&x, &st, "", 0, ev, (size_t)n, &out), 0);
        assert_int_equal(out.len, before); /* arguments came: no "{}" */
    }
    assert_int_equal(st.ntools, 300);
    static const char stop[] = "{\"type\":\"message_stop\"}";
    assert_int_equal(sy_adapter_anthropic.decode_event(&x, &st, "", 0, stop, sizeof stop - 1, &out), SY_DONE);
    assert_true(st.done && st.finished);
    sy_buf_free(&out);
    sy_arena_free(&a);
}

/* The SSE event name is used when the data has no "type"; a late message_start. */
static void test_event_type_fallback(void **state)
{
    (void)state;
    struct sy_arena a;
    sy_arena_init(&a);
    struct ctx c;
    memset(&c, 0, sizeof c);
    struct sy_pconf pc;
    struct sy_xctx x;
    make(&c, &pc, &x, &a);
    struct sy_xstate st;
    init_state(&st, &c);
    struct sy_buf out;
    sy_buf_init(&out, 1 << 20);
    /* a message_start after a chunk was written leaves the chunks' id and model alone */
    static const char cbs[] = "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":"
                              "\"text\",\"text\":\"early\"}}";
    static const char ms[] = "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_late\",\"model\":\"other\","
                             "\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}";
    assert_int_equal(sy_adapter_anthropic.decode_event(&x, &st, "", 0, cbs, sizeof cbs - 1, &out), 0);
    assert_int_equal(sy_adapter_anthropic.decode_event(&x, &st, "", 0, ms, sizeof ms - 1, &out), 0);
    assert_string_equal(st.id, "chatcmpl-test");
    assert_int_equal(st.u.prompt, 3);
    assert_int_equal(sy_adapter_anthropic.decode_event(&x, &st, "message_stop", 12, "{}", 2, &out), SY_DONE);
    assert_int_equal(sy_adapter_anthropic.decode_event(&x, &st, "ping", 4, "{}", 2, &out), 0);
    assert_int_equal(sy_adapter_anthropic.decode_event(&x, &st, "", 0, "[1]", 3, &out), SY_EUPPROTO);
    assert_int_equal(st.err.status, 500);
    sy_buf_free(&out);
    sy_arena_free(&a);
}

/* With st.model_fixed (the gateway set the name the client asked for) the
 * provider's model in a response or message_start does not replace it;
 * without, it does (LiteLLM's transformation reports the provider's). */
static void test_model_fixed(void **state)
{
    (void)state;
    static const char resp[] = "{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":"
                               "\"claude-sonnet-4-5-20250929\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],"
                               "\"stop_reason\":\"end_turn\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}";
    static const char ms[] = "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_2\",\"model\":"
                             "\"claude-sonnet-4-5-20250929\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}";
    for (int fixed = 0; fixed < 2; fixed++) {
        struct sy_arena a;
        sy_arena_init(&a);
        struct ctx c;
        memset(&c, 0, sizeof c);
        struct sy_pconf pc;
        struct sy_xctx x;
        make(&c, &pc, &x, &a);
        const char *want = fixed ? "claude-sonnet-4-5" : "claude-sonnet-4-5-20250929";
        struct sy_buf out;
        sy_buf_init(&out, 1 << 20);
        struct sy_xstate st;
        init_state(&st, &c);
        snprintf(st.model, sizeof st.model, "claude-sonnet-4-5");
        st.model_fixed = fixed;
        assert_int_equal(sy_adapter_anthropic.decode_response(&x, &st, resp, sizeof resp - 1, &out), 0);
        assert_string_equal(st.model, want);
        assert_non_null(strstr(out.p, want));
        init_state(&st, &c);
        snprintf(st.model, sizeof st.model, "claude-sonnet-4-5");
        st.model_fixed = fixed;
        sy_buf_reset(&out);
        assert_int_equal(sy_adapter_anthropic.decode_event(&x, &st, "", 0, ms, sizeof ms - 1, &out), 0);
        assert_string_equal(st.model, want);
        sy_buf_free(&out);
        sy_arena_free(&a);
    }
}

/* A tool id outside [a-zA-Z0-9_-] is sanitized per code point on both sides. */
static void test_tool_id_sanitized(void **state)
{
    (void)state;
    struct sy_arena a;
    sy_arena_init(&a);
    struct ctx c;
    memset(&c, 0, sizeof c);
    snprintf(c.model, sizeof c.model, "claude");
    struct sy_pconf pc;
    struct sy_xctx x;
    make(&c, &pc, &x, &a);
    static const char req[] =
        "{\"model\":\"m\",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}],\"messages\":["
        "{\"role\":\"user\",\"content\":\"hi\"},"
        "{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"call:é1.x\",\"type\":\"function\","
        "\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},"
        "{\"role\":\"tool\",\"tool_call_id\":\"call:é1.x\",\"content\":\"ok\"}]}";
    struct sy_jdoc d;
    assert_int_equal(sy_jdom_parse(&d, req, sizeof req - 1, &a, 0), 0);
    struct sy_buf body;
    sy_buf_init(&body, 1 << 20);
    struct sy_xerr e;
    assert_int_equal(sy_anthropic_encode_body(&x, &d, 0, &body, &e), 0);
    assert_non_null(strstr(body.p, "\"id\":\"call__1_x\""));
    assert_non_null(strstr(body.p, "\"tool_use_id\":\"call__1_x\""));
    sy_buf_free(&body);
    sy_arena_free(&a);
}

/* A body larger than the output cap is SY_ENOSPC, not a truncated JSON. */
static void test_body_cap(void **state)
{
    (void)state;
    struct sy_arena a;
    sy_arena_init(&a);
    struct ctx c;
    memset(&c, 0, sizeof c);
    struct sy_pconf pc;
    struct sy_xctx x;
    make(&c, &pc, &x, &a);
    static const char req[] = "{\"messages\":[{\"role\":\"user\",\"content\":\"hello hello hello hello\"}]}";
    struct sy_jdoc d;
    assert_int_equal(sy_jdom_parse(&d, req, sizeof req - 1, &a, 0), 0);
    struct sy_buf body;
    sy_buf_init(&body, 40);
    struct sy_xerr e;
    assert_int_equal(sy_anthropic_encode_body(&x, &d, 0, &body, &e), SY_ENOSPC);
    assert_int_equal(e.status, 413);
    sy_buf_free(&body);
    sy_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_configure),
        cmocka_unit_test(test_stream_many_blocks),
        cmocka_unit_test(test_event_type_fallback),
        cmocka_unit_test(test_tool_id_sanitized),
        cmocka_unit_test(test_model_fixed),
        cmocka_unit_test(test_body_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
