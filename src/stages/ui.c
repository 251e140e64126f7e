/* ui.c - the admin UI's routes (route kind SY_RK_UI): its files, login,
 * logout and the session read. No auth stage runs here: each handler reads
 * the sy_session cookie itself (ui/ui.h), and the files hold no data.
 *
 *   GET /ui, /ui/...  the embedded files (ui/assets.c)
 *   GET /ui/session   {"user_id","user_role","is_admin","csrf_token","expires_at"}, or 401
 *   POST /login       form or JSON {"username","password"}: UI_USERNAME (env,
 *                     default "admin") with UI_PASSWORD (env) or the master
 *                     key → an admin session acting as the master key:
 *                     200 JSON {"user_id","user_role","expires_at"} (a form
 *                     post: 303 to /ui/) and Set-Cookie sy_session (HttpOnly,
 *                     SameSite=Strict, Path=/, Max-Age = the TTL; Secure over
 *                     TLS: X-Forwarded-Proto https). Wrong credentials: 401,
 *                     one message whatever was wrong; more than
 *                     SY_UI_LOGIN_FAILS failures a minute for a username or a
 *                     client address: 429 before any check.
 *   POST /logout      the CSRF rule, then the session is revoked and the
 *                     cookie cleared.
 *
 * Without a master key the API is open and so is the UI: /ui/session answers
 * an admin session with no cookie, and /login succeeds without one.
 */
#include "gateway/gateway.h"
#include "gateway/stage.h"

#include <http_parser.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "core/errors.h"
#include "core/hex.h"
#include "http/reply.h"
#include "http/server.h"
#include "store/store.h"
#include "ui/ui.h"

#define ADMIN_USER_ID "default_user_id" /* LiteLLM's LITELLM_PROXY_ADMIN_NAME */

static long long now_s(void)
{
    return (long long)time(NULL);
}

static int is_path(const struct sy_req *r, const char *p)
{
    size_t n = strlen(p);
    return r->path.n == n && memcmp(r->path.p, p, n) == 0;
}

static long long session_ttl(const struct sy_call *c)
{
    double t = c->g->cfg->ui_session_ttl_s; /* general_settings.switchyard_ui_session_ttl */
    return t >= 1 ? (long long)t : SY_UI_DEFAULT_TTL;
}

static void auth_error(struct sy_call *c, int status, const char *msg)
{
    c->out.exception_class = status == 401 ? "AuthenticationError" : NULL;
    sy_call_error(c, status, "auth_error", status == 401 ? "invalid_credentials" : "None", msg, NULL, 0);
}

static void iso(long long t, char out[32])
{
    sy_iso_time((double)t, out);
}

static void reply_json(struct sy_call *c, int status, const char *hdrs, size_t hn, struct sy_buf *b)
{
    if (sy_buf_failed(b))
        sy_call_error(c, 500, "internal_server_error", "None", "answer too large", NULL, 0);
    else
        sy_resp_simple(c->req, status, hdrs, hn, "application/json", b->p, b->len);
}

/* ---- GET /ui/session ---- */
static int session_get(struct sy_call *c)
{
    struct sy_buf b;
    sy_buf_init(&b, 4096);
    const char *salt = sy_ui_salt(c->g->master_key);
    if (!c->g->master_key) { /* no master key: open, as the API */
        SY_BUF_LIT(&b, "{\"user_id\":\"" ADMIN_USER_ID "\",\"user_role\":\"proxy_admin\",\"is_admin\":true,"
                       "\"csrf_token\":\"\",\"expires_at\":null,\"auth\":false}");
        reply_json(c, 200, "cache-control: no-store\r\n", 25, &b);
        sy_buf_free(&b);
        return SY_DONE;
    }
    struct sy_ui_sess s;
    if (sy_ui_req_session(c->req, salt, now_s(), &s) != 1 || s.kind != SY_UI_MASTER) {
        sy_buf_free(&b);
        auth_error(c, 401, "Authentication Error, not logged in (no valid session cookie)");
        return SY_DONE;
    }
    char csrf[65], exp[32];
    sy_ui_csrf(salt, &s, csrf);
    iso(s.exp, exp);
    sy_buf_printf(&b,
                  "{\"user_id\":\"" ADMIN_USER_ID "\",\"user_role\":\"proxy_admin\",\"is_admin\":true,"
                  "\"csrf_token\":\"%s\",\"expires_at\":\"%s\",\"auth\":true}",
                  csrf, exp);
    reply_json(c, 200, "cache-control: no-store\r\n", 25, &b);
    sy_buf_free(&b);
    return SY_DONE;
}

/* ---- POST /login ---- */
static int over_tls(const struct sy_req *r)
{
    struct sy_str p = sy_req_header(r, "x-forwarded-proto");
    return p.n >= 5 && strncasecmp(p.p, "https", 5) == 0 && (p.n == 5 || p.p[5] == ',' || p.p[5] == ' ');
}

static int form_post(const struct sy_req *r)
{
    struct sy_str ct = sy_req_header(r, "content-type");
    return ct.n >= 33 && strncasecmp(ct.p, "application/x-www-form-urlencoded", 33) == 0;
}

static int login_ok(struct sy_call *c, const char *salt)
{
    long long ttl = session_ttl(c);
    struct sy_ui_sess s = {.kind = SY_UI_MASTER, .exp = now_s() + ttl};
    unsigned char rnd[16];
    if (RAND_bytes(rnd, sizeof rnd) != 1) {
        sy_call_error(c, 500, "internal_server_error", "None", "no randomness for a session id", NULL, 0);
        return SY_DONE;
    }
    sy_hex_encode(s.id, rnd, sizeof rnd);
    char tok[SY_UI_TOKEN_MAX + 1], exp[32];
    if (sy_ui_token_make(salt, &s, tok, sizeof tok) < 0) {
        sy_call_error(c, 500, "internal_server_error", "None", "session token", NULL, 0);
        return SY_DONE;
    }
    iso(s.exp, exp);
    char h[512];
    int form = form_post(c->req);
    int hn = snprintf(h, sizeof h,
                      "set-cookie: " SY_UI_COOKIE "=%s; Path=/; HttpOnly; SameSite=Strict; Max-Age=%lld%s\r\n"
                      "cache-control: no-store\r\n%s",
                      tok, ttl, over_tls(c->req) ? "; Secure" : "", form ? "location: /ui/\r\n" : "");
    struct sy_buf b;
    sy_buf_init(&b, 1024);
    sy_buf_printf(&b, "{\"user_id\":\"" ADMIN_USER_ID "\",\"user_role\":\"proxy_admin\",\"expires_at\":\"%s\"}", exp);
    reply_json(c, form ? 303 : 200, h, (size_t)hn, &b);
    sy_buf_free(&b);
    return SY_DONE;
}

static int login(struct sy_call *c)
{
    char user[256], pass[1024];
    const char *why;
    struct sy_str ct = sy_req_header(c->req, "content-type");
    if (sy_ui_login_parse(ct.p, ct.n, c->req->body.p, c->req->body.len, user, sizeof user, pass, sizeof pass, &why) !=
        0) {
        sy_call_error(c, 400, "bad_request_error", "None", why, NULL, 0);
        return SY_DONE;
    }
    if (!c->g->master_key) {
        struct sy_buf b;
        sy_buf_init(&b, 256);
        SY_BUF_LIT(&b, "{\"user_id\":\"" ADMIN_USER_ID "\",\"user_role\":\"proxy_admin\",\"expires_at\":null}");
        reply_json(c, 200, NULL, 0, &b);
        sy_buf_free(&b);
        return SY_DONE;
    }
    long long now = now_s();
    char ukey[300], akey[80], addr[64];
    snprintf(ukey, sizeof ukey, "u:%s", user);
    snprintf(akey, sizeof akey, "a:%s", sy_req_peer(c->req, addr, sizeof addr) == 0 ? addr : "?");
    if (sy_ui_login_blocked(ukey, now) || sy_ui_login_blocked(akey, now)) {
        sy_call_error(c, 429, "rate_limit_error", "None",
                      "Too many failed login attempts; try again in a minute", "retry-after: 60\r\n", 17);
        return SY_DONE;
    }
    const char *ui_user = getenv("UI_USERNAME");
    const char *ui_pass = getenv("UI_PASSWORD");
    if (!ui_user || !*ui_user)
        ui_user = "admin";
    int uok = sy_ui_ct_eq(user, strlen(user), ui_user, strlen(ui_user));
    int pok = sy_ui_ct_eq(pass, strlen(pass), c->g->master_key, c->g->master_key_len);
    if (ui_pass && *ui_pass)
        pok |= sy_ui_ct_eq(pass, strlen(pass), ui_pass, strlen(ui_pass));
    OPENSSL_cleanse(pass, sizeof pass);
    if (uok && pok)
        return login_ok(c, sy_ui_salt(c->g->master_key));
    sy_ui_login_failed(ukey, now);
    sy_ui_login_failed(akey, now);
    auth_error(c, 401, "Invalid credentials used to access UI.");
    return SY_DONE;
}

/* ---- POST /logout ---- */
static int logout(struct sy_call *c)
{
    static const char clear[] = "set-cookie: " SY_UI_COOKIE "=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0\r\n"
                                "cache-control: no-store\r\n";
    const char *salt = sy_ui_salt(c->g->master_key);
    struct sy_ui_sess s;
    int rc = c->g->master_key ? sy_ui_req_session(c->req, salt, now_s(), &s) : 0;
    if (rc == 1 && !sy_ui_csrf_ok(c->req, salt, &s)) {
        sy_call_error(c, 403, "auth_error", "None", "CSRF check failed", NULL, 0);
        return SY_DONE;
    }
    if (rc == 1 && s.kind == SY_UI_MASTER)
        sy_ui_revoke(s.id, s.exp);
    struct sy_buf b;
    sy_buf_init(&b, 64);
    SY_BUF_LIT(&b, "{\"message\":\"logged out\"}");
    reply_json(c, 200, clear, sizeof clear - 1, &b);
    sy_buf_free(&b);
    return SY_DONE;
}

static int ui_run(struct sy_call *c)
{
    struct sy_req *r = c->req;
    if (r->method == HTTP_POST)
        return is_path(r, "/login") ? login(c) : logout(c);
    if (is_path(r, "/ui/session"))
        return session_get(c);
    sy_ui_serve(r);
    return SY_DONE;
}

const struct sy_stage sy_stage_ui = {
    .name = "ui",
    .routes = SY_RKB(SY_RK_UI),
    .run = ui_run,
};
