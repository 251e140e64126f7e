/* golden.c - the golden-file harness; see golden.h for the format. */
#include "golden.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

char *sy_golden_read(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct sy_buf b;
    sy_buf_init(&b, (size_t)1 << 30);
    char t[65536];
    size_t k;
    while ((k = fread(t, 1, sizeof t, f)) > 0)
        sy_buf_append(&b, t, k);
    int bad = ferror(f) || sy_buf_failed(&b);
    fclose(f);
    if (bad) {
        sy_buf_free(&b);
        return NULL;
    }
    if (!b.p) /* an empty file */
        SY_BUF_LIT(&b, "");
    if (n)
        *n = b.len;
    return b.p;
}

int sy_golden_updating(void)
{
    const char *u = getenv("SY_GOLDEN_UPDATE");
    if (!u)
        return 0;
    if (!strcmp(u, "1"))
        return 1;
    return !strcmp(u, "new") ? 2 : 0;
}

static int write_file(const char *path, const char *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "%s: cannot write\n", path);
        return 0;
    }
    int ok = fwrite(p, 1, n, f) == n && fputc('\n', f) != EOF;
    return fclose(f) == 0 && ok;
}

/* Print line `line` (1-based) of s[0..n) prefixed with the marker. */
static void show_line(const char *mark, const char *s, size_t n, size_t start)
{
    size_t e = start;
    while (e < n && s[e] != '\n')
        e++;
    size_t len = e - start;
    fprintf(stderr, "    %s %.*s%s\n", mark, (int)(len > 200 ? 200 : len), s + start, len > 200 ? "..." : "");
}

/* The first differing line and the lines around it, from each side. */
static void show_diff(const char *path, const char *want, size_t wn, const char *got, size_t gn)
{
    size_t i = 0, line = 1, bol = 0;
    while (i < wn && i < gn && want[i] == got[i]) {
        if (want[i] == '\n')
            line++, bol = i + 1;
        i++;
    }
    fprintf(stderr, "%s:%zu:%zu: differs (expected %zu bytes, got %zu)\n", path, line, i - bol + 1, wn, gn);
    /* up to two lines of context before, on both sides the same */
    size_t ctx = bol, back = 0;
    while (ctx > 0 && back < 2) {
        ctx--;
        while (ctx > 0 && want[ctx - 1] != '\n')
            ctx--;
        back++;
    }
    for (size_t p = ctx; p < bol;) {
        show_line(" ", want, wn, p);
        while (p < bol && want[p] != '\n')
            p++;
        p++;
    }
    /* then three lines of each side from the one that differs */
    for (int side = 0; side < 2; side++) {
        const char *s = side ? got : want;
        size_t n = side ? gn : wn, p = bol;
        for (int k = 0; k < 3 && p < n; k++) {
            show_line(side ? "+" : "-", s, n, p);
            while (p < n && s[p] != '\n')
                p++;
            p++;
        }
        if (p >= n && bol >= n)
            fprintf(stderr, "    %s (end of %s)\n", side ? "+" : "-", side ? "output" : "file");
    }
}

int sy_golden_expect(const char *path, const char *got, size_t n)
{
    int up = sy_golden_updating();
    size_t wn = 0;
    char *want = up == 1 ? NULL : sy_golden_read(path, &wn);
    if (up == 1 || (up == 2 && !want))
        return write_file(path, got ? got : "", n);
    if (!want) {
        fprintf(stderr, "%s: missing (SY_GOLDEN_UPDATE=new writes it)\n", path);
        return 0;
    }
    size_t cmp = wn == n + 1 && want[n] == '\n' ? n : wn;
    int ok = cmp == n && (!n || !memcmp(want, got, n));
    if (!ok)
        show_diff(path, want, cmp, got ? got : "", n);
    free(want);
    return ok;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a > b && !strcmp(s + a - b, suf);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int sy_golden_run(const char *dir, const char *in_ext, const char *out_ext, sy_golden_fn fn, void *ud, int *ncases)
{
    int failed = 0, run = 0;
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "%s: cannot open\n", dir);
        if (ncases)
            *ncases = 0;
        return 1;
    }
    char **names = NULL;
    size_t nn = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !ends_with(e->d_name, in_ext) || ends_with(e->d_name, out_ext))
            continue;
        names = realloc(names, (nn + 1) * sizeof *names);
        names[nn++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, nn, sizeof *names, name_cmp);
    for (size_t i = 0; i < nn; i++) {
        char path[4096], name[1024];
        snprintf(name, sizeof name, "%.*s", (int)(strlen(names[i]) - strlen(in_ext)), names[i]);
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        size_t n = 0;
        char *in = sy_golden_read(path, &n);
        struct sy_buf out;
        sy_buf_init(&out, (size_t)64 << 20);
        int ok = 0, rc = in ? fn(ud, dir, name, in, n, &out) : -1;
        if (rc == SY_GOLDEN_SKIP) {
            sy_buf_free(&out);
            free(in);
            free(names[i]);
            continue;
        }
        if (!in) {
            fprintf(stderr, "%s: cannot read\n", path);
        } else if (rc != 0) {
            fprintf(stderr, "%s: case failed\n", path);
        } else if (sy_buf_failed(&out)) {
            fprintf(stderr, "%s: output over its cap\n", path);
        } else {
            snprintf(path, sizeof path, "%s/%s%s", dir, name, out_ext);
            ok = sy_golden_expect(path, out.p, out.len);
        }
        failed += !ok;
        run++;
        sy_buf_free(&out);
        free(in);
        free(names[i]);
    }
    free(names);
    if (ncases)
        *ncases = run;
    return failed;
}
