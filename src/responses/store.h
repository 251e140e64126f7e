/* store.h - stored Responses conversations, for models switchyard translates
 * (responses.h): what makes previous_response_id, GET /v1/responses/{id},
 * GET .../input_items and DELETE work when the deployment has no Responses
 * API of its own.
 *
 * One record per response made with store != false:
 *
 *   field        content
 *   id           the inner id "resp_<32 hex>" (the encoded id's response_id part)
 *   model_id     the deployment that answered (router model id)
 *   model        the model group the client asked for
 *   owner        the hashed virtual key that made it ("" when auth is off / master key)
 *   response     the response object JSON as the client got it
 *   input_items  JSON array: this request's input items (responses.h)
 *   history      JSON array: the items of the turns before this one (the previous
 *                record's history + input_items + output items), so one read gives
 *                the whole conversation
 *   created_at   unix seconds
 *
 * Where records live: a process-wide bounded in-memory table (written on the
 * loop before the client gets the answer's last byte, so a follow-up request
 * to this instance always finds it), and, when the database is on (SQLite by
 * default, PostgreSQL with database_url), the table "SwitchyardResponse"
 * (written by a DB thread, read by one on a memory miss: other instances
 * sharing the database find it there). Nothing here blocks a loop.
 *
 *   "SwitchyardResponse"(
 *     "id" TEXT PRIMARY KEY, "model_id" TEXT, "model" TEXT, "owner" TEXT,
 *     "response" JSONB, "input_items" JSONB, "history" JSONB,
 *     "created_at" TIMESTAMP(3))
 */
#ifndef SY_RESPONSES_STORE_H
#define SY_RESPONSES_STORE_H

#include <stddef.h>
#include <stdint.h>

struct sy_worker;
struct sy_db_port;

/* A field put as NULL is stored as NULL (SQL NULL) and comes back NULL; only
 * id is required. JSON read back from PostgreSQL is jsonb's rendering of the
 * same value (keys reordered, ", " / ": " spacing); SQLite and memory give the
 * text as it was put. created_at comes back from the database to the
 * millisecond. */
struct sy_rs_rec {
    char *id, *model_id, *model, *owner;
    char *response, *input_items, *history; /* NUL-terminated JSON texts */
    double created_at;
};

/* Process start / stop of the in-memory table (bounded: max_bytes of JSON
 * plus a small header per record, least recently used records dropped first;
 * they remain in the database; a record larger than max_bytes is kept only in
 * the database). Thread-safe, like every call here. Before sy_rs_init (and
 * after sy_rs_shutdown) memory is empty and puts to it are dropped. main.c
 * sizes it at 64 MB. */
void sy_rs_init(size_t max_bytes);
void sy_rs_shutdown(void);

/* Save a copy of rec (the caller keeps rec): into memory now (replacing a
 * record with the same id), into the database (when port != NULL and the
 * database is on) in the background: an upsert on id, whose failure is only
 * logged. */
void sy_rs_put(struct sy_db_port *port, const struct sy_rs_rec *rec);

/* Look id up: cb(ud, rc, rec) runs exactly once on the loop of port (or
 * before sy_rs_get returns, for a memory hit or when there is no database; a
 * record found in the database is put back into memory):
 * rc 0 with rec (owned by the callee: valid during cb only), 1 not found
 * (rec NULL), or a negative error (the database is down; rec NULL).
 * port may be NULL (memory only). */
typedef void (*sy_rs_cb)(void *ud, int rc, const struct sy_rs_rec *rec);
void sy_rs_get(struct sy_db_port *port, const char *id, sy_rs_cb cb, void *ud);

/* Delete id from memory and (in the background before cb) from the database;
 * cb as for sy_rs_get with rec NULL: rc 0 deleted (memory or the database had
 * it), 1 not found in either, < 0 the database DELETE failed (memory's copy
 * is gone all the same). */
void sy_rs_del(struct sy_db_port *port, const char *id, sy_rs_cb cb, void *ud);

/* Free a record's strings (for records built by the caller with malloc). */
void sy_rs_rec_free(struct sy_rs_rec *rec);

#endif
