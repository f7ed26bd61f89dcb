#!/usr/bin/env bash
# The project's test command (README, .ci/run): formatting, the whole test
# suite in the default build, the conformance runner, the differential suite
# against the formats' reference readers, static analysis, the
# generated docs, an install test, plain Release builds with g++ and clang++
# and a check of their hardening,
# then the suite again under ASan+UBSan and under -fsanitize=integer, a
# sample of mutation testing, then a fuzz smoke run. Stops at the first
# failure.
# Usage: scripts/test.sh [--quick]   (--quick: the default build only)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

step() { printf '\n==== %s\n' "$*"; }

step "clang-format"
files=$(git ls-files '*.cc' '*.h')
clang-format --dry-run --Werror $files
echo "clang-format: clean"

step "default build and tests"
cmake --workflow --preset default

step "conformance: kiln validate against every golden case (docs/conformance.md)"
/usr/bin/python3 scripts/conformance.py -- build/default/cli/kiln validate

step "conformance: the C ABI (kiln_c_validate) against every golden case (docs/c-api.md)"
/usr/bin/python3 scripts/conformance.py -- build/default/capi/kiln_c_validate

# The WebAssembly module and the npm package (js/, docs/javascript.md): build
# the module, the package's tests, the conformance runner through the
# package, and the differential against the native build above.
step "WebAssembly module and npm package (js/): build, tests, conformance, differential"
wasm_start=$SECONDS
bash js/build.sh
node --test js/test/
/usr/bin/python3 scripts/conformance.py --batch -- node js/bin/kiln-validate.mjs
node js/tools/differential.mjs build/default/cli/kiln
node js/tools/browser-check.mjs chromium  # a page and a module Worker in headless Chromium (setup.sh installs it)
echo "js/: $((SECONDS - wasm_start)) s"

step "differential suite: kiln against the formats' reference readers (docs/compatibility.md)"
bash tests/loaders/run.sh build/default/cli/kiln

# The browser page (web/): its generated files (web/build.sh builds the
# WebAssembly module first, js/build.sh), then the page in Debian's headless
# chromium: verdicts, the marked byte, a hostile name, a 1 GiB block timed
# with the renderer's memory bounded. Screenshots: build/browser-artifacts/.
step "browser page: web/ in headless chromium (tests/browser/)"
KILN_WEB_SKIP_WASM=1 bash web/build.sh  # the module the js/ step built
(cd tests/browser && KILN="$root/build/default/cli/kiln" node --test page.test.mjs)

step "static analysis of every C++ folder (clang-tidy, cppcheck)"
bash scripts/lint.sh

step "rule table and traceability up to date"
python3 scripts/gen_rules_doc.py --check

step "install, then build a consumer with find_package(kiln)"
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install build/default --prefix "$prefix" >/dev/null
cmake -S tests/install -B "$prefix/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer" >/dev/null
"$prefix/consumer/consumer" golden/cases/kiln-v2-f32.klnt | grep -qx "tensors: 1"
echo "installed package: found, linked, parsed kiln-v2-f32"

step "install: a C program built with pkg-config --cflags --libs kiln (the C ABI, docs/c-api.md)"
pc_dir=$(dirname "$(find "$prefix" -name kiln.pc | head -n 1)")
kiln_c_flags=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs kiln)
kiln_c_libdir=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --variable=libdir kiln)
# shellcheck disable=SC2086 # the flags are words
cc -std=c99 -Wall -Wextra -Werror -pedantic tests/install_c/main.c $kiln_c_flags \
  -o "$prefix/c_consumer"
c_ok=$(LD_LIBRARY_PATH="$kiln_c_libdir" "$prefix/c_consumer" golden/cases/kiln-v2-f32.klnt)
c_bad=$(LD_LIBRARY_PATH="$kiln_c_libdir" "$prefix/c_consumer" golden/cases/kiln-pod-list-f32.klnt \
  || true)
case "$c_ok|$c_bad" in
  "ok "*"|FRAME H1 at byte 0: "*) ;;
  *) echo "installed C ABI: unexpected verdicts: '$c_ok' / '$c_bad'"; exit 1 ;;
esac
echo "installed C ABI: pkg-config found it; a C program validated kiln-v2-f32 and rejected kiln-pod-list-f32"

if [ "${1:-}" = "--quick" ]; then exit 0; fi

step "the plain Release build a user or packager runs, with g++ and clang++ (warnings as errors here, in CI)"
for cxx in g++ clang++; do
  cmake -S . -B "build/release-$cxx" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=$cxx \
    -DKILN_WERROR=ON >/dev/null
  cmake --build "build/release-$cxx"
  bash scripts/check_hardening.sh "build/release-$cxx"
done

step "ASan + UBSan"
cmake --workflow --preset asan-ubsan

step "integer sanitizer"
cmake --workflow --preset integer

step "mutation testing: a sample (the full report is docs/mutation.md)"
python3 scripts/mutate.py --sample "${KILN_MUTANTS:-16}" --seed 1 --min-kill 0.7

step "fuzz smoke"
bash scripts/fuzz_smoke.sh "${KILN_FUZZ_SECONDS:-30}"

step "all checks passed"
