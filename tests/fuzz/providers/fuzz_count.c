/* fuzz_count.c - libFuzzer harness for the token counters (providers/count.c)
 * and the Accept negotiation (http/server.c sy_accept_pick):
 *
 *   input = mode (1) | payload
 *   mode % 4:  0 sy_count_parse of the payload as each counter's answer
 *              1 the Anthropic-format requests (Anthropic, Vertex Claude,
 *                Bedrock) built from the payload as the client's JSON body
 *              2 the Gemini rewrite of the payload as a generateContent body
 *              3 sy_accept_pick of the payload as an Accept header
 *
 * No crash, no leak; a parsed count is never negative; a built request's
 * headers are whole lines without a bare CR or LF inside; a built body is JSON
 * that parses; the pick is a valid index. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/buf.h"
#include "http/server.h"
#include "providers/count.h"

static void check_out(const struct sy_xout *o)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    if (o->body.len && sy_jdom_parse(&d, o->body.p, o->body.len, &a, 0) != 0)
        abort();
    for (size_t i = 0; i < o->headers.len; i++) {
        char c = o->headers.p[i];
        if ((c == '\r' && (i + 1 >= o->headers.len || o->headers.p[i + 1] != '\n')) ||
            (c == '\n' && (i == 0 || o->headers.p[i - 1] != '\r')))
            abort();
    }
    sy_arena_free(&a);
}

static void outs(struct sy_xout *o, int init)
{
    if (init) {
        memset(o, 0, sizeof *o);
        sy_buf_init(&o->url, 1 << 16);
        sy_buf_init(&o->headers, 1 << 16);
        sy_buf_init(&o->body, 1 << 22);
    } else {
        sy_buf_free(&o->url);
        sy_buf_free(&o->headers);
        sy_buf_free(&o->body);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 1 << 18)
        return 0;
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    switch (data[0] % 4) {
    case 0:
        for (int k = SY_COUNT_ESTIMATE; k <= SY_COUNT_VERTEX_GEMINI; k++)
            if (sy_count_parse((enum sy_count_kind)k, p, n) < -1)
                abort();
        break;
    case 1: {
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_jdoc d;
        if (sy_jdom_parse(&d, p, n, &a, 1 << 16) == 0 && sy_jdom_type(&d, 0) == 'o') {
            struct sy_pconf pc = {.base = "https://h.example.com",
                                  .key = "k",
                                  .access_key = "AK",
                                  .secret_key = "SK",
                                  .region = "us-east-1",
                                  .project = "p"};
            static const char fwd[] = "anthropic-beta: a\r\nanthropic-version: b\r\n";
            struct sy_xctx x = {.pc = &pc,
                                .model = "us.anthropic.claude-x:0",
                                .arena = &a,
                                .now = 1700000000,
                                .access_token = "t",
                                .fwd_headers = fwd,
                                .fwd_headers_len = sizeof fwd - 1};
            int (*const fns[])(const struct sy_xctx *, const struct sy_jdoc *,
                               struct sy_xout *) = {sy_count_anthropic, sy_count_vertex_claude, sy_count_bedrock};
            for (size_t i = 0; i < 3; i++) {
                struct sy_xout o;
                outs(&o, 1);
                if (fns[i](&x, &d, &o) == 0)
                    check_out(&o);
                outs(&o, 0);
            }
        }
        sy_arena_free(&a);
        break;
    }
    case 2: {
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_pconf pc = {0};
        struct sy_xctx x = {.pc = &pc, .model = "gemini-x", .arena = &a};
        for (int k = SY_COUNT_GEMINI; k <= SY_COUNT_VERTEX_GEMINI; k++) {
            struct sy_xout o;
            outs(&o, 1);
            sy_buf_puts(&o.url, "https://g/v1beta/models/gemini-x:generateContent");
            sy_buf_append(&o.body, p, n);
            if (sy_count_gemini(&x, (enum sy_count_kind)k, &o) == 0)
                check_out(&o);
            outs(&o, 0);
        }
        sy_arena_free(&a);
        break;
    }
    default: {
        static const char *const types[] = {"text/html", "application/json", "text/plain"};
        int i = sy_accept_pick(p, n, types, 3);
        if (i < 0 || i > 2)
            abort();
        break;
    }
    }
    return 0;
}
