/* fuzz_jscan.c - libFuzzer harness for the request-body scan (gateway/jscan.c):
 * never crashes, and its verdict agrees with json-c's strict parser on
 * which inputs are valid JSON. Spans it reports stay inside the input. On
 * every object both accept, its reading of the keys of interest agrees with
 * json-c's: the same duplicate verdict (counted by walking the top-level
 * members with json-c, which decodes each key) and the same last `model`
 * and `stream` values (json-c keeps the last duplicate). */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/jscan.h"

/* Every top-level key the scan records (gateway/jscan.c kname[]: the request's
 * own members and LiteLLM's router keys): a duplicate of any is refused. The
 * first two are the ones whose last value's type is checked. */
static const char *const keys[] = {"model",
                                   "stream",
                                   "stream_options",
                                   "messages",
                                   "input",
                                   "prompt",
                                   "user",
                                   "n",
                                   "store",
                                   "previous_response_id",
                                   "fallbacks",
                                   "disable_fallbacks",
                                   "num_retries",
                                   "timeout",
                                   "stream_timeout",
                                   "context_window_fallbacks",
                                   "content_policy_fallbacks",
                                   "mock_testing_fallbacks",
                                   "cache",
                                   "mock_timeout",
                                   "mock_testing_rate_limit_error",
                                   "tags",
                                   "guardrails"};
#define NKEYS (sizeof keys / sizeof keys[0])

/* One value at p[i..n) read by json-c; 1 on success, *end = first byte after it. */
static int one(const char *p, size_t i, size_t n, json_object **o, size_t *end)
{
    json_tokener *t = json_tokener_new_ex(SY_JSCAN_MAX_DEPTH + 2);
    *o = json_tokener_parse_ex(t, p + i, (int)(n - i));
    int ok = json_tokener_get_error(t) == json_tokener_success;
    *end = i + json_tokener_get_parse_end(t);
    json_tokener_free(t);
    return ok;
}

static size_t skipws(const char *p, size_t i, size_t n)
{
    while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' || p[i] == '\t'))
        i++;
    return i;
}

static char letter(json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null: return 'z';
    case json_type_boolean: return json_object_get_boolean(v) ? 't' : 'f';
    case json_type_string: return 's';
    case json_type_object: return 'o';
    case json_type_array: return 'a';
    default: return 'n';
    }
}

/* A \\uD800-\\uDFFF escape in the JSON string text p[0..n). */
static int has_surrogate(const char *p, size_t n)
{
    for (size_t i = 0; i + 3 < n; i++)
        if (p[i] == '\\' && p[i + 1] == 'u' && (p[i + 2] == 'd' || p[i + 2] == 'D') &&
            strchr("89abcdefABCDEF", p[i + 3]) && p[i + 3])
            return 1;
    return 0;
}

/* Walk the top-level object p[0..n) (valid JSON) member by member with json-c:
 * count each key of interest and check the scan's verdict against it. */
static void check_keys(const char *p, size_t n, const struct sy_jscan *s)
{
    int count[NKEYS] = {0};
    char last[NKEYS] = {0};
    int dup = 0;
    json_object *model = NULL; /* the last "model" value */
    size_t i = skipws(p, 0, n) + 1;
    for (;;) {
        i = skipws(p, i, n);
        if (i >= n || p[i] != '"')
            break;
        json_object *k, *v;
        size_t e;
        if (!one(p, i, n, &k, &e))
            abort();
        i = skipws(p, e, n) + 1; /* ':' */
        i = skipws(p, i, n);
        if (!one(p, i, n, &v, &e))
            abort();
        i = skipws(p, e, n);
        const char *ks = json_object_get_string(k);
        size_t kl = (size_t)json_object_get_string_len(k);
        for (size_t j = 0; j < NKEYS; j++)
            if (kl == strlen(keys[j]) && memcmp(ks, keys[j], kl) == 0) {
                dup |= ++count[j] > 1;
                last[j] = letter(v);
                if (j == 0) {
                    json_object_put(model);
                    model = json_object_get(v);
                }
            }
        json_object_put(k);
        json_object_put(v);
        if (i < n && p[i] == ',')
            i++;
    }
    /* include_usage duplicates are checked by the scan only inside stream_options */
    if (dup != (s->dup != NULL && strcmp(s->dup, "stream_options.include_usage") != 0) && !(dup && s->dup))
        abort();
    if (last[0] != s->model.type || last[1] != s->stream.type)
        abort();
    /* the model value decodes as json-c reads it, but for a surrogate pair: json-c
     * 0.16 turns some valid pairs (\\ud837\\ude00, U+1DE00) into U+FFFD, where
     * sy_jstr_decode writes the code point as RFC 8259 says */
    if (last[0] == 's' && !has_surrogate(p + s->model.off, s->model.len)) {
        char out[4096];
        long dl = sy_jstr_decode(p + s->model.off, s->model.len, out, sizeof out);
        if (dl >= 0 && ((size_t)dl != (size_t)json_object_get_string_len(model) ||
                        memcmp(out, json_object_get_string(model), (size_t)dl) != 0))
            abort();
    }
    json_object_put(model);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sy_jscan s;
    const char *p = (const char *)data;
    int rc = sy_jscan(p, size, &s);
    if (rc == 0) {
        struct sy_jspan *sp[] = {&s.model, &s.stream, &s.stream_options, &s.input, &s.messages, &s.prompt};
        for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++)
            if (sp[i]->type && sp[i]->off + sp[i]->len > size)
                abort();
        if (s.model.type == 's') {
            char out[512];
            sy_jstr_decode(p + s.model.off, s.model.len, out, sizeof out);
        }
        if (s.stream_options.type == 'o')
            sy_jscan_member(p, s.stream_options, "include_usage");
        /* json-c (strict) must accept what we accept, unless it hits its own depth limit */
        json_tokener *tok = json_tokener_new_ex(SY_JSCAN_MAX_DEPTH + 2);
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        json_object *o = json_tokener_parse_ex(tok, p, (int)size);
        enum json_tokener_error e = json_tokener_get_error(tok);
        if (!o && e != json_tokener_success && e != json_tokener_continue && e != json_tokener_error_depth &&
            memchr(p, 0, size) == NULL)
            abort();
        if (o && json_object_is_type(o, json_type_object) && s.top_is_object)
            check_keys(p, size, &s);
        if (o)
            json_object_put(o);
        json_tokener_free(tok);
    }
    return 0;
}
