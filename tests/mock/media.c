/* media.c - the mock's images, audio, moderations and rerank endpoints.
 *
 * | POST /v1/images/      | JSON {model, prompt (required), n? (1..10), response_format? url|
 * | generations           | b64_json, size?} -> {"created":T,"data":[IMG…]} with IMG {"url":
 * |                       | "https://mock.invalid/img/<k>.png"} (k counts up) or {"b64_json":
 * |                       | "<1x1 PNG>"}; dall-e-3 adds "revised_prompt":PROMPT. gpt-image-*
 * |                       | models: always b64_json, and "usage":{"input_tokens":P,
 * |                       | "input_tokens_details":{"image_tokens":I,"text_tokens":P'},
 * |                       | "output_tokens":272·n,"total_tokens":…}
 * | POST /v1/images/edits | multipart: image (or image[]) file part(s) required, prompt
 * |                       | (required), model, n, response_format, mask -> same shape (gpt-image
 * |                       | usage counts 65 image tokens per image part); not multipart or no
 * |                       | image part: 400
 * | POST /v1/audio/speech | JSON {model, input (required), voice, response_format? mp3|opus|aac|
 * |                       | flac|wav|pcm} -> 200, Content-Type audio/mpeg (audio/opus, audio/aac,
 * |                       | audio/flac, audio/wav, audio/pcm), chunked: 1 KiB HTTP chunks of
 * |                       | deterministic bytes (2 KiB + 32 per input byte, or body_bytes) starting
 * |                       | with the format's magic ("ID3", "OggS", FF F1, "fLaC", "RIFF…WAVE"),
 * |                       | 5 ms apart unless chunk_delay_ms says otherwise (each chunk a segment)
 * | POST /v1/audio/       | multipart: file (required: 400 without), model, response_format? json|
 * | transcriptions,       | text|verbose_json|srt|vtt, language?, prompt? -> json {"text":"mock
 * | translations          | transcription of <N> bytes"} (N = the file part's size); text / srt /
 * |                       | vtt as text/plain; verbose_json {"task":"transcribe"|"translate",
 * |                       | "language","duration":1.0,"text","segments":[…]}
 * | POST /v1/moderations  | JSON {model?, input (string, strings, or multimodal parts)} ->
 * |                       | {"id":"modr-<hex>","model":M (default omni-moderation-latest),
 * |                       | "results":[{"flagged":false,"categories":{13 names:false},
 * |                       | "category_scores":{…small},"category_applied_input_types":{…}}]}, one
 * |                       | result per string (one for multimodal parts). An input containing
 * |                       | "mock-flag" is flagged: violence true, score 0.98
 * | POST /v1/rerank,      | Cohere: {model, query, documents (strings or {text}), top_n?,
 * | /v2/rerank, /rerank   | return_documents?} -> {"id":UUID,"results":[{"index":i,
 * |                       | "relevance_score":S[,"document":{"text":…}]}…] (S = 0.9 · share of
 * |                       | the query's words found in the document + a hash tiebreak < 0.01,
 * |                       | sorted descending, first top_n), "meta":{"api_version":{"version":
 * |                       | "2"},"billed_units":{"search_units":1}}}; errors Cohere-shaped
 *
 * Directives: from the body (JSON), from the model field (multipart), or from
 * an Azure deployment name (/openai/deployments/{dep}/images/…, /audio/…).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "mock.h"

/* A valid 1x1 PNG. */
#define PNG_B64 "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

static atomic_ulong img_counter;

/* A body of any content type, one segment. */
static void body_as(struct mock_resp *r, const char *ctype, const struct sy_buf *s)
{
    mock_head(r, 200, ctype, (long)s->len, NULL);
    mock_mark(r);
    size_t start = r->b->len;
    sy_buf_append(r->b, s->p ? s->p : "", s->len);
    mock_seg_end(r, start);
}

static long num(struct sy_str v, long dflt)
{
    if (!v.p || !v.n || v.n > 9)
        return dflt;
    char tmp[12];
    memcpy(tmp, v.p, v.n);
    tmp[v.n] = 0;
    char *end;
    long x = strtol(tmp, &end, 10);
    return end == tmp ? dflt : x;
}

static struct sy_str field(const struct mock_part *p, int np, const char *name)
{
    const struct mock_part *f = mock_part(p, np, name);
    return f ? f->data : SY_STR_NULL;
}

/* Parse the request's multipart body; on failure render a 400. Returns np or -1. */
static int parts_of(struct mock_resp *r, struct mock_part *p)
{
    struct mock_http_req *h = &r->c->req;
    int np = mock_multipart(mock_header(r->c, "content-type"), h->body.p, h->body.len, p, MOCK_MAX_PARTS);
    if (np < 0)
        mock_error_param(r, 400,
                         "Invalid Content-Type header (expected multipart/form-data with a "
                         "boundary) or malformed multipart body.",
                         NULL, NULL);
    return np;
}

/* The model field of a multipart body: its directives, and the model unless
 * an Azure deployment named it. */
static void model_field(const struct mock_call *k, struct mock_req *q, struct sy_str m)
{
    struct sy_str name = mock_model_split(m, &q->fault);
    if (!k->dep.p && m.p)
        q->model = name;
    if (k->dep.p) /* the deployment's directives win */
        (void)mock_model_split(k->dep, &q->fault);
}

/* ---- images ---- */

static void images(struct mock_resp *r, const struct mock_call *k, struct mock_req *q, int edit)
{
    struct mock_part p[MOCK_MAX_PARTS];
    struct sy_str prompt = SY_STR_NULL, fmt = SY_STR_NULL, nstr = SY_STR_NULL;
    int np = 0, n_images = 0;
    if (edit) {
        np = mock_multipart(mock_header(r->c, "content-type"), r->c->req.body.p, r->c->req.body.len, p, MOCK_MAX_PARTS);
        if (np >= 0) {
            model_field(k, q, field(p, np, "model"));
            prompt = field(p, np, "prompt");
            fmt = field(p, np, "response_format");
            nstr = field(p, np, "n");
            for (int i = 0; i < np; i++)
                if (p[i].filename.p && (SY_STR_EQ(p[i].name, "image") || SY_STR_EQ(p[i].name, "image[]")))
                    n_images++;
        }
    } else {
        static const char *const keys[] = {"prompt", "response_format", "n"};
        struct mock_jv v[3];
        struct mock_http_req *h = &r->c->req;
        mock_json_get(h->body.p ? h->body.p : "", h->body.len, keys, 3, v);
        prompt = v[0].type == 's' ? v[0].v : SY_STR_NULL;
        fmt = v[1].type == 's' ? v[1].v : SY_STR_NULL;
        nstr = v[2].type == 'p' ? v[2].v : SY_STR_NULL;
    }
    const struct mock_fault *f = &q->fault;
    if (mock_api_begin(r, f))
        return;
    if (edit && np < 0) {
        parts_of(r, p);
    } else if (edit && n_images == 0) {
        mock_error_param(r, 400, "Missing required parameter: 'image'.", "image", "missing_required_parameter");
    } else if (!prompt.p) {
        mock_error_param(r, 400, "Missing required parameter: 'prompt'.", "prompt", "missing_required_parameter");
    } else {
        long n = num(nstr, 1);
        int gpt_image = sy_str_startswith(q->model, "gpt-image", 9);
        int dalle3 = sy_str_startswith(q->model, "dall-e-3", 8);
        int b64 = gpt_image || SY_STR_EQ(fmt, "b64_json");
        if (n < 1 || n > 10) {
            mock_error_param(r, 400, "Invalid 'n': integer must be between 1 and 10.", "n", "integer_out_of_range");
            mock_commit(r, f, 0);
            return;
        }
        struct sy_buf *s = &r->c->th->scratch;
        sy_buf_reset(s);
        sy_buf_printf(s, "{\"created\":%ld,\"data\":[", (long)time(NULL));
        for (long i = 0; i < n; i++) {
            if (i)
                SY_BUF_LIT(s, ",");
            if (b64)
                SY_BUF_LIT(s, "{\"b64_json\":\"" PNG_B64 "\"");
            else
                sy_buf_printf(s, "{\"url\":\"https://mock.invalid/img/%lu.png\"",
                              (unsigned long)atomic_fetch_add(&img_counter, 1) + 1);
            if (dalle3) {
                SY_BUF_LIT(s, ",\"revised_prompt\":\"");
                sy_buf_append(s, prompt.p, prompt.n);
                SY_BUF_LIT(s, "\"");
            }
            SY_BUF_LIT(s, "}");
        }
        SY_BUF_LIT(s, "]");
        if (gpt_image) {
            long text = (long)(prompt.n + 3) / 4, img = 65L * n_images;
            text = text < 1 ? 1 : text;
            sy_buf_printf(s,
                          ",\"usage\":{\"input_tokens\":%ld,\"input_tokens_details\":{"
                          "\"image_tokens\":%ld,\"text_tokens\":%ld},\"output_tokens\":%ld,"
                          "\"total_tokens\":%ld}",
                          text + img, img, text, 272 * n, text + img + 272 * n);
        }
        SY_BUF_LIT(s, "}");
        mock_body_json(r, 200, s, NULL);
    }
    mock_commit(r, f, 0);
}

/* ---- audio ---- */

static const struct {
    const char *fmt, *ctype, *magic;
    size_t magic_n;
} audio_formats[] = {
    {"mp3", "audio/mpeg", "ID3\x04\x00\x00\x00\x00\x00\x00\xff\xfb", 12},
    {"opus", "audio/opus", "OggS\x00\x02", 6},
    {"aac", "audio/aac", "\xff\xf1\x50\x80", 4},
    {"flac", "audio/flac", "fLaC\x00\x00\x00\x22", 8},
    {"wav", "audio/wav", "RIFF\xff\xff\xff\xffWAVEfmt ", 16},
    {"pcm", "audio/pcm", "", 0},
};

#define AUDIO_CHUNK 1024

static void speech(struct mock_resp *r, struct mock_req *q)
{
    static const char *const keys[] = {"input", "response_format"};
    struct mock_jv v[2];
    struct mock_http_req *h = &r->c->req;
    mock_json_get(h->body.p ? h->body.p : "", h->body.len, keys, 2, v);
    struct mock_fault f = q->fault;
    if (f.chunk_delay_ms < 0 && f.trickle_bytes_per_s <= 0)
        f.chunk_delay_ms = 5; /* several writes, so that streaming shows */
    int fi = 0;
    if (v[1].type == 's') {
        for (fi = 0; fi < (int)(sizeof audio_formats / sizeof audio_formats[0]); fi++)
            if (sy_str_eq(v[1].v, audio_formats[fi].fmt, strlen(audio_formats[fi].fmt)))
                break;
    }
    if (v[0].type != 's' || fi == (int)(sizeof audio_formats / sizeof audio_formats[0])) {
        f.chunk_delay_ms = -1;
        if (mock_api_begin(r, &f))
            return;
        if (v[0].type != 's')
            mock_error_param(r, 400, "Missing required parameter: 'input'.", "input", "missing_required_parameter");
        else
            mock_error_param(r, 400, "Invalid value for 'response_format'.", "response_format", "invalid_value");
        mock_commit(r, &f, 0);
        return;
    }
    if (mock_api_begin(r, &f))
        return;
    size_t total = 2048 + 32 * v[0].v.n;
    if (f.body_bytes > 0)
        total = (size_t)f.body_bytes;
    if (total > (16u << 20))
        total = 16u << 20;
    mock_head(r, 200, audio_formats[fi].ctype, -1, NULL);
    mock_mark(r);
    uint64_t h64 = mock_fnv1a(v[0].v.p, v[0].v.n);
    char chunk[AUDIO_CHUNK];
    size_t sent = 0, m = audio_formats[fi].magic_n;
    while (sent < total) {
        size_t n = total - sent < AUDIO_CHUNK ? total - sent : AUDIO_CHUNK;
        for (size_t i = 0; i < n; i++) {
            if (sent + i < m) {
                chunk[i] = audio_formats[fi].magic[sent + i];
                continue;
            }
            h64 ^= h64 << 13, h64 ^= h64 >> 7, h64 ^= h64 << 17;
            chunk[i] = (char)(h64 >> 24);
        }
        mock_chunk(r, chunk, n);
        mock_mark(r);
        sent += n;
    }
    mock_chunked_end(r);
    mock_commit(r, &f, 1);
}

static void transcribe(struct mock_resp *r, const struct mock_call *k, struct mock_req *q, int translate)
{
    struct mock_part p[MOCK_MAX_PARTS];
    int np = mock_multipart(mock_header(r->c, "content-type"), r->c->req.body.p, r->c->req.body.len, p, MOCK_MAX_PARTS);
    if (np >= 0)
        model_field(k, q, field(p, np, "model"));
    const struct mock_fault *f = &q->fault;
    if (mock_api_begin(r, f))
        return;
    const struct mock_part *file = np >= 0 ? mock_part(p, np, "file") : NULL;
    struct sy_str fmt = np >= 0 ? field(p, np, "response_format") : SY_STR_NULL;
    struct sy_str lang = np >= 0 ? field(p, np, "language") : SY_STR_NULL;
    struct sy_buf *s = &r->c->th->scratch, text;
    if (np < 0) {
        parts_of(r, p);
    } else if (!file) {
        mock_error_param(r, 400, "Missing required parameter: 'file'.", "file", "missing_required_parameter");
    } else if (fmt.p && !SY_STR_EQ(fmt, "json") && !SY_STR_EQ(fmt, "text") && !SY_STR_EQ(fmt, "verbose_json") &&
               !SY_STR_EQ(fmt, "srt") && !SY_STR_EQ(fmt, "vtt")) {
        mock_error_param(r, 400, "Invalid value for 'response_format'.", "response_format", "invalid_value");
    } else {
        sy_buf_init(&text, 256);
        sy_buf_printf(&text, "mock transcription of %zu bytes", file->data.n);
        sy_buf_reset(s);
        if (!fmt.p || SY_STR_EQ(fmt, "json")) {
            sy_buf_printf(s, "{\"text\":\"%s\"}", text.p);
            mock_body_json(r, 200, s, NULL);
        } else if (SY_STR_EQ(fmt, "verbose_json")) {
            sy_buf_printf(s, "{\"task\":\"%s\",\"language\":\"", translate ? "translate" : "transcribe");
            if (lang.p && !translate)
                sy_buf_json_escape(s, lang.p, lang.n);
            else
                SY_BUF_LIT(s, "english");
            sy_buf_printf(s,
                          "\",\"duration\":1.0,\"text\":\"%s\",\"segments\":[{\"id\":0,"
                          "\"seek\":0,\"start\":0.0,\"end\":1.0,\"text\":\"%s\",\"tokens\":"
                          "[50364,51414],\"temperature\":0.0,\"avg_logprob\":-0.25,"
                          "\"compression_ratio\":1.0,\"no_speech_prob\":0.01}]}",
                          text.p, text.p);
            mock_body_json(r, 200, s, NULL);
        } else {
            if (SY_STR_EQ(fmt, "srt"))
                sy_buf_printf(s, "1\n00:00:00,000 --> 00:00:01,000\n%s\n\n", text.p);
            else if (SY_STR_EQ(fmt, "vtt"))
                sy_buf_printf(s, "WEBVTT\n\n00:00:00.000 --> 00:00:01.000\n%s\n\n", text.p);
            else
                sy_buf_printf(s, "%s\n", text.p);
            body_as(r, "text/plain; charset=utf-8", s);
        }
        sy_buf_free(&text);
    }
    mock_commit(r, f, 0);
}

/* ---- moderations ---- */

static const char *const categories[] = {
    "harassment",
    "harassment/threatening",
    "hate",
    "hate/threatening",
    "illicit",
    "illicit/violent",
    "self-harm",
    "self-harm/intent",
    "self-harm/instructions",
    "sexual",
    "sexual/minors",
    "violence",
    "violence/graphic",
};
#define NCAT (sizeof categories / sizeof categories[0])

static int contains(struct sy_str s, const char *lit)
{
    size_t n = strlen(lit);
    for (size_t i = 0; i + n <= s.n; i++)
        if (strncasecmp(s.p + i, lit, n) == 0)
            return 1;
    return 0;
}

static void moderation_result(struct sy_buf *s, struct sy_str item, int omni)
{
    int flag = contains(item, "mock-flag");
    uint64_t h = mock_fnv1a(item.p ? item.p : "", item.n);
    sy_buf_printf(s, "{\"flagged\":%s,\"categories\":{", flag ? "true" : "false");
    for (size_t c = 0; c < NCAT; c++)
        sy_buf_printf(s, "%s\"%s\":%s", c ? "," : "", categories[c],
                      flag && !strcmp(categories[c], "violence") ? "true" : "false");
    SY_BUF_LIT(s, "},\"category_scores\":{");
    for (size_t c = 0; c < NCAT; c++) {
        h ^= h << 13, h ^= h >> 7, h ^= h << 17;
        sy_buf_printf(s, "%s\"%s\":", c ? "," : "", categories[c]);
        if (flag && !strcmp(categories[c], "violence"))
            SY_BUF_LIT(s, "0.98");
        else
            mock_put_float(s, (float)((double)(h % 100000) / 1e8 + 1e-6));
    }
    SY_BUF_LIT(s, "}");
    if (omni) {
        SY_BUF_LIT(s, ",\"category_applied_input_types\":{");
        for (size_t c = 0; c < NCAT; c++)
            sy_buf_printf(s, "%s\"%s\":[\"text\"]", c ? "," : "", categories[c]);
        SY_BUF_LIT(s, "}");
    }
    SY_BUF_LIT(s, "}");
}

static void moderations(struct mock_resp *r, struct mock_req *q)
{
    const struct mock_fault *f = &q->fault;
    if (mock_api_begin(r, f))
        return;
    if (q->n_items == 0) {
        mock_error_param(r, 400, "Missing required parameter: 'input'.", "input", "missing_required_parameter");
        mock_commit(r, f, 0);
        return;
    }
    struct sy_buf *s = &r->c->th->scratch;
    struct sy_str model = q->model.n ? q->model : SY_STR("omni-moderation-latest");
    int omni = !sy_str_startswith(model, "text-moderation", 15);
    /* multimodal parts ([{"type":"text",…},{"type":"image_url",…}]) make one result */
    int parts = q->n_items > 0 && q->items[0].n && q->items[0].p[0] == '{' && q->items[0].p > r->c->req.body.p &&
                q->items[0].p[-1] != '"';
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"id\":\"");
    mock_hex_id(r->c->th, s, "modr-", 32);
    SY_BUF_LIT(s, "\",\"model\":\"");
    sy_buf_append(s, model.p, model.n);
    SY_BUF_LIT(s, "\",\"results\":[");
    if (parts) {
        struct sy_str all = {q->items[0].p, 0};
        const struct sy_str *last = &q->items[q->n_items - 1];
        all.n = (size_t)(last->p + last->n - all.p);
        moderation_result(s, all, omni);
    } else {
        for (int i = 0; i < q->n_items; i++) {
            if (i)
                SY_BUF_LIT(s, ",");
            moderation_result(s, q->items[i], omni);
        }
    }
    SY_BUF_LIT(s, "]}");
    mock_body_json(r, 200, s, NULL);
    mock_commit(r, f, 0);
}

/* ---- rerank ---- */

struct scored {
    int index;
    double score;
};

static int by_score(const void *a, const void *b)
{
    const struct scored *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    return x->index - y->index;
}

static int is_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || (unsigned char)c >= 0x80;
}

/* 0.9 · (query words found in doc) / (query words) + a tiebreak below 0.01. */
static double score(struct sy_str query, struct sy_str doc)
{
    int words = 0, found = 0;
    for (size_t i = 0; i < query.n;) {
        while (i < query.n && !is_word(query.p[i]))
            i++;
        size_t j = i;
        while (j < query.n && is_word(query.p[j]))
            j++;
        if (j > i) {
            words++;
            for (size_t d = 0; d + (j - i) <= doc.n; d++)
                if ((d == 0 || !is_word(doc.p[d - 1])) && strncasecmp(doc.p + d, query.p + i, j - i) == 0 &&
                    (d + (j - i) == doc.n || !is_word(doc.p[d + (j - i)]))) {
                    found++;
                    break;
                }
        }
        i = j;
    }
    double tie = (double)(mock_fnv1a(doc.p ? doc.p : "", doc.n) % 10000) / 1e6;
    return (words ? 0.9 * found / words : 0) + tie + 0.0001;
}

static void rerank(struct mock_resp *r, struct mock_req *q)
{
    static const char *const keys[] = {"query", "top_n", "return_documents"};
    struct mock_jv v[3];
    struct mock_http_req *h = &r->c->req;
    mock_json_get(h->body.p ? h->body.p : "", h->body.len, keys, 3, v);
    const struct mock_fault *f = &q->fault;
    if (mock_api_begin(r, f))
        return;
    if (v[0].type != 's' || !v[0].v.n) {
        mock_cohere_error(r, 400, "invalid request: query must not be empty.", NULL);
    } else if (q->n_items == 0) {
        mock_cohere_error(r, 400, "invalid request: list of documents must not be empty.", NULL);
    } else {
        long top = v[1].type == 'p' ? num(v[1].v, q->n_items) : q->n_items;
        int docs = v[2].type == 'p' && v[2].v.n == 4; /* true */
        struct scored *sc = malloc(sizeof *sc * (size_t)q->n_items);
        if (!sc)
            return;
        for (int i = 0; i < q->n_items; i++)
            sc[i] = (struct scored){i, score(v[0].v, q->items[i])};
        qsort(sc, (size_t)q->n_items, sizeof *sc, by_score);
        if (top < 1 || top > q->n_items)
            top = q->n_items;
        struct sy_buf *s = &r->c->th->scratch;
        sy_buf_reset(s);
        SY_BUF_LIT(s, "{\"id\":\"");
        mock_uuid(r->c->th, s);
        SY_BUF_LIT(s, "\",\"results\":[");
        for (long i = 0; i < top; i++) {
            struct sy_str d = q->items[sc[i].index];
            sy_buf_printf(s, "%s{\"index\":%d,\"relevance_score\":", i ? "," : "", sc[i].index);
            mock_put_float(s, (float)sc[i].score);
            if (docs) {
                int obj = d.n && d.p[0] == '{' && d.p > h->body.p && d.p[-1] != '"';
                SY_BUF_LIT(s, ",\"document\":");
                if (obj) {
                    sy_buf_append(s, d.p, d.n);
                } else {
                    SY_BUF_LIT(s, "{\"text\":\"");
                    sy_buf_append(s, d.p, d.n);
                    SY_BUF_LIT(s, "\"}");
                }
            }
            SY_BUF_LIT(s, "}");
        }
        SY_BUF_LIT(s, "],\"meta\":{\"api_version\":{\"version\":\"2\"},\"billed_units\":"
                      "{\"search_units\":1}}}");
        free(sc);
        mock_body_json(r, 200, s, NULL);
    }
    mock_commit(r, f, 0);
}

void mock_media(struct mock_resp *r, const struct mock_call *k, struct mock_req *q)
{
    switch (k->api) {
    case MOCK_A_IMG_GEN:
    case MOCK_A_IMG_EDIT: images(r, k, q, k->api == MOCK_A_IMG_EDIT); break;
    case MOCK_A_SPEECH: speech(r, q); break;
    case MOCK_A_TRANSCRIBE:
    case MOCK_A_TRANSLATE: transcribe(r, k, q, k->api == MOCK_A_TRANSLATE); break;
    case MOCK_A_MODERATE: moderations(r, q); break;
    default: rerank(r, q); break;
    }
}
