#include "block_builder.h"

#include <algorithm>

namespace kiln::testing {
namespace {

std::uint64_t Bits(std::uint16_t dtype) {
  switch (dtype) {
    case 2:
    case 3:
    case 9:
    case 17:
    case 18:
    case 19:
    case 20:
    case 24:
      return 8;
    case 4:
    case 5:
    case 10:
    case 16:
      return 16;
    case 1:
    case 6:
    case 12:
      return 32;
    case 7:
    case 11:
    case 13:
    case 14:
      return 64;
    case 15:
      return 128;
    case 21:
    case 22:
    case 23:
      return 4;
    default:
      return 8;  // opaque and invalid codes: one byte per element
  }
}

// Saturating arithmetic: the builder must not wrap either (the integer
// sanitizer preset checks test code too), and a saturated value is only ever
// an absurd field a test asked for.
constexpr std::uint64_t kMax = ~std::uint64_t{0};
std::uint64_t SatAdd(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? kMax : r;
}
std::uint64_t SatMul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? kMax : r;
}
std::uint64_t Align64(std::uint64_t a) { return SatAdd(a, 63) & ~std::uint64_t{63}; }

// The size the dtype needs (opaque: 18 bytes per block, as ggml's q4_0).
std::uint64_t DefaultLength(const TensorSpec& t) {
  std::uint64_t count = 1;
  for (std::size_t k = 0; k < t.rank && k < 8; ++k) count = SatMul(count, t.shape[k]);
  for (std::size_t k = 0; k < t.rank && k < 8; ++k) {
    if (t.shape[k] == 0) count = 0;
  }
  if (t.block_size != 0) return SatMul(count / t.block_size, 18);
  const std::uint64_t bits = Bits(t.dtype);
  if (bits == 4) return count / 2 + count % 2;
  return SatMul(count, bits / 8);
}

}  // namespace

void Put(Buffer& b, std::size_t at, std::uint64_t v, std::size_t size) {
  for (std::size_t k = 0; k < size; ++k) b.at(at + k) = static_cast<std::uint8_t>(v >> (8 * k));
}

std::size_t PayloadBase(const Buffer& b) {
  std::uint64_t dir = 0;
  for (std::size_t k = 0; k < 8; ++k) dir |= std::uint64_t{b.at(24 + k)} << (8 * k);
  return static_cast<std::size_t>(Align64(SatAdd(64, dir)));
}

Buffer Build(const BlockSpec& spec) {
  const std::size_t n = spec.tensors.size();
  std::string heap;
  std::vector<std::uint16_t> name_off(n, 0xFFFF), layout_off(n, 0xFFFF);
  bool named = false;
  for (std::size_t i = 0; i < n; ++i) {
    if (spec.tensors[i].name.empty()) continue;
    named = true;
    name_off[i] = static_cast<std::uint16_t>(heap.size());
    heap += spec.tensors[i].name;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (spec.tensors[i].layout.empty()) continue;
    layout_off[i] = static_cast<std::uint16_t>(heap.size());
    heap += spec.tensors[i].layout;
  }
  const std::uint64_t dir = 128 * n + heap.size();
  const std::size_t base = static_cast<std::size_t>(Align64(64 + dir));

  std::vector<std::uint64_t> offsets(n), lengths(n);
  std::uint64_t cursor = 0, end = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const TensorSpec& t = spec.tensors[i];
    lengths[i] = t.byte_length.value_or(DefaultLength(t));
    offsets[i] = t.byte_offset.value_or(Align64(cursor));
    cursor = SatAdd(offsets[i], lengths[i]);
    end = std::max(end, cursor);
  }
  const std::uint64_t payload_bytes = spec.payload_bytes.value_or(end);

  // Up to 256 MiB of payload region is materialised; an absurd one (a test
  // of a huge payload_bytes) is cut there, and such a block fails H8.
  Buffer b(base + static_cast<std::size_t>(std::min<std::uint64_t>(payload_bytes, 1 << 28)), 0);
  std::copy_n("KLNT", 4, b.begin());
  b[4] = 2;
  b[5] = spec.flags.value_or(static_cast<std::uint8_t>(named ? 0x03 : 0x02));
  Put(b, 8, n, 4);
  Put(b, 12, heap.size(), 4);
  Put(b, 16, payload_bytes, 8);
  Put(b, 24, dir, 8);
  for (std::size_t i = 0; i < n; ++i) {
    const TensorSpec& t = spec.tensors[i];
    Put(b, Desc(i, kDtype), t.dtype, 2);
    Put(b, Desc(i, kRank), t.rank, 1);
    Put(b, Desc(i, kNameOff), name_off[i], 2);
    Put(b, Desc(i, kNameLen), t.name.size(), 2);
    Put(b, Desc(i, kLayoutOff), layout_off[i], 2);
    Put(b, Desc(i, kLayoutLen), t.layout.size(), 2);
    Put(b, Desc(i, kBlockSize), t.block_size, 4);
    Put(b, Desc(i, kScheme), t.scheme, 2);
    Put(b, Desc(i, kAxis), t.axis, 2);
    Put(b, Desc(i, kGroup), t.group_size, 4);
    Put(b, Desc(i, kScale), t.scale_index, 4);
    Put(b, Desc(i, kOuter), t.outer_index, 4);
    Put(b, Desc(i, kOffset), offsets[i], 8);
    Put(b, Desc(i, kLength), lengths[i], 8);
    for (std::size_t k = 0; k < 8; ++k) Put(b, Desc(i, kShape + 8 * k), t.shape[k], 8);
    for (std::uint64_t k = 0; k < lengths[i] && offsets[i] < b.size(); ++k) {
      const std::uint64_t at = base + offsets[i] + k;
      if (at >= b.size()) break;
      b[static_cast<std::size_t>(at)] = t.fill;
    }
  }
  std::copy(heap.begin(), heap.end(), b.begin() + static_cast<std::ptrdiff_t>(64 + 128 * n));
  return b;
}

}  // namespace kiln::testing
