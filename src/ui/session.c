/* session.c - the admin UI's session tokens, CSRF tokens, the Cookie header
 * and POST /login's body (ui/ui.h). Pure functions: the ui and auth stages
 * supply the salt key and the clock.
 *
 * Keys: k = HMAC-SHA256(salt, domain) for the two domains (session, csrf), so
 * a token signed for one use never verifies for the other, and another salt
 * (another instance's master key) never verifies at all. MACs are compared in
 * constant time; every field is checked for exact syntax before the MAC is
 * computed, so a malformed token costs nothing and a valid one has exactly one
 * spelling (no leading zeros, lowercase hex).
 */
#include "ui/ui.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <string.h>

#include "core/hex.h"
#include "providers/jdom.h"
#include "core/arena.h"

static const char kSessDomain[] = "switchyard ui session v1";
static const char kCsrfDomain[] = "switchyard ui csrf v1";

static int derive(const char *salt, const char *domain, unsigned char k[32])
{
    unsigned int kl = 32;
    if (!salt || !*salt)
        return -1;
    return HMAC(EVP_sha256(), salt, (int)strlen(salt), (const unsigned char *)domain, strlen(domain), k, &kl) ? 0 : -1;
}

static int mac_hex(const char *salt, const char *domain, const char *msg, size_t n, char out[65])
{
    unsigned char k[32], m[32];
    unsigned int ml = 32;
    if (derive(salt, domain, k) != 0)
        return -1;
    int ok = HMAC(EVP_sha256(), k, 32, (const unsigned char *)msg, n, m, &ml) != NULL;
    OPENSSL_cleanse(k, sizeof k);
    if (!ok)
        return -1;
    sy_hex_encode(out, m, 32);
    return 0;
}

static int is_lhex(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
            return 0;
    return 1;
}

static size_t id_len(int kind)
{
    return kind == SY_UI_MASTER ? 32 : kind == SY_UI_USER ? 64 : 0;
}

/* "<kind>.<id>.<exp>" into out; its length or -1. */
static int body_of(const struct sy_ui_sess *s, char *out, size_t cap)
{
    size_t il = id_len(s->kind);
    if (!il || strlen(s->id) != il || !is_lhex(s->id, il) || s->exp <= 0)
        return -1;
    int w = snprintf(out, cap, "%c.%s.%lld", s->kind, s->id, s->exp);
    return w > 0 && (size_t)w < cap ? w : -1;
}

int sy_ui_token_make(const char *salt, const struct sy_ui_sess *s, char *out, size_t cap)
{
    char body[128], mac[65];
    int bl = body_of(s, body, sizeof body);
    if (bl < 0 || mac_hex(salt, kSessDomain, body, (size_t)bl, mac) != 0)
        return -1;
    int w = snprintf(out, cap, "%s.%s", body, mac);
    return w > 0 && (size_t)w < cap ? w : -1;
}

int sy_ui_token_verify(const char *salt, const char *v, size_t n, long long now, struct sy_ui_sess *s)
{
    if (!v || n < 2 + 32 + 2 + 1 + 65 || n > SY_UI_TOKEN_MAX)
        return -1;
    int kind = v[0];
    size_t il = id_len(kind);
    if (!il || v[1] != '.' || n < 2 + il + 1 || v[2 + il] != '.' || !is_lhex(v + 2, il))
        return -1;
    const char *e = v + 2 + il + 1, *end = v + n;
    long long exp = 0;
    const char *p = e;
    if (p >= end || *p < '1' || *p > '9') /* no sign, no leading zero */
        return -1;
    while (p < end && *p >= '0' && *p <= '9') {
        if (p - e >= 18)
            return -1;
        exp = exp * 10 + (*p++ - '0');
    }
    if (end - p != 65 || *p != '.' || !is_lhex(p + 1, 64))
        return -1;
    size_t bl = (size_t)(p - v);
    char mac[65];
    if (mac_hex(salt, kSessDomain, v, bl, mac) != 0 || CRYPTO_memcmp(mac, p + 1, 64) != 0)
        return -1;
    if (exp <= now)
        return -2;
    s->kind = kind;
    memcpy(s->id, v + 2, il);
    s->id[il] = 0;
    s->exp = exp;
    return 0;
}

int sy_ui_csrf(const char *salt, const struct sy_ui_sess *s, char out[65])
{
    char body[128];
    int bl = body_of(s, body, sizeof body);
    return bl < 0 ? -1 : mac_hex(salt, kCsrfDomain, body, (size_t)bl, out);
}

int sy_ui_ct_eq(const char *a, size_t an, const char *b, size_t bn)
{
    return an == bn && CRYPTO_memcmp(a, b, an) == 0;
}

static int ows(char c)
{
    return c == ' ' || c == '\t';
}

int sy_ui_cookie_get(const char *h, size_t n, const char *name, const char **v, size_t *vn)
{
    size_t nl = strlen(name);
    int found = 0;
    size_t i = 0;
    while (i < n) {
        size_t s = i;
        while (i < n && h[i] != ';')
            i++;
        size_t e = i++;
        while (s < e && ows(h[s]))
            s++;
        while (e > s && ows(h[e - 1]))
            e--;
        const char *eq = memchr(h + s, '=', e - s);
        if (!eq)
            continue; /* a bare token: no name=value, not ours */
        size_t ke = (size_t)(eq - h), vs = ke + 1;
        while (ke > s && ows(h[ke - 1]))
            ke--;
        while (vs < e && ows(h[vs]))
            vs++;
        if (ke - s != nl || memcmp(h + s, name, nl) != 0)
            continue;
        if (found)
            return -1; /* two cookies of that name: which one the browser meant is unknown */
        if (e - vs >= 2 && h[vs] == '"' && h[e - 1] == '"') {
            vs++;
            e--;
        } else if (memchr(h + vs, '"', e - vs)) {
            return -1;
        }
        *v = h + vs;
        *vn = e - vs;
        found = 1;
    }
    return found;
}

/* ---- POST /login's body ---- */

static int hexv(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Percent-decode s[0..n) ('+' a space) into out[0..cap): its length, -1 when
 * it does not fit, holds a NUL or a bad escape. */
static long form_decode(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '+') {
            c = ' ';
        } else if (c == '%') {
            int a, b;
            if (i + 2 >= n || (a = hexv(s[i + 1])) < 0 || (b = hexv(s[i + 2])) < 0)
                return -1;
            c = (char)(a * 16 + b);
            i += 2;
        }
        if (c == 0 || o + 1 >= cap)
            return -1;
        out[o++] = c;
    }
    out[o] = 0;
    return (long)o;
}

static int form_parse(const char *b, size_t n, char *user, size_t ucap, char *pass, size_t pcap, const char **why)
{
    int have_u = 0, have_p = 0;
    size_t i = 0;
    while (i < n) {
        size_t s = i;
        while (i < n && b[i] != '&')
            i++;
        size_t e = i++;
        if (s == e)
            continue;
        const char *eq = memchr(b + s, '=', e - s);
        size_t ke = eq ? (size_t)(eq - b) : e;
        char key[16];
        if (form_decode(b + s, ke - s, key, sizeof key) < 0)
            continue; /* a long or odd name is none of ours */
        int isu = strcmp(key, "username") == 0, isp = strcmp(key, "password") == 0;
        if (!isu && !isp)
            continue;
        if ((isu && have_u) || (isp && have_p)) {
            *why = "a field is given twice";
            return -1;
        }
        size_t vs = eq ? ke + 1 : e;
        if (form_decode(b + vs, e - vs, isu ? user : pass, isu ? ucap : pcap) < 0) {
            *why = "a field is too long or badly encoded";
            return -1;
        }
        if (isu)
            have_u = 1;
        else
            have_p = 1;
    }
    if (!have_u || !have_p) {
        *why = "username and password are required";
        return -1;
    }
    return 0;
}

static int json_parse(const char *b, size_t n, char *user, size_t ucap, char *pass, size_t pcap, const char **why)
{
    struct sy_arena a;
    struct sy_jdoc d;
    sy_arena_init(&a);
    int rc = -1;
    if (sy_jdom_parse(&d, b, n, &a, 4096) != 0 || sy_jdom_type(&d, 0) != 'o') {
        *why = "the body is not a JSON object";
        goto out;
    }
    int have_u = 0, have_p = 0;
    for (uint32_t k = sy_jdom_first(&d, 0); k; k = sy_jdom_next_key(&d, k)) {
        size_t kl;
        const char *key = sy_jdom_str(&d, k, &a, &kl);
        if (!key)
            goto out;
        int isu = kl == 8 && memcmp(key, "username", 8) == 0, isp = kl == 8 && memcmp(key, "password", 8) == 0;
        if (!isu && !isp)
            continue;
        if ((isu && have_u) || (isp && have_p)) {
            *why = "a field is given twice";
            goto out;
        }
        uint32_t v = sy_jdom_val(k);
        size_t vl;
        const char *s = sy_jdom_type(&d, v) == 's' ? sy_jdom_str(&d, v, &a, &vl) : NULL;
        if (!s) {
            *why = "username and password must be strings";
            goto out;
        }
        size_t cap = isu ? ucap : pcap;
        if (vl >= cap || memchr(s, 0, vl)) {
            *why = "a field is too long or holds a NUL";
            goto out;
        }
        memcpy(isu ? user : pass, s, vl);
        (isu ? user : pass)[vl] = 0;
        if (isu)
            have_u = 1;
        else
            have_p = 1;
    }
    if (!have_u || !have_p) {
        *why = "username and password are required";
        goto out;
    }
    rc = 0;
out:
    sy_arena_free(&a);
    return rc;
}

static int ctype_is(const char *ct, size_t n, const char *t)
{
    size_t tl = strlen(t);
    while (n && ows(*ct))
        ct++, n--;
    return n >= tl && strncasecmp(ct, t, tl) == 0 && (n == tl || ct[tl] == ';' || ows(ct[tl]));
}

int sy_ui_login_parse(const char *ctype, size_t ctn, const char *body, size_t n, char *user, size_t ucap, char *pass,
                      size_t pcap, const char **why)
{
    *why = "the body is neither a form (application/x-www-form-urlencoded) nor JSON";
    if (!ucap || !pcap)
        return -1;
    user[0] = pass[0] = 0;
    if (ctype && ctype_is(ctype, ctn, "application/x-www-form-urlencoded"))
        return form_parse(body, n, user, ucap, pass, pcap, why);
    if (!ctype || ctype_is(ctype, ctn, "application/json"))
        return json_parse(body, n, user, ucap, pass, pcap, why);
    return -1;
}
