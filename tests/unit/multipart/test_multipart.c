/* test_multipart.c - unit tests for src/http/multipart.c: the boundary of a
 * multipart/form-data Content-Type, and finding one field's value in a body. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/multipart.h"

#define S(x) x, strlen(x)

/* the boundary of ct as a string ("" when -1) */
static const char *bnd(const char *ct)
{
    static char out[128];
    const char *b;
    size_t bn;
    if (sy_multipart_boundary(S(ct), &b, &bn) != 0)
        return "";
    memcpy(out, b, bn);
    out[bn] = 0;
    return out;
}

/* the value of `name` in body with boundary "XB" as a string; the return
 * code in *rc */
static const char *val(const char *body, size_t n, const char *name, int *rc)
{
    static char out[16384];
    size_t off = 99, len = 99;
    *rc = sy_multipart_field(body, n, S("XB"), name, &off, &len);
    if (*rc != 1)
        return "";
    assert_true(off + len <= n);
    memcpy(out, body + off, len);
    out[len] = 0;
    return out;
}

static void boundary(void **st)
{
    (void)st;
    assert_string_equal(bnd("multipart/form-data; boundary=abc123"), "abc123");
    assert_string_equal(bnd("multipart/form-data; boundary=\"a b:c,d\""), "a b:c,d");
    assert_string_equal(bnd("Multipart/Form-Data;BOUNDARY=x"), "x");
    assert_string_equal(bnd("  multipart/form-data ; charset=utf-8; Boundary=----WebKitFormBoundaryQ"),
                        "----WebKitFormBoundaryQ");
    /* a quoted ';' or "boundary=" inside another parameter is not it */
    assert_string_equal(bnd("multipart/form-data; x=\"a;boundary=no\"; boundary=yes"), "yes");
    assert_string_equal(bnd("multipart/form-data; x=\"a\\\"; boundary=no\"; boundary=yes"), "yes");
    assert_string_equal(bnd("multipart/form-data; boundary=first; boundary=second"), "first");
    /* 70 characters is the most */
    char ct[160] = "multipart/form-data; boundary=";
    memset(ct + strlen(ct), 'a', 70);
    assert_int_equal(strlen(bnd(ct)), 70);
    strcat(ct, "a");
    assert_string_equal(bnd(ct), "");
    /* not it */
    assert_string_equal(bnd("multipart/mixed; boundary=x"), "");
    assert_string_equal(bnd("multipart/form-datax; boundary=x"), "");
    assert_string_equal(bnd("application/json"), "");
    assert_string_equal(bnd("multipart/form-data"), "");
    assert_string_equal(bnd("multipart/form-data; charset=utf-8"), "");
    assert_string_equal(bnd("multipart/form-data; boundary="), "");
    assert_string_equal(bnd("multipart/form-data; boundary=\"\""), "");
    assert_string_equal(bnd("multipart/form-data; boundary=\"abc"), "");
    assert_string_equal(bnd("multipart/form-data; boundary=\"ends \""), "");
    assert_string_equal(bnd("multipart/form-data; boundary"), "");
    assert_string_equal(bnd(""), "");
    const char *b;
    size_t bn;
    assert_int_equal(sy_multipart_boundary(NULL, 0, &b, &bn), -1);
    /* the length given is the end, not a NUL */
    assert_int_equal(sy_multipart_boundary("multipart/form-data; boundary=abcdef", 33, &b, &bn), 0);
    assert_int_equal(bn, 3);
}

#define CD "Content-Disposition: form-data; "

static void field_positions(void **st)
{
    (void)st;
    int rc;
    const char *first = "--XB\r\n" CD "name=\"model\"\r\n\r\nwhisper-1\r\n"
                        "--XB\r\n" CD "name=\"file\"; filename=\"a.wav\"\r\nContent-Type: audio/wav\r\n\r\n"
                        "RIFF\r\n--X\r\n--XB--\r\n";
    assert_string_equal(val(S(first), "model", &rc), "whisper-1");
    assert_int_equal(rc, 1);
    /* the offset is into the body: splicing works */
    size_t off, len;
    assert_int_equal(sy_multipart_field(S(first), S("XB"), "model", &off, &len), 1);
    assert_int_equal(off, strlen("--XB\r\n" CD "name=\"model\"\r\n\r\n"));
    assert_int_equal(len, 9);
    /* a part with a filename counts too */
    assert_string_equal(val(S(first), "file", &rc), "RIFF\r\n--X");
    /* last, after a file part */
    const char *last = "--XB\r\n" CD "name=\"file\"; filename=\"model\"\r\n\r\n\x00\x01model\r\n"
                       "--XB\r\n" CD "name=\"language\"\r\n\r\nen\r\n"
                       "--XB\r\n" CD "name=\"model\"\r\n\r\ngpt-4o-transcribe\r\n--XB--";
    size_t lastn = strlen("--XB\r\n" CD "name=\"file\"; filename=\"model\"\r\n\r\n") + 1 +
                   strlen("\x01model\r\n--XB\r\n" CD "name=\"language\"\r\n\r\nen\r\n--XB\r\n" CD
                          "name=\"model\"\r\n\r\ngpt-4o-transcribe\r\n--XB--");
    assert_string_equal(val(last, lastn, "model", &rc), "gpt-4o-transcribe");
    assert_string_equal(val(last, lastn, "language", &rc), "en");
    /* missing */
    assert_string_equal(val(last, lastn, "prompt", &rc), "");
    assert_int_equal(rc, 0);
    assert_string_equal(val(last, lastn, "mode", &rc), "");
    assert_int_equal(rc, 0);
    assert_string_equal(val(last, lastn, "", &rc), "");
    assert_int_equal(rc, 0);
    /* an empty form */
    assert_string_equal(val(S("--XB--\r\n"), "model", &rc), "");
    assert_int_equal(rc, 0);
    /* two parts of the same name: refused (an upstream may read the other one) */
    val(S("--XB\r\n" CD "name=model\r\n\r\na\r\n--XB\r\n" CD "name=model\r\n\r\nb\r\n--XB--"), "model", &rc);
    assert_int_equal(rc, -2);
}

static void names_and_headers(void **st)
{
    (void)st;
    int rc;
    /* bare name, parameters in any order and case, header name case */
    assert_string_equal(val(S("--XB\r\ncontent-disposition:form-data;NAME=model\r\n\r\nm1\r\n--XB--"), "model", &rc),
                        "m1");
    assert_string_equal(
        val(S("--XB\r\nCONTENT-DISPOSITION : Form-Data; filename=\"x\" ; Name=\"model\"\r\n\r\nm2\r\n--XB--"), "model",
            &rc),
        "m2");
    /* other headers first; a quoted name with an escape is refused (is name="mod\el" "model"?) */
    val(S("--XB\r\nContent-Type: text/plain\r\n" CD "name=\"a\\\"b\"\r\n\r\nq\r\n--XB--"), "a\"b", &rc);
    assert_int_equal(rc, -1);
    val(S("--XB\r\n" CD "name=\"mod\\el\"\r\n\r\nx\r\n--XB--"), "model", &rc);
    assert_int_equal(rc, -1);
    /* "filename" is not "name"; the name is case-sensitive; not form-data */
    assert_string_equal(val(S("--XB\r\n" CD "filename=\"model\"\r\n\r\nx\r\n--XB--"), "model", &rc), "");
    assert_int_equal(rc, 0);
    assert_string_equal(val(S("--XB\r\n" CD "name=\"Model\"\r\n\r\nx\r\n--XB--"), "model", &rc), "");
    assert_int_equal(rc, 0);
    assert_string_equal(val(S("--XB\r\nContent-Disposition: attachment; name=model\r\n\r\nx\r\n--XB--"), "model", &rc),
                        "");
    assert_int_equal(rc, 0);
    assert_string_equal(val(S("--XB\r\n" CD "name=\"modelx\"\r\n\r\nx\r\n--XB--"), "model", &rc), "");
    assert_string_equal(val(S("--XB\r\n" CD "name=\"mode\"\r\n\r\nx\r\n--XB--"), "model", &rc), "");
    assert_int_equal(rc, 0);
    /* a part without headers, then the field */
    assert_string_equal(val(S("--XB\r\n\r\nanon\r\n--XB\r\n" CD "name=model\r\n\r\nm\r\n--XB--"), "model", &rc), "m");
    /* padding after the boundary of a delimiter */
    assert_string_equal(val(S("--XB \t\r\n" CD "name=model\r\n\r\nm\r\n--XB--"), "model", &rc), "m");
}

static void crlf_and_content(void **st)
{
    (void)st;
    int rc;
    /* empty value */
    assert_string_equal(val(S("--XB\r\n" CD "name=model\r\n\r\n\r\n--XB--"), "model", &rc), "");
    assert_int_equal(rc, 1);
    /* the value keeps its own CRLFs, only the delimiter's is cut */
    assert_string_equal(val(S("--XB\r\n" CD "name=model\r\n\r\n\r\na\r\n\r\n\r\n--XB--"), "model", &rc),
                        "\r\na\r\n\r\n");
    /* boundary-like text that is not CRLF--XB followed by CRLF or -- */
    assert_string_equal(val(S("--XB\r\n" CD "name=model\r\n\r\nx--XB\r\ny\n--XB\r\nz\r--XB\r\nw\r\n--XBC\r\n"
                              "v\r\n--XB-\r\n\r\n--XB--"),
                            "model", &rc),
                        "x--XB\r\ny\n--XB\r\nz\r--XB\r\nw\r\n--XBC\r\nv\r\n--XB-\r\n");
    /* bare LFs are not line ends */
    assert_string_equal(val(S("--XB\n" CD "name=model\n\nm\n--XB--"), "model", &rc), "");
    assert_int_equal(rc, -1);
    assert_string_equal(val(S("--XB\r\n" CD "name=model\n\nm\r\n--XB--"), "model", &rc), "");
    assert_int_equal(rc, -1);
    /* the close delimiter without a CRLF after it, or an epilogue after */
    assert_string_equal(val(S("--XB\r\n" CD "name=model\r\n\r\nm\r\n--XB--epilogue --XB\r\n"), "model", &rc), "m");
    assert_string_equal(
        val(S("--XB\r\n" CD "name=a\r\n\r\nm\r\n--XB--\r\n--XB\r\n" CD "name=model\r\n\r\nn\r\n--XB--"), "model", &rc),
        "");
    assert_int_equal(rc, 0);
    /* a part with no body at all: "headers CRLF" then the delimiter's CRLF */
    assert_string_equal(val(S("--XB\r\n" CD "name=a\r\n\r\n--XB\r\n" CD "name=model\r\n\r\nm\r\n--XB--"), "model", &rc),
                        "m");
    assert_string_equal(val(S("--XB\r\n" CD "name=model\r\n\r\n--XB--"), "model", &rc), "");
    assert_int_equal(rc, -1);
}

static void preamble(void **st)
{
    (void)st;
    int rc;
    assert_string_equal(
        val(S("This is a preamble --XB\r\n--XB: not yet\r\n--XB\r\n" CD "name=model\r\n\r\nm\r\n--XB--"), "model", &rc),
        "m");
    /* no opening delimiter */
    assert_string_equal(val(S(CD "name=model\r\n\r\nm\r\n"), "model", &rc), "");
    assert_int_equal(rc, -1);
    /* "-XB" or " --XB" opens nothing: the first delimiter is the close one */
    assert_string_equal(val(S("-XB\r\n" CD "name=model\r\n\r\nm\r\n--XB--"), "model", &rc), "");
    assert_int_equal(rc, 0);
    assert_string_equal(val(S(" --XB\r\n" CD "name=model\r\n\r\nm\r\n--XB--"), "model", &rc), "");
    assert_int_equal(rc, 0);
    assert_string_equal(val(S(""), "model", &rc), "");
    assert_int_equal(rc, -1);
    assert_string_equal(val(S("--XB"), "model", &rc), "");
    assert_int_equal(rc, -1);
}

static void truncated(void **st)
{
    (void)st;
    const char *full =
        "--XB\r\n" CD "name=\"a\"\r\n\r\nv\r\n--XB\r\n" CD "name=\"model\"\r\n\r\nwhisper-1\r\n--XB--\r\n";
    size_t n = strlen(full), found = 0;
    /* every prefix: never a value beyond the prefix, and -1 until the
     * delimiter after the value is complete */
    for (size_t k = 0; k <= n; k++) {
        char *p = malloc(k ? k : 1); /* exact size: ASan sees any overread */
        memcpy(p, full, k);
        size_t off, len;
        int rc = sy_multipart_field(p, k, S("XB"), "model", &off, &len);
        if (rc == 1) {
            assert_true(off + len <= k);
            assert_int_equal(len, 9);
            assert_memory_equal(p + off, "whisper-1", 9);
            found++;
        } else {
            assert_int_equal(rc, -1);
        }
        free(p);
    }
    assert_int_equal(found, 3); /* ...\r\n--XB--, ...--XB--\r, ...--XB--\r\n */
    int rc;
    assert_string_equal(val(S("--XB\r\n" CD "name=model\r\n\r\nm\r\n--X"), "model", &rc), "");
    assert_int_equal(rc, -1);
    assert_string_equal(val(S("--XB\r\n" CD "name=a\r\n\r\nm"), "model", &rc), "");
    assert_int_equal(rc, -1);
    assert_string_equal(val(S("--XB\r\n" CD "name=model"), "model", &rc), "");
    assert_int_equal(rc, -1);
}

static void header_limit(void **st)
{
    (void)st;
    /* a header block of exactly 8192 bytes is read; 8193 is not */
    for (int extra = 0; extra <= 1; extra++) {
        size_t hb = 8192 + (size_t)extra;
        char *p = malloc(hb + 64);
        size_t n = 0;
        n += (size_t)sprintf(p + n, "--XB\r\n");
        const char *cd = CD "name=model\r\n";
        memcpy(p + n, cd, strlen(cd));
        n += strlen(cd);
        size_t pad = hb - strlen(cd) - strlen("X-Pad: \r\n");
        n += (size_t)sprintf(p + n, "X-Pad: ");
        memset(p + n, 'p', pad);
        n += pad;
        n += (size_t)sprintf(p + n, "\r\n\r\nm\r\n--XB--");
        int rc;
        const char *v = val(p, n, "model", &rc);
        assert_int_equal(rc, extra ? -1 : 1);
        assert_string_equal(v, extra ? "" : "m");
        free(p);
    }
    /* one long line without a CRLF */
    size_t n = 20000;
    char *p = malloc(n);
    memcpy(p, "--XB\r\n", 6);
    memset(p + 6, 'h', n - 6);
    int rc;
    val(p, n, "model", &rc);
    assert_int_equal(rc, -1);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(boundary),         cmocka_unit_test(field_positions), cmocka_unit_test(names_and_headers),
        cmocka_unit_test(crlf_and_content), cmocka_unit_test(preamble),        cmocka_unit_test(truncated),
        cmocka_unit_test(header_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
