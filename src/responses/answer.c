/* answer.c - an OpenAI chat.completion -> a Responses `response` object
 * (responses.h), and the response envelope stream.c shares (resp_impl.h).
 * After LiteLLM's LiteLLMCompletionResponsesConfig.
 * transform_chat_completion_response_to_responses_api_response, with the
 * field set OpenAI's API sends (what the openai SDKs and the Vercel AI SDK
 * parse) rather than LiteLLM's looser object.
 *
 *   chat.completion                         response
 *   (meta id, model, created_at)            id, model, created_at, object "response"
 *   choices[0].finish_reason                status: "length" -> incomplete, incomplete_details
 *                                           {reason:max_output_tokens}; "content_filter" ->
 *                                           incomplete {reason:content_filter}; else completed
 *   message.reasoning_content | reasoning   output {type:reasoning, id:"rs_<seed>",
 *                                           summary:[{type:summary_text, text}]}, first
 *   message.thinking_blocks (signed          the same item (summary [] without text) with
 *     thinking, redacted_thinking)           encrypted_content: the blocks (thinking.c),
 *                                           always (OpenAI: only with include
 *                                           reasoning.encrypted_content): the stored
 *                                           conversation and a stateless client both
 *                                           need it to rebuild the turn
 *   message.content "s" | [{text}..]        output {type:message, id:"msg_<seed>", status,
 *                                           role:assistant, content:[{type:output_text, text,
 *                                           annotations:[]}]}; status "incomplete" when the
 *                                           response is and nothing follows the message
 *   message.refusal (no content)            content [{type:refusal, refusal}]
 *   (no content, no tool calls)             a message with text ""
 *   message.tool_calls[n]                   output {type:function_call, id:"fc_<seed>_<n>",
 *   (message.function_call: one call)       call_id: the call's id (else "call_<seed>_<n>"),
 *                                           name, arguments (a string; an object's JSON text),
 *                                           status:completed}
 *     named "S__N" after a namespace tool   {.., name:N, namespace:S, ..} (tools.c)
 *     named after a custom tool             {type:custom_tool_call, id:"ctc_<seed>_<n>", call_id,
 *                                           name, [namespace], input: the arguments' "input"
 *                                           string (else the arguments as they are), status}
 *   usage.prompt_tokens                     usage.input_tokens
 *   usage.prompt_tokens_details.cached_tokens  usage.input_tokens_details.cached_tokens
 *     (else usage.cache_read_input_tokens)
 *   usage.completion_tokens                 usage.output_tokens
 *   usage.completion_tokens_details.        usage.output_tokens_details.reasoning_tokens
 *     reasoning_tokens
 *   usage.total_tokens (else the sum)       usage.total_tokens
 *
 * Echoed from the Responses request (meta req; the raw JSON value when present
 * and not null, else the default):
 *
 *   member               default                      member            default
 *   instructions         null                         store             true
 *   max_output_tokens    null                         temperature       1
 *   parallel_tool_calls  true                         text              {"format":{"type":"text"}}
 *   previous_response_id meta's, else null            tool_choice       "auto"
 *   reasoning            {"effort":null,              tools             [] (as the client sent them)
 *                         "summary":null}             top_p             1
 *   truncation           "disabled"                   user              null
 *   metadata             {}                           background        false (always)
 *   service_tier         "default" (always)
 *   reasoning is rebuilt as {effort, summary} from the request's members; text
 *   keeps the request's members with "format" first (default {"type":"text"}).
 */
#include <stdio.h>
#include <string.h>

#include "core/errors.h"
#include "responses/resp_impl.h"
#include "responses/responses.h"

#define W_RAW(w, lit)     sy_jw_raw((w), "" lit, sizeof(lit) - 1)
#define W_KLIT(w, k, lit) (sy_jw_key((w), (k)), sy_jw_str((w), "" lit, sizeof(lit) - 1))

static int nonempty_str(const struct sy_jdoc *d, uint32_t i)
{
    return sy_jdom_kind(d, i) == 's' && d->n[i].len > 2;
}

/* ---- the envelope (resp_impl.h) ------------------------------------------ */

/* Member key of the request object, null counting as absent; 0 without a request. */
static uint32_t req_get(const struct sy_resp_meta *m, const char *key)
{
    const struct sy_jdoc *r = m->req;
    if (!r || !r->count || r->n[0].type != 'o')
        return 0;
    return sy_jdom_top(r, key);
}

/* "key": the request's member when its type is one of `types`, else the literal default. */
static void echo(struct sy_jw *w, const struct sy_resp_meta *m, const char *key, const char *types, const char *dflt)
{
    uint32_t v = req_get(m, key);
    sy_jw_key(w, key);
    if (v && strchr(types, sy_jdom_kind(m->req, v)))
        sy_jw_node(w, m->req, v);
    else
        sy_jw_raw(w, dflt, strlen(dflt));
}

void sy__resp_head(struct sy_jw *w, const struct sy_resp_meta *m, const struct sy__resp_state *st)
{
    sy_jw_obj(w);
    sy_jw_key(w, "id");
    sy_jw_cstr(w, m->id ? m->id : "");
    W_KLIT(w, "object", "response");
    sy_jw_key(w, "created_at");
    sy_jw_int(w, m->created_at);
    sy_jw_key(w, "status");
    sy_jw_cstr(w, st->status);
    sy_jw_key(w, "background");
    sy_jw_bool(w, 0);
    sy_jw_key(w, "error");
    if (st->err_code) {
        sy_jw_obj(w);
        sy_jw_key(w, "code");
        sy_jw_cstr(w, st->err_code);
        sy_jw_key(w, "message");
        sy_jw_str(w, st->err_msg ? st->err_msg : "", st->err_msg ? st->err_len : 0);
        sy_jw_end(w);
    } else {
        sy_jw_null(w);
    }
    sy_jw_key(w, "incomplete_details");
    if (st->incomplete) {
        sy_jw_obj(w);
        sy_jw_key(w, "reason");
        sy_jw_cstr(w, st->incomplete);
        sy_jw_end(w);
    } else {
        sy_jw_null(w);
    }
    echo(w, m, "instructions", "sa", "null");
    echo(w, m, "max_output_tokens", "n", "null");
    sy_jw_key(w, "model");
    sy_jw_cstr(w, m->model ? m->model : "");
    sy_jw_key(w, "output");
}

void sy__resp_tail(struct sy_jw *w, const struct sy_resp_meta *m, const struct sy__resp_state *st)
{
    echo(w, m, "parallel_tool_calls", "tf", "true");
    sy_jw_key(w, "previous_response_id");
    sy_jw_cstr(w, m->previous_response_id);

    uint32_t r = req_get(m, "reasoning");
    uint32_t eff = sy_jdom_kind(m->req, r) == 'o' ? sy_jdom_member(m->req, r, "effort") : 0;
    uint32_t sum = sy_jdom_kind(m->req, r) == 'o' ? sy_jdom_member(m->req, r, "summary") : 0;
    sy_jw_key(w, "reasoning");
    sy_jw_obj(w);
    sy_jw_key(w, "effort");
    sy_jw_node(w, m->req, sy_jdom_kind(m->req, eff) == 's' ? eff : 0);
    sy_jw_key(w, "summary");
    sy_jw_node(w, m->req, sy_jdom_kind(m->req, sum) == 's' ? sum : 0);
    sy_jw_end(w);

    W_KLIT(w, "service_tier", "default");
    echo(w, m, "store", "tf", "true");
    echo(w, m, "temperature", "n", "1");

    uint32_t t = req_get(m, "text");
    sy_jw_key(w, "text");
    sy_jw_obj(w);
    uint32_t f = sy_jdom_kind(m->req, t) == 'o' ? sy_jdom_member(m->req, t, "format") : 0;
    sy_jw_key(w, "format");
    if (sy_jdom_kind(m->req, f) == 'o')
        sy_jw_node(w, m->req, f);
    else
        W_RAW(w, "{\"type\":\"text\"}");
    if (sy_jdom_kind(m->req, t) == 'o')
        for (uint32_t k = sy_jdom_first(m->req, t); k; k = sy_jdom_next_key(m->req, k)) {
            if (sy_jdom_str_eq(m->req, k, "format"))
                continue;
            if (m->req->n[k].esc)
                continue; /* (a key with escapes: not a member OpenAI knows) */
            size_t kl;
            const char *kr = sy_jdom_raw(m->req, k, &kl);
            sy_jw_keyn(w, kr + 1, kl - 2);
            sy_jw_node(w, m->req, sy_jdom_val(k));
        }
    sy_jw_end(w);

    echo(w, m, "tool_choice", "so", "\"auto\"");
    echo(w, m, "tools", "a", "[]");
    echo(w, m, "top_p", "n", "1");
    echo(w, m, "truncation", "s", "\"disabled\"");
    sy_jw_key(w, "usage");
    if (st->usage) {
        const struct sy__resp_usage *u = st->usage;
        sy_jw_obj(w);
        sy_jw_key(w, "input_tokens");
        sy_jw_int(w, u->input);
        sy_jw_key(w, "input_tokens_details");
        sy_jw_obj(w);
        sy_jw_key(w, "cached_tokens");
        sy_jw_int(w, u->cached);
        sy_jw_end(w);
        sy_jw_key(w, "output_tokens");
        sy_jw_int(w, u->output);
        sy_jw_key(w, "output_tokens_details");
        sy_jw_obj(w);
        sy_jw_key(w, "reasoning_tokens");
        sy_jw_int(w, u->reasoning);
        sy_jw_end(w);
        sy_jw_key(w, "total_tokens");
        sy_jw_int(w, u->total);
        sy_jw_end(w);
    } else {
        sy_jw_null(w);
    }
    echo(w, m, "user", "s", "null");
    echo(w, m, "metadata", "o", "{}");
    sy_jw_end(w);
}

static int64_t nonneg(const struct sy_jdoc *d, uint32_t i)
{
    double v;
    if (!sy_jdom_num(d, i, &v) || !(v > 0) || v > 9e15)
        return 0;
    return (int64_t)v;
}

void sy__resp_usage_read(const struct sy_jdoc *d, uint32_t u, struct sy__resp_usage *o)
{
    memset(o, 0, sizeof *o);
    if (sy_jdom_kind(d, u) != 'o')
        return;
    o->input = nonneg(d, sy_jdom_member(d, u, "prompt_tokens"));
    o->output = nonneg(d, sy_jdom_member(d, u, "completion_tokens"));
    o->cached = nonneg(d, sy_jdom_member(d, sy_jdom_member(d, u, "prompt_tokens_details"), "cached_tokens"));
    if (!o->cached)
        o->cached = nonneg(d, sy_jdom_member(d, u, "cache_read_input_tokens"));
    o->reasoning = nonneg(d, sy_jdom_member(d, sy_jdom_member(d, u, "completion_tokens_details"), "reasoning_tokens"));
    uint32_t t = sy_jdom_member(d, u, "total_tokens");
    o->total = sy_jdom_kind(d, t) == 'n' ? nonneg(d, t) : o->input + o->output;
}

const char *sy__resp_incomplete_reason(const char *f, size_t n)
{
    if (n == 6 && !memcmp(f, "length", 6))
        return "max_output_tokens";
    if (n == 14 && !memcmp(f, "content_filter", 14))
        return "content_filter";
    return NULL;
}

void sy__resp_item_id(char *out, size_t cap, const char *prefix, const char *seed, int k)
{
    if (k < 0)
        snprintf(out, cap, "%s_%s", prefix, seed ? seed : "");
    else
        snprintf(out, cap, "%s_%s_%d", prefix, seed ? seed : "", k);
}

/* ---- chat.completion -> response ------------------------------------------ */

/* The message's text: a string node, or the "text" of the parts of an array
 * joined; NULL when there is none (or it is empty). */
static const char *message_text(const struct sy_jdoc *d, uint32_t c, struct sy_arena *a, size_t *n)
{
    if (sy_jdom_kind(d, c) == 's')
        return d->n[c].len > 2 ? sy_jdom_str(d, c, a, n) : NULL;
    if (sy_jdom_kind(d, c) != 'a')
        return NULL;
    struct sy_buf b;
    sy_buf_init(&b, (size_t)1 << 30);
    for (uint32_t p = sy_jdom_first(d, c); p; p = sy_jdom_next(d, p)) {
        size_t l;
        const char *s = sy_jdom_str(d, sy_jdom_member(d, p, "text"), a, &l);
        if (s)
            sy_buf_append(&b, s, l);
    }
    const char *r = NULL;
    if (b.len) {
        r = sy_arena_strndup(a, b.p, b.len);
        *n = b.len;
    }
    sy_buf_free(&b);
    return r;
}

/* One chat tool call -> a function_call item, or a custom_tool_call one when
 * the name is a custom tool of the request; a namespaced tool's call gets
 * its own name and "namespace" (tools.c). */
static void w_function_call(struct sy_jw *w, const struct sy_jdoc *d, uint32_t id, uint32_t fn,
                            const struct sy_resp_meta *m, struct sy_arena *a, int n)
{
    const char *seed = m->id_seed ? m->id_seed : "";
    char buf[96];
    uint32_t name = sy_jdom_member(d, fn, "name"), args = sy_jdom_member(d, fn, "arguments");
    size_t fl = 0;
    const char *fname = sy_jdom_kind(d, name) == 's' ? sy_jdom_view(d, name, a, &fl) : "";
    struct sy__resp_tool tool;
    sy__resp_tool_find(m->req, fname, fl, a, &tool);
    sy_jw_obj(w);
    if (tool.custom)
        W_KLIT(w, "type", "custom_tool_call");
    else
        W_KLIT(w, "type", "function_call");
    sy_jw_key(w, "id");
    sy__resp_item_id(buf, sizeof buf, tool.custom ? "ctc" : "fc", seed, n);
    sy_jw_cstr(w, buf);
    sy_jw_key(w, "call_id");
    if (nonempty_str(d, id)) {
        sy_jw_node(w, d, id);
    } else {
        sy__resp_item_id(buf, sizeof buf, "call", seed, n);
        sy_jw_cstr(w, buf);
    }
    sy_jw_key(w, "name");
    sy_jw_str(w, tool.name, tool.nl);
    if (tool.ns) {
        sy_jw_key(w, "namespace");
        sy_jw_str(w, tool.ns, tool.nsl);
    }
    if (tool.custom) {
        size_t al = 0, il;
        const char *as = "";
        if (sy_jdom_kind(d, args) == 's')
            as = sy_jdom_view(d, args, a, &al);
        else if (args)
            as = sy_jdom_raw(d, args, &al);
        const char *in = sy__resp_custom_input(as, al, a, &il);
        sy_jw_key(w, "input");
        sy_jw_str(w, in, il);
    } else {
        sy_jw_key(w, "arguments");
        sy_jw_node_as_str(w, d, args);
    }
    W_KLIT(w, "status", "completed");
    sy_jw_end(w);
}

int sy_resp_from_openai(const char *body, size_t n, const struct sy_resp_meta *m, struct sy_arena *a,
                        struct sy_buf *out)
{
    struct sy_jdoc d;
    int rc = sy_jdom_parse(&d, body, n, a, 0);
    if (rc)
        return rc == SY_ENOSPC ? SY_ENOSPC : SY_EJSON;
    if (d.n[0].type != 'o')
        return SY_EUPPROTO;
    uint32_t choices = sy_jdom_top(&d, "choices");
    uint32_t c0 = sy_jdom_kind(&d, choices) == 'a' ? sy_jdom_first(&d, choices) : 0;
    uint32_t msg = sy_jdom_member(&d, c0, "message");
    if (sy_jdom_kind(&d, msg) != 'o')
        return SY_EUPPROTO;
    const char *seed = m->id_seed ? m->id_seed : "";

    uint32_t fr = sy_jdom_member(&d, c0, "finish_reason");
    const char *reason = NULL;
    if (sy_jdom_kind(&d, fr) == 's' && !d.n[fr].esc)
        reason = sy__resp_incomplete_reason(d.src + d.n[fr].off + 1, d.n[fr].len - 2);
    struct sy__resp_usage u;
    sy__resp_usage_read(&d, sy_jdom_top(&d, "usage"), &u);
    struct sy__resp_state st = {.status = reason ? "incomplete" : "completed", .incomplete = reason, .usage = &u};

    size_t mark = out->len;
    struct sy_jw w;
    sy_jw_init(&w, out);
    sy__resp_head(&w, m, &st);
    sy_jw_arr(&w);
    char buf[96];

    /* reasoning */
    uint32_t r = sy_jdom_member(&d, msg, "reasoning_content");
    if (!nonempty_str(&d, r))
        r = sy_jdom_member(&d, msg, "reasoning");
    struct sy_buf think; /* the thinking blocks, for encrypted_content (thinking.c) */
    sy_buf_init(&think, (size_t)64 << 20);
    uint32_t tb = sy_jdom_member(&d, msg, "thinking_blocks");
    if (sy_jdom_kind(&d, tb) == 'a')
        for (uint32_t b = sy_jdom_first(&d, tb); b; b = sy_jdom_next(&d, b))
            sy__resp_think_add(&think, &d, b);
    if (nonempty_str(&d, r) || think.len) {
        sy_jw_obj(&w);
        W_KLIT(&w, "type", "reasoning");
        sy_jw_key(&w, "id");
        sy__resp_item_id(buf, sizeof buf, "rs", seed, -1);
        sy_jw_cstr(&w, buf);
        sy_jw_key(&w, "summary");
        sy_jw_arr(&w);
        if (nonempty_str(&d, r)) {
            sy_jw_obj(&w);
            W_KLIT(&w, "type", "summary_text");
            sy_jw_key(&w, "text");
            sy_jw_node(&w, &d, r);
            sy_jw_end(&w);
        }
        sy_jw_end(&w);
        sy__resp_think_write(&w, &think);
        sy_jw_end(&w);
    }
    sy_buf_free(&think);

    /* tool calls: tool_calls, else the legacy function_call */
    uint32_t tcs = sy_jdom_member(&d, msg, "tool_calls"), fc = sy_jdom_member(&d, msg, "function_call");
    int ncalls = 0;
    if (sy_jdom_kind(&d, tcs) == 'a') {
        for (uint32_t tc = sy_jdom_first(&d, tcs); tc; tc = sy_jdom_next(&d, tc))
            ncalls += sy_jdom_kind(&d, tc) == 'o';
    } else if (sy_jdom_kind(&d, fc) == 'o') {
        ncalls = 1;
    }

    /* the message */
    size_t tl = 0;
    uint32_t content = sy_jdom_member(&d, msg, "content"), refusal = sy_jdom_member(&d, msg, "refusal");
    const char *text = message_text(&d, content, a, &tl);
    int is_refusal = !text && nonempty_str(&d, refusal);
    if (text || is_refusal || !ncalls) {
        sy_jw_obj(&w);
        W_KLIT(&w, "type", "message");
        sy_jw_key(&w, "id");
        sy__resp_item_id(buf, sizeof buf, "msg", seed, -1);
        sy_jw_cstr(&w, buf);
        sy_jw_key(&w, "status");
        sy_jw_cstr(&w, reason && !ncalls ? "incomplete" : "completed");
        W_KLIT(&w, "role", "assistant");
        sy_jw_key(&w, "content");
        sy_jw_arr(&w);
        sy_jw_obj(&w);
        if (is_refusal) {
            W_KLIT(&w, "type", "refusal");
            sy_jw_key(&w, "refusal");
            sy_jw_node(&w, &d, refusal);
        } else {
            W_KLIT(&w, "type", "output_text");
            sy_jw_key(&w, "text");
            if (sy_jdom_kind(&d, content) == 's' && text)
                sy_jw_node(&w, &d, content);
            else
                sy_jw_str(&w, text ? text : "", text ? tl : 0);
            sy_jw_key(&w, "annotations");
            W_RAW(&w, "[]");
        }
        sy_jw_end(&w);
        sy_jw_end(&w);
        sy_jw_end(&w);
    }

    if (sy_jdom_kind(&d, tcs) == 'a') {
        int k = 0;
        for (uint32_t tc = sy_jdom_first(&d, tcs); tc; tc = sy_jdom_next(&d, tc))
            if (sy_jdom_kind(&d, tc) == 'o')
                w_function_call(&w, &d, sy_jdom_member(&d, tc, "id"), sy_jdom_member(&d, tc, "function"), m, a, k++);
    } else if (ncalls) {
        w_function_call(&w, &d, 0, fc, m, a, 0);
    }
    sy_jw_end(&w);
    sy__resp_tail(&w, m, &st);
    if (w.err) {
        out->len = mark;
        if (out->p)
            out->p[mark] = 0;
        return SY_ENOSPC;
    }
    return 0;
}

int sy_resp_output_items(const char *body, size_t n, struct sy_arena *a, struct sy_buf *out)
{
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, body, n, a, 0))
        return SY_EJSON;
    uint32_t o = d.n[0].type == 'o' ? sy_jdom_top(&d, "output") : 0;
    int rc;
    if (sy_jdom_kind(&d, o) == 'a')
        rc = sy_buf_append(out, d.src + d.n[o].off, d.n[o].len);
    else
        rc = SY_BUF_LIT(out, "[]");
    return rc ? SY_ENOSPC : 0;
}
