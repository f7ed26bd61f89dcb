// Checked u64 arithmetic, shared by the parser and the format readers. Every
// shape product, size and range is computed with these; none of them can
// wrap. Results are [[nodiscard]] optionals, so an overflow cannot be ignored.
#ifndef KILN_BASE_CHECKED_H_
#define KILN_BASE_CHECKED_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace kiln::base {

// A u64 offset or length as a size_t, where a check before the call has
// already bounded it by a buffer's size (rule H8 bounds every region of a
// block by the bytes present), so on a 64-bit target this is the identity and
// on a 32-bit one (WebAssembly) it is exact. A value the check did not bound
// saturates to SIZE_MAX, which no span can hold: subspan's bounds check
// refuses it instead of taking a truncated, in-bounds value.
[[nodiscard]] constexpr std::size_t ToSize(std::uint64_t v) {
  if constexpr (sizeof(std::size_t) < sizeof(std::uint64_t)) {
    if (v > std::uint64_t{static_cast<std::size_t>(-1)}) return static_cast<std::size_t>(-1);
  }
  return static_cast<std::size_t>(v);
}

[[nodiscard]] constexpr std::optional<std::uint64_t> CheckedAdd(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// *r = a * b; true when the product exceeds 2^64-1 (then *r is the product
// modulo 2^64, as __builtin_mul_overflow leaves it). Where both factors are
// below 2^32 the product cannot exceed 2^64-1: one plain multiply. MulU64
// takes this path on WebAssembly, whose compilers lower the checked 64-bit
// multiply to a call to compiler-rt's 128-bit __multi3 (4% of the module's
// validate() of 10,000 short names, in a profile, for a shape of one
// dimension); compiled and tested on every host (primitives_test).
[[nodiscard]] constexpr bool MulOverflowSplit(std::uint64_t a, std::uint64_t b, std::uint64_t* r) {
  if (((a | b) >> 32) == 0) {
    *r = a * b;
    return false;
  }
  return __builtin_mul_overflow(a, b, r);
}

// The checked multiply every shape product and size uses.
[[nodiscard]] constexpr bool MulOverflow(std::uint64_t a, std::uint64_t b, std::uint64_t* r) {
#if defined(__wasm__)
  return MulOverflowSplit(a, b, r);
#else
  return __builtin_mul_overflow(a, b, r);
#endif
}

[[nodiscard]] constexpr std::optional<std::uint64_t> CheckedMul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  if (MulOverflow(a, b, &r)) return std::nullopt;
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

// The number of elements of a shape: 1 for rank 0, 0 when any dimension is 0
// (however large the others, as Kiln rule D5 reads it), else the exact
// product, or nullopt when it exceeds 2^64-1; then *overflow_dim, if given,
// is the index of the dimension at which the product first did. The format
// core's rule D5 (CheckFields), the parser's Tensor and the format readers
// all count elements with it (the block scan's fast path multiplies in its
// own loop and leaves every decision to CheckFields).
[[nodiscard]] constexpr std::optional<std::uint64_t> ElementCount(
    std::span<const std::uint64_t> shape, std::size_t* overflow_dim = nullptr) {
  // One multiply per dimension and no branch on the overflow in the loop.
  std::uint64_t n = 1;
  bool overflow = false;
  for (const std::uint64_t d : shape) {
    if (d == 0) return 0;
    overflow |= MulOverflow(n, d, &n);
  }
  if (!overflow) return n;
  if (overflow_dim != nullptr) {  // the error path: find the dimension again
    n = 1;
    for (std::size_t k = 0; k < shape.size(); ++k) {
      if (MulOverflow(n, shape[k], &n)) {
        *overflow_dim = k;
        break;
      }
    }
  }
  return std::nullopt;
}

}  // namespace kiln::base

#endif  // KILN_BASE_CHECKED_H_
