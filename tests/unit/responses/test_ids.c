/* test_ids.c - LiteLLM's encoded response ids (responses/ids.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "core/buf.h"
#include "responses/responses.h"

/* The id LiteLLM builds for provider openai, model_id "abc", response "resp_123"
 * (base64 of "litellm:custom_llm_provider:openai;model_id:abc;response_id:resp_123",
 * computed with Python's base64.b64encode). */
static const char LITELLM_ID[] =
    "resp_bGl0ZWxsbTpjdXN0b21fbGxtX3Byb3ZpZGVyOm9wZW5haTttb2RlbF9pZDphYmM7cmVzcG9uc2VfaWQ6cmVzcF8xMjM=";

static void test_encode_matches_litellm(void **st)
{
    (void)st;
    char out[512];
    assert_int_equal(sy_resp_id_encode("openai", "abc", "resp_123", 8, out, sizeof out), 0);
    assert_string_equal(out, LITELLM_ID);
    assert_int_equal(sy_resp_id_encode("openai", "abc", "resp_123", 8, out, 20), -1);
}

static void test_decode(void **st)
{
    (void)st;
    struct sy_resp_id d;
    assert_int_equal(sy_resp_id_decode(LITELLM_ID, strlen(LITELLM_ID), &d), 0);
    assert_true(d.encoded);
    assert_string_equal(d.provider, "openai");
    assert_string_equal(d.model_id, "abc");
    assert_string_equal(d.inner, "resp_123");
    /* not ours: used whole */
    assert_int_equal(sy_resp_id_decode("resp_67ccd2bed1ec8190", 21, &d), 0);
    assert_false(d.encoded);
    assert_string_equal(d.inner, "resp_67ccd2bed1ec8190");
    assert_int_equal(sy_resp_id_decode("", 0, &d), 0);
    assert_false(d.encoded);
    /* an inner id with ';' survives */
    char out[512];
    assert_int_equal(sy_resp_id_encode("hosted_vllm", "m-1", "a;b", 3, out, sizeof out), 0);
    assert_int_equal(sy_resp_id_decode(out, strlen(out), &d), 0);
    assert_true(d.encoded);
    assert_string_equal(d.inner, "a;b");
    assert_string_equal(d.provider, "hosted_vllm");
}

static void test_rewrite(void **st)
{
    (void)st;
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    const char *ev = "{\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_123\","
                     "\"object\":\"response\",\"output\":[{\"id\":\"msg_1\",\"text\":\"\\\"id\\\":\\\"resp_9\\\"\"}]}}";
    assert_int_equal(sy_resp_ids_rewrite(ev, strlen(ev), "openai", "abc", &b), 1);
    assert_non_null(strstr(b.p, LITELLM_ID));
    assert_non_null(strstr(b.p, "\"id\":\"msg_1\""));
    assert_non_null(strstr(b.p, "\\\"id\\\":\\\"resp_9\\\"")); /* inside a string: untouched */
    sy_buf_reset(&b);
    const char *none = "{\"id\":\"msg_1\",\"previous\":\"resp_1\"}";
    assert_int_equal(sy_resp_ids_rewrite(none, strlen(none), "openai", "abc", &b), 0);
    assert_int_equal(b.len, strlen(none));
    assert_memory_equal(b.p, none, b.len);
    sy_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode_matches_litellm),
        cmocka_unit_test(test_decode),
        cmocka_unit_test(test_rewrite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
