/* messages.c - Anthropic Messages (POST /v1/messages) <-> OpenAI chat, for
 * models served by a non-Anthropic deployment (messages.h), and the messages
 * dialect's table (dialect.h) at the end. After LiteLLM's
 * LiteLLMAnthropicMessagesAdapter and AnthropicStreamWrapper; the Anthropic
 * side is what the official SDKs accept.
 *
 * Request, Anthropic -> OpenAI (sy_msg_to_openai):
 *
 *   Anthropic                                  OpenAI chat.completions
 *   model                                      model (as given)
 *   system: "s" | [{type:text,text}..]         messages[0] {role:system, content:"s"} (blocks joined "\n")
 *   messages[i] user, content "s"              {role:user, content:"s"}
 *     user blocks: text, image, document       one {role:user, content} after the tool messages:
 *                                              "s" when all text (joined "\n"), else parts
 *                                              [{type:text,text} | {type:image_url,image_url:{url}}]
 *       image/document source base64           url "data:<media_type>;base64,<data>" (media_type
 *                                              defaults to image/jpeg)
 *       image/document source url              url as given
 *       document source text                   a text part; other sources dropped
 *     tool_result {tool_use_id, content,       {role:tool, tool_call_id, content:"s"}, first, in
 *                  is_error}                   order: a string kept, text blocks joined "\n",
 *                                              images moved to the user message that follows;
 *                                              is_error has no OpenAI field (the text says it)
 *   messages[i] assistant, content "s"         {role:assistant, content:"s"}
 *     text blocks                              content: joined "\n" (null when none)
 *     tool_use {id, name, input}               tool_calls [{id, type:function, function:{name,
 *                                              arguments: input as JSON text}}]
 *     thinking, redacted_thinking              dropped (no OpenAI request field)
 *   messages[i] system                         {role:system, content: text joined}
 *   other block types, empty texts             dropped (search_result, server tool blocks ...)
 *   tools [{name, description, input_schema}]  tools [{type:function, function:{name,
 *                                              description, parameters}}]; type absent or
 *                                              "custom" only: server and Anthropic-defined tools
 *                                              (web_search_*, bash_*, computer_* ...) -> 400
 *   tool names over 64 characters              first 55 characters "_" 8 hex of sha256(name)
 *                                              (LiteLLM's truncate_tool_name; given back in answers)
 *   tool_choice {type:auto|any|tool|none}      "auto" | "required" | {type:function,
 *                                              function:{name}} | "none" (only with tools)
 *   tool_choice.disable_parallel_tool_use      parallel_tool_calls: false
 *   max_tokens, temperature, top_p, top_k      same names, values copied
 *   stop_sequences                             stop
 *   metadata.user_id                           user
 *   thinking {type:enabled, budget_tokens:B}   reasoning_effort: B >= 4096 high, >= 2048 medium,
 *                                              >= 1024 low, else minimal
 *   thinking {type:adaptive}                   reasoning_effort: output_config.effort or medium
 *   thinking {type:disabled}                   (nothing)
 *   output_format | output_config.format       response_format {type:json_schema, json_schema:
 *     {type:json_schema, schema: {..}}         {name:"structured_output", schema, strict:true}},
 *                                              every object schema with properties gets
 *                                              additionalProperties:false and all keys required
 *   stream                                     stream (+ stream_options {include_usage:true})
 *   anything else                              ignored
 *
 * Response, OpenAI -> Anthropic (sy_msg_from_openai; the stream below says the
 * same thing event by event):
 *
 *   OpenAI chat.completion                     Anthropic Message
 *   (caller's msg_id, else id)                 id
 *   (caller's model, else model)               model
 *   message.thinking_blocks                    content {type:thinking, thinking, signature} /
 *                                              {type:redacted_thinking, data}, first
 *   else message.reasoning_content|reasoning   content {type:thinking, thinking, signature:""}
 *   message.content (non-empty)                content {type:text, text}
 *   message.refusal (no content)               content {type:text, text}, stop_reason refusal
 *   message.tool_calls[]                       content {type:tool_use, id, name, input}: input is
 *                                              the parsed arguments, {} when empty or not a JSON
 *                                              object; id with characters outside [A-Za-z0-9_-]
 *                                              replaced by "_" (the SDKs send it back)
 *   finish_reason stop | length |              stop_reason end_turn | max_tokens | tool_use |
 *     tool_calls, function_call |              refusal | end_turn; end_turn becomes tool_use
 *     content_filter | other                   when tool calls were returned
 *   usage.prompt_tokens - cache reads/writes   usage.input_tokens
 *   usage.cache_read_input_tokens, else        usage.cache_read_input_tokens
 *     prompt_tokens_details.cached_tokens
 *   usage.cache_creation_input_tokens, else    usage.cache_creation_input_tokens
 *     prompt_tokens_details.cache_creation_tokens|cache_write_tokens
 *   usage.completion_tokens                    usage.output_tokens
 *
 * Stream, OpenAI chunks -> Anthropic events ("event: T\ndata: {..}\n\n"):
 *
 *   first payload            message_start {message: id, model, content [], stop_reason null,
 *                            usage all 0}
 *   delta.reasoning_content  thinking block: content_block_start {type:thinking, thinking:"",
 *     | reasoning            signature:""}, then thinking_delta per chunk
 *   delta.thinking_blocks    signature_delta for a signature
 *   delta.content, refusal   text block: content_block_start {type:text, text:""}, text_delta
 *   delta.tool_calls[k]      a new tool_use block when the call's index or id is new:
 *                            content_block_start {type:tool_use, id, name, input:{}}; every
 *                            arguments piece an input_json_delta {partial_json}
 *   (the kind changes)       content_block_stop of the open block, start of the next; indexes
 *                            0, 1, 2 ... one block open at a time
 *   finish_reason            content_block_stop; held until the usage arrives
 *   usage (choices: [])      with the finish_reason seen: message_delta {delta:{stop_reason,
 *                            stop_sequence:null}, usage:{input_tokens, cache_creation_input_tokens,
 *                            cache_read_input_tokens, output_tokens}}, message_stop
 *   [DONE], end of stream    whatever of the above is missing (stop_reason end_turn)
 *   {"error":{...}}          event: error {type:error, error:{type, message}}; nothing after
 *
 * Invariants: output is always valid JSON (strings are escaped, raw copies
 * are DOM nodes the strict parser accepted); event order is message_start,
 * blocks started before their deltas and stopped once, message_delta then
 * message_stop last (or a single error event ends it); no memory is kept
 * between stream calls.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "core/errors.h"
#include "dialects/dialect.h"
#include "dialects/messages.h"

/* ---- small helpers ------------------------------------------------------ */

#define OAI_MAX_TOOL_NAME 64
#define TOOL_NAME_PREFIX  55 /* 64 - 8 hex - "_" */
#define NAME_BUF          (4 * TOOL_NAME_PREFIX + 16)

enum { K_NONE = 0, K_TEXT = 1, K_THINK = 2, K_TOOL = 3 };

/* Raw inside of string node i (escaped JSON text without the quotes). */
static const char *inner(const struct sy_jdoc *d, uint32_t i, size_t *n)
{
    *n = d->n[i].len - 2;
    return d->src + d->n[i].off + 1;
}

/* String node i copied, or "" when it is not a string. */
static void w_str_or_empty(struct sy_jw *w, const struct sy_jdoc *d, uint32_t i)
{
    if (sy_jdom_kind(d, i) == 's')
        sy_jw_node(w, d, i);
    else
        sy_jw_str(w, "", 0);
}

#define W_RAW(w, lit) sy_jw_raw((w), "" lit, sizeof(lit) - 1)
/* "key":"literal" and "key":<node i of d, raw> */
#define W_KLIT(w, k, lit)   (sy_jw_key((w), (k)), sy_jw_str((w), "" lit, sizeof(lit) - 1))
#define W_KNODE(w, k, d, i) (sy_jw_key((w), (k)), sy_jw_node((w), (d), (i)))

/* A string node with at least one character. */
static int nonempty_str(const struct sy_jdoc *d, uint32_t i)
{
    return sy_jdom_kind(d, i) == 's' && d->n[i].len > 2;
}

/* Number of code points of UTF-8 s[0..n). */
static size_t cp_count(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

/* Byte length of the first k code points of s[0..n). */
static size_t cp_prefix(const char *s, size_t n, size_t k)
{
    size_t i = 0, c = 0;
    while (i < n) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (c == k)
                break;
            c++;
        }
        i++;
    }
    return i;
}

/* LiteLLM's truncate_tool_name for a name over 64 code points: its first 55,
 * "_" and the first 8 hex digits of sha256(name), written into t[NAME_BUF]. */
static size_t trunc_name(const char *s, size_t n, char *t)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    static const char hex[] = "0123456789abcdef";
    EVP_Digest(s, n, md, &mdlen, EVP_sha256(), NULL);
    size_t p = cp_prefix(s, n, TOOL_NAME_PREFIX);
    memcpy(t, s, p);
    t[p++] = '_';
    for (int i = 0; i < 4; i++) {
        t[p++] = hex[md[i] >> 4];
        t[p++] = hex[md[i] & 15];
    }
    return p;
}

/* A name LiteLLM counts as missing: absent, not a string, or only whitespace. */
static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
            return 0;
    return 1;
}

/* The upstream's tool name back as the client declared it: a 64-character
 * truncated name is looked up among the request's tools. */
static void restore_name(const struct sy_jdoc *req, struct sy_arena *a, const char **name, size_t *nl)
{
    if (!req || *nl != OAI_MAX_TOOL_NAME || cp_count(*name, *nl) != OAI_MAX_TOOL_NAME)
        return;
    uint32_t tools = sy_jdom_top(req, "tools");
    if (sy_jdom_kind(req, tools) != 'a')
        return;
    for (uint32_t t = sy_jdom_first(req, tools); t; t = sy_jdom_next(req, t)) {
        size_t l;
        const char *s = sy_jdom_str(req, sy_jdom_at(req, t, "name"), a, &l);
        if (!s || cp_count(s, l) <= OAI_MAX_TOOL_NAME)
            continue;
        char buf[NAME_BUF];
        size_t bl = trunc_name(s, l, buf);
        if (bl == *nl && memcmp(buf, *name, bl) == 0) {
            *name = s;
            *nl = l;
            return;
        }
    }
}

/* A tool_use id the Anthropic API accepts back: [A-Za-z0-9_-]+, each other
 * character (code point) replaced by "_" (LiteLLM's normalize_anthropic_tool_use_id). */
static void w_tool_id(struct sy_jw *w, const char *s, size_t n, struct sy_arena *a)
{
    char *o = sy_arena_alloc(a, n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-')
            o[k++] = (char)c;
        else if ((c & 0xC0) != 0x80)
            o[k++] = '_';
    }
    sy_jw_str(w, o, k);
}

/* ---- request: Anthropic -> OpenAI ---------------------------------------- */

struct tx {
    const struct sy_jdoc *d;
    struct sy_arena *a;
    struct sy_jw w;
    struct sy_xerr *e;
};

static int bad(struct tx *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct tx *t, const char *fmt, ...)
{
    struct sy_xerr *e = t->e;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    e->status = 400;
    snprintf(e->type, sizeof e->type, "invalid_request_error");
    e->param[0] = 0;
    e->cls[0] = 0;
    return SY_EINVAL;
}

/* The text node of a text block, or 0. */
static uint32_t text_of(const struct sy_jdoc *d, uint32_t blk)
{
    uint32_t s = sy_jdom_at(d, blk, "text");
    return sy_jdom_kind(d, s) == 's' ? s : 0;
}

/* Writes the image_url part's url for an image/document source; 0 when the
 * source has no usable image (LiteLLM's _translate_anthropic_image_to_openai). */
static int w_source_url(struct tx *t, uint32_t src)
{
    const struct sy_jdoc *d = t->d;
    uint32_t type = sy_jdom_at(d, src, "type");
    if (sy_jdom_str_eq(d, type, "base64")) {
        uint32_t mt = sy_jdom_at(d, src, "media_type"), data = sy_jdom_at(d, src, "data");
        if (!nonempty_str(d, data))
            return 0;
        size_t ml = 10, dl;
        const char *m = "image/jpeg", *dp = inner(d, data, &dl);
        if (sy_jdom_kind(d, mt) == 's')
            m = inner(d, mt, &ml);
        char *b = sy_arena_alloc(t->a, ml + dl + 16), *p = b;
        memcpy(p, "\"data:", 6), p += 6;
        memcpy(p, m, ml), p += ml;
        memcpy(p, ";base64,", 8), p += 8;
        memcpy(p, dp, dl), p += dl;
        *p++ = '"';
        sy_jw_key(&t->w, "url");
        sy_jw_raw(&t->w, b, (size_t)(p - b));
        return 1;
    }
    if (sy_jdom_str_eq(d, type, "url")) {
        uint32_t u = sy_jdom_at(d, src, "url");
        sy_jw_key(&t->w, "url");
        if (sy_jdom_kind(d, u) == 's')
            sy_jw_node(&t->w, d, u);
        else
            sy_jw_str(&t->w, "", 0);
        return 1;
    }
    return 0;
}

/* Usable image source of an image/document block (0: none). */
static uint32_t image_src(const struct sy_jdoc *d, uint32_t blk)
{
    uint32_t src = sy_jdom_at(d, blk, "source");
    if (sy_jdom_kind(d, src) != 'o')
        return 0;
    uint32_t type = sy_jdom_at(d, src, "type");
    if (sy_jdom_str_eq(d, type, "base64"))
        return nonempty_str(d, sy_jdom_at(d, src, "data")) ? src : 0;
    return sy_jdom_str_eq(d, type, "url") ? src : 0;
}

/* A user-side part: 't' text (string node) or 'i' image (source object node). */
struct part {
    char kind;
    uint32_t node;
};

/* Collect the parts of one content block of a user message into p[*np]. */
static void user_parts(const struct sy_jdoc *d, uint32_t blk, struct part *p, size_t *np, size_t cap)
{
    uint32_t type = sy_jdom_at(d, blk, "type"), n;
    if (*np >= cap)
        return;
    if (sy_jdom_str_eq(d, type, "text")) {
        if (nonempty_str(d, n = text_of(d, blk)))
            p[(*np)++] = (struct part){'t', n};
    } else if (sy_jdom_str_eq(d, type, "image")) {
        if ((n = image_src(d, blk)))
            p[(*np)++] = (struct part){'i', n};
    } else if (sy_jdom_str_eq(d, type, "document")) {
        uint32_t src = sy_jdom_at(d, blk, "source");
        if (sy_jdom_str_eq(d, sy_jdom_at(d, src, "type"), "text")) {
            uint32_t data = sy_jdom_at(d, src, "data");
            if (nonempty_str(d, data))
                p[(*np)++] = (struct part){'t', data};
        } else if ((n = image_src(d, blk))) {
            p[(*np)++] = (struct part){'i', n};
        }
    }
}

/* content: "s" when every part is text (joined "\n"), else a parts array. */
static void w_parts(struct tx *t, const struct part *p, size_t np)
{
    size_t nt = 0;
    for (size_t i = 0; i < np; i++)
        nt += p[i].kind == 't';
    sy_jw_key(&t->w, "content");
    if (nt == np) {
        uint32_t *nodes = sy_arena_alloc(t->a, np * sizeof *nodes);
        for (size_t i = 0; i < np; i++)
            nodes[i] = p[i].node;
        sy_jw_join(&t->w, t->d, nodes, np, "\\n", t->a);
        return;
    }
    sy_jw_arr(&t->w);
    for (size_t i = 0; i < np; i++) {
        sy_jw_obj(&t->w);
        if (p[i].kind == 't') {
            W_KLIT(&t->w, "type", "text");
            W_KNODE(&t->w, "text", t->d, p[i].node);
        } else {
            W_KLIT(&t->w, "type", "image_url");
            sy_jw_key(&t->w, "image_url");
            sy_jw_obj(&t->w);
            w_source_url(t, p[i].node);
            sy_jw_end(&t->w);
        }
        sy_jw_end(&t->w);
    }
    sy_jw_end(&t->w);
}

/* The non-empty text node of a flattened content item (see w_flat_text), or 0. */
static uint32_t flat_item(const struct sy_jdoc *d, uint32_t b)
{
    uint32_t type = sy_jdom_at(d, b, "type"), src, data = 0;
    if (sy_jdom_kind(d, b) == 's') /* LiteLLM accepts bare strings here */
        data = b;
    else if (sy_jdom_str_eq(d, type, "text"))
        data = text_of(d, b);
    else if (sy_jdom_str_eq(d, type, "document") && (src = sy_jdom_at(d, b, "source")) &&
             sy_jdom_str_eq(d, sy_jdom_at(d, src, "type"), "text"))
        data = sy_jdom_at(d, src, "data");
    return nonempty_str(d, data) ? data : 0;
}

/* An array with at least one text item. */
static int has_text(const struct sy_jdoc *d, uint32_t c)
{
    for (uint32_t b = sy_jdom_first(d, c); b; b = sy_jdom_next(d, b))
        if (flat_item(d, b))
            return 1;
    return 0;
}

/* Text of a content value (string, or blocks: their text joined "\n") as one
 * JSON string; images are skipped. ptr: error path. */
static int w_flat_text(struct tx *t, uint32_t c, const char *ptr)
{
    const struct sy_jdoc *d = t->d;
    char k = sy_jdom_kind(d, c);
    if (k == 's') {
        sy_jw_node(&t->w, d, c);
        return 0;
    }
    if (k != 'a') {
        if (k)
            return bad(t, "%s: Input should be a valid list", ptr);
        sy_jw_str(&t->w, "", 0);
        return 0;
    }
    uint32_t *nodes = sy_arena_alloc(t->a, (d->n[c].kids + 1) * sizeof *nodes);
    size_t nn = 0;
    for (uint32_t b = sy_jdom_first(d, c); b; b = sy_jdom_next(d, b))
        if ((nodes[nn] = flat_item(d, b)))
            nn++;
    if (nn)
        sy_jw_join(&t->w, d, nodes, nn, "\\n", t->a);
    else
        sy_jw_str(&t->w, "", 0);
    return 0;
}

/* A tool name as OpenAI gets it: blank -> fallback, over 64 -> truncated. */
static void w_oai_tool_name(struct tx *t, uint32_t name, const char *fallback)
{
    size_t l = 0;
    const char *s = sy_jdom_str(t->d, name, t->a, &l);
    if (!s || blank(s, l)) {
        sy_jw_cstr(&t->w, fallback);
        return;
    }
    if (cp_count(s, l) <= OAI_MAX_TOOL_NAME) {
        sy_jw_node(&t->w, t->d, name); /* unchanged: copy the raw text */
        return;
    }
    char buf[NAME_BUF];
    sy_jw_str(&t->w, buf, trunc_name(s, l, buf));
}

static int user_msg(struct tx *t, uint32_t c, uint32_t mi)
{
    const struct sy_jdoc *d = t->d;
    /* 1. tool_result blocks become tool messages, in order, first (they must
     *    follow the assistant's tool_calls). */
    uint32_t bi = 0;
    for (uint32_t b = sy_jdom_first(d, c); b; b = sy_jdom_next(d, b), bi++) {
        if (sy_jdom_kind(d, b) != 'o')
            return bad(t, "messages.%u.content.%u: Input should be a valid dictionary", mi, bi);
        if (!sy_jdom_str_eq(d, sy_jdom_at(d, b, "type"), "tool_result"))
            continue;
        char ptr[64];
        snprintf(ptr, sizeof ptr, "messages.%u.content.%u.content", mi, bi);
        uint32_t id = sy_jdom_at(d, b, "tool_use_id");
        sy_jw_obj(&t->w);
        W_KLIT(&t->w, "role", "tool");
        sy_jw_key(&t->w, "tool_call_id");
        if (sy_jdom_kind(d, id) == 's')
            sy_jw_node(&t->w, d, id);
        else
            sy_jw_str(&t->w, "", 0);
        sy_jw_key(&t->w, "content");
        int rc = w_flat_text(t, sy_jdom_member(d, b, "content"), ptr);
        if (rc)
            return rc;
        sy_jw_end(&t->w);
    }
    /* 2. the rest, with the tool results' images, in order: one user message. */
    size_t cap = (size_t)d->n[c].kids * 2 + 1, np = 0;
    struct part *p = sy_arena_alloc(t->a, cap * sizeof *p);
    for (uint32_t b = sy_jdom_first(d, c); b; b = sy_jdom_next(d, b)) {
        if (sy_jdom_str_eq(d, sy_jdom_at(d, b, "type"), "tool_result")) {
            uint32_t rc = sy_jdom_member(d, b, "content"), n;
            if (sy_jdom_kind(d, rc) != 'a')
                continue;
            for (uint32_t x = sy_jdom_first(d, rc); x; x = sy_jdom_next(d, x)) {
                if (sy_jdom_kind(d, x) == 'o' && sy_jdom_str_eq(d, sy_jdom_at(d, x, "type"), "image") &&
                    (n = image_src(d, x))) {
                    if (np == cap) { /* more images than room: grow */
                        struct part *q = sy_arena_alloc(t->a, cap * 2 * sizeof *q);
                        memcpy(q, p, np * sizeof *p);
                        p = q;
                        cap *= 2;
                    }
                    p[np++] = (struct part){'i', n};
                }
            }
            continue;
        }
        if (np == cap) {
            struct part *q = sy_arena_alloc(t->a, cap * 2 * sizeof *q);
            memcpy(q, p, np * sizeof *p);
            p = q;
            cap *= 2;
        }
        user_parts(d, b, p, &np, cap);
    }
    if (!np)
        return 0;
    sy_jw_obj(&t->w);
    W_KLIT(&t->w, "role", "user");
    w_parts(t, p, np);
    sy_jw_end(&t->w);
    return 0;
}

static int assistant_msg(struct tx *t, uint32_t c, uint32_t mi)
{
    const struct sy_jdoc *d = t->d;
    uint32_t *texts = sy_arena_alloc(t->a, (d->n[c].kids + 1) * sizeof *texts);
    size_t nt = 0, ntools = 0;
    uint32_t bi = 0;
    for (uint32_t b = sy_jdom_first(d, c); b; b = sy_jdom_next(d, b), bi++) {
        if (sy_jdom_kind(d, b) == 's') { /* LiteLLM takes a bare string as the text */
            texts[nt++] = b;
            continue;
        }
        if (sy_jdom_kind(d, b) != 'o')
            return bad(t, "messages.%u.content.%u: Input should be a valid dictionary", mi, bi);
        uint32_t type = sy_jdom_at(d, b, "type"), s;
        if (sy_jdom_str_eq(d, type, "text") && nonempty_str(d, s = text_of(d, b)))
            texts[nt++] = s;
        else if (sy_jdom_str_eq(d, type, "tool_use"))
            ntools++;
    }
    if (!nt && !ntools)
        return 0; /* only thinking (dropped) or nothing: no message, as LiteLLM */
    sy_jw_obj(&t->w);
    W_KLIT(&t->w, "role", "assistant");
    sy_jw_key(&t->w, "content");
    if (nt)
        sy_jw_join(&t->w, d, texts, nt, "\\n", t->a);
    else
        sy_jw_null(&t->w);
    if (ntools) {
        sy_jw_key(&t->w, "tool_calls");
        sy_jw_arr(&t->w);
        for (uint32_t b = sy_jdom_first(d, c); b; b = sy_jdom_next(d, b)) {
            if (!sy_jdom_str_eq(d, sy_jdom_at(d, b, "type"), "tool_use"))
                continue;
            uint32_t id = sy_jdom_at(d, b, "id"), in = sy_jdom_member(d, b, "input");
            sy_jw_obj(&t->w);
            sy_jw_key(&t->w, "id");
            if (sy_jdom_kind(d, id) == 's')
                sy_jw_node(&t->w, d, id);
            else
                sy_jw_str(&t->w, "", 0);
            W_KLIT(&t->w, "type", "function");
            sy_jw_key(&t->w, "function");
            sy_jw_obj(&t->w);
            sy_jw_key(&t->w, "name");
            w_oai_tool_name(t, sy_jdom_at(d, b, "name"), "litellm_unnamed_tool");
            sy_jw_key(&t->w, "arguments");
            if (in)
                sy_jw_node_as_str(&t->w, d, in);
            else
                sy_jw_str(&t->w, "{}", 2);
            sy_jw_end(&t->w);
            sy_jw_end(&t->w);
        }
        sy_jw_end(&t->w);
    }
    sy_jw_end(&t->w);
    return 0;
}

static int messages(struct tx *t, uint32_t msgs)
{
    const struct sy_jdoc *d = t->d;
    uint32_t mi = 0;
    for (uint32_t m = sy_jdom_first(d, msgs); m; m = sy_jdom_next(d, m), mi++) {
        if (sy_jdom_kind(d, m) != 'o')
            return bad(t, "messages.%u: Input should be a valid dictionary", mi);
        uint32_t role = sy_jdom_at(d, m, "role"), c = sy_jdom_at(d, m, "content");
        int user = sy_jdom_str_eq(d, role, "user"), asst = sy_jdom_str_eq(d, role, "assistant");
        int sys = sy_jdom_str_eq(d, role, "system");
        if (!role)
            return bad(t, "messages.%u.role: Field required", mi);
        if (!user && !asst && !sys)
            return bad(t, "messages.%u.role: Input should be 'user' or 'assistant'", mi);
        if (!c)
            return bad(t, "messages.%u.content: Field required", mi);
        char k = sy_jdom_kind(d, c);
        if (k != 's' && k != 'a')
            return bad(t, "messages.%u.content: Input should be a valid list", mi);
        int rc = 0;
        if (sys) {
            char ptr[48];
            snprintf(ptr, sizeof ptr, "messages.%u.content", mi);
            sy_jw_obj(&t->w);
            W_KLIT(&t->w, "role", "system");
            sy_jw_key(&t->w, "content");
            rc = w_flat_text(t, c, ptr);
            sy_jw_end(&t->w);
        } else if (k == 's') {
            sy_jw_obj(&t->w);
            sy_jw_key(&t->w, "role");
            sy_jw_cstr(&t->w, user ? "user" : "assistant");
            W_KNODE(&t->w, "content", d, c);
            sy_jw_end(&t->w);
        } else {
            rc = user ? user_msg(t, c, mi) : assistant_msg(t, c, mi);
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* Writes key node k's key (decoded, so any escape is written canonically). */
static void w_key_of(struct tx *t, uint32_t k)
{
    size_t kl;
    const char *ks = sy_jdom_str(t->d, k, t->a, &kl);
    sy_jw_keyn(&t->w, ks, kl);
}

/* 1 when key node k is the last of its name in object obj (a repeated key:
 * only the last counts, as for Python's json). Keys with a NUL byte are
 * never compared (sy_jdom_get takes C strings) and always kept. */
static int last_of_name(struct tx *t, uint32_t obj, uint32_t k)
{
    size_t kl;
    const char *ks = sy_jdom_str(t->d, k, t->a, &kl);
    return memchr(ks, 0, kl) || sy_jdom_get(t->d, obj, ks) == sy_jdom_val(k);
}

static void w_required(struct tx *t, uint32_t props)
{
    sy_jw_arr(&t->w);
    for (uint32_t p = sy_jdom_first(t->d, props); p; p = sy_jdom_next_key(t->d, p))
        if (last_of_name(t, props, p))
            sy_jw_node(&t->w, t->d, p); /* a key node's raw text is a JSON string */
    sy_jw_end(&t->w);
}

/* LiteLLM's _add_additional_properties_false, written while copying schema
 * node s: every {"type":"object","properties":{..}} gets additionalProperties
 * false and all its property names required (in place when present, else
 * appended); recursion into properties, items, anyOf/oneOf/allOf and
 * $defs/definitions. */
static void w_strict_schema(struct tx *t, uint32_t s)
{
    const struct sy_jdoc *d = t->d;
    if (sy_jdom_kind(d, s) != 'o') {
        sy_jw_node(&t->w, d, s);
        return;
    }
    uint32_t props = sy_jdom_get(d, s, "properties");
    int strict = sy_jdom_str_eq(d, sy_jdom_get(d, s, "type"), "object") && sy_jdom_kind(d, props) == 'o';
    int had_ap = 0, had_req = 0;
    sy_jw_obj(&t->w);
    for (uint32_t k = sy_jdom_first(d, s); k; k = sy_jdom_next_key(d, k)) {
        if (!last_of_name(t, s, k))
            continue;
        uint32_t v = sy_jdom_val(k);
        w_key_of(t, k);
        int map = 0; /* v is an object of schemas */
        if (strict && sy_jdom_str_eq(d, k, "additionalProperties")) {
            sy_jw_bool(&t->w, 0);
            had_ap = 1;
        } else if (strict && sy_jdom_str_eq(d, k, "required")) {
            w_required(t, props);
            had_req = 1;
        } else if (strict && sy_jdom_str_eq(d, k, "properties")) {
            map = 1;
        } else if (sy_jdom_str_eq(d, k, "items")) {
            w_strict_schema(t, v);
        } else if ((sy_jdom_str_eq(d, k, "anyOf") || sy_jdom_str_eq(d, k, "oneOf") || sy_jdom_str_eq(d, k, "allOf")) &&
                   sy_jdom_kind(d, v) == 'a') {
            sy_jw_arr(&t->w);
            for (uint32_t x = sy_jdom_first(d, v); x; x = sy_jdom_next(d, x))
                w_strict_schema(t, x);
            sy_jw_end(&t->w);
        } else if ((sy_jdom_str_eq(d, k, "$defs") || sy_jdom_str_eq(d, k, "definitions")) &&
                   sy_jdom_kind(d, v) == 'o') {
            map = 1;
        } else {
            sy_jw_node(&t->w, d, v);
        }
        if (map) {
            sy_jw_obj(&t->w);
            for (uint32_t p = sy_jdom_first(d, v); p; p = sy_jdom_next_key(d, p)) {
                if (!last_of_name(t, v, p))
                    continue;
                w_key_of(t, p);
                w_strict_schema(t, sy_jdom_val(p));
            }
            sy_jw_end(&t->w);
        }
    }
    if (strict && !had_ap) {
        sy_jw_key(&t->w, "additionalProperties");
        sy_jw_bool(&t->w, 0);
    }
    if (strict && !had_req) {
        sy_jw_key(&t->w, "required");
        w_required(t, props);
    }
    sy_jw_end(&t->w);
}

/* reasoning_effort for a thinking object (NULL: none), LiteLLM's
 * translate_anthropic_thinking_to_reasoning_effort with its default budgets. */
static const char *effort_of(struct tx *t, uint32_t th, uint32_t *raw)
{
    const struct sy_jdoc *d = t->d;
    uint32_t type = sy_jdom_at(d, th, "type");
    *raw = 0;
    if (sy_jdom_str_eq(d, type, "enabled")) {
        double b = 0;
        sy_jdom_num(d, sy_jdom_at(d, th, "budget_tokens"), &b);
        return b >= 4096 ? "high" : b >= 2048 ? "medium" : b >= 1024 ? "low" : "minimal";
    }
    if (sy_jdom_str_eq(d, type, "adaptive")) {
        uint32_t eff = sy_jdom_member(d, sy_jdom_top(d, "output_config"), "effort");
        if (nonempty_str(d, eff))
            *raw = eff;
        return "medium";
    }
    return NULL; /* disabled, or not understood */
}

static int tools(struct tx *t, uint32_t tl)
{
    const struct sy_jdoc *d = t->d;
    uint32_t i = 0;
    sy_jw_key(&t->w, "tools");
    sy_jw_arr(&t->w);
    for (uint32_t x = sy_jdom_first(d, tl); x; x = sy_jdom_next(d, x), i++) {
        if (sy_jdom_kind(d, x) != 'o')
            return bad(t, "tools.%u: Input should be a valid dictionary", i);
        uint32_t type = sy_jdom_member(d, x, "type");
        if (type && !sy_jdom_str_eq(d, type, "custom")) {
            size_t l = 0;
            const char *ts = sy_jdom_kind(d, type) == 's' ? sy_jdom_str(d, type, t->a, &l) : "?";
            return bad(t,
                       "tools.%u: tool type '%.*s' is not supported for this model: server tools and "
                       "Anthropic-defined tools need an Anthropic deployment",
                       i, (int)(l > 64 ? 64 : l), ts);
        }
        char fb[48];
        snprintf(fb, sizeof fb, "litellm_unnamed_tool_%u", i);
        uint32_t desc = sy_jdom_at(d, x, "description"), schema = sy_jdom_at(d, x, "input_schema");
        sy_jw_obj(&t->w);
        W_KLIT(&t->w, "type", "function");
        sy_jw_key(&t->w, "function");
        sy_jw_obj(&t->w);
        sy_jw_key(&t->w, "name");
        w_oai_tool_name(t, sy_jdom_at(d, x, "name"), fb);
        if (desc) {
            W_KNODE(&t->w, "description", d, desc);
        }
        if (schema) {
            W_KNODE(&t->w, "parameters", d, schema);
        }
        sy_jw_end(&t->w);
        sy_jw_end(&t->w);
    }
    sy_jw_end(&t->w);
    return 0;
}

static int tool_choice(struct tx *t, uint32_t tc)
{
    const struct sy_jdoc *d = t->d;
    if (sy_jdom_kind(d, tc) != 'o')
        return bad(t, "tool_choice: Input should be a valid dictionary");
    uint32_t type = sy_jdom_at(d, tc, "type");
    int par = 0, none = 0;
    sy_jw_key(&t->w, "tool_choice");
    if (sy_jdom_str_eq(d, type, "auto")) {
        sy_jw_str(&t->w, "auto", 4);
    } else if (sy_jdom_str_eq(d, type, "any")) {
        sy_jw_str(&t->w, "required", 8);
    } else if (sy_jdom_str_eq(d, type, "none")) {
        sy_jw_str(&t->w, "none", 4);
        none = 1;
    } else if (sy_jdom_str_eq(d, type, "tool")) {
        uint32_t name = sy_jdom_at(d, tc, "name");
        if (sy_jdom_kind(d, name) != 's')
            return bad(t, "tool_choice.name: Field required");
        sy_jw_obj(&t->w);
        W_KLIT(&t->w, "type", "function");
        sy_jw_key(&t->w, "function");
        sy_jw_obj(&t->w);
        sy_jw_key(&t->w, "name");
        w_oai_tool_name(t, name, "");
        sy_jw_end(&t->w);
        sy_jw_end(&t->w);
    } else {
        return bad(t, "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'");
    }
    if (!none && sy_jdom_bool(d, sy_jdom_at(d, tc, "disable_parallel_tool_use"), &par) && par) {
        sy_jw_key(&t->w, "parallel_tool_calls");
        sy_jw_bool(&t->w, 0);
    }
    return 0;
}

/* A number member copied as is; 400 when it is not a number. */
static int copy_num(struct tx *t, const char *from, const char *to, int integer)
{
    uint32_t v = sy_jdom_top(t->d, from);
    if (!v)
        return 0;
    double x;
    int64_t i;
    if (integer ? !sy_jdom_i64(t->d, v, &i) : !sy_jdom_num(t->d, v, &x))
        return bad(t, "%s: Input should be a valid %s", from, integer ? "integer" : "number");
    sy_jw_key(&t->w, to);
    sy_jw_node(&t->w, t->d, v);
    return 0;
}

static int translate(struct tx *t)
{
    const struct sy_jdoc *d = t->d;
    if (!d->count || d->n[0].type != 'o')
        return bad(t, "Input should be a valid dictionary");
    uint32_t model = sy_jdom_top(d, "model"), msgs = sy_jdom_top(d, "messages"), sys = sy_jdom_top(d, "system");
    if (!model)
        return bad(t, "model: Field required");
    if (sy_jdom_kind(d, model) != 's')
        return bad(t, "model: Input should be a valid string");
    if (!msgs)
        return bad(t, "messages: Field required");
    if (sy_jdom_kind(d, msgs) != 'a')
        return bad(t, "messages: Input should be a valid list");
    if (!d->n[msgs].kids)
        return bad(t, "messages: at least one message is required");
    if (sys && sy_jdom_kind(d, sys) != 's' && sy_jdom_kind(d, sys) != 'a')
        return bad(t, "system: Input should be a valid list");

    struct sy_jw *w = &t->w;
    int rc;
    sy_jw_obj(w);
    W_KNODE(w, "model", d, model);
    sy_jw_key(w, "messages");
    sy_jw_arr(w);
    if (nonempty_str(d, sys) || (sy_jdom_kind(d, sys) == 'a' && has_text(d, sys))) {
        sy_jw_obj(w);
        W_KLIT(w, "role", "system");
        sy_jw_key(w, "content");
        if ((rc = w_flat_text(t, sys, "system")))
            return rc;
        sy_jw_end(w);
    }
    if ((rc = messages(t, msgs)))
        return rc;
    sy_jw_end(w);

    if ((rc = copy_num(t, "max_tokens", "max_tokens", 1)) || (rc = copy_num(t, "temperature", "temperature", 0)) ||
        (rc = copy_num(t, "top_p", "top_p", 0)) || (rc = copy_num(t, "top_k", "top_k", 0)))
        return rc;

    uint32_t stop = sy_jdom_top(d, "stop_sequences");
    if (stop) {
        if (sy_jdom_kind(d, stop) != 'a')
            return bad(t, "stop_sequences: Input should be a valid list");
        uint32_t i = 0;
        for (uint32_t x = sy_jdom_first(d, stop); x; x = sy_jdom_next(d, x), i++)
            if (sy_jdom_kind(d, x) != 's')
                return bad(t, "stop_sequences.%u: Input should be a valid string", i);
        if (i)
            W_KNODE(w, "stop", d, stop);
    }

    uint32_t meta = sy_jdom_top(d, "metadata");
    if (meta) {
        if (sy_jdom_kind(d, meta) != 'o')
            return bad(t, "metadata: Input should be a valid dictionary");
        uint32_t uid = sy_jdom_member(d, meta, "user_id");
        if (uid && sy_jdom_kind(d, uid) != 's')
            return bad(t, "metadata.user_id: Input should be a valid string");
        if (uid)
            W_KNODE(w, "user", d, uid);
    }

    uint32_t tl = sy_jdom_top(d, "tools"), tc = sy_jdom_top(d, "tool_choice");
    if (tl && sy_jdom_kind(d, tl) != 'a')
        return bad(t, "tools: Input should be a valid list");
    if (tl && d->n[tl].kids) {
        if ((rc = tools(t, tl)))
            return rc;
        if (tc && (rc = tool_choice(t, tc)))
            return rc;
    } else if (tc && sy_jdom_kind(d, tc) != 'o') {
        return bad(t, "tool_choice: Input should be a valid dictionary");
    }

    uint32_t th = sy_jdom_top(d, "thinking");
    if (th) {
        if (sy_jdom_kind(d, th) != 'o')
            return bad(t, "thinking: Input should be a valid dictionary");
        uint32_t raw;
        const char *eff = effort_of(t, th, &raw);
        if (eff) {
            sy_jw_key(w, "reasoning_effort");
            if (raw)
                sy_jw_node(w, d, raw);
            else
                sy_jw_cstr(w, eff);
        }
    }

    uint32_t of = sy_jdom_top(d, "output_format");
    if (!of)
        of = sy_jdom_member(d, sy_jdom_top(d, "output_config"), "format");
    if (sy_jdom_kind(d, of) == 'o' && sy_jdom_str_eq(d, sy_jdom_at(d, of, "type"), "json_schema")) {
        uint32_t schema = sy_jdom_member(d, of, "schema");
        if (sy_jdom_kind(d, schema) == 'o' && d->n[schema].kids) { /* LiteLLM: a falsy schema is none */
            sy_jw_key(w, "response_format");
            sy_jw_obj(w);
            W_KLIT(w, "type", "json_schema");
            sy_jw_key(w, "json_schema");
            sy_jw_obj(w);
            W_KLIT(w, "name", "structured_output");
            sy_jw_key(w, "schema");
            w_strict_schema(t, schema);
            sy_jw_key(w, "strict");
            sy_jw_bool(w, 1);
            sy_jw_end(w);
            sy_jw_end(w);
        }
    }

    uint32_t st = sy_jdom_top(d, "stream");
    int stream = 0;
    if (st && !sy_jdom_bool(d, st, &stream))
        return bad(t, "stream: Input should be a valid boolean");
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

int sy_msg_to_openai(const struct sy_jdoc *req, struct sy_arena *a, struct sy_buf *out, struct sy_xerr *e)
{
    struct tx t = {.d = req, .a = a, .e = e};
    size_t mark = out->len;
    sy_jw_init(&t.w, out);
    int rc = translate(&t);
    if (!rc && t.w.err) {
        rc = t.w.err == SY_ENOSPC ? SY_ENOSPC : SY_EINVAL;
        if (rc == SY_ENOSPC) {
            bad(&t, "request too large to translate");
            e->status = 413;
        } else {
            bad(&t, "request nesting too deep to translate");
        }
    }
    if (rc) {
        out->len = mark;
        if (out->p)
            out->p[mark] = 0;
    }
    return rc;
}

/* ---- usage and stop reason ------------------------------------------------ */

struct usage {
    int64_t prompt, completion, cache_read, cache_write;
};

static int64_t pos_int(const struct sy_jdoc *d, uint32_t i)
{
    double v;
    if (!sy_jdom_num(d, i, &v) || !(v > 0) || v > 9e18)
        return 0;
    return (int64_t)v;
}

/* Reads an OpenAI usage object (LiteLLM's _get_cache_*_input_tokens). */
static void read_usage(const struct sy_jdoc *d, uint32_t u, struct usage *o)
{
    uint32_t det = sy_jdom_at(d, u, "prompt_tokens_details");
    o->prompt = pos_int(d, sy_jdom_at(d, u, "prompt_tokens"));
    o->completion = pos_int(d, sy_jdom_at(d, u, "completion_tokens"));
    o->cache_read = pos_int(d, sy_jdom_at(d, u, "cache_read_input_tokens"));
    if (!o->cache_read)
        o->cache_read = pos_int(d, sy_jdom_at(d, det, "cached_tokens"));
    o->cache_write = pos_int(d, sy_jdom_at(d, u, "cache_creation_input_tokens"));
    if (!o->cache_write)
        o->cache_write = pos_int(d, sy_jdom_at(d, det, "cache_creation_tokens"));
    if (!o->cache_write)
        o->cache_write = pos_int(d, sy_jdom_at(d, det, "cache_write_tokens"));
}

static void w_usage(struct sy_jw *w, const struct usage *u)
{
    int64_t in = u->prompt - u->cache_read - u->cache_write;
    sy_jw_obj(w);
    sy_jw_key(w, "input_tokens");
    sy_jw_int(w, in > 0 ? in : 0);
    sy_jw_key(w, "cache_creation_input_tokens");
    sy_jw_int(w, u->cache_write);
    sy_jw_key(w, "cache_read_input_tokens");
    sy_jw_int(w, u->cache_read);
    sy_jw_key(w, "output_tokens");
    sy_jw_int(w, u->completion);
    sy_jw_end(w);
}

/* Anthropic stop_reason for an OpenAI finish_reason. */
static const char *stop_reason(const char *f, size_t n, int tools, int refusal)
{
    const char *r = "end_turn";
    if (n == 6 && !memcmp(f, "length", 6))
        r = "max_tokens";
    else if ((n == 10 && !memcmp(f, "tool_calls", 10)) || (n == 13 && !memcmp(f, "function_call", 13)))
        r = "tool_use";
    else if ((n == 14 && !memcmp(f, "content_filter", 14)) || refusal)
        r = "refusal";
    if (tools && !strcmp(r, "end_turn"))
        r = "tool_use";
    return r;
}

/* ---- response: OpenAI -> Anthropic ----------------------------------------- */

/* The tool arguments node as an input object: parsed arguments when they are
 * a JSON object, else {}. */
static void w_input(struct sy_jw *w, const struct sy_jdoc *d, uint32_t args, struct sy_arena *a)
{
    if (sy_jdom_kind(d, args) == 'o') {
        sy_jw_node(w, d, args);
        return;
    }
    size_t l;
    const char *s = sy_jdom_str(d, args, a, &l);
    struct sy_jdoc in;
    if (s && !blank(s, l) && sy_jdom_parse(&in, s, l, a, 0) == 0 && in.n[0].type == 'o') {
        sy_jw_raw(w, s + in.n[0].off, in.n[0].len);
        return;
    }
    W_RAW(w, "{}");
}

static void w_generated_id(struct sy_jw *w, const char *msg_id, size_t i, struct sy_arena *a)
{
    size_t ml = strlen(msg_id);
    char *b = sy_arena_alloc(a, ml + 32);
    int n = snprintf(b, ml + 32, "toolu_%s_%zu", msg_id, i);
    w_tool_id(w, b, (size_t)n, a);
}

int sy_msg_from_openai(const char *body, size_t n, const char *model, const char *msg_id, const struct sy_jdoc *req,
                       struct sy_arena *a, struct sy_buf *out)
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

    size_t mark = out->len;
    struct sy_jw w;
    sy_jw_init(&w, out);
    sy_jw_obj(&w);
    sy_jw_key(&w, "id");
    uint32_t uid = sy_jdom_top(&d, "id");
    const char *idp = msg_id;
    if (msg_id)
        sy_jw_cstr(&w, msg_id);
    else if (sy_jdom_kind(&d, uid) == 's') {
        sy_jw_node(&w, &d, uid);
        idp = sy_jdom_str(&d, uid, a, NULL);
    } else {
        sy_jw_str(&w, "msg_unknown", 11);
        idp = "msg_unknown";
    }
    W_KLIT(&w, "type", "message");
    W_KLIT(&w, "role", "assistant");
    sy_jw_key(&w, "model");
    uint32_t um = sy_jdom_top(&d, "model");
    if (model)
        sy_jw_cstr(&w, model);
    else if (sy_jdom_kind(&d, um) == 's')
        sy_jw_node(&w, &d, um);
    else
        sy_jw_str(&w, "unknown-model", 13);

    sy_jw_key(&w, "content");
    sy_jw_arr(&w);
    /* thinking first: thinking_blocks, else reasoning_content / reasoning */
    uint32_t tb = sy_jdom_member(&d, msg, "thinking_blocks");
    if (sy_jdom_kind(&d, tb) == 'a' && d.n[tb].kids) {
        for (uint32_t b = sy_jdom_first(&d, tb); b; b = sy_jdom_next(&d, b)) {
            uint32_t type = sy_jdom_at(&d, b, "type");
            if (sy_jdom_str_eq(&d, type, "thinking")) {
                uint32_t th = sy_jdom_at(&d, b, "thinking"), sig = sy_jdom_at(&d, b, "signature");
                sy_jw_obj(&w);
                W_KLIT(&w, "type", "thinking");
                sy_jw_key(&w, "thinking");
                w_str_or_empty(&w, &d, th);
                sy_jw_key(&w, "signature");
                w_str_or_empty(&w, &d, sig);
                sy_jw_end(&w);
            } else if (sy_jdom_str_eq(&d, type, "redacted_thinking")) {
                uint32_t data = sy_jdom_at(&d, b, "data");
                sy_jw_obj(&w);
                W_KLIT(&w, "type", "redacted_thinking");
                sy_jw_key(&w, "data");
                w_str_or_empty(&w, &d, data);
                sy_jw_end(&w);
            }
        }
    } else {
        uint32_t r = sy_jdom_at(&d, msg, "reasoning_content");
        if (!nonempty_str(&d, r))
            r = sy_jdom_at(&d, msg, "reasoning");
        if (nonempty_str(&d, r)) {
            sy_jw_obj(&w);
            W_KLIT(&w, "type", "thinking");
            W_KNODE(&w, "thinking", &d, r);
            W_KLIT(&w, "signature", "");
            sy_jw_end(&w);
        }
    }
    /* text: a string, or text parts joined */
    uint32_t content = sy_jdom_at(&d, msg, "content"), refusal = sy_jdom_at(&d, msg, "refusal");
    int is_refusal = 0;
    if (sy_jdom_kind(&d, content) == 'a') {
        uint32_t *texts = sy_arena_alloc(a, (d.n[content].kids + 1) * sizeof *texts);
        size_t nt = 0;
        for (uint32_t p = sy_jdom_first(&d, content); p; p = sy_jdom_next(&d, p)) {
            uint32_t s = sy_jdom_at(&d, p, "text");
            if (nonempty_str(&d, s))
                texts[nt++] = s;
        }
        if (nt) {
            sy_jw_obj(&w);
            W_KLIT(&w, "type", "text");
            sy_jw_key(&w, "text");
            sy_jw_join(&w, &d, texts, nt, "", a);
            sy_jw_end(&w);
        } else {
            content = 0;
        }
    } else if (!nonempty_str(&d, content)) {
        content = 0;
        if (nonempty_str(&d, refusal)) {
            content = refusal;
            is_refusal = 1;
        }
    }
    if (sy_jdom_kind(&d, content) == 's') {
        sy_jw_obj(&w);
        W_KLIT(&w, "type", "text");
        W_KNODE(&w, "text", &d, content);
        sy_jw_end(&w);
    }
    /* tool calls */
    uint32_t tcs = sy_jdom_member(&d, msg, "tool_calls");
    size_t ntools = 0;
    if (sy_jdom_kind(&d, tcs) == 'a') {
        for (uint32_t tc = sy_jdom_first(&d, tcs); tc; tc = sy_jdom_next(&d, tc)) {
            if (sy_jdom_kind(&d, tc) != 'o')
                continue;
            uint32_t fn = sy_jdom_at(&d, tc, "function"), id = sy_jdom_at(&d, tc, "id");
            size_t nl = 0, il = 0;
            const char *name = sy_jdom_str(&d, sy_jdom_at(&d, fn, "name"), a, &nl);
            const char *ids = sy_jdom_str(&d, id, a, &il);
            if (!name) {
                name = "";
                nl = 0;
            }
            restore_name(req, a, &name, &nl);
            sy_jw_obj(&w);
            W_KLIT(&w, "type", "tool_use");
            sy_jw_key(&w, "id");
            if (ids && il)
                w_tool_id(&w, ids, il, a);
            else
                w_generated_id(&w, idp, ntools, a);
            sy_jw_key(&w, "name");
            sy_jw_str(&w, name, nl);
            sy_jw_key(&w, "input");
            w_input(&w, &d, sy_jdom_at(&d, fn, "arguments"), a);
            sy_jw_end(&w);
            ntools++;
        }
    }
    sy_jw_end(&w);

    uint32_t fr = sy_jdom_at(&d, c0, "finish_reason");
    size_t fl = 0;
    const char *f = sy_jdom_kind(&d, fr) == 's' ? sy_jdom_str(&d, fr, a, &fl) : "";
    sy_jw_key(&w, "stop_reason");
    sy_jw_cstr(&w, stop_reason(f, fl, ntools > 0, is_refusal));
    sy_jw_key(&w, "stop_sequence");
    sy_jw_null(&w);
    struct usage u = {0};
    read_usage(&d, sy_jdom_top(&d, "usage"), &u);
    sy_jw_key(&w, "usage");
    w_usage(&w, &u);
    sy_jw_end(&w);
    if (w.err) {
        out->len = mark;
        if (out->p)
            out->p[mark] = 0;
        return SY_ENOSPC;
    }
    return 0;
}

/* ---- stream: OpenAI chunks -> Anthropic events ----------------------------- */

void sy_msg_stream_init(struct sy_msgstream *s, const char *model, const char *msg_id, const struct sy_jdoc *req)
{
    memset(s, 0, sizeof *s);
    snprintf(s->id, sizeof s->id, "%s", msg_id ? msg_id : "msg_unknown");
    snprintf(s->model, sizeof s->model, "%s", model ? model : "unknown-model");
    s->req = req;
    s->tool_idx = -1;
}

/* "event: <type>\ndata: " and the opening of the data object with its type. */
static void ev_begin(struct sy_jw *w, struct sy_buf *out, const char *type)
{
    sy_jw_init(w, out);
    if (SY_BUF_LIT(out, "event: ") || sy_buf_puts(out, type) || SY_BUF_LIT(out, "\ndata: "))
        w->err = SY_ENOSPC;
    sy_jw_obj(w);
    sy_jw_key(w, "type");
    sy_jw_cstr(w, type);
}

static int ev_end(struct sy_jw *w, struct sy_buf *out)
{
    sy_jw_end(w);
    if (!w->err && SY_BUF_LIT(out, "\n\n"))
        w->err = SY_ENOSPC;
    return w->err;
}

static int ev_message_start(struct sy_msgstream *s, struct sy_buf *out)
{
    struct sy_jw w;
    struct usage u = {0};
    ev_begin(&w, out, "message_start");
    sy_jw_key(&w, "message");
    sy_jw_obj(&w);
    sy_jw_key(&w, "id");
    sy_jw_cstr(&w, s->id);
    W_KLIT(&w, "type", "message");
    W_KLIT(&w, "role", "assistant");
    sy_jw_key(&w, "model");
    sy_jw_cstr(&w, s->model);
    sy_jw_key(&w, "content");
    W_RAW(&w, "[]");
    sy_jw_key(&w, "stop_reason");
    sy_jw_null(&w);
    sy_jw_key(&w, "stop_sequence");
    sy_jw_null(&w);
    sy_jw_key(&w, "usage");
    w_usage(&w, &u);
    sy_jw_end(&w);
    s->started = 1;
    return ev_end(&w, out);
}

static int ev_block_stop(struct sy_msgstream *s, struct sy_buf *out)
{
    if (s->kind == K_NONE)
        return 0;
    struct sy_jw w;
    ev_begin(&w, out, "content_block_stop");
    sy_jw_key(&w, "index");
    sy_jw_int(&w, s->index);
    s->kind = K_NONE;
    s->index++;
    return ev_end(&w, out);
}

/* Opens a text or thinking block (closing the open one). */
static int ev_block_start(struct sy_msgstream *s, struct sy_buf *out, int kind)
{
    int rc = ev_block_stop(s, out);
    struct sy_jw w;
    ev_begin(&w, out, "content_block_start");
    sy_jw_key(&w, "index");
    sy_jw_int(&w, s->index);
    sy_jw_key(&w, "content_block");
    if (kind == K_TEXT)
        W_RAW(&w, "{\"type\":\"text\",\"text\":\"\"}");
    else
        W_RAW(&w, "{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}");
    s->kind = kind;
    return rc ? rc : ev_end(&w, out);
}

/* content_block_delta of the open block: {"type":dtype, field: node as a string}. */
static int ev_delta(struct sy_msgstream *s, struct sy_buf *out, const char *dtype, const char *field,
                    const struct sy_jdoc *d, uint32_t node)
{
    struct sy_jw w;
    ev_begin(&w, out, "content_block_delta");
    sy_jw_key(&w, "index");
    sy_jw_int(&w, s->index);
    sy_jw_key(&w, "delta");
    sy_jw_obj(&w);
    sy_jw_key(&w, "type");
    sy_jw_cstr(&w, dtype);
    sy_jw_key(&w, field);
    sy_jw_node_as_str(&w, d, node);
    sy_jw_end(&w);
    return ev_end(&w, out);
}

static uint64_t fnv(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h | 1; /* never 0 ("no id") */
}

/* One entry of delta.tool_calls. */
static int tool_delta(struct sy_msgstream *s, struct sy_buf *out, const struct sy_jdoc *d, uint32_t e,
                      struct sy_arena *a)
{
    int64_t idx = -1;
    if (!sy_jdom_i64(d, sy_jdom_at(d, e, "index"), &idx) || idx < 0 || idx > INT32_MAX)
        idx = -1;
    uint32_t fn = sy_jdom_at(d, e, "function"), id = sy_jdom_at(d, e, "id");
    uint32_t name = sy_jdom_at(d, fn, "name"), args = sy_jdom_at(d, fn, "arguments");
    int has_id = nonempty_str(d, id), has_name = nonempty_str(d, name);
    if (!has_id && !has_name && !nonempty_str(d, args) && sy_jdom_kind(d, args) != 'o')
        return 0; /* nothing to say (an empty opener): no block for it */
    uint64_t idh = has_id ? fnv(d->src + d->n[id].off, d->n[id].len) : 0;
    int seen = idx >= 0 && idx < 64 && (s->tools_seen >> idx & 1);
    int fresh;
    if (s->kind == K_TOOL) {
        if (idx >= 0 && idx != s->tool_idx)
            fresh = has_id || has_name || !seen;
        else
            fresh = idh && s->tool_id_hash && idh != s->tool_id_hash;
    } else {
        fresh = has_id || has_name || !seen;
    }
    if (!fresh && s->kind != K_TOOL)
        return 0; /* arguments of a call whose block is closed: nowhere to put them */
    if (!fresh && idx >= 0 && idx != s->tool_idx)
        return 0;
    int rc = 0;
    if (fresh) {
        if ((rc = ev_block_stop(s, out)))
            return rc;
        size_t nl = 0, il = 0;
        const char *ns = sy_jdom_str(d, name, a, &nl), *is = sy_jdom_str(d, id, a, &il);
        if (!ns) {
            ns = "";
            nl = 0;
        }
        restore_name(s->req, a, &ns, &nl);
        struct sy_jw w;
        ev_begin(&w, out, "content_block_start");
        sy_jw_key(&w, "index");
        sy_jw_int(&w, s->index);
        sy_jw_key(&w, "content_block");
        sy_jw_obj(&w);
        W_KLIT(&w, "type", "tool_use");
        sy_jw_key(&w, "id");
        if (is && il)
            w_tool_id(&w, is, il, a);
        else
            w_generated_id(&w, s->id, (size_t)s->ntools, a);
        sy_jw_key(&w, "name");
        sy_jw_str(&w, ns, nl);
        sy_jw_key(&w, "input");
        W_RAW(&w, "{}");
        sy_jw_end(&w);
        s->kind = K_TOOL;
        s->ntools++;
        s->tool_idx = (int)idx;
        s->tool_id_hash = idh;
        if (idx >= 0 && idx < 64)
            s->tools_seen |= 1ull << idx;
        if ((rc = ev_end(&w, out)))
            return rc;
    }
    if (nonempty_str(d, args) || sy_jdom_kind(d, args) == 'o')
        rc = ev_delta(s, out, "input_json_delta", "partial_json", d, args);
    return rc;
}

/* The delta of choice 0. */
static int choice_delta(struct sy_msgstream *s, struct sy_buf *out, const struct sy_jdoc *d, uint32_t delta,
                        struct sy_arena *a)
{
    int rc = 0;
    /* reasoning */
    uint32_t r = sy_jdom_at(d, delta, "reasoning_content"), tb = sy_jdom_at(d, delta, "thinking_blocks");
    if (!nonempty_str(d, r))
        r = sy_jdom_at(d, delta, "reasoning");
    if (nonempty_str(d, r)) {
        if (s->kind != K_THINK && (rc = ev_block_start(s, out, K_THINK)))
            return rc;
        if ((rc = ev_delta(s, out, "thinking_delta", "thinking", d, r)))
            return rc;
    }
    if (sy_jdom_kind(d, tb) == 'a') {
        int had_text = nonempty_str(d, r);
        for (uint32_t b = sy_jdom_first(d, tb); b; b = sy_jdom_next(d, b)) {
            if (!sy_jdom_str_eq(d, sy_jdom_at(d, b, "type"), "thinking"))
                continue;
            uint32_t th = sy_jdom_at(d, b, "thinking"), sig = sy_jdom_at(d, b, "signature");
            if (!had_text && nonempty_str(d, th)) {
                if (s->kind != K_THINK && (rc = ev_block_start(s, out, K_THINK)))
                    return rc;
                if ((rc = ev_delta(s, out, "thinking_delta", "thinking", d, th)))
                    return rc;
            }
            if (nonempty_str(d, sig)) {
                if (s->kind != K_THINK && (rc = ev_block_start(s, out, K_THINK)))
                    return rc;
                if ((rc = ev_delta(s, out, "signature_delta", "signature", d, sig)))
                    return rc;
            }
        }
    }
    /* text, and a refusal as text */
    uint32_t c = sy_jdom_at(d, delta, "content"), rf = sy_jdom_at(d, delta, "refusal");
    for (int i = 0; i < 2; i++) {
        uint32_t x = i ? rf : c;
        if (!nonempty_str(d, x))
            continue;
        s->refusal |= i;
        if (s->kind != K_TEXT && (rc = ev_block_start(s, out, K_TEXT)))
            return rc;
        if ((rc = ev_delta(s, out, "text_delta", "text", d, x)))
            return rc;
    }
    /* tool calls */
    uint32_t tcs = sy_jdom_at(d, delta, "tool_calls");
    if (sy_jdom_kind(d, tcs) == 'a')
        for (uint32_t e = sy_jdom_first(d, tcs); e; e = sy_jdom_next(d, e))
            if (sy_jdom_kind(d, e) == 'o' && (rc = tool_delta(s, out, d, e, a)))
                return rc;
    return 0;
}

/* Close the open block, message_delta, message_stop. */
static int finish(struct sy_msgstream *s, struct sy_buf *out)
{
    int rc = 0;
    if (!s->started)
        rc = ev_message_start(s, out);
    int rc2 = ev_block_stop(s, out);
    struct usage u = {s->prompt, s->completion, s->cache_read, s->cache_write};
    struct sy_jw w;
    ev_begin(&w, out, "message_delta");
    sy_jw_key(&w, "delta");
    sy_jw_obj(&w);
    sy_jw_key(&w, "stop_reason");
    sy_jw_cstr(&w, stop_reason(s->finish, strlen(s->finish), s->ntools > 0, s->refusal));
    sy_jw_key(&w, "stop_sequence");
    sy_jw_null(&w);
    sy_jw_end(&w);
    sy_jw_key(&w, "usage");
    w_usage(&w, &u);
    int rc3 = ev_end(&w, out);
    ev_begin(&w, out, "message_stop");
    int rc4 = ev_end(&w, out);
    s->done = 1;
    return rc ? rc : rc2 ? rc2 : rc3 ? rc3 : rc4;
}

/* Status for an OpenAI-shaped error object: its "code" when it is a status
 * (LiteLLM writes str(status) there), else from its "type". */
static int err_status(const struct sy_jdoc *d, uint32_t err)
{
    static const struct {
        const char *type;
        int status;
    } types[] = {
        {"invalid_request_error", 400}, {"authentication_error", 401}, {"auth_error", 401},
        {"permission_denied", 403},     {"permission_error", 403},     {"not_found", 404},
        {"not_found_error", 404},       {"request_too_large", 413},    {"rate_limit_error", 429},
        {"rate_limit_exceeded", 429},   {"overloaded_error", 529},     {"timeout", 504},
        {"timeout_error", 504},         {"billing_error", 402},
    };
    uint32_t code = sy_jdom_at(d, err, "code");
    int64_t v = 0;
    if (sy_jdom_kind(d, code) == 's' && d->n[code].len == 5) {
        const char *p = d->src + d->n[code].off + 1;
        if (p[0] >= '1' && p[0] <= '5' && p[1] >= '0' && p[1] <= '9' && p[2] >= '0' && p[2] <= '9')
            v = (p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0');
    } else if (!sy_jdom_i64(d, code, &v)) {
        v = 0;
    }
    if (v >= 400 && v <= 599)
        return (int)v;
    uint32_t type = sy_jdom_at(d, err, "type");
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (sy_jdom_str_eq(d, type, types[i].type))
            return types[i].status;
    return 500;
}

static int ev_error(struct sy_buf *out, int status, const char *msg, size_t n)
{
    struct sy_jw w;
    ev_begin(&w, out, "error");
    sy_jw_key(&w, "error");
    sy_jw_obj(&w);
    sy_jw_key(&w, "type");
    sy_jw_cstr(&w, sy_msg_error_type(status));
    sy_jw_key(&w, "message");
    sy_jw_str(&w, msg, n);
    sy_jw_end(&w);
    return ev_end(&w, out);
}

/* The message of an OpenAI-shaped error value (an object with "message", or a string). */
static const char *err_message(const struct sy_jdoc *d, uint32_t err, struct sy_arena *a, size_t *n)
{
    const char *m = NULL;
    if (sy_jdom_kind(d, err) == 's')
        m = sy_jdom_str(d, err, a, n);
    else if (sy_jdom_kind(d, err) == 'o')
        m = sy_jdom_str(d, sy_jdom_at(d, err, "message"), a, n);
    if (!m) {
        m = "upstream error";
        *n = 14;
    }
    return m;
}

static int stream_chunk(struct sy_msgstream *s, const char *data, size_t n, struct sy_buf *out, struct sy_arena *a)
{
    while (n && (data[n - 1] == ' ' || data[n - 1] == '\n' || data[n - 1] == '\r' || data[n - 1] == '\t'))
        n--;
    while (n && (*data == ' ' || *data == '\n' || *data == '\r' || *data == '\t'))
        data++, n--;
    if (n == 6 && !memcmp(data, "[DONE]", 6)) {
        int rc = finish(s, out);
        return rc ? rc : SY_DONE;
    }
    struct sy_jdoc d;
    int rc = sy_jdom_parse(&d, data, n, a, 0);
    if (rc)
        return rc == SY_ENOSPC ? SY_ENOSPC : SY_EJSON;
    if (d.n[0].type != 'o')
        return SY_EUPPROTO;
    uint32_t err = sy_jdom_top(&d, "error"), choices = sy_jdom_top(&d, "choices");
    if (err && !choices) {
        size_t ml;
        const char *m = err_message(&d, err, a, &ml);
        s->done = 1;
        rc = ev_error(out, sy_jdom_kind(&d, err) == 'o' ? err_status(&d, err) : 500, m, ml);
        return rc ? rc : SY_DONE;
    }
    if (!s->started && (rc = ev_message_start(s, out)))
        return rc;
    if (sy_jdom_kind(&d, choices) == 'a' && !s->finished) {
        uint32_t c0 = 0;
        for (uint32_t c = sy_jdom_first(&d, choices); c; c = sy_jdom_next(&d, c)) {
            int64_t ci = 0;
            uint32_t ix = sy_jdom_at(&d, c, "index");
            if (sy_jdom_kind(&d, c) == 'o' && (!ix || (sy_jdom_i64(&d, ix, &ci) && ci == 0))) {
                c0 = c;
                break;
            }
        }
        uint32_t delta = sy_jdom_at(&d, c0, "delta");
        if (sy_jdom_kind(&d, delta) == 'o' && (rc = choice_delta(s, out, &d, delta, a)))
            return rc;
        uint32_t fr = sy_jdom_at(&d, c0, "finish_reason");
        if (nonempty_str(&d, fr)) {
            size_t fl;
            const char *f = inner(&d, fr, &fl);
            if (fl >= sizeof s->finish)
                fl = sizeof s->finish - 1;
            memcpy(s->finish, f, fl);
            s->finish[fl] = 0;
            s->finished = 1;
            if ((rc = ev_block_stop(s, out)))
                return rc;
        }
    }
    uint32_t u = sy_jdom_top(&d, "usage");
    if (sy_jdom_kind(&d, u) == 'o') {
        struct usage x;
        read_usage(&d, u, &x);
        s->prompt = x.prompt;
        s->completion = x.completion;
        s->cache_read = x.cache_read;
        s->cache_write = x.cache_write;
        if (s->finished)
            s->usage_final = 1;
    }
    if (s->finished && s->usage_final) {
        rc = finish(s, out);
        return rc ? rc : SY_DONE;
    }
    return 0;
}

int sy_msg_stream_chunk(struct sy_msgstream *s, const char *data, size_t n, struct sy_buf *out)
{
    if (s->done)
        return SY_DONE;
    struct sy_arena a;
    sy_arena_init(&a);
    int rc = stream_chunk(s, data, n, out, &a);
    sy_arena_free(&a);
    return rc;
}

void sy_msg_stream_end(struct sy_msgstream *s, struct sy_buf *out)
{
    if (!s->done)
        finish(s, out);
}

void sy_msg_stream_error(struct sy_msgstream *s, int status, const char *message, size_t n, struct sy_buf *out)
{
    if (s->done)
        return;
    s->done = 1;
    ev_error(out, status, message ? message : "", message ? n : 0);
}

/* ---- errors ------------------------------------------------------------- */

const char *sy_msg_error_type(int status)
{
    switch (status) {
    case 400: return "invalid_request_error";
    case 401: return "authentication_error";
    case 402: return "billing_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 504: return "timeout_error";
    case 529: return "overloaded_error";
    default: return "api_error";
    }
}

void sy_msg_error_json(int status, const char *message, size_t n, struct sy_buf *out)
{
    struct sy_jw w;
    sy_jw_init(&w, out);
    sy_jw_obj(&w);
    W_KLIT(&w, "type", "error");
    sy_jw_key(&w, "error");
    sy_jw_obj(&w);
    sy_jw_key(&w, "type");
    sy_jw_cstr(&w, sy_msg_error_type(status));
    sy_jw_key(&w, "message");
    sy_jw_str(&w, message ? message : "", message ? n : 0);
    sy_jw_end(&w);
    sy_jw_end(&w);
}

void sy_msg_error_from_openai(int status, const char *body, size_t n, struct sy_buf *out)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    uint32_t err;
    if (body && sy_jdom_parse(&d, body, n, &a, 0) == 0 && d.n[0].type == 'o' && (err = sy_jdom_top(&d, "error"))) {
        size_t ml;
        const char *m = err_message(&d, err, &a, &ml);
        if (!status)
            status = sy_jdom_kind(&d, err) == 'o' ? err_status(&d, err) : 500;
        sy_msg_error_json(status, m, ml, out);
    } else {
        sy_msg_error_json(status ? status : 500, body ? body : "", body ? n : 0, out);
    }
    sy_arena_free(&a);
}

/* ---- the dialect table (dialect.h) -------------------------------------------- */

static int msg_native(const struct sy_adapter *ad, const char *provider)
{
    return ad == &sy_adapter_anthropic;
}

static int msg_to_chat(const struct sy_dl_in *in, struct sy_arena *a, struct sy_buf *out, struct sy_xerr *e)
{
    return sy_msg_to_openai(in->req, a, out, e);
}

static int msg_from_chat(const struct sy_dl_meta *m, const char *body, size_t n, struct sy_arena *a, struct sy_buf *out)
{
    return sy_msg_from_openai(body, n, m->model, m->id, m->req, a, out);
}

static void msg_stream_init(void *s, const struct sy_dl_meta *m)
{
    sy_msg_stream_init(s, m->model ? m->model : "", m->id, m->req);
}

static int msg_stream_chunk(void *s, const char *data, size_t n, struct sy_buf *out)
{
    return sy_msg_stream_chunk(s, data, n, out);
}

static void msg_stream_end(void *s, struct sy_buf *out)
{
    sy_msg_stream_end(s, out);
}

static void msg_stream_error(void *s, int status, const char *msg, size_t n, struct sy_buf *out)
{
    sy_msg_stream_error(s, status, msg, n, out);
}

const struct sy_dialect sy_dialect_messages = {
    .name = "messages",
    .id = SY_DL_MESSAGES,
    .native = msg_native,
    .native_keeps_stream = 1, /* an Anthropic client gets an Anthropic error event mid-stream */
    .to_chat = msg_to_chat,
    .from_chat = msg_from_chat,
    .stream_size = sizeof(struct sy_msgstream),
    .stream_init = msg_stream_init,
    .stream_chunk = msg_stream_chunk,
    .stream_end = msg_stream_end,
    .stream_error = msg_stream_error,
    .error = sy_msg_error_json,
};
