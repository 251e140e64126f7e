#!/usr/bin/env bash
# Fails (exit 1, one line per file) when a C source under src/ or tests/ is not
# formatted as .clang-format says. Fix with:
#   clang-format -i $(git ls-files 'src/*.[ch]' 'tests/*.[ch]')
# Usage: scripts/check-format.sh [FILE...]   (default: every tracked C file
# under src/ and tests/). CLANG_FORMAT overrides the binary (Debian 12's
# clang-format 14 is the reference: other versions format a few constructs
# differently).
set -uo pipefail
cd "$(dirname "$0")/.."
cf=${CLANG_FORMAT:-clang-format}
command -v "$cf" >/dev/null || { echo "check-format: $cf not found (apt install clang-format)" >&2; exit 2; }
if [ $# -gt 0 ]; then files=("$@"); else
  mapfile -t files < <(git ls-files 'src/*.c' 'src/*.h' 'tests/*.c' 'tests/*.h' 2>/dev/null ||
                       find src tests -name node_modules -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print)
fi
[ ${#files[@]} -gt 0 ] || { echo "check-format: no C files" >&2; exit 2; }
bad=0
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  if ! "$cf" --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "$f: not clang-formatted"
    bad=$((bad + 1))
  fi
done
if [ $bad -gt 0 ]; then echo "check-format: $bad of ${#files[@]} files differ from .clang-format"; exit 1; fi
echo "check-format: ${#files[@]} files checked"
