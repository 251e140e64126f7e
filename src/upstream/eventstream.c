/* eventstream.c - the AWS event-stream reader and writer
 * (application/vnd.amazon.eventstream; Bedrock ConverseStream, framing.h).
 *
 *   offset      size  field
 *   ----------  ----  ---------------------------------------------------------
 *   0           4     total length T (big-endian, whole message incl. CRCs)
 *   4           4     headers length H
 *   8           4     prelude CRC: CRC-32 of bytes 0..7
 *   12          H     headers, each:
 *                       name length (1) | name | type (1) | value
 *   12+H        T-H-16 payload
 *   T-4         4     message CRC: CRC-32 of bytes 0..T-5
 *
 *   type  value                 type  value
 *   ----  -------------------   ----  ---------------------------------
 *   0     bool true (none)      5     int64 (8)
 *   1     bool false (none)     6     bytes: length (2) + bytes
 *   2     byte (1)              7     string: length (2) + UTF-8 bytes
 *   3     int16 (2)             8     timestamp, ms since epoch (8)
 *   4     int32 (4)             9     UUID (16)
 *
 * What the callback gets per message (framing.h):
 *
 *   :message-type        type passed                       data passed
 *   -------------------  --------------------------------  -----------------------------------
 *   event (or absent)    :event-type ("" when absent)      the payload
 *   exception            "!" + :exception-type             the payload (JSON {"message":..})
 *   error                "!" + :error-code                 the payload, or :error-message when
 *                                                          the payload is empty
 *   anything else        :event-type                       the payload
 *
 * Invariants: the prelude is checked (CRC, 16 <= T <= max_event, H <= T-16)
 * as soon as its 12 bytes are in, before waiting for the rest; the message CRC
 * before any header is read; every header must end inside the header block.
 * Any failure is SY_EUPPROTO. A message that arrives whole in one feed is read
 * in place; only a message split across feeds is copied into f->acc, which
 * never holds more than one message (<= max_event bytes). After a nonzero
 * return the framer is not to be fed again. Types longer than 255 bytes are
 * cut (no AWS type comes near). A repeated header name is not an error (the
 * last one counts; botocore refuses them).
 *
 * sy_awses_encode() writes string headers only; it refuses (SY_EINVAL) a name
 * of 0 or over 255 bytes and a value over 65535 bytes; on any failure out is
 * left as it was.
 */
#include <stdint.h>
#include <string.h>

#include "core/errors.h"
#include "upstream/framing.h"

static const uint32_t crc_table[256] = {
    0x00000000u, 0x77073096u, 0xee0e612cu, 0x990951bau, 0x076dc419u, 0x706af48fu, 0xe963a535u, 0x9e6495a3u, 0x0edb8832u,
    0x79dcb8a4u, 0xe0d5e91eu, 0x97d2d988u, 0x09b64c2bu, 0x7eb17cbdu, 0xe7b82d07u, 0x90bf1d91u, 0x1db71064u, 0x6ab020f2u,
    0xf3b97148u, 0x84be41deu, 0x1adad47du, 0x6ddde4ebu, 0xf4d4b551u, 0x83d385c7u, 0x136c9856u, 0x646ba8c0u, 0xfd62f97au,
    0x8a65c9ecu, 0x14015c4fu, 0x63066cd9u, 0xfa0f3d63u, 0x8d080df5u, 0x3b6e20c8u, 0x4c69105eu, 0xd56041e4u, 0xa2677172u,
    0x3c03e4d1u, 0x4b04d447u, 0xd20d85fdu, 0xa50ab56bu, 0x35b5a8fau, 0x42b2986cu, 0xdbbbc9d6u, 0xacbcf940u, 0x32d86ce3u,
    0x45df5c75u, 0xdcd60dcfu, 0xabd13d59u, 0x26d930acu, 0x51de003au, 0xc8d75180u, 0xbfd06116u, 0x21b4f4b5u, 0x56b3c423u,
    0xcfba9599u, 0xb8bda50fu, 0x2802b89eu, 0x5f058808u, 0xc60cd9b2u, 0xb10be924u, 0x2f6f7c87u, 0x58684c11u, 0xc1611dabu,
    0xb6662d3du, 0x76dc4190u, 0x01db7106u, 0x98d220bcu, 0xefd5102au, 0x71b18589u, 0x06b6b51fu, 0x9fbfe4a5u, 0xe8b8d433u,
    0x7807c9a2u, 0x0f00f934u, 0x9609a88eu, 0xe10e9818u, 0x7f6a0dbbu, 0x086d3d2du, 0x91646c97u, 0xe6635c01u, 0x6b6b51f4u,
    0x1c6c6162u, 0x856530d8u, 0xf262004eu, 0x6c0695edu, 0x1b01a57bu, 0x8208f4c1u, 0xf50fc457u, 0x65b0d9c6u, 0x12b7e950u,
    0x8bbeb8eau, 0xfcb9887cu, 0x62dd1ddfu, 0x15da2d49u, 0x8cd37cf3u, 0xfbd44c65u, 0x4db26158u, 0x3ab551ceu, 0xa3bc0074u,
    0xd4bb30e2u, 0x4adfa541u, 0x3dd895d7u, 0xa4d1c46du, 0xd3d6f4fbu, 0x4369e96au, 0x346ed9fcu, 0xad678846u, 0xda60b8d0u,
    0x44042d73u, 0x33031de5u, 0xaa0a4c5fu, 0xdd0d7cc9u, 0x5005713cu, 0x270241aau, 0xbe0b1010u, 0xc90c2086u, 0x5768b525u,
    0x206f85b3u, 0xb966d409u, 0xce61e49fu, 0x5edef90eu, 0x29d9c998u, 0xb0d09822u, 0xc7d7a8b4u, 0x59b33d17u, 0x2eb40d81u,
    0xb7bd5c3bu, 0xc0ba6cadu, 0xedb88320u, 0x9abfb3b6u, 0x03b6e20cu, 0x74b1d29au, 0xead54739u, 0x9dd277afu, 0x04db2615u,
    0x73dc1683u, 0xe3630b12u, 0x94643b84u, 0x0d6d6a3eu, 0x7a6a5aa8u, 0xe40ecf0bu, 0x9309ff9du, 0x0a00ae27u, 0x7d079eb1u,
    0xf00f9344u, 0x8708a3d2u, 0x1e01f268u, 0x6906c2feu, 0xf762575du, 0x806567cbu, 0x196c3671u, 0x6e6b06e7u, 0xfed41b76u,
    0x89d32be0u, 0x10da7a5au, 0x67dd4accu, 0xf9b9df6fu, 0x8ebeeff9u, 0x17b7be43u, 0x60b08ed5u, 0xd6d6a3e8u, 0xa1d1937eu,
    0x38d8c2c4u, 0x4fdff252u, 0xd1bb67f1u, 0xa6bc5767u, 0x3fb506ddu, 0x48b2364bu, 0xd80d2bdau, 0xaf0a1b4cu, 0x36034af6u,
    0x41047a60u, 0xdf60efc3u, 0xa867df55u, 0x316e8eefu, 0x4669be79u, 0xcb61b38cu, 0xbc66831au, 0x256fd2a0u, 0x5268e236u,
    0xcc0c7795u, 0xbb0b4703u, 0x220216b9u, 0x5505262fu, 0xc5ba3bbeu, 0xb2bd0b28u, 0x2bb45a92u, 0x5cb36a04u, 0xc2d7ffa7u,
    0xb5d0cf31u, 0x2cd99e8bu, 0x5bdeae1du, 0x9b64c2b0u, 0xec63f226u, 0x756aa39cu, 0x026d930au, 0x9c0906a9u, 0xeb0e363fu,
    0x72076785u, 0x05005713u, 0x95bf4a82u, 0xe2b87a14u, 0x7bb12baeu, 0x0cb61b38u, 0x92d28e9bu, 0xe5d5be0du, 0x7cdcefb7u,
    0x0bdbdf21u, 0x86d3d2d4u, 0xf1d4e242u, 0x68ddb3f8u, 0x1fda836eu, 0x81be16cdu, 0xf6b9265bu, 0x6fb077e1u, 0x18b74777u,
    0x88085ae6u, 0xff0f6a70u, 0x66063bcau, 0x11010b5cu, 0x8f659effu, 0xf862ae69u, 0x616bffd3u, 0x166ccf45u, 0xa00ae278u,
    0xd70dd2eeu, 0x4e048354u, 0x3903b3c2u, 0xa7672661u, 0xd06016f7u, 0x4969474du, 0x3e6e77dbu, 0xaed16a4au, 0xd9d65adcu,
    0x40df0b66u, 0x37d83bf0u, 0xa9bcae53u, 0xdebb9ec5u, 0x47b2cf7fu, 0x30b5ffe9u, 0xbdbdf21cu, 0xcabac28au, 0x53b39330u,
    0x24b4a3a6u, 0xbad03605u, 0xcdd70693u, 0x54de5729u, 0x23d967bfu, 0xb3667a2eu, 0xc4614ab8u, 0x5d681b02u, 0x2a6f2b94u,
    0xb40bbe37u, 0xc30c8ea1u, 0x5a05df1bu, 0x2d02ef8du,
};

uint32_t sy_crc32(uint32_t crc, const void *p, size_t n)
{
    const unsigned char *b = p;
    crc = ~crc;
    while (n--)
        crc = crc_table[(crc ^ *b++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

static uint32_t be32(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static void put32(unsigned char *b, uint32_t v)
{
    b[0] = (unsigned char)(v >> 24);
    b[1] = (unsigned char)(v >> 16);
    b[2] = (unsigned char)(v >> 8);
    b[3] = (unsigned char)v;
}

/* The 12-byte prelude at b: 0 with *total set, or SY_EUPPROTO. */
static int prelude(const struct sy_framer *f, const unsigned char *b, uint32_t *total)
{
    uint32_t t = be32(b), h = be32(b + 4);
    if (sy_crc32(0, b, 8) != be32(b + 8))
        return SY_EUPPROTO;
    if (t < 16 || (f->max_event && t > f->max_event) || h > t - 16)
        return SY_EUPPROTO;
    *total = t;
    return 0;
}

struct view {
    const unsigned char *p;
    size_t n;
    int set;
};

/* Size of a header value of type ty at v (end e): bytes after the type byte. */
static int value_size(unsigned ty, const unsigned char *v, const unsigned char *e, size_t *sz)
{
    static const signed char fixed[10] = {0, 0, 1, 2, 4, 8, -1, -1, 8, 16};
    if (ty > 9)
        return SY_EUPPROTO;
    if (fixed[ty] >= 0) {
        *sz = (size_t)fixed[ty];
    } else {
        if (e - v < 2)
            return SY_EUPPROTO;
        *sz = 2 + ((size_t)v[0] << 8 | v[1]);
    }
    return (size_t)(e - v) < *sz ? SY_EUPPROTO : 0;
}

static int name_is(const unsigned char *n, size_t l, const char *lit)
{
    return strlen(lit) == l && memcmp(n, lit, l) == 0;
}

/* One complete message m[0..t): check it, hand it to cb. */
static int deliver(const unsigned char *m, uint32_t t, sy_frame_cb cb, void *ud)
{
    if (sy_crc32(0, m, t - 4) != be32(m + t - 4))
        return SY_EUPPROTO;
    uint32_t hl = be32(m + 4);
    const unsigned char *h = m + 12, *he = h + hl;
    struct view mtype = {0}, etype = {0}, xtype = {0}, ecode = {0}, emsg = {0};
    while (h < he) {
        size_t nl = h[0];
        if ((size_t)(he - h) < 2 + nl) /* name length, name, type byte */
            return SY_EUPPROTO;
        const unsigned char *name = h + 1;
        unsigned ty = h[1 + nl];
        const unsigned char *v = h + 2 + nl;
        size_t sz;
        if (value_size(ty, v, he, &sz))
            return SY_EUPPROTO;
        if (ty == 7) {
            struct view *w = name_is(name, nl, ":message-type")     ? &mtype
                             : name_is(name, nl, ":event-type")     ? &etype
                             : name_is(name, nl, ":exception-type") ? &xtype
                             : name_is(name, nl, ":error-code")     ? &ecode
                             : name_is(name, nl, ":error-message")  ? &emsg
                                                                    : NULL;
            if (w)
                *w = (struct view){v + 2, sz - 2, 1};
        }
        h = v + sz;
    }
    const char *payload = (const char *)he;
    size_t pl = t - 16 - hl;
    int exc = mtype.set && mtype.n == 9 && !memcmp(mtype.p, "exception", 9);
    int err = mtype.set && mtype.n == 5 && !memcmp(mtype.p, "error", 5);
    if (!exc && !err)
        return cb(ud, etype.set ? (const char *)etype.p : "", etype.n, payload, pl);
    char tb[256];
    const struct view *src = exc ? &xtype : &ecode;
    size_t n = src->n < sizeof tb - 1 ? src->n : sizeof tb - 1;
    tb[0] = '!';
    if (n)
        memcpy(tb + 1, src->p, n);
    tb[n + 1] = 0;
    if (err && pl == 0 && emsg.set)
        return cb(ud, tb, n + 1, (const char *)emsg.p, emsg.n);
    return cb(ud, tb, n + 1, payload, pl);
}

static void acc_reset(struct sy_framer *f)
{
    sy_buf_reset(&f->acc);
}

int sy_awses_feed(struct sy_framer *f, const char *p, size_t n, sy_frame_cb cb, void *ud)
{
    const unsigned char *s = (const unsigned char *)p;
    while (n > 0) {
        uint32_t t;
        int rc;
        if (f->acc.len == 0 && n >= 12) { /* whole messages straight from the input */
            if ((rc = prelude(f, s, &t))) {
                acc_reset(f);
                return rc;
            }
            if (n >= t) {
                if ((rc = deliver(s, t, cb, ud)))
                    return rc;
                s += t;
                n -= t;
                continue;
            }
        }
        /* a split message: gather the prelude, then the rest */
        size_t have = f->acc.len;
        size_t want = have < 12 ? 12 - have : (size_t)be32((const unsigned char *)f->acc.p) - have;
        size_t take = n < want ? n : want;
        if (sy_buf_append(&f->acc, s, take)) {
            acc_reset(f);
            return SY_EUPPROTO; /* max_event over the buffer's cap */
        }
        s += take;
        n -= take;
        if (f->acc.len < 12)
            continue;
        if ((rc = prelude(f, (const unsigned char *)f->acc.p, &t))) {
            acc_reset(f);
            return rc;
        }
        if (f->acc.len < t)
            continue;
        rc = deliver((const unsigned char *)f->acc.p, t, cb, ud);
        acc_reset(f);
        if (rc)
            return rc;
    }
    return 0;
}

int sy_awses_finish(struct sy_framer *f, sy_frame_cb cb, void *ud)
{
    (void)cb;
    (void)ud;
    if (f->acc.len) { /* the upstream ended inside a message */
        acc_reset(f);
        return SY_EUPPROTO;
    }
    return 0;
}

int sy_awses_encode(struct sy_buf *out, const char *const *names, const char *const *values, size_t nh,
                    const char *payload, size_t pl)
{
    uint64_t hl = 0;
    for (size_t i = 0; i < nh; i++) {
        size_t nl = strlen(names[i]), vl = strlen(values[i]);
        if (nl == 0 || nl > 255 || vl > 65535)
            return SY_EINVAL;
        hl += 1 + nl + 1 + 2 + vl;
    }
    uint64_t t = 16 + hl + pl;
    if (t > UINT32_MAX)
        return SY_ENOSPC;
    int rc = sy_buf_reserve(out, (size_t)t);
    if (rc)
        return rc;
    unsigned char *m = (unsigned char *)out->p + out->len, *w = m + 12;
    put32(m, (uint32_t)t);
    put32(m + 4, (uint32_t)hl);
    put32(m + 8, sy_crc32(0, m, 8));
    for (size_t i = 0; i < nh; i++) {
        size_t nl = strlen(names[i]), vl = strlen(values[i]);
        *w++ = (unsigned char)nl;
        memcpy(w, names[i], nl);
        w += nl;
        *w++ = 7;
        *w++ = (unsigned char)(vl >> 8);
        *w++ = (unsigned char)vl;
        memcpy(w, values[i], vl);
        w += vl;
    }
    if (pl)
        memcpy(w, payload, pl);
    w += pl;
    put32(w, sy_crc32(0, m, (size_t)t - 4));
    out->len += (size_t)t;
    out->p[out->len] = 0;
    return 0;
}
