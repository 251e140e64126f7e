/* mcp.c - LiteLLM's MCP server management routes on "LiteLLM_MCPServerTable"
 * (proxy/management_endpoints/mcp_management_endpoints.py, the rows as
 * _experimental/mcp_server/db.py writes them).
 *
 *   | route                            | who                    | answer                               |
 *   |----------------------------------|------------------------|--------------------------------------|
 *   | GET    /v1/mcp/server            | any key: the servers   | [server], config servers first       |
 *   |                                  | it may use (admins all)|                                      |
 *   | GET    /v1/mcp/server/{id}       | the same               | server; 404, 403                     |
 *   | POST   /v1/mcp/server            | proxy admin            | 201 the new row                      |
 *   | PUT    /v1/mcp/server            | proxy admin            | the updated row (server_id required) |
 *   | DELETE /v1/mcp/server/{id}       | proxy admin            | 202; 404                             |
 *   | GET    /v1/mcp/access_groups     | any key                | {"access_groups": [sorted, unique]}  |
 *
 * A server answered is its row with "credentials": null (LiteLLM's
 * _redact_mcp_credentials); a caller that is not an admin (or admin viewer)
 * also gets url, headers, env, command and args as null (LiteLLM's
 * _sanitize_mcp_server_for_non_admin: urls and headers often carry tokens).
 * Config servers are shown as sy_mcp_server_json writes them.
 *
 * Writes: server_name and alias may not hold '-' (the tool-name separator,
 * LiteLLM's validate_mcp_server_name) and are otherwise what MCP allows in
 * a tool-name prefix ([A-Za-z0-9_.], 1 to 128); spaces in alias become '_'
 * and alias defaults to server_name (validate_and_normalize_mcp_server_payload).
 * switchyard also refuses what LiteLLM lets through and then fails on at
 * use: a transport other than sse/http/stdio, an auth_type it does not know,
 * an http(s) server without an http(s) url, a stdio server without a
 * command, static_headers / env that are not string maps, and a name or
 * alias another server (config or database) already answers to.
 *
 * stdio servers run a command on the gateway's host: the API refuses them
 * (LiteLLM lets an admin add them) unless
 * general_settings.switchyard_mcp_stdio_from_api is true, the same switch
 * that lets the pool start a stdio server from the database (mcp/stdio.c):
 * by default only the config file starts processes.
 *
 * credentials are stored as LiteLLM's encrypt_credentials stores them: the
 * secret members (auth_value, client_id, client_secret, aws_access_key_id,
 * aws_secret_access_key, aws_session_token) each encrypted under the salt
 * key (core/secret.h; without a salt key, as given), the others as they
 * are; mcp/conf.c decrypts them. PUT merges credentials over the stored ones
 * while auth_type stays, and clears them when it changes without new ones
 * (LiteLLM's update_mcp_server). Each change lists the "mcp:servers"
 * invalidation: stages/mcp_registry.c reloads the rows on every instance.
 *
 * Errors: these routes raise HTTPException outside LiteLLM's ProxyException
 * handler, so they answer {"detail":{"error":"..."}} (sy__detail).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <http_parser.h>

#include "admin/admin_impl.h"
#include "admin/entity_impl.h"
#include "config/config.h"
#include "core/buf.h"
#include "core/secret.h"
#include "keys/keys.h"
#include "mcp/mcp.h"
#include "router/table.h"

#define T_MCP     "\"LiteLLM_MCPServerTable\""
#define ROUTE_PFX "/v1/mcp/server/"

/* NewMCPServerRequest / UpdateMCPServerRequest: field -> column */
static const struct sy__field F[] = {
    {"server_name", SY_FK_STR, "server_name", 0},
    {"alias", SY_FK_STR, "alias", 0},
    {"description", SY_FK_STR, "description", 0},
    {"url", SY_FK_STR, "url", 0},
    {"transport", SY_FK_STR, "transport", SY_FF_NOTNULL},
    {"spec_path", SY_FK_STR, NULL, 0}, /* schema.prisma columns newer than the table: accepted, not stored */
    {"auth_type", SY_FK_STR, "auth_type", 0},
    {"credentials", SY_FK_OBJ, "credentials", 0},
    {"mcp_info", SY_FK_OBJ, "mcp_info", 0},
    {"mcp_access_groups", SY_FK_STRARR, "mcp_access_groups", 0},
    {"allowed_tools", SY_FK_STRARR, "allowed_tools", 0},
    {"extra_headers", SY_FK_STRARR, "extra_headers", 0},
    {"static_headers", SY_FK_OBJ, "static_headers", 0},
    {"command", SY_FK_STR, "command", 0},
    {"args", SY_FK_STRARR, "args", 0},
    {"env", SY_FK_OBJ, "env", 0},
    {"authorization_url", SY_FK_STR, "authorization_url", 0},
    {"token_url", SY_FK_STR, "token_url", 0},
    {"registration_url", SY_FK_STR, "registration_url", 0},
    {"allow_all_keys", SY_FK_BOOL, "allow_all_keys", SY_FF_NOTNULL},
    {"available_on_public_internet", SY_FK_BOOL, "available_on_public_internet", SY_FF_NOTNULL},
    {"tool_name_to_display_name", SY_FK_OBJ, "tool_name_to_display_name", 0},
    {"tool_name_to_description", SY_FK_OBJ, "tool_name_to_description", 0},
    {"instructions", SY_FK_STR, "instructions", 0},
    {"is_byok", SY_FK_BOOL, "is_byok", SY_FF_NOTNULL},
    {"byok_description", SY_FK_STRARR, "byok_description", 0},
    {"byok_api_key_help_url", SY_FK_STR, "byok_api_key_help_url", 0},
    {"delegate_auth_to_upstream", SY_FK_BOOL, NULL, 0},
    {"source_url", SY_FK_STR, NULL, 0},
    {"timeout", SY_FK_NUM, "timeout", 0},
    {"server_id", SY_FK_STR, NULL, 0},
};
#define NF ((int)(sizeof F / sizeof F[0]))

/* Columns a caller that is not an admin does not see. */
static const char *const HIDDEN[] = {
    "url",       "static_headers",   "extra_headers", "env", "command", "args", "authorization_url",
    "token_url", "registration_url", "credentials",   NULL};

static int is_admin_view(const struct sy_admin_ctx *a)
{
    return a->is_admin || a->is_admin_viewer;
}

static const struct sy_config *cfg_of(const struct sy_admin_ctx *a)
{
    return a->table ? a->table->cfg : NULL;
}

/* ---- rows ------------------------------------------------------------------ */

/* One row as an answer: credentials null; the hidden columns null too when
 * the caller is not an admin. */
static void row_out(struct sy_buf *b, const struct sy_srow *r, int admin_view)
{
    int first = 1;
    SY_BUF_LIT(b, "{");
    for (int i = 0; i < r->ncols; i++) {
        const char *n = r->names[i];
        int hide = strcmp(n, "credentials") == 0;
        for (int k = 0; !hide && !admin_view && HIDDEN[k]; k++)
            hide = strcmp(n, HIDDEN[k]) == 0;
        sy_admin_jkey(b, &first, n);
        if (hide)
            SY_BUF_LIT(b, "null");
        else
            sy_sval_json(b, &r->v[i]);
    }
    SY_BUF_LIT(b, "}");
}

/* Every active row: as a JSON array of the raw rows (for sy_mcp_set_build),
 * and each one's answer in `out` (parallel, by server_id). */
struct rows {
    struct sy_buf raw;
    int n;
    char **id;
    char **ans;
    int cap;
    int admin_view;
    int oom;
};

static int rows_cb(void *ud, const struct sy_srow *r)
{
    struct rows *rs = ud;
    const char *id = sy_srow_text(r, "server_id");
    const char *ap = sy_srow_text(r, "approval_status"); /* newer LiteLLM: submissions under review */
    if (!id || (ap && strcmp(ap, "active") != 0))
        return 0;
    if (rs->n == rs->cap) {
        int cap = rs->cap ? rs->cap * 2 : 16;
        char **i2 = realloc(rs->id, (size_t)cap * sizeof *i2);
        if (!i2) {
            rs->oom = 1;
            return 1;
        }
        rs->id = i2;
        char **a2 = realloc(rs->ans, (size_t)cap * sizeof *a2);
        if (!a2) {
            rs->oom = 1;
            return 1;
        }
        rs->ans = a2;
        rs->cap = cap;
    }
    struct sy_buf b;
    sy_buf_init(&b, 16u << 20);
    row_out(&b, r, rs->admin_view);
    if (sy_buf_failed(&b) || !(rs->id[rs->n] = strdup(id))) {
        sy_buf_free(&b);
        rs->oom = 1;
        return 1;
    }
    rs->ans[rs->n] = b.p; /* NUL-terminated by sy_buf */
    if (rs->n)
        SY_BUF_LIT(&rs->raw, ",");
    sy_srow_json(&rs->raw, r);
    rs->n++;
    return 0;
}

static void rows_free(struct rows *rs)
{
    for (int i = 0; i < rs->n; i++) {
        free(rs->id[i]);
        free(rs->ans[i]);
    }
    free(rs->id);
    free(rs->ans);
    sy_buf_free(&rs->raw);
}

/* Read the active rows (one, when id is not NULL; rows under review, in
 * newer LiteLLM databases, are left out). rc as sy_store_exec. */
static int rows_read(struct sy_store *st, struct rows *rs, const char *id, int admin_view)
{
    memset(rs, 0, sizeof *rs);
    rs->admin_view = admin_view;
    sy_buf_init(&rs->raw, 256u << 20);
    SY_BUF_LIT(&rs->raw, "[");
    struct sy_sval p = sy_sv_text(id);
    int rc =
        id ? sy_store_exec(st, "SELECT * FROM " T_MCP " WHERE \"server_id\" = $1", 1, &p, rows_cb, rs)
           : sy_store_exec(st, "SELECT * FROM " T_MCP " ORDER BY \"created_at\", \"server_id\"", 0, NULL, rows_cb, rs);
    SY_BUF_LIT(&rs->raw, "]");
    if (rc >= 0 && (rs->oom || sy_buf_failed(&rs->raw)))
        rc = SY_STORE_EQUERY;
    return rc;
}

static const char *rows_answer(const struct rows *rs, const char *id)
{
    for (int i = 0; i < rs->n; i++)
        if (strcmp(rs->id[i], id) == 0)
            return rs->ans[i];
    return NULL;
}

/* The set in force as the registry would build it (config + these rows), and
 * which servers the caller may use (allowed[i], NULL-free: calloc'd). */
static struct sy_mcp_set *set_of(const struct sy_admin_ctx *a, const struct rows *rs, unsigned char **allowed)
{
    const struct sy_config *cfg = cfg_of(a);
    char err[256];
    struct sy_mcp_set *set = sy_mcp_set_build(cfg ? cfg->mcp_servers : NULL, cfg ? cfg->mcp_aliases : NULL,
                                              rs ? rs->raw.p : NULL, err, sizeof err, NULL);
    if (!set)
        return NULL;
    *allowed = calloc(set->n ? set->n : 1, 1);
    if (!*allowed) {
        sy_mcp_set_unref(set);
        return NULL;
    }
    const struct sy_keyinfo *k = a->caller_key;
    if (is_admin_view(a) || !k) /* admins see every server, whatever their own key may use */
        memset(*allowed, 1, set->n);
    else
        sy_mcp_allowed(set, 0, k->perm, k->team_perm, k->org_perm, *allowed);
    return set;
}

/* Server s as an answer. */
static void server_out(struct sy_buf *b, const struct sy_mcp_server *s, const struct rows *rs)
{
    const char *ans = s->from_db ? rows_answer(rs, s->id) : NULL;
    if (ans)
        sy_buf_puts(b, ans);
    else
        sy_mcp_server_json(s, b);
}

/* ---- GET /v1/mcp/server ---------------------------------------------------- */

static void mcp_list(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct rows rs;
    int rc = rows_read(st, &rs, NULL, is_admin_view(a));
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        rows_free(&rs);
        return;
    }
    unsigned char *allowed = NULL;
    struct sy_mcp_set *set = set_of(a, &rs, &allowed);
    if (!set) {
        sy_admin_error(a, 500, "internal_server_error", NULL, "MCP servers could not be read");
        rows_free(&rs);
        return;
    }
    SY_BUF_LIT(&a->out, "[");
    int n = 0;
    for (size_t i = 0; i < set->n; i++) {
        if (!allowed[i])
            continue;
        if (n++)
            SY_BUF_LIT(&a->out, ",");
        server_out(&a->out, &set->s[i], &rs);
    }
    SY_BUF_LIT(&a->out, "]");
    free(allowed);
    sy_mcp_set_unref(set);
    rows_free(&rs);
}

/* ---- GET /v1/mcp/server/{server_id} --------------------------------------- */

/* The {server_id} segment of the path, percent-decoded into out. */
static const char *path_id(const struct sy_admin_ctx *a, char *out, size_t cap)
{
    const char *p = a->path + strlen(ROUTE_PFX);
    size_t n = 0;
    for (; *p && n + 1 < cap; p++) {
        if (*p == '%' && isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
            char h[3] = {p[1], p[2], 0};
            out[n++] = (char)strtol(h, NULL, 16);
            p += 2;
        } else {
            out[n++] = *p;
        }
    }
    out[n] = 0;
    return out;
}

static void mcp_one(struct sy_store *st, struct sy_admin_ctx *a)
{
    char id[512];
    path_id(a, id, sizeof id);
    struct rows rs;
    int rc = rows_read(st, &rs, NULL, is_admin_view(a));
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        rows_free(&rs);
        return;
    }
    unsigned char *allowed = NULL;
    struct sy_mcp_set *set = set_of(a, &rs, &allowed);
    if (!set) {
        sy_admin_error(a, 500, "internal_server_error", NULL, "MCP servers could not be read");
        rows_free(&rs);
        return;
    }
    /* a DB server by its id first, then any server by id, name or alias */
    const struct sy_mcp_server *s = NULL;
    for (size_t i = 0; i < set->n && !s; i++)
        if (set->s[i].from_db && strcmp(set->s[i].id, id) == 0)
            s = &set->s[i];
    if (!s)
        s = sy_mcp_find(set, id, strlen(id));
    if (!s)
        sy__detail(a, 404, "MCP Server with id %s not found", id);
    else if (!allowed[s->idx])
        sy__detail(a, 403,
                   "User does not have permission to view mcp server with id %s. You can only view mcp servers that "
                   "you have access to.",
                   id);
    else
        server_out(&a->out, s, &rs);
    free(allowed);
    sy_mcp_set_unref(set);
    rows_free(&rs);
}

/* ---- GET /v1/mcp/access_groups -------------------------------------------- */

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static void mcp_access_groups(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct rows rs;
    int rc = rows_read(st, &rs, NULL, 1);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        rows_free(&rs);
        return;
    }
    unsigned char *allowed = NULL;
    struct sy_mcp_set *set = set_of(a, &rs, &allowed);
    if (!set) {
        sy_admin_error(a, 500, "internal_server_error", NULL, "MCP servers could not be read");
        rows_free(&rs);
        return;
    }
    size_t total = 0;
    for (size_t i = 0; i < set->n; i++)
        total += set->s[i].naccess_groups;
    const char **g = calloc(total ? total : 1, sizeof *g);
    size_t n = 0;
    for (size_t i = 0; g && i < set->n; i++)
        for (size_t k = 0; k < set->s[i].naccess_groups; k++)
            g[n++] = set->s[i].access_groups[k];
    if (g)
        qsort(g, n, sizeof *g, cmp_str);
    SY_BUF_LIT(&a->out, "{\"access_groups\":[");
    for (size_t i = 0, w = 0; g && i < n; i++) {
        if (i && strcmp(g[i], g[i - 1]) == 0)
            continue;
        if (w++)
            SY_BUF_LIT(&a->out, ",");
        sy_admin_jstr(&a->out, g[i]);
    }
    SY_BUF_LIT(&a->out, "]}");
    free(g);
    free(allowed);
    sy_mcp_set_unref(set);
    rows_free(&rs);
}

/* ---- writes ----------------------------------------------------------------- */

static int admin_only(struct sy_admin_ctx *a, const char *what)
{
    if (a->is_admin)
        return 0;
    if (strcmp(what, "delete") == 0)
        sy__detail(a, 403, "Call not allowed to delete MCP server. User is not a proxy admin. route=%s",
                   "DELETE /v1/mcp/server");
    else
        sy__detail(a, 403,
                   "User does not have permission to %s mcp servers. You can only %s mcp servers if you are a "
                   "PROXY_ADMIN.",
                   what, what);
    return -1;
}

/* A tool-name prefix: server_name or alias. 0, or -1 with the answer written. */
static int check_prefix(struct sy_admin_ctx *a, const char *field, const char *v)
{
    if (strchr(v, '-')) {
        sy__detail(a, 400, "Server name cannot contain '-'. Use an alternative character instead Found: %s", v);
        return -1;
    }
    size_t n = strlen(v);
    int ok = n >= 1 && n <= 128;
    for (size_t i = 0; ok && i < n; i++)
        ok = isalnum((unsigned char)v[i]) || v[i] == '_' || v[i] == '.';
    if (!ok) {
        sy__detail(a, 400,
                   "Invalid MCP tool prefix '%.200s' provided via %s: use 1 to 128 of A-Z, a-z, 0-9, '_' and '.'", v,
                   field);
        return -1;
    }
    return 0;
}

/* A JSON object of strings only (static_headers, env), given as text. */
static int string_map(const char *json)
{
    struct json_object *o = json ? json_tokener_parse(json) : NULL;
    int ok = o && json_object_is_type(o, json_type_object);
    if (ok) {
        json_object_object_foreach(o, k, v)
        {
            (void)k;
            if (!json_object_is_type(v, json_type_string))
                ok = 0;
        }
    }
    if (o)
        json_object_put(o);
    return ok;
}

static const char *cs_text(const struct sy__cset *cs, const char *col)
{
    const struct sy_sval *v = sy__cset_get(cs, col);
    return v && (v->k == SY_SV_TEXT || v->k == SY_SV_JSON || v->k == SY_SV_TEXTARR) ? v->s : NULL;
}

/* The value of col after the write: the set's, else the row's (update). */
static const char *eff(const struct sy__cset *cs, const struct sy_admin_row *row, const char *col, int *set_null)
{
    const struct sy_sval *v = sy__cset_get(cs, col);
    if (set_null)
        *set_null = v && v->k == SY_SV_NULL;
    if (v)
        return v->k == SY_SV_NULL ? NULL : v->s;
    return row && row->found ? sy_srow_text(&row->r, col) : NULL;
}

static int http_url(const char *u)
{
    if (!u)
        return 0;
    const char *h = strncasecmp(u, "https://", 8) == 0 ? u + 8 : strncasecmp(u, "http://", 7) == 0 ? u + 7 : NULL;
    if (!h || !*h || *h == '/' || *h == '?' || *h == '#')
        return 0;
    for (const char *p = u; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == 0x7f)
            return 0;
    return 1;
}

/* Normalize and check the fields of a write (row: the existing row on
 * update). 0, or -1 with the answer written. */
static int check_write(struct sy_admin_ctx *a, struct json_object *body, struct sy__cset *cs,
                       const struct sy_admin_row *row)
{
    const char *name = cs_text(cs, "server_name"), *alias = cs_text(cs, "alias");
    if (name && check_prefix(a, "server_name", name) < 0)
        return -1;
    /* alias: spaces -> '_', default server_name (LiteLLM's normalization) */
    if (alias) {
        char *n = strdup(alias);
        if (!n) {
            sy_admin_error(a, 500, "internal_server_error", NULL, "out of memory");
            return -1;
        }
        for (char *p = n; *p; p++)
            if (*p == ' ')
                *p = '_';
        sy__cset_put(cs, "alias", sy_sv_text(sy__cset_own(cs, n)));
        alias = cs_text(cs, "alias");
        if (check_prefix(a, "alias", alias) < 0)
            return -1;
    } else if (name && !sy__cset_has(cs, "alias")) {
        sy__cset_put(cs, "alias", sy_sv_text(name));
    }
    const char *tr = eff(cs, row, "transport", NULL);
    if (!tr)
        tr = "sse"; /* the column's default */
    if (strcmp(tr, "sse") != 0 && strcmp(tr, "http") != 0 && strcmp(tr, "stdio") != 0) {
        sy_admin_422(a, "transport", "enum", "Input should be 'sse', 'http' or 'stdio'",
                     json_object_object_get(body, "transport"));
        return -1;
    }
    const char *at = cs_text(cs, "auth_type");
    static const char *const AUTH[] = {"none", "api_key", "bearer_token", "basic", "authorization", "oauth2", NULL};
    int known = !at;
    for (int i = 0; !known && AUTH[i]; i++)
        known = strcmp(at, AUTH[i]) == 0;
    if (!known) {
        sy_admin_422(a, "auth_type", "enum",
                     "Input should be 'none', 'api_key', 'bearer_token', 'basic', 'authorization' or 'oauth2'",
                     json_object_object_get(body, "auth_type"));
        return -1;
    }
    const char *maps[] = {"static_headers", "env"};
    for (int i = 0; i < 2; i++) {
        const char *m = cs_text(cs, maps[i]);
        if (m && !string_map(m)) {
            sy__detail(a, 400, "%s must map names to strings", maps[i]);
            return -1;
        }
    }
    if (strcmp(tr, "stdio") == 0) {
        const struct sy_config *cfg = cfg_of(a);
        if (!cfg || !cfg->mcp_stdio_from_api) { /* by default only the config starts processes */
            sy__detail(a, 400,
                       "stdio MCP servers start a process on the gateway's host: declare them in config.yaml's "
                       "mcp_servers, or set general_settings.switchyard_mcp_stdio_from_api: true to allow adding "
                       "them through the API");
            return -1;
        }
        const char *cmd = eff(cs, row, "command", NULL);
        if (!cmd || !*cmd) {
            sy__detail(a, 400, "command is required for a stdio MCP server");
            return -1;
        }
    } else {
        const char *url = eff(cs, row, "url", NULL);
        if (!http_url(url)) {
            sy__detail(a, 400, "url must be an http:// or https:// URL for a %s MCP server (got %.200s)", tr,
                       url ? url : "None");
            return -1;
        }
    }
    return 0;
}

/* The secret members of credentials encrypted in the set, as LiteLLM's
 * encrypt_credentials (mcp_server/db.py); nothing to do without a salt key.
 * 0, or -1 with a 500 written. */
static int encrypt_credentials(struct sy_admin_ctx *a, struct sy__cset *cs)
{
    static const char *const SECRET[] = {
        "auth_value", "client_id", "client_secret", "aws_access_key_id", "aws_secret_access_key", "aws_session_token"};
    const char *salt = sy_secret_salt(a->master_key), *text = cs_text(cs, "credentials");
    struct json_object *o = text && salt ? json_tokener_parse(text) : NULL;
    if (!o || !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        return 0;
    }
    for (size_t i = 0; i < sizeof SECRET / sizeof SECRET[0]; i++) {
        struct json_object *v;
        if (!json_object_object_get_ex(o, SECRET[i], &v) || !json_object_is_type(v, json_type_string))
            continue;
        size_t n = (size_t)json_object_get_string_len(v), cap = sy_secret_encrypted_len(n) + 1;
        char *e = malloc(cap);
        long l = e ? sy_secret_encrypt(json_object_get_string(v), n, salt, e, cap) : -1;
        if (l < 0) {
            free(e);
            json_object_put(o);
            sy_admin_error(a, 500, "internal_server_error", NULL, "could not encrypt credentials.%s", SECRET[i]);
            return -1;
        }
        json_object_object_add(o, SECRET[i], json_object_new_string_len(e, (int)l));
        free(e);
    }
    char *t = strdup(sy_admin_jtext(o));
    json_object_put(o);
    if (!t) {
        sy_admin_error(a, 500, "internal_server_error", NULL, "out of memory");
        return -1;
    }
    sy__cset_put(cs, "credentials", sy_sv_json(sy__cset_own(cs, t)));
    return 0;
}

/* PUT, as LiteLLM's update_mcp_server: with the same auth_type, credentials
 * given are merged over the stored ones (a member not given keeps its stored,
 * encrypted value: a client cannot send back what it was never shown); a new
 * auth_type without credentials clears them. 0, or -1 with a 500 written. */
static int merge_credentials(struct sy_admin_ctx *a, struct sy__cset *cs, const struct sy_admin_row *row)
{
    const char *at = cs_text(cs, "auth_type"), *old_at = sy_srow_text(&row->r, "auth_type");
    int same = !at || (old_at && strcmp(at, old_at) == 0);
    const struct sy_sval *given = sy__cset_get(cs, "credentials");
    if (!given) {
        if (!same && old_at)
            sy__cset_put(cs, "credentials", sy_sv_null());
        return 0;
    }
    const struct sy_sval *cur = sy_srow_get(&row->r, "credentials");
    if (!same || given->k != SY_SV_JSON || !cur || cur->k != SY_SV_JSON)
        return 0;
    struct json_object *o = json_tokener_parse(cur->s), *n = json_tokener_parse(given->s);
    int rc = 0;
    if (json_object_is_type(o, json_type_object) && json_object_is_type(n, json_type_object)) {
        json_object_object_foreach(n, k, v) json_object_object_add(o, k, json_object_get(v));
        char *t = strdup(sy_admin_jtext(o));
        if (t)
            sy__cset_put(cs, "credentials", sy_sv_json(sy__cset_own(cs, t)));
        else {
            sy_admin_error(a, 500, "internal_server_error", NULL, "out of memory");
            rc = -1;
        }
    }
    json_object_put(o);
    json_object_put(n);
    return rc;
}

/* No other server (config, or another row) answers to the name or alias of
 * this one. 0, 1 with the answer written, < 0 a store error. */
static int check_unique(struct sy_store *st, struct sy_admin_ctx *a, const struct sy__cset *cs,
                        const struct sy_admin_row *row, const char *self_id)
{
    const char *names[2] = {eff(cs, row, "server_name", NULL), eff(cs, row, "alias", NULL)};
    const struct sy_config *cfg = cfg_of(a);
    char err[256];
    struct sy_mcp_set *cset = cfg && cfg->mcp_servers
                                  ? sy_mcp_set_build(cfg->mcp_servers, cfg->mcp_aliases, NULL, err, sizeof err, NULL)
                                  : NULL;
    for (int i = 0; i < 2; i++) {
        if (!names[i])
            continue;
        const struct sy_mcp_server *s = cset ? sy_mcp_find(cset, names[i], strlen(names[i])) : NULL;
        if (s) {
            sy__detail(a, 400, "MCP server name or alias '%s' is already used by the config's server '%s'", names[i],
                       s->name);
            sy_mcp_set_unref(cset);
            return 1;
        }
        struct sy_sval p[2] = {sy_sv_text(names[i]), sy_sv_text(self_id ? self_id : "")};
        struct sy_admin_row other = {0};
        int rc = sy_store_exec(st,
                               "SELECT \"server_id\" FROM " T_MCP " WHERE (\"server_name\" = $1 OR \"alias\" = $1 OR "
                               "\"server_id\" = $1) AND \"server_id\" <> $2 LIMIT 1",
                               2, p, sy_admin_row_cb, &other);
        if (rc < 0) {
            if (cset)
                sy_mcp_set_unref(cset);
            sy_admin_row_free(&other);
            return rc;
        }
        if (other.found) {
            sy__detail(a, 400, "MCP server name or alias '%s' is already used by server %s", names[i],
                       sy_srow_text(&other.r, "server_id"));
            sy_admin_row_free(&other);
            if (cset)
                sy_mcp_set_unref(cset);
            return 1;
        }
        sy_admin_row_free(&other);
    }
    if (cset)
        sy_mcp_set_unref(cset);
    return 0;
}

static void answer_row(struct sy_admin_ctx *a, const struct sy_admin_row *row)
{
    sy_buf_reset(&a->out);
    row_out(&a->out, &row->r, 1);
}

/* ---- POST /v1/mcp/server ---------------------------------------------------- */

static void mcp_create(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct sy__cset cs = {0};
    struct sy_admin_row row = {0};
    struct json_object *body = sy_admin_body(a);
    const char *given = NULL;
    if (!body)
        return;
    if (sy_admin_get_str(a, body, "server_id", &given) < 0 || sy__collect(a, body, F, NF, 0, &cs) < 0)
        goto out;
    if (admin_only(a, "create") < 0)
        goto out;
    if (given && (strcmp(given, "all-team-mcpservers") == 0 || strcmp(given, "all-proxy-mcpservers") == 0)) {
        sy__detail(a, 400, "MCP Server with id %s is special and cannot be used.", given);
        goto out;
    }
    if (given && (!*given || strlen(given) > 200)) {
        sy__detail(a, 400, "server_id must be 1 to 200 characters");
        goto out;
    }
    if (check_write(a, body, &cs, NULL) < 0 || encrypt_credentials(a, &cs) < 0)
        goto out;
    char id[37];
    if (!given)
        sy_admin_uuid(id);
    const char *sid = given ? given : id;
    if (given) {
        struct sy_sval p = sy_sv_text(given);
        int rc = sy_store_exec(st, "SELECT 1 FROM " T_MCP " WHERE \"server_id\" = $1", 1, &p, NULL, NULL);
        if (rc < 0) {
            sy_admin_db_error(a, st, rc);
            goto out;
        }
        if (rc > 0) {
            sy__detail(a, 400, "MCP Server with id %s already exists. Cannot create another.", given);
            goto out;
        }
    }
    int rc = check_unique(st, a, &cs, NULL, sid);
    if (rc < 0)
        sy_admin_db_error(a, st, rc);
    if (rc != 0)
        goto out;
    char now[32];
    sy_admin_iso_now(a, now);
    sy__cset_put(&cs, "server_id", sy_sv_text(sid));
    if (!sy__cset_has(&cs, "transport"))
        sy__cset_put(&cs, "transport", sy_sv_text("sse"));
    sy__cset_put(&cs, "created_at", sy_sv_ts(now));
    sy__cset_put(&cs, "updated_at", sy_sv_ts(now));
    sy__cset_put(&cs, "created_by", sy_sv_text(sy_admin_actor(a)));
    sy__cset_put(&cs, "updated_by", sy_sv_text(sy_admin_actor(a)));
    rc = sy__insert(st, T_MCP, &cs, sy_admin_row_cb, &row);
    if (rc == SY_STORE_ECONFLICT) {
        sy__detail(a, 400, "MCP Server with id %s already exists. Cannot create another.", sid);
        goto out;
    }
    if (rc < 0 || !row.found) {
        sy_admin_db_error(a, st, rc < 0 ? rc : SY_STORE_EQUERY);
        goto out;
    }
    a->status = 201;
    answer_row(a, &row);
    sy_admin_invalidate(a, "mcp", "servers");
out:
    sy_admin_row_free(&row);
    sy__cset_free(&cs);
    json_object_put(body);
}

/* ---- PUT /v1/mcp/server ----------------------------------------------------- */

static void mcp_update(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct sy__cset cs = {0};
    struct sy_admin_row row = {0}, out_row = {0};
    struct json_object *body = sy_admin_body(a);
    const char *sid = NULL;
    if (!body)
        return;
    int r = sy_admin_get_str(a, body, "server_id", &sid);
    if (r < 0)
        goto out;
    if (r != SY_AF_SET) {
        sy__missing(a, "body", "server_id", body);
        goto out;
    }
    if (sy__collect(a, body, F, NF, 0, &cs) < 0 || admin_only(a, "update") < 0)
        goto out;
    struct sy_sval p = sy_sv_text(sid);
    int rc = sy_store_exec(st, "SELECT * FROM " T_MCP " WHERE \"server_id\" = $1", 1, &p, sy_admin_row_cb, &row);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    if (!row.found) {
        sy__detail(a, 404, "MCP Server not found, passed server_id=%s", sid);
        goto out;
    }
    if (check_write(a, body, &cs, &row) < 0 || encrypt_credentials(a, &cs) < 0 || merge_credentials(a, &cs, &row) < 0)
        goto out;
    rc = check_unique(st, a, &cs, &row, sid);
    if (rc < 0)
        sy_admin_db_error(a, st, rc);
    if (rc != 0)
        goto out;
    char now[32];
    sy_admin_iso_now(a, now);
    sy__cset_put(&cs, "updated_at", sy_sv_ts(now));
    sy__cset_put(&cs, "updated_by", sy_sv_text(sy_admin_actor(a)));
    rc = sy__update(st, T_MCP, "server_id", sid, &cs, sy_admin_row_cb, &out_row);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    if (!out_row.found) { /* deleted meanwhile */
        sy__detail(a, 404, "MCP Server not found, passed server_id=%s", sid);
        goto out;
    }
    answer_row(a, &out_row);
    sy_admin_invalidate(a, "mcp", "servers");
out:
    sy_admin_row_free(&row);
    sy_admin_row_free(&out_row);
    sy__cset_free(&cs);
    json_object_put(body);
}

/* ---- DELETE /v1/mcp/server/{server_id} -------------------------------------- */

static void mcp_delete(struct sy_store *st, struct sy_admin_ctx *a)
{
    char id[512];
    path_id(a, id, sizeof id);
    if (admin_only(a, "delete") < 0)
        return;
    struct sy_sval p = sy_sv_text(id);
    int rc = sy_store_exec(st, "DELETE FROM " T_MCP " WHERE \"server_id\" = $1", 1, &p, NULL, NULL);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        return;
    }
    if (rc == 0) {
        sy__detail(a, 404, "MCP Server not found, passed server_id=%s", id);
        return;
    }
    a->status = 202;
    SY_BUF_LIT(&a->out, "{}");
    sy_admin_invalidate(a, "mcp", "servers");
}

const struct sy_admin_route sy_admin_mcp_routes[] = {
    {HTTP_GET, "/v1/mcp/server", mcp_list, SY_ADMIN_SELF},
    {HTTP_POST, "/v1/mcp/server", mcp_create, SY_ADMIN_SELF},
    {HTTP_PUT, "/v1/mcp/server", mcp_update, SY_ADMIN_SELF},
    {HTTP_GET, "/v1/mcp/access_groups", mcp_access_groups, SY_ADMIN_SELF},
    {HTTP_GET, "/v1/mcp/server/*", mcp_one, SY_ADMIN_SELF},
    {HTTP_DELETE, "/v1/mcp/server/*", mcp_delete, SY_ADMIN_SELF},
    {0, NULL, NULL, 0},
};
