/* gateway.h - switchyard's request path: compiled config, workers, calls.
 *
 * A config snapshot (config/config.h) is compiled once per load into a
 * sy_gwconf: model groups with their deployments' resolved upstream URLs and
 * auth headers, and for each route a flat array of only the stages enabled by
 * that config (DESIGN §1, "build, don't check"). Workers hold a reference to
 * the current sy_gwconf; each request takes one too, so SIGHUP can swap the
 * config under in-flight requests.
 */
#ifndef SY_GATEWAY_H
#define SY_GATEWAY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "config/config.h"
#include "core/buf.h"
#include "core/str.h"
#include "gateway/jscan.h"
#include "providers/provider.h"
#include "router/rng.h"
#include "router/router.h"
#include "router/sync.h"
#include "router/table.h"
#include "spend/spend.h"

struct sy_req;
struct sy_call;
struct sy_worker;
struct sy_ureq;
struct sy_redis;
struct sy_xcall;
struct sy_adapter;
struct sy_pconf;
struct sy_keyinfo;
struct sy_enduser;
struct sy_db_port;
struct sy_admin_route;
struct sy_rcall;
struct sy_fchain;
struct sy_filter_routes;
struct sy_ptfwd_state;

/* What a route does once its stages have run. */
enum sy_route_kind {
    SY_RK_CHAT,
    SY_RK_COMPLETIONS,
    SY_RK_EMBEDDINGS,
    SY_RK_RESPONSES, /* POST /v1/responses: native or translated (gateway/responses.c, xlate.c) */
    SY_RK_PASSTHRU,  /* images, audio, moderations, rerank: bytes to an OpenAI-compatible deployment (passthru.c) */
    SY_RK_MESSAGES,  /* POST /v1/messages: Anthropic format in and out (gateway/messages.c) */
    SY_RK_MESSAGES_COUNT, /* POST /v1/messages/count_tokens */
    SY_RK_MODELS,
    SY_RK_MODEL_ONE,
    SY_RK_LIVENESS,
    SY_RK_READINESS,
    SY_RK_METRICS,
    SY_RK_TOKEN_COUNTER,
    SY_RK_HEALTH,        /* GET /health: one cheap call per deployment (stages/health.c) */
    SY_RK_ADMIN,         /* the management API (admin/): key, user, team, spend ... routes */
    SY_RK_CACHE_ADMIN,   /* /cache/ping, /cache/delete, /cache/flushall (stages/cachectl.c) */
    SY_RK_RESPONSES_ID,  /* GET|DELETE /v1/responses/{id}[/input_items], POST .../cancel (gateway/responses.c) */
    SY_RK_FILES,         /* /v1/files*, /v1/batches* (gateway/passthru.c) */
    SY_RK_ROUTES,        /* GET /routes: the served routes (pipeline.c sy_routes_json) */
    SY_RK_ROOT,          /* GET /: what this server is and its main endpoints (stages/root.c) */
    SY_RK_PROVIDER,      /* /anthropic/..., /vertex_ai/..., ... and pass_through_endpoints, any method (ptfwd.c) */
    SY_RK_PROVIDER_OPEN, /* a pass_through_endpoints entry with auth: false */
    SY_RK_GUARDRAILS,    /* GET /guardrails/list (stages/guardrails.c) */
    SY_RK_MCP,           /* POST|GET|DELETE /mcp, /{alias}/mcp: MCP streamable HTTP (stages/mcp.c) */
    SY_RK_MCP_SSE,  /* GET /sse, /mcp/sse (the old SSE transport's stream), POST its message endpoint (stages/mcp_sse.c)
                     */
    SY_RK_MCP_REST, /* GET /mcp-rest/tools/list, POST /mcp-rest/tools/call (stages/mcp.c) */
    SY_RK_UI,       /* GET /ui and below, POST /login, POST /logout: the admin UI (stages/ui.c) */
    SY_RK__COUNT
};

/* Routes that call an LLM (metrics, in-flight gauge, upstream stage). */
#define SY_RK_IS_LLM(k) ((k) <= SY_RK_MESSAGES)

/* A stage's hooks (gateway/stage.h has the descriptor). run returns SY_OK
 * (next stage), SY_AGAIN (suspended: sy_call_resume() continues it) or
 * SY_DONE (the response was sent). */
typedef int (*sy_stage_fn)(struct sy_call *c);
typedef void (*sy_finish_fn)(struct sy_call *c, int status);
typedef void (*sy_headers_fn)(const struct sy_call *c, struct sy_buf *b);
/* A fallback is about to call c->group: SY_OK go on; SY_AGAIN then(c) follows
 * (or the call was answered); SY_DONE refused (the answer was sent). */
typedef int (*sy_fallback_fn)(struct sy_call *c, void (*then)(struct sy_call *));
/* A whole 2xx JSON answer (the client's dialect, in body) is about to be sent:
 * SY_OK send it (the hook may have rewritten body), SY_AGAIN the hook goes on
 * later and calls sy_call_answer_resume, SY_DONE the hook answered (an error). */
typedef int (*sy_answer_fn)(struct sy_call *c, struct sy_buf *body);

/* A route's pipeline: the stage list (src/stages/list.def) flattened at load
 * to the stages the config enables for the route (gwconf.c build_pipelines),
 * in list order, in arrays sized by count (one malloc'd block, freed with
 * the sy_gwconf). */
struct sy_pipeline {
    sy_stage_fn *run;   /* n: the run loop (pipeline.c) */
    const char **names; /* n: their names, for --check-config */
    unsigned n;
    unsigned nfinish, nheaders;
    sy_finish_fn *finish;     /* sy_call_account */
    sy_headers_fn *headers;   /* sy_call_headers */
    sy_fallback_fn *fallback; /* sy_call_fallback */
    unsigned nfallback;
    sy_answer_fn *answer; /* sy_call_answer */
    unsigned nanswer;
    void *mem; /* the block the arrays live in */
};

struct sy_gwconf {
    atomic_int refs;
    /* The model table (router/table.h): cfg, drts, groups, rc, wild, aliases.
     * The router and the management API are handed &g->table; the engine may
     * name the members directly (g->groups), the same storage. */
    union {
        struct sy_table table;
        struct {
            SY_TABLE_MEMBERS
        };
    };
    struct sy_pipeline routes[SY_RK__COUNT];
    const char *master_key;
    size_t master_key_len;
    int num_retries;
    size_t max_body;
    const char *cors_origins; /* interned for the process lifetime (NULL = any origin) */
    char *models_json;        /* GET /v1/models body, prebuilt */
    size_t models_json_len;
    int db;                           /* the database is on (keys, spend): store/dbpool.h */
    int keys;                         /* virtual keys are checked (auth on and a database) */
    struct sy_filter_routes *filters; /* each route's response filters (gateway/filter.h) */
    void **sconf;                     /* the stages' per-config state (stage.h conf_build), by list index */
};

/* Compile a loaded config; logs warnings (unsupported providers...). Takes
 * over the caller's reference to cfg. NULL on error (err filled). */
struct sy_gwconf *sy_gwconf_build(struct sy_config *cfg, char *err, size_t errlen);
void sy_gwconf_ref(struct sy_gwconf *g);
void sy_gwconf_unref(struct sy_gwconf *g);
/* The model table's lookups (router/table.h) on a compiled config. */
static inline const struct sy_group *sy_gwconf_group(const struct sy_gwconf *g, const char *name, size_t len)
{
    return sy_table_group(&g->table, name, len);
}
/* The group deployment d belongs to (NULL: none). Linear: for by-id and files routes, not per chunk. */
static inline const struct sy_group *sy_gwconf_group_of(const struct sy_gwconf *g, const struct sy_drt *d)
{
    return sy_table_group_of(&g->table, d);
}
/* Print the per-route pipelines (for --check-config). */
void sy_gwconf_print(const struct sy_gwconf *g, FILE *out);

/* One worker thread: loop, server, upstream pool, metrics shard. */
struct sy_worker {
    int id;
    uv_loop_t loop;
    uv_thread_t thread;
    uv_async_t wake; /* config swap / drain requests */
    struct sy_server *server;
    struct sy_upool *upool;
    struct sy_metrics_shard *metrics;
    struct sy_redis *redis;    /* NULL without Redis (redis/redis.h) */
    struct sy_db_port *dbport; /* completions of DB work (store/dbpool.h); NULL without a database */
    struct sy_rsync rsync;     /* the router's Redis sharing (router/sync.h): redis, metrics; worker 0's timer */
    struct sy_gwconf *conf;    /* current (owned reference) */
    struct sy_gwconf *_Atomic pending; /* next config, set by the main thread */
    atomic_int drain_requested;
    int draining;
    uv_timer_t drain_timer;
    struct sy_rng rng; /* router/rng.h: strategies, retry jitter (seeded at start) */
    size_t inflight;
    const char *host;
    int port;
    int listen_rc;
    uv_sem_t ready;
};

/* Per-request state (lives in the request's arena). What every stage and the
 * attempt machine read is here, in groups by subject; what belongs to one
 * stage or filter is in its slot (gateway/slot.h). */

/* What the client asked: the route matched and the body's members read. */
struct sy_call_in {
    struct sy_str route_path; /* matched route, for metrics */
    int route_is_literal;     /* route_path is a NUL-terminated literal of the route table */
    struct sy_str path_model; /* /openai/deployments/{model}/..., /v1/models/{id} */
    struct sy_jscan scan;
    char *model; /* requested model group (decoded) */
    int stream;
    int include_usage;
};

/* The request's router keys (stages/route.c), read once. */
struct sy_call_opts {
    int num_retries_req;       /* body num_retries / x-litellm-num-retries; < 0 none */
    double timeout_req;        /* body timeout / x-litellm-timeout; < 0 none */
    double stream_timeout_req; /* body stream_timeout / x-litellm-stream-timeout; < 0 none */
    int disable_fallbacks;
    int mock_testing_fallbacks; /* body mock_testing_fallbacks: true (LiteLLM's test hook) */
    int mock_rate_limit;        /* body mock_testing_rate_limit_error: true (first attempt fails with 429) */
    int mock_timeout;           /* body mock_timeout: true (every attempt times out) */
    struct sy_rfilter rf;       /* tags and end-user region the router filters by (router/select.c) */
    const char **fb_req;        /* body fallbacks (group names); NULL: the config's */
    size_t nfb_req;
    const char *fwd_body; /* body to forward when router keys were stripped (arena), else NULL */
    size_t fwd_len;
    struct sy_jspan fwd_model; /* model span in fwd_body */
};

/* The attempt machine's progress (proxy.c, router/): retries, fallbacks, timeouts. */
struct sy_call_progress {
    int mock_failing;     /* the failure being handled is a mock one (no SDK retries) */
    int max_retries;      /* retries allowed in the group of the last failure (x-litellm-max-retries); < 0 none */
    int fb_kind;          /* fallback list in use: -1 none yet, else index into group->fb */
    size_t fb_next;       /* next fallback to try */
    int fallbacks_done;   /* fallback groups tried */
    int retries_in_group; /* retries made in the current group */
    int retries_total;
    int sdk_retries;          /* litellm_params.max_retries used on the current deployment */
    int64_t input_tokens;     /* prompt tokens when counted for routing; < 0 unknown */
    int input_is_bound;       /* input_tokens is an upper bound (the body's length), not a count */
    int attempt_open;         /* an attempt holds drt->st->inflight */
    int err_status;           /* last attempt's failure */
    int err_class;            /* enum sy_exc_class of it */
    const char *fb_exc_class; /* exception class that triggered the first fallback */
    int fb_status;
    int reserving;                              /* waiting for Redis to reserve the rpm slot */
    int reserve_skips;                          /* picks refused by the fleet's rpm */
    double eff_timeout_s, eff_stream_timeout_s; /* timeouts of the attempt in progress */
    unsigned fb_hook;                           /* sy_call_fallback: next stage fallback hook */
    void (*fb_then)(struct sy_call *);          /* ... and what follows them */
    int attempt;
    double retry_after_s;
    uv_timer_t *retry_timer;
};

/* The upstream exchange of the attempt in progress. */
struct sy_call_upstream {
    struct sy_ureq *ureq;
    uv_buf_t body_parts[3];
    int up_status;
    struct sy_buf up_body;  /* non-stream response / error body */
    int up_body_over;       /* an error body was cut at its cap (this attempt) */
    const char *up_headers; /* provider response headers to echo (proxy.c), "Name: v\r\n"... */
    size_t up_headers_len;
    char retry_after_hdr[32];
    uint64_t t_up_start, t_up_first, t_up_end;
    int sse_pending;    /* a 2xx stream whose head waits for its first body byte */
    char up_ctype[128]; /* raw: the upstream's Content-Type */
    int paused;         /* reading from the upstream is paused (client backpressure) */
};

/* What the call used and costs. */
struct sy_call_usage {
    uint64_t prompt_tokens, completion_tokens;
    uint64_t cached_tokens, cache_write_tokens, reasoning_tokens; /* parts of the two above priced apart */
    uint64_t cache_write_1h_tokens;                               /* the 1-hour part of cache_write_tokens */
    int have_usage;
    int usage_counted; /* usage came from our tokenizer, not the upstream */
    double cost;       /* the call's cost in USD once known */
    int cost_known;
    /* Earlier rounds of a call a stage sent again (sy_call_redo): their usage
     * and cost, folded into the fields above when the call is accounted. */
    unsigned rounds; /* rounds carried (0: the call went upstream once) */
    uint64_t carry_prompt, carry_completion, carry_cached, carry_cache_write, carry_cache_write_1h, carry_reasoning;
    double carry_cost;
    int carry_cost_known;
};

/* The call's upstream attempts (proxy.c) for the logging callbacks: recorded
 * only when the log stage asks (on), in the arena, at most
 * SY_CALL_MAX_ATTEMPTS (later ones counted in dropped). An attempt still open
 * when the call ends (the client left, an in-process answer) has t_end 0. */
#define SY_CALL_MAX_ATTEMPTS 16
struct sy_call_attempt {
    const struct sy_drt *drt;
    uint64_t t_start, t_end; /* monotonic ns */
    int status;              /* the upstream's HTTP status; 0: no answer (timeout, connection error) */
    const char *error;       /* LiteLLM exception class of a failed attempt; NULL: it succeeded */
};
struct sy_call_attempts {
    struct sy_call_attempt *a; /* NULL until the first attempt */
    unsigned n, dropped;
    unsigned char on, open; /* recording; the last one is in progress */
};

/* A stream's writer: a stage that must see, hold or rewrite a stream's bytes
 * before the client gets them (guardrails) sets c->out.wr before the stream
 * starts. Every piece the client would get goes to write(), which passes on
 * what goes out now with sy_call_out_bytes (same costed flag), and may end
 * the stream with an error through sy_call_stream_block. At the stream's end
 * end() says whether bytes are still held: SY_OK none, SY_AGAIN then(c)
 * follows once they went out (or a block was recorded). */
struct sy_owriter {
    size_t (*write)(struct sy_call *c, const char *p, size_t n, int costed);
    int (*end)(struct sy_call *c, void (*then)(struct sy_call *));
};

/* The answer as the client gets it. */
struct sy_call_out {
    const struct sy_owriter *wr; /* the stream's writer (a stage's); NULL: bytes go out as they come */
    int block_status;            /* sy_call_stream_block: the stream ends with this error (0: none) */
    const char *block_type, *block_msg;
    /* A gate (sy_call_gate): the upstream's answer waits for a stage (a
     * during_call guardrail) before anything reaches the client. */
    unsigned char gated;
    unsigned char gate_done; /* the upstream ended while gated (1, gate_err), or the built-in mock waits (2) */
    int gate_err;
    struct sy_buf gate_buf; /* stream bytes that came while gated */
    unsigned ans_hook;      /* sy_call_answer: next hook, what follows, the body */
    void (*ans_then)(struct sy_call *);
    struct sy_buf *ans_body;
    struct sy_fchain *fl;     /* the response's filter chain (gateway/filter.h); NULL: none linked */
    unsigned char fl_started; /* the chain was built (sy_filter_start) */
    unsigned char fl_hold;    /* the usage filter holds partial lines (usage.cost): writes go through it */
    int client_started;       /* bytes sent to the client */
    int final_status;
    const char *exception_class;
    const char *err_msg; /* the error message the client is sent, while the call is accounted (logging) */
    /* The guardrails that ran (stages/guardrails.c, set before the later
     * stages' finish hooks): a JSON array of LiteLLM's
     * StandardLoggingGuardrailInformation, for the logging payload's
     * guardrail_information and the spend row's metadata; NULL: none ran. */
    const char *guard_info;
    unsigned char guard_status; /* SY_GUARD_NOT_RUN, _SUCCESS, _INTERVENED, _FAILED */
    const char *log_request; /* the request as the logs record it (a logging_only guardrail masked it); NULL: as sent */
    size_t log_request_len;
    const char *hit_body; /* a cache hit's stored response (JSON), while the call is accounted (logging) */
    size_t hit_len;
    int llm_failed;
};

/* Who calls (stages/auth.c, keycheck.c). */
struct sy_call_auth {
    int is_admin;           /* master key, proxy_admin key, or auth off */
    struct sy_keyinfo *key; /* the virtual key's auth object (referenced); NULL for the master key / no auth */
    struct sy_enduser *eu;  /* the end user's, when the DB knows it (referenced) */
    const char *hashed_key;
    int no_db;    /* the DB was unreachable and allow_requests_on_db_unavailable let the call through */
    int db_rc;    /* result of the last DB job */
    void *db_obj; /* object the last DB job loaded */
};

/* The pass-through endpoints (gateway/passthru.c): images, audio, files, batches. */
struct sy_call_pass {
    int raw;                /* bytes both ways: the answer is streamed with the upstream's type */
    int pass_op;            /* enum sy_pass_op (passthru.c) */
    const char *raw_method; /* "POST", "GET", "DELETE" */
    const char *raw_path;   /* appended to the deployment's base: "/images/generations", "/files/x?y" (arena) */
    const char *raw_ctype;  /* Content-Type forwarded (the client's), NUL-terminated (arena); NULL: none */
    size_t raw_model_off, raw_model_len; /* the model value to replace in the body (len 0: none) */
    int raw_model_json;                  /* the value is a JSON string (quotes included), else multipart bytes */
    int raw_whole;                       /* files / batches whose answer passthru.c reads (ids to record, a list to
                                          * filter): a 2xx is held whole, then sy_passthru_answer */
    struct sy_ptfwd_state *pt;           /* a provider pass-through route's forwarding (ptfwd.c); NULL otherwise */
};

struct sy_call {
    struct sy_req *req;
    void **slots; /* per-stage / per-filter state, sy_nslots entries (gateway/slot.h) */
    struct sy_worker *w;
    struct sy_gwconf *g;
    const struct sy_pipeline *pl;
    enum sy_route_kind kind;
    unsigned stage;
    char call_id[37];
    struct sy_call_in in;
    const struct sy_group *group;     /* group being tried (a fallback changes it) */
    const struct sy_group *req_group; /* group the request resolved to */
    struct sy_drt *drt;               /* deployment in use */
    const char *group_model;          /* the name c->group was resolved from: the model after the key's and team's
                                       * aliases, or the fallback's own name (a wildcard group forwards its '*' part) */
    struct sy_call_opts opt;
    struct sy_call_progress rt;
    struct sy_call_upstream up;
    struct sy_call_usage usage;
    struct sy_call_out out;
    struct sy_call_auth auth;
    struct sy_call_pass pass;
    struct sy_call_attempts att;
    struct sy_xcall *x;   /* translation state (gateway/xlate.c); NULL on the pass-through path */
    struct sy_drt *pin;   /* deployment fixed by the request (an encoded response id): every attempt uses it */
    struct sy_rcall *rsp; /* Responses state (SY_RK_RESPONSES, SY_RK_RESPONSES_ID); NULL otherwise */
    int cache;            /* the response cache (stages/cache.c): 0 not cached, SY_CACHE_HIT, SY_CACHE_MISS */
    int own_ratelimit;    /* a stage (limits) writes the x-ratelimit-* headers: the provider's are not echoed */
    int aborted;          /* the client left */
    int finished;         /* accounted (sy_call_account ran) */
    int counted_inflight;
    int in_cb;
    void *offload_job; /* gateway/offload.c: work queued on the pool */
};

/* sy_call_out.guard_status: LiteLLM's guardrail_status of the payload. */
#define SY_GUARD_NOT_RUN    0 /* "not_run" */
#define SY_GUARD_SUCCESS    1 /* "success" */
#define SY_GUARD_INTERVENED 2 /* "guardrail_intervened": blocked or masked */
#define SY_GUARD_FAILED     3 /* "guardrail_failed_to_respond" */

#define SY_CACHE_HIT  1 /* sy_call.cache: answered from the cache */
#define SY_CACHE_MISS 2 /* looked up, not found: the answer is stored when the call succeeds */

/* Globals shared by all workers (set before workers start). */
struct sy_gateway {
    int nworkers;
    struct sy_worker *workers;
    struct sy_gwconf *_Atomic conf; /* latest config, for readers outside workers */
    int db;                         /* the database pool runs (set by main before configs are built) */
};
extern struct sy_gateway sy_gw;

/* Pipeline plumbing (gateway/pipeline.c). */
void sy_handle_request(struct sy_req *r, void *ud);
void sy_call_resume(struct sy_call *c);
/* End a call (once): the pipeline's finish hooks in list order (limits settle,
 * cache store, spend row ...), then, on LLM routes, metrics and the access
 * log. The response must be complete. */
void sy_call_account(struct sy_call *c, int status);
/* Reply with a LiteLLM-shaped error (x-litellm headers added), account it, end the request. */
void sy_call_error(struct sy_call *c, int status, const char *type, const char *param, const char *msg,
                   const char *extra, size_t extra_len);
/* Standard x-litellm-* response headers for c into b. */
void sy_call_headers(struct sy_call *c, struct sy_buf *b, int include_durations);
/* A 2xx JSON answer in body is about to go out: the route's answer hooks in
 * list order (pipeline.c). SY_OK: send it now; SY_AGAIN: then(c) follows
 * when they passed (body must stay valid: in the call); SY_DONE: answered. */
int sy_call_answer(struct sy_call *c, struct sy_buf *body, void (*then)(struct sy_call *));
void sy_call_answer_resume(struct sy_call *c);
/* Send the model another request in the same call (proxy.c): an answer hook
 * that holds a whole JSON answer (SY_AGAIN) and wants the model to go on (a
 * tool loop: stages/mcp_tools.c) calls it instead of sy_call_answer_resume.
 * body[0..n) (copied) becomes the request, in the client's dialect, as if the
 * client had sent it: rescanned, translated again, routed in the same group
 * with fresh retries, and answered through the answer hooks again. The
 * round's usage and cost are carried (c->usage.carry_*) and summed into the
 * call's when it is accounted, so spend, limits and metrics count every
 * round. The body must be JSON with the model the client asked for and no
 * "stream": true (the hook streams the final answer itself if it must).
 * 0, or SY_EINVAL (not JSON, no model) with nothing changed: the caller
 * answers. */
int sy_call_redo(struct sy_call *c, const char *body, size_t n);
/* Stream writers (struct sy_owriter, proxy.c): bytes to the client now (the
 * usage.cost rewrite when costed is 1, the held-line path when 0, as they are
 * when 2; the socket; the response filters). Returns the client's queue size. */
size_t sy_call_out_bytes(struct sy_call *c, const char *p, size_t n, int costed);
/* A writer ends the stream with an error (its message and type, static or in
 * the call's arena): the engine writes the client dialect's error event and
 * accounts status once the write returns. */
void sy_call_stream_block(struct sy_call *c, int status, const char *type, const char *msg);
/* A stream whose bytes all went out ends: the call accounted (with a recorded
 * block's error event first; billed as a cut when the client left). */
void sy_call_stream_finish(struct sy_call *c);
/* The gate (proxy.c): while c->out.gated is set the upstream's stream bytes
 * and its end are held (reading paused). sy_call_ungate lets them go on;
 * sy_call_gate_refuse drops the upstream exchange (the deployment did its
 * part) so the caller can answer with its error. */
void sy_call_ungate(struct sy_call *c);
void sy_call_gate_refuse(struct sy_call *c);

/* Stages live in src/stages/ (one descriptor each, gateway/stage.h); what
 * the engine and other stages call in their files: */
/* GET /routes body: every served route and its methods, from the route tables (pipeline.c). */
void sy_routes_json(struct sy_buf *b);
/* keycheck.c: may the call's key use model (also when it is an alias)? 0 yes,
 * else the status with LiteLLM's refusal in e. No key: 0. */
struct sy_check_err;
int sy_call_model_denied(const struct sy_call *c, const char *model, struct sy_check_err *e);
/* Answer a check's refusal (LiteLLM's shape and status); SY_DONE. */
int sy_call_refuse(struct sy_call *c, const struct sy_check_err *e);
/* The same, answering the refusal (401): SY_OK or SY_DONE. */
int sy_call_check_model(struct sy_call *c, const char *model);
/* model after the team's model_aliases, then the key's aliases (LiteLLM's
 * _update_model_if_team_alias_exists / _key_alias_exists): what is routed. */
const char *sy_call_aliased(const struct sy_call *c, const char *model);
/* A fallback is about to call c->group: re-price the budget reservation at
 * it (a dearer group tops it up under the same admit rule). SY_OK: go on;
 * SY_AGAIN: then(c) follows; SY_DONE: refused, the budget error was sent (budget.c). */
/* A fallback is about to call c->group: the route's stages' fallback hooks in
 * list order (the budget re-prices its reservation at the group). SY_OK: go on;
 * SY_AGAIN: then(c) follows once they pass; SY_DONE: refused, answered. */
int sy_call_fallback(struct sy_call *c, void (*then)(struct sy_call *));
/* model_info.access_groups of group `model` (NUL-separated), for
 * sy_keys_check_model; ud is the sy_gwconf (budget.c). */
const char *sy_group_access_groups(void *ud, const char *model);
struct sy_ureq_opts;
struct sy_xerr;
/* A raw call's URL, headers, method and (multipart) body pieces for c->drt
 * (passthru.c). *nbody 0: proxy.c sends the JSON body with its model replaced,
 * or no body. 0, or SY_EINVAL with err filled (the deployment cannot serve it). */
int sy_passthru_prepare(struct sy_call *c, struct sy_ureq_opts *o, unsigned *nbody, struct sy_xerr *err);
/* LiteLLM's call_type of a pass-through call ("aimage_generation", ...). */
const char *sy_passthru_call_type(const struct sy_call *c);
/* A raw_whole answer (2xx, whole in c->up.up_body): record the ids it hands out to
 * the caller, drop from a list what the caller may not see (passthru.c). */
void sy_passthru_answer(struct sy_call *c);
/* The limits stage took a rate-limit slot for c: its x-ratelimit-* headers
 * replace the provider's (limits.c). */
/* "local" | "redis" | "local, redis unreachable" | "refusing, redis unreachable" (readiness). */
const char *sy_limits_state(const struct sy_gwconf *g);
/* Response cache glue (stages/cache.c): whether the call's response is to be
 * stored (a miss without no-store); put a response (OpenAI JSON) under the
 * call's key with its ttl. The capture and the store after a call are the
 * cache_store filter (filters/cache_store.c). */
int sy_cache_will_store(const struct sy_call *c);
void sy_cache_put(struct sy_call *c, const char *resp, size_t n);
const char *sy_cache_key_of(const struct sy_call *c); /* NULL when not cached */
/* LiteLLM's call_type of c ("acompletion", "anthropic_messages", ...) and its
 * response id ("chatcmpl-...", "msg_..." from the answer; NULL when none):
 * SpendLogs' and the logging callbacks' (budget.c). */
const char *sy_call_type(const struct sy_call *c);
const char *sy_call_response_id(struct sy_call *c);
/* The answer the client got, as the log_capture filter kept it
 * (filters/log_capture.c): NULL when not captured; *sse 1 for SSE bytes;
 * *cut 1 when it passed the cap (the bytes are its beginning). */
const char *sy_log_capture(const struct sy_call *c, size_t *n, int *sse, int *cut);
/* The call's cost from its usage and its deployment's price (budget.c); sets
 * c->usage.cost / c->usage.cost_known; idempotent. */
void sy_call_cost(struct sy_call *c);
/* The prices of deployment r of group gr for this call: r->price, except for a
 * wildcard deployment ("openai/<star>") without prices of its own, whose entry
 * is looked up for the model the request names ("openai/gpt-4o" -> gpt-4o's). */
void sy_call_dprice(const struct sy_call *c, const struct sy_group *gr, const struct sy_drt *r, struct sy_dprice *out);
/* Publish a cache invalidation ("<kind>:<id>") here and to other instances (admin.c). */
void sy_gateway_invalidate(struct sy_worker *w, const char *msg);

/* Routing's token count (route.c): 1 when picking in gr needs the exact
 * count (else c->rt.input_tokens holds an upper bound that decides the same);
 * the count itself, as an offload work function. */
int sy_route_needs_count(struct sy_call *c, const struct sy_group *gr);
void sy_route_count_work(struct sy_call *c, void *arg);

/* Provider pass-through routes (ptfwd.c): the route kind of r (SY_RK_PROVIDER,
 * SY_RK_PROVIDER_OPEN) when its path is a provider prefix's or a
 * pass_through_endpoints entry's, else -1. */
int sy_ptfwd_route(const struct sy_gwconf *g, const struct sy_req *r);
/* The config's pass_through_endpoints entry r's path is under (NULL: none); *sub
 * the offset of the rest of the path. */
const struct sy_ptendpoint *sy_ptfwd_endpoint(const struct sy_gwconf *g, struct sy_str path, size_t *sub);

/* "OpenAI", "Azure", else the capitalized provider name, for LiteLLM's
 * "<Provider>Exception" texts (proxy.c). */
const char *sy_provider_label(const struct sy_drt *d, char *buf, size_t cap);

/* Translation glue (xlate.c): see xlate.h. */

/* The built-in mock model (mock.c): answers c entirely in-process. */
void sy_messages_from_mock(struct sy_call *c, int stream, const struct sy_buf *oai, struct sy_buf *out);
void sy_responses_from_mock(struct sy_call *c, int stream, const struct sy_buf *oai,
                            struct sy_buf *out); /* responses.c */
int sy_mock_answer(struct sy_call *c);

/* Workers (worker.c). */
int sy_workers_start(int n, const char *host, int port, struct sy_gwconf *g);
/* Publish g to every worker; takes over the caller's reference. */
void sy_workers_swap_conf(struct sy_gwconf *g);
void sy_workers_drain(double timeout_s);
void sy_workers_join(void);

/* The worker's next random number (router/rng.h; pipeline.c). */
uint64_t sy_rand(struct sy_worker *w);
/* 400 "Invalid model name passed in model=..." as LiteLLM (route.c); returns SY_DONE. */
int sy_call_invalid_model(struct sy_call *c, const char *model);

#endif
