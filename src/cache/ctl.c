/* ctl.c - per-request cache controls: the body's "cache" object (LiteLLM's
 * DynamicCacheControl) and the Cache-Control request header.
 *
 * Body "cache" object, read as LiteLLM's proxy path reads it
 * (caching_handler.py, Cache.async_get_cache / _add_cache_logic):
 *
 *   key          type     effect                       LiteLLM test
 *   no-cache     bool     skip the lookup               value is True
 *   no-store     bool     do not write                  value is True
 *   use-cache    bool     opt in under mode default_off value is True
 *   ttl          number   TTL of the entry written      passed to the store
 *   s-max-age    number   only entries younger          async path: s-max-age,
 *   s-maxage     number     (0 = always miss)             else s-maxage
 *   namespace    string   key prefix "<ns>:<hash>"      truthy
 *
 * A flag that is not exactly true is ignored (LiteLLM's `is True`), as are
 * unknown keys and null values. A ttl, s-maxage or namespace of the wrong
 * type is an error (LiteLLM would fail on it later). A ttl <= 0 makes
 * LiteLLM's write fail (Redis refuses EX 0) or expire at once, so it is read
 * as no-store. "cache": null is absent; any other non-object is an error.
 *
 * Cache-Control header (RFC 9111 request directives, case-insensitive,
 * comma-separated, values optionally quoted): no-cache, no-store,
 * max-age=N and s-maxage=N (both set s_maxage; the smaller wins). The body
 * wins where both set a value; flags are OR'ed. Malformed header directives
 * are ignored (an HTTP cache ignores what it does not understand).
 */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cache/cache.h"

static int fail(char *err, size_t cap, const char *msg)
{
    if (err && cap)
        snprintf(err, cap, "%s", msg);
    return -1;
}

static int is_true(struct json_object *o, const char *k)
{
    struct json_object *v;
    return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_boolean) &&
           json_object_get_boolean(v);
}

/* A number member: 1 and *d set, 0 when absent or null, -1 wrong type. */
static int number(struct json_object *o, const char *k, double *d)
{
    struct json_object *v;
    if (!json_object_object_get_ex(o, k, &v) || !v)
        return 0;
    if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
        return -1;
    *d = json_object_get_double(v);
    if (isnan(*d))
        return -1;
    return 1;
}

static int parse_body(const char *obj, size_t len, struct sy_cache_ctl *c, char *err, size_t errcap)
{
    if (len > INT32_MAX)
        return fail(err, errcap, "Invalid 'cache': too large");
    while (len && (obj[0] == ' ' || obj[0] == '\t' || obj[0] == '\r' || obj[0] == '\n'))
        obj++, len--;
    while (len && (obj[len - 1] == ' ' || obj[len - 1] == '\t' || obj[len - 1] == '\r' || obj[len - 1] == '\n'))
        len--;
    if (len == 0 || (len == 4 && !memcmp(obj, "null", 4)))
        return 0;
    struct json_tokener *tok = json_tokener_new();
    if (!tok)
        return fail(err, errcap, "Out of memory");
    struct json_object *o = json_tokener_parse_ex(tok, obj, (int)len);
    enum json_tokener_error je = json_tokener_get_error(tok);
    json_tokener_free(tok);
    if (!o || je != json_tokener_success) {
        json_object_put(o);
        return fail(err, errcap, "Invalid 'cache': not valid JSON");
    }
    if (!json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        return fail(err, errcap, "Invalid 'cache': must be an object");
    }
    int rc = 0;
    c->no_cache = is_true(o, "no-cache");
    c->no_store = is_true(o, "no-store");
    c->use_cache = is_true(o, "use-cache");
    double d;
    int r = number(o, "ttl", &d);
    if (r < 0) {
        rc = fail(err, errcap, "Invalid 'cache.ttl': must be a number");
        goto out;
    }
    if (r > 0) {
        if (d > 0)
            c->ttl = d;
        else
            c->no_store = 1;
    }
    r = number(o, "s-max-age", &d);
    if (r == 0)
        r = number(o, "s-maxage", &d);
    if (r < 0) {
        rc = fail(err, errcap, "Invalid 'cache.s-maxage': must be a number");
        goto out;
    }
    if (r > 0)
        c->s_maxage = d < 0 ? 0 : d;
    struct json_object *ns;
    if (json_object_object_get_ex(o, "namespace", &ns) && ns) {
        if (!json_object_is_type(ns, json_type_string)) {
            rc = fail(err, errcap, "Invalid 'cache.namespace': must be a string");
            goto out;
        }
        size_t nl = (size_t)json_object_get_string_len(ns);
        if (nl >= 301 || nl >= sizeof c->ns) {
            rc = fail(err, errcap, "Invalid 'cache.namespace': longer than 300 characters");
            goto out;
        }
        memcpy(c->ns, json_object_get_string(ns), nl);
        c->ns[nl] = 0;
    }
out:
    json_object_put(o);
    return rc;
}

/* Cache-Control: directives separated by commas; name[=value]. */
static void parse_header(const char *s, size_t n, struct sy_cache_ctl *c, double *hdr_age)
{
    size_t i = 0;
    while (i < n) {
        while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == ','))
            i++;
        size_t ns = i;
        while (i < n && s[i] != '=' && s[i] != ',' && s[i] != ' ' && s[i] != '\t')
            i++;
        size_t nl = i - ns;
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        const char *val = NULL;
        size_t vl = 0;
        if (i < n && s[i] == '=') {
            i++;
            while (i < n && (s[i] == ' ' || s[i] == '\t'))
                i++;
            int quoted = i < n && s[i] == '"';
            if (quoted)
                i++;
            val = s + i;
            while (i < n && (quoted ? s[i] != '"' : (s[i] != ',' && s[i] != ' ' && s[i] != '\t')))
                i++;
            vl = (size_t)(s + i - val);
            if (quoted && i < n)
                i++;
        }
        while (i < n && s[i] != ',') /* skip anything else up to the next directive */
            i++;
#define IS(lit) (nl == sizeof(lit) - 1 && !strncasecmp(s + ns, lit, nl))
        if (IS("no-cache"))
            c->no_cache = 1;
        else if (IS("no-store"))
            c->no_store = 1;
        else if ((IS("max-age") || IS("s-maxage")) && val && vl > 0 && vl <= 12) {
            double d = 0;
            size_t k;
            for (k = 0; k < vl && val[k] >= '0' && val[k] <= '9'; k++)
                d = d * 10 + (val[k] - '0');
            if (k == vl && (*hdr_age < 0 || d < *hdr_age))
                *hdr_age = d;
        }
#undef IS
    }
}

int sy_cache_ctl_parse(const char *obj, size_t len, const char *cc, size_t cclen, struct sy_cache_ctl *c, char *err,
                       size_t errcap)
{
    memset(c, 0, sizeof *c);
    c->ttl = -1;
    c->s_maxage = -1;
    if (err && errcap)
        err[0] = 0;
    if (obj && len && parse_body(obj, len, c, err, errcap) < 0)
        return -1;
    if (cc && cclen) {
        double age = -1;
        parse_header(cc, cclen, c, &age);
        if (c->s_maxage < 0)
            c->s_maxage = age;
    }
    return 0;
}
