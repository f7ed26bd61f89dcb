// The one heap counter of the tests, the benchmark and the fuzz targets.
//
// Linking kiln_alloc_counter (an object library: tests/support) replaces the
// global operator new and delete of the binary, so every C++ allocation is
// seen: how many (per thread), how many bytes were asked for (per thread),
// and the live bytes with their peak (whole process). Link it into a binary
// only when that binary measures memory; nothing else changes.
//
// Live bytes are exact: a block's size comes from malloc_usable_size under
// AddressSanitizer (which reports the size asked for, and keeps its red zones
// right at the block, so a read just before a fuzz input is still caught),
// else from a 16-byte prefix the counter puts before the block.
#ifndef KILN_TESTS_SUPPORT_ALLOC_COUNTER_H_
#define KILN_TESTS_SUPPORT_ALLOC_COUNTER_H_

#include <cstddef>

namespace kiln::alloc {

struct Stats {
  std::size_t allocations = 0;  // operator new calls on this thread
  std::size_t bytes = 0;        // bytes those calls asked for (saturates at SIZE_MAX)
  std::size_t peak_extra = 0;   // peak live heap bytes above the live bytes at the start
};

// Counts from its construction until Read(). allocations and bytes count
// only the constructing thread (a fuzzing engine's helper threads do not
// disturb a guard); peak_extra sees every thread, and one Scope at a time
// measures it (a new Scope restarts the peak).
class Scope {
 public:
  Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  [[nodiscard]] Stats Read() const;

 private:
  std::size_t allocations_;
  std::size_t bytes_;
  std::size_t live_;
};

// Heap bytes allocated and not yet freed, all threads.
[[nodiscard]] std::size_t LiveBytes();

}  // namespace kiln::alloc

#endif  // KILN_TESTS_SUPPORT_ALLOC_COUNTER_H_
