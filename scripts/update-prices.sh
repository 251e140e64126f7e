#!/usr/bin/env bash
# Refresh data/model_prices.json (the built-in price map) from LiteLLM's
# model_prices_and_context_window.json (MIT licence, BerriAI/litellm), then
# rebuild. Needs network; never run by the tests.
#   scripts/update-prices.sh [URL]    (default: LiteLLM's main branch)
# To use a newer map without rebuilding, download it and point
# LITELLM_MODEL_COST_MAP_URL (or general_settings.switchyard_model_prices) at the file.
set -euo pipefail
URL=${1:-https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json}
cd "$(dirname "$0")/.."
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
curl -fsSL --max-time 60 -o "$tmp" "$URL"
# refuse anything that is not a JSON object of model entries in LiteLLM's format
python3 - "$tmp" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
if not isinstance(d, dict):
    sys.exit("not a JSON object")
models = [k for k, v in d.items() if isinstance(v, dict) and "litellm_provider" in v]
if len(models) < 1000:
    sys.exit("only %d model entries: not LiteLLM's map?" % len(models))
for k in ("gpt-4o", "claude-sonnet-4-5", "gemini/gemini-2.5-pro"):
    if k not in d:
        sys.exit("%s missing: not LiteLLM's map?" % k)
print("%d model entries" % len(models))
PY
old=$(python3 -c 'import json;print(len(json.load(open("data/model_prices.json"))))')
mv "$tmp" data/model_prices.json
trap - EXIT
new=$(python3 -c 'import json;print(len(json.load(open("data/model_prices.json"))))')
echo "data/model_prices.json: $old -> $new keys; rebuild (ninja -C build) to embed it"
