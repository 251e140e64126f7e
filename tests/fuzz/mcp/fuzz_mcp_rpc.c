/* fuzz_mcp_rpc.c - libFuzzer harness for the JSON-RPC reader
 * (src/mcp/rpc.c). The input is a body. Oracles: a body the reader accepts
 * is valid JSON to the independent DOM parser (providers/jdom.c); every span
 * it returns lies inside the body and is one JSON value; a method is
 * non-empty, NUL-free text; the answer the writers make from a message's id
 * and params reads back as a response with the same id bytes; sy_mcp_member
 * agrees. No crash, no hang, no read past the input (ASan). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/buf.h"
#include "mcp/mcp.h"
#include "providers/jdom.h"

static void check_span(const uint8_t *data, size_t size, const char *p, size_t n)
{
    if (!p)
        return;
    if (p < (const char *)data || p + n > (const char *)data + size || n == 0)
        abort();
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, p, n, &a, 0) != 0)
        abort();
    sy_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly size bytes: ASan sees any read past the end */
    char *body = malloc(size ? size : 1);
    if (!body)
        return 0;
    memcpy(body, data, size);
    struct sy_mcp_batch b;
    int code = 0;
    char err[128];
    int rc = sy_mcp_rpc_parse(body, size, 16, &b, &code, err, sizeof err);
    if (rc != 0) {
        if (code != -32700 && code != -32600 && code != -32603)
            abort();
        if (b.m || b.mem || !err[0])
            abort();
    } else {
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_jdoc d;
        if (sy_jdom_parse(&d, body, size, &a, 0) != 0)
            abort();
        sy_arena_free(&a);
        if (b.n == 0 || b.n > 16 || (!b.is_batch && b.n != 1))
            abort();
        struct sy_buf out;
        sy_buf_init(&out, 1 << 24);
        for (size_t i = 0; i < b.n; i++) {
            const struct sy_mcp_msg *m = &b.m[i];
            check_span((const uint8_t *)body, size, m->id, m->id_len);
            check_span((const uint8_t *)body, size, m->params, m->params_len);
            check_span((const uint8_t *)body, size, m->result, m->result_len);
            if (m->kind != SY_MCP_RESPONSE && (!m->method || !m->method[0]))
                abort();
            if (m->kind == SY_MCP_REQUEST && !m->id)
                abort();
            if (m->kind == SY_MCP_NOTIFICATION && m->id)
                abort();
            if (m->params && m->params[0] != '{')
                abort();
            /* the writers' answers read back (a result needs an id) */
            struct sy_mcp_batch r;
            if (m->id) {
                sy_buf_reset(&out);
                sy_mcp_rpc_result(&out, m->id, m->id_len, m->params, m->params_len);
                if (sy_buf_failed(&out) || sy_mcp_rpc_parse(out.p, out.len, 1, &r, &code, err, sizeof err) != 0)
                    abort();
                if (r.m[0].kind != SY_MCP_RESPONSE || r.m[0].id_len != m->id_len ||
                    memcmp(r.m[0].id, m->id, m->id_len) != 0)
                    abort();
                sy_mcp_batch_free(&r);
            }
            sy_buf_reset(&out);
            sy_mcp_rpc_error(&out, m->id, m->id_len, -32601, m->method ? m->method : "x");
            if (sy_mcp_rpc_parse(out.p, out.len, 1, &r, &code, err, sizeof err) != 0 || !r.m[0].is_error)
                abort();
            sy_mcp_batch_free(&r);
            if (!b.is_batch) {
                size_t l;
                const char *p = sy_mcp_member(body, size, "id", &l);
                if (m->id && (p != m->id || l != m->id_len))
                    abort();
            }
        }
        sy_buf_free(&out);
        sy_mcp_batch_free(&b);
    }
    /* sy_mcp_member on anything: a span inside, or NULL */
    size_t l;
    const char *p = sy_mcp_member(body, size, "params", &l);
    if (p && (p < body || p + l > body + size))
        abort();
    sy_mcp_negotiate(body, size);
    free(body);
    return 0;
}
