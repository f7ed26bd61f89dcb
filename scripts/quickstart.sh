#!/usr/bin/env bash
# Quick start: install the packages, build kiln, then validate every golden
# case the repo ships and inspect two of them; then build the browser page
# (the WebAssembly module and web/) and serve it on 127.0.0.1.
# Usage: scripts/quickstart.sh [--no-serve]   (or KILN_NO_SERVE=1: build the
# page, do not serve it, as CI does; KILN_WEB_PORT picks the port, 8000)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/setup.sh
cmake --preset default >/dev/null
# The command only (scripts/test.sh builds the tests and benchmarks too).
cmake --build --preset default --target kiln
kiln=build/default/cli/kiln
echo
echo "\$ kiln inspect golden/cases/kiln-v2-f32.klnt"
"$kiln" inspect golden/cases/kiln-v2-f32.klnt
echo
echo "\$ kiln inspect golden/cases/ok-quant-scheme2-ceil.klnt"
"$kiln" inspect golden/cases/ok-quant-scheme2-ceil.klnt
echo
echo "\$ kiln validate golden/cases/*.klnt   (valid and deliberately broken cases)"
set +e
"$kiln" validate golden/cases/*.klnt
status=$?
set -e
echo
echo "kiln validate exited $status (1: some files are invalid, as the broken golden cases must be)"
[ "$status" -eq 1 ]

# The browser page (web/): the block map of a rejected file from the command,
# then the page built and served.
echo
echo "\$ kiln inspect --map golden/cases/d7-byte-length-short.klnt > build/d7-map.svg"
set +e
"$kiln" inspect --map golden/cases/d7-byte-length-short.klnt > build/d7-map.svg
status=$?
set -e
[ "$status" -eq 1 ]
echo "build/d7-map.svg: the block, its deciding byte marked (open it in a browser)"
echo
echo "\$ bash web/build.sh   (the WebAssembly module and the page)"
bash web/build.sh
if [ "${KILN_NO_SERVE:-0}" = 1 ] || [ "${1:-}" = "--no-serve" ]; then
  echo "the page is built in web/; serve it with: python3 web/tools/serve.py"
  exit 0
fi
echo "drop a file from golden/cases/ on the page to see its verdict and its block map"
exec python3 web/tools/serve.py "${KILN_WEB_PORT:-8000}"
