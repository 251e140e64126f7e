/* test_credentials.c - admin/credentials.c against a real SQLite database
 * made by sy_store_migrate:
 *
 *   - sy_credentials_load (what the models registry calls): every row, each
 *     string decrypted under the salt key; null under another key or none;
 *     values LiteLLM wrote in its v3:gcm form (a vector made with
 *     tests/integration/fixtures/litellm_encrypt.py) read too;
 *   - the answers' masking, as LiteLLM's _get_masked_values: multi-byte
 *     characters counted as characters, nested objects, non-strings kept;
 *   - no salt key: nothing stored (400); the "models:credentials"
 *     invalidation on each change.
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
#include <unistd.h>

#include <http_parser.h>

#include "admin/admin.h"
#include "admin/credentials.h"
#include "core/secret.h"
#include "router/table.h"
#include "store/store.h"

#define MASTER "sk-1234-salt" /* the salt of the vector below */

static char db_path[256];
static struct sy_table g_table;

struct call {
    struct sy_admin_ctx a;
    struct json_object *j;
};

static void call_free(struct call *c)
{
    for (int i = 0; i < c->a.ninval; i++)
        free(c->a.inval[i]);
    sy_buf_free(&c->a.out);
    json_object_put(c->j);
    memset(c, 0, sizeof *c);
}

static void do_call(struct sy_store *st, struct call *c, const char *master, int method, const char *path,
                    const char *body)
{
    memset(c, 0, sizeof *c);
    int known = 0;
    const struct sy_admin_route *rt = sy_admin_match(method, path, strlen(path), &known);
    if (!rt)
        fail_msg("no route %d %s", method, path);
    c->a.method = method;
    c->a.path = path;
    c->a.query = "";
    c->a.body = body ? body : "";
    c->a.body_len = strlen(c->a.body);
    c->a.is_admin = c->a.is_master = 1;
    c->a.now = 1800000000.0;
    c->a.table = &g_table;
    c->a.master_key = master;
    c->a.master_key_len = master ? strlen(master) : 0;
    c->a.status = 200;
    sy_buf_init(&c->a.out, 1 << 22);
    rt->fn(st, &c->a);
    c->j = json_tokener_parse(c->a.out.p ? c->a.out.p : "");
    if (!c->j)
        fail_msg("answer is not JSON: %s", c->a.out.p ? c->a.out.p : "(none)");
}

static void expect(struct call *c, int status)
{
    if (c->a.status != status)
        fail_msg("status %d, want %d: %s", c->a.status, status, c->a.out.p);
}

static const char *member(struct json_object *o, const char *k)
{
    struct json_object *v = NULL;
    if (!o || !json_object_object_get_ex(o, k, &v))
        return "(absent)";
    return v ? json_object_get_string(v) : "(null)";
}

static int setup(void **state)
{
    snprintf(db_path, sizeof db_path, "%s/sy-test-admin-cred-%d.db", P_tmpdir, (int)getpid());
    unlink(db_path);
    unsetenv("LITELLM_SALT_KEY");
    struct sy_store_conf conf = {.url = db_path};
    char err[256];
    struct sy_store *st = sy_store_open(&conf, err, sizeof err);
    if (!st)
        fail_msg("open: %s", err);
    if (sy_store_migrate(st) < 0)
        fail_msg("migrate: %s", sy_store_errmsg(st));
    memset(&g_table, 0, sizeof g_table);
    *state = st;
    return 0;
}

static int teardown(void **state)
{
    sy_store_close(*state);
    unlink(db_path);
    return 0;
}

static void test_load(void **state)
{
    struct sy_store *st = *state;
    struct call c;
    do_call(st, &c, MASTER, HTTP_POST, "/credentials",
            "{\"credential_name\":\"a\",\"credential_values\":{\"api_key\":\"sk-a-secret\",\"api_base\":\"https://a\","
            "\"n\":3,\"nested\":{\"x\":1}},\"credential_info\":{}}");
    expect(&c, 200);
    assert_int_equal(c.a.ninval, 1);
    assert_string_equal(c.a.inval[0], "models:credentials");
    call_free(&c);
    /* a row LiteLLM wrote: v3:gcm of "sk-upstream-123" under MASTER */
    struct sy_sval p[] = {
        sy_sv_text("id-b"), sy_sv_text("b"),
        sy_sv_json("{\"api_key\":\"v3:gcm:oKGio6Slpqeoqaqrm35kfkqeA7zquUWU5ufCNuRXjZuJYR2m49syKCNi4A==\","
                   "\"plain\":\"not-encrypted\"}")};
    assert_int_equal(sy_store_exec(st,
                                   "INSERT INTO \"LiteLLM_CredentialsTable\" (credential_id, credential_name, "
                                   "credential_values, credential_info, created_by, updated_by) VALUES ($1, $2, $3, "
                                   "'{}', 'x', 'x')",
                                   3, p, NULL, NULL),
                     1);

    struct json_object *all = NULL;
    assert_int_equal(sy_credentials_load(st, MASTER, &all), 0);
    assert_int_equal(json_object_object_length(all), 2);
    struct json_object *a = json_object_object_get(all, "a"), *b = json_object_object_get(all, "b");
    assert_string_equal(member(a, "api_key"), "sk-a-secret");
    assert_string_equal(member(a, "api_base"), "https://a");
    assert_string_equal(member(a, "n"), "3");
    assert_true(json_object_is_type(json_object_object_get(a, "nested"), json_type_object));
    assert_string_equal(member(b, "api_key"), "sk-upstream-123");
    assert_string_equal(member(b, "plain"), "(null)"); /* not a ciphertext: None, as decrypt_value_helper */
    json_object_put(all);

    /* another key, or none: every string null, the rest kept */
    assert_int_equal(sy_credentials_load(st, "another-salt", &all), 0);
    assert_string_equal(member(json_object_object_get(all, "a"), "api_key"), "(null)");
    assert_string_equal(member(json_object_object_get(all, "a"), "n"), "3");
    json_object_put(all);
    assert_int_equal(sy_credentials_load(st, NULL, &all), 0);
    assert_string_equal(member(json_object_object_get(all, "b"), "api_key"), "(null)");
    json_object_put(all);

    /* the table as stored holds no plaintext */
    struct sy_sval q = sy_sv_text("a");
    assert_int_equal(sy_store_exec(st,
                                   "SELECT 1 FROM \"LiteLLM_CredentialsTable\" WHERE credential_name = $1 AND "
                                   "credential_values LIKE '%sk-a-secret%'",
                                   1, &q, NULL, NULL),
                     0);
}

static void test_masking(void **state)
{
    struct sy_store *st = *state;
    struct call c;
    do_call(st, &c, MASTER, HTTP_POST, "/credentials",
            "{\"credential_name\":\"m\",\"credential_values\":{\"API_KEY\":\"\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\","
            "\"Secret_token\":\"abcd\",\"api_base\":\"https://keep\",\"password\":7,"
            "\"vertex_credentials\":{\"private_key\":\"-----BEGIN-xyz\",\"project\":\"p\"}},"
            "\"credential_info\":{\"k\":\"v\"}}");
    expect(&c, 200);
    call_free(&c);
    do_call(st, &c, MASTER, HTTP_GET, "/credentials/by_name/m", NULL);
    expect(&c, 200);
    struct json_object *v = json_object_object_get(c.j, "credential_values");
    assert_string_equal(member(v, "API_KEY"), "\xc3\xa9\xc3\xa9****\xc3\xa9\xc3\xa9"); /* 5 characters, 10 bytes */
    assert_string_equal(member(v, "Secret_token"), "*****");
    assert_string_equal(member(v, "api_base"), "https://keep");
    assert_string_equal(member(v, "password"), "7");
    struct json_object *vc = json_object_object_get(v, "vertex_credentials");
    assert_string_equal(member(vc, "private_key"), "--****yz");
    assert_string_equal(member(vc, "project"), "p");
    assert_string_equal(member(json_object_object_get(c.j, "credential_info"), "k"), "v");
    call_free(&c);
}

static void test_no_salt(void **state)
{
    struct sy_store *st = *state;
    struct call c;
    do_call(st, &c, NULL, HTTP_POST, "/credentials",
            "{\"credential_name\":\"n\",\"credential_values\":{\"api_key\":\"sk-in-clear\"},\"credential_info\":{}}");
    expect(&c, 400);
    assert_int_equal(c.a.ninval, 0);
    call_free(&c);
    assert_int_equal(sy_store_exec(st, "SELECT 1 FROM \"LiteLLM_CredentialsTable\"", 0, NULL, NULL, NULL), 0);
    /* LITELLM_SALT_KEY alone is enough */
    setenv("LITELLM_SALT_KEY", "env-salt", 1);
    do_call(st, &c, NULL, HTTP_POST, "/credentials",
            "{\"credential_name\":\"n\",\"credential_values\":{\"api_key\":\"sk-salted\"},\"credential_info\":{}}");
    expect(&c, 200);
    call_free(&c);
    struct json_object *all = NULL;
    assert_int_equal(sy_credentials_load(st, sy_secret_salt(NULL), &all), 0);
    assert_string_equal(member(json_object_object_get(all, "n"), "api_key"), "sk-salted");
    json_object_put(all);
    unsetenv("LITELLM_SALT_KEY");
}

/* The per-value helpers the models registry shares: strings encrypted, the
 * rest kept; on the way back keep_original keeps what does not decrypt. */
static void test_values(void **state)
{
    (void)state;
    struct json_object *in = json_tokener_parse("{\"api_key\":\"sk-x-123\",\"rpm\":10,\"tags\":[\"a\"]}");
    assert_null(sy_credentials_encrypt_values(in, NULL));
    struct json_object *enc = sy_credentials_encrypt_values(in, MASTER);
    assert_non_null(enc);
    assert_string_not_equal(member(enc, "api_key"), "sk-x-123");
    assert_string_equal(member(enc, "rpm"), "10");
    json_object_object_add(enc, "plain", json_object_new_string("os.environ/KEY"));
    struct json_object *d0 = sy_credentials_decrypt_values(enc, MASTER, 0),
                       *d1 = sy_credentials_decrypt_values(enc, MASTER, 1),
                       *dx = sy_credentials_decrypt_values(enc, "other", 1);
    assert_string_equal(member(d0, "api_key"), "sk-x-123");
    assert_string_equal(member(d0, "plain"), "(null)");
    assert_string_equal(member(d1, "plain"), "os.environ/KEY");
    assert_string_equal(member(d1, "tags"), "[ \"a\" ]");
    assert_string_equal(member(dx, "api_key"), member(enc, "api_key")); /* kept as stored */
    json_object_put(d0);
    json_object_put(d1);
    json_object_put(dx);
    json_object_put(enc);
    json_object_put(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_load, setup, teardown),
        cmocka_unit_test_setup_teardown(test_masking, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_salt, setup, teardown),
        cmocka_unit_test(test_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
