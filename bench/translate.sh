#!/usr/bin/env bash
# translate.sh - what translation costs: the same OpenAI chat load (bench/chat.lua)
# through one switchyard to
#   passthru  an OpenAI-compatible deployment (bytes forwarded, model replaced)
#   claude    an Anthropic deployment: the request encoded to the Messages API,
#             the answer (JSON, or Anthropic SSE events) decoded back to OpenAI's
# plain and streaming (20 content chunks each way), interleaved within each round,
# one mock upstream (which speaks both formats), one worker. Prints RPS and
# switchyard's CPU us per request for each, and the translated case's extra CPU
# per request over the pass-through one (the issue's bar: within 10 us).
#
#   bench/translate.sh [--rounds N] [--duration S] [--conc C]
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
ensure_pkgs wrk:wrk curl:curl
bench_setup

start_mock
cat >"$tmp/sy.yaml" <<YAML
model_list:
  - model_name: bench-model
    litellm_params: {model: openai/gpt-4o-mini, api_base: "$mock/v1", api_key: sk-bench}
  - model_name: bench-model-s
    litellm_params: {model: "openai/gpt-4o-mini@chunks=20", api_base: "$mock/v1", api_key: sk-bench}
  - model_name: bench-claude
    litellm_params: {model: anthropic/claude-3-5-sonnet-20241022, api_base: "$mock", api_key: sk-ant-bench}
  - model_name: bench-claude-s
    litellm_params: {model: "anthropic/claude-3-5-sonnet-20241022@chunks=20", api_base: "$mock", api_key: sk-ant-bench}
YAML
port=$(free_port)
"$builddir/switchyard" --config "$tmp/sy.yaml" --port "$port" --workers 1 >"$tmp/sy.log" 2>&1 &
spid=$!
pids+=($spid)
wait_port "$port" || { echo "switchyard did not start"; cat "$tmp/sy.log"; exit 1; }
for m in bench-model bench-claude; do
  curl -s -m 5 "http://127.0.0.1:$port/v1/chat/completions" -H 'content-type: application/json' \
    -d "{\"model\":\"$m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}" | grep -q chat.completion ||
    { echo "$m: bad answer"; cat "$tmp/sy.log"; exit 1; }
done

TARGETS=(passthru claude passthru-stream claude-stream)
model_of() { case $1 in passthru) echo bench-model ;; claude) echo bench-claude ;;
  passthru-stream) echo bench-model-s ;; claude-stream) echo bench-claude-s ;; esac; }
declare -A sum_rps sum_req sum_ticks
for r in $(seq "$rounds"); do
  for t in "${TARGETS[@]}"; do
    stream=0
    case $t in *-stream) stream=1 ;; esac
    t0=$(cpu_ticks "$spid")
    line=$(BENCH_MODEL=$(model_of "$t") BENCH_STREAM=$stream wrk -t1 -c"$conc" -d"${dur}s" -s "$here/chat.lua" \
      "http://127.0.0.1:$port/v1/chat/completions" 2>&1 | grep '^BENCH ')
    t1=$(cpu_ticks "$spid")
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
echo
printf '%-16s %10s %14s %16s\n' target rps cpu_us/req "+us vs passthru"
for t in "${TARGETS[@]}"; do
  base=passthru
  case $t in *-stream) base=passthru-stream ;; esac
  awk -v t="$t" -v rps="${sum_rps[$t]}" -v n="$rounds" -v tk="${sum_ticks[$t]}" -v req="${sum_req[$t]}" \
    -v btk="${sum_ticks[$base]}" -v breq="${sum_req[$base]}" -v hz="$CLK_TCK" \
    'BEGIN{us=tk/hz*1e6/req; bus=btk/hz*1e6/breq; printf "%-16s %10.0f %14.1f %16.1f\n", t, rps/n, us, us-bus}'
done
