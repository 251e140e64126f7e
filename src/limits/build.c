/* build.c - a request's rate-limit descriptors from its key's auth object,
 * end user and model group (the table in limits.h; LiteLLM's
 * _create_rate_limit_descriptors, create_organization_rate_limit_descriptor
 * and _add_team_model_rate_limit_descriptor_from_metadata).
 *
 * Order (the first failing descriptor is the one reported, as in LiteLLM):
 * api_key, user, team, team_member, end_user, model_per_key, model_per_team,
 * organization, model_per_organization, global.
 *
 * Model limits live in metadata JSON objects:
 *
 *   {"model_rpm_limit": {"gpt-4o": 10, ...}, "model_tpm_limit": {"gpt-4o": 1000}}
 *
 * model_per_key follows auth_utils.get_key_model_rpm_limit: the key's
 * metadata when it is non-empty (no fallback even when it lacks the field);
 * else, when the key has a model_max_budget, nothing (our budget entries
 * carry no rpm/tpm); else the team's metadata. model_per_team reads the
 * team's metadata, model_per_organization the org's. A metadata text without
 * "model_" in it is not parsed (the common case costs one strstr). Limit
 * values: integers, floats (truncated) or decimal strings; null or any other
 * type is no limit; negatives are 0 (LiteLLM refuses every request then).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "keys/keys.h"
#include "limits/limits.h"

const char *const sy_lim_kind_names[SY_LIM__COUNT] = {
    [SY_LIM_API_KEY] = "api_key",
    [SY_LIM_USER] = "user",
    [SY_LIM_TEAM] = "team",
    [SY_LIM_TEAM_MEMBER] = "team_member",
    [SY_LIM_END_USER] = "end_user",
    [SY_LIM_ORG] = "organization",
    [SY_LIM_MODEL_PER_KEY] = "model_per_key",
    [SY_LIM_MODEL_PER_TEAM] = "model_per_team",
    [SY_LIM_MODEL_PER_ORG] = "model_per_organization",
    [SY_LIM_GLOBAL] = "global",
};

static void add(struct sy_lim_req *lr, enum sy_lim_kind kind, const char *a, const char *b, int64_t rpm, int64_t tpm,
                int64_t par)
{
    if (lr->n >= SY_LIM_MAX || (rpm < 0 && tpm < 0 && par < 0))
        return;
    struct sy_lim_desc *d = &lr->d[lr->n++];
    d->kind = kind;
    /* "<a>" or "<a>:<b>", cut to the buffer (no printf: this runs per request) */
    size_t cap = sizeof d->value - 1, n = 0;
    const char *parts[3] = {a ? a : "None", b ? ":" : NULL, b};
    for (int i = 0; i < 3 && parts[i]; i++) {
        size_t l = strnlen(parts[i], cap - n);
        memcpy(d->value + n, parts[i], l);
        n += l;
    }
    d->value[n] = 0;
    d->rpm = rpm;
    d->tpm = tpm;
    d->par = par;
    d->ctr = NULL;
}

static void add_budget(struct sy_lim_req *lr, enum sy_lim_kind kind, const struct sy_budget *b, const char *id)
{
    if (!b)
        return;
    if (!id || !*id)
        id = b->id;
    if (!id || !*id)
        return;
    add(lr, kind, id, NULL, b->rpm_limit, b->tpm_limit, b->max_parallel);
}

/* 1 when a metadata text is "truthy" in LiteLLM's sense: a non-empty object. */
static int meta_nonempty(const char *m)
{
    if (!m)
        return 0;
    while (isspace((unsigned char)*m))
        m++;
    if (!*m || strncmp(m, "null", 4) == 0)
        return 0;
    if (*m != '{')
        return 1; /* not an object: treated as set (and holding no model limits) */
    m++;
    while (isspace((unsigned char)*m))
        m++;
    return *m != '}';
}

/* Parsed model-limit objects of one metadata text. */
struct mlim {
    struct json_object *root;
    struct json_object *rpm, *tpm; /* the objects, or NULL */
};

static void mlim_parse(struct mlim *ml, const char *meta)
{
    memset(ml, 0, sizeof *ml);
    if (!meta || !strstr(meta, "model_"))
        return;
    ml->root = json_tokener_parse(meta);
    if (!ml->root || !json_object_is_type(ml->root, json_type_object))
        return;
    struct json_object *o;
    if (json_object_object_get_ex(ml->root, "model_rpm_limit", &o) && json_object_is_type(o, json_type_object))
        ml->rpm = o;
    if (json_object_object_get_ex(ml->root, "model_tpm_limit", &o) && json_object_is_type(o, json_type_object))
        ml->tpm = o;
}

static void mlim_free(struct mlim *ml)
{
    if (ml->root)
        json_object_put(ml->root);
    memset(ml, 0, sizeof *ml);
}

/* The limit for model in obj: -1 none (absent, null, unusable), else >= 0.
 * *present: the model is a key of obj (LiteLLM's `model in dict`). */
static int64_t lim_of(struct json_object *obj, const char *model, int *present)
{
    struct json_object *v;
    if (!obj || !json_object_object_get_ex(obj, model, &v))
        return -1;
    *present = 1;
    int64_t x;
    switch (json_object_get_type(v)) {
    case json_type_int: x = json_object_get_int64(v); break;
    case json_type_double: {
        double f = json_object_get_double(v);
        if (!(f == f))
            return -1;
        x = f >= 9e18 ? INT64_MAX : f <= -9e18 ? INT64_MIN : (int64_t)f;
        break;
    }
    case json_type_string: {
        const char *s = json_object_get_string(v);
        char *end;
        errno = 0;
        long long l = strtoll(s, &end, 10);
        if (end == s || *end || errno)
            return -1;
        x = l;
        break;
    }
    default: return -1;
    }
    return x < 0 ? 0 : x;
}

static void add_model(struct sy_lim_req *lr, enum sy_lim_kind kind, const char *owner, const struct mlim *ml,
                      const char *model)
{
    int present = 0;
    int64_t rpm = lim_of(ml->rpm, model, &present);
    int64_t tpm = lim_of(ml->tpm, model, &present);
    if (present)
        add(lr, kind, owner, model, rpm, tpm, -1);
}

unsigned sy_lim_build(struct sy_lim_req *lr, const struct sy_keyinfo *ki, const struct sy_enduser *eu,
                      const char *model, int64_t global_par)
{
    lr->over = -1;
    if (model && !*model)
        model = NULL;
    if (ki && ki->found) {
        if (ki->token[0])
            add(lr, SY_LIM_API_KEY, ki->token, NULL, ki->key.rpm_limit, ki->key.tpm_limit, ki->key.max_parallel);
        add_budget(lr, SY_LIM_USER, ki->user, ki->user_id);
        add_budget(lr, SY_LIM_TEAM, ki->team, ki->team_id);
        if (ki->member) {
            char tm[SY_LIM_VALUE_MAX];
            const char *id = ki->member->id;
            if ((!id || !*id) && ki->team_id && ki->user_id) {
                snprintf(tm, sizeof tm, "%s:%s", ki->team_id, ki->user_id);
                id = tm;
            }
            add_budget(lr, SY_LIM_TEAM_MEMBER, ki->member, id);
        }
    }
    if (eu && eu->found)
        add_budget(lr, SY_LIM_END_USER, &eu->b, NULL);
    if (ki && ki->found && model) {
        const char *team_meta = ki->team ? ki->team->metadata : NULL;
        struct mlim key_ml, team_ml;
        mlim_parse(&team_ml, team_meta);
        if (meta_nonempty(ki->key.metadata)) {
            mlim_parse(&key_ml, ki->key.metadata);
            add_model(lr, SY_LIM_MODEL_PER_KEY, ki->token, &key_ml, model);
            mlim_free(&key_ml);
        } else if (ki->nmmb == 0 && meta_nonempty(team_meta)) {
            add_model(lr, SY_LIM_MODEL_PER_KEY, ki->token, &team_ml, model);
        }
        if (ki->team)
            add_model(lr, SY_LIM_MODEL_PER_TEAM, ki->team_id ? ki->team_id : ki->team->id, &team_ml, model);
        mlim_free(&team_ml);
    }
    if (ki && ki->found)
        add_budget(lr, SY_LIM_ORG, ki->org, ki->org_id);
    if (ki && ki->found && model && ki->org) {
        struct mlim org_ml;
        mlim_parse(&org_ml, ki->org->metadata);
        add_model(lr, SY_LIM_MODEL_PER_ORG, ki->org_id ? ki->org_id : ki->org->id, &org_ml, model);
        mlim_free(&org_ml);
    }
    if (global_par >= 0)
        add(lr, SY_LIM_GLOBAL, "global", NULL, -1, -1, global_par);
    return lr->n;
}

int sy_lim_needs_tokens(const struct sy_lim_req *lr)
{
    for (unsigned i = 0; i < lr->n && i < SY_LIM_MAX; i++)
        if (lr->d[i].tpm >= 0)
            return 1;
    return 0;
}
