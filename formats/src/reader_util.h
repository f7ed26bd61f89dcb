// Helpers the GGUF and safetensors readers share.
#ifndef KILN_FORMATS_SRC_READER_UTIL_H_
#define KILN_FORMATS_SRC_READER_UTIL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "kiln/base/escape.h"
#include "kiln/formats/policy.h"

namespace kiln::formats::internal {

// A name in a message: base::Quoted (escaped, cut after 64 bytes).
using base::Quoted;

// max_header_bytes as the readers apply it (at most 2^32-1, so a header
// offset fits in 4 bytes).
[[nodiscard]] inline std::uint64_t HeaderLimit(const ReaderLimits& limits) {
  return std::min<std::uint64_t>(limits.max_header_bytes, 0xFFFF'FFFF);
}

// Counts names while a reader reads them; false once they can no longer fit
// in a Kiln name heap.
class NameBudget {
 public:
  [[nodiscard]] bool Add(std::size_t name_bytes) {
    used_ += name_bytes;  // a name is a view of a file smaller than 2^64
    return used_ <= kMaxKilnNameBytes;
  }
  [[nodiscard]] std::uint64_t used() const { return used_; }

 private:
  std::uint64_t used_ = 0;
};

}  // namespace kiln::formats::internal

#endif  // KILN_FORMATS_SRC_READER_UTIL_H_
