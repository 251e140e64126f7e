/* tls.c - upstream TLS with OpenSSL memory BIOs driven by libuv reads/writes.
 *
 * Bytes read from the socket are pushed into rbio (client.c); whatever SSL
 * writes into wbio is moved into one heap block per flush and handed to a
 * single uv_write (freed in its callback). Verification: the system CA store
 * or opts.ca_file, SSL_set1_host (or the IP) for the name, SNI for names,
 * ALPN "http/1.1". The last session of each origin is kept for resumption.
 */
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "core/log.h"
#include "upstream/up_int.h"

struct tls_write {
    uv_write_t w;
    struct sy__conn *c;
    char data[];
};

static int new_session(SSL *ssl, SSL_SESSION *sess)
{
    struct sy__conn *c = SSL_get_app_data(ssl);
    if (!c || !SSL_SESSION_is_resumable(sess))
        return 0;
    if (c->origin->sess)
        SSL_SESSION_free(c->origin->sess);
    c->origin->sess = sess; /* we keep the reference */
    return 1;
}

SSL_CTX *sy__tls_ctx_new(const struct sy_upool_opts *o)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx)
        return NULL;
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    static const unsigned char alpn[] = "\x08http/1.1";
    SSL_CTX_set_alpn_protos(ctx, alpn, sizeof alpn - 1);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx, new_session);
    if (o->ssl_verify) {
        int ok = o->ca_file && *o->ca_file ? SSL_CTX_load_verify_locations(ctx, o->ca_file, NULL)
                                           : SSL_CTX_set_default_verify_paths(ctx);
        if (!ok) {
            sy_error("upstream: cannot load CA certificates%s%s", o->ca_file ? " from " : "",
                     o->ca_file ? o->ca_file : "");
            SSL_CTX_free(ctx);
            return NULL;
        }
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    } else {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    }
    return ctx;
}

/* The shared contexts: one per (ssl_verify, ca_file) seen, for the life of
 * the process. A handful at most (the workers' pools, the logging thread's). */
#define SHARED_MAX 8
static struct {
    int verify;
    char *ca_file;
    SSL_CTX *ctx;
} shared[SHARED_MAX];
static int nshared;
static pthread_mutex_t shared_mu = PTHREAD_MUTEX_INITIALIZER;

SSL_CTX *sy__tls_ctx_shared(const struct sy_upool_opts *o)
{
    const char *ca = o->ca_file && *o->ca_file ? o->ca_file : "";
    pthread_mutex_lock(&shared_mu);
    for (int i = 0; i < nshared; i++)
        if (shared[i].verify == !!o->ssl_verify && strcmp(shared[i].ca_file, ca) == 0) {
            SSL_CTX_up_ref(shared[i].ctx);
            pthread_mutex_unlock(&shared_mu);
            return shared[i].ctx;
        }
    SSL_CTX *ctx = sy__tls_ctx_new(o); /* under the lock: a second caller waits rather than loads again */
    if (ctx && nshared < SHARED_MAX && (shared[nshared].ca_file = strdup(ca)) != NULL) {
        shared[nshared].verify = !!o->ssl_verify;
        shared[nshared].ctx = ctx;
        SSL_CTX_up_ref(ctx); /* the table's reference */
        nshared++;
    }
    pthread_mutex_unlock(&shared_mu);
    return ctx;
}

static void *warm_main(void *arg)
{
    struct sy_upool_opts *o = arg;
    SSL_CTX_free(sy__tls_ctx_shared(o));
    free((char *)o->ca_file);
    free(o);
    return NULL;
}

void sy_upool_tls_warm(const struct sy_upool_opts *opts)
{
    struct sy_upool_opts *o = calloc(1, sizeof *o);
    if (!o)
        return;
    o->ssl_verify = opts ? opts->ssl_verify : 1;
    o->ca_file = opts && opts->ca_file ? strdup(opts->ca_file) : NULL;
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &a, warm_main, o) != 0)
        warm_main(o); /* no thread: now, on the caller's */
    pthread_attr_destroy(&a);
}

int sy__tls_conn_init(struct sy__conn *c)
{
    struct sy__origin *o = c->origin;
    if (!c->pool->ssl_ctx && !(c->pool->ssl_ctx = sy__tls_ctx_shared(&c->pool->opts)))
        return SY_ETLS;
    SSL *ssl = SSL_new(c->pool->ssl_ctx);
    if (!ssl)
        return SY_ETLS;
    BIO *rb = BIO_new(BIO_s_mem()), *wb = BIO_new(BIO_s_mem());
    if (!rb || !wb) {
        BIO_free(rb);
        BIO_free(wb);
        SSL_free(ssl);
        return SY_ENOMEM;
    }
    BIO_set_mem_eof_return(rb, -1); /* empty rbio means "want read", not EOF */
    SSL_set_bio(ssl, rb, wb);
    SSL_set_connect_state(ssl);
    SSL_set_app_data(ssl, c);
    c->ssl = ssl;
    c->rbio = rb;
    c->wbio = wb;
    if (o->is_ip) {
        if (c->pool->opts.ssl_verify && !X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), o->host))
            return SY_ETLS;
    } else {
        SSL_set_tlsext_host_name(ssl, o->host);
        if (c->pool->opts.ssl_verify && !SSL_set1_host(ssl, o->host))
            return SY_ETLS;
    }
    if (o->sess)
        SSL_set_session(ssl, o->sess);
    return 0;
}

static void tls_write_cb(uv_write_t *w, int status)
{
    struct tls_write *t = (struct tls_write *)w;
    struct sy__conn *c = t->c;
    free(t);
    sy__conn_wrote(c, status);
}

int sy__tls_flush(struct sy__conn *c)
{
    char *data;
    long n = BIO_get_mem_data(c->wbio, &data);
    if (n <= 0)
        return 0;
    /* Try the socket straight from the BIO's memory; queue only what is left. */
    uv_buf_t b = uv_buf_init(data, (unsigned)n);
    int w = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    if (w < 0 && w != UV_EAGAIN)
        return w;
    size_t done = w < 0 ? 0 : (size_t)w;
    if (done == (size_t)n) {
        (void)BIO_reset(c->wbio);
        return 0;
    }
    size_t left = (size_t)n - done;
    struct tls_write *t = malloc(sizeof *t + left);
    if (!t)
        return UV_ENOMEM;
    t->c = c;
    memcpy(t->data, data + done, left);
    (void)BIO_reset(c->wbio);
    b = uv_buf_init(t->data, (unsigned)left);
    int rc = uv_write(&t->w, (uv_stream_t *)&c->tcp, &b, 1, tls_write_cb);
    if (rc) {
        free(t);
        return rc;
    }
    c->wpending++;
    return 0;
}

static void log_tls_error(struct sy__conn *c)
{
    unsigned long e = ERR_peek_last_error();
    long v = SSL_get_verify_result(c->ssl);
    char msg[256];
    ERR_error_string_n(e, msg, sizeof msg);
    if (v != X509_V_OK)
        sy_warn("upstream TLS %s:%u: certificate verify failed: %s", c->origin->host, c->origin->port,
                X509_verify_cert_error_string(v));
    else
        sy_warn("upstream TLS %s:%u: %s", c->origin->host, c->origin->port, msg);
    ERR_clear_error();
}

int sy__tls_handshake(struct sy__conn *c)
{
    int rc = SSL_do_handshake(c->ssl);
    int err = rc == 1 ? SSL_ERROR_NONE : SSL_get_error(c->ssl, rc);
    if (sy__tls_flush(c) < 0)
        return SY_ETLS;
    if (rc == 1) {
        if (SSL_session_reused(c->ssl))
            c->pool->stats.tls_resumed++;
        return 1;
    }
    if (err == SSL_ERROR_WANT_READ)
        return 0;
    log_tls_error(c);
    return SY_ETLS;
}

int sy__tls_write(struct sy__conn *c, const uv_buf_t *b, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        const char *p = b[i].base;
        size_t left = b[i].len;
        while (left) {
            int chunk = left > (1u << 30) ? 1 << 30 : (int)left;
            int w = SSL_write(c->ssl, p, chunk);
            if (w <= 0) {
                log_tls_error(c);
                return SY_ETLS;
            }
            p += w;
            left -= (size_t)w;
        }
    }
    return sy__tls_flush(c) < 0 ? SY_EUPRESET : 0;
}
