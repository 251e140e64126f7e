/* reply.c - error and JSON replies; see reply.h. */
#include "http/reply.h"

#include <string.h>

#include "core/buf.h"
#include "core/errors.h"
#include "http/server.h"

static const char *default_message(int status)
{
    switch (status) {
    case 400: return "Bad request";
    case 401: return "Authentication Error, No api key passed in.";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request timeout";
    case 413: return "Request body too large";
    case 431: return "Request header fields too large";
    case 429: return "Too many requests";
    case 503: return "Service unavailable";
    default: return "Internal server error";
    }
}

int sy_error_json(struct sy_buf *out, int status, const char *type, const char *param, const char *message)
{
    if (!message)
        message = default_message(status);
    int rc = SY_BUF_LIT(out, "{\"error\":{\"message\":\"");
    rc |= sy_buf_json_escape(out, message, strlen(message));
    rc |= SY_BUF_LIT(out, "\",\"type\":\"");
    rc |= sy_buf_json_escape(out, type ? type : "None", strlen(type ? type : "None"));
    rc |= SY_BUF_LIT(out, "\",\"param\":");
    if (param) {
        rc |= SY_BUF_LIT(out, "\"");
        rc |= sy_buf_json_escape(out, param, strlen(param));
        rc |= SY_BUF_LIT(out, "\"");
    } else {
        rc |= SY_BUF_LIT(out, "null");
    }
    rc |= sy_buf_printf(out, ",\"code\":\"%d\"}}", status);
    return rc ? SY_ENOSPC : 0;
}

void sy_reply_error_h(struct sy_req *r, int status, const char *type, const char *param, const char *message,
                      const char *extra, size_t extra_len)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    if (sy_error_json(&b, status, type, param, message)) { /* a message over the cap: never half an object */
        sy_buf_reset(&b);
        sy_error_json(&b, status, type, param, "error message too large to send");
    }
    sy_resp_simple(r, status, extra, extra_len, "application/json", b.p, b.len);
    sy_buf_free(&b);
}

void sy_reply_error(struct sy_req *r, int status, const char *type, const char *param, const char *message)
{
    sy_reply_error_h(r, status, type, param, message, NULL, 0);
}

void sy_reply_errcode(struct sy_req *r, int err, const char *message)
{
    sy_reply_error(r, sy_err_status(err), sy_err_type(err), NULL, message);
}

void sy_reply_json(struct sy_req *r, int status, const char *json, size_t len)
{
    sy_resp_simple(r, status, NULL, 0, "application/json", json, len);
}

void sy_reply_buf(struct sy_req *r, int status, const struct sy_buf *b)
{
    if (sy_buf_failed(b))
        sy_reply_error(r, 500, "internal_server_error", NULL, "response too large");
    else
        sy_reply_json(r, status, b->p, b->len);
}
