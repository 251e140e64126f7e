/* key.c - the response cache key: LiteLLM's Cache.get_cache_key.
 *
 * LiteLLM (litellm/caching/caching.py) builds the key from the kwargs that
 * reach litellm.acompletion() & co.:
 *
 *   text = ""
 *   for name in kwargs (dict order):
 *       if name in ModelParamHelper._get_all_llm_api_params() and value is not None:
 *           text += f"{name}: {str(value)}"          # model -> the model group
 *   key = sha256(text.encode()).hexdigest()
 *   key = f"{namespace}:{key}" if namespace else key
 *
 * switchyard's cache_params.switchyard_scope (team | key) appends
 * "\nswitchyard_scope: <team:id | key:hash>" to the hashed text: the tenant is
 * inside the hash, so no namespace a client picks can reach another tenant's
 * entries (such keys differ from LiteLLM's by design; global adds nothing).
 *
 * Order. The proxy calls router.acompletion(**body); the router then calls
 * litellm.acompletion(**{**deployment_litellm_params, "messages": messages,
 * ..., **rest_of_body}), so the kwargs start with "model" (the deployment's
 * litellm_params begin with it), then "messages" ("prompt" for
 * atext_completion, "input" for aembedding), then the other body members in
 * body order. We emit the same: model (the model group) first, then the first
 * of messages / prompt / input present, then the remaining listed members in
 * body order. (Params set in a deployment's litellm_params, e.g. a default
 * temperature, would also land in LiteLLM's key; the gateway does not pass
 * them here.)
 *
 * Which members count (decided from LiteLLM's proxy behaviour):
 *   - in the key: every name in the table below, including "stream",
 *     "stream_options" and "user" (they are OpenAI params, so a streamed and a
 *     non-streamed request have different keys, as in LiteLLM);
 *   - not in the key: "metadata" (excluded by ModelParamHelper), "cache",
 *     "caching", router keys (fallbacks, num_retries, mock_*, ...) and any
 *     provider-specific param (LiteLLM adds those only with
 *     enable_caching_on_provider_specific_optional_params, off by default);
 *   - a member whose value is JSON null is skipped (LiteLLM: `is not None`).
 *
 * str(value) is Python's str() of json.loads(value): a string as is, an int
 * in decimal, a float by repr ("1.0", "1e-05"), True/False, lists and dicts
 * as Python repr ("[{'role': 'user', 'content': 'hi'}]"). Non-printable
 * characters inside repr'd strings are escaped as CPython does (\n, \x07,
 * \xa0, \u2028, ...), by core/pyrepr.c with CPython's own isprintable table.
 */
#include <json-c/json.h>
#include <openssl/sha.h>
#include <string.h>

#include "cache/cache.h"
#include "core/buf.h"
#include "core/hex.h"
#include "core/pyrepr.h"

/* ModelParamHelper._get_all_llm_api_params() for litellm's pinned openai
 * 2.8.1: the keys of openai.types.chat.CompletionCreateParams{Non,}Streaming,
 * openai.types.CompletionCreateParams{Non,}Streaming, EmbeddingCreateParams,
 * audio.TranscriptionCreateParams{Non,}Streaming, litellm's RerankRequest
 * fields and "thinking", minus "metadata". Sorted (bsearch). */
static const char *const llm_params[] = {
    "audio",
    "best_of",
    "chunking_strategy",
    "dimensions",
    "documents",
    "echo",
    "encoding_format",
    "file",
    "frequency_penalty",
    "function_call",
    "functions",
    "include",
    "input",
    "known_speaker_names",
    "known_speaker_references",
    "language",
    "logit_bias",
    "logprobs",
    "max_chunks_per_doc",
    "max_completion_tokens",
    "max_tokens",
    "max_tokens_per_doc",
    "messages",
    "modalities",
    "model",
    "n",
    "parallel_tool_calls",
    "prediction",
    "presence_penalty",
    "prompt",
    "prompt_cache_key",
    "prompt_cache_retention",
    "query",
    "rank_fields",
    "reasoning_effort",
    "response_format",
    "return_documents",
    "safety_identifier",
    "seed",
    "service_tier",
    "stop",
    "store",
    "stream",
    "stream_options",
    "suffix",
    "temperature",
    "thinking",
    "timestamp_granularities",
    "tool_choice",
    "tools",
    "top_logprobs",
    "top_n",
    "top_p",
    "user",
    "verbosity",
    "web_search_options",
};

static int cmp_name(const void *a, const void *b)
{
    return strcmp((const char *)a, *(const char *const *)b);
}

static int is_llm_param(const char *name)
{
    return bsearch(name, llm_params, sizeof llm_params / sizeof llm_params[0], sizeof llm_params[0], cmp_name) != NULL;
}

static int py_value(struct sy_buf *b, struct json_object *v, int top, int depth)
{
    if (depth > 200) /* CPython would overflow its recursion limit long before */
        return -1;
    switch (json_object_get_type(v)) {
    case json_type_null: return SY_BUF_LIT(b, "None");
    case json_type_boolean: return json_object_get_boolean(v) ? SY_BUF_LIT(b, "True") : SY_BUF_LIT(b, "False");
    case json_type_int: {
        int64_t i = json_object_get_int64(v);
        if (i == INT64_MAX) /* may be a clamped uint64 */
            return sy_buf_printf(b, "%llu", (unsigned long long)json_object_get_uint64(v));
        return sy_buf_printf(b, "%lld", (long long)i);
    }
    case json_type_double: return sy_py_float_repr(b, json_object_get_double(v));
    case json_type_string: {
        const char *s = json_object_get_string(v);
        size_t n = (size_t)json_object_get_string_len(v);
        return top ? sy_buf_append(b, s, n) : sy_py_str_repr(b, s, n);
    }
    case json_type_array: {
        int rc = SY_BUF_LIT(b, "[");
        size_t len = json_object_array_length(v);
        for (size_t k = 0; k < len && rc == 0; k++) {
            if (k)
                rc |= SY_BUF_LIT(b, ", ");
            rc |= py_value(b, json_object_array_get_idx(v, k), 0, depth + 1);
        }
        return rc | SY_BUF_LIT(b, "]");
    }
    case json_type_object: {
        int rc = SY_BUF_LIT(b, "{"), first = 1;
        json_object_object_foreach(v, k, mv)
        {
            if (rc)
                break;
            if (!first)
                rc |= SY_BUF_LIT(b, ", ");
            first = 0;
            rc |= sy_py_str_repr(b, k, strlen(k));
            rc |= SY_BUF_LIT(b, ": ");
            rc |= py_value(b, mv, 0, depth + 1);
        }
        return rc | SY_BUF_LIT(b, "}");
    }
    }
    return -1;
}

static int add_member(struct sy_buf *b, const char *name, struct json_object *v)
{
    if (!v || json_object_get_type(v) == json_type_null)
        return 0;
    int rc = sy_buf_puts(b, name);
    rc |= SY_BUF_LIT(b, ": ");
    return rc | py_value(b, v, 1, 0);
}

int sy_cache_key(const char *body, size_t n, const char *model_group, const char *ns, char out[SY_CACHE_KEY_MAX])
{
    return sy_cache_key_scoped(body, n, model_group, ns, NULL, out);
}

int sy_cache_key_scoped(const char *body, size_t n, const char *model_group, const char *ns, const char *scope,
                        char out[SY_CACHE_KEY_MAX])
{
    size_t nslen = ns ? strlen(ns) : 0;
    if (nslen > 300 || !body || n > INT32_MAX)
        return -1;
    struct json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
    if (!tok)
        return -1;
    struct json_object *root = json_tokener_parse_ex(tok, body, (int)n);
    json_tokener_free(tok);
    if (!root || !json_object_is_type(root, json_type_object)) {
        json_object_put(root);
        return -1;
    }
    struct sy_buf b;
    sy_buf_init(&b, (size_t)1 << 30);
    int rc = 0;

    /* 1. model: the model group (LiteLLM's _get_model_param_value) */
    struct json_object *mv = NULL;
    json_object_object_get_ex(root, "model", &mv);
    if (model_group && *model_group) {
        rc |= SY_BUF_LIT(&b, "model: ");
        rc |= sy_buf_puts(&b, model_group);
    } else {
        rc |= add_member(&b, "model", mv);
    }
    /* 2. the prompt member the router passes positionally */
    static const char *const prompt_names[] = {"messages", "prompt", "input"};
    const char *first = NULL;
    for (size_t k = 0; k < 3 && !first; k++) {
        struct json_object *pv;
        if (json_object_object_get_ex(root, prompt_names[k], &pv)) {
            first = prompt_names[k];
            rc |= add_member(&b, first, pv);
        }
    }
    /* 3. the rest in body order */
    json_object_object_foreach(root, name, v)
    {
        if (rc)
            break;
        if (!strcmp(name, "model") || (first && !strcmp(name, first)) || !is_llm_param(name))
            continue;
        rc |= add_member(&b, name, v);
    }
    json_object_put(root);
    if (!rc && scope && *scope) { /* after every param: no body member can spell it */
        rc |= SY_BUF_LIT(&b, "\nswitchyard_scope: ");
        rc |= sy_buf_puts(&b, scope);
    }
    if (rc) {
        sy_buf_free(&b);
        return -1;
    }
    unsigned char md[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)(b.p ? b.p : ""), b.len, md);
    sy_buf_free(&b);
    size_t o = 0;
    if (nslen) {
        memcpy(out, ns, nslen);
        out[nslen] = ':';
        o = nslen + 1;
    }
    sy_hex_encode(out + o, md, SHA256_DIGEST_LENGTH);
    return 0;
}
