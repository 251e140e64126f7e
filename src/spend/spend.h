/* spend.h - what a call costs, and where that cost goes.
 *
 *   prices.c   the price table: LiteLLM's model_prices_and_context_window.json
 *              field names; a table shipped with switchyard (data/model_prices.json,
 *              compiled in) plus an optional LiteLLM-format file from the config
 *   cost.c     cost of one call from its usage (LiteLLM's generic_cost_per_token)
 *   reserve.c  budget reservations: worst-case cost taken from each budgeted
 *              entity's spend in one DB transaction before the call, settled after
 *   writer.c   the spend writer thread: LiteLLM_SpendLogs rows, entity spend
 *              deltas and LiteLLM_Daily*Spend aggregates, batched off the request path
 *   reset.c    budget_duration resets (budget_reset_at), run by the writer
 */
#ifndef SY_SPEND_H
#define SY_SPEND_H

#include <stddef.h>
#include <stdint.h>

struct sy_store;

/* ---- prices ---------------------------------------------------------------
 * One model's entry. Every cost is USD per token; < 0 when the table does not
 * give it (cost.c falls back: cache read/write and reasoning at the input /
 * output price). */
struct sy_price {
    const char *key;              /* "gpt-4o", "anthropic/claude-...", as in the file */
    const char *litellm_provider; /* "openai", "anthropic", ... */
    const char *mode;             /* "chat", "embedding", "completion", ... */
    double input_cost_per_token;
    double output_cost_per_token;
    double cache_read_input_token_cost;
    double cache_creation_input_token_cost;
    double output_cost_per_reasoning_token;
    double cache_creation_input_token_cost_above_1hr; /* 1-hour cache writes (Anthropic's ttl "1h") */
    /* tiered pricing: above `tier_threshold` prompt tokens every rate switches
     * (input_cost_per_token_above_200k_tokens ...); 0 when none */
    int64_t tier_threshold;
    double tier_input, tier_output, tier_cache_read, tier_cache_write;
    double tier_cache_write_1h;   /* cache_creation_input_token_cost_above_1hr_above_<N>_tokens */
    double input_cost_per_pixel;  /* image generation (DALL-E's size-keyed entries); < 0 unknown */
    double output_cost_per_image; /* image generation, per image; < 0 unknown */
    int64_t max_input_tokens;     /* 0 unknown */
    int64_t max_output_tokens;    /* 0 unknown */
    int64_t max_tokens;           /* legacy field; 0 unknown */
    unsigned supports;            /* SY_SUPPORTS_* bits */
    int any_cost;                 /* some "*cost*" member is a number >= 0 (per token, image, second ...) */
    const char *json;             /* the entry as JSON text (for /model/info), NUL-terminated */
};
#define SY_SUPPORTS_FUNCTION_CALLING          0x01
#define SY_SUPPORTS_VISION                    0x02
#define SY_SUPPORTS_PROMPT_CACHING            0x04
#define SY_SUPPORTS_REASONING                 0x08
#define SY_SUPPORTS_RESPONSE_SCHEMA           0x10
#define SY_SUPPORTS_TOOL_CHOICE               0x20
#define SY_SUPPORTS_SYSTEM_MESSAGES           0x40
#define SY_SUPPORTS_PARALLEL_FUNCTION_CALLING 0x80
#define SY_SUPPORTS_WEB_SEARCH                0x100

/* Load the built-in table, then (when path is not NULL) a LiteLLM-format
 * JSON file whose entries override or add to it. 0, or -1 with err filled
 * (the built-in table stays loaded). Called once at start (and on SIGHUP:
 * the old table is kept alive; lookups are lock-free). */
int sy_prices_load(const char *path, char *err, size_t errlen);
/* The same over another base map: `map` (a LiteLLM-format file: what
 * LITELLM_MODEL_COST_MAP_URL names) replaces the built-in table as the base,
 * as LiteLLM replaces its model_cost; NULL keeps the built-in one. On error
 * the table in use stays and -1 is returned with err filled. */
int sy_prices_load_map(const char *map, const char *path, char *err, size_t errlen);
/* The map file LiteLLM's environment names: NULL for the built-in map
 * (LITELLM_LOCAL_MODEL_COST_MAP=True, LITELLM_MODEL_COST_MAP_URL unset, or an
 * http(s) URL, which is not fetched: then note says so); else the path of
 * LITELLM_MODEL_COST_MAP_URL (a path or a file:// URL). Read on every call
 * (start and SIGHUP). */
const char *sy_prices_env_map(char *note, size_t notelen);
/* Look up as LiteLLM does: "<provider>/<model>" first, then "<model>", then
 * the model with a provider prefix stripped ("openai/gpt-4o" -> "gpt-4o"),
 * then without a date suffix ("gpt-4o-2024-08-06" -> "gpt-4o"). provider may
 * be NULL. NULL when unknown. The pointer stays valid for the process. */
const struct sy_price *sy_price_find(const char *provider, const char *model);
/* 1 when the map entry sy_price_find(provider, model) finds has SY_SUPPORTS_*
 * bit `bit` set, 0 when it has not, -1 when the model is not in the map. */
int sy_price_supports(const char *provider, const char *model, unsigned bit);
size_t sy_prices_count(void);
/* The entry whose key is exactly `key` (no fallbacks), NULL when none. */
const struct sy_price *sy_price_exact(const char *key);
/* Iterate (for /model/info listings): the i-th entry, NULL past the end. */
const struct sy_price *sy_price_at(size_t i);
/* The models LiteLLM knows for a provider (its models_by_provider[provider]:
 * what a provider wildcard such as "openai/<star>" lists on /v1/models): the
 * entries whose litellm_provider is `provider`, with LiteLLM's merges and
 * exclusions (openai adds text-completion-openai and leaves out "ft:" keys;
 * the table in prices.c). fn(name) for each, in table order; name (the key,
 * for vertex_ai's partner families without "vertex_ai/") is valid while the
 * table is. Returns how many; 0 for an unknown provider. */
size_t sy_prices_provider_models(const char *provider, void (*fn)(const char *name, void *ctx), void *ctx);

/* ---- cost ------------------------------------------------------------------ */
struct sy_usage {
    uint64_t prompt_tokens;            /* all input tokens, cached ones included (OpenAI's convention) */
    uint64_t completion_tokens;        /* all output tokens, reasoning included */
    uint64_t cached_tokens;            /* prompt_tokens_details.cached_tokens / cache_read_input_tokens */
    uint64_t cache_creation_tokens;    /* cache_creation_input_tokens (5-minute and 1-hour writes) */
    uint64_t cache_creation_1h_tokens; /* the part of cache_creation_tokens written with a 1-hour TTL
                                          (Anthropic's cache_creation.ephemeral_1h_input_tokens) */
    uint64_t reasoning_tokens;         /* completion_tokens_details.reasoning_tokens */
};
/* Prices for one deployment: the table's entry with the deployment's own
 * litellm_params / model_info overrides (input_cost_per_token,
 * output_cost_per_token, cache_read_input_token_cost, ...) applied. */
struct sy_dprice {
    double in, out, cache_read, cache_write, reasoning; /* < 0 unknown */
    double cache_write_1h;                              /* cache_creation_input_token_cost_above_1hr */
    int64_t tier_threshold;
    double tier_in, tier_out, tier_cache_read, tier_cache_write, tier_cache_write_1h;
    int64_t max_output_tokens; /* 0 unknown */
    int64_t max_input_tokens;
    int known;  /* some price is known */
    int priced; /* the entry prices calls some way (any_cost: per image, second, character ... too) */
};
void sy_dprice_from(struct sy_dprice *dp, const struct sy_price *p); /* p may be NULL */
double sy_cost(const struct sy_dprice *dp, const struct sy_usage *u);
/* Image generation priced per image as LiteLLM's default_image_cost_calculator
 * (cost.c): size "1024x1024" (default) or "1024-x-1024", quality NULL or
 * "standard"/"hd"/"low"/"medium"/"high", n images. The entry is looked up as
 * "<quality>/<provider>/<size>/<model>", "<provider>/<size>/<model>",
 * "<quality>/<size>/<model>", "<size>/<model>", then `own` (the deployment's
 * entry, overrides applied); its output_cost_per_image x n, else
 * input_cost_per_pixel x width x height x n. -1 when no entry prices images
 * (then the usage, if any, prices the call). */
double sy_image_cost(const char *provider, const char *model, const char *size, const char *quality, int64_t n,
                     const struct sy_price *own);
/* Worst case before the call: prompt exactly, completion at max_tokens (or
 * the model's max_output_tokens; 4096 when unknown). */
double sy_cost_bound(const struct sy_dprice *dp, uint64_t prompt_tokens, int64_t max_tokens);

/* ---- reservations (reserve.c, on a DB thread) ------------------------------- */
enum sy_ent { SY_ENT_KEY, SY_ENT_USER, SY_ENT_TEAM, SY_ENT_MEMBER, SY_ENT_END_USER, SY_ENT_ORG, SY_ENT__COUNT };
const char *sy_ent_name(enum sy_ent e); /* "key", "user", "team", "team_member", "end_user", "organization" */

struct sy_reserve {
    const char *id[SY_ENT__COUNT]; /* NULL: entity absent or without a budget (member: "team_id\nuser_id") */
    double max_budget[SY_ENT__COUNT];
    double amount;       /* worst-case cost (or, topping up, the extra worst case) */
    const char *resv_id; /* the call's id: a "SwitchyardReservation" row per entity (NULL: none) */
    /* result */
    double taken[SY_ENT__COUNT]; /* reserved from each entity: min(amount, max_budget - spend) */
    int partial[SY_ENT__COUNT];  /* 1: this call holds the entity's one partial reservation (kept
                                  * across top-ups; the ledger's settle releases it) */
    int refused;                 /* 1: entity `refused_ent` has nothing left */
    enum sy_ent refused_ent;
    double current_spend; /* of the refused entity (reservations in flight included) */
};
/* The admit rule, shared by the database (reserve.c) and the ledger: with
 * `cur` = recorded spend + reservations in flight, admit while
 * cur < max_budget and take min(amount, max_budget - cur). Sequential callers
 * see LiteLLM's contract (a call is refused once recorded spend reaches the
 * budget); concurrent callers overshoot by at most one call per budget: a
 * reservation cut short of its worst case (partial) is taken only while no
 * other call holds one for that entity, so at most one call's excess over
 * its reservation is ever realised. Less than 1e-9 left counts
 * as nothing (float sums: 10 x 0.1 fills 1.0). Returns what to take, or -1
 * when refused. */
double sy_reserve_fit(double cur, double max_budget, double amount);
/* One transaction: for each present entity (in enum order, each row locked),
 * the admit rule above; all or nothing; with resv_id, one
 * "SwitchyardReservation" row per entity taken (owner: sy_reserve_owner())
 * in the same transaction, added to when it exists (a top-up). 0 (see
 * refused), or a negative SY_STORE_E*. */
int sy_reserve_take(struct sy_store *st, struct sy_reserve *r);
/* Group commit: rs[0..n) in one transaction, each in its own savepoint (a
 * refused one is undone alone). 0 (see each refused), or a negative
 * SY_STORE_E* for all of them. */
int sy_reserve_take_many(struct sy_store *st, struct sy_reserve *const *rs, size_t n);

/* ---- durable reservations (reserve.c): PostgreSQL ----------------------------
 * "SwitchyardReservation"(id, kind, ent_id, amount, owner, created_at), one
 * row per (call, entity) reservation, written with the spend it reserves and
 * deleted by the spend writer in the transaction that settles it; and
 * "SwitchyardInstance"(id, lease_until), one row per running instance,
 * renewed by its writer thread. Rows whose owner's lease has lapsed (the
 * instance died, or lost the database for longer than the lease) are
 * reclaimed by any instance: their amounts are subtracted from the entities'
 * spend and the rows deleted, in one transaction. */
const char *sy_reserve_owner(void); /* this process's instance id (random, made once) */
/* Renew this instance's lease for lease_s seconds. 0 or < 0. */
int sy_reserve_heartbeat(struct sy_store *st, double now_unix, double lease_s);
/* Reclaim the reservations older than lease_s of instances whose lease lapsed
 * before now, and those this instance marked with sy_reserve_in_doubt.
 * Returns rows reclaimed, or < 0. */
int sy_reserve_reclaim(struct sy_store *st, double now_unix, double lease_s);
/* Settle inside the writer's open transaction: delete the call's rows; 1
 * when they were there (the reserved amounts are still in spend), 0 when
 * reclaimed meanwhile (they are not: the whole cost is to be added), < 0. */
int sy_reserve_settle_in_tx(struct sy_store *st, const char *resv_id);
/* A reservation whose transaction failed with an unknown outcome: reclaim
 * it (if it was committed) at the next sy_reserve_reclaim. */
void sy_reserve_in_doubt(const char *resv_id);

/* ---- reservations in memory (ledger.c): the embedded (SQLite) store --------
 * One process per SQLite file, so the budget arithmetic is kept here: the
 * same all-or-nothing admit rule as sy_reserve_take, under one lock (fills
 * r->taken). spend[e] is the entity's spend as last loaded, used when the
 * ledger first sees it. */
int sy_ledger_reserve(struct sy_reserve *r, const double spend[SY_ENT__COUNT]);
/* The call ended: each entity present gets cost added and its reservation
 * (and its partial mark, partial[e]) released. */
void sy_ledger_settle(const char *const id[SY_ENT__COUNT], const double reserved[SY_ENT__COUNT],
                      const int partial[SY_ENT__COUNT], double cost);
/* Drop entries (re-read from the database on next use): kind e (< 0: all),
 * id (NULL: every id of that kind). Entries with requests in flight stay. */
void sy_ledger_forget(int e, const char *id);
/* PostgreSQL: add d[e] to each entity's credit - what its spend column will
 * lose when the writer commits calls that ended (reserved - cost; negative
 * when a call cost more than it reserved). reserve.c judges spend - credit. */
void sy_ledger_credit(const char *const id[SY_ENT__COUNT], const double d[SY_ENT__COUNT]);
double sy_ledger_credit_of(int e, const char *id);
/* PostgreSQL: calls of this instance that held the entity's partial
 * reservation and have ended, whose rows the writer has not deleted yet
 * (reserve.c does not count their marks as in flight). */
int sy_ledger_ended_partial(int e, const char *id);

/* ---- the spend writer (writer.c) ------------------------------------------- */
/* One finished request: a LiteLLM_SpendLogs row, and the spend it adds to
 * each entity. Strings are copied by sy_spend_record. */
struct sy_spend_rec {
    const char *request_id; /* provider response id or the call id */
    const char *call_type;  /* "acompletion", "aembedding", "atext_completion", "anthropic_messages" */
    const char *status;     /* "success" | "failure" */
    const char *api_key;    /* sha256 hex, "" for the master key / no auth */
    const char *key_alias;
    const char *user_id, *team_id, *org_id, *end_user;
    const char *model;    /* upstream model */
    const char *model_id; /* deployment id */
    const char *model_group;
    const char *custom_llm_provider;
    const char *api_base;
    const char *requester_ip;
    const char *metadata;                 /* JSON object text (SpendLogsMetadata), may be NULL */
    const char *request_tags;             /* JSON array text, may be NULL */
    const char *mcp_namespaced_tool_name; /* an MCP tool call's "<server>-<tool>" (stages/mcp.c); NULL otherwise */
    /* a failed call's metadata.error_information (LiteLLM's error_code, error_class,
     * error_message): the status sent, the exception class and message; NULL: none */
    const char *error_class, *error_message;
    int error_code;
    double spend;
    struct sy_usage usage;
    double start_s, end_s, completion_start_s; /* unix seconds */
    int cache_hit;
    const char *cache_key;    /* the response cache's key; NULL when caching is off ("Cache OFF") */
    const char *usage_source; /* "provider" | "counted" (our tokenizer) | NULL (no usage) */
    int stream_cut;           /* the client left mid-stream: billed for what was streamed */
    /* the guardrails that ran (stages/guardrails.c): a JSON array of LiteLLM's
     * StandardLoggingGuardrailInformation, written to the metadata's
     * guardrail_information (and its names to applied_guardrails); NULL: none
     * ran. Copied by sy_spend_record. */
    const char *guard_info;
    /* general_settings.store_prompts_in_spend_logs (prompts.c): the request body
     * and the answer the client got (SSE bytes when response_sse), copied by
     * sy_spend_record; NULL: the columns stay "{}" */
    const char *prompt;
    size_t prompt_len;
    const char *response;
    size_t response_len;
    int response_sse;
    /* settle: what was reserved from each entity before the call (0: nothing);
     * the writer adds spend - reserved[e] to that entity, spend to the others */
    double reserved[SY_ENT__COUNT];
    const char *resv_id;           /* reserved on PostgreSQL: the "SwitchyardReservation" rows to settle */
    unsigned partial_mask;         /* bit e: its reservation of entity e was the partial one */
    int has_entity[SY_ENT__COUNT]; /* 1: add to this entity (id known) */
};

/* The SpendLogs "proxy_server_request" and "response" columns of r as LiteLLM
 * writes them with store_prompts_in_spend_logs (long strings cut); "{}" for
 * what r does not carry. Writer thread. 0 or -1 (out of memory). */
struct sy_buf;
int sy_spend_prompt_columns(const struct sy_spend_rec *r, struct sy_buf *request, struct sy_buf *response);

/* PostgreSQL: the credit a record carries (reserved[e] - spend for each
 * entity it reserved from, and its ended partial marks) added with sign +1 (budget.c, the call ended) or
 * taken back with -1 (writer.c, before the COMMIT that settles it; +1 again
 * when that COMMIT failed). Records without resv_id carry none. */
void sy_spend_rec_credit(const struct sy_spend_rec *r, double sign);

struct sy_spend_conf {
    double batch_interval_s; /* general_settings.proxy_batch_write_at (default 1) */
    size_t max_queue; /* rows held while the DB is down (default 100000); past it rows are dropped, counted, logged */
    int disable_spend_logs;  /* general_settings.disable_spend_logs: entity spend still written, no SpendLogs rows */
    int disable_error_logs;  /* general_settings.disable_error_logs: no SpendLogs rows for failures (status != success)
                              */
    double reset_interval_s; /* budget reset check (default 60) */
};
/* Start the writer thread (needs the DB pool). 0 or -1. */
int sy_spend_start(const struct sy_spend_conf *conf);
/* Queue one record; never blocks on the DB (a short mutex). Returns 0, or -1
 * when the queue is full (the record is dropped and counted). */
int sy_spend_record(const struct sy_spend_rec *r);
/* 1 while the writer is behind (rows pending over half of max_queue) and its
 * database answers: new calls should wait (writer.c, "Backpressure"). */
int sy_spend_backlogged(void);
/* A call admitted (+1) will queue a row; -1 when it has ended. */
void sy_spend_admit(int delta);
/* Flush everything queued, then stop the thread (SIGTERM path). Waits at
 * most timeout_s for a DB that is down; what is left is logged with its count. */
void sy_spend_stop(double timeout_s);
/* Counters for /metrics and tests. */
struct sy_spend_stats {
    uint64_t queued, written, dropped, batches, failures;
    size_t pending;
};
void sy_spend_stats(struct sy_spend_stats *out);
/* Force a flush now and wait for it (tests, /spend/logs reading its own writes). */
void sy_spend_flush(void);

/* Called by the writer thread (on that thread) after a budget reset changed
 * rows, so caches holding spend can be invalidated. Set once before
 * sy_spend_start; NULL means no hook. */
extern void (*sy_spend_on_reset)(void);

/* ---- spend-log retention (retention.c) --------------------------------------
 * general_settings.maximum_spend_logs_retention_period / _interval: old
 * "LiteLLM_SpendLogs" rows deleted in bounded batches by a thread of its own,
 * one instance at a time (PostgreSQL: an advisory lock). */
#define SY_RETENTION_BATCH       1000               /* rows per DELETE (LiteLLM's batch_size) */
#define SY_RETENTION_MAX_BATCHES 100                /* per run (LiteLLM's cap); the rest waits for the next */
#define SY_RETENTION_BUSY        (-100)             /* another instance holds the lock: run skipped */
#define SY_RETENTION_LOCK_KEY    0x5359524554454eLL /* PostgreSQL advisory lock ("SYRETEN") */
struct sy_retention_conf {
    double period_s;      /* rows whose startTime is older than now - period_s go; <= 0: keep forever */
    double interval_s;    /* between runs (default 86400); the first run is one interval after start */
    size_t batch;         /* 0: SY_RETENTION_BATCH */
    unsigned max_batches; /* 0: SY_RETENTION_MAX_BATCHES */
    double pause_s;       /* between batches */
};
/* Start the retention thread (needs the DB pool's configuration); no thread
 * when period_s <= 0. 0 or -1. */
int sy_retention_start(const struct sy_retention_conf *conf);
/* Stop it (at once: a run in progress ends after its current batch). */
void sy_retention_stop(void);
/* One run on st (the thread's; tests): rows deleted, SY_RETENTION_BUSY, or a
 * negative SY_STORE_E* when the first batch failed. */
long sy_retention_run(struct sy_store *st, const struct sy_retention_conf *conf, double now_unix);
struct sy_retention_stats {
    uint64_t runs, deleted, skipped, failures;
    double last_run_unix;
};
void sy_retention_stats(struct sy_retention_stats *out);
/* Append the Prometheus series (switchyard_spend_logs_retention_deleted_total,
 * switchyard_spend_logs_retention_runs_total{result}) once the job was started. */
struct sy_buf;
void sy_retention_render_metrics(struct sy_buf *b);

/* Budget resets (reset.c, on a DB connection): rows whose budget_reset_at has
 * passed get spend 0 and the next reset time. Returns rows reset, or < 0. */
int sy_budget_reset_due(struct sy_store *st, double now_unix);
/* Next reset time for a duration ("30s", "30m", "30h", "30d", "1mo") from
 * now; -1 when the text is not a duration. */
double sy_duration_next(const char *duration, double now_unix);
/* Seconds in a duration ("1mo" = 30 days), -1 when invalid. */
double sy_duration_seconds(const char *duration);

#endif
