// Reading a block from a file descriptor (standard input, a pipe) through
// kiln::StreamValidator: `kiln validate -` and `kiln ingest`.
#ifndef KILN_CLI_STREAM_INPUT_H_
#define KILN_CLI_STREAM_INPUT_H_

#include <cstdint>
#include <functional>
#include <ostream>
#include <span>
#include <string>

#include "kiln/stream.h"

namespace kiln::cli {

// The largest read: big reads keep the per-byte cost near that of `cat`.
inline constexpr std::size_t kStreamReadBytes = std::size_t{1} << 20;

// Receives the bytes the validator took, in order; false on an I/O error.
using StreamSink = std::function<bool(std::span<const std::uint8_t> bytes)>;

struct StreamOutcome {
  StreamStatus status = StreamStatus::kNeedMore;  // kComplete or kRejected unless io_error
  std::string io_error;                           // reading (or the sink) failed
};

// Feeds `fd` to `v` until a verdict, reading at most up to the validator's
// next checkpoint (so a rejected header costs at most 64 bytes of the
// input, a rejected directory payload_base bytes) and at most
// kStreamReadBytes at a time. In whole mode, reads until end of file (a
// byte after the block is FRAME H8). Clears O_NONBLOCK on `fd` (and polls
// if the descriptor is non-blocking anyway). Shows progress on `err` when
// it is a terminal and the block is large.
[[nodiscard]] StreamOutcome ReadStream(int fd, StreamValidator& v, const StreamSink& sink,
                                       std::ostream& err, const std::string& label);

}  // namespace kiln::cli

#endif  // KILN_CLI_STREAM_INPUT_H_
