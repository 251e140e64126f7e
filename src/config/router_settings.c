/* router_settings.c - readers of the router settings' values (fallbacks, aliases,
 * retry/allowed-fails policies, Redis location) and the check of the model
 * groups they name; schema.c's section fillers call them (see loader.h).
 *
 * Router settings (struct sy_router_config) come from router_settings, from
 * the keys litellm_settings shares with it (fallbacks, max_fallbacks,
 * allowed_fails, ...; router_settings wins when both set one, as LiteLLM's
 * Router(**router_settings) over litellm.* globals), from general_settings
 * (health checks) and, for Redis, from the environment when the config names
 * no Redis. Negative counts and times are errors; fallbacks and aliases that
 * name no model group are warnings (checked after model_list is read).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/loader.h"
#include "core/hex.h"
#include "core/str.h"

/* ---- router settings: value readers ----
 *
 * Shapes LiteLLM accepts (and we accept as leniently):
 *   fallbacks:         [{"group": ["fb1", "fb2"]}, {"*": ["fb"]}]  also {"group": [...]} alone
 *                      and {"group": "fb1"} (one name); "*" is the generic entry
 *   default_fallbacks: ["fb1", "fb2"] or "fb1"
 *   model_group_alias: {"alias": "group"} or {"alias": {model: "group", hidden: true}}
 *   retry_policy:      {BadRequestErrorRetries: 1, ...}; allowed_fails_policy: {...ErrorAllowedFails: 3}
 * Every reader returns 1 when it stored a value, 0 when the key is absent or
 * null, -1 after an error naming file:line (the load then fails).
 */

/* A value that wins over litellm_settings' one: present, not null, not an
 * empty list/map (LiteLLM's Router does `fallbacks or litellm.fallbacks`). */
static int is_set(const struct sy_ynode *v)
{
    return v && v->kind != SY_Y_NULL && !((v->kind == SY_Y_SEQ || v->kind == SY_Y_MAP) && v->n == 0);
}

/* A list of one-key maps {group: [fallback groups]} into *out (arena). */
static int read_fallbacks(struct sy_ld *ld, const struct sy_ynode *v, const char *path, struct sy_fallback **out,
                          size_t *nout)
{
    if (!v || v->kind == SY_Y_NULL)
        return 0;
    const struct sy_ynode *one = v;
    const struct sy_ynode *const *maps = &one;
    size_t nmaps = 1;
    if (v->kind == SY_Y_SEQ) {
        maps = (const struct sy_ynode *const *)v->items;
        nmaps = v->n;
    } else if (v->kind != SY_Y_MAP) {
        sy__ld_error(ld, v->file, v->line, "%s: expected a list of {model group: [fallback groups]} maps, found %s",
                     path, sy__ykind_name(v->kind));
        return -1;
    }
    size_t cap = 0;
    int bad = 0;
    for (size_t i = 0; i < nmaps; i++) {
        if (maps[i]->kind != SY_Y_MAP) {
            sy__ld_error(ld, maps[i]->file, maps[i]->line,
                         "%s[%zu]: expected a map {model group: [fallback groups]}, found %s", path, i,
                         sy__ykind_name(maps[i]->kind));
            bad = 1;
            continue;
        }
        cap += maps[i]->n;
    }
    if (bad)
        return -1;
    struct sy_fallback *fb = sy_arena_alloc(ld->a, (cap ? cap : 1) * sizeof *fb);
    size_t n = 0;
    for (size_t i = 0; i < nmaps; i++) {
        for (size_t j = 0; j < maps[i]->n; j++) {
            const struct sy_ynode *k = maps[i]->pairs[j].key, *val = maps[i]->pairs[j].val;
            if (k->kind != SY_Y_STR) {
                sy__ld_error(ld, k->file, k->line, "%s: a model group name must be a string, found %s", path,
                             sy__ykind_name(k->kind));
                bad = 1;
                continue;
            }
            struct sy_fallback *f = &fb[n++];
            f->group = k->s;
            f->to = NULL;
            f->n = 0;
            if (val->kind == SY_Y_STR) {
                const char **to = sy_arena_alloc(ld->a, sizeof *to);
                to[0] = val->s;
                f->to = to;
                f->n = 1;
            } else if (val->kind == SY_Y_SEQ) {
                const char **to = sy_arena_alloc(ld->a, (val->n ? val->n : 1) * sizeof *to);
                for (size_t m = 0; m < val->n; m++) {
                    const struct sy_ynode *it = val->items[m];
                    if (it->kind == SY_Y_STR) {
                        to[f->n++] = it->s;
                    } else {
                        sy__ld_error(ld, it->file, it->line, "%s.%s[%zu]: expected a model group name, found %s", path,
                                     k->s, m, sy__ykind_name(it->kind));
                        bad = 1;
                    }
                }
                f->to = to;
            } else if (val->kind != SY_Y_NULL) {
                sy__ld_error(ld, val->file, val->line, "%s.%s: expected a list of model group names, found %s", path,
                             k->s, sy__ykind_name(val->kind));
                bad = 1;
            }
        }
    }
    if (bad)
        return -1;
    *out = fb;
    *nout = n;
    return 1;
}

/* A list of model group names, or a single name (default_fallbacks). */
static int read_names(struct sy_ld *ld, const struct sy_ynode *v, const char *path, const char ***out, size_t *nout)
{
    if (!v || v->kind == SY_Y_NULL)
        return 0;
    if (v->kind == SY_Y_STR) {
        const char **l = sy_arena_alloc(ld->a, sizeof *l);
        l[0] = v->s;
        *out = l;
        *nout = 1;
        return 1;
    }
    if (v->kind != SY_Y_SEQ) {
        sy__ld_error(ld, v->file, v->line, "%s: expected a list of model group names, found %s", path,
                     sy__ykind_name(v->kind));
        return -1;
    }
    const char **l = sy_arena_alloc(ld->a, (v->n ? v->n : 1) * sizeof *l);
    size_t n = 0;
    for (size_t i = 0; i < v->n; i++) {
        if (v->items[i]->kind != SY_Y_STR) {
            sy__ld_error(ld, v->items[i]->file, v->items[i]->line, "%s[%zu]: expected a model group name, found %s",
                         path, i, sy__ykind_name(v->items[i]->kind));
            return -1;
        }
        l[n++] = v->items[i]->s;
    }
    *out = l;
    *nout = n;
    return 1;
}

/* model_group_alias: {alias: group} or {alias: {model: group, hidden: bool}}. */
int sy__read_aliases(struct sy_ld *ld, const struct sy_ynode *v, const char *path, struct sy_alias **out, size_t *nout)
{
    if (!v || v->kind == SY_Y_NULL)
        return 0;
    if (v->kind != SY_Y_MAP) {
        sy__ld_error(ld, v->file, v->line, "%s: expected a map {alias: model group}, found %s", path,
                     sy__ykind_name(v->kind));
        return -1;
    }
    struct sy_alias *al = sy_arena_alloc(ld->a, (v->n ? v->n : 1) * sizeof *al);
    size_t n = 0;
    int bad = 0;
    for (size_t i = 0; i < v->n; i++) {
        const struct sy_ynode *k = v->pairs[i].key, *val = v->pairs[i].val;
        if (k->kind != SY_Y_STR) {
            sy__ld_error(ld, k->file, k->line, "%s: an alias must be a string, found %s", path,
                         sy__ykind_name(k->kind));
            bad = 1;
            continue;
        }
        char p2[256];
        snprintf(p2, sizeof p2, "%s.%s", path, k->s);
        struct sy_alias a = {k->s, NULL, 0};
        if (val->kind == SY_Y_STR) {
            a.group = val->s;
        } else if (val->kind == SY_Y_MAP) {
            for (size_t j = 0; j < val->n; j++) {
                const struct sy_ynode *kk = val->pairs[j].key;
                if (kk->kind != SY_Y_STR || (strcmp(kk->s, "model") != 0 && strcmp(kk->s, "hidden") != 0))
                    sy__ld_warn(ld, kk->file, kk->line, "unknown key %s.%s (not a LiteLLM key), ignored", p2,
                                sy__key_text(ld, kk));
            }
            char p3[300];
            snprintf(p3, sizeof p3, "%s.model", p2);
            a.group = sy__get_str(ld, sy__ymap_get(val, "model"), p3);
            if (!a.group) {
                if (!is_set(sy__ymap_get(val, "model")))
                    sy__ld_error(ld, val->file, val->line, "%s: 'model' (the model group) is required", p2);
                bad = 1;
                continue;
            }
            snprintf(p3, sizeof p3, "%s.hidden", p2);
            if (sy__get_bool(ld, sy__ymap_get(val, "hidden"), p3, &a.hidden) < 0)
                bad = 1;
        } else {
            sy__ld_error(ld, val->file, val->line,
                         "%s: expected a model group name or {model: ..., hidden: ...}, "
                         "found %s",
                         p2, sy__ykind_name(val->kind));
            bad = 1;
            continue;
        }
        al[n++] = a;
    }
    if (bad)
        return -1;
    *out = al;
    *nout = n;
    return 1;
}

/* Exception class names of retry_policy / allowed_fails_policy keys, in enum sy_exc_class order. */
static const char *const exc_names[SY_EXC__COUNT] = {
    "BadRequestError", "AuthenticationError",         "TimeoutError",
    "RateLimitError",  "ContentPolicyViolationError", "InternalServerError"};

/* retry_policy ({...ErrorRetries: n}) or allowed_fails_policy ({...ErrorAllowedFails: n}) into out[]
 * (entries not given stay as they are, -1). `suffix` is "Retries" or "AllowedFails". */
int sy__read_policy(struct sy_ld *ld, const struct sy_ynode *v, const char *path, const char *suffix,
                    int out[SY_EXC__COUNT])
{
    if (!v || v->kind == SY_Y_NULL)
        return 0;
    if (v->kind != SY_Y_MAP) {
        sy__ld_error(ld, v->file, v->line, "%s: expected a map {<Exception>%s: count}, found %s", path, suffix,
                     sy__ykind_name(v->kind));
        return -1;
    }
    int bad = 0;
    for (size_t i = 0; i < v->n; i++) {
        const struct sy_ynode *k = v->pairs[i].key;
        int e = -1;
        size_t sl = strlen(suffix);
        for (int j = 0; k->kind == SY_Y_STR && j < SY_EXC__COUNT && e < 0; j++) {
            size_t nl = strlen(exc_names[j]);
            if (k->len == nl + sl && memcmp(k->s, exc_names[j], nl) == 0 && memcmp(k->s + nl, suffix, sl) == 0)
                e = j;
        }
        if (e < 0) {
            sy__ld_warn(ld, k->file, k->line, "unknown key %s.%s (not a LiteLLM key), ignored", path,
                        sy__key_text(ld, k));
            continue;
        }
        char p2[256];
        snprintf(p2, sizeof p2, "%s.%s", path, k->s);
        double d;
        int r = sy__get_count(ld, v->pairs[i].val, p2, 1, 0, &d);
        if (r < 0)
            bad = 1;
        else if (r > 0)
            out[e] = (int)d;
    }
    return bad ? -1 : 1;
}

/* A scalar as text: strings as written, numbers as Python str() (a numeric
 * password); NULL when absent, null or empty; error for lists and maps. */
static const char *get_scalar_text(struct sy_ld *ld, const struct sy_ynode *n, const char *path)
{
    if (!n || n->kind == SY_Y_NULL)
        return NULL;
    if (n->kind == SY_Y_INT || n->kind == SY_Y_FLOAT)
        return sy__key_text(ld, n);
    const char *s = sy__get_str(ld, n, path);
    return s && *s ? s : NULL;
}

/* ---- router settings: Redis ---- */

/* Arena copy of s[0..n) with %XX decoded (as redis-py unquotes user and
 * password); NULL when n == 0. */
static const char *unquote(struct sy_arena *a, const char *s, size_t n)
{
    if (!n)
        return NULL;
    char *o = sy_arena_alloc(a, n + 1), *w = o;
    for (size_t i = 0; i < n; i++) {
        int h, l;
        if (s[i] == '%' && i + 2 < n && (h = sy_hex_val((unsigned char)s[i + 1])) >= 0 &&
            (l = sy_hex_val((unsigned char)s[i + 2])) >= 0) {
            *w++ = (char)(h * 16 + l);
            i += 2;
        } else {
            *w++ = s[i];
        }
    }
    *w = 0;
    return o;
}

/* Parse a small decimal integer s[0..n) in [lo, hi]; -1 when it is not one. */
static long parse_small(const char *s, size_t n, long lo, long hi)
{
    if (!n || n > 9)
        return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v < lo || v > hi ? -1 : v;
}

/* An error at file:line when `strict` (a config value), else a warning ending
 * in "; ignored" (a value from the environment). */
static void url_problem(struct sy_ld *ld, int strict, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void url_problem(struct sy_ld *ld, int strict, const char *file, int line, const char *fmt, ...)
{
    char m[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    if (strict)
        sy__ld_error(ld, file, line, "%s", m);
    else
        sy__ld_warn(ld, file, line, "%s; ignored", m);
}

/* Parse redis://[user[:password]@]host[:port][/db][?db=N] (also rediss://,
 * with a warning: no TLS here) into r, overriding only what the URL gives, as
 * redis-py's from_url(url, **kwargs) does. `what` names the source in
 * messages. A malformed URL is an error at file:line when `strict` (a config
 * value), else a warning (the environment). Returns 0, or -1 (r unchanged). */
static int parse_redis_url(struct sy_ld *ld, const char *file, int line, const char *what, const char *url, int strict,
                           struct sy_router_config *r)
{
    const char *form = "expected redis://[user[:password]@]host[:port][/db]";
    const char *p;
    int tls = 0;
    if (strncasecmp(url, "redis://", 8) == 0) {
        p = url + 8;
    } else if (strncasecmp(url, "rediss://", 9) == 0) {
        p = url + 9;
        tls = 1;
    } else {
        url_problem(ld, strict, file, line, "%s: %s, found '%.60s'", what, form, url);
        return -1;
    }
    size_t alen = strcspn(p, "/?#");
    const char *auth = p, *aend = p + alen;
    const char *at = NULL;
    for (const char *q = auth; q < aend; q++)
        if (*q == '@')
            at = q; /* the last '@', as urllib's netloc.rpartition('@') */
    const char *user = NULL, *pass = NULL, *host = auth;
    if (at) {
        const char *colon = memchr(auth, ':', (size_t)(at - auth));
        size_t ul = colon ? (size_t)(colon - auth) : (size_t)(at - auth);
        user = unquote(ld->a, auth, ul);
        if (colon)
            pass = unquote(ld->a, colon + 1, (size_t)(at - colon - 1));
        host = at + 1;
    }
    const char *hend = aend, *port_s = NULL;
    if (*host == '[') { /* [IPv6]:port */
        const char *rb = memchr(host, ']', (size_t)(aend - host));
        if (!rb || (rb + 1 < aend && rb[1] != ':')) {
            url_problem(ld, strict, file, line, "%s: bad IPv6 host in '%.60s'", what, url);
            return -1;
        }
        if (rb + 1 < aend)
            port_s = rb + 2;
        hend = rb + 1;
        host++;
        hend--;
    } else {
        const char *colon = memchr(host, ':', (size_t)(aend - host));
        if (colon) {
            port_s = colon + 1;
            hend = colon;
        }
    }
    long port = -1;
    if (port_s && port_s < aend && (port = parse_small(port_s, (size_t)(aend - port_s), 1, 65535)) < 0) {
        url_problem(ld, strict, file, line, "%s: bad port '%.*s' (1-65535)", what, (int)(aend - port_s), port_s);
        return -1;
    }
    long db = -1;
    const char *rest = aend;
    if (*rest == '/') {
        size_t pl = strcspn(rest + 1, "?#");
        if (pl && (db = parse_small(rest + 1, pl, 0, 1000000)) < 0) {
            url_problem(ld, strict, file, line, "%s: bad database number '/%.*s'", what, (int)pl, rest + 1);
            return -1;
        }
        rest += 1 + pl;
    }
    if (*rest == '?') { /* ?db=N wins over the path, as in redis-py; other options are not used */
        const char *q = rest + 1, *qend = q + strcspn(q, "#");
        while (q < qend) {
            const char *amp = memchr(q, '&', (size_t)(qend - q));
            const char *e = amp ? amp : qend;
            if (e - q > 3 && memcmp(q, "db=", 3) == 0) {
                if ((db = parse_small(q + 3, (size_t)(e - q - 3), 0, 1000000)) < 0) {
                    url_problem(ld, strict, file, line, "%s: bad database number '%.*s'", what, (int)(e - q), q);
                    return -1;
                }
            } else if (e > q) {
                sy__ld_warn(ld, file, line, "%s: URL option '%.*s' not supported, ignored", what, (int)(e - q), q);
            }
            q = amp ? amp + 1 : qend;
        }
    }
    if (tls)
        sy__ld_warn(ld, file, line, "%s: rediss:// (TLS) is not supported yet; connecting without TLS", what);
    if (hend > host)
        r->redis_host = sy_arena_strndup(ld->a, host, (size_t)(hend - host));
    else if (!r->redis_host)
        r->redis_host = "localhost"; /* redis-py's default */
    if (port > 0)
        r->redis_port = (int)port;
    if (db >= 0)
        r->redis_db = (int)db;
    if (user)
        r->redis_username = user;
    if (pass)
        r->redis_password = pass;
    return 0;
}

/* Arena copy of env `name`, or NULL when unset or empty. */
static const char *env_str(struct sy_ld *ld, const char *name)
{
    const char *v = getenv(name);
    return v && *v ? sy_arena_strndup(ld->a, v, strlen(v)) : NULL;
}

/* Redis location: router_settings.redis_url over redis_host/redis_port/
 * redis_password/redis_username/redis_db (the URL overrides what it gives);
 * neither redis_url nor redis_host: env REDIS_URL, else env REDIS_HOST with
 * REDIS_PORT, REDIS_PASSWORD, REDIS_USERNAME for what the config leaves out.
 * `file` names the main config in messages about the environment. */
int sy__parse_redis_url(struct sy_ld *ld, const char *file, int line, const char *what, const char *url,
                        struct sy_router_config *r)
{
    return parse_redis_url(ld, file, line, what, url, 1, r);
}

void sy__fill_redis(struct sy_ld *ld, struct sy_router_config *r, const struct sy_ynode *rs, const char *file)
{
    const struct sy_ynode *hn = sy__ymap_get(rs, "redis_host"), *un = sy__ymap_get(rs, "redis_url");
    const struct sy_ynode *pn = sy__ymap_get(rs, "redis_port");
    double d;
    int has_port = 0;
    const char *host = sy__get_str(ld, hn, "router_settings.redis_host");
    const char *url = sy__get_str(ld, un, "router_settings.redis_url");
    if (sy__get_num(ld, pn, "router_settings.redis_port", 1, &d) > 0) {
        if (d < 1 || d > 65535)
            sy__ld_error(ld, pn->file, pn->line, "router_settings.redis_port: must be 1-65535, found %g", d);
        else {
            r->redis_port = (int)d;
            has_port = 1;
        }
    }
    if (sy__get_count(ld, sy__ymap_get(rs, "redis_db"), "router_settings.redis_db", 1, 0, &d) > 0)
        r->redis_db = (int)d;
    r->redis_password = get_scalar_text(ld, sy__ymap_get(rs, "redis_password"), "router_settings.redis_password");
    r->redis_username = get_scalar_text(ld, sy__ymap_get(rs, "redis_username"), "router_settings.redis_username");

    if (url && *url) {
        if (host && *host)
            r->redis_host = host; /* the URL's host replaces it */
        parse_redis_url(ld, un->file, un->line, "router_settings.redis_url", url, 1, r);
        return;
    }
    if (host && *host) {
        r->redis_host = host;
        return;
    }
    const char *eurl = env_str(ld, "REDIS_URL");
    if (eurl && parse_redis_url(ld, file, 0, "environment variable REDIS_URL", eurl, 0, r) == 0)
        return;
    const char *ehost = env_str(ld, "REDIS_HOST");
    if (ehost) {
        r->redis_host = ehost;
        const char *ep = getenv("REDIS_PORT");
        if (!has_port && ep && *ep) {
            long port = parse_small(ep, strlen(ep), 1, 65535);
            if (port > 0)
                r->redis_port = (int)port;
            else
                sy__ld_warn(ld, file, 0,
                            "environment variable REDIS_PORT: '%.20s' is not a port (1-65535); "
                            "using %d",
                            ep, r->redis_port);
        }
        if (!r->redis_password)
            r->redis_password = env_str(ld, "REDIS_PASSWORD");
        if (!r->redis_username)
            r->redis_username = env_str(ld, "REDIS_USERNAME");
        return;
    }
    static const char *const others[] = {"redis_port", "redis_password", "redis_username", "redis_db"};
    for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
        const struct sy_ynode *o = sy__ymap_get(rs, others[i]);
        if (is_set(o)) {
            sy__ld_warn(ld, o->file, o->line,
                        "router_settings.%s is set but there is no redis_host or redis_url "
                        "(nor REDIS_URL/REDIS_HOST in the environment); Redis is not used",
                        others[i]);
            break;
        }
    }
}

/* fallbacks, context_window_fallbacks, content_policy_fallbacks and
 * default_fallbacks of one section into r. A set value (is_set) replaces an
 * earlier one: litellm_settings is read first, so router_settings wins. */
void sy__read_fallback_lists(struct sy_ld *ld, struct sy_router_config *r, const struct sy_ynode *sec, const char *name)
{
    static const char *const keys[] = {"fallbacks", "context_window_fallbacks", "content_policy_fallbacks"};
    struct sy_fallback **lists[] = {&r->fallbacks, &r->context_window_fallbacks, &r->content_policy_fallbacks};
    size_t *counts[] = {&r->n_fallbacks, &r->n_context_window_fallbacks, &r->n_content_policy_fallbacks};
    char path[96];
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const struct sy_ynode *v = sy__ymap_get(sec, keys[i]);
        struct sy_fallback *fb;
        size_t n;
        snprintf(path, sizeof path, "%s.%s", name, keys[i]);
        if (read_fallbacks(ld, v, path, &fb, &n) > 0 && is_set(v)) {
            *lists[i] = fb;
            *counts[i] = n;
        }
    }
    const struct sy_ynode *v = sy__ymap_get(sec, "default_fallbacks");
    const char **l;
    size_t n;
    snprintf(path, sizeof path, "%s.default_fallbacks", name);
    if (read_names(ld, v, path, &l, &n) > 0 && is_set(v)) {
        r->default_fallbacks = l;
        r->n_default_fallbacks = n;
    }
}

/* ---- router settings: provider_budget_config ----
 *
 *   provider_budget_config:
 *     openai:    {budget_limit: 100, time_period: 1d}
 *     anthropic: {max_budget: 5, budget_duration: 30d}   (the newer names)
 * A period is <digits><unit>, unit s, m, h, d, w or mo (30 days, as
 * spend/duration.c). A wrong shape is an error naming the line. */
static double period_seconds(const char *s)
{
    double v = 0;
    size_t i = 0;
    while (s[i] >= '0' && s[i] <= '9' && i < 9)
        v = v * 10 + (s[i++] - '0');
    if (!i || s[i] == 0)
        return -1;
    const char *u = s + i;
    double mul = !strcmp(u, "s")    ? 1
                 : !strcmp(u, "m")  ? 60
                 : !strcmp(u, "h")  ? 3600
                 : !strcmp(u, "d")  ? 86400
                 : !strcmp(u, "w")  ? 604800
                 : !strcmp(u, "mo") ? 30 * 86400.0
                                    : -1;
    return mul < 0 || v <= 0 ? -1 : v * mul;
}

int sy__read_provider_budgets(struct sy_ld *ld, const struct sy_ynode *v, struct sy_router_config *r)
{
    if (!v || v->kind == SY_Y_NULL)
        return 0;
    if (v->kind != SY_Y_MAP) {
        sy__ld_error(ld, v->file, v->line,
                     "router_settings.provider_budget_config: expected a map of provider to "
                     "{budget_limit, time_period}, found %s",
                     sy__ykind_name(v->kind));
        return -1;
    }
    struct sy_provider_budget *pb = sy_arena_alloc(ld->a, (v->n ? v->n : 1) * sizeof *pb);
    size_t n = 0;
    for (size_t i = 0; i < v->n; i++) {
        const char *prov = sy__key_text(ld, v->pairs[i].key);
        const struct sy_ynode *e = v->pairs[i].val;
        char path[192];
        snprintf(path, sizeof path, "router_settings.provider_budget_config.%s", prov ? prov : "?");
        if (!prov || !e || e->kind != SY_Y_MAP) {
            sy__ld_error(ld, e ? e->file : v->file, e ? e->line : v->line,
                         "%s: expected a map with budget_limit and time_period", path);
            return -1;
        }
        const struct sy_ynode *lim = sy__ymap_get(e, "budget_limit");
        if (!lim || lim->kind == SY_Y_NULL)
            lim = sy__ymap_get(e, "max_budget");
        const struct sy_ynode *per = sy__ymap_get(e, "time_period");
        if (!per || per->kind == SY_Y_NULL)
            per = sy__ymap_get(e, "budget_duration");
        double d;
        char kp[224];
        snprintf(kp, sizeof kp, "%s.budget_limit", path);
        if (sy__get_num(ld, lim, kp, 0, &d) <= 0 || d < 0) {
            if (!lim || lim->kind == SY_Y_NULL || d < 0)
                sy__ld_error(ld, e->file, e->line, "%s: a non-negative number is required", kp);
            return -1;
        }
        snprintf(kp, sizeof kp, "%s.time_period", path);
        const char *ps = sy__get_str(ld, per, kp);
        double secs = ps ? period_seconds(ps) : -1;
        if (secs <= 0) {
            sy__ld_error(ld, per ? per->file : e->file, per ? per->line : e->line,
                         "%s: expected a duration such as 30s, 1h, 1d, 7d or 1mo", kp);
            return -1;
        }
        pb[n++] = (struct sy_provider_budget){prov, d, secs, ps};
    }
    r->provider_budgets = pb;
    r->n_provider_budgets = n;
    return 1;
}

/* ---- router settings: model groups named by fallbacks and aliases ---- */

/* A request for `name` finds deployments: a model_name, a wildcard model_name
 * (a pattern with '*', such as a provider prefix then '*') matching it, or
 * (when `aliases`) a model_group_alias. */
static int group_known(const struct sy_config *c, const char *name, int aliases)
{
    for (size_t i = 0; i < c->n_deployments; i++)
        if (strcmp(c->deployments[i].model_name, name) == 0)
            return 1;
    for (size_t i = 0; aliases && i < c->router.n_aliases; i++)
        if (strcmp(c->router.aliases[i].alias, name) == 0)
            return 1;
    for (size_t i = 0; i < c->n_deployments; i++)
        if (strchr(c->deployments[i].model_name, '*') && sy_glob(c->deployments[i].model_name, name, strlen(name)))
            return 1;
    return 0;
}

/* Warn (once per name) about a group named at node n that no deployment serves. */
static void check_group(struct sy_ld *ld, const struct sy_config *c, const struct sy_ynode *n, const char *path,
                        int aliases)
{
    if (n->kind != SY_Y_STR || strcmp(n->s, "*") == 0 || group_known(c, n->s, aliases))
        return;
    char key[320];
    snprintf(key, sizeof key, "model group\n%s", n->s);
    if (sy__ld_first(ld, key))
        sy__ld_warn(ld, n->file, n->line,
                    "%s: model group '%s' is not in model_list (LiteLLM accepts it; a "
                    "request routed to it fails)",
                    path, n->s);
}

/* Every group name in a fallback list (any shape read_fallbacks/read_names
 * take): `v` is the list itself (depth 0), a list item (1), or the target
 * list of a group (2: strings, or a list of strings). */
static void check_fallback_node(struct sy_ld *ld, const struct sy_config *c, const struct sy_ynode *v, const char *path,
                                int depth)
{
    if (v->kind == SY_Y_STR) {
        check_group(ld, c, v, path, 1);
    } else if (v->kind == SY_Y_SEQ) {
        for (size_t i = 0; i < v->n; i++)
            if (depth < 2 || v->items[i]->kind == SY_Y_STR)
                check_fallback_node(ld, c, v->items[i], path, depth + 1);
    } else if (v->kind == SY_Y_MAP && depth < 2) {
        for (size_t i = 0; i < v->n; i++) {
            check_group(ld, c, v->pairs[i].key, path, 1);
            check_fallback_node(ld, c, v->pairs[i].val, path, 2);
        }
    }
}

/* After model_list is read: warn about fallback and alias targets that name no
 * model group (LiteLLM loads such configs; the request fails when it gets there). */
void sy__check_router_groups(struct sy_ld *ld, const struct sy_config *c, const struct sy_ynode *root)
{
    static const char *const keys[] = {"fallbacks", "context_window_fallbacks", "content_policy_fallbacks",
                                       "default_fallbacks"};
    const struct sy_ynode *ls = sy__ymap_get(root, "litellm_settings"), *rs = sy__ymap_get(root, "router_settings");
    if (ls && ls->kind != SY_Y_MAP)
        ls = NULL;
    if (rs && rs->kind != SY_Y_MAP)
        rs = NULL;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const struct sy_ynode *v = sy__ymap_get(rs, keys[i]);
        const char *sec = "router_settings";
        if (!is_set(v)) {
            v = sy__ymap_get(ls, keys[i]);
            sec = "litellm_settings";
        }
        if (!v)
            continue;
        char path[96];
        snprintf(path, sizeof path, "%s.%s", sec, keys[i]);
        check_fallback_node(ld, c, v, path, 0);
    }
    const struct sy_ynode *al = sy__ymap_get(rs, "model_group_alias");
    for (size_t i = 0; al && al->kind == SY_Y_MAP && i < al->n; i++) {
        const struct sy_ynode *g = al->pairs[i].val;
        if (g->kind == SY_Y_MAP)
            g = sy__ymap_get(g, "model");
        if (g)
            check_group(ld, c, g, "router_settings.model_group_alias", 0);
    }
}