/* test_cohere.c - the Cohere v2 adapter (providers/cohere.c) against its
 * golden files (golden/cohere/<case>.txt), plus configure().
 *
 * A golden file is sections, each opened by a line "=== <name>":
 *
 *   config      "key: value" lines: litellm_params of the deployment (api_key,
 *               api_base, drop_params, additional_drop_params ...) and
 *               model (upstream id), provider (the config prefix), op (chat|embed), stream (0|1),
 *               global_drop (0|1), crlf (1: the stream's line ends become CRLF),
 *               final_newline (0: the stream's last line is left unterminated),
 *               env NAME=value (set around configure)
 *   request     an OpenAI request   -> url, headers, body (or encode_error)
 *   response    an upstream body    -> openai (the client's JSON + a usage line)
 *   stream      upstream SSE bytes  -> chunks (what the client gets + a result line),
 *               fed through the SSE framer whole, split at every byte, and one
 *               byte at a time: all must give the same chunks
 *   status      + error_body: an upstream error answer -> error
 *
 * Expected sections hold the exact bytes. SY_GOLDEN_UPDATE=1 rewrites them from
 * what the adapter produces (read the diff before committing). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "config/config.h"
#include "core/arena.h"
#include "core/buf.h"
#include "core/errors.h"
#include "providers/adapter.h"
#include "providers/jdom.h"
#include "providers/oai.h"
#include "upstream/framing.h"

#ifndef ADAPTER /* test_ollama.c includes this file with its own */
#define ADAPTER       sy_adapter_cohere
#define SUBDIR        "cohere"
#define ENV_VARS      "COHERE_API_BASE", "COHERE_API_KEY", "CO_API_KEY"
#define DEFAULT_MODEL "command-r-plus-08-2024"
#define COHERE_MAIN   1
#endif
static const char *const env_vars[] = {ENV_VARS, NULL};

/* ---- golden files ------------------------------------------------------------ */

#define MAX_SECTIONS 24

struct section {
    char name[32];
    char *text; /* NUL-terminated, without the final newline */
    size_t len;
};

struct golden {
    char path[1024];
    char *raw;
    struct section s[MAX_SECTIONS], out[MAX_SECTIONS];
    int n, nout, failed;
};

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)sz + 1);
    *n = fread(p, 1, (size_t)sz, f);
    p[*n] = 0;
    fclose(f);
    return p;
}

static void golden_load(struct golden *g, const char *path)
{
    memset(g, 0, sizeof *g);
    snprintf(g->path, sizeof g->path, "%s", path);
    size_t n = 0;
    g->raw = slurp(path, &n);
    assert_non_null(g->raw);
    char *p = g->raw, *end = g->raw + n;
    struct section *cur = NULL;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *le = nl ? nl : end;
        if (le - p >= 4 && !memcmp(p, "=== ", 4)) {
            if (cur) { /* the previous section ends before this line's newline */
                cur->len = (size_t)(p - cur->text);
                if (cur->len)
                    cur->len--;
                cur->text[cur->len] = 0;
            }
            assert_true(g->n < MAX_SECTIONS);
            cur = &g->s[g->n++];
            snprintf(cur->name, sizeof cur->name, "%.*s", (int)(le - p - 4), p + 4);
            cur->text = le < end ? le + 1 : end;
        }
        p = le < end ? le + 1 : end;
    }
    if (cur) {
        cur->len = (size_t)(end - cur->text);
        if (cur->len && cur->text[cur->len - 1] == '\n')
            cur->len--;
        cur->text[cur->len] = 0;
    }
}

static struct section *sec(struct golden *g, const char *name)
{
    for (int i = 0; i < g->n; i++)
        if (!strcmp(g->s[i].name, name))
            return &g->s[i];
    return NULL;
}

static int updating(void)
{
    const char *u = getenv("SY_GOLDEN_UPDATE");
    return u && *u == '1';
}

static void expect(struct golden *g, const char *name, const char *got, size_t n)
{
    struct section *e = sec(g, name), *o = &g->out[g->nout++];
    snprintf(o->name, sizeof o->name, "%s", name);
    o->text = malloc(n + 1);
    memcpy(o->text, got, n);
    o->text[n] = 0;
    o->len = n;
    if (updating())
        return;
    if (!e || e->len != n || memcmp(e->text, got, n)) {
        fprintf(stderr, "%s: section '%s' differs\n--- expected\n%s\n--- got\n%.*s\n---\n", g->path, name,
                e ? e->text : "(missing)", (int)n, got);
        g->failed = 1;
    }
}

static const char *owner_of(const char *out)
{
    if (!strcmp(out, "url") || !strcmp(out, "headers") || !strcmp(out, "body") || !strcmp(out, "encode_error"))
        return "request";
    if (!strcmp(out, "openai"))
        return "response";
    if (!strcmp(out, "chunks"))
        return "stream";
    return "error_body";
}

static int is_output(const char *name)
{
    static const char *const outs[] = {"url", "headers", "body", "encode_error", "openai", "chunks", "error"};
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++)
        if (!strcmp(name, outs[i]))
            return 1;
    return 0;
}

static void golden_finish(struct golden *g)
{
    if (updating()) { /* inputs as they were, each followed by its outputs */
        FILE *f = fopen(g->path, "wb");
        assert_non_null(f);
        for (int i = 0; i < g->n; i++) {
            if (is_output(g->s[i].name))
                continue;
            fprintf(f, "=== %s\n%s\n", g->s[i].name, g->s[i].text);
            for (int j = 0; j < g->nout; j++)
                if (!strcmp(owner_of(g->out[j].name), g->s[i].name))
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

/* ---- the call context from a config section ------------------------------------ */

struct setup {
    struct sy_deployment d;
    struct sy_kv kv[16];
    char kvs[16][2][1100];
    struct sy_pconf pc;
    struct sy_xctx x;
    struct sy_arena arena;
    char model[192], provider[32];
    int global_drop, crlf, no_final_eol;
};

static void setup_from(struct setup *s, struct golden *g)
{
    memset(s, 0, sizeof *s);
    snprintf(s->model, sizeof s->model, "%s", DEFAULT_MODEL);
    s->d.max_tokens = -1;
    s->x.stream = 0;
    s->x.op = SY_OP_CHAT;
    for (const char *const *v = env_vars; *v; v++)
        unsetenv(*v);
    struct section *c = sec(g, "config");
    char *p = c ? c->text : NULL;
    while (p && *p) {
        char *nl = strchr(p, '\n');
        size_t ll = nl ? (size_t)(nl - p) : strlen(p);
        char line[1100];
        snprintf(line, sizeof line, "%.*s", (int)ll, p);
        p = nl ? nl + 1 : p + ll;
        if (!strncmp(line, "env ", 4)) {
            char *eqs = strchr(line + 4, '=');
            assert_non_null(eqs);
            *eqs = 0;
            setenv(line + 4, eqs + 1, 1);
            continue;
        }
        char *colon = strstr(line, ": ");
        assert_non_null(colon);
        *colon = 0;
        const char *k = line, *v = colon + 2;
        if (!strcmp(k, "model"))
            snprintf(s->model, sizeof s->model, "%s", v);
        else if (!strcmp(k, "op"))
            s->x.op = strcmp(v, "embed") ? SY_OP_CHAT : SY_OP_EMBED;
        else if (!strcmp(k, "stream"))
            s->x.stream = atoi(v);
        else if (!strcmp(k, "global_drop"))
            s->global_drop = atoi(v);
        else if (!strcmp(k, "crlf"))
            s->crlf = atoi(v);
        else if (!strcmp(k, "final_newline"))
            s->no_final_eol = !atoi(v);
        else if (!strcmp(k, "provider"))
            snprintf(s->provider, sizeof s->provider, "%s", v), s->d.provider = s->provider;
        else if (!strcmp(k, "max_tokens"))
            s->d.max_tokens = atoll(v);
        else {
            size_t i = s->d.n_params++;
            assert_true(i < 16);
            snprintf(s->kvs[i][0], sizeof s->kvs[i][0], "%s", k);
            snprintf(s->kvs[i][1], sizeof s->kvs[i][1], "%s", v);
            s->kv[i].key = s->kvs[i][0];
            s->kv[i].value = s->kvs[i][1];
            if (!strcmp(k, "api_base"))
                s->d.api_base = s->kvs[i][1];
            if (!strcmp(k, "api_key"))
                s->d.api_key = s->kvs[i][1];
        }
    }
    s->d.params = s->kv;
    char err[256] = "";
    assert_int_equal(ADAPTER.configure(&s->d, s->global_drop, &s->pc, err, sizeof err), 0);
    sy_arena_init(&s->arena);
    s->x.d = &s->d;
    s->x.pc = &s->pc;
    s->x.model = s->model;
    s->x.now = 1700000000;
    s->x.arena = &s->arena;
}

static void setup_free(struct setup *s)
{
    sy_pconf_free(&s->pc);
    sy_arena_free(&s->arena);
    for (const char *const *v = env_vars; *v; v++)
        unsetenv(*v);
}

static void state_init(struct sy_xstate *st)
{
    memset(st, 0, sizeof *st);
    snprintf(st->id, sizeof st->id, "chatcmpl-golden");
    snprintf(st->model, sizeof st->model, "%s", "client-model");
    st->created = 1700000000;
    st->include_usage = 1;
}

static void put_err(struct sy_buf *b, const struct sy_xerr *e)
{
    sy_buf_printf(b, "status=%d type=%s cls=%s param=%s\n%s", e->status, e->type, e->cls, e->param, e->message);
}

static void put_usage(struct sy_buf *b, const struct sy_xusage *u)
{
    sy_buf_printf(b, "# usage have=%d prompt=%lld completion=%lld", u->have, (long long)u->prompt,
                  (long long)u->completion);
}

/* Every "data: " frame of out must be one valid JSON object. */
static void check_frames(const char *path, const char *p, size_t n)
{
    const char *e = p + n;
    while (p < e) {
        if (*p == '#')
            break;
        if ((size_t)(e - p) < 6 || memcmp(p, "data: ", 6))
            fail_msg("%s: chunk does not start with 'data: ': %.40s", path, p);
        const char *end = strstr(p, "\n\n");
        assert_non_null(end);
        char *j = strndup(p + 6, (size_t)(end - p - 6));
        json_object *o = json_tokener_parse(j);
        if (!o || !json_object_is_type(o, json_type_object))
            fail_msg("%s: chunk is not a JSON object: %s", path, j);
        json_object_put(o);
        free(j);
        p = end + 2;
    }
}

/* ---- running the sections ------------------------------------------------------ */

static void run_request(struct golden *g, struct setup *s)
{
    struct section *r = sec(g, "request");
    struct sy_jdoc req;
    assert_int_equal(sy_jdom_parse(&req, r->text, r->len, &s->arena, 0), 0);
    struct sy_xout o;
    memset(&o, 0, sizeof o);
    sy_buf_init(&o.url, 4096);
    sy_buf_init(&o.headers, 16384);
    sy_buf_init(&o.body, 1 << 24);
    int rc = ADAPTER.encode(&s->x, &req, &o);
    if (rc) {
        struct sy_buf b;
        sy_buf_init(&b, 1 << 16);
        sy_buf_printf(&b, "rc=%s ", sy_err_name(rc));
        put_err(&b, &o.err);
        expect(g, "encode_error", b.p, b.len);
        sy_buf_free(&b);
    } else {
        expect(g, "url", o.url.p, o.url.len);
        struct sy_buf h; /* header lines as LF lines for the file; CRLF checked here */
        sy_buf_init(&h, 16384);
        for (size_t i = 0; i < o.headers.len; i++) {
            if (o.headers.p[i] == '\r') {
                assert_true(i + 1 < o.headers.len && o.headers.p[i + 1] == '\n');
                continue;
            }
            sy_buf_append(&h, o.headers.p + i, 1);
        }
        if (h.len && h.p[h.len - 1] == '\n')
            h.len--;
        expect(g, "headers", h.p ? h.p : "", h.len);
        expect(g, "body", o.body.p, o.body.len);
        json_object *j = json_tokener_parse(o.body.p);
        if (!j)
            fail_msg("%s: body is not JSON", g->path);
        json_object_put(j);
        sy_buf_free(&h);
    }
    sy_buf_free(&o.url);
    sy_buf_free(&o.headers);
    sy_buf_free(&o.body);
}

static void run_response(struct golden *g, struct setup *s)
{
    struct section *r = sec(g, "response");
    struct sy_xstate st;
    state_init(&st);
    struct sy_buf out;
    sy_buf_init(&out, 1 << 24);
    int rc = ADAPTER.decode_response(&s->x, &st, r->text, r->len, &out);
    if (rc) {
        sy_buf_reset(&out);
        sy_buf_printf(&out, "rc=%s ", sy_err_name(rc));
        put_err(&out, &st.err);
    } else {
        json_object *j = json_tokener_parse(out.p);
        if (!j)
            fail_msg("%s: response is not JSON: %s", g->path, out.p);
        json_object_put(j);
        SY_BUF_LIT(&out, "\n");
        put_usage(&out, &st.u);
    }
    expect(g, "openai", out.p, out.len);
    sy_buf_free(&out);
}

struct feed {
    struct setup *s;
    struct sy_xstate st;
    struct sy_buf out;
    int rc;
};

static int on_event(void *ud, const char *type, size_t tl, const char *data, size_t dl)
{
    struct feed *f = ud;
    size_t before = f->out.len;
    int rc = ADAPTER.decode_event(&f->s->x, &f->st, type, tl, data, dl, &f->out);
    if (rc < 0)
        f->out.len = before; /* an error event: what the client gets is the gateway's error frame */
    f->rc = rc;
    return rc;
}

/* Feed the stream in pieces ending at cuts[0..nc); the client bytes + result line. */
static char *stream_once(struct setup *s, const char *p, size_t n, const size_t *cuts, size_t nc)
{
    struct feed f = {.s = s};
    state_init(&f.st);
    sy_buf_init(&f.out, 1 << 24);
    sy_buf_append(&f.out, "", 0);
    struct sy_framer fr;
    sy_framer_init(&fr, ADAPTER.framing, 1 << 20);
    int rc = 0;
    size_t at = 0;
    for (size_t k = 0; k <= nc && !rc; k++) {
        size_t end = k < nc ? cuts[k] : n;
        rc = sy_framer_feed(&fr, p + at, end - at, on_event, &f);
        at = end;
    }
    if (!rc)
        rc = sy_framer_finish(&fr, on_event, &f);
    sy_framer_free(&fr);
    sy_buf_printf(&f.out, "# rc=%s done=%d finished=%d tools=%d\n",
                  rc == SY_DONE ? "DONE"
                  : rc == 0     ? "0 (stream ended)"
                                : sy_err_name(rc),
                  f.st.done, f.st.finished, f.st.ntools);
    put_usage(&f.out, &f.st.u);
    if (rc < 0) {
        SY_BUF_LIT(&f.out, "\n# error ");
        put_err(&f.out, &f.st.err);
    }
    return f.out.p;
}

static void run_stream(struct golden *g, struct setup *s)
{
    struct section *r = sec(g, "stream");
    struct sy_buf in;
    sy_buf_init(&in, 1 << 24);
    for (size_t i = 0; i < r->len; i++) {
        if (r->text[i] == '\n' && s->crlf)
            SY_BUF_LIT(&in, "\r");
        sy_buf_append(&in, r->text + i, 1);
    }
    if (s->crlf && !s->no_final_eol)
        SY_BUF_LIT(&in, "\r");
    if (!s->no_final_eol)
        SY_BUF_LIT(&in, "\n");
    char *whole = stream_once(s, in.p, in.len, NULL, 0);
    expect(g, "chunks", whole, strlen(whole));
    check_frames(g->path, whole, strlen(whole));
    for (size_t i = 1; i < in.len; i++) {
        size_t c[1] = {i};
        char *got = stream_once(s, in.p, in.len, c, 1);
        if (strcmp(got, whole))
            fail_msg("%s: split at %zu gives other chunks:\n%s\n--- whole:\n%s", g->path, i, got, whole);
        free(got);
    }
    size_t *c = malloc(in.len * sizeof *c);
    for (size_t i = 0; i + 1 < in.len; i++)
        c[i] = i + 1;
    char *got = stream_once(s, in.p, in.len, c, in.len - 1);
    if (strcmp(got, whole))
        fail_msg("%s: byte-at-a-time gives other chunks:\n%s", g->path, got);
    free(got);
    free(c);
    free(whole);
    sy_buf_free(&in);
}

static void run_error(struct golden *g, struct setup *s)
{
    struct section *st = sec(g, "status"), *b = sec(g, "error_body");
    struct sy_xerr e;
    memset(&e, 0, sizeof e);
    ADAPTER.decode_error(&s->x, atoi(st->text), b->text, b->len, &e);
    struct sy_buf o;
    sy_buf_init(&o, 1 << 16);
    put_err(&o, &e);
    expect(g, "error", o.p, o.len);
    sy_buf_free(&o);
}

static void run_golden(const char *path)
{
    struct golden g;
    golden_load(&g, path);
    struct setup s;
    setup_from(&s, &g);
    if (sec(&g, "request"))
        run_request(&g, &s);
    if (sec(&g, "response"))
        run_response(&g, &s);
    if (sec(&g, "stream"))
        run_stream(&g, &s);
    if (sec(&g, "status") && sec(&g, "error_body"))
        run_error(&g, &s);
    setup_free(&s);
    golden_finish(&g);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void t_golden(void **state)
{
    (void)state;
    const char *dir = GOLDEN_DIR "/" SUBDIR;
    DIR *d = opendir(dir);
    assert_non_null(d);
    char *names[256];
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < 256) {
        size_t l = strlen(de->d_name);
        if (l > 4 && !strcmp(de->d_name + l - 4, ".txt"))
            names[n++] = strdup(de->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    assert_true(n >= 20);
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        run_golden(path);
        free(names[i]);
    }
}

#ifdef COHERE_MAIN
/* ---- configure ----------------------------------------------------------------- */

static void t_configure(void **state)
{
    (void)state;
    struct sy_kv kv[3] = {{"drop_params", "True"}, {"additional_drop_params", "[\"seed\", \"top_p\"]"}};
    struct sy_deployment d = {.params = kv, .n_params = 2, .max_tokens = 512};
    struct sy_pconf pc = {0};
    char err[256];
    for (const char *const *v = env_vars; *v; v++)
        unsetenv(*v);
    setenv("CO_API_KEY", "from-co", 1);
    assert_int_equal(ADAPTER.configure(&d, 0, &pc, err, sizeof err), 0);
    assert_string_equal(pc.base, "https://api.cohere.com");
    assert_string_equal(pc.key, "from-co");
    assert_true(pc.drop_params);
    assert_int_equal(pc.n_drop_extra, 2);
    assert_string_equal(pc.drop_extra[1], "top_p");
    assert_int_equal(pc.max_tokens, 512);
    sy_pconf_free(&pc);

    /* env base and key; a base naming the endpoint is cut back; global drop_params */
    memset(&pc, 0, sizeof pc);
    setenv("COHERE_API_BASE", "https://proxy.example/cohere/v2/chat/", 1);
    setenv("COHERE_API_KEY", "from-cohere", 1);
    d.n_params = 0;
    d.max_tokens = -1;
    assert_int_equal(ADAPTER.configure(&d, 1, &pc, err, sizeof err), 0);
    assert_string_equal(pc.base, "https://proxy.example/cohere");
    assert_string_equal(pc.key, "from-cohere");
    assert_true(pc.drop_params);
    assert_int_equal(pc.max_tokens, -1);
    sy_pconf_free(&pc);

    /* api_base / api_key of the deployment win; no key at all is not an error */
    memset(&pc, 0, sizeof pc);
    unsetenv("COHERE_API_KEY");
    unsetenv("CO_API_KEY");
    d.api_base = "http://127.0.0.1:9000/";
    assert_int_equal(ADAPTER.configure(&d, 0, &pc, err, sizeof err), 0);
    assert_string_equal(pc.base, "http://127.0.0.1:9000");
    assert_null(pc.key);
    sy_pconf_free(&pc);

    /* a key that would break its header line */
    memset(&pc, 0, sizeof pc);
    d.api_key = "abc\r\nX-Injected: 1";
    assert_int_equal(ADAPTER.configure(&d, 0, &pc, err, sizeof err), -1);
    assert_non_null(strstr(err, "api_key"));
    sy_pconf_free(&pc);
    d.api_key = NULL;

    /* additional_drop_params that is not a list */
    memset(&pc, 0, sizeof pc);
    kv[0] = (struct sy_kv){"additional_drop_params", "seed"};
    d.n_params = 1;
    assert_int_equal(ADAPTER.configure(&d, 0, &pc, err, sizeof err), -1);
    assert_non_null(strstr(err, "additional_drop_params"));
    sy_pconf_free(&pc);
    for (const char *const *v = env_vars; *v; v++)
        unsetenv(*v);
}

static void t_table(void **state)
{
    (void)state;
    assert_string_equal(ADAPTER.name, "cohere");
    assert_int_equal(ADAPTER.framing, SY_FRAME_SSE);
    assert_true(ADAPTER.caps & SY_CAP_STREAM);
    assert_true(ADAPTER.caps & SY_CAP_EMBED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_table),
        cmocka_unit_test(t_configure),
        cmocka_unit_test(t_golden),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
