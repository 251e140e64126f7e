/* fuzz_tok_count.c - libFuzzer: request bodies (chat, tools, images, prompt)
 * never crash the LiteLLM-rule counter or the /utils/token_counter writer. */
#include <stdint.h>
#include <stdlib.h>

#include "core/buf.h"
#include "tokenizer/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (sy_tok_init() != 0)
        abort();
    (void)sy_tok_count_request(sy_tok_get(SY_TOK_CL100K), (const char *)data, size);
    struct sy_buf out;
    sy_buf_init(&out, 1 << 20);
    int st = sy_tok_counter_response((const char *)data, size, NULL, NULL, &out);
    if (st != 200 && st != 400)
        abort();
    sy_buf_free(&out);
    return 0;
}
