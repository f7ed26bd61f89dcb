// Field offsets of the fixed-width records (docs/spec.md, "Header" and
// "Descriptor") and their decoded, not yet validated, contents.
#ifndef KILN_INTERNAL_LAYOUT_H_
#define KILN_INTERNAL_LAYOUT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "kiln/block.h"
#include "kiln/dtype.h"
#include "kiln/internal/primitives.h"
#include "kiln/status.h"

namespace kiln::internal {

using HeaderBytes = std::span<const std::uint8_t, kHeaderSize>;
using DescriptorBytes = std::span<const std::uint8_t, kDescriptorSize>;

// Header field offsets.
namespace hdr {
inline constexpr std::size_t kMagic = 0;
inline constexpr std::size_t kVersion = 4;
inline constexpr std::size_t kFlags = 5;
inline constexpr std::size_t kReserved0 = 6;  // 2 bytes
inline constexpr std::size_t kTensorCount = 8;
inline constexpr std::size_t kNameBytes = 12;
inline constexpr std::size_t kPayloadBytes = 16;
inline constexpr std::size_t kDirectoryBytes = 24;
inline constexpr std::size_t kReserved1 = 32;  // 32 bytes
inline constexpr std::uint8_t kVersion2 = 2;
}  // namespace hdr

// Descriptor field offsets, relative to the descriptor.
namespace desc {
inline constexpr std::size_t kDtype = 0;
inline constexpr std::size_t kRank = 2;
inline constexpr std::size_t kReserved0 = 3;  // 1 byte
inline constexpr std::size_t kNameOff = 4;
inline constexpr std::size_t kNameLen = 6;
inline constexpr std::size_t kLayoutOff = 8;
inline constexpr std::size_t kLayoutLen = 10;
inline constexpr std::size_t kBlockSize = 12;
inline constexpr std::size_t kQuantScheme = 16;
inline constexpr std::size_t kQuantAxis = 18;
inline constexpr std::size_t kGroupSize = 20;
inline constexpr std::size_t kScaleIndex = 24;
inline constexpr std::size_t kOuterIndex = 28;
inline constexpr std::size_t kByteOffset = 32;
inline constexpr std::size_t kByteLength = 40;
inline constexpr std::size_t kShape = 48;       // 8 x u64
inline constexpr std::size_t kReserved1 = 112;  // 16 bytes
}  // namespace desc

// A descriptor's fields as stored: every one of its 128 bytes. The parser
// decodes each descriptor once into this (DecodeDescriptor); the writer fills
// one from a request; the rules (CheckFields) read only this.
struct RawDescriptor {
  std::uint16_t dtype = 0;
  std::uint8_t rank = 0;
  std::uint8_t reserved0 = 0;  // byte 3
  std::uint16_t name_off = 0;
  std::uint16_t name_len = 0;
  std::uint16_t layout_off = 0;
  std::uint16_t layout_len = 0;
  std::uint32_t block_size = 0;
  std::uint16_t quant_scheme = 0;
  std::uint16_t quant_axis = 0;
  std::uint32_t group_size = 0;
  std::uint32_t scale_index = 0;
  std::uint32_t outer_index = 0;
  std::uint64_t byte_offset = 0;
  std::uint64_t byte_length = 0;
  std::array<std::uint64_t, kMaxRank> shape{};
  std::array<std::uint64_t, 2> reserved1{};  // bytes 112..127, little-endian words
};

// The element count of a descriptor that passed D2 (rank <= 8): base's
// ElementCount over its first `rank` dimensions.
[[nodiscard]] constexpr std::optional<std::uint64_t> ElementCount(
    const RawDescriptor& d, std::size_t* overflow_dim = nullptr) {
  return base::ElementCount(std::span<const std::uint64_t>(d.shape).first(d.rank), overflow_dim);
}

[[nodiscard]] inline RawDescriptor DecodeDescriptor(DescriptorBytes d) {
  RawDescriptor r;
  r.dtype = LoadLe<std::uint16_t, desc::kDtype>(d);
  r.rank = LoadLe<std::uint8_t, desc::kRank>(d);
  r.reserved0 = LoadLe<std::uint8_t, desc::kReserved0>(d);
  r.name_off = LoadLe<std::uint16_t, desc::kNameOff>(d);
  r.name_len = LoadLe<std::uint16_t, desc::kNameLen>(d);
  r.layout_off = LoadLe<std::uint16_t, desc::kLayoutOff>(d);
  r.layout_len = LoadLe<std::uint16_t, desc::kLayoutLen>(d);
  r.block_size = LoadLe<std::uint32_t, desc::kBlockSize>(d);
  r.quant_scheme = LoadLe<std::uint16_t, desc::kQuantScheme>(d);
  r.quant_axis = LoadLe<std::uint16_t, desc::kQuantAxis>(d);
  r.group_size = LoadLe<std::uint32_t, desc::kGroupSize>(d);
  r.scale_index = LoadLe<std::uint32_t, desc::kScaleIndex>(d);
  r.outer_index = LoadLe<std::uint32_t, desc::kOuterIndex>(d);
  r.byte_offset = LoadLe<std::uint64_t, desc::kByteOffset>(d);
  r.byte_length = LoadLe<std::uint64_t, desc::kByteLength>(d);
  r.shape[0] = LoadLe<std::uint64_t, desc::kShape + 0>(d);
  r.shape[1] = LoadLe<std::uint64_t, desc::kShape + 8>(d);
  r.shape[2] = LoadLe<std::uint64_t, desc::kShape + 16>(d);
  r.shape[3] = LoadLe<std::uint64_t, desc::kShape + 24>(d);
  r.shape[4] = LoadLe<std::uint64_t, desc::kShape + 32>(d);
  r.shape[5] = LoadLe<std::uint64_t, desc::kShape + 40>(d);
  r.shape[6] = LoadLe<std::uint64_t, desc::kShape + 48>(d);
  r.shape[7] = LoadLe<std::uint64_t, desc::kShape + 56>(d);
  r.reserved1[0] = LoadLe<std::uint64_t, desc::kReserved1>(d);
  r.reserved1[1] = LoadLe<std::uint64_t, desc::kReserved1 + 8>(d);
  return r;
}

// The inverse of DecodeDescriptor: the 128 bytes that decode to d.
[[nodiscard]] inline std::array<std::uint8_t, kDescriptorSize> EncodeDescriptor(
    const RawDescriptor& d) {
  std::array<std::uint8_t, kDescriptorSize> out{};
  const std::span<std::uint8_t, kDescriptorSize> b(out);
  StoreLe<desc::kDtype>(b, d.dtype);
  StoreLe<desc::kRank>(b, d.rank);
  StoreLe<desc::kReserved0>(b, d.reserved0);
  StoreLe<desc::kNameOff>(b, d.name_off);
  StoreLe<desc::kNameLen>(b, d.name_len);
  StoreLe<desc::kLayoutOff>(b, d.layout_off);
  StoreLe<desc::kLayoutLen>(b, d.layout_len);
  StoreLe<desc::kBlockSize>(b, d.block_size);
  StoreLe<desc::kQuantScheme>(b, d.quant_scheme);
  StoreLe<desc::kQuantAxis>(b, d.quant_axis);
  StoreLe<desc::kGroupSize>(b, d.group_size);
  StoreLe<desc::kScaleIndex>(b, d.scale_index);
  StoreLe<desc::kOuterIndex>(b, d.outer_index);
  StoreLe<desc::kByteOffset>(b, d.byte_offset);
  StoreLe<desc::kByteLength>(b, d.byte_length);
  StoreLe<desc::kShape + 0>(b, d.shape[0]);
  StoreLe<desc::kShape + 8>(b, d.shape[1]);
  StoreLe<desc::kShape + 16>(b, d.shape[2]);
  StoreLe<desc::kShape + 24>(b, d.shape[3]);
  StoreLe<desc::kShape + 32>(b, d.shape[4]);
  StoreLe<desc::kShape + 40>(b, d.shape[5]);
  StoreLe<desc::kShape + 48>(b, d.shape[6]);
  StoreLe<desc::kShape + 56>(b, d.shape[7]);
  StoreLe<desc::kReserved1>(b, d.reserved1[0]);
  StoreLe<desc::kReserved1 + 8>(b, d.reserved1[1]);
  return out;
}

// The 128 bytes of descriptor i. Precondition: the directory is present
// (rule H8 held), i < tensor_count.
[[nodiscard]] inline DescriptorBytes DescriptorAt(Bytes block, std::uint32_t i) {
  const std::size_t start = kHeaderSize + std::size_t{i} * kDescriptorSize;
  return block.subspan(start).first<kDescriptorSize>();
}

// Absolute offset of field `field` of descriptor i.
[[nodiscard]] constexpr std::uint64_t DescriptorFieldOffset(std::uint32_t i, std::size_t field) {
  return kHeaderSize + std::uint64_t{i} * kDescriptorSize + field;
}

// Absolute offset of the name heap.
[[nodiscard]] constexpr std::uint64_t HeapStart(std::uint32_t tensor_count) {
  return kHeaderSize + std::uint64_t{tensor_count} * kDescriptorSize;
}

}  // namespace kiln::internal

#endif  // KILN_INTERNAL_LAYOUT_H_
