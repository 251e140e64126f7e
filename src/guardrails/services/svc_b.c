/* svc_b.c - helpers of the service kinds aporia, bedrock, azure/... and ibm (svc_b.h). */
#include "guardrails/services/svc_b.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/pyrepr.h"
#include "logging/sinks/pystr.h"

/* ---- settings ---- */

static struct json_object *member(struct json_object *p, const char *key)
{
    struct json_object *v = NULL;
    if (!p || !json_object_is_type(p, json_type_object) || !json_object_object_get_ex(p, key, &v))
        return NULL;
    return json_object_is_type(v, json_type_null) ? NULL : v;
}

const char *sy_svcb_str(struct json_object *p, const char *key)
{
    struct json_object *v = member(p, key);
    if (!v || !json_object_is_type(v, json_type_string))
        return NULL;
    const char *s = json_object_get_string(v);
    return s && *s ? s : NULL;
}

int sy_svcb_bool(struct json_object *p, const char *key, int dflt)
{
    struct json_object *v = member(p, key);
    if (!v)
        return dflt;
    switch (json_object_get_type(v)) {
    case json_type_boolean: return json_object_get_boolean(v);
    case json_type_int: return json_object_get_int64(v) != 0;
    case json_type_double: return json_object_get_double(v) != 0;
    case json_type_string: {
        const char *s = json_object_get_string(v);
        if (!strcasecmp(s, "true") || !strcmp(s, "1") || !strcasecmp(s, "yes"))
            return 1;
        if (!strcasecmp(s, "false") || !strcmp(s, "0") || !strcasecmp(s, "no") || !*s)
            return 0;
        return dflt;
    }
    default: return dflt;
    }
}

int sy_svcb_num(struct json_object *p, const char *key, double *out, int *is_int)
{
    struct json_object *v = member(p, key);
    if (!v)
        return 0;
    if (is_int)
        *is_int = json_object_is_type(v, json_type_int);
    if (json_object_is_type(v, json_type_int)) {
        *out = (double)json_object_get_int64(v);
        return 1;
    }
    if (json_object_is_type(v, json_type_double)) {
        *out = json_object_get_double(v);
        return 1;
    }
    if (json_object_is_type(v, json_type_string)) { /* "0.8" from an environment variable */
        const char *s = json_object_get_string(v);
        char *end = NULL;
        double d = strtod(s, &end);
        if (end != s && end && !*end) {
            *out = d;
            if (is_int)
                *is_int = !strpbrk(s, ".eE");
            return 1;
        }
    }
    return -1;
}

char *sy_svcb_obj_json(struct json_object *p, const char *key, int *bad)
{
    struct json_object *v = member(p, key);
    if (!v)
        return NULL;
    if (!json_object_is_type(v, json_type_object)) {
        *bad = -1;
        return NULL;
    }
    const char *s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    char *r = s ? strdup(s) : NULL;
    if (!r)
        *bad = -1;
    return r;
}

char *sy_svcb_dup(const char *s, int *oom)
{
    if (!s)
        return NULL;
    char *r = strdup(s);
    if (!r)
        *oom = 1;
    return r;
}

int sy_svcb_url_safe(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= ' ' || *p == 0x7f || strchr("\"<>\\^`{|}", *p))
            return 0;
    return 1;
}

/* ---- the request ---- */

int sy_svcb_post(struct sy_ghttp *req, const char *url)
{
    req->method = "POST";
    free(req->url);
    req->url = strdup(url);
    sy_buf_free(&req->headers);
    sy_buf_free(&req->body);
    sy_buf_init(&req->headers, SY_SVCB_HDR_MAX);
    sy_buf_init(&req->body, SY_SVCB_BODY_MAX);
    return req->url ? 0 : -1;
}

int sy_svcb_header(struct sy_ghttp *req, const char *name, const char *value)
{
    int rc = sy_buf_puts(&req->headers, name);
    rc |= SY_BUF_LIT(&req->headers, ": ");
    rc |= sy_buf_puts(&req->headers, value);
    rc |= SY_BUF_LIT(&req->headers, "\r\n");
    return rc ? -1 : 0;
}

/* ---- texts ---- */

int sy_svcb_is_content(const struct sy_gseg *s)
{
    return s->kind == SY_GK_TEXT || s->kind == SY_GK_TOOL_OUT;
}

int sy_svcb_is_answer_text(const struct sy_gseg *s)
{
    return s->kind == SY_GK_TEXT && s->role == SY_GR_ASSISTANT;
}

char *sy_svcb_answer_text(const struct sy_ginput *in, size_t *len)
{
    struct sy_buf b;
    sy_buf_init(&b, SY_SVCB_BODY_MAX);
    for (size_t i = 0; i < in->nseg; i++)
        if (sy_svcb_is_answer_text(&in->seg[i]))
            sy_buf_append(&b, in->seg[i].text, in->seg[i].len);
    if (sy_buf_failed(&b) || (!b.p && sy_buf_reserve(&b, 1) != 0)) {
        sy_buf_free(&b);
        return NULL;
    }
    *len = b.len;
    return b.p;
}

/* Python's str.isspace() for one code point (the characters str.strip() removes). */
static int py_space(unsigned cp)
{
    return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f ||
           cp == 0x3000;
}

void sy_svcb_strip(const char *s, size_t n, size_t *b, size_t *e)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        if (!py_space(sy_py_utf8_next(u, n, &j)))
            break;
        i = j;
    }
    size_t end = n;
    while (end > i) {
        size_t k = end - 1; /* the start of the last code point */
        while (k > i && (u[k] & 0xc0) == 0x80 && end - k < 4)
            k--;
        size_t j = k;
        if (!py_space(sy_py_utf8_next(u, end, &j)) || j != end)
            break;
        end = k;
    }
    *b = i;
    *e = end;
}

size_t sy_svcb_cplen(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xc0) != 0x80;
    return c;
}

char *sy_svcb_last_user(const struct sy_ginput *in, size_t *len, int *oom)
{
    /* walk back over the messages (a run of segments with one msg index) while they are the user's */
    size_t first = in->nseg;
    for (size_t i = in->nseg; i > 0;) {
        int msg = in->seg[i - 1].msg, user = 0, other = 0;
        size_t j = i;
        while (j > 0 && in->seg[j - 1].msg == msg) {
            if (in->seg[j - 1].role == SY_GR_USER)
                user = 1;
            else if (in->seg[j - 1].role == SY_GR_SYSTEM || in->seg[j - 1].role == SY_GR_ASSISTANT)
                other = 1;
            j--;
        }
        if (!user || other)
            break;
        first = j;
        i = j;
    }
    if (first == in->nseg)
        return NULL;
    struct sy_buf b;
    sy_buf_init(&b, SY_SVCB_BODY_MAX);
    for (size_t i = first; i < in->nseg; i++) {
        const struct sy_gseg *s = &in->seg[i];
        if (s->role == SY_GR_USER && s->kind == SY_GK_TEXT)
            sy_buf_append(&b, s->text, s->len);
        if (i + 1 == in->nseg || in->seg[i + 1].msg != s->msg)
            SY_BUF_LIT(&b, "\n");
    }
    if (sy_buf_failed(&b)) {
        sy_buf_free(&b);
        *oom = 1;
        return NULL;
    }
    size_t s0, s1;
    sy_svcb_strip(b.p, b.len, &s0, &s1);
    if (s1 == s0) {
        sy_buf_free(&b);
        return NULL;
    }
    memmove(b.p, b.p + s0, s1 - s0);
    b.p[s1 - s0] = 0;
    *len = s1 - s0;
    return b.p;
}

/* Whether the code point at s[*i] is whitespace (advancing *i past it), with an ASCII fast path. */
static int space_at(const unsigned char *s, size_t n, size_t *i)
{
    unsigned char c = s[*i];
    if (c < 0x80) {
        (*i)++;
        return c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
    }
    return py_space(sy_py_utf8_next(s, n, i));
}

/* The next token of split_text_by_words (\S+ or \s+) at s[i..n): its end, *cps its code points. */
static size_t token_end(const char *s, size_t n, size_t i, size_t *cps)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t j = i, c = 0, k = i;
    int sp = space_at(u, n, &k);
    while (j < n) {
        k = j;
        if (space_at(u, n, &k) != sp)
            break;
        j = k;
        c++;
    }
    *cps = c;
    return j;
}

size_t sy_svcb_chunk_end(const char *text, size_t n, size_t off, size_t max)
{
    const unsigned char *u = (const unsigned char *)text;
    size_t cur = 0, pos = off;
    while (pos < n) {
        size_t c, e = token_end(text, n, pos, &c);
        if (cur + c <= max) {
            cur += c;
            pos = e;
            continue;
        }
        if (cur > 0)
            return pos;
        for (size_t k = 0; k < max && pos < n; k++) /* a word longer than a chunk: cut it */
            sy_py_utf8_next(u, n, &pos);
        return pos;
    }
    return pos;
}

/* ---- JSON ---- */

int sy_svcb_parse(struct sy_jdoc *d, const char *body, size_t n, struct sy_arena *a)
{
    if (!body || !n)
        return -1;
    return sy_jdom_parse(d, body, n, a, 0) == 0 ? 0 : -1;
}

int sy_svcb_repr(struct sy_buf *b, const struct sy_jdoc *d, uint32_t i, struct sy_arena *a)
{
    if (!i) /* an absent member */
        return SY_BUF_LIT(b, "None");
    if (d->n[i].type == 's') {
        size_t n;
        const char *s = sy_jdom_str(d, i, a, &n);
        return s ? sy_py_str_repr(b, s, n) : -1;
    }
    return sy_pystr_node(b, d, i, a);
}

int sy_svcb_str_node(struct sy_buf *b, const struct sy_jdoc *d, uint32_t i, struct sy_arena *a)
{
    return sy_pystr_node(b, d, i, a);
}

void sy_svcb_extra_open(struct sy_svcb_extra *x, const char *extra_body, struct sy_arena *a)
{
    memset(x, 0, sizeof *x);
    x->ok = extra_body && sy_jdom_parse(&x->d, extra_body, strlen(extra_body), a, 0) == 0 && x->d.count &&
            x->d.n[0].type == 'o';
}

int sy_svcb_extra_key(struct sy_jw *w, const struct sy_svcb_extra *x, const char *key)
{
    sy_jw_key(w, key);
    uint32_t v = x->ok ? sy_jdom_get(&x->d, 0, key) : 0;
    if (!v)
        return 0;
    sy_jw_node(w, &x->d, v);
    return 1;
}

static int listed(const char *const *keys, const char *k)
{
    for (size_t i = 0; keys && keys[i]; i++)
        if (!strcmp(keys[i], k))
            return 1;
    return 0;
}

void sy_svcb_extra_rest(struct sy_jw *w, const struct sy_svcb_extra *x, const char *const *known,
                        const char *const *skip, struct sy_arena *a)
{
    if (!x->ok)
        return;
    const struct sy_jdoc *d = &x->d;
    for (uint32_t k = sy_jdom_first(d, 0); k; k = sy_jdom_next_key(d, k)) {
        size_t kl;
        const char *ks = sy_jdom_str(d, k, a, &kl);
        if (!ks || strlen(ks) != kl || listed(known, ks) || listed(skip, ks))
            continue;
        int seen = 0;
        for (uint32_t e = sy_jdom_first(d, 0); e && e != k && !seen; e = sy_jdom_next_key(d, e))
            seen = sy_jdom_str_eq(d, e, ks);
        if (seen)
            continue;
        sy_jw_keyn(w, ks, kl);
        sy_jw_node(w, d, sy_jdom_get(d, 0, ks));
    }
}
