#include "kiln/base/bytes.h"

#include <cstring>

namespace kiln::base {

std::optional<std::size_t> FirstNonzero(Bytes bytes) {
  // Eight bytes at a time while they are all zero, then byte by byte to find
  // the first nonzero one.
  std::size_t i = 0;
  for (; bytes.size() - i >= 8; i += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, bytes.data() + i, sizeof(word));
    if (word != 0) break;
  }
  for (; i < bytes.size(); ++i) {
    if (bytes[i] != 0) return i;
  }
  return std::nullopt;
}

}  // namespace kiln::base
