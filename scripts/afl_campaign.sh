#!/usr/bin/env bash
# Runs an AFL++ campaign on one libFuzzer-style target: builds the harness
# (fuzz/TARGET.cc) and the parser sources with afl-clang-fast++ and AFL++'s
# libFuzzer-compatible driver (-fsanitize=fuzzer under afl-clang-fast links
# /usr/lib/afl/libAFLDriver.a), once with ASan + UBSan (the fuzzed binary) and
# once with CMPLOG (AFL_LLVM_CMPLOG=1, passed to afl-fuzz with -c), into
# build/afl/. Then fuzzes for SECONDS from corpus/parse with fuzz/kiln.dict
# (or the target's own corpus/<name> and fuzz/<target>.dict when it has them),
# prints the fuzzer_stats summary and exits non-zero if a crash was saved.
#
# Usage: scripts/afl_campaign.sh TARGET SECONDS     e.g. fuzz_parse 120
# Environment: KILN_AFL_KEEP_OUTPUT=1 keeps the output directory after a clean run
# (it is always kept when there are crashes).
#
# Under AFL++ a target's LLVMFuzzerCustomMutator is not used (afl-fuzz has its
# own mutators); fuzz_structured then runs as a plain byte-level target.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if [ $# -ne 2 ]; then
  echo "usage: $0 TARGET SECONDS" >&2
  exit 2
fi
target=$1
seconds=$2
src="fuzz/$target.cc"
[ -f "$src" ] || { echo "no such target: $src" >&2; exit 2; }
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -gt 0 ] || { echo "bad SECONDS: $seconds" >&2; exit 2; }
for tool in afl-clang-fast++ afl-fuzz; do
  command -v "$tool" >/dev/null || { echo "$tool not found (apt-get install afl++)" >&2; exit 2; }
done

# Abseil libraries the format readers link (absl::str_format, absl::strings);
# base, core and parser need none.
if absl_libs=$(pkg-config --libs absl_str_format absl_strings 2>/dev/null); then :; else
  absl_libs="-labsl_str_format_internal -labsl_strings -labsl_strings_internal -labsl_int128
             -labsl_throw_delegate -labsl_raw_logging_internal -labsl_base -labsl_spinlock_wait
             -labsl_log_severity"
fi

sources=(base/src/*.cc core/src/*.cc parser/src/*.cc "$src")
includes=(-I base/include -I core/include -I core/internal -I parser/include -I fuzz)
# The differential target links the independent reference checker, the
# format readers' targets the formats library.
if grep -q '"reference_checker.h"' "$src" && [ -d fuzz/reference ]; then
  sources+=(fuzz/reference/*.cc)
  includes+=(-I fuzz/reference)
fi
if grep -q '"kiln/formats/\|"format_readers.h"' "$src" && [ -d formats ]; then
  sources+=(formats/src/*.cc)
  includes+=(-I formats/include -I formats/src)
fi

out_dir=build/afl
mkdir -p "$out_dir"
common=(-std=c++20 -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Werror)
# sanitizers/integer-ignorelist.txt has no [section], so clang would apply it
# to every sanitizer and ASan would skip the code of libstdc++ headers. This
# copy confines it to unsigned-integer-overflow.
ignorelist="$out_dir/integer-ignorelist.txt"
{ echo "[unsigned-integer-overflow]"; cat sanitizers/integer-ignorelist.txt; } >"$ignorelist.tmp"
cmp -s "$ignorelist.tmp" "$ignorelist" && rm "$ignorelist.tmp" || mv "$ignorelist.tmp" "$ignorelist"
san=(-fsanitize=address,undefined,unsigned-integer-overflow
     -fsanitize-ignorelist="$root/$ignorelist" -fno-sanitize-recover=all)

# Rebuilds $1 when it is missing or older than any source or header.
build() {
  local bin=$1
  shift
  if [ -x "$bin" ] && [ -z "$(find parser fuzz formats "$ignorelist" -newer "$bin" \( -name '*.cc' -o -name '*.h' -o -name '*.inc' -o -name '*.txt' \) -print -quit)" ]; then
    echo "== $bin is up to date"
    return
  fi
  echo "== building $bin"
  # One compiler process at a time: the machine is shared.
  AFL_QUIET=1 "$@" "${common[@]}" "${includes[@]}" "${sources[@]}" -fsanitize=fuzzer \
    $absl_libs -o "$bin"
}
build "$out_dir/$target" afl-clang-fast++ "${san[@]}"
build "$out_dir/$target.cmplog" env AFL_LLVM_CMPLOG=1 afl-clang-fast++

# Seeds and dictionary: the target's own (corpus/<target without fuzz_>,
# fuzz/<target>.dict) if it has them, else corpus/parse and fuzz/kiln.dict.
seeds="corpus/${target#fuzz_}"
[ -d "$seeds" ] || seeds=corpus/parse
dict="fuzz/$target.dict"
[ -f "$dict" ] || dict=fuzz/kiln.dict

work=$(mktemp -d "${TMPDIR:-/tmp}/afl-$target.XXXXXX")
export AFL_SKIP_CPUFREQ=1 AFL_NO_UI=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1
# Shared machine: do not insist on a free core of our own.
export AFL_NO_AFFINITY=1
# AFL++ needs abort_on_error and symbolize=0; leak checks do not fit its
# persistent mode.
export ASAN_OPTIONS=abort_on_error=1:symbolize=0:detect_leaks=0
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:symbolize=0:print_stacktrace=0

echo "== afl-fuzz $target for ${seconds}s from $seeds with $dict (output: $work)"
status=0
# -V stops the campaign after SECONDS; timeout is only a safety net.
timeout --signal=INT $((seconds + 120)) \
  afl-fuzz -i "$seeds" -o "$work" -x "$dict" -c "$out_dir/$target.cmplog" \
  -V "$seconds" -- "$out_dir/$target" >"$work/afl-fuzz.log" 2>&1 || status=$?

stats="$work/default/fuzzer_stats"
if [ ! -f "$stats" ]; then
  echo "afl-fuzz did not produce $stats (exit $status); its log:" >&2
  tail -n 40 "$work/afl-fuzz.log" >&2
  exit 1
fi
stat() { awk -F' *: *' -v k="$1" '$1 == k { print $2 }' "$stats"; }
echo "== fuzzer_stats ($target)"
for key in run_time execs_done execs_per_sec corpus_count corpus_found bitmap_cvg \
  edges_found total_edges stability saved_crashes saved_hangs; do
  printf '  %-14s %s\n' "$key" "$(stat "$key")"
done
crashes=$(stat saved_crashes)
if [ "${crashes:-0}" != 0 ]; then
  echo "AFL++ saved $crashes crash(es): $work/default/crashes/" >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then
  echo "afl-fuzz exited with status $status; log: $work/afl-fuzz.log" >&2
  exit 1
fi
if [ "${KILN_AFL_KEEP_OUTPUT:-0}" = 1 ]; then
  echo "output kept: $work"
else
  rm -rf "$work"
fi
echo "afl campaign: no crash"
