/* modeldb.c - LiteLLM_ProxyModelTable rows to model_list entries and back
 * (admin/modeldb.h).
 *
 * Rows are read on a DB thread (stages/model_registry.c) and written by the
 * admin routes (admin/models.c), so json-c is used throughout. An entry is
 * validated by the config loader itself (sy_config_load_string_ex on a
 * one-entry model_list: JSON is YAML), so a database model obeys exactly the
 * rules of a config-file one; a row the loader refuses, or whose provider
 * switchyard cannot serve, is reported, never fatal.
 */
#include "admin/modeldb.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "core/secret.h"
#include "providers/adapter.h"
#include "providers/provider.h"

#define ENTRY_MAX (1u << 20) /* one model's JSON: far above any real deployment */

/* Parse text as a JSON object; a JSON string holding an object is unwrapped
 * once (litellm_params written by json.dumps into a Json column). NULL when
 * it is neither. */
static json_object *object_of(const char *text)
{
    if (!text)
        return NULL;
    json_object *o = json_tokener_parse(text);
    if (o && json_object_is_type(o, json_type_string)) {
        json_object *inner = json_tokener_parse(json_object_get_string(o));
        json_object_put(o);
        o = inner;
    }
    if (o && !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        o = NULL;
    }
    return o;
}

int sy_modeldb_entry(const char *model_id, const char *model_name, const char *params_json, const char *info_json,
                     const char *salt, struct sy_buf *out, char *err, size_t errlen)
{
    if (!model_id || !*model_id || !model_name || !*model_name) {
        snprintf(err, errlen, "model_id and model_name are required");
        return -1;
    }
    json_object *lp = object_of(params_json);
    if (!lp) {
        snprintf(err, errlen, "litellm_params is not a JSON object");
        return -1;
    }
    json_object *mi = info_json ? object_of(info_json) : NULL;
    if (info_json && !mi && strcmp(info_json, "null") != 0) {
        json_object_put(lp);
        snprintf(err, errlen, "model_info is not a JSON object");
        return -1;
    }
    if (!mi)
        mi = json_object_new_object();
    json_object *dec = json_object_new_object();
    json_object_object_foreach(lp, k, v)
    {
        if (json_object_is_type(v, json_type_null))
            continue;
        if (json_object_is_type(v, json_type_string) && salt && *salt) {
            const char *s = json_object_get_string(v);
            size_t n = strlen(s);
            char *plain = malloc(n + 1);
            long pl = plain ? sy_secret_decrypt(s, salt, plain, n + 1) : -1;
            if (pl >= 0) {
                json_object_object_add(dec, k, json_object_new_string_len(plain, (int)pl));
                free(plain);
                continue;
            }
            free(plain);
        }
        json_object_object_add(dec, k, json_object_get(v));
    }
    json_object_put(lp);
    json_object_object_add(mi, "id", json_object_new_string(model_id));
    json_object *e = json_object_new_object();
    json_object_object_add(e, "model_name", json_object_new_string(model_name));
    json_object_object_add(e, "litellm_params", dec);
    json_object_object_add(e, "model_info", mi);
    const char *t = json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    size_t tl = strlen(t);
    int rc = 0;
    if (tl > ENTRY_MAX) {
        snprintf(err, errlen, "more than %u bytes", ENTRY_MAX);
        rc = -1;
    } else {
        sy_buf_append(out, t, tl);
    }
    json_object_put(e);
    return rc;
}

struct sy_config *sy_modeldb_config(const char *entries, size_t n, const char *creds, char *err, size_t errlen)
{
    struct sy_buf b;
    sy_buf_init(&b, (size_t)1 << 30);
    SY_BUF_LIT(&b, "{\"model_list\": ");
    sy_buf_append(&b, entries, n);
    if (creds) {
        SY_BUF_LIT(&b, ", \"credential_list\": ");
        sy_buf_puts(&b, creds);
    }
    SY_BUF_LIT(&b, "}\n");
    struct sy_config *c = NULL;
    if (sy_buf_failed(&b))
        snprintf(err, errlen, "out of memory");
    else if (sy_config_load_string_ex(b.p, b.len, SY_MODELDB_FILE, NULL,
                                      SY_CONFIG_NO_SETENV | SY_CONFIG_QUIET | SY_CONFIG_NO_INCLUDE, &c, err,
                                      errlen) != 0)
        c = NULL;
    sy_buf_free(&b);
    return c;
}

int sy_modeldb_check(const char *entry, size_t n, const char *creds, char *err, size_t errlen)
{
    struct sy_buf b;
    sy_buf_init(&b, ENTRY_MAX * 2);
    SY_BUF_LIT(&b, "[");
    sy_buf_append(&b, entry, n);
    SY_BUF_LIT(&b, "]");
    struct sy_config *c = sy_buf_failed(&b) ? NULL : sy_modeldb_config(b.p, b.len, creds, err, errlen);
    sy_buf_free(&b);
    if (!c)
        return -1;
    int rc = 0;
    if (c->n_deployments != 1) {
        snprintf(err, errlen, "expected one model");
        rc = -1;
    } else {
        const struct sy_deployment *d = &c->deployments[0];
        if (!d->model || !d->provider || (!sy_provider_find(d->provider) && !sy_adapter_find(d->provider))) {
            snprintf(err, errlen, "provider '%s' is %s", d->provider ? d->provider : "",
                     d->provider && sy_provider_known_unsupported(d->provider) ? "not supported by switchyard yet"
                                                                               : "unknown");
            rc = -1;
        }
    }
    sy_config_unref(c);
    return rc;
}

char *sy_modeldb_encrypt_params(const char *params_json, const char *salt)
{
    if (!salt || !*salt)
        return NULL;
    json_object *lp = object_of(params_json);
    if (!lp)
        return NULL;
    json_object *enc = json_object_new_object();
    int ok = 1;
    json_object_object_foreach(lp, k, v)
    {
        if (json_object_is_type(v, json_type_null))
            continue; /* exclude_none */
        if (!json_object_is_type(v, json_type_string)) {
            json_object_object_add(enc, k, json_object_get(v));
            continue;
        }
        const char *s = json_object_get_string(v);
        size_t n = (size_t)json_object_get_string_len(v);
        size_t cap = sy_secret_encrypted_len(n) + 1;
        char *c = malloc(cap);
        long cl = c ? sy_secret_encrypt(s, n, salt, c, cap) : -1;
        if (cl < 0) {
            ok = 0;
            free(c);
            break;
        }
        json_object_object_add(enc, k, json_object_new_string_len(c, (int)cl));
        free(c);
    }
    char *out =
        ok ? strdup(json_object_to_json_string_ext(enc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE))
           : NULL;
    json_object_put(enc);
    json_object_put(lp);
    return out;
}

char *sy_modeldb_credential_list(struct json_object *creds)
{
    if (!creds || !json_object_is_type(creds, json_type_object))
        return NULL;
    json_object *list = json_object_new_array();
    json_object_object_foreach(creds, name, values)
    {
        json_object *c = json_object_new_object();
        json_object_object_add(c, "credential_name", json_object_new_string(name));
        json_object_object_add(c, "credential_values", json_object_get(values));
        json_object_array_add(list, c);
    }
    char *out = strdup(json_object_to_json_string_ext(list, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(list);
    return out;
}
