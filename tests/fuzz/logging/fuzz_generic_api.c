/* fuzz_generic_api.c - libFuzzer harness: the webhook sink's settings
 * (src/logging/sinks/generic_api.c). The input's first line is taken as
 * GENERIC_LOGGER_HEADERS, the rest as the settings object (callback_settings
 * entry or a tenant's callback_vars). Must never crash; when the sink opens,
 * every header line it would send is "Name: value\r\n" with a token name and
 * no CR or LF inside, so no setting can inject a header or a request. */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "logging/logging.h"

static void check_headers(const char *h, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t s = i;
        while (i < n && h[i] != ':') {
            unsigned char c = (unsigned char)h[i];
            if (!(isalnum(c) || strchr("!#$%&'*+-.^_`|~", c)))
                abort();
            i++;
        }
        if (i == s || i + 1 >= n || h[i + 1] != ' ')
            abort();
        i += 2;
        while (i < n && h[i] != '\r' && h[i] != '\n')
            i++;
        if (i + 1 >= n || h[i] != '\r' || h[i + 1] != '\n')
            abort();
        i += 2;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    char *nl = memchr(s, '\n', size);
    const char *vars = NULL;
    if (nl) {
        *nl = 0;
        vars = nl + 1;
    }
    setenv("GENERIC_LOGGER_HEADERS", s, 1);
    setenv("GENERIC_LOGGER_ENDPOINT", "http://127.0.0.1:9/hook", 1);
    const struct sy_sink_ops *ops = sy_sink_find("generic_api");
    struct sy_logconf lc = {0};
    char err[256];
    void *h = ops->open(&lc, vars, err, sizeof err);
    if (h) {
        size_t mb = ops->inst_max_batch(h);
        if (mb < 1 || mb > ops->max_batch)
            abort();
        struct sy_logrec r1 = {.id = "a"}, r2 = {.id = "b", .flags = SY_LOGREC_FAILURE};
        struct sy_logrec *recs[] = {&r1, &r2};
        struct sy_sink_req out[SY_SINK_MAX_REQS];
        memset(out, 0, sizeof out);
        size_t nout = 0;
        if (ops->encode(h, recs, 2, out, &nout) == 0)
            for (size_t i = 0; i < nout; i++) {
                check_headers(out[i].headers.p, out[i].headers.len);
                sy_sink_req_free(&out[i]);
            }
        free(r1.payload);
        free(r2.payload);
        ops->close(h);
    }
    free(s);
    return 0;
}
