/* pool.c - the per-worker upstream pool: origins, idle keep-alive stacks,
 * request freelist, deferred error delivery, and orderly shutdown.
 *
 * Nothing here is shared between threads: one pool belongs to one libuv loop.
 * Idle connections are kept per origin as a LIFO stack (the warmest socket is
 * reused first; the cold tail ages out through its idle timer).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "upstream/up_int.h"

static void list_add(struct sy__conn **head, struct sy__conn *c)
{
    c->prev = NULL;
    c->next = *head;
    if (*head)
        (*head)->prev = c;
    *head = c;
}

static void list_del(struct sy__conn **head, struct sy__conn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else if (*head == c)
        *head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

void sy__busy_add(struct sy_upool *p, struct sy__conn *c)
{
    list_add(&p->busy, c);
}

void sy__conn_unlink(struct sy__conn *c)
{
    if (c->state == C_IDLE) {
        list_del(&c->origin->idle, c);
        c->origin->nidle--;
        c->pool->stats.idle_conns--;
    } else if (c->state != C_CLOSING) {
        list_del(&c->pool->busy, c);
    }
}

struct sy__conn *sy__idle_pop(struct sy__origin *o)
{
    struct sy__conn *c = o->idle;
    if (!c)
        return NULL;
    sy__conn_unlink(c);
    sy__busy_add(c->pool, c);
    return c;
}

void sy__idle_push(struct sy__conn *c)
{
    struct sy__origin *o = c->origin;
    struct sy_upool *p = c->pool;
    if (p->closing || o->nidle >= p->opts.max_idle_per_origin) {
        sy__conn_close(c);
        return;
    }
    sy__conn_unlink(c);
    c->state = C_IDLE;
    list_add(&o->idle, c);
    o->nidle++;
    p->stats.idle_conns++;
}

struct sy__origin *sy__origin_get(struct sy_upool *p, const struct sy__url *u)
{
    struct sy__origin **pp = &p->origins, *o;
    for (; (o = *pp); pp = &o->next) {
        if (o->port == u->port && o->tls == u->tls && o->host_len == u->host_len &&
            !strncasecmp(o->host, u->host, u->host_len)) {
            if (pp != &p->origins) { /* move to front: hot origins are found first */
                *pp = o->next;
                o->next = p->origins;
                p->origins = o;
            }
            return o;
        }
    }
    o = calloc(1, sizeof *o + u->host_len + 1);
    if (!o)
        return NULL;
    o->host = (char *)(o + 1);
    memcpy(o->host, u->host, u->host_len);
    o->host_len = u->host_len;
    o->port = u->port;
    o->tls = u->tls;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&o->addrs[0];
    struct sockaddr_in *s4 = (struct sockaddr_in *)&o->addrs[0];
    if (uv_ip4_addr(o->host, o->port, s4) == 0 || uv_ip6_addr(o->host, o->port, s6) == 0) {
        o->is_ip = 1;
        o->naddr = 1;
        o->dns_expire = UINT64_MAX;
    }
    o->next = p->origins;
    p->origins = o;
    return o;
}

/* ---- deferred errors ---------------------------------------------------- */

static void defer_cb(uv_timer_t *t)
{
    struct sy_upool *p = t->data;
    /* Take the whole queue: requests failed by these callbacks wait a turn. */
    struct sy_ureq *r = p->dq_head;
    p->dq_head = p->dq_tail = NULL;
    while (r) {
        struct sy_ureq *next = r->next;
        r->queued = 0;
        if (!r->canceled)
            r->cbs.on_done(r->ud, r->err);
        sy__req_recycle(r);
        r = next;
    }
}

void sy__req_defer(struct sy_ureq *r, int err)
{
    struct sy_upool *p = r->pool;
    r->err = err;
    r->queued = 1;
    r->conn = NULL;
    r->next = NULL;
    if (p->dq_tail)
        p->dq_tail->next = r;
    else
        p->dq_head = r;
    p->dq_tail = r;
    if (!p->closing)
        uv_timer_start(&p->defer, defer_cb, 0, 0);
}

void sy__req_recycle(struct sy_ureq *r)
{
    struct sy_upool *p = r->pool;
    if (r->bufs != r->ibufs)
        free(r->bufs);
    r->bufs = NULL;
    if (p->nfree >= SY__UP_FREE_MAX || p->closing) {
        sy_buf_free(&r->head);
        sy_buf_free(&r->rh);
        free(r);
        return;
    }
    r->next = p->free_reqs;
    p->free_reqs = r;
    p->nfree++;
}

/* ---- pool lifetime ------------------------------------------------------ */

struct sy_upool *sy_upool_new(uv_loop_t *loop, const struct sy_upool_opts *opts)
{
    struct sy_upool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->loop = loop;
    if (opts)
        p->opts = *opts;
    else
        p->opts.ssl_verify = 1;
    if (!p->opts.max_idle_per_origin)
        p->opts.max_idle_per_origin = 64;
    if (p->opts.idle_timeout_s <= 0)
        p->opts.idle_timeout_s = 60;
    p->ssl_ctx = NULL; /* sy__tls_ctx_shared at the first TLS connection */
    uv_timer_init(loop, &p->defer);
    p->defer.data = p;
    return p;
}

void sy_upool_after_read(struct sy_upool *p, void (*cb)(void *arg), void *arg)
{
    p->opts.after_read = cb;
    p->opts.after_read_arg = arg;
}

void sy__pool_maybe_free(struct sy_upool *p)
{
    if (!p->closing || !p->defer_closed || p->nconns)
        return;
    for (struct sy__origin *o = p->origins, *n; o; o = n) {
        n = o->next;
        if (o->sess)
            SSL_SESSION_free(o->sess);
        free(o);
    }
    for (struct sy_ureq *r = p->free_reqs, *n; r; r = n) {
        n = r->next;
        sy_buf_free(&r->head);
        sy_buf_free(&r->rh);
        free(r);
    }
    SSL_CTX_free(p->ssl_ctx);
    free(p);
}

static void defer_closed(uv_handle_t *h)
{
    struct sy_upool *p = h->data;
    p->defer_closed = 1;
    sy__pool_maybe_free(p);
}

void sy_upool_close(struct sy_upool *p)
{
    if (!p || p->closing)
        return;
    p->closing = 1;
    for (struct sy__origin *o = p->origins; o; o = o->next)
        while (o->idle)
            sy__conn_close(o->idle);
    while (p->busy) {
        struct sy__conn *c = p->busy;
        struct sy_ureq *r = c->req;
        if (r) {
            c->req = NULL;
            r->conn = NULL;
        }
        sy__conn_close(c);
        if (r) {
            r->cbs.on_done(r->ud, SY_ECANCELED);
            sy__req_recycle(r);
        }
    }
    while (p->dq_head) {
        struct sy_ureq *r = p->dq_head;
        p->dq_head = r->next;
        if (!p->dq_head)
            p->dq_tail = NULL;
        r->queued = 0;
        if (!r->canceled)
            r->cbs.on_done(r->ud, r->err);
        sy__req_recycle(r);
    }
    uv_timer_stop(&p->defer);
    uv_close((uv_handle_t *)&p->defer, defer_closed);
}

void sy_upool_stats(const struct sy_upool *p, struct sy_upool_stats *st)
{
    *st = p->stats;
}
