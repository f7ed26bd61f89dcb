#!/usr/bin/env bash
# GGUF: kiln against @huggingface/gguf (the version pinned in
# package-lock.json), on the boundary cases of ../gguf_cases.py.
# Usage: tests/loaders/gguf-js/run.sh path/to/kiln
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
kiln=$(loader_kiln "$@")
need_npm_package gguf-js "$here" @huggingface/gguf
exec /usr/bin/python3 "$here/../gguf_diff.py" "$kiln" js node "$here/read.mjs"
