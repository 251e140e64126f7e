/* mcp.c - the MCP gateway's endpoints: streamable HTTP at /mcp, /mcp/{servers}
 * and /{alias}/mcp, LiteLLM's REST mirror /mcp-rest/tools/list|call, and the
 * dispatch of client JSON-RPC messages that the SSE transport (mcp_sse.c) and
 * the LLM tools (mcp_tools.c) share.
 *
 *   POST /mcp ─ auth stage (x-litellm-api-key first) ─ mcp_run
 *     │ Content-Type / Accept / body ─ sy_mcp_rpc_parse (one message or a batch)
 *     │ initialize ─▶ our serverInfo, the negotiated revision, a minted Mcp-Session-Id
 *     │ else: Mcp-Session-Id read (HMAC, bound to the key and the path's scope),
 *     │       refused when DELETEd (here, and on every instance through Redis),
 *     │       MCP-Protocol-Version checked
 *     ▼
 *   dispatch: one job per request of the body, all started at once
 *     tools/list, prompts/list, resources/list ... ─ one op per server the
 *        caller may use (sy_mcp_allowed, narrowed by x-mcp-servers and the
 *        path), in parallel through the worker's pool; a server that fails is
 *        logged and left out; names namespaced "<prefix>-<name>"
 *     tools/call, prompts/get ─ the name split (sy_mcp_split_tool), the
 *        permission checked (sy_mcp_tool_allowed), forwarded with the bare
 *        name; the server's result returned as it is, under the client's id
 *     ▼
 *   one answer: a JSON object, an array for a batch, 202 when the body held
 *   only notifications and responses.
 *
 * Sessions are stateless (mcp/session.c): any instance holding the same
 * secret (LITELLM_SALT_KEY, else the master key) reads a session another
 * minted. A DELETE puts the session's nonce in a small process-wide table of
 * revoked nonces (lock-free) and, with Redis, in a key with the session's
 * remaining lifetime that every instance checks with one EXISTS per request.
 *
 * Each tool call is accounted: a LiteLLM_SpendLogs row (call_type
 * "call_mcp_tool", mcp_namespaced_tool_name, the server's per-call cost), the
 * key's spend, and litellm_mcp_tool_calls_total / _latency_seconds.
 *
 * One file of ~1,900 lines, on purpose: the three entry points (streamable
 * HTTP, the REST mirror, and sy_mcp_dispatch / list_tools / call_tool for
 * mcp_sse.c and mcp_tools.c) share one job machine (fan-out to servers,
 * answers, accounting); split, its internals would become a header.
 *
 * Requests keep their state in the call's arena; a server's answer is parsed
 * with jdom (one array of nodes from the arena) only where names are
 * rewritten (lists); a tools/call answer is cut at its top-level "result" or
 * "error" member by span and copied once into the reply.
 */
#include "stages/mcp.h"

#include <http_parser.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include <sys/random.h>

#include "core/clock.h"
#include "core/errors.h"
#include "core/hex.h"
#include "core/log.h"
#include "gateway/slot.h"
#include "gateway/stage.h"
#include "http/reply.h"
#include "http/server.h"
#include "keys/keys.h"
#include "metrics/metrics.h"
#include "providers/jdom.h"
#include "redis/redis.h"
#include "spend/spend.h"

#define MAX_BATCH      100           /* messages in one body (the TS SDK's MAX_BATCH_SIZE) */
#define SESSION_MAX_S  (24.0 * 3600) /* a session older than this is refused (404: the client starts anew) */
#define REVOKED_SLOTS  8192          /* process-wide table of revoked session nonces */
#define REVOKED_PROBE  16
#define SERVER_VERSION "1.0.0" /* LiteLLM's LITELLM_MCP_SERVER_VERSION */

/* ---- per config ---- */

struct mcp_conf {
    char secret[512]; /* the session ids' HMAC secret */
    size_t slen;
    char server_name[128]; /* serverInfo.name: LITELLM_MCP_SERVER_NAME, else LiteLLM's default */
};

static int conf_slot = -1;
static int mcp_slot = -1;

static int mcp_conf_build(struct sy_gwconf *g, void **out, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    struct mcp_conf *mc = calloc(1, sizeof *mc);
    if (!mc)
        return -1;
    const char *salt = getenv("LITELLM_SALT_KEY");
    const char *nm = getenv("LITELLM_MCP_SERVER_NAME");
    snprintf(mc->server_name, sizeof mc->server_name, "%s", nm && *nm ? nm : "litellm-mcp-server");
    if (salt && *salt && strlen(salt) < sizeof mc->secret) {
        mc->slen = strlen(salt);
        memcpy(mc->secret, salt, mc->slen);
    } else if (g->master_key && g->master_key_len && g->master_key_len < sizeof mc->secret) {
        mc->slen = g->master_key_len;
        memcpy(mc->secret, g->master_key, mc->slen);
    } else {
        /* auth off: anyone may open a session, so the mac protects nothing
         * secret; a key derived from the config lets every instance that
         * runs the same config read the others' sessions */
        static const char tag[] = "switchyard mcp sessions, auth off";
        const char *ms = g->cfg->mcp_servers ? g->cfg->mcp_servers : "";
        EVP_MD_CTX *d = EVP_MD_CTX_new();
        unsigned int n = 0;
        int ok = d && EVP_DigestInit_ex(d, EVP_sha256(), NULL) && EVP_DigestUpdate(d, tag, sizeof tag) &&
                 EVP_DigestUpdate(d, ms, strlen(ms)) && EVP_DigestFinal_ex(d, (unsigned char *)mc->secret, &n);
        EVP_MD_CTX_free(d);
        if (!ok) {
            free(mc);
            snprintf(err, errlen, "mcp: the session key could not be derived");
            return -1;
        }
        mc->slen = n;
    }
    *out = mc;
    return 0;
}

/* The session ids' secret under config g (stages/mcp.h). */
const char *sy_mcp_secret(const struct sy_gwconf *g, size_t *len)
{
    const struct mcp_conf *mc = sy_stage_conf(g, conf_slot);
    if (!mc) {
        *len = 0;
        return NULL;
    }
    *len = mc->slen;
    return mc->secret;
}

static void mcp_conf_free(void *p)
{
    if (p) {
        memset(p, 0, sizeof(struct mcp_conf));
        free(p);
    }
}

/* ---- revoked sessions (DELETE) ---- */

static _Atomic uint64_t revoked[REVOKED_SLOTS];

static uint64_t nonce_hash(const char *nonce)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a; the nonce is 128 random bits already */
    for (const char *p = nonce; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return h ? h : 1;
}

static void revoke_local(const char *nonce)
{
    uint64_t h = nonce_hash(nonce);
    size_t i0 = (size_t)(h % REVOKED_SLOTS);
    for (size_t k = 0; k < REVOKED_PROBE; k++) {
        _Atomic uint64_t *slot = &revoked[(i0 + k) % REVOKED_SLOTS];
        uint64_t cur = atomic_load_explicit(slot, memory_order_relaxed);
        if (cur == h)
            return;
        if (cur == 0 && atomic_compare_exchange_strong(slot, &cur, h))
            return;
    }
    /* the neighbourhood is full: the oldest revocations there give way (bounded table, documented) */
    atomic_store(&revoked[i0], h);
}

static int revoked_local(const char *nonce)
{
    uint64_t h = nonce_hash(nonce);
    size_t i0 = (size_t)(h % REVOKED_SLOTS);
    for (size_t k = 0; k < REVOKED_PROBE; k++) {
        uint64_t cur = atomic_load_explicit(&revoked[(i0 + k) % REVOKED_SLOTS], memory_order_relaxed);
        if (cur == h)
            return 1;
        if (!cur)
            return 0;
    }
    return 0;
}

#define REVOKED_KEY_PREFIX "switchyard:mcp:revoked:"

/* ---- one dispatch ---- */

enum mkind {
    MK_INIT,
    MK_PING,
    MK_TOOLS_LIST,
    MK_TOOLS_CALL,
    MK_PROMPTS_LIST,
    MK_PROMPTS_GET,
    MK_RES_LIST,
    MK_RES_TEMPLATES,
    MK_RES_READ,
    MK_UNKNOWN,
};

/* How the answer of a dispatch is written. */
enum mode {
    MODE_RPC,       /* JSON-RPC responses (one, or an array for a batch) */
    MODE_TOOLS_ARR, /* sy_mcp_list_tools: a JSON array of Tool objects */
    MODE_CALL_RAW,  /* sy_mcp_call_tool: the CallToolResult */
    MODE_REST_LIST, /* GET /mcp-rest/tools/list */
    MODE_REST_CALL, /* POST /mcp-rest/tools/call */
};

struct job;

struct sub {
    struct job *j;
    const struct sy_mcp_server *s;
    struct sy_mcp_op *op;
    int running;
    int err;
    const char *msg; /* arena copy */
    size_t n;
};

struct job {
    struct disp *d;
    enum mkind kind;
    const char *id; /* the client's id (raw JSON), NULL: null */
    size_t id_len;
    const char *params;
    size_t params_len;
    struct sub *subs;
    size_t nsubs, pending;
    /* tools/call and prompts/get: the server and the bare name */
    const struct sy_mcp_server *s;
    const char *bare;
    size_t bare_len;
    const char *fwd; /* forwarded params (arena) */
    size_t fwd_len;
    uint64_t t0;
    struct sy_buf out; /* this job's answer (a JSON-RPC response, or the mode's document) */
    int done;
    int answered; /* out holds the answer already (inline results, refusals): nothing to finish */
};

struct disp {
    struct sy_call *c;
    struct sy_mcp_set *set; /* referenced; unref'd with the arena */
    struct sy_mcp_pool *pool;
    const struct sy_mcp_server *one; /* the path's server, NULL: all */
    unsigned char *allowed;          /* per set->s[i], after narrowing */
    enum mode mode;
    int is_batch;
    struct job *jobs;
    size_t njobs, pending;
    sy_mcp_reply_fn reply;
    sy_mcp_json_fn json;
    void *arg;
    int status; /* HTTP status of the answer (MODE_RPC: 200) */
    int canceled;
    struct sy_mcp_batch batch;
    int have_batch;
};

static void disp_cleanup(void *p)
{
    struct disp *d = p;
    for (size_t i = 0; i < d->njobs; i++) {
        struct job *j = &d->jobs[i];
        for (size_t k = 0; k < j->nsubs; k++)
            if (j->subs[k].running) {
                j->subs[k].running = 0;
                sy_mcp_cancel(j->subs[k].op);
            }
        sy_buf_free(&j->out);
    }
    if (d->have_batch)
        sy_mcp_batch_free(&d->batch);
    if (d->set)
        sy_mcp_set_unref(d->set);
}

/* The caller's hashed key as sessions bind it ("" for the master key / no auth). */
static void caller_hash(const struct sy_call *c, char out[17])
{
    const char *h = c->auth.key ? c->auth.key->token : c->auth.no_db ? c->auth.hashed_key : NULL;
    if (h && strlen(h) >= 16) {
        memcpy(out, h, 16);
        out[16] = 0;
    } else
        out[0] = 0;
}

/* Is this server the caller's (the key's, team's, org's object permissions)? */
static void compute_allowed(struct disp *d)
{
    const struct sy_call *c = d->c;
    size_t n = d->set ? d->set->n : 0;
    d->allowed = sy_arena_alloc(&c->req->arena, n ? n : 1);
    if (!n)
        return;
    const struct sy_keyinfo *k = c->auth.key;
    int admin = c->auth.is_admin || !c->g->master_key; /* no master key: the proxy is open, as LiteLLM */
    sy_mcp_allowed(d->set, admin, k ? k->perm : NULL, k ? k->team_perm : NULL, k ? k->org_perm : NULL, d->allowed);
}

/* Keep only the servers a comma list names (x-mcp-servers, /mcp/a,b): a
 * server's id, name, alias or prefix, or an access group (every server of it,
 * as LiteLLM reads the header). */
static void narrow(struct disp *d, const char *list, size_t n)
{
    if (!d->set)
        return;
    unsigned char *keep = sy_arena_alloc(&d->c->req->arena, d->set->n ? d->set->n : 1);
    memset(keep, 0, d->set->n);
    size_t i = 0;
    while (i <= n) {
        size_t e = i;
        while (e < n && list[e] != ',')
            e++;
        size_t a = i, b = e;
        while (a < b && (list[a] == ' ' || list[a] == '\t'))
            a++;
        while (b > a && (list[b - 1] == ' ' || list[b - 1] == '\t'))
            b--;
        if (b > a) {
            const struct sy_mcp_server *s = sy_mcp_find(d->set, list + a, b - a);
            if (s)
                keep[s->idx] = 1;
            else
                for (size_t k = 0; k < d->set->n; k++)
                    for (size_t g = 0; g < d->set->s[k].naccess_groups; g++)
                        if (strlen(d->set->s[k].access_groups[g]) == b - a &&
                            memcmp(d->set->s[k].access_groups[g], list + a, b - a) == 0)
                            keep[k] = 1;
        }
        i = e + 1;
    }
    for (size_t k = 0; k < d->set->n; k++)
        d->allowed[k] &= keep[k];
}

/* A server of the current set that is the same as `s` (a caller's pointer
 * from an older set: found again by prefix). */
static const struct sy_mcp_server *same_server(const struct sy_mcp_set *set, const struct sy_mcp_server *s)
{
    if (!s || !set)
        return NULL;
    if (s->idx < set->n && &set->s[s->idx] == s)
        return s;
    return sy_mcp_find(set, s->prefix, strlen(s->prefix));
}

static struct disp *disp_new(struct sy_call *c, const struct sy_mcp_server *one, enum mode mode)
{
    struct disp *d = sy_arena_alloc(&c->req->arena, sizeof *d);
    if (!d)
        return NULL;
    memset(d, 0, sizeof *d);
    d->c = c;
    d->mode = mode;
    d->status = 200;
    d->set = sy_mcp_current(c->g);
    sy_arena_defer(&c->req->arena, disp_cleanup, d);
    d->pool = d->set ? sy_mcp_worker_pool(c->w) : NULL;
    compute_allowed(d);
    if (one) {
        d->one = same_server(d->set, one);
        if (d->set)
            for (size_t i = 0; i < d->set->n; i++)
                if (!d->one || i != d->one->idx)
                    d->allowed[i] = 0;
    }
    struct sy_str h = sy_req_header(c->req, "x-mcp-servers");
    if (h.p)
        narrow(d, h.p, h.n);
    return d;
}

/* ---- headers forwarded to a server ---- */

static int token_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static int safe_value(struct sy_str v)
{
    for (size_t i = 0; i < v.n; i++)
        if (v.p[i] == '\r' || v.p[i] == '\n' || v.p[i] == 0)
            return 0;
    return 1;
}

static int name_is(struct sy_str h, const char *name, size_t off)
{
    size_t n = strlen(name);
    return h.n >= off + n && strncasecmp(h.p + off, name, n) == 0;
}

/* "x-mcp-<server>-<header>" for s: the offset of <header> in the name, 0 when
 * the header is not s's. <server> is s's prefix, name or alias (any case). */
static size_t server_header(struct sy_str h, const struct sy_mcp_server *s)
{
    if (h.n <= 6 || strncasecmp(h.p, "x-mcp-", 6) != 0)
        return 0;
    const char *names[3] = {s->prefix, s->name, s->alias};
    for (int i = 0; i < 3; i++) {
        if (!names[i])
            continue;
        size_t n = strlen(names[i]);
        if (h.n > 6 + n + 1 && name_is(h, names[i], 6) && h.p[6 + n] == '-')
            return 6 + n + 1;
    }
    return 0;
}

/* A header that carries the gateway key: never forwarded (x-litellm-api-key,
 * and the others auth reads when x-litellm-api-key is absent). */
static int gateway_key_header(const struct sy_req *r, struct sy_str nm)
{
    static const char *const keyh[] = {"authorization", "api-key", "x-api-key", "x-goog-api-key",
                                       "ocp-apim-subscription-key"};
    if (SY_STR_CASEEQ(nm, "x-litellm-api-key"))
        return 1;
    if (sy_req_header(r, "x-litellm-api-key").p)
        return 0;
    for (size_t i = 0; i < sizeof keyh / sizeof keyh[0]; i++)
        if (sy_str_caseeq(nm, keyh[i], strlen(keyh[i])))
            return 1;
    return 0;
}

/* The client headers forwarded to s, as "Name: v\r\n" lines (arena); *len 0: none. */
static const char *fwd_headers(struct sy_call *c, const struct sy_mcp_server *s, size_t *len)
{
    struct sy_buf b;
    sy_buf_init(&b, 64 * 1024);
    const struct sy_req *r = c->req;
    for (size_t i = 0; i < r->nheaders; i++) {
        struct sy_str nm = r->headers[i].name, v = r->headers[i].value;
        if (!safe_value(v))
            continue;
        size_t off = server_header(nm, s);
        if (off) { /* x-mcp-<alias>-<header>: this server only */
            int ok = 1;
            for (size_t k = off; k < nm.n; k++)
                ok &= token_char(nm.p[k]);
            if (!ok)
                continue;
            sy_buf_append(&b, nm.p + off, nm.n - off);
            SY_BUF_LIT(&b, ": ");
            sy_buf_append(&b, v.p, v.n);
            SY_BUF_LIT(&b, "\r\n");
            continue;
        }
        for (size_t k = 0; k < s->nextra_headers; k++) /* the server's extra_headers, as they come */
            if (sy_str_caseeq(nm, s->extra_headers[k], strlen(s->extra_headers[k])) && !gateway_key_header(r, nm)) {
                sy_buf_append(&b, nm.p, nm.n);
                SY_BUF_LIT(&b, ": ");
                sy_buf_append(&b, v.p, v.n);
                SY_BUF_LIT(&b, "\r\n");
                break;
            }
    }
    /* An oauth2 server without client credentials: the client's own
     * Authorization goes to it (LiteLLM's oauth2_headers), when the gateway
     * key came in x-litellm-api-key (else Authorization is the gateway key). */
    if (s->auth_type == SY_MCP_AUTH_OAUTH2 && !s->token_url && sy_req_header(r, "x-litellm-api-key").p) {
        struct sy_str a = sy_req_header(r, "authorization");
        if (a.p && a.n && safe_value(a)) {
            SY_BUF_LIT(&b, "Authorization: ");
            sy_buf_append(&b, a.p, a.n);
            SY_BUF_LIT(&b, "\r\n");
        }
    }
    const char *out = NULL;
    *len = 0;
    if (b.len && !sy_buf_failed(&b)) {
        out = sy_arena_strndup(&c->req->arena, b.p, b.len);
        *len = b.len;
    }
    sy_buf_free(&b);
    return out;
}

/* ---- answers ---- */

static void rpc_head(struct sy_buf *b, const char *id, size_t id_len)
{
    SY_BUF_LIT(b, "{\"jsonrpc\":\"2.0\",\"id\":");
    if (id && id_len)
        sy_buf_append(b, id, id_len);
    else
        SY_BUF_LIT(b, "null");
}

static void job_error(struct job *j, int code, const char *msg)
{
    sy_buf_reset(&j->out);
    sy_mcp_rpc_error(&j->out, j->id, j->id_len, code, msg);
    j->answered = 1;
}

/* The top-level member `name` of the JSON object text p (raw), or NULL. */
static const char *member(const char *p, size_t n, const char *name, size_t *len)
{
    return p ? sy_mcp_member(p, n, name, len) : NULL;
}

static void disp_job_done(struct job *j);

static void sub_done(void *ud, int err, const char *msg, size_t n)
{
    struct sub *s = ud;
    if (!s->running)
        return;
    s->running = 0;
    s->op = NULL;
    s->err = err;
    struct sy_call *c = s->j->d->c;
    s->n = msg ? n : 0;
    if (s->j->pending == 1) { /* the job's last answer: read now, while msg is valid (no copy) */
        s->msg = msg ? msg : "";
        s->j->pending = 0;
        disp_job_done(s->j);
        return;
    }
    s->msg = msg && n ? sy_arena_strndup(&c->req->arena, msg, n) : "";
    s->j->pending--;
}

static int sub_start(struct job *j, struct sub *s, const char *method, const char *params, size_t plen)
{
    struct sy_call *c = j->d->c;
    s->j = j;
    size_t hl = 0;
    const char *h = fwd_headers(c, s->s, &hl);
    struct sy_mcp_req r = {
        .s = s->s,
        .method = method,
        .params = params,
        .params_len = plen,
        .headers = h,
        .headers_len = hl,
    };
    s->running = 1;
    j->pending++;
    s->op = j->d->pool ? sy_mcp_request(j->d->pool, &r, sub_done, s) : NULL;
    if (!s->op) {
        s->running = 0;
        j->pending--;
        s->err = SY_EINTERNAL;
        s->msg = "the MCP client could not start the request";
        s->n = strlen(s->msg);
        return -1;
    }
    return 0;
}

/* Copy one list item (an object) of server s into w with its "name" member
 * namespaced "<prefix>-<name>" (rename) and, for tools, only when the caller
 * may call it. extra: a member appended (REST's mcp_info). */
static void copy_item(struct sy_jw *w, const struct sy_jdoc *doc, uint32_t it, const struct sy_mcp_server *s,
                      int rename, int mcp_info, struct sy_arena *a)
{
    sy_jw_obj(w);
    for (uint32_t k = sy_jdom_first(doc, it); k; k = sy_jdom_next_key(doc, k)) {
        uint32_t v = sy_jdom_val(k);
        size_t kl;
        const char *key = sy_jdom_view(doc, k, a, &kl);
        if (!key)
            continue;
        sy_jw_keyn(w, key, kl);
        if (rename && kl == 4 && !memcmp(key, "name", 4) && sy_jdom_type(doc, v) == 's') {
            size_t vl;
            const char *vr = sy_jdom_raw(doc, v, &vl); /* "..." with its quotes, escapes kept */
            size_t pl = strlen(s->prefix);
            struct sy_buf nb;
            sy_buf_init(&nb, 6 * pl + vl + 8);
            SY_BUF_LIT(&nb, "\"");
            sy_buf_json_escape(&nb, s->prefix, pl);
            SY_BUF_LIT(&nb, "-");
            sy_buf_append(&nb, vr + 1, vl - 1);
            if (sy_buf_failed(&nb))
                sy_jw_node(w, doc, v);
            else
                sy_jw_raw(w, nb.p, nb.len);
            sy_buf_free(&nb);
            continue;
        }
        sy_jw_node(w, doc, v);
    }
    if (mcp_info) {
        sy_jw_key(w, "mcp_info");
        sy_jw_obj(w);
        sy_jw_key(w, "server_name");
        sy_jw_cstr(w, s->name);
        sy_jw_key(w, "server_id");
        sy_jw_cstr(w, s->id);
        if (s->description) {
            sy_jw_key(w, "description");
            sy_jw_cstr(w, s->description);
        }
        sy_jw_end(w);
    }
    sy_jw_end(w);
}

/* The caller may call tool (bare name) of s. */
static int tool_ok(const struct sy_call *c, const struct sy_mcp_server *s, const char *t, size_t n)
{
    const struct sy_keyinfo *k = c->auth.key;
    return sy_mcp_tool_allowed(s, t, n, k ? k->perm : NULL, k ? k->team_perm : NULL);
}

/* Append the items of one server's list answer (result.<field>) to w. */
static int append_items(struct job *j, struct sub *s, const char *field, struct sy_jw *w, int rename, int mcp_info)
{
    struct sy_call *c = j->d->c;
    struct sy_jdoc doc;
    if (sy_jdom_parse(&doc, s->msg, s->n, &c->req->arena, 0) != 0 || sy_jdom_type(&doc, 0) != 'o')
        return -1;
    uint32_t res = sy_jdom_top(&doc, "result");
    if (sy_jdom_kind(&doc, res) != 'o')
        return -1;
    uint32_t arr = sy_jdom_member(&doc, res, field);
    if (!arr)
        return 0;
    if (sy_jdom_kind(&doc, arr) != 'a')
        return -1;
    int tools = !strcmp(field, "tools");
    for (uint32_t it = sy_jdom_first(&doc, arr); it; it = sy_jdom_next(&doc, it)) {
        if (sy_jdom_type(&doc, it) != 'o')
            continue;
        uint32_t nm = sy_jdom_member(&doc, it, "name");
        if (tools) {
            size_t tl;
            const char *t = sy_jdom_view(&doc, nm, &c->req->arena, &tl);
            if (!t || !tool_ok(c, s->s, t, tl))
                continue;
        }
        copy_item(w, &doc, it, s->s, rename && nm, mcp_info, &c->req->arena);
    }
    return 0;
}

static const char *list_field(enum mkind k)
{
    switch (k) {
    case MK_TOOLS_LIST: return "tools";
    case MK_PROMPTS_LIST: return "prompts";
    case MK_RES_LIST: return "resources";
    case MK_RES_TEMPLATES: return "resourceTemplates";
    default: return NULL;
    }
}

static const char *err_reason(const struct sub *s, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s (%.*s)", sy_err_name(s->err), (int)(s->n > 300 ? 300 : s->n), s->msg ? s->msg : "");
    return buf;
}

/* A list over many servers is complete: the merged answer. */
static void finish_list(struct job *j)
{
    struct disp *d = j->d;
    const char *field = list_field(j->kind);
    int rename = j->kind == MK_TOOLS_LIST || j->kind == MK_PROMPTS_LIST;
    sy_buf_reset(&j->out);
    struct sy_jw w;
    sy_jw_init(&w, &j->out);
    if (d->mode == MODE_RPC) {
        rpc_head(&j->out, j->id, j->id_len);
        SY_BUF_LIT(&j->out, ",\"result\":");
        sy_jw_obj(&w);
        sy_jw_key(&w, field);
    } else if (d->mode == MODE_REST_LIST) {
        sy_jw_obj(&w);
        sy_jw_key(&w, "tools");
        rename = 0; /* LiteLLM's REST list: bare names, the server in mcp_info */
    }
    sy_jw_arr(&w);
    size_t failed = 0, ok = 0;
    struct sy_buf errs;
    sy_buf_init(&errs, 4096);
    for (size_t i = 0; i < j->nsubs; i++) {
        struct sub *s = &j->subs[i];
        char why[400];
        if (s->err == 0 && member(s->msg, s->n, "error", &(size_t){0}))
            s->err = SY_EUPPROTO;
        if (s->err == 0 && append_items(j, s, field, &w, rename, d->mode == MODE_REST_LIST) == 0) {
            ok++;
            continue;
        }
        if (s->err == 0)
            s->err = SY_EUPPROTO;
        failed++;
        sy_warn("mcp: %s from server %s failed, left out: %s", j->kind == MK_TOOLS_LIST ? "tools/list" : field,
                s->s->name, err_reason(s, why, sizeof why));
        sy_buf_printf(&errs, "%s%s: %s", errs.len ? "; " : "", s->s->name, why);
    }
    sy_jw_end(&w);
    if (d->mode == MODE_RPC) {
        sy_jw_end(&w);
        SY_BUF_LIT(&j->out, "}");
    } else if (d->mode == MODE_REST_LIST) {
        sy_jw_key(&w, "error");
        if (failed && !ok && d->one)
            sy_jw_cstr(&w, "server_error");
        else if (failed && !ok)
            sy_jw_cstr(&w, "partial_failure");
        else
            sy_jw_null(&w);
        sy_jw_key(&w, "message");
        if (failed && !ok) {
            char m[600];
            snprintf(m, sizeof m, "%s%.*s",
                     d->one ? "Failed to get tools from server " : "Failed to get tools from servers: ",
                     (int)(errs.len > 500 ? 500 : errs.len), errs.p ? errs.p : "");
            sy_jw_cstr(&w, m);
        } else
            sy_jw_cstr(&w, "Successfully retrieved tools");
        sy_jw_end(&w);
    }
    sy_buf_free(&errs);
    if (w.err || sy_buf_failed(&j->out)) {
        if (d->mode == MODE_RPC)
            job_error(j, -32603, "the merged list is larger than the answer's cap");
        else
            d->status = 500;
    }
}

/* resources/read over several servers: the first that answers with a result, in server order. */
static void finish_first(struct job *j)
{
    struct sub *pick = NULL;
    for (size_t i = 0; i < j->nsubs && !pick; i++)
        if (j->subs[i].err == 0 && member(j->subs[i].msg, j->subs[i].n, "result", &(size_t){0}))
            pick = &j->subs[i];
    if (!pick && j->nsubs)
        pick = &j->subs[0];
    if (!pick) {
        job_error(j, -32602, "Resource not found: no MCP server the key may use has it");
        return;
    }
    size_t rl, el;
    const char *r = pick->err ? NULL : member(pick->msg, pick->n, "result", &rl);
    const char *e = pick->err ? NULL : member(pick->msg, pick->n, "error", &el);
    sy_buf_reset(&j->out);
    if (r) {
        sy_mcp_rpc_result(&j->out, j->id, j->id_len, r, rl);
    } else if (e) {
        rpc_head(&j->out, j->id, j->id_len);
        SY_BUF_LIT(&j->out, ",\"error\":");
        sy_buf_append(&j->out, e, el);
        SY_BUF_LIT(&j->out, "}");
    } else {
        char m[512], why[400];
        snprintf(m, sizeof m, "MCP server %s failed: %s", pick->s->name, err_reason(pick, why, sizeof why));
        job_error(j, -32603, m);
    }
}

/* ---- accounting of one tool call ---- */

static double tool_cost(const struct sy_mcp_server *s, const char *t, size_t n)
{
    for (size_t i = 0; i < s->ntool_costs; i++)
        if (strlen(s->tool_costs[i].tool) == n && memcmp(s->tool_costs[i].tool, t, n) == 0)
            return s->tool_costs[i].cost;
    return s->default_cost;
}

static void uuid4(struct sy_worker *w, char out[37])
{
    uint64_t a = sy_rand(w), b = sy_rand(w);
    unsigned char u[16];
    memcpy(u, &a, 8);
    memcpy(u + 8, &b, 8);
    u[6] = (unsigned char)((u[6] & 0x0f) | 0x40);
    u[8] = (unsigned char)((u[8] & 0x3f) | 0x80);
    static const char hex[] = "0123456789abcdef";
    int o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[o++] = '-';
        out[o++] = hex[u[i] >> 4];
        out[o++] = hex[u[i] & 15];
    }
    out[o] = 0;
}

static void account_tool(struct job *j, int ok)
{
    struct sy_call *c = j->d->c;
    const struct sy_mcp_server *s = j->s;
    uint64_t t1 = sy_now_ns();
    char ns[512];
    snprintf(ns, sizeof ns, "%s-%.*s", s->prefix, (int)(j->bare_len > 400 ? 400 : j->bare_len), j->bare);
    char tool[448];
    snprintf(tool, sizeof tool, "%.*s", (int)(j->bare_len > 400 ? 400 : j->bare_len), j->bare);
    double cost = ok ? tool_cost(s, j->bare, j->bare_len) : 0;
    struct sy_metric_mcp m = {
        .server_name = s->name,
        .tool_name = tool,
        .status = ok ? "success" : "error",
        .latency_s = (double)(t1 - j->t0) / 1e9,
    };
    sy_metrics_mcp(c->w->metrics, &m);
    if (c->g->db) {
        struct sy_spend_rec r;
        memset(&r, 0, sizeof r);
        char rid[37];
        uuid4(c->w, rid);
        r.request_id = rid;
        r.call_type = "call_mcp_tool";
        r.status = ok ? "success" : "failure";
        r.api_key = c->auth.hashed_key ? c->auth.hashed_key : "";
        const struct sy_keyinfo *k = c->auth.key;
        if (k) {
            r.key_alias = k->key_alias;
            r.user_id = k->user_id;
            r.team_id = k->team_id;
            r.org_id = k->org_id;
            r.has_entity[SY_ENT_KEY] = 1;
            r.has_entity[SY_ENT_USER] = k->user_id != NULL;
            r.has_entity[SY_ENT_TEAM] = k->team_id != NULL;
            r.has_entity[SY_ENT_MEMBER] = k->team_id && k->user_id && k->member;
            r.has_entity[SY_ENT_ORG] = k->org_id != NULL;
        } else if (c->auth.no_db && c->auth.hashed_key)
            r.has_entity[SY_ENT_KEY] = 1;
        r.model = ns; /* LiteLLM's SpendLogs model for a tool call: the tool */
        r.model_id = "";
        r.model_group = s->name;
        r.custom_llm_provider = "mcp";
        r.api_base = s->url ? s->url : "";
        r.mcp_namespaced_tool_name = ns;
        r.spend = cost;
        double now = sy_wall_now();
        r.end_s = now;
        r.start_s = now - (double)(t1 - j->t0) / 1e9;
        r.completion_start_s = now;
        sy_spend_record(&r);
    }
    if (cost > 0 && c->auth.key)
        sy_keys_add_spend(c->auth.key, c->auth.eu, ns, cost);
}

/* tools/call, prompts/get, a one-server resources/read: the server's answer under the client's id. */
static void finish_one(struct job *j)
{
    struct disp *d = j->d;
    struct sub *s = &j->subs[0];
    size_t rl = 0, el = 0;
    const char *r = s->err ? NULL : member(s->msg, s->n, "result", &rl);
    const char *e = s->err || r ? NULL : member(s->msg, s->n, "error", &el);
    int ok = r != NULL;
    if (ok && j->kind == MK_TOOLS_CALL) { /* a result with isError true is a failed call too */
        size_t il;
        const char *ie = member(r, rl, "isError", &il);
        if (ie && il == 4 && !memcmp(ie, "true", 4))
            ok = 0;
    }
    if (j->kind == MK_TOOLS_CALL)
        account_tool(j, ok);
    sy_buf_reset(&j->out);
    char m[600], why[400];
    if (!r && !e)
        snprintf(m, sizeof m, "MCP server %s failed: %s", j->s->name,
                 s->err ? err_reason(s, why, sizeof why) : "its answer has neither result nor error");
    switch (d->mode) {
    case MODE_RPC:
        if (r)
            sy_mcp_rpc_result(&j->out, j->id, j->id_len, r, rl);
        else if (e) {
            rpc_head(&j->out, j->id, j->id_len);
            SY_BUF_LIT(&j->out, ",\"error\":");
            sy_buf_append(&j->out, e, el);
            SY_BUF_LIT(&j->out, "}");
        } else
            job_error(j, -32603, m);
        break;
    case MODE_CALL_RAW:
    case MODE_REST_CALL:
        if (r) {
            sy_buf_append(&j->out, r, rl);
        } else {
            d->status = s->err == SY_EUPTIMEOUT ? 504 : 502;
            if (d->mode == MODE_CALL_RAW) {
                if (e) {
                    SY_BUF_LIT(&j->out, "MCP server error: ");
                    sy_buf_append(&j->out, e, el > 1000 ? 1000 : el);
                } else
                    sy_buf_puts(&j->out, m);
            } else {
                struct sy_jw w;
                sy_jw_init(&w, &j->out);
                sy_jw_obj(&w);
                sy_jw_key(&w, "detail");
                sy_jw_obj(&w);
                sy_jw_key(&w, "error");
                sy_jw_cstr(&w, e ? "mcp_server_error" : "server_error");
                sy_jw_key(&w, "message");
                if (e) {
                    size_t ml;
                    const char *mm = member(e, el, "message", &ml);
                    if (mm)
                        sy_jw_raw(&w, mm, ml);
                    else
                        sy_jw_raw(&w, e, el);
                } else
                    sy_jw_cstr(&w, m);
                sy_jw_end(&w);
                sy_jw_end(&w);
            }
        }
        break;
    default: break;
    }
}

static void disp_finish(struct disp *d);

static void disp_job_done(struct job *j)
{
    if (j->done)
        return;
    j->done = 1;
    switch (j->answered ? MK_UNKNOWN : j->kind) {
    case MK_TOOLS_LIST:
    case MK_PROMPTS_LIST:
    case MK_RES_LIST:
    case MK_RES_TEMPLATES: finish_list(j); break;
    case MK_RES_READ:
        if (j->nsubs > 1)
            finish_first(j);
        else
            finish_one(j);
        break;
    case MK_TOOLS_CALL:
    case MK_PROMPTS_GET: finish_one(j); break;
    default: break;
    }
    struct disp *d = j->d;
    if (--d->pending == 0 && !d->canceled)
        disp_finish(d);
}

/* ---- starting jobs ---- */

static enum mkind kind_of(const char *m)
{
    static const struct {
        const char *name;
        enum mkind k;
    } t[] = {
        {"initialize", MK_INIT},           {"ping", MK_PING},
        {"tools/list", MK_TOOLS_LIST},     {"tools/call", MK_TOOLS_CALL},
        {"prompts/list", MK_PROMPTS_LIST}, {"prompts/get", MK_PROMPTS_GET},
        {"resources/list", MK_RES_LIST},   {"resources/templates/list", MK_RES_TEMPLATES},
        {"resources/read", MK_RES_READ},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(m, t[i].name))
            return t[i].k;
    return MK_UNKNOWN;
}

/* Fan a list out to every server the caller may use. */
static void start_fanout(struct job *j, const char *method, const char *params, size_t plen)
{
    struct disp *d = j->d;
    size_t n = 0;
    for (size_t i = 0; d->set && i < d->set->n; i++)
        n += d->allowed[i];
    j->subs = sy_arena_alloc(&d->c->req->arena, (n ? n : 1) * sizeof *j->subs);
    memset(j->subs, 0, (n ? n : 1) * sizeof *j->subs);
    j->pending = 1; /* held while starting: a callback never runs inside sy_mcp_request, but be safe */
    for (size_t i = 0; d->set && i < d->set->n; i++) {
        if (!d->allowed[i])
            continue;
        struct sub *s = &j->subs[j->nsubs++];
        s->s = &d->set->s[i];
        sub_start(j, s, method, params, plen);
    }
}

/* The server a namespaced name belongs to, for this dispatch: on one
 * server's path a bare name is accepted too. NULL: unknown. */
static const struct sy_mcp_server *resolve_name(struct disp *d, const char *name, size_t n, const char **bare,
                                                size_t *blen)
{
    const struct sy_mcp_server *s = d->set ? sy_mcp_split_tool(d->set, name, n, bare, blen) : NULL;
    if (d->one && s != d->one) {
        *bare = name;
        *blen = n;
        return d->one;
    }
    return s;
}

/* tools/call and prompts/get: {"name": "<bare>", "arguments": ..., "_meta": ...} forwarded. */
static const char *rebuild_params(struct sy_call *c, const char *params, size_t plen, const char *bare, size_t blen,
                                  size_t *out_len)
{
    struct sy_buf b;
    sy_buf_init(&b, c->g->max_body ? c->g->max_body + 4096 : 64u << 20);
    SY_BUF_LIT(&b, "{\"name\":\"");
    sy_buf_json_escape(&b, bare, blen); /* the decoded name, escaped again */
    SY_BUF_LIT(&b, "\"");
    size_t al, ml;
    const char *a = member(params, plen, "arguments", &al);
    const char *m = member(params, plen, "_meta", &ml);
    if (a) {
        SY_BUF_LIT(&b, ",\"arguments\":");
        sy_buf_append(&b, a, al);
    }
    if (m) {
        SY_BUF_LIT(&b, ",\"_meta\":");
        sy_buf_append(&b, m, ml);
    }
    SY_BUF_LIT(&b, "}");
    const char *out = NULL;
    if (!sy_buf_failed(&b)) {
        out = sy_arena_strndup(&c->req->arena, b.p, b.len);
        *out_len = b.len;
    }
    sy_buf_free(&b);
    return out;
}

/* The decoded text of the raw JSON string s[0..n) (quotes included): a span
 * of s when it has no escape, else decoded into the arena. NULL: not a string. */
static const char *json_string(struct sy_arena *a, const char *s, size_t n, size_t *len)
{
    int esc = 0;
    if (!n || s[0] != '"' || sy_jdom_string_len(s, n, &esc) != n)
        return NULL;
    if (!esc) {
        *len = n - 2;
        return s + 1;
    }
    char *w = sy_arena_alloc(a, n + 2); /* "[" s "]": node 1 is the string */
    if (!w)
        return NULL;
    w[0] = '[';
    memcpy(w + 1, s, n);
    w[n + 1] = ']';
    struct sy_jdoc doc;
    if (sy_jdom_parse(&doc, w, n + 2, a, 4) != 0 || doc.count < 2)
        return NULL;
    return sy_jdom_view(&doc, 1, a, len);
}

/* Start a call by name: tools/call or prompts/get. 0 started (or answered
 * into j->out), else a refusal code for the modes without JSON-RPC. */
static int start_named(struct job *j, const char *method)
{
    struct disp *d = j->d;
    struct sy_call *c = d->c;
    size_t nl = 0;
    const char *nraw = member(j->params, j->params_len, "name", &nl);
    char name[1024];
    size_t dl = 0;
    const char *dec = nraw ? json_string(&c->req->arena, nraw, nl, &dl) : NULL;
    if (!dec || !dl || dl >= sizeof name || memchr(dec, 0, dl)) {
        job_error(j, -32602, "Invalid params: a string \"name\" is required");
        return SY_EINVAL;
    }
    memcpy(name, dec, dl);
    name[dl] = 0;
    const char *bare;
    size_t blen;
    const struct sy_mcp_server *s = resolve_name(d, name, dl, &bare, &blen);
    char msg[1400];
    if (!s) {
        snprintf(msg, sizeof msg, "Unknown %s: %s (names are \"<server>-<name>\")",
                 j->kind == MK_TOOLS_CALL ? "tool" : "prompt", name);
        job_error(j, -32602, msg);
        return SY_ENOTFOUND;
    }
    if (!d->allowed[s->idx]) {
        snprintf(msg, sizeof msg, "Access denied: the key may not use MCP server %s (%s %s)", s->name,
                 j->kind == MK_TOOLS_CALL ? "tool" : "prompt", name);
        job_error(j, -32000, msg);
        return SY_EAUTH;
    }
    if (j->kind == MK_TOOLS_CALL && !tool_ok(c, s, bare, blen)) {
        snprintf(msg, sizeof msg, "Access denied: the key may not call tool %.*s of MCP server %s", (int)blen, bare,
                 s->name);
        job_error(j, -32000, msg);
        return SY_EAUTH;
    }
    j->s = s;
    j->bare = sy_arena_strndup(&c->req->arena, bare, blen);
    j->bare_len = blen;
    j->fwd = rebuild_params(c, j->params, j->params_len, bare, blen, &j->fwd_len);
    if (!j->fwd) {
        job_error(j, -32603, "the request's params are too large");
        return SY_ENOSPC;
    }
    j->t0 = sy_now_ns();
    j->subs = sy_arena_alloc(&c->req->arena, sizeof *j->subs);
    memset(j->subs, 0, sizeof *j->subs);
    j->subs[0].s = s;
    j->nsubs = 1;
    j->pending = 1; /* held while starting */
    sub_start(j, &j->subs[0], method, j->fwd, j->fwd_len);
    return 0;
}

static void init_result(struct disp *d, struct job *j)
{
    struct mcp_conf *mc = sy_stage_conf(d->c->g, conf_slot);
    size_t vl = 0;
    const char *v = member(j->params, j->params_len, "protocolVersion", &vl);
    const char *neg = sy_mcp_negotiate(v && vl >= 2 && v[0] == '"' ? v + 1 : "", v && vl >= 2 ? vl - 2 : 0);
    rpc_head(&j->out, j->id, j->id_len);
    SY_BUF_LIT(&j->out, ",\"result\":{\"protocolVersion\":\"");
    sy_buf_puts(&j->out, neg);
    SY_BUF_LIT(&j->out, "\",\"capabilities\":{\"tools\":{\"listChanged\":false},\"prompts\":{\"listChanged\":false},"
                        "\"resources\":{\"subscribe\":false,\"listChanged\":false}},\"serverInfo\":{\"name\":\"");
    sy_buf_json_escape(&j->out, mc ? mc->server_name : "litellm-mcp-server",
                       strlen(mc ? mc->server_name : "litellm-mcp-server"));
    SY_BUF_LIT(&j->out, "\",\"version\":\"" SERVER_VERSION "\"}}}");
}

/* Start one client request; its answer is in j->out once j->done. */
static void start_job(struct job *j)
{
    struct disp *d = j->d;
    switch (j->kind) {
    case MK_INIT: init_result(d, j); break;
    case MK_PING:
        rpc_head(&j->out, j->id, j->id_len);
        SY_BUF_LIT(&j->out, ",\"result\":{}}");
        break;
    case MK_TOOLS_LIST: start_fanout(j, "tools/list", NULL, 0); return;
    case MK_PROMPTS_LIST: start_fanout(j, "prompts/list", NULL, 0); return;
    case MK_RES_LIST: start_fanout(j, "resources/list", NULL, 0); return;
    case MK_RES_TEMPLATES: start_fanout(j, "resources/templates/list", NULL, 0); return;
    case MK_RES_READ:
        if (!member(j->params, j->params_len, "uri", &(size_t){0})) {
            job_error(j, -32602, "Invalid params: \"uri\" is required");
            break;
        }
        start_fanout(j, "resources/read", j->params, j->params_len); /* one server on /{alias}/mcp */
        return;
    case MK_TOOLS_CALL:
        if (start_named(j, "tools/call") == 0)
            return;
        break;
    case MK_PROMPTS_GET:
        if (start_named(j, "prompts/get") == 0)
            return;
        break;
    default: job_error(j, -32601, "Method not found"); break;
    }
    j->answered = 1;
    j->pending = 1; /* answered inline */
}

/* Release the hold taken while the job's ops were started. */
static void job_started(struct job *j)
{
    if (--j->pending == 0)
        disp_job_done(j);
}

/* Run the requests of the parsed batch (notifications and responses are consumed). */
static void disp_run(struct disp *d)
{
    struct sy_call *c = d->c;
    size_t nreq = 0;
    for (size_t i = 0; i < d->batch.n; i++)
        nreq += d->batch.m[i].kind == SY_MCP_REQUEST;
    d->jobs = sy_arena_alloc(&c->req->arena, (nreq ? nreq : 1) * sizeof *d->jobs);
    memset(d->jobs, 0, (nreq ? nreq : 1) * sizeof *d->jobs);
    for (size_t i = 0; i < d->batch.n; i++) {
        const struct sy_mcp_msg *m = &d->batch.m[i];
        if (m->kind != SY_MCP_REQUEST)
            continue;
        struct job *j = &d->jobs[d->njobs++];
        j->d = d;
        j->kind = kind_of(m->method);
        j->id = m->id;
        j->id_len = m->id_len;
        j->params = m->params;
        j->params_len = m->params_len;
        sy_buf_init(&j->out, 64u << 20);
    }
    d->pending = d->njobs + 1; /* held until every job started */
    for (size_t i = 0; i < d->njobs; i++) {
        start_job(&d->jobs[i]);
        job_started(&d->jobs[i]);
    }
    if (--d->pending == 0)
        disp_finish(d);
}

/* Every job answered: the reply. */
static void disp_finish(struct disp *d)
{
    struct sy_call *c = d->c;
    if (d->mode == MODE_RPC) {
        if (!d->njobs) {
            d->reply(c, 202, "", 0, d->arg);
            return;
        }
        if (d->njobs == 1 && !d->is_batch && !sy_buf_failed(&d->jobs[0].out)) { /* the common case: no copy */
            d->reply(c, 200, d->jobs[0].out.p ? d->jobs[0].out.p : "", d->jobs[0].out.len, d->arg);
            return;
        }
        struct sy_buf b;
        sy_buf_init(&b, 64u << 20);
        if (d->is_batch)
            SY_BUF_LIT(&b, "[");
        for (size_t i = 0; i < d->njobs; i++) {
            if (i)
                SY_BUF_LIT(&b, ",");
            sy_buf_append_buf(&b, &d->jobs[i].out);
        }
        if (d->is_batch)
            SY_BUF_LIT(&b, "]");
        if (sy_buf_failed(&b)) {
            sy_buf_reset(&b);
            sy_mcp_rpc_error(&b, NULL, 0, -32603, "the answer is larger than its cap");
        }
        d->reply(c, 200, b.p, b.len, d->arg);
        sy_buf_free(&b);
        return;
    }
    struct job *j = &d->jobs[0];
    if (d->mode == MODE_REST_LIST || d->mode == MODE_REST_CALL) {
        d->reply(c, d->status, j->out.p, j->out.len, d->arg);
        return;
    }
    int err = d->status == 200 ? 0 : d->status == 504 ? SY_EUPTIMEOUT : SY_EUPPROTO;
    if (sy_buf_failed(&j->out)) {
        d->json(c, SY_ENOSPC, "the answer is larger than its cap", 33, d->arg);
        return;
    }
    d->json(c, err, j->out.p ? j->out.p : "", j->out.len, d->arg);
}

/* ---- the shared entry points (stages/mcp.h) ---- */

void sy_mcp_dispatch(struct sy_call *c, const struct sy_mcp_server *one, const char *body, size_t n,
                     sy_mcp_reply_fn done, void *arg)
{
    struct disp *d = disp_new(c, one, MODE_RPC);
    if (!d) {
        done(c, 500, "", 0, arg);
        return;
    }
    d->reply = done;
    d->arg = arg;
    int code = 0;
    char err[256] = "";
    if (sy_mcp_rpc_parse(body, n, MAX_BATCH, &d->batch, &code, err, sizeof err) != 0) {
        struct sy_buf b;
        sy_buf_init(&b, 4096);
        sy_mcp_rpc_error(&b, NULL, 0, code ? code : -32700, err[0] ? err : "Parse error");
        done(c, 400, b.p, b.len, arg);
        sy_buf_free(&b);
        return;
    }
    d->have_batch = 1;
    d->is_batch = d->batch.is_batch;
    disp_run(d);
}

static void list_done_json(struct sy_call *c, int status, const char *body, size_t n, void *arg)
{
    (void)c;
    (void)status;
    (void)body;
    (void)n;
    (void)arg;
}

/* A dispatch of one job of the given kind whose JSON answer goes to done. */
static struct job *one_job(struct sy_call *c, struct disp *d, enum mkind kind, sy_mcp_json_fn done, void *arg)
{
    d->json = done;
    d->reply = list_done_json;
    d->arg = arg;
    d->jobs = sy_arena_alloc(&c->req->arena, sizeof *d->jobs);
    memset(d->jobs, 0, sizeof *d->jobs);
    d->njobs = 1;
    struct job *j = &d->jobs[0];
    j->d = d;
    j->kind = kind;
    sy_buf_init(&j->out, 64u << 20);
    return j;
}

void sy_mcp_list_tools(struct sy_call *c, const struct sy_mcp_server *one, sy_mcp_json_fn done, void *arg)
{
    struct disp *d = disp_new(c, one, MODE_TOOLS_ARR);
    if (!d) {
        done(c, SY_ENOMEM, "out of memory", 13, arg);
        return;
    }
    if (one && !d->one) {
        done(c, SY_ENOTFOUND, "the MCP server is no longer configured", 38, arg);
        return;
    }
    if (one) { /* one server asked for by name: refused when the caller may not use it (not an empty list) */
        unsigned char *mine = sy_arena_alloc(&c->req->arena, d->set->n);
        const struct sy_keyinfo *k = c->auth.key;
        sy_mcp_allowed(d->set, c->auth.is_admin || !c->g->master_key, k ? k->perm : NULL, k ? k->team_perm : NULL,
                       k ? k->org_perm : NULL, mine);
        if (!mine[d->one->idx]) {
            char why[300];
            int wn = snprintf(why, sizeof why, "the key may not use MCP server %s", d->one->name);
            done(c, SY_EAUTH, why, (size_t)(wn > 0 && (size_t)wn < sizeof why ? wn : 0), arg);
            return;
        }
    }
    struct job *j = one_job(c, d, MK_TOOLS_LIST, done, arg);
    d->pending = 2;
    start_job(j);
    job_started(j);
    if (--d->pending == 0)
        disp_finish(d);
}

void sy_mcp_call_tool(struct sy_call *c, const char *name, size_t nlen, const char *args, size_t alen,
                      sy_mcp_json_fn done, void *arg)
{
    struct disp *d = disp_new(c, NULL, MODE_CALL_RAW);
    if (!d) {
        done(c, SY_ENOMEM, "out of memory", 13, arg);
        return;
    }
    struct job *j = one_job(c, d, MK_TOOLS_CALL, done, arg);
    /* params as a client would send them: {"name": ..., "arguments": ...} */
    struct sy_buf p;
    sy_buf_init(&p, (alen + nlen) * 6 + 64);
    SY_BUF_LIT(&p, "{\"name\":\"");
    sy_buf_json_escape(&p, name, nlen);
    SY_BUF_LIT(&p, "\",\"arguments\":");
    if (args && alen)
        sy_buf_append(&p, args, alen);
    else
        SY_BUF_LIT(&p, "{}");
    SY_BUF_LIT(&p, "}");
    if (sy_buf_failed(&p)) {
        sy_buf_free(&p);
        done(c, SY_ENOSPC, "the arguments are too large", 27, arg);
        return;
    }
    j->params = sy_arena_strndup(&c->req->arena, p.p, p.len);
    j->params_len = p.len;
    sy_buf_free(&p);
    int rc = start_named(j, "tools/call");
    if (rc != 0) {
        /* refused: the reason is the JSON-RPC error's message */
        size_t ml = 0, el = 0;
        const char *e = member(j->out.p, j->out.len, "error", &el);
        const char *m = e ? sy_mcp_member(e, el, "message", &ml) : NULL;
        char why[1400];
        snprintf(why, sizeof why, "%.*s", m && ml >= 2 ? (int)(ml - 2) : 0, m && ml >= 2 ? m + 1 : "");
        done(c, rc, why, strlen(why), arg);
        return;
    }
    d->pending = 1;
    job_started(j);
}

/* ---- the HTTP endpoints ---- */

struct hstate {
    struct disp *d;
    struct sy_mcp_session sess;
    const char *session_id; /* minted for an initialize (arena) */
    size_t session_len;
    const char *scope;
    int redis_wait;
};

static void h_send(struct sy_call *c, int status, const char *body, size_t n, const char *extra, size_t extra_len)
{
    struct sy_buf h;
    sy_buf_init(&h, 16384);
    sy_call_headers(c, &h, 1);
    if (extra_len)
        sy_buf_append(&h, extra, extra_len);
    c->req->on_abort = NULL;
    sy_call_account(c, status);
    sy_resp_simple(c->req, status, h.p, h.len, "application/json", body, n); /* 202: no body */
    sy_buf_free(&h);
}

/* A transport-level refusal, as the TS SDK writes them: {"jsonrpc":"2.0","error":{...},"id":null}. */
static int h_refuse(struct sy_call *c, int status, int code, const char *msg, const char *extra, size_t extra_len)
{
    struct sy_buf b;
    sy_buf_init(&b, 8192);
    sy_mcp_rpc_error(&b, NULL, 0, code, msg);
    h_send(c, status, b.p, b.len, extra, extra_len);
    sy_buf_free(&b);
    return SY_DONE;
}

static void rpc_reply(struct sy_call *c, int status, const char *body, size_t n, void *arg)
{
    struct hstate *hs = arg;
    if (hs->session_id && status == 200) {
        char extra[700];
        int k = snprintf(extra, sizeof extra, "Mcp-Session-Id: %.*s\r\n", (int)hs->session_len, hs->session_id);
        h_send(c, status, body, n, extra, (size_t)k);
        return;
    }
    h_send(c, status, body, n, NULL, 0);
}

static void h_abort(struct sy_req *r)
{
    struct sy_call *c = r->handler_data;
    struct hstate *hs = sy_call_slot(c, mcp_slot);
    if (hs && hs->redis_wait) {
        c->aborted = 1; /* the Redis reply ends it */
        return;
    }
    if (hs && hs->d) {
        hs->d->canceled = 1;
        for (size_t i = 0; i < hs->d->njobs; i++)
            for (size_t k = 0; k < hs->d->jobs[i].nsubs; k++)
                if (hs->d->jobs[i].subs[k].running) {
                    hs->d->jobs[i].subs[k].running = 0;
                    sy_mcp_cancel(hs->d->jobs[i].subs[k].op);
                }
    }
    sy_call_account(c, 499);
    sy_resp_end(r);
}

/* The path's scope: "" for /mcp, the server's prefix for /{alias}/mcp and
 * /mcp/{name}, the comma list for /mcp/{a,b}. One server in *one. 0, or an
 * HTTP status (answered). */
static int h_scope(struct sy_call *c, struct hstate *hs, const struct sy_mcp_set *set, const struct sy_mcp_server **one,
                   const char **list, size_t *list_len)
{
    struct sy_str p = c->in.path_model;
    *one = NULL;
    *list = NULL;
    *list_len = 0;
    hs->scope = "";
    if (!p.p || !p.n)
        return 0;
    char name[256];
    size_t dn = sy_pct_decode(p.p, p.n, name, sizeof name - 1, 0);
    if (dn == 0 || dn >= sizeof name - 1) {
        h_refuse(c, 404, -32001, "MCP server not found", NULL, 0);
        return 404;
    }
    name[dn] = 0;
    if (memchr(name, ',', dn)) {
        *list = sy_arena_strndup(&c->req->arena, name, dn);
        *list_len = dn;
        /* the session's scope holds 127 bytes: compare what it can hold */
        hs->scope = sy_arena_strndup(&c->req->arena, name, dn < sizeof hs->sess.scope ? dn : sizeof hs->sess.scope - 1);
        return 0;
    }
    const struct sy_mcp_server *s = set ? sy_mcp_find(set, name, dn) : NULL;
    if (!s) {
        char msg[400];
        snprintf(msg, sizeof msg, "MCP server not found: %s", name);
        h_refuse(c, 404, -32001, msg, NULL, 0);
        return 404;
    }
    *one = s;
    hs->scope = s->prefix;
    return 0;
}

/* Content-Type must be JSON; Accept, when given, must take JSON (we answer JSON only). */
static int h_media(struct sy_call *c)
{
    struct sy_str ct = sy_req_header(c->req, "content-type");
    if (!ct.p || ct.n < 16 || strncasecmp(ct.p, "application/json", 16) != 0 ||
        (ct.n > 16 && ct.p[16] != ';' && ct.p[16] != ' '))
        return h_refuse(c, 415, -32000, "Unsupported Media Type: Content-Type must be application/json", NULL, 0);
    struct sy_str ac = sy_req_header(c->req, "accept");
    if (ac.p && ac.n && !memmem(ac.p, ac.n, "application/json", 16) && !memmem(ac.p, ac.n, "*/*", 3) &&
        !memmem(ac.p, ac.n, "application/*", 13))
        return h_refuse(c, 406, -32000, "Not Acceptable: Client must accept application/json", NULL, 0);
    return SY_OK;
}

/* MCP-Protocol-Version, when given, must be a revision we speak. */
static int h_version(struct sy_call *c)
{
    struct sy_str v = sy_req_header(c->req, "mcp-protocol-version");
    if (!v.p)
        return SY_OK;
    const char *neg = sy_mcp_negotiate(v.p, v.n);
    if (neg && strlen(neg) == v.n && memcmp(neg, v.p, v.n) == 0)
        return SY_OK;
    char msg[300];
    snprintf(msg, sizeof msg, "Bad Request: Unsupported protocol version: %.*s (supported versions: %s, %s, %s, %s)",
             (int)(v.n > 40 ? 40 : v.n), v.p, sy_mcp_versions[0], sy_mcp_versions[1], sy_mcp_versions[2],
             sy_mcp_versions[3]);
    return h_refuse(c, 400, -32000, msg, NULL, 0);
}

/* The Mcp-Session-Id of a non-initialize request: SY_OK (hs->sess read), or answered. */
static int h_session(struct sy_call *c, struct hstate *hs)
{
    struct sy_str sid = sy_req_header(c->req, "mcp-session-id");
    if (!sid.p || !sid.n)
        return h_refuse(c, 400, -32000, "Bad Request: Mcp-Session-Id header is required", NULL, 0);
    struct mcp_conf *mc = sy_stage_conf(c->g, conf_slot);
    char kh[17];
    caller_hash(c, kh);
    if (!mc || sid.n > 1024 || sy_mcp_session_read(mc->secret, mc->slen, sid.p, sid.n, SESSION_MAX_S, &hs->sess) != 0 ||
        strcmp(hs->sess.key_hash, kh) != 0 || strcmp(hs->sess.scope, hs->scope) != 0 || revoked_local(hs->sess.nonce))
        return h_refuse(c, 404, -32001, "Session not found", NULL, 0);
    return SY_OK;
}

static int h_post_run(struct sy_call *c, struct hstate *hs);

static void redis_checked(void *ud, const redisReply *reply)
{
    struct sy_call *c = ud;
    struct hstate *hs = sy_call_slot(c, mcp_slot);
    hs->redis_wait = 0;
    c->req->on_abort = NULL;
    if (c->aborted) {
        sy_call_account(c, 499);
        sy_resp_end(c->req);
        return;
    }
    if (reply && reply->type == REDIS_REPLY_INTEGER && reply->integer > 0) {
        revoke_local(hs->sess.nonce); /* remembered here too: later requests skip nothing, but answer the same */
        h_refuse(c, 404, -32001, "Session not found", NULL, 0);
        return;
    }
    h_post_run(c, hs); /* Redis down or an error: the local table decided (fail open, documented) */
}

/* Ask Redis whether another instance revoked the session: SY_AGAIN (the reply resumes), or SY_OK (no Redis). */
static int h_session_fleet(struct sy_call *c, struct hstate *hs)
{
    struct sy_redis *r = c->w->redis;
    if (!r || !sy_redis_up(r))
        return SY_OK;
    char key[128];
    int kl = snprintf(key, sizeof key, REVOKED_KEY_PREFIX "%s", hs->sess.nonce);
    const char *argv[2] = {"EXISTS", key};
    size_t argl[2] = {6, (size_t)kl};
    hs->redis_wait = 1;
    c->req->on_abort = h_abort;
    if (sy_redis_cmd(r, redis_checked, c, 2, argv, argl) != 0) {
        hs->redis_wait = 0;
        c->req->on_abort = NULL;
        return SY_OK;
    }
    return SY_AGAIN;
}

static int h_post_run(struct sy_call *c, struct hstate *hs)
{
    struct disp *d = hs->d;
    d->reply = rpc_reply;
    d->arg = hs;
    c->req->on_abort = h_abort;
    disp_run(d);
    return SY_DONE;
}

static int h_delete(struct sy_call *c, struct hstate *hs)
{
    if (h_session(c, hs) != SY_OK || h_version(c) != SY_OK)
        return SY_DONE;
    revoke_local(hs->sess.nonce);
    struct sy_redis *r = c->w->redis;
    if (r && sy_redis_up(r)) {
        char key[128], ttl[32];
        int kl = snprintf(key, sizeof key, REVOKED_KEY_PREFIX "%s", hs->sess.nonce);
        double left = SESSION_MAX_S - ((double)sy_wall_s() - (double)hs->sess.issued);
        int tl = snprintf(ttl, sizeof ttl, "%ld", (long)(left > 1 ? left + 60 : 60));
        const char *argv[5] = {"SET", key, "1", "EX", ttl};
        size_t argl[5] = {3, (size_t)kl, 1, 2, (size_t)tl};
        sy_redis_cmd(r, NULL, NULL, 5, argv, argl); /* fire and forget: this instance refuses it already */
    }
    h_send(c, 200, "", 0, NULL, 0);
    return SY_DONE;
}

static int h_mcp(struct sy_call *c, struct hstate *hs)
{
    struct sy_req *r = c->req;
    if (r->method == HTTP_GET)
        return h_refuse(c, 405, -32000,
                        "Method not allowed: switchyard opens no server-initiated SSE stream on this endpoint; "
                        "POST JSON-RPC messages (answers come as application/json)",
                        "Allow: POST, DELETE\r\n", 21);
    struct disp *d = disp_new(c, NULL, MODE_RPC);
    if (!d)
        return h_refuse(c, 500, -32603, "out of memory", NULL, 0);
    hs->d = d;
    const struct sy_mcp_server *one;
    const char *list;
    size_t list_len;
    if (h_scope(c, hs, d->set, &one, &list, &list_len))
        return SY_DONE;
    if (one) {
        if (!d->allowed[one->idx]) {
            char msg[400];
            snprintf(msg, sizeof msg, "Access denied: the key may not use MCP server %s", one->name);
            return h_refuse(c, 403, -32000, msg, NULL, 0);
        }
        d->one = one;
        for (size_t i = 0; i < d->set->n; i++)
            if (i != one->idx)
                d->allowed[i] = 0;
    }
    if (list)
        narrow(d, list, list_len);
    if (r->method == HTTP_DELETE)
        return h_delete(c, hs);
    if (h_media(c) != SY_OK)
        return SY_DONE;
    int code = 0;
    char err[256] = "";
    if (sy_mcp_rpc_parse(r->body.p ? r->body.p : "", r->body.len, MAX_BATCH, &d->batch, &code, err, sizeof err) != 0)
        return h_refuse(c, 400, code ? code : -32700, err[0] ? err : "Parse error: Invalid JSON", NULL, 0);
    d->have_batch = 1;
    d->is_batch = d->batch.is_batch;
    const struct sy_mcp_msg *init = NULL;
    for (size_t i = 0; i < d->batch.n; i++)
        if (d->batch.m[i].kind == SY_MCP_REQUEST && !strcmp(d->batch.m[i].method, "initialize"))
            init = &d->batch.m[i];
    if (init) {
        if (d->batch.n > 1)
            return h_refuse(c, 400, -32600, "Invalid Request: Only one initialization request is allowed", NULL, 0);
        struct mcp_conf *mc = sy_stage_conf(c->g, conf_slot);
        size_t vl = 0;
        const char *v = member(init->params, init->params_len, "protocolVersion", &vl);
        const char *neg = sy_mcp_negotiate(v && vl >= 2 && v[0] == '"' ? v + 1 : "", v && vl >= 2 ? vl - 2 : 0);
        struct sy_mcp_session s;
        memset(&s, 0, sizeof s);
        caller_hash(c, s.key_hash);
        snprintf(s.version, sizeof s.version, "%s", neg);
        snprintf(s.scope, sizeof s.scope, "%s", hs->scope);
        s.issued = (int64_t)sy_wall_s();
        char *tok = sy_arena_alloc(&r->arena, 600);
        int tl = mc ? sy_mcp_session_mint(mc->secret, mc->slen, &s, tok, 600) : -1;
        if (tl <= 0)
            return h_refuse(c, 500, -32603, "could not mint a session id", NULL, 0);
        hs->session_id = tok;
        hs->session_len = (size_t)tl;
        return h_post_run(c, hs);
    }
    if (h_session(c, hs) != SY_OK || h_version(c) != SY_OK)
        return SY_DONE;
    if (h_session_fleet(c, hs) == SY_AGAIN)
        return SY_AGAIN;
    return h_post_run(c, hs);
}

/* ---- /mcp-rest ---- */

static int rest_refuse(struct sy_call *c, int status, const char *error, const char *msg)
{
    struct sy_buf b;
    sy_buf_init(&b, 8192);
    struct sy_jw w;
    sy_jw_init(&w, &b);
    sy_jw_obj(&w);
    sy_jw_key(&w, "detail");
    sy_jw_obj(&w);
    sy_jw_key(&w, "error");
    sy_jw_cstr(&w, error);
    sy_jw_key(&w, "message");
    sy_jw_cstr(&w, msg);
    sy_jw_end(&w);
    sy_jw_end(&w);
    h_send(c, status, b.p, b.len, NULL, 0);
    sy_buf_free(&b);
    return SY_DONE;
}

static void rest_reply(struct sy_call *c, int status, const char *body, size_t n, void *arg)
{
    (void)arg;
    h_send(c, status, body, n, NULL, 0);
}

static int h_rest_list(struct sy_call *c, struct hstate *hs)
{
    struct disp *d = disp_new(c, NULL, MODE_REST_LIST);
    if (!d)
        return rest_refuse(c, 500, "internal_server_error", "out of memory");
    hs->d = d;
    char sid[256];
    const char *id = sy_query_get(c->req->query.p, c->req->query.n, "server_id", sid, sizeof sid);
    char msg[400];
    if (id && *id) {
        const struct sy_mcp_server *s = d->set ? sy_mcp_find(d->set, id, strlen(id)) : NULL;
        if (!s) {
            snprintf(msg, sizeof msg, "Server with id %s not found", id);
            struct sy_buf b;
            sy_buf_init(&b, 4096);
            struct sy_jw w;
            sy_jw_init(&w, &b);
            sy_jw_obj(&w);
            sy_jw_key(&w, "tools");
            sy_jw_arr(&w);
            sy_jw_end(&w);
            sy_jw_key(&w, "error");
            sy_jw_cstr(&w, "server_not_found");
            sy_jw_key(&w, "message");
            sy_jw_cstr(&w, msg);
            sy_jw_end(&w);
            h_send(c, 200, b.p, b.len, NULL, 0);
            sy_buf_free(&b);
            return SY_DONE;
        }
        if (!d->allowed[s->idx]) {
            snprintf(msg, sizeof msg, "The key is not allowed to access server %s", id);
            return rest_refuse(c, 403, "access_denied", msg);
        }
        d->one = s;
        for (size_t i = 0; i < d->set->n; i++)
            if (i != s->idx)
                d->allowed[i] = 0;
    } else {
        size_t n = 0;
        for (size_t i = 0; d->set && i < d->set->n; i++)
            n += d->allowed[i];
        if (!n)
            return rest_refuse(c, 403, "access_denied", "The key is not allowed to access any MCP servers.");
    }
    d->reply = rest_reply;
    d->jobs = sy_arena_alloc(&c->req->arena, sizeof *d->jobs);
    memset(d->jobs, 0, sizeof *d->jobs);
    d->njobs = 1;
    struct job *j = &d->jobs[0];
    j->d = d;
    j->kind = MK_TOOLS_LIST;
    sy_buf_init(&j->out, 64u << 20);
    c->req->on_abort = h_abort;
    d->pending = 2;
    start_job(j);
    job_started(j);
    if (--d->pending == 0)
        disp_finish(d);
    return SY_DONE;
}

static int h_rest_call(struct sy_call *c, struct hstate *hs)
{
    struct sy_jdoc doc;
    struct sy_req *r = c->req;
    if (!r->body.len || sy_jdom_parse(&doc, r->body.p, r->body.len, &r->arena, 0) != 0 || sy_jdom_type(&doc, 0) != 'o')
        return rest_refuse(c, 400, "invalid_json", "Request body must be a JSON object");
    size_t nl = 0, il = 0;
    const char *name = sy_jdom_str(&doc, sy_jdom_top(&doc, "name"), &r->arena, &nl);
    const char *sid = sy_jdom_str(&doc, sy_jdom_top(&doc, "server_id"), &r->arena, &il);
    uint32_t args = sy_jdom_top(&doc, "arguments");
    if (!name || !nl)
        return rest_refuse(c, 400, "missing_parameter", "name is required in request body");
    if (args && sy_jdom_type(&doc, args) != 'o')
        return rest_refuse(c, 400, "invalid_parameter", "arguments must be a JSON object");
    struct disp *d = disp_new(c, NULL, MODE_REST_CALL);
    if (!d)
        return rest_refuse(c, 500, "internal_server_error", "out of memory");
    hs->d = d;
    char msg[600];
    if (sid && il) {
        const struct sy_mcp_server *s = d->set ? sy_mcp_find(d->set, sid, il) : NULL;
        if (!s || !d->allowed[s->idx]) {
            snprintf(msg, sizeof msg, "The key is not allowed to access server %s", sid);
            return rest_refuse(c, 403, "access_denied", msg);
        }
        d->one = s;
    } else {
        const char *bare;
        size_t bl;
        if (!d->set || !sy_mcp_split_tool(d->set, name, nl, &bare, &bl))
            return rest_refuse(c, 400, "missing_parameter", "server_id is required in request body");
    }
    d->reply = rest_reply;
    d->jobs = sy_arena_alloc(&c->req->arena, sizeof *d->jobs);
    memset(d->jobs, 0, sizeof *d->jobs);
    d->njobs = 1;
    struct job *j = &d->jobs[0];
    j->d = d;
    j->kind = MK_TOOLS_CALL;
    sy_buf_init(&j->out, 64u << 20);
    struct sy_buf p;
    sy_buf_init(&p, r->body.len + 4096);
    SY_BUF_LIT(&p, "{\"name\":\"");
    sy_buf_json_escape(&p, name, nl);
    SY_BUF_LIT(&p, "\",\"arguments\":");
    if (args) {
        size_t al;
        const char *a = sy_jdom_raw(&doc, args, &al);
        sy_buf_append(&p, a, al);
    } else
        SY_BUF_LIT(&p, "{}");
    SY_BUF_LIT(&p, "}");
    j->params = sy_arena_strndup(&r->arena, p.p, p.len);
    j->params_len = p.len;
    sy_buf_free(&p);
    int rc = start_named(j, "tools/call");
    if (rc != 0) {
        size_t ml = 0;
        size_t el = 0;
        const char *e = member(j->out.p, j->out.len, "error", &el);
        const char *m = e ? sy_mcp_member(e, el, "message", &ml) : NULL;
        snprintf(msg, sizeof msg, "%.*s", m && ml >= 2 ? (int)(ml - 2) : 0, m && ml >= 2 ? m + 1 : "");
        return rest_refuse(c,
                           rc == SY_EAUTH       ? 403
                           : rc == SY_ENOTFOUND ? 404
                                                : 400,
                           rc == SY_EAUTH       ? "access_denied"
                           : rc == SY_ENOTFOUND ? "tool_not_found"
                                                : "invalid_parameter",
                           msg);
    }
    c->req->on_abort = h_abort;
    d->pending = 1;
    job_started(j);
    return SY_DONE;
}

/* ---- the stage ---- */

static int mcp_run(struct sy_call *c)
{
    struct hstate *hs = sy_call_slot_new(c, mcp_slot, sizeof *hs);
    if (!hs) {
        sy_call_error(c, 500, "internal_server_error", NULL, "out of memory", NULL, 0);
        return SY_DONE;
    }
    if (c->kind == SY_RK_MCP)
        return h_mcp(c, hs);
    if (c->req->method == HTTP_GET)
        return h_rest_list(c, hs);
    return h_rest_call(c, hs);
}

/* The access log line of an MCP request (the LLM routes' comes from sy_call_account). */
static void mcp_finish(struct sy_call *c, int status)
{
    if (!sy_call_slot(c, mcp_slot) || !c->g->cfg->access_log)
        return;
    struct sy_metric_req m = {0};
    char route[128];
    size_t rn = c->req->path.n < sizeof route ? c->req->path.n : sizeof route - 1;
    memcpy(route, c->req->path.p, rn);
    route[rn] = 0;
    m.route = route;
    m.requested_model = "";
    m.hashed_api_key = c->auth.hashed_key ? c->auth.hashed_key : "";
    m.status = status;
    m.total_s = (double)(sy_now_ns() - c->req->t_start_ns) / 1e9;
    m.exception_class = status >= 400 ? sy_status_exception_class(status) : NULL;
    sy_accesslog_write(&m, c->call_id, "");
}

const struct sy_stage sy_stage_mcp = {
    .name = "mcp",
    .routes = SY_RKB(SY_RK_MCP) | SY_RKB(SY_RK_MCP_REST),
    .run = mcp_run,
    .finish = mcp_finish,
    .slot = &mcp_slot,
    .conf_build = mcp_conf_build,
    .conf_free = mcp_conf_free,
    .conf_slot = &conf_slot,
};
