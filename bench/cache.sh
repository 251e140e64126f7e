#!/usr/bin/env bash
# cache.sh - what a response-cache hit costs, against nginx serving a static
# file of the same size (the floor for "answer these bytes from memory"):
#   nginx-static  nginx, GET of a file holding the cached response's bytes
#   sy-local      switchyard, litellm_settings.cache with type local: every
#                 request of the run is a hit (one warm-up request stored it)
#   sy-redis      the same with type redis (a GET per request)
#   sy-stream     switchyard local cache, the request with "stream": true: the
#                 hit is replayed as an SSE stream
# One worker each, no database, no auth; interleaved rounds. Prints RPS, CPU
# us per request and the ratio to nginx-static.
#
#   bench/cache.sh [--rounds N] [--duration S] [--conc C]
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
NGINX=${NGINX:-/usr/sbin/nginx}
ensure_pkgs wrk:wrk curl:curl redis-server:redis-server nginx:nginx-light
bench_setup

start_mock
rport=$(free_port)
redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no >"$tmp/redis.log" 2>&1 &
pids+=($!)
wait_port "$rport" || { echo "redis did not start"; exit 1; }
models="model_list:
  - model_name: bench-model
    litellm_params: {model: openai/gpt-4o-mini, api_base: \"$mock/v1\", api_key: sk-bench-up}"
printf '%s\nlitellm_settings:\n  cache: true\n  cache_params: {type: local, ttl: 3600}\n' "$models" >"$tmp/loc.yaml"
printf '%s\nlitellm_settings:\n  cache: true\n  cache_params: {type: redis, host: 127.0.0.1, port: %s, ttl: 3600}\n' \
  "$models" "$rport" >"$tmp/red.yaml"
start() { # name config -> port_<name>, pid_<name>
  local p; p=$(free_port)
  "$builddir/switchyard" --config "$2" --port "$p" --workers 1 --db none >"$tmp/$1.log" 2>&1 &
  local pid=$!; pids+=($pid)
  wait_port "$p" || { echo "switchyard ($1) did not start"; cat "$tmp/$1.log"; exit 1; }
  eval "port_$1=$p pid_$1=$pid"
}
start loc "$tmp/loc.yaml"
start red "$tmp/red.yaml"
# warm: one request each stores the response; its bytes become nginx's file
warm() { # port stream (chat.lua writes the body it sends to BENCH_BODY_OUT)
  BENCH_BODY_OUT=$tmp/body-$2.json BENCH_STREAM=$2 BENCH_MAX_REQUESTS=1 wrk -t1 -c1 -d5s -s "$here/chat.lua" "http://127.0.0.1:$1/v1/chat/completions" >/dev/null 2>&1 || true
}
warm "$port_loc" 0; warm "$port_loc" 1; warm "$port_red" 0
mkdir -p "$tmp/www"
# the cached response as switchyard returns it (a hit: the stored bytes)
size=$(curl -s -m 5 -o "$tmp/www/resp.json" -w '%{size_download}' "http://127.0.0.1:$port_loc/v1/chat/completions" \
  -H 'Content-Type: application/json' --data-binary "@$tmp/body-0.json")
nport=$(free_port)
cat >"$tmp/nginx.conf" <<NGX
worker_processes 1;
daemon off;
pid $tmp/nginx.pid;
error_log $tmp/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $tmp/body;
  proxy_temp_path $tmp/proxy;
  fastcgi_temp_path $tmp/fastcgi;
  uwsgi_temp_path $tmp/uwsgi;
  scgi_temp_path $tmp/scgi;
  keepalive_requests 1000000;
  default_type application/json;
  server {
    listen 127.0.0.1:$nport;
    root $tmp/www;
  }
}
NGX
"$NGINX" -c "$tmp/nginx.conf" -p "$tmp/" -e "$tmp/nginx-error.log" &
nginx_pid=$!
pids+=($nginx_pid)
wait_port "$nport" || { echo "nginx did not start"; cat "$tmp/nginx-error.log"; exit 1; }
echo "cached response: $size bytes (nginx serves the same bytes from $tmp/www/resp.json)"

TARGETS=(nginx-static sy-local sy-redis sy-stream)
run_one() { # target -> "rps req"
  case $1 in
    nginx-static) wrk -t1 -c"$conc" -d"${dur}s" "http://127.0.0.1:$nport/resp.json" ;;
    sy-local) wrk -t1 -c"$conc" -d"${dur}s" -s "$here/chat.lua" "http://127.0.0.1:$port_loc/v1/chat/completions" ;;
    sy-redis) wrk -t1 -c"$conc" -d"${dur}s" -s "$here/chat.lua" "http://127.0.0.1:$port_red/v1/chat/completions" ;;
    sy-stream) BENCH_STREAM=1 wrk -t1 -c"$conc" -d"${dur}s" -s "$here/chat.lua" "http://127.0.0.1:$port_loc/v1/chat/completions" ;;
  esac
}
pids_of() { case $1 in nginx-static) proc_tree "$nginx_pid" ;; sy-redis) echo "$pid_red" ;; *) echo "$pid_loc" ;; esac; }
declare -A sum_rps sum_req sum_ticks
for r in $(seq "$rounds"); do
  for t in "${TARGETS[@]}"; do
    ps=$(pids_of "$t")
    # shellcheck disable=SC2086
    t0=$(cpu_ticks $ps)
    out=$(run_one "$t" 2>&1)
    # shellcheck disable=SC2086
    t1=$(cpu_ticks $ps)
    if grep -q '^BENCH ' <<<"$out"; then
      rps=$(sed -n 's/^BENCH .*rps=\([0-9.]*\).*/\1/p' <<<"$out")
      req=$(sed -n 's/^BENCH .*requests=\([0-9]*\).*/\1/p' <<<"$out")
    else
      rps=$(awk '/^Requests\/sec/{print $2}' <<<"$out")
      req=$(awk '/requests in/{print $1}' <<<"$out")
    fi
    sum_rps[$t]=$(awk -v a="${sum_rps[$t]:-0}" -v b="$rps" 'BEGIN{print a+b}')
    sum_req[$t]=$(( ${sum_req[$t]:-0} + req ))
    sum_ticks[$t]=$(( ${sum_ticks[$t]:-0} + t1 - t0 ))
    echo "round $r: $t rps=$rps"
  done
done
hits=$(curl -s "http://127.0.0.1:$port_loc/metrics" | awk '/^litellm_cache_hits_metric_total/{s+=$NF} END{print s+0}')
misses=$(curl -s "http://127.0.0.1:$port_loc/metrics" | awk '/^litellm_cache_misses_metric_total/{s+=$NF} END{print s+0}')
echo
echo "local instance: cache hits $hits, misses $misses"
printf '%-13s %10s %14s %12s\n' target rps rps/nginx cpu_us/req
for t in "${TARGETS[@]}"; do
  awk -v t="$t" -v rps="${sum_rps[$t]}" -v brps="${sum_rps[nginx-static]}" -v n="$rounds" -v tk="${sum_ticks[$t]}" \
    -v req="${sum_req[$t]}" -v hz="$CLK_TCK" \
    'BEGIN{printf "%-13s %10.0f %14.3f %12.1f\n", t, rps/n, rps/brps, tk/hz*1e6/req}'
done
