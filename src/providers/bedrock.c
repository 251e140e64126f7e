/* bedrock.c - AWS Bedrock: Converse / ConverseStream for chat, InvokeModel
 * for Titan and Cohere text embeddings (adapter.h). Behaviour follows
 * LiteLLM 1.80's llms/bedrock/chat/converse_transformation.py,
 * converse_handler.py, base_aws_llm.py, the embed/ files and the Bedrock parts of
 * prompt_templates/factory.py.
 *
 * Settings (configure(); litellm_params first, then the environment, then the default):
 *
 *   setting        from
 *   -------------  ---------------------------------------------------------------------------
 *   region         aws_region_name, the region of an ARN model id, AWS_REGION_NAME, AWS_REGION,
 *                  AWS_DEFAULT_REGION, "us-west-2" (LiteLLM's fallback)
 *   SigV4 keys     aws_access_key_id / aws_secret_access_key / aws_session_token, else
 *                  AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN
 *   bearer key     api_key, else AWS_BEARER_TOKEN_BEDROCK (used instead of SigV4 when set)
 *   endpoint       aws_bedrock_runtime_endpoint, AWS_BEDROCK_RUNTIME_ENDPOINT, api_base (the
 *                  order of the URL LiteLLM's converse handler sends to), else
 *                  https://bedrock-runtime.{region}.amazonaws.com
 *   drop params    drop_params (else litellm_settings'), additional_drop_params (a list)
 *
 * Refused: aws_role_name / aws_profile_name / aws_web_identity_token (configure fails:
 * no STS or profile files here); bedrock/invoke/... and the other
 * InvokeModel chat routes; http(s) image URLs (Bedrock takes bytes; nothing is
 * downloaded); file_id; input_audio; non-function tools (computer use); more than one
 * input per Titan embedding request; Titan image, Nova and TwelveLabs embeddings.
 * Not done (LiteLLM does them): tool names made valid for Bedrock, guarded_text for
 * guardrailConfig, modify_params' dummy tools and continue messages, $defs inlining in
 * tool schemas (the schema is sent as written), any other body key passed through.
 *
 * Model: x->model is what follows "bedrock/"; a leading "converse/" is
 * dropped. Any other route ("invoke/...", "llama/...", ...) is refused for
 * chat: only Converse is spoken here. The litellm_params model_id, when set
 * (provisioned throughput ARN), is the id put in the URL.
 *
 *   call                  URL (id = quote(model id, safe=""): ':' -> %3A, '/' -> %2F)
 *   --------------------  ---------------------------------------------------------------
 *   chat                  POST {base}/model/{id}/converse
 *   chat, stream          POST {base}/model/{id}/converse-stream   (AWS event stream)
 *   embeddings            POST {base}/model/{id}/invoke
 *
 *   header                value
 *   --------------------  ---------------------------------------------------------------
 *   Content-Type          application/json                                  (signed)
 *   Accept                application/json | application/vnd.amazon.eventstream
 *   X-Amz-Date            YYYYMMDDTHHMMSSZ from x->now                       (signed)
 *   X-Amz-Security-Token  the session token, when there is one              (signed)
 *   Authorization         AWS4-HMAC-SHA256 Credential=AK/DATE/REGION/bedrock/aws4_request,
 *                         SignedHeaders=content-type;host;x-amz-date[;x-amz-security-token],
 *                         Signature=... over the exact body (sigv4.h); or "Bearer <api_key |
 *                         AWS_BEARER_TOKEN_BEDROCK>" instead of SigV4 when a key is set
 *
 * Chat request (body members in this order):
 *
 *   OpenAI                                   Converse
 *   ---------------------------------------  ------------------------------------------------
 *   messages (user, assistant, tool)         messages[{role, content[]}]: consecutive user and
 *                                            tool messages form one user turn, consecutive
 *                                            assistant messages one assistant turn
 *     text / string content                    {text}  (whitespace-only user parts skipped;
 *                                              an empty assistant string becomes ".")
 *     image_url / file data: URL               {image|document|video: {source:{bytes: b64},
 *                                              format[, name]}}; http(s) URLs refused (400)
 *     cache_control on a part / message        {cachePoint:{type:"default"}} after it
 *     assistant thinking_blocks, "thinking"    {reasoningContent:{reasoningText:{text,
 *                                              signature}}} (no signature: {text})
 *     assistant tool_calls                     {toolUse:{input: arguments parsed, name, toolUseId}}
 *     role tool                                {toolResult:{content:[{text}|{image}], toolUseId}}
 *                                            additionalModelRequestFields{thinking, reasoning_effort,
 *                                            reasoningConfig, top_k | inferenceConfig.topK,
 *                                            anthropic_beta (anthropic-beta header)}
 *   system / developer messages              system[{text}, {cachePoint}]
 *   max_tokens | max_completion_tokens,      inferenceConfig{maxTokens, stopSequences,
 *   stop, temperature, top_p                 temperature, topP}
 *   guardrailConfig, performanceConfig,      copied as they are
 *   serviceTier
 *   tools[{function}]                        toolConfig{tools[{toolSpec{inputSchema{json},
 *                                            name, description}}], toolChoice}
 *   tool_choice auto|required|{function}     {auto:{}} | {any:{}} | {tool:{name}}; "none" is an
 *                                            unsupported value (dropped with drop_params)
 *   response_format json_object/json_schema  a forced "json_tool_call" tool (its input becomes
 *                                            the content of the answer)
 *   thinking / reasoning_effort              thinking{type, budget_tokens} (low 1024, medium 2048,
 *                                            high 4096, minimal 128; maxTokens budget+4096 when
 *                                            unset); gpt-oss: reasoning_effort; nova-2-lite:
 *                                            reasoningConfig{type, maxReasoningEffort}
 *   requestMetadata                          requestMetadata
 *   n, seed, logit_bias, presence_penalty,   sy_oai_unsupported (400, or dropped)
 *   frequency_penalty, logprobs, ...
 *
 * Chat response -> OpenAI:
 *
 *   Converse                                 OpenAI
 *   ---------------------------------------  ------------------------------------------------
 *   output.message.content[].text            content (concatenated; "" when none); a leading
 *                                            <think>..</think> goes to reasoning_content
 *   ...[].toolUse{toolUseId,name,input}      tool_calls[{id, function{name, arguments: input}}]
 *   ...[].reasoningContent                   reasoning_content, thinking_blocks
 *   stopReason                               finish_reason (sy_oai_finish_reason)
 *   usage{inputTokens, outputTokens,         prompt = input + cacheRead + cacheWrite,
 *   cacheReadInputTokens, cacheWriteInput..}  completion = output, cache details
 *
 * Stream (AWS event stream; type = :event-type, "!" + :exception-type):
 *
 *   event                                    chunks written
 *   ---------------------------------------  ------------------------------------------------
 *   messageStart {role}                      the role chunk
 *   contentBlockStart {start.toolUse}        tool call opens (id, name)
 *   contentBlockDelta {delta.text}           content
 *   contentBlockDelta {delta.toolUse.input}  tool arguments piece (json_tool_call: content)
 *   contentBlockDelta {delta.reasoningContent.text}  reasoning_content
 *   contentBlockStop                         "{}" arguments for a tool that got none
 *   messageStop {stopReason}                 the finish chunk
 *   metadata {usage, metrics}                usage into st->u; SY_DONE (the last event)
 *   !throttlingException ...                 st->err (429; validation 400, serviceUnavailable
 *                                            503, internalServer / modelStream 500)
 *
 * Embeddings (one InvokeModel request):
 *
 *   model                    request                                  response
 *   -----------------------  ---------------------------------------  -----------------------------
 *   amazon.titan-embed-text  {"inputText": s[, "dimensions", "normalize", {"embedding":[..],
 *                            "embeddingTypes"]} (v2); ONE input: a    "inputTextTokenCount":N} or
 *                            list of more is a 400                     embeddingsByType{float|binary}
 *   cohere.embed-*           {"texts":[..], "input_type":             {"embeddings":[[..],..]} or
 *                            "search_document"|input_type[,"truncate"]} {"embeddings":{"float":[..]}}
 *
 * Errors: the client sees the upstream body as the message (LiteLLM's
 * BedrockException text) with LiteLLM's status mapping (500 -> 503, 422 -> 400,
 * 504 -> 408, throttling -> 429, context-window texts -> 400
 * ContextWindowExceededError, invalid security token -> 401).
 *
 * Invariants: no I/O except getenv() in configure(), no clock, no globals;
 * stream state lives in st->priv (struct bstream); each stream event is
 * parsed in a stack arena, so a long stream takes constant memory.
 */
#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/sha.h>

#include "core/errors.h"
#include "providers/adapter.h"
#include "providers/betas.h"
#include "providers/jdom.h"
#include "providers/oai.h"
#include "providers/sigv4.h"

#define JSON_TOOL          "json_tool_call" /* LiteLLM's RESPONSE_FORMAT_TOOL_NAME */
#define DEFAULT_MAX_TOKENS 4096             /* LiteLLM's DEFAULT_MAX_TOKENS (thinking without max_tokens) */

/* ---- small helpers --------------------------------------------------------- */

static int fail(struct sy_xerr *e, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct sy_xerr *e, int status, const char *fmt, ...)
{
    char m[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    sy_oai_err(e, status, m, (size_t)n < sizeof m ? (size_t)n : sizeof m - 1);
    return status == 401 ? SY_EAUTH : status == 413 ? SY_ENOSPC : status >= 500 ? SY_EINTERNAL : SY_EINVAL;
}

static int starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* Node type, 0 for node 0: sy_jdom_get() answers 0 for "absent", and node 0
 * is the root, whose type is not the absent member's. */
static char jtype(const struct sy_jdoc *d, uint32_t i)
{
    return i ? sy_jdom_type(d, i) : 0;
}

static int present(const struct sy_jdoc *d, uint32_t i)
{
    return i && jtype(d, i) != 'z';
}

static int is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r' && s[i] != '\v' && s[i] != '\f')
            return 0;
    return 1;
}

/* The id without a cross-region prefix ("us.", "eu.", "global." ...), as
 * LiteLLM's BedrockModelInfo.get_base_model. */
static const char *base_model(const char *id)
{
    static const char *const pre[] = {"us.", "eu.", "apac.", "ap.", "global.", "jp.", "au.", "ca.", "us-gov."};
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        if (starts(id, pre[i]))
            return id + strlen(pre[i]);
    return id;
}

/* Models whose tool_choice LiteLLM supports (model map: supports_tool_choice). */
static int tool_choice_ok(const char *id)
{
    static const char *const pre[] = {"anthropic.", "mistral.", "cohere.", "openai.", "qwen.", "deepseek."};
    if (strstr(id, "arn:"))
        return 1;
    const char *b = base_model(id);
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        if (starts(b, pre[i]))
            return 1;
    return 0;
}

/* Models that take thinking / reasoning_effort (LiteLLM's list and supports_reasoning). */
static int reasoning_ok(const char *id)
{
    static const char *const sub[] = {"arn:",           "claude-3-7",  "claude-sonnet-4",  "claude-opus-4",
                                      "claude-haiku-4", "deepseek.r1", "deepseek.v3",      "gpt-oss",
                                      "nova-2-lite",    "magistral",   "kimi-k2-thinking", "qwen3"};
    for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++)
        if (strstr(id, sub[i]))
            return 1;
    return 0;
}

/* ---- configure ------------------------------------------------------------- */

static char *dup_nonempty(const char *s)
{
    return s && *s ? strdup(s) : NULL;
}

static const char *param_or_env(const struct sy_deployment *d, const char *param, const char *env)
{
    const char *v = sy_deployment_param(d, param);
    if (v && *v)
        return v;
    v = env ? getenv(env) : NULL;
    return v && *v ? v : NULL;
}

static int truthy(const char *v)
{
    return v && (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes"));
}

/* "arn:aws:bedrock:REGION:..." -> REGION (LiteLLM's _get_aws_region_from_model_arn). */
static char *arn_region(const char *model)
{
    const char *a = model ? strstr(model, "arn:") : NULL;
    if (!a)
        return NULL;
    const char *p = a;
    for (int i = 0; i < 3 && p; i++) {
        p = strchr(p, ':');
        if (p)
            p++;
    }
    if (!p)
        return NULL;
    const char *e = strchr(p, ':');
    if (!e || e == p)
        return NULL;
    return strndup(p, (size_t)(e - p));
}

static int b_configure(const struct sy_deployment *d, int global_drop_params, struct sy_pconf *pc, char *err,
                       size_t errlen)
{
    static const char *const unsupported[] = {"aws_role_name", "aws_profile_name", "aws_web_identity_token"};
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
        if (sy_deployment_param(d, unsupported[i])) {
            snprintf(err, errlen,
                     "bedrock: %s is not supported (use aws_access_key_id / aws_secret_access_key "
                     "[/ aws_session_token], the AWS_* environment, or a bearer api_key)",
                     unsupported[i]);
            return -1;
        }
    }
    /* region: param, the model ARN, AWS_REGION_NAME, AWS_REGION, AWS_DEFAULT_REGION, us-west-2 */
    const char *r = sy_deployment_param(d, "aws_region_name");
    if (r && *r)
        pc->region = strdup(r);
    if (!pc->region)
        pc->region = arn_region(d->upstream_model);
    if (!pc->region) {
        static const char *const envs[] = {"AWS_REGION_NAME", "AWS_REGION", "AWS_DEFAULT_REGION"};
        for (size_t i = 0; i < 3 && !pc->region; i++)
            pc->region = dup_nonempty(getenv(envs[i]));
    }
    if (!pc->region)
        pc->region = strdup("us-west-2");
    if (!pc->region) {
        snprintf(err, errlen, "bedrock: out of memory");
        return -1;
    }
    pc->access_key = dup_nonempty(param_or_env(d, "aws_access_key_id", "AWS_ACCESS_KEY_ID"));
    pc->secret_key = dup_nonempty(param_or_env(d, "aws_secret_access_key", "AWS_SECRET_ACCESS_KEY"));
    pc->session_token = dup_nonempty(param_or_env(d, "aws_session_token", "AWS_SESSION_TOKEN"));
    const char *k = d->api_key && *d->api_key ? d->api_key : param_or_env(d, "api_key", "AWS_BEARER_TOKEN_BEDROCK");
    pc->key = dup_nonempty(k);
    /* the URL LiteLLM's converse handler sends to (its proxy_endpoint_url): the runtime
     * endpoint setting, then its environment variable, then api_base */
    const char *b = param_or_env(d, "aws_bedrock_runtime_endpoint", "AWS_BEDROCK_RUNTIME_ENDPOINT");
    if (!b)
        b = d->api_base && *d->api_base ? d->api_base : param_or_env(d, "api_base", NULL);
    if (b) {
        pc->base = strdup(b);
    } else {
        size_t n = strlen(pc->region) + 48;
        pc->base = malloc(n);
        if (pc->base)
            snprintf(pc->base, n, "https://bedrock-runtime.%s.amazonaws.com", pc->region);
    }
    if (!pc->base) {
        snprintf(err, errlen, "bedrock: out of memory");
        return -1;
    }
    size_t bl = strlen(pc->base);
    while (bl > 0 && pc->base[bl - 1] == '/')
        pc->base[--bl] = 0;
    if (strncasecmp(pc->base, "https://", 8) && strncasecmp(pc->base, "http://", 7)) {
        snprintf(err, errlen, "bedrock: the endpoint must be an http(s) URL, got \"%s\"", pc->base);
        return -1;
    }
    const char *dp = sy_deployment_param(d, "drop_params");
    pc->drop_params = dp ? truthy(dp) : global_drop_params;
    const char *ad = sy_deployment_param(d, "additional_drop_params");
    if (ad && *ad) {
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_jdoc j;
        if (sy_jdom_parse(&j, ad, strlen(ad), &a, 0) == 0 && j.n[0].type == 'a') {
            pc->drop_extra = calloc(j.n[0].kids ? j.n[0].kids : 1, sizeof *pc->drop_extra);
            for (uint32_t e = sy_jdom_first(&j, 0); e && pc->drop_extra; e = sy_jdom_next(&j, e)) {
                const char *s = sy_jdom_str(&j, e, &a, NULL);
                if (s)
                    pc->drop_extra[pc->n_drop_extra++] = strdup(s);
            }
        } else {
            snprintf(err, errlen, "bedrock: additional_drop_params must be a list of parameter names");
            sy_arena_free(&a);
            return -1;
        }
        sy_arena_free(&a);
    }
    pc->max_tokens = d->max_tokens > 0 ? d->max_tokens : -1;
    return 0;
}

/* ---- request: shared --------------------------------------------------------- */

/* The model id to use: x->model minus "converse/"; NULL with o->err for other routes. */
static const char *model_id(const struct sy_xctx *x, struct sy_xout *o, int *rc)
{
    const char *m = x->model ? x->model : "";
    if (starts(m, "converse/"))
        m += 9;
    if (x->op == SY_OP_EMBED && starts(m, "invoke/"))
        m += 7;
    if (!*m || (strchr(m, '/') && !starts(m, "arn:"))) {
        *rc = fail(&o->err, 400,
                   "bedrock: model \"%s\" is not supported: only the Converse API is (bedrock/<model id> or "
                   "bedrock/converse/<model id>; embeddings: amazon.titan-embed-text-*, cohere.embed-*)",
                   x->model ? x->model : "");
        return NULL;
    }
    return m;
}

/* URL, headers and signature for body o->body. suffix: "/converse" ... */
static int finish_request(const struct sy_xctx *x, const char *id, const char *suffix, const char *accept,
                          struct sy_xout *o)
{
    const struct sy_pconf *pc = x->pc;
    if (!pc)
        return fail(&o->err, 500, "bedrock: deployment not configured");
    const char *url_id = x->d ? sy_deployment_param(x->d, "model_id") : NULL;
    if (!url_id || !*url_id)
        url_id = id;
    const char *base = pc->base ? pc->base : "";
    const char *auth = strstr(base, "://");
    if (!auth)
        return fail(&o->err, 500, "bedrock: no endpoint configured");
    auth += 3;
    const char *pfx = strchr(auth, '/');
    size_t auth_len = pfx ? (size_t)(pfx - auth) : strlen(auth);
    int rc = sy_buf_puts(&o->url, base);
    size_t path_off = o->url.len - (pfx ? strlen(pfx) : 0);
    rc |= SY_BUF_LIT(&o->url, "/model/");
    rc |= sy_sigv4_uri_encode(&o->url, url_id, strlen(url_id), 0);
    rc |= sy_buf_puts(&o->url, suffix);
    rc |= SY_BUF_LIT(&o->headers, "Content-Type: application/json\r\nAccept: ");
    rc |= sy_buf_puts(&o->headers, accept);
    rc |= SY_BUF_LIT(&o->headers, "\r\n");
    if (rc)
        return fail(&o->err, 413, "bedrock: request too large");
    if (pc->key) {
        rc = SY_BUF_LIT(&o->headers, "Authorization: Bearer ");
        rc |= sy_buf_puts(&o->headers, pc->key);
        rc |= SY_BUF_LIT(&o->headers, "\r\n");
        return rc ? fail(&o->err, 413, "bedrock: request too large") : 0;
    }
    if (!pc->access_key || !pc->secret_key)
        return fail(&o->err, 401,
                    "Unable to locate credentials (set aws_access_key_id and aws_secret_access_key, the "
                    "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY environment, or AWS_BEARER_TOKEN_BEDROCK)");
    char host[512];
    if (auth_len >= sizeof host)
        return fail(&o->err, 400, "bedrock: endpoint host too long");
    memcpy(host, auth, auth_len);
    host[auth_len] = 0;
    rc = sy_sigv4_bedrock_post(host, o->url.p + path_off, o->body.p, o->body.len, pc->access_key, pc->secret_key,
                               pc->session_token, pc->region, x->now, &o->headers);
    if (rc == SY_ENOSPC)
        return fail(&o->err, 413, "bedrock: request too large");
    if (rc)
        return fail(&o->err, 500, "bedrock: signing failed");
    return 0;
}

/* ---- request: chat ------------------------------------------------------------ */

struct enc {
    const struct sy_xctx *x;
    const struct sy_jdoc *d;
    struct sy_xout *o;
    struct sy_jw *w;
    int role; /* the Bedrock message open in w: 0, 'u' or 'a' */
};

static void open_role(struct enc *e, int role)
{
    if (e->role == role)
        return;
    if (e->role) {
        sy_jw_end(e->w); /* content */
        sy_jw_end(e->w); /* message */
    }
    sy_jw_obj(e->w);
    sy_jw_key(e->w, "role");
    sy_jw_cstr(e->w, role == 'u' ? "user" : "assistant");
    sy_jw_key(e->w, "content");
    sy_jw_arr(e->w);
    e->role = role;
}

static void cache_point(struct sy_jw *w)
{
    sy_jw_raw(w, "{\"cachePoint\":{\"type\":\"default\"}}", 33);
}

static void text_block(struct sy_jw *w, const char *s, size_t n)
{
    sy_jw_obj(w);
    sy_jw_key(w, "text");
    sy_jw_str(w, s, n);
    sy_jw_end(w);
}

static const char *jstr(struct enc *e, uint32_t i, size_t *n)
{
    return sy_jdom_str(e->d, i, e->x->arena, n);
}

/* MIME type of a document -> Bedrock's format (LiteLLM: mimetypes, then types/files.py). */
static const char *doc_format(const char *mime)
{
    static const struct {
        const char *mime, *fmt;
    } t[] = {
        {"application/pdf", "pdf"},
        {"text/csv", "csv"},
        {"application/msword", "doc"},
        {"application/vnd.openxmlformats-officedocument.wordprocessingml.document", "docx"},
        {"application/vnd.ms-excel", "xls"},
        {"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx"},
        {"text/html", "html"},
        {"text/plain", "txt"},
        {"text/markdown", "md"},
        {"text/x-markdown", "md"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcasecmp(mime, t[i].mime))
            return t[i].fmt;
    return NULL;
}

static int in_list(const char *s, const char *const *l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, l[i]))
            return 1;
    return 0;
}

/* LiteLLM's document name: sha256(first 64 KiB of the whitespace-free base64 + its length)[:16]. */
static void doc_name(struct enc *e, const char *b64, size_t n, const char *fmt, char *out, size_t cap)
{
    char *norm = sy_arena_alloc(e->x->arena, (n < 65536 ? n : 65536) + 24);
    size_t k = 0, total = 0;
    for (size_t i = 0; i < n; i++) {
        char c = b64[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f')
            continue;
        if (k < 65536)
            norm[k++] = c;
        total++;
    }
    k += (size_t)snprintf(norm + k, 24, "%zu", total);
    unsigned char dg[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)norm, k, dg);
    char hx[17];
    for (int i = 0; i < 8; i++)
        snprintf(hx + 2 * i, 3, "%02x", dg[i]);
    snprintf(out, cap, "DocumentPDFmessages_%s_%s", hx, fmt);
}

/* An image_url / file data URL -> an image, document or video block.
 * images_only (tool results): anything else is silently left out, as LiteLLM. */
static int media_block(struct enc *e, const char *url, size_t ul, const char *fmt_override, int images_only, int role)
{
    static const char *const images[] = {"png", "jpeg", "gif", "webp"};
    static const char *const videos[] = {"mp4", "mov", "mkv", "webm", "flv", "mpeg", "mpg", "wmv", "3gp"};
    if (!starts(url, "data:")) {
        if (!strncasecmp(url, "http://", 7) || !strncasecmp(url, "https://", 8))
            return fail(&e->o->err, 400,
                        "bedrock: image URLs are not supported (Bedrock takes the image bytes and this gateway "
                        "does not download them); send the image as a data URL "
                        "(data:image/png;base64,...)");
        return fail(&e->o->err, 400, "Unsupported image type. Expected either image url or base64 encoded string");
    }
    const char *comma = memchr(url, ',', ul);
    if (!comma || memchr(comma + 1, ',', ul - (size_t)(comma + 1 - url)))
        return fail(&e->o->err, 400, "bedrock: malformed data URL (expected data:<mime>;base64,<data>)");
    const char *b64 = comma + 1;
    size_t bl = ul - (size_t)(b64 - url);
    char mime[128] = "image/jpeg";
    const char *semi = strstr(url, ";base64");
    if (semi && semi < comma) {
        size_t ml = (size_t)(semi - (url + 5));
        if (ml >= sizeof mime)
            return fail(&e->o->err, 400, "bedrock: MIME type too long in data URL");
        memcpy(mime, url + 5, ml);
        mime[ml] = 0;
        char *sc = strchr(mime, ';');
        if (sc)
            *sc = 0;
    } else if (!memmem(url, (size_t)(comma - url), "base64", 6)) {
        return fail(&e->o->err, 400, "bedrock: only base64 data URLs are supported");
    }
    if (fmt_override && *fmt_override)
        snprintf(mime, sizeof mime, "%s", fmt_override);
    const char *slash = strchr(mime, '/');
    if (!slash)
        return fail(&e->o->err, 400, "bedrock: malformed MIME type \"%s\"", mime);
    const char *fmt = slash + 1;
    const char *kind, *name = NULL;
    char nbuf[96];
    if (starts(mime, "application") || starts(mime, "text")) {
        if (images_only)
            return 0;
        fmt = doc_format(mime);
        if (!fmt)
            return fail(&e->o->err, 400,
                        "No supported extensions for MIME type: %s. Supported formats: ['pdf', 'csv', 'doc', "
                        "'docx', 'xls', 'xlsx', 'html', 'txt', 'md']",
                        mime);
        kind = "document";
        doc_name(e, b64, bl, fmt, nbuf, sizeof nbuf);
        name = nbuf;
    } else if (in_list(fmt, videos, sizeof videos / sizeof videos[0])) {
        if (images_only)
            return 0;
        kind = "video";
    } else if (in_list(fmt, images, sizeof images / sizeof images[0])) {
        kind = "image";
    } else {
        return fail(&e->o->err, 400,
                    "Unsupported image format: %s. Supported formats: ['mp4', 'mov', 'mkv', 'webm', 'flv', "
                    "'mpeg', 'mpg', 'wmv', '3gp', 'png', 'jpeg', 'gif', 'webp']",
                    fmt);
    }
    if (role)
        open_role(e, role);
    struct sy_jw *w = e->w;
    sy_jw_obj(w);
    sy_jw_key(w, kind);
    sy_jw_obj(w);
    sy_jw_key(w, "source");
    sy_jw_obj(w);
    sy_jw_key(w, "bytes");
    sy_jw_str(w, b64, bl);
    sy_jw_end(w);
    sy_jw_key(w, "format");
    sy_jw_cstr(w, fmt);
    if (name) {
        sy_jw_key(w, "name");
        sy_jw_cstr(w, name);
    }
    sy_jw_end(w);
    sy_jw_end(w);
    return 0;
}

/* An image_url part (string or {url, format}) -> media block. */
static int image_part(struct enc *e, uint32_t part, int images_only, int role)
{
    uint32_t iu = sy_jdom_get(e->d, part, "image_url");
    uint32_t u = jtype(e->d, iu) == 'o' ? sy_jdom_get(e->d, iu, "url") : iu;
    size_t ul;
    const char *url = jstr(e, u, &ul);
    if (!url)
        return fail(&e->o->err, 400, "bedrock: image_url without a url");
    const char *fmt = jtype(e->d, iu) == 'o' ? jstr(e, sy_jdom_get(e->d, iu, "format"), NULL) : NULL;
    return media_block(e, url, ul, fmt, images_only, role);
}

static int file_part(struct enc *e, uint32_t part, int role)
{
    uint32_t f = sy_jdom_get(e->d, part, "file");
    size_t ul;
    const char *data = jstr(e, sy_jdom_get(e->d, f, "file_data"), &ul);
    if (!data) {
        if (present(e->d, sy_jdom_get(e->d, f, "file_id")))
            return fail(&e->o->err, 400,
                        "bedrock: file_id is not supported; send the file as file_data "
                        "(data:<mime>;base64,...)");
        return fail(&e->o->err, 400, "file_data and file_id cannot both be None");
    }
    return media_block(e, data, ul, jstr(e, sy_jdom_get(e->d, f, "format"), NULL), 0, role);
}

/* One thinking block (OpenAI/Anthropic shape) -> Bedrock (LiteLLM: no signature -> text). */
static void thinking_block(struct enc *e, uint32_t b)
{
    struct sy_jw *w = e->w;
    if (sy_jdom_str_eq(e->d, sy_jdom_get(e->d, b, "type"), "redacted_thinking")) {
        open_role(e, 'a');
        sy_jw_obj(w);
        sy_jw_key(w, "reasoningContent");
        sy_jw_obj(w);
        sy_jw_key(w, "redactedContent");
        sy_jw_node(w, e->d, sy_jdom_get(e->d, b, "data"));
        sy_jw_end(w);
        sy_jw_end(w);
        return;
    }
    size_t tl = 0;
    const char *t = jstr(e, sy_jdom_get(e->d, b, "thinking"), &tl);
    uint32_t sig = sy_jdom_get(e->d, b, "signature");
    open_role(e, 'a');
    if (!present(e->d, sig)) {
        text_block(w, t ? t : "", t ? tl : 0);
        return;
    }
    sy_jw_obj(w);
    sy_jw_key(w, "reasoningContent");
    sy_jw_obj(w);
    sy_jw_key(w, "reasoningText");
    sy_jw_obj(w);
    sy_jw_key(w, "text");
    sy_jw_str(w, t ? t : "", t ? tl : 0);
    sy_jw_key(w, "signature");
    sy_jw_node(w, e->d, sig);
    sy_jw_end(w);
    sy_jw_end(w);
    sy_jw_end(w);
}

static int has_cache_control(const struct sy_jdoc *d, uint32_t o)
{
    return jtype(d, o) == 'o' && present(d, sy_jdom_get(d, o, "cache_control"));
}

static int user_msg(struct enc *e, uint32_t m)
{
    const struct sy_jdoc *d = e->d;
    uint32_t c = sy_jdom_get(d, m, "content");
    char t = jtype(d, c);
    if (t == 's') {
        size_t n;
        const char *s = jstr(e, c, &n);
        if (n) {
            open_role(e, 'u');
            text_block(e->w, s, n);
            if (has_cache_control(d, m))
                cache_point(e->w);
        }
        return 0;
    }
    if (t != 'a')
        return present(d, c) ? fail(&e->o->err, 400, "bedrock: user message content must be a string or a list") : 0;
    for (uint32_t p = sy_jdom_first(d, c); p; p = sy_jdom_next(d, p)) {
        if (jtype(d, p) != 'o')
            continue;
        uint32_t ty = sy_jdom_get(d, p, "type");
        int rc = 0;
        if (sy_jdom_str_eq(d, ty, "text")) {
            size_t n;
            const char *s = jstr(e, sy_jdom_get(d, p, "text"), &n);
            if (!s || is_blank(s, n))
                continue; /* LiteLLM's skip_empty_text_blocks */
            open_role(e, 'u');
            text_block(e->w, s, n);
        } else if (sy_jdom_str_eq(d, ty, "guarded_text")) {
            size_t n;
            const char *s = jstr(e, sy_jdom_get(d, p, "text"), &n);
            open_role(e, 'u');
            sy_jw_obj(e->w);
            sy_jw_key(e->w, "guardContent");
            sy_jw_obj(e->w);
            sy_jw_key(e->w, "text");
            sy_jw_obj(e->w);
            sy_jw_key(e->w, "text");
            sy_jw_str(e->w, s ? s : "", s ? n : 0);
            sy_jw_end(e->w);
            sy_jw_end(e->w);
            sy_jw_end(e->w);
        } else if (sy_jdom_str_eq(d, ty, "image_url")) {
            rc = image_part(e, p, 0, 'u');
        } else if (sy_jdom_str_eq(d, ty, "file")) {
            rc = file_part(e, p, 'u');
        } else if (sy_jdom_str_eq(d, ty, "input_audio")) {
            rc = fail(&e->o->err, 400, "bedrock: input_audio content is not supported");
        }
        if (rc)
            return rc;
        if (has_cache_control(d, p)) {
            open_role(e, 'u');
            cache_point(e->w);
        }
    }
    return 0;
}

static int tool_msg(struct enc *e, uint32_t m, int i)
{
    const struct sy_jdoc *d = e->d;
    struct sy_jw *w = e->w;
    uint32_t c = sy_jdom_get(d, m, "content");
    open_role(e, 'u');
    sy_jw_obj(w);
    sy_jw_key(w, "toolResult");
    sy_jw_obj(w);
    sy_jw_key(w, "content");
    sy_jw_arr(w);
    int cache = has_cache_control(d, m);
    if (jtype(d, c) == 's') {
        size_t n;
        const char *s = jstr(e, c, &n);
        text_block(w, s, n);
    } else if (jtype(d, c) == 'a') {
        for (uint32_t p = sy_jdom_first(d, c); p; p = sy_jdom_next(d, p)) {
            if (jtype(d, p) != 'o')
                continue;
            cache |= has_cache_control(d, p);
            uint32_t ty = sy_jdom_get(d, p, "type");
            if (sy_jdom_str_eq(d, ty, "text")) {
                size_t n;
                const char *s = jstr(e, sy_jdom_get(d, p, "text"), &n);
                text_block(w, s ? s : "", s ? n : 0);
            } else if (sy_jdom_str_eq(d, ty, "image_url")) {
                int rc = image_part(e, p, 1, 0);
                if (rc)
                    return rc;
            }
        }
    }
    sy_jw_end(w); /* content */
    sy_jw_key(w, "toolUseId");
    uint32_t id = sy_jdom_get(d, m, "tool_call_id");
    if (jtype(d, id) == 's') {
        sy_jw_node(w, d, id);
    } else { /* LiteLLM makes up a uuid; a stable stand-in here */
        char t[32];
        snprintf(t, sizeof t, "tool_result_%d", i);
        sy_jw_cstr(w, t);
    }
    sy_jw_end(w);
    sy_jw_end(w);
    if (cache)
        cache_point(w);
    return 0;
}

static int tool_calls_present(const struct sy_jdoc *d, uint32_t m)
{
    return present(d, sy_jdom_get(d, m, "tool_calls"));
}

static int assistant_msg(struct enc *e, uint32_t m)
{
    const struct sy_jdoc *d = e->d;
    struct sy_jw *w = e->w;
    uint32_t tb = sy_jdom_get(d, m, "thinking_blocks");
    if (jtype(d, tb) == 'a')
        for (uint32_t b = sy_jdom_first(d, tb); b; b = sy_jdom_next(d, b))
            if (jtype(d, b) == 'o')
                thinking_block(e, b);
    uint32_t c = sy_jdom_get(d, m, "content");
    int tools = tool_calls_present(d, m);
    if (jtype(d, c) == 's') {
        size_t n;
        const char *s = jstr(e, c, &n);
        if (!is_blank(s, n) || !tools) { /* blank with tool calls: no content (LiteLLM) */
            open_role(e, 'a');
            if (is_blank(s, n))
                text_block(w, ".", 1); /* Bedrock refuses empty text */
            else
                text_block(w, s, n);
            if (has_cache_control(d, m))
                cache_point(w);
        }
    } else if (jtype(d, c) == 'a') {
        for (uint32_t p = sy_jdom_first(d, c); p; p = sy_jdom_next(d, p)) {
            if (jtype(d, p) != 'o')
                continue;
            uint32_t ty = sy_jdom_get(d, p, "type");
            if (sy_jdom_str_eq(d, ty, "text")) {
                size_t n;
                const char *s = jstr(e, sy_jdom_get(d, p, "text"), &n);
                if (!s || is_blank(s, n))
                    continue;
                open_role(e, 'a');
                text_block(w, s, n);
            } else if (sy_jdom_str_eq(d, ty, "thinking") || sy_jdom_str_eq(d, ty, "redacted_thinking")) {
                thinking_block(e, p);
            } else if (sy_jdom_str_eq(d, ty, "image_url")) {
                int rc = image_part(e, p, 0, 'a');
                if (rc)
                    return rc;
            }
            if (has_cache_control(d, p)) {
                open_role(e, 'a');
                cache_point(w);
            }
        }
    } else if (present(d, c)) {
        return fail(&e->o->err, 400, "bedrock: assistant message content must be a string or a list");
    }
    uint32_t tc = sy_jdom_get(d, m, "tool_calls");
    if (jtype(d, tc) == 'a') {
        for (uint32_t t = sy_jdom_first(d, tc); t; t = sy_jdom_next(d, t)) {
            uint32_t fn = sy_jdom_get(d, t, "function");
            if (jtype(d, fn) != 'o')
                continue;
            size_t al = 0;
            const char *args = jstr(e, sy_jdom_get(d, fn, "arguments"), &al);
            const char *raw = "{}";
            size_t rl = 2;
            if (args && !is_blank(args, al)) {
                struct sy_jdoc ad;
                if (sy_jdom_parse(&ad, args, al, e->x->arena, 0))
                    return fail(&e->o->err, 400,
                                "Unable to convert openai tool calls to bedrock tool calls. Received error=the "
                                "arguments are not valid JSON (%s at offset %zu)",
                                ad.err ? ad.err : "invalid", ad.err_off);
                raw = sy_jdom_raw(&ad, 0, &rl);
            }
            open_role(e, 'a');
            sy_jw_obj(w);
            sy_jw_key(w, "toolUse");
            sy_jw_obj(w);
            sy_jw_key(w, "input");
            sy_jw_raw(w, raw, rl);
            sy_jw_key(w, "name");
            uint32_t nm = sy_jdom_get(d, fn, "name");
            if (jtype(d, nm) == 's')
                sy_jw_node(w, d, nm);
            else
                sy_jw_cstr(w, "");
            sy_jw_key(w, "toolUseId");
            uint32_t id = sy_jdom_get(d, t, "id");
            if (jtype(d, id) == 's')
                sy_jw_node(w, d, id);
            else
                sy_jw_cstr(w, "");
            sy_jw_end(w);
            sy_jw_end(w);
            if (has_cache_control(d, t))
                cache_point(w);
        }
    }
    return 0;
}

static int is_system(const struct sy_jdoc *d, uint32_t m)
{
    uint32_t r = sy_jdom_get(d, m, "role");
    return sy_jdom_str_eq(d, r, "system") || sy_jdom_str_eq(d, r, "developer");
}

static int write_messages(struct enc *e, uint32_t msgs)
{
    const struct sy_jdoc *d = e->d;
    int i = 0, n = 0;
    sy_jw_arr(e->w);
    for (uint32_t m = sy_jdom_first(d, msgs); m; m = sy_jdom_next(d, m), i++) {
        if (jtype(d, m) != 'o')
            return fail(&e->o->err, 400, "bedrock: messages[%d] is not an object", i);
        if (is_system(d, m))
            continue;
        n++;
        uint32_t r = sy_jdom_get(d, m, "role");
        int rc;
        if (sy_jdom_str_eq(d, r, "user"))
            rc = user_msg(e, m);
        else if (sy_jdom_str_eq(d, r, "tool"))
            rc = tool_msg(e, m, i);
        else if (sy_jdom_str_eq(d, r, "assistant"))
            rc = assistant_msg(e, m);
        else {
            size_t rl = 0;
            const char *rs = jtype(d, r) == 's' ? jstr(e, r, &rl) : "";
            rc = fail(&e->o->err, 400, "Invalid Message passed in: role \"%.*s\" of messages[%d] is not supported",
                      (int)rl, rs, i);
        }
        if (rc)
            return rc;
    }
    if (!n)
        return fail(&e->o->err, 400, "Invalid Message bedrock requires at least one non-system message");
    if (e->role) {
        sy_jw_end(e->w);
        sy_jw_end(e->w);
    }
    sy_jw_end(e->w);
    return 0;
}

static void write_system(struct enc *e, uint32_t msgs)
{
    const struct sy_jdoc *d = e->d;
    struct sy_jw *w = e->w;
    sy_jw_arr(w);
    for (uint32_t m = sy_jdom_first(d, msgs); m; m = sy_jdom_next(d, m)) {
        if (!is_system(d, m))
            continue;
        uint32_t c = sy_jdom_get(d, m, "content");
        if (jtype(d, c) == 's') {
            size_t n;
            const char *s = jstr(e, c, &n);
            if (n) {
                text_block(w, s, n);
                if (has_cache_control(d, m))
                    cache_point(w);
            }
        } else if (jtype(d, c) == 'a') {
            for (uint32_t p = sy_jdom_first(d, c); p; p = sy_jdom_next(d, p)) {
                size_t n = 0;
                const char *s = NULL;
                if (sy_jdom_str_eq(d, sy_jdom_get(d, p, "type"), "text"))
                    s = jstr(e, sy_jdom_get(d, p, "text"), &n);
                if (!s || !n)
                    continue;
                text_block(w, s, n);
                if (has_cache_control(d, p))
                    cache_point(w);
            }
        }
    }
    sy_jw_end(w);
}

/* The chat parameters, checked before anything is written. */
struct cparams {
    uint32_t max_tokens, temperature, top_p, stop, top_k, tools, thinking, rmeta;
    uint32_t guardrail, perf, tier;
    const char *effort;   /* reasoning_effort, when it applies */
    int thinking_on;      /* thinking.type enabled or an effort */
    int64_t budget;       /* thinking budget (maxTokens default), -1 none */
    const char *choice;   /* "auto", "any", "tool" or NULL */
    uint32_t choice_name; /* tool_choice.function.name (a string node) */
    int choice_json;      /* the forced tool is json_tool_call (response_format) */
    int json_mode;        /* response_format asks for JSON: the json_tool_call tool */
    uint32_t json_schema, json_desc;
};

static int dropped(const struct sy_xctx *x, const char *p)
{
    return sy_oai_drop_extra(x, p);
}

/* v present: 0 to use it, 1 dropped, <0 error (unsupported and not dropped). */
static int unsupported(const struct sy_xctx *x, const char *p, struct sy_xout *o)
{
    return sy_oai_unsupported(x, "bedrock", p, &o->err) ? 1 : SY_EINVAL;
}

static int effort_budget(const char *v, int64_t *b)
{
    static const struct {
        const char *e;
        int64_t b;
    } t[] = {{"low", 1024}, {"medium", 2048}, {"high", 4096}, {"minimal", 128}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(v, t[i].e)) {
            *b = t[i].b;
            return 1;
        }
    return 0;
}

static int tool_choice_err(const struct sy_xctx *x, struct sy_xout *o, const char *v, int none)
{
    if (none && ((x->pc && x->pc->drop_params) || dropped(x, "tool_choice")))
        return 1;
    sy_oai_unsupported(x, "bedrock", "tool_choice", &o->err); /* status, type, param, class */
    snprintf(o->err.message, sizeof o->err.message,
             "litellm.UnsupportedParamsError: Bedrock doesn't support tool_choice=%s.%s To drop it from the call, "
             "set `litellm.drop_params = True.",
             v, none ? "" : " Supported tool_choice values=['auto', 'required', json object].");
    o->err.status = 400;
    snprintf(o->err.type, sizeof o->err.type, "invalid_request_error");
    return SY_EINVAL;
}

static int chat_params(const struct sy_xctx *x, const struct sy_jdoc *d, const char *id, struct cparams *p,
                       struct sy_xout *o)
{
    /* LiteLLM's completion() argument order, which its error message lists them in */
    static const char *const unsup[] = {"n",
                                        "modalities",
                                        "prediction",
                                        "audio",
                                        "presence_penalty",
                                        "frequency_penalty",
                                        "logit_bias",
                                        "verbosity",
                                        "seed",
                                        "logprobs",
                                        "top_logprobs",
                                        "parallel_tool_calls",
                                        "web_search_options",
                                        "safety_identifier",
                                        "service_tier",
                                        "functions",
                                        "function_call"};
    memset(p, 0, sizeof *p);
    p->budget = -1;
    char list[512] = "", first[64] = "";
    size_t ll = 0;
    int nbad = 0;
    for (size_t i = 0; i < sizeof unsup / sizeof unsup[0]; i++) {
        uint32_t v = sy_jdom_get(d, 0, unsup[i]);
        if (!present(d, v))
            continue;
        int64_t one;
        if (!strcmp(unsup[i], "n") && sy_jdom_i64(d, v, &one) && one == 1)
            continue; /* LiteLLM lets n=1 through */
        if (sy_oai_unsupported(x, "bedrock", unsup[i], &o->err))
            continue; /* dropped */
        if (!nbad++)
            snprintf(first, sizeof first, "%s", unsup[i]);
        int k = snprintf(list + ll, sizeof list - ll, "%s'%s'", ll ? ", " : "", unsup[i]);
        if (k > 0 && (size_t)k < sizeof list - ll)
            ll += (size_t)k;
    }
    if (nbad) { /* one message naming them all: ['a'] -> ['a', 'b'] */
        sy_oai_unsupported(x, "bedrock", first, &o->err);
        char one[80], *at;
        snprintf(one, sizeof one, "['%s']", first);
        if (nbad > 1 && (at = strstr(o->err.message, one))) {
            char m[sizeof o->err.message];
            snprintf(m, sizeof m, "%.*s[%s]%s", (int)(at - o->err.message), o->err.message, list, at + strlen(one));
            memcpy(o->err.message, m, sizeof m);
        }
        return SY_EINVAL;
    }
#define TAKE(field, name)                        \
    do {                                         \
        uint32_t v_ = sy_jdom_get(d, 0, name);   \
        if (present(d, v_) && !dropped(x, name)) \
            p->field = v_;                       \
    } while (0)
    TAKE(max_tokens, "max_completion_tokens");
    TAKE(max_tokens, "max_tokens");
    TAKE(temperature, "temperature");
    TAKE(top_p, "top_p");
    TAKE(stop, "stop");
    TAKE(top_k, "top_k");
    TAKE(tools, "tools");
    TAKE(rmeta, "requestMetadata");
    TAKE(guardrail, "guardrailConfig");
    TAKE(perf, "performanceConfig");
    TAKE(tier, "serviceTier");
#undef TAKE
    if (p->tools && jtype(d, p->tools) != 'a')
        return fail(&o->err, 400, "bedrock: tools must be a list");
    if (p->stop && jtype(d, p->stop) != 's' && jtype(d, p->stop) != 'a')
        return fail(&o->err, 400, "bedrock: stop must be a string or a list of strings");
    if (p->stop && jtype(d, p->stop) == 's' && sy_jdom_str_eq(d, p->stop, ""))
        p->stop = 0; /* Converse refuses empty strings */
    /* thinking / reasoning_effort */
    uint32_t th = sy_jdom_get(d, 0, "thinking"), re = sy_jdom_get(d, 0, "reasoning_effort");
    if (present(d, th) && dropped(x, "thinking"))
        th = 0;
    if (present(d, re) && dropped(x, "reasoning_effort"))
        re = 0;
    if ((present(d, th) || present(d, re)) && !reasoning_ok(id)) {
        int rc = unsupported(x, present(d, re) ? "reasoning_effort" : "thinking", o);
        if (rc < 0)
            return rc;
        if (present(d, re) && present(d, th)) {
            rc = unsupported(x, "thinking", o);
            if (rc < 0)
                return rc;
        }
        th = re = 0;
    }
    if (present(d, re)) {
        const char *v = sy_jdom_str(d, re, x->arena, NULL);
        if (!v)
            return fail(&o->err, 400, "bedrock: reasoning_effort must be a string");
        p->thinking_on = 1;
        if (strstr(id, "gpt-oss") || strstr(id, "nova-2-lite")) {
            if (strstr(id, "nova-2-lite") && strcmp(v, "low") && strcmp(v, "medium") && strcmp(v, "high"))
                return fail(&o->err, 400,
                            "Invalid reasoning_effort value '%s' for Nova 2 models. Supported values: ['low', "
                            "'medium', 'high']",
                            v);
            p->effort = v;
        } else if (!effort_budget(v, &p->budget)) {
            return fail(&o->err, 400, "Unmapped reasoning effort: %s", v);
        }
    }
    if (present(d, th)) {
        if (jtype(d, th) != 'o')
            return fail(&o->err, 400, "bedrock: thinking must be an object");
        p->thinking = th;
        p->effort = NULL;
        p->thinking_on = sy_jdom_str_eq(d, sy_jdom_get(d, th, "type"), "enabled");
        int64_t b;
        p->budget = p->thinking_on && sy_jdom_i64(d, sy_jdom_get(d, th, "budget_tokens"), &b) ? b : -1;
    }
    /* response_format: a forced tool */
    uint32_t rf = sy_jdom_get(d, 0, "response_format");
    if (present(d, rf) && !dropped(x, "response_format") && jtype(d, rf) == 'o' &&
        !sy_jdom_str_eq(d, sy_jdom_get(d, rf, "type"), "text")) {
        p->json_mode = 1;
        uint32_t rs = sy_jdom_get(d, rf, "response_schema"), js = sy_jdom_get(d, rf, "json_schema");
        if (present(d, rs)) {
            p->json_schema = rs;
        } else if (jtype(d, js) == 'o') {
            p->json_schema = sy_jdom_get(d, js, "schema");
            p->json_desc = sy_jdom_get(d, js, "description");
        }
        if (tool_choice_ok(id) && !p->thinking_on) {
            p->choice = "tool";
            p->choice_json = 1;
        }
    }
    /* tool_choice */
    uint32_t tc = sy_jdom_get(d, 0, "tool_choice");
    if (present(d, tc) && !dropped(x, "tool_choice")) {
        if (!tool_choice_ok(id)) {
            int rc = unsupported(x, "tool_choice", o);
            if (rc < 0)
                return rc;
        } else if (jtype(d, tc) == 's') {
            if (sy_jdom_str_eq(d, tc, "auto")) {
                p->choice = "auto";
                p->choice_json = 0;
            } else if (sy_jdom_str_eq(d, tc, "required")) {
                p->choice = "any";
                p->choice_json = 0;
            } else {
                const char *v = sy_jdom_str(d, tc, x->arena, NULL);
                int rc = tool_choice_err(x, o, v, sy_jdom_str_eq(d, tc, "none"));
                if (rc < 0)
                    return rc;
            }
        } else if (jtype(d, tc) == 'o') {
            p->choice = "tool";
            p->choice_json = 0;
            p->choice_name = sy_jdom_get(d, sy_jdom_get(d, tc, "function"), "name");
        } else {
            return fail(&o->err, 400, "bedrock: tool_choice must be a string or an object");
        }
    }
    if (p->thinking_on && p->choice && strcmp(p->choice, "auto"))
        p->choice = "auto"; /* forced tool use is refused with reasoning on */
    return 0;
}

static void write_tool_spec(struct sy_jw *w, const struct sy_jdoc *d, uint32_t schema, uint32_t name_node,
                            const char *name_lit, uint32_t desc)
{
    sy_jw_obj(w);
    sy_jw_key(w, "toolSpec");
    sy_jw_obj(w);
    sy_jw_key(w, "inputSchema");
    sy_jw_obj(w);
    sy_jw_key(w, "json");
    if (present(d, schema))
        sy_jw_node(w, d, schema);
    else
        sy_jw_raw(w, "{\"type\":\"object\",\"properties\":{}}", 33);
    sy_jw_end(w);
    sy_jw_key(w, "name");
    if (name_node)
        sy_jw_node(w, d, name_node);
    else
        sy_jw_cstr(w, name_lit);
    sy_jw_key(w, "description");
    if (jtype(d, desc) == 's' && !sy_jdom_str_eq(d, desc, ""))
        sy_jw_node(w, d, desc); /* Bedrock refuses an empty description: the name stands in */
    else if (name_node)
        sy_jw_node(w, d, name_node);
    else
        sy_jw_cstr(w, name_lit);
    sy_jw_end(w);
    sy_jw_end(w);
}

static int write_tool_config(struct enc *e, const struct cparams *p)
{
    const struct sy_jdoc *d = e->d;
    struct sy_jw *w = e->w;
    int ntools = 0;
    sy_jw_key(w, "toolConfig");
    sy_jw_obj(w);
    sy_jw_key(w, "tools");
    sy_jw_arr(w);
    if (p->json_mode) {
        write_tool_spec(w, d, p->json_schema, 0, JSON_TOOL, p->json_desc);
        ntools++;
    }
    for (uint32_t t = p->tools ? sy_jdom_first(d, p->tools) : 0; t; t = sy_jdom_next(d, t)) {
        if (jtype(d, t) != 'o')
            return fail(&e->o->err, 400, "bedrock: each tool must be an object");
        uint32_t ty = sy_jdom_get(d, t, "type");
        if (present(d, ty) && !sy_jdom_str_eq(d, ty, "function")) {
            size_t n = 0;
            const char *s = jtype(d, ty) == 's' ? jstr(e, ty, &n) : "";
            return fail(&e->o->err, 400, "bedrock: tools of type \"%.*s\" are not supported (only \"function\")",
                        (int)n, s);
        }
        uint32_t fn = sy_jdom_get(d, t, "function");
        uint32_t name = sy_jdom_get(d, fn, "name");
        if (jtype(d, name) != 's')
            return fail(&e->o->err, 400, "bedrock: a tool without function.name");
        write_tool_spec(w, d, sy_jdom_get(d, fn, "parameters"), name, NULL, sy_jdom_get(d, fn, "description"));
        ntools++;
        if (jtype(d, sy_jdom_get(d, t, "cache_control")) == 'o')
            cache_point(w);
    }
    sy_jw_end(w);
    if (p->choice) {
        sy_jw_key(w, "toolChoice");
        sy_jw_obj(w);
        sy_jw_key(w, p->choice);
        sy_jw_obj(w);
        if (!strcmp(p->choice, "tool")) {
            sy_jw_key(w, "name");
            if (p->choice_json)
                sy_jw_cstr(w, JSON_TOOL);
            else if (jtype(d, p->choice_name) == 's')
                sy_jw_node(w, d, p->choice_name);
            else
                sy_jw_cstr(w, "");
        }
        sy_jw_end(w);
        sy_jw_end(w);
    }
    sy_jw_end(w);
    return 0;
}

/* anthropic-beta: a, b  (a forwarded client header) -> ["a","b"] */
/* The client's anthropic-beta values Bedrock Converse takes (providers/betas.h),
 * as additionalModelRequestFields.anthropic_beta. */
struct betas_w {
    struct sy_jw *w;
    int open;
};

static void beta_one(const char *name, void *ud)
{
    struct betas_w *b = ud;
    if (!b->open) {
        sy_jw_key(b->w, "anthropic_beta");
        sy_jw_arr(b->w);
        b->open = 1;
    }
    sy_jw_cstr(b->w, name);
}

static void write_betas(struct enc *e)
{
    struct betas_w b = {e->w, 0};
    sy_betas_each(SY_BETA_BEDROCK_CONVERSE, e->x->fwd_headers, e->x->fwd_headers_len, beta_one, &b);
    if (b.open)
        sy_jw_end(e->w);
}

static int encode_chat(const struct sy_xctx *x, const struct sy_jdoc *d, const char *id, struct sy_xout *o)
{
    struct cparams p;
    int rc = chat_params(x, d, id, &p, o);
    if (rc)
        return rc;
    uint32_t msgs = sy_jdom_get(d, 0, "messages");
    if (jtype(d, msgs) != 'a')
        return fail(&o->err, 400, "bedrock: messages must be a list");
    if (!p.tools && !p.json_mode) {
        for (uint32_t m = sy_jdom_first(d, msgs); m; m = sy_jdom_next(d, m))
            if (tool_calls_present(d, m)) {
                rc = fail(&o->err, 400,
                          "litellm.UnsupportedParamsError: Bedrock doesn't support tool calling without `tools=` "
                          "param specified. Pass `tools=` param OR set `litellm.modify_params = True` // "
                          "`litellm_settings::modify_params: True` to add dummy tool to the request.");
                snprintf(o->err.cls, sizeof o->err.cls, "UnsupportedParamsError");
                return rc;
            }
    }
    struct sy_jw w;
    sy_jw_init(&w, &o->body);
    struct enc e = {.x = x, .d = d, .o = o, .w = &w};
    sy_jw_obj(&w);
    sy_jw_key(&w, "messages");
    if ((rc = write_messages(&e, msgs)))
        return rc;
    const char *base = base_model(id);
    sy_jw_key(&w, "additionalModelRequestFields");
    sy_jw_obj(&w);
    if (p.thinking) {
        sy_jw_key(&w, "thinking");
        sy_jw_node(&w, d, p.thinking);
    } else if (p.effort && strstr(id, "nova-2-lite")) {
        sy_jw_key(&w, "reasoningConfig");
        sy_jw_obj(&w);
        sy_jw_key(&w, "type");
        sy_jw_cstr(&w, "enabled");
        sy_jw_key(&w, "maxReasoningEffort");
        sy_jw_cstr(&w, p.effort);
        sy_jw_end(&w);
    } else if (p.effort) {
        sy_jw_key(&w, "reasoning_effort");
        sy_jw_cstr(&w, p.effort);
    } else if (p.budget >= 0) {
        sy_jw_key(&w, "thinking");
        sy_jw_obj(&w);
        sy_jw_key(&w, "type");
        sy_jw_cstr(&w, "enabled");
        sy_jw_key(&w, "budget_tokens");
        sy_jw_int(&w, p.budget);
        sy_jw_end(&w);
    }
    if (p.top_k && starts(base, "anthropic")) {
        sy_jw_key(&w, "top_k");
        sy_jw_node(&w, d, p.top_k);
    } else if (p.top_k && starts(base, "amazon.nova")) {
        sy_jw_key(&w, "inferenceConfig");
        sy_jw_obj(&w);
        sy_jw_key(&w, "topK");
        sy_jw_node(&w, d, p.top_k);
        sy_jw_end(&w);
    }
    if (starts(base, "anthropic"))
        write_betas(&e);
    sy_jw_end(&w);
    sy_jw_key(&w, "system");
    write_system(&e, msgs);
    sy_jw_key(&w, "inferenceConfig");
    sy_jw_obj(&w);
    if (p.max_tokens) {
        sy_jw_key(&w, "maxTokens");
        sy_jw_node(&w, d, p.max_tokens);
    } else if (p.thinking_on && p.budget >= 0 && !strstr(id, "gpt-oss") && !strstr(id, "nova-2-lite")) {
        sy_jw_key(&w, "maxTokens");
        sy_jw_int(&w, p.budget + DEFAULT_MAX_TOKENS);
    }
    if (p.stop) {
        sy_jw_key(&w, "stopSequences");
        if (jtype(d, p.stop) == 's') {
            sy_jw_arr(&w);
            sy_jw_node(&w, d, p.stop);
            sy_jw_end(&w);
        } else {
            sy_jw_node(&w, d, p.stop);
        }
    }
    if (p.temperature) {
        sy_jw_key(&w, "temperature");
        sy_jw_node(&w, d, p.temperature);
    }
    if (p.top_p) {
        sy_jw_key(&w, "topP");
        sy_jw_node(&w, d, p.top_p);
    }
    sy_jw_end(&w);
    if (p.guardrail) {
        sy_jw_key(&w, "guardrailConfig");
        sy_jw_node(&w, d, p.guardrail);
    }
    if (p.perf) {
        sy_jw_key(&w, "performanceConfig");
        sy_jw_node(&w, d, p.perf);
    }
    if (p.tier) {
        sy_jw_key(&w, "serviceTier");
        sy_jw_node(&w, d, p.tier);
    }
    if ((p.tools && sy_jdom_first(d, p.tools)) || p.json_mode) {
        if ((rc = write_tool_config(&e, &p)))
            return rc;
    }
    if (p.rmeta) {
        sy_jw_key(&w, "requestMetadata");
        sy_jw_node(&w, d, p.rmeta);
    }
    sy_jw_end(&w);
    if (w.err)
        return fail(&o->err, 413, "bedrock: request too large");
    return finish_request(x, id, x->stream ? "/converse-stream" : "/converse",
                          x->stream ? "application/vnd.amazon.eventstream" : "application/json", o);
}

/* ---- request: embeddings ---------------------------------------------------------- */

enum emb { EMB_NONE, EMB_TITAN_V1, EMB_TITAN_V2, EMB_COHERE };

static enum emb emb_kind(const char *id)
{
    const char *b = base_model(id);
    if (starts(b, "cohere.embed"))
        return EMB_COHERE;
    if (starts(b, "amazon.titan-embed-text") || starts(b, "amazon.titan-embed-g1-text"))
        return strstr(b, "v2") ? EMB_TITAN_V2 : EMB_TITAN_V1;
    return EMB_NONE;
}

static int encode_embed(const struct sy_xctx *x, const struct sy_jdoc *d, const char *id, struct sy_xout *o)
{
    enum emb k = emb_kind(id);
    if (k == EMB_NONE)
        return fail(&o->err, 400,
                    "bedrock: embeddings with \"%s\" are not supported (amazon.titan-embed-text-v1, "
                    "amazon.titan-embed-text-v2:0 and cohere.embed-* are)",
                    id);
    uint32_t in = sy_jdom_get(d, 0, "input");
    uint32_t n = 0;
    if (jtype(d, in) == 'a') {
        for (uint32_t e = sy_jdom_first(d, in); e; e = sy_jdom_next(d, e), n++)
            if (jtype(d, e) != 's')
                return fail(&o->err, 400, "bedrock: embedding input must be a string or a list of strings");
    } else if (jtype(d, in) == 's') {
        n = 1;
    } else {
        return fail(&o->err, 400, "bedrock: embedding input must be a string or a list of strings");
    }
    if (!n)
        return fail(&o->err, 400, "bedrock: embedding input is empty");
    uint32_t dim = sy_jdom_get(d, 0, "dimensions"), encf = sy_jdom_get(d, 0, "encoding_format");
    if (present(d, dim) && dropped(x, "dimensions"))
        dim = 0;
    if (present(d, encf) && dropped(x, "encoding_format"))
        encf = 0;
    struct sy_jw w;
    sy_jw_init(&w, &o->body);
    sy_jw_obj(&w);
    if (k == EMB_COHERE) {
        if (present(d, dim) && unsupported(x, "dimensions", o) < 0)
            return SY_EINVAL;
        if (present(d, encf) && !sy_jdom_str_eq(d, encf, "float") && unsupported(x, "encoding_format", o) < 0)
            return SY_EINVAL;
        sy_jw_key(&w, "texts");
        if (jtype(d, in) == 'a') {
            sy_jw_node(&w, d, in);
        } else {
            sy_jw_arr(&w);
            sy_jw_node(&w, d, in);
            sy_jw_end(&w);
        }
        sy_jw_key(&w, "input_type");
        uint32_t it = sy_jdom_get(d, 0, "input_type");
        if (jtype(d, it) == 's')
            sy_jw_node(&w, d, it);
        else
            sy_jw_cstr(&w, "search_document");
        uint32_t tr = sy_jdom_get(d, 0, "truncate");
        if (present(d, tr)) {
            sy_jw_key(&w, "truncate");
            sy_jw_node(&w, d, tr);
        }
    } else {
        if (n > 1)
            return fail(&o->err, 400,
                        "bedrock: amazon.titan-embed models take one input per request; got a list of %u "
                        "(send one string, or use cohere.embed-* for batches)",
                        n);
        sy_jw_key(&w, "inputText");
        sy_jw_node(&w, d, jtype(d, in) == 'a' ? sy_jdom_first(d, in) : in);
        if (k == EMB_TITAN_V1) {
            if (present(d, dim) && unsupported(x, "dimensions", o) < 0)
                return SY_EINVAL;
            if (present(d, encf) && unsupported(x, "encoding_format", o) < 0)
                return SY_EINVAL;
        } else {
            if (present(d, dim)) {
                sy_jw_key(&w, "dimensions");
                sy_jw_node(&w, d, dim);
            }
            uint32_t nz = sy_jdom_get(d, 0, "normalize");
            if (present(d, nz)) {
                sy_jw_key(&w, "normalize");
                sy_jw_node(&w, d, nz);
            }
            if (present(d, encf)) {
                sy_jw_key(&w, "embeddingTypes");
                sy_jw_raw(&w, sy_jdom_str_eq(d, encf, "base64") ? "[\"binary\"]" : "[\"float\"]",
                          sy_jdom_str_eq(d, encf, "base64") ? 10 : 9);
            }
        }
    }
    sy_jw_end(&w);
    if (w.err)
        return fail(&o->err, 413, "bedrock: request too large");
    return finish_request(x, id, "/invoke", "application/json", o);
}

static int b_encode(const struct sy_xctx *x, const struct sy_jdoc *req, struct sy_xout *o)
{
    if (!req || !req->count || req->n[0].type != 'o')
        return fail(&o->err, 400, "bedrock: the request body must be a JSON object");
    int rc = 0;
    const char *id = model_id(x, o, &rc);
    if (!id)
        return rc;
    return x->op == SY_OP_EMBED ? encode_embed(x, req, id, o) : encode_chat(x, req, id, o);
}

/* ---- response ---------------------------------------------------------------------- */

static int proto(struct sy_xstate *st, const char *why, const char *body, size_t n)
{
    char m[1024];
    while (n > 0 && body && (body[n - 1] == '\n' || body[n - 1] == '\r' || body[n - 1] == ' '))
        n--;
    int k = snprintf(m, sizeof m, "Received=%.*s, Error converting to valid response block=%s",
                     (int)(n > 600 ? 600 : n), body ? body : "", why);
    sy_oai_err(&st->err, 400, m, k > 0 ? ((size_t)k < sizeof m ? (size_t)k : sizeof m - 1) : 0);
    return SY_EUPPROTO;
}

static void read_usage(const struct sy_jdoc *d, uint32_t u, struct sy_xusage *out)
{
    if (jtype(d, u) != 'o')
        return;
    int64_t in = 0, op = 0, cr = 0, cw = 0;
    sy_jdom_i64(d, sy_jdom_get(d, u, "inputTokens"), &in);
    sy_jdom_i64(d, sy_jdom_get(d, u, "outputTokens"), &op);
    sy_jdom_i64(d, sy_jdom_get(d, u, "cacheReadInputTokens"), &cr);
    sy_jdom_i64(d, sy_jdom_get(d, u, "cacheWriteInputTokens"), &cw);
    out->prompt = in + cr + cw;
    out->completion = op;
    out->cache_read = cr;
    out->cache_write = cw;
    /* cacheDetails: [{ttl: "5m"|"1h", inputTokens}] - the writes by TTL */
    int64_t h1 = 0;
    uint32_t cd = sy_jdom_get(d, u, "cacheDetails");
    for (uint32_t e = jtype(d, cd) == 'a' ? sy_jdom_first(d, cd) : 0; e; e = sy_jdom_next(d, e)) {
        int64_t t = 0;
        if (jtype(d, e) == 'o' && sy_jdom_str_eq(d, sy_jdom_get(d, e, "ttl"), "1h") &&
            sy_jdom_i64(d, sy_jdom_get(d, e, "inputTokens"), &t) && t > 0)
            h1 = t > cw - h1 ? cw : h1 + t; /* never above the writes (nor overflowing) */
    }
    out->cache_write_1h = h1 > 0 ? h1 : 0;
    out->have = 1;
}

/* A leading <think>..</think> (or thinking, budget:thinking) in text: LiteLLM's
 * _parse_content_for_reasoning. Returns 1 with the two parts. */
static int split_think(const char *s, size_t n, const char **r, size_t *rl, const char **c, size_t *cl)
{
    static const char *const open[] = {"<think>", "<thinking>", "<budget:thinking>"};
    static const char *const close[] = {"</think>", "</thinking>", "</budget:thinking>"};
    for (int i = 0; i < 3; i++) {
        size_t ol = strlen(open[i]);
        if (n < ol || memcmp(s, open[i], ol))
            continue;
        const char *best = NULL;
        size_t bl = 0;
        for (int j = 0; j < 3; j++) {
            const char *f = memmem(s + ol, n - ol, close[j], strlen(close[j]));
            if (f && (!best || f < best)) {
                best = f;
                bl = strlen(close[j]);
            }
        }
        if (!best)
            return 0;
        *r = s + ol;
        *rl = (size_t)(best - *r);
        *c = best + bl;
        *cl = n - (size_t)(*c - s);
        return 1;
    }
    return 0;
}

static int chat_response(const struct sy_xctx *x, struct sy_xstate *st, const char *body, size_t n, struct sy_buf *out)
{
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, body, n, x->arena, 0) || d.n[0].type != 'o')
        return proto(st, "the body is not a JSON object", body, n);
    uint32_t output = sy_jdom_get(&d, 0, "output");
    if (jtype(&d, output) != 'o')
        return proto(st, "'output'", body, n);
    uint32_t msg = sy_jdom_get(&d, output, "message");
    uint32_t content = jtype(&d, msg) == 'o' ? sy_jdom_get(&d, msg, "content") : 0;
    struct sy_buf text, reason, blocks;
    sy_buf_init(&text, n + 1);
    sy_buf_init(&reason, n + 1);
    sy_buf_init(&blocks, 2 * n + 64);
    struct sy_jw bw;
    sy_jw_init(&bw, &blocks);
    sy_jw_arr(&bw);
    int nreason = 0;
    size_t ntools = 0, cap = 0;
    struct sy_xtool *tools = NULL;
    if (jtype(&d, content) == 'a') {
        for (uint32_t b = sy_jdom_first(&d, content); b; b = sy_jdom_next(&d, b))
            cap += jtype(&d, b) == 'o';
        tools = sy_arena_alloc(x->arena, (cap ? cap : 1) * sizeof *tools);
    }
    for (uint32_t b = jtype(&d, content) == 'a' ? sy_jdom_first(&d, content) : 0; b; b = sy_jdom_next(&d, b)) {
        if (jtype(&d, b) != 'o')
            continue;
        size_t tl;
        const char *t = sy_jdom_str(&d, sy_jdom_get(&d, b, "text"), x->arena, &tl);
        if (t) {
            const char *r, *c;
            size_t rl, cl;
            if (split_think(t, tl, &r, &rl, &c, &cl)) {
                sy_buf_append(&reason, r, rl);
                sy_jw_obj(&bw);
                sy_jw_key(&bw, "type");
                sy_jw_cstr(&bw, "thinking");
                sy_jw_key(&bw, "thinking");
                sy_jw_str(&bw, r, rl);
                sy_jw_end(&bw);
                nreason++;
                t = c;
                tl = cl;
            }
            sy_buf_append(&text, t, tl);
        }
        uint32_t tu = sy_jdom_get(&d, b, "toolUse");
        if (jtype(&d, tu) == 'o') {
            struct sy_xtool *k = &tools[ntools++];
            memset(k, 0, sizeof *k);
            k->id = sy_jdom_str(&d, sy_jdom_get(&d, tu, "toolUseId"), x->arena, &k->idl);
            k->name = sy_jdom_str(&d, sy_jdom_get(&d, tu, "name"), x->arena, &k->nl);
            uint32_t in = sy_jdom_get(&d, tu, "input");
            if (jtype(&d, in) == 's')
                k->args = sy_jdom_str(&d, in, x->arena, &k->al);
            else if (in)
                k->args = sy_jdom_raw(&d, in, &k->al);
            else
                k->args = "{}", k->al = 2;
        }
        uint32_t rc = sy_jdom_get(&d, b, "reasoningContent");
        if (jtype(&d, rc) == 'o') {
            nreason++;
            uint32_t rt = sy_jdom_get(&d, rc, "reasoningText");
            uint32_t red = sy_jdom_get(&d, rc, "redactedContent");
            if (jtype(&d, rt) == 'o') {
                size_t rl = 0;
                const char *r = sy_jdom_str(&d, sy_jdom_get(&d, rt, "text"), x->arena, &rl);
                if (r)
                    sy_buf_append(&reason, r, rl);
                sy_jw_obj(&bw);
                sy_jw_key(&bw, "type");
                sy_jw_cstr(&bw, "thinking");
                if (r) {
                    sy_jw_key(&bw, "thinking");
                    sy_jw_str(&bw, r, rl);
                }
                uint32_t sig = sy_jdom_get(&d, rt, "signature");
                if (present(&d, sig)) {
                    sy_jw_key(&bw, "signature");
                    sy_jw_node(&bw, &d, sig);
                }
                sy_jw_end(&bw);
            } else if (present(&d, red)) {
                sy_jw_obj(&bw);
                sy_jw_key(&bw, "type");
                sy_jw_cstr(&bw, "redacted_thinking");
                sy_jw_key(&bw, "data");
                sy_jw_node(&bw, &d, red);
                sy_jw_end(&bw);
            }
        }
    }
    sy_jw_end(&bw);
    struct sy_xmsg m = {.content = text.p ? text.p : "", .content_len = text.len, .tools = tools, .ntools = ntools};
    if (nreason) {
        m.reasoning = reason.p ? reason.p : "";
        m.reasoning_len = reason.len;
        m.thinking_blocks_json = blocks.p;
        m.thinking_blocks_len = blocks.len;
    }
    /* response_format: the one json_tool_call's input is the answer */
    if (ntools == 1 && tools[0].name && tools[0].nl == strlen(JSON_TOOL) &&
        !memcmp(tools[0].name, JSON_TOOL, tools[0].nl)) {
        m.content = tools[0].args;
        m.content_len = tools[0].al;
        struct sy_jdoc a;
        if (!sy_jdom_parse(&a, tools[0].args, tools[0].al, x->arena, 0) && a.n[0].type == 'o' && a.n[0].kids == 1) {
            uint32_t k = sy_jdom_first(&a, 0);
            if (sy_jdom_str_eq(&a, k, "properties") && jtype(&a, sy_jdom_val(k)) == 'o')
                m.content = sy_jdom_raw(&a, sy_jdom_val(k), &m.content_len);
        }
        m.ntools = 0;
    }
    size_t rl = 0;
    const char *reason_s = sy_jdom_str(&d, sy_jdom_get(&d, 0, "stopReason"), x->arena, &rl);
    m.finish_reason = reason_s ? sy_oai_finish_reason(reason_s, rl) : "stop";
    read_usage(&d, sy_jdom_get(&d, 0, "usage"), &st->u);
    size_t l0 = out->len;
    sy_oai_write_response(st, &m, out);
    int err = bw.err ? SY_ENOSPC : 0;
    sy_buf_free(&text);
    sy_buf_free(&reason);
    sy_buf_free(&blocks);
    if (err || out->len == l0) {
        sy_oai_err(&st->err, 500, "bedrock: response too large", 28);
        return SY_EUPPROTO;
    }
    return 0;
}

static int embed_response(const struct sy_xctx *x, struct sy_xstate *st, const char *body, size_t n, struct sy_buf *out)
{
    const char *id = x->model ? x->model : "";
    if (starts(id, "converse/"))
        id += 9;
    if (starts(id, "invoke/"))
        id += 7;
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, body, n, x->arena, 0) || d.n[0].type != 'o')
        return proto(st, "the body is not a JSON object", body, n);
    const char **vec;
    size_t *vl, nv = 0;
    if (emb_kind(id) == EMB_COHERE) {
        uint32_t e = sy_jdom_get(&d, 0, "embeddings");
        if (jtype(&d, e) == 'o') { /* embedding_types asked: {"float": [[..]]} */
            uint32_t f = sy_jdom_get(&d, e, "float");
            e = f ? f : (sy_jdom_first(&d, e) ? sy_jdom_val(sy_jdom_first(&d, e)) : 0);
        }
        if (jtype(&d, e) != 'a')
            return proto(st, "'embeddings'", body, n);
        vec = sy_arena_alloc(x->arena, (d.n[e].kids + 1) * sizeof *vec);
        vl = sy_arena_alloc(x->arena, (d.n[e].kids + 1) * sizeof *vl);
        for (uint32_t v = sy_jdom_first(&d, e); v; v = sy_jdom_next(&d, v)) {
            if (jtype(&d, v) != 'a')
                return proto(st, "'embeddings' items", body, n);
            vec[nv] = sy_jdom_raw(&d, v, &vl[nv]);
            nv++;
        }
        int64_t it = 0;
        uint32_t meta = sy_jdom_get(&d, 0, "meta");
        if (sy_jdom_i64(&d, sy_jdom_get(&d, sy_jdom_get(&d, meta, "billed_units"), "input_tokens"), &it)) {
            st->u.prompt = it;
            st->u.have = 1;
        }
    } else {
        uint32_t bt = sy_jdom_get(&d, 0, "embeddingsByType");
        uint32_t e = 0;
        if (jtype(&d, bt) == 'o')
            e = sy_jdom_get(&d, bt, "binary") ? sy_jdom_get(&d, bt, "binary") : sy_jdom_get(&d, bt, "float");
        if (!e)
            e = sy_jdom_get(&d, 0, "embedding");
        if (jtype(&d, e) != 'a')
            return proto(st, "'embedding'", body, n);
        vec = sy_arena_alloc(x->arena, sizeof *vec);
        vl = sy_arena_alloc(x->arena, sizeof *vl);
        vec[0] = sy_jdom_raw(&d, e, &vl[0]);
        nv = 1;
        int64_t tc = 0;
        if (sy_jdom_i64(&d, sy_jdom_get(&d, 0, "inputTextTokenCount"), &tc)) {
            st->u.prompt = tc;
            st->u.have = 1;
        }
    }
    sy_oai_write_embeddings(st, vec, vl, nv, out);
    return 0;
}

static int b_decode_response(const struct sy_xctx *x, struct sy_xstate *st, const char *body, size_t n,
                             struct sy_buf *out)
{
    return x->op == SY_OP_EMBED ? embed_response(x, st, body, n, out) : chat_response(x, st, body, n, out);
}

/* ---- stream ------------------------------------------------------------------------- */

/* Stream state in st->priv; all zero at the start (the gateway zeroes st). */
struct bstream {
    int32_t tool_block; /* contentBlockIndex + 1 of the open tool call, 0 none */
    int32_t tool_index; /* its OpenAI tool_calls index */
    int32_t json_block; /* contentBlockIndex + 1 of a json_tool_call streamed as content, 0 none */
    uint8_t tool_args;  /* the open tool call got argument bytes */
};
static_assert(sizeof(struct bstream) <= sizeof(((struct sy_xstate *)0)->priv), "bedrock stream state too big");

/* The HTTP status LiteLLM-compatible clients expect for a stream exception. */
static int exception_status(const char *t, size_t n)
{
    static const struct {
        const char *type;
        int status;
    } map[] = {
        {"throttlingException", 429},         {"validationException", 400},
        {"serviceUnavailableException", 503}, {"internalServerException", 500},
        {"modelStreamErrorException", 500},   {"modelTimeoutException", 408},
        {"accessDeniedException", 403},       {"resourceNotFoundException", 404},
        {"modelNotReadyException", 503},      {"serviceQuotaExceededException", 429},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strlen(map[i].type) == n && !strncasecmp(map[i].type, t, n))
            return map[i].status;
    return 500;
}

static int context_window_text(const char *s, size_t n)
{
    static const char *const pats[] = {"too many tokens",    "expected maxLength:", "Input is too long",
                                       "prompt is too long", "prompt: length: 1..", "Too many input tokens"};
    for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++)
        if (memmem(s, n, pats[i], strlen(pats[i])))
            return 1;
    return 0;
}

static int stream_exception(struct sy_xstate *st, const char *type, size_t tl, const char *data, size_t dl)
{
    char m[1024];
    int k = snprintf(m, sizeof m, "%.*s %.*s", (int)(tl > 200 ? 200 : tl), type, (int)(dl > 800 ? 800 : dl), data);
    int status = exception_status(type, tl);
    if (context_window_text(data, dl))
        status = 400;
    sy_oai_err(&st->err, status, m, k > 0 ? ((size_t)k < sizeof m ? (size_t)k : sizeof m - 1) : 0);
    if (context_window_text(data, dl))
        snprintf(st->err.cls, sizeof st->err.cls, "ContextWindowExceededError");
    return SY_EUPPROTO;
}

static int type_is(const char *t, size_t tl, const char *lit)
{
    return strlen(lit) == tl && !memcmp(t, lit, tl);
}

static int b_decode_event(const struct sy_xctx *x, struct sy_xstate *st, const char *type, size_t tl, const char *data,
                          size_t dl, struct sy_buf *out)
{
    struct bstream *bs = (struct bstream *)st->priv;
    if (tl && type[0] == '!')
        return stream_exception(st, type + 1, tl - 1, data, dl);
    if (!type_is(type, tl, "messageStart") && !type_is(type, tl, "contentBlockStart") &&
        !type_is(type, tl, "contentBlockDelta") && !type_is(type, tl, "contentBlockStop") &&
        !type_is(type, tl, "messageStop") && !type_is(type, tl, "metadata"))
        return 0;      /* unknown events are skipped */
    struct sy_arena a; /* per event: constant memory over a long stream */
    sy_arena_init(&a);
    struct sy_jdoc d;
    int rc = 0;
    if (sy_jdom_parse(&d, data, dl, &a, 0) || d.n[0].type != 'o') {
        sy_oai_err(&st->err, 502, "bedrock: a stream event is not a JSON object", 44);
        rc = SY_EUPPROTO;
        goto done;
    }
    int64_t bi = 0;
    sy_jdom_i64(&d, sy_jdom_get(&d, 0, "contentBlockIndex"), &bi);
    if (bi < 0 || bi > INT32_MAX - 1)
        bi = 0;
    if (type_is(type, tl, "messageStart")) {
        sy_oai_chunk_role(st, out);
    } else if (type_is(type, tl, "contentBlockStart")) {
        uint32_t tu = sy_jdom_get(&d, sy_jdom_get(&d, 0, "start"), "toolUse");
        if (jtype(&d, tu) == 'o') {
            size_t il = 0, nl = 0;
            const char *id = sy_jdom_str(&d, sy_jdom_get(&d, tu, "toolUseId"), &a, &il);
            const char *name = sy_jdom_str(&d, sy_jdom_get(&d, tu, "name"), &a, &nl);
            if (name && nl == strlen(JSON_TOOL) && !memcmp(name, JSON_TOOL, nl)) {
                bs->json_block = (int32_t)bi + 1;
                sy_oai_chunk_role(st, out);
            } else {
                bs->tool_index = sy_oai_chunk_tool_start(st, out, id, il, name, nl);
                bs->tool_block = (int32_t)bi + 1;
                bs->tool_args = 0;
            }
        }
    } else if (type_is(type, tl, "contentBlockDelta")) {
        uint32_t delta = sy_jdom_get(&d, 0, "delta");
        uint32_t t = sy_jdom_get(&d, delta, "text");
        uint32_t tu = sy_jdom_get(&d, delta, "toolUse");
        uint32_t rc2 = sy_jdom_get(&d, delta, "reasoningContent");
        size_t n = 0;
        const char *s;
        if ((s = sy_jdom_str(&d, t, &a, &n))) {
            sy_oai_chunk_text(st, out, s, n);
        } else if (jtype(&d, tu) == 'o' && (s = sy_jdom_str(&d, sy_jdom_get(&d, tu, "input"), &a, &n))) {
            if (bs->json_block) {
                sy_oai_chunk_text(st, out, s, n);
            } else if (bs->tool_block) {
                sy_oai_chunk_tool_args(st, out, bs->tool_index, s, n);
                bs->tool_args |= n > 0;
            }
        } else if (jtype(&d, rc2) == 'o' && (s = sy_jdom_str(&d, sy_jdom_get(&d, rc2, "text"), &a, &n))) {
            sy_oai_chunk_reasoning(st, out, s, n);
        } else {
            sy_oai_chunk_role(st, out); /* signature / redacted pieces: nothing to show */
        }
    } else if (type_is(type, tl, "contentBlockStop")) {
        if (bs->tool_block && bs->tool_block == (int32_t)bi + 1) {
            if (!bs->tool_args)
                sy_oai_chunk_tool_args(st, out, bs->tool_index, "{}", 2); /* as LiteLLM: never empty */
            bs->tool_block = 0;
        }
        if (bs->json_block == (int32_t)bi + 1)
            bs->json_block = 0;
    } else if (type_is(type, tl, "messageStop")) {
        size_t n = 0;
        const char *r = sy_jdom_str(&d, sy_jdom_get(&d, 0, "stopReason"), &a, &n);
        sy_oai_chunk_finish(st, out, r ? sy_oai_finish_reason(r, n) : "stop");
    } else { /* metadata: usage, metrics - the last event */
        read_usage(&d, sy_jdom_get(&d, 0, "usage"), &st->u);
        st->done = 1;
        rc = SY_DONE;
    }
done:
    sy_arena_free(&a);
    return rc;
}

/* ---- errors --------------------------------------------------------------------------- */

static int has(const char *b, size_t n, const char *lit)
{
    return memmem(b, n, lit, strlen(lit)) != NULL;
}

static void b_decode_error(const struct sy_xctx *x, int status, const char *body, size_t n, struct sy_xerr *e)
{
    const char *b = body ? body : "";
    const char *cls = NULL;
    int st = status;
    if (context_window_text(b, n)) {
        st = 400;
        cls = "ContextWindowExceededError";
    } else if (has(b, n, "Unable to locate credentials") ||
               has(b, n, "The security token included in the request is invalid")) {
        st = 401;
    } else if (has(b, n, "AccessDeniedException")) {
        st = 403;
    } else if (has(b, n, "throttlingException") || has(b, n, "ThrottlingException")) {
        st = 429;
    } else if (has(b, n, "Could not process image")) {
        st = 500;
    } else {
        switch (status) {
        case 500: st = 503; break; /* LiteLLM: ServiceUnavailableError */
        case 422: st = 400; break;
        case 504: st = 408; break;
        default: break;
        }
    }
    /* the message is the body as Bedrock sent it (LiteLLM's BedrockException text) */
    size_t k = n;
    while (k > 0 && (b[k - 1] == '\n' || b[k - 1] == '\r' || b[k - 1] == ' '))
        k--;
    sy_oai_err(e, st, b, k);
    if (cls)
        snprintf(e->cls, sizeof e->cls, "%s", cls);
}

const struct sy_adapter sy_adapter_bedrock = {
    .name = "bedrock",
    .caps = SY_CAP_STREAM | SY_CAP_TOOLS | SY_CAP_VISION | SY_CAP_EMBED | SY_CAP_REASONING,
    .framing = SY_FRAME_AWS_EVENTSTREAM,
    .configure = b_configure,             /* region, credentials, endpoint, drop params */
    .encode = b_encode,                   /* Converse / InvokeModel body, SigV4 or bearer */
    .decode_response = b_decode_response, /* Converse output / Titan, Cohere vectors -> OpenAI */
    .decode_event = b_decode_event,       /* ConverseStream events -> chunks */
    .decode_error = b_decode_error,       /* Bedrock's {"message"} with LiteLLM's statuses */
};
