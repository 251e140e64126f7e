#!/usr/bin/env bash
# limits.sh - what rate limits cost: the same OpenAI chat load (bench/chat.lua,
# pass-through to the mock upstream) with virtual keys on two switchyard
# instances (embedded SQLite each; no SpendLogs rows, whose growing table would
# charge later targets more than earlier ones), one worker each:
#   vkey      a virtual key without limits: the baseline
#   vrpm      a key with rpm_limit (local counters: one CAS per request)
#   vtpm      a key with rpm_limit and tpm_limit (the prompt is counted exactly
#             before the call, then the tokens settled)
#   vkey-r    the Redis instance (router_settings.redis_*), a key without limits
#   vrpm-r    the Redis instance, a key with rpm_limit: one script call per
#             request (counters shared by instances), one settle call after
# Limits are set far above the load so nothing is refused. Interleaved within
# each round. Prints RPS, CPU us per request of the switchyard process, and
# each target's ratio to vkey; Redis's own CPU per request is printed apart.
#
#   bench/limits.sh [--rounds N] [--duration S] [--conc C]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
. "$here/lib.sh"
rounds=3 dur=5 conc=32
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;; --duration) dur=$2; shift ;; --conc) conc=$2; shift ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
  shift
done
ensure_pkgs wrk:wrk curl:curl redis-server:redis-server
bench_setup

start_mock
rport=$(free_port)
redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no >"$tmp/redis.log" 2>&1 &
redis_pid=$!
pids+=($redis_pid)
wait_port "$rport" || { echo "redis did not start"; exit 1; }
base="model_list:
  - model_name: bench-model
    litellm_params: {model: openai/gpt-4o-mini, api_base: \"$mock/v1\", api_key: sk-bench-up}
general_settings:
  master_key: sk-bench
  disable_spend_logs: true"
echo "$base" >"$tmp/sy.yaml"
printf '%s\nrouter_settings:\n  redis_host: 127.0.0.1\n  redis_port: %s\n' "$base" "$rport" >"$tmp/syr.yaml"
start() { # name config db -> sets port_<name>, pid_<name>
  local p; p=$(free_port)
  "$builddir/switchyard" --config "$2" --port "$p" --workers 1 --db "$3" >"$tmp/$1.log" 2>&1 &
  local pid=$!; pids+=($pid)
  wait_port "$p" || { echo "switchyard ($1) did not start"; cat "$tmp/$1.log"; exit 1; }
  eval "port_$1=$p pid_$1=$pid"
}
start loc "$tmp/sy.yaml" "$tmp/loc.db"
start red "$tmp/syr.yaml" "$tmp/red.db"
gen() { curl -s -m 5 "http://127.0.0.1:$1/key/generate" -H 'Authorization: Bearer sk-bench' -d "$2" |
  sed -n 's/.*"key":"\(sk-[^"]*\)".*/\1/p'; }
k_vkey=$(gen "$port_loc" '{}')
k_vrpm=$(gen "$port_loc" '{"rpm_limit":1000000000}')
k_vtpm=$(gen "$port_loc" '{"rpm_limit":1000000000,"tpm_limit":1000000000000}')
k_vkey_r=$(gen "$port_red" '{}')
k_vrpm_r=$(gen "$port_red" '{"rpm_limit":1000000000}')
for k in "$k_vkey" "$k_vrpm" "$k_vtpm" "$k_vkey_r" "$k_vrpm_r"; do
  [ -n "$k" ] || { echo "cannot generate keys"; cat "$tmp/loc.log" "$tmp/red.log"; exit 1; }
done

TARGETS=(vkey vrpm vtpm vkey-r vrpm-r)
port_of() { case $1 in *-r) echo "$port_red" ;; *) echo "$port_loc" ;; esac; }
pid_of() { case $1 in *-r) echo "$pid_red" ;; *) echo "$pid_loc" ;; esac; }
key_of() { local v="k_${1//-/_}"; echo "${!v}"; }
declare -A sum_rps sum_req sum_ticks sum_rticks
for r in $(seq "$rounds"); do
  for t in "${TARGETS[@]}"; do
    pid=$(pid_of "$t")
    t0=$(cpu_ticks "$pid"); r0=$(cpu_ticks "$redis_pid")
    line=$(BENCH_KEY=$(key_of "$t") wrk -t1 -c"$conc" -d"${dur}s" -s "$here/chat.lua" \
      "http://127.0.0.1:$(port_of "$t")/v1/chat/completions" 2>&1 | grep '^BENCH ')
    t1=$(cpu_ticks "$pid"); r1=$(cpu_ticks "$redis_pid")
    rps=$(sed -n 's/.*rps=\([0-9.]*\).*/\1/p' <<<"$line")
    req=$(sed -n 's/.*requests=\([0-9]*\).*/\1/p' <<<"$line")
    err=$(sed -n 's/.*errors=\([0-9]*\).*/\1/p' <<<"$line")
    [ "${err:-0}" = 0 ] || echo "  $t: $err errors"
    sum_rps[$t]=$(awk -v a="${sum_rps[$t]:-0}" -v b="$rps" 'BEGIN{print a+b}')
    sum_req[$t]=$(( ${sum_req[$t]:-0} + req ))
    sum_ticks[$t]=$(( ${sum_ticks[$t]:-0} + t1 - t0 ))
    sum_rticks[$t]=$(( ${sum_rticks[$t]:-0} + r1 - r0 ))
    echo "round $r: $t rps=$rps"
  done
done
echo
printf '%-8s %10s %12s %14s %12s %16s\n' target rps rps/vkey cpu_us/req "+us vs vkey" redis_cpu_us/req
for t in "${TARGETS[@]}"; do
  awk -v t="$t" -v rps="${sum_rps[$t]}" -v brps="${sum_rps[vkey]}" -v n="$rounds" -v tk="${sum_ticks[$t]}" \
    -v req="${sum_req[$t]}" -v btk="${sum_ticks[vkey]}" -v breq="${sum_req[vkey]}" -v hz="$CLK_TCK" \
    -v rtk="${sum_rticks[$t]}" \
    'BEGIN{us=tk/hz*1e6/req; bus=btk/hz*1e6/breq; printf "%-8s %10.0f %12.3f %14.1f %12.1f %16.1f\n", t, rps/n, rps/brps, us, us-bus, rtk/hz*1e6/req}'
done
