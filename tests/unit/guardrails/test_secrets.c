/* test_secrets.c - the hide_secrets kind (src/guardrails/local/secrets.c):
 * each family redacted to LiteLLM's "[REDACTED]" (exact texts), the
 * keyword and entropy rules and their negatives (prose, quoted words, short
 * keys), every occurrence of a found value, the whole PEM block, the block
 * action's message, detect_secrets_config's plugin selection, the three
 * dialects, and a 1 MB text (its cost per KB is printed, never asserted).
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
#include <time.h>

#include "core/buf.h"
#include "guardrails/guardrail.h"
#include "lib/gtest.h"

static int open_guard(struct sy_guard *g, const char *params, char *err, size_t errlen)
{
    return gt_open(g, "hide_secrets", "hide-secrets", SY_GM_PRE, params, err, errlen);
}

static char *redact(const char *params, const char *text, struct sy_gresult *keep)
{
    struct sy_guard g;
    char err[256];
    assert_int_equal(open_guard(&g, params, err, sizeof err), 0);
    struct sy_gseg s = gt_seg(NULL, text, 0);
    struct sy_ginput in = gt_input(SY_GM_PRE, SY_GD_CHAT, NULL, &s, 1, NULL, 0);
    struct sy_gresult r = {0};
    g.ops->check(&g, &in, &r);
    char *out = NULL;
    if (r.verdict == SY_GV_MASKED)
        out = strdup(r.repl[0]);
    else if (r.verdict == SY_GV_PASS)
        out = strdup(text);
    if (keep)
        *keep = r;
    else
        sy_gresult_free(&r);
    g.ops->close(&g);
    return out;
}

static void expect(const char *text, const char *want)
{
    char *got = redact("{}", text, NULL);
    assert_non_null(got);
    if (strcmp(got, want))
        fprintf(stderr, "text: %s\n got: %s\nwant: %s\n", text, got, want);
    assert_string_equal(got, want);
    free(got);
}

static void test_families(void **state)
{
    (void)state;
    expect("key AKIAIOSFODNN7EXAMPLE here", "key [REDACTED] here");
    expect("aws_secret = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY1", "aws_secret = [REDACTED]");
    expect("my AWS creds: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY ok", "my AWS creds: [REDACTED] ok");
    expect("token ghp_0123456789abcdefghijABCDEFGHIJ012345 used", "token [REDACTED] used");
    expect("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXY!",
           "[REDACTED]!");
    expect("use sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOP now", "use [REDACTED] now");
    expect("old sk-abcdefghijklmnopqrstT3BlbkFJabcdefghijklmnopqrst.", "old [REDACTED].");
    expect("claude sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH-xyz_AA", "claude [REDACTED]");
    expect("slack xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx", "slack [REDACTED]");
    expect("hook https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX done",
           "hook [REDACTED] done");
    expect("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe [REDACTED]");
    expect("maps AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe", "maps [REDACTED]");
    expect("DefaultEndpointsProtocol=https;AccountName=x;AccountKey="
           "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;EndpointSuffix=x",
           "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=[REDACTED];EndpointSuffix=x");
    expect("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
           "jwt [REDACTED] end");
    expect("db postgres://admin:s3cr3tPass@db.example.com:5432/app",
           "db postgres://admin:[REDACTED]@db.example.com:5432/app");
    expect("npm npm_abcdefghijklmnopqrstuvwxyz0123456789 hf hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
           "npm [REDACTED] hf [REDACTED]");
}

static void test_pem_block(void **state)
{
    (void)state;
    expect("key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc+/=\n-----END RSA PRIVATE KEY-----\nthanks",
           "key:\n[REDACTED]\nthanks");
    /* no END: the base64 body goes */
    expect("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAA!", "[REDACTED]!");
    /* a public key is no secret */
    expect("-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----",
           "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----");
}

static void test_keyword_and_entropy(void **state)
{
    (void)state;
    /* LiteLLM's documented examples */
    expect("Hey, how's it going, API_KEY = 'sk_1234567890abcdef'", "Hey, how's it going, API_KEY = '[REDACTED]'");
    expect("what is the value of my open ai key? openai_api_key=sk-1234998222",
           "what is the value of my open ai key? openai_api_key=[REDACTED]");
    expect("{\"password\": \"hunter22\", \"user\": \"bob\"}", "{\"password\": \"[REDACTED]\", \"user\": \"bob\"}");
    expect("Password: hunter2 ok", "Password: [REDACTED] ok");
    expect("url?client_secret=abc123xyz&x=1", "url?client_secret=[REDACTED]&x=1");
    expect("config = {\"token\": \"Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg\"}", "config = {\"token\": \"[REDACTED]\"}");
    expect("signing_key = 'f3a9c2e1b7d40a6f9e8d7c6b5a493827'", "signing_key = '[REDACTED]'");
    /* the same value elsewhere in the text goes too, as LiteLLM's str.replace */
    expect("password=Tr0ub4dor3 and again Tr0ub4dor3", "password=[REDACTED] and again [REDACTED]");
    /* negatives */
    const char *keep[] = {
        "Secret: tomorrow we ship",
        "my password is long and the secret is out",
        "She said 'wonderful' and 'magnificent'",
        "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed it",
        "password = ${DB_PASSWORD} and secret: <your-secret> and pwd=*****",
        "sk-1234 is the master key in the docs",
        "if password == other: pass",
        "max_tokens: 1000000",
        "the api_key: none",
        "std::vector<int> x = {1, 2};",
    };
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
        expect(keep[i], keep[i]);
}

static void test_block_and_plugins(void **state)
{
    (void)state;
    struct sy_gresult r;
    char *out =
        redact("{\"action\": \"block\"}", "use AKIAIOSFODNN7EXAMPLE and ghp_0123456789abcdefghijABCDEFGHIJ012345", &r);
    assert_null(out);
    assert_int_equal(r.verdict, SY_GV_BLOCK);
    assert_int_equal(r.status, 400);
    assert_string_equal(r.message, "Secret detected: AWS Access Key, GitHub Token by Guardrail: hide-secrets. Secrets "
                                   "are not allowed in this request.");
    assert_string_equal(r.detail, "{\"detected_secrets\":[\"AWS Access Key\",\"GitHub Token\"]}");
    sy_gresult_free(&r);
    /* only the listed plugins run */
    out = redact("{\"detect_secrets_config\": {\"plugins_used\": [{\"name\": \"StripeDetector\"}, {\"name\": "
                 "\"SoftlayerDetector\"}]}}",
                 "AKIAIOSFODNN7EXAMPLE sk_live_4eC39HqLyjWDarjtT1zdp7dc", NULL);
    assert_string_equal(out, "AKIAIOSFODNN7EXAMPLE [REDACTED]");
    free(out);
    struct sy_guard g;
    char err[128];
    assert_int_equal(open_guard(&g, "{\"action\": \"warn\"}", err, sizeof err), -1);
}

static void test_dialects(void **state)
{
    (void)state;
    struct sy_guard g;
    char err[128];
    assert_int_equal(open_guard(&g, "{}", err, sizeof err), 0);
    const char *bodies[3] = {
        "{\"messages\":[{\"role\":\"user\",\"content\":\"k=AKIAIOSFODNN7EXAMPLE\"}]}",
        ("{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"k="
         "AKIAIOSFODNN7EXAMPLE\"}]}]}"),
        "{\"input\":\"k=AKIAIOSFODNN7EXAMPLE\"}",
    };
    enum sy_gdialect d[3] = {SY_GD_CHAT, SY_GD_MESSAGES, SY_GD_RESPONSES};
    for (int i = 0; i < 3; i++) {
        const char *t = "k=AKIAIOSFODNN7EXAMPLE";
        const char *at = strstr(bodies[i], t);
        struct sy_gseg s = {.text = t, .len = strlen(t), .off = (size_t)(at - bodies[i]) - 1, .raw_len = strlen(t) + 2};
        struct sy_ginput in = {.phase = SY_GM_PRE,
                               .dialect = d[i],
                               .seg = &s,
                               .nseg = 1,
                               .body = bodies[i],
                               .body_len = strlen(bodies[i])};
        struct sy_gresult r = {0};
        g.ops->check(&g, &in, &r);
        assert_int_equal(r.verdict, SY_GV_MASKED);
        assert_string_equal(r.repl[0], "k=[REDACTED]");
        sy_gresult_free(&r);
    }
    g.ops->close(&g);
}

static void test_megabyte(void **state)
{
    (void)state;
    size_t n = 1 << 20;
    char *t = malloc(n + 1);
    const char *filler = "Please refactor fn(a, b) { return a + b; } // key = \"value\"; see http://x.io/p?q=1 ok. ";
    size_t fl = strlen(filler), i = 0, planted = 0;
    while (i + fl + 40 < n) {
        if (i / fl % 50 == 0) {
            memcpy(t + i, "AKIAIOSFODNN7EXAMPLE ", 21);
            i += 21;
            planted++;
        }
        memcpy(t + i, filler, fl);
        i += fl;
    }
    memset(t + i, ' ', n - i);
    t[n] = 0;
    struct sy_guard g;
    char err[128];
    assert_int_equal(open_guard(&g, "{}", err, sizeof err), 0);
    struct sy_gseg s = {.text = t, .len = n, .off = 1, .raw_len = n + 2};
    struct sy_ginput in = {.phase = SY_GM_PRE, .seg = &s, .nseg = 1};
    struct sy_gresult r = {0};
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    g.ops->check(&g, &in, &r);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    double us = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
    printf("# hide_secrets (all detectors): %.2f us/KB over 1 MB (thread CPU time)\n", us / 1024);
    assert_int_equal(r.verdict, SY_GV_MASKED);
    size_t count = 0;
    for (const char *p = r.repl[0]; (p = strstr(p, "[REDACTED]")); p++)
        count++;
    assert_int_equal(count, planted);
    sy_gresult_free(&r);
    /* hostile: prefixes and quotes everywhere */
    for (size_t k = 0; k < n; k++)
        t[k] = "sk-'\"eyJ.:/@=AKIA"[k % 17];
    g.ops->check(&g, &in, &r);
    sy_gresult_free(&r);
    memset(t, 'a', n);
    memcpy(t, "password=", 9);
    g.ops->check(&g, &in, &r);
    sy_gresult_free(&r);
    g.ops->close(&g);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_families),
        cmocka_unit_test(test_pem_block),
        cmocka_unit_test(test_keyword_and_entropy),
        cmocka_unit_test(test_block_and_plugins),
        cmocka_unit_test(test_dialects),
        cmocka_unit_test(test_megabyte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
