/* fuzz_messages.c - libFuzzer harness for the Anthropic Messages ingress
 * translation (dialects/messages.c). One input drives every direction:
 *
 *   input as an Anthropic request    sy_msg_to_openai      -> a JSON object, or a 400/413 with a message
 *   input as a chat.completion       sy_msg_from_openai    -> a JSON object (the input as the request too)
 *   input split on '\n' as payloads  sy_msg_stream_chunk*  -> events in an order the SDKs accept
 *   input as an OpenAI error         sy_msg_error_from_openai -> a JSON object
 *
 * Never crashes; every JSON written is valid (json-c, strict, UTF-8 checked);
 * a stream is message_start first, blocks started at the next index one at a
 * time, deltas of the block's kind, stopped once, message_delta then
 * message_stop last, or ended by a single error event; nothing is written for
 * a payload refused with SY_EJSON/SY_EUPPROTO nor after the end. An input
 * whose first byte is '!' runs with small output caps (SY_ENOSPC paths; output
 * is then not checked).
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "dialects/messages.h"

static json_object *parse(const char *p, size_t n)
{
    json_tokener *t = json_tokener_new_ex(1024);
    json_tokener_set_flags(t, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = json_tokener_parse_ex(t, p, (int)n);
    if (json_tokener_get_error(t) != json_tokener_success || json_tokener_get_parse_end(t) != n ||
        !json_object_is_type(o, json_type_object)) {
        fprintf(stderr, "invalid JSON written: %.*s\n", (int)(n > 2000 ? 2000 : n), p);
        abort();
    }
    json_tokener_free(t);
    return o;
}

static void check_json(const char *p, size_t n)
{
    json_object_put(parse(p, n));
}

static const char *member_str(json_object *o, const char *k)
{
    json_object *v;
    if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_string))
        abort();
    return json_object_get_string(v);
}

static int member_int(json_object *o, const char *k)
{
    json_object *v;
    if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_int))
        abort();
    return json_object_get_int(v);
}

/* The event text p[0..n): see the top of the file. */
static void check_events(const char *p, size_t n)
{
    enum { START, BODY, DELTA, STOPPED } st = START;
    int open = -1, next = 0;
    char kind[16] = "";
    size_t i = 0;
    while (i < n) {
        if (n - i < 7 || memcmp(p + i, "event: ", 7))
            abort();
        const char *ev = p + i + 7, *nl = memchr(ev, '\n', n - (i + 7));
        if (!nl || (size_t)(p + n - nl) < 7 || memcmp(nl + 1, "data: ", 6))
            abort();
        const char *dp = nl + 7, *end = memmem(dp, (size_t)(p + n - dp), "\n\n", 2);
        if (!end)
            abort();
        size_t el = (size_t)(nl - ev);
        json_object *o = parse(dp, (size_t)(end - dp));
        const char *type = member_str(o, "type");
        if (strlen(type) != el || memcmp(type, ev, el) || st == STOPPED)
            abort();
        if (!strcmp(type, "error")) {
            json_object *e;
            if (!json_object_object_get_ex(o, "error", &e))
                abort();
            member_str(e, "type");
            member_str(e, "message");
            st = STOPPED;
        } else if (!strcmp(type, "message_start")) {
            if (st != START)
                abort();
            st = BODY;
        } else if (!strcmp(type, "content_block_start")) {
            json_object *cb;
            if (st != BODY || open != -1 || member_int(o, "index") != next ||
                !json_object_object_get_ex(o, "content_block", &cb))
                abort();
            open = next++;
            snprintf(kind, sizeof kind, "%s", member_str(cb, "type"));
            if (!strcmp(kind, "tool_use")) {
                member_str(cb, "id");
                member_str(cb, "name");
            }
        } else if (!strcmp(type, "content_block_delta")) {
            json_object *d;
            if (open == -1 || member_int(o, "index") != open || !json_object_object_get_ex(o, "delta", &d))
                abort();
            const char *dt = member_str(d, "type");
            if (!strcmp(kind, "text")       ? strcmp(dt, "text_delta")
                : !strcmp(kind, "tool_use") ? strcmp(dt, "input_json_delta")
                                            : (strcmp(dt, "thinking_delta") && strcmp(dt, "signature_delta")))
                abort();
        } else if (!strcmp(type, "content_block_stop")) {
            if (open == -1 || member_int(o, "index") != open)
                abort();
            open = -1;
        } else if (!strcmp(type, "message_delta")) {
            json_object *d, *u;
            if (st != BODY || open != -1 || !json_object_object_get_ex(o, "delta", &d) ||
                !json_object_object_get_ex(o, "usage", &u))
                abort();
            member_str(d, "stop_reason");
            member_int(u, "output_tokens");
            st = DELTA;
        } else if (!strcmp(type, "message_stop")) {
            if (st != DELTA)
                abort();
            st = STOPPED;
        } else {
            abort();
        }
        json_object_put(o);
        i = (size_t)(end - p) + 2;
    }
    if (st != STOPPED)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    int tiny = size && p[0] == '!';
    size_t cap = tiny ? 96 + size % 512 : (size_t)1 << 24;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_buf out;
    sy_buf_init(&out, cap);

    /* 1. as an Anthropic request */
    struct sy_jdoc req;
    int have_req = sy_jdom_parse(&req, p, size, &a, 0) == 0;
    if (have_req) {
        struct sy_xerr e;
        memset(&e, 0, sizeof e);
        int rc = sy_msg_to_openai(&req, &a, &out, &e);
        if (rc == 0) {
            if (!tiny)
                check_json(out.p, out.len);
        } else {
            if ((rc != SY_EINVAL && rc != SY_ENOSPC) || out.len != 0 || !e.message[0] ||
                (e.status != 400 && e.status != 413) || strcmp(e.type, "invalid_request_error"))
                abort();
        }
    }

    /* 2. as a chat.completion */
    sy_buf_reset(&out);
    int rc = sy_msg_from_openai(p, size, size & 1 ? NULL : "claude-x", size & 2 ? NULL : "msg_fz",
                                have_req ? &req : NULL, &a, &out);
    if (rc == 0 && !tiny)
        check_json(out.p, out.len);
    else if (rc != 0 && rc != SY_EJSON && rc != SY_EUPPROTO && rc != SY_ENOSPC)
        abort();

    /* 3. as a stream, one payload a line */
    sy_buf_reset(&out);
    struct sy_msgstream s;
    sy_msg_stream_init(&s, "claude-x", size & 4 ? "msg_fz" : NULL, have_req ? &req : NULL);
    int done = 0, nospc = 0;
    for (size_t i = 0; i < size;) {
        const char *nl = memchr(p + i, '\n', size - i);
        size_t l = nl ? (size_t)(nl - (p + i)) : size - i;
        size_t before = out.len;
        rc = sy_msg_stream_chunk(&s, p + i, l, &out);
        if (rc == SY_EJSON || rc == SY_EUPPROTO) {
            if (out.len != before || done)
                abort();
            if (size & 8) /* as the gateway does */
                sy_msg_stream_error(&s, 502, "invalid chunk", 13, &out);
        } else if (rc == SY_DONE) {
            if (done && out.len != before)
                abort();
            done = 1;
        } else if (rc == SY_ENOSPC) {
            nospc = 1;
        } else if (rc != 0 || done) {
            abort();
        }
        i += l + 1;
    }
    size_t before = out.len;
    sy_msg_stream_end(&s, &out);
    if (done && out.len != before)
        abort();
    if (!tiny && !nospc)
        check_events(out.p, out.len);

    /* 4. as an error body */
    sy_buf_reset(&out);
    int status = size ? (int)(unsigned char)p[size - 1] * 3 : 0;
    sy_msg_error_from_openai(status, p, size, &out);
    if (!tiny)
        check_json(out.p, out.len);

    sy_buf_free(&out);
    sy_arena_free(&a);
    return 0;
}
