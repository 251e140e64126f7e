/* oauth.c - Google OAuth2 access tokens for Vertex AI deployments.
 *
 * A service account's token is fetched with a signed JWT (providers/gauth.h)
 * from the account's token_uri, cached process-wide (one entry per account,
 * shared by every worker and kept across config reloads), and refreshed in
 * the background when it is within REFRESH_S of expiry. At most one fetch per
 * account runs at a time: requests that find no valid token wait (proxy.c
 * polls every few ms on its own loop) while the worker that started the fetch
 * completes it. A failed fetch is remembered for FAIL_HOLD_S so a broken
 * credential does not turn every request into a token request.
 *
 *   state of an entry      request asks                  result
 *   ---------------------  ----------------------------  --------------------------------
 *   token valid > 5 min    copy                          1
 *   token valid < 5 min    copy, start refresh if idle   1
 *   no token, fetching     -                             0 (ask again)
 *   no token, failed < 5s  -                             -1 with the fetch's error
 *   no token, idle         start fetch                   0
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/errors.h"
#include "core/log.h"
#include "gateway/xlate.h"
#include "providers/gauth.h"

#define REFRESH_S       300
#define MIN_LEFT_S      60
#define FAIL_HOLD_S     5
#define FETCH_TIMEOUT_S 20

struct tentry {
    struct tentry *next;
    char *cred; /* service-account JSON (the key) */
    char tok[4096];
    int64_t exp; /* unix seconds */
    int fetching;
    char err[384];
    int64_t fail_until;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct tentry *entries;

struct fetch {
    struct tentry *e;
    struct sy_buf body, resp;
    uv_buf_t part;
    int status;
};

static int64_t now_s(void)
{
    return (int64_t)time(NULL);
}

static void done_locked(struct tentry *e, const char *tok, int64_t expires_in, const char *err)
{
    e->fetching = 0;
    if (tok) {
        snprintf(e->tok, sizeof e->tok, "%s", tok);
        e->exp = now_s() + (expires_in > 0 ? expires_in : 3600);
        e->err[0] = 0;
        e->fail_until = 0;
    } else {
        snprintf(e->err, sizeof e->err, "%s", err);
        e->fail_until = now_s() + FAIL_HOLD_S;
        sy_warn("vertex_ai: OAuth2 token fetch failed: %s", err);
    }
}

static int f_head(void *ud, int status, const struct sy_uheader *h, size_t nh)
{
    ((struct fetch *)ud)->status = status;
    return 0;
}

static int f_body(void *ud, const char *p, size_t n)
{
    struct fetch *f = ud;
    sy_buf_append(&f->resp, p, n); /* capped: a longer answer is cut and fails to parse */
    return 0;
}

static void f_done(void *ud, int err)
{
    struct fetch *f = ud;
    char tok[4096] = "", msg[384] = "";
    int64_t exp = 0;
    if (err)
        snprintf(msg, sizeof msg, "token endpoint unreachable (%s)", sy_err_name(err));
    else if (f->status != 200)
        snprintf(msg, sizeof msg, "token endpoint answered %d: %.200s", f->status, f->resp.p ? f->resp.p : "");
    else if (sy_gauth_parse_token(f->resp.p ? f->resp.p : "", f->resp.len, tok, sizeof tok, &exp) != 0 &&
             !sy_gauth_token_error(f->resp.p ? f->resp.p : "", f->resp.len, msg, sizeof msg))
        snprintf(msg, sizeof msg, "token endpoint answer not understood");
    pthread_mutex_lock(&mu);
    done_locked(f->e, msg[0] ? NULL : tok, exp, msg);
    pthread_mutex_unlock(&mu);
    sy_buf_free(&f->body);
    sy_buf_free(&f->resp);
    free(f);
}

static const struct sy_ureq_cbs fcbs = {f_head, f_body, f_done};

/* Start a fetch for e on w's loop (e->fetching already set by the caller). */
static void start_fetch(struct sy_worker *w, struct tentry *e)
{
    char err[256] = "";
    struct sy_gauth_sa sa;
    struct fetch *f = calloc(1, sizeof *f);
    if (!f) {
        pthread_mutex_lock(&mu);
        done_locked(e, NULL, 0, "out of memory");
        pthread_mutex_unlock(&mu);
        return;
    }
    f->e = e;
    sy_buf_init(&f->body, 64 << 10);
    sy_buf_init(&f->resp, 64 << 10);
    memset(&sa, 0, sizeof sa);
    int rc = sy_gauth_parse_sa(e->cred, strlen(e->cred), &sa, err, sizeof err);
    if (rc == 0) {
        rc = sy_gauth_request_body(&sa, now_s(), NULL, &f->body);
        if (rc)
            snprintf(err, sizeof err, "could not sign the token request (private_key unusable?)");
    }
    struct sy_ureq_opts o = {0};
    if (rc == 0) {
        f->part = uv_buf_init(f->body.p, (unsigned)f->body.len);
        o.url = sa.token_uri;
        o.method = "POST";
        o.headers = "Content-Type: application/x-www-form-urlencoded\r\nAccept: application/json\r\n";
        o.headers_len = strlen(o.headers);
        o.body = &f->part;
        o.nbody = 1;
        o.connect_timeout_s = 10;
        o.total_timeout_s = FETCH_TIMEOUT_S;
        if (!sy_ureq_start(w->upool, &o, &fcbs, f)) {
            rc = -1;
            snprintf(err, sizeof err, "bad token_uri");
        }
    }
    sy_gauth_sa_free(&sa);
    if (rc) {
        pthread_mutex_lock(&mu);
        done_locked(e, NULL, 0, err[0] ? err : "bad service account");
        pthread_mutex_unlock(&mu);
        sy_buf_free(&f->body);
        sy_buf_free(&f->resp);
        free(f);
    }
}

int sy_oauth_token(struct sy_worker *w, const struct sy_pconf *pc, char *tok, size_t cap, char *err, size_t errlen)
{
    if (!pc || !pc->credentials) {
        snprintf(err, errlen,
                 "no service-account credentials (set vertex_credentials or GOOGLE_APPLICATION_CREDENTIALS)");
        return -1;
    }
    int64_t now = now_s();
    int start = 0, ret;
    pthread_mutex_lock(&mu);
    struct tentry *e = entries;
    while (e && strcmp(e->cred, pc->credentials) != 0)
        e = e->next;
    if (!e) {
        e = calloc(1, sizeof *e);
        char *cred = e ? strdup(pc->credentials) : NULL;
        if (!cred) {
            free(e);
            pthread_mutex_unlock(&mu);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        e->cred = cred;
        e->next = entries;
        entries = e;
    }
    if (e->tok[0] && e->exp - now > MIN_LEFT_S) {
        snprintf(tok, cap, "%s", e->tok);
        if (e->exp - now < REFRESH_S && !e->fetching && e->fail_until <= now) {
            e->fetching = 1; /* refresh in the background; this request goes on */
            start = 1;
        }
        ret = 1;
    } else if (e->fetching) {
        ret = 0;
    } else if (e->fail_until > now) {
        snprintf(err, errlen, "%s", e->err);
        ret = -1;
    } else {
        e->fetching = 1;
        start = 1;
        ret = 0;
    }
    pthread_mutex_unlock(&mu);
    if (start)
        start_fetch(w, e);
    return ret;
}
