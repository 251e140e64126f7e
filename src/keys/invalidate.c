/* invalidate.c - cross-instance cache invalidation over Redis pub/sub.
 *
 * Every instance caches keys and end users for up to ttl seconds. A change
 * made through one instance's admin API is applied to that instance's cache
 * at once, and PUBLISHed by it (on its worker's async Redis client) so every
 * other instance drops the same entries:
 *
 *   channel  "switchyard:keys"
 *   message  "<kind>:<id>"       kind   | id
 *                                -------+-------------------------------------
 *                                token  | the key's token (sha256 hex)
 *                                user   | user_id     (keys of that user)
 *                                team   | team_id     (keys of that team)
 *                                org    | organization_id (keys in that org)
 *                                end_user | end-user id
 *                                all    | ignored ("all" alone is fine)
 *
 *   e.g.  PUBLISH switchyard:keys "team:team-1"
 *
 * The id is everything after the first ':' (ids may contain ':'). Unknown
 * kinds are ignored. A message arriving at its own publisher only repeats a
 * drop already done.
 *
 * The listener is one thread with a blocking hiredis context: connect (2 s
 * timeout), AUTH, SELECT, SUBSCRIBE, then wait for messages with poll() in
 * slices of 200 ms so sy_keys_invalidate_stop() is noticed promptly. When
 * Redis goes away it reconnects with back-off (0.25 s doubling to 10 s). While
 * disconnected, messages are lost: entries then live out their ttl, which is
 * the bound on staleness without Redis anyway.
 */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "keys/keys.h"
#include "keys/keys_impl.h"

#define CHANNEL "switchyard:keys"

static struct {
    pthread_t th;
    int running; /* thread started (guarded by mu) */
    atomic_int stop;
    atomic_int subscribed;
    char *host, *user, *password;
    int port, db;
} L;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

int sy_keys_invalidate_subscribed(void)
{
    return atomic_load(&L.subscribed);
}

/* Apply one message "<kind>:<id>". */
static void apply(const char *msg, size_t n)
{
    char kind[32];
    const char *colon = memchr(msg, ':', n);
    size_t kl = colon ? (size_t)(colon - msg) : n;
    if (kl >= sizeof kind)
        return;
    memcpy(kind, msg, kl);
    kind[kl] = 0;
    size_t il = colon ? n - kl - 1 : 0;
    char *id = malloc(il + 1);
    if (!id)
        return;
    if (il)
        memcpy(id, colon + 1, il);
    id[il] = 0;
    sy_keys_invalidate(kind, id);
    free(id);
}

/* Sleep up to s seconds, waking early on stop. */
static void nap(double s)
{
    while (s > 0 && !atomic_load(&L.stop)) {
        double d = s < 0.1 ? s : 0.1;
        struct timespec ts = {0, (long)(d * 1e9)};
        nanosleep(&ts, NULL);
        s -= d;
    }
}

/* A blocking command; 0 when the reply is not an error. */
static int command(redisContext *c, int argc, const char **argv)
{
    redisReply *r = redisCommandArgv(c, argc, argv, NULL);
    if (!r)
        return -1;
    int bad = r->type == REDIS_REPLY_ERROR;
    if (bad)
        sy_warn("keys: redis %s: %s", argv[0], r->str);
    freeReplyObject(r);
    return bad ? -1 : 0;
}

static redisContext *connect_sub(void)
{
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout(L.host, L.port, tv);
    if (!c || c->err) {
        if (c)
            redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv); /* for the commands below; the wait uses poll() */
    if (L.password) {
        const char *a3[] = {"AUTH", L.user, L.password}, *a2[] = {"AUTH", L.password};
        if (L.user ? command(c, 3, a3) : command(c, 2, a2)) {
            redisFree(c);
            return NULL;
        }
    }
    if (L.db > 0) {
        char db[16];
        snprintf(db, sizeof db, "%d", L.db);
        const char *a[] = {"SELECT", db};
        if (command(c, 2, a)) {
            redisFree(c);
            return NULL;
        }
    }
    const char *a[] = {"SUBSCRIBE", CHANNEL};
    redisReply *r = redisCommandArgv(c, 2, a, NULL); /* ["subscribe", channel, 1] */
    if (!r || r->type != REDIS_REPLY_ARRAY) {
        if (r)
            freeReplyObject(r);
        redisFree(c);
        return NULL;
    }
    freeReplyObject(r);
    return c;
}

static void handle(redisReply *r)
{
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 && r->element[0]->type == REDIS_REPLY_STRING &&
        strcmp(r->element[0]->str, "message") == 0 && r->element[2]->type == REDIS_REPLY_STRING)
        apply(r->element[2]->str, (size_t)r->element[2]->len);
}

/* Read messages until the connection fails or stop is asked. */
static void listen_on(redisContext *c)
{
    atomic_store(&L.subscribed, 1);
    while (!atomic_load(&L.stop)) {
        void *reply = NULL;
        if (redisReaderGetReply(c->reader, &reply) != REDIS_OK)
            break;
        if (reply) {
            handle(reply);
            freeReplyObject(reply);
            continue;
        }
        struct pollfd p = {c->fd, POLLIN, 0};
        int n = poll(&p, 1, 200);
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0 && redisBufferRead(c) != REDIS_OK)
            break; /* closed or failed */
    }
    atomic_store(&L.subscribed, 0);
}

static void *thread_main(void *arg)
{
    double backoff = 0.25;
    while (!atomic_load(&L.stop)) {
        redisContext *c = connect_sub();
        if (!c) {
            nap(backoff);
            backoff = backoff * 2 > 10 ? 10 : backoff * 2;
            continue;
        }
        sy_info("keys: listening for invalidations on redis %s:%d channel %s", L.host, L.port, CHANNEL);
        backoff = 0.25;
        listen_on(c);
        redisFree(c);
        if (!atomic_load(&L.stop)) {
            sy_warn("keys: redis invalidation channel lost; reconnecting");
            nap(backoff);
        }
    }
    return NULL;
}

static void free_conf(void)
{
    free(L.host);
    free(L.user);
    free(L.password);
    L.host = L.user = L.password = NULL;
}

int sy_keys_invalidate_start(const char *host, int port, const char *user, const char *password, int db)
{
    pthread_mutex_lock(&mu);
    if (L.running) {
        pthread_mutex_unlock(&mu);
        return -1;
    }
    L.host = strdup(host && *host ? host : "127.0.0.1");
    L.user = user && *user ? strdup(user) : NULL;
    L.password = password && *password ? strdup(password) : NULL;
    L.port = port > 0 ? port : 6379;
    L.db = db;
    atomic_store(&L.stop, 0);
    if (!L.host || (user && *user && !L.user) || (password && *password && !L.password) ||
        pthread_create(&L.th, NULL, thread_main, NULL) != 0) {
        free_conf();
        pthread_mutex_unlock(&mu);
        return -1;
    }
    L.running = 1;
    pthread_mutex_unlock(&mu);
    return 0;
}

void sy_keys_invalidate_stop(void)
{
    pthread_mutex_lock(&mu);
    if (L.running) {
        atomic_store(&L.stop, 1);
        pthread_join(L.th, NULL);
        L.running = 0;
        free_conf();
    }
    pthread_mutex_unlock(&mu);
}
