#!/usr/bin/env bash
# Streaming validation, measured side by side with cat (docs/performance.md,
# "Streaming"). Builds a 1 GiB block of 500 u8 tensors (2 MiB each) with
# `kiln pack` (the library's writer) from one NumPy file, then, from the
# same pipe (`cat BLOCK |`), times:
#   cat > /dev/null          vs  kiln validate -
#   cat > FILE               vs  kiln ingest FILE (which also fsyncs)
#   cat > FILE; sync FILE    (the same durability as ingest)
# and the peak RSS of each kiln run (/usr/bin/time -v). Usage:
#   bench/stream_bench.sh [KILN] [WORKDIR] [ROUNDS]
# KILN defaults to build/default/cli/kiln; WORKDIR to a fresh mktemp -d
# (needs about 3 GiB); ROUNDS (default 3): the median of each is reported.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kiln=${1:-$root/build/default/cli/kiln}
work=${2:-$(mktemp -d)}
rounds=${3:-3}
mkdir -p "$work"
trap 'rm -f "$work"/out-*.klnt "$work"/block.klnt "$work"/t.npy' EXIT
/usr/bin/python3 -c "import numpy as np; np.save('$work/t.npy', np.ones(2 << 20, dtype=np.uint8))"
args=()
for i in $(seq 0 499); do args+=("layer.$i.weight=$work/t.npy"); done
"$kiln" pack "$work/block.klnt" "${args[@]}" >/dev/null
size=$(stat -c %s "$work/block.klnt")
cat "$work/block.klnt" >/dev/null  # into the page cache

# seconds of one pipeline run; the RSS of its last command in $work/rss
run() {
  local start end
  rm -f "$work"/out-*.klnt
  sync  # no writeback of an earlier run competes with this one
  start=$(date +%s.%N)
  # shellcheck disable=SC2002  # the pipe is the point: cat feeds every command the same way
  cat "$work/block.klnt" | /usr/bin/time -f %M -o "$work/rss" "$@" >/dev/null
  end=$(date +%s.%N)
  echo "$start $end" | awk '{printf "%.3f", $2 - $1}'
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A secs rss
for name in cat_null validate cat_file ingest cat_file_sync; do secs[$name]=""; done
for _ in $(seq "$rounds"); do
  secs[cat_null]+=" $(run cat)"
  secs[validate]+=" $(run "$kiln" validate -)"; rss[validate]=$(cat "$work/rss")
  secs[cat_file]+=" $(run sh -c "cat > '$work/out-cat.klnt'")"
  secs[cat_file_sync]+=" $(run sh -c "cat > '$work/out-sync.klnt' && sync '$work/out-sync.klnt'")"
  secs[ingest]+=" $(run "$kiln" ingest "$work/out-ingest.klnt")"; rss[ingest]=$(cat "$work/rss")
  cmp -s "$work/block.klnt" "$work/out-ingest.klnt" || { echo "ingest output differs" >&2; exit 1; }
done
mib=$((size >> 20))
echo "block: $size bytes ($mib MiB), 500 tensors; median of $rounds rounds"
printf '%-26s %8s %10s %10s\n' command seconds MiB/s peak_RSS
for name in cat_null validate cat_file cat_file_sync ingest; do
  # shellcheck disable=SC2086
  s=$(median ${secs[$name]})
  printf '%-26s %8s %10.0f %10s\n' "$name" "$s" "$(echo "$mib $s" | awk '{print $1 / $2}')" \
    "${rss[$name]:+${rss[$name]} KiB}"
done
# shellcheck disable=SC2086
awk -v v="$(median ${secs[validate]})" -v c="$(median ${secs[cat_null]})" \
  -v i="$(median ${secs[ingest]})" -v f="$(median ${secs[cat_file]})" \
  -v s="$(median ${secs[cat_file_sync]})" 'BEGIN {
  printf "validate - throughput / cat > /dev/null: %.0f%% (goal >= 70%%)\n", 100 * c / v
  printf "ingest throughput / cat > FILE: %.0f%% (goal >= 70%%)\n", 100 * f / i
  printf "ingest throughput / cat > FILE + sync: %.0f%%\n", 100 * s / i
}'
