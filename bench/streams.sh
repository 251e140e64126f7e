#!/usr/bin/env bash
# streams.sh - how many concurrent paced streams one worker holds: nginx (proxy_buffering
# off, 1 worker) and switchyard (--workers 1) in the same run, with the mock upstream
# directly as the reference (docs/bench.md, "Concurrent streams").
#
#   bench/streams.sh [--counts "1024 2048 2304 3072 4096"] [--targets "direct nginx switchyard"]
#                    [--deltas 64] [--delay-ms 20] [--spread-ms 1000] [--max-gap-ms 200]
#                    [--mock-threads 2] [--pinned] [--builddir DIR]
#
# Each stream is a streaming chat request on its own connection; the mock sends --deltas
# content chunks --delay-ms apart; streams start evenly over --spread-ms. A stream passes
# with a 200, every delta, `data: [DONE]`, and no wait over --max-gap-ms (from connecting
# to the first delta, and between deltas). A count passes when every stream does. For
# each count (ascending) every target still passing runs once, interleaved; a target
# stops at its first failing count. Memory per stream = (peak RSS during the run - RSS
# before, each proxy started afresh and warmed with 8 short streams) / streams (nginx: master
# + worker). The client is bench/streams.c (one thread,
# epoll), built here with cc. --pinned: the proxies on CPU 0, the mock and the client on
# the others. Writes the table to bench/results/streams.txt.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
export SWITCHYARD_DB=${SWITCHYARD_DB:-none}
counts="1024 2048 2304 3072 4096" targets="direct nginx switchyard"
deltas=64 delay=20 spread=1000 maxgap=200 mthreads=2 pinned=0
while [ $# -gt 0 ]; do
  case $1 in
    --counts) counts=$2; shift ;;
    --targets) targets=$2; shift ;;
    --deltas) deltas=$2; shift ;;
    --delay-ms) delay=$2; shift ;;
    --spread-ms) spread=$2; shift ;;
    --max-gap-ms) maxgap=$2; shift ;;
    --mock-threads) mthreads=$2; shift ;;
    --pinned) pinned=1 ;;
    --builddir) BENCH_BUILDDIR=$2; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
  shift
done
NGINX=${NGINX:-/usr/sbin/nginx}
ensure_pkgs nginx:nginx-light curl:curl cc:gcc taskset:util-linux
bench_setup
max=0
for n in $counts; do [ "$n" -gt "$max" ] && max=$n; done
# every proxied stream holds two sockets in the proxy, one in the client and one in the mock
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
[ "$(ulimit -n)" -ge $((2 * max + 64)) ] || echo "warning: ulimit -n $(ulimit -n) is low for $max streams"
cc -O2 -o "$tmp/streams" "$here/streams.c"

srv=() gen=()
if [ $pinned = 1 ] && [ "$(nproc)" -ge 2 ]; then
  srv=(taskset -c 0) gen=(taskset -c "1-$(($(nproc) - 1))")
fi
"${gen[@]}" "$builddir/tests/mock/mock_upstream" --port 0 --threads "$mthreads" --no-record >"$tmp/mock.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q '^listening on' "$tmp/mock.out" && break; sleep 0.05; done
mock_port=$(awk '/^listening on/{print $3}' "$tmp/mock.out")
[ -n "$mock_port" ] || { echo "mock_upstream did not start"; exit 1; }

# Each proxy is started afresh for every run (a process keeps the heap of an earlier run,
# which would hide a later run's growth) and warmed with a few streams before its base RSS.
nginx_port= sy_port= nginx_pid= sy_pid=
start_target() { # on a new port each time: the last run's sockets may still hold the old one
  case $1 in
    nginx)
      nginx_port=$(free_port)
      NGINX_CONNS=$((2 * max + 64)) write_nginx_conf "$tmp/nginx" "$nginx_port" "$mock_port" 1 \
        "worker_rlimit_nofile $((2 * max + 256));"
      "${srv[@]}" "$NGINX" -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx/" -e "$tmp/nginx/error.log" &
      nginx_pid=$!
      pids+=($nginx_pid)
      wait_port "$nginx_port" || { echo "nginx did not start"; cat "$tmp/nginx/error.log"; exit 1; } ;;
    switchyard)
      sy_port=$(free_port)
      BENCH_MOCK_BASE=http://127.0.0.1:$mock_port/v1 "${srv[@]}" "${SWITCHYARD:-$builddir/switchyard}" \
        --config "$here/switchyard.yaml" --port "$sy_port" --workers 1 >"$tmp/switchyard.log" 2>&1 &
      sy_pid=$!
      pids+=($sy_pid)
      wait_port "$sy_port" || { echo "switchyard did not start"; tail -5 "$tmp/switchyard.log"; exit 1; } ;;
  esac
  "${gen[@]}" "$tmp/streams" 127.0.0.1 "$(t_port "$1")" "$(t_path "$1")" 8 --deltas 4 --spread-ms 50 >/dev/null
}
stop_target() {
  local p=
  case $1 in nginx) p=$nginx_pid ;; switchyard) p=$sy_pid ;; esac
  [ -n "$p" ] || return 0
  kill "$p" 2>/dev/null || true
  wait "$p" 2>/dev/null || true
}

t_port() { case $1 in direct) echo "$mock_port" ;; nginx) echo "$nginx_port" ;; *) echo "$sy_port" ;; esac; }
t_path() { [ "$1" = nginx ] && echo /stream/v1/chat/completions || echo /v1/chat/completions; }
t_rss() { # the processes whose memory counts (nginx: master and worker)
  case $1 in
    nginx) for p in $nginx_pid $(pgrep -P "$nginx_pid"); do echo "--rss-pid $p"; done ;;
    switchyard) echo "--rss-pid $sy_pid" ;;
  esac
}
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$line"; }

declare -A best alive
for t in $targets; do best[$t]=0 alive[$t]=1; done
results=()
for n in $counts; do
  for t in $targets; do
    [ "${alive[$t]}" = 1 ] || continue
    echo "streams: $t n=$n ..."
    start_target "$t"
    # shellcheck disable=SC2046
    line=$("${gen[@]}" "$tmp/streams" 127.0.0.1 "$(t_port "$t")" "$(t_path "$t")" "$n" \
      --deltas "$deltas" --delay-ms "$delay" --spread-ms "$spread" --max-gap-ms "$maxgap" \
      $(t_rss "$t") | grep '^STREAMS ' || true)
    stop_target "$t"
    if [ -z "$line" ]; then
      results+=("$(printf '%-11s %6s %s' "$t" "$n" "client failed")")
      alive[$t]=0
      continue
    fi
    mem=-
    [ "$t" != direct ] && mem=$(awk -v p="$(field peak_rss_kb)" -v b="$(field base_rss_kb)" -v n="$n" \
      'BEGIN{printf "%.1f", (p - b) / n}')
    results+=("$(printf '%-11s %6s %6s %6s %9s %9s %9s %9s %10s' "$t" "$n" "$(field pass)" "$(field fail)" \
      "$(field ttft_p50_ms)" "$(field ttft_max_ms)" "$(field gap_p99_ms)" "$(field gap_max_ms)" "$mem")")
    if [ "$(field fail)" = 0 ]; then best[$t]=$n; else alive[$t]=0; fi
    sleep 2 # let the closed connections settle
  done
done

report() {
  echo "switchyard bench: concurrent streams  $(date -u '+%Y-%m-%d %H:%M UTC')  $(uname -r)  $(nproc) CPUs"
  echo "each stream: $deltas deltas ${delay} ms apart on its own connection; streams start evenly over ${spread} ms;"
  echo "pass = 200, every delta, [DONE], no wait over ${maxgap} ms; 1 worker each; mock threads $mthreads;" \
    "pinned: $([ $pinned = 1 ] && echo 'proxies on CPU 0' || echo no)"
  echo
  printf '%-11s %6s %6s %6s %9s %9s %9s %9s %10s\n' target streams pass fail ttft_p50 ttft_max gap_p99 gap_max kB/stream
  printf '%s\n' "${results[@]}"
  echo
  for t in $targets; do printf 'highest passing count: %-11s %s\n' "$t" "${best[$t]}"; done
}
mkdir -p "$here/results"
report | tee "$here/results/streams.txt"
