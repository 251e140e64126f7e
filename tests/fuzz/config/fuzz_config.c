/* fuzz_config.c - libFuzzer harness: random bytes into sy_config_load_string_ex.
 * Must never crash or leak; include: and setenv are disabled so the input
 * cannot read files or grow the environment. */
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sy_config *c = NULL;
    char err[256];
    if (sy_config_load_string_ex((const char *)data, size, "fuzz.yaml", NULL,
                                 SY_CONFIG_QUIET | SY_CONFIG_NO_SETENV | SY_CONFIG_NO_INCLUDE, &c, err,
                                 sizeof err) == 0) {
        sy_config_ref(c);
        sy_config_unref(c);
        sy_config_unref(c);
    }
    return 0;
}
