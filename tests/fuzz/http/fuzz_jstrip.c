/* fuzz_jstrip.c - libFuzzer harness for the router keys of the request body
 * (gateway/jscan.c: sy_jscan_strip, sy_jscan_list_next): on every body the
 * scan accepts as an object without duplicate keys, stripping the router keys
 * (fallbacks, num_retries, timeout, ...) leaves valid JSON (json-c strict)
 * that is the same object minus exactly those keys, member for member,
 * whose own scan finds no router key and the model span where the strip
 * moved it; and walking a `fallbacks` array never
 * leaves its span and yields decodable names. */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/jscan.h"

static const char *const rkeys[] = {"fallbacks",
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

static int is_rkey(const char *k)
{
    for (size_t i = 0; i < sizeof rkeys / sizeof *rkeys; i++)
        if (strcmp(k, rkeys[i]) == 0)
            return 1;
    return 0;
}

static json_object *parse_strict(const char *p, size_t n)
{
    json_tokener *t = json_tokener_new_ex(SY_JSCAN_MAX_DEPTH + 2);
    json_tokener_set_flags(t, JSON_TOKENER_STRICT);
    json_object *o = json_tokener_parse_ex(t, p, (int)n);
    int ok = json_tokener_get_error(t) == json_tokener_success && (size_t)json_tokener_get_parse_end(t) <= n;
    json_tokener_free(t);
    if (!ok) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    struct sy_jscan s;
    if (sy_jscan(p, size, &s) != 0 || !s.top_is_object || s.dup)
        return 0;
    if (s.rk[SY_JR_FALLBACKS].type == 'a') {
        size_t pos = 0;
        struct sy_jspan it;
        int rc, guard = 0;
        while ((rc = sy_jscan_list_next(p, s.rk[SY_JR_FALLBACKS], &pos, &it)) == 1 && guard++ < 100000) {
            if (it.off < s.rk[SY_JR_FALLBACKS].off ||
                it.off + it.len > s.rk[SY_JR_FALLBACKS].off + s.rk[SY_JR_FALLBACKS].len)
                abort();
            char *name = malloc(it.len + 8);
            sy_jstr_decode(p + it.off, it.len, name, it.len + 8);
            free(name);
        }
    }
    char *out = malloc(size + 1);
    struct sy_jspan model = s.model;
    size_t n = sy_jscan_strip(p, size, &s, out, &model);
    if (n > size)
        abort();
    out[n] = 0;
    struct sy_jscan s2;
    if (sy_jscan(out, n, &s2) != 0 || !s2.top_is_object || s2.rk_mask)
        abort(); /* stripping must leave a valid object without router keys */
    if (model.type != s2.model.type || (model.type && (model.off != s2.model.off || model.len != s2.model.len ||
                                                       memcmp(out + model.off, p + s.model.off, model.len) != 0)))
        abort(); /* the moved model span is where a fresh scan finds it, with the same bytes */
    /* json-c keeps keys as C strings: a key with \u0000 in it is cut there (and could read
     * as a router key that no JSON reader sees), so such bodies skip the comparison */
    int nul_key = memmem(p, size, "\\u0000", 6) != NULL;
    json_object *a = nul_key ? NULL : parse_strict(p, size), *b = nul_key ? NULL : parse_strict(out, n);
    if (a && b) {
        int na = 0, nb = 0;
        json_object_object_foreach(a, ka, va)
        {
            if (is_rkey(ka))
                continue;
            na++;
            json_object *vb;
            if (!json_object_object_get_ex(b, ka, &vb) || !json_object_equal(va, vb))
                abort();
        }
        json_object_object_foreach(b, kb, vb2)
        {
            (void)vb2;
            if (is_rkey(kb))
                abort();
            nb++;
        }
        if (na != nb)
            abort();
    } else if (a && !b) {
        abort();
    }
    json_object_put(a);
    json_object_put(b);
    free(out);
    return 0;
}
