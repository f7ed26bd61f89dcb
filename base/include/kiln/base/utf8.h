// Well-formed UTF-8 as RFC 3629 defines it (Kiln rule N4), and decoding one
// sequence at a time (for escaping untrusted text).
#ifndef KILN_BASE_UTF8_H_
#define KILN_BASE_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "kiln/base/bytes.h"

namespace kiln::base {

// One well-formed sequence: its code point and its length in bytes (1..4).
struct Utf8Sequence {
  std::uint32_t code_point = 0;
  std::size_t length = 0;
};

// The well-formed sequence that starts at bytes[i] (i < bytes.size()), or
// nullopt when none does: an overlong form, a surrogate, a code point above
// U+10FFFF, a stray or missing continuation byte, a byte that never occurs in
// UTF-8, or a sequence cut by the end of `bytes`.
[[nodiscard]] std::optional<Utf8Sequence> DecodeUtf8At(Bytes bytes, std::size_t i);

// The offset of the first byte that starts an ill-formed sequence, or nullopt
// when all of `bytes` is well-formed.
[[nodiscard]] std::optional<std::size_t> FirstInvalidUtf8(Bytes bytes);

}  // namespace kiln::base

#endif  // KILN_BASE_UTF8_H_
