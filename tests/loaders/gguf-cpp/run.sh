#!/usr/bin/env bash
# GGUF: kiln against ggml's gguf.cpp, through driver.cc built from ggml's
# sources outside this repository (tests/loaders/README.md), on the boundary
# cases of ../gguf_cases.py. The driver's path comes from
# KILN_GGUF_CPP_READER; without it the suite is skipped.
# Usage: KILN_GGUF_CPP_READER=/path/to/driver tests/loaders/gguf-cpp/run.sh path/to/kiln
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kiln=$(realpath "${1:?usage: run.sh path/to/kiln}")
reader=${KILN_GGUF_CPP_READER:-}
if [ -z "$reader" ]; then
  echo "skipped: KILN_GGUF_CPP_READER is not set (gguf.cpp is built locally from ggml's sources)"
  exit 0
fi
if [ ! -x "$reader" ]; then
  echo "loaders/gguf-cpp: KILN_GGUF_CPP_READER=$reader is not an executable"
  exit 1
fi
exec /usr/bin/python3 "$here/../gguf_diff.py" "$kiln" cpp "$reader"
