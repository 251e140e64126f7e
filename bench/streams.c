/* streams.c - the concurrent streams client of bench/streams.sh.
 *
 *   streams HOST PORT PATH N [--spread-ms 1000] [--deltas 64] [--delay-ms 20]
 *           [--max-gap-ms 200] [--timeout-s 30] [--model M] [--rss-pid PID]...
 *
 * Opens N streaming chat requests, each on its own connection, started evenly
 * over --spread-ms. Every request asks the mock upstream for --deltas content
 * chunks --delay-ms apart ("mock": {"chunks", "chunk_delay_ms"}). A stream
 * passes when it gets a 200, every content delta ("delta":{"content"), the
 * final `data: [DONE]`, and never waits more than --max-gap-ms between
 * consecutive reads that carry deltas, counting from the moment it connected
 * (so the wait for the first delta is a gap too). Prints one summary line:
 *
 *   STREAMS n=.. pass=.. fail=.. ttft_p50_ms=.. ttft_p99_ms=.. ttft_max_ms=..
 *           gap_p99_ms=.. gap_max_ms=.. streams_over_gap=.. errors=.. peak_rss_kb=..
 *           base_rss_kb=..
 *
 * With --rss-pid (repeatable: nginx's master and worker) the summed VmRSS of
 * those processes is read before the first connect (base) and every 10 ms
 * while streams run (peak); bench/streams.sh turns that into bytes per stream.
 *
 * One thread, epoll, non-blocking sockets; nothing but libc. Built by
 * bench/streams.sh with `cc -O2`. Times are CLOCK_MONOTONIC.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MARK "\"delta\":{\"content\""
#define DONE "data: [DONE]"
#define CARRY 32 /* longer than either marker */

struct stream {
    int fd;
    int state; /* 0 not started, 1 connecting/sending, 2 reading, 3 done */
    int status;
    int deltas;
    int done_seen;
    int failed;
    size_t sent;
    double t_start, t_last, t_first, max_gap, t_sent, t_head;
    char carry[CARRY];
    size_t carry_len;
    size_t head_left; /* bytes of the status line still to check */
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static long rss_kb(const int *pids, int npids)
{
    long sum = 0;
    for (int i = 0; i < npids; i++) {
        char path[64], line[256];
        snprintf(path, sizeof path, "/proc/%d/status", pids[i]);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "VmRSS:", 6))
                sum += strtol(line + 6, NULL, 10);
        fclose(f);
    }
    return sum;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
    if (n == 0)
        return 0;
    int i = (int)(p / 100 * n);
    return v[i < n ? i : n - 1];
}

/* Count markers in carry+data, keep the tail as the next carry. */
static void scan(struct stream *s, const char *data, size_t len, double t)
{
    char buf[CARRY + 65536];
    size_t n = s->carry_len;
    memcpy(buf, s->carry, n);
    memcpy(buf + n, data, len);
    n += len;
    int got = 0;
    const char *p = buf, *end = buf + n;
    while ((p = memmem(p, (size_t)(end - p), MARK, sizeof MARK - 1))) {
        got++;
        p += sizeof MARK - 1;
    }
    if (!s->done_seen && memmem(buf, n, DONE, sizeof DONE - 1))
        s->done_seen = 1;
    if (got) {
        if (s->deltas == 0)
            s->t_first = t;
        double gap = t - s->t_last;
        if (gap > s->max_gap)
            s->max_gap = gap;
        s->t_last = t;
        s->deltas += got;
    }
    size_t keep = n < CARRY ? n : CARRY;
    /* a marker wholly inside the kept tail was counted: keep less than its length */
    if (keep > sizeof MARK - 2)
        keep = sizeof MARK - 2;
    memcpy(s->carry, buf + n - keep, keep);
    s->carry_len = keep;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: streams HOST PORT PATH N [--spread-ms MS] [--deltas K] "
                        "[--delay-ms MS] [--max-gap-ms MS] [--timeout-s S] [--model M] "
                        "[--rss-pid PID]...\n");
        return 2;
    }
    const char *host = argv[1], *path = argv[3], *model = "bench-model";
    int port = atoi(argv[2]), n = atoi(argv[4]);
    double spread = 1000, max_gap = 200, timeout = 30000;
    int deltas = 64, delay = 20, pids[8], npids = 0;
    for (int i = 5; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--spread-ms"))
            spread = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--deltas"))
            deltas = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--delay-ms"))
            delay = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--max-gap-ms"))
            max_gap = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--timeout-s"))
            timeout = atof(argv[i + 1]) * 1000;
        else if (!strcmp(argv[i], "--model"))
            model = argv[i + 1];
        else if (!strcmp(argv[i], "--rss-pid") && npids < 8)
            pids[npids++] = atoi(argv[i + 1]);
    }
    if (n <= 0)
        return 2;

    char body[512], req[1024];
    int blen = snprintf(body, sizeof body,
                        "{\"model\":\"%s\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                        "\"stream\":true,\"mock\":{\"chunks\":%d,\"chunk_delay_ms\":%d}}",
                        model, deltas, delay);
    int rlen = snprintf(req, sizeof req,
                        "POST %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
                        "Authorization: Bearer sk-bench\r\nContent-Length: %d\r\n\r\n%s",
                        path, host, port, blen, body);

    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        fprintf(stderr, "streams: HOST must be an IPv4 address\n");
        return 2;
    }
    struct stream *st = calloc((size_t)n, sizeof *st);
    int ep = epoll_create1(0);
    if (!st || ep < 0)
        return 1;
    long base_rss = npids ? rss_kb(pids, npids) : 0, peak_rss = base_rss;
    int started = 0, finished = 0, errors = 0;
    double t0 = now_ms(), next_rss = t0;
    static char rbuf[65536];
    struct epoll_event evs[256];

    while (finished < n) {
        double t = now_ms();
        if (t - t0 > timeout + spread)
            break;
        /* start every stream whose time has come */
        while (started < n && t - t0 >= spread * started / n) {
            struct stream *s = &st[started];
            s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            s->t_start = s->t_last = now_ms();
            s->state = 1;
            int one = 1;
            if (s->fd >= 0)
                setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            if (s->fd < 0 ||
                (connect(s->fd, (struct sockaddr *)&sa, sizeof sa) < 0 && errno != EINPROGRESS)) {
                s->failed = 1, s->state = 3, finished++, errors++;
                if (s->fd >= 0)
                    close(s->fd);
            } else {
                struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN, .data.u32 = (uint32_t)started};
                epoll_ctl(ep, EPOLL_CTL_ADD, s->fd, &ev);
            }
            started++;
        }
        if (npids && t >= next_rss) {
            long r = rss_kb(pids, npids);
            if (r > peak_rss)
                peak_rss = r;
            next_rss = t + 10;
        }
        int wait = 10;
        if (started < n) {
            double due = t0 + spread * started / n - now_ms();
            wait = due <= 0 ? 0 : due < 10 ? (int)due : 10;
        }
        int k = epoll_wait(ep, evs, 256, wait);
        double te = now_ms();
        for (int i = 0; i < k; i++) {
            struct stream *s = &st[evs[i].data.u32];
            if (s->state == 3)
                continue;
            int end = 0;
            if (s->state == 1 && (evs[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
                ssize_t w = send(s->fd, req + s->sent, (size_t)rlen - s->sent, MSG_NOSIGNAL);
                if (w < 0 && errno != EAGAIN)
                    end = 1, errors++;
                else if (w > 0 && (s->sent += (size_t)w) == (size_t)rlen) {
                    s->state = 2;
                    s->t_sent = te;
                    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = evs[i].data.u32};
                    epoll_ctl(ep, EPOLL_CTL_MOD, s->fd, &ev);
                }
            }
            if (!end && s->state == 2 && (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))) {
                for (;;) {
                    ssize_t r = recv(s->fd, rbuf, sizeof rbuf, 0);
                    if (r > 0) {
                        if (!s->status && r >= 12 && !memcmp(rbuf, "HTTP/1.1 ", 9)) {
                            s->status = atoi(rbuf + 9);
                            s->t_head = te;
                        }
                        scan(s, rbuf, (size_t)r, te);
                        if (s->done_seen)
                            break;
                        continue;
                    }
                    if (r == 0 || errno != EAGAIN) {
                        end = 1;
                        if (!s->done_seen)
                            errors++;
                    }
                    break;
                }
                if (s->done_seen)
                    end = 1;
            }
            if (end) {
                close(s->fd);
                s->state = 3;
                finished++;
            }
        }
    }

    double *ttft = malloc(sizeof(double) * (size_t)n), *gaps = malloc(sizeof(double) * (size_t)n);
    double *sent = malloc(sizeof(double) * (size_t)n), *head = malloc(sizeof(double) * (size_t)n);
    int pass = 0, nt = 0, over = 0;
    double ttft_max = 0, gap_max = 0;
    for (int i = 0; i < n; i++) {
        struct stream *s = &st[i];
        if (s->state != 3 && s->fd > 0)
            close(s->fd);
        if (s->deltas > 0) {
            double f = s->t_first - s->t_start;
            sent[nt] = s->t_sent - s->t_start;
            head[nt] = s->t_head - s->t_start;
            ttft[nt] = f;
            gaps[nt++] = s->max_gap;
            if (f > ttft_max)
                ttft_max = f;
            if (s->max_gap > gap_max)
                gap_max = s->max_gap;
        }
        if (s->max_gap > max_gap)
            over++;
        if (s->status == 200 && s->deltas == deltas && s->done_seen && !s->failed &&
            s->max_gap <= max_gap)
            pass++;
    }
    qsort(ttft, (size_t)nt, sizeof *ttft, cmp_d);
    qsort(gaps, (size_t)nt, sizeof *gaps, cmp_d);
    qsort(sent, (size_t)nt, sizeof *sent, cmp_d);
    qsort(head, (size_t)nt, sizeof *head, cmp_d);
    printf("STREAMS n=%d pass=%d fail=%d ttft_p50_ms=%.1f ttft_p99_ms=%.1f ttft_max_ms=%.1f "
           "gap_p99_ms=%.1f gap_max_ms=%.1f streams_over_gap=%d errors=%d peak_rss_kb=%ld "
           "base_rss_kb=%ld sent_p99_ms=%.1f sent_max_ms=%.1f head_p99_ms=%.1f head_max_ms=%.1f\n",
           n, pass, n - pass, pct(ttft, nt, 50), pct(ttft, nt, 99), ttft_max, pct(gaps, nt, 99),
           gap_max, over, errors, peak_rss, base_rss, pct(sent, nt, 99), pct(sent, nt, 100),
           pct(head, nt, 99), pct(head, nt, 100));
    return 0;
}
