/* value.c - the stored form of a cached response, byte-compatible with
 * LiteLLM's.
 *
 * LiteLLM's caching handler stores result.model_dump_json() (the response
 * as a compact JSON *string*), wrapped by Cache._add_cache_logic as
 * {"timestamp": time.time(), "response": <that string>}; RedisCache then
 * writes json.dumps() of that dict. So a stored value is exactly:
 *
 *   {"timestamp": 1718000000.123456, "response": "{\"id\":\"chatcmpl-1\",...}"}
 *    |            |                    |
 *    |            repr(float)          json.dumps of a str: ensure_ascii=True
 *    json.dumps separators ", " ": "   (non-ASCII as \uXXXX, lowercase hex,
 *                                       surrogate pairs above U+FFFF; \" \\
 *                                       \n \r \t \b \f; other C0 and DEL as
 *                                       \u00XX; core/pyrepr.c)
 *
 * The same bytes live in the local LRU and in Redis, so either can serve a
 * value written by the other, or by LiteLLM.
 *
 * Decoding takes a fast path for exactly that shape (no allocation beyond
 * out) and falls back to json-c for other spellings of the same object
 * (other key order or spacing; "response" stored as an object, which
 * LiteLLM's reader also accepts). A value without "timestamp" is refused.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "core/buf.h"
#include "core/hex.h"
#include "core/pyrepr.h"
#include "core/utf8.h"

int sy_cache_value_encode(const char *response, size_t n, double now, struct sy_buf *out)
{
    int rc = SY_BUF_LIT(out, "{\"timestamp\": ");
    rc |= sy_py_float_repr(out, now);
    rc |= SY_BUF_LIT(out, ", \"response\": \"");
    rc |= sy_py_json_escape(out, response, n);
    rc |= SY_BUF_LIT(out, "\"}");
    return rc ? -1 : 0;
}

/* Unescape the JSON string body at s[*i] (after the opening quote) up to its
 * closing quote into out; *i ends past the quote. -1 when malformed. */
static int unescape(const char *s, size_t n, size_t *i, struct sy_buf *out)
{
    size_t p = *i, start = p;
    while (p < n) {
        char c = s[p];
        if (c == '"') {
            if (sy_buf_append(out, s + start, p - start))
                return -1;
            *i = p + 1;
            return 0;
        }
        if ((unsigned char)c < 0x20)
            return -1;
        if (c != '\\') {
            p++;
            continue;
        }
        if (sy_buf_append(out, s + start, p - start) || p + 1 >= n)
            return -1;
        char e = s[p + 1];
        p += 2;
        int rc = 0;
        switch (e) {
        case '"': rc = SY_BUF_LIT(out, "\""); break;
        case '\\': rc = SY_BUF_LIT(out, "\\"); break;
        case '/': rc = SY_BUF_LIT(out, "/"); break;
        case 'n': rc = SY_BUF_LIT(out, "\n"); break;
        case 'r': rc = SY_BUF_LIT(out, "\r"); break;
        case 't': rc = SY_BUF_LIT(out, "\t"); break;
        case 'b': rc = SY_BUF_LIT(out, "\b"); break;
        case 'f': rc = SY_BUF_LIT(out, "\f"); break;
        case 'u': {
            unsigned v, lo;
            if (p + 4 > n || sy_hex4(s + p, &v))
                return -1;
            p += 4;
            unsigned long cp = v;
            if (v >= 0xd800 && v < 0xdc00 && p + 6 <= n && s[p] == '\\' && s[p + 1] == 'u' &&
                !sy_hex4(s + p + 2, &lo) && lo >= 0xdc00 && lo < 0xe000) {
                cp = 0x10000 + (((unsigned long)v - 0xd800) << 10) + (lo - 0xdc00);
                p += 6;
            } else if (v >= 0xd800 && v < 0xe000) {
                cp = 0xfffd; /* a lone surrogate */
            }
            rc = sy_buf_utf8(out, (unsigned)cp);
            break;
        }
        default: return -1;
        }
        if (rc)
            return -1;
        start = p;
    }
    return -1;
}

#define LIT_AT(s, n, i, lit) ((n) - (i) >= sizeof(lit) - 1 && !memcmp((s) + (i), lit, sizeof(lit) - 1))

static int decode_fast(const char *v, size_t n, struct sy_buf *out, double *ts)
{
    size_t i = 0;
    if (!LIT_AT(v, n, i, "{\"timestamp\": "))
        return -1;
    i += sizeof("{\"timestamp\": ") - 1;
    char num[40];
    size_t k = 0;
    while (i < n && k < sizeof num - 1 && strchr("0123456789.eE+-", v[i]) && v[i])
        num[k++] = v[i++];
    num[k] = 0;
    char *end;
    double t = strtod(num, &end);
    if (k == 0 || *end || !isfinite(t))
        return -1;
    if (!LIT_AT(v, n, i, ", \"response\": \""))
        return -1;
    i += sizeof(", \"response\": \"") - 1;
    size_t mark = out->len;
    if (unescape(v, n, &i, out) < 0 || i + 1 != n || v[i] != '}') {
        out->len = mark;
        if (out->p)
            out->p[mark] = 0;
        return -1;
    }
    *ts = t;
    return 0;
}

static int decode_slow(const char *v, size_t n, struct sy_buf *out, double *ts)
{
    if (n > INT32_MAX)
        return -1;
    struct json_tokener *tok = json_tokener_new();
    if (!tok)
        return -1;
    struct json_object *o = json_tokener_parse_ex(tok, v, (int)n);
    json_tokener_free(tok);
    int rc = -1;
    struct json_object *t, *r;
    if (o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, "timestamp", &t) &&
        json_object_object_get_ex(o, "response", &r) &&
        (json_object_is_type(t, json_type_int) || json_object_is_type(t, json_type_double))) {
        if (json_object_is_type(r, json_type_string)) {
            rc = sy_buf_append(out, json_object_get_string(r), (size_t)json_object_get_string_len(r)) ? -1 : 0;
        } else if (json_object_is_type(r, json_type_object)) {
            size_t len;
            const char *s =
                json_object_to_json_string_length(r, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
            rc = s && !sy_buf_append(out, s, len) ? 0 : -1;
        }
        if (rc == 0)
            *ts = json_object_get_double(t);
    }
    json_object_put(o);
    return rc;
}

int sy_cache_value_decode(const char *v, size_t n, struct sy_buf *out, double *timestamp)
{
    double ts = 0;
    if (!v)
        return -1;
    if (decode_fast(v, n, out, &ts) == 0 || decode_slow(v, n, out, &ts) == 0) {
        if (timestamp)
            *timestamp = ts;
        return 0;
    }
    return -1;
}
