#!/usr/bin/env bash
# GGUF: kiln against gguf-py's GGUFReader (llama.cpp's gguf-py/gguf/
# gguf_reader.py), on the boundary cases of ../gguf_cases.py. gguf-py is not
# part of this repository, nor in Debian; KILN_GGUF_PY names a directory
# holding its `gguf` package (tests/loaders/README.md says which commit and
# how). Without it the suite is skipped. It runs with Debian's Python and
# NumPy (/usr/bin/python3, python3-numpy).
# Usage: KILN_GGUF_PY=/path/to/gguf-py tests/loaders/gguf-py/run.sh path/to/kiln
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
kiln=$(loader_kiln "$@")
skip_unless_set KILN_GGUF_PY "gguf-py is read from llama.cpp's sources, outside this repository"
dir=$KILN_GGUF_PY
[ -f "$dir/gguf/gguf_reader.py" ] || loader_fail gguf-py "KILN_GGUF_PY=$dir holds no gguf/gguf_reader.py"
exec /usr/bin/python3 "$here/../gguf_diff.py" "$kiln" py /usr/bin/python3 "$here/read.py"
