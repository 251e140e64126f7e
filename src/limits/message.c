/* message.c - what the limiter tells the client: the x-ratelimit-* headers
 * of a taken request and the 429 of a refused one, in LiteLLM's words
 * (parallel_request_limiter_v3: _handle_rate_limit_error and
 * async_post_call_success_hook).
 *
 * 429 (one descriptor over its limit):
 *
 *   detail:  Rate limit exceeded for <kind>: <value>. Limit type: <type>.
 *            Current limit: <limit>, Remaining: <remaining>. Limit resets at:
 *            <YYYY-mm-dd HH:MM:SS> UTC
 *   headers: retry-after: <s to the window's end, >= 1; 1 for max_parallel_requests>
 *            rate_limit_type: <type>
 *            reset_at: <the window's end, as in the detail>
 *            x-ratelimit-remaining-<type>: 0
 *            x-ratelimit-limit-<type>: <limit>
 *
 * Taken request:
 *
 *   x-ratelimit-remaining-requests / x-ratelimit-limit-requests   (the descriptor with the fewest left)
 *   x-ratelimit-remaining-tokens / x-ratelimit-limit-tokens
 *   x-ratelimit-<kind>-remaining-requests / -limit-requests       (per descriptor with rpm)
 *   x-ratelimit-<kind>-remaining-tokens / -limit-tokens           (per descriptor with tpm)
 *
 * (LiteLLM's window starts at a descriptor's first request and its reset_at
 * is now + 60 s; ours is the end of the aligned minute, which is when the
 * counts really reset.)
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "limits/limits.h"

/* "<a><mid><tail>: <v>\r\n" without printf: every response with limits
 * carries a few of these lines (the hot path). Negative values print as 0. */
static void hline(struct sy_buf *b, const char *a, size_t al, const char *mid, const char *tail, size_t tl, int64_t v)
{
    sy_buf_append(b, a, al);
    if (mid)
        sy_buf_append(b, mid, strlen(mid));
    sy_buf_append(b, tail, tl);
    sy_buf_u64(b, v > 0 ? (uint64_t)v : 0);
    SY_BUF_LIT(b, "\r\n");
}
#define HL(b, a, mid, tail, v) hline((b), a, sizeof(a) - 1, (mid), tail ": ", sizeof(tail ": ") - 1, (v))

void sy_lim_headers(const struct sy_lim_req *lr, struct sy_buf *b)
{
    unsigned n = lr->n < SY_LIM_MAX ? lr->n : SY_LIM_MAX;
    int br = -1, bt = -1;
    for (unsigned i = 0; i < n; i++) {
        const struct sy_lim_desc *d = &lr->d[i];
        if (d->rpm >= 0 && (br < 0 || lr->rem_req[i] < lr->rem_req[br]))
            br = (int)i;
        if (d->tpm >= 0 && (bt < 0 || lr->rem_tok[i] < lr->rem_tok[bt]))
            bt = (int)i;
    }
    if (br >= 0) {
        HL(b, "x-ratelimit-remaining-requests", NULL, "", lr->rem_req[br]);
        HL(b, "x-ratelimit-limit-requests", NULL, "", lr->d[br].rpm);
    }
    if (bt >= 0) {
        HL(b, "x-ratelimit-remaining-tokens", NULL, "", lr->rem_tok[bt]);
        HL(b, "x-ratelimit-limit-tokens", NULL, "", lr->d[bt].tpm);
    }
    for (unsigned i = 0; i < n; i++) {
        const struct sy_lim_desc *d = &lr->d[i];
        const char *k = sy_lim_kind_names[d->kind];
        if (d->rpm >= 0) {
            HL(b, "x-ratelimit-", k, "-remaining-requests", lr->rem_req[i]);
            HL(b, "x-ratelimit-", k, "-limit-requests", d->rpm);
        }
        if (d->tpm >= 0) {
            HL(b, "x-ratelimit-", k, "-remaining-tokens", lr->rem_tok[i]);
            HL(b, "x-ratelimit-", k, "-limit-tokens", d->tpm);
        }
        if (d->kind == SY_LIM_API_KEY) { /* LiteLLM's get_custom_headers: the key's own limits */
            if (d->tpm >= 0)
                HL(b, "x-litellm-key-tpm-limit", NULL, "", d->tpm);
            if (d->rpm >= 0)
                HL(b, "x-litellm-key-rpm-limit", NULL, "", d->rpm);
        }
    }
}

void sy_lim_error(const struct sy_lim_req *lr, double now_unix, char *msg, size_t msgcap, char *hdrs, size_t hcap)
{
    const struct sy_lim_desc *d = lr->over >= 0 && (unsigned)lr->over < lr->n ? &lr->d[lr->over] : NULL;
    const char *kind = d ? sy_lim_kind_names[d->kind] : "unknown";
    const char *value = d ? d->value : "unknown";
    const char *type = lr->over_type ? lr->over_type : "requests";
    int64_t end = ((int64_t)floor(now_unix / SY_LIM_WINDOW_S) + 1) * SY_LIM_WINDOW_S;
    int64_t retry = strcmp(type, "max_parallel_requests") == 0 ? 1 : (int64_t)ceil((double)end - now_unix);
    if (retry < 1)
        retry = 1;
    char reset[40];
    time_t te = (time_t)end;
    struct tm tm;
    if (gmtime_r(&te, &tm))
        strftime(reset, sizeof reset, "%Y-%m-%d %H:%M:%S UTC", &tm);
    else
        snprintf(reset, sizeof reset, "%" PRId64, end);
    int64_t remaining = 0; /* refused: 0, as LiteLLM's message and the x-ratelimit-remaining-* header say */
    if (msg && msgcap)
        snprintf(msg, msgcap,
                 "Rate limit exceeded for %s: %s. Limit type: %s. Current limit: %" PRId64 ", Remaining: %" PRId64
                 ". Limit resets at: %s",
                 kind, value, type, lr->over_limit, remaining, reset);
    if (hdrs && hcap) {
        int w = snprintf(hdrs, hcap,
                         "retry-after: %" PRId64 "\r\nrate_limit_type: %s\r\nreset_at: %s\r\n"
                         "x-ratelimit-remaining-%s: 0\r\nx-ratelimit-limit-%s: %" PRId64 "\r\n",
                         retry, type, reset, type, type, lr->over_limit);
        if (w < 0 || (size_t)w >= hcap)
            hdrs[0] = 0; /* never a cut header line */
    }
}
