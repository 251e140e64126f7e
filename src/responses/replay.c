/* replay.c - a whole `response` object written as the Responses event stream.
 *
 * A stage that had to hold the answer whole (the MCP tool loop,
 * stages/mcp_tools.c, runs the model's tool calls between rounds) still owes a
 * client that asked to stream the events OpenAI sends. The answer is complete,
 * so each item goes out at once, in the order and shapes of OpenAI's stream
 * (what the openai SDK's accumulator rebuilds into the same object):
 *
 *   response.created, response.in_progress      {response: the object with status
 *                                                "in_progress", output [], usage null}
 *   per output item i (output_index i):
 *     message          output_item.added {item: content []}; per part j:
 *                      content_part.added {part: text ""}, output_text.delta
 *                      {delta: the text} (refusal: refusal.delta), output_text.done,
 *                      content_part.done; output_item.done {item}
 *     function_call    output_item.added {item: arguments ""},
 *                      function_call_arguments.delta, .done, output_item.done
 *     mcp_list_tools   output_item.added {item: tools []}, mcp_list_tools.in_progress,
 *                      mcp_list_tools.completed (.failed with an error), output_item.done
 *     mcp_call         output_item.added {item: arguments "", output null},
 *                      mcp_call.in_progress, mcp_call_arguments.delta, .done,
 *                      mcp_call.completed (.failed with an error), output_item.done
 *     anything else    output_item.added, output_item.done (the item whole)
 *   response.completed (status "incomplete": response.incomplete; "failed":
 *   response.failed) {response: the object as given}
 *
 * sequence_number counts from 0. Item ids are the items' own (item_id of the
 * events); an item without one gets "" there.
 */
#include "responses/responses.h"

#include <string.h>

#include "core/errors.h"

struct rp {
    const struct sy_jdoc *d;
    struct sy_arena *a;
    struct sy_buf *out;
    int64_t seq;
    int err;
    size_t data_at; /* where the event's data starts in out */
};

static void ev_begin(struct rp *r, struct sy_jw *w, const char *type)
{
    sy_jw_init(w, r->out);
    if (SY_BUF_LIT(r->out, "event: ") || sy_buf_puts(r->out, type) || SY_BUF_LIT(r->out, "\ndata: "))
        w->err = SY_ENOSPC;
    r->data_at = r->out->len;
    sy_jw_obj(w);
    sy_jw_key(w, "type");
    sy_jw_cstr(w, type);
    sy_jw_key(w, "sequence_number");
    sy_jw_int(w, r->seq++);
}

static void ev_end(struct rp *r, struct sy_jw *w)
{
    sy_jw_end(w);
    /* raw spans of the upstream's JSON keep its whitespace: a line break
     * there would end the data line (or the event). JSON strings hold no
     * raw CR or LF, so every one is whitespace and becomes a space. */
    for (size_t i = r->data_at; !w->err && i < r->out->len; i++)
        if (r->out->p[i] == '\n' || r->out->p[i] == '\r')
            r->out->p[i] = ' ';
    if (!w->err && SY_BUF_LIT(r->out, "\n\n"))
        w->err = SY_ENOSPC;
    if (w->err)
        r->err = w->err;
}

/* Node obj of d written with members keys[i] replaced by the raw values
 * reps[i] (added when obj lacks them), the other members as they are. */
static void obj_with(struct sy_jw *w, const struct sy_jdoc *d, struct sy_arena *a, uint32_t obj,
                     const char *const *keys, const char *const *reps, size_t nk)
{
    unsigned char done[8] = {0};
    sy_jw_obj(w);
    for (uint32_t k = sy_jdom_first(d, obj); k; k = sy_jdom_next_key(d, k)) {
        size_t i;
        for (i = 0; i < nk; i++)
            if (sy_jdom_str_eq(d, k, keys[i]))
                break;
        size_t kl;
        const char *kv = sy_jdom_view(d, k, a, &kl);
        sy_jw_keyn(w, kv ? kv : "", kv ? kl : 0);
        if (i < nk) {
            sy_jw_raw(w, reps[i], strlen(reps[i]));
            done[i] = 1;
        } else {
            sy_jw_node(w, d, sy_jdom_val(k));
        }
    }
    for (size_t i = 0; i < nk; i++)
        if (!done[i]) {
            sy_jw_key(w, keys[i]);
            sy_jw_raw(w, reps[i], strlen(reps[i]));
        }
    sy_jw_end(w);
}

static void w_ref(struct sy_jw *w, const struct sy_jdoc *d, uint32_t item, int64_t idx)
{
    uint32_t id = sy_jdom_member(d, item, "id");
    sy_jw_key(w, "item_id");
    if (sy_jdom_kind(d, id) == 's')
        sy_jw_node(w, d, id);
    else
        sy_jw_cstr(w, "");
    sy_jw_key(w, "output_index");
    sy_jw_int(w, idx);
}

static void ev_item(struct rp *r, const char *type, uint32_t item, int64_t idx, const char *const *keys,
                    const char *const *reps, size_t nk)
{
    struct sy_jw w;
    ev_begin(r, &w, type);
    sy_jw_key(&w, "output_index");
    sy_jw_int(&w, idx);
    sy_jw_key(&w, "item");
    if (nk)
        obj_with(&w, r->d, r->a, item, keys, reps, nk);
    else
        sy_jw_node(&w, r->d, item);
    ev_end(r, &w);
}

/* An event naming the item and nothing else (mcp_call.in_progress ...). */
static void ev_ref(struct rp *r, const char *type, uint32_t item, int64_t idx)
{
    struct sy_jw w;
    ev_begin(r, &w, type);
    w_ref(&w, r->d, item, idx);
    ev_end(r, &w);
}

/* An event naming the item with one more member (delta, arguments, text). */
static void ev_ref_kv(struct rp *r, const char *type, uint32_t item, int64_t idx, const char *key, uint32_t val,
                      int content_index)
{
    struct sy_jw w;
    ev_begin(r, &w, type);
    w_ref(&w, r->d, item, idx);
    if (content_index >= 0) {
        sy_jw_key(&w, "content_index");
        sy_jw_int(&w, content_index);
    }
    sy_jw_key(&w, key);
    if (val)
        sy_jw_node(&w, r->d, val);
    else
        sy_jw_cstr(&w, "");
    if (!strcmp(type, "response.output_text.delta") || !strcmp(type, "response.output_text.done")) {
        sy_jw_key(&w, "logprobs");
        sy_jw_raw(&w, "[]", 2);
    }
    ev_end(r, &w);
}

static void message_item(struct rp *r, uint32_t item, int64_t idx)
{
    static const char *const k[] = {"content", "status"};
    static const char *const v[] = {"[]", "\"in_progress\""};
    ev_item(r, "response.output_item.added", item, idx, k, v, 2);
    int j = 0;
    uint32_t parts = sy_jdom_member(r->d, item, "content");
    for (uint32_t p = sy_jdom_kind(r->d, parts) == 'a' ? sy_jdom_first(r->d, parts) : 0; p;
         p = sy_jdom_next(r->d, p), j++) {
        int refusal = sy_jdom_str_eq(r->d, sy_jdom_member(r->d, p, "type"), "refusal");
        const char *field = refusal ? "refusal" : "text";
        uint32_t val = sy_jdom_member(r->d, p, field);
        struct sy_jw w;
        ev_begin(r, &w, "response.content_part.added");
        w_ref(&w, r->d, item, idx);
        sy_jw_key(&w, "content_index");
        sy_jw_int(&w, j);
        sy_jw_key(&w, "part");
        static const char *const pk[] = {"text"}, *const rk[] = {"refusal"};
        static const char *const pv[] = {"\"\""};
        obj_with(&w, r->d, r->a, p, refusal ? rk : pk, pv, 1);
        ev_end(r, &w);
        if (sy_jdom_kind(r->d, val) == 's') {
            ev_ref_kv(r, refusal ? "response.refusal.delta" : "response.output_text.delta", item, idx, "delta", val, j);
            ev_ref_kv(r, refusal ? "response.refusal.done" : "response.output_text.done", item, idx, field, val, j);
        }
        ev_begin(r, &w, "response.content_part.done");
        w_ref(&w, r->d, item, idx);
        sy_jw_key(&w, "content_index");
        sy_jw_int(&w, j);
        sy_jw_key(&w, "part");
        sy_jw_node(&w, r->d, p);
        ev_end(r, &w);
    }
    ev_item(r, "response.output_item.done", item, idx, NULL, NULL, 0);
}

static void function_call_item(struct rp *r, uint32_t item, int64_t idx)
{
    static const char *const k[] = {"arguments", "status"};
    static const char *const v[] = {"\"\"", "\"in_progress\""};
    ev_item(r, "response.output_item.added", item, idx, k, v, 2);
    uint32_t args = sy_jdom_member(r->d, item, "arguments");
    if (sy_jdom_kind(r->d, args) != 's')
        args = 0;
    ev_ref_kv(r, "response.function_call_arguments.delta", item, idx, "delta", args, -1);
    ev_ref_kv(r, "response.function_call_arguments.done", item, idx, "arguments", args, -1);
    ev_item(r, "response.output_item.done", item, idx, NULL, NULL, 0);
}

static int failed(const struct sy_jdoc *d, uint32_t item)
{
    uint32_t e = sy_jdom_member(d, item, "error");
    return e && !(sy_jdom_kind(d, e) == 's' && d->n[e].len == 2);
}

static void mcp_list_item(struct rp *r, uint32_t item, int64_t idx)
{
    static const char *const k[] = {"tools"};
    static const char *const v[] = {"[]"};
    ev_item(r, "response.output_item.added", item, idx, k, v, 1);
    ev_ref(r, "response.mcp_list_tools.in_progress", item, idx);
    ev_ref(r, failed(r->d, item) ? "response.mcp_list_tools.failed" : "response.mcp_list_tools.completed", item, idx);
    ev_item(r, "response.output_item.done", item, idx, NULL, NULL, 0);
}

static void mcp_call_item(struct rp *r, uint32_t item, int64_t idx)
{
    static const char *const k[] = {"arguments", "output", "error", "status"};
    static const char *const v[] = {"\"\"", "null", "null", "\"in_progress\""};
    ev_item(r, "response.output_item.added", item, idx, k, v, 4);
    ev_ref(r, "response.mcp_call.in_progress", item, idx);
    uint32_t args = sy_jdom_member(r->d, item, "arguments");
    if (sy_jdom_kind(r->d, args) != 's')
        args = 0;
    ev_ref_kv(r, "response.mcp_call_arguments.delta", item, idx, "delta", args, -1);
    ev_ref_kv(r, "response.mcp_call_arguments.done", item, idx, "arguments", args, -1);
    ev_ref(r, failed(r->d, item) ? "response.mcp_call.failed" : "response.mcp_call.completed", item, idx);
    ev_item(r, "response.output_item.done", item, idx, NULL, NULL, 0);
}

static void ev_response(struct rp *r, const char *type, int opening)
{
    struct sy_jw w;
    ev_begin(r, &w, type);
    sy_jw_key(&w, "response");
    if (opening) {
        static const char *const k[] = {"status", "output", "usage"};
        static const char *const v[] = {"\"in_progress\"", "[]", "null"};
        obj_with(&w, r->d, r->a, 0, k, v, 3);
    } else {
        size_t n;
        const char *raw = sy_jdom_raw(r->d, 0, &n); /* sy_jw_node writes node 0 as null */
        sy_jw_raw(&w, raw, n);
    }
    ev_end(r, &w);
}

int sy_resp_sse_replay(const char *resp, size_t n, struct sy_arena *a, struct sy_buf *out)
{
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, resp, n, a, 0) != 0 || sy_jdom_type(&d, 0) != 'o')
        return SY_EJSON;
    uint32_t output = sy_jdom_top(&d, "output");
    if (output && sy_jdom_kind(&d, output) != 'a')
        return SY_EJSON;
    struct rp r = {&d, a, out, 0, 0, 0};
    ev_response(&r, "response.created", 1);
    ev_response(&r, "response.in_progress", 1);
    int64_t idx = 0;
    for (uint32_t it = output ? sy_jdom_first(&d, output) : 0; it && !r.err; it = sy_jdom_next(&d, it), idx++) {
        if (sy_jdom_kind(&d, it) != 'o')
            return SY_EJSON;
        uint32_t ty = sy_jdom_member(&d, it, "type");
        if (sy_jdom_str_eq(&d, ty, "message"))
            message_item(&r, it, idx);
        else if (sy_jdom_str_eq(&d, ty, "function_call"))
            function_call_item(&r, it, idx);
        else if (sy_jdom_str_eq(&d, ty, "mcp_list_tools"))
            mcp_list_item(&r, it, idx);
        else if (sy_jdom_str_eq(&d, ty, "mcp_call"))
            mcp_call_item(&r, it, idx);
        else {
            ev_item(&r, "response.output_item.added", it, idx, NULL, NULL, 0);
            ev_item(&r, "response.output_item.done", it, idx, NULL, NULL, 0);
        }
    }
    uint32_t st = sy_jdom_top(&d, "status");
    ev_response(&r,
                sy_jdom_str_eq(&d, st, "incomplete") ? "response.incomplete"
                : sy_jdom_str_eq(&d, st, "failed")   ? "response.failed"
                                                     : "response.completed",
                0);
    return r.err;
}
