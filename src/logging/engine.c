/* engine.c - the logging thread: an inbox fed by every worker, one queue per
 * sink instance, batches sent through the thread's own upstream pool.
 *
 *   worker (any thread)                      logging thread (own uv loop + sy_upool)
 *   sy_log_submit(rec)                       every TICK (or woken by the inbox, a
 *     one malloc: struct + strings            reload or stop):
 *     mutex; append; unlock  ──▶ inbox ──▶    drain the inbox; per record:
 *     (uv_async_send only when the             request log line (reqlog.c)
 *      inbox reaches INBOX_WAKE)               ref it into each instance's queue
 *     inbox_max reached: dropped, counted      (the config's by success/failure, a
 *                                              tenant's from rec->route_json)
 *                                            pump each instance: a batch leaves
 *                                              when max_batch records wait or the
 *                                              oldest is batch_interval_s old
 *
 * Per instance (one sink opened with one set of settings):
 *   - a ring of record pointers, grown on demand up to queue_max and
 *     INST_BYTES of records; overflow drops the oldest (counted: dropped,
 *     failures); all records alive are capped at HELD_MAX bytes at submission;
 *   - one batch in flight at a time (keeps order, bounds memory, and a sink
 *     that hangs holds only its own queue): encode() -> up to 8 requests, sent
 *     one after the other; each answer's verdict (the sink's, or 2xx sent,
 *     408/429/5xx/no answer retry, else drop);
 *   - retry: the same request again after min(60 s, 2^(k-1) s) x U[0.5, 1)
 *     (exponential back-off with jitter). An answered failure (5xx...) is
 *     retried max_retries times; a sink that does not answer (refused, DNS,
 *     timeout) is retried for DOWN_HOLD_S, so an outage shorter than that
 *     loses nothing but what overflows the queue;
 *   - a drop or a failing sink is logged at most once per LOG_EVERY_S, with
 *     the count since the last line.
 *
 * Records are reference counted: the inbox holds one reference, each queue
 * one; the last release frees the block (and the payload built on demand).
 *
 * Reload (sy_log_configure) hands the thread a new conf: instances whose
 * name, settings and conf fingerprint are unchanged keep their queues; the
 * others are retired (they take nothing new, deliver what they hold, then
 * close). Tenant instances (key/team callback settings, opened on demand)
 * are keyed by callback name + callback_vars text, at most
 * SY_LOG_MAX_INSTANCES in all: past that the least recently used idle one is
 * closed, or the record is refused for it (counted).
 *
 * Stop (sy_log_stop): the inbox is closed, every queue is flushed without
 * waiting for batch age, for up to timeout_s; what is left is counted as
 * dropped and logged once, the pool and the loop are closed, the thread
 * joined.
 *
 * Statistics are atomics read by /metrics and /health/readiness from any
 * thread; the instance list they walk changes only under stats_mu.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <uv.h>

#include "config/config.h"
#include "core/buf.h"
#include "core/clock.h"
#include "core/log.h"
#include "logging/logging.h"
#include "logging/reqlog.h"
#include "logging/routes.h"
#include "providers/jdom.h"
#include "upstream/client.h"

#define INBOX_WAKE    256   /* records in the inbox that wake the thread at once */
#define TICK_MS       100   /* the thread's timer (shorter when batch_interval is) */
#define FLUSH_TICK_MS 20    /* while stopping */
#define BACKOFF_BASE  1.0   /* seconds */
#define BACKOFF_CAP   60.0  /* seconds */
#define DOWN_HOLD_S   300.0 /* a sink that does not answer is retried this long */
#define LOG_EVERY_S   60.0  /* one line per instance per this, at most */
#define RESP_CAP      4096  /* bytes of a sink's answer kept for verdict() */
#define RING_MIN      64
#define MAX_ROUTES    16                  /* tenant callbacks per record */
#define HELD_MAX      ((size_t)512 << 20) /* bytes of records alive, all sinks */
#define INST_BYTES    ((size_t)64 << 20)  /* bytes of records one instance holds */

/* ---- records ----------------------------------------------------------------- */

struct blk {
    struct blk *next;   /* inbox link */
    const char *target; /* SY_LOGREC_RAW: the sink it is for */
    size_t size;        /* bytes of this block (memory accounting) */
    struct sy_logrec rec;
};

/* Bytes of every record alive (inbox and queues); a submission past
 * HELD_MAX is refused, so a dead sink cannot take the process's memory. */
static _Atomic size_t held_bytes;

static struct blk *blk_of(struct sy_logrec *r)
{
    return (struct blk *)((char *)r - offsetof(struct blk, rec));
}

static void rec_unref(struct sy_logrec *r)
{
    if (atomic_fetch_sub(&r->refs, 1) != 1)
        return;
    if (!(r->flags & SY_LOGREC_RAW))
        free(r->payload); /* built on demand by sy_log_payload */
    atomic_fetch_sub_explicit(&held_bytes, blk_of(r)->size, memory_order_relaxed);
    free(blk_of(r));
}

/* The record's text fields, copied by sy_log_submit. */
#define F(x) offsetof(struct sy_logrec, x)
static const size_t str_fields[] = {
    F(id),
    F(call_id),
    F(trace_id),
    F(generation_name),
    F(traceparent),
    F(call_type),
    F(route),
    F(model),
    F(model_group),
    F(model_id),
    F(upstream_model),
    F(provider),
    F(api_base),
    F(hashed_key),
    F(key_alias),
    F(user_id),
    F(user_email),
    F(team_id),
    F(team_alias),
    F(org_id),
    F(end_user),
    F(requester_ip),
    F(user_agent),
    F(key_metadata),
    F(team_metadata),
    F(request_metadata),
    F(tags),
    F(cache_key),
    F(error_class),
    F(error_message),
    F(route_json),
    F(guard_info),
};
#undef F
#define NSTR (sizeof str_fields / sizeof str_fields[0])

static const char **field(struct sy_logrec *r, size_t i)
{
    return (const char **)(void *)((char *)r + str_fields[i]);
}

static size_t slen(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

/* Copy s (n bytes, NUL added) at *pp; returns the copy. */
static const char *put(char **pp, const char *s, size_t n)
{
    char *d = *pp;
    memcpy(d, s, n);
    d[n] = 0;
    *pp = d + n + 1;
    return d;
}

/* One block: the struct, the attempts, every string. NULL when out of memory. */
static struct blk *rec_copy(const struct sy_logrec *src, const char *target, const char *raw, size_t rawn)
{
    size_t need = sizeof(struct blk) + src->nattempts * sizeof(struct sy_logattempt);
    for (size_t i = 0; i < NSTR; i++)
        need += slen(*field((struct sy_logrec *)src, i));
    if (src->request)
        need += src->request_len + 1;
    if (src->response)
        need += src->response_len + 1;
    for (size_t i = 0; i < src->nattempts; i++) {
        const struct sy_logattempt *a = &src->attempts[i];
        need += slen(a->model_id) + slen(a->model) + slen(a->provider) + slen(a->api_base) + slen(a->error);
    }
    need += slen(target) + (raw ? rawn + 1 : 0);
    struct blk *b = malloc(need);
    if (!b)
        return NULL;
    b->next = NULL;
    b->size = need;
    memcpy(&b->rec, src, sizeof *src);
    struct sy_logrec *r = &b->rec;
    char *p = (char *)(b + 1);
    struct sy_logattempt *at = (struct sy_logattempt *)(void *)p;
    p += src->nattempts * sizeof *at;
    for (size_t i = 0; i < src->nattempts; i++) {
        const struct sy_logattempt *a = &src->attempts[i];
        at[i] = *a;
        at[i].model_id = a->model_id ? put(&p, a->model_id, strlen(a->model_id)) : NULL;
        at[i].model = a->model ? put(&p, a->model, strlen(a->model)) : NULL;
        at[i].provider = a->provider ? put(&p, a->provider, strlen(a->provider)) : NULL;
        at[i].api_base = a->api_base ? put(&p, a->api_base, strlen(a->api_base)) : NULL;
        at[i].error = a->error ? put(&p, a->error, strlen(a->error)) : NULL;
    }
    r->attempts = src->nattempts ? at : NULL;
    for (size_t i = 0; i < NSTR; i++) {
        const char **f = field(r, i);
        if (*f)
            *f = put(&p, *f, strlen(*f));
    }
    if (src->request)
        r->request = put(&p, src->request, src->request_len);
    if (src->response)
        r->response = put(&p, src->response, src->response_len);
    b->target = target ? put(&p, target, strlen(target)) : NULL;
    r->payload = NULL;
    r->payload_len = 0;
    if (raw) {
        r->payload = (char *)put(&p, raw, rawn);
        r->payload_len = rawn;
    }
    atomic_init(&r->refs, 1);
    return b;
}

/* ---- configuration -------------------------------------------------------------- */

/* What the thread runs with: the logconf and the strings it points to. Owned
 * by the logging thread once handed over; instances hold a reference to the
 * conf they were opened with (a sink may keep lc). */
struct conf {
    struct sy_logconf lc;
    int refs;
    char *fp; /* fingerprint of the settings a sink's open() may read */
    char **names;
    size_t nnames;
};

static char *dup0(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void conf_free(struct conf *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nnames; i++)
        free(c->names[i]);
    free(c->names);
    free((void *)c->lc.success);
    free((void *)c->lc.failure);
    free((char *)c->lc.s3_params);
    free((char *)c->lc.callback_settings);
    free((char *)c->lc.alert_types);
    free((char *)c->lc.alerting_args);
    free(c->fp);
    free(c);
}

static void conf_unref(struct conf *c)
{
    if (c && --c->refs == 0)
        conf_free(c);
}

static const char **names_copy(struct conf *c, const char **src, size_t n)
{
    const char **out = calloc(n ? n : 1, sizeof *out);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        char *s = strdup(src[i]);
        char **nn = realloc(c->names, (c->nnames + 1) * sizeof *nn);
        if (!s || !nn) {
            free(s);
            if (nn)
                c->names = nn;
            free(out);
            return NULL;
        }
        c->names = nn;
        c->names[c->nnames++] = s;
        out[i] = s;
    }
    return out;
}

static struct conf *conf_new(const struct sy_config *cfg)
{
    struct conf *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->refs = 1;
    struct sy_logconf *lc = &c->lc;
    lc->success = names_copy(c, cfg->success_callbacks, cfg->n_success_callbacks);
    lc->nsuccess = cfg->n_success_callbacks;
    lc->failure = names_copy(c, cfg->failure_callbacks, cfg->n_failure_callbacks);
    lc->nfailure = cfg->n_failure_callbacks;
    lc->turn_off_message_logging = cfg->turn_off_message_logging;
    lc->redact_user_api_key_info = cfg->redact_user_api_key_info;
    lc->request_log = cfg->detailed_debug || sy_log_level == SY_LOG_DEBUG;
    lc->json_logs = cfg->json_logs;
    lc->batch_interval_s = cfg->callback_batch_interval_s > 0 ? cfg->callback_batch_interval_s : 5;
    lc->queue_max = cfg->callback_queue_max ? cfg->callback_queue_max : 10000;
    lc->inbox_max = 100000;
    lc->max_retries = 5;
    lc->timeout_s = 10;
    lc->s3_params = dup0(cfg->s3_callback_params);
    lc->callback_settings = dup0(cfg->callback_settings);
    lc->alerting_slack = cfg->alerting_slack;
    lc->alerting_threshold_s = cfg->alerting_threshold_s > 0 ? cfg->alerting_threshold_s : 300;
    lc->alert_types = dup0(cfg->alert_types);
    lc->alerting_args = dup0(cfg->alerting_args);
    struct sy_buf fp;
    sy_buf_init(&fp, 64u << 20);
    sy_buf_printf(&fp, "%d %d %d %g\n%s\n%s\n%s\n%s\n%g", lc->turn_off_message_logging, lc->redact_user_api_key_info,
                  lc->alerting_slack, lc->timeout_s, lc->s3_params ? lc->s3_params : "",
                  lc->callback_settings ? lc->callback_settings : "", lc->alert_types ? lc->alert_types : "",
                  lc->alerting_args ? lc->alerting_args : "", lc->alerting_threshold_s);
    c->fp = sy_buf_failed(&fp) ? NULL : fp.p;
    if (!c->fp)
        sy_buf_free(&fp);
    if (!lc->success || !lc->failure || !c->fp || (cfg->s3_callback_params && !lc->s3_params) ||
        (cfg->callback_settings && !lc->callback_settings) || (cfg->alert_types && !lc->alert_types) ||
        (cfg->alerting_args && !lc->alerting_args)) {
        conf_free(c);
        return NULL;
    }
    return c;
}

int sy_log_enabled(const struct sy_config *cfg)
{
    return cfg->n_success_callbacks || cfg->n_failure_callbacks || cfg->detailed_debug || cfg->json_logs ||
           cfg->alerting_slack || sy_log_level == SY_LOG_DEBUG;
}

/* ---- instances -------------------------------------------------------------------- */

/* One batch on its way: its records, the requests encode() made of them,
 * the one in flight, its retry state. */
struct flight {
    struct inst *in;
    struct sy_logrec **batch;
    size_t nbatch;
    struct sy_sink_req reqs[SY_SINK_MAX_REQS];
    size_t nreqs, ireq;
    int batch_bad;
    struct sy_ureq *ur;
    uv_buf_t ubody;
    int ustatus;
    struct sy_buf resp;
    unsigned tries;
    double fail_since, retry_at;
};

struct inst {
    struct inst *next;
    char name[48]; /* metrics label */
    char *key;     /* identity: name, vars, conf fingerprint */
    const struct sy_sink_ops *ops;
    void *h;
    struct conf *conf;
    unsigned on_success : 1, on_failure : 1, tenant : 1, retired : 1, keep : 1;
    size_t max_batch;
    /* the queue: a ring of records and the time each arrived */
    struct sy_logrec **q;
    double *qt;
    size_t qsize, qmax, qhead, qlen;
    size_t qbytes; /* bytes of the queued records (shared ones counted in each queue) */
    /* the batches in flight: ops->max_inflight of them (1 by default) */
    struct flight *fl;
    unsigned nfl;
    double last_used;
    /* the throttled log line */
    double last_log;
    uint64_t drops_unlogged;
    /* statistics (read from any thread) */
    _Atomic uint64_t queued, sent, retried, dropped, failures;
    _Atomic size_t depth;
};

/* Thread state. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; /* inbox, pending conf, stop */
static pthread_mutex_t stats_mu = PTHREAD_MUTEX_INITIALIZER;
static struct blk *in_head, **in_tail = &in_head;
static size_t in_len, in_max = 100000;
static int accepting;        /* under mu */
static int stop_req;         /* under mu */
static double stop_deadline; /* under mu: monotonic seconds */
static struct conf *pending; /* under mu */
static uint64_t next_seq;    /* under mu */
static _Atomic uint64_t inbox_dropped, raw_dropped;
static uint64_t inbox_drops_logged; /* under mu */
static double inbox_last_log;       /* under mu */
static char **running_names;        /* under mu: sinks sy_log_submit_to may target */
static size_t nrunning;

static pthread_t thread;
static atomic_int started; /* read by sy_log_submit on any thread */
static uv_loop_t loop;
static uv_async_t wake;
static uv_timer_t tick;
static struct sy_upool *pool;
static struct conf *cur;
static struct inst *insts; /* written by the thread under stats_mu */
static size_t ninsts;
static int flushing;
static double flush_deadline;
static unsigned tick_ms;
static int done; /* the thread has shut down */

static double now_s(void)
{
    return (double)sy_now_ns() / 1e9;
}

/* Records taken from the queue and not yet sent or dropped. */
static size_t inst_flying(const struct inst *in)
{
    size_t n = 0;
    for (unsigned k = 0; k < in->nfl; k++)
        n += in->fl[k].nbatch;
    return n;
}

/* Nothing queued, nothing in flight. */
static int inst_idle(const struct inst *in)
{
    if (in->qlen)
        return 0;
    for (unsigned k = 0; k < in->nfl; k++)
        if (in->fl[k].nbatch || in->fl[k].ur)
            return 0;
    return 1;
}

static void inst_depth(struct inst *in)
{
    atomic_store_explicit(&in->depth, in->qlen + inst_flying(in), memory_order_relaxed);
}

/* Count n records dropped by in; log at most once per LOG_EVERY_S. */
static void note_drop(struct inst *in, uint64_t n, const char *why)
{
    atomic_fetch_add_explicit(&in->dropped, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&in->failures, n, memory_order_relaxed);
    in->drops_unlogged += n;
    double t = now_s();
    if (in->last_log == 0 || t - in->last_log >= LOG_EVERY_S || flushing) {
        sy_warn("logging: callback '%s': %llu record(s) dropped (%s)", in->name, (unsigned long long)in->drops_unlogged,
                why);
        in->drops_unlogged = 0;
        in->last_log = t;
    }
}

static void note_failing(struct inst *in, int status, int err)
{
    double t = now_s();
    if (in->last_log != 0 && t - in->last_log < LOG_EVERY_S)
        return;
    in->last_log = t;
    if (status)
        sy_warn("logging: callback '%s': the sink answered %d, retrying", in->name, status);
    else
        sy_warn("logging: callback '%s': no answer from the sink (error %d), retrying", in->name, err);
}

static void inst_free(struct inst *in)
{
    for (size_t i = 0; i < in->qlen; i++)
        rec_unref(in->q[(in->qhead + i) % in->qsize]);
    for (unsigned k = 0; k < in->nfl; k++) {
        struct flight *fl = &in->fl[k];
        for (size_t i = 0; i < fl->nbatch; i++)
            rec_unref(fl->batch[i]);
        for (size_t i = 0; i < fl->nreqs; i++)
            sy_sink_req_free(&fl->reqs[i]);
        sy_buf_free(&fl->resp);
        free(fl->batch);
    }
    if (in->ops->close && in->h)
        in->ops->close(in->h);
    conf_unref(in->conf);
    free(in->q);
    free(in->qt);
    free(in->fl);
    free(in->key);
    free(in);
}

static void inst_link(struct inst *in)
{
    pthread_mutex_lock(&stats_mu);
    in->next = insts;
    insts = in;
    ninsts++;
    pthread_mutex_unlock(&stats_mu);
}

static void inst_unlink(struct inst *in)
{
    pthread_mutex_lock(&stats_mu);
    for (struct inst **pp = &insts; *pp; pp = &(*pp)->next)
        if (*pp == in) {
            *pp = in->next;
            ninsts--;
            break;
        }
    pthread_mutex_unlock(&stats_mu);
}

/* Open ops with vars under conf c. NULL (warned) when the sink cannot run. */
static struct inst *inst_open(const struct sy_sink_ops *ops, const char *name, const char *key, const char *vars,
                              struct conf *c)
{
    char err[256] = "";
    void *h = ops->open ? ops->open(&c->lc, vars, err, sizeof err) : NULL;
    if (!h) {
        char shown[48];
        snprintf(shown, sizeof shown, "%s", name);
        for (char *p = shown; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = '?';
        sy_warn("logging: callback '%s' is off: %s", shown, err[0] ? err : "cannot open");
        return NULL;
    }
    struct inst *in = calloc(1, sizeof *in);
    size_t mb = ops->max_batch ? ops->max_batch : 1;
    if (ops->inst_max_batch) {
        size_t m = ops->inst_max_batch(h);
        if (m >= 1 && m < mb)
            mb = m;
    }
    unsigned nfl = ops->max_inflight ? ops->max_inflight : 1;
    int ok = in != NULL;
    if (in) {
        in->key = strdup(key);
        in->fl = calloc(nfl, sizeof *in->fl);
        ok = in->key && in->fl;
        for (unsigned k = 0; ok && k < nfl; k++) {
            in->fl[k].in = in;
            ok = (in->fl[k].batch = calloc(mb, sizeof *in->fl[k].batch)) != NULL;
            sy_buf_init(&in->fl[k].resp, RESP_CAP);
        }
        in->nfl = nfl;
    }
    if (!ok) {
        if (in) {
            for (unsigned k = 0; in->fl && k < in->nfl; k++)
                free(in->fl[k].batch);
            free(in->fl);
            free(in->key);
        }
        free(in);
        if (ops->close)
            ops->close(h);
        sy_warn("logging: callback '%s' is off: out of memory", name);
        return NULL;
    }
    snprintf(in->name, sizeof in->name, "%s", name);
    for (char *p = in->name; *p; p++) /* a label and a log word: no control characters */
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    in->ops = ops;
    in->h = h;
    in->conf = c;
    c->refs++;
    in->max_batch = mb;
    in->qmax = c->lc.queue_max ? c->lc.queue_max : 10000;
    in->last_used = now_s();
    return in;
}

/* Add r to in's queue (a reference); the oldest is dropped when full. */
static void enqueue(struct inst *in, struct sy_logrec *r, double t)
{
    if (in->qlen == in->qsize && in->qsize < in->qmax) {
        size_t ns = in->qsize ? in->qsize * 2 : RING_MIN;
        if (ns > in->qmax)
            ns = in->qmax;
        struct sy_logrec **q = malloc(ns * sizeof *q);
        double *qt = malloc(ns * sizeof *qt);
        if (q && qt) {
            for (size_t i = 0; i < in->qlen; i++) {
                q[i] = in->q[(in->qhead + i) % in->qsize];
                qt[i] = in->qt[(in->qhead + i) % in->qsize];
            }
            free(in->q);
            free(in->qt);
            in->q = q;
            in->qt = qt;
            in->qsize = ns;
            in->qhead = 0;
        } else {
            free(q);
            free(qt);
        }
    }
    if (in->qsize == 0) {
        note_drop(in, 1, "out of memory");
        return;
    }
    size_t sz = blk_of(r)->size;
    while (in->qlen && (in->qlen == in->qsize || in->qbytes + sz > INST_BYTES)) { /* full: the oldest go */
        struct sy_logrec *o = in->q[in->qhead];
        in->qhead = (in->qhead + 1) % in->qsize;
        in->qlen--;
        in->qbytes -= blk_of(o)->size;
        rec_unref(o);
        note_drop(in, 1, "queue full");
    }
    in->qbytes += sz;
    atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
    size_t at = (in->qhead + in->qlen) % in->qsize;
    in->q[at] = r;
    in->qt[at] = t;
    in->qlen++;
    in->last_used = t;
    atomic_fetch_add_explicit(&in->queued, 1, memory_order_relaxed);
    inst_depth(in);
}

/* ---- sending ------------------------------------------------------------------------ */

static void pump(struct inst *in, double t);
static int send_from(struct flight *fl);

static double backoff(unsigned k)
{
    double d = BACKOFF_BASE;
    for (unsigned i = 1; i < k && d < BACKOFF_CAP; i++)
        d *= 2;
    if (d > BACKOFF_CAP)
        d = BACKOFF_CAP;
    uint32_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = (uint32_t)sy_now_ns();
    return d * (0.5 + 0.5 * (r / 4294967296.0));
}

static void batch_finish(struct flight *fl)
{
    struct inst *in = fl->in;
    if (fl->batch_bad)
        note_drop(in, fl->nbatch, "the sink refused the batch");
    else
        atomic_fetch_add_explicit(&in->sent, fl->nbatch, memory_order_relaxed);
    for (size_t i = 0; i < fl->nbatch; i++)
        rec_unref(fl->batch[i]);
    for (size_t i = 0; i < fl->nreqs; i++)
        sy_sink_req_free(&fl->reqs[i]);
    fl->nbatch = fl->nreqs = fl->ireq = 0;
    fl->batch_bad = 0;
    fl->tries = 0;
    fl->retry_at = 0;
    inst_depth(in);
}

/* The current request's outcome. */
static void req_done(struct flight *fl, int v, int status, int err)
{
    struct inst *in = fl->in;
    double t = now_s();
    if (v == SY_SINK_RETRY) {
        if (!fl->tries)
            fl->fail_since = t;
        fl->tries++;
        int give_up = status ? fl->tries > in->conf->lc.max_retries : t - fl->fail_since >= DOWN_HOLD_S;
        if (flushing && t >= flush_deadline)
            give_up = 1;
        if (!give_up) {
            atomic_fetch_add_explicit(&in->retried, 1, memory_order_relaxed);
            note_failing(in, status, err);
            double d = backoff(fl->tries);
            if (flushing && d > 0.5)
                d = 0.5;
            fl->retry_at = t + d;
            return; /* the tick sends it again */
        }
        v = SY_SINK_DROP;
    }
    if (v != SY_SINK_SENT)
        fl->batch_bad = 1;
    fl->tries = 0;
    fl->retry_at = 0;
    fl->ireq++;
    if (send_from(fl))
        pump(in, t);
}

static int on_head(void *ud, int status, const struct sy_uheader *h, size_t nh)
{
    (void)h;
    (void)nh;
    ((struct flight *)ud)->ustatus = status;
    return 0;
}

static int on_body(void *ud, const char *p, size_t n)
{
    struct flight *fl = ud;
    size_t room = RESP_CAP - fl->resp.len;
    if (room)
        sy_buf_append(&fl->resp, p, n < room ? n : room);
    return 0;
}

static int default_verdict(int status)
{
    if (status >= 200 && status < 300)
        return SY_SINK_SENT;
    if (status == 0 || status == 408 || status == 429 || status >= 500)
        return SY_SINK_RETRY;
    return SY_SINK_DROP;
}

static void on_done(void *ud, int err)
{
    struct flight *fl = ud;
    struct inst *in = fl->in;
    fl->ur = NULL;
    int status = err ? 0 : fl->ustatus;
    int v = in->ops->verdict ? in->ops->verdict(in->h, status, fl->resp.p ? fl->resp.p : "", fl->resp.len)
                             : default_verdict(status);
    if (v != SY_SINK_SENT && v != SY_SINK_RETRY)
        v = SY_SINK_DROP;
    if (v == SY_SINK_DROP && (status || err))
        sy_debug("logging: callback '%s': answer %d (error %d), dropped", in->name, status, err);
    req_done(fl, v, status, err);
}

static const struct sy_ureq_cbs ucbs = {.on_head = on_head, .on_body = on_body, .on_done = on_done};

/* Hand request ireq to the pool. 0 when it is in flight, -1 when it could
 * not start (a URL the client refuses): counted as refused. */
static int start_one(struct flight *fl)
{
    struct inst *in = fl->in;
    struct sy_sink_req *rq = &fl->reqs[fl->ireq];
    double to = in->conf->lc.timeout_s > 0 ? in->conf->lc.timeout_s : 10;
    fl->ubody = uv_buf_init(rq->body.p ? rq->body.p : (char *)"", (unsigned)rq->body.len);
    struct sy_ureq_opts o = {
        .url = rq->url,
        .method = rq->method ? rq->method : "POST",
        .headers = rq->headers.p,
        .headers_len = rq->headers.len,
        .body = &fl->ubody,
        .nbody = 1,
        .connect_timeout_s = to,
        .first_byte_timeout_s = to,
        .idle_timeout_s = to,
        .total_timeout_s = to,
    };
    sy_buf_reset(&fl->resp);
    fl->ustatus = 0;
    fl->ur = rq->url && pool ? sy_ureq_start(pool, &o, &ucbs, fl) : NULL;
    if (fl->ur)
        return 0;
    if (in->last_log == 0 || now_s() - in->last_log >= LOG_EVERY_S) {
        in->last_log = now_s();
        sy_warn("logging: callback '%s': cannot send to %s", in->name, rq->url ? rq->url : "(no URL)");
    }
    return -1;
}

/* Send the batch's requests from ireq on. 0: one is in flight; 1: the batch
 * is over (the rest could not start), finished. */
static int send_from(struct flight *fl)
{
    while (fl->ireq < fl->nreqs) {
        if (start_one(fl) == 0)
            return 0;
        fl->batch_bad = 1;
        fl->ireq++;
    }
    batch_finish(fl);
    return 1;
}

/* Start the next batches when due, one per free flight (or resend a request
 * whose back-off is over). With one flight (the default) batches leave in
 * queue order; a sink with max_inflight > 1 (one PUT per record: s3) has that
 * many on their way at once, so its rate is not one record per round trip. */
static void pump(struct inst *in, double t)
{
    for (unsigned k = 0; k < in->nfl; k++) {
        struct flight *fl = &in->fl[k];
        while (!fl->ur) {
            if (fl->nbatch) {
                if (t < fl->retry_at || !send_from(fl))
                    break;
                continue;
            }
            if (!in->qlen)
                break; /* the other flights may still have a retry due */
            int due = in->qlen >= in->max_batch || flushing || in->retired ||
                      t - in->qt[in->qhead] >= cur->lc.batch_interval_s;
            if (!due)
                break;
            size_t n = in->qlen < in->max_batch ? in->qlen : in->max_batch;
            for (size_t i = 0; i < n; i++) {
                fl->batch[i] = in->q[in->qhead];
                in->qbytes -= blk_of(fl->batch[i])->size;
                in->qhead = (in->qhead + 1) % in->qsize;
            }
            in->qlen -= n;
            fl->nbatch = n;
            fl->nreqs = fl->ireq = 0;
            fl->batch_bad = 0;
            memset(fl->reqs, 0, sizeof fl->reqs);
            size_t nout = 0;
            int rc = in->ops->encode(in->h, fl->batch, n, fl->reqs, &nout);
            if (nout > SY_SINK_MAX_REQS)
                nout = SY_SINK_MAX_REQS;
            fl->nreqs = nout;
            inst_depth(in);
            if (rc != 0) {
                fl->batch_bad = 1;
                batch_finish(fl);
                continue;
            }
            if (nout == 0) { /* nothing to send for these records: done with them */
                batch_finish(fl);
                continue;
            }
            send_from(fl);
        }
    }
}

/* ---- routing -------------------------------------------------------------------------- */

static struct inst *find_config(const char *ops_name)
{
    for (struct inst *in = insts; in; in = in->next)
        if (!in->tenant && !in->retired && !strcmp(in->ops->name, ops_name))
            return in;
    return NULL;
}

/* The sink a callback name runs: a sink of that name, or callback_settings'
 * {"<name>": {"callback_type": "<sink>", ...}} (LiteLLM's named generic_api
 * callbacks). *vars: that settings object's text (malloc'd) or NULL. */
static const struct sy_sink_ops *resolve(const struct sy_logconf *lc, const char *name, char **vars)
{
    *vars = NULL;
    const struct sy_sink_ops *ops = sy_sink_find(name);
    if (!lc->callback_settings)
        return ops;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, lc->callback_settings, strlen(lc->callback_settings), &a, 0) == 0) {
        uint32_t o = sy_jdom_top(&d, name);
        if (sy_jdom_kind(&d, o) == 'o') {
            if (!ops) {
                const char *type = sy_jdom_str(&d, sy_jdom_member(&d, o, "callback_type"), &a, NULL);
                ops = sy_sink_find(type);
            }
            size_t n;
            const char *raw = sy_jdom_raw(&d, o, &n);
            *vars = strndup(raw, n);
        }
    }
    sy_arena_free(&a);
    return ops;
}

static char *make_key(const char *name, const char *vars, const char *fp)
{
    size_t n = strlen(name) + (vars ? strlen(vars) : 0) + strlen(fp) + 3;
    char *k = malloc(n);
    if (k)
        snprintf(k, n, "%s\n%s\n%s", name, vars ? vars : "", fp);
    return k;
}

/* The tenant instance for (name, vars), opened on demand. NULL: refused. */
/* Tenant settings a sink refused lately: not opened (nor warned about) again
 * for LOG_EVERY_S, so a key whose callback cannot run costs one line a minute,
 * not one per request. */
static struct {
    char *key;
    double at;
} refused[16];
static unsigned refused_next;

static int refused_lately(const char *key, double t)
{
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (refused[i].key && t - refused[i].at < LOG_EVERY_S && !strcmp(refused[i].key, key))
            return 1;
    return 0;
}

static void refused_note(const char *key, double t)
{
    unsigned i = refused_next++ % (sizeof refused / sizeof refused[0]);
    free(refused[i].key);
    refused[i].key = strdup(key);
    refused[i].at = t;
}

static void refused_clear(void)
{
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        free(refused[i].key);
        refused[i].key = NULL;
    }
}

static struct inst *tenant_inst(const char *name, const char *vars, const struct sy_logrec *r, double t)
{
    char *key = make_key(name, vars, cur->fp);
    if (!key)
        return NULL;
    for (struct inst *in = insts; in; in = in->next)
        if (in->tenant && !in->retired && !strcmp(in->key, key)) {
            free(key);
            return in;
        }
    if (refused_lately(key, t)) {
        free(key);
        return NULL;
    }
    struct inst *lru = NULL; /* past the cap: the least recently used idle tenant makes room */
    if (ninsts >= SY_LOG_MAX_INSTANCES) {
        for (struct inst *in = insts; in; in = in->next)
            if (in->tenant && inst_idle(in) && (!lru || in->last_used < lru->last_used))
                lru = in;
        if (!lru) {
            free(key);
            return NULL;
        }
    }
    char *dummy = NULL;
    const struct sy_sink_ops *ops = resolve(&cur->lc, name, &dummy);
    free(dummy);
    struct inst *in = NULL;
    if (ops) {
        char label[48];
        const char *who = r->team_id ? r->team_id : r->key_alias;
        if (who)
            snprintf(label, sizeof label, "%s:%s", name, who);
        else {
            uint32_t hsh = 2166136261u; /* FNV-1a of the vars: a stable, secret-free label */
            for (const char *p = vars ? vars : ""; *p; p++)
                hsh = (hsh ^ (unsigned char)*p) * 16777619u;
            snprintf(label, sizeof label, "%s:%08x", name, hsh);
        }
        in = inst_open(ops, label, key, vars, cur);
    }
    if (!in)
        refused_note(key, t);
    free(key);
    if (!in)
        return NULL;
    if (lru) {
        inst_unlink(lru);
        inst_free(lru);
    }
    in->tenant = 1;
    in->on_success = in->on_failure = 1;
    inst_link(in);
    return in;
}

size_t sy__log_routes(const char *json, struct sy_log_route *out, size_t max, struct sy_arena *a)
{
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, json, strlen(json), a, 4096) != 0 || sy_jdom_type(&d, 0) != 'a')
        return 0;
    size_t n = 0;
    for (uint32_t e = sy_jdom_first(&d, 0); e && n < max; e = sy_jdom_next(&d, e)) {
        if (sy_jdom_type(&d, e) != 'o')
            continue;
        const char *name = sy_jdom_str(&d, sy_jdom_member(&d, e, "callback_name"), a, NULL);
        if (!name || !*name)
            continue;
        const char *type = sy_jdom_str(&d, sy_jdom_member(&d, e, "callback_type"), a, NULL);
        uint32_t v = sy_jdom_member(&d, e, "callback_vars");
        struct sy_log_route *r = &out[n];
        r->name = name;
        r->vars = NULL;
        if (sy_jdom_kind(&d, v) == 'o') {
            size_t vn;
            const char *raw = sy_jdom_raw(&d, v, &vn);
            r->vars = sy_arena_strndup(a, raw, vn);
        }
        r->success = !type || strcmp(type, "failure") != 0;
        r->failure = !type || strcmp(type, "success") != 0;
        n++;
    }
    return n;
}

static void dispatch(struct blk *b, double t)
{
    struct sy_logrec *r = &b->rec;
    if (r->flags & SY_LOGREC_RAW) {
        struct inst *in = b->target ? find_config(b->target) : NULL;
        if (in)
            enqueue(in, r, t);
        else
            atomic_fetch_add_explicit(&raw_dropped, 1, memory_order_relaxed);
        rec_unref(r);
        return;
    }
    if (cur->lc.request_log || cur->lc.json_logs)
        sy__reqlog_write(&cur->lc, r);
    int fail = (r->flags & SY_LOGREC_FAILURE) != 0;
    struct sy_log_route routes[MAX_ROUTES];
    size_t nr = 0;
    struct sy_arena a;
    sy_arena_init(&a);
    if (r->route_json)
        nr = sy__log_routes(r->route_json, routes, MAX_ROUTES, &a);
    for (struct inst *in = insts; in; in = in->next) {
        if (in->tenant || in->retired || !(fail ? in->on_failure : in->on_success))
            continue;
        int replaced = 0; /* a tenant's own settings for this sink replace the config's */
        for (size_t i = 0; i < nr && !replaced; i++)
            replaced = !strcmp(routes[i].name, in->name);
        if (!replaced)
            enqueue(in, r, t);
    }
    for (size_t i = 0; i < nr; i++) {
        if (!(fail ? routes[i].failure : routes[i].success))
            continue;
        struct inst *in = tenant_inst(routes[i].name, routes[i].vars, r, t);
        if (in)
            enqueue(in, r, t);
        else
            atomic_fetch_add_explicit(&raw_dropped, 1, memory_order_relaxed);
    }
    sy_arena_free(&a);
    rec_unref(r);
}

/* ---- the thread --------------------------------------------------------------------------- */

static void running_set(void)
{
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nrunning; i++)
        free(running_names[i]);
    free(running_names);
    running_names = NULL;
    nrunning = 0;
    size_t n = 0;
    for (struct inst *in = insts; in; in = in->next)
        n++;
    running_names = calloc(n ? n : 1, sizeof *running_names);
    for (struct inst *in = insts; in && running_names; in = in->next)
        if (!in->tenant && !in->retired && (running_names[nrunning] = strdup(in->ops->name)))
            nrunning++;
    pthread_mutex_unlock(&mu);
}

/* Make the config's instances those of c. */
static void apply(struct conf *c)
{
    for (struct inst *in = insts; in; in = in->next)
        in->keep = 0;
    size_t nw = c->lc.nsuccess + c->lc.nfailure + 1;
    const char **want = calloc(nw, sizeof *want);
    if (!want) {
        conf_unref(c);
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < c->lc.nsuccess + c->lc.nfailure; i++) {
        const char *nm = i < c->lc.nsuccess ? c->lc.success[i] : c->lc.failure[i - c->lc.nsuccess];
        size_t j = 0;
        while (j < n && strcmp(want[j], nm))
            j++;
        if (j == n)
            want[n++] = nm;
    }
    if (c->lc.alerting_slack && sy_sink_find("slack")) {
        size_t j = 0;
        while (j < n && strcmp(want[j], "slack"))
            j++;
        if (j == n)
            want[n++] = "slack";
    }
    for (size_t i = 0; i < n; i++) {
        char *vars = NULL;
        const struct sy_sink_ops *ops = resolve(&c->lc, want[i], &vars);
        if (!ops) {
            sy_warn("logging: callback '%s' is not a sink switchyard has; ignored (a custom logger can "
                    "post to the generic_api webhook)",
                    want[i]);
            free(vars);
            continue;
        }
        char *key = make_key(want[i], vars, c->fp);
        struct inst *in = NULL;
        for (struct inst *x = insts; key && x; x = x->next)
            if (!x->tenant && !x->retired && !strcmp(x->key, key))
                in = x;
        if (!in && key) {
            in = inst_open(ops, want[i], key, vars, c);
            if (in)
                inst_link(in);
        }
        free(key);
        free(vars);
        if (!in)
            continue;
        in->keep = 1;
        in->on_success = in->on_failure = 0;
        for (size_t k = 0; k < c->lc.nsuccess; k++)
            in->on_success |= !strcmp(c->lc.success[k], want[i]);
        for (size_t k = 0; k < c->lc.nfailure; k++)
            in->on_failure |= !strcmp(c->lc.failure[k], want[i]);
        if (!strcmp(want[i], "slack") && c->lc.alerting_slack)
            in->on_success = in->on_failure = 1;
    }
    free(want);
    for (struct inst *in = insts; in; in = in->next)
        if (!in->keep && (!in->tenant || strcmp(in->conf->fp, c->fp)))
            in->retired = 1;
    conf_unref(cur);
    cur = c;
    running_set();
}

/* Close retired instances that hold nothing. */
static void reap(void)
{
    for (struct inst *in = insts, *next; in; in = next) {
        next = in->next;
        if (in->retired && inst_idle(in)) {
            inst_unlink(in);
            inst_free(in);
        }
    }
}

static int all_empty(void)
{
    for (struct inst *in = insts; in; in = in->next)
        if (!inst_idle(in))
            return 0;
    return 1;
}

static void shutdown_thread(void)
{
    done = 1;
    uv_timer_stop(&tick);
    for (struct inst *in = insts, *next; in; in = next) {
        next = in->next;
        for (unsigned k = 0; k < in->nfl; k++)
            if (in->fl[k].ur) {
                sy_ureq_cancel(in->fl[k].ur);
                in->fl[k].ur = NULL;
            }
        uint64_t left = in->qlen + inst_flying(in);
        if (left) {
            atomic_fetch_add_explicit(&in->dropped, left, memory_order_relaxed);
            atomic_fetch_add_explicit(&in->failures, left, memory_order_relaxed);
            sy_warn("logging: callback '%s': %llu record(s) not delivered at shutdown", in->name,
                    (unsigned long long)left);
        }
        inst_unlink(in);
        inst_free(in);
    }
    conf_unref(cur);
    cur = NULL;
    refused_clear();
    if (pool)
        sy_upool_close(pool);
    pool = NULL;
    uv_close((uv_handle_t *)&tick, NULL);
    uv_close((uv_handle_t *)&wake, NULL);
}

static void on_tick(uv_timer_t *h);

static void run_once(void)
{
    if (done)
        return;
    pthread_mutex_lock(&mu);
    struct blk *list = in_head;
    in_head = NULL;
    in_tail = &in_head;
    in_len = 0;
    struct conf *nc = pending;
    pending = NULL;
    int stop = stop_req;
    double deadline = stop_deadline;
    pthread_mutex_unlock(&mu);
    if (nc)
        apply(nc);
    double t = now_s();
    while (list) {
        struct blk *b = list;
        list = b->next;
        dispatch(b, t);
    }
    if (stop && !flushing) {
        flushing = 1;
        flush_deadline = deadline;
        uv_timer_start(&tick, on_tick, FLUSH_TICK_MS, FLUSH_TICK_MS);
    }
    for (struct inst *in = insts; in; in = in->next) {
        for (unsigned k = 0; flushing && k < in->nfl; k++) {
            struct flight *fl = &in->fl[k];
            if (fl->nbatch && !fl->ur && fl->retry_at > t)
                fl->retry_at = fl->retry_at < flush_deadline ? fl->retry_at : t;
        }
        pump(in, t);
    }
    reap();
    if (flushing) {
        pthread_mutex_lock(&mu);
        int inbox_empty = in_head == NULL;
        pthread_mutex_unlock(&mu);
        if ((inbox_empty && all_empty()) || now_s() >= flush_deadline)
            shutdown_thread();
    }
}

static void on_tick(uv_timer_t *h)
{
    (void)h;
    run_once();
}

static void on_wake(uv_async_t *h)
{
    (void)h;
    run_once();
}

/* The logging thread runs niced (LOG_NICE above the workers): when the CPU
 * is short, the workers' requests go first and the logging thread gets what
 * is left (its queues absorb bursts; past their bounds records are counted
 * as dropped), so a burst of payloads to build never delays an answer. */
#define LOG_NICE 10

static void *thread_main(void *arg)
{
    (void)arg;
    if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), LOG_NICE) != 0) /* Linux: per thread */
        sy_debug("logging: cannot lower the logging thread's priority");
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    return NULL;
}

int sy_log_start(const struct sy_config *cfg)
{
    if (started)
        return sy_log_configure(cfg);
    if (!sy_log_enabled(cfg))
        return 0;
    struct conf *c = conf_new(cfg);
    if (!c)
        return -1;
    if (uv_loop_init(&loop) != 0) {
        conf_free(c);
        return -1;
    }
    struct sy_upool_opts po = {.ssl_verify = cfg->ssl_verify, .ca_file = cfg->ssl_ca_file};
    pool = sy_upool_new(&loop, &po);
    if (!pool || uv_async_init(&loop, &wake, on_wake) != 0) {
        conf_free(c);
        uv_loop_close(&loop);
        return -1;
    }
    uv_timer_init(&loop, &tick);
    double bi = c->lc.batch_interval_s;
    tick_ms = bi * 1000 < TICK_MS ? (unsigned)(bi * 1000) : TICK_MS;
    if (tick_ms < 10)
        tick_ms = 10;
    uv_timer_start(&tick, on_tick, tick_ms, tick_ms);
    flushing = 0;
    done = 0;
    apply(c); /* on this thread, before the logging thread runs */
    pthread_mutex_lock(&mu);
    in_max = c->lc.inbox_max;
    accepting = 1;
    stop_req = 0;
    pthread_mutex_unlock(&mu);
    if (pthread_create(&thread, NULL, thread_main, NULL) != 0) {
        pthread_mutex_lock(&mu);
        accepting = 0;
        pthread_mutex_unlock(&mu);
        shutdown_thread();
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        return -1;
    }
    started = 1;
    return 0;
}

int sy_log_configure(const struct sy_config *cfg)
{
    if (!started)
        return sy_log_start(cfg);
    struct conf *c = conf_new(cfg);
    if (!c)
        return -1;
    pthread_mutex_lock(&mu);
    struct conf *old = pending;
    pending = c;
    in_max = c->lc.inbox_max;
    if (accepting)
        uv_async_send(&wake);
    pthread_mutex_unlock(&mu);
    conf_free(old); /* never seen by the thread */
    return 0;
}

static int inbox_put(struct blk *b)
{
    size_t held = atomic_fetch_add_explicit(&held_bytes, b->size, memory_order_relaxed) + b->size;
    pthread_mutex_lock(&mu);
    if (!accepting || in_len >= in_max || held > HELD_MAX) {
        int was = accepting;
        double t = was ? now_s() : 0;
        int say = was && (inbox_last_log == 0 || t - inbox_last_log >= LOG_EVERY_S);
        uint64_t n = 0;
        if (was) {
            inbox_drops_logged++;
            if (say) {
                n = inbox_drops_logged;
                inbox_drops_logged = 0;
                inbox_last_log = t;
            }
        }
        pthread_mutex_unlock(&mu);
        atomic_fetch_add_explicit(&inbox_dropped, 1, memory_order_relaxed);
        if (say)
            sy_warn("logging: the logging inbox is full (records or memory); %llu record(s) dropped",
                    (unsigned long long)n);
        atomic_fetch_sub_explicit(&held_bytes, b->size, memory_order_relaxed);
        free(b);
        return -1;
    }
    b->rec.seq = ++next_seq;
    *in_tail = b;
    in_tail = &b->next;
    if (++in_len == INBOX_WAKE)
        uv_async_send(&wake);
    pthread_mutex_unlock(&mu);
    return 0;
}

int sy_log_submit(const struct sy_logrec *rec)
{
    if (!started)
        return -1;
    struct blk *b = rec_copy(rec, NULL, NULL, 0);
    if (!b) {
        atomic_fetch_add_explicit(&inbox_dropped, 1, memory_order_relaxed);
        return -1;
    }
    b->rec.flags &= ~SY_LOGREC_RAW;
    return inbox_put(b);
}

int sy_log_submit_to(const char *sink, const char *p, size_t n)
{
    if (!started || !sink)
        return -1;
    int on = 0;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nrunning && !on; i++)
        on = !strcmp(running_names[i], sink);
    pthread_mutex_unlock(&mu);
    if (!on)
        return -1;
    struct sy_logrec r = {.flags = SY_LOGREC_RAW};
    struct blk *b = rec_copy(&r, sink, p ? p : "", p ? n : 0);
    if (!b) {
        atomic_fetch_add_explicit(&inbox_dropped, 1, memory_order_relaxed);
        return -1;
    }
    return inbox_put(b);
}

void sy_log_stop(double timeout_s)
{
    if (!started)
        return;
    pthread_mutex_lock(&mu);
    accepting = 0;
    stop_req = 1;
    stop_deadline = now_s() + (timeout_s > 0 ? timeout_s : 0);
    uv_async_send(&wake);
    pthread_mutex_unlock(&mu);
    pthread_join(thread, NULL);
    started = 0;
    pthread_mutex_lock(&mu);
    conf_free(pending);
    pending = NULL;
    for (size_t i = 0; i < nrunning; i++)
        free(running_names[i]);
    free(running_names);
    running_names = NULL;
    nrunning = 0;
    pthread_mutex_unlock(&mu);
}

/* ---- statistics ------------------------------------------------------------------------------ */

size_t sy_log_stats(struct sy_log_sink_stats *out, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&stats_mu);
    for (struct inst *in = insts; in && n < max; in = in->next, n++) {
        struct sy_log_sink_stats *s = &out[n];
        snprintf(s->name, sizeof s->name, "%s", in->name);
        s->queued = atomic_load_explicit(&in->queued, memory_order_relaxed);
        s->sent = atomic_load_explicit(&in->sent, memory_order_relaxed);
        s->retried = atomic_load_explicit(&in->retried, memory_order_relaxed);
        s->dropped = atomic_load_explicit(&in->dropped, memory_order_relaxed);
        s->failures = atomic_load_explicit(&in->failures, memory_order_relaxed);
        s->depth = atomic_load_explicit(&in->depth, memory_order_relaxed);
    }
    pthread_mutex_unlock(&stats_mu);
    return n;
}

/* The instances' stats sorted by name (a stable page). */
static int stat_cmp(const void *a, const void *b)
{
    return strcmp(((const struct sy_log_sink_stats *)a)->name, ((const struct sy_log_sink_stats *)b)->name);
}

static size_t stats_sorted(struct sy_log_sink_stats *s)
{
    size_t n = sy_log_stats(s, SY_LOG_MAX_INSTANCES);
    qsort(s, n, sizeof *s, stat_cmp);
    return n;
}

static void label(struct sy_buf *b, const char *name)
{
    SY_BUF_LIT(b, "{callback_name=\"");
    for (const char *p = name; *p; p++) {
        if (*p == '"' || *p == '\\')
            sy_buf_append(b, "\\", 1);
        if (*p == '\n')
            SY_BUF_LIT(b, "\\n");
        else
            sy_buf_append(b, p, 1);
    }
    SY_BUF_LIT(b, "\"} ");
}

void sy_log_render_metrics(struct sy_buf *b)
{
    struct sy_log_sink_stats s[SY_LOG_MAX_INSTANCES];
    size_t n = stats_sorted(s);
    if (!n && !started)
        return;
    static const struct {
        const char *name, *help, *type;
        size_t off;
        int is_size;
    } fam[] = {
        {"litellm_callback_logging_failures_metric_total", "Total number of failures when emitting logs to callbacks",
         "counter", offsetof(struct sy_log_sink_stats, failures), 0},
        {"switchyard_callback_queue_depth", "Records waiting in a callback's queue (queued and in flight)", "gauge",
         offsetof(struct sy_log_sink_stats, depth), 1},
        {"switchyard_callback_sent_total", "Records a callback's sink accepted", "counter",
         offsetof(struct sy_log_sink_stats, sent), 0},
        {"switchyard_callback_retried_total", "Requests to a callback's sink sent again after a failure", "counter",
         offsetof(struct sy_log_sink_stats, retried), 0},
        {"switchyard_callback_dropped_total", "Records a callback could not deliver (queue full, refused, gave up)",
         "counter", offsetof(struct sy_log_sink_stats, dropped), 0},
    };
    for (size_t f = 0; f < sizeof fam / sizeof fam[0]; f++) {
        sy_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", fam[f].name, fam[f].help, fam[f].name, fam[f].type);
        for (size_t i = 0; i < n; i++) {
            const char *base = (const char *)&s[i] + fam[f].off;
            uint64_t v = fam[f].is_size ? (uint64_t) * (const size_t *)(const void *)base
                                        : *(const uint64_t *)(const void *)base;
            sy_buf_puts(b, fam[f].name);
            label(b, s[i].name);
            sy_buf_u64(b, v);
            SY_BUF_LIT(b, ".0\n");
        }
    }
    sy_buf_printf(b,
                  "# HELP switchyard_callback_inbox_dropped_total Finished calls not queued for logging (inbox "
                  "full)\n# TYPE switchyard_callback_inbox_dropped_total counter\n"
                  "switchyard_callback_inbox_dropped_total %llu.0\n"
                  "# HELP switchyard_callback_unrouted_total Records for a sink that is not running, or for a "
                  "tenant's sink past the instance cap\n# TYPE switchyard_callback_unrouted_total counter\n"
                  "switchyard_callback_unrouted_total %llu.0\n",
                  (unsigned long long)atomic_load(&inbox_dropped), (unsigned long long)atomic_load(&raw_dropped));
}

void sy_log_render_readiness(struct sy_buf *b)
{
    struct sy_log_sink_stats s[SY_LOG_MAX_INSTANCES];
    size_t n = stats_sorted(s);
    pthread_mutex_lock(&mu);
    size_t inbox = in_len;
    pthread_mutex_unlock(&mu);
    sy_buf_printf(b,
                  ",\"logging\":{\"running\":%s,\"inbox\":%zu,\"inbox_dropped\":%llu,\"unrouted\":%llu,"
                  "\"sinks\":{",
                  started ? "true" : "false", inbox, (unsigned long long)atomic_load(&inbox_dropped),
                  (unsigned long long)atomic_load(&raw_dropped));
    for (size_t i = 0; i < n; i++) {
        if (i)
            SY_BUF_LIT(b, ",");
        SY_BUF_LIT(b, "\"");
        sy_buf_json_escape(b, s[i].name, strlen(s[i].name));
        sy_buf_printf(b, "\":{\"queue_depth\":%zu,\"queued\":%llu,\"sent\":%llu,\"retried\":%llu,\"dropped\":%llu}",
                      s[i].depth, (unsigned long long)s[i].queued, (unsigned long long)s[i].sent,
                      (unsigned long long)s[i].retried, (unsigned long long)s[i].dropped);
    }
    SY_BUF_LIT(b, "}}");
}
