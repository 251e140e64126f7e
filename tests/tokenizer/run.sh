#!/bin/sh
# run.sh - differential test of the C tokenizer against npm tiktoken.
# Usage: SY_TOKENIZE=/path/to/build/tests/unit/tokenizer/sy-tokenize tests/tokenizer/run.sh
set -eu
cd "$(dirname "$0")"
: "${SY_TOKENIZE:?set SY_TOKENIZE to the built sy-tokenize}"
export SY_TOKENIZE
npm ci --silent --no-audit --no-fund
exec node --test difftest.test.mjs tools.test.mjs
