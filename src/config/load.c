/* load.c - sy_config_load*: read, include:, environment_variables, os.environ/, refcount.
 *
 * The order follows LiteLLM 1.80.11 (proxy_server.py ProxyConfig):
 *   1. parse the main file (PyYAML safe_load semantics, ytree.c); empty is an error;
 *   2. include: (a list; paths joined to the main file's directory; not recursive):
 *      each included file's top-level keys are merged one by one, a list value
 *      extending an existing list of the same key, anything else replacing it;
 *   3. environment_variables: exported with setenv (an existing variable wins,
 *      as LiteLLM's get_secret(key) looks the key up first);
 *   4. every map value at any depth (and maps inside lists, not bare list
 *      items) that is a string starting with "os.environ/" is replaced by the
 *      variable's value; "true"/"false" values become booleans (LiteLLM's
 *      str_to_bool in get_secret); an unset variable is a warning and null;
 *   5. fill and validate struct sy_config (schema.c).
 * The snapshot owns one arena; sy_config_unref() to zero frees it in one go.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/loader.h"
#include "core/buf.h"
#include "core/errors.h"
#include "core/log.h"

#define MAX_FILE_BYTES (16u << 20)
#define ENV_MAX_DEPTH  100 /* LiteLLM DEFAULT_MAX_RECURSE_DEPTH */

static void keep_warning(struct sy_ld *ld, const char *msg)
{
    struct sy_config_priv *p = ld->priv;
    if (p->n_warnings == p->cap_warnings) {
        size_t nc = p->cap_warnings ? p->cap_warnings * 2 : 16;
        const char **w = sy_arena_alloc(ld->a, nc * sizeof *w);
        if (p->warnings)
            memcpy(w, p->warnings, p->n_warnings * sizeof *w);
        p->warnings = w;
        p->cap_warnings = nc;
    }
    p->warnings[p->n_warnings++] = sy_arena_strndup(ld->a, msg, strlen(msg));
}

static void vmsg(char *line, size_t cap, const char *file, int line_no, const char *fmt, va_list ap)
{
    int n = line_no > 0 ? snprintf(line, cap, "%s:%d: ", file ? file : "<config>", line_no)
                        : snprintf(line, cap, "%s: ", file ? file : "<config>");
    if (n < 0 || (size_t)n >= cap)
        n = 0;
    vsnprintf(line + n, cap - (size_t)n, fmt, ap);
}

void sy__ld_warn(struct sy_ld *ld, const char *file, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vmsg(msg, sizeof msg, file, line, fmt, ap);
    va_end(ap);
    keep_warning(ld, msg);
    ld->c->n_warnings++;
    if (!(ld->flags & SY_CONFIG_QUIET))
        sy_warn("config: %s", msg);
}

void sy__ld_alert(struct sy_ld *ld, const char *file, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vmsg(msg, sizeof msg, file, line, fmt, ap);
    va_end(ap);
    keep_warning(ld, msg);
    ld->c->n_warnings++;
    if (!(ld->flags & SY_CONFIG_QUIET))
        sy_error("config: %s", msg);
}

void sy__ld_error(struct sy_ld *ld, const char *file, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vmsg(msg, sizeof msg, file, line, fmt, ap);
    va_end(ap);
    if (ld->n_errors++ == 0 && ld->errlen)
        snprintf(ld->err, ld->errlen, "%s", msg);
    if (!(ld->flags & SY_CONFIG_QUIET))
        sy_error("config: %s", msg);
}

int sy__ld_first(struct sy_ld *ld, const char *key)
{
    for (size_t i = 0; i < ld->n_once; i++)
        if (strcmp(ld->once[i], key) == 0)
            return 0;
    if (ld->n_once == ld->cap_once) {
        size_t nc = ld->cap_once ? ld->cap_once * 2 : 16;
        const char **o = sy_arena_alloc(ld->a, nc * sizeof *o);
        if (ld->once)
            memcpy(o, ld->once, ld->n_once * sizeof *o);
        ld->once = o;
        ld->cap_once = nc;
    }
    ld->once[ld->n_once++] = sy_arena_strndup(ld->a, key, strlen(key));
    return 1;
}

static void ywarn(void *ud, const char *file, int line, const char *fmt, ...)
{
    struct sy_ld *ld = ud;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sy__ld_warn(ld, file, line, "%s", msg);
}

/* Read a regular file (capped). Returns a malloc'd buffer or NULL with errno-ish reason. */
static char *read_file(const char *path, size_t *len, const char **why)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        *why = "file not found";
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        *why = "not a regular file";
        return NULL;
    }
    if ((unsigned long long)st.st_size > MAX_FILE_BYTES) {
        *why = "file larger than 16 MB";
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        *why = "cannot open file";
        return NULL;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    size_t n = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
    fclose(f);
    if (!buf) {
        *why = "out of memory";
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

/* Parse a file or string into a top-level map; reports errors itself. */
static struct sy_ynode *parse_top(struct sy_ld *ld, const char *yaml, size_t len, const char *file, int inc_line,
                                  const char *inc_file)
{
    char err[512];
    struct sy_ynode *root = NULL;
    if (sy__ytree_parse(ld->a, yaml, len, file, &root, ywarn, ld, err, sizeof err) != 0) {
        sy__ld_error(ld, NULL, 0, "%s", err);
        return NULL;
    }
    if (!root || root->kind == SY_Y_NULL) {
        if (inc_file)
            sy__ld_error(ld, inc_file, inc_line, "included file %s is empty", file);
        else
            sy__ld_error(ld, file, 0, "config cannot be None or empty");
        return NULL;
    }
    if (root->kind != SY_Y_MAP) {
        sy__ld_error(ld, file, root->line, "the top level must be a map of settings, found %s",
                     sy__ykind_name(root->kind));
        return NULL;
    }
    return root;
}

static void process_includes(struct sy_ld *ld, struct sy_ynode *root, const char *dir)
{
    struct sy_ypair *inc = sy__ymap_pair(root, "include");
    if (!inc)
        return;
    struct sy_ynode *list = inc->val;
    /* drop the include key itself (keep the order of the others) */
    size_t at = (size_t)(inc - root->pairs);
    memmove(&root->pairs[at], &root->pairs[at + 1], (root->n - at - 1) * sizeof *root->pairs);
    root->n--;
    if (ld->flags & SY_CONFIG_NO_INCLUDE) {
        sy__ld_error(ld, list->file, list->line, "include: is not allowed here");
        return;
    }
    if (list->kind != SY_Y_SEQ) {
        sy__ld_error(ld, list->file, list->line, "'include' must be a list of file paths, found %s",
                     sy__ykind_name(list->kind));
        return;
    }
    for (size_t i = 0; i < list->n; i++) {
        struct sy_ynode *it = list->items[i];
        if (it->kind != SY_Y_STR) {
            sy__ld_error(ld, it->file, it->line, "include: item must be a file path, found %s",
                         sy__ykind_name(it->kind));
            continue;
        }
        struct sy_buf path;
        sy_buf_init(&path, 8192);
        if (it->s[0] != '/')
            sy_buf_printf(&path, "%s/", dir && *dir ? dir : ".");
        sy_buf_append(&path, it->s, it->len);
        const char *p = sy_arena_strndup(ld->a, path.p ? path.p : "", path.len);
        sy_buf_free(&path);
        size_t len = 0;
        const char *why = NULL;
        char *text = read_file(p, &len, &why);
        if (!text) {
            sy__ld_error(ld, it->file, it->line, "included file not found: %s (%s)", p, why);
            continue;
        }
        struct sy_ynode *sub = parse_top(ld, text, len, p, it->line, it->file);
        free(text);
        if (!sub)
            continue;
        for (size_t j = 0; j < sub->n; j++) {
            struct sy_ypair *sp = &sub->pairs[j];
            struct sy_ypair *rp = NULL;
            for (size_t k = 0; k < root->n; k++) {
                const struct sy_ynode *rk = root->pairs[k].key, *sk = sp->key;
                if (rk->kind == sk->kind && rk->len == sk->len && memcmp(rk->s, sk->s, rk->len) == 0 &&
                    rk->i == sk->i) {
                    rp = &root->pairs[k];
                    break;
                }
            }
            if (sp->val->kind == SY_Y_SEQ && rp) {
                if (rp->val->kind != SY_Y_SEQ) {
                    sy__ld_error(ld, sp->key->file, sp->key->line,
                                 "cannot extend '%s' from %s: the existing value (%s:%d) is %s, not a list", sp->key->s,
                                 p, rp->val->file, rp->val->line, sy__ykind_name(rp->val->kind));
                    continue;
                }
                struct sy_ynode *merged = sy__ynode_new(ld->a, SY_Y_SEQ, rp->val->line, rp->val->file);
                for (size_t k = 0; k < rp->val->n; k++)
                    sy__yseq_push(ld->a, merged, rp->val->items[k]);
                for (size_t k = 0; k < sp->val->n; k++)
                    sy__yseq_push(ld->a, merged, sp->val->items[k]);
                rp->val = merged;
            } else if (rp) {
                rp->val = sp->val;
                rp->key = sp->key;
            } else {
                sy__ymap_set(ld->a, root, sp->key, sp->val);
            }
        }
    }
}

static void export_env(struct sy_ld *ld, struct sy_ynode *root)
{
    struct sy_ynode *env = sy__ymap_get(root, "environment_variables");
    if (!env || env->kind == SY_Y_NULL)
        return;
    if (env->kind != SY_Y_MAP) {
        sy__ld_error(ld, env->file, env->line, "environment_variables must be a map, found %s",
                     sy__ykind_name(env->kind));
        return;
    }
    for (size_t i = 0; i < env->n; i++) {
        struct sy_ypair *p = &env->pairs[i];
        if (p->val->kind == SY_Y_NULL)
            continue;
        struct sy_buf k, v;
        sy_buf_init(&k, 4096);
        sy_buf_init(&v, 1 << 20);
        sy__py_str(&k, p->key);
        sy__py_str(&v, p->val);
        if (k.len == 0 || strchr(k.p, '=') || memchr(k.p, 0, k.len)) {
            sy__ld_warn(ld, p->key->file, p->key->line, "environment_variables: invalid name '%s', skipped",
                        k.p ? k.p : "");
        } else if (!(ld->flags & SY_CONFIG_NO_SETENV)) {
            setenv(k.p, v.p ? v.p : "", 0);
        }
        sy_buf_free(&k);
        sy_buf_free(&v);
    }
}

/* get_secret("os.environ/VAR"): the name is the text with every
 * "os.environ/" removed; "true"/"false" (trimmed, any case) become bools. */
static struct sy_ynode *env_value(struct sy_ld *ld, const struct sy_ynode *ref)
{
    struct sy_buf name;
    sy_buf_init(&name, 4096);
    const char *s = ref->s, *end = ref->s + ref->len;
    static const char pre[] = "os.environ/";
    while (s < end) {
        const char *hit = memmem(s, (size_t)(end - s), pre, sizeof pre - 1);
        if (!hit) {
            sy_buf_append(&name, s, (size_t)(end - s));
            break;
        }
        sy_buf_append(&name, s, (size_t)(hit - s));
        s = hit + sizeof pre - 1;
    }
    const char *nm = name.p ? name.p : "";
    const char *val = (name.len && !memchr(nm, 0, name.len)) ? getenv(nm) : NULL;
    struct sy_ynode *out;
    if (!val) {
        sy__ld_warn(ld, ref->file, ref->line, "environment variable %s is not set (os.environ/%s); value is null", nm,
                    nm);
        out = sy__ynode_new(ld->a, SY_Y_NULL, ref->line, ref->file);
    } else {
        const char *b = val, *e = val + strlen(val);
        while (b < e && (*b == ' ' || (*b >= '\t' && *b <= '\r')))
            b++;
        while (e > b && (e[-1] == ' ' || (e[-1] >= '\t' && e[-1] <= '\r')))
            e--;
        size_t n = (size_t)(e - b);
        if ((n == 4 && strncasecmp(b, "true", 4) == 0) || (n == 5 && strncasecmp(b, "false", 5) == 0)) {
            out = sy__ynode_new(ld->a, SY_Y_BOOL, ref->line, ref->file);
            out->i = n == 4;
            out->d = (double)out->i;
        } else {
            out = sy__ystr_new(ld->a, val, strlen(val), ref->line, ref->file);
        }
    }
    sy_buf_free(&name);
    return out;
}

static void resolve_env(struct sy_ld *ld, struct sy_ynode *map, int depth)
{
    if (depth > ENV_MAX_DEPTH)
        return;
    for (size_t i = 0; i < map->n; i++) {
        struct sy_ypair *p = &map->pairs[i];
        struct sy_ynode *v = p->val;
        if (v->kind == SY_Y_MAP) {
            resolve_env(ld, v, depth + 1);
        } else if (v->kind == SY_Y_SEQ) {
            for (size_t j = 0; j < v->n; j++)
                if (v->items[j]->kind == SY_Y_MAP)
                    resolve_env(ld, v->items[j], depth + 1);
        } else if (v->kind == SY_Y_STR && v->len >= 11 && memcmp(v->s, "os.environ/", 11) == 0) {
            p->val = env_value(ld, v);
        }
    }
}

static struct sy_config *new_config(struct sy_config_priv **privp)
{
    struct sy_config_priv *priv = calloc(1, sizeof *priv);
    if (!priv)
        return NULL;
    sy_arena_init(&priv->arena);
    struct sy_config *c = sy_arena_alloc(&priv->arena, sizeof *c);
    memset(c, 0, sizeof *c);
    c->priv = priv;
    *privp = priv;
    return c;
}

static void free_config(struct sy_config *c)
{
    struct sy_config_priv *priv = c->priv;
    struct sy_config *base = priv->base, *extra = priv->extra;
    sy_arena_free(&priv->arena);
    free(priv);
    sy_config_unref(base);
    sy_config_unref(extra);
}

int sy_config_load_string_ex(const char *yaml, size_t len, const char *name, const char *dir, unsigned flags,
                             struct sy_config **out, char *err, size_t errlen)
{
    *out = NULL;
    if (errlen)
        err[0] = 0;
    struct sy_config_priv *priv;
    struct sy_config *c = new_config(&priv);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return SY_ENOMEM;
    }
    struct sy_ld ld = {.c = c, .priv = priv, .a = &priv->arena, .flags = flags, .err = err, .errlen = errlen};
    const char *file = sy_arena_strndup(ld.a, name ? name : "<config>", strlen(name ? name : "<config>"));
    struct sy_ynode *root = parse_top(&ld, yaml, len, file, 0, NULL);
    if (root) {
        process_includes(&ld, root, dir);
        export_env(&ld, root);
        resolve_env(&ld, root, 0);
        sy__config_fill(&ld, root);
    }
    if (ld.n_errors) {
        if (ld.n_errors > 1 && errlen) {
            size_t l = strlen(err);
            snprintf(err + l, errlen - l, " (and %d more errors)", ld.n_errors - 1);
        }
        free_config(c);
        return SY_ECONFIG;
    }
    atomic_store((_Atomic int *)&c->refs, 1);
    *out = c;
    return 0;
}

int sy_config_load_string(const char *yaml, size_t len, const char *name, const char *dir, struct sy_config **out,
                          char *err, size_t errlen)
{
    return sy_config_load_string_ex(yaml, len, name, dir, 0, out, err, errlen);
}

int sy_config_load(const char *path, struct sy_config **out, char *err, size_t errlen)
{
    *out = NULL;
    size_t len = 0;
    const char *why = NULL;
    char *text = read_file(path, &len, &why);
    if (!text) {
        snprintf(err, errlen, "%s: %s", path, why);
        return SY_ECONFIG;
    }
    /* LiteLLM joins include paths to dirname(abspath(config)) */
    char *dir = strdup(path);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    const char *d = ".";
    if (slash == dir)
        d = "/";
    else if (slash) {
        *slash = 0;
        d = dir;
    }
    int rc = sy_config_load_string_ex(text, len, path, d, 0, out, err, errlen);
    if (rc == 0) {
        struct sy_config_priv *priv = (*out)->priv;
        (*out)->path = sy_arena_strndup(&priv->arena, path, strlen(path));
    }
    free(dir);
    free(text);
    return rc;
}

void sy_config_ref(struct sy_config *c)
{
    atomic_fetch_add_explicit((_Atomic int *)&c->refs, 1, memory_order_relaxed);
}

void sy_config_unref(struct sy_config *c)
{
    if (!c)
        return;
    if (atomic_fetch_sub_explicit((_Atomic int *)&c->refs, 1, memory_order_acq_rel) == 1)
        free_config(c);
}

struct sy_config *sy_config_with_models(struct sy_config *base, struct sy_config *extra)
{
    struct sy_config_priv *priv;
    struct sy_config *c = new_config(&priv);
    if (!c)
        return NULL;
    size_t n = base->n_deployments + (extra ? extra->n_deployments : 0);
    struct sy_deployment *d = sy_arena_alloc(&priv->arena, (n ? n : 1) * sizeof *d);
    if (!d) {
        free_config(c);
        return NULL;
    }
    *c = *base; /* every setting (and pointer) is base's, which this snapshot keeps alive */
    c->priv = priv;
    const struct sy_config_priv *bp = base->priv;
    priv->warnings = bp->warnings; /* base's arena: read-only here */
    priv->n_warnings = bp->n_warnings;
    if (base->n_deployments)
        memcpy(d, base->deployments, base->n_deployments * sizeof *d);
    size_t k = base->n_deployments;
    for (size_t i = 0; extra && i < extra->n_deployments; i++) {
        const struct sy_deployment *e = &extra->deployments[i];
        int dup = 0;
        for (size_t j = 0; j < k && !dup; j++)
            dup = d[j].id && e->id && strcmp(d[j].id, e->id) == 0;
        if (dup) {
            sy_warn("models: database model %s (%s) skipped: a model with this id is already in the model list", e->id,
                    e->model_name ? e->model_name : "");
            continue;
        }
        d[k++] = *e;
    }
    c->deployments = d;
    c->n_deployments = k;
    sy_config_ref(base);
    priv->base = base;
    if (extra) {
        sy_config_ref(extra);
        priv->extra = extra;
    }
    atomic_store((_Atomic int *)&c->refs, 1);
    return c;
}

const char *sy_config_warning(const struct sy_config *c, int i)
{
    const struct sy_config_priv *p = c->priv;
    if (i < 0 || (size_t)i >= p->n_warnings)
        return NULL;
    return p->warnings[i];
}

const char *sy_deployment_param(const struct sy_deployment *d, const char *key)
{
    for (size_t i = 0; i < d->n_params; i++)
        if (strcmp(d->params[i].key, key) == 0)
            return d->params[i].value;
    return NULL;
}
