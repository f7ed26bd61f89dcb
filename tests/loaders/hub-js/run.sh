#!/usr/bin/env bash
# safetensors: kiln against @huggingface/hub's parseSafetensorsMetadata (the
# version pinned in package-lock.json), reading the boundary files of
# ../safetensors-rs/make_cases.py and reading back what kiln writes (diff.py).
# Usage: tests/loaders/hub-js/run.sh path/to/kiln
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kiln=$(realpath "${1:?usage: run.sh path/to/kiln}")
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  if [ "${CI:-}" = true ]; then
    echo "loaders/hub-js: node and npm are required under CI"
    exit 1
  fi
  echo "skipped: node or npm not found"
  exit 0
fi
if [ ! -d "$here/node_modules/@huggingface/hub" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --silent)
fi
exec /usr/bin/python3 "$here/diff.py" "$kiln"
