/* test_golden.c - byte-for-byte golden files for the response side of the
 * Responses translation (responses/answer.c, stream.c), in $SY_GOLDEN_DIR:
 *
 *   ans_<name>.chat.json    a chat.completion  -> ans_<name>.resp.json, the response object
 *   stream_<name>.sse       "data: <chunk>\n\n" payloads (and [DONE])
 *                                               -> stream_<name>.events, the Responses events
 *   <same stem>.req.json    optional: the Responses request echoed (meta req)
 *
 * Fixed meta: id "resp_test", model "m", created_at 1700000000, id_seed
 * "0123456789abcdef0123456789abcdef". Expected files may end with one extra
 * newline. SY_GOLDEN_UPDATE=1 rewrites the expected files from the output
 * (then read them before committing). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "responses/responses.h"

static const char *dir(void)
{
    const char *d = getenv("SY_GOLDEN_DIR");
    return d ? d : "golden";
}

/* Whole file into a malloc'd NUL-terminated buffer; NULL when absent. */
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

static void meta(struct sy_resp_meta *m, struct sy_jdoc *req, const char *stem, struct sy_arena *a, char **reqtext)
{
    memset(m, 0, sizeof *m);
    m->id = "resp_test";
    m->model = "m";
    m->created_at = 1700000000;
    m->id_seed = "0123456789abcdef0123456789abcdef";
    char path[1024];
    size_t n;
    snprintf(path, sizeof path, "%s/%s.req.json", dir(), stem);
    *reqtext = slurp(path, &n);
    if (*reqtext) {
        assert_int_equal(sy_jdom_parse(req, *reqtext, n, a, 0), 0);
        m->req = req;
        uint32_t p = sy_jdom_get(req, 0, "previous_response_id");
        if (p && req->n[p].type == 's')
            m->previous_response_id = sy_jdom_str(req, p, a, NULL);
    }
}

/* Compare got with the expected file (or rewrite it). Returns 1 when equal. */
static int compare(const char *expected_name, const struct sy_buf *got)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir(), expected_name);
    const char *up = getenv("SY_GOLDEN_UPDATE");
    if (up && *up == '1') {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fwrite(got->p, 1, got->len, f);
        fputc('\n', f);
        fclose(f);
        return 1;
    }
    size_t n = 0;
    char *want = slurp(path, &n);
    if (!want) {
        print_error("%s: missing\n", path);
        return 0;
    }
    if (n == got->len + 1 && want[n - 1] == '\n')
        n--;
    int ok = n == got->len && !memcmp(want, got->p, n);
    if (!ok) {
        size_t i = 0;
        while (i < n && i < got->len && want[i] == got->p[i])
            i++;
        print_error("%s: differs at byte %zu\n  want: %.80s\n  got:  %.80s\n", path, i, want + i,
                    got->p ? got->p + i : "");
    }
    free(want);
    return ok;
}

static int run_answer(const char *stem)
{
    char path[1024];
    size_t n;
    snprintf(path, sizeof path, "%s/%s.chat.json", dir(), stem);
    char *chat = slurp(path, &n);
    assert_non_null(chat);
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc req;
    struct sy_resp_meta m;
    char *reqtext;
    meta(&m, &req, stem, &a, &reqtext);
    struct sy_buf out;
    sy_buf_init(&out, 1 << 24);
    while (n && (chat[n - 1] == '\n' || chat[n - 1] == ' '))
        n--;
    assert_int_equal(sy_resp_from_openai(chat, n, &m, &a, &out), 0);
    char name[512];
    snprintf(name, sizeof name, "%s.resp.json", stem);
    int ok = compare(name, &out);
    sy_buf_free(&out);
    sy_arena_free(&a);
    free(chat);
    free(reqtext);
    return ok;
}

static int run_stream(const char *stem)
{
    char path[1024];
    size_t n;
    snprintf(path, sizeof path, "%s/%s.sse", dir(), stem);
    char *sse = slurp(path, &n);
    assert_non_null(sse);
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc req;
    struct sy_resp_meta m;
    char *reqtext;
    meta(&m, &req, stem, &a, &reqtext);
    struct sy_buf out;
    sy_buf_init(&out, 1 << 24);
    struct sy_respstream s;
    sy_resp_stream_init(&s, &m);
    /* the payload of every "data: " line */
    for (char *p = sse, *e = sse + n; p < e;) {
        char *nl = memchr(p, '\n', (size_t)(e - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(e - p);
        if (l > 6 && !memcmp(p, "data: ", 6)) {
            int rc = sy_resp_stream_chunk(&s, p + 6, l - 6, &out);
            assert_true(rc == 0 || rc == SY_DONE);
        }
        p += l + 1;
    }
    sy_resp_stream_end(&s, &out);
    char name[512];
    snprintf(name, sizeof name, "%s.events", stem);
    int ok = compare(name, &out);
    sy_resp_stream_free(&s);
    sy_buf_free(&out);
    sy_arena_free(&a);
    free(sse);
    free(reqtext);
    return ok;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a > b && !strcmp(s + a - b, suf);
}

static void golden(void **st)
{
    (void)st;
    DIR *d = opendir(dir());
    assert_non_null(d);
    int nans = 0, nstream = 0, bad = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char stem[512];
        const char *f = e->d_name;
        if (!strncmp(f, "ans_", 4) && ends_with(f, ".chat.json")) {
            snprintf(stem, sizeof stem, "%.*s", (int)(strlen(f) - 10), f);
            bad += !run_answer(stem);
            nans++;
        } else if (!strncmp(f, "stream_", 7) && ends_with(f, ".sse")) {
            snprintf(stem, sizeof stem, "%.*s", (int)(strlen(f) - 4), f);
            bad += !run_stream(stem);
            nstream++;
        }
    }
    closedir(d);
    assert_true(nans >= 4);
    assert_true(nstream >= 4);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(golden)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
