/* fuzz_gemini.c - libFuzzer harness for the Gemini format (gemini.c) and the
 * Vertex adapter's own paths (vertex.c; Claude is anthropic.c's harness):
 *
 *   input = mode (1) | flags (1) | payload
 *   mode % 6:  0 chat encode (AI Studio and Vertex)   1 embeddings encode
 *              2 decode_response                        3 embeddings decode (both)
 *              4 decode_event over payload events split on "\n\n" (the SSE framer's job)
 *              5 decode_error (status from flags)
 *   flags:     bit 0 stream, bit 1 drop_params, bit 2 additional_drop_params, bit 3 vertex for 2/4
 *
 * Whatever the input: no crash, and every output written with rc 0 (upstream
 * bodies, responses, each "data: {...}\n\n" chunk) is one JSON value json-c
 * accepts; errors carry a 4xx/5xx status and a NUL-terminated message. */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "providers/adapter.h"
#include "providers/gemini.h"
#include "providers/jdom.h"

static void must_json(const char *p, size_t n)
{
    json_tokener *t = json_tokener_new_ex(4 * SY_JDOM_MAX_DEPTH);
    json_object *o = json_tokener_parse_ex(t, p, (int)n);
    int ok = o && json_tokener_get_error(t) == json_tokener_success && (size_t)t->char_offset == n;
    json_object_put(o);
    json_tokener_free(t);
    if (!ok)
        abort();
}

static void must_err(const struct sy_xerr *e)
{
    if (e->status < 400 || e->status > 599 || !memchr(e->message, 0, sizeof e->message) ||
        !memchr(e->cls, 0, sizeof e->cls))
        abort();
}

/* "data: {json}\n\n" frames only */
static void must_chunks(const struct sy_buf *b, size_t from)
{
    size_t i = from;
    while (i < b->len) {
        if (b->len - i < 8 || memcmp(b->p + i, "data: ", 6) != 0)
            abort();
        const char *e = memmem(b->p + i, b->len - i, "\n\n", 2);
        if (!e)
            abort();
        must_json(b->p + i + 6, (size_t)(e - b->p - i - 6));
        i = (size_t)(e - b->p) + 2;
    }
}

static void encode(const struct sy_adapter *ad, struct sy_xctx *x, const char *p, size_t n)
{
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, p, n, x->arena, 0))
        return;
    struct sy_xout o;
    memset(&o, 0, sizeof o);
    sy_buf_init(&o.url, 1 << 16);
    sy_buf_init(&o.headers, 1 << 16);
    sy_buf_init(&o.body, 1 << 24);
    int rc = ad->encode(x, &d, &o);
    if (rc == 0) {
        must_json(o.body.p, o.body.len);
        if (!o.url.len || !o.headers.len || memmem(o.url.p, o.url.len, "key=", 4))
            abort();
    } else {
        must_err(&o.err);
    }
    sy_buf_free(&o.url);
    sy_buf_free(&o.headers);
    sy_buf_free(&o.body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 1 << 18)
        return 0;
    int mode = data[0] % 6, flags = data[1];
    const char *p = (const char *)data + 2;
    size_t n = size - 2;
    struct sy_arena a;
    sy_arena_init(&a);
    char *drop[] = {"seed", "stop", "n"};
    struct sy_pconf pc = {.base = "https://generativelanguage.googleapis.com",
                          .key = "k",
                          .project = "p",
                          .region = "us-central1",
                          .drop_params = (flags >> 1) & 1,
                          .drop_extra = (flags & 4) ? drop : NULL,
                          .n_drop_extra = (flags & 4) ? 3 : 0,
                          .max_tokens = -1};
    struct sy_pconf vpc = pc;
    vpc.base = "https://us-central1-aiplatform.googleapis.com";
    struct sy_deployment d = {.provider = "gemini"}, vd = {.provider = "vertex_ai"};
    struct sy_xctx x = {.d = &d, .pc = &pc, .model = "gemini-2.0-flash", .stream = flags & 1, .arena = &a};
    struct sy_xctx vx = x;
    vx.d = &vd;
    vx.pc = &vpc;
    vx.access_token = "tok";
    struct sy_xstate st;
    memset(&st, 0, sizeof st);
    strcpy(st.id, "chatcmpl-fuzz");
    strcpy(st.model, "gemini-2.0-flash");
    struct sy_buf out;
    sy_buf_init(&out, 1 << 24);
    int rc;
    switch (mode) {
    case 0:
        encode(&sy_adapter_gemini, &x, p, n);
        encode(&sy_adapter_vertex, &vx, p, n);
        break;
    case 1:
        x.op = vx.op = SY_OP_EMBED;
        encode(&sy_adapter_gemini, &x, p, n);
        encode(&sy_adapter_vertex, &vx, p, n);
        break;
    case 2:
        rc = ((flags & 8) ? sy_adapter_vertex : sy_adapter_gemini)
                 .decode_response((flags & 8) ? &vx : &x, &st, p, n, &out);
        if (rc == 0)
            must_json(out.p, out.len);
        else
            must_err(&st.err);
        break;
    case 3:
        x.op = vx.op = SY_OP_EMBED;
        rc = sy_adapter_gemini.decode_response(&x, &st, p, n, &out);
        if (rc == 0)
            must_json(out.p, out.len);
        else
            must_err(&st.err);
        sy_buf_reset(&out);
        memset(&st.err, 0, sizeof st.err);
        rc = sy_adapter_vertex.decode_response(&vx, &st, p, n, &out);
        if (rc == 0)
            must_json(out.p, out.len);
        else
            must_err(&st.err);
        break;
    case 4: {
        const struct sy_adapter *ad = (flags & 8) ? &sy_adapter_vertex : &sy_adapter_gemini;
        struct sy_xctx *cx = (flags & 8) ? &vx : &x;
        const char *e = p + n;
        while (p < e) {
            const char *sep = memmem(p, (size_t)(e - p), "\n\n", 2);
            size_t l = sep ? (size_t)(sep - p) : (size_t)(e - p);
            size_t before = out.len;
            rc = ad->decode_event(cx, &st, "", 0, p, l, &out);
            if (rc < 0) {
                must_err(&st.err);
                break;
            }
            must_chunks(&out, before);
            if (!sep)
                break;
            p = sep + 2;
        }
        break;
    }
    case 5: {
        struct sy_xerr e;
        memset(&e, 0, sizeof e);
        int status = 400 + (flags % 200);
        ((flags & 1) ? sy_adapter_vertex : sy_adapter_gemini).decode_error((flags & 1) ? &vx : &x, status, p, n, &e);
        must_err(&e);
        break;
    }
    }
    sy_buf_free(&out);
    sy_arena_free(&a);
    return 0;
}
