// A test-only encoder for Kiln v2 blocks. It fills in every dependent field
// (flags, heap offsets, directory_bytes, aligned payload offsets,
// payload_bytes) so a test can start from a valid block and then break
// exactly one field with Put().
#ifndef KILN_TESTS_SUPPORT_BLOCK_BUILDER_H_
#define KILN_TESTS_SUPPORT_BLOCK_BUILDER_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::testing {

using Buffer = std::vector<std::uint8_t>;

struct TensorSpec {
  std::uint16_t dtype = 1;  // f32
  std::uint8_t rank = 1;
  std::array<std::uint64_t, 8> shape{2};
  std::string name;    // empty: unnamed
  std::string layout;  // empty: no layout name
  std::uint32_t block_size = 0;
  std::uint16_t scheme = 0;
  std::uint16_t axis = 0xFFFF;
  std::uint32_t group_size = 0;
  std::uint32_t scale_index = 0xFFFFFFFF;
  std::uint32_t outer_index = 0xFFFFFFFF;
  // Defaults: the dtype's exact size, and the next multiple of 64 after the
  // previous tensor.
  std::optional<std::uint64_t> byte_length;
  std::optional<std::uint64_t> byte_offset;
  std::uint8_t fill = 0xA5;  // payload bytes (never zero, so P2 sees a misplaced one)
};

struct BlockSpec {
  std::vector<TensorSpec> tensors;
  std::optional<std::uint8_t> flags;           // default: 0x02, plus 0x01 when named
  std::optional<std::uint64_t> payload_bytes;  // default: end of the last payload
};

// Encodes the block. Payload bytes are written only where they fall inside
// the buffer (a block whose ranges are absurd on purpose stays small).
[[nodiscard]] Buffer Build(const BlockSpec& spec);

// Writes v little-endian in `size` bytes at `at`.
void Put(Buffer& b, std::size_t at, std::uint64_t v, std::size_t size);

// Absolute offset of a field of descriptor i (field offsets as in the spec).
[[nodiscard]] constexpr std::size_t Desc(std::size_t i, std::size_t field) {
  return 64 + 128 * i + field;
}

// Descriptor field offsets.
inline constexpr std::size_t kDtype = 0, kRank = 2, kNameOff = 4, kNameLen = 6, kLayoutOff = 8,
                             kLayoutLen = 10, kBlockSize = 12, kScheme = 16, kAxis = 18,
                             kGroup = 20, kScale = 24, kOuter = 28, kOffset = 32, kLength = 40,
                             kShape = 48;

// The payload region's start in a built block.
[[nodiscard]] std::size_t PayloadBase(const Buffer& b);

}  // namespace kiln::testing

#endif  // KILN_TESTS_SUPPORT_BLOCK_BUILDER_H_
