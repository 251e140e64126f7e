/* scan.c - reads what the mock needs from a request body, and fault directives.
 *
 * The body is tokenized once with jsmn (no allocation for bodies of up to 512
 * tokens); everything extracted is a view into the body. One scan serves every
 * dialect, since the fields it reads do not clash:
 *
 *   field                                   dialect             read into
 *   model, stream, max_tokens               all / most          model, stream, max_tokens
 *   messages / contents (last element)      all but Titan       n_msgs, last_role, last_tool_result
 *   tools[0] / toolConfig.tools[0]          all chat dialects   tool, props (input_schema,
 *                                                               parameters, inputSchema.json)
 *   generationConfig.maxOutputTokens        Gemini / Vertex     max_tokens
 *   inferenceConfig.maxTokens               Bedrock             max_tokens
 *   options.num_predict                     Ollama              max_tokens
 *   input / texts / inputText               OpenAI, Ollama / Cohere / Titan   items
 *   requests[].content.parts[0].text        Gemini batch        items (+ outputDimensionality)
 *   instances[].content                     Vertex predict      items
 *   dimensions, outputDimensionality,       embeddings          dimensions
 *   output_dimension, parameters.outputDimensionality
 *   anthropic_version, input_type           Vertex Claude, Cohere
 *   input[-1] .role / .type                 OpenAI Responses    last_role, last_tool_result
 *                                                               (type "function_call_output")
 *   instructions, max_output_tokens         OpenAI Responses    prompt_chars, max_tokens
 *   documents                               rerank              items
 *
 * mock_json_get() reads any other top-level member (responses.c, media.c,
 * files.c echo or check them).
 *
 * Directives come from a "mock" object in the body or from "model":
 * "name@k=v,k=v" (or a model named by the URL); all go through one table
 * (dirs[] below). The model-name forms are applied first, so the body object
 * wins when both set the same directive.
 */
#define JSMN_STATIC
#include <jsmn.h>

#include <stdlib.h>
#include <string.h>

#include "mock.h"

enum dir_kind { D_NUM, D_BOOL, D_STR };

static const struct {
    const char *name;
    enum dir_kind kind;
    size_t off;
} dirs[] = {
    {"status", D_NUM, offsetof(struct mock_fault, status)},
    {"retry_after", D_NUM, offsetof(struct mock_fault, retry_after)},
    {"retry_after_ms", D_NUM, offsetof(struct mock_fault, retry_after_ms)},
    {"delay_ms", D_NUM, offsetof(struct mock_fault, delay_ms)},
    {"chunk_delay_ms", D_NUM, offsetof(struct mock_fault, chunk_delay_ms)},
    {"reset_after_chunks", D_NUM, offsetof(struct mock_fault, reset_after_chunks)},
    {"trickle_bytes_per_s", D_NUM, offsetof(struct mock_fault, trickle_bytes_per_s)},
    {"body_bytes", D_NUM, offsetof(struct mock_fault, body_bytes)},
    {"close_without_response", D_BOOL, offsetof(struct mock_fault, close_without_response)},
    {"chunks", D_NUM, offsetof(struct mock_fault, chunks)},
    {"error_message", D_STR, offsetof(struct mock_fault, error_message)},
    {"error_type", D_STR, offsetof(struct mock_fault, error_type)},
    {"error_code", D_STR, offsetof(struct mock_fault, error_code)},
    {"content", D_STR, offsetof(struct mock_fault, content)},
    {"finish_reason", D_STR, offsetof(struct mock_fault, finish_reason)},
    {"stream_error", D_STR, offsetof(struct mock_fault, stream_error)},
    {"stream_error_after", D_NUM, offsetof(struct mock_fault, stream_error_after)},
    {"split_utf8", D_BOOL, offsetof(struct mock_fault, split_utf8)},
    {"utf8", D_BOOL, offsetof(struct mock_fault, utf8)},
    {"tool_call", D_BOOL, offsetof(struct mock_fault, tool_call)},
    {"tool_name", D_STR, offsetof(struct mock_fault, tool_name)},
    {"echo_tool_result", D_BOOL, offsetof(struct mock_fault, echo_tool_result)},
    {"expires_in", D_NUM, offsetof(struct mock_fault, expires_in)},
    {"dimensions", D_NUM, offsetof(struct mock_fault, dimensions)},
    {"no_usage", D_BOOL, offsetof(struct mock_fault, no_usage)},
    {"cache_read", D_NUM, offsetof(struct mock_fault, cache_read)},
    {"cache_write", D_NUM, offsetof(struct mock_fault, cache_write)},
    {"cache_write_1h", D_NUM, offsetof(struct mock_fault, cache_write_1h)},
};

void mock_fault_init(struct mock_fault *f)
{
    memset(f, 0, sizeof *f);
    f->status = f->retry_after = f->retry_after_ms = f->delay_ms = f->chunk_delay_ms = -1;
    f->reset_after_chunks = f->trickle_bytes_per_s = f->body_bytes = f->chunks = -1;
    f->stream_error_after = f->split_utf8 = f->utf8 = f->tool_call = f->expires_in = -1;
    f->dimensions = -1;
    f->close_without_response = 0;
}

static long parse_num(const char *s, size_t n)
{
    size_t i = 0;
    int neg = 0;
    long v = 0;
    if (i < n && s[i] == '-')
        neg = 1, i++;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
        if (v < 1000000000000L)
            v = v * 10 + (s[i] - '0');
    return neg ? -v : v;
}

/* Set one directive; unknown names are ignored. */
static void set_dir(struct mock_fault *f, const char *k, size_t kn, const char *v, size_t vn)
{
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        if (strlen(dirs[i].name) != kn || memcmp(dirs[i].name, k, kn) != 0)
            continue;
        char *field = (char *)f + dirs[i].off;
        switch (dirs[i].kind) {
        case D_NUM: *(long *)field = parse_num(v, vn); break;
        case D_BOOL: *(long *)field = (vn == 4 && memcmp(v, "true", 4) == 0) || (vn == 1 && v[0] == '1'); break;
        case D_STR: *(struct sy_str *)field = (struct sy_str){v, vn}; break;
        }
        return;
    }
}

static int is_dir(const char *k, size_t kn)
{
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (strlen(dirs[i].name) == kn && memcmp(dirs[i].name, k, kn) == 0)
            return 1;
    return 0;
}

void mock_fault_parse_kv(struct mock_fault *f, const char *s, size_t n, char sep)
{
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && s[j] != sep)
            j++;
        const char *eq = memchr(s + i, '=', j - i);
        if (eq)
            set_dir(f, s + i, (size_t)(eq - (s + i)), eq + 1, (size_t)(s + j - eq - 1));
        else if (j > i)
            set_dir(f, s + i, j - i, "true", 4);
        i = j + 1;
    }
}

/* The '@' that starts the directives: the first one followed by "key=" (a key
 * without '@') or by a known directive name alone. Vertex model ids carry an
 * '@' of their own ("claude-3-5-sonnet-v2@20241022"), directive values may too. */
static const char *directives_at(struct sy_str m)
{
    const char *e = m.p + m.n;
    for (const char *at = memchr(m.p, '@', m.n); at; at = memchr(at + 1, '@', (size_t)(e - at - 1))) {
        const char *k = at + 1, *seg = k;
        while (seg < e && *seg != ',')
            seg++;
        const char *eq = memchr(k, '=', (size_t)(seg - k));
        if (eq ? !memchr(k, '@', (size_t)(eq - k)) && eq > k : is_dir(k, (size_t)(seg - k)))
            return at;
        if (at + 1 >= e)
            break;
    }
    return NULL;
}

struct sy_str mock_model_split(struct sy_str model, struct mock_fault *f)
{
    const char *at = model.p && model.n ? directives_at(model) : NULL;
    if (!at)
        return model;
    mock_fault_parse_kv(f, at + 1, model.n - (size_t)(at - model.p) - 1, ',');
    return (struct sy_str){model.p, (size_t)(at - model.p)};
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

size_t mock_pct_decode(char *p, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        int h, l;
        if (p[i] == '%' && i + 2 < n && (h = hexval(p[i + 1])) >= 0 && (l = hexval(p[i + 2])) >= 0) {
            p[o++] = (char)(h << 4 | l);
            i += 2;
        } else {
            p[o++] = p[i];
        }
    }
    return o;
}

/* Index of the token after the subtree rooted at i. */
static int skip(const jsmntok_t *t, int n, int i)
{
    int end = t[i].end;
    for (i++; i < n && t[i].start < end; i++)
        ;
    return i;
}

static int tok_eq(const char *js, const jsmntok_t *t, const char *s)
{
    size_t n = strlen(s);
    return t->type == JSMN_STRING && (size_t)(t->end - t->start) == n && memcmp(js + t->start, s, n) == 0;
}

static struct sy_str tok_str(const char *js, const jsmntok_t *t)
{
    return (struct sy_str){js + t->start, (size_t)(t->end - t->start)};
}

/* Sum the lengths of the string values (not keys) in the subtree at i. */
static size_t value_chars(const jsmntok_t *t, int n, int i)
{
    size_t sum = 0;
    int end = skip(t, n, i);
    for (int k = i; k < end; k++)
        if (t[k].type == JSMN_STRING && t[k].size == 0)
            sum += (size_t)(t[k].end - t[k].start);
    return sum;
}

static long num_of(const char *js, const jsmntok_t *t)
{
    char c = js[t->start];
    if (t->type != JSMN_PRIMITIVE || !(c == '-' || (c >= '0' && c <= '9')))
        return -1;
    return parse_num(js + t->start, (size_t)(t->end - t->start));
}

/* Value of key in the object at obj, or -1. */
static int obj_get(const char *js, const jsmntok_t *t, int nt, int obj, const char *key)
{
    if (obj < 0 || t[obj].type != JSMN_OBJECT)
        return -1;
    int end = skip(t, nt, obj);
    for (int j = obj + 1; j + 1 < end; j = skip(t, nt, j + 1))
        if (tok_eq(js, &t[j], key))
            return j + 1;
    return -1;
}

static int arr_first(const jsmntok_t *t, int arr)
{
    return arr >= 0 && t[arr].type == JSMN_ARRAY && t[arr].size > 0 ? arr + 1 : -1;
}

static int items_alloc(struct mock_req *q, int cnt)
{
    free(q->items);
    q->n_items = 0;
    q->items = cnt > 0 ? malloc(sizeof *q->items * (size_t)cnt) : NULL;
    return q->items ? 0 : -1;
}

static void scan_input(const char *js, const jsmntok_t *t, int n, int i, struct mock_req *q)
{
    q->prompt_chars += value_chars(t, n, i);
    int cnt = 1, flat_tokens = 0;
    if (t[i].type == JSMN_ARRAY) {
        cnt = t[i].size;
        /* an array of numbers is one tokenized input */
        if (cnt > 0 && t[i + 1].type == JSMN_PRIMITIVE)
            flat_tokens = 1, cnt = 1;
        if (flat_tokens)
            q->prompt_chars += (size_t)t[i].size * 4;
    }
    if (cnt <= 0 || items_alloc(q, cnt) < 0)
        return;
    if (t[i].type != JSMN_ARRAY || flat_tokens) {
        q->items[0] = tok_str(js, &t[i]);
        q->n_items = 1;
        return;
    }
    for (int k = i + 1, m = 0; m < cnt && k < n; m++) {
        q->items[m] = tok_str(js, &t[k]);
        if (t[k].type == JSMN_ARRAY)
            q->prompt_chars += (size_t)t[k].size * 4;
        q->n_items = m + 1;
        k = skip(t, n, k);
    }
}

/* The text of a Gemini Content ({"parts":[{"text":…}]}): its first part's text. */
static struct sy_str content_text(const char *js, const jsmntok_t *t, int nt, int c)
{
    int p0 = arr_first(t, obj_get(js, t, nt, c, "parts"));
    int tx = obj_get(js, t, nt, p0, "text");
    return tx >= 0 && t[tx].type == JSMN_STRING ? tok_str(js, &t[tx]) : (struct sy_str){"", 0};
}

/* Gemini batchEmbedContents "requests" and Vertex predict "instances". */
static void scan_list(const char *js, const jsmntok_t *t, int nt, int i, struct mock_req *q, int requests)
{
    q->prompt_chars += value_chars(t, nt, i);
    if (t[i].type != JSMN_ARRAY || items_alloc(q, t[i].size) < 0)
        return;
    for (int k = i + 1, m = 0; m < t[i].size && k < nt; m++, k = skip(t, nt, k)) {
        struct sy_str it = {"", 0};
        if (requests) {
            it = content_text(js, t, nt, obj_get(js, t, nt, k, "content"));
            int d = obj_get(js, t, nt, k, "outputDimensionality"), mo = obj_get(js, t, nt, k, "model");
            if (d >= 0 && num_of(js, &t[d]) > 0)
                q->dimensions = num_of(js, &t[d]);
            if (mo < 0 || t[mo].type != JSMN_STRING || !sy_str_startswith(tok_str(js, &t[mo]), "models/", 7))
                q->bad_item_model = 1;
        } else {
            int c = obj_get(js, t, nt, k, "content");
            if (c >= 0 && t[c].type == JSMN_STRING)
                it = tok_str(js, &t[c]);
        }
        q->items[q->n_items++] = it;
    }
}

/* The last turn of "messages" / "contents": its role, and whether it carries a
 * tool result (role "tool"/"function", or a tool_result / toolResult /
 * functionResponse block anywhere in it). */
static void last_turn(const char *js, const jsmntok_t *t, int nt, int arr, struct mock_req *q)
{
    static const char *const results[] = {"tool_result", "toolResult", "functionResponse", "function_response"};
    q->prompt_chars += value_chars(t, nt, arr);
    if (t[arr].type != JSMN_ARRAY || t[arr].size == 0)
        return;
    q->n_msgs = t[arr].size;
    int k = arr + 1;
    for (int m = 1; m < t[arr].size && k < nt; m++)
        k = skip(t, nt, k);
    int role = obj_get(js, t, nt, k, "role"), end = skip(t, nt, k);
    q->last_role = role >= 0 && t[role].type == JSMN_STRING ? tok_str(js, &t[role]) : SY_STR_NULL;
    q->last_tool_result = SY_STR_EQ(q->last_role, "tool") || SY_STR_EQ(q->last_role, "function");
    int tc = q->last_tool_result ? obj_get(js, t, nt, k, "content") : -1;
    if (tc >= 0 && t[tc].type == JSMN_STRING)
        q->last_tool_text = tok_str(js, &t[tc]);
    for (int j = k; j < end && !q->last_tool_result; j++)
        for (size_t r = 0; r < sizeof results / sizeof results[0]; r++)
            if (tok_eq(js, &t[j], results[r]))
                q->last_tool_result = 1;
}

/* Responses API "input" items: the last one's role, and whether it is a tool
 * result ({"type":"function_call_output",…}). */
static void last_input(const char *js, const jsmntok_t *t, int nt, int arr, struct mock_req *q)
{
    if (t[arr].type != JSMN_ARRAY || t[arr].size == 0)
        return;
    int k = arr + 1;
    for (int m = 1; m < t[arr].size && k < nt; m++)
        k = skip(t, nt, k);
    int role = obj_get(js, t, nt, k, "role"), type = obj_get(js, t, nt, k, "type");
    q->last_role = role >= 0 && t[role].type == JSMN_STRING ? tok_str(js, &t[role]) : SY_STR_NULL;
    q->last_tool_result = type >= 0 && tok_eq(js, &t[type], "function_call_output");
    int out = q->last_tool_result ? obj_get(js, t, nt, k, "output") : -1;
    if (out >= 0 && t[out].type == JSMN_STRING)
        q->last_tool_text = tok_str(js, &t[out]);
}

/* A declared tool (element d of "tools"): Anthropic {name, input_schema},
 * OpenAI-style {type, function:{name, parameters}} (Cohere, Ollama), the
 * Responses API's {type, name, parameters}, Gemini {functionDeclarations:[{name,
 * parameters}]}, Bedrock {toolSpec:{name, inputSchema:{json}}}. Its name and
 * properties into q when want is empty or names it; 1 when taken. */
static int tool_at(const char *js, const jsmntok_t *t, int nt, int d, struct sy_str want, struct mock_req *q)
{
    int x;
    if (d < 0 || t[d].type != JSMN_OBJECT)
        return 0;
    if ((x = obj_get(js, t, nt, d, "function")) >= 0 && t[x].type == JSMN_OBJECT)
        d = x;
    else if ((x = obj_get(js, t, nt, d, "functionDeclarations")) >= 0)
        d = arr_first(t, x);
    else if ((x = obj_get(js, t, nt, d, "toolSpec")) >= 0)
        d = x;
    int name = obj_get(js, t, nt, d, "name");
    if (name < 0 || t[name].type != JSMN_STRING)
        return 0;
    struct sy_str nm = tok_str(js, &t[name]);
    if (want.n && (nm.n != want.n || memcmp(nm.p, want.p, nm.n)))
        return 0;
    q->tool = nm;
    q->n_props = q->has_schema = 0;
    int sch = obj_get(js, t, nt, d, "input_schema");
    if (sch < 0)
        sch = obj_get(js, t, nt, d, "parameters");
    if (sch < 0)
        sch = obj_get(js, t, nt, d, "parametersJsonSchema");
    if (sch < 0)
        sch = obj_get(js, t, nt, obj_get(js, t, nt, d, "inputSchema"), "json");
    if (sch < 0 || t[sch].type != JSMN_OBJECT)
        return 1;
    q->has_schema = 1;
    int props = obj_get(js, t, nt, sch, "properties");
    if (props < 0 || t[props].type != JSMN_OBJECT)
        return 1;
    for (int j = props + 1, m = 0; m < t[props].size && j < nt && q->n_props < MOCK_MAX_PROPS; m++) {
        q->props[q->n_props++] = tok_str(js, &t[j]);
        j = skip(t, nt, j + 1);
    }
    return 1;
}

static void first_tool(const char *js, const jsmntok_t *t, int nt, int tools, struct mock_req *q)
{
    tool_at(js, t, nt, arr_first(t, tools), SY_STR_NULL, q);
}

/* The tool_name directive: the declared tool of that name instead of the first. */
static void named_tool(const char *js, const jsmntok_t *t, int nt, int tools, struct mock_req *q)
{
    if (tools < 0 || t[tools].type != JSMN_ARRAY)
        return;
    for (int k = tools + 1, m = 0; m < t[tools].size && k < nt; m++, k = skip(t, nt, k))
        if (tool_at(js, t, nt, k, q->fault.tool_name, q))
            return;
}

/* max_tokens from a nested config object. */
static void nested_max(const char *js, const jsmntok_t *t, int nt, int obj, const char *key, struct mock_req *q)
{
    int v = obj_get(js, t, nt, obj, key);
    if (v >= 0 && num_of(js, &t[v]) >= 0)
        q->max_tokens = num_of(js, &t[v]);
}

int mock_scan(const char *body, size_t n, struct sy_str path_model, struct mock_req *q)
{
    jsmntok_t stack_toks[512], *t = stack_toks;
    jsmn_parser p;
    memset(q, 0, sizeof *q);
    q->max_tokens = q->dimensions = -1;
    mock_fault_init(&q->fault);
    q->body = body;
    q->body_n = n;
    if (path_model.p)
        q->model = mock_model_split(path_model, &q->fault);

    jsmn_init(&p);
    int nt = jsmn_parse(&p, body, n, t, 512);
    if (nt == JSMN_ERROR_NOMEM) {
        jsmn_init(&p);
        int need = jsmn_parse(&p, body, n, NULL, 0);
        if (need <= 0 || !(t = malloc(sizeof *t * (size_t)need)))
            return -1;
        jsmn_init(&p);
        nt = jsmn_parse(&p, body, n, t, (unsigned)need);
    }
    int rc = 0;
    if (nt < 1 || t[0].type != JSMN_OBJECT) {
        rc = -1;
        goto out;
    }
    int mock_obj = -1, tools_at = -1;
    struct sy_str body_model = SY_STR_NULL;
    for (int i = 1; i + 1 < nt;) {
        const jsmntok_t *k = &t[i], *v = &t[i + 1];
        int vi = i + 1;
        if (tok_eq(body, k, "model") && v->type == JSMN_STRING)
            body_model = tok_str(body, v), q->has_model = 1;
        else if (tok_eq(body, k, "model"))
            q->has_model = 1;
        else if (tok_eq(body, k, "stream"))
            q->stream = body[v->start] == 't', q->stream_set = 1;
        else if (tok_eq(body, k, "stream_options") && v->type == JSMN_OBJECT) {
            int u = obj_get(body, t, nt, vi, "include_usage");
            if (u >= 0)
                q->include_usage = body[t[u].start] == 't';
        } else if (tok_eq(body, k, "max_tokens") || tok_eq(body, k, "max_completion_tokens") ||
                   tok_eq(body, k, "max_output_tokens")) {
            if (num_of(body, v) >= 0)
                q->max_tokens = num_of(body, v);
        } else if (tok_eq(body, k, "messages") || tok_eq(body, k, "contents"))
            last_turn(body, t, nt, vi, q);
        else if (tok_eq(body, k, "prompt") || tok_eq(body, k, "system") || tok_eq(body, k, "systemInstruction") ||
                 tok_eq(body, k, "instructions"))
            q->prompt_chars += value_chars(t, nt, vi);
        else if (tok_eq(body, k, "input") || tok_eq(body, k, "texts") || tok_eq(body, k, "inputText") ||
                 tok_eq(body, k, "documents")) {
            scan_input(body, t, nt, vi, q);
            if (tok_eq(body, k, "input"))
                last_input(body, t, nt, vi, q);
        } else if (tok_eq(body, k, "requests"))
            scan_list(body, t, nt, vi, q, 1);
        else if (tok_eq(body, k, "instances"))
            scan_list(body, t, nt, vi, q, 0);
        else if (tok_eq(body, k, "content") && v->type == JSMN_OBJECT) { /* Gemini embedContent */
            q->prompt_chars += value_chars(t, nt, vi);
            if (items_alloc(q, 1) == 0)
                q->items[q->n_items++] = content_text(body, t, nt, vi);
        } else if (tok_eq(body, k, "dimensions") || tok_eq(body, k, "outputDimensionality") ||
                   tok_eq(body, k, "output_dimension")) {
            if (num_of(body, v) > 0)
                q->dimensions = num_of(body, v);
        } else if (tok_eq(body, k, "parameters")) {
            int d = obj_get(body, t, nt, vi, "outputDimensionality");
            if (d >= 0 && num_of(body, &t[d]) > 0)
                q->dimensions = num_of(body, &t[d]);
        } else if (tok_eq(body, k, "generationConfig"))
            nested_max(body, t, nt, vi, "maxOutputTokens", q);
        else if (tok_eq(body, k, "inferenceConfig"))
            nested_max(body, t, nt, vi, "maxTokens", q);
        else if (tok_eq(body, k, "options"))
            nested_max(body, t, nt, vi, "num_predict", q);
        else if (tok_eq(body, k, "tools"))
            first_tool(body, t, nt, tools_at = vi, q);
        else if (tok_eq(body, k, "toolConfig") && v->type == JSMN_OBJECT)
            first_tool(body, t, nt, tools_at = obj_get(body, t, nt, vi, "tools"), q);
        else if (tok_eq(body, k, "anthropic_version") && v->type == JSMN_STRING)
            q->anthropic_version = tok_str(body, v);
        else if (tok_eq(body, k, "input_type") && v->type == JSMN_STRING)
            q->input_type = tok_str(body, v);
        else if (tok_eq(body, k, "encoding_format"))
            q->base64 = tok_eq(body, v, "base64");
        else if (tok_eq(body, k, "mock") && v->type == JSMN_OBJECT)
            mock_obj = vi;
        i = skip(t, nt, vi);
    }
    if (path_model.p)
        (void)mock_model_split(body_model, &q->fault);
    else
        q->model = mock_model_split(body_model, &q->fault);
    if (mock_obj >= 0) {
        int end = skip(t, nt, mock_obj);
        for (int j = mock_obj + 1; j + 1 < end; j = skip(t, nt, j + 1)) {
            const jsmntok_t *v = &t[j + 1];
            if (t[j].type == JSMN_STRING)
                set_dir(&q->fault, body + t[j].start, (size_t)(t[j].end - t[j].start), body + v->start,
                        (size_t)(v->end - v->start));
        }
    }
    if (q->dimensions < 0 && q->fault.dimensions > 0)
        q->dimensions = q->fault.dimensions;
    if (q->fault.tool_name.n && q->tool.n)
        named_tool(body, t, nt, tools_at, q);
    if (q->fault.echo_tool_result > 0 && q->last_tool_result && q->last_tool_text.n && !q->fault.content.n)
        q->fault.content = q->last_tool_text;
out:
    if (t != stack_toks)
        free(t);
    return rc;
}

int mock_json_get(const char *body, size_t n, const char *const *keys, int nkeys, struct mock_jv *out)
{
    jsmntok_t stack_toks[512], *t = stack_toks;
    jsmn_parser p;
    for (int i = 0; i < nkeys; i++)
        out[i] = (struct mock_jv){SY_STR_NULL, 0};
    jsmn_init(&p);
    int nt = jsmn_parse(&p, body, n, t, 512);
    if (nt == JSMN_ERROR_NOMEM) {
        jsmn_init(&p);
        int need = jsmn_parse(&p, body, n, NULL, 0);
        if (need <= 0 || !(t = malloc(sizeof *t * (size_t)need)))
            return -1;
        jsmn_init(&p);
        nt = jsmn_parse(&p, body, n, t, (unsigned)need);
    }
    int rc = nt >= 1 && t[0].type == JSMN_OBJECT ? 0 : -1;
    for (int i = 1; rc == 0 && i + 1 < nt; i = skip(t, nt, i + 1)) {
        const jsmntok_t *v = &t[i + 1];
        for (int j = 0; j < nkeys; j++)
            if (tok_eq(body, &t[i], keys[j])) {
                out[j].v = tok_str(body, v);
                out[j].type = v->type == JSMN_STRING   ? 's'
                              : v->type == JSMN_OBJECT ? 'o'
                              : v->type == JSMN_ARRAY  ? 'a'
                                                       : 'p';
            }
    }
    if (t != stack_toks)
        free(t);
    return rc;
}
