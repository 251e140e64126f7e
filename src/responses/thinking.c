/* thinking.c - Anthropic's signed thinking blocks carried through a Responses
 * reasoning item (resp_impl.h, "thinking.c").
 *
 * A deployment behind the chat bridge (anthropic/, bedrock/, vertex_ai/
 * Claude) answers with thinking blocks: {type:thinking, thinking, signature}
 * and {type:redacted_thinking, data}. Anthropic refuses the next turn of a
 * tool loop unless the assistant turn starts with them again, unchanged. A
 * Responses client keeps only output items, so the blocks ride in the one
 * opaque member a reasoning item has for this, encrypted_content:
 *
 *   "swy-thinking-1:" + base64(JSON array of the blocks, canonical)
 *
 * answer.c / stream.c write it; request.c reads it back from a reasoning
 * input item (or the stored conversation) into the next assistant message's
 * thinking_blocks. Nothing is secret in it (the signature is Anthropic's own
 * integrity check), hence base64, not encryption. What does not start with
 * the prefix (OpenAI's Fernet tokens, null) or does not decode to well-formed
 * blocks is not ours: request.c drops that item as before.
 */
#include <string.h>

#include "responses/resp_impl.h"

#define PREFIX_LEN (sizeof SY__RESP_THINK_PREFIX - 1)
#define READ_CAP   ((size_t)64 << 20) /* encrypted_content accepted, in bytes */

static void begin(struct sy_buf *arr, struct sy_jw *w)
{
    if (arr->len)
        sy_buf_append(arr, ",", 1);
    sy_jw_init(w, arr);
}

void sy__resp_think_add_raw(struct sy_buf *arr, int redacted, const char *text, size_t n, const char *sig, size_t sl)
{
    struct sy_jw w;
    begin(arr, &w);
    sy_jw_obj(&w);
    sy_jw_key(&w, "type");
    if (redacted) {
        sy_jw_cstr(&w, "redacted_thinking");
        sy_jw_key(&w, "data");
        sy_jw_str(&w, text, n);
    } else {
        sy_jw_cstr(&w, "thinking");
        sy_jw_key(&w, "thinking");
        sy_jw_str(&w, text, n);
        sy_jw_key(&w, "signature");
        sy_jw_str(&w, sig, sl);
    }
    sy_jw_end(&w);
}

/* 1 for a block worth carrying: thinking with string thinking and a
 * non-empty string signature, or redacted_thinking with non-empty data. */
static int block_ok(const struct sy_jdoc *d, uint32_t b, uint32_t *x, uint32_t *sig)
{
    if (sy_jdom_kind(d, b) != 'o')
        return 0;
    uint32_t t = sy_jdom_member(d, b, "type");
    if (sy_jdom_str_eq(d, t, "redacted_thinking")) {
        *x = sy_jdom_member(d, b, "data");
        *sig = 0;
        return sy_jdom_kind(d, *x) == 's' && d->n[*x].len > 2;
    }
    if (!sy_jdom_str_eq(d, t, "thinking"))
        return 0;
    *x = sy_jdom_member(d, b, "thinking");
    *sig = sy_jdom_member(d, b, "signature");
    return sy_jdom_kind(d, *x) == 's' && sy_jdom_kind(d, *sig) == 's' && d->n[*sig].len > 2;
}

void sy__resp_think_add(struct sy_buf *arr, const struct sy_jdoc *d, uint32_t b)
{
    uint32_t x, sig;
    if (!block_ok(d, b, &x, &sig))
        return;
    struct sy_jw w;
    begin(arr, &w);
    sy_jw_obj(&w);
    sy_jw_key(&w, "type");
    sy_jw_cstr(&w, sig ? "thinking" : "redacted_thinking");
    sy_jw_key(&w, sig ? "thinking" : "data");
    sy_jw_node(&w, d, x);
    if (sig) {
        sy_jw_key(&w, "signature");
        sy_jw_node(&w, d, sig);
    }
    sy_jw_end(&w);
}

void sy__resp_think_write(struct sy_jw *w, const struct sy_buf *arr)
{
    if (!arr->len || arr->err)
        return;
    size_t n = arr->len + 2;
    struct sy_buf json, out; /* [arr], then "<prefix><base64>" (quotes included: base64 needs no escaping) */
    sy_buf_init(&json, n + 1);
    sy_buf_init(&out, PREFIX_LEN + (n + 2) / 3 * 4 + 3);
    sy_buf_append(&json, "[", 1);
    sy_buf_append(&json, arr->p, arr->len);
    sy_buf_append(&json, "]", 1);
    if (!sy_buf_reserve(&out, PREFIX_LEN + (n + 2) / 3 * 4 + 2) && !json.err) {
        out.p[0] = '"';
        memcpy(out.p + 1, SY__RESP_THINK_PREFIX, PREFIX_LEN);
        size_t o = 1 + PREFIX_LEN + sy__resp_b64_encode((const unsigned char *)json.p, n, out.p + 1 + PREFIX_LEN);
        out.p[o++] = '"';
        out.len = o;
        sy_jw_key(w, "encrypted_content");
        sy_jw_raw(w, out.p, out.len);
    }
    sy_buf_free(&json);
    sy_buf_free(&out);
}

const char *sy__resp_think_read(const char *s, size_t n, struct sy_arena *a, size_t *outn, struct sy_buf *text)
{
    *outn = 0;
    if (!s || n <= PREFIX_LEN || n > READ_CAP || memcmp(s, SY__RESP_THINK_PREFIX, PREFIX_LEN))
        return NULL;
    size_t cap = (n - PREFIX_LEN) / 4 * 3 + 3;
    char *json = sy_arena_alloc(a, cap);
    long jl = sy__resp_b64_decode(s + PREFIX_LEN, n - PREFIX_LEN, json, cap);
    struct sy_jdoc d;
    if (jl <= 0 || sy_jdom_parse(&d, json, (size_t)jl, a, 0) || d.n[0].type != 'a' || !d.n[0].kids)
        return NULL;
    struct sy_buf arr;
    sy_buf_init(&arr, READ_CAP);
    for (uint32_t b = sy_jdom_first(&d, 0); b; b = sy_jdom_next(&d, b)) {
        uint32_t x, sig;
        if (!block_ok(&d, b, &x, &sig)) { /* ours are whole: anything else was altered */
            sy_buf_free(&arr);
            return NULL;
        }
        sy__resp_think_add(&arr, &d, b);
    }
    for (uint32_t b = sy_jdom_first(&d, 0); b && text; b = sy_jdom_next(&d, b)) {
        uint32_t x = sy_jdom_member(&d, b, "thinking");
        size_t xl;
        const char *xs = sy_jdom_kind(&d, x) == 's' ? sy_jdom_str(&d, x, a, &xl) : NULL;
        if (xs && xl)
            sy_buf_append(text, xs, xl);
    }
    const char *r = arr.err || !arr.len ? NULL : sy_arena_strndup(a, arr.p, arr.len);
    *outn = r ? arr.len : 0;
    sy_buf_free(&arr);
    return r;
}
