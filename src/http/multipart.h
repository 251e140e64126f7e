/* multipart.h - just enough of multipart/form-data (RFC 7578) for a gateway
 * that forwards uploads: find the boundary in a Content-Type, and find the
 * value of one small text field (the "model" of /v1/audio/transcriptions,
 * /v1/images/edits, /v1/files "purpose" ...) without copying the body, so the
 * field can be replaced by splicing and the rest forwarded byte for byte.
 *
 *   --BOUNDARY\r\n
 *   Content-Disposition: form-data; name="model"\r\n     <- headers of a part,
 *   \r\n                                                    names quoted or bare
 *   whisper-1\r\n                                         <- value [off, off+len)
 *   --BOUNDARY\r\n
 *   Content-Disposition: form-data; name="file"; filename="a.wav"\r\n
 *   Content-Type: audio/wav\r\n
 *   \r\n
 *   <bytes>\r\n
 *   --BOUNDARY--\r\n
 *
 * Pure, no allocation, linear in the body; never reads outside [p, p+n).
 */
#ifndef SY_HTTP_MULTIPART_H
#define SY_HTTP_MULTIPART_H

#include <stddef.h>

/* The boundary parameter of a Content-Type value ct[0..n) that is
 * multipart/form-data (case-insensitive; quoted or bare boundary, other
 * parameters in any order). Sets *b and *bn to a view into ct. 0, or -1 when ct
 * is not multipart/form-data or has no valid boundary (1..70 characters). */
int sy_multipart_boundary(const char *ct, size_t n, const char **b, size_t *bn);

/* The value of the part named `name` (a part with a filename counts too) in
 * body p[0..n) with boundary b[0..bn): *off and *len give its bytes (without
 * the CRLF before the next delimiter). The whole body is read: 1 found, 0 not
 * present, -2 present twice (a gateway that checks one and forwards both would
 * let the upstream read the other), -1 malformed (no opening delimiter, a part
 * header over 8 KB, no closing delimiter after a part's headers, a quoted part
 * name with a backslash escape: readers disagree on what it names). */
int sy_multipart_field(const char *p, size_t n, const char *b, size_t bn, const char *name, size_t *off, size_t *len);

#endif
