/* slack.c - LiteLLM's Slack alerting (litellm/integrations/SlackAlerting/
 * slack_alerting.py): general_settings.alerting: ["slack"], alerting_threshold,
 * alert_types, alerting_args, the SLACK_WEBHOOK_URL incoming webhook.
 *
 * Two ways in, one way out:
 *
 *   any thread: sy_alert(type, dedup_key, fmt, ...)      logging thread: every record
 *     atomic mask test (off: nothing else)                  (alerting on: the engine hands
 *     mutex: de-duplicate, format, JSON                      the slack sink successes and
 *     sy_log_submit_to("slack", json)  ─▶ RAW record ─┐      failures alike)
 *                                                     ▼      ▼
 *                                         encode(): RAW ─▶ one POST of its text;
 *                                           a record ─▶ llm_exceptions (an upstream call failed),
 *                                                       llm_too_slow (slower than alerting_threshold),
 *                                                       outage_alerts (408/5xx/no answer from one
 *                                                       deployment, minor / major thresholds in
 *                                                       outage_alert_ttl), each de-duplicated;
 *                                                       usually nothing
 *
 * Who raises what (sy_alert call sites):
 *   budget_alerts        stages/budget.c, stages/keycheck.c: a key / user / team / member /
 *                        org / end user refused over its max_budget, the proxy's max_budget,
 *                        a key past its soft_budget
 *   cooldown_deployment  router/sync.c: a deployment put in cooldown
 *   failed_tracking_spend spend/writer.c: spend rows dropped (queue full, a row refused)
 *   db_exceptions        this file's health thread (every health_check_s while alerting is
 *                        on): the database unreachable as the DB pool last saw it, and the
 *                        router's Redis disconnected (LiteLLM reports Redis failures through
 *                        its service logger; here they are db_exceptions, their text says Redis)
 *
 * The message is LiteLLM's send_alert text,
 *   {"text": "Level: `High`\nTimestamp: `HH:MM:SS`\n\nMessage: ...\n\nAlert Type: `...`"}
 * (plus "Proxy URL" when PROXY_BASE_URL is set), with fields as LiteLLM's
 * (Request Model, API Base, Key Alias, Team ...). Never the key, never the
 * messages of the request; an error message is cut at SY_SLACK_ERROR_MAX bytes.
 *
 * De-duplication: the same (type, dedup_key) is sent at most once per window
 * (budget_alerts: budget_alert_ttl, 24 h as LiteLLM; the others
 * switchyard_alert_dedup_ttl, 300 s), in a table of SY_SLACK_DEDUP_SLOTS
 * entries (an expired or the least recently seen one is reused). The next
 * alert after a window in which some were held back says how many:
 * "[Num Alerts: N]", LiteLLM's marker for squashed alerts. LiteLLM itself
 * de-duplicates only budget alerts and squashes the rest per 10 s batch.
 */
#include "logging/sinks/slack.h"

#include <json-c/json.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "core/log.h"
#include "core/utf8.h"
#include "logging/logging.h"
#include "redis/redis.h"
#include "store/dbpool.h"

static const char *const type_names[SY_ALERT__COUNT] = {
    [SY_ALERT_LLM_EXCEPTIONS] = "llm_exceptions",
    [SY_ALERT_LLM_TOO_SLOW] = "llm_too_slow",
    [SY_ALERT_LLM_REQUESTS_HANGING] = "llm_requests_hanging",
    [SY_ALERT_BUDGET_ALERTS] = "budget_alerts",
    [SY_ALERT_DB_EXCEPTIONS] = "db_exceptions",
    [SY_ALERT_COOLDOWN_DEPLOYMENT] = "cooldown_deployment",
    [SY_ALERT_OUTAGE_ALERTS] = "outage_alerts",
    [SY_ALERT_FAILED_TRACKING_SPEND] = "failed_tracking_spend",
};

/* LiteLLM's level per alert type ("if calls might fail (Medium) or are failing (High)"). */
static const char *const type_levels[SY_ALERT__COUNT] = {
    [SY_ALERT_LLM_EXCEPTIONS] = "High",         [SY_ALERT_LLM_TOO_SLOW] = "Low",
    [SY_ALERT_LLM_REQUESTS_HANGING] = "Medium", [SY_ALERT_BUDGET_ALERTS] = "High",
    [SY_ALERT_DB_EXCEPTIONS] = "High",          [SY_ALERT_COOLDOWN_DEPLOYMENT] = "Medium",
    [SY_ALERT_OUTAGE_ALERTS] = "Medium",        [SY_ALERT_FAILED_TRACKING_SPEND] = "High",
};

/* LiteLLM alert types switchyard knows but does not raise (reports, model events). */
static const char *const quiet_types[] = {"daily_reports",
                                          "spend_reports",
                                          "fallback_reports",
                                          "new_model_added",
                                          "region_outage_alerts",
                                          "outage_alerts_region",
                                          "new_virtual_key_created",
                                          "virtual_key_updated",
                                          "virtual_key_deleted",
                                          "new_team_created",
                                          "team_updated",
                                          "team_deleted",
                                          "new_internal_user_created",
                                          "internal_user_updated",
                                          "internal_user_deleted"};

const char *sy_alert_type_name(enum sy_alert_type t)
{
    return (unsigned)t < SY_ALERT__COUNT ? type_names[t] : NULL;
}

/* ---- the running state --------------------------------------------------- */

struct dslot {
    uint64_t h;
    double until;
    uint64_t seen; /* LRU clock */
    unsigned held; /* alerts held back in the current window */
    int used;
};

struct oslot {
    uint64_t h;
    double first;
    unsigned n, api, timeout, other;
    int minor_sent, major_sent, used;
};

static struct {
    pthread_mutex_t mu;
    atomic_uint mask; /* 0: alerting off; read without the lock */
    struct sy_slack_settings s;
    uint64_t gen; /* bumped by each install: a closing instance uninstalls only its own */
    uint64_t clock;
    struct dslot d[SY_SLACK_DEDUP_SLOTS];
    struct oslot o[SY_SLACK_OUTAGE_SLOTS];
} A = {.mu = PTHREAD_MUTEX_INITIALIZER};

static uint64_t fnv(enum sy_alert_type t, const char *key)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)t;
    for (const unsigned char *p = (const unsigned char *)(key ? key : ""); *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return h;
}

static uint64_t install(const struct sy_slack_settings *s, uint64_t only_gen)
{
    pthread_mutex_lock(&A.mu);
    if (only_gen && A.gen != only_gen) { /* a newer instance took over (reload) */
        pthread_mutex_unlock(&A.mu);
        return 0;
    }
    memset(A.d, 0, sizeof A.d);
    memset(A.o, 0, sizeof A.o);
    A.clock = 0;
    if (s)
        A.s = *s;
    else
        memset(&A.s, 0, sizeof A.s);
    atomic_store(&A.mask, s ? s->mask : 0);
    uint64_t g = ++A.gen;
    pthread_mutex_unlock(&A.mu);
    return g;
}

void sy_slack_install(const struct sy_slack_settings *s)
{
    install(s, 0);
}

/* Which slot to reuse: a free one, else an expired one, else the least recently seen. */
static uint64_t rank(const struct dslot *d, double now)
{
    if (!d->used)
        return 0;
    if (d->until <= now)
        return 1;
    return 2 + d->seen;
}

/* 1: send it (remembered for ttl), 0: held back. *held: how many were held
 * back in the window before this one. A.mu held. */
static int dedup_pass(enum sy_alert_type t, const char *key, double ttl, double now, unsigned *held)
{
    uint64_t h = fnv(t, key);
    struct dslot *victim = NULL;
    *held = 0;
    A.clock++;
    for (size_t i = 0; i < SY_SLACK_DEDUP_SLOTS; i++) {
        struct dslot *d = &A.d[i];
        if (d->used && d->h == h) {
            d->seen = A.clock;
            if (now < d->until) {
                d->held++;
                return 0;
            }
            *held = d->held;
            d->held = 0;
            d->until = now + ttl;
            return 1;
        }
        if (!victim || rank(d, now) < rank(victim, now))
            victim = d;
    }
    victim->used = 1;
    victim->h = h;
    victim->until = now + ttl;
    victim->seen = A.clock;
    victim->held = 0;
    return 1;
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The Slack body for msg: LiteLLM's send_alert text. */
static void render(struct sy_buf *out, enum sy_alert_type t, const char *level, const char *msg, unsigned held,
                   double now)
{
    char hms[16] = "00:00:00";
    time_t tt = (time_t)now;
    struct tm tm;
    if (localtime_r(&tt, &tm))
        strftime(hms, sizeof hms, "%H:%M:%S", &tm);
    struct sy_buf tx;
    sy_buf_init(&tx, SY_SLACK_TEXT_MAX + 1024);
    if (held)
        sy_buf_printf(&tx, "[Num Alerts: %u]\n\n", held + 1);
    sy_buf_printf(&tx, "Level: `%s`\nTimestamp: `%s`\n\nMessage: ", level ? level : type_levels[t], hms);
    size_t n = strlen(msg);
    sy_buf_append(&tx, msg, n < SY_SLACK_TEXT_MAX ? n : SY_SLACK_TEXT_MAX);
    sy_buf_printf(&tx, "\n\nAlert Type: `%s`", type_names[t]);
    const char *base = getenv("PROXY_BASE_URL");
    if (base && *base)
        sy_buf_printf(&tx, "\n\nProxy URL: `%.512s`", base);
    sy_buf_reset(out);
    SY_BUF_LIT(out, "{\"text\":\"");
    sy_utf8_json_escape(out, tx.p ? tx.p : "", tx.len);
    SY_BUF_LIT(out, "\"}");
    sy_buf_free(&tx);
}

static double ttl_of(enum sy_alert_type t)
{
    return t == SY_ALERT_BUDGET_ALERTS ? A.s.budget_ttl_s : A.s.dedup_ttl_s;
}

int sy_slack_prepare(enum sy_alert_type t, const char *dedup_key, const char *msg, double now, struct sy_buf *out)
{
    if ((unsigned)t >= SY_ALERT__COUNT || !(atomic_load(&A.mask) & (1u << t)))
        return 0;
    pthread_mutex_lock(&A.mu);
    unsigned held;
    int go = (A.s.mask & (1u << t)) && dedup_pass(t, dedup_key ? dedup_key : msg, ttl_of(t), now, &held);
    pthread_mutex_unlock(&A.mu);
    if (!go)
        return 0;
    render(out, t, NULL, msg, held, now);
    return !sy_buf_failed(out);
}

void sy_alert(enum sy_alert_type t, const char *dedup_key, const char *fmt, ...)
{
    if ((unsigned)t >= SY_ALERT__COUNT || !(atomic_load(&A.mask) & (1u << t)))
        return; /* alerting off, or this type not asked for: one load */
    char msg[SY_SLACK_TEXT_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    struct sy_buf b;
    sy_buf_init(&b, 4 * SY_SLACK_TEXT_MAX + 2048);
    if (sy_slack_prepare(t, dedup_key, msg, wall(), &b))
        sy_log_submit_to("slack", b.p, b.len);
    sy_buf_free(&b);
}

/* ---- settings -------------------------------------------------------------- */

static double num_arg(json_object *args, const char *name, double dflt)
{
    json_object *v;
    if (!args || !json_object_object_get_ex(args, name, &v))
        return dflt;
    if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) {
        double d = json_object_get_double(v);
        return isfinite(d) && d >= 0 ? d : dflt;
    }
    if (json_object_is_type(v, json_type_string)) { /* "300", as an env var would give it */
        char *end;
        const char *s = json_object_get_string(v);
        double d = strtod(s, &end);
        return end != s && !*end && isfinite(d) && d >= 0 ? d : dflt;
    }
    return dflt;
}

int sy_slack_parse(const struct sy_logconf *lc, struct sy_slack_settings *s, char *unsupported, size_t ulen, char *err,
                   size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (unsupported && ulen)
        unsupported[0] = 0;
    s->threshold_s = lc->alerting_threshold_s > 0 ? lc->alerting_threshold_s : 300;
    s->redact_key_info = lc->redact_user_api_key_info;
    if (!lc->alert_types) {
        for (int t = 0; t < SY_ALERT__COUNT; t++)
            s->mask |= 1u << t;
    } else {
        json_object *a = json_tokener_parse(lc->alert_types);
        if (!a || !json_object_is_type(a, json_type_array)) {
            json_object_put(a);
            snprintf(err, errlen, "general_settings.alert_types must be a list of alert types");
            return -1;
        }
        size_t n = json_object_array_length(a);
        for (size_t i = 0; i < n; i++) {
            json_object *e = json_object_array_get_idx(a, i);
            const char *name = json_object_is_type(e, json_type_string) ? json_object_get_string(e) : NULL;
            int raised = 0, known = 0;
            for (int t = 0; name && t < SY_ALERT__COUNT; t++)
                if (!strcmp(name, type_names[t])) {
                    s->mask |= 1u << t;
                    raised = 1;
                }
            for (size_t q = 0; name && !raised && q < sizeof quiet_types / sizeof quiet_types[0]; q++)
                known |= !strcmp(name, quiet_types[q]);
            /* a name switchyard does not raise is ignored, as LiteLLM never matches a
             * name it does not know; each is named in one warning */
            if (!raised && unsupported && ulen) {
                size_t used = strlen(unsupported);
                const char *shown = name ? name : "(not a string)";
                if (used + strlen(shown) + 12 < ulen)
                    snprintf(unsupported + used, ulen - used, "%s%s%s", used ? ", " : "", shown,
                             known ? "" : " (unknown)");
            }
        }
        json_object_put(a);
    }
    json_object *args = NULL;
    if (lc->alerting_args) {
        args = json_tokener_parse(lc->alerting_args);
        if (!args || !json_object_is_type(args, json_type_object)) {
            json_object_put(args);
            snprintf(err, errlen, "general_settings.alerting_args must be a mapping");
            return -1;
        }
    }
    s->dedup_ttl_s = num_arg(args, "switchyard_alert_dedup_ttl", 300);
    s->budget_ttl_s = num_arg(args, "budget_alert_ttl", 86400);
    s->outage_ttl_s = num_arg(args, "outage_alert_ttl", 60);
    s->minor_outage = (unsigned)num_arg(args, "minor_outage_alert_threshold", 5);
    s->major_outage = (unsigned)num_arg(args, "major_outage_alert_threshold", 10);
    s->health_check_s = num_arg(args, "switchyard_health_check_interval", 5);
    if (s->health_check_s < 0.1)
        s->health_check_s = 0.1;
    if (!s->minor_outage)
        s->minor_outage = 1;
    if (s->major_outage < s->minor_outage)
        s->major_outage = s->minor_outage;
    json_object *v;
    if (args && json_object_object_get_ex(args, "log_to_console", &v))
        s->log_to_console = json_object_get_boolean(v);
    json_object_put(args);
    return 0;
}

/* ---- alerts from records (the logging thread) ------------------------------------ */

/* "\nLabel: `value`" when value is set; backticks in value become quotes. */
static void field(struct sy_buf *m, const char *label, const char *v, size_t cap)
{
    if (!v || !*v)
        return;
    sy_buf_printf(m, "\n%s: `", label);
    size_t n = strlen(v);
    if (n > cap)
        n = cap;
    for (size_t i = 0; i < n; i++)
        sy_buf_append(m, v[i] == '`' ? "'" : v + i, 1);
    SY_BUF_LIT(m, "`");
}

static void who(struct sy_buf *m, const struct sy_logrec *r)
{
    if ((r->flags & SY_LOGREC_REDACT_KEY) || A.s.redact_key_info)
        return;
    field(m, "Key Alias", r->key_alias, 256);
    field(m, "Team", r->team_alias ? r->team_alias : r->team_id, 256);
}

/* An upstream call of this record failed (LiteLLM alerts on LLM API
 * exceptions, never on the proxy's own refusals: auth, budget, rate limits). */
static const struct sy_logattempt *failed_attempt(const struct sy_logrec *r)
{
    const struct sy_logattempt *last = NULL;
    for (size_t i = 0; i < r->nattempts; i++)
        if (r->attempts[i].error)
            last = &r->attempts[i];
    return last;
}

struct outq {
    struct sy_buf *body[SY_SINK_MAX_REQS];
    size_t n;
};

static void emit(struct outq *q, enum sy_alert_type t, const char *key, struct sy_buf *msg, double now)
{
    if (q->n >= SY_SINK_MAX_REQS || !(A.s.mask & (1u << t)) || sy_buf_failed(msg))
        return;
    unsigned held;
    if (!dedup_pass(t, key, ttl_of(t), now, &held))
        return;
    render(q->body[q->n], t, NULL, msg->p ? msg->p : "", held, now);
    if (!sy_buf_failed(q->body[q->n]))
        q->n++;
}

static void llm_exception(struct outq *q, const struct sy_logrec *r, double now)
{
    if (!(A.s.mask & (1u << SY_ALERT_LLM_EXCEPTIONS)) || !(r->flags & SY_LOGREC_FAILURE))
        return;
    const struct sy_logattempt *a = failed_attempt(r);
    if (!a)
        return;
    struct sy_buf m;
    sy_buf_init(&m, SY_SLACK_TEXT_MAX);
    const char *cls = r->error_class ? r->error_class : a->error;
    const char *em = r->error_message ? r->error_message : "";
    size_t n = strlen(em);
    SY_BUF_LIT(&m, "LLM API call failed: `");
    sy_buf_printf(&m, "litellm.%s: ", cls ? cls : "APIError");
    for (size_t i = 0; i < n && i < SY_SLACK_ERROR_MAX; i++)
        sy_buf_append(&m, em[i] == '`' ? "'" : em + i, 1);
    if (n > SY_SLACK_ERROR_MAX)
        SY_BUF_LIT(&m, "...");
    SY_BUF_LIT(&m, "`");
    field(&m, "Request Model", r->model, 256);
    field(&m, "Model Group", r->model_group, 256);
    field(&m, "Deployment", a->model_id, 256);
    field(&m, "Upstream Model", a->model, 256);
    field(&m, "API Base", a->api_base, 512);
    char st[16];
    snprintf(st, sizeof st, "%d", r->http_status);
    field(&m, "Status", st, 16);
    who(&m, r);
    char key[600];
    snprintf(key, sizeof key, "%.256s|%.64s|%d|%.256s", r->model_group ? r->model_group : "", cls ? cls : "",
             r->http_status, a->model_id ? a->model_id : "");
    emit(q, SY_ALERT_LLM_EXCEPTIONS, key, &m, now);
    sy_buf_free(&m);
}

static void too_slow(struct outq *q, const struct sy_logrec *r, double now)
{
    if (!(A.s.mask & (1u << SY_ALERT_LLM_TOO_SLOW)) || (r->flags & (SY_LOGREC_FAILURE | SY_LOGREC_CACHE_HIT)))
        return;
    double t0 = r->api_start_s > 0 ? r->api_start_s : r->start_s;
    double took = r->end_s - t0;
    if (!(took > A.s.threshold_s))
        return;
    struct sy_buf m;
    sy_buf_init(&m, SY_SLACK_TEXT_MAX);
    sy_buf_printf(&m, "`Responses are slow - %.2fs response time > Alerting threshold: %gs`", took, A.s.threshold_s);
    field(&m, "Request Model", r->model, 256);
    field(&m, "Model Group", r->model_group, 256);
    field(&m, "Deployment", r->model_id, 256);
    field(&m, "API Base", r->api_base, 512);
    if (r->completion_start_s > t0 && r->completion_start_s < r->end_s && (r->flags & SY_LOGREC_STREAM)) {
        char ft[32];
        snprintf(ft, sizeof ft, "%.2fs", r->completion_start_s - t0);
        field(&m, "Time To First Token", ft, 32);
    }
    who(&m, r);
    char key[600];
    snprintf(key, sizeof key, "%.256s|%.256s", r->model_group ? r->model_group : "", r->model_id ? r->model_id : "");
    emit(q, SY_ALERT_LLM_TOO_SLOW, key, &m, now);
    sy_buf_free(&m);
}

/* LiteLLM's outage_alerts: 408, 5xx (and here: no answer at all) from one
 * deployment counted in a window of outage_alert_ttl from the first; the
 * minor alert at minor_outage_alert_threshold, the major one at
 * major_outage_alert_threshold, each once per window. */
static void outage(struct outq *q, const struct sy_logrec *r, double now)
{
    if (!(A.s.mask & (1u << SY_ALERT_OUTAGE_ALERTS)))
        return;
    for (size_t i = 0; i < r->nattempts; i++) {
        const struct sy_logattempt *a = &r->attempts[i];
        if (!a->error || !a->model_id || !(a->status == 0 || a->status == 408 || a->status >= 500))
            continue;
        uint64_t h = fnv(SY_ALERT_OUTAGE_ALERTS, a->model_id);
        struct oslot *o = NULL, *free_slot = NULL, *oldest = NULL;
        for (size_t k = 0; k < SY_SLACK_OUTAGE_SLOTS; k++) {
            struct oslot *x = &A.o[k];
            if (x->used && x->h == h) {
                o = x;
                break;
            }
            if (!x->used || now - x->first > A.s.outage_ttl_s) {
                if (!free_slot)
                    free_slot = x;
            } else if (!oldest || x->first < oldest->first)
                oldest = x;
        }
        if (o && now - o->first > A.s.outage_ttl_s) {
            memset(o, 0, sizeof *o); /* the window ended: count afresh */
        } else if (!o) {
            o = free_slot ? free_slot : oldest;
            memset(o, 0, sizeof *o);
        }
        if (!o->used) {
            o->used = 1;
            o->h = h;
            o->first = now;
        }
        o->n++;
        if (a->status == 408 || a->status == 0)
            o->timeout++;
        else
            o->api++;
        const char *kind = NULL;
        if (!o->minor_sent && o->n >= A.s.minor_outage) {
            o->minor_sent = 1;
            kind = "Minor";
        } else if (!o->major_sent && o->n >= A.s.major_outage) {
            o->major_sent = 1;
            kind = "Major";
        }
        if (!kind || q->n >= SY_SINK_MAX_REQS || !(A.s.mask & (1u << SY_ALERT_OUTAGE_ALERTS)))
            continue;
        struct sy_buf m;
        sy_buf_init(&m, SY_SLACK_TEXT_MAX);
        sy_buf_printf(&m, "\n\n*⚠️ %s Service Outage*\n", kind);
        field(&m, "*Model Name:*", a->model, 256);
        field(&m, "*Provider:*", a->provider, 64);
        field(&m, "*API Base:*", a->api_base, 512);
        field(&m, "*Deployment:*", a->model_id, 256);
        SY_BUF_LIT(&m, "\n\n*Errors:*\n");
        if (o->timeout)
            sy_buf_printf(&m, "\nTimeout Errors: %u\n", o->timeout);
        if (o->api)
            sy_buf_printf(&m, "\nAPI Errors: %u\n", o->api);
        sy_buf_printf(&m, "\n*Window:* `%gs`\n", A.s.outage_ttl_s);
        if (!sy_buf_failed(&m)) {
            /* LiteLLM: the minor outage is Medium, the major one High */
            render(q->body[q->n], SY_ALERT_OUTAGE_ALERTS, kind[1] == 'a' ? "High" : "Medium", m.p, 0, now);
            if (!sy_buf_failed(q->body[q->n]))
                q->n++;
        }
        sy_buf_free(&m);
    }
}

/* ---- the sink -------------------------------------------------------------------- */

struct slack {
    char *url;
    uint64_t gen; /* of the settings it installed */
    pthread_t health;
    int health_on;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    double every;
};

static void *health_main(void *arg)
{
    struct slack *s = arg;
    pthread_mutex_lock(&s->mu);
    while (!s->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        double t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + s->every;
        ts.tv_sec = (time_t)t;
        ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
        if (s->stop)
            break;
        pthread_mutex_unlock(&s->mu);
        if (sy_db_enabled() && !sy_db_up())
            sy_alert(SY_ALERT_DB_EXCEPTIONS, "db",
                     "DB read/write call failed: the %s database is unreachable (requests that need keys, budgets "
                     "or spend may fail)",
                     sy_db_kind() == SY_STORE_POSTGRES ? "PostgreSQL" : "SQLite");
        if (sy_redis_global_state() == SY_REDIS_DISCONNECTED)
            sy_alert(SY_ALERT_DB_EXCEPTIONS, "redis",
                     "Redis read/write call failed: Redis is unreachable (router_settings Redis: shared cooldowns, "
                     "usage and rate limits fall back to this instance)");
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void *slack_open(const struct sy_logconf *lc, const char *vars, char *err, size_t errlen)
{
    (void)vars;
    const char *url = getenv("SLACK_WEBHOOK_URL");
    if (!url || !*url) {
        snprintf(err, errlen,
                 "general_settings.alerting has \"slack\" but SLACK_WEBHOOK_URL is not set: Slack alerts off");
        return NULL;
    }
    if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
        snprintf(err, errlen, "SLACK_WEBHOOK_URL is not an http(s) URL: Slack alerts off");
        return NULL;
    }
    struct sy_slack_settings st;
    char quiet[512];
    if (sy_slack_parse(lc, &st, quiet, sizeof quiet, err, errlen) != 0)
        return NULL;
    if (quiet[0])
        sy_warn("alerting: alert types not raised by switchyard, ignored: %s", quiet);
    struct slack *s = calloc(1, sizeof *s);
    if (!s || !(s->url = strdup(url))) {
        free(s);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->gen = install(&st, 0);
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    s->every = st.health_check_s;
    if (st.mask & (1u << SY_ALERT_DB_EXCEPTIONS))
        s->health_on = pthread_create(&s->health, NULL, health_main, s) == 0;
    return s;
}

static void slack_close(void *inst)
{
    struct slack *s = inst;
    if (!s)
        return;
    if (s->health_on) {
        pthread_mutex_lock(&s->mu);
        s->stop = 1;
        pthread_cond_signal(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->health, NULL);
    }
    install(NULL, s->gen);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s->url);
    free(s);
}

static int post(struct slack *s, struct sy_sink_req *r, const char *body, size_t n)
{
    memset(r, 0, sizeof *r);
    r->method = "POST";
    r->url = strdup(s->url);
    sy_buf_init(&r->headers, 4096);
    sy_buf_init(&r->body, n + 1);
    SY_BUF_LIT(&r->headers, "Content-Type: application/json\r\n");
    sy_buf_append(&r->body, body, n);
    if (!r->url || sy_buf_failed(&r->body) || sy_buf_failed(&r->headers)) {
        sy_sink_req_free(r);
        return -1;
    }
    return 0;
}

static int slack_encode(void *inst, struct sy_logrec *const *recs, size_t n, struct sy_sink_req *out, size_t *nout)
{
    struct slack *s = inst;
    *nout = 0;
    struct sy_buf bodies[SY_SINK_MAX_REQS];
    struct outq q = {.n = 0};
    for (size_t i = 0; i < SY_SINK_MAX_REQS; i++) {
        sy_buf_init(&bodies[i], 4 * SY_SLACK_TEXT_MAX + 2048);
        q.body[i] = &bodies[i];
    }
    double now = wall();
    int log_console = 0;
    pthread_mutex_lock(&A.mu);
    log_console = A.s.log_to_console;
    for (size_t i = 0; i < n && q.n < SY_SINK_MAX_REQS; i++) {
        const struct sy_logrec *r = recs[i];
        if (r->flags & SY_LOGREC_RAW) {
            if (r->payload && r->payload_len) {
                sy_buf_reset(q.body[q.n]);
                sy_buf_append(q.body[q.n], r->payload, r->payload_len);
                if (!sy_buf_failed(q.body[q.n]))
                    q.n++;
            }
            continue;
        }
        if (!A.s.mask)
            continue;
        llm_exception(&q, r, now);
        too_slow(&q, r, now);
        if (r->flags & SY_LOGREC_FAILURE)
            outage(&q, r, now);
    }
    pthread_mutex_unlock(&A.mu);
    int rc = 0;
    for (size_t i = 0; i < q.n; i++) {
        if (log_console)
            sy_warn("alerting: %.*s", (int)bodies[i].len, bodies[i].p);
        if (post(s, &out[*nout], bodies[i].p, bodies[i].len) == 0)
            (*nout)++;
        else
            rc = -1;
    }
    for (size_t i = 0; i < SY_SINK_MAX_REQS; i++)
        sy_buf_free(&bodies[i]);
    return *nout == 0 && rc < 0 ? -1 : 0;
}

/* Slack answers 200 "ok"; 4xx (a revoked webhook: 403/404 "no_service",
 * 400 "invalid_payload") will not get better: dropped; 429 / 5xx retried. */
static int slack_verdict(void *inst, int status, const char *body, size_t n)
{
    (void)inst;
    (void)body;
    (void)n;
    if (status >= 200 && status < 300)
        return SY_SINK_SENT;
    if (status == 0 || status == 408 || status == 429 || status >= 500)
        return SY_SINK_RETRY;
    return SY_SINK_DROP;
}

const struct sy_sink_ops sy_sink_slack = {
    .name = "slack",
    .max_batch = 4, /* a record raises at most two alerts: at most SY_SINK_MAX_REQS requests a batch */
    .open = slack_open,
    .close = slack_close,
    .encode = slack_encode,
    .verdict = slack_verdict,
};
