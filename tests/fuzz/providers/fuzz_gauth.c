/* fuzz_gauth.c - libFuzzer harness for the credential and token parsers of
 * gauth.c:
 *
 *   input = mode (1) | payload
 *   mode % 3:  0 sy_gauth_parse_sa (then the request body when it parsed)
 *              1 sy_gauth_parse_token and sy_gauth_token_error
 *              2 sy_gauth_token_body (the payload as the assertion, NUL-cut)
 *
 * No crash, no leak; a parsed token fits its buffer, is NUL-terminated and
 * holds only visible ASCII (it goes into a header line); a form body holds
 * only unreserved characters and '%', '&', '='. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "providers/gauth.h"

static void must_form(const struct sy_buf *b)
{
    for (size_t i = 0; i < b->len; i++) {
        unsigned char c = (unsigned char)b->p[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || strchr("-._~%&=", c)))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 1 << 16)
        return 0;
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    switch (data[0] % 3) {
    case 0: {
        struct sy_gauth_sa sa;
        char err[128];
        if (sy_gauth_parse_sa(p, n, &sa, err, sizeof err) == 0) {
            if (!sa.token_uri || (sa.kind == SY_GAUTH_SERVICE_ACCOUNT && (!sa.client_email || !sa.private_key)))
                abort();
            struct sy_buf b;
            sy_buf_init(&b, 1 << 20);
            if (sy_gauth_request_body(&sa, 1700000000, NULL, &b) == 0)
                must_form(&b);
            sy_buf_free(&b);
        } else if (!memchr(err, 0, sizeof err) || sa.client_email || sa.private_key || sa.token_uri) {
            abort();
        }
        sy_gauth_sa_free(&sa);
        break;
    }
    case 1: {
        char tok[64], msg[96];
        int64_t ttl = -1;
        memset(tok, 0x41, sizeof tok);
        if (sy_gauth_parse_token(p, n, tok, sizeof tok, &ttl) == 0) {
            size_t l = strnlen(tok, sizeof tok);
            if (l == 0 || l == sizeof tok || ttl < 0)
                abort();
            for (size_t i = 0; i < l; i++)
                if ((unsigned char)tok[i] < 0x21 || (unsigned char)tok[i] > 0x7e)
                    abort();
        }
        sy_gauth_token_error(p, n, msg, sizeof msg);
        if (!memchr(msg, 0, sizeof msg))
            abort();
        break;
    }
    case 2: {
        char *jwt = strndup(p, n);
        struct sy_buf b;
        sy_buf_init(&b, 1 << 20);
        if (sy_gauth_token_body(jwt, &b) == 0)
            must_form(&b);
        sy_buf_free(&b);
        free(jwt);
        break;
    }
    }
    return 0;
}
