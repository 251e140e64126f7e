#!/usr/bin/env bash
# selftest.sh MOCK_BINARY GEN_CERTS - starts mock_upstream (plain + TLS, with an
# API key) and checks a few responses with curl: shapes, auth, Azure rules,
# embeddings, faults, the request log, pipelining and TLS. No timing asserts.
set -uo pipefail
mock=${1:?usage: selftest.sh MOCK_BINARY GEN_CERTS}
gencerts=${2:?usage: selftest.sh MOCK_BINARY GEN_CERTS}
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

bash "$gencerts" "$tmp/certs" || { echo "FAIL: gen-certs"; exit 1; }
"$mock" --port 0 --tls-port 0 --tls-cert "$tmp/certs/server.pem" --tls-key "$tmp/certs/server.key" \
  --require-key sk-test >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 100); do [ "$(grep -c '^listening on' "$tmp/out")" -ge 2 ] && break; sleep 0.05; done
tls_port=$(awk '/^listening on .*tls/{print $3}' "$tmp/out")
port=$(awk '/^listening on/ && !/tls/{print $3}' "$tmp/out")
[ -n "$port" ] && [ -n "$tls_port" ] || { echo "FAIL: mock did not start"; cat "$tmp/err"; exit 1; }

base=http://127.0.0.1:$port
auth=(-H "Authorization: Bearer sk-test" -H "Content-Type: application/json")
fails=0 passes=0
check() { # name, haystack, needle
  if grep -qF -- "$3" <<<"$2"; then passes=$((passes + 1)); else
    fails=$((fails + 1)); echo "FAIL: $1: expected to find [$3] in:"; head -c 600 <<<"$2"; echo; fi
}
post() { curl -s -i "${auth[@]}" "$base$1" -d "$2"; }

r=$(post /v1/chat/completions '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello there"}]}')
check chat-status "$r" "HTTP/1.1 200 OK"
check chat-object "$r" '"object":"chat.completion"'
check chat-model "$r" '"model":"gpt-4o-mini"'
check chat-usage "$r" '"prompt_tokens_details":{"cached_tokens":0'
check chat-id "$r" '"id":"chatcmpl-'

r=$(post /chat/completions '{"model":"m","max_tokens":2,"messages":[]}')
check max-tokens-finish "$r" '"finish_reason":"length"'
check max-tokens-usage "$r" '"completion_tokens":2,'

r=$(post /v1/chat/completions '{"model":"m","stream":true,"stream_options":{"include_usage":true},"mock":{"chunks":3}}')
check stream-ctype "$r" "Content-Type: text/event-stream"
check stream-role "$r" '"delta":{"role":"assistant","content":""'
check stream-chunk "$r" '"object":"chat.completion.chunk"'
check stream-usage "$r" '"choices":[],"usage":{"prompt_tokens":'
check stream-done "$r" 'data: [DONE]'
n=$(grep -c '"delta":{"content"' <<<"$r")
check stream-count "n=$n" "n=3"

r=$(curl -s -i "$base/v1/chat/completions" -d '{"model":"m"}')
check noauth-401 "$r" "HTTP/1.1 401"
check noauth-code "$r" '"code":"invalid_api_key"'

r=$(post /v1/chat/completions '{"model":"gpt-4o@status=429,retry_after=2","messages":[]}')
check fault-429 "$r" "HTTP/1.1 429"
check fault-retry-after "$r" "retry-after: 2"
check fault-429-code "$r" '"code":"rate_limit_exceeded"'
r=$(post /v1/chat/completions '{"model":"gpt-4o","mock":{"status":503,"error_message":"overloaded!"}}')
check fault-503 "$r" "HTTP/1.1 503"
check fault-503-msg "$r" '"message":"overloaded!"'
r=$(post /v1/chat/completions '{"model":"gpt-4o@delay_ms=50","messages":[]}')
check fault-delay "$r" '"model":"gpt-4o"'

r=$(curl -s -i -H "api-key: sk-test" "$base/openai/deployments/dep1/chat/completions" -d '{"messages":[]}')
check azure-no-version "$r" "MissingApiVersionParameter"
r=$(curl -s -i -H "api-key: sk-test" "$base/openai/deployments/dep1/chat/completions?api-version=2024-10-21" -d '{"messages":[]}')
check azure-ok "$r" '"model":"dep1"'
r=$(curl -s -i -H "api-key: wrong" "$base/openai/deployments/dep1/chat/completions?api-version=2024-10-21" -d '{}')
check azure-401 "$r" "HTTP/1.1 401"

r=$(post /v1/embeddings '{"model":"text-embedding-3-small","input":["a","b"],"dimensions":8}')
check emb-two "$r" '"index":1,"embedding":['
r2=$(post /v1/embeddings '{"model":"text-embedding-3-small","input":["a","b"],"dimensions":8}')
check emb-deterministic "$(tail -1 <<<"$r2")" "$(tail -1 <<<"$r")"
r=$(post /v1/embeddings '{"input":"hi","dimensions":8,"encoding_format":"base64"}')
b64=$(grep -o '"embedding":"[^"]*"' <<<"$r" | cut -d'"' -f4)
check emb-base64 "len=${#b64}" "len=44"
r=$(post /v1/completions '{"model":"gpt-3.5-turbo-instruct","prompt":"Say hi"}')
check text-completion "$r" '"object":"text_completion"'
r=$(curl -s "${auth[@]}" "$base/v1/models")
check models "$r" '"id":"gpt-4o-mini","object":"model"'

curl -s -N "${auth[@]}" "$base/v1/chat/completions" \
  -d '{"model":"m","stream":true,"mock":{"chunks":10,"reset_after_chunks":3}}' >"$tmp/reset"
rc=$?
check reset-rc "rc=$rc" "rc=56"
n=$(grep -c '"delta":{"content"' "$tmp/reset")
check reset-chunks "n=$n" "n=3"
curl -s "${auth[@]}" "$base/v1/chat/completions" -d '{"model":"m@close_without_response=1"}' >/dev/null
check close-rc "rc=$?" "rc=52"
r=$(post /v1/chat/completions '{"model":"m","mock":{"trickle_bytes_per_s":20000,"chunks":3}}')
check trickle "$r" '"finish_reason":"stop"'
n=$(curl -s "${auth[@]}" "$base/v1/chat/completions" -d '{"model":"m","mock":{"body_bytes":200000}}' | wc -c)
[ "$n" -ge 200000 ] && passes=$((passes + 1)) || { fails=$((fails + 1)); echo "FAIL: body_bytes: $n"; }

# pipelining: a delayed request followed by two immediate ones, answered in order
b1='{"model":"first","mock":{"delay_ms":30}}' b2='{"model":"second"}' b3='{"model":"third"}'
req() { printf 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-test\r\nContent-Length: %d\r\n%s\r\n%s' "${#1}" "$2" "$1"; }
exec 3<>"/dev/tcp/127.0.0.1/$port"
{ req "$b1" ""; req "$b2" ""; req "$b3" $'Connection: close\r\n'; } >&3
order=$(timeout 5 cat <&3 | grep -o '"model":"[a-z]*"' | tr -d '\n')
exec 3<&-
check pipelining "$order" '"model":"first""model":"second""model":"third"'

r=$(curl -s "$base/__mock/requests")
check log-auth "$r" '"authorization":"Bearer sk-test"'
check log-path "$r" '"path":"/openai/deployments/dep1/chat/completions?api-version=2024-10-21"'
curl -s -X POST "$base/__mock/reset" >/dev/null
r=$(curl -s "$base/__mock/requests")
check log-reset "$r" '[]'

r=$(curl -s --cacert "$tmp/certs/ca.pem" "${auth[@]}" "https://localhost:$tls_port/v1/chat/completions" \
  -d '{"model":"tls-model","stream":true}')
check tls-stream "$r" '"model":"tls-model"'
check tls-done "$r" 'data: [DONE]'

echo "mock selftest: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
