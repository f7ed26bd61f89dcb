#!/usr/bin/env bash
# GGUF: kiln against @huggingface/gguf (the version pinned in
# package-lock.json), on the boundary cases of ../gguf_cases.py.
# Usage: tests/loaders/gguf-js/run.sh path/to/kiln
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kiln=$(realpath "${1:?usage: run.sh path/to/kiln}")
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  if [ "${CI:-}" = true ]; then
    echo "loaders/gguf-js: node and npm are required under CI"
    exit 1
  fi
  echo "skipped: node or npm not found"
  exit 0
fi
if [ ! -d "$here/node_modules/@huggingface/gguf" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --silent)
fi
exec /usr/bin/python3 "$here/../gguf_diff.py" "$kiln" js node "$here/read.mjs"
