/* auth.c - the auth stages: master key (LiteLLM §1.2) and /metrics auth.
 *
 * Present in a pipeline only when general_settings.master_key (or env
 * LITELLM_MASTER_KEY) is set; without one the proxy is open, as LiteLLM.
 * The key is read from the first present of: x-litellm-api-key (optional
 * "Bearer "), Authorization ("Bearer "/"bearer "/"Basic "), API-Key,
 * x-api-key, x-goog-api-key, Ocp-Apim-Subscription-Key; compared in constant
 * time. Virtual keys come with the key-management issue.
 */
#include "gateway/gateway.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <string.h>

#include "core/errors.h"
#include "http/reply.h"
#include "http/server.h"

static struct sy_str strip_prefix(struct sy_str v, const char *pfx)
{
    size_t n = strlen(pfx);
    if (v.n >= n && strncasecmp(v.p, pfx, n) == 0)
        return (struct sy_str){v.p + n, v.n - n};
    return v;
}

/* The presented key; NULL view when none. */
static struct sy_str find_key(const struct sy_req *r)
{
    struct sy_str v = sy_req_header(r, "x-litellm-api-key");
    if (v.p && v.n)
        return strip_prefix(v, "Bearer ");
    v = sy_req_header(r, "authorization");
    if (v.p && v.n) {
        if (v.n >= 7 && strncasecmp(v.p, "Bearer ", 7) == 0)
            return (struct sy_str){v.p + 7, v.n - 7};
        if (v.n >= 6 && strncasecmp(v.p, "Basic ", 6) == 0)
            return (struct sy_str){v.p + 6, v.n - 6};
        return (struct sy_str){v.p, 0}; /* no recognised scheme: treated as empty */
    }
    static const char *const others[] = {"api-key", "x-api-key", "x-goog-api-key", "ocp-apim-subscription-key"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        v = sy_req_header(r, others[i]);
        if (v.p && v.n)
            return v;
    }
    return SY_STR_NULL;
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
    static const char hx[] = "0123456789abcdef";
    char *o = sy_arena_alloc(ar, 2 * SHA256_DIGEST_LENGTH + 1);
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) {
        o[2 * i] = hx[d[i] >> 4];
        o[2 * i + 1] = hx[d[i] & 15];
    }
    o[2 * SHA256_DIGEST_LENGTH] = 0;
    return o;
}

static void masked(struct sy_str k, char *out, size_t cap)
{
    if (k.n <= 4)
        snprintf(out, cap, "%s", k.n ? "****" : "");
    else
        snprintf(out, cap, "sk-...%.*s", 4, k.p + k.n - 4);
}

int sy_stage_auth(struct sy_call *c)
{
    struct sy_str k = find_key(c->req);
    unsigned char d[SHA256_DIGEST_LENGTH];
    if (k.p && k.n && key_ok(c->g, k, d)) {
        c->hashed_key = hex_digest(&c->req->arena, d);
        return SY_OK;
    }
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
    c->exception_class = "AuthenticationError";
    sy_call_error(c, 401, "auth_error", "None", msg, NULL, 0);
    return SY_DONE;
}

int sy_stage_metrics_auth(struct sy_call *c)
{
    if (!c->g->master_key) /* require_auth_for_metrics_endpoint without a master key: open, as LiteLLM */
        return SY_OK;
    struct sy_str k = find_key(c->req);
    unsigned char d[SHA256_DIGEST_LENGTH];
    if (k.p && k.n && key_ok(c->g, k, d))
        return SY_OK;
    static const char body[] =
        "Unauthorized access to metrics endpoint: Authentication Error, Invalid proxy server token passed.";
    sy_resp_simple(c->req, 401, NULL, 0, "text/plain; charset=utf-8", body, sizeof body - 1);
    return SY_DONE;
}
