#!/usr/bin/env bash
# Quick start: install the packages, build kiln, then validate every golden
# case the repo ships and inspect two of them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default
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
