// Decimal digits to a u64, with checked arithmetic: the one decimal parse of
// the text readers (the safetensors JSON header, the NumPy header dict) and
// of the command's numeric flags.
#ifndef KILN_BASE_DECIMAL_H_
#define KILN_BASE_DECIMAL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "kiln/base/checked.h"

namespace kiln::base {

struct Decimal {
  std::uint64_t value = 0;  // of text[begin, end)
  std::size_t end = 0;      // after the last digit read; on overflow, the digit that overflowed
  bool overflow = false;    // the digits exceed 2^64-1
};

// Reads the digits '0'..'9' of `text` from `begin` on (none when text[begin]
// is not a digit: end == begin). Signs, spaces and leading zeros are the
// caller's to judge.
[[nodiscard]] constexpr Decimal ReadDecimal(std::string_view text, std::size_t begin) {
  Decimal d{.value = 0, .end = begin, .overflow = false};
  while (d.end < text.size() && text[d.end] >= '0' && text[d.end] <= '9') {
    const auto digit = static_cast<std::uint64_t>(text[d.end] - '0');
    const std::optional<std::uint64_t> tens = CheckedMul(d.value, 10);
    const std::optional<std::uint64_t> next = tens ? CheckedAdd(*tens, digit) : std::nullopt;
    if (!next) {
      d.overflow = true;
      return d;
    }
    d.value = *next;
    ++d.end;
  }
  return d;
}

// The whole of `text` as a decimal u64 (at least one digit, nothing else),
// or nullopt.
[[nodiscard]] constexpr std::optional<std::uint64_t> ParseDecimal(std::string_view text) {
  const Decimal d = ReadDecimal(text, 0);
  if (d.overflow || d.end == 0 || d.end != text.size()) return std::nullopt;
  return d.value;
}

}  // namespace kiln::base

#endif  // KILN_BASE_DECIMAL_H_
