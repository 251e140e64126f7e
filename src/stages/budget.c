/* budget.c - money on the request path: budget reservations before the call,
 * the call's cost after it, and handing the spend to the writer.
 *
 *   route ─▶ sy_stage_reserve ──(entities with a budget?)── no ──▶ upstream
 *                 │ yes: worst case = prompt tokens (exact) × dearest input rate of the group
 *                 │                 + max_tokens (else the model's output limit) × dearest output rate
 *                 ├ SQLite: sy_ledger_reserve (in memory, spend/ledger.c)
 *                 └ PostgreSQL: sy_call_db ─ sy_reserve_take_many (group commit, spend/reserve.c)
 *                        ├ refused ─▶ 400 budget_exceeded, LiteLLM's text for the entity
 *                        └ taken  ─▶ resume; the reservation (the stage's slot) remembers
 *                                   each entity's amount
 *   fallback to another group ─▶ budget_fallback: the worst case re-priced
 *                      at that group; a dearer one tops the reservation up
 *                      under the same rule, or the fallback is refused
 *   sy_call_account ─▶ the stage's finish hook (spend): cost from usage, SpendLogs
 *                      row and entity deltas to the writer (spend - reserved where reserved)
 *
 * The admit rule (spend/reserve.c, sy_reserve_fit): admit while recorded
 * spend + reservations in flight < max_budget, and reserve min(worst case,
 * what is left). A caller on its own sees LiteLLM's contract exactly (a call
 * is admitted while recorded spend is below the budget, even one whose worst
 * case is above what is left; the next is refused); concurrent callers
 * overshoot by at most one call per budget - the one whose reservation was
 * cut short - where LiteLLM, which compares recorded spend only, lets every
 * call in flight through. Which entities are reserved from follows LiteLLM's
 * checks: the user only for a key without a team, an organization only with
 * max_budget > 0. A stage that finds no budgeted entity costs one loop over
 * six pointers. litellm_settings.max_budget (the proxy-wide budget) is
 * checked first, as LiteLLM does, against spent-so-far (below).
 */
#include "gateway/gateway.h"
#include "gateway/slot.h"
#include "gateway/stage.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/errors.h"
#include "core/log.h"
#include "gateway/ustream.h"
#include "gateway/offload.h"
#include "http/server.h"
#include "keys/keys.h"
#include "logging/logging.h"
#include "spend/spend.h"
#include "store/dbpool.h"
#include "store/store.h"
#include "tokenizer/tokenizer.h"

struct resv {
    struct sy_reserve r;
    char member[512];
    double worst;                   /* the worst case reserved so far (at the group priced last) */
    double reserved[SY_ENT__COUNT]; /* each entity's amount taken, summed over top-ups */
    int mem;                        /* held in the ledger (SQLite) */
    int topup;                      /* a fallback's top-up: then() continues, not sy_call_resume */
    void (*then)(struct sy_call *); /* the fallback's attempt */
    /* group commit (below) */
    struct resv *next;
    int state; /* 0 queued, 1 taken by a DB thread, 2 done */
    int rc;
};

/* Group commit of reservations. Every reservation is queued here and also
 * submitted as a DB job; the first job a DB thread runs takes the whole queue
 * and reserves for all of them in one transaction (one commit: on SQLite one
 * WAL write instead of one per request); a job whose reservation another
 * thread already took waits for that transaction (or finds it done). */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct resv *head, *tail;
} rq = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL};
#define RQ_MAX 256 /* reservations per transaction */

static void rq_push(struct resv *rv)
{
    pthread_mutex_lock(&rq.mu);
    rv->next = NULL;
    rv->state = 0;
    if (rq.tail)
        rq.tail->next = rv;
    else
        rq.head = rv;
    rq.tail = rv;
    pthread_mutex_unlock(&rq.mu);
}

/* Take rv out of the queue (rq.mu held). */
static void rq_unlink(struct resv *rv)
{
    struct resv **pp = &rq.head, *prev = NULL;
    while (*pp && *pp != rv) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (*pp) {
        *pp = rv->next;
        if (rq.tail == rv)
            rq.tail = prev;
    }
}

/* Fill the entities with a budget; 0 when none has one. */
static int entities(struct sy_call *c, struct resv *rv)
{
    memset(rv, 0, sizeof *rv);
    int n = 0;
    const struct sy_keyinfo *k = c->auth.key;
    if (k) {
        if (k->key.max_budget >= 0) {
            rv->r.id[SY_ENT_KEY] = k->token;
            rv->r.max_budget[SY_ENT_KEY] = k->key.max_budget;
            n++;
        }
        if (!k->team && k->user && k->user->max_budget >= 0 && k->user_id) { /* a personal key's user */
            rv->r.id[SY_ENT_USER] = k->user_id;
            rv->r.max_budget[SY_ENT_USER] = k->user->max_budget;
            n++;
        }
        if (k->team && k->team->max_budget >= 0 && k->team_id) {
            rv->r.id[SY_ENT_TEAM] = k->team_id;
            rv->r.max_budget[SY_ENT_TEAM] = k->team->max_budget;
            n++;
        }
        if (k->member && k->member->max_budget >= 0 && k->team_id && k->user_id) {
            snprintf(rv->member, sizeof rv->member, "%s\n%s", k->team_id, k->user_id);
            rv->r.id[SY_ENT_MEMBER] = rv->member;
            rv->r.max_budget[SY_ENT_MEMBER] = k->member->max_budget;
            n++;
        }
        if (k->org && k->org->max_budget > 0 && k->org_id) { /* LiteLLM: a budget of 0 is none */
            rv->r.id[SY_ENT_ORG] = k->org_id;
            rv->r.max_budget[SY_ENT_ORG] = k->org->max_budget;
            n++;
        }
    }
    if (c->auth.eu && c->auth.eu->b.max_budget >= 0 && c->auth.eu->b.id) {
        rv->r.id[SY_ENT_END_USER] = c->auth.eu->b.id;
        rv->r.max_budget[SY_ENT_END_USER] = c->auth.eu->b.max_budget;
        n++;
    }
    return n;
}

/* The request's max_tokens (max_completion_tokens, Anthropic's max_tokens); -1 when absent. */
static int64_t req_max_tokens(struct sy_call *c)
{
    struct sy_jspan obj = {0, c->req->body.len, 'o'};
    static const char *const names[] = {"max_completion_tokens", "max_tokens", "max_output_tokens"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        struct sy_jspan v = sy_jscan_member(c->req->body.p, obj, names[i]);
        if (v.type == 'n') {
            char t[32];
            size_t n = v.len < sizeof t - 1 ? v.len : sizeof t - 1;
            memcpy(t, c->req->body.p + v.off, n);
            t[n] = 0;
            double d = strtod(t, NULL);
            if (d > 0)
                return (int64_t)d;
        }
    }
    return -1;
}

static void reserve_run(struct sy_store *st, struct sy_call *c, void *arg)
{
    struct resv *rv = arg;
    struct resv *batch[RQ_MAX];
    struct sy_reserve *rs[RQ_MAX];
    size_t n = 0;
    pthread_mutex_lock(&rq.mu);
    if (rv->state != 0) { /* another DB thread took it: wait for its transaction */
        while (rv->state != 2)
            pthread_cond_wait(&rq.cv, &rq.mu);
        c->auth.db_rc = rv->rc;
        pthread_mutex_unlock(&rq.mu);
        return;
    }
    rq_unlink(rv); /* ours first, then up to RQ_MAX - 1 that wait */
    rv->state = 1;
    batch[n] = rv;
    rs[n++] = &rv->r;
    while (rq.head && n < RQ_MAX) {
        struct resv *q = rq.head;
        rq_unlink(q);
        q->state = 1;
        batch[n] = q;
        rs[n++] = &q->r;
    }
    pthread_mutex_unlock(&rq.mu);
    int rc = sy_reserve_take_many(st, rs, n);
    pthread_mutex_lock(&rq.mu);
    for (size_t i = 0; i < n; i++) {
        batch[i]->rc = rc;
        batch[i]->state = 2;
    }
    pthread_cond_broadcast(&rq.cv);
    pthread_mutex_unlock(&rq.mu);
    c->auth.db_rc = rc;
}

/* The call's reservation (struct resv, in the arena) once one was taken: the stage's slot. */
static int budget_slot = -1;

static struct resv *ledger(const struct sy_call *c)
{
    return sy_call_slot(c, budget_slot);
}

/* ---- budget alerts (general_settings.alerting; logging/sinks/slack.c) ----
 * LiteLLM's budget_alerts: an entity refused over its max_budget ("<Kind>
 * Budget: Budget Crossed"), a key past its soft_budget ("Soft Budget
 * Crossed"); de-duplicated per entity for alerting_args.budget_alert_ttl by
 * sy_alert, which is one atomic load when alerting is off. Never the key:
 * its alias and team. */
static void alert_who(const struct sy_call *c, char *who, size_t n)
{
    const struct sy_keyinfo *k = c->auth.key;
    who[0] = 0;
    if (k && k->key_alias)
        snprintf(who, n, "\nKey Alias: `%.200s`", k->key_alias);
    if (k && (k->team_alias || k->team_id))
        snprintf(who + strlen(who), n - strlen(who), "\nTeam: `%.200s`", k->team_alias ? k->team_alias : k->team_id);
}

static void budget_alert(const struct sy_call *c, int e, const char *id, double spend, double max)
{
    static const char *const kinds[SY_ENT__COUNT] = {[SY_ENT_KEY] = "Key",           [SY_ENT_USER] = "User",
                                                     [SY_ENT_TEAM] = "Team",         [SY_ENT_MEMBER] = "Team Member",
                                                     [SY_ENT_END_USER] = "Customer", [SY_ENT_ORG] = "Organization"};
    const char *kind = e < 0 ? "Proxy" : kinds[e];
    char who[512], dk[600], ids[300] = "";
    alert_who(c, who, sizeof who);
    snprintf(dk, sizeof dk, "budget_crossed:%s:%.500s", kind, id ? id : "");
    if (id && e != SY_ENT_KEY && e != SY_ENT_MEMBER && e >= 0)
        snprintf(ids, sizeof ids, "\n%s ID: `%.200s`", kind, id);
    sy_alert(SY_ALERT_BUDGET_ALERTS, dk, "%s Budget: Budget Crossed\nTotal Budget: `%g`\nCurrent Spend: `%g`%s%s", kind,
             max, spend, ids, who);
}

/* A key whose spend has reached its soft_budget (LiteLLM: soft_budget set and
 * spend >= it): an alert, the call goes on. */
static void soft_budget_alert(const struct sy_call *c)
{
    const struct sy_keyinfo *k = c->auth.key;
    if (!k || !(k->key.soft_budget > 0))
        return;
    double spend = atomic_load(&k->key.spend);
    if (spend < k->key.soft_budget)
        return;
    char who[512], dk[100];
    alert_who(c, who, sizeof who);
    snprintf(dk, sizeof dk, "soft_budget:%s", k->token);
    sy_alert(SY_ALERT_BUDGET_ALERTS, dk, "Key Budget: Soft Budget Crossed\nSoft Budget: `%g`\nCurrent Spend: `%g`%s",
             k->key.soft_budget, spend, who);
}

static int refused(struct sy_call *c, const struct resv *rv)
{
    enum sy_ent e = rv->r.refused_ent;
    struct sy_check_err err;
    memset(&err, 0, sizeof err);
    sy_keys_budget_error(sy_ent_name(e), c->auth.key, c->auth.eu, rv->r.current_spend, rv->r.max_budget[e], &err);
    budget_alert(c, (int)e, rv->r.id[e], rv->r.current_spend, rv->r.max_budget[e]);
    c->out.exception_class = "BudgetExceededError";
    sy_call_error(c, err.status, err.type, NULL, err.message, NULL, 0);
    return SY_DONE;
}

/* A reservation taken: each entity's amount joins rv->reserved[]; rv is the call's. */
static void taken(struct sy_call *c, struct resv *rv)
{
    for (int e = 0; e < SY_ENT__COUNT; e++)
        if (rv->r.id[e])
            rv->reserved[e] += rv->r.taken[e];
    rv->worst += rv->r.amount;
    sy_call_slot(c, budget_slot) = rv;
}

static void proceed(struct sy_call *c, struct resv *rv)
{
    if (rv->topup)
        rv->then(c);
    else
        sy_call_resume(c);
}

static void reserve_done(struct sy_call *c, void *arg)
{
    struct resv *rv = arg;
    if (c->auth.db_rc < 0) {
        sy_reserve_in_doubt(rv->r.resv_id); /* its COMMIT may have happened: reclaimed later if so */
        if (!c->g->cfg->allow_requests_on_db_unavailable) {
            c->out.exception_class = "ServiceUnavailableError";
            sy_call_error(c, 503, "budget_exceeded", "None",
                          "the database is unreachable: the budget cannot be reserved "
                          "(general_settings.allow_requests_on_db_unavailable lets requests through)",
                          NULL, 0);
            return;
        }
        c->auth.no_db = 1;
        proceed(c, rv);
        return;
    }
    if (rv->r.refused) {
        refused(c, rv);
        return;
    }
    taken(c, rv);
    proceed(c, rv);
}

static void count_prompt(struct sy_call *c, void *arg)
{
    sy_route_count_work(c, arg);
}

static void counted(struct sy_call *c, void *arg);

static double spend_of(const struct sy_budget *b)
{
    return b ? atomic_load(&b->spend) : 0;
}

/* Reserve amount from rv's entities: SY_OK (taken, in memory), SY_DONE
 * (refused, answered) or SY_AGAIN (on a DB thread: reserve_done continues). */
static int reserve_amount(struct sy_call *c, struct resv *rv, double amount)
{
    rv->r.amount = amount;
    if (sy_db_kind() == SY_STORE_SQLITE) { /* one process per file: in memory (spend/ledger.c) */
        const struct sy_keyinfo *k = c->auth.key;
        double spend[SY_ENT__COUNT] = {k ? spend_of(&k->key) : 0,
                                       k ? spend_of(k->user) : 0,
                                       k ? spend_of(k->team) : 0,
                                       k ? spend_of(k->member) : 0,
                                       c->auth.eu ? spend_of(&c->auth.eu->b) : 0,
                                       k ? spend_of(k->org) : 0};
        sy_ledger_reserve(&rv->r, spend);
        if (rv->r.refused)
            return refused(c, rv);
        rv->mem = 1;
        taken(c, rv);
        return SY_OK;
    }
    rv->r.resv_id = c->call_id; /* durable: "SwitchyardReservation" rows (spend/reserve.c) */
    rq_push(rv);
    if (sy_call_db(c, reserve_run, reserve_done, rv) != 0) {
        pthread_mutex_lock(&rq.mu);
        rq_unlink(rv);
        pthread_mutex_unlock(&rq.mu);
        c->auth.db_rc = SY_STORE_EDOWN;
        reserve_done(c, rv);
    }
    return SY_AGAIN;
}

/* ---- prices of the group this call may reach ----
 * A group's dearest rates are precomputed (price_max), except where a
 * wildcard deployment ("openai/<star>") takes its price from the model the
 * request names: then they are gathered here, for this call. */
/* The in-process mock model, and self-hosted servers (a model you run
 * yourself costs nothing per token, as LiteLLM's ollama entries say): never
 * "unpriced". */
static int free_provider(const struct sy_drt *r)
{
    static const char *const local[] = {"mock", "ollama",    "ollama_chat", "hosted_vllm",
                                        "vllm", "lm_studio", "llamafile"};
    const char *p = r->d->provider;
    if (r->prov && r->prov->name && !strcmp(r->prov->name, "mock"))
        return 1;
    for (size_t i = 0; p && i < sizeof local / sizeof local[0]; i++)
        if (!strcmp(p, local[i]))
            return 1;
    return 0;
}

static void dp_max(struct sy_dprice *m, const struct sy_dprice *p)
{
#define MX(f)        \
    if (p->f > m->f) \
    m->f = p->f
    MX(in);
    MX(out);
    MX(cache_read);
    MX(cache_write);
    MX(cache_write_1h);
    MX(reasoning);
    MX(tier_in);
    MX(tier_out);
    MX(tier_cache_read);
    MX(tier_cache_write);
    MX(tier_cache_write_1h);
    MX(max_output_tokens);
    MX(max_input_tokens);
#undef MX
    if (p->tier_threshold && (!m->tier_threshold || p->tier_threshold < m->tier_threshold))
        m->tier_threshold = p->tier_threshold;
    m->known |= p->known;
    m->priced |= p->priced;
}

static void group_price(const struct sy_call *c, const struct sy_group *gr, struct sy_dprice *out)
{
    if (!gr->wildcard) {
        *out = gr->price_max;
        return;
    }
    memset(out, 0, sizeof *out);
    for (size_t k = 0; k < gr->n; k++) {
        struct sy_dprice dp;
        sy_call_dprice(c, gr, gr->d[k], &dp);
        dp_max(out, &dp);
    }
}

/* A usable deployment of gr without any price (no map entry with a price of
 * any kind - per token, image, second, character, query ... - and no
 * litellm_params / model_info price); NULL when every one is priced. The
 * in-process mock model and self-hosted servers are never counted. */
static const struct sy_drt *unpriced_drt(const struct sy_call *c, const struct sy_group *gr)
{
    for (size_t k = 0; k < gr->n; k++) {
        const struct sy_drt *r = gr->d[k];
        if (!r->prov || free_provider(r))
            continue;
        struct sy_dprice dp;
        sy_call_dprice(c, gr, r, &dp);
        if (!dp.known && !dp.priced)
            return r;
    }
    return NULL;
}

/* general_settings.switchyard_unpriced_models for a budgeted call whose
 * group can reach a deployment without a price: SY_OK (allow, or
 * zero_cost_warn: logged, at most once a minute) or SY_DONE (reject: a 400
 * in the client's dialect naming the model and how to price it). */
static int unpriced_policy(struct sy_call *c, const struct sy_group *gr, const struct sy_drt *r)
{
    int pol = c->g->cfg->unpriced_models;
    const char *um = r->d->model ? r->d->model : r->d->upstream_model ? r->d->upstream_model : "?";
    if (pol == SY_UNPRICED_ALLOW)
        return SY_OK;
    if (pol == SY_UNPRICED_WARN) {
        static _Atomic int64_t last_ns;
        int64_t now = (int64_t)sy_now_ns(), prev = atomic_load(&last_ns);
        if (now - prev > (int64_t)60e9 && atomic_compare_exchange_strong(&last_ns, &prev, now))
            sy_warn("model '%s' (%s) has no price: a budgeted key's call to it costs 0 "
                    "(general_settings.switchyard_unpriced_models: zero_cost_warn)",
                    gr->name, um);
        return SY_OK;
    }
    char msg[1024];
    snprintf(msg, sizeof msg,
             "switchyard: model '%s' (deployment model '%s') has no known price, and this request is charged to a "
             "budget; a call to it would cost 0. Price it: set model_info.input_cost_per_token and "
             "output_cost_per_token on its deployment in config.yaml, or add '%s' to a model price map "
             "(general_settings.switchyard_model_prices or LITELLM_MODEL_COST_MAP_URL, LiteLLM's "
             "model_prices_and_context_window.json format). general_settings.switchyard_unpriced_models: allow "
             "(or zero_cost_warn) lets such calls through at cost 0.",
             gr->name, um, um);
    c->out.exception_class = "BadRequestError";
    sy_call_error(c, 400, "invalid_request_error", "model", msg, NULL, 0);
    return SY_DONE;
}

/* The worst case of this request at group gr's dearest prices. */
static double worst_case(struct sy_call *c, const struct sy_group *gr)
{
    uint64_t prompt = c->rt.input_tokens > 0 ? (uint64_t)c->rt.input_tokens : 0;
    struct sy_dprice gp;
    group_price(c, gr, &gp);
    return gp.known ? sy_cost_bound(&gp, prompt, req_max_tokens(c)) : 0;
}

static int reserve(struct sy_call *c, struct resv *rv)
{
    double amount = worst_case(c, c->req_group);
    if (amount <= 0)
        return SY_OK; /* free model: nothing to reserve */
    return reserve_amount(c, rv, amount);
}

static void counted(struct sy_call *c, void *arg)
{
    if (reserve(c, arg) == SY_OK)
        sy_call_resume(c);
}

/* ---- the proxy-wide budget (litellm_settings.max_budget) ----
 * LiteLLM (auth_checks.py::_global_proxy_budget_check) refuses LLM calls
 * while the proxy's spend - SUM(spend) of "MonthlyGlobalSpend", the last 30
 * days of LiteLLM_SpendLogs, cached - is above max_budget, with
 * BudgetExceededError "Budget has been exceeded! Current cost: X, Max
 * budget: Y". Here: the sum over the last budget_duration (default 30 days),
 * re-read by one request every GLOBAL_TTL seconds (the others go on with the
 * value held), plus what this instance's calls cost since. No reservation:
 * the proxy budget is LiteLLM's spent-so-far check. */
#define GLOBAL_TTL 10.0

static struct {
    _Atomic double spend;
    _Atomic double loaded_at; /* monotonic seconds; 0 never */
    atomic_int loading;
} gb;

struct gload {
    double since;
    double sum;
};

static void global_add(double cost)
{
    double cur = atomic_load(&gb.spend);
    while (!atomic_compare_exchange_weak(&gb.spend, &cur, cur + cost))
        ;
}

static int on_global_sum(void *ud, const struct sy_srow *row)
{
    ((struct gload *)ud)->sum = sy_srow_num(row, "s", 0);
    return 1;
}

static void global_run(struct sy_store *st, struct sy_call *c, void *arg)
{
    struct gload *gl = arg;
    char since[32];
    sy_iso_time(gl->since, since);
    struct sy_sval p = sy_sv_ts(since);
    c->auth.db_rc = sy_store_exec(st,
                                  "SELECT COALESCE(SUM(\"spend\"), 0) AS \"s\" FROM \"LiteLLM_SpendLogs\" "
                                  "WHERE \"startTime\" >= $1",
                                  1, &p, on_global_sum, gl);
}

static int stage_rest(struct sy_call *c);

static void global_done(struct sy_call *c, void *arg)
{
    struct gload *gl = arg;
    if (c->auth.db_rc >= 0) {
        atomic_store(&gb.spend, gl->sum);
        atomic_store(&gb.loaded_at, (double)sy_now_ns() / 1e9);
    }
    atomic_store(&gb.loading, 0);
    if (stage_rest(c) == SY_OK)
        sy_call_resume(c);
}

/* SY_OK, SY_DONE (refused) or SY_AGAIN (reloading: stage_rest follows). */
static int global_check(struct sy_call *c)
{
    const struct sy_config *cfg = c->g->cfg;
    double now = (double)sy_now_ns() / 1e9, at = atomic_load(&gb.loaded_at);
    if ((at == 0 || now - at > GLOBAL_TTL) && !atomic_exchange(&gb.loading, 1)) {
        struct gload *gl = sy_arena_alloc(&c->req->arena, sizeof *gl);
        double window = cfg->budget_duration ? sy_duration_seconds(cfg->budget_duration) : -1;
        if (gl) {
            gl->since = sy_wall_now() - (window > 0 ? window : 30 * 86400.0);
            gl->sum = 0;
            if (sy_call_db(c, global_run, global_done, gl) == 0)
                return SY_AGAIN;
        }
        atomic_store(&gb.loading, 0);
    }
    double spend = atomic_load(&gb.spend);
    if (spend > cfg->max_budget) {
        struct sy_check_err err;
        memset(&err, 0, sizeof err);
        sy_keys_budget_error("key", NULL, NULL, spend, cfg->max_budget, &err);
        budget_alert(c, -1, "proxy", spend, cfg->max_budget);
        c->out.exception_class = "BudgetExceededError";
        sy_call_error(c, err.status, err.type, NULL, err.message, NULL, 0);
        return SY_DONE;
    }
    return SY_OK;
}

/* ---- the spend writer's backpressure ----
 * While the writer is behind its database (spend/writer.c, "Backpressure"), a
 * new call waits here, before anything is reserved or sent upstream, checking
 * every BACKLOG_TICK_MS; after BACKLOG_MAX_MS it goes on regardless (a writer
 * that makes no progress must not hold the proxy: its rows are then bounded by
 * max_queue as before). A client that leaves while waiting ends the call (499). */
#define BACKLOG_TICK_MS 2
#define BACKLOG_MAX_MS  10000

static int reserve_go(struct sy_call *c);

static void backlog_close(uv_handle_t *h)
{
    free(h);
}

static void backlog_stop(struct sy_call *c)
{
    uv_timer_stop(c->rt.retry_timer);
    uv_close((uv_handle_t *)c->rt.retry_timer, backlog_close);
    c->rt.retry_timer = NULL;
    c->req->on_abort = NULL;
}

static void backlog_abort(struct sy_req *r)
{
    struct sy_call *c = r->handler_data;
    c->aborted = 1;
    if (c->rt.retry_timer)
        backlog_stop(c);
    sy_call_account(c, 499);
    sy_resp_end(r);
}

static void unadmit(void *p)
{
    (void)p;
    sy_spend_admit(-1);
}

/* The call's row counts in the backlog from now until the request ends. */
static int admitted_go(struct sy_call *c)
{
    sy_spend_admit(1);
    sy_arena_defer(&c->req->arena, unadmit, NULL);
    return reserve_go(c);
}

static void backlog_tick(uv_timer_t *t)
{
    struct sy_call *c = t->data;
    if (sy_spend_backlogged() && (sy_now_ns() - c->req->t_start_ns) / 1000000 < BACKLOG_MAX_MS) {
        uv_timer_start(t, backlog_tick, BACKLOG_TICK_MS, 0);
        return;
    }
    backlog_stop(c);
    if (admitted_go(c) == SY_OK)
        sy_call_resume(c);
}

static int backlog_wait(struct sy_call *c)
{
    uv_timer_t *t = malloc(sizeof *t);
    if (!t)
        return admitted_go(c);
    uv_timer_init(&c->w->loop, t);
    t->data = c;
    c->rt.retry_timer = t;
    c->req->on_abort = backlog_abort;
    uv_timer_start(t, backlog_tick, BACKLOG_TICK_MS, 0);
    return SY_AGAIN;
}

static int reserve_stage(struct sy_call *c)
{
    if (sy_spend_backlogged() && !c->auth.no_db)
        return backlog_wait(c);
    return admitted_go(c);
}

static int reserve_go(struct sy_call *c)
{
    soft_budget_alert(c);
    if (c->g->cfg->max_budget > 0 && !c->auth.no_db) {
        int rc = global_check(c);
        if (rc != SY_OK)
            return rc;
    }
    return stage_rest(c);
}

static int stage_rest(struct sy_call *c)
{
    if (c->auth.no_db || !c->req_group || (!c->auth.key && !c->auth.eu))
        return SY_OK;
    struct resv tmp;
    if (!entities(c, &tmp))
        return SY_OK;
    const struct sy_drt *unpriced = unpriced_drt(c, c->req_group);
    if (unpriced && unpriced_policy(c, c->req_group, unpriced) != SY_OK)
        return SY_DONE;
    struct sy_dprice gp;
    group_price(c, c->req_group, &gp);
    if (!gp.known)
        return SY_OK;
    struct resv *rv = sy_arena_alloc(&c->req->arena, sizeof *rv);
    *rv = tmp;
    if (rv->r.id[SY_ENT_MEMBER])
        rv->r.id[SY_ENT_MEMBER] = rv->member;
    if (c->rt.input_tokens < 0 || c->rt.input_is_bound) { /* the exact prompt count */
        if (c->req->body.len >= SY_OFFLOAD_MIN_BYTES) {
            sy_call_run_work(c, c->req->body.len, count_prompt, counted, rv);
            return SY_AGAIN;
        }
        count_prompt(c, NULL);
    }
    return reserve(c, rv);
}

/* ---- a fallback to another group ---- */

static void topup_counted(struct sy_call *c, void *arg);

static int topup(struct sy_call *c, struct resv *rv)
{
    double worst = worst_case(c, c->group);
    if (worst <= rv->worst)
        return SY_OK; /* as cheap or cheaper: what is reserved covers it */
    return reserve_amount(c, rv, worst - rv->worst);
}

static void topup_counted(struct sy_call *c, void *arg)
{
    struct resv *rv = arg;
    if (topup(c, rv) == SY_OK)
        rv->then(c);
}

static int budget_fallback(struct sy_call *c, void (*then)(struct sy_call *))
{
    if (c->auth.no_db || !c->group || (!c->auth.key && !c->auth.eu))
        return SY_OK;
    struct resv probe;
    if (!entities(c, &probe))
        return SY_OK;
    const struct sy_drt *unpriced = unpriced_drt(c, c->group);
    if (unpriced && unpriced_policy(c, c->group, unpriced) != SY_OK)
        return SY_DONE;
    struct sy_dprice gp;
    group_price(c, c->group, &gp);
    if (!gp.known)
        return SY_OK;
    struct resv *rv = ledger(c);
    if (!rv) { /* nothing reserved so far (the requested group had no price) */
        struct resv tmp;
        if (!entities(c, &tmp))
            return SY_OK;
        if (!(rv = sy_arena_alloc(&c->req->arena, sizeof *rv)))
            return SY_OK;
        *rv = tmp;
        if (rv->r.id[SY_ENT_MEMBER])
            rv->r.id[SY_ENT_MEMBER] = rv->member;
    }
    rv->topup = 1;
    rv->then = then;
    if (c->rt.input_tokens < 0 || c->rt.input_is_bound) { /* the exact prompt count */
        if (c->req->body.len >= SY_OFFLOAD_MIN_BYTES) {
            sy_call_run_work(c, c->req->body.len, count_prompt, topup_counted, rv);
            return SY_AGAIN;
        }
        count_prompt(c, NULL);
    }
    return topup(c, rv);
}

/* ---- after the call ---- */

/* The response's id ("chatcmpl-...", "msg_..."): LiteLLM's request_id. Looked
 * for as `"id":"` in the first bytes of a JSON answer or the last of a stream
 * (the final chunk carries it too); NULL when not found. */
const char *sy_call_response_id(struct sy_call *c)
{
    size_t bn = c->up.up_body.len;
    const char *bp = c->in.stream ? sy_ustream_tail(c, &bn) : c->up.up_body.p;
    if (!bp || !bn)
        return NULL;
    size_t n = bn < 4096 ? bn : 4096;
    const char *p = c->in.stream ? bp + bn - n : bp;
    const char *k = memmem(p, n, "\"id\":\"", 6);
    if (c->in.stream) /* the last occurrence: the final chunk's */
        for (const char *q = k; q; q = memmem(q + 6, (size_t)(p + n - q - 6), "\"id\":\"", 6))
            k = q;
    if (!k)
        return NULL;
    k += 6;
    const char *e = memchr(k, '"', (size_t)(p + n - k));
    if (!e || e == k || e - k > 200 || memchr(k, '\\', (size_t)(e - k)))
        return NULL;
    return sy_arena_strndup(&c->req->arena, k, (size_t)(e - k));
}

const char *sy_call_type(const struct sy_call *c)
{
    switch (c->kind) {
    case SY_RK_RESPONSES: return "aresponses";
    case SY_RK_PASSTHRU: return sy_passthru_call_type(c);
    case SY_RK_COMPLETIONS: return "atext_completion";
    case SY_RK_EMBEDDINGS: return "aembedding";
    case SY_RK_MESSAGES: return "anthropic_messages";
    default: return "acompletion";
    }
}

/* The call ended: its SpendLogs row, entity spend, the reservation settled (finish hook). */
/* SpendLogs.request_tags (and LiteLLM_DailyTagSpend): the body's "tags" then
 * metadata.tags, their raw array contents joined as JSON array text (the
 * body parsed as JSON, so the text is valid); NULL when there are none. */
static const char *spend_tags(struct sy_call *c)
{
    const char *p = c->req->body.p;
    struct sy_jspan t1 = {0}, t2 = {0}, meta = {0};
    if (!p || !c->in.scan.top_is_object)
        return NULL;
    if (c->in.scan.rk_mask & (1u << SY_JR_TAGS))
        t1 = c->in.scan.rk[SY_JR_TAGS];
    if (memmem(p, c->req->body.len, "metadata", 8))
        meta = sy_jscan_member(p, (struct sy_jspan){0, c->req->body.len, 'o'}, "metadata");
    if (meta.type == 'o')
        t2 = sy_jscan_member(p, meta, "tags");
    int a1 = t1.type == 'a' && t1.len > 2, a2 = t2.type == 'a' && t2.len > 2;
    if (!a1 && !a2)
        return NULL;
    size_t n1 = a1 ? t1.len - 2 : 0, n2 = a2 ? t2.len - 2 : 0, o = 0;
    char *out = sy_arena_alloc(&c->req->arena, n1 + n2 + 4);
    if (!out)
        return NULL;
    out[o++] = '[';
    memcpy(out + o, p + t1.off + 1, n1);
    o += n1;
    if (a1 && a2)
        out[o++] = ',';
    memcpy(out + o, p + t2.off + 1, n2);
    o += n2;
    out[o++] = ']';
    out[o] = 0;
    return out;
}

static void spend_finish(struct sy_call *c, int status)
{
    if (!c->g->db || !c->req_group)
        return; /* refused before routing: not a spend row (as LiteLLM) */
    sy_call_cost(c);
    double cost = c->usage.cost_known ? c->usage.cost : 0; /* a failure that reported usage is billed too */
    struct sy_spend_rec r;
    memset(&r, 0, sizeof r);
    r.request_id =
        status < 400 && c->cache != SY_CACHE_HIT ? sy_call_response_id(c) : NULL; /* a hit's id is the stored one's */
    if (!r.request_id) /* failures, and answers without an id: the call id */
        r.request_id = c->call_id;
    r.call_type = sy_call_type(c);
    r.status = status < 400 ? "success" : "failure";
    r.api_key = c->auth.hashed_key ? c->auth.hashed_key : "";
    const struct sy_keyinfo *k = c->auth.key;
    if (k) {
        r.key_alias = k->key_alias;
        r.user_id = k->user_id;
        r.team_id = k->team_id;
        r.org_id = k->org_id;
        r.has_entity[SY_ENT_KEY] = 1;
        r.has_entity[SY_ENT_USER] = k->user_id != NULL;
        r.has_entity[SY_ENT_TEAM] = k->team_id != NULL;
        r.has_entity[SY_ENT_MEMBER] = k->team_id && k->user_id && k->member;
        r.has_entity[SY_ENT_ORG] = k->org_id != NULL;
    } else if (c->auth.no_db && c->auth.hashed_key) /* let through unverified: still charge the key */
        r.has_entity[SY_ENT_KEY] = 1;
    if (c->auth.eu) {
        r.end_user = c->auth.eu->b.id;
        r.has_entity[SY_ENT_END_USER] = 1;
    } else if (c->in.scan.user.type == 's' && c->in.scan.user.len < 256) {
        char *eu = sy_arena_alloc(&c->req->arena, 256);
        if (eu && sy_jstr_decode(c->req->body.p + c->in.scan.user.off, c->in.scan.user.len, eu, 256) > 0)
            r.end_user = eu;
    }
    r.model = c->drt && c->drt->d->upstream_model ? c->drt->d->upstream_model
              : c->cache == SY_CACHE_HIT          ? c->req_group->name /* no deployment answered */
                                                  : "";
    r.model_id = c->drt && c->drt->d->id ? c->drt->d->id : "";
    r.model_group = c->req_group->name;
    r.custom_llm_provider = c->drt && c->drt->d->provider ? c->drt->d->provider : "";
    r.api_base = c->drt && c->drt->d->api_base ? c->drt->d->api_base : "";
    r.spend = cost;
    r.cache_hit = c->cache == SY_CACHE_HIT;
    if (c->cache)
        r.cache_key = sy_cache_key_of(c);
    r.usage.prompt_tokens = c->usage.prompt_tokens;
    r.usage.completion_tokens = c->usage.completion_tokens;
    r.usage.cached_tokens = c->usage.cached_tokens;
    r.usage.cache_creation_tokens = c->usage.cache_write_tokens;
    r.usage.cache_creation_1h_tokens = c->usage.cache_write_1h_tokens;
    r.usage.reasoning_tokens = c->usage.reasoning_tokens;
    r.usage_source = c->usage.usage_counted                            ? "counted"
                     : c->usage.have_usage && c->cache != SY_CACHE_HIT ? "provider"
                                                                       : NULL;
    r.stream_cut = c->in.stream && c->out.client_started && status == 499; /* the client left mid-stream */
    r.request_tags = spend_tags(c);
    if (status >= 400) { /* metadata.error_information */
        r.error_code = status;
        r.error_class = c->out.exception_class;
        r.error_message = c->out.err_msg ? c->out.err_msg : c->up.up_body.len ? c->up.up_body.p : NULL;
    }
    r.guard_info = c->out.guard_info; /* the guardrails that ran (stages/guardrails.c); NULL: none */
    if (c->g->cfg->store_prompts_in_spend_logs && !c->g->cfg->turn_off_message_logging) {
        /* SpendLogs' proxy_server_request and response (spend/prompts.c, on the writer thread) */
        r.prompt = c->req->body.p;
        r.prompt_len = c->req->body.len;
        int cut = 0;
        r.response = status < 400 ? sy_log_capture(c, &r.response_len, &r.response_sse, &cut) : NULL;
        if (!r.response && status < 400 && c->out.hit_body) {
            r.response = c->out.hit_body;
            r.response_len = c->out.hit_len;
        }
    }
    double now = sy_wall_now();
    double wall_elapsed = (double)(sy_now_ns() - c->req->t_start_ns) / 1e9;
    r.start_s = now - wall_elapsed;
    r.end_s = now;
    r.completion_start_s = c->up.t_up_first ? r.start_s + (double)(c->up.t_up_first - c->req->t_start_ns) / 1e9 : now;
    const struct resv *rv = ledger(c);
    if (rv && rv->mem) { /* reserved in memory: the database gets the whole cost */
        sy_ledger_settle(rv->r.id, rv->reserved, rv->r.partial, cost);
    } else if (rv) { /* reserved in the database: the writer settles its rows */
        for (int e = 0; e < SY_ENT__COUNT; e++)
            r.reserved[e] = rv->reserved[e];
        r.resv_id = rv->r.resv_id;
        for (int e = 0; e < SY_ENT__COUNT; e++)
            if (rv->r.partial[e])
                r.partial_mask |= 1u << e;
        sy_spend_rec_credit(&r, 1); /* the next reservation counts what this one gives back */
    }
    if (sy_spend_record(&r) < 0 && r.resv_id) { /* dropped (queue full): give the reservation back */
        sy_spend_rec_credit(&r, -1);
        sy_reserve_in_doubt(r.resv_id);
    }
    if (cost > 0 && c->g->cfg->max_budget > 0)
        global_add(cost);
    if (cost > 0 && k)
        sy_keys_add_spend(c->auth.key, c->auth.eu, c->req_group->name, cost);
    else if (cost > 0 && c->auth.eu)
        sy_keys_add_spend(NULL, c->auth.eu, c->req_group->name, cost);
}

static int reserve_on(const struct sy_gwconf *g, enum sy_route_kind k)
{
    (void)k;
    return g->db; /* budgets and spend rows live in the database */
}

const struct sy_stage sy_stage_reserve = {
    .name = "reserve",
    .routes = SY_RKB_LLM,
    .enabled = reserve_on,
    .run = reserve_stage,
    .finish = spend_finish,
    .fallback = budget_fallback,
    .slot = &budget_slot,
};
