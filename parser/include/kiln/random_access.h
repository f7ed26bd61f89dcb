// Validating a block that can be read at any offset (a local file, an
// object in a store read with HTTP range requests, a browser File) by
// reading only the bytes the rules look at (docs/spec.md, section 5.2).
//
// No rule reads a byte a tensor covers: the verdict depends on the header,
// the directory region (the first payload_base bytes), the payload bytes no
// tensor covers (P2) and the file's size (H8). RangeValidator asks for those
// ranges, in that order, and its verdict is Parse's on the whole file
// (class, rule, offset, tensor and message) for every input, in either mode:
// the size it is given stands for the buffer's length in H8.
//
// It is a pull API, so it needs no callbacks and suits synchronous and
// asynchronous readers alike:
//
//   kiln::RangeValidator v(file_size);
//   while (const auto want = v.NextRange()) {
//     std::span<std::uint8_t> buf = v.Buffer();      // want->length bytes
//     if (!read_at(want->offset, buf)) { v.ReaderFailed("..."); break; }
//     v.Filled();                                    // or v.Provide(bytes)
//   }
//   switch (v.status()) { kComplete: v.directory(); kRejected: v.error();
//                         kReadFailed: v.read_error(); }
//
// or, with a synchronous reader, ValidateRanges(file_size, reader).
//
// The ranges asked for, in order:
//   1. the header: [0, min(size, 64)) (nothing when the size is 0);
//   2. if H1..H8 hold, the rest of the directory region, [64, payload_base),
//      in pieces of at most max_range bytes;
//   3. if every rule up to P1 holds, the uncovered payload ranges (the
//      gaps), in offset order, in reads of at most max_range bytes. Two gaps
//      whose distance (the covered bytes between them) is below merge_gap
//      are read in one request; the covered bytes it spans are read but never
//      looked at. With merge_gap 0 no requested byte is covered by a tensor.
// The first nonzero gap byte ends the reading (P2). Every request lies
// inside [0, min(size, block_length)); they are disjoint and increasing.
//
// The number of requests is at most
//   1 + ceil((payload_base - 64) / max_range) + F + ceil(R / (max_range - merge_gap))
// where F is the number of runs of gaps closer than merge_gap (at most the
// number of gaps, at most tensor_count + 1) and R the bytes the payload
// requests span (at most payload_bytes, and below the uncovered bytes plus
// tensor_count * merge_gap). merge_gap is clamped to max_range / 2.
//
// Memory: the header and directory region are kept (the returned Directory
// refers to them), grown only as bytes arrive; a payload request needs a
// buffer of at most max_range bytes, reused; the gap list is 16 bytes per
// gap (at most tensor_count + 1), as for StreamValidator.
#ifndef KILN_RANDOM_ACCESS_H_
#define KILN_RANDOM_ACCESS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kiln/base/function_ref.h"
#include "kiln/directory.h"
#include "kiln/policy.h"
#include "kiln/status.h"

namespace kiln {

struct RangeOptions {
  Mode mode = Mode::kWhole;
  Limits limits;  // as for Parse
  // Two wanted payload ranges closer than this are read in one request
  // (0: never; no covered byte is then requested). Clamped to max_range / 2.
  std::uint64_t merge_gap = kDefaultMergeGap;
  // The longest single request (clamped to [1, SIZE_MAX]).
  std::uint64_t max_range = kDefaultMaxRange;
};

// A range of the file: `length` bytes from `offset`.
struct ByteRange {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;

  friend bool operator==(const ByteRange&, const ByteRange&) = default;
};

enum class RangeStatus : std::uint8_t {
  kNeedRange,   // read NextRange() and hand its bytes over
  kRejected,    // a verdict: error() says which rule failed
  kComplete,    // a verdict: every rule held; directory()
  kReadFailed,  // no verdict: the reader failed, or (32-bit targets only) the
                // directory region cannot be held in memory (read_error())
};

class RangeValidator {
 public:
  // file_size: the whole file's length, the buffer length of H8.
  explicit RangeValidator(std::uint64_t file_size, RangeOptions options = {});
  // Not copyable (a Directory refers to the kept bytes); moving keeps them.
  RangeValidator(const RangeValidator&) = delete;
  RangeValidator& operator=(const RangeValidator&) = delete;
  RangeValidator(RangeValidator&&) noexcept = default;
  RangeValidator& operator=(RangeValidator&&) noexcept = default;

  // The range wanted now, or nullopt once the status is not kNeedRange.
  // Its length is between 1 and max_range (the header: up to 64).
  [[nodiscard]] std::optional<ByteRange> NextRange() const;
  // Storage for NextRange()'s bytes, exactly its length (empty when no range
  // is wanted). Valid until the next call of Filled, Provide or
  // ReaderFailed.
  [[nodiscard]] std::span<std::uint8_t> Buffer();
  // Buffer() now holds the wanted bytes: checks them, plans the next range.
  RangeStatus Filled();
  // The wanted bytes, copied in, then Filled(). Bytes of another length
  // than NextRange()'s are a read failure (kReadFailed), not a verdict.
  RangeStatus Provide(std::span<const std::uint8_t> bytes);
  // The reader could not deliver NextRange(): kReadFailed with this message.
  RangeStatus ReaderFailed(std::string message);

  [[nodiscard]] RangeStatus status() const { return status_; }
  // Precondition: status() == kRejected (else std::bad_optional_access).
  [[nodiscard]] const Error& error() const { return error_.value(); }
  // Why the reading stopped; empty unless status() == kReadFailed.
  [[nodiscard]] const std::string& read_error() const { return read_error_; }
  // The header fields, once H1..H8 held.
  [[nodiscard]] const std::optional<HeaderInfo>& header() const { return header_; }
  // The validated directory (Directory::has_payloads() is false).
  // Precondition: status() == kComplete (else std::bad_optional_access).
  [[nodiscard]] const Directory& directory() const { return directory_.value(); }
  // The file's first bytes as read and kept: after a verdict, the bytes it
  // was decided on but for P2's gaps (the header, or the whole directory
  // region once H1..H8 held); empty after a read failure. The block map
  // draws a rejection from them (map::Describe), reading nothing again.
  [[nodiscard]] std::span<const std::uint8_t> kept() const { return kept_; }

  [[nodiscard]] std::uint64_t file_size() const { return size_; }
  // Requests answered so far, and their bytes.
  [[nodiscard]] std::uint64_t reads() const { return reads_; }
  [[nodiscard]] std::uint64_t bytes_read() const { return bytes_read_; }
  // The effective options (merge_gap and max_range after clamping).
  [[nodiscard]] const RangeOptions& options() const { return options_; }

 private:
  enum class Phase : std::uint8_t { kHeader, kDirectory, kGaps, kDone };

  void OnHeader();
  void OnDirectory();
  void CheckGaps(std::span<const std::uint8_t> bytes);
  void PlanDirectory();
  void PlanGaps();
  void Reject(Error e);
  void Complete();

  RangeOptions options_;
  std::uint64_t size_;
  Phase phase_ = Phase::kHeader;
  RangeStatus status_ = RangeStatus::kNeedRange;
  std::optional<ByteRange> want_;
  std::vector<std::uint8_t> kept_;    // the block's first payload_base bytes
  std::vector<std::uint8_t> buffer_;  // a payload request's bytes
  std::optional<HeaderInfo> header_;
  std::optional<Error> error_;
  std::string read_error_;
  std::optional<Directory> directory_;
  // The uncovered payload ranges [from, to), relative to payload_base, in
  // offset order; the first one not yet fully read, and how far it was.
  struct Gap {
    std::uint64_t from;
    std::uint64_t to;
  };
  std::vector<Gap> gaps_;
  std::size_t next_gap_ = 0;
  std::uint64_t gap_done_ = 0;  // payload offset up to which gaps_[next_gap_] was read
  std::uint64_t reads_ = 0;
  std::uint64_t bytes_read_ = 0;
};

// Reads length bytes at offset into `out` (exactly out.size() bytes).
// Returns false on an I/O failure, with a message in *why.
using RangeReader =
    base::FunctionRef<bool(std::uint64_t offset, std::span<std::uint8_t> out, std::string* why)>;

// Runs a RangeValidator over `read` until it settles; the result holds the
// verdict (status(), error(), directory()) or the read failure.
[[nodiscard]] RangeValidator ValidateRanges(std::uint64_t file_size, RangeReader read,
                                            const RangeOptions& options = {});

}  // namespace kiln

#endif  // KILN_RANDOM_ACCESS_H_
