#include "kiln/base/output_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kiln/base/input_file.h"
#include "kiln/base/mapping_guard.h"

namespace kiln::base {
namespace {

mode_t CreateMode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return static_cast<mode_t>(0666 & ~mask);
}

// One entry of the temporaries table. `state` says what `path` holds; the
// handler reads a path only in state kListedFile or kListedDirectory, which
// is stored after the path is complete.
enum SlotState : int { kFree, kClaimed, kListedFile, kListedDirectory };
struct Slot {
  std::atomic<int> state{kFree};  // lock-free, so safe in a signal handler
  char path[PATH_MAX];
};
Slot g_slots[kMaxTemporaries];
static_assert(std::atomic<int>::is_always_lock_free);

// Every signal that ends a process by default and can be caught, except
// SIGBUS, SIGSEGV and the like (faults: base/mapping_guard.h) and SIGPIPE
// (ignored by the command): a temporary never outlives a kill that could
// have been handled.
constexpr int kCleanupSignals[] = {SIGINT,  SIGTERM, SIGHUP,    SIGQUIT, SIGUSR1,
                                   SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU};
// Set by InstallSignalCleanup: this process is a program that makes one
// output (a kiln command), whose handlers are ours.
std::atomic<bool> g_cleanup_installed{false};
// Set once that program's output is in place (NoteOutputCommitted).
std::atomic<bool> g_committed{false};
static_assert(std::atomic<bool>::is_always_lock_free);

// Empties the directory `path` (plain files only: kiln's staging directory)
// and removes it, with async-signal-safe calls (getdents64 as a raw system
// call; readdir may allocate). Repeats while a pass removed something,
// since unlinking during the listing may skip entries.
void RemoveDirectoryInHandler(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    alignas(8) char buf[4096];
    for (int pass = 0; pass < 64; ++pass) {
      bool removed = false;
      (void)::lseek(fd, 0, SEEK_SET);
      for (;;) {
        const long n = ::syscall(SYS_getdents64, fd, buf, sizeof(buf));
        if (n <= 0) break;
        for (long at = 0; at < n;) {
          const auto* d = reinterpret_cast<const struct dirent64*>(buf + at);
          at += d->d_reclen;
          const char* name = d->d_name;
          if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
          if (::unlinkat(fd, name, 0) == 0) removed = true;
        }
      }
      if (!removed) break;
    }
    ::close(fd);
  }
  (void)::rmdir(path);
}

void OnCleanupSignal(int sig) {
  // The output is in place: the program finishes and its status says so.
  if (g_committed.load()) return;
  RemoveListedTemporaries();
  // The default action, raised again: delivered as the handler returns and
  // ends the process, so errno need not be restored.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  (void)::sigaction(sig, &dfl, nullptr);
  (void)::raise(sig);
}

}  // namespace

int ListTemporary(const char* path, TemporaryKind kind) {
  const std::size_t length = std::strlen(path);
  if (length >= PATH_MAX) return -1;
  for (int i = 0; i < kMaxTemporaries; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kClaimed)) continue;
    std::memcpy(g_slots[i].path, path, length + 1);
    g_slots[i].state.store(kind == TemporaryKind::kFile ? kListedFile : kListedDirectory);
    return i;
  }
  return -1;
}

void UnlistTemporary(int slot) {
  if (slot >= 0 && slot < kMaxTemporaries) g_slots[slot].state.store(kFree);
}

void RemoveListedTemporaries() {
  for (Slot& slot : g_slots) {
    const int state = slot.state.load();
    if (state == kListedFile) (void)::unlink(slot.path);
    if (state == kListedDirectory) RemoveDirectoryInHandler(slot.path);
  }
}

void InstallSignalCleanup() {
  // A file-size limit (ulimit -f, RLIMIT_FSIZE) would otherwise end kiln by
  // SIGXFSZ mid-write, with its temporary still there; ignored, the write
  // fails with EFBIG and takes the ordinary error path (exit 2, temporary
  // removed).
  (void)::signal(SIGXFSZ, SIG_IGN);
  g_cleanup_installed.store(true);
  for (const int sig : kCleanupSignals) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;
    struct sigaction act {};
    act.sa_handler = OnCleanupSignal;
    sigemptyset(&act.sa_mask);
    for (const int other : kCleanupSignals) sigaddset(&act.sa_mask, other);
    (void)::sigaction(sig, &act, nullptr);
  }
}

void NoteOutputCommitted() {
  // Only in a program whose handlers are ours: a library caller (Python, a
  // test runner) that commits many files keeps its signals as they are.
  if (g_cleanup_installed.load()) g_committed.store(true);
}

SignalsHeld::SignalsHeld() {
  sigset_t block;
  sigemptyset(&block);
  for (const int sig : kCleanupSignals) sigaddset(&block, sig);
  (void)::pthread_sigmask(SIG_BLOCK, &block, &saved_);
}

SignalsHeld::~SignalsHeld() { (void)::pthread_sigmask(SIG_SETMASK, &saved_, nullptr); }

std::string TemporaryTemplate(const std::string& directory) {
  std::string name = directory + "/" + kTemporaryPrefix + std::to_string(::getpid()) + ".XXXXXX";
  if (name.starts_with("//")) name.erase(0, 1);
  return name;
}

std::optional<long> TemporaryNamePid(std::string_view name) {
  if (!name.starts_with(kTemporaryPrefix)) return std::nullopt;
  name.remove_prefix(std::string_view(kTemporaryPrefix).size());
  const std::size_t dot = name.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot > 10 || name[0] == '0') return std::nullopt;
  long pid = 0;
  for (const char c : name.substr(0, dot)) {
    if (c < '0' || c > '9') return std::nullopt;
    pid = pid * 10 + (c - '0');  // at most 10 digits: fits a long
  }
  const std::string_view random = name.substr(dot + 1);
  // mkstemp's and mkdtemp's six characters: letters and digits.
  if (random.size() != 6) return std::nullopt;
  for (const char c : random) {
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alnum) return std::nullopt;
  }
  if (pid > 0x7fffffff) return std::nullopt;
  return pid;
}

std::string DirectoryOf(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

OutputFile::OutputFile(std::string path, Replace replace)
    : path_(std::move(path)), replace_(replace) {
  if (RefuseSpecialTarget()) return;
  const std::string name = TemporaryTemplate(DirectoryOf(path_));
  std::vector<char> buffer(name.begin(), name.end());
  buffer.push_back('\0');
  int e = 0;
  {
    const SignalsHeld held;          // created and listed as one step
    fd_ = ::mkstemp(buffer.data());  // O_CREAT | O_EXCL | O_RDWR, mode 0600
    e = errno;
    if (fd_ >= 0) slot_ = ListTemporary(buffer.data(), TemporaryKind::kFile);
  }
  if (fd_ < 0) {
    Fail("cannot create a temporary file in its directory", e);
    return;
  }
  tmp_ = buffer.data();
  // The mode a plain creation would give.
  if (::fchmod(fd_, CreateMode()) != 0) Fail("chmod", errno);
}

// A FIFO, device, socket or directory at the target is never replaced (nor
// opened): true, with the error set, when one is there.
bool OutputFile::RefuseSpecialTarget() {
  struct stat st {};
  if (::lstat(path_.c_str(), &st) != 0) return false;  // absent: fine
  if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) return false;
  errno_ = S_ISDIR(st.st_mode) ? EISDIR : EEXIST;
  error_ = std::string("exists and is not a regular file (a ") + FileKindName(st.st_mode) + ")";
  return true;
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  RemoveTemporary();
}

void OutputFile::RemoveTemporary() {
  const SignalsHeld held;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  tmp_.clear();
  UnlistTemporary(slot_);
  slot_ = -1;
}

bool OutputFile::Fail(const char* what, int error_number) {
  errno_ = error_number;
  error_ = std::string(what) + ": " + std::strerror(error_number);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  RemoveTemporary();
  return false;
}

bool OutputFile::Write(std::span<const std::uint8_t> bytes) {
  if (!ok()) return false;
  if (const int e = WriteAll(fd_, bytes)) {
    // The kernel could not read the source: a mapped input cut short.
    return Fail(e == EFAULT ? kInputCutMessage : "write", e);
  }
  return true;
}

void OutputFile::StartWriteback() {
  if (ok()) (void)::sync_file_range(fd_, 0, 0, SYNC_FILE_RANGE_WRITE);
}

bool OutputFile::Commit() {
  if (!ok()) return false;
  // An input mapping was cut short while this process read it (another
  // process truncated the file): what was written is not the input.
  if (AnyMappingCut()) return Fail(kInputCutMessage, EIO);
  if (::fsync(fd_) != 0) return Fail("fsync", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return Fail("close", errno);
  if (!MoveIntoPlace()) return false;
  // Make the rename itself durable; the file is in place either way.
  const int dir = ::open(DirectoryOf(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
  return true;
}

// Renames the temporary to the target (never over an existing one with
// Replace::kNever) and unlists it; false with the error set.
bool OutputFile::MoveIntoPlace() {
  const SignalsHeld held;  // renamed and unlisted as one step
  int rc = 0;
  if (replace_ == Replace::kAllowed) {
    rc = ::rename(tmp_.c_str(), path_.c_str());
  } else {
    rc = ::renameat2(AT_FDCWD, tmp_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE);
    if (rc != 0 && (errno == EINVAL || errno == ENOSYS || errno == ENOTSUP)) {
      // No RENAME_NOREPLACE here: link() fails with EEXIST just the same.
      rc = ::link(tmp_.c_str(), path_.c_str());
      if (rc == 0) (void)::unlink(tmp_.c_str());
    }
  }
  if (rc != 0) {
    const int e = errno;
    Fail("rename into place", e);
    if (e == EEXIST) error_ = "exists (use --force to replace it)";
    return false;
  }
  tmp_.clear();
  UnlistTemporary(slot_);
  slot_ = -1;
  NoteOutputCommitted();
  return true;
}

int WriteAll(int fd, std::span<const std::uint8_t> bytes) {
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), std::min(bytes.size(), kChunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    bytes = bytes.subspan(static_cast<std::size_t>(n));
  }
  return 0;
}

int OpenNewFileAt(int dirfd, const std::string& name) {
  return ::openat(dirfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
}

}  // namespace kiln::base
