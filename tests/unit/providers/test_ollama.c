/* test_ollama.c - the native Ollama adapter (providers/ollama.c) against its
 * golden files (golden/ollama/<case>.txt, the format test_cohere.c describes;
 * `stream` sections are NDJSON fed through the NDJSON framer), plus
 * configure(). */
#define ADAPTER       sy_adapter_ollama
#define SUBDIR        "ollama"
#define ENV_VARS      "OLLAMA_API_BASE", "OLLAMA_API_KEY"
#define DEFAULT_MODEL "llama3.2"
#include "test_cohere.c"

static void t_configure(void **state)
{
    (void)state;
    struct sy_kv kv[2] = {{"additional_drop_params", "[\"seed\"]"}};
    struct sy_deployment d = {.params = kv, .n_params = 1, .max_tokens = 256};
    struct sy_pconf pc = {0};
    char err[256];
    for (const char *const *v = env_vars; *v; v++)
        unsetenv(*v);
    assert_int_equal(ADAPTER.configure(&d, 1, &pc, err, sizeof err), 0);
    assert_string_equal(pc.base, "http://localhost:11434");
    assert_null(pc.key); /* the key is optional */
    assert_true(pc.drop_params);
    assert_int_equal(pc.n_drop_extra, 1);
    assert_int_equal(pc.max_tokens, 256);
    sy_pconf_free(&pc);

    /* an OpenAI-compatible base (/v1) or a full endpoint is cut back to the root */
    static const char *const bases[][2] = {
        {"http://gpu-box:11434/v1", "http://gpu-box:11434"},
        {"http://gpu-box:11434/v1/", "http://gpu-box:11434"},
        {"https://ollama.example/api/chat", "https://ollama.example"},
        {"https://ollama.example/prefix/api/", "https://ollama.example/prefix"},
        {"http://h:1", "http://h:1"},
    };
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        memset(&pc, 0, sizeof pc);
        setenv("OLLAMA_API_BASE", bases[i][0], 1);
        d.n_params = 0;
        assert_int_equal(ADAPTER.configure(&d, 0, &pc, err, sizeof err), 0);
        assert_string_equal(pc.base, bases[i][1]);
        assert_false(pc.drop_params);
        sy_pconf_free(&pc);
    }

    /* api_base of the deployment wins over the environment; OLLAMA_API_KEY */
    memset(&pc, 0, sizeof pc);
    setenv("OLLAMA_API_KEY", "ok-1", 1);
    kv[0] = (struct sy_kv){"drop_params", "false"};
    d.n_params = 1;
    d.api_base = "http://10.0.0.2:11434/";
    assert_int_equal(ADAPTER.configure(&d, 1, &pc, err, sizeof err), 0);
    assert_string_equal(pc.base, "http://10.0.0.2:11434");
    assert_string_equal(pc.key, "ok-1");
    assert_false(pc.drop_params); /* litellm_params beats the global flag */
    sy_pconf_free(&pc);
    for (const char *const *v = env_vars; *v; v++)
        unsetenv(*v);
}

static void t_table(void **state)
{
    (void)state;
    assert_string_equal(ADAPTER.name, "ollama");
    assert_int_equal(ADAPTER.framing, SY_FRAME_NDJSON);
}

/* Tool call ids are deterministic: the same response id gives the same ids. */
static void t_tool_ids(void **state)
{
    (void)state;
    const char *body = "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":["
                       "{\"function\":{\"name\":\"a\",\"arguments\":{}}},{\"function\":{\"name\":\"b\",\"arguments\""
                       ":{\"x\":1}}}]},\"done\":true}";
    char *outs[3];
    for (int i = 0; i < 3; i++) {
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_pconf pc = {.base = "http://h"};
        struct sy_xctx x = {.pc = &pc, .model = "m", .arena = &a};
        struct sy_xstate st;
        state_init(&st);
        if (i == 2)
            snprintf(st.id, sizeof st.id, "chatcmpl-other");
        struct sy_buf out;
        sy_buf_init(&out, 1 << 20);
        assert_int_equal(ADAPTER.decode_response(&x, &st, body, strlen(body), &out), 0);
        outs[i] = out.p;
        sy_arena_free(&a);
    }
    assert_string_equal(outs[0], outs[1]);
    assert_string_not_equal(outs[0], outs[2]);
    assert_non_null(strstr(outs[0], "\"id\":\"call_"));
    for (int i = 0; i < 3; i++)
        free(outs[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_table),
        cmocka_unit_test(t_configure),
        cmocka_unit_test(t_tool_ids),
        cmocka_unit_test(t_golden),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
