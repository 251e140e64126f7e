#!/usr/bin/env bash
# run.sh - the agents tier (see run.mjs): the real Claude Code, Codex and
# opencode CLIs through switchyard ($SWITCHYARD_BIN, default build/switchyard)
# to the scripted upstream. Installs the pinned CLIs from package-lock.json
# when they are missing, checks the upstream on its own (upstream.test.mjs),
# then runs every scenario inside a network namespace that has only loopback
# (unshare; without it, a warning and the CLIs' own switches keep them
# offline). Arguments go to run.mjs (--only REGEX, --keep, --direct).
set -uo pipefail
cd "$(dirname "$0")"
if [ ! -x node_modules/.bin/claude ] || [ ! -x node_modules/.bin/codex ] || [ ! -x node_modules/.bin/opencode ]; then
  # npm ci refuses a lock without every platform package of opencode-ai (a
  # registry that lacks some cannot write them): npm install keeps the lock's versions
  timeout 600 npm ci --no-audit --no-fund --silent >/dev/null 2>&1 ||
    timeout 600 npm install --no-audit --no-fund --silent >/dev/null || { echo "agents: npm ci / install failed"; exit 2; }
fi
export SWITCHYARD_BIN=${SWITCHYARD_BIN:-$PWD/../../build/switchyard}
if [ -z "${SY_AGENTS_NETNS:-}" ] && command -v ip >/dev/null && unshare -rn true 2>/dev/null; then
  exec env SY_AGENTS_NETNS=1 timeout 600 unshare -rn bash -c 'ip link set lo up && exec bash run.sh "$@"' run.sh "$@"
fi
[ -n "${SY_AGENTS_NETNS:-}" ] || echo "agents: warning: no network namespace (unshare -rn or ip missing): the CLIs are kept offline by their settings only"
out=$(timeout 120 node --test upstream.test.mjs 2>&1) || { echo "$out" | tail -60; echo "agents: the upstream's self-test failed"; exit 1; }
echo "upstream self-test: $(echo "$out" | grep -E '^# pass ' | awk '{print $3}') passed"
exec timeout 540 node run.mjs "$@"
