/* util.c - helpers every management-API handler uses (admin.h, admin_impl.h):
 * LiteLLM's error JSON, cache-invalidation lists, query strings, ids and new
 * keys, body parsing and typed field reads with FastAPI's 422 shape, rows
 * as JSON, time and pagination.
 *
 * Error bodies written here:
 *
 *   ProxyException (LiteLLM, any handler error):
 *     {"error":{"message":"...","type":"...","param":"...","code":"400"}}
 *     type / param are the string "None" when LiteLLM leaves them unset.
 *     Text is escaped with sy_admin_json_escape: a byte that is not UTF-8
 *     (a stored value from before validation, a path) becomes \ufffd, so an
 *     error or a row is always valid JSON.
 *   RequestValidationError (FastAPI, a body or query that fails the model):
 *     {"detail":[{"type":"string_type","loc":["body","key_alias"],
 *                 "msg":"Input should be a valid string","input":123}]}
 *
 * Everything runs on a DB thread; nothing here keeps state between calls.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "admin/admin_impl.h"
#include "admin/validate.h"
#include "core/clock.h"
#include "limits/limits.h"
#include "core/buf.h"
#include "core/pyrepr.h"
#include "core/log.h"
#include "keys/keys.h"
#include "http/server.h"

/* ---- errors -------------------------------------------------------------- */

void sy_admin_error_body(struct sy_buf *b, int status, const char *type, const char *param, const char *msg)
{
    SY_BUF_LIT(b, "{\"error\":{\"message\":\"");
    sy_admin_json_escape(b, msg, strlen(msg));
    SY_BUF_LIT(b, "\",\"type\":\"");
    type = type ? type : "None";
    sy_admin_json_escape(b, type, strlen(type));
    SY_BUF_LIT(b, "\",\"param\":\"");
    param = param ? param : "None";
    sy_admin_json_escape(b, param, strlen(param));
    sy_buf_printf(b, "\",\"code\":\"%d\"}}", status);
}

void sy_admin_error(struct sy_admin_ctx *a, int status, const char *type, const char *param, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    a->status = status;
    sy_buf_reset(&a->out);
    sy_admin_error_body(&a->out, status, type, param, msg);
}

void sy_admin_db_error(struct sy_admin_ctx *a, struct sy_store *st, int rc)
{
    const char *m = st ? sy_store_errmsg(st) : NULL;
    sy_warn("admin %s: database error %d: %s", a->path ? a->path : "?", rc, m ? m : "");
    if (rc == SY_STORE_EDOWN)
        sy_admin_error(a, 500, "internal_server_error", NULL, "No connected db.");
    else
        sy_admin_error(a, 500, "internal_server_error", NULL, "DB error");
}

int sy_admin_tx(struct sy_store *st, struct sy_admin_ctx *a, sy_admin_tx_fn body, void *ud)
{
    int rc = sy_store_begin(st);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        return rc;
    }
    rc = body(st, a, ud);
    if (rc == 0)
        rc = sy_store_commit(st);
    if (rc == 0)
        return 0;
    if (rc < 0) /* first: the log line names the failed statement's error */
        sy_admin_db_error(a, st, rc);
    sy_store_rollback(st);
    return rc;
}

/* ---- invalidations ------------------------------------------------------- */

static void inval_clear(struct sy_admin_ctx *a)
{
    for (int i = 0; i < a->ninval; i++)
        free(a->inval[i]);
    a->ninval = 0;
}

void sy_admin_invalidate(struct sy_admin_ctx *a, const char *kind, const char *id)
{
    char tmp[512];
    if (a->ninval == 1 && strcmp(a->inval[0], "all") == 0)
        return; /* everything goes anyway */
    if (strcmp(kind, "all") == 0 || a->ninval >= SY_ADMIN_MAX_INVAL) {
        inval_clear(a);
        a->inval[a->ninval++] = strdup("all");
        return;
    }
    int n = snprintf(tmp, sizeof tmp, "%s:%s", kind, id ? id : "");
    if (n < 0 || (size_t)n >= sizeof tmp) { /* an absurd id: drop everything instead */
        sy_admin_invalidate(a, "all", NULL);
        return;
    }
    for (int i = 0; i < a->ninval; i++)
        if (strcmp(a->inval[i], tmp) == 0)
            return;
    char *s = strdup(tmp);
    if (s)
        a->inval[a->ninval++] = s;
}

/* ---- query strings ------------------------------------------------------- */

const char *sy_admin_query(const struct sy_admin_ctx *a, const char *name, char *out, size_t cap)
{
    const char *q = a->query ? a->query : "";
    return sy_query_get(q, strlen(q), name, out, cap);
}

/* ---- ids and keys -------------------------------------------------------- */

static void rand_fill(unsigned char *p, size_t n)
{
    if (RAND_bytes(p, (int)n) != 1) { /* never expected; do not hand out a weak key silently */
        sy_error("admin: RAND_bytes failed");
        abort();
    }
}

void sy_admin_uuid(char out[37])
{
    unsigned char u[16];
    rand_fill(u, sizeof u);
    u[6] = (u[6] & 0x0f) | 0x40; /* version 4 */
    u[8] = (u[8] & 0x3f) | 0x80; /* RFC 4122 variant */
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
             u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

void sy_admin_new_key(char *out, size_t cap)
{
    static const char b64u[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    unsigned char r[16];
    char s[32];
    size_t o = 0;
    rand_fill(r, sizeof r);
    s[o++] = 's', s[o++] = 'k', s[o++] = '-';
    for (size_t i = 0; i < 16; i += 3) { /* base64url without padding: 16 bytes -> 22 chars */
        uint32_t v = (uint32_t)r[i] << 16;
        size_t left = 16 - i;
        if (left > 1)
            v |= (uint32_t)r[i + 1] << 8;
        if (left > 2)
            v |= r[i + 2];
        s[o++] = b64u[(v >> 18) & 63];
        s[o++] = b64u[(v >> 12) & 63];
        if (left > 1)
            s[o++] = b64u[(v >> 6) & 63];
        if (left > 2)
            s[o++] = b64u[v & 63];
    }
    s[o] = 0;
    snprintf(out, cap, "%s", s);
}

/* ---- FastAPI 422 --------------------------------------------------------- */

/* {"detail":[{"type":..,"loc":[where, field or idx],"msg":..,"input":..[,"ctx":..]}]} */
static void write_422(struct sy_admin_ctx *a, const char *where, const char *field, int idx, const char *type,
                      const char *msg, const char *input_json, const char *ctx_json)
{
    a->status = 422;
    sy_buf_reset(&a->out);
    SY_BUF_LIT(&a->out, "{\"detail\":[{\"type\":\"");
    sy_admin_json_escape(&a->out, type, strlen(type));
    SY_BUF_LIT(&a->out, "\",\"loc\":[\"");
    sy_buf_puts(&a->out, where);
    SY_BUF_LIT(&a->out, "\"");
    if (field) {
        SY_BUF_LIT(&a->out, ",\"");
        sy_admin_json_escape(&a->out, field, strlen(field));
        SY_BUF_LIT(&a->out, "\"");
    }
    if (idx >= 0)
        sy_buf_printf(&a->out, ",%d", idx);
    SY_BUF_LIT(&a->out, "],\"msg\":\"");
    sy_admin_json_escape(&a->out, msg, strlen(msg));
    SY_BUF_LIT(&a->out, "\",\"input\":");
    sy_buf_puts(&a->out, input_json ? input_json : "null");
    if (ctx_json) {
        SY_BUF_LIT(&a->out, ",\"ctx\":");
        sy_buf_puts(&a->out, ctx_json);
    }
    SY_BUF_LIT(&a->out, "}]}");
}

const char *sy_admin_jtext(struct json_object *v)
{
    return v ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE) : "null";
}

void sy_admin_422(struct sy_admin_ctx *a, const char *field, const char *type, const char *msg,
                  struct json_object *input)
{
    write_422(a, "body", field, -1, type, msg, sy_admin_jtext(input), NULL);
}

/* ---- body and fields ----------------------------------------------------- */

struct json_object *sy_admin_body(struct sy_admin_ctx *a)
{
    size_t n = a->body ? a->body_len : 0;
    size_t i = 0;
    while (i < n && isspace((unsigned char)a->body[i]))
        i++;
    if (i == n)
        return json_object_new_object();
    struct json_tokener *tok = json_tokener_new_ex(64);
    if (!tok) {
        sy_admin_error(a, 500, "internal_server_error", NULL, "out of memory");
        return NULL;
    }
    struct json_object *o = NULL;
    if (n <= (size_t)0x7fffffff)
        o = json_tokener_parse_ex(tok, a->body, (int)n);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    if (o && jerr == json_tokener_success) { /* trailing bytes other than spaces are "Extra data" */
        while (end < n && isspace((unsigned char)a->body[end]))
            end++;
        if (end < n) {
            json_object_put(o);
            o = NULL;
            jerr = json_tokener_error_parse_unexpected;
        }
    } else if (jerr == json_tokener_continue) { /* ran out of input */
        json_object_put(o);
        o = NULL;
        end = n;
    }
    json_tokener_free(tok);
    if (!o) {
        /* FastAPI reports Python's json.JSONDecodeError position and reason */
        const char *why =
            jerr == json_tokener_error_parse_unexpected && end < n && end > i ? "Extra data" : "Expecting value";
        char ctx[96];
        snprintf(ctx, sizeof ctx, "{\"error\":\"%s\"}", why);
        write_422(a, "body", NULL, (int)(end > 0x7fffffff ? 0 : end), "json_invalid", "JSON decode error", "{}", ctx);
        return NULL;
    }
    if (!json_object_is_type(o, json_type_object)) {
        write_422(a, "body", NULL, -1, "model_attributes_type",
                  "Input should be a valid dictionary or object to extract fields from", sy_admin_jtext(o), NULL);
        json_object_put(o);
        return NULL;
    }
    return o;
}

/* Member lookup: SY_AF_ABSENT / SY_AF_NULL / SY_AF_SET with *v. */
static int member(struct json_object *o, const char *name, struct json_object **v)
{
    if (!o || !json_object_object_get_ex(o, name, v))
        return SY_AF_ABSENT;
    return *v ? SY_AF_SET : SY_AF_NULL;
}

int sy_admin_get_str(struct sy_admin_ctx *a, struct json_object *o, const char *name, const char **out)
{
    struct json_object *v;
    int r = member(o, name, &v);
    if (r != SY_AF_SET)
        return r;
    if (!json_object_is_type(v, json_type_string)) {
        sy_admin_422(a, name, "string_type", "Input should be a valid string", v);
        return SY_AF_ERR;
    }
    *out = json_object_get_string(v);
    return SY_AF_SET;
}

/* A whole-string number (Python float()/int() accept surrounding spaces). */
static int parse_num_str(const char *s, double *d)
{
    char *end;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return -1;
    errno = 0;
    *d = strtod(s, &end);
    while (isspace((unsigned char)*end))
        end++;
    return *end || errno == ERANGE ? -1 : 0;
}

int sy_admin_get_num(struct sy_admin_ctx *a, struct json_object *o, const char *name, double *out)
{
    struct json_object *v;
    int r = member(o, name, &v);
    if (r != SY_AF_SET)
        return r;
    switch (json_object_get_type(v)) {
    case json_type_int:
    case json_type_double: *out = json_object_get_double(v); return SY_AF_SET;
    case json_type_boolean: *out = json_object_get_boolean(v) ? 1 : 0; return SY_AF_SET;
    case json_type_string:
        if (parse_num_str(json_object_get_string(v), out) == 0)
            return SY_AF_SET;
        sy_admin_422(a, name, "float_parsing", "Input should be a valid number, unable to parse string as a number", v);
        return SY_AF_ERR;
    default: sy_admin_422(a, name, "float_type", "Input should be a valid number", v); return SY_AF_ERR;
    }
}

int sy_admin_get_int(struct sy_admin_ctx *a, struct json_object *o, const char *name, int64_t *out)
{
    struct json_object *v;
    double d;
    int r = member(o, name, &v);
    if (r != SY_AF_SET)
        return r;
    switch (json_object_get_type(v)) {
    case json_type_int: *out = json_object_get_int64(v); return SY_AF_SET;
    case json_type_boolean: *out = json_object_get_boolean(v) ? 1 : 0; return SY_AF_SET;
    case json_type_double:
        d = json_object_get_double(v);
        if (d != floor(d) || !isfinite(d) || fabs(d) > 9.2e18) {
            sy_admin_422(a, name, "int_from_float",
                         "Input should be a valid integer, got a number with a fractional part", v);
            return SY_AF_ERR;
        }
        *out = (int64_t)d;
        return SY_AF_SET;
    case json_type_string: {
        const char *s = json_object_get_string(v);
        char *end;
        while (isspace((unsigned char)*s))
            s++;
        errno = 0;
        long long x = strtoll(s, &end, 10);
        while (isspace((unsigned char)*end))
            end++;
        if (*s && !*end && errno != ERANGE) {
            *out = x;
            return SY_AF_SET;
        }
        sy_admin_422(a, name, "int_parsing", "Input should be a valid integer, unable to parse string as an integer",
                     v);
        return SY_AF_ERR;
    }
    default: sy_admin_422(a, name, "int_type", "Input should be a valid integer", v); return SY_AF_ERR;
    }
}

/* pydantic's accepted boolean strings; -1 when not one. */
static int bool_str(const char *s)
{
    static const char *const t[] = {"1", "on", "t", "true", "y", "yes"};
    static const char *const f[] = {"0", "off", "f", "false", "n", "no"};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        if (strcasecmp(s, t[i]) == 0)
            return 1;
        if (strcasecmp(s, f[i]) == 0)
            return 0;
    }
    return -1;
}

int sy_admin_get_bool(struct sy_admin_ctx *a, struct json_object *o, const char *name, int *out)
{
    struct json_object *v;
    int r = member(o, name, &v);
    if (r != SY_AF_SET)
        return r;
    switch (json_object_get_type(v)) {
    case json_type_boolean: *out = json_object_get_boolean(v); return SY_AF_SET;
    case json_type_int: {
        int64_t x = json_object_get_int64(v);
        if (x == 0 || x == 1) {
            *out = (int)x;
            return SY_AF_SET;
        }
        break;
    }
    case json_type_string: {
        int b = bool_str(json_object_get_string(v));
        if (b >= 0) {
            *out = b;
            return SY_AF_SET;
        }
        sy_admin_422(a, name, "bool_parsing", "Input should be a valid boolean, unable to interpret input", v);
        return SY_AF_ERR;
    }
    default: break;
    }
    sy_admin_422(a, name, "bool_type", "Input should be a valid boolean", v);
    return SY_AF_ERR;
}

int sy_admin_get_arr(struct sy_admin_ctx *a, struct json_object *o, const char *name, struct json_object **out)
{
    struct json_object *v;
    int r = member(o, name, &v);
    if (r != SY_AF_SET)
        return r;
    if (!json_object_is_type(v, json_type_array)) {
        sy_admin_422(a, name, "list_type", "Input should be a valid list", v);
        return SY_AF_ERR;
    }
    *out = v;
    return SY_AF_SET;
}

int sy_admin_get_strarr(struct sy_admin_ctx *a, struct json_object *o, const char *name, struct json_object **out)
{
    struct json_object *v;
    int r = sy_admin_get_arr(a, o, name, &v);
    if (r != SY_AF_SET)
        return r;
    size_t n = json_object_array_length(v);
    for (size_t i = 0; i < n; i++) {
        struct json_object *e = json_object_array_get_idx(v, i);
        if (!json_object_is_type(e, json_type_string)) {
            write_422(a, "body", name, (int)i, "string_type", "Input should be a valid string", sy_admin_jtext(e),
                      NULL);
            return SY_AF_ERR;
        }
    }
    *out = v;
    return SY_AF_SET;
}

int sy_admin_get_obj(struct sy_admin_ctx *a, struct json_object *o, const char *name, struct json_object **out)
{
    struct json_object *v;
    int r = member(o, name, &v);
    if (r != SY_AF_SET)
        return r;
    if (!json_object_is_type(v, json_type_object)) {
        sy_admin_422(a, name, "dict_type", "Input should be a valid dictionary", v);
        return SY_AF_ERR;
    }
    *out = v;
    return SY_AF_SET;
}

/* ---- JSON output --------------------------------------------------------- */

void sy_admin_jnum(struct sy_buf *b, double d)
{
    if (isfinite(d))
        sy_py_float_repr(b, d);
    else
        SY_BUF_LIT(b, "null");
}

void sy_admin_jstr(struct sy_buf *b, const char *s)
{
    if (!s) {
        SY_BUF_LIT(b, "null");
        return;
    }
    SY_BUF_LIT(b, "\"");
    sy_admin_json_escape(b, s, strlen(s));
    SY_BUF_LIT(b, "\"");
}

void sy_admin_limits_usage(struct sy_buf *b, int *first, int kind, const char *id)
{
    int64_t rq = 0, tk = 0, par = 0;
    if (id)
        sy_lim_usage((enum sy_lim_kind)kind, id, (double)sy_wall_s(), &rq, &tk, &par);
    sy_admin_jkey(b, first, "limits_usage");
    sy_buf_printf(b, "{\"requests\":%lld,\"tokens\":%lld,\"max_parallel_requests\":%lld}", (long long)rq, (long long)tk,
                  (long long)par);
}

int64_t sy_admin_page_offset(int64_t page, int64_t size)
{
    int64_t off;
    if (page < 1 || size < 0 || __builtin_mul_overflow(page - 1, size, &off))
        return page < 1 ? 0 : INT64_MAX;
    return off;
}

void sy_admin_jkey(struct sy_buf *b, int *first, const char *name)
{
    if (!*first)
        SY_BUF_LIT(b, ",");
    *first = 0;
    sy_admin_jstr(b, name);
    SY_BUF_LIT(b, ":");
}

/* ---- time ---------------------------------------------------------------- */

void sy_admin_iso_now(const struct sy_admin_ctx *a, char out[32])
{
    sy_iso_time(a->now, out);
}

void sy_admin_iso_after(const struct sy_admin_ctx *a, double secs, char out[32])
{
    sy_iso_time(a->now + secs, out);
}

/* ---- rows ---------------------------------------------------------------- */

int sy_admin_rows_cb(void *ud, const struct sy_srow *r)
{
    struct sy_admin_rows *rows = ud;
    if (rows->n++)
        SY_BUF_LIT(rows->b, ",");
    sy_srow_json(rows->b, r);
    return 0;
}

int sy_admin_row_cb(void *ud, const struct sy_srow *r)
{
    struct sy_admin_row *row = ud;
    if (row->found)
        return 1;
    row->names_ = calloc((size_t)r->ncols + 1, sizeof *row->names_);
    row->v_ = calloc((size_t)r->ncols + 1, sizeof *row->v_);
    if (!row->names_ || !row->v_) {
        free(row->names_);
        free(row->v_);
        row->names_ = NULL;
        row->v_ = NULL;
        return 1;
    }
    for (int i = 0; i < r->ncols; i++) {
        row->names_[i] = strdup(r->names[i] ? r->names[i] : "");
        row->v_[i] = r->v[i];
        if (r->v[i].s) {
            char *s = malloc(r->v[i].n + 1);
            if (s) {
                memcpy(s, r->v[i].s, r->v[i].n);
                s[r->v[i].n] = 0;
            }
            row->v_[i].s = s;
            if (!s)
                row->v_[i].k = SY_SV_NULL, row->v_[i].n = 0;
        }
    }
    row->r.ncols = r->ncols;
    row->r.names = (const char *const *)row->names_;
    row->r.v = row->v_;
    row->found = 1;
    return 1;
}

void sy_admin_row_free(struct sy_admin_row *row)
{
    if (row->found) {
        for (int i = 0; i < row->r.ncols; i++) {
            free(row->names_[i]);
            free((char *)row->v_[i].s);
        }
    }
    free(row->names_);
    free(row->v_);
    memset(row, 0, sizeof *row);
}

/* ---- pagination and query values ----------------------------------------- */

int sy_admin_query_int(struct sy_admin_ctx *a, const char *name, int64_t *out)
{
    char v[64], in[80];
    if (!sy_admin_query(a, name, v, sizeof v))
        return SY_AF_ABSENT;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (!v[0] || *end || errno == ERANGE) {
        snprintf(in, sizeof in, "\"%.60s\"", v);
        for (char *p = in + 1; p[1]; p++) /* keep the JSON valid */
            if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20)
                *p = '?';
        write_422(a, "query", name, -1, "int_parsing",
                  "Input should be a valid integer, unable to parse string as an integer", in, NULL);
        return SY_AF_ERR;
    }
    *out = x;
    return SY_AF_SET;
}

int sy_admin_query_bool(struct sy_admin_ctx *a, const char *name, int *out)
{
    char v[64], in[80];
    if (!sy_admin_query(a, name, v, sizeof v))
        return SY_AF_ABSENT;
    int b = bool_str(v);
    if (b < 0) {
        snprintf(in, sizeof in, "\"%.60s\"", v);
        for (char *p = in + 1; p[1]; p++)
            if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20)
                *p = '?';
        write_422(a, "query", name, -1, "bool_parsing", "Input should be a valid boolean, unable to interpret input",
                  in, NULL);
        return SY_AF_ERR;
    }
    *out = b;
    return SY_AF_SET;
}

static int bound_err(struct sy_admin_ctx *a, const char *name, int64_t v, int ge, int64_t lim)
{
    char msg[96], in[32], ctx[48];
    snprintf(msg, sizeof msg, "Input should be %s %lld", ge ? "greater than or equal to" : "less than or equal to",
             (long long)lim);
    snprintf(in, sizeof in, "\"%lld\"", (long long)v);
    snprintf(ctx, sizeof ctx, "{\"%s\":%lld}", ge ? "ge" : "le", (long long)lim);
    write_422(a, "query", name, -1, ge ? "greater_than_equal" : "less_than_equal", msg, in, ctx);
    return -1;
}

int sy_admin_page(struct sy_admin_ctx *a, int64_t *page, int64_t *size, int64_t def_size, int64_t max_size)
{
    *page = 1;
    *size = def_size;
    if (sy_admin_query_int(a, "page", page) < 0 || sy_admin_query_int(a, "size", size) < 0)
        return -1;
    if (*page < 1)
        return bound_err(a, "page", *page, 1, 1);
    if (*size < 1)
        return bound_err(a, "size", *size, 1, 1);
    if (max_size > 0 && *size > max_size)
        return bound_err(a, "size", *size, 0, max_size);
    return 0;
}

void sy_admin_page_tail(struct sy_buf *b, int64_t total, int64_t page, int64_t size)
{
    int64_t pages = size > 0 ? (total + size - 1) / size : 0;
    sy_buf_printf(b, ",\"total_count\":%lld,\"current_page\":%lld,\"total_pages\":%lld", (long long)total,
                  (long long)page, (long long)pages);
}

/* ---- callers and tokens -------------------------------------------------- */

const char *sy_admin_actor(const struct sy_admin_ctx *a)
{
    return a->caller_user_id ? a->caller_user_id : "default_user_id";
}

int sy_admin_is_hash(const char *s)
{
    size_t i = 0;
    for (; s[i]; i++)
        if (!isxdigit((unsigned char)s[i]))
            return 0;
    return i == 64;
}

void sy_admin_token_of(const char *key, char out[65])
{
    /* LiteLLM's _hash_token_if_needed: "sk-..." is hashed, anything else is
     * taken as the hash itself (text that cannot be one is hashed, so it
     * matches nothing rather than a truncated prefix) */
    if (strncmp(key, "sk-", 3) != 0 && strlen(key) == 64) {
        memcpy(out, key, 65);
        return;
    }
    sy_keys_hash(key, strlen(key), out);
}
