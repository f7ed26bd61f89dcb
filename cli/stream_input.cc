#include "stream_input.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include "progress.h"

namespace kiln::cli {
namespace {

// A blocking descriptor: a pipe opened with O_NONBLOCK would make read()
// fail with EAGAIN whenever the writer is slower than we are.
void MakeBlocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0 && (flags & O_NONBLOCK) != 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
}

// read() that retries on EINTR and waits (poll) on EAGAIN. Returns the
// count, 0 at end of file, -1 with errno set on an error.
ssize_t ReadSome(int fd, std::uint8_t* buf, std::size_t n) {
  while (true) {
    const ssize_t got = ::read(fd, buf, n);
    if (got >= 0) return got;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, -1) < 0 && errno != EINTR) return -1;
  }
}

}  // namespace

StreamOutcome ReadStream(int fd, StreamValidator& v, const StreamSink& sink, std::ostream& err,
                         const std::string& label) {
  MakeBlocking(fd);
  const auto buf = std::make_unique_for_overwrite<std::uint8_t[]>(kStreamReadBytes);
  std::optional<Progress> progress;
  StreamOutcome outcome;
  while (true) {
    const std::uint64_t want = v.bytes_to_checkpoint();
    if (want == 0) break;  // settled (prefix mode stops at the block's end)
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(want, kStreamReadBytes));
    const ssize_t got = ReadSome(fd, buf.get(), n);
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

}  // namespace kiln::cli
