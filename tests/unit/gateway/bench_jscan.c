/* bench_jscan.c - microbenchmark for the request-body scan (gateway/jscan.c).
 *
 * Scans bench/chat.lua's ~1 KB chat body (and its streaming variant) N times.
 * Meant to run under callgrind, whose instruction counts are stable on a noisy
 * machine; not built by meson:
 *
 *   cc -O2 -Isrc tests/unit/gateway/bench_jscan.c src/gateway/jscan.c -o /tmp/bench_jscan
 *   valgrind --tool=callgrind --toggle-collect=sy_jscan /tmp/bench_jscan 1000
 *
 * Instructions per body byte = Ir of sy_jscan (inclusive) / (N * bytes printed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/jscan.h"

static const char body[] =
    "{\"model\":\"bench-model\",\"messages\":["
    "{\"role\":\"system\",\"content\":\"You are a helpful assistant for a railway operations team. Answer "
    "concisely, cite the relevant section of the operating manual when you can, and say so plainly when you "
    "do not know. Use metric units and 24-hour times. When a question involves safety, remind the reader to "
    "follow the possession and isolation procedures before any work on the track.\"},"
    "{\"role\":\"user\",\"content\":\"Our night shift keeps seeing a signal fault on the approach to platform 4 "
    "between 02:10 and 02:40. The track circuit reports occupied although no train is there, and it clears by "
    "itself after a few minutes. We already replaced the relay last month. What are the three most likely "
    "causes, in order, and what should the technician check first on site tonight? Please keep it under 150 "
    "words.\"}],"
    "\"temperature\":0.2,\"max_tokens\":300,\"user\":\"bench-client-0001\","
    "\"stream\":true,\"stream_options\":{\"include_usage\":true},\"mock\":{\"chunks\":20}}";

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    size_t len = sizeof body - 1;
    long ok = 0;
    for (long i = 0; i < n; i++) {
        struct sy_jscan s;
        ok += sy_jscan(body, len, &s) == 0 && s.model.type == 's' && s.stream.type == 't';
    }
    printf("%ld scans of %zu bytes, %ld ok\n", n, len, ok);
    return ok == n ? 0 : 1;
}
