/* fuzz_validate.c - libFuzzer harness for the management API's input gate
 * (admin/validate.c, sy_admin_check).
 *
 * Input: the first byte picks the route (and whether the rest is the body or
 * the query string), the rest is that body or query. Properties checked:
 *   - a refusal is 400 or 422 and its body is valid UTF-8 and JSON;
 *   - an accepted body is valid UTF-8 without a NUL byte, json-c parses all
 *     of it, and no string or key in the tree holds a NUL (what json-c would
 *     otherwise hand to the store truncated);
 *   - nothing crashes, leaks or recurses without bound.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "admin/validate.h"
#include "core/buf.h"

static const char *const PATHS[] = {"/key/generate",    "/key/regenerate", "/key/sk-x/regenerate", "/user/new",
                                    "/team/member_add", "/budget/new",     "/user/info",           "/key/list"};

static int no_nul(struct json_object *o)
{
    switch (json_object_get_type(o)) {
    case json_type_string: return strlen(json_object_get_string(o)) == (size_t)json_object_get_string_len(o);
    case json_type_object: {
        json_object_object_foreach(o, k, v)
        {
            (void)k;
            if (v && !no_nul(v))
                return 0;
        }
        return 1;
    }
    case json_type_array:
        for (size_t i = 0; i < json_object_array_length(o); i++) {
            struct json_object *e = json_object_array_get_idx(o, i);
            if (e && !no_nul(e))
                return 0;
        }
        return 1;
    default: return 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *path = PATHS[data[0] % (sizeof PATHS / sizeof PATHS[0])];
    int as_query = data[0] & 0x80;
    char *rest = malloc(size); /* NUL-terminated, as the gateway hands it over */
    if (!rest)
        return 0;
    memcpy(rest, data + 1, size - 1);
    rest[size - 1] = 0;
    size_t n = size - 1;
    struct sy_admin_req rq = {
        .path = path, .path_len = strlen(path), .master_key = "sk-master-1234", .master_key_len = 14, .now = 1.8e9};
    if (as_query) {
        rq.query = rest;
        rq.query_len = strnlen(rest, n); /* query strings are C strings */
    } else {
        rq.body = rest;
        rq.body_len = n;
    }
    struct sy_buf out;
    sy_buf_init(&out, 1 << 24);
    int status = 0;
    int rc = sy_admin_check(&rq, &status, &out);
    if (rc < 0) {
        struct json_object *j = out.p ? json_tokener_parse(out.p) : NULL;
        if ((status != 400 && status != 422) || !j || sy_utf8_check(out.p, out.len) != out.len) {
            fprintf(stderr, "bad refusal %d: %s\n", status, out.p ? out.p : "(none)");
            abort();
        }
        json_object_put(j);
    } else if (rc != 0 || status != 0) {
        abort();
    } else if (!as_query && n) {
        if (sy_utf8_check(rest, n) != n || memchr(rest, 0, n))
            abort();
        size_t i = 0;
        while (i < n && strchr(" \t\r\n", rest[i]))
            i++;
        if (i < n) {
            struct json_tokener *tok = json_tokener_new_ex(SY_ADMIN_MAX_DEPTH + 2);
            /* n + 1: the terminating NUL ends a bare number ("9"), which json-c otherwise waits on */
            struct json_object *o = tok ? json_tokener_parse_ex(tok, rest, (int)n + 1) : NULL;
            /* a bare null parses to NULL with success */
            if (tok && (json_tokener_get_error(tok) != json_tokener_success || (o && !no_nul(o)))) {
                fprintf(stderr, "accepted but json-c disagrees: %.*s\n", (int)(n > 200 ? 200 : n), rest);
                abort();
            }
            json_object_put(o);
            if (tok)
                json_tokener_free(tok);
        }
    }
    sy_buf_free(&out);
    free(rest);
    return 0;
}
