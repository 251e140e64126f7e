/* store.h - switchyard's database: one small interface, two backends.
 *
 * Keys, teams, users, budgets and spend live in LiteLLM's own tables
 * (reference/litellm.md §4.4): "LiteLLM_VerificationToken", "LiteLLM_TeamTable",
 * ... with Prisma's quoted identifiers. The embedded default is SQLite (WAL,
 * one file, created on first start); `general_settings.database_url` (or env
 * DATABASE_URL) naming PostgreSQL makes several instances share one database,
 * and an existing LiteLLM database is used as it is.
 *
 * One struct sy_store is one connection. It is used by one thread at a time
 * (the DB threads of store/dbpool.h); nothing here touches a libuv loop, and
 * every call may block (that is why it runs on DB threads, never on a loop).
 *
 * SQL is written once for both backends, in the common subset:
 *   - parameters are $1..$n (the SQLite backend rewrites them to ?1..?n);
 *   - identifiers are double-quoted as Prisma makes them ("startTime");
 *   - no date functions (times are passed as parameters, ISO-8601 text),
 *     no ILIKE (LOWER(x) LIKE LOWER($1)), no JSON operators; casts as
 *     CAST(x AS TEXT|BIGINT|DOUBLE PRECISION); upserts as
 *     INSERT ... ON CONFLICT (...) DO UPDATE SET x = "Table".x + EXCLUDED.x;
 *     RETURNING is fine (SQLite >= 3.35);
 *   - where the dialects must differ, branch on sy_store_kind().
 *
 * Column types and how values cross the interface:
 *
 *   | LiteLLM (PostgreSQL)   | SQLite declared type | sy_sval kind read back      |
 *   |------------------------|----------------------|-----------------------------|
 *   | TEXT                   | TEXT                 | SY_SV_TEXT                  |
 *   | DOUBLE PRECISION       | DOUBLE PRECISION     | SY_SV_NUM                   |
 *   | INTEGER / BIGINT       | BIGINT / INTEGER     | SY_SV_INT                   |
 *   | BOOLEAN                | BOOLEAN (0/1)        | SY_SV_BOOL                  |
 *   | TIMESTAMP(3)           | TIMESTAMP (ISO text) | SY_SV_TS  (s = ISO-8601 UTC, "2026-12-03T19:00:00.123Z") |
 *   | TEXT[]                 | JSONTEXT (JSON array)| SY_SV_JSON (s = JSON array text) |
 *   | JSONB / JSON           | JSONTEXT             | SY_SV_JSON (s = JSON text)  |
 *   | NULL                   | NULL                 | SY_SV_NULL                  |
 *
 * Parameters: SY_SV_TEXTARR takes a JSON array of strings (s) and binds it
 * as a text[] literal on PostgreSQL, as the JSON text on SQLite; SY_SV_JSON
 * binds JSON text (jsonb on PostgreSQL); SY_SV_TS binds ISO-8601 text;
 * SY_SV_BOOL binds true/false (1/0 on SQLite). PostgreSQL infers each
 * parameter's type from its use, so write `"max_budget" = $2`, not `$2 IS NULL`
 * (use CAST($2 AS TEXT) IS NULL when a bare parameter is needed).
 */
#ifndef SY_STORE_H
#define SY_STORE_H

#include <stddef.h>
#include <stdint.h>

enum sy_store_kind { SY_STORE_SQLITE = 1, SY_STORE_POSTGRES = 2 };

/* Where the database is: "postgresql://..." / "postgres://..." (libpq URI,
 * as LiteLLM's DATABASE_URL), "sqlite:///abs/path", "sqlite://rel/path" or a
 * plain file path (SQLite). */
struct sy_store_conf {
    const char *url;
    double connect_timeout_s; /* default 5 */
    double busy_timeout_s;    /* SQLite busy timeout, default 5 */
};

enum sy_sv_kind { SY_SV_NULL, SY_SV_TEXT, SY_SV_INT, SY_SV_NUM, SY_SV_BOOL, SY_SV_TS, SY_SV_JSON, SY_SV_TEXTARR };

/* One value: a parameter, or a cell of a result row. For TEXT, TS, JSON and
 * TEXTARR, s[0..n) holds the text (a result's text is NUL-terminated and valid
 * only during the row callback). */
struct sy_sval {
    enum sy_sv_kind k;
    const char *s;
    size_t n;
    int64_t i; /* INT, BOOL */
    double d;  /* NUM */
};

/* Parameter constructors. sy_sv_text(NULL) is NULL. */
static inline struct sy_sval sy_sv_null(void)
{
    struct sy_sval v = {SY_SV_NULL, 0, 0, 0, 0};
    return v;
}
struct sy_sval sy_sv_text(const char *s);
struct sy_sval sy_sv_textn(const char *s, size_t n);
struct sy_sval sy_sv_int(int64_t i);
struct sy_sval sy_sv_num(double d);
struct sy_sval sy_sv_bool(int b);
struct sy_sval sy_sv_ts(const char *iso);             /* NULL: SQL NULL */
struct sy_sval sy_sv_json(const char *json);          /* NULL: SQL NULL */
struct sy_sval sy_sv_textarr(const char *json_array); /* NULL: SQL NULL */

/* A result row: ncols cells, with their column names. */
struct sy_srow {
    int ncols;
    const char *const *names;
    const struct sy_sval *v;
};
/* Called once per row; return 0 to go on, non-zero to stop (the query still
 * succeeds). */
typedef int (*sy_srow_cb)(void *ud, const struct sy_srow *row);

/* Errors (negative). */
#define SY_STORE_EDOWN     -1 /* cannot reach the database (connection refused, lost, timed out) */
#define SY_STORE_ECONFLICT -2 /* unique / primary-key violation */
#define SY_STORE_EQUERY    -3 /* anything else (bad SQL, constraint, type) */

struct sy_store;

/* Open (connect) and return a connection, or NULL with a reason in err. A
 * PostgreSQL server that is down is not an error here: the connection is
 * returned DOWN and every call reconnects first (SY_STORE_EDOWN while down). */
struct sy_store *sy_store_open(const struct sy_store_conf *conf, char *err, size_t errlen);
void sy_store_close(struct sy_store *st);
enum sy_store_kind sy_store_kind(const struct sy_store *st);
/* The store URL kind without opening anything: SY_STORE_POSTGRES for
 * postgres(ql)://, else SY_STORE_SQLITE. */
enum sy_store_kind sy_store_url_kind(const char *url);

/* Run one statement. Returns the number of rows affected (UPDATE/INSERT/
 * DELETE) or returned (SELECT, RETURNING), or a negative SY_STORE_E*; the
 * message is in sy_store_errmsg(). A lost connection is retried once (after
 * a reconnect) when not inside a transaction. */
int sy_store_exec(struct sy_store *st, const char *sql, int nparams, const struct sy_sval *params, sy_srow_cb cb,
                  void *ud);
const char *sy_store_errmsg(const struct sy_store *st);

/* Transactions (BEGIN / COMMIT / ROLLBACK); 0 or a negative SY_STORE_E*. */
int sy_store_begin(struct sy_store *st);
int sy_store_commit(struct sy_store *st);
int sy_store_rollback(struct sy_store *st);

/* 1 when the last call reached the database. */
int sy_store_up(const struct sy_store *st);

/* Create the tables switchyard uses when missing, and add missing columns
 * switchyard needs to existing ones (never drops, renames or retypes
 * anything). On PostgreSQL the DDL is LiteLLM's own (same names, types and
 * defaults as its Prisma migrations), so a database created by switchyard can
 * be served by LiteLLM and the other way round. Idempotent; safe when several
 * instances start at once (PostgreSQL: an advisory lock). 0 or negative. */
int sy_store_migrate(struct sy_store *st);

/* Row helpers for callbacks: the cell named `name` (NULL when absent), and
 * typed reads that return fallback for NULL / absent cells. */
const struct sy_sval *sy_srow_get(const struct sy_srow *r, const char *name);
const char *sy_srow_text(const struct sy_srow *r, const char *name);              /* TEXT, TS, JSON text; NULL */
double sy_srow_num(const struct sy_srow *r, const char *name, double fallback);   /* NUM or INT */
int64_t sy_srow_int(const struct sy_srow *r, const char *name, int64_t fallback); /* INT, BOOL or NUM */

/* Write a cell as a JSON value (NULL -> null, TS -> "ISO", JSON raw, ...)
 * into b (core/buf.h), and a whole row as a JSON object {"col": value, ...}. */
struct sy_buf;
void sy_sval_json(struct sy_buf *b, const struct sy_sval *v);
void sy_srow_json(struct sy_buf *b, const struct sy_srow *r);

/* Time as ISO-8601 UTC with milliseconds ("2026-12-03T19:00:00.123Z");
 * out must hold 32 bytes. sy_iso_parse returns unix seconds, or -1. Accepts
 * "YYYY-MM-DD[T| ]HH:MM:SS[.fff][Z|+00:00]" as written by either backend. */
void sy_iso_time(double unix_s, char out[32]);
double sy_iso_parse(const char *s);

#endif
