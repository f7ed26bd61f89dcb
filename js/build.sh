#!/usr/bin/env bash
# Builds the npm package's WebAssembly module with Debian's Emscripten (the
# `wasm` CMake preset: base, parser and the C ABI, without Abseil) and
# writes js/dist/kiln-wasm.mjs: the Emscripten glue with the module inside,
# as an ES module (for Node's import and require, a browser page and a Web
# Worker). js/dist/ is generated.
#
# Emscripten's system libraries come prebuilt in Debian's cache
# (/usr/share/emscripten/cache, frozen): nothing is compiled for them. Set
# EM_CACHE to a writable directory (and EM_FROZEN_CACHE= to an empty value)
# to build them instead; that takes minutes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}  # the optimizer's acorn (node-acorn)

cmake --preset wasm >/dev/null
cmake --build --preset wasm
mkdir -p js/dist
node js/tools/wrap-glue.mjs build/wasm/js/kiln-wasm.js js/dist
