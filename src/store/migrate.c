/* migrate.c - sy_store_migrate: make the database hold schema.c's tables.
 *
 * Additive only. On a database that already has a table (an existing LiteLLM
 * database, or an older switchyard one) nothing is dropped, renamed or
 * retyped; only what is missing is created:
 *
 *   1. lock       PostgreSQL: BEGIN + pg_advisory_xact_lock(SY_MIGRATE_LOCK), so
 *                 instances starting together run one after the other;
 *                 SQLite: BEGIN IMMEDIATE (the write lock).
 *   2. look       every (table, column) present: information_schema.columns
 *                 (current schema) / sqlite_master x pragma_table_info.
 *   3. tables     a table with no column present: CREATE TABLE IF NOT EXISTS,
 *                 LiteLLM's columns, types, defaults and primary key.
 *   4. columns    a table that exists but lacks columns (an older LiteLLM):
 *                 ADD COLUMN [IF NOT EXISTS] each, with its default; NOT NULL
 *                 only when it has a (constant) default, so existing rows fit.
 *   5. indexes    CREATE [UNIQUE] INDEX IF NOT EXISTS, LiteLLM's names. On a
 *                 table that existed before, a failing index (say duplicate
 *                 rows for a unique one) is a warning, not a failure
 *                 (PostgreSQL: inside a SAVEPOINT).
 *   6. version    "Switchyard_Meta" schema_version = SY__SCHEMA_VERSION (never
 *                 lowered), then COMMIT.
 *
 * Running it again finds everything present and changes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/log.h"
#include "store/store.h"
#include "store/store_impl.h"

#define SY_MIGRATE_LOCK 0x5377796172644d31LL /* "SwyardM1" */

/* The (table, column) pairs present, as "table\ncolumn\n" lines. */
static int collect_col(void *ud, const struct sy_srow *r)
{
    struct sy_buf *b = ud;
    const char *t = sy_srow_text(r, "table_name"), *c = sy_srow_text(r, "column_name");
    if (t && c)
        sy_buf_printf(b, "\n%s\n%s\n", t, c);
    return 0;
}

static int has_col(const struct sy_buf *b, const char *t, const char *c)
{
    char key[256];
    snprintf(key, sizeof key, "\n%s\n%s\n", t, c);
    return b->p && strstr(b->p, key) != NULL;
}

static int has_table(const struct sy_buf *b, const char *t)
{
    char key[160];
    snprintf(key, sizeof key, "\n%s\n", t);
    /* a table line is preceded by the previous entry's trailing \n */
    for (const char *p = b->p; p && (p = strstr(p, key)); p++) {
        if (p == b->p || p[-1] == '\n')
            return 1;
    }
    return 0;
}

static void col_ddl(struct sy_buf *b, enum sy_store_kind k, const struct sy__col *c, int adding)
{
    sy_buf_printf(b, "\"%s\" ", c->name);
    if (k == SY_STORE_POSTGRES) {
        sy_buf_puts(b, c->pgtype);
        if (c->pgdef)
            sy_buf_printf(b, " DEFAULT %s", c->pgdef);
        if (c->notnull && (!adding || c->pgdef))
            SY_BUF_LIT(b, " NOT NULL");
        return;
    }
    int constant;
    const char *d = sy__sqlite_default(c->pgdef, &constant);
    sy_buf_puts(b, sy__sqlite_type(c->pgtype));
    if (d && (constant || !adding))
        sy_buf_printf(b, " DEFAULT %s", d);
    if (c->notnull && (!adding || (d && constant)))
        SY_BUF_LIT(b, " NOT NULL");
}

static int run(struct sy_store *st, const char *sql)
{
    int rc = sy_store_exec(st, sql, 0, NULL, NULL, NULL);
    if (rc < 0)
        sy_error("store migrate: %s: %s", sy_store_errmsg(st), sql);
    return rc < 0 ? rc : 0;
}

static int read_version(void *ud, const struct sy_srow *r)
{
    const char *v = sy_srow_text(r, "value");
    *(int *)ud = v ? (int)strtol(v, NULL, 10) : 0;
    return 1;
}

static int migrate(struct sy_store *st, struct sy_buf *have, struct sy_buf *sql)
{
    enum sy_store_kind k = sy_store_kind(st);
    int rc;
    if (k == SY_STORE_POSTGRES) {
        sy_buf_reset(sql);
        sy_buf_printf(sql, "SELECT pg_advisory_xact_lock(%lld)", (long long)SY_MIGRATE_LOCK);
        if ((rc = run(st, sql->p)))
            return rc;
    }
    if ((rc = run(st, "CREATE TABLE IF NOT EXISTS \"Switchyard_Meta\" (\"key\" TEXT NOT NULL PRIMARY KEY, "
                      "\"value\" TEXT)")))
        return rc;

    const char *cols_sql = k == SY_STORE_POSTGRES
                               ? "SELECT CAST(table_name AS TEXT) AS table_name, CAST(column_name AS TEXT) AS "
                                 "column_name FROM information_schema.columns WHERE table_schema = current_schema()"
                               : "SELECT m.name AS table_name, p.name AS column_name FROM sqlite_master m, "
                                 "pragma_table_info(m.name) p WHERE m.type = 'table'";
    rc = sy_store_exec(st, cols_sql, 0, NULL, collect_col, have);
    if (rc < 0) {
        sy_error("store migrate: %s", sy_store_errmsg(st));
        return rc;
    }

    int existed[64] = {0}, created = 0, added = 0;
    for (int t = 0; t < sy__ntables && t < 64; t++) {
        const struct sy__table *tb = &sy__tables[t];
        existed[t] = has_table(have, tb->name);
        if (!existed[t]) {
            sy_buf_reset(sql);
            sy_buf_printf(sql, "CREATE TABLE IF NOT EXISTS \"%s\" (\n", tb->name);
            for (int c = 0; c < tb->ncols; c++) {
                SY_BUF_LIT(sql, "    ");
                col_ddl(sql, k, &tb->cols[c], 0);
                SY_BUF_LIT(sql, ",\n");
            }
            sy_buf_printf(sql, "    CONSTRAINT \"%s\" PRIMARY KEY (%s)\n)", tb->pkey_name, tb->pkey);
            if ((rc = run(st, sql->p)))
                return rc;
            created++;
            continue;
        }
        for (int c = 0; c < tb->ncols; c++) {
            if (has_col(have, tb->name, tb->cols[c].name))
                continue;
            sy_buf_reset(sql);
            sy_buf_printf(sql, "ALTER TABLE \"%s\" ADD COLUMN %s", tb->name,
                          k == SY_STORE_POSTGRES ? "IF NOT EXISTS " : "");
            col_ddl(sql, k, &tb->cols[c], 1);
            if ((rc = run(st, sql->p)))
                return rc;
            sy_info("store: added column %s.%s", tb->name, tb->cols[c].name);
            added++;
        }
    }

    for (int i = 0; i < sy__nindexes; i++) {
        const struct sy__index *ix = &sy__indexes[i];
        int pre = 0;
        for (int t = 0; t < sy__ntables && t < 64; t++)
            if (strcmp(sy__tables[t].name, ix->table) == 0)
                pre = existed[t];
        sy_buf_reset(sql);
        sy_buf_printf(sql, "CREATE %sINDEX IF NOT EXISTS \"%s\" ON \"%s\" (%s)", ix->unique ? "UNIQUE " : "", ix->name,
                      ix->table, ix->cols);
        if (!pre) {
            if ((rc = run(st, sql->p)))
                return rc;
            continue;
        }
        if (k == SY_STORE_POSTGRES && (rc = run(st, "SAVEPOINT sy_migrate_index")))
            return rc;
        rc = sy_store_exec(st, sql->p, 0, NULL, NULL, NULL);
        if (rc == SY_STORE_EDOWN)
            return rc;
        if (rc < 0) {
            sy_warn("store migrate: index %s not created: %s", ix->name, sy_store_errmsg(st));
            if (k == SY_STORE_POSTGRES && (rc = run(st, "ROLLBACK TO SAVEPOINT sy_migrate_index")))
                return rc;
        }
        if (k == SY_STORE_POSTGRES && (rc = run(st, "RELEASE SAVEPOINT sy_migrate_index")))
            return rc;
    }

    if (created || added)
        sy_info("store: %s schema: created %d tables, added %d columns", k == SY_STORE_POSTGRES ? "postgres" : "sqlite",
                created, added);
    int version = 0;
    rc = sy_store_exec(st, "SELECT \"value\" FROM \"Switchyard_Meta\" WHERE \"key\" = 'schema_version'", 0, NULL,
                       read_version, &version);
    if (rc < 0)
        return rc;
    if (version < SY__SCHEMA_VERSION) {
        char v[16];
        snprintf(v, sizeof v, "%d", SY__SCHEMA_VERSION);
        struct sy_sval p[1] = {sy_sv_text(v)};
        rc = sy_store_exec(st,
                           "INSERT INTO \"Switchyard_Meta\" (\"key\", \"value\") VALUES ('schema_version', $1) "
                           "ON CONFLICT (\"key\") DO UPDATE SET \"value\" = EXCLUDED.\"value\"",
                           1, p, NULL, NULL);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int sy_store_migrate(struct sy_store *st)
{
    struct sy_buf have, sql;
    sy_buf_init(&have, (size_t)1 << 26);
    sy_buf_init(&sql, (size_t)1 << 20);
    int rc = sy_store_begin(st);
    if (rc == 0) {
        rc = migrate(st, &have, &sql);
        if (rc == 0) {
            rc = sy_store_commit(st);
        } else {
            char keep[sizeof st->err];
            memcpy(keep, st->err, sizeof keep); /* report the cause, not the rollback */
            sy_store_rollback(st);
            memcpy(st->err, keep, sizeof keep);
        }
    }
    if (rc < 0 && rc != SY_STORE_EDOWN)
        sy_error("store migrate failed: %s", sy_store_errmsg(st));
    sy_buf_free(&have);
    sy_buf_free(&sql);
    return rc;
}
