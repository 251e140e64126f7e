/* sse.c - OpenAI streams to and from cached responses.
 *
 * Assemble: the SSE bytes a client received become the non-streamed
 * response they stand for, so a streamed request can be cached (LiteLLM
 * caches the stream's assembled ModelResponse the same way).
 *
 *   stream   := event* ; event := line* blank-line ; line ends "\n" or "\r\n"
 *   line     := "data:" [" "] payload | other-field | ":" comment
 *   payload  := chunk-json | "[DONE]"       (data lines of one event joined by "\n")
 *   chunk    := {"id","object":"chat.completion.chunk","created","model",
 *                "system_fingerprint"?, "choices":[{"index","delta":{"role"?,
 *                "content"?,"refusal"?,"tool_calls"?:[{"index","id"?,"type"?,
 *                "function":{"name"?,"arguments"?}}],"function_call"?},
 *                "logprobs","finish_reason"}], "usage"?}
 *             | {"object":"text_completion", ..., "choices":[{"index","text",
 *                "logprobs","finish_reason"}]}
 *
 * Per choice (by index): role, content, refusal and text concatenated,
 * tool calls merged by their index (id/type/name taken when present,
 * arguments concatenated), the last non-null finish_reason. usage is the
 * last non-null one. id, created, model and system_fingerprint come from the
 * first chunk carrying them. A stream with no [DONE], an error event
 * ({"error": ...}) or an unparseable chunk is refused (-1).
 *
 * Output (compact JSON, choices by index):
 *   {"id","object":"chat.completion","created","model","system_fingerprint"?,
 *    "choices":[{"index","message":{"role","content","refusal"?,"tool_calls"?,
 *    "function_call"?},"logprobs":null,"finish_reason"}],"usage"?}
 *   {"id","object":"text_completion","created","model","system_fingerprint"?,
 *    "choices":[{"text","index","logprobs":null,"finish_reason"}],"usage"?}
 *
 * Replay writes "data: <chunk>\n\n" frames: a role chunk, one content chunk
 * per choice (content, refusal and all tool calls at once), one finish chunk
 * per choice, the usage chunk (choices: []) when asked, then
 * "data: [DONE]\n\n". assemble(replay(x)) == x for any x assemble produced.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "core/buf.h"

#define MAX_CHOICES 128
#define MAX_TOOLS   128
#define FIELD_CAP   ((size_t)1 << 30)

struct tool {
    int present;
    struct sy_buf id, type, name, args;
};

struct choice {
    int present, has_content, has_refusal, has_fc;
    struct sy_buf role, content, refusal, fc_name, fc_args;
    struct json_object *finish; /* owned ref or NULL */
    struct tool *tools;
    int ntools; /* allocated slots */
};

struct asm_state {
    int done, text, seen_object;
    struct json_object *id, *created, *model, *fingerprint, *usage; /* owned refs */
    struct choice *ch;
    int nch;
};

static void take(struct json_object **slot, struct json_object *v)
{
    if (!*slot && v && !json_object_is_type(v, json_type_null))
        *slot = json_object_get(v);
}

static int cat(struct sy_buf *b, struct json_object *v)
{
    if (!v || json_object_is_type(v, json_type_null))
        return 0;
    if (!json_object_is_type(v, json_type_string))
        return -1;
    return sy_buf_append(b, json_object_get_string(v), (size_t)json_object_get_string_len(v)) ? -1 : 0;
}

static struct json_object *get(struct json_object *o, const char *k)
{
    struct json_object *v = NULL;
    if (o && json_object_is_type(o, json_type_object))
        json_object_object_get_ex(o, k, &v);
    return v;
}

static int index_of(struct json_object *o, int max)
{
    struct json_object *v = get(o, "index");
    if (!v)
        return 0;
    if (!json_object_is_type(v, json_type_int))
        return -1;
    int64_t i = json_object_get_int64(v);
    return i < 0 || i >= max ? -1 : (int)i;
}

static struct choice *choice_at(struct asm_state *st, int i)
{
    if (i >= st->nch) {
        int n = i + 1;
        struct choice *c = realloc(st->ch, (size_t)n * sizeof *c);
        if (!c)
            return NULL;
        memset(c + st->nch, 0, (size_t)(n - st->nch) * sizeof *c);
        for (int k = st->nch; k < n; k++) {
            sy_buf_init(&c[k].role, 64);
            sy_buf_init(&c[k].content, FIELD_CAP);
            sy_buf_init(&c[k].refusal, FIELD_CAP);
            sy_buf_init(&c[k].fc_name, 4096);
            sy_buf_init(&c[k].fc_args, FIELD_CAP);
        }
        st->ch = c;
        st->nch = n;
    }
    st->ch[i].present = 1;
    return &st->ch[i];
}

static struct tool *tool_at(struct choice *c, int i)
{
    if (i >= c->ntools) {
        int n = i + 1;
        struct tool *t = realloc(c->tools, (size_t)n * sizeof *t);
        if (!t)
            return NULL;
        memset(t + c->ntools, 0, (size_t)(n - c->ntools) * sizeof *t);
        for (int k = c->ntools; k < n; k++) {
            sy_buf_init(&t[k].id, 4096);
            sy_buf_init(&t[k].type, 64);
            sy_buf_init(&t[k].name, 4096);
            sy_buf_init(&t[k].args, FIELD_CAP);
        }
        c->tools = t;
        c->ntools = n;
    }
    c->tools[i].present = 1;
    return &c->tools[i];
}

static void state_free(struct asm_state *st)
{
    json_object_put(st->id);
    json_object_put(st->created);
    json_object_put(st->model);
    json_object_put(st->fingerprint);
    json_object_put(st->usage);
    for (int i = 0; i < st->nch; i++) {
        struct choice *c = &st->ch[i];
        sy_buf_free(&c->role);
        sy_buf_free(&c->content);
        sy_buf_free(&c->refusal);
        sy_buf_free(&c->fc_name);
        sy_buf_free(&c->fc_args);
        json_object_put(c->finish);
        for (int k = 0; k < c->ntools; k++) {
            sy_buf_free(&c->tools[k].id);
            sy_buf_free(&c->tools[k].type);
            sy_buf_free(&c->tools[k].name);
            sy_buf_free(&c->tools[k].args);
        }
        free(c->tools);
    }
    free(st->ch);
}

/* id/type/name are set once by OpenAI; if repeated, the first value stands. */
static int set_once(struct sy_buf *b, struct json_object *v)
{
    if (b->len)
        return 0;
    return cat(b, v);
}

static int tool_delta(struct choice *c, struct json_object *tcs)
{
    if (!json_object_is_type(tcs, json_type_array))
        return -1;
    size_t n = json_object_array_length(tcs);
    for (size_t k = 0; k < n; k++) {
        struct json_object *tc = json_object_array_get_idx(tcs, k);
        if (!json_object_is_type(tc, json_type_object))
            return -1;
        int i = index_of(tc, MAX_TOOLS);
        struct tool *t = i < 0 ? NULL : tool_at(c, i);
        if (!t)
            return -1;
        struct json_object *fn = get(tc, "function");
        if (set_once(&t->id, get(tc, "id")) || set_once(&t->type, get(tc, "type")) ||
            set_once(&t->name, get(fn, "name")) || cat(&t->args, get(fn, "arguments")))
            return -1;
    }
    return 0;
}

static int chunk(struct asm_state *st, struct json_object *o)
{
    if (!json_object_is_type(o, json_type_object) || get(o, "error"))
        return -1;
    struct json_object *obj = get(o, "object");
    if (obj && json_object_is_type(obj, json_type_string) && !st->seen_object) {
        st->seen_object = 1;
        st->text = !strcmp(json_object_get_string(obj), "text_completion");
    }
    take(&st->id, get(o, "id"));
    take(&st->created, get(o, "created"));
    take(&st->model, get(o, "model"));
    take(&st->fingerprint, get(o, "system_fingerprint"));
    struct json_object *u = get(o, "usage");
    if (u && !json_object_is_type(u, json_type_null)) {
        json_object_put(st->usage);
        st->usage = json_object_get(u);
    }
    struct json_object *choices = get(o, "choices");
    if (!choices || json_object_is_type(choices, json_type_null))
        return 0;
    if (!json_object_is_type(choices, json_type_array))
        return -1;
    size_t n = json_object_array_length(choices);
    for (size_t k = 0; k < n; k++) {
        struct json_object *ch = json_object_array_get_idx(choices, k);
        if (!json_object_is_type(ch, json_type_object))
            return -1;
        int i = index_of(ch, MAX_CHOICES);
        struct choice *c = i < 0 ? NULL : choice_at(st, i);
        if (!c)
            return -1;
        struct json_object *fr = get(ch, "finish_reason");
        if (fr && !json_object_is_type(fr, json_type_null)) {
            json_object_put(c->finish);
            c->finish = json_object_get(fr);
        }
        struct json_object *text = get(ch, "text");
        if (text && !json_object_is_type(text, json_type_null)) {
            c->has_content = 1;
            if (cat(&c->content, text))
                return -1;
        }
        struct json_object *d = get(ch, "delta");
        if (!d || json_object_is_type(d, json_type_null))
            continue;
        if (!json_object_is_type(d, json_type_object))
            return -1;
        struct json_object *v;
        if (set_once(&c->role, get(d, "role")))
            return -1;
        if ((v = get(d, "content")) && !json_object_is_type(v, json_type_null)) {
            c->has_content = 1;
            if (cat(&c->content, v))
                return -1;
        }
        if ((v = get(d, "refusal")) && !json_object_is_type(v, json_type_null)) {
            c->has_refusal = 1;
            if (cat(&c->refusal, v))
                return -1;
        }
        if ((v = get(d, "tool_calls")) && !json_object_is_type(v, json_type_null) && tool_delta(c, v))
            return -1;
        if ((v = get(d, "function_call")) && !json_object_is_type(v, json_type_null)) {
            c->has_fc = 1;
            if (set_once(&c->fc_name, get(v, "name")) || cat(&c->fc_args, get(v, "arguments")))
                return -1;
        }
    }
    return 0;
}

static int event(struct asm_state *st, const char *data, size_t n)
{
    if (st->done)
        return 0; /* nothing counts after [DONE] */
    if (n == 6 && !memcmp(data, "[DONE]", 6)) {
        st->done = 1;
        return 0;
    }
    if (n > INT32_MAX)
        return -1;
    struct json_tokener *tok = json_tokener_new();
    if (!tok)
        return -1;
    struct json_object *o = json_tokener_parse_ex(tok, data, (int)n);
    int ok = o && json_tokener_get_error(tok) == json_tokener_success && (size_t)json_tokener_get_parse_end(tok) == n;
    json_tokener_free(tok);
    int rc = ok ? chunk(st, o) : -1;
    json_object_put(o);
    return rc;
}

static struct json_object *str(const struct sy_buf *b)
{
    return json_object_new_string_len(b->p ? b->p : "", (int)b->len);
}

static void add_common(struct json_object *r, struct asm_state *st, const char *object)
{
    json_object_object_add(r, "id", st->id ? json_object_get(st->id) : json_object_new_string(""));
    json_object_object_add(r, "object", json_object_new_string(object));
    json_object_object_add(r, "created", st->created ? json_object_get(st->created) : json_object_new_int(0));
    json_object_object_add(r, "model", st->model ? json_object_get(st->model) : json_object_new_string(""));
    if (st->fingerprint)
        json_object_object_add(r, "system_fingerprint", json_object_get(st->fingerprint));
}

static struct json_object *build(struct asm_state *st)
{
    struct json_object *r = json_object_new_object();
    add_common(r, st, st->text ? "text_completion" : "chat.completion");
    struct json_object *arr = json_object_new_array();
    for (int i = 0; i < st->nch; i++) {
        struct choice *c = &st->ch[i];
        if (!c->present)
            continue;
        struct json_object *ch = json_object_new_object();
        struct json_object *fin = c->finish ? json_object_get(c->finish) : NULL;
        if (st->text) {
            json_object_object_add(ch, "text", str(&c->content));
            json_object_object_add(ch, "index", json_object_new_int(i));
            json_object_object_add(ch, "logprobs", NULL);
            json_object_object_add(ch, "finish_reason", fin);
        } else {
            json_object_object_add(ch, "index", json_object_new_int(i));
            struct json_object *m = json_object_new_object();
            json_object_object_add(m, "role", c->role.len ? str(&c->role) : json_object_new_string("assistant"));
            json_object_object_add(m, "content", c->has_content ? str(&c->content) : NULL);
            if (c->has_refusal)
                json_object_object_add(m, "refusal", str(&c->refusal));
            int any = 0;
            for (int k = 0; k < c->ntools; k++)
                any |= c->tools[k].present;
            if (any) {
                struct json_object *tcs = json_object_new_array();
                for (int k = 0; k < c->ntools; k++) {
                    struct tool *t = &c->tools[k];
                    if (!t->present)
                        continue;
                    struct json_object *tc = json_object_new_object(), *fn = json_object_new_object();
                    json_object_object_add(tc, "index", json_object_new_int(k));
                    json_object_object_add(tc, "id", str(&t->id));
                    json_object_object_add(tc, "type",
                                           t->type.len ? str(&t->type) : json_object_new_string("function"));
                    json_object_object_add(fn, "name", str(&t->name));
                    json_object_object_add(fn, "arguments", str(&t->args));
                    json_object_object_add(tc, "function", fn);
                    json_object_array_add(tcs, tc);
                }
                json_object_object_add(m, "tool_calls", tcs);
            }
            if (c->has_fc) {
                struct json_object *fn = json_object_new_object();
                json_object_object_add(fn, "name", str(&c->fc_name));
                json_object_object_add(fn, "arguments", str(&c->fc_args));
                json_object_object_add(m, "function_call", fn);
            }
            json_object_object_add(ch, "message", m);
            json_object_object_add(ch, "logprobs", NULL);
            json_object_object_add(ch, "finish_reason", fin);
        }
        json_object_array_add(arr, ch);
    }
    json_object_object_add(r, "choices", arr);
    if (st->usage)
        json_object_object_add(r, "usage", json_object_get(st->usage));
    return r;
}

static int emit(struct json_object *o, struct sy_buf *out, const char *prefix, const char *suffix)
{
    size_t len;
    const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
    if (!s)
        return -1;
    int rc = sy_buf_puts(out, prefix);
    rc |= sy_buf_append(out, s, len);
    rc |= sy_buf_puts(out, suffix);
    return rc ? -1 : 0;
}

int sy_cache_sse_assemble(const char *sse, size_t n, struct sy_buf *out)
{
    struct asm_state st;
    memset(&st, 0, sizeof st);
    struct sy_buf data;
    sy_buf_init(&data, FIELD_CAP);
    int rc = 0, have = 0;
    size_t i = 0;
    while (i <= n && rc == 0) {
        const char *nl = i < n ? memchr(sse + i, '\n', n - i) : NULL;
        size_t end = nl ? (size_t)(nl - sse) : n;
        size_t len = end - i;
        const char *line = sse + i;
        if (len && line[len - 1] == '\r')
            len--;
        if (len == 0) { /* blank line (or end of input): dispatch */
            if (have)
                rc = event(&st, data.p ? data.p : "", data.len);
            sy_buf_reset(&data);
            have = 0;
        } else if (len >= 5 && !memcmp(line, "data:", 5)) {
            size_t off = 5 + (len > 5 && line[5] == ' ');
            if (have)
                rc |= SY_BUF_LIT(&data, "\n");
            rc |= sy_buf_append(&data, line + off, len - off);
            have = 1;
        }
        if (!nl) {
            if (have && rc == 0)
                rc = event(&st, data.p ? data.p : "", data.len);
            break;
        }
        i = end + 1;
    }
    sy_buf_free(&data);
    if (rc == 0 && !st.done)
        rc = -1;
    if (rc == 0) {
        struct json_object *r = build(&st);
        rc = emit(r, out, "", "");
        json_object_put(r);
    }
    state_free(&st);
    return rc ? -1 : 0;
}

/* ---- replay ------------------------------------------------------------------ */

static struct json_object *chunk_new(struct json_object *resp, int text)
{
    struct json_object *c = json_object_new_object();
    struct json_object *v;
    json_object_object_add(c, "id", (v = get(resp, "id")) ? json_object_get(v) : json_object_new_string(""));
    json_object_object_add(c, "object", json_object_new_string(text ? "text_completion" : "chat.completion.chunk"));
    json_object_object_add(c, "created", (v = get(resp, "created")) ? json_object_get(v) : json_object_new_int(0));
    json_object_object_add(c, "model", (v = get(resp, "model")) ? json_object_get(v) : json_object_new_string(""));
    if ((v = get(resp, "system_fingerprint")) && !json_object_is_type(v, json_type_null))
        json_object_object_add(c, "system_fingerprint", json_object_get(v));
    return c;
}

static struct json_object *choice_new(struct json_object *idx, int text, struct json_object *delta_or_text,
                                      struct json_object *finish)
{
    struct json_object *c = json_object_new_object();
    if (text) {
        json_object_object_add(c, "text", delta_or_text);
        json_object_object_add(c, "index", json_object_get(idx));
    } else {
        json_object_object_add(c, "index", json_object_get(idx));
        json_object_object_add(c, "delta", delta_or_text);
    }
    json_object_object_add(c, "logprobs", NULL);
    json_object_object_add(c, "finish_reason", finish ? json_object_get(finish) : NULL);
    return c;
}

/* One frame holding one choice. */
static int frame(struct json_object *resp, int text, struct json_object *choice, struct sy_buf *out)
{
    struct json_object *c = chunk_new(resp, text), *arr = json_object_new_array();
    json_object_array_add(arr, choice);
    json_object_object_add(c, "choices", arr);
    int rc = emit(c, out, "data: ", "\n\n");
    json_object_put(c);
    return rc;
}

int sy_cache_sse_replay(const char *response, size_t n, int include_usage, struct sy_buf *out)
{
    if (!response || n > INT32_MAX)
        return -1;
    struct json_tokener *tok = json_tokener_new();
    if (!tok)
        return -1;
    struct json_object *r = json_tokener_parse_ex(tok, response, (int)n);
    json_tokener_free(tok);
    struct json_object *obj = get(r, "object"), *choices = get(r, "choices");
    int text =
        obj && json_object_is_type(obj, json_type_string) && !strcmp(json_object_get_string(obj), "text_completion");
    int chat =
        obj && json_object_is_type(obj, json_type_string) && !strcmp(json_object_get_string(obj), "chat.completion");
    if (!r || (!text && !chat) || !choices || !json_object_is_type(choices, json_type_array)) {
        json_object_put(r);
        return -1;
    }
    size_t nc = json_object_array_length(choices);
    int rc = 0;
    for (size_t k = 0; k < nc && rc == 0; k++) {
        struct json_object *ch = json_object_array_get_idx(choices, k);
        if (!json_object_is_type(ch, json_type_object)) {
            rc = -1;
            break;
        }
        struct json_object *idx = get(ch, "index");
        struct json_object *myidx = idx ? json_object_get(idx) : json_object_new_int((int)k);
        if (text) {
            struct json_object *t = get(ch, "text");
            rc = frame(r, 1, choice_new(myidx, 1, t ? json_object_get(t) : json_object_new_string(""), NULL), out);
            if (!rc)
                rc = frame(r, 1, choice_new(myidx, 1, json_object_new_string(""), get(ch, "finish_reason")), out);
            json_object_put(myidx);
            continue;
        }
        struct json_object *m = get(ch, "message"), *v;
        /* 1. the role (and an empty or null content, as OpenAI starts) */
        struct json_object *d = json_object_new_object();
        v = get(m, "role");
        json_object_object_add(d, "role", v ? json_object_get(v) : json_object_new_string("assistant"));
        v = get(m, "content");
        int has_content = v && json_object_is_type(v, json_type_string);
        json_object_object_add(d, "content", has_content ? json_object_new_string("") : NULL);
        rc = frame(r, 0, choice_new(myidx, 0, d, NULL), out);
        /* 2. content, refusal, tool calls, function_call */
        d = json_object_new_object();
        int any = 0;
        if (has_content && json_object_get_string_len(v) > 0) {
            json_object_object_add(d, "content", json_object_get(v));
            any = 1;
        }
        if ((v = get(m, "refusal")) && !json_object_is_type(v, json_type_null)) {
            json_object_object_add(d, "refusal", json_object_get(v));
            any = 1;
        }
        if ((v = get(m, "tool_calls")) && json_object_is_type(v, json_type_array) && json_object_array_length(v)) {
            struct json_object *tcs = json_object_new_array();
            for (size_t t = 0; t < json_object_array_length(v); t++) {
                struct json_object *tc = json_object_array_get_idx(v, t), *x;
                struct json_object *o = json_object_new_object();
                x = get(tc, "index");
                json_object_object_add(o, "index", x ? json_object_get(x) : json_object_new_int((int)t));
                if ((x = get(tc, "id")))
                    json_object_object_add(o, "id", json_object_get(x));
                if ((x = get(tc, "type")))
                    json_object_object_add(o, "type", json_object_get(x));
                if ((x = get(tc, "function")))
                    json_object_object_add(o, "function", json_object_get(x));
                json_object_array_add(tcs, o);
            }
            json_object_object_add(d, "tool_calls", tcs);
            any = 1;
        }
        if ((v = get(m, "function_call")) && json_object_is_type(v, json_type_object)) {
            json_object_object_add(d, "function_call", json_object_get(v));
            any = 1;
        }
        if (any && rc == 0)
            rc = frame(r, 0, choice_new(myidx, 0, d, NULL), out);
        else
            json_object_put(d);
        json_object_put(myidx);
    }
    /* 3. a finish chunk per choice */
    for (size_t k = 0; k < nc && rc == 0 && !text; k++) {
        struct json_object *ch = json_object_array_get_idx(choices, k);
        struct json_object *idx = get(ch, "index");
        struct json_object *myidx = idx ? json_object_get(idx) : json_object_new_int((int)k);
        rc = frame(r, 0, choice_new(myidx, 0, json_object_new_object(), get(ch, "finish_reason")), out);
        json_object_put(myidx);
    }
    struct json_object *u = get(r, "usage");
    int usage = include_usage && u && !json_object_is_type(u, json_type_null);
    if (rc == 0 && nc == 0 && !usage) { /* still carry id/created/model */
        struct json_object *c = chunk_new(r, text);
        json_object_object_add(c, "choices", json_object_new_array());
        rc = emit(c, out, "data: ", "\n\n");
        json_object_put(c);
    }
    if (rc == 0 && usage) {
        struct json_object *c = chunk_new(r, text);
        json_object_object_add(c, "choices", json_object_new_array());
        json_object_object_add(c, "usage", json_object_get(u));
        rc = emit(c, out, "data: ", "\n\n");
        json_object_put(c);
    }
    if (rc == 0)
        rc = SY_BUF_LIT(out, "data: [DONE]\n\n") ? -1 : 0;
    json_object_put(r);
    return rc;
}
