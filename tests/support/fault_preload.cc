// A test-only LD_PRELOAD library: stands for what a test cannot otherwise
// arrange around the kiln binary, at a moment chosen deterministically:
// another process acting between two of kiln's system calls, a call the
// machine would fail only when out of memory or on a failing disk. Each hook
// is inert unless its variable is set. Never linked into kiln:
// tests/cli/cli_hostile_test.cc and tests/http/http_cli_test.py preload it.
//
// KILN_TEST_TRUNCATE_ON_MAP="SIZE:PATH": every mmap() of a descriptor open
//   on PATH is followed by ftruncate(PATH, SIZE); the mapping keeps its old
//   length, so kiln's reads past SIZE hit SIGBUS.
// KILN_TEST_TRUNCATE_AFTER_FSTAT="N:SIZE:PATH": the Nth fstat() of a
//   descriptor open on PATH returns the size before the cut, then the file
//   is cut: a truncation after kiln's last look at the size before it parses.
// KILN_TEST_FAIL="FUNC:N:ERRNO[:PATH];...": the Nth call (0: every call) of
//   FUNC fails with ERRNO; with PATH, only calls whose (destination) path is
//   PATH count. FUNC: rename, renameat2 (PATH: the new name), fdopendir,
//   readdir (returns NULL: the end of a listing that failed part way),
//   fcntl_setfl (fcntl(F_SETFL): flags that cannot be changed), read,
//   read_errno (the read is made, and one that succeeds leaves errno set to
//   ERRNO, as POSIX allows a successful call to: a stale value; N counts
//   the reads that succeed), poll,
//   write (ERRNO 0: returns 0, nothing written, errno untouched: a device or
//   a FUSE file that accepts no byte), close (the descriptor is closed, then
//   the error is returned: an EIO that NFS or FUSE report only at close;
//   PATH: the last component of the file's name), mkdtemp (returns NULL: a
//   directory that takes no new entry), curl_easy_init,
//   curl_slist_append (a failed allocation).
// KILN_TEST_RENAME_BEFORE_OPENAT="N:NAME:FROM>TO[:FROM>TO...]": before the
//   Nth openat() whose path argument is NAME, renames FROM to TO (each pair
//   in order): another process swapping or removing what kiln checked.
// KILN_TEST_CURL_LEDGER=PATH: at exit, writes to PATH how many curl handles
//   and header lists kiln created and freed ("easy I F\nslist I F\n").
// KILN_TEST_FAULT_LOG=PATH: each fault or rename a hook made appends a line
//   naming its FUNC (or "openat") to PATH, so a test tells a hook that did
//   not run (a sanitizer runtime linked into kiln resolves some of these
//   functions before a preloaded library can) from one kiln got past.
// This library defines read(), write() and poll(): with _FORTIFY_SOURCE
// (which release flags may set) glibc's headers define inline checked
// versions of read() and poll(), and these would be redefinitions.
#undef _FORTIFY_SOURCE

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cstdarg>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

using MmapFn = void* (*)(void*, std::size_t, int, int, int, off_t);
using FstatFn = int (*)(int, struct stat*);

// The path `fd` is open on, into `target` (NUL-terminated); false when fd
// is not open (or /proc is not mounted).
bool PathOf(int fd, char (&target)[4096]) {
  if (fd < 0) return false;
  char link[64];
  std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  const ssize_t n = ::readlink(link, target, sizeof(target) - 1);
  if (n < 0) return false;
  target[n] = '\0';
  return true;
}

// Whether `fd` is open on `path`.
bool OpenOn(int fd, const char* path) {
  char target[4096];
  return PathOf(fd, target) && std::strcmp(target, path) == 0;
}

// "SIZE:PATH": cuts PATH to SIZE.
void Truncate(const char* spec) {
  const char* colon = std::strchr(spec, ':');
  if (colon == nullptr) return;
  const int w = ::open(colon + 1, O_WRONLY | O_CLOEXEC);
  if (w < 0) return;
  if (::ftruncate(w, std::atoll(spec)) != 0) std::perror("fault_preload: ftruncate");
  ::close(w);
}

// KILN_TEST_TRUNCATE_ON_MAP: cuts PATH when `fd` (just mapped) is open on it.
void TruncateIfTarget(int fd) {
  const char* spec = std::getenv("KILN_TEST_TRUNCATE_ON_MAP");
  const char* colon = spec == nullptr ? nullptr : std::strchr(spec, ':');
  if (colon != nullptr && OpenOn(fd, colon + 1)) Truncate(spec);
}

// KILN_TEST_TRUNCATE_AFTER_FSTAT: counts the fstat() calls of descriptors
// open on the spec's PATH; cuts it after the Nth.
void TruncateAfterFstat(int fd) {
  static std::atomic<long> seen{0};
  const char* spec = std::getenv("KILN_TEST_TRUNCATE_AFTER_FSTAT");
  const char* rest = spec == nullptr ? nullptr : std::strchr(spec, ':');
  const char* path = rest == nullptr ? nullptr : std::strchr(rest + 1, ':');
  if (path == nullptr || !OpenOn(fd, path + 1)) return;
  if (seen.fetch_add(1) + 1 == std::atol(spec)) Truncate(rest + 1);
}

int Stat(int fd, struct stat* st) {
  static const auto real = reinterpret_cast<FstatFn>(::dlsym(RTLD_NEXT, "fstat"));
  const int r = real(fd, st);
  const int saved = errno;
  TruncateAfterFstat(fd);
  errno = saved;
  return r;
}

void* Mapped(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) {
  static const auto real = reinterpret_cast<MmapFn>(::dlsym(RTLD_NEXT, "mmap"));
  void* const p = real(addr, length, prot, flags, fd, offset);
  if (p != MAP_FAILED) TruncateIfTarget(fd);
  return p;
}

// Appends `what` and a newline to KILN_TEST_FAULT_LOG.
void Log(const char* what) {
  const char* path = std::getenv("KILN_TEST_FAULT_LOG");
  if (path == nullptr) return;
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const std::string line = std::string(what) + "\n";
  // The system call itself: this library's write() may be the one failing.
  if (::syscall(SYS_write, fd, line.data(), line.size()) < 0) std::perror("fault_preload: log");
  ::syscall(SYS_close, fd);  // not this library's close(), which may be failing
}

// The ':'-separated fields of one entry.
std::vector<std::string> Fields(std::string_view entry) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (true) {
    const std::size_t colon = entry.find(':', at);
    out.emplace_back(entry.substr(at, colon == std::string_view::npos ? colon : colon - at));
    if (colon == std::string_view::npos) return out;
    at = colon + 1;
  }
}

// The ';'-separated entries of `list` (none when it is unset).
std::vector<std::string_view> Entries(const char* list) {
  std::vector<std::string_view> out;
  std::string_view rest = list == nullptr ? std::string_view() : list;
  while (!rest.empty()) {
    const std::size_t semi = rest.find(';');
    out.push_back(rest.substr(0, semi));
    if (semi == std::string_view::npos) break;
    rest.remove_prefix(semi + 1);
  }
  return out;
}

// KILN_TEST_FAIL: whether this call of `func` (on `path`, or nullptr) is to
// fail, and with which errno. Each entry counts its own calls.
bool Fails(const char* func, const char* path, int* error) {
  static std::array<std::atomic<long>, 16> seen{};
  const std::vector<std::string_view> entries = Entries(std::getenv("KILN_TEST_FAIL"));
  for (std::size_t i = 0; i < entries.size() && i < seen.size(); ++i) {
    const std::vector<std::string> f = Fields(entries[i]);
    if (f.size() < 3 || f[0] != func) continue;
    if (f.size() > 3 && (path == nullptr || f[3] != path)) continue;
    const long n = std::atol(f[1].c_str());
    const long call = seen[i].fetch_add(1) + 1;
    if (n == 0 || call == n) {
      *error = std::atoi(f[2].c_str());
      Log(func);
      return true;
    }
  }
  return false;
}

// KILN_TEST_RENAME_BEFORE_OPENAT: the renames due before this openat().
void RenameBeforeOpenat(const char* path) {
  static std::atomic<long> seen{0};
  const char* spec = std::getenv("KILN_TEST_RENAME_BEFORE_OPENAT");
  if (spec == nullptr || path == nullptr) return;
  const std::vector<std::string> f = Fields(spec);
  if (f.size() < 3 || f[1] != path) return;
  if (seen.fetch_add(1) + 1 != std::atol(f[0].c_str())) return;
  for (std::size_t i = 2; i < f.size(); ++i) {
    const std::size_t arrow = f[i].find('>');
    if (arrow == std::string::npos) continue;
    const std::string from = f[i].substr(0, arrow);
    const std::string to = f[i].substr(arrow + 1);
    // The system call itself: this library's rename() counts kiln's calls.
    if (::renameat(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str()) != 0) {
      std::perror("fault_preload: rename before openat");
    }
  }
  Log("openat");
}

template <typename Fn>
Fn Next(const char* name) {
  return reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, name));
}

// Whether a call came from libcurl itself: it makes and frees handles and
// lists of its own (curl_easy_perform makes a handle), which are not kiln's
// to free. Only kiln's calls are counted and failed.
bool FromCurl(const void* caller) {
  Dl_info info{};
  return ::dladdr(caller, &info) != 0 && info.dli_fname != nullptr &&
         std::strstr(info.dli_fname, "libcurl") != nullptr;
}

// KILN_TEST_CURL_LEDGER: curl handles and header lists made and freed.
std::atomic<long> easy_made{0}, easy_freed{0}, lists_made{0}, lists_freed{0};

__attribute__((destructor)) void WriteCurlLedger() {
  const char* path = std::getenv("KILN_TEST_CURL_LEDGER");
  if (path == nullptr) return;
  if (FILE* f = std::fopen(path, "w")) {
    std::fprintf(f, "easy %ld %ld\nslist %ld %ld\n", easy_made.load(), easy_freed.load(),
                 lists_made.load(), lists_freed.load());
    std::fclose(f);
  }
}

int Openat(int dirfd, const char* path, int flags, mode_t mode, const char* name) {
  using OpenatFn = int (*)(int, const char*, int, ...);
  static const auto real = Next<OpenatFn>(name);
  RenameBeforeOpenat(path);
  return real(dirfd, path, flags, mode);
}

// The mode argument, present when the flags create a file.
mode_t ModeOf(int flags, std::va_list args) {
  return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE
             ? static_cast<mode_t>(va_arg(args, unsigned))
             : 0;
}

int Fcntl(int fd, int cmd, unsigned long arg, const char* name) {
  using FcntlFn = int (*)(int, int, ...);
  static const auto real = Next<FcntlFn>(name);
  int error = 0;
  if (cmd == F_SETFL && Fails("fcntl_setfl", nullptr, &error)) {
    errno = error;
    return -1;
  }
  return real(fd, cmd, arg);
}

dirent* Readdir(DIR* d, const char* name) {
  using ReaddirFn = dirent* (*)(DIR*);
  static const auto real = Next<ReaddirFn>(name);
  int error = 0;
  if (Fails("readdir", nullptr, &error)) {
    errno = error;
    return nullptr;
  }
  return real(d);
}

}  // namespace

// The C types of libcurl, declared here: the library needs no curl header.
struct curl_slist;

extern "C" {
__attribute__((visibility("default"))) int fstat(int fd, struct stat* st) { return Stat(fd, st); }
__attribute__((visibility("default"))) int fstat64(int fd, struct stat64* st) {
  static_assert(sizeof(struct stat) == sizeof(struct stat64));
  return Stat(fd, reinterpret_cast<struct stat*>(st));
}
__attribute__((visibility("default"))) void* mmap(void* addr, std::size_t length, int prot,
                                                  int flags, int fd, off_t offset) {
  return Mapped(addr, length, prot, flags, fd, offset);
}
__attribute__((visibility("default"))) void* mmap64(void* addr, std::size_t length, int prot,
                                                    int flags, int fd, off_t offset) {
  return Mapped(addr, length, prot, flags, fd, offset);
}
__attribute__((visibility("default"))) int openat(int dirfd, const char* path, int flags, ...) {
  std::va_list args;
  va_start(args, flags);
  const mode_t mode = ModeOf(flags, args);
  va_end(args);
  return Openat(dirfd, path, flags, mode, "openat");
}
__attribute__((visibility("default"))) int openat64(int dirfd, const char* path, int flags, ...) {
  std::va_list args;
  va_start(args, flags);
  const mode_t mode = ModeOf(flags, args);
  va_end(args);
  return Openat(dirfd, path, flags, mode, "openat64");
}
// The third argument, when there is one, is an int or a pointer: passed on
// as the register it came in.
__attribute__((visibility("default"))) int fcntl(int fd, int cmd, ...) {
  std::va_list args;
  va_start(args, cmd);
  const unsigned long arg = va_arg(args, unsigned long);
  va_end(args);
  return Fcntl(fd, cmd, arg, "fcntl");
}
__attribute__((visibility("default"))) int fcntl64(int fd, int cmd, ...) {
  std::va_list args;
  va_start(args, cmd);
  const unsigned long arg = va_arg(args, unsigned long);
  va_end(args);
  return Fcntl(fd, cmd, arg, "fcntl64");
}
__attribute__((visibility("default"))) ssize_t read(int fd, void* buf, std::size_t n) {
  static const auto real = Next<ssize_t (*)(int, void*, std::size_t)>("read");
  int error = 0;
  if (Fails("read", nullptr, &error)) {
    errno = error;
    return -1;
  }
  const ssize_t got = real(fd, buf, n);
  if (got >= 0 && Fails("read_errno", nullptr, &error)) errno = error;
  return got;
}
__attribute__((visibility("default"))) ssize_t write(int fd, const void* buf, std::size_t n) {
  static const auto real = Next<ssize_t (*)(int, const void*, std::size_t)>("write");
  int error = 0;
  if (Fails("write", nullptr, &error)) {
    if (error == 0) return 0;
    errno = error;
    return -1;
  }
  return real(fd, buf, n);
}
__attribute__((visibility("default"))) int close(int fd) {
  static const auto real = Next<int (*)(int)>("close");
  // Every other close goes straight through: no allocation, no lookup (a
  // cleanup signal handler closes descriptors too).
  const char* const list = std::getenv("KILN_TEST_FAIL");
  if (list == nullptr || std::strstr(list, "close:") == nullptr) return real(fd);
  char target[4096];
  const char* name = nullptr;
  if (PathOf(fd, target)) {
    const char* slash = std::strrchr(target, '/');
    name = slash == nullptr ? target : slash + 1;
  }
  int error = 0;
  const bool fails = Fails("close", name, &error);
  const int rc = real(fd);
  if (!fails || rc != 0) return rc;
  errno = error;
  return -1;
}
__attribute__((visibility("default"))) char* mkdtemp(char* name) {
  static const auto real = Next<char* (*)(char*)>("mkdtemp");
  int error = 0;
  if (Fails("mkdtemp", nullptr, &error)) {
    errno = error;
    return nullptr;
  }
  return real(name);
}
__attribute__((visibility("default"))) int poll(pollfd* fds, nfds_t n, int timeout_ms) {
  static const auto real = Next<int (*)(pollfd*, nfds_t, int)>("poll");
  int error = 0;
  if (Fails("poll", nullptr, &error)) {
    errno = error;
    return -1;
  }
  return real(fds, n, timeout_ms);
}
__attribute__((visibility("default"))) int rename(const char* from, const char* to) {
  static const auto real = Next<int (*)(const char*, const char*)>("rename");
  int error = 0;
  if (Fails("rename", to, &error)) {
    errno = error;
    return -1;
  }
  return real(from, to);
}
__attribute__((visibility("default"))) int renameat2(int from_dir, const char* from, int to_dir,
                                                     const char* to, unsigned flags) {
  static const auto real = Next<int (*)(int, const char*, int, const char*, unsigned)>("renameat2");
  int error = 0;
  if (Fails("renameat2", to, &error)) {
    errno = error;
    return -1;
  }
  return real(from_dir, from, to_dir, to, flags);
}
__attribute__((visibility("default"))) DIR* fdopendir(int fd) {
  static const auto real = Next<DIR* (*)(int)>("fdopendir");
  int error = 0;
  if (Fails("fdopendir", nullptr, &error)) {
    errno = error;
    return nullptr;
  }
  return real(fd);
}
__attribute__((visibility("default"))) dirent* readdir(DIR* d) { return Readdir(d, "readdir"); }
__attribute__((visibility("default"))) dirent64* readdir64(DIR* d) {
  static_assert(sizeof(dirent) == sizeof(dirent64));
  return reinterpret_cast<dirent64*>(Readdir(d, "readdir64"));
}
__attribute__((visibility("default"))) void* curl_easy_init() {
  static const auto real = Next<void* (*)()>("curl_easy_init");
  if (FromCurl(__builtin_return_address(0))) return real();
  int error = 0;
  if (Fails("curl_easy_init", nullptr, &error)) return nullptr;
  void* const h = real();
  if (h != nullptr) easy_made.fetch_add(1);
  return h;
}
__attribute__((visibility("default"))) void curl_easy_cleanup(void* h) {
  static const auto real = Next<void (*)(void*)>("curl_easy_cleanup");
  if (h != nullptr && !FromCurl(__builtin_return_address(0))) easy_freed.fetch_add(1);
  real(h);
}
__attribute__((visibility("default"))) curl_slist* curl_slist_append(curl_slist* list,
                                                                     const char* text) {
  static const auto real = Next<curl_slist* (*)(curl_slist*, const char*)>("curl_slist_append");
  if (FromCurl(__builtin_return_address(0))) return real(list, text);
  int error = 0;
  if (Fails("curl_slist_append", nullptr, &error)) return nullptr;
  curl_slist* const out = real(list, text);
  if (list == nullptr && out != nullptr) lists_made.fetch_add(1);
  return out;
}
__attribute__((visibility("default"))) void curl_slist_free_all(curl_slist* list) {
  static const auto real = Next<void (*)(curl_slist*)>("curl_slist_free_all");
  if (list != nullptr && !FromCurl(__builtin_return_address(0))) lists_freed.fetch_add(1);
  real(list);
}
}
