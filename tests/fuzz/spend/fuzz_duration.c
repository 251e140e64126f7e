/* fuzz_duration.c - libFuzzer harness: random text as a budget_duration for
 * sy_duration_seconds and sy_duration_next. Must never crash; a reset time is
 * never before now. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spend/spend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    (void)sy_duration_seconds(s);
    static const double nows[] = {0,    1710324930.5, 1735689599.999, 951782400 /* 2000-02-29 */, 4102444799, -86400.5,
                                  1e13, NAN,          INFINITY};
    for (size_t i = 0; i < sizeof nows / sizeof nows[0]; i++) {
        double r = sy_duration_next(s, nows[i]);
        if (r != -1 && isfinite(nows[i]) && r < nows[i])
            abort();
    }
    free(s);
    return 0;
}
