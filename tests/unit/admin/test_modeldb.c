/* test_modeldb.c - admin/modeldb.c: a LiteLLM_ProxyModelTable row to a
 * model_list entry and back.
 *
 *   - each string of litellm_params encrypted (non-strings kept, nulls
 *     dropped) and decrypted back; a value that does not decrypt is kept as
 *     stored; litellm_params stored as a JSON string holding the object read;
 *   - model_info.id is the row's model_id whatever model_info says;
 *   - bad rows (not an object, no name) refused with a reason;
 *   - the loader's check: a served provider passes, an unknown one fails;
 *     litellm_credential_name resolves against a credential_list.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "admin/modeldb.h"
#include "config/config.h"
#include "core/buf.h"

#define SALT "sk-unit-salt"

static json_object *entry(const char *id, const char *params, const char *info, const char *salt)
{
    struct sy_buf b;
    char err[256] = "";
    sy_buf_init(&b, 1 << 20);
    int rc = sy_modeldb_entry(id, "m", params, info, salt, &b, err, sizeof err);
    json_object *o = rc == 0 ? json_tokener_parse(b.p) : NULL;
    sy_buf_free(&b);
    return o;
}

static const char *member(json_object *o, const char *a, const char *b)
{
    json_object *x, *y;
    if (!json_object_object_get_ex(o, a, &x) || !json_object_object_get_ex(x, b, &y))
        return NULL;
    return json_object_get_string(y);
}

static void test_roundtrip(void **state)
{
    (void)state;
    char *enc =
        sy_modeldb_encrypt_params("{\"model\":\"openai/x\",\"api_key\":\"sk-secret\",\"rpm\":5,\"x\":null}", SALT);
    assert_non_null(enc);
    assert_null(strstr(enc, "sk-secret"));
    assert_null(strstr(enc, "openai/x"));
    assert_non_null(strstr(enc, "\"rpm\":5"));
    assert_null(strstr(enc, "\"x\""));
    json_object *e = entry("id-1", enc, "{\"id\":\"other\",\"mode\":\"chat\"}", SALT);
    assert_non_null(e);
    assert_string_equal(member(e, "litellm_params", "api_key"), "sk-secret");
    assert_string_equal(member(e, "litellm_params", "model"), "openai/x");
    assert_string_equal(member(e, "litellm_params", "rpm"), "5");
    assert_string_equal(member(e, "model_info", "id"), "id-1");
    assert_string_equal(member(e, "model_info", "mode"), "chat");
    json_object_put(e);
    /* another salt: the stored text is kept as is */
    e = entry("id-1", enc, NULL, "sk-other-salt");
    assert_non_null(e);
    assert_string_not_equal(member(e, "litellm_params", "api_key"), "sk-secret");
    json_object_put(e);
    free(enc);
    assert_null(sy_modeldb_encrypt_params("{\"model\":\"x\"}", NULL));
    assert_null(sy_modeldb_encrypt_params("[1]", SALT));
}

static void test_shapes(void **state)
{
    (void)state;
    json_object *e = entry("id-2", "\"{\\\"model\\\":\\\"openai/y\\\"}\"", "null", SALT);
    assert_non_null(e);
    assert_string_equal(member(e, "litellm_params", "model"), "openai/y");
    json_object_put(e);
    assert_null(entry("id-3", "[1,2]", NULL, SALT));
    assert_null(entry("id-3", "not json", NULL, SALT));
    assert_null(entry("id-3", "{\"model\":\"openai/y\"}", "[1]", SALT));
    assert_null(entry("", "{\"model\":\"openai/y\"}", NULL, SALT));
}

static void test_check(void **state)
{
    (void)state;
    char err[256] = "";
    const char *ok = "{\"model_name\":\"m\",\"litellm_params\":{\"model\":\"openai/y\"},\"model_info\":{\"id\":\"a\"}}";
    assert_int_equal(sy_modeldb_check(ok, strlen(ok), NULL, err, sizeof err), 0);
    const char *bad =
        "{\"model_name\":\"m\",\"litellm_params\":{\"model\":\"nosuch/y\"},\"model_info\":{\"id\":\"a\"}}";
    assert_int_equal(sy_modeldb_check(bad, strlen(bad), NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "nosuch"));
    const char *cred =
        "{\"model_name\":\"m\",\"litellm_params\":{\"model\":\"openai/y\",\"litellm_credential_name\":\"c1\"},"
        "\"model_info\":{\"id\":\"a\"}}";
    json_object *co = json_tokener_parse("{\"c1\":{\"api_key\":\"sk-cred\",\"api_base\":\"http://h/v1\"}}");
    char *list = sy_modeldb_credential_list(co);
    json_object_put(co);
    assert_non_null(list);
    char arr[1024];
    snprintf(arr, sizeof arr, "[%s]", cred);
    struct sy_config *c = sy_modeldb_config(arr, strlen(arr), list, err, sizeof err);
    assert_non_null(c);
    assert_int_equal(c->n_deployments, 1);
    assert_string_equal(c->deployments[0].file, SY_MODELDB_FILE);
    assert_string_equal(c->deployments[0].id, "a");
    assert_non_null(c->deployments[0].api_key);
    assert_string_equal(c->deployments[0].api_key, "sk-cred");
    sy_config_unref(c);
    free(list);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
