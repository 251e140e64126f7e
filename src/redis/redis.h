/* redis.h - an asynchronous Redis client on a worker's libuv loop (hiredis + its libuv adapter).
 *
 * One sy_redis per worker loop; never blocks the loop: the host name is
 * resolved with uv_getaddrinfo, connecting, AUTH/SELECT and every command are
 * asynchronous. Commands issued in one loop iteration leave in one write
 * (hiredis buffers them; the adapter flushes when the socket is writable), so
 * concurrent requests pipeline naturally.
 *
 * Failure model: a command whose reply does not arrive within the command
 * timeout, a refused or dropped connection, or an error reply to AUTH/SELECT
 * marks the client DOWN: every pending callback runs once with reply == NULL,
 * new commands are refused at once (sy_redis_cmd returns -1, callback not
 * called) and the client reconnects in the background with back-off
 * (100 ms doubling to 2 s). The first DOWN after being UP (or the first failure
 * of a client that never was UP) is logged once (with the reason); coming back
 * UP is logged once. Callers treat DOWN as "serve on local state" (router,
 * limits, cache). A command's reply must come within the command timeout, so
 * blocking commands (BLPOP...) need a server-side timeout well below it.
 *
 * The process-wide state (sy_redis_global_state) is what /health/readiness
 * reports: "connected" when every worker's client is up, else "disconnected"
 * (or "not configured").
 */
#ifndef SY_REDIS_H
#define SY_REDIS_H

#include <stddef.h>
#include <uv.h>

#include <hiredis/hiredis.h>

struct sy_redis;

struct sy_redis_opts {
    const char *host;         /* name or address (IPv6 without brackets); required */
    int port;                 /* default 6379 when 0 */
    const char *username;     /* may be NULL (AUTH password) */
    const char *password;     /* may be NULL (no AUTH) */
    int db;                   /* SELECT db when > 0 */
    double cmd_timeout_s;     /* default 1.0 when 0: a reply later than this marks the client DOWN */
    double connect_timeout_s; /* default 1.0 when 0 */
};

/* Reply callback: runs exactly once per accepted command, on the loop thread.
 * reply is NULL when the client went DOWN (or was freed) before the reply
 * arrived; it is owned by hiredis and valid only during the callback. An
 * error reply (REDIS_REPLY_ERROR) is passed as is. */
typedef void (*sy_redis_cb)(void *ud, const redisReply *reply);

/* Create a client on loop and start connecting (call on the loop's thread).
 * NULL when out of memory or o is unusable (no host, port outside 0..65535).
 * o and its strings are copied. The client is UP once connected and the
 * handshake replied OK: AUTH when a password is set, SELECT when db > 0, or
 * else a PING (so a peer that accepts but does not speak Redis never counts
 * as UP). */
struct sy_redis *sy_redis_new(uv_loop_t *loop, const struct sy_redis_opts *o);

/* Close: pending callbacks run with NULL, handles are closed on the loop
 * (the memory is released from a close callback, so call before the loop's
 * last uv_run). Safe whether UP or DOWN, from a reply callback too; r may be
 * NULL. */
void sy_redis_free(struct sy_redis *r);

/* 1 when connected (and authenticated / db selected). */
int sy_redis_up(const struct sy_redis *r);

/* Send one command (argv form, binary safe; argvlen NULL means strlen of
 * each argument). 0 when queued (cb will run once), -1 when the client is
 * DOWN (cb will not run). cb may be NULL (fire and forget). Also -1 for
 * commands that would break the one-reply-per-command pairing or undo the
 * connection's setup: (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, MONITOR, SELECT, AUTH,
 * HELLO, RESET. May be called from a reply callback. */
int sy_redis_cmd(struct sy_redis *r, sy_redis_cb cb, void *ud, int argc, const char **argv, const size_t *argvlen);

/* A Lua script sent as EVALSHA (its SHA-1 computed once), falling back to
 * EVAL on NOSCRIPT transparently (the callback sees only the final reply).
 * Start with sha zeroed (e.g. `static struct sy_redis_script s = {.src = "..."}`);
 * one object may be shared by every worker thread. It must outlive the
 * commands sent with it (src is resent on NOSCRIPT). */
struct sy_redis_script {
    const char *src;
    char sha[41]; /* filled lazily by sy_redis_eval */
};

/* EVALSHA script numkeys keys... args... ; same contract as sy_redis_cmd
 * (keylens / arglens may be NULL). Keys and args are copied for the EVAL
 * retry. */
int sy_redis_eval(struct sy_redis *r, struct sy_redis_script *s, sy_redis_cb cb, void *ud, int nkeys, const char **keys,
                  const size_t *keylens, int nargs, const char **args, const size_t *arglens);

/* Process-wide state for /health/readiness. */
enum sy_redis_state { SY_REDIS_NOT_CONFIGURED, SY_REDIS_CONNECTED, SY_REDIS_DISCONNECTED };
enum sy_redis_state sy_redis_global_state(void);
const char *sy_redis_state_name(enum sy_redis_state s); /* "not configured" | "connected" | "disconnected" */

#endif
