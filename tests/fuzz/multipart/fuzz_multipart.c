/* fuzz_multipart.c - libFuzzer harness for src/http/multipart.c. The input is
 * a Content-Type line, a newline, then a body (exact-size copies, so ASan
 * sees any read outside them). Must never crash; a value found lies inside
 * the body and is followed there by CRLF "--" boundary. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/multipart.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t ctn = nl ? (size_t)(nl - data) : size;
    size_t n = nl ? size - ctn - 1 : 0;
    char *ct = malloc(ctn ? ctn : 1), *body = malloc(n ? n : 1);
    if (!ct || !body)
        abort();
    memcpy(ct, data, ctn);
    if (n)
        memcpy(body, nl + 1, n);
    const char *b;
    size_t bn;
    if (sy_multipart_boundary(ct, ctn, &b, &bn) == 0) {
        if (bn < 1 || bn > 70 || b < ct || b + bn > ct + ctn)
            abort();
        static const char *names[] = {"model", "file", "purpose", ""};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            size_t off = 0, len = 0;
            int r = sy_multipart_field(body, n, b, bn, names[i], &off, &len);
            if (r < -2 || r > 1)
                abort();
            if (r == 1 && (off > n || len > n - off || n - off - len < 4 + bn ||
                           memcmp(body + off + len, "\r\n--", 4) != 0 || memcmp(body + off + len + 4, b, bn) != 0))
                abort();
        }
    }
    free(ct);
    free(body);
    return 0;
}
