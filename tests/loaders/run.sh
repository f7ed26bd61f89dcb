#!/usr/bin/env bash
# The differential suite: the same files through kiln and through each
# format's reference reader (docs/compatibility.md). Runs every
# tests/loaders/*/run.sh with the kiln binary as its argument. A suite whose
# reference cannot run here (the safetensors crate, ggml's gguf.cpp: built
# locally from fetched sources; gguf-py, read from llama.cpp's sources) says
# "skipped" and why; the suites CI needs (numpy.load, @huggingface/gguf,
# @huggingface/hub) fail instead when their reader is missing.
# Usage: tests/loaders/run.sh path/to/kiln
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kiln=$(realpath "${1:?usage: tests/loaders/run.sh path/to/kiln}")
status=0
for suite in "$here"/*/run.sh; do
  [ -e "$suite" ] || continue
  name=$(basename "$(dirname "$suite")")
  printf -- '--- loaders/%s\n' "$name"
  if ! bash "$suite" "$kiln"; then
    echo "loaders/$name: FAILED"
    status=1
  fi
done
exit $status
