/* test_config.c - targeted loader cases: YAML 1.1 scalars, type errors with
 * line numbers, os.environ/ and environment_variables, include: merging,
 * unknown/unsupported key warnings, LiteLLM ids, refcounting, printing.
 *
 * argv[1] is a scratch directory (created by the test) for include files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "config/config.h"

static const char *scratch = "/tmp";

static struct sy_config *ok(const char *yaml)
{
    struct sy_config *c = NULL;
    char err[512] = "";
    int rc = sy_config_load_string_ex(yaml, strlen(yaml), "t.yaml", scratch, SY_CONFIG_QUIET, &c, err, sizeof err);
    if (rc != 0)
        fail_msg("unexpected error: %s", err);
    return c;
}

/* Expect a load error whose message contains every given fragment. */
static void bad(const char *yaml, const char *frag1, const char *frag2)
{
    struct sy_config *c = NULL;
    char err[512] = "";
    int rc = sy_config_load_string_ex(yaml, strlen(yaml), "t.yaml", scratch, SY_CONFIG_QUIET, &c, err, sizeof err);
    if (rc == 0)
        fail_msg("expected an error for: %s", yaml);
    assert_null(c);
    if (frag1 && !strstr(err, frag1))
        fail_msg("error '%s' lacks '%s'", err, frag1);
    if (frag2 && !strstr(err, frag2))
        fail_msg("error '%s' lacks '%s'", err, frag2);
}

static int has_warning(const struct sy_config *c, const char *frag)
{
    for (int i = 0; sy_config_warning(c, i); i++)
        if (strstr(sy_config_warning(c, i), frag))
            return 1;
    return 0;
}

static void test_defaults(void **state)
{
    (void)state;
    unsetenv("LITELLM_MASTER_KEY");
    struct sy_config *c = ok("model_list: []\n");
    assert_int_equal(c->n_deployments, 0);
    assert_true(c->request_timeout_s == 6000);
    assert_true(c->max_request_size_mb == 32);
    assert_string_equal(c->routing_strategy, "simple-shuffle");
    assert_int_equal(c->ssl_verify, 1);
    assert_null(c->ssl_ca_file);
    assert_int_equal(c->max_header_bytes, 65536);
    assert_true(c->header_timeout_s == 30 && c->body_timeout_s == 60 && c->keepalive_timeout_s == 75);
    assert_int_equal(c->num_retries, -1);
    assert_int_equal(c->router_num_retries, -1);
    assert_true(c->router_timeout_s < 0);
    assert_null(c->master_key);
    assert_int_equal(c->drop_params, 0);
    assert_int_equal(c->prometheus, 0);
    assert_int_equal(c->n_warnings, 0);
    assert_int_equal(c->refs, 1);
    sy_config_unref(c);
}

static void test_yaml11_scalars(void **state)
{
    (void)state;
    struct sy_config *c = ok("model_list:\n"
                             "  - model_name: m\n"
                             "    litellm_params:\n"
                             "      model: azure/dep\n"
                             "      tpm: 1_000\n"
                             "      rpm: \"6379\"\n"
                             "      order: 0x10\n"
                             "      max_retries: 010\n"
                             "      timeout: 1:30\n"
                             "      stream_timeout: .5\n"
                             "      api_version: 2024-02-15-preview\n"
                             "      weight: ~\n"
                             "litellm_settings:\n"
                             "  drop_params: yes\n"
                             "  require_auth_for_metrics_endpoint: On\n"
                             "  ssl_verify: off\n");
    const struct sy_deployment *d = &c->deployments[0];
    assert_true(d->tpm == 1000);
    assert_true(d->rpm == 6379);
    assert_int_equal(d->order, 16);
    assert_int_equal(d->max_retries, 8);
    assert_true(d->timeout_s == 90);
    assert_true(d->stream_timeout_s == 0.5);
    assert_string_equal(d->api_version, "2024-02-15-preview");
    assert_true(d->weight < 0);
    assert_string_equal(d->provider, "azure");
    assert_string_equal(d->upstream_model, "dep");
    assert_int_equal(c->drop_params, 1);
    assert_int_equal(c->require_auth_for_metrics_endpoint, 1);
    assert_int_equal(c->ssl_verify, 0);
    sy_config_unref(c);

    c = ok("litellm_settings:\n  ssl_verify: /etc/ca.pem\n");
    assert_int_equal(c->ssl_verify, 1);
    assert_string_equal(c->ssl_ca_file, "/etc/ca.pem");
    sy_config_unref(c);
}

static void test_type_errors(void **state)
{
    (void)state;
    bad("", "empty", NULL);
    bad("# only a comment\n", "empty", NULL);
    bad("- a\n- b\n", "top level", NULL);
    bad("model_list:\n  a: 1\n", "t.yaml:2:", "model_list");
    bad("model_list:\n  - model_name: m\n    litellm_params:\n      rpm: abc\n", "t.yaml:4:", "rpm");
    bad("general_settings:\n  master_key: [1]\n", "t.yaml:2:", "master_key");
    bad("general_settings:\n  max_request_size_mb: big\n", "t.yaml:2:", "max_request_size_mb");
    bad("litellm_settings:\n  drop_params: maybe\n", "t.yaml:2:", "drop_params");
    bad("litellm_settings: [1]\n", "t.yaml:1:", "litellm_settings");
    bad("model_list:\n  - just-a-string\n", "t.yaml:2:", "model_list[0]");
    bad("model_list:\n  - litellm_params: {model: gpt-4o}\n", "t.yaml:2:", "model_name");
    bad("model_list:\n  - model_name: m\n    litellm_params: {model: gpt-4o, tpm: 1.5e3x}\n", "t.yaml:3:", "tpm");
    bad("a: 1\n---\nb: 2\n", "single document", NULL);
    bad("a: [1, 2\n", "t.yaml:", "YAML");
    bad("a: *nope\n", "undefined alias", NULL);
    bad("a: !custom 1\n", "constructor", NULL);
    bad("{[1]: 2}\n", "unhashable", NULL);
    bad("general_settings:\n  switchyard_max_header_bytes: 0\n", "t.yaml:2:", "greater than 0");
    bad("litellm_settings:\n  num_retries: 99999999999\n", "t.yaml:2:", "out of range");
    /* billion laughs */
    bad("a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
        "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
        "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n",
        "alias expansion", NULL);
}

static void test_missing_model_is_warning(void **state)
{
    (void)state;
    struct sy_config *c = ok("model_list:\n  - model_name: only-a-name\n");
    assert_int_equal(c->n_deployments, 1);
    assert_null(c->deployments[0].model);
    assert_string_equal(c->deployments[0].provider, "openai");
    assert_int_equal(c->n_warnings, 1);
    assert_true(has_warning(c, "t.yaml:2:"));
    sy_config_unref(c);
}

static void test_os_environ(void **state)
{
    (void)state;
    setenv("SYT_KEY", "sk-secret-value-1234", 1);
    setenv("SYT_TRUE", " True ", 1);
    unsetenv("SYT_UNSET");
    struct sy_config *c = ok("model_list:\n"
                             "  - model_name: m\n"
                             "    litellm_params:\n"
                             "      model: os.environ/SYT_KEY\n"
                             "      api_key: \"os.environ/SYT_KEY\"\n"
                             "      api_base: os.environ/SYT_UNSET\n"
                             "      tags: [os.environ/SYT_KEY]\n"
                             "      extra:\n"
                             "        - {deep: os.environ/SYT_KEY}\n"
                             "litellm_settings:\n"
                             "  drop_params: os.environ/SYT_TRUE\n");
    const struct sy_deployment *d = &c->deployments[0];
    assert_string_equal(d->api_key, "sk-secret-value-1234");
    assert_string_equal(d->model, "sk-secret-value-1234");
    assert_null(d->api_base);
    /* bare list items are left alone, maps inside lists are resolved */
    assert_string_equal(sy_deployment_param(d, "tags"), "[\"os.environ/SYT_KEY\"]");
    assert_string_equal(sy_deployment_param(d, "extra"), "[{\"deep\": \"sk-secret-value-1234\"}]");
    assert_int_equal(c->drop_params, 1);
    assert_int_equal(c->n_warnings, 2); /* SYT_UNSET, and tags: not supported yet */
    assert_true(has_warning(c, "t.yaml:6:"));
    assert_true(has_warning(c, "SYT_UNSET"));
    sy_config_unref(c);
}

static void test_environment_variables(void **state)
{
    (void)state;
    unsetenv("SYT_FROM_FILE");
    const char *y = "environment_variables:\n  SYT_FROM_FILE: sk-from-file-000\n  SYT_NUM: 5\n"
                    "general_settings:\n  master_key: os.environ/SYT_FROM_FILE\n";
    struct sy_config *c = NULL;
    char err[256];
    assert_int_equal(sy_config_load_string(y, strlen(y), "t.yaml", NULL, &c, err, sizeof err), 0);
    assert_string_equal(c->master_key, "sk-from-file-000");
    assert_string_equal(getenv("SYT_NUM"), "5");
    sy_config_unref(c);

    unsetenv("SYT_FROM_FILE");
    c = ok(y); /* SY_CONFIG_QUIET only: exported too */
    sy_config_unref(c);
    unsetenv("SYT_FROM_FILE");
    assert_int_equal(sy_config_load_string_ex(y, strlen(y), "t.yaml", NULL, SY_CONFIG_QUIET | SY_CONFIG_NO_SETENV,
                                              &c, err, sizeof err), 0);
    assert_null(c->master_key);
    assert_null(getenv("SYT_FROM_FILE"));
    sy_config_unref(c);

    setenv("LITELLM_MASTER_KEY", "sk-env-master-9999", 1);
    c = ok("model_list: []\n");
    assert_string_equal(c->master_key, "sk-env-master-9999");
    sy_config_unref(c);
    unsetenv("LITELLM_MASTER_KEY");
}

static void write_file(const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", scratch, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_include(void **state)
{
    (void)state;
    write_file("inc_a.yaml", "model_list:\n  - model_name: from-a\n    litellm_params: {model: openai/a}\n"
                             "router_settings:\n  timeout: 7\n");
    write_file("inc_b.yaml", "model_list:\n  - model_name: from-b\n    litellm_params: {model: anthropic/b}\n"
                             "litellm_settings:\n  num_retries: 4\n");
    write_file("inc_empty.yaml", "# nothing\n");
    write_file("inc_map.yaml", "model_list: {a: 1}\n");
    struct sy_config *c = ok("include:\n  - inc_a.yaml\n  - inc_b.yaml\n"
                             "model_list:\n  - model_name: main\n    litellm_params: {model: gpt-4o}\n"
                             "router_settings:\n  num_retries: 2\n"
                             "litellm_settings:\n  drop_params: true\n");
    assert_int_equal(c->n_deployments, 3);
    assert_string_equal(c->deployments[0].model_name, "main");
    assert_string_equal(c->deployments[1].model_name, "from-a");
    assert_string_equal(c->deployments[2].model_name, "from-b");
    assert_true(c->deployments[1].line == 2);
    assert_true(strstr(c->deployments[1].file, "inc_a.yaml") != NULL);
    /* router_settings and litellm_settings are replaced as a whole */
    assert_int_equal(c->router_num_retries, -1);
    assert_true(c->router_timeout_s == 7);
    assert_int_equal(c->num_retries, 4);
    assert_int_equal(c->drop_params, 0);
    sy_config_unref(c);

    /* a list extends only a list; a file without model_list is fine */
    c = ok("include: [inc_a.yaml]\n");
    assert_int_equal(c->n_deployments, 1);
    sy_config_unref(c);

    bad("include: inc_a.yaml\n", "t.yaml:1:", "must be a list");
    bad("include:\n  - no_such_file.yaml\n", "t.yaml:2:", "not found");
    bad("include: [inc_empty.yaml]\n", "empty", NULL);
    bad("include: [inc_a.yaml]\nmodel_list: {x: 1}\n", "cannot extend", NULL);
    bad("include: [inc_map.yaml]\n", "inc_map.yaml:1:", "model_list");
}

static void test_unknown_keys(void **state)
{
    (void)state;
    struct sy_config *c = ok("foo: 1\n"
                             "guardrails: [x]\n"
                             "litellm_settings:\n"
                             "  bogus: 1\n"
                             "  cache: true\n"
                             "  set_verbose: true\n"
                             "  fallbacks: []\n"
                             "router_settings:\n"
                             "  enable_load_balancing: true\n"
                             "  routing_strategy: least-busy\n"
                             "general_settings:\n"
                             "  database_url: postgres://x\n"
                             "  switchyard_header_timeout_s: 5\n"
                             "model_list:\n"
                             "  - model_name: m\n"
                             "    litellm_params: {model: x/y, tags: [a], temperature: 0.2}\n"
                             "  - model_name: m\n"
                             "    litellm_params: {model: x/z, tags: [b]}\n"
                             "    surprise: 1\n");
    /* foo, guardrails, bogus, cache, enable_load_balancing, routing_strategy,
     * database_url, tags (once), surprise; fallbacks: [] asks for nothing */
    assert_int_equal(c->n_warnings, 9);
    assert_true(has_warning(c, "t.yaml:1: unknown top-level key foo"));
    assert_true(has_warning(c, "t.yaml:2: guardrails: not supported yet"));
    assert_true(has_warning(c, "t.yaml:4: unknown key litellm_settings.bogus"));
    assert_true(has_warning(c, "t.yaml:5: litellm_settings.cache: not supported yet, ignored"));
    assert_true(has_warning(c, "t.yaml:9: unknown key router_settings.enable_load_balancing"));
    assert_true(has_warning(c, "least-busy"));
    assert_true(has_warning(c, "general_settings.database_url: not supported yet"));
    assert_true(has_warning(c, "t.yaml:16: model_list[].litellm_params.tags"));
    assert_true(has_warning(c, "t.yaml:19: unknown key model_list[].surprise"));
    assert_true(c->header_timeout_s == 5);
    assert_string_equal(sy_deployment_param(&c->deployments[0], "temperature"), "0.2");
    sy_config_unref(c);
}

static void test_duplicates_and_merge(void **state)
{
    (void)state;
    struct sy_config *c = ok("base: &b {model: openai/gpt-4o, rpm: 10}\n"
                             "model_list:\n"
                             "  - model_name: m\n"
                             "    litellm_params:\n"
                             "      <<: *b\n"
                             "      temperature: 0.5\n"
                             "      cost: 0.0000006\n"
                             "      extra: {a: [1, true], u: \"\xc3\xa9\"}\n"
                             "      tags: [x, 'y']\n"
                             "      nul: null\n"
                             "      rpm: 20\n"
                             "litellm_settings:\n"
                             "  num_retries: 1\n"
                             "  num_retries: 3\n");
    assert_int_equal(c->num_retries, 3);
    assert_true(has_warning(c, "t.yaml:14: duplicate key 'num_retries' (first at line 13)"));
    const struct sy_deployment *d = &c->deployments[0];
    assert_true(d->rpm == 20); /* own key overrides the merged one, no duplicate warning */
    assert_string_equal(d->model, "openai/gpt-4o");
    /* same value as LiteLLM's Router._generate_model_id (computed with PyYAML + Python) */
    assert_string_equal(d->id, "0482a88d7e845b82d253fd16bedd8edb3b7dc41d5670d943d7d4b9f8b4113203");
    sy_config_unref(c);

    c = ok("model_list:\n  - model_name: m\n    litellm_params: {model: m}\n    model_info: {id: 42}\n");
    assert_string_equal(c->deployments[0].id, "42");
    sy_config_unref(c);
}

static void test_provider_and_credentials(void **state)
{
    (void)state;
    struct sy_config *c = ok("credential_list:\n"
                             "  - credential_name: c1\n"
                             "    credential_values: {api_key: sk-cred-key-12345678, api_base: http://cred}\n"
                             "model_list:\n"
                             "  - model_name: a\n"
                             "    litellm_params: {model: ollama/llama3:8b, custom_llm_provider: ollama}\n"
                             "  - model_name: b\n"
                             "    litellm_params: {model: my-model, custom_llm_provider: hosted_vllm}\n"
                             "  - model_name: c\n"
                             "    litellm_params: {model: gpt-4o, litellm_credential_name: c1, api_base: http://own}\n"
                             "    model_info: {mode: embedding, max_input_tokens: 8192, input_cost_per_token: 1e-06}\n");
    assert_string_equal(c->deployments[0].provider, "ollama");
    assert_string_equal(c->deployments[0].upstream_model, "llama3:8b");
    assert_string_equal(c->deployments[1].provider, "hosted_vllm");
    assert_string_equal(c->deployments[1].upstream_model, "my-model");
    const struct sy_deployment *d = &c->deployments[2];
    assert_string_equal(d->provider, "openai");
    assert_string_equal(d->api_key, "sk-cred-key-12345678");
    assert_string_equal(d->api_base, "http://own");
    assert_string_equal(d->mode, "embedding");
    assert_int_equal(d->max_input_tokens, 8192);
    /* "1e-06" has no dot: YAML 1.1 reads it as a string; pydantic-style numeric strings are accepted */
    assert_true(d->input_cost_per_token == 1e-06);
    sy_config_unref(c);
}

static void test_refcount_and_print(void **state)
{
    (void)state;
    struct sy_config *c = ok("model_list:\n"
                             "  - model_name: gpt\n"
                             "    litellm_params: {model: openai/gpt-4o, api_key: sk-abcdefghijklmnop1234, rpm: 5}\n"
                             "general_settings: {master_key: sk-master-key-5678}\n"
                             "litellm_settings: {callbacks: prometheus}\n");
    sy_config_ref(c);
    assert_int_equal(c->refs, 2);
    sy_config_unref(c);
    assert_int_equal(c->refs, 1);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sy_config_print(c, f);
    fclose(f);
    assert_non_null(strstr(buf, "model gpt (1 deployment)"));
    assert_non_null(strstr(buf, "sk-...1234"));
    assert_non_null(strstr(buf, "sk-...5678"));
    assert_null(strstr(buf, "abcdefghijklmnop"));
    assert_null(strstr(buf, "master-key"));
    assert_non_null(strstr(buf, "prometheus=on"));
    assert_non_null(strstr(buf, "rpm=5"));
    free(buf);
    sy_config_unref(c);
}

static void test_load_file(void **state)
{
    (void)state;
    write_file("main.yaml", "include: [inc_a.yaml]\n");
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/main.yaml", scratch);
    struct sy_config *c = NULL;
    assert_int_equal(sy_config_load(path, &c, err, sizeof err), 0);
    assert_string_equal(c->path, path);
    assert_int_equal(c->n_deployments, 1);
    sy_config_unref(c);
    snprintf(path, sizeof path, "%s/does-not-exist.yaml", scratch);
    assert_true(sy_config_load(path, &c, err, sizeof err) < 0);
    assert_non_null(strstr(err, "does-not-exist.yaml"));
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        scratch = argv[1];
        mkdir(scratch, 0755);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),           cmocka_unit_test(test_yaml11_scalars),
        cmocka_unit_test(test_type_errors),        cmocka_unit_test(test_missing_model_is_warning),
        cmocka_unit_test(test_os_environ),         cmocka_unit_test(test_environment_variables),
        cmocka_unit_test(test_include),            cmocka_unit_test(test_unknown_keys),
        cmocka_unit_test(test_duplicates_and_merge), cmocka_unit_test(test_provider_and_credentials),
        cmocka_unit_test(test_refcount_and_print), cmocka_unit_test(test_load_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
