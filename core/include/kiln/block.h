// The Kiln v2 block as the format defines it: its constants, the header
// fields, the caller's limits and parse mode, the quantisation schemes and
// the scratch a check needs. Shared by the parser, the stream validator and
// the writer (kiln/directory.h includes it).
#ifndef KILN_BLOCK_H_
#define KILN_BLOCK_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace kiln {

inline constexpr std::size_t kHeaderSize = 64;
inline constexpr std::size_t kDescriptorSize = 128;
inline constexpr std::size_t kPayloadAlignment = 64;
inline constexpr std::size_t kMaxRank = 8;
inline constexpr std::uint8_t kFlagNames = 0x01;
inline constexpr std::uint8_t kFlagLittleEndian = 0x02;
inline constexpr std::uint16_t kNoHeapSlice = 0xFFFF;
inline constexpr std::uint16_t kNoAxis = 0xFFFF;
inline constexpr std::uint32_t kNoTensor = 0xFFFFFFFF;

// Limits a caller may set; exceeding one is LIMIT H7.
//
// The defaults are the format's own maxima, so that a parse with default
// options gives exactly the rule set's verdict for every input. They do not
// leave memory unbounded: counts are checked against the bytes present before
// anything is allocated, and scratch is at most 16 bytes per 128-byte
// descriptor. A service that wants a policy (say, at most 100,000 tensors or
// 16 GiB per upload) lowers them.
struct Limits {
  std::uint64_t max_tensors = std::numeric_limits<std::uint32_t>::max();
  std::uint64_t max_name_bytes = std::numeric_limits<std::uint32_t>::max();
  std::uint64_t max_block_bytes = std::numeric_limits<std::uint64_t>::max();
};

enum class Mode : std::uint8_t {
  // The buffer is the whole block (a file, an upload): trailing bytes are
  // FRAME H8.
  kWhole,
  // The block starts the buffer and may be followed by other data;
  // Directory::block_length() tells where it ends.
  kPrefix,
};

// The header fields after rules H1..H7 hold.
struct HeaderInfo {
  std::uint8_t flags = 0;
  std::uint32_t tensor_count = 0;
  std::uint32_t name_bytes = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t directory_bytes = 0;
  std::uint64_t payload_base = 0;  // (64 + directory_bytes + 63) & ~63
  std::uint64_t block_length = 0;  // payload_base + payload_bytes

  [[nodiscard]] bool has_names() const { return (flags & kFlagNames) != 0; }
};

enum class QuantScheme : std::uint16_t {
  kNone = 0,
  kPerAxis = 1,  // one scale per index along the axis
  kGrouped = 2,  // one scale per group of group_size indices along the axis
};

// The number of u32 words of scratch a parse of tensor_count tensors may use:
// the name table of rule N5, a power of two of at least twice the tensor
// count (so at most 16 bytes per tensor), which also holds the offset order
// of rule P1.
[[nodiscard]] constexpr std::size_t ScratchWords(std::uint32_t tensor_count) {
  return std::bit_ceil(std::size_t{2} * (tensor_count == 0 ? 1 : tensor_count));
}

}  // namespace kiln

#endif  // KILN_BLOCK_H_
