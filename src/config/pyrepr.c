/* pyrepr.c - Python's str(), repr() and json.dumps() renderings of YAML nodes.
 *
 * LiteLLM derives a deployment id by hashing Python text renderings of the
 * litellm_params values (Router._generate_model_id) and exports
 * environment_variables with str(value); to give the same bytes we print
 * values exactly as CPython does:
 *   str(x)        str as is; int decimal; float repr; True/False; None;
 *                 list "[a, b]" and dict "{'k': v}" with repr() of members.
 *   json.dumps(x) ensure_ascii=True, separators ", " and ": ", floats by
 *                 repr, Infinity/NaN, keys converted to strings.
 *   repr(float)   shortest digits that round-trip; fixed notation when the
 *                 decimal exponent is in [-4, 16), else "1e-05" style.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/ytree.h"
#include "core/buf.h"

int sy__py_float(struct sy_buf *b, double d)
{
    if (isnan(d))
        return SY_BUF_LIT(b, "nan");
    if (isinf(d))
        return d < 0 ? SY_BUF_LIT(b, "-inf") : SY_BUF_LIT(b, "inf");
    if (d == 0)
        return signbit(d) ? SY_BUF_LIT(b, "-0.0") : SY_BUF_LIT(b, "0.0");
    char tmp[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, d);
        if (strtod(tmp, NULL) == d)
            break;
    }
    /* tmp is [-]D[.DDD]e[+-]XX: collect digits and the decimal exponent */
    char digits[32];
    size_t nd = 0;
    const char *p = tmp;
    int neg = 0;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9' && nd < sizeof digits - 1)
            digits[nd++] = *p;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = 0;
    int exp10 = *p == 'e' ? (int)strtol(p + 1, NULL, 10) : 0;
    int decpt = exp10 + 1; /* value = 0.DIGITS x 10^decpt */
    int rc = 0;
    if (neg)
        rc |= SY_BUF_LIT(b, "-");
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            rc |= SY_BUF_LIT(b, "0.");
            for (int i = 0; i < -decpt; i++)
                rc |= SY_BUF_LIT(b, "0");
            rc |= sy_buf_append(b, digits, nd);
        } else if ((size_t)decpt >= nd) {
            rc |= sy_buf_append(b, digits, nd);
            for (size_t i = nd; i < (size_t)decpt; i++)
                rc |= SY_BUF_LIT(b, "0");
            rc |= SY_BUF_LIT(b, ".0");
        } else {
            rc |= sy_buf_append(b, digits, (size_t)decpt);
            rc |= SY_BUF_LIT(b, ".");
            rc |= sy_buf_append(b, digits + decpt, nd - (size_t)decpt);
        }
    } else {
        rc |= sy_buf_append(b, digits, 1);
        if (nd > 1) {
            rc |= SY_BUF_LIT(b, ".");
            rc |= sy_buf_append(b, digits + 1, nd - 1);
        }
        rc |= sy_buf_printf(b, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
    }
    return rc;
}

static int py_int(struct sy_buf *b, const struct sy_ynode *n)
{
    if (n->big) /* beyond int64: print the double without exponent */
        return sy_buf_printf(b, "%.0f", n->d);
    return sy_buf_printf(b, "%lld", (long long)n->i);
}

/* repr() of a str: single quotes unless the text has ' and no ". */
static int py_repr_str(struct sy_buf *b, const char *s, size_t len)
{
    char q = (memchr(s, '\'', len) && !memchr(s, '"', len)) ? '"' : '\'';
    int rc = sy_buf_append(b, &q, 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\' || c == (unsigned char)q)
            rc |= sy_buf_printf(b, "\\%c", c);
        else if (c == '\n')
            rc |= SY_BUF_LIT(b, "\\n");
        else if (c == '\r')
            rc |= SY_BUF_LIT(b, "\\r");
        else if (c == '\t')
            rc |= SY_BUF_LIT(b, "\\t");
        else if (c < 0x20 || c == 0x7f)
            rc |= sy_buf_printf(b, "\\x%02x", c);
        else
            rc |= sy_buf_append(b, &s[i], 1);
    }
    rc |= sy_buf_append(b, &q, 1);
    return rc;
}

static int py_repr(struct sy_buf *b, const struct sy_ynode *n);

static int py_container(struct sy_buf *b, const struct sy_ynode *n)
{
    int rc = 0;
    if (n->kind == SY_Y_SEQ) {
        rc |= SY_BUF_LIT(b, "[");
        for (size_t i = 0; i < n->n; i++) {
            if (i)
                rc |= SY_BUF_LIT(b, ", ");
            rc |= py_repr(b, n->items[i]);
        }
        return rc | SY_BUF_LIT(b, "]");
    }
    rc |= SY_BUF_LIT(b, "{");
    for (size_t i = 0; i < n->n; i++) {
        if (i)
            rc |= SY_BUF_LIT(b, ", ");
        rc |= py_repr(b, n->pairs[i].key);
        rc |= SY_BUF_LIT(b, ": ");
        rc |= py_repr(b, n->pairs[i].val);
    }
    return rc | SY_BUF_LIT(b, "}");
}

static int py_repr(struct sy_buf *b, const struct sy_ynode *n)
{
    if (n->kind == SY_Y_STR)
        return py_repr_str(b, n->s, n->len);
    return sy__py_str(b, n);
}

int sy__py_str(struct sy_buf *b, const struct sy_ynode *n)
{
    switch (n->kind) {
    case SY_Y_NULL: return SY_BUF_LIT(b, "None");
    case SY_Y_BOOL: return n->i ? SY_BUF_LIT(b, "True") : SY_BUF_LIT(b, "False");
    case SY_Y_INT: return py_int(b, n);
    case SY_Y_FLOAT: return sy__py_float(b, n->d);
    case SY_Y_STR: return sy_buf_append(b, n->s, n->len);
    case SY_Y_MAP:
    case SY_Y_SEQ: return py_container(b, n);
    }
    return 0;
}

/* Decode one UTF-8 sequence; invalid bytes decode as themselves (Python would
 * have surrogate-escaped them; PyYAML rejects invalid UTF-8 before we get here). */
static unsigned utf8_next(const unsigned char *s, size_t len, size_t *i)
{
    unsigned c = s[*i];
    int extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
    if (extra == 0 || *i + (size_t)extra >= len) {
        (*i)++;
        return c;
    }
    unsigned cp = c & (0x3fu >> extra);
    for (int k = 1; k <= extra; k++) {
        unsigned cc = s[*i + (size_t)k];
        if ((cc & 0xc0) != 0x80) {
            (*i)++;
            return c;
        }
        cp = (cp << 6) | (cc & 0x3fu);
    }
    *i += (size_t)extra + 1;
    return cp;
}

static int json_str(struct sy_buf *b, const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    int rc = SY_BUF_LIT(b, "\"");
    for (size_t i = 0; i < len;) {
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            if (c == '"')
                rc |= SY_BUF_LIT(b, "\\\"");
            else if (c == '\\')
                rc |= SY_BUF_LIT(b, "\\\\");
            else if (c == '\n')
                rc |= SY_BUF_LIT(b, "\\n");
            else if (c == '\r')
                rc |= SY_BUF_LIT(b, "\\r");
            else if (c == '\t')
                rc |= SY_BUF_LIT(b, "\\t");
            else if (c == '\b')
                rc |= SY_BUF_LIT(b, "\\b");
            else if (c == '\f')
                rc |= SY_BUF_LIT(b, "\\f");
            else if (c < 0x20)
                rc |= sy_buf_printf(b, "\\u%04x", c);
            else {
                char ch = (char)c;
                rc |= sy_buf_append(b, &ch, 1);
            }
            continue;
        }
        unsigned cp = utf8_next(s, len, &i);
        if (cp >= 0x10000) {
            cp -= 0x10000;
            rc |= sy_buf_printf(b, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
        } else {
            rc |= sy_buf_printf(b, "\\u%04x", cp);
        }
    }
    return rc | SY_BUF_LIT(b, "\"");
}

static int json_float(struct sy_buf *b, double d)
{
    if (isnan(d))
        return SY_BUF_LIT(b, "NaN");
    if (isinf(d))
        return d < 0 ? SY_BUF_LIT(b, "-Infinity") : SY_BUF_LIT(b, "Infinity");
    return sy__py_float(b, d);
}

static int json_key(struct sy_buf *b, const struct sy_ynode *k)
{
    switch (k->kind) {
    case SY_Y_STR: return json_str(b, k->s, k->len);
    case SY_Y_NULL: return SY_BUF_LIT(b, "\"null\"");
    case SY_Y_BOOL: return k->i ? SY_BUF_LIT(b, "\"true\"") : SY_BUF_LIT(b, "\"false\"");
    default: {
        int rc = SY_BUF_LIT(b, "\"");
        rc |= k->kind == SY_Y_INT ? py_int(b, k) : json_float(b, k->d);
        return rc | SY_BUF_LIT(b, "\"");
    }
    }
}

int sy__py_json(struct sy_buf *b, const struct sy_ynode *n)
{
    int rc = 0;
    switch (n->kind) {
    case SY_Y_NULL: return SY_BUF_LIT(b, "null");
    case SY_Y_BOOL: return n->i ? SY_BUF_LIT(b, "true") : SY_BUF_LIT(b, "false");
    case SY_Y_INT: return py_int(b, n);
    case SY_Y_FLOAT: return json_float(b, n->d);
    case SY_Y_STR: return json_str(b, n->s, n->len);
    case SY_Y_SEQ:
        rc |= SY_BUF_LIT(b, "[");
        for (size_t i = 0; i < n->n; i++) {
            if (i)
                rc |= SY_BUF_LIT(b, ", ");
            rc |= sy__py_json(b, n->items[i]);
        }
        return rc | SY_BUF_LIT(b, "]");
    case SY_Y_MAP:
        rc |= SY_BUF_LIT(b, "{");
        for (size_t i = 0; i < n->n; i++) {
            if (i)
                rc |= SY_BUF_LIT(b, ", ");
            rc |= json_key(b, n->pairs[i].key);
            rc |= SY_BUF_LIT(b, ": ");
            rc |= sy__py_json(b, n->pairs[i].val);
        }
        return rc | SY_BUF_LIT(b, "}");
    }
    return rc;
}
