/* cohere.c - the Cohere v2 adapter (sy_adapter_cohere): /v2/chat and /v2/embed,
 * as LiteLLM's CohereV2ChatConfig / CohereEmbeddingConfig translate them.
 *
 * Request (OpenAI chat -> POST {base}/v2/chat, "Authorization: Bearer KEY"):
 *
 *   OpenAI                          Cohere v2
 *   ------------------------------  ------------------------------------------------
 *   model (deployment's)            model
 *   messages[]                      messages[] (in order, see below)
 *   tools[].function                tools[] {type:function, function:{name,
 *                                    description, parameters}} ("strict" left out;
 *                                    parameters default {"type":"object",...})
 *   tool_choice none / required     tool_choice "NONE" / "REQUIRED"; auto: left out;
 *     {function:{name}}             "REQUIRED" with tools reduced to that one
 *   response_format json_object     response_format {type:json_object}
 *     json_schema {schema}          response_format {type:json_object, json_schema}
 *     text                          left out
 *   max_completion_tokens|max_tokens  max_tokens (max_completion_tokens wins)
 *   temperature, seed               temperature, seed
 *   top_p, top_k (or p, k)          p, k
 *   frequency_/presence_penalty     frequency_penalty, presence_penalty
 *   stop (string or list)           stop_sequences [..]
 *   n (when not 1)                  num_generations
 *   documents, citation_options,    copied as they are (Cohere's own fields)
 *     safety_mode, strict_tools, priority
 *   stream                          stream (always written)
 *   user, stream_options, extra_headers, metadata ...   ignored (as LiteLLM)
 *   logit_bias, logprobs, top_logprobs, parallel_tool_calls, functions,
 *   function_call, modalities, audio, prediction, reasoning_effort, verbosity,
 *   web_search_options, thinking, safety_identifier    400 UnsupportedParamsError
 *                                                      (dropped with drop_params)
 *   any other key                   ignored
 *
 *   message role     Cohere message
 *   ---------------  -----------------------------------------------------------
 *   system/developer {role:system, content: string | [{type:text,text}]}
 *   user             {role:user, content: string | [{type:text,text} |
 *                     {type:image_url, image_url:{url[,detail]}}]}
 *   assistant        {role:assistant[, tool_plan][, content][, tool_calls:[{id,
 *                     type:function, function:{name, arguments}}]]}
 *   tool             {role:tool, tool_call_id, content: string | [{type:text,text}]}
 *   other roles, other content part types: 400
 *
 * Response (chat):
 *
 *   {"id", "finish_reason": COMPLETE|STOP_SEQUENCE|MAX_TOKENS|TOOL_CALL|ERROR|TIMEOUT,
 *    "message": {"role", "content": [{type:text,text} | {type:thinking,thinking}],
 *                "tool_plan", "tool_calls": [{id, type, function:{name, arguments}}]},
 *    "usage": {"billed_units": {input_tokens, output_tokens},
 *              "tokens": {input_tokens, output_tokens}}}
 *
 *   -> content: the text blocks joined (null when there are tool calls, as
 *   LiteLLM), reasoning_content: the thinking blocks joined, tool_calls as
 *   they are, finish_reason mapped (COMPLETE/STOP_SEQUENCE -> stop, MAX_TOKENS
 *   -> length, TOOL_CALL -> tool_calls), usage from usage.tokens.
 *
 * Stream (SSE, `event: <type>` + `data: {"type": <type>, ...}`):
 *
 *   type             data read                                 client chunks
 *   ---------------  ----------------------------------------  --------------------------
 *   message-start    -                                         role
 *   content-start    delta.message.content.{text,thinking}     content / reasoning (if any)
 *   content-delta    delta.message.content.{text,thinking}     content / reasoning_content
 *   tool-call-start  index, delta.message.tool_calls{id,       tool call opens (+ arguments)
 *                    function{name,arguments}}
 *   tool-call-delta  index, ...tool_calls.function.arguments   arguments piece
 *   message-end      delta.{finish_reason, usage, error}       finish (SY_DONE); an error or
 *                                                              ERROR/TIMEOUT: an error event
 *   content-end, tool-call-end, tool-plan-delta, citation-*, debug: nothing
 *   "[DONE]"         -                                         SY_DONE
 *
 * Embeddings (POST {base}/v2/embed):
 *
 *   input (string | [string])   texts [..], or images [..] when every input is a data: URL
 *   input_type                  input_type (default "search_document"; "image" for images)
 *   encoding_format             embedding_types [value] (default ["float"])
 *   dimensions                  output_dimension
 *   truncate, max_tokens, priority  copied
 *   <- {"embeddings": {"<type>": [[..], ..]}, "meta": {"billed_units": {input_tokens, images}}}
 *
 * Errors: {"message": "..."}; statuses as LiteLLM's exception mapping for
 * cohere: "invalid api token"/"No API key provided." -> 401, "too many tokens"
 * -> 400 ContextWindowExceededError, "invalid type: parameter" -> 400,
 * "internal server error" -> 500, 400/498 -> 400, 408 -> 408, 500 -> 500,
 * anything else -> 500 APIConnectionError (LiteLLM falls through to it). The
 * message is the body as Cohere sent it.
 *
 * No I/O, no globals; stream state lives in st->priv (struct cpriv).
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "providers/adapter.h"
#include "providers/jdom.h"
#include "providers/oai.h"

/* A JSON literal (its length from sizeof). */
#define JW_LIT(w, lit) sy_jw_raw((w), "" lit, sizeof(lit) - 1)

#define PROV "cohere"

/* ---- small helpers -------------------------------------------------------- */

static char *dupn(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

static int truthy(const char *v)
{
    return v && (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes"));
}

static int eq(const char *s, size_t n, const char *lit)
{
    return s && strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* Member path from node i (keys up to the first NULL); 0 when i is 0 or any
 * step is missing. From the root: at(d, sy_jdom_get(d, 0, "a"), "b", ...). */
static uint32_t at(const struct sy_jdoc *d, uint32_t i, const char *k1, const char *k2, const char *k3, const char *k4)
{
    const char *ks[4] = {k1, k2, k3, k4};
    for (int j = 0; j < 4 && ks[j]; j++) {
        if (sy_jdom_kind(d, i) != 'o')
            return 0;
        i = sy_jdom_at(d, i, ks[j]);
        if (!i)
            return 0;
    }
    return i;
}

static int64_t num_or(const struct sy_jdoc *d, uint32_t i, int64_t dflt)
{
    int64_t v;
    double f;
    if (sy_jdom_i64(d, i, &v))
        return v;
    if (!sy_jdom_num(d, i, &f) || f != f)
        return dflt;
    return f >= 9.2e18 ? INT64_MAX : f <= -9.2e18 ? INT64_MIN : (int64_t)f; /* a cast out of range is UB */
}

static int fail(struct sy_xerr *e, int status, const char *msg)
{
    sy_oai_err(e, status, msg, strlen(msg));
    return status == 413 ? SY_ENOSPC : SY_EINVAL;
}

/* ---- configure ------------------------------------------------------------ */

/* api_base may name the full endpoint, as LiteLLM's docs show it. */
static void trim_base(char *b)
{
    static const char *const tails[] = {"/v2/chat", "/v1/chat", "/v2/embed", "/v1/embed", "/v2", "/v1"};
    sy_pconf_trim_base(b, tails, sizeof tails / sizeof tails[0]);
}

static int configure(const struct sy_deployment *d, int global_drop, struct sy_pconf *pc, char *err, size_t errlen)
{
    const char *base = d->api_base ? d->api_base : sy_deployment_param(d, "api_base");
    if (!base || !*base)
        base = getenv("COHERE_API_BASE");
    if (!base || !*base)
        base = "https://api.cohere.com";
    const char *key = d->api_key ? d->api_key : sy_deployment_param(d, "api_key");
    if (!key || !*key)
        key = getenv("COHERE_API_KEY");
    if (!key || !*key)
        key = getenv("CO_API_KEY");
    pc->base = dupn(base, strlen(base));
    if (!pc->base) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    trim_base(pc->base);
    if (key && *key && !(pc->key = dupn(key, strlen(key)))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (sy_pconf_has_ctl(pc->key)) {
        snprintf(err, errlen, "api_key contains control characters");
        return -1;
    }
    const char *dp = sy_deployment_param(d, "drop_params");
    pc->drop_params = dp ? truthy(dp) : global_drop;
    const char *ad = sy_deployment_param(d, "additional_drop_params");
    if (ad && sy_pconf_drop_list(ad, pc, err, errlen))
        return -1;
    pc->max_tokens = d->max_tokens > 0 ? d->max_tokens : -1;
    return 0;
}

/* ---- encode: chat --------------------------------------------------------- */

enum {
    P_IGNORE,
    P_UNSUPPORTED,
    P_MESSAGES,
    P_TOOLS,
    P_TOOL_CHOICE,
    P_RESPONSE_FORMAT,
    P_MAX_TOKENS,
    P_MAX_COMPLETION_TOKENS,
    P_TEMPERATURE,
    P_TOP_P,
    P_P,
    P_TOP_K,
    P_K,
    P_SEED,
    P_FREQUENCY_PENALTY,
    P_PRESENCE_PENALTY,
    P_STOP,
    P_N,
    P_PASS, /* Cohere's own fields, copied */
    P_INPUT,
    P_ENCODING_FORMAT,
    P_DIMENSIONS,
    P_INPUT_TYPE,
    P__COUNT
};

struct pdef {
    const char *name;
    int slot;
};

static const struct pdef chat_params[] = {
    {"messages", P_MESSAGES},
    {"tools", P_TOOLS},
    {"tool_choice", P_TOOL_CHOICE},
    {"response_format", P_RESPONSE_FORMAT},
    {"max_tokens", P_MAX_TOKENS},
    {"max_completion_tokens", P_MAX_COMPLETION_TOKENS},
    {"temperature", P_TEMPERATURE},
    {"top_p", P_TOP_P},
    {"p", P_P},
    {"top_k", P_TOP_K},
    {"k", P_K},
    {"seed", P_SEED},
    {"frequency_penalty", P_FREQUENCY_PENALTY},
    {"presence_penalty", P_PRESENCE_PENALTY},
    {"stop", P_STOP},
    {"n", P_N},
    {"documents", P_PASS},
    {"citation_options", P_PASS},
    {"safety_mode", P_PASS},
    {"strict_tools", P_PASS},
    {"priority", P_PASS},
    {"logit_bias", P_UNSUPPORTED},
    {"logprobs", P_UNSUPPORTED},
    {"top_logprobs", P_UNSUPPORTED},
    {"parallel_tool_calls", P_UNSUPPORTED},
    {"functions", P_UNSUPPORTED},
    {"function_call", P_UNSUPPORTED},
    {"modalities", P_UNSUPPORTED},
    {"audio", P_UNSUPPORTED},
    {"prediction", P_UNSUPPORTED},
    {"reasoning_effort", P_UNSUPPORTED},
    {"verbosity", P_UNSUPPORTED},
    {"web_search_options", P_UNSUPPORTED},
    {"thinking", P_UNSUPPORTED},
    {"safety_identifier", P_UNSUPPORTED},
};

#define MAX_PASS 8

struct creq {
    uint32_t at[P__COUNT]; /* value node per slot, 0 when absent */
    uint32_t pass_key[MAX_PASS];
    size_t npass;
};

/* Sort the request's members into slots. 0, or an SY_E* with e filled. */
static int scan(const struct sy_xctx *x, const struct sy_jdoc *req, const struct pdef *t, size_t ntable, struct creq *q,
                struct sy_xerr *e)
{
    memset(q, 0, sizeof *q);
    if (req->n[0].type != 'o')
        return fail(e, 400, "request body must be a JSON object");
    for (uint32_t k = sy_jdom_first(req, 0); k; k = sy_jdom_next_key(req, k)) {
        uint32_t v = sy_jdom_val(k);
        if (sy_jdom_kind(req, v) == 'z')
            continue; /* null: not set, as LiteLLM's non-default params */
        size_t n;
        const char *s = sy_jdom_view(req, k, x->arena, &n);
        char name[64];
        if (!s || n >= sizeof name)
            continue;
        memcpy(name, s, n);
        name[n] = 0;
        int slot = P_IGNORE;
        for (size_t i = 0; i < ntable; i++)
            if (!strcmp(t[i].name, name)) {
                slot = t[i].slot;
                break;
            }
        if (slot == P_IGNORE || (slot != P_MESSAGES && sy_oai_drop_extra(x, name)))
            continue;
        if (slot == P_UNSUPPORTED) {
            if (!sy_oai_unsupported(x, x->d && x->d->provider ? x->d->provider : PROV, name, e))
                return SY_EUNSUPPORTED;
            continue;
        }
        if (slot == P_PASS) {
            if (q->npass < MAX_PASS)
                q->pass_key[q->npass++] = k;
            continue;
        }
        q->at[slot] = v;
    }
    return 0;
}

/* Text parts of a content array as [{type:text,text}], others refused. */
static int text_parts(struct sy_jw *w, const struct sy_jdoc *d, uint32_t c, const char *role, struct sy_xerr *e)
{
    sy_jw_arr(w);
    for (uint32_t p = sy_jdom_first(d, c); p; p = sy_jdom_next(d, p)) {
        uint32_t tyn = sy_jdom_at(d, p, "type");
        uint32_t tx = sy_jdom_at(d, p, "text");
        if (!sy_jdom_str_eq(d, tyn, "text") || sy_jdom_kind(d, tx) != 's') {
            char m[160];
            snprintf(m, sizeof m, "Cohere only accepts text content parts in %s messages", role);
            return fail(e, 400, m);
        }
        sy_jw_obj(w);
        sy_jw_key(w, "type");
        JW_LIT(w, "\"text\"");
        sy_jw_key(w, "text");
        sy_jw_node(w, d, tx);
        sy_jw_end(w);
    }
    sy_jw_end(w);
    return 0;
}

static int user_parts(struct sy_jw *w, const struct sy_jdoc *d, uint32_t c, struct sy_xerr *e)
{
    sy_jw_arr(w);
    for (uint32_t p = sy_jdom_first(d, c); p; p = sy_jdom_next(d, p)) {
        uint32_t tyn = sy_jdom_at(d, p, "type");
        if (sy_jdom_str_eq(d, tyn, "text") && sy_jdom_kind(d, sy_jdom_at(d, p, "text")) == 's') {
            sy_jw_obj(w);
            sy_jw_key(w, "type");
            JW_LIT(w, "\"text\"");
            sy_jw_key(w, "text");
            sy_jw_node(w, d, sy_jdom_at(d, p, "text"));
            sy_jw_end(w);
        } else if (sy_jdom_str_eq(d, tyn, "image_url")) {
            uint32_t iu = sy_jdom_at(d, p, "image_url");
            uint32_t url = sy_jdom_kind(d, iu) == 's' ? iu : sy_jdom_at(d, iu, "url");
            if (sy_jdom_kind(d, url) != 's')
                return fail(e, 400, "image_url content parts need a url");
            sy_jw_obj(w);
            sy_jw_key(w, "type");
            JW_LIT(w, "\"image_url\"");
            sy_jw_key(w, "image_url");
            sy_jw_obj(w);
            sy_jw_key(w, "url");
            sy_jw_node(w, d, url);
            uint32_t det = sy_jdom_at(d, iu, "detail");
            if (sy_jdom_kind(d, iu) == 'o' && sy_jdom_kind(d, det) == 's') {
                sy_jw_key(w, "detail");
                sy_jw_node(w, d, det);
            }
            sy_jw_end(w);
            sy_jw_end(w);
        } else {
            return fail(e, 400, "Cohere accepts text and image_url content parts only");
        }
    }
    sy_jw_end(w);
    return 0;
}

/* content of a system / assistant / tool message: a string, or text parts. */
static int text_content(struct sy_jw *w, const struct sy_jdoc *d, uint32_t c, const char *role, struct sy_xerr *e)
{
    char t = sy_jdom_kind(d, c);
    if (t == 's') {
        sy_jw_node(w, d, c);
        return 0;
    }
    if (t == 'a')
        return text_parts(w, d, c, role, e);
    char m[160];
    snprintf(m, sizeof m, "%s message content must be a string or a list of content parts", role);
    return fail(e, 400, m);
}

static int put_tool_calls(struct sy_jw *w, const struct sy_jdoc *d, uint32_t tc, struct sy_xerr *e)
{
    if (sy_jdom_kind(d, tc) != 'a')
        return fail(e, 400, "tool_calls must be a list");
    sy_jw_key(w, "tool_calls");
    sy_jw_arr(w);
    for (uint32_t c = sy_jdom_first(d, tc); c; c = sy_jdom_next(d, c)) {
        uint32_t fn = sy_jdom_at(d, c, "function");
        uint32_t id = sy_jdom_at(d, c, "id"), name = sy_jdom_at(d, fn, "name");
        if (sy_jdom_kind(d, fn) != 'o' || sy_jdom_kind(d, name) != 's')
            return fail(e, 400, "tool_calls entries need function.name");
        uint32_t args = sy_jdom_at(d, fn, "arguments");
        sy_jw_obj(w);
        sy_jw_key(w, "id");
        if (sy_jdom_kind(d, id) == 's')
            sy_jw_node(w, d, id);
        else
            sy_jw_str(w, "", 0);
        sy_jw_key(w, "type");
        JW_LIT(w, "\"function\"");
        sy_jw_key(w, "function");
        sy_jw_obj(w);
        sy_jw_key(w, "name");
        sy_jw_node(w, d, name);
        sy_jw_key(w, "arguments");
        if (args)
            sy_jw_node_as_str(w, d, args);
        else
            JW_LIT(w, "\"{}\"");
        sy_jw_end(w);
        sy_jw_end(w);
    }
    sy_jw_end(w);
    return 0;
}

static int put_messages(struct sy_jw *w, const struct sy_jdoc *d, uint32_t msgs, struct sy_xerr *e)
{
    if (sy_jdom_kind(d, msgs) != 'a' || !d->n[msgs].kids)
        return fail(e, 400, "messages must be a non-empty list");
    sy_jw_key(w, "messages");
    sy_jw_arr(w);
    for (uint32_t m = sy_jdom_first(d, msgs); m; m = sy_jdom_next(d, m)) {
        uint32_t role = sy_jdom_at(d, m, "role"), c = sy_jdom_at(d, m, "content");
        int rc = 0;
        if (sy_jdom_kind(d, m) != 'o' || sy_jdom_kind(d, role) != 's')
            return fail(e, 400, "each message needs a role");
        int has_c = c && sy_jdom_kind(d, c) != 'z';
        sy_jw_obj(w);
        sy_jw_key(w, "role");
        if (sy_jdom_str_eq(d, role, "system") || sy_jdom_str_eq(d, role, "developer")) {
            JW_LIT(w, "\"system\"");
            sy_jw_key(w, "content");
            if (has_c)
                rc = text_content(w, d, c, "system", e);
            else
                sy_jw_str(w, "", 0);
        } else if (sy_jdom_str_eq(d, role, "user")) {
            JW_LIT(w, "\"user\"");
            sy_jw_key(w, "content");
            if (!has_c)
                sy_jw_str(w, "", 0);
            else if (sy_jdom_kind(d, c) == 's')
                sy_jw_node(w, d, c);
            else if (sy_jdom_kind(d, c) == 'a')
                rc = user_parts(w, d, c, e);
            else
                rc = fail(e, 400, "user message content must be a string or a list of content parts");
        } else if (sy_jdom_str_eq(d, role, "assistant")) {
            JW_LIT(w, "\"assistant\"");
            uint32_t plan = sy_jdom_at(d, m, "tool_plan"), tc = sy_jdom_at(d, m, "tool_calls");
            if (sy_jdom_kind(d, plan) == 's') {
                sy_jw_key(w, "tool_plan");
                sy_jw_node(w, d, plan);
            }
            int calls = sy_jdom_kind(d, tc) == 'a' && d->n[tc].kids;
            if (has_c && !(calls && sy_jdom_kind(d, c) == 's' && d->n[c].len == 2)) {
                sy_jw_key(w, "content");
                rc = text_content(w, d, c, "assistant", e);
            } else if (!calls) {
                sy_jw_key(w, "content"); /* neither text nor calls: an empty turn */
                sy_jw_str(w, "", 0);
            }
            if (!rc && (calls || (tc && sy_jdom_kind(d, tc) != 'z' && sy_jdom_kind(d, tc) != 'a')))
                rc = put_tool_calls(w, d, tc, e); /* calls, or the error for a non-list */
        } else if (sy_jdom_str_eq(d, role, "tool")) {
            uint32_t id = sy_jdom_at(d, m, "tool_call_id");
            if (sy_jdom_kind(d, id) != 's')
                return fail(e, 400, "tool messages need a tool_call_id");
            JW_LIT(w, "\"tool\"");
            sy_jw_key(w, "tool_call_id");
            sy_jw_node(w, d, id);
            sy_jw_key(w, "content");
            if (has_c)
                rc = text_content(w, d, c, "tool", e);
            else
                sy_jw_str(w, "", 0);
        } else {
            return fail(e, 400, "Cohere accepts system, user, assistant and tool messages only");
        }
        if (rc)
            return rc;
        sy_jw_end(w);
    }
    sy_jw_end(w);
    return 0;
}

static void put_tool(struct sy_jw *w, const struct sy_jdoc *d, uint32_t fn)
{
    sy_jw_obj(w);
    sy_jw_key(w, "type");
    JW_LIT(w, "\"function\"");
    sy_jw_key(w, "function");
    sy_jw_obj(w);
    sy_jw_key(w, "name");
    sy_jw_node(w, d, sy_jdom_at(d, fn, "name"));
    uint32_t desc = sy_jdom_at(d, fn, "description"), par = sy_jdom_at(d, fn, "parameters");
    if (sy_jdom_kind(d, desc) == 's') {
        sy_jw_key(w, "description");
        sy_jw_node(w, d, desc);
    }
    sy_jw_key(w, "parameters");
    if (sy_jdom_kind(d, par) == 'o')
        sy_jw_node(w, d, par);
    else
        JW_LIT(w, "{\"type\":\"object\",\"properties\":{}}");
    sy_jw_end(w);
    sy_jw_end(w);
}

/* tools (reduced to `only` when a function is forced) and tool_choice. */
static int put_tools(struct sy_jw *w, const struct sy_jdoc *d, uint32_t tools, uint32_t choice, struct sy_arena *a,
                     struct sy_xerr *e)
{
    const char *only = NULL, *mode = NULL;
    size_t onl = 0;
    if (choice) {
        if (sy_jdom_str_eq(d, choice, "none"))
            mode = "\"NONE\"";
        else if (sy_jdom_str_eq(d, choice, "required"))
            mode = "\"REQUIRED\"";
        else if (sy_jdom_str_eq(d, choice, "auto"))
            mode = NULL;
        else if (sy_jdom_kind(d, choice) == 'o' &&
                 (only = sy_jdom_view(d, at(d, choice, "function", "name", 0, 0), a, &onl)))
            mode = "\"REQUIRED\"";
        else
            return fail(e, 400,
                        "tool_choice must be \"auto\", \"none\", \"required\" or {\"type\":\"function\","
                        "\"function\":{\"name\":...}}");
    }
    int nt = 0;
    if (tools) {
        if (sy_jdom_kind(d, tools) != 'a')
            return fail(e, 400, "tools must be a list");
        for (uint32_t t = sy_jdom_first(d, tools); t; t = sy_jdom_next(d, t)) {
            uint32_t fn = sy_jdom_at(d, t, "function");
            if (sy_jdom_kind(d, fn) != 'o' || sy_jdom_kind(d, sy_jdom_at(d, fn, "name")) != 's')
                return fail(e, 400, "each tool needs function.name");
        }
        for (uint32_t t = sy_jdom_first(d, tools); t; t = sy_jdom_next(d, t)) {
            uint32_t fn = sy_jdom_at(d, t, "function");
            size_t nl;
            const char *nm = sy_jdom_view(d, sy_jdom_at(d, fn, "name"), a, &nl);
            if (only && !(nl == onl && !memcmp(nm, only, nl)))
                continue;
            if (!nt++) {
                sy_jw_key(w, "tools");
                sy_jw_arr(w);
            }
            put_tool(w, d, fn);
        }
        if (nt)
            sy_jw_end(w);
        else if (only)
            return fail(e, 400, "tool_choice names a function that is not in tools");
    }
    if (mode && nt) { /* Cohere refuses tool_choice without tools */
        sy_jw_key(w, "tool_choice");
        sy_jw_raw(w, mode, strlen(mode));
    }
    return 0;
}

static int put_response_format(struct sy_jw *w, const struct sy_jdoc *d, uint32_t rf, struct sy_xerr *e)
{
    uint32_t tyn = sy_jdom_at(d, rf, "type");
    if (sy_jdom_str_eq(d, tyn, "text"))
        return 0;
    if (sy_jdom_str_eq(d, tyn, "json_object")) {
        sy_jw_key(w, "response_format");
        JW_LIT(w, "{\"type\":\"json_object\"}");
        return 0;
    }
    if (sy_jdom_str_eq(d, tyn, "json_schema")) {
        uint32_t schema = at(d, rf, "json_schema", "schema", 0, 0);
        sy_jw_key(w, "response_format");
        sy_jw_obj(w);
        sy_jw_key(w, "type");
        JW_LIT(w, "\"json_object\"");
        if (sy_jdom_kind(d, schema) == 'o') {
            sy_jw_key(w, "json_schema");
            sy_jw_node(w, d, schema);
        }
        sy_jw_end(w);
        return 0;
    }
    return fail(e, 400, "response_format.type must be text, json_object or json_schema");
}

static void headers(const struct sy_xctx *x, struct sy_xout *o)
{
    SY_BUF_LIT(&o->headers, "Content-Type: application/json\r\nAccept: application/json\r\n");
    if (x->pc->key) {
        SY_BUF_LIT(&o->headers, "Authorization: Bearer ");
        sy_buf_puts(&o->headers, x->pc->key);
        SY_BUF_LIT(&o->headers, "\r\n");
    }
}

static int encode_chat(const struct sy_xctx *x, const struct sy_jdoc *req, struct sy_xout *o)
{
    struct creq q;
    int rc = scan(x, req, chat_params, sizeof chat_params / sizeof chat_params[0], &q, &o->err);
    if (rc)
        return rc;
    if (!q.at[P_MESSAGES])
        return fail(&o->err, 400, "messages is required");
    struct sy_jw w;
    sy_jw_init(&w, &o->body);
    sy_jw_obj(&w);
    sy_jw_key(&w, "model");
    sy_jw_cstr(&w, x->model);
    if ((rc = put_messages(&w, req, q.at[P_MESSAGES], &o->err)))
        return rc;
    if ((q.at[P_TOOLS] || q.at[P_TOOL_CHOICE]) &&
        (rc = put_tools(&w, req, q.at[P_TOOLS], q.at[P_TOOL_CHOICE], x->arena, &o->err)))
        return rc;
    if (q.at[P_RESPONSE_FORMAT] && (rc = put_response_format(&w, req, q.at[P_RESPONSE_FORMAT], &o->err)))
        return rc;
    uint32_t mt = q.at[P_MAX_COMPLETION_TOKENS] ? q.at[P_MAX_COMPLETION_TOKENS] : q.at[P_MAX_TOKENS];
    static const struct {
        int slot;
        const char *key;
    } copies[] = {{P_TEMPERATURE, "temperature"},
                  {P_TOP_P, "p"},
                  {P_P, "p"},
                  {P_TOP_K, "k"},
                  {P_K, "k"},
                  {P_SEED, "seed"},
                  {P_FREQUENCY_PENALTY, "frequency_penalty"},
                  {P_PRESENCE_PENALTY, "presence_penalty"}};
    if (mt) {
        sy_jw_key(&w, "max_tokens");
        sy_jw_node(&w, req, mt);
    }
    for (size_t i = 0; i < sizeof copies / sizeof copies[0]; i++) {
        int s = copies[i].slot;
        if (!q.at[s] || (s == P_TOP_P && q.at[P_P]) || (s == P_TOP_K && q.at[P_K]))
            continue; /* Cohere's own p / k win over top_p / top_k */
        sy_jw_key(&w, copies[i].key);
        sy_jw_node(&w, req, q.at[s]);
    }
    if (q.at[P_STOP]) {
        uint32_t s = q.at[P_STOP];
        if (sy_jdom_kind(req, s) == 's') {
            sy_jw_key(&w, "stop_sequences");
            sy_jw_arr(&w);
            sy_jw_node(&w, req, s);
            sy_jw_end(&w);
        } else if (sy_jdom_kind(req, s) == 'a') {
            sy_jw_key(&w, "stop_sequences");
            sy_jw_node(&w, req, s);
        } else {
            return fail(&o->err, 400, "stop must be a string or a list of strings");
        }
    }
    if (q.at[P_N] && num_or(req, q.at[P_N], 1) != 1) {
        sy_jw_key(&w, "num_generations");
        sy_jw_node(&w, req, q.at[P_N]);
    }
    for (size_t i = 0; i < q.npass; i++) {
        size_t kl;
        const char *k = sy_jdom_view(req, q.pass_key[i], x->arena, &kl);
        sy_jw_keyn(&w, k, kl);
        sy_jw_node(&w, req, sy_jdom_val(q.pass_key[i]));
    }
    sy_jw_key(&w, "stream");
    sy_jw_bool(&w, x->stream);
    sy_jw_end(&w);
    if (w.err)
        return fail(&o->err, 413, "request too large for the upstream buffer");
    return 0;
}

/* ---- encode: embeddings --------------------------------------------------- */

static const struct pdef embed_params[] = {
    {"input", P_INPUT},           {"encoding_format", P_ENCODING_FORMAT},
    {"dimensions", P_DIMENSIONS}, {"input_type", P_INPUT_TYPE},
    {"truncate", P_PASS},         {"max_tokens", P_PASS},
    {"priority", P_PASS},
};

static int is_data_url(const struct sy_jdoc *d, uint32_t i)
{
    return sy_jdom_kind(d, i) == 's' && d->n[i].len >= 7 && !memcmp(d->src + d->n[i].off + 1, "data:", 5);
}

static int encode_embed(const struct sy_xctx *x, const struct sy_jdoc *req, struct sy_xout *o)
{
    struct creq q;
    int rc = scan(x, req, embed_params, sizeof embed_params / sizeof embed_params[0], &q, &o->err);
    if (rc)
        return rc;
    uint32_t in = q.at[P_INPUT];
    size_t n = 0, images = 0;
    if (sy_jdom_kind(req, in) == 's') {
        n = 1;
        images = is_data_url(req, in);
    } else if (sy_jdom_kind(req, in) == 'a') {
        for (uint32_t e = sy_jdom_first(req, in); e; e = sy_jdom_next(req, e), n++) {
            if (sy_jdom_kind(req, e) != 's')
                return fail(&o->err, 400, "Cohere embeddings take a string or a list of strings as input");
            images += (size_t)is_data_url(req, e);
        }
    }
    if (!n)
        return fail(&o->err, 400, "input must be a non-empty string or list of strings");
    if (images && images != n)
        return fail(&o->err, 400, "Cohere embeddings cannot mix texts and images in one request");
    struct sy_jw w;
    sy_jw_init(&w, &o->body);
    sy_jw_obj(&w);
    sy_jw_key(&w, "model");
    sy_jw_cstr(&w, x->model);
    sy_jw_key(&w, images ? "images" : "texts");
    if (sy_jdom_kind(req, in) == 's') {
        sy_jw_arr(&w);
        sy_jw_node(&w, req, in);
        sy_jw_end(&w);
    } else {
        sy_jw_node(&w, req, in);
    }
    sy_jw_key(&w, "input_type");
    if (images)
        JW_LIT(&w, "\"image\"");
    else if (sy_jdom_kind(req, q.at[P_INPUT_TYPE]) == 's')
        sy_jw_node(&w, req, q.at[P_INPUT_TYPE]);
    else
        JW_LIT(&w, "\"search_document\"");
    sy_jw_key(&w, "embedding_types");
    sy_jw_arr(&w);
    if (sy_jdom_kind(req, q.at[P_ENCODING_FORMAT]) == 's')
        sy_jw_node(&w, req, q.at[P_ENCODING_FORMAT]);
    else
        JW_LIT(&w, "\"float\"");
    sy_jw_end(&w);
    if (q.at[P_DIMENSIONS]) {
        sy_jw_key(&w, "output_dimension");
        sy_jw_node(&w, req, q.at[P_DIMENSIONS]);
    }
    for (size_t i = 0; i < q.npass; i++) {
        size_t kl;
        const char *k = sy_jdom_view(req, q.pass_key[i], x->arena, &kl);
        sy_jw_keyn(&w, k, kl);
        sy_jw_node(&w, req, sy_jdom_val(q.pass_key[i]));
    }
    sy_jw_end(&w);
    if (w.err)
        return fail(&o->err, 413, "request too large for the upstream buffer");
    return 0;
}

static int encode(const struct sy_xctx *x, const struct sy_jdoc *req, struct sy_xout *o)
{
    int rc = x->op == SY_OP_EMBED ? encode_embed(x, req, o) : encode_chat(x, req, o);
    if (rc)
        return rc;
    sy_buf_puts(&o->url, x->pc->base);
    sy_buf_puts(&o->url, x->op == SY_OP_EMBED ? "/v2/embed" : "/v2/chat");
    headers(x, o);
    return 0;
}

/* ---- decode: responses ---------------------------------------------------- */

static int bad_body(struct sy_xstate *st, const char *what)
{
    char m[200];
    int n = snprintf(m, sizeof m, "Cohere: %s", what);
    sy_oai_err(&st->err, 502, m, (size_t)n);
    return SY_EUPPROTO;
}

static void read_usage(const struct sy_jdoc *d, uint32_t usage, struct sy_xusage *u)
{
    uint32_t tok = sy_jdom_at(d, usage, "tokens");
    if (sy_jdom_kind(d, usage) != 'o' || sy_jdom_kind(d, tok) != 'o')
        return;
    u->prompt = num_or(d, sy_jdom_at(d, tok, "input_tokens"), 0);
    u->completion = num_or(d, sy_jdom_at(d, tok, "output_tokens"), 0);
    u->have = 1;
}

/* Append the string node i's decoded bytes to b (for joining blocks). */
static void cat_str(struct sy_buf *b, const struct sy_jdoc *d, uint32_t i, struct sy_arena *a)
{
    size_t n;
    const char *s = sy_jdom_view(d, i, a, &n);
    if (s)
        sy_buf_append(b, s, n);
}

static int decode_chat(const struct sy_xctx *x, struct sy_xstate *st, const struct sy_jdoc *d, struct sy_buf *out)
{
    uint32_t msg = sy_jdom_get(d, 0, "message");
    if (sy_jdom_kind(d, msg) != 'o')
        return bad_body(st, "response has no message");
    struct sy_buf text, think;
    sy_buf_init(&text, out->cap);
    sy_buf_init(&think, out->cap);
    int have_text = 0, have_think = 0;
    uint32_t content = sy_jdom_at(d, msg, "content");
    for (uint32_t p = sy_jdom_kind(d, content) == 'a' ? sy_jdom_first(d, content) : 0; p; p = sy_jdom_next(d, p)) {
        uint32_t tyn = sy_jdom_at(d, p, "type");
        if (sy_jdom_str_eq(d, tyn, "thinking")) {
            have_think = 1;
            cat_str(&think, d, sy_jdom_at(d, p, "thinking"), x->arena);
        } else if (!tyn || sy_jdom_str_eq(d, tyn, "text")) {
            cat_str(&text, d, sy_jdom_at(d, p, "text"), x->arena);
        }
    }
    if (sy_jdom_kind(d, content) == 's')
        cat_str(&text, d, content, x->arena);
    have_text =
        sy_jdom_kind(d, content) == 's' || sy_jdom_kind(d, content) == 'a'; /* [] is "" (LiteLLM joins the blocks) */
    uint32_t tcs = sy_jdom_at(d, msg, "tool_calls");
    size_t nt = sy_jdom_kind(d, tcs) == 'a' ? d->n[tcs].kids : 0;
    struct sy_xtool *tools = nt ? sy_arena_alloc(x->arena, nt * sizeof *tools) : NULL;
    size_t k = 0;
    for (uint32_t c = nt ? sy_jdom_first(d, tcs) : 0; c; c = sy_jdom_next(d, c)) {
        struct sy_xtool *t = &tools[k];
        uint32_t fn = sy_jdom_at(d, c, "function");
        t->id = sy_jdom_view(d, sy_jdom_at(d, c, "id"), x->arena, &t->idl);
        t->name = sy_jdom_view(d, sy_jdom_at(d, fn, "name"), x->arena, &t->nl);
        uint32_t args = sy_jdom_at(d, fn, "arguments");
        if (sy_jdom_kind(d, args) == 's') {
            t->args = sy_jdom_view(d, args, x->arena, &t->al);
        } else if (args && sy_jdom_kind(d, args) != 'z') {
            t->args = sy_jdom_raw(d, args, &t->al);
        } else {
            t->args = "{}";
            t->al = 2;
        }
        k++;
    }
    uint32_t fr = sy_jdom_get(d, 0, "finish_reason");
    size_t frl;
    const char *frs = sy_jdom_view(d, fr, x->arena, &frl);
    struct sy_xmsg m = {0};
    m.finish_reason = frs ? sy_oai_finish_reason(frs, frl) : "stop";
    if (k && !strcmp(m.finish_reason, "stop"))
        m.finish_reason = "tool_calls";
    if (have_text && !k) {
        m.content = text.p ? text.p : "";
        m.content_len = text.len;
    }
    if (have_think) {
        m.reasoning = think.p ? think.p : "";
        m.reasoning_len = think.len;
    }
    m.tools = tools;
    m.ntools = k;
    read_usage(d, sy_jdom_get(d, 0, "usage"), &st->u);
    sy_oai_write_response(st, &m, out);
    sy_buf_free(&text);
    sy_buf_free(&think);
    return 0;
}

static int decode_embed(const struct sy_xctx *x, struct sy_xstate *st, const struct sy_jdoc *d, struct sy_buf *out)
{
    uint32_t embs = sy_jdom_get(d, 0, "embeddings");
    if (sy_jdom_kind(d, embs) != 'o')
        return bad_body(st, "embeddings response has no embeddings object");
    size_t n = 0;
    for (uint32_t k = sy_jdom_first(d, embs); k; k = sy_jdom_next_key(d, k))
        if (sy_jdom_kind(d, sy_jdom_val(k)) == 'a')
            n += d->n[sy_jdom_val(k)].kids;
    const char **vec = sy_arena_alloc(x->arena, (n + 1) * sizeof *vec);
    size_t *vl = sy_arena_alloc(x->arena, (n + 1) * sizeof *vl), i = 0;
    for (uint32_t k = sy_jdom_first(d, embs); k; k = sy_jdom_next_key(d, k)) {
        uint32_t list = sy_jdom_val(k);
        for (uint32_t e = sy_jdom_kind(d, list) == 'a' ? sy_jdom_first(d, list) : 0; e; e = sy_jdom_next(d, e))
            vec[i] = sy_jdom_raw(d, e, &vl[i]), i++;
    }
    uint32_t bu = at(d, sy_jdom_get(d, 0, "meta"), "billed_units", 0, 0, 0);
    uint32_t it = sy_jdom_at(d, bu, "input_tokens"), im = sy_jdom_at(d, bu, "images");
    if (bu && (it || im)) {
        st->u.prompt = num_or(d, it, 0) + num_or(d, im, 0);
        st->u.completion = 0;
        st->u.have = 1;
    }
    sy_oai_write_embeddings(st, vec, vl, n, out);
    return 0;
}

static int decode_response(const struct sy_xctx *x, struct sy_xstate *st, const char *body, size_t n,
                           struct sy_buf *out)
{
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, body, n, x->arena, 0) || d.n[0].type != 'o')
        return bad_body(st, "response is not a JSON object");
    return x->op == SY_OP_EMBED ? decode_embed(x, st, &d, out) : decode_chat(x, st, &d, out);
}

/* ---- decode: stream ------------------------------------------------------- */

#define MAX_TOOL_IDX 128

struct cpriv {
    unsigned char tool_at[MAX_TOOL_IDX]; /* Cohere tool index -> OpenAI index + 1 (0: not open) */
    int cur_tool;                        /* OpenAI index of the last opened call, -1 before any */
    int started;
};
static_assert(sizeof(struct cpriv) <= sizeof(((struct sy_xstate *)0)->priv), "cohere stream state fits priv");

static int stream_error(struct sy_xstate *st, int status, const char *msg, size_t n, const char *cls)
{
    sy_oai_err(&st->err, status, msg, n);
    snprintf(st->err.cls, sizeof st->err.cls, "%s", cls);
    return SY_EUPPROTO;
}

/* The OpenAI index of Cohere tool call `idx` (event "index"), else the current one. */
static int tool_index(struct cpriv *p, const struct sy_jdoc *d)
{
    int64_t idx = num_or(d, sy_jdom_get(d, 0, "index"), -1);
    if (idx >= 0 && idx < MAX_TOOL_IDX && p->tool_at[idx])
        return p->tool_at[idx] - 1;
    return p->cur_tool;
}

static void content_delta(const struct sy_xctx *x, struct sy_xstate *st, const struct sy_jdoc *d, struct sy_buf *out)
{
    uint32_t c = at(d, sy_jdom_get(d, 0, "delta"), "message", "content", 0, 0);
    size_t n;
    const char *s;
    if (sy_jdom_kind(d, c) == 's') {
        s = sy_jdom_view(d, c, x->arena, &n);
        sy_oai_chunk_text(st, out, s, n);
        return;
    }
    if ((s = sy_jdom_view(d, sy_jdom_at(d, c, "thinking"), x->arena, &n)) && n)
        sy_oai_chunk_reasoning(st, out, s, n);
    if ((s = sy_jdom_view(d, sy_jdom_at(d, c, "text"), x->arena, &n)) && n)
        sy_oai_chunk_text(st, out, s, n);
}

static int message_end(const struct sy_xctx *x, struct sy_xstate *st, const struct sy_jdoc *d, struct sy_buf *out)
{
    uint32_t delta = sy_jdom_get(d, 0, "delta");
    size_t el = 0, fl = 0;
    const char *err = sy_jdom_view(d, sy_jdom_at(d, delta, "error"), x->arena, &el);
    const char *fr = sy_jdom_view(d, sy_jdom_at(d, delta, "finish_reason"), x->arena, &fl);
    int timeout = eq(fr, fl, "TIMEOUT");
    if ((err && el) || timeout || eq(fr, fl, "ERROR")) {
        char m[600];
        int n = err && el ? snprintf(m, sizeof m, "Cohere streaming error: %.*s", (int)(el > 500 ? 500 : el), err)
                          : snprintf(m, sizeof m, "Cohere streaming terminated with %s", timeout ? "timeout" : "error");
        return stream_error(st, timeout ? 408 : 500, m, (size_t)n, timeout ? "Timeout" : "InternalServerError");
    }
    const char *f = fr ? sy_oai_finish_reason(fr, fl) : "stop";
    if (st->ntools && !strcmp(f, "stop"))
        f = "tool_calls";
    read_usage(d, sy_jdom_at(d, delta, "usage"), &st->u);
    sy_oai_chunk_finish(st, out, f);
    st->done = 1;
    return SY_DONE;
}

static int event(const struct sy_xctx *x, struct sy_xstate *st, const char *type, size_t tl, const struct sy_jdoc *d,
                 struct sy_buf *out)
{
    struct cpriv *p = (struct cpriv *)st->priv;
    if (!p->started) {
        p->started = 1;
        p->cur_tool = -1;
    }
    size_t n;
    const char *s = sy_jdom_view(d, sy_jdom_get(d, 0, "type"), x->arena, &n);
    if (s) {
        type = s;
        tl = n;
    }
    if (eq(type, tl, "message-start")) {
        sy_oai_chunk_role(st, out);
    } else if (eq(type, tl, "content-start") || eq(type, tl, "content-delta")) {
        content_delta(x, st, d, out);
    } else if (eq(type, tl, "tool-call-start")) {
        uint32_t tc = at(d, sy_jdom_get(d, 0, "delta"), "message", "tool_calls", 0, 0);
        if (sy_jdom_kind(d, tc) == 'a')
            tc = sy_jdom_first(d, tc);
        uint32_t fn = sy_jdom_at(d, tc, "function");
        size_t il, nl, al;
        const char *id = sy_jdom_view(d, sy_jdom_at(d, tc, "id"), x->arena, &il);
        const char *name = sy_jdom_view(d, sy_jdom_at(d, fn, "name"), x->arena, &nl);
        const char *args = sy_jdom_view(d, sy_jdom_at(d, fn, "arguments"), x->arena, &al);
        int oi = sy_oai_chunk_tool_start(st, out, id, il, name, nl);
        int64_t idx = num_or(d, sy_jdom_get(d, 0, "index"), -1);
        if (idx >= 0 && idx < MAX_TOOL_IDX && oi < 255)
            p->tool_at[idx] = (unsigned char)(oi + 1);
        p->cur_tool = oi;
        if (args && al)
            sy_oai_chunk_tool_args(st, out, oi, args, al);
    } else if (eq(type, tl, "tool-call-delta")) {
        uint32_t tc = at(d, sy_jdom_get(d, 0, "delta"), "message", "tool_calls", 0, 0);
        if (sy_jdom_kind(d, tc) == 'a')
            tc = sy_jdom_first(d, tc);
        const char *args = sy_jdom_view(d, at(d, tc, "function", "arguments", 0, 0), x->arena, &n);
        int oi = tool_index(p, d);
        if (oi >= 0 && args && n)
            sy_oai_chunk_tool_args(st, out, oi, args, n);
    } else if (eq(type, tl, "message-end")) {
        return message_end(x, st, d, out);
    } else if (!tl && (s = sy_jdom_view(d, sy_jdom_get(d, 0, "message"), x->arena, &n))) {
        return stream_error(st, 500, s, n, "APIConnectionError"); /* an error object instead of an event */
    }
    return 0; /* content-end, tool-call-end, tool-plan-delta, citation-*, debug, unknown */
}

static int decode_event(const struct sy_xctx *x, struct sy_xstate *st, const char *type, size_t tl, const char *data,
                        size_t dl, struct sy_buf *out)
{
    if (dl == 6 && !memcmp(data, "[DONE]", 6)) {
        st->done = 1;
        return SY_DONE;
    }
    struct sy_arena a; /* per event: a long stream must not grow the request's arena */
    sy_arena_init(&a);
    struct sy_xctx xe = *x;
    xe.arena = &a;
    struct sy_jdoc d;
    int rc;
    if (sy_jdom_parse(&d, data, dl, &a, 0) || d.n[0].type != 'o')
        rc = stream_error(st, 500, "Cohere stream: an event is not a JSON object", 44, "APIConnectionError");
    else
        rc = event(&xe, st, type, tl, &d, out);
    sy_arena_free(&a);
    return rc;
}

/* ---- errors --------------------------------------------------------------- */

static int has(const char *s, size_t n, const char *needle, int icase)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (icase ? !strncasecmp(s + i, needle, k) : !memcmp(s + i, needle, k))
            return 1;
    return 0;
}

static void decode_error(const struct sy_xctx *x, int status, const char *body, size_t n, struct sy_xerr *e)
{
    (void)x;
    while (n && (body[n - 1] == '\n' || body[n - 1] == '\r' || body[n - 1] == ' '))
        n--;
    int st = status;
    const char *cls = "";
    if (has(body, n, "invalid api token", 0) || has(body, n, "No API key provided.", 0))
        st = 401;
    else if (has(body, n, "invalid type: parameter", 0))
        st = 400;
    else if (has(body, n, "too many tokens", 0))
        st = 400, cls = "ContextWindowExceededError";
    else if (has(body, n, "internal server error", 1))
        st = 500, cls = "InternalServerError";
    else if (status == 400 || status == 498)
        st = 400;
    else if (status == 408)
        st = 408;
    else if (status == 500)
        st = 500, cls = "InternalServerError";
    else if (status == 401 || status == 403 || status == 404 || status == 413 || status == 422 || status == 429 ||
             status == 502 || status == 503 || status == 504)
        st = status; /* better than LiteLLM (500 APIConnectionError): a 429 stays a rate limit, so
                        retries, cooldowns and the client's back-off work */
    else
        st = 500, cls = "APIConnectionError";
    sy_oai_err(e, st, body, n);
    snprintf(e->cls, sizeof e->cls, "%s", cls);
}

const struct sy_adapter sy_adapter_cohere = {
    .name = "cohere",
    .caps = SY_CAP_STREAM | SY_CAP_TOOLS | SY_CAP_VISION | SY_CAP_EMBED | SY_CAP_REASONING,
    .framing = SY_FRAME_SSE,
    .configure = configure,             /* api_base / COHERE_API_BASE, api_key / COHERE_API_KEY / CO_API_KEY */
    .encode = encode,                   /* /v2/chat or /v2/embed */
    .decode_response = decode_response, /* chat response or embeddings */
    .decode_event = decode_event,       /* one SSE event */
    .decode_error = decode_error,       /* LiteLLM's cohere exception mapping */
};
