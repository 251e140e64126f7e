/* stage.h - a request stage as a const descriptor (DESIGN §6; nginx's
 * ngx_module_t, h2o's handler registration).
 *
 * A stage is one file in src/stages/ that defines one descriptor:
 *
 *     static int foo_slot = -1;                      per-request state (gateway/slot.h)
 *     static int foo_enabled(const struct sy_gwconf *g, enum sy_route_kind k) { return g->cfg->foo; }
 *     static int foo_run(struct sy_call *c) { ... return SY_OK; }
 *     const struct sy_stage sy_stage_foo = {
 *         .name = "foo", .routes = SY_RKB_LLM, .enabled = foo_enabled,
 *         .run = foo_run, .finish = foo_finish, .slot = &foo_slot,
 *     };
 *
 * and one line, SY_STAGE(foo), at its place in src/stages/list.def: the only
 * file that names every stage, in pipeline order. The engine sees the list
 * (sy_stages[]) and nothing else:
 *
 *   - at the first config build it gives every descriptor's slot an index
 *     (sy_slot_register), so a call's state array has room for it;
 *   - building a config (gwconf.c build_pipelines) walks the list once per
 *     route and keeps the stages whose routes mask has the route and whose
 *     enabled() says yes (NULL: always), flattened into arrays sized by count:
 *     run[] (the run loop, pipeline.c), finish[] (sy_call_account) and
 *     headers[] (sy_call_headers). A stage a config does not enable is absent
 *     from all three: it costs nothing per request.
 *
 * Hooks:
 *   run(c)            SY_OK (next stage), SY_AGAIN (suspended: its completion
 *                     calls sy_call_resume) or SY_DONE (the answer was sent).
 *                     NULL: a finish-only entry (not printed by --check-config).
 *   finish(c, status) the call ended with status (sy_call_account), in list
 *                     order. It runs whether or not run() was reached, so it
 *                     checks its own slot and does nothing when run() left no state.
 *   worker_start(w), worker_stop(w)
 *                     per-worker work of its own (background timers): run for
 *                     every listed stage, enabled or not, on w's loop.
 *   headers(c, b)     lines ("Name: value\r\n") the stage adds to every answer's
 *                     x-litellm headers, in list order; same rule as finish.
 *   answer(c, body)   a whole 2xx JSON answer, in the client's dialect, is about
 *                     to be sent: read or rewrite it, hold it (SY_AGAIN, then
 *                     sy_call_answer_resume) or refuse it (SY_DONE, answered).
 *                     A hook that holds it may instead ask the model again
 *                     with a new request (sy_call_redo, gateway.h: a tool
 *                     loop); the new answer comes through the hooks again.
 *                     A stage that must see a stream instead sets c->out.wr
 *                     (struct sy_owriter, gateway.h) before the stream starts.
 */
#ifndef SY_GATEWAY_STAGE_H
#define SY_GATEWAY_STAGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gateway/gateway.h"

/* Route-kind bits for sy_stage.routes. */
#define SY_RKB(k)  (1u << (k))
#define SY_RKB_LLM (SY_RKB(SY_RK_MESSAGES + 1) - 1u) /* every route SY_RK_IS_LLM */
_Static_assert(SY_RK__COUNT <= 32, "sy_stage.routes has a bit per route kind");

struct sy_stage {
    const char *name; /* as --check-config prints it */
    uint32_t routes;  /* SY_RKB(kind) for each route kind it applies to */
    /* does config g turn it on for route k? NULL: always */
    int (*enabled)(const struct sy_gwconf *g, enum sy_route_kind k);
    sy_stage_fn run;         /* NULL: finish-only */
    sy_finish_fn finish;     /* optional */
    sy_headers_fn headers;   /* optional */
    sy_fallback_fn fallback; /* optional: the attempt machine is about to try a fallback group */
    sy_answer_fn answer;     /* optional: a whole 2xx JSON answer is about to go out (sy_call_answer) */
    int *slot;               /* its per-request state's slot index (static int x_slot = -1), or NULL */
    /* Per worker, whatever the config (nginx's init_process / exit_process): on the
     * worker's loop thread once it listens, and when it drains. Optional. */
    void (*worker_start)(struct sy_worker *w);
    void (*worker_stop)(struct sy_worker *w);
    /* Per config (nginx's create_main_conf): what the stage compiles from a
     * config, built after the model table and before the pipelines (enabled()
     * may read it), freed with the config. conf_slot (static int x = -1) gets
     * the index sy_stage_conf reads. conf_build returns 0, or -1 with err: the
     * config is refused. conf_print adds lines to --check-config. Optional. */
    int (*conf_build)(struct sy_gwconf *g, void **conf, char *err, size_t errlen);
    void (*conf_free)(void *conf);
    void (*conf_print)(const struct sy_gwconf *g, FILE *out);
    int *conf_slot;
};

/* A stage's per-config state (conf_build), or NULL. */
static inline void *sy_stage_conf(const struct sy_gwconf *g, int conf_slot)
{
    return conf_slot >= 0 && g->sconf ? g->sconf[conf_slot] : NULL;
}

/* The ordered list (src/stages/list.c from list.def). */
extern const struct sy_stage *const sy_stages[];
extern const size_t sy_nstages;

#endif
