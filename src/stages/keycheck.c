/* keycheck.c - the key checks that need the parsed body: model access, the end
 * user, budgets already spent (LiteLLM's common_checks, auth/auth_checks.py).
 *
 * In a pipeline only when the database is on (keys and end users live there),
 * after parse and before route. The end user is the body's `user`, else the
 * x-litellm-end-user-id / x-litellm-customer-id header; when present it is
 * looked up in the end-user cache, a miss loading it on a DB thread.
 * Budget checks here compare what is already spent with each budget (the
 * cached figures); the exact check with the request's own worst case is the
 * reservation (budget.c), taken after routing.
 *
 * Model access is one function, sy_call_model_denied, for every model a
 * request can reach: the requested model (here), the body's `fallbacks`
 * (route.c, refused up front), config fallbacks (proxy.c, skipped when
 * denied), the pass-through and Anthropic routes, /utils/token_counter,
 * /v1/messages/count_tokens and GET /v1/models/{id}. As LiteLLM's
 * _can_object_call_model, a name passes a list when it or what it is an alias
 * of does: the key's `aliases` / the team's model_aliases ({**key, **team}),
 * else the router's model_group_alias.
 */
#include "gateway/gateway.h"
#include "gateway/stage.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/errors.h"
#include "gateway/offload.h"
#include "http/server.h"
#include "keys/keys.h"
#include "logging/logging.h"
#include "store/store.h"

static void release_eu(void *p)
{
    struct sy_call *c = p;
    if (c->auth.eu) {
        sy_enduser_unref(c->auth.eu);
        c->auth.eu = NULL;
    }
}

/* LiteLLM's budget_alerts for a refusal here (logging/sinks/slack.c): the
 * refusal's text names the entity; a key or team over its max_budget shares
 * its de-duplication key with budget.c's alert for the same crossing. */
static void budget_refused_alert(const struct sy_call *c, const struct sy_check_err *e)
{
    const struct sy_keyinfo *k = c->auth.key;
    const char *kind = "Entity";
    char dk[700], who[512] = "";
    if (k && k->key.max_budget >= 0 && atomic_load(&k->key.spend) >= k->key.max_budget) {
        kind = "Key";
        snprintf(dk, sizeof dk, "budget_crossed:Key:%s", k->token);
    } else if (k && k->team && k->team->max_budget >= 0 && k->team_id &&
               atomic_load(&k->team->spend) > k->team->max_budget) {
        kind = "Team";
        snprintf(dk, sizeof dk, "budget_crossed:Team:%.500s", k->team_id);
    } else {
        snprintf(dk, sizeof dk, "budget_crossed:check:%s:%.60s", k ? k->token : "", e->message);
    }
    if (k && k->key_alias)
        snprintf(who, sizeof who, "\nKey Alias: `%.200s`", k->key_alias);
    if (k && (k->team_alias || k->team_id))
        snprintf(who + strlen(who), sizeof who - strlen(who), "\nTeam: `%.200s`",
                 k->team_alias ? k->team_alias : k->team_id);
    sy_alert(SY_ALERT_BUDGET_ALERTS, dk, "%s Budget: Budget Crossed\n%s%s", kind, e->message, who);
}

static int checks(struct sy_call *c)
{
    struct sy_check_err e;
    memset(&e, 0, sizeof e);
    if (c->auth.key && c->in.model && sy_call_model_denied(c, c->in.model, &e) != 0)
        return sy_call_refuse(c, &e);
    if ((c->auth.key || c->auth.eu) && sy_keys_check_budgets(c->auth.key, c->auth.eu, c->in.model, &e) != 0) {
        budget_refused_alert(c, &e);
        return sy_call_refuse(c, &e);
    }
    return SY_OK;
}

static void eu_run(struct sy_store *st, struct sy_call *c, void *arg)
{
    struct sy_enduser *eu = NULL;
    c->auth.db_rc = sy_endusers_load(st, arg, &eu);
    c->auth.db_obj = eu;
}

static void eu_done(struct sy_call *c, void *arg)
{
    struct sy_enduser *eu = c->auth.db_obj;
    c->auth.db_obj = NULL;
    if (eu) {
        atomic_fetch_add(&eu->refs, 1);
        sy_endusers_put(eu);
        if (eu->found) {
            c->auth.eu = eu;
            sy_arena_defer(&c->req->arena, release_eu, c);
        } else {
            sy_enduser_unref(eu);
        }
    } else if (!c->g->cfg->allow_requests_on_db_unavailable && c->auth.key) {
        c->out.exception_class = "ServiceUnavailableError";
        sy_call_error(c, 503, "auth_error", "None",
                      "the database is unreachable: the end user's budget cannot be checked "
                      "(general_settings.allow_requests_on_db_unavailable lets requests through)",
                      NULL, 0);
        return;
    }
    if (checks(c) == SY_OK)
        sy_call_resume(c);
}

static int key_checks_run(struct sy_call *c)
{
    char id[256];
    id[0] = 0;
    if (c->in.scan.user.type == 's' && c->in.scan.user.len < sizeof id)
        sy_jstr_decode(c->req->body.p + c->in.scan.user.off, c->in.scan.user.len, id, sizeof id);
    if (!id[0]) {
        struct sy_str h = sy_req_header(c->req, "x-litellm-end-user-id");
        if (!h.p)
            h = sy_req_header(c->req, "x-litellm-customer-id");
        if (h.p && h.n && h.n < sizeof id) {
            memcpy(id, h.p, h.n);
            id[h.n] = 0;
        }
    }
    if (!id[0] || c->auth.no_db)
        return checks(c);
    struct sy_enduser *eu = sy_endusers_get(id);
    if (eu) {
        if (eu->found) {
            c->auth.eu = eu;
            sy_arena_defer(&c->req->arena, release_eu, c);
        } else {
            sy_enduser_unref(eu);
        }
        return checks(c);
    }
    char *idc = sy_arena_strndup(&c->req->arena, id, strlen(id));
    if (sy_call_db(c, eu_run, eu_done, idc) != 0)
        return checks(c);
    return SY_AGAIN;
}

static int key_checks_on(const struct sy_gwconf *g, enum sy_route_kind k)
{
    (void)k;
    return g->db; /* a database */
}

const struct sy_stage sy_stage_key_checks = {
    .name = "key_checks",
    .routes = SY_RKB_LLM | SY_RKB(SY_RK_FILES),
    .enabled = key_checks_on,
    .run = key_checks_run,
};
