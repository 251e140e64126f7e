/* pconf.c - provider settings of a deployment (struct sy_pconf, adapter.h):
 * freeing them, and the settings every adapter reads the same way. */
#include "providers/adapter.h"

#include <stdlib.h>

void sy_pconf_free(struct sy_pconf *pc)
{
    if (!pc)
        return;
    free(pc->base);
    free(pc->key);
    free(pc->region);
    free(pc->project);
    free(pc->access_key);
    free(pc->secret_key);
    free(pc->session_token);
    free(pc->credentials);
    free(pc->version);
    for (size_t i = 0; i < pc->n_drop_extra; i++)
        free(pc->drop_extra[i]);
    free(pc->drop_extra);
    free(pc->priv);
}
