#!/usr/bin/env bash
# router.sh - what routing costs: the same chat load (bench/chat.lua, c=32) on
#   single  one deployment (bench/switchyard.yaml)
#   usage4  a 4-deployment group under usage-based-routing-v2, local state
#   redis4  the same group with router state shared through Redis
# interleaved within each round, against one mock upstream, one worker each.
# Prints RPS, the ratio to `single`, and each server's CPU us per request
# (usage4/redis4 put rpm/tpm on every deployment, so every request reads and
# updates the minute windows; redis4 also reserves each request's rpm slot
# with one script call, and redis-server's own CPU is shown apart).
#
#   bench/router.sh [--rounds N] [--duration S] [--conc C]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
. "$here/lib.sh"
# The proxy path alone: no database (spend logging and keys are measured by
# bench/keys.sh). Set SWITCHYARD_DB to measure with one.
export SWITCHYARD_DB=${SWITCHYARD_DB:-none}
rounds=3 dur=5 conc=32
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;; --duration) dur=$2; shift ;; --conc) conc=$2; shift ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
  shift
done
ensure_pkgs wrk:wrk redis-server:redis-server
bench_setup

"$builddir/tests/mock/mock_upstream" --port 0 --threads 1 --no-record >"$tmp/mock.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q '^listening on' "$tmp/mock.out" && break; sleep 0.05; done
mock=http://127.0.0.1:$(awk '/^listening on/{print $3}' "$tmp/mock.out")/v1
rport=$(free_port)
redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no >"$tmp/redis.log" 2>&1 &
redis_pid=$!
pids+=($redis_pid)
wait_port "$rport"

group() { # strategy-settings
  echo "model_list:"
  for i in 1 2 3 4; do
    echo "  - {model_name: bench-model, litellm_params: {model: openai/gpt-4o-mini, api_base: \"$mock\", api_key: sk-bench, rpm: 100000000, tpm: 100000000000}, model_info: {id: dep-$i}}"
  done
  echo "router_settings:"
  echo "  routing_strategy: usage-based-routing-v2"
  [ "$1" = redis ] && echo "  redis_host: 127.0.0.1" && echo "  redis_port: $rport"
  return 0
}
cp "$here/switchyard.yaml" "$tmp/single.yaml"
group local >"$tmp/usage4.yaml"
group redis >"$tmp/redis4.yaml"
declare -A port pid
for t in single usage4 redis4; do
  port[$t]=$(free_port)
  BENCH_MOCK_BASE=$mock "$builddir/switchyard" --config "$tmp/$t.yaml" --port "${port[$t]}" --workers 1 \
    >"$tmp/$t.log" 2>&1 &
  pid[$t]=$!
  pids+=($!)
  wait_port "${port[$t]}" || { echo "$t did not start"; cat "$tmp/$t.log"; exit 1; }
  curl -s -m 5 "http://127.0.0.1:${port[$t]}/v1/chat/completions" -H 'content-type: application/json' \
    -d '{"model":"bench-model","messages":[{"role":"user","content":"hi"}]}' | grep -q chat.completion ||
    { echo "$t: bad answer"; cat "$tmp/$t.log"; exit 1; }
done

declare -A sum_rps sum_req sum_ticks
rticks=0
for r in $(seq "$rounds"); do
  for t in single usage4 redis4; do
    t0=$(cpu_ticks "${pid[$t]}") r0=$(cpu_ticks "$redis_pid")
    line=$(wrk -t1 -c"$conc" -d"${dur}s" -s "$here/chat.lua" "http://127.0.0.1:${port[$t]}/v1/chat/completions" 2>&1 | grep '^BENCH ')
    t1=$(cpu_ticks "${pid[$t]}") r1=$(cpu_ticks "$redis_pid")
    rps=$(sed -n 's/.*rps=\([0-9.]*\).*/\1/p' <<<"$line")
    req=$(sed -n 's/.*requests=\([0-9]*\).*/\1/p' <<<"$line")
    err=$(sed -n 's/.*errors=\([0-9]*\).*/\1/p' <<<"$line")
    [ "${err:-0}" = 0 ] || echo "  $t: $err errors"
    sum_rps[$t]=$(awk -v a="${sum_rps[$t]:-0}" -v b="$rps" 'BEGIN{print a+b}')
    sum_req[$t]=$(( ${sum_req[$t]:-0} + req ))
    sum_ticks[$t]=$(( ${sum_ticks[$t]:-0} + t1 - t0 ))
    [ $t = redis4 ] && rticks=$((rticks + r1 - r0))
    echo "round $r: $t rps=$rps"
  done
done
echo
printf '%-8s %10s %9s %14s\n' target rps "/single" "cpu_us/req"
for t in single usage4 redis4; do
  awk -v t=$t -v rps="${sum_rps[$t]}" -v n="$rounds" -v base="${sum_rps[single]}" -v tk="${sum_ticks[$t]}" \
    -v req="${sum_req[$t]}" -v hz="$CLK_TCK" \
    'BEGIN{printf "%-8s %10.0f %9.3f %14.1f\n", t, rps/n, rps/base, tk/hz*1e6/req}'
done
awk -v tk="$rticks" -v req="${sum_req[redis4]}" -v hz="$CLK_TCK" \
  'BEGIN{printf "redis-server cpu_us/req (redis4): %.1f\n", tk/hz*1e6/req}'
