// Checked u64 arithmetic. Every shape product, size and range in the parser
// is computed with these; none of them can wrap. Results are [[nodiscard]]
// optionals, so an overflow cannot be ignored.
#ifndef KILN_SRC_CHECKED_H_
#define KILN_SRC_CHECKED_H_

#include <cstdint>
#include <optional>

namespace kiln::internal {

[[nodiscard]] constexpr std::optional<std::uint64_t> CheckedAdd(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

[[nodiscard]] constexpr std::optional<std::uint64_t> CheckedMul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// ceil(a / b) for b > 0, without computing a + b - 1.
[[nodiscard]] constexpr std::uint64_t CeilDiv(std::uint64_t a, std::uint64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

// a rounded up to a multiple of 64, or nullopt when that exceeds 2^64-1.
[[nodiscard]] constexpr std::optional<std::uint64_t> AlignUp64(std::uint64_t a) {
  const std::optional<std::uint64_t> r = CheckedAdd(a, 63);
  if (!r) return std::nullopt;
  return *r & ~std::uint64_t{63};
}

}  // namespace kiln::internal

#endif  // KILN_SRC_CHECKED_H_
