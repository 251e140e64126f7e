/* secrets.c - the hide_secrets guardrail kind: API keys, tokens, private keys
 * and passwords found in the texts and replaced by "[REDACTED]", as LiteLLM's
 * enterprise secret detection (_ENTERPRISE_SecretDetection, detect-secrets'
 * plugins) does in the request; or the call refused (`action: block`).
 *
 * Detectors, each under its detect-secrets plugin name (the names a
 * `detect_secrets_config: {plugins_used: [{name: ...}]}` selects; names we do
 * not have are ignored):
 *   prefixed tokens  a literal prefix at a word boundary, then a run of the
 *                    family's characters of the family's length: AWS key ids
 *                    (AKIA/ASIA/ABIA/ACCA + 16), GitHub (ghp_ gho_ ghu_ ghs_
 *                    ghr_, github_pat_), OpenAI (sk-...T3BlbkFJ..., sk-proj-,
 *                    sk-svcacct-, sk-admin-, legacy sk- + 48), Anthropic
 *                    (sk-ant-), Slack (xox[abposr]-, hooks.slack.com
 *                    webhooks), Stripe (sk_/rk_ live/test), Google (AIza + 35),
 *                    Azure storage (AccountKey= + 88), npm, SendGrid, Hugging
 *                    Face, GitLab, DigitalOcean, Databricks, PyPI, age,
 *                    Shopify, Square, Twilio, Groq. A first-byte table picks
 *                    the candidates; the run length of each character class
 *                    is cached, so overlapping prefixes stay linear.
 *   JSON Web Tokens  eyJ<header>.<payload starting 'e'>[.<signature>].
 *   Private keys     -----BEGIN ... PRIVATE KEY----- through its END line
 *                    (detect-secrets reports the BEGIN line only, so LiteLLM
 *                    leaves the key body in the prompt; we redact the block).
 *   Basic auth       scheme://user:password@host: the password.
 *   AWS secret keys  a 40-character [A-Za-z0-9/+] run with "aws" in the 64
 *                    bytes before it on its line.
 *   Secret keyword   an identifier holding password, passwd, pwd, secret,
 *                    api_key, auth_key, private_key, client_secret,
 *                    access_token, ... followed by =, :=, =>, or : and a value:
 *                    quoted (4+ characters), unquoted after '=' (4+), unquoted
 *                    after ':' (6+, with a digit or a symbol, so prose such as
 *                    "Secret: tomorrow" passes). Templated values (${..},
 *                    {{..}}, <..>) and masks (****) are not secrets.
 *   High entropy     a quoted string of base64 characters, 20+ long, whose
 *                    Shannon entropy exceeds 4.5 bits (detect-secrets' default
 *                    limit), or 3.5 with a key-like word (key, secret, token,
 *                    password, auth, credential) in the 48 bytes before it;
 *                    quoted hex, 16+ long, above 3.0 bits only in such a
 *                    context. LiteLLM lowers the base64 limit to 3.0, which
 *                    redacts any quoted word of nine different letters; we do
 *                    not.
 * As LiteLLM replaces every occurrence of a secret's value in the text, so do
 * we (values of 6 characters or more, 32 distinct values a text).
 * Cost: one pass; every attempt reads a bounded window or a run no other
 * attempt reads again.
 */
#include <json-c/json.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "guardrails/guardrail.h"

/* character classes */
enum { CS_ALNUM, CS_UALNUM, CS_B64URL, CS_WORD, CS_HEX, CS_B64, CS_SLACK, CS_HOOK, CS_N };

static int in_cs_slow(int cs, unsigned char c)
{
    int d = c >= '0' && c <= '9', lo = c >= 'a' && c <= 'z', up = c >= 'A' && c <= 'Z';
    switch (cs) {
    case CS_ALNUM: return d || lo || up;
    case CS_UALNUM: return d || up;
    case CS_B64URL: return d || lo || up || c == '_' || c == '-';
    case CS_WORD: return d || lo || up || c == '_';
    case CS_HEX: return d || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    case CS_B64: return d || lo || up || c == '+' || c == '/' || c == '=';
    case CS_SLACK: return d || lo || up || c == '-';
    case CS_HOOK: return d || lo || up || c == '_' || c == '/';
    }
    return 0;
}

/* The classes of each byte, a bit per class (built once, read-only after). */
static unsigned char cls_tab[256];
static pthread_once_t cls_once = PTHREAD_ONCE_INIT;

/* A word list indexed by first letter (built once with the class table). */
struct wordset {
    const char *const *w;
    unsigned char len[32];
    uint32_t first[256];
};
static struct wordset ctx_set, kw_set, aws_set;
static void wordset_init(struct wordset *ws);

static void cls_init(void)
{
    wordset_init(&ctx_set);
    wordset_init(&kw_set);
    wordset_init(&aws_set);
    for (int c = 0; c < 256; c++)
        for (int k = 0; k < CS_N; k++)
            if (in_cs_slow(k, (unsigned char)c))
                cls_tab[c] |= (unsigned char)(1u << k);
}

static inline int in_cs(int cs, unsigned char c)
{
    return cls_tab[c] >> cs & 1;
}

/* families (a bit each: the plugin selection) */
enum {
    F_AWS,
    F_AWS_SECRET,
    F_GITHUB,
    F_OPENAI,
    F_ANTHROPIC,
    F_SLACK,
    F_STRIPE,
    F_GCP,
    F_AZURE,
    F_NPM,
    F_SENDGRID,
    F_HF,
    F_GITLAB,
    F_DO,
    F_DATABRICKS,
    F_PYPI,
    F_AGE,
    F_SHOPIFY,
    F_SQUARE,
    F_TWILIO,
    F_GROQ,
    F_JWT,
    F_PEM,
    F_BASIC,
    F_KEYWORD,
    F_B64,
    F_HEX,
    F_N
};

static const struct {
    const char *plugin, *type;
} fam[F_N] = {
    [F_AWS] = {"AWSKeyDetector", "AWS Access Key"},
    [F_AWS_SECRET] = {"AWSKeyDetector", "AWS Secret Access Key"},
    [F_GITHUB] = {"GitHubTokenCustomDetector", "GitHub Token"},
    [F_OPENAI] = {"OpenAIApiKeyDetector", "OpenAI API Key"},
    [F_ANTHROPIC] = {"AnthropicApiKeyDetector", "Anthropic API Key"},
    [F_SLACK] = {"SlackDetector", "Slack Token"},
    [F_STRIPE] = {"StripeDetector", "Stripe Access Key"},
    [F_GCP] = {"GCPApiKeyDetector", "GCP API Key"},
    [F_AZURE] = {"AzureStorageKeyDetector", "Azure Storage Account access key"},
    [F_NPM] = {"NpmDetector", "NPM tokens"},
    [F_SENDGRID] = {"SendGridApiTokenDetector", "SendGrid API Token"},
    [F_HF] = {"HuggingFaceDetector", "Hugging Face Access Token"},
    [F_GITLAB] = {"GitLabDetector", "GitLab Token"},
    [F_DO] = {"DigitaloceanDetector", "DigitalOcean Token"},
    [F_DATABRICKS] = {"DatabricksApiTokenDetector", "Databricks API Token"},
    [F_PYPI] = {"PyPiUploadTokenDetector", "PyPI Upload Token"},
    [F_AGE] = {"AgeSecretKeyDetector", "Age Secret Key"},
    [F_SHOPIFY] = {"ShopifyDetector", "Shopify Token"},
    [F_SQUARE] = {"SquareOAuthDetector", "Square OAuth Secret"},
    [F_TWILIO] = {"TwilioKeyDetector", "Twilio API Key"},
    [F_GROQ] = {"GroqApiKeyDetector", "Groq API Key"},
    [F_JWT] = {"JwtTokenDetector", "JSON Web Token"},
    [F_PEM] = {"PrivateKeyDetector", "Private Key"},
    [F_BASIC] = {"BasicAuthDetector", "Basic Auth Credentials"},
    [F_KEYWORD] = {"KeywordDetector", "Secret Keyword"},
    [F_B64] = {"Base64HighEntropyString", "Base64 High Entropy String"},
    [F_HEX] = {"HexHighEntropyString", "Hex High Entropy String"},
};

/* prefixed tokens: the secret is prefix + run (or the run only: value_only) */
static const struct pfx {
    const char *prefix;
    unsigned char len, fam, cs, value_only;
    unsigned short min, max;
} pfx[] = {
    {"AKIA", 4, F_AWS, CS_UALNUM, 0, 16, 16},
    {"ASIA", 4, F_AWS, CS_UALNUM, 0, 16, 16},
    {"ABIA", 4, F_AWS, CS_UALNUM, 0, 16, 16},
    {"ACCA", 4, F_AWS, CS_UALNUM, 0, 16, 16},
    {"ghp_", 4, F_GITHUB, CS_ALNUM, 0, 36, 255},
    {"gho_", 4, F_GITHUB, CS_ALNUM, 0, 36, 255},
    {"ghu_", 4, F_GITHUB, CS_ALNUM, 0, 36, 255},
    {"ghs_", 4, F_GITHUB, CS_ALNUM, 0, 36, 255},
    {"ghr_", 4, F_GITHUB, CS_ALNUM, 0, 36, 255},
    {"github_pat_", 11, F_GITHUB, CS_WORD, 0, 22, 255},
    {"sk-ant-", 7, F_ANTHROPIC, CS_B64URL, 0, 32, 300},
    {"sk-", 3, F_OPENAI, CS_B64URL, 0, 20, 300}, /* checked further: openai_ok */
    {"xoxa-", 5, F_SLACK, CS_SLACK, 0, 10, 255},
    {"xoxb-", 5, F_SLACK, CS_SLACK, 0, 10, 255},
    {"xoxp-", 5, F_SLACK, CS_SLACK, 0, 10, 255},
    {"xoxo-", 5, F_SLACK, CS_SLACK, 0, 10, 255},
    {"xoxs-", 5, F_SLACK, CS_SLACK, 0, 10, 255},
    {"xoxr-", 5, F_SLACK, CS_SLACK, 0, 10, 255},
    {"https://hooks.slack.com/services/", 33, F_SLACK, CS_HOOK, 0, 20, 255},
    {"sk_live_", 8, F_STRIPE, CS_ALNUM, 0, 24, 255},
    {"rk_live_", 8, F_STRIPE, CS_ALNUM, 0, 24, 255},
    {"sk_test_", 8, F_STRIPE, CS_ALNUM, 0, 24, 255},
    {"rk_test_", 8, F_STRIPE, CS_ALNUM, 0, 24, 255},
    {"AIza", 4, F_GCP, CS_B64URL, 0, 35, 35},
    {"AccountKey=", 11, F_AZURE, CS_B64, 1, 88, 88},
    {"npm_", 4, F_NPM, CS_ALNUM, 0, 36, 36},
    {"SG.", 3, F_SENDGRID, CS_B64URL, 0, 66, 66}, /* 22 '.' 43: checked further */
    {"hf_", 3, F_HF, CS_ALNUM, 0, 34, 40},
    {"glpat-", 6, F_GITLAB, CS_B64URL, 0, 20, 64},
    {"dop_v1_", 7, F_DO, CS_HEX, 0, 64, 64},
    {"doo_v1_", 7, F_DO, CS_HEX, 0, 64, 64},
    {"dor_v1_", 7, F_DO, CS_HEX, 0, 64, 64},
    {"dapi", 4, F_DATABRICKS, CS_HEX, 0, 32, 32},
    {"pypi-AgEIcHlwaS5vcmc", 20, F_PYPI, CS_B64URL, 0, 50, 300},
    {"AGE-SECRET-KEY-1", 16, F_AGE, CS_UALNUM, 0, 58, 58},
    {"shpat_", 6, F_SHOPIFY, CS_HEX, 0, 32, 32},
    {"shpca_", 6, F_SHOPIFY, CS_HEX, 0, 32, 32},
    {"shppa_", 6, F_SHOPIFY, CS_HEX, 0, 32, 32},
    {"shpss_", 6, F_SHOPIFY, CS_HEX, 0, 32, 32},
    {"sq0csp-", 7, F_SQUARE, CS_B64URL, 0, 43, 43},
    {"SK", 2, F_TWILIO, CS_HEX, 0, 32, 32},
    {"gsk_", 4, F_GROQ, CS_ALNUM, 0, 52, 52},
};
#define NPFX (sizeof pfx / sizeof pfx[0])

struct span {
    size_t off, len;
    int fam;
};

struct found {
    struct span *v;
    size_t n, cap;
    int oom;
    size_t extra; /* other occurrences redacted */
};

static void add(struct found *f, size_t off, size_t len, int fm)
{
    if (!len)
        return;
    if (f->n == f->cap) {
        size_t nc = f->cap ? f->cap * 2 : 8;
        struct span *nv = realloc(f->v, nc * sizeof *nv);
        if (!nv) {
            f->oom = 1;
            return;
        }
        f->v = nv;
        f->cap = nc;
    }
    f->v[f->n++] = (struct span){off, len, fm};
}

static inline int is_alnum(unsigned char c)
{
    return in_cs(CS_ALNUM, c);
}

/* The run of class cs starting at i, cached: positions inside a run already
 * measured reuse its end. */
struct runs {
    size_t start[CS_N], end[CS_N];
    int valid[CS_N];
};

static size_t run_len(struct runs *r, int cs, const char *t, size_t n, size_t i)
{
    if (r->valid[cs] && i >= r->start[cs] && i <= r->end[cs])
        return r->end[cs] - i;
    size_t j = i;
    while (j < n && in_cs(cs, (unsigned char)t[j]))
        j++;
    r->start[cs] = i;
    r->end[cs] = j;
    r->valid[cs] = 1;
    return j - i;
}

static int has_sub(const char *s, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = 0; i + m <= n; i++)
        if (!memcmp(s + i, needle, m))
            return 1;
    return 0;
}

static int openai_ok(const char *tok, size_t n)
{
    /* tok: what follows "sk-" */
    if (n >= 7 && !memcmp(tok, "ant-", 4))
        return 0; /* Anthropic's */
    if (has_sub(tok, n, "T3BlbkFJ"))
        return 1;
    if ((n >= 45 && !memcmp(tok, "proj-", 5)) || (n >= 48 && !memcmp(tok, "svcacct-", 8)) ||
        (n >= 46 && !memcmp(tok, "admin-", 6)))
        return 1;
    if (n == 48) { /* legacy: 48 letters and digits */
        for (size_t i = 0; i < n; i++)
            if (!is_alnum((unsigned char)tok[i]))
                return 0;
        return 1;
    }
    return 0;
}

static void try_prefixes(const unsigned char *cand, size_t ncand, const char *t, size_t n, size_t i, uint32_t fams,
                         struct runs *rc, struct found *f, size_t *next)
{
    for (size_t k = 0; k < ncand; k++) {
        const struct pfx *p = &pfx[cand[k]];
        if (!(fams & (1u << p->fam)))
            continue;
        size_t pl = p->len;
        if (i + pl > n || t[i + 1] != p->prefix[1] || memcmp(t + i, p->prefix, pl))
            continue;
        size_t r = run_len(rc, p->cs, t, n, i + pl);
        if (p->fam == F_SENDGRID) { /* SG.<22>.<43>: the class has no '.', measure both parts */
            size_t a = run_len(rc, CS_B64URL, t, n, i + pl);
            if (a != 22 || i + pl + 22 >= n || t[i + pl + 22] != '.')
                continue;
            size_t b = run_len(rc, CS_B64URL, t, n, i + pl + 23);
            if (b != 43)
                continue;
            r = 66;
        } else if (r < p->min || r > p->max) {
            continue;
        }
        if (p->fam == F_OPENAI && !openai_ok(t + i + pl, r))
            continue;
        if (p->fam == F_SLACK && p->prefix[0] == 'x') {
            int digit = 0;
            for (size_t j = 0; j < r; j++)
                digit |= t[i + pl + j] >= '0' && t[i + pl + j] <= '9';
            if (!digit)
                continue;
        }
        if (p->value_only)
            add(f, i + pl, r, p->fam);
        else
            add(f, i, pl + r, p->fam);
        *next = i + pl + r;
        return;
    }
}

static int b64url(unsigned char c)
{
    return in_cs(CS_B64URL, c);
}

static size_t try_jwt(const char *t, size_t n, size_t i, struct found *f)
{
    size_t j = i;
    while (j < n && b64url((unsigned char)t[j]) && j - i < 8192)
        j++;
    if (j - i < 10 || j >= n || t[j] != '.')
        return j;
    size_t p = ++j;
    while (j < n && b64url((unsigned char)t[j]) && j - p < 65536)
        j++;
    if (j - p < 2 || t[p] != 'e')
        return j;
    if (j < n && t[j] == '.') {
        size_t s = j + 1, k = s;
        while (k < n && b64url((unsigned char)t[k]) && k - s < 8192)
            k++;
        j = k;
    }
    add(f, i, j - i, F_JWT);
    return j;
}

static size_t try_pem(const char *t, size_t n, size_t i, struct found *f)
{
    /* "-----BEGIN <label>-----" */
    size_t s = i + 11, j = s;
    while (j < n && j - s < 64 && t[j] != '-' && t[j] != '\n')
        j++;
    if (j + 5 > n || memcmp(t + j, "-----", 5))
        return i + 1;
    size_t ll = j - s;
    const char *label = t + s;
    if (!(ll >= 11 && (!memcmp(label + ll - 11, "PRIVATE KEY", 11) ||
                       (ll >= 17 && !memcmp(label + ll - 17, "PRIVATE KEY BLOCK", 17)))))
        return i + 1;
    size_t body = j + 5, lim = n - body < 16384 ? n : body + 16384;
    size_t e = body;
    for (size_t k = body; k + 9 + ll + 5 <= lim; k++) /* "-----END <label>-----" */
        if (t[k] == '-' && !memcmp(t + k, "-----END ", 9) && !memcmp(t + k + 9, label, ll) &&
            !memcmp(t + k + 9 + ll, "-----", 5)) {
            e = k + 9 + ll + 5;
            break;
        }
    if (e == body) { /* no END: the base64 body that follows */
        while (e < lim && (in_cs(CS_B64, (unsigned char)t[e]) || t[e] == '\n' || t[e] == '\r' || t[e] == ' ' ||
                           t[e] == ':' || t[e] == '-' || t[e] == '\\'))
            e++;
    }
    add(f, i, e - i, F_PEM);
    return e;
}

static size_t try_basic(const char *t, size_t n, size_t i, struct found *f)
{
    size_t s = i + 3, j = s, colon = 0;
    while (j < n && j - s < 256) {
        unsigned char c = (unsigned char)t[j];
        if (c == '@' || c == '/' || c == '?' || c == '#' || c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
            c == '"' || c == '\'' || c == '<' || c == '>' || c == '{' || c == '}')
            break;
        if (c == ':' && !colon)
            colon = j;
        j++;
    }
    if (j >= n || t[j] != '@' || !colon || colon == s || j == colon + 1 || t[colon + 1] == '$')
        return i + 3;
    add(f, colon + 1, j - colon - 1, F_BASIC);
    return j;
}

static double entropy(const char *s, size_t n)
{
    unsigned cnt[256] = {0};
    for (size_t i = 0; i < n; i++)
        cnt[(unsigned char)s[i]]++;
    double h = 0;
    for (int c = 0; c < 256; c++)
        if (cnt[c]) {
            double p = (double)cnt[c] / (double)n;
            h -= p * log2(p);
        }
    return h;
}

static const char *const context_words[] = {"key", "secret", "token",      "password", "passwd",
                                            "pwd", "auth",   "credential", NULL};
static const char *const keyword_terms[] = {
    "password",     "passwd",     "pwd",           "secret",        "api_key",      "apikey",       "api-key",
    "auth_key",     "authkey",    "service_key",   "account_key",   "db_key",       "database_key", "priv_key",
    "private_key",  "client_key", "db_pass",       "database_pass", "key_pass",     "access_key",   "accesskey",
    "access_token", "auth_token", "refresh_token", "api_token",     "bearer_token", "contrasena",   NULL};
static const char *const aws_words[] = {"aws", NULL};
static struct wordset ctx_set = {.w = context_words}, kw_set = {.w = keyword_terms}, aws_set = {.w = aws_words};

static void wordset_init(struct wordset *ws)
{
    for (size_t k = 0; ws->w[k] && k < 32; k++) {
        ws->len[k] = (unsigned char)strlen(ws->w[k]);
        ws->first[(unsigned char)ws->w[k][0]] |= 1u << k;
    }
}

/* Does s[0..n) (lower-cased; the first 80 bytes) hold a word of ws? */
static int lower_has(const char *s, size_t n, const struct wordset *ws)
{
    char low[80];
    if (n > sizeof low)
        n = sizeof low;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] | 0x20 : s[i]);
    for (size_t i = 0; i < n; i++)
        for (uint32_t m = ws->first[(unsigned char)low[i]]; m; m &= m - 1) {
            int k = __builtin_ctz(m);
            if (ws->len[k] <= n - i && !memcmp(low + i, ws->w[k], ws->len[k]))
                return 1;
        }
    return 0;
}

/* The line's text in the window of w bytes before i. */
static size_t line_back(const char *t, size_t i, size_t w)
{
    size_t s = i;
    while (s > 0 && i - s < w && t[s - 1] != '\n')
        s--;
    return s;
}

static size_t try_quoted(const char *t, size_t n, size_t i, uint32_t fams, struct found *f)
{
    char q = t[i];
    size_t s = i + 1, j = s;
    int hex = 1;
    while (j < n && j - s <= 1000 && in_cs(CS_B64URL, (unsigned char)t[j]) | in_cs(CS_B64, (unsigned char)t[j])) {
        hex &= in_cs(CS_HEX, (unsigned char)t[j]);
        j++;
    }
    size_t len = j - s;
    if (j >= n || t[j] != q || len < 16 || len > 1000)
        return j > i + 1 ? j : i + 1;
    size_t b = line_back(t, i, 48);
    int ctx = lower_has(t + b, i - b, &ctx_set);
    if (hex && (fams & (1u << F_HEX)) && ctx) {
        double h = entropy(t + s, len);
        int digits = 1;
        for (size_t k = s; k < j; k++)
            digits &= t[k] >= '0' && t[k] <= '9';
        if (digits)
            h -= 1.2 / log2((double)len);
        if (h > 3.0) {
            add(f, s, len, F_HEX);
            return j + 1;
        }
    }
    if (!hex && len >= 20 && (fams & (1u << F_B64))) {
        double h = entropy(t + s, len);
        if (h > 4.5 || (ctx && h > 3.5)) {
            add(f, s, len, F_B64);
            return j + 1;
        }
    }
    return j + 1;
}

static int ident_char(unsigned char c)
{
    return is_alnum(c) || c == '_' || c == '-' || c == '.';
}

static size_t try_keyword(const char *t, size_t n, size_t i, struct found *f)
{
    size_t j = i;
    while (j < n && ident_char((unsigned char)t[j]) && j - i < 64)
        j++;
    size_t idl = j - i;
    if (j < n && ident_char((unsigned char)t[j]))
        return j; /* too long to be a name */
    if (idl < 3 || !lower_has(t + i, idl, &kw_set))
        return j;
    size_t k = j;
    if (k < n && (t[k] == '"' || t[k] == '\''))
        k++;
    while (k < n && (t[k] == ' ' || t[k] == '\t'))
        k++;
    int colon = 0;
    if (k + 1 < n && t[k] == ':' && t[k + 1] == '=')
        k += 2;
    else if (k + 1 < n && t[k] == '=' && t[k + 1] == '>')
        k += 2;
    else if (k < n && t[k] == '=' && !(k + 1 < n && t[k + 1] == '='))
        k++;
    else if (k < n && t[k] == ':' && !(k + 1 < n && t[k + 1] == ':')) {
        k++;
        colon = 1;
    } else
        return j;
    while (k < n && (t[k] == ' ' || t[k] == '\t'))
        k++;
    if (k >= n)
        return j;
    size_t vs, ve;
    int quoted = t[k] == '"' || t[k] == '\'' || t[k] == '`';
    if (quoted) {
        char q = t[k];
        vs = k + 1;
        ve = vs;
        while (ve < n && t[ve] != q && t[ve] != '\n' && ve - vs < 256)
            ve++;
        if (ve >= n || t[ve] != q)
            return j;
    } else {
        vs = k;
        ve = vs;
        while (ve < n && ve - vs < 256) {
            unsigned char c = (unsigned char)t[ve];
            if (c <= ' ' || c == '"' || c == '\'' || c == '`' || c == ',' || c == ';' || c == ')' || c == '}' ||
                c == ']' || c == '&' || c == '<')
                break;
            ve++;
        }
        while (ve > vs && (t[ve - 1] == '.' || t[ve - 1] == ':'))
            ve--;
    }
    size_t vl = ve - vs;
    if (vl < 4 || (!quoted && colon && vl < 6))
        return j;
    const char *v = t + vs;
    if (v[0] == '$' || v[0] == '{' || v[0] == '<' || v[0] == '%' || v[0] == '(' || v[0] == '[')
        return j; /* templated or a reference */
    int same = 1, alnum = 0, digit_or_sym = 0;
    for (size_t x = 0; x < vl; x++) {
        unsigned char c = (unsigned char)v[x];
        same &= c == (unsigned char)v[0];
        alnum |= is_alnum(c);
        digit_or_sym |= !((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
    }
    if (same || !alnum || (!quoted && colon && !digit_or_sym))
        return j;
    if (vl == 10 && !memcmp(v, "[REDACTED]", 10))
        return j;
    static const char *const not_secret[] = {"null", "none", "true", "false", "undefined", "nil", "redacted", NULL};
    for (size_t w = 0; not_secret[w]; w++)
        if (strlen(not_secret[w]) == vl && !strncasecmp(v, not_secret[w], vl))
            return j;
    add(f, vs, vl, F_KEYWORD);
    return quoted ? ve + 1 : ve;
}

static void try_aws_secret(const char *t, size_t n, size_t i, size_t r, struct found *f)
{
    if (r != 40)
        return;
    int up = 0, lo = 0, dg = 0;
    for (size_t k = i; k < i + 40; k++) {
        unsigned char c = (unsigned char)t[k];
        up |= c >= 'A' && c <= 'Z';
        lo |= c >= 'a' && c <= 'z';
        dg |= c >= '0' && c <= '9';
    }
    if (!(up && lo && dg))
        return;
    size_t b = line_back(t, i, 64);
    if (lower_has(t + b, i - b, &aws_set))
        add(f, i, 40, F_AWS_SECRET);
    (void)n;
}

struct cfg {
    uint32_t fams;
    int block;
    unsigned char cand[256][16]; /* by first byte: the prefixed families that may start there */
    unsigned char ncand[256];
};

static int span_cmp(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->len > y->len ? -1 : x->len < y->len;
}

/* Every secret of c's families in t[0..n) into f (unsorted, may overlap). */
static void scan(const struct cfg *cf, const char *t, size_t n, struct found *f)
{
    uint32_t fams = cf->fams;
    struct runs rc = {0};
    size_t next_pfx = 0, next_kw = 0, next_q = 0, next_aws = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t[i];
        unsigned char prev = i ? (unsigned char)t[i - 1] : ' ';
        int boundary = !is_alnum(prev);
        if (i >= next_pfx && boundary && cf->ncand[c]) {
            size_t nx = 0;
            try_prefixes(cf->cand[c], cf->ncand[c], t, n, i, fams, &rc, f, &nx);
            if (nx > i)
                next_pfx = nx;
        }
        if (c == 'e' && boundary && (fams & (1u << F_JWT)) && i + 3 < n && t[i + 1] == 'y' && t[i + 2] == 'J' &&
            i >= next_pfx) {
            size_t e = try_jwt(t, n, i, f);
            if (e > i)
                next_pfx = e;
        }
        if (c == '-' && (fams & (1u << F_PEM)) && i + 11 <= n && !memcmp(t + i, "-----BEGIN ", 11)) {
            size_t e = try_pem(t, n, i, f);
            if (e > i + 1) {
                i = e - 1;
                continue;
            }
        }
        if (c == ':' && (fams & (1u << F_BASIC)) && i + 3 <= n && t[i + 1] == '/' && t[i + 2] == '/')
            try_basic(t, n, i, f);
        if ((c == '"' || c == '\'' || c == '`') && i >= next_q && (fams & ((1u << F_B64) | (1u << F_HEX))))
            next_q = try_quoted(t, n, i, fams, f);
        if (i >= next_kw && (fams & (1u << F_KEYWORD)) && ident_char(c) && !ident_char(prev))
            next_kw = try_keyword(t, n, i, f);
        if (i >= next_aws && (fams & (1u << F_AWS_SECRET)) && in_cs(CS_B64, c) && !in_cs(CS_B64, prev)) {
            size_t r = run_len(&rc, CS_B64, t, n, i);
            try_aws_secret(t, n, i, r, f);
            next_aws = i + r;
        }
    }
}

/* The text with every span replaced by "[REDACTED]", then every other
 * occurrence of a found value (6+ characters, 32 distinct a text) in one more
 * pass (sy_gunmask with value -> "[REDACTED]" pairs). */
static char *redact(const char *t, size_t n, struct found *f)
{
    qsort(f->v, f->n, sizeof *f->v, span_cmp);
    struct sy_buf b;
    sy_buf_init(&b, (size_t)1 << 31);
    struct sy_gpair pairs[32];
    size_t np = 0, done = 0;
    for (size_t k = 0; k < f->n; k++) {
        size_t s = f->v[k].off, e = s + f->v[k].len;
        if (f->v[k].len >= 6 && np < 32) {
            int seen = 0;
            for (size_t q = 0; q < np && !seen; q++)
                seen = strlen(pairs[q].placeholder) == f->v[k].len && !memcmp(pairs[q].placeholder, t + s, f->v[k].len);
            if (!seen && (pairs[np].placeholder = strndup(t + s, f->v[k].len)) != NULL)
                pairs[np++].original = "[REDACTED]";
        }
        if (e <= done)
            continue;
        if (s < done)
            s = done; /* overlapping spans: one [REDACTED] for their union */
        else {
            sy_buf_append(&b, t + done, s - done);
            sy_buf_puts(&b, "[REDACTED]");
        }
        done = e;
    }
    sy_buf_append(&b, t + done, n - done);
    char *out = NULL;
    if (!sy_buf_failed(&b)) {
        struct sy_buf c;
        sy_buf_init(&c, (size_t)1 << 31);
        size_t more = sy_gunmask(pairs, np, b.p ? b.p : "", b.len, &c);
        f->extra = more;
        if (!sy_buf_failed(&c))
            out = c.p ? c.p : strdup("");
        else
            sy_buf_free(&c);
    }
    sy_buf_free(&b);
    for (size_t q = 0; q < np; q++)
        free(pairs[q].placeholder);
    return out;
}

static int secrets_open(struct sy_guard *g, struct json_object *params, const struct sy_genv *env, char *err,
                        size_t errlen)
{
    (void)env;
    struct cfg *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    pthread_once(&cls_once, cls_init);
    c->fams = (1u << F_N) - 1;
    for (size_t i = 0; i < NPFX; i++) {
        unsigned char b = (unsigned char)pfx[i].prefix[0];
        c->cand[b][c->ncand[b]++] = (unsigned char)i;
    }
    json_object *v, *pl;
    if (params && json_object_object_get_ex(params, "action", &v) && v) {
        const char *a = json_object_get_string(v);
        if (a && !strcasecmp(a, "block"))
            c->block = 1;
        else if (!a || strcasecmp(a, "mask")) {
            snprintf(err, errlen, "action must be mask or block");
            free(c);
            return -1;
        }
    }
    if (params && json_object_object_get_ex(params, "detect_secrets_config", &v) && v &&
        json_object_is_type(v, json_type_object) && json_object_object_get_ex(v, "plugins_used", &pl) && pl &&
        json_object_is_type(pl, json_type_array)) {
        c->fams = 0;
        for (size_t i = 0; i < json_object_array_length(pl); i++) {
            json_object *it = json_object_array_get_idx(pl, i), *nm;
            if (!it || !json_object_object_get_ex(it, "name", &nm) || !nm)
                continue;
            const char *name = json_object_get_string(nm);
            for (int k = 0; k < F_N; k++)
                if (name && !strcmp(fam[k].plugin, name))
                    c->fams |= 1u << k;
        }
    }
    g->impl = c;
    return 0;
}

static void secrets_close(struct sy_guard *g)
{
    free(g->impl);
    g->impl = NULL;
}

static void secrets_check(const struct sy_guard *g, const struct sy_ginput *in, struct sy_gresult *r)
{
    const struct cfg *c = g->impl;
    r->verdict = SY_GV_PASS;
    if (!c || !c->fams)
        return;
    uint32_t types = 0;
    unsigned masked = 0;
    for (size_t i = 0; i < in->nseg; i++) {
        const struct sy_gseg *sg = &in->seg[i];
        if (!sg->text || !sg->len)
            continue;
        struct found f = {0};
        scan(c, sg->text, sg->len, &f);
        if (f.oom) {
            free(f.v);
            sy_gresult_error(r, "hide_secrets: out of memory");
            return;
        }
        if (!f.n) {
            free(f.v);
            continue;
        }
        for (size_t k = 0; k < f.n; k++)
            types |= 1u << f.v[k].fam;
        if (c->block) {
            free(f.v);
            continue;
        }
        char *out = redact(sg->text, sg->len, &f);
        masked += (unsigned)(f.n + f.extra);
        free(f.v);
        if (!out || sy_gresult_repl(r, in->nseg) < 0) {
            free(out);
            sy_gresult_error(r, "hide_secrets: out of memory");
            return;
        }
        if (sg->raw_len)
            r->repl[i] = out;
        else
            free(out);
    }
    if (!types)
        return;
    struct sy_buf d, names;
    sy_buf_init(&d, 1 << 14);
    sy_buf_init(&names, 1 << 14);
    sy_buf_puts(&d, "{\"detected_secrets\":[");
    int first = 1;
    for (int k = 0; k < F_N; k++)
        if (types & (1u << k)) {
            sy_buf_printf(&d, "%s\"%s\"", first ? "" : ",", fam[k].type);
            sy_buf_printf(&names, "%s%s", first ? "" : ", ", fam[k].type);
            first = 0;
        }
    sy_buf_puts(&d, "]}");
    if (c->block)
        sy_gresult_block(r, 400, "Secret detected: %s by Guardrail: %s. Secrets are not allowed in this request.",
                         names.p ? names.p : "", g->name ? g->name : "None");
    else {
        r->verdict = SY_GV_MASKED;
        r->masked = masked;
    }
    if (!sy_buf_failed(&d)) {
        r->detail = d.p;
        d.p = NULL;
    }
    sy_buf_free(&d);
    sy_buf_free(&names);
}

const struct sy_guard_ops sy_guard_hide_secrets = {
    .name = "hide_secrets",
    .modes = SY_GM_PRE | SY_GM_DURING | SY_GM_POST | SY_GM_LOGGING_ONLY,
    .open = secrets_open,
    .close = secrets_close,
    .check = secrets_check,
};
