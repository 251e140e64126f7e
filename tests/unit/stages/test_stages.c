/* test_stages.c - the stage list as an extension point (gateway/stage.h).
 *
 * This file adds stages without editing the engine: it defines its own
 * sy_stages[] from src/stages/list.def plus its own descriptors (the linker
 * then never takes src/stages/list.c). It checks that
 *   - a config's pipelines are the list filtered per route, in list order, as
 *     --check-config prints them (with a database, auth, cache and limits on);
 *   - an added stage runs from the engine's entry point (sy_handle_request),
 *     gets its slot, adds its header lines to every answer and has its finish
 *     hook run when the call ends; a finish-only entry is not in the printed
 *     pipeline but finishes too;
 *   - a route has no bound on its stage count (40 stages on one route).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <http_parser.h>

#include "config/config.h"
#include "core/errors.h"
#include "gateway/gateway.h"
#include "gateway/slot.h"
#include "gateway/stage.h"
#include "http/server.h"

/* ---- a dummy stage, as a feature would write it ---- */

struct dstate {
    int runs;
};
static int dummy_slot = -1;
static int dummy_finished = -1; /* the status its finish hook saw */
static int dummy_finish_calls, fin_only_calls;

static int dummy_enabled(const struct sy_gwconf *g, enum sy_route_kind k)
{
    return g->cfg != NULL && k == SY_RK_LIVENESS;
}

static int dummy_run(struct sy_call *c)
{
    struct dstate *s = sy_call_slot_new(c, dummy_slot, sizeof *s);
    assert_non_null(s);
    s->runs++;
    return SY_DONE; /* "answered" (this test sends nothing) */
}

static void dummy_finish(struct sy_call *c, int status)
{
    dummy_finish_calls++;
    const struct dstate *s = sy_call_slot(c, dummy_slot);
    if (s && s->runs == 1)
        dummy_finished = status;
}

static void dummy_headers(const struct sy_call *c, struct sy_buf *b)
{
    if (sy_call_slot(c, dummy_slot))
        SY_BUF_LIT(b, "x-dummy-stage: ran\r\n");
}

static const struct sy_stage dummy = {
    .name = "dummy",
    .routes = SY_RKB(SY_RK_LIVENESS) | SY_RKB(SY_RK_CHAT),
    .enabled = dummy_enabled,
    .run = dummy_run,
    .finish = dummy_finish,
    .headers = dummy_headers,
    .slot = &dummy_slot,
};

static void fin_only_finish(struct sy_call *c, int status)
{
    (void)c;
    (void)status;
    fin_only_calls++;
}

static const struct sy_stage fin_only = {
    .name = "fin_only",
    .routes = SY_RKB(SY_RK_LIVENESS),
    .finish = fin_only_finish,
};

/* ---- many stages on one route ---- */

#define NMANY 40
static int many_runs;

static int many_run(struct sy_call *c)
{
    (void)c;
    return ++many_runs == NMANY ? SY_DONE : SY_OK;
}

#define MANY(i)                                                            \
    {                                                                      \
        .name = "many", .routes = SY_RKB(SY_RK_READINESS), .run = many_run \
    }
#define MANY10 MANY(0), MANY(1), MANY(2), MANY(3), MANY(4), MANY(5), MANY(6), MANY(7), MANY(8), MANY(9)
static const struct sy_stage many[NMANY] = {MANY10, MANY10, MANY10, MANY10};

/* ---- the list: the project's, with ours in front ---- */

#define M(i)        &many[i]
#define M10(i)      M(i), M(i + 1), M(i + 2), M(i + 3), M(i + 4), M(i + 5), M(i + 6), M(i + 7), M(i + 8), M(i + 9)
#define SY_STAGE(n) extern const struct sy_stage sy_stage_##n;
#include "stages/list.def"
#undef SY_STAGE
const struct sy_stage *const sy_stages[] = {
    &dummy, &fin_only, M10(0), M10(10), M10(20), M10(30),
#define SY_STAGE(n) &sy_stage_##n,
#include "stages/list.def"
#undef SY_STAGE
};
const size_t sy_nstages = sizeof sy_stages / sizeof sy_stages[0];

/* ---- helpers ---- */

static struct sy_gwconf *build(const char *yaml, int db)
{
    char err[512];
    struct sy_config *cfg = NULL;
    if (sy_config_load_string_ex(yaml, strlen(yaml), "test.yaml", NULL, SY_CONFIG_NO_SETENV | SY_CONFIG_QUIET, &cfg,
                                 err, sizeof err) != 0) {
        fprintf(stderr, "config: %s\n", err);
        fail();
    }
    sy_gw.db = db;
    struct sy_gwconf *g = sy_gwconf_build(cfg, err, sizeof err);
    sy_gw.db = 0;
    if (!g) {
        fprintf(stderr, "gwconf: %s\n", err);
        fail();
    }
    return g;
}

static char *print(const struct sy_gwconf *g)
{
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    assert_non_null(f);
    sy_gwconf_print(g, f);
    fclose(f);
    return out;
}

static const char full_yaml[] = "model_list:\n"
                                "  - model_name: m\n"
                                "    litellm_params:\n"
                                "      model: openai/gpt-4o\n"
                                "      api_key: sk-x\n"
                                "litellm_settings:\n"
                                "  cache: true\n"
                                "  require_auth_for_metrics_endpoint: true\n"
                                "general_settings:\n"
                                "  master_key: sk-1234\n"
                                "  global_max_parallel_requests: 10\n";

/* The pipelines of that config with a database, as the engine built them
 * before stages were descriptors (gwconf.c's named list), with ours added. */
static const char full_expected[] =
    "pipelines:\n"
    "  chat          auth -> parse -> file_refs -> key_checks -> mcp_tools -> route -> limits -> cache -> reserve -> "
    "upstream\n"
    "  completions   auth -> parse -> key_checks -> route -> limits -> cache -> reserve -> upstream\n"
    "  embeddings    auth -> parse -> key_checks -> route -> limits -> cache -> reserve -> upstream\n"
    "  responses     auth -> parse -> responses_prev -> file_refs -> key_checks -> mcp_tools -> route -> limits -> "
    "reserve -> upstream\n"
    "  passthrough   auth -> passthru -> key_checks -> route -> limits -> reserve -> upstream\n"
    "  messages      auth -> parse -> key_checks -> route -> limits -> reserve -> upstream\n"
    "  messages_countauth -> parse -> messages_count\n"
    "  models        auth -> models\n"
    "  model_one     auth -> model_one\n"
    "  liveness      dummy -> liveness\n"
    "  readiness     many -> many -> many -> many -> many -> many -> many -> many -> many -> many -> many -> many -> "
    "many -> many -> many -> many -> many -> many -> many -> many -> many -> many -> many -> many -> many -> many -> "
    "many -> many -> many -> many -> many -> many -> many -> many -> many -> many -> many -> many -> many -> many -> "
    "readiness\n"
    "  metrics       metrics_auth -> metrics\n"
    "  token_counter auth -> token_counter\n"
    "  health        auth -> health\n"
    "  admin         auth -> admin\n"
    "  cache_admin   auth -> cache_admin\n"
    "  responses_id  auth -> responses_id -> upstream\n"
    "  files         auth -> files -> key_checks -> limits -> upstream\n"
    "  routes        routes\n"
    "  root          root\n"
    "  provider      auth -> provider_pt\n"
    "  provider_open provider_pt\n"
    "  guardrails    auth -> guardrails\n"
    "  mcp           auth -> mcp\n"
    "  mcp_sse       auth -> mcp_sse\n"
    "  mcp_rest      auth -> mcp\n"
    "  ui            ui\n"
    "deployments: 1 usable of 1, model groups: 1\n"
    "mcp servers: also the database's LiteLLM_MCPServerTable (read every 10 s)\n";

/* A request as the server hands it to the engine. */
struct fake {
    struct sy_req r;
    struct sy_worker w;
};

static struct fake *fake_req(struct sy_gwconf *g, int method, const char *path)
{
    struct fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    sy_arena_init(&f->r.arena);
    f->r.method = method;
    f->r.path = (struct sy_str){path, strlen(path)};
    sy_buf_init(&f->r.body, 1024);
    f->w.conf = g;
    sy_rng_seed(&f->w.rng, 42);
    return f;
}

static void fake_free(struct fake *f)
{
    sy_arena_free(&f->r.arena);
    sy_buf_free(&f->r.body);
    free(f);
}

/* ---- tests ---- */

static void pipelines_follow_the_list(void **state)
{
    (void)state;
    struct sy_gwconf *g = build(full_yaml, 1);
    char *out = print(g);
    assert_string_equal(out, full_expected);
    free(out);
    /* the chat route: dummy's routes mask has it, its enabled() says no */
    assert_int_equal(g->routes[SY_RK_CHAT].n, 10);
    /* finish hooks in list order: limits, reserve (the spend row); the cache
     * store is the cache_store response filter's end */
    assert_int_equal(g->routes[SY_RK_CHAT].nfinish, 2);
    assert_int_equal(g->routes[SY_RK_CHAT].nheaders, 2);
    assert_int_equal(g->routes[SY_RK_RESPONSES].nfinish, 2);
    assert_int_equal(g->routes[SY_RK_MODELS].nfinish, 0);
    assert_int_equal(g->routes[SY_RK_MODELS].nheaders, 0);
    sy_gwconf_unref(g);
}

static void added_stage_runs_and_finishes(void **state)
{
    (void)state;
    struct sy_gwconf *g = build(full_yaml, 0);
    assert_true(dummy_slot >= 0 && dummy_slot < sy_nslots);
    const struct sy_pipeline *pl = &g->routes[SY_RK_LIVENESS];
    assert_int_equal(pl->n, 2);       /* dummy -> liveness; fin_only has no run hook */
    assert_int_equal(pl->nfinish, 2); /* dummy, fin_only */
    assert_int_equal(pl->nheaders, 1);
    struct fake *f = fake_req(g, HTTP_GET, "/health/liveness");
    dummy_finished = -1;
    dummy_finish_calls = fin_only_calls = 0;
    sy_handle_request(&f->r, &f->w);
    struct sy_call *c = f->r.handler_data;
    assert_non_null(c);
    const struct dstate *s = sy_call_slot(c, dummy_slot);
    assert_non_null(s);
    assert_int_equal(s->runs, 1);
    assert_int_equal(c->stage, 0); /* the loop stopped at the stage that answered */
    struct sy_buf h;
    sy_buf_init(&h, 16384);
    sy_call_headers(c, &h, 0);
    assert_non_null(h.p);
    assert_non_null(strstr(h.p, "x-dummy-stage: ran\r\n"));
    sy_buf_free(&h);
    sy_call_account(c, 204);
    assert_int_equal(dummy_finished, 204);
    assert_int_equal(dummy_finish_calls, 1);
    assert_int_equal(fin_only_calls, 1);
    sy_call_account(c, 500); /* a call ends once */
    assert_int_equal(dummy_finish_calls, 1);
    fake_free(f);
    sy_gwconf_unref(g);
}

static void no_bound_on_a_route(void **state)
{
    (void)state;
    struct sy_gwconf *g = build(full_yaml, 0);
    const struct sy_pipeline *pl = &g->routes[SY_RK_READINESS];
    assert_int_equal(pl->n, NMANY + 1);
    for (unsigned i = 0; i < NMANY; i++)
        assert_ptr_equal(pl->run[i], many_run);
    struct fake *f = fake_req(g, HTTP_GET, "/health/readiness");
    many_runs = 0;
    sy_handle_request(&f->r, &f->w);
    assert_int_equal(many_runs, NMANY); /* each ran once, in order, up to the one that answered */
    struct sy_call *c = f->r.handler_data;
    assert_int_equal(c->stage, NMANY - 1);
    sy_call_account(c, 200);
    fake_free(f);
    sy_gwconf_unref(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pipelines_follow_the_list),
        cmocka_unit_test(added_stage_runs_and_finishes),
        cmocka_unit_test(no_bound_on_a_route),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
