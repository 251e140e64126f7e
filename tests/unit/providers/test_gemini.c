/* test_gemini.c - the Gemini (AI Studio) adapter against its golden files
 * (golden/gemini/, one .txt per case), plus configure() and the pieces the files do not
 * show. test_vertex.c runs the same golden runner over golden/vertex/.
 *
 * A golden file is sections, each opened by a line "=== <name>":
 *
 *   config      "key: value" lines: litellm_params of the deployment, and
 *               model (upstream id), op (chat|embed), stream (0|1), global_drop,
 *               access_token, provider, id, client_model, include_usage,
 *               env NAME=value (set around configure)
 *   request     an OpenAI request  -> url, headers, body   (or -> error)
 *   response    an upstream body   -> openai (the client's JSON + a usage line)
 *   sse         upstream SSE text (events split on blank lines here) -> chunks
 *   status      + error_body: an upstream error answer -> error
 *
 * Expected sections hold the exact bytes. SY_GOLDEN_UPDATE=1 rewrites them
 * from what the adapter produces (then read the diff before committing). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "config/config.h"
#include "core/arena.h"
#include "core/buf.h"
#include "core/errors.h"
#include "providers/adapter.h"
#include "providers/gemini.h"
#include "providers/jdom.h"
#include "providers/oai.h"

#ifndef GOLDEN_ADAPTER
#define GOLDEN_ADAPTER sy_adapter_gemini
#define GOLDEN_SUBDIR  "gemini"
#define GOLDEN_MAIN    1
#endif

/* ---- golden files ---------------------------------------------------------- */

#define MAX_SECTIONS 16

struct section {
    char name[32];
    char *text; /* NUL-terminated, without the final newline */
    size_t len;
};

struct golden {
    char path[512];
    char *raw;
    struct section s[MAX_SECTIONS];
    int n;
    /* actual outputs, by section name, for the update mode */
    struct section out[MAX_SECTIONS];
    int nout;
    int failed;
};

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (fread(b, 1, (size_t)n, f) != (size_t)n)
        n = 0;
    b[n] = 0;
    fclose(f);
    if (len)
        *len = (size_t)n;
    return b;
}

static void golden_load(struct golden *g, const char *path)
{
    memset(g, 0, sizeof *g);
    snprintf(g->path, sizeof g->path, "%s", path);
    g->raw = slurp(path, NULL);
    assert_non_null(g->raw);
    char *p = g->raw;
    struct section *cur = NULL;
    while (*p) {
        char *nl = strchr(p, '\n');
        char *end = nl ? nl : p + strlen(p);
        if (end - p >= 4 && memcmp(p, "=== ", 4) == 0) {
            if (cur) { /* close the previous: drop its final newline */
                cur->len = (size_t)(p - cur->text);
                if (cur->len && cur->text[cur->len - 1] == '\n')
                    cur->len--;
                cur->text[cur->len] = 0;
            }
            assert_true(g->n < MAX_SECTIONS);
            cur = &g->s[g->n++];
            snprintf(cur->name, sizeof cur->name, "%.*s", (int)(end - p - 4), p + 4);
            cur->text = nl ? nl + 1 : end;
        }
        p = nl ? nl + 1 : end;
    }
    if (cur) {
        cur->len = (size_t)(p - cur->text);
        if (cur->len && cur->text[cur->len - 1] == '\n')
            cur->len--;
        cur->text[cur->len] = 0;
    }
}

static const struct section *sec(const struct golden *g, const char *name)
{
    for (int i = 0; i < g->n; i++)
        if (strcmp(g->s[i].name, name) == 0)
            return &g->s[i];
    return NULL;
}

/* Compare actual output with section name (or record it in update mode). */
static void expect(struct golden *g, const char *name, const char *got, size_t n)
{
    const struct section *e = sec(g, name);
    struct section *o = &g->out[g->nout++];
    snprintf(o->name, sizeof o->name, "%s", name);
    o->text = malloc(n + 1);
    memcpy(o->text, got, n);
    o->text[n] = 0;
    o->len = n;
    if (getenv("SY_GOLDEN_UPDATE"))
        return;
    if (!e || e->len != n || memcmp(e->text, got, n) != 0) {
        fprintf(stderr, "%s: section '%s' differs\n--- expected\n%s\n--- got\n%.*s\n---\n", g->path, name,
                e ? e->text : "(missing)", (int)n, got);
        g->failed = 1;
    }
}

/* The input section an output section belongs after. */
static const char *owner_of(const char *out)
{
    if (!strcmp(out, "url") || !strcmp(out, "headers") || !strcmp(out, "body") || !strcmp(out, "encode_error"))
        return "request";
    if (!strcmp(out, "openai"))
        return "response";
    if (!strcmp(out, "chunks"))
        return "sse";
    return "status";
}

static int is_output(const char *name)
{
    return !strcmp(name, "url") || !strcmp(name, "headers") || !strcmp(name, "body") || !strcmp(name, "encode_error") ||
           !strcmp(name, "openai") || !strcmp(name, "chunks") || !strcmp(name, "error");
}

static void golden_finish(struct golden *g)
{
    if (getenv("SY_GOLDEN_UPDATE")) { /* inputs as they were, each followed by its outputs */
        FILE *f = fopen(g->path, "wb");
        assert_non_null(f);
        for (int i = 0; i < g->n; i++) {
            if (is_output(g->s[i].name))
                continue;
            fprintf(f, "=== %s\n%s\n", g->s[i].name, g->s[i].text);
            const char *in = strcmp(g->s[i].name, "error_body") == 0 ? "status" : g->s[i].name;
            if (strcmp(g->s[i].name, "status") == 0 && sec(g, "error_body"))
                continue;
            for (int j = 0; j < g->nout; j++)
                if (strcmp(owner_of(g->out[j].name), in) == 0)
                    fprintf(f, "=== %s\n%s\n", g->out[j].name, g->out[j].text);
        }
        fclose(f);
    }
    for (int j = 0; j < g->nout; j++)
        free(g->out[j].text);
    free(g->raw);
    if (g->failed)
        fail_msg("%s: golden mismatch", g->path);
}

/* ---- the call context from a config section -------------------------------- */

struct setup {
    struct sy_deployment d;
    struct sy_kv kv[24];
    struct sy_pconf pc;
    struct sy_xctx x;
    struct sy_arena arena;
    char model[192], provider[32], token[256], id[128], client_model[192];
    int include_usage;
    char env[8][256];
    int nenv;
};

static const char *const cleared_env[] = {
    "GEMINI_API_KEY",   "GOOGLE_API_KEY",       "GEMINI_API_BASE",
    "VERTEXAI_PROJECT", "GOOGLE_CLOUD_PROJECT", "VERTEXAI_LOCATION",
    "VERTEX_LOCATION",  "VERTEXAI_CREDENTIALS", "GOOGLE_APPLICATION_CREDENTIALS",
};

/* The text of a file made by the test for @FILE@ placeholders (see test_vertex.c). */
#ifndef GOLDEN_FILE_VALUE
#define GOLDEN_FILE_VALUE(v) (v)
#endif

static void setup_from(struct setup *s, const struct golden *g)
{
    memset(s, 0, sizeof *s);
    sy_arena_init(&s->arena);
    for (size_t i = 0; i < sizeof cleared_env / sizeof cleared_env[0]; i++)
        unsetenv(cleared_env[i]);
    snprintf(s->model, sizeof s->model, "gemini-2.0-flash");
    snprintf(s->provider, sizeof s->provider, "%s", GOLDEN_SUBDIR[0] == 'v' ? "vertex_ai" : "gemini");
    snprintf(s->id, sizeof s->id, "chatcmpl-test");
    int op = SY_OP_CHAT, stream = 0, global_drop = 0;
    size_t nkv = 0;
    const struct section *c = sec(g, "config");
    char *text = c ? strdup(c->text) : strdup("");
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *colon = strstr(line, ": ");
        if (line[0] == '#' || !colon)
            continue;
        *colon = 0;
        const char *k = line, *v = colon + 2;
        if (strcmp(k, "model") == 0)
            snprintf(s->model, sizeof s->model, "%s", v);
        else if (strcmp(k, "op") == 0)
            op = strcmp(v, "embed") == 0 ? SY_OP_EMBED : SY_OP_CHAT;
        else if (strcmp(k, "stream") == 0)
            stream = atoi(v);
        else if (strcmp(k, "global_drop") == 0)
            global_drop = atoi(v);
        else if (strcmp(k, "access_token") == 0)
            snprintf(s->token, sizeof s->token, "%s", v);
        else if (strcmp(k, "provider") == 0)
            snprintf(s->provider, sizeof s->provider, "%s", v);
        else if (strcmp(k, "id") == 0)
            snprintf(s->id, sizeof s->id, "%s", v);
        else if (strcmp(k, "client_model") == 0)
            snprintf(s->client_model, sizeof s->client_model, "%s", v);
        else if (strcmp(k, "include_usage") == 0)
            s->include_usage = atoi(v);
        else if (strcmp(k, "env") == 0) {
            const char *eq = strchr(v, '=');
            assert_non_null(eq);
            snprintf(s->env[s->nenv], sizeof s->env[0], "%.*s", (int)(eq - v), v);
            setenv(s->env[s->nenv++], GOLDEN_FILE_VALUE(eq + 1), 1);
        } else {
            assert_true(nkv < sizeof s->kv / sizeof s->kv[0]);
            s->kv[nkv].key = strdup(k);
            s->kv[nkv].value = strdup(GOLDEN_FILE_VALUE(v));
            if (strcmp(k, "api_base") == 0)
                s->d.api_base = s->kv[nkv].value;
            if (strcmp(k, "api_key") == 0)
                s->d.api_key = s->kv[nkv].value;
            nkv++;
        }
    }
    free(text);
    s->d.provider = s->provider;
    s->d.upstream_model = s->model;
    s->d.params = s->kv;
    s->d.n_params = nkv;
    s->d.max_tokens = -1;
    char err[256] = "";
    int rc = GOLDEN_ADAPTER.configure(&s->d, global_drop, &s->pc, err, sizeof err);
    if (rc) {
        fprintf(stderr, "%s: configure: %s\n", g->path, err);
        fail();
    }
    s->x.d = &s->d;
    s->x.pc = &s->pc;
    s->x.model = s->model;
    s->x.op = op;
    s->x.stream = stream;
    s->x.now = 1700000000;
    s->x.access_token = s->token[0] ? s->token : NULL;
    s->x.arena = &s->arena;
}

static void setup_free(struct setup *s)
{
    for (int i = 0; i < s->nenv; i++)
        unsetenv(s->env[i]);
    for (size_t i = 0; i < s->d.n_params; i++) {
        free((char *)s->kv[i].key);
        free((char *)s->kv[i].value);
    }
    sy_pconf_free(&s->pc);
    sy_arena_free(&s->arena);
}

static void state_init(struct setup *s, struct sy_xstate *st)
{
    memset(st, 0, sizeof *st);
    snprintf(st->id, sizeof st->id, "%s", s->id);
    snprintf(st->model, sizeof st->model, "%s", s->client_model[0] ? s->client_model : s->model);
    st->created = 1700000000;
    st->include_usage = s->include_usage;
}

static void err_text(struct sy_buf *b, int rc, const struct sy_xerr *e)
{
    sy_buf_printf(b, "rc=%s status=%d type=%s cls=%s param=%s\n%s", rc ? sy_err_name(rc) : "0", e->status, e->type,
                  e->cls, e->param, e->message);
}

static void usage_text(struct sy_buf *b, const struct sy_xusage *u)
{
    sy_buf_printf(b, "usage: have=%d prompt=%lld completion=%lld cache_read=%lld cache_write=%lld reasoning=%lld",
                  u->have, (long long)u->prompt, (long long)u->completion, (long long)u->cache_read,
                  (long long)u->cache_write, (long long)u->reasoning);
}

static void assert_json(const struct golden *g, const char *what, const char *p, size_t n)
{
    json_tokener *tok = json_tokener_new();
    json_object *o = json_tokener_parse_ex(tok, p, (int)n);
    int ok = o && json_tokener_get_error(tok) == json_tokener_success && tok->char_offset == (int)n;
    json_object_put(o);
    json_tokener_free(tok);
    if (!ok) {
        fprintf(stderr, "%s: %s is not one JSON value: %.*s\n", g->path, what, (int)n, p);
        fail();
    }
}

/* ---- the four kinds of case ------------------------------------------------- */

static void run_request(struct golden *g, struct setup *s)
{
    const struct section *r = sec(g, "request");
    struct sy_jdoc doc;
    assert_int_equal(sy_jdom_parse(&doc, r->text, r->len, &s->arena, 0), 0);
    struct sy_xout o;
    memset(&o, 0, sizeof o);
    sy_buf_init(&o.url, 8192);
    sy_buf_init(&o.headers, 16384);
    sy_buf_init(&o.body, 1 << 22);
    int rc = GOLDEN_ADAPTER.encode(&s->x, &doc, &o);
    if (rc) {
        struct sy_buf b;
        sy_buf_init(&b, 1 << 16);
        err_text(&b, rc, &o.err);
        expect(g, "encode_error", b.p, b.len);
        sy_buf_free(&b);
    } else {
        assert_json(g, "the upstream body", o.body.p, o.body.len);
        expect(g, "url", o.url.p, o.url.len);
        /* header lines shown one per line */
        struct sy_buf h;
        sy_buf_init(&h, 16384);
        for (size_t i = 0; i < o.headers.len; i++)
            if (o.headers.p[i] != '\r')
                sy_buf_append(&h, &o.headers.p[i], 1);
        if (h.len && h.p[h.len - 1] == '\n')
            h.len--;
        expect(g, "headers", h.p ? h.p : "", h.len);
        sy_buf_free(&h);
        expect(g, "body", o.body.p, o.body.len);
    }
    sy_buf_free(&o.url);
    sy_buf_free(&o.headers);
    sy_buf_free(&o.body);
}

static void run_response(struct golden *g, struct setup *s)
{
    const struct section *r = sec(g, "response");
    struct sy_xstate st;
    state_init(s, &st);
    struct sy_buf out;
    sy_buf_init(&out, 1 << 22);
    int rc = GOLDEN_ADAPTER.decode_response(&s->x, &st, r->text, r->len, &out);
    if (rc) {
        sy_buf_reset(&out);
        err_text(&out, rc, &st.err);
    } else {
        assert_json(g, "the response", out.p, out.len);
        sy_buf_append(&out, "\n", 1);
        usage_text(&out, &st.u);
    }
    expect(g, "openai", out.p, out.len);
    sy_buf_free(&out);
}

/* SSE text -> (type, data) events as the framer would give them. */
static void run_sse(struct golden *g, struct setup *s)
{
    const struct section *r = sec(g, "sse");
    struct sy_xstate st;
    state_init(s, &st);
    struct sy_buf out, data;
    sy_buf_init(&out, 1 << 22);
    sy_buf_init(&data, 1 << 22);
    char type[128];
    size_t tl = 0;
    const char *p = r->text, *e = r->text + r->len;
    int rc = 0;
    while (p <= e && !rc) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        const char *le = nl ? nl : e;
        if (le == p) { /* blank line: dispatch */
            if (data.len) {
                size_t before = out.len;
                rc = GOLDEN_ADAPTER.decode_event(&s->x, &st, type, tl, data.p, data.len, &out);
                /* every chunk written is one JSON value */
                for (size_t i = before; i < out.len;) {
                    const char *f = out.p + i;
                    assert_true(out.len - i > 8 && memcmp(f, "data: ", 6) == 0);
                    const char *fe = memmem(f, out.len - i, "\n\n", 2);
                    assert_non_null(fe);
                    assert_json(g, "a chunk", f + 6, (size_t)(fe - f - 6));
                    i = (size_t)(fe - out.p) + 2;
                }
                if (rc == SY_DONE) {
                    SY_BUF_LIT(&out, "(done)\n");
                    rc = 0;
                    st.done = 1;
                }
            }
            sy_buf_reset(&data);
            tl = 0;
            type[0] = 0;
        } else if ((size_t)(le - p) >= 5 && memcmp(p, "data:", 5) == 0) {
            const char *v = p + 5 + (p[5] == ' ');
            if (data.len)
                sy_buf_append(&data, "\n", 1);
            sy_buf_append(&data, v, (size_t)(le - v));
        } else if ((size_t)(le - p) >= 6 && memcmp(p, "event:", 6) == 0) {
            const char *v = p + 6 + (p[6] == ' ');
            tl = (size_t)(le - v) < sizeof type ? (size_t)(le - v) : sizeof type - 1;
            memcpy(type, v, tl);
            type[tl] = 0;
        }
        if (!nl) {
            if (data.len && !rc) /* the last event without a blank line after it */
                rc = GOLDEN_ADAPTER.decode_event(&s->x, &st, type, tl, data.p, data.len, &out);
            break;
        }
        p = nl + 1;
    }
    if (rc && rc != SY_DONE)
        err_text(&out, rc, &st.err), sy_buf_append(&out, "\n", 1);
    usage_text(&out, &st.u);
    expect(g, "chunks", out.p, out.len);
    sy_buf_free(&out);
    sy_buf_free(&data);
}

static void run_error(struct golden *g, struct setup *s)
{
    const struct section *b = sec(g, "error_body");
    int status = atoi(sec(g, "status")->text);
    struct sy_xerr e;
    memset(&e, 0, sizeof e);
    GOLDEN_ADAPTER.decode_error(&s->x, status, b ? b->text : "", b ? b->len : 0, &e);
    struct sy_buf out;
    sy_buf_init(&out, 1 << 16);
    err_text(&out, 0, &e);
    expect(g, "error", out.p, out.len);
    sy_buf_free(&out);
}

static void golden_case(void **state)
{
    const char *path = *state;
    struct golden g;
    golden_load(&g, path);
    struct setup s;
    setup_from(&s, &g);
    if (sec(&g, "request"))
        run_request(&g, &s);
    if (sec(&g, "response"))
        run_response(&g, &s);
    if (sec(&g, "sse"))
        run_sse(&g, &s);
    if (sec(&g, "status"))
        run_error(&g, &s);
    setup_free(&s);
    golden_finish(&g);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One cmocka test per golden file; extra tests after them. */
static int run_golden(const char *group, const struct CMUnitTest *extra, size_t nextra)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s", GOLDEN_DIR, GOLDEN_SUBDIR);
    DIR *dd = opendir(dir);
    assert_non_null(dd);
    char **paths = NULL;
    size_t n = 0;
    for (struct dirent *de; (de = readdir(dd));) {
        size_t l = strlen(de->d_name);
        if (l < 5 || strcmp(de->d_name + l - 4, ".txt") != 0)
            continue;
        paths = realloc(paths, (n + 1) * sizeof *paths);
        paths[n] = malloc(strlen(dir) + l + 2);
        sprintf(paths[n], "%s/%s", dir, de->d_name);
        n++;
    }
    closedir(dd);
    qsort(paths, n, sizeof *paths, cmp_str);
    struct CMUnitTest *t = calloc(n + nextra, sizeof *t);
    for (size_t i = 0; i < n; i++) {
        t[i].name = strrchr(paths[i], '/') + 1;
        t[i].test_func = golden_case;
        t[i].initial_state = paths[i];
    }
    for (size_t i = 0; i < nextra; i++)
        t[n + i] = extra[i];
    int rc = _cmocka_run_group_tests(group, t, n + nextra, NULL, NULL);
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    free(t);
    return rc;
}

#ifdef GOLDEN_MAIN
/* ---- what the golden files do not show ------------------------------------------ */

static void configure_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cleared_env / sizeof cleared_env[0]; i++)
        unsetenv(cleared_env[i]);
    struct sy_kv kv[] = {{"drop_params", "True"}, {"additional_drop_params", "[\"seed\", \"stop\"]"}};
    struct sy_deployment d = {.provider = "gemini", .params = kv, .n_params = 2, .max_tokens = 512};
    struct sy_pconf pc = {0};
    char err[200];
    setenv("GOOGLE_API_KEY", "g-key", 1);
    setenv("GEMINI_API_BASE", "https://proxy.example/v1beta/", 1);
    assert_int_equal(sy_adapter_gemini.configure(&d, 0, &pc, err, sizeof err), 0);
    assert_string_equal(pc.key, "g-key");
    assert_string_equal(pc.base, "https://proxy.example/v1beta");
    assert_int_equal(pc.drop_params, 1);
    assert_int_equal(pc.n_drop_extra, 2);
    assert_string_equal(pc.drop_extra[1], "stop");
    assert_int_equal(pc.max_tokens, 512);
    sy_pconf_free(&pc);
    /* GEMINI_API_KEY wins over GOOGLE_API_KEY; the litellm_params key over both */
    setenv("GEMINI_API_KEY", "gem-key", 1);
    memset(&pc, 0, sizeof pc);
    d.n_params = 0;
    assert_int_equal(sy_adapter_gemini.configure(&d, 1, &pc, err, sizeof err), 0);
    assert_string_equal(pc.key, "gem-key");
    assert_int_equal(pc.drop_params, 1); /* the global flag */
    sy_pconf_free(&pc);
    d.api_key = "param-key";
    memset(&pc, 0, sizeof pc);
    assert_int_equal(sy_adapter_gemini.configure(&d, 0, &pc, err, sizeof err), 0);
    assert_string_equal(pc.key, "param-key");
    assert_int_equal(pc.drop_params, 0);
    sy_pconf_free(&pc);
    /* a bad additional_drop_params is a config error */
    struct sy_kv bad[] = {{"additional_drop_params", "seed"}};
    d.params = bad;
    d.n_params = 1;
    memset(&pc, 0, sizeof pc);
    assert_int_equal(sy_adapter_gemini.configure(&d, 0, &pc, err, sizeof err), -1);
    assert_non_null(strstr(err, "additional_drop_params"));
    sy_pconf_free(&pc);
    unsetenv("GOOGLE_API_KEY");
    unsetenv("GEMINI_API_KEY");
    unsetenv("GEMINI_API_BASE");
}

static void base_paths(void **state)
{
    (void)state;
    assert_int_equal(sy__gemini_base_has_path("https://generativelanguage.googleapis.com"), 0);
    assert_int_equal(sy__gemini_base_has_path("http://127.0.0.1:8080/"), 0);
    assert_int_equal(sy__gemini_base_has_path("https://gw.example/v1beta"), 1);
    assert_int_equal(sy__gemini_truthy("True"), 1);
    assert_int_equal(sy__gemini_truthy("false"), 0);
    assert_int_equal(sy__gemini_truthy(NULL), 0);
}

/* Tool-call ids: deterministic, distinct per index, the same in a stream and
 * a whole response for the same response id. */
static void tool_ids(void **state)
{
    (void)state;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_pconf pc = {0};
    struct sy_deployment d = {.provider = "gemini"};
    struct sy_xctx x = {.d = &d, .pc = &pc, .model = "gemini-2.0-flash", .arena = &a};
    const char *body = "{\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"a\",\"args\":{}}},"
                       "{\"functionCall\":{\"name\":\"b\",\"args\":{\"k\":[1,2]}}}]},\"finishReason\":\"STOP\"}],"
                       "\"responseId\":\"r1\"}";
    struct sy_xstate st1 = {0}, st2 = {0};
    struct sy_buf o1, o2;
    sy_buf_init(&o1, 1 << 16);
    sy_buf_init(&o2, 1 << 16);
    assert_int_equal(sy_gemini_decode_response(&x, &st1, body, strlen(body), &o1), 0);
    assert_int_equal(sy_gemini_decode_event(&x, &st2, body, strlen(body), &o2), 0);
    json_object *r = json_tokener_parse(o1.p);
    json_object *tcs = json_object_object_get(
        json_object_object_get(json_object_array_get_idx(json_object_object_get(r, "choices"), 0), "message"),
        "tool_calls");
    const char *id0 = json_object_get_string(json_object_object_get(json_object_array_get_idx(tcs, 0), "id"));
    const char *id1 = json_object_get_string(json_object_object_get(json_object_array_get_idx(tcs, 1), "id"));
    assert_int_equal(strlen(id0), 33);
    assert_memory_equal(id0, "call_", 5);
    assert_string_not_equal(id0, id1);
    assert_non_null(strstr(o2.p, id0));
    assert_non_null(strstr(o2.p, id1));
    assert_string_equal(st1.id, "r1");
    json_object_put(r);
    sy_buf_free(&o1);
    sy_buf_free(&o2);
    sy_arena_free(&a);
}

/* A body buffer too small for the request is SY_ENOSPC (413), not a cut body. */
static void small_body_cap(void **state)
{
    (void)state;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_pconf pc = {0};
    struct sy_deployment d = {.provider = "gemini"};
    struct sy_xctx x = {.d = &d, .pc = &pc, .model = "m", .arena = &a};
    const char *req = "{\"messages\":[{\"role\":\"user\",\"content\":\"hello there, a long enough text\"}]}";
    struct sy_jdoc doc;
    assert_int_equal(sy_jdom_parse(&doc, req, strlen(req), &a, 0), 0);
    struct sy_xout o;
    memset(&o, 0, sizeof o);
    sy_buf_init(&o.url, 1024);
    sy_buf_init(&o.headers, 1024);
    sy_buf_init(&o.body, 16);
    assert_int_equal(sy_adapter_gemini.encode(&x, &doc, &o), SY_ENOSPC);
    assert_int_equal(o.err.status, 413);
    sy_buf_free(&o.url);
    sy_buf_free(&o.headers);
    sy_buf_free(&o.body);
    sy_arena_free(&a);
}

/* $refs that fan out (each definition using the next one three times) are refused
 * once expanded past the bound, instead of growing 2^depth. */
static void schema_ref_fanout(void **state)
{
    (void)state;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_pconf pc = {0};
    struct sy_deployment d = {.provider = "gemini"};
    struct sy_xctx x = {.d = &d, .pc = &pc, .model = "m", .arena = &a};
    struct sy_buf req;
    sy_buf_init(&req, 1 << 16);
    SY_BUF_LIT(&req, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":[{\"type\":\"function\","
                     "\"function\":{\"name\":\"f\",\"parameters\":{\"$ref\":\"#/$defs/d0\",\"$defs\":{");
    for (int i = 0; i < 12; i++)
        sy_buf_printf(&req,
                      "%s\"d%d\":{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"#/$defs/d%d\"},"
                      "\"b\":{\"$ref\":\"#/$defs/d%d\"},\"c\":{\"$ref\":\"#/$defs/d%d\"}}}",
                      i ? "," : "", i, i + 1, i + 1, i + 1);
    SY_BUF_LIT(&req, ",\"d12\":{\"type\":\"string\"}}}}}]}");
    struct sy_jdoc doc;
    assert_int_equal(sy_jdom_parse(&doc, req.p, req.len, &a, 0), 0);
    struct sy_xout o;
    memset(&o, 0, sizeof o);
    sy_buf_init(&o.url, 1024);
    sy_buf_init(&o.headers, 1024);
    sy_buf_init(&o.body, 1 << 26);
    assert_int_equal(sy_adapter_gemini.encode(&x, &doc, &o), SY_EINVAL);
    assert_int_equal(o.err.status, 400);
    assert_non_null(strstr(o.err.message, "$refs"));
    sy_buf_free(&o.url);
    sy_buf_free(&o.headers);
    sy_buf_free(&o.body);
    sy_buf_free(&req);
    sy_arena_free(&a);
}

int main(void)
{
    static const struct CMUnitTest extra[] = {
        cmocka_unit_test(schema_ref_fanout), cmocka_unit_test(configure_env),  cmocka_unit_test(base_paths),
        cmocka_unit_test(tool_ids),          cmocka_unit_test(small_body_cap),
    };
    return run_golden("gemini", extra, sizeof extra / sizeof extra[0]);
}
#endif
