#include "kiln/stable_prefix.h"

#include <algorithm>

#include "kiln/directory.h"

namespace kiln {

std::size_t StablePrefixLength(std::span<const std::uint8_t> bytes) {
  const Result<HeaderInfo> header =
      ReadHeader(bytes.first(std::min<std::size_t>(bytes.size(), 64)));
  if (!header.ok()) return std::min(bytes.size(), kForeignStablePrefix);
  // payload_base <= bytes.size() makes the cast exact.
  return header.value().payload_base >= bytes.size()
             ? bytes.size()
             : static_cast<std::size_t>(header.value().payload_base);
}

}  // namespace kiln
