#!/usr/bin/env bash
# Line and branch coverage of parser/ from the test suite plus a replay of the
# seed corpus (the "coverage" preset: clang source-based coverage). Prints
# the llvm-cov summary per file and lists every line not covered.
# Usage: scripts/coverage.sh [EXTRA_CORPUS_DIR...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cmake --preset coverage >/dev/null
cmake --build --preset coverage
prof=build/coverage/prof
rm -rf "$prof"
mkdir -p "$prof"
export LLVM_PROFILE_FILE="$root/$prof/%p-%m.profraw"
ctest --test-dir build/coverage -j2 --output-on-failure >/dev/null
build/coverage/tools/kiln_replay corpus/parse "$@"
llvm-profdata merge -sparse "$prof"/*.profraw -o "$prof/merged.profdata"
# The first binary is positional, the others follow -object.
objects=(build/coverage/tests/kiln_tests)
for b in tests/kiln_memory_tests tests/kiln_reference_tests tests/kiln_cli_tests \
  tests/kiln_formats_tests tools/kiln_replay cli/kiln; do
  objects+=(-object "build/coverage/$b")
done
llvm-cov report -instr-profile "$prof/merged.profdata" "${objects[@]}" \
  -show-branch-summary core/src core/include core/internal parser/src parser/include writer/src writer/include writer/internal
echo
echo "Lines of core/, parser/ and writer/ never executed:"
llvm-cov show -instr-profile "$prof/merged.profdata" "${objects[@]}" core/src core/include core/internal parser/src parser/include writer/src writer/include writer/internal \
  -format=text -show-line-counts 2>/dev/null |
  awk '/^\/.*:$/ {file=$0} /^ +[0-9]+\| +0\|/ {print file " " $0}' | sed "s|$root/||"
