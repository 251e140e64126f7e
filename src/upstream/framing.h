/* framing.h - incremental readers for upstream stream framings.
 *
 * A translating adapter's stream arrives in one of three framings; each has
 * its reader in its own file, all behind one feed interface. Bytes are fed as
 * they come off the socket (any split, down to one byte at a time); each
 * complete event is handed to the callback as (type, data):
 *
 *   framing          file           type passed              data passed
 *   ---------------  -------------  -----------------------  --------------------------------------
 *   SSE              sse.c          the `event:` field ("")  `data:` lines joined by "\n"
 *                                                            (events with no data are skipped;
 *                                                            `:` comments, id:, retry: ignored;
 *                                                            CR, LF and CRLF line ends; a BOM
 *                                                            at the start is skipped)
 *   NDJSON           ndjson.c       ""                       one line without its "\n" / "\r\n"
 *                                                            (blank lines skipped)
 *   AWS event stream eventstream.c  `:event-type` header, or  the payload
 *                                   for `:message-type`
 *                                   exception/error:
 *                                   "!" + `:exception-type`
 *                                   (or "!" + `:error-code`)
 *
 * AWS event-stream message (all integers big-endian; CRCs are CRC-32 IEEE):
 *
 *   +-------------+---------------+-------------+----------------+---------+-------------+
 *   | total len 4 | headers len 4 | prelude CRC | headers ...    | payload | message CRC |
 *   +-------------+---------------+-------------+----------------+---------+-------------+
 *   header: name len (1) | name | value type (1) | value (type 7 string: len (2) + bytes;
 *           other types have fixed or 2-byte-length sizes, parsed and skipped)
 *
 * A prelude or message CRC mismatch, a total length under 16 or over
 * max_event, or a header running past its block is SY_EUPPROTO. An event
 * larger than max_event (any framing) is SY_EUPPROTO too. Memory: at most one
 * event is buffered (up to max_event bytes).
 */
#ifndef SY_FRAMING_H
#define SY_FRAMING_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/* Return 0 to go on; nonzero stops feeding and is returned by sy_framer_feed. */
typedef int (*sy_frame_cb)(void *ud, const char *type, size_t tl, const char *data, size_t dl);

struct sy_framer {
    int kind; /* enum sy_framing (providers/adapter.h) */
    size_t max_event;
    struct sy_buf acc;  /* bytes of the event being assembled */
    struct sy_buf data; /* SSE: data lines joined so far */
    char type[128];     /* SSE: event field of the event being assembled */
    size_t type_len;
    int bom_checked;
    int saw_cr; /* SSE/NDJSON: the last byte fed was '\r' */
};

void sy_framer_init(struct sy_framer *f, int kind, size_t max_event);
void sy_framer_free(struct sy_framer *f);
/* Feed n bytes. 0, the callback's nonzero return, or SY_EUPPROTO. */
int sy_framer_feed(struct sy_framer *f, const char *p, size_t n, sy_frame_cb cb, void *ud);
/* The upstream ended: an SSE event or NDJSON line not terminated by a
 * newline is delivered; a partial AWS message is SY_EUPPROTO. */
int sy_framer_finish(struct sy_framer *f, sy_frame_cb cb, void *ud);

/* Per framing (called by the two functions above). */
int sy_sse_feed(struct sy_framer *f, const char *p, size_t n, sy_frame_cb cb, void *ud);
int sy_sse_finish(struct sy_framer *f, sy_frame_cb cb, void *ud);
int sy_ndjson_feed(struct sy_framer *f, const char *p, size_t n, sy_frame_cb cb, void *ud);
int sy_ndjson_finish(struct sy_framer *f, sy_frame_cb cb, void *ud);
int sy_awses_feed(struct sy_framer *f, const char *p, size_t n, sy_frame_cb cb, void *ud);
int sy_awses_finish(struct sy_framer *f, sy_frame_cb cb, void *ud);

/* Encode one AWS event-stream message with string headers (mock upstream,
 * tests): names[i]/values[i] for i < nh. 0 or SY_ENOSPC. */
int sy_awses_encode(struct sy_buf *out, const char *const *names, const char *const *values, size_t nh,
                    const char *payload, size_t pl);
uint32_t sy_crc32(uint32_t crc, const void *p, size_t n); /* IEEE, zlib-compatible (crc starts at 0) */

#endif
