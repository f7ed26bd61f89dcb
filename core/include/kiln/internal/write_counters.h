// How often the writer does its two costly steps, for the test that holds
// it to one descriptor encode per tensor and one directory build per write.
#ifndef KILN_INTERNAL_WRITE_COUNTERS_H_
#define KILN_INTERNAL_WRITE_COUNTERS_H_

#include <atomic>
#include <cstdint>

namespace kiln::internal {

struct WriteCounters {
  std::atomic<std::uint64_t> descriptor_encodes{0};  // EncodeDescriptor calls
  std::atomic<std::uint64_t> directory_builds{0};    // blocks laid out (sealed)
};

// The process's counters (relaxed increments; a test resets and reads them).
[[nodiscard]] WriteCounters& GetWriteCounters();

}  // namespace kiln::internal

#endif  // KILN_INTERNAL_WRITE_COUNTERS_H_
