// Parsing a Kiln v2 tensor directory held in the caller's buffer.
//
// A successful parse returns a Directory: a validated, zero-copy view. Every
// string and payload it hands out points into the caller's buffer, which must
// outlive the Directory. Nothing is allocated before the header's counts
// have been checked against the bytes present; scratch memory is at most 16
// bytes per tensor, in at most one allocation (none when the caller passes
// scratch).
//
// The buffer contract: the bytes must not change while a Directory (or a view
// it handed out) is used. Accessors re-read descriptors from the buffer, so
// after a change they may return wrong values, but never a view or a read
// outside the buffer: every view is clamped to the block and the rank to 8
// (tests/parser/buffer_contract_test.cc). A file mapped MAP_PRIVATE shows other
// processes' writes on Linux; a caller that cannot exclude them should copy
// the bytes, or re-parse before trusting a value.
#ifndef KILN_DIRECTORY_H_
#define KILN_DIRECTORY_H_

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>

#include "kiln/block.h"  // IWYU pragma: export
#include "kiln/dtype.h"
#include "kiln/status.h"

namespace kiln {

struct ParseOptions {
  Mode mode = Mode::kWhole;
  Limits limits;
  // Optional caller scratch. When it holds at least ScratchWords(count)
  // words, the parse allocates nothing at all.
  std::span<std::uint32_t> scratch;
};

struct Quantization {
  QuantScheme scheme = QuantScheme::kNone;
  std::uint16_t axis = kNoAxis;
  std::uint32_t group_size = 0;
  std::optional<std::uint32_t> scale_index;
  std::optional<std::uint32_t> outer_index;
};

// One tensor of a validated directory.
struct Tensor {
  std::uint32_t index = 0;
  std::string_view name;  // empty when the block has no names
  Dtype dtype = Dtype::kF32;
  std::uint8_t rank = 0;
  std::array<std::uint64_t, kMaxRank> shape{};  // slots >= rank are 0
  std::uint64_t element_count = 1;
  std::uint64_t byte_offset = 0;  // from the start of the payload region
  std::uint64_t byte_length = 0;
  std::span<const std::uint8_t> payload;  // view into the caller's buffer
  std::string_view layout;                // opaque layout name, else empty
  std::uint32_t block_size = 0;           // opaque only
  Quantization quant;

  [[nodiscard]] std::span<const std::uint64_t> dims() const {
    return std::span<const std::uint64_t>(shape).first(rank);
  }
};

class StreamValidator;
class RangeValidator;

// A validated block. Cheap to copy; refers to the caller's buffer (or, from
// a StreamValidator, to the header and directory region it kept).
class Directory {
 public:
  [[nodiscard]] const HeaderInfo& header() const { return header_; }
  [[nodiscard]] std::uint32_t tensor_count() const { return header_.tensor_count; }
  [[nodiscard]] std::uint64_t block_length() const { return header_.block_length; }
  // The block's bytes (a prefix of the parsed buffer). From a
  // StreamValidator or a RangeValidator: only the first payload_base bytes
  // (header, descriptors, name heap, padding); the payloads were not kept.
  [[nodiscard]] std::span<const std::uint8_t> block() const { return block_; }
  // False for a directory from a StreamValidator or a RangeValidator: then every
  // Tensor::payload is empty (its byte_offset and byte_length still say
  // where the bytes were in the stream).
  [[nodiscard]] bool has_payloads() const { return has_payloads_; }
  // The name heap's bytes.
  [[nodiscard]] std::span<const std::uint8_t> name_heap() const;

  // Tensor i. Throws std::out_of_range when i >= tensor_count().
  [[nodiscard]] Tensor tensor(std::uint32_t i) const;
  // The index of the tensor with this name, if any. O(tensor_count).
  [[nodiscard]] std::optional<std::uint32_t> Find(std::string_view name) const;

 private:
  friend Result<Directory> Parse(std::span<const std::uint8_t>, const ParseOptions&);
  friend class StreamValidator;
  friend class RangeValidator;
  class RangeValidator;
  Directory(HeaderInfo header, std::span<const std::uint8_t> block, bool has_payloads = true)
      : header_(header), block_(block), has_payloads_(has_payloads) {}

  HeaderInfo header_;
  std::span<const std::uint8_t> block_;
  bool has_payloads_ = true;
};

// Checks every rule, in the rule set's order, and returns the first failure
// or the validated directory.
[[nodiscard]] Result<Directory> Parse(std::span<const std::uint8_t> buffer,
                                      const ParseOptions& options = {});

// Checks rules H1..H7 on the start of a block (64 bytes are enough) and
// returns its header, block_length included: a streaming reader learns how
// many bytes to read before it calls Parse.
//
// block_length here is only what the header claims (up to 2^64-1 with the
// default limits): nothing has been checked against bytes that exist yet. A
// reader that allocates or reads block_length bytes must first bound it with
// limits.max_block_bytes (exceeding it is LIMIT H7).
[[nodiscard]] Result<HeaderInfo> ReadHeader(std::span<const std::uint8_t> first_bytes,
                                            const Limits& limits = {});

}  // namespace kiln

#endif  // KILN_DIRECTORY_H_
