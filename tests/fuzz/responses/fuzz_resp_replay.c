/* fuzz_resp_replay.c - arbitrary bytes as a response object through
 * sy_resp_sse_replay (responses/replay.c). Checked: a replay that succeeds is
 * "event: T\ndata: <valid JSON>\n\n" frames whose data is an object with
 * "type" T and "sequence_number" 0, 1, 2 ..., the last one
 * response.completed / .incomplete / .failed; a refusal is SY_EJSON or
 * SY_ENOSPC, never a crash. */
#include <stdint.h>
#include <string.h>

#include "core/errors.h"
#include "responses/responses.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_buf out;
    sy_buf_init(&out, 8u << 20);
    int rc = sy_resp_sse_replay((const char *)data, size, &a, &out);
    if (rc != 0 && rc != SY_EJSON && rc != SY_ENOSPC)
        __builtin_trap();
    if (rc == 0) {
        const char *p = out.p, *e = out.p + out.len, *last = NULL;
        int64_t seq = 0;
        while (p < e) {
            if ((size_t)(e - p) < 7 || memcmp(p, "event: ", 7))
                __builtin_trap();
            const char *nl = memchr(p, '\n', (size_t)(e - p));
            if (!nl || (size_t)(e - nl) < 7 || memcmp(nl + 1, "data: ", 6))
                __builtin_trap();
            const char *d = nl + 7, *end = memmem(d, (size_t)(e - d), "\n\n", 2);
            if (!end)
                __builtin_trap();
            struct sy_jdoc doc;
            int64_t s;
            if (sy_jdom_parse(&doc, d, (size_t)(end - d), &a, 0) != 0 ||
                sy_jdom_i64(&doc, sy_jdom_get(&doc, 0, "sequence_number"), &s) != 1 || s != seq++)
                __builtin_trap();
            size_t tl = (size_t)(nl - p - 7);
            char type[64];
            if (tl >= sizeof type)
                __builtin_trap();
            memcpy(type, p + 7, tl);
            type[tl] = 0;
            if (!sy_jdom_str_eq(&doc, sy_jdom_get(&doc, 0, "type"), type))
                __builtin_trap();
            last = p + 7;
            p = end + 2;
        }
        if (!last || (memcmp(last, "response.completed\n", 19) && memcmp(last, "response.incomplete\n", 20) &&
                      memcmp(last, "response.failed\n", 16)))
            __builtin_trap();
    }
    sy_buf_free(&out);
    sy_arena_free(&a);
    return 0;
}
