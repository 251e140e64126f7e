/* test_cache.c - keys/cache.c and keys/enduser.c: get / put / replace, TTL
 * and negative-TTL expiry, invalidation by token / user / team / org /
 * end_user / all, references (an entry dropped while held stays usable and
 * is freed by the last unref: run under ASan to see leaks and use-after-free),
 * settled spend on every entity, the sweep that bounds a flood of unknown
 * ids, and readers / writers / invalidators / spenders on several threads.
 * Also hash.c: token, key_name, roles; and invalidate.c against a real
 * redis-server (skipped when there is none): PUBLISH "team:<id>" drops the
 * team's keys, the listener resubscribes after Redis restarts, stop is prompt.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "keys/keys.h"
#include "keys/keys_impl.h"

static struct sy_budget *bud(const char *id)
{
    struct sy_budget *b = malloc(sizeof *b);
    sy__budget_init(b);
    b->id = strdup(id);
    return b;
}

/* token: 64 hex chars made from n */
static void tok(char out[65], unsigned n)
{
    char t[16];
    snprintf(t, sizeof t, "%08x", n * 2654435761u);
    for (int i = 0; i < 64; i++)
        out[i] = t[i % 8];
    snprintf(out + 56, 9, "%08x", n);
}

static struct sy_keyinfo *mk(const char *token, int found, double age, const char *user, const char *team,
                             const char *org)
{
    struct sy_keyinfo *ki = calloc(1, sizeof *ki);
    atomic_init(&ki->refs, 1);
    memcpy(ki->token, token, 64);
    ki->token[64] = 0;
    ki->found = found;
    ki->loaded_at = sy_keys_now() - age;
    sy__budget_init(&ki->key);
    ki->key.id = strdup(token);
    if (user) {
        ki->user_id = strdup(user);
        ki->user = bud(user);
    }
    if (team) {
        ki->team_id = strdup(team);
        ki->team = bud(team);
    }
    if (org) {
        ki->org_id = strdup(org);
        ki->org = bud(org);
    }
    if (user && team) {
        char id[128];
        snprintf(id, sizeof id, "%s:%s", team, user);
        ki->member = bud(id);
    }
    return ki;
}

static struct sy_enduser *mkeu(const char *id, int found, double age)
{
    struct sy_enduser *eu = calloc(1, sizeof *eu);
    atomic_init(&eu->refs, 1);
    eu->found = found;
    eu->loaded_at = sy_keys_now() - age;
    sy__budget_init(&eu->b);
    eu->b.id = strdup(id);
    return eu;
}

static int setup(void **s)
{
    (void)s;
    sy_keys_init(10, 5);
    sy_keys_invalidate("all", NULL);
    return 0;
}

static void test_hash(void **s)
{
    (void)s;
    char h[65], n[32];
    sy_keys_hash("sk-test-1234", 12, h);
    assert_string_equal(h, "eceadfbb53b79c09477666aa69fb6ac5994e1e25f7f0fe2f3c270c29717de213");
    sy_keys_abbrev("sk-test-1234", 12, n, sizeof n);
    assert_string_equal(n, "sk-...1234");
    sy_keys_abbrev("ab", 2, n, sizeof n);
    assert_string_equal(n, "sk-...ab");
    assert_int_equal(sy_role_parse("proxy_admin"), SY_ROLE_PROXY_ADMIN);
    assert_int_equal(sy_role_parse("internal_user_viewer"), SY_ROLE_INTERNAL_USER_VIEWER);
    assert_int_equal(sy_role_parse("org_admin"), SY_ROLE_INTERNAL_USER);
    assert_int_equal(sy_role_parse(NULL), SY_ROLE_NONE);
    assert_string_equal(sy_role_name(SY_ROLE_CUSTOMER), "customer");
    assert_null(sy_role_name(SY_ROLE_NONE));
}

static void test_get_put_replace(void **s)
{
    (void)s;
    char t[65];
    tok(t, 1);
    assert_null(sy_keys_get(t));
    struct sy_keyinfo *a = mk(t, 1, 0, "u", "t", NULL);
    sy_keys_put(a);
    struct sy_keyinfo *g = sy_keys_get(t);
    assert_ptr_equal(g, a);
    assert_int_equal(atomic_load(&a->refs), 2);
    /* replace while a reader holds the old one */
    struct sy_keyinfo *b = mk(t, 1, 0, "u2", NULL, NULL);
    sy_keys_put(b);
    assert_int_equal(atomic_load(&a->refs), 1); /* only the reader now */
    assert_string_equal(g->user_id, "u");
    sy_keyinfo_unref(g); /* frees a */
    g = sy_keys_get(t);
    assert_ptr_equal(g, b);
    sy_keyinfo_unref(g);
    /* a token that differs only in its tail (same hash prefix) */
    char t2[65];
    memcpy(t2, t, 65);
    t2[63] = t2[63] == '0' ? '1' : '0';
    assert_null(sy_keys_get(t2));
}

static void test_ttl(void **s)
{
    (void)s;
    char t[65];
    tok(t, 2);
    sy_keys_put(mk(t, 1, 9.5, NULL, NULL, NULL));
    struct sy_keyinfo *g = sy_keys_get(t);
    assert_non_null(g);
    sy_keyinfo_unref(g);
    sy_keys_put(mk(t, 1, 10.5, NULL, NULL, NULL)); /* stale */
    assert_null(sy_keys_get(t));
    /* negative entries: neg_ttl */
    sy_keys_put(mk(t, 0, 4, NULL, NULL, NULL));
    g = sy_keys_get(t);
    assert_non_null(g);
    assert_int_equal(g->found, 0);
    sy_keyinfo_unref(g);
    sy_keys_put(mk(t, 0, 6, NULL, NULL, NULL));
    assert_null(sy_keys_get(t));
    /* a new TTL applies to what is filed */
    sy_keys_init(20, 5);
    sy_keys_put(mk(t, 1, 15, NULL, NULL, NULL));
    g = sy_keys_get(t);
    assert_non_null(g);
    sy_keyinfo_unref(g);
    sy_keys_init(0, 0); /* defaults */
    assert_null(sy_keys_get(t));
}

static int present(unsigned n)
{
    char t[65];
    tok(t, n);
    struct sy_keyinfo *g = sy_keys_get(t);
    if (g)
        sy_keyinfo_unref(g);
    return g != NULL;
}

static void test_invalidate(void **s)
{
    (void)s;
    char t[65];
    tok(t, 10), sy_keys_put(mk(t, 1, 0, "alice", "red", "org-a"));
    tok(t, 11), sy_keys_put(mk(t, 1, 0, "bob", "red", NULL));
    tok(t, 12), sy_keys_put(mk(t, 1, 0, "alice", "blue", NULL));
    tok(t, 13), sy_keys_put(mk(t, 1, 0, NULL, NULL, "org-b"));
    tok(t, 14), sy_keys_put(mk(t, 1, 0, NULL, NULL, NULL));

    /* holding a reference across an invalidation */
    tok(t, 11);
    struct sy_keyinfo *held = sy_keys_get(t);
    assert_non_null(held);

    sy_keys_invalidate("team", "red");
    assert_false(present(10));
    assert_false(present(11));
    assert_true(present(12));
    assert_string_equal(held->team_id, "red"); /* still valid */
    sy_keyinfo_unref(held);

    sy_keys_invalidate("user", "alice");
    assert_false(present(12));
    assert_true(present(13));
    sy_keys_invalidate("org", "org-b");
    assert_false(present(13));
    assert_true(present(14));
    sy_keys_invalidate("bogus", "x");
    assert_true(present(14));
    tok(t, 14);
    sy_keys_invalidate("token", t);
    assert_false(present(14));

    tok(t, 15), sy_keys_put(mk(t, 1, 0, NULL, NULL, NULL));
    sy_endusers_put(mkeu("cust-1", 1, 0));
    sy_endusers_put(mkeu("cust-2", 1, 0));
    struct sy_enduser *eu = sy_endusers_get("cust-1");
    assert_non_null(eu);
    sy_enduser_unref(eu);
    sy_keys_invalidate("end_user", "cust-1");
    assert_null(sy_endusers_get("cust-1"));
    eu = sy_endusers_get("cust-2");
    assert_non_null(eu);
    sy_enduser_unref(eu);
    sy_keys_invalidate("all", NULL);
    assert_false(present(15));
    assert_null(sy_endusers_get("cust-2"));
}

static void test_enduser_ttl(void **s)
{
    (void)s;
    sy_endusers_put(mkeu("x", 0, 1));
    struct sy_enduser *eu = sy_endusers_get("x");
    assert_non_null(eu);
    assert_int_equal(eu->found, 0);
    sy_enduser_unref(eu);
    sy_endusers_put(mkeu("x", 1, 11));
    assert_null(sy_endusers_get("x"));
    assert_null(sy_endusers_get(NULL));
}

static void test_add_spend(void **s)
{
    (void)s;
    char t[65];
    tok(t, 20);
    struct sy_keyinfo *ki = mk(t, 1, 0, "u", "t", "o");
    assert_int_equal(
        sy__mmb_parse("{\"gpt-4o\": {\"budget_limit\": 1, \"time_period\": \"1d\"}}", NULL, &ki->mmb, &ki->nmmb), 0);
    struct sy_enduser *eu = mkeu("c", 1, 0);
    sy_keys_add_spend(ki, eu, "openai/gpt-4o", 0.25);
    sy_keys_add_spend(ki, eu, NULL, 0.5);
    assert_true(atomic_load(&ki->key.spend) == 0.75);
    assert_true(atomic_load(&ki->user->spend) == 0.75);
    assert_true(atomic_load(&ki->team->spend) == 0.75);
    assert_true(atomic_load(&ki->member->spend) == 0.75);
    assert_true(atomic_load(&ki->org->spend) == 0.75);
    assert_true(atomic_load(&eu->b.spend) == 0.75);
    assert_true(ki->mmb[0].spend == 0.25);
    sy_keys_add_spend(NULL, eu, "m", 1);
    assert_true(atomic_load(&eu->b.spend) == 1.75);
    sy_keyinfo_unref(ki);
    sy_enduser_unref(eu);
}

static void test_sweep(void **s)
{
    (void)s;
    /* a flood of distinct unknown end users, all stale: the table does not keep them all */
    char id[32];
    for (int i = 0; i < 100000; i++) {
        snprintf(id, sizeof id, "flood-%d", i);
        sy_endusers_put(mkeu(id, 0, 100));
    }
    assert_true(sy__ctab_count(&sy__endusers) < 40000);
    sy_keys_invalidate("all", NULL);
    assert_int_equal(sy__ctab_count(&sy__endusers), 0);
}

/* ---- threads ---- */

#define NTOK 512
static atomic_int stop_flag;
static atomic_long hits;

static void *reader(void *arg)
{
    (void)arg;
    unsigned n = 0;
    while (!atomic_load(&stop_flag)) {
        char t[65];
        tok(t, 1000 + n++ % NTOK);
        struct sy_keyinfo *g = sy_keys_get(t);
        if (g) {
            assert_true(g->found);
            assert_memory_equal(g->token, t, 64);
            if (g->team_id)
                assert_true(strncmp(g->team_id, "team-", 5) == 0);
            sy_keys_add_spend(g, NULL, NULL, 0.001);
            atomic_fetch_add(&hits, 1);
            sy_keyinfo_unref(g);
        }
    }
    return NULL;
}

static void *writer(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    while (!atomic_load(&stop_flag)) {
        seed = seed * 1103515245u + 12345u;
        char t[65], team[32];
        tok(t, 1000 + (seed >> 8) % NTOK);
        snprintf(team, sizeof team, "team-%u", (seed >> 4) % 8);
        sy_keys_put(mk(t, 1, 0, "u", team, NULL));
    }
    return NULL;
}

static void *invalidator(void *arg)
{
    (void)arg;
    unsigned i = 0;
    while (!atomic_load(&stop_flag)) {
        char team[32];
        snprintf(team, sizeof team, "team-%u", i++ % 8);
        sy_keys_invalidate("team", team);
        if (i % 50 == 0)
            sy_keys_invalidate("all", NULL);
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void test_threads(void **s)
{
    (void)s;
    pthread_t th[8];
    atomic_store(&stop_flag, 0);
    atomic_store(&hits, 0);
    int n = 0;
    for (int i = 0; i < 4; i++)
        pthread_create(&th[n++], NULL, reader, NULL);
    for (int i = 0; i < 3; i++)
        pthread_create(&th[n++], NULL, writer, (void *)(uintptr_t)(i + 1));
    pthread_create(&th[n++], NULL, invalidator, NULL);
    struct timespec ts = {1, 0};
    nanosleep(&ts, NULL);
    atomic_store(&stop_flag, 1);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    assert_true(atomic_load(&hits) > 0);
    sy_keys_shutdown();
}

/* ---- Redis invalidation ---- */

static pid_t redis_start(int port)
{
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execlp("redis-server", "redis-server", "--port", ps, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
               (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 100; i++) { /* wait until it answers */
        struct timeval tv = {0, 200000};
        redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
        int ok = c && !c->err;
        if (c)
            redisFree(c);
        if (ok)
            return pid;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid)
            return -1;
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

static void redis_stop(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static void publish(int port, const char *msg)
{
    struct timeval tv = {1, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    assert_non_null(c);
    assert_int_equal(c->err, 0);
    redisReply *r = redisCommand(c, "PUBLISH switchyard:keys %s", msg);
    assert_non_null(r);
    freeReplyObject(r);
    redisFree(c);
}

static int wait_for(int (*cond)(void), double secs)
{
    for (double t = 0; t < secs; t += 0.02) {
        if (cond())
            return 1;
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    return cond();
}

static int subscribed(void)
{
    return sy_keys_invalidate_subscribed();
}

static int k30_gone(void)
{
    return !present(30);
}

static int k31_gone(void)
{
    return !present(31);
}

static void test_redis_invalidation(void **s)
{
    (void)s;
    if (system("command -v redis-server >/dev/null 2>&1") != 0)
        skip();
    int port = 20000 + (int)(getpid() % 20000);
    pid_t rp = redis_start(port);
    if (rp < 0)
        skip();
    assert_int_equal(sy_keys_invalidate_start("127.0.0.1", port, NULL, NULL, 0), 0);
    assert_int_equal(sy_keys_invalidate_start("127.0.0.1", port, NULL, NULL, 0), -1); /* already running */
    assert_true(wait_for(subscribed, 5));
    char t[65];
    tok(t, 30), sy_keys_put(mk(t, 1, 0, NULL, "redteam", NULL));
    tok(t, 31), sy_keys_put(mk(t, 1, 0, NULL, "blueteam", NULL));
    publish(port, "team:redteam");
    assert_true(wait_for(k30_gone, 3));
    assert_true(present(31));

    /* Redis restarts: the listener comes back */
    redis_stop(rp);
    rp = redis_start(port);
    assert_true(rp > 0);
    assert_true(wait_for(subscribed, 8));
    tok(t, 31);
    char msg[80];
    snprintf(msg, sizeof msg, "token:%s", t);
    publish(port, msg);
    assert_true(wait_for(k31_gone, 3));

    double t0 = sy_keys_now();
    sy_keys_invalidate_stop();
    assert_true(sy_keys_now() - t0 < 1.0);
    assert_false(subscribed());
    sy_keys_invalidate_stop(); /* twice is fine */
    redis_stop(rp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_hash, setup),
        cmocka_unit_test_setup(test_get_put_replace, setup),
        cmocka_unit_test_setup(test_ttl, setup),
        cmocka_unit_test_setup(test_invalidate, setup),
        cmocka_unit_test_setup(test_enduser_ttl, setup),
        cmocka_unit_test_setup(test_add_spend, setup),
        cmocka_unit_test_setup(test_sweep, setup),
        cmocka_unit_test_setup(test_threads, setup),
        cmocka_unit_test_setup(test_redis_invalidation, setup),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    sy_keys_shutdown();
    return rc;
}
