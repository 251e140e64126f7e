#!/usr/bin/env bash
# run.sh - switchyard's overhead against the mock upstream directly and against
# nginx proxy_pass, measured in the same run (docs/bench.md explains the output).
#
#   bench/run.sh [--quick] [--rounds N] [--duration S] [--builddir DIR]
#                [--pinned | --no-pin] [--workers N] [--wrk-threads T] [--full]
#
# Builds a release tree (build-release/ or $BENCH_BUILDDIR; $SWITCHYARD overrides the
# binary), starts on loopback:
#   mock_upstream (1 thread, --no-record)
#   nginx          (N workers, default 1, proxy_pass to the mock, upstream keepalive 256)
#   switchyard     (--workers N, bench/switchyard.yaml -> the mock)
# then runs wrk (bench/chat.lua, ~1 KB chat body) against each at c=1, 8, 32, 256
# for a JSON case and an SSE case (20 chunks), interleaving targets within each
# round, reading each server's CPU time (/proc/PID/stat utime+stime; nginx: master
# and workers) before and after every run, then times the first content chunk of a
# paced stream (bench/ttft.mjs, if node is installed). Prints a table with CPU us per
# request, the RPS and CPU ratios, the added latency and switchyard's RSS; writes the
# same text to bench/results/latest.txt (--pinned: latest-pinned.txt, --workers N>1:
# latest-wN.txt). A switchyard that does not answer is reported and skipped.
# Layouts: default = servers and mock on CPUs 0..n-2, wrk on the last CPU;
# --pinned = nginx and switchyard on CPU 0 (0..N-1 with --workers N), the mock and wrk
# on the other CPU(s); --no-pin = nothing pinned. Instructions per request: bench/instr.sh.
# --full: then the path users run (bench/full.sh: virtual key with an rpm limit, SQLite
# spend logs, four deployments under usage-based-routing-v2) against nginx and the
# pass-through, same rounds, duration, pinning and workers.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
# The proxy path alone: no database (spend logging and keys are measured by
# bench/keys.sh). Set SWITCHYARD_DB to measure with one.
export SWITCHYARD_DB=${SWITCHYARD_DB:-none}
builddir=${BENCH_BUILDDIR:-$root/build-release}
quick=0 rounds= dur= layout=default workers=1 wthreads=1 full=0
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --rounds) rounds=$2; shift ;;
    --duration) dur=$2; shift ;;
    --builddir) builddir=$2; shift ;;
    --no-pin) layout=none ;;
    --pinned) layout=pinned ;;
    --workers) workers=$2; shift ;;
    --wrk-threads) wthreads=$2; shift ;;
    --full) full=1 ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
  shift
done
if [ $quick = 1 ]; then dur=${dur:-3} rounds=${rounds:-1}; else dur=${dur:-10} rounds=${rounds:-2}; fi
WRK=${WRK:-/usr/bin/wrk}
NGINX=${NGINX:-/usr/sbin/nginx}
CONCS=(1 8 32 256)
CASES=(chat stream)
TARGETS=(direct nginx switchyard)
ensure_pkgs wrk:wrk nginx:nginx-light curl:curl taskset:util-linux

# ---- build ----
if [ ! -f "$builddir/build.ninja" ]; then
  meson setup "$builddir" "$root" --buildtype=release >/dev/null
fi
ninja -C "$builddir" tests/mock/mock_upstream >/dev/null
mock_bin=$builddir/tests/mock/mock_upstream
sy_bin=${SWITCHYARD:-$builddir/switchyard}
sy_built=1
if [ -z "${SWITCHYARD:-}" ] &&
  ! ninja -C "$builddir" switchyard >"$builddir/bench-switchyard-build.log" 2>&1; then
  sy_built=0
  echo "switchyard: build failed (see $builddir/bench-switchyard-build.log)"
fi

# ---- processes ----
tmp=$(mktemp -d /tmp/switchyard-bench.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# srv: the proxies (nginx, switchyard); mck: the mock upstream; gen: wrk (and node)
srv=() mck=() gen=() pin_note="none"
ncpu=$(nproc)
command -v taskset >/dev/null || layout=none
cpus() { [ "$1" = "$2" ] && echo "$1" || echo "$1-$2"; }
case $layout in
  default)
    if [ "$ncpu" -ge $((workers + 1)) ]; then
      srv=(taskset -c "$(cpus 0 $((ncpu - 2)))") mck=("${srv[@]}") gen=(taskset -c "$((ncpu - 1))")
      pin_note="servers and mock on CPU $(cpus 0 $((ncpu - 2))), wrk on CPU $((ncpu - 1))"
    fi ;;
  pinned)
    if [ "$ncpu" -ge $((workers + 1)) ]; then
      srv=(taskset -c "$(cpus 0 $((workers - 1)))") mck=(taskset -c "$(cpus "$workers" $((ncpu - 1)))")
      gen=("${mck[@]}")
      pin_note="pinned: nginx and switchyard on CPU $(cpus 0 $((workers - 1))), mock and wrk on CPU $(cpus "$workers" $((ncpu - 1)))"
    else
      layout=none
    fi ;;
esac
if [ ${#srv[@]} = 0 ]; then
  pin_note="nothing pinned"
  [ "$layout" != none ] && pin_note="$pin_note (needs more CPUs than --workers; $ncpu CPUs)"
fi

"${mck[@]}" "$mock_bin" --port 0 --threads 1 --no-record >"$tmp/mock.out" 2>"$tmp/mock.err" &
mock_pid=$!
pids+=("$mock_pid")
for _ in $(seq 100); do grep -q '^listening on' "$tmp/mock.out" && break; sleep 0.05; done
mock_port=$(awk '/^listening on/{print $3}' "$tmp/mock.out")
[ -n "$mock_port" ] || { echo "mock_upstream did not start"; cat "$tmp/mock.err"; exit 1; }

nginx_port=$(free_port)
write_nginx_conf "$tmp/nginx" "$nginx_port" "$mock_port" "$workers"
"${srv[@]}" "$NGINX" -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx/" -e "$tmp/nginx/error.log" &
nginx_pid=$!
pids+=("$nginx_pid")
wait_port "$nginx_port" || { echo "nginx did not start"; cat "$tmp/nginx/error.log"; exit 1; }

sy_port=$(free_port) sy_pid= sy_ok=0 rss_idle=
if [ $sy_built = 1 ]; then
  BENCH_MOCK_BASE=http://127.0.0.1:$mock_port/v1 "${srv[@]}" "$sy_bin" \
    --config "$here/switchyard.yaml" --port "$sy_port" --workers "$workers" >"$tmp/switchyard.log" 2>&1 &
  sy_pid=$!
  pids+=($sy_pid)
  for _ in $(seq 50); do
    if curl -s -m 2 "http://127.0.0.1:$sy_port/v1/chat/completions" -H 'Content-Type: application/json' \
      -d '{"model":"bench-model","messages":[{"role":"user","content":"hi"}]}' 2>/dev/null |
      grep -q '"chat.completion"'; then
      sy_ok=1
      break
    fi
    kill -0 "$sy_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ $sy_ok = 1 ]; then
    rss_idle=$(awk '/^VmRSS/{print $2}' "/proc/$sy_pid/status")
  else
    echo "switchyard: not answering (last lines of its log follow; skipping it)"
    tail -5 "$tmp/switchyard.log" | sed 's/^/  | /'
  fi
fi

url() { # target case
  local path=/v1/chat/completions
  case $1 in
    direct) echo "http://127.0.0.1:$mock_port$path" ;;
    nginx) [ "$2" = stream ] && path=/stream$path; echo "http://127.0.0.1:$nginx_port$path" ;;
    switchyard) echo "http://127.0.0.1:$sy_port$path" ;;
  esac
}
active() { [ "$1" != switchyard ] || [ $sy_ok = 1 ]; }
# server_pids TARGET: the processes whose CPU time counts for it (nginx: master and workers,
# looked up each time in case a worker was replaced)
server_pids() {
  case $1 in
    direct) echo "$mock_pid" ;;
    nginx) proc_tree "$nginx_pid" ;;
    switchyard) echo "$sy_pid" ;;
  esac
}

# Sanity: every active target answers both cases correctly before we time it.
for t in "${TARGETS[@]}"; do
  active "$t" || continue
  body='{"model":"bench-model","messages":[{"role":"user","content":"hi"}]'
  curl -s -m 5 "$(url "$t" chat)" -H 'Content-Type: application/json' -d "$body}" |
    grep -q '"chat.completion"' || { echo "$t: bad JSON answer"; exit 1; }
  curl -s -m 5 "$(url "$t" stream)" -H 'Content-Type: application/json' \
    -d "$body,\"stream\":true,\"mock\":{\"chunks\":20}}" |
    grep -q 'data: \[DONE\]' || { echo "$t: bad stream answer"; exit 1; }
done

declare -A rps p50 p99 errs runs cpu nreq
run_wrk() { # target case conc seconds -> sets $line, $ticks (server CPU during the run)
  local threads=$wthreads stream=0 sp t0
  [ "$2" = stream ] && stream=1
  [ "$3" -lt "$threads" ] && threads=$3
  sp=$(server_pids "$1")
  # shellcheck disable=SC2086
  t0=$(cpu_ticks $sp)
  line=$(BENCH_STREAM=$stream "${gen[@]}" "$WRK" -t"$threads" -c"$3" -d"$4"s --latency \
    -s "$here/chat.lua" "$(url "$1" "$2")" 2>&1 | grep '^BENCH ' || true)
  # shellcheck disable=SC2086
  ticks=$(( $(cpu_ticks $sp) - t0 ))
}
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" <<<"$line"; }

echo "warming up..."
for t in "${TARGETS[@]}"; do
  active "$t" || continue
  for c in "${CASES[@]}"; do run_wrk "$t" "$c" 32 1; done
done

total=$((rounds * ${#CONCS[@]} * ${#CASES[@]}))
n=0
for r in $(seq "$rounds"); do
  for conc in "${CONCS[@]}"; do
    for cs in "${CASES[@]}"; do
      n=$((n + 1))
      echo "round $r/$rounds: $cs c=$conc ($n/$total)"
      for t in "${TARGETS[@]}"; do
        active "$t" || continue
        run_wrk "$t" "$cs" "$conc" "$dur"
        [ -n "$line" ] || { echo "  $t: wrk gave no result"; continue; }
        k="$t|$cs|$conc"
        rps[$k]=$(awk -v a="${rps[$k]:-0}" -v b="$(field rps)" 'BEGIN{print a+b}')
        p50[$k]=$(( ${p50[$k]:-0} + $(field p50_us) ))
        p99[$k]=$(( ${p99[$k]:-0} + $(field p99_us) ))
        errs[$k]=$(( ${errs[$k]:-0} + $(field errors) ))
        runs[$k]=$(( ${runs[$k]:-0} + 1 ))
        cpu[$k]=$(( ${cpu[$k]:-0} + ticks ))
        nreq[$k]=$(( ${nreq[$k]:-0} + $(field requests) ))
      done
    done
  done
done
# Time to first token on a paced stream (needs node; optional).
declare -A ttft50 ttft99
if command -v node >/dev/null; then
  echo "time to first token..."
  for t in "${TARGETS[@]}"; do
    active "$t" || continue
    line=$("${gen[@]}" node "$here/ttft.mjs" "$(url "$t" stream)" $([ $quick = 1 ] && echo 20 || echo 50) 2>&1 |
      grep '^TTFT ' || true)
    [ -n "$line" ] && [ "$(field errors)" = 0 ] || { echo "  $t: ttft failed: $line"; continue; }
    ttft50[$t]=$(field p50_us) ttft99[$t]=$(field p99_us)
  done
fi
rss_load= rss_peak=
if [ $sy_ok = 1 ] && [ -r "/proc/$sy_pid/status" ]; then
  rss_load=$(awk '/^VmRSS/{print $2}' "/proc/$sy_pid/status")
  rss_peak=$(awk '/^VmHWM/{print $2}' "/proc/$sy_pid/status")
fi

# ---- report ----
avg_rps() { awk -v s="${rps[$1]}" -v n="${runs[$1]}" 'BEGIN{printf "%.0f", s/n}'; }
avg_us() { local -n a=$1; echo $(( ${a[$2]} / ${runs[$2]} )); }
ms() { awk -v u="$1" 'BEGIN{printf "%.3f", u/1000}'; }
cpu_us() { # key -> server CPU us per request over all its runs
  awk -v t="${cpu[$1]}" -v n="${nreq[$1]}" -v hz="$CLK_TCK" 'BEGIN{ if (n > 0) printf "%.1f", t * 1e6 / hz / n; else print "-" }'
}
ratio() { awk -v x="$1" -v y="$2" 'BEGIN{ if (x == "-" || y == "-" || y == 0) print "-"; else printf "%.2f", x/y }'; }
report() {
  echo "switchyard bench  $(date -u '+%Y-%m-%d %H:%M UTC')  $(uname -r)  ${ncpu} CPUs"
  echo "wrk -t$wthreads --latency, ${dur}s per run, $rounds round(s) interleaved; workers: $workers (nginx and switchyard)"
  echo "layout: $layout; pinning: $pin_note"
  echo "body: bench/chat.lua (~1 KB chat request); stream case: SSE, 20 content chunks + usage"
  echo
  printf "%-11s %-7s %5s %10s %10s %10s %8s %12s\n" target case conc rps p50_ms p99_ms errors cpu_us/req
  for cs in "${CASES[@]}"; do
    for conc in "${CONCS[@]}"; do
      for t in "${TARGETS[@]}"; do
        k="$t|$cs|$conc"
        if [ -z "${runs[$k]:-}" ]; then
          [ "$t" = switchyard ] && printf "%-11s %-7s %5s %10s\n" "$t" "$cs" "$conc" "not answering"
          continue
        fi
        printf "%-11s %-7s %5s %10s %10s %10s %8s %12s\n" "$t" "$cs" "$conc" "$(avg_rps "$k")" \
          "$(ms "$(avg_us p50 "$k")")" "$(ms "$(avg_us p99 "$k")")" "${errs[$k]}" "$(cpu_us "$k")"
      done
    done
  done
  echo
  echo "throughput ratios (rps):"
  printf "  %-7s %5s %16s %16s %16s\n" case conc switchyard/nginx nginx/direct switchyard/direct
  for cs in "${CASES[@]}"; do
    for conc in "${CONCS[@]}"; do
      local d="direct|$cs|$conc" ng="nginx|$cs|$conc" sy="switchyard|$cs|$conc" a=- b=- c=-
      [ -n "${runs[$sy]:-}" ] && [ -n "${runs[$ng]:-}" ] &&
        a=$(awk -v x="$(avg_rps "$sy")" -v y="$(avg_rps "$ng")" 'BEGIN{printf "%.2f", x/y}')
      [ -n "${runs[$ng]:-}" ] && [ -n "${runs[$d]:-}" ] &&
        b=$(awk -v x="$(avg_rps "$ng")" -v y="$(avg_rps "$d")" 'BEGIN{printf "%.2f", x/y}')
      [ -n "${runs[$sy]:-}" ] && [ -n "${runs[$d]:-}" ] &&
        c=$(awk -v x="$(avg_rps "$sy")" -v y="$(avg_rps "$d")" 'BEGIN{printf "%.2f", x/y}')
      printf "  %-7s %5s %16s %16s %16s\n" "$cs" "$conc" "$a" "$b" "$c"
    done
  done
  echo
  echo "server CPU per request (us, utime+stime of the server process(es) only; lower is better):"
  printf "  %-7s %5s %8s %8s %11s %16s\n" case conc direct nginx switchyard switchyard/nginx
  for cs in "${CASES[@]}"; do
    for conc in "${CONCS[@]}"; do
      local d="direct|$cs|$conc" ng="nginx|$cs|$conc" sy="switchyard|$cs|$conc" a=- b=- c=-
      [ -n "${runs[$d]:-}" ] && a=$(cpu_us "$d")
      [ -n "${runs[$ng]:-}" ] && b=$(cpu_us "$ng")
      [ -n "${runs[$sy]:-}" ] && c=$(cpu_us "$sy")
      printf "  %-7s %5s %8s %8s %11s %16s\n" "$cs" "$conc" "$a" "$b" "$c" "$(ratio "$c" "$b")"
    done
  done
  echo
  echo "added latency at c=1 (ms, proxy minus direct):"
  printf "  %-7s %-11s %10s %10s\n" case proxy p50 p99
  for cs in "${CASES[@]}"; do
    local d="direct|$cs|1"
    [ -n "${runs[$d]:-}" ] || continue
    for t in nginx switchyard; do
      local k="$t|$cs|1"
      if [ -z "${runs[$k]:-}" ]; then printf "  %-7s %-11s %10s\n" "$cs" "$t" "-"; continue; fi
      printf "  %-7s %-11s %10s %10s\n" "$cs" "$t" \
        "$(ms $(( $(avg_us p50 "$k") - $(avg_us p50 "$d") )))" \
        "$(ms $(( $(avg_us p99 "$k") - $(avg_us p99 "$d") )))"
    done
  done
  echo
  if [ -n "${ttft50[direct]:-}" ]; then
    echo "time to first content chunk, paced stream (20 chunks, 5 ms apart), sequential (ms):"
    printf "  %-11s %10s %10s %14s %14s\n" target p50 p99 "p50 - direct" "p99 - direct"
    for t in "${TARGETS[@]}"; do
      if [ -z "${ttft50[$t]:-}" ]; then printf "  %-11s %10s\n" "$t" "-"; continue; fi
      printf "  %-11s %10s %10s %14s %14s\n" "$t" "$(ms "${ttft50[$t]}")" "$(ms "${ttft99[$t]}")" \
        "$(ms $(( ttft50[$t] - ttft50[direct] )))" "$(ms $(( ttft99[$t] - ttft99[direct] )))"
    done
    echo
  fi
  if [ $sy_ok = 1 ]; then
    echo "switchyard RSS: idle ${rss_idle:-?} kB, after load ${rss_load:-?} kB, peak ${rss_peak:-?} kB"
  else
    echo "switchyard RSS: - (not answering)"
  fi
}
mkdir -p "$here/results"
out=latest
[ "$layout" = pinned ] && out=$out-pinned
[ "$workers" != 1 ] && out=$out-w$workers
report | tee "$here/results/$out.txt"
if [ $full = 1 ]; then
  cleanup
  trap - EXIT
  fargs=(--rounds "$rounds" --duration "$dur" --workers "$workers" --builddir "$builddir")
  [ "$layout" = pinned ] && fargs+=(--pinned)
  unset SWITCHYARD_DB
  exec "$here/full.sh" "${fargs[@]}"
fi
