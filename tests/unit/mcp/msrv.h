/* msrv.h - a scripted MCP server for the client pool's tests: plain HTTP on
 * 127.0.0.1, one thread per connection, blocking sockets. It records every
 * message it is sent (method, the request head) so a test asserts the wire.
 *
 *   POST /mcp          streamable HTTP: initialize (Mcp-Session-Id
 *                      "sess-<n>"), notifications (202), tools/list,
 *                      tools/call of "echo" (text = the "text" argument),
 *                      "slow" (after "ms"), "big" ("n" bytes of 'x'),
 *                      "pinger" (a ping request first, in SSE mode),
 *                      "fail" (HTTP 500); an unknown session id: 404
 *   POST /token        OAuth2 client credentials: access_token "tok-<n>"
 *   GET  /sse          the old SSE transport: event endpoint, then the
 *                      answers to POST /messages?sid=<n> as message events
 *   DELETE /mcp        the session ends
 */
#ifndef SY_TEST_MSRV_H
#define SY_TEST_MSRV_H

#include <stddef.h>
#include <stdint.h>

struct msrv_opts {
    int sse;                  /* answer requests with text/event-stream (else JSON) */
    const char *version;      /* protocolVersion the initialize answer names; NULL: the one asked */
    const char *require;      /* a header line ("X-API-Key: k") every /mcp request must carry, else 401 */
    int oauth;                /* /mcp requires "Authorization: Bearer <the current token>" */
    int token_ttl;            /* expires_in of tokens (0: left out) */
    const char *endpoint_abs; /* /sse: name this endpoint instead of the relative one */
};

struct msrv;
struct msrv *msrv_start(const struct msrv_opts *o);
uint16_t msrv_port(struct msrv *s);
/* Messages received with this method (or "response" for answers to the
 * server's own requests, "DELETE" for session ends). */
int msrv_count(struct msrv *s, const char *method);
int msrv_token_fetches(struct msrv *s);
/* Copy of the head of the last request that carried method (caller frees); NULL. */
char *msrv_head(struct msrv *s, const char *method);
/* Copy of the last body that carried method (caller frees); NULL. */
char *msrv_body(struct msrv *s, const char *method);
/* Forget every session (the next request on one gets 404). */
void msrv_expire(struct msrv *s);
/* Issue a new token: the old one gets 401. */
void msrv_rotate(struct msrv *s);
/* End every open SSE stream. */
void msrv_drop_streams(struct msrv *s);
void msrv_stop(struct msrv *s);

#endif
