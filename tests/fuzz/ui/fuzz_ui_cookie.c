/* fuzz_ui_cookie.c - libFuzzer harness for the admin UI's cookie path
 * (src/ui/session.c): the Cookie header parser on the whole input, then the
 * session-token verifier on the value it finds (and on the raw input), under
 * a fixed salt. A token that verifies must re-sign to the same bytes (one
 * spelling per session), and its CSRF token must be 64 hex. Never crashes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ui/ui.h"

static const char SALT[] = "sk-fuzz-master";

static void check_token(const char *v, size_t n)
{
    struct sy_ui_sess s;
    if (sy_ui_token_verify(SALT, v, n, 1000, &s) != 0)
        return;
    char again[SY_UI_TOKEN_MAX + 1], csrf[65];
    int m = sy_ui_token_make(SALT, &s, again, sizeof again);
    if (m < 0 || (size_t)m != n || memcmp(again, v, n) != 0)
        abort();
    if (sy_ui_csrf(SALT, &s, csrf) != 0 || strlen(csrf) != 64)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *h = (const char *)data, *v = NULL;
    size_t vn = 0;
    int rc = sy_ui_cookie_get(h, size, SY_UI_COOKIE, &v, &vn);
    if (rc == 1) {
        if (v < h || v + vn > h + size)
            abort();
        check_token(v, vn);
    }
    check_token(h, size);
    return 0;
}
