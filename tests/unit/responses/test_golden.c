/* test_golden.c - byte-for-byte golden files for the response side of the
 * Responses translation (responses/answer.c, stream.c), in $SY_GOLDEN_DIR:
 *
 *   ans_<name>.chat.json    a chat.completion  -> ans_<name>.resp.json, the response object
 *   stream_<name>.sse       "data: <chunk>\n\n" payloads (and [DONE])
 *                                               -> stream_<name>.events, the Responses events
 *   <same stem>.req.json    optional: the Responses request echoed (meta req)
 *
 * Fixed meta: id "resp_test", model "m", created_at 1700000000, id_seed
 * "0123456789abcdef0123456789abcdef". The cases run through the unit tests'
 * golden harness (tests/unit/lib/golden.h: expected files are the output and
 * one newline; SY_GOLDEN_UPDATE=1 rewrites them - read them before
 * committing). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "golden.h"
#include "responses/responses.h"

static const char *dir(void)
{
    const char *d = getenv("SY_GOLDEN_DIR");
    return d ? d : "golden";
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
    *reqtext = sy_golden_read(path, &n);
    if (*reqtext) {
        assert_int_equal(sy_jdom_parse(req, *reqtext, n, a, 0), 0);
        m->req = req;
        uint32_t p = sy_jdom_get(req, 0, "previous_response_id");
        if (p && req->n[p].type == 's')
            m->previous_response_id = sy_jdom_str(req, p, a, NULL);
    }
}

/* ans_<name>.chat.json: the chat.completion as a Responses object. */
static int run_answer(void *ud, const char *d, const char *stem, const char *chat, size_t n, struct sy_buf *out)
{
    (void)ud;
    (void)d;
    if (strncmp(stem, "ans_", 4))
        return SY_GOLDEN_SKIP; /* the request tests' expected files */
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc req;
    struct sy_resp_meta m;
    char *reqtext;
    meta(&m, &req, stem, &a, &reqtext);
    while (n && (chat[n - 1] == '\n' || chat[n - 1] == ' '))
        n--;
    int rc = sy_resp_from_openai(chat, n, &m, &a, out);
    sy_arena_free(&a);
    free(reqtext);
    return rc;
}

/* stream_<name>.sse: the payload of every "data: " line as the Responses events. */
static int run_stream(void *ud, const char *d, const char *stem, const char *sse, size_t n, struct sy_buf *out)
{
    (void)ud;
    (void)d;
    if (strncmp(stem, "stream_", 7))
        return SY_GOLDEN_SKIP;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc req;
    struct sy_resp_meta m;
    char *reqtext;
    meta(&m, &req, stem, &a, &reqtext);
    struct sy_respstream s;
    sy_resp_stream_init(&s, &m);
    for (const char *p = sse, *e = sse + n; p < e;) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(e - p);
        if (l > 6 && !memcmp(p, "data: ", 6)) {
            int rc = sy_resp_stream_chunk(&s, p + 6, l - 6, out);
            assert_true(rc == 0 || rc == SY_DONE);
        }
        p += l + 1;
    }
    sy_resp_stream_end(&s, out);
    sy_resp_stream_free(&s);
    sy_arena_free(&a);
    free(reqtext);
    return 0;
}

static void golden(void **st)
{
    (void)st;
    int nans = 0, nstream = 0;
    assert_int_equal(sy_golden_run(dir(), ".chat.json", ".resp.json", run_answer, NULL, &nans), 0);
    assert_int_equal(sy_golden_run(dir(), ".sse", ".events", run_stream, NULL, &nstream), 0);
    assert_true(nans >= 4);
    assert_true(nstream >= 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(golden)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
