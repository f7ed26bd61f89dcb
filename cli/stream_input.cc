#include "stream_input.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "kiln/policy.h"
#include "progress.h"

namespace kiln::cli {
namespace {

// A blocking descriptor: a pipe opened with O_NONBLOCK would make read()
// fail with EAGAIN whenever the writer is slower than we are.
void MakeBlocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0 && (flags & O_NONBLOCK) != 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
}

// Gives up on a writer that has gone silent, without a syscall per read:
// the read loop blocks in read() as `cat` does (a poll() before each read
// doubled the syscalls and ran at 55-60% of cat's speed with a producer
// that writes 8 KiB at a time). A watchdog thread watches a counter that
// the loop bumps around each read; when one read has been blocked for the
// timeout, it marks the stream timed out and interrupts the read with
// kWakeSignal (a handler without SA_RESTART, so read() returns EINTR),
// again every 100 ms until the loop notices (a signal that lands just
// before read() is entered is not lost). No signal is sent while data
// flows, so nothing else the loop does (the ingest's writes, the progress
// line) is ever interrupted.
class IdleWatchdog {
 public:
  explicit IdleWatchdog(std::uint64_t timeout_seconds) {
    if (timeout_seconds == 0) return;
    // ParseIdleTimeoutFlag bounds the value to a day.
    timeout_ = std::chrono::seconds(std::min(timeout_seconds, kMaxIdleTimeoutSeconds));
    struct sigaction act {};
    act.sa_handler = [](int) {};
    sigemptyset(&act.sa_mask);
    act.sa_flags = 0;  // no SA_RESTART: the blocked read() returns EINTR
    if (::sigaction(WakeSignal(), &act, &old_action_) != 0) return;
    reader_ = ::pthread_self();
    thread_ = std::thread([this] { Watch(); });
  }
  IdleWatchdog(const IdleWatchdog&) = delete;
  IdleWatchdog& operator=(const IdleWatchdog&) = delete;
  ~IdleWatchdog() {
    if (!thread_.joinable()) return;
    {
      const std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_one();
    thread_.join();
    ::sigaction(WakeSignal(), &old_action_, nullptr);
  }

  // Around each read(): the watchdog measures only time spent waiting.
  void EnterRead() {
    reads_.fetch_add(1, std::memory_order_relaxed);
    in_read_.store(true, std::memory_order_release);
  }
  void LeaveRead() { in_read_.store(false, std::memory_order_release); }
  [[nodiscard]] bool timed_out() const { return timed_out_.load(std::memory_order_acquire); }

 private:
  static int WakeSignal() { return SIGRTMIN; }

  void Watch() {
    // Process-directed signals (SIGTERM and the rest) go to the reader,
    // whose handlers clean up; this thread takes none of them.
    sigset_t all;
    sigfillset(&all);
    ::pthread_sigmask(SIG_BLOCK, &all, nullptr);
    constexpr auto kTick = std::chrono::milliseconds(100);
    std::uint64_t seen = reads_.load(std::memory_order_relaxed);
    auto since = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mu_);
    // wait_for with a predicate: true once done_ is set (the destructor).
    while (!cv_.wait_for(lock, kTick, [this] { return done_; })) {
      const std::uint64_t now_reads = reads_.load(std::memory_order_relaxed);
      const auto now = std::chrono::steady_clock::now();
      if (now_reads != seen || !in_read_.load(std::memory_order_acquire)) {
        seen = now_reads;
        since = now;
        continue;
      }
      if (now - since < timeout_) continue;
      timed_out_.store(true, std::memory_order_release);
      ::pthread_kill(reader_, WakeSignal());  // again each tick until the loop stops
    }
  }

  std::chrono::steady_clock::duration timeout_{};
  struct sigaction old_action_ {};
  pthread_t reader_{};
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;  // guarded by mu_
  std::atomic<std::uint64_t> reads_{0};
  std::atomic<bool> in_read_{false};
  std::atomic<bool> timed_out_{false};
};

// read() that retries on EINTR (unless the watchdog gave up: ETIMEDOUT).
// A descriptor that stayed non-blocking (MakeBlocking could not clear the
// flag) is waited for with poll(), bounded by the same timeout. Returns the
// count, 0 at end of file, -1 with errno set on an error.
ssize_t ReadSome(int fd, std::uint8_t* buf, std::size_t n, IdleWatchdog& watchdog, int timeout_ms) {
  while (true) {
    if (watchdog.timed_out()) {
      errno = ETIMEDOUT;
      return -1;
    }
    watchdog.EnterRead();
    const ssize_t got = ::read(fd, buf, n);
    const int read_errno = errno;
    watchdog.LeaveRead();
    if (got >= 0) return got;
    if (read_errno == EINTR) continue;
    if (read_errno != EAGAIN && read_errno != EWOULDBLOCK) {
      errno = read_errno;
      return -1;
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, timeout_ms);
    if (ready == 0) {
      errno = ETIMEDOUT;
      return -1;
    }
    if (ready < 0 && errno != EINTR) return -1;
  }
}

}  // namespace

StreamOutcome SettledOutcome(const StreamValidator& v) {
  StreamOutcome outcome;
  if (v.status() == StreamStatus::kRejected) outcome.error = v.error();
  return outcome;
}

StreamOutcome ReadStream(int fd, StreamValidator& v, const StreamSink& sink, std::ostream& err,
                         const std::string& label, std::uint64_t idle_timeout_seconds) {
  MakeBlocking(fd);
  // ParseIdleTimeoutFlag bounds the value to a day: it fits an int.
  const int timeout_ms =
      idle_timeout_seconds == 0
          ? -1
          : static_cast<int>(std::min(idle_timeout_seconds, kMaxIdleTimeoutSeconds) * 1000);
  const auto buf = std::make_unique_for_overwrite<std::uint8_t[]>(kStreamReadBytes);
  IdleWatchdog watchdog(idle_timeout_seconds);
  std::optional<Progress> progress;
  StreamOutcome outcome;
  while (true) {
    const std::uint64_t want = v.bytes_to_checkpoint();
    if (want == 0) break;  // settled (prefix mode stops at the block's end)
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(want, kStreamReadBytes));
    const ssize_t got = ReadSome(fd, buf.get(), n, watchdog, timeout_ms);
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
    // A short read drained the pipe: give the CPU back once before the next.
    // Without it the loop re-enters read() on the empty pipe, sleeps, and
    // every write of the producer must wake it: measured on a 2-core VM with
    // a producer that writes 8 KiB at a time, 46,000 sleeps per GiB and 55%
    // of `cat`'s throughput, against about 300 sleeps and the same speed as
    // `cat` (which spends that moment in its write()) with the yield. A full
    // read (a file on standard input) has more waiting: no yield.
    // docs/performance.md, "A producer that writes 8 KiB at a time".
    if (static_cast<std::size_t>(got) < n) ::sched_yield();
    const std::span<const std::uint8_t> chunk(buf.get(), static_cast<std::size_t>(got));
    if (v.Feed(chunk) == StreamStatus::kRejected) break;
    if (!sink(chunk.first(v.used()))) {
      outcome.io_error = "write failed";
      return outcome;
    }
    if (!progress && v.header()) progress.emplace(err, label, v.header()->block_length);
    if (progress) progress->Advance(v.used());
  }
  return SettledOutcome(v);
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
