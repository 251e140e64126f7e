#!/usr/bin/env bash
# The one command to run every test tier. Installs what it needs (Debian
# packages, npm test clients), checks the sources for banned calls and
# includes or calls that point up a floor (scripts/check-layers.sh), builds
# twice with -Werror (gcc; clang with ASan+UBSan and libFuzzer), and runs: unit
# tests, integration tests of the real binary against the mock upstream, the
# OpenAI Node SDK end-to-end tests, the MCP gateway with the official MCP SDK
# on both sides (tests/mcp), the coding-agent CLIs (Claude Code,
# Codex, opencode) end to end (tests/agents), the admin UI in Chromium (tests/ui,
# screenshots in $UI_ARTIFACTS), the config corpus check, the tokenizer
# differential test against tiktoken, the same unit+integration tests under
# sanitizers, and each fuzz harness briefly.
# Ends with one line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
bash scripts/setup.sh || exit 1

PASS=0; FAIL=0; FAILED_TIERS=()
LOG=$(mktemp -d)
count_meson() { # parse "Ok: N" / "Fail: N" from meson test output
  local f=$1 ok fl to
  ok=$(grep -E '^Ok: ' "$f" | tail -1 | awk '{print $2}'); fl=$(grep -E '^Fail: ' "$f" | tail -1 | awk '{print $2}')
  to=$(grep -E '^Timeout: ' "$f" | tail -1 | awk '{print $2}')
  PASS=$((PASS + ${ok:-0})); FAIL=$((FAIL + ${fl:-0} + ${to:-0}))
}
count_node() { # parse "# pass N" / "# fail N" from node --test output
  local f=$1 ok fl
  ok=$(grep -E '^# pass ' "$f" | tail -1 | awk '{print $3}'); fl=$(grep -E '^# fail ' "$f" | tail -1 | awk '{print $3}')
  PASS=$((PASS + ${ok:-0})); FAIL=$((FAIL + ${fl:-0}))
}
tier() { # tier NAME KIND COMMAND...
  local name=$1 kind=$2; shift 2
  echo "=== $name"
  local out="$LOG/$name.log" t0=$SECONDS
  "$@" >"$out" 2>&1; local rc=$?
  echo "($name: $((SECONDS - t0)) s)"
  if [ "$kind" = meson ]; then count_meson "$out"; elif [ "$kind" = node ]; then count_node "$out"; else
    if [ $rc -eq 0 ]; then PASS=$((PASS+1)); else FAIL=$((FAIL+1)); fi; fi
  if [ $rc -ne 0 ]; then
    FAILED_TIERS+=("$name"); tail -60 "$out"
  else
    grep -E '^(Ok|Fail|Timeout):|^# (pass|fail) |checked|passed' "$out" | tail -4
  fi
}

# --- source checks (before any build) ------------------------------------------
tier banned-functions plain bash scripts/check-banned.sh
tier layers plain bash scripts/check-layers.sh
tier clang-format plain bash scripts/check-format.sh

# --- build (gcc, every warning an error) -----------------------------------------
werror_on() { # the build dir $1 is configured with werror=true
  meson introspect "$1" --buildoptions 2>/dev/null |
    python3 -c 'import json,sys; sys.exit(0 if any(o["name"] == "werror" and o["value"] for o in json.load(sys.stdin)) else 1)' 2>/dev/null
}
[ -f build/build.ninja ] || meson setup build --buildtype=debugoptimized -Dwerror=true >/dev/null || exit 1
werror_on build || meson configure build -Dwerror=true >/dev/null || exit 1
ninja -C build >"$LOG/build.log" 2>&1 || { tail -40 "$LOG/build.log"; exit 1; }
export SWITCHYARD_BIN=$ROOT/build/switchyard MOCK_UPSTREAM_BIN=$ROOT/build/tests/mock/mock_upstream
tier layers-calls plain bash scripts/check-layers.sh --objects build

# --- npm test clients (official SDKs, tiktoken reference, coding-agent CLIs) --
for d in tests/e2e tests/tokenizer tests/agents tests/logging tests/mcp tests/ui; do
  [ -f "$d/package.json" ] && (cd "$d" && npm ci --silent --no-audit --no-fund >/dev/null 2>&1 || npm install --silent --no-audit --no-fund >/dev/null)
done

# --- a throwaway PostgreSQL for the store/keys/spend/admin unit tests -----------
# (the Node tests start their own through tests/lib/pg.mjs)
PGDIR=$(mktemp -d /tmp/sy-pg.XXXXXX); chmod 755 "$PGDIR"
PGPORT=$((20000 + RANDOM % 20000))
if SY_TEST_PG_URL=$(bash tests/lib/pg.sh start "$PGDIR/c" "$PGPORT"); then
  export SY_TEST_PG_URL
  trap 'bash tests/lib/pg.sh stop "$PGDIR/c" >/dev/null 2>&1; rm -rf "$PGDIR"' EXIT
else
  echo "warning: PostgreSQL did not start: its unit tests are skipped"; FAIL=$((FAIL+1)); FAILED_TIERS+=(postgres)
fi

tier unit meson meson test -C build --suite unit --print-errorlogs
tier integration node node --test --test-concurrency=1 tests/integration/
tier e2e-openai-sdk node node --test --test-concurrency=1 tests/e2e/
tier logging node node --test --test-concurrency=1 tests/logging/
tier guardrails node node --test --test-concurrency=1 tests/guardrails/
# the MCP gateway with the official MCP SDK on both sides (one tier: not repeated under ASan)
tier mcp node node --test --test-concurrency=1 tests/mcp/
tier agents node bash tests/agents/run.sh
# the admin UI in Debian's Chromium (playwright-core, axe-core); screenshots in $UI_ARTIFACTS
export UI_ARTIFACTS=${UI_ARTIFACTS:-$ROOT/build/ui-artifacts}
tier ui node bash tests/ui/run.sh
tier config-corpus plain bash tests/integration/check-config-corpus.sh "$SWITCHYARD_BIN"
if [ -x tests/tokenizer/run.sh ]; then
  tier tokenizer-differential node env SY_TOKENIZE="$ROOT/build/tests/unit/tokenizer/sy-tokenize" tests/tokenizer/run.sh
fi

# --- sanitizers + fuzzing (clang) ----------------------------------------------
if [ ! -f build-asan/build.ninja ]; then
  CC=clang meson setup build-asan --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false -Dfuzz=true \
    -Dwerror=true >/dev/null || exit 1
fi
werror_on build-asan || meson configure build-asan -Dwerror=true >/dev/null || exit 1
ASAN_OPTIONS=detect_leaks=0 ninja -C build-asan >"$LOG/build-asan.log" 2>&1 || { tail -40 "$LOG/build-asan.log"; exit 1; }
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
tier unit-asan meson meson test -C build-asan --suite unit --print-errorlogs
tier integration-asan node env SWITCHYARD_BIN="$ROOT/build-asan/switchyard" MOCK_UPSTREAM_BIN="$ROOT/build-asan/tests/mock/mock_upstream" \
  node --test --test-concurrency=1 tests/integration/
tier fuzz meson meson test -C build-asan --suite fuzz --print-errorlogs

echo
[ ${#FAILED_TIERS[@]} -eq 0 ] || echo "failed tiers: ${FAILED_TIERS[*]}"
echo "$PASS passed, $FAIL failed"
[ $FAIL -eq 0 ] && [ ${#FAILED_TIERS[@]} -eq 0 ]
