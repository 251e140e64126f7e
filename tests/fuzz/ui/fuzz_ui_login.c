/* fuzz_ui_login.c - libFuzzer harness for POST /login's body parser
 * (src/ui/session.c sy_ui_login_parse): the first byte picks the
 * Content-Type (form, JSON, none, other), the rest is the body. On success
 * both fields must be NUL-terminated inside their buffers; on failure a
 * reason is given. Also runs the Accept-Encoding parser on the body. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ui/ui.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const char *const types[] = {"application/x-www-form-urlencoded", "application/json", NULL,
                                        "text/plain", "application/json; charset=utf-8"};
    const char *ct = types[data[0] % 5];
    const char *body = (const char *)data + 1;
    size_t n = size - 1;
    char user[16], pass[24];
    const char *why = NULL;
    if (sy_ui_login_parse(ct, ct ? strlen(ct) : 0, body, n, user, sizeof user, pass, sizeof pass, &why) == 0) {
        if (!memchr(user, 0, sizeof user) || !memchr(pass, 0, sizeof pass))
            abort();
    } else if (!why) {
        abort();
    }
    (void)sy_ui_accepts_gzip(body, n);
    return 0;
}
