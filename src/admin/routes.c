/* routes.c - the management API's route table: every handler file's table,
 * matched by method and path (admin.h).
 *
 * Paths are exact ("/key/generate") or have one '*' segment standing for one
 * path segment ("/key/ * /regenerate" written without spaces). Methods: a
 * route's own, or GET and POST when it says 0. The first match wins, in the
 * order of `tables` below.
 */
#include "admin/admin.h"

#include <http_parser.h>
#include <string.h>

static const struct sy_admin_route *const *tables(size_t *n)
{
    static const struct sy_admin_route *const t[] = {
        sy_admin_key_routes,
        sy_admin_user_routes,
        sy_admin_team_routes,
        sy_admin_customer_routes,
        sy_admin_org_routes,
        sy_admin_budget_routes,
        sy_admin_spend_routes,
        sy_admin_model_routes,
        sy_admin_mcp_routes,
        sy_admin_credential_routes,
        // the UI's data
        sy_admin_activity_routes,
        sy_admin_logdetail_routes,
        sy_admin_settings_routes,
    };
    *n = sizeof t / sizeof t[0];
    return t;
}

/* 1 when path[0..n) matches pattern (one '*' = one segment without '/'). */
static int path_match(const char *pat, const char *path, size_t n)
{
    size_t i = 0;
    for (; *pat; pat++) {
        if (*pat == '*') {
            if (i >= n || path[i] == '/')
                return 0;
            while (i < n && path[i] != '/')
                i++;
            continue;
        }
        if (i >= n || path[i] != *pat)
            return 0;
        i++;
    }
    return i == n;
}

const struct sy_admin_route *sy_admin_match(int method, const char *path, size_t n, int *path_known)
{
    size_t nt;
    const struct sy_admin_route *const *t = tables(&nt);
    *path_known = 0;
    while (n > 1 && path[n - 1] == '/') /* "/key/info/" as "/key/info" */
        n--;
    for (size_t i = 0; i < nt; i++) {
        if (!t[i])
            continue;
        for (const struct sy_admin_route *r = t[i]; r->path; r++) {
            if (!path_match(r->path, path, n))
                continue;
            *path_known = 1;
            if (r->method == method || (r->method == 0 && (method == HTTP_GET || method == HTTP_POST)))
                return r;
        }
    }
    return NULL;
}

/* Edit distance of a[0..an) and b[0..bn), both cut to 64 bytes (cheap enough
 * on every 404, however many arrive). */
static size_t lev(const char *a, size_t an, const char *b, size_t bn)
{
    size_t prev[65], cur[65];
    if (an > 64)
        an = 64;
    if (bn > 64)
        bn = 64;
    for (size_t j = 0; j <= bn; j++)
        prev[j] = j;
    for (size_t i = 1; i <= an; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= bn; j++) {
            size_t d = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t x = prev[j] + 1, y = cur[j - 1] + 1;
            cur[j] = d < x ? (d < y ? d : y) : (x < y ? x : y);
        }
        memcpy(prev, cur, (bn + 1) * sizeof *prev);
    }
    return prev[bn];
}

size_t sy_route_distance(const char *a, size_t an, const char *b, size_t bn)
{
    return lev(a, an, b, bn);
}

const char *sy_admin_nearest(const char *path, size_t n, size_t *dist, int *method)
{
    size_t nt;
    const struct sy_admin_route *const *t = tables(&nt);
    const char *best = NULL;
    size_t bd = (size_t)-1;
    for (size_t i = 0; i < nt; i++) {
        if (!t[i])
            continue;
        for (const struct sy_admin_route *r = t[i]; r->path; r++) {
            if (strchr(r->path, '*'))
                continue;
            size_t d = lev(path, n, r->path, strlen(r->path));
            if (d < bd) {
                bd = d;
                best = r->path;
                *method = r->method;
            }
        }
    }
    *dist = bd;
    return best;
}

void sy_admin_each(void (*fn)(void *ud, int method, const char *path), void *ud)
{
    size_t nt;
    const struct sy_admin_route *const *t = tables(&nt);
    for (size_t i = 0; i < nt; i++)
        for (const struct sy_admin_route *r = t[i]; r && r->path; r++)
            fn(ud, r->method, r->path);
}
