/* sy_tokenize.c - test tool: print the token ids of framed texts.
 *
 *   sy-tokenize ENCODING < frames      (ENCODING: cl100k_base | o200k_base)
 *
 * Input is a sequence of frames "<decimal byte length>\n<bytes>"; for each
 * frame one output line with the space-separated ids. Used by the Node
 * differential test against npm tiktoken (tests/tokenizer/) and by the bench.
 * With -c it prints only the count of each text; with -d it also checks that
 * decode(encode(x)) == x and exits 1 otherwise. With -r each frame is a
 * request body (JSON) and the line is its LiteLLM token_counter count
 * (sy_tok_count_request: messages + tools + tool_choice), or "error N".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "tokenizer/tokenizer.h"

int main(int argc, char **argv)
{
    int count_only = 0, check = 0, request = 0, opt;
    while ((opt = getopt(argc, argv, "cdr")) != -1) {
        if (opt == 'r')
            request = 1;
        else if (opt == 'c')
            count_only = 1;
        else if (opt == 'd')
            check = 1;
        else
            return 2;
    }
    if (optind >= argc) {
        fprintf(stderr, "usage: sy-tokenize [-c|-d|-r] cl100k_base|o200k_base < frames\n");
        return 2;
    }
    int e = sy_tok_encoding_by_name(argv[optind], strlen(argv[optind]));
    if (e < 0 || sy_tok_init() != 0) {
        fprintf(stderr, "sy-tokenize: bad encoding or init failed\n");
        return 2;
    }
    const struct sy_tok *t = sy_tok_get((enum sy_tok_encoding)e);
    char *text = NULL;
    uint32_t *ids = NULL;
    size_t cap = 0;
    long len;
    static char obuf[1 << 16];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    while (scanf("%ld", &len) == 1) {
        if (getchar() != '\n' || len < 0)
            return 2;
        text = realloc(text, (size_t)len + 1);
        if ((long)fread(text, 1, (size_t)len, stdin) != len)
            return 2;
        size_t n = 0;
        if (request) {
            long k = sy_tok_count_request(t, text, (size_t)len);
            printf(k >= 0 ? "%ld\n" : "error %ld\n", k);
            continue;
        }
        if (count_only) {
            printf("%zu\n", sy_tok_count(t, text, (size_t)len));
            continue;
        }
        if (sy_tok_encode(t, text, (size_t)len, &ids, &n, &cap) != 0)
            return 3;
        for (size_t i = 0; i < n; i++)
            printf(i ? " %u" : "%u", ids[i]);
        putchar('\n');
        if (check) {
            struct sy_buf b;
            sy_buf_init(&b, (size_t)len + 64);
            if (sy_tok_decode(t, ids, n, &b) != 0 || b.len != (size_t)len ||
                (len && memcmp(b.p, text, (size_t)len) != 0)) {
                fprintf(stderr, "sy-tokenize: round trip failed\n");
                return 1;
            }
            sy_buf_free(&b);
        }
    }
    free(text);
    free(ids);
    return 0;
}
