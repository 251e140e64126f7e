/* count.c - prompt token counting with LiteLLM's token_counter rules.
 *
 * Chat (`messages`): 3 per message; every string field is encoded (+1 for a
 * `name`); tool_calls / function_call count their `arguments`; content lists
 * count text parts, images (85 for low/auto; high from the data: URL's pixel
 * size, 85 for remote URLs since the gateway never fetches), Anthropic
 * tool_use / tool_result / thinking / document blocks. Then 3 priming tokens,
 * the TypeScript-like rendering of `tools` + 9 (- 4 with a system message),
 * tool_choice "none" + 1, a named tool_choice + 7 + its name.
 * Completions `prompt` and embeddings `input`: the strings of a string or
 * list are joined and encoded; a token-id array counts one per id.
 * Counts are exact (LiteLLM's newest releases extrapolate very long strings
 * from samples; we do not). Python semantics are mirrored where they change a
 * count: a key present with null is str(None) = "None" where LiteLLM does
 * str(d.get(k, "")); what raises there (KeyError, TypeError) is SY_EINVAL.
 * tests/tokenizer/litellm-ref.mjs is the executable reference.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/errors.h"
#include "core/pyrepr.h"
#include "tokenizer/tok_internal.h"

#define MAXDEPTH 32

static long cnt(const struct sy_tok *t, const char *s, size_t n)
{
    return (long)sy_tok_count(t, s, n);
}
static long cnt_obj(const struct sy_tok *t, struct json_object *o)
{
    return cnt(t, json_object_get_string(o), (size_t)json_object_get_string_len(o));
}

static struct json_object *get(struct json_object *o, const char *k)
{
    struct json_object *v = NULL;
    if (json_object_is_type(o, json_type_object))
        json_object_object_get_ex(o, k, &v);
    return v;
}
/* Like dict.get: 1 when key k is present (*v may then be NULL for a JSON null). */
static int has(struct json_object *o, const char *k, struct json_object **v)
{
    *v = NULL;
    return json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, k, v);
}
static int is_str(struct json_object *o)
{
    return json_object_is_type(o, json_type_string);
}
static int streq(struct json_object *o, const char *s)
{
    return is_str(o) && strcmp(json_object_get_string(o), s) == 0;
}
static int truthy_str(struct json_object *o)
{
    return is_str(o) && json_object_get_string_len(o) > 0;
}

/* Python str() of a JSON value (dicts print as {'k': 'v'}), for fields that
 * LiteLLM counts as str(value). */
static void py_str(struct sy_buf *b, struct json_object *o, int top)
{
    switch (json_object_get_type(o)) {
    case json_type_null: SY_BUF_LIT(b, "None"); break;
    case json_type_boolean: sy_buf_puts(b, json_object_get_boolean(o) ? "True" : "False"); break;
    case json_type_int: sy_buf_puts(b, json_object_to_json_string(o)); break;
    case json_type_double: sy_py_float_repr(b, json_object_get_double(o)); break;
    case json_type_string: {
        const char *s = json_object_get_string(o);
        size_t n = (size_t)json_object_get_string_len(o);
        if (top) {
            sy_buf_append(b, s, n);
            break;
        }
        sy_py_str_repr(b, s, n);
        break;
    }
    case json_type_array: {
        SY_BUF_LIT(b, "[");
        size_t n = json_object_array_length(o);
        for (size_t i = 0; i < n; i++) {
            if (i)
                SY_BUF_LIT(b, ", ");
            py_str(b, json_object_array_get_idx(o, i), 0);
        }
        SY_BUF_LIT(b, "]");
        break;
    }
    case json_type_object: {
        SY_BUF_LIT(b, "{");
        int first = 1;
        json_object_object_foreach(o, k, v)
        {
            if (!first)
                SY_BUF_LIT(b, ", ");
            first = 0;
            struct json_object *ks = json_object_new_string(k);
            py_str(b, ks, 0);
            json_object_put(ks);
            SY_BUF_LIT(b, ": ");
            py_str(b, v, 0);
        }
        SY_BUF_LIT(b, "}");
        break;
    }
    }
}

static long cnt_py(const struct sy_tok *t, struct json_object *o)
{
    struct sy_buf b;
    sy_buf_init(&b, 64u << 20);
    py_str(&b, o, 1);
    long n = cnt(t, b.p ? b.p : "", b.len);
    sy_buf_free(&b);
    return n;
}

static long image_tokens(struct json_object *url_obj, const char *detail)
{
    if (strcmp(detail, "high") != 0)
        return 85;
    unsigned w, h;
    const char *u = json_object_get_string(url_obj);
    size_t n = (size_t)json_object_get_string_len(url_obj);
    if (n >= 5 && memcmp(u, "data:", 5) == 0) {
        if (sy__tok_image_size(u, n, &w, &h) != 0)
            w = h = 300; /* LiteLLM's DEFAULT_IMAGE_WIDTH/HEIGHT */
        return sy__tok_image_high_tokens(w, h);
    }
    return 85; /* remote image: never fetched */
}

static long content_list(const struct sy_tok *t, struct json_object *list, int depth);

/* Anthropic tool_use {name, input} / tool_result {content}. */
static long anthropic_block(const struct sy_tok *t, struct json_object *c, const char *type, int depth)
{
    static const char *const use_fields[] = {"input", "name", NULL};
    static const char *const result_fields[] = {"content", NULL};
    const char *const *f = strcmp(type, "tool_use") == 0 ? use_fields : result_fields;
    long n = 0;
    for (; *f; f++) {
        struct json_object *v = get(c, *f);
        if (!v)
            continue;
        if (is_str(v))
            n += cnt_obj(t, v);
        else if (json_object_is_type(v, json_type_array)) {
            long k = content_list(t, v, depth + 1);
            if (k < 0)
                return k;
            n += k;
        } else if (json_object_is_type(v, json_type_object))
            n += cnt_py(t, v);
    }
    return n;
}

static long content_list(const struct sy_tok *t, struct json_object *list, int depth)
{
    if (depth > MAXDEPTH)
        return SY_EINVAL;
    long n = 0;
    size_t len = json_object_array_length(list);
    for (size_t i = 0; i < len; i++) {
        struct json_object *c = json_object_array_get_idx(list, i);
        if (is_str(c)) {
            n += cnt_obj(t, c);
            continue;
        }
        struct json_object *ty = get(c, "type");
        if (!is_str(ty))
            return SY_EINVAL;
        const char *type = json_object_get_string(ty);
        if (strcmp(type, "text") == 0) {
            struct json_object *tx;
            if (has(c, "text", &tx)) /* str(c.get("text", "")): a null counts "None" */
                n += is_str(tx) ? cnt_obj(t, tx) : cnt_py(t, tx);
        } else if (strcmp(type, "image_url") == 0) {
            struct json_object *iu = get(c, "image_url");
            if (is_str(iu)) {
                const char *u = json_object_get_string(iu);
                size_t k = 0, ul = (size_t)json_object_get_string_len(iu);
                while (k < ul && strchr(" \t\n\r\v\f", u[k]))
                    k++;
                if (k == ul)
                    return SY_EINVAL; /* "Empty image_url string is not valid." */
                n += 85;
            } else if (json_object_is_type(iu, json_type_object)) {
                struct json_object *d, *u = get(iu, "url");
                if (has(iu, "detail", &d) && !is_str(d))
                    return SY_EINVAL; /* only low, high, auto */
                const char *detail = d ? json_object_get_string(d) : "auto";
                if (strcmp(detail, "low") && strcmp(detail, "high") && strcmp(detail, "auto"))
                    return SY_EINVAL;
                if (!truthy_str(u))
                    return SY_EINVAL;
                n += image_tokens(u, detail);
            } else {
                return SY_EINVAL;
            }
        } else if (strcmp(type, "image") == 0) {
            struct json_object *src = get(c, "source"), *st;
            if (!has(src, "type", &st))
                return SY_EINVAL; /* c["source"]["type"] must exist */
            n += 85;              /* Anthropic image blocks are counted with detail "auto" */
        } else if (strcmp(type, "document") == 0) {
            struct json_object *src = get(c, "source"), *st = get(src, "type");
            for (const char *const *k = (const char *const[]){"title", "context", NULL}; *k; k++)
                if (truthy_str(get(c, *k)))
                    n += cnt_obj(t, get(c, *k));
            if (streq(st, "text") && is_str(get(src, "data"))) {
                n += cnt_obj(t, get(src, "data"));
            } else if (streq(st, "content")) {
                struct json_object *cc = get(src, "content");
                if (is_str(cc))
                    n += cnt_obj(t, cc);
                else if (json_object_is_type(cc, json_type_array)) {
                    long k = content_list(t, cc, depth + 1);
                    if (k < 0)
                        return k;
                    n += k;
                }
            } else {
                n += 85;
            }
        } else if (strcmp(type, "file") == 0) {
            struct json_object *f = get(c, "file");
            if (truthy_str(get(f, "filename")))
                n += cnt_obj(t, get(f, "filename"));
            if (truthy_str(get(f, "file_data")))
                n += 85;
        } else if (strcmp(type, "tool_use") == 0 || strcmp(type, "tool_result") == 0) {
            long k = anthropic_block(t, c, type, depth);
            if (k < 0)
                return k;
            n += k;
        } else if (strcmp(type, "thinking") == 0 || strcmp(type, "redacted_thinking") == 0) {
            struct json_object *th;
            if (has(c, "thinking", &th))
                n += is_str(th) ? cnt_obj(t, th) : cnt_py(t, th);
        } else if (strcmp(type, "tool_reference") == 0) {
            struct json_object *tn = get(c, "tool_name"); /* str(c.get("tool_name") or "") */
            if (sy__tok_truthy(tn))
                n += is_str(tn) ? cnt_obj(t, tn) : cnt_py(t, tn);
        } else {
            return SY_EINVAL;
        }
    }
    return n;
}

static long args_tokens(const struct sy_tok *t, struct json_object *fn)
{
    struct json_object *a;
    if (!has(fn, "arguments", &a))
        return 0;
    if (!a) /* str(None) */
        return cnt(t, "None", 4);
    return is_str(a) ? cnt_obj(t, a) : cnt_py(t, a);
}

static long count_messages(const struct sy_tok *t, struct json_object *msgs, int *has_system)
{
    long n = 0;
    size_t len = json_object_array_length(msgs);
    for (size_t i = 0; i < len; i++) {
        struct json_object *m = json_object_array_get_idx(msgs, i);
        if (!json_object_is_type(m, json_type_object))
            return SY_EINVAL;
        n += 3;
        json_object_object_foreach(m, key, v)
        {
            if (!v)
                continue;
            if (strcmp(key, "tool_calls") == 0) {
                if (!json_object_is_type(v, json_type_array))
                    return SY_EINVAL;
                for (size_t k = 0; k < json_object_array_length(v); k++) {
                    struct json_object *fn = get(json_object_array_get_idx(v, k), "function");
                    if (!json_object_is_type(fn, json_type_object))
                        return SY_EINVAL;
                    n += args_tokens(t, fn);
                }
            } else if (strcmp(key, "function_call") == 0) {
                if (!json_object_is_type(v, json_type_object))
                    return SY_EINVAL;
                n += args_tokens(t, v);
            } else if (is_str(v)) {
                n += cnt_obj(t, v);
                if (strcmp(key, "name") == 0)
                    n += 1;
                if (strcmp(key, "role") == 0 && strcmp(json_object_get_string(v), "system") == 0)
                    *has_system = 1;
            } else if (strcmp(key, "content") == 0 && json_object_is_type(v, json_type_array)) {
                long k = content_list(t, v, 0);
                if (k < 0)
                    return k;
                n += k;
            }
        }
    }
    return n;
}

/* ---- tools rendered as LiteLLM's _format_function_definitions ---------- */

static void fmt_params(struct sy_buf *b, struct json_object *params, int indent);

static void py_item(struct sy_buf *b, struct json_object *it)
{
    SY_BUF_LIT(b, "\"");
    py_str(b, it, 1);
    SY_BUF_LIT(b, "\"");
}

static void fmt_type(struct sy_buf *b, struct json_object *props, int indent)
{
    struct json_object *ty = get(props, "type"), *en = get(props, "enum");
    if ((streq(ty, "string") || streq(ty, "integer") || streq(ty, "number")) && en) {
        if (json_object_is_type(en, json_type_array))
            for (size_t i = 0; i < json_object_array_length(en); i++) {
                if (i)
                    SY_BUF_LIT(b, " | ");
                py_item(b, json_object_array_get_idx(en, i));
            }
    } else if (streq(ty, "string")) {
        SY_BUF_LIT(b, "string");
    } else if (streq(ty, "array")) {
        fmt_type(b, get(props, "items"), indent);
        SY_BUF_LIT(b, "[]");
    } else if (streq(ty, "object")) {
        SY_BUF_LIT(b, "{\n");
        fmt_params(b, props, indent + 2);
        SY_BUF_LIT(b, "\n}");
    } else if (streq(ty, "integer") || streq(ty, "number")) {
        SY_BUF_LIT(b, "number");
    } else if (streq(ty, "boolean")) {
        SY_BUF_LIT(b, "boolean");
    } else if (streq(ty, "null")) {
        SY_BUF_LIT(b, "null");
    } else {
        SY_BUF_LIT(b, "any");
    }
}

/* Python's `required and key in required`: list membership, substring of a
 * string, key of a dict. */
static int in_required(struct json_object *req, const char *key)
{
    if (is_str(req))
        return json_object_get_string_len(req) > 0 && strstr(json_object_get_string(req), key) != NULL;
    if (json_object_is_type(req, json_type_object))
        return json_object_object_get_ex(req, key, NULL);
    if (!json_object_is_type(req, json_type_array))
        return 0;
    for (size_t i = 0; i < json_object_array_length(req); i++)
        if (streq(json_object_array_get_idx(req, i), key))
            return 1;
    return 0;
}

static int truthy(struct json_object *o)
{
    return sy__tok_truthy(o);
}

int sy__tok_truthy(struct json_object *o)
{
    switch (json_object_get_type(o)) {
    case json_type_null: return 0;
    case json_type_boolean: return json_object_get_boolean(o);
    case json_type_int: return json_object_get_int64(o) != 0;
    case json_type_double: return json_object_get_double(o) != 0;
    case json_type_string: return json_object_get_string_len(o) > 0;
    case json_type_array: return json_object_array_length(o) > 0;
    case json_type_object: return json_object_object_length(o) > 0;
    }
    return 0;
}

static void fmt_params(struct sy_buf *b, struct json_object *params, int indent)
{
    struct json_object *props = get(params, "properties");
    if (!truthy(props) || !json_object_is_type(props, json_type_object))
        return;
    struct json_object *req = get(params, "required");
    int first = 1;
    json_object_object_foreach(props, key, p)
    {
        struct json_object *d = get(p, "description");
        if (truthy(d)) {
            if (!first)
                SY_BUF_LIT(b, "\n");
            first = 0;
            for (int i = 0; i < indent; i++)
                SY_BUF_LIT(b, " ");
            SY_BUF_LIT(b, "// ");
            py_str(b, d, 1);
        }
        if (!first)
            SY_BUF_LIT(b, "\n");
        first = 0;
        for (int i = 0; i < indent; i++)
            SY_BUF_LIT(b, " ");
        sy_buf_puts(b, key);
        if (!in_required(req, key))
            SY_BUF_LIT(b, "?");
        SY_BUF_LIT(b, ": ");
        fmt_type(b, p, indent);
        SY_BUF_LIT(b, ",");
    }
}

static void fmt_function(struct sy_buf *b, struct json_object *fn)
{
    struct json_object *name = get(fn, "name"), *desc = get(fn, "description");
    if (!truthy(name))
        return;
    struct json_object *params = get(fn, "parameters");
    if (!json_object_is_type(params, json_type_object))
        params = NULL;
    struct json_object *props = get(params, "properties");
    if (truthy(desc)) {
        SY_BUF_LIT(b, "// ");
        py_str(b, desc, 1);
        SY_BUF_LIT(b, "\n");
    }
    SY_BUF_LIT(b, "type ");
    py_str(b, name, 1);
    if (json_object_is_type(props, json_type_object) && truthy(props)) {
        SY_BUF_LIT(b, " = (_: {\n");
        fmt_params(b, params, 0);
        SY_BUF_LIT(b, "\n}) => any;\n\n");
    } else {
        SY_BUF_LIT(b, " = () => any;\n\n");
    }
}

/* The rendering LiteLLM counts for `tools`, into b. */
static void fmt_tools(struct sy_buf *b, struct json_object *tools)
{
    SY_BUF_LIT(b, "namespace functions {\n\n");
    for (size_t i = 0; i < json_object_array_length(tools); i++) {
        struct json_object *tool = json_object_array_get_idx(tools, i);
        if (!json_object_is_type(tool, json_type_object))
            continue;
        struct json_object *fn = get(tool, "function");
        if (json_object_is_type(fn, json_type_object)) {
            fmt_function(b, fn);
            continue;
        }
        struct json_object *decl = get(tool, "function_declarations");
        if (!truthy(decl))
            decl = get(tool, "functionDeclarations");
        if (json_object_is_type(decl, json_type_array)) {
            for (size_t k = 0; k < json_object_array_length(decl); k++)
                if (json_object_is_type(json_object_array_get_idx(decl, k), json_type_object))
                    fmt_function(b, json_object_array_get_idx(decl, k));
            continue;
        }
        /* Anthropic shape {name, description, input_schema} */
        struct json_object *params = get(tool, "input_schema");
        if (!truthy(params))
            params = get(tool, "parameters");
        struct json_object *f = json_object_new_object();
        if (get(tool, "name"))
            json_object_object_add(f, "name", json_object_get(get(tool, "name")));
        if (get(tool, "description"))
            json_object_object_add(f, "description", json_object_get(get(tool, "description")));
        if (json_object_is_type(params, json_type_object))
            json_object_object_add(f, "parameters", json_object_get(params));
        fmt_function(b, f);
        json_object_put(f);
    }
    SY_BUF_LIT(b, "} // namespace functions");
}

long sy__tok_tools_render(struct json_object *tools, struct sy_buf *b)
{
    fmt_tools(b, tools);
    return (long)b->len;
}

static long count_extra(const struct sy_tok *t, struct json_object *tools, struct json_object *choice, int has_system)
{
    long n = 3;
    if (truthy(tools) && !json_object_is_type(tools, json_type_array))
        return SY_EINVAL;
    if (json_object_is_type(tools, json_type_array) && json_object_array_length(tools) > 0) {
        struct sy_buf b;
        sy_buf_init(&b, 64u << 20);
        fmt_tools(&b, tools);
        n += cnt(t, b.p ? b.p : "", b.len) + 9;
        sy_buf_free(&b);
        if (has_system)
            n -= 4;
    }
    if (streq(choice, "none")) {
        n += 1;
    } else if (json_object_is_type(choice, json_type_object)) {
        /* str(tool_choice["function"]["name"]): both keys must exist */
        struct json_object *name;
        if (!has(get(choice, "function"), "name", &name))
            return SY_EINVAL;
        n += 7;
        n += !name ? cnt(t, "None", 4) : is_str(name) ? cnt_obj(t, name) : cnt_py(t, name);
    }
    return n;
}

/* Text of `prompt` / `input`: a string, or the joined strings of a list; a
 * token-id list counts one per id. */
static long count_text(const struct sy_tok *t, struct json_object *v)
{
    if (is_str(v))
        return cnt_obj(t, v);
    if (!json_object_is_type(v, json_type_array))
        return SY_EINVAL;
    struct sy_buf b;
    sy_buf_init(&b, 256u << 20);
    long ids = 0;
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        struct json_object *e = json_object_array_get_idx(v, i);
        if (is_str(e))
            sy_buf_append(&b, json_object_get_string(e), (size_t)json_object_get_string_len(e));
        else if (json_object_is_type(e, json_type_int))
            ids++;
        else if (json_object_is_type(e, json_type_array))
            ids += (long)json_object_array_length(e);
    }
    long n = cnt(t, b.p ? b.p : "", b.len) + ids;
    sy_buf_free(&b);
    return n;
}

long sy__tok_count_parsed(const struct sy_tok *t, struct json_object *req, int with_tools)
{
    struct json_object *msgs = get(req, "messages");
    if (json_object_is_type(msgs, json_type_array)) {
        int has_system = 0;
        long n = count_messages(t, msgs, &has_system);
        if (n < 0)
            return n;
        long x = count_extra(t, with_tools ? get(req, "tools") : NULL, with_tools ? get(req, "tool_choice") : NULL,
                             has_system);
        return x < 0 ? x : n + x;
    }
    struct json_object *p = get(req, "prompt");
    if (!p)
        p = get(req, "input");
    if (p)
        return count_text(t, p);
    return SY_EINVAL;
}

long sy_tok_count_request(const struct sy_tok *t, const char *json, size_t len)
{
    struct json_tokener *tok = json_tokener_new();
    if (!tok)
        return SY_ENOMEM;
    struct json_object *req = json_tokener_parse_ex(tok, json, (int)len);
    int ok = req && json_tokener_get_error(tok) == json_tokener_success && json_object_is_type(req, json_type_object);
    json_tokener_free(tok);
    long n = ok ? sy__tok_count_parsed(t, req, 1) : SY_EJSON;
    json_object_put(req);
    return n;
}
