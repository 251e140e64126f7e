#!/usr/bin/env bash
# The layer check: every directory of src/ sits on a floor, and a file may
# include headers only from its own floor or the floors below it (DESIGN.md
# section 6). The table:
#
#   floor 0  core
#   floor 1  providers store redis upstream http config tokenizer metrics
#   floor 2  router keys spend limits cache responses dialects logging guardrails mcp
#   floor 3  admin ui
#   floor 4  gateway engine                      (the engine)
#   floor 5  stages filters                      (features at its extension points)
#
# dialects/ are pure translations over buffers (like the provider adapters,
# with no engine type), so they sit with the subsystems, not above the engine
# as DESIGN.md first drew them: the engine composes client dialect x adapter.
#   floor 6  main.c                              (the files directly in src/)
#
# Rules, for each `#include "dir/..."` of a .c or .h file under src/ (system
# headers `<...>` and same-directory `"x.h"` are not checked):
#   - dir on a higher floor than the including file's directory: a violation,
#     printed "file:line: <dir> (floor N) includes <dir> (floor M)";
#   - dir on the same floor, another directory: allowed, as long as these
#     same-floor edges have no cycle (limits may use keys, but then keys may
#     not use limits, directly or through a third directory): each cycle is
#     printed with one include per edge;
#   - a directory of src/ that is not in the table is an error (put it on a
#     floor here first); a directory of the table that does not exist yet
#     (ui, engine, stages, filters, dialects) is fine, and an include of a
#     name that is neither in the table nor a directory of src/ (a
#     third-party "dir/x.h") is not checked.
# With --objects BUILD_DIR it checks calls instead of includes, after a build:
# each directory is one static library (BUILD_DIR/libsy_<dir>.a), and an
# undefined symbol of a library's object that another library defines is a
# use of that directory (a call, or data), so a prototype written by hand
# instead of an include is caught too: "object: <dir> (floor N) uses <symbol>
# of <dir> (floor M)" for each one pointing up. The one sanctioned use up is
# the ordered lists the engine walks (sy_stages, sy_nstages, sy_filter_list,
# sy_filter_count: nginx's ngx_modules), defined by stages/ and filters/ so that
# the engine never names a stage or a filter.
# Exit 0 when clean ("check-layers: N includes checked, no violation"), 1 on a
# violation, 2 on a usage error.
# Usage: scripts/check-layers.sh [SRC_DIR]   (default: src)
#        scripts/check-layers.sh --objects BUILD_DIR
set -uo pipefail

FLOORS='
0 core
1 providers store redis upstream http config tokenizer metrics
2 router keys spend limits cache responses dialects logging guardrails mcp
3 admin ui
4 gateway engine
5 stages filters
6 main.c
'

if [ "${1:-}" = --objects ]; then
  build=${2:-}
  [ -d "$build" ] || { echo "check-layers: --objects needs a build directory" >&2; exit 2; }
  shopt -s nullglob
  libs=("$build"/libsy_*.a)
  [ ${#libs[@]} -gt 0 ] || { echo "check-layers: no libsy_*.a in $build" >&2; exit 2; }
  for lib in "${libs[@]}"; do
    d=${lib##*/libsy_}; d=${d%.a}
    # "lib:member:addr T sym" or "lib:member: U sym" -> "dir member type sym"
    nm -A -g "$lib" 2>/dev/null | LC_ALL=C awk -v d="$d" '{ split($1, p, ":"); m = p[2]; sub(/.*\//, "", m); print d, m, $(NF - 1), $NF }'
  done | LC_ALL=C awk -v floors="$FLOORS" '
    BEGIN {
      nf = split(floors, lines, "\n")
      for (i = 1; i <= nf; i++) { k = split(lines[i], w, " "); for (j = 2; j <= k; j++) floor[w[j]] = w[1] + 0 }
    }
    { n++; dir[n] = $1; obj[n] = $2; type[n] = $3; sym[n] = $4
      if ($3 != "U" && $3 != "w" && $3 != "v" && !($4 in def)) def[$4] = $1
      if (!($1 in floor)) unknown[$1] = 1 }
    END {
      for (u in unknown) { printf "libsy_%s.a: directory not in the floor table of scripts/check-layers.sh\n", u; bad++ }
      for (i = 1; i <= n; i++) {
        if (type[i] != "U" || !(sym[i] in def)) continue
        if (sym[i] ~ /^sy_(n?stages|filter_list|filter_count)$/) continue # the ordered lists (see the top comment)
        to = def[sym[i]]
        if (to == dir[i] || !(to in floor) || !(dir[i] in floor)) continue
        checked++
        if (floor[to] > floor[dir[i]] && !((obj[i], sym[i]) in seen)) {
          seen[obj[i], sym[i]] = 1
          printf "%s: %s (floor %d) uses %s of %s (floor %d)\n", obj[i], dir[i], floor[dir[i]], sym[i], to, floor[to]
          bad++
        }
      }
      if (bad) {
        printf "check-layers: %d use(s) pointing up (the floor table is at the top of scripts/check-layers.sh)\n", bad > "/dev/stderr"
        exit 1
      }
      printf "check-layers: %d cross-library symbols checked, no violation\n", checked
    }'
  exit $?
fi

src=${1:-src}
[ $# -gt 0 ] || cd "$(dirname "$0")/.."
[ -d "$src" ] || { echo "check-layers: no directory $src" >&2; exit 2; }

mapfile -t files < <(find "$src" -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)
[ ${#files[@]} -gt 0 ] || { echo "check-layers: no C files under $src" >&2; exit 2; }
dirs=$(find "$src" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | LC_ALL=C sort)

LC_ALL=C awk -v floors="$FLOORS" -v dirs="$dirs" -v src="$src" '
BEGIN {
  nf = split(floors, lines, "\n")
  for (i = 1; i <= nf; i++) {
    k = split(lines[i], w, " ")
    for (j = 2; j <= k; j++) floor[w[j]] = w[1] + 0
  }
  nd = split(dirs, dl, "\n")
  for (i = 1; i <= nd; i++) {
    if (dl[i] == "") continue
    isdir[dl[i]] = 1
    if (!(dl[i] in floor)) {
      printf "%s/%s: directory not in the floor table of scripts/check-layers.sh\n", src, dl[i]
      bad++
    }
  }
  prefix = src "/"
}
FNR == 1 {
  rel = substr(FILENAME, length(prefix) + 1)
  me = index(rel, "/") ? substr(rel, 1, index(rel, "/") - 1) : "main.c"
  if (!index(rel, "/") && rel != "main.c" && !(rel in warned)) {
    printf "%s: a file directly in %s other than main.c (floor 6 is main.c alone)\n", FILENAME, src
    warned[rel] = 1; bad++
  }
}
/^[ \t]*#[ \t]*include[ \t]*"[^"\/]+\// {
  s = $0
  sub(/^[ \t]*#[ \t]*include[ \t]*"/, "", s)
  to = substr(s, 1, index(s, "/") - 1)
  if (!(to in floor) || to == me || !(me in floor)) next
  checked++
  if (floor[to] > floor[me]) {
    printf "%s:%d: %s (floor %d) includes %s (floor %d)\n", FILENAME, FNR, me, floor[me], to, floor[to]
    bad++
  } else if (floor[to] == floor[me] && !((me, to) in edge)) {
    edge[me, to] = FILENAME ":" FNR
    nadj[me]++; adj[me, nadj[me]] = to
    nodes[me] = 1
  }
  next
}
# depth-first search over the same-floor edges; a back edge closes a cycle
function dfs(u,    i, v, j, p) {
  color[u] = 1; stack[++sp] = u
  for (i = 1; i <= nadj[u]; i++) {
    v = adj[u, i]
    if (color[v] == 1) {
      p = ""
      for (j = sp; j >= 1 && stack[j] != v; j--) ;
      for (; j <= sp; j++) p = p (p == "" ? "" : " -> ") stack[j]
      printf "check-layers: cycle on floor %d: %s -> %s\n", floor[u], p, v
      for (j = sp; j >= 1 && stack[j] != v; j--) ;
      for (; j < sp; j++) printf "  %s: %s includes %s\n", edge[stack[j], stack[j + 1]], stack[j], stack[j + 1]
      printf "  %s: %s includes %s\n", edge[u, v], u, v
      bad++
    } else if (!color[v]) dfs(v)
  }
  sp--; color[u] = 2
}
END {
  for (n in nodes) if (!color[n]) dfs(n)
  if (bad) {
    printf "check-layers: %d violation(s) (the floor table is at the top of scripts/check-layers.sh)\n", bad > "/dev/stderr"
    exit 1
  }
  printf "check-layers: %d includes checked, no violation\n", checked
}' "${files[@]}"
