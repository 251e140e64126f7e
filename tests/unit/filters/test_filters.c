/* test_filters.c - the response filter chain (gateway/filter.h) driven by a
 * small harness: a config, a call with its arena and slots, and the hook
 * calls in the order the upstream stage makes them (start, head, each piece,
 * end from sy_call_account).
 *
 * The filters here are dummies declared in this one file, and this file
 * defines sy_filter_list: linked ahead of the gateway library, it replaces
 * src/filters/list.c in this binary, so the filters are added without
 * editing the engine. The real usage filter is listed first: on a JSON answer
 * it declines, as on every call that is not a stream.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "core/arena.h"
#include "core/buf.h"
#include "gateway/filter.h"
#include "gateway/slot.h"
#include "http/server.h"

/* ---- dummy filters ---------------------------------------------------------- */

struct rec {
    int heads, ends, err, end_status;
    int datas;
    struct sy_buf seen; /* the pieces, in order */
    char order[8];      /* which recorder saw end in which order */
};

static int rec_slot = -1, rec2_slot = -1;
static int declined_starts, declined_hooks;
static char end_order[8];
static int end_n;

static int rec_start_on(struct sy_call *c, int slot)
{
    struct rec *r = sy_call_slot_new(c, slot, sizeof *r);
    sy_buf_init(&r->seen, 1 << 20);
    return 1;
}
static int rec_start(struct sy_call *c)
{
    return rec_start_on(c, rec_slot);
}
static int rec2_start(struct sy_call *c)
{
    return rec_start_on(c, rec2_slot);
}
static void rec_head_on(struct sy_call *c, int slot, int status, const char *ctype)
{
    struct rec *r = sy_call_slot(c, slot);
    assert_int_equal(status, 200);
    assert_string_equal(ctype, "text/event-stream");
    r->heads++;
}
static void rec_head(struct sy_call *c, int status, const char *ctype, const char *h, size_t n)
{
    rec_head_on(c, rec_slot, status, ctype);
}
static void rec2_head(struct sy_call *c, int status, const char *ctype, const char *h, size_t n)
{
    rec_head_on(c, rec2_slot, status, ctype);
}
static void rec_data_on(struct sy_call *c, int slot, const char *p, size_t n)
{
    struct rec *r = sy_call_slot(c, slot);
    r->datas++;
    sy_buf_append(&r->seen, p, n);
}
static void rec_data(struct sy_call *c, const char *p, size_t n)
{
    rec_data_on(c, rec_slot, p, n);
}
static void rec2_data(struct sy_call *c, const char *p, size_t n)
{
    rec_data_on(c, rec2_slot, p, n);
}
static void rec_end_on(struct sy_call *c, int slot, int status, int err, char who)
{
    struct rec *r = sy_call_slot(c, slot);
    r->ends++;
    r->err = err;
    r->end_status = status;
    end_order[end_n++] = who;
}
static void rec_end(struct sy_call *c, int status, int err)
{
    rec_end_on(c, rec_slot, status, err, '1');
}
static void rec2_end(struct sy_call *c, int status, int err)
{
    rec_end_on(c, rec2_slot, status, err, '2');
}

static int decl_start(struct sy_call *c)
{
    declined_starts++;
    return 0;
}
static void decl_head(struct sy_call *c, int status, const char *ctype, const char *h, size_t n)
{
    declined_hooks++;
}
static void decl_data(struct sy_call *c, const char *p, size_t n)
{
    declined_hooks++;
}
static void decl_end(struct sy_call *c, int status, int err)
{
    declined_hooks++;
}

static int never(const struct sy_gwconf *g, enum sy_route_kind k)
{
    return 0;
}

#define LLM (SY_FILTER_ROUTE(SY_RK_CHAT) | SY_FILTER_ROUTE(SY_RK_COMPLETIONS))

static const struct sy_filter recorder = {.name = "recorder",
                                          .routes = LLM,
                                          .start = rec_start,
                                          .head = rec_head,
                                          .data = rec_data,
                                          .end = rec_end,
                                          .slot = &rec_slot};
static const struct sy_filter decliner = {
    .name = "decliner", .routes = LLM, .start = decl_start, .head = decl_head, .data = decl_data, .end = decl_end};
static const struct sy_filter disabled = {
    .name = "disabled", .routes = LLM, .enabled = never, .start = decl_start, .data = decl_data};
static const struct sy_filter embed_only = {
    .name = "embed_only", .routes = SY_FILTER_ROUTE(SY_RK_EMBEDDINGS), .start = decl_start};
static const struct sy_filter json_only = {
    .name = "json_only", .routes = LLM, .answers = SY_FILTER_JSON, .start = decl_start};
static const struct sy_filter recorder2 = {.name = "recorder2",
                                           .routes = LLM,
                                           .start = rec2_start,
                                           .head = rec2_head,
                                           .data = rec2_data,
                                           .end = rec2_end,
                                           .slot = &rec2_slot};

extern const struct sy_filter sy_filter_usage;

/* This binary's list (in place of src/filters/list.c). */
const struct sy_filter *const sy_filter_list[] = {&sy_filter_usage, &recorder,  &decliner, &disabled,
                                                  &embed_only,      &json_only, &recorder2};
const size_t sy_filter_count = sizeof sy_filter_list / sizeof sy_filter_list[0];

/* ---- harness ------------------------------------------------------------------ */

static struct sy_config cfg;
static struct sy_gwconf g;
static struct sy_req req;
static struct sy_call call;

static int setup(void **st)
{
    memset(&cfg, 0, sizeof cfg);
    memset(&g, 0, sizeof g);
    memset(&call, 0, sizeof call);
    g.cfg = &cfg;
    assert_int_equal(sy_filters_build(&g), 0);
    sy_arena_init(&req.arena);
    call.req = &req;
    call.g = &g;
    call.kind = SY_RK_CHAT;
    call.in.stream = 1;
    call.slots = calloc((size_t)sy_nslots, sizeof *call.slots);
    declined_starts = declined_hooks = end_n = 0;
    memset(end_order, 0, sizeof end_order);
    return 0;
}

static int teardown(void **st)
{
    for (int s = 0; s < sy_nslots; s++) {
        struct rec *r = (s == rec_slot || s == rec2_slot) ? call.slots[s] : NULL;
        if (r)
            sy_buf_free(&r->seen);
    }
    sy_arena_free(&req.arena);
    free(call.slots);
    sy_filters_free(&g);
    return 0;
}

static struct rec *rec_of(int slot)
{
    return sy_call_slot(&call, slot);
}

/* start, head, the pieces, end as the upstream stage calls them */
static void run_stream(const char *const *pieces, int n, int status)
{
    sy_filter_start(&call, 1);
    sy_filter_head(&call, 200, "text/event-stream", "x-a: b\r\n", 8);
    for (int i = 0; i < n; i++)
        sy_filter_data(&call, pieces[i], strlen(pieces[i]));
    sy_filter_end(&call, status);
}

/* ---- tests ---------------------------------------------------------------------- */

static void routes_get_their_enabled_filters_in_list_order(void **st)
{
    char names[256];
    sy_filters_names(&g, SY_RK_CHAT, 1, names, sizeof names);
    assert_string_equal(names, "usage,recorder,decliner,recorder2");
    sy_filters_names(&g, SY_RK_EMBEDDINGS, 1, names, sizeof names);
    assert_string_equal(names, "usage,embed_only");
    sy_filters_names(&g, SY_RK_MODELS, 1, names, sizeof names);
    assert_string_equal(names, "");
    /* a JSON answer: the stream-only usage filter is not offered, json_only only there */
    sy_filters_names(&g, SY_RK_CHAT, 0, names, sizeof names);
    assert_string_equal(names, "recorder,decliner,json_only,recorder2");
    assert_true(rec_slot >= 0 && rec2_slot >= 0 && rec_slot != rec2_slot);
}

static void a_linked_filter_sees_every_event_exactly_once(void **st)
{
    static const char *const p[] = {"data: {\"a\":1}\n\n", "data: {\"b\"", ":2}\n\ndata: [DONE]\n\n"};
    run_stream(p, 3, 200);
    struct rec *r = rec_of(rec_slot);
    assert_non_null(r);
    assert_int_equal(r->heads, 1);
    assert_int_equal(r->datas, 3);
    assert_int_equal(r->ends, 1);
    assert_int_equal(r->err, 0);
    assert_int_equal(r->end_status, 200);
    assert_int_equal(r->seen.len, strlen(p[0]) + strlen(p[1]) + strlen(p[2]));
    assert_memory_equal(r->seen.p, "data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n", r->seen.len);
    /* a second end (the call is accounted once) and a second start do nothing */
    sy_filter_end(&call, 200);
    sy_filter_start(&call, 1);
    assert_int_equal(r->ends, 1);
    assert_int_equal(declined_starts, 1);
}

static void a_filter_that_declines_costs_nothing(void **st)
{
    static const char *const p[] = {"data: x\n\n", "data: y\n\n"};
    sy_filter_start(&call, 1);
    /* the chain holds only those that linked: the usage filter declines too (not a started stream) */
    assert_non_null(call.out.fl);
    assert_int_equal(call.out.fl->n, 2);
    assert_ptr_equal(call.out.fl->f[0], &recorder);
    assert_ptr_equal(call.out.fl->f[1], &recorder2);
    run_stream(p, 2, 200);
    assert_int_equal(declined_starts, 1); /* asked once, at start */
    assert_int_equal(declined_hooks, 0);  /* never called again */
    assert_non_null(rec_of(rec_slot));
    assert_int_equal(end_n, 2);
    assert_null(call.out.fl); /* ended */
}

static void an_error_mid_stream_reaches_every_linked_end(void **st)
{
    static const char *const p[] = {"data: {\"a\":1}\n\n", "data: {\"b\":2}\n\n"};
    call.out.llm_failed = 1; /* the upstream reset after two chunks: an error frame ends the stream */
    run_stream(p, 2, 500);
    struct rec *a = rec_of(rec_slot), *b = rec_of(rec2_slot);
    assert_int_equal(a->ends, 1);
    assert_int_equal(b->ends, 1);
    assert_int_equal(a->err, 1);
    assert_int_equal(b->err, 1);
    assert_int_equal(a->end_status, 500);
    assert_int_equal(a->datas, 2);
    assert_int_equal(b->datas, 2);
    assert_string_equal(end_order, "12"); /* list order */
}

static void a_client_that_leaves_is_an_error_end(void **st)
{
    static const char *const p[] = {"data: {\"a\":1}\n\n"};
    call.aborted = 1;
    run_stream(p, 1, 499);
    assert_int_equal(rec_of(rec_slot)->err, 1);
    assert_int_equal(rec_of(rec2_slot)->err, 1);
}

static void a_route_without_filters_has_no_chain(void **st)
{
    call.kind = SY_RK_MODELS;
    static const char *const p[] = {"{}"};
    run_stream(p, 1, 200);
    assert_null(call.out.fl);
    assert_int_equal(call.out.fl_started, 0);
    assert_int_equal(declined_starts, 0);
    assert_null(rec_of(rec_slot));
}

static void a_json_answer_is_one_piece(void **st)
{
    /* the engine's order on a whole answer (proxy.c success_reply, mock.c) */
    sy_filter_start(&call, 0);
    sy_filter_head(&call, 200, "text/event-stream", NULL, 0);
    sy_filter_data(&call, "{\"id\":\"x\"}", 10);
    sy_filter_end(&call, 200);
    assert_int_equal(rec_of(rec_slot)->datas, 1);
    assert_int_equal(rec_of(rec_slot)->ends, 1);
    assert_int_equal(rec_of(rec_slot)->err, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(routes_get_their_enabled_filters_in_list_order, setup, teardown),
        cmocka_unit_test_setup_teardown(a_linked_filter_sees_every_event_exactly_once, setup, teardown),
        cmocka_unit_test_setup_teardown(a_filter_that_declines_costs_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(an_error_mid_stream_reaches_every_linked_end, setup, teardown),
        cmocka_unit_test_setup_teardown(a_client_that_leaves_is_an_error_end, setup, teardown),
        cmocka_unit_test_setup_teardown(a_route_without_filters_has_no_chain, setup, teardown),
        cmocka_unit_test_setup_teardown(a_json_answer_is_one_piece, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
