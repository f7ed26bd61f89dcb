#!/usr/bin/env bash
# Static analysis of every C++ folder: parser/, writer/, base/, formats/,
# cli/ (the command) and python/src (the Python module). clang-tidy (each directory's .clang-tidy: the same checks) and
# cppcheck, both failing on any finding. Needs build/default/
# compile_commands.json (cmake --preset default). Suppressions are
# documented where they are made: the .clang-tidy files for clang-tidy,
# "cppcheck-suppress" comments in the code.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -f build/default/compile_commands.json ] || cmake --preset default >/dev/null

sources=(parser/src/*.cc writer/src/*.cc base/src/*.cc formats/src/*.cc cli/*.cc python/src/*.cc)

echo "== clang-tidy parser/ writer/ base/ formats/ cli/ python/src/"
# One run, its findings printed; its exit status is what counts
# (WarningsAsErrors: '*').
status=0
log=$(mktemp)
clang-tidy --quiet -p build/default "${sources[@]}" >"$log" 2>&1 || status=$?
grep -v "warnings generated" "$log" || true
rm -f "$log"
[ "$status" -eq 0 ] || exit "$status"
echo "clang-tidy: no finding"

echo "== cppcheck parser/ writer/ base/ formats/ cli/ python/src/"
cppcheck --std=c++20 --language=c++ --enable=warning,style,performance,portability \
  --inline-suppr --error-exitcode=1 --quiet -I parser/include -I parser/src -I writer/include \
  -I base/include -I formats/include -I formats/src -I cli -I python/src "${sources[@]}"
echo "cppcheck: no finding"
