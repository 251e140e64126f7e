/* ui.h - the admin UI's server side (floor 3): the embedded assets (assets.c)
 * and the session primitives (session.c) the ui stage (stages/ui.c) and the
 * auth stage's cookie path build on.
 *
 * Assets: src/ui/embed.py writes, at build time, one row per file under ui/
 * (gzip -9 bytes, raw length, strong ETag) and the set's hash; the files are
 * served under /ui/_/<hash>/<path> (immutable) and index.html for /ui, /ui/
 * and every /ui/<route> without an extension (no-cache).
 *
 * Sessions: a cookie "sy_session" holds a signed, expiring token that names a
 * session and never holds a key:
 *
 *     <kind>.<id>.<expires>.<mac>
 *     kind     'm' a master (admin) session, id 32 hex chars chosen at login
 *              'u' a user session, id the sha256 (64 hex) of its virtual key
 *     expires  unix seconds
 *     mac      hex HMAC-SHA256 of "<kind>.<id>.<expires>" under a key derived
 *              from the salt key (sy_secret_salt: LITELLM_SALT_KEY else the
 *              master key) and the domain "switchyard ui session v1"
 *
 * The CSRF token is hex HMAC-SHA256 of the same text under a second key
 * (domain "switchyard ui csrf v1"): a page reads it from GET /ui/session and
 * sends it as x-csrf-token; a cross-site page can neither read the cookie
 * (HttpOnly) nor compute the token. Everything here is pure: no I/O, no
 * clock (callers pass now), fuzzed (tests/fuzz/ui/).
 */
#ifndef SY_UI_UI_H
#define SY_UI_UI_H

#include <stddef.h>

struct sy_req;

/* ---- assets (assets.c; the table is generated) ---------------------------- */
struct sy_ui_file {
    const char *path; /* below ui/, e.g. "app.js", "pages/keys.js" */
    const char *mime;
    const unsigned char *gz; /* gzip member */
    size_t gz_len, raw_len;
    const char *etag; /* strong, quoted */
};
extern const struct sy_ui_file sy_ui_files[]; /* sy_ui_nfiles rows, sorted by path */
extern const size_t sy_ui_nfiles;
extern const char sy_ui_hash[]; /* 12 hex: the prefix /ui/_/<hash> */

/* The row for path[0..n) (below ui/), or NULL. */
const struct sy_ui_file *sy_ui_file_find(const char *path, size_t n);
/* Answer a GET/HEAD of r->path (which starts with /ui): an asset, index.html
 * or 404. Ends the request. */
void sy_ui_serve(struct sy_req *r);
/* 1 when the Accept-Encoding value a[0..n) accepts gzip (q > 0, as "gzip",
 * "x-gzip" or "*" when gzip is not named), else 0. */
int sy_ui_accepts_gzip(const char *a, size_t n);
/* Inflate a gzip member into out[0..cap): the bytes written, or -1. */
long sy_ui_gunzip(const unsigned char *gz, size_t n, char *out, size_t cap);

/* ---- sessions (session.c) ------------------------------------------------- */
#define SY_UI_COOKIE      "sy_session"
#define SY_UI_TOKEN_MAX   192 /* a token's length is at most this (NUL excluded) */
#define SY_UI_DEFAULT_TTL 43200

enum sy_ui_kind { SY_UI_MASTER = 'm', SY_UI_USER = 'u' };

struct sy_ui_sess {
    int kind;       /* SY_UI_MASTER or SY_UI_USER */
    char id[65];    /* 32 hex (master) or 64 hex (user: the key's sha256) */
    long long exp;  /* unix seconds */
};

/* Write the token naming s, signed under salt, into out (NUL-terminated).
 * Its length, or -1 (bad kind/id, salt NULL or empty, cap too small). */
int sy_ui_token_make(const char *salt, const struct sy_ui_sess *s, char *out, size_t cap);
/* Verify the token v[0..n) under salt at time now: 0 and *s filled, -1 not a
 * token of ours (malformed, forged, other salt), -2 expired. */
int sy_ui_token_verify(const char *salt, const char *v, size_t n, long long now, struct sy_ui_sess *s);
/* The session's CSRF token (64 hex + NUL) into out; -1 without a salt. */
int sy_ui_csrf(const char *salt, const struct sy_ui_sess *s, char out[65]);
/* Constant-time equality of two byte strings (length may leak). */
int sy_ui_ct_eq(const char *a, size_t an, const char *b, size_t bn);

/* The cookie `name` in the Cookie header value h[0..n) (RFC 6265 pairs split
 * by ';', whitespace trimmed, a value in double quotes unquoted): 1 and
 * *v and *vn set, 0 absent, -1 named twice or malformed pair for it. Several
 * Cookie headers: call once per header and treat two hits as -1. */
int sy_ui_cookie_get(const char *h, size_t n, const char *name, const char **v, size_t *vn);

/* POST /login's body: application/x-www-form-urlencoded or JSON
 * {"username","password"} (ctype the Content-Type value). 0 and user/pass
 * NUL-terminated (truncated values are refused), -1 with *why a static reason
 * (not a form/JSON body, a field missing or not a string, a key given twice,
 * a value longer than its buffer, a NUL byte in a value). */
int sy_ui_login_parse(const char *ctype, size_t ctn, const char *body, size_t n, char *user, size_t ucap, char *pass,
                      size_t pcap, const char **why);

/* ---- a request's session (request.c) -------------------------------------
 * State shared by the ui and auth stages: master sessions revoked at logout
 * (in memory, per process, until they expire) and the login failure counts. */

/* The salt key for session tokens: LITELLM_SALT_KEY when set and non-empty,
 * else master (as core/secret.h's sy_secret_salt); NULL without either. */
const char *sy_ui_salt(const char *master);
/* The request's session cookie: 1 and *s (valid, unexpired, not revoked), 0 no
 * sy_session cookie, -1 a bad one (forged, expired, revoked, given twice). */
int sy_ui_req_session(const struct sy_req *r, const char *salt, long long now, struct sy_ui_sess *s);
/* The CSRF rule for a cookie-authenticated request: 1 when the method is
 * GET/HEAD/OPTIONS, or x-csrf-token equals the session's token and an Origin
 * header, when present, names the request's Host; else 0. */
int sy_ui_csrf_ok(const struct sy_req *r, const char *salt, const struct sy_ui_sess *s);
/* Revoke master session id (32 hex) until exp. */
void sy_ui_revoke(const char *id, long long exp);
int sy_ui_revoked(const char *id, long long now);
/* Login failures: at most SY_UI_LOGIN_FAILS per key ("u:<name>", "a:<addr>")
 * per minute. sy_ui_login_blocked: 1 when key is over the limit now. */
#define SY_UI_LOGIN_FAILS 10
int sy_ui_login_blocked(const char *key, long long now);
void sy_ui_login_failed(const char *key, long long now);

#endif
