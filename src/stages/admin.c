/* admin.c - the management API on the loop: who may call what, and handing the
 * call to a DB thread (admin/admin.h has the handlers' contract).
 *
 *   auth stage (master key / virtual key) ─▶ sy_stage_admin
 *      route's flags vs the caller's role (admin/admin.h, LiteLLM's route_checks.py):
 *        master key ─ every route; proxy_admin ─ all but MASTER;
 *        proxy_admin_viewer ─ READONLY; internal_user (also a user without a
 *        role) ─ USER and TEAM; internal_user_viewer ─ USER_VIEW and TEAM;
 *        any key ─ SELF. The handler narrows the non-admin roles to their
 *        own keys, user, teams and spend (and TEAM routes to team admins).
 *      ─▶ sy_call_db(handler) ─▶ reply; publish the handler's invalidations
 *
 * Without a master key auth is off and every caller is an admin, as LiteLLM.
 */
#include "gateway/gateway.h"
#include "gateway/stage.h"

#include <http_parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admin/admin.h"
#include "admin/validate.h"
#include "core/errors.h"
#include "core/log.h"
#include "gateway/offload.h"
#include "http/server.h"
#include "keys/keys.h"
#include "redis/redis.h"
#include "spend/spend.h"

void sy_gateway_invalidate(struct sy_worker *w, const char *msg)
{
    const char *colon = strchr(msg, ':');
    char kind[32];
    size_t kl = colon ? (size_t)(colon - msg) : strlen(msg);
    if (kl >= sizeof kind)
        kl = sizeof kind - 1;
    memcpy(kind, msg, kl);
    kind[kl] = 0;
    sy_keys_invalidate(kind, colon ? colon + 1 : "");
    if (!strcmp(kind, "token") && colon) /* in-memory reservations (SQLite) re-read what changed */
        sy_ledger_forget(SY_ENT_KEY, colon + 1);
    else if (strcmp(kind, "mcp") != 0 && strcmp(kind, "models") != 0) /* MCP servers, DB models: no spend */
        sy_ledger_forget(-1, NULL);
    if (w && w->redis && sy_redis_up(w->redis)) {
        const char *argv[3] = {"PUBLISH", "switchyard:keys", msg};
        sy_redis_cmd(w->redis, NULL, NULL, 3, argv, NULL);
    }
}

static void reply(struct sy_call *c, struct sy_admin_ctx *a)
{
    for (int i = 0; i < a->ninval; i++) {
        sy_gateway_invalidate(c->w, a->inval[i]);
        free(a->inval[i]);
    }
    a->ninval = 0;
    if (sy_buf_failed(&a->out)) /* over its cap: an error answer, never a truncated document */
        sy_admin_error(a, 500, "internal_server_error", NULL, "response too large");
    if (!a->out.len)
        SY_BUF_LIT(&a->out, "{}");
    struct sy_buf out = a->out; /* a lives in the request's arena, gone once the reply is sent */
    sy_buf_init(&a->out, 0);
    sy_resp_simple(c->req, a->status ? a->status : 200, NULL, 0, "application/json", out.p, out.len);
    sy_buf_free(&out);
}

static void admin_run(struct sy_store *st, struct sy_call *c, void *arg)
{
    struct sy_admin_ctx *a = arg;
    const struct sy_admin_route *rt = a->priv;
    if (sy_admin_validate(a) == 0) /* admin/validate.h: bad input refused before any handler */
        rt->fn(st, a);
}

static void admin_done(struct sy_call *c, void *arg)
{
    reply(c, arg);
}

static void free_out(void *p)
{
    struct sy_admin_ctx *a = p;
    sy_buf_free(&a->out);
    for (int i = 0; i < a->ninval; i++)
        free(a->inval[i]);
    a->ninval = 0;
}

/* The caller key may use model (its models, all-team-models, its team's,
 * access groups: keys/keys.h), as GET /v1/models narrows its list. */
static int key_allows(void *ud, const char *model)
{
    struct sy_call *c = ud;
    struct sy_check_err e;
    return sy_keys_check_model(c->auth.key, model, sy_group_access_groups, c->g, &e) == 0;
}

/* An id that names somebody: "" is nobody (it must never match another "" key). */
static const char *id_or_null(const char *id)
{
    return id && *id ? id : NULL;
}

/* The caller's role as LiteLLM's route checks see it: proxy_admin for the
 * master key and admins; the user's role; a user without one is an
 * internal_user (LiteLLM's default user_role); a key without a user has none. */
static enum sy_role caller_role(const struct sy_call *c, int admin)
{
    if (admin)
        return SY_ROLE_PROXY_ADMIN;
    if (!c->auth.key)
        return SY_ROLE_NONE;
    if (c->auth.key->role == SY_ROLE_NONE && id_or_null(c->auth.key->user_id))
        return SY_ROLE_INTERNAL_USER;
    return c->auth.key->role;
}

/* The route's flags against the caller (admin/admin.h): admins call every
 * route but the master key's own; the other roles their flag's routes. */
static int may_call(const struct sy_call *c, const struct sy_admin_route *rt, int admin, enum sy_role role)
{
    unsigned f = rt->flags;
    if (f & SY_ADMIN_MASTER)
        return admin && (!c->g->master_key || !c->auth.key);
    if (admin || (f & SY_ADMIN_SELF))
        return 1;
    switch (role) {
    case SY_ROLE_PROXY_ADMIN_VIEWER: return (f & SY_ADMIN_READONLY) != 0;
    case SY_ROLE_INTERNAL_USER: return (f & (SY_ADMIN_USER | SY_ADMIN_TEAM)) != 0;
    case SY_ROLE_INTERNAL_USER_VIEWER: return (f & (SY_ADMIN_USER_VIEW | SY_ADMIN_TEAM)) != 0;
    default: /* no user, or the team / customer roles: team routes only as a team admin */
        return (f & SY_ADMIN_TEAM) && id_or_null(c->auth.key ? c->auth.key->user_id : NULL);
    }
}

static int admin_stage(struct sy_call *c)
{
    struct sy_req *r = c->req;
    int known = 0;
    const struct sy_admin_route *rt = sy_admin_match(r->method, r->path.p, r->path.n, &known);
    if (!rt) { /* pipeline.c matched it: cannot happen */
        sy_call_error(c, 404, "invalid_request_error", "None", "Route not found", NULL, 0);
        return SY_DONE;
    }
    int admin = !c->g->master_key || c->auth.is_admin;
    enum sy_role role = caller_role(c, admin);
    if (!may_call(c, rt, admin, role)) {
        char msg[512];
        if (rt->flags & SY_ADMIN_MASTER)
            snprintf(msg, sizeof msg, "Authentication Error, Tried to access route=%.*s, which is only for MASTER KEY",
                     (int)(r->path.n > 200 ? 200 : r->path.n), r->path.p);
        else
            snprintf(msg, sizeof msg,
                     "Authentication Error, Only proxy admin can be used to generate, delete, update info for new "
                     "keys/users/teams. Route=%.*s. Your role=%s. Your user_id=%s",
                     (int)(r->path.n > 200 ? 200 : r->path.n), r->path.p,
                     role != SY_ROLE_NONE ? sy_role_name(role) : "None",
                     id_or_null(c->auth.key ? c->auth.key->user_id : NULL) ? c->auth.key->user_id : "None");
        sy_call_error(c, 401, "auth_error", "None", msg, NULL, 0);
        return SY_DONE;
    }
    if (!(rt->flags & SY_ADMIN_NODB) && !c->g->db) {
        sy_call_error(c, 500, "internal_server_error", "None",
                      "DB not connected. See https://docs.litellm.ai/docs/proxy/virtual_keys", NULL, 0);
        return SY_DONE;
    }
    struct sy_admin_ctx *a = sy_arena_alloc(&r->arena, sizeof *a);
    memset(a, 0, sizeof *a);
    a->method = r->method;
    a->path = sy_arena_strndup(&r->arena, r->path.p, r->path.n);
    a->query = sy_arena_strndup(&r->arena, r->query.p ? r->query.p : "", r->query.p ? r->query.n : 0);
    a->body = r->body.len ? sy_arena_strndup(&r->arena, r->body.p, r->body.len) : "";
    a->body_len = r->body.len;
    a->is_admin = admin;
    a->is_admin_viewer = role == SY_ROLE_PROXY_ADMIN_VIEWER;
    a->is_master = admin && !c->auth.key;
    a->caller_role = role;
    a->caller_token = c->auth.key ? c->auth.key->token : NULL;
    a->caller_key = c->auth.key;
    a->caller_user_id = c->auth.key ? id_or_null(c->auth.key->user_id) : NULL;
    a->caller_team_id = c->auth.key ? id_or_null(c->auth.key->team_id) : NULL;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    a->now = (double)ts.tv_sec + ts.tv_nsec / 1e9;
    a->table = &c->g->table;
    a->master_key = c->g->master_key;
    a->master_key_len = c->g->master_key_len;
    a->status = 200;
    a->priv = (void *)rt;
    sy_buf_init(&a->out, 256u << 20);
    sy_arena_defer(&r->arena, free_out, a);
    if (!admin && !a->is_admin_viewer && c->auth.key &&
        (c->auth.key->nmodels || (c->auth.key->team && c->auth.key->team->nmodels))) {
        a->model_allowed = key_allows; /* read-only on either thread: the key and config are immutable */
        a->model_ud = c;
    }
    if (rt->flags & SY_ADMIN_NODB) {
        rt->fn(NULL, a);
        reply(c, a);
        return SY_DONE;
    }
    if (sy_call_db(c, admin_run, admin_done, a) != 0) {
        sy_call_error(c, 500, "internal_server_error", "None", "DB not connected.", NULL, 0);
        return SY_DONE;
    }
    return SY_AGAIN;
}

const struct sy_stage sy_stage_admin = {
    .name = "admin",
    .routes = SY_RKB(SY_RK_ADMIN),
    .run = admin_stage,
};
