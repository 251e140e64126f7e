/* errors.c - tables generated from SY_ERRNO_MAP. */
#include "core/errors.h"

#include <stddef.h>

struct row {
    int code, status;
    const char *type, *name;
};
static const struct row rows[] = {
#define SY__E(name, val, st, ty) {val, st, ty, #name},
    SY_ERRNO_MAP(SY__E)
#undef SY__E
};

static const struct row *find(int err)
{
    for (unsigned i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].code == err)
            return &rows[i];
    return NULL;
}

int sy_err_status(int err)
{
    const struct row *r = find(err);
    return r ? r->status : 500;
}
const char *sy_err_type(int err)
{
    const struct row *r = find(err);
    return r ? r->type : "internal_server_error";
}
const char *sy_err_name(int err)
{
    const struct row *r = find(err);
    return r ? r->name : "EUNKNOWN";
}

const char *sy_status_exception_class(int status)
{
    switch (status) {
    case 400: return "BadRequestError";
    case 401: return "AuthenticationError";
    case 403: return "PermissionDeniedError";
    case 404: return "NotFoundError";
    case 408: return "Timeout";
    case 413: return "BadRequestError";
    case 422: return "UnprocessableEntityError";
    case 429: return "RateLimitError";
    case 503: return "ServiceUnavailableError";
    default: return status >= 500 ? "InternalServerError" : "APIError";
    }
}
