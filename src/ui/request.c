/* request.c - a request's UI session (the sy_session cookie), the CSRF rule,
 * and the two small process-wide tables behind login and logout.
 *
 * Revoked master sessions: a master session is only a signed token (it needs
 * no database), so logout records its id here until the token would have
 * expired anyway; a user session is revoked by deleting its virtual key. The
 * table is per process (every worker thread shares it) and bounded: when
 * full, the entry nearest to expiry is dropped (its token still expires).
 *
 * Login failures: a fixed table of (key hash, minute, count) slots with
 * LRU-by-minute replacement; keys are "u:<username>" and "a:<address>".
 * Per process, not across instances (documented in docs/ui.md).
 */
#include "ui/ui.h"

#include <http_parser.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/server.h"

const char *sy_ui_salt(const char *master)
{
    const char *s = getenv("LITELLM_SALT_KEY");
    if (s && *s)
        return s;
    return master && *master ? master : NULL;
}

int sy_ui_req_session(const struct sy_req *r, const char *salt, long long now, struct sy_ui_sess *s)
{
    int found = 0;
    const char *v = NULL;
    size_t vn = 0;
    for (size_t i = 0; i < r->nheaders; i++) {
        if (!sy_str_caseeq(r->headers[i].name, "cookie", 6))
            continue;
        const char *hv;
        size_t hn;
        int rc = sy_ui_cookie_get(r->headers[i].value.p, r->headers[i].value.n, SY_UI_COOKIE, &hv, &hn);
        if (rc < 0 || (rc > 0 && found))
            return -1;
        if (rc > 0) {
            found = 1;
            v = hv;
            vn = hn;
        }
    }
    if (!found)
        return 0;
    if (!salt || sy_ui_token_verify(salt, v, vn, now, s) != 0)
        return -1;
    if (s->kind == SY_UI_MASTER && sy_ui_revoked(s->id, now))
        return -1;
    return 1;
}

/* Does the Origin value (scheme://host[:port]) name host[0..hn)? */
static int origin_matches(struct sy_str o, struct sy_str host)
{
    const char *p = o.p, *e = o.p + o.n;
    const char *sep = o.n >= 3 ? memmem(p, o.n, "://", 3) : NULL;
    if (!sep || !host.p || !host.n)
        return 0;
    p = sep + 3;
    while (e > p && e[-1] == '/')
        e--;
    return (size_t)(e - p) == host.n && strncasecmp(p, host.p, host.n) == 0;
}

int sy_ui_csrf_ok(const struct sy_req *r, const char *salt, const struct sy_ui_sess *s)
{
    if (r->method == HTTP_GET || r->method == HTTP_HEAD || r->method == HTTP_OPTIONS)
        return 1;
    struct sy_str t = sy_req_header(r, "x-csrf-token");
    char want[65];
    if (!t.p || sy_ui_csrf(salt, s, want) != 0 || !sy_ui_ct_eq(t.p, t.n, want, 64))
        return 0;
    struct sy_str o = sy_req_header(r, "origin");
    if (o.p && !origin_matches(o, sy_req_header(r, "host")))
        return 0;
    return 1;
}

/* ---- revoked master sessions ---- */
#define NREVOKED 4096
static struct {
    char id[33];
    long long exp;
} g_revoked[NREVOKED];
static pthread_mutex_t g_rev_mu = PTHREAD_MUTEX_INITIALIZER;

void sy_ui_revoke(const char *id, long long exp)
{
    pthread_mutex_lock(&g_rev_mu);
    size_t pick = 0;
    for (size_t i = 0; i < NREVOKED; i++) {
        if (g_revoked[i].exp == 0) {
            pick = i;
            break;
        }
        if (g_revoked[i].exp < g_revoked[pick].exp)
            pick = i;
    }
    memcpy(g_revoked[pick].id, id, 32);
    g_revoked[pick].id[32] = 0;
    g_revoked[pick].exp = exp;
    pthread_mutex_unlock(&g_rev_mu);
}

int sy_ui_revoked(const char *id, long long now)
{
    int hit = 0;
    pthread_mutex_lock(&g_rev_mu);
    for (size_t i = 0; i < NREVOKED && !hit; i++) {
        if (g_revoked[i].exp && g_revoked[i].exp <= now)
            g_revoked[i].exp = 0; /* expired: the token no longer verifies anyway */
        else if (g_revoked[i].exp && memcmp(g_revoked[i].id, id, 32) == 0)
            hit = 1;
    }
    pthread_mutex_unlock(&g_rev_mu);
    return hit;
}

/* ---- login failures ---- */
#define NFAILS 1024
static struct {
    unsigned char h[16];
    long long minute;
    int count;
} g_fails[NFAILS];
static pthread_mutex_t g_fail_mu = PTHREAD_MUTEX_INITIALIZER;

static size_t fail_slot(const char *key, long long minute, int create)
{
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)key, strlen(key), d);
    size_t oldest = 0;
    for (size_t i = 0; i < NFAILS; i++) {
        if (g_fails[i].minute == minute && memcmp(g_fails[i].h, d, 16) == 0)
            return i;
        if (g_fails[i].minute < g_fails[oldest].minute)
            oldest = i;
    }
    if (!create)
        return NFAILS;
    memcpy(g_fails[oldest].h, d, 16);
    g_fails[oldest].minute = minute;
    g_fails[oldest].count = 0;
    return oldest;
}

int sy_ui_login_blocked(const char *key, long long now)
{
    pthread_mutex_lock(&g_fail_mu);
    size_t i = fail_slot(key, now / 60, 0);
    int blocked = i < NFAILS && g_fails[i].count >= SY_UI_LOGIN_FAILS;
    pthread_mutex_unlock(&g_fail_mu);
    return blocked;
}

void sy_ui_login_failed(const char *key, long long now)
{
    pthread_mutex_lock(&g_fail_mu);
    size_t i = fail_slot(key, now / 60, 1);
    g_fails[i].count++;
    pthread_mutex_unlock(&g_fail_mu);
}
