/* mcp_int.h - internal to src/mcp/: what the pool (client.c) needs of its
 * transports. http.c and sse.c are client.c's own business over
 * upstream/client.h; stdio.c is a line transport over a supervised child. */
#ifndef SY_MCP_INT_H
#define SY_MCP_INT_H

#include <stddef.h>
#include <uv.h>

#include "mcp/mcp.h"

/* ---- stdio.c: one stdio server's child process on a loop ----
 * Spawns s->command with s->args and s->env (added to a minimal environment:
 * PATH, HOME, LANG), stdin/stdout pipes, stderr read and logged at a bounded
 * rate with the server's name. Each stdout line (a JSON-RPC message; lines
 * longer than max_line are dropped whole and counted, the child is not
 * trusted) goes to on_msg. When the child exits or its pipes fail:
 * on_state(ud, 0), then a restart after a back-off (1 s, doubling to 60 s;
 * reset after 60 s of life), and on_state(ud, 1) once the new child runs
 * (the pool must initialize it again).
 * The first child is spawned inside sy_mcp_stdio_start, without on_state:
 * sy_mcp_stdio_running says whether it runs (when it could not start, the
 * restarts follow and on_state(ud, 1) reports the first that runs). A
 * server from the database (from_db) is refused (NULL): only the config
 * starts processes. Callbacks may call send and stop; none follows stop. */
struct sy_mcp_stdio;
struct sy_mcp_stdio_cbs {
    void (*on_msg)(void *ud, const char *line, size_t n);
    void (*on_state)(void *ud, int running);
};
struct sy_mcp_stdio *sy_mcp_stdio_start(uv_loop_t *loop, const struct sy_mcp_server *s, size_t max_line,
                                        const struct sy_mcp_stdio_cbs *cbs, void *ud);
/* Write one message (a newline is added); 0, or -1 when no child runs now. */
int sy_mcp_stdio_send(struct sy_mcp_stdio *t, const char *msg, size_t n);
/* 1 while a child runs. */
int sy_mcp_stdio_running(const struct sy_mcp_stdio *t);
/* Stop: SIGTERM, SIGKILL after 2 s, no more callbacks; frees itself once
 * its handles are closed. */
void sy_mcp_stdio_stop(struct sy_mcp_stdio *t);
/* Children started and restarted (stats). */
void sy_mcp_stdio_counts(const struct sy_mcp_stdio *t, unsigned long *spawns, unsigned long *restarts);
/* stdout lines dropped for their length (stats). */
unsigned long sy_mcp_stdio_dropped(const struct sy_mcp_stdio *t);
/* The running child's pid, 0 when none (tests). */
int sy_mcp_stdio_pid(const struct sy_mcp_stdio *t);

#endif
