#!/usr/bin/env bash
# mcp.sh - what switchyard's MCP gateway costs a tool call (issue 24): the same
# tools/call of the echo tool sent to an MCP server made with the official
# TypeScript SDK (tests/mcp/servers/http.mjs, streamable HTTP, JSON answers) by
# wrk directly, and through switchyard's POST /mcp (the tool named bed-echo,
# the master key), each on a session an initialize opened first, in
# interleaved rounds.
#
#   direct   wrk -> the SDK server
#   gateway  wrk -> switchyard /mcp -> the SDK server (one upstream session per worker)
#
# One switchyard worker, no database. Prints, per target: RPS at c=CONC and
# the gateway's RPS ratio to direct; CPU us per request of switchyard, of the
# SDK server and of both; and "added": the whole CPU per request through the
# gateway less the whole CPU per request direct (the issue asks < 100 us). The
# SDK server (Node) is the bottleneck of both paths: the ratio shows how much
# the extra hop's latency costs in throughput, the CPU figures what it costs
# in work.
#
#   bench/mcp.sh [--rounds N] [--duration S] [--conc C]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
. "$here/lib.sh"
rounds=3 dur=5 conc=8
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;; --duration) dur=$2; shift ;; --conc) conc=$2; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
  shift
done
ensure_pkgs wrk:wrk curl:curl node:nodejs npm:npm
bench_setup
[ -d "$root/tests/mcp/node_modules/@modelcontextprotocol/sdk" ] ||
  (cd "$root/tests/mcp" && npm ci --silent --no-audit --no-fund >/dev/null)

# the SDK server
sport=$(free_port)
node "$root/tests/mcp/servers/http.mjs" --port "$sport" --json --tools echo >"$tmp/server.log" 2>&1 &
server_pid=$!; pids+=($server_pid)
wait_port "$sport" || { echo "the MCP server did not start"; cat "$tmp/server.log"; exit 1; }

# switchyard in front of it
key=sk-bench-master
cat >"$tmp/sy.yaml" <<YAML
model_list:
  - model_name: m
    litellm_params: {model: mock/m, mock_response: "ok"}
mcp_servers:
  bed: {url: "http://127.0.0.1:$sport/mcp", transport: http}
general_settings:
  master_key: $key
YAML
gport=$(free_port)
"$builddir/switchyard" --config "$tmp/sy.yaml" --port "$gport" --workers 1 --db none >"$tmp/sy.log" 2>&1 &
sy_pid=$!; pids+=($sy_pid)
wait_port "$gport" || { echo "switchyard did not start"; cat "$tmp/sy.log"; exit 1; }

# initialize URL [KEY] -> prints the Mcp-Session-Id (and sends notifications/initialized)
initialize() {
  local url=$1 auth=() sid
  [ -n "${2:-}" ] && auth=(-H "Authorization: Bearer $2")
  sid=$(curl -s -D - -o /dev/null "${auth[@]}" -H 'content-type: application/json' \
    -H 'accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' \
    "$url" | awk 'tolower($1)=="mcp-session-id:"{print $2}' | tr -d '\r')
  [ -n "$sid" ] || { echo "initialize at $url: no Mcp-Session-Id" >&2; return 1; }
  curl -s -o /dev/null "${auth[@]}" -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
    -H "mcp-session-id: $sid" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$url"
  echo "$sid"
}
direct_url=http://127.0.0.1:$sport/mcp
gw_url=http://127.0.0.1:$gport/mcp
direct_sid=$(initialize "$direct_url")
gw_sid=$(initialize "$gw_url" "$key")

# one call each way first: both must answer the echo
call() { # url sid tool key
  local auth=()
  [ -n "${4:-}" ] && auth=(-H "Authorization: Bearer $4")
  curl -s "${auth[@]}" -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
    -H "mcp-session-id: $2" -H 'mcp-protocol-version: 2025-11-25' \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$3\",\"arguments\":{\"text\":\"hello from the bench\"}}}" "$1"
}
for t in direct gateway; do
  if [ $t = direct ]; then a=$(call "$direct_url" "$direct_sid" echo); else a=$(call "$gw_url" "$gw_sid" bed-echo "$key"); fi
  grep -q 'hello from the bench' <<<"$a" || { echo "$t: the echo did not come back: $a"; cat "$tmp/sy.log"; exit 1; }
done

run() { # target -> wrk output
  if [ "$1" = direct ]; then
    MCP_TOOL=echo MCP_SESSION=$direct_sid MCP_KEY='' wrk -t1 -c"$conc" -d"${dur}s" -s "$here/mcp.lua" "$direct_url" 2>&1
  else
    MCP_TOOL=bed-echo MCP_SESSION=$gw_sid MCP_KEY=$key wrk -t1 -c"$conc" -d"${dur}s" -s "$here/mcp.lua" "$gw_url" 2>&1
  fi
}
TARGETS=(direct gateway)
declare -A rps req sy_t srv_t
for r in $(seq "$rounds"); do
  for t in "${TARGETS[@]}"; do
    s0=$(cpu_ticks "$sy_pid"); v0=$(cpu_ticks "$server_pid")
    out=$(run "$t")
    s1=$(cpu_ticks "$sy_pid"); v1=$(cpu_ticks "$server_pid")
    line=$(grep '^BENCH ' <<<"$out") || { echo "$t: wrk failed: $out"; exit 1; }
    r1=$(sed -E 's/.*rps=([0-9.]+).*/\1/' <<<"$line")
    n1=$(sed -E 's/.*requests=([0-9]+).*/\1/' <<<"$line")
    bad=$(sed -E 's/.*bad=([0-9]+).*/\1/' <<<"$line")
    [ "$bad" = 0 ] || echo "warning: $t: $bad answers were not a 200 with a result"
    rps[$t]=$(awk -v a="${rps[$t]:-0}" -v b="$r1" 'BEGIN{print a+b}')
    req[$t]=$(( ${req[$t]:-0} + n1 ))
    sy_t[$t]=$(( ${sy_t[$t]:-0} + s1 - s0 ))
    srv_t[$t]=$(( ${srv_t[$t]:-0} + v1 - v0 ))
    echo "round $r: $t rps(c=$conc)=$r1 $line"
  done
done
echo
printf '%-8s %9s %9s %12s %12s %12s %10s\n' target rps rps/direct sy_us/req server_us/req total_us/req added_us
for t in "${TARGETS[@]}"; do
  awk -v t="$t" -v rps="${rps[$t]}" -v drps="${rps[direct]}" -v n="${req[$t]}" -v dn="${req[direct]}" \
    -v sy="${sy_t[$t]}" -v srv="${srv_t[$t]}" -v dsy="${sy_t[direct]}" -v dsrv="${srv_t[direct]}" \
    -v hz="$CLK_TCK" -v rounds="$rounds" \
    'BEGIN{us=1e6/hz; a=sy*us/n; b=srv*us/n; d=(dsy+dsrv)*us/dn;
           printf "%-8s %9.0f %9.3f %12.1f %12.1f %12.1f %+10.1f\n", t, rps/rounds, rps/drps, a, b, a+b, a+b-d}'
done
