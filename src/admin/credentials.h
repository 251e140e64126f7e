/* credentials.h - the credentials stored in LiteLLM_CredentialsTable
 * (admin/credentials.c serves LiteLLM's /credentials routes on them), read
 * for whoever resolves a deployment's litellm_params.litellm_credential_name
 * against the database (the models registry, on a DB thread).
 */
#ifndef SY_ADMIN_CREDENTIALS_H
#define SY_ADMIN_CREDENTIALS_H

struct sy_store;
struct json_object;

/* Every row of LiteLLM_CredentialsTable as one json-c object
 *   {"<credential_name>": {<credential_values, decrypted>}, ...}
 * (*out, the caller json_object_put()s it). Each string value is decrypted
 * under salt (core/secret.h: sy_secret_salt) as LiteLLM's
 * decrypt_value_helper does: a value that does not decrypt becomes null, a
 * value that is not a string stays as stored. salt NULL: every string value
 * is null. Runs on a DB thread. 0, or a negative SY_STORE_E* (*out NULL). */
int sy_credentials_load(struct sy_store *st, const char *salt, struct json_object **out);

/* The per-value forms LiteLLM stores (credential_values, a database model's
 * litellm_params), for any caller on a DB thread. Both return a new object
 * (json_object_put it) or NULL (out of memory; encrypt: no salt, or a cipher
 * failure):
 *   encrypt: every string member encrypted with sy_secret_encrypt (the
 *            stored text), every other member copied as it is;
 *   decrypt: every string member decrypted; one that does not decrypt is
 *            null, or with keep_original the stored string as it is
 *            (decrypt_value_helper's return_original_value, which LiteLLM's
 *            decrypt_model_list_from_db uses for a model's litellm_params). */
struct json_object *sy_credentials_encrypt_values(struct json_object *vals, const char *salt);
struct json_object *sy_credentials_decrypt_values(struct json_object *vals, const char *salt, int keep_original);

#endif
