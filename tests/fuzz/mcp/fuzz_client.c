/* fuzz_client.c - what the MCP client pool reads from servers and callers
 * (src/mcp/client.c, sse.c, auth.c), on hostile bytes:
 *
 *   byte 0 % 4   parser               checked
 *   0            mcp_msg_scan         an accepted message is one JSON object jdom
 *                                     parses too; id and method spans lie inside it
 *   1            mcp_url_resolve      an accepted endpoint keeps the stream's origin
 *                                     and is printable ASCII without spaces
 *   2            mcp_headers_take     accepted lines are "Name: value\r\n", no CR or
 *                                     LF inside, none of the names the transport owns
 *   3            mcp_token_parse      an accepted token is printable ASCII
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/arena.h"
#include "core/buf.h"
#include "mcp/client_int.h"
#include "providers/jdom.h"

static void scan(const char *p, size_t n)
{
    struct mcp_scan sc;
    if (mcp_msg_scan(p, n, &sc) != 0)
        return;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, p, n, &a, 0) != 0 || sy_jdom_type(&d, 0) != 'o')
        abort();
    sy_arena_free(&a);
    if (sc.id && (sc.id < p || sc.id + sc.id_len > p + n || !sc.id_len))
        abort();
    if (sc.method && (sc.method < p || sc.method + sc.method_len > p + n || sc.method[0] != '"'))
        abort();
    if (sc.id)
        (void)mcp_id_u64(sc.id, sc.id_len);
}

static void url(const char *p, size_t n)
{
    static const char base[] = "http://h.example:81/a/sse?x=1";
    struct sy_buf b;
    sy_buf_init(&b, 16384);
    if (mcp_url_resolve(base, p, n, &b) == 0) {
        if (b.len < 19 || strncasecmp(b.p, "http://h.example:81", 19) || (b.len > 19 && !strchr("/?", b.p[19])))
            abort();
        for (size_t i = 0; i < b.len; i++)
            if ((unsigned char)b.p[i] < 0x21 || (unsigned char)b.p[i] > 0x7e)
                abort();
    }
    sy_buf_free(&b);
}

static void headers(const char *p, size_t n)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    if (mcp_headers_take(p, n, &b) == 0) {
        const char *s = b.p ? b.p : "", *e = s + b.len;
        while (s < e) {
            const char *crlf = memmem(s, (size_t)(e - s), "\r\n", 2);
            if (!crlf)
                abort();
            const char *colon = memchr(s, ':', (size_t)(crlf - s));
            if (!colon || colon == s || memchr(s, '\n', (size_t)(crlf - s)) || memchr(s, '\r', (size_t)(crlf - s)))
                abort();
            if ((colon - s == 4 && !strncasecmp(s, "host", 4)) ||
                (colon - s == 14 && !strncasecmp(s, "content-length", 14)) ||
                (colon - s == 17 && !strncasecmp(s, "transfer-encoding", 17)) ||
                (colon - s == 14 && !strncasecmp(s, "mcp-session-id", 14)))
                abort();
            s = crlf + 2;
        }
    }
    sy_buf_free(&b);
}

static void token(const char *p, size_t n)
{
    char *t;
    double ttl;
    char why[200];
    if (mcp_token_parse(p, n, &t, &ttl, why, sizeof why) == 0) {
        for (const char *c = t; *c; c++)
            if ((unsigned char)*c < 0x21 || (unsigned char)*c > 0x7e)
                abort();
        if (!(ttl >= 0))
            abort();
        free(t);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    switch (data[0] % 4) {
    case 0: scan(p, n); break;
    case 1: url(p, n); break;
    case 2: headers(p, n); break;
    default: token(p, n); break;
    }
    return 0;
}
