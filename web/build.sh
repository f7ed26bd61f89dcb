#!/usr/bin/env bash
# Builds the page's generated files into web/lib/ (ignored by git):
#   web/lib/kiln/        the npm package's ES module, its WebAssembly glue
#                        (js/dist/kiln-wasm.mjs, the module inside) and the
#                        block map's wrapper (js/src/map.js)
#   web/lib/rules.html   the rule list, from `kiln rules` (one anchor per rule)
# It builds the WebAssembly module first (js/build.sh) unless
# KILN_WEB_SKIP_WASM=1 (js/dist/ already built). KILN names the kiln command
# (default: build/default/cli/kiln).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
kiln=${KILN:-build/default/cli/kiln}
if [ "${KILN_WEB_SKIP_WASM:-0}" != 1 ]; then
  bash js/build.sh
fi
[ -f js/dist/kiln-wasm.mjs ] || { echo "web/build.sh: js/dist/kiln-wasm.mjs is missing (run bash js/build.sh)" >&2; exit 2; }
out=web/lib
rm -rf "$out.tmp"
mkdir -p "$out.tmp/kiln/dist" "$out.tmp/kiln/src"
cp js/index.mjs "$out.tmp/kiln/"
cp js/dist/kiln-wasm.mjs "$out.tmp/kiln/dist/"
cp js/src/map.js "$out.tmp/kiln/src/"
python3 web/tools/rules_page.py "$kiln" > "$out.tmp/rules.html"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "web/build.sh: the page is in web/ (generated files in web/lib/)"
