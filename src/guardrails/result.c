/* result.c - a kind's verdict (struct sy_gresult) and HTTP request (struct
 * sy_ghttp): building and freeing them (guardrail.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guardrails/guardrail.h"

void sy_gresult_free(struct sy_gresult *r)
{
    if (!r)
        return;
    free(r->message);
    free(r->detail);
    for (size_t i = 0; r->repl && i < r->nrepl; i++)
        free(r->repl[i]);
    free(r->repl);
    free(r->body);
    for (size_t i = 0; i < r->npairs; i++) {
        free(r->pairs[i].placeholder);
        free(r->pairs[i].original);
    }
    free(r->pairs);
    memset(r, 0, sizeof *r);
}

int sy_gresult_repl(struct sy_gresult *r, size_t n)
{
    if (r->repl)
        return r->nrepl >= n ? 0 : -1;
    r->repl = calloc(n ? n : 1, sizeof *r->repl);
    if (!r->repl)
        return -1;
    r->nrepl = n;
    return 0;
}

static char *vfmt(const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    return s;
}

void sy_gresult_block(struct sy_gresult *r, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    free(r->message);
    r->message = vfmt(fmt, ap);
    va_end(ap);
    r->verdict = SY_GV_BLOCK;
    r->status = status ? status : 400;
}

void sy_gresult_error(struct sy_gresult *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    free(r->message);
    r->message = vfmt(fmt, ap);
    va_end(ap);
    r->verdict = SY_GV_ERROR;
}

int sy_gresult_pair(struct sy_gresult *r, const char *placeholder, const char *original, size_t olen)
{
    struct sy_gpair *np = realloc(r->pairs, (r->npairs + 1) * sizeof *np);
    if (!np)
        return -1;
    r->pairs = np;
    char *ph = strdup(placeholder), *o = strndup(original, olen);
    if (!ph || !o) {
        free(ph);
        free(o);
        return -1;
    }
    r->pairs[r->npairs].placeholder = ph;
    r->pairs[r->npairs].original = o;
    r->npairs++;
    return 0;
}

void sy_ghttp_free(struct sy_ghttp *h)
{
    if (!h)
        return;
    free(h->url);
    h->url = NULL;
    sy_buf_free(&h->headers);
    sy_buf_free(&h->body);
}
