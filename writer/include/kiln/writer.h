// Writing canonical Kiln v2 blocks.
//
// A BlockWriter collects tensors, checks every rule as it goes (a request
// that would break one fails with the class and rule id the parser would
// report), and writes the canonical block: the name heap in descriptor order,
// zero-length payloads at offset 0, every other payload at the next multiple
// of 64 after the previous one, in descriptor order, and payload_bytes ending
// at the last payload. A block it writes always parses.
//
// Payloads are given in memory (a view the caller keeps alive until the
// block is written) or as a stream read once, in order, while writing, so a
// file is written without holding every payload in memory.
//
// The writer plans, then writes: Add encodes each descriptor once and
// checks it; Plan() seals the block once (header, directory, heap, the
// rules that need every tensor) into a BlockPlan, which writes itself to a
// sink, to memory or to a file without laying anything out again. Each
// step has one result shape: Add and Plan return Result<T> (a verdict: the
// Error names the class and rule the request breaks); the plan's writes
// return Result<T, WriteError> (only I/O can fail, never a rule).
//
// The writer is its own library, kiln::writer (link it as well as
// kiln::parser); kiln/kiln.h does not include this header.
#ifndef KILN_WRITER_H_
#define KILN_WRITER_H_

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kiln/directory.h"
#include "kiln/dtype.h"
#include "kiln/status.h"

namespace kiln {

namespace internal {
struct RawDescriptor;  // the format core's decoded descriptor
}  // namespace internal

// Fills `out` completely with the next bytes of a payload, or returns false.
using PayloadReader = std::function<bool(std::span<std::uint8_t> out)>;

// The bytes of one tensor.
class Payload {
 public:
  // A view into memory the caller keeps alive until the block is written.
  static Payload Bytes(std::span<const std::uint8_t> bytes);
  // `size` bytes, produced by `read` in order when the block is written.
  static Payload Stream(std::uint64_t size, PayloadReader read);

  [[nodiscard]] std::uint64_t size() const { return size_; }

 private:
  friend class BlockWriter;
  friend class BlockPlan;
  std::uint64_t size_ = 0;
  std::span<const std::uint8_t> bytes_;
  PayloadReader read_;
};

// One tensor to add. An empty name means unnamed (a block's tensors are all
// named or all unnamed: rules N1, N2).
struct TensorRequest {
  std::string name;
  Dtype dtype = Dtype::kF32;
  std::vector<std::uint64_t> shape;  // rank = shape.size(), at most 8
  // Opaque dtype only: the layout name and elements per block.
  std::string layout;
  std::uint32_t block_size = 0;
  // Quantisation (rules Q1..Q7); the scale and outer tensors may be added
  // before or after this one.
  QuantScheme scheme = QuantScheme::kNone;
  std::uint16_t axis = kNoAxis;
  std::uint32_t group_size = 0;
  std::optional<std::uint32_t> scale_index;
  std::optional<std::uint32_t> outer_index;
};

// An I/O failure while writing a block: not a rule of the format, so not an
// Error (which always names a class and a rule of the block).
struct WriteError {
  // Where the writing stopped.
  enum class Step : std::uint8_t {
    kCreate,        // the temporary file could not be created
    kWrite,         // the file or the sink refused bytes
    kPayload,       // a stream payload ended before its size
    kBeforeCommit,  // the caller's before_commit step failed (nothing committed)
    kCommit,        // fsync or rename failed (nothing committed)
  };
  std::string path;      // the file being written; empty for a sink
  int error_number = 0;  // the errno of the failed call, 0 when none
  std::string message;   // what failed and the system's message:
                         // "write: No space left on device"
  Step step = Step::kWrite;

  // "cannot write PATH: MESSAGE" ("cannot write the block: MESSAGE" for a sink)
  [[nodiscard]] std::string ToString() const;
};

// Receives the bytes of a block in order. Returns false on an I/O error.
using ByteSink = std::function<bool(std::span<const std::uint8_t> bytes)>;

class BlockWriter;

// A sealed block: the header, the directory and the name heap laid out,
// every rule checked (the cross-tensor ones once), the length known. It
// writes itself to any sink, as often as asked, without laying anything
// out again; the payloads are read from the BlockWriter, which must
// outlive the plan and not change while it is used. Only I/O can fail now.
class BlockPlan {
 public:
  [[nodiscard]] std::uint64_t block_length() const { return head_.size() + payload_bytes_; }
  // The first payload_base bytes: header, descriptors, heap, zero padding.
  [[nodiscard]] std::span<const std::uint8_t> head() const { return head_; }

  // Writes the block to `sink`: the head, then each payload. A stream
  // payload is read once, in chunks of at most 1 MiB. Returns the length.
  [[nodiscard]] Result<std::uint64_t, WriteError> WriteTo(const ByteSink& sink) const;
  // The whole block in memory.
  [[nodiscard]] Result<std::vector<std::uint8_t>, WriteError> WriteToMemory() const;
  // Writes to a file and returns the block length. The block goes to a
  // fresh temporary file in the target's directory (O_CREAT | O_EXCL), is
  // fsync'd and renamed over `path`: a symlink or hard link at `path` is
  // replaced, never written through, and on any failure nothing is left
  // behind and `path` keeps its earlier contents. `before_commit` (may be
  // empty) runs once every byte is written and before the rename; false
  // commits nothing (Step::kBeforeCommit).
  [[nodiscard]] Result<std::uint64_t, WriteError> WriteToFile(
      const std::string& path, const std::function<bool()>& before_commit = {}) const;

 private:
  friend class BlockWriter;
  BlockPlan(const BlockWriter* writer, std::vector<std::uint8_t> head, std::uint64_t payload_bytes)
      : writer_(writer), head_(std::move(head)), payload_bytes_(payload_bytes) {}

  const BlockWriter* writer_;
  std::vector<std::uint8_t> head_;
  std::uint64_t payload_bytes_;
};

class BlockWriter {
 public:
  BlockWriter();
  ~BlockWriter();
  BlockWriter(const BlockWriter&);
  BlockWriter(BlockWriter&&) noexcept;
  BlockWriter& operator=(const BlockWriter&);
  BlockWriter& operator=(BlockWriter&&) noexcept;

  // Adds a tensor and returns its index. Checks D1..D10, N1, N2, N4, N5,
  // O1..O3, Q1..Q4 and the format's limits now; Q5..Q7 (which may refer to
  // tensors not added yet) when the block is sealed (Plan).
  [[nodiscard]] Result<std::uint32_t> Add(const TensorRequest& request, Payload payload);

  // Every tensor of a parsed directory, with payload views into its buffer.
  // A directory without payloads (a StreamValidator's) fails at its first
  // tensor with payload bytes, with Add's error.
  [[nodiscard]] static Result<BlockWriter> From(const Directory& directory);

  [[nodiscard]] std::uint32_t tensor_count() const {
    return static_cast<std::uint32_t>(tensors_.size());
  }

  // Seals the block: lays out the header, the directory and the heap and
  // checks the rules that need every tensor (Q5..Q7, the heap's size), once.
  // A rule the block breaks is the Error; nothing is written. The plan is
  // the one way to write: its length, then any number of writes. Add
  // nothing while it is used.
  [[nodiscard]] Result<BlockPlan> Plan() const;

 private:
  friend class BlockPlan;
  // The steps of Add (writer.cc).
  [[nodiscard]] std::optional<Error> CheckSizes(const TensorRequest& r, std::uint32_t i) const;
  [[nodiscard]] Result<std::uint64_t> Place(std::uint64_t length, std::uint32_t i) const;
  [[nodiscard]] std::optional<Error> CheckNames(const TensorRequest& r, std::uint32_t i) const;
  void Store(const TensorRequest& r, internal::RawDescriptor d, Payload payload);

  struct Entry {
    std::array<std::uint8_t, kDescriptorSize> descriptor{};  // encoded once, at Add
    std::string layout;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    Payload payload;
  };

  std::vector<Entry> tensors_;
  // Each tensor's decoded descriptor, as Add checked it (layout_off is a
  // placeholder until Plan): what the cross-tensor checks read.
  std::vector<internal::RawDescriptor> decoded_;
  std::string names_;  // the tensor-name part of the heap
  std::unordered_map<std::string, std::uint32_t> name_index_;
  std::optional<std::uint32_t> first_unnamed_;
  std::uint64_t payload_end_ = 0;  // end of the last nonzero payload
};

}  // namespace kiln

#endif  // KILN_WRITER_H_
