/* validate.h - the management API's input gate (admin/validate.c): every
 * request's path, query and body checked once, on the DB thread, before the
 * route's handler runs (stages/admin.c). What it refuses, and why, is the
 * "Limits and validation" section of docs/admin-api.md.
 *
 *   if (sy_admin_validate(a) == 0)   // 0: go on; -1: a->status / a->out hold the refusal
 *       rt->fn(st, a);
 *
 * sy_admin_check is the same gate on plain values (unit tests, fuzzing).
 */
#ifndef SY_ADMIN_VALIDATE_H
#define SY_ADMIN_VALIDATE_H

#include <stddef.h>

#include "admin/admin.h"
#include "core/buf.h"
#include "core/utf8.h"

/* Documented maxima (bytes of UTF-8). */
#define SY_ADMIN_MAX_ID         127            /* ids, aliases, custom keys */
#define SY_ADMIN_MAX_EMAIL      254            /* user_email (RFC 5321's path limit) */
#define SY_ADMIN_MAX_QUERY      511            /* any other query parameter value */
#define SY_ADMIN_MAX_QUERY_LIST 4095           /* comma-separated query lists (user_ids, tags) */
#define SY_ADMIN_MAX_DEPTH      64             /* JSON nesting */
#define SY_ADMIN_MAX_INT32      2147483647LL   /* INTEGER columns (max_parallel_requests) */
#define SY_ADMIN_MAX_TIME       253402300799.0 /* 9999-12-31T23:59:59Z: the last time the store writes */

struct sy_admin_req {
    const char *path; /* raw request path (may be percent-encoded) */
    size_t path_len;
    const char *query; /* raw query string, may be NULL */
    size_t query_len;
    const char *body; /* may be NULL */
    size_t body_len;
    const char *master_key; /* NULL when auth is off */
    size_t master_key_len;
    double now; /* unix seconds: a duration must not reach past the year 9999 from here */
};

/* 0 when the request may go on; -1 with *status (400 or 422) and the error
 * JSON (LiteLLM's ProxyException shape, or FastAPI's 422 detail list for a
 * body that is not JSON or a field of the wrong type) written into out. */
int sy_admin_check(const struct sy_admin_req *rq, int *status, struct sy_buf *out);

/* sy_admin_check on a's request; the refusal goes into a->status / a->out. */
int sy_admin_validate(struct sy_admin_ctx *a);

/* sy_buf_json_escape that never emits invalid UTF-8: a byte that does not
 * start a valid sequence is written as \ufffd (sy_utf8_json_escape of
 * core/utf8.h, which also holds sy_utf8_seq / sy_utf8_check). */
static inline int sy_admin_json_escape(struct sy_buf *b, const char *s, size_t n)
{
    return sy_utf8_json_escape(b, s, n);
}
/* LiteLLM's ProxyException body into b:
 * {"error":{"message":..,"type":..,"param":..,"code":"<status>"}} (NULL type
 * or param: "None"). */
void sy_admin_error_body(struct sy_buf *b, int status, const char *type, const char *param, const char *msg);

#endif
