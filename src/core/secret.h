/* secret.h - the values LiteLLM stores encrypted in its database, read and
 * written as LiteLLM's encrypt_value_helper / decrypt_value_helper do
 * (litellm/proxy/common_utils/encrypt_decrypt_utils.py), so that a database
 * written by either program is read by the other.
 *
 * The key is LITELLM_SALT_KEY, else the master key (LiteLLM's _get_salt_key).
 * Two formats are read:
 *   - NaCl secretbox (XSalsa20-Poly1305, libsodium) under sha256(key): the
 *     value is base64 (url-safe or standard) of nonce(24) || tag(16) || ciphertext.
 *     Every existing LiteLLM database holds this one, and it is what
 *     sy_secret_encrypt writes (every LiteLLM version reads it).
 *   - "v3:gcm:..." AES-256-GCM (OpenSSL) with a key derived by HKDF-SHA256
 *     from the salt key, LiteLLM's newer format (parameters as LiteLLM's
 *     source; see secret.c).
 * Values are small (credentials, litellm_params): these run on DB threads
 * or at a reload, never per request on the loop.
 */
#ifndef SY_CORE_SECRET_H
#define SY_CORE_SECRET_H

#include <stddef.h>

/* Encrypt n bytes of plain under salt into out (NUL-terminated base64 text,
 * LiteLLM's secretbox format). The text length, or -1 (cap too small,
 * salt NULL/empty, or the cipher failed). cap >= sy_secret_encrypted_len(n) + 1
 * always suffices. */
long sy_secret_encrypt(const char *plain, size_t n, const char *salt, char *out, size_t cap);
size_t sy_secret_encrypted_len(size_t n);

/* Decrypt a stored value in either format into out (NUL-terminated; the
 * plaintext is at most strlen(v) bytes). The plaintext length, or -1 when v
 * is not an encrypted value under this salt: the caller then keeps v as it
 * is, as LiteLLM does (decrypt_value_helper's return_original_value). */
long sy_secret_decrypt(const char *v, const char *salt, char *out, size_t cap);

/* The salt key in force: LITELLM_SALT_KEY from the environment when set and
 * non-empty, else master_key (may be NULL: then NULL, nothing can be
 * encrypted and stored secrets are left as they are). */
const char *sy_secret_salt(const char *master_key);

/* LiteLLM's newer form, "v3:gcm:" (its default for new writes since
 * general_settings.encryption_algorithm exists): as sy_secret_encrypt. Only
 * LiteLLM versions with the v3 reader read it. */
long sy_secret_encrypt_gcm(const char *plain, size_t n, const char *salt, char *out, size_t cap);
size_t sy_secret_encrypted_gcm_len(size_t n);

/* NaCl's crypto_secretbox with an explicit key and nonce, for the published
 * test vectors: box is tag(16) || ciphertext(n - 16). 0, or -1 (open: the
 * tag does not verify; out is then zeroed). */
#define SY_SECRETBOX_NONCE 24
#define SY_SECRETBOX_TAG   16
int sy__secretbox_open(unsigned char *out, const unsigned char *box, size_t n,
                       const unsigned char nonce[SY_SECRETBOX_NONCE], const unsigned char key[32]);
int sy__secretbox_seal(unsigned char *box, const unsigned char *msg, size_t n,
                       const unsigned char nonce[SY_SECRETBOX_NONCE], const unsigned char key[32]);

#endif
