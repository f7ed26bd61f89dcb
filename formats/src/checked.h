// Checked u64 arithmetic and a bounds-checked little-endian reader, shared by
// the readers. Every count, product, size and range read from a file goes
// through these, so none can wrap and no read can leave the buffer.
#ifndef KILN_FORMATS_SRC_CHECKED_H_
#define KILN_FORMATS_SRC_CHECKED_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace kiln::formats::internal {

[[nodiscard]] constexpr std::optional<std::uint64_t> Add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

[[nodiscard]] constexpr std::optional<std::uint64_t> Mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The number of elements of a shape: 1 for rank 0, 0 when any dimension is 0
// (however large the others, as Kiln rule D5 reads it), else the exact
// product, or nullopt when it exceeds 2^64-1.
[[nodiscard]] constexpr std::optional<std::uint64_t> ElementCount(
    std::span<const std::uint64_t> shape) {
  std::uint64_t n = 1;
  bool overflow = false;
  for (const std::uint64_t d : shape) {
    if (d == 0) return 0;
    if (__builtin_mul_overflow(n, d, &n)) overflow = true;
  }
  if (overflow) return std::nullopt;
  return n;
}

// Reads little-endian integers from a buffer; every read is bounds-checked
// and a failed read leaves the position unchanged.
class ByteReader {
 public:
  explicit ByteReader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}

  [[nodiscard]] std::uint64_t position() const { return pos_; }
  [[nodiscard]] std::uint64_t remaining() const { return bytes_.size() - pos_; }

  template <typename T>
  [[nodiscard]] bool Read(T* out) {
    if (remaining() < sizeof(T)) return false;
    std::uint64_t v = 0;
    for (std::size_t k = 0; k < sizeof(T); ++k) {
      v |= std::uint64_t{bytes_[pos_ + k]} << (8 * k);
    }
    *out = static_cast<T>(v);
    pos_ += sizeof(T);
    return true;
  }

  // The next n bytes, or nullopt when fewer remain.
  [[nodiscard]] std::optional<std::span<const std::uint8_t>> Take(std::uint64_t n) {
    if (n > remaining()) return std::nullopt;
    const auto at = static_cast<std::size_t>(pos_);
    pos_ += n;
    return bytes_.subspan(at, static_cast<std::size_t>(n));
  }

 private:
  std::span<const std::uint8_t> bytes_;
  std::uint64_t pos_ = 0;
};

[[nodiscard]] inline std::string_view AsText(std::span<const std::uint8_t> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

}  // namespace kiln::formats::internal

#endif  // KILN_FORMATS_SRC_CHECKED_H_
