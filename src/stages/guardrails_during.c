/* guardrails_during.c - the `guardrails_during` stage: during_call guardrails
 * that call a service start here, just before the upstream stage, and run
 * beside the upstream call (stages/guardrails.h). The upstream's answer is
 * gated (gateway.h sy_call_ungate): its bytes and its end wait until every
 * check passed; the first block drops the upstream exchange and answers
 * LiteLLM's 400 instead. The stream writer of a post_call guardrail (or of
 * the undo of a reversible mask) is set here too, before any byte of the
 * answer can exist.
 */
#include "stages/guardrails.h"

#include <string.h>

#include "core/arena.h"
#include "core/errors.h"
#include "gateway/stage.h"
#include "http/server.h"

static int during_on(const struct sy_gwconf *g, enum sy_route_kind k)
{
    const struct sy_guardset *s = sy_stage_conf(g, sy_guard_conf_slot);
    return s && s->n && k != SY_RK_PASSTHRU;
}

static void during_done(struct gsvc *sv, struct sy_gresult *r)
{
    struct sy_call *c = sv->c;
    struct gcall *gc = sv->gc;
    if (c->finished || gc->during_done)
        return;
    gc->during_pending--;
    sy_guard_record(c, gc, sv->g, SY_GM_DURING, r, sv->t0);
    int refuse = r->verdict == SY_GV_BLOCK || (r->verdict == SY_GV_ERROR && !sv->g->fail_open);
    /* a mask cannot apply to a request already sent: LiteLLM's during_call hooks only block */
    if (refuse) {
        gc->during_done = 1;
        sy_call_gate_refuse(c);
        sy_guard_refuse(c, gc, sv->g, r);
        return;
    }
    if (!gc->during_pending)
        sy_call_ungate(c);
}

static int during_run(struct sy_call *c)
{
    struct gcall *gc = sy_guard_call(c);
    if (!gc)
        return SY_OK;
    if (c->in.stream && (gc->post || gc->npairs))
        c->out.wr = &sy_guard_writer;
    const struct sy_guardset *s = gc->set;
    for (size_t i = 0; i < s->n; i++) {
        const struct sy_guard *g = &s->g[i];
        if (!gc->on[i] || !(g->modes & SY_GM_DURING) || g->ops->check || !g->ops->request)
            continue;
        /* the request's texts as the upstream gets them (after any pre_call mask) */
        sy_gtexts_free(&gc->tx);
        memset(&gc->tx, 0, sizeof gc->tx);
        gc->tx_ok = 0;
        gc->phase = SY_GM_PRE;
        gc->body = &c->req->body;
        if (sy_gtexts_read(&gc->tx, gc->d, SY_GM_PRE, c->req->body.p ? c->req->body.p : "", c->req->body.len,
                           g->skip_system, g->skip_tool) != 0)
            continue;
        struct sy_ginput in;
        sy_guard_input(c, gc, g, SY_GM_PRE, c->req->body.p, c->req->body.len, &in);
        /* the texts must outlive this loop: each exchange keeps its own copy */
        struct sy_gtexts *own = sy_arena_alloc(&c->req->arena, sizeof *own);
        if (!own)
            continue;
        *own = gc->tx;
        memset(&gc->tx, 0, sizeof gc->tx);
        sy_arena_defer(&c->req->arena, (void (*)(void *))sy_gtexts_free, own);
        in.seg = own->seg;
        in.nseg = own->nseg;
        in.tool = own->tool;
        in.ntool = own->ntool;
        gc->during_pending++;
        c->out.gated = 1;
        if (!sy_guard_svc_start(c, gc, g, SY_GM_DURING, &in, during_done)) {
            struct sy_gresult r = {0};
            sy_gresult_error(&r, "guardrail %s: too many checks in one call", g->name);
            during_done(&(struct gsvc){.c = c, .gc = gc, .g = g}, &r);
            sy_gresult_free(&r);
        }
        if (c->finished || gc->during_done)
            return SY_DONE; /* a check failed at once and answered */
    }
    if (!gc->during_pending)
        c->out.gated = 0;
    return SY_OK;
}

const struct sy_stage sy_stage_guardrails_during = {
    .name = "guardrails_during",
    .routes = SY_RKB_LLM,
    .enabled = during_on,
    .run = during_run,
};
