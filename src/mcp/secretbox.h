/* secretbox.h - internal to src/mcp/: NaCl's crypto_secretbox
 * (XSalsa20-Poly1305), the cipher LiteLLM's encrypt_value_helper uses for
 * the credentials it stores in LiteLLM_MCPServerTable (PyNaCl SecretBox
 * under sha256 of the salt key; the value is base64 of nonce, tag and
 * ciphertext). conf.c opens such values so that a database LiteLLM wrote
 * keeps working. */
#ifndef SY_MCP_SECRETBOX_H
#define SY_MCP_SECRETBOX_H

#include <stddef.h>

#define SY_SECRETBOX_NONCE 24
#define SY_SECRETBOX_TAG   16

/* box: tag (16) then ciphertext (n - 16 bytes); out gets n - 16 bytes.
 * 0, or -1 when n < 16 or the tag does not verify (out then zeroed). */
int sy__mcp_secretbox_open(unsigned char *out, const unsigned char *box, size_t n,
                           const unsigned char nonce[SY_SECRETBOX_NONCE], const unsigned char key[32]);
/* The reverse: box gets the tag and n bytes of ciphertext. 0 or -1. */
int sy__mcp_secretbox_seal(unsigned char *box, const unsigned char *msg, size_t n,
                           const unsigned char nonce[SY_SECRETBOX_NONCE], const unsigned char key[32]);

/* A stored value as LiteLLM's decrypt_value_helper reads it: base64
 * (url-safe or standard) of nonce, tag, ciphertext, under sha256(salt).
 * The plaintext (NUL-terminated, in out of cap bytes) and its length, or -1
 * when v is not such a value under this salt (the caller keeps v as it is,
 * as LiteLLM does with return_original_value). */
long sy__mcp_litellm_decrypt(const char *v, const char *salt, char *out, size_t cap);

#endif
