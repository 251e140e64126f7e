#!/usr/bin/env bash
# logging.sh - what the logging callbacks cost the proxy path (issue 22):
# the same chat request through switchyard with no callback, with each sink
# alone, and with Langfuse and OpenTelemetry together, against nginx doing a
# bare proxy_pass to the same mock, in interleaved rounds.
#
#   nginx        proxy_pass to the mock (the floor)
#   off          switchyard, no callback
#   otel         success_callback: [otel]      (OTLP/HTTP protobuf)
#   langfuse     success_callback: [langfuse]  (ingestion API batches)
#   lf+otel      both
#   webhook      success_callback: [generic_api]
#   datadog      success_callback: [datadog]
#   s3           success_callback: [s3]        (one signed PUT per request)
# Every sink points at a second nginx that answers 200 to anything (the
# receiver costs nothing measurable and never pushes back). Messages and
# responses are logged (LiteLLM's default). One worker each, no database.
#
# Prints, per target: RPS at c=32 and its ratio to "off", the process's CPU us
# per request (every thread: the logging thread included) and the difference
# to "off" (what the sink costs per request), and the mean latency at c=1 and
# its difference to "off" (the sinks must add none: delivery is batched on the
# logging thread). Also each sink's sent/dropped counts from /metrics, so a run
# whose records were not delivered is visible.
#
#   bench/logging.sh [--rounds N] [--duration S] [--conc C]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
. "$here/lib.sh"
rounds=2 dur=5 conc=32
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;; --duration) dur=$2; shift ;; --conc) conc=$2; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
  shift
done
NGINX=${NGINX:-/usr/sbin/nginx}
ensure_pkgs wrk:wrk curl:curl nginx:nginx-light
bench_setup
start_mock
mport=${mock##*:}

# nginx: the proxy_pass floor, and a receiver answering 200 to every sink
nport=$(free_port)
write_nginx_conf "$tmp/ngx" "$nport" "$mport" 1
"$NGINX" -c "$tmp/ngx/nginx.conf" -p "$tmp/ngx/" -e "$tmp/ngx/error.log" &
nginx_pid=$!; pids+=($nginx_pid)
rport=$(free_port)
mkdir -p "$tmp/rcv"
cat >"$tmp/rcv/nginx.conf" <<NGX
worker_processes 1;
daemon off;
pid $tmp/rcv/nginx.pid;
error_log $tmp/rcv/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $tmp/rcv/body;
  proxy_temp_path $tmp/rcv/proxy;
  fastcgi_temp_path $tmp/rcv/fastcgi;
  uwsgi_temp_path $tmp/rcv/uwsgi;
  scgi_temp_path $tmp/rcv/scgi;
  keepalive_requests 1000000;
  client_max_body_size 200m;
  client_body_buffer_size 16m;
  server {
    listen 127.0.0.1:$rport;
    location / { default_type application/json; return 200 '{"successes":[],"errors":[],"partialSuccess":{}}'; }
  }
}
NGX
"$NGINX" -c "$tmp/rcv/nginx.conf" -p "$tmp/rcv/" -e "$tmp/rcv/error.log" &
pids+=($!)
wait_port "$nport" && wait_port "$rport" || { echo "nginx did not start"; exit 1; }

rcv=http://127.0.0.1:$rport
export OTEL_EXPORTER_OTLP_ENDPOINT=$rcv OTEL_SERVICE_NAME=switchyard-bench
export LANGFUSE_HOST=$rcv LANGFUSE_PUBLIC_KEY=pk-lf-bench LANGFUSE_SECRET_KEY=sk-lf-bench
export GENERIC_LOGGER_ENDPOINT=$rcv/log
export DD_API_KEY=bench DD_SITE=bench.invalid DD_BASE_URL=$rcv
export AWS_ACCESS_KEY_ID=AKIDBENCH AWS_SECRET_ACCESS_KEY=bench-secret AWS_REGION=us-east-1

models="model_list:
  - model_name: bench-model
    litellm_params: {model: openai/gpt-4o-mini, api_base: \"$mock/v1\", api_key: sk-bench-up}"
conf() { # name callbacks-yaml-list
  {
    echo "$models"
    if [ -n "$2" ]; then
      echo "litellm_settings:"
      echo "  success_callback: $2"
      echo "  failure_callback: $2"
      echo "  s3_callback_params: {s3_bucket_name: bench, s3_region_name: us-east-1, s3_endpoint_url: \"$rcv\"}"
    fi
  } >"$tmp/$1.yaml"
}
TARGETS=(nginx off otel langfuse lf+otel webhook datadog s3)
declare -A cb=([off]="" [otel]="[otel]" [langfuse]="[langfuse]" [lf+otel]="[langfuse, otel]" [webhook]="[generic_api]"
  [datadog]="[datadog]" [s3]="[s3]")
declare -A port pid
for t in "${TARGETS[@]}"; do
  [ "$t" = nginx ] && continue
  conf "$t" "${cb[$t]}"
  p=$(free_port)
  "$builddir/switchyard" --config "$tmp/$t.yaml" --port "$p" --workers 1 --db none >"$tmp/$t.log" 2>&1 &
  pid[$t]=$!; pids+=(${pid[$t]}); port[$t]=$p
  wait_port "$p" || { echo "switchyard ($t) did not start"; cat "$tmp/$t.log"; exit 1; }
  if grep -qi "not supported\|cannot" "$tmp/$t.log"; then echo "switchyard ($t):"; grep -i "not supported\|cannot" "$tmp/$t.log"; fi
done

url_of() { if [ "$1" = nginx ]; then echo "http://127.0.0.1:$nport/v1/chat/completions"; else echo "http://127.0.0.1:${port[$1]}/v1/chat/completions"; fi; }
pids_of() { if [ "$1" = nginx ]; then proc_tree "$nginx_pid"; else echo "${pid[$1]}"; fi; }
declare -A rps req ticks lat
bench_rounds "$rounds" "$dur" "$conc" "${TARGETS[@]}"
sleep 6 # a batch interval: the last batches leave
echo
delivered() { # target -> the sink's sent/dropped counts from /metrics
  if [ "$1" = nginx ] || [ "$1" = off ]; then echo -; return; fi
  curl -s -m 5 "http://127.0.0.1:${port[$1]}/metrics" |
    awk '/^switchyard_callback_sent/{s+=$NF} /^switchyard_callback_dropped/{x+=$NF} END{printf "sent=%d dropped=%d", s, x}'
}
bench_table "$rounds" 9 delivered "${TARGETS[@]}"
