/* mcp.h - the MCP gateway below the engine (floor 2): the servers a config
 * and the database declare, who may use which, JSON-RPC messages, the
 * gateway's own session ids, and the client that talks to MCP servers.
 *
 *   config.yaml mcp_servers + litellm_settings.mcp_aliases ─┐
 *   LiteLLM_MCPServerTable rows (admin/mcp.c, on a DB thread)┴─▶ sy_mcp_set_build (conf.c)
 *        │  one immutable, refcounted set; stages/mcp_registry.c swaps it
 *        ▼
 *   stages/mcp.c (/mcp, /{alias}/mcp, /mcp-rest/...), mcp_sse.c (the old SSE
 *   transport), mcp_tools.c (type "mcp" tools inside LLM calls)
 *        │  sy_mcp_allowed / sy_mcp_tool_allowed (perm.c), names (names.c),
 *        │  sy_mcp_rpc_* (rpc.c), sy_mcp_session_* (session.c)
 *        ▼
 *   sy_mcp_pool (one per worker, on its loop: client.c) ── http.c (streamable
 *   HTTP), sse.c (the old SSE transport), stdio.c (supervised children),
 *   auth.c (api_key, bearer, basic, static headers, OAuth2 client credentials)
 *
 * Nothing here names an engine type: the stages hand in what they read from
 * the call (the key's object permissions, the client's headers).
 *
 * Tool names: a tool of server S reaches clients of /mcp as
 * "<S.prefix>-<tool>" (LiteLLM's MCP_TOOL_PREFIX_SEPARATOR "-"); on
 * /{alias}/mcp (one server) the bare name is accepted as well.
 */
#ifndef SY_MCP_H
#define SY_MCP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "core/buf.h"
#include "keys/keys.h"

struct sy_upool;

/* ---- servers (conf.c) ---- */

enum sy_mcp_transport { SY_MCP_HTTP, SY_MCP_SSE, SY_MCP_STDIO };
/* auth_type as LiteLLM spells it: none, api_key, bearer_token, basic,
 * authorization, oauth2 (client credentials). */
enum sy_mcp_auth {
    SY_MCP_AUTH_NONE,
    SY_MCP_AUTH_API_KEY,       /* X-API-Key: <auth_value> */
    SY_MCP_AUTH_BEARER,        /* Authorization: Bearer <auth_value> */
    SY_MCP_AUTH_BASIC,         /* Authorization: Basic <auth_value> (already base64, as LiteLLM) */
    SY_MCP_AUTH_AUTHORIZATION, /* Authorization: <auth_value> */
    SY_MCP_AUTH_OAUTH2,        /* client credentials at token_url, the token cached until it expires */
};

struct sy_mcp_tool_cost {
    char *tool;
    double cost; /* USD per call */
};

/* One MCP server, compiled. Strings are NUL-terminated and owned by the set. */
struct sy_mcp_server {
    unsigned idx;      /* index in its set */
    char *id;          /* server_id: the DB row's; a config server's is LiteLLM's stable id (conf.c) */
    char *name;        /* the mcp_servers key / server_name */
    char *alias;       /* DB alias or an mcp_aliases entry naming it; NULL */
    char *prefix;      /* the tool-name prefix and the /{prefix}/mcp path: alias, else name */
    char *description; /* NULL */
    char *url;         /* http(s) transports */
    enum sy_mcp_transport transport;
    char *spec_version; /* the protocol revision to offer it; NULL: the newest we speak */
    enum sy_mcp_auth auth_type;
    char *auth_value;                                     /* os.environ/ resolved */
    char *token_url, *client_id, *client_secret, *scopes; /* oauth2 */
    char *static_headers;                                 /* "Name: v\r\n" lines sent on every request; NULL */
    char **extra_headers;                                 /* client header names forwarded as they come */
    size_t nextra_headers;
    char **allowed_tools, **disallowed_tools; /* bare tool names; none: every tool */
    size_t nallowed_tools, ndisallowed_tools;
    char **access_groups; /* mcp_access_groups */
    size_t naccess_groups;
    int allow_all_keys; /* every key may use it */
    char *command;      /* stdio */
    char **args;
    size_t nargs;
    char **env; /* "K=V" */
    size_t nenv;
    double timeout_s; /* one request's bound (default 60) */
    double default_cost;
    struct sy_mcp_tool_cost *tool_costs;
    size_t ntool_costs;
    int from_db;
    char fingerprint[65]; /* sha256 hex of everything that shapes the connection: a pool restarts on change */
};

struct sy_mcp_set {
    atomic_int refs;
    struct sy_mcp_server *s;
    size_t n;
    void *mem; /* what the set owns */
};

/* Build a set from the config's mcp_servers (JSON object text, may be NULL),
 * litellm_settings.mcp_aliases (JSON object text, may be NULL) and database
 * rows (a JSON array of LiteLLM_MCPServerTable rows, column names as keys,
 * may be NULL). Config servers come first; a DB row whose name or alias a
 * config server already uses is skipped (LiteLLM: the config wins).
 * NULL with err filled when the config part is invalid (a bad transport, no
 * url, no command for stdio); a bad DB row is skipped with a warning line in
 * warn (may be NULL). Refs 1. */
struct sy_mcp_set *sy_mcp_set_build(const char *servers_json, const char *aliases_json, const char *db_rows_json,
                                    char *err, size_t errlen, struct sy_buf *warn);
/* Credentials LiteLLM stored encrypted in LiteLLM_MCPServerTable are
 * decrypted with LITELLM_SALT_KEY, else with this master key (set once at
 * start, before any set is built; NULL clears it). */
void sy_mcp_set_master_key(const char *k);
void sy_mcp_set_ref(struct sy_mcp_set *s);
void sy_mcp_set_unref(struct sy_mcp_set *s);
/* The server a name, alias, prefix or id denotes; NULL: none. */
const struct sy_mcp_server *sy_mcp_find(const struct sy_mcp_set *set, const char *name, size_t len);
/* The server a namespaced tool name "<prefix>-<tool>" belongs to (longest
 * prefix that matches), with *tool and *tool_len the bare name; NULL: none. */
const struct sy_mcp_server *sy_mcp_split_tool(const struct sy_mcp_set *set, const char *name, size_t len,
                                              const char **tool, size_t *tool_len);
/* A server as GET /v1/mcp/server shows it (LiteLLM's LiteLLM_MCPServerTable
 * shape; credentials never in clear). */
void sy_mcp_server_json(const struct sy_mcp_server *s, struct sy_buf *b);

/* ---- permissions (perm.c): LiteLLM's MCPRequestHandler ----
 * A permission grants a server by id, name, alias or prefix in mcp_servers,
 * by an access group, or by an entry in mcp_tool_permissions. "no-mcp-servers"
 * on the key: none at all. Admin whose key restricts nothing: every server.
 * Else the key's servers; when the team has some, the key's are cut to the
 * team's, and a key with none inherits the team's; the organization's, when
 * it has some, cap the result (or are the result when neither key nor team
 * restricts); servers with allow_all_keys are added for everyone. out[i] is
 * 1 for set->s[i] the caller may use (perm.c has the details). */
void sy_mcp_allowed(const struct sy_mcp_set *set, int is_admin, const struct sy_objperm *key,
                    const struct sy_objperm *team, const struct sy_objperm *org, unsigned char *out);
/* May the caller call tool (bare name) of s? The server's allowed_tools /
 * disallowed_tools, then the key's and team's mcp_tool_permissions for s
 * (keyed by id, name or alias). 1 yes. The organization's ceiling is a second
 * call: sy_mcp_tool_allowed(s, tool, len, org, NULL). */
int sy_mcp_tool_allowed(const struct sy_mcp_server *s, const char *tool, size_t len, const struct sy_objperm *key,
                        const struct sy_objperm *team);

/* ---- JSON-RPC 2.0 (rpc.c) ---- */

enum sy_mcp_kind { SY_MCP_REQUEST, SY_MCP_NOTIFICATION, SY_MCP_RESPONSE };
/* One message; spans point into the parsed text. */
struct sy_mcp_msg {
    enum sy_mcp_kind kind;
    const char *method; /* requests and notifications; decoded, NUL-terminated (owned by the parse) */
    const char *id;     /* the id's raw JSON ("7", "\"a\""); NULL for notifications */
    size_t id_len;
    const char *params; /* raw JSON of params; NULL: absent */
    size_t params_len;
    const char *result; /* responses: raw JSON of result or of error */
    size_t result_len;
    int is_error;
};
struct sy_mcp_batch {
    struct sy_mcp_msg *m;
    size_t n;
    int is_batch; /* the body was an array */
    void *mem;
};
/* Parse a body: one message or a batch (at most max messages). 0, or -1
 * with the JSON-RPC error code in *code (-32700 parse error, -32600 invalid
 * request) and a message in err. Duplicate keys refused; depth bounded. */
int sy_mcp_rpc_parse(const char *p, size_t n, size_t max, struct sy_mcp_batch *out, int *code, char *err,
                     size_t errlen);
void sy_mcp_batch_free(struct sy_mcp_batch *b);
/* {"jsonrpc":"2.0","id":<id>,"result":<result>} / an error object. id NULL: null. */
void sy_mcp_rpc_result(struct sy_buf *b, const char *id, size_t id_len, const char *result, size_t n);
void sy_mcp_rpc_error(struct sy_buf *b, const char *id, size_t id_len, int code, const char *msg);
/* The member name of the JSON object p[0..n) as raw JSON (NULL: absent). */
const char *sy_mcp_member(const char *p, size_t n, const char *name, size_t *len);

/* Protocol revisions, newest first, NULL-terminated: "2025-11-25",
 * "2025-06-18", "2025-03-26", "2024-11-05". The one to answer a client asking for v:
 * v when we speak it, else the newest. */
extern const char *const sy_mcp_versions[];
const char *sy_mcp_negotiate(const char *v, size_t len);

/* ---- the gateway's session ids (session.c) ----
 * Stateless: Mcp-Session-Id is "sy1.<payload>.<mac>", base64url, the mac an
 * HMAC-SHA256 under the instances' shared secret (LITELLM_SALT_KEY, else the
 * master key), so any instance of the fleet reads a session another made.
 * The payload binds the caller's hashed key, the negotiated revision, the
 * scope (one server's prefix, or "" for /mcp) and the issue time. */
struct sy_mcp_session {
    char key_hash[17]; /* first 16 hex of the caller's hashed key ("" for the master key / no auth) */
    char version[16];
    char scope[128];
    int64_t issued; /* unix s */
    char nonce[23]; /* base64url of 16 random bytes */
};
/* Mint a session id into out (cap >= 512); its length, or -1. */
int sy_mcp_session_mint(const char *secret, size_t slen, const struct sy_mcp_session *s, char *out, size_t cap);
/* Check and read one; 0, or -1 (malformed, forged, or older than max_age_s when > 0). */
int sy_mcp_session_read(const char *secret, size_t slen, const char *tok, size_t n, double max_age_s,
                        struct sy_mcp_session *out);

/* ---- the client to MCP servers (client.c, http.c, sse.c, stdio.c, auth.c) ----
 * One pool per worker, on its loop. Per server (by fingerprint) it keeps one
 * upstream session: the first call initializes it (initialize, then
 * notifications/initialized), calls made meanwhile wait; a server that
 * answers 404 to a session is initialized again and the call retried once.
 * stdio servers are child processes of the worker, restarted with back-off
 * (1 s doubling to 60 s) when they exit; their stdout lines are bounded
 * (max_result), stderr is logged at a bounded rate; sy_mcp_pool_sync kills
 * the children of servers a new set no longer has (or changed), and
 * sy_mcp_pool_close kills them all. */
struct sy_mcp_pool;
struct sy_mcp_op;

struct sy_mcp_pool *sy_mcp_pool_new(uv_loop_t *loop, struct sy_upool *up);
/* A new set is in force: drop the state (and children) of servers it lacks. */
void sy_mcp_pool_sync(struct sy_mcp_pool *p, const struct sy_mcp_set *set);
/* Close everything; pending ops get their callback with SY_ECANCELED. */
void sy_mcp_pool_close(struct sy_mcp_pool *p);

/* done(ud, err, msg, n): err 0 and msg the server's whole JSON-RPC response
 * message (result or error member, our id restored), or a negative SY_E*
 * (SY_EUPTIMEOUT after timeout_s, SY_EUPCONNECT, SY_EUPPROTO, SY_ENOSPC past
 * max_result bytes, SY_ECANCELED) with msg a short reason. Never called from
 * inside sy_mcp_request. */
typedef void (*sy_mcp_done_fn)(void *ud, int err, const char *msg, size_t n);

struct sy_mcp_req {
    const struct sy_mcp_server *s; /* must outlive the op (hold a ref on its set) */
    const char *method;            /* "tools/list", "tools/call", "prompts/get", ... */
    const char *params;            /* raw JSON object; NULL: none */
    size_t params_len;
    const char *headers; /* extra "Name: v\r\n" lines from the client (x-mcp-<alias>-<h>, forwarded ones) */
    size_t headers_len;
    double timeout_s;  /* 0: s->timeout_s */
    size_t max_result; /* 0: 16 MiB */
    int notify;        /* a notification: no answer expected (done gets err 0, msg "") */
    const char *id;    /* the caller's JSON-RPC id (raw JSON) put back in the answer in place of the
                          pool's own; NULL: the answer keeps the pool's id */
    size_t id_len;
};
/* Start one request; NULL only on bad arguments. */
struct sy_mcp_op *sy_mcp_request(struct sy_mcp_pool *p, const struct sy_mcp_req *r, sy_mcp_done_fn done, void *ud);
/* Abandon it: no callback follows. */
void sy_mcp_cancel(struct sy_mcp_op *op);

/* Counters of a pool (tests, metrics). */
struct sy_mcp_pool_stats {
    uint64_t requests, initializes, reinitializes, spawns, restarts, token_fetches, timeouts;
};
void sy_mcp_pool_stats(const struct sy_mcp_pool *p, struct sy_mcp_pool_stats *st);

#endif
