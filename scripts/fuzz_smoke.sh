#!/usr/bin/env bash
# Builds the libFuzzer targets (the "fuzz" preset), replays the seed corpus,
# then fuzzes each target briefly (30 s by default). A crash, sanitizer report or invariant
# failure fails the script. Usage: scripts/fuzz_smoke.sh [SECONDS per target]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-30}
cd "$root"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# target:seed corpus (corpus/parse holds the golden cases, corpus/stream the
# same after fuzz_stream's control byte, corpus/capi the same for fuzz_capi,
# the C ABI).
for pair in fuzz_parse:parse fuzz_differential:parse fuzz_structured:parse \
  fuzz_roundtrip:parse fuzz_stream:stream fuzz_capi:capi fuzz_npy:npy fuzz_safetensors:safetensors fuzz_gguf:gguf; do
  target=${pair%%:*}
  bin="build/fuzz/fuzz/$target"
  seeds="corpus/${pair##*:}"
  max_len=4096
  case "${pair##*:}" in parse | stream | capi) ;; *) max_len=65536 ;; esac
  echo "== $target: replaying $(ls "$seeds" | wc -l) seeds"
  "$bin" -runs=0 "$seeds"
  echo "== $target: fuzzing for ${seconds}s"
  mkdir -p "$work/$target"
  "$bin" -max_total_time="$seconds" -dict=fuzz/kiln.dict -max_len="$max_len" \
    -artifact_prefix="$work/" "$work/$target" "$seeds" 2>&1 | tail -n 3
done
echo "fuzz smoke: no finding"
