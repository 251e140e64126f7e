/* ollama.c - the native Ollama adapter (sy_adapter_ollama): /api/chat with
 * NDJSON streaming and /api/embed, for the `ollama/` and `ollama_chat/`
 * prefixes, as LiteLLM's OllamaChatConfig translates them.
 *
 * Request (OpenAI chat -> POST {base}/api/chat, "Authorization: Bearer KEY"
 * when a key is set; base without a trailing /v1 or /api/...):
 *
 *   OpenAI                             Ollama
 *   ---------------------------------  ---------------------------------------------
 *   model (deployment's)               model
 *   messages[]                         messages[] (below)
 *   max_completion_tokens|max_tokens   options.num_predict
 *   temperature, top_p, seed           options.temperature, .top_p, .seed
 *   frequency_penalty                  options.repeat_penalty (LiteLLM's mapping)
 *   stop (string or list)              options.stop [..]
 *   num_ctx, top_k, min_p, mirostat..  options.<same name> (Ollama's own options)
 *   options {..}                       its members added to options (mapped ones win)
 *   stream                             stream (always written: Ollama defaults to true)
 *   response_format json_object        format "json"
 *     json_schema {schema}             format <schema>;  text: left out
 *   format, keep_alive, think          copied (format / think lose to response_format /
 *                                      reasoning_effort)
 *   tools                              tools (OpenAI's shape is Ollama's)
 *   functions                          tools [{type:function, function}]
 *   reasoning_effort                   think: the value for gpt-oss models, else
 *                                      true for low/medium/high, false otherwise
 *   tool_choice, user, stream_options  ignored (LiteLLM drops tool_choice: it hangs Ollama)
 *   n (when not 1), presence_penalty, logit_bias, logprobs, top_logprobs,
 *   parallel_tool_calls, function_call, modalities, audio, prediction, verbosity,
 *   web_search_options, thinking, safety_identifier   400 UnsupportedParamsError
 *                                                     (dropped with drop_params)
 *
 *   message                 Ollama message
 *   ----------------------  -----------------------------------------------------------
 *   role                    system (also for developer), user, assistant, tool
 *   content                 a string: text parts joined; null -> ""
 *   image_url parts         images [base64]: a data: URL's payload; http(s) URLs are
 *                           refused (400: the gateway does not download)
 *   reasoning_content       thinking
 *   tool_calls              tool_calls [{function:{name, arguments: <object>}}]
 *                           (the OpenAI arguments string parsed; 400 when not JSON)
 *   tool: tool_call_id      tool_name (the name of the call with that id, when found)
 *
 * Response (chat, and each NDJSON line of a stream):
 *
 *   {"model", "created_at", "message": {"role", "content", "thinking",
 *    "tool_calls": [{"function": {"name", "arguments": {..}}}]},
 *    "done": bool, "done_reason": "stop"|"length"|..,
 *    "prompt_eval_count", "eval_count", ..durations}
 *   {"error": "..."}                                 (a failed stream line)
 *
 *   -> content, reasoning_content (thinking; else a leading <think>..</think>
 *   in content, as LiteLLM), tool_calls (ids "call_" + 16 hex digits hashed
 *   from the response id and the call's index: deterministic; arguments the
 *   object's JSON text), finish_reason: tool_calls when there are calls, else
 *   done_reason mapped (length -> length, others -> stop). Usage only when
 *   both counts are present (Ollama leaves prompt_eval_count out for a cached
 *   prompt): otherwise st->u.have stays 0 and the gateway counts.
 *   Stream: each line's deltas become chunks; done:true ends it (SY_DONE).
 *
 * Embeddings (POST {base}/api/embed):
 *
 *   input (string | [string])  input
 *   dimensions                 dimensions
 *   truncate, keep_alive, options  copied; encoding_format, user: ignored (floats)
 *   <- {"model", "embeddings": [[..], ..], "prompt_eval_count"}
 *
 * Errors: {"error": "..."}; statuses as LiteLLM's exception mapping for
 * ollama: "no such file or directory" / "Invalid response object from API"
 * -> 400, "Read timed out" -> 408, anything else -> 500 APIConnectionError
 * (LiteLLM has no status mapping for ollama and falls through to it). The
 * message is the body as Ollama sent it.
 *
 * No I/O, no globals; stream state lives in st->priv (struct opriv).
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

#define PROV "ollama"

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

/* Member k1 (then k2 when not NULL) of node i; 0 when i is 0 or a step is missing. */
static uint32_t at(const struct sy_jdoc *d, uint32_t i, const char *k1, const char *k2)
{
    if (sy_jdom_kind(d, i) != 'o' || !(i = sy_jdom_at(d, i, k1)))
        return 0;
    if (!k2)
        return i;
    return sy_jdom_kind(d, i) == 'o' ? sy_jdom_at(d, i, k2) : 0;
}

static int num(const struct sy_jdoc *d, uint32_t i, int64_t *v)
{
    double f;
    if (sy_jdom_i64(d, i, v))
        return 1;
    if (!sy_jdom_num(d, i, &f) || f != f)
        return 0;
    *v = f >= 9.2e18 ? INT64_MAX : f <= -9.2e18 ? INT64_MIN : (int64_t)f; /* a cast out of range is UB */
    return 1;
}

static int fail(struct sy_xerr *e, int status, const char *msg)
{
    sy_oai_err(e, status, msg, strlen(msg));
    return status == 413 ? SY_ENOSPC : SY_EINVAL;
}

/* ---- configure ------------------------------------------------------------ */

/* /api/chat is native: an OpenAI-compatible base ending in /v1 (or a full
 * endpoint URL) is cut back to the server's root. */
static void trim_base(char *b)
{
    static const char *const tails[] = {"/api/chat", "/api/embed", "/api/embeddings", "/api/generate", "/api", "/v1"};
    sy_pconf_trim_base(b, tails, sizeof tails / sizeof tails[0]);
}

static int configure(const struct sy_deployment *d, int global_drop, struct sy_pconf *pc, char *err, size_t errlen)
{
    const char *base = d->api_base ? d->api_base : sy_deployment_param(d, "api_base");
    if (!base || !*base)
        base = getenv("OLLAMA_API_BASE");
    if (!base || !*base)
        base = "http://localhost:11434";
    const char *key = d->api_key ? d->api_key : sy_deployment_param(d, "api_key");
    if (!key || !*key)
        key = getenv("OLLAMA_API_KEY");
    if (!(pc->base = dupn(base, strlen(base))) || (key && *key && !(pc->key = dupn(key, strlen(key))))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    trim_base(pc->base);
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

/* ---- encode --------------------------------------------------------------- */

enum {
    P_IGNORE,
    P_UNSUPPORTED,
    P_MESSAGES,
    P_MAX_TOKENS,
    P_MAX_COMPLETION_TOKENS,
    P_TEMPERATURE,
    P_TOP_P,
    P_SEED,
    P_FREQUENCY_PENALTY,
    P_STOP,
    P_N,
    P_TOOLS,
    P_FUNCTIONS,
    P_RESPONSE_FORMAT,
    P_REASONING_EFFORT,
    P_FORMAT,
    P_KEEP_ALIVE,
    P_THINK,
    P_OPTIONS,
    P_OPTION, /* an Ollama option written at the top level */
    P_INPUT,
    P_DIMENSIONS,
    P_TRUNCATE,
    P__COUNT
};

struct pdef {
    const char *name;
    int slot;
};

static const struct pdef chat_params[] = {
    {"messages", P_MESSAGES},
    {"max_tokens", P_MAX_TOKENS},
    {"max_completion_tokens", P_MAX_COMPLETION_TOKENS},
    {"temperature", P_TEMPERATURE},
    {"top_p", P_TOP_P},
    {"seed", P_SEED},
    {"frequency_penalty", P_FREQUENCY_PENALTY},
    {"stop", P_STOP},
    {"n", P_N},
    {"tools", P_TOOLS},
    {"functions", P_FUNCTIONS},
    {"response_format", P_RESPONSE_FORMAT},
    {"reasoning_effort", P_REASONING_EFFORT},
    {"format", P_FORMAT},
    {"keep_alive", P_KEEP_ALIVE},
    {"think", P_THINK},
    {"options", P_OPTIONS},
    {"num_ctx", P_OPTION},
    {"num_keep", P_OPTION},
    {"num_batch", P_OPTION},
    {"num_gpu", P_OPTION},
    {"main_gpu", P_OPTION},
    {"num_thread", P_OPTION},
    {"num_gqa", P_OPTION},
    {"num_predict", P_OPTION},
    {"top_k", P_OPTION},
    {"min_p", P_OPTION},
    {"typical_p", P_OPTION},
    {"repeat_last_n", P_OPTION},
    {"repeat_penalty", P_OPTION},
    {"mirostat", P_OPTION},
    {"mirostat_eta", P_OPTION},
    {"mirostat_tau", P_OPTION},
    {"tfs_z", P_OPTION},
    {"penalize_newline", P_OPTION},
    {"numa", P_OPTION},
    {"low_vram", P_OPTION},
    {"use_mmap", P_OPTION},
    {"use_mlock", P_OPTION},
    {"presence_penalty", P_UNSUPPORTED},
    {"logit_bias", P_UNSUPPORTED},
    {"logprobs", P_UNSUPPORTED},
    {"top_logprobs", P_UNSUPPORTED},
    {"parallel_tool_calls", P_UNSUPPORTED},
    {"function_call", P_UNSUPPORTED},
    {"modalities", P_UNSUPPORTED},
    {"audio", P_UNSUPPORTED},
    {"prediction", P_UNSUPPORTED},
    {"verbosity", P_UNSUPPORTED},
    {"web_search_options", P_UNSUPPORTED},
    {"thinking", P_UNSUPPORTED},
    {"safety_identifier", P_UNSUPPORTED},
};

static const struct pdef embed_params[] = {
    {"input", P_INPUT},           {"dimensions", P_DIMENSIONS}, {"truncate", P_TRUNCATE},
    {"keep_alive", P_KEEP_ALIVE}, {"options", P_OPTIONS},
};

#define MAX_OPT 24

struct oreq {
    uint32_t at[P__COUNT]; /* value node per slot, 0 when absent */
    uint32_t opt[MAX_OPT]; /* key nodes of top-level Ollama options */
    size_t nopt;
};

static int scan(const struct sy_xctx *x, const struct sy_jdoc *req, const struct pdef *t, size_t nt, struct oreq *q,
                struct sy_xerr *e)
{
    memset(q, 0, sizeof *q);
    if (req->n[0].type != 'o')
        return fail(e, 400, "request body must be a JSON object");
    for (uint32_t k = sy_jdom_first(req, 0); k; k = sy_jdom_next_key(req, k)) {
        uint32_t v = sy_jdom_val(k);
        if (sy_jdom_kind(req, v) == 'z')
            continue; /* null: not set */
        size_t n;
        const char *s = sy_jdom_view(req, k, x->arena, &n);
        char name[64];
        if (!s || n >= sizeof name)
            continue;
        memcpy(name, s, n);
        name[n] = 0;
        int slot = P_IGNORE;
        for (size_t i = 0; i < nt; i++)
            if (!strcmp(t[i].name, name)) {
                slot = t[i].slot;
                break;
            }
        if (slot == P_IGNORE || (slot != P_MESSAGES && slot != P_INPUT && sy_oai_drop_extra(x, name)))
            continue;
        if (slot == P_N) {
            int64_t nv;
            if (num(req, v, &nv) && nv == 1)
                continue; /* langchain sends n=1: accepted, as LiteLLM */
            slot = P_UNSUPPORTED;
        }
        if (slot == P_UNSUPPORTED) {
            if (!sy_oai_unsupported(x, x->d && x->d->provider ? x->d->provider : PROV, name, e))
                return SY_EUNSUPPORTED;
            continue;
        }
        if (slot == P_OPTION) {
            if (q->nopt < MAX_OPT)
                q->opt[q->nopt++] = k;
            continue;
        }
        q->at[slot] = v;
    }
    return 0;
}

/* The options object: mapped parameters first, then top-level Ollama
 * options, then the members of `options` not already written. */
struct optw {
    struct sy_jw *w;
    const char *names[MAX_OPT * 2 + 8];
    size_t lens[MAX_OPT * 2 + 8], n;
};

static int opt_key(struct optw *o, const char *k, size_t kl)
{
    for (size_t i = 0; i < o->n; i++)
        if (o->lens[i] == kl && !memcmp(o->names[i], k, kl))
            return 0;
    if (o->n < sizeof o->names / sizeof o->names[0]) {
        o->names[o->n] = k;
        o->lens[o->n++] = kl;
    }
    sy_jw_keyn(o->w, k, kl);
    return 1;
}

static int put_options(struct sy_jw *w, const struct sy_xctx *x, const struct sy_jdoc *req, const struct oreq *q,
                       struct sy_xerr *e)
{
    struct optw o = {.w = w};
    static const struct {
        int slot;
        const char *key;
    } map[] = {
        {P_TEMPERATURE, "temperature"}, {P_TOP_P, "top_p"}, {P_SEED, "seed"}, {P_FREQUENCY_PENALTY, "repeat_penalty"}};
    sy_jw_key(w, "options");
    sy_jw_obj(w);
    uint32_t mt = q->at[P_MAX_COMPLETION_TOKENS] ? q->at[P_MAX_COMPLETION_TOKENS] : q->at[P_MAX_TOKENS];
    if (mt && opt_key(&o, "num_predict", 11))
        sy_jw_node(w, req, mt);
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (q->at[map[i].slot] && opt_key(&o, map[i].key, strlen(map[i].key)))
            sy_jw_node(w, req, q->at[map[i].slot]);
    if (q->at[P_STOP]) {
        uint32_t s = q->at[P_STOP];
        if (sy_jdom_kind(req, s) != 's' && sy_jdom_kind(req, s) != 'a')
            return fail(e, 400, "stop must be a string or a list of strings");
        if (opt_key(&o, "stop", 4)) {
            if (sy_jdom_kind(req, s) == 's') {
                sy_jw_arr(w);
                sy_jw_node(w, req, s);
                sy_jw_end(w);
            } else {
                sy_jw_node(w, req, s);
            }
        }
    }
    for (size_t i = 0; i < q->nopt; i++) {
        size_t kl;
        const char *k = sy_jdom_view(req, q->opt[i], x->arena, &kl);
        if (opt_key(&o, k, kl))
            sy_jw_node(w, req, sy_jdom_val(q->opt[i]));
    }
    uint32_t ob = q->at[P_OPTIONS];
    if (ob && sy_jdom_kind(req, ob) != 'o')
        return fail(e, 400, "options must be an object");
    for (uint32_t k = ob ? sy_jdom_first(req, ob) : 0; k; k = sy_jdom_next_key(req, k)) {
        size_t kl;
        const char *ks = sy_jdom_view(req, k, x->arena, &kl);
        if (opt_key(&o, ks, kl))
            sy_jw_node(w, req, sy_jdom_val(k));
    }
    sy_jw_end(w);
    return 0;
}

/* The base64 payload of an image_url (a data: URL's part after the comma). */
static int image(struct sy_jw *w, const struct sy_jdoc *d, uint32_t part, struct sy_arena *a, struct sy_xerr *e)
{
    uint32_t iu = sy_jdom_at(d, part, "image_url");
    uint32_t url = sy_jdom_kind(d, iu) == 's' ? iu : sy_jdom_at(d, iu, "url");
    size_t n;
    const char *s = sy_jdom_view(d, url, a, &n);
    if (!s)
        return fail(e, 400, "image_url content parts need a url");
    if ((n >= 7 && !strncasecmp(s, "http://", 7)) || (n >= 8 && !strncasecmp(s, "https://", 8)))
        return fail(e, 400,
                    "Ollama needs images inline: send image_url as a data: URL with base64 content (the "
                    "gateway does not download images)");
    if (n >= 5 && !strncasecmp(s, "data:", 5)) {
        const char *c = memchr(s, ',', n);
        if (!c || c - s < 12 || strncasecmp(c - 7, ";base64", 7))
            return fail(e, 400, "image data: URLs must be base64-encoded");
        n -= (size_t)(c + 1 - s);
        s = c + 1;
    }
    sy_jw_str(w, s, n);
    return 0;
}

/* The name of the tool call `id` among the request's assistant messages. */
static uint32_t call_name(const struct sy_jdoc *d, uint32_t msgs, uint32_t id, struct sy_arena *a)
{
    size_t il;
    const char *is = sy_jdom_view(d, id, a, &il);
    for (uint32_t m = is ? sy_jdom_first(d, msgs) : 0; m; m = sy_jdom_next(d, m)) {
        uint32_t tc = sy_jdom_at(d, m, "tool_calls");
        for (uint32_t c = sy_jdom_kind(d, tc) == 'a' ? sy_jdom_first(d, tc) : 0; c; c = sy_jdom_next(d, c)) {
            size_t cl;
            const char *cs = sy_jdom_view(d, sy_jdom_at(d, c, "id"), a, &cl);
            uint32_t name = at(d, c, "function", "name");
            if (cs && cl == il && !memcmp(cs, is, il) && sy_jdom_kind(d, name) == 's')
                return name;
        }
    }
    return 0;
}

static int put_tool_calls(struct sy_jw *w, const struct sy_jdoc *d, uint32_t tc, struct sy_arena *a, struct sy_xerr *e)
{
    if (sy_jdom_kind(d, tc) != 'a')
        return fail(e, 400, "tool_calls must be a list");
    sy_jw_key(w, "tool_calls");
    sy_jw_arr(w);
    for (uint32_t c = sy_jdom_first(d, tc); c; c = sy_jdom_next(d, c)) {
        uint32_t fn = sy_jdom_at(d, c, "function"), name = sy_jdom_at(d, fn, "name");
        uint32_t args = sy_jdom_at(d, fn, "arguments");
        if (sy_jdom_kind(d, fn) != 'o' || sy_jdom_kind(d, name) != 's')
            return fail(e, 400, "tool_calls entries need function.name");
        sy_jw_obj(w);
        sy_jw_key(w, "function");
        sy_jw_obj(w);
        sy_jw_key(w, "name");
        sy_jw_node(w, d, name);
        sy_jw_key(w, "arguments");
        if (sy_jdom_kind(d, args) == 'o') {
            sy_jw_node(w, d, args);
        } else if (sy_jdom_kind(d, args) == 's') {
            size_t n;
            const char *s = sy_jdom_view(d, args, a, &n);
            size_t i = 0;
            while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
                i++;
            struct sy_jdoc ad;
            if (i == n)
                JW_LIT(w, "{}");
            else if (sy_jdom_parse(&ad, s, n, a, 0) || ad.n[0].type != 'o')
                return fail(e, 400, "tool call arguments must be a JSON object (Ollama takes them parsed)");
            else
                sy_jw_raw(w, ad.src + ad.n[0].off, ad.n[0].len); /* sy_jw_node(.., 0) writes null */
        } else {
            JW_LIT(w, "{}");
        }
        sy_jw_end(w);
        sy_jw_end(w);
    }
    sy_jw_end(w);
    return 0;
}

static int put_messages(struct sy_jw *w, const struct sy_jdoc *d, uint32_t msgs, struct sy_arena *a, struct sy_xerr *e)
{
    if (sy_jdom_kind(d, msgs) != 'a' || !d->n[msgs].kids)
        return fail(e, 400, "messages must be a non-empty list");
    sy_jw_key(w, "messages");
    sy_jw_arr(w);
    for (uint32_t m = sy_jdom_first(d, msgs); m; m = sy_jdom_next(d, m)) {
        uint32_t role = sy_jdom_at(d, m, "role"), c = sy_jdom_at(d, m, "content");
        if (sy_jdom_kind(d, m) != 'o' || sy_jdom_kind(d, role) != 's')
            return fail(e, 400, "each message needs a role");
        int sys = sy_jdom_str_eq(d, role, "system") || sy_jdom_str_eq(d, role, "developer");
        int asst = sy_jdom_str_eq(d, role, "assistant"), tool = sy_jdom_str_eq(d, role, "tool");
        if (!sys && !asst && !tool && !sy_jdom_str_eq(d, role, "user"))
            return fail(e, 400, "Ollama accepts system, user, assistant and tool messages only");
        sy_jw_obj(w);
        sy_jw_key(w, "role");
        if (sys)
            JW_LIT(w, "\"system\"");
        else
            sy_jw_node(w, d, role);
        sy_jw_key(w, "content");
        int nimg = 0;
        if (sy_jdom_kind(d, c) == 's') {
            sy_jw_node(w, d, c);
        } else if (sy_jdom_kind(d, c) == 'a') {
            struct sy_buf t;
            sy_buf_init(&t, d->src_len + 1);
            for (uint32_t p = sy_jdom_first(d, c); p; p = sy_jdom_next(d, p)) {
                uint32_t tyn = sy_jdom_at(d, p, "type");
                size_t n;
                const char *s = sy_jdom_view(d, sy_jdom_at(d, p, "text"), a, &n);
                if (sy_jdom_str_eq(d, tyn, "text") && s) {
                    sy_buf_append(&t, s, n);
                } else if (sy_jdom_str_eq(d, tyn, "image_url")) {
                    nimg++;
                } else {
                    sy_buf_free(&t);
                    return fail(e, 400, "Ollama accepts text and image_url content parts only");
                }
            }
            sy_jw_str(w, t.p ? t.p : "", t.len);
            sy_buf_free(&t);
        } else if (!c || sy_jdom_kind(d, c) == 'z') {
            sy_jw_str(w, "", 0);
        } else {
            return fail(e, 400, "message content must be a string or a list of content parts");
        }
        uint32_t rc_ = sy_jdom_at(d, m, "reasoning_content");
        if (!rc_)
            rc_ = sy_jdom_at(d, m, "reasoning");
        if (asst && sy_jdom_kind(d, rc_) == 's') {
            sy_jw_key(w, "thinking");
            sy_jw_node(w, d, rc_);
        }
        if (nimg) {
            sy_jw_key(w, "images");
            sy_jw_arr(w);
            for (uint32_t p = sy_jdom_first(d, c); p; p = sy_jdom_next(d, p)) {
                int rc;
                if (sy_jdom_str_eq(d, sy_jdom_at(d, p, "type"), "image_url") && (rc = image(w, d, p, a, e)))
                    return rc;
            }
            sy_jw_end(w);
        }
        uint32_t tc = sy_jdom_at(d, m, "tool_calls");
        if (asst && sy_jdom_kind(d, tc) == 'a' && d->n[tc].kids) {
            int rc = put_tool_calls(w, d, tc, a, e);
            if (rc)
                return rc;
        }
        uint32_t name = tool ? call_name(d, msgs, sy_jdom_at(d, m, "tool_call_id"), a) : 0;
        if (name) {
            sy_jw_key(w, "tool_name");
            sy_jw_node(w, d, name);
        }
        sy_jw_end(w);
    }
    sy_jw_end(w);
    return 0;
}

static int put_tools(struct sy_jw *w, const struct sy_jdoc *d, uint32_t tools, uint32_t fns, struct sy_xerr *e)
{
    uint32_t list = tools ? tools : fns;
    if (sy_jdom_kind(d, list) != 'a')
        return fail(e, 400, tools ? "tools must be a list" : "functions must be a list");
    if (!d->n[list].kids)
        return 0;
    sy_jw_key(w, "tools");
    sy_jw_arr(w);
    for (uint32_t t = sy_jdom_first(d, list); t; t = sy_jdom_next(d, t)) {
        uint32_t fn = tools ? sy_jdom_at(d, t, "function") : t;
        if (sy_jdom_kind(d, fn) != 'o' || sy_jdom_kind(d, sy_jdom_at(d, fn, "name")) != 's')
            return fail(e, 400, "each tool needs function.name");
        if (tools) {
            sy_jw_node(w, d, t);
        } else {
            sy_jw_obj(w);
            sy_jw_key(w, "type");
            JW_LIT(w, "\"function\"");
            sy_jw_key(w, "function");
            sy_jw_node(w, d, fn);
            sy_jw_end(w);
        }
    }
    sy_jw_end(w);
    return 0;
}

static int put_format(struct sy_jw *w, const struct sy_jdoc *d, const struct oreq *q, struct sy_xerr *e)
{
    uint32_t rf = q->at[P_RESPONSE_FORMAT];
    if (rf) {
        uint32_t tyn = sy_jdom_at(d, rf, "type");
        if (sy_jdom_str_eq(d, tyn, "json_object")) {
            sy_jw_key(w, "format");
            JW_LIT(w, "\"json\"");
            return 0;
        }
        if (sy_jdom_str_eq(d, tyn, "json_schema")) {
            uint32_t schema = at(d, rf, "json_schema", "schema");
            if (sy_jdom_kind(d, schema) == 'o') {
                sy_jw_key(w, "format");
                sy_jw_node(w, d, schema);
            }
            return 0;
        }
        if (!sy_jdom_str_eq(d, tyn, "text"))
            return fail(e, 400, "response_format.type must be text, json_object or json_schema");
    }
    if (q->at[P_FORMAT]) {
        sy_jw_key(w, "format");
        sy_jw_node(w, d, q->at[P_FORMAT]);
    }
    return 0;
}

static void put_think(struct sy_jw *w, const struct sy_xctx *x, const struct sy_jdoc *d, const struct oreq *q)
{
    uint32_t re = q->at[P_REASONING_EFFORT];
    if (q->at[P_THINK]) {
        sy_jw_key(w, "think");
        sy_jw_node(w, d, q->at[P_THINK]);
    } else if (re) {
        sy_jw_key(w, "think");
        if (x->model && !strncmp(x->model, "gpt-oss", 7))
            sy_jw_node(w, d, re);
        else
            sy_jw_bool(w, sy_jdom_str_eq(d, re, "low") || sy_jdom_str_eq(d, re, "medium") ||
                              sy_jdom_str_eq(d, re, "high"));
    }
}

static int encode_chat(const struct sy_xctx *x, const struct sy_jdoc *req, struct sy_xout *o)
{
    struct oreq q;
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
    if ((rc = put_messages(&w, req, q.at[P_MESSAGES], x->arena, &o->err)) ||
        (rc = put_options(&w, x, req, &q, &o->err)))
        return rc;
    sy_jw_key(&w, "stream");
    sy_jw_bool(&w, x->stream);
    if ((rc = put_format(&w, req, &q, &o->err)))
        return rc;
    if ((q.at[P_TOOLS] || q.at[P_FUNCTIONS]) && (rc = put_tools(&w, req, q.at[P_TOOLS], q.at[P_FUNCTIONS], &o->err)))
        return rc;
    if (q.at[P_KEEP_ALIVE]) {
        sy_jw_key(&w, "keep_alive");
        sy_jw_node(&w, req, q.at[P_KEEP_ALIVE]);
    }
    put_think(&w, x, req, &q);
    sy_jw_end(&w);
    return w.err ? fail(&o->err, 413, "request too large for the upstream buffer") : 0;
}

static int encode_embed(const struct sy_xctx *x, const struct sy_jdoc *req, struct sy_xout *o)
{
    struct oreq q;
    int rc = scan(x, req, embed_params, sizeof embed_params / sizeof embed_params[0], &q, &o->err);
    if (rc)
        return rc;
    uint32_t in = q.at[P_INPUT];
    int ok = sy_jdom_kind(req, in) == 's' || (sy_jdom_kind(req, in) == 'a' && req->n[in].kids);
    for (uint32_t e = sy_jdom_kind(req, in) == 'a' ? sy_jdom_first(req, in) : 0; e; e = sy_jdom_next(req, e))
        ok &= sy_jdom_kind(req, e) == 's';
    if (!ok)
        return fail(&o->err, 400, "Ollama embeddings take a string or a non-empty list of strings as input");
    if (q.at[P_OPTIONS] && sy_jdom_kind(req, q.at[P_OPTIONS]) != 'o')
        return fail(&o->err, 400, "options must be an object");
    struct sy_jw w;
    sy_jw_init(&w, &o->body);
    sy_jw_obj(&w);
    sy_jw_key(&w, "model");
    sy_jw_cstr(&w, x->model);
    sy_jw_key(&w, "input");
    sy_jw_node(&w, req, in);
    static const struct {
        int slot;
        const char *key;
    } copies[] = {
        {P_DIMENSIONS, "dimensions"}, {P_TRUNCATE, "truncate"}, {P_KEEP_ALIVE, "keep_alive"}, {P_OPTIONS, "options"}};
    for (size_t i = 0; i < sizeof copies / sizeof copies[0]; i++)
        if (q.at[copies[i].slot]) {
            sy_jw_key(&w, copies[i].key);
            sy_jw_node(&w, req, q.at[copies[i].slot]);
        }
    sy_jw_end(&w);
    return w.err ? fail(&o->err, 413, "request too large for the upstream buffer") : 0;
}

static int encode(const struct sy_xctx *x, const struct sy_jdoc *req, struct sy_xout *o)
{
    int rc = x->op == SY_OP_EMBED ? encode_embed(x, req, o) : encode_chat(x, req, o);
    if (rc)
        return rc;
    sy_buf_puts(&o->url, x->pc->base);
    sy_buf_puts(&o->url, x->op == SY_OP_EMBED ? "/api/embed" : "/api/chat");
    SY_BUF_LIT(&o->headers, "Content-Type: application/json\r\n");
    if (x->pc->key) {
        SY_BUF_LIT(&o->headers, "Authorization: Bearer ");
        sy_buf_puts(&o->headers, x->pc->key);
        SY_BUF_LIT(&o->headers, "\r\n");
    }
    return 0;
}

/* ---- decode --------------------------------------------------------------- */

static int bad_body(struct sy_xstate *st, int status, const char *msg, size_t n, const char *cls)
{
    sy_oai_err(&st->err, status, msg, n);
    snprintf(st->err.cls, sizeof st->err.cls, "%s", cls);
    return SY_EUPPROTO;
}

/* "call_" + 16 hex digits: FNV-1a of the response id and the call's index. */
static void call_id(const struct sy_xstate *st, int index, char out[24])
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *p = st->id; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    for (int i = 0; i < 4; i++)
        h = (h ^ (unsigned char)(index >> (8 * i))) * 0x100000001b3ull;
    snprintf(out, 24, "call_%016llx", (unsigned long long)h);
}

static void read_usage(const struct sy_jdoc *d, struct sy_xusage *u)
{
    int64_t p, c;
    if (num(d, sy_jdom_get(d, 0, "prompt_eval_count"), &p) && num(d, sy_jdom_get(d, 0, "eval_count"), &c)) {
        u->prompt = p;
        u->completion = c;
        u->have = 1;
    }
}

/* finish_reason: tool_calls when the answer has calls, else done_reason mapped. */
static const char *finish(const struct sy_jdoc *d, int ntools, struct sy_arena *a)
{
    if (ntools)
        return "tool_calls";
    size_t n;
    const char *r = sy_jdom_view(d, sy_jdom_get(d, 0, "done_reason"), a, &n);
    return r && eq(r, n, "length") ? "length" : "stop";
}

/* Tool call arguments as JSON text (an object's raw text; a string's contents). */
static const char *args_text(const struct sy_jdoc *d, uint32_t args, struct sy_arena *a, size_t *n)
{
    if (sy_jdom_kind(d, args) == 's')
        return sy_jdom_view(d, args, a, n);
    if (args && sy_jdom_kind(d, args) != 'z')
        return sy_jdom_raw(d, args, n);
    *n = 2;
    return "{}";
}

/* LiteLLM's _parse_content_for_reasoning: a leading <think>..</think> (or
 * <thinking>, <budget:thinking>) is reasoning; the rest is content. */
static int split_think(const char *s, size_t n, size_t *ro, size_t *rl, size_t *co)
{
    static const char *const open[] = {"<think>", "<thinking>", "<budget:thinking>"};
    static const char *const close[] = {"</think>", "</thinking>", "</budget:thinking>"};
    for (size_t i = 0; i < 3; i++) {
        size_t ol = strlen(open[i]);
        if (n < ol || memcmp(s, open[i], ol))
            continue;
        for (size_t j = ol; j < n; j++)
            for (size_t k = 0; k < 3; k++) {
                size_t cl = strlen(close[k]);
                if (j + cl <= n && !memcmp(s + j, close[k], cl)) {
                    *ro = ol;
                    *rl = j - ol;
                    *co = j + cl;
                    return 1;
                }
            }
    }
    return 0;
}

static int decode_chat(const struct sy_xctx *x, struct sy_xstate *st, const struct sy_jdoc *d, struct sy_buf *out)
{
    uint32_t msg = sy_jdom_get(d, 0, "message");
    if (sy_jdom_kind(d, msg) != 'o')
        return bad_body(st, 502, "Ollama: response has no message", 31, "");
    struct sy_xmsg m = {0};
    size_t cl = 0, tl = 0;
    const char *c = sy_jdom_view(d, sy_jdom_at(d, msg, "content"), x->arena, &cl);
    const char *t = sy_jdom_view(d, sy_jdom_at(d, msg, "thinking"), x->arena, &tl);
    size_t ro, rl, co;
    if (t) {
        m.reasoning = t;
        m.reasoning_len = tl;
    } else if (c && split_think(c, cl, &ro, &rl, &co)) {
        m.reasoning = c + ro;
        m.reasoning_len = rl;
        c += co;
        cl -= co;
    }
    uint32_t tcs = sy_jdom_at(d, msg, "tool_calls");
    size_t nt = sy_jdom_kind(d, tcs) == 'a' ? d->n[tcs].kids : 0, k = 0;
    struct sy_xtool *tools = nt ? sy_arena_alloc(x->arena, nt * sizeof *tools) : NULL;
    for (uint32_t tc = nt ? sy_jdom_first(d, tcs) : 0; tc; tc = sy_jdom_next(d, tc), k++) {
        uint32_t fn = sy_jdom_at(d, tc, "function");
        char *id = sy_arena_alloc(x->arena, 24);
        size_t il;
        const char *given = sy_jdom_view(d, sy_jdom_at(d, tc, "id"), x->arena, &il);
        call_id(st, (int)k, id);
        tools[k].id = given && il ? given : id;
        tools[k].idl = given && il ? il : strlen(id);
        tools[k].name = sy_jdom_view(d, sy_jdom_at(d, fn, "name"), x->arena, &tools[k].nl);
        tools[k].args = args_text(d, sy_jdom_at(d, fn, "arguments"), x->arena, &tools[k].al);
    }
    if (c && (cl || !k)) {
        m.content = c;
        m.content_len = cl;
    }
    m.tools = tools;
    m.ntools = k;
    m.finish_reason = finish(d, (int)k, x->arena);
    read_usage(d, &st->u);
    sy_oai_write_response(st, &m, out);
    return 0;
}

static int decode_embed(const struct sy_xctx *x, struct sy_xstate *st, const struct sy_jdoc *d, struct sy_buf *out)
{
    uint32_t embs = sy_jdom_get(d, 0, "embeddings");
    if (sy_jdom_kind(d, embs) != 'a')
        return bad_body(st, 502, "Ollama: embeddings response has no embeddings list", 50, "");
    size_t n = d->n[embs].kids, i = 0;
    const char **vec = sy_arena_alloc(x->arena, (n + 1) * sizeof *vec);
    size_t *vl = sy_arena_alloc(x->arena, (n + 1) * sizeof *vl);
    for (uint32_t e = sy_jdom_first(d, embs); e; e = sy_jdom_next(d, e), i++)
        vec[i] = sy_jdom_raw(d, e, &vl[i]);
    int64_t p;
    if (num(d, sy_jdom_get(d, 0, "prompt_eval_count"), &p)) {
        st->u.prompt = p;
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
        return bad_body(st, 502, "Ollama: response is not a JSON object", 37, "");
    size_t el;
    const char *err = sy_jdom_view(&d, sy_jdom_get(&d, 0, "error"), x->arena, &el);
    if (err)
        return bad_body(st, 500, err, el, "APIConnectionError");
    return x->op == SY_OP_EMBED ? decode_embed(x, st, &d, out) : decode_chat(x, st, &d, out);
}

/* Stream state: LiteLLM's <think> tag tracking for models that put their
 * reasoning in content. */
struct opriv {
    int think_open, think_closed;
};
static_assert(sizeof(struct opriv) <= sizeof(((struct sy_xstate *)0)->priv), "ollama stream state fits priv");

/* Remove every occurrence of tag from s[0..*n) in place; 1 when there was one. */
static int cut(char *s, size_t *n, const char *tag)
{
    size_t tl = strlen(tag), w = 0;
    int found = 0;
    for (size_t r = 0; r < *n;) {
        if (r + tl <= *n && !memcmp(s + r, tag, tl)) {
            r += tl;
            found = 1;
        } else {
            s[w++] = s[r++];
        }
    }
    *n = w;
    return found;
}

static void stream_content(struct sy_xstate *st, const char *c, size_t n, struct sy_arena *a, struct sy_buf *out)
{
    struct opriv *p = (struct opriv *)st->priv;
    char *s = sy_arena_alloc(a, n + 1);
    memcpy(s, c, n);
    if (cut(s, &n, "<think>"))
        p->think_open = 1;
    if (p->think_open && cut(s, &n, "</think>"))
        p->think_closed = 1;
    if (p->think_open && !p->think_closed)
        sy_oai_chunk_reasoning(st, out, s, n);
    else
        sy_oai_chunk_text(st, out, s, n);
}

static int line(const struct sy_xctx *x, struct sy_xstate *st, const struct sy_jdoc *d, struct sy_arena *a,
                struct sy_buf *out)
{
    size_t n;
    const char *s = sy_jdom_view(d, sy_jdom_get(d, 0, "error"), a, &n);
    if (s)
        return bad_body(st, 500, s, n, "APIConnectionError");
    sy_oai_chunk_role(st, out);
    uint32_t msg = sy_jdom_get(d, 0, "message");
    if ((s = sy_jdom_view(d, sy_jdom_at(d, msg, "thinking"), a, &n)) && n)
        sy_oai_chunk_reasoning(st, out, s, n);
    if ((s = sy_jdom_view(d, sy_jdom_at(d, msg, "content"), a, &n)) && n)
        stream_content(st, s, n, a, out);
    uint32_t tcs = sy_jdom_at(d, msg, "tool_calls");
    for (uint32_t tc = sy_jdom_kind(d, tcs) == 'a' ? sy_jdom_first(d, tcs) : 0; tc; tc = sy_jdom_next(d, tc)) {
        uint32_t fn = sy_jdom_at(d, tc, "function");
        char id[24];
        size_t il, nl, al;
        const char *given = sy_jdom_view(d, sy_jdom_at(d, tc, "id"), a, &il);
        const char *name = sy_jdom_view(d, sy_jdom_at(d, fn, "name"), a, &nl);
        const char *args = args_text(d, sy_jdom_at(d, fn, "arguments"), a, &al);
        call_id(st, st->ntools, id);
        int oi = given && il ? sy_oai_chunk_tool_start(st, out, given, il, name, nl)
                             : sy_oai_chunk_tool_start(st, out, id, strlen(id), name, nl);
        sy_oai_chunk_tool_args(st, out, oi, args, al);
    }
    int done = 0;
    if (sy_jdom_bool(d, sy_jdom_get(d, 0, "done"), &done) && done) {
        read_usage(d, &st->u);
        sy_oai_chunk_finish(st, out, finish(d, st->ntools, a));
        st->done = 1;
        return SY_DONE;
    }
    (void)x;
    return 0;
}

static int decode_event(const struct sy_xctx *x, struct sy_xstate *st, const char *type, size_t tl, const char *data,
                        size_t dl, struct sy_buf *out)
{
    (void)type, (void)tl;
    struct sy_arena a; /* per line: a long stream must not grow the request's arena */
    sy_arena_init(&a);
    struct sy_jdoc d;
    int rc;
    if (sy_jdom_parse(&d, data, dl, &a, 0) || d.n[0].type != 'o')
        rc = bad_body(st, 500, "Ollama stream: a line is not a JSON object", 42, "APIConnectionError");
    else
        rc = line(x, st, &d, &a, out);
    sy_arena_free(&a);
    return rc;
}

/* ---- errors --------------------------------------------------------------- */

static int has(const char *s, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(s + i, needle, k))
            return 1;
    return 0;
}

static void decode_error(const struct sy_xctx *x, int status, const char *body, size_t n, struct sy_xerr *e)
{
    (void)x;
    while (n && (body[n - 1] == '\n' || body[n - 1] == '\r' || body[n - 1] == ' '))
        n--;
    int st = 500;
    const char *cls = "APIConnectionError";
    if (has(body, n, "no such file or directory") || has(body, n, "Invalid response object from API"))
        st = 400, cls = "";
    else if (has(body, n, "Read timed out"))
        st = 408, cls = "";
    else if (status == 400 || status == 401 || status == 403 || status == 404 || status == 413 || status == 429 ||
             status == 500 || status == 502 || status == 503 || status == 504)
        st = status, cls = ""; /* better than LiteLLM (always 500 APIConnectionError): Ollama's own status
                                  (a 404 "model not found", a 429) reaches the client and the router */
    sy_oai_err(e, st, body, n);
    snprintf(e->cls, sizeof e->cls, "%s", cls);
}

const struct sy_adapter sy_adapter_ollama = {
    .name = "ollama",
    .caps = SY_CAP_STREAM | SY_CAP_TOOLS | SY_CAP_VISION | SY_CAP_EMBED | SY_CAP_REASONING,
    .framing = SY_FRAME_NDJSON,
    .configure = configure,             /* api_base / OLLAMA_API_BASE; OLLAMA_API_KEY optional */
    .encode = encode,                   /* /api/chat or /api/embed */
    .decode_response = decode_response, /* chat response or embeddings */
    .decode_event = decode_event,       /* one NDJSON line */
    .decode_error = decode_error,       /* LiteLLM's ollama exception mapping */
};
