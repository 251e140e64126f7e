/* secretbox.c - NaCl's crypto_secretbox (XSalsa20-Poly1305, libsodium's
 * implementation) for the credentials LiteLLM encrypts in its database; see
 * secretbox.h. Only credentials (tens of bytes, at a reload) go through it.
 */
#include "mcp/secretbox.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sodium.h>
#include <stdint.h>
#include <string.h>

_Static_assert(SY_SECRETBOX_NONCE == crypto_secretbox_NONCEBYTES, "NaCl's nonce");
_Static_assert(SY_SECRETBOX_TAG == crypto_secretbox_MACBYTES, "NaCl's tag");

static int sodium_ready(void)
{
    return sodium_init() >= 0; /* idempotent and thread-safe */
}

int sy__mcp_secretbox_open(unsigned char *out, const unsigned char *box, size_t n,
                           const unsigned char nonce[SY_SECRETBOX_NONCE], const unsigned char key[32])
{
    if (n < SY_SECRETBOX_TAG || !sodium_ready())
        return -1;
    /* libsodium's "easy" layout is NaCl's box: the tag, then the ciphertext */
    if (crypto_secretbox_open_easy(out, box, n, nonce, key) != 0) {
        memset(out, 0, n - SY_SECRETBOX_TAG);
        return -1;
    }
    return 0;
}

int sy__mcp_secretbox_seal(unsigned char *box, const unsigned char *msg, size_t n,
                           const unsigned char nonce[SY_SECRETBOX_NONCE], const unsigned char key[32])
{
    if (!sodium_ready())
        return -1;
    static const unsigned char none[1];
    return crypto_secretbox_easy(box, msg ? msg : none, n, nonce, key) == 0 ? 0 : -1;
}

static int b64v(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

/* Base64, either alphabet, padding optional. Bytes, or -1. */
static long b64dec(unsigned char *out, size_t cap, const char *s)
{
    size_t n = strlen(s), o = 0;
    while (n && s[n - 1] == '=')
        n--;
    if (n % 4 == 1)
        return -1;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64v((unsigned char)s[i]);
        if (v < 0)
            return -1;
        acc = (acc << 6 | (uint32_t)v) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o >= cap)
                return -1;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    return (long)o;
}

long sy__mcp_litellm_decrypt(const char *v, const char *salt, char *out, size_t cap)
{
    unsigned char raw[4096], key[32];
    unsigned int kl = 0;
    if (!v || !salt || !*salt || strlen(v) > 4 * sizeof raw / 3)
        return -1;
    long n = b64dec(raw, sizeof raw, v);
    if (n < SY_SECRETBOX_NONCE + SY_SECRETBOX_TAG || (size_t)n - SY_SECRETBOX_NONCE - SY_SECRETBOX_TAG >= cap)
        return -1;
    if (!EVP_Digest(salt, strlen(salt), key, &kl, EVP_sha256(), NULL) || kl != 32)
        return -1;
    size_t ml = (size_t)n - SY_SECRETBOX_NONCE - SY_SECRETBOX_TAG;
    int r = sy__mcp_secretbox_open((unsigned char *)out, raw + SY_SECRETBOX_NONCE, (size_t)n - SY_SECRETBOX_NONCE, raw,
                                   key);
    OPENSSL_cleanse(key, sizeof key);
    if (r < 0 || memchr(out, 0, ml))
        return -1;
    out[ml] = 0;
    return (long)ml;
}
