#include "stream_input.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_format.h"
#include "progress.h"

namespace kiln::cli {
namespace {

// A blocking descriptor: a pipe opened with O_NONBLOCK would make read()
// fail with EAGAIN whenever the writer is slower than we are.
void MakeBlocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0 && (flags & O_NONBLOCK) != 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
}

// read() that retries on EINTR and waits (poll) while there is nothing to
// read, at most `timeout_ms` (-1: no limit) each time. Returns the count, 0
// at end of file, -1 with errno set on an error (ETIMEDOUT: the wait ran
// out).
ssize_t ReadSome(int fd, std::uint8_t* buf, std::size_t n, int timeout_ms) {
  while (true) {
    // Readable (data, end of file or an error) before read() can block.
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return -1;
    if (ready == 0) {
      errno = ETIMEDOUT;
      return -1;
    }
    const ssize_t got = ::read(fd, buf, n);
    if (got >= 0) return got;
    if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
    return -1;
  }
}

}  // namespace

StreamOutcome ReadStream(int fd, StreamValidator& v, const StreamSink& sink, std::ostream& err,
                         const std::string& label, std::uint64_t idle_timeout_seconds) {
  MakeBlocking(fd);
  // ParseIdleTimeoutFlag bounds the value to a day: it fits an int.
  const int timeout_ms =
      idle_timeout_seconds == 0
          ? -1
          : static_cast<int>(std::min<std::uint64_t>(idle_timeout_seconds, 86'400) * 1000);
  const auto buf = std::make_unique_for_overwrite<std::uint8_t[]>(kStreamReadBytes);
  std::optional<Progress> progress;
  StreamOutcome outcome;
  while (true) {
    const std::uint64_t want = v.bytes_to_checkpoint();
    if (want == 0) break;  // settled (prefix mode stops at the block's end)
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(want, kStreamReadBytes));
    const ssize_t got = ReadSome(fd, buf.get(), n, timeout_ms);
    if (got < 0 && errno == ETIMEDOUT) {
      outcome.io_error =
          absl::StrFormat("no data for %d s (--idle-timeout); gave up", idle_timeout_seconds);
      return outcome;
    }
    if (got < 0) {
      outcome.io_error = std::string("read: ") + std::strerror(errno);
      return outcome;
    }
    if (got == 0) {
      v.Finish();
      break;
    }
    const std::span<const std::uint8_t> chunk(buf.get(), static_cast<std::size_t>(got));
    if (v.Feed(chunk) == StreamStatus::kRejected) break;
    if (!sink(chunk.first(v.used()))) {
      outcome.io_error = "write failed";
      return outcome;
    }
    if (!progress && v.header()) progress.emplace(err, label, v.header()->block_length);
    if (progress) progress->Advance(v.used());
  }
  outcome.status = v.status();
  return outcome;
}

namespace {

// How long kiln (validate, ingest) waits for a named FIFO to get a writer. open() with
// O_NONBLOCK never blocks; a FIFO with no writer then reads as end of file,
// which would be a false FRAME verdict, and waiting without a bound is the
// hang an attacker who plants a FIFO wants. So kiln waits this long for a
// writer (or for its first byte), then gives up with an I/O error (exit 2).
// A writer that is connected may be slow: once one is there, kiln waits for
// data as it does on standard input.
constexpr int kFifoWriterWaitMs = 2000;

// Waits for a writer on a FIFO opened O_NONBLOCK. Returns the byte it read
// (at most one, so a hostile header still costs at most 64 bytes), an empty
// vector when a writer is connected but has sent nothing yet, or nullopt
// when none came in time (or reading failed: `*why`).
std::optional<std::vector<std::uint8_t>> AwaitWriter(int fd, std::string* why) {
  for (int waited = 0;;) {
    std::uint8_t byte = 0;
    const ssize_t n = ::read(fd, &byte, 1);
    if (n == 1) return std::vector<std::uint8_t>{byte};
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return std::vector<std::uint8_t>{};
    if (n < 0 && errno != EINTR) {
      *why = std::string("read: ") + std::strerror(errno);
      return std::nullopt;
    }
    // n == 0: no writer has the FIFO open (yet).
    if (waited >= kFifoWriterWaitMs) {
      *why = absl::StrFormat("a FIFO with no writer (waited %d ms)", kFifoWriterWaitMs);
      return std::nullopt;
    }
    ::usleep(20'000);  // poll() cannot wait for a writer to connect: it sees EOF
    waited += 20;
  }
}

}  // namespace

std::optional<std::vector<std::uint8_t>> PrepareStream(const base::InputFile& in,
                                                       std::string* why) {
  struct stat st {};
  if (::fstat(in.fd(), &st) != 0) {
    *why = std::string("cannot stat: ") + std::strerror(errno);
    return std::nullopt;
  }
  if (S_ISREG(st.st_mode) || S_ISSOCK(st.st_mode)) return std::vector<std::uint8_t>{};
  if (!S_ISFIFO(st.st_mode)) {
    *why = std::string("not a regular file (a ") + in.kind_name() + ")";
    return std::nullopt;
  }
  return AwaitWriter(in.fd(), why);
}

namespace {
bool g_stdin_closed = false;
bool g_stdout_closed = false;
}  // namespace

void GuardStandardDescriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // open() returns the lowest free descriptor: this one.
    const int opened = ::open(fd == 2 ? "/dev/full" : "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (fd == 0) g_stdin_closed = true;
    if (fd == 1) g_stdout_closed = true;
    if (opened != fd && opened >= 0) ::close(opened);
  }
}

bool StandardInputClosed() { return g_stdin_closed; }
bool StandardOutputClosed() { return g_stdout_closed; }

}  // namespace kiln::cli
