#!/usr/bin/env bash
# Runs kiln_bench in the plain Release build a user gets (cmake
# -DCMAKE_BUILD_TYPE=Release), once with g++ and once with clang++, and
# prints the tables of docs/performance.md for each. Repetitions are
# interleaved at random (the machines are shared: a slow minute then hits
# every benchmark alike, not one).
# Usage: scripts/bench.sh [REPETITIONS] [COMPILER...]   (default: 9 g++ clang++)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
reps=${1:-9}
shift || true
compilers=("$@")
[ ${#compilers[@]} -gt 0 ] || compilers=(g++ clang++)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for cxx in "${compilers[@]}"; do
  dir="build/bench-$cxx"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" \
    -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_FUZZERS=OFF -DKILN_BUILD_PYTHON=OFF >/dev/null
  cmake --build "$dir" --target kiln_bench >/dev/null
  echo "## $cxx ($("$cxx" --version | head -1)), plain Release"
  echo
  "$dir/bench/kiln_bench" --benchmark_repetitions="$reps" --benchmark_min_time=0.2 \
    --benchmark_report_aggregates_only=true --benchmark_enable_random_interleaving=true \
    --benchmark_format=json >"$out"
  python3 bench/report.py "$out"
  echo
done
