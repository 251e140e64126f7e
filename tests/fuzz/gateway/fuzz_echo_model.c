/* fuzz_echo_model.c - libFuzzer harness for sy_xlate_echo_model (xlate.h),
 * which rewrites the model of a native answer or stream event the upstream
 * sent: any bytes in. No crash, no leak; with nothing replaced the output is
 * the input byte for byte; with k values replaced it is longer or shorter
 * by exactly k times the length difference of the names (the input's values
 * are those of a fixed-length model in the seeds, so only the bound is
 * checked here): never past the input plus k quoted names. The same input
 * through sy_xlate_echo_top (OpenAI's answers): out untouched when it
 * replaces nothing, else exactly one value replaced, so the output is the
 * input with one span cut and the quoted name put in its place. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "gateway/xlate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 20)
        return 0;
    static const char name[] = "claude-sonnet-4-5";
    struct sy_buf b;
    sy_buf_init(&b, 4u << 20);
    int k = sy_xlate_echo_model((const char *)data, size, name, &b);
    if (k < 0 || k > 3)
        abort();
    if (!k && (b.len != size || (size && memcmp(b.p, data, size) != 0)))
        abort();
    if (k && b.len > size + (size_t)k * (sizeof name + 1))
        abort();
    sy_buf_free(&b);
    sy_buf_init(&b, 4u << 20);
    int t = sy_xlate_echo_top((const char *)data, size, name, &b);
    if (t != 0 && t != 1)
        abort();
    if (!t && b.len)
        abort();
    if (t && (b.len > size + sizeof name + 1 || b.len < sizeof name + 1))
        abort();
    sy_buf_free(&b);
    return 0;
}
