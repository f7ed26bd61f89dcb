#!/usr/bin/env bash
# Runs kiln_bench (the default build) with repetitions and prints the tables
# of docs/performance.md. Usage: scripts/bench.sh [REPETITIONS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cmake --preset default >/dev/null
cmake --build --preset default --target kiln_bench >/dev/null
out=$(mktemp)
trap 'rm -f "$out"' EXIT
build/default/bench/kiln_bench --benchmark_repetitions="${1:-9}" --benchmark_min_time=0.2 \
  --benchmark_report_aggregates_only=true --benchmark_format=json >"$out"
python3 bench/report.py "$out"
