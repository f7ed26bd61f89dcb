#!/usr/bin/env bash
# Streaming validation, measured side by side with cat (docs/performance.md,
# "Streaming"). Builds a 1 GiB block of 500 u8 tensors (2 MiB each) with
# `kiln pack` (the library's writer) from one NumPy file, then, from the
# same pipe (`cat BLOCK |`), times:
#   cat > /dev/null          vs  kiln validate -
#   cat > FILE               vs  kiln ingest FILE (which also fsyncs)
#   cat > FILE; sync FILE    (the same durability as ingest)
# and, with a producer that writes 8 KiB at a time (`{ cat HEAD; head -c
# 1G /dev/zero; }`, HEAD the header and directory of a block holding one
# 1 GiB u8 tensor of zeros, which stays sparse on disk):
#   cat > /dev/null          vs  kiln validate -
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
trap 'rm -f "$work"/out-*.klnt "$work"/block.klnt "$work"/t.npy "$work"/z.npy "$work"/zero.klnt "$work"/head' EXIT
/usr/bin/python3 -c "import numpy as np; np.save('$work/t.npy', np.ones(2 << 20, dtype=np.uint8))"
args=()
for i in $(seq 0 499); do args+=("layer.$i.weight=$work/t.npy"); done
"$kiln" pack "$work/block.klnt" "${args[@]}" >/dev/null
size=$(stat -c %s "$work/block.klnt")
cat "$work/block.klnt" >/dev/null  # into the page cache
# The small-writes producer's block: its header and directory, then zeros.
/usr/bin/python3 -c "import numpy as np; np.lib.format.open_memmap('$work/z.npy', mode='w+', dtype=np.uint8, shape=(1 << 30,))"
"$kiln" pack "$work/zero.klnt" "zeros=$work/z.npy" >/dev/null
zero_base=$(( $(stat -c %s "$work/zero.klnt") - (1 << 30) ))
head -c "$zero_base" "$work/zero.klnt" >"$work/head"

# seconds of one pipeline run; the RSS of its last command in $work/rss
run() {
  local start end
  rm -f "$work"/out-*.klnt
  sync  # no writeback of an earlier run competes with this one
  start=$(date +%s.%N)
  # shellcheck disable=SC2002  # the pipe is the point: cat feeds every command the same way
  if [ -n "${small:-}" ]; then
    { cat "$work/head"; head -c $((1 << 30)) /dev/zero; } | /usr/bin/time -f %M -o "$work/rss" "$@" >/dev/null
  else
    cat "$work/block.klnt" | /usr/bin/time -f %M -o "$work/rss" "$@" >/dev/null
  fi
  end=$(date +%s.%N)
  echo "$start $end" | awk '{printf "%.3f", $2 - $1}'
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A secs rss
for name in cat_null validate cat_file ingest cat_file_sync small_cat small_validate; do secs[$name]=""; done
for _ in $(seq "$rounds"); do
  secs[cat_null]+=" $(run cat)"
  secs[validate]+=" $(run "$kiln" validate -)"; rss[validate]=$(cat "$work/rss")
  secs[cat_file]+=" $(run sh -c "cat > '$work/out-cat.klnt'")"
  secs[cat_file_sync]+=" $(run sh -c "cat > '$work/out-sync.klnt' && sync '$work/out-sync.klnt'")"
  secs[ingest]+=" $(run "$kiln" ingest "$work/out-ingest.klnt")"; rss[ingest]=$(cat "$work/rss")
  cmp -s "$work/block.klnt" "$work/out-ingest.klnt" || { echo "ingest output differs" >&2; exit 1; }
  secs[small_cat]+=" $(small=1 run cat)"
  secs[small_validate]+=" $(small=1 run "$kiln" validate -)"; rss[small_validate]=$(cat "$work/rss")
done
mib=$((size >> 20))
echo "block: $size bytes ($mib MiB), 500 tensors; median of $rounds rounds"
printf '%-26s %8s %10s %10s\n' command seconds MiB/s peak_RSS
for name in cat_null validate cat_file cat_file_sync ingest small_cat small_validate; do
  # shellcheck disable=SC2086
  s=$(median ${secs[$name]})
  printf '%-26s %8s %10.0f %10s\n' "$name" "$s" "$(echo "$mib $s" | awk '{print $1 / $2}')" \
    "${rss[$name]:+${rss[$name]} KiB}"
done
# shellcheck disable=SC2086
awk -v v="$(median ${secs[validate]})" -v c="$(median ${secs[cat_null]})" \
  -v i="$(median ${secs[ingest]})" -v f="$(median ${secs[cat_file]})" \
  -v s="$(median ${secs[cat_file_sync]})" -v sv="$(median ${secs[small_validate]})" \
  -v sc="$(median ${secs[small_cat]})" 'BEGIN {
  printf "validate - throughput / cat > /dev/null: %.0f%% (goal >= 90%%)\n", 100 * c / v
  printf "8 KiB writes: validate - throughput / cat > /dev/null: %.0f%% (goal >= 95%%)\n", 100 * sc / sv
  printf "ingest throughput / cat > FILE: %.0f%% (goal >= 70%%)\n", 100 * f / i
  printf "ingest throughput / cat > FILE + sync: %.0f%%\n", 100 * s / i
}'
