/* health.h - GET /health's stage and background checks (stages/health.c).
 *
 * GET /health (the health stage) makes one cheap call per deployment, all at
 * once on the worker's upstream pool, and answers
 * {"healthy_endpoints":[..],"unhealthy_endpoints":[..],"healthy_count":N,
 *  "unhealthy_count":M}. Every result also marks the deployment's live router
 * state (sy_dstate_set_healthy).
 *
 * With general_settings.background_health_checks, one worker (worker 0) runs
 * the same round every health_check_interval seconds on its own loop and
 * keeps the latest results process-wide (router/health.h); GET /health then
 * answers from them without calling anything (or runs a round itself while
 * none exist yet). See docs/health.md.
 */
#ifndef SY_STAGES_HEALTH_H
#define SY_STAGES_HEALTH_H

struct sy_worker;

/* Start background health checks on worker w. Call on w's loop thread (for
 * instance in the worker thread before uv_run, or from a callback of its
 * loop). Only worker 0 runs them: for any other worker this does nothing.
 * Safe to call whatever the config says: each tick reads the worker's current
 * config (w->conf), so a SIGHUP that turns background_health_checks on or off,
 * or changes health_check_interval, takes effect within a second. The timer
 * is unref'd: it never keeps a loop alive. Calling it twice is harmless. */
void sy_health_background_start(struct sy_worker *w);

/* Stop them: the timer is closed (its memory released by the close callback,
 * so the loop must run once more, as it does while draining) and a round in
 * flight is cancelled (its upstream calls abandoned, its results dropped).
 * Call on w's loop thread, before the worker's upstream pool is closed
 * (e.g. when draining starts). Idempotent; does nothing for a worker that did
 * not start them. */
void sy_health_background_stop(struct sy_worker *w);

#endif
