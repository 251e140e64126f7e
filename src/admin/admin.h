/* admin.h - LiteLLM's management API: keys, users, teams, customers,
 * organizations, budgets, spend, model info.
 *
 * Handlers run on a DB thread (store/dbpool.h), synchronously: they parse the
 * request (json-c), read and write the store, and fill a response. The loop
 * side (admin/routes.c) matches the route, checks the caller may call it,
 * copies what the handler needs into a sy_admin_ctx, submits it and sends the
 * response when it comes back; then it publishes the cache invalidations the
 * handler listed (sy_keys_invalidate here, and to other instances through
 * Redis when configured).
 *
 * Request and response JSON follow LiteLLM's (proxy/_types.py request models,
 * management_endpoints/ *.py): field names, defaults, nulls, statuses. Errors
 * are LiteLLM's ProxyException shape, written with sy_admin_error:
 *   {"error":{"message":"...","type":"...","param":"...","code":"400"}}
 */
#ifndef SY_ADMIN_H
#define SY_ADMIN_H

#include <stddef.h>

#include "core/buf.h"
#include "store/dbpool.h"

struct sy_table;
struct sy_keyinfo;

#define SY_ADMIN_MAX_INVAL 64

struct sy_admin_ctx {
    struct sy_db_job job; /* first: the DB job */
    /* request (read-only for handlers; NUL-terminated copies) */
    int method;        /* http_parser's HTTP_GET, HTTP_POST, HTTP_DELETE, ... */
    const char *path;  /* "/key/generate", "/key/sk-.../regenerate" */
    const char *query; /* raw query string without '?', "" when none */
    const char *body;  /* "" when none */
    size_t body_len;
    int is_admin;               /* master key, or a key whose user is proxy_admin (or auth off) */
    int is_admin_viewer;        /* proxy_admin_viewer: read-only routes */
    int is_master;              /* the master key itself (or auth off) */
    int caller_role;            /* enum sy_role as the gate saw it: proxy_admin for admins; internal_user for a
                                 * key whose user has no role; SY_ROLE_NONE for a key without a user */
    const char *caller_token;   /* sha256 hex of the caller's virtual key; NULL for the master key / no auth */
    const char *caller_user_id; /* the caller key's user_id, NULL when none */
    const char *caller_team_id;
    const struct sy_keyinfo *caller_key; /* the caller's key (keys/keys.h), held until the reply; NULL: master key */
    double now;                          /* unix seconds at the request */
    const struct sy_table *table;        /* the model table (router/table.h: model groups, for /model/info, the
                                          * config); read-only, held by the caller until the reply */
    const char *master_key;              /* general_settings.master_key, NULL when auth is off */
    size_t master_key_len;
    /* NODB routes only (they run on the loop while the caller's key is held):
     * the caller key's model check, NULL when it may use every model (an
     * admin, or a key and team without a model list) */
    int (*model_allowed)(void *ud, const char *model);
    void *model_ud;
    /* response (filled by the handler) */
    int status;        /* default 200 */
    struct sy_buf out; /* JSON body */
    /* cache invalidations to publish once the handler is done: "token:<hash>",
     * "user:<id>", "team:<id>", "end_user:<id>", "org:<id>", "all" */
    char *inval[SY_ADMIN_MAX_INVAL];
    int ninval;
    void *priv; /* the loop side's */
};

typedef void (*sy_admin_fn)(struct sy_store *st, struct sy_admin_ctx *a);

/* Response helpers (handlers). */
void sy_admin_error(struct sy_admin_ctx *a, int status, const char *type, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The store failed: 500 "DB error" (or, for SY_STORE_EDOWN, LiteLLM's
 * "No connected db." 500 / 503 text). */
void sy_admin_db_error(struct sy_admin_ctx *a, struct sy_store *st, int rc);
void sy_admin_invalidate(struct sy_admin_ctx *a, const char *kind, const char *id);
/* Query parameter `name` decoded (percent-decoding, '+' as space) into out;
 * returns out or NULL when absent. */
const char *sy_admin_query(const struct sy_admin_ctx *a, const char *name, char *out, size_t cap);
/* A fresh id: uuid4 text (37 bytes). */
void sy_admin_uuid(char out[37]);
/* New plaintext key "sk-" + 22 url-safe random chars (LiteLLM's token_urlsafe(16)); out >= 32. */
void sy_admin_new_key(char *out, size_t cap);

/* Route table entry (admin/routes.c collects every file's table). */
struct sy_admin_route {
    int method;       /* HTTP_GET / HTTP_POST / ...; 0 = GET or POST */
    const char *path; /* exact, or a pattern with one '*' segment: "/key/{*}/regenerate" written with a bare star */
    sy_admin_fn fn;
    unsigned flags;
};
/* Who may call a route besides proxy admins (stages/admin.c is the
 * gate; docs/admin-api.md has the table). A flag lets the role reach the
 * handler, which then narrows what it reads or writes to the caller's own. */
#define SY_ADMIN_READONLY  0x1  /* proxy_admin_viewer */
#define SY_ADMIN_SELF      0x2  /* any key (LiteLLM's info_routes): key/info, user/info, team/info, model info */
#define SY_ADMIN_NODB      0x4  /* runs without a database (model info) */
#define SY_ADMIN_USER      0x8  /* internal_user (LiteLLM's internal_user_routes): own keys, own spend */
#define SY_ADMIN_USER_VIEW 0x10 /* internal_user_viewer (internal_user_view_only_routes): own spend */
#define SY_ADMIN_TEAM      0x20 /* any key with a user (self_managed_routes): the handler requires team admin */
#define SY_ADMIN_MASTER    0x40 /* the master key only (LiteLLM's master_key_only_routes) */

/* Each handler file exports its table, NULL-path terminated. */
extern const struct sy_admin_route sy_admin_key_routes[];        /* admin/keys.c */
extern const struct sy_admin_route sy_admin_user_routes[];       /* admin/users.c */
extern const struct sy_admin_route sy_admin_team_routes[];       /* admin/teams.c */
extern const struct sy_admin_route sy_admin_customer_routes[];   /* admin/customers.c */
extern const struct sy_admin_route sy_admin_org_routes[];        /* admin/orgs.c */
extern const struct sy_admin_route sy_admin_budget_routes[];     /* admin/budgets.c */
extern const struct sy_admin_route sy_admin_spend_routes[];      /* admin/spend.c */
extern const struct sy_admin_route sy_admin_model_routes[];      /* admin/models.c */
extern const struct sy_admin_route sy_admin_mcp_routes[];        /* admin/mcp.c */
extern const struct sy_admin_route sy_admin_credential_routes[]; /* admin/credentials.c */

/* the UI's data (issue 25) */
extern const struct sy_admin_route sy_admin_activity_routes[];  /* admin/activity.c */
extern const struct sy_admin_route sy_admin_logdetail_routes[]; /* admin/logdetail.c */
extern const struct sy_admin_route sy_admin_settings_routes[];  /* admin/settings.c */

/* Find the handler for method + path: the route, or NULL; *path_known set
 * when the path exists with another method. */
const struct sy_admin_route *sy_admin_match(int method, const char *path, size_t n, int *path_known);
/* The management route nearest to path (edit distance, each cut to 64 bytes;
 * patterns with '*' skipped): its path (static), *dist and its *method
 * (0 = GET or POST); NULL when there is none. For 404 messages. */
const char *sy_admin_nearest(const char *path, size_t n, size_t *dist, int *method);
/* Call fn for every management route, in match order (method 0 = GET or POST;
 * a pattern's '*' stands for one path segment). For GET /routes. */
void sy_admin_each(void (*fn)(void *ud, int method, const char *path), void *ud);
/* The edit distance used for it (exported for the gateway's own routes). */
size_t sy_route_distance(const char *a, size_t an, const char *b, size_t bn);

#endif
