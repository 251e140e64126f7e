/* table.h - the compiled model table: groups and their deployments.
 *
 * Built once per config snapshot (router/table.c: sy_table_build resolves
 * each deployment's upstream URLs, auth header lines, prices and response
 * headers, sorts the groups by name for binary search and precomputes the
 * simple-shuffle weights; router/compile.c then resolves wildcard groups,
 * aliases and fallback lists) and immutable afterwards; the live,
 * per-deployment state is behind sy_drt.st (router/router.h). The router's
 * strategies, cooldown, retry policy and Redis sharing and the management
 * API depend on this header, never on the gateway.
 *
 * The gateway's compiled config (struct sy_gwconf, gateway/gateway.h) holds
 * the table as `table`, in a union with an anonymous struct of the same
 * members (SY_TABLE_MEMBERS, listed once below), so that the engine's code
 * keeps reading g->groups while the router and the management API are handed
 * &g->table: the Linux kernel's struct_group_tagged. Both views have the same
 * layout by construction, and accesses through sy_table pointers alias the
 * containing struct's as C's common-initial-sequence rule requires.
 */
#ifndef SY_ROUTER_TABLE_H
#define SY_ROUTER_TABLE_H

#include <stddef.h>

#include "config/config.h"
#include "core/buf.h"
#include "providers/provider.h"
#include "router/router.h"
#include "spend/spend.h"

struct sy_adapter;
struct sy_pconf;

/* A deployment with everything the hot path needs resolved at load time. */
struct sy_drt {
    const struct sy_deployment *d;
    struct sy_dstate *st;           /* live router state (router/router.h) */
    const struct sy_provider *prov; /* NULL: provider not supported */
    const char *url[3];             /* chat, completions, embeddings */
    const char *headers;            /* "Content-Type...\r\nAuthorization: Bearer ...\r\n" */
    size_t headers_len;
    const char *model_json; /* upstream model as a JSON string literal, with quotes */
    size_t model_json_len;
    double timeout_s, stream_timeout_s;
    int tls;
    int enc; /* tokenizer encoding */
    /* response header lines naming this deployment, prebuilt:
     * "x-litellm-model-id: ...\r\n[x-litellm-model-api-base: ...\r\n]" */
    const char *resp_headers;
    size_t resp_headers_len;
    double weight;    /* simple-shuffle weight (the group's weight field; 0 when missing) */
    double cost;      /* cost-based routing: input + output cost per token (5.0 when unknown, as LiteLLM) */
    int max_parallel; /* max_parallel_requests (deployment, else router default); < 0 none */
    int wildcard;     /* upstream model contains '*': replaced by the matched part per request */
    /* translating providers (providers/adapter.h): NULL for OpenAI-compatible ones */
    const struct sy_adapter *ad;
    struct sy_pconf *pc;
    struct sy_dprice price; /* the price table's entry with the deployment's overrides (spend/spend.h) */
    /* routing filters (router/compile.c) */
    char region;           /* allowed_model_region class: 'e' eu, 'u' us, 0 unknown */
    struct sy_pbudget *pb; /* provider_budget_config window of its provider; NULL: none */
    double pb_limit;       /* that budget's limit (USD) */
};

struct sy_group {
    const char *name;
    size_t name_len;
    struct sy_drt **d;
    size_t n;
    int weighted; /* simple-shuffle: weight/rpm/tpm found on the first deployment */
    int wildcard; /* name is a pattern (openai/<star>, <star>) */
    int usable;   /* deployments with a supported provider */
    /* fallback groups, resolved at load (router semantics, reference §3.6):
     * [0] fallbacks (own entry, else "*", else default_fallbacks),
     * [1] context_window_fallbacks, [2] content_policy_fallbacks */
    const struct sy_group **fb[3];
    const char **fbname[3]; /* the names the config gave them (a wildcard group forwards its '*' part) */
    size_t nfb[3];
    const char *resp_header; /* "x-litellm-model-group: <name>\r\n", prebuilt */
    size_t resp_header_len;
    struct sy_dprice price_max; /* the dearest deployment's rates: budget reservations (worst case) */
    const char *access_groups;  /* model_info.access_groups of its deployments, NUL-separated, "" ends; may be NULL */
};

/* The table's members. cfg and rc are set by the owner before sy_table_build
 * (cfg is the owner's reference; rc comes from sy_router_compile_policy). */
#define SY_TABLE_MEMBERS                                                               \
    struct sy_config *cfg; /* the snapshot compiled (the owner holds the reference) */ \
    struct sy_drt *drts;   /* one per deployment, in config order */                   \
    size_t ndrts;                                                                      \
    struct sy_group *groups; /* sorted by name */                                      \
    size_t ngroups;                                                                    \
    struct sy_rconf rc;           /* router policy (router/router.h) */                \
    const struct sy_group **wild; /* wildcard groups, most specific first */           \
    size_t nwild;                                                                      \
    struct sy_alias *aliases; /* model_group_alias (from the config) */                \
    size_t naliases;

struct sy_table {
    SY_TABLE_MEMBERS
};

/* Compile t->cfg's deployments into t (t->cfg and t->rc set, the rest zero):
 * resolve each deployment (provider preset or adapter, URLs, auth headers,
 * timeouts, tokenizer), group them, attach their live state, resolve
 * wildcards, aliases and fallbacks (router/compile.c), prebuild the response
 * header lines and the prices. A deployment that cannot be served is kept
 * (requests to it fail) with a warning through warn(), which prints and
 * counts it. 0, or -1 out of memory (err filled; free t with sy_table_free). */
int sy_table_build(struct sy_table *t, void (*warn)(const char *), char *err, size_t errlen);
/* Free what sy_table_build allocated (not cfg). */
void sy_table_free(struct sy_table *t);

/* The group named name[0..len) exactly (binary search); NULL when none. */
const struct sy_group *sy_table_group(const struct sy_table *t, const char *name, size_t len);
/* The group deployment d belongs to (NULL: none). Linear: for by-id and files routes, not per chunk. */
const struct sy_group *sy_table_group_of(const struct sy_table *t, const struct sy_drt *d);

/* The GET /v1/models list into b (router/table.c; its comment has the list's
 * rules): servable groups, aliases, wildcard groups' known models; allow (may
 * be NULL) filters by a virtual key's models. */
/* ,"context_window":N,"max_input_tokens":N,"max_output_tokens":M from the
 * price map and model_info (members left out when unknown): what /v1/models
 * adds to LiteLLM's members for clients that size their context (opencode, Codex). */
void sy_model_limits_json(struct sy_buf *b, const struct sy_dprice *dp);
void sy_models_list_json(const struct sy_table *t, int wildcard_routes, int access_groups,
                         int (*allow)(void *ud, const char *model), void *ud, struct sy_buf *b);

#endif
