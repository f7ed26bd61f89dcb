// Field offsets of the fixed-width records (docs/spec.md, "Header" and
// "Descriptor") and their decoded, not yet validated, contents.
#ifndef KILN_SRC_LAYOUT_H_
#define KILN_SRC_LAYOUT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "bytes.h"
#include "kiln/directory.h"

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

[[nodiscard]] RawDescriptor DecodeDescriptor(DescriptorBytes d);

// The 128 bytes of descriptor i. Precondition: the directory is present
// (rule H8 held), i < tensor_count.
[[nodiscard]] DescriptorBytes DescriptorAt(Bytes block, std::uint32_t i);

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
