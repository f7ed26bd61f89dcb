#!/usr/bin/env bash
# Builds the seed corpus corpus/parse/ from the golden cases: every golden
# file, named by its case. Deterministic; run after golden/generate.py.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/corpus/parse"
rm -rf "$out"
mkdir -p "$out"
cp "$root"/golden/cases/*.klnt "$out"/
echo "corpus/parse: $(ls "$out" | wc -l) seeds"
