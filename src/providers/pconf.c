/* pconf.c - provider settings of a deployment (struct sy_pconf, adapter.h):
 * freeing them, and the settings every adapter reads the same way. */
#include "providers/adapter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int sy_pconf_drop_list(const char *v, struct sy_pconf *pc, char *err, size_t errlen)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    int rc = -1;
    if (sy_jdom_parse(&d, v, strlen(v), &a, 0) || d.n[0].type != 'a')
        goto out;
    pc->drop_extra = calloc(d.n[0].kids + 1, sizeof *pc->drop_extra);
    if (!pc->drop_extra)
        goto out;
    for (uint32_t e = sy_jdom_first(&d, 0); e; e = sy_jdom_next(&d, e)) {
        size_t n;
        const char *s = sy_jdom_str(&d, e, &a, &n);
        char *c = s ? malloc(n + 1) : NULL;
        if (!c)
            goto out;
        memcpy(c, s, n + 1);
        pc->drop_extra[pc->n_drop_extra++] = c;
    }
    rc = 0;
out:
    if (rc)
        snprintf(err, errlen, "additional_drop_params must be a list of parameter names, got %s", v);
    sy_arena_free(&a);
    return rc;
}

int sy_pconf_has_ctl(const char *s)
{
    for (; s && *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

void sy_pconf_trim_base(char *b, const char *const *tails, size_t nt)
{
    size_t n = strlen(b);
    while (n && b[n - 1] == '/')
        b[--n] = 0;
    for (size_t i = 0; i < nt; i++) {
        size_t t = strlen(tails[i]);
        if (n > t && !strcmp(b + n - t, tails[i])) {
            b[n -= t] = 0;
            break;
        }
    }
    while (n && b[n - 1] == '/')
        b[--n] = 0;
}
