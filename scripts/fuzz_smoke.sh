#!/usr/bin/env bash
# Replays the seed corpus through every libFuzzer target, then fuzzes each
# briefly (30 s by default), as many targets at once as the machine has
# cores (each target one process: every target still gets its full time on
# one core). A crash, sanitizer report or invariant failure fails the script,
# with that target's log printed.
# Usage: scripts/fuzz_smoke.sh [SECONDS per target] [BUILD_DIR]
#   BUILD_DIR: a build with KILN_BUILD_FUZZERS=ON; default build/sanitize
#   (the `sanitize` preset: ASan + UBSan + integer checks, CI's build), built
#   here if it is the default and not built yet. The `fuzz` preset
#   (build/fuzz, -O2, no tests) fuzzes faster for longer campaigns.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-30}
build=${2:-build/sanitize}
cd "$root"
if [ "$build" = build/sanitize ]; then
  cmake --preset sanitize >/dev/null
  cmake --build --preset sanitize
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# target:seed corpus (corpus/parse holds the golden cases, corpus/stream the
# same after fuzz_stream's control byte, corpus/capi the same for fuzz_capi,
# the C ABI, and for fuzz_ranges, whose control byte reads it as mode, range
# options and hand-over).
pairs="fuzz_parse:parse fuzz_differential:parse fuzz_structured:parse fuzz_roundtrip:parse
  fuzz_stream:stream fuzz_capi:capi fuzz_ranges:capi fuzz_npy:npy fuzz_safetensors:safetensors fuzz_gguf:gguf"
for pair in $pairs; do
  bin="$build/fuzz/${pair%%:*}"
  [ -x "$bin" ] || { echo "fuzz smoke: $bin is not built (KILN_BUILD_FUZZERS=ON?)"; exit 2; }
done

one() {  # one TARGET:SEEDS: replay, then fuzz; output to $work/TARGET.log
  local target=${1%%:*} seeds="corpus/${1##*:}" max_len=4096
  case "${1##*:}" in parse | stream | capi) ;; *) max_len=65536 ;; esac
  local bin="$build/fuzz/$target" log="$work/$target.log"
  mkdir -p "$work/$target"
  {
    echo "== $target: replaying $(find "$seeds" -type f | wc -l) seeds"
    "$bin" -runs=0 -artifact_prefix="$work/$target-" "$seeds" &&
      echo "== $target: fuzzing for ${seconds}s" &&
      "$bin" -max_total_time="$seconds" -dict=fuzz/kiln.dict -max_len="$max_len" \
        -artifact_prefix="$work/$target-" "$work/$target" "$seeds"
  } >"$log" 2>&1 && status=0 || status=$?
  if [ "$status" -eq 0 ]; then
    grep -E '^== ' "$log"
    grep -E '^#[0-9]+ +DONE|^Done [0-9]+ runs' "$log" | tail -n 2
  else
    echo "== $target: FAILED (exit $status)"
    tail -n 60 "$log"
  fi
  return "$status"
}
export -f one
export build seconds work
# shellcheck disable=SC2086 # the pairs are words
if ! printf '%s\n' $pairs | xargs -P "$(nproc)" -I{} bash -c 'one "$@"' _ {}; then
  echo "fuzz smoke: a target failed"
  exit 1
fi
echo "fuzz smoke: no finding"
