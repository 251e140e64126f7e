/* fuzz_prices.c - libFuzzer harness: random bytes as a LiteLLM-format price
 * file (sy_prices_load_buffer), then as a model name for every lookup rule.
 * Must never crash or leak; retired tables are freed after each input. Also
 * a differential: the lazy index (used for the built-in map) against the
 * whole parse. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spend/spend.h"

int sy_prices_load_buffer(const char *json, size_t n, char *err, size_t errlen);
void sy__prices_release_old(void);
int sy__prices_lazy_diff(const char *json, size_t n);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    if (sy__prices_lazy_diff((const char *)data, size))
        abort(); /* the built-in map's lazy index must read a text as the whole parse does */
    if (sy_prices_load_buffer((const char *)data, size, err, sizeof err) == 0) {
        size_t n = sy_prices_count();
        for (size_t i = 0; i < n; i++) {
            const struct sy_price *p = sy_price_at(i);
            if (sy_price_find(NULL, p->key) != p)
                abort(); /* every key must find its own entry */
            struct sy_dprice dp;
            struct sy_usage u = {.prompt_tokens = 300000,
                                 .completion_tokens = 10,
                                 .cached_tokens = 5,
                                 .cache_creation_tokens = 7,
                                 .cache_creation_1h_tokens = 4,
                                 .reasoning_tokens = 3};
            sy_dprice_from(&dp, p);
            (void)sy_cost(&dp, &u);
            (void)sy_cost_bound(&dp, 1000, 0);
        }
    }
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = 0;
        (void)sy_price_find(NULL, s);
        (void)sy_price_find("bedrock", s);
        (void)sy_price_find(s, "gpt-4o");
        (void)sy_price_supports(s, s, SY_SUPPORTS_REASONING);
        free(s);
    }
    sy_prices_load(NULL, err, sizeof err);
    sy__prices_release_old();
    return 0;
}
