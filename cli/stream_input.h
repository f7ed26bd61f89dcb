// Reading a block from a file descriptor (standard input, a pipe) through
// kiln::StreamValidator: `kiln validate -` and `kiln ingest`.
#ifndef KILN_CLI_STREAM_INPUT_H_
#define KILN_CLI_STREAM_INPUT_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "kiln/base/input_file.h"
#include "kiln/stream.h"

namespace kiln::cli {

// The largest read: big reads keep the per-byte cost near that of `cat`.
inline constexpr std::size_t kStreamReadBytes = std::size_t{1} << 20;

// Receives the bytes the validator took, in order; false on an I/O error.
using StreamSink = std::function<bool(std::span<const std::uint8_t> bytes)>;

// What reading a block from a stream came to, the one shape `kiln
// validate` and `kiln ingest` report from: a verdict (the Error the
// validator holds; none: the block is valid), or, apart from any verdict,
// the I/O failure that prevented one.
struct StreamOutcome {
  std::optional<Error> error;  // the verdict when io_error is empty; nullopt: valid
  std::string io_error;        // nonempty: reading (or the sink) failed, no verdict
};

// The outcome of a validator that has settled (status() is not kNeedMore).
[[nodiscard]] StreamOutcome SettledOutcome(const StreamValidator& v);

// Feeds `fd` to `v` until a verdict (the outcome's error when it is a
// rejection), reading at most up to the validator's
// next checkpoint (so a rejected header costs at most 64 bytes of the
// input, a rejected directory payload_base bytes) and at most
// kStreamReadBytes at a time. In whole mode, reads until end of file (a
// byte after the block is FRAME H8). Clears O_NONBLOCK on `fd` (and polls
// if the descriptor is non-blocking anyway). Shows progress on `err` when
// it is a terminal and the block is large. A writer that sends nothing for
// `idle_timeout_seconds` (0: no limit) is an I/O error ("no data for 60 s
// (--idle-timeout)"), so a stalled writer cannot keep kiln waiting.
[[nodiscard]] StreamOutcome ReadStream(int fd, StreamValidator& v, const StreamSink& sink,
                                       std::ostream& err, const std::string& label,
                                       std::uint64_t idle_timeout_seconds);

// Called first thing in main: a descriptor 0, 1 or 2 the caller left closed
// is opened (standard input and output on /dev/null, standard error on
// /dev/full), so no file kiln opens (an output's temporary file) can become
// "standard input" or "standard output" by accident. Standard input that was
// closed is remembered: reading it is an I/O error; so is standard output: a
// report written to it is a report that cannot be written (FinishReport, and
// main's Finish for the commands that print without it). On a closed
// standard error every diagnostic fails to write (/dev/full), so a command
// that has something to say there (convert's list of the metadata it cannot
// carry) fails as on any stderr it cannot write, exit 2, nothing committed.
void GuardStandardDescriptors();
[[nodiscard]] bool StandardInputClosed();
[[nodiscard]] bool StandardOutputClosed();

// Makes an input opened with base::InputFile (O_NONBLOCK) ready to be read
// as a stream: a regular file or a socket as it is; a FIFO once it has a
// writer, waiting at most 2 s for one (a planted FIFO cannot hang kiln).
// Returns the bytes it had to read to learn that (at most one: feed them
// first), or nullopt with *why for anything else (a device, a directory, a
// FIFO nobody writes to).
[[nodiscard]] std::optional<std::vector<std::uint8_t>> PrepareStream(const base::InputFile& in,
                                                                     std::string* why);

}  // namespace kiln::cli

#endif  // KILN_CLI_STREAM_INPUT_H_
