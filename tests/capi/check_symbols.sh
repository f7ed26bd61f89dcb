#!/bin/sh
# check_symbols.sh LIBRARY: the shared C library exports the C ABI only.
# Every defined dynamic symbol is kiln_* (or its version node, KILN_C_<ABI>), and
# the ABI's entry points are all there.
set -eu
lib=$1
symbols=$(nm -D --defined-only "$lib" | awk '{ print $3 }' | sed 's/@.*//')
others=$(printf '%s\n' "$symbols" | grep -v -e '^kiln_' -e '^KILN_C_[0-9]*$' || true)
if [ -n "$others" ]; then
  echo "check_symbols: $lib exports symbols outside the C ABI:"
  printf '%s\n' "$others"
  exit 1
fi
for f in kiln_version kiln_version_number kiln_validate kiln_parse kiln_stream_new kiln_stream_feed \
  kiln_directory_tensor kiln_block_map_new kiln_ranges_new kiln_ranges_next kiln_ranges_block_map; do
  if ! printf '%s\n' "$symbols" | grep -qx "$f"; then
    echo "check_symbols: $lib does not export $f"
    exit 1
  fi
done
count=$(printf '%s\n' "$symbols" | grep -c '^kiln_')
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
echo "check_symbols: $lib: $count kiln_* symbols, nothing else; soname $soname"
