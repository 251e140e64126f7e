/* gemini.c - the Google AI Studio adapter (sy_adapter_gemini) and the Gemini
 * generateContent format it shares with Vertex AI (gemini.h), translated as
 * LiteLLM's llms/vertex_ai/gemini/ does (transformation.py,
 * vertex_and_google_ai_studio_gemini.py) with camelCase field names. The
 * format lives here whole (request, schemas, response, stream, errors) so
 * vertex.c only adds URLs and auth; hence the file's size.
 *
 * Upstream (AI Studio):
 *
 *   chat      POST {base}/v1beta/models/{model}:generateContent
 *   stream    POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse
 *   embed     POST {base}/v1beta/models/{model}:batchEmbedContents
 *   headers   Content-Type: application/json, x-goog-api-key: KEY (never ?key=: URLs get logged);
 *             no client header is forwarded
 *   base      api_base, else GEMINI_API_BASE, else https://generativelanguage.googleapis.com;
 *             an api_base with a path (".../v1beta") is used as LiteLLM uses it:
 *             {api_base}/models/{model}:{method}
 *
 * Request (OpenAI -> generateContent):
 *
 *   OpenAI                                   Gemini
 *   ---------------------------------------  ------------------------------------------------------
 *   messages[role=system|developer]          systemInstruction.parts[{text}] (list content joined)
 *   messages[role=user] (consecutive merged) contents[{role:"user", parts}]; no text part -> {text:" "}
 *     content string / {type:text}           {text}
 *     {type:image_url} data: URL             {inlineData:{mimeType, data}}
 *     {type:image_url} gs:// | http(s) URL   {fileData:{mimeType (format, else from the extension,
 *                                            else image/jpeg), fileUri}}
 *     {type:input_audio} {data, format}      {inlineData:{mimeType:"audio/<format>", data}}
 *     {type:file} {file_data | file_id}      as an image URL
 *   messages[role=assistant] (merged)        contents[{role:"model", parts}]: {text},
 *     tool_calls[] / function_call           {functionCall:{name, args (parsed arguments)}}
 *                                            [+ thoughtSignature from an id "<id>__thought__<sig>"]
 *   messages[role=tool|function] (merged)    contents[{role:"user", parts:[{functionResponse:{name
 *                                            (of the tool call with that id, else `name`),
 *                                            response:{content: text}}}]}]
 *   (no contents)                            [{role:"user", parts:[{text:"."}]}] after a system
 *                                            prompt, else [{..., parts:[{text:" "}]}]
 *   tools[{function}] / functions[]          tools[{functionDeclarations:[{name, description,
 *                                            parameters (schema below)}]}]
 *   tools[{googleSearch|codeExecution|...}]  the same tools[0] object, key camelCased
 *   web_search_options {...}                 tools[+{googleSearch:{}}]
 *   tool_choice none|required|auto|{fn}      toolConfig.functionCallingConfig {mode: NONE|ANY|AUTO,
 *                                            allowedFunctionNames:[fn]}
 *   temperature, top_p, top_k                generationConfig.temperature, topP, topK
 *   max_tokens, max_completion_tokens        generationConfig.maxOutputTokens
 *   stop (string or list)                    generationConfig.stopSequences
 *   n (1)                                    generationConfig.candidateCount
 *   presence_penalty, frequency_penalty,seed generationConfig.presencePenalty, frequencyPenalty, seed
 *   logprobs, top_logprobs                   generationConfig.responseLogprobs, logprobs
 *   modalities [text|image|audio]            generationConfig.responseModalities [TEXT|IMAGE|AUDIO]
 *   response_format json_object | text       generationConfig.responseMimeType application/json | text/plain
 *   response_format json_schema.schema       + responseSchema (schema below, with propertyOrdering)
 *   reasoning_effort minimal|low|medium|high generationConfig.thinkingConfig {thinkingBudget
 *                    |none|disable           128|1024|2048|4096|0, includeThoughts}
 *   thinking {type, budget_tokens}           generationConfig.thinkingConfig
 *   safety_settings                          safetySettings (as given)
 *   cached_content                           cachedContent
 *   labels (Vertex only)                     labels
 *   user, stream, stream_options, metadata   (not sent)
 *   logit_bias, n > 1, function_call, audio, UnsupportedParamsError (400) unless drop_params or
 *   prediction, service_tier, ...            additional_drop_params names them
 *
 *   JSON schemas (_build_vertex_schema): $ref -> the $defs/definitions entry inlined; anyOf keeps
 *   only anyOf ({"type":"null"} removed, the rest get nullable:true; title/description copied in);
 *   type [t, "null"] -> type t + nullable; properties force type "object"; items {} -> {type:object};
 *   enum "" -> null; format kept only for enum/date-time; keys other than type format title
 *   description nullable default items minItems maxItems enum properties propertyOrdering required
 *   minProperties maxProperties minimum maximum minLength maxLength pattern example anyOf dropped
 *   ($schema, additionalProperties, strict, $defs ...).
 *
 * Response (GenerateContentResponse -> chat.completion):
 *
 *   Gemini                                   OpenAI
 *   ---------------------------------------  ------------------------------------------------------
 *   responseId                               id
 *   candidates[0].content.parts[].text       message.content (joined); thought:true -> reasoning_content
 *   parts[].inlineData (not audio)           content += "data:<mimeType>;base64,<data>"
 *   parts[].functionCall {name, args}        tool_calls[{id:"call_<28 hex of id+index>"[+"__thought__"
 *                                            thoughtSignature], function:{name, arguments: json.dumps}}]
 *   candidates[0].finishReason               finish_reason: tool_calls when calls, else STOP->stop,
 *                                            MAX_TOKENS->length, SAFETY|RECITATION|...->content_filter
 *   finishReason SAFETY|RECITATION|BLOCKLIST content:null, content_filter (the flagged text is dropped)
 *     |PROHIBITED_CONTENT|SPII|IMAGE_SAFETY
 *   promptFeedback.blockReason               content:null, finish_reason content_filter
 *   usageMetadata.promptTokenCount           usage.prompt_tokens (includes cached)
 *   candidatesTokenCount (+thoughtsTokenCount usage.completion_tokens (thoughts added when the total
 *     when not already counted)              says candidates excludes them)
 *   cachedContentTokenCount                  prompt_tokens_details.cached_tokens
 *   thoughtsTokenCount                       completion_tokens_details.reasoning_tokens
 *
 * Stream: every SSE data is a whole GenerateContentResponse; each becomes text /
 * reasoning chunks, a tool call opened with its whole arguments in one piece,
 * and the finish chunk when finishReason appears (tool_calls when a call
 * came); usage from the last usageMetadata. There is no end event: the body
 * ends. Text arriving after a finishReason is still passed on (older Gemini
 * versions set finishReason on every chunk, LiteLLM notes).
 *
 * Embeddings: {requests:[{model:"models/{m}", content:{parts:[{text}]}, outputDimensionality?,
 * taskType?}]} -> {embeddings:[{values}]} -> the OpenAI list (no usage upstream: the gateway counts).
 *
 * Errors: {"error":{"code","message","status"}} -> status and class as LiteLLM's
 * _map_vertex_exception (400 BadRequest, "API key not valid." 401, 403 -> 400, 404, 408,
 * RESOURCE_EXHAUSTED/429 RateLimit, context-window texts, 500, 503, else 500 APIConnectionError);
 * the message is the upstream body, what LiteLLM prints after "<Provider>Exception - " (the
 * gateway adds that prefix). Encode errors carry their complete LiteLLM text.
 */
#include "providers/gemini.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "core/hex.h"
#include "core/pyrepr.h"
#include "providers/oai.h"

#define STUDIO_BASE      "https://generativelanguage.googleapis.com"
#define MAX_SCHEMA_DEPTH 40
#define MAX_SCHEMA_NODES 20000

/* Node 0 is the root, and 0 also means "absent" in jdom's answers: these
 * read an absent node as absent (jdom's own would read the root). */
static inline char jt(const struct sy_jdoc *d, uint32_t i)
{
    return i ? sy_jdom_type(d, i) : 0;
}
static inline uint32_t jget(const struct sy_jdoc *d, uint32_t obj, const char *key)
{
    return obj ? sy_jdom_get(d, obj, key) : 0;
}
static inline uint32_t rget(const struct sy_jdoc *d, const char *key)
{
    return sy_jdom_get(d, 0, key);
}

/* ---- small helpers ------------------------------------------------------ */

static int fail(struct sy_xerr *e, int code, int status, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(struct sy_xerr *e, int code, int status, const char *fmt, ...)
{
    char m[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    sy_oai_err(e, status, m, (size_t)n < sizeof m ? (size_t)n : sizeof m - 1);
    return code;
}

/* LiteLLM's own UnsupportedParamsError texts (not sy_oai_unsupported's). */
static int unsupported_text(struct sy_xerr *e, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int unsupported_text(struct sy_xerr *e, const char *param, const char *fmt, ...)
{
    char m[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    sy_oai_err(e, 400, m, n < 0 ? 0 : (size_t)n < sizeof m ? (size_t)n : sizeof m - 1);
    snprintf(e->cls, sizeof e->cls, "UnsupportedParamsError");
    snprintf(e->param, sizeof e->param, "%s", param);
    return SY_EUNSUPPORTED;
}

/* A 400 for a request LiteLLM's transformation refuses: the complete text the
 * client sees, "litellm.BadRequestError: <Provider>Exception - <why>". */
static int bad_request(struct sy_xerr *e, const char *provider, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad_request(struct sy_xerr *e, const char *provider, const char *fmt, ...)
{
    char why[800], m[1024], cap[32];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(cap, sizeof cap, "%s", provider); /* Python's str.capitalize() */
    for (char *c = cap; *c; c++)
        *c = (char)(c == cap ? (*c >= 'a' && *c <= 'z' ? *c - 32 : *c) : (*c >= 'A' && *c <= 'Z' ? *c + 32 : *c));
    int n = snprintf(m, sizeof m, "litellm.BadRequestError: %sException - %s", cap, why);
    sy_oai_err(e, 400, m, n < 0 ? 0 : (size_t)n < sizeof m ? (size_t)n : sizeof m - 1);
    snprintf(e->cls, sizeof e->cls, "BadRequestError");
    return SY_EINVAL;
}

static int memhas(const char *h, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    return k <= n && memmem(h, n, needle, k) != NULL;
}

/* Case-insensitive memmem for an ASCII needle. */
static int memhas_ci(const char *h, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; k <= n && i <= n - k; i++)
        if (strncasecmp(h + i, needle, k) == 0)
            return 1;
    return 0;
}

static int starts(const char *s, size_t n, const char *p)
{
    size_t k = strlen(p);
    return n >= k && memcmp(s, p, k) == 0;
}

int sy__gemini_truthy(const char *v)
{
    return v && (strcasecmp(v, "true") == 0 || strcmp(v, "1") == 0 || strcasecmp(v, "yes") == 0);
}

int sy__gemini_base_has_path(const char *url)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    p = strchr(p, '/');
    return p && p[1] != 0;
}

const char *sy__gemini_compact(const struct sy_jdoc *d, uint32_t arr, struct sy_arena *a, size_t *len)
{
    size_t n;
    const char *raw = sy_jdom_raw(d, arr, &n);
    if (jt(d, arr) != 'a')
        return *len = n, raw;
    for (uint32_t e = sy_jdom_first(d, arr); e; e = sy_jdom_next(d, e))
        if (jt(d, e) != 'n')
            return *len = n, raw;
    char *o = sy_arena_alloc(a, n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (raw[i] != ' ' && raw[i] != '\n' && raw[i] != '\r' && raw[i] != '\t')
            o[k++] = raw[i];
    o[k] = 0;
    *len = k;
    return o;
}

int sy__gemini_conf_common(const struct sy_deployment *d, int global_drop_params, struct sy_pconf *pc, char *err,
                           size_t errlen)
{
    const char *dp = sy_deployment_param(d, "drop_params");
    pc->drop_params = dp ? sy__gemini_truthy(dp) : global_drop_params;
    pc->max_tokens = d->max_tokens > 0 ? d->max_tokens : -1;
    const char *adp = sy_deployment_param(d, "additional_drop_params");
    if (!adp)
        return 0;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc doc;
    int rc = 0;
    if (sy_jdom_parse(&doc, adp, strlen(adp), &a, 0) || sy_jdom_type(&doc, 0) != 'a') {
        snprintf(err, errlen, "additional_drop_params: expected a list of parameter names");
        rc = -1;
        goto out;
    }
    pc->drop_extra = calloc(doc.n[0].kids ? doc.n[0].kids : 1, sizeof *pc->drop_extra);
    if (!pc->drop_extra) {
        rc = -1;
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (uint32_t i = sy_jdom_first(&doc, 0); i; i = sy_jdom_next(&doc, i)) {
        size_t l;
        const char *s = sy_jdom_str(&doc, i, &a, &l);
        if (!s) {
            snprintf(err, errlen, "additional_drop_params: expected a list of parameter names");
            rc = -1;
            goto out;
        }
        if (!(pc->drop_extra[pc->n_drop_extra] = strdup(s))) {
            rc = -1;
            goto out;
        }
        pc->n_drop_extra++;
    }
out:
    sy_arena_free(&a);
    return rc;
}

/* ---- Python's json.dumps --------------------------------------------------
 * Tool-call arguments are what LiteLLM's json.dumps(functionCall.args) gives:
 * ", " and ": " separators, strings by core/pyrepr.h (non-ASCII as \uXXXX),
 * numbers as the upstream wrote them. */

static void py_dump(const struct sy_jdoc *d, uint32_t i, struct sy_arena *a, struct sy_buf *b)
{
    size_t l;
    const char *s;
    switch (jt(d, i)) {
    case 'o':
        sy_buf_append(b, "{", 1);
        for (uint32_t k = sy_jdom_first(d, i); k; k = sy_jdom_next_key(d, k)) {
            if (k != i + 1)
                sy_buf_append(b, ", ", 2);
            s = sy_jdom_str(d, k, a, &l);
            sy_py_json_dumps_str(b, s, l);
            sy_buf_append(b, ": ", 2);
            py_dump(d, sy_jdom_val(k), a, b);
        }
        sy_buf_append(b, "}", 1);
        break;
    case 'a':
        sy_buf_append(b, "[", 1);
        for (uint32_t k = sy_jdom_first(d, i); k; k = sy_jdom_next(d, k)) {
            if (k != i + 1)
                sy_buf_append(b, ", ", 2);
            py_dump(d, k, a, b);
        }
        sy_buf_append(b, "]", 1);
        break;
    case 's':
        s = sy_jdom_str(d, i, a, &l);
        sy_py_json_dumps_str(b, s, l);
        break;
    case 0: sy_buf_append(b, "{}", 2); break;
    default: s = sy_jdom_raw(d, i, &l); sy_buf_append(b, s, l);
    }
}

/* ---- request ------------------------------------------------------------ */

/* Request members the encoder reads (node of the value, 0 when absent). */
enum {
    P_MESSAGES,
    P_TOOLS,
    P_FUNCTIONS,
    P_TOOL_CHOICE,
    P_RESPONSE_FORMAT,
    P_STOP,
    P_N,
    P_TEMPERATURE,
    P_TOP_P,
    P_TOP_K,
    P_MAX_TOKENS,
    P_SEED,
    P_PRESENCE,
    P_FREQUENCY,
    P_LOGPROBS,
    P_TOP_LOGPROBS,
    P_MODALITIES,
    P_REASONING,
    P_THINKING,
    P_SAFETY,
    P_CACHED,
    P_LABELS,
    P_WEB_SEARCH,
    P_PARALLEL,
    P__COUNT,
    P_IGNORE = -1,     /* known and not sent */
    P_UNSUPPORTED = -2 /* an OpenAI parameter Gemini cannot take */
};

static const struct {
    const char *name;
    int slot;
} params[] = {
    {"messages", P_MESSAGES},
    {"tools", P_TOOLS},
    {"functions", P_FUNCTIONS},
    {"tool_choice", P_TOOL_CHOICE},
    {"response_format", P_RESPONSE_FORMAT},
    {"stop", P_STOP},
    {"n", P_N},
    {"temperature", P_TEMPERATURE},
    {"top_p", P_TOP_P},
    {"top_k", P_TOP_K},
    {"topK", P_TOP_K},
    {"max_tokens", P_MAX_TOKENS},
    {"max_completion_tokens", P_MAX_TOKENS},
    {"seed", P_SEED},
    {"presence_penalty", P_PRESENCE},
    {"frequency_penalty", P_FREQUENCY},
    {"logprobs", P_LOGPROBS},
    {"top_logprobs", P_TOP_LOGPROBS},
    {"modalities", P_MODALITIES},
    {"reasoning_effort", P_REASONING},
    {"thinking", P_THINKING},
    {"safety_settings", P_SAFETY},
    {"safetySettings", P_SAFETY},
    {"cached_content", P_CACHED},
    {"cachedContent", P_CACHED},
    {"labels", P_LABELS},
    {"web_search_options", P_WEB_SEARCH},
    {"parallel_tool_calls", P_PARALLEL},
    {"logit_bias", P_UNSUPPORTED},
    {"function_call", P_UNSUPPORTED},
    {"audio", P_UNSUPPORTED},
    {"prediction", P_UNSUPPORTED},
    {"service_tier", P_UNSUPPORTED},
    {"verbosity", P_UNSUPPORTED},
    {"safety_identifier", P_UNSUPPORTED},
    {"prompt_cache_key", P_UNSUPPORTED},
    {"store", P_UNSUPPORTED},
};

struct enc {
    const struct sy_xctx *x;
    const struct sy_jdoc *d;
    enum sy_gemini_api api;
    const char *provider;
    struct sy_arena *a;
    struct sy_xerr *e;
    struct sy_jw w;
    uint32_t p[P__COUNT];
    /* contents */
    int group;    /* 0 none open, 'u' user, 'm' model, 't' tool results */
    int has_text; /* the open user content has a non-empty text part */
    int ncontents;
    int gc_open;           /* generationConfig opened */
    uint32_t schema_nodes; /* schema objects written: $ref fan-out is bounded by MAX_SCHEMA_NODES */
};

/* The provider LiteLLM names in messages: "gemini", "vertex_ai" or "vertex_ai_beta". */
static const char *provider_name(const struct sy_xctx *x, enum sy_gemini_api api)
{
    if (api != SY_GEMINI_VERTEX)
        return "gemini";
    const char *p = x->d ? x->d->provider : NULL;
    return p && strncmp(p, "vertex_ai", 9) == 0 ? p : "vertex_ai";
}

static void group_close(struct enc *en)
{
    if (!en->group)
        return;
    if (en->group == 'u' && !en->has_text) { /* Vertex: "must have a text parameter" (LiteLLM #5515) */
        sy_jw_obj(&en->w);
        sy_jw_key(&en->w, "text");
        sy_jw_raw(&en->w, "\" \"", 3);
        sy_jw_end(&en->w);
    }
    sy_jw_end(&en->w); /* parts */
    sy_jw_end(&en->w); /* content */
    en->group = 0;
}

/* Make sure a content of kind g is open to take parts. */
static void group_open(struct enc *en, int g)
{
    if (en->group == g)
        return;
    group_close(en);
    sy_jw_obj(&en->w);
    sy_jw_key(&en->w, "role");
    sy_jw_cstr(&en->w, g == 'm' ? "model" : "user");
    sy_jw_key(&en->w, "parts");
    sy_jw_arr(&en->w);
    en->group = g;
    en->has_text = 0;
    en->ncontents++;
}

/* {"text": <string node i>} */
static void part_text_node(struct enc *en, uint32_t i)
{
    sy_jw_obj(&en->w);
    sy_jw_key(&en->w, "text");
    sy_jw_node(&en->w, en->d, i);
    sy_jw_end(&en->w);
    if (en->d->n[i].len > 2)
        en->has_text = 1;
}

static void part_text(struct enc *en, const char *s, size_t n)
{
    sy_jw_obj(&en->w);
    sy_jw_key(&en->w, "text");
    sy_jw_str(&en->w, s, n);
    sy_jw_end(&en->w);
    if (n)
        en->has_text = 1;
}

/* Mime type from a URL's extension (query and fragment ignored), NULL when unknown. */
static const char *mime_from_ext(const char *url, size_t n)
{
    static const struct {
        const char *ext, *mime;
    } t[] = {
        {"jpg", "image/jpeg"},  {"jpeg", "image/jpeg"},     {"png", "image/png"},  {"webp", "image/webp"},
        {"heic", "image/heic"}, {"heif", "image/heif"},     {"gif", "image/gif"},  {"mp4", "video/mp4"},
        {"mov", "video/mov"},   {"mpeg", "video/mpeg"},     {"mpg", "video/mpeg"}, {"avi", "video/avi"},
        {"wmv", "video/wmv"},   {"mpegps", "video/mpegps"}, {"flv", "video/flv"},  {"webm", "video/webm"},
        {"mp3", "audio/mp3"},   {"wav", "audio/wav"},       {"aac", "audio/aac"},  {"flac", "audio/flac"},
        {"ogg", "audio/ogg"},   {"pdf", "application/pdf"}, {"txt", "text/plain"}, {"csv", "text/csv"},
        {"html", "text/html"},  {"md", "text/md"},
    };
    size_t end = n;
    for (size_t i = 0; i < n; i++)
        if (url[i] == '?' || url[i] == '#') {
            end = i;
            break;
        }
    size_t dot = end;
    while (dot > 0 && url[dot - 1] != '.' && url[dot - 1] != '/')
        dot--;
    if (dot == 0 || url[dot - 1] != '.')
        return NULL;
    size_t el = end - dot;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strlen(t[i].ext) == el && strncasecmp(url + dot, t[i].ext, el) == 0)
            return t[i].mime;
    return NULL;
}

/* A media reference (image_url.url, file_data, file_id) as an inlineData or fileData part.
 * fmt: the explicit mime type (image_url.format, file.format), may be NULL. */
static int part_media(struct enc *en, const char *url, size_t n, const char *fmt)
{
    struct sy_jw *w = &en->w;
    if (starts(url, n, "data:")) {
        const char *b64 = memmem(url, n, ";base64,", 8);
        if (!b64)
            return bad_request(en->e, en->provider, "Invalid image received - data URL without ;base64,");
        const char *data = b64 + 8;
        sy_jw_obj(w);
        sy_jw_key(w, "inlineData");
        sy_jw_obj(w);
        sy_jw_key(w, "mimeType");
        if (fmt)
            sy_jw_cstr(w, fmt);
        else
            sy_jw_str(w, url + 5, (size_t)(b64 - url - 5));
        sy_jw_key(w, "data");
        sy_jw_str(w, data, (size_t)(url + n - data));
        sy_jw_end(w);
        sy_jw_end(w);
        return 0;
    }
    const char *mime = fmt;
    if (starts(url, n, "gs://")) {
        if (!mime && !(mime = mime_from_ext(url, n)))
            return bad_request(en->e, en->provider, "File type not supported by gemini - %.*s",
                               (int)(n > 200 ? 200 : n), url);
    } else if (starts(url, n, "https://") || starts(url, n, "http://")) {
        if (!mime && !(mime = mime_from_ext(url, n)))
            mime = "image/jpeg";
    } else {
        return bad_request(en->e, en->provider, "Invalid image received - %.*s", (int)(n > 200 ? 200 : n), url);
    }
    sy_jw_obj(w);
    sy_jw_key(w, "fileData");
    sy_jw_obj(w);
    sy_jw_key(w, "mimeType");
    sy_jw_cstr(w, mime);
    sy_jw_key(w, "fileUri");
    sy_jw_str(w, url, n);
    sy_jw_end(w);
    sy_jw_end(w);
    return 0;
}

/* A string member of obj decoded into the arena, NULL when absent or not a string. */
static const char *get_str(struct enc *en, uint32_t obj, const char *key, size_t *len)
{
    return sy_jdom_str(en->d, jget(en->d, obj, key), en->a, len);
}

/* One element of a user message's content list. */
static int user_element(struct enc *en, uint32_t el)
{
    const struct sy_jdoc *d = en->d;
    if (jt(d, el) != 'o')
        return 0;
    uint32_t type = jget(d, el, "type");
    size_t n;
    if (sy_jdom_str_eq(d, type, "text")) {
        uint32_t t = jget(d, el, "text");
        if (jt(d, t) == 's' && d->n[t].len > 2)
            part_text_node(en, t);
        return 0;
    }
    if (sy_jdom_str_eq(d, type, "image_url")) {
        uint32_t iu = jget(d, el, "image_url");
        const char *url, *fmt = NULL;
        if (jt(d, iu) == 'o') {
            url = get_str(en, iu, "url", &n);
            fmt = get_str(en, iu, "format", NULL);
        } else {
            url = sy_jdom_str(d, iu, en->a, &n);
        }
        if (!url)
            return bad_request(en->e, en->provider, "Invalid image received - image_url.url missing");
        return part_media(en, url, n, fmt);
    }
    if (sy_jdom_str_eq(d, type, "input_audio")) {
        uint32_t ia = jget(d, el, "input_audio");
        size_t fl;
        const char *data = get_str(en, ia, "data", &n), *fmt = get_str(en, ia, "format", &fl);
        if (!data || !fmt)
            return 0;
        struct sy_jw *w = &en->w;
        sy_jw_obj(w);
        sy_jw_key(w, "inlineData");
        sy_jw_obj(w);
        sy_jw_key(w, "mimeType");
        if (starts(fmt, fl, "audio/")) {
            sy_jw_str(w, fmt, fl);
        } else {
            char *m = sy_arena_alloc(en->a, fl + 7);
            memcpy(m, "audio/", 6);
            memcpy(m + 6, fmt, fl);
            sy_jw_str(w, m, fl + 6);
        }
        sy_jw_key(w, "data");
        sy_jw_str(w, data, n);
        sy_jw_end(w);
        sy_jw_end(w);
        return 0;
    }
    if (sy_jdom_str_eq(d, type, "file")) {
        uint32_t f = jget(d, el, "file");
        const char *ref = get_str(en, f, "file_id", &n);
        if (!ref || !n)
            ref = get_str(en, f, "file_data", &n);
        if (!ref)
            return bad_request(en->e, en->provider, "Unknown file type. Please pass in a file_id or file_data");
        return part_media(en, ref, n, get_str(en, f, "format", NULL));
    }
    return 0; /* other element types are not sent (as LiteLLM) */
}

/* Content of a tool / system message as one text: a string, or the text
 * elements of a list joined. */
static const char *content_text(struct enc *en, uint32_t c, size_t *len)
{
    const struct sy_jdoc *d = en->d;
    if (jt(d, c) == 's')
        return sy_jdom_str(d, c, en->a, len);
    *len = 0;
    if (jt(d, c) != 'a')
        return NULL;
    size_t total = 0;
    for (uint32_t el = sy_jdom_first(d, c); el; el = sy_jdom_next(d, el)) {
        uint32_t t = jget(d, el, "text");
        if (jt(d, t) == 's')
            total += d->n[t].len;
    }
    char *o = sy_arena_alloc(en->a, total + 1);
    size_t k = 0;
    for (uint32_t el = sy_jdom_first(d, c); el; el = sy_jdom_next(d, el)) {
        uint32_t t = jget(d, el, "text");
        size_t l;
        const char *s = sy_jdom_str(d, t, en->a, &l);
        if (s) {
            memcpy(o + k, s, l);
            k += l;
        }
    }
    o[k] = 0;
    *len = k;
    return o;
}

#define THOUGHT_SEP "__thought__"

/* {"functionCall":{"name":..,"args":..}[,"thoughtSignature":..]} from an
 * OpenAI function object {name, arguments}; id may carry a signature. */
static int part_function_call(struct enc *en, uint32_t fn, uint32_t id)
{
    const struct sy_jdoc *d = en->d;
    struct sy_jw *w = &en->w;
    uint32_t args = jget(d, fn, "arguments");
    struct sy_jdoc ad;
    const char *raw = "{}";
    size_t rl = 2;
    if (jt(d, args) == 's') {
        size_t l;
        const char *s = sy_jdom_str(d, args, en->a, &l);
        size_t i = 0;
        while (i < l && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t'))
            i++;
        if (i < l) {
            if (sy_jdom_parse(&ad, s, l, en->a, 0))
                return bad_request(
                    en->e, en->provider,
                    "Unable to convert openai tool calls to gemini tool calls. Received error=invalid JSON "
                    "in function.arguments (%s at offset %zu)",
                    ad.err ? ad.err : "error", ad.err_off);
            raw = ad.src + ad.n[0].off;
            rl = ad.n[0].len;
        }
    } else if (jt(d, args) == 'o') {
        raw = sy_jdom_raw(d, args, &rl);
    }
    sy_jw_obj(w);
    sy_jw_key(w, "functionCall");
    sy_jw_obj(w);
    sy_jw_key(w, "name");
    uint32_t name = jget(d, fn, "name");
    if (jt(d, name) == 's')
        sy_jw_node(w, d, name);
    else
        sy_jw_str(w, "", 0);
    sy_jw_key(w, "args");
    sy_jw_raw(w, raw, rl);
    sy_jw_end(w);
    size_t il;
    const char *ids = sy_jdom_str(d, id, en->a, &il);
    const char *sig = ids ? memmem(ids, il, THOUGHT_SEP, sizeof THOUGHT_SEP - 1) : NULL;
    if (sig) {
        sig += sizeof THOUGHT_SEP - 1;
        sy_jw_key(w, "thoughtSignature");
        sy_jw_str(w, sig, (size_t)(ids + il - sig));
    }
    sy_jw_end(w);
    return 0;
}

/* The function name a tool message answers: the tool call with its id in an
 * earlier assistant message (latest first), else the message's `name`. */
static uint32_t tool_name(struct enc *en, uint32_t msgs, uint32_t upto, uint32_t msg)
{
    const struct sy_jdoc *d = en->d;
    size_t il;
    const char *id = sy_jdom_str(d, jget(d, msg, "tool_call_id"), en->a, &il);
    uint32_t found = 0;
    if (id && !memchr(id, 0, il)) {
        for (uint32_t m = sy_jdom_first(d, msgs); m && m != upto; m = sy_jdom_next(d, m)) {
            uint32_t tcs = jget(d, m, "tool_calls");
            if (jt(d, tcs) != 'a')
                continue;
            for (uint32_t tc = sy_jdom_first(d, tcs); tc; tc = sy_jdom_next(d, tc))
                if (sy_jdom_str_eq(d, jget(d, tc, "id"), id)) {
                    uint32_t nm = jget(d, jget(d, tc, "function"), "name");
                    if (jt(d, nm) == 's' && d->n[nm].len > 2)
                        found = nm;
                }
        }
    }
    if (!found) {
        uint32_t nm = jget(d, msg, "name");
        if (jt(d, nm) == 's' && d->n[nm].len > 2)
            found = nm;
    }
    return found;
}

enum { R_BAD, R_SYSTEM, R_USER, R_ASSISTANT, R_TOOL };

static int role_of(const struct sy_jdoc *d, uint32_t m)
{
    uint32_t r = jget(d, m, "role");
    if (sy_jdom_str_eq(d, r, "user"))
        return R_USER;
    if (sy_jdom_str_eq(d, r, "assistant"))
        return R_ASSISTANT;
    if (sy_jdom_str_eq(d, r, "system") || sy_jdom_str_eq(d, r, "developer"))
        return R_SYSTEM;
    if (sy_jdom_str_eq(d, r, "tool") || sy_jdom_str_eq(d, r, "function"))
        return R_TOOL;
    return R_BAD;
}

/* "systemInstruction":{"parts":[{"text":..}, ...]} when there are system messages;
 * returns how many there were. */
static int write_system(struct enc *en, uint32_t msgs)
{
    const struct sy_jdoc *d = en->d;
    int n = 0;
    for (uint32_t m = sy_jdom_first(d, msgs); m; m = sy_jdom_next(d, m)) {
        if (role_of(d, m) != R_SYSTEM)
            continue;
        uint32_t c = jget(d, m, "content");
        if (jt(d, c) != 's' && jt(d, c) != 'a')
            continue;
        if (!n++) {
            sy_jw_key(&en->w, "systemInstruction");
            sy_jw_obj(&en->w);
            sy_jw_key(&en->w, "parts");
            sy_jw_arr(&en->w);
        }
        if (jt(d, c) == 's') {
            part_text_node(en, c);
        } else {
            size_t l;
            const char *s = content_text(en, c, &l);
            part_text(en, s, l);
        }
    }
    if (n) {
        sy_jw_end(&en->w);
        sy_jw_end(&en->w);
    }
    return n;
}

static int write_contents(struct enc *en, uint32_t msgs, int nsystem)
{
    const struct sy_jdoc *d = en->d;
    struct sy_jw *w = &en->w;
    int nother = 0, rc;
    sy_jw_key(w, "contents");
    sy_jw_arr(w);
    uint32_t idx = 0;
    for (uint32_t m = sy_jdom_first(d, msgs); m; m = sy_jdom_next(d, m), idx++) {
        if (jt(d, m) != 'o')
            return bad_request(en->e, en->provider, "Invalid Message passed in - messages[%u] is not an object", idx);
        int role = role_of(d, m);
        uint32_t c = jget(d, m, "content");
        switch (role) {
        case R_SYSTEM:
            if (jt(d, c) == 's' || jt(d, c) == 'a')
                break; /* in systemInstruction */
            nother++;
            break;
        case R_USER:
            nother++;
            if (jt(d, c) == 's') {
                group_open(en, 'u');
                if (d->n[c].len > 2) /* "" would be an empty text part: the " " below stands in */
                    part_text_node(en, c);
            } else if (jt(d, c) == 'a') {
                for (uint32_t el = sy_jdom_first(d, c); el; el = sy_jdom_next(d, el)) {
                    if (jt(d, el) != 'o')
                        continue;
                    group_open(en, 'u');
                    if ((rc = user_element(en, el)))
                        return rc;
                }
            }
            break;
        case R_ASSISTANT: {
            nother++;
            if (jt(d, c) == 's' && d->n[c].len > 2) {
                group_open(en, 'm');
                part_text_node(en, c);
            } else if (jt(d, c) == 'a') {
                for (uint32_t el = sy_jdom_first(d, c); el; el = sy_jdom_next(d, el)) {
                    uint32_t t = jget(d, el, "text");
                    if (sy_jdom_str_eq(d, jget(d, el, "type"), "text") && jt(d, t) == 's') {
                        group_open(en, 'm');
                        part_text_node(en, t);
                    }
                }
            }
            uint32_t tcs = jget(d, m, "tool_calls");
            if (jt(d, tcs) == 'a') {
                for (uint32_t tc = sy_jdom_first(d, tcs); tc; tc = sy_jdom_next(d, tc)) {
                    uint32_t fn = jget(d, tc, "function");
                    if (jt(d, fn) != 'o')
                        return bad_request(
                            en->e, en->provider,
                            "function_call missing. Received tool call with 'type': 'function'. No function "
                            "call in argument - messages[%u]",
                            idx);
                    group_open(en, 'm');
                    if ((rc = part_function_call(en, fn, jget(d, tc, "id"))))
                        return rc;
                }
            } else {
                uint32_t fc = jget(d, m, "function_call");
                if (jt(d, fc) == 'o') {
                    group_open(en, 'm');
                    if ((rc = part_function_call(en, fc, 0)))
                        return rc;
                }
            }
            break;
        }
        case R_TOOL: {
            nother++;
            uint32_t nm = tool_name(en, msgs, m, m);
            if (!nm)
                return bad_request(en->e, en->provider,
                                   "Missing corresponding tool call for tool response message. Received - messages[%u]",
                                   idx);
            size_t l;
            const char *s = content_text(en, c, &l);
            group_open(en, 't');
            sy_jw_obj(w);
            sy_jw_key(w, "functionResponse");
            sy_jw_obj(w);
            sy_jw_key(w, "name");
            sy_jw_node(w, d, nm);
            sy_jw_key(w, "response");
            sy_jw_obj(w);
            sy_jw_key(w, "content");
            if (jt(d, c) == 's')
                sy_jw_node(w, d, c);
            else
                sy_jw_str(w, s ? s : "", s ? l : 0);
            sy_jw_end(w);
            sy_jw_end(w);
            sy_jw_end(w);
            break;
        }
        default:
            return bad_request(en->e, en->provider, "Invalid Message passed in - messages[%u] has an unknown role",
                               idx);
        }
    }
    group_close(en);
    if (!en->ncontents) { /* LiteLLM #13769 (system only) and #9733 (nothing) */
        sy_jw_obj(w);
        sy_jw_key(w, "role");
        sy_jw_raw(w, "\"user\"", 6);
        sy_jw_key(w, "parts");
        sy_jw_raw(w, nsystem && !nother ? "[{\"text\":\".\"}]" : "[{\"text\":\" \"}]", 14);
        sy_jw_end(w);
    }
    sy_jw_end(w);
    return 0;
}

/* ---- JSON schema -> Gemini Schema (LiteLLM's _build_vertex_schema) ------- */

static const char *const schema_keys[] = {
    "type",          "format",   "title",   "description", "nullable",         "default",  "items",
    "minItems",      "maxItems", "enum",    "properties",  "propertyOrdering", "required", "minProperties",
    "maxProperties", "minimum",  "maximum", "minLength",   "maxLength",        "pattern",  "example",
};

/* The Schema field key node k names, NULL when Gemini has no such field. */
static const char *schema_key(const struct sy_jdoc *d, uint32_t k)
{
    for (size_t i = 0; i < sizeof schema_keys / sizeof schema_keys[0]; i++)
        if (sy_jdom_str_eq(d, k, schema_keys[i]))
            return schema_keys[i];
    return NULL;
}

/* Members to add to an object schema (anyOf items). */
struct inject {
    uint32_t title, description; /* nodes to copy, 0 none */
    int nullable;
};

static int schema_w(struct enc *en, uint32_t s, uint32_t root, const struct inject *inj, int ordering, int depth);

/* "#/$defs/Name" or "#/definitions/Name" -> the node, 0 when unknown. */
static uint32_t schema_ref(struct enc *en, uint32_t ref, uint32_t root)
{
    size_t l;
    const char *r = sy_jdom_str(en->d, ref, en->a, &l);
    if (!r)
        return 0;
    const char *name;
    uint32_t defs;
    if (starts(r, l, "#/$defs/")) {
        name = r + 8;
        defs = jget(en->d, root, "$defs");
    } else if (starts(r, l, "#/definitions/")) {
        name = r + 14;
        defs = jget(en->d, root, "definitions");
    } else {
        return 0;
    }
    return jget(en->d, defs, name);
}

static int is_null_type(const struct sy_jdoc *d, uint32_t s)
{
    return jt(d, s) == 'o' && d->n[s].kids == 1 && sy_jdom_str_eq(d, jget(d, s, "type"), "null");
}

/* anyOf: null members removed (the others nullable), parent title/description copied in. */
static int schema_anyof(struct enc *en, uint32_t s, uint32_t anyof, uint32_t root, int ordering, int depth)
{
    const struct sy_jdoc *d = en->d;
    struct inject in = {jget(d, s, "title"), jget(d, s, "description"), 0};
    int others = 0;
    for (uint32_t it = sy_jdom_first(d, anyof); it; it = sy_jdom_next(d, it)) {
        if (is_null_type(d, it))
            in.nullable = 1;
        else
            others++;
    }
    if (!others)
        return bad_request(
            en->e, en->provider,
            "Invalid input: AnyOf schema with only null type is not supported. Please provide a non-null "
            "type.");
    sy_jw_obj(&en->w);
    sy_jw_key(&en->w, "anyOf");
    sy_jw_arr(&en->w);
    for (uint32_t it = sy_jdom_first(d, anyof); it; it = sy_jdom_next(d, it)) {
        if (is_null_type(d, it))
            continue;
        int rc = schema_w(en, it, root, &in, ordering, depth + 1);
        if (rc)
            return rc;
    }
    sy_jw_end(&en->w);
    sy_jw_end(&en->w);
    return 0;
}

static int schema_w(struct enc *en, uint32_t s, uint32_t root, const struct inject *inj, int ordering, int depth)
{
    const struct sy_jdoc *d = en->d;
    struct sy_jw *w = &en->w;
    if (depth > MAX_SCHEMA_DEPTH)
        return bad_request(en->e, en->provider, "Max depth of %d exceeded while processing schema.", MAX_SCHEMA_DEPTH);
    if (++en->schema_nodes > MAX_SCHEMA_NODES || en->w.err) /* $refs can fan out exponentially */
        return bad_request(en->e, en->provider, "schema too large once its $refs are expanded");
    if (jt(d, s) != 'o') {
        sy_jw_node(w, d, s);
        return 0;
    }
    uint32_t ref = jget(d, s, "$ref"), target;
    if (ref && (target = schema_ref(en, ref, root)) && target != s)
        return schema_w(en, target, root, inj, ordering, depth + 1);
    uint32_t anyof = jget(d, s, "anyOf");
    if (jt(d, anyof) == 'a')
        return schema_anyof(en, s, anyof, root, ordering, depth);

    /* type: a list with "null" -> nullable; several left -> anyOf of them */
    uint32_t type = jget(d, s, "type"), one_type = 0;
    int type_null = 0, ntypes = 0;
    if (jt(d, type) == 'a') {
        for (uint32_t t = sy_jdom_first(d, type); t; t = sy_jdom_next(d, t)) {
            if (sy_jdom_str_eq(d, t, "null"))
                type_null = 1;
            else if (jt(d, t) == 's')
                ntypes++, one_type = one_type ? one_type : t;
        }
        if (ntypes > 1) {
            struct inject in = {jget(d, s, "title"), jget(d, s, "description"), type_null};
            sy_jw_obj(w);
            sy_jw_key(w, "anyOf");
            sy_jw_arr(w);
            for (uint32_t t = sy_jdom_first(d, type); t; t = sy_jdom_next(d, t)) {
                if (jt(d, t) != 's' || sy_jdom_str_eq(d, t, "null"))
                    continue;
                sy_jw_obj(w);
                sy_jw_key(w, "type");
                sy_jw_node(w, d, t);
                if (in.title) {
                    sy_jw_key(w, "title");
                    sy_jw_node(w, d, in.title);
                }
                if (in.description) {
                    sy_jw_key(w, "description");
                    sy_jw_node(w, d, in.description);
                }
                if (in.nullable) {
                    sy_jw_key(w, "nullable");
                    sy_jw_bool(w, 1);
                }
                sy_jw_end(w);
            }
            sy_jw_end(w);
            sy_jw_end(w);
            return 0;
        }
    }
    uint32_t props = jget(d, s, "properties");
    int has_props = jt(d, props) == 'o';
    int wrote_type = 0, wrote_order = 0, wrote_nullable = 0;
    sy_jw_obj(w);
    for (uint32_t k = sy_jdom_first(d, s); k; k = sy_jdom_next_key(d, k)) {
        uint32_t v = sy_jdom_val(k);
        const char *kname = schema_key(d, k);
        if (!kname)
            continue;
        if (jget(d, s, sy_jdom_str(d, k, en->a, NULL)) != v)
            continue; /* a repeated key: the last one counts */
        if (inj && ((inj->title && sy_jdom_str_eq(d, k, "title")) ||
                    (inj->description && sy_jdom_str_eq(d, k, "description"))))
            continue;
        if (sy_jdom_str_eq(d, k, "type")) {
            if (wrote_type)
                continue;
            wrote_type = 1;
            sy_jw_key(w, "type");
            if (has_props)
                sy_jw_raw(w, "\"object\"", 8);
            else if (jt(d, v) == 'a')
                sy_jw_node(w, d, one_type);
            else
                sy_jw_node(w, d, v);
            if (type_null) {
                sy_jw_key(w, "nullable");
                sy_jw_bool(w, 1);
                wrote_nullable = 1;
            }
            continue;
        }
        if (sy_jdom_str_eq(d, k, "format")) {
            if (sy_jdom_str_eq(d, v, "enum") || sy_jdom_str_eq(d, v, "date-time")) {
                sy_jw_key(w, "format");
                sy_jw_node(w, d, v);
            }
            continue;
        }
        if (sy_jdom_str_eq(d, k, "required") && jt(d, v) == 'z' && has_props)
            continue;
        if (sy_jdom_str_eq(d, k, "nullable") && (type_null || (inj && inj->nullable)))
            continue;
        sy_jw_key(w, kname);
        if (sy_jdom_str_eq(d, k, "propertyOrdering"))
            wrote_order = 1;
        if (sy_jdom_str_eq(d, k, "properties") && jt(d, v) == 'o') {
            sy_jw_obj(w);
            for (uint32_t pk = sy_jdom_first(d, v); pk; pk = sy_jdom_next_key(d, pk)) {
                size_t kl;
                const char *ks = sy_jdom_str(d, pk, en->a, &kl);
                sy_jw_keyn(w, ks, kl);
                int rc = schema_w(en, sy_jdom_val(pk), root, NULL, ordering, depth + 1);
                if (rc)
                    return rc;
            }
            sy_jw_end(w);
        } else if (sy_jdom_str_eq(d, k, "items") && jt(d, v) == 'o') {
            if (!d->n[v].kids) {
                sy_jw_raw(w, "{\"type\":\"object\"}", 17);
            } else {
                int rc = schema_w(en, v, root, NULL, ordering, depth + 1);
                if (rc)
                    return rc;
            }
        } else if (sy_jdom_str_eq(d, k, "enum") && jt(d, v) == 'a') {
            sy_jw_arr(w);
            for (uint32_t it = sy_jdom_first(d, v); it; it = sy_jdom_next(d, it)) {
                if (jt(d, it) == 's' && d->n[it].len == 2)
                    sy_jw_null(w); /* Gemini refuses "" in enums */
                else
                    sy_jw_node(w, d, it);
            }
            sy_jw_end(w);
        } else {
            sy_jw_node(w, d, v);
        }
    }
    if (has_props && !wrote_type) {
        sy_jw_key(w, "type");
        sy_jw_raw(w, "\"object\"", 8);
    }
    if (inj) {
        if (inj->title) {
            sy_jw_key(w, "title");
            sy_jw_node(w, d, inj->title);
        }
        if (inj->description) {
            sy_jw_key(w, "description");
            sy_jw_node(w, d, inj->description);
        }
        if (inj->nullable && !wrote_nullable) {
            sy_jw_key(w, "nullable");
            sy_jw_bool(w, 1);
        }
    }
    if (ordering && has_props && !wrote_order) {
        sy_jw_key(w, "propertyOrdering");
        sy_jw_arr(w);
        for (uint32_t pk = sy_jdom_first(d, props); pk; pk = sy_jdom_next_key(d, pk))
            sy_jw_node(w, d, pk);
        sy_jw_end(w);
    }
    sy_jw_end(w);
    return 0;
}

/* ---- tools, tool_choice, generationConfig ------------------------------- */

/* Gemini's own tools given in `tools` as {"<name>": {...}} (either spelling). */
static const char *const native_out[] = {"googleSearch", "googleSearchRetrieval", "enterpriseWebSearch",
                                         "codeExecution", "urlContext"};
#define N_NATIVE (sizeof native_out / sizeof native_out[0])
static const struct {
    const char *in;
    int kind; /* index in native_out */
} native_tools[] = {
    {"googleSearch", 0},
    {"google_search", 0},
    {"googleSearchRetrieval", 1},
    {"google_search_retrieval", 1},
    {"enterpriseWebSearch", 2},
    {"enterprise_web_search", 2},
    {"codeExecution", 3},
    {"code_execution", 3},
    {"urlContext", 4},
    {"url_context", 4},
};

/* One functionDeclarations entry from an OpenAI function object {name, description, parameters}. */
static int function_decl(struct enc *en, uint32_t fn, int *opened)
{
    const struct sy_jdoc *d = en->d;
    struct sy_jw *w = &en->w;
    uint32_t name = jget(d, fn, "name");
    if (jt(d, name) != 's')
        return bad_request(en->e, en->provider, "Invalid tool: function.name missing");
    if (!*opened) {
        sy_jw_key(w, "functionDeclarations");
        sy_jw_arr(w);
        *opened = 1;
    }
    sy_jw_obj(w);
    sy_jw_key(w, "name");
    sy_jw_node(w, d, name);
    uint32_t desc = jget(d, fn, "description");
    if (desc && jt(d, desc) != 'z') {
        sy_jw_key(w, "description");
        sy_jw_node(w, d, desc);
    }
    uint32_t params_ = jget(d, fn, "parameters");
    if (jt(d, params_) == 'o') {
        sy_jw_key(w, "parameters");
        int rc = schema_w(en, params_, params_, NULL, 0, 0);
        if (rc)
            return rc;
    } else if (jt(d, params_) == 's' && d->n[params_].len == 2) {
        sy_jw_key(w, "parameters");
        sy_jw_raw(w, "{\"type\":\"object\"}", 17);
    }
    sy_jw_end(w);
    return 0;
}

static int write_tools(struct enc *en)
{
    const struct sy_jdoc *d = en->d;
    struct sy_jw *w = &en->w;
    uint32_t lists[2] = {en->p[P_TOOLS], en->p[P_FUNCTIONS]};
    uint32_t native[N_NATIVE] = {0};
    int any = 0;
    for (int l = 0; l < 2; l++)
        if (jt(d, lists[l]) == 'a' && d->n[lists[l]].kids)
            any = 1;
    int web = jt(d, en->p[P_WEB_SEARCH]) == 'o' && d->n[en->p[P_WEB_SEARCH]].kids;
    if (!any && !web)
        return 0;
    sy_jw_key(w, "tools");
    sy_jw_arr(w);
    if (any) {
        int opened = 0, rc;
        sy_jw_obj(w);
        for (int l = 0; l < 2; l++) {
            if (jt(d, lists[l]) != 'a')
                continue;
            for (uint32_t t = sy_jdom_first(d, lists[l]); t; t = sy_jdom_next(d, t)) {
                if (jt(d, t) != 'o')
                    continue;
                uint32_t fn = jget(d, t, "function");
                if (d->n[t].kids == 1) {
                    size_t i;
                    for (i = 0; i < sizeof native_tools / sizeof native_tools[0]; i++)
                        if (sy_jdom_str_eq(d, t + 1, native_tools[i].in))
                            break;
                    if (i < sizeof native_tools / sizeof native_tools[0]) {
                        native[native_tools[i].kind] = t + 2; /* the last given wins */
                        continue;
                    }
                }
                if (jt(d, fn) == 'o') {
                    if ((rc = function_decl(en, fn, &opened)))
                        return rc;
                } else if (jget(d, t, "name")) { /* functions[] entries */
                    if ((rc = function_decl(en, t, &opened)))
                        return rc;
                }
            }
        }
        if (opened)
            sy_jw_end(w);
        for (size_t i = 0; i < N_NATIVE; i++) {
            if (!native[i])
                continue;
            sy_jw_key(w, native_out[i]);
            sy_jw_node(w, d, native[i]);
        }
        sy_jw_end(w);
    }
    if (web)
        sy_jw_raw(w, "{\"googleSearch\":{}}", 19);
    sy_jw_end(w);
    return 0;
}

static int write_tool_choice(struct enc *en)
{
    const struct sy_jdoc *d = en->d;
    struct sy_jw *w = &en->w;
    uint32_t tc = en->p[P_TOOL_CHOICE];
    const char *mode = NULL;
    uint32_t fname = 0;
    if (!tc)
        return 0;
    if (sy_jdom_str_eq(d, tc, "none"))
        mode = "NONE";
    else if (sy_jdom_str_eq(d, tc, "required"))
        mode = "ANY";
    else if (sy_jdom_str_eq(d, tc, "auto"))
        mode = "AUTO";
    else if (jt(d, tc) == 'o')
        mode = "ANY", fname = jget(d, jget(d, tc, "function"), "name");
    else if (jt(d, tc) != 's')
        return 0; /* LiteLLM maps strings and objects only */
    if (!mode) {
        size_t l;
        const char *v = sy_jdom_raw(d, tc, &l);
        return unsupported_text(en->e, "tool_choice",
                                "litellm.UnsupportedParamsError: VertexAI doesn't support tool_choice=%.*s. Supported "
                                "tool_choice values=['auto', 'required', json object]. To drop it from the call, set "
                                "`litellm.drop_params = True.",
                                (int)(l > 2 && l < 200 ? l - 2 : 0), v + 1);
    }
    sy_jw_key(w, "toolConfig");
    sy_jw_obj(w);
    sy_jw_key(w, "functionCallingConfig");
    sy_jw_obj(w);
    sy_jw_key(w, "mode");
    sy_jw_cstr(w, mode);
    if (jt(d, tc) == 'o') {
        sy_jw_key(w, "allowedFunctionNames");
        sy_jw_arr(w);
        if (jt(d, fname) == 's')
            sy_jw_node(w, d, fname);
        else
            sy_jw_str(w, "", 0);
        sy_jw_end(w);
    }
    sy_jw_end(w);
    sy_jw_end(w);
    return 0;
}

static void gc_key(struct enc *en, const char *k)
{
    if (!en->gc_open) {
        sy_jw_key(&en->w, "generationConfig");
        sy_jw_obj(&en->w);
        en->gc_open = 1;
    }
    sy_jw_key(&en->w, k);
}

/* generationConfig member k = the request value of slot, when given. */
static void gc_copy(struct enc *en, int slot, const char *k)
{
    uint32_t v = en->p[slot];
    if (!v)
        return;
    gc_key(en, k);
    sy_jw_node(&en->w, en->d, v);
}

static int write_generation_config(struct enc *en)
{
    const struct sy_jdoc *d = en->d;
    struct sy_jw *w = &en->w;
    gc_copy(en, P_TEMPERATURE, "temperature");
    gc_copy(en, P_TOP_P, "topP");
    gc_copy(en, P_TOP_K, "topK");
    gc_copy(en, P_MAX_TOKENS, "maxOutputTokens");
    uint32_t stop = en->p[P_STOP];
    if (jt(d, stop) == 's') {
        gc_key(en, "stopSequences");
        sy_jw_arr(w);
        sy_jw_node(w, d, stop);
        sy_jw_end(w);
    } else if (jt(d, stop) == 'a') {
        gc_key(en, "stopSequences");
        sy_jw_node(w, d, stop);
    }
    gc_copy(en, P_N, "candidateCount");
    gc_copy(en, P_PRESENCE, "presencePenalty");
    gc_copy(en, P_FREQUENCY, "frequencyPenalty");
    gc_copy(en, P_SEED, "seed");
    gc_copy(en, P_LOGPROBS, "responseLogprobs");
    gc_copy(en, P_TOP_LOGPROBS, "logprobs");
    uint32_t mod = en->p[P_MODALITIES];
    if (jt(d, mod) == 'a') {
        gc_key(en, "responseModalities");
        sy_jw_arr(w);
        for (uint32_t m = sy_jdom_first(d, mod); m; m = sy_jdom_next(d, m))
            sy_jw_cstr(w, sy_jdom_str_eq(d, m, "text")    ? "TEXT"
                          : sy_jdom_str_eq(d, m, "image") ? "IMAGE"
                          : sy_jdom_str_eq(d, m, "audio") ? "AUDIO"
                                                          : "MODALITY_UNSPECIFIED");
        sy_jw_end(w);
    }
    uint32_t rf = en->p[P_RESPONSE_FORMAT];
    if (jt(d, rf) == 'o') {
        uint32_t type = jget(d, rf, "type"), schema = jget(d, rf, "response_schema");
        const char *mime = NULL;
        if (sy_jdom_str_eq(d, type, "json_object"))
            mime = "application/json";
        else if (sy_jdom_str_eq(d, type, "text"))
            mime = "text/plain";
        if (!schema && sy_jdom_str_eq(d, type, "json_schema"))
            schema = jget(d, jget(d, rf, "json_schema"), "schema");
        if (schema)
            mime = "application/json";
        if (mime) {
            gc_key(en, "responseMimeType");
            sy_jw_cstr(w, mime);
        }
        if (schema) {
            gc_key(en, "responseSchema");
            int rc = schema_w(en, schema, schema, NULL, 1, 0);
            if (rc)
                return rc;
        }
    }
    uint32_t re = en->p[P_REASONING], th = en->p[P_THINKING];
    if (jt(d, th) == 'o') {
        int enabled = sy_jdom_str_eq(d, jget(d, th, "type"), "enabled");
        int64_t budget = -1;
        int have_budget = sy_jdom_i64(d, jget(d, th, "budget_tokens"), &budget);
        gc_key(en, "thinkingConfig");
        sy_jw_obj(w);
        if (enabled && !(have_budget && budget == 0)) {
            sy_jw_key(w, "includeThoughts");
            sy_jw_bool(w, 1);
        }
        if (have_budget) {
            sy_jw_key(w, "thinkingBudget");
            sy_jw_int(w, budget);
        }
        sy_jw_end(w);
    } else if (jt(d, re) == 's') {
        static const struct {
            const char *effort;
            int budget, include;
        } t[] = {{"minimal", 128, 1}, {"low", 1024, 1},  {"medium", 2048, 1},
                 {"high", 4096, 1},   {"disable", 0, 0}, {"none", 0, 0}};
        size_t i;
        for (i = 0; i < sizeof t / sizeof t[0]; i++)
            if (sy_jdom_str_eq(d, re, t[i].effort))
                break;
        if (i == sizeof t / sizeof t[0]) {
            size_t l;
            const char *v = sy_jdom_str(d, re, en->a, &l);
            return bad_request(en->e, en->provider, "Invalid reasoning effort: %.*s", (int)(l > 100 ? 100 : l), v);
        }
        gc_key(en, "thinkingConfig");
        sy_jw_obj(w);
        sy_jw_key(w, "thinkingBudget");
        sy_jw_int(w, t[i].budget);
        sy_jw_key(w, "includeThoughts");
        sy_jw_bool(w, t[i].include);
        sy_jw_end(w);
    }
    if (en->gc_open)
        sy_jw_end(w);
    return 0;
}

int sy_gemini_encode_body(const struct sy_xctx *x, const struct sy_jdoc *req, enum sy_gemini_api api,
                          struct sy_buf *body, struct sy_xerr *e)
{
    struct enc en = {.x = x, .d = req, .api = api, .provider = provider_name(x, api), .a = x->arena, .e = e};
    const struct sy_jdoc *d = req;
    if (sy_jdom_type(d, 0) != 'o')
        return bad_request(e, en.provider, "request body must be a JSON object");
    /* pick the members (the last of a repeated key wins, as in LiteLLM's dict) */
    for (uint32_t k = sy_jdom_first(d, 0); k; k = sy_jdom_next_key(d, k)) {
        uint32_t v = sy_jdom_val(k);
        size_t i;
        for (i = 0; i < sizeof params / sizeof params[0]; i++)
            if (sy_jdom_str_eq(d, k, params[i].name))
                break;
        if (i == sizeof params / sizeof params[0])
            continue; /* not an OpenAI parameter Gemini knows: not sent (LiteLLM drops them too) */
        int slot = params[i].slot;
        if (jt(d, v) == 'z') { /* null = not given */
            if (slot >= 0)
                en.p[slot] = 0;
            continue;
        }
        if (slot != P_MESSAGES && sy_oai_drop_extra(x, params[i].name)) {
            if (slot >= 0)
                en.p[slot] = 0;
            continue;
        }
        if (slot == P_N) {
            int64_t n;
            if (sy_jdom_i64(d, v, &n) && n > 1) { /* one choice per answer here (oai.h) */
                if (!sy_oai_unsupported(x, en.provider, "n", e))
                    return SY_EUNSUPPORTED;
                en.p[slot] = 0;
                continue;
            }
        }
        if (slot == P_LABELS && api != SY_GEMINI_VERTEX)
            continue;
        if (slot == P_UNSUPPORTED) {
            if (!sy_oai_unsupported(x, en.provider, params[i].name, e))
                return SY_EUNSUPPORTED;
            continue;
        }
        en.p[slot] = v;
    }
    uint32_t msgs = en.p[P_MESSAGES];
    if (jt(d, msgs) != 'a')
        return bad_request(e, en.provider, "messages: expected a list of messages");
    /* parallel_tool_calls=false with several tools (LiteLLM validate_parallel_tool_calls) */
    int par;
    if (sy_jdom_bool(d, en.p[P_PARALLEL], &par) && !par && !(x->pc && x->pc->drop_params)) {
        uint32_t tl = en.p[P_TOOLS] ? en.p[P_TOOLS] : en.p[P_FUNCTIONS];
        if (jt(d, tl) == 'a' && d->n[tl].kids > 1)
            return unsupported_text(
                e, "parallel_tool_calls",
                "litellm.UnsupportedParamsError: `parallel_tool_calls=False` is not supported by Gemini when "
                "multiple tools are provided. Specify a single tool, or set `parallel_tool_calls=True`. If "
                "you want to drop this param, set `litellm.drop_params = True` or pass in `(.., "
                "drop_params=True)` in the requst - https://docs.litellm.ai/docs/completion/drop_params");
    }

    sy_jw_init(&en.w, body);
    sy_jw_obj(&en.w);
    /* contents first, then systemInstruction: two passes over messages */
    int nsys = 0;
    for (uint32_t m = sy_jdom_first(d, msgs); m; m = sy_jdom_next(d, m)) {
        uint32_t c = jget(d, m, "content");
        if (role_of(d, m) == R_SYSTEM && (jt(d, c) == 's' || jt(d, c) == 'a'))
            nsys++;
    }
    int rc = write_contents(&en, msgs, nsys);
    if (!rc)
        write_system(&en, msgs);
    if (!rc)
        rc = write_tools(&en);
    if (!rc)
        rc = write_tool_choice(&en);
    if (!rc && en.p[P_SAFETY]) {
        sy_jw_key(&en.w, "safetySettings");
        sy_jw_node(&en.w, d, en.p[P_SAFETY]);
    }
    if (!rc)
        rc = write_generation_config(&en);
    if (!rc && en.p[P_CACHED]) {
        sy_jw_key(&en.w, "cachedContent");
        sy_jw_node(&en.w, d, en.p[P_CACHED]);
    }
    if (!rc && jt(d, en.p[P_LABELS]) == 'o') {
        sy_jw_key(&en.w, "labels");
        sy_jw_node(&en.w, d, en.p[P_LABELS]);
    }
    if (rc)
        return rc;
    sy_jw_end(&en.w);
    if (en.w.err)
        return fail(e, SY_ENOSPC, 413, "request too large for the upstream body buffer");
    return 0;
}

/* ---- embeddings input ---------------------------------------------------- */

int sy_gemini_embed_input(const struct sy_xctx *x, const struct sy_jdoc *req, const char *provider,
                          struct sy_gemini_embed_in *in, struct sy_xerr *e)
{
    const struct sy_jdoc *d = req;
    memset(in, 0, sizeof *in);
    in->dimensions = -1;
    if (sy_jdom_type(d, 0) != 'o')
        return bad_request(e, provider, "request body must be a JSON object");
    for (uint32_t k = sy_jdom_first(d, 0); k; k = sy_jdom_next_key(d, k)) {
        uint32_t v = sy_jdom_val(k);
        if (jt(d, v) == 'z')
            continue;
        if (sy_jdom_str_eq(d, k, "dimensions")) {
            if (sy_oai_drop_extra(x, "dimensions"))
                continue;
            if (!sy_jdom_i64(d, v, &in->dimensions))
                return bad_request(e, provider, "dimensions: expected an integer");
        } else if (sy_jdom_str_eq(d, k, "task_type")) {
            in->task_type = jt(d, v) == 's' ? v : 0;
        } else if (sy_jdom_str_eq(d, k, "logit_bias")) { /* nothing else of OpenAI's applies */
            if (!sy_oai_unsupported(x, provider, "logit_bias", e))
                return SY_EUNSUPPORTED;
        }
    }
    uint32_t input = rget(d, "input");
    size_t n = jt(d, input) == 's' ? 1 : jt(d, input) == 'a' ? d->n[input].kids : 0;
    if (!n)
        return bad_request(e, provider, "input: expected a string or a non-empty list of strings");
    in->texts = sy_arena_alloc(x->arena, n * sizeof *in->texts);
    in->lens = sy_arena_alloc(x->arena, n * sizeof *in->lens);
    if (jt(d, input) == 's') {
        in->texts[0] = sy_jdom_str(d, input, x->arena, &in->lens[0]);
    } else {
        size_t i = 0;
        for (uint32_t it = sy_jdom_first(d, input); it; it = sy_jdom_next(d, it), i++)
            if (!(in->texts[i] = sy_jdom_str(d, it, x->arena, &in->lens[i])))
                return bad_request(e, provider, "input: %s embeddings take strings (token arrays are not supported)",
                                   provider);
    }
    in->n = n;
    return 0;
}

/* ---- response ------------------------------------------------------------ */

/* Stream state in st->priv. */
struct gstream {
    int id_set;   /* st->id replaced by responseId */
    int saw_tool; /* a tool call was opened: finish_reason is tool_calls */
};
static_assert(sizeof(struct gstream) <= sizeof(((struct sy_xstate *)0)->priv), "gemini stream state too large");

static int64_t num(const struct sy_jdoc *d, uint32_t obj, const char *key)
{
    int64_t v = 0;
    if (!sy_jdom_i64(d, jget(d, obj, key), &v))
        v = 0;
    return v;
}

/* usageMetadata -> u (LiteLLM's _calculate_usage; basic: the blocked-response form
 * without details). */
static void usage_from(const struct sy_jdoc *d, uint32_t um, struct sy_xusage *u, int basic)
{
    if (jt(d, um) != 'o')
        return;
    int64_t p = num(d, um, "promptTokenCount"), c = num(d, um, "candidatesTokenCount"),
            t = num(d, um, "totalTokenCount"), th = num(d, um, "thoughtsTokenCount");
    memset(u, 0, sizeof *u);
    u->have = 1;
    u->prompt = p;
    u->completion = c;
    if (basic)
        return;
    u->cache_read = num(d, um, "cachedContentTokenCount");
    u->reasoning = th;
    if (p + c != t && th)
        u->completion = c + th;
}

/* "call_" + 28 hex digits from the response id and the call's index. */
static size_t tool_id(const struct sy_xstate *st, int index, char out[40])
{
    uint64_t h1 = 0xcbf29ce484222325ULL, h2 = 0x84222325cbf29ce4ULL;
    for (const unsigned char *p = (const unsigned char *)st->id; *p; p++) {
        h1 = (h1 ^ *p) * 0x100000001b3ULL;
        h2 = (h2 ^ *p) * 0x100000001b3ULL;
    }
    for (int i = 0; i < 4; i++) {
        unsigned char b = (unsigned char)((unsigned)index >> (8 * i));
        h1 = (h1 ^ b) * 0x100000001b3ULL;
        h2 = (h2 ^ (b + 0x5bu)) * 0x100000001b3ULL;
    }
    h2 ^= h1 >> 29;
    memcpy(out, "call_", 5);
    sy_hex_u64(out + 5, h1, 16);
    sy_hex_u64(out + 21, h2 >> 16, 12);
    out[33] = 0;
    return 33;
}

/* The tool call id of a functionCall part: tool_id[+"__thought__"+thoughtSignature]. */
static const char *call_id(const struct sy_jdoc *d, uint32_t part, const struct sy_xstate *st, int index,
                           struct sy_arena *a, size_t *len)
{
    char base[40];
    size_t bl = tool_id(st, index, base);
    size_t sl = 0;
    const char *sig = sy_jdom_str(d, jget(d, part, "thoughtSignature"), a, &sl);
    char *o = sy_arena_alloc(a, bl + (sig ? sizeof THOUGHT_SEP - 1 + sl : 0) + 1);
    memcpy(o, base, bl);
    *len = bl;
    if (sig) {
        memcpy(o + bl, THOUGHT_SEP, sizeof THOUGHT_SEP - 1);
        memcpy(o + bl + sizeof THOUGHT_SEP - 1, sig, sl);
        *len = bl + sizeof THOUGHT_SEP - 1 + sl;
    }
    o[*len] = 0;
    return o;
}

/* Text of a part for content / reasoning: text, or an inlineData (not audio)
 * as a data: URL. NULL when the part has neither. */
static const char *part_payload(const struct sy_jdoc *d, uint32_t part, struct sy_arena *a, size_t *len)
{
    uint32_t t = jget(d, part, "text");
    if (jt(d, t) == 's')
        return sy_jdom_str(d, t, a, len);
    uint32_t id = jget(d, part, "inlineData");
    if (jt(d, id) != 'o')
        return NULL;
    size_t ml, dl;
    const char *mime = sy_jdom_str(d, jget(d, id, "mimeType"), a, &ml);
    const char *data = sy_jdom_str(d, jget(d, id, "data"), a, &dl);
    if (!mime || !data || starts(mime, ml, "audio/"))
        return NULL;
    char *o = sy_arena_alloc(a, ml + dl + 16);
    int n = snprintf(o, ml + dl + 16, "data:%s;base64,%s", mime, data);
    *len = n > 0 ? (size_t)n : 0;
    return o;
}

static int is_thought(const struct sy_jdoc *d, uint32_t part)
{
    int v = 0;
    return sy_jdom_bool(d, jget(d, part, "thought"), &v) && v;
}

/* The finish reasons LiteLLM answers with content:null (get_flagged_finish_reasons). */
static int flagged(const struct sy_jdoc *d, uint32_t fr)
{
    static const char *const t[] = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (sy_jdom_str_eq(d, fr, t[i]))
            return 1;
    return 0;
}

static const char *finish_of(const struct sy_jdoc *d, uint32_t fr, struct sy_arena *a)
{
    size_t l;
    const char *s = sy_jdom_str(d, fr, a, &l);
    return s ? sy_oai_finish_reason(s, l) : "stop";
}

static void adopt_id(const struct sy_jdoc *d, struct sy_xstate *st, struct sy_arena *a)
{
    size_t l;
    const char *rid = sy_jdom_str(d, rget(d, "responseId"), a, &l);
    if (rid && l && l < sizeof st->id && !memchr(rid, 0, l))
        memcpy(st->id, rid, l + 1);
}

/* A 2xx answer that is not a GenerateContentResponse (the text follows
 * "<Provider>Exception - " for the client, as decode_error's). */
static int bad_body(struct sy_xstate *st, const char *what)
{
    fail(&st->err, SY_EUPPROTO, 502, "Error converting to valid response block: %s", what);
    snprintf(st->err.cls, sizeof st->err.cls, "APIError");
    return SY_EUPPROTO;
}

int sy_gemini_decode_response(const struct sy_xctx *x, struct sy_xstate *st, const char *body, size_t n,
                              struct sy_buf *out)
{
    struct sy_jdoc doc;
    struct sy_arena *a = x->arena;
    if (sy_jdom_parse(&doc, body, n, a, 0) || sy_jdom_type(&doc, 0) != 'o')
        return bad_body(st, "the body is not a JSON object");
    const struct sy_jdoc *d = &doc;
    adopt_id(d, st, a);
    uint32_t um = rget(d, "usageMetadata");
    struct sy_xmsg m = {.finish_reason = "stop"};
    uint32_t pf = rget(d, "promptFeedback");
    uint32_t cands = rget(d, "candidates");
    uint32_t c0 = jt(d, cands) == 'a' ? sy_jdom_first(d, cands) : 0;
    uint32_t fr = jget(d, c0, "finishReason");
    if (jget(d, pf, "blockReason") || flagged(d, fr)) {
        usage_from(d, um, &st->u, 1);
        m.finish_reason = "content_filter";
        sy_oai_write_response(st, &m, out);
        return 0;
    }
    usage_from(d, um, &st->u, 0);
    uint32_t parts = jget(d, jget(d, c0, "content"), "parts");
    struct sy_buf text, reason, args;
    size_t cap = 2 * n + 4096;
    sy_buf_init(&text, cap);
    sy_buf_init(&reason, cap);
    sy_buf_init(&args, 4 * n + 4096);
    size_t ncalls = 0;
    if (jt(d, parts) == 'a')
        for (uint32_t p = sy_jdom_first(d, parts); p; p = sy_jdom_next(d, p))
            if (jt(d, jget(d, p, "functionCall")) == 'o')
                ncalls++;
    struct sy_xtool *tools = ncalls ? sy_arena_alloc(a, ncalls * sizeof *tools) : NULL;
    size_t *aoff = ncalls ? sy_arena_alloc(a, ncalls * sizeof *aoff) : NULL;
    int have_text = 0, have_reason = 0;
    size_t k = 0;
    if (jt(d, parts) == 'a') {
        for (uint32_t p = sy_jdom_first(d, parts); p; p = sy_jdom_next(d, p)) {
            uint32_t fc = jget(d, p, "functionCall");
            if (jt(d, fc) == 'o') {
                struct sy_xtool *t = &tools[k];
                t->id = call_id(d, p, st, (int)k, a, &t->idl);
                t->name = sy_jdom_str(d, jget(d, fc, "name"), a, &t->nl);
                if (!t->name)
                    t->name = "", t->nl = 0;
                aoff[k] = args.len;
                py_dump(d, jget(d, fc, "args"), a, &args);
                t->al = args.len - aoff[k];
                k++;
                continue;
            }
            size_t l;
            const char *s = part_payload(d, p, a, &l);
            if (!s || !l)
                continue;
            if (is_thought(d, p))
                sy_buf_append(&reason, s, l), have_reason = 1;
            else
                sy_buf_append(&text, s, l), have_text = 1;
        }
    }
    for (size_t i = 0; i < k; i++)
        tools[i].args = args.p + aoff[i];
    m.content = have_text ? text.p : NULL;
    m.content_len = text.len;
    m.reasoning = have_reason ? reason.p : NULL;
    m.reasoning_len = reason.len;
    m.tools = tools;
    m.ntools = k;
    m.finish_reason = k ? "tool_calls" : finish_of(d, fr, a);
    sy_oai_write_response(st, &m, out);
    sy_buf_free(&text);
    sy_buf_free(&reason);
    sy_buf_free(&args);
    return 0;
}

int sy_gemini_decode_event(const struct sy_xctx *x, struct sy_xstate *st, const char *data, size_t dl,
                           struct sy_buf *out)
{
    struct gstream *gs = (struct gstream *)st->priv;
    struct sy_arena *a = x->arena;
    size_t i = 0;
    while (i < dl && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t'))
        i++;
    if (i == dl)
        return 0; /* keep-alive */
    struct sy_jdoc doc;
    if (sy_jdom_parse(&doc, data, dl, a, 0) || sy_jdom_type(&doc, 0) != 'o')
        return bad_body(st, "a stream event is not a JSON object");
    const struct sy_jdoc *d = &doc;
    uint32_t err = rget(d, "error");
    if (jt(d, err) == 'o') {
        int64_t code = num(d, err, "code");
        sy_gemini_map_error(x->d && x->d->provider ? x->d->provider : "gemini",
                            code >= 400 && code < 600 ? (int)code : 500, data, dl, &st->err);
        return SY_EUPPROTO;
    }
    if (!gs->id_set) {
        adopt_id(d, st, a);
        gs->id_set = 1;
    }
    uint32_t um = rget(d, "usageMetadata");
    if (um)
        usage_from(d, um, &st->u, 0);
    uint32_t cands = rget(d, "candidates");
    uint32_t c0 = jt(d, cands) == 'a' ? sy_jdom_first(d, cands) : 0;
    if (!c0) {
        if (jget(d, rget(d, "promptFeedback"), "blockReason"))
            sy_oai_chunk_finish(st, out, "content_filter");
        return 0;
    }
    uint32_t parts = jget(d, jget(d, c0, "content"), "parts");
    if (jt(d, parts) == 'a') {
        for (uint32_t p = sy_jdom_first(d, parts); p; p = sy_jdom_next(d, p)) {
            uint32_t fc = jget(d, p, "functionCall");
            if (jt(d, fc) == 'o') {
                size_t il, nl = 0;
                const char *id = call_id(d, p, st, st->ntools, a, &il);
                const char *name = sy_jdom_str(d, jget(d, fc, "name"), a, &nl);
                int idx = sy_oai_chunk_tool_start(st, out, id, il, name ? name : "", name ? nl : 0);
                struct sy_buf args;
                sy_buf_init(&args, 4 * dl + 64);
                py_dump(d, jget(d, fc, "args"), a, &args);
                sy_oai_chunk_tool_args(st, out, idx, args.p, args.len);
                sy_buf_free(&args);
                gs->saw_tool = 1;
                continue;
            }
            size_t l;
            const char *s = part_payload(d, p, a, &l);
            if (!s)
                continue;
            if (is_thought(d, p))
                sy_oai_chunk_reasoning(st, out, s, l);
            else
                sy_oai_chunk_text(st, out, s, l);
        }
    }
    uint32_t fr = jget(d, c0, "finishReason");
    if (jt(d, fr) == 's')
        sy_oai_chunk_finish(st, out, gs->saw_tool ? "tool_calls" : finish_of(d, fr, a));
    return 0;
}

/* ---- errors -------------------------------------------------------------- */

static int context_window_text(const char *b, size_t n)
{
    static const char *const t[] = {
        "exceed context limit",
        "this model's maximum context length is",
        "string too long. expected a string with maximum length",
        "model's maximum context limit",
        "is longer than the model's context length",
        "input tokens exceed the configured limit",
        "`inputs` tokens + `max_new_tokens` must be",
        "exceeds the available context size",
        "exceeds the maximum number of tokens allowed",
    };
    if (memhas_ci(b, n, "string_above_max_length"))
        return 0;
    if (memhas_ci(b, n, "invalid 'user'") && memhas_ci(b, n, "string too long"))
        return 0;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (memhas_ci(b, n, t[i]))
            return 1;
    if (memhas_ci(b, n, "current length is") && memhas_ci(b, n, "while limit is"))
        return 1;
    return memhas_ci(b, n, "maximum input length is") && memhas_ci(b, n, "tokens");
}

/* re.search(r"resource[\s_]exhausted", s, re.IGNORECASE) */
static int resource_exhausted(const char *b, size_t n)
{
    for (size_t i = 0; n >= 18 && i <= n - 18; i++)
        if (strncasecmp(b + i, "resource", 8) == 0 &&
            (b[i + 8] == '_' || b[i + 8] == ' ' || b[i + 8] == '\t' || b[i + 8] == '\n' || b[i + 8] == '\r' ||
             b[i + 8] == '\f' || b[i + 8] == '\v') &&
            strncasecmp(b + i + 9, "exhausted", 9) == 0)
            return 1;
    return 0;
}

/* error.code of a JSON error body, 0 when none. */
static int64_t body_code(const char *b, size_t n)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    int64_t code = 0;
    if (!sy_jdom_parse(&d, b, n, &a, 4096))
        code = num(&d, rget(&d, "error"), "code");
    sy_arena_free(&a);
    return code;
}

void sy_gemini_map_error(const char *provider, int status, const char *body, size_t n, struct sy_xerr *e)
{
    (void)provider;
    const char *b = body ? body : "";
    int st;
    const char *cls;
    if (memhas(b, n, "Vertex AI API has not been used in project") || memhas(b, n, "Unable to find your project"))
        st = 400, cls = "BadRequestError";
    else if (memhas(b, n, "400 Request payload size exceeds") || context_window_text(b, n))
        st = 400, cls = "ContextWindowExceededError";
    else if (memhas(b, n, "None Unknown Error.") || memhas(b, n, "Content has no parts."))
        st = 500, cls = "InternalServerError";
    else if (memhas(b, n, "API key not valid."))
        st = 401, cls = "AuthenticationError";
    else if (status == 403) /* LiteLLM raises BadRequestError for a Vertex 403 */
        st = 400, cls = "BadRequestError";
    else if (memhas(b, n, "The response was blocked.") || memhas(b, n, "Output blocked by content filtering policy"))
        st = 400, cls = "ContentPolicyViolationError";
    else if (memhas(b, n, "429 Quota exceeded") || memhas(b, n, "Quota exceeded for") || resource_exhausted(b, n) ||
             memhas(b, n, "IndexError: list index out of range") ||
             memhas(b, n, "429 Unable to submit request because the service is temporarily out of capacity.") ||
             (status >= 500 && status < 600 && body_code(b, n) == 429))
        st = 429, cls = "RateLimitError";
    else if (memhas(b, n, "500 Internal Server Error") || memhas(b, n, "The model is overloaded."))
        st = 500, cls = "InternalServerError";
    else
        switch (status) {
        case 400: st = 400, cls = "BadRequestError"; break;
        case 401: st = 401, cls = "AuthenticationError"; break;
        case 404: st = 404, cls = "NotFoundError"; break;
        case 408: st = 408, cls = "Timeout"; break;
        case 422: st = 422, cls = "UnprocessableEntityError"; break;
        case 429: st = 429, cls = "RateLimitError"; break;
        case 500: st = 500, cls = "InternalServerError"; break;
        case 503: st = 503, cls = "ServiceUnavailableError"; break;
        default:
            if (status >= 400 && status < 500)
                st = status, cls = "APIError";
            else
                st = 500, cls = "APIConnectionError"; /* 502, 504, ...: LiteLLM's fallback */
        }
    sy_oai_err(e, st, b, n);
    snprintf(e->cls, sizeof e->cls, "%s", cls);
}

/* ---- the AI Studio adapter ------------------------------------------------ */

static int g_configure(const struct sy_deployment *d, int global_drop_params, struct sy_pconf *pc, char *err,
                       size_t errlen)
{
    const char *base = d->api_base && *d->api_base ? d->api_base : getenv("GEMINI_API_BASE");
    if (!base || !*base)
        base = STUDIO_BASE;
    size_t bl = strlen(base);
    while (bl && base[bl - 1] == '/')
        bl--;
    if (!(pc->base = strndup(base, bl)))
        goto oom;
    const char *key = d->api_key && *d->api_key ? d->api_key : getenv("GEMINI_API_KEY");
    if (!key || !*key)
        key = getenv("GOOGLE_API_KEY");
    if (key && *key && !(pc->key = strdup(key)))
        goto oom;
    return sy__gemini_conf_common(d, global_drop_params, pc, err, errlen);
oom:
    snprintf(err, errlen, "out of memory");
    return -1;
}

/* {base}/v1beta/models/{model}:{method}, or {base}/models/{model}:{method} for an api_base with a path. */
static void g_url(const struct sy_xctx *x, const char *method, struct sy_buf *url)
{
    const char *base = x->pc && x->pc->base ? x->pc->base : STUDIO_BASE;
    sy_buf_puts(url, base);
    if (!sy__gemini_base_has_path(base))
        SY_BUF_LIT(url, "/v1beta");
    SY_BUF_LIT(url, "/models/");
    sy_buf_puts(url, x->model ? x->model : "");
    SY_BUF_LIT(url, ":");
    sy_buf_puts(url, method);
}

static int g_encode(const struct sy_xctx *x, const struct sy_jdoc *req, struct sy_xout *o)
{
    int rc;
    if (x->op == SY_OP_EMBED) {
        struct sy_gemini_embed_in in;
        if ((rc = sy_gemini_embed_input(x, req, "gemini", &in, &o->err)))
            return rc;
        g_url(x, "batchEmbedContents", &o->url);
        size_t ml = 7 + (x->model ? strlen(x->model) : 0);
        char *mname = sy_arena_alloc(x->arena, ml + 1);
        snprintf(mname, ml + 1, "models/%s", x->model ? x->model : "");
        struct sy_jw w;
        sy_jw_init(&w, &o->body);
        sy_jw_obj(&w);
        sy_jw_key(&w, "requests");
        sy_jw_arr(&w);
        for (size_t i = 0; i < in.n; i++) {
            sy_jw_obj(&w);
            sy_jw_key(&w, "model");
            sy_jw_str(&w, mname, ml);
            sy_jw_key(&w, "content");
            sy_jw_obj(&w);
            sy_jw_key(&w, "parts");
            sy_jw_arr(&w);
            sy_jw_obj(&w);
            sy_jw_key(&w, "text");
            sy_jw_str(&w, in.texts[i], in.lens[i]);
            sy_jw_end(&w);
            sy_jw_end(&w);
            sy_jw_end(&w);
            if (in.dimensions >= 0) {
                sy_jw_key(&w, "outputDimensionality");
                sy_jw_int(&w, in.dimensions);
            }
            if (in.task_type) {
                sy_jw_key(&w, "taskType");
                sy_jw_node(&w, req, in.task_type);
            }
            sy_jw_end(&w);
        }
        sy_jw_end(&w);
        sy_jw_end(&w);
        if (w.err)
            return fail(&o->err, SY_ENOSPC, 413, "request too large for the upstream body buffer");
    } else {
        g_url(x, x->stream ? "streamGenerateContent?alt=sse" : "generateContent", &o->url);
        if ((rc = sy_gemini_encode_body(x, req, SY_GEMINI_STUDIO, &o->body, &o->err)))
            return rc;
    }
    SY_BUF_LIT(&o->headers, "Content-Type: application/json\r\n");
    if (x->pc && x->pc->key) {
        SY_BUF_LIT(&o->headers, "x-goog-api-key: ");
        sy_buf_puts(&o->headers, x->pc->key);
        SY_BUF_LIT(&o->headers, "\r\n");
    }
    return 0;
}

static int g_decode_response(const struct sy_xctx *x, struct sy_xstate *st, const char *body, size_t n,
                             struct sy_buf *out)
{
    if (x->op != SY_OP_EMBED)
        return sy_gemini_decode_response(x, st, body, n, out);
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, body, n, x->arena, 0) || sy_jdom_type(&d, 0) != 'o')
        return bad_body(st, "the body is not a JSON object");
    uint32_t embs = rget(&d, "embeddings");
    if (jt(&d, embs) != 'a')
        return bad_body(st, "no embeddings in the answer");
    size_t cnt = d.n[embs].kids, i = 0;
    const char **vec = sy_arena_alloc(x->arena, (cnt ? cnt : 1) * sizeof *vec);
    size_t *vl = sy_arena_alloc(x->arena, (cnt ? cnt : 1) * sizeof *vl);
    for (uint32_t e = sy_jdom_first(&d, embs); e; e = sy_jdom_next(&d, e), i++) {
        uint32_t v = jget(&d, e, "values");
        if (jt(&d, v) != 'a')
            return bad_body(st, "an embedding without values");
        vec[i] = sy__gemini_compact(&d, v, x->arena, &vl[i]);
    }
    sy_oai_write_embeddings(st, vec, vl, cnt, out);
    return 0;
}

static int g_decode_event(const struct sy_xctx *x, struct sy_xstate *st, const char *type, size_t tl, const char *data,
                          size_t dl, struct sy_buf *out)
{
    (void)type, (void)tl;
    return sy_gemini_decode_event(x, st, data, dl, out);
}

static void g_decode_error(const struct sy_xctx *x, int status, const char *body, size_t n, struct sy_xerr *e)
{
    (void)x;
    sy_gemini_map_error("gemini", status, body, n, e);
}

const struct sy_adapter sy_adapter_gemini = {
    .name = "gemini",
    .caps = SY_CAP_STREAM | SY_CAP_TOOLS | SY_CAP_VISION | SY_CAP_EMBED | SY_CAP_REASONING,
    .framing = SY_FRAME_SSE,              /* streamGenerateContent?alt=sse */
    .configure = g_configure,             /* api_base/GEMINI_API_BASE, api_key/GEMINI_API_KEY */
    .encode = g_encode,                   /* generateContent, batchEmbedContents */
    .decode_response = g_decode_response, /* GenerateContentResponse, embeddings list */
    .decode_event = g_decode_event,       /* one GenerateContentResponse per event */
    .decode_error = g_decode_error,       /* LiteLLM's _map_vertex_exception */
};
