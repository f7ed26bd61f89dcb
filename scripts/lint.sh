#!/usr/bin/env bash
# Static analysis of the code that reads untrusted bytes: parser/, base/ and
# formats/. clang-tidy (each directory's .clang-tidy: the same checks) and
# cppcheck, both failing on any finding. Needs build/default/
# compile_commands.json (cmake --preset default). Suppressions are
# documented where they are made: the .clang-tidy files for clang-tidy,
# "cppcheck-suppress" comments in the code.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -f build/default/compile_commands.json ] || cmake --preset default >/dev/null

sources=(parser/src/*.cc writer/src/*.cc base/src/*.cc formats/src/*.cc)

echo "== clang-tidy parser/ writer/ base/ formats/"
clang-tidy --quiet -p build/default "${sources[@]}" 2>&1 | grep -v "warnings generated" || true
# clang-tidy's exit status is what counts (WarningsAsErrors: '*').
clang-tidy --quiet -p build/default "${sources[@]}" >/dev/null 2>&1
echo "clang-tidy: no finding"

echo "== cppcheck parser/ writer/ base/ formats/"
cppcheck --std=c++20 --language=c++ --enable=warning,style,performance,portability \
  --inline-suppr --error-exitcode=1 --quiet -I parser/include -I parser/src -I writer/include \
  -I base/include -I formats/include -I formats/src "${sources[@]}"
echo "cppcheck: no finding"
