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
    struct sy_arena arena;       /* every allocation of the snapshot */
    const char **warnings;
    size_t n_warnings, cap_warnings;
};

struct sy_ld {
    struct sy_config *c;
    struct sy_config_priv *priv;
    struct sy_arena *a;
    unsigned flags;
    int n_errors;
    char *err;
    size_t errlen;
    const char **once;           /* keys already warned about once */
    size_t n_once, cap_once;
};

void sy__ld_warn(struct sy_ld *ld, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void sy__ld_error(struct sy_ld *ld, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Returns 1 the first time `key` is seen in this load, 0 after. */
int sy__ld_first(struct sy_ld *ld, const char *key);

/* Fill ld->c from the merged, env-resolved tree (schema.c). */
void sy__config_fill(struct sy_ld *ld, struct sy_ynode *root);
/* Router._generate_model_id (model_id.c): sha256 hex of the model group and
 * the litellm_params keys and values; returns an arena string. */
const char *sy__model_id(struct sy_arena *a, const char *model_group, const struct sy_ynode *params);

#endif
