/* set.c - a config's guardrails: the lists compiled, and a call's selection
 * (set.h).
 *
 * The `guardrails:` list (LiteLLM's guardrail_initializers): each entry has a
 * guardrail_name, litellm_params (guardrail = the kind, mode, default_on, the
 * kind's own settings) and an optional guardrail_info shown by
 * /guardrails/list. Settings every kind shares, read here:
 *   mode                 "pre_call" | "during_call" | "post_call" | "logging_only", or a list
 *   default_on           bool (default false: the request, key or team asks for it)
 *   skip_system_message_in_guardrail / skip_tool_message_in_guardrail
 *                        bool, else litellm_settings' global
 *   unreachable_fallback "fail_closed" (default) | "fail_open": what a service
 *                        error does (LiteLLM's generic_guardrail_api setting,
 *                        here for every service kind); fail_open: true is the same
 *   timeout              seconds a service's whole exchange may take (default 10)
 * The legacy `litellm_settings.guardrails` form ([{group: {callbacks: [...],
 * default_on, callback_args: {cb: {...}}}}]) makes one guardrail per callback,
 * all named after the group, so naming the group turns on every callback.
 */
#include "guardrails/set.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"

#define GUARD_MAX 256 /* guardrails one config may define */

static int jbool(json_object *o, const char *k, int def)
{
    json_object *v;
    if (!o || !json_object_object_get_ex(o, k, &v) || !v)
        return def;
    if (json_object_is_type(v, json_type_boolean))
        return json_object_get_boolean(v);
    if (json_object_is_type(v, json_type_string)) {
        const char *s = json_object_get_string(v);
        if (!strcasecmp(s, "true"))
            return 1;
        if (!strcasecmp(s, "false"))
            return 0;
    }
    return def;
}

static const char *jstr(json_object *o, const char *k)
{
    json_object *v;
    if (!o || !json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

const char *sy_guard_mode_name(unsigned mode)
{
    switch (mode) {
    case SY_GM_PRE: return "pre_call";
    case SY_GM_DURING: return "during_call";
    case SY_GM_POST: return "post_call";
    case SY_GM_LOGGING_ONLY: return "logging_only";
    default: return "?";
    }
}

static unsigned mode_bit(const char *s)
{
    if (!strcmp(s, "pre_call"))
        return SY_GM_PRE;
    if (!strcmp(s, "during_call"))
        return SY_GM_DURING;
    if (!strcmp(s, "post_call"))
        return SY_GM_POST;
    if (!strcmp(s, "logging_only"))
        return SY_GM_LOGGING_ONLY;
    return 0;
}

/* mode: a string or a list of them (LiteLLM's Mode also has a tags map: each
 * value is read as a mode). 0 and *out, or -1 with the bad value in err. */
static int read_modes(json_object *v, unsigned *out, char *err, size_t errlen)
{
    *out = 0;
    if (!v) {
        *out = SY_GM_PRE; /* LiteLLM's default event hook when none is given */
        return 0;
    }
    if (json_object_is_type(v, json_type_string)) {
        const char *s = json_object_get_string(v);
        unsigned b = mode_bit(s);
        if (!b && strcmp(s, "pre_mcp_call") && strcmp(s, "during_mcp_call")) {
            snprintf(err, errlen, "mode '%.60s' is none of pre_call, during_call, post_call, logging_only", s);
            return -1;
        }
        *out = b;
        return 0;
    }
    if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            unsigned b;
            if (read_modes(json_object_array_get_idx(v, i), &b, err, errlen))
                return -1;
            *out |= b;
        }
        return 0;
    }
    if (json_object_is_type(v, json_type_object)) { /* {tags: {...}, default: "pre_call"} */
        json_object_object_foreach(v, k, sub)
        {
            (void)k;
            unsigned b;
            if (json_object_is_type(sub, json_type_string) || json_object_is_type(sub, json_type_array)) {
                if (read_modes(sub, &b, err, errlen))
                    return -1;
                *out |= b;
            } else if (json_object_is_type(sub, json_type_object)) {
                json_object_object_foreach(sub, k2, sub2)
                {
                    (void)k2;
                    if (read_modes(sub2, &b, err, errlen))
                        return -1;
                    *out |= b;
                }
            }
        }
        return 0;
    }
    snprintf(err, errlen, "mode must be a string or a list");
    return -1;
}

static int is_secret_name(const char *k)
{
    static const char *const w[] = {"token", "secret", "password", "authorization", "credential", "api_key", "apikey"};
    char low[128];
    size_t n = strlen(k);
    if (n >= sizeof low)
        n = sizeof low - 1;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)(k[i] >= 'A' && k[i] <= 'Z' ? k[i] + 32 : k[i]);
    low[n] = 0;
    if (n >= 3 && !strcmp(low + n - 3, "key")) /* api_key, access_key, subscription_key; not keyword */
        return 1;
    for (size_t i = 0; i < sizeof w / sizeof *w; i++)
        if (strstr(low, w[i]))
            return 1;
    return 0;
}

/* A copy of o with the values of secret-looking members masked as LiteLLM's
 * _get_masked_values does (first 4 characters, then "****"); headers' values too. */
static json_object *masked_copy(json_object *o, int all)
{
    if (json_object_is_type(o, json_type_object)) {
        json_object *r = json_object_new_object();
        json_object_object_foreach(o, k, v)
        {
            if ((all || is_secret_name(k)) && json_object_is_type(v, json_type_string)) {
                const char *s = json_object_get_string(v);
                char m[16];
                snprintf(m, sizeof m, "%.4s****", s);
                json_object_object_add(r, k, json_object_new_string(m));
            } else {
                json_object_object_add(r, k, masked_copy(v, !strcmp(k, "headers")));
            }
        }
        return r;
    }
    if (json_object_is_type(o, json_type_array)) {
        json_object *r = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(o); i++)
            json_object_array_add(r, masked_copy(json_object_array_get_idx(o, i), all));
        return r;
    }
    return json_object_get(o);
}

struct build {
    struct sy_guardset *s;
    json_object *list; /* /guardrails/list entries */
    const struct sy_genv *env;
    void (*warn)(void *ud, const char *msg);
    void *ud;
    int skip_system, skip_tool;
};

static void warnf(struct build *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warnf(struct build *b, const char *fmt, ...)
{
    char m[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    if (b->warn)
        b->warn(b->ud, m);
}

/* One guardrail of kind `kind` named name with params (litellm_params or a
 * legacy callback's args). 0 (added, or left out with a warning), -1 err. */
static int add_one(struct build *b, const char *name, const char *kind, json_object *params, json_object *info,
                   unsigned legacy_mode, int legacy_default_on, char *err, size_t errlen)
{
    const struct sy_guard_ops *ops = sy_guard_kind(kind);
    if (!ops) {
        if (strchr(kind, '.') && !strchr(kind, '/'))
            warnf(b,
                  "guardrail %s: '%s' is Python code, which switchyard cannot run; it is left out (requests pass "
                  "unchecked by it). Serve it over HTTP and use guardrail: generic_guardrail_api",
                  name, kind);
        else
            warnf(b,
                  "guardrail %s: kind '%s' is not supported by switchyard; it is left out (requests pass unchecked "
                  "by it)",
                  name, kind);
        return 0;
    }
    if (b->s->n >= GUARD_MAX) {
        snprintf(err, errlen, "guardrails: more than %d", GUARD_MAX);
        return -1;
    }
    struct sy_guard *g = &b->s->g[b->s->n];
    memset(g, 0, sizeof *g);
    g->ops = ops;
    g->index = (int)b->s->n;
    g->name = strdup(name);
    char e[256] = "";
    if (legacy_mode) {
        g->modes = legacy_mode;
        g->default_on = legacy_default_on;
    } else {
        json_object *mv = NULL;
        json_object_object_get_ex(params, "mode", &mv);
        if (read_modes(mv, &g->modes, e, sizeof e)) {
            snprintf(err, errlen, "guardrail %s: %s", name, e);
            free(g->name);
            return -1;
        }
        g->default_on = jbool(params, "default_on", 0);
    }
    if (!g->modes) { /* only MCP hooks */
        warnf(b, "guardrail %s: its modes are MCP hooks only; it is left out", name);
        free(g->name);
        return 0;
    }
    unsigned bad = g->modes & ~ops->modes & ~(unsigned)SY_GM_LOGGING_ONLY;
    if (bad) {
        if (legacy_mode && (ops->modes & SY_GM_PRE)) {
            g->modes = SY_GM_PRE;
        } else {
            snprintf(err, errlen, "guardrail %s: %s does not support mode %s", name, ops->name,
                     sy_guard_mode_name(bad & -bad));
            free(g->name);
            return -1;
        }
    }
    if ((g->modes & SY_GM_LOGGING_ONLY) && !ops->check) {
        warnf(b,
              "guardrail %s: logging_only runs in-process kinds only (pii_masking, litellm_content_filter, "
              "hide_secrets); %s is left out of the logging_only hook",
              name, ops->name);
        g->modes &= ~(unsigned)SY_GM_LOGGING_ONLY;
        if (!g->modes) {
            free(g->name);
            return 0;
        }
    }
    g->skip_system = jbool(params, "skip_system_message_in_guardrail", b->skip_system);
    g->skip_tool = jbool(params, "skip_tool_message_in_guardrail", b->skip_tool);
    const char *uf = jstr(params, "unreachable_fallback");
    g->fail_open = jbool(params, "fail_open", uf && !strcmp(uf, "fail_open"));
    g->timeout_s = 10;
    json_object *tv;
    if (params && json_object_object_get_ex(params, "timeout", &tv) &&
        (json_object_is_type(tv, json_type_int) || json_object_is_type(tv, json_type_double)) &&
        json_object_get_double(tv) > 0)
        g->timeout_s = json_object_get_double(tv);
    g->params_json = strdup(params ? json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN) : "{}");
    g->info_json = info ? strdup(json_object_to_json_string_ext(info, JSON_C_TO_STRING_PLAIN)) : NULL;
    if (ops->open && ops->open(g, params, b->env, e, sizeof e) != 0) {
        snprintf(err, errlen, "guardrail %s (%s): %s", name, ops->name, e[0] ? e : "invalid settings");
        free(g->name);
        free(g->params_json);
        free(g->info_json);
        return -1;
    }
    b->s->modes |= g->modes;
    b->s->n++;
    return 0;
}

static int build_list(struct build *b, json_object *arr, char *err, size_t errlen)
{
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        json_object *e = json_object_array_get_idx(arr, i), *lp = NULL, *info = NULL;
        const char *name = jstr(e, "guardrail_name");
        if (!json_object_is_type(e, json_type_object) || !name) {
            snprintf(err, errlen, "guardrails[%zu]: an entry needs a guardrail_name", i);
            return -1;
        }
        if (!json_object_object_get_ex(e, "litellm_params", &lp) || !json_object_is_type(lp, json_type_object)) {
            snprintf(err, errlen, "guardrail %s: litellm_params must be a map", name);
            return -1;
        }
        json_object_object_get_ex(e, "guardrail_info", &info);
        const char *kind = jstr(lp, "guardrail");
        if (!kind) {
            snprintf(err, errlen, "guardrail %s: litellm_params.guardrail (the kind) is required", name);
            return -1;
        }
        json_object *le = json_object_new_object();
        json_object_object_add(le, "guardrail_name", json_object_new_string(name));
        json_object_object_add(le, "litellm_params", masked_copy(lp, 0));
        json_object_object_add(le, "guardrail_info", info ? json_object_get(info) : NULL);
        json_object_array_add(b->list, le);
        if (add_one(b, name, kind, lp, info, 0, 0, err, errlen))
            return -1;
    }
    return 0;
}

/* The legacy callbacks and the kinds they are here, with LiteLLM's hook for
 * each (async_moderation_hook runs beside the call: during_call). */
static const struct {
    const char *cb, *kind;
    unsigned mode;
} legacy_map[] = {
    {"detect_prompt_injection", "detect_prompt_injection", SY_GM_PRE},
    {"hide_secrets", "hide_secrets", SY_GM_PRE},
    {"lakera_prompt_injection", "lakera_ai", SY_GM_DURING},
    {"openai_moderations", "openai_moderation", SY_GM_DURING},
    {"presidio", "presidio", SY_GM_PRE},
};

static int build_legacy(struct build *b, json_object *arr, char *err, size_t errlen)
{
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        if (!json_object_is_type(e, json_type_object)) {
            snprintf(err, errlen, "litellm_settings.guardrails[%zu]: expected {name: {callbacks: [...]}}", i);
            return -1;
        }
        json_object_object_foreach(e, gname, spec)
        {
            json_object *cbs = NULL, *args = NULL;
            if (!json_object_is_type(spec, json_type_object) || !json_object_object_get_ex(spec, "callbacks", &cbs) ||
                !json_object_is_type(cbs, json_type_array)) {
                snprintf(err, errlen, "litellm_settings.guardrails.%s: callbacks must be a list", gname);
                return -1;
            }
            json_object_object_get_ex(spec, "callback_args", &args);
            int don = jbool(spec, "default_on", 0);
            json_object *le = json_object_new_object();
            json_object_object_add(le, "guardrail_name", json_object_new_string(gname));
            json_object_object_add(le, "litellm_params", masked_copy(spec, 0));
            json_object_object_add(le, "guardrail_info", NULL);
            json_object_array_add(b->list, le);
            for (size_t k = 0; k < json_object_array_length(cbs); k++) {
                json_object *cv = json_object_array_get_idx(cbs, k), *a = NULL;
                if (!json_object_is_type(cv, json_type_string))
                    continue;
                const char *cb = json_object_get_string(cv);
                const char *kind = cb;
                unsigned mode = SY_GM_PRE;
                for (size_t m = 0; m < sizeof legacy_map / sizeof *legacy_map; m++)
                    if (!strcmp(legacy_map[m].cb, cb)) {
                        kind = legacy_map[m].kind;
                        mode = legacy_map[m].mode;
                    }
                if (args)
                    json_object_object_get_ex(args, cb, &a);
                json_object *params = a && json_object_is_type(a, json_type_object) ? a : NULL;
                json_object *own = params ? NULL : json_object_new_object();
                int rc = add_one(b, gname, kind, params ? params : own, NULL, mode, don, err, errlen);
                if (own)
                    json_object_put(own);
                if (rc)
                    return -1;
            }
        }
    }
    return 0;
}

int sy_guardset_build(const char *list_json, const char *legacy_json, int skip_system, int skip_tool,
                      const struct sy_genv *env, void (*warn)(void *ud, const char *msg), void *ud,
                      struct sy_guardset **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!list_json && !legacy_json)
        return 0;
    struct sy_guardset *s = calloc(1, sizeof *s);
    if (!s || !(s->g = calloc(GUARD_MAX, sizeof *s->g))) {
        free(s);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    struct build b = {s, json_object_new_array(), env, warn, ud, skip_system, skip_tool};
    json_object *l = list_json ? json_tokener_parse(list_json) : NULL;
    json_object *lg = legacy_json ? json_tokener_parse(legacy_json) : NULL;
    int rc = 0;
    if (l && json_object_is_type(l, json_type_array))
        rc = build_list(&b, l, err, errlen);
    if (!rc && lg && json_object_is_type(lg, json_type_array))
        rc = build_legacy(&b, lg, err, errlen);
    if (l)
        json_object_put(l);
    if (lg)
        json_object_put(lg);
    if (!rc) {
        json_object *top = json_object_new_object();
        json_object_object_add(top, "guardrails", json_object_get(b.list));
        s->list_json = strdup(json_object_to_json_string_ext(top, JSON_C_TO_STRING_PLAIN));
        s->list_len = strlen(s->list_json);
        json_object_put(top);
    }
    json_object_put(b.list);
    if (rc) {
        sy_guardset_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

void sy_guardset_free(struct sy_guardset *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        struct sy_guard *g = &s->g[i];
        if (g->ops->close)
            g->ops->close(g);
        free(g->name);
        free(g->params_json);
        free(g->info_json);
    }
    free(s->g);
    free(s->list_json);
    free(s);
}

int sy_guardset_find(const struct sy_guardset *s, const char *name, size_t len)
{
    for (size_t i = 0; s && i < s->n; i++)
        if (strlen(s->g[i].name) == len && !memcmp(s->g[i].name, name, len))
            return (int)i;
    return -1;
}

/* Turn on (on 1) or off (0) every guardrail named name; extra_body for them. */
static void mark(const struct sy_guardset *s, const char *name, size_t len, int on_, unsigned char *on, char **extra,
                 json_object *xb)
{
    for (size_t i = 0; i < s->n; i++)
        if (strlen(s->g[i].name) == len && !memcmp(s->g[i].name, name, len)) {
            on[i] = (unsigned char)on_;
            if (extra && xb && !extra[i])
                extra[i] = strdup(json_object_to_json_string_ext(xb, JSON_C_TO_STRING_PLAIN));
        }
}

/* A `guardrails` value: a list of names, {name: {extra_body: {...}}}, or the legacy {name: bool}. */
static void take(const struct sy_guardset *s, json_object *v, unsigned char *on, char **extra)
{
    if (!v)
        return;
    if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *e = json_object_array_get_idx(v, i);
            if (json_object_is_type(e, json_type_string))
                mark(s, json_object_get_string(e), (size_t)json_object_get_string_len(e), 1, on, extra, NULL);
            else if (json_object_is_type(e, json_type_object)) /* [{name: {extra_body}}] */
                take(s, e, on, extra);
        }
    } else if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, k, sub)
        {
            if (json_object_is_type(sub, json_type_boolean)) { /* false never turns a default_on one off */
                if (json_object_get_boolean(sub))
                    mark(s, k, strlen(k), 1, on, extra, NULL);
            } else {
                json_object *xb = NULL;
                if (json_object_is_type(sub, json_type_object))
                    json_object_object_get_ex(sub, "extra_body", &xb);
                mark(s, k, strlen(k), 1, on, extra, xb);
            }
        }
    }
}

static void take_text(const struct sy_guardset *s, const char *p, size_t n, int is_meta, unsigned char *on,
                      char **extra)
{
    if (!p || !n)
        return;
    struct json_tokener *tok = json_tokener_new();
    if (!tok)
        return;
    json_object *v = json_tokener_parse_ex(tok, p, (int)n);
    json_tokener_free(tok);
    if (!v)
        return;
    if (is_meta) {
        json_object *g = NULL;
        if (json_object_is_type(v, json_type_object) && json_object_object_get_ex(v, "guardrails", &g))
            take(s, g, on, extra);
    } else {
        take(s, v, on, extra);
    }
    json_object_put(v);
}

size_t sy_guardset_select(const struct sy_guardset *s, const char *request, size_t rlen, const char *metadata,
                          size_t mlen, const char *key_meta, const char *team_meta, unsigned char *on, char **extra)
{
    if (!s || !s->n)
        return 0;
    for (size_t i = 0; i < s->n; i++) {
        on[i] = (unsigned char)s->g[i].default_on;
        if (extra)
            extra[i] = NULL;
    }
    /* the team's, the key's and the request's: each can only add (a caller
     * cannot turn off what the config or its admin turned on; LiteLLM lets a
     * legacy {name: false} do so only with a key permission) */
    if (team_meta)
        take_text(s, team_meta, strlen(team_meta), 1, on, extra);
    if (key_meta)
        take_text(s, key_meta, strlen(key_meta), 1, on, extra);
    take_text(s, metadata, mlen, 1, on, extra);
    take_text(s, request, rlen, 0, on, extra);
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++)
        k += on[i];
    return k;
}
