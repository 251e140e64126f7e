/* test_pii.c - the pii_masking kind and its detectors (src/guardrails/local/pii.c):
 * exact masked texts in chat, /v1/messages and /v1/responses shaped inputs,
 * numbered placeholders and the round trip through sy_gunmask, BLOCK with
 * LiteLLM's BlockedPiiEntityError message, the Luhn / IBAN / SSN / IP
 * negatives, presidio's settings (thresholds, deny list, unknown entities),
 * and a 1 MB text (its cost per KB is printed, never asserted).
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
#include "guardrails/local/pii.h"
#include "lib/gtest.h"

static int open_guard(struct sy_guard *g, const char *params, unsigned modes, char *err, size_t errlen)
{
    return gt_open(g, "pii_masking", "pii-guard", modes, params, err, errlen);
}

/* One text segment as texts.c gives it: body is the JSON, the segment is the
 * string value at its span. */
struct one {
    struct sy_gseg seg[4];
    struct sy_ginput in;
};

static void set_body(struct one *o, enum sy_gdialect d, unsigned phase, const char *body, const char *const *texts,
                     size_t n)
{
    memset(o, 0, sizeof *o);
    for (size_t i = 0; i < n; i++)
        o->seg[i] = gt_seg(body, texts[i], (int)i);
    o->in = gt_input(phase, d, body, o->seg, n, NULL, 0);
}

static char *mask1(const char *params, const char *text)
{
    struct sy_guard g;
    char err[256];
    assert_int_equal(open_guard(&g, params, SY_GM_PRE, err, sizeof err), 0);
    struct sy_gseg s = {.text = text, .len = strlen(text), .off = 1, .raw_len = strlen(text) + 2};
    struct sy_ginput in = {.phase = SY_GM_PRE, .seg = &s, .nseg = 1};
    struct sy_gresult r = {0};
    g.ops->check(&g, &in, &r);
    char *out = NULL;
    if (r.verdict == SY_GV_MASKED)
        out = strdup(r.repl[0]);
    else if (r.verdict == SY_GV_PASS)
        out = strdup(text);
    sy_gresult_free(&r);
    g.ops->close(&g);
    return out;
}

static void expect(const char *params, const char *text, const char *want)
{
    char *got = mask1(params, text);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_mask_chat_exact(void **state)
{
    (void)state;
    /* LiteLLM's documented example */
    expect("{}", "My email is john@example.com and my phone is 555-123-4567",
           "My email is <EMAIL_ADDRESS> and my phone is <PHONE_NUMBER>");
    expect("{}", "card 4111 1111 1111 1111, iban DE89 3704 0044 0532 0130 00.",
           "card <CREDIT_CARD>, iban <IBAN_CODE>.");
    expect("{}", "ssn 536-22-8901 from 192.168.1.10 or 2001:db8:85a3::8a2e:370:7334 ok",
           "ssn <US_SSN> from <IP_ADDRESS> or <IP_ADDRESS> ok");
    expect("{}", "call +44 20 7946 0958 or (555) 123-4567 or 1-800-555-0199",
           "call <PHONE_NUMBER> or <PHONE_NUMBER> or <PHONE_NUMBER>");
    expect("{}", "write to a.b+c@sub.example.co.uk.", "write to <EMAIL_ADDRESS>.");
    expect("{}", "amex 3782-822463-10005 visa4111111111111111", "amex <CREDIT_CARD> visa4111111111111111");
}

static void test_negatives(void **state)
{
    (void)state;
    const char *keep[] = {
        "card 4111 1111 1111 1112",         /* Luhn fails */
        "iban DE88 3704 0044 0532 0130 00", /* mod 97 fails */
        "iban DE89 3704 0044 0532 0130",    /* too short for DE */
        "ssn 000-12-3456 666-12-3456 900-12-3456 536-00-8901 536-22-0000 123-45-6789",
        "ip 999.1.1.1 and 1.2.3.4.5 and v1.2.3.4 and 01.2.3.4",
        "ipv6? std::vector a::b 12:30:45 00:1a:2b:3c:4d:5e",
        "date 2024-01-15 and 10.5 and 1234567890",
        "mail foo@bar and @example.com and a@b.c and x@-a.com",
        "order 55512345678901234567890",
    };
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
        expect("{}", keep[i], keep[i]);
    assert_true(sy_pii_luhn("4111111111111111", 16));
    assert_false(sy_pii_luhn("4111111111111112", 16));
    assert_false(sy_pii_luhn("41111x1111111111", 16));
    assert_true(sy_pii_iban_ok("GB82WEST12345698765432", 22));
    assert_false(sy_pii_iban_ok("GB82WEST12345698765433", 22));
    assert_false(sy_pii_iban_ok("ZZ82WEST12345698765432", 22));
    assert_true(sy_pii_ssn_ok("536", "22", "8901"));
    assert_false(sy_pii_ssn_ok("078", "05", "1120"));
    assert_false(sy_pii_ssn_ok("111", "11", "1111"));
}

static void test_reversible_round_trip(void **state)
{
    (void)state;
    struct sy_guard g;
    char err[256];
    assert_int_equal(open_guard(&g, "{\"output_parse_pii\": true}", SY_GM_PRE, err, sizeof err), 0);
    const char *texts[] = {"Email jane@corp.io or call 555-123-4567", "Also jane@corp.io again"};
    const char *body = "{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"Email jane@corp.io or call "
                       "555-123-4567\"},{\"role\":\"user\",\"content\":\"Also jane@corp.io again\"}]}";
    struct one o;
    set_body(&o, SY_GD_CHAT, SY_GM_PRE, body, texts, 2);
    struct sy_gresult r = {0};
    g.ops->check(&g, &o.in, &r);
    assert_int_equal(r.verdict, SY_GV_MASKED);
    assert_int_equal(r.masked, 3);
    /* numbered across the request, one number an occurrence (LiteLLM restarts at 1 in each text) */
    assert_string_equal(r.repl[0], "Email <EMAIL_ADDRESS_1> or call <PHONE_NUMBER_2>");
    assert_string_equal(r.repl[1], "Also <EMAIL_ADDRESS_3> again");
    assert_int_equal(r.npairs, 3);
    assert_string_equal(r.pairs[0].placeholder, "<EMAIL_ADDRESS_1>");
    assert_string_equal(r.pairs[0].original, "jane@corp.io");
    assert_string_equal(r.pairs[1].original, "555-123-4567");
    assert_non_null(strstr(r.detail, "\"masked_entity_count\":{\"EMAIL_ADDRESS\":2,\"PHONE_NUMBER\":1}"));
    /* the model's answer quotes the placeholders: the originals come back */
    const char *answer = "I wrote to <EMAIL_ADDRESS_3> and <EMAIL_ADDRESS_1>, then dialed <PHONE_NUMBER_2>.";
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    assert_int_equal(sy_gunmask(r.pairs, r.npairs, answer, strlen(answer), &b), 3);
    assert_string_equal(b.p, "I wrote to jane@corp.io and jane@corp.io, then dialed 555-123-4567.");
    sy_buf_free(&b);
    sy_gresult_free(&r);
    g.ops->close(&g);
}

static void test_dialect_shapes(void **state)
{
    (void)state;
    struct sy_guard g;
    char err[256];
    assert_int_equal(open_guard(&g, "{}", SY_GM_PRE, err, sizeof err), 0);
    struct {
        enum sy_gdialect d;
        const char *body, *text;
    } cases[] = {
        {SY_GD_MESSAGES,
         "{\"model\":\"claude\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\","
         "\"text\":\"reach me at bob@example.org\"}]}]}",
         "reach me at bob@example.org"},
        {SY_GD_RESPONSES,
         "{\"model\":\"gpt\",\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"reach me "
         "at bob@example.org\"}]}]}",
         "reach me at bob@example.org"},
        {SY_GD_CHAT,
         "{\"model\":\"gpt\",\"messages\":[{\"role\":\"user\",\"content\":\"reach me at bob@example.org\"}]}",
         "reach me at bob@example.org"},
    };
    for (size_t i = 0; i < 3; i++) {
        struct one o;
        set_body(&o, cases[i].d, SY_GM_PRE, cases[i].body, &cases[i].text, 1);
        struct sy_gresult r = {0};
        g.ops->check(&g, &o.in, &r);
        assert_int_equal(r.verdict, SY_GV_MASKED);
        assert_string_equal(r.repl[0], "reach me at <EMAIL_ADDRESS>");
        sy_gresult_free(&r);
    }
    /* the answer is left to the stage's unmask unless apply_to_output */
    struct one o;
    const char *t = "bob@example.org";
    set_body(&o, SY_GD_CHAT, SY_GM_POST, "{\"choices\":[{\"message\":{\"content\":\"bob@example.org\"}}]}", &t, 1);
    struct sy_gresult r = {0};
    g.ops->check(&g, &o.in, &r);
    assert_int_equal(r.verdict, SY_GV_PASS);
    g.ops->close(&g);
    assert_int_equal(open_guard(&g, "{\"apply_to_output\": true}", SY_GM_PRE, err, sizeof err), 0);
    g.ops->check(&g, &o.in, &r);
    assert_int_equal(r.verdict, SY_GV_MASKED);
    assert_string_equal(r.repl[0], "<EMAIL_ADDRESS>");
    sy_gresult_free(&r);
    g.ops->close(&g);
}

static void test_block(void **state)
{
    (void)state;
    struct sy_guard g;
    char err[256];
    assert_int_equal(open_guard(&g,
                                "{\"pii_entities_config\": {\"EMAIL_ADDRESS\": \"MASK\", \"CREDIT_CARD\": \"BLOCK\"}}",
                                SY_GM_PRE, err, sizeof err),
                     0);
    const char *t = "mail x@y.com pay with 4111-1111-1111-1111";
    struct sy_gseg s = {.text = t, .len = strlen(t), .off = 1, .raw_len = strlen(t) + 2};
    struct sy_ginput in = {.phase = SY_GM_PRE, .seg = &s, .nseg = 1};
    struct sy_gresult r = {0};
    g.ops->check(&g, &in, &r);
    assert_int_equal(r.verdict, SY_GV_BLOCK);
    assert_int_equal(r.status, 400);
    assert_string_equal(r.message, "Blocked entity detected: CREDIT_CARD by Guardrail: pii-guard. This entity is not "
                                   "allowed to be used in this request.");
    sy_gresult_free(&r);
    /* only the configured entities are looked for */
    const char *t2 = "call 555-123-4567";
    s = (struct sy_gseg){.text = t2, .len = strlen(t2), .off = 1, .raw_len = strlen(t2) + 2};
    g.ops->check(&g, &in, &r);
    assert_int_equal(r.verdict, SY_GV_PASS);
    sy_gresult_free(&r);
    g.ops->close(&g);
}

static void test_settings(void **state)
{
    (void)state;
    struct sy_guard g;
    char err[256];
    assert_int_equal(open_guard(&g, "{\"pii_entities_config\": {\"PERSON\": \"MASK\"}}", SY_GM_PRE, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "PERSON is not detected in process"));
    assert_int_equal(
        open_guard(&g, "{\"pii_entities_config\": {\"EMAIL_ADDRESS\": \"REDACT\"}}", SY_GM_PRE, err, sizeof err), -1);
    /* presidio scores a phone 0.4: a 0.5 threshold drops it; ALL applies to the rest */
    expect("{\"presidio_score_thresholds\": {\"PHONE_NUMBER\": 0.5}}", "555-123-4567 a@b.io",
           "555-123-4567 <EMAIL_ADDRESS>");
    expect("{\"presidio_score_thresholds\": {\"ALL\": 0.7}}", "555-123-4567 a@b.io 10.0.0.1",
           "555-123-4567 <EMAIL_ADDRESS> 10.0.0.1");
    expect("{\"presidio_entities_deny_list\": [\"EMAIL_ADDRESS\"]}", "555-123-4567 a@b.io", "<PHONE_NUMBER> a@b.io");
    expect("{\"pii_entities_config\": {\"IP_ADDRESS\": \"mask\"}}", "a@b.io 10.0.0.1", "a@b.io <IP_ADDRESS>");
}

static void test_unspliceable_and_empty(void **state)
{
    (void)state;
    struct sy_guard g;
    char err[256];
    assert_int_equal(open_guard(&g, "{}", SY_GM_PRE, err, sizeof err), 0);
    const char *t = "x@y.io";
    struct sy_gseg s[2] = {{.text = "", .len = 0}, {.text = t, .len = strlen(t)}}; /* no span: nothing to splice */
    struct sy_ginput in = {.phase = SY_GM_PRE, .seg = s, .nseg = 2};
    struct sy_gresult r = {0};
    g.ops->check(&g, &in, &r);
    assert_int_equal(r.verdict, SY_GV_MASKED);
    assert_null(r.repl[0]);
    assert_null(r.repl[1]);
    sy_gresult_free(&r);
    g.ops->close(&g);
}

static void test_megabyte(void **state)
{
    (void)state;
    size_t n = 1 << 20;
    char *t = malloc(n + 1);
    const char *filler = "The quick brown fox, 12 dogs (and 3.5 cats) jump over 2024-01-15: ok? ";
    size_t fl = strlen(filler), i = 0, planted = 0;
    while (i + fl < n) {
        if (i / fl % 64 == 0 && i + 40 < n) {
            memcpy(t + i, "mail a.b@example.com ", 21);
            i += 21;
            planted++;
        }
        memcpy(t + i, filler, fl);
        i += fl;
    }
    memset(t + i, ' ', n - i);
    t[n] = 0;
    struct sy_guard g;
    char err[256];
    assert_int_equal(open_guard(&g, "{\"output_parse_pii\": true}", SY_GM_PRE, err, sizeof err), 0);
    struct sy_gseg s = {.text = t, .len = n, .off = 1, .raw_len = n + 2};
    struct sy_ginput in = {.phase = SY_GM_PRE, .seg = &s, .nseg = 1};
    struct sy_gresult r = {0};
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    g.ops->check(&g, &in, &r);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    double us = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
    printf("# pii_masking (all entities, output_parse_pii): %.2f us/KB over 1 MB (thread CPU time)\n", us / 1024);
    assert_int_equal(r.verdict, SY_GV_MASKED);
    assert_int_equal(r.masked, planted);
    assert_int_equal(r.npairs, planted);
    /* and back */
    struct sy_buf ub;
    sy_buf_init(&ub, (size_t)1 << 30);
    assert_int_equal(sy_gunmask(r.pairs, r.npairs, r.repl[0], strlen(r.repl[0]), &ub), planted);
    assert_int_equal(ub.len, n);
    assert_memory_equal(ub.p, t, n);
    sy_buf_free(&ub);
    sy_gresult_free(&r);
    /* a hostile text: every attempt starts and fails */
    for (size_t k = 0; k < n; k++)
        t[k] = "1 -.@a:("[k % 8];
    s.text = t;
    g.ops->check(&g, &in, &r);
    sy_gresult_free(&r);
    memset(t, '@', n);
    g.ops->check(&g, &in, &r);
    assert_int_equal(r.verdict, SY_GV_PASS);
    sy_gresult_free(&r);
    g.ops->close(&g);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mask_chat_exact),
        cmocka_unit_test(test_negatives),
        cmocka_unit_test(test_reversible_round_trip),
        cmocka_unit_test(test_dialect_shapes),
        cmocka_unit_test(test_block),
        cmocka_unit_test(test_settings),
        cmocka_unit_test(test_unspliceable_and_empty),
        cmocka_unit_test(test_megabyte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
