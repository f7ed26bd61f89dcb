#!/usr/bin/env bash
# kiln against the safetensors crate (SafeTensors::deserialize), at 0.6.2 and
# at main. The crate's readers are built locally from fetched sources
# (tests/loaders/README.md) and named by two variables:
#   KILN_SAFETENSORS_READER_0_6   the driver built against tag v0.6.2
#   KILN_SAFETENSORS_READER_MAIN  the driver built against main
# Unset: "skipped". Usage: run.sh path/to/kiln
#
# Reading: every file of make_cases.py goes through `kiln convert f
# out.klnt` and through each reader. A failure is kiln reading a file a
# reader refuses, or reading other tensors (names, dtypes, shapes, bytes).
# There is no exception: a dtype name added after 0.6.2 (C64, F8_E4M3FNUZ,
# F8_E5M2FNUZ) is refused by kiln as by 0.6.2 (docs/compatibility.md).
# Writing: every valid golden block and every block read above goes through
# `kiln convert x.klnt y.safetensors`; both readers must load y with the
# block's tensors, or kiln must refuse with exit 1.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
kiln=$(realpath "${1:?usage: run.sh path/to/kiln}")
python=/usr/bin/python3

refs=()
for pair in "0.6.2:${KILN_SAFETENSORS_READER_0_6:-}" "main:${KILN_SAFETENSORS_READER_MAIN:-}"; do
  if [ -n "${pair#*:}" ]; then
    refs+=("$pair")
  else
    echo "skipped: safetensors ${pair%%:*} (set KILN_SAFETENSORS_READER_$( [ "${pair%%:*}" = main ] && echo MAIN || echo 0_6 ))"
  fi
done
if [ ${#refs[@]} -eq 0 ]; then
  echo "skipped: no safetensors reference reader (build it as tests/loaders/README.md says)"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" "$here/make_cases.py" "$work/cases" || exit 1
passed=0
failed=0
stricter=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

# The tensors kiln holds in block $1, as the driver prints them.
kiln_listing() {
  "$kiln" inspect --json "$1" >"$work/inspect.json" 2>/dev/null &&
    "$python" "$here/kiln_tensors.py" "$1" "$work/inspect.json"
}

mkdir -p "$work/blocks"
for file in "$work"/cases/*.safetensors; do
  case_name=$(basename "$file" .safetensors)
  block="$work/blocks/$case_name.klnt"
  "$kiln" convert "$file" "$block" >/dev/null 2>"$work/kiln.err"
  rc=$?
  if [ $rc -eq 0 ]; then
    kiln_listing "$block" >"$work/kiln.out" || { fail "$case_name: kiln inspect"; continue; }
  elif [ $rc -ne 1 ]; then
    fail "$case_name: kiln convert exited $rc: $(head -c 200 "$work/kiln.err")"
    continue
  fi
  for pair in "${refs[@]}"; do
    label=${pair%%:*}
    "${pair#*:}" "$file" >"$work/ref.out" 2>&1
    ref_ok=$([ "$(head -1 "$work/ref.out")" = ok ] && echo 1 || echo 0)
    if [ $rc -eq 0 ] && [ "$ref_ok" = 1 ]; then
      if cmp -s "$work/kiln.out" "$work/ref.out"; then pass; else
        fail "$case_name ($label): kiln reads other tensors"
        diff "$work/kiln.out" "$work/ref.out" | head -6
      fi
    elif [ $rc -eq 0 ]; then
      fail "$case_name ($label): kiln reads a file the reference refuses: $(head -c 200 "$work/ref.out")"
    elif [ "$ref_ok" = 1 ]; then
      pass
      stricter=$((stricter + 1))
      echo "kiln stricter: $case_name ($label reads it): $(head -c 160 "$work/kiln.err" | sed 's/.*safetensors[^:]*: //')"
    else
      pass
    fi
  done
  [ $rc -eq 0 ] || rm -f "$block"
done

# Writing: golden blocks that are valid, and every block read above.
blocks=()
while IFS=$'\t' read -r name expect _; do
  [ "$expect" = ok ] && blocks+=("$root/golden/cases/$name.klnt")
done < <(grep -v '^#' "$root/golden/manifest.tsv" | tail -n +2)
blocks+=("$work"/blocks/*.klnt)
for npy in "$work"/cases/npy/*.npy; do
  packed="$work/blocks/npy-$(basename "$npy" .npy).klnt"
  if "$kiln" pack "$packed" "w=$npy" >/dev/null 2>"$work/kiln.err"; then
    blocks+=("$packed")
  else
    echo "pack refuses: $(basename "$npy"): $(head -c 160 "$work/kiln.err")"
  fi
done
written=0
refused=0
for block in "${blocks[@]}"; do
  [ -e "$block" ] || continue
  label_block=$(basename "$block" .klnt)
  out="$work/out.safetensors"
  rm -f "$out"
  "$kiln" convert "$block" "$out" >/dev/null 2>"$work/kiln.err"
  rc=$?
  if [ $rc -eq 1 ]; then
    [ -e "$out" ] && { fail "$label_block: refused, yet $out was written"; continue; }
    refused=$((refused + 1))
    echo "writer refuses: $label_block: $(head -c 160 "$work/kiln.err" | sed 's/^kiln convert: [^:]*: //')"
    pass
    continue
  elif [ $rc -ne 0 ]; then
    fail "$label_block: kiln convert to safetensors exited $rc: $(head -c 200 "$work/kiln.err")"
    continue
  fi
  written=$((written + 1))
  kiln_listing "$block" >"$work/kiln.out" || { fail "$label_block: kiln inspect"; continue; }
  for pair in "${refs[@]}"; do
    "${pair#*:}" "$out" >"$work/ref.out" 2>&1
    if cmp -s "$work/kiln.out" "$work/ref.out"; then pass; else
      fail "$label_block (${pair%%:*}): the written file does not load with the block's tensors"
      diff "$work/kiln.out" "$work/ref.out" | head -6
    fi
  done
done

echo "safetensors: $(find "$work/cases" -maxdepth 1 -name "*.safetensors" | wc -l) files read against ${#refs[@]} reader(s)" \
  "($stricter kiln-stricter verdicts), $written files written, $refused refused by the writer"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
