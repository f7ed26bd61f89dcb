#!/usr/bin/env bash
# GGUF: kiln against ggml's gguf.cpp, through driver.cc built from ggml's
# sources outside this repository (tests/loaders/README.md), on the boundary
# cases of ../gguf_cases.py. The driver's path comes from
# KILN_GGUF_CPP_READER; without it the suite is skipped.
# Usage: KILN_GGUF_CPP_READER=/path/to/driver tests/loaders/gguf-cpp/run.sh path/to/kiln
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
kiln=$(loader_kiln "$@")
skip_unless_set KILN_GGUF_CPP_READER "gguf.cpp is built locally from ggml's sources"
reader=$KILN_GGUF_CPP_READER
[ -x "$reader" ] || loader_fail gguf-cpp "KILN_GGUF_CPP_READER=$reader is not an executable"
exec /usr/bin/python3 "$here/../gguf_diff.py" "$kiln" cpp "$reader"
