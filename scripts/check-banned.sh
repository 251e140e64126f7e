#!/usr/bin/env bash
# Fails (exit 1, one "file:line: code" per hit) when the C sources of src/ or
# tests/mock/ call a banned function:
#   strtok (not reentrant: handlers run on several threads; use strtok_r or a
#   splitter), sprintf / vsprintf / strcpy / strcat / gets (unbounded: use
#   snprintf, memcpy with a known length, sy_buf), strncpy (does not terminate),
#   atoi / atol (no error, undefined on overflow: use strtol with checks).
# A call is the name, as a whole word (not a member: "s.gets(", "p->gets("),
# followed by optional blanks and "(".
# Comments (/* */ across lines, //) and string and character literals are
# removed before matching, so prose naming these functions never triggers it.
# Usage: scripts/check-banned.sh [DIR...]   (default: src tests/mock)
set -uo pipefail
cd "$(dirname "$0")/.."
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=(src tests/mock)
for d in "${dirs[@]}"; do
  [ -d "$d" ] || { echo "check-banned: no directory $d" >&2; exit 2; }
done
mapfile -t files < <(find "${dirs[@]}" -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)
[ ${#files[@]} -gt 0 ] || { echo "check-banned: no C files under ${dirs[*]}" >&2; exit 2; }

LC_ALL=C awk '
FNR == 1 { inc = 0 }
{
  s = $0; out = ""; n = length(s)
  for (i = 1; i <= n; i++) {
    c = substr(s, i, 1); c2 = substr(s, i, 2)
    if (inc) { if (c2 == "*/") { inc = 0; i++ } continue }
    if (c2 == "/*") { inc = 1; i++; out = out " "; continue }
    if (c2 == "//") break
    if (c == "\"" || c == "\047") { # skip a literal, honouring backslash escapes
      q = c
      for (i++; i <= n; i++) {
        d = substr(s, i, 1)
        if (d == "\\") { i++; continue }
        if (d == q) break
      }
      out = out " "; continue
    }
    out = out c
  }
  if (out ~ /(^|[^A-Za-z0-9_.>])(strtok|sprintf|vsprintf|strcpy|strcat|strncpy|atoi|atol|gets)[ \t]*\(/) {
    sub(/^[ \t]+/, "", $0)
    printf "%s:%d: %s\n", FILENAME, FNR, $0
    hits++
  }
}
END {
  if (hits) {
    printf "check-banned: %d call(s) of banned functions (see the top of scripts/check-banned.sh)\n", hits > "/dev/stderr"
    exit 1
  }
  print "check-banned: no banned calls"
}' "${files[@]}"
