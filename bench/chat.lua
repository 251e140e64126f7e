-- chat.lua - wrk script for bench/run.sh: POSTs a ~1 KB chat-completions body.
-- BENCH_STREAM=1 asks for an SSE stream of BENCH_CHUNKS (default 20) chunks.
-- BENCH_MODEL picks the model group (default bench-model); BENCH_KEY the key (default sk-bench).
-- BENCH_API=responses sends it as a Responses API request instead.
-- BENCH_MAX_REQUESTS=N (bench/instr.sh, with -t1): after N responses print
-- "BENCH requests=N errors=<non-2xx>" and exit the process at once (wrk itself would wait out -d).
-- done() prints one parseable line: "BENCH rps=… p50_us=… p99_us=… errors=… requests=…".
local stream = os.getenv("BENCH_STREAM") == "1"
local chunks = tonumber(os.getenv("BENCH_CHUNKS") or "20")

local system = "You are a helpful assistant for a railway operations team. Answer concisely, " ..
  "cite the relevant section of the operating manual when you can, and say so plainly when " ..
  "you do not know. Use metric units and 24-hour times. When a question involves safety, " ..
  "remind the reader to follow the possession and isolation procedures before any work on the track."
local user = "Our night shift keeps seeing a signal fault on the approach to platform 4 between " ..
  "02:10 and 02:40. The track circuit reports occupied although no train is there, and it clears " ..
  "by itself after a few minutes. We already replaced the relay last month. What are the three " ..
  "most likely causes, in order, and what should the technician check first on site tonight? " ..
  "Please keep it under 150 words."

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("BENCH_KEY") or "sk-bench")
local model = os.getenv("BENCH_MODEL") or "bench-model"
local body = '{"model":"' .. model .. '","messages":[' ..
  '{"role":"system","content":"' .. system .. '"},' ..
  '{"role":"user","content":"' .. user .. '"}],' ..
  '"temperature":0.2,"max_tokens":300,"user":"bench-client-0001"'
if stream then
  body = body .. ',"stream":true,"stream_options":{"include_usage":true},"mock":{"chunks":' .. chunks .. '}'
end
-- BENCH_API=responses: the same conversation as a Responses API request (POST /v1/responses)
if os.getenv("BENCH_API") == "responses" then
  body = '{"model":"' .. model .. '","instructions":"' .. system .. '","input":"' .. user .. '",' ..
    '"temperature":0.2,"max_output_tokens":300,"user":"bench-client-0001","store":false'
  if stream then body = body .. ',"stream":true,"mock":{"chunks":' .. chunks .. '}' end
end
wrk.body = body .. '}'
-- BENCH_BODY_OUT=FILE: also write the body to FILE (bench/cache.sh replays it with curl)
if os.getenv("BENCH_BODY_OUT") then
  local f = io.open(os.getenv("BENCH_BODY_OUT"), "w")
  if f then f:write(wrk.body); f:close() end
end

local max = tonumber(os.getenv("BENCH_MAX_REQUESTS") or "")
if max then
  local n, bad = 0, 0
  function response(status, headers, body)
    n = n + 1
    if status < 200 or status > 299 then bad = bad + 1 end
    if n == max then
      io.write(string.format("BENCH requests=%d errors=%d\n", n, bad))
      io.flush()
      os.exit(0)
    end
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("BENCH rps=%.1f p50_us=%d p99_us=%d errors=%d requests=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.status + e.timeout, summary.requests))
end
