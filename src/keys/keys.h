/* keys.h - virtual keys on the hot path: the auth-object cache and its loader.
 *
 * A request presenting a virtual key ("sk-...") is resolved to one
 * sy_keyinfo: the key's row of "LiteLLM_VerificationToken" with, joined in,
 * what the checks before a call need from its team ("LiteLLM_TeamTable"), its
 * user ("LiteLLM_UserTable"), its team membership ("LiteLLM_TeamMembership"
 * + its "LiteLLM_BudgetTable" row) and its organization
 * ("LiteLLM_OrganizationTable" + budget row). End users (customers,
 * "LiteLLM_EndUserTable") are cached separately, by id.
 *
 * The cache is process-wide (every worker reads it), keyed by the key's
 * SHA-256 hex ("token"), sharded, each shard a read-mostly rwlock'd open hash;
 * entries are immutable and reference-counted once published, except the
 * spend figures, which are atomics bumped as requests settle. A lookup never
 * blocks on the database: a miss (or an entry older than the TTL) returns
 * NULL and the caller loads the entry on a DB thread (sy_keys_load) and
 * publishes it (sy_keys_put) before resuming the request. Unknown keys are
 * cached too (found == 0) for neg_ttl, so a flood of bad keys costs one DB
 * read per key per neg_ttl.
 *
 * Freshness across instances: an entry is reloaded when older than ttl
 * (general_settings.user_api_key_cache_ttl; default 10 s); changes made
 * through this instance's admin API invalidate at once; with Redis, every
 * instance's admin changes are published on the channel "switchyard:keys"
 * and every instance drops the named entries at once (keys/invalidate.c).
 */
#ifndef SY_KEYS_H
#define SY_KEYS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct sy_store;

/* user_role values (LiteLLM's LitellmUserRoles). */
enum sy_role {
    SY_ROLE_NONE = 0,
    SY_ROLE_PROXY_ADMIN,        /* "proxy_admin": every management route */
    SY_ROLE_PROXY_ADMIN_VIEWER, /* "proxy_admin_viewer": read-only management routes */
    SY_ROLE_INTERNAL_USER,      /* "internal_user" */
    SY_ROLE_INTERNAL_USER_VIEWER,
    SY_ROLE_TEAM,    /* "team" */
    SY_ROLE_CUSTOMER /* "customer" */
};
enum sy_role sy_role_parse(const char *s);
const char *sy_role_name(enum sy_role r);

/* One entity that spends: a key, user, team, team member, end user or org. */
struct sy_budget {
    char *id;             /* token, user_id, team_id, "team_id:user_id", end-user id, organization_id */
    _Atomic double spend; /* as read from the DB, plus what settled here since */
    double max_budget;    /* < 0: none */
    double soft_budget;   /* < 0: none */
    int64_t rpm_limit, tpm_limit, max_parallel; /* < 0: none */
    double budget_reset_at;                     /* unix s; 0 none */
    char *budget_duration;                      /* "30d"...; NULL none */
    char **models;                              /* the entity's model list (team, user, org); NULL when none */
    size_t nmodels;
    int blocked;
    char *metadata; /* JSON object text, NULL when none */
};

struct sy_model_budget { /* one entry of a key's model_max_budget */
    char *model;
    double max_budget;
    char *budget_duration; /* may be NULL */
    double spend;          /* from the key's model_spend */
};

/* The MCP part of an object_permission (LiteLLM_ObjectPermissionTable) of a
 * key, team or organization (mcp/mcp.h sy_mcp_allowed reads it). */
struct sy_objperm {
    char **mcp_servers; /* server ids, names or aliases; may hold "no-mcp-servers" */
    size_t nmcp_servers;
    char **mcp_access_groups;
    size_t nmcp_access_groups;
    char *mcp_tool_permissions; /* {"<server>": ["tool", ...]} as JSON object text; NULL: none */
};

struct sy_keyinfo {
    atomic_int refs;
    char token[65];   /* sha256 hex of the key */
    int found;        /* 0: no such key (negative entry) */
    double loaded_at; /* sy_keys_now() when loaded */
    char *key_name;   /* "sk-...abcd" */
    char *key_alias;
    char *user_id, *team_id, *org_id;
    enum sy_role role; /* the key's user's role (SY_ROLE_NONE when no user) */
    int blocked;
    double expires; /* unix s; 0 never */
    char **models;  /* the key's models[] (may hold access-group names, "all-team-models") */
    size_t nmodels;
    char **allowed_routes;
    size_t nallowed_routes;
    char **aliases;      /* the key's aliases {alias: model} as pairs: alias, model, alias, model, ... */
    size_t naliases;     /* strings (2 per alias) */
    char **team_aliases; /* the team's model_aliases (LiteLLM_ModelTable), the same shape */
    size_t nteam_aliases;
    struct sy_budget key; /* the key's own spend, budget and limits (key.id = token) */
    struct sy_model_budget *mmb;
    size_t nmmb;
    struct sy_budget *team; /* NULL: no team (or the team row is gone) */
    char *team_alias;
    struct sy_budget *user;   /* NULL: no user row */
    struct sy_budget *member; /* NULL: no membership budget */
    struct sy_budget *org;    /* NULL: no organization */
    /* object_permission rows (their MCP part) of the key, its team and its
     * organization; NULL: that entity has none */
    struct sy_objperm *perm, *team_perm, *org_perm;
};

/* End user ("customer"): id, spend, budget (from its budget_id row), blocked. */
struct sy_enduser {
    atomic_int refs;
    int found;
    double loaded_at;
    struct sy_budget b;
    char *alias;
    char *allowed_model_region;
    char *default_model;
};

/* Start the cache (ttl and neg_ttl in seconds; <= 0 picks the defaults 10 and 5). */
void sy_keys_init(double ttl_s, double neg_ttl_s);
void sy_keys_shutdown(void); /* frees every entry (at exit) */
double sy_keys_now(void);    /* monotonic seconds */

/* A referenced fresh entry for token (64 hex chars), or NULL on a miss or a
 * stale entry. Never blocks on the database. */
struct sy_keyinfo *sy_keys_get(const char *token);
/* The entry for token however old (NULL when never loaded or evicted): what
 * auth falls back on while the database is unreachable. */
struct sy_keyinfo *sy_keys_get_stale(const char *token);
/* Publish a loaded entry (takes over one reference; replaces an older one). */
void sy_keys_put(struct sy_keyinfo *ki);
void sy_keyinfo_unref(struct sy_keyinfo *ki);

struct sy_enduser *sy_endusers_get(const char *id);
void sy_endusers_put(struct sy_enduser *eu);
void sy_enduser_unref(struct sy_enduser *eu);

/* Drop cached entries: kind is "token", "user", "team", "end_user", "org" or
 * "all" (id ignored); an entry goes when its own id or a joined entity's id
 * matches. Thread-safe. */
void sy_keys_invalidate(const char *kind, const char *id);
/* Called by sy_keys_invalidate for every kind after the cache's own work
 * ("mcp", "all", ...: stages/mcp_registry.c reloads the MCP servers on
 * "mcp:servers"), on whatever thread invalidates; NULL: none. */
void sy_keys_set_invalidate_hook(void (*fn)(const char *kind, const char *id));
/* A second hook of the same kind, called after that one (stages/model_registry.c
 * reloads the database models on "models"). */
void sy_keys_add_invalidate_hook(void (*fn)(const char *kind, const char *id));

/* Load on a DB thread. Returns 0 and sets *out (refs 1; found 0 when there is
 * no such key / end user), or a negative SY_STORE_E* (database unreachable:
 * the caller decides, per allow_requests_on_db_unavailable). */
int sy_keys_load(struct sy_store *st, const char *token, struct sy_keyinfo **out);
int sy_endusers_load(struct sy_store *st, const char *id, struct sy_enduser **out);

/* Settled spend: bump the cached figures of every entity of ki (and eu) by
 * amount (called when a request's cost is known; the DB write is the spend
 * writer's). model may be NULL. */
void sy_keys_add_spend(struct sy_keyinfo *ki, struct sy_enduser *eu, const char *model, double amount);

/* sha256 hex of a presented key (out: 65 bytes). */
void sy_keys_hash(const char *key, size_t n, char out[65]);
/* LiteLLM's key_name for a plaintext key: "sk-...<last 4>". out >= 16 bytes. */
void sy_keys_abbrev(const char *key, size_t n, char *out, size_t cap);

/* ---- checks before a call (keys/checks.c): LiteLLM's order and texts ----
 * Each returns 0 (allowed) or an HTTP status with type and message filled
 * (type: "auth_error", "budget_exceeded", "expired_key",
 * "key_model_access_denied", "team_model_access_denied", ...). */
struct sy_check_err {
    int status;
    char type[48];
    char param[32];
    char message[512];
};
/* Key blocked, expired, team blocked, allowed_routes (route is the request path). */
int sy_keys_check_key(const struct sy_keyinfo *ki, const char *route, double now_unix, struct sy_check_err *e);
/* Model access for model (the requested group name) given the key's and its
 * team's lists, access groups (groups lists every model group's
 * model_info.access_groups: access_group_of(model) -> NUL-separated names)
 * and "all-team-models". */
typedef const char *(*sy_access_groups_fn)(void *ud, const char *model);
int sy_keys_check_model(const struct sy_keyinfo *ki, const char *model, sy_access_groups_fn ag, void *ud,
                        struct sy_check_err *e);
/* The same, allowing model when either it or `also` (what model is an alias
 * of: the key's / team's alias, else the router's model_group_alias; may be
 * NULL) passes each list, as LiteLLM's _can_object_call_model; a refusal
 * names model. Except: when the key's own aliases route model elsewhere
 * (after the team's model_aliases), the team's, member's and user's lists
 * must allow that target (the key holder cannot widen them). */
int sy_keys_check_model_as(const struct sy_keyinfo *ki, const char *model, const char *also, sy_access_groups_fn ag,
                           void *ud, struct sy_check_err *e);
/* The model `model` is an alias of in the pairs (alias, model, ...), or NULL. */
const char *sy_keys_alias_of(char *const *pairs, size_t n, const char *model);
/* LiteLLM's model_alias_map for the key: {**key aliases, **team model_aliases}
 * (the team's win); NULL when model is none of them. */
const char *sy_keys_alias_target(const struct sy_keyinfo *ki, const char *model);
/* Spent-already checks (no reservation): key, user, team, member, org, end
 * user, the key's model_max_budget for model; LiteLLM's messages
 * ("Budget has been exceeded! Current cost: X, Max budget: Y"). */
int sy_keys_check_budgets(const struct sy_keyinfo *ki, const struct sy_enduser *eu, const char *model,
                          struct sy_check_err *e);
/* LiteLLM's budget refusal for one entity (kind: "key", "team",
 * "organization", "user", "team_member", "end_user"), for the reservation
 * that finds nothing left (stages/budget.c). Returns e->status (400). */
int sy_keys_budget_error(const char *kind, const struct sy_keyinfo *ki, const struct sy_enduser *eu, double spend,
                         double max_budget, struct sy_check_err *e);

/* ---- cross-instance invalidation (invalidate.c) ----------------------------
 * Subscribe to "switchyard:keys" on Redis in a thread of its own; each message
 * "<kind>:<id>" calls sy_keys_invalidate(kind, id). 0, or -1 when the thread
 * cannot be started (already running, no memory). Reconnects with back-off.
 * user / password may be NULL; db < 0 skips SELECT. */
int sy_keys_invalidate_start(const char *host, int port, const char *user, const char *password, int db);
/* Stop the thread and wait for it (at most ~0.2 s while subscribed, up to
 * the 2 s connect timeout while connecting). */
void sy_keys_invalidate_stop(void);
/* 1 while subscribed (for tests and /health). */
int sy_keys_invalidate_subscribed(void);

#endif
