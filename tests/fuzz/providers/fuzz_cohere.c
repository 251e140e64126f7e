/* fuzz_cohere.c - libFuzzer harness for the Cohere adapter (providers/cohere.c);
 * fuzz_ollama.c includes it for the Ollama adapter.
 *
 *   input = mode (1) | bytes
 *   mode & 3    0 encode (an OpenAI request)   1 decode_response (an upstream body)
 *               2 stream (upstream stream bytes through the adapter's framer)
 *               3 decode_error (status from the next byte, then the body)
 *   mode & 4    op embed        mode & 8    client stream: true
 *   mode & 16   drop_params     mode >> 5   stream: piece size seed (0: whole)
 *
 * Checks: nothing crashes or leaks (ASan/UBSan); an encoded body, a decoded
 * response and every "data: " frame written before a 0 / SY_DONE return are
 * one complete JSON value (json-c); the stream gives the same client bytes
 * fed whole and in pieces; errors carry a status and a NUL-terminated message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/arena.h"
#include "core/buf.h"
#include "core/errors.h"
#include "providers/adapter.h"
#include "providers/jdom.h"
#include "upstream/framing.h"

#ifndef FUZZ_ADAPTER
#define FUZZ_ADAPTER sy_adapter_cohere
#define FUZZ_MODEL   "command-r-plus-08-2024"
#endif

static void must_json(const char *p, size_t n)
{
    json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH * 4);
    json_object *o = json_tokener_parse_ex(tok, p, (int)n);
    if (!o || json_tokener_get_parse_end(tok) != n)
        abort();
    json_object_put(o);
    json_tokener_free(tok);
}

/* Every frame of out[from..) is "data: <JSON>\n\n". */
static void must_frames(const struct sy_buf *out, size_t from)
{
    if (!out->p)
        return; /* nothing written yet */
    const char *p = out->p + from, *e = out->p + out->len;
    while (p < e) {
        if (e - p < 8 || memcmp(p, "data: ", 6))
            abort();
        const char *end = p + 6;
        while (end + 1 < e && !(end[0] == '\n' && end[1] == '\n'))
            end++;
        if (end + 1 >= e)
            abort();
        must_json(p + 6, (size_t)(end - p - 6));
        p = end + 2;
    }
}

static void must_err(const struct sy_xerr *e)
{
    if (e->status < 400 || e->status > 599 || !memchr(e->message, 0, sizeof e->message) ||
        !memchr(e->type, 0, sizeof e->type))
        abort();
}

struct ctx {
    struct sy_xctx x;
    struct sy_xstate st;
    struct sy_buf out;
    int rc;
};

static int on_event(void *ud, const char *type, size_t tl, const char *data, size_t dl)
{
    struct ctx *c = ud;
    size_t before = c->out.len;
    c->rc = FUZZ_ADAPTER.decode_event(&c->x, &c->st, type, tl, data, dl, &c->out);
    if (c->rc == 0 || c->rc == SY_DONE)
        must_frames(&c->out, before);
    else
        must_err(&c->st.err);
    if (c->rc < 0)
        c->out.len = before;
    return c->rc;
}

static void state(struct sy_xstate *st)
{
    memset(st, 0, sizeof *st);
    memcpy(st->id, "chatcmpl-fuzz", 14);
    memcpy(st->model, "client-model", 13);
    st->created = 1700000000;
    st->include_usage = 1;
}

/* The client bytes of a stream fed in pieces from seed (0: whole), + the result. */
static char *stream(const struct sy_xctx *x, const char *p, size_t n, unsigned seed, size_t *outn)
{
    struct ctx c = {.x = *x};
    state(&c.st);
    sy_buf_init(&c.out, 1 << 26);
    struct sy_framer fr;
    sy_framer_init(&fr, FUZZ_ADAPTER.framing, 1 << 20);
    int rc = 0;
    size_t at = 0;
    uint32_t r = seed * 2654435761u + 1;
    while (at < n && !rc) {
        size_t k = n - at;
        if (seed) {
            r = r * 1103515245u + 12345u;
            size_t want = 1 + (r >> 16) % 7;
            if (want < k)
                k = want;
        }
        rc = sy_framer_feed(&fr, p + at, k, on_event, &c);
        at += k;
    }
    if (!rc)
        rc = sy_framer_finish(&fr, on_event, &c);
    sy_framer_free(&fr);
    sy_buf_printf(&c.out, "|%d|%d|%d|%lld|%lld", rc, c.st.finished, c.st.ntools, (long long)c.st.u.prompt,
                  (long long)c.st.u.completion);
    *outn = c.out.len;
    return c.out.p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned mode = data[0];
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    struct sy_deployment d = {.max_tokens = -1};
    struct sy_pconf pc = {.base = "https://upstream.example", .key = "k", .drop_params = (mode & 16) != 0};
    static char seed_name[] = "seed"; /* additional_drop_params: ["seed"] */
    char *extra[1] = {seed_name};
    pc.drop_extra = extra;
    pc.n_drop_extra = 1;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_xctx x = {.d = &d,
                        .pc = &pc,
                        .model = FUZZ_MODEL,
                        .op = (mode & 4) ? SY_OP_EMBED : SY_OP_CHAT,
                        .stream = (mode & 8) != 0,
                        .now = 1700000000,
                        .arena = &a};
    switch (mode & 3) {
    case 0: {
        struct sy_jdoc req;
        if (sy_jdom_parse(&req, p, n, &a, 0))
            break;
        struct sy_xout o;
        memset(&o, 0, sizeof o);
        sy_buf_init(&o.url, 4096);
        sy_buf_init(&o.headers, 16384);
        sy_buf_init(&o.body, 1 << 26);
        int rc = FUZZ_ADAPTER.encode(&x, &req, &o);
        if (rc == 0) {
            if (!o.url.len || !o.headers.len || o.headers.p[o.headers.len - 1] != '\n')
                abort();
            must_json(o.body.p, o.body.len);
        } else {
            must_err(&o.err);
        }
        sy_buf_free(&o.url);
        sy_buf_free(&o.headers);
        sy_buf_free(&o.body);
        break;
    }
    case 1: {
        struct sy_xstate st;
        state(&st);
        struct sy_buf out;
        sy_buf_init(&out, 1 << 26);
        if (FUZZ_ADAPTER.decode_response(&x, &st, p, n, &out) == 0)
            must_json(out.p, out.len);
        else
            must_err(&st.err);
        sy_buf_free(&out);
        break;
    }
    case 2: {
        size_t wl, sl;
        char *whole = stream(&x, p, n, 0, &wl);
        char *split = stream(&x, p, n, (mode >> 5) + 1, &sl);
        if (wl != sl || memcmp(whole, split, wl))
            abort();
        free(whole);
        free(split);
        break;
    }
    default: {
        if (!n)
            break;
        struct sy_xerr e;
        memset(&e, 0x55, sizeof e);
        FUZZ_ADAPTER.decode_error(&x, 400 + (unsigned char)p[0] % 200, p + 1, n - 1, &e);
        must_err(&e);
        break;
    }
    }
    sy_arena_free(&a);
    return 0;
}
