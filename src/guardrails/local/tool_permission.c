/* tool_permission.c - the tool_permission guardrail kind: which tools a call
 * may offer (pre_call: the request's tools) and which tool calls a model may
 * make (post_call: tool_calls / tool_use / function_call), by ordered
 * allow/deny rules, as LiteLLM's ToolPermissionGuardrail
 * (litellm/proxy/guardrails/guardrail_hooks/tool_permission.py).
 *
 * Settings: rules [{id, tool_name, tool_type, decision: allow|deny (any case),
 * allowed_param_patterns: {"path.to[].field": regex}}], default_action
 * allow|deny (deny), on_disallowed_action block|rewrite (block),
 * violation_message_template (Python str.format with {tool_name}, {rule_id},
 * {default_message}; a template that does not format gives the default
 * message, as LiteLLM's render_violation_message).
 *
 * tool_name / tool_type: LiteLLM first read tool_name as a glob ('*' any run;
 * configs such as "mcp__github_*" were written for it), then as a regex
 * (re.fullmatch, "^mcp__github_.*$"). Both kinds of config are in use, so a
 * pattern with regex syntax in it (^ $ \ ( ) [ ] { } | + or .* .+ .?) is a
 * regex, anything else a glob ('*' any run, '?' one character); for a plain
 * name both read the same. Case-sensitive, as LiteLLM. PCRE2 with a match
 * limit; a pattern that fails to compile fails the load.
 *
 * First rule that matches decides; a rule with allowed_param_patterns applies
 * to a tool call only when every path's values fullmatch (else the next rule
 * is tried, and a default deny reports the last failure, as LiteLLM).
 * Messages, exactly LiteLLM's:
 *   pre_call block   400 "{'error': 'Violated guardrail policy',
 *                    'detection_message': \"Tool 'x' denied by default action\"}"
 *                    (str() of HTTPException's detail dict)
 *   post_call block  400 "Guardrail raised an exception, Guardrail: <name>,
 *                    Message: <message>" (GuardrailRaisedException)
 *   rewrite          pre_call: the denied tools leave the request's tools
 *                    (tools and tool_choice go when none is left, where
 *                    LiteLLM sends an empty list); post_call: the denied calls
 *                    leave the answer and "Permission denied: <message>
 *                    (Rule: <id>)" lines join its text (chat content,
 *                    Anthropic text block, Responses output_text), the finish
 *                    reason becomes the dialect's "stop" when no call is left.
 *                    A stream has no body to rewrite here: a denied call in
 *                    it blocks.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <json-c/json.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/pyrepr.h"
#include "guardrails/guardrail.h"

struct param_pat {
    char *path, *pattern;
    pcre2_code *re;
};

struct rule {
    char *id;
    char *name_src, *type_src; /* as configured (NULL: none) */
    pcre2_code *name_re, *type_re;
    int allow;
    struct param_pat *params;
    size_t nparams;
};

struct tp_cfg {
    struct rule *rules;
    size_t nrules;
    int default_allow, rewrite;
    char *tmpl;
    pcre2_match_context *mctx;
};

#define MAX_DEPTH 100

static int looks_regex(const char *s)
{
    if (strpbrk(s, "^$\\()[]{}|+"))
        return 1;
    return strstr(s, ".*") || strstr(s, ".+") || strstr(s, ".?");
}

static pcre2_code *compile(const char *pat, int glob, char *err, size_t errlen, const char *what, const char *id)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 16);
    if (glob) {
        for (const char *p = pat; *p; p++) {
            if (*p == '*')
                sy_buf_puts(&b, ".*");
            else if (*p == '?')
                sy_buf_puts(&b, ".");
            else if ((unsigned char)*p < 0x80 &&
                     !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')) {
                char e[3] = {'\\', *p, 0};
                sy_buf_puts(&b, e);
            } else
                sy_buf_append(&b, p, 1);
        }
    } else {
        sy_buf_puts(&b, pat);
    }
    if (sy_buf_failed(&b) || !b.p) {
        sy_buf_free(&b);
        snprintf(err, errlen, "Invalid regex for %s in rule '%s'", what, id);
        return NULL;
    }
    int code;
    PCRE2_SIZE at;
    pcre2_code *re =
        pcre2_compile((PCRE2_SPTR)b.p, b.len, PCRE2_UTF | PCRE2_UCP | (glob ? PCRE2_DOTALL : 0), &code, &at, NULL);
    sy_buf_free(&b);
    if (!re) {
        PCRE2_UCHAR msg[120];
        pcre2_get_error_message(code, msg, sizeof msg);
        snprintf(err, errlen, "Invalid regex for %s in rule '%s': %s", what, id, (const char *)msg);
    }
    return re;
}

static int fullmatch(const struct tp_cfg *c, const pcre2_code *re, const char *s, size_t n, pcre2_match_data *md)
{
    int rc = pcre2_match(re, (PCRE2_SPTR)s, n, 0, PCRE2_ANCHORED | PCRE2_ENDANCHORED, md, c->mctx);
    return rc >= 0;
}

static char *strip_dup(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--;
    return n ? strndup(s, n) : NULL;
}

static void tp_free(struct tp_cfg *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nrules; i++) {
        struct rule *r = &c->rules[i];
        free(r->id);
        free(r->name_src);
        free(r->type_src);
        pcre2_code_free(r->name_re);
        pcre2_code_free(r->type_re);
        for (size_t k = 0; k < r->nparams; k++) {
            free(r->params[k].path);
            free(r->params[k].pattern);
            pcre2_code_free(r->params[k].re);
        }
        free(r->params);
    }
    free(c->rules);
    free(c->tmpl);
    pcre2_match_context_free(c->mctx);
    free(c);
}

static const char *str_of(json_object *o)
{
    return o && json_object_is_type(o, json_type_string) ? json_object_get_string(o) : NULL;
}

static int parse_rule(struct rule *r, json_object *o, size_t idx, char *err, size_t errlen)
{
    json_object *v;
    if (!o || !json_object_is_type(o, json_type_object)) {
        snprintf(err, errlen, "rules[%zu] must be an object", idx);
        return -1;
    }
    const char *id = json_object_object_get_ex(o, "id", &v) ? str_of(v) : NULL;
    if (!id) {
        snprintf(err, errlen, "rules[%zu]: id is required", idx);
        return -1;
    }
    r->id = strdup(id);
    const char *d = json_object_object_get_ex(o, "decision", &v) ? str_of(v) : NULL;
    if (!d || (strcasecmp(d, "allow") && strcasecmp(d, "deny"))) {
        snprintf(err, errlen, "rule '%s': decision must be allow or deny", id);
        return -1;
    }
    r->allow = !strcasecmp(d, "allow");
    const char *tn = json_object_object_get_ex(o, "tool_name", &v) ? str_of(v) : NULL;
    const char *tt = json_object_object_get_ex(o, "tool_type", &v) ? str_of(v) : NULL;
    r->name_src = tn ? strip_dup(tn) : NULL;
    r->type_src = tt ? strip_dup(tt) : NULL;
    if (!r->name_src && !r->type_src) {
        snprintf(err, errlen, "rule '%s': Each rule must specify at least a tool_name or tool_type regex", id);
        return -1;
    }
    if (r->name_src && !(r->name_re = compile(r->name_src, !looks_regex(r->name_src), err, errlen, "tool_name", id)))
        return -1;
    if (r->type_src && !(r->type_re = compile(r->type_src, !looks_regex(r->type_src), err, errlen, "tool_type", id)))
        return -1;
    if (json_object_object_get_ex(o, "allowed_param_patterns", &v) && v && json_object_is_type(v, json_type_object)) {
        size_t n = (size_t)json_object_object_length(v);
        r->params = calloc(n ? n : 1, sizeof *r->params);
        if (!r->params) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        json_object_object_foreach(v, path, pv)
        {
            const char *ps = str_of(pv);
            if (!ps) {
                snprintf(err, errlen, "rule '%s': allowed_param_patterns.%s must be a regex string", id, path);
                return -1;
            }
            struct param_pat *pp = &r->params[r->nparams++];
            pp->path = strdup(path);
            pp->pattern = strdup(ps);
            int code;
            PCRE2_SIZE at;
            pp->re = pcre2_compile((PCRE2_SPTR)ps, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP, &code, &at, NULL);
            if (!pp->re || !pp->path || !pp->pattern) {
                snprintf(err, errlen, "Invalid regex in allowed_param_patterns for rule '%s'", id);
                return -1;
            }
        }
    }
    return 0;
}

static int tp_open(struct sy_guard *g, struct json_object *params, const struct sy_genv *env, char *err, size_t errlen)
{
    (void)env;
    struct tp_cfg *c = calloc(1, sizeof *c);
    if (!c || !(c->mctx = pcre2_match_context_create(NULL))) {
        free(c);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    pcre2_set_match_limit(c->mctx, 200000);
    pcre2_set_depth_limit(c->mctx, 10000);
    json_object *v;
    const char *s;
    s = params && json_object_object_get_ex(params, "default_action", &v) ? str_of(v) : NULL;
    if (s && strcasecmp(s, "allow") && strcasecmp(s, "deny")) {
        snprintf(err, errlen, "default_action must be allow or deny");
        goto fail;
    }
    c->default_allow = s && !strcasecmp(s, "allow");
    s = params && json_object_object_get_ex(params, "on_disallowed_action", &v) ? str_of(v) : NULL;
    if (s && strcasecmp(s, "block") && strcasecmp(s, "rewrite")) {
        snprintf(err, errlen, "on_disallowed_action must be block or rewrite");
        goto fail;
    }
    c->rewrite = s && !strcasecmp(s, "rewrite");
    s = params && json_object_object_get_ex(params, "violation_message_template", &v) ? str_of(v) : NULL;
    if (s && *s)
        c->tmpl = strdup(s);
    if (params && json_object_object_get_ex(params, "rules", &v) && v && json_object_is_type(v, json_type_array)) {
        size_t n = json_object_array_length(v);
        c->rules = calloc(n ? n : 1, sizeof *c->rules);
        if (!c->rules) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        for (size_t i = 0; i < n; i++) {
            c->nrules++;
            if (parse_rule(&c->rules[i], json_object_array_get_idx(v, i), i, err, errlen) < 0)
                goto fail;
        }
    }
    g->impl = c;
    return 0;
fail:
    tp_free(c);
    return -1;
}

static void tp_close(struct sy_guard *g)
{
    tp_free(g->impl);
    g->impl = NULL;
}

/* Python's str.format(**{tool_name, rule_id, default_message}) of the
 * template; -1 when Python would raise (the caller keeps the default). */
static int render(const struct tp_cfg *c, const char *tool, const char *rule_id, const char *deflt, struct sy_buf *b)
{
    for (const char *p = c->tmpl; *p; p++) {
        if (*p == '{' && p[1] == '{') {
            sy_buf_puts(b, "{");
            p++;
        } else if (*p == '}' && p[1] == '}') {
            sy_buf_puts(b, "}");
            p++;
        } else if (*p == '}') {
            return -1; /* Single '}' encountered in format string */
        } else if (*p == '{') {
            const char *e = strchr(p, '}');
            if (!e)
                return -1;
            size_t k = (size_t)(e - p - 1);
            const char *key = p + 1;
            if (k == 9 && !memcmp(key, "tool_name", 9))
                sy_buf_puts(b, tool);
            else if (k == 7 && !memcmp(key, "rule_id", 7))
                sy_buf_puts(b, rule_id ? rule_id : "None");
            else if (k == 15 && !memcmp(key, "default_message", 15))
                sy_buf_puts(b, deflt);
            else
                return -1; /* KeyError, or a conversion / format spec we do not render */
            p = e;
        } else {
            sy_buf_append(b, p, 1);
        }
    }
    return sy_buf_failed(b) ? -1 : 0;
}

/* The message for a decision: the template, or the default. malloc'd. */
static char *message(const struct tp_cfg *c, const char *tool, const char *rule_id, const char *deflt)
{
    if (c->tmpl) {
        struct sy_buf b;
        sy_buf_init(&b, 1 << 20);
        if (render(c, tool, rule_id, deflt, &b) == 0) {
            char *m = b.p ? b.p : strdup("");
            return m;
        }
        sy_buf_free(&b);
    }
    return strdup(deflt);
}

static int rule_matches(const struct tp_cfg *c, const struct rule *r, const char *name, size_t nlen, const char *type,
                        pcre2_match_data *md)
{
    if (r->name_re && (!name || !fullmatch(c, r->name_re, name, nlen, md)))
        return 0;
    if (r->type_re && (!type || !fullmatch(c, r->type_re, type, strlen(type), md)))
        return 0;
    return 1;
}

/* str(value) of a JSON leaf, as Python prints what json.loads gave. */
static void py_str(json_object *v, struct sy_buf *b)
{
    if (!v) {
        sy_buf_puts(b, "None");
        return;
    }
    switch (json_object_get_type(v)) {
    case json_type_string: sy_buf_append(b, json_object_get_string(v), (size_t)json_object_get_string_len(v)); break;
    case json_type_boolean: sy_buf_puts(b, json_object_get_boolean(v) ? "True" : "False"); break;
    case json_type_int: sy_buf_printf(b, "%lld", (long long)json_object_get_int64(v)); break;
    case json_type_double: sy_py_float_repr(b, json_object_get_double(v)); break;
    default: sy_buf_puts(b, "None"); break;
    }
}

struct leaf {
    char *path;
    json_object *v;
};
struct leaves {
    struct leaf *v;
    size_t n, cap;
};

static void collect(json_object *o, const char *path, struct leaves *L, int depth)
{
    if (depth > MAX_DEPTH)
        return;
    if (o && json_object_is_type(o, json_type_object)) {
        json_object_object_foreach(o, k, sub)
        {
            char *np = NULL;
            if (asprintf(&np, "%s%s%s", path, *path ? "." : "", k) < 0)
                return;
            collect(sub, np, L, depth + 1);
            free(np);
        }
    } else if (o && json_object_is_type(o, json_type_array)) {
        char *np = NULL;
        if (asprintf(&np, "%s[]", path) < 0)
            return;
        for (size_t i = 0; i < json_object_array_length(o); i++)
            collect(json_object_array_get_idx(o, i), np, L, depth + 1);
        free(np);
    } else if (*path) {
        if (L->n == L->cap) {
            size_t nc = L->cap ? L->cap * 2 : 16;
            struct leaf *nv = realloc(L->v, nc * sizeof *nv);
            if (!nv)
                return;
            L->v = nv;
            L->cap = nc;
        }
        L->v[L->n].path = strdup(path);
        L->v[L->n].v = o;
        if (L->v[L->n].path)
            L->n++;
    }
}

static void leaves_free(struct leaves *L)
{
    for (size_t i = 0; i < L->n; i++)
        free(L->v[i].path);
    free(L->v);
}

/* allowed_param_patterns of r over the call's arguments: 1, or 0 with *fail set. */
static int params_ok(const struct tp_cfg *c, const struct rule *r, json_object *args, const char *tool,
                     pcre2_match_data *md, char **fail)
{
    struct leaves L = {0};
    collect(args, "", &L, 0);
    int ok = 1;
    for (size_t k = 0; k < r->nparams && ok; k++) {
        const struct param_pat *pp = &r->params[k];
        int any = 0;
        for (size_t i = 0; i < L.n && ok; i++) {
            if (strcmp(L.v[i].path, pp->path))
                continue;
            any = 1;
            struct sy_buf b;
            sy_buf_init(&b, 1 << 24);
            py_str(L.v[i].v, &b);
            if (!fullmatch(c, pp->re, b.p ? b.p : "", b.len, md)) {
                ok = 0;
                free(*fail);
                if (asprintf(fail, "Value '%s' for path '%s' does not match allowed pattern '%s' for tool '%s'",
                             b.p ? b.p : "", pp->path, pp->pattern, tool) < 0)
                    *fail = NULL;
            }
            sy_buf_free(&b);
        }
        if (ok && !any) {
            ok = 0;
            free(*fail);
            if (asprintf(fail, "Missing value for path '%s' required by rule '%s'", pp->path, r->id) < 0)
                *fail = NULL;
        }
    }
    leaves_free(&L);
    return ok;
}

struct decision {
    int allowed;
    const char *rule_id; /* borrowed from the config */
    char *msg;           /* malloc'd, or NULL (no message: LiteLLM lets it through) */
};

/* One tool (pre_call: no args, no parameter checks) or tool call (post_call). */
static void decide(const struct tp_cfg *c, const char *name, size_t nlen, const char *args, size_t alen, int call,
                   pcre2_match_data *md, struct decision *d)
{
    const char *type = "function";
    memset(d, 0, sizeof *d);
    char *tool = name && nlen ? strndup(name, nlen) : strdup(type);
    if (!tool)
        return;
    char *last_fail = NULL;
    json_object *parsed = NULL;
    int parsed_done = 0;
    for (size_t i = 0; i < c->nrules; i++) {
        const struct rule *r = &c->rules[i];
        if (!rule_matches(c, r, name && nlen ? tool : NULL, nlen, type, md))
            continue;
        if (call && r->nparams && r->name_re) {
            if (!parsed_done) {
                parsed_done = 1;
                if (args && alen) {
                    json_tokener *tk = json_tokener_new();
                    if (tk) {
                        parsed = json_tokener_parse_ex(tk, args, (int)(alen > 0x7fffffff ? 0x7fffffff : alen));
                        if (json_tokener_get_error(tk) != json_tokener_success) {
                            json_object_put(parsed);
                            parsed = NULL;
                        }
                        json_tokener_free(tk);
                    }
                }
            }
            if (!parsed || !json_object_is_type(parsed, json_type_object) || !json_object_object_length(parsed)) {
                free(last_fail);
                if (asprintf(&last_fail, "Tool '%s' is missing arguments required by rule '%s'", tool, r->id) < 0)
                    last_fail = NULL;
                continue;
            }
            if (!params_ok(c, r, parsed, tool, md, &last_fail))
                continue;
        }
        d->allowed = r->allow;
        d->rule_id = r->id;
        char *deflt = NULL;
        if (asprintf(&deflt, "Tool '%s' %s by rule '%s'", tool, r->allow ? "allowed" : "denied", r->id) >= 0) {
            d->msg = message(c, tool, r->id, deflt);
            free(deflt);
        }
        goto out;
    }
    d->allowed = c->default_allow;
    char *deflt = NULL;
    if (last_fail && !d->allowed) {
        deflt = last_fail;
        last_fail = NULL;
    } else if (asprintf(&deflt, "Tool '%s' %s by default action", tool, d->allowed ? "allowed" : "denied") < 0) {
        deflt = NULL;
    }
    if (deflt) {
        d->msg = message(c, tool, NULL, deflt);
        free(deflt);
    }
out:
    json_object_put(parsed);
    free(last_fail);
    free(tool);
}

/* ---- rewrite ---- */

static void add_error(struct sy_buf *errs, const struct decision *d)
{
    if (errs->len)
        sy_buf_puts(errs, "\n");
    sy_buf_printf(errs, "Permission denied: %s", d->msg ? d->msg : "");
    if (d->rule_id)
        sy_buf_printf(errs, " (Rule: %s)", d->rule_id);
}

static const char *jstr(json_object *o, const char *k)
{
    json_object *v;
    return o && json_object_object_get_ex(o, k, &v) ? str_of(v) : NULL;
}

/* A call's verdict from its JSON: chat {function: {name, arguments}}, Anthropic
 * {name, input}, Responses {name, arguments}. */
static int call_denied(const struct tp_cfg *c, json_object *name_holder, const char *args, size_t alen,
                       pcre2_match_data *md, struct sy_buf *errs)
{
    const char *name = jstr(name_holder, "name");
    if (!name)
        return 0;
    struct decision d;
    decide(c, name, strlen(name), args, alen, 1, md, &d);
    int denied = !d.allowed && d.msg;
    if (denied)
        add_error(errs, &d);
    free(d.msg);
    return denied;
}

static void append_text(json_object *holder, const char *key, const char *errs)
{
    const char *old = jstr(holder, key);
    struct sy_buf b;
    sy_buf_init(&b, (size_t)1 << 31);
    if (old && *old) {
        sy_buf_puts(&b, old);
        sy_buf_puts(&b, "\n\n");
    }
    sy_buf_puts(&b, errs);
    json_object_object_add(holder, key, json_object_new_string_len(b.p ? b.p : "", (int)b.len));
    sy_buf_free(&b);
}

static int rewrite_chat(const struct tp_cfg *c, json_object *root, pcre2_match_data *md)
{
    json_object *choices, *msg, *calls;
    int changed = 0;
    if (!json_object_object_get_ex(root, "choices", &choices) || !json_object_is_type(choices, json_type_array))
        return -1;
    for (size_t i = 0; i < json_object_array_length(choices); i++) {
        json_object *ch = json_object_array_get_idx(choices, i);
        if (!json_object_object_get_ex(ch, "message", &msg) || !json_object_object_get_ex(msg, "tool_calls", &calls) ||
            !json_object_is_type(calls, json_type_array))
            continue;
        struct sy_buf errs;
        sy_buf_init(&errs, (size_t)1 << 31);
        json_object *keep = json_object_new_array();
        for (size_t k = 0; k < json_object_array_length(calls); k++) {
            json_object *tc = json_object_array_get_idx(calls, k), *fn = NULL;
            json_object_object_get_ex(tc, "function", &fn);
            const char *a = jstr(fn, "arguments");
            if (call_denied(c, fn, a, a ? strlen(a) : 0, md, &errs))
                continue;
            json_object_array_add(keep, json_object_get(tc));
        }
        if (errs.len) {
            changed = 1;
            if (json_object_array_length(keep)) {
                json_object_object_add(msg, "tool_calls", keep);
            } else {
                json_object_put(keep);
                json_object_object_del(msg, "tool_calls");
                const char *fr = jstr(ch, "finish_reason");
                if (fr && !strcmp(fr, "tool_calls"))
                    json_object_object_add(ch, "finish_reason", json_object_new_string("stop"));
            }
            append_text(msg, "content", errs.p);
        } else {
            json_object_put(keep);
        }
        sy_buf_free(&errs);
    }
    return changed;
}

static int rewrite_messages(const struct tp_cfg *c, json_object *root, pcre2_match_data *md)
{
    json_object *content;
    if (!json_object_object_get_ex(root, "content", &content) || !json_object_is_type(content, json_type_array))
        return -1;
    struct sy_buf errs;
    sy_buf_init(&errs, (size_t)1 << 31);
    json_object *keep = json_object_new_array();
    int tool_left = 0;
    json_object *last_text = NULL;
    for (size_t k = 0; k < json_object_array_length(content); k++) {
        json_object *bl = json_object_array_get_idx(content, k);
        const char *type = jstr(bl, "type");
        if (type && !strcmp(type, "tool_use")) {
            json_object *in = NULL;
            json_object_object_get_ex(bl, "input", &in);
            const char *a = in ? json_object_to_json_string_ext(in, JSON_C_TO_STRING_PLAIN) : NULL;
            if (call_denied(c, bl, a, a ? strlen(a) : 0, md, &errs))
                continue;
            tool_left = 1;
        }
        json_object_array_add(keep, json_object_get(bl));
        if (type && !strcmp(type, "text"))
            last_text = bl;
    }
    if (!errs.len) {
        json_object_put(keep);
        sy_buf_free(&errs);
        return 0;
    }
    if (last_text) {
        append_text(last_text, "text", errs.p);
    } else {
        json_object *t = json_object_new_object();
        json_object_object_add(t, "type", json_object_new_string("text"));
        json_object_object_add(t, "text", json_object_new_string(errs.p));
        json_object_array_add(keep, t);
    }
    json_object_object_add(root, "content", keep);
    const char *sr = jstr(root, "stop_reason");
    if (!tool_left && sr && !strcmp(sr, "tool_use"))
        json_object_object_add(root, "stop_reason", json_object_new_string("end_turn"));
    sy_buf_free(&errs);
    return 1;
}

static int rewrite_responses(const struct tp_cfg *c, json_object *root, pcre2_match_data *md)
{
    json_object *output;
    if (!json_object_object_get_ex(root, "output", &output) || !json_object_is_type(output, json_type_array))
        return -1;
    struct sy_buf errs;
    sy_buf_init(&errs, (size_t)1 << 31);
    json_object *keep = json_object_new_array();
    json_object *last_text = NULL;
    for (size_t k = 0; k < json_object_array_length(output); k++) {
        json_object *it = json_object_array_get_idx(output, k), *parts;
        const char *type = jstr(it, "type");
        if (type && !strcmp(type, "function_call")) {
            const char *a = jstr(it, "arguments");
            if (call_denied(c, it, a, a ? strlen(a) : 0, md, &errs))
                continue;
        }
        json_object_array_add(keep, json_object_get(it));
        if (type && !strcmp(type, "message") && json_object_object_get_ex(it, "content", &parts) &&
            json_object_is_type(parts, json_type_array))
            for (size_t p = 0; p < json_object_array_length(parts); p++) {
                json_object *pt = json_object_array_get_idx(parts, p);
                const char *pty = jstr(pt, "type");
                if (pty && !strcmp(pty, "output_text"))
                    last_text = pt;
            }
    }
    if (!errs.len) {
        json_object_put(keep);
        sy_buf_free(&errs);
        return 0;
    }
    if (last_text) {
        append_text(last_text, "text", errs.p);
    } else {
        json_object *part = json_object_new_object(), *parts = json_object_new_array(), *m = json_object_new_object();
        json_object_object_add(part, "type", json_object_new_string("output_text"));
        json_object_object_add(part, "text", json_object_new_string(errs.p));
        json_object_object_add(part, "annotations", json_object_new_array());
        json_object_array_add(parts, part);
        json_object_object_add(m, "type", json_object_new_string("message"));
        json_object_object_add(m, "id", json_object_new_string("msg_tool_permission"));
        json_object_object_add(m, "status", json_object_new_string("completed"));
        json_object_object_add(m, "role", json_object_new_string("assistant"));
        json_object_object_add(m, "content", parts);
        json_object_array_add(keep, m);
    }
    json_object_object_add(root, "output", keep);
    sy_buf_free(&errs);
    return 1;
}

/* The request without the denied tools (names in denied, NUL-separated). */
static int rewrite_request(json_object *root, const struct sy_buf *denied, enum sy_gdialect d)
{
    json_object *tools;
    if (!json_object_object_get_ex(root, "tools", &tools) || !json_object_is_type(tools, json_type_array))
        return -1;
    json_object *keep = json_object_new_array();
    for (size_t k = 0; k < json_object_array_length(tools); k++) {
        json_object *t = json_object_array_get_idx(tools, k), *fn = NULL;
        const char *name =
            d == SY_GD_CHAT && json_object_object_get_ex(t, "function", &fn) ? jstr(fn, "name") : jstr(t, "name");
        int gone = 0;
        for (size_t at = 0; name && at < denied->len; at += strlen(denied->p + at) + 1)
            gone |= !strcmp(denied->p + at, name);
        if (!gone)
            json_object_array_add(keep, json_object_get(t));
    }
    json_object *tc = NULL;
    if (!json_object_array_length(keep)) {
        json_object_put(keep);
        json_object_object_del(root, "tools");
        json_object_object_del(root, "tool_choice");
        json_object_object_del(root, "parallel_tool_calls");
        return 1;
    }
    json_object_object_add(root, "tools", keep);
    if (json_object_object_get_ex(root, "tool_choice", &tc) && json_object_is_type(tc, json_type_object)) {
        json_object *fn = NULL;
        const char *name = json_object_object_get_ex(tc, "function", &fn) ? jstr(fn, "name") : jstr(tc, "name");
        for (size_t at = 0; name && at < denied->len; at += strlen(denied->p + at) + 1)
            if (!strcmp(denied->p + at, name)) {
                json_object_object_del(root, "tool_choice");
                break;
            }
    }
    return 1;
}

static void tp_check(const struct sy_guard *g, const struct sy_ginput *in, struct sy_gresult *r)
{
    const struct tp_cfg *c = g->impl;
    r->verdict = SY_GV_PASS;
    if (!c || !in->ntool)
        return;
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    if (!md) {
        sy_gresult_error(r, "tool_permission: out of memory");
        return;
    }
    int call = in->phase == SY_GM_POST;
    struct sy_buf denied;
    sy_buf_init(&denied, 1 << 20);
    size_t ndenied = 0;
    char *first_msg = NULL;
    for (size_t i = 0; i < in->ntool; i++) {
        const struct sy_gtool *t = &in->tool[i];
        if (!call && (!t->name || !t->name_len))
            continue; /* pre_call: tools without a name (built-in ones) are not checked, as LiteLLM */
        struct decision d;
        decide(c, t->name, t->name_len, t->args, t->args_len, call, md, &d);
        if (!d.allowed && d.msg) {
            ndenied++;
            if (!first_msg) {
                first_msg = d.msg;
                d.msg = NULL;
            }
            if (t->name)
                sy_buf_append(&denied, t->name, t->name_len), sy_buf_append(&denied, "", 1);
        }
        free(d.msg);
    }
    if (!ndenied) {
        pcre2_match_data_free(md);
        sy_buf_free(&denied);
        return;
    }
    int done = 0;
    if (c->rewrite && in->body && in->body_len) {
        json_tokener *tk = json_tokener_new();
        json_object *root =
            tk ? json_tokener_parse_ex(tk, in->body, (int)(in->body_len > 0x7fffffff ? 0x7fffffff : in->body_len))
               : NULL;
        if (tk && json_tokener_get_error(tk) == json_tokener_success && root &&
            json_object_is_type(root, json_type_object)) {
            int rc = -1;
            if (!call)
                rc = rewrite_request(root, &denied, in->dialect);
            else if (in->dialect == SY_GD_CHAT)
                rc = rewrite_chat(c, root, md);
            else if (in->dialect == SY_GD_MESSAGES)
                rc = rewrite_messages(c, root, md);
            else if (in->dialect == SY_GD_RESPONSES)
                rc = rewrite_responses(c, root, md);
            if (rc > 0) {
                size_t n;
                const char *s = json_object_to_json_string_length(
                    root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
                r->body = s ? strndup(s, n) : NULL;
                if (r->body) {
                    r->body_len = n;
                    r->verdict = SY_GV_MASKED;
                    r->masked = (unsigned)ndenied;
                    done = 1;
                }
            }
        }
        json_object_put(root);
        if (tk)
            json_tokener_free(tk);
    }
    if (!done) {
        if (!call) {
            struct sy_buf m;
            sy_buf_init(&m, 1 << 20);
            sy_buf_puts(&m, "{'error': 'Violated guardrail policy', 'detection_message': ");
            sy_py_str_repr(&m, first_msg ? first_msg : "", first_msg ? strlen(first_msg) : 0);
            sy_buf_puts(&m, "}");
            sy_gresult_block(r, 400, "%s", m.p ? m.p : "");
            sy_buf_free(&m);
        } else {
            sy_gresult_block(r, 400, "Guardrail raised an exception, Guardrail: %s, Message: %s",
                             g->name ? g->name : "None", first_msg ? first_msg : "");
        }
    }
    struct sy_buf det;
    sy_buf_init(&det, 1 << 20);
    sy_buf_puts(&det, "{\"denied_tools\":[");
    int first = 1;
    for (size_t at = 0; at < denied.len; at += strlen(denied.p + at) + 1) {
        sy_buf_puts(&det, first ? "\"" : ",\"");
        sy_buf_json_escape(&det, denied.p + at, strlen(denied.p + at));
        sy_buf_puts(&det, "\"");
        first = 0;
    }
    sy_buf_puts(&det, "]}");
    if (!sy_buf_failed(&det)) {
        free(r->detail);
        r->detail = det.p;
        det.p = NULL;
    }
    sy_buf_free(&det);
    free(first_msg);
    sy_buf_free(&denied);
    pcre2_match_data_free(md);
}

const struct sy_guard_ops sy_guard_tool_permission = {
    .name = "tool_permission",
    .modes = SY_GM_PRE | SY_GM_POST, /* LiteLLM's supported_event_hooks */
    .open = tp_open,
    .close = tp_close,
    .check = tp_check,
};
