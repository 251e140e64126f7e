/* reply.c - what every dialect of the mock shares: the reply text and its
 * words, the tool call it makes, embedding vectors, and the framing helpers
 * (HTTP chunks, SSE events, segment marks, split_utf8 pauses).
 *
 * The reply is deterministic: the default 18-word sentence (or a 19-word
 * variant with 2-, 3- and 4-byte UTF-8 characters for utf8 / split_utf8), or
 * the "content" directive split on spaces. Words never cut a UTF-8 sequence;
 * split_utf8 cuts one across two network writes instead (conn.c pauses at the
 * offsets recorded by mock_split_at).
 *
 * Nothing here allocates per request except the word list of a "content"
 * directive (one malloc, as the OpenAI path always did).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock.h"

static const struct sy_str default_words[] = {
    SY_STR("Hello!"), SY_STR("This"), SY_STR("is"),   SY_STR("a"),         SY_STR("deterministic"), SY_STR("reply"),
    SY_STR("from"),   SY_STR("the"),  SY_STR("mock"), SY_STR("upstream"),  SY_STR("server,"),       SY_STR("used"),
    SY_STR("to"),     SY_STR("test"), SY_STR("and"),  SY_STR("benchmark"), SY_STR("the"),           SY_STR("gateway."),
};

/* 2-byte (é ï ë), 3-byte (上游) and 4-byte (🚀) sequences. */
static const struct sy_str utf8_words[] = {
    SY_STR("H\xc3\xa9llo!"),
    SY_STR("Th\xc3\xafs"),
    SY_STR("is"),
    SY_STR("a"),
    SY_STR("d\xc3\xa9terministic"),
    SY_STR("reply"),
    SY_STR("from"),
    SY_STR("the"),
    SY_STR("mock"),
    SY_STR("\xe4\xb8\x8a\xe6\xb8\xb8"),
    SY_STR("server,"),
    SY_STR("used"),
    SY_STR("to"),
    SY_STR("t\xc3\xabst"),
    SY_STR("and"),
    SY_STR("benchmark"),
    SY_STR("the"),
    SY_STR("gateway"),
    SY_STR("\xf0\x9f\x9a\x80"),
};

int mock_text_init(struct mock_text *t, const struct mock_req *q)
{
    const struct mock_fault *f = &q->fault;
    memset(t, 0, sizeof *t);
    if (f->content.p) {                                       /* split the scripted content on spaces */
        t->own = malloc(sizeof *t->own * (f->content.n + 2)); /* n spaces make n + 1 words */
        if (!t->own)
            return -1;
        for (size_t i = 0; i <= f->content.n;) {
            size_t j = i;
            while (j < f->content.n && f->content.p[j] != ' ')
                j++;
            t->own[t->nw++] = (struct sy_str){f->content.p + i, j - i};
            i = j + 1;
        }
        t->words = t->own;
    } else if (f->utf8 > 0 || f->split_utf8 > 0) {
        t->words = utf8_words;
        t->nw = sizeof utf8_words / sizeof utf8_words[0];
    } else {
        t->words = default_words;
        t->nw = sizeof default_words / sizeof default_words[0];
    }
    t->n = f->chunks >= 0 ? f->chunks : (long)t->nw;
    if (q->max_tokens > 0 && q->max_tokens < t->n)
        t->n = q->max_tokens, t->truncated = 1;
    return 0;
}

void mock_text_free(struct mock_text *t)
{
    free(t->own);
    t->own = NULL;
}

void mock_text_word(struct sy_buf *s, const struct mock_text *t, long i)
{
    if (i > 0)
        SY_BUF_LIT(s, " ");
    const struct sy_str *w = &t->words[(size_t)i % t->nw];
    sy_buf_append(s, w->p, w->n);
}

long mock_text_all(struct sy_buf *s, const struct mock_text *t, const struct mock_fault *f)
{
    size_t start = s->len;
    long i;
    for (i = 0; i < t->n || (f->body_bytes > 0 && (long)(s->len - start) < f->body_bytes); i++)
        mock_text_word(s, t, i);
    return i;
}

int mock_text_more(const struct mock_text *t, const struct mock_fault *f, long i, size_t payload)
{
    return i < t->n || (f->body_bytes > 0 && (long)payload < f->body_bytes);
}

long mock_stream_error_after(const struct mock_fault *f)
{
    if (!f->stream_error.p)
        return -1;
    return f->stream_error_after >= 0 ? f->stream_error_after : 1;
}

long mock_prompt_tokens(const struct mock_req *q)
{
    long p = (long)(q->prompt_chars + 3) / 4;
    return p < 1 ? 1 : p;
}

int mock_wants_tool(const struct mock_req *q)
{
    if (!q->tool.n || q->fault.tool_call == 0)
        return 0;
    if (q->fault.tool_call > 0)
        return 1;
    if (q->last_tool_result)
        return 0;
    return q->last_role.n == 0 || SY_STR_EQ(q->last_role, "user");
}

void mock_tool_args(struct sy_buf *s, const struct mock_req *q)
{
    if (!q->has_schema) {
        SY_BUF_LIT(s, "{\"location\":\"Paris\",\"unit\":\"celsius\"}");
        return;
    }
    SY_BUF_LIT(s, "{");
    for (int i = 0; i < q->n_props; i++) {
        struct sy_str p = q->props[i];
        SY_BUF_LIT(s, "\"");
        sy_buf_append(s, p.p, p.n);
        if (SY_STR_EQ(p, "location"))
            SY_BUF_LIT(s, "\":\"Paris\"");
        else if (SY_STR_EQ(p, "unit"))
            SY_BUF_LIT(s, "\":\"celsius\"");
        else
            SY_BUF_LIT(s, "\":\"mock\"");
        if (i + 1 < q->n_props)
            SY_BUF_LIT(s, ",");
    }
    SY_BUF_LIT(s, "}");
}

size_t mock_piece(const char *p, size_t n, size_t off, size_t want)
{
    size_t end = off + want;
    if (end >= n)
        return n - off;
    while (end < n && ((unsigned char)p[end] & 0xC0) == 0x80) /* not inside a character */
        end++;
    return end - off;
}

/* ---- vectors ---- */

uint64_t mock_fnv1a(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h ? h : 1;
}

/* Fixed-point decimal with 9 fraction digits, without printf's float path. */
void mock_put_float(struct sy_buf *b, float v)
{
    char tmp[32];
    int n = 0;
    double a = fabs((double)v);
    unsigned long long q = (unsigned long long)llround(a * 1e9);
    unsigned long long ip = q / 1000000000ull, fp = q % 1000000000ull;
    if (v < 0)
        tmp[n++] = '-';
    n += snprintf(tmp + n, sizeof tmp - (size_t)n, "%llu.", ip);
    for (int d = 8; d >= 0; d--) {
        tmp[n + d] = (char)('0' + fp % 10);
        fp /= 10;
    }
    sy_buf_append(b, tmp, (size_t)n + 9);
}

static float vec_step(uint64_t *h)
{
    *h ^= *h << 13, *h ^= *h >> 7, *h ^= *h << 17;
    return (float)((double)(*h >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
}

/* Same values as the OpenAI embeddings (two passes over the generator, no array). */
void mock_vector(struct sy_buf *s, struct sy_str item, long dims)
{
    uint64_t h0 = mock_fnv1a(item.p ? item.p : "", item.n), h = h0;
    double norm = 0;
    for (long d = 0; d < dims; d++) {
        float v = vec_step(&h);
        norm += (double)v * v;
    }
    norm = sqrt(norm);
    h = h0;
    SY_BUF_LIT(s, "[");
    for (long d = 0; d < dims; d++) {
        if (d)
            SY_BUF_LIT(s, ",");
        mock_put_float(s, (float)(vec_step(&h) / norm));
    }
    SY_BUF_LIT(s, "]");
}

/* ---- framing ---- */

void mock_reason(struct sy_buf *s, const struct mock_fault *f, const char *dflt)
{
    if (f->finish_reason.p)
        sy_buf_append(s, f->finish_reason.p, f->finish_reason.n);
    else
        sy_buf_puts(s, dflt);
}

static void put_hex(struct sy_buf *b, size_t v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[sizeof tmp - 1 - (size_t)n++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    sy_buf_append(b, tmp + sizeof tmp - (size_t)n, (size_t)n);
}

void mock_chunk(struct mock_resp *r, const char *p, size_t n)
{
    put_hex(r->b, n);
    SY_BUF_LIT(r->b, "\r\n");
    sy_buf_append(r->b, p, n);
    SY_BUF_LIT(r->b, "\r\n");
}

void mock_seg_end(struct mock_resp *r, size_t start)
{
    if (r->split && r->track) {
        const unsigned char *p = (const unsigned char *)r->b->p;
        for (size_t i = start; i < r->b->len; i++)
            if (p[i] >= 0xC0) { /* the lead byte goes first, its continuation bytes later */
                mock_split_at(r, i + 1);
                break;
            }
    }
    mock_mark(r);
}

void mock_sse(struct mock_resp *r, const char *name, const struct sy_buf *s, int crlf, int mark)
{
    if (r->bedrock_invoke) {
        mock_bedrock_chunk(r, s, mark);
        return;
    }
    struct sy_buf *b = r->b;
    size_t start = b->len, eol = crlf ? 2 : 1, nl = name ? strlen(name) : 0;
    const char *e = crlf ? "\r\n" : "\n";
    put_hex(b, (name ? 7 + nl + eol : 0) + 6 + s->len + 2 * eol);
    SY_BUF_LIT(b, "\r\n");
    if (name) {
        SY_BUF_LIT(b, "event: ");
        sy_buf_append(b, name, nl);
        sy_buf_append(b, e, eol);
    }
    SY_BUF_LIT(b, "data: ");
    sy_buf_append(b, s->p, s->len);
    sy_buf_append(b, e, eol);
    sy_buf_append(b, e, eol);
    SY_BUF_LIT(b, "\r\n");
    if (mark)
        mock_seg_end(r, start);
}

void mock_chunked_end(struct mock_resp *r)
{
    SY_BUF_LIT(r->b, "0\r\n\r\n");
    mock_mark(r);
}

void mock_uuid(struct mock_thread *th, struct sy_buf *b)
{
    static const char hx[] = "0123456789abcdef";
    char tmp[36];
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            tmp[i] = '-';
            continue;
        }
        th->rng ^= th->rng << 13;
        th->rng ^= th->rng >> 7;
        th->rng ^= th->rng << 17;
        tmp[i] = hx[th->rng & 15];
    }
    sy_buf_append(b, tmp, sizeof tmp);
}
