#!/usr/bin/env bash
# Checks that a built kiln binary carries the hardening a distribution
# applies (cmake/Hardening.cmake): PIE, full RELRO (GNU_RELRO + BIND_NOW), a
# stack protector, and _FORTIFY_SOURCE and _GLIBCXX_ASSERTIONS on every
# compile command of the build.
# Usage: scripts/check_hardening.sh BUILD_DIR   (the binary is BUILD_DIR/cli/kiln)
set -euo pipefail
build=${1:?usage: check_hardening.sh BUILD_DIR}
bin=$build/cli/kiln
fail=0
check() {  # check NAME COMMAND...: prints the verdict, remembers a failure
  local name=$1; shift
  if "$@" >/dev/null 2>&1; then echo "hardening: $name: yes"; else echo "hardening: $name: NO"; fail=1; fi
}
check "PIE" bash -c "readelf -hW '$bin' | grep -q 'Type: *DYN'"
check "GNU_RELRO" bash -c "readelf -lW '$bin' | grep -q GNU_RELRO"
check "BIND_NOW (full RELRO)" bash -c "readelf -dW '$bin' | grep -Eq 'BIND_NOW|Flags:.* NOW'"
check "stack protector" bash -c "readelf --dyn-syms -W '$bin' | grep -q __stack_chk_fail"
for macro in _FORTIFY_SOURCE _GLIBCXX_ASSERTIONS; do
  check "$macro on every compile" bash -c \
    "python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); sys.exit(0 if c and all(sys.argv[2] in e[\"command\"] for e in c) else 1)' '$build/compile_commands.json' $macro"
done
fortified=$(readelf --dyn-syms -W "$bin" | grep -oE '__[a-z0-9_]+_chk(@|\b)' | tr -d '@' | grep -v '^__stack_chk' | sort -u | tr '\n' ' ' || true)
echo "hardening: fortified calls imported: ${fortified:-none (no call needed a runtime check)}"
exit $fail
