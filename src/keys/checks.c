/* checks.c - the checks before a call, in LiteLLM's order and words.
 *
 * Sources: litellm/proxy/auth/user_api_key_auth.py (blocked, expired, key
 * budget, key model budget), auth/auth_checks.py (common_checks: team
 * blocked, model access of key / team / member / user, team, org, user,
 * member and end-user budgets), auth/route_checks.py (a key's
 * allowed_routes), hooks/model_max_budget_limiter.py (model_max_budget),
 * enterprise blocked-user hook (blocked end users). The texts below are
 * LiteLLM's, with Python's renderings of the values in them: floats as
 * repr() ("10.0", "0.30000000000000004", "1e-05"), lists as
 * ['a', 'b'], datetimes as str() ("2026-10-04 03:47:58.123000+00:00").
 *
 *   | check                               | status | type                      | message (abridged) |
 *   |-------------------------------------|--------|---------------------------|------------------------------------------------------------|
 *   | key blocked                         | 401    | auth_error                | Authentication Error, Key is blocked.
 * Update via ...        | | key expired (expires < now)         | 400    | expired_key (param key_name)| Authentication
 * Error - Expired Key. Key Expiry time ...   | | team blocked                        | 401    | auth_error |
 * Authentication Error, Team=<id> is blocked. ...             | | route not in allowed_routes         | 401    |
 * auth_error                | Authentication Error, Virtual key is not allowed to call ...| | key may not use model |
 * 401    | key_model_access_denied   | key not allowed to access model. This key can only ...      | | team may not use
 * model              | 401    | team_model_access_denied  | team not allowed to access model. This team can only ... |
 *   | member's allowed_models exclude it  | 401    | team_model_access_denied  | Team member not allowed to access
 * model. User=..            | | user (personal key) may not use it  | 401    | user_model_access_denied  | user not
 * allowed to access model. ...                       | | key spend >= max_budget             | 400    | budget_exceeded
 * | Budget has been exceeded! Current cost: X, Max budget: Y    | | key model spend >= model budget     | 400    |
 * budget_exceeded           | LiteLLM Virtual Key: <token>, key_alias: A, exceeded ...    | | team spend > max_budget
 * | 400    | budget_exceeded           | Budget has been exceeded! Team=<id> Current cost: ...       | | org spend >=
 * budget (> 0)           | 400    | budget_exceeded           | Budget has been exceeded! Organization=<id> Current ...
 * | | user spend >= max_budget (no team)  | 400    | budget_exceeded           | ExceededBudget: User=<id> over budget.
 * Spend=X, Budget=Y    | | member spend >= member budget       | 400    | budget_exceeded           | Budget has been
 * exceeded! User=<u> in Team=<t> Current ...  | | end-user spend > budget             | 400    | budget_exceeded |
 * ExceededBudget: End User=<id> over budget. Spend=X, ...     | | end user blocked                    | 400    |
 * invalid_request_error     | User blocked from making LLM API Calls. User=<id>           |
 *
 * An empty `param` means JSON null (budget errors); auth errors carry the
 * literal "None" as LiteLLM's do.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "core/pyrepr.h"
#include "keys/keys.h"
#include "keys/keys_impl.h"

/* A bounded message under construction. */
struct msg {
    char *p;
    size_t cap, len;
};

static void m_puts(struct msg *m, const char *s)
{
    for (; s && *s && m->len + 1 < m->cap; s++)
        m->p[m->len++] = *s;
    m->p[m->len] = 0;
}

static void m_printf(struct msg *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void m_printf(struct msg *m, const char *fmt, ...)
{
    if (m->len + 1 >= m->cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(m->p + m->len, m->cap - m->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        m->len = m->len + (size_t)n < m->cap ? m->len + (size_t)n : m->cap - 1;
}

/* Append what a core/pyrepr writer renders. */
static void m_sybuf(struct msg *m, struct sy_buf *t, int rc)
{
    if (rc == 0 && t->p)
        m_puts(m, t->p);
    sy_buf_free(t);
}

/* repr(float) */
static void m_float(struct msg *m, double d)
{
    struct sy_buf t;
    sy_buf_init(&t, 64);
    m_sybuf(m, &t, sy_py_float_repr(&t, d));
}

/* repr(str) */
static void m_pystr(struct msg *m, const char *s)
{
    struct sy_buf t;
    sy_buf_init(&t, 16 + 10 * strlen(s));
    m_sybuf(m, &t, sy_py_str_repr(&t, s, strlen(s)));
}

/* repr(list of str) */
static void m_pylist(struct msg *m, char *const *v, size_t n)
{
    m_puts(m, "[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            m_puts(m, ", ");
        m_pystr(m, v[i]);
    }
    m_puts(m, "]");
}

/* str(datetime) of an aware UTC datetime: "2026-10-04 03:47:58[.ffffff]+00:00" */
static void m_pydatetime(struct msg *m, double t)
{
    double fl = floor(t);
    long us = lround((t - fl) * 1e6);
    time_t secs = (time_t)fl;
    if (us >= 1000000) {
        us -= 1000000;
        secs++;
    }
    struct tm tm;
    gmtime_r(&secs, &tm);
    m_printf(m, "%04d-%02d-%02d %02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
             tm.tm_sec);
    if (us)
        m_printf(m, ".%06ld", us);
    m_puts(m, "+00:00");
}

static struct msg err_begin(struct sy_check_err *e, int status, const char *type, const char *param)
{
    e->status = status;
    snprintf(e->type, sizeof e->type, "%s", type);
    snprintf(e->param, sizeof e->param, "%s", param ? param : "");
    e->message[0] = 0;
    struct msg m = {e->message, sizeof e->message, 0};
    return m;
}

/* ---- the key's own checks ------------------------------------------------- */

/* LiteLLMRoutes.openai_routes (+ anthropic /v1/messages), as exact paths or
 * prefixes (ending in '/'). */
static const char *const llm_routes[] = {"/chat/completions",
                                         "/v1/chat/completions",
                                         "/completions",
                                         "/v1/completions",
                                         "/embeddings",
                                         "/v1/embeddings",
                                         "/models",
                                         "/v1/models",
                                         "/moderations",
                                         "/v1/moderations",
                                         "/audio/transcriptions",
                                         "/v1/audio/transcriptions",
                                         "/audio/speech",
                                         "/v1/audio/speech",
                                         "/audio/translations",
                                         "/v1/audio/translations",
                                         "/images/generations",
                                         "/v1/images/generations",
                                         "/images/edits",
                                         "/v1/images/edits",
                                         "/images/variations",
                                         "/v1/images/variations",
                                         "/rerank",
                                         "/v1/rerank",
                                         "/v2/rerank",
                                         "/responses",
                                         "/v1/responses",
                                         "/v1/messages",
                                         "/v1/messages/count_tokens",
                                         "/batches",
                                         "/v1/batches",
                                         "/files",
                                         "/v1/files",
                                         "/threads",
                                         "/v1/threads",
                                         "/assistants",
                                         "/v1/assistants",
                                         "/fine_tuning/",
                                         "/v1/fine_tuning/",
                                         "/openai/deployments/",
                                         "/engines/",
                                         "/responses/",
                                         "/v1/responses/",
                                         "/batches/",
                                         "/v1/batches/",
                                         "/files/",
                                         "/v1/files/",
                                         "/threads/",
                                         "/v1/threads/",
                                         "/assistants/",
                                         "/v1/assistants/",
                                         "/models/",
                                         "/v1/models/",
                                         "/realtime",
                                         "/v1/realtime",
                                         "/vector_stores",
                                         "/v1/vector_stores",
                                         "/vector_stores/",
                                         "/v1/vector_stores/",
                                         NULL};

/* LiteLLMRoutes.info_routes */
static const char *const info_routes[] = {"/key/info",
                                          "/key/health",
                                          "/team/info",
                                          "/team/list",
                                          "/organization/list",
                                          "/team/available",
                                          "/user/info",
                                          "/model/info",
                                          "/v1/model/info",
                                          "/v2/model/info",
                                          "/v2/key/info",
                                          "/model_group/info",
                                          "/health",
                                          "/key/list",
                                          "/user/filter/ui",
                                          "/spend/logs",
                                          NULL};

/* LiteLLMRoutes.management_routes (as prefixes) */
static const char *const mgmt_routes[] = {"/key/",          "/user/",        "/team/",     "/model/",
                                          "/organization/", "/customer/",    "/end_user/", "/budget/",
                                          "/spend/",        "/global/spend", "/config/",   NULL};

static int in_routes(const char *const *list, const char *route)
{
    for (int i = 0; list[i]; i++) {
        size_t n = strlen(list[i]);
        if (list[i][n - 1] == '/' ? strncmp(route, list[i], n) == 0 : strcmp(route, list[i]) == 0)
            return 1;
    }
    return 0;
}

static int route_allowed(const struct sy_keyinfo *ki, const char *route)
{
    for (size_t i = 0; i < ki->nallowed_routes; i++) {
        const char *a = ki->allowed_routes[i];
        size_t n = strlen(a);
        /* exact, or a path prefix ("/x" allows "/x/y", not "/xy") */
        if (strcmp(route, a) == 0 || (strncmp(route, a, n) == 0 && route[n] == '/'))
            return 1;
        /* a LiteLLMRoutes member name */
        if ((strcmp(a, "openai_routes") == 0 || strcmp(a, "llm_api_routes") == 0) && in_routes(llm_routes, route))
            return 1;
        if (strcmp(a, "info_routes") == 0 && in_routes(info_routes, route))
            return 1;
        if (strcmp(a, "management_routes") == 0 && in_routes(mgmt_routes, route))
            return 1;
        /* a wildcard: "/scim/v2/" and a trailing star */
        if (n && a[n - 1] == '*' && strncmp(route, a, n - 1) == 0)
            return 1;
    }
    return 0;
}

int sy_keys_check_key(const struct sy_keyinfo *ki, const char *route, double now_unix, struct sy_check_err *e)
{
    if (!ki || !ki->found)
        return 0;
    if (ki->blocked) {
        struct msg m = err_begin(e, 401, "auth_error", "None");
        m_puts(&m, "Authentication Error, Key is blocked. Update via `/key/unblock` if you're an admin.");
        return e->status;
    }
    if (ki->expires > 0 && ki->expires < now_unix) {
        struct msg m = err_begin(e, 400, "expired_key", ki->key_name ? ki->key_name : "None");
        m_puts(&m, "Authentication Error - Expired Key. Key Expiry time ");
        m_pydatetime(&m, ki->expires);
        m_puts(&m, " and current time ");
        m_pydatetime(&m, now_unix);
        return e->status;
    }
    if (ki->team && ki->team->blocked) {
        struct msg m = err_begin(e, 401, "auth_error", "None");
        m_printf(&m, "Authentication Error, Team=%s is blocked. Update via `/team/unblock` if you're an admin.",
                 ki->team->id ? ki->team->id : "None");
        return e->status;
    }
    if (ki->nallowed_routes && route && !route_allowed(ki, route)) {
        struct msg m = err_begin(e, 401, "auth_error", "None");
        m_puts(&m, "Authentication Error, Virtual key is not allowed to call this route. Only allowed to call "
                   "routes: ");
        m_pylist(&m, ki->allowed_routes, ki->nallowed_routes);
        m_puts(&m, ". Tried to call route: ");
        m_puts(&m, route);
        return e->status;
    }
    return 0;
}

/* ---- model access ----------------------------------------------------------- */

int sy__wild_match(const char *pat, const char *s)
{
    const char *star = NULL, *resume = NULL;
    while (*s) {
        if (*pat == '*') {
            star = pat++;
            resume = s;
        } else if (*pat && (*pat == '.' || *pat == *s)) {
            pat++;
            s++;
        } else if (star) {
            pat = star + 1;
            s = ++resume;
        } else {
            return 0;
        }
    }
    while (*pat == '*')
        pat++;
    return *pat == 0;
}

/* The provider litellm.get_llm_provider names for a bare OpenAI / Anthropic
 * model name (the cases the patterns "openai/" or "anthropic/" + star are meant for);
 * NULL when unknown. */
static const char *bare_provider(const char *model)
{
    static const char *const openai[] = {"gpt-",
                                         "o1",
                                         "o3",
                                         "o4",
                                         "chatgpt-",
                                         "text-embedding-",
                                         "dall-e",
                                         "whisper",
                                         "tts-",
                                         "omni-moderation",
                                         "text-moderation",
                                         "davinci",
                                         "babbage",
                                         "computer-use-",
                                         NULL};
    if (strchr(model, '/'))
        return NULL;
    for (int i = 0; openai[i]; i++)
        if (strncmp(model, openai[i], strlen(openai[i])) == 0)
            return "openai";
    if (strncmp(model, "claude", 6) == 0)
        return "anthropic";
    return NULL;
}

static int provider_match(const char *pat, const char *model)
{
    const char *prov = bare_provider(model);
    if (!prov)
        return 0;
    char full[512];
    int n = snprintf(full, sizeof full, "%s/%s", prov, model);
    return n > 0 && (size_t)n < sizeof full && sy__wild_match(pat, full);
}

static int in_groups(const char *name, const char *groups)
{
    for (const char *p = groups; p && *p; p += strlen(p) + 1)
        if (strcmp(p, name) == 0)
            return 1;
    return 0;
}

int sy__models_allow(char *const *models, size_t n, const char *model, sy_access_groups_fn ag, void *ud)
{
    if (n == 0)
        return 1;
    const char *groups = ag ? ag(ud, model) : NULL;
    if (groups && *groups)
        for (size_t i = 0; i < n; i++)
            if (in_groups(models[i], groups))
                return 1;
    /* the list without the access groups model belongs to */
    for (size_t i = 0; i < n; i++) {
        const char *m = models[i];
        if (groups && in_groups(m, groups))
            continue;
        if (strchr(m, '*') && (sy__wild_match(m, model) || provider_match(m, model)))
            return 1;
        if (strcmp(m, "*") == 0 || strcmp(m, "all-proxy-models") == 0 || strcmp(m, model) == 0)
            return 1;
    }
    return 0;
}

static int has(char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], s) == 0)
            return 1;
    return 0;
}

/* _can_object_call_model's refusal */
static int deny(struct sy_check_err *e, const char *object, const char *type, char *const *models, size_t n,
                const char *model)
{
    struct msg m = err_begin(e, 401, type, "model");
    m_printf(&m, "%s not allowed to access model. This %s can only access models=", object, object);
    m_pylist(&m, models, n);
    m_puts(&m, ". Tried to access ");
    m_puts(&m, model);
    return e->status;
}

const char *sy_keys_alias_of(char *const *pairs, size_t n, const char *model)
{
    for (size_t i = 0; model && i + 1 < n; i += 2)
        if (strcmp(pairs[i], model) == 0)
            return pairs[i + 1];
    return NULL;
}

const char *sy_keys_alias_target(const struct sy_keyinfo *ki, const char *model)
{
    if (!ki || !ki->found)
        return NULL;
    const char *t = sy_keys_alias_of(ki->team_aliases, ki->nteam_aliases, model);
    return t ? t : sy_keys_alias_of(ki->aliases, ki->naliases, model);
}

/* _can_object_call_model: the name asked for, or what it is an alias of */
static int allow2(char *const *models, size_t n, const char *model, const char *also, sy_access_groups_fn ag, void *ud)
{
    return sy__models_allow(models, n, model, ag, ud) || (also && sy__models_allow(models, n, also, ag, ud));
}

int sy_keys_check_model(const struct sy_keyinfo *ki, const char *model, sy_access_groups_fn ag, void *ud,
                        struct sy_check_err *e)
{
    return sy_keys_check_model_as(ki, model, NULL, ag, ud, e);
}

int sy_keys_check_model_as(const struct sy_keyinfo *ki, const char *model, const char *also, sy_access_groups_fn ag,
                           void *ud, struct sy_check_err *e)
{
    if (!ki || !ki->found || !model)
        return 0;
    /* the key (user_api_key_auth): "all-team-models" defers to the team check */
    if (!has(ki->models, ki->nmodels, "all-team-models") && !allow2(ki->models, ki->nmodels, model, also, ag, ud))
        return deny(e, "key", "key_model_access_denied", ki->models, ki->nmodels, model);
    /* The team's, member's and user's lists are not the key holder's to widen:
     * when the key's own aliases route the name elsewhere (after the team's
     * model_aliases), that target is what these lists must allow. */
    const char *ta = sy_keys_alias_of(ki->team_aliases, ki->nteam_aliases, model);
    const char *ka = sy_keys_alias_of(ki->aliases, ki->naliases, ta ? ta : model);
    if (ka) {
        model = ka;
        also = NULL;
    }
    if (ki->team) {
        if (!allow2(ki->team->models, ki->team->nmodels, model, also, ag, ud))
            return deny(e, "team", "team_model_access_denied", ki->team->models, ki->team->nmodels, model);
        /* the member's own scope (its budget row's allowed_models) */
        if (ki->user_id && ki->member && ki->member->nmodels &&
            !allow2(ki->member->models, ki->member->nmodels, model, also, ag, ud)) {
            struct msg m = err_begin(e, 401, "team_model_access_denied", "model");
            m_printf(&m,
                     "Team member not allowed to access model. User=%s, Team=%s, Model=%s. Allowed member models = ",
                     ki->user_id, ki->team->id ? ki->team->id : "None", model);
            m_pylist(&m, ki->member->models, ki->member->nmodels);
            return e->status;
        }
    } else if (ki->user) { /* a personal key: the user's models */
        if (has(ki->user->models, ki->user->nmodels, "no-default-models")) {
            struct msg m = err_begin(e, 401, "key_model_access_denied", "model");
            m_printf(&m,
                     "User not allowed to access model. No default model access, only team models allowed. Tried to "
                     "access %s",
                     model);
            return e->status;
        }
        if (!allow2(ki->user->models, ki->user->nmodels, model, also, ag, ud))
            return deny(e, "user", "user_model_access_denied", ki->user->models, ki->user->nmodels, model);
    }
    return 0;
}

/* ---- budgets -------------------------------------------------------------- */

static double spend_of(const struct sy_budget *b)
{
    return atomic_load_explicit(&((struct sy_budget *)b)->spend, memory_order_relaxed);
}

/* LiteLLM's refusal for one entity's budget: kind is "key", "team",
 * "organization", "user", "team_member" or "end_user" (spend/spend.h's
 * sy_ent_name). Fills e; returns its status (400). */
int sy_keys_budget_error(const char *kind, const struct sy_keyinfo *ki, const struct sy_enduser *eu, double spend,
                         double max_budget, struct sy_check_err *e)
{
    struct msg m = err_begin(e, 400, "budget_exceeded", NULL);
    if (!strcmp(kind, "team")) {
        m_printf(&m, "Budget has been exceeded! Team=%s Current cost: ",
                 ki && ki->team && ki->team->id ? ki->team->id
                 : ki && ki->team_id            ? ki->team_id
                                                : "None");
    } else if (!strcmp(kind, "organization")) {
        m_printf(&m, "Budget has been exceeded! Organization=%s Current cost: ",
                 ki && ki->org_id ? ki->org_id : (ki && ki->org && ki->org->id ? ki->org->id : "None"));
    } else if (!strcmp(kind, "team_member")) {
        m_printf(
            &m, "Budget has been exceeded! User=%s in Team=%s Current cost: ", ki && ki->user_id ? ki->user_id : "None",
            ki && ki->team && ki->team->id ? ki->team->id
            : ki && ki->team_id            ? ki->team_id
                                           : "None");
    } else if (!strcmp(kind, "user") || !strcmp(kind, "end_user")) {
        int is_user = kind[0] == 'u';
        const char *id = is_user ? (ki && ki->user && ki->user->id ? ki->user->id
                                    : ki && ki->user_id            ? ki->user_id
                                                                   : "None")
                                 : (eu && eu->b.id ? eu->b.id : "None");
        m_printf(&m, "ExceededBudget: %s=%s over budget. Spend=", is_user ? "User" : "End User", id);
        m_float(&m, spend);
        m_puts(&m, ", Budget=");
        m_float(&m, max_budget);
        return e->status;
    } else {
        m_puts(&m, "Budget has been exceeded! Current cost: ");
    }
    m_float(&m, spend);
    m_puts(&m, ", Max budget: ");
    m_float(&m, max_budget);
    return e->status;
}

int sy_keys_check_budgets(const struct sy_keyinfo *ki, const struct sy_enduser *eu, const char *model,
                          struct sy_check_err *e)
{
    if (ki && ki->found) {
        /* the key: spend >= max_budget (_virtual_key_max_budget_check) */
        double s = spend_of(&ki->key);
        if (ki->key.max_budget >= 0 && s >= ki->key.max_budget)
            return sy_keys_budget_error("key", ki, eu, s, ki->key.max_budget, e);
        /* the key's model_max_budget for this model (entries without a period are not enforced) */
        struct sy_model_budget *mb = sy__mmb_find(ki, model);
        if (mb && mb->max_budget >= 0 && mb->budget_duration && sy__load_plain_double(&mb->spend) >= mb->max_budget) {
            struct msg m = err_begin(e, 400, "budget_exceeded", NULL);
            m_printf(&m, "LiteLLM Virtual Key: %s, key_alias: %s, exceeded budget for model=%s", ki->token,
                     ki->key_alias ? ki->key_alias : "None", model);
            return e->status;
        }
        /* the team: spend > max_budget */
        if (ki->team && ki->team->max_budget >= 0 && (s = spend_of(ki->team)) > ki->team->max_budget)
            return sy_keys_budget_error("team", ki, eu, s, ki->team->max_budget, e);
        /* the organization: budget > 0 and spend >= it */
        if (ki->org && ki->org->max_budget > 0 && (s = spend_of(ki->org)) >= ki->org->max_budget)
            return sy_keys_budget_error("organization", ki, eu, s, ki->org->max_budget, e);
        /* the user, for a personal key: spend >= max_budget */
        if (!ki->team && ki->user && ki->user->max_budget >= 0 && (s = spend_of(ki->user)) >= ki->user->max_budget)
            return sy_keys_budget_error("user", ki, eu, s, ki->user->max_budget, e);
        /* the team member: spend >= member budget */
        if (ki->team && ki->user && ki->user_id && ki->member && ki->member->max_budget >= 0 &&
            (s = spend_of(ki->member)) >= ki->member->max_budget)
            return sy_keys_budget_error("team_member", ki, eu, s, ki->member->max_budget, e);
    }
    if (eu && eu->found) {
        double s = spend_of(&eu->b);
        if (eu->b.max_budget >= 0 && s > eu->b.max_budget)
            return sy_keys_budget_error("end_user", ki, eu, s, eu->b.max_budget, e);
        if (eu->b.blocked) {
            struct msg m = err_begin(e, 400, "invalid_request_error", NULL);
            m_printf(&m, "User blocked from making LLM API Calls. User=%s", eu->b.id ? eu->b.id : "None");
            return e->status;
        }
    }
    return 0;
}
