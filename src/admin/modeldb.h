/* modeldb.h - LiteLLM_ProxyModelTable rows <-> model_list entries: the
 * database models of general_settings.store_model_in_db (admin/models.c
 * writes them, stages/model_registry.c serves them).
 *
 * A row's litellm_params holds every string value encrypted as LiteLLM's
 * encrypt_value_helper writes it (core/secret.h); non-string values as they
 * are. Reading decrypts each string value; one that does not decrypt under
 * the salt is kept as it is (LiteLLM's decrypt_value_helper with
 * return_original_value).
 */
#ifndef SY_ADMIN_MODELDB_H
#define SY_ADMIN_MODELDB_H

#include <stddef.h>

#include "core/buf.h"

struct sy_config;

/* store_model_in_db of the config in force (stages/model_registry.c sets it):
 * the /model/new etc. routes answer LiteLLM's error when 0. */
extern _Atomic int sy_admin_store_model_in_db;

/* The file name database deployments carry (sy_deployment.file): how
 * /model/info tells them from the config file's (model_info.db_model). */
#define SY_MODELDB_FILE "<database>"

/* One row as a model_list entry, JSON text appended to out:
 *   {"model_name":..,"litellm_params":{decrypted},"model_info":{..,"id":model_id}}
 * params_json: the stored litellm_params (a JSON object, or a JSON string
 * holding one, as older LiteLLM versions wrote it); info_json may be NULL.
 * salt may be NULL (values kept as stored). 0, or -1 with a reason in err. */
int sy_modeldb_entry(const char *model_id, const char *model_name, const char *params_json, const char *info_json,
                     const char *salt, struct sy_buf *out, char *err, size_t errlen);

/* Load entries (a JSON array of model_list entries) as a config snapshot
 * whose deployments are the database's (file SY_MODELDB_FILE); quiet, no
 * environment export, no include. creds: a credential_list (JSON array of
 * {"credential_name","credential_values"}) their litellm_credential_name
 * resolves against, or NULL. NULL with a reason in err. */
struct sy_config *sy_modeldb_config(const char *entries, size_t n, const char *creds, char *err, size_t errlen);

/* Check one entry as the config loader would take it, and that switchyard
 * can serve its provider. 0, or -1 with a reason in err. */
int sy_modeldb_check(const char *entry, size_t n, const char *creds, char *err, size_t errlen);

/* LiteLLM_CredentialsTable's rows (admin/credentials.h sy_credentials_load's
 * {"name": {values}} object) as a credential_list JSON array (malloc'ed), or
 * NULL. */
struct json_object;
char *sy_modeldb_credential_list(struct json_object *creds);

/* litellm_params (a JSON object) with each string value encrypted under salt,
 * as compact JSON text (malloc'ed), or NULL (salt NULL/empty, out of memory). */
char *sy_modeldb_encrypt_params(const char *params_json, const char *salt);

#endif
