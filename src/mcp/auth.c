/* auth.c - what every request to an MCP server carries, and OAuth2 client
 * credentials.
 *
 * Header lines, in the order they win by name (a later source never repeats
 * a name an earlier one set):
 *   1. the caller's lines (x-mcp-<alias>-<header> and forwarded headers, the
 *      stage hands them in), checked here: "Name: value\r\n", a token name,
 *      no control characters in values; lines the transport owns (Host,
 *      Content-Length, Transfer-Encoding, Connection, Accept, Content-Type,
 *      Mcp-Session-Id, MCP-Protocol-Version, ...) are dropped;
 *   2. the server's static_headers (checked the same way once per conn);
 *   3. the auth header of auth_type, as LiteLLM's MCPClient._get_auth_headers:
 *        api_key        X-API-Key: <auth_value>
 *        bearer_token   Authorization: Bearer <auth_value>
 *        basic          Authorization: Basic <base64("user:pass")> (a value
 *                       without ':' is taken as already encoded)
 *        authorization  Authorization: <auth_value>
 *        oauth2         Authorization: Bearer <token>
 *
 * OAuth2 client credentials (LiteLLM's MCPOAuth2TokenCache): POST token_url,
 * form-encoded grant_type=client_credentials, client_id, client_secret and
 * scope (scopes joined by spaces); the access_token is kept until expires_in
 * (default 3600) minus 60 s, at least 10 s. One fetch in flight per conn;
 * ops that need the token wait parked and go on (or fail) together. A 401
 * from the server drops the token it carried, and the op is retried once
 * with a fresh one. Tokens live per worker (no cross-thread lock on the hot
 * path): N workers fetch N tokens.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/arena.h"
#include "core/errors.h"
#include "core/log.h"
#include "mcp/client_int.h"
#include "providers/jdom.h"
#include "upstream/client.h"

#define TOKEN_MARGIN_S  60
#define TOKEN_MIN_TTL_S 10

/* ---- header lines ---- */

static int tchar(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static const char *const owned[] = {
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
    "proxy-connection",
    "expect",
    "accept",
    "content-type",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
    NULL,
};

static int is_owned(const char *name, size_t n)
{
    for (size_t i = 0; owned[i]; i++)
        if (strlen(owned[i]) == n && !strncasecmp(owned[i], name, n))
            return 1;
    return 0;
}

int mcp_headers_take(const char *p, size_t n, struct sy_buf *out)
{
    const char *e = p + n;
    while (p < e) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        const char *le = nl ? nl : e;
        if (nl && (nl == p || nl[-1] != '\r'))
            return SY_EINVAL; /* a bare LF */
        const char *end = nl ? nl - 1 : le;
        if (end == p) { /* an empty line ends nothing here: refuse */
            return SY_EINVAL;
        }
        const char *colon = memchr(p, ':', (size_t)(end - p));
        if (!colon || colon == p)
            return SY_EINVAL;
        for (const char *q = p; q < colon; q++)
            if (!tchar((unsigned char)*q))
                return SY_EINVAL;
        for (const char *q = colon + 1; q < end; q++) {
            unsigned char ch = (unsigned char)*q;
            if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
                return SY_EINVAL; /* CR, NUL, controls */
        }
        if (!is_owned(p, (size_t)(colon - p))) {
            sy_buf_append(out, p, (size_t)(end - p));
            SY_BUF_LIT(out, "\r\n");
        }
        p = nl ? nl + 1 : e;
    }
    return sy_buf_failed(out) ? SY_ENOSPC : 0;
}

/* 1 when the lines h[0..n) set header name. */
static int has_name(const char *h, size_t n, const char *name, size_t nl)
{
    const char *e = h + n;
    while (h < e) {
        if ((size_t)(e - h) > nl && h[nl] == ':' && !strncasecmp(h, name, nl))
            return 1;
        const char *q = memchr(h, '\n', (size_t)(e - h));
        if (!q)
            break;
        h = q + 1;
    }
    return 0;
}

static int value_ok(const char *v)
{
    for (; *v; v++)
        if (((unsigned char)*v < 0x20 && *v != '\t') || *v == 0x7f)
            return 0;
    return 1;
}

void mcp_basic_value(const char *v, struct sy_buf *out)
{
    size_t n = strlen(v);
    if (!memchr(v, ':', n)) {
        sy_buf_append(out, v, n);
        return;
    }
    if (sy_buf_reserve(out, 4 * ((n + 2) / 3) + 1) != 0)
        return;
    int w = EVP_EncodeBlock((unsigned char *)out->p + out->len, (const unsigned char *)v, (int)n);
    if (w > 0) {
        out->len += (size_t)w;
        out->p[out->len] = 0;
    }
}

void mcp_auth_headers(struct mconn *c, const struct sy_buf *xhdr, struct sy_buf *h)
{
    const char *xp = xhdr && xhdr->len ? xhdr->p : NULL;
    size_t xn = xp ? xhdr->len : 0;
    const char *sh = c->s.static_headers;
    size_t shn = sh ? strlen(sh) : 0;
    if (xp)
        sy_buf_append(h, xp, xn);
    /* static headers the caller did not set */
    for (const char *l = sh, *e = sh ? sh + shn : NULL; l && l < e;) {
        const char *nl = memchr(l, '\n', (size_t)(e - l));
        const char *le = nl ? nl + 1 : e;
        const char *colon = memchr(l, ':', (size_t)(le - l));
        if (colon && !(xp && has_name(xp, xn, l, (size_t)(colon - l))))
            sy_buf_append(h, l, (size_t)(le - l));
        l = le;
    }
    const char *name;
    size_t nlen;
    switch (c->s.auth_type) {
    case SY_MCP_AUTH_API_KEY:
        name = "X-API-Key";
        nlen = 9;
        break;
    case SY_MCP_AUTH_BEARER:
    case SY_MCP_AUTH_BASIC:
    case SY_MCP_AUTH_AUTHORIZATION:
    case SY_MCP_AUTH_OAUTH2:
        name = "Authorization";
        nlen = 13;
        break;
    default: return;
    }
    if ((xp && has_name(xp, xn, name, nlen)) || (sh && has_name(sh, shn, name, nlen)))
        return; /* the caller's own credentials win (LiteLLM: the request's mcp auth header first) */
    const char *v = c->s.auth_type == SY_MCP_AUTH_OAUTH2 ? c->token : c->s.auth_value;
    if (!v || !*v || !value_ok(v))
        return;
    sy_buf_append(h, name, nlen);
    SY_BUF_LIT(h, ": ");
    switch (c->s.auth_type) {
    case SY_MCP_AUTH_BEARER:
    case SY_MCP_AUTH_OAUTH2:
        SY_BUF_LIT(h, "Bearer ");
        sy_buf_puts(h, v);
        break;
    case SY_MCP_AUTH_BASIC:
        SY_BUF_LIT(h, "Basic ");
        mcp_basic_value(v, h);
        break;
    default: sy_buf_puts(h, v); break;
    }
    SY_BUF_LIT(h, "\r\n");
}

/* ---- OAuth2 client credentials ---- */

static void form_put(struct sy_buf *b, const char *k, const char *v, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    if (b->len)
        SY_BUF_LIT(b, "&");
    sy_buf_puts(b, k);
    SY_BUF_LIT(b, "=");
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)v[i];
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || strchr("-._~", ch)) {
            sy_buf_append(b, &v[i], 1);
        } else if (ch == ' ') {
            SY_BUF_LIT(b, "+");
        } else {
            char e[3] = {'%', hex[ch >> 4], hex[ch & 15]};
            sy_buf_append(b, e, 3);
        }
    }
}

/* scope: scopes joined by spaces; a JSON array of strings, or a string
 * (spaces or commas between scopes). */
static void scope_put(struct sy_buf *b, const char *scopes)
{
    struct sy_buf s;
    sy_buf_init(&s, 8192);
    const char *p = scopes;
    while (*p == ' ')
        p++;
    if (*p == '[') {
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_jdoc d;
        if (sy_jdom_parse(&d, p, strlen(p), &a, 0) == 0 && sy_jdom_type(&d, 0) == 'a')
            for (uint32_t e = sy_jdom_first(&d, 0); e; e = sy_jdom_next(&d, e)) {
                size_t l;
                const char *v = sy_jdom_str(&d, e, &a, &l);
                if (!v || !l)
                    continue;
                if (s.len)
                    SY_BUF_LIT(&s, " ");
                sy_buf_append(&s, v, l);
            }
        sy_arena_free(&a);
    } else {
        for (; *p; p++)
            sy_buf_append(&s, *p == ',' ? " " : p, 1);
    }
    if (s.len)
        form_put(b, "scope", s.p, s.len);
    sy_buf_free(&s);
}

int mcp_token_parse(const char *p, size_t n, char **token, double *expires_in, char *err, size_t errlen)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    int rc = -1;
    *token = NULL;
    *expires_in = 3600;
    if (sy_jdom_parse(&d, p, n, &a, 4096) != 0 || sy_jdom_type(&d, 0) != 'o') {
        snprintf(err, errlen, "the token answer is not a JSON object");
        goto out;
    }
    size_t tl = 0;
    const char *t = sy_jdom_str(&d, sy_jdom_top(&d, "access_token"), &a, &tl);
    if (!t || !tl || tl > 16384 || memchr(t, 0, tl)) {
        snprintf(err, errlen, "the token answer has no access_token");
        goto out;
    }
    for (size_t i = 0; i < tl; i++)
        if ((unsigned char)t[i] < 0x21 || (unsigned char)t[i] > 0x7e) {
            snprintf(err, errlen, "the access_token is not printable ASCII");
            goto out;
        }
    double e;
    uint32_t en = sy_jdom_top(&d, "expires_in");
    if (en && sy_jdom_num(&d, en, &e) && e >= 0 && e < 1e9)
        *expires_in = e;
    else if (en && sy_jdom_type(&d, en) == 's') { /* some servers send "3600" */
        const char *s = sy_jdom_str(&d, en, &a, NULL);
        char *end;
        double v = s ? strtod(s, &end) : -1;
        if (s && *s && !*end && v >= 0 && v < 1e9)
            *expires_in = v;
    }
    *token = strndup(t, tl);
    rc = *token ? 0 : -1;
    if (rc)
        snprintf(err, errlen, "out of memory");
out:
    sy_arena_free(&a);
    return rc;
}

static void tok_resume(struct mconn *c)
{
    struct mlink tmp;
    ml_init(&tmp);
    ml_move(&tmp, &c->parked);
    while (!ml_empty(&tmp)) {
        struct sy_mcp_op *op = ml_entry(tmp.next, struct sy_mcp_op, q);
        ml_del(&op->q);
        op->where = OPW_NONE;
        mcp_conn_send(op);
    }
}

static void tok_fail(struct mconn *c, int err, const char *why)
{
    char m[400];
    snprintf(m, sizeof m, "MCP server '%s': OAuth2 token request failed: %s", c->s.name, why);
    sy_warn("mcp: %s", m);
    mcp_fail_list(&c->parked, err, m);
}

static int tok_head(void *ud, int status, const struct sy_uheader *h, size_t nh)
{
    (void)h;
    (void)nh;
    ((struct mconn *)ud)->tok_status = status;
    return 0;
}

static int tok_body(void *ud, const char *p, size_t n)
{
    struct mconn *c = ud;
    sy_buf_append(&c->tok_resp, p, n);
    return 0;
}

static void tok_done(void *ud, int err)
{
    struct mconn *c = ud;
    c->tok_req = NULL;
    char why[300];
    if (err) {
        snprintf(why, sizeof why, "%s", sy_err_name(err));
        tok_fail(c, err, why);
        return;
    }
    if (c->tok_status != 200) {
        size_t n = c->tok_resp.len > 200 ? 200 : c->tok_resp.len;
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)c->tok_resp.p[i] < 0x20)
                c->tok_resp.p[i] = ' ';
        snprintf(why, sizeof why, "HTTP %d: %.*s", c->tok_status, (int)n, n ? c->tok_resp.p : "");
        tok_fail(c, SY_EUPPROTO, why);
        return;
    }
    if (sy_buf_failed(&c->tok_resp)) {
        tok_fail(c, SY_EUPPROTO, "the token answer is too large");
        return;
    }
    char *t;
    double ttl;
    if (mcp_token_parse(c->tok_resp.p ? c->tok_resp.p : "", c->tok_resp.len, &t, &ttl, why, sizeof why) != 0) {
        tok_fail(c, SY_EUPPROTO, why);
        return;
    }
    ttl -= TOKEN_MARGIN_S;
    if (ttl < TOKEN_MIN_TTL_S)
        ttl = TOKEN_MIN_TTL_S;
    free(c->token);
    c->token = t;
    c->token_gen++;
    c->token_exp = uv_now(c->p->loop) + (uint64_t)(ttl * 1000.0);
    tok_resume(c);
}

static const struct sy_ureq_cbs tok_cbs = {tok_head, tok_body, tok_done};

static const char tok_hdr[] = "Content-Type: application/x-www-form-urlencoded\r\nAccept: application/json\r\n";

static void tok_fetch(struct mconn *c)
{
    if (!c->s.token_url || !*c->s.token_url || !c->s.client_id) {
        tok_fail(c, SY_ECONFIG, "the server has auth_type oauth2 but no token_url or client_id");
        return;
    }
    sy_buf_reset(&c->tok_body);
    sy_buf_reset(&c->tok_resp);
    c->tok_status = 0;
    form_put(&c->tok_body, "grant_type", "client_credentials", 18);
    form_put(&c->tok_body, "client_id", c->s.client_id, strlen(c->s.client_id));
    if (c->s.client_secret)
        form_put(&c->tok_body, "client_secret", c->s.client_secret, strlen(c->s.client_secret));
    if (c->s.scopes && *c->s.scopes)
        scope_put(&c->tok_body, c->s.scopes);
    if (sy_buf_failed(&c->tok_body)) {
        tok_fail(c, SY_ENOSPC, "the token request is too large");
        return;
    }
    c->tok_bv = uv_buf_init(c->tok_body.p, (unsigned)c->tok_body.len);
    struct sy_ureq_opts o = {
        .url = c->s.token_url,
        .method = "POST",
        .headers = tok_hdr,
        .headers_len = sizeof tok_hdr - 1,
        .body = &c->tok_bv,
        .nbody = 1,
        .connect_timeout_s = 10,
        .total_timeout_s = c->s.timeout_s > 0 ? c->s.timeout_s : 60,
    };
    c->p->st.token_fetches++;
    c->tok_req = sy_ureq_start(c->p->up, &o, &tok_cbs, c);
    if (!c->tok_req)
        tok_fail(c, SY_EINVAL, "bad token_url");
}

int mcp_auth_wait(struct sy_mcp_op *op)
{
    struct mconn *c = op->c;
    if (c->s.auth_type != SY_MCP_AUTH_OAUTH2)
        return 0;
    if (c->token && uv_now(c->p->loop) < c->token_exp)
        return 0;
    op->where = OPW_PARK;
    ml_push(&c->parked, &op->q);
    if (!c->tok_req)
        tok_fetch(c);
    return 1;
}

int mcp_auth_rejected(struct mconn *c, unsigned gen)
{
    if (c->s.auth_type != SY_MCP_AUTH_OAUTH2)
        return 0;
    if (c->token_gen == gen) {
        free(c->token);
        c->token = NULL;
    }
    return 1;
}

void mcp_auth_close(struct mconn *c)
{
    if (c->tok_req) {
        sy_ureq_cancel(c->tok_req);
        c->tok_req = NULL;
    }
}
