/* ustream.c - the usage filter (an engine filter: the upstream stage reads
 * its state): what a stream's usage is read or counted from,
 * and include_cost_in_streaming_usage (gateway/ustream.h is the upstream
 * stage's side).
 *
 * It links on every stream the upstream stage starts (gateway/proxy.c sets
 * c->out.client_started before the chain starts; a JSON answer is read whole from
 * c->up.up_body there, and the built-in mock reports its own usage) and sees each
 * piece after it was written:
 *
 *   raw answers (images, audio)   the last bytes only (usage when the API
 *                                 reports one)
 *   translated Anthropic /        the text (for a client that leaves)
 *     Responses events
 *   anything else                 the last bytes and the text
 *
 * Its state is its slot; struct sy_call keeps only c->out.fl_hold, the flag the
 * pass-through write tests to send bytes through the usage.cost hold.
 *
 * The upstream's own `usage` is read from the end of the response: the body,
 * or for a stream its last STREAM_TAIL bytes (streams put it in the final
 * chunk). When there is none, usage is counted as LiteLLM does:
 * token_counter on the request and on the returned text (content, tool-call
 * arguments, completion text). Counting large inputs runs on the thread pool
 * (gateway/offload.h); the response resumes when it is done.
 *
 * Streams keep constant memory: the tail, a partial data line (<= 1 MiB),
 * and the decoded text not yet counted. That text is counted and dropped in
 * prefixes whenever it passes STREAM_FLUSH bytes, cut only where tiktoken's
 * pre-tokenizer (cl100k and o200k) always starts a new piece, so the sum of
 * the parts equals the count of the whole:
 *   "\n" or "\r" | ASCII letter     (no piece crosses a line end into a letter)
 *   ASCII letter | " " ASCII letter  (" word" is a piece; letters end before it)
 * Text with no such point (e.g. unbroken CJK) is kept up to STREAM_TEXT_MAX
 * and then counted where it is cut (approximate at that seam only).
 */
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "core/arena.h"
#include "core/fmt.h"
#include "gateway/ustream.h"
#include "gateway/filter.h"
#include "gateway/jscan.h"
#include "gateway/slot.h"
#include "gateway/usage.h"
#include "gateway/xlate.h"
#include "http/reply.h"
#include "http/server.h"
#include "router/table.h"
#include "spend/spend.h"
#include "tokenizer/tokenizer.h"

static int usage_slot = -1;

struct ustate {
    struct sy_buf text;   /* decoded text not yet counted */
    struct sy_buf tail;   /* the stream's last bytes: its final usage is read from them */
    struct sy_buf line;   /* a data line split across reads */
    struct sy_buf raw;    /* stream bytes whose text is not decoded yet (< STREAM_RAW) */
    uint64_t ct;          /* completion tokens counted from flushed text */
    int line_over;        /* the line passed STREAM_LINE_MAX: its text is not counted */
    struct sy_buf *hold;  /* include_cost_in_streaming_usage, the model echo: a partial SSE line held back */
    struct sy_buf *out;   /* ... and the rewritten lines, reused from piece to piece */
    struct echo_memo *em; /* the model echo's last chunk prefix (arena); NULL: none */
};

/* Append the decoded value of every `"key":"..."` string in ev to out. */
static void collect_strings(const char *ev, size_t n, const char *key, size_t kl, struct sy_buf *out)
{
    const char *end = ev + n, *k = ev;
    while ((k = memmem(k, (size_t)(end - k), key, kl)) != NULL) {
        const char *q = k + kl;
        while (q < end && (*q == ' ' || *q == ':'))
            q++;
        k = q;
        if (q >= end || *q != '"')
            continue;
        const char *e = q + 1;
        while (e < end && *e != '"')
            e += *e == '\\' ? 2 : 1;
        if (e >= end)
            return;
        size_t sl = (size_t)(e + 1 - q);
        if (sy_buf_reserve(out, sl + 8) == 0) {
            long d = sy_jstr_decode(q, sl, out->p + out->len, sl + 8);
            if (d > 0)
                out->len += (size_t)d;
        }
        k = e + 1;
    }
}

#define STREAM_TAIL     4096u /* a final usage event is under 1 KB; 4 KB per stream, 8 KB at most */
#define STREAM_LINE_MAX (1u << 20)
#define STREAM_FLUSH    (32u * 1024u)
#define STREAM_TEXT_MAX (1u << 20)
#define STREAM_RAW      (64u * 1024u)

void sy_ustream_collect(const struct sy_call *c, const char *p, size_t n, struct sy_buf *text)
{
    if (c->kind == SY_RK_EMBEDDINGS)
        return;
    if (c->kind == SY_RK_MESSAGES && c->out.client_started) { /* Anthropic events: text_delta, input_json_delta */
        collect_strings(p, n, "\"text\"", 6, text);
        collect_strings(p, n, "\"partial_json\"", 14, text);
        return;
    }
    if (c->kind == SY_RK_RESPONSES && c->out.client_started) { /* Responses events: output_text / arguments deltas */
        collect_strings(p, n, "\"delta\"", 7, text);
        return;
    }
    collect_strings(p, n, "\"content\"", 9, text);
    collect_strings(p, n, "\"arguments\"", 11, text);
    if (c->kind == SY_RK_COMPLETIONS)
        collect_strings(p, n, "\"text\"", 6, text);
}

static int is_alpha(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

/* Last exact cut point in t[0..n) (see above), 0 when none. */
static size_t text_cut(const char *t, size_t n)
{
    for (size_t i = n - 1; i > 0; i--) {
        if (!is_alpha(t[i]))
            continue;
        if (t[i - 1] == '\n' || t[i - 1] == '\r')
            return i;
        if (t[i - 1] == ' ' && i >= 2 && is_alpha(t[i - 2]))
            return i - 1;
    }
    return 0;
}

static void text_flush(struct sy_call *c, struct ustate *u)
{
    struct sy_buf *t = &u->text;
    size_t cut = text_cut(t->p, t->len);
    if (!cut) {
        if (t->len < STREAM_TEXT_MAX)
            return;
        cut = t->len;
    }
    const struct sy_tok *tk = sy_tok_get((enum sy_tok_encoding)c->drt->enc);
    u->ct += sy_tok_count(tk, t->p, cut);
    sy_buf_consume(t, cut);
}

static void data_line(struct sy_call *c, struct ustate *u, const char *l, size_t n)
{
    if (n < 6 || memcmp(l, "data:", 5) != 0)
        return;
    sy_ustream_collect(c, l, n, &u->text);
    if (u->text.len >= STREAM_FLUSH)
        text_flush(c, u);
}

/* The text of a stream's data lines, decoded for counting. */
static void decode_text(struct sy_call *c, struct ustate *u, const char *p, size_t n)
{
    while (n) {
        const char *nl = memchr(p, '\n', n);
        if (!nl) {
            if (sy_buf_append(&u->line, p, n) != 0)
                u->line_over = 1; /* a line over 1 MiB: its text is not counted */
            return;
        }
        size_t ln = (size_t)(nl - p);
        if (u->line.len || u->line_over) {
            if (!u->line_over && sy_buf_append(&u->line, p, ln) == 0)
                data_line(c, u, u->line.p, u->line.len);
            sy_buf_reset(&u->line);
            u->line_over = 0;
        } else {
            data_line(c, u, p, ln);
        }
        p = nl + 1;
        n -= ln + 1;
    }
}

/* The text is needed only when the upstream reports no usage (or the client
 * leaves), so a stream's bytes are kept as they came and decoded in batches
 * of STREAM_RAW, or when the count is asked for: a stream whose final chunk
 * carries usage never decodes a short answer. */
static void keep_text(struct sy_call *c, struct ustate *u, const char *p, size_t n)
{
    if (u->raw.len + n > STREAM_RAW) {
        decode_text(c, u, u->raw.p, u->raw.len);
        sy_buf_reset(&u->raw);
        if (n > STREAM_RAW) {
            decode_text(c, u, p, n);
            return;
        }
    }
    if (sy_buf_append(&u->raw, p, n) != 0)
        decode_text(c, u, p, n);
}

/* Decode what keep_text kept (before the text is counted). */
static void settle_text(struct sy_call *c, struct ustate *u)
{
    if (!u->raw.len)
        return;
    decode_text(c, u, u->raw.p, u->raw.len);
    sy_buf_reset(&u->raw);
}

/* The stream's last bytes. */
static void keep_tail(struct ustate *u, const char *p, size_t n)
{
    struct sy_buf *tl = &u->tail;
    if (n >= STREAM_TAIL) {
        sy_buf_reset(tl);
        sy_buf_append(tl, p + n - STREAM_TAIL, STREAM_TAIL);
    } else {
        if (tl->len + n > 2 * STREAM_TAIL)
            sy_buf_consume(tl, tl->len + n - STREAM_TAIL);
        sy_buf_append(tl, p, n);
    }
}

/* ---- include_cost_in_streaming_usage ------------------------------------------
 *
 * As LiteLLM with litellm_settings.include_cost_in_streaming_usage: the usage
 * chunk a client asked for (stream_options.include_usage) carries the call's
 * cost as usage.cost, priced from that usage with the deployment's prices (the
 * amount the call is billed). A pass-through stream is then written to the
 * client in whole lines: a line not yet complete is held back (the hold, at
 * most COST_HOLD_MAX bytes, past which it goes out as it is) so the usage
 * object is whole when it is rewritten; a translated stream's usage chunk is
 * rewritten where it is built. On /v1/messages (LiteLLM injects it there for
 * every provider) the message_delta event's usage gets the cost, whether or
 * not usage was asked for; it is priced on the call's prompt (the event's
 * input_tokens, else message_start's) where LiteLLM prices only the counts the
 * event carries. Off (the default), none of this runs.
 */
#define COST_HOLD_MAX (4u << 20)

static void hold_free(void *p)
{
    struct sy_buf *b = p;
    sy_buf_free(&b[0]);
    sy_buf_free(&b[1]);
}

/* The stream gets usage.cost: the setting is on and the client asked for usage
 * (an Anthropic client: always, in message_delta). */
static int cost_inject(const struct sy_call *c)
{
    return c->g->cfg->include_cost_in_streaming_usage && !c->pass.raw && c->drt &&
           (c->kind == SY_RK_MESSAGES ||
            ((c->kind == SY_RK_CHAT || c->kind == SY_RK_COMPLETIONS) && c->in.include_usage));
}

/* The cost for a message_delta event p[0..n): its counts, the prompt from
 * message_start (the call's) when it carries no input_tokens. */
static double msg_delta_cost(const struct sy_call *c, const char *p, size_t n)
{
    struct sy_usage u = {0};
    int64_t in = SY_USAGE_LAST_NUM(p, n, "\"input_tokens\""), out = SY_USAGE_LAST_NUM(p, n, "\"output_tokens\"");
    int64_t cr = SY_USAGE_LAST_NUM(p, n, "\"cache_read_input_tokens\""),
            cw = SY_USAGE_LAST_NUM(p, n, "\"cache_creation_input_tokens\"");
    int64_t h1 = SY_USAGE_LAST_NUM(p, n, "\"ephemeral_1h_input_tokens\"");
    if (in > 0) {
        u.cached_tokens = cr > 0 ? (uint64_t)cr : 0;
        u.cache_creation_tokens = cw > 0 ? (uint64_t)cw : 0;
        u.cache_creation_1h_tokens = h1 > 0 && h1 <= cw ? (uint64_t)h1 : 0;
        u.prompt_tokens = (uint64_t)in + u.cached_tokens + u.cache_creation_tokens;
    } else {
        u.prompt_tokens = c->usage.prompt_tokens;
        u.cached_tokens = c->usage.cached_tokens;
        u.cache_creation_tokens = c->usage.cache_write_tokens;
        u.cache_creation_1h_tokens = c->usage.cache_write_1h_tokens;
    }
    u.completion_tokens = out > 0 ? (uint64_t)out : 0;
    struct sy_dprice dp;
    sy_call_dprice(c, c->group, c->drt, &dp);
    return sy_cost(&dp, &u);
}

/* The model the client asked for, on an OpenAI-compatible chat or completions
 * pass-through: LiteLLM's proxy restamps each answer, JSON and every chunk
 * (common_request_processing.py _override_openai_response_model, proxy_server.py
 * _restamp_streaming_chunk_model): OpenAI answers "gpt-4o-2024-08-06" to
 * "gpt-4o", and a model_name alias ("bench-model") must not leak the
 * deployment's model. */
int sy_ustream_echoes(const struct sy_call *c)
{
    if (c->pass.raw || !c->drt || (c->kind != SY_RK_CHAT && c->kind != SY_RK_COMPLETIONS) || sy_xlate_active(c))
        return 0;
    return sy_xlate_echo_name(c) != NULL;
}

/* The echo's memory of the stream's previous chunk: OpenAI's chunks of one
 * stream start with the same bytes up to the model's value (id, object,
 * created, model), so a chunk that starts with `from` gets `to` in its place
 * (one comparison) and only the first chunk, or one that differs, is
 * searched. */
#define ECHO_PREFIX_MAX 512
struct echo_memo {
    size_t fl, tl;
    char from[ECHO_PREFIX_MAX], to[ECHO_PREFIX_MAX];
};

/* One "data: {...}" line p[0..n) with its chunk's "model" replaced, into out. */
static void echo_line(const struct sy_call *c, struct echo_memo *em, const char *p, size_t n, struct sy_buf *out)
{
    size_t d = 5;
    while (d < n && p[d] == ' ')
        d++;
    size_t e = n;
    while (e > d && (p[e - 1] == '\n' || p[e - 1] == '\r'))
        e--;
    const char *j = p + d;
    size_t jn = e - d, off, len;
    sy_buf_append(out, p, d);
    if (em && em->fl && jn >= em->fl && memcmp(j, em->from, em->fl) == 0) {
        sy_buf_append(out, em->to, em->tl);
        sy_buf_append(out, j + em->fl, n - d - em->fl);
        return;
    }
    size_t before = out->len;
    if (!sy_xlate_model_span(j, jn, &off, &len)) {
        sy_buf_append(out, j, jn);
    } else {
        const char *m = sy_xlate_echo_name(c);
        sy_buf_append(out, j, off);
        SY_BUF_LIT(out, "\"");
        sy_buf_json_escape(out, m, strlen(m));
        SY_BUF_LIT(out, "\"");
        size_t tl = out->len - before; /* the rewritten prefix */
        if (em && off + len <= ECHO_PREFIX_MAX && tl <= ECHO_PREFIX_MAX && !sy_buf_failed(out)) {
            memcpy(em->from, j, off + len); /* also when the name was already the one asked for */
            em->fl = off + len;
            memcpy(em->to, out->p + before, tl);
            em->tl = tl;
        }
        sy_buf_append(out, j + off + len, jn - off - len);
    }
    sy_buf_append(out, p + e, n - e);
}

/* Whole lines p[0..n) into out: each chunk's model replaced
 * (sy_ustream_echoes), and with include_cost_in_streaming_usage ,"cost":X
 * added to a non-null usage object that has none (on /v1/messages:
 * message_delta's). */
static void cost_rewrite(struct sy_call *c, const char *p, size_t n, struct sy_buf *out)
{
    int msg = c->kind == SY_RK_MESSAGES, echo = sy_ustream_echoes(c), cost_on = cost_inject(c);
    const struct ustate *us = sy_call_slot(c, usage_slot);
    struct echo_memo *em = us ? us->em : NULL;
    struct sy_buf el;
    sy_buf_init(&el, 0);
    while (n) {
        const char *nl = memchr(p, '\n', n);
        size_t ln = nl ? (size_t)(nl - p) + 1 : n;
        const char *lp = p;
        size_t ll = ln;
        if (echo && !cost_on) { /* the common case: no usage line to rewrite after it */
            if (ln > 5 && memcmp(p, "data:", 5) == 0)
                echo_line(c, em, p, ln, out);
            else
                sy_buf_append(out, p, ln);
            p += ln;
            n -= ln;
            continue;
        }
        if (echo && ln > 5 && memcmp(p, "data:", 5) == 0) {
            if (!el.cap)
                sy_buf_init(&el, COST_HOLD_MAX + 4096);
            sy_buf_reset(&el);
            echo_line(c, em, p, ln, &el);
            if (!sy_buf_failed(&el)) {
                lp = el.p;
                ll = el.len;
            }
        }
        p += ln;
        n -= ln;
        struct sy_usage u;
        long e = -1;
        double cost = 0;
        if (!cost_on) {
        } else if (msg) {
            if (ll > 20 && memmem(lp, ll, "\"message_delta\"", 15) && (e = sy_usage_close(lp, ll)) > 0)
                cost = msg_delta_cost(c, lp, ll);
        } else if (ll > 6 && memmem(lp, ll, "\"usage\"", 7) && sy_usage_read(lp, ll, &u)) {
            e = sy_usage_close(lp, ll);
            struct sy_dprice dp;
            sy_call_dprice(c, c->group, c->drt, &dp);
            cost = sy_cost(&dp, &u);
        }
        if (e > 0 && !memmem(lp, (size_t)e, "\"cost\"", 6)) {
            char t[64];
            memcpy(t, ",\"cost\":", 8);
            size_t k = 8 + sy_fmt_g12(t + 8, cost);
            sy_buf_append(out, lp, (size_t)e);
            sy_buf_append(out, t, k);
            sy_buf_append(out, lp + e, ll - (size_t)e);
        } else {
            sy_buf_append(out, lp, ll);
        }
    }
    sy_buf_free(&el);
}

/* The echo's common case, written from where the lines lie: every data line
 * starts with the memo's prefix (or is "data: [DONE]"), so the chunk is the
 * bytes between those prefixes with em->to in their place, one piece list for
 * sy_resp_chunkv (no joining copy). 0 when a line needs echo_line (the first
 * chunk, one that differs, a piece of many events): nothing was written. */
#define ECHO_PIECES 64
static int echo_fast(struct sy_call *c, const struct echo_memo *em, const char *p, size_t n, size_t *q)
{
    struct sy_str v[ECHO_PIECES];
    unsigned nv = 0;
    const char *from = p, *end = p + n;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t ln = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        if (ln > 5 && memcmp(p, "data:", 5) == 0) {
            size_t d = 5;
            while (d < ln && p[d] == ' ')
                d++;
            if (ln - d >= em->fl && memcmp(p + d, em->from, em->fl) == 0) {
                if (nv + 3 > ECHO_PIECES)
                    return 0;
                v[nv++] = (struct sy_str){from, (size_t)(p + d - from)};
                v[nv++] = (struct sy_str){em->to, em->tl};
                from = p + d + em->fl;
            } else {
                size_t e = ln;
                while (e > d && (p[e - 1] == '\n' || p[e - 1] == '\r'))
                    e--;
                if (e - d != 6 || memcmp(p + d, "[DONE]", 6) != 0)
                    return 0;
            }
        }
        p += ln;
    }
    v[nv++] = (struct sy_str){from, (size_t)(end - from)};
    *q = sy_resp_chunkv(c->req, v, nv);
    return 1;
}

size_t sy_ustream_write(struct sy_call *c, const char *p, size_t n)
{
    const struct ustate *u = sy_call_slot(c, usage_slot);
    struct sy_buf *h = u ? u->hold : NULL;
    if (!h)
        return sy_resp_chunk(c->req, p, n);
    const char *nl = memrchr(p, '\n', n);
    size_t whole = nl ? (size_t)(nl - p) + 1 : 0;
    const char *lines = p; /* the whole lines to rewrite: p's own when nothing was held (no copy) */
    size_t nlines = whole;
    if (h->len || !whole) {
        if (sy_buf_append(h, p, whole ? whole : n) != 0) { /* a line over COST_HOLD_MAX: out as it is */
            if (h->len)
                sy_resp_chunk(c->req, h->p, h->len);
            sy_buf_reset(h);
            return sy_resp_chunk(c->req, p, n);
        }
        if (!whole)
            return 0;
        lines = h->p;
        nlines = h->len;
    }
    size_t q;
    if (!u->em || !u->em->fl || cost_inject(c) || !echo_fast(c, u->em, lines, nlines, &q)) {
        /* the rewritten lines, in a buffer the stream keeps (no allocation per piece); a
         * cap: each usage line grows by under 64 bytes, each chunk by the model name */
        struct sy_buf *o = u->out;
        const char *m = sy_xlate_echo_name(c);
        size_t ml = m ? strlen(m) : 0;
        sy_buf_reset(o);
        o->cap = nlines * (4 + ml) + 4096;
        cost_rewrite(c, lines, nlines, o);
        q = sy_resp_chunk(c->req, o->p, o->len);
        if (o->size > (64u << 10)) /* a large piece's room is not kept for the rest of the stream */
            sy_buf_free(o);
    }
    sy_buf_reset(h);
    sy_buf_append(h, p + whole, n - whole);
    return q;
}

void sy_ustream_costed(struct sy_call *c, const char **o, size_t *on, struct sy_buf *b)
{
    sy_buf_init(b, 0);
    if (!*on || !(sy_xlate_chat_adapter(c) || c->kind == SY_RK_MESSAGES) || !cost_inject(c))
        return;
    sy_buf_init(b, 4 * *on + 4096);
    cost_rewrite(c, *o, *on, b);
    *o = b->p;
    *on = b->len;
}

/* ---- the filter ------------------------------------------------------------- */

static void ustate_free(void *p)
{
    struct ustate *u = p;
    sy_buf_free(&u->text);
    sy_buf_free(&u->tail);
    sy_buf_free(&u->line);
    sy_buf_free(&u->raw);
}

static int start(struct sy_call *c)
{
    if (!c->out.client_started)
        return 0; /* a JSON answer, the mock's, a cache hit */
    struct ustate *u = sy_call_slot_new(c, usage_slot, sizeof *u);
    if (!u)
        return 0;
    sy_buf_init(&u->text, STREAM_TEXT_MAX + (1u << 20));
    sy_buf_init(&u->tail, 2 * STREAM_TAIL);
    sy_buf_init(&u->line, STREAM_LINE_MAX);
    sy_buf_init(&u->raw, STREAM_RAW);
    sy_arena_defer(&c->req->arena, ustate_free, u);
    if ((cost_inject(c) || sy_ustream_echoes(c)) && !sy_xlate_decodes(c)) {
        u->hold = sy_arena_alloc(&c->req->arena, 2 * sizeof *u->hold);
        if (u->hold) {
            u->out = u->hold + 1;
            if (sy_ustream_echoes(c) && (u->em = sy_arena_alloc(&c->req->arena, sizeof *u->em)) != NULL)
                u->em->fl = 0;
            sy_buf_init(u->hold, COST_HOLD_MAX);
            sy_buf_init(u->out, 0);
            sy_arena_defer(&c->req->arena, hold_free, u->hold);
            c->out.fl_hold = 1;
        }
    }
    return 1;
}

static void data(struct sy_call *c, const char *p, size_t n)
{
    struct ustate *u = sy_call_slot(c, usage_slot);
    if (c->pass.raw) {
        keep_tail(u, p, n);
        return;
    }
    if (!sy_xlate_decodes(c) || sy_xlate_chat_adapter(c))
        keep_tail(u, p, n); /* the usage chunk: no usage yet, or a client that leaves */
    keep_text(c, u, p, n);
}

const struct sy_filter sy_filter_usage = {
    .name = "usage",
    .answers = SY_FILTER_STREAM,
    .routes = SY_FILTER_ROUTE(SY_RK_CHAT) | SY_FILTER_ROUTE(SY_RK_COMPLETIONS) | SY_FILTER_ROUTE(SY_RK_EMBEDDINGS) |
              SY_FILTER_ROUTE(SY_RK_RESPONSES) | SY_FILTER_ROUTE(SY_RK_PASSTHRU) | SY_FILTER_ROUTE(SY_RK_MESSAGES),
    .start = start,
    .data = data,
    .slot = &usage_slot,
};

/* ---- the upstream stage's side ----------------------------------------------- */

uint64_t sy_ustream_tokens(struct sy_call *c, const struct sy_tok *t)
{
    struct ustate *u = sy_call_slot(c, usage_slot);
    if (!u)
        return 0;
    settle_text(c, u);
    return u->ct + sy_tok_count(t, u->text.p ? u->text.p : "", u->text.len);
}

size_t sy_ustream_pending(const struct sy_call *c)
{
    const struct ustate *u = sy_call_slot(c, usage_slot);
    return u ? u->text.len + u->raw.len : 0;
}

const char *sy_ustream_tail(const struct sy_call *c, size_t *n)
{
    const struct ustate *u = sy_call_slot(c, usage_slot);
    *n = u ? u->tail.len : 0;
    return u ? u->tail.p : NULL;
}

int sy_ustream_drain(struct sy_call *c)
{
    const struct ustate *u = sy_call_slot(c, usage_slot);
    if (!u || !u->hold || !u->hold->len)
        return 0;
    sy_resp_chunk(c->req, u->hold->p, u->hold->len);
    sy_buf_reset(u->hold);
    return 1;
}
