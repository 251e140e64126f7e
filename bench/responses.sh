#!/usr/bin/env bash
# responses.sh - what the Responses API costs over chat completions, through
# the same deployments of the mock upstream:
#   throughput (wrk, non-stream, one worker, no database): CPU us per request of
#     sy-chat      POST /v1/chat/completions to an openai/ deployment (pass-through)
#     sy-native    POST /v1/responses to the same deployment (native: bytes, ids encoded)
#     sy-xlate     POST /v1/responses to a hosted_vllm/ deployment (translated to chat and back)
#     nginx        nginx proxy_pass of the chat request to the mock (the floor)
#   TTFT (bench/ttft.mjs, a paced stream of 20 chunks 5 ms apart): p50/p99 of
#     chat vs native Responses on the openai/ deployment, and chat vs translated
#     Responses on the hosted_vllm/ one; the "added" columns are the Responses
#     stream's TTFT minus the chat stream's through the same deployment.
# Requests use "store": false for the translated case so the run measures the
# translation, not the conversation store (which a later request may need).
#
#   bench/responses.sh [--rounds N] [--duration S] [--conc C] [--ttft N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
. "$here/lib.sh"
rounds=3 dur=5 conc=32 nttft=200
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;; --duration) dur=$2; shift ;; --conc) conc=$2; shift ;;
    --ttft) nttft=$2; shift ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
  shift
done
NGINX=${NGINX:-/usr/sbin/nginx}
ensure_pkgs wrk:wrk curl:curl nginx:nginx-light node:nodejs
bench_setup
start_mock
mport=${mock##*:}
cat >"$tmp/sy.yaml" <<YAML
model_list:
  - model_name: bench-model
    litellm_params: {model: openai/gpt-4o-mini, api_base: "$mock/v1", api_key: sk-bench-up}
  - model_name: bench-xlate
    litellm_params: {model: hosted_vllm/qwen, api_base: "$mock/v1", api_key: sk-bench-up}
  # the paced streams of the TTFT runs (the directives reach the mock in the upstream model
  # name, so the translated request, which drops the body's "mock" object, is paced too)
  - model_name: paced-model
    litellm_params: {model: "openai/gpt-4o-mini@chunks=20,chunk_delay_ms=5", api_base: "$mock/v1", api_key: sk-bench-up}
  - model_name: paced-xlate
    litellm_params: {model: "hosted_vllm/qwen@chunks=20,chunk_delay_ms=5", api_base: "$mock/v1", api_key: sk-bench-up}
YAML
port=$(free_port)
"$builddir/switchyard" --config "$tmp/sy.yaml" --port "$port" --workers 1 --db none >"$tmp/sy.log" 2>&1 &
sy_pid=$!
pids+=($sy_pid)
wait_port "$port" || { echo "switchyard did not start"; cat "$tmp/sy.log"; exit 1; }
nport=$(free_port)
write_nginx_conf "$tmp/nginx" "$nport" "$mport" 1
"$NGINX" -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx/" -e "$tmp/nginx/error.log" &
nginx_pid=$!
pids+=($nginx_pid)
wait_port "$nport" || { echo "nginx did not start"; exit 1; }

TARGETS=(nginx sy-chat sy-native sy-xlate)
run_one() {
  case $1 in
    nginx) wrk -t1 -c"$conc" -d"${dur}s" -s "$here/chat.lua" "http://127.0.0.1:$nport/v1/chat/completions" ;;
    sy-chat) wrk -t1 -c"$conc" -d"${dur}s" -s "$here/chat.lua" "http://127.0.0.1:$port/v1/chat/completions" ;;
    sy-native) BENCH_API=responses wrk -t1 -c"$conc" -d"${dur}s" -s "$here/chat.lua" "http://127.0.0.1:$port/v1/responses" ;;
    sy-xlate) BENCH_API=responses BENCH_MODEL=bench-xlate wrk -t1 -c"$conc" -d"${dur}s" -s "$here/chat.lua" \
      "http://127.0.0.1:$port/v1/responses" ;;
  esac
}
pids_of() { case $1 in nginx) proc_tree "$nginx_pid" ;; *) echo "$sy_pid" ;; esac; }
declare -A sum_rps sum_req sum_ticks sum_err
for r in $(seq "$rounds"); do
  for t in "${TARGETS[@]}"; do
    ps=$(pids_of "$t")
    # shellcheck disable=SC2086
    t0=$(cpu_ticks $ps)
    out=$(run_one "$t" 2>&1)
    # shellcheck disable=SC2086
    t1=$(cpu_ticks $ps)
    rps=$(sed -n 's/^BENCH .*rps=\([0-9.]*\).*/\1/p' <<<"$out")
    req=$(sed -n 's/^BENCH .*requests=\([0-9]*\).*/\1/p' <<<"$out")
    err=$(sed -n 's/^BENCH .*errors=\([0-9]*\).*/\1/p' <<<"$out")
    sum_rps[$t]=$(awk -v a="${sum_rps[$t]:-0}" -v b="${rps:-0}" 'BEGIN{print a+b}')
    sum_req[$t]=$(( ${sum_req[$t]:-0} + ${req:-0} ))
    sum_err[$t]=$(( ${sum_err[$t]:-0} + ${err:-0} ))
    sum_ticks[$t]=$(( ${sum_ticks[$t]:-0} + t1 - t0 ))
    echo "round $r: $t rps=$rps errors=${err:-?}"
  done
done
echo
printf '%-10s %10s %12s %12s %8s\n' target rps rps/nginx cpu_us/req errors
for t in "${TARGETS[@]}"; do
  awk -v t="$t" -v rps="${sum_rps[$t]}" -v brps="${sum_rps[nginx]}" -v n="$rounds" -v tk="${sum_ticks[$t]}" \
    -v req="${sum_req[$t]}" -v hz="$CLK_TCK" -v e="${sum_err[$t]}" \
    'BEGIN{printf "%-10s %10.0f %12.3f %12.1f %8d\n", t, rps/n, rps/brps, (req ? tk/hz*1e6/req : 0), e}'
done

echo
echo "TTFT (paced stream, $nttft sequential requests each, interleaved in 4 rounds)"
declare -A p50 p99
for r in 1 2 3 4; do
  for t in chat native xchat xlate; do
    case $t in
      chat) line=$(node "$here/ttft.mjs" "http://127.0.0.1:$port/v1/chat/completions" $((nttft / 4)) chat paced-model) ;;
      native) line=$(node "$here/ttft.mjs" "http://127.0.0.1:$port/v1/responses" $((nttft / 4)) responses paced-model) ;;
      xchat) line=$(node "$here/ttft.mjs" "http://127.0.0.1:$port/v1/chat/completions" $((nttft / 4)) chat paced-xlate) ;;
      xlate) line=$(node "$here/ttft.mjs" "http://127.0.0.1:$port/v1/responses" $((nttft / 4)) responses paced-xlate) ;;
    esac
    grep -q 'errors=0' <<<"$line" || echo "  $t: $line"
    p50[$t]="${p50[$t]:-} $(sed -n 's/.*p50_us=\([0-9]*\).*/\1/p' <<<"$line")"
    p99[$t]="${p99[$t]:-} $(sed -n 's/.*p99_us=\([0-9]*\).*/\1/p' <<<"$line")"
  done
done
med() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
printf '%-8s %10s %10s %12s %12s\n' stream p50_ms p99_ms added_p50_ms added_p99_ms
for t in chat native xchat xlate; do
  m50=$(med <<<"${p50[$t]}"); m99=$(med <<<"${p99[$t]}")
  base=chat; [ "$t" = xlate ] || [ "$t" = xchat ] && base=xchat
  b50=$(med <<<"${p50[$base]}"); b99=$(med <<<"${p99[$base]}")
  awk -v t="$t" -v a="$m50" -v b="$m99" -v c="$b50" -v d="$b99" \
    'BEGIN{printf "%-8s %10.3f %10.3f %12.3f %12.3f\n", t, a/1000, b/1000, (a-c)/1000, (b-d)/1000}'
done
