#!/usr/bin/env bash
# guardrails.sh - what in-process guardrails cost the proxy path (issue 23): the
# same ~1 KB chat request through switchyard with no guardrail and with each
# in-process guardrail on (default_on, pre_call on the request and post_call on
# the answer where the kind reads answers), against nginx doing a bare
# proxy_pass to the same mock, in interleaved rounds.
#
#   nginx        proxy_pass to the mock (the floor)
#   off          switchyard, no guardrail
#   filter       litellm_content_filter: 8 built-in categories (corpus config
#                02), 20 blocked words, 3 prebuilt patterns
#   pii          pii_masking: every entity, MASK
#   filter+pii   both (the issue's target: within 5% of off)
#   secrets      hide_secrets
#   tools        tool_permission (corpus config 08's rules)
#   injection    detect_prompt_injection
# One worker each, no database. Prints, per target: RPS at c=32 and its ratio to
# "off", CPU us per request and the difference to "off", and the mean latency
# at c=1 and its difference.
#
#   bench/guardrails.sh [--rounds N] [--duration S] [--conc C]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
. "$here/lib.sh"
rounds=2 dur=5 conc=32
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;; --duration) dur=$2; shift ;; --conc) conc=$2; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
  shift
done
NGINX=${NGINX:-/usr/sbin/nginx}
ensure_pkgs wrk:wrk curl:curl nginx:nginx-light
bench_setup
start_mock
mport=${mock##*:}
nport=$(free_port)
write_nginx_conf "$tmp/ngx" "$nport" "$mport" 1
"$NGINX" -c "$tmp/ngx/nginx.conf" -p "$tmp/ngx/" -e "$tmp/ngx/error.log" &
nginx_pid=$!; pids+=($nginx_pid)
wait_port "$nport" || { echo "nginx did not start"; exit 1; }

models="model_list:
  - model_name: bench-model
    litellm_params: {model: openai/gpt-4o-mini, api_base: \"$mock/v1\", api_key: sk-bench-up}"
words=""
for w in alpha-secret bravo-secret charlie-secret delta-secret echo-secret foxtrot-secret golf-secret hotel-secret \
  india-secret juliet-secret kilo-secret lima-secret mike-secret november-secret oscar-secret papa-secret \
  quebec-secret romeo-secret sierra-secret tango-secret; do words="$words        - {keyword: $w, action: BLOCK}
"; done
g_filter="  - guardrail_name: filter
    litellm_params:
      guardrail: litellm_content_filter
      mode: [pre_call, post_call]
      default_on: true
      categories:
        - {category: harmful_self_harm, enabled: true, action: BLOCK, severity_threshold: medium}
        - {category: harmful_violence, enabled: true, action: BLOCK, severity_threshold: high}
        - {category: harmful_illegal_weapons, enabled: true, action: BLOCK, severity_threshold: low}
        - {category: bias_gender, enabled: true, action: BLOCK, severity_threshold: high}
        - {category: bias_sexual_orientation, enabled: true, action: BLOCK, severity_threshold: high}
        - {category: denied_medical_advice, enabled: true, action: BLOCK, severity_threshold: high}
        - {category: denied_legal_advice, enabled: true, action: BLOCK, severity_threshold: high}
        - {category: denied_financial_advice, enabled: true, action: BLOCK, severity_threshold: high}
      patterns:
        - {pattern_type: prebuilt, pattern_name: us_ssn, action: MASK}
        - {pattern_type: prebuilt, pattern_name: email, action: MASK}
        - {pattern_type: prebuilt, pattern_name: credit_card, action: MASK}
      blocked_words:
$words"
g_pii="  - guardrail_name: pii
    litellm_params:
      guardrail: pii_masking
      mode: [pre_call, post_call]
      default_on: true
      pii_entities_config: {EMAIL_ADDRESS: MASK, PHONE_NUMBER: MASK, CREDIT_CARD: MASK, IBAN_CODE: MASK, IP_ADDRESS: MASK, US_SSN: MASK}
"
g_secrets="  - guardrail_name: secrets
    litellm_params: {guardrail: hide_secrets, mode: pre_call, default_on: true}
"
g_tools="  - guardrail_name: tools
    litellm_params:
      guardrail: tool_permission
      mode: [pre_call, post_call]
      default_on: true
      rules:
        - {id: allow_bash, tool_name: Bash, decision: allow}
        - {id: allow_github_mcp, tool_name: \"mcp__github_*\", decision: allow}
        - {id: deny_read, tool_name: Read, decision: Deny}
      default_action: deny
      on_disallowed_action: block
"
g_injection="  - guardrail_name: injection
    litellm_params: {guardrail: detect_prompt_injection, mode: pre_call, default_on: true}
"
conf() { # name guardrails-yaml
  { echo "$models"; if [ -n "$2" ]; then echo "guardrails:"; printf '%s' "$2"; fi; } >"$tmp/$1.yaml"
}
TARGETS=(nginx off filter pii filter+pii secrets tools injection)
declare -A gy=([off]="" [filter]="$g_filter" [pii]="$g_pii" [filter+pii]="$g_filter$g_pii" [secrets]="$g_secrets"
  [tools]="$g_tools" [injection]="$g_injection")
declare -A port pid
for t in "${TARGETS[@]}"; do
  [ "$t" = nginx ] && continue
  conf "$t" "${gy[$t]}"
  p=$(free_port)
  "$builddir/switchyard" --config "$tmp/$t.yaml" --port "$p" --workers 1 --db none >"$tmp/$t.log" 2>&1 &
  pid[$t]=$!; pids+=(${pid[$t]}); port[$t]=$p
  wait_port "$p" || { echo "switchyard ($t) did not start"; cat "$tmp/$t.log"; exit 1; }
  if grep -qi "not supported\|left out" "$tmp/$t.log"; then echo "switchyard ($t):"; grep -i "not supported\|left out" "$tmp/$t.log"; fi
  code=$(curl -s -o /dev/null -w '%{http_code}' -H 'content-type: application/json' \
    -d '{"model":"bench-model","messages":[{"role":"user","content":"hello"}]}' "http://127.0.0.1:$p/v1/chat/completions")
  [ "$code" = 200 ] || { echo "switchyard ($t) answers $code"; exit 1; }
done
url_of() { if [ "$1" = nginx ]; then echo "http://127.0.0.1:$nport/v1/chat/completions"; else echo "http://127.0.0.1:${port[$1]}/v1/chat/completions"; fi; }
pids_of() { if [ "$1" = nginx ]; then proc_tree "$nginx_pid"; else echo "${pid[$1]}"; fi; }
declare -A rps req ticks lat
bench_rounds "$rounds" "$dur" "$conc" "${TARGETS[@]}"
echo
bench_table "$rounds" 11 "" "${TARGETS[@]}"
