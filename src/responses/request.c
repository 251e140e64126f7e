/* request.c - a Responses API request (POST /v1/responses) -> an OpenAI
 * chat.completions request, for models whose deployment has no Responses API
 * (responses.h, sy_resp_to_openai). After LiteLLM's
 * litellm/responses/litellm_completion_transformation/transformation.py
 * (transform_responses_api_request_to_chat_completion_request and helpers).
 *
 *   Responses request                          chat.completions request
 *   model (string, required)                   model (as given)
 *   instructions "s" (non-empty)               messages[0] {role:system, content:"s"}
 *   (prior: the stored conversation)           next messages, converted like input items
 *   input "s"                                  {role:user, content:"s"}
 *   input [items...], in order:
 *     {type?:"message", role, content}         a message; role user | system | developer |
 *                                              assistant (developer -> system; absent -> user);
 *                                              content null/absent: no message (as LiteLLM)
 *       content "s"                            content "s"
 *       user parts                             content [parts]:
 *         "s" | input_text | output_text |       {type:text, text}
 *         refusal {refusal} | other with text    (other parts without text: dropped)
 *         input_image {image_url, detail}        {type:image_url, image_url:{url, detail
 *                                                (default "auto")}}
 *         input_image {file_id} (no image_url)   {type:file, file:{file_id}}
 *         input_file {file_id, file_data,        {type:file, file:{file_id, file_data,
 *                     filename}                  filename}} (the non-empty ones)
 *         input_audio {input_audio}              {type:input_audio, input_audio}
 *       system/developer parts                 content "s": the texts joined "\n"
 *       assistant parts                        content "s": the texts joined "" (output_text
 *                                              pieces of one answer); images/files dropped
 *     function_call {call_id, name,            an assistant message {role:assistant,
 *                    arguments}                content:null, tool_calls:[{id: call_id (else id),
 *                                              type:function, function:{name, arguments}}]};
 *                                              consecutive calls share one message, which is
 *                                              also the directly preceding assistant message
 *                                              when there is one (reasoning items between
 *                                              them do not count); arguments that are not a
 *                                              string are written as their JSON text
 *     function_call_output {call_id, output}   {role:tool, tool_call_id, content: "s", or the
 *                                              output parts' texts joined "\n"}; no call_id:
 *                                              no message (as LiteLLM)
 *     reasoning                                dropped (chat has no place for it)
 *     item_reference, any other type           400 param "input" (needs a native deployment)
 *   tools [{type:function, name, description,  tools [{type:function, function:{name,
 *           parameters, strict}]               description (default ""), parameters (default
 *                                              {type:object}; "type":"object" added when
 *                                              missing), strict (default false)}}] (LiteLLM)
 *   tools of any other type (web_search,       400 param "tools": "switchyard: tool type '<t>'
 *     file_search, mcp, computer_use ...)      needs a deployment with OpenAI's Responses API
 *                                              (openai/azure)"
 *   tool_choice "auto"|"none"|"required"       the same string
 *   tool_choice {type:function, name:X}        {type:function, function:{name:X}}
 *     ({type:function, function:{name:X}})     (the same)
 *   tool_choice {type:auto|none}               "auto" | "none"
 *   tool_choice {type:required|any|tool},      "required" (LiteLLM's _transform_tool_choice)
 *     {type:function} without a name
 *   tool_choice {type:allowed_tools, mode}     mode ("auto" when not a string)
 *   tool_choice {type:<hosted tool>}           400 param "tool_choice"
 *   (tool_choice, parallel_tool_calls without  not sent: OpenAI refuses them without tools)
 *    any function tool)
 *   parallel_tool_calls, temperature, top_p,   same names, values copied
 *   user, metadata, seed
 *   top_logprobs N                             logprobs:true, top_logprobs:N
 *   max_output_tokens                          max_tokens
 *   text.format {type:json_schema, name,       response_format {type:json_schema, json_schema:
 *                schema, strict}               {name (default "response_schema"), schema
 *                                              (default {}), strict (default false)}}
 *   text.format {type:json_object}             response_format {type:json_object}
 *   text.format {type:text}                    (nothing)
 *   reasoning {effort:E} | reasoning "E"       reasoning_effort:E
 *   stream true | false                        stream (true adds stream_options:
 *                                              {include_usage:true}, as LiteLLM)
 *   store, previous_response_id, truncation,   not forwarded
 *   include, background, service_tier, others
 *
 * Differences from LiteLLM, on purpose: function_call_output messages stay
 * where they are in the input (LiteLLM moves them all to the end, which
 * breaks a conversation with two sequential tool rounds); consecutive
 * function_call items are merged into one assistant message (parallel calls
 * need one message); the developer role becomes system; a message part that
 * is a bare string becomes a text part; an unknown input item type is a 400,
 * not a crash or a silent drop.
 *
 * Validation (400, type invalid_request_error, OpenAI's wording): the body is
 * not an object; model missing or not a string (param "model"); input missing,
 * not a string or a list, an item not an object, a bad role or content type,
 * an input_image without image_url/file_id, an item_reference or unknown item
 * type, or no chat message at all (param "input"); wrong types of the members
 * above (param = the member). The stored conversation (prior) is converted by
 * the same code; a problem there is reported with param "previous_response_id".
 *
 * `items` (GET /v1/responses/{id}/input_items, and what the next turn replays):
 * this request's input items, in order, each written as
 *   {"type":T,"id":ID, ...the item's other members in their order...}
 * T the item's type ("message" when absent); ID the item's own "id" when it is
 * a non-empty string, else "<prefix>_<id_seed>_i<n>" with n the item's index in
 * input and prefix msg (message), fc (function_call), fco
 * (function_call_output), rs (reasoning), item (other); "_i<n>" keeps them
 * apart from the output ids answer.c derives from the same seed
 * ("msg_<seed>", "fc_<seed>_<n>", "rs_<seed>"). A message's string content
 * becomes [{"type":"input_text","text":S}] ([{"type":"output_text","text":S,
 * "annotations":[]}] for the assistant), and a message without a role gets
 * "role":"user", so the list looks like OpenAI's. A repeated key keeps only its
 * last value (what the conversion used); keys are re-escaped canonically.
 * A string input becomes
 *   [{"type":"message","id":"msg_<seed>_i0","role":"user","content":[{"type":"input_text","text":S}]}].
 *
 * Output is always valid JSON: strings are copied as raw spans the strict
 * parser accepted or escaped by the writer; joins concatenate raw string
 * insides. On any error neither out nor items keeps a partial write.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/errors.h"
#include "responses/responses.h"

/* ---- small helpers ------------------------------------------------------ */

static int nonempty_str(const struct sy_jdoc *d, uint32_t i)
{
    return sy_jdom_kind(d, i) == 's' && d->n[i].len > 2;
}

#define W_RAW(w, lit)       sy_jw_raw((w), "" lit, sizeof(lit) - 1)
#define W_KLIT(w, k, lit)   (sy_jw_key((w), (k)), sy_jw_str((w), "" lit, sizeof(lit) - 1))
#define W_KNODE(w, k, d, i) (sy_jw_key((w), (k)), sy_jw_node((w), (d), (i)))

struct tx {
    const struct sy_jdoc *r; /* the request */
    const struct sy_jdoc *d; /* the document being converted: r, or the prior */
    const char *param;       /* error param for items of d: "input" or "previous_response_id" */
    const char *lbl;         /* how an item of d is named in messages: "input" or "stored item" */
    struct sy_arena *a;
    struct sy_jw w;  /* out */
    struct sy_jw iw; /* items */
    int items;       /* items wanted */
    int asst;        /* open assistant message: 0 none, 1 open, 2 with its tool_calls array open */
    uint32_t nmsg;   /* chat messages written */
    char seed[65];
    struct sy_xerr *e;
};

static int bad(struct tx *t, const char *param, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(struct tx *t, const char *param, const char *fmt, ...)
{
    struct sy_xerr *e = t->e;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    e->status = 400;
    snprintf(e->type, sizeof e->type, "invalid_request_error");
    snprintf(e->param, sizeof e->param, "%s", param);
    e->cls[0] = 0;
    return SY_EINVAL;
}

/* A string node's value for an error message, at most 64 bytes (whole UTF-8
 * characters). */
static const char *clip(struct tx *t, const struct sy_jdoc *d, uint32_t i, int *len)
{
    size_t l = 0;
    const char *s = sy_jdom_kind(d, i) == 's' ? sy_jdom_str(d, i, t->a, &l) : NULL;
    if (!s)
        return *len = 1, "?";
    if (l > 64) { /* cut at a character boundary */
        l = 64;
        while (l && ((unsigned char)s[l] & 0xC0) == 0x80)
            l--;
    }
    *len = (int)l;
    return s;
}

/* Writes key node k's key (decoded, so any escape is written canonically). */
static void w_key_of(struct tx *t, struct sy_jw *w, uint32_t k)
{
    size_t kl;
    const char *ks = sy_jdom_str(t->d, k, t->a, &kl);
    sy_jw_keyn(w, ks, kl);
}

/* 1 when key node k is the last of its name in object obj (a repeated key:
 * only the last counts, as for Python's json). Keys with a NUL byte are never
 * compared (sy_jdom_get takes C strings) and always kept. */
static int last_of_name(struct tx *t, uint32_t obj, uint32_t k)
{
    size_t kl;
    const char *ks = sy_jdom_str(t->d, k, t->a, &kl);
    return memchr(ks, 0, kl) || sy_jdom_get(t->d, obj, ks) == sy_jdom_val(k);
}

/* ---- messages ------------------------------------------------------------- */

/* Ends the open assistant message (and its tool_calls array). */
static void close_asst(struct tx *t)
{
    if (t->asst == 2)
        sy_jw_end(&t->w);
    if (t->asst)
        sy_jw_end(&t->w);
    t->asst = 0;
}

/* Starts a chat message {"role":role (left open). */
static void open_msg(struct tx *t, const char *role)
{
    close_asst(t);
    sy_jw_obj(&t->w);
    sy_jw_key(&t->w, "role");
    sy_jw_cstr(&t->w, role);
    t->nmsg++;
}

enum { P_TEXT = 1, P_IMAGE, P_FILE, P_AUDIO, P_OTHER };

/* Kind of content part p and, for text, its string node in *txt (0 when a
 * part has no text: dropped). */
static int part_kind(const struct sy_jdoc *d, uint32_t p, uint32_t *txt)
{
    *txt = 0;
    if (sy_jdom_kind(d, p) == 's') {
        *txt = p;
        return P_TEXT;
    }
    uint32_t type = sy_jdom_at(d, p, "type"), x;
    if (sy_jdom_str_eq(d, type, "input_image"))
        return P_IMAGE;
    if (sy_jdom_str_eq(d, type, "input_file"))
        return P_FILE;
    if (sy_jdom_str_eq(d, type, "input_audio"))
        return P_AUDIO;
    x = sy_jdom_str_eq(d, type, "refusal") ? sy_jdom_at(d, p, "refusal") : sy_jdom_at(d, p, "text");
    if (sy_jdom_kind(d, x) == 's') {
        *txt = x;
        return P_TEXT;
    }
    return P_OTHER;
}

/* Checks the parts of content array c of item i. */
static int check_parts(struct tx *t, uint32_t c, uint32_t i)
{
    const struct sy_jdoc *d = t->d;
    uint32_t j = 0;
    for (uint32_t p = sy_jdom_first(d, c); p; p = sy_jdom_next(d, p), j++) {
        char k = sy_jdom_kind(d, p);
        if (k == 's')
            continue;
        if (k != 'o')
            return bad(t, t->param, "Invalid type for '%s[%u].content[%u]': expected an object.", t->lbl, i, j);
        uint32_t type = sy_jdom_member(d, p, "type"), x, txt;
        if (type && sy_jdom_kind(d, type) != 's')
            return bad(t, t->param, "Invalid type for '%s[%u].content[%u].type': expected a string.", t->lbl, i, j);
        int pk = part_kind(d, p, &txt);
        if (pk == P_OTHER) {
            x = sy_jdom_str_eq(d, type, "refusal") ? sy_jdom_member(d, p, "refusal") : sy_jdom_member(d, p, "text");
            if (x)
                return bad(t, t->param, "Invalid type for '%s[%u].content[%u].%s': expected a string.", t->lbl, i, j,
                           sy_jdom_str_eq(d, type, "refusal") ? "refusal" : "text");
        } else if (pk == P_IMAGE) {
            uint32_t u = sy_jdom_member(d, p, "image_url"), f = sy_jdom_member(d, p, "file_id"),
                     det = sy_jdom_member(d, p, "detail");
            if (sy_jdom_kind(d, u) != 's' && sy_jdom_kind(d, f) != 's')
                return bad(t, t->param, "Invalid '%s[%u].content[%u]': an input_image needs an image_url or a file_id.",
                           t->lbl, i, j);
            if (det && sy_jdom_kind(d, det) != 's')
                return bad(t, t->param, "Invalid type for '%s[%u].content[%u].detail': expected a string.", t->lbl, i,
                           j);
        } else if (pk == P_AUDIO) {
            if (sy_jdom_kind(d, sy_jdom_member(d, p, "input_audio")) != 'o')
                return bad(t, t->param, "Invalid type for '%s[%u].content[%u].input_audio': expected an object.",
                           t->lbl, i, j);
        }
    }
    return 0;
}

/* The text nodes of content array c into a new array (*k of them). */
static uint32_t *texts_of(struct tx *t, uint32_t c, size_t *k)
{
    const struct sy_jdoc *d = t->d;
    uint32_t *nodes = sy_arena_alloc(t->a, ((size_t)d->n[c].kids + 1) * sizeof *nodes), txt;
    *k = 0;
    for (uint32_t p = sy_jdom_first(d, c); p; p = sy_jdom_next(d, p))
        if (part_kind(d, p, &txt) == P_TEXT)
            nodes[(*k)++] = txt;
    return nodes;
}

/* User content parts as chat parts. */
static void w_user_parts(struct tx *t, uint32_t c)
{
    const struct sy_jdoc *d = t->d;
    struct sy_jw *w = &t->w;
    sy_jw_arr(w);
    for (uint32_t p = sy_jdom_first(d, c); p; p = sy_jdom_next(d, p)) {
        uint32_t txt;
        switch (part_kind(d, p, &txt)) {
        case P_TEXT:
            sy_jw_obj(w);
            W_KLIT(w, "type", "text");
            W_KNODE(w, "text", d, txt);
            sy_jw_end(w);
            break;
        case P_IMAGE: {
            uint32_t u = sy_jdom_member(d, p, "image_url"), det = sy_jdom_member(d, p, "detail");
            sy_jw_obj(w);
            if (sy_jdom_kind(d, u) == 's') {
                W_KLIT(w, "type", "image_url");
                sy_jw_key(w, "image_url");
                sy_jw_obj(w);
                W_KNODE(w, "url", d, u);
                sy_jw_key(w, "detail");
                if (sy_jdom_kind(d, det) == 's')
                    sy_jw_node(w, d, det);
                else
                    sy_jw_str(w, "auto", 4);
                sy_jw_end(w);
            } else { /* a file_id only: chat takes uploaded files as file parts */
                W_KLIT(w, "type", "file");
                sy_jw_key(w, "file");
                sy_jw_obj(w);
                W_KNODE(w, "file_id", d, sy_jdom_member(d, p, "file_id"));
                sy_jw_end(w);
            }
            sy_jw_end(w);
            break;
        }
        case P_FILE: {
            static const char *const keys[] = {"file_id", "file_data", "filename"};
            sy_jw_obj(w);
            W_KLIT(w, "type", "file");
            sy_jw_key(w, "file");
            sy_jw_obj(w);
            for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
                uint32_t v = sy_jdom_at(d, p, keys[i]);
                if (nonempty_str(d, v))
                    W_KNODE(w, keys[i], d, v);
            }
            sy_jw_end(w);
            sy_jw_end(w);
            break;
        }
        case P_AUDIO:
            sy_jw_obj(w);
            W_KLIT(w, "type", "input_audio");
            W_KNODE(w, "input_audio", d, sy_jdom_member(d, p, "input_audio"));
            sy_jw_end(w);
            break;
        default: /* no text, not a media part: dropped */ break;
        }
    }
    sy_jw_end(w);
}

static int w_message(struct tx *t, uint32_t it, uint32_t i)
{
    const struct sy_jdoc *d = t->d;
    struct sy_jw *w = &t->w;
    uint32_t role = sy_jdom_member(d, it, "role"), c = sy_jdom_member(d, it, "content");
    const char *r = "user";
    if (role) {
        if (sy_jdom_str_eq(d, role, "user"))
            r = "user";
        else if (sy_jdom_str_eq(d, role, "system") || sy_jdom_str_eq(d, role, "developer"))
            r = "system";
        else if (sy_jdom_str_eq(d, role, "assistant"))
            r = "assistant";
        else
            return bad(t, t->param,
                       "Invalid value for '%s[%u].role': expected one of 'user', 'system', 'developer' or "
                       "'assistant'.",
                       t->lbl, i);
    }
    char k = sy_jdom_kind(d, c);
    if (!k)
        return 0; /* no content: no message (LiteLLM) */
    if (k != 's' && k != 'a')
        return bad(t, t->param, "Invalid type for '%s[%u].content': expected a string or an array of content parts.",
                   t->lbl, i);
    int rc = k == 'a' ? check_parts(t, c, i) : 0;
    if (rc)
        return rc;
    int asst = r[0] == 'a';
    open_msg(t, r);
    sy_jw_key(w, "content");
    if (k == 's') {
        sy_jw_node(w, d, c);
    } else if (r[0] == 'u') {
        w_user_parts(t, c);
    } else {
        size_t nt;
        uint32_t *nodes = texts_of(t, c, &nt);
        sy_jw_join(w, d, nodes, nt, asst ? "" : "\\n", t->a);
    }
    if (asst)
        t->asst = 1; /* left open: function calls that follow join it */
    else
        sy_jw_end(w);
    return 0;
}

static int w_call(struct tx *t, uint32_t it, uint32_t i)
{
    const struct sy_jdoc *d = t->d;
    struct sy_jw *w = &t->w;
    uint32_t cid = sy_jdom_member(d, it, "call_id"), id = sy_jdom_member(d, it, "id"),
             name = sy_jdom_member(d, it, "name"), args = sy_jdom_member(d, it, "arguments");
    if (cid && sy_jdom_kind(d, cid) != 's')
        return bad(t, t->param, "Invalid type for '%s[%u].call_id': expected a string.", t->lbl, i);
    if (name && sy_jdom_kind(d, name) != 's')
        return bad(t, t->param, "Invalid type for '%s[%u].name': expected a string.", t->lbl, i);
    if (!t->asst) {
        sy_jw_obj(w);
        W_KLIT(w, "role", "assistant");
        sy_jw_key(w, "content");
        sy_jw_null(w);
        t->nmsg++;
        t->asst = 1;
    }
    if (t->asst == 1) {
        sy_jw_key(w, "tool_calls");
        sy_jw_arr(w);
        t->asst = 2;
    }
    sy_jw_obj(w);
    sy_jw_key(w, "id");
    if (nonempty_str(d, cid))
        sy_jw_node(w, d, cid);
    else if (sy_jdom_kind(d, id) == 's')
        sy_jw_node(w, d, id);
    else
        sy_jw_str(w, "", 0);
    W_KLIT(w, "type", "function");
    sy_jw_key(w, "function");
    sy_jw_obj(w);
    sy_jw_key(w, "name");
    if (name)
        sy_jw_node(w, d, name);
    else
        sy_jw_str(w, "", 0);
    sy_jw_key(w, "arguments");
    sy_jw_node_as_str(w, d, args); /* 0 (absent) writes "" */
    sy_jw_end(w);
    sy_jw_end(w);
    return 0;
}

static int w_call_output(struct tx *t, uint32_t it, uint32_t i)
{
    const struct sy_jdoc *d = t->d;
    struct sy_jw *w = &t->w;
    uint32_t cid = sy_jdom_member(d, it, "call_id"), out = sy_jdom_member(d, it, "output");
    if (cid && sy_jdom_kind(d, cid) != 's')
        return bad(t, t->param, "Invalid type for '%s[%u].call_id': expected a string.", t->lbl, i);
    if (sy_jdom_kind(d, out) == 'a') {
        int rc = check_parts(t, out, i);
        if (rc)
            return rc;
    }
    if (!nonempty_str(d, cid))
        return 0; /* LiteLLM: without a call_id there is no valid tool message */
    open_msg(t, "tool");
    W_KNODE(w, "tool_call_id", d, cid);
    sy_jw_key(w, "content");
    if (sy_jdom_kind(d, out) == 'a') {
        size_t nt;
        uint32_t *nodes = texts_of(t, out, &nt);
        sy_jw_join(w, d, nodes, nt, "\\n", t->a);
    } else {
        sy_jw_node_as_str(w, d, out);
    }
    sy_jw_end(w);
    return 0;
}

/* One input item (of t->d) -> zero or one chat message (or a tool call
 * added to the open assistant message). */
static int w_item(struct tx *t, uint32_t it, uint32_t i)
{
    const struct sy_jdoc *d = t->d;
    if (sy_jdom_kind(d, it) != 'o')
        return bad(t, t->param, "Invalid type for '%s[%u]': expected an object.", t->lbl, i);
    uint32_t type = sy_jdom_member(d, it, "type");
    if (!type || sy_jdom_str_eq(d, type, "message"))
        return w_message(t, it, i);
    if (sy_jdom_kind(d, type) != 's')
        return bad(t, t->param, "Invalid type for '%s[%u].type': expected a string.", t->lbl, i);
    if (sy_jdom_str_eq(d, type, "function_call"))
        return w_call(t, it, i);
    if (sy_jdom_str_eq(d, type, "function_call_output"))
        return w_call_output(t, it, i);
    if (sy_jdom_str_eq(d, type, "reasoning"))
        return 0;
    int l;
    const char *s = clip(t, d, type, &l);
    return bad(t, t->param,
               "switchyard: input items of type '%.*s' (%s[%u]) need a deployment with OpenAI's Responses API "
               "(openai/azure)",
               l, s, t->lbl, i);
}

/* ---- items (input_items) ------------------------------------------------- */

/* Request item `it` (index i) as the stored input item. */
static void w_input_item(struct tx *t, uint32_t it, uint32_t i)
{
    const struct sy_jdoc *d = t->d;
    struct sy_jw *w = &t->iw;
    uint32_t type = sy_jdom_member(d, it, "type"), id = sy_jdom_member(d, it, "id"),
             role = sy_jdom_member(d, it, "role");
    int msg = !type || sy_jdom_str_eq(d, type, "message");
    const char *pre = msg                                               ? "msg"
                      : sy_jdom_str_eq(d, type, "function_call")        ? "fc"
                      : sy_jdom_str_eq(d, type, "function_call_output") ? "fco"
                      : sy_jdom_str_eq(d, type, "reasoning")            ? "rs"
                                                                        : "item";
    int asst = sy_jdom_str_eq(d, role, "assistant");
    sy_jw_obj(w);
    sy_jw_key(w, "type");
    if (type)
        sy_jw_node(w, d, type);
    else
        sy_jw_str(w, "message", 7);
    sy_jw_key(w, "id");
    if (nonempty_str(d, id)) {
        sy_jw_node(w, d, id);
    } else {
        char b[128];
        int n = snprintf(b, sizeof b, "%s_%s_i%u", pre, t->seed, i);
        sy_jw_str(w, b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
    }
    if (msg && !role)
        W_KLIT(w, "role", "user");
    for (uint32_t k = sy_jdom_first(d, it); k; k = sy_jdom_next_key(d, k)) {
        uint32_t v = sy_jdom_val(k);
        if (!last_of_name(t, it, k) || sy_jdom_str_eq(d, k, "type") || sy_jdom_str_eq(d, k, "id") ||
            (msg && !role && sy_jdom_str_eq(d, k, "role")))
            continue;
        w_key_of(t, w, k);
        if (msg && sy_jdom_kind(d, v) == 's' && sy_jdom_str_eq(d, k, "content")) {
            sy_jw_arr(w);
            sy_jw_obj(w);
            if (asst) {
                W_KLIT(w, "type", "output_text");
                W_KNODE(w, "text", d, v);
                sy_jw_key(w, "annotations");
                W_RAW(w, "[]");
            } else {
                W_KLIT(w, "type", "input_text");
                W_KNODE(w, "text", d, v);
            }
            sy_jw_end(w);
            sy_jw_end(w);
        } else {
            sy_jw_node(w, d, v);
        }
    }
    sy_jw_end(w);
}

/* ---- the rest of the request ------------------------------------------------ */

static int is_function_tool(const struct sy_jdoc *d, uint32_t x)
{
    return sy_jdom_str_eq(d, sy_jdom_member(d, x, "type"), "function");
}

/* tools -> chat tools; *n: function tools written. */
static int tools(struct tx *t, uint32_t tl, uint32_t *n)
{
    const struct sy_jdoc *d = t->r;
    struct sy_jw *w = &t->w;
    uint32_t i = 0;
    *n = 0;
    if (sy_jdom_kind(d, tl) != 'a')
        return bad(t, "tools", "Invalid type for 'tools': expected an array of tools.");
    for (uint32_t x = sy_jdom_first(d, tl); x; x = sy_jdom_next(d, x), i++) {
        if (sy_jdom_kind(d, x) != 'o')
            return bad(t, "tools", "Invalid type for 'tools[%u]': expected an object.", i);
        uint32_t type = sy_jdom_member(d, x, "type");
        if (sy_jdom_kind(d, type) != 's')
            return bad(t, "tools", "Missing required parameter: 'tools[%u].type'.", i);
        if (!is_function_tool(d, x)) {
            int l;
            const char *s = clip(t, d, type, &l);
            return bad(t, "tools",
                       "switchyard: tool type '%.*s' needs a deployment with OpenAI's Responses API (openai/azure)", l,
                       s);
        }
        uint32_t name = sy_jdom_member(d, x, "name"), desc = sy_jdom_member(d, x, "description"),
                 par = sy_jdom_member(d, x, "parameters"), strict = sy_jdom_member(d, x, "strict");
        int sv = 0;
        if (sy_jdom_kind(d, name) != 's')
            return bad(t, "tools", "Missing required parameter: 'tools[%u].name'.", i);
        if (desc && sy_jdom_kind(d, desc) != 's')
            return bad(t, "tools", "Invalid type for 'tools[%u].description': expected a string.", i);
        if (par && sy_jdom_kind(d, par) != 'o')
            return bad(t, "tools", "Invalid type for 'tools[%u].parameters': expected an object.", i);
        if (strict && !sy_jdom_bool(d, strict, &sv))
            return bad(t, "tools", "Invalid type for 'tools[%u].strict': expected a boolean.", i);
        if (!*n) {
            sy_jw_key(w, "tools");
            sy_jw_arr(w);
        }
        (*n)++;
        sy_jw_obj(w);
        W_KLIT(w, "type", "function");
        sy_jw_key(w, "function");
        sy_jw_obj(w);
        W_KNODE(w, "name", d, name);
        sy_jw_key(w, "description");
        if (desc)
            sy_jw_node(w, d, desc);
        else
            sy_jw_str(w, "", 0);
        sy_jw_key(w, "parameters");
        if (!par || !d->n[par].kids) {
            W_RAW(w, "{\"type\":\"object\"}");
        } else if (sy_jdom_at(d, par, "type")) {
            sy_jw_node(w, d, par);
        } else { /* LiteLLM adds "type":"object" (last): the raw object without its "}" */
            size_t l;
            const char *p = sy_jdom_raw(d, par, &l);
            char *b = sy_arena_alloc(t->a, l + 16);
            memcpy(b, p, l - 1);
            memcpy(b + l - 1, ",\"type\":\"object\"}", 17);
            sy_jw_raw(w, b, l + 16);
        }
        sy_jw_key(w, "strict");
        sy_jw_bool(w, sv);
        sy_jw_end(w);
        sy_jw_end(w);
    }
    if (*n)
        sy_jw_end(w);
    return 0;
}

/* tool_choice -> chat tool_choice (written only when write is set). */
static int tool_choice(struct tx *t, uint32_t tc, int write)
{
    const struct sy_jdoc *d = t->r;
    struct sy_jw *w = &t->w;
    char k = sy_jdom_kind(d, tc);
    if (k == 's') {
        if (write)
            W_KNODE(w, "tool_choice", d, tc);
        return 0;
    }
    if (k != 'o')
        return bad(t, "tool_choice", "Invalid type for 'tool_choice': expected a string or an object.");
    uint32_t type = sy_jdom_member(d, tc, "type"), name = sy_jdom_member(d, tc, "name"),
             fname = sy_jdom_member(d, sy_jdom_member(d, tc, "function"), "name");
    const char *s = NULL;
    if (sy_jdom_str_eq(d, type, "function") && (nonempty_str(d, name) || nonempty_str(d, fname))) {
        if (write) {
            sy_jw_key(w, "tool_choice");
            sy_jw_obj(w);
            W_KLIT(w, "type", "function");
            sy_jw_key(w, "function");
            sy_jw_obj(w);
            W_KNODE(w, "name", d, nonempty_str(d, name) ? name : fname);
            sy_jw_end(w);
            sy_jw_end(w);
        }
        return 0;
    }
    if (sy_jdom_str_eq(d, type, "auto"))
        s = "auto";
    else if (sy_jdom_str_eq(d, type, "none"))
        s = "none";
    else if (sy_jdom_str_eq(d, type, "required") || sy_jdom_str_eq(d, type, "any") || sy_jdom_str_eq(d, type, "tool") ||
             sy_jdom_str_eq(d, type, "function"))
        s = "required";
    if (s) {
        if (write) {
            sy_jw_key(w, "tool_choice");
            sy_jw_cstr(w, s);
        }
        return 0;
    }
    if (sy_jdom_str_eq(d, type, "allowed_tools")) {
        uint32_t mode = sy_jdom_member(d, tc, "mode");
        if (write) {
            sy_jw_key(w, "tool_choice");
            if (sy_jdom_kind(d, mode) == 's')
                sy_jw_node(w, d, mode);
            else
                sy_jw_str(w, "auto", 4);
        }
        return 0;
    }
    if (sy_jdom_kind(d, type) != 's')
        return bad(t, "tool_choice", "Missing required parameter: 'tool_choice.type'.");
    int l;
    const char *ts = clip(t, d, type, &l);
    return bad(t, "tool_choice",
               "switchyard: tool_choice type '%.*s' needs a deployment with OpenAI's Responses API (openai/azure)", l,
               ts);
}

/* A member copied as is under name `to` after a type check: 'n' number, 'i'
 * integer, 'b' boolean, 's' string, 'o' object. */
static int copy(struct tx *t, const char *from, const char *to, char want)
{
    const struct sy_jdoc *d = t->r;
    uint32_t v = sy_jdom_top(d, from);
    if (!v)
        return 0;
    double x;
    int64_t n;
    int b, ok = want == 'n'   ? sy_jdom_num(d, v, &x)
                : want == 'i' ? sy_jdom_i64(d, v, &n)
                : want == 'b' ? sy_jdom_bool(d, v, &b)
                              : sy_jdom_kind(d, v) == want;
    if (!ok)
        return bad(t, from, "Invalid type for '%s': expected %s.", from,
                   want == 'n'   ? "a number"
                   : want == 'i' ? "an integer"
                   : want == 'b' ? "a boolean"
                   : want == 's' ? "a string"
                                 : "an object");
    W_KNODE(&t->w, to, d, v);
    return 0;
}

static int text_format(struct tx *t)
{
    const struct sy_jdoc *d = t->r;
    struct sy_jw *w = &t->w;
    uint32_t text = sy_jdom_top(d, "text");
    if (!text)
        return 0;
    if (sy_jdom_kind(d, text) != 'o')
        return bad(t, "text", "Invalid type for 'text': expected an object.");
    uint32_t f = sy_jdom_member(d, text, "format");
    if (!f)
        return 0;
    if (sy_jdom_kind(d, f) != 'o')
        return bad(t, "text", "Invalid type for 'text.format': expected an object.");
    uint32_t type = sy_jdom_member(d, f, "type");
    if (sy_jdom_str_eq(d, type, "text"))
        return 0;
    if (sy_jdom_str_eq(d, type, "json_object")) {
        sy_jw_key(w, "response_format");
        W_RAW(w, "{\"type\":\"json_object\"}");
        return 0;
    }
    if (!sy_jdom_str_eq(d, type, "json_schema"))
        return bad(t, "text",
                   "Invalid value for 'text.format.type': expected one of 'text', 'json_object' or "
                   "'json_schema'.");
    uint32_t name = sy_jdom_member(d, f, "name"), schema = sy_jdom_member(d, f, "schema"),
             strict = sy_jdom_member(d, f, "strict");
    int sv = 0;
    if (name && sy_jdom_kind(d, name) != 's')
        return bad(t, "text", "Invalid type for 'text.format.name': expected a string.");
    if (schema && sy_jdom_kind(d, schema) != 'o')
        return bad(t, "text", "Invalid type for 'text.format.schema': expected an object.");
    if (strict && !sy_jdom_bool(d, strict, &sv))
        return bad(t, "text", "Invalid type for 'text.format.strict': expected a boolean.");
    sy_jw_key(w, "response_format");
    sy_jw_obj(w);
    W_KLIT(w, "type", "json_schema");
    sy_jw_key(w, "json_schema");
    sy_jw_obj(w);
    sy_jw_key(w, "name");
    if (name)
        sy_jw_node(w, d, name);
    else
        sy_jw_str(w, "response_schema", 15);
    sy_jw_key(w, "schema");
    if (schema)
        sy_jw_node(w, d, schema);
    else
        W_RAW(w, "{}");
    sy_jw_key(w, "strict");
    sy_jw_bool(w, sv);
    sy_jw_end(w);
    sy_jw_end(w);
    return 0;
}

static int reasoning(struct tx *t)
{
    const struct sy_jdoc *d = t->r;
    uint32_t r = sy_jdom_top(d, "reasoning"), eff = r;
    if (!r)
        return 0;
    if (sy_jdom_kind(d, r) == 'o')
        eff = sy_jdom_member(d, r, "effort");
    else if (sy_jdom_kind(d, r) != 's')
        return bad(t, "reasoning", "Invalid type for 'reasoning': expected an object.");
    if (!eff)
        return 0;
    if (sy_jdom_kind(d, eff) != 's')
        return bad(t, "reasoning", "Invalid type for 'reasoning.effort': expected a string.");
    W_KNODE(&t->w, "reasoning_effort", d, eff);
    return 0;
}

/* The stored conversation prior[0..pn) -> chat messages. */
static int w_prior(struct tx *t, const char *prior, size_t pn)
{
    struct sy_jdoc pd;
    if (sy_jdom_parse(&pd, prior, pn, t->a, 0) || pd.n[0].type != 'a')
        return bad(t, "previous_response_id",
                   "switchyard: the stored conversation of previous_response_id cannot be read.");
    t->d = &pd;
    t->param = "previous_response_id";
    t->lbl = "stored item";
    uint32_t i = 0;
    int rc = 0;
    for (uint32_t it = sy_jdom_first(&pd, 0); it && !rc; it = sy_jdom_next(&pd, it), i++)
        rc = w_item(t, it, i);
    t->d = t->r;
    t->param = "input";
    t->lbl = "input";
    return rc;
}

static int translate(struct tx *t, const char *prior, size_t pn)
{
    const struct sy_jdoc *d = t->r;
    struct sy_jw *w = &t->w;
    int rc;
    if (!d->count || d->n[0].type != 'o')
        return bad(t, "", "switchyard: the request body must be a JSON object.");
    uint32_t model = sy_jdom_top(d, "model"), input = sy_jdom_top(d, "input"), instr = sy_jdom_top(d, "instructions");
    if (!model)
        return bad(t, "model", "Missing required parameter: 'model'.");
    if (sy_jdom_kind(d, model) != 's')
        return bad(t, "model", "Invalid type for 'model': expected a string.");
    if (!input)
        return bad(t, "input", "Missing required parameter: 'input'.");
    if (sy_jdom_kind(d, input) != 's' && sy_jdom_kind(d, input) != 'a')
        return bad(t, "input", "Invalid type for 'input': expected a string or an array of input items.");
    if (instr && sy_jdom_kind(d, instr) != 's')
        return bad(t, "instructions", "Invalid type for 'instructions': expected a string.");

    sy_jw_obj(w);
    W_KNODE(w, "model", d, model);
    sy_jw_key(w, "messages");
    sy_jw_arr(w);
    if (nonempty_str(d, instr)) {
        open_msg(t, "system");
        W_KNODE(w, "content", d, instr);
        sy_jw_end(w);
    }
    if (prior && pn && (rc = w_prior(t, prior, pn)))
        return rc;
    if (t->items)
        sy_jw_arr(&t->iw);
    if (sy_jdom_kind(d, input) == 's') {
        open_msg(t, "user");
        W_KNODE(w, "content", d, input);
        sy_jw_end(w);
        if (t->items) {
            char b[128];
            int n = snprintf(b, sizeof b, "msg_%s_i0", t->seed);
            sy_jw_obj(&t->iw);
            W_KLIT(&t->iw, "type", "message");
            sy_jw_key(&t->iw, "id");
            sy_jw_str(&t->iw, b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
            W_KLIT(&t->iw, "role", "user");
            sy_jw_key(&t->iw, "content");
            sy_jw_arr(&t->iw);
            sy_jw_obj(&t->iw);
            W_KLIT(&t->iw, "type", "input_text");
            W_KNODE(&t->iw, "text", d, input);
            sy_jw_end(&t->iw);
            sy_jw_end(&t->iw);
            sy_jw_end(&t->iw);
        }
    } else {
        uint32_t i = 0;
        for (uint32_t it = sy_jdom_first(d, input); it; it = sy_jdom_next(d, it), i++) {
            if ((rc = w_item(t, it, i)))
                return rc;
            if (t->items)
                w_input_item(t, it, i);
        }
    }
    if (t->items)
        sy_jw_end(&t->iw);
    close_asst(t);
    if (!t->nmsg)
        return bad(t, "input", "switchyard: the request has no message to send (input has no message with content).");
    sy_jw_end(w);

    uint32_t ntools = 0, tl = sy_jdom_top(d, "tools"), tc = sy_jdom_top(d, "tool_choice");
    if (tl && (rc = tools(t, tl, &ntools)))
        return rc;
    if (tc && (rc = tool_choice(t, tc, ntools > 0)))
        return rc;
    uint32_t ptc = sy_jdom_top(d, "parallel_tool_calls");
    int pv;
    if (ptc && !sy_jdom_bool(d, ptc, &pv))
        return bad(t, "parallel_tool_calls", "Invalid type for 'parallel_tool_calls': expected a boolean.");
    if (ptc && ntools)
        W_KNODE(w, "parallel_tool_calls", d, ptc);
    if ((rc = copy(t, "temperature", "temperature", 'n')) || (rc = copy(t, "top_p", "top_p", 'n')) ||
        (rc = copy(t, "max_output_tokens", "max_tokens", 'i')) || (rc = copy(t, "user", "user", 's')) ||
        (rc = copy(t, "metadata", "metadata", 'o')) || (rc = copy(t, "seed", "seed", 'i')))
        return rc;
    uint32_t tlp = sy_jdom_top(d, "top_logprobs");
    int64_t nlp;
    if (tlp) {
        if (!sy_jdom_i64(d, tlp, &nlp))
            return bad(t, "top_logprobs", "Invalid type for 'top_logprobs': expected an integer.");
        sy_jw_key(w, "logprobs");
        sy_jw_bool(w, 1);
        W_KNODE(w, "top_logprobs", d, tlp);
    }
    if ((rc = text_format(t)) || (rc = reasoning(t)))
        return rc;
    uint32_t st = sy_jdom_top(d, "stream");
    int stream = 0;
    if (st && !sy_jdom_bool(d, st, &stream))
        return bad(t, "stream", "Invalid type for 'stream': expected a boolean.");
    if (st) {
        sy_jw_key(w, "stream");
        sy_jw_bool(w, stream);
    }
    if (stream) {
        sy_jw_key(w, "stream_options");
        W_RAW(w, "{\"include_usage\":true}");
    }
    sy_jw_end(w);
    return 0;
}

int sy_resp_to_openai(const struct sy_jdoc *req, const char *prior, size_t pn, const char *id_seed, struct sy_arena *a,
                      struct sy_buf *out, struct sy_buf *items, struct sy_xerr *e)
{
    struct tx t = {.r = req, .d = req, .param = "input", .lbl = "input", .a = a, .items = items != NULL, .e = e};
    snprintf(t.seed, sizeof t.seed, "%s", id_seed ? id_seed : "00000000000000000000000000000000");
    size_t mark = out->len, imark = items ? items->len : 0;
    sy_jw_init(&t.w, out);
    if (items)
        sy_jw_init(&t.iw, items);
    int rc = translate(&t, prior, pn);
    int werr = t.w.err ? t.w.err : items ? t.iw.err : 0;
    if (!rc && werr) {
        if (werr == SY_ENOSPC) {
            rc = bad(&t, "", "switchyard: request too large to translate");
            e->status = 413;
            rc = SY_ENOSPC;
        } else {
            rc = bad(&t, "", "switchyard: request nesting too deep to translate");
        }
    }
    if (rc) {
        out->len = mark;
        if (out->p)
            out->p[mark] = 0;
        if (items) {
            items->len = imark;
            if (items->p)
                items->p[imark] = 0;
        }
    }
    return rc;
}
