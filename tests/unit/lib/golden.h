/* golden.h - the golden-file harness of the unit tests: one format, one
 * runner, one diff, one update switch.
 *
 * Format. A case is an input file <dir>/<case><in_ext> (".json", ".sse",
 * ".in" ...) and its expected output <dir>/<case><out_ext> (".out.json",
 * ".events", ".out" ...). The expected file holds the exact output bytes
 * followed by one newline (a file without that newline matches too, so an
 * editor that strips it does not break a case). Cases run in name order.
 *
 * Update. With SY_GOLDEN_UPDATE=1 in the environment every expected file is
 * (re)written from the output instead of compared; =new writes only the
 * missing ones. Read the diff before committing.
 *
 * Mismatch. The case fails and prints the file, the first line and column
 * that differ, and a few lines of each side around it:
 *
 *   golden/messages/req/tools.out.json:3:17: differs
 *     3 - "input_schema":{"type":"object"}}
 *     3 + "input_schema":{"type":"object","properties":{}}}
 *
 * Use (a test with cmocka):
 *
 *   static int run(void *ud, const char *dir, const char *name, const char *in, size_t n,
 *                  struct sy_buf *out) { return translate(in, n, out); }  // 0: compare out
 *   int ncases;
 *   assert_int_equal(sy_golden_run(GOLDEN_DIR "/x", ".json", ".out.json", run, NULL, &ncases), 0);
 *   assert_true(ncases > 0);
 *
 * A test with several outputs per case, or inputs in several files, reads
 * with sy_golden_read and checks each output with sy_golden_expect.
 */
#ifndef SY_TEST_GOLDEN_H
#define SY_TEST_GOLDEN_H

#include <stddef.h>

struct sy_buf;

/* The whole file, malloc'd and NUL-terminated (*n without the NUL; n may be
 * NULL); NULL when it cannot be read. */
char *sy_golden_read(const char *path, size_t *n);
/* 1 under SY_GOLDEN_UPDATE=1, 2 under =new, else 0. */
int sy_golden_updating(void);
/* got[0..n) against the expected file at path: 1 when it matches (or was
 * written in update mode), 0 when it differs or is missing (printed). */
int sy_golden_expect(const char *path, const char *got, size_t n);

/* One case: the input's bytes (NUL-terminated), its name without in_ext, and
 * dir. Returns 0 to have out compared with <case><out_ext>; SY_GOLDEN_SKIP
 * when the file is not one of this runner's cases (a directory shared by
 * several tests: another prefix); any other value when the case failed on
 * its own (it printed why). */
#define SY_GOLDEN_SKIP 2
typedef int (*sy_golden_fn)(void *ud, const char *dir, const char *name, const char *in, size_t n, struct sy_buf *out);
/* Run fn on every <case><in_ext> in dir (whose name does not also end in
 * out_ext). Returns the number of failed cases; *ncases (may be NULL) gets the
 * number run (skipped files not counted). The out buffer is 64 MiB capped; a case whose output hit the
 * cap fails. */
int sy_golden_run(const char *dir, const char *in_ext, const char *out_ext, sy_golden_fn fn, void *ud, int *ncases);

#endif
