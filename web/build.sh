#!/usr/bin/env bash
# Builds the page's generated files into web/lib/ (ignored by git):
#   web/lib/kiln/        the npm package as it is published: every file
#                        `npm pack` puts in its tarball (js/package.json
#                        `files`), among them its two entries the page
#                        imports, index.mjs (`kiln`) and map.mjs (`kiln/map`),
#                        and the WebAssembly glue (dist/kiln-wasm.mjs)
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
mkdir -p "$out.tmp/kiln"
# The tarball's file list (package/... in the tarball, relative here).
mapfile -t files < <(cd js && npm pack --dry-run --json --ignore-scripts 2>/dev/null |
  node -e 'for (const f of JSON.parse(require("fs").readFileSync(0, "utf8"))[0].files) console.log(f.path)')
for need in index.mjs map.mjs dist/kiln-wasm.mjs; do
  printf '%s\n' "${files[@]}" | grep -qx "$need" ||
    { echo "web/build.sh: the package's tarball lacks $need (js/package.json files)" >&2; exit 2; }
done
for f in "${files[@]}"; do
  mkdir -p "$out.tmp/kiln/$(dirname "$f")"
  cp "js/$f" "$out.tmp/kiln/$f"
done
python3 web/tools/rules_page.py "$kiln" > "$out.tmp/rules.html"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "web/build.sh: the page is in web/ (generated files in web/lib/)"
