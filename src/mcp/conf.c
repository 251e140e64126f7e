/* conf.c - the MCP servers in force, compiled into one immutable set.
 *
 * Three inputs, in this order (LiteLLM: the config's servers win):
 *
 *   config.yaml mcp_servers: {name: {...}}        config.c hands it as JSON text,
 *   litellm_settings.mcp_aliases: {alias: name}   os.environ/ not yet resolved
 *   LiteLLM_MCPServerTable rows (a JSON array)    read by stages/mcp_registry.c
 *
 * A config server (LiteLLM's MCPServerManager.load_servers_from_config):
 *   name       the mapping key; LiteLLM's validate_mcp_server_name refuses a
 *              "-" (MCP_TOOL_PREFIX_SEPARATOR) in it, so do we, and also
 *              characters that cannot stand in the /{name}/mcp path or a
 *              header (/ \ ? # % " control characters), and more than 127 bytes
 *   id         LiteLLM's _generate_stable_server_id: the first 32 hex digits
 *              of sha256("<name>|<url>|<transport>|<auth_type>|<alias>"), so a
 *              key whose object_permission names a config server by the id
 *              LiteLLM showed keeps it (<transport> is "MCPTransport.http"
 *              when the config has none: Python formats the enum default so)
 *   alias      its own `alias`, else the first mcp_aliases entry naming it
 *              that no earlier server took; an alias naming no server is
 *              ignored (LiteLLM says nothing either)
 *   prefix     alias, else name, spaces made "_" (normalize_server_name): the
 *              tool-name prefix and the /{prefix}/mcp path; two servers with
 *              one prefix are a config error
 *   transport  http (= streamable_http), sse, stdio. When absent: stdio for a
 *              command without a url, sse for a url whose path ends in /sse,
 *              else http (LiteLLM always takes http; see litellm-differences)
 *   auth       auth_type none, api_key, bearer_token, basic, authorization,
 *              token (sent as "Authorization: token <v>"), oauth2 (client
 *              credentials: token_url, client_id, client_secret, scopes);
 *              auth_value (or authentication_token). basic: a "user:pass"
 *              value is base64-encoded, as LiteLLM's client does; a value
 *              without ":" is taken as already encoded
 *   the rest   description, spec_version, static_headers, extra_headers,
 *              allowed_tools, disallowed_tools, access_groups, allow_all_keys,
 *              timeout, command, args, env, mcp_info (server_name,
 *              description, mcp_server_cost_info)
 * Every string may be "os.environ/VAR": VAR's value, and an error naming the
 * server and the field when VAR is unset. Unknown fields are ignored.
 *
 * A DB row: the table's columns (server_id, server_name, alias, url,
 * transport, auth_type, credentials {auth_value, client_id, client_secret,
 * scopes}, mcp_info, static_headers, env as objects or JSON text, ...). A bad
 * row, or one whose id or prefix a server before it has, is skipped with a
 * line in warn; the set is built without it.
 *
 * The fingerprint (sha256 hex) covers what shapes the connection (transport,
 * url, spec_version, auth, static headers, command, args, env): a pool
 * restarts a server's session or child when it changes, and only then.
 */
#include "mcp/mcp.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "core/arena.h"
#include "core/hex.h"
#include "core/secret.h"
#include "core/utf8.h"
#include "providers/jdom.h"

#define MAX_PREFIX 127 /* fits sy_mcp_session.scope */

struct bctx {
    struct sy_arena *a;   /* the set's */
    struct sy_arena *tmp; /* the parse's */
    const char *where;    /* "mcp_servers.<name>" / "LiteLLM_MCPServerTable row <id>" */
    char *err;
    size_t errlen;
    int failed;
};

static int bad(struct bctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct bctx *c, const char *fmt, ...)
{
    if (!c->failed && c->err && c->errlen) {
        int k = snprintf(c->err, c->errlen, "%s: ", c->where);
        if (k >= 0 && (size_t)k < c->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(c->err + k, c->errlen - (size_t)k, fmt, ap);
            va_end(ap);
        }
    }
    c->failed = 1;
    return -1;
}

/* ---- values ---- */

/* The master key, for LiteLLM's salt when LITELLM_SALT_KEY is unset: set at
 * each config load (stages/mcp_registry.c), read by builds on DB threads. A
 * replaced key stays allocated, chained behind the new one (a reload that
 * changes the master key is rare; freeing it could pull it from under a
 * build reading it). */
struct master_key {
    struct master_key *older;
    char k[];
};
static struct master_key *_Atomic g_master_key;

void sy_mcp_set_master_key(const char *k)
{
    struct master_key *cur = atomic_load(&g_master_key);
    if (!k)
        k = "";
    if (cur ? strcmp(cur->k, k) == 0 : !*k)
        return;
    size_t n = strlen(k);
    struct master_key *m = malloc(sizeof *m + n + 1);
    if (!m)
        return;
    m->older = cur;
    memcpy(m->k, k, n + 1);
    atomic_store(&g_master_key, m);
}

/* A credential LiteLLM stored encrypted (its salt key: LITELLM_SALT_KEY, else
 * the master key; either of LiteLLM's formats, core/secret.h) is decrypted;
 * any other value stays as it is (LiteLLM's decrypt_value_helper with
 * return_original_value). */
static char *maybe_decrypt(struct bctx *c, char *v)
{
    const struct master_key *m = atomic_load(&g_master_key);
    const char *salt = sy_secret_salt(m ? m->k : NULL);
    char plain[4096];
    long n = v && salt ? sy_secret_decrypt(v, salt, plain, sizeof plain) : -1;
    if (n < 0 || sy_utf8_check(plain, (size_t)n) != (size_t)n)
        return v;
    char *r = sy_arena_strndup(c->a, plain, (size_t)n);
    OPENSSL_cleanse(plain, sizeof plain);
    return r;
}

/* A JSON value as text: strings decoded (NUL refused), numbers and booleans
 * as written; os.environ/VAR resolved. In the set's arena. */
static int scalar(struct bctx *c, const struct sy_jdoc *d, uint32_t v, const char *field, char **out)
{
    char t = sy_jdom_kind(d, v);
    size_t n = 0;
    const char *s;
    if (t == 's') {
        s = sy_jdom_str(d, v, c->tmp, &n);
        if (!s || memchr(s, 0, n))
            return bad(c, "%s: a NUL character in the value", field);
    } else if (t == 'n' || t == 't' || t == 'f') {
        s = sy_jdom_raw(d, v, &n);
    } else {
        return bad(c, "%s: must be a string", field);
    }
    static const char pre[] = "os.environ/";
    if (n >= sizeof pre - 1 && memcmp(s, pre, sizeof pre - 1) == 0) {
        char *name = sy_arena_strndup(c->tmp, s + sizeof pre - 1, n - (sizeof pre - 1));
        const char *val = *name ? getenv(name) : NULL;
        if (!val)
            return bad(c, "%s: environment variable %s is not set (os.environ/%s)", field, name, name);
        *out = sy_arena_strndup(c->a, val, strlen(val));
        return 0;
    }
    *out = sy_arena_strndup(c->a, s, n);
    return 0;
}

/* Member key of obj as a string (absent or null: *out NULL). */
static int str_field(struct bctx *c, const struct sy_jdoc *d, uint32_t obj, const char *key, char **out)
{
    *out = NULL;
    uint32_t v = sy_jdom_member(d, obj, key);
    if (!v)
        return 0;
    if (sy_jdom_kind(d, v) != 's')
        return bad(c, "%s: must be a string", key);
    return scalar(c, d, v, key, out);
}

/* A list of strings (a single string is a list of one). */
static int list_field(struct bctx *c, const struct sy_jdoc *d, uint32_t obj, const char *key, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    uint32_t v = sy_jdom_member(d, obj, key);
    if (!v)
        return 0;
    char t = sy_jdom_kind(d, v);
    if (t == 's') {
        char **l = sy_arena_alloc(c->a, sizeof *l);
        if (scalar(c, d, v, key, &l[0]) < 0)
            return -1;
        *out = l;
        *n = 1;
        return 0;
    }
    if (t != 'a')
        return bad(c, "%s: must be a list of strings", key);
    size_t k = d->n[v].kids, i = 0;
    char **l = sy_arena_alloc(c->a, (k ? k : 1) * sizeof *l);
    for (uint32_t e = sy_jdom_first(d, v); e; e = sy_jdom_next(d, e)) {
        char et = sy_jdom_type(d, e);
        if (et != 's' && et != 'n')
            return bad(c, "%s[%zu]: must be a string", key, i);
        if (scalar(c, d, e, key, &l[i]) < 0)
            return -1;
        i++;
    }
    *out = l;
    *n = i;
    return 0;
}

static int bool_field(struct bctx *c, const struct sy_jdoc *d, uint32_t obj, const char *key, int *out)
{
    uint32_t v = sy_jdom_member(d, obj, key);
    if (!v)
        return 0;
    if (sy_jdom_bool(d, v, out))
        return 0;
    if (sy_jdom_kind(d, v) == 's') { /* "true" from os.environ/ or a text column */
        char *s;
        if (scalar(c, d, v, key, &s) < 0)
            return -1;
        if (strcasecmp(s, "true") == 0 || strcasecmp(s, "false") == 0) {
            *out = strcasecmp(s, "true") == 0;
            return 0;
        }
    }
    return bad(c, "%s: must be true or false", key);
}

static int num_field(struct bctx *c, const struct sy_jdoc *d, uint32_t obj, const char *key, double *out)
{
    uint32_t v = sy_jdom_member(d, obj, key);
    if (!v)
        return 0;
    if (sy_jdom_num(d, v, out))
        return 0;
    if (sy_jdom_kind(d, v) == 's') {
        char *s, *e;
        if (scalar(c, d, v, key, &s) < 0)
            return -1;
        double x = strtod(s, &e);
        if (e != s && !*e) {
            *out = x;
            return 0;
        }
    }
    return bad(c, "%s: must be a number", key);
}

/* An object column that a database may hand as JSON text: *od and *oi the
 * object (0 absent). */
static int obj_field(struct bctx *c, const struct sy_jdoc *d, uint32_t obj, const char *key, const struct sy_jdoc **od,
                     uint32_t *oi)
{
    *od = d;
    *oi = 0;
    uint32_t v = sy_jdom_member(d, obj, key);
    if (!v)
        return 0;
    char t = sy_jdom_kind(d, v);
    if (t == 'o') {
        *oi = v;
        return 0;
    }
    if (t != 's')
        return bad(c, "%s: must be an object", key);
    size_t n;
    const char *s = sy_jdom_str(d, v, c->tmp, &n);
    struct sy_jdoc *sub = sy_arena_alloc(c->tmp, sizeof *sub);
    if (!s || sy_jdom_parse(sub, s, n, c->tmp, 0) != 0)
        return bad(c, "%s: not a JSON object", key);
    if (sy_jdom_type(sub, 0) == 'z') {
        *od = sub;
        return 0;
    }
    if (sy_jdom_type(sub, 0) != 'o')
        return bad(c, "%s: must be an object", key);
    *od = sub;
    *oi = 0;
    /* the root is node 0, which the member helpers take as "absent": the caller
     * reads it with sy_jdom_get; mark it present */
    *oi = (uint32_t)-1;
    return 0;
}

/* Node of an object returned by obj_field (-1 stands for a sub-document's root). */
static uint32_t root_of(uint32_t oi)
{
    return oi == (uint32_t)-1 ? 0 : oi;
}

/* Member lookups that work on a root object (node 0) too. */
static uint32_t memb(const struct sy_jdoc *d, uint32_t oi, const char *key)
{
    if (!oi)
        return 0;
    uint32_t v = sy_jdom_get(d, root_of(oi), key);
    return sy_jdom_kind(d, v) == 'z' ? 0 : v;
}

/* ---- names and headers ---- */

static int name_ok(struct bctx *c, const char *what, const char *s, int allow_dash)
{
    size_t n = strlen(s);
    if (!n)
        return bad(c, "%s must not be empty", what);
    if (n > MAX_PREFIX)
        return bad(c, "%s is longer than %d bytes", what, MAX_PREFIX);
    if (sy_utf8_check(s, n) != n)
        return bad(c, "%s is not valid UTF-8", what);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20 || ch == 0x7f || strchr("/\\?#%\"", ch))
            return bad(c, "%s \"%s\" has a character that cannot stand in a tool name or a path (%s)", what, s,
                       "/ \\ ? # % \" or a control character");
        if (ch == '-' && !allow_dash)
            return bad(c, "%s cannot contain '-' (the tool-name separator, as LiteLLM): \"%s\"", what, s);
    }
    return 0;
}

static char *normalize(struct sy_arena *a, const char *s)
{
    char *p = sy_arena_strndup(a, s, strlen(s));
    for (char *q = p; *q; q++)
        if (*q == ' ')
            *q = '_';
    return p;
}

static int tchar(unsigned char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static int header_name_ok(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!tchar((unsigned char)*s))
            return 0;
    return 1;
}

static int header_value_ok(const char *s)
{
    for (; *s; s++)
        if (*s == '\r' || *s == '\n')
            return 0;
    return 1;
}

/* ---- one server ---- */

static int parse_transport(struct bctx *c, const char *t, enum sy_mcp_transport *out)
{
    if (!strcasecmp(t, "http") || !strcasecmp(t, "streamable_http") || !strcasecmp(t, "streamable-http"))
        *out = SY_MCP_HTTP;
    else if (!strcasecmp(t, "sse"))
        *out = SY_MCP_SSE;
    else if (!strcasecmp(t, "stdio"))
        *out = SY_MCP_STDIO;
    else
        return bad(c, "transport: \"%s\" is not one of http, sse, stdio", t);
    return 0;
}

/* The path of an http(s) url ends in "/sse" (before any query). */
static int url_is_sse(const char *u)
{
    size_t n = strcspn(u, "?#");
    while (n && u[n - 1] == '/')
        n--;
    return n >= 4 && memcmp(u + n - 4, "/sse", 4) == 0;
}

static char *b64(struct sy_arena *a, const char *s)
{
    size_t n = strlen(s);
    char *o = sy_arena_alloc(a, 4 * ((n + 2) / 3) + 1);
    EVP_EncodeBlock((unsigned char *)o, (const unsigned char *)s, (int)n);
    return o;
}

static int parse_auth(struct bctx *c, const char *t, struct sy_mcp_server *s)
{
    if (!t || !strcasecmp(t, "none")) {
        s->auth_type = SY_MCP_AUTH_NONE;
    } else if (!strcmp(t, "api_key")) {
        s->auth_type = SY_MCP_AUTH_API_KEY;
    } else if (!strcmp(t, "bearer_token")) {
        s->auth_type = SY_MCP_AUTH_BEARER;
    } else if (!strcmp(t, "basic")) {
        s->auth_type = SY_MCP_AUTH_BASIC;
        if (s->auth_value && strchr(s->auth_value, ':'))
            s->auth_value = b64(c->a, s->auth_value);
    } else if (!strcmp(t, "authorization")) {
        s->auth_type = SY_MCP_AUTH_AUTHORIZATION;
    } else if (!strcmp(t, "token")) { /* LiteLLM: Authorization: token <v> */
        s->auth_type = SY_MCP_AUTH_AUTHORIZATION;
        if (s->auth_value) {
            size_t n = strlen(s->auth_value);
            char *v = sy_arena_alloc(c->a, n + 7);
            memcpy(v, "token ", 6);
            memcpy(v + 6, s->auth_value, n + 1);
            s->auth_value = v;
        }
    } else if (!strcmp(t, "oauth2")) {
        int have = !!s->token_url + !!s->client_id + !!s->client_secret;
        if (have == 3)
            s->auth_type = SY_MCP_AUTH_OAUTH2;
        else if (have == 0)
            s->auth_type = SY_MCP_AUTH_NONE; /* the caller's own OAuth token, forwarded per request */
        else
            return bad(c, "auth_type oauth2 needs token_url, client_id and client_secret (client credentials)");
    } else {
        return bad(c,
                   "auth_type \"%s\" is not supported (none, api_key, bearer_token, basic, authorization, token, "
                   "oauth2)",
                   t);
    }
    return 0;
}

static int parse_headers(struct bctx *c, const struct sy_jdoc *d, uint32_t oi, struct sy_mcp_server *s)
{
    if (!oi)
        return 0;
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    for (uint32_t k = sy_jdom_first(d, root_of(oi)); k; k = sy_jdom_next_key(d, k)) {
        const char *name = sy_jdom_str(d, k, c->tmp, NULL);
        char *val;
        if (!name || !header_name_ok(name)) {
            sy_buf_free(&b);
            return bad(c, "static_headers: \"%s\" is not a header name", name ? name : "");
        }
        if (sy_jdom_kind(d, sy_jdom_val(k)) == 'z')
            continue;
        if (scalar(c, d, sy_jdom_val(k), "static_headers", &val) < 0) {
            sy_buf_free(&b);
            return -1;
        }
        if (!header_value_ok(val)) {
            sy_buf_free(&b);
            return bad(c, "static_headers.%s: a line break in the value", name);
        }
        sy_buf_printf(&b, "%s: %s\r\n", name, val);
    }
    if (b.len)
        s->static_headers = sy_arena_strndup(c->a, b.p, b.len);
    int e = sy_buf_failed(&b);
    sy_buf_free(&b);
    return e ? bad(c, "static_headers: too large") : 0;
}

static int parse_env(struct bctx *c, const struct sy_jdoc *d, uint32_t oi, struct sy_mcp_server *s)
{
    if (!oi)
        return 0;
    size_t k = d->n[root_of(oi)].kids, i = 0;
    s->env = sy_arena_alloc(c->a, (k ? k : 1) * sizeof *s->env);
    for (uint32_t kn = sy_jdom_first(d, root_of(oi)); kn; kn = sy_jdom_next_key(d, kn)) {
        size_t nl;
        const char *name = sy_jdom_str(d, kn, c->tmp, &nl);
        char *val;
        if (!name || !nl || memchr(name, '=', nl) || memchr(name, 0, nl))
            return bad(c, "env: \"%s\" is not a variable name", name ? name : "");
        if (sy_jdom_kind(d, sy_jdom_val(kn)) == 'z')
            continue;
        if (scalar(c, d, sy_jdom_val(kn), "env", &val) < 0)
            return -1;
        size_t vl = strlen(val);
        char *kv = sy_arena_alloc(c->a, nl + vl + 2);
        memcpy(kv, name, nl);
        kv[nl] = '=';
        memcpy(kv + nl + 1, val, vl + 1);
        s->env[i++] = kv;
    }
    s->nenv = i;
    return 0;
}

static int parse_mcp_info(struct bctx *c, const struct sy_jdoc *d, uint32_t oi, struct sy_mcp_server *s)
{
    if (!oi)
        return 0;
    if (!s->description) {
        uint32_t v = memb(d, oi, "description");
        if (v && sy_jdom_kind(d, v) == 's' && scalar(c, d, v, "mcp_info.description", &s->description) < 0)
            return -1;
    }
    uint32_t ci = memb(d, oi, "mcp_server_cost_info");
    if (!ci)
        return 0;
    if (sy_jdom_kind(d, ci) != 'o')
        return bad(c, "mcp_info.mcp_server_cost_info: must be an object");
    uint32_t dc = sy_jdom_member(d, ci, "default_cost_per_query");
    if (dc && (!sy_jdom_num(d, dc, &s->default_cost) || s->default_cost < 0))
        return bad(c, "mcp_info.mcp_server_cost_info.default_cost_per_query: must be a number >= 0");
    uint32_t tc = sy_jdom_member(d, ci, "tool_name_to_cost_per_query");
    if (!tc)
        return 0;
    if (sy_jdom_kind(d, tc) != 'o')
        return bad(c, "mcp_info.mcp_server_cost_info.tool_name_to_cost_per_query: must be an object");
    size_t k = d->n[tc].kids, i = 0;
    s->tool_costs = sy_arena_alloc(c->a, (k ? k : 1) * sizeof *s->tool_costs);
    for (uint32_t kn = sy_jdom_first(d, tc); kn; kn = sy_jdom_next_key(d, kn)) {
        size_t nl;
        const char *tool = sy_jdom_str(d, kn, c->tmp, &nl);
        double x;
        if (!tool || !sy_jdom_num(d, sy_jdom_val(kn), &x) || x < 0)
            return bad(c, "mcp_info.mcp_server_cost_info.tool_name_to_cost_per_query.%s: must be a number >= 0",
                       tool ? tool : "");
        s->tool_costs[i].tool = sy_arena_strndup(c->a, tool, nl);
        s->tool_costs[i].cost = x;
        i++;
    }
    s->ntool_costs = i;
    return 0;
}

static void fp_add(EVP_MD_CTX *m, const char *s)
{
    uint32_t n = s ? (uint32_t)strlen(s) + 1 : 0; /* NULL and "" differ */
    unsigned char l[4] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16), (unsigned char)(n >> 8),
                          (unsigned char)n};
    EVP_DigestUpdate(m, l, 4);
    if (n)
        EVP_DigestUpdate(m, s, n - 1);
}

static void fingerprint(struct sy_mcp_server *s)
{
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    unsigned char h[32];
    unsigned int hl = 0;
    char num[32];
    if (!m)
        return;
    EVP_DigestInit_ex(m, EVP_sha256(), NULL);
    snprintf(num, sizeof num, "%d/%d", (int)s->transport, (int)s->auth_type);
    fp_add(m, num);
    fp_add(m, s->url);
    fp_add(m, s->spec_version);
    fp_add(m, s->auth_value);
    fp_add(m, s->token_url);
    fp_add(m, s->client_id);
    fp_add(m, s->client_secret);
    fp_add(m, s->scopes);
    fp_add(m, s->static_headers);
    fp_add(m, s->command);
    snprintf(num, sizeof num, "%zu", s->nargs);
    fp_add(m, num);
    for (size_t i = 0; i < s->nargs; i++)
        fp_add(m, s->args[i]);
    snprintf(num, sizeof num, "%zu", s->nenv);
    fp_add(m, num);
    for (size_t i = 0; i < s->nenv; i++)
        fp_add(m, s->env[i]);
    EVP_DigestFinal_ex(m, h, &hl);
    EVP_MD_CTX_free(m);
    sy_hex_encode(s->fingerprint, h, 32);
}

/* LiteLLM's _generate_stable_server_id. */
static char *stable_id(struct sy_arena *a, const char *name, const char *url, const char *transport,
                       const char *auth_type, const char *alias)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    sy_buf_printf(&b, "%s|%s|%s|%s|%s", name, url ? url : "", transport ? transport : "MCPTransport.http",
                  auth_type ? auth_type : "", alias ? alias : "");
    unsigned char h[32];
    unsigned int hl = 0;
    EVP_Digest(b.p ? b.p : "", b.len, h, &hl, EVP_sha256(), NULL);
    sy_buf_free(&b);
    char hex[65];
    sy_hex_encode(hex, h, 32);
    return sy_arena_strndup(a, hex, 32);
}

/* The fields a config entry and a DB row share. obj is an object of d. */
static int parse_common(struct bctx *c, const struct sy_jdoc *d, uint32_t obj, struct sy_mcp_server *s,
                        const char **transport_raw, const char **auth_raw)
{
    char *transport = NULL, *auth_type = NULL;
    if (str_field(c, d, obj, "url", &s->url) < 0 || str_field(c, d, obj, "transport", &transport) < 0 ||
        str_field(c, d, obj, "command", &s->command) < 0 || list_field(c, d, obj, "args", &s->args, &s->nargs) < 0 ||
        str_field(c, d, obj, "auth_type", &auth_type) < 0 || str_field(c, d, obj, "description", &s->description) < 0 ||
        str_field(c, d, obj, "spec_version", &s->spec_version) < 0 ||
        str_field(c, d, obj, "token_url", &s->token_url) < 0 ||
        list_field(c, d, obj, "extra_headers", &s->extra_headers, &s->nextra_headers) < 0 ||
        list_field(c, d, obj, "allowed_tools", &s->allowed_tools, &s->nallowed_tools) < 0 ||
        list_field(c, d, obj, "disallowed_tools", &s->disallowed_tools, &s->ndisallowed_tools) < 0 ||
        bool_field(c, d, obj, "allow_all_keys", &s->allow_all_keys) < 0 ||
        num_field(c, d, obj, "timeout", &s->timeout_s) < 0)
        return -1;
    *transport_raw = transport;
    *auth_raw = auth_type;
    if (s->timeout_s <= 0 || s->timeout_s > 86400)
        return bad(c, "timeout: must be a number of seconds in (0, 86400]");
    if (s->spec_version) {
        int ok = 0;
        for (int i = 0; sy_mcp_versions[i]; i++)
            ok |= !strcmp(s->spec_version, sy_mcp_versions[i]);
        if (!ok)
            return bad(c,
                       "spec_version: \"%s\" is not a protocol revision we speak (2025-11-25, 2025-06-18, "
                       "2025-03-26, 2024-11-05)",
                       s->spec_version);
    }
    for (size_t i = 0; i < s->nextra_headers; i++)
        if (!header_name_ok(s->extra_headers[i]))
            return bad(c, "extra_headers: \"%s\" is not a header name", s->extra_headers[i]);
    const struct sy_jdoc *od;
    uint32_t oi;
    if (obj_field(c, d, obj, "static_headers", &od, &oi) < 0 || parse_headers(c, od, oi, s) < 0)
        return -1;
    if (obj_field(c, d, obj, "env", &od, &oi) < 0 || parse_env(c, od, oi, s) < 0)
        return -1;
    if (obj_field(c, d, obj, "mcp_info", &od, &oi) < 0 || parse_mcp_info(c, od, oi, s) < 0)
        return -1;
    return 0;
}

/* Transport and its requirements, auth; after parse_common and the credentials. */
static int finish(struct bctx *c, struct sy_mcp_server *s, const char *transport, const char *auth_type)
{
    if (transport) {
        if (parse_transport(c, transport, &s->transport) < 0)
            return -1;
    } else if (s->command && !s->url) {
        s->transport = SY_MCP_STDIO;
    } else {
        s->transport = s->url && url_is_sse(s->url) ? SY_MCP_SSE : SY_MCP_HTTP;
    }
    if (s->transport == SY_MCP_STDIO) {
        if (!s->command || !*s->command)
            return bad(c, "transport stdio needs a command");
    } else {
        if (!s->url || !*s->url)
            return bad(c, "transport %s needs a url", s->transport == SY_MCP_SSE ? "sse" : "http");
        if (strncasecmp(s->url, "http://", 7) && strncasecmp(s->url, "https://", 8))
            return bad(c, "url: \"%s\" is not an http(s) URL", s->url);
        for (const char *q = s->url; *q; q++)
            if ((unsigned char)*q <= 0x20 || *q == 0x7f)
                return bad(c, "url: a space or control character in it");
    }
    if (s->auth_value && !header_value_ok(s->auth_value))
        return bad(c, "auth_value: a line break in the value");
    if (parse_auth(c, auth_type, s) < 0)
        return -1;
    if (s->auth_type == SY_MCP_AUTH_OAUTH2 && strncasecmp(s->token_url, "http://", 7) &&
        strncasecmp(s->token_url, "https://", 8))
        return bad(c, "token_url: \"%s\" is not an http(s) URL", s->token_url);
    fingerprint(s);
    return 0;
}

static int config_server(struct bctx *c, const struct sy_jdoc *d, uint32_t key, struct sy_mcp_server *s,
                         const struct sy_jdoc *ad, char *used_alias)
{
    size_t nl;
    const char *name = sy_jdom_str(d, key, c->tmp, &nl);
    uint32_t obj = sy_jdom_val(key);
    if (!name || memchr(name, 0, nl))
        return bad(c, "a server name with a NUL character");
    c->where = sy_arena_alloc(c->tmp, nl + 16);
    snprintf((char *)c->where, nl + 16, "mcp_servers.%s", name);
    if (name_ok(c, "the server name", name, 0) < 0)
        return -1;
    if (sy_jdom_kind(d, obj) != 'o')
        return bad(c, "must be a mapping of settings");
    s->name = sy_arena_strndup(c->a, name, nl);
    s->timeout_s = 60;
    const char *transport, *auth_type;
    if (parse_common(c, d, obj, s, &transport, &auth_type) < 0)
        return -1;
    if (str_field(c, d, obj, "auth_value", &s->auth_value) < 0 ||
        str_field(c, d, obj, "client_id", &s->client_id) < 0 ||
        str_field(c, d, obj, "client_secret", &s->client_secret) < 0 ||
        list_field(c, d, obj, "access_groups", &s->access_groups, &s->naccess_groups) < 0 ||
        str_field(c, d, obj, "alias", &s->alias) < 0)
        return -1;
    if (!s->auth_value && str_field(c, d, obj, "authentication_token", &s->auth_value) < 0)
        return -1;
    char **scopes;
    size_t nscopes;
    if (list_field(c, d, obj, "scopes", &scopes, &nscopes) < 0)
        return -1;
    if (nscopes) {
        struct sy_buf b;
        sy_buf_init(&b, 1 << 16);
        for (size_t i = 0; i < nscopes; i++)
            sy_buf_printf(&b, "%s%s", i ? " " : "", scopes[i]);
        s->scopes = b.p ? sy_arena_strndup(c->a, b.p, b.len) : NULL;
        sy_buf_free(&b);
    }
    /* the alias: its own, else the first mcp_aliases entry naming it not yet taken */
    if (!s->alias && ad) {
        uint32_t i = 0;
        for (uint32_t k = sy_jdom_first(ad, 0); k; k = sy_jdom_next_key(ad, k), i++) {
            if (used_alias[i] || !sy_jdom_str_eq(ad, sy_jdom_val(k), s->name))
                continue;
            size_t al;
            const char *alias = sy_jdom_str(ad, k, c->tmp, &al);
            if (!alias || memchr(alias, 0, al))
                return bad(c, "litellm_settings.mcp_aliases: an alias with a NUL character");
            used_alias[i] = 1;
            s->alias = sy_arena_strndup(c->a, alias, al);
            break;
        }
    }
    if (s->alias && name_ok(c, "the alias", s->alias, 0) < 0)
        return -1;
    s->prefix = normalize(c->a, s->alias ? s->alias : s->name);
    s->id = stable_id(c->a, s->name, s->url, transport, auth_type, s->alias);
    return finish(c, s, transport, auth_type);
}

static int db_server(struct bctx *c, const struct sy_jdoc *d, uint32_t row, struct sy_mcp_server *s)
{
    if (sy_jdom_kind(d, row) != 'o') {
        c->where = "LiteLLM_MCPServerTable row";
        return bad(c, "not an object");
    }
    c->where = "LiteLLM_MCPServerTable row";
    if (str_field(c, d, row, "server_id", &s->id) < 0)
        return -1;
    if (!s->id || !*s->id)
        return bad(c, "no server_id");
    size_t wl = strlen(s->id) + 40;
    c->where = sy_arena_alloc(c->tmp, wl);
    snprintf((char *)c->where, wl, "LiteLLM_MCPServerTable row %s", s->id);
    s->from_db = 1;
    s->timeout_s = 60;
    const char *transport, *auth_type;
    if (str_field(c, d, row, "server_name", &s->name) < 0 || str_field(c, d, row, "alias", &s->alias) < 0 ||
        list_field(c, d, row, "mcp_access_groups", &s->access_groups, &s->naccess_groups) < 0 ||
        parse_common(c, d, row, s, &transport, &auth_type) < 0)
        return -1;
    if (s->name && !*s->name)
        s->name = NULL;
    if (s->alias && !*s->alias)
        s->alias = NULL;
    if ((s->name && name_ok(c, "server_name", s->name, 0) < 0) || (s->alias && name_ok(c, "alias", s->alias, 0) < 0))
        return -1;
    if (!s->name)
        s->name = s->id;
    s->prefix = normalize(c->a, s->alias ? s->alias : s->name);
    if (name_ok(c, "the prefix", s->prefix, 1) < 0)
        return -1;
    const struct sy_jdoc *cd;
    uint32_t ci;
    if (obj_field(c, d, row, "credentials", &cd, &ci) < 0)
        return -1;
    if (ci) {
        uint32_t v;
        char *scopes_s = NULL;
        if (((v = memb(cd, ci, "auth_value")) && scalar(c, cd, v, "credentials.auth_value", &s->auth_value) < 0) ||
            ((v = memb(cd, ci, "client_id")) && scalar(c, cd, v, "credentials.client_id", &s->client_id) < 0) ||
            ((v = memb(cd, ci, "client_secret")) &&
             scalar(c, cd, v, "credentials.client_secret", &s->client_secret) < 0))
            return -1;
        s->auth_value = maybe_decrypt(c, s->auth_value);
        s->client_id = maybe_decrypt(c, s->client_id);
        s->client_secret = maybe_decrypt(c, s->client_secret);
        if ((v = memb(cd, ci, "scopes"))) {
            if (sy_jdom_kind(cd, v) == 's') {
                if (scalar(c, cd, v, "credentials.scopes", &scopes_s) < 0)
                    return -1;
            } else if (sy_jdom_kind(cd, v) == 'a') {
                struct sy_buf b;
                sy_buf_init(&b, 1 << 16);
                int k = 0;
                for (uint32_t e = sy_jdom_first(cd, v); e; e = sy_jdom_next(cd, e)) {
                    char *sc;
                    if (sy_jdom_kind(cd, e) != 's' || scalar(c, cd, e, "credentials.scopes", &sc) < 0) {
                        sy_buf_free(&b);
                        return c->failed ? -1 : bad(c, "credentials.scopes: must be a list of strings");
                    }
                    sy_buf_printf(&b, "%s%s", k++ ? " " : "", sc);
                }
                scopes_s = b.p ? sy_arena_strndup(c->a, b.p, b.len) : NULL;
                sy_buf_free(&b);
            } else {
                return bad(c, "credentials.scopes: must be a list of strings");
            }
        }
        s->scopes = scopes_s;
    }
    return finish(c, s, transport ? transport : "sse", auth_type); /* the column's default */
}

/* ---- the set ---- */

static int same(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* Does s clash with t: a name a client could mean either by (an id, name,
 * alias or prefix of one equal to any of the other's)? */
static const char *clash(const struct sy_mcp_server *s, const struct sy_mcp_server *t, const char **val)
{
    const char *a[4] = {s->id, s->name, s->alias, s->prefix}, *b[4] = {t->id, t->name, t->alias, t->prefix};
    static const char *const what[4] = {"server_id", "name", "alias", "tool prefix"};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            if (same(a[i], b[j])) {
                *val = a[i];
                return what[i];
            }
    return NULL;
}

static void set_free(struct sy_mcp_set *set)
{
    struct sy_arena *a = set->mem;
    sy_arena_free(a);
    free(a);
}

struct sy_mcp_set *sy_mcp_set_build(const char *servers_json, const char *aliases_json, const char *db_rows_json,
                                    char *err, size_t errlen, struct sy_buf *warn)
{
    if (err && errlen)
        err[0] = 0;
    struct sy_arena *a = malloc(sizeof *a);
    if (!a) {
        if (err && errlen)
            snprintf(err, errlen, "mcp_servers: out of memory");
        return NULL;
    }
    sy_arena_init(a);
    struct sy_arena tmp;
    sy_arena_init(&tmp);
    struct sy_mcp_set *set = sy_arena_alloc(a, sizeof *set);
    memset(set, 0, sizeof *set);
    atomic_init(&set->refs, 1);
    set->mem = a;
    struct bctx c = {a, &tmp, "mcp_servers", err, errlen, 0};
    struct sy_jdoc sd, ad, dd;
    int have_s = 0, have_a = 0, have_d = 0;
    size_t cap = 0;
    if (servers_json && *servers_json) {
        if (sy_jdom_parse(&sd, servers_json, strlen(servers_json), &tmp, 0) != 0) {
            bad(&c, "not valid JSON (%s)", sd.err ? sd.err : "?");
            goto fail;
        }
        if (sy_jdom_type(&sd, 0) == 'o') {
            have_s = 1;
            cap += sd.n[0].kids;
        } else if (sy_jdom_type(&sd, 0) != 'z') {
            bad(&c, "must be a mapping of server names to settings");
            goto fail;
        }
    }
    if (aliases_json && *aliases_json) {
        c.where = "litellm_settings.mcp_aliases";
        if (sy_jdom_parse(&ad, aliases_json, strlen(aliases_json), &tmp, 0) != 0) {
            bad(&c, "not valid JSON (%s)", ad.err ? ad.err : "?");
            goto fail;
        }
        if (sy_jdom_type(&ad, 0) == 'o') {
            have_a = 1;
            for (uint32_t k = sy_jdom_first(&ad, 0); k; k = sy_jdom_next_key(&ad, k))
                if (sy_jdom_type(&ad, sy_jdom_val(k)) != 's') {
                    bad(&c, "each alias must name a server (a string)");
                    goto fail;
                }
        } else if (sy_jdom_type(&ad, 0) != 'z') {
            bad(&c, "must be a mapping of aliases to server names");
            goto fail;
        }
    }
    if (db_rows_json && *db_rows_json) {
        if (sy_jdom_parse(&dd, db_rows_json, strlen(db_rows_json), &tmp, 0) != 0 || sy_jdom_type(&dd, 0) != 'a') {
            if (warn)
                sy_buf_printf(warn, "LiteLLM_MCPServerTable: the rows are not a JSON array; none loaded\n");
        } else {
            have_d = 1;
            cap += dd.n[0].kids;
        }
    }
    set->s = sy_arena_alloc(a, (cap ? cap : 1) * sizeof *set->s);
    memset(set->s, 0, (cap ? cap : 1) * sizeof *set->s);
    if (have_s) {
        char *used = sy_arena_alloc(&tmp, have_a ? ad.n[0].kids + 1 : 1);
        memset(used, 0, have_a ? ad.n[0].kids + 1 : 1);
        for (uint32_t k = sy_jdom_first(&sd, 0); k; k = sy_jdom_next_key(&sd, k)) {
            struct sy_mcp_server *s = &set->s[set->n];
            if (config_server(&c, &sd, k, s, have_a ? &ad : NULL, used) < 0)
                goto fail;
            for (size_t j = 0; j < set->n; j++) {
                const char *val, *why = clash(s, &set->s[j], &val);
                if (why) {
                    bad(&c, "its %s \"%s\" also names server %s", why, val, set->s[j].name);
                    goto fail;
                }
            }
            s->idx = (unsigned)set->n++;
        }
    }
    if (have_d) {
        for (uint32_t r = sy_jdom_first(&dd, 0); r; r = sy_jdom_next(&dd, r)) {
            struct sy_mcp_server *s = &set->s[set->n];
            char rerr[512];
            struct bctx rc = {a, &tmp, "LiteLLM_MCPServerTable row", rerr, sizeof rerr, 0};
            int ok = db_server(&rc, &dd, r, s) == 0;
            for (size_t j = 0; ok && j < set->n; j++) {
                const char *val, *why = clash(s, &set->s[j], &val);
                if (why) {
                    bad(&rc, "its %s \"%s\" also names server %s (%s): skipped", why, val, set->s[j].name,
                        set->s[j].from_db ? "an earlier row" : "the config wins");
                    ok = 0;
                }
            }
            if (!ok) {
                if (warn)
                    sy_buf_printf(warn, "%s\n", rerr);
                memset(s, 0, sizeof *s);
                continue;
            }
            s->idx = (unsigned)set->n++;
        }
    }
    sy_arena_free(&tmp);
    return set;
fail:
    sy_arena_free(&tmp);
    set_free(set);
    return NULL;
}

void sy_mcp_set_ref(struct sy_mcp_set *s)
{
    if (s)
        atomic_fetch_add(&s->refs, 1);
}

void sy_mcp_set_unref(struct sy_mcp_set *s)
{
    if (s && atomic_fetch_sub(&s->refs, 1) == 1)
        set_free(s);
}

static int eqn(const char *a, const char *p, size_t n)
{
    return a && strlen(a) == n && memcmp(a, p, n) == 0;
}

const struct sy_mcp_server *sy_mcp_find(const struct sy_mcp_set *set, const char *name, size_t len)
{
    if (!set || !name)
        return NULL;
    /* the id first, then the prefix and alias, then the name (LiteLLM's order) */
    for (size_t i = 0; i < set->n; i++)
        if (eqn(set->s[i].id, name, len))
            return &set->s[i];
    for (size_t i = 0; i < set->n; i++)
        if (eqn(set->s[i].prefix, name, len) || eqn(set->s[i].alias, name, len))
            return &set->s[i];
    for (size_t i = 0; i < set->n; i++)
        if (eqn(set->s[i].name, name, len))
            return &set->s[i];
    return NULL;
}

const struct sy_mcp_server *sy_mcp_split_tool(const struct sy_mcp_set *set, const char *name, size_t len,
                                              const char **tool, size_t *tool_len)
{
    const struct sy_mcp_server *best = NULL;
    size_t bl = 0;
    if (!set || !name)
        return NULL;
    for (size_t i = 0; i < set->n; i++) {
        const char *p = set->s[i].prefix;
        size_t pl = strlen(p);
        if (pl + 1 < len && memcmp(name, p, pl) == 0 && name[pl] == '-' && (!best || pl > bl)) {
            best = &set->s[i];
            bl = pl;
        }
    }
    if (best) {
        if (tool)
            *tool = name + bl + 1;
        if (tool_len)
            *tool_len = len - bl - 1;
    }
    return best;
}

/* ---- GET /v1/mcp/server ---- */

static void jw_list(struct sy_jw *w, const char *key, char **l, size_t n)
{
    sy_jw_key(w, key);
    sy_jw_arr(w);
    for (size_t i = 0; i < n; i++)
        sy_jw_cstr(w, l[i]);
    sy_jw_end(w);
}

static const char *transport_name(enum sy_mcp_transport t)
{
    return t == SY_MCP_SSE ? "sse" : t == SY_MCP_STDIO ? "stdio" : "http";
}

static const char *auth_name(const struct sy_mcp_server *s)
{
    switch (s->auth_type) {
    case SY_MCP_AUTH_API_KEY: return "api_key";
    case SY_MCP_AUTH_BEARER: return "bearer_token";
    case SY_MCP_AUTH_BASIC: return "basic";
    case SY_MCP_AUTH_AUTHORIZATION:
        return s->auth_value && !strncmp(s->auth_value, "token ", 6) ? "token" : "authorization";
    case SY_MCP_AUTH_OAUTH2: return "oauth2";
    default: return NULL;
    }
}

void sy_mcp_server_json(const struct sy_mcp_server *s, struct sy_buf *b)
{
    struct sy_jw w;
    char now[40];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%S.000000", &tm);
    sy_jw_init(&w, b);
    sy_jw_obj(&w);
    sy_jw_key(&w, "server_id");
    sy_jw_cstr(&w, s->id);
    sy_jw_key(&w, "server_name");
    sy_jw_cstr(&w, s->name);
    sy_jw_key(&w, "alias");
    sy_jw_cstr(&w, s->alias);
    sy_jw_key(&w, "description");
    sy_jw_cstr(&w, s->description);
    sy_jw_key(&w, "url");
    sy_jw_cstr(&w, s->transport == SY_MCP_STDIO ? NULL : s->url);
    sy_jw_key(&w, "transport");
    sy_jw_cstr(&w, transport_name(s->transport));
    sy_jw_key(&w, "spec_version");
    sy_jw_cstr(&w, s->spec_version);
    sy_jw_key(&w, "auth_type");
    sy_jw_cstr(&w, auth_name(s));
    sy_jw_key(&w, "created_at");
    sy_jw_cstr(&w, now);
    sy_jw_key(&w, "updated_at");
    sy_jw_cstr(&w, now);
    sy_jw_key(&w, "teams");
    sy_jw_arr(&w);
    sy_jw_end(&w);
    jw_list(&w, "mcp_access_groups", s->access_groups, s->naccess_groups);
    jw_list(&w, "allowed_tools", s->allowed_tools, s->nallowed_tools);
    jw_list(&w, "disallowed_tools", s->disallowed_tools, s->ndisallowed_tools);
    jw_list(&w, "extra_headers", s->extra_headers, s->nextra_headers);
    sy_jw_key(&w, "mcp_info");
    sy_jw_obj(&w);
    sy_jw_key(&w, "server_name");
    sy_jw_cstr(&w, s->name);
    if (s->description) {
        sy_jw_key(&w, "description");
        sy_jw_cstr(&w, s->description);
    }
    if (s->default_cost > 0 || s->ntool_costs) {
        sy_jw_key(&w, "mcp_server_cost_info");
        sy_jw_obj(&w);
        if (s->default_cost > 0) {
            sy_jw_key(&w, "default_cost_per_query");
            sy_jw_double(&w, s->default_cost);
        }
        if (s->ntool_costs) {
            sy_jw_key(&w, "tool_name_to_cost_per_query");
            sy_jw_obj(&w);
            for (size_t i = 0; i < s->ntool_costs; i++) {
                sy_jw_key(&w, s->tool_costs[i].tool);
                sy_jw_double(&w, s->tool_costs[i].cost);
            }
            sy_jw_end(&w);
        }
        sy_jw_end(&w);
    }
    sy_jw_end(&w);
    /* header and environment values may be secrets: names only, values masked */
    sy_jw_key(&w, "static_headers");
    sy_jw_obj(&w);
    for (const char *l = s->static_headers; l && *l;) {
        const char *colon = strchr(l, ':'), *eol = strstr(l, "\r\n");
        if (!colon || !eol)
            break;
        sy_jw_keyn(&w, l, (size_t)(colon - l));
        sy_jw_cstr(&w, "********");
        l = eol + 2;
    }
    sy_jw_end(&w);
    sy_jw_key(&w, "status");
    sy_jw_null(&w);
    sy_jw_key(&w, "last_health_check");
    sy_jw_null(&w);
    sy_jw_key(&w, "health_check_error");
    sy_jw_null(&w);
    sy_jw_key(&w, "command");
    sy_jw_cstr(&w, s->command);
    jw_list(&w, "args", s->args, s->nargs);
    sy_jw_key(&w, "env");
    sy_jw_obj(&w);
    for (size_t i = 0; i < s->nenv; i++) {
        const char *eq = strchr(s->env[i], '=');
        sy_jw_keyn(&w, s->env[i], eq ? (size_t)(eq - s->env[i]) : strlen(s->env[i]));
        sy_jw_cstr(&w, "********");
    }
    sy_jw_end(&w);
    sy_jw_key(&w, "authorization_url");
    sy_jw_null(&w);
    sy_jw_key(&w, "token_url");
    sy_jw_cstr(&w, s->token_url);
    sy_jw_key(&w, "registration_url");
    sy_jw_null(&w);
    sy_jw_key(&w, "allow_all_keys");
    sy_jw_bool(&w, s->allow_all_keys);
    sy_jw_key(&w, "available_on_public_internet");
    sy_jw_bool(&w, 0);
    sy_jw_key(&w, "timeout");
    sy_jw_double(&w, s->timeout_s);
    sy_jw_key(&w, "credentials"); /* LiteLLM's _redact_mcp_credentials */
    sy_jw_null(&w);
    sy_jw_end(&w);
}
