/* test_strategies.c - unit tests for the routing strategies, cooldowns and
 * the retry policy (reference §3.3, §3.5, §3.7).
 *
 * Each case compiles a real config (YAML -> sy_config -> the model table of
 * router/table.h, with no gateway: the weight field, costs, order and
 * policies come from the router's own load-time code) and
 * drives sy_router_pick with its own seeded generator: distributions are
 * asserted over fixed seeds with generous bounds, never timings. Deployment
 * ids are unique per case because live state is process-wide by id.
 * Minute windows are fed with one fixed `now` so a minute boundary cannot
 * split a case's counts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "router/rng.h"
#include "router/router.h"
#include "router/table.h"

#define DEP(name, id, extra)                                                                            \
    "  - model_name: " name "\n    litellm_params: {model: openai/gpt-4o, api_key: sk-test" extra "}\n" \
    "    model_info: {id: " id "}\n"

static void warn_quiet(const char *msg)
{
    (void)msg;
}

/* DEP with more model_info fields (max_input_tokens ...). */
#define DEPI(name, id, extra, info)                                                                     \
    "  - model_name: " name "\n    litellm_params: {model: openai/gpt-4o, api_key: sk-test" extra "}\n" \
    "    model_info: {id: " id info "}\n"

static struct sy_table *load(const char *yaml)
{
    char err[512];
    struct sy_config *cfg = NULL;
    if (sy_config_load_string_ex(yaml, strlen(yaml), "test.yaml", NULL, SY_CONFIG_NO_SETENV | SY_CONFIG_QUIET, &cfg,
                                 err, sizeof err) != 0) {
        fprintf(stderr, "config: %s\n", err);
        fail();
    }
    struct sy_table *t = calloc(1, sizeof *t);
    assert_non_null(t);
    t->cfg = cfg;
    sy_router_compile_policy(&t->rc, cfg, warn_quiet);
    if (sy_table_build(t, warn_quiet, err, sizeof err) != 0) {
        fprintf(stderr, "table: %s\n", err);
        fail();
    }
    return t;
}

static void unload(struct sy_table *t)
{
    sy_table_free(t);
    sy_config_unref(t->cfg);
    free(t);
}

static const struct sy_group *group(const struct sy_table *g, const char *name)
{
    const struct sy_group *gr = sy_table_group(g, name, strlen(name));
    assert_non_null(gr);
    return gr;
}

/* Index in gr->d of the pick, -1 when none (why set). */
static int pick(struct sy_rng *rng, const struct sy_table *g, const struct sy_group *gr, const struct sy_drt *avoid,
                int64_t input_tokens, int *why)
{
    int w = 0;
    struct sy_drt *d = sy_router_pick(rng, &g->rc, gr, avoid, input_tokens, NULL, &w);
    if (why)
        *why = w;
    if (!d)
        return -1;
    for (size_t i = 0; i < gr->n; i++)
        if (gr->d[i] == d)
            return (int)i;
    fail_msg("pick returned a deployment outside the group");
    return -2;
}

/* counts[i] of n picks (no deployment in flight afterwards). */
static void tally(uint64_t seed, const struct sy_table *g, const struct sy_group *gr, int n, int *counts)
{
    struct sy_rng rng;
    sy_rng_seed(&rng, seed);
    memset(counts, 0, sizeof(int) * gr->n);
    for (int i = 0; i < n; i++) {
        int k = pick(&rng, g, gr, NULL, -1, NULL);
        assert_true(k >= 0);
        counts[k]++;
    }
}

static void rng_seeded(void **st)
{
    (void)st;
    struct sy_rng a, b, z;
    sy_rng_seed(&a, 42);
    sy_rng_seed(&b, 42);
    sy_rng_seed(&z, 0); /* 0 would be a fixed point of xorshift: mapped to a constant */
    for (int i = 0; i < 100; i++) {
        assert_true(sy_rng_next(&a) == sy_rng_next(&b));
        assert_true(sy_rng_next(&z) != 0);
        double u = sy_rng_unit(&a);
        assert_true(u >= 0 && u < 1);
        (void)sy_rng_unit(&b);
    }
}

/* simple-shuffle: weight on the first deployment -> weighted (missing = 0). */
static void shuffle_weight(void **st)
{
    (void)st;
    struct sy_table *g = load("model_list:\n" DEP("sw", "sw-0", ", weight: 1") DEP("sw", "sw-1", ", weight: 3")
                                  DEP("sw", "sw-2", "") "router_settings: {routing_strategy: simple-shuffle}\n");
    const struct sy_group *gr = group(g, "sw");
    assert_int_equal(gr->weighted, 1);
    int c[3];
    for (uint64_t seed = 1; seed <= 3; seed++) {
        tally(seed, g, gr, 4000, c);
        assert_int_equal(c[2], 0);         /* no weight: never */
        assert_in_range(c[0], 800, 1200);  /* 1/4 */
        assert_in_range(c[1], 2800, 3200); /* 3/4 */
    }
    unload(g);
}

/* rpm, then tpm, are the weights when the first deployment has no weight;
 * under simple-shuffle they are not limits. */
static void shuffle_rpm_tpm(void **st)
{
    (void)st;
    struct sy_table *g = load("model_list:\n" DEP("sr", "sr-0", ", rpm: 1") DEP("sr", "sr-1", ", rpm: 9")
                                  DEP("st", "st-0", ", tpm: 3000") DEP("st", "st-1", ", tpm: 1000"));
    int c[2];
    tally(7, g, group(g, "sr"), 2000, c);
    assert_in_range(c[0], 120, 280); /* 10 %, far past its rpm of 1: a weight only */
    assert_int_equal(c[0] + c[1], 2000);
    tally(8, g, group(g, "st"), 2000, c);
    assert_in_range(c[0], 1380, 1620); /* 75 % */
    unload(g);
}

/* The field is looked up on the FIRST deployment only: none there -> uniform. */
static void shuffle_uniform(void **st)
{
    (void)st;
    struct sy_table *g =
        load("model_list:\n" DEP("su", "su-0", "") DEP("su", "su-1", ", weight: 9") DEP("su", "su-2", ", rpm: 100"));
    const struct sy_group *gr = group(g, "su");
    assert_int_equal(gr->weighted, 0);
    int c[3];
    tally(11, g, gr, 3000, c);
    for (int i = 0; i < 3; i++)
        assert_in_range(c[i], 850, 1150);
    unload(g);
}

static void least_busy(void **st)
{
    (void)st;
    struct sy_table *g = load("model_list:\n" DEP("lb", "lb-0", "") DEP("lb", "lb-1", "")
                                  DEP("lb", "lb-2", "") "router_settings: {routing_strategy: least-busy}\n");
    const struct sy_group *gr = group(g, "lb");
    atomic_store(&gr->d[0]->st->inflight, 3);
    atomic_store(&gr->d[1]->st->inflight, 1);
    atomic_store(&gr->d[2]->st->inflight, 2);
    int c[3];
    tally(5, g, gr, 50, c);
    assert_int_equal(c[1], 50);
    /* other instances' counts (Redis) are added */
    atomic_store(&gr->d[1]->st->remote_inflight, 5);
    tally(5, g, gr, 50, c);
    assert_int_equal(c[2], 50);
    /* ties: random among the least busy */
    atomic_store(&gr->d[1]->st->remote_inflight, 0);
    atomic_store(&gr->d[0]->st->inflight, 1);
    tally(6, g, gr, 2000, c);
    assert_int_equal(c[2], 0);
    assert_in_range(c[0], 850, 1150);
    for (int i = 0; i < 3; i++)
        atomic_store(&gr->d[i]->st->inflight, 0);
    unload(g);
}

static void latency_based(void **st)
{
    (void)st;
    struct sy_table *g = load("model_list:\n" DEP("lt", "lt-0", "") DEP("lt", "lt-1", "")
                                  DEP("lt", "lt-2", "") "router_settings: {routing_strategy: latency-based-routing}\n");
    const struct sy_group *gr = group(g, "lt");
    const struct sy_rconf *rc = &g->rc;
    sy_router_ok(rc, gr->d[0], 10, 0.020);
    sy_router_ok(rc, gr->d[1], 10, 0.010);
    /* lt-2 has no sample: counts as 0, so it is tried first */
    int c[3];
    tally(3, g, gr, 20, c);
    assert_int_equal(c[2], 20);
    sy_router_ok(rc, gr->d[2], 10, 0.050);
    tally(3, g, gr, 20, c);
    assert_int_equal(c[1], 20);
    /* the mean of the samples: lt-1 at (0.010 + 0.040) / 2 = 0.025 > lt-0 */
    sy_router_ok(rc, gr->d[1], 10, 0.040);
    assert_true(sy_router_latency(rc, gr->d[1]->st, sy_wall_ms()) > 0.0249);
    tally(3, g, gr, 20, c);
    assert_int_equal(c[0], 20);
    /* a timeout's 1000 s penalty sample */
    sy_router_latency_penalty(rc, gr->d[0]);
    tally(3, g, gr, 20, c);
    assert_int_equal(c[1], 20);
    unload(g);

    /* lowest_latency_buffer 1.0: within 2x of the fastest is a random pick among them */
    g = load("model_list:\n" DEP("lu", "lu-0", "") DEP("lu", "lu-1", "")
                 DEP("lu", "lu-2", "") "router_settings:\n  routing_strategy: latency-based-routing\n"
                                       "  routing_strategy_args: {lowest_latency_buffer: 1.0}\n");
    gr = group(g, "lu");
    sy_router_ok(&g->rc, gr->d[0], 10, 0.010);
    sy_router_ok(&g->rc, gr->d[1], 10, 0.019);
    sy_router_ok(&g->rc, gr->d[2], 10, 0.030);
    tally(9, g, gr, 2000, c);
    assert_int_equal(c[2], 0);
    assert_in_range(c[0], 850, 1150);
    unload(g);
}

/* usage-based-routing(-v2): lowest tpm this minute; rpm and tpm are limits. */
static void usage_based(void **st)
{
    (void)st;
    static const char *const names[] = {"usage-based-routing", "usage-based-routing-v2"};
    for (int v = 0; v < 2; v++) {
        char yaml[1024];
        snprintf(yaml, sizeof yaml,
                 "model_list:\n" DEP("ub%d", "ub%d-0", ", rpm: 3")
                     DEP("ub%d", "ub%d-1", ", tpm: 1000") "router_settings: {routing_strategy: %s}\n",
                 v, v, v, v, names[v]);
        struct sy_table *g = load(yaml);
        char name[8];
        snprintf(name, sizeof name, "ub%d", v);
        const struct sy_group *gr = group(g, name);
        assert_int_equal(g->rc.strategy, SY_RS_USAGE);
        struct sy_rng rng;
        sy_rng_seed(&rng, 17);
        sy_router_ok(&g->rc, gr->d[1], 400, -1); /* ub-1 used 400 tokens */
        /* ub-0 (0 tokens) until its rpm of 3 is reserved, then ub-1 */
        for (int i = 0; i < 3; i++)
            assert_int_equal(pick(&rng, g, gr, NULL, 10, NULL), 0);
        assert_int_equal(pick(&rng, g, gr, NULL, 10, NULL), 1);
        /* tpm: 400 used + 700 prompt tokens > 1000 -> none left */
        int why;
        assert_int_equal(pick(&rng, g, gr, NULL, 700, &why), -1);
        assert_int_equal(why, SY_PICK_NONE_AVAILABLE);
        assert_int_equal(pick(&rng, g, gr, NULL, 600, NULL), 1); /* exactly 1000 fits */
        unload(g);
    }
}

static void cost_based(void **st)
{
    (void)st;
    struct sy_table *g =
        load("model_list:\n" DEP("cb", "cb-0", ", input_cost_per_token: 0.00002, output_cost_per_token: 0.00004")
                 DEP("cb", "cb-1", ", input_cost_per_token: 0.000001, output_cost_per_token: 0.000002")
                     DEP("cb", "cb-2",
                         ", input_cost_per_token: 0.000001, output_cost_per_token: 0.000002") "router_settings: "
                                                                                              "{routing_strategy: "
                                                                                              "cost-based-routing}\n");
    const struct sy_group *gr = group(g, "cb");
    int c[3];
    tally(21, g, gr, 2000, c);
    assert_int_equal(c[0], 0);
    assert_in_range(c[1], 850, 1150); /* ties at random */
    unload(g);
    /* a model without a known price costs 5.0 per token (LiteLLM) and loses */
    g = load("model_list:\n"
             "  - model_name: cu\n    litellm_params: {model: openai/no-such-model-x, api_key: sk-test}\n"
             "    model_info: {id: cu-0}\n" DEP(
                 "cu", "cu-1",
                 ", input_cost_per_token: 0.5, output_cost_per_token: 0.5") "router_settings: {routing_strategy: "
                                                                            "cost-based-routing}\n");
    gr = group(g, "cu");
    assert_true(gr->d[0]->cost == 5.0);
    tally(22, g, gr, 50, c);
    assert_int_equal(c[1], 50);
    unload(g);
}

/* `order`: the lowest order wins under every strategy; deployments without
 * one rank after; a cooled-down order-1 deployment hands over to order 2. */
static void order_priority(void **st)
{
    (void)st;
    struct sy_table *g = load("model_list:\n" DEP("or", "or-0", ", order: 2") DEP("or", "or-1", ", order: 1") DEP(
        "or", "or-2", "") DEP("or", "or-3", ", order: 2") "router_settings: {cooldown_time: 60}\n");
    const struct sy_group *gr = group(g, "or");
    int c[4];
    tally(31, g, gr, 100, c);
    assert_int_equal(c[1], 100);
    int64_t now = sy_wall_ms();
    assert_true(sy_router_cooldown(&g->rc, gr, gr->d[1], 401, SY_EXC_AUTHENTICATION, 0, now) > 0);
    tally(32, g, gr, 2000, c);
    assert_int_equal(c[1] + c[2], 0);
    assert_in_range(c[0], 850, 1150);
    /* `avoid` (the deployment that just failed) is skipped when another remains */
    struct sy_rng rng;
    sy_rng_seed(&rng, 33);
    for (int i = 0; i < 50; i++)
        assert_int_equal(pick(&rng, g, gr, gr->d[0], -1, NULL), 3);
    unload(g);
}

/* Default ("v2") cooldown rule. */
static void cooldown_default(void **st)
{
    (void)st;
    struct sy_table *g = load("model_list:\n" DEP("cd", "cd-0", "") DEP("cd", "cd-1", "")
                                  DEP("cd", "cd-2", ", cooldown_time: 2") DEP("c1", "c1-0", ""));
    const struct sy_group *gr = group(g, "cd"), *one = group(g, "c1");
    const struct sy_rconf *rc = &g->rc;
    int64_t now = sy_wall_ms();
    /* 429 in a group of several: cooled for the router default, 5 s */
    assert_true(sy_router_cooldown(rc, gr, gr->d[0], 429, SY_EXC_RATE_LIMIT, 0, now) == now + 5000);
    assert_int_equal(atomic_load(&gr->d[0]->st->cooldown_status), 429);
    assert_int_equal(atomic_load(&gr->d[0]->st->state), 2);
    /* the upstream's Retry-After beats the router default ... */
    assert_true(sy_router_cooldown(rc, gr, gr->d[1], 429, SY_EXC_RATE_LIMIT, 12, now) == now + 12000);
    /* ... the deployment's cooldown_time beats both */
    assert_true(sy_router_cooldown(rc, gr, gr->d[2], 429, SY_EXC_RATE_LIMIT, 12, now) == now + 2000);
    assert_int_equal(sy_router_available(gr, NULL), 0);
    char ids[256];
    assert_true(sy_router_cooldown_left(gr, ids, sizeof ids) >= 1);
    assert_non_null(strstr(ids, "'cd-0'"));
    /* one deployment: a 429 or a 500 does not cool it down (LiteLLM keeps
     * serving the only deployment), a 401/404 does (not retryable) */
    for (int i = 0; i < 20; i++)
        assert_true(sy_router_cooldown(rc, one, one->d[0], i % 2 ? 429 : 500, SY_EXC_INTERNAL_SERVER, 0, now) == 0);
    /* ... until 100 % of at least 1000 requests this minute failed */
    for (int i = 20; i < 999; i++)
        assert_true(sy_router_cooldown(rc, one, one->d[0], 500, SY_EXC_INTERNAL_SERVER, 0, now) == 0);
    assert_true(sy_router_cooldown(rc, one, one->d[0], 500, SY_EXC_INTERNAL_SERVER, 0, now) == now + 5000);
    unload(g);

    g = load("model_list:\n" DEP("ce", "ce-0", "") DEP("ce", "ce-1", "") DEP("c2", "c2-0", ""));
    gr = group(g, "ce");
    one = group(g, "c2");
    rc = &g->rc;
    assert_true(sy_router_cooldown(rc, one, one->d[0], 401, SY_EXC_AUTHENTICATION, 0, now) == now + 5000);
    /* other 4xx never cool down */
    static const int never[] = {400, 403, 422, 413};
    for (size_t i = 0; i < sizeof never / sizeof *never; i++)
        assert_true(sy_router_cooldown(rc, gr, gr->d[1], never[i], SY_EXC_BAD_REQUEST, 0, now) == 0);
    /* 500s in a group of several: > 50 % failed of >= 5 requests this minute */
    struct sy_dstate *s = gr->d[0]->st;
    sy_win_add(&s->w_ok, now, 2);
    assert_true(sy_router_cooldown(rc, gr, gr->d[0], 500, SY_EXC_INTERNAL_SERVER, 0, now) == 0); /* 1/3 */
    assert_true(sy_router_cooldown(rc, gr, gr->d[0], 500, SY_EXC_INTERNAL_SERVER, 0, now) == 0); /* 2/4 */
    assert_true(sy_router_cooldown(rc, gr, gr->d[0], 500, SY_EXC_INTERNAL_SERVER, 0, now) > 0);  /* 3/5 */
    unload(g);
}

/* allowed_fails (legacy mode), allowed_fails_policy, disable_cooldowns, cooldown_time 0. */
static void cooldown_allowed_fails(void **st)
{
    (void)st;
    int64_t now = sy_wall_ms();
    struct sy_table *g = load("model_list:\n" DEP("af", "af-0", "") DEP("af", "af-1", "")
                                  DEP("a1", "a1-0", "") "router_settings: {allowed_fails: 2, cooldown_time: 30}\n");
    const struct sy_group *gr = group(g, "af"), *one = group(g, "a1");
    assert_int_equal(g->rc.legacy_cooldown, 1);
    /* failures this minute must exceed allowed_fails: the third cools, even a 429 */
    assert_true(sy_router_cooldown(&g->rc, gr, gr->d[0], 429, SY_EXC_RATE_LIMIT, 0, now) == 0);
    assert_true(sy_router_cooldown(&g->rc, gr, gr->d[0], 500, SY_EXC_INTERNAL_SERVER, 0, now) == 0);
    assert_true(sy_router_cooldown(&g->rc, gr, gr->d[0], 500, SY_EXC_INTERNAL_SERVER, 0, now) == now + 30000);
    /* the counter restarts after a cooldown */
    assert_int_equal(sy_win_get(&gr->d[0]->st->w_afail, now), 0);
    /* the rule applies to a group of one too */
    for (int i = 0; i < 2; i++)
        assert_true(sy_router_cooldown(&g->rc, one, one->d[0], 500, SY_EXC_INTERNAL_SERVER, 0, now) == 0);
    assert_true(sy_router_cooldown(&g->rc, one, one->d[0], 500, SY_EXC_INTERNAL_SERVER, 0, now) > 0);
    unload(g);

    g = load("model_list:\n" DEP("ap", "ap-0", "")
                 DEP("ap", "ap-1", "") "router_settings:\n  allowed_fails_policy: {RateLimitErrorAllowedFails: 0, "
                                       "InternalServerErrorAllowedFails: 4}\n");
    gr = group(g, "ap");
    assert_true(sy_router_cooldown(&g->rc, gr, gr->d[0], 429, SY_EXC_RATE_LIMIT, 0, now) > 0);
    for (int i = 0; i < 4; i++)
        assert_true(sy_router_cooldown(&g->rc, gr, gr->d[1], 500, SY_EXC_INTERNAL_SERVER, 0, now) == 0);
    assert_true(sy_router_cooldown(&g->rc, gr, gr->d[1], 500, SY_EXC_INTERNAL_SERVER, 0, now) > 0);
    unload(g);

    g = load("model_list:\n" DEP("dc", "dc-0", "")
                 DEP("dc", "dc-1", "") "router_settings: {disable_cooldowns: true}\n");
    gr = group(g, "dc");
    for (int i = 0; i < 10; i++)
        assert_true(sy_router_cooldown(&g->rc, gr, gr->d[0], 429, SY_EXC_RATE_LIMIT, 0, now) == 0);
    assert_int_equal(atomic_load(&gr->d[0]->st->state), 1); /* counted as a failure all the same */
    unload(g);

    g = load("model_list:\n" DEP("z0", "z0-0", "") DEP("z0", "z0-1", "") "router_settings: {cooldown_time: 0}\n");
    gr = group(g, "z0");
    assert_true(sy_router_cooldown(&g->rc, gr, gr->d[0], 429, SY_EXC_RATE_LIMIT, 0, now) == 0);
    /* the upstream's Retry-After ranks above the router's cooldown_time (§3.7) */
    assert_true(sy_router_cooldown(&g->rc, gr, gr->d[1], 429, SY_EXC_RATE_LIMIT, 30, now) == now + 30000);
    unload(g);
}

static void retry_classes(void **st)
{
    (void)st;
    assert_int_equal(sy_router_exc_class(400, 0), SY_EXC_BAD_REQUEST);
    assert_int_equal(sy_router_exc_class(400, 1), SY_EXC_CONTENT_POLICY);
    assert_int_equal(sy_router_exc_class(401, 0), SY_EXC_AUTHENTICATION);
    assert_int_equal(sy_router_exc_class(408, 0), SY_EXC_TIMEOUT);
    assert_int_equal(sy_router_exc_class(429, 0), SY_EXC_RATE_LIMIT);
    assert_int_equal(sy_router_exc_class(503, 0), SY_EXC_INTERNAL_SERVER);
    assert_int_equal(sy_router_exc_class(404, 0), SY_EXC__COUNT);
}

/* num_retries: request, then retry_policy[class], then the deployment's, then the router's. */
static void retry_counts(void **st)
{
    (void)st;
    struct sy_table *g = load("model_list:\n" DEP(
        "rc", "rc-0", "") "router_settings:\n  num_retries: 3\n"
                          "  retry_policy: {RateLimitErrorRetries: 5, InternalServerErrorRetries: 0}\n");
    const struct sy_rconf *rc = &g->rc;
    assert_int_equal(rc->num_retries, 3);
    assert_int_equal(sy_router_retries(rc, -1, -1, SY_EXC_RATE_LIMIT), 5);
    assert_int_equal(sy_router_retries(rc, -1, -1, SY_EXC_INTERNAL_SERVER), 0);
    assert_int_equal(sy_router_retries(rc, -1, -1, SY_EXC_TIMEOUT), 3);
    assert_int_equal(sy_router_retries(rc, -1, 7, SY_EXC_TIMEOUT), 7);
    assert_int_equal(sy_router_retries(rc, -1, 7, SY_EXC_RATE_LIMIT), 5);
    assert_int_equal(sy_router_retries(rc, 1, 7, SY_EXC_RATE_LIMIT), 1);
    assert_int_equal(sy_router_retries(rc, -1, -1, SY_EXC__COUNT), 3);
    unload(g);
    g = load("model_list:\n" DEP("rd", "rd-0", ""));
    assert_int_equal(g->rc.num_retries, 2); /* LiteLLM's (openai's) default */
    unload(g);
}

static int should(const struct sy_table *g, const struct sy_group *gr, struct sy_failure f, double *delay, uint64_t rnd)
{
    *delay = -1;
    return sy_router_should_retry(&g->rc, gr, &f, delay, rnd);
}

static void retry_decisions(void **st)
{
    (void)st;
    struct sy_table *g = load("model_list:\n" DEP("rr", "rr-0", "") DEP("rr", "rr-1", "") DEP("r1", "r1-0", "") DEP(
        "rb", "rb-0", "") "router_settings:\n  num_retries: 2\n  retry_policy: {BadRequestErrorRetries: 1}\n"
                          "  retry_after: 1\n");
    const struct sy_group *gr = group(g, "rr"), *one = group(g, "r1");
    double d;
    struct sy_failure f = {
        .status = 500, .exc = SY_EXC_INTERNAL_SERVER, .req_retries = -1, .dep_retries = -1, .failed = gr->d[0]};
    /* another healthy deployment: retry at once */
    assert_int_equal(should(g, gr, f, &d, 0), 1);
    assert_true(d == 0);
    f.retries_done = 2; /* num_retries used up */
    assert_int_equal(should(g, gr, f, &d, 0), 0);
    f.retries_done = 0;
    f.status = 404;
    f.exc = SY_EXC__COUNT;
    assert_int_equal(should(g, gr, f, &d, 0), 0);
    /* context-window / content-policy errors go to their fallbacks when set */
    f = (struct sy_failure){.status = 400,
                            .exc = SY_EXC_BAD_REQUEST,
                            .context_window = 1,
                            .has_cw_fallbacks = 1,
                            .req_retries = -1,
                            .dep_retries = -1};
    assert_int_equal(should(g, gr, f, &d, 0), 0);
    f.context_window = 0;
    f.has_cw_fallbacks = 0;
    /* a 400 is retried only because retry_policy names BadRequestError (docs/router.md) */
    assert_int_equal(should(g, gr, f, &d, 0), 1);
    f.retries_done = 1;
    assert_int_equal(should(g, gr, f, &d, 0), 0);
    f = (struct sy_failure){.status = 403, .exc = SY_EXC__COUNT, .req_retries = -1, .dep_retries = -1};
    assert_int_equal(should(g, gr, f, &d, 0), 0);
    /* 401 in a group of one: not retried; in a group of several: retried */
    f = (struct sy_failure){.status = 401, .exc = SY_EXC_AUTHENTICATION, .req_retries = -1, .dep_retries = -1};
    assert_int_equal(should(g, one, f, &d, 0), 0);
    f.failed = gr->d[0];
    assert_int_equal(should(g, gr, f, &d, 0), 1);

    /* the only deployment: back off; the upstream's Retry-After (<= 60 s) plus jitter */
    f = (struct sy_failure){.status = 429,
                            .exc = SY_EXC_RATE_LIMIT,
                            .req_retries = -1,
                            .dep_retries = -1,
                            .retry_after_s = 3,
                            .failed = one->d[0]};
    assert_int_equal(should(g, one, f, &d, 500), 1);
    assert_true(d >= 3 && d <= 3.25);
    /* else 0.5 s * 2^retries * (1 - 0.25 jitter), at most 8 s, at least retry_after (1 s) */
    f.retry_after_s = 0;
    struct sy_rng rng;
    sy_rng_seed(&rng, 77);
    for (int k = 0; k < 2; k++) {
        f.retries_done = k;
        for (int i = 0; i < 50; i++) {
            assert_int_equal(should(g, one, f, &d, sy_rng_next(&rng)), 1);
            double base = 0.5 * (1 << k);
            assert_true(d >= (base * 0.75 < 1 ? 1 : base * 0.75) && d <= (base < 1 ? 1 : base));
        }
    }
    f.req_retries = 10; /* the request's num_retries */
    f.retries_done = 6;
    assert_int_equal(should(g, one, f, &d, 999), 1);
    assert_true(d >= 6 && d <= 8);
    f.retry_after_s = 120; /* too long to honour: the back-off instead */
    assert_int_equal(should(g, one, f, &d, 0), 1);
    assert_true(d == 8);

    /* no healthy deployment left: no retry */
    int64_t now = sy_wall_ms();
    const struct sy_group *rb = group(g, "rb");
    assert_true(sy_router_cooldown(&g->rc, rb, rb->d[0], 401, SY_EXC_AUTHENTICATION, 60, now) > 0);
    f = (struct sy_failure){
        .status = 500, .exc = SY_EXC_INTERNAL_SERVER, .req_retries = -1, .dep_retries = -1, .failed = rb->d[0]};
    assert_int_equal(should(g, rb, f, &d, 0), 0);
    unload(g);
}

/* What sy_router_pick drops before the strategy runs: a deployment at its
 * max_parallel_requests (its own, else default_max_parallel_requests), one a
 * health check marked unhealthy, one in cooldown; none left is "none
 * available", with the seconds until the first cooldown ends and the ids. */
static void availability(void **st)
{
    (void)st;
    struct sy_table *g = load("model_list:\n" DEP("av", "av-0", ", max_parallel_requests: 1") DEP("av", "av-1", "") DEP(
        "av", "av-2", "") "router_settings: {routing_strategy: simple-shuffle, default_max_parallel_requests: 2}\n");
    const struct sy_group *gr = group(g, "av");
    assert_int_equal(gr->d[0]->max_parallel, 1);
    assert_int_equal(gr->d[1]->max_parallel, 2); /* the router's default */
    int c[3];
    tally(5, g, gr, 600, c);
    for (int i = 0; i < 3; i++)
        assert_in_range(c[i], 120, 280);      /* uniform while nothing is excluded */
    atomic_store(&gr->d[0]->st->inflight, 1); /* at its cap */
    tally(6, g, gr, 600, c);
    assert_int_equal(c[0], 0);
    assert_in_range(c[1], 200, 400);
    atomic_store(&gr->d[0]->st->inflight, 0);
    sy_dstate_set_healthy(gr->d[1]->st, 0);
    tally(7, g, gr, 600, c);
    assert_int_equal(c[1], 0);
    assert_int_equal(sy_router_available(gr, NULL), 2);
    assert_int_equal(sy_router_available(gr, gr->d[0]), 1);
    /* cool down the other two: a 429 in a group of several, Retry-After 30 s */
    int64_t now = sy_wall_ms();
    assert_true(sy_router_cooldown(&g->rc, gr, gr->d[0], 429, SY_EXC_RATE_LIMIT, 30, now) > 0);
    assert_true(sy_router_cooldown(&g->rc, gr, gr->d[2], 429, SY_EXC_RATE_LIMIT, 30, now) > 0);
    struct sy_rng rng;
    sy_rng_seed(&rng, 8);
    int why = 0;
    assert_int_equal(pick(&rng, g, gr, NULL, -1, &why), -1);
    assert_int_equal(why, SY_PICK_NONE_AVAILABLE);
    assert_int_equal(sy_router_available(gr, NULL), 0);
    char ids[256];
    double left = sy_router_cooldown_left(gr, ids, sizeof ids);
    assert_true(left >= 1 && left <= 30);
    assert_non_null(strstr(ids, "'av-0'"));
    assert_non_null(strstr(ids, "'av-2'"));
    assert_null(strstr(ids, "av-1")); /* unhealthy, not cooling down */
    /* healthy again: the only one left */
    sy_dstate_set_healthy(gr->d[1]->st, 1);
    assert_int_equal(pick(&rng, g, gr, NULL, -1, NULL), 1);
    atomic_store(&gr->d[1]->st->inflight, 0);
    unload(g);
}

/* enable_pre_call_checks: a deployment whose max_input_tokens is below the
 * prompt is dropped; none fitting is a context-window error (so
 * context_window_fallbacks fire). Without the checks both are used. */
static void pre_call_checks(void **st)
{
    (void)st;
    static const char *const on[] = {"false", "true"};
    for (int v = 0; v < 2; v++) {
        char yaml[1024];
        snprintf(yaml, sizeof yaml,
                 "model_list:\n" DEPI("pc%d", "pc%d-0", "", ", max_input_tokens: 100")
                     DEPI("pc%d", "pc%d-1", "",
                          ", max_input_tokens: 1000") "router_settings: {enable_pre_call_checks: %s}\n",
                 v, v, v, v, on[v]);
        struct sy_table *g = load(yaml);
        char name[8];
        snprintf(name, sizeof name, "pc%d", v);
        const struct sy_group *gr = group(g, name);
        assert_int_equal(g->rc.pre_call_checks, v);
        struct sy_rng rng;
        sy_rng_seed(&rng, 31);
        int c[2] = {0, 0};
        for (int i = 0; i < 400; i++) {
            int k = pick(&rng, g, gr, NULL, 500, NULL);
            assert_true(k >= 0);
            c[k]++;
        }
        if (v) {
            assert_int_equal(c[0], 0); /* 500 tokens do not fit in 100 */
            int why = 0;
            assert_int_equal(pick(&rng, g, gr, NULL, 5000, &why), -1);
            assert_int_equal(why, SY_PICK_NONE_CONTEXT);
            assert_int_equal(pick(&rng, g, gr, NULL, -1, NULL) >= 0, 1); /* unknown size: not checked */
        } else {
            assert_in_range(c[0], 140, 260);
        }
        unload(g);
    }
}

/* A group whose only deployment has a provider switchyard does not serve. */
static void unsupported_provider(void **st)
{
    (void)st;
    struct sy_table *g = load("model_list:\n  - model_name: un\n    litellm_params: {model: nosuchprovider/x}\n"
                              "    model_info: {id: un-0}\n");
    const struct sy_group *gr = group(g, "un");
    assert_int_equal(gr->usable, 0);
    struct sy_rng rng;
    sy_rng_seed(&rng, 3);
    int why = 0;
    assert_int_equal(pick(&rng, g, gr, NULL, -1, &why), -1);
    assert_int_equal(why, SY_PICK_NONE_SUPPORTED);
    unload(g);
}

/* latency-based routing keeps the last max_latency_list_size samples and
 * forgets them after routing_strategy_args.ttl. */
static void latency_window(void **st)
{
    (void)st;
    struct sy_table *g =
        load("model_list:\n" DEP("lw", "lw-0", "")
                 DEP("lw", "lw-1", "") "router_settings:\n  routing_strategy: latency-based-routing\n"
                                       "  routing_strategy_args: {max_latency_list_size: 2, ttl: 60}\n");
    const struct sy_group *gr = group(g, "lw");
    const struct sy_rconf *rc = &g->rc;
    assert_int_equal(rc->max_latency_list_size, 2);
    assert_true(rc->latency_ttl_s == 60);
    int64_t now = sy_wall_ms();
    sy_router_ok(rc, gr->d[0], 10, 0.100);
    sy_router_ok(rc, gr->d[0], 10, 0.010);
    sy_router_ok(rc, gr->d[0], 10, 0.020); /* the 0.100 sample leaves the ring */
    double l = sy_router_latency(rc, gr->d[0]->st, now);
    assert_true(l > 0.0149 && l < 0.0151);
    sy_router_ok(rc, gr->d[1], 10, 0.012);
    struct sy_rng rng;
    sy_rng_seed(&rng, 4);
    for (int i = 0; i < 50; i++)
        assert_int_equal(pick(&rng, g, gr, NULL, -1, NULL), 1);         /* 0.012 < 0.015 */
    assert_true(sy_router_latency(rc, gr->d[0]->st, now + 61000) == 0); /* past the ttl: no samples */
    unload(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rng_seeded),
        cmocka_unit_test(shuffle_weight),
        cmocka_unit_test(shuffle_rpm_tpm),
        cmocka_unit_test(shuffle_uniform),
        cmocka_unit_test(least_busy),
        cmocka_unit_test(latency_based),
        cmocka_unit_test(usage_based),
        cmocka_unit_test(cost_based),
        cmocka_unit_test(order_priority),
        cmocka_unit_test(cooldown_default),
        cmocka_unit_test(cooldown_allowed_fails),
        cmocka_unit_test(retry_classes),
        cmocka_unit_test(retry_counts),
        cmocka_unit_test(retry_decisions),
        cmocka_unit_test(availability),
        cmocka_unit_test(pre_call_checks),
        cmocka_unit_test(unsupported_provider),
        cmocka_unit_test(latency_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
