/* fuzz_mcp_session.c - libFuzzer harness for the signed session ids
 * (src/mcp/session.c). The input is read as a token under a fixed secret
 * (it must be refused: nobody forges a mac by chance, and nothing may read
 * past the token); then its first bytes fill a session's fields, which are
 * minted and read back (they must round-trip), and the minted token with one
 * byte changed at a place the input picks must be refused. The input is also
 * read as a credential LiteLLM stored encrypted (src/core/secret.c): a
 * random one never opens. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp.h"
#include "core/secret.h"

static const char K[] = "fuzz-secret";

static void fill(char *dst, size_t cap, const uint8_t **p, size_t *n)
{
    size_t l = 0;
    if (*n) {
        l = **p % cap;
        (*p)++;
        (*n)--;
    }
    size_t k = 0;
    for (size_t i = 0; i < l && *n; i++, (*p)++, (*n)--)
        if (**p) /* fields are C strings */
            dst[k++] = (char)**p;
    dst[k] = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *tok = malloc(size ? size : 1);
    if (!tok)
        return 0;
    memcpy(tok, data, size);
    struct sy_mcp_session s, r;
    if (sy_mcp_session_read(K, sizeof K - 1, tok, size, 0, &r) == 0)
        abort(); /* a forged session */
    free(tok);
    char *cred = malloc(size + 1), plain[256];
    if (!cred)
        return 0;
    memcpy(cred, data, size);
    cred[size] = 0;
    if (sy_secret_decrypt(cred, K, plain, sizeof plain) >= 0)
        abort(); /* a forged ciphertext */
    free(cred);

    memset(&s, 0, sizeof s);
    const uint8_t *p = data;
    size_t n = size;
    fill(s.key_hash, sizeof s.key_hash, &p, &n);
    fill(s.version, sizeof s.version, &p, &n);
    fill(s.scope, sizeof s.scope, &p, &n);
    char out[512];
    int len = sy_mcp_session_mint(K, sizeof K - 1, &s, out, sizeof out);
    if (len <= 0)
        abort();
    if (sy_mcp_session_read(K, sizeof K - 1, out, (size_t)len, 3600, &r) != 0)
        abort();
    if (strcmp(r.key_hash, s.key_hash) || strcmp(r.version, s.version) || strcmp(r.scope, s.scope))
        abort();
    if (n >= 2) {
        size_t at = p[0] % (size_t)len;
        char c = (char)p[1];
        if (out[at] != c) {
            out[at] = c;
            if (sy_mcp_session_read(K, sizeof K - 1, out, (size_t)len, 0, &r) == 0)
                abort();
        }
    }
    return 0;
}
