/* mcpitems.c - the pure parts of the MCP tool loop inside Responses and chat
 * calls (stages/mcp_tools.c): what a tool's result tells the model, and the
 * ids of OpenAI's mcp_approval_request items.
 *
 * Approval ids carry the call they ask about, so the request that answers
 * them (an mcp_approval_response, maybe on another instance, maybe without
 * previous_response_id) needs nothing stored:
 *
 *   "mcpr_" + base64({"c": call_id, "n": tool, "a": arguments, "l": server_label})
 *
 * Nothing in it is secret or trusted: the call it names is checked against the
 * caller's permissions when it runs, like any call the client could make on
 * /mcp with the same key.
 *
 * A result's text (LiteLLM's _parse_mcp_result): the text parts of
 * CallToolResult.content joined by a space, the other parts named
 * ("[Generated Image, EmbeddedResource]"), "Tool executed successfully" when
 * nothing is left; isError reported apart.
 */
#include "responses/responses.h"

#include <string.h>

#include "core/errors.h"
#include "responses/resp_impl.h"

#define APPROVAL_PREFIX     "mcpr_"
#define APPROVAL_PREFIX_LEN 5
#define APPROVAL_MAX        (64u << 20) /* an id longer than this is not ours */

int sy_resp_mcp_approval_id(const struct sy_resp_mcp_call *k, struct sy_buf *out)
{
    struct sy_buf j;
    sy_buf_init(&j, APPROVAL_MAX);
    struct sy_jw w;
    sy_jw_init(&w, &j);
    sy_jw_obj(&w);
    sy_jw_key(&w, "c");
    sy_jw_str(&w, k->call_id, k->call_id_len);
    sy_jw_key(&w, "n");
    sy_jw_str(&w, k->name, k->name_len);
    sy_jw_key(&w, "a");
    sy_jw_str(&w, k->args, k->args_len);
    sy_jw_key(&w, "l");
    sy_jw_str(&w, k->label ? k->label : "", k->label ? k->label_len : 0);
    sy_jw_end(&w);
    int rc = w.err ? SY_ENOSPC : 0;
    if (!rc && sy_buf_reserve(out, APPROVAL_PREFIX_LEN + 4 * ((j.len + 2) / 3) + 1) == 0) {
        sy_buf_append(out, APPROVAL_PREFIX, APPROVAL_PREFIX_LEN);
        out->len += sy__resp_b64_encode((const unsigned char *)j.p, j.len, out->p + out->len);
        out->p[out->len] = 0;
    } else {
        rc = SY_ENOSPC;
    }
    sy_buf_free(&j);
    return rc;
}

int sy_resp_mcp_approval_decode(const char *id, size_t n, struct sy_arena *a, struct sy_resp_mcp_call *k)
{
    memset(k, 0, sizeof *k);
    if (!id || n <= APPROVAL_PREFIX_LEN || n > APPROVAL_MAX || memcmp(id, APPROVAL_PREFIX, APPROVAL_PREFIX_LEN))
        return SY_EINVAL;
    size_t bn = n - APPROVAL_PREFIX_LEN, cap = bn / 4 * 3 + 3;
    char *raw = sy_arena_alloc(a, cap);
    if (!raw)
        return SY_EINVAL;
    long dl = sy__resp_b64_decode(id + APPROVAL_PREFIX_LEN, bn, raw, cap);
    struct sy_jdoc d;
    if (dl <= 0 || sy_jdom_parse(&d, raw, (size_t)dl, a, 64) != 0 || sy_jdom_type(&d, 0) != 'o')
        return SY_EINVAL;
    uint32_t c = sy_jdom_top(&d, "c"), nm = sy_jdom_top(&d, "n"), ar = sy_jdom_top(&d, "a"), l = sy_jdom_top(&d, "l");
    if (sy_jdom_kind(&d, c) != 's' || sy_jdom_kind(&d, nm) != 's' || sy_jdom_kind(&d, ar) != 's')
        return SY_EINVAL;
    k->call_id = sy_jdom_str(&d, c, a, &k->call_id_len);
    k->name = sy_jdom_str(&d, nm, a, &k->name_len);
    k->args = sy_jdom_str(&d, ar, a, &k->args_len);
    k->label = sy_jdom_kind(&d, l) == 's' ? sy_jdom_str(&d, l, a, &k->label_len) : "";
    if (!k->call_id || !k->name || !k->args || !k->name_len || !k->label)
        return SY_EINVAL;
    return 0;
}

int sy_resp_mcp_result_text(const char *json, size_t n, struct sy_arena *a, struct sy_buf *out, int *is_error)
{
    struct sy_jdoc d;
    *is_error = 0;
    size_t start = out->len;
    if (json && sy_jdom_parse(&d, json, n, a, 0) == 0 && sy_jdom_type(&d, 0) == 'o') {
        sy_jdom_bool(&d, sy_jdom_top(&d, "isError"), is_error);
        uint32_t content = sy_jdom_top(&d, "content");
        const char *other[64];
        size_t nother = 0;
        for (uint32_t p = sy_jdom_kind(&d, content) == 'a' ? sy_jdom_first(&d, content) : 0; p;
             p = sy_jdom_next(&d, p)) {
            uint32_t ty = sy_jdom_member(&d, p, "type");
            size_t l;
            const char *s;
            if (sy_jdom_str_eq(&d, ty, "text") && (s = sy_jdom_str(&d, sy_jdom_member(&d, p, "text"), a, &l))) {
                if (out->len > start)
                    SY_BUF_LIT(out, " ");
                sy_buf_append(out, s, l);
            } else if (nother < sizeof other / sizeof *other) {
                other[nother++] = sy_jdom_str_eq(&d, ty, "image")      ? "Image"
                                  : sy_jdom_str_eq(&d, ty, "audio")    ? "Audio"
                                  : sy_jdom_str_eq(&d, ty, "resource") ? "EmbeddedResource"
                                                                       : "ResourceLink";
            }
        }
        for (size_t i = 0; i < nother; i++) {
            if (!i)
                sy_buf_puts(out, out->len > start ? " [Generated " : "[Generated ");
            sy_buf_puts(out, other[i]);
            sy_buf_puts(out, i + 1 < nother ? ", " : "]");
        }
    }
    if (out->len == start)
        SY_BUF_LIT(out, "Tool executed successfully");
    return sy_buf_failed(out) ? SY_ENOSPC : 0;
}
