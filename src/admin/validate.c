/* validate.c - the management API's input gate (validate.h): one check of
 * every request, on the DB thread, before the route's handler sees it.
 *
 * The handlers read their fields with json-c and pydantic-like lax typing
 * (admin_impl.h). What json-c and a database cannot be trusted with is
 * refused here, once, for every route:
 *
 *   path, query  percent-decoded; not UTF-8 or a NUL -> 400; a query value
 *                longer than its maximum -> 400 (the handlers copy query
 *                values into fixed buffers: a longer one would be cut, and a
 *                cut id names another row).
 *   body, pass 1 (strict scan of the raw bytes, no tree):
 *                not UTF-8 or a NUL byte -> 400 (before anything else: no raw
 *                byte is ever echoed); JSON syntax as Python's json module
 *                (json-c is laxer: comments, single quotes) -> FastAPI's 422
 *                json_invalid; NaN / Infinity literals, a number beyond the
 *                double range or an integer beyond int64 (json-c saturates
 *                both silently) -> 400; a \u0000 or unpaired surrogate
 *                escape in any string or key -> 400; a key twice in one object
 *                (compared after decoding escapes, so "m\u006fdels" is
 *                "models") -> 400; nesting deeper than SY_ADMIN_MAX_DEPTH
 *                -> 400.
 *   body, pass 2 (the json-c tree, now known clean): the members of the top
 *                object, and of the member objects under "member",
 *                "members", "members_with_roles", are looked up in FIELDS
 *                (name -> kind, maximum) - the one table of what each field
 *                name may hold on any route. A wrong type -> FastAPI's 422
 *                (the same shapes as the handlers' typed reads); a value out
 *                of range, too long, or a duration that does not parse ->
 *                400 (a duration also when it reaches past the year 9999,
 *                which no stored timestamp can hold). "metadata" is checked for its model_rpm_limit /
 *                model_tpm_limit; a custom key equal to the master key is
 *                refused on /key/generate and /key/regenerate; a key named
 *                by neither "sk-..." nor a 64-character hash is refused on
 *                the other routes (the handlers would cut it to a hash).
 *
 * Errors are LiteLLM's ProxyException shape ({"error":{"message","type":
 * "bad_request_error","param":<field>,"code":"400"}}); messages name the
 * field and never quote raw request bytes (values are only quoted once known
 * to be valid UTF-8, and escaped).
 */
#include "admin/validate.h"

#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/hex.h"
#include "core/utf8.h"
#include "admin/admin_impl.h"
#include "http/server.h"
#include "spend/spend.h"

/* ---- errors ---------------------------------------------------------------- */

struct verr {
    int *status;
    struct sy_buf *out;
};

static int refuse(struct verr *e, const char *param, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(struct verr *e, const char *param, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    *e->status = 400;
    sy_buf_reset(e->out);
    sy_admin_error_body(e->out, 400, "bad_request_error", param, msg);
    return -1;
}

/* FastAPI's 422: {"detail":[{"type","loc":["body",<loc...>],"msg","input"[,"ctx"]}]};
 * loc_json is the rest of the loc array (already JSON), input_json the value. */
static int refuse_422(struct verr *e, const char *type, const char *loc_json, const char *msg, const char *input_json,
                      const char *ctx_json)
{
    *e->status = 422;
    sy_buf_reset(e->out);
    sy_buf_printf(e->out, "{\"detail\":[{\"type\":\"%s\",\"loc\":[\"body\"", type);
    if (loc_json) {
        SY_BUF_LIT(e->out, ",");
        sy_buf_puts(e->out, loc_json);
    }
    SY_BUF_LIT(e->out, "],\"msg\":\"");
    sy_admin_json_escape(e->out, msg, strlen(msg));
    SY_BUF_LIT(e->out, "\",\"input\":");
    sy_buf_puts(e->out, input_json ? input_json : "null");
    if (ctx_json) {
        SY_BUF_LIT(e->out, ",\"ctx\":");
        sy_buf_puts(e->out, ctx_json);
    }
    SY_BUF_LIT(e->out, "}]}");
    return -1;
}

/* A value quoted in a message: at most 64 bytes, cut on a character boundary
 * (the caller knows s is valid UTF-8). */
static int quote_len(const char *s)
{
    size_t n = strlen(s), i = 0;
    while (i < n && i < 64) {
        size_t l = sy_utf8_seq((const unsigned char *)s + i, n - i);
        if (!l || i + l > 64)
            break;
        i += l;
    }
    return (int)i;
}

/* ---- pass 1: strict scan of the raw body ---------------------------------- */

struct scan {
    const char *p;
    size_t n, i;
    int depth;
    char top[SY_ADMIN_MAX_ID + 1]; /* the top-level member being scanned ("" outside one) */
    struct verr *e;
};

static const char *param_of(struct scan *s)
{
    return s->top[0] ? s->top : NULL;
}

static int syntax(struct scan *s, size_t off, const char *why)
{
    char loc[32];
    struct sy_buf ctx;
    sy_buf_init(&ctx, 256);
    snprintf(loc, sizeof loc, "%zu", off > 0x7fffffff ? (size_t)0 : off);
    SY_BUF_LIT(&ctx, "{\"error\":\"");
    sy_admin_json_escape(&ctx, why, strlen(why));
    SY_BUF_LIT(&ctx, "\"}");
    refuse_422(s->e, "json_invalid", loc, "JSON decode error", "{}", ctx.p);
    sy_buf_free(&ctx);
    return -1;
}

static void ws(struct scan *s)
{
    while (s->i < s->n && (s->p[s->i] == ' ' || s->p[s->i] == '\t' || s->p[s->i] == '\n' || s->p[s->i] == '\r'))
        s->i++;
}

/* A string at s->i (on its '"'); its decoded text appended to dec when not
 * NULL. Refuses \u0000 and unpaired surrogates; raw bytes are valid UTF-8
 * already (checked for the whole body). */
static int scan_string(struct scan *s, struct sy_buf *dec)
{
    size_t start = s->i++;
    while (s->i < s->n) {
        unsigned char c = (unsigned char)s->p[s->i];
        if (c == '"') {
            s->i++;
            return 0;
        }
        if (c < 0x20)
            return syntax(s, s->i, "Invalid control character at");
        if (c != '\\') {
            if (dec)
                sy_buf_append(dec, s->p + s->i, 1);
            s->i++;
            continue;
        }
        if (s->i + 1 >= s->n)
            break;
        char x = s->p[s->i + 1];
        const char *simple = strchr("\"\\/bfnrt", x);
        if (x && simple) {
            static const char out[] = "\"\\/\b\f\n\r\t";
            if (dec)
                sy_buf_append(dec, &out[simple - "\"\\/bfnrt"], 1);
            s->i += 2;
            continue;
        }
        unsigned cp, lo;
        if (x != 'u' || s->i + 6 > s->n || sy_hex4(s->p + s->i + 2, &cp) < 0)
            return syntax(s, s->i, "Invalid \\escape");
        s->i += 6;
        if (cp == 0)
            return refuse(s->e, param_of(s), "Invalid value%s%s: text must not contain NUL (\\u0000)",
                          s->top[0] ? " for " : " in request body", s->top);
        if (cp >= 0xdc00 && cp <= 0xdfff)
            return refuse(s->e, param_of(s), "Invalid value%s%s: \\u escape is an unpaired UTF-16 surrogate",
                          s->top[0] ? " for " : " in request body", s->top);
        if (cp >= 0xd800 && cp <= 0xdbff) {
            if (s->i + 6 > s->n || s->p[s->i] != '\\' || s->p[s->i + 1] != 'u' || sy_hex4(s->p + s->i + 2, &lo) < 0 ||
                lo < 0xdc00 || lo > 0xdfff)
                return refuse(s->e, param_of(s), "Invalid value%s%s: \\u escape is an unpaired UTF-16 surrogate",
                              s->top[0] ? " for " : " in request body", s->top);
            s->i += 6;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        }
        if (dec)
            sy_buf_utf8(dec, cp);
    }
    return syntax(s, start, "Unterminated string starting at");
}

/* NaN / Infinity / -Infinity (and json-c's other spellings): a word json-c
 * would take as a number. */
static int nonfinite_word(struct scan *s)
{
    static const char *const words[] = {"-infinity", "infinity", "-inf", "inf", "nan", "-nan"};
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++) {
        size_t l = strlen(words[k]);
        if (s->n - s->i >= l && strncasecmp(s->p + s->i, words[k], l) == 0)
            return 1;
    }
    return 0;
}

static int scan_number(struct scan *s)
{
    size_t start = s->i;
    int is_float = 0;
    if (s->p[s->i] == '-')
        s->i++;
    if (s->i < s->n && s->p[s->i] == '0')
        s->i++;
    else if (s->i < s->n && s->p[s->i] >= '1' && s->p[s->i] <= '9')
        while (s->i < s->n && isdigit((unsigned char)s->p[s->i]))
            s->i++;
    else
        return syntax(s, start, "Expecting value");
    if (s->i < s->n && s->p[s->i] == '.') {
        is_float = 1;
        s->i++;
        if (s->i >= s->n || !isdigit((unsigned char)s->p[s->i]))
            return syntax(s, start, "Extra data");
        while (s->i < s->n && isdigit((unsigned char)s->p[s->i]))
            s->i++;
    }
    if (s->i < s->n && (s->p[s->i] == 'e' || s->p[s->i] == 'E')) {
        is_float = 1;
        s->i++;
        if (s->i < s->n && (s->p[s->i] == '+' || s->p[s->i] == '-'))
            s->i++;
        if (s->i >= s->n || !isdigit((unsigned char)s->p[s->i]))
            return syntax(s, start, "Extra data");
        while (s->i < s->n && isdigit((unsigned char)s->p[s->i]))
            s->i++;
    }
    size_t len = s->i - start;
    char small[64], *t = len < sizeof small ? small : malloc(len + 1);
    if (!t)
        return refuse(s->e, param_of(s), "Invalid request body: number too long");
    memcpy(t, s->p + start, len);
    t[len] = 0;
    int bad;
    errno = 0;
    if (is_float) {
        double d = strtod(t, NULL);
        bad = !isfinite(d);
    } else {
        (void)strtoll(t, NULL, 10);
        bad = errno == ERANGE;
    }
    if (t != small)
        free(t);
    if (bad)
        return refuse(s->e, param_of(s), "Invalid value%s%s: number out of range (%s)",
                      s->top[0] ? " for " : " in request body", s->top,
                      is_float ? "beyond a double" : "an integer beyond 64 bits");
    return 0;
}

/* Decoded keys of one object, for the duplicate check. */
struct keyset {
    struct sy_buf text; /* keys back to back */
    size_t *off, *len;
    size_t n, cap;
};

/* Pairs (off, len) into text; the text is an argument, not a global, since
 * management handlers run on several DB threads at once. Empty keys have no
 * text at all (text may be NULL). */
static int key_cmp(const void *x, const void *y, void *text)
{
    const size_t *a = x, *b = y;
    if (a[1] != b[1])
        return a[1] < b[1] ? -1 : 1;
    return a[1] ? memcmp((const char *)text + a[0], (const char *)text + b[0], a[1]) : 0;
}

/* The first key present twice, or NULL (pairs sorted). */
static int dup_of(struct keyset *k, size_t *off, size_t *len)
{
    if (k->n < 2)
        return 0;
    size_t *pairs = malloc(k->n * 2 * sizeof *pairs);
    if (!pairs)
        return 0;
    for (size_t i = 0; i < k->n; i++)
        pairs[2 * i] = k->off[i], pairs[2 * i + 1] = k->len[i];
    qsort_r(pairs, k->n, 2 * sizeof *pairs, key_cmp, k->text.p);
    int found = 0;
    for (size_t i = 1; i < k->n && !found; i++)
        if (key_cmp(pairs + 2 * (i - 1), pairs + 2 * i, k->text.p) == 0)
            *off = pairs[2 * i], *len = pairs[2 * i + 1], found = 1;
    free(pairs);
    return found;
}

static int scan_value(struct scan *s);

static int scan_object(struct scan *s)
{
    struct keyset k = {0};
    int rc = -1;
    sy_buf_init(&k.text, (size_t)1 << 30); /* keys are never longer than the body */
    s->i++;                                /* '{' */
    ws(s);
    if (s->i < s->n && s->p[s->i] == '}') {
        s->i++;
        rc = 0;
        goto out;
    }
    for (;;) {
        ws(s);
        if (s->i >= s->n || s->p[s->i] != '"') {
            syntax(s, s->i, "Expecting property name enclosed in double quotes");
            goto out;
        }
        if (k.n == k.cap) {
            size_t nc = k.cap ? k.cap * 2 : 16;
            size_t *no = realloc(k.off, nc * sizeof *no);
            if (no)
                k.off = no;
            size_t *nl = realloc(k.len, nc * sizeof *nl);
            if (nl)
                k.len = nl;
            if (!no || !nl) {
                refuse(s->e, NULL, "Invalid request body: out of memory");
                goto out;
            }
            k.cap = nc;
        }
        size_t before = k.text.len;
        if (scan_string(s, &k.text) < 0)
            goto out;
        k.off[k.n] = before;
        k.len[k.n] = k.text.len - before;
        k.n++;
        int top = s->depth == 1;
        if (top) { /* the field errors below name */
            size_t l = k.len[k.n - 1];
            if (l > SY_ADMIN_MAX_ID)
                l = 0; /* no field name is that long: "request body" */
            memcpy(s->top, k.text.p ? k.text.p + before : "", l);
            s->top[l] = 0;
        }
        ws(s);
        if (s->i >= s->n || s->p[s->i] != ':') {
            syntax(s, s->i, "Expecting ':' delimiter");
            goto out;
        }
        s->i++;
        if (scan_value(s) < 0)
            goto out;
        if (top)
            s->top[0] = 0;
        ws(s);
        if (s->i < s->n && s->p[s->i] == ',') {
            s->i++;
            continue;
        }
        if (s->i < s->n && s->p[s->i] == '}') {
            s->i++;
            break;
        }
        syntax(s, s->i, "Expecting ',' delimiter");
        goto out;
    }
    size_t doff, dlen;
    if (dup_of(&k, &doff, &dlen)) {
        char name[SY_ADMIN_MAX_ID + 1];
        size_t l = dlen < sizeof name ? dlen : 0;
        if (l) /* an empty key has no text (k.text.p may be NULL) */
            memcpy(name, k.text.p + doff, l);
        name[l] = 0;
        refuse(s->e,
               s->top[0] ? s->top
               : l       ? name
                         : NULL,
               "Invalid request body: key '%.*s' appears twice in one object", quote_len(name), name);
        goto out;
    }
    rc = 0;
out:
    sy_buf_free(&k.text);
    free(k.off);
    free(k.len);
    return rc;
}

static int scan_array(struct scan *s)
{
    s->i++; /* '[' */
    ws(s);
    if (s->i < s->n && s->p[s->i] == ']') {
        s->i++;
        return 0;
    }
    for (;;) {
        if (scan_value(s) < 0)
            return -1;
        ws(s);
        if (s->i < s->n && s->p[s->i] == ',') {
            s->i++;
            continue;
        }
        if (s->i < s->n && s->p[s->i] == ']') {
            s->i++;
            return 0;
        }
        return syntax(s, s->i, "Expecting ',' delimiter");
    }
}

static int word(struct scan *s, const char *w)
{
    size_t l = strlen(w);
    if (s->n - s->i < l || memcmp(s->p + s->i, w, l) != 0)
        return 0;
    s->i += l;
    return 1;
}

static int scan_value(struct scan *s)
{
    ws(s);
    if (s->i >= s->n)
        return syntax(s, s->i, "Expecting value");
    char c = s->p[s->i];
    if (c == '{' || c == '[') {
        if (++s->depth > SY_ADMIN_MAX_DEPTH)
            return refuse(s->e, param_of(s), "Invalid request body: nested deeper than %d levels", SY_ADMIN_MAX_DEPTH);
        int rc = c == '{' ? scan_object(s) : scan_array(s);
        s->depth--;
        return rc;
    }
    if (c == '"')
        return scan_string(s, NULL);
    if (word(s, "true") || word(s, "false") || word(s, "null"))
        return 0;
    if (nonfinite_word(s))
        return refuse(s->e, param_of(s), "Invalid value%s%s: NaN and Infinity are not numbers JSON allows",
                      s->top[0] ? " for " : " in request body", s->top);
    if (c == '-' || (c >= '0' && c <= '9'))
        return scan_number(s);
    return syntax(s, s->i, "Expecting value");
}

static int scan_body(const char *p, size_t n, struct verr *e)
{
    size_t bad = sy_utf8_check(p, n);
    if (bad < n)
        return refuse(e, NULL, "Invalid request body: not valid UTF-8 (at byte %zu)", bad);
    if (memchr(p, 0, n))
        return refuse(e, NULL, "Invalid request body: contains a NUL byte (at byte %zu)",
                      (size_t)((const char *)memchr(p, 0, n) - p));
    struct scan s = {.p = p, .n = n, .e = e};
    ws(&s);
    if (s.i == n)
        return 0; /* an empty body is an empty object */
    if (scan_value(&s) < 0)
        return -1;
    ws(&s);
    if (s.i < n)
        return syntax(&s, s.i, "Extra data");
    return 0;
}

/* ---- pass 2: the field table ---------------------------------------------- */

enum vk {
    V_ID,        /* string, at most SY_ADMIN_MAX_ID bytes */
    V_EMAIL,     /* string, at most SY_ADMIN_MAX_EMAIL bytes */
    V_KEY,       /* a custom key: V_ID, and not the master key on generate / regenerate */
    V_IDLIST,    /* list of V_ID strings */
    V_STRLIST,   /* list of strings */
    V_INT,       /* integer in [0, max] */
    V_NUM,       /* finite number >= 0 */
    V_DUR,       /* duration text ("30s", "30m", "30h", "30d", "2w", "1mo"), or "" */
    V_MODEL_INT, /* object: model name -> V_INT */
    V_NUMS,      /* object; every number inside finite and >= 0 */
    V_META,      /* object; its model_rpm_limit / model_tpm_limit as V_MODEL_INT */
    V_MEMBERS,   /* object or list of objects, each checked with this table */
};

struct vfield {
    const char *name;
    enum vk kind;
    int64_t max; /* V_INT: the column's maximum */
};

/* One meaning per field name, whichever route the body goes to. */
static const struct vfield FIELDS[] = {
    {"key_alias", V_ID, 0},
    {"user_id", V_ID, 0},
    {"team_id", V_ID, 0},
    {"organization_id", V_ID, 0},
    {"budget_id", V_ID, 0},
    {"agent_id", V_ID, 0},
    {"project_id", V_ID, 0},
    {"team_alias", V_ID, 0},
    {"organization_alias", V_ID, 0},
    {"user_alias", V_ID, 0},
    {"end_user_id", V_ID, 0},
    {"sso_user_id", V_ID, 0},
    {"alias", V_ID, 0},
    {"user_email", V_EMAIL, 0},
    {"key", V_KEY, 0},
    {"new_key", V_KEY, 0},
    {"keys", V_IDLIST, 0},
    {"key_aliases", V_IDLIST, 0},
    {"user_ids", V_IDLIST, 0},
    {"team_ids", V_IDLIST, 0},
    {"budgets", V_IDLIST, 0},
    {"organizations", V_IDLIST, 0},
    {"models", V_STRLIST, 0},
    {"rpm_limit", V_INT, INT64_MAX},
    {"tpm_limit", V_INT, INT64_MAX},
    {"team_member_rpm_limit", V_INT, INT64_MAX},
    {"team_member_tpm_limit", V_INT, INT64_MAX},
    {"max_parallel_requests", V_INT, SY_ADMIN_MAX_INT32},
    {"max_budget", V_NUM, 0},
    {"soft_budget", V_NUM, 0},
    {"spend", V_NUM, 0},
    {"max_budget_in_team", V_NUM, 0},
    {"team_member_budget", V_NUM, 0},
    {"temp_budget_increase", V_NUM, 0},
    {"duration", V_DUR, 0},
    {"budget_duration", V_DUR, 0},
    {"team_member_budget_duration", V_DUR, 0},
    {"rotation_interval", V_DUR, 0},
    {"model_rpm_limit", V_MODEL_INT, INT64_MAX},
    {"model_tpm_limit", V_MODEL_INT, INT64_MAX},
    {"model_max_budget", V_NUMS, 0},
    {"metadata", V_META, 0},
    {"member", V_MEMBERS, 0},
    {"members", V_MEMBERS, 0},
    {"members_with_roles", V_MEMBERS, 0},
};

static const struct vfield *field_of(const char *name)
{
    for (size_t i = 0; i < sizeof FIELDS / sizeof FIELDS[0]; i++)
        if (strcmp(FIELDS[i].name, name) == 0)
            return &FIELDS[i];
    return NULL;
}

/* The routes that take a custom key: checked against the master key. */
enum { KR_NONE, KR_GENERATE, KR_REGENERATE };

struct ctx {
    const struct sy_admin_req *rq;
    int key_route; /* KR_* */
    struct verr *e;
};

/* A key names a row as "sk-..." (hashed) or as the hash itself: text that is
 * neither and longer than a hash would be cut to one by the handlers' 65-byte
 * token buffers, and name the key whose hash is its first 64 bytes. */
static int key_text_ok(const char *k, size_t kl)
{
    return (kl >= 3 && memcmp(k, "sk-", 3) == 0) || kl <= 64;
}

/* loc JSON for FastAPI: "name" or "name",<idx> or "name","sub". */
static void loc_of(struct sy_buf *b, const char *name, const char *sub, int idx)
{
    SY_BUF_LIT(b, "\"");
    sy_admin_json_escape(b, name, strlen(name));
    SY_BUF_LIT(b, "\"");
    if (sub) {
        SY_BUF_LIT(b, ",\"");
        sy_admin_json_escape(b, sub, strlen(sub));
        SY_BUF_LIT(b, "\"");
    }
    if (idx >= 0)
        sy_buf_printf(b, ",%d", idx);
}

static int type_err(struct ctx *c, const char *name, const char *sub, int idx, const char *type, const char *msg,
                    struct json_object *v)
{
    struct sy_buf loc;
    sy_buf_init(&loc, 4096);
    loc_of(&loc, name, sub, idx);
    refuse_422(c->e, type, loc.p ? loc.p : "", msg, sy_admin_jtext(v), NULL);
    sy_buf_free(&loc);
    return -1;
}

static int check_str(struct ctx *c, const char *name, struct json_object *v, size_t max, const char *sub, int idx)
{
    if (!json_object_is_type(v, json_type_string))
        return type_err(c, name, sub, idx, "string_type", "Input should be a valid string", v);
    size_t n = (size_t)json_object_get_string_len(v);
    if (n > max)
        return refuse(c->e, name, "Invalid value for %s: at most %zu bytes allowed, got %zu", name, max, n);
    return 0;
}

/* pydantic's lax int: an integer, a bool, an integral float, an integer string. */
static int check_int(struct ctx *c, const char *name, struct json_object *v, int64_t max, const char *sub)
{
    int64_t x;
    switch (json_object_get_type(v)) {
    case json_type_int: x = json_object_get_int64(v); break;
    case json_type_boolean: x = json_object_get_boolean(v); break;
    case json_type_double: {
        double d = json_object_get_double(v);
        if (d != floor(d))
            return type_err(c, name, sub, -1, "int_from_float",
                            "Input should be a valid integer, got a number with a fractional part", v);
        if (d < 0 || d > (double)max)
            return refuse(c->e, name, "Invalid value for %s%s%s: must be an integer from 0 to %lld", name,
                          sub ? "." : "", sub ? sub : "", (long long)max);
        return 0;
    }
    case json_type_string: {
        const char *s = json_object_get_string(v);
        char *end;
        while (isspace((unsigned char)*s))
            s++;
        errno = 0;
        long long l = strtoll(s, &end, 10);
        while (isspace((unsigned char)*end))
            end++;
        if (!*s || *end)
            return type_err(c, name, sub, -1, "int_parsing",
                            "Input should be a valid integer, unable to parse string as an integer", v);
        if (errno == ERANGE)
            return refuse(c->e, name, "Invalid value for %s%s%s: must be an integer from 0 to %lld", name,
                          sub ? "." : "", sub ? sub : "", (long long)max);
        x = l;
        break;
    }
    default: return type_err(c, name, sub, -1, "int_type", "Input should be a valid integer", v);
    }
    if (x < 0 || x > max)
        return refuse(c->e, name, "Invalid value for %s%s%s: must be an integer from 0 to %lld. Received: %lld", name,
                      sub ? "." : "", sub ? sub : "", (long long)max, (long long)x);
    return 0;
}

/* pydantic's lax float, then finite and >= 0. */
static int check_num(struct ctx *c, const char *name, struct json_object *v, const char *sub)
{
    double d;
    switch (json_object_get_type(v)) {
    case json_type_int:
    case json_type_double: d = json_object_get_double(v); break;
    case json_type_boolean: return 0;
    case json_type_string: {
        const char *s = json_object_get_string(v);
        char *end;
        while (isspace((unsigned char)*s))
            s++;
        errno = 0;
        d = strtod(s, &end);
        while (isspace((unsigned char)*end))
            end++;
        if (!*s || *end || errno == ERANGE)
            return type_err(c, name, sub, -1, "float_parsing",
                            "Input should be a valid number, unable to parse string as a number", v);
        break;
    }
    default: return type_err(c, name, sub, -1, "float_type", "Input should be a valid number", v);
    }
    if (!isfinite(d) || d < 0)
        return refuse(c->e, name, "Invalid value for %s%s%s: must be a finite number >= 0", name, sub ? "." : "",
                      sub ? sub : "");
    return 0;
}

/* Every number inside v (any depth) finite and >= 0. */
static int check_nums(struct ctx *c, const char *name, struct json_object *v, const char *sub)
{
    switch (json_object_get_type(v)) {
    case json_type_int:
    case json_type_double: return check_num(c, name, v, sub);
    case json_type_object: {
        json_object_object_foreach(v, k, m)
        {
            if (m && check_nums(c, name, m, sub ? sub : k) < 0)
                return -1;
        }
        return 0;
    }
    case json_type_array:
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            struct json_object *m = json_object_array_get_idx(v, i);
            if (m && check_nums(c, name, m, sub) < 0)
                return -1;
        }
        return 0;
    default: return 0;
    }
}

static int check_model_int(struct ctx *c, const char *name, struct json_object *v, int64_t max)
{
    if (!json_object_is_type(v, json_type_object))
        return type_err(c, name, NULL, -1, "dict_type", "Input should be a valid dictionary", v);
    json_object_object_foreach(v, k, m)
    {
        if (m && check_int(c, name, m, max, k) < 0)
            return -1;
    }
    return 0;
}

static int check_members(struct ctx *c, struct json_object *o);

static int check_field(struct ctx *c, const struct vfield *f, struct json_object *v)
{
    const char *name = f->name;
    switch (f->kind) {
    case V_ID: return check_str(c, name, v, SY_ADMIN_MAX_ID, NULL, -1);
    case V_EMAIL: return check_str(c, name, v, SY_ADMIN_MAX_EMAIL, NULL, -1);
    case V_KEY: {
        if (check_str(c, name, v, SY_ADMIN_MAX_ID, NULL, -1) < 0)
            return -1;
        const char *k = json_object_get_string(v);
        size_t kl = (size_t)json_object_get_string_len(v);
        if (c->key_route && c->rq->master_key && kl == c->rq->master_key_len && memcmp(k, c->rq->master_key, kl) == 0)
            return refuse(c->e, name, "Invalid value for %s: a virtual key must not be the proxy's master key", name);
        if (c->key_route != KR_GENERATE && !key_text_ok(k, kl)) /* generate answers LiteLLM's "must start with sk-" */
            return refuse(c->e, name, "Invalid value for %s: a key is \"sk-...\" or its 64-character hash", name);
        return 0;
    }
    case V_IDLIST:
    case V_STRLIST:
        if (!json_object_is_type(v, json_type_array))
            return type_err(c, name, NULL, -1, "list_type", "Input should be a valid list", v);
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            struct json_object *e = json_object_array_get_idx(v, i);
            if (check_str(c, name, e, f->kind == V_IDLIST ? SY_ADMIN_MAX_ID : SIZE_MAX, NULL, (int)i) < 0)
                return -1;
        }
        return 0;
    case V_INT: return check_int(c, name, v, f->max, NULL);
    case V_NUM: return check_num(c, name, v, NULL);
    case V_DUR: {
        if (check_str(c, name, v, SY_ADMIN_MAX_ID, NULL, -1) < 0)
            return -1;
        const char *s = json_object_get_string(v);
        if (!s[0] || (strcmp(name, "duration") == 0 && strcmp(s, "-1") == 0))
            return 0; /* "" is no duration; a key's "-1" never expires */
        double secs = sy_duration_seconds(s);
        if (secs < 0)
            return refuse(c->e, name, "Invalid duration format: %.*s. Expected e.g. 30s, 30m, 30h, 30d, 1mo",
                          quote_len(s), s);
        /* an expiry or reset past 9999 has no timestamp (sy_iso_time would write 1970) */
        if (c->rq->now + secs > SY_ADMIN_MAX_TIME || sy_duration_next(s, c->rq->now) > SY_ADMIN_MAX_TIME)
            return refuse(c->e, name, "Invalid value for %s: %.*s from now is past the year 9999", name, quote_len(s),
                          s);
        return 0;
    }
    case V_MODEL_INT: return check_model_int(c, name, v, f->max);
    case V_NUMS:
        if (!json_object_is_type(v, json_type_object))
            return type_err(c, name, NULL, -1, "dict_type", "Input should be a valid dictionary", v);
        return check_nums(c, name, v, NULL);
    case V_META: {
        if (!json_object_is_type(v, json_type_object))
            return type_err(c, name, NULL, -1, "dict_type", "Input should be a valid dictionary", v);
        static const char *const sub[] = {"model_rpm_limit", "model_tpm_limit"};
        for (int i = 0; i < 2; i++) {
            struct json_object *m;
            if (json_object_object_get_ex(v, sub[i], &m) && m && check_model_int(c, sub[i], m, INT64_MAX) < 0)
                return -1;
        }
        return 0;
    }
    case V_MEMBERS:
        if (json_object_is_type(v, json_type_object))
            return check_members(c, v);
        if (json_object_is_type(v, json_type_array))
            for (size_t i = 0; i < json_object_array_length(v); i++) {
                struct json_object *e = json_object_array_get_idx(v, i);
                if (json_object_is_type(e, json_type_object) && check_members(c, e) < 0)
                    return -1;
            }
        return 0; /* anything else: the route's own 422 */
    }
    return 0;
}

/* The members of o against FIELDS (null is always allowed: Optional). */
static int check_members(struct ctx *c, struct json_object *o)
{
    json_object_object_foreach(o, k, v)
    {
        const struct vfield *f = v ? field_of(k) : NULL;
        if (f && check_field(c, f, v) < 0)
            return -1;
    }
    return 0;
}

/* ---- path and query -------------------------------------------------------- */

/* what: "path", "query parameter name" or "query parameter <name>"; param
 * the error's param (NULL: "None"). */
static int check_text(struct verr *e, const char *what, const char *param, const char *s, size_t n)
{
    size_t bad = sy_utf8_check(s, n);
    if (bad < n)
        return refuse(e, param, "Invalid %s: not valid UTF-8 (at byte %zu)", what, bad);
    if (memchr(s, 0, n))
        return refuse(e, param, "Invalid %s: contains a NUL byte", what);
    return 0;
}

/* Maximum decoded length of query parameter `name`. */
static size_t query_max(const char *name)
{
    static const char *const lists[] = {"user_ids", "tags", "team_ids", "key_aliases"};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
        if (strcmp(name, lists[i]) == 0)
            return SY_ADMIN_MAX_QUERY_LIST;
    const struct vfield *f = field_of(name);
    if (f && (f->kind == V_ID || f->kind == V_KEY))
        return SY_ADMIN_MAX_ID;
    if (f && f->kind == V_EMAIL)
        return SY_ADMIN_MAX_EMAIL;
    return SY_ADMIN_MAX_QUERY;
}

static int check_query(const char *q, size_t n, struct verr *e)
{
    size_t i = 0;
    char name[128];            /* as sy_query_get reads names */
    char *val = malloc(n + 1); /* a decoded value is never longer than the query */
    int rc = 0;
    if (!val)
        return 0;
    while (i < n && rc == 0) {
        size_t j = i;
        while (j < n && q[j] != '&')
            j++;
        const char *eq = memchr(q + i, '=', j - i);
        size_t kl = eq ? (size_t)(eq - (q + i)) : j - i;
        size_t vl = eq ? (size_t)(q + j - eq - 1) : 0;
        size_t nl = sy_pct_decode(q + i, kl, name, sizeof name, 1);
        size_t dl = sy_pct_decode(eq ? eq + 1 : "", vl, val, n + 1, 1);
        char what[160];
        if (check_text(e, "query parameter name", NULL, name, nl) < 0)
            rc = -1;
        else if (snprintf(what, sizeof what, "query parameter %s", name), check_text(e, what, name, val, dl) < 0)
            rc = -1;
        else if (dl > query_max(name))
            rc = refuse(e, name, "Invalid value for %s: at most %zu bytes allowed, got %zu", name, query_max(name), dl);
        i = j + 1;
    }
    free(val);
    return rc;
}

/* ---- entry points ---------------------------------------------------------- */

/* KR_* of a path; *seg / *seg_len the key segment of /key/<key>/regenerate. */
static int key_route_of(const char *p, size_t n, const char **seg, size_t *seg_len)
{
    *seg = NULL;
    *seg_len = 0;
    while (n > 1 && p[n - 1] == '/')
        n--;
    if (n < 5 || memcmp(p, "/key/", 5) != 0)
        return KR_NONE;
    if (n == 13 && memcmp(p, "/key/generate", 13) == 0)
        return KR_GENERATE;
    if (n >= 15 && memcmp(p + n - 11, "/regenerate", 11) == 0) {
        if (n >= 17) { /* "/key/<key>/regenerate" */
            *seg = p + 5;
            *seg_len = n - 16;
        }
        return KR_REGENERATE;
    }
    return KR_NONE;
}

int sy_admin_check(const struct sy_admin_req *rq, int *status, struct sy_buf *out)
{
    struct verr e = {status, out};
    if (rq->path && rq->path_len) {
        char *d = malloc(rq->path_len + 1);
        int rc = d ? check_text(&e, "path", NULL, d, sy_pct_decode(rq->path, rq->path_len, d, rq->path_len + 1, 0)) : 0;
        free(d);
        if (rc < 0)
            return -1;
    }
    if (rq->query && rq->query_len && check_query(rq->query, rq->query_len, &e) < 0)
        return -1;
    const char *seg = NULL;
    size_t seg_len = 0;
    int kr = rq->path ? key_route_of(rq->path, rq->path_len, &seg, &seg_len) : KR_NONE;
    if (seg && (seg_len > SY_ADMIN_MAX_ID || !key_text_ok(seg, seg_len)))
        return refuse(&e, "key",
                      "Invalid key in the path: a key is \"sk-...\" or its 64-character hash, at most %d bytes",
                      SY_ADMIN_MAX_ID);
    if (!rq->body || !rq->body_len)
        return 0;
    if (scan_body(rq->body, rq->body_len, &e) < 0)
        return -1;
    /* pass 2 on json-c's tree: the body is strict JSON now */
    struct json_tokener *tok = json_tokener_new_ex(SY_ADMIN_MAX_DEPTH + 2);
    if (!tok)
        return 0;
    struct json_object *o = rq->body_len <= 0x7fffffff ? json_tokener_parse_ex(tok, rq->body, (int)rq->body_len) : NULL;
    json_tokener_free(tok);
    int rc = 0;
    if (o && json_object_is_type(o, json_type_object)) {
        struct ctx c = {rq, kr, &e};
        rc = check_members(&c, o);
    }
    json_object_put(o); /* not an object (or empty): the handler's own 422 */
    return rc;
}

int sy_admin_validate(struct sy_admin_ctx *a)
{
    struct sy_admin_req rq = {
        .path = a->path,
        .path_len = a->path ? strlen(a->path) : 0,
        .query = a->query,
        .query_len = a->query ? strlen(a->query) : 0,
        .body = a->body,
        .body_len = a->body ? a->body_len : 0,
        .master_key = a->master_key,
        .master_key_len = a->master_key_len,
        .now = a->now,
    };
    return sy_admin_check(&rq, &a->status, &a->out);
}
