/* fuzz_bedrock.c - the Bedrock adapter and the AWS event-stream reader.
 *
 *   first byte % 6   the rest of the input is                 checked
 *   ---------------  ---------------------------------------  ------------------------------------------
 *   0                an OpenAI request (JSON)                 encode (chat, stream, embeddings; several
 *                                                             models): 0 -> body is JSON and the header
 *                                                             lines end in CRLF; else err.status >= 400
 *   1                a Converse / InvokeModel 2xx body        decode_response (chat, Titan, Cohere):
 *                                                             0 -> JSON; else SY_EUPPROTO with a status
 *   2                "type\n" + an event payload             decode_event on one state, twice
 *   3                an error body                            decode_error: status >= 400, message
 *                                                             NUL-terminated
 *   4                raw event-stream bytes                   sy_awses_feed in splits taken from the
 *                                                             input, every event through decode_event
 *   5                lines "type json"                        encoded with sy_awses_encode, then as 4
 *
 * Every chunk written with a return of 0 or SY_DONE is "data: <JSON>\n\n"
 * (json-c must accept it); nothing is written after an error.
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "providers/adapter.h"
#include "providers/jdom.h"
#include "upstream/framing.h"

static const struct sy_adapter *B = &sy_adapter_bedrock;

static const char *const chat_models[] = {"anthropic.claude-3-7-sonnet-20250219-v1:0",
                                          "converse/us.amazon.nova-2-lite-v1:0", "openai.gpt-oss-120b-1:0",
                                          "meta.llama3-1-70b-instruct-v1:0"};
static const char *const embed_models[] = {"amazon.titan-embed-text-v2:0", "amazon.titan-embed-text-v1",
                                           "cohere.embed-english-v3"};

static struct sy_kv kv[] = {{"aws_access_key_id", "AKIDEXAMPLE"},
                            {"aws_secret_access_key", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"},
                            {"aws_region_name", "us-east-1"},
                            {"aws_session_token", "token"}};
static struct sy_deployment dep = {
    .model = "bedrock/x", .provider = "bedrock", .upstream_model = "x", .params = kv, .n_params = 4, .max_tokens = -1};
static struct sy_pconf pc, pc_drop;

static void json_ok(const char *s, size_t n)
{
    struct json_tokener *t = json_tokener_new();
    json_object *o = json_tokener_parse_ex(t, s, (int)n);
    if (!o || json_tokener_get_error(t) != json_tokener_success || t->char_offset != (int)n) {
        fprintf(stderr, "not JSON: %.*s\n", (int)n, s);
        abort();
    }
    json_object_put(o);
    json_tokener_free(t);
}

static void chunks_ok(const struct sy_buf *out, size_t from)
{
    const char *p = out->p ? out->p + from : "", *e = out->p ? out->p + out->len : p;
    while (p < e) {
        if ((size_t)(e - p) < 8 || memcmp(p, "data: ", 6))
            abort();
        const char *end = memmem(p, (size_t)(e - p), "\n\n", 2);
        if (!end)
            abort();
        json_ok(p + 6, (size_t)(end - p - 6));
        p = end + 2;
    }
}

static void err_ok(const struct sy_xerr *e)
{
    if (e->status < 400 || e->status > 599 || memchr(e->message, 0, sizeof e->message) == NULL)
        abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static const char *const env[] = {
        "AWS_REGION_NAME",       "AWS_REGION",        "AWS_DEFAULT_REGION",       "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "AWS_BEDROCK_RUNTIME_ENDPOINT"};
    for (size_t i = 0; i < sizeof env / sizeof env[0]; i++)
        unsetenv(env[i]);
    char err[256];
    if (B->configure(&dep, 0, &pc, err, sizeof err) || B->configure(&dep, 1, &pc_drop, err, sizeof err))
        abort();
    return 0;
}

static void do_encode(const char *p, size_t n, unsigned sel)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, p, n, &a, 0) == 0) {
        for (int k = 0; k < 3; k++) {
            int embed = k == 2;
            const char *model = embed ? embed_models[sel % 3] : chat_models[(sel + (unsigned)k) % 4];
            struct sy_xctx x = {.d = &dep,
                                .pc = (sel & 4) ? &pc_drop : &pc,
                                .model = model,
                                .op = embed ? SY_OP_EMBED : SY_OP_CHAT,
                                .stream = k == 1,
                                .now = 1440938160,
                                .arena = &a,
                                .fwd_headers = "anthropic-beta: a, b\r\n",
                                .fwd_headers_len = 22};
            struct sy_xout o;
            memset(&o, 0, sizeof o);
            sy_buf_init(&o.url, 1 << 12);
            sy_buf_init(&o.headers, 1 << 14);
            sy_buf_init(&o.body, 1 << 22);
            int rc = B->encode(&x, &d, &o);
            if (rc == 0) {
                json_ok(o.body.p, o.body.len);
                if (o.headers.len < 2 || memcmp(o.headers.p + o.headers.len - 2, "\r\n", 2) ||
                    strncmp(o.url.p, "https://", 8))
                    abort();
            } else {
                err_ok(&o.err);
            }
            sy_buf_free(&o.url);
            sy_buf_free(&o.headers);
            sy_buf_free(&o.body);
        }
    }
    sy_arena_free(&a);
}

static void init_state(struct sy_xstate *st)
{
    memset(st, 0, sizeof *st);
    strcpy(st->id, "chatcmpl-fuzz");
    strcpy(st->model, "m\"odel");
    st->created = 1;
    st->include_usage = 1;
}

static void do_response(const char *p, size_t n, unsigned sel)
{
    for (int k = 0; k < 2; k++) {
        struct sy_arena a;
        sy_arena_init(&a);
        int embed = k == 1;
        struct sy_xctx x = {.d = &dep,
                            .pc = &pc,
                            .model = embed ? embed_models[sel % 3] : chat_models[sel % 4],
                            .op = embed ? SY_OP_EMBED : SY_OP_CHAT,
                            .arena = &a};
        struct sy_xstate st;
        init_state(&st);
        struct sy_buf out;
        sy_buf_init(&out, 1 << 22);
        int rc = B->decode_response(&x, &st, p, n, &out);
        if (rc == 0)
            json_ok(out.p, out.len);
        else if (rc != SY_EUPPROTO)
            abort();
        else
            err_ok(&st.err);
        sy_buf_free(&out);
        sy_arena_free(&a);
    }
}

struct sctx {
    struct sy_xctx *x;
    struct sy_xstate *st;
    struct sy_buf *out;
    int failed;
};

static int on_event(void *ud, const char *type, size_t tl, const char *data, size_t dl)
{
    struct sctx *s = ud;
    if (s->failed)
        abort(); /* the framer stops at a nonzero return */
    size_t l0 = s->out->len;
    int rc = B->decode_event(s->x, s->st, type, tl, data, dl, s->out);
    if (rc == 0 || rc == SY_DONE) {
        chunks_ok(s->out, l0);
    } else {
        if (rc > 0)
            abort();
        err_ok(&s->st->err);
        s->failed = 1;
    }
    return rc;
}

static void do_event(const char *p, size_t n, unsigned sel)
{
    const char *nl = memchr(p, '\n', n);
    size_t tl = nl ? (size_t)(nl - p) : n;
    const char *data = nl ? nl + 1 : p + n;
    size_t dl = nl ? n - tl - 1 : 0;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_xctx x = {.d = &dep, .pc = &pc, .model = chat_models[sel % 4], .stream = 1, .arena = &a};
    struct sy_xstate st;
    init_state(&st);
    struct sy_buf out;
    sy_buf_init(&out, 1 << 22);
    struct sctx s = {&x, &st, &out, 0};
    on_event(&s, p, tl, data, dl);
    s.failed = 0;
    on_event(&s, p, tl, data, dl); /* a second time: the state carried over */
    sy_buf_free(&out);
    sy_arena_free(&a);
}

static void feed_wire(const char *w, size_t n, const uint8_t *splits, size_t ns, unsigned sel)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_xctx x = {.d = &dep, .pc = &pc, .model = chat_models[sel % 4], .stream = 1, .arena = &a};
    struct sy_xstate st;
    init_state(&st);
    struct sy_buf out;
    sy_buf_init(&out, 1 << 22);
    struct sctx s = {&x, &st, &out, 0};
    struct sy_framer f;
    memset(&f, 0, sizeof f);
    f.kind = SY_FRAME_AWS_EVENTSTREAM;
    f.max_event = 1 << 16;
    sy_buf_init(&f.acc, f.max_event + 1);
    int rc = 0;
    size_t off = 0, i = 0;
    while (off < n && !rc) {
        size_t k = ns ? 1 + splits[i++ % ns] % 64 : n;
        if (k > n - off)
            k = n - off;
        rc = sy_awses_feed(&f, w + off, k, on_event, &s);
        off += k;
    }
    if (!rc)
        rc = sy_awses_finish(&f, on_event, &s);
    if (f.acc.len > f.max_event)
        abort();
    sy_buf_free(&f.acc);
    sy_buf_free(&out);
    sy_arena_free(&a);
}

static void do_lines(const char *p, size_t n, unsigned sel)
{
    struct sy_buf w;
    sy_buf_init(&w, 1 << 22);
    const char *e = p + n;
    while (p < e) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        const char *le = nl ? nl : e;
        const char *sp = memchr(p, ' ', (size_t)(le - p));
        char type[256];
        size_t tl = sp ? (size_t)(sp - p) : (size_t)(le - p);
        if (tl < sizeof type && !memchr(p, 0, tl)) {
            memcpy(type, p, tl);
            type[tl] = 0;
            const char *pl = sp ? sp + 1 : le;
            int exc = type[0] == '!';
            const char *names[] = {exc ? ":exception-type" : ":event-type", ":content-type", ":message-type"};
            const char *values[] = {exc ? type + 1 : type, "application/json", exc ? "exception" : "event"};
            if (!exc || type[1])
                sy_awses_encode(&w, names, values, 3, pl, (size_t)(le - pl));
        }
        p = nl ? nl + 1 : e;
    }
    uint8_t splits[4] = {(uint8_t)sel, (uint8_t)(sel * 7), 3, 250};
    feed_wire(w.p ? w.p : "", w.len, splits, (sel & 1) ? 4 : 0, sel);
    feed_wire(w.p ? w.p : "", w.len, NULL, 0, sel);
    sy_buf_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 1 << 18)
        return 0;
    unsigned sel = data[0] / 6u;
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    switch (data[0] % 6) {
    case 0: do_encode(p, n, sel); break;
    case 1: do_response(p, n, sel); break;
    case 2: do_event(p, n, sel); break;
    case 3: {
        struct sy_xctx x = {.model = chat_models[0]};
        struct sy_xerr e;
        B->decode_error(&x, 400 + (int)(sel % 200), p, n, &e);
        err_ok(&e);
        break;
    }
    case 4: {
        /* the first 8 bytes choose the splits */
        size_t ns = n < 8 ? n : 8;
        feed_wire(p + ns, n - ns, (const uint8_t *)p, ns, sel);
        break;
    }
    default: do_lines(p, n, sel); break;
    }
    return 0;
}
