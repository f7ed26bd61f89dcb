// Bounded reads. Everything in the parser that touches the caller's bytes
// goes through ByteReader (a cursor that refuses to read past the end and
// leaves itself unchanged on failure) or through LoadLe on a fixed-size span
// (whose bounds are checked at compile time).
#ifndef KILN_SRC_BYTES_H_
#define KILN_SRC_BYTES_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <type_traits>

namespace kiln::internal {

using Bytes = std::span<const std::uint8_t>;

// Reverses the bytes of an unsigned integer (for big-endian hosts).
template <typename T>
[[nodiscard]] constexpr T ByteSwap(T v) {
  T r = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    r = static_cast<T>((r << 8) | (v & 0xFF));
    v = static_cast<T>(v >> 8);
  }
  return r;
}

// Little-endian load of an unsigned T at compile-time offset Off of a
// fixed-extent span. The static_assert makes an out-of-bounds field a build
// error instead of a read past the end. One load on a little-endian host.
template <typename T, std::size_t Off, std::size_t N>
[[nodiscard]] inline T LoadLe(std::span<const std::uint8_t, N> bytes) {
  static_assert(N != std::dynamic_extent, "LoadLe needs a fixed-size span");
  static_assert(Off + sizeof(T) <= N, "field past the end of its record");
  static_assert(std::is_unsigned_v<T>);
  T v = 0;
  std::memcpy(&v, bytes.data() + Off, sizeof(T));
  if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) {
    v = ByteSwap(v);
  }
  return v;
}

// A read cursor over a byte span.
class ByteReader {
 public:
  explicit ByteReader(Bytes bytes) : bytes_(bytes) {}

  [[nodiscard]] std::size_t remaining() const { return bytes_.size() - pos_; }
  [[nodiscard]] std::size_t position() const { return pos_; }

  // Each Read either succeeds and advances, or fails and changes nothing.
  [[nodiscard]] bool ReadU8(std::uint8_t* out) {
    if (remaining() < 1) return false;
    *out = bytes_[pos_++];
    return true;
  }
  [[nodiscard]] bool ReadBytes(std::size_t n, Bytes* out) {
    if (remaining() < n) return false;
    *out = bytes_.subspan(pos_, n);
    pos_ += n;
    return true;
  }
  // Reads exactly N bytes as a fixed-extent span, for LoadLe; nullopt (and
  // no change) when fewer remain.
  template <std::size_t N>
  [[nodiscard]] std::optional<std::span<const std::uint8_t, N>> ReadFixed() {
    Bytes b;
    if (!ReadBytes(N, &b)) return std::nullopt;
    return b.first<N>();
  }
  [[nodiscard]] bool Skip(std::size_t n) {
    if (remaining() < n) return false;
    pos_ += n;
    return true;
  }

 private:
  Bytes bytes_;
  std::size_t pos_ = 0;
};

// The index of the first nonzero byte, or nullopt when all are zero.
[[nodiscard]] std::optional<std::size_t> FirstNonzero(Bytes bytes);

}  // namespace kiln::internal

#endif  // KILN_SRC_BYTES_H_
