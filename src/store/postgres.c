/* postgres.c - the PostgreSQL backend of store.h, on libpq.
 *
 * One struct pg is one blocking libpq connection. Statements go out with
 * PQexecParams, every parameter as text with no declared type (paramTypes
 * NULL), so the server infers each from its use. Values are written as:
 *
 *   | sy_sval kind | text sent                                     |
 *   |--------------|-----------------------------------------------|
 *   | NULL         | SQL NULL                                      |
 *   | TEXT/TS/JSON | the text as given (TS: ISO-8601 UTC)          |
 *   | INT          | %lld                                          |
 *   | NUM          | %.17g (Infinity / -Infinity / NaN)            |
 *   | BOOL         | true / false                                  |
 *   | TEXTARR      | JSON array -> array literal {"a","b\"c",NULL} |
 *
 * Results come back as text and are normalised by the column's type OID:
 *
 *   | OID                                   | kind        | from                  |
 *   |---------------------------------------|-------------|-----------------------|
 *   | 16 bool                               | SY_SV_BOOL  | t / f                 |
 *   | 20 int8, 21 int2, 23 int4, 26 oid     | SY_SV_INT   | decimal               |
 *   | 700 float4, 701 float8, 1700 numeric  | SY_SV_NUM   | decimal               |
 *   | 1114 timestamp, 1184 timestamptz      | SY_SV_TS    | -> YYYY-MM-DDTHH:MM:SS.mmmZ |
 *   | 114 json, 3802 jsonb                  | SY_SV_JSON  | as is                 |
 *   | 1009 text[] and other array types     | SY_SV_JSON  | array literal -> JSON array |
 *   | anything else                         | SY_SV_TEXT  | as is                 |
 *
 * The session runs with TimeZone UTC (set after each connect), so timestamptz
 * text is UTC too; timestamp without time zone is taken as UTC (LiteLLM
 * writes UTC).
 *
 * Connection life: a server that is down at open is not an error, the
 * connection is kept DOWN and each call reconnects first (at most one attempt
 * per second, so a dead server costs DB threads little). A connection lost
 * under a statement (PQstatus() == CONNECTION_BAD after the call) is closed
 * and the call returns SY_STORE_EDOWN - after one reconnect-and-retry when no
 * transaction is open (inside one, the transaction is gone and the caller
 * must see it). TCP keepalives (30 s idle, 10 s interval, 3 probes) and
 * tcp_user_timeout notice a server that vanished without closing. SQLSTATE
 * 23505 (unique_violation) is SY_STORE_ECONFLICT, class 08 and 57P0x are
 * SY_STORE_EDOWN, the rest SY_STORE_EQUERY.
 */
#include <json-c/json.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/buf.h"
#include "core/utf8.h"
#include "store/store.h"
#include "store/store_impl.h"

struct pg {
    struct sy_store super;
    PGconn *conn;
    char *url;
    char connect_timeout[16];
    double last_attempt; /* monotonic seconds of the last failed connect */
    char connerr[400];   /* why it failed */
};

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- array literals ---------------------------------------------------- */

static int is_json_number(const char *s, size_t n)
{
    size_t i = 0;
    if (i < n && s[i] == '-')
        i++;
    if (i >= n)
        return 0;
    if (s[i] == '0')
        i++;
    else if (s[i] >= '1' && s[i] <= '9')
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    else
        return 0;
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || s[i] < '0' || s[i] > '9')
            return 0;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= n || s[i] < '0' || s[i] > '9')
            return 0;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    return i == n;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

struct arr {
    const char *p, *end;
    int style;
    struct sy_buf *out;
    struct sy_buf el; /* one element, unescaped */
};

static int emit_elem(struct arr *a, int quoted)
{
    const char *s = a->el.p ? a->el.p : "";
    size_t n = a->el.len;
    if (!quoted && n == 4 && strncasecmp(s, "NULL", 4) == 0)
        return SY_BUF_LIT(a->out, "null");
    if (a->style == 1 && is_json_number(s, n))
        return sy_buf_append(a->out, s, n);
    if (a->style == 2 && n == 1 && (s[0] == 't' || s[0] == 'f'))
        return s[0] == 't' ? SY_BUF_LIT(a->out, "true") : SY_BUF_LIT(a->out, "false");
    if (SY_BUF_LIT(a->out, "\"") || sy_utf8_json_escape(a->out, s, n) || SY_BUF_LIT(a->out, "\""))
        return -1;
    return 0;
}

static int parse_arr(struct arr *a, int depth)
{
    if (depth > 16 || a->p >= a->end || *a->p != '{')
        return -1;
    a->p++;
    if (SY_BUF_LIT(a->out, "["))
        return -1;
    while (a->p < a->end && is_space(*a->p))
        a->p++;
    if (a->p < a->end && *a->p == '}') {
        a->p++;
        return SY_BUF_LIT(a->out, "]");
    }
    for (;;) {
        while (a->p < a->end && is_space(*a->p))
            a->p++;
        if (a->p >= a->end)
            return -1;
        if (*a->p == '{') {
            if (parse_arr(a, depth + 1))
                return -1;
        } else if (*a->p == '"') {
            sy_buf_reset(&a->el);
            a->p++;
            for (;;) {
                if (a->p >= a->end)
                    return -1;
                char c = *a->p++;
                if (c == '"')
                    break;
                if (c == '\\') {
                    if (a->p >= a->end)
                        return -1;
                    c = *a->p++;
                }
                if (sy_buf_append(&a->el, &c, 1))
                    return -1;
            }
            if (emit_elem(a, 1))
                return -1;
        } else {
            sy_buf_reset(&a->el);
            size_t keep = 0; /* length up to the last escaped or non-space byte */
            int escaped = 0;
            while (a->p < a->end && *a->p != ',' && *a->p != '}') {
                char c = *a->p++;
                if (c == '{' || c == '"')
                    return -1;
                if (c == '\\') {
                    if (a->p >= a->end)
                        return -1;
                    c = *a->p++;
                    escaped = 1;
                    if (sy_buf_append(&a->el, &c, 1))
                        return -1;
                    keep = a->el.len;
                    continue;
                }
                if (sy_buf_append(&a->el, &c, 1))
                    return -1;
                if (!is_space(c))
                    keep = a->el.len;
            }
            a->el.len = keep;
            if (a->el.p)
                a->el.p[keep] = 0;
            if (keep == 0)
                return -1; /* an empty unquoted element */
            if (emit_elem(a, escaped))
                return -1;
        }
        while (a->p < a->end && is_space(*a->p))
            a->p++;
        if (a->p >= a->end)
            return -1;
        if (*a->p == ',') {
            a->p++;
            if (SY_BUF_LIT(a->out, ","))
                return -1;
            continue;
        }
        if (*a->p == '}') {
            a->p++;
            return SY_BUF_LIT(a->out, "]");
        }
        return -1;
    }
}

int sy__pg_array_to_json(const char *s, size_t n, int style, struct sy_buf *out)
{
    struct arr a = {s, s + n, style, out, {0}};
    sy_buf_init(&a.el, n + 1);
    while (a.p < a.end && is_space(*a.p))
        a.p++;
    if (a.p < a.end && *a.p == '[') { /* dimension decoration "[0:1]={...}" */
        while (a.p < a.end && *a.p != '=') {
            char c = *a.p;
            if (!(c == '[' || c == ']' || c == ':' || c == '-' || (c >= '0' && c <= '9')))
                goto bad;
            a.p++;
        }
        if (a.p >= a.end)
            goto bad;
        a.p++;
    }
    if (parse_arr(&a, 0))
        goto bad;
    while (a.p < a.end && is_space(*a.p))
        a.p++;
    if (a.p != a.end)
        goto bad;
    sy_buf_free(&a.el);
    return 0;
bad:
    sy_buf_free(&a.el);
    return -1;
}

int sy__json_to_pg_array(const char *json, size_t n, struct sy_buf *out)
{
    if (n > (size_t)1 << 30)
        return -1;
    struct json_tokener *tok = json_tokener_new();
    if (!tok)
        return -1;
    struct json_object *o = json_tokener_parse_ex(tok, json, (int)n);
    int ok = o && json_tokener_get_error(tok) == json_tokener_success && tok->char_offset == (int)n;
    if (o && !ok) { /* trailing bytes: allow only whitespace */
        ok = 1;
        for (size_t i = (size_t)tok->char_offset; i < n; i++)
            if (!is_space(json[i]))
                ok = 0;
    }
    json_tokener_free(tok);
    if (!ok || !json_object_is_type(o, json_type_array)) {
        json_object_put(o);
        return -1;
    }
    int rc = SY_BUF_LIT(out, "{");
    size_t len = json_object_array_length(o);
    for (size_t i = 0; i < len && rc == 0; i++) {
        struct json_object *e = json_object_array_get_idx(o, i);
        if (i)
            rc |= SY_BUF_LIT(out, ",");
        if (!e) {
            rc |= SY_BUF_LIT(out, "NULL");
            continue;
        }
        enum json_type t = json_object_get_type(e);
        if (t == json_type_array || t == json_type_object) {
            rc = -1;
            break;
        }
        const char *s = t == json_type_string ? json_object_get_string(e) : json_object_to_json_string(e);
        size_t sl = t == json_type_string ? (size_t)json_object_get_string_len(e) : strlen(s);
        rc |= SY_BUF_LIT(out, "\"");
        for (size_t j = 0; j < sl && rc == 0; j++) {
            if (s[j] == '"' || s[j] == '\\')
                rc |= SY_BUF_LIT(out, "\\");
            rc |= sy_buf_append(out, s + j, 1);
        }
        rc |= SY_BUF_LIT(out, "\"");
    }
    if (rc == 0)
        rc = SY_BUF_LIT(out, "}");
    json_object_put(o);
    return rc ? -1 : 0;
}

/* ---- connection -------------------------------------------------------- */

static void quiet_notice(void *arg, const char *msg) {}

static int connect_now(struct pg *p)
{
    if (p->conn) {
        PQfinish(p->conn);
        p->conn = NULL;
    }
    double now = mono_now();
    if (p->last_attempt > 0 && now - p->last_attempt < 1.0)
        return sy__store_fail(&p->super, SY_STORE_EDOWN, "postgres connect: %s", p->connerr);
    /* our defaults first: the URL's own settings override them */
    const char *kw[] = {"connect_timeout",     "keepalives",       "keepalives_idle",
                        "keepalives_interval", "keepalives_count", "tcp_user_timeout",
                        "application_name",    "dbname",           NULL};
    const char *val[] = {p->connect_timeout, "1", "30", "10", "3", "60000", "switchyard", p->url, NULL};
    PGconn *c = PQconnectdbParams(kw, val, 1);
    if (!c || PQstatus(c) != CONNECTION_OK) {
        snprintf(p->connerr, sizeof p->connerr, "%s", c ? PQerrorMessage(c) : "out of memory");
        p->connerr[strcspn(p->connerr, "\n")] = 0;
        PQfinish(c);
        p->last_attempt = mono_now();
        return sy__store_fail(&p->super, SY_STORE_EDOWN, "postgres connect: %s", p->connerr);
    }
    PQsetNoticeProcessor(c, quiet_notice, NULL);
    PGresult *r = PQexec(c, "SET TIME ZONE 'UTC'");
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok) {
        snprintf(p->connerr, sizeof p->connerr, "session setup: %s", PQerrorMessage(c));
        p->connerr[strcspn(p->connerr, "\n")] = 0;
        PQfinish(c);
        p->last_attempt = mono_now();
        return sy__store_fail(&p->super, SY_STORE_EDOWN, "postgres connect: %s", p->connerr);
    }
    p->conn = c;
    p->last_attempt = 0;
    p->super.up = 1;
    return 0;
}

static int conn_ok(struct pg *p)
{
    return p->conn && PQstatus(p->conn) == CONNECTION_OK;
}

/* ---- parameters -------------------------------------------------------- */

struct params {
    const char **values;
    size_t *off; /* offset into b, or (size_t)-1 for NULL */
    struct sy_buf b;
};

static int build_params(struct pg *p, int n, const struct sy_sval *in, struct params *pp)
{
    sy_buf_init(&pp->b, (size_t)1 << 30);
    pp->values = calloc((size_t)n + 1, sizeof *pp->values);
    pp->off = calloc((size_t)n + 1, sizeof *pp->off);
    if (!pp->values || !pp->off)
        return sy__store_fail(&p->super, SY_STORE_EQUERY, "out of memory");
    for (int i = 0; i < n; i++) {
        const struct sy_sval *v = &in[i];
        int rc = 0;
        pp->off[i] = pp->b.len;
        switch (v->k) {
        case SY_SV_INT: rc = sy_buf_printf(&pp->b, "%lld", (long long)v->i); break;
        case SY_SV_NUM:
            if (isnan(v->d))
                rc = SY_BUF_LIT(&pp->b, "NaN");
            else if (isinf(v->d))
                rc = v->d > 0 ? SY_BUF_LIT(&pp->b, "Infinity") : SY_BUF_LIT(&pp->b, "-Infinity");
            else
                rc = sy_buf_printf(&pp->b, "%.17g", v->d);
            break;
        case SY_SV_BOOL: rc = v->i ? SY_BUF_LIT(&pp->b, "true") : SY_BUF_LIT(&pp->b, "false"); break;
        case SY_SV_TEXTARR:
            if (!v->s) {
                pp->off[i] = (size_t)-1;
                continue;
            }
            if (sy__json_to_pg_array(v->s, v->n, &pp->b))
                return sy__store_fail(&p->super, SY_STORE_EQUERY, "parameter $%d: not a JSON array of strings", i + 1);
            break;
        case SY_SV_TEXT:
        case SY_SV_TS:
        case SY_SV_JSON:
            if (v->s) {
                rc = sy_buf_append(&pp->b, v->s, v->n);
                break;
            }
            /* fall through */
        case SY_SV_NULL:
        default: pp->off[i] = (size_t)-1; continue;
        }
        if (rc || sy_buf_append(&pp->b, "", 1))
            return sy__store_fail(&p->super, SY_STORE_EQUERY, "parameter $%d too large", i + 1);
    }
    for (int i = 0; i < n; i++)
        pp->values[i] = pp->off[i] == (size_t)-1 ? NULL : pp->b.p + pp->off[i];
    return 0;
}

static void params_free(struct params *pp)
{
    free(pp->values);
    free(pp->off);
    sy_buf_free(&pp->b);
}

/* ---- results ----------------------------------------------------------- */

/* Kind for a type OID; *style for arrays (see sy__pg_array_to_json). */
static enum sy_sv_kind oid_kind(Oid t, int *array, int *style)
{
    *array = 0;
    *style = 0;
    switch (t) {
    case 16: return SY_SV_BOOL;
    case 20:
    case 21:
    case 23:
    case 26: return SY_SV_INT;
    case 700:
    case 701:
    case 1700: return SY_SV_NUM;
    case 1114:
    case 1184: return SY_SV_TS;
    case 114:
    case 3802: return SY_SV_JSON;
    case 1005: /* int2[] */
    case 1007: /* int4[] */
    case 1016: /* int8[] */
    case 1021: /* float4[] */
    case 1022: /* float8[] */
    case 1231: /* numeric[] */
    case 1028: /* oid[] */ *array = 1, *style = 1; return SY_SV_JSON;
    case 1000: /* bool[] */ *array = 1, *style = 2; return SY_SV_JSON;
    case 1009: /* text[] */
    case 1015: /* varchar[] */
    case 1014: /* bpchar[] */
    case 1002: /* char[] */
    case 1003: /* name[] */
    case 199:  /* json[] */
    case 3807: /* jsonb[] */
    case 2951: /* uuid[] */
    case 1115: /* timestamp[] */
    case 1185: /* timestamptz[] */
    case 1182: /* date[] */
    case 1001: /* bytea[] */ *array = 1; return SY_SV_JSON;
    default: return SY_SV_TEXT;
    }
}

static int sqlstate_rc(const char *state)
{
    if (!state)
        return SY_STORE_EQUERY;
    if (strcmp(state, "23505") == 0)
        return SY_STORE_ECONFLICT;
    if (strncmp(state, "08", 2) == 0 || strncmp(state, "57P0", 4) == 0)
        return SY_STORE_EDOWN;
    return SY_STORE_EQUERY;
}

static int deliver_rows(struct pg *p, PGresult *res, sy_srow_cb cb, void *ud)
{
    int nrows = PQntuples(res), nc = PQnfields(res);
    if (!cb || nrows == 0)
        return nrows;
    const char **names = calloc((size_t)nc + 1, sizeof *names);
    struct sy_sval *v = calloc((size_t)nc + 1, sizeof *v);
    char(*ts)[32] = calloc((size_t)nc + 1, sizeof *ts);
    size_t *off = calloc((size_t)nc + 1, sizeof *off);
    enum sy_sv_kind *kind = calloc((size_t)nc + 1, sizeof *kind);
    int *style = calloc((size_t)nc + 1, sizeof *style), *isarr = calloc((size_t)nc + 1, sizeof *isarr);
    struct sy_buf ab;
    sy_buf_init(&ab, (size_t)1 << 30);
    int rc = nrows;
    if (!names || !v || !ts || !off || !kind || !style || !isarr) {
        rc = sy__store_fail(&p->super, SY_STORE_EQUERY, "out of memory");
        goto out;
    }
    for (int c = 0; c < nc; c++) {
        names[c] = PQfname(res, c);
        kind[c] = oid_kind(PQftype(res, c), &isarr[c], &style[c]);
    }
    for (int r = 0; r < nrows; r++) {
        sy_buf_reset(&ab);
        for (int c = 0; c < nc; c++) {
            struct sy_sval *x = &v[c];
            memset(x, 0, sizeof *x);
            off[c] = (size_t)-1;
            if (PQgetisnull(res, r, c)) {
                x->k = SY_SV_NULL;
                continue;
            }
            const char *s = PQgetvalue(res, r, c);
            size_t n = (size_t)PQgetlength(res, r, c);
            x->k = SY_SV_TEXT, x->s = s, x->n = n;
            switch (kind[c]) {
            case SY_SV_BOOL:
                x->k = SY_SV_BOOL, x->s = NULL, x->n = 0;
                x->i = s[0] == 't';
                break;
            case SY_SV_INT: {
                char *end;
                long long i = strtoll(s, &end, 10);
                if (end != s && !*end)
                    x->k = SY_SV_INT, x->i = i, x->s = NULL, x->n = 0;
                break;
            }
            case SY_SV_NUM: {
                char *end;
                double d = strtod(s, &end);
                if (end != s && !*end)
                    x->k = SY_SV_NUM, x->d = d, x->s = NULL, x->n = 0;
                break;
            }
            case SY_SV_TS:
                if (sy__ts_normalise(s, ts[c]) == 0)
                    x->k = SY_SV_TS, x->s = ts[c], x->n = strlen(ts[c]);
                break;
            case SY_SV_JSON:
                if (!isarr[c]) {
                    x->k = SY_SV_JSON;
                    break;
                }
                {
                    size_t at = ab.len;
                    if (sy__pg_array_to_json(s, n, style[c], &ab) == 0 && sy_buf_append(&ab, "", 1) == 0) {
                        off[c] = at;
                        x->k = SY_SV_JSON;
                    } else {
                        ab.len = at; /* unparseable: keep the raw text */
                    }
                }
                break;
            default: break;
            }
        }
        for (int c = 0; c < nc; c++)
            if (off[c] != (size_t)-1) {
                v[c].s = ab.p + off[c];
                v[c].n = strlen(v[c].s);
            }
        struct sy_srow row = {nc, names, v};
        if (cb(ud, &row))
            break;
    }
out:
    free(names), free(v), free(ts), free(off), free(kind), free(style), free(isarr);
    sy_buf_free(&ab);
    return rc;
}

/* ---- exec -------------------------------------------------------------- */

static int pg_exec(struct sy_store *st, const char *sql, int nparams, const struct sy_sval *params, sy_srow_cb cb,
                   void *ud)
{
    struct pg *p = (struct pg *)st;
    struct params pp = {0};
    int rc = build_params(p, nparams, params, &pp);
    if (rc)
        goto out;
    for (int attempt = 0;; attempt++) {
        if (!conn_ok(p)) {
            if (st->in_tx) {
                rc = sy__store_fail(st, SY_STORE_EDOWN, "postgres: connection lost inside a transaction");
                goto out;
            }
            if ((rc = connect_now(p)) != 0)
                goto out;
        }
        PGresult *res = PQexecParams(p->conn, sql, nparams, NULL, pp.values, NULL, NULL, 0);
        ExecStatusType s = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
        if (PQstatus(p->conn) != CONNECTION_OK) {
            char msg[400];
            snprintf(msg, sizeof msg, "%s", res ? PQresultErrorMessage(res) : PQerrorMessage(p->conn));
            if (!msg[0])
                snprintf(msg, sizeof msg, "%s", PQerrorMessage(p->conn));
            msg[strcspn(msg, "\n")] = 0;
            PQclear(res);
            PQfinish(p->conn);
            p->conn = NULL;
            rc = sy__store_fail(st, SY_STORE_EDOWN, "postgres: connection lost: %s", msg);
            if (!st->in_tx && attempt == 0)
                continue; /* reconnect and retry once */
            goto out;
        }
        st->up = 1;
        switch (s) {
        case PGRES_COMMAND_OK:
            rc = (int)strtol(PQcmdTuples(res), NULL, 10); /* "" for commands without a count: 0 */
            break;
        case PGRES_TUPLES_OK: rc = deliver_rows(p, res, cb, ud); break;
        case PGRES_EMPTY_QUERY: rc = 0; break;
        default: {
            char msg[480];
            snprintf(msg, sizeof msg, "%s", PQresultErrorMessage(res));
            msg[strcspn(msg, "\n")] = 0;
            rc = sy__store_fail(st, sqlstate_rc(PQresultErrorField(res, PG_DIAG_SQLSTATE)), "postgres: %s",
                                msg[0] ? msg : PQresStatus(s));
            break;
        }
        }
        PQclear(res);
        goto out;
    }
out:
    params_free(&pp);
    return rc;
}

static int pg_begin(struct sy_store *st)
{
    int rc = pg_exec(st, "BEGIN", 0, NULL, NULL, NULL);
    if (rc < 0)
        return rc;
    st->in_tx = 1;
    return 0;
}

/* COMMIT / ROLLBACK: never retried (a fresh connection has no transaction);
 * the transaction is over whatever happens. */
static int pg_end(struct sy_store *st, const char *sql)
{
    struct pg *p = (struct pg *)st;
    st->in_tx = 0;
    if (!conn_ok(p))
        return sy__store_fail(st, SY_STORE_EDOWN, "postgres: connection lost inside a transaction");
    PGresult *res = PQexec(p->conn, sql);
    int rc = 0;
    if (PQstatus(p->conn) != CONNECTION_OK) {
        PQclear(res);
        PQfinish(p->conn);
        p->conn = NULL;
        return sy__store_fail(st, SY_STORE_EDOWN, "postgres: connection lost at %s", sql);
    }
    st->up = 1;
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        char msg[480];
        snprintf(msg, sizeof msg, "%s", PQresultErrorMessage(res));
        msg[strcspn(msg, "\n")] = 0;
        rc = sy__store_fail(st, sqlstate_rc(PQresultErrorField(res, PG_DIAG_SQLSTATE)), "postgres %s: %s", sql, msg);
    } else if (sql[0] == 'C' && strcmp(PQcmdStatus(res), "ROLLBACK") == 0) {
        rc = sy__store_fail(st, SY_STORE_EQUERY, "postgres: the transaction had failed and was rolled back");
    }
    PQclear(res);
    return rc;
}

static int pg_commit(struct sy_store *st)
{
    return pg_end(st, "COMMIT");
}

static int pg_rollback(struct sy_store *st)
{
    return pg_end(st, "ROLLBACK");
}

static void pg_close(struct sy_store *st)
{
    struct pg *p = (struct pg *)st;
    if (p->conn)
        PQfinish(p->conn);
    free(p->url);
    free(p);
}

static const struct sy__store_ops pg_ops = {
    .exec = pg_exec,
    .begin = pg_begin,
    .commit = pg_commit,
    .rollback = pg_rollback,
    .close = pg_close,
};

struct sy_store *sy__pg_open(const struct sy_store_conf *conf, char *err, size_t errlen)
{
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(conf->url, &perr);
    if (!opts) {
        snprintf(err, errlen, "postgres url: %s", perr ? perr : "out of memory");
        if (perr)
            PQfreemem(perr);
        return NULL;
    }
    PQconninfoFree(opts);
    struct pg *p = calloc(1, sizeof *p);
    if (!p || !(p->url = strdup(conf->url))) {
        free(p);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->super.ops = &pg_ops;
    p->super.kind = SY_STORE_POSTGRES;
    double ct = conf->connect_timeout_s > 0 ? conf->connect_timeout_s : 5;
    snprintf(p->connect_timeout, sizeof p->connect_timeout, "%d", ct < 2 ? 2 : (int)ceil(ct));
    connect_now(p); /* down is not an error: the next call retries */
    return &p->super;
}
