#!/usr/bin/env bash
# Self-test of scripts/check-layers.sh: small source trees in a temporary
# directory, each with a known verdict. A clean tree (downward and acyclic
# same-floor includes, a third-party "dir/x.h", floors whose directories do
# not exist) passes; an upward include, a same-floor cycle, a directory
# missing from the floor table and a stray file in src/ each fail with the
# line that names them. With --objects, two tiny static libraries: the engine
# calling the router passes, the router calling the engine fails.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
check="$here/../../scripts/check-layers.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

put() { # put FILE LINE... : write a source file of the tree under test
  local f=$tmp/$1; shift
  mkdir -p "$(dirname "$f")"
  printf '%s\n' "$@" >"$f"
}
expect() { # expect NAME RC PATTERN : run the check on $tmp/src, want exit RC and PATTERN in its output
  local name=$1 want=$2 pat=$3 out rc
  out=$(bash "$check" "$tmp/src" 2>&1); rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -qE -- "$pat" <<<"$out"; then
    echo "FAIL $name: want rc $want and /$pat/, got rc $rc:"; echo "$out" | sed 's/^/    /'
    fails=$((fails + 1))
  else
    echo "ok   $name"
  fi
}

# a clean tree
put src/core/buf.h '/* buf */'
put src/config/config.h '#include "core/buf.h"'
put src/providers/p.c '#include "config/config.h"' '#include "json-c/json.h"' '#include <uv.h>'
put src/keys/keys.h '#include "core/buf.h"'
put src/limits/limits.c '#include "keys/keys.h"' '#include "limits.h"'
put src/router/table.h '#include "providers/p.h"'
put src/admin/models.c '#include "router/table.h"'
put src/gateway/gateway.h '#include "admin/admin.h"' '#include "router/table.h"'
put src/main.c '#include "gateway/gateway.h"' '#include "stages/stages.h"'
expect clean 0 'no violation'

# an include pointing up a floor
put src/router/compile.c '/* compile */' '  #  include "gateway/gateway.h"'
expect upward 1 "src/router/compile.c:2: router \(floor 2\) includes gateway \(floor 4\)"
rm "$tmp/src/router/compile.c"
expect upward-fixed 0 'no violation'

# same floor, both ways: a cycle
put src/keys/load.c '#include "limits/limits.h"'
expect cycle 1 'cycle on floor 2: (keys -> limits -> keys|limits -> keys -> limits)'
rm "$tmp/src/keys/load.c"

# a directory that has no floor
put src/plugins/x.c '#include "core/buf.h"'
expect unknown-dir 1 'src/plugins: directory not in the floor table'
rm -r "$tmp/src/plugins"

# a file directly in src/ other than main.c
put src/util.c '#include "core/buf.h"'
expect stray-file 1 'src/util.c: a file directly in'
rm "$tmp/src/util.c"

# a new floor-5 directory may include the engine, the engine may not include it
put src/stages/auth.c '#include "gateway/gateway.h"'
expect stage-down 0 'no violation'
put src/gateway/build.c '#include "stages/auth.h"'
expect engine-up 1 "src/gateway/build.c:1: gateway \(floor 4\) includes stages \(floor 5\)"

# --objects: calls between libraries, from nm
lib() { # lib DIR SOURCE : compile SOURCE into $tmp/b/libsy_DIR.a
  mkdir -p "$tmp/b"
  printf '%s\n' "$2" >"$tmp/b/src_$1_x.c"
  ${CC:-cc} -c -o "$tmp/b/src_$1_x.c.o" "$tmp/b/src_$1_x.c" && ar rcs "$tmp/b/libsy_$1.a" "$tmp/b/src_$1_x.c.o"
}
expect_obj() { # expect_obj NAME RC PATTERN
  local name=$1 want=$2 pat=$3 out rc
  out=$(bash "$check" --objects "$tmp/b" 2>&1); rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -qE -- "$pat" <<<"$out"; then
    echo "FAIL $name: want rc $want and /$pat/, got rc $rc:"; echo "$out" | sed 's/^/    /'
    fails=$((fails + 1))
  else
    echo "ok   $name"
  fi
}
lib router 'int sy_router_pick_x(int a) { return a + 1; }'
lib gateway 'int sy_router_pick_x(int); int sy_gw_run(int a) { return sy_router_pick_x(a); }'
expect_obj calls-down 0 'no violation'
lib router 'int sy_gw_run(int); int sy_router_pick_x(int a) { return sy_gw_run(a); }'
expect_obj calls-up 1 'src_router_x.c.o: router \(floor 2\) uses sy_gw_run of gateway \(floor 4\)'

[ $fails -eq 0 ] && echo "check-layers self-test: all passed" || echo "check-layers self-test: $fails failed"
[ $fails -eq 0 ]
