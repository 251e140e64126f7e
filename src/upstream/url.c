/* url.c - split an absolute upstream URL into views (no copies, no allocation).
 *
 *   http[s]://host[:port][/path][?query]      host may be [v6-literal]
 *
 * The authority is kept as written for the Host header; user info ("@") and
 * anything but http/https are refused. A missing path becomes "/".
 */
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "upstream/up_int.h"

int sy__url_parse(const char *url, struct sy__url *u)
{
    memset(u, 0, sizeof *u);
    const char *s;
    if (!strncasecmp(url, "http://", 7)) {
        s = url + 7;
        u->port = 80;
    } else if (!strncasecmp(url, "https://", 8)) {
        s = url + 8;
        u->port = 443;
        u->tls = 1;
    } else {
        return SY_EINVAL;
    }
    const char *a = s;
    while (*s && *s != '/' && *s != '?' && *s != '#') {
        if (*s == '@' || *s == ' ' || (unsigned char)*s < 0x21)
            return SY_EINVAL;
        s++;
    }
    u->auth = a;
    u->auth_len = (size_t)(s - a);
    const char *ae = s, *h = a, *he;
    if (*h == '[') {
        const char *rb = memchr(h, ']', (size_t)(ae - h));
        if (!rb)
            return SY_EINVAL;
        u->host = h + 1;
        u->host_len = (size_t)(rb - h - 1);
        u->v6 = 1;
        he = rb + 1;
    } else {
        he = h;
        while (he < ae && *he != ':')
            he++;
        u->host = h;
        u->host_len = (size_t)(he - h);
    }
    if (u->host_len == 0 || u->host_len > 253)
        return SY_EINVAL;
    if (he < ae) {
        if (*he != ':' || he + 1 == ae)
            return SY_EINVAL;
        unsigned long port = 0;
        for (const char *q = he + 1; q < ae; q++) {
            if (*q < '0' || *q > '9' || port > 65535)
                return SY_EINVAL;
            port = port * 10 + (unsigned long)(*q - '0');
        }
        if (port == 0 || port > 65535)
            return SY_EINVAL;
        u->port = (uint16_t)port;
    }
    const char *pe = s + strcspn(s, "#");
    for (const char *q = s; q < pe; q++)
        if ((unsigned char)*q < 0x21 || *q == 0x7f)
            return SY_EINVAL;
    u->path = s;
    u->path_len = (size_t)(pe - s);
    return 0;
}
