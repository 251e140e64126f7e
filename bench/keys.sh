#!/usr/bin/env bash
# keys.sh - what virtual keys and spend logging cost: the same OpenAI chat load
# (bench/chat.lua, pass-through to the mock upstream) through
#   nodb      switchyard without a database (--db none), master key: the baseline
#   master    switchyard with its embedded SQLite, master key (spend rows written)
#   vkey      the same instance, a virtual key (cached after its first request)
#   vbudget   the same instance, a virtual key with a max_budget: every request
#             reserves its worst case in the database before the call
# interleaved within each round, one worker each, one mock upstream. Prints RPS,
# CPU us per request of the whole switchyard process (workers, DB threads and
# the spend writer), and each target's ratio to the baseline.
#
#   bench/keys.sh [--rounds N] [--duration S] [--conc C] [--db URL]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
. "$here/lib.sh"
rounds=3 dur=5 conc=32 db=
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;; --duration) dur=$2; shift ;; --conc) conc=$2; shift ;; --db) db=$2; shift ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
  shift
done
ensure_pkgs wrk:wrk curl:curl
bench_setup

start_mock
cat >"$tmp/sy.yaml" <<YAML
model_list:
  - model_name: bench-model
    litellm_params: {model: openai/gpt-4o-mini, api_base: "$mock/v1", api_key: sk-bench-up}
general_settings:
  master_key: sk-bench
YAML
start() { # name dbarg -> sets port_<name>, pid_<name>
  local p; p=$(free_port)
  "$builddir/switchyard" --config "$tmp/sy.yaml" --port "$p" --workers 1 --db "$2" >"$tmp/$1.log" 2>&1 &
  local pid=$!; pids+=($pid)
  wait_port "$p" || { echo "switchyard ($1) did not start"; cat "$tmp/$1.log"; exit 1; }
  eval "port_$1=$p pid_$1=$pid"
}
start nodb none
start db "${db:-$tmp/sy.db}"
gen() { curl -s -m 5 "http://127.0.0.1:$port_db/key/generate" -H 'Authorization: Bearer sk-bench' -d "$1" |
  sed -n 's/.*"key":"\(sk-[^"]*\)".*/\1/p'; }
vkey=$(gen '{"models":["bench-model"]}')
vbudget=$(gen '{"max_budget":1000000}')
[ -n "$vkey" ] && [ -n "$vbudget" ] || { echo "cannot generate keys"; cat "$tmp/db.log"; exit 1; }

TARGETS=(nodb master vkey vbudget)
port_of() { case $1 in nodb) echo "$port_nodb" ;; *) echo "$port_db" ;; esac; }
pid_of() { case $1 in nodb) echo "$pid_nodb" ;; *) echo "$pid_db" ;; esac; }
key_of() { case $1 in vkey) echo "$vkey" ;; vbudget) echo "$vbudget" ;; *) echo sk-bench ;; esac; }
declare -A sum_rps sum_req sum_ticks
for r in $(seq "$rounds"); do
  for t in "${TARGETS[@]}"; do
    pid=$(pid_of "$t")
    t0=$(cpu_ticks "$pid")
    line=$(BENCH_KEY=$(key_of "$t") wrk -t1 -c"$conc" -d"${dur}s" -s "$here/chat.lua" \
      "http://127.0.0.1:$(port_of "$t")/v1/chat/completions" 2>&1 | grep '^BENCH ')
    t1=$(cpu_ticks "$pid")
    rps=$(sed -n 's/.*rps=\([0-9.]*\).*/\1/p' <<<"$line")
    req=$(sed -n 's/.*requests=\([0-9]*\).*/\1/p' <<<"$line")
    err=$(sed -n 's/.*errors=\([0-9]*\).*/\1/p' <<<"$line")
    [ "${err:-0}" = 0 ] || echo "  $t: $err errors"
    sum_rps[$t]=$(awk -v a="${sum_rps[$t]:-0}" -v b="$rps" 'BEGIN{print a+b}')
    sum_req[$t]=$(( ${sum_req[$t]:-0} + req ))
    sum_ticks[$t]=$(( ${sum_ticks[$t]:-0} + t1 - t0 ))
    echo "round $r: $t rps=$rps"
  done
done
sleep 2 # let the writer flush before counting rows
echo
printf '%-10s %10s %12s %14s %12s\n' target rps rps/nodb cpu_us/req "+us vs nodb"
for t in "${TARGETS[@]}"; do
  awk -v t="$t" -v rps="${sum_rps[$t]}" -v brps="${sum_rps[nodb]}" -v n="$rounds" -v tk="${sum_ticks[$t]}" \
    -v req="${sum_req[$t]}" -v btk="${sum_ticks[nodb]}" -v breq="${sum_req[nodb]}" -v hz="$CLK_TCK" \
    'BEGIN{us=tk/hz*1e6/req; bus=btk/hz*1e6/breq; printf "%-10s %10.0f %12.3f %14.1f %12.1f\n", t, rps/n, rps/brps, us, us-bus}'
done
if [ -z "$db" ] && command -v sqlite3 >/dev/null; then
  echo "spend rows written: $(sqlite3 "$tmp/sy.db" 'select count(*) from "LiteLLM_SpendLogs"')"
fi
