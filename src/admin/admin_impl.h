/* admin_impl.h - helpers shared by the management API's handler files
 * (admin/keys.c, users.c, teams.c, ...): request body parsing with json-c,
 * typed field reads with FastAPI/pydantic's 422 errors, rows written as JSON,
 * time, pagination. Private to src/admin (implemented in admin/util.c).
 *
 * Field reads. Every sy_admin_get_* reads member `name` of object o and
 * returns:
 *   SY_AF_ABSENT  (0)  the member is not there (out untouched)
 *   SY_AF_SET     (1)  present with a value of the right type (out set)
 *   SY_AF_NULL    (2)  present and JSON null (out untouched)
 *   SY_AF_ERR    (-1)  wrong type: a 422 is already written into a
 *                      (the handler returns at once)
 * Types are checked as pydantic v2 does in lax mode: a str field takes only
 * a string; a number field takes a number or a numeric string; an int field
 * an integer (or a float with no fraction, or an integer string); a bool
 * field true/false, 0/1 or "true"/"false"/"yes"/"no"/"on"/"off"/"1"/"0";
 * a list field an array (of strings for strarr); a dict field an object.
 * The 422 body is FastAPI's RequestValidationError rendering:
 *   {"detail":[{"type":"string_type","loc":["body","key_alias"],
 *               "msg":"Input should be a valid string","input":123}]}
 *
 * Usage:
 *   struct json_object *body = sy_admin_body(a);   // 400/422 written on failure
 *   if (!body) return;
 *   const char *alias = NULL;
 *   if (sy_admin_get_str(a, body, "key_alias", &alias) < 0) goto out;
 *   ...
 *   out: json_object_put(body);
 */
#ifndef SY_ADMIN_IMPL_H
#define SY_ADMIN_IMPL_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "admin/admin.h"
#include "store/store.h"

#define SY_AF_ABSENT 0
#define SY_AF_SET    1
#define SY_AF_NULL   2
#define SY_AF_ERR    (-1)

/* The request body parsed as a JSON object (caller json_object_put()s it).
 * An empty body is an empty object. Invalid JSON -> NULL with FastAPI's 422
 * {"detail":[{"type":"json_invalid","loc":["body",<offset>],"msg":"JSON decode
 * error","input":{},"ctx":{"error":"..."}}]}; valid JSON that is not an
 * object -> NULL with pydantic's 422 model_attributes_type ("Input should be
 * a valid dictionary or object to extract fields from"). */
struct json_object *sy_admin_body(struct sy_admin_ctx *a);

int sy_admin_get_str(struct sy_admin_ctx *a, struct json_object *o, const char *name, const char **out);
int sy_admin_get_num(struct sy_admin_ctx *a, struct json_object *o, const char *name, double *out);
int sy_admin_get_int(struct sy_admin_ctx *a, struct json_object *o, const char *name, int64_t *out);
int sy_admin_get_bool(struct sy_admin_ctx *a, struct json_object *o, const char *name, int *out);
/* A JSON array whose elements are all strings (out borrowed from o). */
int sy_admin_get_strarr(struct sy_admin_ctx *a, struct json_object *o, const char *name, struct json_object **out);
/* A JSON array of anything (out borrowed). */
int sy_admin_get_arr(struct sy_admin_ctx *a, struct json_object *o, const char *name, struct json_object **out);
/* A JSON object (out borrowed). */
int sy_admin_get_obj(struct sy_admin_ctx *a, struct json_object *o, const char *name, struct json_object **out);

/* Write FastAPI's 422 for one field: type ("string_type"), msg ("Input
 * should be a valid string"), loc ["body", field], input = the given value
 * (may be NULL -> null). */
void sy_admin_422(struct sy_admin_ctx *a, const char *field, const char *type, const char *msg,
                  struct json_object *input);

/* One transaction: BEGIN, body(st, a, ud), COMMIT. The body returns 0 to
 * commit, SY_ADMIN_TX_ABORT when it wrote its own answer (a 4xx) and nothing
 * it did is to be kept, or a negative SY_STORE_E* on a database error.
 * Anything but a commit rolls back, and a database error (from BEGIN, the
 * body or COMMIT) writes LiteLLM's DB error answer (sy_admin_db_error).
 * Returns 0 when committed, else SY_ADMIN_TX_ABORT or the negative code: the
 * handler then only frees what it holds. Runs on the handler's DB thread. */
#define SY_ADMIN_TX_ABORT 1
typedef int (*sy_admin_tx_fn)(struct sy_store *st, struct sy_admin_ctx *a, void *ud);
int sy_admin_tx(struct sy_store *st, struct sy_admin_ctx *a, sy_admin_tx_fn body, void *ud);

/* json-c value as compact JSON text (valid until the object is freed). */
const char *sy_admin_jtext(struct json_object *v);

/* JSON output helpers (append to b): a JSON string or null when s is NULL;
 * a member `"name":` (with a leading comma unless *first, which is cleared). */
void sy_admin_jstr(struct sy_buf *b, const char *s);
void sy_admin_jkey(struct sy_buf *b, int *first, const char *name);
/* A float as LiteLLM's JSON responses print it (json.dumps: repr, "1000.0",
 * "0.1", "1e-05"); null when not finite. */
void sy_admin_jnum(struct sy_buf *b, double d);
/* The row offset of page `page` (1-based) of `size` rows: (page - 1) * size,
 * INT64_MAX when that overflows (a page past every row: empty, not undefined). */
int64_t sy_admin_page_offset(int64_t page, int64_t size);
/* Member "limits_usage": {"requests","tokens","max_parallel_requests"}: this
 * window's use of an entity's rate limits (limits/limits.h, kind is an enum
 * sy_lim_kind; the local counters, or with Redis their shadow). A switchyard
 * extension on /key/info, /user/info, /team/info. */
void sy_admin_limits_usage(struct sy_buf *b, int *first, int kind, const char *id);

/* a->now as ISO-8601 UTC ("2026-12-03T19:00:00.123Z"), and now + secs. */
void sy_admin_iso_now(const struct sy_admin_ctx *a, char out[32]);
void sy_admin_iso_after(const struct sy_admin_ctx *a, double secs, char out[32]);

/* Row collection: pass sy_admin_rows_cb with a struct sy_admin_rows to
 * sy_store_exec; each row is appended to b as a JSON object (sy_srow_json),
 * comma-separated (write the '[' and ']' yourself). */
struct sy_admin_rows {
    struct sy_buf *b;
    int n;
};
int sy_admin_rows_cb(void *ud, const struct sy_srow *r);

/* Row capture for "read one row then decide": the first row's cells copied
 * (names and text duplicated). sy_admin_row_free releases it. */
struct sy_admin_row {
    int found;
    struct sy_srow r; /* valid when found */
    char **names_;
    struct sy_sval *v_;
};
int sy_admin_row_cb(void *ud, const struct sy_srow *r);
void sy_admin_row_free(struct sy_admin_row *row);

/* Pagination from the query string: page (>= 1, default 1) and size
 * (1..max_size, default def_size). Returns 0, or -1 with a 422 written (as
 * FastAPI's Query(ge=1, le=max) does: "greater_than_equal" /
 * "less_than_equal" / "int_parsing"). */
int sy_admin_page(struct sy_admin_ctx *a, int64_t *page, int64_t *size, int64_t def_size, int64_t max_size);
/* {"<items_name>":[...], "total_count":N, "current_page":P, "total_pages":T}
 * style tail: appends ,"total_count":..,"current_page":..,"total_pages":.. */
void sy_admin_page_tail(struct sy_buf *b, int64_t total, int64_t page, int64_t size);

/* Integer query parameter; returns SY_AF_ABSENT / SY_AF_SET / SY_AF_ERR (422 written). */
int sy_admin_query_int(struct sy_admin_ctx *a, const char *name, int64_t *out);
/* Boolean query parameter (FastAPI: true/false/1/0/yes/no/on/off). */
int sy_admin_query_bool(struct sy_admin_ctx *a, const char *name, int *out);

/* The caller's id as LiteLLM records it in created_by / updated_by: the
 * caller key's user_id, or "default_user_id" (LiteLLM's master-key user). */
const char *sy_admin_actor(const struct sy_admin_ctx *a);

/* 1 when s is 64 lowercase/uppercase hex chars (a hashed token). */
int sy_admin_is_hash(const char *s);
/* A key as given -> its token, as LiteLLM's _hash_token_if_needed: "sk-..."
 * is hashed (sha256 hex); a 64-char string is taken as the hash itself. */
void sy_admin_token_of(const char *key, char out[65]);

#endif
