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
#include "admin/admin.h"
#include "admin/validate.h"
#include "gateway/offload.h"
#include "keys/keys.h"
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

/* ---- internal users (a DB thread) -------------------------------------------
 *
 * A user logs in with their user_id or user_email and the password stored in
 * LiteLLM_UserTable.password, compared as LiteLLM's login does: equal to the
 * text, or to its sha256 hex (hash_token; /user/new and /user/update store
 * that). The session is a virtual key made for the user by the management
 * API's own /key/generate (duration = the session TTL, metadata
 * switchyard_ui_session), so every route sees the user's role and scope as
 * for any of their keys; the cookie names its sha256. Logout deletes it. */
struct ujob {
    char user[256], pass[1024];
    long long ttl;
    int status; /* 0 ok, else the HTTP status of the refusal */
    char user_id[256], role[64], token[65];
    char *inval[SY_ADMIN_MAX_INVAL];
    int ninval;
};

/* The columns user_id, user_role and password of the rows a query returns. */
struct urow {
    int n, has_pw;
    char uid[256], role[64], pw[1024];
};

static int urow_cb(void *ud, const struct sy_srow *r)
{
    struct urow *u = ud;
    if (u->n++)
        return 0;
    const char *id = sy_srow_text(r, "user_id"), *ro = sy_srow_text(r, "user_role"), *pa = sy_srow_text(r, "password");
    snprintf(u->uid, sizeof u->uid, "%s", id ? id : "");
    snprintf(u->role, sizeof u->role, "%s", ro && *ro ? ro : "internal_user_viewer");
    snprintf(u->pw, sizeof u->pw, "%s", pa ? pa : "");
    u->has_pw = id && pa && *pa;
    return 0;
}

/* 1 and the row when exactly one user matches (an email two users share
 * names nobody), 0 none, -1 the database failed. */
static int user_row(struct sy_store *st, const char *sql, const char *v, struct urow *u)
{
    struct sy_sval p[1] = {sy_sv_text(v)};
    memset(u, 0, sizeof *u);
    int rc = sy_store_exec(st, sql, 1, p, urow_cb, u);
    if (rc < 0)
        return -1;
    return u->n == 1 && u->has_pw;
}

static void jstr(struct sy_buf *b, const char *s)
{
    SY_BUF_LIT(b, "\"");
    sy_buf_json_escape(b, s, strlen(s));
    SY_BUF_LIT(b, "\"");
}

/* Run a management route as the master key would (admin/admin.h), on this DB thread. */
static int admin_call(struct sy_store *st, struct sy_call *c, struct ujob *j, int method, const char *path,
                      const char *body, struct sy_buf *out)
{
    int known = 0;
    const struct sy_admin_route *rt = sy_admin_match(method, path, strlen(path), &known);
    if (!rt)
        return -1;
    struct sy_admin_ctx a;
    memset(&a, 0, sizeof a);
    a.method = method;
    a.path = path;
    a.query = "";
    a.body = body;
    a.body_len = strlen(body);
    a.is_admin = a.is_master = 1;
    a.caller_role = SY_ROLE_PROXY_ADMIN;
    a.now = (double)time(NULL);
    a.table = &c->g->table;
    a.master_key = c->g->master_key;
    a.master_key_len = c->g->master_key_len;
    sy_buf_init(&a.out, 1u << 20);
    if (sy_admin_validate(&a) == 0)
        rt->fn(st, &a);
    for (int i = 0; i < a.ninval; i++) {
        if (j->ninval < SY_ADMIN_MAX_INVAL)
            j->inval[j->ninval++] = a.inval[i];
        else
            free(a.inval[i]);
    }
    *out = a.out;
    return a.status && a.status != 200 ? -1 : 0;
}

static void ulogin_run(struct sy_store *st, struct sy_call *c, void *arg)
{
    struct ujob *j = arg;
    struct urow u;
    j->status = 401;
    int f =
        user_row(st, "SELECT user_id, user_role, password FROM \"LiteLLM_UserTable\" WHERE user_id = $1", j->user, &u);
    if (f == 0)
        f = user_row(st, "SELECT user_id, user_role, password FROM \"LiteLLM_UserTable\" WHERE user_email = $1",
                     j->user, &u);
    if (f < 0) {
        j->status = 503;
        return;
    }
    unsigned char d[SHA256_DIGEST_LENGTH];
    char hx[65];
    SHA256((const unsigned char *)j->pass, strlen(j->pass), d);
    sy_hex_encode(hx, d, sizeof d);
    int ok =
        f == 1 && (sy_ui_ct_eq(j->pass, strlen(j->pass), u.pw, strlen(u.pw)) | sy_ui_ct_eq(hx, 64, u.pw, strlen(u.pw)));
    snprintf(j->user_id, sizeof j->user_id, "%s", u.uid);
    snprintf(j->role, sizeof j->role, "%s", u.role);
    OPENSSL_cleanse(&u, sizeof u);
    OPENSSL_cleanse(j->pass, sizeof j->pass);
    if (!ok)
        return;
    struct sy_buf body, out;
    sy_buf_init(&body, 4096);
    SY_BUF_LIT(&body, "{\"user_id\":");
    jstr(&body, j->user_id);
    sy_buf_printf(&body, ",\"duration\":\"%llds\",\"metadata\":{\"switchyard_ui_session\":true}}", j->ttl);
    int rc = sy_buf_failed(&body) ? -1 : admin_call(st, c, j, HTTP_POST, "/key/generate", body.p, &out);
    sy_buf_free(&body);
    const char *t = rc == 0 && out.p ? strstr(out.p, "\"token\":\"") : NULL;
    if (t && strlen(t + 9) >= 64 && t[9 + 64] == '"') {
        memcpy(j->token, t + 9, 64);
        j->token[64] = 0;
        j->status = 0;
    } else {
        j->status = 500;
    }
    sy_buf_free(&out);
}

static void publish_inval(struct sy_call *c, struct ujob *j)
{
    for (int i = 0; i < j->ninval; i++) {
        sy_gateway_invalidate(c->w, j->inval[i]);
        free(j->inval[i]);
    }
    j->ninval = 0;
}

static void login_user_ok(struct sy_call *c, const char *salt, struct ujob *j);

static void ulogin_done(struct sy_call *c, void *arg)
{
    struct ujob *j = arg;
    publish_inval(c, j);
    if (j->status == 0) {
        login_user_ok(c, sy_ui_salt(c->g->master_key), j);
        return;
    }
    if (j->status == 401) {
        char ukey[300];
        char akey[80], addr[64];
        snprintf(ukey, sizeof ukey, "u:%s", j->user);
        snprintf(akey, sizeof akey, "a:%s", sy_req_peer(c->req, addr, sizeof addr) == 0 ? addr : "?");
        sy_ui_login_failed(ukey, (long long)time(NULL));
        sy_ui_login_failed(akey, (long long)time(NULL));
        auth_error(c, 401, "Invalid credentials used to access UI.");
        return;
    }
    sy_call_error(c, j->status, "internal_server_error", "None",
                  j->status == 503 ? "No connected db." : "the session could not be created", NULL, 0);
}

/* The user session named by a cookie: its key's user and role (a DB thread). */
static void usess_run(struct sy_store *st, struct sy_call *c, void *arg)
{
    struct ujob *j = arg;
    struct sy_sval p[1] = {sy_sv_text(j->token)};
    struct urow u;
    memset(&u, 0, sizeof u);
    j->status = 401;
    int rc = sy_store_exec(st,
                           "SELECT t.user_id AS user_id, u.user_role AS user_role, 'x' AS password FROM "
                           "\"LiteLLM_VerificationToken\" t LEFT JOIN \"LiteLLM_UserTable\" u ON u.user_id = "
                           "t.user_id WHERE t.token = $1",
                           1, p, urow_cb, &u);
    if (rc < 0)
        j->status = 503;
    else if (u.n == 1 && u.has_pw) {
        snprintf(j->user_id, sizeof j->user_id, "%s", u.uid);
        snprintf(j->role, sizeof j->role, "%s", u.role);
        j->status = 0;
    }
}

static void usess_done(struct sy_call *c, void *arg)
{
    struct ujob *j = arg;
    if (j->status) {
        if (j->status == 401)
            auth_error(c, 401, "Authentication Error, not logged in (the session has ended)");
        else
            sy_call_error(c, j->status, "internal_server_error", "None", "No connected db.", NULL, 0);
        return;
    }
    const char *salt = sy_ui_salt(c->g->master_key);
    struct sy_ui_sess s = {.kind = SY_UI_USER, .exp = j->ttl};
    memcpy(s.id, j->token, 65);
    char csrf[65], exp[32];
    sy_ui_csrf(salt, &s, csrf);
    iso(j->ttl, exp);
    struct sy_buf b;
    sy_buf_init(&b, 4096);
    SY_BUF_LIT(&b, "{\"user_id\":");
    jstr(&b, j->user_id);
    SY_BUF_LIT(&b, ",\"user_role\":");
    jstr(&b, j->role);
    sy_buf_printf(&b, ",\"is_admin\":%s,\"csrf_token\":\"%s\",\"expires_at\":\"%s\",\"auth\":true}",
                  strcmp(j->role, "proxy_admin") == 0 ? "true" : "false", csrf, exp);
    reply_json(c, 200, "cache-control: no-store\r\n", 25, &b);
    sy_buf_free(&b);
}

/* Logout of a user session: its key deleted (a DB thread). */
static void ulogout_run(struct sy_store *st, struct sy_call *c, void *arg)
{
    struct ujob *j = arg;
    struct sy_buf body, out;
    sy_buf_init(&body, 256);
    sy_buf_printf(&body, "{\"keys\":[\"%s\"]}", j->token);
    admin_call(st, c, j, HTTP_POST, "/key/delete", body.p, &out);
    sy_buf_free(&out);
    sy_buf_free(&body);
}

static void ulogout_done(struct sy_call *c, void *arg)
{
    static const char clear[] = "set-cookie: " SY_UI_COOKIE "=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0\r\n"
                                "cache-control: no-store\r\n";
    publish_inval(c, arg);
    struct sy_buf b;
    sy_buf_init(&b, 64);
    SY_BUF_LIT(&b, "{\"message\":\"logged out\"}");
    reply_json(c, 200, clear, sizeof clear - 1, &b);
    sy_buf_free(&b);
}

static struct ujob *ujob_new(struct sy_call *c)
{
    struct ujob *j = sy_arena_alloc(&c->req->arena, sizeof *j);
    if (j)
        memset(j, 0, sizeof *j);
    return j;
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
    int rc = sy_ui_req_session(c->req, salt, now_s(), &s);
    struct ujob *j;
    if (rc == 1 && s.kind == SY_UI_USER && sy_gw.db && (j = ujob_new(c)) != NULL) {
        sy_buf_free(&b);
        memcpy(j->token, s.id, 65);
        j->ttl = s.exp; /* the session's end, for the answer */
        if (sy_call_db(c, usess_run, usess_done, j) != 0) {
            sy_call_error(c, 503, "internal_server_error", "None", "No connected db.", NULL, 0);
            return SY_DONE;
        }
        return SY_AGAIN;
    }
    if (rc != 1 || s.kind != SY_UI_MASTER) {
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
        sy_call_error(c, 429, "rate_limit_error", "None", "Too many failed login attempts; try again in a minute",
                      "retry-after: 60\r\n", 17);
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
    if (uok && pok)
        return login_ok(c, sy_ui_salt(c->g->master_key));
    struct ujob *j;
    if (!uok && sy_gw.db && (j = ujob_new(c)) != NULL) { /* an internal user (a DB thread) */
        snprintf(j->user, sizeof j->user, "%s", user);
        memcpy(j->pass, pass, sizeof j->pass);
        OPENSSL_cleanse(pass, sizeof pass);
        j->ttl = session_ttl(c);
        if (sy_call_db(c, ulogin_run, ulogin_done, j) != 0) {
            OPENSSL_cleanse(j->pass, sizeof j->pass);
            sy_call_error(c, 503, "internal_server_error", "None", "No connected db.", NULL, 0);
            return SY_DONE;
        }
        return SY_AGAIN;
    }
    OPENSSL_cleanse(pass, sizeof pass);
    sy_ui_login_failed(ukey, now);
    sy_ui_login_failed(akey, now);
    auth_error(c, 401, "Invalid credentials used to access UI.");
    return SY_DONE;
}

static void login_user_ok(struct sy_call *c, const char *salt, struct ujob *j)
{
    struct sy_ui_sess s = {.kind = SY_UI_USER, .exp = now_s() + j->ttl};
    memcpy(s.id, j->token, 65);
    char tok[SY_UI_TOKEN_MAX + 1], exp[32];
    if (sy_ui_token_make(salt, &s, tok, sizeof tok) < 0) {
        sy_call_error(c, 500, "internal_server_error", "None", "session token", NULL, 0);
        return;
    }
    iso(s.exp, exp);
    char h[512];
    int form = form_post(c->req);
    int hn = snprintf(h, sizeof h,
                      "set-cookie: " SY_UI_COOKIE "=%s; Path=/; HttpOnly; SameSite=Strict; Max-Age=%lld%s\r\n"
                      "cache-control: no-store\r\n%s",
                      tok, j->ttl, over_tls(c->req) ? "; Secure" : "", form ? "location: /ui/\r\n" : "");
    struct sy_buf b;
    sy_buf_init(&b, 1024);
    SY_BUF_LIT(&b, "{\"user_id\":");
    jstr(&b, j->user_id);
    SY_BUF_LIT(&b, ",\"user_role\":");
    jstr(&b, j->role);
    sy_buf_printf(&b, ",\"expires_at\":\"%s\"}", exp);
    reply_json(c, form ? 303 : 200, h, (size_t)hn, &b);
    sy_buf_free(&b);
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
    struct ujob *j;
    if (rc == 1 && s.kind == SY_UI_USER && sy_gw.db && (j = ujob_new(c)) != NULL) {
        memcpy(j->token, s.id, 65);
        if (sy_call_db(c, ulogout_run, ulogout_done, j) == 0)
            return SY_AGAIN;
    }
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
