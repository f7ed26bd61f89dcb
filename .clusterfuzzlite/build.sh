#!/bin/bash -eu
# Copyright 2026 The kiln Authors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#
################################################################################
# Builds kiln's fuzz targets for OSS-Fuzz and ClusterFuzzLite (oss-fuzz/build.sh
# runs this file). Expects what their build images provide: the checkout in
# $SRC/kiln, $CC/$CXX (clang), $CFLAGS/$CXXFLAGS with the sanitizer and
# -fsanitize=fuzzer-no-link flags, $LIB_FUZZING_ENGINE, $OUT and $WORK. Leaves
# in $OUT every fuzz target that fuzz/CMakeLists.txt defines, each with
# NAME_seed_corpus.zip, NAME.dict and NAME.options.
# scripts/test_oss_fuzz_build.sh runs it locally, without Docker.

src="$SRC/kiln"
build="$WORK/kiln-build"

# Abseil comes from the distribution (libabsl-dev), which is built against
# libstdc++: kiln must use the same standard library, so drop OSS-Fuzz's
# -stdlib=libc++. (Only MemorySanitizer needs an instrumented libc++, and kiln
# does not enable it.)
CXXFLAGS="${CXXFLAGS//-stdlib=libc++/}"

# Any unsigned wrap in kiln's code is a bug (sanitizers/README.md). OSS-Fuzz
# leaves unsigned-integer-overflow recoverable and silences it at run time
# (UBSAN_OPTIONS=silence_unsigned_overflow=1), which only applies to
# recoverable checks, so make it fatal. The ignorelist exempts the system
# headers; sanitizers/integer-ignorelist.txt has no [section] and clang would
# apply it to every sanitizer (ASan would skip the libstdc++ header code), so
# this copy confines it to unsigned-integer-overflow.
case "${SANITIZER:-address}" in
  address | undefined)
    ignorelist="$WORK/kiln-integer-ignorelist.txt"
    { echo "[unsigned-integer-overflow]"; cat "$src/sanitizers/integer-ignorelist.txt"; } >"$ignorelist"
    CXXFLAGS="$CXXFLAGS -fsanitize=unsigned-integer-overflow"
    CXXFLAGS="$CXXFLAGS -fno-sanitize-recover=unsigned-integer-overflow"
    CXXFLAGS="$CXXFLAGS -fsanitize-ignorelist=$ignorelist"
    ;;
esac

# The fuzzers must run without the build image's shared libraries, so link
# Abseil's static archives: after find_package(absl), point each imported
# Abseil library at its .a. The project's own find_package(absl) then finds
# the targets defined and leaves them alone.
cat >"$WORK/kiln-static-absl.cmake" <<'CMAKE'
find_package(absl REQUIRED)
get_directory_property(_kiln_targets IMPORTED_TARGETS)
foreach(_kiln_target IN LISTS _kiln_targets)
  get_target_property(_kiln_configs ${_kiln_target} IMPORTED_CONFIGURATIONS)
  if(NOT _kiln_configs)
    continue()
  endif()
  foreach(_kiln_config IN LISTS _kiln_configs)
    get_target_property(_kiln_so ${_kiln_target} IMPORTED_LOCATION_${_kiln_config})
    string(REGEX REPLACE "\\.so(\\.[0-9]+)*$" ".a" _kiln_a "${_kiln_so}")
    if(_kiln_so AND NOT _kiln_a STREQUAL _kiln_so AND EXISTS "${_kiln_a}")
      set_target_properties(${_kiln_target} PROPERTIES IMPORTED_LOCATION_${_kiln_config} "${_kiln_a}")
    endif()
  endforeach()
endforeach()
CMAKE

# fuzz_capi links the C ABI's static archive (libkiln_c.a); the shared
# library is not built here (Abseil's archives are not position-independent).
generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
# LIB_FUZZING_ENGINE may hold several words; a CMake list keeps them apart.
cmake -S "$src" -B "$build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE= \
  -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
  -DCMAKE_PROJECT_INCLUDE="$WORK/kiln-static-absl.cmake" \
  -DKILN_BUILD_FUZZERS=ON \
  -DKILN_BUILD_TESTS=OFF \
  -DKILN_BUILD_BENCH=OFF \
  -DKILN_BUILD_CLI=OFF \
  -DKILN_BUILD_C_SHARED=OFF \
  -DKILN_WERROR=OFF \
  -DKILN_HARDENING=OFF \
  -DKILN_FUZZ_ENGINE="${LIB_FUZZING_ENGINE// /;}"
cmake --build "$build" --parallel "${KILN_BUILD_JOBS:-$(nproc)}"

# The fuzz targets: the executables built in fuzz/ that define
# LLVMFuzzerTestOneInput (however fuzz/CMakeLists.txt declares them).
fuzzers=()
for bin in "$build"/fuzz/*; do
  [ -f "$bin" ] && [ -x "$bin" ] || continue
  symbols=$(nm -g --defined-only "$bin" 2>/dev/null || true)
  grep -q ' LLVMFuzzerTestOneInput$' <<<"$symbols" || continue
  fuzzers+=("$(basename "$bin")")
done
if [ ${#fuzzers[@]} -eq 0 ]; then
  echo "no fuzz targets in $build/fuzz" >&2
  exit 1
fi
for name in "${fuzzers[@]}"; do
  cp "$build/fuzz/$name" "$OUT/$name"
  # Seeds and dictionary: the target's own (corpus/<name without fuzz_>,
  # fuzz/<name>.dict) if it has them, else the Kiln v2 ones. fuzz_stream
  # takes corpus/stream (a control byte, then a golden case), fuzz_capi
  # corpus/capi (the same).
  seeds="$src/corpus/${name#fuzz_}"
  [ -d "$seeds" ] || seeds="$src/corpus/parse"
  rm -f "$OUT/${name}_seed_corpus.zip"
  zip -q -j -X "$OUT/${name}_seed_corpus.zip" "$seeds"/*
  dict="$src/fuzz/$name.dict"
  [ -f "$dict" ] || dict="$src/fuzz/kiln.dict"
  cp "$dict" "$OUT/$name.dict"
  if [ -f "$src/fuzz/$name.options" ]; then
    cp "$src/fuzz/$name.options" "$OUT/$name.options"
  else
    printf '[libfuzzer]\ndict = %s.dict\nmax_len = 65536\n' "$name" >"$OUT/$name.options"
  fi
done
