/* keys.c - LiteLLM's virtual-key management API on "LiteLLM_VerificationToken"
 * (proxy/management_endpoints/key_management_endpoints.py).
 *
 *   | route                          | body / query                         | answer                                  |
 *   |--------------------------------|--------------------------------------|-----------------------------------------|
 *   | POST /key/generate             | GenerateKeyRequest                   | GenerateKeyResponse: key (plaintext,    |
 *   |                                |                                      | only here), token = token_id = hash, row|
 *   | POST /key/update               | UpdateKeyRequest (key required)      | {"key": as given, ...updated row}       |
 *   | POST /key/delete               | {"keys":[..]} or {"key_aliases":[..]}| {"deleted_keys": as given}              |
 *   | GET  /key/info?key=            | (none: the caller's own key)         | {"key":..,"info":{row - token,          |
 *   |                                |                                      |   litellm_budget_table}}                |
 *   | GET  /key/list                 | page size user_id team_id ...        | {"keys":[hash|row],"total_count",       |
 *   |                                |                                      |  "current_page","total_pages"}          |
 *   | GET  /key/aliases              | page size search                     | {"aliases":[..],...,"size"}             |
 *   | POST /key/regenerate           | RegenerateKeyRequest (key)           | GenerateKeyResponse (new key, token_id) |
 *   | POST /key/{key}/regenerate     | RegenerateKeyRequest                 |   same                                  |
 *   | POST /key/block, /key/unblock  | {"key": ...}                         | the updated row                         |
 *   | POST /key/health               | -                                    |
 * {"key":"healthy","logging_callbacks":null} |
 *
 * Keys are named by their plaintext ("sk-...", hashed here) or by the
 * sha256 hex itself (LiteLLM's _hash_token_if_needed). Request fields map to
 * the row as LiteLLM's generate_key_helper_fn / prepare_key_update_data do:
 * max_budget -> max_budget, duration -> expires (now + duration),
 * budget_duration -> budget_reset_at (sy_duration_next), model_rpm_limit,
 * model_tpm_limit, guardrails, prompts, tags, enforced_params,
 * temp_budget_* -> metadata.<name>; key_type -> allowed_routes
 * (llm_api_routes / management_routes / info_routes); soft_budget -> a new
 * "LiteLLM_BudgetTable" row whose id goes to budget_id; object_permission ->
 * a "LiteLLM_ObjectPermissionTable" row whose id goes to object_permission_id
 * (admin/objperm.c; only admins set it: it grants MCP servers and tools).
 * allowed_vector_store_indexes and send_invite_email are accepted and
 * ignored. Generate ignores nulls (exclude_none); update writes nulls
 * (exclude_unset) except into NOT NULL columns, which keep their value.
 *
 * Deleted and regenerated keys' old rows are copied into
 * "LiteLLM_DeletedVerificationToken" first, as LiteLLM does.
 *
 * Errors are LiteLLM's texts. Where LiteLLM raises HTTPException(detail={...})
 * the message is the Python repr of that dict ("{'error': 'No keys found'}"),
 * which is what its clients see.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <http_parser.h>

#include "admin/admin_impl.h"
#include "limits/limits.h"
#include "admin/entity_impl.h"
#include "core/buf.h"
#include "core/pyrepr.h"
#include "keys/keys.h"
#include "spend/spend.h"

#define T_KEYS          "\"LiteLLM_VerificationToken\""
#define T_DELETED       "\"LiteLLM_DeletedVerificationToken\""
#define UI_SESSION_TEAM "litellm-dashboard" /* LiteLLM's UI_SESSION_TOKEN_TEAM_ID, hidden from lists */

/* ---- Python renderings ---------------------------------------------------- */

/* repr(float) into a char array, for messages built with a format. */
static void pyfloat(double d, char out[40])
{
    struct sy_buf b;
    sy_buf_init(&b, 40);
    if (sy_py_float_repr(&b, d) == 0 && b.p)
        snprintf(out, 40, "%s", b.p);
    else
        out[0] = 0;
    sy_buf_free(&b);
}

/* ---- request fields ------------------------------------------------------ */

enum kkind { K_STR, K_NUM, K_INT, K_BOOL, K_STRARR, K_OBJ, K_LIST };
enum kdest { D_TEXT, D_NUM, D_INT, D_BOOL, D_TEXTARR, D_JSON, D_META, D_SPECIAL, D_IGNORE };
#define F_NOTNULL 0x1 /* the column is NOT NULL: an explicit null is ignored on update */
#define F_GEN     0x2 /* /key/generate only */
#define F_UPD     0x4 /* /key/update only */
#define F_ENUM    0x8 /* rpm_limit_type / tpm_limit_type literal */

struct kfield {
    const char *name;
    enum kkind kind;
    enum kdest dest;
    unsigned flags;
};

/* Request fields (GenerateKeyRequest / UpdateKeyRequest / RegenerateKeyRequest)
 * and where each goes; the column is the field's name. */
static const struct kfield KF[] = {
    {"key_alias", K_STR, D_TEXT, 0},
    {"duration", K_STR, D_SPECIAL, 0},
    {"models", K_STRARR, D_TEXTARR, 0},
    {"spend", K_NUM, D_NUM, F_NOTNULL},
    {"max_budget", K_NUM, D_NUM, 0},
    {"user_id", K_STR, D_TEXT, 0},
    {"team_id", K_STR, D_TEXT, 0},
    {"agent_id", K_STR, D_TEXT, 0},
    {"organization_id", K_STR, D_TEXT, 0},
    {"project_id", K_STR, D_TEXT, 0},
    {"budget_id", K_STR, D_TEXT, 0},
    {"max_parallel_requests", K_INT, D_INT, 0},
    {"tpm_limit", K_INT, D_INT, 0},
    {"rpm_limit", K_INT, D_INT, 0},
    {"metadata", K_OBJ, D_SPECIAL, 0},
    {"budget_duration", K_STR, D_SPECIAL, 0},
    {"allowed_cache_controls", K_STRARR, D_TEXTARR, 0},
    {"config", K_OBJ, D_JSON, F_NOTNULL},
    {"permissions", K_OBJ, D_JSON, F_NOTNULL},
    {"model_max_budget", K_OBJ, D_JSON, F_NOTNULL},
    {"aliases", K_OBJ, D_JSON, F_NOTNULL},
    {"router_settings", K_OBJ, D_JSON, 0},
    {"budget_limits", K_LIST, D_JSON, 0},
    {"blocked", K_BOOL, D_BOOL, 0},
    {"allowed_routes", K_STRARR, D_TEXTARR, 0},
    {"policies", K_STRARR, D_TEXTARR, 0},
    {"access_group_ids", K_STRARR, D_TEXTARR, 0},
    {"auto_rotate", K_BOOL, D_BOOL, 0},
    {"rotation_interval", K_STR, D_SPECIAL, 0},
    {"model_rpm_limit", K_OBJ, D_META, 0},
    {"model_tpm_limit", K_OBJ, D_META, 0},
    {"guardrails", K_STRARR, D_META, 0},
    {"prompts", K_STRARR, D_META, 0},
    {"tags", K_STRARR, D_META, 0},
    {"enforced_params", K_STRARR, D_META, 0},
    {"allowed_passthrough_routes", K_LIST, D_META, 0},
    {"rpm_limit_type", K_STR, D_META, F_ENUM},
    {"tpm_limit_type", K_STR, D_META, F_ENUM},
    {"temp_budget_increase", K_NUM, D_META, F_UPD},
    {"temp_budget_expiry", K_STR, D_META, F_UPD},
    {"soft_budget", K_NUM, D_SPECIAL, F_GEN},
    {"key_type", K_STR, D_SPECIAL, F_GEN},
    {"send_invite_email", K_BOOL, D_IGNORE, F_GEN},
    {"object_permission", K_OBJ, D_IGNORE, 0},
    {"allowed_vector_store_indexes", K_LIST, D_IGNORE, 0},
};

enum kmode { M_GEN, M_UPD, M_REGEN };

#define KS_MAX 64
/* Collected column values (a statement's SET list / INSERT columns). */
struct kset {
    const char *col[KS_MAX];
    struct sy_sval v[KS_MAX];
    int n;
    char *owned[KS_MAX]; /* strings the values point into */
    int nowned;
    struct json_object *meta; /* metadata to write (owned), NULL: leave as is */
    int have_soft;
    double soft_budget;
    double expires_at; /* from duration: unix s; -1 never ("-1" / null); 0 not given */
    const char *key_type;
};

static void ks_put(struct kset *ks, const char *col, struct sy_sval v)
{
    for (int i = 0; i < ks->n; i++)
        if (strcmp(ks->col[i], col) == 0) {
            ks->v[i] = v;
            return;
        }
    if (ks->n < KS_MAX) {
        ks->col[ks->n] = col;
        ks->v[ks->n++] = v;
    }
}

static const char *ks_own(struct kset *ks, char *s)
{
    if (!s)
        return NULL;
    if (ks->nowned >= KS_MAX) {
        free(s);
        return NULL;
    }
    ks->owned[ks->nowned++] = s;
    return s;
}

static const char *ks_dup(struct kset *ks, const char *s)
{
    return ks_own(ks, s ? strdup(s) : NULL);
}

static void ks_free(struct kset *ks)
{
    for (int i = 0; i < ks->nowned; i++)
        free(ks->owned[i]);
    if (ks->meta)
        json_object_put(ks->meta);
    memset(ks, 0, sizeof *ks);
}

/* Read one field per its spec; SY_AF_* with the value as a json_object in *v
 * (for SET; NULL for null). */
static int read_field(struct sy_admin_ctx *a, struct json_object *body, const struct kfield *f, struct sy_sval *sv,
                      struct kset *ks)
{
    const char *s = NULL;
    double d;
    int64_t i;
    int b;
    struct json_object *o = NULL;
    int r;
    /* pydantic's check_max_budget: "" is None */
    if (strcmp(f->name, "max_budget") == 0 && json_object_object_get_ex(body, "max_budget", &o) && o &&
        json_object_is_type(o, json_type_string) && json_object_get_string_len(o) == 0)
        return SY_AF_NULL;
    switch (f->kind) {
    case K_STR:
        r = sy_admin_get_str(a, body, f->name, &s);
        if (r == SY_AF_SET)
            *sv = sy_sv_text(s);
        return r;
    case K_NUM:
        r = sy_admin_get_num(a, body, f->name, &d);
        if (r == SY_AF_SET)
            *sv = sy_sv_num(d);
        return r;
    case K_INT:
        r = sy_admin_get_int(a, body, f->name, &i);
        if (r == SY_AF_SET)
            *sv = sy_sv_int(i);
        return r;
    case K_BOOL:
        r = sy_admin_get_bool(a, body, f->name, &b);
        if (r == SY_AF_SET)
            *sv = sy_sv_bool(b);
        return r;
    case K_STRARR: r = sy_admin_get_strarr(a, body, f->name, &o); break;
    case K_OBJ: r = sy_admin_get_obj(a, body, f->name, &o); break;
    case K_LIST:
    default: r = sy_admin_get_arr(a, body, f->name, &o); break;
    }
    if (r == SY_AF_SET) {
        const char *t = ks_dup(ks, sy_admin_jtext(o));
        sv->k = f->kind == K_STRARR ? SY_SV_TEXTARR : SY_SV_JSON;
        sv->s = t ? t : (f->kind == K_OBJ ? "{}" : "[]");
        sv->n = strlen(sv->s);
    }
    return r;
}

/* The metadata entry of a read field (json-c value). */
static struct json_object *field_json(const struct kfield *f, const struct sy_sval *sv)
{
    switch (sv->k) {
    case SY_SV_TEXT: return json_object_new_string(sv->s);
    case SY_SV_NUM: return json_object_new_double(sv->d);
    case SY_SV_INT: return json_object_new_int64(sv->i);
    case SY_SV_BOOL: return json_object_new_boolean((int)sv->i);
    case SY_SV_JSON:
    case SY_SV_TEXTARR: return json_tokener_parse(sv->s);
    default: (void)f; return NULL;
    }
}

/* Collect every field of body into ks for mode. existing_meta: the row's
 * metadata text (update), NULL for generate. Returns 0, or -1 with the
 * error written. */
static int collect(struct sy_admin_ctx *a, struct json_object *body, enum kmode mode, const char *existing_meta,
                   struct kset *ks)
{
    struct json_object *meta_in = NULL;
    int meta_r = sy_admin_get_obj(a, body, "metadata", &meta_in);
    if (meta_r == SY_AF_ERR)
        return -1;
    /* metadata: the given object, else (update) the row's, else {} */
    if (meta_r == SY_AF_SET)
        ks->meta = json_tokener_parse(sy_admin_jtext(meta_in));
    else if (existing_meta)
        ks->meta = json_tokener_parse(existing_meta);
    if (!ks->meta || !json_object_is_type(ks->meta, json_type_object)) {
        if (ks->meta)
            json_object_put(ks->meta);
        ks->meta = json_object_new_object();
    }
    for (size_t k = 0; k < sizeof KF / sizeof KF[0]; k++) {
        const struct kfield *f = &KF[k];
        struct sy_sval sv = sy_sv_null();
        if (strcmp(f->name, "metadata") == 0)
            continue;
        if ((f->flags & F_GEN) && mode != M_GEN)
            continue;
        if ((f->flags & F_UPD) && mode != M_UPD)
            continue;
        int r = read_field(a, body, f, &sv, ks);
        if (r == SY_AF_ERR)
            return -1;
        if (r == SY_AF_ABSENT)
            continue;
        if (r == SY_AF_NULL && (mode == M_GEN || f->dest == D_META || (f->flags & F_NOTNULL)))
            continue; /* generate: exclude_none; metadata fields: exclude_none */
        if ((f->flags & F_ENUM) && strcmp(sv.s, "guaranteed_throughput") != 0 &&
            strcmp(sv.s, "best_effort_throughput") != 0 && strcmp(sv.s, "dynamic") != 0) {
            sy_admin_422(a, f->name, "literal_error",
                         "Input should be 'guaranteed_throughput', 'best_effort_throughput' or 'dynamic'",
                         json_object_object_get(body, f->name));
            return -1;
        }
        switch (f->dest) {
        case D_TEXT:
        case D_NUM:
        case D_INT:
        case D_BOOL:
        case D_TEXTARR:
        case D_JSON: ks_put(ks, f->name, sv); break;
        case D_META: json_object_object_add(ks->meta, f->name, field_json(f, &sv)); break;
        case D_IGNORE: break;
        case D_SPECIAL:
            if (strcmp(f->name, "duration") == 0) {
                if (r == SY_AF_NULL || strcmp(sv.s, "-1") == 0) {
                    ks_put(ks, "expires", sy_sv_null());
                    ks->expires_at = -1;
                } else if (sv.s[0]) {
                    double secs = sy_duration_seconds(sv.s);
                    if (secs < 0) {
                        sy_admin_error(a, 400, "bad_request_error", "duration",
                                       "Invalid duration format: %s. Expected e.g. 30s, 30m, 30h, 30d, 1mo", sv.s);
                        return -1;
                    }
                    char *t = malloc(32);
                    if (t)
                        sy_admin_iso_after(a, secs, t);
                    ks_put(ks, "expires", sy_sv_ts(ks_own(ks, t)));
                    ks->expires_at = a->now + secs;
                }
            } else if (strcmp(f->name, "budget_duration") == 0) {
                if (r == SY_AF_SET && sv.s[0]) {
                    double next = sy_duration_next(sv.s, a->now);
                    if (next < 0) {
                        sy_admin_error(a, 400, "bad_request_error", "budget_duration",
                                       "Invalid duration format: %s. Expected e.g. 30s, 30m, 30h, 30d, 1mo", sv.s);
                        return -1;
                    }
                    char *t = malloc(32);
                    if (t)
                        sy_iso_time(next, t);
                    ks_put(ks, "budget_duration", sy_sv_text(ks_dup(ks, sv.s)));
                    ks_put(ks, "budget_reset_at", sy_sv_ts(ks_own(ks, t)));
                }
            } else if (strcmp(f->name, "rotation_interval") == 0) {
                ks_put(ks, "rotation_interval", r == SY_AF_SET ? sy_sv_text(ks_dup(ks, sv.s)) : sy_sv_null());
            } else if (strcmp(f->name, "soft_budget") == 0) {
                ks->have_soft = 1;
                ks->soft_budget = sv.d;
            } else if (strcmp(f->name, "key_type") == 0) {
                if (strcmp(sv.s, "llm_api") != 0 && strcmp(sv.s, "management") != 0 && strcmp(sv.s, "read_only") != 0 &&
                    strcmp(sv.s, "default") != 0) {
                    sy_admin_422(a, "key_type", "enum",
                                 "Input should be 'llm_api', 'management', 'read_only' or 'default'",
                                 json_object_object_get(body, "key_type"));
                    return -1;
                }
                ks->key_type = ks_dup(ks, sv.s);
            }
            break;
        }
    }
    /* auto_rotate with an interval: key_rotation_at = now + interval */
    for (int i = 0; i < ks->n; i++) {
        if (strcmp(ks->col[i], "auto_rotate") == 0 && ks->v[i].i) {
            for (int j = 0; j < ks->n; j++) {
                if (strcmp(ks->col[j], "rotation_interval") == 0 && ks->v[j].s) {
                    double secs = sy_duration_seconds(ks->v[j].s);
                    if (secs >= 0) {
                        char *t = malloc(32);
                        if (t)
                            sy_admin_iso_after(a, secs, t);
                        ks_put(ks, "key_rotation_at", sy_sv_ts(ks_own(ks, t)));
                    }
                }
            }
        }
    }
    /* key_type -> allowed_routes (handle_key_type) */
    if (ks->key_type) {
        const char *routes = strcmp(ks->key_type, "llm_api") == 0      ? "[\"llm_api_routes\"]"
                             : strcmp(ks->key_type, "management") == 0 ? "[\"management_routes\"]"
                             : strcmp(ks->key_type, "read_only") == 0  ? "[\"info_routes\"]"
                                                                       : NULL;
        if (routes)
            ks_put(ks, "allowed_routes", sy_sv_textarr(routes));
    }
    /* UpdateKeyRequest.validate_temp_budget */
    if (mode == M_UPD) {
        struct json_object *x;
        int inc = json_object_object_get_ex(body, "temp_budget_increase", &x) && x;
        int exp = json_object_object_get_ex(body, "temp_budget_expiry", &x) && x;
        if (inc != exp) {
            a->status = 422;
            sy_buf_reset(&a->out);
            SY_BUF_LIT(&a->out, "{\"detail\":[{\"type\":\"value_error\",\"loc\":[\"body\"],\"msg\":\"Value error, "
                                "temp_budget_increase and temp_budget_expiry must be set together\",\"input\":");
            sy_buf_puts(&a->out, sy_admin_jtext(body));
            SY_BUF_LIT(&a->out, "}]}");
            return -1;
        }
    }
    return 0;
}

/* ---- small store helpers ------------------------------------------------- */

static int count_cb(void *ud, const struct sy_srow *r)
{
    *(int64_t *)ud = r->ncols > 0 ? sy_srow_int(r, r->names[0], 0) : 0;
    return 1;
}

/* The key row for token; 1 found, 0 not, negative store error. */
static int load_key(struct sy_store *st, const char *token, struct sy_admin_row *row)
{
    struct sy_sval p = sy_sv_text(token);
    int rc = sy_store_exec(st, "SELECT * FROM " T_KEYS " WHERE \"token\" = $1", 1, &p, sy_admin_row_cb, row);
    return rc < 0 ? rc : row->found;
}

/* Another key (not `self`, may be NULL) already has this alias: 1, 0, or negative. */
static int alias_taken(struct sy_store *st, const char *alias, const char *self)
{
    struct sy_sval p[2] = {sy_sv_text(alias), sy_sv_text(self ? self : "")};
    return sy_store_exec(st, "SELECT 1 FROM " T_KEYS " WHERE \"key_alias\" = $1 AND \"token\" <> $2 LIMIT 1", 2, p,
                         NULL, NULL);
}

static int alias_check(struct sy_admin_ctx *a, struct sy_store *st, struct kset *ks, const char *self)
{
    for (int i = 0; i < ks->n; i++) {
        if (strcmp(ks->col[i], "key_alias") != 0 || ks->v[i].k != SY_SV_TEXT)
            continue;
        int rc = alias_taken(st, ks->v[i].s, self);
        if (rc < 0) {
            sy_admin_db_error(a, st, rc);
            return -1;
        }
        if (rc > 0) {
            sy_admin_error(a, 400, "bad_request_error", "key_alias",
                           "Key with alias '%s' already exists. Unique key aliases across all keys are required.",
                           ks->v[i].s);
            return -1;
        }
    }
    return 0;
}

/* Copy the row of token into "LiteLLM_DeletedVerificationToken" (LiteLLM's
 * _persist_deleted_verification_tokens). */
#define KEY_COPY_COLS                                                                                               \
    "\"token\", \"key_name\", \"key_alias\", \"soft_budget_cooldown\", \"spend\", \"expires\", \"models\", "        \
    "\"aliases\", \"config\", \"user_id\", \"team_id\", \"permissions\", \"max_parallel_requests\", \"metadata\", " \
    "\"blocked\", \"tpm_limit\", \"rpm_limit\", \"max_budget\", \"budget_duration\", \"budget_reset_at\", "         \
    "\"allowed_cache_controls\", \"allowed_routes\", \"model_spend\", \"model_max_budget\", \"budget_id\", "        \
    "\"organization_id\", \"object_permission_id\", \"created_at\", \"created_by\", \"updated_at\", "               \
    "\"updated_by\", \"rotation_count\", \"auto_rotate\", \"rotation_interval\", \"last_rotation_at\", "            \
    "\"key_rotation_at\", \"router_settings\", \"policies\", \"access_group_ids\", \"last_active\", "               \
    "\"project_id\", \"key_type\""

static int persist_deleted(struct sy_admin_ctx *a, struct sy_store *st, const char *token)
{
    char id[37], now[32];
    sy_admin_uuid(id);
    sy_admin_iso_now(a, now);
    struct sy_sval p[4] = {sy_sv_text(id), sy_sv_text(sy_admin_actor(a)), sy_sv_text(a->caller_token),
                           sy_sv_text(token)};
    int rc = sy_store_exec(st,
                           "INSERT INTO " T_DELETED " (\"id\", " KEY_COPY_COLS
                           ", \"deleted_by\", \"deleted_by_api_key\") SELECT $1, " KEY_COPY_COLS ", $2, $3 FROM " T_KEYS
                           " WHERE \"token\" = $4",
                           4, p, NULL, NULL);
    if (rc < 0)
        return rc;
    struct sy_sval q[2] = {sy_sv_ts(now), sy_sv_text(id)};
    rc = sy_store_exec(st, "UPDATE " T_DELETED " SET \"deleted_at\" = $1 WHERE \"id\" = $2", 2, q, NULL, NULL);
    return rc < 0 ? rc : 0;
}

/* Append the members of a row object (without braces) to b; first tells
 * whether a comma is needed before. `skip` names one column to leave out. */
static void row_members(struct sy_buf *b, const struct sy_srow *r, const char *skip, int *first)
{
    for (int i = 0; i < r->ncols; i++) {
        if (skip && strcmp(r->names[i], skip) == 0)
            continue;
        sy_admin_jkey(b, first, r->names[i]);
        sy_sval_json(b, &r->v[i]);
    }
}

/* sy__may_manage_key with a store error written: 1 may, 0 may not, -1 error. */
static int may_manage(struct sy_store *st, struct sy_admin_ctx *a, const struct sy_srow *r)
{
    int rc = sy__may_manage_key(st, a, r);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        return -1;
    }
    return rc;
}

/* ---- POST /key/generate -------------------------------------------------- */

static const char *ks_text(const struct kset *ks, const char *col)
{
    for (int i = 0; i < ks->n; i++)
        if (strcmp(ks->col[i], col) == 0)
            return ks->v[i].k == SY_SV_TEXT ? ks->v[i].s : NULL;
    return NULL;
}

/* ---- what a non-admin may put on a key ------------------------------------
 * switchyard's rule (LiteLLM only checks the user_id and team membership): a
 * key an internal user or team admin makes or changes never has more than
 * the caller's own key and user have - models, max_budget, rpm/tpm/parallel
 * limits, lifetime - and never the fields only an admin sets (spend,
 * blocked, budget_id, a temporary budget increase, aliases, config,
 * permissions, organization_id, allowed_routes on update). On /key/generate
 * a field left out takes the caller's value. */

static const char *const ADMIN_ONLY[] = {
    "spend",   "blocked", "budget_id",   "temp_budget_increase", "temp_budget_expiry",
    "aliases", "config",  "permissions", "organization_id",      "object_permission",
    NULL};

static int ks_find(const struct kset *ks, const char *col)
{
    for (int i = 0; i < ks->n; i++)
        if (strcmp(ks->col[i], col) == 0)
            return i;
    return -1;
}

static void cap_denied(struct sy_admin_ctx *a, const char *field, const char *fmt, double want, double have)
{
    char w[40], h[40];
    pyfloat(want, w);
    pyfloat(have, h);
    sy_admin_error(a, 403, "auth_error", field, fmt, field, w, h);
}

/* A number cap: the key's column col may not exceed have (< 0: no cap). */
static int cap_num(struct sy_admin_ctx *a, struct kset *ks, const char *col, double have, int gen)
{
    if (have < 0)
        return 0;
    int i = ks_find(ks, col);
    if (i < 0) {
        if (gen)
            ks_put(ks, col, strcmp(col, "max_budget") == 0 ? sy_sv_num(have) : sy_sv_int((int64_t)have));
        return 0;
    }
    double v = ks->v[i].k == SY_SV_NUM ? ks->v[i].d : ks->v[i].k == SY_SV_INT ? (double)ks->v[i].i : INFINITY;
    if (v > have) {
        cap_denied(a, col, "%s=%s is more than you have (%s): a key you make cannot exceed your own key and user", v,
                   have);
        return -1;
    }
    return 0;
}

static int within_caller(struct sy_admin_ctx *a, struct json_object *body, struct kset *ks, int gen)
{
    const struct sy_keyinfo *ck = a->caller_key;
    if (a->is_admin || !ck)
        return 0;
    for (int i = 0; ADMIN_ONLY[i]; i++) {
        struct json_object *v;
        if (json_object_object_get_ex(body, ADMIN_ONLY[i], &v) && v) {
            sy_admin_error(a, 403, "auth_error", ADMIN_ONLY[i], "Only proxy admin can set '%s' on a key",
                           ADMIN_ONLY[i]);
            return -1;
        }
    }
    if (!gen && ks_find(ks, "allowed_routes") >= 0) {
        sy_admin_error(a, 403, "auth_error", "allowed_routes", "Only proxy admin can set 'allowed_routes' on a key");
        return -1;
    }
    /* models: each one the caller may use; none given -> the caller's key's list */
    int mi = ks_find(ks, "models");
    struct json_object *arr = mi >= 0 && ks->v[mi].s ? json_tokener_parse(ks->v[mi].s) : NULL;
    size_t nm = arr && json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
    if (a->model_allowed) {
        for (size_t i = 0; i < nm; i++) {
            const char *m = json_object_get_string(json_object_array_get_idx(arr, i));
            if (!a->model_allowed(a->model_ud, m)) {
                sy_admin_error(a, 403, "auth_error", "models",
                               "You cannot give a key model=%s: it is not one of the models you may use", m);
                json_object_put(arr);
                return -1;
            }
        }
        if (!nm && (gen || mi >= 0)) { /* [] would mean every model */
            struct json_object *mine = json_object_new_array();
            /* all-team-models as the team's list: the new key may have no team */
            for (size_t i = 0; i < ck->nmodels; i++)
                if (strcmp(ck->models[i], "all-team-models") != 0 || !ck->team)
                    json_object_array_add(mine, json_object_new_string(ck->models[i]));
            for (size_t i = 0; ck->team && i < ck->team->nmodels; i++) {
                int all = !ck->nmodels;
                for (size_t j = 0; j < ck->nmodels && !all; j++)
                    all = strcmp(ck->models[j], "all-team-models") == 0;
                if (all)
                    json_object_array_add(mine, json_object_new_string(ck->team->models[i]));
            }
            const char *txt = json_object_to_json_string_ext(mine, JSON_C_TO_STRING_PLAIN);
            ks_put(ks, "models", sy_sv_textarr(ks_dup(ks, txt)));
            json_object_put(mine);
        }
    }
    json_object_put(arr);
    double mb = ck->key.max_budget;
    if (ck->user && ck->user->max_budget >= 0 && (mb < 0 || ck->user->max_budget < mb))
        mb = ck->user->max_budget;
    if (cap_num(a, ks, "max_budget", mb, gen) < 0 || cap_num(a, ks, "rpm_limit", (double)ck->key.rpm_limit, gen) < 0 ||
        cap_num(a, ks, "tpm_limit", (double)ck->key.tpm_limit, gen) < 0 ||
        cap_num(a, ks, "max_parallel_requests", (double)ck->key.max_parallel, gen) < 0)
        return -1;
    /* a budget that resets no sooner than the caller's key's */
    const char *bd = ks_text(ks, "budget_duration");
    if (ck->key.max_budget >= 0 && bd) {
        double have = ck->key.budget_duration ? sy_duration_seconds(ck->key.budget_duration) : INFINITY;
        if (sy_duration_seconds(bd) < have) {
            sy_admin_error(a, 403, "auth_error", "budget_duration",
                           "budget_duration=%s resets sooner than your own key's budget (%s)", bd,
                           ck->key.budget_duration ? ck->key.budget_duration : "never");
            return -1;
        }
    }
    /* lifetime: not past the caller's key's expiry */
    if (ck->expires > 0) {
        if (ks->expires_at == 0 && gen) {
            char *t = malloc(32);
            if (t)
                sy_admin_iso_after(a, ck->expires - a->now, t);
            ks_put(ks, "expires", sy_sv_ts(ks_own(ks, t)));
        } else if (ks->expires_at < 0 || ks->expires_at > ck->expires + 1) {
            sy_admin_error(a, 403, "auth_error", "duration",
                           "duration: a key you make cannot outlive your own key (it expires in %.0f s)",
                           ck->expires - a->now);
            return -1;
        }
    }
    return 0;
}

/* object_permission grants MCP servers and tools: proxy admins only. 0, or
 * -1 with the answer written. */
static int objperm_admin(struct sy_admin_ctx *a, const struct json_object *op)
{
    if (!op || a->is_admin)
        return 0;
    sy_admin_error(a, 403, "auth_error", "object_permission", "Only proxy admin can set 'object_permission' on a key");
    return -1;
}

/* A non-admin's team key: the caller must be a member of the team
 * (LiteLLM's _team_key_operation_team_member_check). 0 ok, -1 written. */
static int team_member_check(struct sy_store *st, struct sy_admin_ctx *a, const char *team_id)
{
    if (a->is_admin || !team_id)
        return 0;
    int rc = sy__team_role(st, team_id, a->caller_user_id, NULL, 0);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        return -1;
    }
    if (rc == 0) {
        sy_admin_error(a, 400, "bad_request_error", "team_id", "User=%s not assigned to team=%s",
                       a->caller_user_id ? a->caller_user_id : "None", team_id);
        return -1;
    }
    return 0;
}

static void key_generate(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct kset ks;
    struct sy_admin_row row = {0};
    char key[256], token[65], key_name[32], now[32], budget_id[37];
    const char *custom = NULL;
    int in_tx = 0, rc;
    memset(&ks, 0, sizeof ks);
    struct json_object *body = sy_admin_body(a);
    if (!body)
        goto out;
    struct json_object *op = NULL;
    if (sy_admin_get_str(a, body, "key", &custom) < 0 || collect(a, body, M_GEN, NULL, &ks) < 0 ||
        sy__objperm_get(a, body, &op) < 0 || objperm_admin(a, op) < 0)
        goto out;
    double mb = 0;
    for (int i = 0; i < ks.n; i++)
        if (strcmp(ks.col[i], "max_budget") == 0 && ks.v[i].k == SY_SV_NUM && (mb = ks.v[i].d) < 0) {
            char f[40];
            pyfloat(mb, f);
            sy__err_dict(a, 400, "internal_server_error", "max_budget cannot be negative. Received: %s", f);
            goto out;
        }
    if (ks.have_soft && ks.soft_budget < 0) {
        char f[40];
        pyfloat(ks.soft_budget, f);
        sy__err_dict(a, 400, "internal_server_error", "soft_budget cannot be negative. Received: %s", f);
        goto out;
    }
    /* a non-admin creates keys only for itself (_is_allowed_to_make_key_request),
     * in a team it belongs to, and within what it has */
    const char *uid = ks_text(&ks, "user_id");
    if (!a->is_admin && uid && (!a->caller_user_id || strcmp(uid, a->caller_user_id) != 0)) {
        sy_admin_error(a, 403, "internal_server_error", NULL,
                       "User can only create keys for themselves. Got user_id=%s, Your ID=%s", uid,
                       a->caller_user_id ? a->caller_user_id : "None");
        goto out;
    }
    if (!a->is_admin && !uid && a->caller_user_id) /* the key spends the caller's user budget */
        ks_put(&ks, "user_id", sy_sv_text(a->caller_user_id));
    if (team_member_check(st, a, ks_text(&ks, "team_id")) < 0 || within_caller(a, body, &ks, 1) < 0)
        goto out;
    if (custom) {
        if (strncmp(custom, "sk-", 3) != 0) {
            size_t n = strlen(custom);
            char masked[32];
            if (n > 8)
                snprintf(masked, sizeof masked, "%.4s****%s", custom, custom + n - 4);
            else
                snprintf(masked, sizeof masked, "****");
            sy__err_dict(a, 400, "internal_server_error",
                         "Invalid key format. LiteLLM Virtual Key must start with 'sk-'. Received: %s", masked);
            goto out;
        }
        if (strlen(custom) >= sizeof key) {
            sy_admin_error(a, 400, "bad_request_error", "key", "key is too long");
            goto out;
        }
        snprintf(key, sizeof key, "%s", custom);
    } else {
        sy_admin_new_key(key, sizeof key);
    }
    sy_keys_hash(key, strlen(key), token);
    sy_keys_abbrev(key, strlen(key), key_name, sizeof key_name);
    sy_admin_iso_now(a, now);

    if (alias_check(a, st, &ks, NULL) < 0)
        goto out;
    const char *org = ks_text(&ks, "organization_id");
    if (org) {
        struct sy_sval p = sy_sv_text(org);
        rc = sy_store_exec(st, "SELECT 1 FROM \"LiteLLM_OrganizationTable\" WHERE \"organization_id\" = $1", 1, &p,
                           NULL, NULL);
        if (rc < 0) {
            sy_admin_db_error(a, st, rc);
            goto out;
        }
        if (rc == 0) {
            sy_admin_error(a, 400, "internal_server_error", NULL, "Organization not found for organization_id=%s", org);
            goto out;
        }
    }
    if ((rc = sy_store_begin(st)) < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    in_tx = 1;
    /* soft_budget: a budget row of its own (LiteLLM's TODO-marked path) */
    if (ks.have_soft) {
        const char *mmb = "{}";
        for (int i = 0; i < ks.n; i++)
            if (strcmp(ks.col[i], "model_max_budget") == 0)
                mmb = ks.v[i].s;
        sy_admin_uuid(budget_id);
        struct sy_sval p[6] = {sy_sv_text(budget_id), sy_sv_num(ks.soft_budget),     sy_sv_json(mmb),
                               sy_sv_ts(now),         sy_sv_text(sy_admin_actor(a)), sy_sv_ts(now)};
        rc = sy_store_exec(st,
                           "INSERT INTO \"LiteLLM_BudgetTable\" (\"budget_id\", \"soft_budget\", \"model_max_budget\", "
                           "\"created_at\", \"created_by\", \"updated_at\", \"updated_by\") "
                           "VALUES ($1, $2, $3, $4, $5, $6, $5)",
                           6, p, NULL, NULL);
        if (rc < 0) {
            sy_admin_db_error(a, st, rc);
            goto out;
        }
        ks_put(&ks, "budget_id", sy_sv_text(budget_id));
    }
    char op_id[128] = "";
    if (op) { /* the key's object permission row */
        if ((rc = sy__objperm_put(st, op, NULL, op_id)) < 0) {
            sy_admin_db_error(a, st, rc);
            goto out;
        }
        ks_put(&ks, "object_permission_id", sy_sv_text(op_id));
    }
    /* defaults LiteLLM writes for an unset field */
    static const struct {
        const char *col;
        enum sy_sv_kind k;
        const char *s;
    } defs[] = {
        {"models", SY_SV_TEXTARR, "[]"},
        {"aliases", SY_SV_JSON, "{}"},
        {"config", SY_SV_JSON, "{}"},
        {"permissions", SY_SV_JSON, "{}"},
        {"model_max_budget", SY_SV_JSON, "{}"},
        {"allowed_cache_controls", SY_SV_TEXTARR, "[]"},
        {"allowed_routes", SY_SV_TEXTARR, "[]"},
        {"access_group_ids", SY_SV_TEXTARR, "[]"},
        {"router_settings", SY_SV_JSON, "{}"},
    };
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        int have = 0;
        for (int j = 0; j < ks.n; j++)
            have |= strcmp(ks.col[j], defs[i].col) == 0;
        if (!have)
            ks_put(&ks, defs[i].col, defs[i].k == SY_SV_JSON ? sy_sv_json(defs[i].s) : sy_sv_textarr(defs[i].s));
    }
    int have_spend = 0;
    for (int j = 0; j < ks.n; j++)
        have_spend |= strcmp(ks.col[j], "spend") == 0;
    if (!have_spend)
        ks_put(&ks, "spend", sy_sv_num(0));
    ks_put(&ks, "token", sy_sv_text(token));
    ks_put(&ks, "key_name", sy_sv_text(key_name));
    ks_put(&ks, "metadata", sy_sv_json(ks_dup(&ks, sy_admin_jtext(ks.meta))));
    ks_put(&ks, "created_at", sy_sv_ts(now));
    ks_put(&ks, "updated_at", sy_sv_ts(now));
    ks_put(&ks, "created_by", sy_sv_text(sy_admin_actor(a)));
    ks_put(&ks, "updated_by", sy_sv_text(sy_admin_actor(a)));

    rc = sy__insert_cols(st, T_KEYS, ks.col, ks.v, ks.n, sy_admin_row_cb, &row);
    if (rc == SY_STORE_ECONFLICT) {
        sy_admin_error(a, 400, "bad_request_error", "key",
                       "Key with this value already exists. Unique key values across all keys are required.");
        goto out;
    }
    if (rc < 0 || !row.found) {
        sy_admin_db_error(a, st, rc < 0 ? rc : SY_STORE_EQUERY);
        goto out;
    }
    if ((rc = sy_store_commit(st)) < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    in_tx = 0;
    sy_admin_invalidate(a, "token", token); /* a cached "unknown key" entry */

    /* GenerateKeyResponse: key, token_id and token (hash), soft_budget, the row */
    a->status = 200;
    sy_buf_reset(&a->out);
    int first = 0;
    SY_BUF_LIT(&a->out, "{\"key\":");
    sy_admin_jstr(&a->out, key);
    sy_admin_jkey(&a->out, &first, "token_id");
    sy_admin_jstr(&a->out, token);
    sy_admin_jkey(&a->out, &first, "soft_budget");
    if (ks.have_soft)
        sy_admin_jnum(&a->out, ks.soft_budget);
    else
        SY_BUF_LIT(&a->out, "null");
    sy_admin_jkey(&a->out, &first, "duration");
    {
        const char *dur = NULL;
        sy_admin_get_str(a, body, "duration", &dur);
        sy_admin_jstr(&a->out, dur);
    }
    sy_admin_jkey(&a->out, &first, "litellm_budget_table");
    SY_BUF_LIT(&a->out, "null");
    row_members(&a->out, &row.r, NULL, &first);
    if ((rc = sy__objperm_member(st, &a->out, &first, op_id)) < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    SY_BUF_LIT(&a->out, "}");
out:
    if (in_tx)
        sy_store_rollback(st);
    sy_admin_row_free(&row);
    ks_free(&ks);
    if (body)
        json_object_put(body);
}

/* ---- POST /key/update and the shared UPDATE ------------------------------ */

/* UPDATE the row of token with ks (+ updated_at/updated_by, + extra columns
 * already in ks); the new row into out. rc as sy_store_exec. */
static int update_row(struct sy_admin_ctx *a, struct sy_store *st, const char *token, struct kset *ks,
                      struct sy_admin_row *out)
{
    char now[32];
    sy_admin_iso_now(a, now);
    if (ks->meta)
        ks_put(ks, "metadata", sy_sv_json(ks_dup(ks, sy_admin_jtext(ks->meta))));
    ks_put(ks, "updated_at", sy_sv_ts(ks_dup(ks, now)));
    ks_put(ks, "updated_by", sy_sv_text(sy_admin_actor(a)));
    if (ks->n >= KS_MAX)
        return SY_STORE_EQUERY;
    return sy__update_cols(st, T_KEYS, "token", token, ks->col, ks->v, ks->n, sy_admin_row_cb, out);
}

static void key_update(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct kset ks;
    struct sy_admin_row old = {0}, row = {0};
    const char *key = NULL;
    char token[65];
    memset(&ks, 0, sizeof ks);
    struct json_object *body = sy_admin_body(a);
    if (!body)
        goto out;
    int r = sy_admin_get_str(a, body, "key", &key);
    if (r < 0)
        goto out;
    if (r != SY_AF_SET) { /* UpdateKeyRequest.key: str (required) */
        a->status = 422;
        sy_buf_reset(&a->out);
        SY_BUF_LIT(&a->out, "{\"detail\":[{\"type\":\"");
        sy_buf_puts(&a->out, r == SY_AF_NULL ? "string_type" : "missing");
        SY_BUF_LIT(&a->out, "\",\"loc\":[\"body\",\"key\"],\"msg\":\"");
        sy_buf_puts(&a->out, r == SY_AF_NULL ? "Input should be a valid string" : "Field required");
        SY_BUF_LIT(&a->out, "\",\"input\":");
        sy_buf_puts(&a->out, r == SY_AF_NULL ? "null" : sy_admin_jtext(body));
        SY_BUF_LIT(&a->out, "}]}");
        goto out;
    }
    struct json_object *mbv;
    double mb;
    if (json_object_object_get_ex(body, "max_budget", &mbv) && mbv &&
        (json_object_is_type(mbv, json_type_double) || json_object_is_type(mbv, json_type_int)) &&
        (mb = json_object_get_double(mbv)) < 0) {
        char f[40];
        pyfloat(mb, f);
        sy_admin_error(a, 400, "auth_error", NULL, "{'error': 'max_budget cannot be negative. Received: %s'}", f);
        goto out;
    }
    sy_admin_token_of(key, token);
    int rc = load_key(st, token, &old);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    if (rc == 0) { /* LiteLLM's own (odd) text for a missing key */
        const char *tid = NULL;
        struct json_object *tv;
        if (json_object_object_get_ex(body, "team_id", &tv) && json_object_is_type(tv, json_type_string))
            tid = json_object_get_string(tv);
        sy_admin_error(a, 404, "auth_error", NULL, "{'error': 'Team not found, passed team_id=%s'}",
                       tid ? tid : "None");
        goto out;
    }
    int may = may_manage(st, a, &old.r);
    if (may < 0)
        goto out;
    if (!may) {
        sy_admin_error(a, 403, "auth_error", NULL, "You are not allowed to update this key");
        goto out;
    }
    struct json_object *op = NULL;
    if (collect(a, body, M_UPD, sy_srow_text(&old.r, "metadata"), &ks) < 0 || sy__objperm_get(a, body, &op) < 0 ||
        objperm_admin(a, op) < 0)
        goto out;
    {
        const char *nt = ks_text(&ks, "team_id");
        const char *ot = sy_srow_text(&old.r, "team_id");
        if ((nt && (!ot || strcmp(nt, ot) != 0) && team_member_check(st, a, nt) < 0) ||
            within_caller(a, body, &ks, 0) < 0)
            goto out;
    }
    const char *uid = ks_text(&ks, "user_id");
    const char *old_uid = sy_srow_text(&old.r, "user_id");
    if (!a->is_admin && uid && (!old_uid || strcmp(uid, old_uid) != 0)) {
        sy_admin_error(a, 403, "auth_error", NULL, "User=%s is not allowed to update key=%s to belong to user=%s", uid,
                       key, old_uid ? old_uid : "None");
        goto out;
    }
    if (alias_check(a, st, &ks, token) < 0)
        goto out;
    char op_id[128];
    const char *old_op = sy_srow_text(&old.r, "object_permission_id");
    snprintf(op_id, sizeof op_id, "%s", old_op ? old_op : "");
    if (op) { /* the key's row gets the fields given (LiteLLM's _handle_update_object_permission) */
        const char *cur = op_id[0] ? op_id : NULL;
        if ((rc = sy__objperm_put(st, op, cur, op_id)) < 0) {
            sy_admin_db_error(a, st, rc);
            goto out;
        }
        if (!cur)
            ks_put(&ks, "object_permission_id", sy_sv_text(op_id));
    }
    rc = update_row(a, st, token, &ks, &row);
    if (rc < 0 || !row.found) {
        sy_admin_db_error(a, st, rc < 0 ? rc : SY_STORE_EQUERY);
        goto out;
    }
    sy_admin_invalidate(a, "token", token);
    a->status = 200;
    sy_buf_reset(&a->out);
    int first = 0;
    SY_BUF_LIT(&a->out, "{\"key\":");
    sy_admin_jstr(&a->out, key);
    row_members(&a->out, &row.r, NULL, &first);
    if ((rc = sy__objperm_member(st, &a->out, &first, sy_srow_text(&row.r, "object_permission_id"))) < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    SY_BUF_LIT(&a->out, "}");
out:
    sy_admin_row_free(&old);
    sy_admin_row_free(&row);
    ks_free(&ks);
    if (body)
        json_object_put(body);
}

/* ---- POST /key/delete ---------------------------------------------------- */

struct tok_list {
    char (*t)[65];
    size_t n, cap;
};

static int tok_cb(void *ud, const struct sy_srow *r)
{
    struct tok_list *l = ud;
    const char *t = sy_srow_text(r, "token");
    if (!t)
        return 0;
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 16;
        void *p = realloc(l->t, nc * sizeof *l->t);
        if (!p)
            return 1;
        l->t = p;
        l->cap = nc;
    }
    snprintf(l->t[l->n++], 65, "%s", t);
    return 0;
}

/* Rows a non-admin deletes: its own pass at once; another's only through
 * its team, whose ids are kept to check team admin once the query is done. */
struct own_check {
    const struct sy_admin_ctx *a;
    int denied;
    char *team[64];
    int nteam;
};

static int own_cb(void *ud, const struct sy_srow *r)
{
    struct own_check *c = ud;
    const char *uid = sy_srow_text(r, "user_id"), *tok = sy_srow_text(r, "token"), *tid = sy_srow_text(r, "team_id");
    if ((c->a->caller_token && tok && strcmp(c->a->caller_token, tok) == 0) ||
        (c->a->caller_user_id && uid && strcmp(c->a->caller_user_id, uid) == 0))
        return 0;
    if (!tid || !*tid || c->nteam == 64)
        c->denied = 1;
    else if (!(c->team[c->nteam++] = strdup(tid)))
        c->denied = 1;
    return 0;
}

/* The transaction of /key/delete: each key copied to the deleted table, then removed. */
static int delete_tx(struct sy_store *st, struct sy_admin_ctx *a, void *ud)
{
    const struct tok_list *found = ud;
    for (size_t i = 0; i < found->n; i++) {
        struct sy_sval t = sy_sv_text(found->t[i]);
        int rc = persist_deleted(a, st, found->t[i]);
        if (rc < 0 || (rc = sy_store_exec(st, "DELETE FROM " T_KEYS " WHERE \"token\" = $1", 1, &t, NULL, NULL)) < 0)
            return rc;
    }
    return 0;
}

static void key_delete(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *keys = NULL, *aliases = NULL;
    struct tok_list found = {0};
    struct sy_buf sql;
    int rc;
    sy_buf_init(&sql, 1 << 20);
    struct json_object *body = sy_admin_body(a);
    if (!body)
        goto out;
    if (sy_admin_get_strarr(a, body, "keys", &keys) < 0 || sy_admin_get_strarr(a, body, "key_aliases", &aliases) < 0)
        goto out;
    size_t nk = keys ? json_object_array_length(keys) : 0, na = aliases ? json_object_array_length(aliases) : 0;
    if (!nk && !na) { /* KeyRequest.validate_at_least_one */
        a->status = 422;
        sy_buf_reset(&a->out);
        SY_BUF_LIT(&a->out, "{\"detail\":[{\"type\":\"value_error\",\"loc\":[\"body\"],\"msg\":\"Value error, At "
                            "least one of 'keys' or 'key_aliases' must be provided.\",\"input\":");
        sy_buf_puts(&a->out, sy_admin_jtext(body));
        SY_BUF_LIT(&a->out, ",\"ctx\":{\"error\":{}}}]}");
        goto out;
    }
    struct json_object *list = nk ? keys : aliases;
    size_t n = nk ? nk : na;
    /* the rows being deleted: WHERE token IN (...) / key_alias IN (...) */
    struct sy_sval *p = calloc(n, sizeof *p);
    char(*hashes)[65] = calloc(n, 65);
    if (!p || !hashes) {
        free(p);
        free(hashes);
        sy_admin_error(a, 500, "internal_server_error", NULL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const char *s = json_object_get_string(json_object_array_get_idx(list, i));
        if (nk) {
            sy_admin_token_of(s, hashes[i]);
            p[i] = sy_sv_text(hashes[i]);
        } else {
            p[i] = sy_sv_text(s);
        }
    }
    sy_buf_printf(&sql, "SELECT * FROM " T_KEYS " WHERE \"%s\" IN (", nk ? "token" : "key_alias");
    for (size_t i = 0; i < n; i++)
        sy_buf_printf(&sql, "%s$%zu", i ? ", " : "", i + 1);
    SY_BUF_LIT(&sql, ")");
    struct own_check oc = {.a = a};
    rc = sy_store_exec(st, sql.p, (int)n, p, tok_cb, &found);
    if (rc >= 0 && !a->is_admin)
        rc = sy_store_exec(st, sql.p, (int)n, p, own_cb, &oc);
    for (int i = 0; i < oc.nteam; i++) {
        int ta = rc >= 0 && !oc.denied ? sy__is_team_admin(st, a, oc.team[i]) : 1;
        if (ta < 0)
            rc = ta;
        else if (!ta)
            oc.denied = 1;
        free(oc.team[i]);
    }
    free(p);
    free(hashes);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    if (found.n == 0) {
        sy__err_dict(a, 404, "internal_server_error", "No keys found");
        goto out;
    }
    if (oc.denied) {
        sy__err_dict(a, 403, "internal_server_error", "You are not authorized to delete this key");
        goto out;
    }
    if (sy_admin_tx(st, a, delete_tx, &found) != 0)
        goto out;
    for (size_t i = 0; i < found.n; i++)
        sy_admin_invalidate(a, "token", found.t[i]);
    a->status = 200;
    sy_buf_reset(&a->out);
    SY_BUF_LIT(&a->out, "{\"deleted_keys\":");
    sy_buf_puts(&a->out, sy_admin_jtext(list));
    SY_BUF_LIT(&a->out, "}");
out:
    free(found.t);
    sy_buf_free(&sql);
    if (body)
        json_object_put(body);
}

/* ---- GET /key/info -------------------------------------------------------- */

static void key_info(struct sy_store *st, struct sy_admin_ctx *a)
{
    char q[1024], token[65];
    struct sy_admin_row row = {0};
    const char *key = sy_admin_query(a, "key", q, sizeof q);
    if (key && !key[0])
        key = NULL;
    if (!key)
        key = a->caller_token; /* the caller's own key (LiteLLM: user_api_key_dict.api_key, the hash) */
    if (!key) {
        sy_admin_error(a, 404, "not_found_error", "key", "Key not found in database");
        return;
    }
    sy_admin_token_of(key, token);
    int rc = load_key(st, token, &row);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    if (rc == 0) {
        sy_admin_error(a, 404, "not_found_error", "key", "Key not found in database");
        goto out;
    }
    /* _can_user_query_key_info: admins and viewers, the key itself, its user, its team */
    int may = a->is_admin || a->is_admin_viewer ? 1 : may_manage(st, a, &row.r);
    if (may < 0)
        goto out;
    if (!may) {
        const char *tid = sy_srow_text(&row.r, "team_id");
        if (!(a->caller_team_id && tid && strcmp(a->caller_team_id, tid) == 0)) {
            sy_admin_error(a, 403, "internal_server_error", NULL,
                           "You are not allowed to access this key's info. Your role=%s",
                           a->caller_user_id ? "internal_user" : "None");
            goto out;
        }
    }
    a->status = 200;
    sy_buf_reset(&a->out);
    int first = 1;
    SY_BUF_LIT(&a->out, "{\"key\":");
    sy_admin_jstr(&a->out, key);
    SY_BUF_LIT(&a->out, ",\"info\":{");
    row_members(&a->out, &row.r, "token", &first);
    if ((rc = sy__objperm_member(st, &a->out, &first, sy_srow_text(&row.r, "object_permission_id"))) < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    sy_admin_jkey(&a->out, &first, "litellm_budget_table");
    const char *bid = sy_srow_text(&row.r, "budget_id");
    size_t mark = a->out.len;
    if (bid) {
        struct sy_sval p = sy_sv_text(bid);
        struct sy_admin_rows rows = {&a->out, 0};
        rc = sy_store_exec(st, "SELECT * FROM \"LiteLLM_BudgetTable\" WHERE \"budget_id\" = $1", 1, &p,
                           sy_admin_rows_cb, &rows);
        if (rc < 0) {
            sy_admin_db_error(a, st, rc);
            goto out;
        }
    }
    if (a->out.len == mark)
        SY_BUF_LIT(&a->out, "null");
    sy_admin_limits_usage(&a->out, &first, SY_LIM_API_KEY, token);
    SY_BUF_LIT(&a->out, "}}");
out:
    sy_admin_row_free(&row);
}

/* ---- GET /key/list and /key/aliases --------------------------------------- */

struct list_ctx {
    struct sy_buf *b;
    int n;
    int full;
};

static int list_cb(void *ud, const struct sy_srow *r)
{
    struct list_ctx *l = ud;
    if (l->n++)
        SY_BUF_LIT(l->b, ",");
    if (l->full) {
        sy_srow_json(l->b, r);
    } else {
        sy_admin_jstr(l->b, sy_srow_text(r, "token"));
    }
    return 0;
}

static void key_list(struct sy_store *st, struct sy_admin_ctx *a)
{
    int64_t page, size, total = 0;
    char user_id[256], team_id[256], org_id[256], key_hash[256], alias[512], sort_by[64], sort_order[16], status[32];
    int full = 0;
    struct sy_buf where, sql;
    struct sy_sval p[8];
    int np = 0, rc;
    if (sy_admin_page(a, &page, &size, 10, 100) < 0 || sy_admin_query_bool(a, "return_full_object", &full) < 0)
        return;
    const char *uid = sy_admin_query(a, "user_id", user_id, sizeof user_id);
    const char *tid = sy_admin_query(a, "team_id", team_id, sizeof team_id);
    const char *oid = sy_admin_query(a, "organization_id", org_id, sizeof org_id);
    const char *kh = sy_admin_query(a, "key_hash", key_hash, sizeof key_hash);
    const char *ka = sy_admin_query(a, "key_alias", alias, sizeof alias);
    const char *sb = sy_admin_query(a, "sort_by", sort_by, sizeof sort_by);
    const char *so = sy_admin_query(a, "sort_order", sort_order, sizeof sort_order);
    const char *stt = sy_admin_query(a, "status", status, sizeof status);
    if (uid && !*uid)
        uid = NULL;
    if (tid && !*tid)
        tid = NULL;
    if (oid && !*oid)
        oid = NULL;
    if (kh && !*kh)
        kh = NULL;
    if (ka && !*ka)
        ka = NULL;
    if (stt && strcmp(stt, "deleted") != 0) {
        sy__err_dict(a, 400, "internal_server_error", "Invalid status value. Currently only 'deleted' is supported.");
        return;
    }
    /* validate_key_list_check for non-admins */
    if (!a->is_admin && !a->is_admin_viewer) {
        if (!a->caller_user_id) {
            sy_admin_error(a, 403, "bad_request_error", "user_id",
                           "You are not authorized to access this endpoint. No 'user_id' is associated with your API "
                           "key.");
            return;
        }
        if (uid && strcmp(uid, a->caller_user_id) != 0) {
            sy_admin_error(a, 403, "bad_request_error", "user_id",
                           "You are not authorized to check another user's keys");
            return;
        }
        if (tid && (!a->caller_team_id || strcmp(tid, a->caller_team_id) != 0)) {
            sy_admin_error(a, 403, "bad_request_error", "team_id", "You are not authorized to check this team's keys");
            return;
        }
        uid = a->caller_user_id;
    }
    const char *order = "\"created_at\" DESC, \"token\" DESC";
    char orderbuf[96];
    if (sb && *sb) {
        static const char *const cols[] = {"spend", "max_budget", "created_at", "updated_at", "token", "key_alias"};
        int ok = 0;
        for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
            ok |= strcmp(sb, cols[i]) == 0;
        if (!ok) {
            sy__err_dict(
                a, 400, "internal_server_error",
                "Invalid sort column. Must be one of: spend, max_budget, created_at, updated_at, token, key_alias");
            return;
        }
        const char *dir = so && *so ? so : "desc";
        if (strcasecmp(dir, "asc") != 0 && strcasecmp(dir, "desc") != 0) {
            sy__err_dict(a, 400, "internal_server_error", "Invalid sort order. Must be 'asc' or 'desc'");
            return;
        }
        snprintf(orderbuf, sizeof orderbuf, "\"%s\" %s", sb, strcasecmp(dir, "asc") == 0 ? "ASC" : "DESC");
        order = orderbuf;
    }
    sy_buf_init(&where, 4096);
    sy_buf_init(&sql, 8192);
    p[np++] = sy_sv_text(UI_SESSION_TEAM);
    SY_BUF_LIT(&where, " WHERE (\"team_id\" IS NULL OR \"team_id\" <> $1)");
    if (uid) {
        p[np++] = sy_sv_text(uid);
        sy_buf_printf(&where, " AND \"user_id\" = $%d", np);
    }
    if (tid) {
        p[np++] = sy_sv_text(tid);
        sy_buf_printf(&where, " AND \"team_id\" = $%d", np);
    }
    if (oid) {
        p[np++] = sy_sv_text(oid);
        sy_buf_printf(&where, " AND \"organization_id\" = $%d", np);
    }
    if (kh) {
        p[np++] = sy_sv_text(kh);
        sy_buf_printf(&where, " AND \"token\" = $%d", np);
    }
    if (ka) {
        p[np++] = sy_sv_text(ka);
        sy_buf_printf(&where, " AND \"key_alias\" = $%d", np);
    }
    const char *table = stt ? T_DELETED : T_KEYS;
    sy_buf_printf(&sql, "SELECT COUNT(*) AS n FROM %s%s", table, where.p);
    rc = sy_store_exec(st, sql.p, np, p, count_cb, &total);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    sy_buf_reset(&sql);
    p[np] = sy_sv_int(size);
    p[np + 1] = sy_sv_int(sy_admin_page_offset(page, size));
    sy_buf_printf(&sql, "SELECT * FROM %s%s ORDER BY %s LIMIT $%d OFFSET $%d", table, where.p, order, np + 1, np + 2);
    a->status = 200;
    sy_buf_reset(&a->out);
    SY_BUF_LIT(&a->out, "{\"keys\":[");
    struct list_ctx l = {&a->out, 0, full};
    rc = sy_store_exec(st, sql.p, np + 2, p, list_cb, &l);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    SY_BUF_LIT(&a->out, "]");
    sy_admin_page_tail(&a->out, total, page, size);
    SY_BUF_LIT(&a->out, "}");
out:
    sy_buf_free(&where);
    sy_buf_free(&sql);
}

static int alias_cb(void *ud, const struct sy_srow *r)
{
    struct list_ctx *l = ud;
    const char *s = sy_srow_text(r, "key_alias");
    if (!s || !*s)
        return 0;
    if (l->n++)
        SY_BUF_LIT(l->b, ",");
    sy_admin_jstr(l->b, s);
    return 0;
}

static void key_aliases(struct sy_store *st, struct sy_admin_ctx *a)
{
    int64_t page, size, total = 0;
    char search[512], pat[520];
    struct sy_sval p[6];
    int np = 0, rc;
    struct sy_buf where, sql;
    if (sy_admin_page(a, &page, &size, 50, 100) < 0)
        return;
    const char *s = sy_admin_query(a, "search", search, sizeof search);
    sy_buf_init(&where, 2048);
    sy_buf_init(&sql, 4096);
    p[np++] = sy_sv_text(UI_SESSION_TEAM);
    SY_BUF_LIT(&where, " WHERE \"key_alias\" IS NOT NULL AND \"key_alias\" <> '' AND (\"team_id\" IS NULL OR "
                       "\"team_id\" <> $1)");
    if (!a->is_admin && !a->is_admin_viewer) { /* own keys and the caller's team's */
        if (a->caller_user_id && a->caller_team_id) {
            p[np++] = sy_sv_text(a->caller_user_id);
            p[np++] = sy_sv_text(a->caller_team_id);
            sy_buf_printf(&where, " AND (\"user_id\" = $%d OR \"team_id\" = $%d)", np - 1, np);
        } else if (a->caller_user_id || a->caller_team_id) {
            p[np++] = sy_sv_text(a->caller_user_id ? a->caller_user_id : a->caller_team_id);
            sy_buf_printf(&where, " AND \"%s\" = $%d", a->caller_user_id ? "user_id" : "team_id", np);
        } else {
            SY_BUF_LIT(&where, " AND 1 = 0");
        }
    }
    if (s && *s) {
        snprintf(pat, sizeof pat, "%%%s%%", s);
        p[np++] = sy_sv_text(pat);
        sy_buf_printf(&where, " AND LOWER(\"key_alias\") LIKE LOWER($%d)", np);
    }
    sy_buf_printf(&sql, "SELECT COUNT(*) AS n FROM " T_KEYS "%s", where.p);
    if ((rc = sy_store_exec(st, sql.p, np, p, count_cb, &total)) < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    sy_buf_reset(&sql);
    p[np] = sy_sv_int(size);
    p[np + 1] = sy_sv_int(sy_admin_page_offset(page, size));
    sy_buf_printf(&sql, "SELECT \"key_alias\" FROM " T_KEYS "%s ORDER BY \"key_alias\" ASC LIMIT $%d OFFSET $%d",
                  where.p, np + 1, np + 2);
    a->status = 200;
    sy_buf_reset(&a->out);
    SY_BUF_LIT(&a->out, "{\"aliases\":[");
    struct list_ctx l = {&a->out, 0, 0};
    if ((rc = sy_store_exec(st, sql.p, np + 2, p, alias_cb, &l)) < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    SY_BUF_LIT(&a->out, "]");
    sy_admin_page_tail(&a->out, total, page, size);
    sy_buf_printf(&a->out, ",\"size\":%lld}", (long long)size);
out:
    sy_buf_free(&where);
    sy_buf_free(&sql);
}

/* ---- POST /key/regenerate, /key/{key}/regenerate --------------------------- */

/* The transaction of /key/regenerate: the old key copied to the deleted
 * table, its row moved to the new token. */
struct regen_tx {
    const char *oldtok;
    struct kset *ks;
    struct sy_admin_row *row;
};
static int regen_tx(struct sy_store *st, struct sy_admin_ctx *a, void *ud)
{
    struct regen_tx *t = ud;
    int rc = persist_deleted(a, st, t->oldtok);
    if (rc < 0)
        return rc;
    rc = update_row(a, st, t->oldtok, t->ks, t->row);
    if (rc == SY_STORE_ECONFLICT) {
        sy_admin_error(a, 400, "bad_request_error", "new_key",
                       "Key with this value already exists. Unique key values across all keys are required.");
        return SY_ADMIN_TX_ABORT;
    }
    if (rc < 0 || !t->row->found)
        return rc < 0 ? rc : SY_STORE_EQUERY;
    return 0;
}

static void key_regenerate(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct kset ks;
    struct sy_admin_row old = {0}, row = {0};
    char pathkey[512], oldtok[65], newkey[256], newtok[65], key_name[32];
    const char *key = NULL, *new_key = NULL, *nmk = NULL;
    int rc;
    memset(&ks, 0, sizeof ks);
    struct json_object *body = sy_admin_body(a);
    if (!body)
        goto out;
    /* the path form: /key/<key>/regenerate */
    pathkey[0] = 0;
    if (strncmp(a->path, "/key/", 5) == 0) {
        const char *s = a->path + 5, *e = strchr(s, '/');
        if (e && strncmp(e, "/regenerate", 11) == 0 && (size_t)(e - s) < sizeof pathkey)
            snprintf(pathkey, sizeof pathkey, "%.*s", (int)(e - s), s);
    }
    if (sy_admin_get_str(a, body, "key", &key) < 0 || sy_admin_get_str(a, body, "new_key", &new_key) < 0 ||
        sy_admin_get_str(a, body, "new_master_key", &nmk) < 0)
        goto out;
    if (!key || !*key)
        key = pathkey[0] ? pathkey : NULL;
    if (nmk) {
        sy_admin_error(a, 400, "bad_request_error", "new_master_key",
                       "Master key rotation is not supported here: change general_settings.master_key instead.");
        goto out;
    }
    if (!key) {
        sy__err_dict(a, 400, "internal_server_error", "No key passed in.");
        goto out;
    }
    if (strstr(key, "sk"))
        sy_keys_hash(key, strlen(key), oldtok);
    else
        snprintf(oldtok, sizeof oldtok, "%s", key);
    rc = load_key(st, oldtok, &old);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    if (rc == 0) {
        sy__err_dict(a, 404, "internal_server_error", "Key %s not found.", key);
        goto out;
    }
    int may = may_manage(st, a, &old.r);
    if (may < 0)
        goto out;
    if (!may) {
        sy__err_dict(a, 403, "internal_server_error", "You are not authorized to regenerate this key");
        goto out;
    }
    if (new_key) {
        if (strncmp(new_key, "sk-", 3) != 0) {
            sy__err_dict(
                a, 400, "internal_server_error",
                "New key must start with 'sk-'. This is to distinguish a key hash (used by litellm for logging / "
                "internal logic) from the actual key.");
            goto out;
        }
        if (strlen(new_key) >= sizeof newkey) {
            sy_admin_error(a, 400, "bad_request_error", "new_key", "new_key is too long");
            goto out;
        }
        snprintf(newkey, sizeof newkey, "%s", new_key);
    } else {
        sy_admin_new_key(newkey, sizeof newkey);
    }
    sy_keys_hash(newkey, strlen(newkey), newtok);
    sy_keys_abbrev(newkey, strlen(newkey), key_name, sizeof key_name);
    if (collect(a, body, M_REGEN, sy_srow_text(&old.r, "metadata"), &ks) < 0 || within_caller(a, body, &ks, 0) < 0)
        goto out;
    if (alias_check(a, st, &ks, oldtok) < 0)
        goto out;
    ks_put(&ks, "token", sy_sv_text(newtok));
    ks_put(&ks, "key_name", sy_sv_text(key_name));
    struct regen_tx tx = {oldtok, &ks, &row};
    if (sy_admin_tx(st, a, regen_tx, &tx) != 0)
        goto out;
    sy_admin_invalidate(a, "token", oldtok);
    sy_admin_invalidate(a, "token", newtok);
    /* GenerateKeyResponse(**row, key=new, token_id=row.pop("token")) */
    a->status = 200;
    sy_buf_reset(&a->out);
    int first = 0;
    SY_BUF_LIT(&a->out, "{\"key\":");
    sy_admin_jstr(&a->out, newkey);
    sy_admin_jkey(&a->out, &first, "token_id");
    sy_admin_jstr(&a->out, newtok);
    sy_admin_jkey(&a->out, &first, "token");
    SY_BUF_LIT(&a->out, "null");
    sy_admin_jkey(&a->out, &first, "litellm_budget_table");
    SY_BUF_LIT(&a->out, "null");
    row_members(&a->out, &row.r, "token", &first);
    SY_BUF_LIT(&a->out, "}");
out:
    sy_admin_row_free(&old);
    sy_admin_row_free(&row);
    ks_free(&ks);
    if (body)
        json_object_put(body);
}

/* ---- POST /key/block, /key/unblock ----------------------------------------- */

/* LiteLLM's is_valid_api_key: "sk-..." or a 64-char hex hash. */
static int valid_api_key(const char *k)
{
    return strncmp(k, "sk-", 3) == 0 || sy_admin_is_hash(k);
}

static void set_blocked(struct sy_store *st, struct sy_admin_ctx *a, int blocked)
{
    struct sy_admin_row row = {0};
    const char *key = NULL;
    char token[65];
    struct json_object *body = sy_admin_body(a);
    if (!body)
        return;
    int r = sy_admin_get_str(a, body, "key", &key);
    if (r < 0)
        goto out;
    if (r != SY_AF_SET) {
        a->status = 422;
        sy_buf_reset(&a->out);
        SY_BUF_LIT(&a->out, "{\"detail\":[{\"type\":\"missing\",\"loc\":[\"body\",\"key\"],\"msg\":\"Field "
                            "required\",\"input\":");
        sy_buf_puts(&a->out, sy_admin_jtext(body));
        SY_BUF_LIT(&a->out, "}]}");
        goto out;
    }
    if (!valid_api_key(key)) {
        sy_admin_error(a, 400, "bad_request_error", "key", "Invalid key format.");
        goto out;
    }
    if (strncmp(key, "sk-", 3) == 0)
        sy_keys_hash(key, strlen(key), token);
    else
        snprintf(token, sizeof token, "%s", key);
    if (!a->is_admin) { /* block: whoever manages the key; unblock: an admin or the key's team admin */
        struct sy_admin_row cur = {0};
        int rc = load_key(st, token, &cur), may = 0;
        if (rc < 0) {
            sy_admin_db_error(a, st, rc);
            goto out;
        }
        if (rc == 0) {
            sy_admin_error(a, 404, "bad_request_error", "key", "Key %s not found", key);
            goto out;
        }
        if (blocked)
            may = may_manage(st, a, &cur.r);
        else if ((may = sy__is_team_admin(st, a, sy_srow_text(&cur.r, "team_id"))) < 0)
            sy_admin_db_error(a, st, may);
        sy_admin_row_free(&cur);
        if (may < 0)
            goto out;
        if (!may) {
            sy_admin_error(a, 403, "auth_error", "key", "You are not allowed to %s this key",
                           blocked ? "block" : "unblock");
            goto out;
        }
    }
    char now[32];
    sy_admin_iso_now(a, now);
    struct sy_sval p[3] = {sy_sv_bool(blocked), sy_sv_ts(now), sy_sv_text(token)};
    int rc = sy_store_exec(st,
                           "UPDATE " T_KEYS " SET \"blocked\" = $1, \"updated_at\" = $2 WHERE \"token\" = $3 "
                           "RETURNING *",
                           3, p, sy_admin_row_cb, &row);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    if (!row.found) {
        sy_admin_error(a, 404, "bad_request_error", "key", "Key %s not found", key);
        goto out;
    }
    sy_admin_invalidate(a, "token", token);
    a->status = 200;
    sy_buf_reset(&a->out);
    sy_srow_json(&a->out, &row.r);
out:
    sy_admin_row_free(&row);
    json_object_put(body);
}

static void key_block(struct sy_store *st, struct sy_admin_ctx *a)
{
    set_blocked(st, a, 1);
}

static void key_unblock(struct sy_store *st, struct sy_admin_ctx *a)
{
    set_blocked(st, a, 0);
}

/* ---- POST /key/health ------------------------------------------------------ */

/* Key-based logging callbacks (metadata.logging) are not run by switchyard,
 * so there is nothing to test: healthy, as LiteLLM answers without them. */
static void key_health(struct sy_store *st, struct sy_admin_ctx *a)
{
    (void)st;
    a->status = 200;
    sy_buf_reset(&a->out);
    SY_BUF_LIT(&a->out, "{\"key\":\"healthy\",\"logging_callbacks\":null}");
}

/* ---- route table ----------------------------------------------------------- */

const struct sy_admin_route sy_admin_key_routes[] = {
    {HTTP_POST, "/key/generate", key_generate, SY_ADMIN_USER},
    {HTTP_POST, "/key/update", key_update, SY_ADMIN_USER},
    {HTTP_POST, "/key/delete", key_delete, SY_ADMIN_USER},
    {HTTP_GET, "/key/info", key_info, SY_ADMIN_SELF | SY_ADMIN_READONLY},
    {HTTP_GET, "/key/list", key_list, SY_ADMIN_SELF | SY_ADMIN_READONLY},
    {HTTP_GET, "/key/aliases", key_aliases, SY_ADMIN_READONLY | SY_ADMIN_USER},
    {HTTP_POST, "/key/regenerate", key_regenerate, SY_ADMIN_USER},
    {HTTP_POST, "/key/*/regenerate", key_regenerate, SY_ADMIN_USER},
    {HTTP_POST, "/key/block", key_block, SY_ADMIN_USER},
    {HTTP_POST, "/key/unblock", key_unblock, SY_ADMIN_USER},
    {HTTP_POST, "/key/health", key_health, SY_ADMIN_SELF | SY_ADMIN_NODB},
    {0, NULL, NULL, 0},
};
