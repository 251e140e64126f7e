/* credentials.c - LiteLLM's reusable provider credentials on
 * "LiteLLM_CredentialsTable" (proxy/credential_endpoints/endpoints.py).
 *
 *   | route                               | body                                | answer                       |
 *   |-------------------------------------|-------------------------------------|------------------------------|
 *   | POST   /credentials                 | CreateCredentialItem                | {"success":true,"message":..}|
 *   | GET    /credentials                 | -                                   | {"success":true,"credentials":[..]} |
 *   | GET    /credentials/by_name/{name}  | -                                   | CredentialItem, masked       |
 *   | GET    /credentials/by_model/{id}   | -                                   | the deployment's, masked     |
 *   | PATCH  /credentials/{name}          | credential_name/values/info, each optional | {"success":true,..}   |
 *   | DELETE /credentials/{name}          | -                                   | {"success":true,..}          |
 *
 * CreateCredentialItem is {credential_name, credential_info, credential_values?,
 * model_id?}: one of the last two must be set (pydantic's model validator,
 * checked first, as LiteLLM's runs in "before" mode); model_id copies the
 * deployment's credential fields (LiteLLM's CredentialLiteLLMParams) from the
 * model table. Each string in credential_values is stored encrypted as
 * LiteLLM's encrypt_value_helper does (core/secret.h, under LITELLM_SALT_KEY
 * or the master key); other JSON values are stored as they are, as LiteLLM
 * does. Without a salt key nothing is stored (400): a credential is never
 * written in clear.
 *
 * Values never leave in clear: every answer masks them as LiteLLM's
 * _get_masked_values does (a key naming a secret - "key", "token",
 * "secret", "password", ... - has its string shown as its first and last two
 * characters around "****", "*****" when 4 characters or fewer; other keys,
 * api_base for one, are shown as they are). A stored value that does not
 * decrypt under the salt key in force reads as null (decrypt_value_helper).
 *
 * PATCH merges: new values replace the ones of the same key (encrypted),
 * credential_info is merged key by key, credential_name renames. A name in a
 * path is percent-decoded ("a%2Fb" names "a/b", as LiteLLM's {name:path}).
 *
 * switchyard differs where LiteLLM answers a 500 from the database: a
 * duplicate name is a 400, an unknown name on DELETE a 404
 * (docs/litellm-differences.md). Every change lists the "models:credentials"
 * invalidation, for the deployments that name a credential. GET /credentials
 * lists the database's credentials (the config file's credential_list is
 * resolved at load and not listed).
 *
 * Routes are admin-only (the GETs also for proxy_admin_viewer: values are
 * masked).
 */
#include "admin/credentials.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <http_parser.h>
#include <openssl/crypto.h>

#include "admin/admin_impl.h"
#include "admin/entity_impl.h"
#include "config/config.h"
#include "core/buf.h"
#include "core/secret.h"
#include "core/utf8.h"
#include "http/server.h"
#include "router/table.h"

#define T_CRED "\"LiteLLM_CredentialsTable\""

/* ---- values ---------------------------------------------------------------- */

/* LiteLLM's _get_masked_values: keys whose lowercased name holds one of these. */
static int sensitive(const char *k)
{
    static const char *const W[] = {"authorization",      "token",       "key",      "secret",
                                    "vertex_credentials", "credentials", "password", "passwd"};
    char low[256];
    size_t n = strlen(k);
    if (n >= sizeof low)
        n = sizeof low - 1;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)(k[i] >= 'A' && k[i] <= 'Z' ? k[i] + 32 : k[i]);
    low[n] = 0;
    for (size_t i = 0; i < sizeof W / sizeof W[0]; i++)
        if (strstr(low, W[i]))
            return 1;
    return 0;
}

/* Byte offset of code point i of s (UTF-8), or strlen(s). */
static size_t cp_off(const char *s, size_t i)
{
    size_t o = 0;
    for (; s[o] && i; i--)
        for (o++; ((unsigned char)s[o] & 0xc0) == 0x80; o++)
            ;
    return o;
}

static size_t cp_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* A string masked: v[:2] + "****" + v[-2:], "*****" up to 4 characters. */
static struct json_object *mask_str(const char *v)
{
    size_t n = cp_len(v);
    if (n <= 4)
        return json_object_new_string("*****");
    size_t head = cp_off(v, 2), tail = cp_off(v, n - 2), l = strlen(v);
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    sy_buf_append(&b, v, head);
    SY_BUF_LIT(&b, "****");
    sy_buf_append(&b, v + tail, l - tail);
    struct json_object *r = json_object_new_string_len(b.p ? b.p : "", (int)b.len);
    sy_buf_free(&b);
    return r;
}

/* A copy of object o with the sensitive members masked (nested objects too,
 * to LiteLLM's depth of 20). */
static struct json_object *masked(struct json_object *o, int depth)
{
    struct json_object *r = json_object_new_object();
    json_object_object_foreach(o, k, v)
    {
        struct json_object *m;
        if (!sensitive(k))
            m = json_object_get(v);
        else if (json_object_is_type(v, json_type_object))
            m = depth >= 20 ? json_object_get(v) : masked(v, depth + 1);
        else if (json_object_is_type(v, json_type_string))
            m = mask_str(json_object_get_string(v));
        else
            m = json_object_get(v);
        json_object_object_add(r, k, m);
    }
    return r;
}

/* A copy of credential_values with every string encrypted; NULL when one
 * does not encrypt (credentials.h). */
struct json_object *sy_credentials_encrypt_values(struct json_object *vals, const char *salt)
{
    if (!salt || !*salt || !json_object_is_type(vals, json_type_object))
        return NULL;
    struct json_object *r = json_object_new_object();
    json_object_object_foreach(vals, k, v)
    {
        if (!json_object_is_type(v, json_type_string)) {
            json_object_object_add(r, k, json_object_get(v));
            continue;
        }
        size_t n = (size_t)json_object_get_string_len(v), cap = sy_secret_encrypted_len(n) + 1;
        char *e = malloc(cap);
        long l = e ? sy_secret_encrypt(json_object_get_string(v), n, salt, e, cap) : -1;
        if (l < 0) {
            free(e);
            json_object_put(r);
            return NULL;
        }
        json_object_object_add(r, k, json_object_new_string_len(e, (int)l));
        free(e);
    }
    return r;
}

/* A copy of stored credential_values with every string decrypted (null
 * when it does not decrypt, as LiteLLM's decrypt_value_helper; the stored
 * text with keep_original). */
struct json_object *sy_credentials_decrypt_values(struct json_object *vals, const char *salt, int keep_original)
{
    struct json_object *r = json_object_new_object();
    if (!json_object_is_type(vals, json_type_object))
        return r;
    json_object_object_foreach(vals, k, v)
    {
        if (!json_object_is_type(v, json_type_string)) {
            json_object_object_add(r, k, json_object_get(v));
            continue;
        }
        const char *s = json_object_get_string(v);
        size_t cap = strlen(s) + 1;
        char *p = malloc(cap);
        long l = p && salt ? sy_secret_decrypt(s, salt, p, cap) : -1;
        json_object_object_add(r, k,
                               l >= 0          ? json_object_new_string_len(p, (int)l)
                               : keep_original ? json_object_get(v)
                                               : NULL);
        if (p)
            OPENSSL_cleanse(p, cap);
        free(p);
    }
    return r;
}

/* ---- rows -------------------------------------------------------------------- */

/* Rows as [{"credential_name","credential_values" (stored),"credential_info"}]. */
static int rows_cb(void *ud, const struct sy_srow *r)
{
    struct json_object *arr = ud, *o = json_object_new_object();
    const struct sy_sval *n = sy_srow_get(r, "credential_name"), *v = sy_srow_get(r, "credential_values"),
                         *i = sy_srow_get(r, "credential_info");
    json_object_object_add(o, "credential_name", n && n->k == SY_SV_TEXT ? json_object_new_string(n->s) : NULL);
    json_object_object_add(o, "credential_values", v && v->k == SY_SV_JSON ? json_tokener_parse(v->s) : NULL);
    json_object_object_add(o, "credential_info", i && i->k == SY_SV_JSON ? json_tokener_parse(i->s) : NULL);
    json_object_array_add(arr, o);
    return 0;
}

static int select_rows(struct sy_store *st, const char *name, struct json_object **out)
{
    struct json_object *arr = json_object_new_array();
    struct sy_sval p = sy_sv_text(name);
    int rc = name ? sy_store_exec(st, "SELECT * FROM " T_CRED " WHERE \"credential_name\" = $1", 1, &p, rows_cb, arr)
                  : sy_store_exec(st, "SELECT * FROM " T_CRED " ORDER BY \"created_at\", \"credential_name\"", 0, NULL,
                                  rows_cb, arr);
    if (rc < 0) {
        json_object_put(arr);
        *out = NULL;
        return rc;
    }
    *out = arr;
    return 0;
}

int sy_credentials_load(struct sy_store *st, const char *salt, struct json_object **out)
{
    struct json_object *arr;
    int rc = select_rows(st, NULL, &arr);
    *out = NULL;
    if (rc < 0)
        return rc;
    struct json_object *r = json_object_new_object();
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        struct json_object *o = json_object_array_get_idx(arr, i), *n, *v;
        if (!json_object_object_get_ex(o, "credential_name", &n) || !n)
            continue;
        json_object_object_get_ex(o, "credential_values", &v);
        json_object_object_add(r, json_object_get_string(n), sy_credentials_decrypt_values(v, salt, 0));
    }
    json_object_put(arr);
    *out = r;
    return 0;
}

/* ---- answers ------------------------------------------------------------------ */

static void ok(struct sy_admin_ctx *a, const char *msg)
{
    a->status = 200;
    sy_buf_reset(&a->out);
    SY_BUF_LIT(&a->out, "{\"success\":true,\"message\":");
    sy_admin_jstr(&a->out, msg);
    SY_BUF_LIT(&a->out, "}");
}

/* LiteLLM's HTTPException through handle_exception_on_proxy. */
static void proxy_http_error(struct sy_admin_ctx *a, int status, const char *msg, const char *name)
{
    sy_admin_error(a, status, "internal_server_error", "None", "%s%s", msg, name ? name : "");
}

/* One credential as an answer: name, info, values masked (CredentialItem's order). */
static void item(struct sy_buf *b, const char *name, struct json_object *info, struct json_object *vals)
{
    struct json_object *m = masked(vals, 0);
    SY_BUF_LIT(b, "{\"credential_name\":");
    sy_admin_jstr(b, name);
    SY_BUF_LIT(b, ",\"credential_info\":");
    sy_buf_puts(b, sy_admin_jtext(info));
    SY_BUF_LIT(b, ",\"credential_values\":");
    sy_buf_puts(b, sy_admin_jtext(m));
    SY_BUF_LIT(b, "}");
    json_object_put(m);
}

/* The path's last part, percent-decoded, after prefix; NULL when empty. */
static const char *path_name(const struct sy_admin_ctx *a, const char *prefix, char *out, size_t cap)
{
    size_t pl = strlen(prefix), n;
    if (strncmp(a->path, prefix, pl) != 0)
        return NULL;
    n = strlen(a->path + pl);
    while (n && a->path[pl + n - 1] == '/')
        n--;
    if (!n || n >= cap)
        return NULL;
    size_t l = sy_pct_decode(a->path + pl, n, out, cap, 0);
    return l && strlen(out) == l && sy_utf8_check(out, l) == l ? out : NULL; /* no NUL, text only */
}

static const char *salt_of(const struct sy_admin_ctx *a)
{
    return sy_secret_salt(a->master_key);
}

/* LiteLLM's CredentialLiteLLMParams: the credential fields of a deployment, as
 * an object; NULL when no deployment has this id. */
static struct json_object *deployment_creds(const struct sy_admin_ctx *a, const char *id, const char **model_name)
{
    static const char *const F[] = {"api_key",         "api_base",           "api_version",
                                    "vertex_project",  "vertex_location",    "vertex_credentials",
                                    "region_name",     "aws_access_key_id",  "aws_secret_access_key",
                                    "aws_region_name", "watsonx_region_name"};
    const struct sy_table *t = a->table;
    for (size_t i = 0; t && i < t->ndrts; i++) {
        const struct sy_deployment *d = t->drts[i].d;
        if (!d->id || strcmp(d->id, id) != 0)
            continue;
        struct json_object *r = json_object_new_object();
        for (size_t f = 0; f < sizeof F / sizeof F[0]; f++) {
            const char *v = f == 0 ? d->api_key : f == 1 ? d->api_base : f == 2 ? d->api_version : NULL;
            for (size_t k = 0; !v && k < d->n_params; k++)
                if (strcmp(d->params[k].key, F[f]) == 0)
                    v = d->params[k].value;
            if (v)
                json_object_object_add(r, F[f], json_object_new_string(v));
        }
        *model_name = d->model_name;
        return r;
    }
    return NULL;
}

/* ---- handlers ------------------------------------------------------------------ */

static void cred_create(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a), *vals = NULL, *info = NULL, *enc = NULL, *own = NULL;
    const char *name = NULL, *model_id = NULL;
    if (!body)
        return;
    struct json_object *cv = NULL, *mi = NULL;
    json_object_object_get_ex(body, "credential_values", &cv);
    json_object_object_get_ex(body, "model_id", &mi);
    int cv_set = cv && (!json_object_is_type(cv, json_type_object) || json_object_object_length(cv) > 0) &&
                 !(json_object_is_type(cv, json_type_string) && !json_object_get_string_len(cv));
    int mi_set = mi && !(json_object_is_type(mi, json_type_string) && !json_object_get_string_len(mi)) &&
                 !json_object_is_type(mi, json_type_null);
    if (!cv_set && !mi_set) {
        sy__value_error(a, body, "Either credential_values or model_id must be set");
        goto out;
    }
    int r = sy_admin_get_str(a, body, "credential_name", &name);
    if (r == SY_AF_ERR)
        goto out;
    if (r != SY_AF_SET) {
        sy__missing(a, "body", "credential_name", body);
        goto out;
    }
    r = sy_admin_get_obj(a, body, "credential_info", &info);
    if (r == SY_AF_ERR)
        goto out;
    if (r != SY_AF_SET) {
        sy__missing(a, "body", "credential_info", body);
        goto out;
    }
    if (sy_admin_get_obj(a, body, "credential_values", &vals) == SY_AF_ERR ||
        sy_admin_get_str(a, body, "model_id", &model_id) == SY_AF_ERR)
        goto out;
    if (!*name) {
        sy_admin_error(a, 400, "bad_request_error", "credential_name", "credential_name must not be empty");
        goto out;
    }
    if (model_id && *model_id) {
        const char *mn = NULL;
        own = deployment_creds(a, model_id, &mn);
        if (!own) {
            proxy_http_error(a, 404, "Model not found", NULL);
            goto out;
        }
        vals = own;
    }
    if (!vals) {
        proxy_http_error(a, 400, "Credential values are required. Unable to infer credential values from model ID.",
                         NULL);
        goto out;
    }
    const char *salt = salt_of(a);
    if (!salt) {
        sy_admin_error(a, 400, "bad_request_error", "None",
                       "Cannot store a credential: set LITELLM_SALT_KEY or a master key to encrypt its values");
        goto out;
    }
    enc = sy_credentials_encrypt_values(vals, salt);
    if (!enc) {
        sy_admin_error(a, 500, "internal_server_error", "None", "Internal Server Error, could not encrypt a value");
        goto out;
    }
    char id[37], now[32];
    sy_admin_uuid(id);
    sy_admin_iso_now(a, now);
    static const char *const col[] = {"credential_id", "credential_name", "credential_values", "credential_info",
                                      "created_at",    "created_by",      "updated_at",        "updated_by"};
    struct sy_sval v[] = {sy_sv_text(id),
                          sy_sv_text(name),
                          sy_sv_json(sy_admin_jtext(enc)),
                          sy_sv_json(sy_admin_jtext(info)),
                          sy_sv_ts(now),
                          sy_sv_text(sy_admin_actor(a)),
                          sy_sv_ts(now),
                          sy_sv_text(sy_admin_actor(a))};
    int rc = sy__insert_cols(st, T_CRED, col, v, 8, NULL, NULL);
    if (rc == SY_STORE_ECONFLICT)
        sy_admin_error(a, 400, "bad_request_error", "credential_name", "Credential with name '%s' already exists.",
                       name);
    else if (rc < 0)
        sy_admin_db_error(a, st, rc);
    else {
        ok(a, "Credential created successfully");
        sy_admin_invalidate(a, "models", "credentials");
    }
out:
    json_object_put(enc);
    json_object_put(own);
    json_object_put(body);
}

static void cred_list(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *arr;
    int rc = select_rows(st, NULL, &arr);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        return;
    }
    const char *salt = salt_of(a);
    a->status = 200;
    sy_buf_reset(&a->out);
    SY_BUF_LIT(&a->out, "{\"success\":true,\"credentials\":[");
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        struct json_object *o = json_object_array_get_idx(arr, i), *n, *v, *inf;
        json_object_object_get_ex(o, "credential_name", &n);
        json_object_object_get_ex(o, "credential_values", &v);
        json_object_object_get_ex(o, "credential_info", &inf);
        struct json_object *d = sy_credentials_decrypt_values(v, salt, 0), *m = masked(d, 0);
        if (i)
            SY_BUF_LIT(&a->out, ",");
        SY_BUF_LIT(&a->out, "{\"credential_name\":");
        sy_admin_jstr(&a->out, json_object_get_string(n));
        SY_BUF_LIT(&a->out, ",\"credential_values\":");
        sy_buf_puts(&a->out, sy_admin_jtext(m));
        SY_BUF_LIT(&a->out, ",\"credential_info\":");
        sy_buf_puts(&a->out, sy_admin_jtext(inf));
        SY_BUF_LIT(&a->out, "}");
        json_object_put(m);
        json_object_put(d);
    }
    SY_BUF_LIT(&a->out, "]}");
    json_object_put(arr);
}

static void cred_by_name(struct sy_store *st, struct sy_admin_ctx *a)
{
    char name[1024];
    struct json_object *arr = NULL;
    if (!path_name(a, "/credentials/by_name/", name, sizeof name)) {
        proxy_http_error(a, 404, "Credential not found. Got credential name: ", "");
        return;
    }
    int rc = select_rows(st, name, &arr);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        return;
    }
    if (json_object_array_length(arr) == 0) {
        proxy_http_error(a, 404, "Credential not found. Got credential name: ", name);
        json_object_put(arr);
        return;
    }
    struct json_object *o = json_object_array_get_idx(arr, 0), *v, *inf;
    json_object_object_get_ex(o, "credential_values", &v);
    json_object_object_get_ex(o, "credential_info", &inf);
    struct json_object *d = sy_credentials_decrypt_values(v, salt_of(a), 0);
    a->status = 200;
    sy_buf_reset(&a->out);
    item(&a->out, name, inf, d);
    json_object_put(d);
    json_object_put(arr);
}

static void cred_by_model(struct sy_store *st, struct sy_admin_ctx *a)
{
    (void)st;
    char id[512];
    const char *mn = NULL;
    struct json_object *c = path_name(a, "/credentials/by_model/", id, sizeof id) ? deployment_creds(a, id, &mn) : NULL;
    if (!c) {
        proxy_http_error(a, 404, "Model not found", NULL);
        return;
    }
    struct sy_buf nm;
    sy_buf_init(&nm, 4096);
    sy_buf_printf(&nm, "%s-credential-%s", mn ? mn : "None", id);
    struct json_object *info = json_object_new_object();
    a->status = 200;
    sy_buf_reset(&a->out);
    item(&a->out, nm.p, info, c);
    json_object_put(info);
    json_object_put(c);
    sy_buf_free(&nm);
}

struct patch {
    const char *name, *new_name;
    struct json_object *vals, *info; /* the request's (borrowed) */
    const char *salt;
    int found;
};

static int patch_tx(struct sy_store *st, struct sy_admin_ctx *a, void *ud)
{
    struct patch *p = ud;
    struct json_object *arr = NULL, *enc = NULL, *cur_v = NULL, *cur_i = NULL;
    int rc = select_rows(st, p->name, &arr);
    if (rc < 0)
        return rc;
    if (json_object_array_length(arr) == 0) {
        json_object_put(arr);
        return 0;
    }
    p->found = 1;
    struct json_object *o = json_object_array_get_idx(arr, 0), *sv = NULL, *si = NULL;
    json_object_object_get_ex(o, "credential_values", &sv);
    json_object_object_get_ex(o, "credential_info", &si);
    cur_v = json_object_is_type(sv, json_type_object) ? json_object_get(sv) : json_object_new_object();
    cur_i = json_object_is_type(si, json_type_object) ? json_object_get(si) : json_object_new_object();
    if (p->vals) {
        enc = sy_credentials_encrypt_values(p->vals, p->salt);
        if (!enc) {
            sy_admin_error(a, 500, "internal_server_error", "None", "Internal Server Error, could not encrypt a value");
            rc = SY_ADMIN_TX_ABORT;
            goto out;
        }
        json_object_object_foreach(enc, k, v) json_object_object_add(cur_v, k, json_object_get(v));
    }
    if (p->info) {
        json_object_object_foreach(p->info, k, v) json_object_object_add(cur_i, k, json_object_get(v));
    }
    char now[32];
    sy_admin_iso_now(a, now);
    static const char *const col[] = {"credential_name", "credential_values", "credential_info", "updated_at",
                                      "updated_by"};
    struct sy_sval v[] = {sy_sv_text(p->new_name ? p->new_name : p->name), sy_sv_json(sy_admin_jtext(cur_v)),
                          sy_sv_json(sy_admin_jtext(cur_i)), sy_sv_ts(now), sy_sv_text(sy_admin_actor(a))};
    rc = sy__update_cols(st, T_CRED, "credential_name", p->name, col, v, 5, NULL, NULL);
    if (rc == SY_STORE_ECONFLICT) {
        sy_admin_error(a, 400, "bad_request_error", "credential_name", "Credential with name '%s' already exists.",
                       p->new_name);
        rc = SY_ADMIN_TX_ABORT;
    } else if (rc > 0)
        rc = 0;
out:
    json_object_put(enc);
    json_object_put(cur_v);
    json_object_put(cur_i);
    json_object_put(arr);
    return rc;
}

static void cred_update(struct sy_store *st, struct sy_admin_ctx *a)
{
    char name[1024];
    struct patch p = {0};
    if (!path_name(a, "/credentials/", name, sizeof name)) {
        proxy_http_error(a, 404, "Credential not found in DB.", NULL);
        return;
    }
    struct json_object *body = sy_admin_body(a);
    if (!body)
        return;
    p.name = name;
    if (sy_admin_get_str(a, body, "credential_name", &p.new_name) == SY_AF_ERR ||
        sy_admin_get_obj(a, body, "credential_values", &p.vals) == SY_AF_ERR ||
        sy_admin_get_obj(a, body, "credential_info", &p.info) == SY_AF_ERR)
        goto out;
    if (p.new_name && !*p.new_name)
        p.new_name = NULL; /* LiteLLM renames only on a non-empty name */
    p.salt = salt_of(a);
    if (p.vals && json_object_object_length(p.vals) && !p.salt) {
        sy_admin_error(a, 400, "bad_request_error", "None",
                       "Cannot store a credential: set LITELLM_SALT_KEY or a master key to encrypt its values");
        goto out;
    }
    int rc = sy_admin_tx(st, a, patch_tx, &p);
    if (rc == 0 && !p.found)
        proxy_http_error(a, 404, "Credential not found in DB.", NULL);
    else if (rc == 0) {
        ok(a, "Credential updated successfully");
        sy_admin_invalidate(a, "models", "credentials");
    }
out:
    json_object_put(body);
}

static void cred_delete(struct sy_store *st, struct sy_admin_ctx *a)
{
    char name[1024];
    if (!path_name(a, "/credentials/", name, sizeof name)) {
        proxy_http_error(a, 404, "Credential not found. Got credential name: ", "");
        return;
    }
    struct sy_sval p = sy_sv_text(name);
    int rc = sy_store_exec(st, "DELETE FROM " T_CRED " WHERE \"credential_name\" = $1", 1, &p, NULL, NULL);
    if (rc < 0)
        sy_admin_db_error(a, st, rc);
    else if (rc == 0)
        proxy_http_error(a, 404, "Credential not found. Got credential name: ", name);
    else {
        ok(a, "Credential deleted successfully");
        sy_admin_invalidate(a, "models", "credentials");
    }
}

const struct sy_admin_route sy_admin_credential_routes[] = {
    {HTTP_POST, "/credentials", cred_create, 0},
    {HTTP_GET, "/credentials", cred_list, SY_ADMIN_READONLY},
    {HTTP_GET, "/credentials/by_name/*", cred_by_name, SY_ADMIN_READONLY},
    {HTTP_GET, "/credentials/by_model/*", cred_by_model, SY_ADMIN_READONLY | SY_ADMIN_NODB},
    {HTTP_PATCH, "/credentials/*", cred_update, 0},
    {HTTP_DELETE, "/credentials/*", cred_delete, 0},
    {0, NULL, NULL, 0},
};
