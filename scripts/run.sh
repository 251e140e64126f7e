#!/usr/bin/env bash
# The one command to run switchyard: installs what the build needs, builds a
# release binary, and starts the gateway (port 4000, built-in mock models
# unless --config is given). Extra arguments go to switchyard.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ ! -f build-release/build.ninja ]; then
  meson setup build-release --buildtype=release -Dtests=false >/dev/null
fi
ninja -C build-release switchyard >/dev/null
exec ./build-release/switchyard "$@"
