/* bench_tok.c - tokenizer throughput, one core.
 *
 *   sy-tok-bench ENCODING FILE...
 *
 * For each file: sy_tok_init() time (first file only), then sy_tok_count()
 * in 5 rounds of at least 0.3 s each; prints "name bytes tokens MB/s" per
 * file with the best round (the machine may be shared, so the best round is
 * the least disturbed one). Used
 * by bench/tokenizer/run.sh next to npm tiktoken on the same files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tokenizer/tokenizer.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* per-core: CPU time of this thread */
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: sy-tok-bench cl100k_base|o200k_base FILE...\n");
        return 2;
    }
    double t0 = now();
    if (sy_tok_init() != 0)
        return 1;
    printf("init_ms %.2f\n", (now() - t0) * 1e3);
    int e = sy_tok_encoding_by_name(argv[1], strlen(argv[1]));
    if (e < 0)
        return 2;
    const struct sy_tok *t = sy_tok_get((enum sy_tok_encoding)e);
    for (int i = 2; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f)
            return 1;
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        char *s = malloc((size_t)n + 1);
        if (!s || fread(s, 1, (size_t)n, f) != (size_t)n)
            return 1;
        fclose(f);
        size_t toks = 0;
        double best = 0;
        for (int round = 0; round < 5; round++) {
            int reps = 0;
            double start = now(), el;
            do {
                toks = sy_tok_count(t, s, (size_t)n);
                reps++;
                el = now() - start;
            } while (el < 0.3);
            double mbs = (double)n * reps / el / 1e6;
            if (mbs > best)
                best = mbs;
        }
        const char *name = strrchr(argv[i], '/');
        printf("%s %ld %zu %.1f\n", name ? name + 1 : argv[i], n, toks, best);
        free(s);
    }
    return 0;
}
