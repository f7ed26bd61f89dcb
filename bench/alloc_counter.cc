#include "alloc_counter.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

// Each block carries its size in a 16-byte prefix, so delete can account
// for it; 16 keeps the result aligned for every fundamental type.
constexpr std::size_t kPrefix = 16;

std::atomic<std::size_t> g_count{0};
std::atomic<std::size_t> g_live{0};
std::atomic<std::size_t> g_base{0};
std::atomic<std::size_t> g_peak{0};

void* Allocate(std::size_t n) {
  auto* p = static_cast<unsigned char*>(std::malloc(n + kPrefix));
  if (p == nullptr) return nullptr;
  *reinterpret_cast<std::size_t*>(p) = n;
  g_count.fetch_add(1, std::memory_order_relaxed);
  const std::size_t live = g_live.fetch_add(n, std::memory_order_relaxed) + n;
  std::size_t peak = g_peak.load(std::memory_order_relaxed);
  while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
  }
  return p + kPrefix;
}

void Release(void* q) {
  if (q == nullptr) return;
  auto* p = static_cast<unsigned char*>(q) - kPrefix;
  g_live.fetch_sub(*reinterpret_cast<std::size_t*>(p), std::memory_order_relaxed);
  std::free(p);
}

}  // namespace

namespace kiln::bench {

void ResetHeapStats() {
  g_count.store(0);
  g_base.store(g_live.load());
  g_peak.store(g_live.load());
}

HeapStats ReadHeapStats() { return {g_count.load(), g_peak.load() - g_base.load()}; }

}  // namespace kiln::bench

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
