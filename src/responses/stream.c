/* stream.c - OpenAI chat chunks -> the Responses event stream (responses.h).
 * After LiteLLM's LiteLLMCompletionStreamingIterator, with the event set and
 * field shapes OpenAI's API sends: the openai SDKs' ResponseStream
 * accumulator (output_item.added before an item's deltas, content_part.added
 * before output_text.delta, matching output_index / content_index / item_id)
 * and the Vercel AI SDK's responses model parse it.
 *
 * Every event: "event: <type>\ndata: {"type":<type>,"sequence_number":N,...}\n\n",
 * N = 0, 1, 2 ... over the stream.
 *
 *   chat chunk                      events
 *   first payload                   response.created, response.in_progress {response: status
 *                                   "in_progress", output [], usage null}
 *   delta.reasoning_content         reasoning item ("rs_<seed>", later ones "rs_<seed>_<k>"):
 *     | delta.reasoning             output_item.added {item {type:reasoning,id,summary:[]}},
 *                                   reasoning_summary_part.added {item_id, output_index,
 *                                   summary_index 0, part {type:summary_text,text:""}}, then
 *                                   reasoning_summary_text.delta {.., summary_index, delta}
 *   delta.thinking_blocks           kept for the reasoning item (opened for them if need be):
 *                                   thinking pieces and signature pieces make one block until
 *                                   a piece of text follows a signature; redacted_thinking
 *                                   blocks whole; its output_item.done (and the final
 *                                   response) carries encrypted_content with them (thinking.c)
 *   delta.content                   message item ("msg_<seed>", later ones "msg_<seed>_<k>"):
 *                                   output_item.added {item {type:message,id,status:in_progress,
 *                                   role:assistant,content:[]}}, content_part.added {item_id,
 *                                   output_index, content_index 0, part {type:output_text,
 *                                   text:"",annotations:[]}}, then output_text.delta {item_id,
 *                                   output_index, content_index, delta, logprobs:[]}
 *   delta.refusal                   the same with part {type:refusal,refusal:""} and
 *                                   response.refusal.delta {.., delta}
 *   delta.tool_calls[k]             a function_call item ("fc_<seed>_<n>", call_id the call's
 *                                   id or "call_<seed>_<n>") when the call's index or id is new:
 *                                   output_item.added {item {type:function_call,id,call_id,name,
 *                                   arguments:"",status:in_progress}}; every arguments piece a
 *                                   function_call_arguments.delta {item_id, output_index, delta}
 *                                   (pieces of a call already closed are dropped); named after
 *                                   a namespace tool: the item has name and namespace (tools.c)
 *     named after a custom tool     a custom_tool_call item ("ctc_<seed>_<n>"): output_item.added
 *                                   {item {type:custom_tool_call,id,call_id,name,[namespace],
 *                                   input:"",status:in_progress}}; custom_tool_call_input.delta
 *                                   {item_id, output_index, delta} with the part of the
 *                                   arguments' "input" string decoded so far (tools.c)
 *   (another kind opens)            the open item is closed first:
 *                                     reasoning: reasoning_summary_text.done {.., text},
 *                                       reasoning_summary_part.done {.., part}, output_item.done
 *                                     message: output_text.done {.., text, logprobs:[]} (or
 *                                       refusal.done {.., refusal}), content_part.done {.., part},
 *                                       output_item.done (status incomplete when closed by a
 *                                       "length" / "content_filter" finish)
 *                                     function_call: function_call_arguments.done {item_id,
 *                                       output_index, name, arguments}, output_item.done
 *                                       (status completed)
 *                                     custom_tool_call: the rest of the input as one more delta
 *                                       (all of it when the arguments were not {"input":".."}
 *                                       as they came), custom_tool_call_input.done {item_id,
 *                                       output_index, input}, output_item.done
 *   finish_reason                   closes the open item; held until the usage arrives
 *   usage (choices: [] or with      with the finish_reason seen: (an empty message item when
 *     the finish)                   the answer had neither text nor tool calls, as answer.c),
 *                                   response.completed, or response.incomplete ("length",
 *                                   "content_filter"), the whole response with every item's
 *                                   final JSON (what sy_resp_stream_final gives again)
 *   [DONE], end of stream           whatever of the above is missing (usage zeros if none)
 *   {"error":{...}}                 error {code, message, param:null}, response.failed
 *                                   {response: status failed, error {code, message}, output:
 *                                   the items closed so far}; nothing after
 *
 * Text: each delta event copies the chunk's JSON string as it came (the
 * strict parser accepted it: valid JSON, whole UTF-8 characters); the state
 * keeps the decoded text, re-escaped once for the .done events and the final
 * response, so the deltas always add up to the .done text.
 */
#include <stdio.h>
#include <string.h>

#include "core/errors.h"
#include "responses/resp_impl.h"
#include "responses/responses.h"

#define W_RAW(w, lit)     sy_jw_raw((w), "" lit, sizeof(lit) - 1)
#define W_KLIT(w, k, lit) (sy_jw_key((w), (k)), sy_jw_str((w), "" lit, sizeof(lit) - 1))

#define TEXT_CAP  ((size_t)64 << 20)  /* one item's text / arguments */
#define ITEMS_CAP ((size_t)256 << 20) /* all the closed items' JSON */

enum { K_NONE = 0, K_MSG = 1, K_CALL = 2, K_RS = 3, K_CUSTOM = 4 };
#define IS_CALL(k) ((k) == K_CALL || (k) == K_CUSTOM)

static int nonempty_str(const struct sy_jdoc *d, uint32_t i)
{
    return sy_jdom_kind(d, i) == 's' && d->n[i].len > 2;
}

/* Copy s[0..n) into dst[cap] NUL-terminated, cut at a UTF-8 character boundary. */
static void copy_str(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap) {
        n = cap - 1;
        while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(dst, s, n);
    dst[n] = 0;
}

void sy_resp_stream_init(struct sy_respstream *s, const struct sy_resp_meta *m)
{
    memset(s, 0, sizeof *s);
    s->m = *m;
    copy_str(s->id, sizeof s->id, m->id ? m->id : "", m->id ? strlen(m->id) : 0);
    copy_str(s->model, sizeof s->model, m->model ? m->model : "", m->model ? strlen(m->model) : 0);
    copy_str(s->seed, sizeof s->seed, m->id_seed ? m->id_seed : "", m->id_seed ? strlen(m->id_seed) : 0);
    if (m->previous_response_id) {
        s->has_prev = 1;
        copy_str(s->prev, sizeof s->prev, m->previous_response_id, strlen(m->previous_response_id));
    }
    s->req = m->req;
    s->tool_idx = -1;
    s->prompt = s->completion = s->cached = s->reasoning_tokens = -1;
    sy_buf_init(&s->text, TEXT_CAP);
    sy_buf_init(&s->items, ITEMS_CAP);
    sy_buf_init(&s->input, TEXT_CAP);
    sy_buf_init(&s->think, TEXT_CAP);
    sy_buf_init(&s->tk_text, TEXT_CAP);
    sy_buf_init(&s->tk_sig, TEXT_CAP);
}

void sy_resp_stream_free(struct sy_respstream *s)
{
    sy_buf_free(&s->text);
    sy_buf_free(&s->items);
    sy_buf_free(&s->input);
    sy_buf_free(&s->think);
    sy_buf_free(&s->tk_text);
    sy_buf_free(&s->tk_sig);
}

/* The meta with the stream's own copies of the strings. */
static void meta_of(const struct sy_respstream *s, struct sy_resp_meta *m)
{
    *m = s->m;
    m->id = s->id;
    m->model = s->model;
    m->id_seed = s->seed;
    m->previous_response_id = s->has_prev ? s->prev : NULL;
    m->req = s->req;
}

static void usage_of(const struct sy_respstream *s, struct sy__resp_usage *u)
{
    u->input = s->prompt > 0 ? s->prompt : 0;
    u->output = s->completion > 0 ? s->completion : 0;
    u->cached = s->cached > 0 ? s->cached : 0;
    u->reasoning = s->reasoning_tokens > 0 ? s->reasoning_tokens : 0;
    u->total = s->have_usage ? s->total_tokens : 0;
}

/* The final status of a finished stream and its incomplete reason. */
static const char *final_status(const struct sy_respstream *s, const char **reason)
{
    *reason = sy__resp_incomplete_reason(s->finish, strlen(s->finish));
    return *reason ? "incomplete" : "completed";
}

/* ---- events --------------------------------------------------------------- */

/* "event: <type>\ndata: {"type":<type>,"sequence_number":N */
static void ev_begin(struct sy_respstream *s, struct sy_jw *w, struct sy_buf *out, const char *type)
{
    sy_jw_init(w, out);
    if (SY_BUF_LIT(out, "event: ") || sy_buf_puts(out, type) || SY_BUF_LIT(out, "\ndata: "))
        w->err = SY_ENOSPC;
    sy_jw_obj(w);
    sy_jw_key(w, "type");
    sy_jw_cstr(w, type);
    sy_jw_key(w, "sequence_number");
    sy_jw_int(w, s->seq++);
}

static int ev_end(struct sy_jw *w, struct sy_buf *out)
{
    sy_jw_end(w);
    if (!w->err && SY_BUF_LIT(out, "\n\n"))
        w->err = SY_ENOSPC;
    return w->err;
}

/* "item_id","output_index" of the open item (its index is nout - 1). */
static void w_item_ref(struct sy_respstream *s, struct sy_jw *w)
{
    sy_jw_key(w, "item_id");
    sy_jw_cstr(w, s->item_id);
    sy_jw_key(w, "output_index");
    sy_jw_int(w, s->nout - 1);
}

/* An event carrying the whole response: created, in_progress, completed,
 * incomplete, failed. */
static int ev_response(struct sy_respstream *s, struct sy_buf *out, const char *type, const struct sy__resp_state *st,
                       int with_items)
{
    struct sy_resp_meta m;
    meta_of(s, &m);
    struct sy_jw w;
    ev_begin(s, &w, out, type);
    sy_jw_key(&w, "response");
    sy__resp_head(&w, &m, st);
    sy_jw_arr(&w);
    if (with_items && s->items.len)
        sy_jw_raw(&w, s->items.p, s->items.len); /* the items, comma-separated */
    sy_jw_end(&w);
    sy__resp_tail(&w, &m, st);
    return ev_end(&w, out);
}

static int start(struct sy_respstream *s, struct sy_buf *out)
{
    struct sy__resp_state st = {.status = "in_progress"};
    s->started = 1;
    int rc = ev_response(s, out, "response.created", &st, 0);
    return rc ? rc : ev_response(s, out, "response.in_progress", &st, 0);
}

/* The open item's final JSON (as answer.c writes it) into w. */
static void w_item(struct sy_respstream *s, struct sy_jw *w, const char *status)
{
    const char *t = s->text.p ? s->text.p : "";
    sy_jw_obj(w);
    if (s->open == K_MSG) {
        W_KLIT(w, "type", "message");
        sy_jw_key(w, "id");
        sy_jw_cstr(w, s->item_id);
        sy_jw_key(w, "status");
        sy_jw_cstr(w, status);
        W_KLIT(w, "role", "assistant");
        sy_jw_key(w, "content");
        sy_jw_arr(w);
        sy_jw_obj(w);
        if (s->refusal) {
            W_KLIT(w, "type", "refusal");
            sy_jw_key(w, "refusal");
            sy_jw_str(w, t, s->text.len);
        } else {
            W_KLIT(w, "type", "output_text");
            sy_jw_key(w, "text");
            sy_jw_str(w, t, s->text.len);
            sy_jw_key(w, "annotations");
            W_RAW(w, "[]");
        }
        sy_jw_end(w);
        sy_jw_end(w);
    } else if (s->open == K_CALL) {
        W_KLIT(w, "type", "function_call");
        sy_jw_key(w, "id");
        sy_jw_cstr(w, s->item_id);
        sy_jw_key(w, "call_id");
        sy_jw_cstr(w, s->call_id);
        sy_jw_key(w, "name");
        sy_jw_cstr(w, s->name);
        if (s->ns[0]) {
            sy_jw_key(w, "namespace");
            sy_jw_cstr(w, s->ns);
        }
        sy_jw_key(w, "arguments");
        sy_jw_str(w, t, s->text.len);
        sy_jw_key(w, "status");
        sy_jw_cstr(w, status);
    } else if (s->open == K_CUSTOM) {
        W_KLIT(w, "type", "custom_tool_call");
        sy_jw_key(w, "id");
        sy_jw_cstr(w, s->item_id);
        sy_jw_key(w, "call_id");
        sy_jw_cstr(w, s->call_id);
        sy_jw_key(w, "name");
        sy_jw_cstr(w, s->name);
        if (s->ns[0]) {
            sy_jw_key(w, "namespace");
            sy_jw_cstr(w, s->ns);
        }
        sy_jw_key(w, "input");
        sy_jw_str(w, s->input.p ? s->input.p : "", s->input.len);
        sy_jw_key(w, "status");
        sy_jw_cstr(w, status);
    } else {
        W_KLIT(w, "type", "reasoning");
        sy_jw_key(w, "id");
        sy_jw_cstr(w, s->item_id);
        sy_jw_key(w, "summary");
        if (status && s->text.len) {
            sy_jw_arr(w);
            sy_jw_obj(w);
            W_KLIT(w, "type", "summary_text");
            sy_jw_key(w, "text");
            sy_jw_str(w, t, s->text.len);
            sy_jw_end(w);
            sy_jw_end(w);
        } else {
            W_RAW(w, "[]");
        }
        if (status)
            sy__resp_think_write(w, &s->think);
    }
    sy_jw_end(w);
}

/* The part of the open message / reasoning item ("text" the accumulated
 * text, or "" when opening). */
static void w_part(struct sy_respstream *s, struct sy_jw *w, int done)
{
    size_t n = done ? s->text.len : 0;
    const char *t = n ? s->text.p : "";
    sy_jw_obj(w);
    if (s->open == K_RS) {
        W_KLIT(w, "type", "summary_text");
        sy_jw_key(w, "text");
        sy_jw_str(w, t, n);
    } else if (s->refusal) {
        W_KLIT(w, "type", "refusal");
        sy_jw_key(w, "refusal");
        sy_jw_str(w, t, n);
    } else {
        W_KLIT(w, "type", "output_text");
        sy_jw_key(w, "text");
        sy_jw_str(w, t, n);
        sy_jw_key(w, "annotations");
        W_RAW(w, "[]");
    }
    sy_jw_end(w);
}

/* The end of a custom tool call's input: the final input unwrapped from the
 * whole arguments (tools.c); the part the deltas have not carried yet as one
 * more delta (all of it when the arguments were not {"input":"..."} as they
 * came), then response.custom_tool_call_input.done. s->input becomes the
 * final input (the item's). */
static int custom_done(struct sy_respstream *s, struct sy_buf *out)
{
    struct sy_arena a;
    sy_arena_init(&a);
    size_t fl;
    const char *fin = sy__resp_custom_input(s->text.p ? s->text.p : "", s->text.len, &a, &fl);
    size_t sent = s->input.len;
    int rc = 0;
    struct sy_jw w;
    if (fl > sent && (!sent || !memcmp(fin, s->input.p, sent))) {
        ev_begin(s, &w, out, "response.custom_tool_call_input.delta");
        w_item_ref(s, &w);
        sy_jw_key(&w, "delta");
        sy_jw_str(&w, fin + sent, fl - sent);
        rc = ev_end(&w, out);
    }
    sy_buf_reset(&s->input);
    if (!rc && sy_buf_append(&s->input, fin, fl))
        rc = SY_ENOSPC;
    sy_arena_free(&a);
    if (rc)
        return rc;
    ev_begin(s, &w, out, "response.custom_tool_call_input.done");
    w_item_ref(s, &w);
    sy_jw_key(&w, "input");
    sy_jw_str(&w, s->input.p ? s->input.p : "", s->input.len);
    return ev_end(&w, out);
}

/* The thinking block still arriving, into s->think (a thinking block
 * without a signature is not one Anthropic would take back: dropped). */
static void think_flush(struct sy_respstream *s)
{
    if (s->tk_sig.len)
        sy__resp_think_add_raw(&s->think, 0, s->tk_text.p ? s->tk_text.p : "", s->tk_text.len, s->tk_sig.p,
                               s->tk_sig.len);
    sy_buf_reset(&s->tk_text);
    sy_buf_reset(&s->tk_sig);
}

/* Close the open item. at_finish: closed by the finish_reason (a message is
 * then "incomplete" when the response is). */
static int close_item(struct sy_respstream *s, struct sy_buf *out, int at_finish)
{
    if (s->open == K_NONE)
        return 0;
    struct sy_jw w;
    int rc;
    if (s->open == K_RS)
        think_flush(s);
    if (s->open == K_MSG || s->open == K_RS) {
        int rs = s->open == K_RS;
        ev_begin(s, &w, out,
                 rs           ? "response.reasoning_summary_text.done"
                 : s->refusal ? "response.refusal.done"
                              : "response.output_text.done");
        w_item_ref(s, &w);
        sy_jw_key(&w, rs ? "summary_index" : "content_index");
        sy_jw_int(&w, 0);
        sy_jw_key(&w, rs || !s->refusal ? "text" : "refusal");
        sy_jw_str(&w, s->text.p ? s->text.p : "", s->text.len);
        if (!rs && !s->refusal) {
            sy_jw_key(&w, "logprobs");
            W_RAW(&w, "[]");
        }
        if ((rc = ev_end(&w, out)))
            return rc;
        ev_begin(s, &w, out, rs ? "response.reasoning_summary_part.done" : "response.content_part.done");
        w_item_ref(s, &w);
        sy_jw_key(&w, rs ? "summary_index" : "content_index");
        sy_jw_int(&w, 0);
        sy_jw_key(&w, "part");
        w_part(s, &w, 1);
        if ((rc = ev_end(&w, out)))
            return rc;
    } else if (s->open == K_CUSTOM) {
        if ((rc = custom_done(s, out)))
            return rc;
    } else {
        ev_begin(s, &w, out, "response.function_call_arguments.done");
        w_item_ref(s, &w);
        sy_jw_key(&w, "name");
        sy_jw_cstr(&w, s->name);
        sy_jw_key(&w, "arguments");
        sy_jw_str(&w, s->text.p ? s->text.p : "", s->text.len);
        if ((rc = ev_end(&w, out)))
            return rc;
    }
    const char *reason;
    const char *status =
        s->open == K_MSG && at_finish && !strcmp(final_status(s, &reason), "incomplete") ? "incomplete" : "completed";
    /* the item's JSON: once for output_item.done, once kept for the final response */
    size_t mark = s->items.len;
    struct sy_jw iw;
    sy_jw_init(&iw, &s->items);
    if (mark && SY_BUF_LIT(&s->items, ","))
        return SY_ENOSPC;
    w_item(s, &iw, status);
    if (iw.err) {
        s->items.len = mark;
        if (s->items.p)
            s->items.p[mark] = 0;
        return iw.err;
    }
    size_t from = mark ? mark + 1 : 0;
    ev_begin(s, &w, out, "response.output_item.done");
    sy_jw_key(&w, "output_index");
    sy_jw_int(&w, s->nout - 1);
    sy_jw_key(&w, "item");
    sy_jw_raw(&w, s->items.p + from, s->items.len - from);
    s->open = K_NONE;
    s->refusal = 0;
    s->tool_idx = -1;
    sy_buf_reset(&s->text);
    sy_buf_reset(&s->input);
    sy_buf_reset(&s->think);
    return ev_end(&w, out);
}

/* Open an item of kind k (closing the open one). For K_MSG, refusal picks
 * the content part; for K_CALL, call_id / name must be set already. */
static int open_item(struct sy_respstream *s, struct sy_buf *out, int k, int refusal)
{
    int rc = close_item(s, out, 0);
    if (rc)
        return rc;
    if (k == K_MSG) {
        sy__resp_item_id(s->item_id, sizeof s->item_id, "msg", s->seed, s->nmsg ? s->nmsg : -1);
        s->nmsg++;
    } else if (k == K_RS) {
        sy__resp_item_id(s->item_id, sizeof s->item_id, "rs", s->seed, s->nrs ? s->nrs : -1);
        s->nrs++;
    } else {
        sy__resp_item_id(s->item_id, sizeof s->item_id, k == K_CUSTOM ? "ctc" : "fc", s->seed, s->ntools);
        s->ntools++;
    }
    s->open = k;
    s->refusal = refusal;
    s->nout++;
    sy_buf_reset(&s->text);
    sy_buf_reset(&s->input);
    s->cin = (struct sy_resp_cin){0};
    struct sy_jw w;
    ev_begin(s, &w, out, "response.output_item.added");
    sy_jw_key(&w, "output_index");
    sy_jw_int(&w, s->nout - 1);
    sy_jw_key(&w, "item");
    if (k == K_MSG) {
        sy_jw_obj(&w);
        W_KLIT(&w, "type", "message");
        sy_jw_key(&w, "id");
        sy_jw_cstr(&w, s->item_id);
        W_KLIT(&w, "status", "in_progress");
        W_KLIT(&w, "role", "assistant");
        sy_jw_key(&w, "content");
        W_RAW(&w, "[]");
        sy_jw_end(&w);
    } else {
        w_item(s, &w, IS_CALL(k) ? "in_progress" : NULL);
    }
    if ((rc = ev_end(&w, out)) || IS_CALL(k))
        return rc;
    ev_begin(s, &w, out, k == K_RS ? "response.reasoning_summary_part.added" : "response.content_part.added");
    w_item_ref(s, &w);
    sy_jw_key(&w, k == K_RS ? "summary_index" : "content_index");
    sy_jw_int(&w, 0);
    sy_jw_key(&w, "part");
    w_part(s, &w, 0);
    return ev_end(&w, out);
}

/* A delta of the open item: string node i of d (for arguments also an
 * object, sent as its JSON text). */
static int ev_delta(struct sy_respstream *s, struct sy_buf *out, const struct sy_jdoc *d, uint32_t i,
                    struct sy_arena *a)
{
    const char *type = s->open == K_RS     ? "response.reasoning_summary_text.delta"
                       : s->open == K_CALL ? "response.function_call_arguments.delta"
                       : s->refusal        ? "response.refusal.delta"
                                           : "response.output_text.delta";
    size_t n;
    const char *t;
    if (sy_jdom_kind(d, i) == 's') {
        t = sy_jdom_str(d, i, a, &n);
    } else {
        t = d->src + d->n[i].off;
        n = d->n[i].len;
    }
    if (sy_buf_append(&s->text, t, n))
        return SY_ENOSPC;
    struct sy_jw w;
    if (s->open == K_CUSTOM) { /* the arguments' "input" as far as it is decoded */
        size_t before = s->input.len;
        if (sy__resp_cin_feed(&s->cin, s->text.p, s->text.len, &s->input))
            return SY_ENOSPC;
        if (s->input.len == before)
            return 0;
        ev_begin(s, &w, out, "response.custom_tool_call_input.delta");
        w_item_ref(s, &w);
        sy_jw_key(&w, "delta");
        sy_jw_str(&w, s->input.p + before, s->input.len - before);
        return ev_end(&w, out);
    }
    ev_begin(s, &w, out, type);
    w_item_ref(s, &w);
    if (s->open == K_RS) {
        sy_jw_key(&w, "summary_index");
        sy_jw_int(&w, 0);
    } else if (s->open == K_MSG) {
        sy_jw_key(&w, "content_index");
        sy_jw_int(&w, 0);
    }
    sy_jw_key(&w, "delta");
    sy_jw_node_as_str(&w, d, i);
    if (s->open == K_MSG && !s->refusal) {
        sy_jw_key(&w, "logprobs");
        W_RAW(&w, "[]");
    }
    return ev_end(&w, out);
}

/* One entry of delta.tool_calls. */
static int tool_delta(struct sy_respstream *s, struct sy_buf *out, const struct sy_jdoc *d, uint32_t e,
                      struct sy_arena *a)
{
    int64_t idx = -1;
    if (!sy_jdom_i64(d, sy_jdom_member(d, e, "index"), &idx) || idx < 0 || idx > INT32_MAX)
        idx = -1;
    uint32_t fn = sy_jdom_member(d, e, "function"), id = sy_jdom_member(d, e, "id");
    uint32_t name = sy_jdom_member(d, fn, "name"), args = sy_jdom_member(d, fn, "arguments");
    int has_id = nonempty_str(d, id), has_name = nonempty_str(d, name);
    int has_args = nonempty_str(d, args) || sy_jdom_kind(d, args) == 'o';
    if (!has_id && !has_name && !has_args)
        return 0; /* an empty opener: nothing to say */
    size_t il = 0, nl = 0;
    const char *ids = has_id ? sy_jdom_str(d, id, a, &il) : NULL;
    const char *ns = has_name ? sy_jdom_str(d, name, a, &nl) : NULL;
    int seen = idx >= 0 && idx < 64 && (s->tools_seen >> idx & 1);
    int fresh;
    if (IS_CALL(s->open) && idx >= 0 && idx != s->tool_idx)
        fresh = has_id || has_name || !seen;
    else if (IS_CALL(s->open))
        fresh = has_id && s->call_up && (strlen(s->call_id) != il || memcmp(s->call_id, ids, il));
    else
        fresh = has_id || has_name || !seen;
    if (!fresh && (!IS_CALL(s->open) || (idx >= 0 && idx != s->tool_idx)))
        return 0; /* arguments of a call already closed: nowhere to put them */
    int rc;
    if (fresh) {
        if ((rc = close_item(s, out, 0)))
            return rc;
        if (ids) {
            copy_str(s->call_id, sizeof s->call_id, ids, il);
            s->call_up = 1;
        } else {
            sy__resp_item_id(s->call_id, sizeof s->call_id, "call", s->seed, s->ntools);
            s->call_up = 0;
        }
        /* the client's tool behind the chat name (tools.c) */
        struct sy__resp_tool tool;
        sy__resp_tool_find(s->req, ns ? ns : "", nl, a, &tool);
        copy_str(s->name, sizeof s->name, tool.name, tool.nl);
        copy_str(s->ns, sizeof s->ns, tool.ns ? tool.ns : "", tool.nsl);
        if ((rc = open_item(s, out, tool.custom ? K_CUSTOM : K_CALL, 0)))
            return rc;
        s->tool_idx = (int)idx;
        if (idx >= 0 && idx < 64)
            s->tools_seen |= 1ull << idx;
    }
    return has_args ? ev_delta(s, out, d, args, a) : 0;
}

/* delta.thinking_blocks (the anthropic adapter's chunks: one block each,
 * a thinking piece, a signature piece, or a whole redacted block): kept for
 * the reasoning item's encrypted_content, which is opened for them when
 * needed. A thinking piece after a signature starts the next block. */
static int think_delta(struct sy_respstream *s, struct sy_buf *out, const struct sy_jdoc *d, uint32_t tb,
                       struct sy_arena *a)
{
    int rc;
    for (uint32_t b = sy_jdom_first(d, tb); b; b = sy_jdom_next(d, b)) {
        uint32_t t = sy_jdom_member(d, b, "type");
        int red = sy_jdom_str_eq(d, t, "redacted_thinking");
        uint32_t x = sy_jdom_member(d, b, red ? "data" : "thinking"), sig = sy_jdom_member(d, b, "signature");
        if ((!red && !sy_jdom_str_eq(d, t, "thinking")) || (!nonempty_str(d, x) && (red || !nonempty_str(d, sig))))
            continue;
        if (s->open != K_RS && (rc = open_item(s, out, K_RS, 0)))
            return rc;
        size_t xl = 0, sl = 0;
        const char *xs = nonempty_str(d, x) ? sy_jdom_str(d, x, a, &xl) : NULL;
        const char *ss = !red && nonempty_str(d, sig) ? sy_jdom_str(d, sig, a, &sl) : NULL;
        if (red) {
            think_flush(s);
            sy__resp_think_add_raw(&s->think, 1, xs, xl, NULL, 0);
            continue;
        }
        if (xs && s->tk_sig.len)
            think_flush(s);
        if ((xs && sy_buf_append(&s->tk_text, xs, xl)) || (ss && sy_buf_append(&s->tk_sig, ss, sl)))
            return SY_ENOSPC;
    }
    return s->think.err ? SY_ENOSPC : 0;
}

/* The delta of choice 0. */
static int choice_delta(struct sy_respstream *s, struct sy_buf *out, const struct sy_jdoc *d, uint32_t delta,
                        struct sy_arena *a)
{
    int rc;
    uint32_t tb = sy_jdom_member(d, delta, "thinking_blocks");
    if (sy_jdom_kind(d, tb) == 'a' && (rc = think_delta(s, out, d, tb, a)))
        return rc;
    uint32_t r = sy_jdom_member(d, delta, "reasoning_content");
    if (!nonempty_str(d, r))
        r = sy_jdom_member(d, delta, "reasoning");
    if (nonempty_str(d, r)) {
        if (s->open != K_RS && (rc = open_item(s, out, K_RS, 0)))
            return rc;
        if ((rc = ev_delta(s, out, d, r, a)))
            return rc;
    }
    uint32_t c = sy_jdom_member(d, delta, "content"), rf = sy_jdom_member(d, delta, "refusal");
    for (int i = 0; i < 2; i++) {
        uint32_t x = i ? rf : c;
        if (!nonempty_str(d, x))
            continue;
        if ((s->open != K_MSG || s->refusal != i) && (rc = open_item(s, out, K_MSG, i)))
            return rc;
        if ((rc = ev_delta(s, out, d, x, a)))
            return rc;
    }
    uint32_t tcs = sy_jdom_member(d, delta, "tool_calls");
    if (sy_jdom_kind(d, tcs) == 'a')
        for (uint32_t e = sy_jdom_first(d, tcs); e; e = sy_jdom_next(d, e))
            if (sy_jdom_kind(d, e) == 'o' && (rc = tool_delta(s, out, d, e, a)))
                return rc;
    return 0;
}

/* Close everything and write response.completed / .incomplete. */
static int finish(struct sy_respstream *s, struct sy_buf *out)
{
    int rc = 0;
    if (!s->started && (rc = start(s, out)))
        return rc;
    if ((rc = close_item(s, out, 1)))
        return rc;
    if (!s->nmsg && !s->ntools) { /* neither text nor tool calls: an empty message, as answer.c */
        if ((rc = open_item(s, out, K_MSG, 0)) || (rc = close_item(s, out, 1)))
            return rc;
    }
    const char *reason;
    struct sy__resp_usage u;
    usage_of(s, &u);
    struct sy__resp_state st = {.status = final_status(s, &reason), .usage = &u};
    st.incomplete = reason;
    s->done = 1;
    return ev_response(s, out, reason ? "response.incomplete" : "response.completed", &st, 1);
}

/* error + response.failed. code: NUL-terminated. */
static int fail(struct sy_respstream *s, struct sy_buf *out, const char *code, const char *msg, size_t n)
{
    int rc = 0;
    if (!s->started && (rc = start(s, out)))
        return rc;
    s->done = 1;
    s->failed = 1;
    struct sy_jw w;
    ev_begin(s, &w, out, "error");
    sy_jw_key(&w, "code");
    sy_jw_cstr(&w, code);
    sy_jw_key(&w, "message");
    sy_jw_str(&w, msg, n);
    sy_jw_key(&w, "param");
    sy_jw_null(&w);
    if ((rc = ev_end(&w, out)))
        return rc;
    struct sy__resp_state st = {.status = "failed", .err_code = code, .err_msg = msg, .err_len = n};
    return ev_response(s, out, "response.failed", &st, 1);
}

static void read_usage(struct sy_respstream *s, const struct sy_jdoc *d, uint32_t u)
{
    struct sy__resp_usage x;
    sy__resp_usage_read(d, u, &x);
    s->prompt = x.input;
    s->completion = x.output;
    s->cached = x.cached;
    s->reasoning_tokens = x.reasoning;
    s->total_tokens = x.total;
    s->have_usage = 1;
}

static int stream_chunk(struct sy_respstream *s, const char *data, size_t n, struct sy_buf *out, struct sy_arena *a)
{
    while (n && (data[n - 1] == ' ' || data[n - 1] == '\n' || data[n - 1] == '\r' || data[n - 1] == '\t'))
        n--;
    while (n && (*data == ' ' || *data == '\n' || *data == '\r' || *data == '\t'))
        data++, n--;
    int rc;
    if (n == 6 && !memcmp(data, "[DONE]", 6)) {
        rc = finish(s, out);
        return rc ? rc : SY_DONE;
    }
    struct sy_jdoc d;
    rc = sy_jdom_parse(&d, data, n, a, 0);
    if (rc)
        return rc == SY_ENOSPC ? SY_ENOSPC : SY_EJSON;
    if (d.n[0].type != 'o')
        return SY_EUPPROTO;
    uint32_t err = sy_jdom_top(&d, "error"), choices = sy_jdom_top(&d, "choices");
    if (err && !choices) {
        /* code: the error's code (a string, or a number written as one), else its type */
        char code[64] = "server_error";
        const char *msg = "upstream error";
        size_t ml = 14;
        if (sy_jdom_kind(&d, err) == 'o') {
            uint32_t c = sy_jdom_member(&d, err, "code"), t = sy_jdom_member(&d, err, "type");
            if (sy_jdom_kind(&d, c) != 's' && sy_jdom_kind(&d, c) != 'n')
                c = t;
            size_t cl;
            const char *cs = sy_jdom_kind(&d, c) == 's' ? sy_jdom_str(&d, c, a, &cl) : NULL;
            if (sy_jdom_kind(&d, c) == 'n') {
                cs = d.src + d.n[c].off;
                cl = d.n[c].len;
            }
            if (cs && cl)
                copy_str(code, sizeof code, cs, cl);
            const char *m = sy_jdom_str(&d, sy_jdom_member(&d, err, "message"), a, &ml);
            if (m)
                msg = m;
            else
                ml = 14;
        } else if (sy_jdom_kind(&d, err) == 's') {
            msg = sy_jdom_str(&d, err, a, &ml);
        }
        rc = fail(s, out, code, msg, ml);
        return rc ? rc : SY_DONE;
    }
    if (!s->started && (rc = start(s, out)))
        return rc;
    if (sy_jdom_kind(&d, choices) == 'a' && !s->finished) {
        uint32_t c0 = 0;
        for (uint32_t c = sy_jdom_first(&d, choices); c; c = sy_jdom_next(&d, c)) {
            int64_t ci = 0;
            uint32_t ix = sy_jdom_member(&d, c, "index");
            if (sy_jdom_kind(&d, c) == 'o' && (!ix || (sy_jdom_i64(&d, ix, &ci) && ci == 0))) {
                c0 = c;
                break;
            }
        }
        uint32_t delta = sy_jdom_member(&d, c0, "delta");
        if (sy_jdom_kind(&d, delta) == 'o' && (rc = choice_delta(s, out, &d, delta, a)))
            return rc;
        uint32_t fr = sy_jdom_member(&d, c0, "finish_reason");
        if (nonempty_str(&d, fr)) {
            size_t fl;
            const char *f = sy_jdom_str(&d, fr, a, &fl);
            copy_str(s->finish, sizeof s->finish, f, fl);
            s->finished = 1;
            if ((rc = close_item(s, out, 1)))
                return rc;
        }
    }
    uint32_t u = sy_jdom_top(&d, "usage");
    if (sy_jdom_kind(&d, u) == 'o') {
        read_usage(s, &d, u);
        if (s->finished)
            s->usage_final = 1;
    }
    if (s->finished && s->usage_final) {
        rc = finish(s, out);
        return rc ? rc : SY_DONE;
    }
    return 0;
}

int sy_resp_stream_chunk(struct sy_respstream *s, const char *data, size_t n, struct sy_buf *out)
{
    if (s->done)
        return SY_DONE;
    struct sy_arena a;
    sy_arena_init(&a);
    int rc = stream_chunk(s, data, n, out, &a);
    sy_arena_free(&a);
    return rc;
}

void sy_resp_stream_end(struct sy_respstream *s, struct sy_buf *out)
{
    if (!s->done)
        finish(s, out);
}

void sy_resp_stream_error(struct sy_respstream *s, int status, const char *message, size_t n, struct sy_buf *out)
{
    if (s->done)
        return;
    const char *code = status == 429                   ? "rate_limit_exceeded"
                       : status >= 400 && status < 500 ? "invalid_request_error"
                                                       : "server_error";
    fail(s, out, code, message ? message : "", message ? n : 0);
}

int sy_resp_stream_final(const struct sy_respstream *s, struct sy_buf *out)
{
    if (!s->done || s->failed)
        return -1;
    struct sy_resp_meta m;
    meta_of(s, &m);
    const char *reason;
    struct sy__resp_usage u;
    usage_of(s, &u);
    struct sy__resp_state st = {.status = final_status(s, &reason), .usage = &u};
    st.incomplete = reason;
    size_t mark = out->len;
    struct sy_jw w;
    sy_jw_init(&w, out);
    sy__resp_head(&w, &m, &st);
    sy_jw_arr(&w);
    if (s->items.len)
        sy_jw_raw(&w, s->items.p, s->items.len);
    sy_jw_end(&w);
    sy__resp_tail(&w, &m, &st);
    if (w.err) {
        out->len = mark;
        if (out->p)
            out->p[mark] = 0;
        return -1;
    }
    return 0;
}
