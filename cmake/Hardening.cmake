# Distribution-style hardening for every target (KILN_HARDENING, on by
# default): what Debian's dpkg-buildflags applies with hardening=+all.
#   -fstack-protector-strong      canaries in functions with arrays or addresses taken
#   -D_FORTIFY_SOURCE=2           checked memcpy/read/... where sizes are known;
#                                 only when optimising (glibc needs -O1 or more)
#   PIE                           position-independent executables (ASLR)
#   -Wl,-z,relro -Wl,-z,now       full RELRO: the GOT is read-only after start-up
# and, as Fedora's default flags and the OpenSSF compiler hardening guide add:
#   -D_GLIBCXX_ASSERTIONS         libstdc++'s precondition checks: an index past
#                                 a span's or vector's end stops the process
#                                 instead of reading past it (a libc++ build
#                                 ignores the macro)
# A builder who passes their own _FORTIFY_SOURCE (e.g. =3 from dpkg-buildflags)
# or _GLIBCXX_ASSERTIONS keeps it. scripts/check_hardening.sh verifies the
# built binary. The mutation runner relies on the assertions (docs/mutation.md).
if(NOT KILN_HARDENING)
  return()
endif()

include(CheckPIESupported)
check_pie_supported(OUTPUT_VARIABLE kiln_pie_output LANGUAGES CXX)
if(CMAKE_CXX_LINK_PIE_SUPPORTED)
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
else()
  message(WARNING "kiln: PIE is not supported by this toolchain: ${kiln_pie_output}")
endif()

add_compile_options(-fstack-protector-strong)
string(FIND "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${CMAKE_BUILD_TYPE}} ${CMAKE_CXX_FLAGS_INIT}" "_FORTIFY_SOURCE" kiln_fortify_given)
if(kiln_fortify_given EQUAL -1)
  # Not in Debug (no optimisation), where glibc would warn and do nothing.
  add_compile_options($<$<NOT:$<CONFIG:Debug>>:-D_FORTIFY_SOURCE=2>)
endif()
string(FIND "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${CMAKE_BUILD_TYPE}} ${CMAKE_CXX_FLAGS_INIT}" "_GLIBCXX_ASSERTIONS" kiln_assertions_given)
if(kiln_assertions_given EQUAL -1)
  add_compile_definitions(_GLIBCXX_ASSERTIONS)
endif()
add_link_options(LINKER:-z,relro LINKER:-z,now)
