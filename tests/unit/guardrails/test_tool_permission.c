/* test_tool_permission.c - the tool_permission kind
 * (src/guardrails/local/tool_permission.c): corpus config 08's rules (globs)
 * on tool calls in answers, LiteLLM's exact pre_call and post_call block
 * messages, violation_message_template, regex rules, allowed_param_patterns,
 * rewrite of chat / Anthropic / Responses answers and of requests (exact
 * JSON), and rules that fail to load.
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

#include "guardrails/guardrail.h"
#include "lib/gtest.h"

/* corpus config 08, litellm_params as JSON */
static const char *cfg08 =
    "{\"guardrail\": \"tool_permission\", \"mode\": \"post_call\", \"default_on\": true,"
    " \"violation_message_template\": \"this violates our org policy, we don't support executing {tool_name} "
    "commands\","
    " \"rules\": [{\"id\": \"allow_bash\", \"tool_name\": \"Bash\", \"decision\": \"allow\"},"
    "  {\"id\": \"allow_github_mcp\", \"tool_name\": \"mcp__github_*\", \"decision\": \"allow\"},"
    "  {\"id\": \"allow_aws_documentation\", \"tool_name\": \"mcp__aws-documentation_*_documentation\", \"decision\": "
    "\"allow\"},"
    "  {\"id\": \"deny_read_commands\", \"tool_name\": \"Read\", \"decision\": \"Deny\"}],"
    " \"default_action\": \"deny\", \"on_disallowed_action\": \"block\"}";

static int open_guard(struct sy_guard *g, const char *params, unsigned modes, char *err, size_t errlen)
{
    return gt_open(g, "tool_permission", "tool-permission-guardrail", modes, params, err, errlen);
}

static void run(const struct sy_guard *g, unsigned phase, enum sy_gdialect d, const char *body,
                const struct sy_gtool *tools, size_t n, struct sy_gresult *r)
{
    struct sy_ginput in = gt_input(phase, d, body, NULL, 0, tools, n);
    memset(r, 0, sizeof *r);
    g->ops->check(g, &in, r);
}

static struct sy_gtool call(const char *name, const char *args)
{
    return (struct sy_gtool){.name = name, .name_len = strlen(name), .args = args, .args_len = args ? strlen(args) : 0};
}

static void test_config08(void **state)
{
    (void)state;
    struct sy_guard g;
    char err[256];
    assert_int_equal(open_guard(&g, cfg08, SY_GM_POST, err, sizeof err), 0);
    struct sy_gresult r;
    const char *allowed[] = {"Bash", "mcp__github_create_issue", "mcp__github_",
                             "mcp__aws-documentation_search_documentation"};
    for (size_t i = 0; i < 4; i++) {
        struct sy_gtool t = call(allowed[i], "{}");
        run(&g, SY_GM_POST, SY_GD_CHAT, NULL, &t, 1, &r);
        assert_int_equal(r.verdict, SY_GV_PASS);
        sy_gresult_free(&r);
    }
    struct sy_gtool t[2] = {call("Bash", "{\"command\":\"ls\"}"), call("Read", "{\"file_path\":\"/etc/passwd\"}")};
    run(&g, SY_GM_POST, SY_GD_MESSAGES, NULL, t, 2, &r);
    assert_int_equal(r.verdict, SY_GV_BLOCK);
    assert_int_equal(r.status, 400);
    assert_string_equal(r.message, "Guardrail raised an exception, Guardrail: tool-permission-guardrail, Message: this "
                                   "violates our org policy, we don't support executing Read commands");
    assert_string_equal(r.detail, "{\"denied_tools\":[\"Read\"]}");
    sy_gresult_free(&r);
    /* default deny; case matters, as LiteLLM's regexes */
    const char *denied[] = {"Write", "bash", "mcp__gitlab_x", "mcp__aws-documentation_search"};
    for (size_t i = 0; i < 4; i++) {
        struct sy_gtool d = call(denied[i], NULL);
        run(&g, SY_GM_POST, SY_GD_RESPONSES, NULL, &d, 1, &r);
        assert_int_equal(r.verdict, SY_GV_BLOCK);
        sy_gresult_free(&r);
    }
    g.ops->close(&g);
}

static void test_messages(void **state)
{
    (void)state;
    struct sy_guard g;
    char err[256];
    /* pre_call: str() of HTTPException's detail dict (a quote in the message: repr uses double quotes) */
    assert_int_equal(open_guard(&g, "{\"rules\": []}", SY_GM_PRE, err, sizeof err), 0);
    struct sy_gtool t = call("get_current_weather", NULL);
    struct sy_gresult r;
    run(&g, SY_GM_PRE, SY_GD_CHAT, NULL, &t, 1, &r);
    assert_int_equal(r.verdict, SY_GV_BLOCK);
    assert_string_equal(r.message, "{'error': 'Violated guardrail policy', 'detection_message': \"Tool "
                                   "'get_current_weather' denied by default action\"}");
    sy_gresult_free(&r);
    /* post_call: the documented default message */
    run(&g, SY_GM_POST, SY_GD_CHAT, NULL, &t, 1, &r);
    assert_string_equal(r.message, "Guardrail raised an exception, Guardrail: tool-permission-guardrail, Message: Tool "
                                   "'get_current_weather' denied by default action");
    sy_gresult_free(&r);
    g.ops->close(&g);
    /* templates: rule_id None by default, default_message, {{ }}, and one Python cannot format */
    assert_int_equal(
        open_guard(&g,
                   "{\"violation_message_template\": \"{{{tool_name}}} rule={rule_id}: {default_message}\","
                   " \"rules\": [{\"id\": \"no_rm\", \"tool_name\": \"rm_*\", \"decision\": \"deny\"}]}",
                   SY_GM_POST, err, sizeof err),
        0);
    t = call("rm_rf", NULL);
    run(&g, SY_GM_POST, SY_GD_CHAT, NULL, &t, 1, &r);
    assert_string_equal(r.message,
                        "Guardrail raised an exception, Guardrail: tool-permission-guardrail, Message: {rm_rf} "
                        "rule=no_rm: Tool 'rm_rf' denied by rule 'no_rm'");
    sy_gresult_free(&r);
    t = call("other", NULL);
    run(&g, SY_GM_POST, SY_GD_CHAT, NULL, &t, 1, &r);
    assert_string_equal(r.message,
                        "Guardrail raised an exception, Guardrail: tool-permission-guardrail, Message: {other} "
                        "rule=None: Tool 'other' denied by default action");
    sy_gresult_free(&r);
    g.ops->close(&g);
    assert_int_equal(
        open_guard(&g, "{\"violation_message_template\": \"no {tool} here\"}", SY_GM_POST, err, sizeof err), 0);
    run(&g, SY_GM_POST, SY_GD_CHAT, NULL, &t, 1, &r);
    assert_string_equal(r.message,
                        "Guardrail raised an exception, Guardrail: tool-permission-guardrail, Message: Tool 'other' "
                        "denied by default action");
    sy_gresult_free(&r);
    g.ops->close(&g);
}

static void test_regex_and_params(void **state)
{
    (void)state;
    struct sy_guard g;
    char err[256];
    assert_int_equal(
        open_guard(
            &g,
            "{\"rules\": [{\"id\": \"gh\", \"tool_name\": \"^mcp__github_.*$\", \"decision\": \"allow\"},"
            " {\"id\": \"mail-domain\", \"tool_name\": \"send_email\", \"decision\": \"allow\","
            "  \"allowed_param_patterns\": {\"to[]\": \"^.+@berri\\\\.ai$\", \"subject\": \"^.{1,12}$\"}},"
            " {\"id\": \"typed\", \"tool_type\": \"function\", \"tool_name\": \"calc\", \"decision\": \"allow\"}],"
            " \"default_action\": \"deny\"}",
            SY_GM_POST, err, sizeof err),
        0);
    struct sy_gresult r;
    struct sy_gtool t = call("mcp__github_list", NULL);
    run(&g, SY_GM_POST, SY_GD_CHAT, NULL, &t, 1, &r);
    assert_int_equal(r.verdict, SY_GV_PASS);
    t = call("calc", "{}");
    run(&g, SY_GM_POST, SY_GD_CHAT, NULL, &t, 1, &r);
    assert_int_equal(r.verdict, SY_GV_PASS);
    t = call("send_email", "{\"to\": [\"a@berri.ai\", \"b@berri.ai\"], \"subject\": \"hi\"}");
    run(&g, SY_GM_POST, SY_GD_CHAT, NULL, &t, 1, &r);
    assert_int_equal(r.verdict, SY_GV_PASS);
    t = call("send_email", "{\"to\": [\"a@berri.ai\", \"x@evil.com\"], \"subject\": \"hi\"}");
    run(&g, SY_GM_POST, SY_GD_CHAT, NULL, &t, 1, &r);
    assert_int_equal(r.verdict, SY_GV_BLOCK);
    assert_string_equal(r.message,
                        "Guardrail raised an exception, Guardrail: tool-permission-guardrail, Message: Value "
                        "'x@evil.com' for path 'to[]' does not match allowed pattern '^.+@berri\\.ai$' for "
                        "tool 'send_email'");
    sy_gresult_free(&r);
    t = call("send_email", "{\"to\": [\"a@berri.ai\"]}");
    run(&g, SY_GM_POST, SY_GD_CHAT, NULL, &t, 1, &r);
    assert_string_equal(r.message, "Guardrail raised an exception, Guardrail: tool-permission-guardrail, Message: "
                                   "Missing value for path 'subject' required by rule 'mail-domain'");
    sy_gresult_free(&r);
    t = call("send_email", "not json");
    run(&g, SY_GM_POST, SY_GD_CHAT, NULL, &t, 1, &r);
    assert_string_equal(r.message, "Guardrail raised an exception, Guardrail: tool-permission-guardrail, Message: Tool "
                                   "'send_email' is missing arguments required by rule 'mail-domain'");
    sy_gresult_free(&r);
    /* a number is compared as Python's str() of it */
    g.ops->close(&g);
    assert_int_equal(open_guard(&g,
                                "{\"rules\": [{\"id\": \"n\", \"tool_name\": \"f\", \"decision\": \"allow\","
                                " \"allowed_param_patterns\": {\"a.b\": \"1\\\\.5|True\"}}]}",
                                SY_GM_POST, err, sizeof err),
                     0);
    t = call("f", "{\"a\": {\"b\": 1.5}}");
    run(&g, SY_GM_POST, SY_GD_CHAT, NULL, &t, 1, &r);
    assert_int_equal(r.verdict, SY_GV_PASS);
    t = call("f", "{\"a\": [{\"b\": true}]}");
    run(&g, SY_GM_POST, SY_GD_CHAT, NULL, &t, 1, &r);
    assert_int_equal(r.verdict, SY_GV_BLOCK); /* the path is a[].b, not a.b */
    sy_gresult_free(&r);
    g.ops->close(&g);
}

static void test_bad_rules(void **state)
{
    (void)state;
    struct sy_guard g;
    char err[256];
    assert_int_equal(
        open_guard(&g, "{\"rules\": [{\"tool_name\": \"x\", \"decision\": \"allow\"}]}", SY_GM_PRE, err, sizeof err),
        -1);
    assert_int_equal(open_guard(&g, "{\"rules\": [{\"id\": \"a\", \"tool_name\": \"x\", \"decision\": \"maybe\"}]}",
                                SY_GM_PRE, err, sizeof err),
                     -1);
    assert_int_equal(open_guard(&g, "{\"rules\": [{\"id\": \"a\", \"tool_name\": \"  \", \"decision\": \"allow\"}]}",
                                SY_GM_PRE, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "at least a tool_name or tool_type"));
    assert_int_equal(open_guard(&g,
                                "{\"rules\": [{\"id\": \"bad\", \"tool_name\": \"^(x$\", \"decision\": \"allow\"}]}",
                                SY_GM_PRE, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "Invalid regex for tool_name in rule 'bad'"));
    assert_int_equal(open_guard(&g, "{\"on_disallowed_action\": \"warn\"}", SY_GM_PRE, err, sizeof err), -1);
    assert_int_equal(open_guard(&g, "{\"default_action\": \"ALLOW\"}", SY_GM_PRE, err, sizeof err), 0);
    struct sy_gtool t = call("anything", NULL);
    struct sy_gresult r;
    run(&g, SY_GM_PRE, SY_GD_CHAT, NULL, &t, 1, &r);
    assert_int_equal(r.verdict, SY_GV_PASS);
    g.ops->close(&g);
}

static const char *rewrite_params = "{\"on_disallowed_action\": \"rewrite\", \"rules\": [{\"id\": \"allow_bash\", "
                                    "\"tool_name\": \"Bash\", \"decision\": \"allow\"}, {\"id\": \"deny_read\", "
                                    "\"tool_name\": \"Read\", \"decision\": \"deny\"}]}";

static void expect_body(unsigned phase, enum sy_gdialect d, const char *body, const struct sy_gtool *t, size_t n,
                        const char *want)
{
    struct sy_guard g;
    char err[256];
    assert_int_equal(open_guard(&g, rewrite_params, phase, err, sizeof err), 0);
    struct sy_gresult r;
    run(&g, phase, d, body, t, n, &r);
    assert_int_equal(r.verdict, SY_GV_MASKED);
    assert_non_null(r.body);
    assert_int_equal(r.body_len, strlen(r.body));
    if (strcmp(r.body, want))
        fprintf(stderr, " got: %s\nwant: %s\n", r.body, want);
    assert_string_equal(r.body, want);
    sy_gresult_free(&r);
    g.ops->close(&g);
}

static void test_rewrite(void **state)
{
    (void)state;
    struct sy_gtool two[2] = {call("Bash", "{\"command\":\"ls\"}"), call("Read", "{\"p\":\"/x\"}")};
    expect_body(
        SY_GM_POST, SY_GD_CHAT,
        "{\"id\":\"c1\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Sure.\","
        "\"tool_calls\":[{\"id\":\"t1\",\"type\":\"function\",\"function\":{\"name\":\"Bash\",\"arguments\":"
        "\"{\\\"command\\\":\\\"ls\\\"}\"}},{\"id\":\"t2\",\"type\":\"function\",\"function\":{\"name\":\"Read\","
        "\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}",
        two, 2,
        "{\"id\":\"c1\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Sure.\\n\\n"
        "Permission denied: Tool 'Read' denied by rule 'deny_read' (Rule: deny_read)\",\"tool_calls\":[{\"id\":"
        "\"t1\",\"type\":\"function\",\"function\":{\"name\":\"Bash\",\"arguments\":\"{\\\"command\\\":\\\"ls\\\"}\"}}]"
        "},"
        "\"finish_reason\":\"tool_calls\"}]}");
    struct sy_gtool one = call("Read", "{}");
    expect_body(
        SY_GM_POST, SY_GD_CHAT,
        "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"t2\","
        "\"type\":\"function\",\"function\":{\"name\":\"Read\",\"arguments\":\"{}\"}}]},\"finish_reason\":"
        "\"tool_calls\"}]}",
        &one, 1,
        "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"Permission denied: Tool 'Read' denied "
        "by rule 'deny_read' (Rule: deny_read)\"},\"finish_reason\":\"stop\"}]}");
    expect_body(
        SY_GM_POST, SY_GD_MESSAGES,
        "{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"tu1\",\"name\":"
        "\"Read\",\"input\":{\"p\":\"/x\"}}],\"stop_reason\":\"tool_use\"}",
        &one, 1,
        "{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Permission denied: "
        "Tool 'Read' denied by rule 'deny_read' (Rule: deny_read)\"}],\"stop_reason\":\"end_turn\"}");
    expect_body(
        SY_GM_POST, SY_GD_RESPONSES,
        "{\"object\":\"response\",\"output\":[{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":"
        "\"output_text\",\"text\":\"Let me read.\",\"annotations\":[]}]},{\"type\":\"function_call\",\"call_id\":"
        "\"c\",\"name\":\"Read\",\"arguments\":\"{}\"}]}",
        &one, 1,
        "{\"object\":\"response\",\"output\":[{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":"
        "\"output_text\",\"text\":\"Let me read.\\n\\nPermission denied: Tool 'Read' denied by rule 'deny_read' "
        "(Rule: deny_read)\",\"annotations\":[]}]}]}");
    /* pre_call: the denied tools leave the request; none left: tools and tool_choice go */
    struct sy_gtool tools[2] = {call("Bash", NULL), call("Read", NULL)};
    expect_body(SY_GM_PRE, SY_GD_CHAT,
                "{\"model\":\"m\",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"Bash\"}},{\"type\":"
                "\"function\",\"function\":{\"name\":\"Read\"}}],\"tool_choice\":{\"type\":\"function\",\"function\":"
                "{\"name\":\"Read\"}}}",
                tools, 2, "{\"model\":\"m\",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"Bash\"}}]}");
    expect_body(
        SY_GM_PRE, SY_GD_MESSAGES,
        "{\"model\":\"m\",\"tools\":[{\"name\":\"Read\",\"input_schema\":{}}],\"tool_choice\":{\"type\":\"any\"}}",
        &tools[1], 1, "{\"model\":\"m\"}");
    /* a stream has no body here: a denied call blocks */
    struct sy_guard g;
    char err[256];
    assert_int_equal(open_guard(&g, rewrite_params, SY_GM_POST, err, sizeof err), 0);
    struct sy_gresult r;
    run(&g, SY_GM_POST, SY_GD_CHAT, NULL, &one, 1, &r);
    assert_int_equal(r.verdict, SY_GV_BLOCK);
    sy_gresult_free(&r);
    g.ops->close(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config08),  cmocka_unit_test(test_messages), cmocka_unit_test(test_regex_and_params),
        cmocka_unit_test(test_bad_rules), cmocka_unit_test(test_rewrite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
