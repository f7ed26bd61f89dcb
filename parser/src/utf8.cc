#include "utf8.h"

#include "kiln/utf8.h"

#include <cstdint>

namespace kiln::internal {
namespace {

// The length of the well-formed sequence that starts at bytes[i], or 0 when
// none does. Ranges follow RFC 3629, section 4 (UTF8-octets grammar).
std::size_t SequenceLength(Bytes bytes, std::size_t i) {
  const std::uint8_t b0 = bytes[i];
  if (b0 < 0x80) return 1;
  std::size_t len = 0;
  std::uint8_t lo = 0x80;  // range of the second byte
  std::uint8_t hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;  // no overlong 3-byte forms
    if (b0 == 0xED) hi = 0x9F;  // no surrogates U+D800..U+DFFF
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;  // no overlong 4-byte forms
    if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;  // 0x80..0xC1 (stray continuation, overlong lead), 0xF5..0xFF
  }
  if (bytes.size() - i < len) return 0;
  if (bytes[i + 1] < lo || bytes[i + 1] > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if (bytes[i + k] < 0x80 || bytes[i + k] > 0xBF) return 0;
  }
  return len;
}

}  // namespace

std::optional<std::size_t> FirstInvalidUtf8(Bytes bytes) {
  std::size_t i = 0;
  while (i < bytes.size()) {
    const std::size_t len = SequenceLength(bytes, i);
    if (len == 0) return i;
    i += len;
  }
  return std::nullopt;
}

}  // namespace kiln::internal

namespace kiln {

bool IsWellFormedUtf8(std::string_view text) {
  const internal::Bytes bytes(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  return !internal::FirstInvalidUtf8(bytes).has_value();
}

}  // namespace kiln
