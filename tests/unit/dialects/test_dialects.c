/* test_dialects.c - every dialect's golden files through the one interface
 * (src/dialects/dialect.h): the same files the translations' own tests read,
 * but each call made through the dialect's table, so what the engine
 * (gateway/xlate.c) reaches is what is checked.
 *
 *   dialect    what                 golden files (input -> expected)
 *   messages   request -> chat      GOLDEN_DIR/messages/req/NAME.json -> NAME.out.json | NAME.err
 *              chat answer -> msg   GOLDEN_DIR/messages/resp/NAME.json [+ NAME.req.json] -> NAME.out.json
 *              recorded stream      GOLDEN_DIR/messages/stream/NAME.txt (a payload a line) -> NAME.out.txt
 *   responses  request -> chat      RESP_GOLDEN_DIR/req_NAME.json [+ .prior.json] -> .chat.json [+ .items.json] | .err
 *              chat answer -> resp  RESP_GOLDEN_DIR/ans_NAME.chat.json [+ .req.json] -> ans_NAME.resp.json
 *              recorded stream      RESP_GOLDEN_DIR/stream_NAME.sse [+ .req.json] -> stream_NAME.events
 *   chat       identity             the recorded answers and streams above come back byte for byte
 *   (all)      errors               GOLDEN_DIR/errors/NAME.in -> NAME.out (below)
 *
 * errors/NAME.in is one line "<dialect> <status> <message>"; NAME.out is the
 * dialect's error body (empty when its errors are the engine's OpenAI
 * object), a line "--", then the events of a stream that sent one text chunk
 * and then met the error (stream_error; the fixed meta below). These two are
 * simple .in/.out pairs, the format a shared golden harness can take over.
 *
 * Expected files hold the output and one newline. SY_GOLDEN_UPDATE=1 rewrites
 * the errors/ files (the others belong to the translations' own tests).
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/errors.h"
#include "dialects/dialect.h"
#include "gateway/xlate.h"

#define SEED "0123456789abcdef0123456789abcdef"

static int update;

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long l = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)l + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)l, f), (size_t)l);
    p[l] = 0;
    fclose(f);
    *n = (size_t)l;
    return p;
}

static int exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f)
        fclose(f);
    return f != NULL;
}

/* got[0..n) against the file (its content may end with one extra newline). */
static void expect_file(const char *path, const char *got, size_t n, int may_update)
{
    if (update && may_update) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fwrite(got, 1, n, f);
        fputc('\n', f);
        fclose(f);
        return;
    }
    size_t wn;
    char *want = slurp(path, &wn);
    if (!want)
        fail_msg("%s: missing", path);
    if (wn == n + 1 && want[n] == '\n')
        wn--;
    if (wn != n || memcmp(want, got, n) != 0) {
        size_t i = 0;
        while (i < n && i < wn && want[i] == got[i])
            i++;
        fail_msg("%s: differs at byte %zu\n  want: %.120s\n  got:  %.120s", path, i, want + i, got + i);
    }
    free(want);
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a > b && strcmp(s + a - b, suf) == 0;
}

/* Names (file name minus suffix) in dir ending with suffix, sorted; the
 * expected files (other dotted suffixes) left out. */
static size_t list(const char *dir, const char *prefix, const char *suffix, char names[][128], size_t cap)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < cap) {
        const char *f = e->d_name;
        size_t fl = strlen(f), sl = strlen(suffix);
        if (strncmp(f, prefix, strlen(prefix)) || !ends_with(f, suffix) || fl - sl >= 128)
            continue;
        if (memchr(f, '.', fl - sl)) /* NAME.out.json, NAME.req.json, NAME.chat.json ... */
            continue;
        snprintf(names[n++], 128, "%.*s", (int)(fl - sl), f);
    }
    closedir(d);
    qsort(names, n, 128, (int (*)(const void *, const void *))strcmp);
    return n;
}

/* dir/NAME<suffix> parsed into d when present (1); its text in *txt (free it). */
static int load_doc(const char *dir, const char *name, const char *suffix, struct sy_jdoc *d, struct sy_arena *a,
                    char **txt)
{
    char path[512];
    size_t n;
    snprintf(path, sizeof path, "%s/%s%s", dir, name, suffix);
    *txt = slurp(path, &n);
    if (!*txt)
        return 0;
    assert_int_equal(sy_jdom_parse(d, *txt, n, a, 0), 0);
    return 1;
}

/* The fixed meta of the Responses golden files (tests/unit/responses). */
static void resp_meta(struct sy_dl_meta *m, const struct sy_jdoc *req, struct sy_arena *a)
{
    *m = (struct sy_dl_meta){.id = "resp_test", .model = "m", .created_at = 1700000000, .id_seed = SEED, .req = req};
    uint32_t p = req ? sy_jdom_get(req, 0, "previous_response_id") : 0;
    if (p && req->n[p].type == 's')
        m->previous_response_id = sy_jdom_str(req, p, a, NULL);
}

/* A stream through the table: one payload per call, then the end. */
static void stream_payloads(const struct sy_dialect *dl, void *s, const char *p, size_t n, int sse, struct sy_buf *out)
{
    int done = 0;
    for (const char *e = p + n; p < e;) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(e - p);
        const char *d = p;
        size_t dlen = l;
        int take = sse ? l > 6 && memcmp(p, "data: ", 6) == 0 : l && *p != '#';
        if (sse) {
            d += 6;
            dlen -= 6;
        }
        if (take) {
            int rc = dl->stream_chunk(s, d, dlen, out);
            assert_true(rc == 0 || rc == SY_DONE);
            if (done)
                assert_int_equal(rc, SY_DONE); /* nothing after the end */
            done |= rc == SY_DONE;
        }
        p += l + 1;
    }
    size_t before = out->len;
    dl->stream_end(s, out);
    if (done)
        assert_int_equal(out->len, before);
}

/* ---- messages ------------------------------------------------------------------ */

static void messages_requests(void **st)
{
    const struct sy_dialect *dl = &sy_dialect_messages;
    static char names[256][128];
    const char *dir = GOLDEN_DIR "/messages/req";
    size_t n = list(dir, "", ".json", names, 256);
    assert_true(n >= 20);
    for (size_t k = 0; k < n; k++) {
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_jdoc d;
        char *txt, path[512];
        assert_true(load_doc(dir, names[k], ".json", &d, &a, &txt));
        struct sy_buf out;
        sy_buf_init(&out, 1 << 20);
        struct sy_xerr e = {0};
        int rc = dl->to_chat(&(struct sy_dl_in){.req = &d}, &a, &out, &e);
        if (rc == 0) {
            snprintf(path, sizeof path, "%s/%s.out.json", dir, names[k]);
            expect_file(path, out.p, out.len, 0);
        } else {
            assert_int_equal(rc, SY_EINVAL);
            char msg[1200];
            int ml = snprintf(msg, sizeof msg, "%d %s", e.status, e.message);
            snprintf(path, sizeof path, "%s/%s.err", dir, names[k]);
            expect_file(path, msg, (size_t)ml, 0);
        }
        sy_buf_free(&out);
        sy_arena_free(&a);
        free(txt);
    }
}

static void messages_answers(void **st)
{
    const struct sy_dialect *dl = &sy_dialect_messages;
    static char names[256][128];
    const char *dir = GOLDEN_DIR "/messages/resp";
    size_t n = list(dir, "", ".json", names, 256);
    assert_true(n >= 8);
    for (size_t k = 0; k < n; k++) {
        char path[512], *reqtxt;
        size_t len;
        snprintf(path, sizeof path, "%s/%s.json", dir, names[k]);
        char *in = slurp(path, &len);
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_jdoc req;
        int have_req = load_doc(dir, names[k], ".req.json", &req, &a, &reqtxt);
        int up = strncmp(names[k], "upstream-", 9) == 0; /* the upstream's model and id */
        struct sy_dl_meta m = {
            .id = up ? NULL : "msg_test", .model = up ? NULL : "claude-test", .req = have_req ? &req : NULL};
        struct sy_buf out;
        sy_buf_init(&out, 1 << 20);
        assert_int_equal(dl->from_chat(&m, in, len, &a, &out), 0);
        snprintf(path, sizeof path, "%s/%s.out.json", dir, names[k]);
        expect_file(path, out.p, out.len, 0);
        sy_buf_free(&out);
        sy_arena_free(&a);
        free(in);
        free(reqtxt);
    }
}

static void messages_streams(void **st)
{
    const struct sy_dialect *dl = &sy_dialect_messages;
    static char names[256][128];
    const char *dir = GOLDEN_DIR "/messages/stream";
    size_t n = list(dir, "", ".txt", names, 256);
    assert_true(n >= 8);
    for (size_t k = 0; k < n; k++) {
        char path[512], *reqtxt;
        size_t len;
        snprintf(path, sizeof path, "%s/%s.txt", dir, names[k]);
        char *in = slurp(path, &len);
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_jdoc req;
        int have_req = load_doc(dir, names[k], ".req.json", &req, &a, &reqtxt);
        struct sy_dl_meta m = {.id = "msg_test", .model = "claude-test", .req = have_req ? &req : NULL};
        void *s = sy_arena_alloc(&a, dl->stream_size);
        dl->stream_init(s, &m);
        struct sy_buf out;
        sy_buf_init(&out, 1 << 20);
        stream_payloads(dl, s, in, len, 0, &out);
        snprintf(path, sizeof path, "%s/%s.out.txt", dir, names[k]);
        expect_file(path, out.p, out.len, 0);
        sy_buf_free(&out);
        sy_arena_free(&a);
        free(in);
        free(reqtxt);
    }
}

/* ---- responses ----------------------------------------------------------------- */

static void responses_requests(void **st)
{
    const struct sy_dialect *dl = &sy_dialect_responses;
    static char names[256][128];
    const char *dir = RESP_GOLDEN_DIR;
    size_t n = list(dir, "req_", ".json", names, 256);
    assert_true(n >= 6);
    for (size_t k = 0; k < n; k++) {
        char path[512], *txt;
        size_t pn = 0;
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_jdoc d;
        assert_true(load_doc(dir, names[k], ".json", &d, &a, &txt));
        snprintf(path, sizeof path, "%s/%s.prior.json", dir, names[k]);
        char *prior = slurp(path, &pn);
        while (prior && pn && (prior[pn - 1] == '\n' || prior[pn - 1] == ' '))
            prior[--pn] = 0;
        struct sy_buf out, items;
        sy_buf_init(&out, 1 << 20);
        sy_buf_init(&items, 1 << 20);
        struct sy_xerr e = {0};
        struct sy_dl_in in = {.req = &d, .prior = prior, .prior_len = pn, .id_seed = SEED, .items = &items};
        int rc = dl->to_chat(&in, &a, &out, &e);
        snprintf(path, sizeof path, "%s/%s.err", dir, names[k]);
        if (rc || exists(path)) {
            char got[1200];
            int gl = snprintf(got, sizeof got, "%d %s %s", e.status, e.param[0] ? e.param : "-", e.message);
            if (!rc)
                fail_msg("%s: accepted, expected an error", names[k]);
            expect_file(path, got, (size_t)gl, 0);
        } else {
            snprintf(path, sizeof path, "%s/%s.chat.json", dir, names[k]);
            expect_file(path, out.p, out.len, 0);
            snprintf(path, sizeof path, "%s/%s.items.json", dir, names[k]);
            if (exists(path))
                expect_file(path, items.p, items.len, 0);
        }
        sy_buf_free(&out);
        sy_buf_free(&items);
        sy_arena_free(&a);
        free(txt);
        free(prior);
    }
}

/* ans_NAME.chat.json / stream_NAME.sse through dl into out (meta: the Responses
 * golden files'); the recorded input itself into *in. */
static void recorded(const struct sy_dialect *dl, const char *name, int stream, struct sy_arena *a, struct sy_buf *out,
                     struct sy_buf *final, char **in, size_t *n)
{
    char path[512], *reqtxt;
    snprintf(path, sizeof path, "%s/%s%s", RESP_GOLDEN_DIR, name, stream ? ".sse" : ".chat.json");
    *in = slurp(path, n);
    assert_non_null(*in);
    while (!stream && *n && ((*in)[*n - 1] == '\n' || (*in)[*n - 1] == ' '))
        (*n)--;
    struct sy_jdoc req;
    int have_req = load_doc(RESP_GOLDEN_DIR, name, ".req.json", &req, a, &reqtxt);
    struct sy_dl_meta m;
    resp_meta(&m, have_req ? &req : NULL, a);
    if (!stream) {
        assert_int_equal(sy_dialect_answer(dl, &m, 0, *in, *n, a, out, NULL), 0);
    } else if (dl->stream_chunk) { /* through the table call by call, as xlate.c does */
        void *s = sy_arena_alloc(a, dl->stream_size);
        dl->stream_init(s, &m);
        stream_payloads(dl, s, *in, *n, 1, out);
        if (final && dl->stream_final)
            dl->stream_final(s, final);
        if (dl->stream_free)
            dl->stream_free(s);
    } else {
        assert_int_equal(sy_dialect_answer(dl, &m, 1, *in, *n, a, out, final), 0);
    }
    free(reqtxt);
}

static void responses_answers(void **st)
{
    static char names[256][128];
    size_t n = list(RESP_GOLDEN_DIR, "ans_", ".chat.json", names, 256);
    assert_true(n >= 4);
    for (size_t k = 0; k < n; k++) {
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_buf out;
        sy_buf_init(&out, 1 << 24);
        char *in, path[512];
        size_t len;
        recorded(&sy_dialect_responses, names[k], 0, &a, &out, NULL, &in, &len);
        snprintf(path, sizeof path, "%s/%s.resp.json", RESP_GOLDEN_DIR, names[k]);
        expect_file(path, out.p, out.len, 0);
        sy_buf_free(&out);
        sy_arena_free(&a);
        free(in);
    }
}

static void responses_streams(void **st)
{
    static char names[256][128];
    size_t n = list(RESP_GOLDEN_DIR, "stream_", ".sse", names, 256);
    assert_true(n >= 4);
    for (size_t k = 0; k < n; k++) {
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_buf out, final, whole;
        sy_buf_init(&out, 1 << 24);
        sy_buf_init(&final, 1 << 24);
        sy_buf_init(&whole, 1 << 24);
        char *in, path[512];
        size_t len;
        recorded(&sy_dialect_responses, names[k], 1, &a, &out, &final, &in, &len);
        snprintf(path, sizeof path, "%s/%s.events", RESP_GOLDEN_DIR, names[k]);
        expect_file(path, out.p, out.len, 0);
        /* the same through sy_dialect_answer (the built-in mock's path) */
        struct sy_dl_meta m;
        struct sy_jdoc req;
        char *reqtxt;
        int have_req = load_doc(RESP_GOLDEN_DIR, names[k], ".req.json", &req, &a, &reqtxt);
        resp_meta(&m, have_req ? &req : NULL, &a);
        struct sy_buf f2;
        sy_buf_init(&f2, 1 << 24);
        int rc = sy_dialect_answer(&sy_dialect_responses, &m, 1, in, len, &a, &whole, &f2);
        assert_int_equal(whole.len, out.len);
        assert_memory_equal(whole.p, out.p, out.len);
        /* a completed stream keeps the response it ended with (what the store saves) */
        assert_int_equal(rc == 0, final.len > 0);
        if (rc == 0) {
            assert_int_equal(f2.len, final.len);
            assert_memory_equal(f2.p, final.p, final.len);
            assert_non_null(memmem(out.p, out.len, final.p, final.len)); /* = response.completed's */
        }
        sy_buf_free(&f2);
        free(reqtxt);
        sy_buf_free(&out);
        sy_buf_free(&final);
        sy_buf_free(&whole);
        sy_arena_free(&a);
        free(in);
    }
}

/* ---- chat: the identity ------------------------------------------------------------ */

static void chat_identity(void **st)
{
    const struct sy_dialect *dl = &sy_dialect_chat;
    assert_null(dl->to_chat); /* the request is the chat form: the engine sends the client's bytes */
    assert_null(dl->from_chat);
    assert_null(dl->stream_chunk); /* the pass-through path never calls into the table per chunk */
    assert_null(dl->native);
    static char names[256][128];
    size_t n = list(RESP_GOLDEN_DIR, "ans_", ".chat.json", names, 256);
    assert_true(n >= 4);
    for (size_t k = 0; k < n; k++) { /* a chat answer comes back byte for byte */
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_buf out;
        sy_buf_init(&out, 1 << 24);
        char *in;
        size_t len;
        recorded(dl, names[k], 0, &a, &out, NULL, &in, &len);
        assert_int_equal(out.len, len);
        assert_memory_equal(out.p, in, len);
        sy_buf_free(&out);
        sy_arena_free(&a);
        free(in);
    }
    n = list(RESP_GOLDEN_DIR, "stream_", ".sse", names, 256);
    assert_true(n >= 4);
    for (size_t k = 0; k < n; k++) { /* a stream: its frames, then [DONE] once */
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_buf out, want;
        sy_buf_init(&out, 1 << 24);
        sy_buf_init(&want, 1 << 24);
        char *in;
        size_t len;
        recorded(dl, names[k], 1, &a, &out, NULL, &in, &len);
        for (const char *p = in, *e = in + len; p < e;) {
            const char *nl = memmem(p, (size_t)(e - p), "\n\n", 2);
            if (!nl)
                break;
            if (!(nl - p == 12 && memcmp(p, "data: [DONE]", 12) == 0))
                sy_buf_append(&want, p, (size_t)(nl - p + 2));
            p = nl + 2;
        }
        SY_BUF_LIT(&want, "data: [DONE]\n\n");
        assert_int_equal(out.len, want.len);
        assert_memory_equal(out.p, want.p, want.len);
        sy_buf_free(&out);
        sy_buf_free(&want);
        sy_arena_free(&a);
        free(in);
    }
}

/* ---- errors ---------------------------------------------------------------------------- */

static const struct sy_dialect *by_name(const char *name, size_t n)
{
    static const struct sy_dialect *const all[] = {&sy_dialect_chat, &sy_dialect_messages, &sy_dialect_responses};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strlen(all[i]->name) == n && memcmp(all[i]->name, name, n) == 0)
            return all[i];
    fail_msg("no dialect %.*s", (int)n, name);
    return NULL;
}

static void errors(void **st)
{
    static char names[64][128];
    const char *dir = GOLDEN_DIR "/errors";
    size_t n = list(dir, "", ".in", names, 64);
    assert_true(n >= 4);
    for (size_t k = 0; k < n; k++) {
        char path[512];
        size_t len;
        snprintf(path, sizeof path, "%s/%s.in", dir, names[k]);
        char *in = slurp(path, &len);
        while (len && in[len - 1] == '\n')
            in[--len] = 0;
        char *sp = strchr(in, ' ');
        assert_non_null(sp);
        const struct sy_dialect *dl = by_name(in, (size_t)(sp - in));
        char *msg = NULL;
        int status = (int)strtol(sp + 1, &msg, 10);
        msg += *msg == ' ';
        assert_non_null(dl->stream_error);
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_buf out;
        sy_buf_init(&out, 1 << 20);
        if (dl->error)
            dl->error(status, msg, strlen(msg), &out);
        SY_BUF_LIT(&out, "\n--\n");
        struct sy_dl_meta m = {.id = dl->id == SY_DL_RESPONSES ? "resp_test" : "msg_test",
                               .model = "m",
                               .created_at = 1700000000,
                               .id_seed = SEED};
        void *s = sy_arena_alloc(&a, dl->stream_size);
        dl->stream_init(s, &m);
        static const char chunk[] = "{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"up\","
                                    "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"},"
                                    "\"finish_reason\":null}]}";
        assert_int_equal(dl->stream_chunk(s, chunk, sizeof chunk - 1, &out), 0);
        dl->stream_error(s, status, msg, strlen(msg), &out);
        size_t before = out.len;
        dl->stream_end(s, &out); /* nothing after the error */
        assert_int_equal(out.len, before);
        if (dl->stream_free)
            dl->stream_free(s);
        snprintf(path, sizeof path, "%s/%s.out", dir, names[k]);
        expect_file(path, out.p, out.len, 1);
        sy_buf_free(&out);
        sy_arena_free(&a);
        free(in);
    }
}

/* The engine's side: the route kind's dialect decides who writes an error. */
static void engine_errors(void **st)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 16);
    assert_ptr_equal(sy_xlate_dialect(SY_RK_CHAT), &sy_dialect_chat);
    assert_ptr_equal(sy_xlate_dialect(SY_RK_EMBEDDINGS), &sy_dialect_chat);
    assert_ptr_equal(sy_xlate_dialect(SY_RK_MESSAGES), &sy_dialect_messages);
    assert_ptr_equal(sy_xlate_dialect(SY_RK_MESSAGES_COUNT), &sy_dialect_messages);
    assert_ptr_equal(sy_xlate_dialect(SY_RK_RESPONSES), &sy_dialect_responses);
    assert_ptr_equal(sy_xlate_dialect(SY_RK_RESPONSES_ID), &sy_dialect_responses);
    /* OpenAI-shaped dialects: the engine writes the error object (type, param, code) */
    assert_int_equal(sy_xlate_client_error(SY_RK_CHAT, 429, "slow down", &b), 0);
    assert_int_equal(sy_xlate_client_error(SY_RK_RESPONSES, 400, "bad", &b), 0);
    assert_int_equal(b.len, 0);
    assert_int_equal(sy_xlate_client_error(SY_RK_MESSAGES_COUNT, 401, NULL, &b), 1);
    assert_string_equal(b.p, "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"\"}}");
    sy_buf_free(&b);
}

int main(void)
{
    const char *u = getenv("SY_GOLDEN_UPDATE");
    update = u && *u == '1';
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(messages_requests), cmocka_unit_test(messages_answers),
        cmocka_unit_test(messages_streams),  cmocka_unit_test(responses_requests),
        cmocka_unit_test(responses_answers), cmocka_unit_test(responses_streams),
        cmocka_unit_test(chat_identity),     cmocka_unit_test(errors),
        cmocka_unit_test(engine_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
