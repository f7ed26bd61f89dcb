// The fast path for the common descriptor: a fixed-width, unquantised,
// non-opaque tensor. PlainDescriptorOk accepts a descriptor only when every
// rule D1..D10, N1, N2, O1..O3, Q1..Q4 holds for it; anything else (an error,
// an opaque or quantised tensor, a shape it does not handle) goes to
// CheckDescriptor, which reports the precise rule. It never rejects on its
// own, so it cannot change a verdict, only how fast a valid block is read.
#ifndef KILN_SRC_PLAIN_DESCRIPTOR_H_
#define KILN_SRC_PLAIN_DESCRIPTOR_H_

#include <array>
#include <cstdint>

#include "kiln/directory.h"
#include "layout.h"

namespace kiln::internal {

// What the directory-wide checks need from a descriptor that passed.
struct DescriptorFacts {
  std::uint64_t byte_offset = 0;
  std::uint64_t byte_length = 0;
  std::uint16_t name_off = 0;
  std::uint16_t name_len = 0;
  bool has_layout = false;
  bool quantised = false;
};

// Bits per element by dtype code for the fixed-width dtypes with a code
// below 32, else 0; generated from dtypes.inc.
inline constexpr std::array<std::uint8_t, 32> kPlainBits = [] {
  std::array<std::uint8_t, 32> t{};
#define KILN_DTYPE(e, code, name, bits, scale) \
  if ((code) < 32 && (bits) != 0) t[code] = static_cast<std::uint8_t>(bits);
#include "kiln/dtypes.inc"
#undef KILN_DTYPE
  return t;
}();

namespace plain {

// Bytes 8..31 of a plain descriptor, as three little-endian words:
// layout_off 0xFFFF, layout_len 0, block_size 0 (O1); quant_scheme 0,
// quant_axis 0xFFFF, group_size 0, scale_index and outer_index 0xFFFFFFFF
// (Q1, Q2).
constexpr std::uint64_t kWord8 = 0x000000000000FFFFull;
constexpr std::uint64_t kWord16 = 0x00000000FFFF0000ull;
constexpr std::uint64_t kWord24 = 0xFFFFFFFFFFFFFFFFull;

}  // namespace plain

// Inline: it runs once per descriptor in the hot loop of Parse.
[[nodiscard]] inline bool PlainDescriptorOk(DescriptorBytes d, const HeaderInfo& h,
                                            DescriptorFacts* f) {
  const auto code = LoadLe<std::uint16_t, desc::kDtype>(d);
  const std::uint8_t bits = code < kPlainBits.size() ? kPlainBits[code] : 0;  // D1, not opaque
  const auto rank = LoadLe<std::uint8_t, desc::kRank>(d);
  if (bits == 0 || rank > kMaxRank) return false;   // D2
  if ((LoadLe<std::uint8_t, desc::kReserved0>(d) |  // D3
       LoadLe<std::uint64_t, desc::kReserved1>(d) |
       LoadLe<std::uint64_t, desc::kReserved1 + 8>(d)) != 0) {
    return false;
  }
  if (LoadLe<std::uint64_t, 8>(d) != plain::kWord8 ||  // O1, Q1, Q2
      LoadLe<std::uint64_t, 16>(d) != plain::kWord16 ||
      LoadLe<std::uint64_t, 24>(d) != plain::kWord24) {
    return false;
  }
  const std::array<std::uint64_t, kMaxRank> shape = {
      LoadLe<std::uint64_t, desc::kShape + 0>(d),  LoadLe<std::uint64_t, desc::kShape + 8>(d),
      LoadLe<std::uint64_t, desc::kShape + 16>(d), LoadLe<std::uint64_t, desc::kShape + 24>(d),
      LoadLe<std::uint64_t, desc::kShape + 32>(d), LoadLe<std::uint64_t, desc::kShape + 40>(d),
      LoadLe<std::uint64_t, desc::kShape + 48>(d), LoadLe<std::uint64_t, desc::kShape + 56>(d)};
  std::uint64_t count = 1;
  bool zero = false;
  for (std::size_t k = 0; k < kMaxRank; ++k) {
    if (k >= rank) {
      if (shape[k] != 0) return false;  // D4
    } else if (shape[k] == 0) {
      zero = true;
    } else if (__builtin_mul_overflow(count, shape[k], &count)) {
      return false;  // D5 (or a zero dimension later: CheckDescriptor decides)
    }
  }
  if (zero) count = 0;
  std::uint64_t size = 0;
  if (bits == 4) {
    size = count / 2 + (count & 1);
  } else if (__builtin_mul_overflow(count, std::uint64_t{bits} / 8, &size)) {
    return false;  // D6
  }
  const auto offset = LoadLe<std::uint64_t, desc::kByteOffset>(d);
  const auto length = LoadLe<std::uint64_t, desc::kByteLength>(d);
  std::uint64_t end = 0;
  if (length != size || __builtin_add_overflow(offset, length, &end) ||    // D7, D8
      end > h.payload_bytes || (offset & (kPayloadAlignment - 1)) != 0) {  // D9, D10
    return false;
  }
  const auto name_off = LoadLe<std::uint16_t, desc::kNameOff>(d);
  const auto name_len = LoadLe<std::uint16_t, desc::kNameLen>(d);
  if (h.has_names() ? (name_len == 0 || name_off == kNoHeapSlice)     // N2
                    : (name_len != 0 || name_off != kNoHeapSlice)) {  // N1
    return false;
  }
  *f = DescriptorFacts{offset, length, name_off, name_len, false, false};
  return true;
}

// The facts of a descriptor that CheckDescriptor accepted.
[[nodiscard]] DescriptorFacts FactsOf(DescriptorBytes d);

}  // namespace kiln::internal

#endif  // KILN_SRC_PLAIN_DESCRIPTOR_H_
