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
// The writer is its own library, kiln::writer (link it as well as
// kiln::parser); kiln/kiln.h does not include this header.
#ifndef KILN_WRITER_H_
#define KILN_WRITER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "kiln/directory.h"
#include "kiln/dtype.h"
#include "kiln/status.h"

namespace kiln {

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

// An I/O failure while writing a file: not a rule of the format, so not an
// Error (which always names a class and a rule of the block).
struct WriteError {
  std::string path;      // the file being written
  int error_number = 0;  // the errno of the failed call
  std::string message;   // what failed and the system's message:
                         // "write: No space left on device"

  // "cannot write PATH: MESSAGE"
  [[nodiscard]] std::string ToString() const;
};

// The outcome of BlockWriter::WriteToFile: the block length, or a rule the
// block breaks (format_error(): the request was wrong, nothing is written),
// or an I/O failure (io_error(): the file system refused).
class [[nodiscard]] WriteFileResult {
 public:
  // cppcheck-suppress noExplicitConstructor
  WriteFileResult(std::uint64_t length) : v_(length) {}  // NOLINT(google-explicit-constructor)
  // cppcheck-suppress noExplicitConstructor
  WriteFileResult(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)
  // cppcheck-suppress noExplicitConstructor
  WriteFileResult(WriteError error) : v_(std::move(error)) {}  // NOLINT

  [[nodiscard]] bool ok() const { return v_.index() == 0; }
  // Precondition: ok(). Throws std::bad_variant_access otherwise.
  [[nodiscard]] std::uint64_t value() const { return std::get<0>(v_); }
  // The rule the block breaks, or null.
  [[nodiscard]] const Error* format_error() const { return std::get_if<1>(&v_); }
  // The I/O failure, or null.
  [[nodiscard]] const WriteError* io_error() const { return std::get_if<2>(&v_); }
  // Either error as text; "ok" when ok().
  [[nodiscard]] std::string ToString() const;

 private:
  std::variant<std::uint64_t, Error, WriteError> v_;
};

// Receives the bytes of a block in order. Returns false on an I/O error.
using ByteSink = std::function<bool(std::span<const std::uint8_t> bytes)>;

class BlockWriter {
 public:
  // Adds a tensor and returns its index. Checks D1..D10, N1, N2, N4, N5,
  // O1..O3, Q1..Q4 and the format's limits now; Q5..Q7 (which may refer to
  // tensors not added yet) when the block is written.
  [[nodiscard]] Result<std::uint32_t> Add(const TensorRequest& request, Payload payload);

  // Every tensor of a parsed directory, with payload views into its buffer.
  [[nodiscard]] static Result<BlockWriter> From(const Directory& directory);

  [[nodiscard]] std::uint32_t tensor_count() const {
    return static_cast<std::uint32_t>(tensors_.size());
  }

  // The block's length, after the checks that need every tensor.
  [[nodiscard]] Result<std::uint64_t> BlockLength() const;

  // Writes the block to `sink`: the directory, then each payload. A stream
  // payload is read once, in chunks of at most 1 MiB.
  [[nodiscard]] Result<std::uint64_t> WriteTo(const ByteSink& sink) const;
  // The whole block in memory; it is parsed once more before it is returned.
  [[nodiscard]] Result<std::vector<std::uint8_t>> WriteToMemory() const;
  // Writes to a file and returns the block length. The block goes to a
  // fresh temporary file in the target's directory (O_CREAT | O_EXCL), is
  // fsync'd and renamed over `path`: a symlink or hard link at `path` is
  // replaced, never written through, and on any failure nothing is left
  // behind and `path` keeps its earlier contents. I/O failures are
  // io_error() (with errno); rules the block breaks are format_error().
  [[nodiscard]] WriteFileResult WriteToFile(const std::string& path) const;

 private:
  struct Entry {
    std::vector<std::uint8_t> descriptor;  // 128 bytes; layout_off set when written
    std::string layout;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    Payload payload;
  };

  [[nodiscard]] Result<std::vector<std::uint8_t>> Directory() const;

  std::vector<Entry> tensors_;
  std::string names_;  // the tensor-name part of the heap
  std::unordered_map<std::string, std::uint32_t> name_index_;
  std::optional<std::uint32_t> first_unnamed_;
  std::uint64_t payload_end_ = 0;  // end of the last nonzero payload
};

}  // namespace kiln

#endif  // KILN_WRITER_H_
