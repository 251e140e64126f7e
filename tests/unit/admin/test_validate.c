/* test_validate.c - the management API's input gate (admin/validate.c):
 * UTF-8, the strict JSON scan, the field table, query and path checks, and
 * the UTF-8-safe escaping of error text (admin/util.c). Plain values in,
 * status and error JSON out; no store.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/validate.h"
#include "core/buf.h"

#define MK "sk-master-1234"

struct res {
    int rc, status;
    struct json_object *j; /* the error body, parsed */
    char text[4096];
};

static void check_req(struct res *r, const char *path, const char *query, const char *body, size_t n)
{
    struct sy_admin_req rq = {path, strlen(path), query, query ? strlen(query) : 0, body, n, MK, strlen(MK), 1.8e9};
    struct sy_buf out;
    sy_buf_init(&out, 1 << 20);
    memset(r, 0, sizeof *r);
    r->rc = sy_admin_check(&rq, &r->status, &out);
    snprintf(r->text, sizeof r->text, "%.*s", (int)out.len, out.p ? out.p : "");
    if (r->rc < 0) {
        /* every refusal is valid JSON */
        r->j = json_tokener_parse(r->text);
        if (!r->j)
            fail_msg("not JSON: %s", r->text);
    }
    sy_buf_free(&out);
}

static void res_free(struct res *r)
{
    if (r->j)
        json_object_put(r->j);
    r->j = NULL;
}

/* The body is refused with 400 and param (NULL: "None"). */
static void want400(const char *path, const char *body, const char *param)
{
    struct res r;
    check_req(&r, path, NULL, body, strlen(body));
    if (r.rc != -1 || r.status != 400)
        fail_msg("%s: want 400, got rc %d status %d: %s", body, r.rc, r.status, r.text);
    struct json_object *e, *p, *t, *c;
    assert_true(json_object_object_get_ex(r.j, "error", &e));
    assert_true(json_object_object_get_ex(e, "param", &p));
    assert_true(json_object_object_get_ex(e, "type", &t));
    assert_true(json_object_object_get_ex(e, "code", &c));
    assert_string_equal(json_object_get_string(t), "bad_request_error");
    assert_string_equal(json_object_get_string(c), "400");
    if (strcmp(json_object_get_string(p), param ? param : "None") != 0)
        fail_msg("%s: param %s, want %s (%s)", body, json_object_get_string(p), param ? param : "None", r.text);
    res_free(&r);
}

/* The body is refused with FastAPI's 422 of the given type. */
static void want422(const char *path, const char *body, const char *type)
{
    struct res r;
    check_req(&r, path, NULL, body, strlen(body));
    if (r.rc != -1 || r.status != 422)
        fail_msg("%s: want 422, got rc %d status %d: %s", body, r.rc, r.status, r.text);
    struct json_object *d, *t;
    assert_true(json_object_object_get_ex(r.j, "detail", &d));
    assert_true(json_object_object_get_ex(json_object_array_get_idx(d, 0), "type", &t));
    if (strcmp(json_object_get_string(t), type) != 0)
        fail_msg("%s: type %s, want %s", body, json_object_get_string(t), type);
    res_free(&r);
}

static void want_ok(const char *path, const char *body)
{
    struct res r;
    check_req(&r, path, NULL, body, strlen(body));
    if (r.rc != 0)
        fail_msg("%s: refused: %d %s", body, r.status, r.text);
    res_free(&r);
}

static void test_utf8(void **state)
{
    (void)state;
    const struct {
        const char *s;
        size_t n, len;
    } t[] = {
        {"a", 1, 1},
        {"\xc3\xa9", 2, 2},         /* é */
        {"\xe2\x82\xac", 3, 3},     /* € */
        {"\xf0\x9f\x9a\x80", 4, 4}, /* U+1F680 */
        {"\xf4\x8f\xbf\xbf", 4, 4}, /* U+10FFFF */
        {"\xc0\xaf", 2, 0},         /* overlong '/' */
        {"\xc1\xbf", 2, 0},         /* overlong */
        {"\xe0\x80\xaf", 3, 0},     /* overlong */
        {"\xf0\x80\x80\xaf", 4, 0}, /* overlong */
        {"\xed\xa0\x80", 3, 0},     /* U+D800 */
        {"\xed\xbf\xbf", 3, 0},     /* U+DFFF */
        {"\xf4\x90\x80\x80", 4, 0}, /* > U+10FFFF */
        {"\xf5\x80\x80\x80", 4, 0},
        {"\xff", 1, 0},
        {"\x80", 1, 0},         /* a continuation byte alone */
        {"\xe2\x82", 2, 0},     /* cut short */
        {"\xe2\x28\xa1", 3, 0}, /* bad continuation */
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        assert_int_equal(sy_utf8_seq((const unsigned char *)t[i].s, t[i].n), t[i].len);
    assert_int_equal(sy_utf8_check("ab\xc3\xa9"
                                   "c",
                                   5),
                     5);
    assert_int_equal(sy_utf8_check("ab\xff"
                                   "c",
                                   4),
                     2);
    assert_int_equal(sy_utf8_check("", 0), 0);
}

static void test_escape(void **state)
{
    (void)state;
    struct sy_buf b;
    sy_buf_init(&b, 1 << 16);
    sy_admin_json_escape(&b, "a\xff\"\xc3\xa9\n\xed\xa0\x80z", 10);
    assert_string_equal(b.p, "a\\ufffd\\\"\xc3\xa9\\n\\ufffd\\ufffd\\ufffdz");
    sy_buf_reset(&b);
    sy_admin_error_body(&b, 404, NULL, "team_id", "Team not found: t\xfe");
    struct json_object *j = json_tokener_parse(b.p);
    assert_non_null(j);
    struct json_object *e, *m;
    assert_true(json_object_object_get_ex(j, "error", &e));
    assert_true(json_object_object_get_ex(e, "message", &m));
    assert_string_equal(json_object_get_string(m), "Team not found: t\xef\xbf\xbd");
    json_object_put(j);
    sy_buf_free(&b);
}

static void test_encoding(void **state)
{
    (void)state;
    want400("/key/generate", "{\"key_alias\":\"a\xff\"}", NULL);
    want400("/user/new", "{\"user_id\":\"\xc0\xaf\"}", NULL);
    want400("/team/new", "{\"team_alias\":\"\xed\xa0\x80\"}", NULL);
    want400("/key/generate", "{\"key\":\"sk-a\\u0000b\"}", "key");
    want400("/user/new", "{\"metadata\":{\"k\\u0000\":1}}", "metadata");
    want400("/user/new", "{\"user_alias\":\"\\ud800\"}", "user_alias");
    want400("/user/new", "{\"user_alias\":\"\\ud800\\u0041\"}", "user_alias");
    want400("/user/new", "{\"user_alias\":\"\\udfff\"}", "user_alias");
    want_ok("/user/new", "{\"user_alias\":\"\\ud83d\\ude80 \xf0\x9f\x9a\x80 \\u00e9\"}");
    /* a raw NUL */
    struct res r;
    check_req(&r, "/team/new", NULL, "{\"team_alias\":\"a\0\"}", 18);
    assert_int_equal(r.rc, -1);
    assert_int_equal(r.status, 400);
    assert_null(strchr(r.text, '\xff'));
    res_free(&r);
}

static void test_syntax(void **state)
{
    (void)state;
    want_ok("/key/generate", "");
    want_ok("/key/generate", "  \n ");
    want_ok("/key/generate", "{}");
    want_ok("/key/generate", "[1,2]"); /* not an object: the handler's own 422 */
    want_ok("/key/generate", "{\"metadata\":{\"a\":[1,-2.5e3,true,false,null,\"x\\n\\\"\\/\"]}}");
    want422("/key/generate", "{", "json_invalid");
    want422("/key/generate", "{\"a\":1,}", "json_invalid");
    want422("/key/generate", "{'a':1}", "json_invalid");
    want422("/key/generate", "{\"a\":1 // c\n}", "json_invalid");
    want422("/key/generate", "{\"a\":01}", "json_invalid");
    want422("/key/generate", "{\"a\":1.}", "json_invalid");
    want422("/key/generate", "{\"a\":\"x\ty\"}", "json_invalid");
    want422("/key/generate", "{\"a\":\"\\x\"}", "json_invalid");
    want422("/key/generate", "{\"a\":1} x", "json_invalid");
    want422("/key/generate", "{\"a\":tru}", "json_invalid");
    want400("/key/generate", "{\"max_budget\":NaN}", "max_budget");
    want400("/key/generate", "{\"max_budget\":-Infinity}", "max_budget");
    want400("/key/generate", "{\"max_budget\":nan}", "max_budget");
    want400("/key/generate", "{\"max_budget\":1e999}", "max_budget");
    want400("/key/generate", "{\"max_budget\":-1e400}", "max_budget");
    want400("/key/generate", "{\"rpm_limit\":9223372036854775808}", "rpm_limit");
    want400("/key/generate", "{\"metadata\":{\"a\":[-9223372036854775809]}}", "metadata");
    want_ok("/key/generate", "{\"metadata\":{\"a\":[-9223372036854775808, 1e-400]}}");
    /* depth: 64 levels pass, 65 do not */
    char deep[400];
    int d = 0;
    for (int i = 0; i < 64; i++)
        deep[d++] = '[';
    for (int i = 0; i < 64; i++)
        deep[d++] = ']';
    deep[d] = 0;
    want_ok("/key/generate", deep);
    memmove(deep + 1, deep, strlen(deep) + 1);
    deep[0] = '[';
    strcat(deep, "]");
    want400("/key/generate", deep, NULL);
}

static void test_duplicates(void **state)
{
    (void)state;
    want400("/key/generate", "{\"models\":[],\"models\":[]}", "models");
    want400("/key/generate", "{\"models\":[],\"m\\u006fdels\":[]}", "models");
    want400("/key/generate", "{\"metadata\":{\"x\":1,\"\\u0078\":2}}", "metadata");
    want400("/key/generate", "{\"a\":[{\"b\":1,\"c\":2,\"b\":3}]}", "a");
    want_ok("/key/generate", "{\"a\":{\"b\":1},\"b\":{\"a\":1},\"ab\":1,\"ba\":1}");
    /* an escaped name is the field it spells: typed as that field */
    want422("/key/generate", "{\"m\\u006fdels\":\"x\"}", "list_type");
    want400("/key/generate", "{\"rpm\\u005flimit\":-1}", "rpm_limit");
}

static void test_fields(void **state)
{
    (void)state;
    want400("/key/generate", "{\"rpm_limit\":-1}", "rpm_limit");
    want400("/team/new", "{\"tpm_limit\":\"-1\"}", "tpm_limit");
    want400("/user/new", "{\"max_parallel_requests\":2147483648}", "max_parallel_requests");
    want400("/user/new", "{\"max_parallel_requests\":3e9}", "max_parallel_requests");
    want_ok("/user/new", "{\"max_parallel_requests\":2147483647,\"rpm_limit\":0,\"tpm_limit\":\"12\"}");
    want_ok("/user/new", "{\"rpm_limit\":9223372036854775807,\"max_budget\":\"2.5\",\"rpm_limit_type\":null}");
    want_ok("/user/new", "{\"rpm_limit\":null,\"max_budget\":null,\"user_id\":null,\"models\":null}");
    want400("/budget/new", "{\"max_budget\":-0.01}", "max_budget");
    want400("/budget/new", "{\"soft_budget\":\"-3\"}", "soft_budget");
    want400("/budget/new", "{\"max_budget\":\"inf\"}", "max_budget");
    want400("/user/update", "{\"spend\":-1}", "spend");
    want400("/key/generate", "{\"model_rpm_limit\":{\"m\":-1}}", "model_rpm_limit");
    want400("/key/generate", "{\"metadata\":{\"model_tpm_limit\":{\"m\":-1}}}", "model_tpm_limit");
    want400("/user/new", "{\"model_max_budget\":{\"m\":{\"budget_limit\":-1}}}", "model_max_budget");
    want_ok("/user/new", "{\"model_max_budget\":{\"m\":{\"budget_limit\":1,\"time_period\":\"1d\"}}}");
    want400("/key/generate", "{\"duration\":\"10y\"}", "duration");
    want400("/key/generate", "{\"budget_duration\":\"-1\"}", "budget_duration");
    want_ok("/key/generate", "{\"duration\":\"-1\",\"budget_duration\":\"1mo\",\"rotation_interval\":\"\"}");
    want400("/key/generate", "{\"duration\":\"99999999w\"}", "duration");
    want400("/key/generate", "{\"budget_duration\":\"99999999mo\"}", "budget_duration");
    want400("/team/new", "{\"team_member_budget_duration\":\"99999999d\"}", "team_member_budget_duration");
    want_ok("/key/generate", "{\"duration\":\"99999999s\",\"budget_duration\":\"9999mo\"}");
    want422("/key/generate", "{\"rpm_limit\":\"x\"}", "int_parsing");
    want422("/key/generate", "{\"rpm_limit\":[]}", "int_type");
    want422("/key/generate", "{\"rpm_limit\":2.5}", "int_from_float");
    want422("/key/generate", "{\"max_budget\":{}}", "float_type");
    want422("/key/generate", "{\"max_budget\":\"lots\"}", "float_parsing");
    want422("/key/generate", "{\"key_alias\":1}", "string_type");
    want422("/key/generate", "{\"models\":\"a\"}", "list_type");
    want422("/key/generate", "{\"models\":[\"a\",{}]}", "string_type");
    want422("/key/generate", "{\"metadata\":\"x\"}", "dict_type");
    want422("/key/generate", "{\"model_tpm_limit\":[1]}", "dict_type");
}

static void test_lengths(void **state)
{
    (void)state;
    char body[1024], id[300];
    memset(id, 'x', sizeof id);
    id[127] = 0;
    snprintf(body, sizeof body, "{\"key_alias\":\"%s\"}", id);
    want_ok("/key/generate", body);
    id[127] = 'x';
    id[128] = 0;
    static const char *const F[] = {
        "key_alias",          "user_id",    "team_id", "organization_id", "budget_id", "team_alias",
        "organization_alias", "user_alias", "key",     "new_key"};
    for (size_t i = 0; i < sizeof F / sizeof F[0]; i++) {
        snprintf(body, sizeof body, "{\"%s\":\"%s\"}", F[i], id);
        want400("/x", body, F[i]);
    }
    snprintf(body, sizeof body, "{\"keys\":[\"a\",\"%s\"]}", id);
    want400("/key/delete", body, "keys");
    snprintf(body, sizeof body, "{\"team_id\":\"t\",\"member\":[{\"role\":\"user\",\"user_id\":\"%s\"}]}", id);
    want400("/team/member_add", body, "user_id");
    snprintf(body, sizeof body, "{\"members_with_roles\":[{\"role\":\"user\",\"user_email\":\"%s%s\"}]}", id, id);
    want400("/team/new", body, "user_email");
    /* a 127-byte id of two-byte characters is 63 of them */
    char e[300] = "{\"user_id\":\"";
    for (int i = 0; i < 64; i++)
        strcat(e, "\xc3\xa9");
    strcat(e, "\"}");
    want400("/user/new", e, "user_id");
}

static void test_master_key(void **state)
{
    (void)state;
    want400("/key/generate", "{\"key\":\"" MK "\"}", "key");
    want400("/key/regenerate", "{\"key\":\"sk-x\",\"new_key\":\"" MK "\"}", "new_key");
    want400("/key/sk-x/regenerate", "{\"new_key\":\"" MK "\"}", "new_key");
    want_ok("/key/generate", "{\"key\":\"sk-master-12345\"}");
    want_ok("/key/info", "{\"key\":\"" MK "\"}"); /* naming the master key elsewhere is the handler's business */
    /* a key that is neither sk-... nor a hash, longer than a hash: the handlers would cut it to one */
    char body[300], hash[70];
    memset(hash, 'a', 64);
    hash[64] = 0;
    snprintf(body, sizeof body, "{\"key\":\"%s\"}", hash);
    want_ok("/key/update", body);
    want_ok("/key/regenerate", body);
    snprintf(body, sizeof body, "{\"key\":\"%sb\"}", hash);
    want400("/key/update", body, "key");
    want400("/key/block", body, "key");
    want400("/key/regenerate", body, "key");
    want422("/key/generate", "{\"key\":7}", "string_type");
    want_ok("/key/generate",
            "{\"key\":\"not-sk-but-the-handler-says-so-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}");
    char path[300];
    snprintf(path, sizeof path, "/key/%s/regenerate", hash);
    want_ok(path, "{}");
    snprintf(path, sizeof path, "/key/%sb/regenerate", hash);
    want400(path, "{}", "key");
    want_ok("/key/regenerate", "{\"key\":\"sk-x\"}");
}

static void test_query_path(void **state)
{
    (void)state;
    struct res r;
    check_req(&r, "/user/info", "user_id=%FF", NULL, 0);
    assert_int_equal(r.status, 400);
    res_free(&r);
    check_req(&r, "/user/info", "user_id=a%00b", NULL, 0);
    assert_int_equal(r.status, 400);
    res_free(&r);
    check_req(&r, "/user/info", "user_id=%C3%A9&page=1", NULL, 0);
    assert_int_equal(r.rc, 0);
    res_free(&r);
    char q[5000];
    snprintf(q, sizeof q, "team_id=%0128d", 0);
    check_req(&r, "/team/info", q, NULL, 0);
    assert_int_equal(r.status, 400);
    res_free(&r);
    snprintf(q, sizeof q, "sort_by=%0511d", 0);
    check_req(&r, "/key/list", q, NULL, 0);
    assert_int_equal(r.rc, 0);
    res_free(&r);
    snprintf(q, sizeof q, "sort_by=%0512d", 0);
    check_req(&r, "/key/list", q, NULL, 0);
    assert_int_equal(r.status, 400);
    res_free(&r);
    snprintf(q, sizeof q, "user_ids=%04000d", 0);
    check_req(&r, "/user/list", q, NULL, 0);
    assert_int_equal(r.rc, 0);
    res_free(&r);
    check_req(&r, "/key/sk-%FF/regenerate", NULL, "{}", 2);
    assert_int_equal(r.status, 400);
    res_free(&r);
    check_req(&r, "/key/sk-%E2%82%AC/regenerate", "", "", 0);
    assert_int_equal(r.rc, 0);
    res_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_utf8),    cmocka_unit_test(test_escape),     cmocka_unit_test(test_encoding),
        cmocka_unit_test(test_syntax),  cmocka_unit_test(test_duplicates), cmocka_unit_test(test_fields),
        cmocka_unit_test(test_lengths), cmocka_unit_test(test_master_key), cmocka_unit_test(test_query_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
