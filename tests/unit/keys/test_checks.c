/* test_checks.c - keys/checks.c: every refusal's status, type, param and
 * exact text (LiteLLM's), and the model-access rules: empty lists, "*",
 * "all-proxy-models", "all-team-models", access groups, wildcards (including
 * "openai/" + star for a bare OpenAI model), team / member / user lists,
 * "no-default-models", an alias passing when it or its target does (key
 * aliases, team model_aliases winning); expiry, blocked key / team, allowed_routes; budgets
 * of key (>=), key model_max_budget (>=), team (>), org (>= and only > 0),
 * user on a personal key (>=), team member (>=), end user (>), blocked end
 * user; Python float rendering.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/pyrepr.h"
#include "keys/keys.h"
#include "keys/keys_impl.h"

static char **sv(size_t *n, int cnt, ...)
{
    *n = (size_t)cnt;
    if (!cnt)
        return NULL;
    char **v = calloc((size_t)cnt, sizeof *v);
    va_list ap;
    va_start(ap, cnt);
    for (int i = 0; i < cnt; i++)
        v[i] = strdup(va_arg(ap, const char *));
    va_end(ap);
    return v;
}

static struct sy_budget *bud(const char *id, double spend, double max)
{
    struct sy_budget *b = malloc(sizeof *b);
    sy__budget_init(b);
    b->id = strdup(id);
    atomic_store(&b->spend, spend);
    b->max_budget = max;
    return b;
}

static struct sy_keyinfo *ki_new(void)
{
    struct sy_keyinfo *ki = calloc(1, sizeof *ki);
    atomic_init(&ki->refs, 1);
    memset(ki->token, 'a', 64);
    ki->found = 1;
    sy__budget_init(&ki->key);
    ki->key.id = strdup(ki->token);
    ki->key_name = strdup("sk-...abcd");
    return ki;
}

static void ki_team(struct sy_keyinfo *ki, const char *team_id)
{
    ki->team_id = strdup(team_id);
    ki->team = bud(team_id, 0, -1);
}

static void ki_user(struct sy_keyinfo *ki, const char *user_id)
{
    ki->user_id = strdup(user_id);
    ki->user = bud(user_id, 0, -1);
}

/* access groups: "gpt-4o" and "gpt-4o-mini" are in group "beta-models"; "claude" in "anthropic-models" */
static const char *groups(void *ud, const char *model)
{
    (void)ud;
    if (strcmp(model, "gpt-4o") == 0 || strcmp(model, "gpt-4o-mini") == 0)
        return "beta-models\0other-group\0";
    if (strcmp(model, "claude") == 0)
        return "anthropic-models\0";
    return NULL;
}

static void expect(const struct sy_check_err *e, int status, const char *type, const char *param, const char *msg)
{
    assert_int_equal(e->status, status);
    assert_string_equal(e->type, type);
    assert_string_equal(e->param, param);
    assert_string_equal(e->message, msg);
}

static void test_pyfloat(void **s)
{
    (void)s;
    struct {
        double d;
        const char *want;
    } c[] = {{10, "10.0"},
             {0.1 + 0.2, "0.30000000000000004"},
             {1e-5, "1e-05"},
             {0.0001, "0.0001"},
             {1e16, "1e+16"},
             {1234567890123456.0, "1234567890123456.0"},
             {0, "0.0"},
             {-2.5, "-2.5"},
             {1.0 / 3, "0.3333333333333333"},
             {123.456, "123.456"},
             {1.5e-7, "1.5e-07"},
             {2e22, "2e+22"}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        struct sy_buf b;
        sy_buf_init(&b, 64);
        assert_int_equal(sy_py_float_repr(&b, c[i].d), 0);
        assert_string_equal(b.p, c[i].want);
        sy_buf_free(&b);
    }
}

static void test_key_blocked_expired_team_blocked(void **s)
{
    (void)s;
    struct sy_check_err e;
    struct sy_keyinfo *ki = ki_new();
    assert_int_equal(sy_keys_check_key(ki, "/chat/completions", 1e9, &e), 0);
    ki->blocked = 1;
    assert_int_equal(sy_keys_check_key(ki, "/chat/completions", 1e9, &e), 401);
    expect(&e, 401, "auth_error", "None",
           "Authentication Error, Key is blocked. Update via `/key/unblock` if you're an admin.");
    ki->blocked = 0;

    ki->expires = 1791172078.123; /* 2026-10-05 03:47:58.123 UTC */
    assert_int_equal(sy_keys_check_key(ki, "/chat/completions", 1791172078.0, &e), 0);
    assert_int_equal(sy_keys_check_key(ki, "/chat/completions", 1791172080.5, &e), 400);
    expect(&e, 400, "expired_key", "sk-...abcd",
           "Authentication Error - Expired Key. Key Expiry time 2026-10-05 03:47:58.123000+00:00 and current time "
           "2026-10-05 03:48:00.500000+00:00");
    ki->expires = 1791172078;
    sy_keys_check_key(ki, "/x", 1791172079, &e);
    assert_string_equal(e.message, "Authentication Error - Expired Key. Key Expiry time 2026-10-05 03:47:58+00:00 "
                                   "and current time 2026-10-05 03:47:59+00:00");
    ki->expires = 0;

    ki_team(ki, "team-1");
    ki->team->blocked = 1;
    assert_int_equal(sy_keys_check_key(ki, "/chat/completions", 1e9, &e), 401);
    expect(&e, 401, "auth_error", "None",
           "Authentication Error, Team=team-1 is blocked. Update via `/team/unblock` if you're an admin.");
    sy_keyinfo_unref(ki);

    /* a negative entry passes (the caller answers unknown keys itself) */
    ki = ki_new();
    ki->found = 0;
    ki->blocked = 1;
    assert_int_equal(sy_keys_check_key(ki, "/", 1e9, &e), 0);
    sy_keyinfo_unref(ki);
}

static void test_allowed_routes(void **s)
{
    (void)s;
    struct sy_check_err e;
    struct sy_keyinfo *ki = ki_new();
    ki->allowed_routes = sv(&ki->nallowed_routes, 2, "/chat/completions", "/scim/v2/*");
    assert_int_equal(sy_keys_check_key(ki, "/chat/completions", 0, &e), 0);
    assert_int_equal(sy_keys_check_key(ki, "/chat/completions/x", 0, &e), 0);
    assert_int_equal(sy_keys_check_key(ki, "/scim/v2/Users/1", 0, &e), 0);
    assert_int_equal(sy_keys_check_key(ki, "/chat/completionsx", 0, &e), 401);
    assert_int_equal(sy_keys_check_key(ki, "/v1/models", 0, &e), 401);
    expect(&e, 401, "auth_error", "None",
           "Authentication Error, Virtual key is not allowed to call this route. Only allowed to call routes: "
           "['/chat/completions', '/scim/v2/*']. Tried to call route: /v1/models");
    sy_keyinfo_unref(ki);

    ki = ki_new();
    ki->allowed_routes = sv(&ki->nallowed_routes, 1, "llm_api_routes");
    assert_int_equal(sy_keys_check_key(ki, "/v1/chat/completions", 0, &e), 0);
    assert_int_equal(sy_keys_check_key(ki, "/v1/responses/resp_1", 0, &e), 0);
    assert_int_equal(sy_keys_check_key(ki, "/key/generate", 0, &e), 401);
    sy_keyinfo_unref(ki);
}

static void test_model_key(void **s)
{
    (void)s;
    struct sy_check_err e;
    struct sy_keyinfo *ki = ki_new();
    /* no models: everything */
    assert_int_equal(sy_keys_check_model(ki, "anything", groups, NULL, &e), 0);
    ki->models = sv(&ki->nmodels, 2, "gpt-3.5", "o'neil");
    assert_int_equal(sy_keys_check_model(ki, "gpt-3.5", groups, NULL, &e), 0);
    assert_int_equal(sy_keys_check_model(ki, "gpt-4o", groups, NULL, &e), 401);
    expect(&e, 401, "key_model_access_denied", "model",
           "key not allowed to access model. This key can only access models=['gpt-3.5', \"o'neil\"]. Tried to access "
           "gpt-4o");
    sy__strv_free(ki->models, ki->nmodels);

    /* access groups */
    ki->models = sv(&ki->nmodels, 1, "beta-models");
    assert_int_equal(sy_keys_check_model(ki, "gpt-4o", groups, NULL, &e), 0);
    assert_int_equal(sy_keys_check_model(ki, "gpt-4o-mini", groups, NULL, &e), 0);
    assert_int_equal(sy_keys_check_model(ki, "claude", groups, NULL, &e), 401);
    assert_int_equal(sy_keys_check_model(ki, "gpt-4o", NULL, NULL, &e), 401); /* no group lookup */
    sy__strv_free(ki->models, ki->nmodels);

    /* special names */
    ki->models = sv(&ki->nmodels, 1, "all-proxy-models");
    assert_int_equal(sy_keys_check_model(ki, "x", groups, NULL, &e), 0);
    sy__strv_free(ki->models, ki->nmodels);
    ki->models = sv(&ki->nmodels, 1, "*");
    assert_int_equal(sy_keys_check_model(ki, "x", groups, NULL, &e), 0);
    sy__strv_free(ki->models, ki->nmodels);

    /* wildcards */
    ki->models = sv(&ki->nmodels, 2, "bedrock/*", "openai/*");
    assert_int_equal(sy_keys_check_model(ki, "bedrock/us.amazon.nova-micro-v1:0", groups, NULL, &e), 0);
    assert_int_equal(sy_keys_check_model(ki, "bedrockzz/x", groups, NULL, &e), 401);
    assert_int_equal(sy_keys_check_model(ki, "openai/gpt-4o", groups, NULL, &e), 0);
    assert_int_equal(sy_keys_check_model(ki, "gpt-4o", groups, NULL, &e), 0); /* provider of a bare name */
    assert_int_equal(sy_keys_check_model(ki, "claude-3-5-sonnet", groups, NULL, &e), 401);
    sy__strv_free(ki->models, ki->nmodels);
    ki->models = sv(&ki->nmodels, 1, "bedrock/us.*");
    assert_int_equal(sy_keys_check_model(ki, "bedrock/us.amazon.nova-micro-v1:0", groups, NULL, &e), 0);
    assert_int_equal(sy_keys_check_model(ki, "bedrock/eu.amazon.nova", groups, NULL, &e), 401);
    sy_keyinfo_unref(ki);
}

static void test_model_team_member_user(void **s)
{
    (void)s;
    struct sy_check_err e;
    struct sy_keyinfo *ki = ki_new();
    ki_team(ki, "team-1");
    ki->models = sv(&ki->nmodels, 1, "all-team-models");
    ki->team->models = sv(&ki->team->nmodels, 2, "gpt-3.5", "beta-models");
    assert_int_equal(sy_keys_check_model(ki, "gpt-3.5", groups, NULL, &e), 0);
    assert_int_equal(sy_keys_check_model(ki, "gpt-4o", groups, NULL, &e), 0);
    assert_int_equal(sy_keys_check_model(ki, "claude", groups, NULL, &e), 401);
    expect(&e, 401, "team_model_access_denied", "model",
           "team not allowed to access model. This team can only access models=['gpt-3.5', 'beta-models']. Tried to "
           "access claude");
    /* the key's own list is checked first */
    sy__strv_free(ki->models, ki->nmodels);
    ki->models = sv(&ki->nmodels, 1, "claude");
    assert_int_equal(sy_keys_check_model(ki, "gpt-3.5", groups, NULL, &e), 401);
    assert_string_equal(e.type, "key_model_access_denied");
    sy__strv_free(ki->models, ki->nmodels);
    ki->models = NULL;
    ki->nmodels = 0;

    /* member scope */
    ki_user(ki, "u1");
    ki->member = bud("team-1:u1", 0, -1);
    ki->member->models = sv(&ki->member->nmodels, 1, "gpt-3.5");
    assert_int_equal(sy_keys_check_model(ki, "gpt-3.5", groups, NULL, &e), 0);
    assert_int_equal(sy_keys_check_model(ki, "gpt-4o", groups, NULL, &e), 401);
    expect(&e, 401, "team_model_access_denied", "model",
           "Team member not allowed to access model. User=u1, Team=team-1, Model=gpt-4o. Allowed member models = "
           "['gpt-3.5']");
    /* the user's own list does not apply to a team key */
    ki->user->models = sv(&ki->user->nmodels, 1, "nothing");
    assert_int_equal(sy_keys_check_model(ki, "gpt-3.5", groups, NULL, &e), 0);
    sy_keyinfo_unref(ki);

    /* a personal key: the user's list */
    ki = ki_new();
    ki_user(ki, "u2");
    ki->user->models = sv(&ki->user->nmodels, 1, "gpt-3.5");
    assert_int_equal(sy_keys_check_model(ki, "gpt-3.5", groups, NULL, &e), 0);
    assert_int_equal(sy_keys_check_model(ki, "gpt-4o", groups, NULL, &e), 401);
    expect(&e, 401, "user_model_access_denied", "model",
           "user not allowed to access model. This user can only access models=['gpt-3.5']. Tried to access gpt-4o");
    sy__strv_free(ki->user->models, ki->user->nmodels);
    ki->user->models = sv(&ki->user->nmodels, 1, "no-default-models");
    assert_int_equal(sy_keys_check_model(ki, "gpt-3.5", groups, NULL, &e), 401);
    expect(&e, 401, "key_model_access_denied", "model",
           "User not allowed to access model. No default model access, only team models allowed. Tried to access "
           "gpt-3.5");
    sy_keyinfo_unref(ki);
}

/* the alias or what it names: each list passes either; aliases as pairs,
 * the team's winning; JSON objects of strings read as pairs */
static void test_model_aliases(void **s)
{
    (void)s;
    struct sy_check_err e;
    struct sy_keyinfo *ki = ki_new();
    ki->models = sv(&ki->nmodels, 1, "gpt-3.5");
    ki->aliases = sv(&ki->naliases, 4, "fast", "gpt-3.5", "sneaky", "gpt-4o");
    assert_string_equal(sy_keys_alias_target(ki, "fast"), "gpt-3.5");
    assert_null(sy_keys_alias_target(ki, "gpt-3.5"));
    assert_int_equal(sy_keys_check_model_as(ki, "fast", "gpt-3.5", groups, NULL, &e), 0);
    assert_int_equal(sy_keys_check_model_as(ki, "sneaky", "gpt-4o", groups, NULL, &e), 401);
    expect(&e, 401, "key_model_access_denied", "model",
           "key not allowed to access model. This key can only access models=['gpt-3.5']. Tried to access sneaky");
    assert_int_equal(sy_keys_check_model_as(ki, "gpt-3.5", NULL, groups, NULL, &e), 0);
    /* the team's list is checked with the alias too */
    ki_team(ki, "t");
    ki->team->models = sv(&ki->team->nmodels, 1, "beta-models");
    assert_int_equal(sy_keys_check_model_as(ki, "fast", "gpt-3.5", groups, NULL, &e), 401);
    assert_string_equal(e.type, "team_model_access_denied");
    sy__strv_free(ki->models, ki->nmodels);
    ki->models = sv(&ki->nmodels, 1, "all-team-models");
    assert_int_equal(sy_keys_check_model_as(ki, "mine", "gpt-4o-mini", groups, NULL, &e), 0); /* via access group */
    /* the team's model_aliases win over the key's */
    ki->team_aliases = sv(&ki->nteam_aliases, 2, "fast", "gpt-4o");
    assert_string_equal(sy_keys_alias_target(ki, "fast"), "gpt-4o");
    assert_string_equal(sy_keys_alias_target(ki, "sneaky"), "gpt-4o");
    assert_null(sy_keys_alias_of(ki->team_aliases, 1, "fast")); /* an odd count never reads past the end */
    sy_keyinfo_unref(ki);

    /* the key's own aliases cannot widen the team's list: its target must pass there */
    ki = ki_new();
    ki_team(ki, "t2");
    ki->models = sv(&ki->nmodels, 1, "gpt-3.5");
    ki->team->models = sv(&ki->team->nmodels, 1, "gpt-3.5");
    ki->aliases = sv(&ki->naliases, 2, "gpt-3.5", "claude");
    assert_int_equal(sy_keys_check_model_as(ki, "gpt-3.5", "claude", groups, NULL, &e), 401);
    expect(&e, 401, "team_model_access_denied", "model",
           "team not allowed to access model. This team can only access models=['gpt-3.5']. Tried to access claude");
    /* a team alias to an allowed group, then the key's alias of that: the key's target counts */
    ki->team_aliases = sv(&ki->nteam_aliases, 2, "t", "gpt-3.5");
    assert_int_equal(sy_keys_check_model_as(ki, "t", "gpt-3.5", groups, NULL, &e), 401);
    sy_keyinfo_unref(ki);

    char **v;
    size_t n;
    assert_int_equal(sy__strmap_from_json("{\"a\":\"b\",\"n\":1,\"c\":\"d\"}", &v, &n), 0);
    assert_int_equal(n, 4);
    assert_string_equal(sy_keys_alias_of(v, n, "c"), "d");
    assert_null(sy_keys_alias_of(v, n, "n"));
    sy__strv_free(v, n);
    assert_int_equal(sy__strmap_from_json("[\"a\"]", &v, &n), 0);
    assert_null(v);
    assert_int_equal(n, 0);
    assert_int_equal(sy__strmap_from_json("{}", &v, &n), 0);
    assert_null(v);
    assert_int_equal(sy__strmap_from_json("not json", &v, &n), 0);
    assert_null(v);
    assert_int_equal(sy__strmap_from_json(NULL, &v, &n), 0);
    assert_null(v);
}

static void test_budgets(void **s)
{
    (void)s;
    struct sy_check_err e;
    struct sy_keyinfo *ki = ki_new();
    assert_int_equal(sy_keys_check_budgets(ki, NULL, "m", &e), 0);
    /* key: >= */
    ki->key.max_budget = 1.0;
    atomic_store(&ki->key.spend, 0.99);
    assert_int_equal(sy_keys_check_budgets(ki, NULL, "m", &e), 0);
    atomic_store(&ki->key.spend, 1.0);
    assert_int_equal(sy_keys_check_budgets(ki, NULL, "m", &e), 400);
    expect(&e, 400, "budget_exceeded", "", "Budget has been exceeded! Current cost: 1.0, Max budget: 1.0");
    ki->key.max_budget = 0; /* a zero budget refuses everything */
    atomic_store(&ki->key.spend, 0.0);
    assert_int_equal(sy_keys_check_budgets(ki, NULL, "m", &e), 400);
    assert_string_equal(e.message, "Budget has been exceeded! Current cost: 0.0, Max budget: 0.0");
    ki->key.max_budget = -1;

    /* model_max_budget: >=, only with a period, found by the name after '/' too */
    assert_int_equal(sy__mmb_parse("{\"gpt-4o\": {\"budget_limit\": 0.5, \"time_period\": \"1d\"}, \"nodur\": "
                                   "{\"max_budget\": 0.0}}",
                                   "{\"gpt-4o\": 0.5}", &ki->mmb, &ki->nmmb),
                     0);
    assert_int_equal(ki->nmmb, 2);
    ki->key_alias = strdup("my-key");
    assert_int_equal(sy_keys_check_budgets(ki, NULL, "gpt-4o", &e), 400);
    expect(&e, 400, "budget_exceeded", "",
           "LiteLLM Virtual Key: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, key_alias: my-key, "
           "exceeded budget for model=gpt-4o");
    assert_int_equal(sy_keys_check_budgets(ki, NULL, "openai/gpt-4o", &e), 400);
    assert_int_equal(sy_keys_check_budgets(ki, NULL, "nodur", &e), 0);
    assert_int_equal(sy_keys_check_budgets(ki, NULL, "other", &e), 0);
    sy_keys_add_spend(ki, NULL, "gpt-4o", -0.25); /* (a refund, to test the model entry) */
    assert_int_equal(sy_keys_check_budgets(ki, NULL, "gpt-4o", &e), 0);

    /* team: > */
    ki_team(ki, "team-1");
    ki->team->max_budget = 10;
    atomic_store(&ki->team->spend, 10.0);
    assert_int_equal(sy_keys_check_budgets(ki, NULL, "m", &e), 0);
    atomic_store(&ki->team->spend, 10.5);
    assert_int_equal(sy_keys_check_budgets(ki, NULL, "m", &e), 400);
    expect(&e, 400, "budget_exceeded", "",
           "Budget has been exceeded! Team=team-1 Current cost: 10.5, Max budget: 10.0");
    atomic_store(&ki->team->spend, 0.0);

    /* org: >= and only when > 0 */
    ki->org_id = strdup("org-1");
    ki->org = bud("org-1", 0, 0);
    assert_int_equal(sy_keys_check_budgets(ki, NULL, "m", &e), 0);
    ki->org->max_budget = 5;
    atomic_store(&ki->org->spend, 5.0);
    assert_int_equal(sy_keys_check_budgets(ki, NULL, "m", &e), 400);
    expect(&e, 400, "budget_exceeded", "",
           "Budget has been exceeded! Organization=org-1 Current cost: 5.0, Max budget: 5.0");
    atomic_store(&ki->org->spend, 0.0);

    /* user: not on a team key */
    ki_user(ki, "u1");
    ki->user->max_budget = 1;
    atomic_store(&ki->user->spend, 3.0);
    assert_int_equal(sy_keys_check_budgets(ki, NULL, "m", &e), 0);
    /* member: >= */
    ki->member = bud("team-1:u1", 2, 2);
    assert_int_equal(sy_keys_check_budgets(ki, NULL, "m", &e), 400);
    expect(&e, 400, "budget_exceeded", "",
           "Budget has been exceeded! User=u1 in Team=team-1 Current cost: 2.0, Max budget: 2.0");
    sy__budget_free(ki->member);
    ki->member = NULL;
    /* user on a personal key: >= */
    sy__budget_free(ki->team);
    ki->team = NULL;
    assert_int_equal(sy_keys_check_budgets(ki, NULL, "m", &e), 400);
    expect(&e, 400, "budget_exceeded", "", "ExceededBudget: User=u1 over budget. Spend=3.0, Budget=1.0");
    atomic_store(&ki->user->spend, 0.0);
    assert_int_equal(sy_keys_check_budgets(ki, NULL, "m", &e), 0);

    /* end user: >, then blocked */
    struct sy_enduser *eu = calloc(1, sizeof *eu);
    atomic_init(&eu->refs, 1);
    eu->found = 1;
    sy__budget_init(&eu->b);
    eu->b.id = strdup("cust-1");
    eu->b.max_budget = 0.25;
    atomic_store(&eu->b.spend, 0.25);
    assert_int_equal(sy_keys_check_budgets(ki, eu, "m", &e), 0);
    atomic_store(&eu->b.spend, 0.5);
    assert_int_equal(sy_keys_check_budgets(NULL, eu, "m", &e), 400);
    expect(&e, 400, "budget_exceeded", "", "ExceededBudget: End User=cust-1 over budget. Spend=0.5, Budget=0.25");
    atomic_store(&eu->b.spend, 0.0);
    eu->b.blocked = 1;
    assert_int_equal(sy_keys_check_budgets(ki, eu, "m", &e), 400);
    expect(&e, 400, "invalid_request_error", "", "User blocked from making LLM API Calls. User=cust-1");
    sy_enduser_unref(eu);
    sy_keyinfo_unref(ki);
}

static void test_wild(void **s)
{
    (void)s;
    assert_true(sy__wild_match("*", ""));
    assert_true(sy__wild_match("a*b*c", "aXXbYYc"));
    assert_false(sy__wild_match("a*b*c", "aXXbYY"));
    assert_true(sy__wild_match("gpt-4.*", "gpt-4o-mini")); /* '.' is any character, as in the regex */
    assert_true(sy__wild_match("**x", "abx"));
    assert_false(sy__wild_match("abc", "abcd"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pyfloat),
        cmocka_unit_test(test_key_blocked_expired_team_blocked),
        cmocka_unit_test(test_allowed_routes),
        cmocka_unit_test(test_model_key),
        cmocka_unit_test(test_model_team_member_user),
        cmocka_unit_test(test_model_aliases),
        cmocka_unit_test(test_budgets),
        cmocka_unit_test(test_wild),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
