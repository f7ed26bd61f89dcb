// Included first in every C++ file of the WebAssembly build (the `wasm`
// preset passes -include): what Emscripten 3.1.6's libc++ (version 13) lacks
// of the C++20 library the core uses, declared as later libc++ versions
// declare it. Nothing here is used by any other build.
#ifndef KILN_JS_LIBCXX_COMPAT_H_
#define KILN_JS_LIBCXX_COMPAT_H_

#include <cstddef>
#include <memory>
#include <type_traits>

#if defined(_LIBCPP_VERSION) && _LIBCPP_VERSION < 16000 && \
    !defined(__cpp_lib_smart_ptr_for_overwrite)
namespace std {  // NOLINT(cert-dcl58-cpp): the standard's own declaration, missing here

// std::make_unique_for_overwrite<T[]>(n) (C++20, libc++ 16): n
// default-initialised elements.
template <class T>
requires is_unbounded_array_v<T> unique_ptr<T> make_unique_for_overwrite(size_t n) {
  return unique_ptr<T>(new remove_extent_t<T>[n]);
}

}  // namespace std
#endif

#endif  // KILN_JS_LIBCXX_COMPAT_H_
