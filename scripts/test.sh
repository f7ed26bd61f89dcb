#!/usr/bin/env bash
# The project's test command (README, .ci/run). Stops at the first failure.
# Usage: scripts/test.sh [--quick]   (--quick: the default build and its checks only)
#
# Three native builds serve every check (docs/ci.md says which build proves what):
#   build/default     g++, the plain Release build a user runs (warnings as
#                     errors): the whole suite, conformance, the bindings,
#                     the differential suite, static analysis, the install
#                     tests, the hardening check, the mutation sample
#   build/release-clang++  clang++, the same plain Release build
#   build/sanitize    clang, ASan + UBSan + the integer checks in one build,
#                     the whole suite again, and the libFuzzer targets for
#                     the fuzz smoke run
# plus the WebAssembly module (build/wasm). A compiler cache (ccache, outside
# the clone: CCACHE_DIR, default ~/.cache/ccache) makes a rebuild of unchanged
# sources cheap; CI is correct with a cold cache. Every step's wall time is
# printed, and a table of them ends the run (also on a failure).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
quick=0
[ "${1:-}" = "--quick" ] && quick=1
jobs=$(nproc)

# --- step timing ------------------------------------------------------------
step_names=()
step_secs=()
current=""
current_start=0
finish_step() {
  if [ -n "$current" ]; then
    step_names+=("$current")
    step_secs+=($((SECONDS - current_start)))
    current=""
  fi
}
step() {
  finish_step
  current="$*"
  current_start=$SECONDS
  printf '\n==== %s\n' "$*"
}
background_done() {  # the background builds' own wall time, as a row of the table
  local took
  took=$(sed -n 's/^== background builds done in \([0-9]*\) s$/\1/p' "$background_log")
  step_names+=("  (background: clang++ Release and sanitize builds, beside the steps above$([ -n "$took" ] || echo ': FAILED'))")
  step_secs+=("${took:-$((SECONDS - background_start))}")
}
summary() {
  local status=$? i
  local pid
  for pid in "${background:-}"; do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill -- -"$pid" 2>/dev/null || true
    fi
  done
  local failed=$current
  finish_step
  printf '\n==== step times (wall clock, %d cores)\n' "$jobs"
  for i in "${!step_names[@]}"; do
    printf '%6d s  %s%s\n' "${step_secs[$i]}" "${step_names[$i]}" \
      "$([ "$status" -ne 0 ] && [ "${step_names[$i]}" = "$failed" ] && echo '   <- FAILED')"
  done
  printf '%6d s  total (exit %d)\n' "$SECONDS" "$status"
  if [ -n "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]; then
    ccache --print-stats 2>/dev/null | awk -F'\t' '
      $1=="direct_cache_hit"||$1=="preprocessed_cache_hit" {hit+=$2}
      $1=="cache_miss" {miss=$2}
      END {printf "compiler cache: %d hits, %d misses\n", hit, miss}' || true
  fi
  [ -n "${prefix:-}" ] && rm -rf "$prefix"
  return "$status"
}
trap summary EXIT

# --- the compiler cache -----------------------------------------------------
# Paths below the clone are hashed relative to it (CCACHE_BASEDIR), and the
# working directory is not hashed, so a developer's build of the same sources
# in another checkout warms CI's cache. Only objects whose preprocessed input
# and flags are identical are reused; a cached object's debug info may name
# the checkout it was first built in. Two flags would name the checkout and
# keep every object apart: the tests' paths are -D values of one object only
# (tests/support/paths.cc), and the sanitize preset's
# -fsanitize-ignorelist=<checkout>/sanitizers/integer-ignorelist.txt, on
# every sanitize object, is left out of the hash (CCACHE_IGNOREOPTIONS) with
# the list's contents hashed instead (CCACHE_EXTRAFILES): a changed list
# still rebuilds everything, a clone elsewhere does not.
if command -v ccache >/dev/null && [ "${KILN_CCACHE:-1}" = 1 ]; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
  export CCACHE_IGNOREOPTIONS='-fsanitize-ignorelist=*'
  export CCACHE_EXTRAFILES="$root/sanitizers/integer-ignorelist.txt"
  ccache --zero-stats >/dev/null
fi

step "clang-format"
git ls-files -z '*.cc' '*.h' '*.c' | xargs -0 clang-format --dry-run --Werror
echo "clang-format: clean"

step "default build (g++, plain Release, warnings as errors)"
cmake --preset default >/dev/null
cmake --build --preset default

# The other two native builds need every core but nothing from the steps
# below, several of which use one core or wait (the suite's timeouts, node,
# Python, the browser, cppcheck): they run in the background at the lowest
# priority from here on. Their output goes to one log, printed when they
# fail. Once the sanitize build is done and the default suite has finished
# (build/default-suite.done), the same background job runs the sanitize
# build's whole suite (ctest, nice 5: the foreground's browser and Python
# steps keep a core), so the suite uses the core those steps leave idle; it
# runs on beside the mutation sample (which only reads what the sanitizer
# suite does not: sources, build/default) and is waited for after it.
if [ "$quick" = 0 ]; then
  background_log=build/background-builds.log
  san_log=build/sanitize-suite.log
  default_done=build/default-suite.done
  rm -f "$default_done"
  background_start=$SECONDS
  # Its own process group (setsid), so that an early exit stops it whole.
  setsid -w bash -c '
    set -e
    start=$(date +%s)
    echo "== clang++ plain Release build"
    cmake -S . -B build/release-clang++ -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CXX_COMPILER=clang++ -DKILN_WERROR=ON >/dev/null
    nice -n 19 cmake --build build/release-clang++
    echo "== sanitize build (clang: ASan + UBSan + integer checks, the tests and the fuzz targets)"
    cmake --preset sanitize >/dev/null
    nice -n 19 cmake --build --preset sanitize
    echo "== background builds done in $(($(date +%s) - start)) s"
    while [ ! -e "$2" ]; do sleep 1; done  # the default suite has finished
    suite=$(date +%s)
    echo "== sanitize suite started"
    set +e
    nice -n 5 ctest --preset sanitize -j "$1" >"$3" 2>&1 </dev/null
    echo "== sanitize suite exit $?" >>"$3"
    echo "== sanitize suite done in $(($(date +%s) - suite)) s"
  ' _ "$jobs" "$default_done" "$san_log" >"$background_log" 2>&1 </dev/null &
  background=$!
  echo "started in the background (log: $background_log): the clang++ Release build, the sanitize build, then its suite (log: $san_log)"
fi

step "default build: the whole suite (ctest -j $jobs)"
ctest --preset default -j "$jobs"
[ "$quick" = 1 ] || touch "$default_done"

step "the plain Release build's hardening (g++)"
bash scripts/check_hardening.sh build/default

step "conformance: kiln validate and the C ABI (kiln_c_validate) against every golden case"
/usr/bin/python3 scripts/conformance.py -- build/default/cli/kiln validate
/usr/bin/python3 scripts/conformance.py -- build/default/capi/kiln_c_validate

step "install: a consumer with find_package(kiln), a C program with pkg-config"
prefix=$(mktemp -d)
cmake --install build/default --prefix "$prefix" >/dev/null
cmake -S tests/install -B "$prefix/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer" >/dev/null
"$prefix/consumer/consumer" golden/cases/kiln-v2-f32.klnt | grep -qx "tensors: 1"
echo "installed package: found, linked, parsed kiln-v2-f32"
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

# The WebAssembly module and the npm package (js/, docs/javascript.md): the
# module, the package's tests, the conformance runner through the package,
# the differential against the native build, a page and a module Worker in
# headless Chromium (setup.sh installs it).
step "WebAssembly module (js/build.sh)"
bash js/build.sh

step "npm package: tests, conformance, differential, Chromium"
node --test js/test/
/usr/bin/python3 scripts/conformance.py --batch -- node js/bin/kiln-validate.mjs
node js/tools/differential.mjs build/default/cli/kiln
node js/tools/browser-check.mjs chromium

# The browser page (web/): its generated files (the module the js/ step
# built), then the page in Debian's headless chromium: verdicts, the marked
# byte, a hostile name, a 1 GiB block timed with the renderer's memory
# bounded. Screenshots: build/browser-artifacts/.
step "browser page: web/ in headless chromium (tests/browser/)"
KILN_WEB_SKIP_WASM=1 bash web/build.sh
(cd tests/browser && KILN="$root/build/default/cli/kiln" node --test page.test.mjs)

step "differential suite: kiln against the formats' reference readers (docs/compatibility.md)"
bash tests/loaders/run.sh build/default/cli/kiln

step "static analysis of every C++ folder (clang-tidy, cppcheck)"
bash scripts/lint.sh

step "rule table and traceability up to date"
python3 scripts/gen_rules_doc.py --check

if [ "$quick" = 1 ]; then exit 0; fi

step "wait for the background builds (clang++ Release, sanitize)"
# Done when the log says so; the job goes on with the sanitizer suite. A job
# that ended without saying so is a failed build.
until grep -q "^== background builds done" "$background_log"; do
  if ! kill -0 "$background" 2>/dev/null; then
    background_done
    echo "a background build failed; its log:"
    cat "$background_log"
    exit 1
  fi
  sleep 1
done
background_done
grep -E "^== " "$background_log" | tail -n 3

step "the plain Release build's hardening (clang++)"
bash scripts/check_hardening.sh build/release-clang++

# The mutation runner mutates the checkout in place, so no build of it may
# run beside it: the background builds are done, and the sanitizer suite,
# still running, only runs the sanitize build's binaries and reads no source
# file a mutant changes (only golden/ and the test data).
# The gate: every mutant on the lines changed since the ledger's commit
# (mutation/ledger.tsv) must be killed or recorded equivalent (a mutant the
# ledger already records by its hash is not run again); then a sample of
# the rest drawn with a seed from HEAD, measured on this tree whatever the
# ledger says (only its equivalences and invalid mutants stand), so the kill
# rate is measured on mutants nobody tuned the tests to, reported and held
# to a floor. Tests are chosen by the coverage map when one is cached
# (scripts/covmap.py), else by folder. The budget stops starting mutants
# (the gate's first).
step "mutation testing: the changed lines' mutants and a fresh sample (docs/mutation.md)"
python3 scripts/mutate.py --build build/default --changed --sample "${KILN_MUTANTS:-16}" \
  --min-kill 0.5 --budget "${KILN_MUTATION_SECONDS:-270}"

step "sanitize build: the whole suite under ASan, UBSan and the integer checks (ctest -j $jobs)"
san_status=0
wait "$background" || san_status=$?
background=""
took=$(sed -n 's/^== sanitize suite done in \([0-9]*\) s$/\1/p' "$background_log")
step_names+=("  (the sanitizer suite's own time, in the background from the default suite's end)")
step_secs+=("${took:-0}")
grep -E "tests passed|tests failed|Total Test time" "$san_log" || true
if [ "$san_status" -ne 0 ] || ! grep -q "^== sanitize suite exit 0$" "$san_log"; then
  echo "the sanitizer suite failed; its log:"
  cat "$san_log"
  exit 1
fi

step "fuzz smoke (the sanitize build's libFuzzer targets, $jobs at a time)"
bash scripts/fuzz_smoke.sh "${KILN_FUZZ_SECONDS:-30}" build/sanitize

step "all checks passed"
