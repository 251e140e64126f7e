/* tsrv.h - a tiny scriptable HTTP/1.1 test server for the upstream client tests
 * and benchmark: blocking sockets, one thread per connection, optional TLS.
 *
 * Behaviour is chosen by the request path (see the route table in tsrv.c):
 *   /cl?n=N  /chunked  /trickle?n=N&ms=M  /closedelim  /connclose  /echo
 *   /sleep?ms=M  /stall  /reset  /once  /idleclose  /100  /early  /bad
 */
#ifndef SY_TEST_TSRV_H
#define SY_TEST_TSRV_H

#include <openssl/ssl.h>
#include <stddef.h>
#include <stdint.h>

struct tsrv;

/* Listen on 127.0.0.1 (ephemeral port); ctx != NULL serves TLS with it (not owned). */
struct tsrv *tsrv_start(SSL_CTX *ctx);
uint16_t tsrv_port(struct tsrv *s);
unsigned tsrv_conns(struct tsrv *s); /* connections accepted so far */
unsigned tsrv_reqs(struct tsrv *s);  /* requests read so far */
size_t tsrv_last_body_len(struct tsrv *s);
uint64_t tsrv_last_body_hash(struct tsrv *s);
/* Copy of the last request head (line + headers), NUL-terminated; caller frees. */
char *tsrv_last_head(struct tsrv *s);
/* Stop accepting, end every connection thread, free. */
void tsrv_stop(struct tsrv *s);

uint64_t tsrv_hash(const void *p, size_t n, uint64_t h); /* FNV-1a, h = 0 to start */

/* Test PKI (tcert.c): a CA written to a PEM file and server contexts it signs. */
struct tcert;
struct tcert *tcert_new(void);
const char *tcert_ca_file(struct tcert *t);
/* Server context with a certificate for the comma-separated SAN list, e.g.
 * "DNS:localhost,IP:127.0.0.1". Caller frees with SSL_CTX_free. */
SSL_CTX *tcert_server_ctx(struct tcert *t, const char *san);
void tcert_free(struct tcert *t);

#endif
