/* test_lru.c - unit tests for src/cache/lru.c: get/put/delete, LRU eviction
 * under a small byte bound, item bound, TTL, stats, concurrent threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"
#include "core/buf.h"

static void basic(void **st)
{
    (void)st;
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    sy_cache_local_init(1 << 20, 100);
    assert_int_equal(sy_cache_local_get("k", 0, &b), 0);
    assert_int_equal(sy_cache_local_put("k", "v1", 2, 10, 100), 0);
    assert_int_equal(sy_cache_local_get("k", 105, &b), 1);
    assert_string_equal(b.p, "v1");
    assert_int_equal(sy_cache_local_put("k", "v22", 3, 10, 100), 0); /* replace */
    sy_buf_reset(&b);
    assert_int_equal(sy_cache_local_get("k", 105, &b), 1);
    assert_string_equal(b.p, "v22");
    struct sy_cache_stats s;
    sy_cache_local_stats(&s);
    assert_int_equal(s.items, 1);
    assert_true(s.bytes >= 4);
    assert_int_equal(sy_cache_local_put("x", "v", 1, 0, 100), -1); /* ttl must be > 0 */
    assert_int_equal(sy_cache_local_delete("k"), 1);
    assert_int_equal(sy_cache_local_delete("k"), 0);
    assert_int_equal(sy_cache_local_put("e", "", 0, 1, 0), 0); /* empty value */
    sy_buf_reset(&b);
    assert_int_equal(sy_cache_local_get("e", 0.5, &b), 1);
    assert_int_equal(b.len, 0);
    sy_cache_local_flush();
    sy_cache_local_stats(&s);
    assert_int_equal(s.items, 0);
    assert_int_equal(s.bytes, 0);
    sy_cache_local_shutdown();
    sy_buf_free(&b);
}

static void ttl(void **st)
{
    (void)st;
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    sy_cache_local_init(1 << 20, 100);
    assert_int_equal(sy_cache_local_put("k", "v", 1, 5, 100), 0);
    assert_int_equal(sy_cache_local_get("k", 104.9, &b), 1);
    assert_int_equal(sy_cache_local_get("k", 105, &b), 0);
    struct sy_cache_stats s;
    sy_cache_local_stats(&s);
    assert_int_equal(s.expired, 1);
    assert_int_equal(s.items, 0);
    sy_cache_local_shutdown();
    sy_buf_free(&b);
}

static void eviction(void **st)
{
    (void)st;
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    sy_cache_local_init(4096, 1000); /* small: one shard, exact LRU */
    char v[400], key[16];
    memset(v, 'v', sizeof v);
    assert_int_equal(sy_cache_local_put("big", v, 4096 / 8 + 1, 60, 0), -1); /* > max_bytes / 8 */
    for (int i = 0; i < 30; i++) {
        snprintf(key, sizeof key, "k%d", i);
        assert_int_equal(sy_cache_local_put(key, v, sizeof v, 60, 0), 0);
        if (i >= 1)
            assert_int_equal(sy_cache_local_get("k0", 1, &b), 1); /* keep k0 recent */
    }
    struct sy_cache_stats s;
    sy_cache_local_stats(&s);
    assert_true(s.bytes <= 4096);
    assert_true(s.items >= 5 && s.items < 10);
    assert_int_equal(s.evictions, 30 - s.items);
    assert_int_equal(sy_cache_local_get("k0", 1, &b), 1);  /* recently used survives */
    assert_int_equal(sy_cache_local_get("k1", 1, &b), 0);  /* oldest went */
    assert_int_equal(sy_cache_local_get("k29", 1, &b), 1); /* newest stays */
    sy_cache_local_shutdown();
    /* item bound */
    sy_cache_local_init(1 << 20, 3);
    assert_int_equal(sy_cache_local_put("a", "1", 1, 60, 0), 0);
    assert_int_equal(sy_cache_local_put("b", "1", 1, 60, 0), 0);
    assert_int_equal(sy_cache_local_put("c", "1", 1, 60, 0), 0);
    assert_int_equal(sy_cache_local_put("d", "1", 1, 60, 0), 0);
    sy_cache_local_stats(&s);
    assert_int_equal(s.items, 3);
    assert_int_equal(sy_cache_local_get("a", 1, &b), 0);
    sy_cache_local_shutdown();
    sy_buf_free(&b);
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    char key[32], val[64];
    for (int i = 0; i < 20000; i++) {
        int k = (i * 7 + id) % 3000;
        snprintf(key, sizeof key, "key-%d", k);
        int n = snprintf(val, sizeof val, "value-%d", k);
        if (i % 3 == 0)
            sy_cache_local_put(key, val, (size_t)n, 60, 0);
        else if (i % 17 == 0)
            sy_cache_local_delete(key);
        else {
            sy_buf_reset(&b);
            if (sy_cache_local_get(key, 1, &b) == 1 && strcmp(b.p, val) != 0)
                return (void *)1;
        }
    }
    sy_buf_free(&b);
    return NULL;
}

static void threads(void **st)
{
    (void)st;
    sy_cache_local_init(64u << 20, 100000); /* many shards */
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < 8; i++) {
        void *r;
        pthread_join(t[i], &r);
        assert_null(r);
    }
    struct sy_cache_stats s;
    sy_cache_local_stats(&s);
    assert_true(s.items > 0 && s.items <= 3000);
    sy_cache_local_shutdown();
    /* and under a tight bound, so eviction races with gets */
    sy_cache_local_init(16384, 100);
    for (int i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < 8; i++) {
        void *r;
        pthread_join(t[i], &r);
        assert_null(r);
    }
    sy_cache_local_stats(&s);
    assert_true(s.items <= 100 && s.bytes <= 16384);
    assert_true(s.evictions > 0);
    sy_cache_local_shutdown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(basic),
        cmocka_unit_test(ttl),
        cmocka_unit_test(eviction),
        cmocka_unit_test(threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
