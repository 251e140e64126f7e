/* oai.c - the OpenAI side of every translation: chunks, responses, usage,
 * finish reasons and LiteLLM's UnsupportedParamsError (see oai.h). */
#include "providers/oai.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"

/* Literal pieces appended without escaping (the writer's comma state is kept). */
#define LIT(w, s) sy_jw_raw((w), "" s, sizeof(s) - 1)
#define KEY(w, k)                                   \
    do {                                            \
        sy_jw_raw((w), "\"" k "\"", sizeof(k) + 1); \
        sy_buf_append((w)->b, ":", 1);              \
        (w)->after_key = 1;                         \
    } while (0)

/* 'data: {"id":..,"object":"chat.completion.chunk","created":..,"model":..' (the same for
 * every chunk of a stream: built once) and a writer positioned after it. */
/* st->pre: 'data: {"id":..,"object":"chat.completion.chunk","created":..,"model":..' (the
 * same for every chunk of a stream: built once). 0, or -1 when it does not fit. */
static int build_pre(struct sy_xstate *st)
{
    if (st->pre_len)
        return 0;
    struct sy_buf b = {.p = st->pre, .size = sizeof st->pre, .cap = sizeof st->pre - 1};
    struct sy_jw pw;
    SY_BUF_LIT(&b, "data: ");
    sy_jw_init(&pw, &b);
    sy_jw_obj(&pw);
    KEY(&pw, "id");
    sy_jw_cstr(&pw, st->id);
    KEY(&pw, "object");
    LIT(&pw, "\"chat.completion.chunk\"");
    KEY(&pw, "created");
    sy_jw_int(&pw, st->created);
    KEY(&pw, "model");
    sy_jw_cstr(&pw, st->model);
    if (pw.err)
        return -1;
    st->pre_len = b.len;
    return 0;
}

/* The chunk prefix, and a writer positioned after it (inside the object). */
static void head(struct sy_xstate *st, struct sy_jw *w, struct sy_buf *out)
{
    if (build_pre(st) != 0) { /* an absurdly long id or model: write it in place */
        SY_BUF_LIT(out, "data: ");
        sy_jw_init(w, out);
        sy_jw_obj(w);
        KEY(w, "id");
        sy_jw_cstr(w, st->id);
        KEY(w, "object");
        LIT(w, "\"chat.completion.chunk\"");
        KEY(w, "created");
        sy_jw_int(w, st->created);
        KEY(w, "model");
        sy_jw_cstr(w, st->model);
        return;
    }
    sy_buf_append(out, st->pre, st->pre_len);
    sy_jw_init(w, out);
    w->depth = 1;
    w->first[1] = 0; /* inside the object, members written */
}

/* {"id",...,"choices":[{"index":0,"delta":{   -- the caller writes delta members */
static void delta_open(struct sy_xstate *st, struct sy_jw *w, struct sy_buf *out)
{
    head(st, w, out);
    KEY(w, "choices");
    sy_jw_arr(w);
    sy_jw_obj(w);
    KEY(w, "index");
    sy_jw_int(w, 0);
    KEY(w, "delta");
    sy_jw_obj(w);
}

static void delta_close(struct sy_jw *w, struct sy_buf *out, const char *finish)
{
    sy_jw_end(w); /* delta */
    KEY(w, "finish_reason");
    sy_jw_cstr(w, finish);
    sy_jw_end(w);
    sy_jw_end(w);
    sy_jw_end(w);
    SY_BUF_LIT(out, "\n\n");
}

void sy_oai_chunk_role(struct sy_xstate *st, struct sy_buf *out)
{
    if (st->role_sent)
        return;
    st->role_sent = 1;
    struct sy_jw w;
    delta_open(st, &w, out);
    KEY(&w, "role");
    sy_jw_raw(&w, "\"assistant\"", 11);
    KEY(&w, "content");
    sy_jw_raw(&w, "\"\"", 2);
    delta_close(&w, out, NULL);
}

static void text_chunk(struct sy_xstate *st, struct sy_buf *out, int reasoning, const char *s, size_t n)
{
    sy_oai_chunk_role(st, out);
    if (!n)
        return;
    struct sy_jw w;
    delta_open(st, &w, out);
    if (reasoning)
        KEY(&w, "reasoning_content");
    else
        KEY(&w, "content");
    sy_jw_str(&w, s, n);
    delta_close(&w, out, NULL);
}

void sy_oai_chunk_text(struct sy_xstate *st, struct sy_buf *out, const char *s, size_t n)
{
    text_chunk(st, out, 0, s, n);
}

void sy_oai_chunk_text_json(struct sy_xstate *st, struct sy_buf *out, const char *jstr, size_t n)
{
    sy_oai_chunk_role(st, out);
    if (n <= 2)
        return;
    if (build_pre(st) != 0) { /* no prefix: decode and go the writer's way */
        struct sy_arena a;
        sy_arena_init(&a);
        char *arr = sy_arena_alloc(&a, n + 2);
        arr[0] = '[';
        memcpy(arr + 1, jstr, n);
        arr[n + 1] = ']';
        struct sy_jdoc d;
        size_t l;
        const char *t = sy_jdom_parse(&d, arr, n + 2, &a, 0) == 0 ? sy_jdom_str(&d, 1, &a, &l) : NULL;
        if (t)
            sy_oai_chunk_text(st, out, t, l);
        sy_arena_free(&a);
        return;
    }
    static const char mid[] = ",\"choices\":[{\"index\":0,\"delta\":{\"content\":";
    static const char end[] = "},\"finish_reason\":null}]}\n\n";
    if (sy_buf_reserve(out, st->pre_len + sizeof mid + n + sizeof end) != 0)
        return;
    sy_buf_append(out, st->pre, st->pre_len);
    sy_buf_append(out, mid, sizeof mid - 1);
    sy_buf_append(out, jstr, n);
    sy_buf_append(out, end, sizeof end - 1);
}

void sy_oai_chunk_reasoning(struct sy_xstate *st, struct sy_buf *out, const char *s, size_t n)
{
    text_chunk(st, out, 1, s, n);
}

int sy_oai_chunk_tool_start(struct sy_xstate *st, struct sy_buf *out, const char *id, size_t idl, const char *name,
                            size_t nl)
{
    sy_oai_chunk_role(st, out);
    int index = st->ntools++;
    struct sy_jw w;
    delta_open(st, &w, out);
    KEY(&w, "tool_calls");
    sy_jw_arr(&w);
    sy_jw_obj(&w);
    KEY(&w, "index");
    sy_jw_int(&w, index);
    KEY(&w, "id");
    sy_jw_str(&w, id ? id : "", id ? idl : 0);
    KEY(&w, "type");
    sy_jw_raw(&w, "\"function\"", 10);
    KEY(&w, "function");
    sy_jw_obj(&w);
    KEY(&w, "name");
    sy_jw_str(&w, name ? name : "", name ? nl : 0);
    KEY(&w, "arguments");
    sy_jw_raw(&w, "\"\"", 2);
    sy_jw_end(&w);
    sy_jw_end(&w);
    sy_jw_end(&w);
    delta_close(&w, out, NULL);
    return index;
}

void sy_oai_chunk_tool_args(struct sy_xstate *st, struct sy_buf *out, int index, const char *args, size_t n)
{
    sy_oai_chunk_role(st, out);
    if (!n)
        return;
    struct sy_jw w;
    delta_open(st, &w, out);
    KEY(&w, "tool_calls");
    sy_jw_arr(&w);
    sy_jw_obj(&w);
    KEY(&w, "index");
    sy_jw_int(&w, index);
    KEY(&w, "function");
    sy_jw_obj(&w);
    KEY(&w, "arguments");
    sy_jw_str(&w, args, n);
    sy_jw_end(&w);
    sy_jw_end(&w);
    sy_jw_end(&w);
    delta_close(&w, out, NULL);
}

void sy_oai_chunk_finish(struct sy_xstate *st, struct sy_buf *out, const char *finish_reason)
{
    if (st->finished)
        return;
    sy_oai_chunk_role(st, out);
    st->finished = 1;
    struct sy_jw w;
    delta_open(st, &w, out);
    delta_close(&w, out, finish_reason ? finish_reason : "stop");
}

void sy_oai_usage_members(const struct sy_xusage *u, struct sy_buf *out)
{
    char t[320];
    int n = snprintf(
        t, sizeof t, "\"prompt_tokens\":%lld,\"completion_tokens\":%lld,\"total_tokens\":%lld", (long long)u->prompt,
        (long long)u->completion,
        (long long)((unsigned long long)u->prompt + (unsigned long long)u->completion)); /* no UB on lying usage */
    sy_buf_append(out, t, (size_t)n);
    if (u->cache_write_1h > 0 && u->cache_write_1h <= u->cache_write) { /* LiteLLM's cache_creation_token_details */
        n = snprintf(t, sizeof t,
                     ",\"prompt_tokens_details\":{\"cached_tokens\":%lld,\"cache_creation_tokens\":%lld,"
                     "\"cache_creation_token_details\":{\"ephemeral_5m_input_tokens\":%lld,"
                     "\"ephemeral_1h_input_tokens\":%lld}},\"cache_read_input_tokens\":%lld,"
                     "\"cache_creation_input_tokens\":%lld",
                     (long long)u->cache_read, (long long)u->cache_write,
                     (long long)(u->cache_write - u->cache_write_1h), (long long)u->cache_write_1h,
                     (long long)u->cache_read, (long long)u->cache_write);
        sy_buf_append(out, t, (size_t)n);
    } else if (u->cache_read || u->cache_write) {
        n = snprintf(t, sizeof t,
                     ",\"prompt_tokens_details\":{\"cached_tokens\":%lld},\"cache_read_input_tokens\":%lld,"
                     "\"cache_creation_input_tokens\":%lld",
                     (long long)u->cache_read, (long long)u->cache_read, (long long)u->cache_write);
        sy_buf_append(out, t, (size_t)n);
    }
    if (u->reasoning) {
        n = snprintf(t, sizeof t, ",\"completion_tokens_details\":{\"reasoning_tokens\":%lld}",
                     (long long)u->reasoning);
        sy_buf_append(out, t, (size_t)n);
    }
}

void sy_oai_chunk_usage(struct sy_xstate *st, struct sy_buf *out)
{
    struct sy_jw w;
    head(st, &w, out);
    KEY(&w, "choices");
    sy_jw_raw(&w, "[]", 2);
    KEY(&w, "usage");
    sy_jw_raw(&w, "{", 1);
    sy_oai_usage_members(&st->u, out);
    SY_BUF_LIT(out, "}}\n\n");
}

void sy_oai_write_response(const struct sy_xstate *st, const struct sy_xmsg *m, struct sy_buf *out)
{
    struct sy_jw w;
    sy_jw_init(&w, out);
    sy_jw_obj(&w);
    KEY(&w, "id");
    sy_jw_cstr(&w, st->id);
    KEY(&w, "object");
    sy_jw_raw(&w, "\"chat.completion\"", 17);
    KEY(&w, "created");
    sy_jw_int(&w, st->created);
    KEY(&w, "model");
    sy_jw_cstr(&w, st->model);
    KEY(&w, "choices");
    sy_jw_arr(&w);
    sy_jw_obj(&w);
    KEY(&w, "index");
    sy_jw_int(&w, 0);
    KEY(&w, "message");
    sy_jw_obj(&w);
    KEY(&w, "role");
    sy_jw_raw(&w, "\"assistant\"", 11);
    KEY(&w, "content");
    if (m->content)
        sy_jw_str(&w, m->content, m->content_len);
    else
        sy_jw_null(&w);
    if (m->reasoning) {
        KEY(&w, "reasoning_content");
        sy_jw_str(&w, m->reasoning, m->reasoning_len);
    }
    if (m->thinking_blocks_json) {
        KEY(&w, "thinking_blocks");
        sy_jw_raw(&w, m->thinking_blocks_json, m->thinking_blocks_len);
    }
    if (m->ntools) {
        KEY(&w, "tool_calls");
        sy_jw_arr(&w);
        for (size_t i = 0; i < m->ntools; i++) {
            const struct sy_xtool *t = &m->tools[i];
            sy_jw_obj(&w);
            KEY(&w, "id");
            sy_jw_str(&w, t->id ? t->id : "", t->id ? t->idl : 0);
            KEY(&w, "type");
            sy_jw_raw(&w, "\"function\"", 10);
            KEY(&w, "function");
            sy_jw_obj(&w);
            KEY(&w, "name");
            sy_jw_str(&w, t->name ? t->name : "", t->name ? t->nl : 0);
            KEY(&w, "arguments");
            sy_jw_str(&w, t->args ? t->args : "", t->args ? t->al : 0);
            sy_jw_end(&w);
            sy_jw_end(&w);
        }
        sy_jw_end(&w);
    }
    sy_jw_end(&w); /* message */
    KEY(&w, "finish_reason");
    sy_jw_cstr(&w, m->finish_reason ? m->finish_reason : "stop");
    sy_jw_end(&w);
    sy_jw_end(&w); /* choices */
    KEY(&w, "usage");
    sy_jw_raw(&w, "{", 1);
    sy_oai_usage_members(&st->u, out);
    SY_BUF_LIT(out, "}}");
}

void sy_oai_write_embeddings(const struct sy_xstate *st, const char *const *vec, const size_t *vec_len, size_t n,
                             struct sy_buf *out)
{
    struct sy_jw w;
    sy_jw_init(&w, out);
    sy_jw_obj(&w);
    KEY(&w, "object");
    sy_jw_raw(&w, "\"list\"", 6);
    KEY(&w, "data");
    sy_jw_arr(&w);
    for (size_t i = 0; i < n; i++) {
        sy_jw_obj(&w);
        KEY(&w, "object");
        sy_jw_raw(&w, "\"embedding\"", 11);
        KEY(&w, "index");
        sy_jw_int(&w, (int64_t)i);
        KEY(&w, "embedding");
        sy_jw_raw(&w, vec[i], vec_len[i]);
        sy_jw_end(&w);
    }
    sy_jw_end(&w);
    KEY(&w, "model");
    sy_jw_cstr(&w, st->model);
    KEY(&w, "usage");
    char t[96];
    int k = snprintf(t, sizeof t, "{\"prompt_tokens\":%lld,\"total_tokens\":%lld}", (long long)st->u.prompt,
                     (long long)st->u.prompt);
    sy_jw_raw(&w, t, (size_t)k);
    sy_jw_end(&w);
}

/* LiteLLM's map_finish_reason (litellm_core_utils/core_helpers.py). */
const char *sy_oai_finish_reason(const char *r, size_t n)
{
    static const struct {
        const char *from, *to;
    } map[] = {
        {"stop", "stop"},
        {"end_turn", "stop"},
        {"stop_sequence", "stop"},
        {"STOP", "stop"},
        {"COMPLETE", "stop"},
        {"STOP_SEQUENCE", "stop"},
        {"eos_token", "stop"},
        {"eos", "stop"},
        {"FINISH_REASON_UNSPECIFIED", "stop"},
        {"pause_turn", "stop"},
        {"length", "length"},
        {"max_tokens", "length"},
        {"MAX_TOKENS", "length"},
        {"model_context_window_exceeded", "length"},
        {"tool_use", "tool_calls"},
        {"tool_calls", "tool_calls"},
        {"TOOL_CALL", "tool_calls"},
        {"function_call", "function_call"},
        {"content_filter", "content_filter"},
        {"content_filtered", "content_filter"},
        {"guardrail_intervened", "content_filter"},
        {"refusal", "content_filter"},
        {"SAFETY", "content_filter"},
        {"RECITATION", "content_filter"},
        {"BLOCKLIST", "content_filter"},
        {"PROHIBITED_CONTENT", "content_filter"},
        {"SPII", "content_filter"},
        {"IMAGE_SAFETY", "content_filter"},
        {"LANGUAGE", "content_filter"},
        {"OTHER", "content_filter"},
        {"MALFORMED_FUNCTION_CALL", "stop"},
        {"ERROR_TOXIC", "content_filter"},
        {"ERROR", "stop"},
    };
    if (!r)
        return "stop";
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strlen(map[i].from) == n && memcmp(map[i].from, r, n) == 0)
            return map[i].to;
    return "stop";
}

int sy_oai_drop_extra(const struct sy_xctx *x, const char *param)
{
    const struct sy_pconf *pc = x->pc;
    for (size_t i = 0; pc && i < pc->n_drop_extra; i++)
        if (strcmp(pc->drop_extra[i], param) == 0)
            return 1;
    return 0;
}

int sy_oai_unsupported(const struct sy_xctx *x, const char *provider, const char *param, struct sy_xerr *e)
{
    if ((x->pc && x->pc->drop_params) || sy_oai_drop_extra(x, param))
        return 1;
    char m[600];
    int n = snprintf(m, sizeof m,
                     "litellm.UnsupportedParamsError: %s does not support parameters: ['%s'], for model=%s. To "
                     "drop these, set `litellm.drop_params=True` or for proxy:\n\n`litellm_settings:\n "
                     "drop_params: true`\n",
                     provider, param, x->model ? x->model : "");
    sy_oai_err(e, 400, m, n > 0 ? (size_t)n : 0);
    snprintf(e->param, sizeof e->param, "%s", param);
    snprintf(e->cls, sizeof e->cls, "UnsupportedParamsError");
    return 0;
}

void sy_oai_err(struct sy_xerr *e, int status, const char *message, size_t n)
{
    const char *t;
    switch (status) {
    case 400:
    case 413:
    case 422: t = "invalid_request_error"; break;
    case 401: t = "authentication_error"; break;
    case 403: t = "permission_denied"; break;
    case 404: t = "not_found_error"; break;
    case 408: t = "timeout"; break;
    case 429: t = "rate_limit_error"; break;
    case 503: t = "service_unavailable"; break;
    default: t = status >= 500 ? "api_error" : "invalid_request_error";
    }
    e->status = status;
    snprintf(e->type, sizeof e->type, "%s", t);
    e->param[0] = 0;
    e->cls[0] = 0;
    if (n >= sizeof e->message)
        n = sizeof e->message - 1;
    memcpy(e->message, message ? message : "", message ? n : 0);
    e->message[message ? n : 0] = 0;
}
