#!/usr/bin/env bash
# full.sh - the path users run, against nginx and switchyard's bare pass-through, in the
# same run (bench/run.sh --full calls it; docs/bench.md, "The full path"):
#   nginx     proxy_pass to mock A (1 worker, upstream keepalive)
#   passthru  switchyard, bench/switchyard.yaml -> mock A, no database, no auth
#   full      switchyard with an embedded SQLite database (spend logs on), a virtual key
#             with an rpm_limit, and a group of four deployments under
#             usage-based-routing-v2 (rpm/tpm on each) -> mock B
# wrk (bench/chat.lua, ~1 KB chat body) at c=32, targets interleaved in each round. Prints
# RPS and its ratio to nginx, server CPU us per request (whole process: workers, DB
# threads, spend writer), p50/p99 and the full path's p99 over pass-through's. Then waits
# for the spend writer to flush and checks that the SpendLogs rows equal the requests
# mock B answered (each successful request is one upstream call).
#
#   bench/full.sh [--rounds N] [--duration S] [--conc C] [--pinned] [--workers N] [--builddir DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
rounds=2 dur=10 conc=32 pinned=0 workers=1
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;;
    --duration) dur=$2; shift ;;
    --conc) conc=$2; shift ;;
    --pinned) pinned=1 ;;
    --workers) workers=$2; shift ;;
    --builddir) BENCH_BUILDDIR=$2; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
  shift
done
WRK=${WRK:-/usr/bin/wrk}
NGINX=${NGINX:-/usr/sbin/nginx}
ensure_pkgs wrk:wrk nginx:nginx-light curl:curl sqlite3:sqlite3 taskset:util-linux
bench_setup
sy_bin=${SWITCHYARD:-$builddir/switchyard}

srv=() gen=() pin_note="nothing pinned"
ncpu=$(nproc)
if [ $pinned = 1 ] && [ "$ncpu" -gt "$workers" ]; then
  srv=(taskset -c "0-$((workers - 1))") gen=(taskset -c "$workers-$((ncpu - 1))")
  pin_note="proxies on CPU 0-$((workers - 1)), mocks and wrk on CPU $workers-$((ncpu - 1))"
fi
mock_start() { # name -> sets mport_<name>
  "${gen[@]}" "$builddir/tests/mock/mock_upstream" --port 0 --threads 1 --no-record >"$tmp/mock-$1.out" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do grep -q '^listening on' "$tmp/mock-$1.out" && break; sleep 0.05; done
  local p; p=$(awk '/^listening on/{print $3}' "$tmp/mock-$1.out")
  [ -n "$p" ] || { echo "mock_upstream did not start"; exit 1; }
  eval "mport_$1=$p"
}
mock_start a
mock_start b

nginx_port=$(free_port)
write_nginx_conf "$tmp/nginx" "$nginx_port" "$mport_a" "$workers"
"${srv[@]}" "$NGINX" -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx/" -e "$tmp/nginx/error.log" &
nginx_pid=$!
pids+=($nginx_pid)
wait_port "$nginx_port" || { echo "nginx did not start"; cat "$tmp/nginx/error.log"; exit 1; }

pt_port=$(free_port)
BENCH_MOCK_BASE=http://127.0.0.1:$mport_a/v1 SWITCHYARD_DB=none "${srv[@]}" "$sy_bin" \
  --config "$here/switchyard.yaml" --port "$pt_port" --workers "$workers" >"$tmp/passthru.log" 2>&1 &
pt_pid=$!
pids+=($pt_pid)
wait_port "$pt_port" || { echo "switchyard (passthru) did not start"; tail -5 "$tmp/passthru.log"; exit 1; }

{
  echo "model_list:"
  for i in 1 2 3 4; do
    echo "  - {model_name: bench-model, litellm_params: {model: openai/gpt-4o-mini, api_base: \"http://127.0.0.1:$mport_b/v1\", api_key: sk-bench-up, rpm: 100000000, tpm: 100000000000}, model_info: {id: dep-$i}}"
  done
  echo "router_settings:"
  echo "  routing_strategy: usage-based-routing-v2"
  echo "general_settings:"
  echo "  master_key: sk-bench"
} >"$tmp/full.yaml"
full_port=$(free_port)
"${srv[@]}" "$sy_bin" --config "$tmp/full.yaml" --port "$full_port" --workers "$workers" \
  --db "$tmp/full.db" >"$tmp/full.log" 2>&1 &
full_pid=$!
pids+=($full_pid)
wait_port "$full_port" || { echo "switchyard (full) did not start"; tail -5 "$tmp/full.log"; exit 1; }
vkey=$(curl -s -m 5 "http://127.0.0.1:$full_port/key/generate" -H 'Authorization: Bearer sk-bench' \
  -d '{"models":["bench-model"],"rpm_limit":1000000000}' | sed -n 's/.*"key":"\(sk-[^"]*\)".*/\1/p')
[ -n "$vkey" ] || { echo "cannot generate a key"; tail -5 "$tmp/full.log"; exit 1; }

TARGETS=(nginx passthru full)
url_of() { case $1 in nginx) echo "http://127.0.0.1:$nginx_port" ;; passthru) echo "http://127.0.0.1:$pt_port" ;;
  full) echo "http://127.0.0.1:$full_port" ;; esac; }
pids_of() { case $1 in nginx) proc_tree "$nginx_pid" ;; passthru) echo "$pt_pid" ;; full) echo "$full_pid" ;; esac; }
key_of() { [ "$1" = full ] && echo "$vkey" || echo sk-bench; }
declare -A rps p50 p99 req ticks errs
run_one() { # target seconds -> $line, $dt
  local sp t0
  sp=$(pids_of "$1")
  # shellcheck disable=SC2086
  t0=$(cpu_ticks $sp)
  line=$(BENCH_KEY=$(key_of "$1") "${gen[@]}" "$WRK" -t1 -c"$conc" -d"$2"s --latency -s "$here/chat.lua" \
    "$(url_of "$1")/v1/chat/completions" 2>&1 | grep '^BENCH ' || true)
  # shellcheck disable=SC2086
  dt=$(( $(cpu_ticks $sp) - t0 ))
}
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" <<<"$line"; }
echo "warming up..."
for t in "${TARGETS[@]}"; do run_one "$t" 1; done
for r in $(seq "$rounds"); do
  for t in "${TARGETS[@]}"; do
    run_one "$t" "$dur"
    [ -n "$line" ] || { echo "  $t: wrk gave no result"; continue; }
    rps[$t]=$(awk -v a="${rps[$t]:-0}" -v b="$(field rps)" 'BEGIN{print a+b}')
    p50[$t]=$(( ${p50[$t]:-0} + $(field p50_us) ))
    p99[$t]=$(( ${p99[$t]:-0} + $(field p99_us) ))
    req[$t]=$(( ${req[$t]:-0} + $(field requests) ))
    errs[$t]=$(( ${errs[$t]:-0} + $(field errors) ))
    ticks[$t]=$(( ${ticks[$t]:-0} + dt ))
    echo "round $r/$rounds: $t rps=$(field rps) p99_us=$(field p99_us)"
  done
done

# Every successful full-path request is one call to mock B and one SpendLogs row with
# status success; a request whose client left before its upstream call (wrk closing its
# connections at the end of a run while calls wait on the spend writer) is a failure row.
calls=$(curl -s -m 5 "http://127.0.0.1:$mport_b/__mock/stats" | sed -n 's/.*"requests":\([0-9]*\).*/\1/p')
count_ok() { sqlite3 "$tmp/full.db" "select count(*) from \"LiteLLM_SpendLogs\" where status = 'success'" 2>/dev/null || echo 0; }
rows=0 prev=-1
for _ in $(seq 60); do # the writer flushes on its batch interval: wait until the count holds still
  rows=$(count_ok)
  [ "$rows" = "$calls" ] && break
  [ "$rows" = "$prev" ] && [ "$rows" -gt 0 ] && sleep 1 && [ "$(count_ok)" = "$rows" ] && break
  prev=$rows
  sleep 0.5
done
failrows=$(sqlite3 "$tmp/full.db" "select count(*) from \"LiteLLM_SpendLogs\" where status != 'success'" 2>/dev/null || echo 0)

report() {
  echo "switchyard bench: the full path  $(date -u '+%Y-%m-%d %H:%M UTC')  $(uname -r)  $ncpu CPUs"
  echo "wrk -t1 -c$conc --latency, ${dur}s per run, $rounds round(s) interleaved; workers: $workers; $pin_note"
  echo "full = virtual key with rpm_limit + SQLite spend logs + 4 deployments, usage-based-routing-v2"
  echo
  printf '%-9s %9s %10s %11s %9s %9s %11s %7s\n' target rps rps/nginx cpu_us/req p50_ms p99_ms p99/passthru errors
  for t in "${TARGETS[@]}"; do
    [ -n "${req[$t]:-}" ] || { printf '%-9s %9s\n' "$t" "-"; continue; }
    awk -v t="$t" -v rps="${rps[$t]}" -v nrps="${rps[nginx]:-0}" -v n="$rounds" -v tk="${ticks[$t]}" \
      -v rq="${req[$t]}" -v hz="$CLK_TCK" -v a="${p50[$t]}" -v b="${p99[$t]}" -v pb="${p99[passthru]:-0}" \
      -v e="${errs[$t]}" 'BEGIN{
        printf "%-9s %9.0f %10s %11.1f %9.3f %9.3f %11s %7d\n", t, rps/n,
          (nrps > 0 ? sprintf("%.2f", rps/nrps) : "-"), tk/hz*1e6/rq, a/n/1000, b/n/1000,
          (pb > 0 ? sprintf("%.2f", b/pb) : "-"), e }'
  done
  echo
  echo "spend rows: $rows success rows for $calls upstream calls of the full path, plus $failrows failure rows" \
    "($([ $((rows + failrows)) -ge "$calls" ] && echo "every upstream call has its row" || echo "ROWS LOST"));" \
    "wrk counted ${req[full]:-0} responses in the measured runs (warm-up and requests in flight at a run's end not included;" \
    "a failure row is a call whose client left: wrk closing its connections at a run's end)"
}
mkdir -p "$here/results"
out=full
[ $pinned = 1 ] && out=$out-pinned
report | tee "$here/results/$out.txt"
