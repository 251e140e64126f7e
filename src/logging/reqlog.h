/* reqlog.h - the operator's request log (reqlog.c), written by the logging
 * thread: internal to src/logging. */
#ifndef SY_LOGGING_REQLOG_H
#define SY_LOGGING_REQLOG_H

#include "core/buf.h"
#include "logging/logging.h"

/* One line for r to stderr: text, or LiteLLM's JsonFormatter object when
 * lc->json_logs. */
void sy__reqlog_write(const struct sy_logconf *lc, const struct sy_logrec *r);
/* The line into b without the newline (tests). */
void sy__reqlog_format(const struct sy_logconf *lc, const struct sy_logrec *r, double now, struct sy_buf *b);

#endif
