/* admin.c - the management API on the loop: who may call what, and handing the
 * call to a DB thread (admin/admin.h has the handlers' contract).
 *
 *   auth stage (master key / virtual key) ─▶ sy_stage_admin
 *      route's flags vs the caller: admin ─ any; proxy_admin_viewer ─ READONLY;
 *      other keys ─ SELF routes (the handler restricts them to the caller's own)
 *      ─▶ sy_call_db(handler) ─▶ reply; publish the handler's invalidations
 *
 * Without a master key auth is off and every caller is an admin, as LiteLLM.
 */
#include "gateway/gateway.h"

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
    else
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

int sy_stage_admin(struct sy_call *c)
{
    struct sy_req *r = c->req;
    int known = 0;
    const struct sy_admin_route *rt = sy_admin_match(r->method, r->path.p, r->path.n, &known);
    if (!rt) { /* pipeline.c matched it: cannot happen */
        sy_call_error(c, 404, "invalid_request_error", "None", "Route not found", NULL, 0);
        return SY_DONE;
    }
    int admin = !c->g->master_key || c->is_admin;
    int viewer = c->key && c->key->role == SY_ROLE_PROXY_ADMIN_VIEWER;
    if (!admin && !(viewer && (rt->flags & SY_ADMIN_READONLY)) && !(rt->flags & SY_ADMIN_SELF)) {
        char msg[512];
        snprintf(msg, sizeof msg,
                 "Authentication Error, Only proxy admin can be used to generate, delete, update info for new "
                 "keys/users/teams. Route=%.*s. Your role=%s. Your user_id=%s",
                 (int)(r->path.n > 200 ? 200 : r->path.n), r->path.p,
                 c->key ? sy_role_name(c->key->role) : "None",
                 c->key && c->key->user_id ? c->key->user_id : "None");
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
    a->is_admin_viewer = viewer;
    a->caller_token = c->key ? c->key->token : NULL;
    a->caller_user_id = c->key ? c->key->user_id : NULL;
    a->caller_team_id = c->key ? c->key->team_id : NULL;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    a->now = (double)ts.tv_sec + ts.tv_nsec / 1e9;
    a->g = c->g;
    a->status = 200;
    a->priv = (void *)rt;
    sy_buf_init(&a->out, 256u << 20);
    sy_arena_defer(&r->arena, free_out, a);
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
