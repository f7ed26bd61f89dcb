#!/usr/bin/env bash
# Static analysis of every C++ folder: base/, core/, parser/, writer/,
# formats/, map/, capi/, cli/ (the command) and python/src (the Python
# module). clang-tidy (the one .clang-tidy at the top: the same checks
# everywhere) and cppcheck, both failing on any finding. Needs
# build/default/compile_commands.json (cmake --preset default).
# Suppressions are documented where they are made: .clang-tidy for
# clang-tidy, "cppcheck-suppress" comments in the code.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -f build/default/compile_commands.json ] || cmake --preset default >/dev/null

folders=(base/src core/src parser/src writer/src formats/src map/src capi/src cli python/src)
sources=()
for d in "${folders[@]}"; do sources+=("$d"/*.cc); done

echo "== clang-tidy ${folders[*]}"
# A file whose clang-tidy input is unchanged since a clean run (the same
# expansion, command, configuration and clang-tidy: scripts/tidy_cache.py)
# is not analysed again; KILN_TIDY_CACHE=0 analyses every file.
tidy_cache=${KILN_TIDY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kiln-clang-tidy}
pending=$(mktemp)
log=$(mktemp)
trap 'rm -f "$pending" "$log"' EXIT
to_check=("${sources[@]/#/$root/}")
if [ "${KILN_TIDY_CACHE:-1}" = 1 ]; then
  mapfile -t to_check < <(python3 scripts/tidy_cache.py split build/default "$tidy_cache" "$pending" \
    "${sources[@]}")
  echo "clang-tidy: ${#to_check[@]} of ${#sources[@]} files to analyse ($((${#sources[@]} - ${#to_check[@]})) unchanged since a clean run: $tidy_cache)"
fi
# One job per core; the files' findings printed; its exit status is what
# counts (WarningsAsErrors: '*').
status=0
if [ "${#to_check[@]}" -gt 0 ]; then
  run-clang-tidy -quiet -p build/default -j "$(nproc)" "${to_check[@]}" >"$log" 2>&1 || status=$?
  grep -v -e "warnings generated" -e "^clang-tidy" -e "^Enabled checks" "$log" || true
fi
[ "$status" -eq 0 ] || exit "$status"
if [ "${KILN_TIDY_CACHE:-1}" = 1 ]; then
  python3 scripts/tidy_cache.py record "$tidy_cache" "$pending"
fi
echo "clang-tidy: no finding"

echo "== cppcheck ${folders[*]}"
includes=()
for d in base/include core/include parser/include parser/src writer/include formats/include formats/src \
  map/include capi/include capi/src cli python/src; do
  includes+=(-I "$d")
done
cppcheck --std=c++20 --language=c++ --enable=warning,style,performance,portability \
  --inline-suppr --error-exitcode=1 --quiet "${includes[@]}" "${sources[@]}"
echo "cppcheck: no finding"
