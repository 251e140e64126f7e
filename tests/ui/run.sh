#!/usr/bin/env bash
# run.sh - the ui tier: the admin UI end to end in Debian's Chromium
# (/usr/bin/chromium, from scripts/setup.sh) driven by playwright-core, with
# axe-core on every page (ui.test.mjs). The specs start the mock upstream and
# switchyard ($SWITCHYARD_BIN, $MOCK_UPSTREAM_BIN; default build/) through
# tests/lib/harness.mjs. Screenshots go to ${UI_ARTIFACTS:-build/ui-artifacts}
# (relative to the repository). Installs the pinned npm packages from
# package-lock.json when they are missing; never downloads a browser.
set -uo pipefail
cd "$(dirname "$0")"
if [ ! -d node_modules/playwright-core ] || [ ! -f node_modules/axe-core/axe.min.js ]; then
  timeout 300 npm ci --no-audit --no-fund --silent >/dev/null 2>&1 ||
    timeout 300 npm install --no-audit --no-fund --silent >/dev/null || { echo "ui: npm ci / install failed"; exit 2; }
fi
[ -x "${CHROMIUM_BIN:-/usr/bin/chromium}" ] || { echo "ui: ${CHROMIUM_BIN:-/usr/bin/chromium} missing (scripts/setup.sh installs Debian's chromium)"; exit 2; }
export SWITCHYARD_BIN=${SWITCHYARD_BIN:-$PWD/../../build/switchyard}
export MOCK_UPSTREAM_BIN=${MOCK_UPSTREAM_BIN:-$PWD/../../build/tests/mock/mock_upstream}
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
exec timeout 300 node --test --test-concurrency=1 ui.test.mjs "$@"
