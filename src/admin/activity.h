/* activity.h - the query-string parsers of the daily-activity routes
 * (admin/activity.c), exported for their fuzz harness. Pure functions: no
 * store, no context.
 */
#ifndef SY_ADMIN_ACTIVITY_H
#define SY_ADMIN_ACTIVITY_H

#include <stddef.h>

/* 0 when s is exactly a calendar date "YYYY-MM-DD" (month 1-12, day valid
 * for the month, leap years counted), else -1. */
int sy_activity_ymd(const char *s);

/* Split a comma-separated list ("a, b,,c") into at most max trimmed,
 * non-empty items, each copied NUL-terminated into out[i] (cap bytes each).
 * Returns the number of items, or -1 when there are more than max or an item
 * is longer than cap - 1. */
int sy_activity_list(const char *s, char (*out)[256], int max);

#endif
