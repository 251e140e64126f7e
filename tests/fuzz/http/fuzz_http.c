/* fuzz_http.c - libFuzzer harness for the client-facing HTTP/1.1 server.
 *
 * The input is written into one end of a socketpair whose other end the
 * server adopts; a trivial handler answers every request, so parsing,
 * pipelining, chunked bodies, limits and error replies are all exercised.
 * The loop runs until the connection is closed (bounded iterations).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>
#include <uv.h>

#include "http/reply.h"
#include "http/server.h"

static void limits(struct sy_server_limits *l, void *ud)
{
    l->max_header_bytes = 4096;
    l->max_body_bytes = 16384;
    l->header_timeout_ms = 1000;
    l->body_timeout_ms = 1000;
    l->keepalive_timeout_ms = 1000;
}

static void handler(struct sy_req *r, void *ud)
{
    if (r->body.len & 1)
        sy_reply_error(r, 400, "invalid_request_error", NULL, "odd");
    else {
        sy_resp_start(r, 200, "x: y\r\n", 6, "text/plain");
        sy_resp_chunk(r, r->path.p, r->path.n);
        sy_resp_end(r);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 0;
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct sy_server *s = sy_server_new(&loop, handler, limits, NULL);
    sy_server_adopt(s, sv[0]);
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
    size_t off = 0;
    char sink[65536];
    int shut = 0;
    for (int it = 0; it < 10000 && sy_server_nconns(s) > 0; it++) {
        if (off < size) {
            ssize_t w = write(sv[1], data + off, size - off);
            if (w > 0)
                off += (size_t)w;
        } else if (!shut) {
            shutdown(sv[1], SHUT_WR);
            shut = 1;
        }
        while (read(sv[1], sink, sizeof sink) > 0)
            ;
        uv_run(&loop, UV_RUN_NOWAIT);
    }
    sy_server_close_all(s);
    sy_server_close_handles(s);
    while (sy_server_nconns(s) > 0 && uv_run(&loop, UV_RUN_NOWAIT))
        ;
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    free(s);
    close(sv[1]);
    return 0;
}
