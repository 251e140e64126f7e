/* cost.c - what one call costs, from its usage and the deployment's prices.
 *
 * Matches LiteLLM's litellm_core_utils/llm_cost_calc/utils.py::generic_cost_per_token
 * for text tokens:
 *
 *   rates     = the tier rates when prompt_tokens > tier_threshold (a tier rate the
 *               table does not give falls back to the base rate), else the base rates
 *   text_in   = prompt_tokens - cached_tokens - cache_creation_tokens      (>= 0)
 *   write_5m  = cache_creation_tokens - cache_creation_1h_tokens           (>= 0)
 *   prompt    = text_in * in + cached_tokens * cache_read + write_5m * cache_write
 *               + cache_creation_1h_tokens * cache_write_1h
 *   text_out  = completion_tokens - reasoning_tokens                       (>= 0)
 *   completion= text_out * out + reasoning_tokens * reasoning
 *   cost      = prompt + completion
 *
 * Usage convention (struct sy_usage): prompt_tokens counts EVERY input token,
 * cache reads and cache writes included - OpenAI's prompt_tokens, and what
 * LiteLLM's Anthropic adapter builds (input_tokens + cache_read_input_tokens +
 * cache_creation_input_tokens). An Anthropic caller must add them up before
 * filling prompt_tokens. completion_tokens includes reasoning tokens.
 *
 * Fallbacks for a price the table does not give (< 0):
 *   cache_read, cache_write -> in          (LiteLLM bills them at 0; we do not
 *                                           undercount a model whose table entry
 *                                           lacks them)
 *   cache_write_1h          -> cache_write (cache_creation_input_token_cost_above_1hr
 *                                           absent: the 5-minute write rate)
 *   reasoning               -> out         (as LiteLLM)
 *   in, out                 -> 0
 * Known differences from LiteLLM: no audio/image/video token rates, no service tiers (flex/priority), no regional
 * uplifts, and one price tier (the lowest *_above_<N>_tokens threshold of the entry).
 */
#include "spend/spend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sy_dprice_from(struct sy_dprice *dp, const struct sy_price *p)
{
    dp->in = dp->out = dp->cache_read = dp->cache_write = dp->reasoning = dp->cache_write_1h = -1;
    dp->tier_threshold = 0;
    dp->tier_in = dp->tier_out = dp->tier_cache_read = dp->tier_cache_write = dp->tier_cache_write_1h = -1;
    dp->max_output_tokens = dp->max_input_tokens = 0;
    dp->known = dp->priced = 0;
    if (!p)
        return;
    dp->priced = p->any_cost;
    dp->in = p->input_cost_per_token;
    dp->out = p->output_cost_per_token;
    dp->cache_read = p->cache_read_input_token_cost;
    dp->cache_write = p->cache_creation_input_token_cost;
    dp->reasoning = p->output_cost_per_reasoning_token;
    dp->cache_write_1h = p->cache_creation_input_token_cost_above_1hr;
    dp->tier_cache_write_1h = p->tier_cache_write_1h;
    dp->tier_threshold = p->tier_threshold;
    dp->tier_in = p->tier_input;
    dp->tier_out = p->tier_output;
    dp->tier_cache_read = p->tier_cache_read;
    dp->tier_cache_write = p->tier_cache_write;
    /* max_tokens is the legacy field; LiteLLM's files use it as the output cap */
    dp->max_output_tokens = p->max_output_tokens > 0 ? p->max_output_tokens : p->max_tokens;
    dp->max_input_tokens = p->max_input_tokens;
    dp->known = dp->in >= 0 || dp->out >= 0;
}

/* The rates that apply to a call with `prompt` input tokens, fallbacks resolved. */
struct rates {
    double in, out, cache_read, cache_write, cache_write_1h, reasoning;
};

static void rates(const struct sy_dprice *dp, uint64_t prompt, struct rates *r)
{
    r->in = dp->in >= 0 ? dp->in : 0;
    r->out = dp->out >= 0 ? dp->out : 0;
    double cr = dp->cache_read, cw = dp->cache_write, cw1 = dp->cache_write_1h;
    if (dp->tier_threshold > 0 && prompt > (uint64_t)dp->tier_threshold) {
        if (dp->tier_cache_write_1h >= 0)
            cw1 = dp->tier_cache_write_1h;
        if (dp->tier_in >= 0)
            r->in = dp->tier_in;
        if (dp->tier_out >= 0)
            r->out = dp->tier_out;
        if (dp->tier_cache_read >= 0)
            cr = dp->tier_cache_read;
        if (dp->tier_cache_write >= 0)
            cw = dp->tier_cache_write;
    }
    r->cache_read = cr >= 0 ? cr : r->in;
    r->cache_write = cw >= 0 ? cw : r->in;
    r->cache_write_1h = cw1 >= 0 ? cw1 : r->cache_write;
    r->reasoning = dp->reasoning >= 0 ? dp->reasoning : r->out;
}

double sy_cost(const struct sy_dprice *dp, const struct sy_usage *u)
{
    if (!dp || !u)
        return 0;
    struct rates r;
    rates(dp, u->prompt_tokens, &r);
    uint64_t cached = u->cached_tokens, created = u->cache_creation_tokens;
    uint64_t created_1h = u->cache_creation_1h_tokens < created ? u->cache_creation_1h_tokens : created;
    uint64_t text_in = u->prompt_tokens;
    text_in = text_in > cached ? text_in - cached : 0;
    text_in = text_in > created ? text_in - created : 0;
    uint64_t reasoning = u->reasoning_tokens;
    uint64_t text_out = u->completion_tokens > reasoning ? u->completion_tokens - reasoning : 0;
    double prompt = (double)text_in * r.in + (double)cached * r.cache_read +
                    (double)(created - created_1h) * r.cache_write + (double)created_1h * r.cache_write_1h;
    double completion = (double)text_out * r.out + (double)reasoning * r.reasoning;
    return prompt + completion;
}

/* Worst case: every prompt token at the dearest input rate (a cache write can
 * cost more than plain input: Anthropic's 1.25x, 2x for a 1-hour write), every completion token at the
 * dearest output rate (reasoning may be priced apart). */
double sy_cost_bound(const struct sy_dprice *dp, uint64_t prompt_tokens, int64_t max_tokens)
{
    if (!dp)
        return 0;
    int64_t bound = max_tokens > 0 ? max_tokens : dp->max_output_tokens > 0 ? dp->max_output_tokens : 4096;
    struct rates r;
    rates(dp, prompt_tokens, &r);
    double in = r.in > r.cache_write ? r.in : r.cache_write;
    if (r.cache_write_1h > in)
        in = r.cache_write_1h;
    double out = r.out > r.reasoning ? r.out : r.reasoning;
    return (double)prompt_tokens * in + (double)bound * out;
}

/* ---- image generation ------------------------------------------------------
 *
 * LiteLLM's default_image_cost_calculator: the size is normalised to
 * "<w>-x-<h>" (default 1024-x-1024), the entry found by size (and quality)
 * keyed names, and priced per pixel (DALL-E's table: 1024-x-1024/dall-e-2,
 * hd/1792-x-1024/dall-e-3 ...) or per image (output_cost_per_image). One
 * difference: a dall-e-3 request without `quality` is looked up as
 * "standard" (OpenAI's default, and what it bills), where LiteLLM tries the
 * unqualified size key, which its table does not have for dall-e-3.
 */
static const struct sy_price *image_entry(const char *provider, const char *model, const char *size,
                                          const char *quality)
{
    char k[512];
    const struct sy_price *p;
    if (provider && quality && snprintf(k, sizeof k, "%s/%s/%s/%s", quality, provider, size, model) < (int)sizeof k &&
        (p = sy_price_exact(k)))
        return p;
    if (provider && snprintf(k, sizeof k, "%s/%s/%s", provider, size, model) < (int)sizeof k && (p = sy_price_exact(k)))
        return p;
    if (quality && snprintf(k, sizeof k, "%s/%s/%s", quality, size, model) < (int)sizeof k && (p = sy_price_exact(k)))
        return p;
    if (snprintf(k, sizeof k, "%s/%s", size, model) < (int)sizeof k && (p = sy_price_exact(k)))
        return p;
    return NULL;
}

static int priced_image(const struct sy_price *p)
{
    return p && (p->output_cost_per_image > 0 || p->input_cost_per_pixel > 0);
}

double sy_image_cost(const char *provider, const char *model, const char *size, const char *quality, int64_t n,
                     const struct sy_price *own)
{
    if (!model || n < 1)
        return -1;
    /* "1024x1024" | "1024-x-1024" -> w, h; anything else (e.g. "auto") -> 1024 x 1024 */
    long w = 1024, h = 1024;
    if (size) {
        char *e;
        long a = strtol(size, &e, 10);
        if (a > 0 && a <= 100000 && (*e == 'x' || !strncmp(e, "-x-", 3))) {
            long b = strtol(e + (*e == 'x' ? 1 : 3), &e, 10);
            if (b > 0 && b <= 100000 && !*e)
                w = a, h = b;
        }
    }
    char sz[48];
    snprintf(sz, sizeof sz, "%ld-x-%ld", w, h);
    const char *slash = strrchr(model, '/');
    const char *bare = slash ? slash + 1 : model;
    if (!quality && !strncmp(bare, "dall-e-3", 8))
        quality = "standard";
    const struct sy_price *p = image_entry(provider, bare, sz, quality);
    if (!priced_image(p))
        p = own;
    if (!priced_image(p))
        return -1;
    if (p->output_cost_per_image > 0)
        return p->output_cost_per_image * (double)n;
    return p->input_cost_per_pixel * (double)w * (double)h * (double)n;
}
