/* test_router.c - unit tests for the router's request filters (issue 19):
 * tag routing and the "default" tag, allowed_model_region classes, provider
 * budget windows and the budget filter of sy_router_pick. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "gateway/gateway.h"
#include "router/router.h"

static const struct sy_provider prov = {.name = "openai"};

struct fixture {
    struct sy_deployment dep[4];
    struct sy_drt drt[4];
    struct sy_drt *list[4];
    struct sy_group g;
};

/* A group of n deployments with ids "<prefix>-<i>" and the given tags (NULL: none). */
static void group(struct fixture *f, const char *prefix, size_t n, const char **const *tags, const size_t *ntags)
{
    memset(f, 0, sizeof *f);
    static char ids[64][32];
    static int next;
    for (size_t i = 0; i < n; i++) {
        char *id = ids[next++ % 64];
        snprintf(id, 32, "%s-%zu", prefix, i);
        f->dep[i].id = id;
        f->dep[i].model_name = prefix;
        f->dep[i].provider = "openai";
        f->dep[i].rpm = f->dep[i].tpm = -1;
        f->dep[i].order = -1;
        f->dep[i].max_input_tokens = -1;
        if (tags) {
            f->dep[i].tags = (const char **)tags[i];
            f->dep[i].n_tags = ntags[i];
        }
        f->drt[i].d = &f->dep[i];
        f->drt[i].st = sy_dstate_get(id);
        f->drt[i].prov = &prov;
        f->drt[i].max_parallel = -1;
        f->list[i] = &f->drt[i];
    }
    f->g.name = prefix;
    f->g.d = f->list;
    f->g.n = n;
    f->g.usable = (int)n;
}

static size_t pick_index(struct fixture *f, const struct sy_rconf *rc, const struct sy_rfilter *flt, int *why)
{
    static struct sy_rng rng = {0x9e3779b97f4a7c15ULL}; /* one generator for the whole run */
    *why = 0;
    struct sy_drt *d = sy_router_pick(&rng, rc, &f->g, NULL, -1, flt, why);
    return d ? (size_t)(d - f->drt) : (size_t)-1;
}

static void tags_filter(void **st)
{
    (void)st;
    static const char *t0[] = {"teamA"}, *t1[] = {"teamB", "paid"}, *t2[] = {"default"};
    const char **const tags[] = {t0, t1, t2};
    const size_t nt[] = {1, 2, 1};
    struct fixture f;
    group(&f, "tags", 3, tags, nt);
    struct sy_rconf rc = {.strategy = SY_RS_SHUFFLE, .tag_filtering = 1, .tag_match_any = 1};
    const char *req1[] = {"paid", "other"};
    struct sy_rfilter flt = {.tags = req1, .ntags = 2};
    int why;
    for (int i = 0; i < 20; i++)
        assert_int_equal(pick_index(&f, &rc, &flt, &why), 1);
    /* match all: "paid" and "other" are not both on any deployment -> the default one */
    rc.tag_match_any = 0;
    for (int i = 0; i < 20; i++)
        assert_int_equal(pick_index(&f, &rc, &flt, &why), 2);
    const char *req2[] = {"teamB", "paid"};
    flt.tags = req2;
    assert_int_equal(pick_index(&f, &rc, &flt, &why), 1);
    /* no tags: the default deployment */
    rc.tag_match_any = 1;
    struct sy_rfilter none = {0};
    for (int i = 0; i < 20; i++)
        assert_int_equal(pick_index(&f, &rc, &none, &why), 2);
    /* tag filtering off: tags are ignored */
    rc.tag_filtering = 0;
    int seen[3] = {0};
    for (int i = 0; i < 200; i++)
        seen[pick_index(&f, &rc, &flt, &why)]++;
    assert_true(seen[0] && seen[1] && seen[2]);
}

static void tags_no_match(void **st)
{
    (void)st;
    static const char *t0[] = {"x"};
    const char **const tags[] = {t0, NULL};
    const size_t nt[] = {1, 0};
    struct fixture f;
    group(&f, "nomatch", 2, tags, nt);
    struct sy_rconf rc = {.strategy = SY_RS_SHUFFLE, .tag_filtering = 1, .tag_match_any = 1};
    const char *req[] = {"zzz"};
    struct sy_rfilter flt = {.tags = req, .ntags = 1};
    int why;
    assert_int_equal(pick_index(&f, &rc, &flt, &why), (size_t)-1);
    assert_int_equal(why, SY_PICK_NONE_TAGS);
    /* a matching deployment in cooldown is "none available", not a tag error */
    const char *rx[] = {"x"};
    flt.tags = rx;
    atomic_store(&f.drt[0].st->cooldown_until_ms, sy_wall_ms() + 60000);
    assert_int_equal(pick_index(&f, &rc, &flt, &why), (size_t)-1);
    assert_int_equal(why, SY_PICK_NONE_AVAILABLE);
    atomic_store(&f.drt[0].st->cooldown_until_ms, 0);
    assert_int_equal(pick_index(&f, &rc, &flt, &why), 0);
}

static void region_classes(void **st)
{
    (void)st;
    struct sy_deployment d = {.provider = "openai"};
    assert_int_equal(sy_router_region_of(&d), 0);
    d.region_name = "eu";
    assert_int_equal(sy_router_region_of(&d), 'e');
    d.region_name = "us";
    assert_int_equal(sy_router_region_of(&d), 'u');
    d.region_name = "eu-west-1"; /* openai: only "eu" / "us" as written */
    assert_int_equal(sy_router_region_of(&d), 0);
    d.provider = "azure";
    d.region_name = "swedencentral";
    assert_int_equal(sy_router_region_of(&d), 'e');
    d.region_name = "EastUS2";
    assert_int_equal(sy_router_region_of(&d), 'u');
    d.region_name = "japaneast";
    assert_int_equal(sy_router_region_of(&d), 0);
    struct sy_kv vkv[] = {{"vertex_location", "europe-west4"}};
    struct sy_deployment v = {.provider = "vertex_ai", .params = vkv, .n_params = 1};
    assert_int_equal(sy_router_region_of(&v), 'e');
    vkv[0].value = "us-central1";
    assert_int_equal(sy_router_region_of(&v), 'u');
    struct sy_kv bkv[] = {{"aws_region_name", "eu-central-1"}};
    struct sy_deployment b = {.provider = "bedrock", .params = bkv, .n_params = 1};
    assert_int_equal(sy_router_region_of(&b), 'e');
    bkv[0].value = "ap-south-1";
    assert_int_equal(sy_router_region_of(&b), 0);
}

static void region_filter(void **st)
{
    (void)st;
    struct fixture f;
    group(&f, "region", 2, NULL, NULL);
    f.drt[0].region = 'e';
    f.drt[1].region = 'u';
    struct sy_rconf rc = {.strategy = SY_RS_SHUFFLE};
    struct sy_rfilter eu = {.region = 'e'}, us = {.region = 'u'};
    int why;
    for (int i = 0; i < 20; i++) {
        assert_int_equal(pick_index(&f, &rc, &eu, &why), 0);
        assert_int_equal(pick_index(&f, &rc, &us, &why), 1);
    }
    f.drt[0].region = 0;
    f.drt[1].region = 'u';
    assert_int_equal(pick_index(&f, &rc, &eu, &why), (size_t)-1);
    assert_int_equal(why, SY_PICK_NONE_REGION);
}

static void budget_window(void **st)
{
    (void)st;
    struct sy_pbudget *b = sy_pbudget_get("unit-prov", "10s", 10);
    assert_non_null(b);
    assert_ptr_equal(sy_pbudget_get("unit-prov", "10s", 10), b); /* one window per provider and period */
    assert_ptr_not_equal(sy_pbudget_get("unit-prov", "1d", 86400), b);
    int64_t t0 = 1000000;
    assert_true(sy_pbudget_spend(b, t0) == 0);
    sy_pbudget_add(b, 0.25, t0);
    sy_pbudget_add(b, 0.5, t0 + 9000);
    assert_true(sy_pbudget_spend(b, t0 + 9500) == 0.75);
    assert_true(sy_pbudget_spend(b, t0 + 10000) == 0); /* the period passed since the window opened */
    sy_pbudget_add(b, 0.125, t0 + 10001);              /* a new window */
    assert_true(sy_pbudget_spend(b, t0 + 10002) == 0.125);
    sy_pbudget_add(b, -1, t0 + 10003); /* nothing negative, nothing for free */
    sy_pbudget_add(b, 0, t0 + 10003);
    assert_true(sy_pbudget_spend(b, t0 + 10004) == 0.125);
}

static void budget_filter(void **st)
{
    (void)st;
    struct fixture f;
    group(&f, "budget", 2, NULL, NULL);
    struct sy_pbudget *b = sy_pbudget_get("unit-over", "1h", 3600);
    f.drt[0].pb = b;
    f.drt[0].pb_limit = 1;
    struct sy_rconf rc = {.strategy = SY_RS_SHUFFLE, .provider_budgets = 1};
    int why;
    sy_pbudget_add(b, 1, sy_wall_ms());
    for (int i = 0; i < 20; i++)
        assert_int_equal(pick_index(&f, &rc, NULL, &why), 1);
    f.g.n = 1; /* only the provider over budget */
    assert_int_equal(pick_index(&f, &rc, NULL, &why), (size_t)-1);
    assert_int_equal(why, SY_PICK_NONE_BUDGET);
    char info[256];
    sy_router_budget_info(&f.g, info, sizeof info);
    assert_string_equal(info, "Exceeded budget for provider unit-over: 1 >= 1\n");
    f.drt[0].pb_limit = 0; /* a limit of 0 is no limit (LiteLLM: `if max_budget and ...`) */
    assert_int_equal(pick_index(&f, &rc, NULL, &why), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tags_filter),   cmocka_unit_test(tags_no_match), cmocka_unit_test(region_classes),
        cmocka_unit_test(region_filter), cmocka_unit_test(budget_window), cmocka_unit_test(budget_filter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
