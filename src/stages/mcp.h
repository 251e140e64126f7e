/* stages/mcp.h - what the MCP stages share (internal to src/stages/):
 *
 *   mcp_registry.c  the servers in force (config + database), each worker's
 *                   client pool, reloads when /v1/mcp/server changes them
 *   mcp.c           POST|GET|DELETE /mcp and /{alias}/mcp (streamable HTTP),
 *                   /mcp-rest/tools/list|call; dispatch of one client
 *                   JSON-RPC body; tool calls' accounting
 *   mcp_sse.c       the old SSE transport: GET /sse (the stream), POST the
 *                   message endpoint it names (answers go to the stream)
 *   mcp_tools.c     tools of type "mcp" inside /v1/responses and
 *                   /v1/chat/completions: listed, called by the gateway,
 *                   results fed back to the model
 */
#ifndef SY_STAGES_MCP_H
#define SY_STAGES_MCP_H

#include <stddef.h>
#include <stdint.h>

#include "gateway/gateway.h"
#include "mcp/mcp.h"

/* ---- mcp_registry.c ---- */
/* The servers in force under config g: the config's and the database's
 * (refs +1, the caller unrefs); NULL when MCP is off (no servers in the
 * config and no database). */
struct sy_mcp_set *sy_mcp_current(const struct sy_gwconf *g);
/* Worker w's client pool (made on first use; synced to the set in force). */
struct sy_mcp_pool *sy_mcp_worker_pool(struct sy_worker *w);
/* The database's servers changed (admin routes): reload them here now, and
 * on the other instances through the cache invalidation channel. */
void sy_mcp_registry_changed(struct sy_worker *w);

/* ---- mcp.c ---- */
/* The session ids' HMAC secret under config g: LITELLM_SALT_KEY, else the
 * master key (what every instance of a fleet shares), else (auth off) a key
 * derived from the config's mcp_servers. NULL when the stage is off. */
const char *sy_mcp_secret(const struct sy_gwconf *g, size_t *len);
/* What a JSON-RPC body is dispatched for: one server (/{alias}/mcp) or
 * every server the caller may use (one NULL), the client's headers to
 * forward (x-mcp-<alias>-<header>, a server's extra_headers), narrowed by
 * x-mcp-servers. */
typedef void (*sy_mcp_reply_fn)(struct sy_call *c, int status, const char *body, size_t n, void *arg);
/* Answer one client JSON-RPC body (a message or a batch) for call c:
 * done(c, status, body, n, arg) once, body empty with status 202 for
 * notifications only. The caller's permissions come from c->auth. */
void sy_mcp_dispatch(struct sy_call *c, const struct sy_mcp_server *one, const char *body, size_t n,
                     sy_mcp_reply_fn done, void *arg);

/* The tools the caller of c may use (one server, or all when one is NULL),
 * namespaced "<prefix>-<tool>", as a JSON array of MCP Tool objects:
 * done(c, err, json, n, arg); err 0, or a negative SY_E* with json a reason. */
typedef void (*sy_mcp_json_fn)(struct sy_call *c, int err, const char *json, size_t n, void *arg);
void sy_mcp_list_tools(struct sy_call *c, const struct sy_mcp_server *one, sy_mcp_json_fn done, void *arg);
/* Call a namespaced tool with arguments (a JSON object, NULL: {}) for the
 * caller of c: permissions checked, the call accounted (spend row, metrics);
 * done with the CallToolResult JSON, or err < 0 with a reason (refused:
 * SY_EAUTH, unknown tool: SY_ENOTFOUND). */
void sy_mcp_call_tool(struct sy_call *c, const char *name, size_t nlen, const char *args, size_t alen,
                      sy_mcp_json_fn done, void *arg);

/* ---- mcp_sse.c ---- */
/* The SSE events of one answer appended to b: one "event: message" per
 * JSON-RPC message (a batch's array split into its elements), a "data: "
 * line per line of its text. Pure (tests, fuzzing). */
void sy_mcp_sse_events(struct sy_buf *b, const char *p, size_t n);

#endif
