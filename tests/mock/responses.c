/* responses.c - the OpenAI Responses API of the mock: POST /v1/responses (JSON
 * or SSE), and the responses it remembers for GET/DELETE /v1/responses/{id}
 * and GET /v1/responses/{id}/input_items.
 *
 * | Request        | {model, input (string or items), instructions?, tools?: [{type:"function",
 * |                | name, parameters}], previous_response_id?, store?, stream?,
 * |                | max_output_tokens?, metadata?, temperature?, top_p?, tool_choice?, text?,
 * |                | reasoning?, truncation?, user?, parallel_tool_calls?, mock?}
 * | Response       | {"id":"resp_<48 hex>","object":"response","created_at":T,"status":"completed",
 * |                | "background":false,"error":null,"incomplete_details":null,"instructions",
 * |                | "max_output_tokens","model","output":[ITEM],"parallel_tool_calls",
 * |                | "previous_response_id","reasoning":{"effort":null,"summary":null},
 * |                | "service_tier":"default","store","temperature","text":{"format":{"type":
 * |                | "text"}},"tool_choice","tools","top_p","truncation":"disabled","usage":{
 * |                | "input_tokens":N,"input_tokens_details":{"cached_tokens":0},"output_tokens":
 * |                | M,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":N+M},
 * |                | "user","metadata"}   (request values echoed, else these defaults)
 * | message ITEM   | {"id":"msg_<hex>","type":"message","status":"completed","content":[{"type":
 * |                | "output_text","annotations":[],"logprobs":[],"text":WORDS}],"role":"assistant"}
 * | function_call  | function tools declared and the last input item a user message (or a
 * | ITEM           | string input; tool_call=1 always, 0 never), not a function_call_output:
 * |                | {"id":"fc_<hex>","type":"function_call","status":"completed","arguments":
 * |                | "{…}","call_id":"call_<hex>","name":TOOL}
 * | max_output_    | capped words: "status":"incomplete","incomplete_details":{"reason":
 * | tokens         | "max_output_tokens"} (stream: response.incomplete instead of .completed)
 * | Stream         | text/event-stream, "event: TYPE\n" "data: {"type":TYPE,"sequence_number":
 * |                | 0,1,2…,…}\n\n" one per HTTP chunk:
 * |                |  response.created {response: status in_progress, output [], usage null}
 * |                |  response.in_progress {response}
 * |                |  response.output_item.added {output_index 0, item: in_progress, content []}
 * |                |  response.content_part.added {item_id, output_index, content_index 0,
 * |                |    part {type output_text, annotations [], logprobs [], text ""}}
 * |                |  response.output_text.delta {item_id, output_index, content_index, delta
 * |                |    WORD, logprobs []} per word
 * |                |  response.output_text.done {…, text}, response.content_part.done {…, part}
 * |                |  response.output_item.done {output_index, item}
 * |                |  response.completed {response}
 * |                | function call: response.created, .in_progress, .output_item.added (item
 * |                | with "arguments":""), response.function_call_arguments.delta {item_id,
 * |                | output_index, delta: 8-byte piece}…, .function_call_arguments.done {item_id,
 * |                | output_index, name, arguments}, .output_item.done, .completed
 * | Segments       | 0: head + created + in_progress + output_item.added (+ content_part.added);
 * |                | one per delta (content chunks for reset_after_chunks); one per later event
 * | Mid-stream     | stream_error=CODE after stream_error_after deltas: "event: error" data
 * |                | {"type":"error","sequence_number":N,"code":CODE,"message":…,"param":null},
 * |                | then the end of the body
 * | Remembered     | the last RING responses (and RING_BYTES in all) unless "store":false:
 * |                | GET → the response object; DELETE → {"id","object":"response","deleted":
 * |                | true}; input_items → {"object":"list","data":[items],"first_id","last_id",
 * |                | "has_more"} (items get "id":"msg_<hex>" when they have none, a string input
 * |                | becomes a user message with input_text; order desc unless ?order=asc;
 * |                | ?limit= (default 20, max 100), ?after=ID). Unknown: 404 "Response with id
 * |                | 'X' not found."
 * | previous_      | unknown id: 400 {"error":{"message":"Previous response with id 'X' not
 * | response_id    | found.","type":"invalid_request_error","param":"previous_response_id",
 * |                | "code":"previous_response_not_found"}}
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mock.h"

#define RING       1000
#define RING_BYTES (64u << 20)
#define PIECE      8

/* ---- ids ---- */

static atomic_uint_fast64_t id_counter;
static uint64_t id_salt;
static pthread_once_t salt_once = PTHREAD_ONCE_INIT;

static void salt_init(void)
{
    id_salt = (uint64_t)time(NULL) << 24 ^ (uint64_t)getpid();
}

static uint64_t splitmix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void mock_hex_id(struct mock_thread *th, struct sy_buf *b, const char *prefix, int n)
{
    static const char hx[] = "0123456789abcdef";
    char tmp[128];
    pthread_once(&salt_once, salt_init);
    /* splitmix is a bijection: distinct counters give distinct first 16 digits */
    uint64_t u = splitmix(atomic_fetch_add(&id_counter, 1) + id_salt);
    if (n > (int)sizeof tmp)
        n = (int)sizeof tmp;
    for (int i = 0; i < n; i++) {
        if (i < 16) {
            tmp[i] = hx[u >> 60];
            u <<= 4;
        } else {
            th->rng ^= th->rng << 13;
            th->rng ^= th->rng >> 7;
            th->rng ^= th->rng << 17;
            tmp[i] = hx[th->rng & 15];
        }
    }
    sy_buf_puts(b, prefix);
    sy_buf_append(b, tmp, (size_t)n);
}

void mock_error_param(struct mock_resp *r, int status, const char *message, const char *param, const char *code)
{
    struct sy_buf *s = &r->c->th->scratch;
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"error\":{\"message\":\"");
    sy_buf_json_escape(s, message, strlen(message));
    SY_BUF_LIT(s, "\",\"type\":\"invalid_request_error\",\"param\":");
    if (param)
        sy_buf_printf(s, "\"%s\"", param);
    else
        SY_BUF_LIT(s, "null");
    SY_BUF_LIT(s, ",\"code\":");
    if (code)
        sy_buf_printf(s, "\"%s\"}}", code);
    else
        SY_BUF_LIT(s, "null}}");
    mock_body_json(r, status, s, NULL);
}

/* ---- the remembered responses ---- */

struct item_ref {
    uint32_t off, len, id_off, id_len; /* into stored.items */
};

struct stored {
    char *id;  /* NULL = free slot */
    char *obj; /* the response object */
    size_t obj_n;
    char *items; /* the input items, each a JSON object with an id */
    struct item_ref *refs;
    int n_items;
    size_t bytes;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct stored ring[RING];
static unsigned ring_head, ring_count;
static size_t ring_bytes;

static void drop(struct stored *e)
{
    ring_bytes -= e->bytes;
    free(e->id);
    free(e->obj);
    free(e->items);
    free(e->refs);
    memset(e, 0, sizeof *e);
}

void mock_responses_reset(void)
{
    pthread_mutex_lock(&mu);
    for (unsigned i = 0; i < RING; i++)
        if (ring[i].id)
            drop(&ring[i]);
    ring_head = ring_count = 0;
    ring_bytes = 0;
    pthread_mutex_unlock(&mu);
}

/* Call with mu held. */
static struct stored *lookup(struct sy_str id)
{
    for (unsigned i = ring_count; i-- > 0;) {
        struct stored *e = &ring[(ring_head + i) % RING];
        if (e->id && strlen(e->id) == id.n && memcmp(e->id, id.p, id.n) == 0)
            return e;
    }
    return NULL;
}

static int known(struct sy_str id)
{
    pthread_mutex_lock(&mu);
    int k = lookup(id) != NULL;
    pthread_mutex_unlock(&mu);
    return k;
}

/* Takes ownership of the malloc'd e's buffers. */
static void remember(struct stored *e)
{
    e->bytes = e->obj_n + (e->refs ? e->refs[e->n_items].off : 0) + sizeof *e->refs * (size_t)(e->n_items + 1) + 64;
    if (e->bytes > RING_BYTES / 4) { /* not worth evicting everything for */
        free(e->id);
        free(e->obj);
        free(e->items);
        free(e->refs);
        return;
    }
    pthread_mutex_lock(&mu);
    while (ring_count && (ring_count == RING || ring_bytes + e->bytes > RING_BYTES)) {
        struct stored *old = &ring[ring_head];
        if (old->id)
            drop(old);
        ring_head = (ring_head + 1) % RING;
        ring_count--;
    }
    ring[(ring_head + ring_count) % RING] = *e;
    ring_count++;
    ring_bytes += e->bytes;
    pthread_mutex_unlock(&mu);
}

/* ---- rendering ---- */

enum {
    F_INSTR,
    F_MAXOUT,
    F_PTC,
    F_PREV,
    F_REASON,
    F_STORE,
    F_TEMP,
    F_TEXT,
    F_TCHOICE,
    F_TOOLS,
    F_TOPP,
    F_TRUNC,
    F_USER,
    F_META,
    F_INPUT,
    NF
};
static const char *const fields[NF] = {
    "instructions",
    "max_output_tokens",
    "parallel_tool_calls",
    "previous_response_id",
    "reasoning",
    "store",
    "temperature",
    "text",
    "tool_choice",
    "tools",
    "top_p",
    "truncation",
    "user",
    "metadata",
    "input",
};

struct rx {
    const struct mock_req *q;
    struct mock_jv f[NF];
    struct sy_buf id, item_id, call_id;
    uint64_t created;
    long seq; /* next sequence_number */
    long in_tokens;
};

/* "name":value-as-sent, or dflt (raw JSON) */
static void echo(struct sy_buf *s, const char *name, const struct mock_jv *v, const char *dflt)
{
    sy_buf_printf(s, ",\"%s\":", name);
    if (v->type == 's') {
        SY_BUF_LIT(s, "\"");
        sy_buf_append(s, v->v.p, v->v.n);
        SY_BUF_LIT(s, "\"");
    } else if (v->type) {
        sy_buf_append(s, v->v.p, v->v.n);
    } else {
        sy_buf_puts(s, dflt);
    }
}

/* The response object. output: the items' JSON (NULL = []); out < 0: usage null. */
static void resp_obj(struct sy_buf *s, const struct rx *x, const char *status, const struct sy_buf *output, long out,
                     int incomplete)
{
    SY_BUF_LIT(s, "{\"id\":\"");
    sy_buf_append(s, x->id.p, x->id.len);
    SY_BUF_LIT(s, "\",\"object\":\"response\",\"created_at\":");
    sy_buf_u64(s, x->created);
    sy_buf_printf(s,
                  ",\"status\":\"%s\",\"background\":false,\"error\":null,"
                  "\"incomplete_details\":%s",
                  status, incomplete ? "{\"reason\":\"max_output_tokens\"}" : "null");
    echo(s, "instructions", &x->f[F_INSTR], "null");
    echo(s, "max_output_tokens", &x->f[F_MAXOUT], "null");
    SY_BUF_LIT(s, ",\"model\":\"");
    sy_buf_append(s, x->q->model.p ? x->q->model.p : "", x->q->model.n);
    SY_BUF_LIT(s, "\",\"output\":[");
    if (output)
        sy_buf_append(s, output->p, output->len);
    SY_BUF_LIT(s, "]");
    echo(s, "parallel_tool_calls", &x->f[F_PTC], "true");
    echo(s, "previous_response_id", &x->f[F_PREV], "null");
    echo(s, "reasoning", &x->f[F_REASON], "{\"effort\":null,\"summary\":null}");
    SY_BUF_LIT(s, ",\"service_tier\":\"default\"");
    echo(s, "store", &x->f[F_STORE], "true");
    echo(s, "temperature", &x->f[F_TEMP], "1.0");
    echo(s, "text", &x->f[F_TEXT], "{\"format\":{\"type\":\"text\"}}");
    echo(s, "tool_choice", &x->f[F_TCHOICE], "\"auto\"");
    echo(s, "tools", &x->f[F_TOOLS], "[]");
    echo(s, "top_p", &x->f[F_TOPP], "1.0");
    echo(s, "truncation", &x->f[F_TRUNC], "\"disabled\"");
    if (out < 0)
        SY_BUF_LIT(s, ",\"usage\":null");
    else
        sy_buf_printf(s,
                      ",\"usage\":{\"input_tokens\":%ld,\"input_tokens_details\":"
                      "{\"cached_tokens\":0},\"output_tokens\":%ld,\"output_tokens_details\":"
                      "{\"reasoning_tokens\":0},\"total_tokens\":%ld}",
                      x->in_tokens, out, x->in_tokens + out);
    echo(s, "user", &x->f[F_USER], "null");
    echo(s, "metadata", &x->f[F_META], "{}");
    SY_BUF_LIT(s, "}");
}

static void msg_item(struct sy_buf *s, const struct rx *x, const char *status, const char *text, size_t n,
                     int with_content)
{
    SY_BUF_LIT(s, "{\"id\":\"");
    sy_buf_append(s, x->item_id.p, x->item_id.len);
    sy_buf_printf(s, "\",\"type\":\"message\",\"status\":\"%s\",\"content\":[", status);
    if (with_content) {
        SY_BUF_LIT(s, "{\"type\":\"output_text\",\"annotations\":[],\"logprobs\":[],\"text\":\"");
        sy_buf_append(s, text, n);
        SY_BUF_LIT(s, "\"}");
    }
    SY_BUF_LIT(s, "],\"role\":\"assistant\"}");
}

/* args: raw JSON text (escaped here). */
static void call_item(struct sy_buf *s, const struct rx *x, const char *status, const struct sy_buf *args)
{
    SY_BUF_LIT(s, "{\"id\":\"");
    sy_buf_append(s, x->item_id.p, x->item_id.len);
    sy_buf_printf(s, "\",\"type\":\"function_call\",\"status\":\"%s\",\"arguments\":\"", status);
    if (args)
        sy_buf_json_escape(s, args->p, args->len);
    SY_BUF_LIT(s, "\",\"call_id\":\"");
    sy_buf_append(s, x->call_id.p, x->call_id.len);
    SY_BUF_LIT(s, "\",\"name\":\"");
    sy_buf_append(s, x->q->tool.p, x->q->tool.n);
    SY_BUF_LIT(s, "\"}");
}

/* Start an event's data: {"type":T,"sequence_number":N */
static void ev(struct sy_buf *s, struct rx *x, const char *type)
{
    sy_buf_reset(s);
    sy_buf_printf(s, "{\"type\":\"%s\",\"sequence_number\":%ld", type, x->seq++);
}

static void send_ev(struct mock_resp *r, const char *type, struct sy_buf *s, int mark)
{
    SY_BUF_LIT(s, "}");
    mock_sse(r, type, s, 0, mark);
}

static void ids_into(struct sy_buf *s, const struct rx *x)
{
    SY_BUF_LIT(s, ",\"item_id\":\"");
    sy_buf_append(s, x->item_id.p, x->item_id.len);
    SY_BUF_LIT(s, "\",\"output_index\":0");
}

/* The input items with ids (for input_items), from the scanned "input". */
static void collect_items(struct mock_thread *th, const struct rx *x, struct stored *e)
{
    const struct mock_req *q = x->q;
    struct sy_buf b;
    sy_buf_init(&b, RING_BYTES);
    e->refs = calloc((size_t)(q->n_items > 0 ? q->n_items : 1) + 1, sizeof *e->refs);
    if (!e->refs)
        return;
    for (int i = 0; i < q->n_items; i++) {
        struct sy_str it = q->items[i];
        struct item_ref *ref = &e->refs[i];
        ref->off = (uint32_t)b.len;
        if (x->f[F_INPUT].type == 's') { /* a string input: one user message */
            SY_BUF_LIT(&b, "{\"id\":\"");
            ref->id_off = (uint32_t)b.len;
            mock_hex_id(th, &b, "msg_", 48);
            ref->id_len = (uint32_t)(b.len - ref->id_off);
            SY_BUF_LIT(&b, "\",\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":"
                           "\"input_text\",\"text\":\"");
            sy_buf_append(&b, it.p, it.n);
            SY_BUF_LIT(&b, "\"}]}");
        } else if (it.n >= 2 && it.p[0] == '{') {
            static const char *const k[] = {"id", "type", "role"};
            struct mock_jv v[3];
            mock_json_get(it.p, it.n, k, 3, v);
            if (v[0].type == 's') {
                sy_buf_append(&b, it.p, it.n);
                ref->id_off = (uint32_t)(v[0].v.p - it.p) + ref->off;
                ref->id_len = (uint32_t)v[0].v.n;
            } else {
                SY_BUF_LIT(&b, "{\"id\":\"");
                ref->id_off = (uint32_t)b.len;
                mock_hex_id(th, &b, "msg_", 48);
                ref->id_len = (uint32_t)(b.len - ref->id_off);
                SY_BUF_LIT(&b, "\"");
                if (!v[1].type && v[2].type)
                    SY_BUF_LIT(&b, ",\"type\":\"message\"");
                size_t j = 1;
                while (j < it.n && (it.p[j] == ' ' || it.p[j] == '\n' || it.p[j] == '\t' || it.p[j] == '\r'))
                    j++;
                if (it.p[j] != '}')
                    SY_BUF_LIT(&b, ",");
                sy_buf_append(&b, it.p + j, it.n - j);
            }
        } else {
            continue; /* not an item */
        }
        ref->len = (uint32_t)b.len - ref->off;
        e->n_items++;
    }
    e->refs[e->n_items].off = (uint32_t)b.len;
    e->items = b.p ? b.p : calloc(1, 1);
}

static void store(struct rx *x, const struct sy_buf *obj, struct mock_thread *th)
{
    if (x->f[F_STORE].type == 'p' && x->f[F_STORE].v.n == 5) /* false */
        return;
    struct stored e = {0};
    e.id = malloc(x->id.len + 1);
    e.obj = malloc(obj->len + 1);
    if (!e.id || !e.obj) {
        free(e.id);
        free(e.obj);
        return;
    }
    memcpy(e.id, x->id.p, x->id.len + 1);
    memcpy(e.obj, obj->p, obj->len);
    e.obj_n = obj->len;
    collect_items(th, x, &e);
    remember(&e);
}

static void whole(struct mock_resp *r, struct rx *x, struct mock_text *t, int tool)
{
    const struct mock_fault *f = &x->q->fault;
    struct sy_buf item, args, *s = &r->c->th->scratch;
    sy_buf_init(&item, MOCK_MAX_OUT);
    sy_buf_init(&args, 1 << 20);
    long out;
    if (tool) {
        mock_tool_args(&args, x->q);
        call_item(&item, x, "completed", &args);
        out = (long)(args.len + 3) / 4;
    } else {
        struct sy_buf text;
        sy_buf_init(&text, MOCK_MAX_OUT);
        out = mock_text_all(&text, t, f);
        msg_item(&item, x, "completed", text.p, text.len, 1);
        sy_buf_free(&text);
    }
    int inc = !tool && t->truncated;
    sy_buf_reset(s);
    resp_obj(s, x, inc ? "incomplete" : "completed", &item, out, inc);
    store(x, s, r->c->th);
    mock_body_json(r, 200, s, NULL);
    sy_buf_free(&item);
    sy_buf_free(&args);
}

/* Returns 1 (a stream). */
static int stream(struct mock_resp *r, struct rx *x, struct mock_text *t, int tool)
{
    const struct mock_fault *f = &x->q->fault;
    struct sy_buf *s = &r->c->th->scratch, obj, item, acc;
    long err_after = mock_stream_error_after(f), i = 0, out;
    int inc = !tool && t->truncated;
    sy_buf_init(&obj, MOCK_MAX_OUT);
    sy_buf_init(&item, MOCK_MAX_OUT);
    sy_buf_init(&acc, MOCK_MAX_OUT); /* the text so far, or the arguments */
    mock_head(r, 200, "text/event-stream; charset=utf-8", -1, NULL);

    resp_obj(&obj, x, "in_progress", NULL, -1, 0);
    ev(s, x, "response.created");
    SY_BUF_LIT(s, ",\"response\":");
    sy_buf_append(s, obj.p, obj.len);
    send_ev(r, "response.created", s, 0);
    ev(s, x, "response.in_progress");
    SY_BUF_LIT(s, ",\"response\":");
    sy_buf_append(s, obj.p, obj.len);
    send_ev(r, "response.in_progress", s, 0);

    ev(s, x, "response.output_item.added");
    SY_BUF_LIT(s, ",\"output_index\":0,\"item\":");
    if (tool)
        call_item(s, x, "in_progress", NULL);
    else
        msg_item(s, x, "in_progress", NULL, 0, 0);
    send_ev(r, "response.output_item.added", s, 0);
    if (!tool) {
        ev(s, x, "response.content_part.added");
        ids_into(s, x);
        SY_BUF_LIT(s, ",\"content_index\":0,\"part\":{\"type\":\"output_text\",\"annotations\":[],"
                      "\"logprobs\":[],\"text\":\"\"}");
        send_ev(r, "response.content_part.added", s, 0);
    }
    mock_mark(r);

    if (tool) {
        mock_tool_args(&acc, x->q);
        for (size_t off = 0, pn; off < acc.len; off += pn, i++) {
            if (i == err_after)
                break;
            pn = mock_piece(acc.p, acc.len, off, PIECE);
            ev(s, x, "response.function_call_arguments.delta");
            ids_into(s, x);
            SY_BUF_LIT(s, ",\"delta\":\"");
            sy_buf_json_escape(s, acc.p + off, pn);
            SY_BUF_LIT(s, "\"");
            send_ev(r, "response.function_call_arguments.delta", s, 1);
        }
        out = (long)(acc.len + 3) / 4;
    } else {
        size_t payload = 0;
        for (; mock_text_more(t, f, i, payload); i++) {
            if (i == err_after)
                break;
            size_t w = acc.len;
            mock_text_word(&acc, t, i);
            ev(s, x, "response.output_text.delta");
            ids_into(s, x);
            SY_BUF_LIT(s, ",\"content_index\":0,\"delta\":\"");
            sy_buf_append(s, acc.p + w, acc.len - w);
            SY_BUF_LIT(s, "\",\"logprobs\":[]");
            payload += s->len;
            send_ev(r, "response.output_text.delta", s, 1);
        }
        out = i;
    }
    if (i == err_after) {
        ev(s, x, "error");
        SY_BUF_LIT(s, ",\"code\":\"");
        sy_buf_append(s, f->stream_error.p, f->stream_error.n);
        SY_BUF_LIT(s, "\",\"message\":\"");
        if (f->error_message.p)
            sy_buf_append(s, f->error_message.p, f->error_message.n);
        else
            SY_BUF_LIT(s, "The server had an error while processing your request. Sorry about that!");
        SY_BUF_LIT(s, "\",\"param\":null");
        send_ev(r, "error", s, 1);
        mock_chunked_end(r);
        goto out;
    }
    if (tool) {
        ev(s, x, "response.function_call_arguments.done");
        ids_into(s, x);
        SY_BUF_LIT(s, ",\"name\":\"");
        sy_buf_append(s, x->q->tool.p, x->q->tool.n);
        SY_BUF_LIT(s, "\",\"arguments\":\"");
        sy_buf_json_escape(s, acc.p, acc.len);
        SY_BUF_LIT(s, "\"");
        send_ev(r, "response.function_call_arguments.done", s, 1);
        call_item(&item, x, "completed", &acc);
    } else {
        ev(s, x, "response.output_text.done");
        ids_into(s, x);
        SY_BUF_LIT(s, ",\"content_index\":0,\"text\":\"");
        sy_buf_append(s, acc.p, acc.len);
        SY_BUF_LIT(s, "\",\"logprobs\":[]");
        send_ev(r, "response.output_text.done", s, 1);
        ev(s, x, "response.content_part.done");
        ids_into(s, x);
        SY_BUF_LIT(s, ",\"content_index\":0,\"part\":{\"type\":\"output_text\",\"annotations\":[],"
                      "\"logprobs\":[],\"text\":\"");
        sy_buf_append(s, acc.p, acc.len);
        SY_BUF_LIT(s, "\"}");
        send_ev(r, "response.content_part.done", s, 1);
        msg_item(&item, x, "completed", acc.p, acc.len, 1);
    }
    ev(s, x, "response.output_item.done");
    SY_BUF_LIT(s, ",\"output_index\":0,\"item\":");
    sy_buf_append(s, item.p, item.len);
    send_ev(r, "response.output_item.done", s, 1);

    const char *fin = inc ? "response.incomplete" : "response.completed";
    sy_buf_reset(&obj);
    resp_obj(&obj, x, inc ? "incomplete" : "completed", &item, out, inc);
    store(x, &obj, r->c->th);
    ev(s, x, fin);
    SY_BUF_LIT(s, ",\"response\":");
    sy_buf_append(s, obj.p, obj.len);
    send_ev(r, fin, s, 1);
    mock_chunked_end(r);
out:
    sy_buf_free(&obj);
    sy_buf_free(&item);
    sy_buf_free(&acc);
    return 1;
}

static void create(struct mock_resp *r, const struct mock_call *k, struct mock_req *q)
{
    struct mock_http_req *h = &r->c->req;
    const struct mock_fault *f = &q->fault;
    struct rx x = {.q = q, .created = (uint64_t)time(NULL)};
    (void)k;
    mock_json_get(h->body.p ? h->body.p : "", h->body.len, fields, NF, x.f);
    if (mock_api_begin(r, f))
        return;
    if (!q->model.n) {
        mock_error_param(r, 400, "Missing required parameter: 'model'.", "model", "missing_required_parameter");
        mock_commit(r, f, 0);
        return;
    }
    if (x.f[F_PREV].type == 's' && !known(x.f[F_PREV].v)) {
        struct sy_buf m;
        sy_buf_init(&m, 1024);
        sy_buf_printf(&m, "Previous response with id '%.*s' not found.",
                      (int)(x.f[F_PREV].v.n > 200 ? 200 : x.f[F_PREV].v.n), x.f[F_PREV].v.p);
        mock_error_param(r, 400, m.p, "previous_response_id", "previous_response_not_found");
        sy_buf_free(&m);
        mock_commit(r, f, 0);
        return;
    }
    struct mock_text t;
    if (mock_text_init(&t, q) < 0)
        return;
    int tool = mock_wants_tool(q);
    sy_buf_init(&x.id, 128);
    sy_buf_init(&x.item_id, 128);
    sy_buf_init(&x.call_id, 128);
    mock_hex_id(r->c->th, &x.id, "resp_", 48);
    mock_hex_id(r->c->th, &x.item_id, tool ? "fc_" : "msg_", 48);
    mock_hex_id(r->c->th, &x.call_id, "call_", 24);
    x.in_tokens = mock_prompt_tokens(q);
    int st = 0;
    if (q->stream)
        st = stream(r, &x, &t, tool);
    else
        whole(r, &x, &t, tool);
    mock_commit(r, f, st);
    mock_text_free(&t);
    sy_buf_free(&x.id);
    sy_buf_free(&x.item_id);
    sy_buf_free(&x.call_id);
}

static void not_found(struct mock_resp *r, struct sy_str id)
{
    struct sy_buf m;
    sy_buf_init(&m, 1024);
    sy_buf_printf(&m, "Response with id '%.*s' not found.", (int)(id.n > 200 ? 200 : id.n), id.p);
    mock_error_param(r, 404, m.p, NULL, NULL);
    sy_buf_free(&m);
}

static void input_items(struct mock_resp *r, struct stored *e, struct sy_str query)
{
    struct sy_buf *s = &r->c->th->scratch;
    struct sy_str order = mock_query_param(query, "order"), after = mock_query_param(query, "after");
    struct sy_str lim = mock_query_param(query, "limit");
    int asc = SY_STR_EQ(order, "asc"), limit = 20, n = e->n_items, first = -1, last = -1, cnt = 0;
    if (lim.p && lim.n && lim.n < 6)
        limit = (int)mock_digits(lim);
    if (limit < 1 || limit > 100)
        limit = limit < 1 ? 1 : 100;
    int started = after.p == NULL;
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"object\":\"list\",\"data\":[");
    for (int j = 0; j < n; j++) {
        const struct item_ref *ref = &e->refs[asc ? j : n - 1 - j];
        if (!started) {
            started = ref->id_len == after.n && memcmp(e->items + ref->id_off, after.p, after.n) == 0;
            continue;
        }
        if (cnt == limit) {
            cnt = -cnt - 1; /* has_more */
            break;
        }
        if (cnt++)
            SY_BUF_LIT(s, ",");
        sy_buf_append(s, e->items + ref->off, ref->len);
        if (first < 0)
            first = (int)(ref - e->refs);
        last = (int)(ref - e->refs);
    }
    SY_BUF_LIT(s, "],\"first_id\":");
    for (int w = 0; w < 2; w++) {
        int i = w ? last : first;
        if (i < 0) {
            SY_BUF_LIT(s, "null");
        } else {
            SY_BUF_LIT(s, "\"");
            sy_buf_append(s, e->items + e->refs[i].id_off, e->refs[i].id_len);
            SY_BUF_LIT(s, "\"");
        }
        if (!w)
            SY_BUF_LIT(s, ",\"last_id\":");
    }
    sy_buf_printf(s, ",\"has_more\":%s}", cnt < 0 ? "true" : "false");
}

void mock_responses(struct mock_resp *r, const struct mock_call *k, struct mock_req *q)
{
    if (k->api == MOCK_A_RESP_CREATE) {
        create(r, k, q);
        return;
    }
    if (mock_api_begin(r, &q->fault))
        return;
    struct sy_buf *s = &r->c->th->scratch;
    sy_buf_reset(s);
    pthread_mutex_lock(&mu);
    struct stored *e = lookup(k->id);
    if (e && k->api == MOCK_A_RESP_GET)
        sy_buf_append(s, e->obj, e->obj_n);
    else if (e && k->api == MOCK_A_RESP_ITEMS)
        input_items(r, e, k->query);
    else if (e) /* delete */
        drop(e);
    pthread_mutex_unlock(&mu);
    if (!e) {
        not_found(r, k->id);
    } else {
        if (k->api == MOCK_A_RESP_DELETE) {
            SY_BUF_LIT(s, "{\"id\":\"");
            sy_buf_append(s, k->id.p, k->id.n);
            SY_BUF_LIT(s, "\",\"object\":\"response\",\"deleted\":true}");
        }
        mock_body_json(r, 200, s, NULL);
    }
    mock_commit(r, &q->fault, 0);
}
