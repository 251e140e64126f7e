/* accesslog.c - JSON access log: one line per request, written off the request path.
 *
 * The caller's thread formats the line into a stack buffer (every string field
 * is escaped and cut to FIELD_MAX bytes, so a line always fits) and appends it
 * to the `active` half of a double buffer under a mutex held only for a
 * memcpy. The writer thread swaps the halves and writes the whole batch with
 * one write(2) (looping on short writes). When the active half is full the
 * line is dropped and counted; a caller never waits for the disk.
 *
 * Line: {"ts":"2025-01-02T03:04:05.678Z","call_id":"...","route":"...",
 *        "model_group":"...","model":"...","deployment":"...","provider":"...",
 *        "status":200,"total_ms":12.345,"llm_ms":10.100,"overhead_ms":2.245,
 *        ["ttft_ms":1.5,] "prompt_tokens":10,"completion_tokens":20
 *        [,"exception_class":"RateLimitError"]}
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/errors.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/utf8.h"
#include "metrics/metrics.h"

#define QUEUE_BYTES    (4u << 20) /* per half */
#define FIELD_MAX      256        /* escaped bytes kept per string field */
#define LINE_MAX_BYTES 4096       /* 8 strings * FIELD_MAX + numbers, with room */

static struct {
    int on; /* atomic: lines are accepted */
    int fd, own_fd;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char *active, *spare;
    size_t alen;
    int closing;
    uint64_t dropped; /* atomic */
} L = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .fd = -1};

uint64_t sy_accesslog_dropped(void)
{
    return __atomic_load_n(&L.dropped, __ATOMIC_RELAXED);
}

static void drop(uint64_t n)
{
    __atomic_fetch_add(&L.dropped, n, __ATOMIC_RELAXED);
}

/* Append "<escaped s>" (with quotes) at p; stops before FIELD_MAX escaped
 * bytes, never inside an escape or a UTF-8 sequence. Returns the new end. */
static char *put_str(char *p, const char *s)
{
    *p++ = '"';
    const unsigned char *u = (const unsigned char *)(s ? s : "");
    size_t left = strlen((const char *)u), used = 0;
    while (left) {
        char tmp[8];
        size_t tn, in = 1;
        unsigned c = u[0];
        if (c == '"' || c == '\\') {
            tmp[0] = '\\', tmp[1] = (char)c, tn = 2;
        } else if (c == '\n') {
            memcpy(tmp, "\\n", 2), tn = 2;
        } else if (c == '\r') {
            memcpy(tmp, "\\r", 2), tn = 2;
        } else if (c == '\t') {
            memcpy(tmp, "\\t", 2), tn = 2;
        } else if (c < 0x20 || c == 0x7f) {
            memcpy(tmp, "\\u00", 4), tmp[4] = sy_hex_lc[c >> 4], tmp[5] = sy_hex_lc[c & 15], tn = 6;
        } else if (c < 0x80) {
            tmp[0] = (char)c, tn = 1;
        } else if ((in = sy_utf8_seq(u, left)) != 0) {
            memcpy(tmp, u, in), tn = in;
        } else {
            memcpy(tmp, "\\ufffd", 6), tn = 6, in = 1; /* invalid byte */
        }
        if (used + tn > FIELD_MAX)
            break;
        memcpy(p, tmp, tn);
        p += tn, used += tn, u += in, left -= in;
    }
    *p++ = '"';
    return p;
}

/* Milliseconds for a duration in seconds, clamped so the text stays short. */
static double ms(double s)
{
    if (!(s >= 0))
        return 0; /* negative or NaN */
    return s > 1e9 ? 1e12 : s * 1e3;
}

static size_t format_line(char *line, const struct sy_metric_req *r, const char *call_id, const char *deployment)
{
    char *p = line;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    p += snprintf(p, 64, "{\"ts\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ\",\"call_id\":", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
    p = put_str(p, call_id);
    static const char *const names[] = {
        ",\"route\":", ",\"model_group\":", ",\"model\":", ",\"deployment\":", ",\"provider\":"};
    const char *vals[] = {r->route, r->requested_model, r->model, deployment ? deployment : r->model_id,
                          r->api_provider};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        size_t n = strlen(names[i]);
        memcpy(p, names[i], n);
        p = put_str(p + n, vals[i]);
    }
    p += snprintf(p, 160, ",\"status\":%d,\"total_ms\":%.3f,\"llm_ms\":%.3f,\"overhead_ms\":%.3f", r->status,
                  ms(r->total_s), ms(r->llm_s), ms(r->overhead_s));
    if (r->ttft_s >= 0)
        p += snprintf(p, 48, ",\"ttft_ms\":%.3f", ms(r->ttft_s));
    p += snprintf(p, 96, ",\"prompt_tokens\":%llu,\"completion_tokens\":%llu", (unsigned long long)r->prompt_tokens,
                  (unsigned long long)r->completion_tokens);
    if (r->exception_class && *r->exception_class) {
        memcpy(p, ",\"exception_class\":", 19);
        p = put_str(p + 19, r->exception_class);
    }
    *p++ = '}';
    *p++ = '\n';
    return (size_t)(p - line);
}

void sy_accesslog_write(const struct sy_metric_req *r, const char *call_id, const char *deployment)
{
    if (!r || !__atomic_load_n(&L.on, __ATOMIC_ACQUIRE))
        return;
    char line[LINE_MAX_BYTES];
    size_t n = format_line(line, r, call_id, deployment);
    pthread_mutex_lock(&L.mu);
    if (!L.active || L.closing || L.alen + n > QUEUE_BYTES) {
        pthread_mutex_unlock(&L.mu);
        drop(1);
        return;
    }
    int was_empty = L.alen == 0;
    memcpy(L.active + L.alen, line, n);
    L.alen += n;
    if (was_empty)
        pthread_cond_signal(&L.cv);
    pthread_mutex_unlock(&L.mu);
}

static void write_batch(const char *p, size_t n)
{
    const char *start = p;
    size_t total = n;
    while (n) {
        ssize_t w = write(L.fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            /* count the lines lost from here to the end of the batch */
            uint64_t lines = 0;
            for (size_t i = (size_t)(p - start); i < total; i++)
                lines += start[i] == '\n';
            drop(lines);
            return;
        }
        p += w, n -= (size_t)w;
    }
}

static void *writer_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&L.mu);
    for (;;) {
        while (L.alen == 0 && !L.closing)
            pthread_cond_wait(&L.cv, &L.mu);
        if (L.alen == 0 && L.closing)
            break;
        char *batch = L.active;
        size_t n = L.alen;
        L.active = L.spare;
        L.spare = batch;
        L.alen = 0;
        pthread_mutex_unlock(&L.mu);
        write_batch(batch, n);
        pthread_mutex_lock(&L.mu);
    }
    pthread_mutex_unlock(&L.mu);
    return NULL;
}

int sy_accesslog_open(const char *path)
{
    if (!path || L.on)
        return SY_EINVAL;
    int fd = 2, own = 0;
    if (strcmp(path, "-") != 0) {
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) {
            sy_error("access log: cannot open %s: %s", path, strerror(errno));
            return SY_EINTERNAL;
        }
        own = 1;
    }
    L.active = malloc(QUEUE_BYTES);
    L.spare = malloc(QUEUE_BYTES);
    if (!L.active || !L.spare)
        goto fail;
    L.fd = fd, L.own_fd = own, L.alen = 0, L.closing = 0;
    if (pthread_create(&L.thread, NULL, writer_main, NULL) != 0) {
        sy_error("access log: cannot start writer thread");
        goto fail;
    }
    __atomic_store_n(&L.on, 1, __ATOMIC_RELEASE);
    return 0;
fail:
    free(L.active), free(L.spare);
    L.active = L.spare = NULL;
    if (own)
        close(fd);
    L.fd = -1;
    return SY_EINTERNAL;
}

void sy_accesslog_close(void)
{
    if (!__atomic_load_n(&L.on, __ATOMIC_ACQUIRE))
        return;
    __atomic_store_n(&L.on, 0, __ATOMIC_RELEASE);
    pthread_mutex_lock(&L.mu);
    L.closing = 1;
    pthread_cond_signal(&L.cv);
    pthread_mutex_unlock(&L.mu);
    pthread_join(L.thread, NULL); /* the writer drains everything queued first */
    pthread_mutex_lock(&L.mu);    /* a late writer sees active == NULL and drops */
    if (L.own_fd)
        close(L.fd);
    L.fd = -1;
    free(L.active), free(L.spare);
    L.active = L.spare = NULL;
    pthread_mutex_unlock(&L.mu);
}
