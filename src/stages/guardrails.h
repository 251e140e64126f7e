/* guardrails.h - what the guardrail stages share (stages/guardrails.c,
 * guardrails_during.c, guardrails_stream.c); the guardrails themselves are
 * src/guardrails/ (guardrail.h).
 *
 * Three hooks of a call, LiteLLM's event hooks:
 *   pre_call     stage `guardrails`, after the key checks and before routing:
 *                the request's texts, in config order; a mask rewrites the body
 *                every later stage and the upstream see; a block answers 400.
 *   during_call  stage `guardrails_during`, just before the upstream stage:
 *                service checks start beside the upstream call, which is gated
 *                (gateway.h sy_call_gate): nothing reaches the client until
 *                they passed; a block drops the upstream answer and answers 400.
 *                In-process during_call checks cost microseconds and run as
 *                pre_call ones (the same verdict, no gate).
 *   post_call    the answer: a JSON one through the stage's answer hook, a
 *                stream through its writer (guardrails_stream.c): in-process
 *                checks event by event (a block ends the stream with an error
 *                event), service checks on the whole answer, held until they
 *                pass. Reversible masks of the request are undone in both.
 * A check of a body of SY_OFFLOAD_MIN_BYTES or more runs on the offload pool.
 */
#ifndef SY_STAGES_GUARDRAILS_H
#define SY_STAGES_GUARDRAILS_H

#include <uv.h>

#include "gateway/gateway.h"
#include "guardrails/guardrail.h"
#include "guardrails/set.h"

struct gcall;

/* The cap of the stages' scratch buffers (a body, a rewritten answer): the
 * request and answer caps bound what reaches them. */
#define SY_GUARD_BUF_MAX (512u << 20)

/* One service exchange in flight (the call's arena). */
struct gsvc {
    struct gcall *gc;
    struct sy_call *c;
    const struct sy_guard *g;
    unsigned hook; /* SY_GM_PRE, SY_GM_DURING, SY_GM_POST */
    struct sy_ginput in;
    struct sy_ureq *ur;
    struct sy_ghttp req;
    uv_buf_t body;
    int step;
    void *state;
    int status;
    struct sy_buf resp;
    uint64_t t0;
    void (*done)(struct gsvc *s, struct sy_gresult *r);
};

struct gcall {
    const struct sy_guardset *set;
    unsigned char *on; /* set->n: runs in this call */
    char **extra;      /* set->n: the request's extra_body for it, or NULL */
    enum sy_gdialect d;
    size_t nrun;
    unsigned post;         /* some selected guardrail has post_call */
    unsigned logonly;      /* ... logging_only (an in-process one) */
    struct sy_buf logbody; /* the request as the logs see it */
    /* a sequential pass (pre_call, or post_call on a JSON answer) */
    unsigned pos, phase;
    struct sy_buf *body; /* what the pass checks (the request, or the answer) */
    struct sy_gtexts tx;
    int tx_ok, tx_skip; /* tx reads body (with these skip flags: bit 0 system, bit 1 tool) */
    int async, waiting, own_abort;
    struct sy_gresult res; /* an offloaded check's result, and when it started */
    uint64_t t0;
    /* reversible masks of the request, undone in the answer */
    struct sy_gpair *pairs;
    size_t npairs;
    /* service exchanges */
    struct gsvc *sv[64];
    unsigned nsv;
    unsigned during_pending;
    int during_done; /* a during_call check answered the call (blocked) */
    /* what ran, for the header, the logs and the spend row */
    struct sy_buf applied; /* "a,b" */
    struct sy_buf info;    /* the StandardLoggingGuardrailInformation list being built */
    unsigned char status;  /* SY_GUARD_* */
    void *stream;          /* guardrails_stream.c's state */
};

extern int sy_guard_slot;      /* the per-call state's slot */
extern int sy_guard_conf_slot; /* the config's struct sy_guardset */

static inline struct gcall *sy_guard_call(struct sy_call *c)
{
    return sy_guard_slot >= 0 && c->slots ? (struct gcall *)c->slots[sy_guard_slot] : NULL;
}

/* The input of a check of gc's texts in phase (SY_GM_PRE / SY_GM_POST) of body. */
void sy_guard_input(struct sy_call *c, struct gcall *gc, const struct sy_guard *g, unsigned phase, const char *body,
                    size_t n, struct sy_ginput *in);
/* Start a service exchange of g on in; done(s, r) follows on the loop (r owned
 * by the caller of done for the duration of the call). NULL when it could not
 * start (r is then filled with the error by the caller). */
struct gsvc *sy_guard_svc_start(struct sy_call *c, struct gcall *gc, const struct sy_guard *g, unsigned hook,
                                const struct sy_ginput *in, void (*done)(struct gsvc *s, struct sy_gresult *r));
/* Record a check that ran: metrics, the applied list, the logging information. */
void sy_guard_record(struct sy_call *c, struct gcall *gc, const struct sy_guard *g, unsigned hook,
                     const struct sy_gresult *r, uint64_t t0);
/* LiteLLM's error for a block or a failed check (400 / 500), in the client's dialect. SY_DONE. */
int sy_guard_refuse(struct sy_call *c, struct gcall *gc, const struct sy_guard *g, const struct sy_gresult *r);

/* guardrails_stream.c: the stream writer, set when a post_call guardrail or
 * an undo of masks applies to a streamed answer. */
extern const struct sy_owriter sy_guard_writer;

#endif
