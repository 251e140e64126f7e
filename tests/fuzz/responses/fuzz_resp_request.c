/* fuzz_resp_request.c - libFuzzer harness for the Responses request ->
 * chat request translation (responses/request.c, sy_resp_to_openai).
 *
 * Input layout: an optional first byte '!' (small output caps: the SY_ENOSPC
 * paths; outputs are then not parsed), then the request JSON, optionally
 * followed by "\n#PRIOR\n" and a stored conversation (the prior). Each input
 * is translated
 *   1. without a prior, with and without items;
 *   2. with the given prior, if any;
 *   3. with the request's own "input" member text as the prior (a list of
 *      items, the shape the store gives back).
 * (sy_resp_to_chat, web search on when items are asked for.)
 * Checks: never crashes; returns 0, SY_EINVAL (400) or SY_ENOSPC (413) only;
 * the report of dropped hosted tools is a header-safe comma-separated list;
 * on success out is one valid JSON object (json-c, strict, UTF-8 checked) with
 * "model" and a non-empty "messages" array, and items a valid JSON array of
 * objects each with a string "id" and "type"; on failure nothing is left in
 * out or items and the error has a message and type invalid_request_error.
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "responses/responses.h"

static json_object *parse(const char *p, size_t n)
{
    json_tokener *t = json_tokener_new_ex(1024);
    json_tokener_set_flags(t, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = json_tokener_parse_ex(t, p, (int)n);
    if (json_tokener_get_error(t) != json_tokener_success || json_tokener_get_parse_end(t) != n) {
        fprintf(stderr, "invalid JSON written: %.*s\n", (int)(n > 2000 ? 2000 : n), p);
        abort();
    }
    json_tokener_free(t);
    return o;
}

static void check_chat(const char *p, size_t n)
{
    json_object *o = parse(p, n), *m;
    if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "model", &m) ||
        !json_object_is_type(m, json_type_string) || !json_object_object_get_ex(o, "messages", &m) ||
        !json_object_is_type(m, json_type_array) || json_object_array_length(m) == 0)
        abort();
    json_object_put(o);
}

static void check_items(const char *p, size_t n)
{
    json_object *o = parse(p, n), *v;
    if (!json_object_is_type(o, json_type_array))
        abort();
    for (size_t i = 0; i < json_object_array_length(o); i++) {
        json_object *it = json_object_array_get_idx(o, i);
        if (!json_object_is_type(it, json_type_object) || !json_object_object_get_ex(it, "id", &v) ||
            !json_object_is_type(v, json_type_string) || !json_object_object_get_ex(it, "type", &v) ||
            !json_object_is_type(v, json_type_string))
            abort();
    }
    json_object_put(o);
}

/* The report of dropped tools: NUL-terminated in its array, a comma-separated
 * list of [A-Za-z0-9_.-] names (it becomes a response header's value). */
static void check_dropped(const struct sy_resp_tx *tx)
{
    const char *b = tx->dropped;
    size_t n = strnlen(b, sizeof tx->dropped);
    if (n == sizeof tx->dropped || (n && (b[0] == ',' || b[n - 1] == ',')))
        abort();
    for (size_t i = 0; i < n; i++) {
        char c = b[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              c == '.' || (c == ',' && b[i + 1] != ',')))
            abort();
    }
}

static void one(const struct sy_jdoc *d, const char *prior, size_t pn, int with_items, int tiny, size_t cap,
                struct sy_arena *a)
{
    struct sy_buf out, items;
    sy_buf_init(&out, cap);
    sy_buf_init(&items, cap);
    struct sy_xerr e;
    memset(&e, 0, sizeof e);
    /* with_items also turns web search on: both ways of the hosted tools */
    struct sy_resp_tx tx = {.web_search = with_items};
    int rc =
        sy_resp_to_chat(d, prior, pn, "0123456789abcdef0123456789abcdef", &tx, a, &out, with_items ? &items : NULL, &e);
    check_dropped(&tx);
    if (rc == 0) {
        if (!tiny) {
            check_chat(out.p, out.len);
            if (with_items)
                check_items(items.p, items.len);
        }
    } else {
        if ((rc != SY_EINVAL && rc != SY_ENOSPC) || out.len || items.len || !e.message[0] ||
            (e.status != (rc == SY_EINVAL ? 400 : 413)) || strcmp(e.type, "invalid_request_error"))
            abort();
    }
    sy_buf_free(&out);
    sy_buf_free(&items);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    int tiny = size && p[0] == '!';
    if (tiny)
        p++, size--;
    size_t cap = tiny ? 64 + size % 512 : (size_t)1 << 24;
    const char *prior = NULL;
    size_t pn = 0, rn = size;
    const char *sep = memmem(p, size, "\n#PRIOR\n", 8);
    if (sep) {
        rn = (size_t)(sep - p);
        prior = sep + 8;
        pn = size - rn - 8;
    }
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, p, rn, &a, 0) == 0) {
        one(&d, NULL, 0, 1, tiny, cap, &a);
        one(&d, NULL, 0, 0, tiny, cap, &a);
        if (prior)
            one(&d, prior, pn, 1, tiny, cap, &a);
        if (d.n[0].type == 'o') {
            uint32_t in = sy_jdom_get(&d, 0, "input");
            if (in) {
                size_t l;
                const char *raw = sy_jdom_raw(&d, in, &l);
                one(&d, raw, l, size & 1, tiny, cap, &a);
            }
        }
    }
    sy_arena_free(&a);
    return 0;
}
