/* table.h - the compiled model table: groups and their deployments.
 *
 * Built once per config snapshot by gateway/gwconf.c and router/compile.c
 * (struct sy_gwconf holds the arrays) and immutable afterwards; the live,
 * per-deployment state is behind sy_drt.st (router/router.h). The router's
 * strategies, cooldown and retry policy and the management API depend on
 * this header, not on the whole gateway (gateway/gateway.h includes it).
 */
#ifndef SY_ROUTER_TABLE_H
#define SY_ROUTER_TABLE_H

#include <stddef.h>

#include "config/config.h"
#include "providers/provider.h"
#include "router/router.h"
#include "spend/spend.h"

struct sy_adapter;
struct sy_pconf;

/* A deployment with everything the hot path needs resolved at load time. */
struct sy_drt {
    const struct sy_deployment *d;
    struct sy_dstate *st; /* live router state (router/router.h) */
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
    char region;            /* allowed_model_region class: 'e' eu, 'u' us, 0 unknown */
    struct sy_pbudget *pb;  /* provider_budget_config window of its provider; NULL: none */
    double pb_limit;        /* that budget's limit (USD) */
};

struct sy_group {
    const char *name;
    size_t name_len;
    struct sy_drt **d;
    size_t n;
    int weighted;  /* simple-shuffle: weight/rpm/tpm found on the first deployment */
    int wildcard;  /* name is a pattern (openai/<star>, <star>) */
    int usable;    /* deployments with a supported provider */
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

#endif
