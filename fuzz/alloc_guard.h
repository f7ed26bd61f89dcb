// Counts what a parse allocates, so a fuzz target can fail when a parse
// allocates more than a small multiple of its input (docs/fuzzing.md).
//
// This header replaces the global operator new and delete: include it from
// exactly one translation unit of a fuzz binary (invariants.h does, and each
// target that uses invariants.h is one .cc file). Only allocations on the
// thread inside a Counting scope are counted; the others pass through.
#ifndef KILN_FUZZ_ALLOC_GUARD_H_
#define KILN_FUZZ_ALLOC_GUARD_H_

#include <cstddef>
#include <cstdlib>
#include <new>

namespace kiln_fuzz::alloc {

inline thread_local bool counting = false;
inline thread_local std::size_t bytes = 0;

// Counts the bytes allocated on this thread while it lives.
class Counting {
 public:
  Counting() {
    counting = true;
    bytes = 0;
  }
  ~Counting() { counting = false; }
  Counting(const Counting&) = delete;
  Counting& operator=(const Counting&) = delete;
  [[nodiscard]] std::size_t allocated() const { return bytes; }
};

inline void* Allocate(std::size_t n) {
  if (counting && __builtin_add_overflow(bytes, n, &bytes)) bytes = ~std::size_t{0};
  return std::malloc(n == 0 ? 1 : n);
}

}  // namespace kiln_fuzz::alloc

// GCC at -O2 takes the free() in a replacement operator delete for a
// mismatched pair; these are the replaceable global functions.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t n) {
  if (void* p = kiln_fuzz::alloc::Allocate(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return kiln_fuzz::alloc::Allocate(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return kiln_fuzz::alloc::Allocate(n);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

#endif  // KILN_FUZZ_ALLOC_GUARD_H_
