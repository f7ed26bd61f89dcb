// Field offsets of the fixed-width records (docs/spec.md, "Header" and
// "Descriptor") and their decoded, not yet validated, contents.
#ifndef KILN_SRC_LAYOUT_H_
#define KILN_SRC_LAYOUT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "kiln/directory.h"
#include "primitives.h"

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

// A descriptor's fields as stored.
struct RawDescriptor {
  std::uint16_t dtype = 0;
  std::uint8_t rank = 0;
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
};

[[nodiscard]] inline RawDescriptor DecodeDescriptor(DescriptorBytes d) {
  RawDescriptor r;
  r.dtype = LoadLe<std::uint16_t, desc::kDtype>(d);
  r.rank = LoadLe<std::uint8_t, desc::kRank>(d);
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
  return r;
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

#endif  // KILN_SRC_LAYOUT_H_
