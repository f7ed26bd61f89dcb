#!/usr/bin/env bash
# Static analysis of parser/: clang-tidy (parser/.clang-tidy) and cppcheck,
# both failing on any finding. Needs build/default/compile_commands.json
# (cmake --preset default). Suppressions are documented where they are made:
# parser/.clang-tidy for clang-tidy, "cppcheck-suppress" comments in the code.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -f build/default/compile_commands.json ] || cmake --preset default >/dev/null

echo "== clang-tidy parser/"
clang-tidy --quiet -p build/default parser/src/*.cc 2>&1 | grep -v "warnings generated" || true
# clang-tidy's exit status is what counts (WarningsAsErrors: '*').
clang-tidy --quiet -p build/default parser/src/*.cc >/dev/null 2>&1
echo "clang-tidy: no finding"

echo "== cppcheck parser/"
cppcheck --std=c++20 --language=c++ --enable=warning,style,performance,portability \
  --inline-suppr --error-exitcode=1 --quiet -I parser/include -I parser/src parser/src/*.cc
echo "cppcheck: no finding"
