#include "kiln/utf8.h"

#include <cstdint>

#include "kiln/base/utf8.h"

namespace kiln {

bool IsWellFormedUtf8(std::string_view text) {
  const base::Bytes bytes(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  return !base::FirstInvalidUtf8(bytes).has_value();
}

}  // namespace kiln
