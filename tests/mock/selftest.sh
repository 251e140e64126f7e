#!/usr/bin/env bash
# selftest.sh MOCK_BINARY GEN_CERTS - starts mock_upstream (plain + TLS, with an
# API key and an AWS secret) and checks a few responses with curl: shapes, auth,
# Azure rules, embeddings, faults, the request log, pipelining and TLS; then each
# native format (Anthropic, Gemini, Vertex AI + OAuth2 token, Bedrock with SigV4
# and the binary event stream, Cohere, Ollama) and split_utf8; then the Responses,
# images, audio, moderations, rerank, files and batches APIs. No timing asserts.
# Needs bash, curl, openssl and gzip (its trailer is the independent CRC-32 used
# to check event-stream frames).
set -uo pipefail
mock=${1:?usage: selftest.sh MOCK_BINARY GEN_CERTS}
gencerts=${2:?usage: selftest.sh MOCK_BINARY GEN_CERTS}
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

bash "$gencerts" "$tmp/certs" || { echo "FAIL: gen-certs"; exit 1; }
"$mock" --port 0 --tls-port 0 --tls-cert "$tmp/certs/server.pem" --tls-key "$tmp/certs/server.key" \
  --require-key sk-test --aws-secret-key selftest-secret >"$tmp/out" 2>"$tmp/err" &
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

# ---- native provider formats ----
eq() { # name, got, want
  if [ "$2" = "$3" ]; then passes=$((passes + 1)); else
    fails=$((fails + 1)); echo "FAIL: $1: got [$2], want [$3]"; fi
}
events() { grep '^event: ' | cut -c8- | tr -d '\r' | tr '\n' ' '; }
log() { curl -s "$base/__mock/requests"; }

# Anthropic Messages
ant=(-H "x-api-key: sk-test" -H "anthropic-version: 2023-06-01")
user='"messages":[{"role":"user","content":"Hello there"}]'
tools='"tools":[{"name":"get_weather","input_schema":{"type":"object","properties":{"location":{"type":"string"},"unit":{"type":"string"}}}}]'
r=$(curl -s -i "${ant[@]}" "$base/v1/messages" -d "{\"model\":\"claude-3-5-sonnet\",\"max_tokens\":64,$user}")
check ant-status "$r" "HTTP/1.1 200 OK"
check ant-id "$r" '{"id":"msg_mock'
check ant-shape "$r" '"type":"message","role":"assistant","model":"claude-3-5-sonnet","content":[{"type":"text","text":"Hello! This is'
check ant-stop "$r" '"stop_reason":"end_turn","stop_sequence":null'
check ant-usage "$r" '"usage":{"input_tokens":4,"output_tokens":18,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}'
r=$(curl -s -i "${ant[@]}" "$base/v1/messages" -d "{\"model\":\"c@cache_read=20,cache_write=10,cache_write_1h=6\",\"max_tokens\":64,$user}")
check ant-usage-cache "$r" '"cache_creation_input_tokens":10,"cache_read_input_tokens":20,"cache_creation":{"ephemeral_5m_input_tokens":4,"ephemeral_1h_input_tokens":6}}'
r=$(curl -s -i "${ant[@]}" "$base/v1/messages" -d "{\"model\":\"c\",$user}")
check ant-max-tokens-400 "$r" "HTTP/1.1 400"
check ant-max-tokens-msg "$r" '{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}'
r=$(curl -s -i -H "anthropic-version: 2023-06-01" "$base/v1/messages" -d "{\"model\":\"c\",\"max_tokens\":5,$user}")
check ant-nokey-401 "$r" "HTTP/1.1 401"
check ant-nokey-type "$r" '"type":"authentication_error"'
r=$(curl -s -i -H "x-api-key: sk-test" "$base/v1/messages" -d "{\"model\":\"c\",\"max_tokens\":5,$user}")
check ant-noversion "$r" 'anthropic-version: header is required'
r=$(curl -s -N "${ant[@]}" "$base/v1/messages" -d "{\"model\":\"c@chunks=3\",\"max_tokens\":64,\"stream\":true,$user}")
eq ant-stream-events "$(events <<<"$r")" "message_start content_block_start ping content_block_delta content_block_delta content_block_delta content_block_stop message_delta message_stop "
check ant-stream-start "$r" '"usage":{"input_tokens":4,"output_tokens":1,'
check ant-stream-delta "$r" '"delta":{"type":"text_delta","text":" This"}'
check ant-stream-msgdelta "$r" '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}'
r=$(curl -s "${ant[@]}" "$base/v1/messages" -d "{\"model\":\"c\",\"max_tokens\":64,$tools,$user}")
check ant-tool "$r" '"content":[{"type":"tool_use","id":"toolu_mock1","name":"get_weather","input":{"location":"Paris","unit":"celsius"}}],"stop_reason":"tool_use"'
r=$(curl -s -N "${ant[@]}" "$base/v1/messages" -d "{\"model\":\"c\",\"max_tokens\":64,\"stream\":true,$tools,$user}")
check ant-tool-stream-start "$r" '"content_block":{"type":"tool_use","id":"toolu_mock1","name":"get_weather","input":{}}'
json=$(grep -o '"partial_json":".*"}}' <<<"$r" | sed 's/^"partial_json":"//; s/"}}$//' | tr -d '\n' | sed 's/\\"/"/g')
eq ant-tool-stream-json "$json" '{"location":"Paris","unit":"celsius"}'
check ant-tool-stream-stop "$r" '"stop_reason":"tool_use"'
r=$(curl -s "${ant[@]}" "$base/v1/messages" -d "{\"model\":\"c\",\"max_tokens\":64,$tools,\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"get_weather\",\"input\":{}}]},{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"content\":\"15C\"}]}]}")
check ant-tool-result "$r" '"stop_reason":"end_turn"'
r=$(curl -s -i "${ant[@]}" "$base/v1/messages" -d "{\"model\":\"c@status=529\",\"max_tokens\":5,$user}")
check ant-529 "$r" "HTTP/1.1 529"
check ant-529-body "$r" '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
r=$(curl -s -i "${ant[@]}" "$base/v1/messages" -d "{\"model\":\"c@status=429,retry_after=3\",\"max_tokens\":5,$user}")
check ant-429 "$r" '"type":"rate_limit_error"'
check ant-429-retry "$r" "retry-after: 3"
r=$(curl -s -N "${ant[@]}" "$base/v1/messages" -d "{\"model\":\"c@chunks=5,stream_error=overloaded_error,stream_error_after=2\",\"max_tokens\":64,\"stream\":true,$user}")
eq ant-stream-error-events "$(events <<<"$r")" "message_start content_block_start ping content_block_delta content_block_delta error "
check ant-stream-error-body "$r" 'data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
r=$(curl -s "${ant[@]}" "$base/v1/messages" -d "{\"model\":\"c\",\"max_tokens\":64,$user,\"mock\":{\"content\":\"Grüße aus 東京 🚀\"}}")
check ant-utf8-content "$r" '"text":"Grüße aus 東京 🚀"'
curl -s -N "${ant[@]}" "$base/v1/messages" -d "{\"model\":\"c@chunks=10,reset_after_chunks=3\",\"max_tokens\":64,\"stream\":true,$user}" >"$tmp/ant-reset"
check ant-reset-rc "rc=$?" "rc=56"
eq ant-reset-deltas "$(grep -c text_delta "$tmp/ant-reset")" 3

# Gemini API
gem=(-H "x-goog-api-key: sk-test")
contents='"contents":[{"role":"user","parts":[{"text":"Hello there"}]}]'
gtools='"tools":[{"functionDeclarations":[{"name":"get_weather","parameters":{"type":"object","properties":{"location":{"type":"string"}}}}]}]'
r=$(curl -s -i "${gem[@]}" "$base/v1beta/models/gemini-2.0-flash:generateContent" -d "{$contents}")
check gem-status "$r" "HTTP/1.1 200 OK"
check gem-shape "$r" '{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello! This is'
check gem-finish "$r" '"finishReason":"STOP","index":0}]'
check gem-usage "$r" '"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":18,"totalTokenCount":22'
check gem-model "$r" '"modelVersion":"gemini-2.0-flash","responseId":"'
r=$(curl -s "$base/v1beta/models/gemini-2.0-flash:generateContent?key=sk-test" -d "{$contents,\"generationConfig\":{\"maxOutputTokens\":2}}")
check gem-query-key "$r" '"text":"Hello! This"}]},"finishReason":"MAX_TOKENS"'
r=$(curl -s -i "$base/v1beta/models/g:generateContent" -d "{$contents}")
check gem-nokey "$r" '"code":403,'
r=$(curl -s -i -H "x-goog-api-key: nope" "$base/v1beta/models/g:generateContent" -d "{$contents}")
check gem-badkey "$r" '"status":"INVALID_ARGUMENT"'
r=$(curl -s "${gem[@]}" "$base/v1beta/models/g:generateContent" -d "{$contents,$gtools}")
check gem-tool "$r" '"parts":[{"functionCall":{"name":"get_weather","args":{"location":"Paris"}}}]},"finishReason":"STOP"'
r=$(curl -s "${gem[@]}" "$base/v1beta/models/g:generateContent" -d "{$gtools,\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"x\"}]},{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"get_weather\",\"args\":{}}}]},{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"name\":\"get_weather\",\"response\":{\"t\":15}}}]}]}")
check gem-tool-result "$r" '"parts":[{"text":"Hello!'
curl -s -N "${gem[@]}" "$base/v1beta/models/g%40chunks%3D3:streamGenerateContent?alt=sse" -d "{$contents}" >"$tmp/gem-sse"
eq gem-stream-events "$(grep -c '^data: ' "$tmp/gem-sse")" 4
eq gem-stream-crlf "$(grep -c $'\r$' "$tmp/gem-sse")" 8
eq gem-stream-usage "$(grep -c usageMetadata "$tmp/gem-sse")" 1
check gem-stream-last "$(tail -2 "$tmp/gem-sse")" '"parts":[{"text":""}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":3,'
r=$(curl -s "${gem[@]}" "$base/v1beta/models/g:streamGenerateContent" -d "{$contents}")
check gem-stream-needs-sse "$r" 'alt=sse'
r=$(curl -s -i "${gem[@]}" "$base/v1beta/models/g@status=429:generateContent" -d "{$contents}")
check gem-429 "$r" '{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}'
r=$(curl -s -N "${gem[@]}" "$base/v1beta/models/g@stream_error=UNAVAILABLE:streamGenerateContent?alt=sse" -d "{$contents}")
check gem-stream-error "$r" 'data: {"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}'
r=$(curl -s "${gem[@]}" "$base/v1beta/models/text-embedding-004:batchEmbedContents" \
  -d '{"requests":[{"model":"models/text-embedding-004","content":{"parts":[{"text":"a"}]},"outputDimensionality":3},{"model":"models/text-embedding-004","content":{"parts":[{"text":"b"}]},"outputDimensionality":3}]}')
eq gem-batch-count "$(grep -o '"values"' <<<"$r" | wc -l)" 2
check gem-batch-dims "$r" '{"embeddings":[{"values":[-0.639393449,-0.464122921,0.612997472]},'
r=$(curl -s "${gem[@]}" "$base/v1beta/models/text-embedding-004:batchEmbedContents" -d '{"requests":[{"content":{"parts":[{"text":"a"}]}}]}')
check gem-batch-model "$r" '"status":"INVALID_ARGUMENT"'
r=$(curl -s "${gem[@]}" "$base/v1beta/models/text-embedding-004:embedContent" -d '{"content":{"parts":[{"text":"a"}]}}')
eq gem-embed-dims "$(grep -o ',' <<<"$r" | wc -l)" 7

# Google OAuth2 token endpoint and Vertex AI
b64u() { base64 -w0 | tr '+/' '-_' | tr -d '='; }
now=$(date +%s)
jh=$(printf '{"alg":"RS256","typ":"JWT"}' | b64u)
jc=$(printf '{"iss":"sa@p.iam.gserviceaccount.com","scope":"https://www.googleapis.com/auth/cloud-platform","aud":"%s/token","iat":%d,"exp":%d}' "$base" "$now" $((now + 3600)) | b64u)
js=$(printf 'not-a-real-signature-but-base64url' | b64u)
grant='grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer'
curl -s -X POST "$base/__mock/reset" >/dev/null
r=$(curl -s "$base/token" -d "$grant&assertion=$jh.$jc.$js")
check token-ok "$r" '"expires_in":3599,"token_type":"Bearer"}'
tok=$(grep -o 'ya29\.mock-[0-9]*' <<<"$r")
r=$(curl -s "$base/token?expires_in=0" -d "$grant&assertion=$jh.$jc.$js")
expired=$(grep -o 'ya29\.mock-[0-9]*' <<<"$r")
check token-expires-in "$r" '"expires_in":0,'
r=$(curl -s -i "$base/token" -d "grant_type=password&assertion=$jh.$jc.$js")
check token-grant "$r" '{"error":"unsupported_grant_type"'
r=$(curl -s "$base/token" -d "$grant&assertion=$jh.$jc")
check token-parts "$r" 'not three base64url parts'
r=$(curl -s "$base/token" -d "$grant&assertion=$(printf '{"alg":"HS256"}' | b64u).$jc.$js")
check token-alg "$r" 'alg must be RS256'
r=$(curl -s "$base/token" -d "$grant&assertion=$jh.$(printf '{"iss":"a","aud":"b","iat":1,"exp":2}' | b64u).$js")
check token-claims "$r" 'missing claim scope'
r=$(curl -s "$base/__mock/stats")
check token-stats "$r" '{"token_fetches":6,"tokens_issued":2,"streams_started":'
vx=$base/v1/projects/proj/locations/us-central1/publishers
vauth=(-H "Authorization: Bearer $tok")
r=$(curl -s -i "$vx/google/models/gemini-1.5-pro:generateContent" -d "{$contents}")
check vertex-noauth "$r" '"code":401,'
r=$(curl -s -i -H "Authorization: Bearer $expired" "$vx/google/models/gemini-1.5-pro:generateContent" -d "{$contents}")
check vertex-expired "$r" '"status":"UNAUTHENTICATED"'
r=$(curl -s "${vauth[@]}" "$vx/google/models/gemini-1.5-pro:generateContent" -d "{$contents}")
check vertex-gemini "$r" '"modelVersion":"gemini-1.5-pro"'
r=$(curl -s -N "${vauth[@]}" "$vx/google/models/gemini-1.5-pro:streamGenerateContent?alt=sse" -d "{$contents}")
check vertex-gemini-stream "$r" '"finishReason":"STOP"'
r=$(curl -s "${vauth[@]}" "$vx/anthropic/models/claude-3-5-sonnet-v2@20241022:rawPredict" -d "{\"anthropic_version\":\"vertex-2023-10-16\",\"max_tokens\":2,$user}")
check vertex-claude "$r" '"model":"claude-3-5-sonnet-v2@20241022","content":[{"type":"text","text":"Hello! This"}],"stop_reason":"max_tokens"'
r=$(curl -s "${vauth[@]}" "$vx/anthropic/models/claude-3-5-sonnet-v2@20241022:rawPredict" -d "{\"model\":\"x\",\"anthropic_version\":\"vertex-2023-10-16\",\"max_tokens\":2,$user}")
check vertex-claude-model "$r" 'model: Extra inputs are not permitted'
r=$(curl -s "${vauth[@]}" "$vx/anthropic/models/claude-3-5-sonnet-v2@20241022:rawPredict" -d "{\"max_tokens\":2,$user}")
check vertex-claude-version "$r" 'anthropic_version: Field required'
r=$(curl -s -N "${vauth[@]}" "$vx/anthropic/models/claude-3-5-sonnet-v2@20241022@chunks=2:streamRawPredict" -d "{\"anthropic_version\":\"vertex-2023-10-16\",\"max_tokens\":9,\"stream\":true,$user}")
eq vertex-claude-stream "$(events <<<"$r")" "message_start content_block_start ping content_block_delta content_block_delta content_block_stop message_delta message_stop "
r=$(curl -s "${vauth[@]}" "$vx/anthropic/models/claude-3-5-sonnet-v2@20241022@status=429:rawPredict" -d "{\"anthropic_version\":\"vertex-2023-10-16\",\"max_tokens\":9,$user}")
check vertex-claude-429 "$r" '"status":"RESOURCE_EXHAUSTED"'
r=$(curl -s "${vauth[@]}" "$vx/google/models/text-embedding-005:predict" -d '{"instances":[{"content":"hello world"},{"content":"b"}],"parameters":{"outputDimensionality":4}}')
check vertex-predict "$r" '"statistics":{"token_count":3,"truncated":false}}},{"embeddings":{"values":['
check vertex-predict-meta "$r" '"metadata":{"billableCharacterCount":12}}'

# Bedrock: SigV4 (recomputed here with the openssl CLI), Converse, the event stream, InvokeModel
hexof() { od -An -tx1 -v | tr -d ' \n'; }
hmac_hex() { printf '%s' "$2" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$1" | awk '{print $NF}'; }
sha_hex() { printf '%s' "$1" | openssl dgst -sha256 | awk '{print $NF}'; }
sigv4() { # SECRET AMZDATE REGION SERVICE CANONICAL_REQUEST -> signature
  local d=${2:0:8} k
  k=$(hmac_hex "$(printf 'AWS4%s' "$1" | hexof)" "$d")
  k=$(hmac_hex "$k" "$3"); k=$(hmac_hex "$k" "$4"); k=$(hmac_hex "$k" aws4_request)
  hmac_hex "$k" "$(printf 'AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s' "$2" "$d" "$3" "$4" "$(sha_hex "$5")")"
}
# AWS's own test vector (get-vanilla) first, so a signer bug cannot hide behind the mock
cr=$(printf 'GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n%s' "$(sha_hex '')")
eq sigv4-vector "$(sigv4 wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY 20150830T123600Z us-east-1 service "$cr")" \
  5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31
bedrock() { # PATH BODY [curl args...]: a SigV4-signed POST (secret selftest-secret)
  local path=$1 body=$2 dt; shift 2
  dt=$(date -u +%Y%m%dT%H%M%SZ)
  local cr; cr=$(printf 'POST\n%s\n\ncontent-type:application/json\nhost:127.0.0.1:%s\nx-amz-date:%s\n\ncontent-type;host;x-amz-date\n%s' \
    "${path//%/%25}" "$port" "$dt" "$(sha_hex "$body")")
  curl -s "$@" "$base$path" -H 'Content-Type: application/json' -H "X-Amz-Date: $dt" \
    -H "Authorization: AWS4-HMAC-SHA256 Credential=AKIDMOCK/${dt:0:8}/us-east-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=$(sigv4 selftest-secret "$dt" us-east-1 bedrock "$cr")" \
    -d "$body"
}
bmsg='{"messages":[{"role":"user","content":[{"text":"Hello there"}]}]}'
claude=anthropic.claude-3-5-sonnet-20240620-v1%3A0
r=$(bedrock "/model/$claude/converse" "$bmsg" -i)
check br-converse "$r" '{"output":{"message":{"role":"assistant","content":[{"text":"Hello! This is'
check br-converse-tail "$r" '"stopReason":"end_turn","usage":{"inputTokens":4,"outputTokens":18,"totalTokens":22},"metrics":{"latencyMs":1}}'
r=$(curl -s -i "$base/model/$claude/converse" -H 'X-Amz-Date: 20240101T000000Z' \
  -H 'Authorization: AWS4-HMAC-SHA256 Credential=AKIDMOCK/20240101/us-east-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=0000000000000000000000000000000000000000000000000000000000000000' -d "$bmsg")
check br-badsig "$r" "HTTP/1.1 403"
check br-badsig-type "$r" "x-amzn-ErrorType: InvalidSignatureException"
r=$(curl -s -i "$base/model/$claude/converse" -d "$bmsg")
check br-noauth "$r" '{"message":"Missing Authentication Token"}'
r=$(curl -s -i -H "Authorization: Bearer sk-test" "$base/model/$claude/converse" -d '{"messages":[{"role":"user","content":[{"text":"x"}]}],"toolConfig":{"tools":[{"toolSpec":{"name":"get_weather","inputSchema":{"json":{"type":"object","properties":{"location":{"type":"string"}}}}}}]}}')
check br-bearer-tool "$r" '"content":[{"toolUse":{"toolUseId":"tooluse_mock1","name":"get_weather","input":{"location":"Paris"}}}]}},"stopReason":"tool_use"'
r=$(bedrock "/model/$claude%40status%3D429/converse" "$bmsg" -i)
check br-429 "$r" "x-amzn-ErrorType: ThrottlingException"
check br-429-body "$r" '{"message":"Too many requests, please wait before trying again."}'
# the event stream: walk the frames in bash, checking both CRCs with a CRC-32 of our own
crc_tab=()
for ((i = 0; i < 256; i++)); do
  c=$i; for ((k = 0; k < 8; k++)); do (( c = c & 1 ? 0xEDB88320 ^ (c >> 1) : c >> 1 )); done; crc_tab[i]=$c
done
es_walk() { # FILE -> one line per message: TYPE PAYLOAD (TYPE "!"exception-type for exceptions)
  local f=$1 off=0 n total hl h hend nl vl name val mtype etype xtype i c oct ch
  local -a b
  mapfile -t b < <(od -An -tu1 -v "$f" | tr -s ' ' '\n' | grep -v '^$')
  n=${#b[@]}
  be() { echo $(( b[$1] << 24 | b[$1 + 1] << 16 | b[$1 + 2] << 8 | b[$1 + 3] )); }
  crc() { c=0xFFFFFFFF; for ((i = $1; i < $1 + $2; i++)); do (( c = crc_tab[(c ^ b[i]) & 255] ^ (c >> 8) )); done; echo $(( c ^ 0xFFFFFFFF )); }
  str() { val=; for ((i = $1; i < $1 + $2; i++)); do printf -v oct '%03o' "${b[i]}"; printf -v ch "\\$oct"; val+=$ch; done; }
  while [ $((off + 16)) -le "$n" ]; do
    total=$(be $off) hl=$(be $((off + 4)))
    [ "$total" -ge 16 ] && [ $((off + total)) -le "$n" ] || { echo "BAD-FRAME"; break; }
    [ "$(crc $off 8)" = "$(be $((off + 8)))" ] || echo "PRELUDE-CRC-MISMATCH"
    [ "$(crc $off $((total - 4)))" = "$(be $((off + total - 4)))" ] || echo "MESSAGE-CRC-MISMATCH"
    h=$((off + 12)) hend=$((off + 12 + hl)) mtype= etype= xtype=
    while [ "$h" -lt "$hend" ]; do
      nl=${b[h]}; str $((h + 1)) "$nl"; name=$val
      vl=$(( b[h + nl + 2] << 8 | b[h + nl + 3] )); str $((h + nl + 4)) "$vl"
      case $name in :message-type) mtype=$val ;; :event-type) etype=$val ;; :exception-type) xtype=$val ;; esac
      h=$((h + nl + 4 + vl))
    done
    [ "$mtype" = exception ] && etype="!$xtype"
    str "$hend" $((total - 16 - hl))
    echo "$etype $val"
    off=$((off + total))
  done
}
r=$(bedrock "/model/$claude%40chunks%3D3/converse-stream" "$bmsg" -D "$tmp/br-head" -o "$tmp/br-es")
check br-stream-ctype "$(cat "$tmp/br-head")" "Content-Type: application/vnd.amazon.eventstream"
es_walk "$tmp/br-es" >"$tmp/br-events"
eq br-stream-events "$(cut -d' ' -f1 "$tmp/br-events" | tr '\n' ' ')" "messageStart contentBlockDelta contentBlockDelta contentBlockDelta contentBlockStop messageStop metadata "
eq br-stream-text "$(grep -o '"text":"[^"]*"' "$tmp/br-events" | cut -d'"' -f4 | tr -d '\n')" "Hello! This is"
check br-stream-stop "$(cat "$tmp/br-events")" '"stopReason":"end_turn"'
check br-stream-usage "$(cat "$tmp/br-events")" '"usage":{"inputTokens":4,"outputTokens":3,"totalTokens":7}'
curl -s -H "Authorization: Bearer sk-test" "$base/model/$claude/converse-stream" -o "$tmp/br-tool" \
  -d '{"messages":[{"role":"user","content":[{"text":"x"}]}],"toolConfig":{"tools":[{"toolSpec":{"name":"get_weather","inputSchema":{"json":{"type":"object","properties":{"location":{"type":"string"},"unit":{"type":"string"}}}}}}]}}'
es_walk "$tmp/br-tool" >"$tmp/br-tool-events"
check br-tool-start "$(cat "$tmp/br-tool-events")" '"start":{"toolUse":{"toolUseId":"tooluse_mock1","name":"get_weather"}}'
eq br-tool-input "$(sed -n 's/.*"toolUse":{"input":"\(.*\)"}},"p".*/\1/p' "$tmp/br-tool-events" | tr -d '\n' | sed 's/\\"/"/g')" '{"location":"Paris","unit":"celsius"}'
check br-tool-stop "$(cat "$tmp/br-tool-events")" '"stopReason":"tool_use"'
curl -s -H "Authorization: Bearer sk-test" "$base/model/$claude@chunks=4,stream_error=throttlingException,stream_error_after=2/converse-stream" -d "$bmsg" -o "$tmp/br-exc"
es_walk "$tmp/br-exc" >"$tmp/br-exc-events"
eq br-exception "$(cut -d' ' -f1 "$tmp/br-exc-events" | tr '\n' ' ')" "messageStart contentBlockDelta contentBlockDelta !throttlingException "
check br-crc "$(cat "$tmp/br-events" "$tmp/br-tool-events" "$tmp/br-exc-events")" '"role":"assistant"'
if grep -q CRC-MISMATCH "$tmp/br-events" "$tmp/br-tool-events" "$tmp/br-exc-events"; then
  fails=$((fails + 1)); echo "FAIL: br-crc: a CRC does not match gzip's"; else passes=$((passes + 1)); fi
r=$(bedrock "/model/amazon.titan-embed-text-v2%3A0/invoke" '{"inputText":"hello","dimensions":4}')
check br-titan "$r" '{"embedding":[0.673465908,0.592723608,0.369242013,-0.242451459],"inputTextTokenCount":2}'
r=$(bedrock "/model/cohere.embed-english-v3/invoke" '{"texts":["a","b"],"input_type":"search_document"}')
check br-cohere "$r" '"response_type":"embeddings_floats","texts":["a","b"]}'
eq br-cohere-count "$(grep -o '\],\[' <<<"$r" | wc -l)" 1
r=$(bedrock "/model/cohere.embed-english-v3/invoke" '{"texts":["a"]}' -i)
check br-cohere-input-type "$r" 'required key [input_type] not found'

# Cohere v2
co=(-H "Authorization: Bearer sk-test")
cmsg='"messages":[{"role":"user","content":"Hello there"}]'
ctools='"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"location":{"type":"string"}}}}}]'
r=$(curl -s "${co[@]}" "$base/v2/chat" -d "{\"model\":\"command-r\",$cmsg}")
check co-chat "$r" '"message":{"role":"assistant","content":[{"type":"text","text":"Hello! This is'
check co-chat-tail "$r" '"finish_reason":"COMPLETE","usage":{"billed_units":{"input_tokens":4,"output_tokens":18},"tokens":{"input_tokens":4,"output_tokens":18}}}'
r=$(curl -s "${co[@]}" "$base/v2/chat" -d "{\"model\":\"command-r\",$ctools,$cmsg}")
check co-tool "$r" '"tool_calls":[{"id":"call_mock1","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Paris\"}"}}]},"finish_reason":"TOOL_CALL"'
r=$(curl -s "${co[@]}" "$base/v2/chat" -d "{\"model\":\"command-r\",$ctools,\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"tool\",\"tool_call_id\":\"c\",\"content\":\"15\"}]}")
check co-tool-result "$r" '"finish_reason":"COMPLETE"'
r=$(curl -s -N "${co[@]}" "$base/v2/chat" -d "{\"model\":\"command-r@chunks=2\",\"stream\":true,$cmsg}")
eq co-stream-events "$(events <<<"$r")" "message-start content-start content-delta content-delta content-end message-end "
check co-stream-delta "$r" 'data: {"type":"content-delta","index":0,"delta":{"message":{"content":{"text":" This"}}}}'
r=$(curl -s -N "${co[@]}" "$base/v2/chat" -d "{\"model\":\"command-r\",\"stream\":true,$ctools,$cmsg}")
eq co-tool-stream-events "$(events <<<"$r" | tr ' ' '\n' | uniq | tr '\n' ' ')" "message-start tool-plan-delta tool-call-start tool-call-delta tool-call-end message-end "
r=$(curl -s -N "${co[@]}" "$base/v2/chat" -d "{\"model\":\"command-r@stream_error=ERROR\",\"stream\":true,$cmsg}")
check co-stream-error "$r" '"finish_reason":"ERROR"'
r=$(curl -s "${co[@]}" "$base/v2/embed" -d '{"model":"embed-english-v3.0","texts":["a"],"input_type":"search_document","embedding_types":["float"]}')
check co-embed "$r" '"embeddings":{"float":[[-0.153953820,'
check co-embed-meta "$r" '"texts":["a"],"meta":{"api_version":{"version":"2"},"billed_units":{"input_tokens":1}}'
r=$(curl -s -i "$base/v2/chat" -d "{\"model\":\"command-r\",$cmsg}")
check co-401 "$r" '"message":"no api key supplied"}'

# Ollama
r=$(curl -s "$base/api/chat" -d "{\"model\":\"llama3.2\",\"stream\":false,$cmsg}")
check ol-chat "$r" '"message":{"role":"assistant","content":"Hello! This is'
check ol-chat-done "$r" '"done":true,"done_reason":"stop","total_duration":1,'
r=$(curl -s -i "$base/api/chat" -d "{\"model\":\"llama3.2@chunks=3\",$cmsg}")
check ol-stream-ctype "$r" "Content-Type: application/x-ndjson"
eq ol-stream-lines "$(grep -c '"done":false}$' <<<"$r")" 3
check ol-stream-last "$r" '"done":true,"done_reason":"stop","total_duration":1,"load_duration":1,"prompt_eval_count":4,"prompt_eval_duration":1,"eval_count":3,'
r=$(curl -s "$base/api/chat" -d "{\"model\":\"llama3.2\",\"stream\":false,\"options\":{\"num_predict\":2},$ctools,$cmsg}")
check ol-tool "$r" '"tool_calls":[{"function":{"name":"get_weather","arguments":{"location":"Paris"}}}]'
r=$(curl -s "$base/api/chat" -d "{\"model\":\"llama3.2@chunks=3,stream_error=model crashed\",$cmsg}")
check ol-stream-error "$r" '{"error":"model crashed"}'
r=$(curl -s "$base/api/embed" -d '{"model":"all-minilm","input":["a","b"],"dimensions":2}')
check ol-embed "$r" '{"model":"all-minilm","embeddings":[[-0.809271872,-0.587434292],[0.684367061,-0.729137659]],'
r=$(curl -s -i "$base/api/chat" -d "{$cmsg}")
check ol-nomodel "$r" '{"error":"model is required"}'

# OpenAI mid-stream error
r=$(post /v1/chat/completions '{"model":"m@chunks=3,stream_error=server_error","stream":true}')
check oai-stream-error "$r" 'data: {"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}'
[ "$(grep -c 'DONE' <<<"$r")" = 0 ] && passes=$((passes + 1)) || { fails=$((fails + 1)); echo "FAIL: oai-stream-error: [DONE] after an error"; }

# OpenAI chat tool calls: with tools[] and a last message that is not a tool result
otools='"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"location":{"type":"string"},"unit":{"type":"string"}}}}}]'
omsg='"messages":[{"role":"user","content":"Weather in Paris?"}]'
oseq() { # an OpenAI SSE body -> one word per event
  grep '^data: ' | sed -E 's/.*"delta":\{"role".*/role/; s/.*"delta":\{"content".*/content/;
    s/.*"delta":\{"tool_calls":\[\{"index":0,"id":.*/open/; s/.*"delta":\{"tool_calls":\[\{"index":0,"function":\{"arguments".*/args/;
    s/.*"delta":\{\},"logprobs":null,"finish_reason":"([a-z_]*)".*/finish:\1/; s/.*"choices":\[\],"usage":\{.*/usage/;
    s/^data: \{"error".*/error/; s/^data: \[DONE\]$/done/' | uniq | tr '\n' ' '
}
r=$(post /v1/chat/completions "{\"model\":\"gpt-4o\",$omsg}")
check oai-notool "$r" '"message":{"role":"assistant","content":"Hello! This is'
check oai-notool-finish "$r" '"finish_reason":"stop"'
r=$(post /v1/chat/completions "{\"model\":\"gpt-4o\",$otools,$omsg}")
check oai-tool "$r" '"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_mock1","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Paris\",\"unit\":\"celsius\"}"}}],"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":'
check oai-tool-usage "$r" '"completion_tokens":10,'
r=$(post /v1/chat/completions "{\"model\":\"gpt-4o\",$otools,\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_mock1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{}\"}}]},{\"role\":\"tool\",\"tool_call_id\":\"call_mock1\",\"content\":\"15C\"}]}")
check oai-tool-result "$r" '"message":{"role":"assistant","content":"Hello! This is'
check oai-tool-result-finish "$r" '"finish_reason":"stop"'
r=$(post /v1/chat/completions "{\"model\":\"gpt-4o@tool_call=0\",$otools,$omsg}")
check oai-tool-call-0 "$r" '"finish_reason":"stop"'
r=$(post /v1/chat/completions "{\"model\":\"gpt-4o@tool_call=1\",$otools,\"messages\":[{\"role\":\"tool\",\"tool_call_id\":\"c\",\"content\":\"15C\"}]}")
check oai-tool-call-1 "$r" '"finish_reason":"tool_calls"'
r=$(post /v1/chat/completions "{\"model\":\"gpt-4o\",\"stream\":true,\"stream_options\":{\"include_usage\":true},$omsg}" | tr -d '\r')
eq oai-notool-stream-seq "$(oseq <<<"$r")" "role content finish:stop usage done "
r=$(post /v1/chat/completions "{\"model\":\"gpt-4o\",\"stream\":true,\"stream_options\":{\"include_usage\":true},$otools,$omsg}" | tr -d '\r')
eq oai-tool-stream-seq "$(oseq <<<"$r")" "role open args finish:tool_calls usage done "
check oai-tool-stream-role "$r" '"choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}'
check oai-tool-stream-open "$r" '"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_mock1","type":"function","function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}'
check oai-tool-stream-usage "$r" '"choices":[],"usage":{"prompt_tokens":'
n=$(grep -c '"function":{"arguments":"' <<<"$r")
[ "$n" -ge 3 ] && passes=$((passes + 1)) || { fails=$((fails + 1)); echo "FAIL: oai-tool-stream-pieces: $n"; }
json=$(grep -o '"function":{"arguments":".*"}}\]},"logprobs"' <<<"$r" | sed 's/^"function":{"arguments":"//; s/"}}\]},"logprobs"$//' | tr -d '\n' | sed 's/\\"/"/g')
eq oai-tool-stream-json "$json" '{"location":"Paris","unit":"celsius"}'
r=$(post /v1/chat/completions "{\"model\":\"gpt-4o@stream_error=server_error,stream_error_after=2\",\"stream\":true,$otools,$omsg}" | tr -d '\r')
eq oai-tool-stream-error "$(oseq <<<"$r")" "role open args error "

# split_utf8: some network read must end inside a multi-byte character (curl --trace
# logs each read); the decoded text must still be whole
splits() { # TRACE -> the last byte of each "Recv data" block, hex
  awk '/<= Recv data/{if (last != "") print last; last = ""; inb = 1; next}
       /^(=>|<=|==)/{inb = 0}
       inb{ hx = substr($0, 7, 48); n = split(hx, a, " "); if (n) last = a[n] }
       END{ if (last != "") print last }' "$1"
}
curl -s -N --trace "$tmp/tr1" "${ant[@]}" "$base/v1/messages" -d "{\"model\":\"c@split_utf8,chunks=3\",\"max_tokens\":64,\"stream\":true,$user}" >"$tmp/sp1"
check split-ant-lead "$(splits "$tmp/tr1" | tr '\n' ' ')" "c3 "
check split-ant-text "$(cat "$tmp/sp1")" '"text":" Thïs"'
curl -s -N --trace "$tmp/tr2" "$base/api/chat" -d "{\"model\":\"llama3.2\",$cmsg,\"mock\":{\"split_utf8\":true,\"content\":\"a 東京 🚀\"}}" >"$tmp/sp2"
check split-ol-lead "$(splits "$tmp/tr2" | tr '\n' ' ')" "e6 "
check split-ol-text "$(cat "$tmp/sp2")" '"content":" 🚀"'
curl -s -H "Authorization: Bearer sk-test" --trace "$tmp/tr3" "$base/model/$claude@split_utf8,chunks=3/converse-stream" -d "$bmsg" -o "$tmp/sp3"
check split-br-lead "$(splits "$tmp/tr3" | tr '\n' ' ')" "c3 "
es_walk "$tmp/sp3" >"$tmp/sp3-events"
eq split-br-text "$(grep -o '"text":"[^"]*"' "$tmp/sp3-events" | cut -d'"' -f4 | tr -d '\n')" "Héllo! Thïs is"

# what the gateway sent, as the log shows it
r=$(log)
check log-ant-key "$r" '"x-api-key":"sk-test"'
check log-ant-body "$r" '\"max_tokens\":64'
check log-br-sig "$r" '"authorization":"AWS4-HMAC-SHA256 Credential=AKIDMOCK/'
check log-br-path "$r" '"path":"/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse"'
check log-token "$r" '"path":"/token"'

# ---- the other OpenAI APIs: Responses, images, audio, moderations, rerank, files, batches ----
fn='"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"location":{"type":"string"}}}}]'
r=$(post /v1/responses '{"model":"gpt-4o","input":"Hi","instructions":"x"}')
check resp-object "$r" '"object":"response","created_at":'
check resp-text "$r" '"content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Hello! This is'
check resp-usage "$r" '"output_tokens":18,"output_tokens_details":{"reasoning_tokens":0}'
rid=$(grep -o '"id":"resp_[0-9a-f]*"' <<<"$r" | head -1 | cut -d'"' -f4)
r=$(curl -s -i "${auth[@]}" "$base/v1/responses/$rid")
check resp-get "$r" "\"id\":\"$rid\""
r=$(curl -s "${auth[@]}" "$base/v1/responses/$rid/input_items")
check resp-items "$r" '"type":"message","role":"user","content":[{"type":"input_text","text":"Hi"}]}],"first_id":"msg_'
r=$(post /responses "{\"model\":\"gpt-4o\",\"previous_response_id\":\"$rid\",\"input\":\"weather?\",$fn}")
check resp-prev "$r" "\"previous_response_id\":\"$rid\""
check resp-call "$r" '"type":"function_call","status":"completed","arguments":"{\"location\":\"Paris\"}","call_id":"call_'
r=$(post /v1/responses "{\"model\":\"gpt-4o\",\"input\":[{\"type\":\"function_call_output\",\"call_id\":\"c\",\"output\":\"sunny\"}],$fn}")
check resp-after-call "$r" '"type":"message"'
r=$(curl -s -i -X DELETE "${auth[@]}" "$base/v1/responses/$rid")
check resp-delete "$r" '"object":"response","deleted":true}'
r=$(curl -s -i "${auth[@]}" "$base/v1/responses/$rid")
check resp-gone "$r" "HTTP/1.1 404"
r=$(post /v1/responses "{\"model\":\"gpt-4o\",\"previous_response_id\":\"$rid\",\"input\":\"x\"}")
check resp-prev-400 "$r" '"param":"previous_response_id","code":"previous_response_not_found"'
r=$(post /v1/responses '{"model":"gpt-4o","input":"Hi","stream":true,"mock":{"chunks":2}}')
eq resp-stream-events "$(events <<<"$r")" "response.created response.in_progress response.output_item.added response.content_part.added response.output_text.delta response.output_text.delta response.output_text.done response.content_part.done response.output_item.done response.completed "
eq resp-stream-seq "$(grep -o '"sequence_number":[0-9]*' <<<"$r" | cut -d: -f2 | tr '\n' ' ')" "0 1 2 3 4 5 6 7 8 9 "
r=$(post /v1/responses "{\"model\":\"gpt-4o\",\"input\":\"w\",\"stream\":true,$fn}")
eq resp-stream-call "$(events <<<"$r")" "response.created response.in_progress response.output_item.added response.function_call_arguments.delta response.function_call_arguments.delta response.function_call_arguments.delta response.function_call_arguments.done response.output_item.done response.completed "
r=$(curl -s -i "$base/openai/responses?api-version=2025-03-01-preview" -H "api-key: sk-test" -d '{"model":"gpt-4o","input":"x"}')
check resp-azure "$r" '"object":"response"'

r=$(post /v1/images/generations '{"model":"dall-e-3","prompt":"a cat","n":2}')
check img-url "$r" '"data":[{"url":"https://mock.invalid/img/'
check img-revised "$r" '"revised_prompt":"a cat"'
r=$(post /images/generations '{"model":"gpt-image-1","prompt":"a cat"}')
check img-b64 "$r" '"b64_json":"iVBORw0KGgo'
check img-usage "$r" '"usage":{"input_tokens":'
printf 'PNG' >"$tmp/i.png"
r=$(curl -s -i -H "Authorization: Bearer sk-test" "$base/v1/images/edits" -F model=dall-e-2 -F prompt=hat -F "image=@$tmp/i.png" -F response_format=b64_json)
check img-edit "$r" '"b64_json":"'
r=$(curl -s -i -H "Authorization: Bearer sk-test" "$base/v1/images/edits" -F model=dall-e-2 -F prompt=hat)
check img-edit-noimage "$r" "HTTP/1.1 400"
r=$(curl -s -i "$base/openai/deployments/dalle@status=503/images/generations?api-version=2024-02-01" -H "api-key: sk-test" -d '{"prompt":"x"}')
check img-azure-fault "$r" "HTTP/1.1 503"

curl -s -D "$tmp/sph" "${auth[@]}" "$base/v1/audio/speech" -d '{"model":"tts-1","input":"Hello","voice":"alloy"}' -o "$tmp/sp.mp3"
check speech-ctype "$(cat "$tmp/sph")" "Content-Type: audio/mpeg"
check speech-chunked "$(cat "$tmp/sph")" "Transfer-Encoding: chunked"
eq speech-magic "$(head -c 3 "$tmp/sp.mp3")" "ID3"
eq speech-size "$(wc -c <"$tmp/sp.mp3" | tr -d ' ')" "2208"
head -c 1000 /dev/zero >"$tmp/a.wav"
r=$(curl -s -i -H "Authorization: Bearer sk-test" "$base/v1/audio/transcriptions" -F model=whisper-1 -F "file=@$tmp/a.wav")
check stt-json "$r" '{"text":"mock transcription of 1000 bytes"}'
r=$(curl -s -i -H "Authorization: Bearer sk-test" "$base/audio/translations" -F model=whisper-1 -F "file=@$tmp/a.wav" -F response_format=text)
check stt-text "$r" "Content-Type: text/plain"
r=$(curl -s -i -H "Authorization: Bearer sk-test" "$base/v1/audio/transcriptions" -F model=whisper-1)
check stt-nofile "$r" "HTTP/1.1 400"
check stt-log "$(log)" '"multipart":{"fields":["model"],"files":[],"model":"whisper-1"}'

r=$(post /v1/moderations '{"input":["a","b"]}')
check mod-shape "$r" '"model":"omni-moderation-latest","results":[{"flagged":false,"categories":{"harassment":false'
eq mod-count "$(grep -o '"flagged"' <<<"$r" | wc -l | tr -d ' ')" "2"
for p in /v1/rerank /v2/rerank /rerank; do
  r=$(post $p '{"model":"rerank-english-v3.0","query":"capital of France","documents":["Berlin is in Germany","Paris is the capital of France","blue sky"],"top_n":2}')
  check "rerank$p" "$r" '"results":[{"index":1,"relevance_score":0.9'
  check "rerank-meta$p" "$r" '"meta":{"api_version":{"version":"2"},"billed_units":{"search_units":1}}'
done

printf '{"custom_id":"1"}\n' >"$tmp/in.jsonl"
r=$(curl -s -H "Authorization: Bearer sk-test" "$base/v1/files" -F purpose=batch -F "file=@$tmp/in.jsonl")
check file-upload "$r" '"purpose":"batch","filename":"in.jsonl","bytes":18,'
fid=$(grep -o '"id":"file-[0-9a-f]*"' <<<"$r" | cut -d'"' -f4)
check file-list "$(curl -s "${auth[@]}" "$base/v1/files")" "\"id\":\"$fid\""
eq file-content "$(curl -s "${auth[@]}" "$base/v1/files/$fid/content")" '{"custom_id":"1"}'
r=$(post /v1/batches "{\"input_file_id\":\"$fid\",\"endpoint\":\"/v1/chat/completions\",\"completion_window\":\"24h\"}")
check batch-create "$r" '"object":"batch","endpoint":"/v1/chat/completions"'
check batch-status "$r" '"status":"validating"'
bid=$(grep -o '"id":"batch_[0-9a-f]*"' <<<"$r" | cut -d'"' -f4)
check batch-cancel "$(curl -s -X POST "${auth[@]}" "$base/v1/batches/$bid/cancel")" '"status":"cancelling"'
check batch-cancelled "$(curl -s "${auth[@]}" "$base/openai/batches/$bid?api-version=2024-10-21" -H "api-key: sk-test")" '"status":"cancelled"'
check batch-badfile "$(post /v1/batches '{"input_file_id":"file-x","endpoint":"/v1/embeddings","completion_window":"24h"}')" "HTTP/1.1 400"
check file-delete "$(curl -s -X DELETE "${auth[@]}" "$base/v1/files/$fid")" '"object":"file","deleted":true}'
check file-gone "$(curl -s -i "${auth[@]}" "$base/v1/files/$fid")" "HTTP/1.1 404"

# no_usage: answers without usage (JSON, and a stream that was asked for it)
r=$(post /v1/chat/completions '{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"mock":{"no_usage":true}}')
check no-usage-json "$r" '"finish_reason":"stop"}]}'
check no-usage-json-none "n=$(grep -c '"usage"' <<<"$r")" "n=0"
r=$(post /v1/chat/completions '{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}],"mock":{"chunks":2,"no_usage":true}}')
check no-usage-stream-done "$r" 'data: [DONE]'
check no-usage-stream-none "n=$(grep -c '"usage"' <<<"$r")" "n=0"
r=$(curl -s "$base/api/chat" -d '{"model":"llama3.1@no_usage","stream":false,"messages":[{"role":"user","content":"hi"}]}')
check no-usage-ollama "$r" '"done":true,"done_reason":"stop","total_duration":1,"load_duration":1}'
check no-usage-ollama-none "n=$(grep -c 'eval_count' <<<"$r")" "n=0"
# paced-stream stats: one completed, one whose reader leaves after 3 events (head + role + 2 words)
curl -s -X POST "$base/__mock/reset" >/dev/null
post /v1/chat/completions '{"model":"gpt-4o","stream":true,"messages":[],"mock":{"chunks":2,"chunk_delay_ms":5}}' >/dev/null
r=$(curl -s "$base/__mock/stats")
check stream-stats-done "$r" '"streams_started":1,"streams_completed":1,"streams_cut":0,"last_stream_segments":5,"last_stream_segments_sent":5'
curl -s -N "${auth[@]}" "$base/v1/chat/completions" \
  -d '{"model":"gpt-4o","stream":true,"messages":[],"mock":{"chunks":50,"chunk_delay_ms":100}}' | head -n 5 >/dev/null
for _ in $(seq 100); do r=$(curl -s "$base/__mock/stats"); grep -qF '"streams_cut":1' <<<"$r" && break; sleep 0.05; done
check stream-stats-cut "$r" '"streams_started":2,"streams_completed":1,"streams_cut":1,"last_stream_segments":53,'
sent=$(grep -o '"last_stream_segments_sent":[0-9]*' <<<"$r" | cut -d: -f2)
check stream-stats-stopped "stopped=$([ "${sent:-99}" -lt 20 ] && echo yes)" "stopped=yes"

echo "mock selftest: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
