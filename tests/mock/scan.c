/* scan.c - reads what the mock needs from a request body, and fault directives.
 *
 * The body is tokenized once with jsmn (no allocation for bodies of up to 512
 * tokens); everything extracted is a view into the body. Directives come from a
 * "mock" object in the body or from "model": "name@k=v,k=v"; both go through
 * one table (dirs[] below). The model-name form is applied first, so the body
 * object wins when both set the same directive.
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
};

void mock_fault_init(struct mock_fault *f)
{
    memset(f, 0, sizeof *f);
    f->status = f->retry_after = f->retry_after_ms = f->delay_ms = f->chunk_delay_ms = -1;
    f->reset_after_chunks = f->trickle_bytes_per_s = f->body_bytes = f->chunks = -1;
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
        case D_NUM:
            *(long *)field = parse_num(v, vn);
            break;
        case D_BOOL:
            *(long *)field = (vn == 4 && memcmp(v, "true", 4) == 0) || (vn == 1 && v[0] == '1');
            break;
        case D_STR:
            *(struct sy_str *)field = (struct sy_str){v, vn};
            break;
        }
        return;
    }
}

void mock_fault_parse_kv(struct mock_fault *f, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && s[j] != ',')
            j++;
        const char *eq = memchr(s + i, '=', j - i);
        if (eq)
            set_dir(f, s + i, (size_t)(eq - (s + i)), eq + 1, (size_t)(s + j - eq - 1));
        else if (j > i)
            set_dir(f, s + i, j - i, "true", 4);
        i = j + 1;
    }
}

struct sy_str mock_model_split(struct sy_str model, struct mock_fault *f)
{
    const char *at = model.p ? memchr(model.p, '@', model.n) : NULL;
    if (!at || !memchr(at, '=', model.n - (size_t)(at - model.p)))
        return model;
    mock_fault_parse_kv(f, at + 1, model.n - (size_t)(at - model.p) - 1);
    return (struct sy_str){model.p, (size_t)(at - model.p)};
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
    return t->type == JSMN_STRING && (size_t)(t->end - t->start) == n &&
           memcmp(js + t->start, s, n) == 0;
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
    if (cnt <= 0)
        return;
    q->items = malloc(sizeof *q->items * (size_t)cnt);
    if (!q->items)
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

int mock_scan(const char *body, size_t n, struct mock_req *q)
{
    jsmntok_t stack_toks[512], *t = stack_toks;
    jsmn_parser p;
    memset(q, 0, sizeof *q);
    q->max_tokens = q->dimensions = -1;
    mock_fault_init(&q->fault);

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
    int mock_obj = -1;
    for (int i = 1; i + 1 < nt;) {
        const jsmntok_t *k = &t[i], *v = &t[i + 1];
        if (tok_eq(body, k, "model") && v->type == JSMN_STRING)
            q->model = tok_str(body, v);
        else if (tok_eq(body, k, "stream"))
            q->stream = body[v->start] == 't';
        else if (tok_eq(body, k, "stream_options") && v->type == JSMN_OBJECT) {
            for (int j = i + 2; j + 1 < skip(t, nt, i + 1); j = skip(t, nt, j + 1))
                if (tok_eq(body, &t[j], "include_usage"))
                    q->include_usage = body[t[j + 1].start] == 't';
        } else if ((tok_eq(body, k, "max_tokens") || tok_eq(body, k, "max_completion_tokens")) &&
                   v->type == JSMN_PRIMITIVE)
            q->max_tokens = parse_num(body + v->start, (size_t)(v->end - v->start));
        else if (tok_eq(body, k, "messages") || tok_eq(body, k, "prompt"))
            q->prompt_chars += value_chars(t, nt, i + 1);
        else if (tok_eq(body, k, "input"))
            scan_input(body, t, nt, i + 1, q);
        else if (tok_eq(body, k, "dimensions") && v->type == JSMN_PRIMITIVE)
            q->dimensions = parse_num(body + v->start, (size_t)(v->end - v->start));
        else if (tok_eq(body, k, "encoding_format"))
            q->base64 = tok_eq(body, v, "base64");
        else if (tok_eq(body, k, "mock") && v->type == JSMN_OBJECT)
            mock_obj = i + 1;
        i = skip(t, nt, i + 1);
    }
    q->model = mock_model_split(q->model, &q->fault);
    if (mock_obj >= 0) {
        int end = skip(t, nt, mock_obj);
        for (int j = mock_obj + 1; j + 1 < end; j = skip(t, nt, j + 1)) {
            const jsmntok_t *v = &t[j + 1];
            if (t[j].type == JSMN_STRING)
                set_dir(&q->fault, body + t[j].start, (size_t)(t[j].end - t[j].start),
                        body + v->start, (size_t)(v->end - v->start));
        }
    }
out:
    if (t != stack_toks)
        free(t);
    return rc;
}
