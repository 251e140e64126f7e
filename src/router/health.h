/* health.h - the pure parts of LiteLLM's deep health check (GET /health and
 * background checks): which call a deployment gets, how a result is shown
 * (secrets redacted), which deployments a query selects, and the latest
 * background results kept process-wide. No worker, call or socket here: the
 * check itself is the health stage (stages/health.c, stages/health.h). See
 * docs/health.md.
 */
#ifndef SY_ROUTER_HEALTH_H
#define SY_ROUTER_HEALTH_H

#include <stddef.h>

#include "core/buf.h"
#include "router/table.h"

#define SY_HEALTH_TIMEOUT_CAP_S 60.0 /* LiteLLM's HEALTH_CHECK_TIMEOUT_SECONDS */

/* The call a deployment's model_info.mode asks for. */
enum sy_health_mode { SY_HM_CHAT, SY_HM_COMPLETION, SY_HM_EMBEDDING, SY_HM_NONE };
enum sy_health_mode sy_health_mode_of(const struct sy_deployment *d);
/* The deployment's health-check timeout in seconds: its timeout, capped. */
double sy_health_timeout(const struct sy_drt *d);
/* Why a deployment without a provider (drt->prov NULL) is not called (malloc). */
char *sy_health_unsupported_reason(const struct sy_drt *drt);
/* printf into a new string whose invalid UTF-8 bytes are '?' (malloc; NULL: out of memory). */
char *sy_health_fmt_error(const char *f, ...) __attribute__((format(printf, 1, 2)));

/* What one check found. */
struct sy_health_seen {
    int ok;
    const char *error;                    /* unhealthy: the error text (NULL: "unknown error") */
    const char *rl_req, *rl_tok, *region; /* healthy: the upstream's x-ratelimit-remaining-requests,
                                           * -tokens, x-ms-region ("" when absent) */
};
/* The endpoint object of deployment d (LiteLLM's: its litellm_params without
 * secret-looking keys or values carrying its api_key, the result, model_id)
 * into b. 0, or nonzero when b hit its cap. */
int sy_health_endpoint_json(struct sy_buf *b, const struct sy_deployment *d, const struct sy_health_seen *s);

/* A /health selection from the query string (either may be NULL). */
struct sy_health_filter {
    const char *model;
    const char *model_id;
};
/* What a selection looks at, for deployments and stored endpoints alike. */
struct sy_health_key {
    const char *id, *name, *model;
};
/* Mark sel[i] for the keys f selects (LiteLLM: model_id; else litellm_params.model,
 * falling back to model_name; else all), each id once. Returns how many. */
size_t sy_health_filter_keys(const struct sy_health_filter *f, const struct sy_health_key *k, size_t n,
                             unsigned char *sel);

/* The latest background round's results, process-wide (any worker answers
 * from them). Each endpoint is its finished JSON text, so a reload never
 * leaves pointers into a freed config. */
struct sy_health_entry {
    char *id, *name, *model;
    int ok;
    char *json; /* the endpoint object */
    size_t json_len;
};
void sy_health_entries_free(struct sy_health_entry *e, size_t n);
/* Replace the stored results by e[0..n) (taken over). */
void sy_health_store_replace(struct sy_health_entry *e, size_t n);
/* Forget them (background checks turned off). */
void sy_health_store_clear(void);
/* The GET /health body from the stored results that f selects into b:
 * -1 none stored yet, 0 done, 1 b hit its cap. *notfound: f names a
 * model_id that is not stored. */
int sy_health_stored_json(const struct sy_health_filter *f, struct sy_buf *b, int *notfound);

#endif
