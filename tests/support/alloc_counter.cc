#include "alloc_counter.h"

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define KILN_ALLOC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_ALLOC_ASAN 1
#endif
#endif

namespace {

thread_local std::size_t t_allocations = 0;
thread_local std::size_t t_bytes = 0;
std::atomic<std::size_t> g_live{0};
std::atomic<std::size_t> g_peak{0};

// asked: the bytes the caller asked for; held: what Release will subtract.
void Account(std::size_t asked, std::size_t held) {
  ++t_allocations;
  if (__builtin_add_overflow(t_bytes, asked, &t_bytes)) t_bytes = ~std::size_t{0};
  const std::size_t live = g_live.fetch_add(held, std::memory_order_relaxed) + held;
  std::size_t peak = g_peak.load(std::memory_order_relaxed);
  while (live > peak && !g_peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

#ifdef KILN_ALLOC_ASAN
// ASan's malloc_usable_size is the size asked for; no prefix, so its red
// zones stay right against the block.
void* Allocate(std::size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p != nullptr) Account(n, malloc_usable_size(p));
  return p;
}

void Release(void* p) {
  if (p == nullptr) return;
  g_live.fetch_sub(malloc_usable_size(p), std::memory_order_relaxed);
  std::free(p);
}
#else
// The block's size in a 16-byte prefix (16 keeps every fundamental type
// aligned): glibc's malloc_usable_size rounds up.
constexpr std::size_t kPrefix = 16;

void* Allocate(std::size_t n) {
  if (n > ~std::size_t{0} - kPrefix) return nullptr;
  auto* p = static_cast<unsigned char*>(std::malloc(n + kPrefix));
  if (p == nullptr) return nullptr;
  *reinterpret_cast<std::size_t*>(p) = n;
  Account(n, n);
  return p + kPrefix;
}

void Release(void* q) {
  if (q == nullptr) return;
  auto* p = static_cast<unsigned char*>(q) - kPrefix;
  g_live.fetch_sub(*reinterpret_cast<std::size_t*>(p), std::memory_order_relaxed);
  std::free(p);
}
#endif

}  // namespace

namespace kiln::alloc {

Scope::Scope() : allocations_(t_allocations), bytes_(t_bytes), live_(g_live.load()) {
  g_peak.store(live_);
}

Stats Scope::Read() const {
  const std::size_t peak = g_peak.load();
  return {t_allocations - allocations_, t_bytes - bytes_, peak > live_ ? peak - live_ : 0};
}

std::size_t LiveBytes() { return g_live.load(); }

}  // namespace kiln::alloc

// The replaceable global allocation functions. GCC at -O2 takes the free()
// in a replacement operator delete for a mismatched pair.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t n) {
  if (void* p = Allocate(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return Allocate(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return Allocate(n); }
void operator delete(void* p) noexcept { Release(p); }
void operator delete[](void* p) noexcept { Release(p); }
void operator delete(void* p, std::size_t) noexcept { Release(p); }
void operator delete[](void* p, std::size_t) noexcept { Release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { Release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { Release(p); }
