/* rpc.c - JSON-RPC 2.0 messages as MCP sends them, read as spans.
 *
 * A body is validated once (strict RFC 8259, depth-bounded: span.h's
 * skipper), then each message object's members are walked and the ones the
 * gateway reads are kept as spans of the body: the id's raw JSON (copied back
 * into the answer byte for byte, as JSON-RPC requires), params' raw JSON (sent
 * on to the server untouched), result / error. Only the method name is
 * decoded (it is compared). Nothing builds a tree: a tools/call of a few
 * hundred bytes costs one pass over the text and one malloc.
 *
 * Strictness, for a gateway that makes decisions on what it reads:
 *   - "jsonrpc" must be the string "2.0";
 *   - a request's id is a string or an integer (MCP: never null, no
 *     fraction), at most SY_MCP_MAX_ID bytes of JSON; a response's may be null;
 *   - "method" a string of at most SY_MCP_MAX_METHOD bytes; params an object;
 *   - a key twice in a message object, or twice in its params object, refuses
 *     the message: the gateway checks params.name against the caller's
 *     permissions, and a server that read the other occurrence would run a
 *     tool the gateway never allowed. Keys are compared decoded
 *     ("na\u006de" is "name"). Deeper objects (a tool's arguments) pass
 *     through as the client wrote them;
 *   - a batch (a JSON array) holds 1..max messages; one bad message refuses
 *     the batch (-32600), an empty one too.
 */
#include "mcp/mcp.h"

#include <stdlib.h>
#include <string.h>

#include "core/hex.h"
#include "core/utf8.h"
#include "mcp/span.h"
#include "providers/jdom.h"

#define SY_MCP_MAX_ID     256 /* bytes of an id's JSON */
#define SY_MCP_MAX_METHOD 256 /* bytes of a method name, decoded */

const char *const sy_mcp_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL};

/* ---- the span scanner (span.h) ---- */

size_t sy__mcp_ws(const char *p, size_t n, size_t i)
{
    while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' || p[i] == '\t'))
        i++;
    return i;
}

static size_t skip_number(const char *p, size_t n, size_t i)
{
    if (i < n && p[i] == '-')
        i++;
    if (i >= n)
        return 0;
    if (p[i] == '0') {
        i++;
    } else if (p[i] >= '1' && p[i] <= '9') {
        while (i < n && p[i] >= '0' && p[i] <= '9')
            i++;
    } else {
        return 0;
    }
    if (i < n && p[i] == '.') {
        i++;
        if (i >= n || p[i] < '0' || p[i] > '9')
            return 0;
        while (i < n && p[i] >= '0' && p[i] <= '9')
            i++;
    }
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-'))
            i++;
        if (i >= n || p[i] < '0' || p[i] > '9')
            return 0;
        while (i < n && p[i] >= '0' && p[i] <= '9')
            i++;
    }
    return i;
}

static size_t skip_lit(const char *p, size_t n, size_t i, const char *lit, size_t ln)
{
    return n - i >= ln && memcmp(p + i, lit, ln) == 0 ? i + ln : 0;
}

static size_t skip_at(const char *p, size_t n, size_t i, int depth)
{
    i = sy__mcp_ws(p, n, i);
    if (i >= n)
        return 0;
    switch (p[i]) {
    case '"': {
        size_t l = sy_jdom_string_len(p + i, n - i, NULL);
        return l ? i + l : 0;
    }
    case '{':
    case '[': {
        if (depth >= SY_MCP_MAX_DEPTH)
            return 0;
        char close = p[i] == '{' ? '}' : ']';
        int obj = p[i] == '{';
        i = sy__mcp_ws(p, n, i + 1);
        if (i < n && p[i] == close)
            return i + 1;
        for (;;) {
            if (obj) {
                i = sy__mcp_ws(p, n, i);
                if (i >= n || p[i] != '"')
                    return 0;
                size_t l = sy_jdom_string_len(p + i, n - i, NULL);
                if (!l)
                    return 0;
                i = sy__mcp_ws(p, n, i + l);
                if (i >= n || p[i] != ':')
                    return 0;
                i++;
            }
            i = skip_at(p, n, i, depth + 1);
            if (!i)
                return 0;
            i = sy__mcp_ws(p, n, i);
            if (i >= n)
                return 0;
            if (p[i] == close)
                return i + 1;
            if (p[i] != ',')
                return 0;
            i++;
        }
    }
    case 't': return skip_lit(p, n, i, "true", 4);
    case 'f': return skip_lit(p, n, i, "false", 5);
    case 'n': return skip_lit(p, n, i, "null", 4);
    default: return skip_number(p, n, i);
    }
}

size_t sy__mcp_skip(const char *p, size_t n, size_t i)
{
    return skip_at(p, n, i, 0);
}

int sy__mcp_it_init(struct sy__mcp_it *it, const char *p, size_t n)
{
    memset(it, 0, sizeof *it);
    it->p = p;
    it->n = n;
    size_t i = p ? sy__mcp_ws(p, n, 0) : 0;
    if (!p || i >= n || p[i] != '{') {
        it->i = (size_t)-1;
        return -1;
    }
    it->i = i + 1;
    return 0;
}

int sy__mcp_it_next(struct sy__mcp_it *it)
{
    const char *p = it->p;
    size_t n = it->n, i = it->i;
    if (i == (size_t)-1)
        return -1;
    if (i == n + 1)
        return 0; /* ended */
    i = sy__mcp_ws(p, n, i);
    if (i < n && p[i] == ',' && it->k) {
        i = sy__mcp_ws(p, n, i + 1);
    } else if (i < n && p[i] == '}') {
        it->i = n + 1;
        return 0;
    } else if (it->k) {
        it->i = (size_t)-1;
        return -1;
    }
    if (i >= n || p[i] != '"')
        goto bad;
    int esc = 0;
    size_t kl = sy_jdom_string_len(p + i, n - i, &esc);
    if (!kl)
        goto bad;
    it->k = p + i;
    it->klen = kl;
    it->kesc = esc;
    i = sy__mcp_ws(p, n, i + kl);
    if (i >= n || p[i] != ':')
        goto bad;
    size_t vs = sy__mcp_ws(p, n, i + 1), ve = sy__mcp_skip(p, n, vs);
    if (!ve)
        goto bad;
    it->v = p + vs;
    it->vlen = ve - vs;
    it->i = ve;
    return 1;
bad:
    it->i = (size_t)-1;
    return -1;
}

long sy__mcp_unescape(const char *s, size_t len, char *out, size_t cap)
{
    if (len < 2 || !cap)
        return -1;
    size_t o = 0;
    for (size_t i = 1; i + 1 < len;) {
        char c = s[i];
        if (c != '\\') {
            if (o + 1 >= cap)
                return -1;
            out[o++] = c;
            i++;
            continue;
        }
        if (i + 2 >= len)
            return -1;
        char e = s[i + 1];
        unsigned cp;
        i += 2;
        switch (e) {
        case 'b': cp = '\b'; break;
        case 'f': cp = '\f'; break;
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'u':
            if (i + 4 > len - 1 || sy_hex4(s + i, &cp) < 0)
                return -1;
            i += 4;
            if (cp >= 0xd800 && cp <= 0xdbff) {
                unsigned lo;
                if (i + 6 <= len - 1 && s[i] == '\\' && s[i + 1] == 'u' && sy_hex4(s + i + 2, &lo) == 0 &&
                    lo >= 0xdc00 && lo <= 0xdfff) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    i += 6;
                } else {
                    cp = 0xfffd;
                }
            } else if (cp >= 0xdc00 && cp <= 0xdfff) {
                cp = 0xfffd;
            }
            if (cp == 0)
                return -1;
            break;
        default: cp = (unsigned char)e; break; /* " \ / */
        }
        if (o + 4 >= cap)
            return -1;
        o += sy_utf8_put(out + o, cp);
    }
    out[o] = 0;
    return (long)o;
}

int sy__mcp_str_eq(const char *s, size_t len, int esc, const char *lit, size_t ln)
{
    if (len < 2)
        return 0;
    if (!esc)
        return len - 2 == ln && memcmp(s + 1, lit, ln) == 0;
    if (len - 2 < ln) /* an escape never makes a string longer */
        return 0;
    char small[256];
    char *buf = ln + 8 <= sizeof small ? small : malloc(ln + 8);
    if (!buf)
        return 0;
    long l = sy__mcp_unescape(s, len, buf, ln + 8);
    int eq = l == (long)ln && memcmp(buf, lit, ln) == 0;
    if (buf != small)
        free(buf);
    return eq;
}

/* ---- duplicate keys ---- */

struct key {
    const char *p;
    size_t n;
    size_t off; /* decoded keys: offset in the decoded block (p set at the end) */
    int dec;
};

static int key_cmp(const void *a, const void *b)
{
    const struct key *x = a, *y = b;
    size_t m = x->n < y->n ? x->n : y->n;
    int c = memcmp(x->p, y->p, m);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* 1 when the object o[0..n) (valid) has a key twice (decoded), 0 not, -1
 * out of memory. */
static int has_dup_key(const char *o, size_t n)
{
    struct sy__mcp_it it;
    if (sy__mcp_it_init(&it, o, n) < 0)
        return 0;
    struct key small[16], *k = small;
    size_t nk = 0, cap = 16;
    char *dec = NULL; /* decoded escaped keys, one block */
    size_t dlen = 0, dcap = 0;
    int r = 0;
    while (sy__mcp_it_next(&it) > 0) {
        if (nk == cap) {
            struct key *nkp = malloc(cap * 2 * sizeof *nkp);
            if (!nkp) {
                r = -1;
                goto out;
            }
            memcpy(nkp, k, nk * sizeof *k);
            if (k != small)
                free(k);
            k = nkp;
            cap *= 2;
        }
        if (!it.kesc) {
            k[nk++] = (struct key){it.k + 1, it.klen - 2, 0, 0};
            continue;
        }
        if (dlen + it.klen > dcap) { /* decoded is never longer than raw */
            size_t nc = (dcap ? dcap * 2 : 256) + it.klen;
            char *nd = realloc(dec, nc);
            if (!nd) {
                r = -1;
                goto out;
            }
            dec = nd;
            dcap = nc;
        }
        long l = sy__mcp_unescape(it.k, it.klen, dec + dlen, dcap - dlen);
        if (l < 0) { /* \u0000 inside a key: compare it raw */
            k[nk++] = (struct key){it.k, it.klen, 0, 0};
            continue;
        }
        k[nk++] = (struct key){NULL, (size_t)l, dlen, 1};
        dlen += (size_t)l + 1;
    }
    for (size_t j = 0; j < nk; j++)
        if (k[j].dec)
            k[j].p = dec + k[j].off;
    if (nk <= 8) {
        for (size_t a = 0; a < nk && !r; a++)
            for (size_t b = a + 1; b < nk; b++)
                if (k[a].n == k[b].n && memcmp(k[a].p, k[b].p, k[a].n) == 0) {
                    r = 1;
                    break;
                }
    } else {
        qsort(k, nk, sizeof *k, key_cmp);
        for (size_t a = 1; a < nk; a++)
            if (key_cmp(&k[a - 1], &k[a]) == 0) {
                r = 1;
                break;
            }
    }
out:
    if (k != small)
        free(k);
    free(dec);
    return r;
}

/* ---- messages ---- */

struct perr {
    int code;
    const char *why;
};

static int fail(struct perr *e, int code, const char *why)
{
    e->code = code;
    e->why = why;
    return -1;
}

/* An integer id: -?digits, no fraction or exponent (MCP). */
static int int_id(const char *v, size_t n)
{
    size_t i = v[0] == '-';
    if (i >= n)
        return 0;
    for (; i < n; i++)
        if (v[i] < '0' || v[i] > '9')
            return 0;
    return 1;
}

enum { K_JSONRPC, K_ID, K_METHOD, K_PARAMS, K_RESULT, K_ERROR, K__N };
static const char *const known[K__N] = {"jsonrpc", "id", "method", "params", "result", "error"};

/* One message object o[0..n) (valid JSON) into m; method text into mbuf. */
static int parse_msg(const char *o, size_t n, struct sy_mcp_msg *m, char *mbuf, struct perr *e)
{
    struct sy__mcp_it it;
    if (sy__mcp_it_init(&it, o, n) < 0)
        return fail(e, -32600, "a JSON-RPC message must be a JSON object");
    const char *v[K__N] = {0};
    size_t vl[K__N] = {0};
    int rc;
    while ((rc = sy__mcp_it_next(&it)) > 0) {
        for (int k = 0; k < K__N; k++) {
            if (!sy__mcp_str_eq(it.k, it.klen, it.kesc, known[k], strlen(known[k])))
                continue;
            if (v[k])
                return fail(e, -32600, "duplicate key in a JSON-RPC message");
            v[k] = it.v;
            vl[k] = it.vlen;
        }
    }
    if (rc < 0)
        return fail(e, -32600, "malformed JSON-RPC message");
    int dup = has_dup_key(o, n);
    if (dup)
        return fail(e, dup < 0 ? -32603 : -32600, dup < 0 ? "out of memory" : "duplicate key in a JSON-RPC message");
    if (!v[K_JSONRPC] || !sy__mcp_str_eq(v[K_JSONRPC], vl[K_JSONRPC], 0, "2.0", 3))
        return fail(e, -32600, "jsonrpc must be \"2.0\"");
    memset(m, 0, sizeof *m);
    if (v[K_ID]) {
        char t = v[K_ID][0];
        int is_null = t == 'n';
        if (!(t == '"' || is_null || (t == '-' || (t >= '0' && t <= '9'))))
            return fail(e, -32600, "id must be a string or an integer");
        if (t != '"' && !is_null && !int_id(v[K_ID], vl[K_ID]))
            return fail(e, -32600, "id must be a string or an integer");
        if (vl[K_ID] > SY_MCP_MAX_ID)
            return fail(e, -32600, "id too long");
        if (!is_null) {
            m->id = v[K_ID];
            m->id_len = vl[K_ID];
        } else if (v[K_METHOD]) {
            return fail(e, -32600, "a request's id must not be null");
        }
    }
    if (v[K_METHOD]) {
        if (v[K_RESULT] || v[K_ERROR])
            return fail(e, -32600, "a request has no result or error");
        if (v[K_METHOD][0] != '"')
            return fail(e, -32600, "method must be a string");
        long l = sy__mcp_unescape(v[K_METHOD], vl[K_METHOD], mbuf, SY_MCP_MAX_METHOD + 1);
        if (l <= 0 || memchr(mbuf, 0, (size_t)l))
            return fail(e, -32600, l == 0 ? "method must not be empty" : "method too long");
        m->method = mbuf;
        if (v[K_PARAMS]) {
            if (v[K_PARAMS][0] != '{')
                return fail(e, -32600, "params must be an object");
            int d = has_dup_key(v[K_PARAMS], vl[K_PARAMS]);
            if (d)
                return fail(e, d < 0 ? -32603 : -32600, d < 0 ? "out of memory" : "duplicate key in params");
            m->params = v[K_PARAMS];
            m->params_len = vl[K_PARAMS];
        }
        m->kind = m->id ? SY_MCP_REQUEST : SY_MCP_NOTIFICATION;
        return 0;
    }
    /* a response (the client answering a server's request: sampling, roots, elicitation) */
    if (!v[K_ID])
        return fail(e, -32600, "a message needs a method, or an id with a result or an error");
    if (!!v[K_RESULT] == !!v[K_ERROR])
        return fail(e, -32600, "a response has exactly one of result and error");
    if (v[K_ERROR] && v[K_ERROR][0] != '{')
        return fail(e, -32600, "error must be an object");
    if (v[K_RESULT] && !m->id)
        return fail(e, -32600, "a result needs an id");
    m->kind = SY_MCP_RESPONSE;
    m->is_error = v[K_ERROR] != NULL;
    m->result = v[K_ERROR] ? v[K_ERROR] : v[K_RESULT];
    m->result_len = v[K_ERROR] ? vl[K_ERROR] : vl[K_RESULT];
    return 0;
}

static void set_err(char *err, size_t errlen, const char *why)
{
    if (err && errlen) {
        size_t l = strlen(why);
        if (l >= errlen)
            l = errlen - 1;
        memcpy(err, why, l);
        err[l] = 0;
    }
}

int sy_mcp_rpc_parse(const char *p, size_t n, size_t max, struct sy_mcp_batch *out, int *code, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct perr e = {0, NULL};
    int dummy;
    if (!code)
        code = &dummy;
    *code = 0;
    size_t s = p ? sy__mcp_ws(p, n, 0) : 0;
    size_t end = p && s < n ? sy__mcp_skip(p, n, s) : 0;
    if (!end || sy__mcp_ws(p, n, end) != n) {
        *code = -32700;
        set_err(err, errlen, "Parse error: the body is not one valid JSON value");
        return -1;
    }
    if (max == 0)
        max = 1;
    size_t count = 1;
    if (p[s] == '[') {
        out->is_batch = 1;
        count = 0;
        size_t i = sy__mcp_ws(p, n, s + 1);
        while (p[i] != ']') {
            i = sy__mcp_ws(p, n, sy__mcp_skip(p, n, i));
            count++;
            if (p[i] == ',')
                i = sy__mcp_ws(p, n, i + 1);
        }
        if (count == 0) {
            *code = -32600;
            set_err(err, errlen, "Invalid Request: an empty batch");
            return -1;
        }
        if (count > max) {
            *code = -32600;
            set_err(err, errlen, "Invalid Request: too many messages in the batch");
            return -1;
        }
    } else if (p[s] != '{') {
        *code = -32600;
        set_err(err, errlen, "Invalid Request: a JSON-RPC message must be a JSON object");
        return -1;
    }
    char *mem = malloc(count * (sizeof(struct sy_mcp_msg) + SY_MCP_MAX_METHOD + 1));
    if (!mem) {
        *code = -32603;
        set_err(err, errlen, "Internal error: out of memory");
        return -1;
    }
    struct sy_mcp_msg *m = (struct sy_mcp_msg *)mem;
    char *mb = mem + count * sizeof(struct sy_mcp_msg);
    if (!out->is_batch) {
        if (parse_msg(p + s, end - s, m, mb, &e) < 0)
            goto bad;
    } else {
        size_t i = sy__mcp_ws(p, n, s + 1), k = 0;
        while (p[i] != ']') {
            size_t ve = sy__mcp_skip(p, n, i);
            if (p[i] != '{') {
                fail(&e, -32600, "a JSON-RPC message must be a JSON object");
                goto bad;
            }
            if (parse_msg(p + i, ve - i, &m[k], mb + k * (SY_MCP_MAX_METHOD + 1), &e) < 0)
                goto bad;
            k++;
            i = sy__mcp_ws(p, n, ve);
            if (p[i] == ',')
                i = sy__mcp_ws(p, n, i + 1);
        }
    }
    out->m = m;
    out->n = count;
    out->mem = mem;
    return 0;
bad:
    free(mem);
    memset(out, 0, sizeof *out);
    *code = e.code;
    if (err && errlen) {
        struct sy_buf b;
        sy_buf_init(&b, errlen - 1);
        sy_buf_puts(&b, e.code == -32603 ? "Internal error: " : "Invalid Request: ");
        sy_buf_puts(&b, e.why);
        if (b.p)
            set_err(err, errlen, b.p);
        else
            set_err(err, errlen, e.why);
        sy_buf_free(&b);
    }
    return -1;
}

void sy_mcp_batch_free(struct sy_mcp_batch *b)
{
    if (!b)
        return;
    free(b->mem);
    memset(b, 0, sizeof *b);
}

/* ---- writers ---- */

void sy_mcp_rpc_result(struct sy_buf *b, const char *id, size_t id_len, const char *result, size_t n)
{
    SY_BUF_LIT(b, "{\"jsonrpc\":\"2.0\",\"id\":");
    if (id && id_len)
        sy_buf_append(b, id, id_len);
    else
        SY_BUF_LIT(b, "null");
    SY_BUF_LIT(b, ",\"result\":");
    if (result && n)
        sy_buf_append(b, result, n);
    else
        SY_BUF_LIT(b, "{}");
    SY_BUF_LIT(b, "}");
}

void sy_mcp_rpc_error(struct sy_buf *b, const char *id, size_t id_len, int code, const char *msg)
{
    SY_BUF_LIT(b, "{\"jsonrpc\":\"2.0\",\"id\":");
    if (id && id_len)
        sy_buf_append(b, id, id_len);
    else
        SY_BUF_LIT(b, "null");
    sy_buf_printf(b, ",\"error\":{\"code\":%d,\"message\":\"", code);
    if (msg)
        sy_utf8_json_escape(b, msg, strlen(msg));
    SY_BUF_LIT(b, "\"}}");
}

const char *sy_mcp_member(const char *p, size_t n, const char *name, size_t *len)
{
    struct sy__mcp_it it;
    const char *found = NULL;
    size_t fl = 0, nl = name ? strlen(name) : 0;
    if (len)
        *len = 0;
    if (!name || sy__mcp_it_init(&it, p, n) < 0)
        return NULL;
    int rc;
    while ((rc = sy__mcp_it_next(&it)) > 0)
        if (sy__mcp_str_eq(it.k, it.klen, it.kesc, name, nl)) {
            found = it.v;
            fl = it.vlen;
        }
    if (rc < 0)
        return NULL;
    if (len)
        *len = fl;
    return found;
}

const char *sy_mcp_negotiate(const char *v, size_t len)
{
    if (v)
        for (int i = 0; sy_mcp_versions[i]; i++)
            if (strlen(sy_mcp_versions[i]) == len && memcmp(sy_mcp_versions[i], v, len) == 0)
                return sy_mcp_versions[i];
    return sy_mcp_versions[0];
}
