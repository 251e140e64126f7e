# lib.sh - helpers shared by the bench scripts (sourced, not run).

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# free_port: a port nothing listens on, below the ephemeral range (where the benches'
# thousands of outgoing connections could hold it without listening).
free_port() {
  local p lo=32768
  read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
  [ "$lo" -gt 12000 ] || lo=32768
  while :; do
    p=$((10000 + RANDOM % (lo - 10000)))
    port_open "$p" || { echo "$p"; return; }
  done
}
wait_port() { # port [tries of 50 ms]
  local i
  for i in $(seq "${2:-100}"); do port_open "$1" && return 0; sleep 0.05; done
  return 1
}

# write_nginx_conf DIR PORT MOCK_PORT WORKERS [MAIN_DIRECTIVES...]
# nginx as a plain reverse proxy to the mock: upstream keepalive 256 (switchyard's idle pool cap),
# HTTP/1.1 upstream, no access log; /stream/ is the same without response buffering; /ping is
# answered by nginx itself (used to wake a process under callgrind). $NGINX_CONNS sets
# worker_connections (default 4096; bench/streams.sh needs two per stream).
write_nginx_conf() {
  local dir=$1 port=$2 mport=$3 nw=$4
  shift 4
  mkdir -p "$dir"
  {
    echo "worker_processes $nw;"
    echo "daemon off;"
    local d
    for d in "$@"; do echo "$d"; done
    cat <<EOF
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections ${NGINX_CONNS:-4096}; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  keepalive_requests 1000000;
  upstream mock {
    server 127.0.0.1:$mport;
    keepalive 256;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:$port;
    client_max_body_size 10m;
    location / {
      proxy_pass http://mock;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
    # the stream case: same upstream, no response buffering
    location /stream/ {
      proxy_pass http://mock/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
    location = /ping { return 200 "ok\n"; }
  }
}
EOF
  } >"$dir/nginx.conf"
}

# proc_tree PID: PID and its descendants (nginx master + workers), from /proc/*/task/*/children.
proc_tree() {
  local p c
  echo "$1"
  for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do proc_tree "$c"; done
}

# cpu_ticks PID...: utime+stime of these processes (all their threads), in clock ticks.
# /proc/PID/stat fields 14 and 15, counted after the ")" that ends the command name.
cpu_ticks() {
  local p s t=0 f
  for p in "$@"; do
    s=$(cat "/proc/$p/stat" 2>/dev/null) || continue
    s=${s##*) }
    read -r -a f <<<"$s"
    t=$((t + f[11] + f[12]))
  done
  echo "$t"
}
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)

# ensure_pkgs CMD:PACKAGE...: apt-get install the packages whose command is missing (root only).
ensure_pkgs() {
  local want=() x
  for x in "$@"; do command -v "${x%%:*}" >/dev/null || want+=("${x#*:}"); done
  [ ${#want[@]} = 0 ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing ${want[*]}..."
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${want[@]}" >/dev/null ||
      { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${want[@]}" >/dev/null; }
  else
    echo "missing: ${want[*]} (install them)" >&2
    return 1
  fi
}

# bench_setup: build switchyard and the mock ($BENCH_BUILDDIR, default build-release), make $tmp,
# and on exit kill every pid in $pids and remove $tmp. Needs $root.
bench_setup() {
  builddir=${BENCH_BUILDDIR:-$root/build-release}
  [ -f "$builddir/build.ninja" ] || meson setup "$builddir" "$root" --buildtype=release >/dev/null
  ninja -C "$builddir" switchyard tests/mock/mock_upstream >/dev/null
  tmp=$(mktemp -d)
  pids=()
  trap bench_cleanup EXIT
}
bench_cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }

# start_mock: the mock upstream on a free port with one thread, no request log; sets $mock (base URL).
start_mock() {
  "$builddir/tests/mock/mock_upstream" --port 0 --threads 1 --no-record >"$tmp/mock.out" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do grep -q '^listening on' "$tmp/mock.out" && break; sleep 0.05; done
  mock=http://127.0.0.1:$(awk '/^listening on/{print $3}' "$tmp/mock.out")
}

# lat_ms: wrk's output on stdin -> its mean latency in ms.
lat_ms() {
  awk '/^    Latency/{v=$2; if (v ~ /us$/) {sub(/us/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v*=1000}; print v}'
}

# bench_rounds ROUNDS DURATION CONC TARGET...: interleaved rounds over the targets, each a wrk run at
# c=CONC (RPS, and the CPU ticks of `pids_of TARGET` over it) then one at c=1 (mean latency), with
# $here/chat.lua against `url_of TARGET` (both functions the caller's). Sums into the global
# associative arrays rps, req, ticks, lat (declare them with -A first).
bench_rounds() {
  local rounds=$1 dur=$2 conc=$3 r t ps t0 t1 out out1 r1 n1 l1
  shift 3
  for r in $(seq "$rounds"); do
    for t in "$@"; do
      ps=$(pids_of "$t")
      # shellcheck disable=SC2086
      t0=$(cpu_ticks $ps)
      out=$(wrk -t1 -c"$conc" -d"${dur}s" -s "$here/chat.lua" "$(url_of "$t")" 2>&1)
      # shellcheck disable=SC2086
      t1=$(cpu_ticks $ps)
      out1=$(wrk -t1 -c1 -d"${dur}s" -s "$here/chat.lua" "$(url_of "$t")" 2>&1)
      r1=$(awk '/^Requests\/sec/{print $2}' <<<"$out")
      n1=$(awk '/requests in/{print $1}' <<<"$out")
      l1=$(lat_ms <<<"$out1")
      rps[$t]=$(awk -v a="${rps[$t]:-0}" -v b="$r1" 'BEGIN{print a+b}')
      req[$t]=$(( ${req[$t]:-0} + n1 ))
      ticks[$t]=$(( ${ticks[$t]:-0} + t1 - t0 ))
      lat[$t]=$(awk -v a="${lat[$t]:-0}" -v b="$l1" 'BEGIN{print a+b}')
      echo "round $r: $t rps(c=$conc)=$r1 latency(c=1)=${l1}ms"
    done
  done
}

# bench_table ROUNDS WIDTH EXTRA TARGET...: bench_rounds' sums as a table against the target "off":
# RPS and its ratio, CPU us per request and the difference, mean c=1 latency and the difference.
# EXTRA: "" or a function printing a last column for a target (its header is the function's name).
bench_table() {
  local rounds=$1 w=$2 extra=$3 t d=
  shift 3
  printf "%-${w}s %9s %8s %10s %10s %10s %10s%s\n" target rps rps/off cpu_us/req +us/req c1_ms +c1_ms \
    "${extra:+  $extra}"
  for t in "$@"; do
    [ -n "$extra" ] && d=$($extra "$t")
    awk -v t="$t" -v rps="${rps[$t]}" -v orps="${rps[off]}" -v tk="${ticks[$t]}" -v n="${req[$t]}" \
      -v otk="${ticks[off]}" -v on="${req[off]}" -v hz="$CLK_TCK" -v l="${lat[$t]}" -v ol="${lat[off]}" \
      -v rounds="$rounds" -v d="${d:+  $d}" -v w="$w" \
      'BEGIN{c=tk/hz*1e6/n; oc=otk/hz*1e6/on;
             printf "%-" w "s %9.0f %8.3f %10.1f %+10.1f %10.3f %+10.3f%s\n", t, rps/rounds, rps/orps, c, c-oc, l/rounds, (l-ol)/rounds, d}'
  done
}
