#!/usr/bin/env bash
# Installs every Debian package switchyard's build, tests and bench need.
# Idempotent: re-running only checks. Needs root (or sudo) on Debian 12.
set -euo pipefail
PKGS=(
  build-essential pkg-config meson ninja-build clang libclang-rt-14-dev llvm clang-format
  libuv1-dev libhttp-parser-dev libyaml-dev libssl-dev libpcre2-dev
  libjson-c-dev libjsmn-dev libsqlite3-dev libcmocka-dev libhiredis-dev redis-server
  libpq-dev libsodium-dev zlib1g-dev postgresql sqlite3
  python3-nacl python3-cryptography # LiteLLM's encryption, for the test fixtures (tests/integration/fixtures/litellm_encrypt.py)
  curl ca-certificates openssl wrk nginx-light
  iproute2 # the agents tier brings up loopback in its own network namespace (tests/agents/run.sh)
  chromium fonts-dejavu-core # the ui tier: playwright-core drives Debian's browser (tests/ui/run.sh)
)
# Node.js (for the SDK end-to-end tests) may come from Debian or be preinstalled.
command -v npm >/dev/null 2>&1 || PKGS+=(nodejs npm)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
