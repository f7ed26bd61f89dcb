// Bounded reads, shared by the parser and the format readers. Everything
// that touches untrusted bytes goes through ByteReader (a cursor that refuses
// to read past the end and leaves itself unchanged on failure) or through
// LoadLe on a fixed-size span (whose bounds are checked at compile time).
#ifndef KILN_BASE_BYTES_H_
#define KILN_BASE_BYTES_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

namespace kiln::base {

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

// The mirror of LoadLe: stores v little-endian at compile-time offset Off
// of a fixed-extent span, bounds checked at compile time.
template <std::size_t Off, typename T, std::size_t N>
inline void StoreLe(std::span<std::uint8_t, N> bytes, T v) {
  static_assert(N != std::dynamic_extent, "StoreLe needs a fixed-size span");
  static_assert(Off + sizeof(T) <= N, "field past the end of its record");
  static_assert(std::is_unsigned_v<T>);
  if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) {
    v = ByteSwap(v);
  }
  std::memcpy(bytes.data() + Off, &v, sizeof(T));
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
  [[nodiscard]] bool ReadU16Le(std::uint16_t* out) { return ReadLe(out); }
  [[nodiscard]] bool ReadU32Le(std::uint32_t* out) { return ReadLe(out); }
  [[nodiscard]] bool ReadU64Le(std::uint64_t* out) { return ReadLe(out); }
  [[nodiscard]] bool ReadBytes(std::size_t n, Bytes* out) {
    if (remaining() < n) return false;
    *out = bytes_.subspan(pos_, n);
    pos_ += n;
    return true;
  }
  // A u64 length from a file: fails (no change) when it exceeds what remains,
  // so it never has to be narrowed before the check.
  [[nodiscard]] bool ReadBytes64(std::uint64_t n, Bytes* out) {
    if (n > remaining()) return false;
    return ReadBytes(static_cast<std::size_t>(n), out);
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
  [[nodiscard]] bool Skip64(std::uint64_t n) {
    return n <= remaining() && Skip(static_cast<std::size_t>(n));
  }

 private:
  template <typename T>
  [[nodiscard]] bool ReadLe(T* out) {
    const auto b = ReadFixed<sizeof(T)>();
    if (!b) return false;
    *out = LoadLe<T, 0>(*b);
    return true;
  }

  Bytes bytes_;
  std::size_t pos_ = 0;
};

// The index of the first nonzero byte, or nullopt when all are zero.
[[nodiscard]] std::optional<std::size_t> FirstNonzero(Bytes bytes);

// Bytes seen as text (no copy, no check).
[[nodiscard]] inline std::string_view AsText(Bytes b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

}  // namespace kiln::base

#endif  // KILN_BASE_BYTES_H_
