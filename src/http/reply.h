/* reply.h - OpenAI/LiteLLM-shaped JSON replies.
 *
 * Every error a client sees has LiteLLM's shape:
 *   {"error":{"message":"...","type":"...","param":"..."|null,"code":"<status>"}}
 * with the HTTP status equal to code. Streams that already started get the
 * same object as an SSE frame instead (see gateway/proxy.c).
 */
#ifndef SY_HTTP_REPLY_H
#define SY_HTTP_REPLY_H

#include <stddef.h>
#include <string.h>

struct sy_req;
struct sy_buf;

/* Write the error JSON into out. message NULL -> a default for the status. */
int sy_error_json(struct sy_buf *out, int status, const char *type, const char *param, const char *message);
/* Reply with an error and end the request. Extra headers may be NULL. */
void sy_reply_error(struct sy_req *r, int status, const char *type, const char *param, const char *message);
void sy_reply_error_h(struct sy_req *r, int status, const char *type, const char *param, const char *message,
                      const char *extra_headers, size_t extra_len);
/* Reply with an SY_E* code's status/type and a message. */
void sy_reply_errcode(struct sy_req *r, int err, const char *message);
/* Reply 200 JSON. */
void sy_reply_json(struct sy_req *r, int status, const char *json, size_t len);
/* Reply with the JSON document built in b, or, when b hit its cap or an
 * allocation failed while it was built (core/buf.h's sticky error), with a
 * 500 error instead: a client never gets a truncated document. */
void sy_reply_buf(struct sy_req *r, int status, const struct sy_buf *b);

/* Write "name: value\r\n" at o (the caller has made room: nl + vl + 4 bytes);
 * the bytes written. For the gateway's echo of upstream headers. */
static inline size_t sy_header_line(char *o, const char *name, size_t nl, const char *v, size_t vl)
{
    memcpy(o, name, nl);
    o[nl] = ':';
    o[nl + 1] = ' ';
    memcpy(o + nl + 2, v, vl);
    o[nl + 2 + vl] = '\r';
    o[nl + 3 + vl] = '\n';
    return nl + vl + 4;
}

#endif
