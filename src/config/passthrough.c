/* passthrough.c - general_settings.pass_through_endpoints, as LiteLLM's
 * PassThroughGenericEndpoint (proxy/_types.py):
 *
 *   pass_through_endpoints:
 *     - path: /v1/rerank                      route served (leading '/'; a trailing '/' is dropped)
 *       target: https://api.cohere.com/v1/rerank
 *       headers:                              sent with every call; a value holding
 *         Authorization: bearer os.environ/COHERE_API_KEY   "os.environ/NAME" gets NAME's value there
 *       auth: true                            a virtual key or the master key is required (default true)
 *       forward_headers: false                the client's headers go too (default false)
 *       include_subpath: false                /v1/rerank/x goes to target + /x (default false)
 *
 * A whole-value os.environ/ reference was already resolved by the loader
 * (load.c; a target left null by an unset variable, or one that is not an
 * http(s) URL, is warned about and not served, as LiteLLM fails only at the call); the embedded form ("bearer
 * os.environ/X") is LiteLLM's set_env_variables_in_header. An entry without path or target, a path without its leading
 * '/', a header name or value with a line break, or a path given twice fails the load.
 */
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/loader.h"
#include "config/ytree.h"

static const char *env_in_value(struct sy_ld *ld, const char *v)
{
    const char *k = strstr(v, "os.environ/");
    if (!k)
        return v;
    const char *name = k + 11, *val = getenv(name);
    size_t pre = (size_t)(k - v), vl = val ? strlen(val) : 0;
    char *o = sy_arena_alloc(ld->a, pre + vl + 1);
    memcpy(o, v, pre);
    memcpy(o + pre, val ? val : "", vl);
    o[pre + vl] = 0;
    return o;
}

static int bad_text(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 && *s != '\t')
            return 1;
    return 0;
}

static int read_one(struct sy_ld *ld, const struct sy_ynode *it, struct sy_ptendpoint *e)
{
    if (it->kind != SY_Y_MAP) {
        sy__ld_error(ld, it->file, it->line, "general_settings.pass_through_endpoints: an entry is %s, not a mapping",
                     sy__ykind_name(it->kind));
        return -1;
    }
    e->auth = 1;
    e->path = sy__get_str(ld, sy__ymap_get(it, "path"), "general_settings.pass_through_endpoints[].path");
    const struct sy_ynode *tn = sy__ymap_get(it, "target");
    if (tn && tn->kind == SY_Y_NULL) { /* an unset os.environ/ reference: LiteLLM fails at the call */
        sy__ld_warn(ld, tn->file, tn->line,
                    "general_settings.pass_through_endpoints: the target is null (an unset environment "
                    "variable?); the entry is not served");
        return 1;
    }
    e->target = sy__get_str(ld, tn, "general_settings.pass_through_endpoints[].target");
    if (!e->path || !e->target || e->path[0] != '/' || bad_text(e->path) || bad_text(e->target)) {
        sy__ld_error(ld, it->file, it->line,
                     "general_settings.pass_through_endpoints: each entry needs a path starting with '/' and a "
                     "target URL");
        return -1;
    }
    if (strncmp(e->target, "http://", 7) != 0 && strncmp(e->target, "https://", 8) != 0) {
        sy__ld_warn(ld, it->file, it->line,
                    "general_settings.pass_through_endpoints: target %.200s is not an http(s) URL; %.200s is not "
                    "served",
                    e->target, e->path);
        return 1;
    }
    size_t pl = strlen(e->path);
    while (pl > 1 && e->path[pl - 1] == '/')
        pl--;
    e->path = sy_arena_strndup(ld->a, e->path, pl);
    int b;
    if (sy__get_bool(ld, sy__ymap_get(it, "auth"), "general_settings.pass_through_endpoints[].auth", &b) > 0)
        e->auth = b;
    if (sy__get_bool(ld, sy__ymap_get(it, "forward_headers"),
                     "general_settings.pass_through_endpoints[].forward_headers", &b) > 0)
        e->forward_headers = b;
    if (sy__get_bool(ld, sy__ymap_get(it, "include_subpath"),
                     "general_settings.pass_through_endpoints[].include_subpath", &b) > 0)
        e->include_subpath = b;
    const struct sy_ynode *h = sy__ymap_get(it, "headers");
    if (h && h->kind == SY_Y_MAP && h->n) {
        e->hname = sy_arena_alloc(ld->a, h->n * sizeof *e->hname);
        e->hvalue = sy_arena_alloc(ld->a, h->n * sizeof *e->hvalue);
        for (size_t i = 0; i < h->n; i++) {
            const struct sy_ynode *v = h->pairs[i].val;
            if (!v || v->kind == SY_Y_NULL)
                continue; /* an unset os.environ/ reference (warned by the loader) */
            const char *name = sy__key_text(ld, h->pairs[i].key);
            const char *val = v->kind == SY_Y_STR ? v->s : v->s ? v->s : "";
            val = env_in_value(ld, val);
            if (!name[0] || bad_text(name) || strpbrk(name, ": ") || bad_text(val)) {
                sy__ld_error(ld, v->file, v->line,
                             "general_settings.pass_through_endpoints: header %.80s is not a valid header line", name);
                return -1;
            }
            e->hname[e->nheaders] = name;
            e->hvalue[e->nheaders++] = val;
        }
    } else if (h && h->kind != SY_Y_NULL && h->kind != SY_Y_MAP) {
        sy__ld_error(ld, h->file, h->line, "general_settings.pass_through_endpoints: headers is %s, not a mapping",
                     sy__ykind_name(h->kind));
        return -1;
    }
    return 0;
}

void sy__fill_pass_through(struct sy_ld *ld, const struct sy_ynode *v)
{
    if (!v || v->kind == SY_Y_NULL)
        return;
    if (v->kind != SY_Y_SEQ) {
        sy__ld_error(ld, v->file, v->line, "general_settings.pass_through_endpoints: expected a list, found %s",
                     sy__ykind_name(v->kind));
        return;
    }
    struct sy_config *c = ld->c;
    c->pt_endpoints = sy_arena_alloc(ld->a, (v->n ? v->n : 1) * sizeof *c->pt_endpoints);
    memset(c->pt_endpoints, 0, (v->n ? v->n : 1) * sizeof *c->pt_endpoints);
    for (size_t i = 0; i < v->n; i++) {
        struct sy_ptendpoint *e = &c->pt_endpoints[c->n_pt_endpoints];
        int rc = read_one(ld, v->items[i], e);
        if (rc < 0)
            return;
        if (rc > 0) {
            memset(e, 0, sizeof *e);
            continue;
        }
        for (size_t j = 0; j < c->n_pt_endpoints; j++)
            if (strcmp(c->pt_endpoints[j].path, e->path) == 0) {
                sy__ld_error(ld, v->items[i]->file, v->items[i]->line,
                             "general_settings.pass_through_endpoints: path %.200s is given twice", e->path);
                return;
            }
        c->n_pt_endpoints++;
    }
}
