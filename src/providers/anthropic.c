/* anthropic.c - the Anthropic Messages API adapter (DESIGN §3), after LiteLLM's
 * llms/anthropic/chat/transformation.py (AnthropicConfig), chat/handler.py
 * (ModelResponseIterator) and prompt_templates/factory.py (anthropic_messages_pt).
 *
 * Request: POST {base}/v1/messages with x-api-key, anthropic-version and
 * anthropic-beta (the client's, plus the betas the features in use need).
 *
 *   OpenAI request                          Anthropic request
 *   --------------------------------------  ---------------------------------------------------
 *   model                                   model (vertex: none; anthropic_version first)
 *   messages role system | developer        system [{type:text,text,cache_control?}]
 *   messages role user, content "s"         {role:user,content:[{type:text,text,cache_control?}]}
 *     parts text | image_url | document      text | image{source{type:base64,media_type,data}
 *     | file                                 | source{type:url,url}} | as is | document
 *   messages role assistant                 {role:assistant,content:[thinking_blocks...,
 *     thinking_blocks, content, tool_calls    text..., tool_use{id,name,input:JSON(arguments)}]}
 *   messages role tool | function           user content [{type:tool_result,tool_use_id,content}]
 *   (consecutive user-side messages, and consecutive assistant messages, are merged into one;
 *    the text of a final assistant message is right-trimmed)
 *   max_completion_tokens | max_tokens      max_tokens (else thinking budget + 4096, else the
 *                                           deployment's model_info max_tokens, else 4096)
 *   stop "s" | ["s",..]                     stop_sequences ["s",..]
 *   temperature, top_p                      temperature, top_p
 *   user, metadata.user_id                  metadata {user_id} (not when an email / phone number)
 *   tools [{type:function,function}]        tools [{name,input_schema,description?,cache_control?}]
 *     computer_* | web_search* | bash* ...   the Anthropic tool; type url / mcp -> mcp_servers
 *   tool_choice auto|required|none|{fn}     tool_choice {type:auto|any|none|tool[,name]}
 *   parallel_tool_calls b                   tool_choice.disable_parallel_tool_use !b
 *   response_format json_schema             tools += json_tool_call{input_schema: schema},
 *                                           tool_choice {type:tool,name:json_tool_call}
 *                                           (sonnet-4.5 / opus-4.1: output_format{json_schema})
 *   reasoning_effort minimal|low|med|high   thinking {type:enabled,budget_tokens:128|1024|2048|4096}
 *   (thinking on, the last assistant turn   no thinking (LiteLLM's modify_params: Anthropic would
 *    with tool_calls without thinking)       refuse the turn with a 400)
 *                                           (opus-4.5 also output_config {effort})
 *   thinking                                thinking (as is)
 *   web_search_options                      tools += {type:web_search_20250305,name:web_search}
 *   extra_headers                           header lines
 *   top_k stop_sequences system container   as is (Anthropic request fields)
 *   context_management mcp_servers inference_geo output_config output_format cache_control
 *   stream (ctx)                            stream true
 *   logit_bias seed n>1 logprobs ...        400 UnsupportedParamsError (dropped: drop_params)
 *
 *   Anthropic response                      OpenAI chat.completion
 *   --------------------------------------  ---------------------------------------------------
 *   id, model                               id, model
 *   content[type text]                      message.content (joined; null when none)
 *   content[type tool_use|server_tool_use]  message.tool_calls[{id,function{name,arguments}}]
 *   content[thinking|redacted_thinking]     message.reasoning_content, message.thinking_blocks
 *   only a json_tool_call tool_use          message.content = its input; finish_reason stop
 *   stop_reason                             finish_reason (sy_oai_finish_reason)
 *   usage input/output/cache_creation/read  usage (prompt = input + cache_creation + cache_read)
 *
 *   Anthropic stream event                  OpenAI chunk(s) (oai.h)
 *   --------------------------------------  ---------------------------------------------------
 *   message_start{message{id,model,usage}}  st->id, st->model, usage; the role chunk
 *   content_block_start text{text}          content (when not empty)
 *   content_block_start tool_use{id,name}   tool_calls[{index:I,id,type,function{name,arguments:""}}]
 *   content_block_start redacted_thinking   thinking_blocks [{type:redacted_thinking,data}]
 *   content_block_delta text_delta          content
 *   content_block_delta input_json_delta    tool_calls[{index:I,function{arguments:partial_json}}]
 *   content_block_delta thinking_delta      reasoning_content + thinking_blocks [{thinking}]
 *   content_block_delta signature_delta     reasoning_content "" + thinking_blocks [{signature}]
 *   content_block_stop, tool without args   tool_calls[{index:I,function{arguments:"{}"}}]
 *   message_delta{delta{stop_reason},usage} finish chunk; usage
 *   message_stop                            SY_DONE
 *   error{error{type,message}}              st->err (LiteLLM: 500 InternalServerError)
 *   ping, citations_delta, other blocks     nothing
 *   (a json_tool_call tool's input streams as content; finish_reason is then "stop")
 *
 *   Anthropic error (status, type)          client status, LiteLLM class (sy_anthropic_map_error)
 *   --------------------------------------  ---------------------------------------------------
 *   400 invalid_request_error               400 BadRequestError ("prompt is too long":
 *                                           ContextWindowExceededError; "content filtering
 *                                           policy": ContentPolicyViolationError)
 *   401 authentication_error                401 AuthenticationError
 *   403 permission_error                    500 APIConnectionError (no 403 branch in LiteLLM)
 *   404 not_found_error                     404 NotFoundError
 *   413 request_too_large                   400 BadRequestError
 *   429 rate_limit_error                    429 RateLimitError
 *   500 api_error                           500 InternalServerError
 *   529 overloaded_error                    500 InternalServerError
 *   502 / 503 / 504                         502 BadGatewayError / 503 ServiceUnavailableError /
 *                                           504 Timeout; anything else 500 APIConnectionError
 *
 * Invariants: no I/O after configure(), no globals, no clock; memory from
 * x->arena (or a per-event arena on the stack) and the output buffers. The
 * stream state is struct sstate in st->priv. The file is long because
 * LiteLLM's Anthropic request mapping is (tools, files, thinking, betas ...);
 * decoding is the last quarter.
 */
#include "providers/anthropic.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "providers/betas.h"
#include "providers/oai.h"

#define DEFAULT_BASE       "https://api.anthropic.com"
#define DEFAULT_VERSION    "2023-06-01"
#define VERTEX_VERSION     "vertex-2023-10-16"
#define DEFAULT_MAX_TOKENS 4096 /* DEFAULT_ANTHROPIC_CHAT_MAX_TOKENS, and DEFAULT_MAX_TOKENS over a budget */
#define JSON_TOOL          "json_tool_call" /* RESPONSE_FORMAT_TOOL_NAME */

/* ---- small helpers ------------------------------------------------------ */

/* A string node's bytes: the source span when it has no escapes, else decoded
 * into a. NULL when i is not a string. */
static const char *sview(const struct sy_jdoc *d, uint32_t i, struct sy_arena *a, size_t *len)
{
    if (sy_jdom_type(d, i) != 's' || !i) {
        *len = 0;
        return NULL;
    }
    if (!d->n[i].esc) {
        *len = d->n[i].len - 2;
        return d->src + d->n[i].off + 1;
    }
    return sy_jdom_str(d, i, a, len);
}

static int is_type(const struct sy_jdoc *d, uint32_t i, char t)
{
    return i && sy_jdom_type(d, i) == t;
}

/* Member key of object node obj when it is a non-null value, else 0. obj 0
 * means "absent" here (so lookups chain: get(d, get(d, t, "function"), "name"));
 * the root's members are read with rget. */
static uint32_t get(const struct sy_jdoc *d, uint32_t obj, const char *key)
{
    uint32_t v = obj ? sy_jdom_get(d, obj, key) : 0;
    return v && sy_jdom_type(d, v) != 'z' ? v : 0;
}

static uint32_t rget(const struct sy_jdoc *d, const char *key)
{
    uint32_t v = sy_jdom_get(d, 0, key);
    return v && sy_jdom_type(d, v) != 'z' ? v : 0;
}

static int has_prefix(const char *s, size_t n, const char *p)
{
    size_t pl = strlen(p);
    return n >= pl && memcmp(s, p, pl) == 0;
}

static int contains(const char *s, size_t n, const char *needle)
{
    size_t nl = strlen(needle);
    return nl <= n && memmem(s, n, needle, nl) != NULL;
}

/* Python's str.isspace() for the ASCII range (what LiteLLM's rstrip and the
 * whitespace-only stop check see in practice). */
static int py_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

/* "k":<json literal> and "k":<node v of d> (writer shorthands). */
static void kraw(struct sy_jw *w, const char *k, const char *json)
{
    sy_jw_key(w, k);
    sy_jw_raw(w, json, strlen(json));
}

static void knode(struct sy_jw *w, const char *k, const struct sy_jdoc *d, uint32_t v)
{
    sy_jw_key(w, k);
    sy_jw_node(w, d, v);
}

/* ---- encode ------------------------------------------------------------- */

/* Betas a request's features need (common_utils.py get_anthropic_headers and
 * update_headers_with_optional_anthropic_beta), in the order they are added. */
static const char *const beta_names[] = {
    "prompt-caching-2024-07-31",     /* cache_control anywhere in messages */
    "computer-use-2025-01-24",       /* computer_20250124 */
    "computer-use-2024-10-22",       /* other computer_* */
    "files-api-2025-04-14",          /* a file_id in messages */
    "code-execution-2025-05-22",     /* (with the files API) */
    "mcp-client-2025-04-04",         /* mcp_servers */
    "advanced-tool-use-2025-11-20",  /* tool search, input_examples, programmatic tool calling */
    "effort-2025-11-24",             /* output_config.effort */
    "code-execution-2025-08-25",     /* code_execution_20250825 */
    "skills-2025-10-02",             /* container.skills */
    "web-fetch-2025-09-10",          /* web_fetch_* */
    "context-management-2025-06-27", /* memory_*, context_management */
    "structured-outputs-2025-11-13", /* output_format */
    "advanced-tool-use-2025-11-20",  /* tool search tools (vertex: tool-search-tool-2025-10-19) */
};
enum {
    B_CACHE = 1 << 0,
    B_COMPUTER_2501 = 1 << 1,
    B_COMPUTER_2410 = 1 << 2,
    B_FILES = (1 << 3) | (1 << 4),
    B_MCP = 1 << 5,
    B_ADV_TOOL = 1 << 6,
    B_EFFORT = 1 << 7,
    B_CODE_EXEC = 1 << 8,
    B_SKILLS = 1 << 9,
    B_WEB_FETCH = 1 << 10,
    B_CONTEXT = 1 << 11,
    B_STRUCTURED = 1 << 12,
    B_TOOL_SEARCH = 1 << 13,
    /* the betas LiteLLM puts in a Vertex body's anthropic_beta (get_anthropic_beta_list) */
    B_VERTEX = B_EFFORT | B_COMPUTER_2501 | B_COMPUTER_2410 | B_CACHE | B_FILES | B_MCP,
};

/* Anthropic request fields a client may send that LiteLLM passes through
 * (add_provider_specific_params_to_optional_params). Written after the mapped
 * members, they win over them as LiteLLM's do. */
static const char *const pass_keys[] = {
    "top_k",     "stop_sequences",     "system",        "output_config", "output_format", "mcp_servers",
    "container", "context_management", "inference_geo", "cache_control",
};
#define NPASS (sizeof pass_keys / sizeof pass_keys[0])
enum { PK_TOP_K, PK_STOP_SEQ, PK_SYSTEM, PK_OUTPUT_CONFIG, PK_OUTPUT_FORMAT, PK_MCP, PK_CONTAINER };

struct enc {
    const struct sy_xctx *x;
    const struct sy_jdoc *d;
    struct sy_arena *a;
    struct sy_jw w;
    struct sy_xerr *e;
    int vertex;
    unsigned beta;
    /* OpenAI members in use: the value node (0 = absent, null or dropped) */
    uint32_t messages, temperature, top_p, stop, max_tokens, max_completion_tokens, user, response_format, tools,
        tool_choice, parallel, extra_headers, reasoning_effort, thinking, web_search;
    uint32_t pass[NPASS];
    struct {
        const char *name;
        uint32_t v;
    } allowed[8]; /* unsupported params let through by allowed_openai_params */
    size_t nallowed;
    int effort_budget;  /* reasoning_effort's budget, 0 none */
    uint32_t effort;    /* opus-4.5: reasoning_effort's node, for output_config.effort */
    uint32_t rf_schema; /* response_format's JSON schema (forced tool or output_format) */
    int rf_output_format;
    int has_tools;
    int open; /* messages: a message is open in the writer */
};

/* LiteLLM's get_optional_params parameters, in its signature order (the order
 * UnsupportedParamsError lists them in). */
enum { P_SUP, P_UNSUP, P_N, P_SKIP };
#define F(m) offsetof(struct enc, m)
static const struct {
    const char *name;
    unsigned char kind;
    unsigned short off; /* P_SUP: the struct enc member */
} oai_params[] = {
    {"functions", P_UNSUP, 0},
    {"function_call", P_UNSUP, 0},
    {"temperature", P_SUP, F(temperature)},
    {"top_p", P_SUP, F(top_p)},
    {"n", P_N, 0},
    {"stream", P_SKIP, 0},
    {"stream_options", P_SKIP, 0},
    {"stop", P_SUP, F(stop)},
    {"max_tokens", P_SUP, F(max_tokens)},
    {"max_completion_tokens", P_SUP, F(max_completion_tokens)},
    {"modalities", P_UNSUP, 0},
    {"prediction", P_UNSUP, 0},
    {"audio", P_UNSUP, 0},
    {"presence_penalty", P_UNSUP, 0},
    {"frequency_penalty", P_UNSUP, 0},
    {"logit_bias", P_UNSUP, 0},
    {"user", P_SUP, F(user)},
    {"response_format", P_SUP, F(response_format)},
    {"seed", P_UNSUP, 0},
    {"tools", P_SUP, F(tools)},
    {"tool_choice", P_SUP, F(tool_choice)},
    {"max_retries", P_SKIP, 0},
    {"logprobs", P_UNSUP, 0},
    {"top_logprobs", P_UNSUP, 0},
    {"extra_headers", P_SUP, F(extra_headers)},
    {"parallel_tool_calls", P_SUP, F(parallel)},
    {"reasoning_effort", P_SUP, F(reasoning_effort)},
    {"verbosity", P_UNSUP, 0},
    {"thinking", P_SUP, F(thinking)},
    {"web_search_options", P_SUP, F(web_search)},
    {"safety_identifier", P_UNSUP, 0},
    {"service_tier", P_UNSUP, 0},
};
#undef F

static int fail_msg(struct enc *en, int rc, int status, const char *cls, const char *m, size_t n)
{
    sy_oai_err(en->e, status, m, n);
    snprintf(en->e->cls, sizeof en->e->cls, "%s", cls);
    return rc;
}

/* A 400 as LiteLLM reports an AnthropicError raised while building the request:
 * "litellm.BadRequestError: AnthropicException - <why>". */
static int bad(struct enc *en, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct enc *en, const char *fmt, ...)
{
    char m[sizeof en->e->message];
    int k = snprintf(m, sizeof m, "litellm.BadRequestError: AnthropicException - ");
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(m + k, sizeof m - (size_t)k, fmt, ap);
    va_end(ap);
    size_t n = (size_t)k + (r > 0 ? (size_t)r : 0);
    if (n >= sizeof m)
        n = sizeof m - 1;
    return fail_msg(en, SY_EINVAL, 400, "BadRequestError", m, n);
}

/* "Invalid Message passed in <message>" (factory.py BAD_MESSAGE_ERROR_STR). */
static int bad_message(struct enc *en, uint32_t msg)
{
    size_t n;
    const char *raw = sy_jdom_raw(en->d, msg, &n);
    return bad(en, "Invalid Message passed in %.*s", (int)(n > 300 ? 300 : n), raw);
}

static int in_str_list(const struct sy_jdoc *d, uint32_t arr, const char *s)
{
    if (!is_type(d, arr, 'a'))
        return 0;
    for (uint32_t i = sy_jdom_first(d, arr); i; i = sy_jdom_next(d, i))
        if (sy_jdom_str_eq(d, i, s))
            return 1;
    return 0;
}

/* Sort the request's top-level members into struct enc, as LiteLLM's
 * get_optional_params does: nulls are defaults, additional_drop_params drop a
 * member whatever it is, unsupported OpenAI parameters are a 400 unless
 * drop_params (deployment or request) or allowed_openai_params. */
static int scan_params(struct enc *en)
{
    const struct sy_jdoc *d = en->d;
    uint32_t req_drop = rget(d, "additional_drop_params");
    uint32_t allowed = rget(d, "allowed_openai_params");
    int drop = en->x->pc && en->x->pc->drop_params, b = 0;
    if (sy_jdom_bool(d, rget(d, "drop_params"), &b) && b)
        drop = 1;
    char unsup[512];
    size_t ul = 0;
    const char *first = NULL;
    for (size_t k = 0; k < sizeof oai_params / sizeof oai_params[0]; k++) {
        const char *name = oai_params[k].name;
        uint32_t v = rget(d, name);
        if (!v || sy_oai_drop_extra(en->x, name) || in_str_list(d, req_drop, name))
            continue;
        double n;
        switch (oai_params[k].kind) {
        case P_SKIP: continue;
        case P_SUP: *(uint32_t *)((char *)en + oai_params[k].off) = v; continue;
        case P_N:
            if (sy_jdom_num(d, v, &n) && n == 1)
                continue;
            /* fall through */
        default:
            if (in_str_list(d, allowed, name)) {
                if (en->nallowed < sizeof en->allowed / sizeof en->allowed[0]) {
                    en->allowed[en->nallowed].name = name;
                    en->allowed[en->nallowed++].v = v;
                }
                continue;
            }
            if (drop)
                continue;
            if (!first)
                first = name;
            /* "a', 'b": sy_oai_unsupported quotes it into ['a', 'b'] as LiteLLM lists them */
            int r = snprintf(unsup + ul, sizeof unsup - ul, "%s%s", ul ? "', '" : "", name);
            if (r > 0 && (size_t)r < sizeof unsup - ul)
                ul += (size_t)r;
        }
    }
    if (first && !sy_oai_unsupported(en->x, "anthropic", unsup, en->e)) {
        snprintf(en->e->param, sizeof en->e->param, "%s", first);
        return SY_EUNSUPPORTED;
    }
    for (size_t k = 0; k < NPASS; k++)
        if (!sy_oai_drop_extra(en->x, pass_keys[k]) && !in_str_list(d, req_drop, pass_keys[k]))
            en->pass[k] = rget(d, pass_keys[k]);
    return 0;
}

/* ---- messages ----------------------------------------------------------- */

static void cache_control(struct enc *en, uint32_t obj)
{
    uint32_t cc = get(en->d, obj, "cache_control");
    if (is_type(en->d, cc, 'o')) {
        sy_jw_key(&en->w, "cache_control");
        sy_jw_node(&en->w, en->d, cc);
        en->beta |= B_CACHE;
    }
}

static void open_msg(struct enc *en, const char *role)
{
    if (en->open)
        return;
    sy_jw_obj(&en->w);
    sy_jw_key(&en->w, "role");
    sy_jw_cstr(&en->w, role);
    sy_jw_key(&en->w, "content");
    sy_jw_arr(&en->w);
    en->open = 1;
}

static void close_msg(struct enc *en)
{
    if (!en->open)
        return;
    sy_jw_end(&en->w);
    sy_jw_end(&en->w);
    en->open = 0;
}

/* {"type":"text","text":s} for string node s, right-trimmed when rstrip. */
static void text_block(struct enc *en, uint32_t s, int rstrip)
{
    sy_jw_obj(&en->w);
    kraw(&en->w, "type", "\"text\"");
    sy_jw_key(&en->w, "text");
    if (rstrip) {
        size_t n;
        const char *t = sview(en->d, s, en->a, &n);
        while (n && py_space((unsigned char)t[n - 1]))
            n--;
        sy_jw_str(&en->w, t, n);
    } else {
        sy_jw_node(&en->w, en->d, s);
    }
}

/* Tool ids must match ^[a-zA-Z0-9_-]+$ (_sanitize_anthropic_tool_use_id): every
 * other character (a code point, not a byte) becomes '_'. */
static void tool_id(struct enc *en, const char *id, size_t n)
{
    size_t k = 0;
    while (k < n && ((id[k] >= 'a' && id[k] <= 'z') || (id[k] >= 'A' && id[k] <= 'Z') ||
                     (id[k] >= '0' && id[k] <= '9') || id[k] == '_' || id[k] == '-'))
        k++;
    if (k == n && n) {
        sy_jw_str(&en->w, id, n);
        return;
    }
    if (!n) {
        sy_jw_str(&en->w, "tool_use_id", 11);
        return;
    }
    char *o = sy_arena_alloc(en->a, n);
    size_t ol = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)id[i];
        if ((c & 0xC0) == 0x80)
            continue; /* continuation byte of a replaced code point */
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        o[ol++] = ok ? (char)c : '_';
    }
    sy_jw_str(&en->w, o, ol);
}

/* A data: URL's media type and payload, as convert_to_anthropic_image_obj:
 * url.split("data:")[1].split(";base64,") must give exactly two parts. */
static int split_data_url(const char *u, size_t n, const char **mt, size_t *ml, const char **dt, size_t *dl)
{
    const char *p = memmem(u, n, "data:", 5);
    if (!p)
        return -1;
    p += 5;
    size_t rest = n - (size_t)(p - u);
    const char *q = memmem(p, rest, "data:", 5);
    if (q)
        rest = (size_t)(q - p);
    const char *b = memmem(p, rest, ";base64,", 8);
    if (!b)
        return -1;
    const char *after = b + 8;
    size_t al = rest - (size_t)(after - p);
    if (memmem(after, al, ";base64,", 8))
        return -1;
    *mt = p;
    *ml = (size_t)(b - p);
    *dt = after;
    *dl = al;
    return 0;
}

static const char IMG_FMT_ERR[] =
    "Image url not in expected format. Example Expected input - \"image_url\": "
    "\"data:image/jpeg;base64,{base64_image}\". Supported formats - ['image/jpeg', 'image/png', 'image/gif', "
    "'image/webp'].";

/* source {type:base64,media_type,data} from a data: URL (format, when a
 * string node, overrides the media type). */
static int base64_source(struct enc *en, const char *u, size_t n, uint32_t format)
{
    const char *mt, *dt;
    size_t ml, dl;
    if (split_data_url(u, n, &mt, &ml, &dt, &dl))
        return bad(en, "%s", IMG_FMT_ERR);
    sy_jw_key(&en->w, "source");
    sy_jw_obj(&en->w);
    kraw(&en->w, "type", "\"base64\"");
    sy_jw_key(&en->w, "media_type");
    if (is_type(en->d, format, 's')) {
        sy_jw_node(&en->w, en->d, format);
    } else {
        char *m = sy_arena_alloc(en->a, ml + 1); /* media_type.replace("\\/", "/") */
        size_t k = 0;
        for (size_t i = 0; i < ml; i++) {
            if (mt[i] == '\\' && i + 1 < ml && mt[i + 1] == '/')
                continue;
            m[k++] = mt[i];
        }
        sy_jw_str(&en->w, m, k);
    }
    sy_jw_key(&en->w, "data");
    sy_jw_str(&en->w, dt, dl);
    sy_jw_end(&en->w);
    return 0;
}

/* An OpenAI image_url value (a string or {url, format?}) as an image block.
 * http(s) URLs stay URLs (LiteLLM downloads http:// ones; we never fetch). */
static int image_block(struct enc *en, uint32_t iu, uint32_t part)
{
    const struct sy_jdoc *d = en->d;
    uint32_t url = iu, format = 0;
    if (is_type(d, iu, 'o')) {
        url = get(d, iu, "url");
        format = get(d, iu, "format");
    }
    size_t n;
    const char *u = sview(d, url, en->a, &n);
    if (!u)
        return bad(en, "%s", IMG_FMT_ERR);
    sy_jw_obj(&en->w);
    kraw(&en->w, "type", "\"image\"");
    if (has_prefix(u, n, "https://") || has_prefix(u, n, "http://")) {
        sy_jw_key(&en->w, "source");
        sy_jw_obj(&en->w);
        kraw(&en->w, "type", "\"url\"");
        knode(&en->w, "url", d, url);
        sy_jw_end(&en->w);
    } else if (base64_source(en, u, n, format)) {
        return SY_EINVAL;
    }
    if (part)
        cache_control(en, part);
    sy_jw_end(&en->w);
    return 0;
}

/* An OpenAI file part {file:{file_data|file_id, format?}}
 * (anthropic_process_openai_file_message). */
static int file_block(struct enc *en, uint32_t part)
{
    const struct sy_jdoc *d = en->d;
    uint32_t f = get(d, part, "file");
    uint32_t data = get(d, f, "file_data"), id = get(d, f, "file_id"), format = get(d, f, "format");
    size_t n, fl = 0;
    const char *s;
    const char *fmt = sview(d, format, en->a, &fl);
    if ((s = sview(d, data, en->a, &n)) && n) {
        sy_jw_obj(&en->w);
        kraw(&en->w, "type", "\"document\"");
        if (has_prefix(s, n, "https://") || has_prefix(s, n, "http://")) {
            sy_jw_key(&en->w, "source");
            sy_jw_obj(&en->w);
            kraw(&en->w, "type", "\"url\"");
            knode(&en->w, "url", d, data);
            sy_jw_end(&en->w);
        } else if (base64_source(en, s, n, format)) {
            return SY_EINVAL;
        }
        sy_jw_end(&en->w);
        return 0;
    }
    if ((s = sview(d, id, en->a, &n)) && n) {
        const char *block, *src;
        if (fmt && fl) {
            static const char *const images[] = {"image/jpeg", "image/png", "image/gif", "image/webp"};
            int img = 0;
            for (size_t i = 0; i < 4; i++)
                img |= fl == strlen(images[i]) && !memcmp(fmt, images[i], fl);
            if ((fl == 15 && !memcmp(fmt, "application/pdf", 15)) || (fl == 10 && !memcmp(fmt, "text/plain", 10)))
                block = "document", src = "file";
            else if (img)
                block = "image", src = "file";
            else
                block = "container_upload", src = NULL;
        } else if (has_prefix(s, n, "http")) {
            block = "document", src = "url";
        } else {
            block = "container_upload", src = NULL;
        }
        sy_jw_obj(&en->w);
        sy_jw_key(&en->w, "type");
        sy_jw_cstr(&en->w, block);
        if (!src) {
            knode(&en->w, "file_id", d, id);
        } else {
            sy_jw_key(&en->w, "source");
            sy_jw_obj(&en->w);
            sy_jw_key(&en->w, "type");
            sy_jw_cstr(&en->w, src);
            sy_jw_key(&en->w, *src == 'f' ? "file_id" : "url");
            sy_jw_node(&en->w, d, id);
            sy_jw_end(&en->w);
        }
        sy_jw_end(&en->w);
        if (!src || *src == 'f')
            en->beta |= B_FILES; /* files API ids (a URL is not one) */
        return 0;
    }
    size_t rn;
    const char *raw = sy_jdom_raw(d, part, &rn);
    return bad(en, "Either file_data or file_id must be present in the file message: %.*s", (int)(rn > 300 ? 300 : rn),
               raw);
}

/* One user message's content blocks (string, or text / image_url / document /
 * file parts; other part types are skipped as LiteLLM does). */
static int user_content(struct enc *en, uint32_t msg)
{
    const struct sy_jdoc *d = en->d;
    uint32_t c = get(d, msg, "content");
    if (is_type(d, c, 's')) {
        open_msg(en, "user");
        text_block(en, c, 0);
        cache_control(en, msg);
        sy_jw_end(&en->w);
        return 0;
    }
    if (!is_type(d, c, 'a'))
        return 0;
    for (uint32_t p = sy_jdom_first(d, c); p; p = sy_jdom_next(d, p)) {
        if (!is_type(d, p, 'o'))
            return bad_message(en, msg);
        uint32_t t = get(d, p, "type");
        if (sy_jdom_str_eq(d, t, "text")) {
            uint32_t s = get(d, p, "text");
            if (!is_type(d, s, 's'))
                return bad_message(en, msg);
            open_msg(en, "user");
            text_block(en, s, 0);
            cache_control(en, p);
            sy_jw_end(&en->w);
        } else if (sy_jdom_str_eq(d, t, "image_url")) {
            open_msg(en, "user");
            if (image_block(en, get(d, p, "image_url"), p))
                return SY_EINVAL;
        } else if (sy_jdom_str_eq(d, t, "document")) {
            open_msg(en, "user");
            sy_jw_node(&en->w, d, p);
        } else if (sy_jdom_str_eq(d, t, "file")) {
            open_msg(en, "user");
            if (file_block(en, p))
                return SY_EINVAL;
        }
    }
    return 0;
}

/* A deterministic tool id for the legacy function_call / function role pair
 * (LiteLLM makes a uuid4 on each side, which can never match). */
static void function_id(struct enc *en, const struct sy_jdoc *d, uint32_t name)
{
    size_t n = 0;
    const char *s = sview(d, name, en->a, &n);
    char *id = sy_arena_alloc(en->a, n + 6);
    memcpy(id, "call_", 5);
    if (s)
        memcpy(id + 5, s, n);
    tool_id(en, id, n + 5);
}

/* role tool / function -> a tool_result block (convert_to_anthropic_tool_result). */
static int tool_result(struct enc *en, uint32_t msg, int function)
{
    const struct sy_jdoc *d = en->d;
    uint32_t id = get(d, msg, "tool_call_id");
    if (!is_type(d, id, 's') && !function)
        return bad_message(en, msg);
    open_msg(en, "user");
    sy_jw_obj(&en->w);
    kraw(&en->w, "type", "\"tool_result\"");
    sy_jw_key(&en->w, "tool_use_id");
    if (is_type(d, id, 's')) {
        size_t n;
        const char *s = sview(d, id, en->a, &n);
        tool_id(en, s, n);
    } else {
        function_id(en, d, get(d, msg, "name"));
    }
    sy_jw_key(&en->w, "content");
    uint32_t c = get(d, msg, "content");
    if (is_type(d, c, 's')) {
        sy_jw_node(&en->w, d, c);
    } else if (is_type(d, c, 'a')) {
        sy_jw_arr(&en->w);
        for (uint32_t p = sy_jdom_first(d, c); p; p = sy_jdom_next(d, p)) {
            if (!is_type(d, p, 'o'))
                return bad_message(en, msg);
            uint32_t t = get(d, p, "type");
            if (sy_jdom_str_eq(d, t, "text")) {
                uint32_t s = get(d, p, "text");
                if (!is_type(d, s, 's'))
                    return bad_message(en, msg);
                text_block(en, s, 0);
                cache_control(en, p);
                sy_jw_end(&en->w);
            } else if (sy_jdom_str_eq(d, t, "image_url")) {
                if (image_block(en, get(d, p, "image_url"), 0))
                    return SY_EINVAL;
            }
        }
        sy_jw_end(&en->w);
    } else {
        sy_jw_raw(&en->w, "\"\"", 2);
    }
    cache_control(en, msg);
    sy_jw_end(&en->w);
    return 0;
}

/* "input": the JSON text of an arguments string (invalid JSON is a 400;
 * an empty string is {}, as LiteLLM's function_call path). */
static int tool_input(struct enc *en, uint32_t args, uint32_t msg)
{
    size_t n = 0;
    const char *s = sview(en->d, args, en->a, &n);
    if (args && !s)
        return bad_message(en, msg);
    sy_jw_key(&en->w, "input");
    if (!n) {
        sy_jw_raw(&en->w, "{}", 2);
        return 0;
    }
    struct sy_jdoc ad;
    if (sy_jdom_parse(&ad, s, n, en->a, 0))
        return bad(en, "Invalid tool call arguments, not JSON (%s at offset %zu): %.*s", ad.err ? ad.err : "error",
                   ad.err_off, (int)(n > 200 ? 200 : n), s);
    sy_jw_raw(&en->w, ad.src + ad.n[0].off, ad.n[0].len);
    return 0;
}

/* One assistant message: thinking_blocks, content, tool_calls, function_call. */
static int assistant_content(struct enc *en, uint32_t msg, int final)
{
    const struct sy_jdoc *d = en->d;
    uint32_t tb = get(d, msg, "thinking_blocks");
    if (is_type(d, tb, 'a')) {
        for (uint32_t b = sy_jdom_first(d, tb); b; b = sy_jdom_next(d, b)) {
            open_msg(en, "assistant");
            sy_jw_node(&en->w, d, b);
        }
    }
    uint32_t c = get(d, msg, "content");
    if (is_type(d, c, 'a')) {
        for (uint32_t p = sy_jdom_first(d, c); p; p = sy_jdom_next(d, p)) {
            if (!is_type(d, p, 'o'))
                return bad_message(en, msg);
            uint32_t t = get(d, p, "type");
            uint32_t th = get(d, p, "thinking"), tx = get(d, p, "text");
            if (sy_jdom_str_eq(d, t, "thinking") && is_type(d, th, 's') && d->n[th].len > 2) {
                open_msg(en, "assistant");
                sy_jw_node(&en->w, d, p);
            } else if (sy_jdom_str_eq(d, t, "text") && is_type(d, tx, 's') && d->n[tx].len > 2) {
                open_msg(en, "assistant");
                text_block(en, tx, final);
                cache_control(en, p);
                sy_jw_end(&en->w);
            }
        }
    } else if (is_type(d, c, 's') && d->n[c].len > 2) {
        open_msg(en, "assistant");
        text_block(en, c, final);
        cache_control(en, msg);
        sy_jw_end(&en->w);
    }
    uint32_t tc = get(d, msg, "tool_calls");
    if (is_type(d, tc, 'a')) {
        for (uint32_t t = sy_jdom_first(d, tc); t; t = sy_jdom_next(d, t)) {
            if (!is_type(d, t, 'o'))
                return bad_message(en, msg);
            if (!sy_jdom_str_eq(d, get(d, t, "type"), "function"))
                continue;
            uint32_t id = get(d, t, "id"), fn = get(d, t, "function");
            uint32_t name = get(d, fn, "name");
            if (!is_type(d, id, 's') || !is_type(d, name, 's'))
                return bad_message(en, msg);
            size_t il;
            const char *is = sview(d, id, en->a, &il);
            int server = has_prefix(is, il, "srvtoolu_");
            open_msg(en, "assistant");
            sy_jw_obj(&en->w);
            sy_jw_key(&en->w, "type");
            sy_jw_cstr(&en->w, server ? "server_tool_use" : "tool_use");
            sy_jw_key(&en->w, "id");
            tool_id(en, is, il);
            knode(&en->w, "name", d, name);
            if (tool_input(en, get(d, fn, "arguments"), msg))
                return SY_EINVAL;
            if (!server)
                cache_control(en, t);
            sy_jw_end(&en->w);
        }
    }
    uint32_t fc = get(d, msg, "function_call");
    if (is_type(d, fc, 'o')) {
        uint32_t name = get(d, fc, "name");
        open_msg(en, "assistant");
        sy_jw_obj(&en->w);
        kraw(&en->w, "type", "\"tool_use\"");
        sy_jw_key(&en->w, "id");
        function_id(en, d, name);
        sy_jw_key(&en->w, "name");
        if (is_type(d, name, 's'))
            sy_jw_node(&en->w, d, name);
        else
            sy_jw_raw(&en->w, "\"\"", 2);
        if (tool_input(en, get(d, fc, "arguments"), msg))
            return SY_EINVAL;
        sy_jw_end(&en->w);
    }
    return 0;
}

static int role_is(const struct sy_jdoc *d, uint32_t msg, const char *r)
{
    return sy_jdom_str_eq(d, get(d, msg, "role"), r);
}

/* A system (or developer) message that goes to `system` (translate_system_message):
 * string or list content. Others stay in the conversation (and are refused there). */
static int is_system(const struct sy_jdoc *d, uint32_t msg)
{
    if (!role_is(d, msg, "system") && !role_is(d, msg, "developer"))
        return 0;
    uint32_t c = get(d, msg, "content");
    return is_type(d, c, 's') || is_type(d, c, 'a');
}

/* "system": [...] when the system messages give at least one text block
 * (*nsys: how many were written). */
static int write_system(struct enc *en, int *nsys)
{
    const struct sy_jdoc *d = en->d;
    int any = 0;
    for (uint32_t m = sy_jdom_first(d, en->messages); m; m = sy_jdom_next(d, m)) {
        if (!is_system(d, m))
            continue;
        uint32_t c = get(d, m, "content");
        if (is_type(d, c, 's')) {
            if (d->n[c].len <= 2)
                continue; /* "" is skipped (Anthropic refuses empty text blocks) */
            if (!any++) {
                sy_jw_key(&en->w, "system");
                sy_jw_arr(&en->w);
            }
            text_block(en, c, 0);
            cache_control(en, m);
            sy_jw_end(&en->w);
            continue;
        }
        for (uint32_t p = sy_jdom_first(d, c); p; p = sy_jdom_next(d, p)) {
            if (!is_type(d, p, 'o'))
                return bad_message(en, m);
            uint32_t t = get(d, p, "type"), s = get(d, p, "text");
            if (!sy_jdom_str_eq(d, t, "text") || !is_type(d, s, 's'))
                return bad(en, "System message content parts must be text parts; got %.*s", 200,
                           sy_jdom_raw(d, p, &(size_t){0}));
            if (d->n[s].len <= 2)
                continue;
            if (!any++) {
                sy_jw_key(&en->w, "system");
                sy_jw_arr(&en->w);
            }
            text_block(en, s, 0);
            cache_control(en, p);
            sy_jw_end(&en->w);
        }
    }
    if (any)
        sy_jw_end(&en->w);
    *nsys = any;
    return 0;
}

/* "messages": user / assistant turns, consecutive same-side messages merged
 * (anthropic_messages_pt). */
static int write_messages(struct enc *en)
{
    const struct sy_jdoc *d = en->d;
    uint32_t last_user = 0, nonsys = 0;
    for (uint32_t m = sy_jdom_first(d, en->messages); m; m = sy_jdom_next(d, m)) {
        if (!is_type(d, m, 'o'))
            return bad(en, "Invalid Message passed in %.*s", 100, sy_jdom_raw(d, m, &(size_t){0}));
        if (is_system(d, m))
            continue;
        nonsys++;
        if (role_is(d, m, "user") || role_is(d, m, "tool") || role_is(d, m, "function"))
            last_user = m;
    }
    if (!nonsys)
        return bad(en, "Anthropic requires at least one non-system message. Either provide one, or set "
                       "`litellm.modify_params = True` // `litellm_settings::modify_params: True` to add the dummy "
                       "user message - {'role': 'user', 'content': 'Please continue.'}.");
    sy_jw_key(&en->w, "messages");
    sy_jw_arr(&en->w);
    int side = 0; /* 1 user, 2 assistant */
    for (uint32_t m = sy_jdom_first(d, en->messages); m; m = sy_jdom_next(d, m)) {
        if (is_system(d, m))
            continue;
        int s, rc = 0;
        if (role_is(d, m, "user") || role_is(d, m, "tool") || role_is(d, m, "function"))
            s = 1;
        else if (role_is(d, m, "assistant"))
            s = 2;
        else
            return bad_message(en, m);
        if (s != side)
            close_msg(en);
        side = s;
        if (role_is(d, m, "user"))
            rc = user_content(en, m);
        else if (s == 1)
            rc = tool_result(en, m, role_is(d, m, "function"));
        else
            rc = assistant_content(en, m, m > last_user);
        if (rc)
            return rc;
    }
    close_msg(en);
    sy_jw_end(&en->w);
    return 0;
}

/* ---- tools -------------------------------------------------------------- */

static const char *const schema_keys[] = {"type", "properties", "additionalProperties", "required", "$defs", "strict"};

/* OpenAI function parameters -> input_schema, keeping AnthropicInputSchema's keys. */
static void input_schema(struct enc *en, uint32_t params)
{
    const struct sy_jdoc *d = en->d;
    sy_jw_key(&en->w, "input_schema");
    if (!is_type(d, params, 'o')) {
        sy_jw_raw(&en->w, "{\"type\":\"object\",\"properties\":{}}", 33);
        return;
    }
    sy_jw_obj(&en->w);
    for (uint32_t k = sy_jdom_first(d, params); k; k = sy_jdom_next_key(d, k)) {
        for (size_t i = 0; i < sizeof schema_keys / sizeof schema_keys[0]; i++) {
            if (sy_jdom_str_eq(d, k, schema_keys[i])) {
                sy_jw_key(&en->w, schema_keys[i]);
                sy_jw_node(&en->w, d, sy_jdom_val(k));
                break;
            }
        }
    }
    sy_jw_end(&en->w);
}

/* Members a function tool carries over (cache_control, defer_loading,
 * allowed_callers, input_examples): from the tool, else from its function. */
static int tool_extras(struct enc *en, uint32_t tool, uint32_t fn, int computer)
{
    const struct sy_jdoc *d = en->d;
    static const char *const keys[] = {"cache_control", "defer_loading", "allowed_callers", "input_examples"};
    for (size_t i = 0; i < 4; i++) {
        if (computer && i > 0)
            break;
        uint32_t v = get(d, tool, keys[i]);
        if (!v)
            v = get(d, fn, keys[i]);
        if (!v)
            continue;
        if (i == 0 && !is_type(d, v, 'o'))
            continue;
        if (i == 1 && sy_jdom_type(d, v) != 't' && sy_jdom_type(d, v) != 'f')
            return bad(en, "defer_loading must be a boolean");
        if (i >= 2 && !is_type(d, v, 'a'))
            continue;
        if (i == 2 && in_str_list(d, v, "code_execution_20250825"))
            en->beta |= B_ADV_TOOL;
        if (i == 3 && d->n[v].kids)
            en->beta |= B_ADV_TOOL;
        sy_jw_key(&en->w, keys[i]);
        sy_jw_node(&en->w, d, v);
    }
    return 0;
}

static const char *const hosted_tools[] = {"web_search",     "bash",      "text_editor",
                                           "code_execution", "web_fetch", "memory"};

/* One OpenAI tool -> an Anthropic tool (_map_tool_helper); type url / mcp go
 * to mcp_servers instead and are skipped here. */
static int write_tool(struct enc *en, uint32_t tool)
{
    const struct sy_jdoc *d = en->d;
    if (!is_type(d, tool, 'o'))
        return bad(en, "Unsupported tool: %.*s", 200, sy_jdom_raw(d, tool, &(size_t){0}));
    if (sy_jdom_get(d, tool, "input_schema")) { /* already Anthropic's format */
        sy_jw_node(&en->w, d, tool);
        return 0;
    }
    size_t tl;
    const char *t = sview(d, get(d, tool, "type"), en->a, &tl);
    if (!t)
        return bad(en, "Missing required parameter: type (tool %.*s)", 200, sy_jdom_raw(d, tool, &(size_t){0}));
    uint32_t fn = get(d, tool, "function");
    if ((tl == 8 && !memcmp(t, "function", 8)) || (tl == 6 && !memcmp(t, "custom", 6))) {
        uint32_t name = get(d, fn, "name");
        if (!is_type(d, name, 's'))
            return bad(en, "Missing required parameter: function.name");
        sy_jw_obj(&en->w);
        knode(&en->w, "name", d, name);
        input_schema(en, get(d, fn, "parameters"));
        uint32_t desc = get(d, fn, "description");
        if (desc) {
            knode(&en->w, "description", d, desc);
        }
        if (tool_extras(en, tool, fn, 0))
            return SY_EINVAL;
        sy_jw_end(&en->w);
        return 0;
    }
    if (has_prefix(t, tl, "computer_")) {
        uint32_t p = get(d, fn, "parameters");
        if (!is_type(d, p, 'o'))
            return bad(en, "Missing required parameter: parameters");
        uint32_t w = get(d, p, "display_width_px"), h = get(d, p, "display_height_px"),
                 dn = get(d, p, "display_number");
        if (!w || !h)
            return bad(en, "Missing required parameter: display_width_px or display_height_px");
        uint32_t name = get(d, fn, "name");
        sy_jw_obj(&en->w);
        sy_jw_key(&en->w, "type");
        sy_jw_str(&en->w, t, tl);
        sy_jw_key(&en->w, "name");
        if (is_type(d, name, 's'))
            sy_jw_node(&en->w, d, name);
        else
            sy_jw_raw(&en->w, "\"computer\"", 10);
        knode(&en->w, "display_width_px", d, w);
        knode(&en->w, "display_height_px", d, h);
        if (dn) {
            knode(&en->w, "display_number", d, dn);
        }
        if (tool_extras(en, tool, fn, 1))
            return SY_EINVAL;
        sy_jw_end(&en->w);
        en->beta |= tl == 17 && !memcmp(t, "computer_20250124", 17) ? B_COMPUTER_2501 : B_COMPUTER_2410;
        return 0;
    }
    for (size_t i = 0; i < sizeof hosted_tools / sizeof hosted_tools[0]; i++) {
        if (!has_prefix(t, tl, hosted_tools[i]))
            continue;
        uint32_t name = get(d, tool, "name");
        if (!name)
            name = get(d, fn, "name");
        if (!is_type(d, name, 's'))
            return bad(en, "Missing required parameter: name");
        sy_jw_obj(&en->w);
        sy_jw_key(&en->w, "type");
        sy_jw_str(&en->w, t, tl);
        knode(&en->w, "name", d, name);
        for (uint32_t k = sy_jdom_first(d, tool); k; k = sy_jdom_next_key(d, k)) {
            if (sy_jdom_str_eq(d, k, "type") || sy_jdom_str_eq(d, k, "name") || sy_jdom_str_eq(d, k, "function"))
                continue;
            size_t kl;
            const char *ks = sview(d, k, en->a, &kl);
            sy_jw_keyn(&en->w, ks, kl);
            sy_jw_node(&en->w, d, sy_jdom_val(k));
        }
        sy_jw_end(&en->w);
        if (tl == 23 && !memcmp(t, "code_execution_20250825", 23))
            en->beta |= B_CODE_EXEC;
        else if (i == 4)
            en->beta |= B_WEB_FETCH;
        else if (i == 5)
            en->beta |= B_CONTEXT;
        return 0;
    }
    if ((tl == 3 && !memcmp(t, "url", 3)) || (tl == 3 && !memcmp(t, "mcp", 3)))
        return 0;
    if (has_prefix(t, tl, "tool_search_tool_regex_20251119") || has_prefix(t, tl, "tool_search_tool_bm25_20251119")) {
        int regex = t[17] == 'r';
        uint32_t name = get(d, tool, "name");
        if (name && !is_type(d, name, 's'))
            return bad(en, "Tool search tool must have a valid name");
        sy_jw_obj(&en->w);
        sy_jw_key(&en->w, "type");
        sy_jw_str(&en->w, t, tl);
        sy_jw_key(&en->w, "name");
        if (name)
            sy_jw_node(&en->w, d, name);
        else
            sy_jw_cstr(&en->w, regex ? "tool_search_tool_regex" : "tool_search_tool_bm25");
        sy_jw_end(&en->w);
        en->beta |= B_TOOL_SEARCH;
        return 0;
    }
    return bad(en, "Unsupported tool type: %.*s", (int)(tl > 100 ? 100 : tl), t);
}

/* An OpenAI MCP tool {type:mcp,server_url,server_label,allowed_tools?,headers?}
 * -> {type:url,url,name,tool_configuration?,authorization_token?}. */
static void mcp_server(struct enc *en, uint32_t tool)
{
    const struct sy_jdoc *d = en->d;
    if (sy_jdom_str_eq(d, get(d, tool, "type"), "url")) {
        sy_jw_node(&en->w, d, tool);
        return;
    }
    sy_jw_obj(&en->w);
    kraw(&en->w, "type", "\"url\"");
    knode(&en->w, "url", d, get(d, tool, "server_url"));
    knode(&en->w, "name", d, get(d, tool, "server_label"));
    uint32_t at = get(d, tool, "allowed_tools");
    if (at) {
        sy_jw_key(&en->w, "tool_configuration");
        sy_jw_obj(&en->w);
        knode(&en->w, "allowed_tools", d, at);
        sy_jw_end(&en->w);
    }
    size_t n;
    const char *auth = sview(d, get(d, get(d, tool, "headers"), "Authorization"), en->a, &n);
    if (auth) {
        if (has_prefix(auth, n, "Bearer ")) /* .replace("Bearer ", "") */
            auth += 7, n -= 7;
        sy_jw_key(&en->w, "authorization_token");
        sy_jw_str(&en->w, auth, n);
    }
    sy_jw_end(&en->w);
}

/* web_search_options -> the hosted web_search tool (map_web_search_tool). */
static void web_search_tool(struct enc *en)
{
    const struct sy_jdoc *d = en->d;
    sy_jw_obj(&en->w);
    kraw(&en->w, "type", "\"web_search_20250305\"");
    kraw(&en->w, "name", "\"web_search\"");
    uint32_t ap = get(d, get(d, en->web_search, "user_location"), "approximate");
    if (is_type(d, ap, 'o')) {
        static const char *const keys[] = {"city", "country", "region", "timezone"};
        sy_jw_key(&en->w, "user_location");
        sy_jw_obj(&en->w);
        kraw(&en->w, "type", "\"approximate\"");
        for (uint32_t k = sy_jdom_first(d, ap); k; k = sy_jdom_next_key(d, k))
            for (size_t i = 0; i < 4; i++)
                if (sy_jdom_str_eq(d, k, keys[i])) {
                    sy_jw_key(&en->w, keys[i]);
                    sy_jw_node(&en->w, d, sy_jdom_val(k));
                }
        sy_jw_end(&en->w);
    }
    uint32_t sz = get(d, en->web_search, "search_context_size");
    int uses = sy_jdom_str_eq(d, sz, "low")      ? 1
               : sy_jdom_str_eq(d, sz, "medium") ? 5
               : sy_jdom_str_eq(d, sz, "high")   ? 10
                                                 : 0;
    if (uses) {
        sy_jw_key(&en->w, "max_uses");
        sy_jw_int(&en->w, uses);
    }
    sy_jw_end(&en->w);
}

/* {"type":"object", <schema members>}: the json_tool_call tool's input_schema
 * (_create_json_tool_call_for_response_format: {"type":"object"}.update(schema)). */
static void json_tool(struct enc *en)
{
    const struct sy_jdoc *d = en->d;
    sy_jw_obj(&en->w);
    kraw(&en->w, "name", "\"" JSON_TOOL "\"");
    sy_jw_key(&en->w, "input_schema");
    sy_jw_obj(&en->w);
    sy_jw_key(&en->w, "type");
    uint32_t t = sy_jdom_get(d, en->rf_schema, "type");
    if (t)
        sy_jw_node(&en->w, d, t);
    else
        sy_jw_raw(&en->w, "\"object\"", 8);
    for (uint32_t k = sy_jdom_first(d, en->rf_schema); k; k = sy_jdom_next_key(d, k)) {
        if (sy_jdom_str_eq(d, k, "type"))
            continue;
        size_t kl;
        const char *ks = sview(d, k, en->a, &kl);
        sy_jw_keyn(&en->w, ks, kl);
        sy_jw_node(&en->w, d, sy_jdom_val(k));
    }
    sy_jw_end(&en->w);
    sy_jw_end(&en->w);
}

static int write_tools(struct enc *en)
{
    const struct sy_jdoc *d = en->d;
    if (en->tools && !is_type(d, en->tools, 'a'))
        return bad(en, "tools must be a list");
    if (!en->has_tools)
        return 0;
    sy_jw_key(&en->w, "tools");
    sy_jw_arr(&en->w);
    if (en->rf_schema && !en->rf_output_format)
        json_tool(en);
    int mcp = 0;
    for (uint32_t t = en->tools ? sy_jdom_first(d, en->tools) : 0; t; t = sy_jdom_next(d, t)) {
        if (write_tool(en, t))
            return SY_EINVAL;
        mcp |= !sy_jdom_get(d, t, "input_schema") &&
               (sy_jdom_str_eq(d, get(d, t, "type"), "url") || sy_jdom_str_eq(d, get(d, t, "type"), "mcp"));
    }
    if (en->web_search)
        web_search_tool(en);
    sy_jw_end(&en->w);
    if (mcp && !en->pass[PK_MCP]) {
        sy_jw_key(&en->w, "mcp_servers");
        sy_jw_arr(&en->w);
        for (uint32_t t = sy_jdom_first(d, en->tools); t; t = sy_jdom_next(d, t))
            if (!sy_jdom_get(d, t, "input_schema") &&
                (sy_jdom_str_eq(d, get(d, t, "type"), "url") || sy_jdom_str_eq(d, get(d, t, "type"), "mcp")))
                mcp_server(en, t);
        sy_jw_end(&en->w);
        en->beta |= B_MCP;
    }
    return 0;
}

/* tool_choice (_map_tool_choice), after the forced json_tool_call choice of a
 * response_format when thinking is off. */
static void write_tool_choice(struct enc *en, int thinking_requested)
{
    const struct sy_jdoc *d = en->d;
    const char *type = NULL;
    uint32_t name = 0;
    int json_name = 0, dpu = -1;
    if (en->rf_schema && !en->rf_output_format && !thinking_requested)
        type = "tool", json_name = 1;
    if (en->tool_choice || en->parallel) {
        const char *mt = NULL;
        uint32_t mname = 0;
        int mdpu = -1, par, none = 0;
        uint32_t tc = en->tool_choice;
        if (sy_jdom_str_eq(d, tc, "auto"))
            mt = "auto";
        else if (sy_jdom_str_eq(d, tc, "required"))
            mt = "any";
        else if (sy_jdom_str_eq(d, tc, "none"))
            mt = "none", none = 1;
        else if (is_type(d, tc, 'o'))
            mt = "tool", mname = get(d, get(d, tc, "function"), "name");
        if (sy_jdom_bool(d, en->parallel, &par) && !none) {
            if (!mt)
                mt = "auto";
            mdpu = !par;
        }
        if (mt) {
            type = mt, name = mname, json_name = 0, dpu = mdpu;
        }
    }
    if (!type)
        return;
    sy_jw_key(&en->w, "tool_choice");
    sy_jw_obj(&en->w);
    sy_jw_key(&en->w, "type");
    sy_jw_cstr(&en->w, type);
    if (json_name) {
        kraw(&en->w, "name", "\"" JSON_TOOL "\"");
    } else if (name) {
        knode(&en->w, "name", d, name);
    }
    if (dpu >= 0) {
        sy_jw_key(&en->w, "disable_parallel_tool_use");
        sy_jw_bool(&en->w, dpu);
    }
    sy_jw_end(&en->w);
}

/* ---- the body ----------------------------------------------------------- */

/* LiteLLM's _valid_user_id: not an email (^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$)
 * nor a phone number (^\+?[\d\s\(\)-]{7,}$). */
static int valid_user_id(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n &&
           (memchr("._%+-", s[i], 5) || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
            (s[i] >= '0' && s[i] <= '9')) &&
           s[i])
        i++;
    if (i > 0 && i < n && s[i] == '@') {
        size_t dom = i + 1, dot = 0, j;
        for (j = dom; j < n; j++) {
            char c = s[j];
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-'))
                break;
            if (c == '.')
                dot = j;
        }
        if (j == n && dot > dom && n - dot - 1 >= 2) {
            size_t k = dot + 1;
            while (k < n && ((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z')))
                k++;
            if (k == n)
                return 0; /* an email */
        }
    }
    i = n && s[0] == '+';
    size_t run = 0;
    for (; i < n; i++, run++)
        if (!((s[i] >= '0' && s[i] <= '9') || py_space((unsigned char)s[i]) || s[i] == '(' || s[i] == ')' ||
              s[i] == '-'))
            break;
    return !(i == n && run >= 7);
}

/* metadata {user_id}: user, overridden by the LiteLLM metadata's user_id. */
static void write_metadata(struct enc *en)
{
    const struct sy_jdoc *d = en->d;
    uint32_t uid = 0, v;
    size_t n;
    const char *s;
    if ((s = sview(d, en->user, en->a, &n)) && valid_user_id(s, n))
        uid = en->user;
    v = get(d, rget(d, "metadata"), "user_id");
    if ((s = sview(d, v, en->a, &n)) && valid_user_id(s, n))
        uid = v;
    if (!uid)
        return;
    sy_jw_key(&en->w, "metadata");
    sy_jw_obj(&en->w);
    knode(&en->w, "user_id", d, uid);
    sy_jw_end(&en->w);
}

/* stop -> stop_sequences (_map_stop_sequences: whitespace-only entries are
 * dropped when drop_params is on). */
static int write_stop(struct enc *en)
{
    const struct sy_jdoc *d = en->d;
    int drop = en->x->pc && en->x->pc->drop_params, any = 0;
    uint32_t one = is_type(d, en->stop, 's') ? en->stop : 0;
    if (!one && !is_type(d, en->stop, 'a'))
        return 0;
    for (uint32_t s = one ? one : sy_jdom_first(d, en->stop); s; s = one ? 0 : sy_jdom_next(d, s)) {
        size_t n, i;
        const char *t = sview(d, s, en->a, &n);
        if (!t)
            return bad(en, "stop must be a string or a list of strings");
        for (i = 0; i < n && py_space((unsigned char)t[i]); i++)
            ;
        if (drop && n && i == n)
            continue;
        if (!any++) {
            sy_jw_key(&en->w, "stop_sequences");
            sy_jw_arr(&en->w);
        }
        sy_jw_node(&en->w, d, s);
    }
    if (any)
        sy_jw_end(&en->w);
    return 0;
}

static int model_has(const struct sy_xctx *x, const char *sub)
{
    return x->model && strstr(x->model, sub) != NULL;
}

/* reasoning_effort -> a thinking budget (_map_reasoning_effort). */
static int map_effort(struct enc *en)
{
    static const struct {
        const char *name;
        int budget;
    } effort[] = {{"minimal", 128}, {"low", 1024}, {"medium", 2048}, {"high", 4096}};
    const struct sy_jdoc *d = en->d;
    size_t n;
    const char *s = sview(d, en->reasoning_effort, en->a, &n);
    if (!s)
        return 0;
    if (n == 4 && !memcmp(s, "none", 4)) { /* no thinking (LiteLLM 1.80 refuses "none") */
        en->reasoning_effort = 0;
        return 0;
    }
    for (size_t i = 0; i < 4; i++)
        if (n == strlen(effort[i].name) && !memcmp(s, effort[i].name, n))
            en->effort_budget = effort[i].budget;
    if (!en->effort_budget)
        return bad(en, "Unmapped reasoning effort: %.*s", (int)(n > 50 ? 50 : n), s);
    if (model_has(en->x, "opus-4-5") || model_has(en->x, "opus_4_5")) {
        if (!(n == 3 && !memcmp(s, "low", 3)) && !(n == 6 && !memcmp(s, "medium", 6)) &&
            !(n == 4 && !memcmp(s, "high", 4)))
            return bad(en, "Invalid effort value: %.*s. Must be one of: 'high', 'medium', 'low'", (int)n, s);
        en->effort = en->reasoning_effort;
        en->beta |= B_EFFORT;
    }
    return 0;
}

/* 1 when the last assistant message with tool calls has no thinking to
 * replay (no thinking_blocks, no thinking content part); 0 without one
 * (LiteLLM's last_assistant_with_tool_calls_has_no_thinking_blocks). */
static int tool_turn_lacks_thinking(const struct sy_jdoc *d, uint32_t msgs)
{
    uint32_t last = 0;
    for (uint32_t m = sy_jdom_first(d, msgs); m; m = sy_jdom_next(d, m))
        if (is_type(d, m, 'o') && sy_jdom_str_eq(d, get(d, m, "role"), "assistant") &&
            is_type(d, get(d, m, "tool_calls"), 'a') && d->n[get(d, m, "tool_calls")].kids)
            last = m;
    if (!last)
        return 0;
    uint32_t tb = get(d, last, "thinking_blocks"), c = get(d, last, "content");
    if (is_type(d, tb, 'a') && d->n[tb].kids)
        return 0;
    if (is_type(d, c, 'a'))
        for (uint32_t p = sy_jdom_first(d, c); p; p = sy_jdom_next(d, p))
            if (sy_jdom_str_eq(d, get(d, p, "type"), "thinking") ||
                sy_jdom_str_eq(d, get(d, p, "type"), "redacted_thinking"))
                return 0;
    return 1;
}

/* Thinking on while the tool loop's assistant turn has no thinking block to
 * start with (a client that dropped them, a turn made by another model):
 * Anthropic would answer 400 "Expected `thinking` or `redacted_thinking`,
 * but found `tool_use`". As LiteLLM with modify_params, thinking is dropped
 * for this request instead: it is a hint, the turn is not. */
static void drop_unreplayable_thinking(struct enc *en)
{
    int on =
        (is_type(en->d, en->thinking, 'o') && sy_jdom_str_eq(en->d, get(en->d, en->thinking, "type"), "enabled")) ||
        en->effort_budget;
    if (!on || !tool_turn_lacks_thinking(en->d, en->messages))
        return;
    en->thinking = 0;
    en->effort_budget = 0;
    en->reasoning_effort = 0;
}

/* response_format -> the JSON schema to enforce (json_schema.schema, or
 * LiteLLM's response_schema); text and json_object are no-ops as in LiteLLM. */
static int map_response_format(struct enc *en)
{
    const struct sy_jdoc *d = en->d;
    uint32_t rf = en->response_format;
    if (!is_type(d, rf, 'o'))
        return 0;
    uint32_t t = get(d, rf, "type");
    if (!t || sy_jdom_str_eq(d, t, "text"))
        return 0;
    uint32_t schema = get(d, rf, "response_schema");
    if (!schema)
        schema = get(d, get(d, rf, "json_schema"), "schema");
    if (!schema)
        return 0;
    if (!is_type(d, schema, 'o'))
        return bad(en, "response_format: the JSON schema must be an object");
    en->rf_schema = schema;
    if (!en->vertex && (model_has(en->x, "sonnet-4.5") || model_has(en->x, "sonnet-4-5") ||
                        model_has(en->x, "opus-4.1") || model_has(en->x, "opus-4-1"))) {
        en->rf_output_format = 1;
        en->beta |= B_STRUCTURED;
    }
    return 0;
}

/* The request body (see the table at the top). */
/* Vertex's body anthropic_beta, written as names come, each once. */
struct vbetas {
    struct sy_jw *w;
    const char *seen[48];
    size_t n;
};

static void vbeta(const char *name, void *ud)
{
    struct vbetas *b = ud;
    for (size_t i = 0; i < b->n; i++)
        if (!strcmp(b->seen[i], name))
            return;
    if (b->n == sizeof b->seen / sizeof b->seen[0])
        return;
    if (!b->n) {
        sy_jw_key(b->w, "anthropic_beta");
        sy_jw_arr(b->w);
    }
    b->seen[b->n++] = name;
    sy_jw_cstr(b->w, name);
}

static int encode_body(struct enc *en)
{
    const struct sy_xctx *x = en->x;
    const struct sy_jdoc *d = en->d;
    struct sy_jw *w = &en->w;
    int rc;
    if (!d->count || d->n[0].type != 'o')
        return bad(en, "the request body must be a JSON object");
    if ((rc = scan_params(en)))
        return rc;
    en->messages = rget(d, "messages");
    if (!is_type(d, en->messages, 'a'))
        return bad(en, "messages must be a list of messages");
    if ((rc = map_effort(en)) || (rc = map_response_format(en)))
        return rc;
    drop_unreplayable_thinking(en);
    /* is_thinking_enabled(non_default_params), then the thinking actually sent */
    int thinking_requested =
        (is_type(d, en->thinking, 'o') && sy_jdom_str_eq(d, get(d, en->thinking, "type"), "enabled")) ||
        en->reasoning_effort;
    int64_t budget = -1;
    if (en->thinking) {
        if (is_type(d, en->thinking, 'o') && sy_jdom_str_eq(d, get(d, en->thinking, "type"), "enabled") &&
            !sy_jdom_i64(d, get(d, en->thinking, "budget_tokens"), &budget))
            budget = -1;
    } else if (en->effort_budget) {
        budget = en->effort_budget;
    }
    en->has_tools = en->tools || (en->rf_schema && !en->rf_output_format) || en->web_search;
    if (!en->has_tools) {
        for (uint32_t m = sy_jdom_first(d, en->messages); m; m = sy_jdom_next(d, m))
            if (is_type(d, m, 'o') && get(d, m, "tool_calls")) {
                static const char m_[] =
                    "litellm.UnsupportedParamsError: Anthropic doesn't support tool calling without `tools=` param "
                    "specified. Pass `tools=` param OR set `litellm.modify_params = True` // "
                    "`litellm_settings::modify_params: True` to add dummy tool to the request.";
                return fail_msg(en, SY_EUNSUPPORTED, 400, "UnsupportedParamsError", m_, sizeof m_ - 1);
            }
    }

    sy_jw_obj(w);
    if (en->vertex) {
        kraw(w, "anthropic_version", "\"" VERTEX_VERSION "\"");
    } else {
        sy_jw_key(w, "model");
        sy_jw_cstr(w, x->model ? x->model : "");
    }
    if ((rc = write_messages(en)))
        return rc;
    int nsys = 0;
    if ((rc = write_system(en, &nsys)))
        return rc;
    sy_jw_key(w, "max_tokens");
    if (en->max_completion_tokens)
        sy_jw_node(w, d, en->max_completion_tokens);
    else if (en->max_tokens)
        sy_jw_node(w, d, en->max_tokens);
    else if (budget >= 0 && budget < ((int64_t)1 << 53))
        sy_jw_int(w, budget + DEFAULT_MAX_TOKENS);
    else
        sy_jw_int(w, x->pc && x->pc->max_tokens > 0 ? x->pc->max_tokens : DEFAULT_MAX_TOKENS);
    if (!en->pass[PK_STOP_SEQ] && (rc = write_stop(en)))
        return rc;
    if (en->temperature) {
        knode(w, "temperature", d, en->temperature);
    }
    if (en->top_p) {
        knode(w, "top_p", d, en->top_p);
    }
    write_metadata(en);
    if ((rc = write_tools(en)))
        return rc;
    write_tool_choice(en, thinking_requested);
    if (en->thinking) {
        knode(w, "thinking", d, en->thinking);
    } else if (en->effort_budget) {
        sy_jw_key(w, "thinking");
        sy_jw_obj(w);
        kraw(w, "type", "\"enabled\"");
        sy_jw_key(w, "budget_tokens");
        sy_jw_int(w, en->effort_budget);
        sy_jw_end(w);
    }
    if (en->effort && !en->pass[PK_OUTPUT_CONFIG]) {
        sy_jw_key(w, "output_config");
        sy_jw_obj(w);
        knode(w, "effort", d, en->effort);
        sy_jw_end(w);
    }
    if (en->rf_output_format && !en->pass[PK_OUTPUT_FORMAT]) {
        sy_jw_key(w, "output_format");
        sy_jw_obj(w);
        kraw(w, "type", "\"json_schema\"");
        knode(w, "schema", d, en->rf_schema);
        sy_jw_end(w);
    }
    for (size_t k = 0; k < NPASS; k++) {
        uint32_t v = en->pass[k];
        if (!v || (k == PK_SYSTEM && nsys))
            continue;
        sy_jw_key(w, pass_keys[k]);
        sy_jw_node(w, d, v);
        if (k == PK_OUTPUT_CONFIG && is_type(d, get(d, v, "effort"), 's'))
            en->beta |= B_EFFORT;
        else if (k == PK_OUTPUT_FORMAT)
            en->beta |= B_STRUCTURED;
        else if (k == PK_MCP && is_type(d, v, 'a') && d->n[v].kids)
            en->beta |= B_MCP;
        else if (k == PK_CONTAINER && is_type(d, get(d, v, "skills"), 'a') && d->n[get(d, v, "skills")].kids)
            en->beta |= B_SKILLS;
        else if (!strcmp(pass_keys[k], "context_management"))
            en->beta |= B_CONTEXT;
    }
    for (size_t k = 0; k < en->nallowed; k++) {
        sy_jw_key(w, en->allowed[k].name);
        sy_jw_node(w, d, en->allowed[k].v);
    }
    if (en->vertex) { /* VertexAIAnthropicConfig.transform_request: the features' betas, then the
                         client's that Vertex takes (providers/betas.h) */
        struct vbetas vb = {.w = w};
        for (size_t i = 0; i < sizeof beta_names / sizeof beta_names[0]; i++)
            if (en->beta & B_VERTEX & (1u << i))
                vbeta(beta_names[i], &vb);
        if (en->beta & B_TOOL_SEARCH)
            vbeta("tool-search-tool-2025-10-19", &vb);
        sy_betas_each(SY_BETA_VERTEX, x->fwd_headers, x->fwd_headers_len, vbeta, &vb);
        if (vb.n)
            sy_jw_end(w);
    }
    if (x->stream) {
        sy_jw_key(w, "stream");
        sy_jw_bool(w, 1);
    }
    sy_jw_end(w);
    if (w->err) {
        static const char m_[] = "litellm.BadRequestError: AnthropicException - the translated request is too large";
        return fail_msg(en, SY_ENOSPC, 413, "BadRequestError", m_, sizeof m_ - 1);
    }
    return 0;
}

static int encode_with(struct enc *en, const struct sy_xctx *x, const struct sy_jdoc *req, int vertex,
                       struct sy_buf *body, struct sy_xerr *e)
{
    memset(en, 0, sizeof *en);
    en->x = x;
    en->d = req;
    en->a = x->arena;
    en->e = e;
    en->vertex = vertex;
    sy_jw_init(&en->w, body);
    return encode_body(en);
}

int sy_anthropic_encode_body(const struct sy_xctx *x, const struct sy_jdoc *req, int vertex, struct sy_buf *body,
                             struct sy_xerr *e)
{
    struct enc en;
    return encode_with(&en, x, req, vertex, body, e);
}

/* ---- headers ------------------------------------------------------------ */

struct betas {
    const char *v[64];
    size_t l[64];
    size_t n;
};

static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t'))
        (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

/* Add the comma-separated values of one anthropic-beta header, skipping
 * duplicates and anything that could break the header line. */
static void add_betas(struct betas *b, const char *s, size_t n)
{
    while (n) {
        const char *c = memchr(s, ',', n);
        size_t il = c ? (size_t)(c - s) : n;
        const char *it = s;
        size_t tl = il;
        trim(&it, &tl);
        int ok = tl > 0 && b->n < sizeof b->v / sizeof b->v[0];
        for (size_t i = 0; ok && i < tl; i++)
            ok = (unsigned char)it[i] > 0x20 && it[i] != 0x7f;
        for (size_t i = 0; ok && i < b->n; i++)
            ok = !(b->l[i] == tl && !memcmp(b->v[i], it, tl));
        if (ok) {
            b->v[b->n] = it;
            b->l[b->n++] = tl;
        }
        if (!c)
            break;
        s = c + 1;
        n -= il + 1;
    }
}

static int tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Header lines: Content-Type, x-api-key, anthropic-version, anthropic-beta
 * (the client's forwarded values, extra_headers' and the features'), then the
 * other extra_headers (names that would override ours are skipped). */
static int write_headers(const struct sy_xctx *x, const struct sy_jdoc *d, struct sy_arena *a, unsigned beta,
                         uint32_t eh, struct sy_buf *h)
{
    static const char *const reserved[] = {"content-type",   "content-length",    "host",
                                           "x-api-key",      "authorization",     "anthropic-version",
                                           "anthropic-beta", "transfer-encoding", "connection"};
    const struct sy_pconf *pc = x->pc;
    int rc = SY_BUF_LIT(h, "Content-Type: application/json\r\n");
    if (pc && pc->key && *pc->key) {
        rc |= SY_BUF_LIT(h, "x-api-key: ");
        rc |= sy_buf_puts(h, pc->key);
        rc |= SY_BUF_LIT(h, "\r\n");
    }
    rc |= SY_BUF_LIT(h, "anthropic-version: ");
    rc |= sy_buf_puts(h, pc && pc->version ? pc->version : DEFAULT_VERSION);
    rc |= SY_BUF_LIT(h, "\r\n");

    struct betas b;
    b.n = 0;
    const char *p = x->fwd_headers, *end = p ? p + x->fwd_headers_len : NULL;
    while (p && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        size_t ll = (size_t)(le - p);
        if (ll && p[ll - 1] == '\r')
            ll--;
        const char *colon = memchr(p, ':', ll);
        if (colon && colon - p == 14 && !strncasecmp(p, "anthropic-beta", 14))
            add_betas(&b, colon + 1, ll - 15);
        p = nl ? nl + 1 : end;
    }
    if (is_type(d, eh, 'o'))
        for (uint32_t k = sy_jdom_first(d, eh); k; k = sy_jdom_next_key(d, k)) {
            size_t kl, vl;
            const char *ks = sview(d, k, a, &kl), *vs = sview(d, sy_jdom_val(k), a, &vl);
            if (vs && kl == 14 && !strncasecmp(ks, "anthropic-beta", 14))
                add_betas(&b, vs, vl);
        }
    for (size_t i = 0; i < sizeof beta_names / sizeof beta_names[0]; i++)
        if (beta & (1u << i))
            add_betas(&b, beta_names[i], strlen(beta_names[i]));
    if (b.n) {
        rc |= SY_BUF_LIT(h, "anthropic-beta: ");
        for (size_t i = 0; i < b.n; i++) {
            if (i)
                rc |= SY_BUF_LIT(h, ",");
            rc |= sy_buf_append(h, b.v[i], b.l[i]);
        }
        rc |= SY_BUF_LIT(h, "\r\n");
    }
    if (is_type(d, eh, 'o'))
        for (uint32_t k = sy_jdom_first(d, eh); k; k = sy_jdom_next_key(d, k)) {
            size_t kl, vl;
            const char *ks = sview(d, k, a, &kl), *vs = sview(d, sy_jdom_val(k), a, &vl);
            int ok = vs && kl > 0;
            for (size_t i = 0; ok && i < kl; i++)
                ok = tchar((unsigned char)ks[i]);
            for (size_t i = 0; ok && i < vl; i++)
                ok = vs[i] != '\r' && vs[i] != '\n' && vs[i] != 0;
            for (size_t i = 0; ok && i < sizeof reserved / sizeof reserved[0]; i++)
                ok = !(kl == strlen(reserved[i]) && !strncasecmp(ks, reserved[i], kl));
            if (!ok)
                continue;
            trim(&vs, &vl);
            rc |= sy_buf_append(h, ks, kl);
            rc |= SY_BUF_LIT(h, ": ");
            rc |= sy_buf_append(h, vs, vl);
            rc |= SY_BUF_LIT(h, "\r\n");
        }
    return rc ? SY_ENOSPC : 0;
}

/* encode(): embeddings are refused; chat -> URL, headers, body. */
static int encode(const struct sy_xctx *x, const struct sy_jdoc *req, struct sy_xout *o)
{
    if (x->op == SY_OP_EMBED) {
        char m[512];
        int n = snprintf(m, sizeof m,
                         "litellm.BadRequestError: Unmapped LLM provider for this endpoint. You passed model=%s, "
                         "custom_llm_provider=anthropic. Check supported provider and route: "
                         "https://docs.litellm.ai/docs/providers",
                         x->model ? x->model : "");
        sy_oai_err(&o->err, 400, m, n > 0 ? (size_t)n : 0);
        snprintf(o->err.cls, sizeof o->err.cls, "BadRequestError");
        return SY_EUNSUPPORTED;
    }
    struct enc en;
    int rc = encode_with(&en, x, req, 0, &o->body, &o->err);
    if (rc)
        return rc;
    const char *base = x->pc && x->pc->base ? x->pc->base : DEFAULT_BASE;
    if (sy_buf_puts(&o->url, base) || SY_BUF_LIT(&o->url, "/v1/messages") ||
        write_headers(x, req, x->arena, en.beta, en.extra_headers, &o->headers)) {
        static const char m_[] = "litellm.BadRequestError: AnthropicException - the request headers are too large";
        sy_oai_err(&o->err, 413, m_, sizeof m_ - 1);
        return SY_ENOSPC;
    }
    return 0;
}

/* ---- configure ---------------------------------------------------------- */

static int parse_bool(const char *v, int dflt)
{
    static const char *const yes[] = {"true", "True", "TRUE", "1", "yes"};
    static const char *const no[] = {"false", "False", "FALSE", "0", "no", ""};
    for (size_t i = 0; i < 5; i++)
        if (!strcmp(v, yes[i]))
            return 1;
    for (size_t i = 0; i < 6; i++)
        if (!strcmp(v, no[i]))
            return 0;
    return dflt;
}

/* The settings every adapter reads alike (a candidate for pconf.c):
 * drop_params (litellm_params, else the global flag), additional_drop_params
 * (a list: JSON `["a","b"]`, Python `['a']`, or one bare name) and the default
 * output cap (model_info max_tokens when > 0, else -1). */
static int pconf_common(const struct sy_deployment *d, int global_drop, struct sy_pconf *pc, char *err, size_t errlen)
{
    const char *v = sy_deployment_param(d, "drop_params");
    pc->drop_params = v ? parse_bool(v, global_drop) : global_drop;
    pc->max_tokens = d->max_tokens > 0 ? d->max_tokens : -1;
    v = sy_deployment_param(d, "additional_drop_params");
    if (!v)
        return 0;
    size_t n = strlen(v);
    while (n && (*v == ' ' || *v == '['))
        v++, n--;
    while (n && (v[n - 1] == ' ' || v[n - 1] == ']'))
        n--;
    size_t cap = 1;
    for (size_t i = 0; i < n; i++)
        cap += v[i] == ',';
    pc->drop_extra = calloc(cap, sizeof *pc->drop_extra);
    if (!pc->drop_extra)
        goto nomem;
    while (n) {
        const char *c = memchr(v, ',', n);
        size_t il = c ? (size_t)(c - v) : n;
        const char *it = v;
        size_t tl = il;
        while (tl && strchr(" \t\"'", *it))
            it++, tl--;
        while (tl && strchr(" \t\"'", it[tl - 1]))
            tl--;
        if (tl) {
            char *s = strndup(it, tl);
            if (!s)
                goto nomem;
            pc->drop_extra[pc->n_drop_extra++] = s;
        }
        if (!c)
            break;
        v = c + 1;
        n -= il + 1;
    }
    return 0;
nomem:
    snprintf(err, errlen, "out of memory");
    return -1;
}

/* Base URL without "/v1/messages" or a trailing "/v1" (encode appends
 * "/v1/messages"; LiteLLM appends it unless the base already ends with it). */
static char *base_url(const char *s)
{
    size_t n = strlen(s);
    while (n && s[n - 1] == '/')
        n--;
    if (n >= 12 && !memcmp(s + n - 12, "/v1/messages", 12))
        n -= 12;
    else if (n >= 3 && !memcmp(s + n - 3, "/v1", 3))
        n -= 3;
    while (n && s[n - 1] == '/')
        n--;
    return strndup(s, n);
}

/* api_base (else ANTHROPIC_API_BASE, ANTHROPIC_BASE_URL, the default),
 * api_key (else ANTHROPIC_API_KEY; none is not an error), the common settings. */
static int configure(const struct sy_deployment *d, int global_drop_params, struct sy_pconf *pc, char *err,
                     size_t errlen)
{
    const char *base = d->api_base && *d->api_base ? d->api_base : NULL;
    if (!base)
        base = getenv("ANTHROPIC_API_BASE");
    if (!base || !*base)
        base = getenv("ANTHROPIC_BASE_URL");
    if (!base || !*base)
        base = DEFAULT_BASE;
    const char *key = d->api_key && *d->api_key ? d->api_key : getenv("ANTHROPIC_API_KEY");
    pc->base = base_url(base);
    pc->key = key && *key ? strdup(key) : NULL;
    pc->version = strdup(DEFAULT_VERSION);
    if (!pc->base || !pc->version || (key && *key && !pc->key)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (const char *c = pc->key; c && *c; c++)
        if (*c == '\r' || *c == '\n') {
            snprintf(err, errlen, "api_key contains a line break");
            return -1;
        }
    return pconf_common(d, global_drop_params, pc, err, errlen);
}

/* ---- errors ------------------------------------------------------------- */

void sy_anthropic_map_error(int status, const char *text, size_t n, struct sy_xerr *e)
{
    static const char *const timeouts[] = {"Request Timeout Error", "Request timed out",
                                           "Timed out generating response", "The read operation timed out"};
    const char *cls = NULL, *prefix = "", *suffix = "";
    int st = status;
    if (!text)
        text = "", n = 0;
    for (size_t i = 0; i < 4 && !cls; i++)
        if (contains(text, n, timeouts[i]))
            st = 408, cls = "Timeout", prefix = "APITimeoutError - Request timed out. Error_str: ";
    if (cls)
        ;
    else if (contains(text, n, "prompt is too long") || contains(text, n, "prompt: length"))
        st = 400, cls = "ContextWindowExceededError";
    else if (contains(text, n, "overloaded_error") || contains(text, n, "Overloaded"))
        st = 500, cls = "InternalServerError";
    else if (contains(text, n, "Invalid API Key"))
        st = 401, cls = "AuthenticationError";
    else if (contains(text, n, "content filtering policy"))
        st = 400, cls = "ContentPolicyViolationError";
    else if (contains(text, n, "Client error '400 Bad Request'"))
        st = 400, cls = "BadRequestError";
    else
        switch (status) {
        case 401: cls = "AuthenticationError"; break;
        case 400:
        case 413: st = 400, cls = "BadRequestError"; break;
        case 404: cls = "NotFoundError"; break;
        case 408: cls = "Timeout"; break;
        case 429: cls = "RateLimitError"; break;
        case 500:
        case 529: st = 500, cls = "InternalServerError", suffix = ". Handle with `litellm.InternalServerError`."; break;
        case 502: cls = "BadGatewayError"; break;
        case 503: cls = "ServiceUnavailableError", suffix = ". Handle with `litellm.ServiceUnavailableError`."; break;
        case 504: cls = "Timeout"; break;
        default: st = 500, cls = "APIConnectionError"; /* e.g. 403: no branch in LiteLLM's anthropic mapping */
        }
    char m[sizeof e->message];
    size_t pl = strlen(prefix), sl = strlen(suffix), room = sizeof m - 1 - pl - sl;
    if (n > room)
        n = room;
    memcpy(m, prefix, pl);
    memcpy(m + pl, text, n);
    memcpy(m + pl + n, suffix, sl);
    sy_oai_err(e, st, m, pl + n + sl);
    snprintf(e->cls, sizeof e->cls, "%s", cls);
}

static void decode_error(const struct sy_xctx *x, int status, const char *body, size_t n, struct sy_xerr *e)
{
    (void)x;
    sy_anthropic_map_error(status, body, n, e);
}

/* A body or event we cannot read: LiteLLM's parse failures end as a 500
 * APIConnectionError. */
static int proto_err(struct sy_xerr *e, const char *what, const char *detail, const char *raw, size_t rl)
{
    char m[sizeof e->message];
    int k = snprintf(m, sizeof m, "%s%s%s: %.*s", what, detail ? " - " : "", detail ? detail : "",
                     (int)(rl > 400 ? 400 : rl), raw ? raw : "");
    sy_oai_err(e, 500, m, k > 0 ? ((size_t)k < sizeof m ? (size_t)k : sizeof m - 1) : 0);
    snprintf(e->cls, sizeof e->cls, "APIConnectionError");
    return SY_EUPPROTO;
}

/* ---- responses ---------------------------------------------------------- */

/* A token count, clamped so sums cannot overflow. */
static int64_t tokens(const struct sy_jdoc *d, uint32_t i, int64_t dflt)
{
    int64_t v;
    if (!sy_jdom_i64(d, i, &v))
        return dflt;
    return v < 0 ? 0 : v > ((int64_t)1 << 50) ? ((int64_t)1 << 50) : v;
}

/* usage -> st->u (calculate_usage): prompt = input + cache_creation + cache_read.
 * A message_delta's usage only overrides the counts it carries. */
static void read_usage(const struct sy_jdoc *d, uint32_t u, struct sy_xusage *xu, int delta)
{
    if (!is_type(d, u, 'o'))
        return;
    uint32_t in = get(d, u, "input_tokens"), out = get(d, u, "output_tokens");
    uint32_t cw = get(d, u, "cache_creation_input_tokens"), cr = get(d, u, "cache_read_input_tokens");
    if (!delta || in || cw || cr) {
        int64_t prev_in = delta ? xu->prompt - xu->cache_read - xu->cache_write : 0;
        int64_t i = tokens(d, in, prev_in < 0 ? 0 : prev_in);
        xu->cache_write = tokens(d, cw, delta ? xu->cache_write : 0);
        xu->cache_read = tokens(d, cr, delta ? xu->cache_read : 0);
        xu->prompt = i + xu->cache_write + xu->cache_read;
        uint32_t cc = get(d, u, "cache_creation"); /* {ephemeral_5m_input_tokens, ephemeral_1h_input_tokens} */
        int64_t h1 = is_type(d, cc, 'o') ? tokens(d, get(d, cc, "ephemeral_1h_input_tokens"), 0) : 0;
        xu->cache_write_1h = h1 < xu->cache_write ? h1 : xu->cache_write;
    }
    xu->completion = tokens(d, out, delta ? xu->completion : 0);
    xu->have = 1;
}

static void set_field(char *dst, size_t cap, const char *s, size_t n)
{
    if (s && n && n < cap && !memchr(s, 0, n)) {
        memcpy(dst, s, n);
        dst[n] = 0;
    }
}

/* Concatenate views into one arena string (NULL when none). */
static const char *join(struct sy_arena *a, const char *const *v, const size_t *l, size_t n, size_t *out_len)
{
    size_t t = 0;
    for (size_t i = 0; i < n; i++)
        t += l[i];
    char *s = sy_arena_alloc(a, t + 1), *p = s;
    for (size_t i = 0; i < n; i++) {
        memcpy(p, v[i], l[i]);
        p += l[i];
    }
    *p = 0;
    *out_len = t;
    return s;
}

static int decode_response(const struct sy_xctx *x, struct sy_xstate *st, const char *body, size_t n,
                           struct sy_buf *out)
{
    struct sy_jdoc doc, *d = &doc;
    if (sy_jdom_parse(d, body, n, x->arena, 0) || d->n[0].type != 'o')
        return proto_err(&st->err, "Unable to get json response", d->err ? d->err : "not a JSON object", body, n);
    uint32_t err = rget(d, "error");
    if (err) {
        size_t rl;
        const char *raw = sy_jdom_raw(d, err, &rl);
        sy_anthropic_map_error(200, raw, rl, &st->err);
        return SY_EUPPROTO;
    }
    uint32_t content = rget(d, "content");
    if (!is_type(d, content, 'a'))
        return proto_err(&st->err, "Unable to read the response", "no content list", body, n);
    size_t nb = d->n[content].kids ? d->n[content].kids : 1;
    const char **tv = sy_arena_alloc(x->arena, nb * sizeof *tv), **rv = sy_arena_alloc(x->arena, nb * sizeof *rv);
    const char **bv = sy_arena_alloc(x->arena, (2 * nb + 1) * sizeof *bv);
    size_t *tl = sy_arena_alloc(x->arena, nb * sizeof *tl), *rl = sy_arena_alloc(x->arena, nb * sizeof *rl);
    size_t *bl = sy_arena_alloc(x->arena, (2 * nb + 1) * sizeof *bl);
    struct sy_xtool *tools = sy_arena_alloc(x->arena, nb * sizeof *tools);
    size_t nt = 0, nr = 0, nbl = 0, ntools = 0;
    for (uint32_t b = sy_jdom_first(d, content); b; b = sy_jdom_next(d, b)) {
        if (!is_type(d, b, 'o'))
            continue;
        uint32_t type = get(d, b, "type"), th = get(d, b, "thinking");
        size_t l;
        const char *s;
        if (sy_jdom_str_eq(d, type, "text")) {
            if ((s = sview(d, get(d, b, "text"), x->arena, &l)))
                tv[nt] = s, tl[nt++] = l;
        } else if (sy_jdom_str_eq(d, type, "tool_use") || sy_jdom_str_eq(d, type, "server_tool_use")) {
            struct sy_xtool *t = &tools[ntools++];
            memset(t, 0, sizeof *t);
            t->id = sview(d, get(d, b, "id"), x->arena, &t->idl);
            t->name = sview(d, get(d, b, "name"), x->arena, &t->nl);
            uint32_t in = get(d, b, "input");
            if (in) {
                t->args = sy_jdom_raw(d, in, &t->al);
            } else {
                t->args = "{}";
                t->al = 2;
            }
        } else if (th || sy_jdom_str_eq(d, type, "redacted_thinking")) {
            if (th && (s = sview(d, th, x->arena, &l)))
                rv[nr] = s, rl[nr++] = l;
            else if (th)
                rv[nr] = "", rl[nr++] = 0;
            bv[nbl] = nbl ? "," : "[";
            bl[nbl++] = 1;
            bv[nbl] = sy_jdom_raw(d, b, &bl[nbl]);
            nbl++;
        }
    }
    struct sy_xmsg m;
    memset(&m, 0, sizeof m);
    if (nt) {
        m.content = join(x->arena, tv, tl, nt, &m.content_len);
        if (!m.content_len)
            m.content = NULL;
    }
    if (nbl) {
        m.reasoning = join(x->arena, rv, rl, nr, &m.reasoning_len);
        bv[nbl] = "]";
        bl[nbl] = 1;
        m.thinking_blocks_json = join(x->arena, bv, bl, nbl + 1, &m.thinking_blocks_len);
    }
    m.tools = tools;
    m.ntools = ntools;
    size_t srl;
    const char *sr = sview(d, rget(d, "stop_reason"), x->arena, &srl);
    m.finish_reason = sr ? sy_oai_finish_reason(sr, srl) : "stop";
    if (ntools == 1 && tools[0].nl == sizeof JSON_TOOL - 1 && !memcmp(tools[0].name, JSON_TOOL, tools[0].nl)) {
        /* json mode (_convert_tool_response_to_message): the input, or its "values", is the content */
        struct sy_xmsg j;
        memset(&j, 0, sizeof j);
        j.content = tools[0].args;
        j.content_len = tools[0].al;
        struct sy_jdoc ad;
        if (!sy_jdom_parse(&ad, tools[0].args, tools[0].al, x->arena, 0) && ad.n[0].type == 'o') {
            uint32_t vals = rget(&ad, "values");
            if (vals)
                j.content = sy_jdom_raw(&ad, vals, &j.content_len);
        }
        j.finish_reason = "stop";
        m = j;
    }
    size_t l;
    const char *s = sview(d, rget(d, "id"), x->arena, &l);
    set_field(st->id, sizeof st->id, s, l);
    s = sview(d, rget(d, "model"), x->arena, &l);
    if (!st->model_fixed)
        set_field(st->model, sizeof st->model, s, l);
    read_usage(d, rget(d, "usage"), &st->u, 0);
    sy_oai_write_response(st, &m, out);
    return 0;
}

/* ---- stream ------------------------------------------------------------- */

enum { K_NONE, K_TEXT, K_THINK, K_REDACTED, K_TOOL, K_JSON, K_OTHER };

/* Per content block (Anthropic `index`): its kind, the OpenAI tool index, and
 * whether any arguments came. Blocks are few and never interleave; a slot is
 * index % SLOTS, checked against the index it holds. */
#define SLOTS 80
struct sblock {
    int32_t idx, tool;
    uint8_t kind, args;
};
struct sstate {
    uint32_t json_mode; /* a json_tool_call tool was turned into content */
    struct sblock b[SLOTS];
};
static_assert(sizeof(struct sstate) <= sizeof(((struct sy_xstate *)0)->priv), "stream state fits st->priv");

/* A chunk with thinking_blocks (oai.h has no writer for them; same shape as
 * its chunks): delta {"reasoning_content"?: .., "thinking_blocks":[block]}.
 * kind K_THINK: block {type:thinking,thinking:th,signature:sig}, th / sig
 * string nodes or 0 for ""; K_REDACTED: {type:redacted_thinking,data:sig}. */
static void chunk_thinking(struct sy_xstate *st, struct sy_buf *out, const struct sy_jdoc *d, int kind, uint32_t th,
                           uint32_t sig)
{
    sy_oai_chunk_role(st, out);
    struct sy_jw w;
    SY_BUF_LIT(out, "data: ");
    sy_jw_init(&w, out);
    sy_jw_obj(&w);
    sy_jw_key(&w, "id");
    sy_jw_cstr(&w, st->id);
    kraw(&w, "object", "\"chat.completion.chunk\"");
    sy_jw_key(&w, "created");
    sy_jw_int(&w, st->created);
    sy_jw_key(&w, "model");
    sy_jw_cstr(&w, st->model);
    sy_jw_key(&w, "choices");
    sy_jw_arr(&w);
    sy_jw_obj(&w);
    sy_jw_key(&w, "index");
    sy_jw_int(&w, 0);
    sy_jw_key(&w, "delta");
    sy_jw_obj(&w);
    if (kind == K_THINK) {
        sy_jw_key(&w, "reasoning_content");
        if (th)
            sy_jw_node(&w, d, th);
        else
            sy_jw_raw(&w, "\"\"", 2);
    }
    sy_jw_key(&w, "thinking_blocks");
    sy_jw_arr(&w);
    sy_jw_obj(&w);
    sy_jw_key(&w, "type");
    if (kind == K_THINK) {
        sy_jw_raw(&w, "\"thinking\"", 10);
        sy_jw_key(&w, "thinking");
        if (th)
            sy_jw_node(&w, d, th);
        else
            sy_jw_raw(&w, "\"\"", 2);
        sy_jw_key(&w, "signature");
    } else {
        sy_jw_raw(&w, "\"redacted_thinking\"", 19);
        sy_jw_key(&w, "data");
    }
    if (sig)
        sy_jw_node(&w, d, sig);
    else
        sy_jw_raw(&w, "\"\"", 2);
    sy_jw_end(&w);
    sy_jw_end(&w);
    sy_jw_end(&w); /* delta */
    sy_jw_key(&w, "finish_reason");
    sy_jw_null(&w);
    sy_jw_end(&w);
    sy_jw_end(&w);
    sy_jw_end(&w);
    SY_BUF_LIT(out, "\n\n");
}

static struct sblock *block_at(struct sstate *ss, const struct sy_jdoc *d, int create)
{
    int64_t idx;
    if (!sy_jdom_i64(d, rget(d, "index"), &idx) || idx < 0 || idx > INT32_MAX)
        return NULL;
    struct sblock *b = &ss->b[idx % SLOTS];
    if (create) {
        memset(b, 0, sizeof *b);
        b->idx = (int32_t)idx;
        return b;
    }
    return b->kind != K_NONE && b->idx == idx ? b : NULL;
}

static void text_of(struct sy_xstate *st, struct sy_buf *out, const struct sy_jdoc *d, uint32_t s, struct sy_arena *a)
{
    size_t l;
    const char *t = sview(d, s, a, &l);
    if (t && l)
        sy_oai_chunk_text(st, out, t, l);
}

static int event(const struct sy_xctx *x, struct sy_xstate *st, const char *type, size_t tl, const char *data,
                 size_t dl, struct sy_buf *out, struct sy_arena *a)
{
    struct sstate *ss = (struct sstate *)st->priv;
    struct sy_jdoc doc, *d = &doc;
    (void)x;
    if (sy_jdom_parse(d, data, dl, a, 0) || d->n[0].type != 'o')
        return proto_err(&st->err, "Failed to decode JSON from chunk", d->err ? d->err : "not a JSON object", data, dl);
    size_t l;
    const char *t = sview(d, rget(d, "type"), a, &l);
    if (!t)
        t = type, l = type ? tl : 0;
#define IS(lit) (l == sizeof(lit) - 1 && !memcmp(t, lit, l))
    if (IS("message_start")) {
        uint32_t m = rget(d, "message");
        size_t n;
        if (!st->role_sent) { /* id and model are fixed once a chunk is out (oai.h caches them) */
            const char *s = sview(d, get(d, m, "id"), a, &n);
            set_field(st->id, sizeof st->id, s, n);
            s = sview(d, get(d, m, "model"), a, &n);
            if (!st->model_fixed)
                set_field(st->model, sizeof st->model, s, n);
        }
        read_usage(d, get(d, m, "usage"), &st->u, 0);
        sy_oai_chunk_role(st, out);
    } else if (IS("content_block_start")) {
        struct sblock *b = block_at(ss, d, 1);
        uint32_t cb = rget(d, "content_block"), ct = get(d, cb, "type");
        if (!b)
            return 0;
        b->kind = K_OTHER;
        if (sy_jdom_str_eq(d, ct, "text")) {
            b->kind = K_TEXT;
            text_of(st, out, d, get(d, cb, "text"), a);
        } else if (sy_jdom_str_eq(d, ct, "thinking")) {
            b->kind = K_THINK;
            uint32_t th = get(d, cb, "thinking");
            if (is_type(d, th, 's') && d->n[th].len > 2)
                chunk_thinking(st, out, d, K_THINK, th, 0);
        } else if (sy_jdom_str_eq(d, ct, "redacted_thinking")) {
            b->kind = K_REDACTED;
            uint32_t data_ = get(d, cb, "data");
            chunk_thinking(st, out, d, K_REDACTED, 0, is_type(d, data_, 's') ? data_ : 0);
        } else if (sy_jdom_str_eq(d, ct, "tool_use") || sy_jdom_str_eq(d, ct, "server_tool_use")) {
            size_t il, nl;
            const char *id = sview(d, get(d, cb, "id"), a, &il), *name = sview(d, get(d, cb, "name"), a, &nl);
            if (name && nl == sizeof JSON_TOOL - 1 && !memcmp(name, JSON_TOOL, nl)) {
                b->kind = K_JSON;
                ss->json_mode = 1;
                sy_oai_chunk_role(st, out);
            } else {
                b->kind = K_TOOL;
                b->tool = sy_oai_chunk_tool_start(st, out, id, il, name, nl);
            }
        }
    } else if (IS("content_block_delta")) {
        uint32_t dt = rget(d, "delta"), k = get(d, dt, "type");
        struct sblock *b = block_at(ss, d, 0);
        if (sy_jdom_str_eq(d, k, "text_delta")) {
            text_of(st, out, d, get(d, dt, "text"), a);
        } else if (sy_jdom_str_eq(d, k, "input_json_delta")) {
            size_t pl;
            const char *p = sview(d, get(d, dt, "partial_json"), a, &pl);
            if (!b || !p || !pl)
                return 0;
            if (b->kind == K_TOOL) {
                b->args = 1;
                sy_oai_chunk_tool_args(st, out, b->tool, p, pl);
            } else if (b->kind == K_JSON) {
                b->args = 1;
                sy_oai_chunk_text(st, out, p, pl);
            }
        } else if (sy_jdom_str_eq(d, k, "thinking_delta")) {
            uint32_t th = get(d, dt, "thinking");
            if (is_type(d, th, 's') && d->n[th].len > 2)
                chunk_thinking(st, out, d, K_THINK, th, 0);
        } else if (sy_jdom_str_eq(d, k, "signature_delta")) {
            uint32_t sig = get(d, dt, "signature");
            if (is_type(d, sig, 's') && d->n[sig].len > 2)
                chunk_thinking(st, out, d, K_THINK, 0, sig);
        }
    } else if (IS("content_block_stop")) {
        struct sblock *b = block_at(ss, d, 0);
        if (b && !b->args && b->kind == K_TOOL)
            sy_oai_chunk_tool_args(st, out, b->tool, "{}", 2);
        else if (b && !b->args && b->kind == K_JSON)
            sy_oai_chunk_text(st, out, "{}", 2);
        if (b)
            b->kind = K_NONE;
    } else if (IS("message_delta")) {
        read_usage(d, rget(d, "usage"), &st->u, 1);
        size_t sl;
        const char *sr = sview(d, get(d, rget(d, "delta"), "stop_reason"), a, &sl);
        if (sr || !st->finished)
            sy_oai_chunk_finish(st, out, ss->json_mode ? "stop" : sr ? sy_oai_finish_reason(sr, sl) : "stop");
    } else if (IS("message_stop")) {
        sy_oai_chunk_finish(st, out, "stop"); /* once only: a no-op after message_delta's */
        st->done = 1;
        return SY_DONE;
    } else if (IS("error")) {
        uint32_t e = rget(d, "error");
        size_t ml;
        const char *m = sview(d, get(d, e, "message"), a, &ml);
        if (!m || !ml)
            m = data, ml = dl;
        sy_anthropic_map_error(500, m, ml, &st->err);
        return SY_EUPPROTO;
    }
#undef IS
    return 0;
}

/* One event, parsed in an arena of its own so a long stream uses constant memory. */
/* The hot event, a text delta, matched in the exact form Anthropic sends it
 *   {"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"..."}}
 * and copied into the chunk without a DOM (the text stays as escaped JSON). 1 when
 * handled; 0 for any other shape (the DOM path decides). */
static int fast_text_delta(struct sy_xstate *st, const char *data, size_t dl, struct sy_buf *out)
{
    static const char p1[] = "{\"type\":\"content_block_delta\",\"index\":";
    static const char p2[] = ",\"delta\":{\"type\":\"text_delta\",\"text\":";
    const char *p = data, *e = data + dl;
    if (dl < sizeof p1 + sizeof p2 + 3 || memcmp(p, p1, sizeof p1 - 1) != 0)
        return 0;
    p += sizeof p1 - 1;
    const char *dig = p;
    while (p < e && *p >= '0' && *p <= '9')
        p++;
    if (p == dig || p - dig > 9 || (size_t)(e - p) < sizeof p2 - 1 || memcmp(p, p2, sizeof p2 - 1) != 0)
        return 0;
    p += sizeof p2 - 1;
    size_t sl = sy_jdom_string_len(p, (size_t)(e - p), NULL);
    if (!sl || (size_t)(e - p) != sl + 2 || p[sl] != '}' || p[sl + 1] != '}')
        return 0;
    sy_oai_chunk_text_json(st, out, p, sl);
    return 1;
}

static int decode_event(const struct sy_xctx *x, struct sy_xstate *st, const char *type, size_t tl, const char *data,
                        size_t dl, struct sy_buf *out)
{
    if (fast_text_delta(st, data, dl, out))
        return 0;
    struct sy_arena a;
    sy_arena_init(&a);
    int rc = event(x, st, type, tl, data, dl, out, &a);
    sy_arena_free(&a);
    return rc;
}

const struct sy_adapter sy_adapter_anthropic = {
    .name = "anthropic",
    .caps = SY_CAP_STREAM | SY_CAP_TOOLS | SY_CAP_VISION | SY_CAP_REASONING,
    .framing = SY_FRAME_SSE,
    .configure = configure,             /* api_base / ANTHROPIC_API_BASE, api_key / ANTHROPIC_API_KEY */
    .encode = encode,                   /* POST {base}/v1/messages; embeddings refused */
    .decode_response = decode_response, /* message -> chat.completion */
    .decode_event = decode_event,       /* SSE events -> chunks; message_stop -> SY_DONE */
    .decode_error = decode_error,       /* LiteLLM's anthropic exception mapping */
};
