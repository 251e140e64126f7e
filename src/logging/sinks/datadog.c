/* datadog.c - the `datadog` callback: every record as one log on Datadog's logs intake.
 *
 * LiteLLM's DataDogLogger (litellm/integrations/datadog/datadog.py) queues a
 * DatadogPayload per call and posts the queue as a JSON array:
 *     POST https://http-intake.logs.{DD_SITE}/api/v2/logs
 *     DD-API-KEY: {DD_API_KEY}
 *     [{"ddsource": DD_SOURCE or "litellm",
 *       "ddtags": "env:{DD_ENV},service:{DD_SERVICE},version:{DD_VERSION},HOSTNAME:{HOSTNAME},
 *                  POD_NAME:{POD_NAME}" + ",request_tag:{tag}"... + ",team:{team alias or id}",
 *       "hostname": HOSTNAME or "",
 *       "message": the StandardLoggingPayload as a JSON string,
 *       "service": DD_SERVICE or "litellm-server",
 *       "status": "info", or "error" for a failure}, ...]
 * (datadog_handler.py gives the defaults: "unknown" for env, version and pod.)
 * Before the payload is dumped LiteLLM cuts its messages, response and
 * error_str (CustomLogger.truncate_standard_logging_payload_content): a field
 * whose Python str() is longer than 10,000 characters becomes the first
 * 10,000 characters of that text followed by "...truncated by litellm, this
 * logger does not support large content". pystr.h gives the same text.
 *
 * A request holds at most 1000 entries and 4,000,000 bytes (LiteLLM's
 * DD_MAX_BATCH_SIZE and DD_MAX_PAYLOAD_SIZE_BYTES, under Datadog's 5 MB); an
 * entry alone above that is left out and logged. LiteLLM gzips the body;
 * switchyard has no zlib and sends plain JSON, which the intake accepts.
 *
 * Where it goes: LITELLM_DD_AGENT_HOST (and LITELLM_DD_AGENT_PORT, default
 * 10518) sends to an agent at http://host:port/api/v2/logs, the key then
 * optional; else DD_API_KEY and DD_SITE are required. DD_BASE_URL replaces
 * the base of the URL (LiteLLM's test override; with it DD_SITE may be
 * unset). A key's or team's callback_vars (dd_api_key, dd_site,
 * dd_agent_host, dd_agent_port) never take DD_API_KEY from the environment,
 * as LiteLLM's allow_env_credentials=False for tenant loggers.
 *
 * Answers: 202 (any 2xx) sent; 401/403 (a wrong key) and 413 dropped and
 * logged once per minute; 408, 429, 5xx and no answer retried.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/buf.h"
#include "core/clock.h"
#include "core/log.h"
#include "logging/logging.h"
#include "logging/sinks/pystr.h"
#include "providers/jdom.h"

#define DD_MAX_ENTRIES   1000u
#define DD_MAX_BYTES     4000000u
#define DD_BODY_CAP      (8u << 20)
#define DD_MAX_STR       10000u
#define DD_TRUNC_SUFFIX  "...truncated by litellm, this logger does not support large content"
#define DD_WARN_EVERY    60.0
#define DD_CHEAP_RAW_MAX 2000u /* a JSON text this short has a str() under DD_MAX_STR characters */

struct dd {
    char *url;
    struct sy_buf headers;
    char *source, *service, *hostname, *tags; /* tags: the base "env:..,service:..,..." */
    double last_warn;
};

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v ? v : dflt;
}

static char *var_str(const struct sy_jdoc *d, const char *key, struct sy_arena *a)
{
    uint32_t v = d ? sy_jdom_top(d, key) : 0;
    char t = sy_jdom_kind(d, v);
    size_t n;
    if (t == 'n') {
        const char *raw = sy_jdom_raw(d, v, &n);
        return sy_arena_strndup(a, raw, n);
    }
    if (t != 's')
        return NULL;
    const char *s = sy_jdom_str(d, v, a, &n);
    return s && n && strlen(s) == n ? (char *)s : NULL;
}

static int header_safe(const char *s)
{
    for (; s && *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 0;
    return 1;
}

static void dd_close(void *p)
{
    struct dd *dd = p;
    if (!dd)
        return;
    free(dd->url);
    sy_buf_free(&dd->headers);
    free(dd->source);
    free(dd->service);
    free(dd->hostname);
    free(dd->tags);
    free(dd);
}

static void *dd_open(const struct sy_logconf *lc, const char *vars, char *err, size_t errlen)
{
    (void)lc;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d, *vd = NULL;
    if (vars && sy_jdom_parse(&d, vars, strlen(vars), &a, 0) == 0 && sy_jdom_type(&d, 0) == 'o')
        vd = &d;
    const char *key = var_str(vd, "dd_api_key", &a);
    if (!key && !vd)
        key = getenv("DD_API_KEY");
    if (key && !*key)
        key = NULL;
    const char *site = var_str(vd, "dd_site", &a);
    if (!site)
        site = getenv("DD_SITE");
    const char *agent = var_str(vd, "dd_agent_host", &a);
    if (!agent)
        agent = getenv("LITELLM_DD_AGENT_HOST");
    const char *port = var_str(vd, "dd_agent_port", &a);
    if (!port)
        port = env_or("LITELLM_DD_AGENT_PORT", "10518");
    const char *base = getenv("DD_BASE_URL");
    if (base && !*base)
        base = NULL;
    struct dd *dd = NULL;
    struct sy_buf u;
    sy_buf_init(&u, 8192);
    if (agent && *agent) {
        sy_buf_printf(&u, "http://%s:%s/api/v2/logs", agent, port);
    } else {
        if (!key) {
            snprintf(err, errlen, "datadog: %s is not set", vd ? "dd_api_key" : "DD_API_KEY");
            goto out;
        }
        if (!base && (!site || !*site)) {
            snprintf(err, errlen, "datadog: DD_SITE is not set (e.g. us5.datadoghq.com)");
            goto out;
        }
        if (!base)
            sy_buf_printf(&u, "https://http-intake.logs.%s/api/v2/logs", site);
    }
    if (base) {
        sy_buf_reset(&u);
        size_t bl = strlen(base);
        while (bl && base[bl - 1] == '/')
            bl--;
        sy_buf_append(&u, base, bl);
        SY_BUF_LIT(&u, "/api/v2/logs");
    }
    if (!header_safe(key) || !header_safe(u.p) || strchr(u.p ? u.p : "", ' ')) {
        snprintf(err, errlen, "datadog: the API key or intake URL holds control characters");
        goto out;
    }
    dd = calloc(1, sizeof *dd);
    if (!dd) {
        snprintf(err, errlen, "datadog: out of memory");
        goto out;
    }
    dd->url = u.p ? strdup(u.p) : NULL;
    sy_buf_init(&dd->headers, 8192);
    SY_BUF_LIT(&dd->headers, "Content-Type: application/json\r\n");
    if (key)
        sy_buf_printf(&dd->headers, "DD-API-KEY: %s\r\n", key);
    dd->source = strdup(env_or("DD_SOURCE", "litellm"));
    dd->service = strdup(env_or("DD_SERVICE", "litellm-server"));
    dd->hostname = strdup(env_or("HOSTNAME", ""));
    struct sy_buf t;
    sy_buf_init(&t, 1u << 16);
    sy_buf_printf(&t, "env:%s,service:%s,version:%s,HOSTNAME:%s,POD_NAME:%s", env_or("DD_ENV", "unknown"),
                  dd->service ? dd->service : "", env_or("DD_VERSION", "unknown"), dd->hostname ? dd->hostname : "",
                  env_or("POD_NAME", "unknown"));
    dd->tags = t.p && !sy_buf_failed(&t) ? strdup(t.p) : NULL;
    sy_buf_free(&t);
    if (!dd->url || !dd->source || !dd->service || !dd->hostname || !dd->tags || sy_buf_failed(&dd->headers)) {
        snprintf(err, errlen, "datadog: out of memory");
        dd_close(dd);
        dd = NULL;
    }
out:
    sy_buf_free(&u);
    sy_arena_free(&a);
    return dd;
}

/* ---- one entry -------------------------------------------------------------- */

/* The truncated text of field node v when str(v) is longer than DD_MAX_STR
 * characters (into t, returns 1); 0 when it stays as it is. */
static int truncated(const struct sy_jdoc *P, uint32_t v, struct sy_buf *t, struct sy_arena *a)
{
    char k = sy_jdom_kind(P, v);
    if (!k || k == 'z' || k == 'f')
        return 0;
    if ((k == 'a' || k == 'o') && P->n[v].kids == 0)
        return 0; /* falsy: [] and {} are left alone */
    if (P->n[v].len <= DD_CHEAP_RAW_MAX)
        return 0;
    struct sy_buf s;
    sy_buf_init(&s, 256u << 20);
    int cut = 0;
    if (sy_pystr_node(&s, P, v, a) == 0 && sy_pystr_len(s.p, s.len) > DD_MAX_STR) {
        sy_buf_reset(t);
        sy_buf_append(t, s.p, sy_pystr_prefix(s.p, s.len, DD_MAX_STR));
        SY_BUF_LIT(t, DD_TRUNC_SUFFIX);
        cut = !sy_buf_failed(t);
    }
    sy_buf_free(&s);
    return cut;
}

/* The payload with messages / response / error_str cut as LiteLLM cuts them, into m. */
static void dd_message(const struct sy_jdoc *P, struct sy_buf *m, struct sy_arena *a)
{
    static const char *const fields[3] = {"error_str", "messages", "response"};
    struct sy_buf cut[3];
    int any = 0, has[3];
    for (int i = 0; i < 3; i++) {
        sy_buf_init(&cut[i], 1u << 20);
        has[i] = truncated(P, sy_jdom_top(P, fields[i]), &cut[i], a);
        any |= has[i];
    }
    if (!any) {
        sy_buf_append(m, P->src, P->src_len);
    } else {
        struct sy_jw w;
        sy_jw_init(&w, m);
        sy_jw_obj(&w);
        for (uint32_t k = sy_jdom_first(P, 0); k; k = sy_jdom_next_key(P, k)) {
            size_t kl;
            const char *ks = sy_jdom_str(P, k, a, &kl);
            sy_jw_keyn(&w, ks, kl);
            int f = -1;
            for (int i = 0; i < 3; i++)
                if (has[i] && sy_jdom_str_eq(P, k, fields[i]))
                    f = i;
            if (f >= 0)
                sy_jw_str(&w, cut[f].p, cut[f].len);
            else
                sy_jw_node(&w, P, sy_jdom_val(k));
        }
        sy_jw_end(&w);
    }
    for (int i = 0; i < 3; i++)
        sy_buf_free(&cut[i]);
}

/* ddtags: the base tags, request_tag:<tag> per request tag, team:<alias or id>. */
static void dd_tags(const struct dd *dd, const struct sy_jdoc *P, struct sy_buf *t, struct sy_arena *a)
{
    sy_buf_puts(t, dd->tags);
    uint32_t rt = sy_jdom_top(P, "request_tags");
    if (sy_jdom_kind(P, rt) == 'a')
        for (uint32_t e = sy_jdom_first(P, rt); e; e = sy_jdom_next(P, e)) {
            SY_BUF_LIT(t, ",request_tag:");
            if (sy_jdom_type(P, e) == 's') {
                size_t n;
                const char *s = sy_jdom_str(P, e, a, &n);
                sy_buf_append(t, s, n);
            } else {
                sy_pystr_node(t, P, e, a);
            }
        }
    uint32_t md = sy_jdom_top(P, "metadata");
    if (sy_jdom_kind(P, md) == 'o') {
        static const char *const keys[4] = {"user_api_key_team_alias", "team_alias", "user_api_key_team_id", "team_id"};
        for (int i = 0; i < 4; i++) {
            uint32_t v = sy_jdom_member(P, md, keys[i]);
            char k = sy_jdom_kind(P, v);
            if (!k || (k == 's' && P->n[v].len == 2) || k == 'f')
                continue; /* Python's `or` skips "" and False */
            SY_BUF_LIT(t, ",team:");
            sy_pystr_node(t, P, v, a);
            break;
        }
    }
}

/* One entry for record r appended to e. 0, or -1 when r has no payload. */
static int dd_entry(const struct dd *dd, struct sy_logrec *r, struct sy_buf *e, struct sy_arena *a)
{
    size_t plen = 0;
    const char *p = sy_log_payload(r, &plen);
    struct sy_jdoc P;
    if (!p || sy_jdom_parse(&P, p, plen, a, 0) != 0 || sy_jdom_type(&P, 0) != 'o')
        return -1;
    struct sy_buf msg, tags;
    sy_buf_init(&msg, 64u << 20);
    sy_buf_init(&tags, 1u << 20);
    dd_message(&P, &msg, a);
    dd_tags(dd, &P, &tags, a);
    struct sy_jw w;
    sy_jw_init(&w, e);
    sy_jw_obj(&w);
    sy_jw_key(&w, "ddsource");
    sy_jw_cstr(&w, dd->source);
    sy_jw_key(&w, "ddtags");
    sy_jw_str(&w, tags.p ? tags.p : "", tags.len);
    sy_jw_key(&w, "hostname");
    sy_jw_cstr(&w, dd->hostname);
    sy_jw_key(&w, "message");
    sy_jw_str(&w, msg.p ? msg.p : "", msg.len);
    sy_jw_key(&w, "service");
    sy_jw_cstr(&w, dd->service);
    sy_jw_key(&w, "status");
    sy_jw_cstr(&w, (r->flags & SY_LOGREC_FAILURE) ? "error" : "info");
    sy_jw_end(&w);
    int rc = sy_buf_failed(&msg) || sy_buf_failed(&tags) || w.err ? -1 : 0;
    sy_buf_free(&msg);
    sy_buf_free(&tags);
    return rc;
}

/* ---- the batch ------------------------------------------------------------ */

static int dd_finish_req(const struct dd *dd, struct sy_sink_req *q, struct sy_buf *entries)
{
    q->method = "POST";
    q->url = strdup(dd->url);
    sy_buf_init(&q->headers, 1u << 16);
    sy_buf_append_buf(&q->headers, &dd->headers);
    sy_buf_init(&q->body, DD_BODY_CAP);
    SY_BUF_LIT(&q->body, "[");
    sy_buf_append_buf(&q->body, entries);
    SY_BUF_LIT(&q->body, "]");
    if (q->url && !sy_buf_failed(&q->body) && !sy_buf_failed(&q->headers))
        return 0;
    sy_sink_req_free(q);
    memset(q, 0, sizeof *q);
    return -1;
}

static int dd_warn_due(struct dd *dd)
{
    double now = sy_wall_now();
    if (now - dd->last_warn < DD_WARN_EVERY)
        return 0;
    dd->last_warn = now;
    return 1;
}

static int dd_encode(void *inst, struct sy_logrec *const *recs, size_t n, struct sy_sink_req *out, size_t *nout)
{
    struct dd *dd = inst;
    *nout = 0;
    struct sy_buf entries, one;
    sy_buf_init(&entries, DD_BODY_CAP);
    sy_buf_init(&one, 64u << 20);
    struct sy_arena a;
    sy_arena_init(&a);
    size_t count = 0, wanted = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (recs[i]->flags & SY_LOGREC_RAW)
            continue;
        wanted++;
        sy_buf_reset(&one);
        int ok = dd_entry(dd, recs[i], &one, &a) == 0;
        sy_arena_reset(&a);
        if (!ok)
            continue;
        if (one.len + 2 > DD_MAX_BYTES) {
            if (dd_warn_due(dd))
                sy_warn("datadog: a log entry of %zu bytes is above the intake's limit, left out", one.len);
            continue;
        }
        if (count && (count == DD_MAX_ENTRIES || entries.len + one.len + 3 > DD_MAX_BYTES)) {
            if (*nout == SY_SINK_MAX_REQS - 1 || dd_finish_req(dd, &out[*nout], &entries) != 0) {
                rc = -1;
                break;
            }
            (*nout)++;
            sy_buf_reset(&entries);
            count = 0;
        }
        if (count)
            SY_BUF_LIT(&entries, ",");
        sy_buf_append_buf(&entries, &one);
        count++;
    }
    if (rc == 0 && count) {
        if (dd_finish_req(dd, &out[*nout], &entries) == 0)
            (*nout)++;
        else
            rc = -1;
    }
    if (rc != 0) {
        for (size_t i = 0; i < *nout; i++)
            sy_sink_req_free(&out[i]);
        *nout = 0;
    } else if (*nout == 0 && wanted) {
        rc = -1; /* no record could be written */
    }
    sy_buf_free(&entries);
    sy_buf_free(&one);
    sy_arena_free(&a);
    return rc;
}

static int dd_verdict(void *inst, int status, const char *body, size_t n)
{
    struct dd *dd = inst;
    if (status >= 200 && status < 300)
        return SY_SINK_SENT;
    if (status == 0 || status == 408 || status == 429 || status >= 500)
        return SY_SINK_RETRY;
    if ((status == 401 || status == 403 || status == 413) && dd_warn_due(dd)) {
        char msg[201]; /* the answer for our log: printable ASCII only */
        size_t o = 0;
        for (size_t i = 0; body && i < n && o + 1 < sizeof msg; i++)
            msg[o++] = (body[i] >= 0x20 && body[i] < 0x7f) ? body[i] : '?';
        msg[o] = 0;
        sy_warn("datadog: %s answered %d%s: %s", dd->url, status,
                status == 413 ? " (payload too large)" : " (check DD_API_KEY)", msg);
    }
    return SY_SINK_DROP;
}

const struct sy_sink_ops sy_sink_datadog = {
    .name = "datadog",
    .max_batch = 500,
    .open = dd_open,
    .close = dd_close,
    .encode = dd_encode,
    .verdict = dd_verdict,
};
