#!/usr/bin/env bash
# instr.sh - instructions and syscalls per request for switchyard and nginx (docs/bench.md).
#
#   bench/instr.sh [--requests N] [--conc C] [--case chat|stream] [--builddir DIR]
#                  [--top K] [--targets "nginx switchyard"] [--no-strace] [--keep DIR]
#
# Wall time on a shared machine is noise; instruction counts are not. For each target this
# starts the server (switchyard --workers 1, release build; nginx with one process:
# master_process off, daemon off) under valgrind --tool=callgrind, warms it up, zeroes the
# counters (callgrind_control -d), drives N requests (default 20000) at c=C (default 32) with
# wrk -t1 (bench/chat.lua, stopping after N responses), dumps again and prints
# user-space instructions per request (all threads of the process). Then, without valgrind,
# the same N requests with `strace -c -f -S calls -p` attached after warm-up: syscalls per request.
# Finally the top K (default 15) switchyard functions by self and by inclusive instructions,
# per request (callgrind_annotate). The mock upstream runs natively on the last CPU with wrk;
# the server under test on CPU 0. Output also goes to bench/results/instr.txt.
# Environment: SWITCHYARD (binary), BENCH_BUILDDIR, NGINX, WRK, VALGRIND.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
# The proxy path alone: no database (spend logging and keys are measured by
# bench/keys.sh). Set SWITCHYARD_DB to measure with one.
export SWITCHYARD_DB=${SWITCHYARD_DB:-none}
builddir=${BENCH_BUILDDIR:-$root/build-release}
nreq=20000 conc=32 case=chat top=15 do_strace=1 keep= targets="nginx switchyard"
while [ $# -gt 0 ]; do
  case $1 in
    --requests) nreq=$2; shift ;;
    --conc) conc=$2; shift ;;
    --case) case=$2; shift ;;
    --builddir) builddir=$2; shift ;;
    --top) top=$2; shift ;;
    --targets) targets=$2; shift ;;
    --no-strace) do_strace=0 ;;
    --keep) keep=$2; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
  shift
done
case $case in chat|stream) ;; *) echo "--case chat|stream" >&2; exit 2 ;; esac
WRK=${WRK:-/usr/bin/wrk}
NGINX=${NGINX:-/usr/sbin/nginx}
VALGRIND=${VALGRIND:-valgrind}
ensure_pkgs wrk:wrk nginx:nginx-light valgrind:valgrind strace:strace curl:curl taskset:util-linux

if [ ! -f "$builddir/build.ninja" ]; then
  meson setup "$builddir" "$root" --buildtype=release >/dev/null
fi
ninja -C "$builddir" tests/mock/mock_upstream >/dev/null
mock_bin=$builddir/tests/mock/mock_upstream
sy_bin=${SWITCHYARD:-$builddir/switchyard}
[ -n "${SWITCHYARD:-}" ] || ninja -C "$builddir" switchyard >/dev/null

tmp=$(mktemp -d /tmp/switchyard-instr.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "$keep" ]; then mkdir -p "$keep" && cp "$tmp"/callgrind.* "$keep"/ 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

ncpu=$(nproc)
srv=() gen=()
if [ "$ncpu" -ge 2 ]; then srv=(taskset -c 0) gen=(taskset -c "$((ncpu - 1))"); fi

"${gen[@]}" "$mock_bin" --port 0 --threads 1 --no-record >"$tmp/mock.out" 2>"$tmp/mock.err" &
pids+=("$!")
for _ in $(seq 100); do grep -q '^listening on' "$tmp/mock.out" && break; sleep 0.05; done
mock_port=$(awk '/^listening on/{print $3}' "$tmp/mock.out")
[ -n "$mock_port" ] || { echo "mock_upstream did not start"; cat "$tmp/mock.err"; exit 1; }

path=/v1/chat/completions
url() { # target
  case $1 in
    nginx) [ "$case" = stream ] && echo "http://127.0.0.1:$port/stream$path" || echo "http://127.0.0.1:$port$path" ;;
    switchyard) echo "http://127.0.0.1:$port$path" ;;
  esac
}
ping_url() { case $1 in nginx) echo "http://127.0.0.1:$port/ping" ;; *) echo "http://127.0.0.1:$port/health/liveliness" ;; esac; }

# start TARGET WRAPPER...: starts the server under the wrapper, sets $pid, $port
start() {
  local t=$1
  shift
  port=$(free_port)
  case $t in
    nginx)
      write_nginx_conf "$tmp/nginx" "$port" "$mock_port" 1 "master_process off;"
      "${srv[@]}" "$@" "$NGINX" -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx/" -e "$tmp/nginx/error.log" \
        >"$tmp/$t.log" 2>&1 &
      ;;
    switchyard)
      BENCH_MOCK_BASE=http://127.0.0.1:$mock_port/v1 "${srv[@]}" "$@" "$sy_bin" \
        --config "$here/switchyard.yaml" --port "$port" --workers 1 >"$tmp/$t.log" 2>&1 &
      ;;
  esac
  pid=$!
  pids+=("$pid")
  if ! wait_port "$port" 1200; then echo "$t did not start"; tail -5 "$tmp/$t.log"; exit 1; fi
  curl -s -m 30 "$(url "$t")" -H 'Content-Type: application/json' \
    -d '{"model":"bench-model","messages":[{"role":"user","content":"hi"}]}' | grep -q '"chat.completion"' ||
    { echo "$t: bad answer"; tail -5 "$tmp/$t.log"; exit 1; }
}
stop() { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }

drive() { # target requests -> sets $done_req (requests wrk completed), $errs
  local line stream=0
  [ "$case" = stream ] && stream=1
  line=$(BENCH_STREAM=$stream BENCH_MAX_REQUESTS=$2 "${gen[@]}" "$WRK" -t1 -c"$conc" -d3600s \
    -s "$here/chat.lua" "$(url "$1")" 2>&1 | grep '^BENCH ' || true)
  done_req=$(sed -n 's/.*requests=\([0-9]*\).*/\1/p' <<<"$line")
  errs=$(sed -n 's/.*errors=\([0-9]*\).*/\1/p' <<<"$line")
  [ -n "$done_req" ] || { echo "$1: wrk gave no result"; exit 1; }
}

# callgrind_control talks to the process through a file that valgrind polls while running
# guest code; a server asleep in epoll_wait is woken with a few pings until the command is done.
cgctl() { # pid option
  callgrind_control "$2" "$1" >"$tmp/cgctl.out" 2>&1 &
  local c=$!
  while kill -0 "$c" 2>/dev/null; do curl -s -m 5 "$(ping_url "$t")" >/dev/null || true; sleep 0.2; done
  wait "$c" || { echo "callgrind_control $2 failed:"; cat "$tmp/cgctl.out"; exit 1; }
}

declare -A ir_per sc_per sc_top nreq_done nerr
for t in $targets; do
  echo "$t: callgrind..."
  start "$t" "$VALGRIND" --tool=callgrind --callgrind-out-file="$tmp/callgrind.$t.%p"
  drive "$t" $((nreq / 10 > 200 ? nreq / 10 : 200)) # warm-up: pool, allocator, caches
  cgctl "$pid" -d # part 1: start-up and warm-up (a dump zeroes the counters)
  drive "$t" "$nreq"
  nreq_done[$t]=$done_req nerr[$t]=$errs
  cgctl "$pid" -d # part 2: the measured window
  stop
  f=$tmp/callgrind.$t.$pid.2
  [ -f "$f" ] || { echo "$t: no callgrind dump $f"; ls "$tmp"; exit 1; }
  cp "$f" "$tmp/callgrind.$t.window"
  ir=$(awk '/^summary:/{print $2; exit}' "$f")
  ir_per[$t]=$(awk -v a="$ir" -v n="$done_req" 'BEGIN{printf "%.0f", a/n}')
  echo "  $done_req requests, $errs errors, $ir instructions: ${ir_per[$t]} per request"

  if [ $do_strace = 1 ]; then
    echo "$t: strace..."
    start "$t"
    drive "$t" 2000
    strace -c -f -S calls -p "$pid" -o "$tmp/strace.$t" 2>"$tmp/strace.$t.err" &
    sp=$!
    sleep 1
    drive "$t" "$nreq"
    kill -INT "$sp" 2>/dev/null || true
    wait "$sp" 2>/dev/null || true
    stop
    calls=$(awk '$NF=="total"{print $4}' "$tmp/strace.$t")
    sc_per[$t]=$(awk -v a="${calls:-0}" -v n="$done_req" 'BEGIN{printf "%.2f", a/n}')
    sc_top[$t]=$(awk -v n="$done_req" '$1 ~ /^[0-9.]+$/ && $NF != "total" && $4 / n >= 0.01 {
        printf "%s %.2f, ", $NF, $4 / n }' "$tmp/strace.$t" | sed 's/, $//')
    echo "  $done_req requests: ${sc_per[$t]} syscalls per request"
  fi
done

# ---- report ----
per_req_table() { # file inclusive(yes|no)
  callgrind_annotate --inclusive="$2" --threshold=100 "$1" 2>/dev/null |
    awk -v n="${nreq_done[switchyard]}" -v k="$top" '
      /^-+$/ {sep++; next}
      sep >= 3 && $1 ~ /^[0-9,]+$/ {
        ir = $1; gsub(",", "", ir); ir += 0 # a number: compared with tot below, not as text
        name = $0; sub(/^ *[0-9,]+ *(\([^)]*\))? */, "", name); sub(/ \[.*\]$/, "", name); sub(/^[^ ]*:/, "", name)
        if (name ~ /PROGRAM TOTALS/) { tot = ir; next }
        # frames that were on the stack at both dumps (main, uv_run...) carry the whole cost
        if (ir >= 0.999 * tot) next
        if (++i > k) next
        printf "  %10.0f  %5.1f%%  %s\n", ir / n, 100 * ir / tot, name
      }'
}
report() {
  echo "switchyard instructions per request  $(date -u '+%Y-%m-%d %H:%M UTC')  $(uname -r)  ${ncpu} CPUs"
  echo "case $case, wrk -t1 -c$conc, $nreq requests after warm-up; server on CPU 0, wrk and mock on CPU $((ncpu - 1))"
  echo "switchyard: $sy_bin (--workers 1); nginx: $("$NGINX" -v 2>&1 | sed 's/.*: //') (master_process off, 1 process)"
  echo
  printf "%-11s %10s %8s %14s %14s\n" target requests errors "instr/req" "syscalls/req"
  for t in $targets; do
    printf "%-11s %10s %8s %14s %14s\n" "$t" "${nreq_done[$t]}" "${nerr[$t]}" "${ir_per[$t]}" "${sc_per[$t]:--}"
  done
  if [ -n "${ir_per[nginx]:-}" ] && [ -n "${ir_per[switchyard]:-}" ]; then
    echo "switchyard/nginx instructions: $(awk -v a="${ir_per[switchyard]}" -v b="${ir_per[nginx]}" 'BEGIN{printf "%.2f", a/b}')"
  fi
  if [ $do_strace = 1 ]; then
    echo
    echo "syscalls per request (strace -c -f, no valgrind):"
    for t in $targets; do echo "  $t: ${sc_top[$t]}"; done
  fi
  if [ -f "$tmp/callgrind.switchyard.window" ]; then
    echo
    echo "switchyard top $top functions by self instructions (per request, % of total):"
    per_req_table "$tmp/callgrind.switchyard.window" no
    echo
    echo "switchyard top $top functions by inclusive instructions (per request, % of total):"
    per_req_table "$tmp/callgrind.switchyard.window" yes
  fi
}
mkdir -p "$here/results"
report | tee "$here/results/instr.txt"
