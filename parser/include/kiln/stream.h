// Validating a block as its bytes arrive (an upload, a pipe, a socket).
//
// The caller feeds chunks of any size, in order. The validator keeps the
// header and the directory region (the first payload_base bytes) and
// O(tensor_count) words of scratch; it never stores a payload byte. The
// verdict comes from the parser's own checks (the same code as Parse).
//
// The verdict contract (docs/spec.md, section 5.1):
//
// - For a stream that delivers exactly the block its header declares, the
//   verdict is the verdict of Parse on the same bytes (class, rule, offset,
//   tensor and message), however the stream is cut into chunks.
// - A rejection is reported as soon as the bytes seen decide it, and it is
//   the rejection Parse gives for every completion of those bytes to the
//   declared length. The points where a verdict can be decided are: each
//   header byte up to byte 64 (H1, H2, H4, H5 as soon as their bytes are in;
//   H6, H7 and H9 at byte 64); payload_base for every directory rule (L1,
//   D1..Q4, N3..N5, Q5..Q7 and P1); each uncovered payload byte for P2, as
//   it arrives; the end of the stream for truncation.
// - A stream that ends early (Finish() before block_length bytes) is the
//   rejection Parse gives for the bytes seen: FRAME H8, or H1..H3 for fewer
//   than 64 bytes.
// - Whole mode: a byte after block_length is FRAME H8 at block_length (the
//   message cannot count the trailing bytes: the validator stops there).
//   Prefix mode: the block ends the validation; used() says how many bytes
//   of the last chunk belonged to it, so blocks can be validated back to
//   back with a fresh validator each.
//
// Limits are enforced at byte 64, before anything past the header is kept:
// the directory region it will keep is at most 128 * max_tensors +
// max_name_bytes + 127 bytes, and it grows only as bytes arrive (a header
// claiming a huge directory costs nothing until the bytes exist).
#ifndef KILN_STREAM_H_
#define KILN_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kiln/directory.h"
#include "kiln/status.h"

namespace kiln {

struct StreamOptions {
  Mode mode = Mode::kWhole;
  Limits limits;  // as for Parse: the format's maxima unless lowered
};

enum class StreamStatus : std::uint8_t {
  kNeedMore,  // no verdict yet: feed more bytes, or Finish() at the end
  kRejected,  // error() says why; nothing more is taken
  kComplete,  // block_length bytes arrived and every rule held
};

class StreamValidator {
 public:
  explicit StreamValidator(StreamOptions options = {});
  // Not copyable (a Directory refers to the kept bytes); moving keeps them.
  StreamValidator(const StreamValidator&) = delete;
  StreamValidator& operator=(const StreamValidator&) = delete;
  StreamValidator(StreamValidator&&) noexcept = default;
  StreamValidator& operator=(StreamValidator&&) noexcept = default;

  // The next bytes of the stream. Takes bytes up to the one that decides a
  // verdict, and no more (used() says how many). After kComplete in whole
  // mode, any further byte turns the verdict into FRAME H8; otherwise a
  // settled verdict does not change and no bytes are taken.
  StreamStatus Feed(std::span<const std::uint8_t> chunk);
  // The stream has ended: kNeedMore becomes the rejection Parse gives for
  // the bytes seen (truncation). Returns the final status.
  StreamStatus Finish();

  [[nodiscard]] StreamStatus status() const { return status_; }
  // Precondition: status() == kRejected (else std::bad_optional_access).
  [[nodiscard]] const Error& error() const { return error_.value(); }
  // The header fields, once H1..H7 and H9 held (byte 64).
  [[nodiscard]] const std::optional<HeaderInfo>& header() const { return header_; }
  // The validated directory: tensor names, shapes, offsets; its payloads
  // are empty (Directory::has_payloads() is false). Precondition:
  // status() == kComplete (else std::bad_optional_access).
  [[nodiscard]] const Directory& directory() const { return directory_.value(); }

  // Bytes taken from the stream so far; after a rejection, up to and
  // including the byte that decided it (byte 64 for a header rule decided
  // there, payload_base for a directory rule, offset + 1 for P2).
  [[nodiscard]] std::uint64_t consumed() const { return consumed_; }
  // How many bytes of the last Feed()'s chunk were taken.
  [[nodiscard]] std::size_t used() const { return used_; }
  // How many more bytes can be fed before the next point where a verdict
  // may be decided (0 once settled or finished; 1 after kComplete in whole
  // mode, until Finish(): one more byte would be FRAME H8). A caller that reads at most this many
  // bytes at a time stops reading at the deciding byte; in the payload,
  // reading more is harmless.
  [[nodiscard]] std::uint64_t bytes_to_checkpoint() const;

 private:
  enum class Phase : std::uint8_t { kHeader, kDirectory, kPayload, kDone };

  void TakeHeader(std::span<const std::uint8_t>& chunk);
  // The header rejection decided by the bytes kept plus `more` (fewer than
  // 64 in all), if any.
  [[nodiscard]] std::optional<Error> EarlyHeaderError(std::span<const std::uint8_t> more) const;
  // Keeps the first n bytes of chunk and drops them from it.
  void Append(std::span<const std::uint8_t>& chunk, std::size_t n);
  void TakeDirectory(std::span<const std::uint8_t>& chunk);
  void TakePayload(std::span<const std::uint8_t>& chunk);
  void OnHeader();
  void OnDirectory();
  void EnterPayload();
  void Reject(Error e);

  StreamOptions options_;
  Phase phase_ = Phase::kHeader;
  StreamStatus status_ = StreamStatus::kNeedMore;
  bool finished_ = false;  // Finish() was called
  std::uint64_t consumed_ = 0;
  std::size_t used_ = 0;
  std::vector<std::uint8_t> kept_;  // the block's first payload_base bytes
  std::optional<HeaderInfo> header_;
  std::optional<Error> error_;
  std::optional<Directory> directory_;
  // The uncovered payload ranges [from, to), relative to payload_base, in
  // offset order, and the first one not yet fully seen.
  struct Gap {
    std::uint64_t from;
    std::uint64_t to;
  };
  std::vector<Gap> gaps_;
  std::size_t next_gap_ = 0;
};

}  // namespace kiln

#endif  // KILN_STREAM_H_
