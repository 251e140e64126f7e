/* loader.h - state shared by the config loader's files (internal to src/config).
 *
 * One `struct sy_ld` lives for one load. Everything the resulting snapshot
 * keeps is allocated from the snapshot's arena (priv->arena); messages are
 * counted, kept in the snapshot and logged unless SY_CONFIG_QUIET.
 */
#ifndef SY_CONFIG_LOADER_H
#define SY_CONFIG_LOADER_H

#include "config/config.h"
#include "config/ytree.h"
#include "core/arena.h"

struct sy_config_priv {
    struct sy_arena arena; /* every allocation of the snapshot */
    const char **warnings;
    size_t n_warnings, cap_warnings;
    struct sy_config *base, *extra; /* sy_config_with_models: the snapshots this one points into (referenced) */
};

struct sy_ld {
    struct sy_config *c;
    struct sy_config_priv *priv;
    struct sy_arena *a;
    unsigned flags;
    int n_errors;
    char *err;
    size_t errlen;
    const struct sy_ynode *callback_settings; /* the top-level map (named callbacks' callback_type), or NULL */
    const char **once;                        /* keys already warned about once */
    size_t n_once, cap_once;
};

void sy__ld_warn(struct sy_ld *ld, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void sy__ld_error(struct sy_ld *ld, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Something configured that cannot run at all (a Python callback): a warning
 * (kept, counted) logged at error level; the load does not fail. */
void sy__ld_alert(struct sy_ld *ld, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Returns 1 the first time `key` is seen in this load, 0 after. */
int sy__ld_first(struct sy_ld *ld, const char *key);

/* Fill ld->c from the merged, env-resolved tree (schema.c). */
void sy__config_fill(struct sy_ld *ld, struct sy_ynode *root);

/* Typed getters (schema.c). Absent (n == NULL) or null -> 0, *out untouched;
 * a value of the wrong type -> an error naming `path` and n's file:line, -1;
 * else 1 with *out set. Numbers may be numeric strings ("6379"). */
/* A number (an integer in int range when `integer`). */
int sy__get_num(struct sy_ld *ld, const struct sy_ynode *n, const char *path, int integer, double *out);
/* sy__get_num() that also refuses negative values (and 0 when `positive`). */
int sy__get_count(struct sy_ld *ld, const struct sy_ynode *n, const char *path, int integer, int positive, double *out);
/* A boolean: true/false, the integers 0/1, or a string true/yes/on/1/t/y or
 * false/no/off/0/f/n (any case). */
int sy__get_bool(struct sy_ld *ld, const struct sy_ynode *n, const char *path, int *out);
/* The string itself; NULL when absent, null or (after an error) not a string. */
const char *sy__get_str(struct sy_ld *ld, const struct sy_ynode *n, const char *path);
/* A map key (or any scalar) as text: strings as written, others as Python str()
 * (arena copy). */
const char *sy__key_text(struct sy_ld *ld, const struct sy_ynode *k);

/* general_settings.pass_through_endpoints into ld->c (passthrough.c). */
void sy__fill_pass_through(struct sy_ld *ld, const struct sy_ynode *v);

/* Router settings' values (router_settings.c). The readers return 1 when they
 * stored a value, 0 when the key is absent or null, -1 after an error naming
 * file:line (the load then fails). */
/* A redis:// URL (a config value: errors at file:line) into r's Redis fields. 0 / -1. */
int sy__parse_redis_url(struct sy_ld *ld, const char *file, int line, const char *what, const char *url,
                        struct sy_router_config *r);
/* fallbacks, context_window_fallbacks, content_policy_fallbacks and
 * default_fallbacks of section `sec` (named `name` in messages) into r; a set
 * value replaces an earlier one (read litellm_settings first, router_settings
 * then, so router_settings wins). */
void sy__read_fallback_lists(struct sy_ld *ld, struct sy_router_config *r, const struct sy_ynode *sec,
                             const char *name);
/* model_group_alias: {alias: group} or {alias: {model: group, hidden: bool}} into *out (arena). */
int sy__read_aliases(struct sy_ld *ld, const struct sy_ynode *v, const char *path, struct sy_alias **out, size_t *nout);
/* retry_policy ({...ErrorRetries: n}) or allowed_fails_policy ({...ErrorAllowedFails: n}) into out[]
 * (entries not given stay as they are); `suffix` is "Retries" or "AllowedFails". */
int sy__read_policy(struct sy_ld *ld, const struct sy_ynode *v, const char *path, const char *suffix,
                    int out[SY_EXC__COUNT]);
/* Redis location from router_settings `rs` (may be NULL: no section), else from
 * the environment (REDIS_URL, REDIS_HOST, ...); `file` names the main config in
 * messages about the environment. */
void sy__fill_redis(struct sy_ld *ld, struct sy_router_config *r, const struct sy_ynode *rs, const char *file);
/* router_settings.provider_budget_config into r (arena). */
int sy__read_provider_budgets(struct sy_ld *ld, const struct sy_ynode *v, struct sy_router_config *r);
/* After model_list is read: warn about fallback and alias targets that name no model group. */
void sy__check_router_groups(struct sy_ld *ld, const struct sy_config *c, const struct sy_ynode *root);

/* Router._generate_model_id (model_id.c): sha256 hex of the model group and
 * the litellm_params keys and values; returns an arena string. */
const char *sy__model_id(struct sy_arena *a, const char *model_group, const struct sy_ynode *params);

#endif
