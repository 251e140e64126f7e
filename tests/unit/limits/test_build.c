/* test_build.c - unit tests of sy_lim_build (src/limits/build.c): the
 * descriptors of hand-built key / team / user / member / org / end-user
 * structs, model limits from metadata JSON (LiteLLM's key -> team fallback),
 * the global parallel limit and sy_lim_needs_tokens.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "keys/keys.h"
#include "limits/limits.h"

#define TOKEN "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void budget(struct sy_budget *b, char *id, int64_t rpm, int64_t tpm, int64_t par, char *meta)
{
    memset(b, 0, sizeof *b);
    b->id = id;
    b->max_budget = b->soft_budget = -1;
    b->rpm_limit = rpm;
    b->tpm_limit = tpm;
    b->max_parallel = par;
    b->metadata = meta;
}

struct world {
    struct sy_keyinfo ki;
    struct sy_budget team, user, member, org;
    struct sy_enduser eu;
};

static void world(struct world *w)
{
    memset(w, 0, sizeof *w);
    w->ki.found = 1;
    strcpy(w->ki.token, TOKEN);
    budget(&w->ki.key, TOKEN, -1, -1, -1, NULL);
    w->ki.user_id = "u1";
    w->ki.team_id = "t1";
    w->ki.org_id = "o1";
}

static const struct sy_lim_desc *find(const struct sy_lim_req *lr, enum sy_lim_kind k)
{
    for (unsigned i = 0; i < lr->n; i++)
        if (lr->d[i].kind == k)
            return &lr->d[i];
    return NULL;
}

static void test_names(void **st)
{
    (void)st;
    const char *want[] = {"api_key",       "user",           "team",
                          "team_member",   "end_user",       "organization",
                          "model_per_key", "model_per_team", "model_per_organization",
                          "global"};
    for (int i = 0; i < SY_LIM__COUNT; i++)
        assert_string_equal(sy_lim_kind_names[i], want[i]);
}

static void test_none(void **st)
{
    (void)st;
    struct world w;
    struct sy_lim_req lr;
    world(&w);
    memset(&lr, 0, sizeof lr);
    assert_int_equal(sy_lim_build(&lr, &w.ki, NULL, "gpt-4o", -1), 0);
    assert_int_equal(lr.over, -1);
    assert_int_equal(sy_lim_needs_tokens(&lr), 0);
    memset(&lr, 0, sizeof lr);
    assert_int_equal(sy_lim_build(&lr, NULL, NULL, NULL, -1), 0);
    /* a negative (unknown) key carries no limits */
    w.ki.found = 0;
    w.ki.key.rpm_limit = 5;
    memset(&lr, 0, sizeof lr);
    assert_int_equal(sy_lim_build(&lr, &w.ki, NULL, NULL, -1), 0);
}

static void test_entities(void **st)
{
    (void)st;
    struct world w;
    struct sy_lim_req lr;
    world(&w);
    w.ki.key.rpm_limit = 10;
    w.ki.key.max_parallel = 2;
    budget(&w.user, "u1", -1, 1000, -1, NULL);
    budget(&w.team, "t1", 20, 2000, -1, NULL);
    budget(&w.member, "t1:u1", 3, -1, -1, NULL);
    budget(&w.org, "o1", -1, -1, 7, NULL);
    budget(&w.eu.b, "cust-9", 4, 40, -1, NULL);
    w.eu.found = 1;
    w.ki.user = &w.user;
    w.ki.team = &w.team;
    w.ki.member = &w.member;
    w.ki.org = &w.org;
    memset(&lr, 0, sizeof lr);
    assert_int_equal(sy_lim_build(&lr, &w.ki, &w.eu, "gpt-4o", 100), 7);
    const enum sy_lim_kind order[] = {SY_LIM_API_KEY,  SY_LIM_USER, SY_LIM_TEAM,  SY_LIM_TEAM_MEMBER,
                                      SY_LIM_END_USER, SY_LIM_ORG,  SY_LIM_GLOBAL};
    const char *vals[] = {TOKEN, "u1", "t1", "t1:u1", "cust-9", "o1", "global"};
    const int64_t lim[][3] = {{10, -1, 2}, {-1, 1000, -1}, {20, 2000, -1}, {3, -1, -1},
                              {4, 40, -1}, {-1, -1, 7},    {-1, -1, 100}};
    for (unsigned i = 0; i < lr.n; i++) {
        assert_int_equal(lr.d[i].kind, order[i]);
        assert_string_equal(lr.d[i].value, vals[i]);
        assert_int_equal(lr.d[i].rpm, lim[i][0]);
        assert_int_equal(lr.d[i].tpm, lim[i][1]);
        assert_int_equal(lr.d[i].par, lim[i][2]);
        assert_null(lr.d[i].ctr);
    }
    assert_int_equal(sy_lim_needs_tokens(&lr), 1);
    /* a member row without an id gets "team_id:user_id" */
    w.member.id = NULL;
    memset(&lr, 0, sizeof lr);
    sy_lim_build(&lr, &w.ki, NULL, NULL, -1);
    assert_string_equal(find(&lr, SY_LIM_TEAM_MEMBER)->value, "t1:u1");
    /* an end user that was not found carries nothing */
    w.eu.found = 0;
    memset(&lr, 0, sizeof lr);
    sy_lim_build(&lr, &w.ki, &w.eu, NULL, -1);
    assert_null(find(&lr, SY_LIM_END_USER));
    /* end user alone */
    w.eu.found = 1;
    memset(&lr, 0, sizeof lr);
    assert_int_equal(sy_lim_build(&lr, NULL, &w.eu, "m", -1), 1);
    assert_string_equal(lr.d[0].value, "cust-9");
}

static void test_model_limits(void **st)
{
    (void)st;
    struct world w;
    struct sy_lim_req lr;
    const struct sy_lim_desc *d;
    world(&w);
    budget(&w.team, "t1", -1, -1, -1,
           "{\"model_rpm_limit\": {\"gpt-4o\": 7}, \"model_tpm_limit\": {\"gpt-4o\": 700, \"claude\": \"90\"}}");
    budget(&w.org, "o1", -1, -1, -1, "{\"model_tpm_limit\": {\"gpt-4o\": 12.9}, \"model_rpm_limit\": null}");
    w.ki.team = &w.team;
    w.ki.org = &w.org;
    w.ki.key.metadata = "{\"model_rpm_limit\": {\"gpt-4o\": 3, \"o1\": null}, \"x\": 1}";

    memset(&lr, 0, sizeof lr);
    assert_int_equal(sy_lim_build(&lr, &w.ki, NULL, "gpt-4o", -1), 3);
    assert_non_null(d = find(&lr, SY_LIM_MODEL_PER_KEY));
    assert_string_equal(d->value, TOKEN ":gpt-4o");
    assert_int_equal(d->rpm, 3);
    assert_int_equal(d->tpm, -1);
    assert_int_equal(d->par, -1);
    assert_non_null(d = find(&lr, SY_LIM_MODEL_PER_TEAM));
    assert_string_equal(d->value, "t1:gpt-4o");
    assert_int_equal(d->rpm, 7);
    assert_int_equal(d->tpm, 700);
    assert_non_null(d = find(&lr, SY_LIM_MODEL_PER_ORG));
    assert_string_equal(d->value, "o1:gpt-4o");
    assert_int_equal(d->rpm, -1);
    assert_int_equal(d->tpm, 12);
    assert_int_equal(lr.d[0].kind, SY_LIM_MODEL_PER_KEY);
    assert_int_equal(lr.d[1].kind, SY_LIM_MODEL_PER_TEAM);
    assert_int_equal(lr.d[2].kind, SY_LIM_MODEL_PER_ORG);

    /* another model: only the team's (string value) */
    memset(&lr, 0, sizeof lr);
    assert_int_equal(sy_lim_build(&lr, &w.ki, NULL, "claude", -1), 1);
    assert_int_equal(lr.d[0].kind, SY_LIM_MODEL_PER_TEAM);
    assert_int_equal(lr.d[0].tpm, 90);
    assert_int_equal(lr.d[0].rpm, -1);
    /* a model listed with null limits only: no descriptor */
    memset(&lr, 0, sizeof lr);
    assert_int_equal(sy_lim_build(&lr, &w.ki, NULL, "o1", -1), 0);
    /* no model: no model descriptors */
    memset(&lr, 0, sizeof lr);
    assert_int_equal(sy_lim_build(&lr, &w.ki, NULL, NULL, -1), 0);

    /* key metadata set but without model limits: no fallback to the team's */
    w.ki.key.metadata = "{\"tags\": [\"a\"]}";
    memset(&lr, 0, sizeof lr);
    sy_lim_build(&lr, &w.ki, NULL, "gpt-4o", -1);
    assert_null(find(&lr, SY_LIM_MODEL_PER_KEY));
    assert_non_null(find(&lr, SY_LIM_MODEL_PER_TEAM));

    /* key metadata empty: model_per_key takes the team's limits (LiteLLM's fallback) */
    w.ki.key.metadata = " { } ";
    memset(&lr, 0, sizeof lr);
    sy_lim_build(&lr, &w.ki, NULL, "gpt-4o", -1);
    assert_non_null(d = find(&lr, SY_LIM_MODEL_PER_KEY));
    assert_int_equal(d->rpm, 7);
    assert_int_equal(d->tpm, 700);
    /* ... unless the key has a model_max_budget */
    struct sy_model_budget mb = {.model = "gpt-4o", .max_budget = 1};
    w.ki.mmb = &mb;
    w.ki.nmmb = 1;
    memset(&lr, 0, sizeof lr);
    sy_lim_build(&lr, &w.ki, NULL, "gpt-4o", -1);
    assert_null(find(&lr, SY_LIM_MODEL_PER_KEY));
    w.ki.nmmb = 0;
    w.ki.key.metadata = NULL;
    memset(&lr, 0, sizeof lr);
    sy_lim_build(&lr, &w.ki, NULL, "gpt-4o", -1);
    assert_non_null(find(&lr, SY_LIM_MODEL_PER_KEY));

    /* negative limits are 0; bad JSON and wrong types are ignored */
    w.ki.key.metadata = "{\"model_rpm_limit\": {\"gpt-4o\": -5}, \"model_tpm_limit\": {\"gpt-4o\": [1]}}";
    w.team.metadata = "{\"model_rpm_limit\": {\"gpt-4o\": 1";
    w.org.metadata = "{\"model_rpm_limit\": [\"gpt-4o\"]}";
    memset(&lr, 0, sizeof lr);
    assert_int_equal(sy_lim_build(&lr, &w.ki, NULL, "gpt-4o", -1), 1);
    assert_int_equal(lr.d[0].kind, SY_LIM_MODEL_PER_KEY);
    assert_int_equal(lr.d[0].rpm, 0);
    assert_int_equal(lr.d[0].tpm, -1);
}

static void test_cut_and_cap(void **st)
{
    (void)st;
    struct world w;
    struct sy_lim_req lr;
    char model[600];
    world(&w);
    memset(model, 'm', sizeof model - 1);
    model[sizeof model - 1] = 0;
    char meta[700];
    snprintf(meta, sizeof meta, "{\"model_rpm_limit\": {\"%s\": 1}}", model);
    w.ki.key.metadata = meta;
    memset(&lr, 0, sizeof lr);
    assert_int_equal(sy_lim_build(&lr, &w.ki, NULL, model, -1), 1);
    assert_int_equal(strlen(lr.d[0].value), SY_LIM_VALUE_MAX - 1);
    assert_memory_equal(lr.d[0].value, TOKEN ":", 65);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),        cmocka_unit_test(test_none),        cmocka_unit_test(test_entities),
        cmocka_unit_test(test_model_limits), cmocka_unit_test(test_cut_and_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
