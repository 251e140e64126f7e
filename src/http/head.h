/* head.h - the fast reader of a client's request head (see head.c). Internal
 * to src/http (server.c) and its fuzz harness. */
#ifndef SY_HTTP_HEAD_H
#define SY_HTTP_HEAD_H

#include <stddef.h>
#include <stdint.h>

#define SY_HTTP_FAST_MAXHDR 64 /* more headers: http-parser */

struct sy_http_head {
    int method;                            /* enum http_method */
    uint32_t url_off, url_len;             /* request-target */
    unsigned nh;                           /* header count */
    uint32_t hoff[SY_HTTP_FAST_MAXHDR][4]; /* name offset, length; value offset, length (OWS trimmed) */
    int64_t clen;                          /* Content-Length, -1 when absent */
};

/* Read a complete request head of the common shape from p[0..n). Returns its
 * length (up to and including the blank line), or 0 when the bytes are not
 * (yet) of that shape: the caller hands them to http-parser. An accepted head
 * is HTTP/1.1, keep-alive, without Transfer-Encoding, Upgrade or Expect. */
size_t sy_http_head_read(const char *p, size_t n, struct sy_http_head *h);

#endif
