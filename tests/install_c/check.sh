#!/bin/sh
# check.sh BUILD_DIR SOURCE_DIR CC: the installed C library, linked three
# ways by a C99 program (main.c), each run on a valid and an invalid golden
# file:
#   shared   cc main.c $(pkg-config --cflags --libs kiln)   -> needs libkiln_c.so.<ABI>
#   archive  cc main.c libkiln_c.a -lstdc++ -lm             -> needs no libkiln_c.so
#   static   cc main.c $(pkg-config --static --cflags --libs kiln), with only
#            the archive installed (as KILN_BUILD_C_SHARED=OFF installs it)
# and the installed shared library exports only kiln_* (check_symbols.sh).
set -eu
build=$1
src=$2
cc=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cflags="-std=c99 -Wall -Wextra -Werror -pedantic"

cmake --install "$build" --prefix "$prefix" >/dev/null
pc=$(find "$prefix" -name kiln.pc | head -n 1)
[ -n "$pc" ] || { echo "check: no kiln.pc installed"; exit 1; }
pc_dir=$(dirname "$pc")
libdir=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --variable=libdir kiln)
[ -f "$libdir/libkiln_c.a" ] || { echo "check: no $libdir/libkiln_c.a"; exit 1; }

needs_kiln() { objdump -p "$1" | awk '$1 == "NEEDED" { print $2 }' | grep '^libkiln_c' || true; }

# run NAME: the program validates kiln-v2-f32 and rejects kiln-pod-list-f32
# with FRAME H1 at byte 0.
run() {
  ok=$(LD_LIBRARY_PATH="$libdir" "$work/$1" "$src/golden/cases/kiln-v2-f32.klnt") || {
    echo "check: $1: kiln-v2-f32: exit $? ($ok)"; exit 1; }
  set +e
  bad=$(LD_LIBRARY_PATH="$libdir" "$work/$1" "$src/golden/cases/kiln-pod-list-f32.klnt")
  bad_exit=$?
  set -e
  case "$ok|$bad|$bad_exit" in
    "ok (kiln "*"|FRAME H1 at byte 0: "*"|1") ;;
    *) echo "check: $1: unexpected verdicts: '$ok' / '$bad' (exit $bad_exit)"; exit 1 ;;
  esac
  echo "$1: $ok; kiln-pod-list-f32: ${bad%%:*}"
}

# shellcheck disable=SC2046,SC2086 # the flags are words
"$cc" $cflags "$src/tests/install_c/main.c" $(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs kiln) \
  -o "$work/shared"
case $(needs_kiln "$work/shared") in
  libkiln_c.so.*) ;;
  *) echo "check: shared: the program does not need libkiln_c.so"; exit 1 ;;
esac
run shared
sh "$src/tests/capi/check_symbols.sh" "$(find "$libdir" -name 'libkiln_c.so.*' -type f | head -n 1)"

# shellcheck disable=SC2086
"$cc" $cflags -I"$prefix/include" "$src/tests/install_c/main.c" "$libdir/libkiln_c.a" -lstdc++ -lm \
  -o "$work/archive"
[ -z "$(needs_kiln "$work/archive")" ] || { echo "check: archive: needs libkiln_c.so"; exit 1; }
run archive

# Only the archive left: -lkiln_c can only be it.
rm -f "$libdir"/libkiln_c.so*
# shellcheck disable=SC2046,SC2086
"$cc" $cflags "$src/tests/install_c/main.c" \
  $(PKG_CONFIG_PATH="$pc_dir" pkg-config --static --cflags --libs kiln) -o "$work/static"
[ -z "$(needs_kiln "$work/static")" ] || { echo "check: static: needs libkiln_c.so"; exit 1; }
run static
