#!/usr/bin/env bash
# Tests the OSS-Fuzz / ClusterFuzzLite build (.clusterfuzzlite/build.sh, which
# oss-fuzz/build.sh runs) locally and without Docker, the way their build
# images run it: a temporary $SRC holding the checkout as $SRC/kiln, $OUT and
# $WORK, clang with OSS-Fuzz's libFuzzer + ASan/UBSan flags, the script copied
# to $SRC/build.sh and run from $SRC/kiln. Then checks that $OUT holds every
# executable fuzz/CMakeLists.txt defines (as CMake's file API reports them)
# with its seed corpus, dictionary and options,
# that no fuzzer needs Abseil's shared libraries at run time, and runs each
# fuzzer over its unzipped seed corpus (-runs=0).
# Usage: scripts/test_oss_fuzz_build.sh   (needs clang, cmake, python3, zip, unzip)
# Environment: KILN_KEEP_TMP=1 keeps the temporary SRC/OUT/WORK tree.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

tmp=$(mktemp -d)
if [ "${KILN_KEEP_TMP:-0}" = 1 ]; then
  echo "keeping $tmp"
else
  trap 'rm -rf "$tmp"' EXIT
fi
export SRC="$tmp/src" OUT="$tmp/out" WORK="$tmp/work"
mkdir -p "$SRC" "$OUT" "$WORK"
# A symlink: build.sh writes only into $WORK and $OUT.
ln -s "$root" "$SRC/kiln"

export CC=clang CXX=clang++
export CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -fsanitize=address,undefined -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
# OSS-Fuzz appends -stdlib=libc++ to CXXFLAGS; build.sh must drop it.
export CXXFLAGS="$CFLAGS -stdlib=libc++"
export LIB_FUZZING_ENGINE=-fsanitize=fuzzer
export SANITIZER=address FUZZING_ENGINE=libfuzzer FUZZING_LANGUAGE=c++ ARCHITECTURE=x86_64
# The machine is shared: at most two compiler processes.
export KILN_BUILD_JOBS=2

# Ask CMake (file API) which executables fuzz/CMakeLists.txt defines: the
# list build.sh must deliver, found independently of build.sh's own search.
mkdir -p "$WORK/kiln-build/.cmake/api/v1/query"
touch "$WORK/kiln-build/.cmake/api/v1/query/codemodel-v2"

echo "== running build.sh (SRC=$SRC OUT=$OUT WORK=$WORK)"
cp "$root/.clusterfuzzlite/build.sh" "$SRC/build.sh"
(cd "$SRC/kiln" && bash -eu "$SRC/build.sh") >"$tmp/build.log" 2>&1 || {
  tail -n 60 "$tmp/build.log" >&2
  echo "build.sh failed" >&2
  exit 1
}

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

fuzzers=$(python3 - "$WORK/kiln-build/.cmake/api/v1/reply" <<'PY'
import json, pathlib, sys
reply = pathlib.Path(sys.argv[1])
index = json.loads(max(reply.glob("index-*.json")).read_text())
model = json.loads((reply / index["reply"]["codemodel-v2"]["jsonFile"]).read_text())
config = model["configurations"][0]
for target in config["targets"]:
    if config["directories"][target["directoryIndex"]]["source"] != "fuzz":
        continue
    if json.loads((reply / target["jsonFile"]).read_text())["type"] == "EXECUTABLE":
        print(target["name"])
PY
) || fail "could not read CMake's file API reply"
[ -n "$fuzzers" ] || fail "CMake reports no executables in fuzz/"
echo "== checking \$OUT for: $(echo $fuzzers)"
# Run-time options as the OSS-Fuzz runner sets them; silence_unsigned_overflow
# must not hide kiln's (unrecoverable) unsigned-overflow checks.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:symbolize=1
export UBSAN_OPTIONS=silence_unsigned_overflow=1:halt_on_error=1:print_stacktrace=1
for name in $fuzzers; do
  bin="$OUT/$name"
  [ -f "$bin" ] && [ -x "$bin" ] || fail "$bin missing or not executable"
  for f in "${name}_seed_corpus.zip" "$name.dict" "$name.options"; do
    [ -s "$OUT/$f" ] || fail "$OUT/$f missing or empty"
  done
  grep -qx "dict = $name.dict" "$OUT/$name.options" || fail "$name.options does not name $name.dict"
  grep -qx '\[libfuzzer\]' "$OUT/$name.options" || fail "$name.options has no [libfuzzer] section"
  # (Captured first: grep -q may close the pipe early, failing it under pipefail.)
  libs=$(ldd "$bin")
  if grep -q 'libabsl' <<<"$libs"; then
    fail "$name needs Abseil's shared libraries at run time"
  fi
  # Calls of the unrecoverable overflow handlers: the checks are compiled in.
  calls=$(objdump -d --no-show-raw-insn "$bin" |
    grep -c 'call.*<__ubsan_handle_\(add\|sub\|mul\)_overflow_abort>' || true)
  [ "$calls" -gt 0 ] || fail "$name has no fatal unsigned-overflow checks"

  seeds="$tmp/seeds/$name"
  mkdir -p "$seeds"
  unzip -q "$OUT/${name}_seed_corpus.zip" -d "$seeds"
  count=$(find "$seeds" -type f | wc -l)
  [ "$count" -gt 0 ] || fail "${name}_seed_corpus.zip is empty"
  echo "== $name: replaying $count seeds (-runs=0, with $name.dict)"
  (cd "$OUT" && "./$name" -runs=0 -dict="$name.dict" "$seeds") >"$tmp/$name.log" 2>&1 || {
    tail -n 30 "$tmp/$name.log" >&2
    fail "$name failed on its seed corpus"
  }
  echo "   $(grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)" "$tmp/$name.log" | tail -n 1); $calls overflow checks"
done
echo "oss-fuzz build: OK ($(echo $fuzzers | wc -w) fuzzers)"
