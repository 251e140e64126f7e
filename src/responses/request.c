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
 *       with namespace S (not "functions")     the call named "S__name" (what tools() named it)
 *     custom_tool_call {call_id, name, input}  a call of the same assistant message, arguments
 *                                              the JSON text {"input":<input>}
 *     function_call_output {call_id, output}   {role:tool, tool_call_id, content: "s", or the
 *     custom_tool_call_output (the same)       output parts' texts joined "\n"}; no call_id:
 *                                              no message (as LiteLLM)
 *     reasoning {encrypted_content} that       the next assistant message's thinking_blocks
 *       this gateway wrote (thinking.c)          (the open one when it has no tool calls yet)
 *                                              and reasoning_content (their texts), so an
 *                                              Anthropic turn starts with the signed blocks
 *     reasoning (other); hosted tools' items   dropped (chat has no place for them)
 *       (web_search_call, tool_search_call,
 *       tool_search_output, image_generation_call,
 *       file_search_call, code_interpreter_call;
 *       mcp_list_tools, mcp_call, mcp_approval_*)
 *     item_reference, any other type           400 param "input" (needs a native deployment)
 *   tools [{type:function, name, description,  tools [{type:function, function:{name,
 *           parameters, strict}]               description (default ""), parameters (default
 *                                              {type:object}; "type":"object" added when
 *                                              missing), strict (default false)}}] (LiteLLM)
 *   {type:namespace, name:S, tools:[...]}      each inner function / custom tool as below,
 *                                              named "S__<name>" ("functions", "": the name)
 *   {type:custom, name, description, format}   a function tool of one required string
 *                                              "input"; a format's definition appended to
 *                                              the description ("\n\nFormat:\n```<syntax>\n
 *                                              <definition>\n```", LiteLLM's custom_tools.py)
 *   web_search, web_search_preview (+ dated)   web_search_options {search_context_size,
 *                                              user_location {type:approximate, approximate:
 *                                              {city, country, region, timezone}}} when
 *                                              tx->web_search, else dropped (the last one wins)
 *   tools of any other type (tool_search,      dropped, named in tx->dropped (a header value:
 *     image_generation, file_search, mcp ...)  [A-Za-z0-9_.-] names only, each once)
 *   tool_choice "auto"|"none"|"required"       the same string
 *   tool_choice {type:function, name:X}        {type:function, function:{name:X}}
 *     ({type:function, function:{name:X}})     (the same)
 *   tool_choice {type:auto|none}               "auto" | "none"
 *   tool_choice {type:required|any|tool},      "required" (LiteLLM's _transform_tool_choice)
 *     {type:function} without a name
 *   tool_choice {type:allowed_tools, mode}     mode ("auto" when not a string)
 *   tool_choice {type:custom, name:X}          {type:function, function:{name:X}}
 *   tool_choice {type:<hosted tool>}           "auto" (dropped, or web search chat cannot force)
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
 * apart from the output ids answer.c derives from the same seed; ctc / ctco for
 * custom_tool_call / _output
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
#include "responses/resp_impl.h"
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
    struct sy_resp_tx *tx; /* the caller's options and report (NULL: none) */
    int ws;                /* web_search tools become web_search_options */
    uint32_t wsopt;        /* that tool (0: none) */
    struct sy_buf think;   /* thinking blocks of reasoning items for the next assistant message */
    struct sy_buf rtext;   /* their thinking texts (decoded), its reasoning_content */
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

/* The thinking blocks of the reasoning items before it into the assistant
 * message being written (thinking_blocks first in the Anthropic turn the
 * adapter makes of it); a message of another role drops them. */
static void w_thinking(struct tx *t, int asst)
{
    if (asst && t->think.len && !t->think.err) {
        sy_jw_key(&t->w, "thinking_blocks");
        sy_jw_arr(&t->w);
        sy_jw_raw(&t->w, t->think.p, t->think.len);
        sy_jw_end(&t->w);
        sy_jw_key(&t->w, "reasoning_content");
        sy_jw_str(&t->w, t->rtext.p ? t->rtext.p : "", t->rtext.len);
    }
    sy_buf_reset(&t->think);
    sy_buf_reset(&t->rtext);
}

/* Starts a chat message {"role":role (left open). */
static void open_msg(struct tx *t, const char *role)
{
    close_asst(t);
    sy_jw_obj(&t->w);
    sy_jw_key(&t->w, "role");
    sy_jw_cstr(&t->w, role);
    w_thinking(t, !strcmp(role, "assistant"));
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

/* "name": the call's name, qualified "<namespace>__<name>" when it carries a
 * namespace other than the default one (what tools() named the function). */
static void w_call_name(struct tx *t, uint32_t name, uint32_t ns)
{
    const struct sy_jdoc *d = t->d;
    struct sy_jw *w = &t->w;
    size_t nl = 0, sl = 0;
    const char *n = name ? sy_jdom_view(d, name, t->a, &nl) : "";
    const char *sp = sy_jdom_kind(d, ns) == 's' ? sy_jdom_view(d, ns, t->a, &sl) : NULL;
    sy_jw_key(w, "name");
    if ((!sp || sy__resp_default_ns(sp, sl)) && nl <= SY__RESP_MAX_TOOL_NAME) {
        if (name)
            sy_jw_node(w, d, name);
        else
            sy_jw_str(w, "", 0);
        return;
    }
    size_t ql;
    const char *q = sy__resp_chat_name(sp, sl, n, nl, t->a, &ql);
    sy_jw_str(w, q, ql);
}

/* function_call, and custom_tool_call (custom: its raw input as the
 * arguments {"input":...} of the function request.c made of the tool). */
static int w_call(struct tx *t, uint32_t it, uint32_t i, int custom)
{
    const struct sy_jdoc *d = t->d;
    struct sy_jw *w = &t->w;
    uint32_t cid = sy_jdom_member(d, it, "call_id"), id = sy_jdom_member(d, it, "id"),
             name = sy_jdom_member(d, it, "name"), args = sy_jdom_member(d, it, "arguments"),
             ns = sy_jdom_member(d, it, "namespace"), input = sy_jdom_member(d, it, "input");
    if (cid && sy_jdom_kind(d, cid) != 's')
        return bad(t, t->param, "Invalid type for '%s[%u].call_id': expected a string.", t->lbl, i);
    if (name && sy_jdom_kind(d, name) != 's')
        return bad(t, t->param, "Invalid type for '%s[%u].name': expected a string.", t->lbl, i);
    if (ns && sy_jdom_kind(d, ns) != 's')
        return bad(t, t->param, "Invalid type for '%s[%u].namespace': expected a string.", t->lbl, i);
    if (custom && input && sy_jdom_kind(d, input) != 's')
        return bad(t, t->param, "Invalid type for '%s[%u].input': expected a string.", t->lbl, i);
    if (!t->asst) {
        sy_jw_obj(w);
        W_KLIT(w, "role", "assistant");
        w_thinking(t, 1);
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
    w_call_name(t, name, ns);
    sy_jw_key(w, "arguments");
    if (custom) { /* {"input":<the input string>} as a JSON string */
        size_t rl = 0;
        const char *raw = input ? sy_jdom_raw(d, input, &rl) : "\"\"";
        if (!input)
            rl = 2;
        char *o = sy_arena_alloc(t->a, rl + 11);
        memcpy(o, "{\"input\":", 9);
        memcpy(o + 9, raw, rl);
        o[9 + rl] = '}';
        sy_jw_str(w, o, rl + 10);
    } else {
        sy_jw_node_as_str(w, d, args); /* 0 (absent) writes "" */
    }
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

/* A reasoning item: its encrypted_content, when this gateway wrote it
 * (thinking.c), gives the next assistant message its thinking blocks (the
 * open one when it has no tool calls yet); anything else (OpenAI's own
 * encrypted_content, null, none) is dropped: chat has no place for it. */
static int w_reasoning(struct tx *t, uint32_t it)
{
    const struct sy_jdoc *d = t->d;
    uint32_t ec = sy_jdom_member(d, it, "encrypted_content");
    if (sy_jdom_kind(d, ec) != 's' || d->n[ec].esc)
        return 0; /* ours is base64: never escaped */
    size_t n, bn;
    const char *s = sy_jdom_view(d, ec, t->a, &n);
    size_t tmark = t->rtext.len;
    const char *blocks = sy__resp_think_read(s, n, t->a, &bn, &t->rtext);
    if (!blocks) {
        t->rtext.len = tmark;
        return 0;
    }
    if (t->think.len)
        sy_buf_append(&t->think, ",", 1);
    sy_buf_append(&t->think, blocks, bn);
    if (t->asst == 1)
        w_thinking(t, 1);
    return 0;
}

/* Items of hosted tools (run by OpenAI, never by a translated deployment):
 * dropped from the history. */
static const char *const hosted_calls[] = {"web_search_call", "tool_search_call", "tool_search_output",
                                           "image_generation_call", "file_search_call", "code_interpreter_call",
                                           /* the MCP items switchyard's tool loop adds (stages/mcp_tools.c) */
                                           "mcp_list_tools", "mcp_call", "mcp_approval_request",
                                           "mcp_approval_response"};

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
    if (sy_jdom_str_eq(d, type, "function_call") || sy_jdom_str_eq(d, type, "custom_tool_call"))
        return w_call(t, it, i, sy_jdom_str_eq(d, type, "custom_tool_call"));
    if (sy_jdom_str_eq(d, type, "function_call_output") || sy_jdom_str_eq(d, type, "custom_tool_call_output"))
        return w_call_output(t, it, i);
    if (sy_jdom_str_eq(d, type, "reasoning"))
        return w_reasoning(t, it);
    for (size_t k = 0; k < sizeof hosted_calls / sizeof *hosted_calls; k++)
        if (sy_jdom_str_eq(d, type, hosted_calls[k]))
            return 0; /* a hosted tool's work: nothing a chat model can be shown */
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
    const char *pre = msg                                                  ? "msg"
                      : sy_jdom_str_eq(d, type, "function_call")           ? "fc"
                      : sy_jdom_str_eq(d, type, "function_call_output")    ? "fco"
                      : sy_jdom_str_eq(d, type, "custom_tool_call")        ? "ctc"
                      : sy_jdom_str_eq(d, type, "custom_tool_call_output") ? "ctco"
                      : sy_jdom_str_eq(d, type, "reasoning")               ? "rs"
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

/* A web search tool: web_search, web_search_preview and their dated names
 * (web_search_2025_08_26, web_search_preview_2025_03_11); written without
 * escapes (an escaped one is another hosted tool: dropped). */
static int is_web_search(const struct sy_jdoc *d, uint32_t type)
{
    size_t l;
    const char *s = sy_jdom_kind(d, type) == 's' && !d->n[type].esc ? sy_jdom_view(d, type, NULL, &l) : NULL;
    if (!s || l < 10 || memcmp(s, "web_search", 10))
        return 0;
    s += 10, l -= 10;
    if (l >= 8 && !memcmp(s, "_preview", 8))
        s += 8, l -= 8;
    return l == 0 || (l >= 2 && s[0] == '_' && s[1] >= '0' && s[1] <= '9');
}

int sy_resp_wants_web_search(const struct sy_jdoc *req)
{
    uint32_t tl = req && req->count && req->n[0].type == 'o' ? sy_jdom_top(req, "tools") : 0;
    if (sy_jdom_kind(req, tl) != 'a')
        return 0;
    for (uint32_t x = sy_jdom_first(req, tl); x; x = sy_jdom_next(req, x))
        if (sy_jdom_kind(req, x) == 'o' && is_web_search(req, sy_jdom_member(req, x, "type")))
            return 1;
    return 0;
}

/* Adds hosted tool type node `type` to the report of dropped tools (once). */
static void dropped(struct tx *t, uint32_t type)
{
    if (!t->tx)
        return;
    size_t l;
    const char *s = sy_jdom_view(t->r, type, t->a, &l);
    char *b = t->tx->dropped;
    size_t have = strlen(b);
    for (const char *p = b; *p;) { /* already listed? */
        const char *c = strchr(p, ',');
        size_t pl = c ? (size_t)(c - p) : strlen(p);
        if (pl == l && !memcmp(p, s, l))
            return;
        p += pl + (c != NULL);
    }
    for (size_t i = 0; i < l; i++) /* a header value: [A-Za-z0-9_.-] only */
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '_' || s[i] == '-' || s[i] == '.'))
            return;
    if (!l || have + (have > 0) + l >= sizeof t->tx->dropped)
        return;
    if (have)
        b[have++] = ',';
    memcpy(b + have, s, l);
    b[have + l] = 0;
}

/* One function tool x (i: its index in tools, j: in its namespace's tools, or
 * -1) -> a chat tool named "<ns>__<name>" (ns NULL or default: the name). A
 * custom tool becomes a function of one required string "input", its format's
 * grammar appended to the description (LiteLLM's custom_tools.py). */
static int w_tool(struct tx *t, uint32_t x, uint32_t i, int j, const char *ns, size_t nsl, int custom)
{
    const struct sy_jdoc *d = t->r;
    struct sy_jw *w = &t->w;
    char at[48];
    if (j >= 0)
        snprintf(at, sizeof at, "tools[%u].tools[%d]", i, j);
    else
        snprintf(at, sizeof at, "tools[%u]", i);
    uint32_t name = sy_jdom_member(d, x, "name"), desc = sy_jdom_member(d, x, "description"),
             par = sy_jdom_member(d, x, "parameters"), strict = sy_jdom_member(d, x, "strict"),
             fmt = sy_jdom_member(d, x, "format");
    int sv = 0;
    if (sy_jdom_kind(d, name) != 's')
        return bad(t, "tools", "Missing required parameter: '%s.name'.", at);
    if (desc && sy_jdom_kind(d, desc) != 's')
        return bad(t, "tools", "Invalid type for '%s.description': expected a string.", at);
    if (!custom && par && sy_jdom_kind(d, par) != 'o')
        return bad(t, "tools", "Invalid type for '%s.parameters': expected an object.", at);
    if (!custom && strict && !sy_jdom_bool(d, strict, &sv))
        return bad(t, "tools", "Invalid type for '%s.strict': expected a boolean.", at);
    if (custom && fmt && sy_jdom_kind(d, fmt) != 'o')
        return bad(t, "tools", "Invalid type for '%s.format': expected an object.", at);
    sy_jw_obj(w);
    W_KLIT(w, "type", "function");
    sy_jw_key(w, "function");
    sy_jw_obj(w);
    size_t nl, ql;
    const char *n = sy_jdom_view(d, name, t->a, &nl);
    if ((ns && !sy__resp_default_ns(ns, nsl)) || nl > SY__RESP_MAX_TOOL_NAME) {
        const char *q = sy__resp_chat_name(ns, nsl, n, nl, t->a, &ql);
        sy_jw_key(w, "name");
        sy_jw_str(w, q, ql);
    } else {
        W_KNODE(w, "name", d, name);
    }
    sy_jw_key(w, "description");
    size_t dl = 0, sl = 0, fl = 0;
    const char *ds = desc ? sy_jdom_view(d, desc, t->a, &dl) : "";
    uint32_t syn = sy_jdom_member(d, fmt, "syntax"), def = sy_jdom_member(d, fmt, "definition");
    const char *defs = custom && sy_jdom_kind(d, def) == 's' ? sy_jdom_view(d, def, t->a, &fl) : NULL;
    const char *syns = sy_jdom_kind(d, syn) == 's' ? sy_jdom_view(d, syn, t->a, &sl) : "";
    if (defs && fl) { /* "<description>\n\nFormat:\n```<syntax>\n<definition>\n```" */
        struct sy_buf b;
        sy_buf_init(&b, (size_t)1 << 30);
        sy_buf_append(&b, ds, dl);
        SY_BUF_LIT(&b, "\n\nFormat:\n```");
        sy_buf_append(&b, syns, sl);
        SY_BUF_LIT(&b, "\n");
        sy_buf_append(&b, defs, fl);
        SY_BUF_LIT(&b, "\n```");
        sy_jw_str(w, b.p ? b.p : "", b.len);
        sy_buf_free(&b);
    } else if (desc) {
        sy_jw_node(w, d, desc);
    } else {
        sy_jw_str(w, "", 0);
    }
    sy_jw_key(w, "parameters");
    if (custom) {
        char *pd = sy_arena_alloc(t->a, nl + 64);
        int pl = snprintf(pd, nl + 64, "The %.*s input, in the format described above", (int)nl, n);
        sy_jw_obj(w);
        W_KLIT(w, "type", "object");
        sy_jw_key(w, "properties");
        sy_jw_obj(w);
        sy_jw_key(w, "input");
        sy_jw_obj(w);
        W_KLIT(w, "type", "string");
        sy_jw_key(w, "description");
        sy_jw_str(w, pd, pl > 0 ? (size_t)pl : 0);
        sy_jw_end(w);
        sy_jw_end(w);
        sy_jw_key(w, "required");
        W_RAW(w, "[\"input\"]");
        sy_jw_end(w);
    } else if (!par || !d->n[par].kids) {
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
    return 0;
}

/* "tools":[ before the first chat tool (n: written so far). */
static void open_tools(struct tx *t, uint32_t n)
{
    if (!n) {
        sy_jw_key(&t->w, "tools");
        sy_jw_arr(&t->w);
    }
}

/* tools -> chat tools; *n: function tools written. */
static int tools(struct tx *t, uint32_t tl, uint32_t *n)
{
    const struct sy_jdoc *d = t->r;
    struct sy_jw *w = &t->w;
    uint32_t i = 0;
    int rc;
    *n = 0;
    if (sy_jdom_kind(d, tl) != 'a')
        return bad(t, "tools", "Invalid type for 'tools': expected an array of tools.");
    for (uint32_t x = sy_jdom_first(d, tl); x; x = sy_jdom_next(d, x), i++) {
        if (sy_jdom_kind(d, x) != 'o')
            return bad(t, "tools", "Invalid type for 'tools[%u]': expected an object.", i);
        uint32_t type = sy_jdom_member(d, x, "type");
        if (sy_jdom_kind(d, type) != 's')
            return bad(t, "tools", "Missing required parameter: 'tools[%u].type'.", i);
        int fn = sy_jdom_str_eq(d, type, "function"), custom = sy_jdom_str_eq(d, type, "custom");
        int ns = sy_jdom_str_eq(d, type, "namespace");
        if (!fn && !custom && !ns) { /* a hosted tool: web search maps, the rest is dropped */
            if (is_web_search(d, type)) {
                if (t->tx)
                    t->tx->had_web_search = 1;
                if (t->ws) {
                    t->wsopt = x; /* (the last one, as LiteLLM) */
                    continue;
                }
            }
            dropped(t, type);
            continue;
        }
        if (!ns) {
            open_tools(t, *n);
            if ((rc = w_tool(t, x, i, -1, NULL, 0, custom)))
                return rc;
            (*n)++;
            continue;
        }
        uint32_t nn = sy_jdom_member(d, x, "name"), inner = sy_jdom_member(d, x, "tools");
        if (sy_jdom_kind(d, nn) != 's')
            return bad(t, "tools", "Missing required parameter: 'tools[%u].name'.", i);
        if (sy_jdom_kind(d, inner) != 'a')
            return bad(t, "tools", "Invalid type for 'tools[%u].tools': expected an array of tools.", i);
        size_t nsl;
        const char *nsn = sy_jdom_view(d, nn, t->a, &nsl);
        int j = 0;
        for (uint32_t y = sy_jdom_first(d, inner); y; y = sy_jdom_next(d, y), j++) {
            uint32_t it = sy_jdom_kind(d, y) == 'o' ? sy_jdom_member(d, y, "type") : 0;
            int ic = sy_jdom_str_eq(d, it, "custom");
            if (!ic && !sy_jdom_str_eq(d, it, "function"))
                return bad(t, "tools", "Invalid value for 'tools[%u].tools[%d].type': expected 'function' or 'custom'.",
                           i, j);
            open_tools(t, *n);
            if ((rc = w_tool(t, y, i, j, nsn, nsl, ic)))
                return rc;
            (*n)++;
        }
    }
    if (*n)
        sy_jw_end(w);
    return 0;
}

/* The web_search tool x -> chat's web_search_options {search_context_size,
 * user_location {type:"approximate", approximate:{city, country, region,
 * timezone}}} (a user_location already in chat's shape is copied). */
static void web_search_options(struct tx *t, uint32_t x)
{
    const struct sy_jdoc *d = t->r;
    struct sy_jw *w = &t->w;
    uint32_t sz = sy_jdom_member(d, x, "search_context_size"), ul = sy_jdom_member(d, x, "user_location");
    sy_jw_key(w, "web_search_options");
    sy_jw_obj(w);
    if (sy_jdom_kind(d, sz) == 's')
        W_KNODE(w, "search_context_size", d, sz);
    if (sy_jdom_kind(d, ul) == 'o') {
        sy_jw_key(w, "user_location");
        if (sy_jdom_kind(d, sy_jdom_member(d, ul, "approximate")) == 'o') {
            sy_jw_node(w, d, ul);
        } else {
            static const char *const keys[] = {"city", "country", "region", "timezone"};
            sy_jw_obj(w);
            W_KLIT(w, "type", "approximate");
            sy_jw_key(w, "approximate");
            sy_jw_obj(w);
            for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
                uint32_t v = sy_jdom_member(d, ul, keys[k]);
                if (sy_jdom_kind(d, v) == 's')
                    W_KNODE(w, keys[k], d, v);
            }
            sy_jw_end(w);
            sy_jw_end(w);
        }
    }
    sy_jw_end(w);
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
    if ((sy_jdom_str_eq(d, type, "function") || sy_jdom_str_eq(d, type, "custom")) &&
        (nonempty_str(d, name) || nonempty_str(d, fname))) {
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
    if (write) { /* a hosted tool (dropped, or web search, which chat cannot force): the model decides */
        sy_jw_key(w, "tool_choice");
        sy_jw_str(w, "auto", 4);
    }
    return 0;
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
    if (t->wsopt)
        web_search_options(t, t->wsopt);
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
    return sy_resp_to_chat(req, prior, pn, id_seed, NULL, a, out, items, e);
}

int sy_resp_to_chat(const struct sy_jdoc *req, const char *prior, size_t pn, const char *id_seed, struct sy_resp_tx *tx,
                    struct sy_arena *a, struct sy_buf *out, struct sy_buf *items, struct sy_xerr *e)
{
    struct tx t = {.r = req,
                   .d = req,
                   .param = "input",
                   .lbl = "input",
                   .a = a,
                   .items = items != NULL,
                   .e = e,
                   .tx = tx,
                   .ws = tx && tx->web_search};
    if (tx) {
        tx->had_web_search = 0;
        tx->dropped[0] = 0;
    }
    snprintf(t.seed, sizeof t.seed, "%s", id_seed ? id_seed : "00000000000000000000000000000000");
    size_t mark = out->len, imark = items ? items->len : 0;
    sy_jw_init(&t.w, out);
    if (items)
        sy_jw_init(&t.iw, items);
    sy_buf_init(&t.think, (size_t)64 << 20);
    sy_buf_init(&t.rtext, (size_t)64 << 20);
    int rc = translate(&t, prior, pn);
    sy_buf_free(&t.think);
    sy_buf_free(&t.rtext);
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
