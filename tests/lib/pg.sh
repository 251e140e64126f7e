#!/usr/bin/env bash
# pg.sh - a throwaway PostgreSQL server for tests.
#
#   pg.sh start DIR PORT   create a cluster under DIR (owned by the `postgres`
#                          user), start it on 127.0.0.1:PORT with its socket in
#                          DIR, wait until it accepts connections and print
#                          postgresql://postgres@127.0.0.1:PORT/postgres
#   pg.sh stop DIR         stop it (immediate shutdown) and remove DIR
#
# PostgreSQL refuses to run as root, so when run as root the server runs as
# `postgres` (DIR is chowned to it; DIR's parents must be traversable: make DIR
# under /tmp with mode 755, never inside a mode-700 mktemp directory). When
# not root, the server runs as the calling user. The binaries are found in
# /usr/lib/postgresql/<newest version>/bin (Debian), or on PATH.
# Authentication is `trust`: for tests only.
set -euo pipefail

die() { echo "pg.sh: $*" >&2; exit 1; }

pgbin() {
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
    if [ -n "$d" ] && [ -x "$d/initdb" ]; then echo "$d"; return; fi
    d=$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)")
    [ -x "$d/initdb" ] || die "initdb not found (install the postgresql package)"
    echo "$d"
}

# run CMD... as the server's owner
as_owner() {
    if [ "$(id -u)" = 0 ]; then
        local q="" a
        for a in "$@"; do q+=" $(printf '%q' "$a")"; done
        su postgres -s /bin/sh -c "cd / && $q"
    else
        "$@"
    fi
}

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: pg.sh start DIR PORT | pg.sh stop DIR"
case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
bin=$(pgbin)

case "$cmd" in
start)
    port=${3:-}
    [ -n "$port" ] || die "usage: pg.sh start DIR PORT"
    mkdir -p "$dir"
    chmod 755 "$dir"
    if [ "$(id -u)" = 0 ]; then
        id postgres >/dev/null 2>&1 || die "no postgres user"
        chown postgres: "$dir"
        # every parent must be traversable by postgres
        p=$(dirname "$dir")
        while [ "$p" != "/" ]; do
            if ! su postgres -s /bin/sh -c "test -x $(printf '%q' "$p")"; then
                die "$p is not traversable by the postgres user (use a mode-755 dir under /tmp)"
            fi
            p=$(dirname "$p")
        done
    fi
    as_owner "$bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; die "initdb failed"; }
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 30 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off" \
        start >/dev/null 2>&1 || { cat "$dir/log" >&2 2>/dev/null; die "pg_ctl start failed"; }
    ready=$bin/pg_isready
    [ -x "$ready" ] || ready=pg_isready
    for _ in $(seq 1 100); do
        if "$ready" -q -h 127.0.0.1 -p "$port" -U postgres; then
            echo "postgresql://postgres@127.0.0.1:$port/postgres"
            exit 0
        fi
        sleep 0.1
    done
    die "server on port $port did not become ready (see $dir/log)"
    ;;
stop)
    if [ -d "$dir/data" ]; then
        as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
*)
    die "unknown command $cmd"
    ;;
esac
