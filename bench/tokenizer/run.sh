#!/bin/sh
# run.sh - tokenizer benchmark: switchyard's C tokenizer vs npm tiktoken on
# prose, code, CJK (4 MB each) and a single 1 MB "word", one core each.
# Builds what it needs in ${BUILD:-/tmp/switchyard-bench-tok} and prints a table.
# With --http it also builds the release binary there and measures
# /utils/token_counter over HTTP (bench/tokenizer/http.mjs): 100 KB chats on
# one keep-alive connection, with npm tiktoken in-process in the same run.
set -eu
http=0
[ "${1:-}" = --http ] && http=1
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-/tmp/switchyard-bench-tok}
[ -f "$build/build.ninja" ] || meson setup "$build" "$root" -Dtests=false >/dev/null
ninja -C "$build" libsy_tokenizer.a libsy_core.a >/dev/null
[ "$http" = 1 ] && ninja -C "$build" switchyard >/dev/null
cc -O2 -I"$root/src" "$root/bench/tokenizer/bench_tok.c" "$build/libsy_tokenizer.a" "$build/libsy_core.a" \
    $(pkg-config --libs json-c) -lpthread -o "$build/sy-tok-bench"
(cd "$root/tests/tokenizer" && npm ci --silent --no-audit --no-fund)
node "$root/bench/tokenizer/gen-texts.mjs" "$build/texts"
node "$root/bench/tokenizer/bench.mjs" "$build/sy-tok-bench" "$build/texts"
[ "$http" = 0 ] || node "$root/bench/tokenizer/http.mjs" "$build/switchyard" "$build/texts"
