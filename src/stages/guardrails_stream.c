/* guardrails_stream.c - post_call guardrails on a streamed answer, and the
 * undo of the request's reversible masks in it: the stream writer
 * (gateway.h struct sy_owriter) the guardrails_during stage sets.
 *
 * The writer cuts the client's bytes into SSE events (a blank line ends one)
 * and reads each event's JSON (guardrails/texts.c sy_gevent_read). Two modes:
 *
 *   incremental  (every selected post_call guardrail is in process) each event
 *                goes out as it comes, after:
 *                  - a tool call that starts is checked by name (tool_permission
 *                    blocks it before any byte of it is sent);
 *                  - each text piece is checked alone (a mask rewrites the
 *                    event) and with the last WINDOW bytes before it, so a
 *                    word split across two events still blocks;
 *                a block ends the stream with the dialect's error event.
 *   buffered     (some post_call guardrail calls a service, as LiteLLM's
 *                buffer-then-check) the events are held, the whole answer's
 *                texts and tool calls are assembled, the checks run at the
 *                stream's end, and the held events go out if they pass (a
 *                block sends the error event instead; a service's mask of a
 *                streamed answer cannot be applied and is recorded only).
 *                At most HOLD_MAX bytes are held: past that the stream fails
 *                closed.
 *
 * Undoing masks: a text piece may end inside a placeholder that the next
 * piece completes ("<EMAIL_AD" + "DRESS_1>"). Such an event waits (one event,
 * of one text) until the next piece of the same text says what it is; the
 * waiting event then carries the text up to the last byte that cannot start a
 * placeholder, and the next event carries the rest.
 */
#include "stages/guardrails.h"

#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/clock.h"
#include "core/errors.h"
#include "core/log.h"
#include "gateway/slot.h"
#include "http/server.h"

#define WINDOW    512         /* bytes of a text's tail checked with its next piece */
#define HOLD_MAX  (32u << 20) /* a buffered stream's events held at most */
#define EVENT_MAX (16u << 20) /* an event longer than this goes out unread */
#define NMSG      16          /* texts (choices, content blocks, output items) followed */

struct gstream {
    struct sy_buf in;   /* bytes not yet a whole event */
    struct sy_buf held; /* buffered mode: what goes out once the checks passed */
    int costed;
    int buffered, ended, checking, checked, blocked;
    void (*then)(struct sy_call *);
    unsigned pos; /* buffered: next guardrail to run */
    uint64_t t0;
    unsigned char *ran; /* set->n: an in-process check ran (recorded once at the end) */
    /* assembled (buffered) / the last WINDOW bytes (incremental), per text */
    struct sy_buf text[NMSG];
    struct sy_gtexts whole; /* buffered: the assembled answer as a check's input */
    char **tools;           /* buffered: tool names called */
    size_t ntools;
    /* the event waiting for the next piece of its text (undoing masks) */
    struct sy_buf pend; /* its bytes */
    size_t pend_poff, pend_plen, pend_soff, pend_sraw;
    int pend_msg;
    struct sy_buf pend_text; /* its piece's text, decoded */
    int has_pend;
};

static void gs_free(void *p)
{
    struct gstream *gs = p;
    sy_buf_free(&gs->in);
    sy_buf_free(&gs->held);
    for (int i = 0; i < NMSG; i++)
        sy_buf_free(&gs->text[i]);
    sy_gtexts_free(&gs->whole);
    for (size_t i = 0; i < gs->ntools; i++)
        free(gs->tools[i]);
    free(gs->tools);
    sy_buf_free(&gs->pend);
    sy_buf_free(&gs->pend_text);
}

static struct gstream *gs_get(struct sy_call *c, struct gcall *gc, int costed)
{
    if (gc->stream)
        return gc->stream;
    struct gstream *gs = sy_arena_alloc(&c->req->arena, sizeof *gs);
    if (!gs)
        return NULL;
    memset(gs, 0, sizeof *gs);
    gs->costed = costed;
    gs->ran = sy_arena_alloc(&c->req->arena, gc->set->n);
    if (gs->ran)
        memset(gs->ran, 0, gc->set->n);
    sy_buf_init(&gs->in, EVENT_MAX);
    sy_buf_init(&gs->held, HOLD_MAX);
    for (int i = 0; i < NMSG; i++)
        sy_buf_init(&gs->text[i], SY_GUARD_BUF_MAX);
    sy_buf_init(&gs->pend, SY_GUARD_BUF_MAX);
    sy_buf_init(&gs->pend_text, SY_GUARD_BUF_MAX);
    for (size_t i = 0; i < gc->set->n; i++) /* a service post_call guardrail: hold, check at the end */
        if (gc->on[i] && (gc->set->g[i].modes & SY_GM_POST) && !gc->set->g[i].ops->check)
            gs->buffered = 1;
    sy_arena_defer(&c->req->arena, gs_free, gs);
    gc->stream = gs;
    return gs;
}

/* Bytes for the client: out now, or held (buffered mode). */
static size_t emit(struct sy_call *c, struct gstream *gs, const char *p, size_t n)
{
    if (gs->blocked || !n)
        return 0;
    if (gs->buffered && !gs->checked) {
        if (sy_buf_append(&gs->held, p, n)) {
            gs->blocked = 1;
            sy_call_stream_block(c, 500, "None", "guardrail: the streamed answer is too large to hold for its check");
        }
        return 0;
    }
    return sy_call_out_bytes(c, p, n, gs->costed);
}

static void block(struct sy_call *c, struct gcall *gc, struct gstream *gs, const struct sy_guard *g,
                  const struct sy_gresult *r, unsigned hook)
{
    if (gs->blocked)
        return;
    gs->blocked = 1;
    sy_guard_record(c, gc, g, hook, r, gs->t0);
    int status = r->verdict == SY_GV_BLOCK ? (r->status ? r->status : 400) : 500;
    const char *m = r->message ? r->message : "Violated guardrail policy";
    sy_call_stream_block(c, status, "None", sy_arena_strndup(&c->req->arena, m, strlen(m)));
}

/* The event's payload: the JSON of its one `data:` line. 0, or -1 (none / several). */
static int payload_of(const char *ev, size_t n, size_t *off, size_t *len)
{
    int found = 0;
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(ev + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - ev) : n;
        size_t le = e > i && ev[e - 1] == '\r' ? e - 1 : e;
        if (le - i >= 5 && !memcmp(ev + i, "data:", 5)) {
            if (found)
                return -1;
            size_t s = i + 5;
            if (s < le && ev[s] == ' ')
                s++;
            *off = s;
            *len = le - s;
            found = 1;
        }
        i = e + 1;
    }
    return found ? 0 : -1;
}

/* The event ev (n bytes) with its bytes [off, off + len) replaced by mid, appended to out:
 * a payload put back into its SSE event, or a text into its payload. */
static void splice_event(struct sy_buf *out, const char *ev, size_t n, size_t off, size_t len, const char *mid,
                         size_t midlen)
{
    sy_buf_append(out, ev, off);
    sy_buf_append(out, mid, midlen);
    sy_buf_append(out, ev + off + len, n - off - len);
}

/* ev with its payload's segment [soff, soff + sraw) replaced by text as a JSON string. */
static void rewrite(struct sy_buf *out, const char *ev, size_t n, size_t poff, size_t plen, size_t soff, size_t sraw,
                    const char *text, size_t tlen)
{
    struct sy_buf q;
    sy_buf_init(&q, SY_GUARD_BUF_MAX);
    SY_BUF_LIT(&q, "\"");
    sy_buf_json_escape(&q, text, tlen);
    SY_BUF_LIT(&q, "\"");
    splice_event(out, ev, n, poff + soff, sraw, q.p ? q.p : "", q.len);
    sy_buf_free(&q);
    (void)plen;
}

static void unmask_into(struct gcall *gc, const char *p, size_t n, struct sy_buf *o)
{
    if (!sy_gunmask(gc->pairs, gc->npairs, p, n, o)) {
        sy_buf_reset(o);
        sy_buf_append(o, p, n);
    }
}

/* The waiting event goes out with its text fully unmasked. */
static void flush_pend(struct sy_call *c, struct gcall *gc, struct gstream *gs)
{
    if (!gs->has_pend)
        return;
    gs->has_pend = 0;
    struct sy_buf u, o;
    sy_buf_init(&u, SY_GUARD_BUF_MAX);
    sy_buf_init(&o, SY_GUARD_BUF_MAX);
    unmask_into(gc, gs->pend_text.p ? gs->pend_text.p : "", gs->pend_text.len, &u);
    rewrite(&o, gs->pend.p, gs->pend.len, gs->pend_poff, gs->pend_plen, gs->pend_soff, gs->pend_sraw, u.p ? u.p : "",
            u.len);
    emit(c, gs, o.p, o.len);
    sy_buf_free(&u);
    sy_buf_free(&o);
    sy_buf_reset(&gs->pend);
    sy_buf_reset(&gs->pend_text);
}

/* Undo masks in one text piece of an event (seg of its payload). Returns 1
 * when the event was handled (emitted or kept waiting), 0 to emit it as is. */
static int unmask_piece(struct sy_call *c, struct gcall *gc, struct gstream *gs, const char *ev, size_t n, size_t poff,
                        size_t plen, const struct sy_gseg *sg)
{
    struct sy_buf t;
    sy_buf_init(&t, SY_GUARD_BUF_MAX);
    int same = gs->has_pend && gs->pend_msg == sg->msg;
    if (!same)
        flush_pend(c, gc, gs);
    if (same)
        sy_buf_append(&t, gs->pend_text.p, gs->pend_text.len);
    sy_buf_append(&t, sg->text, sg->len);
    size_t hold = sy_gunmask_hold(gc->pairs, gc->npairs, t.p ? t.p : "", t.len);
    struct sy_buf u, o;
    sy_buf_init(&u, SY_GUARD_BUF_MAX);
    sy_buf_init(&o, SY_GUARD_BUF_MAX);
    unmask_into(gc, t.p ? t.p : "", t.len - hold, &u);
    if (same) { /* the waiting event carries the committed text, this one the rest */
        rewrite(&o, gs->pend.p, gs->pend.len, gs->pend_poff, gs->pend_plen, gs->pend_soff, gs->pend_sraw,
                u.p ? u.p : "", u.len);
        emit(c, gs, o.p, o.len);
        sy_buf_reset(&o);
        gs->has_pend = 0;
        sy_buf_reset(&gs->pend);
        sy_buf_reset(&gs->pend_text);
        if (hold) {
            sy_buf_append(&gs->pend, ev, n);
            sy_buf_append(&gs->pend_text, t.p + t.len - hold, hold);
        } else {
            rewrite(&o, ev, n, poff, plen, sg->off, sg->raw_len, "", 0);
            emit(c, gs, o.p, o.len);
        }
    } else if (hold) { /* wait for the next piece */
        sy_buf_append(&gs->pend, ev, n);
        sy_buf_append(&gs->pend_text, t.p, t.len);
    } else if (u.len != t.len || (u.len && memcmp(u.p, t.p, t.len))) {
        rewrite(&o, ev, n, poff, plen, sg->off, sg->raw_len, u.p ? u.p : "", u.len);
        emit(c, gs, o.p, o.len);
    } else {
        emit(c, gs, ev, n);
    }
    if (gs->has_pend || hold) {
        gs->has_pend = 1;
        gs->pend_poff = poff;
        gs->pend_plen = plen;
        gs->pend_soff = sg->off;
        gs->pend_sraw = sg->raw_len;
        gs->pend_msg = sg->msg;
    }
    sy_buf_free(&t);
    sy_buf_free(&u);
    sy_buf_free(&o);
    return 1;
}

/* Incremental checks of one event: tool calls by name, text pieces alone and
 * with their text's tail. May rewrite the payload (a mask) into *np. */
static void check_event(struct sy_call *c, struct gcall *gc, struct gstream *gs, const struct sy_gtexts *tx,
                        const char *payload, size_t plen, char **np, size_t *npl)
{
    const struct sy_guardset *s = gc->set;
    for (size_t i = 0; i < s->n && !gs->blocked; i++) {
        const struct sy_guard *g = &s->g[i];
        if (!gc->on[i] || !(g->modes & SY_GM_POST) || !g->ops->check)
            continue;
        struct sy_ginput in;
        sy_guard_input(c, gc, g, SY_GM_POST, payload, plen, &in);
        struct sy_gresult r = {0};
        if (gs->ran)
            gs->ran[i] = 1;
        gs->t0 = sy_now_ns();
        /* the event alone: its pieces (with spans) and any tool call starting */
        in.seg = tx->seg;
        in.nseg = tx->nseg;
        in.tool = tx->tool;
        in.ntool = tx->ntool;
        if (tx->nseg || tx->ntool)
            g->ops->check(g, &in, &r);
        if (r.verdict == SY_GV_BLOCK || (r.verdict == SY_GV_MASKED && r.body) ||
            (r.verdict == SY_GV_ERROR && !g->fail_open)) {
            block(c, gc, gs, g, &r, SY_GM_POST); /* a rewrite of a tool call cannot apply to a stream: it blocks */
            sy_gresult_free(&r);
            return;
        }
        if (r.verdict == SY_GV_MASKED && r.repl) {
            char *nb = NULL;
            size_t nn = 0;
            if (sy_gtext_splice(*np ? *np : payload, *np ? *npl : plen, tx->seg, tx->nseg, r.repl, &nb, &nn) == 0) {
                free(*np);
                *np = nb;
                *npl = nn;
            }
        }
        sy_gresult_free(&r);
        /* each piece with its text's tail: a match across two events */
        for (size_t k = 0; k < tx->nseg && !gs->blocked; k++) {
            const struct sy_gseg *sg = &tx->seg[k];
            if (!sg->delta || sg->kind != SY_GK_TEXT || sg->msg < 0 || sg->msg >= NMSG)
                continue;
            struct sy_buf *w = &gs->text[sg->msg];
            if (!w->len) {
                continue;
            }
            struct sy_buf joined;
            sy_buf_init(&joined, SY_GUARD_BUF_MAX);
            sy_buf_append(&joined, w->p, w->len);
            sy_buf_append(&joined, sg->text, sg->len);
            sy_buf_reserve(&joined, 1);
            joined.p[joined.len] = 0;
            struct sy_gseg one = {joined.p, joined.len, 0, 0, SY_GR_ASSISTANT, SY_GK_TEXT, 1, sg->msg};
            in.seg = &one;
            in.nseg = 1;
            in.tool = NULL;
            in.ntool = 0;
            struct sy_gresult r2 = {0};
            g->ops->check(g, &in, &r2);
            if (r2.verdict == SY_GV_BLOCK)
                block(c, gc, gs, g, &r2, SY_GM_POST);
            sy_gresult_free(&r2);
            sy_buf_free(&joined);
        }
    }
    /* keep each text's tail */
    for (size_t k = 0; k < tx->nseg; k++) {
        const struct sy_gseg *sg = &tx->seg[k];
        if (!sg->delta || sg->kind != SY_GK_TEXT || sg->msg < 0 || sg->msg >= NMSG)
            continue;
        struct sy_buf *w = &gs->text[sg->msg];
        sy_buf_append(w, sg->text, sg->len);
        if (w->len > WINDOW) {
            memmove(w->p, w->p + w->len - WINDOW, WINDOW);
            w->len = WINDOW;
        }
    }
}

/* Buffered mode: the answer's texts and tool calls, assembled. */
static void assemble(struct gstream *gs, const struct sy_gtexts *tx)
{
    for (size_t k = 0; k < tx->nseg; k++) {
        const struct sy_gseg *sg = &tx->seg[k];
        if (sg->delta && sg->kind == SY_GK_TEXT && sg->msg >= 0 && sg->msg < NMSG)
            sy_buf_append(&gs->text[sg->msg], sg->text, sg->len);
    }
    for (size_t k = 0; k < tx->ntool; k++) {
        if (!tx->tool[k].name || !tx->tool[k].name_len)
            continue;
        char **nt = realloc(gs->tools, (gs->ntools + 1) * sizeof *nt);
        if (!nt)
            return;
        gs->tools = nt;
        gs->tools[gs->ntools++] = strndup(tx->tool[k].name, tx->tool[k].name_len);
    }
}

static void buffered_check(struct sy_call *c, struct gcall *gc, struct gstream *gs);

static void event(struct sy_call *c, struct gcall *gc, struct gstream *gs, const char *ev, size_t n)
{
    size_t poff, plen;
    if (gs->blocked)
        return;
    if (payload_of(ev, n, &poff, &plen) != 0) {
        flush_pend(c, gc, gs);
        emit(c, gs, ev, n);
        return;
    }
    const char *payload = ev + poff;
    if (plen == 6 && !memcmp(payload, "[DONE]", 6)) {
        flush_pend(c, gc, gs);
        emit(c, gs, ev, n);
        gs->ended = 1;
        if (gs->buffered)
            buffered_check(c, gc, gs);
        return;
    }
    struct sy_gtexts tx = {0};
    int rc = sy_gevent_read(&tx, gc->d, payload, plen);
    if (rc < 0) {
        sy_gtexts_free(&tx);
        flush_pend(c, gc, gs);
        emit(c, gs, ev, n);
        return;
    }
    char *np = NULL;
    size_t npl = 0;
    if (gs->buffered)
        assemble(gs, &tx);
    else
        check_event(c, gc, gs, &tx, payload, plen, &np, &npl);
    if (gs->blocked) {
        free(np);
        sy_gtexts_free(&tx);
        return;
    }
    struct sy_buf o;
    sy_buf_init(&o, SY_GUARD_BUF_MAX);
    const char *e = ev;
    size_t en = n;
    if (np) { /* a mask rewrote the payload: the event again, around it (its spans are no longer the event's) */
        splice_event(&o, ev, n, poff, plen, np, npl);
        e = o.p;
        en = o.len;
        free(np);
        sy_gtexts_free(&tx);
        memset(&tx, 0, sizeof tx);
        if (payload_of(e, en, &poff, &plen) != 0 || sy_gevent_read(&tx, gc->d, e + poff, plen) < 0) {
            sy_gtexts_free(&tx);
            flush_pend(c, gc, gs);
            emit(c, gs, e, en);
            sy_buf_free(&o);
            goto end;
        }
    }
    if (gc->npairs) {
        size_t npieces = 0, whole = 0, at = 0;
        for (size_t k = 0; k < tx.nseg; k++) {
            if (!tx.seg[k].raw_len)
                continue;
            if (tx.seg[k].delta && tx.seg[k].kind == SY_GK_TEXT) {
                npieces++;
                at = k;
            } else {
                whole++;
            }
        }
        if (npieces == 1 && !whole) {
            unmask_piece(c, gc, gs, e, en, poff, plen, &tx.seg[at]);
        } else {
            flush_pend(c, gc, gs);
            char **repl = calloc(tx.nseg ? tx.nseg : 1, sizeof *repl);
            int any = 0;
            for (size_t k = 0; repl && k < tx.nseg; k++) {
                struct sy_buf u;
                sy_buf_init(&u, SY_GUARD_BUF_MAX);
                if (tx.seg[k].raw_len && sy_gunmask(gc->pairs, gc->npairs, tx.seg[k].text, tx.seg[k].len, &u)) {
                    sy_buf_reserve(&u, 1);
                    u.p[u.len] = 0;
                    repl[k] = u.p;
                    any = 1;
                } else {
                    sy_buf_free(&u);
                }
            }
            char *nb = NULL;
            size_t nn = 0;
            if (any && sy_gtext_splice(e + poff, plen, tx.seg, tx.nseg, repl, &nb, &nn) == 0) {
                struct sy_buf o2;
                sy_buf_init(&o2, SY_GUARD_BUF_MAX);
                splice_event(&o2, e, en, poff, plen, nb, nn);
                emit(c, gs, o2.p, o2.len);
                sy_buf_free(&o2);
                free(nb);
            } else {
                emit(c, gs, e, en);
            }
            for (size_t k = 0; repl && k < tx.nseg; k++)
                free(repl[k]);
            free(repl);
        }
    } else {
        emit(c, gs, e, en);
    }
    sy_buf_free(&o);
end:
    sy_gtexts_free(&tx);
    if (rc == 1) { /* message_stop, response.completed */
        flush_pend(c, gc, gs);
        gs->ended = 1;
        if (gs->buffered)
            buffered_check(c, gc, gs);
    }
}

/* ---- buffered mode: the whole answer's checks ---------------------------- */

static void buffered_release(struct sy_call *c, struct gstream *gs)
{
    gs->checked = 1;
    gs->checking = 0;
    if (!gs->blocked && gs->held.len)
        sy_call_out_bytes(c, gs->held.p, gs->held.len, gs->costed);
    sy_buf_free(&gs->held);
    if (gs->then) {
        void (*then)(struct sy_call *) = gs->then;
        gs->then = NULL;
        then(c);
    }
}

static void buffered_next(struct sy_call *c, struct gcall *gc, struct gstream *gs);

static void buffered_svc_done(struct gsvc *sv, struct sy_gresult *r)
{
    struct sy_call *c = sv->c;
    struct gcall *gc = sv->gc;
    struct gstream *gs = gc->stream;
    if (c->finished)
        return;
    if (r->verdict == SY_GV_BLOCK || (r->verdict == SY_GV_ERROR && !sv->g->fail_open)) {
        gs->t0 = sv->t0;
        block(c, gc, gs, sv->g, r, SY_GM_POST);
        buffered_release(c, gs);
        return;
    }
    if (r->verdict == SY_GV_MASKED)
        sy_warn("guardrail %s: a mask of a streamed answer cannot be applied; the answer went out as it was",
                sv->g->name);
    sy_guard_record(c, gc, sv->g, SY_GM_POST, r, sv->t0);
    gs->pos++;
    buffered_next(c, gc, gs);
}

static void buffered_next(struct sy_call *c, struct gcall *gc, struct gstream *gs)
{
    const struct sy_guardset *s = gc->set;
    for (; gs->pos < s->n && !gs->blocked; gs->pos++) {
        const struct sy_guard *g = &s->g[gs->pos];
        if (!gc->on[gs->pos] || !(g->modes & SY_GM_POST))
            continue;
        struct sy_ginput in;
        sy_guard_input(c, gc, g, SY_GM_POST, "", 0, &in);
        in.seg = gs->whole.seg;
        in.nseg = gs->whole.nseg;
        in.tool = gs->whole.tool;
        in.ntool = gs->whole.ntool;
        if (g->ops->check) {
            struct sy_gresult r = {0};
            uint64_t t0 = sy_now_ns();
            g->ops->check(g, &in, &r);
            if (r.verdict == SY_GV_BLOCK || (r.verdict == SY_GV_MASKED && r.body) ||
                (r.verdict == SY_GV_ERROR && !g->fail_open)) {
                gs->t0 = t0;
                block(c, gc, gs, g, &r, SY_GM_POST);
            } else {
                sy_guard_record(c, gc, g, SY_GM_POST, &r, t0);
            }
            sy_gresult_free(&r);
            continue;
        }
        if (!g->ops->request)
            continue;
        if (sy_guard_svc_start(c, gc, g, SY_GM_POST, &in, buffered_svc_done))
            return; /* buffered_svc_done goes on */
    }
    buffered_release(c, gs);
}

static void buffered_check(struct sy_call *c, struct gcall *gc, struct gstream *gs)
{
    if (gs->checking || gs->checked)
        return;
    gs->checking = 1;
    /* the assembled answer as segments without spans, and its tool calls */
    struct sy_gtexts *w = &gs->whole;
    size_t nt = 0;
    for (int i = 0; i < NMSG; i++)
        nt += gs->text[i].len != 0;
    w->seg = calloc(nt ? nt : 1, sizeof *w->seg);
    w->tool = calloc(gs->ntools ? gs->ntools : 1, sizeof *w->tool);
    for (int i = 0; w->seg && i < NMSG; i++) {
        struct sy_buf *t = &gs->text[i];
        if (!t->len)
            continue;
        sy_buf_reserve(t, 1);
        t->p[t->len] = 0;
        w->seg[w->nseg++] = (struct sy_gseg){t->p, t->len, 0, 0, SY_GR_ASSISTANT, SY_GK_TEXT, 0, i};
    }
    for (size_t i = 0; w->tool && i < gs->ntools; i++)
        w->tool[w->ntool++] = (struct sy_gtool){gs->tools[i], strlen(gs->tools[i]), NULL, 0, 0, 0, (int)i};
    gs->pos = 0;
    buffered_next(c, gc, gs);
}

/* ---- the writer ------------------------------------------------------------ */

static size_t gw_write(struct sy_call *c, const char *p, size_t n, int costed)
{
    struct gcall *gc = sy_guard_call(c);
    struct gstream *gs = gc ? gs_get(c, gc, costed) : NULL;
    if (!gs)
        return sy_call_out_bytes(c, p, n, costed);
    if (gs->blocked)
        return 0;
    if (sy_buf_append(&gs->in, p, n)) { /* one event past EVENT_MAX: out unread */
        flush_pend(c, gc, gs);
        emit(c, gs, gs->in.p, gs->in.len);
        sy_buf_reset(&gs->in);
        return emit(c, gs, p, n);
    }
    size_t start = 0;
    for (size_t i = 0; i + 1 < gs->in.len; i++) {
        const char *b = gs->in.p;
        size_t end = 0;
        if (b[i] == '\n' && b[i + 1] == '\n')
            end = i + 2;
        else if (i + 3 < gs->in.len && b[i] == '\r' && b[i + 1] == '\n' && b[i + 2] == '\r' && b[i + 3] == '\n')
            end = i + 4;
        if (!end)
            continue;
        event(c, gc, gs, b + start, end - start);
        start = end;
        i = end - 1;
        if (gs->blocked || c->aborted)
            break;
    }
    if (start) {
        memmove(gs->in.p, gs->in.p + start, gs->in.len - start);
        gs->in.len -= start;
    }
    return 0;
}

static int gw_end(struct sy_call *c, void (*then)(struct sy_call *))
{
    struct gcall *gc = sy_guard_call(c);
    struct gstream *gs = gc ? gc->stream : NULL;
    if (!gs)
        return SY_OK;
    if (gs->in.len && !gs->blocked) { /* a last event without its blank line */
        struct sy_buf rest = gs->in;
        sy_buf_init(&gs->in, EVENT_MAX);
        event(c, gc, gs, rest.p, rest.len);
        sy_buf_free(&rest);
    }
    flush_pend(c, gc, gs);
    if (!gs->buffered) { /* record the in-process checks that ran, once */
        for (size_t i = 0; gs->ran && i < gc->set->n && !gs->blocked; i++)
            if (gs->ran[i]) {
                struct sy_gresult r = {0};
                sy_guard_record(c, gc, &gc->set->g[i], SY_GM_POST, &r, 0);
            }
        return SY_OK;
    }
    if (gs->checked || gs->blocked)
        return SY_OK;
    buffered_check(c, gc, gs); /* a stream that ended without its last event */
    if (gs->checked || gs->blocked)
        return SY_OK;
    gs->then = then; /* buffered_release calls it (a completion comes later on the loop) */
    return SY_AGAIN;
}

const struct sy_owriter sy_guard_writer = {gw_write, gw_end};
