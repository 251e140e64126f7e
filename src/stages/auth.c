/* auth.c - the auth stages: master key and virtual keys (LiteLLM §1.2), /metrics auth.
 *
 * Present in a pipeline only when general_settings.master_key (or env
 * LITELLM_MASTER_KEY) is set; without one the proxy is open, as LiteLLM.
 * The key is read from the first present of: x-litellm-api-key (optional
 * "Bearer "), Authorization ("Bearer "/"bearer "/"Basic ": the rest is the
 * key itself, never base64-decoded, as LiteLLM's _get_bearer_token; another
 * scheme is no key), API-Key, x-api-key, x-goog-api-key,
 * Ocp-Apim-Subscription-Key (LiteLLM's get_api_key order: the first present
 * wins, the others are ignored); the master key is compared in constant time.
 * Any of those headers given twice is refused (401) rather than guessing which
 * copy a proxy in front meant; a key in the query string is read only on the
 * /gemini pass-through route (?key=, as Gemini's SDKs send it), when no header has one.
 *
 * Any other key is a virtual key when the database is on: its SHA-256 is
 * looked up in the key cache (keys/keys.h); a miss suspends the request while
 * a DB thread loads the key, never blocking the loop:
 *
 *   find_key ─ master? ──────────────────────────────▶ OK (admin)
 *      │ sha256 ─ sy_keys_get ─ hit ─ key checks ─────▶ OK / 401 / 400
 *      │            └ miss ─ sy_call_db(load) ─ put ─ key checks ─ resume
 *      └ DB unreachable: allow_requests_on_db_unavailable ? OK : 503
 *
 * The admin UI's session cookie (ui/ui.h): read only when no key header is
 * present (a key header wins, so API clients are unaffected and a request
 * without a cookie pays one header scan). A master session acts as the master
 * key; a user session names its virtual key's sha256, looked up as any key.
 * A cookie-authenticated request other than GET/HEAD/OPTIONS must carry the
 * session's x-csrf-token and, with an Origin header, come from the request's
 * Host: else 403 "CSRF check failed". A bad cookie is a 401 as a bad key.
 */
#include "gateway/gateway.h"
#include "gateway/stage.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/errors.h"
#include "core/hex.h"
#include "core/log.h"
#include "gateway/offload.h"
#include "http/reply.h"
#include "http/server.h"
#include "keys/keys.h"
#include "store/store.h"
#include "ui/ui.h"

static struct sy_str strip_prefix(struct sy_str v, const char *pfx)
{
    size_t n = strlen(pfx);
    if (v.n >= n && strncasecmp(v.p, pfx, n) == 0)
        return (struct sy_str){v.p + n, v.n - n};
    return v;
}

static const char *const KEY_HEADERS[] = {"x-litellm-api-key", "authorization",  "api-key",
                                          "x-api-key",         "x-goog-api-key", "ocp-apim-subscription-key"};

/* The credential header given more than once, or NULL. */
static const char *repeated_key_header(const struct sy_req *r)
{
    for (size_t k = 0; k < sizeof KEY_HEADERS / sizeof KEY_HEADERS[0]; k++) {
        size_t n = strlen(KEY_HEADERS[k]), seen = 0;
        for (size_t i = 0; i < r->nheaders; i++)
            if (sy_str_caseeq(r->headers[i].name, KEY_HEADERS[k], n) && ++seen > 1)
                return KEY_HEADERS[k];
    }
    return NULL;
}

/* The presented key; NULL view when none. */
static struct sy_str find_key(const struct sy_req *r)
{
    struct sy_str v = sy_req_header(r, KEY_HEADERS[0]);
    if (v.p && v.n)
        return strip_prefix(v, "Bearer ");
    v = sy_req_header(r, KEY_HEADERS[1]);
    if (v.p && v.n) {
        if (v.n >= 7 && strncasecmp(v.p, "Bearer ", 7) == 0)
            return (struct sy_str){v.p + 7, v.n - 7};
        if (v.n >= 6 && strncasecmp(v.p, "Basic ", 6) == 0)
            return (struct sy_str){v.p + 6, v.n - 6};
        return (struct sy_str){v.p, 0}; /* no recognised scheme: treated as empty */
    }
    for (size_t i = 2; i < sizeof KEY_HEADERS / sizeof KEY_HEADERS[0]; i++) {
        v = sy_req_header(r, KEY_HEADERS[i]);
        if (v.p && v.n)
            return v;
    }
    return SY_STR_NULL;
}

/* 401 for a credential header given twice; SY_OK when none is. */
static int single_key(struct sy_call *c)
{
    const char *h = repeated_key_header(c->req);
    if (!h)
        return SY_OK;
    char msg[256];
    snprintf(msg, sizeof msg, "Authentication Error, the %s header is given more than once; send the key in one header",
             h);
    c->out.exception_class = "AuthenticationError";
    sy_call_error(c, 401, "auth_error", "None", msg, NULL, 0);
    return SY_DONE;
}

/* Constant time in the key length: compare a digest of each side. The
 * presented key's digest is kept in `a` (it labels metrics, as LiteLLM's
 * hashed_api_key). */
static int key_ok(const struct sy_gwconf *g, struct sy_str k, unsigned char a[SHA256_DIGEST_LENGTH])
{
    unsigned char b[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)(k.p ? k.p : ""), k.n, a);
    SHA256((const unsigned char *)g->master_key, g->master_key_len, b);
    return CRYPTO_memcmp(a, b, SHA256_DIGEST_LENGTH) == 0;
}

static const char *hex_digest(struct sy_arena *ar, const unsigned char d[SHA256_DIGEST_LENGTH])
{
    char *o = sy_arena_alloc(ar, 2 * SHA256_DIGEST_LENGTH + 1);
    sy_hex_encode(o, d, SHA256_DIGEST_LENGTH);
    return o;
}

static void masked(struct sy_str k, char *out, size_t cap)
{
    if (k.n <= 4)
        snprintf(out, cap, "%s", k.n ? "****" : "");
    else
        snprintf(out, cap, "sk-...%.*s", 4, k.p + k.n - 4);
}

static int invalid_key(struct sy_call *c, struct sy_str k)
{
    char msg[512];
    if (!k.p || !k.n) {
        snprintf(msg, sizeof msg, "Authentication Error, No api key passed in.");
    } else {
        char m[32];
        masked(k, m, sizeof m);
        snprintf(msg, sizeof msg,
                 "Authentication Error, Invalid proxy server token passed. Received API Key = %s. "
                 "Unable to find token in cache or `LiteLLM_VerificationTokenTable`",
                 m);
    }
    c->out.exception_class = "AuthenticationError";
    sy_call_error(c, 401, "auth_error", "None", msg, NULL, 0);
    return SY_DONE;
}

static void release_key(void *p)
{
    struct sy_call *c = p;
    if (c->auth.key)
        sy_keyinfo_unref(c->auth.key);
    if (c->auth.eu)
        sy_enduser_unref(c->auth.eu);
}

/* The key's own checks (blocked, expired, routes); SY_OK or SY_DONE. */
static int key_resolved(struct sy_call *c, struct sy_keyinfo *ki)
{
    c->auth.key = ki;
    sy_arena_defer(&c->req->arena, release_key, c);
    c->auth.hashed_key = ki->token;
    c->auth.is_admin = ki->role == SY_ROLE_PROXY_ADMIN;
    struct sy_check_err e;
    char route[256];
    size_t rn = c->req->path.n < sizeof route ? c->req->path.n : sizeof route - 1;
    memcpy(route, c->req->path.p, rn);
    route[rn] = 0;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (sy_keys_check_key(ki, route, (double)ts.tv_sec + ts.tv_nsec / 1e9, &e) != 0) {
        c->out.exception_class = e.status == 401 ? "AuthenticationError" : NULL;
        sy_call_error(c, e.status, e.type, e.param[0] ? e.param : "None", e.message, NULL, 0);
        return SY_DONE;
    }
    return SY_OK;
}

struct key_load {
    char token[65];
    struct sy_str presented;
};

static void load_run(struct sy_store *st, struct sy_call *c, void *arg)
{
    struct key_load *kl = arg;
    struct sy_keyinfo *ki = NULL;
    c->auth.db_rc = sy_keys_load(st, kl->token, &ki);
    c->auth.db_obj = ki;
}

static void load_done(struct sy_call *c, void *arg)
{
    struct key_load *kl = arg;
    struct sy_keyinfo *ki = c->auth.db_obj;
    c->auth.db_obj = NULL;
    if (c->auth.db_rc < 0 || !ki) {
        /* a key verified before keeps working, with its last known limits */
        struct sy_keyinfo *old = sy_keys_get_stale(kl->token);
        if (old && old->found) {
            if (key_resolved(c, old) == SY_OK)
                sy_call_resume(c);
            return;
        }
        if (old)
            sy_keyinfo_unref(old);
        if (c->g->cfg->allow_requests_on_db_unavailable) {
            /* LiteLLM's allow_requests_on_db_unavailable: the key cannot be
             * verified and the request goes through (meant for VPC deployments) */
            c->auth.no_db = 1;
            c->auth.hashed_key = sy_arena_strndup(&c->req->arena, kl->token, 64);
            sy_call_resume(c);
            return;
        }
        c->out.exception_class = "ServiceUnavailableError";
        sy_call_error(c, 503, "auth_error", "None",
                      "Authentication Error, the database holding virtual keys is unreachable and the key is not "
                      "cached (general_settings.allow_requests_on_db_unavailable lets requests through)",
                      NULL, 0);
        return;
    }
    atomic_fetch_add(&ki->refs, 1); /* one for the cache, one for this call */
    sy_keys_put(ki);
    if (!ki->found) {
        sy_keyinfo_unref(ki);
        invalid_key(c, kl->presented);
        return;
    }
    if (key_resolved(c, ki) == SY_OK)
        sy_call_resume(c);
}

/* The virtual key whose sha256 is token: cached, else loaded on a DB thread. */
static int lookup_token(struct sy_call *c, const char *token, struct sy_str presented)
{
    struct sy_keyinfo *ki = sy_keys_get(token);
    if (ki) {
        if (!ki->found) {
            sy_keyinfo_unref(ki);
            return invalid_key(c, presented);
        }
        return key_resolved(c, ki);
    }
    struct key_load *kl = sy_arena_alloc(&c->req->arena, sizeof *kl);
    memcpy(kl->token, token, 65);
    kl->presented = presented;
    if (sy_call_db(c, load_run, load_done, kl) != 0) {
        c->auth.db_rc = SY_STORE_EDOWN;
        load_done(c, kl);
        return SY_AGAIN;
    }
    return SY_AGAIN;
}

/* No key header: the admin UI's session cookie, if any. */
static int cookie_auth(struct sy_call *c)
{
    const char *salt = sy_ui_salt(c->g->master_key);
    struct sy_ui_sess s;
    int rc = sy_ui_req_session(c->req, salt, (long long)time(NULL), &s);
    if (rc == 0)
        return invalid_key(c, SY_STR_NULL);
    if (rc < 0) {
        c->out.exception_class = "AuthenticationError";
        sy_call_error(c, 401, "auth_error", "None",
                      "Authentication Error, invalid or expired session cookie; log in again", NULL, 0);
        return SY_DONE;
    }
    if (!sy_ui_csrf_ok(c->req, salt, &s)) {
        sy_call_error(c, 403, "auth_error", "None", "CSRF check failed", NULL, 0);
        return SY_DONE;
    }
    if (s.kind == SY_UI_MASTER) {
        unsigned char d[SHA256_DIGEST_LENGTH];
        SHA256((const unsigned char *)c->g->master_key, c->g->master_key_len, d);
        c->auth.hashed_key = hex_digest(&c->req->arena, d);
        c->auth.is_admin = 1;
        return SY_OK;
    }
    if (!c->g->keys)
        return invalid_key(c, SY_STR_NULL);
    return lookup_token(c, s.id, SY_STR_NULL);
}

static int auth_run(struct sy_call *c)
{
    if (single_key(c) != SY_OK)
        return SY_DONE;
    struct sy_str k = find_key(c->req);
    if (!k.p && c->kind == SY_RK_PROVIDER && c->req->path.n >= 7 && memcmp(c->req->path.p, "/gemini", 7) == 0 &&
        (c->req->path.n == 7 || c->req->path.p[7] == '/')) { /* Gemini's SDKs send ?key= (LiteLLM reads it there) */
        char *qk = sy_arena_alloc(&c->req->arena, 512);
        if (sy_query_get(c->req->query.p, c->req->query.n, "key", qk, 512))
            k = (struct sy_str){qk, strlen(qk)};
    }
    if (!k.p && sy_req_header(c->req, "cookie").p) /* no key header: the UI's session cookie */
        return cookie_auth(c);
    unsigned char d[SHA256_DIGEST_LENGTH];
    if (k.p && k.n && key_ok(c->g, k, d)) {
        c->auth.hashed_key = hex_digest(&c->req->arena, d);
        c->auth.is_admin = 1;
        return SY_OK;
    }
    if (!k.p || !k.n || !c->g->keys)
        return invalid_key(c, k);
    if (k.n < 3 || memcmp(k.p, "sk-", 3) != 0) {
        char msg[512], m[32];
        masked(k, m, sizeof m);
        snprintf(msg, sizeof msg,
                 "Authentication Error, LiteLLM Virtual Key expected. Received=%s, expected to start with 'sk-'.", m);
        c->out.exception_class = "AuthenticationError";
        sy_call_error(c, 401, "auth_error", "None", msg, NULL, 0);
        return SY_DONE;
    }
    /* d already holds SHA-256(k): the token */
    char token[65];
    sy_hex_encode(token, d, SHA256_DIGEST_LENGTH);
    return lookup_token(c, token, k);
}

static int metrics_auth_run(struct sy_call *c)
{
    if (!c->g->master_key) /* require_auth_for_metrics_endpoint without a master key: open, as LiteLLM */
        return SY_OK;
    struct sy_str k = find_key(c->req);
    unsigned char d[SHA256_DIGEST_LENGTH];
    if (k.p && k.n && !repeated_key_header(c->req) && key_ok(c->g, k, d))
        return SY_OK;
    static const char body[] =
        "Unauthorized access to metrics endpoint: Authentication Error, Invalid proxy server token passed.";
    sy_resp_simple(c->req, 401, NULL, 0, "text/plain; charset=utf-8", body, sizeof body - 1);
    return SY_DONE;
}

static int auth_on(const struct sy_gwconf *g, enum sy_route_kind k)
{
    (void)k;
    return g->master_key != NULL; /* the master key is set */
}

const struct sy_stage sy_stage_auth = {
    .name = "auth",
    .routes = SY_RKB_LLM | SY_RKB(SY_RK_ADMIN) | SY_RKB(SY_RK_CACHE_ADMIN) | SY_RKB(SY_RK_MODELS) |
              SY_RKB(SY_RK_MODEL_ONE) | SY_RKB(SY_RK_TOKEN_COUNTER) | SY_RKB(SY_RK_HEALTH) |
              SY_RKB(SY_RK_MESSAGES_COUNT) | SY_RKB(SY_RK_RESPONSES_ID) | SY_RKB(SY_RK_FILES) | SY_RKB(SY_RK_PROVIDER) |
              SY_RKB(SY_RK_GUARDRAILS) | SY_RKB(SY_RK_MCP) | SY_RKB(SY_RK_MCP_SSE) | SY_RKB(SY_RK_MCP_REST),
    .enabled = auth_on,
    .run = auth_run,
};

static int metrics_auth_on(const struct sy_gwconf *g, enum sy_route_kind k)
{
    (void)k;
    return g->cfg->require_auth_for_metrics_endpoint; /* require_auth_for_metrics_endpoint */
}

const struct sy_stage sy_stage_metrics_auth = {
    .name = "metrics_auth",
    .routes = SY_RKB(SY_RK_METRICS),
    .enabled = metrics_auth_on,
    .run = metrics_auth_run,
};
