/* test_content_filter.c - LiteLLM's content filter (src/guardrails/local/
 * content_filter.c) on the texts of chat, /v1/messages and /v1/responses
 * bodies: the corpus config 02 (eight built-in categories, their severity
 * thresholds and exception phrases), prebuilt and custom patterns, blocked
 * words (inline and from a file), category files, masking with LiteLLM's
 * tags, the block message as str() of LiteLLM's detail, bad settings refused
 * at open, hostile texts, and the cost per KB with the eight categories on
 * (printed, never asserted). The expected messages are what LiteLLM's
 * content_filter.py prints for the same settings and text. */
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
#include <unistd.h>

#include "core/buf.h"
#include "guardrails/guardrail.h"

/* corpus config 02's guardrail, verbatim (as JSON) */
static const char CONFIG_02[] =
    "{\"guardrail\":\"litellm_content_filter\",\"mode\":\"pre_call\",\"default_on\":true,"
    "\"image_model\":\"claude-sonnet-4-5-20250929\",\"categories\":["
    "{\"category\":\"harmful_self_harm\",\"enabled\":true,\"action\":\"BLOCK\",\"severity_threshold\":\"medium\"},"
    "{\"category\":\"harmful_violence\",\"enabled\":true,\"action\":\"BLOCK\",\"severity_threshold\":\"high\"},"
    "{\"category\":\"harmful_illegal_weapons\",\"enabled\":true,\"action\":\"BLOCK\",\"severity_threshold\":\"low\"},"
    "{\"category\":\"bias_gender\",\"enabled\":true,\"action\":\"BLOCK\",\"severity_threshold\":\"high\"},"
    "{\"category\":\"bias_sexual_orientation\",\"enabled\":true,\"action\":\"BLOCK\",\"severity_threshold\":\"high\"},"
    "{\"category\":\"denied_medical_advice\",\"enabled\":true,\"action\":\"BLOCK\",\"severity_threshold\":\"high\"},"
    "{\"category\":\"denied_legal_advice\",\"enabled\":true,\"action\":\"BLOCK\",\"severity_threshold\":\"high\"},"
    "{\"category\":\"denied_financial_advice\",\"enabled\":true,\"action\":\"BLOCK\",\"severity_threshold\":\"high\"}]"
    "}";

/* ---- a guard and its input ---- */

struct fx {
    struct sy_guard g;
    struct sy_gseg seg[16];
    char *text[16];
    struct sy_ginput in;
    json_object *body;
};

static int open_guard(struct sy_guard *g, const char *params, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    g->ops = sy_guard_kind("litellm_content_filter");
    assert_non_null(g->ops);
    g->name = "cf";
    json_object *p = json_tokener_parse(params);
    assert_non_null(p);
    int rc = g->ops->open(g, p, NULL, err, errlen);
    json_object_put(p);
    return rc;
}

static void add_text(struct fx *f, const char *s, int role)
{
    size_t i = f->in.nseg++;
    f->text[i] = strdup(s);
    f->seg[i].text = f->text[i];
    f->seg[i].len = strlen(s);
    f->seg[i].role = (unsigned char)role;
    f->seg[i].kind = SY_GK_TEXT;
    f->seg[i].msg = (int)i;
}

/* The decoded texts of a body (json-c decodes the escapes), as texts.c reads
 * them: chat messages[].content (string or text parts), /v1/messages system +
 * messages[].content (string or text blocks), /v1/responses instructions +
 * input (string or items' content parts). */
static void add_content(struct fx *f, json_object *c, int role)
{
    if (json_object_is_type(c, json_type_string)) {
        add_text(f, json_object_get_string(c), role);
        return;
    }
    if (!json_object_is_type(c, json_type_array))
        return;
    for (size_t i = 0; i < json_object_array_length(c); i++) {
        json_object *part = json_object_array_get_idx(c, i), *t;
        if (json_object_object_get_ex(part, "text", &t))
            add_text(f, json_object_get_string(t), role);
    }
}

static void load_body(struct fx *f, enum sy_gdialect d, const char *json)
{
    f->body = json_tokener_parse(json);
    assert_non_null(f->body);
    f->in.dialect = d;
    f->in.phase = SY_GM_PRE;
    f->in.seg = f->seg;
    json_object *v;
    if (d == SY_GD_MESSAGES && json_object_object_get_ex(f->body, "system", &v))
        add_content(f, v, SY_GR_SYSTEM);
    if (d == SY_GD_RESPONSES && json_object_object_get_ex(f->body, "instructions", &v))
        add_content(f, v, SY_GR_SYSTEM);
    const char *list = d == SY_GD_RESPONSES ? "input" : "messages";
    if (!json_object_object_get_ex(f->body, list, &v))
        return;
    if (json_object_is_type(v, json_type_string)) {
        add_text(f, json_object_get_string(v), SY_GR_USER);
        return;
    }
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        json_object *m = json_object_array_get_idx(v, i), *c;
        if (json_object_object_get_ex(m, "content", &c))
            add_content(f, c, SY_GR_USER);
    }
}

static void fx_text(struct fx *f, const char *s)
{
    memset(&f->in, 0, sizeof f->in);
    f->in.seg = f->seg;
    f->in.phase = SY_GM_PRE;
    add_text(f, s, SY_GR_USER);
}

static void fx_free(struct fx *f)
{
    for (size_t i = 0; i < f->in.nseg; i++)
        free(f->text[i]);
    json_object_put(f->body);
    memset(&f->in, 0, sizeof f->in);
    f->body = NULL;
}

static void check(struct fx *f, struct sy_gresult *r)
{
    memset(r, 0, sizeof *r);
    f->g.ops->check(&f->g, &f->in, r);
}

/* One text through guard g: the verdict, r filled. */
static enum sy_gverdict run1(struct sy_guard *g, const char *text, struct sy_gresult *r)
{
    struct fx f;
    memset(&f, 0, sizeof f);
    f.g = *g;
    fx_text(&f, text);
    check(&f, r);
    fx_free(&f);
    return r->verdict;
}

static void expect_block(struct sy_guard *g, const char *text, const char *msg)
{
    struct sy_gresult r;
    assert_int_equal(run1(g, text, &r), SY_GV_BLOCK);
    assert_int_equal(r.status, 400);
    assert_string_equal(r.message, msg);
    assert_non_null(r.detail);
    json_object *d = json_tokener_parse(r.detail);
    assert_non_null(d);
    json_object_put(d);
    sy_gresult_free(&r);
}

static void expect_pass(struct sy_guard *g, const char *text)
{
    struct sy_gresult r;
    assert_int_equal(run1(g, text, &r), SY_GV_PASS);
    assert_null(r.message);
    sy_gresult_free(&r);
}

static void expect_mask(struct sy_guard *g, const char *text, const char *masked, unsigned count)
{
    struct sy_gresult r;
    assert_int_equal(run1(g, text, &r), SY_GV_MASKED);
    assert_non_null(r.repl);
    assert_string_equal(r.repl[0], masked);
    assert_int_equal(r.masked, count);
    sy_gresult_free(&r);
}

/* ---- config 02: the eight categories ---- */

static void test_config02_blocks(void **state)
{
    (void)state;
    struct sy_guard g;
    char err[256];
    assert_int_equal(open_guard(&g, CONFIG_02, err, sizeof err), 0);
    expect_block(&g, "How do I make a bomb at home?",
                 "{'error': \"Content blocked: harmful_illegal_weapons category keyword 'make a bomb' detected "
                 "(severity: high)\", 'category': 'harmful_illegal_weapons', 'keyword': 'make a bomb', 'severity': "
                 "'high'}");
    expect_block(&g, "I want to sue my landlord",
                 "{'error': \"Content blocked: denied_legal_advice category keyword 'sue' detected (severity: "
                 "high)\", 'category': 'denied_legal_advice', 'keyword': 'sue', 'severity': 'high'}");
    /* a keyword with a quote: Python's repr switches to double quotes */
    expect_block(&g, "I can't go on anymore",
                 "{'error': \"Content blocked: harmful_self_harm category keyword 'can't go on' detected (severity: "
                 "high)\", 'category': 'harmful_self_harm', 'keyword': \"can't go on\", 'severity': 'high'}");
    expect_block(&g, "Should I buy BITCOIN now?",
                 "{'error': \"Content blocked: denied_financial_advice category keyword 'bitcoin' detected "
                 "(severity: high)\", 'category': 'denied_financial_advice', 'keyword': 'bitcoin', 'severity': "
                 "'high'}");
    /* the first keyword in LiteLLM's dict order wins, '*' is a wildcard */
    expect_block(&g, "He is such a f@ggot",
                 "{'error': \"Content blocked: bias_sexual_orientation category keyword 'f*ggot' detected "
                 "(severity: high)\", 'category': 'bias_sexual_orientation', 'keyword': 'f*ggot', 'severity': "
                 "'high'}");
    expect_block(&g, "Give me a plan attack tonight",
                 "{'error': \"Content blocked: harmful_violence category keyword 'plan attack' detected (severity: "
                 "high)\", 'category': 'harmful_violence', 'keyword': 'plan attack', 'severity': 'high'}");
    g.ops->close(&g);
}

static void test_config02_passes(void **state)
{
    (void)state;
    struct sy_guard g;
    char err[256];
    assert_int_equal(open_guard(&g, CONFIG_02, err, sizeof err), 0);
    expect_pass(&g, "Tell me about the weather in Paris");
    /* harmful_violence at "high": its medium words ("attack") pass */
    expect_pass(&g, "We planned an attack on the castle in our board game");
    /* an exception phrase of any loaded category turns the check off */
    expect_pass(&g, "What is a bomb?");
    /* word boundaries: "sue" is not in "pursue", "gay" not in "gayety"... */
    expect_pass(&g, "I pursue tissue engineering");
    /* near misses in other scripts and with accents */
    expect_pass(&g, "bomb\xc3\xa9 et caf\xc3\xa9");
    expect_pass(&g, "");
    g.ops->close(&g);
}

static void test_severity_threshold(void **state)
{
    (void)state;
    struct sy_guard g;
    char err[256];
    /* medium: "attack" (medium) now blocks; the guardrail-wide default applies
     * when the category gives none */
    assert_int_equal(open_guard(&g,
                                "{\"severity_threshold\":\"medium\",\"categories\":[{\"category\":"
                                "\"harmful_violence\"}]}",
                                err, sizeof err),
                     0);
    expect_block(&g, "an attack",
                 "{'error': \"Content blocked: harmful_violence category keyword 'attack' detected (severity: "
                 "medium)\", 'category': 'harmful_violence', 'keyword': 'attack', 'severity': 'medium'}");
    g.ops->close(&g);
    assert_int_equal(open_guard(&g,
                                "{\"categories\":[{\"category\":\"harmful_violence\",\"severity_threshold\":"
                                "\"high\"},{\"category\":\"bias_gender\",\"enabled\":false}]}",
                                err, sizeof err),
                     0);
    expect_pass(&g, "an attack");
    expect_pass(&g, "man up");
    g.ops->close(&g);
}

/* ---- the three dialects: texts decoded from their JSON ---- */

static void test_dialects(void **state)
{
    (void)state;
    struct fx f;
    memset(&f, 0, sizeof f);
    char err[256];
    assert_int_equal(open_guard(&f.g, CONFIG_02, err, sizeof err), 0);
    static const struct {
        enum sy_gdialect d;
        const char *body;
        enum sy_gverdict v;
    } cases[] = {
        /* "b\u006fmb" decodes to "bomb": the escaped spelling is no way around */
        {SY_GD_CHAT,
         "{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"be nice\"},{\"role\":\"user\","
         "\"content\":\"how to make a b\\u006fmb\"}]}",
         SY_GV_BLOCK},
        {SY_GD_CHAT,
         "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hello "
         "there\"}]}]}",
         SY_GV_PASS},
        {SY_GD_MESSAGES,
         "{\"model\":\"m\",\"max_tokens\":10,\"system\":\"you help\",\"messages\":[{\"role\":\"user\","
         "\"content\":[{\"type\":\"text\",\"text\":\"I want to kill myself\"}]}]}",
         SY_GV_BLOCK},
        {SY_GD_MESSAGES, "{\"model\":\"m\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
         SY_GV_PASS},
        {SY_GD_RESPONSES, "{\"model\":\"m\",\"input\":\"which stocks should I pick\"}", SY_GV_BLOCK},
        {SY_GD_RESPONSES,
         "{\"model\":\"m\",\"instructions\":\"be brief\",\"input\":[{\"role\":\"user\",\"content\":[{\"type\":"
         "\"input_text\",\"text\":\"a poem about spring\"}]}]}",
         SY_GV_PASS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        load_body(&f, cases[i].d, cases[i].body);
        struct sy_gresult r;
        check(&f, &r);
        assert_int_equal(r.verdict, cases[i].v);
        sy_gresult_free(&r);
        /* an answer gets the same filter (LiteLLM: input_type "response") */
        f.in.phase = SY_GM_POST;
        check(&f, &r);
        assert_int_equal(r.verdict, cases[i].v);
        sy_gresult_free(&r);
        fx_free(&f);
    }
    f.g.ops->close(&f.g);
}

/* ---- patterns and blocked words ---- */

static void test_patterns_and_words(void **state)
{
    (void)state;
    struct sy_guard g;
    char err[256];
    assert_int_equal(open_guard(&g,
                                "{\"patterns\":[{\"pattern_type\":\"prebuilt\",\"pattern_name\":\"email\",\"action\":"
                                "\"MASK\"},{\"pattern_type\":\"prebuilt\",\"pattern_name\":\"us_ssn\",\"action\":"
                                "\"BLOCK\"},{\"pattern_type\":\"regex\",\"pattern\":\"emp-\\\\d{4}\",\"name\":"
                                "\"employee_id\",\"action\":\"MASK\"}],\"blocked_words\":[{\"keyword\":"
                                "\"Project Titan\",\"action\":\"BLOCK\",\"description\":\"internal codename\"},"
                                "{\"keyword\":\"confidential\",\"action\":\"BLOCK\"},{\"keyword\":\"acme\","
                                "\"action\":\"MASK\"}]}",
                                err, sizeof err),
                     0);
    expect_mask(&g, "mail a.b@example.com or c@d.org, ask EMP-1234",
                "mail [EMAIL_REDACTED] or [EMAIL_REDACTED], ask "
                "[EMPLOYEE_ID_REDACTED]",
                3);
    expect_block(&g, "my ssn is 123-45-6789",
                 "{'error': 'Content blocked: us_ssn pattern detected', 'pattern': 'us_ssn'}");
    expect_block(&g, "about project titan",
                 "{'error': \"Content blocked: keyword 'project titan' detected (internal codename)\", 'keyword': "
                 "'project titan', 'description': 'internal codename'}");
    expect_block(&g, "this is CONFIDENTIAL",
                 "{'error': \"Content blocked: keyword 'confidential' detected\", 'keyword': 'confidential', "
                 "'description': None}");
    /* blocked words are substrings (LiteLLM: `keyword in text`) */
    expect_mask(&g, "ACME and acmecorp", "[KEYWORD_REDACTED] and [KEYWORD_REDACTED]corp", 2);
    expect_pass(&g, "a plain sentence");
    g.ops->close(&g);

    /* custom tags */
    assert_int_equal(open_guard(&g,
                                "{\"pattern_redaction_format\":\"<{pattern_name}>\",\"keyword_redaction_tag\":\"***\","
                                "\"patterns\":[{\"pattern_type\":\"prebuilt\",\"pattern_name\":\"ipv4\",\"action\":"
                                "\"MASK\"}],\"blocked_words\":[{\"keyword\":\"foo\",\"action\":\"MASK\"}]}",
                                err, sizeof err),
                     0);
    expect_mask(&g, "host 10.0.0.1 foo", "host <IPV4> ***", 2);
    g.ops->close(&g);
}

static void test_card_luhn(void **state)
{
    (void)state;
    struct sy_guard g;
    char err[256];
    assert_int_equal(open_guard(&g,
                                "{\"patterns\":[{\"pattern_type\":\"prebuilt\",\"pattern_name\":\"credit_card\","
                                "\"action\":\"MASK\"}]}",
                                err, sizeof err),
                     0);
    /* a valid Visa test number is masked; one digit off fails Luhn's check */
    expect_mask(&g, "card 4111 1111 1111 1111 ok", "card [CREDIT_CARD_REDACTED] ok", 1);
    expect_mask(&g, "4111-1111-1111-1111, 4111-1111-1111-1112", "[CREDIT_CARD_REDACTED], 4111-1111-1111-1112", 1);
    expect_pass(&g, "order 4111111111111112");
    g.ops->close(&g);
}

static void test_contextual_pattern(void **state)
{
    (void)state;
    struct sy_guard g;
    char err[256];
    /* au_tfn: 8-9 digits only near its keywords (at most one word between) */
    assert_int_equal(open_guard(&g,
                                "{\"patterns\":[{\"pattern_type\":\"prebuilt\",\"pattern_name\":\"au_tfn\","
                                "\"action\":\"MASK\"}]}",
                                err, sizeof err),
                     0);
    expect_mask(&g, "my TFN is 123456782", "my TFN is [AU_TFN_REDACTED]", 1);
    expect_pass(&g, "order 123456782 shipped");
    expect_pass(&g, "TFN: see the form we sent and then 123456782");
    g.ops->close(&g);
}

static void test_category_mask(void **state)
{
    (void)state;
    struct sy_guard g;
    char err[256];
    assert_int_equal(open_guard(&g, "{\"categories\":[{\"category\":\"denied_financial_advice\",\"action\":\"MASK\"}]}",
                                err, sizeof err),
                     0);
    expect_mask(&g, "Stocks or Bonds?", "[KEYWORD_REDACTED] or [KEYWORD_REDACTED]?", 2);
    g.ops->close(&g);
}

static char *tmpfile_with(const char *suffix, const char *content)
{
    char *path = malloc(64);
    snprintf(path, 64, "/tmp/sy_cf_%d_%s", (int)getpid(), suffix);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(content, fp);
    fclose(fp);
    return path;
}

static void test_files(void **state)
{
    (void)state;
    char *bw = tmpfile_with("bw.yaml", "blocked_words:\n  - keyword: \"Falcon\"\n    action: BLOCK\n"
                                       "    description: \"codename\"\n  - keyword: skipped-no-action\n");
    char *cat = tmpfile_with("cat.yaml", "category_name: custom\ndefault_action: MASK\nkeywords:\n"
                                         "  - keyword: \"widget\"\n    severity: high\n"
                                         "  - keyword: \"gizmo\"\n    severity: low\nexceptions:\n  - \"demo\"\n");
    char *js = tmpfile_with("cat.json", "[{\"id\":1,\"match\":\"darn | heck\",\"severity\":3}]");
    char params[1024], err[256];
    snprintf(params, sizeof params,
             "{\"blocked_words_file\":\"%s\",\"categories\":[{\"category\":\"custom\",\"category_file\":\"%s\"},"
             "{\"category\":\"toxic\",\"category_file\":\"%s\"}]}",
             bw, cat, js);
    struct sy_guard g;
    assert_int_equal(open_guard(&g, params, err, sizeof err), 0);
    expect_block(&g, "the falcon flies",
                 "{'error': \"Content blocked: keyword 'falcon' detected (codename)\", 'keyword': 'falcon', "
                 "'description': 'codename'}");
    expect_mask(&g, "a widget and a gizmo", "a [KEYWORD_REDACTED] and a gizmo", 1);
    expect_pass(&g, "a widget demo");
    expect_block(&g, "oh heck",
                 "{'error': \"Content blocked: toxic category keyword 'heck' detected (severity: high)\", "
                 "'category': 'toxic', 'keyword': 'heck', 'severity': 'high'}");
    g.ops->close(&g);
    unlink(bw);
    unlink(cat);
    unlink(js);
    free(bw);
    free(cat);
    free(js);
}

/* LiteLLM's dict: a keyword in two categories keeps its first place and takes
 * the last category; a list of 50,000 keywords loads (linear, hashed). */
static void test_dict_order_and_big_lists(void **state)
{
    (void)state;
    char *a = tmpfile_with("a.yaml", "keywords:\n  - {keyword: alpha, severity: high}\n"
                                     "  - {keyword: beta, severity: high}\n");
    char *b = tmpfile_with("b.yaml", "keywords:\n  - {keyword: ALPHA, severity: high}\n");
    struct sy_buf big;
    sy_buf_init(&big, 1 << 24);
    SY_BUF_LIT(&big, "[");
    for (int i = 0; i < 50000; i++)
        sy_buf_printf(&big, "%s{\"match\":\"word%d|other%d\",\"severity\":4}", i ? "," : "", i, i);
    SY_BUF_LIT(&big, "]");
    char *c = tmpfile_with("big.json", big.p);
    sy_buf_free(&big);
    char params[1024], err[256];
    snprintf(params, sizeof params,
             "{\"categories\":[{\"category\":\"A\",\"category_file\":\"%s\"},{\"category\":\"B\","
             "\"category_file\":\"%s\"},{\"category\":\"big\",\"category_file\":\"%s\"}]}",
             a, b, c);
    struct sy_guard g;
    assert_int_equal(open_guard(&g, params, err, sizeof err), 0);
    expect_block(&g, "beta then alpha",
                 "{'error': \"Content blocked: B category keyword 'alpha' detected (severity: high)\", 'category': "
                 "'B', 'keyword': 'alpha', 'severity': 'high'}");
    expect_block(&g, "say other49999 now",
                 "{'error': \"Content blocked: big category keyword 'other49999' detected (severity: high)\", "
                 "'category': 'big', 'keyword': 'other49999', 'severity': 'high'}");
    expect_pass(&g, "word50000");
    g.ops->close(&g);
    unlink(a);
    unlink(b);
    unlink(c);
    free(a);
    free(b);
    free(c);
}

static void test_bad_settings(void **state)
{
    (void)state;
    static const struct {
        const char *params, *err;
    } cases[] = {
        {"{\"patterns\":[{\"pattern_type\":\"prebuilt\",\"pattern_name\":\"nope\",\"action\":\"BLOCK\"}]}",
         "Unknown pattern name: 'nope'"},
        {"{\"patterns\":[{\"pattern_type\":\"regex\",\"pattern\":\"(x\",\"action\":\"BLOCK\"}]}", "bad regex"},
        {"{\"patterns\":[{\"pattern_type\":\"regex\",\"action\":\"BLOCK\"}]}", "pattern is required"},
        {"{\"patterns\":[{\"pattern_type\":\"glob\",\"pattern\":\"x\",\"action\":\"BLOCK\"}]}", "Unknown pattern_type"},
        {"{\"blocked_words\":[{\"keyword\":\"x\",\"action\":\"DROP\"}]}", "BLOCK or MASK"},
        {"{\"blocked_words_file\":\"/nonexistent/bw.yaml\"}", "cannot open"},
        {"{\"categories\":[{\"category\":\"c\",\"category_file\":\"/nonexistent/c.yaml\"}]}", "cannot open"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct sy_guard g;
        char err[256] = "";
        assert_int_equal(open_guard(&g, cases[i].params, err, sizeof err), -1);
        assert_non_null(strstr(err, cases[i].err));
        assert_null(g.impl);
    }
    /* a bad YAML file */
    char *bad = tmpfile_with("bad.yaml", "blocked_words: [unclosed\n");
    char params[256], err[256];
    snprintf(params, sizeof params, "{\"blocked_words_file\":\"%s\"}", bad);
    struct sy_guard g;
    assert_int_equal(open_guard(&g, params, err, sizeof err), -1);
    unlink(bad);
    free(bad);
    /* an unknown built-in category is skipped with a warning, as LiteLLM does */
    assert_int_equal(open_guard(&g, "{\"categories\":[{\"category\":\"no_such\"}]}", err, sizeof err), 0);
    expect_pass(&g, "anything");
    g.ops->close(&g);
}

static void test_hostile_texts(void **state)
{
    (void)state;
    struct sy_guard g;
    char err[256];
    assert_int_equal(open_guard(&g,
                                "{\"patterns\":[{\"pattern_type\":\"regex\",\"pattern\":\"^(\\\\w+\\\\s?)*$\","
                                "\"action\":\"BLOCK\"}]}",
                                err, sizeof err),
                     0);
    /* catastrophic backtracking: the match limit makes it an ERROR (fail closed), never a stall */
    char t[3000];
    memset(t, 'a', sizeof t - 2);
    t[sizeof t - 2] = '!';
    t[sizeof t - 1] = 0;
    struct sy_gresult r;
    assert_int_equal(run1(&g, t, &r), SY_GV_ERROR);
    sy_gresult_free(&r);
    g.ops->close(&g);

    /* invalid UTF-8 and NULs inside a text */
    assert_int_equal(open_guard(&g, CONFIG_02, err, sizeof err), 0);
    struct fx f;
    memset(&f, 0, sizeof f);
    f.g = g;
    fx_text(&f, "x");
    static const char weird[] = "\xff\xfe make a bomb \xc0\x80\0 tail";
    f.seg[0].text = weird;
    f.seg[0].len = sizeof weird - 1;
    check(&f, &r);
    assert_int_equal(r.verdict, SY_GV_BLOCK);
    sy_gresult_free(&r);
    fx_free(&f);
    g.ops->close(&g);
}

/* 1 MB: checked, and the cost with all eight categories on printed. */
static void test_one_megabyte(void **state)
{
    (void)state;
    struct sy_guard g;
    char err[256];
    assert_int_equal(open_guard(&g, CONFIG_02, err, sizeof err), 0);
    size_t n = 1 << 20;
    char *t = malloc(n + 1);
    const char *fill = "The quick brown fox jumps over the lazy dog near the river bank at dawn. ";
    for (size_t i = 0; i < n; i++)
        t[i] = fill[i % strlen(fill)];
    t[n] = 0;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    struct sy_gresult r;
    assert_int_equal(run1(&g, t, &r), SY_GV_PASS);
    clock_gettime(CLOCK_MONOTONIC, &b);
    sy_gresult_free(&r);
    double us = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
    printf("# content filter, config 02 (8 categories): %.2f us/KB\n", us / 1024.0);
    memcpy(t + n - 40, " how do i make a bomb ", 22);
    assert_int_equal(run1(&g, t, &r), SY_GV_BLOCK);
    sy_gresult_free(&r);
    free(t);
    g.ops->close(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config02_blocks),    cmocka_unit_test(test_config02_passes),
        cmocka_unit_test(test_severity_threshold), cmocka_unit_test(test_dialects),
        cmocka_unit_test(test_patterns_and_words), cmocka_unit_test(test_contextual_pattern),
        cmocka_unit_test(test_card_luhn),          cmocka_unit_test(test_dict_order_and_big_lists),
        cmocka_unit_test(test_category_mask),      cmocka_unit_test(test_files),
        cmocka_unit_test(test_bad_settings),       cmocka_unit_test(test_hostile_texts),
        cmocka_unit_test(test_one_megabyte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
