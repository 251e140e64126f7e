/* reqlog.c - the operator's request log: one line per finished call.
 *
 * On with --detailed_debug / LITELLM_LOG=DEBUG (or --log-level debug) and
 * with litellm_settings.json_logs. Written to stderr by the logging thread
 * (engine.c calls it for each record it takes from the inbox), never by a
 * worker, in one write(2) so lines of different threads never interleave.
 *
 * Text (the core logger's prefix, then key=value pairs; values with spaces,
 * quotes or '=' are quoted):
 *   2026-01-02T03:04:05.678Z INFO  request id=chatcmpl-1 key_alias=ci team=t1
 *     model_group=gpt-4o deployment=9f2c... status=200 attempts=1 latency_ms=812
 *     ttft_ms=240 prompt_tokens=12 completion_tokens=30 cost=0.00042
 *     [error_class=RateLimitError error="..."]
 * JSON (json_logs: LiteLLM's JsonFormatter, {"message","level","timestamp"},
 * timestamp as Python's datetime.isoformat(); here UTC), with the same facts
 * as members beside the message so a log pipeline need not parse it.
 *
 * Never written: the key or its hash, message text (request or response),
 * metadata. With redact_user_api_key_info the key alias and team are left
 * out too. The upstream error's message is cut at 512 bytes (on a UTF-8
 * boundary).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "logging/reqlog.h"
#include "providers/jdom.h"

#define ERR_MAX 512

/* Length of s cut to at most max bytes without splitting a UTF-8 sequence. */
static size_t cut_utf8(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return n;
    n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

static void kv_text(struct sy_buf *b, const char *k, const char *v, size_t n)
{
    sy_buf_printf(b, " %s=", k);
    int quote = n == 0;
    for (size_t i = 0; i < n && !quote; i++)
        quote = v[i] == ' ' || v[i] == '"' || v[i] == '=' || (unsigned char)v[i] < 0x20;
    if (!quote) {
        sy_buf_append(b, v, n);
        return;
    }
    SY_BUF_LIT(b, "\"");
    sy_buf_json_escape(b, v, n);
    SY_BUF_LIT(b, "\"");
}

struct facts {
    const char *k[8];
    const char *v[8];
    size_t nv;
};

void sy__reqlog_format(const struct sy_logconf *lc, const struct sy_logrec *r, double now, struct sy_buf *b)
{
    int redact = lc->redact_user_api_key_info || (r->flags & SY_LOGREC_REDACT_KEY);
    const char *err = r->error_message;
    size_t errn = err ? cut_utf8(err, ERR_MAX) : 0;
    double lat_ms = (r->end_s - r->start_s) * 1000;
    double ttft_ms = r->completion_start_s > 0 ? (r->completion_start_s - r->start_s) * 1000 : -1;
    if (lat_ms < 0)
        lat_ms = 0;
    struct facts f = {0};
#define FACT(key, val)         \
    do {                       \
        if (val) {             \
            f.k[f.nv] = key;   \
            f.v[f.nv++] = val; \
        }                      \
    } while (0)
    FACT("id", r->id);
    if (!redact) {
        FACT("key_alias", r->key_alias);
        FACT("team", r->team_alias ? r->team_alias : r->team_id);
    }
    FACT("model_group", r->model_group ? r->model_group : r->model);
    FACT("deployment", r->model_id);
    FACT("route", r->route);
#undef FACT
    /* the message: the text line's fields */
    struct sy_buf m;
    sy_buf_init(&m, 64 * 1024);
    SY_BUF_LIT(&m, "request");
    for (size_t i = 0; i < f.nv; i++)
        kv_text(&m, f.k[i], f.v[i], strlen(f.v[i]));
    sy_buf_printf(&m, " status=%d attempts=%zu latency_ms=%.0f", r->http_status, r->nattempts, lat_ms);
    if (ttft_ms >= 0)
        sy_buf_printf(&m, " ttft_ms=%.0f", ttft_ms);
    sy_buf_printf(&m, " prompt_tokens=%llu completion_tokens=%llu", (unsigned long long)r->prompt_tokens,
                  (unsigned long long)r->completion_tokens);
    if (r->flags & SY_LOGREC_COST_KNOWN)
        sy_buf_printf(&m, " cost=%.10g", r->cost);
    if (r->flags & SY_LOGREC_CACHE_HIT)
        SY_BUF_LIT(&m, " cache_hit=true");
    if (r->flags & SY_LOGREC_STREAM)
        SY_BUF_LIT(&m, " stream=true");
    if (r->error_class)
        kv_text(&m, "error_class", r->error_class, strlen(r->error_class));
    if (err)
        kv_text(&m, "error", err, errn);
    int fail = (r->flags & SY_LOGREC_FAILURE) != 0;
    struct timespec ts;
    ts.tv_sec = (time_t)now;
    ts.tv_nsec = (long)((now - (double)ts.tv_sec) * 1e9);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    if (!lc->json_logs) {
        sy_buf_printf(b, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                      tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, fail ? "WARN" : "INFO");
        sy_buf_append_buf(b, &m);
        sy_buf_free(&m);
        return;
    }
    char stamp[80];
    snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%06ld", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec, (ts.tv_nsec / 1000) % 1000000);
    struct sy_jw w;
    sy_jw_init(&w, b);
    sy_jw_obj(&w);
    sy_jw_key(&w, "message");
    sy_jw_str(&w, m.p ? m.p : "", m.len);
    sy_jw_key(&w, "level");
    sy_jw_cstr(&w, fail ? "WARNING" : "INFO");
    sy_jw_key(&w, "timestamp");
    sy_jw_cstr(&w, stamp);
    for (size_t i = 0; i < f.nv; i++) {
        sy_jw_key(&w, f.k[i]);
        sy_jw_cstr(&w, f.v[i]);
    }
    sy_jw_key(&w, "status");
    sy_jw_int(&w, r->http_status);
    sy_jw_key(&w, "attempts");
    sy_jw_int(&w, (int64_t)r->nattempts);
    sy_jw_key(&w, "latency_ms");
    sy_jw_double(&w, (double)(int64_t)(lat_ms * 1000) / 1000);
    if (ttft_ms >= 0) {
        sy_jw_key(&w, "ttft_ms");
        sy_jw_double(&w, (double)(int64_t)(ttft_ms * 1000) / 1000);
    }
    sy_jw_key(&w, "prompt_tokens");
    sy_jw_int(&w, (int64_t)r->prompt_tokens);
    sy_jw_key(&w, "completion_tokens");
    sy_jw_int(&w, (int64_t)r->completion_tokens);
    if (r->flags & SY_LOGREC_COST_KNOWN) {
        sy_jw_key(&w, "cost");
        sy_jw_double(&w, r->cost);
    }
    if (r->error_class) {
        sy_jw_key(&w, "error_class");
        sy_jw_cstr(&w, r->error_class);
    }
    if (err) {
        sy_jw_key(&w, "error");
        sy_jw_str(&w, err, errn);
    }
    sy_jw_end(&w);
    sy_buf_free(&m);
}

void sy__reqlog_write(const struct sy_logconf *lc, const struct sy_logrec *r)
{
    struct sy_buf b;
    sy_buf_init(&b, 128 * 1024);
    sy__reqlog_format(lc, r, sy_wall_now(), &b);
    SY_BUF_LIT(&b, "\n");
    if (!sy_buf_failed(&b)) {
        ssize_t w = write(2, b.p, b.len);
        (void)w;
    }
    sy_buf_free(&b);
}
