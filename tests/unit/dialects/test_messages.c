/* test_messages.c - the Anthropic Messages ingress translation
 * (src/dialects/messages.c) against golden files, plus the error mapping and
 * the stream's return codes.
 *
 * Golden layout (GOLDEN_DIR/messages/):
 *
 *   dir     input                       expected                 call
 *   req/    NAME.json (Anthropic req)   NAME.out.json            sy_msg_to_openai
 *                                       or NAME.err ("400 msg")
 *   resp/   NAME.json (chat.completion) NAME.out.json            sy_msg_from_openai(model "claude-test",
 *           [NAME.req.json: the                                   msg_id "msg_test" unless the name
 *            Anthropic request]                                   starts with "upstream-": NULLs)
 *   stream/ NAME.txt, one data payload  NAME.out.txt             sy_msg_stream_chunk per line,
 *           a line (blank lines and                               sy_msg_stream_end at the end
 *           lines starting "#" skipped) (the event text)
 *           [NAME.req.json]
 *
 * Every expected file is the output followed by one newline. Every JSON the
 * translation writes is also checked with json-c, and every stream's event
 * order with the same rules the fuzz harness applies. With SY_GOLDEN_UPDATE=1
 * in the environment the expected files are (re)written instead of compared.
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
#include <json-c/json.h>

#include "core/errors.h"
#include "dialects/messages.h"

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

static void spit(const char *path, const char *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    fclose(f);
}

/* got + "\n" against the file (or written to it when updating). */
static void expect_file(const char *path, const char *got, size_t n)
{
    if (update) {
        char *t = malloc(n + 1);
        memcpy(t, got, n);
        t[n] = '\n';
        spit(path, t, n + 1);
        free(t);
        return;
    }
    size_t en;
    char *exp = slurp(path, &en);
    if (!exp)
        fail_msg("missing %s", path);
    if (en != n + 1 || memcmp(exp, got, n) || exp[n] != '\n') {
        fprintf(stderr, "--- %s\n--- expected\n%s--- got\n%.*s\n", path, exp, (int)n, got);
        fail_msg("%s differs", path);
    }
    free(exp);
}

static void check_json(const char *p, size_t n)
{
    json_tokener *t = json_tokener_new();
    json_object *o = json_tokener_parse_ex(t, p, (int)n);
    if (json_tokener_get_error(t) != json_tokener_success || json_tokener_get_parse_end(t) != n ||
        !json_object_is_type(o, json_type_object))
        fail_msg("not a JSON object: %.*s", (int)n, p);
    json_object_put(o);
    json_tokener_free(t);
}

/* The event order an Anthropic SDK accepts (MessageStream's accumulator):
 * message_start first; blocks started at the next index, one at a time, deltas
 * of the block's own kind, stopped once; message_delta then message_stop last;
 * an error event ends everything. Also every data line is a JSON object whose
 * type is the event's name. */
static void check_events(const char *p, size_t n)
{
    enum { START, BODY, DELTA, STOPPED } st = START;
    int open = -1, next = 0;
    char kind[32] = "";
    size_t i = 0;
    while (i < n) {
        assert_true(n - i > 7 && !memcmp(p + i, "event: ", 7));
        const char *ev = p + i + 7, *nl = memchr(ev, '\n', n - (size_t)(ev - p));
        assert_non_null(nl);
        size_t el = (size_t)(nl - ev);
        const char *dp = nl + 1;
        assert_true(!memcmp(dp, "data: ", 6));
        dp += 6;
        const char *end = strstr(dp, "\n\n");
        assert_non_null(end);
        check_json(dp, (size_t)(end - dp));
        json_object *o = json_tokener_parse(dp), *v;
        assert_true(json_object_object_get_ex(o, "type", &v));
        assert_int_equal(strlen(json_object_get_string(v)), el);
        assert_memory_equal(json_object_get_string(v), ev, el);
        char name[40];
        snprintf(name, sizeof name, "%.*s", (int)el, ev);
        assert_true(st != STOPPED);
        if (!strcmp(name, "error")) {
            st = STOPPED;
        } else if (!strcmp(name, "message_start")) {
            assert_int_equal(st, START);
            st = BODY;
        } else if (!strcmp(name, "content_block_start")) {
            assert_int_equal(st, BODY);
            assert_int_equal(open, -1);
            assert_true(json_object_object_get_ex(o, "index", &v));
            assert_int_equal(json_object_get_int(v), next);
            open = next++;
            json_object *cb, *t;
            assert_true(json_object_object_get_ex(o, "content_block", &cb));
            assert_true(json_object_object_get_ex(cb, "type", &t));
            snprintf(kind, sizeof kind, "%s", json_object_get_string(t));
        } else if (!strcmp(name, "content_block_delta")) {
            assert_int_not_equal(open, -1);
            assert_true(json_object_object_get_ex(o, "index", &v));
            assert_int_equal(json_object_get_int(v), open);
            json_object *dl, *t;
            assert_true(json_object_object_get_ex(o, "delta", &dl));
            assert_true(json_object_object_get_ex(dl, "type", &t));
            const char *dt = json_object_get_string(t);
            if (!strcmp(kind, "text"))
                assert_string_equal(dt, "text_delta");
            else if (!strcmp(kind, "tool_use"))
                assert_string_equal(dt, "input_json_delta");
            else
                assert_true(!strcmp(dt, "thinking_delta") || !strcmp(dt, "signature_delta"));
        } else if (!strcmp(name, "content_block_stop")) {
            assert_int_not_equal(open, -1);
            assert_true(json_object_object_get_ex(o, "index", &v));
            assert_int_equal(json_object_get_int(v), open);
            open = -1;
        } else if (!strcmp(name, "message_delta")) {
            assert_int_equal(st, BODY);
            assert_int_equal(open, -1);
            st = DELTA;
        } else if (!strcmp(name, "message_stop")) {
            assert_int_equal(st, DELTA);
            st = STOPPED;
        } else {
            fail_msg("unexpected event %s", name);
        }
        json_object_put(o);
        i = (size_t)(end - p) + 2;
    }
    assert_int_equal(st, STOPPED);
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

/* Names NAME of dir's inputs (files ending in ext but not in .out/.req variants). */
static size_t list(const char *dir, const char *ext, char names[][128], size_t max)
{
    DIR *dp = opendir(dir);
    assert_non_null(dp);
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(dp)) && n < max) {
        if (!ends_with(de->d_name, ext) || ends_with(de->d_name, ".out.json") || ends_with(de->d_name, ".req.json"))
            continue;
        snprintf(names[n], 128, "%.*s", (int)(strlen(de->d_name) - strlen(ext)), de->d_name);
        n++;
    }
    closedir(dp);
    assert_true(n > 0);
    return n;
}

/* Parses dir/NAME.req.json into d when present (1), with the text in *txt. */
static int load_req(const char *dir, const char *name, struct sy_jdoc *d, struct sy_arena *a, char **txt)
{
    char path[512];
    size_t n;
    snprintf(path, sizeof path, "%s/%s.req.json", dir, name);
    *txt = slurp(path, &n);
    if (!*txt)
        return 0;
    assert_int_equal(sy_jdom_parse(d, *txt, n, a, 0), 0);
    return 1;
}

static void golden_requests(void **state)
{
    static char names[128][128];
    const char *dir = GOLDEN_DIR "/messages/req";
    size_t n = list(dir, ".json", names, 128);
    for (size_t k = 0; k < n; k++) {
        char path[512];
        size_t len;
        snprintf(path, sizeof path, "%s/%s.json", dir, names[k]);
        char *in = slurp(path, &len);
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_jdoc d;
        assert_int_equal(sy_jdom_parse(&d, in, len, &a, 0), 0);
        struct sy_buf out;
        sy_buf_init(&out, 1 << 20);
        struct sy_xerr e = {0};
        int rc = sy_msg_to_openai(&d, &a, &out, &e);
        if (rc == 0) {
            check_json(out.p, out.len);
            snprintf(path, sizeof path, "%s/%s.out.json", dir, names[k]);
            expect_file(path, out.p, out.len);
        } else {
            assert_int_equal(rc, SY_EINVAL);
            assert_int_equal(out.len, 0);
            assert_string_equal(e.type, "invalid_request_error");
            char msg[1200];
            int ml = snprintf(msg, sizeof msg, "%d %s", e.status, e.message);
            snprintf(path, sizeof path, "%s/%s.err", dir, names[k]);
            expect_file(path, msg, (size_t)ml);
        }
        sy_buf_free(&out);
        sy_arena_free(&a);
        free(in);
    }
}

static void golden_responses(void **state)
{
    static char names[128][128];
    const char *dir = GOLDEN_DIR "/messages/resp";
    size_t n = list(dir, ".json", names, 128);
    for (size_t k = 0; k < n; k++) {
        char path[512], *reqtxt;
        size_t len;
        snprintf(path, sizeof path, "%s/%s.json", dir, names[k]);
        char *in = slurp(path, &len);
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_jdoc req;
        int have_req = load_req(dir, names[k], &req, &a, &reqtxt);
        int up = !strncmp(names[k], "upstream-", 9);
        struct sy_buf out;
        sy_buf_init(&out, 1 << 20);
        assert_int_equal(sy_msg_from_openai(in, len, up ? NULL : "claude-test", up ? NULL : "msg_test",
                                            have_req ? &req : NULL, &a, &out),
                         0);
        check_json(out.p, out.len);
        snprintf(path, sizeof path, "%s/%s.out.json", dir, names[k]);
        expect_file(path, out.p, out.len);
        sy_buf_free(&out);
        sy_arena_free(&a);
        free(in);
        free(reqtxt);
    }
}

static void golden_streams(void **state)
{
    static char names[128][128];
    const char *dir = GOLDEN_DIR "/messages/stream";
    size_t n = list(dir, ".txt", names, 128);
    for (size_t k = 0; k < n; k++) {
        if (ends_with(names[k], ".out"))
            continue;
        char path[512], *reqtxt;
        size_t len;
        snprintf(path, sizeof path, "%s/%s.txt", dir, names[k]);
        char *in = slurp(path, &len);
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_jdoc req;
        int have_req = load_req(dir, names[k], &req, &a, &reqtxt);
        struct sy_msgstream s;
        sy_msg_stream_init(&s, "claude-test", "msg_test", have_req ? &req : NULL);
        struct sy_buf out;
        sy_buf_init(&out, 1 << 20);
        int done = 0;
        for (char *p = in, *e = in + len; p < e;) {
            char *nl = memchr(p, '\n', (size_t)(e - p));
            size_t l = nl ? (size_t)(nl - p) : (size_t)(e - p);
            if (l && *p != '#') {
                int rc = sy_msg_stream_chunk(&s, p, l, &out);
                assert_true(rc == 0 || rc == SY_DONE);
                if (done)
                    assert_int_equal(rc, SY_DONE); /* nothing after the end */
                done |= rc == SY_DONE;
            }
            p += l + 1;
        }
        size_t before = out.len;
        sy_msg_stream_end(&s, &out);
        if (done)
            assert_int_equal(out.len, before);
        check_events(out.p, out.len);
        snprintf(path, sizeof path, "%s/%s.out.txt", dir, names[k]);
        expect_file(path, out.p, out.len);
        sy_buf_free(&out);
        sy_arena_free(&a);
        free(in);
        free(reqtxt);
    }
}

static void error_types(void **state)
{
    static const struct {
        int status;
        const char *type;
    } t[] = {{400, "invalid_request_error"},
             {401, "authentication_error"},
             {402, "billing_error"},
             {403, "permission_error"},
             {404, "not_found_error"},
             {413, "request_too_large"},
             {429, "rate_limit_error"},
             {500, "api_error"},
             {502, "api_error"},
             {504, "timeout_error"},
             {529, "overloaded_error"},
             {418, "api_error"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        assert_string_equal(sy_msg_error_type(t[i].status), t[i].type);
    struct sy_buf b;
    sy_buf_init(&b, 4096);
    sy_msg_error_json(429, "slow \"down\"", 11, &b);
    assert_string_equal(
        b.p, "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow \\\"down\\\"\"}}");
    sy_buf_reset(&b);
    const char *oe =
        "{\"error\":{\"message\":\"No deployments available\",\"type\":\"None\",\"param\":null,\"code\":\"429\"}}";
    sy_msg_error_from_openai(0, oe, strlen(oe), &b);
    assert_string_equal(
        b.p, "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"No deployments available\"}}");
    sy_buf_reset(&b);
    sy_msg_error_from_openai(401, oe, strlen(oe), &b); /* the status given wins */
    assert_string_equal(
        b.p,
        "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"No deployments available\"}}");
    sy_buf_reset(&b);
    sy_msg_error_from_openai(502, "<html>bad gateway</html>", 24, &b);
    assert_string_equal(
        b.p, "{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"<html>bad gateway</html>\"}}");
    sy_buf_reset(&b);
    const char *te = "{\"error\":{\"message\":\"busy\",\"type\":\"overloaded_error\"}}";
    sy_msg_error_from_openai(0, te, strlen(te), &b);
    assert_string_equal(b.p, "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"busy\"}}");
    sy_buf_free(&b);
}

/* Return codes: SY_DONE at the end, bad payloads refused without output,
 * sy_msg_stream_error once, nothing after it. */
static void stream_codes(void **state)
{
    struct sy_msgstream s;
    struct sy_buf b;
    sy_buf_init(&b, 1 << 16);
    sy_msg_stream_init(&s, "m", "msg_1", NULL);
    assert_int_equal(sy_msg_stream_chunk(&s, "{not json", 9, &b), SY_EJSON);
    assert_int_equal(b.len, 0);
    assert_int_equal(sy_msg_stream_chunk(&s, "[1,2]", 5, &b), SY_EUPPROTO);
    assert_int_equal(b.len, 0);
    const char *c = "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}";
    assert_int_equal(sy_msg_stream_chunk(&s, c, strlen(c), &b), 0);
    sy_msg_stream_error(&s, 529, "overloaded", 10, &b);
    size_t l = b.len;
    sy_msg_stream_error(&s, 500, "again", 5, &b);
    sy_msg_stream_end(&s, &b);
    assert_int_equal(sy_msg_stream_chunk(&s, "[DONE]", 6, &b), SY_DONE);
    assert_int_equal(b.len, l);
    check_events(b.p, b.len);
    assert_non_null(strstr(b.p, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\""));
    sy_buf_reset(&b);

    /* a stream with nothing at all still makes a whole message */
    sy_msg_stream_init(&s, "m", "msg_2", NULL);
    sy_msg_stream_end(&s, &b);
    check_events(b.p, b.len);
    sy_buf_reset(&b);

    /* a cap too small: SY_ENOSPC, never a crash */
    struct sy_buf small;
    sy_buf_init(&small, 64);
    sy_msg_stream_init(&s, "m", "msg_3", NULL);
    assert_int_equal(sy_msg_stream_chunk(&s, c, strlen(c), &small), SY_ENOSPC);
    sy_buf_free(&small);
    sy_buf_free(&b);
}

/* A tool name over 64 characters goes out truncated and comes back whole,
 * in a response and in a stream. */
static void long_tool_name(void **state)
{
    const char *long_name = "mcp__a_very_long_server_name_for_testing__and_an_even_longer_tool_name_here";
    char req[1024];
    snprintf(req, sizeof req,
             "{\"model\":\"m\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
             "\"tools\":[{\"name\":\"%s\",\"input_schema\":{\"type\":\"object\"}}]}",
             long_name);
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    assert_int_equal(sy_jdom_parse(&d, req, strlen(req), &a, 0), 0);
    struct sy_buf out;
    sy_buf_init(&out, 1 << 16);
    struct sy_xerr e;
    assert_int_equal(sy_msg_to_openai(&d, &a, &out, &e), 0);
    json_object *o = json_tokener_parse(out.p), *tools, *fn, *name;
    assert_true(json_object_object_get_ex(o, "tools", &tools));
    assert_true(json_object_object_get_ex(json_object_array_get_idx(tools, 0), "function", &fn));
    assert_true(json_object_object_get_ex(fn, "name", &name));
    const char *tn = json_object_get_string(name);
    assert_int_equal(strlen(tn), 64);
    assert_memory_equal(tn, long_name, 55);
    assert_int_equal(tn[55], '_');

    char resp[1024];
    snprintf(resp, sizeof resp,
             "{\"id\":\"x\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null,"
             "\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"%s\","
             "\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}",
             tn);
    sy_buf_reset(&out);
    assert_int_equal(sy_msg_from_openai(resp, strlen(resp), "m", "msg_x", &d, &a, &out), 0);
    assert_non_null(strstr(out.p, long_name));
    sy_buf_reset(&out);
    assert_int_equal(sy_msg_from_openai(resp, strlen(resp), "m", "msg_x", NULL, &a, &out), 0);
    assert_null(strstr(out.p, long_name)); /* no request: kept as sent */

    struct sy_msgstream s;
    sy_msg_stream_init(&s, "m", "msg_y", &d);
    char chunk[1024];
    snprintf(chunk, sizeof chunk,
             "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":"
             "\"function\",\"function\":{\"name\":\"%s\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}",
             tn);
    sy_buf_reset(&out);
    assert_int_equal(sy_msg_stream_chunk(&s, chunk, strlen(chunk), &out), 0);
    assert_non_null(strstr(out.p, long_name));
    json_object_put(o);
    sy_buf_free(&out);
    sy_arena_free(&a);
}

int main(void)
{
    update = getenv("SY_GOLDEN_UPDATE") && *getenv("SY_GOLDEN_UPDATE") == '1';
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(golden_requests), cmocka_unit_test(golden_responses), cmocka_unit_test(golden_streams),
        cmocka_unit_test(error_types),     cmocka_unit_test(stream_codes),     cmocka_unit_test(long_tool_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
