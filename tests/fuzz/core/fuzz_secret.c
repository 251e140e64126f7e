/* fuzz_secret.c - core/secret.c on arbitrary bytes.
 *
 * The input, as a stored value, under a salt key nobody used to write it:
 * never decrypts (a forged tag), and nothing reads past it. The input, as a
 * plaintext, written in both formats: reads back to itself when it is text
 * (UTF-8, no NUL), else is refused; the written value with one character
 * changed (at a place and to a character the input picks) either is refused
 * or still reads as the same plaintext (base64 spellings that decode alike),
 * never as anything else.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/secret.h"
#include "core/utf8.h"

static const char K[] = "fuzz-salt";

static void round_trip(const uint8_t *data, size_t size, int gcm)
{
    size_t cap = (gcm ? sy_secret_encrypted_gcm_len(size) : sy_secret_encrypted_len(size)) + 1;
    char *enc = malloc(cap), *out = malloc(size + 1);
    if (!enc || !out)
        abort();
    long l = gcm ? sy_secret_encrypt_gcm((const char *)data, size, K, enc, cap)
                 : sy_secret_encrypt((const char *)data, size, K, enc, cap);
    if (l != (long)cap - 1)
        abort();
    int text = !memchr(data, 0, size) && sy_utf8_check((const char *)data, size) == size;
    long r = sy_secret_decrypt(enc, K, out, size + 1);
    if (text ? r != (long)size || memcmp(out, data, size) != 0 : r != -1)
        abort();
    if (size >= 2) {
        static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=:!";
        size_t at = ((size_t)data[0] << 8 | data[1]) % (size_t)l;
        enc[at] = A[data[size - 1] % (sizeof A - 1)];
        r = sy_secret_decrypt(enc, K, out, size + 1);
        if (r != -1 && (!text || r != (long)size || memcmp(out, data, size) != 0))
            abort();
    }
    free(enc);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *v = malloc(size + 1), out[4096];
    if (!v)
        return 0;
    memcpy(v, data, size);
    v[size] = 0;
    if (sy_secret_decrypt(v, K, out, sizeof out) >= 0)
        abort(); /* a forged ciphertext */
    free(v);
    if (size > 4096)
        return 0;
    round_trip(data, size, 0);
    round_trip(data, size, 1);
    return 0;
}
