/* svc_a.c - helpers of the service kinds generic_guardrail_api,
 * openai_moderation, presidio and lakera_v2 (svc_a.h). */
#include "guardrails/services/svc_a.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "logging/sinks/pystr.h"

const char *sy_sva_str(struct json_object *p, const char *key)
{
    struct json_object *v;
    if (!p || !json_object_object_get_ex(p, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    const char *s = json_object_get_string(v);
    return s && *s ? s : NULL;
}

int sy_sva_bool(struct json_object *p, const char *key, int dflt)
{
    struct json_object *v;
    if (!p || !json_object_object_get_ex(p, key, &v) || !v)
        return dflt;
    switch (json_object_get_type(v)) {
    case json_type_boolean: return json_object_get_boolean(v);
    case json_type_int: return json_object_get_int64(v) != 0;
    case json_type_double: return json_object_get_double(v) != 0;
    case json_type_string: {
        const char *s = json_object_get_string(v);
        if (!strcasecmp(s, "true"))
            return 1;
        if (!strcasecmp(s, "false"))
            return 0;
        return dflt;
    }
    default: return dflt;
    }
}

char *sy_sva_obj_json(struct json_object *p, const char *key, int *bad)
{
    struct json_object *v;
    if (!p || !json_object_object_get_ex(p, key, &v) || !v)
        return NULL;
    if (!json_object_is_type(v, json_type_object)) {
        *bad = 1;
        return NULL;
    }
    const char *s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    char *c = s ? strdup(s) : NULL;
    if (!c)
        *bad = 1;
    return c;
}

int sy_sva_line_safe(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return 0;
    return 1;
}

char *sy_sva_base(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s);
    while (n && s[n - 1] == '/')
        n--;
    return strndup(s, n);
}

int sy_sva_post(struct sy_ghttp *req, const char *url)
{
    req->method = "POST";
    sy_buf_init(&req->headers, SY_SVA_HDR_MAX);
    sy_buf_init(&req->body, SY_SVA_BODY_MAX);
    req->url = strdup(url);
    return req->url ? 0 : -1;
}

int sy_sva_header(struct sy_ghttp *req, const char *name, const char *value)
{
    return sy_buf_printf(&req->headers, "%s: %s\r\n", name, value) < 0 ? -1 : 0;
}

int sy_sva_parse(struct sy_jdoc *d, const char *body, size_t n, struct sy_arena *a)
{
    if (!body || !n)
        return -1;
    return sy_jdom_parse(d, body, n, a, SY_SVA_ANSWER_NODES) == 0 ? 0 : -1;
}

int sy_sva_pystr_json(struct sy_buf *b, const char *json, size_t n)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    int rc = -1;
    if (sy_jdom_parse(&d, json, n, &a, 0) == 0)
        rc = sy_pystr_node(b, &d, 0, &a) == 0 ? 0 : -1;
    sy_arena_free(&a);
    return rc;
}

int sy_sva_is_content(const struct sy_gseg *s)
{
    return s->kind == SY_GK_TEXT || s->kind == SY_GK_TOOL_OUT;
}

/* Python's str.isspace() for the ASCII and common Unicode spaces strip() removes. */
static size_t space_at(const unsigned char *p, size_t n)
{
    if (*p == ' ' || (*p >= 0x09 && *p <= 0x0d) || (*p >= 0x1c && *p <= 0x1f))
        return 1;
    if (n >= 2 && p[0] == 0xc2 && (p[1] == 0x85 || p[1] == 0xa0))
        return 2;
    if (n >= 3 && p[0] == 0xe2 && p[1] == 0x80 &&
        ((p[2] >= 0x80 && p[2] <= 0x8a) || p[2] == 0xa8 || p[2] == 0xa9 || p[2] == 0xaf))
        return 3;
    if (n >= 3 && ((p[0] == 0xe2 && p[1] == 0x81 && p[2] == 0x9f) || (p[0] == 0xe3 && p[1] == 0x80 && p[2] == 0x80) ||
                   (p[0] == 0xe1 && p[1] == 0x9a && p[2] == 0x80)))
        return 3;
    return 0;
}

void sy_sva_strip(const char *s, size_t n, size_t *b, size_t *e)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, k;
    while (i < n && (k = space_at(p + i, n - i)))
        i += k;
    size_t j = n;
    while (j > i) {
        size_t st = j - 1;
        while (st > i && (p[st] & 0xc0) == 0x80)
            st--;
        if ((k = space_at(p + st, j - st)) && st + k == j)
            j = st;
        else
            break;
    }
    *b = i;
    *e = j;
}

size_t sy_sva_cplen(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xc0) != 0x80;
    return c;
}

struct cpq {
    size_t cp;
    size_t *slot;
};

static int cpq_cmp(const void *a, const void *b)
{
    const struct cpq *x = a, *y = b;
    return x->cp < y->cp ? -1 : x->cp > y->cp;
}

int sy_sva_cp2byte(const char *text, size_t n, size_t *idx, size_t k)
{
    if (!k)
        return 0;
    struct cpq *q = malloc(k * sizeof *q);
    if (!q)
        return -1;
    for (size_t i = 0; i < k; i++)
        q[i] = (struct cpq){idx[i], &idx[i]};
    qsort(q, k, sizeof *q, cpq_cmp);
    size_t byte = 0, cp = 0;
    for (size_t i = 0; i < k; i++) {
        while (cp < q[i].cp && byte < n) {
            byte++;
            while (byte < n && ((unsigned char)text[byte] & 0xc0) == 0x80)
                byte++;
            cp++;
        }
        *q[i].slot = byte;
    }
    free(q);
    return 0;
}
