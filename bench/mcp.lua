-- mcp.lua - wrk script for bench/mcp.sh: POSTs one MCP tools/call (JSON-RPC)
-- of the echo tool on an initialized session.
--   MCP_TOOL     the tool's name ("echo" at the server, "bed-echo" through switchyard)
--   MCP_SESSION  the Mcp-Session-Id an initialize returned
--   MCP_KEY      a key for Authorization: Bearer (none: no header)
-- Counts the answers that are not 200 with a result; done() prints one line:
-- "BENCH rps=… p50_us=… p99_us=… errors=… bad=… requests=…".
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Mcp-Session-Id"] = os.getenv("MCP_SESSION") or ""
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
if os.getenv("MCP_KEY") and os.getenv("MCP_KEY") ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("MCP_KEY")
end
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"' ..
  (os.getenv("MCP_TOOL") or "echo") .. '","arguments":{"text":"hello from the bench"}}}'

local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) bad = 0 end
function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"result"', 1, true) then bad = bad + 1 end
end

function done(summary, latency, requests)
  local e = summary.errors
  local b = 0
  for _, t in ipairs(threads) do b = b + (t:get("bad") or 0) end
  io.write(string.format("BENCH rps=%.1f p50_us=%d p99_us=%d errors=%d bad=%d requests=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.status + e.timeout, b, summary.requests))
end
