/* errors.h - the project's one error space (after libuv's UV_ERRNO_MAP).
 *
 * Internal functions return 0 on success or a negative SY_E* code. Each code
 * maps to the HTTP status and OpenAI/LiteLLM `error.type` a client sees when
 * the code ends a request; sy_err_reply() (http/reply.h) writes the JSON. The
 * shape matches LiteLLM: {"error":{"message","type","param","code":"<status>"}}.
 */
#ifndef SY_ERRORS_H
#define SY_ERRORS_H

/* clang-format off */
/*       name            value  status  type                         */
#define SY_ERRNO_MAP(X)                                                        \
    X(EINVAL,             -1,   400, "invalid_request_error")                 \
    X(ENOMEM,             -2,   500, "internal_server_error")                 \
    X(ENOSPC,             -3,   413, "invalid_request_error")                 \
    X(EJSON,              -4,   400, "invalid_request_error")                 \
    X(ENOMODEL,           -5,   400, "invalid_request_error")                 \
    X(EBADMODEL,          -6,   400, "invalid_request_error")                 \
    X(EAUTH,              -7,   401, "auth_error")                            \
    X(ENOTFOUND,          -8,   404, "invalid_request_error")                 \
    X(EMETHOD,            -9,   405, "invalid_request_error")                 \
    X(EBODYSIZE,          -10,  413, "invalid_request_error")                 \
    X(EHDRSIZE,           -11,  431, "invalid_request_error")                 \
    X(ETIMEOUT,           -12,  408, "timeout")                               \
    X(EUPCONNECT,         -13,  500, "api_connection_error")                  \
    X(EUPTIMEOUT,         -14,  408, "timeout")                               \
    X(EUPRESET,           -15,  500, "api_connection_error")                  \
    X(EUPPROTO,           -16,  502, "api_error")                             \
    X(ETLS,               -17,  500, "api_connection_error")                  \
    X(EDNS,               -18,  500, "api_connection_error")                  \
    X(ENODEPLOY,          -19,  429, "rate_limit_error")                      \
    X(EUNSUPPORTED,       -20,  400, "invalid_request_error")                 \
    X(EINTERNAL,          -21,  500, "internal_server_error")                 \
    X(ECANCELED,          -22,  499, "api_connection_error")                  \
    X(ECLOSED,            -23,  500, "api_connection_error")                  \
    X(ECONFIG,            -24,  500, "internal_server_error")                 \
    X(EUNAVAIL,           -25,  503, "service_unavailable")
/* clang-format on */

enum {
#define SY__E(name, val, st, ty) SY_##name = (val),
    SY_ERRNO_MAP(SY__E)
#undef SY__E
};

/* Flow codes for resumable stages; positive, never errors. */
#define SY_OK    0
#define SY_AGAIN 1
#define SY_DONE  2

/* HTTP status for an error code (500 for unknown codes). */
int sy_err_status(int err);
/* OpenAI/LiteLLM error.type for an error code. */
const char *sy_err_type(int err);
/* LiteLLM's exception class for an HTTP status (litellm/exceptions.py):
 * 400 BadRequestError, 401 AuthenticationError, 429 RateLimitError, ... */
const char *sy_status_exception_class(int status);
/* Short symbolic name ("EUPTIMEOUT"), for logs. */
const char *sy_err_name(int err);

#endif
