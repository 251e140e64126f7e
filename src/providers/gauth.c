/* gauth.c - Google service-account / authorized-user OAuth2, the pure parts
 * (see gauth.h for the flow). JSON through jdom, RSA through OpenSSL's EVP
 * interface; the OpenSSL error queue is left empty whatever happens (it is
 * per thread and shared with the TLS code). */
#include "providers/gauth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "core/arena.h"
#include "core/errors.h"
#include "core/hex.h"
#include "providers/jdom.h"

/* ---- credentials ------------------------------------------------------------ */

/* An encrypted PEM must not make OpenSSL prompt on the terminal. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf, (void)size, (void)rwflag, (void)u;
    return -1;
}

static EVP_PKEY *load_key(const char *pem)
{
    BIO *bio = BIO_new_mem_buf(pem, -1);
    EVP_PKEY *pk = bio ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL) : NULL;
    BIO_free(bio);
    if (pk && EVP_PKEY_base_id(pk) != EVP_PKEY_RSA) {
        EVP_PKEY_free(pk);
        pk = NULL;
    }
    ERR_clear_error();
    return pk;
}

void sy_gauth_sa_free(struct sy_gauth_sa *sa)
{
    if (!sa)
        return;
    free(sa->client_email);
    free(sa->private_key);
    free(sa->private_key_id);
    free(sa->token_uri);
    free(sa->project_id);
    free(sa->client_id);
    free(sa->client_secret);
    free(sa->refresh_token);
    memset(sa, 0, sizeof *sa);
}

/* A string member as a malloc'd C string; NULL when absent, empty or holding a NUL. */
static char *dup_member(const struct sy_jdoc *d, const char *key, struct sy_arena *a, int *oom)
{
    size_t l;
    const char *s = sy_jdom_str(d, sy_jdom_get(d, 0, key), a, &l);
    if (!s || !l || memchr(s, 0, l))
        return NULL;
    char *r = strdup(s);
    if (!r)
        *oom = 1;
    return r;
}

int sy_gauth_parse_sa(const char *json, size_t n, struct sy_gauth_sa *sa, char *err, size_t errlen)
{
    memset(sa, 0, sizeof *sa);
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    int oom = 0;
    const char *why = NULL;
    if (sy_jdom_parse(&d, json, n, &a, 100000) || sy_jdom_type(&d, 0) != 'o') {
        why = "credentials are not a JSON object";
        goto out;
    }
    uint32_t type = sy_jdom_get(&d, 0, "type");
    if (!type || sy_jdom_str_eq(&d, type, "service_account")) {
        sa->kind = SY_GAUTH_SERVICE_ACCOUNT;
    } else if (sy_jdom_str_eq(&d, type, "authorized_user")) {
        sa->kind = SY_GAUTH_AUTHORIZED_USER;
    } else {
        why = "unsupported credentials type (service_account and authorized_user are)";
        goto out;
    }
    sa->token_uri = dup_member(&d, "token_uri", &a, &oom);
    if (!sa->token_uri && !oom)
        sa->token_uri = strdup(SY_GAUTH_TOKEN_URI);
    sa->project_id = dup_member(&d, "project_id", &a, &oom);
    if (!sa->project_id && !oom)
        sa->project_id = dup_member(&d, "quota_project_id", &a, &oom);
    if (sa->kind == SY_GAUTH_SERVICE_ACCOUNT) {
        sa->client_email = dup_member(&d, "client_email", &a, &oom);
        sa->private_key = dup_member(&d, "private_key", &a, &oom);
        sa->private_key_id = dup_member(&d, "private_key_id", &a, &oom);
        if (oom)
            goto out;
        if (!sa->client_email) {
            why = "service account credentials without client_email";
            goto out;
        }
        if (!sa->private_key) {
            why = "service account credentials without private_key";
            goto out;
        }
        EVP_PKEY *pk = load_key(sa->private_key);
        if (!pk) {
            why = "private_key is not an unencrypted RSA key in PEM";
            goto out;
        }
        EVP_PKEY_free(pk);
    } else {
        sa->client_id = dup_member(&d, "client_id", &a, &oom);
        sa->client_secret = dup_member(&d, "client_secret", &a, &oom);
        sa->refresh_token = dup_member(&d, "refresh_token", &a, &oom);
        if (oom)
            goto out;
        if (!sa->client_id || !sa->client_secret || !sa->refresh_token) {
            why = "authorized_user credentials need client_id, client_secret and refresh_token";
            goto out;
        }
    }
out:
    sy_arena_free(&a);
    if (oom && !why)
        why = "out of memory";
    if (!why && !sa->token_uri)
        why = "out of memory";
    if (why) {
        sy_gauth_sa_free(sa);
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    return 0;
}

/* ---- JWT -------------------------------------------------------------------- */

static int b64url(struct sy_buf *out, const unsigned char *p, size_t n)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    char q[4];
    size_t i = 0;
    int rc = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        q[0] = t[v >> 18], q[1] = t[(v >> 12) & 63], q[2] = t[(v >> 6) & 63], q[3] = t[v & 63];
        rc |= sy_buf_append(out, q, 4);
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        q[0] = t[v >> 18], q[1] = t[(v >> 12) & 63];
        rc |= sy_buf_append(out, q, 2);
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        q[0] = t[v >> 18], q[1] = t[(v >> 12) & 63], q[2] = t[(v >> 6) & 63];
        rc |= sy_buf_append(out, q, 3);
    }
    return rc ? SY_ENOSPC : 0;
}

int sy_gauth_jwt(const struct sy_gauth_sa *sa, int64_t now, const char *scope, struct sy_buf *out)
{
    if (!sa || sa->kind != SY_GAUTH_SERVICE_ACCOUNT || !sa->private_key || !sa->client_email)
        return SY_EINVAL;
    struct sy_buf js;
    struct sy_jw w;
    size_t start = out->len;
    int rc = 0;
    sy_buf_init(&js, 64 * 1024);
    /* header */
    sy_jw_init(&w, &js);
    sy_jw_obj(&w);
    sy_jw_key(&w, "alg");
    sy_jw_cstr(&w, "RS256");
    sy_jw_key(&w, "typ");
    sy_jw_cstr(&w, "JWT");
    if (sa->private_key_id) {
        sy_jw_key(&w, "kid");
        sy_jw_cstr(&w, sa->private_key_id);
    }
    sy_jw_end(&w);
    rc |= w.err | b64url(out, (const unsigned char *)js.p, js.len);
    rc |= sy_buf_append(out, ".", 1);
    /* claims */
    sy_buf_reset(&js);
    sy_jw_init(&w, &js);
    sy_jw_obj(&w);
    sy_jw_key(&w, "iss");
    sy_jw_cstr(&w, sa->client_email);
    sy_jw_key(&w, "scope");
    sy_jw_cstr(&w, scope ? scope : SY_GAUTH_SCOPE);
    sy_jw_key(&w, "aud");
    sy_jw_cstr(&w, sa->token_uri ? sa->token_uri : SY_GAUTH_TOKEN_URI);
    sy_jw_key(&w, "iat");
    sy_jw_int(&w, now);
    sy_jw_key(&w, "exp");
    sy_jw_int(&w, now + SY_GAUTH_LIFETIME);
    sy_jw_end(&w);
    rc |= w.err | b64url(out, (const unsigned char *)js.p, js.len);
    sy_buf_free(&js);
    if (rc) {
        out->len = start;
        return SY_ENOSPC;
    }
    /* signature over "header.claims" */
    EVP_PKEY *pk = load_key(sa->private_key);
    EVP_MD_CTX *ctx = pk ? EVP_MD_CTX_new() : NULL;
    unsigned char *sig = NULL;
    size_t siglen = 0;
    if (!ctx || EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, pk) != 1 ||
        EVP_DigestSign(ctx, NULL, &siglen, (const unsigned char *)out->p + start, out->len - start) != 1 ||
        !(sig = malloc(siglen)) ||
        EVP_DigestSign(ctx, sig, &siglen, (const unsigned char *)out->p + start, out->len - start) != 1)
        rc = SY_EINVAL;
    if (!rc && (sy_buf_append(out, ".", 1) || b64url(out, sig, siglen)))
        rc = SY_ENOSPC;
    free(sig);
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(pk);
    ERR_clear_error();
    if (rc) {
        out->len = start;
        if (out->p)
            out->p[start] = 0;
    }
    return rc;
}

/* application/x-www-form-urlencoded value */
static int form_value(struct sy_buf *out, const char *s)
{
    int rc = 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
            c == '_' || c == '~') {
            rc |= sy_buf_append(out, s, 1);
        } else {
            char e[3] = {'%', sy_hex_uc[c >> 4], sy_hex_uc[c & 15]};
            rc |= sy_buf_append(out, e, 3);
        }
    }
    return rc ? SY_ENOSPC : 0;
}

int sy_gauth_token_body(const char *jwt, struct sy_buf *out)
{
    size_t start = out->len;
    int rc = SY_BUF_LIT(out, "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=");
    rc |= form_value(out, jwt ? jwt : "");
    if (rc) {
        out->len = start;
        return SY_ENOSPC;
    }
    return 0;
}

int sy_gauth_request_body(const struct sy_gauth_sa *sa, int64_t now, const char *scope, struct sy_buf *out)
{
    if (!sa)
        return SY_EINVAL;
    if (sa->kind == SY_GAUTH_AUTHORIZED_USER) {
        size_t start = out->len;
        int rc = SY_BUF_LIT(out, "grant_type=refresh_token&client_id=");
        rc |= form_value(out, sa->client_id ? sa->client_id : "");
        rc |= SY_BUF_LIT(out, "&client_secret=");
        rc |= form_value(out, sa->client_secret ? sa->client_secret : "");
        rc |= SY_BUF_LIT(out, "&refresh_token=");
        rc |= form_value(out, sa->refresh_token ? sa->refresh_token : "");
        if (rc) {
            out->len = start;
            return SY_ENOSPC;
        }
        return 0;
    }
    struct sy_buf jwt;
    sy_buf_init(&jwt, 64 * 1024);
    int rc = sy_gauth_jwt(sa, now, scope, &jwt);
    if (!rc)
        rc = sy_gauth_token_body(jwt.p, out);
    sy_buf_free(&jwt);
    return rc;
}

/* ---- token answer ------------------------------------------------------------ */

int sy_gauth_parse_token(const char *body, size_t n, char *token, size_t cap, int64_t *expires_in)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    int rc = 0;
    if (cap)
        token[0] = 0;
    if (sy_jdom_parse(&d, body, n, &a, 100000) || sy_jdom_type(&d, 0) != 'o') {
        rc = SY_EJSON;
        goto out;
    }
    size_t l;
    const char *tok = sy_jdom_str(&d, sy_jdom_get(&d, 0, "access_token"), &a, &l);
    if (!tok || !l || memchr(tok, 0, l)) {
        rc = sy_jdom_get(&d, 0, "error") ? SY_EAUTH : SY_EJSON;
        goto out;
    }
    for (size_t i = 0; i < l; i++)
        if ((unsigned char)tok[i] < 0x21 || (unsigned char)tok[i] > 0x7e) { /* goes into a header line */
            rc = SY_EJSON;
            goto out;
        }
    if (l >= cap) {
        rc = SY_ENOSPC;
        goto out;
    }
    memcpy(token, tok, l + 1);
    int64_t ttl = 3600;
    double dv;
    uint32_t ei = sy_jdom_get(&d, 0, "expires_in");
    if (sy_jdom_i64(&d, ei, &ttl))
        ;
    else if (sy_jdom_num(&d, ei, &dv) && dv > 0 && dv < 1e12)
        ttl = (int64_t)dv;
    else
        ttl = 3600;
    if (ttl < 0)
        ttl = 0;
    *expires_in = ttl;
out:
    sy_arena_free(&a);
    return rc;
}

int sy_gauth_token_error(const char *body, size_t n, char *msg, size_t cap)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    int is = 0;
    if (cap)
        msg[0] = 0;
    if (!sy_jdom_parse(&d, body, n, &a, 100000) && sy_jdom_type(&d, 0) == 'o') {
        uint32_t e = sy_jdom_get(&d, 0, "error");
        const char *code = sy_jdom_str(&d, e, &a, NULL);
        const char *desc = sy_jdom_str(&d, sy_jdom_get(&d, 0, "error_description"), &a, NULL);
        if (e && sy_jdom_type(&d, e) == 'o') { /* Google APIs style {"error":{"message":..,"status":..}} */
            code = sy_jdom_str(&d, sy_jdom_get(&d, e, "status"), &a, NULL);
            desc = sy_jdom_str(&d, sy_jdom_get(&d, e, "message"), &a, NULL);
        }
        if (e) {
            is = 1;
            if (cap)
                snprintf(msg, cap, "%s%s%s", code ? code : "error", desc ? ": " : "", desc ? desc : "");
        }
    }
    sy_arena_free(&a);
    return is;
}
