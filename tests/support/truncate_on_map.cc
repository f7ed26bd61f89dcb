// A test-only LD_PRELOAD library: stands for another process that truncates
// a file while kiln reads it, at a moment chosen deterministically. With
// KILN_TEST_TRUNCATE_ON_MAP="SIZE:PATH" in the environment, every mmap() of
// a descriptor open on PATH is followed by ftruncate(PATH, SIZE); the
// mapping keeps its old length, so kiln's reads past SIZE hit SIGBUS. With
// KILN_TEST_TRUNCATE_AFTER_FSTAT="N:SIZE:PATH", the Nth fstat() of a
// descriptor open on PATH returns the size before the cut, then the file is
// cut: a truncation after kiln's last look at the size before it parses.
// Never linked into kiln: tests/cli/cli_hostile_test.cc preloads it.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

using MmapFn = void* (*)(void*, std::size_t, int, int, int, off_t);
using FstatFn = int (*)(int, struct stat*);

// Whether `fd` is open on `path`.
bool OpenOn(int fd, const char* path) {
  if (fd < 0) return false;
  char link[64];
  std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  char target[4096];
  const ssize_t n = ::readlink(link, target, sizeof(target) - 1);
  if (n < 0) return false;
  target[n] = '\0';
  return std::strcmp(target, path) == 0;
}

// "SIZE:PATH": cuts PATH to SIZE when `fd` is open on PATH.
void TruncateIfOpenOn(int fd, const char* spec) {
  const char* colon = std::strchr(spec, ':');
  if (colon == nullptr || !OpenOn(fd, colon + 1)) return;
  const int w = ::open(colon + 1, O_WRONLY | O_CLOEXEC);
  if (w < 0) return;
  if (::ftruncate(w, std::atoll(spec)) != 0) std::perror("truncate_on_map: ftruncate");
  ::close(w);
}

void TruncateIfTarget(int fd) {
  const char* spec = std::getenv("KILN_TEST_TRUNCATE_ON_MAP");
  if (spec != nullptr) TruncateIfOpenOn(fd, spec);
}

// Counts the fstat() calls of descriptors open on the spec's PATH.
void TruncateAfterFstat(int fd) {
  static std::atomic<long> seen{0};
  const char* spec = std::getenv("KILN_TEST_TRUNCATE_AFTER_FSTAT");
  const char* rest = spec == nullptr ? nullptr : std::strchr(spec, ':');
  const char* path = rest == nullptr ? nullptr : std::strchr(rest + 1, ':');
  if (path == nullptr || !OpenOn(fd, path + 1)) return;
  if (seen.fetch_add(1) + 1 == std::atol(spec)) TruncateIfOpenOn(fd, rest + 1);
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

}  // namespace

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
}
