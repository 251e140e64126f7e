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

#endif
