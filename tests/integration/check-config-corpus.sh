#!/usr/bin/env bash
# Every LiteLLM config of the compatibility corpus passes `switchyard --check-config`
# with the environment variables it references set to dummies ("dummy-NAME";
# "6379" for a NAME ending in _PORT, as redis_port must be a number;
# "redis://dummy-REDIS_URL" for REDIS_URL, which must parse as a URL; an https URL
# for a NAME with API_BASE, _ENDPOINT or BASE_URL in it: a guardrail service's base
# must be a URL, as a real deployment sets it). Unsupported
# providers/keys must be warnings, never failures or crashes, and the
# "N warnings" summary must count exactly the WARN lines printed (and the
# ERROR-level ones of a config that loads: a Python callback).
set -uo pipefail
BIN=${1:?usage: check-config-corpus.sh path/to/switchyard}
DIR=$(cd "$(dirname "$0")/../config/litellm-configs" && pwd)
ok=0; bad=0
for f in "$DIR"/*.yaml "$DIR"/16-include-multiple/config_with_multiple_includes.yaml "$DIR"/28-onestack-include/config.yml; do
  [ -f "$f" ] || continue
  vars=$(grep -rhoE 'os\.environ/[A-Za-z0-9_]+' "$(dirname "$f")" | sort -u | sed 's#os.environ/##')
  envs=(); for v in $vars; do case $v in *_PORT) envs+=("$v=6379");; REDIS_URL) envs+=("$v=redis://dummy-$v");;
    *API_BASE*|*_ENDPOINT*|*BASE_URL*) envs+=("$v=https://dummy-$v.invalid");; *) envs+=("$v=dummy-$v");; esac; done
  out=$(env "${envs[@]}" "$BIN" --check-config --config "$f" 2>&1); rc=$?
  printed=$(grep -cE ' (WARN|ERROR) ' <<<"$out"); summary=$(grep -oE '^[0-9]+ warnings? \(see above\)' <<<"$out" | grep -oE '^[0-9]+')
  if [ "$printed" != "${summary:-0}" ]; then
    bad=$((bad+1)); echo "FAIL: $f: $printed warnings printed, summary says ${summary:-0}"; continue; fi
  if [ $rc -eq 0 ] && grep -q "config OK" <<<"$out"; then ok=$((ok+1)); else
    bad=$((bad+1)); echo "FAIL ($rc): $f"; echo "$out" | tail -5; fi
done
echo "config corpus: $ok checked OK, $bad failed"
[ $bad -eq 0 ] && [ $ok -ge 39 ]
