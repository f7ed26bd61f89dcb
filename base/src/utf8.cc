#include "kiln/base/utf8.h"

namespace kiln::base {

// Ranges follow RFC 3629, section 4 (UTF8-octets grammar).
std::optional<Utf8Sequence> DecodeUtf8At(Bytes bytes, std::size_t i) {
  const std::uint8_t b0 = bytes[i];
  if (b0 < 0x80) return Utf8Sequence{b0, 1};
  std::size_t len = 0;
  std::uint8_t lo = 0x80;  // range of the second byte
  std::uint8_t hi = 0xBF;
  std::uint32_t cp = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
    cp = b0 & 0x1Fu;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    cp = b0 & 0x0Fu;
    if (b0 == 0xE0) lo = 0xA0;  // no overlong 3-byte forms
    if (b0 == 0xED) hi = 0x9F;  // no surrogates U+D800..U+DFFF
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    cp = b0 & 0x07u;
    if (b0 == 0xF0) lo = 0x90;  // no overlong 4-byte forms
    if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return std::nullopt;  // 0x80..0xC1 (stray continuation, overlong lead), 0xF5..0xFF
  }
  if (bytes.size() - i < len) return std::nullopt;
  if (bytes[i + 1] < lo || bytes[i + 1] > hi) return std::nullopt;
  for (std::size_t k = 1; k < len; ++k) {
    const std::uint8_t b = bytes[i + k];
    if (b < 0x80 || b > 0xBF) return std::nullopt;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  return Utf8Sequence{cp, len};
}

std::optional<std::size_t> FirstInvalidUtf8(Bytes bytes) {
  std::size_t i = 0;
  while (i < bytes.size()) {
    const std::optional<Utf8Sequence> s = DecodeUtf8At(bytes, i);
    if (!s) return i;
    i += s->length;
  }
  return std::nullopt;
}

}  // namespace kiln::base
