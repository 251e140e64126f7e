/* fuzz_anthropic.c - libFuzzer harness for the Anthropic adapter
 * (providers/anthropic.c). The first byte picks the entry point and the
 * context flags; the rest is its input:
 *
 *   byte 0 & 3   0 encode (input parsed as a JSON request first), 1 decode_response,
 *                2 decode_event (input split at blank lines into events; an event's
 *                first line is the SSE type, the rest its data), 3 decode_error
 *                (two bytes of status, then the body)
 *   byte 0 >> 2  bit 0 drop_params, 1 model_info max_tokens, 2 additional_drop_params,
 *                3 an opus-4.5 model, 4 a sonnet-4.5 model (encode: the vertex body),
 *                5 stream and a forwarded anthropic-beta header
 *
 * Whatever the input: no crash, leak or undefined behaviour, and when a call
 * returns 0 its output is JSON (json-c, strict): the request body, the
 * response, every "data: " chunk; header lines end in CRLF with no bare CR/LF.
 */
#include <json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "providers/anthropic.h"
#include "providers/oai.h"

static void must_json(const char *p, size_t n)
{
    struct json_tokener *tok = json_tokener_new_ex(SY_JDOM_MAX_DEPTH + 16);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *o = json_tokener_parse_ex(tok, p, (int)n);
    int ok = o && json_tokener_get_error(tok) == json_tokener_success && (size_t)tok->char_offset == n;
    json_object_put(o);
    json_tokener_free(tok);
    if (!ok)
        abort();
}

/* Every frame is "data: <json>\n\n". */
static void must_chunks(const char *p, size_t n)
{
    size_t q = 0;
    while (q < n) {
        if (n - q < 8 || memcmp(p + q, "data: ", 6))
            abort();
        const char *end = memmem(p + q + 6, n - q - 6, "\n\n", 2);
        if (!end)
            abort();
        must_json(p + q + 6, (size_t)(end - p - q - 6));
        q = (size_t)(end - p) + 2;
    }
}

static void must_lines(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] == 0)
            abort();
        if (p[i] == '\r' && (i + 1 >= n || p[i + 1] != '\n'))
            abort();
        if (p[i] == '\n' && (i == 0 || p[i - 1] != '\r'))
            abort();
    }
    if (n && (n < 2 || p[n - 1] != '\n'))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned mode = data[0] & 3, fl = data[0] >> 2;
    const char *in = (const char *)data + 1;
    size_t n = size - 1;
    static char drop1[] = "logit_bias", drop2[] = "temperature";
    static char *drops[] = {drop1, drop2};
    static const char fwd[] = "anthropic-beta: a-1, b-2 ,a-1\r\nX-Other: y\r\n";
    struct sy_pconf pc;
    memset(&pc, 0, sizeof pc);
    pc.base = "https://api.anthropic.com";
    pc.key = "sk-ant-fuzz";
    pc.version = "2023-06-01";
    pc.drop_params = fl & 1;
    pc.max_tokens = fl & 2 ? 8192 : -1;
    pc.drop_extra = drops;
    pc.n_drop_extra = fl & 4 ? 2 : 0;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_xctx x;
    memset(&x, 0, sizeof x);
    x.pc = &pc;
    x.model = fl & 8 ? "claude-opus-4-5-20251101" : fl & 16 ? "claude-sonnet-4-5" : "claude-3-5-sonnet-20241022";
    x.stream = (fl >> 5) & 1;
    x.now = 1700000000;
    x.arena = &a;
    if (fl & 32) {
        x.fwd_headers = fwd;
        x.fwd_headers_len = sizeof fwd - 1;
    }
    struct sy_xstate st;
    memset(&st, 0, sizeof st);
    memcpy(st.id, "chatcmpl-fuzz", 14);
    memcpy(st.model, "m", 2);
    st.created = 1700000000;
    struct sy_buf out;
    sy_buf_init(&out, 1 << 26);

    if (mode == 0) {
        struct sy_jdoc d;
        if (sy_jdom_parse(&d, in, n, &a, 0) == 0) {
            struct sy_xout o;
            memset(&o, 0, sizeof o);
            sy_buf_init(&o.url, 4096);
            sy_buf_init(&o.headers, 1 << 16);
            sy_buf_init(&o.body, 1 << 26);
            int rc = fl & 16 ? sy_anthropic_encode_body(&x, &d, 1, &o.body, &o.err)
                             : sy_adapter_anthropic.encode(&x, &d, &o);
            if (rc == 0) {
                must_json(o.body.p, o.body.len);
                must_lines(o.headers.p, o.headers.len);
                if (o.url.len && memchr(o.url.p, '\n', o.url.len))
                    abort();
            } else if (o.err.status < 400 || strlen(o.err.message) >= sizeof o.err.message) {
                abort();
            }
            sy_buf_free(&o.url);
            sy_buf_free(&o.headers);
            sy_buf_free(&o.body);
        }
    } else if (mode == 1) {
        int rc = sy_adapter_anthropic.decode_response(&x, &st, in, n, &out);
        if (rc == 0)
            must_json(out.p, out.len);
        else if (st.err.status < 400)
            abort();
    } else if (mode == 2) {
        const char *p = in, *end = in + n;
        while (p < end) {
            const char *e = memmem(p, (size_t)(end - p), "\n\n", 2);
            const char *ee = e ? e : end;
            const char *nl = memchr(p, '\n', (size_t)(ee - p));
            const char *type = p, *dat = nl ? nl + 1 : ee;
            size_t tl = (size_t)((nl ? nl : ee) - p), dl = (size_t)(ee - dat);
            size_t before = out.len;
            int rc = sy_adapter_anthropic.decode_event(&x, &st, type, tl, dat, dl, &out);
            if (out.len > before)
                must_chunks(out.p + before, out.len - before);
            if (rc == SY_DONE && !st.done)
                abort();
            if (rc && rc != SY_DONE && st.err.status < 400)
                abort();
            if (rc)
                break;
            p = e ? e + 2 : end;
        }
        sy_buf_reset(&out);
        sy_oai_chunk_usage(&st, &out);
        must_chunks(out.p, out.len);
    } else {
        int status = n >= 2 ? ((unsigned char)in[0] << 8 | (unsigned char)in[1]) % 1000 : 500;
        struct sy_xerr e;
        memset(&e, 0, sizeof e);
        sy_adapter_anthropic.decode_error(&x, status, n >= 2 ? in + 2 : in, n >= 2 ? n - 2 : n, &e);
        if (e.status < 400 || !e.cls[0] || strlen(e.message) >= sizeof e.message)
            abort();
    }
    sy_buf_free(&out);
    sy_arena_free(&a);
    return 0;
}
