/* value.c - the store's front door and its values.
 *
 * - The public calls of store.h (sy_store_open, _exec, _begin, ...) check
 *   their arguments and dispatch to the backend's ops table (store_impl.h):
 *   sqlite.c or postgres.c, chosen from the URL.
 * - Parameter constructors (sy_sv_*), row readers (sy_srow_*), JSON output of
 *   cells and rows, and ISO-8601 time formatting / parsing.
 * - JSON output is valid UTF-8 whatever a cell holds: a row written before
 *   the management API validated its input, or by another program into a
 *   shared database, may hold bytes that are not UTF-8 (SQLite stores any
 *   bytes as TEXT; PostgreSQL only with a SQL_ASCII database). Each such byte
 *   becomes U+FFFD (core/utf8.h), in text cells and inside json / array
 *   cells alike.
 *
 * Times are UTC throughout: sy_iso_time formats "YYYY-MM-DDTHH:MM:SS.mmmZ",
 * sy_iso_parse reads that and the variants the two backends write
 * ("2026-01-01 00:00:00.4", "...+00", "...+05:30"). Calendar arithmetic is
 * done here (days_from_civil), so neither TZ nor the C library's timegm is
 * involved.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/pyrepr.h"
#include "core/utf8.h"
#include "store/store.h"
#include "store/store_impl.h"

/* ---- constructors ------------------------------------------------------ */

struct sy_sval sy_sv_text(const char *s)
{
    return s ? sy_sv_textn(s, strlen(s)) : sy_sv_null();
}

struct sy_sval sy_sv_textn(const char *s, size_t n)
{
    struct sy_sval v = {SY_SV_TEXT, s, n, 0, 0};
    if (!s)
        v.k = SY_SV_NULL, v.n = 0;
    return v;
}

struct sy_sval sy_sv_int(int64_t i)
{
    struct sy_sval v = {SY_SV_INT, NULL, 0, i, 0};
    return v;
}

struct sy_sval sy_sv_num(double d)
{
    struct sy_sval v = {SY_SV_NUM, NULL, 0, 0, d};
    return v;
}

struct sy_sval sy_sv_bool(int b)
{
    struct sy_sval v = {SY_SV_BOOL, NULL, 0, b ? 1 : 0, 0};
    return v;
}

static struct sy_sval textlike(enum sy_sv_kind k, const char *s)
{
    struct sy_sval v = sy_sv_text(s);
    if (s)
        v.k = k;
    return v;
}

struct sy_sval sy_sv_ts(const char *iso)
{
    return textlike(SY_SV_TS, iso);
}
struct sy_sval sy_sv_json(const char *json)
{
    return textlike(SY_SV_JSON, json);
}
struct sy_sval sy_sv_textarr(const char *json_array)
{
    return textlike(SY_SV_TEXTARR, json_array);
}

/* ---- rows -------------------------------------------------------------- */

const struct sy_sval *sy_srow_get(const struct sy_srow *r, const char *name)
{
    if (!r || !name)
        return NULL;
    for (int i = 0; i < r->ncols; i++)
        if (r->names[i] && strcmp(r->names[i], name) == 0)
            return &r->v[i];
    return NULL;
}

const char *sy_srow_text(const struct sy_srow *r, const char *name)
{
    const struct sy_sval *v = sy_srow_get(r, name);
    if (!v)
        return NULL;
    switch (v->k) {
    case SY_SV_TEXT:
    case SY_SV_TS:
    case SY_SV_JSON:
    case SY_SV_TEXTARR: return v->s;
    default: return NULL;
    }
}

double sy_srow_num(const struct sy_srow *r, const char *name, double fallback)
{
    const struct sy_sval *v = sy_srow_get(r, name);
    if (!v)
        return fallback;
    switch (v->k) {
    case SY_SV_NUM: return v->d;
    case SY_SV_INT:
    case SY_SV_BOOL: return (double)v->i;
    case SY_SV_TEXT: { /* e.g. a numeric the backend sent as text */
        char *end;
        if (!v->s || !v->n)
            return fallback;
        double d = strtod(v->s, &end);
        return end == v->s + v->n ? d : fallback;
    }
    default: return fallback;
    }
}

int64_t sy_srow_int(const struct sy_srow *r, const char *name, int64_t fallback)
{
    const struct sy_sval *v = sy_srow_get(r, name);
    if (!v)
        return fallback;
    switch (v->k) {
    case SY_SV_INT:
    case SY_SV_BOOL: return v->i;
    case SY_SV_NUM:
        if (!isfinite(v->d) || v->d >= 9.2e18 || v->d <= -9.2e18)
            return fallback;
        return (int64_t)v->d;
    case SY_SV_TEXT: {
        char *end;
        if (!v->s || !v->n)
            return fallback;
        long long i = strtoll(v->s, &end, 10);
        return end == v->s + v->n ? (int64_t)i : fallback;
    }
    default: return fallback;
    }
}

/* ---- JSON -------------------------------------------------------------- */

/* A float column as LiteLLM's JSON answers print it: json.dumps gives
 * Python's repr ("1000.0", "0.1", "1e-05"); null when not finite. */
static void json_num(struct sy_buf *b, double d)
{
    if (!isfinite(d)) {
        SY_BUF_LIT(b, "null");
        return;
    }
    sy_py_float_repr(b, d);
}

void sy_sval_json(struct sy_buf *b, const struct sy_sval *v)
{
    if (!v) {
        SY_BUF_LIT(b, "null");
        return;
    }
    switch (v->k) {
    case SY_SV_NULL: SY_BUF_LIT(b, "null"); break;
    case SY_SV_INT: sy_buf_printf(b, "%lld", (long long)v->i); break;
    case SY_SV_NUM: json_num(b, v->d); break;
    case SY_SV_BOOL:
        if (v->i)
            SY_BUF_LIT(b, "true");
        else
            SY_BUF_LIT(b, "false");
        break;
    case SY_SV_JSON:
    case SY_SV_TEXTARR:
        if (v->s && v->n)
            sy_utf8_json_raw(b, v->s, v->n);
        else
            SY_BUF_LIT(b, "null");
        break;
    case SY_SV_TEXT:
    case SY_SV_TS:
    default:
        SY_BUF_LIT(b, "\"");
        if (v->s)
            sy_utf8_json_escape(b, v->s, v->n);
        SY_BUF_LIT(b, "\"");
        break;
    }
}

void sy_srow_json(struct sy_buf *b, const struct sy_srow *r)
{
    SY_BUF_LIT(b, "{");
    for (int i = 0; r && i < r->ncols; i++) {
        const char *name = r->names[i] ? r->names[i] : "";
        if (i)
            SY_BUF_LIT(b, ",");
        SY_BUF_LIT(b, "\"");
        sy_utf8_json_escape(b, name, strlen(name));
        SY_BUF_LIT(b, "\":");
        sy_sval_json(b, &r->v[i]);
    }
    SY_BUF_LIT(b, "}");
}

/* ---- time -------------------------------------------------------------- */

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = (unsigned)(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

void sy_iso_time(double unix_s, char out[32])
{
    if (!isfinite(unix_s) || unix_s > 253402300799.0 || unix_s < -62167219200.0)
        unix_s = 0; /* outside years 0000..9999 */
    int64_t ms = llround(unix_s * 1000.0);
    int64_t secs = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    int msec = (int)(ms - secs * 1000);
    int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
    int64_t sod = secs - days * 86400;
    int64_t y;
    unsigned m, d;
    civil_from_days(days, &y, &m, &d);
    /* by hand: the spend writer formats three of these per row */
    int v[7] = {(int)y, (int)m, (int)d, (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60), msec};
    static const char seps[] = "--T::.Z";
    char *o = out;
    for (int i = 0; i < 7; i++) {
        int w = i == 0 ? 4 : i == 6 ? 3 : 2;
        for (int k = w - 1; k >= 0; k--, v[i] /= 10)
            o[k] = (char)('0' + v[i] % 10);
        o += w;
        *o++ = seps[i];
    }
    *o = 0;
}

static int digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

/* Parse into *out; 0 or -1 (sy_iso_parse's -1 is also a valid time). */
static int iso_parse(const char *s, double *out)
{
    int Y, M, D, h = 0, mi = 0, sec = 0;
    double frac = 0;
    if (!s || strnlen(s, 10) < 10 || digits(s, 4, &Y) || s[4] != '-' || digits(s + 5, 2, &M) || s[7] != '-' ||
        digits(s + 8, 2, &D))
        return -1;
    static const unsigned char mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (M < 1 || M > 12 || D < 1 || D > mdays[M - 1])
        return -1;
    int leap = (Y % 4 == 0 && Y % 100 != 0) || Y % 400 == 0;
    if (M == 2 && D == 29 && !leap)
        return -1;
    const char *p = s + 10;
    if (*p == 'T' || *p == 't' || *p == ' ') {
        p++;
        if (strnlen(p, 8) < 8 || digits(p, 2, &h) || p[2] != ':' || digits(p + 3, 2, &mi) || p[5] != ':' ||
            digits(p + 6, 2, &sec))
            return -1;
        if (h > 23 || mi > 59 || sec > 60)
            return -1;
        p += 8;
        if (*p == '.') {
            double scale = 0.1;
            p++;
            if (*p < '0' || *p > '9')
                return -1;
            while (*p >= '0' && *p <= '9') {
                frac += (*p - '0') * scale;
                scale /= 10;
                p++;
            }
        }
    } else if (*p) {
        return -1;
    }
    int off = 0; /* seconds east of UTC */
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p == '-' ? -1 : 1, oh, om = 0;
        p++;
        if (digits(p, 2, &oh))
            return -1;
        p += 2;
        if (*p == ':')
            p++;
        if (*p >= '0' && *p <= '9') {
            if (digits(p, 2, &om))
                return -1;
            p += 2;
        }
        if (oh > 23 || om > 59)
            return -1;
        off = sign * (oh * 3600 + om * 60);
    }
    if (*p)
        return -1;
    int64_t days = days_from_civil(Y, (unsigned)M, (unsigned)D);
    *out = (double)(days * 86400 + h * 3600 + mi * 60 + sec - off) + frac;
    return 0;
}

double sy_iso_parse(const char *s)
{
    double t;
    return iso_parse(s, &t) == 0 ? t : -1;
}

int sy__ts_normalise(const char *s, char out[32])
{
    /* fast path: already canonical */
    if (s && strlen(s) == 24 && s[10] == 'T' && s[19] == '.' && s[23] == 'Z') {
        memcpy(out, s, 25);
        return 0;
    }
    double t;
    if (iso_parse(s, &t))
        return -1;
    sy_iso_time(t, out);
    return 0;
}

/* ---- the front door ---------------------------------------------------- */

int sy__store_fail(struct sy_store *st, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->err, sizeof st->err, fmt, ap);
    va_end(ap);
    if (rc == SY_STORE_EDOWN)
        st->up = 0;
    return rc;
}

enum sy_store_kind sy_store_url_kind(const char *url)
{
    if (url && (strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0))
        return SY_STORE_POSTGRES;
    return SY_STORE_SQLITE;
}

struct sy_store *sy_store_open(const struct sy_store_conf *conf, char *err, size_t errlen)
{
    if (errlen)
        err[0] = 0;
    if (!conf || !conf->url || !conf->url[0]) {
        if (errlen)
            snprintf(err, errlen, "no database url");
        return NULL;
    }
    if (sy_store_url_kind(conf->url) == SY_STORE_POSTGRES)
        return sy__pg_open(conf, err, errlen);
    return sy__sqlite_open(conf, err, errlen);
}

void sy_store_close(struct sy_store *st)
{
    if (st)
        st->ops->close(st);
}

enum sy_store_kind sy_store_kind(const struct sy_store *st)
{
    return st->kind;
}

int sy_store_exec(struct sy_store *st, const char *sql, int nparams, const struct sy_sval *params, sy_srow_cb cb,
                  void *ud)
{
    if (!sql || nparams < 0 || (nparams && !params))
        return sy__store_fail(st, SY_STORE_EQUERY, "bad arguments");
    st->err[0] = 0;
    return st->ops->exec(st, sql, nparams, params, cb, ud);
}

const char *sy_store_errmsg(const struct sy_store *st)
{
    return st ? st->err : "no store";
}

int sy_store_begin(struct sy_store *st)
{
    st->err[0] = 0;
    return st->ops->begin(st);
}

int sy_store_commit(struct sy_store *st)
{
    st->err[0] = 0;
    return st->ops->commit(st);
}

int sy_store_rollback(struct sy_store *st)
{
    st->err[0] = 0;
    return st->ops->rollback(st);
}

int sy_store_up(const struct sy_store *st)
{
    return st ? st->up : 0;
}
