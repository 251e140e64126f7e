/* test_config.c - targeted loader cases: YAML 1.1 scalars, type errors with
 * line numbers, os.environ/ and environment_variables, include: merging,
 * unknown/unsupported key warnings, LiteLLM ids, refcounting, printing,
 * router settings (fallbacks, policies, aliases, Redis, precedence, defaults).
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
    const struct sy_router_config *r = &c->router;
    assert_true(r->lowest_latency_buffer == 0 && r->latency_ttl_s == 3600);
    assert_int_equal(r->max_latency_list_size, 10);
    assert_true(r->retry_after_s == 0);
    for (int i = 0; i < SY_EXC__COUNT; i++) {
        assert_int_equal(r->retry_policy[i], -1);
        assert_int_equal(r->allowed_fails_policy[i], -1);
    }
    assert_int_equal(r->has_retry_policy, 0);
    assert_int_equal(r->has_allowed_fails_policy, 0);
    assert_int_equal(r->allowed_fails, -1);
    assert_true(r->cooldown_time_s < 0);
    assert_int_equal(r->disable_cooldowns, 0);
    assert_true(r->stream_timeout_s < 0);
    assert_int_equal(r->max_fallbacks, 5);
    assert_int_equal(r->n_fallbacks + r->n_context_window_fallbacks + r->n_content_policy_fallbacks, 0);
    assert_int_equal(r->n_default_fallbacks, 0);
    assert_int_equal(r->enable_pre_call_checks, 0);
    assert_int_equal(r->n_aliases, 0);
    assert_int_equal(r->default_max_parallel_requests, -1);
    assert_null(r->redis_host);
    assert_null(r->redis_password);
    assert_null(r->redis_username);
    assert_int_equal(r->redis_port, 6379);
    assert_int_equal(r->redis_db, 0);
    assert_int_equal(r->background_health_checks, 0);
    assert_true(r->health_check_interval_s == 300);
    sy_config_unref(c);

    /* a router_settings section that sets nothing keeps every default too */
    c = ok("router_settings: {}\nmodel_list:\n  - model_name: m\n    litellm_params: {model: openai/m}\n");
    assert_int_equal(c->router.max_fallbacks, 5);
    assert_int_equal(c->deployments[0].max_parallel_requests, -1);
    assert_true(c->deployments[0].cooldown_time_s < 0);
    assert_null(c->deployments[0].health_check_model);
    assert_int_equal(c->n_warnings, 0);
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
    assert_int_equal(c->n_warnings, 1); /* SYT_UNSET */
    assert_int_equal(d->n_tags, 1);
    assert_string_equal(d->tags[0], "os.environ/SYT_KEY");
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
    assert_int_equal(sy_config_load_string_ex(y, strlen(y), "t.yaml", NULL, SY_CONFIG_QUIET | SY_CONFIG_NO_SETENV, &c,
                                              err, sizeof err),
                     0);
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

/* database_connection_pool_limit, disable_error_logs, and the Python-only hooks. */
static void test_db_settings_and_python_hooks(void **state)
{
    (void)state;
    struct sy_config *c = ok("general_settings:\n"
                             "  database_connection_pool_limit: 10\n"
                             "  disable_error_logs: true\n"
                             "model_list: []\n");
    assert_int_equal(c->database_connection_pool_limit, 10);
    assert_int_equal(c->disable_error_logs, 1);
    assert_int_equal(c->n_warnings, 0);
    sy_config_unref(c);

    c = ok("model_list: []\n");
    assert_int_equal(c->database_connection_pool_limit, 0); /* the default, SY_DB_THREADS_DEFAULT */
    assert_int_equal(c->disable_error_logs, 0);
    sy_config_unref(c);

    c = ok("general_settings:\n  database_connection_pool_limit: \"500\"\n");
    assert_int_equal(c->database_connection_pool_limit, SY_DB_THREADS_MAX);
    assert_int_equal(c->n_warnings, 1);
    assert_true(has_warning(c, "t.yaml:2: general_settings.database_connection_pool_limit: 500 is more than 64"));
    sy_config_unref(c);

    bad("general_settings:\n  database_connection_pool_limit: 0\n", "t.yaml:2:", "greater than 0");
    bad("general_settings:\n  database_connection_pool_limit: 2.5\n", "t.yaml:2:", "database_connection_pool_limit");
    bad("general_settings:\n  database_connection_pool_limit: lots\n", "t.yaml:2:", "database_connection_pool_limit");
    bad("general_settings:\n  disable_error_logs: maybe\n", "t.yaml:2:", "disable_error_logs");

    /* one line per Python hook, saying what it is; false/null asks for nothing */
    c = ok("general_settings:\n"
           "  custom_auth: my_auth.user_api_key_auth\n"
           "  custom_key_generate: keys.gen\n"
           "  custom_sso: null\n"
           "litellm_settings:\n"
           "  callbacks: [prometheus, my_mod.handler_instance]\n");
    assert_int_equal(c->n_warnings, 3);
    assert_true(has_warning(c, "t.yaml:2: general_settings.custom_auth: 'my_auth.user_api_key_auth' is a Python hook "
                               "(LiteLLM imports it); switchyard cannot run Python, ignored"));
    assert_true(has_warning(c, "t.yaml:3: general_settings.custom_key_generate: 'keys.gen' is a Python hook"));
    assert_true(has_warning(c, "callback 'my_mod.handler_instance' is a Python object (a custom logger LiteLLM "
                               "imports); switchyard cannot run Python, so it is not called. To keep a custom "
                               "logger, serve it as an HTTP endpoint and use the generic_api callback"));
    assert_false(has_warning(c, "not supported yet"));
    assert_int_equal(c->prometheus, 1);
    sy_config_unref(c);
}

static void test_unknown_keys(void **state)
{
    (void)state;
    struct sy_config *c = ok("foo: 1\n"
                             "prompts: [x]\n"
                             "litellm_settings:\n"
                             "  bogus: 1\n"
                             "  service_callback: [otel]\n"
                             "  set_verbose: true\n"
                             "  fallbacks: []\n"
                             "router_settings:\n"
                             "  enable_load_balancing: true\n"
                             "  routing_strategy: provider-budget-routing\n"
                             "general_settings:\n"
                             "  database_url: postgres://x\n"
                             "  disable_reset_budget: true\n"
                             "  switchyard_header_timeout_s: 5\n"
                             "model_list:\n"
                             "  - model_name: m\n"
                             "    litellm_params: {model: x/y, max_budget: 1, temperature: 0.2}\n"
                             "  - model_name: m\n"
                             "    litellm_params: {model: x/z, max_budget: 2}\n"
                             "    surprise: 1\n");
    /* foo, prompts, bogus, service_callback, enable_load_balancing, routing_strategy,
     * disable_reset_budget, max_budget (once), surprise; fallbacks: [] asks for nothing */
    assert_int_equal(c->n_warnings, 9);
    assert_true(has_warning(c, "t.yaml:1: unknown top-level key foo"));
    assert_true(has_warning(c, "t.yaml:2: prompts: not supported yet"));
    assert_true(has_warning(c, "t.yaml:4: unknown key litellm_settings.bogus"));
    assert_true(has_warning(c, "t.yaml:5: litellm_settings.service_callback: 'otel' not supported (only prometheus"));
    assert_true(has_warning(c, "t.yaml:9: unknown key router_settings.enable_load_balancing"));
    assert_true(has_warning(c, "t.yaml:10: router_settings.routing_strategy: unknown or unsupported strategy "
                               "'provider-budget-routing', using simple-shuffle"));
    assert_string_equal(c->routing_strategy, "simple-shuffle");
    assert_true(has_warning(c, "general_settings.disable_reset_budget: not supported yet"));
    assert_true(has_warning(c, "t.yaml:17: model_list[].litellm_params.max_budget"));
    assert_true(has_warning(c, "t.yaml:20: unknown key model_list[].surprise"));
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
    struct sy_config *c =
        ok("credential_list:\n"
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

/* general_settings.pass_through_endpoints (config/passthrough.c). */
static void test_pass_through_endpoints(void **state)
{
    (void)state;
    setenv("SY_T_PT_KEY", "k1", 1);
    unsetenv("SY_T_PT_UNSET");
    struct sy_config *c =
        ok("general_settings:\n"
           "  pass_through_endpoints:\n"
           "    - path: /v1/rerank/\n"
           "      target: https://api.cohere.com/v1/rerank\n"
           "      headers: {Authorization: \"bearer os.environ/SY_T_PT_KEY\", x-a: os.environ/SY_T_PT_KEY}\n"
           "    - {path: /open, target: \"http://h:1/x\", auth: false, forward_headers: true, "
           "include_subpath: yes}\n"
           "    - {path: /gone, target: os.environ/SY_T_PT_UNSET}\n"
           "    - {path: /ftp, target: \"ftp://h/x\"}\n");
    assert_int_equal(c->n_pt_endpoints, 2);
    const struct sy_ptendpoint *e = &c->pt_endpoints[0];
    assert_string_equal(e->path, "/v1/rerank"); /* the trailing '/' dropped */
    assert_string_equal(e->target, "https://api.cohere.com/v1/rerank");
    assert_int_equal(e->auth, 1); /* default true */
    assert_int_equal(e->forward_headers, 0);
    assert_int_equal(e->include_subpath, 0);
    assert_int_equal(e->nheaders, 2);
    assert_string_equal(e->hname[0], "Authorization");
    assert_string_equal(e->hvalue[0], "bearer k1"); /* embedded os.environ/ */
    assert_string_equal(e->hvalue[1], "k1");
    e = &c->pt_endpoints[1];
    assert_int_equal(e->auth, 0);
    assert_int_equal(e->forward_headers, 1);
    assert_int_equal(e->include_subpath, 1);
    assert_true(has_warning(c, "not served"));
    sy_config_unref(c);
    bad("general_settings:\n  pass_through_endpoints: {path: /x}\n", "pass_through_endpoints", "list");
    bad("general_settings:\n  pass_through_endpoints:\n    - {target: \"http://h/\"}\n", "path", NULL);
    bad("general_settings:\n  pass_through_endpoints:\n    - {path: x, target: \"http://h/\"}\n", "path", NULL);
    bad("general_settings:\n  pass_through_endpoints:\n    - {path: /a, target: \"http://h/\"}\n"
        "    - {path: /a/, target: \"http://h/\"}\n",
        "given twice", NULL);
    bad("general_settings:\n  pass_through_endpoints:\n    - {path: /a, target: \"http://h/\", headers: "
        "{\"x:y\": v}}\n",
        "header", NULL);
    bad("general_settings:\n  pass_through_endpoints:\n    - {path: /a, target: \"http://h/\", headers: [1]}\n",
        "headers", NULL);
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

/* ---- router settings ---- */

static const char *groups = "model_list:\n"
                            "  - model_name: gpt-4o\n"
                            "    litellm_params: {model: openai/gpt-4o}\n"
                            "  - model_name: claude\n"
                            "    litellm_params: {model: anthropic/claude}\n"
                            "  - model_name: gpt-3.5\n"
                            "    litellm_params: {model: openai/gpt-3.5-turbo}\n"
                            "  - model_name: openai/*\n"
                            "    litellm_params: {model: openai/*}\n";

/* Load `groups` followed by `tail` (so line numbers in tail start at 10). */
static struct sy_config *ok_groups(const char *tail)
{
    char y[4096];
    snprintf(y, sizeof y, "%s%s", groups, tail);
    return ok(y);
}

static void bad_groups(const char *tail, const char *frag1, const char *frag2)
{
    char y[4096];
    snprintf(y, sizeof y, "%s%s", groups, tail);
    bad(y, frag1, frag2);
}

static void test_router_strategies(void **state)
{
    (void)state;
    static const char *const all[] = {"simple-shuffle",        "least-busy",
                                      "usage-based-routing",   "usage-based-routing-v2",
                                      "latency-based-routing", "cost-based-routing"};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        char y[256];
        snprintf(y, sizeof y, "router_settings:\n  routing_strategy: \"%s\"\n", all[i]);
        struct sy_config *c = ok(y);
        assert_string_equal(c->routing_strategy, all[i]);
        assert_int_equal(c->n_warnings, 0);
        sy_config_unref(c);
    }
    struct sy_config *c = ok("router_settings:\n  routing_strategy: fastest\n");
    assert_string_equal(c->routing_strategy, "simple-shuffle");
    assert_int_equal(c->n_warnings, 1);
    assert_true(has_warning(c, "t.yaml:2: router_settings.routing_strategy: unknown or unsupported strategy "
                               "'fastest'"));
    sy_config_unref(c);

    c = ok("router_settings:\n"
           "  routing_strategy: latency-based-routing\n"
           "  routing_strategy_args: {ttl: 60, lowest_latency_buffer: 0.5, max_latency_list_size: \"20\", foo: 1}\n");
    assert_true(c->router.latency_ttl_s == 60);
    assert_true(c->router.lowest_latency_buffer == 0.5);
    assert_int_equal(c->router.max_latency_list_size, 20);
    assert_int_equal(c->n_warnings, 1);
    assert_true(has_warning(c, "t.yaml:3: unknown key router_settings.routing_strategy_args.foo"));
    sy_config_unref(c);

    bad("router_settings:\n  routing_strategy_args: [1]\n", "t.yaml:2:", "routing_strategy_args");
    bad("router_settings:\n  routing_strategy_args:\n    max_latency_list_size: 0\n",
        "t.yaml:3:", "max_latency_list_size: must be greater than 0");
    bad("router_settings:\n  routing_strategy_args:\n    lowest_latency_buffer: -1\n",
        "t.yaml:3:", "must be 0 or more");
}

static void test_router_fallbacks(void **state)
{
    (void)state;
    /* the documented form, with the generic "*" entry and a one-name string value */
    struct sy_config *c = ok_groups("router_settings:\n"
                                    "  fallbacks: [{\"gpt-4o\": [\"claude\", \"gpt-3.5\"]}, {\"*\": [\"gpt-3.5\"]}]\n"
                                    "  context_window_fallbacks:\n"
                                    "    - gpt-3.5: gpt-4o\n"
                                    "  content_policy_fallbacks: {claude: [gpt-4o]}\n"
                                    "  default_fallbacks: [claude, gpt-4o]\n");
    const struct sy_router_config *r = &c->router;
    assert_int_equal(r->n_fallbacks, 2);
    assert_string_equal(r->fallbacks[0].group, "gpt-4o");
    assert_int_equal(r->fallbacks[0].n, 2);
    assert_string_equal(r->fallbacks[0].to[0], "claude");
    assert_string_equal(r->fallbacks[0].to[1], "gpt-3.5");
    assert_string_equal(r->fallbacks[1].group, "*");
    assert_int_equal(r->fallbacks[1].n, 1);
    assert_string_equal(r->fallbacks[1].to[0], "gpt-3.5");
    /* lenient: a single string value, a single map instead of a list */
    assert_int_equal(r->n_context_window_fallbacks, 1);
    assert_string_equal(r->context_window_fallbacks[0].group, "gpt-3.5");
    assert_int_equal(r->context_window_fallbacks[0].n, 1);
    assert_string_equal(r->context_window_fallbacks[0].to[0], "gpt-4o");
    assert_int_equal(r->n_content_policy_fallbacks, 1);
    assert_string_equal(r->content_policy_fallbacks[0].group, "claude");
    assert_string_equal(r->content_policy_fallbacks[0].to[0], "gpt-4o");
    assert_int_equal(r->n_default_fallbacks, 2);
    assert_string_equal(r->default_fallbacks[0], "claude");
    assert_string_equal(r->default_fallbacks[1], "gpt-4o");
    assert_int_equal(c->n_warnings, 0);
    sy_config_unref(c);

    /* default_fallbacks as one string; several groups in one map; a null target list */
    c = ok_groups("litellm_settings:\n"
                  "  default_fallbacks: claude\n"
                  "  fallbacks: [{gpt-4o: [claude], claude: [gpt-4o]}, {gpt-3.5: null}]\n");
    r = &c->router;
    assert_int_equal(r->n_default_fallbacks, 1);
    assert_string_equal(r->default_fallbacks[0], "claude");
    assert_int_equal(r->n_fallbacks, 3);
    assert_string_equal(r->fallbacks[1].group, "claude");
    assert_string_equal(r->fallbacks[2].group, "gpt-3.5");
    assert_int_equal(r->fallbacks[2].n, 0);
    sy_config_unref(c);

    /* wrong shapes are errors naming file:line */
    bad_groups("router_settings:\n  fallbacks: gpt-4o\n", "t.yaml:11:", "router_settings.fallbacks: expected a list");
    bad_groups("router_settings:\n  fallbacks:\n    - {gpt-4o: [claude]}\n    - claude\n",
               "t.yaml:13:", "router_settings.fallbacks[1]: expected a map");
    bad_groups("router_settings:\n  fallbacks:\n    - gpt-4o: {claude: 1}\n",
               "t.yaml:12:", "router_settings.fallbacks.gpt-4o: expected a list of model group names");
    bad_groups("router_settings:\n  fallbacks:\n    - gpt-4o:\n      - claude\n      - [x]\n",
               "t.yaml:14:", "router_settings.fallbacks.gpt-4o[1]: expected a model group name");
    bad_groups("litellm_settings:\n  context_window_fallbacks: [{1: [claude]}]\n", "t.yaml:11:", "must be a string");
    bad_groups("router_settings:\n  default_fallbacks: {claude: gpt-4o}\n",
               "t.yaml:11:", "router_settings.default_fallbacks: expected a list of model group names");
    bad_groups("router_settings:\n  default_fallbacks: [claude, 3]\n", "t.yaml:11:", "default_fallbacks[1]");
}

static void test_router_fallback_groups(void **state)
{
    (void)state;
    /* a group that is not in model_list is a warning (LiteLLM accepts it), once per name;
     * wildcard model names ("openai/" + '*') and aliases count as groups */
    struct sy_config *c = ok_groups("router_settings:\n"
                                    "  model_group_alias: {gpt4: gpt-4o, ghost-alias: no-such-group}\n"
                                    "  fallbacks:\n"
                                    "    - gpt-4o: [claude, missing-1, openai/gpt-4.1]\n"
                                    "    - missing-2: [gpt4, missing-1]\n"
                                    "  default_fallbacks: missing-3\n"
                                    "litellm_settings:\n"
                                    "  context_window_fallbacks: [{\"*\": [missing-4]}]\n");
    assert_int_equal(c->router.n_fallbacks, 2);
    assert_int_equal(c->n_warnings, 5);
    assert_true(has_warning(c, "t.yaml:11: router_settings.model_group_alias: model group 'no-such-group' is not in "
                               "model_list"));
    assert_true(has_warning(c, "t.yaml:13: router_settings.fallbacks: model group 'missing-1' is not in model_list"));
    assert_true(has_warning(c, "t.yaml:14: router_settings.fallbacks: model group 'missing-2'"));
    assert_true(has_warning(c, "t.yaml:15: router_settings.default_fallbacks: model group 'missing-3'"));
    assert_true(has_warning(c, "t.yaml:17: litellm_settings.context_window_fallbacks: model group 'missing-4'"));
    assert_false(has_warning(c, "openai/gpt-4.1"));
    assert_false(has_warning(c, "'gpt4'"));
    sy_config_unref(c);

    /* with a "*" deployment every name is served */
    c = ok("model_list:\n  - model_name: \"*\"\n    litellm_params: {model: \"openai/*\"}\n"
           "router_settings:\n  fallbacks: [{a: [b]}]\n");
    assert_int_equal(c->n_warnings, 0);
    sy_config_unref(c);
}

static void test_router_precedence(void **state)
{
    (void)state;
    /* router_settings wins over litellm_settings for each key both set */
    struct sy_config *c = ok_groups("litellm_settings:\n"
                                    "  fallbacks: [{claude: [gpt-4o]}]\n"
                                    "  context_window_fallbacks: [{claude: [gpt-3.5]}]\n"
                                    "  content_policy_fallbacks: [{gpt-4o: [claude]}]\n"
                                    "  default_fallbacks: [gpt-3.5]\n"
                                    "  max_fallbacks: 2\n"
                                    "  allowed_fails: 7\n"
                                    "  num_retries: 4\n"
                                    "router_settings:\n"
                                    "  fallbacks: [{gpt-4o: [claude]}]\n"
                                    "  context_window_fallbacks: []\n"
                                    "  default_fallbacks: [claude]\n"
                                    "  max_fallbacks: 3\n"
                                    "  allowed_fails: 1\n"
                                    "  num_retries: 0\n");
    const struct sy_router_config *r = &c->router;
    assert_int_equal(r->n_fallbacks, 1);
    assert_string_equal(r->fallbacks[0].group, "gpt-4o");
    /* an empty router_settings list asks for nothing: litellm_settings' list stays (LiteLLM's `or`) */
    assert_int_equal(r->n_context_window_fallbacks, 1);
    assert_string_equal(r->context_window_fallbacks[0].to[0], "gpt-3.5");
    /* only litellm_settings sets it */
    assert_int_equal(r->n_content_policy_fallbacks, 1);
    assert_string_equal(r->content_policy_fallbacks[0].group, "gpt-4o");
    assert_int_equal(r->n_default_fallbacks, 1);
    assert_string_equal(r->default_fallbacks[0], "claude");
    assert_int_equal(r->max_fallbacks, 3);
    assert_int_equal(r->allowed_fails, 1);
    assert_int_equal(c->num_retries, 4);
    assert_int_equal(c->router_num_retries, 0);
    assert_int_equal(c->n_warnings, 0);
    sy_config_unref(c);

    /* litellm_settings alone */
    c = ok_groups("litellm_settings:\n  max_fallbacks: \"2\"\n  allowed_fails: 0\n  fallbacks: [{claude: [gpt-4o]}]\n"
                  "router_settings:\n  max_fallbacks: null\n");
    assert_int_equal(c->router.max_fallbacks, 2);
    assert_int_equal(c->router.allowed_fails, 0);
    assert_int_equal(c->router.n_fallbacks, 1);
    assert_int_equal(c->n_warnings, 0);
    sy_config_unref(c);
}

static void test_router_policies(void **state)
{
    (void)state;
    struct sy_config *c = ok("router_settings:\n"
                             "  retry_after: 1.5\n"
                             "  retry_policy:\n"
                             "    BadRequestErrorRetries: 0\n"
                             "    AuthenticationErrorRetries: 1\n"
                             "    TimeoutErrorRetries: 2\n"
                             "    RateLimitErrorRetries: \"3\"\n"
                             "    ContentPolicyViolationErrorRetries: 4\n"
                             "    InternalServerErrorRetries: 5\n"
                             "  allowed_fails_policy:\n"
                             "    TimeoutErrorAllowedFails: 3\n"
                             "    RateLimitErrorAllowedFails: 5\n"
                             "    NotFoundErrorAllowedFails: 1\n"
                             "  allowed_fails: 2\n"
                             "  cooldown_time: 30\n"
                             "  disable_cooldowns: true\n"
                             "  stream_timeout: 15\n"
                             "  enable_pre_call_checks: yes\n"
                             "  default_max_parallel_requests: 100\n"
                             "general_settings:\n"
                             "  background_health_checks: true\n"
                             "  health_check_interval: 60\n");
    const struct sy_router_config *r = &c->router;
    assert_true(r->retry_after_s == 1.5);
    assert_int_equal(r->has_retry_policy, 1);
    for (int i = 0; i < SY_EXC__COUNT; i++)
        assert_int_equal(r->retry_policy[i], i);
    assert_int_equal(r->has_allowed_fails_policy, 1);
    assert_int_equal(r->allowed_fails_policy[SY_EXC_TIMEOUT], 3);
    assert_int_equal(r->allowed_fails_policy[SY_EXC_RATE_LIMIT], 5);
    assert_int_equal(r->allowed_fails_policy[SY_EXC_BAD_REQUEST], -1);
    assert_int_equal(r->allowed_fails_policy[SY_EXC_INTERNAL_SERVER], -1);
    assert_int_equal(r->allowed_fails, 2);
    assert_true(r->cooldown_time_s == 30);
    assert_int_equal(r->disable_cooldowns, 1);
    assert_true(r->stream_timeout_s == 15);
    assert_int_equal(r->enable_pre_call_checks, 1);
    assert_int_equal(r->default_max_parallel_requests, 100);
    assert_int_equal(r->background_health_checks, 1);
    assert_true(r->health_check_interval_s == 60);
    /* NotFoundError is not a policy class in LiteLLM */
    assert_int_equal(c->n_warnings, 1);
    assert_true(has_warning(c, "t.yaml:13: unknown key "
                               "router_settings.allowed_fails_policy.NotFoundErrorAllowedFails"));
    sy_config_unref(c);

    /* a policy given as an empty map still switches the policy on (LiteLLM: `is not None`) */
    c = ok("router_settings:\n  retry_policy: {}\n  cooldown_time: 0\n");
    assert_int_equal(c->router.has_retry_policy, 1);
    assert_int_equal(c->router.retry_policy[SY_EXC_TIMEOUT], -1);
    assert_true(c->router.cooldown_time_s == 0);
    sy_config_unref(c);
}

static void test_router_errors(void **state)
{
    (void)state;
    bad("router_settings:\n  cooldown_time: -1\n", "t.yaml:2:", "router_settings.cooldown_time: must be 0 or more");
    bad("router_settings:\n  allowed_fails: -2\n", "t.yaml:2:", "router_settings.allowed_fails");
    bad("litellm_settings:\n  allowed_fails: -2\n", "t.yaml:2:", "litellm_settings.allowed_fails");
    bad("router_settings:\n  allowed_fails: 1.5\n", "t.yaml:2:", "expected an integer");
    bad("router_settings:\n  retry_after: -0.5\n", "t.yaml:2:", "retry_after");
    bad("router_settings:\n  stream_timeout: -3\n", "t.yaml:2:", "stream_timeout");
    bad("router_settings:\n  max_fallbacks: -1\n", "t.yaml:2:", "max_fallbacks");
    bad("litellm_settings:\n  max_fallbacks: many\n", "t.yaml:2:", "litellm_settings.max_fallbacks");
    bad("router_settings:\n  default_max_parallel_requests: -10\n", "t.yaml:2:", "default_max_parallel_requests");
    bad("router_settings:\n  retry_policy:\n    TimeoutErrorRetries: -1\n",
        "t.yaml:3:", "router_settings.retry_policy.TimeoutErrorRetries: must be 0 or more");
    bad("router_settings:\n  retry_policy: [1]\n", "t.yaml:2:", "retry_policy: expected a map");
    bad("router_settings:\n  allowed_fails_policy:\n    RateLimitErrorAllowedFails: x\n",
        "t.yaml:3:", "RateLimitErrorAllowedFails");
    bad("router_settings:\n  disable_cooldowns: sometimes\n", "t.yaml:2:", "disable_cooldowns");
    bad("router_settings:\n  enable_pre_call_checks: [true]\n", "t.yaml:2:", "enable_pre_call_checks");
    bad("general_settings:\n  health_check_interval: 0\n",
        "t.yaml:2:", "health_check_interval: must be greater than 0");
    bad("general_settings:\n  background_health_checks: 2\n", "t.yaml:2:", "background_health_checks");
    bad("model_list:\n  - model_name: m\n    litellm_params: {model: openai/m, max_parallel_requests: -1}\n",
        "t.yaml:3:", "model_list[0].litellm_params.max_parallel_requests: must be 0 or more");
    bad("model_list:\n  - model_name: m\n    litellm_params:\n      model: openai/m\n      cooldown_time: -5\n",
        "t.yaml:5:", "model_list[0].litellm_params.cooldown_time");
    bad("model_list:\n  - model_name: m\n    litellm_params: {model: openai/m}\n"
        "    model_info: {health_check_model: [x]}\n",
        "t.yaml:4:", "health_check_model");
}

static void test_router_aliases(void **state)
{
    (void)state;
    struct sy_config *c = ok_groups("router_settings:\n"
                                    "  model_group_alias:\n"
                                    "    gpt-4: gpt-4o\n"
                                    "    secret: {model: claude, hidden: true}\n"
                                    "    shown: {model: gpt-3.5}\n");
    const struct sy_router_config *r = &c->router;
    assert_int_equal(r->n_aliases, 3);
    assert_string_equal(r->aliases[0].alias, "gpt-4");
    assert_string_equal(r->aliases[0].group, "gpt-4o");
    assert_int_equal(r->aliases[0].hidden, 0);
    assert_string_equal(r->aliases[1].alias, "secret");
    assert_string_equal(r->aliases[1].group, "claude");
    assert_int_equal(r->aliases[1].hidden, 1);
    assert_string_equal(r->aliases[2].group, "gpt-3.5");
    assert_int_equal(r->aliases[2].hidden, 0);
    assert_int_equal(c->n_warnings, 0);
    sy_config_unref(c);

    bad_groups("router_settings:\n  model_group_alias: [gpt-4]\n", "t.yaml:11:", "model_group_alias: expected a map");
    bad_groups("router_settings:\n  model_group_alias:\n    a: {hidden: true}\n",
               "t.yaml:12:", "model_group_alias.a: 'model' (the model group) is required");
    bad_groups("router_settings:\n  model_group_alias:\n    a: 5\n", "t.yaml:12:", "model_group_alias.a");
    bad_groups("router_settings:\n  model_group_alias:\n    a: {model: claude, hidden: maybe}\n",
               "t.yaml:12:", "model_group_alias.a.hidden");
}

static void unset_redis_env(void)
{
    unsetenv("REDIS_URL");
    unsetenv("REDIS_HOST");
    unsetenv("REDIS_PORT");
    unsetenv("REDIS_PASSWORD");
    unsetenv("REDIS_USERNAME");
}

static void test_router_redis(void **state)
{
    (void)state;
    unset_redis_env();
    /* host/port/password/db, numbers as numeric strings */
    struct sy_config *c = ok("router_settings:\n  redis_host: cache.local\n  redis_port: \"6380\"\n"
                             "  redis_password: hunter2\n  redis_db: 3\n  redis_username: app\n");
    const struct sy_router_config *r = &c->router;
    assert_string_equal(r->redis_host, "cache.local");
    assert_int_equal(r->redis_port, 6380);
    assert_string_equal(r->redis_password, "hunter2");
    assert_string_equal(r->redis_username, "app");
    assert_int_equal(r->redis_db, 3);
    assert_int_equal(c->n_warnings, 0);
    sy_config_unref(c);

    /* redis_url with user:password and db; %XX decoded */
    c = ok("router_settings:\n  redis_url: redis://me:p%40ss@10.0.0.5:6390/2\n");
    r = &c->router;
    assert_string_equal(r->redis_host, "10.0.0.5");
    assert_int_equal(r->redis_port, 6390);
    assert_string_equal(r->redis_username, "me");
    assert_string_equal(r->redis_password, "p@ss");
    assert_int_equal(r->redis_db, 2);
    assert_int_equal(c->n_warnings, 0);
    sy_config_unref(c);

    /* password only; no port: the default; the URL wins over redis_host, the
     * settings fill what the URL leaves out (redis-py's from_url(url, **kwargs)) */
    c = ok("router_settings:\n  redis_url: \"redis://:secret@redis\"\n  redis_host: other\n  redis_db: 4\n"
           "  redis_port: 7000\n");
    r = &c->router;
    assert_string_equal(r->redis_host, "redis");
    assert_int_equal(r->redis_port, 7000);
    assert_null(r->redis_username);
    assert_string_equal(r->redis_password, "secret");
    assert_int_equal(r->redis_db, 4);
    sy_config_unref(c);

    /* rediss:// is parsed with a warning; IPv6; ?db= */
    c = ok("router_settings:\n  redis_url: rediss://[::1]:6400?db=5\n");
    r = &c->router;
    assert_string_equal(r->redis_host, "::1");
    assert_int_equal(r->redis_port, 6400);
    assert_int_equal(r->redis_db, 5);
    assert_int_equal(c->n_warnings, 1);
    assert_true(has_warning(c, "t.yaml:2: router_settings.redis_url: rediss:// (TLS) is not supported yet"));
    sy_config_unref(c);

    /* malformed URLs and values are errors naming file:line */
    bad("router_settings:\n  redis_url: http://x\n", "t.yaml:2:", "expected redis://");
    bad("router_settings:\n  redis_url: redis://h:99999\n", "t.yaml:2:", "bad port");
    bad("router_settings:\n  redis_url: redis://h/abc\n", "t.yaml:2:", "bad database number");
    bad("router_settings:\n  redis_host: h\n  redis_port: 0\n", "t.yaml:3:", "redis_port: must be 1-65535");
    bad("router_settings:\n  redis_host: h\n  redis_port: dummy\n", "t.yaml:3:", "redis_port");
    bad("router_settings:\n  redis_host: h\n  redis_db: -1\n", "t.yaml:3:", "redis_db");
    bad("router_settings:\n  redis_host: [h]\n", "t.yaml:2:", "redis_host");

    /* a port without a host: warning, no Redis */
    c = ok("router_settings:\n  redis_port: 6379\n");
    assert_null(c->router.redis_host);
    assert_true(has_warning(c, "t.yaml:2: router_settings.redis_port is set but there is no redis_host"));
    sy_config_unref(c);

    /* the environment when the config names no Redis: REDIS_URL first ... */
    setenv("REDIS_URL", "redis://envuser:envpass@env-url:6500/1", 1);
    setenv("REDIS_HOST", "env-host", 1);
    c = ok("model_list: []\n");
    r = &c->router;
    assert_string_equal(r->redis_host, "env-url");
    assert_int_equal(r->redis_port, 6500);
    assert_string_equal(r->redis_username, "envuser");
    assert_string_equal(r->redis_password, "envpass");
    assert_int_equal(r->redis_db, 1);
    sy_config_unref(c);

    /* ... else REDIS_HOST (+REDIS_PORT, REDIS_PASSWORD, REDIS_USERNAME); config values win */
    unsetenv("REDIS_URL");
    setenv("REDIS_PORT", "6501", 1);
    setenv("REDIS_PASSWORD", "env-secret", 1);
    setenv("REDIS_USERNAME", "env-user", 1);
    c = ok("router_settings:\n  num_retries: 1\n");
    r = &c->router;
    assert_string_equal(r->redis_host, "env-host");
    assert_int_equal(r->redis_port, 6501);
    assert_string_equal(r->redis_password, "env-secret");
    assert_string_equal(r->redis_username, "env-user");
    assert_int_equal(c->n_warnings, 0);
    sy_config_unref(c);
    c = ok("router_settings:\n  redis_password: from-config\n  redis_port: 6502\n");
    assert_string_equal(c->router.redis_host, "env-host");
    assert_int_equal(c->router.redis_port, 6502);
    assert_string_equal(c->router.redis_password, "from-config");
    sy_config_unref(c);

    /* a redis_host in the config: the environment is not used */
    c = ok("router_settings:\n  redis_host: conf-host\n");
    assert_string_equal(c->router.redis_host, "conf-host");
    assert_int_equal(c->router.redis_port, 6379);
    assert_null(c->router.redis_password);
    sy_config_unref(c);

    /* bad environment values are warnings, not errors */
    setenv("REDIS_PORT", "dummy", 1);
    c = ok("model_list: []\n");
    assert_string_equal(c->router.redis_host, "env-host");
    assert_int_equal(c->router.redis_port, 6379);
    assert_true(has_warning(c, "environment variable REDIS_PORT"));
    sy_config_unref(c);
    unset_redis_env();
    setenv("REDIS_URL", "not-a-url", 1);
    c = ok("model_list: []\n");
    assert_null(c->router.redis_host);
    assert_true(has_warning(c, "t.yaml: environment variable REDIS_URL: expected redis://"));
    sy_config_unref(c);

    /* os.environ/ values are resolved before (corpus 01/21/27 style) */
    unset_redis_env();
    setenv("SYT_REDIS_HOST", "r.example", 1);
    setenv("SYT_REDIS_PORT", "6390", 1);
    c = ok("router_settings:\n  redis_host: os.environ/SYT_REDIS_HOST\n  redis_port: os.environ/SYT_REDIS_PORT\n");
    assert_string_equal(c->router.redis_host, "r.example");
    assert_int_equal(c->router.redis_port, 6390);
    sy_config_unref(c);
    unset_redis_env();
}

static void test_deployment_router_fields(void **state)
{
    (void)state;
    struct sy_config *c = ok("model_list:\n"
                             "  - model_name: m\n"
                             "    litellm_params: {model: openai/m, max_parallel_requests: 8, cooldown_time: 0}\n"
                             "    model_info: {health_check_model: openai/gpt-4o-mini}\n"
                             "  - model_name: m\n"
                             "    litellm_params:\n"
                             "      {model: openai/n, max_parallel_requests: \"2\", cooldown_time: 2.5}\n");
    assert_int_equal(c->deployments[0].max_parallel_requests, 8);
    assert_true(c->deployments[0].cooldown_time_s == 0);
    assert_string_equal(c->deployments[0].health_check_model, "openai/gpt-4o-mini");
    assert_int_equal(c->deployments[1].max_parallel_requests, 2);
    assert_true(c->deployments[1].cooldown_time_s == 2.5);
    assert_null(c->deployments[1].health_check_model);
    assert_int_equal(c->n_warnings, 0); /* no longer "not supported yet" */
    sy_config_unref(c);
}

/* litellm_settings.cache / cache_params and the limiter's general settings (issue 10). */
static void test_cache_and_limits(void **state)
{
    (void)state;
    unset_redis_env();
    struct sy_config *c = ok("model_list: []\n");
    assert_int_equal(c->cache, 0);
    assert_int_equal(c->global_max_parallel, -1);
    assert_int_equal(c->token_rate_limit_type, 0);
    assert_int_equal(c->limits_fail_closed, 0);
    assert_true(c->cache_ttl_s == 600);
    assert_int_equal(c->cache_scope, SY_CACHE_SCOPE_GLOBAL);
    sy_config_unref(c);
    c = ok("litellm_settings:\n  cache: true\n  cache_params: {type: local, switchyard_scope: team}\n");
    assert_int_equal(c->cache_scope, SY_CACHE_SCOPE_TEAM);
    assert_int_equal(c->n_warnings, 0);
    sy_config_unref(c);
    c = ok("litellm_settings:\n  cache: true\n  cache_params: {type: local, switchyard_scope: key}\n");
    assert_int_equal(c->cache_scope, SY_CACHE_SCOPE_KEY);
    sy_config_unref(c);
    c = ok("litellm_settings:\n  cache: true\n  cache_params: {type: local, switchyard_scope: global}\n");
    assert_int_equal(c->cache_scope, SY_CACHE_SCOPE_GLOBAL);
    sy_config_unref(c);
    bad("litellm_settings:\n  cache: true\n  cache_params: {switchyard_scope: tenant}\n",
        "expected global, team or key", NULL);

    c = ok("litellm_settings:\n  cache: true\n  cache_params:\n    type: local\n    ttl: 5\n"
           "    namespace: ns1\n    mode: default_off\n    supported_call_types: [acompletion, aembedding]\n"
           "    switchyard_max_bytes: 65536\n    max_size_in_memory: 50\n"
           "general_settings:\n  global_max_parallel_requests: 7\n  token_rate_limit_type: output\n"
           "  switchyard_rate_limit_redis_failure: closed\n");
    assert_int_equal(c->cache, 1);
    assert_int_equal(c->cache_redis, 0);
    assert_true(c->cache_ttl_s == 5);
    assert_string_equal(c->cache_namespace, "ns1");
    assert_int_equal(c->cache_default_off, 1);
    assert_int_equal(c->cache_call_types, SY_CACHE_CT_CHAT | SY_CACHE_CT_EMBED);
    assert_int_equal(c->cache_max_bytes, 65536);
    assert_int_equal(c->cache_max_items, 50);
    assert_int_equal(c->global_max_parallel, 7);
    assert_int_equal(c->token_rate_limit_type, 2);
    assert_int_equal(c->limits_fail_closed, 1);
    assert_int_equal(c->n_warnings, 0);
    sy_config_unref(c);

    /* a redis cache names the Redis of the router and the limiter */
    c = ok(
        "litellm_settings:\n  cache: true\n  cache_params: {type: redis, host: r.local, port: 6390, password: pw}\n");
    assert_int_equal(c->cache_redis, 1);
    assert_string_equal(c->router.redis_host, "r.local");
    assert_int_equal(c->router.redis_port, 6390);
    assert_string_equal(c->router.redis_password, "pw");
    sy_config_unref(c);
    c = ok("litellm_settings:\n  cache: true\n  cache_params: {type: redis, url: \"redis://u:p@h2:7000/3\"}\n");
    assert_string_equal(c->router.redis_host, "h2");
    assert_int_equal(c->router.redis_port, 7000);
    assert_int_equal(c->router.redis_db, 3);
    sy_config_unref(c);

    bad("litellm_settings:\n  cache: true\n  cache_params: {type: redis}\n", "no Redis server", NULL);
    bad("general_settings:\n  token_rate_limit_type: words\n", "token_rate_limit_type", NULL);
    bad("general_settings:\n  switchyard_rate_limit_redis_failure: maybe\n", "open or closed", NULL);
    bad("litellm_settings:\n  cache_params: {mode: sometimes}\n", "default_off", NULL);
}

static void test_router_print(void **state)
{
    (void)state;
    unset_redis_env();
    struct sy_config *c = ok_groups("router_settings:\n"
                                    "  routing_strategy: latency-based-routing\n"
                                    "  num_retries: 3\n"
                                    "  retry_policy: {TimeoutErrorRetries: 1}\n"
                                    "  cooldown_time: 30\n"
                                    "  allowed_fails: 2\n"
                                    "  fallbacks: [{gpt-4o: [claude, gpt-3.5]}]\n"
                                    "  default_fallbacks: claude\n"
                                    "  model_group_alias: {gpt4: gpt-4o, s: {model: claude, hidden: true}}\n"
                                    "  redis_url: redis://user:very-secret-password-123@redis:6380/1\n");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sy_config_print(c, f);
    fclose(f);
    assert_non_null(strstr(buf, "router: strategy=latency-based-routing (ttl=3600s"));
    assert_non_null(strstr(buf, "num_retries=3 retry_policy=Timeout:1"));
    assert_non_null(strstr(buf, "router: cooldowns=on cooldown_time=30s allowed_fails=2"));
    assert_non_null(strstr(buf, "router: fallbacks: gpt-4o -> claude,gpt-3.5\n"));
    assert_non_null(strstr(buf, "default_fallbacks=claude"));
    assert_non_null(strstr(buf, "router: model_group_alias: gpt4 -> gpt-4o, s -> claude (hidden)"));
    assert_non_null(strstr(buf, "router: redis=redis:6380 db=1 username=user password=***"));
    assert_null(strstr(buf, "very-secret"));
    free(buf);
    sy_config_unref(c);

    c = ok("router_settings: {disable_cooldowns: true}\n");
    buf = NULL;
    f = open_memstream(&buf, &len);
    sy_config_print(c, f);
    fclose(f);
    assert_non_null(strstr(buf, "router: cooldowns=off"));
    assert_non_null(strstr(buf, "router: redis=off"));
    free(buf);
    sy_config_unref(c);
}

/* issue 19: routing keys of deployments, tag filtering, provider budgets,
 * reject_clientside_metadata_tags, vertex_ai defaults from litellm_settings */
static void test_routing_keys(void **state)
{
    (void)state;
    struct sy_config *c =
        ok("model_list:\n"
           "  - model_name: a\n"
           "    litellm_params: {model: openai/a, tags: [t1, t2], region_name: eu, num_retries: 4}\n"
           "  - model_name: b\n"
           "    litellm_params: {model: vertex_ai/gemini-pro}\n"
           "    model_info: {region_name: us-east}\n"
           "  - model_name: c\n"
           "    litellm_params: {model: vertex_ai/gemini-pro, vertex_project: own, vertex_ai_location: x}\n"
           "litellm_settings:\n"
           "  vertex_project: proj-1\n"
           "  vertex_location: europe-west4\n"
           "router_settings:\n"
           "  enable_tag_filtering: true\n"
           "  provider_budget_config:\n"
           "    openai: {budget_limit: 0.5, time_period: 1d}\n"
           "    anthropic: {max_budget: 2, budget_duration: 1mo}\n"
           "general_settings:\n"
           "  reject_clientside_metadata_tags: true\n");
    assert_int_equal(c->n_warnings, 0);
    const struct sy_deployment *a = &c->deployments[0], *b = &c->deployments[1], *d = &c->deployments[2];
    assert_int_equal(a->n_tags, 2);
    assert_string_equal(a->tags[1], "t2");
    assert_string_equal(a->region_name, "eu");
    assert_int_equal(a->num_retries, 4);
    assert_int_equal(b->num_retries, -1);
    assert_string_equal(b->region_name, "us-east");
    assert_string_equal(sy_deployment_param(b, "vertex_project"), "proj-1");
    assert_string_equal(sy_deployment_param(b, "vertex_location"), "europe-west4");
    assert_string_equal(sy_deployment_param(d, "vertex_project"), "own"); /* the deployment's own wins */
    assert_null(sy_deployment_param(d, "vertex_location"));               /* its alias is set */
    assert_null(sy_deployment_param(a, "vertex_project"));                /* only vertex_ai deployments */
    assert_int_equal(c->router.enable_tag_filtering, 1);
    assert_int_equal(c->router.tag_filtering_match_any, 1);
    assert_int_equal(c->router.n_provider_budgets, 2);
    assert_string_equal(c->router.provider_budgets[0].provider, "openai");
    assert_true(c->router.provider_budgets[0].budget_limit == 0.5);
    assert_true(c->router.provider_budgets[0].period_s == 86400);
    assert_true(c->router.provider_budgets[1].budget_limit == 2);
    assert_true(c->router.provider_budgets[1].period_s == 30 * 86400.0);
    assert_string_equal(c->router.provider_budgets[1].period, "1mo");
    assert_int_equal(c->reject_clientside_metadata_tags, 1);
    sy_config_unref(c);

    bad("router_settings:\n  provider_budget_config: [openai]\n", "provider_budget_config", "expected a map");
    bad("router_settings:\n  provider_budget_config:\n    openai: {budget_limit: 1, time_period: 1y}\n", "time_period",
        "expected a duration");
    bad("router_settings:\n  provider_budget_config:\n    openai: {time_period: 1d}\n", "budget_limit",
        "non-negative number");
    bad("model_list:\n  - model_name: a\n    litellm_params: {model: openai/a, num_retries: -1}\n", "num_retries",
        NULL);
}

static int known_sink(const char *name)
{
    static const char *const sinks[] = {"generic_api", "otel", "langfuse", "datadog", "s3", "s3_v2"};
    for (size_t i = 0; i < sizeof sinks / sizeof sinks[0]; i++)
        if (!strcmp(name, sinks[i]))
            return 1;
    return 0;
}

static int has_name(const char *const *l, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(l[i], name))
            return 1;
    return 0;
}

/* The logging callbacks (logging/logging.h): the lists a sink runs, the
 * warnings only for names no sink implements, Python objects pointed to
 * generic_api, and every logging setting of litellm_settings, general_settings
 * and the top level read with its type checked. */
static void test_logging_settings(void **state)
{
    (void)state;
    sy_config_sink_known = known_sink;
    struct sy_config *c = ok("litellm_settings:\n"
                             "  success_callback: [langfuse, prometheus]\n"
                             "  failure_callback: [datadog, lunary]\n"
                             "  callbacks: [otel, my_mod.logger]\n"
                             "  service_callback: [prometheus_system, s3]\n"
                             "  turn_off_message_logging: true\n"
                             "  redact_user_api_key_info: true\n"
                             "  json_logs: true\n"
                             "  s3_callback_params: {s3_bucket_name: logs, s3_region_name: us-east-1}\n"
                             "  default_team_settings:\n"
                             "    - team_id: team-a\n"
                             "      success_callback: [langfuse]\n"
                             "      langfuse_public_key: pk-a\n"
                             "  switchyard_callback_batch_interval: 0.5\n"
                             "  switchyard_callback_queue_max: 50\n"
                             "callback_settings:\n"
                             "  otel: {message_logging: false}\n"
                             "general_settings:\n"
                             "  store_prompts_in_spend_logs: true\n"
                             "  alerting: [slack, email]\n"
                             "  alerting_threshold: 120\n"
                             "  alert_types: [llm_exceptions, budget_alerts]\n"
                             "  alerting_args: {daily_report_frequency: 3600}\n"
                             "  maximum_spend_logs_retention_period: 7d\n"
                             "  maximum_spend_logs_retention_interval: 12h\n");
    /* success: success_callback + callbacks; failure: failure_callback + callbacks */
    assert_int_equal(c->n_success_callbacks, 2);
    assert_true(has_name(c->success_callbacks, c->n_success_callbacks, "langfuse"));
    assert_true(has_name(c->success_callbacks, c->n_success_callbacks, "otel"));
    assert_int_equal(c->n_failure_callbacks, 2);
    assert_true(has_name(c->failure_callbacks, c->n_failure_callbacks, "datadog"));
    assert_true(has_name(c->failure_callbacks, c->n_failure_callbacks, "otel"));
    assert_int_equal(c->prometheus, 1);
    /* lunary (no sink), the Python object, email: nothing for langfuse, datadog, otel, s3 */
    assert_int_equal(c->n_warnings, 3);
    assert_true(has_warning(c, "callback 'lunary' not supported yet, ignored"));
    assert_true(has_warning(c, "callback 'my_mod.logger' is a Python object"));
    assert_true(has_warning(c, "use the generic_api callback (GENERIC_LOGGER_ENDPOINT)"));
    assert_true(has_warning(c, "general_settings.alerting: 'email' not supported, ignored"));
    assert_false(has_warning(c, "'langfuse'"));
    assert_int_equal(c->turn_off_message_logging, 1);
    assert_int_equal(c->redact_user_api_key_info, 1);
    assert_int_equal(c->json_logs, 1);
    assert_string_equal(c->s3_callback_params, "{\"s3_bucket_name\": \"logs\", \"s3_region_name\": \"us-east-1\"}");
    assert_non_null(strstr(c->default_team_settings, "\"langfuse_public_key\": \"pk-a\""));
    assert_true(c->default_team_settings[0] == '[');
    assert_true(c->callback_batch_interval_s == 0.5);
    assert_int_equal(c->callback_queue_max, 50);
    assert_non_null(strstr(c->callback_settings, "\"message_logging\": false"));
    assert_int_equal(c->store_prompts_in_spend_logs, 1);
    assert_int_equal(c->alerting_slack, 1);
    assert_true(c->alerting_threshold_s == 120);
    assert_string_equal(c->alert_types, "[\"llm_exceptions\", \"budget_alerts\"]");
    assert_non_null(strstr(c->alerting_args, "daily_report_frequency"));
    assert_true(c->spend_logs_retention_s == 7 * 86400.0);
    assert_true(c->spend_logs_retention_interval_s == 12 * 3600.0);
    sy_config_unref(c);

    /* defaults */
    c = ok("litellm_settings:\n  callbacks: [prometheus]\n");
    assert_int_equal(c->n_success_callbacks + c->n_failure_callbacks, 0);
    assert_true(c->callback_batch_interval_s == 5);
    assert_int_equal(c->callback_queue_max, 10000);
    assert_true(c->alerting_threshold_s == 300);
    assert_true(c->spend_logs_retention_s == 0);
    assert_true(c->spend_logs_retention_interval_s == 86400);
    assert_int_equal(c->store_prompts_in_spend_logs + c->alerting_slack + c->turn_off_message_logging, 0);
    assert_null(c->s3_callback_params);
    assert_int_equal(c->n_warnings, 0);
    sy_config_unref(c);

    /* general_settings.otel: true is the otel callback, once in each list */
    c = ok("general_settings:\n  otel: true\n");
    assert_int_equal(c->n_success_callbacks, 1);
    assert_string_equal(c->success_callbacks[0], "otel");
    assert_int_equal(c->n_failure_callbacks, 1);
    assert_int_equal(c->n_warnings, 0);
    sy_config_unref(c);
    c = ok("litellm_settings:\n  callbacks: [otel]\ngeneral_settings:\n  otel: true\n");
    assert_int_equal(c->n_success_callbacks, 1);
    assert_int_equal(c->n_failure_callbacks, 1);
    sy_config_unref(c);

    /* an env reference that is not a bool (corpus 35): off, as LiteLLM's `is True`, with a warning */
    c = ok("general_settings:\n  store_prompts_in_spend_logs: maybe\n");
    assert_int_equal(c->store_prompts_in_spend_logs, 0);
    assert_true(has_warning(c, "store_prompts_in_spend_logs: not true or false"));
    sy_config_unref(c);

    /* --detailed_debug and LITELLM_LOG=DEBUG */
    setenv("LITELLM_LOG", "DEBUG", 1);
    c = ok("litellm_settings: {}\n");
    assert_int_equal(c->detailed_debug, 1);
    sy_config_unref(c);
    setenv("LITELLM_LOG", "INFO", 1);
    c = ok("litellm_settings: {}\n");
    assert_int_equal(c->detailed_debug, 0);
    sy_config_unref(c);
    unsetenv("LITELLM_LOG");
    sy_config_detailed_debug = 1;
    c = ok("litellm_settings: {}\n");
    assert_int_equal(c->detailed_debug, 1);
    sy_config_unref(c);
    sy_config_detailed_debug = 0;

    /* wrong types are errors naming the key */
    bad("litellm_settings:\n  s3_callback_params: [a]\n", "t.yaml:2:", "s3_callback_params: expected a map");
    bad("litellm_settings:\n  default_team_settings: {team_id: x}\n",
        "t.yaml:2:", "default_team_settings: expected a list");
    bad("litellm_settings:\n  turn_off_message_logging: sometimes\n", "t.yaml:2:", "turn_off_message_logging");
    bad("litellm_settings:\n  switchyard_callback_queue_max: 0\n", "t.yaml:2:", "switchyard_callback_queue_max");
    bad("general_settings:\n  maximum_spend_logs_retention_period: soon\n",
        "t.yaml:2:", "maximum_spend_logs_retention_period: expected a duration");
    bad("general_settings:\n  maximum_spend_logs_retention_period: 7x\n", "t.yaml:2:", "expected a duration");
    bad("general_settings:\n  maximum_spend_logs_retention_interval: -5\n", "t.yaml:2:", "expected a duration");
    bad("general_settings:\n  alerting_threshold: -1\n", "t.yaml:2:", "alerting_threshold");
    bad("general_settings:\n  alert_types: budget_alerts\n", "t.yaml:2:", "alert_types: expected a list");
    bad("callback_settings: [1]\n", "t.yaml:1:", "callback_settings: expected a map");

    /* a name callback_settings gives a sink's callback_type runs (a named webhook) */
    c = ok("litellm_settings:\n  callbacks: [my_hook, other]\n"
           "callback_settings:\n  my_hook: {callback_type: generic_api, endpoint: http://h}\n"
           "  other: {callback_type: nosuch}\n");
    assert_int_equal(c->n_success_callbacks, 1);
    assert_string_equal(c->success_callbacks[0], "my_hook");
    assert_int_equal(c->n_warnings, 1);
    assert_true(has_warning(c, "callback 'other' not supported yet"));
    sy_config_unref(c);

    /* a team entry without a team_id: warned, kept as text */
    c = ok("litellm_settings:\n  default_team_settings: [{success_callback: [langfuse]}, 3]\n");
    assert_int_equal(c->n_warnings, 2);
    assert_true(has_warning(c, "default_team_settings[0]: not a map with a team_id"));
    sy_config_unref(c);
    sy_config_sink_known = NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        scratch = argv[1];
        mkdir(scratch, 0755);
    }
    unset_redis_env(); /* the loader falls back to REDIS_URL / REDIS_HOST */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_yaml11_scalars),
        cmocka_unit_test(test_type_errors),
        cmocka_unit_test(test_missing_model_is_warning),
        cmocka_unit_test(test_os_environ),
        cmocka_unit_test(test_environment_variables),
        cmocka_unit_test(test_include),
        cmocka_unit_test(test_unknown_keys),
        cmocka_unit_test(test_db_settings_and_python_hooks),
        cmocka_unit_test(test_cache_and_limits),
        cmocka_unit_test(test_duplicates_and_merge),
        cmocka_unit_test(test_provider_and_credentials),
        cmocka_unit_test(test_refcount_and_print),
        cmocka_unit_test(test_load_file),
        cmocka_unit_test(test_router_strategies),
        cmocka_unit_test(test_router_fallbacks),
        cmocka_unit_test(test_router_fallback_groups),
        cmocka_unit_test(test_router_precedence),
        cmocka_unit_test(test_router_policies),
        cmocka_unit_test(test_router_errors),
        cmocka_unit_test(test_router_aliases),
        cmocka_unit_test(test_router_redis),
        cmocka_unit_test(test_routing_keys),
        cmocka_unit_test(test_deployment_router_fields),
        cmocka_unit_test(test_router_print),
        cmocka_unit_test(test_pass_through_endpoints),
        cmocka_unit_test(test_logging_settings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
