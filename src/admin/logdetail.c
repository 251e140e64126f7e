/* logdetail.c - one request's log for the Logs page's detail view:
 * LiteLLM's GET /spend/logs/ui/{request_id}.
 *
 * The answer is the LiteLLM_SpendLogs row as a JSON object (every column:
 * messages and response when general_settings.store_prompts_in_spend_logs
 * kept them, proxy_server_request, metadata - which holds "status" and, for
 * a failed call, "error_information" {error_code, error_class,
 * error_message} as LiteLLM writes it). start_date / end_date are accepted
 * and ignored: the id is the primary key.
 *
 * Scope: admins and proxy_admin_viewer read any row. Anyone else reads a row
 * only when it is theirs: its "user" is their user_id, or its api_key is one
 * of their keys. Anything else is 404 exactly as a missing id, so ids of
 * other tenants do not leak (LiteLLM answers {} for a missing row; a 404 in
 * its error shape is what the UI and a script can tell apart).
 */
#include <ctype.h>
#include <http_parser.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin.h"
#include "admin/admin_impl.h"
#include "store/store.h"

#define PREFIX "/spend/logs/ui/"

/* The path's request id, percent-decoded into out; 0, or -1 when empty,
 * too long or holding a NUL. */
static int request_id(const char *path, char *out, size_t cap)
{
    const char *s = path + strlen(PREFIX);
    size_t n = 0;
    for (; *s && *s != '/' && *s != '?'; s++) {
        int c = (unsigned char)*s;
        if (c == '%' && isxdigit((unsigned char)s[1]) && isxdigit((unsigned char)s[2])) {
            char hex[3] = {s[1], s[2], 0};
            c = (int)strtol(hex, NULL, 16);
            s += 2;
        }
        if (c == 0 || n + 1 >= cap)
            return -1;
        out[n++] = (char)c;
    }
    out[n] = 0;
    return n ? 0 : -1;
}

static int row_cb(void *ud, const struct sy_srow *r)
{
    struct sy_admin_rows *rows = ud;
    sy_srow_json(rows->b, r);
    rows->n++;
    return 1;
}

static void not_found(struct sy_admin_ctx *a, const char *id)
{
    sy_admin_error(a, 404, "not_found", "request_id", "Request log not found: request_id=%s", id);
}

static void log_detail(struct sy_store *st, struct sy_admin_ctx *a)
{
    char id[512];
    if (strncmp(a->path, PREFIX, strlen(PREFIX)) != 0 || request_id(a->path, id, sizeof id) < 0) {
        not_found(a, "");
        return;
    }
    struct sy_sval p[2] = {sy_sv_text(id), sy_sv_null()};
    int np = 1;
    const char *sql = "SELECT * FROM \"LiteLLM_SpendLogs\" WHERE request_id = $1";
    if (!a->is_admin && !a->is_admin_viewer) {
        /* a key without a user sees none (rows of such keys carry user '') */
        if (!a->caller_user_id || !*a->caller_user_id) {
            not_found(a, id);
            return;
        }
        sql = "SELECT * FROM \"LiteLLM_SpendLogs\" WHERE request_id = $1 AND (\"user\" = $2 OR "
              "api_key IN (SELECT token FROM \"LiteLLM_VerificationToken\" WHERE user_id = $2))";
        p[1] = sy_sv_text(a->caller_user_id);
        np = 2;
    }
    struct sy_admin_rows rows = {&a->out, 0};
    int rc = sy_store_exec(st, sql, np, p, row_cb, &rows);
    if (rc < 0) {
        sy_buf_reset(&a->out);
        sy_admin_db_error(a, st, rc);
        return;
    }
    if (!rows.n)
        not_found(a, id);
}

/* LiteLLM's spend_tracking_routes: internal users and their viewers too, scoped (above) */
const struct sy_admin_route sy_admin_logdetail_routes[] = {
    {HTTP_GET, "/spend/logs/ui/*", log_detail, SY_ADMIN_READONLY | SY_ADMIN_USER | SY_ADMIN_USER_VIEW},
    {0, NULL, NULL, 0},
};
