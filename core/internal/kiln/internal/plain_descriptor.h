// The fast path for the common descriptor: a fixed-width, unquantised,
// non-opaque tensor. PlainFieldsOk accepts a decoded descriptor only when
// every rule D1..D10, N1, N2, O1..O3, Q1..Q4 holds for it; anything else (an
// error, an opaque or quantised tensor, a shape it does not handle) goes to
// CheckFields, which reports the precise rule. It never rejects on its own,
// so it cannot change a verdict, only how fast a valid block is read
// (tests/core/fast_path_test.cc).
#ifndef KILN_INTERNAL_PLAIN_DESCRIPTOR_H_
#define KILN_INTERNAL_PLAIN_DESCRIPTOR_H_

#include <array>
#include <cstdint>

#include "kiln/base/checked.h"
#include "kiln/block.h"
#include "kiln/dtype.h"
#include "kiln/internal/layout.h"
#include "kiln/status.h"

namespace kiln::internal {

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

// Inline: it runs once per descriptor in the hot loop of Parse. Branches
// are few: the fields that must hold fixed values are compared together.
// kNamed is h.has_names(), fixed for the whole loop.
template <bool kNamed>
[[nodiscard]] inline bool PlainFieldsOk(const RawDescriptor& d, const HeaderInfo& h) {
  const std::uint8_t bits = d.dtype < kPlainBits.size() ? kPlainBits[d.dtype] : 0;  // D1, opaque
  if (bits == 0 || d.rank > kMaxRank) return false;                                 // D2
  if ((d.reserved0 | d.reserved1[0] | d.reserved1[1]) != 0) return false;           // D3
  // O1 (no layout, block_size 0), Q1, Q2 (scheme 0, no references).
  if (((d.layout_off ^ kNoHeapSlice) | d.layout_len | d.quant_scheme | (d.quant_axis ^ kNoAxis)) !=
          0 ||
      (d.block_size | d.group_size | ~d.scale_index | ~d.outer_index) != 0) {
    return false;
  }
  // D4 and the element count in one fixed loop over the eight slots. The
  // product is computed here rather than by base::ElementCount: calling it
  // after a D4 loop cost 5 to 20% more instructions per parse (callgrind,
  // g++ 12 -O3). This loop decides no rule: an overflow sends the
  // descriptor to CheckFields, which decides D5 with base::ElementCount.
  std::uint64_t count = 1;
  bool zero = false;
  for (std::size_t k = 0; k < kMaxRank; ++k) {
    if (k >= d.rank) {
      if (d.shape[k] != 0) return false;  // D4
    } else if (d.shape[k] == 0) {
      zero = true;
    } else if (base::MulOverflow(count, d.shape[k], &count)) {
      return false;  // D5 (or a zero dimension later: CheckFields decides)
    }
  }
  if (zero) count = 0;
  std::uint64_t size = 0;
  if (bits == 4) {
    size = count / 2 + (count & 1);
  } else if (base::MulOverflow(count, std::uint64_t{bits} / 8, &size)) {
    return false;  // D6
  }
  std::uint64_t end = 0;
  if (d.byte_length != size || __builtin_add_overflow(d.byte_offset, d.byte_length, &end) ||  // D7
      end > h.payload_bytes || (d.byte_offset & (kPayloadAlignment - 1)) != 0) {  // D8..D10
    return false;
  }
  if constexpr (kNamed) return d.name_len != 0 && d.name_off != kNoHeapSlice;  // N2
  return d.name_len == 0 && d.name_off == kNoHeapSlice;                        // N1
}

}  // namespace kiln::internal

#endif  // KILN_INTERNAL_PLAIN_DESCRIPTOR_H_
