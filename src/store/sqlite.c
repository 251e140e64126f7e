/* sqlite.c - the embedded backend of store.h, on libsqlite3.
 *
 * One struct sq is one sqlite3 connection, opened with
 *   journal_mode=WAL, synchronous=NORMAL, foreign_keys=OFF, busy_timeout
 * (several DB threads and several processes may share the file; WAL lets
 * readers run beside the one writer). Transactions start with BEGIN
 * IMMEDIATE, so a writer waits for the lock up front (busy_timeout) instead
 * of failing on the read-to-write upgrade.
 *
 * SQL arrives in PostgreSQL's parameter style ($1..$n); sy__sql_rewrite turns
 * it into ?1..?n once, when the statement is first prepared. Prepared
 * statements are cached per connection, keyed by the SQL text as given (the
 * spend writer runs the same INSERT thousands of times):
 *
 *   cache: hash(sql) % NBUCKET -> chain of {sql copy, stmt}
 *   at most MAXSTMT entries; when full the whole cache is finalized.
 *
 * Values read back follow the declared column type (store.h's table):
 *
 *   | declared type (upper case)        | kind        | storage needed    |
 *   |-----------------------------------|-------------|-------------------|
 *   | BOOLEAN                           | SY_SV_BOOL  | INTEGER (or text) |
 *   | TIMESTAMP                         | SY_SV_TS    | TEXT (normalised) |
 *   | JSONTEXT                          | SY_SV_JSON  | TEXT              |
 *   | DOUBLE PRECISION / REAL / FLOAT   | SY_SV_NUM   | REAL / INTEGER    |
 *   | INT* / BIGINT                     | SY_SV_INT   | INTEGER / REAL    |
 *   | anything else, or an expression   | by storage class (INTEGER→INT,  |
 *   |                                   | REAL→NUM, TEXT/BLOB→TEXT)        |
 *
 * A cell whose storage class does not fit its declared kind is read by its
 * storage class; NULL is always SY_SV_NULL.
 *
 * The count returned: rows changed (sqlite3_changes) for statements without
 * result columns; rows returned otherwise. When the callback stops early, a
 * read-only SELECT stops there (the count is the rows seen), while a
 * RETURNING statement is still stepped to the end (its writes must finish).
 *
 * Errors: SQLITE_CONSTRAINT_PRIMARYKEY / _UNIQUE → SY_STORE_ECONFLICT;
 * SQLITE_BUSY / _LOCKED (after busy_timeout), _CANTOPEN, _IOERR, _FULL →
 * SY_STORE_EDOWN; anything else → SY_STORE_EQUERY.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "store/store.h"
#include "store/store_impl.h"

#define NBUCKET 64
#define MAXSTMT 256

struct sq_stmt {
    struct sq_stmt *next;
    uint64_t hash;
    char *sql;
    sqlite3_stmt *stmt;
};

struct sq {
    struct sy_store super;
    sqlite3 *db;
    struct sq_stmt *bucket[NBUCKET];
    int nstmt;
};

/* ---- $N rewriting ------------------------------------------------------ */

int sy__sql_rewrite(const char *sql, size_t n, struct sy_buf *out)
{
    size_t i = 0, start = 0;
    while (i < n) {
        char c = sql[i];
        if (c == '\'' || c == '"' || c == '`' || c == '[') {
            char close = c == '[' ? ']' : c;
            i++;
            while (i < n) {
                if (sql[i] == close) {
                    if (close != ']' && i + 1 < n && sql[i + 1] == close) { /* doubled quote */
                        i += 2;
                        continue;
                    }
                    break;
                }
                i++;
            }
            if (i < n)
                i++;
        } else if (c == '-' && i + 1 < n && sql[i + 1] == '-') {
            while (i < n && sql[i] != '\n')
                i++;
        } else if (c == '/' && i + 1 < n && sql[i + 1] == '*') {
            i += 2;
            while (i < n && !(sql[i] == '*' && i + 1 < n && sql[i + 1] == '/'))
                i++;
            i = i + 2 <= n ? i + 2 : n;
        } else if (c == '$' && i + 1 < n && sql[i + 1] >= '0' && sql[i + 1] <= '9') {
            if (sy_buf_append(out, sql + start, i - start) || SY_BUF_LIT(out, "?"))
                return -1;
            i++;
            start = i; /* the digits are copied as they are */
        } else {
            i++;
        }
    }
    if (sy_buf_append(out, sql + start, n - start))
        return -1;
    if (!out->p && sy_buf_reserve(out, 1)) /* empty input: still a C string */
        return -1;
    return 0;
}

/* ---- errors ------------------------------------------------------------ */

static int fail_db(struct sq *q, const char *what)
{
    int x = sqlite3_extended_errcode(q->db), rc;
    switch (x & 0xff) {
    case SQLITE_CONSTRAINT:
        rc =
            (x == SQLITE_CONSTRAINT_PRIMARYKEY || x == SQLITE_CONSTRAINT_UNIQUE) ? SY_STORE_ECONFLICT : SY_STORE_EQUERY;
        break;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_FULL: rc = SY_STORE_EDOWN; break;
    default: rc = SY_STORE_EQUERY;
    }
    if (rc != SY_STORE_EDOWN)
        q->super.up = 1; /* the database answered */
    return sy__store_fail(&q->super, rc, "sqlite %s: %s", what, sqlite3_errmsg(q->db));
}

/* ---- statement cache --------------------------------------------------- */

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static void stmt_free(struct sq_stmt *e)
{
    sqlite3_finalize(e->stmt);
    free(e->sql);
    free(e);
}

static void cache_clear(struct sq *q)
{
    for (int b = 0; b < NBUCKET; b++) {
        struct sq_stmt *e = q->bucket[b], *next;
        for (; e; e = next) {
            next = e->next;
            stmt_free(e);
        }
        q->bucket[b] = NULL;
    }
    q->nstmt = 0;
}

static enum sy_sv_kind decl_kind(const char *t)
{
    if (!t)
        return SY_SV_NULL;
    if (!strcasecmp(t, "BOOLEAN") || !strcasecmp(t, "BOOL"))
        return SY_SV_BOOL;
    if (!strncasecmp(t, "TIMESTAMP", 9) || !strcasecmp(t, "DATETIME"))
        return SY_SV_TS;
    if (!strcasecmp(t, "JSONTEXT") || !strcasecmp(t, "JSON") || !strcasecmp(t, "JSONB"))
        return SY_SV_JSON;
    if (!strcasecmp(t, "DOUBLE PRECISION") || !strcasecmp(t, "DOUBLE") || !strcasecmp(t, "REAL") ||
        !strcasecmp(t, "FLOAT") || !strncasecmp(t, "NUMERIC", 7) || !strncasecmp(t, "DECIMAL", 7))
        return SY_SV_NUM;
    if (strcasestr(t, "INT"))
        return SY_SV_INT;
    return SY_SV_NULL;
}

/* The cached statement for sql, prepared on a miss; NULL on error (recorded). */
static struct sq_stmt *stmt_get(struct sq *q, const char *sql, int *rc)
{
    uint64_t h = fnv1a(sql);
    struct sq_stmt **head = &q->bucket[h % NBUCKET], *e;
    for (e = *head; e; e = e->next)
        if (e->hash == h && strcmp(e->sql, sql) == 0)
            return e;

    struct sy_buf b;
    sy_buf_init(&b, (size_t)1 << 26);
    if (sy__sql_rewrite(sql, strlen(sql), &b)) {
        sy_buf_free(&b);
        *rc = sy__store_fail(&q->super, SY_STORE_EQUERY, "statement too long");
        return NULL;
    }
    sqlite3_stmt *stmt = NULL;
    const char *tail = NULL;
    int x = sqlite3_prepare_v3(q->db, b.p, (int)b.len + 1, SQLITE_PREPARE_PERSISTENT, &stmt, &tail);
    if (x != SQLITE_OK) {
        sy_buf_free(&b);
        *rc = fail_db(q, "prepare");
        return NULL;
    }
    while (tail && (*tail == ' ' || *tail == '\n' || *tail == '\t' || *tail == '\r' || *tail == ';'))
        tail++;
    int multi = tail && *tail;
    sy_buf_free(&b);
    if (!stmt || multi) {
        sqlite3_finalize(stmt);
        *rc = sy__store_fail(&q->super, SY_STORE_EQUERY, multi ? "one statement per call" : "empty statement");
        return NULL;
    }
    if (q->nstmt >= MAXSTMT)
        cache_clear(q);
    e = calloc(1, sizeof *e);
    if (e)
        e->sql = strdup(sql);
    if (!e || !e->sql) {
        free(e);
        sqlite3_finalize(stmt);
        *rc = sy__store_fail(&q->super, SY_STORE_EQUERY, "out of memory");
        return NULL;
    }
    e->stmt = stmt;
    e->hash = h;
    head = &q->bucket[h % NBUCKET];
    e->next = *head;
    *head = e;
    q->nstmt++;
    return e;
}

/* ---- exec -------------------------------------------------------------- */

static int bind_all(struct sq *q, sqlite3_stmt *s, int nparams, const struct sy_sval *p)
{
    int max = sqlite3_bind_parameter_count(s);
    for (int i = 0; i < nparams && i < max; i++) {
        const struct sy_sval *v = &p[i];
        int x;
        switch (v->k) {
        case SY_SV_INT: x = sqlite3_bind_int64(s, i + 1, v->i); break;
        case SY_SV_BOOL: x = sqlite3_bind_int(s, i + 1, v->i ? 1 : 0); break;
        case SY_SV_NUM: x = sqlite3_bind_double(s, i + 1, v->d); break;
        case SY_SV_TEXT:
        case SY_SV_TS:
        case SY_SV_JSON:
        case SY_SV_TEXTARR:
            if (v->s) {
                x = sqlite3_bind_text64(s, i + 1, v->s, v->n, SQLITE_STATIC, SQLITE_UTF8);
                break;
            }
            /* fall through */
        case SY_SV_NULL:
        default: x = sqlite3_bind_null(s, i + 1); break;
        }
        if (x != SQLITE_OK)
            return fail_db(q, "bind");
    }
    return 0;
}

static void read_cell(sqlite3_stmt *s, int i, enum sy_sv_kind want, struct sy_sval *v, char ts[32])
{
    int t = sqlite3_column_type(s, i);
    memset(v, 0, sizeof *v);
    if (t == SQLITE_NULL) {
        v->k = SY_SV_NULL;
        return;
    }
    switch (want) {
    case SY_SV_BOOL:
        if (t == SQLITE_INTEGER || t == SQLITE_FLOAT) {
            v->k = SY_SV_BOOL;
            v->i = sqlite3_column_double(s, i) != 0;
            return;
        }
        if (t == SQLITE_TEXT) {
            const char *x = (const char *)sqlite3_column_text(s, i);
            if (x &&
                (!strcasecmp(x, "true") || !strcasecmp(x, "t") || !strcasecmp(x, "false") || !strcasecmp(x, "f"))) {
                v->k = SY_SV_BOOL;
                v->i = x[0] == 't' || x[0] == 'T';
                return;
            }
        }
        break;
    case SY_SV_TS:
        if (t == SQLITE_TEXT) {
            if (sy__ts_normalise((const char *)sqlite3_column_text(s, i), ts) == 0) {
                v->k = SY_SV_TS;
                v->s = ts;
                v->n = strlen(ts);
                return;
            }
        } else if (t == SQLITE_INTEGER || t == SQLITE_FLOAT) { /* unix seconds */
            sy_iso_time(sqlite3_column_double(s, i), ts);
            v->k = SY_SV_TS;
            v->s = ts;
            v->n = strlen(ts);
            return;
        }
        break;
    case SY_SV_JSON:
        if (t == SQLITE_TEXT) {
            v->k = SY_SV_JSON;
            v->s = (const char *)sqlite3_column_text(s, i);
            v->n = (size_t)sqlite3_column_bytes(s, i);
            return;
        }
        break;
    case SY_SV_NUM:
        if (t == SQLITE_INTEGER || t == SQLITE_FLOAT) {
            v->k = SY_SV_NUM;
            v->d = sqlite3_column_double(s, i);
            return;
        }
        break;
    case SY_SV_INT:
        if (t == SQLITE_INTEGER) {
            v->k = SY_SV_INT;
            v->i = sqlite3_column_int64(s, i);
            return;
        }
        if (t == SQLITE_FLOAT) {
            v->k = SY_SV_NUM; /* a fraction in an integer column: keep it */
            v->d = sqlite3_column_double(s, i);
            return;
        }
        break;
    default: break;
    }
    /* by storage class */
    switch (t) {
    case SQLITE_INTEGER:
        v->k = SY_SV_INT;
        v->i = sqlite3_column_int64(s, i);
        break;
    case SQLITE_FLOAT:
        v->k = SY_SV_NUM;
        v->d = sqlite3_column_double(s, i);
        break;
    default:
        v->k = SY_SV_TEXT;
        v->s = (const char *)sqlite3_column_text(s, i);
        v->n = (size_t)sqlite3_column_bytes(s, i);
        if (!v->s)
            v->s = "", v->n = 0;
        break;
    }
}

static int sq_exec(struct sy_store *st, const char *sql, int nparams, const struct sy_sval *params, sy_srow_cb cb,
                   void *ud)
{
    struct sq *q = (struct sq *)st;
    int rc = 0;
    struct sq_stmt *e = stmt_get(q, sql, &rc);
    if (!e)
        return rc;
    sqlite3_stmt *s = e->stmt;
    if ((rc = bind_all(q, s, nparams, params)) != 0)
        goto out;

    /* Column names and declared types are read after the first step: a
     * schema change re-prepares the statement inside sqlite3_step, and that
     * frees the previous names (and may change the columns). */
    struct sy_sval vstack[32];
    char tsstack[32][32];
    enum sy_sv_kind kstack[32];
    const char *nstack[32];
    struct sy_sval *v = vstack;
    char(*ts)[32] = tsstack;
    enum sy_sv_kind *kinds = kstack;
    const char **names = nstack;
    int rows = 0, stop = !cb, x, nc = 0;
    int readonly = sqlite3_stmt_readonly(s);
    while ((x = sqlite3_step(s)) == SQLITE_ROW) {
        rows++;
        if (stop) {
            if (readonly && cb)
                break; /* a SELECT the caller is done with */
            continue;  /* RETURNING: the statement must still finish */
        }
        if (rows == 1) {
            nc = sqlite3_column_count(s);
            if (nc > 32) {
                v = calloc((size_t)nc, sizeof *v);
                ts = calloc((size_t)nc, sizeof *ts);
                kinds = calloc((size_t)nc, sizeof *kinds);
                names = calloc((size_t)nc, sizeof *names);
                if (!v || !ts || !kinds || !names) {
                    x = SQLITE_NOMEM;
                    break;
                }
            }
            for (int i = 0; i < nc; i++) {
                kinds[i] = decl_kind(sqlite3_column_decltype(s, i));
                names[i] = sqlite3_column_name(s, i);
            }
        }
        for (int i = 0; i < nc; i++)
            read_cell(s, i, kinds[i], &v[i], ts[i]);
        struct sy_srow row = {nc, names, v};
        if (cb(ud, &row))
            stop = 1;
    }
    if (v != vstack) {
        free(v);
        free(ts);
        free(kinds);
        free(names);
    }
    if (x == SQLITE_NOMEM) {
        rc = sy__store_fail(st, SY_STORE_EQUERY, "out of memory");
        goto out;
    }
    if (x != SQLITE_ROW && x != SQLITE_DONE) {
        rc = fail_db(q, "step");
        goto out;
    }
    st->up = 1;
    rc = sqlite3_column_count(s) > 0 ? rows : sqlite3_changes(q->db);
out:
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return rc;
}

static int sq_simple(struct sy_store *st, const char *sql)
{
    int rc = sq_exec(st, sql, 0, NULL, NULL, NULL);
    return rc < 0 ? rc : 0;
}

static int sq_begin(struct sy_store *st)
{
    int rc = sq_simple(st, "BEGIN IMMEDIATE");
    if (rc == 0)
        st->in_tx = 1;
    return rc;
}

static int sq_commit(struct sy_store *st)
{
    int rc = sq_simple(st, "COMMIT");
    if (rc == 0)
        st->in_tx = 0;
    return rc;
}

static int sq_rollback(struct sy_store *st)
{
    struct sq *q = (struct sq *)st;
    st->in_tx = 0;
    if (sqlite3_get_autocommit(q->db))
        return 0; /* nothing open (SQLite rolled back itself) */
    return sq_simple(st, "ROLLBACK");
}

static void sq_close(struct sy_store *st)
{
    struct sq *q = (struct sq *)st;
    cache_clear(q);
    sqlite3_close_v2(q->db);
    free(q);
}

static const struct sy__store_ops sq_ops = {
    .exec = sq_exec,
    .begin = sq_begin,
    .commit = sq_commit,
    .rollback = sq_rollback,
    .close = sq_close,
};

/* "sqlite:///abs" -> "/abs", "sqlite://rel" -> "rel", else the string. */
static const char *sqlite_path(const char *url)
{
    if (strncmp(url, "sqlite://", 9) == 0)
        return url + 9;
    if (strncmp(url, "sqlite:", 7) == 0)
        return url + 7;
    return url;
}

struct sy_store *sy__sqlite_open(const struct sy_store_conf *conf, char *err, size_t errlen)
{
    const char *path = sqlite_path(conf->url);
    if (!*path) {
        snprintf(err, errlen, "sqlite: empty path in %s", conf->url);
        return NULL;
    }
    struct sq *q = calloc(1, sizeof *q);
    if (!q) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    q->super.ops = &sq_ops;
    q->super.kind = SY_STORE_SQLITE;
    int x = sqlite3_open_v2(path, &q->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (x != SQLITE_OK) {
        snprintf(err, errlen, "sqlite %s: %s", path, q->db ? sqlite3_errmsg(q->db) : sqlite3_errstr(x));
        sqlite3_close_v2(q->db);
        free(q);
        return NULL;
    }
    sqlite3_extended_result_codes(q->db, 1);
    double bt = conf->busy_timeout_s > 0 ? conf->busy_timeout_s : 5;
    sqlite3_busy_timeout(q->db, (int)(bt * 1000));
    static const char *const pragmas[] = {
        "PRAGMA journal_mode=WAL",
        "PRAGMA synchronous=NORMAL",
        "PRAGMA foreign_keys=OFF",
    };
    for (size_t i = 0; i < sizeof pragmas / sizeof pragmas[0]; i++) {
        char *msg = NULL;
        if (sqlite3_exec(q->db, pragmas[i], NULL, NULL, &msg) != SQLITE_OK) {
            snprintf(err, errlen, "sqlite %s: %s: %s", path, pragmas[i], msg ? msg : sqlite3_errmsg(q->db));
            sqlite3_free(msg);
            sqlite3_close_v2(q->db);
            free(q);
            return NULL;
        }
    }
    q->super.up = 1;
    return &q->super;
}
