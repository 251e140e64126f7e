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
 * repr(float), repr(str) and the json.dumps() of a str come from core/pyrepr.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/ytree.h"
#include "core/buf.h"
#include "core/pyrepr.h"

static int py_int(struct sy_buf *b, const struct sy_ynode *n)
{
    if (n->big) /* beyond int64: print the double without exponent */
        return sy_buf_printf(b, "%.0f", n->d);
    return sy_buf_printf(b, "%lld", (long long)n->i);
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
        return sy_py_str_repr(b, n->s, n->len);
    return sy__py_str(b, n);
}

int sy__py_str(struct sy_buf *b, const struct sy_ynode *n)
{
    switch (n->kind) {
    case SY_Y_NULL: return SY_BUF_LIT(b, "None");
    case SY_Y_BOOL: return n->i ? SY_BUF_LIT(b, "True") : SY_BUF_LIT(b, "False");
    case SY_Y_INT: return py_int(b, n);
    case SY_Y_FLOAT: return sy_py_float_repr(b, n->d);
    case SY_Y_STR: return sy_buf_append(b, n->s, n->len);
    case SY_Y_MAP:
    case SY_Y_SEQ: return py_container(b, n);
    }
    return 0;
}

static int json_float(struct sy_buf *b, double d)
{
    if (isnan(d))
        return SY_BUF_LIT(b, "NaN");
    if (isinf(d))
        return d < 0 ? SY_BUF_LIT(b, "-Infinity") : SY_BUF_LIT(b, "Infinity");
    return sy_py_float_repr(b, d);
}

static int json_key(struct sy_buf *b, const struct sy_ynode *k)
{
    switch (k->kind) {
    case SY_Y_STR: return sy_py_json_dumps_str(b, k->s, k->len);
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
    case SY_Y_STR: return sy_py_json_dumps_str(b, n->s, n->len);
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
