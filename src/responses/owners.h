/* owners.h - who made the objects an upstream keeps for us: native Responses
 * (OpenAI / Azure / xAI response ids), files and batches created through the
 * gateway. The provider account is shared by every key of the gateway, so
 * without this record any key allowed on the group that knows an id could
 * read, continue or delete another tenant's object.
 *
 * One record per (kind, id), written when the gateway hands the id out:
 *
 *   "SwitchyardObject"(
 *     "kind" TEXT,          "response" | "file" | "batch"
 *     "id" TEXT,            the upstream's id (the inner id of an encoded response id)
 *     "token" TEXT,         the hashed virtual key (the master key's hash for the master key)
 *     "user_id" TEXT,       the key's user, or NULL
 *     "team_id" TEXT,       the key's team, or NULL (kept for audits; not used to grant access)
 *     "created_at" TIMESTAMP(3),
 *     PRIMARY KEY ("kind", "id"))
 *
 * The rule (LiteLLM's managed files and batches: created_by == the caller's
 * user_id, litellm/proxy/hooks/managed_files.py can_user_call_unified_*_id):
 * a caller may use a record when it is the same key, or when both keys belong
 * to the same non-empty user_id. Another key of the same team (another user,
 * or no user) may not; admins may use everything (the gateway checks that,
 * not this file). Unlike LiteLLM, two keys without a user do not share.
 *
 * Where records live: a small ring of the most recent puts in memory (so a
 * by-id call right after the create, on the same instance, finds the record
 * before the database INSERT has committed) and the database table (written
 * by a DB thread without waiting; read by one). Without a database there are
 * no virtual keys, so memory alone serves the master key / auth-off cases.
 * Thread-safe; nothing blocks a loop.
 */
#ifndef SY_RESPONSES_OWNERS_H
#define SY_RESPONSES_OWNERS_H

#include <stddef.h>

struct sy_db_port;

struct sy_own_rec {
    const char *kind, *id, *token, *user_id, *team_id; /* user_id, team_id may be NULL */
    double created_at;
};

/* 1 when who (token, user_id: NULL / "" for none) may use rec. */
int sy_own_allows(const struct sy_own_rec *rec, const char *token, const char *user_id);

/* Process start / stop of the memory ring (cap records, the oldest dropped). */
void sy_own_init(size_t cap);
void sy_own_shutdown(void);

/* Record rec (copied): into memory now, into the database in the background
 * when port != NULL and the database is on (an upsert: the first owner stays,
 * a later put of the same (kind, id) by another owner is ignored; a failure
 * is logged). rec->kind, rec->id, rec->token are required. */
void sy_own_put(struct sy_db_port *port, const struct sy_own_rec *rec);

/* Look (kind, id) up: cb(ud, rc, rec) exactly once, on port's loop (or before
 * sy_own_get returns for a memory hit / no database): rc 0 with rec (valid
 * during cb), 1 not recorded, < 0 the database failed. */
typedef void (*sy_own_cb)(void *ud, int rc, const struct sy_own_rec *rec);
void sy_own_get(struct sy_db_port *port, const char *kind, const char *id, sy_own_cb cb, void *ud);

/* The ids of kind that (token, user_id) may use (memory and database,
 * newest first, at most max): cb(ud, rc, ids, n) once on port's loop or
 * before it returns; ids (sorted with strcmp, for sy_own_has) valid during cb. */
typedef void (*sy_own_list_cb)(void *ud, int rc, char *const *ids, size_t n);
void sy_own_list(struct sy_db_port *port, const char *kind, const char *token, const char *user_id, size_t max,
                 sy_own_list_cb cb, void *ud);

/* 1 when id is in ids (sorted, n). */
int sy_own_has(char *const *ids, size_t n, const char *id);

#endif
