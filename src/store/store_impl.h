/* store_impl.h - what the store's files share: the backend vtable every
 * struct sy_store starts with, the schema model (schema.c) that migrate.c
 * turns into DDL, and the pure text converters (exposed for the fuzzer).
 *
 * A backend is a struct whose first member is struct sy_store (`super`), and
 * a const struct sy__store_ops with one slot per operation of store.h. The
 * front door (value.c) checks arguments, then calls the slot.
 */
#ifndef SY_STORE_IMPL_H
#define SY_STORE_IMPL_H

#include <stddef.h>

#include "core/buf.h"
#include "store/store.h"

struct sy__store_ops {
    /* run one statement (store.h sy_store_exec) */
    int (*exec)(struct sy_store *st, const char *sql, int nparams, const struct sy_sval *params, sy_srow_cb cb,
                void *ud);
    int (*begin)(struct sy_store *st);
    int (*commit)(struct sy_store *st);
    int (*rollback)(struct sy_store *st);
    void (*close)(struct sy_store *st); /* frees st */
};

struct sy_store {
    const struct sy__store_ops *ops;
    enum sy_store_kind kind;
    int up;        /* the last call reached the database */
    int in_tx;     /* between begin and commit/rollback */
    char err[512]; /* the last error message ("" after success) */
};

/* Record an error message (printf-style) and return rc. */
int sy__store_fail(struct sy_store *st, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Backends: open or NULL with err filled. */
struct sy_store *sy__sqlite_open(const struct sy_store_conf *conf, char *err, size_t errlen);
struct sy_store *sy__pg_open(const struct sy_store_conf *conf, char *err, size_t errlen);

/* ---- schema model (schema.c) ---------------------------------------------
 * One column as LiteLLM's pg_dump writes it: pgtype is the PostgreSQL type
 * ("text", "double precision", "timestamp(3) without time zone", "text[]",
 * "jsonb", ...), pgdef the DEFAULT expression or NULL. */
struct sy__col {
    const char *name;
    const char *pgtype;
    const char *pgdef;
    int notnull;
};
struct sy__table {
    const char *name;
    const struct sy__col *cols;
    int ncols;
    const char *pkey_name; /* constraint name on PostgreSQL */
    const char *pkey;      /* column list, e.g. "user_id, team_id" */
};
struct sy__index {
    const char *table;
    const char *name;
    int unique;
    const char *cols; /* column list or expression, as in the dump */
};
extern const struct sy__table sy__tables[];
extern const int sy__ntables;
extern const struct sy__index sy__indexes[];
extern const int sy__nindexes;
#define SY__SCHEMA_VERSION 1

/* The SQLite declared type / default for a PostgreSQL column (schema.c's
 * mapping table). sy__sqlite_default returns NULL for no default; *constant
 * is set to 0 when the default is an expression (SQLite cannot ADD COLUMN
 * with it). */
const char *sy__sqlite_type(const char *pgtype);
const char *sy__sqlite_default(const char *pgdef, int *constant);

/* ---- text converters --------------------------------------------------- */

/* Rewrite PostgreSQL parameters $N to SQLite's ?N, outside string literals
 * ('...'), quoted identifiers ("...", `...`, [...]) and comments. Appends the
 * result to out. 0, or -1 when out is full. */
int sy__sql_rewrite(const char *sql, size_t n, struct sy_buf *out);

/* Convert a PostgreSQL array literal (array_out text: {a,"b c",NULL},
 * nested {{..},{..}}, optional [l:u]= decoration) to a JSON array appended to
 * out. Element style: 0 strings, 1 numbers (elements that are valid JSON
 * numbers raw, others as strings), 2 booleans (t/f). NULL elements become
 * null. 0, or -1 when the literal is malformed (out is then undefined). */
int sy__pg_array_to_json(const char *s, size_t n, int style, struct sy_buf *out);

/* Convert a JSON array (strings, numbers, booleans, nulls; no nesting) to a
 * PostgreSQL array literal appended to out: every element double-quoted with
 * " and \ escaped; null -> NULL. 0, or -1 when json is not such an array. */
int sy__json_to_pg_array(const char *json, size_t n, struct sy_buf *out);

/* Normalise a timestamp as PostgreSQL or SQLite wrote it to ISO-8601 UTC
 * "YYYY-MM-DDTHH:MM:SS.mmmZ". 0, or -1 when it is not a timestamp. */
int sy__ts_normalise(const char *s, char out[32]);

#endif
