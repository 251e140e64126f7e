/* fuzz_activity.c - libFuzzer harness for the daily-activity routes' query
 * parsers (admin/activity.c): sy_activity_ymd (start_date / end_date) and
 * sy_activity_list (team_ids, tags).
 *
 * Input: the bytes as one NUL-terminated query value. Properties checked:
 *   - a date accepted is exactly "YYYY-MM-DD" with digits, and it round-trips
 *     through sscanf to the same text (no trailing bytes, no sign, no space);
 *   - a list's items are non-empty, shorter than 256 bytes, free of commas
 *     and of leading/trailing spaces, at most the maximum asked for, and each
 *     occurs in the input;
 *   - nothing reads or writes out of bounds (ASan) or crashes.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/activity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    if (sy_activity_ymd(s) == 0) {
        int y, m, d;
        char back[16];
        if (strlen(s) != 10 || sscanf(s, "%4d-%2d-%2d", &y, &m, &d) != 3)
            abort();
        snprintf(back, sizeof back, "%04d-%02d-%02d", y, m, d);
        if (strcmp(back, s) != 0 || m < 1 || m > 12 || d < 1 || d > 31)
            abort();
    }
    static char out[8][256];
    int n = sy_activity_list(s, out, 8);
    if (n > 8)
        abort();
    for (int i = 0; i < n; i++) {
        size_t len = strlen(out[i]);
        if (len == 0 || len > 255 || strchr(out[i], ',') || isspace((unsigned char)out[i][0]) ||
            isspace((unsigned char)out[i][len - 1]) || !strstr(s, out[i]))
            abort();
    }
    free(s);
    return 0;
}
