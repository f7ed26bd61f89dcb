// Heap accounting for the benchmark binary: it replaces the global operator
// new and delete (every C++ allocation the parsers make goes through them)
// and keeps a count, the live bytes and the peak.
#ifndef KILN_BENCH_ALLOC_COUNTER_H_
#define KILN_BENCH_ALLOC_COUNTER_H_

#include <cstddef>

namespace kiln::bench {

struct HeapStats {
  std::size_t allocations = 0;  // since the last Reset
  std::size_t peak_extra = 0;   // peak live bytes above the live bytes at Reset
};

// Starts a measurement.
void ResetHeapStats();
// What happened since ResetHeapStats().
[[nodiscard]] HeapStats ReadHeapStats();

}  // namespace kiln::bench

#endif  // KILN_BENCH_ALLOC_COUNTER_H_
