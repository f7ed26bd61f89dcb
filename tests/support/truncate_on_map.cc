// A test-only LD_PRELOAD library: stands for another process that truncates
// a file right after kiln mapped it, deterministically. With
// KILN_TEST_TRUNCATE_ON_MAP="SIZE:PATH" in the environment, every mmap() of
// a descriptor open on PATH is followed by ftruncate(PATH, SIZE); the
// mapping keeps its old length, so kiln's reads past SIZE hit SIGBUS.
// Never linked into kiln: tests/cli/cli_hostile_test.cc preloads it.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

using MmapFn = void* (*)(void*, std::size_t, int, int, int, off_t);

void TruncateIfTarget(int fd) {
  const char* spec = std::getenv("KILN_TEST_TRUNCATE_ON_MAP");
  if (fd < 0 || spec == nullptr) return;
  const char* colon = std::strchr(spec, ':');
  if (colon == nullptr) return;
  char link[64];
  std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  char target[4096];
  const ssize_t n = ::readlink(link, target, sizeof(target) - 1);
  if (n < 0) return;
  target[n] = '\0';
  if (std::strcmp(target, colon + 1) != 0) return;
  const int w = ::open(target, O_WRONLY | O_CLOEXEC);
  if (w < 0) return;
  if (::ftruncate(w, std::atoll(spec)) != 0) std::perror("truncate_on_map: ftruncate");
  ::close(w);
}

void* Mapped(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) {
  static const auto real = reinterpret_cast<MmapFn>(::dlsym(RTLD_NEXT, "mmap"));
  void* const p = real(addr, length, prot, flags, fd, offset);
  if (p != MAP_FAILED) TruncateIfTarget(fd);
  return p;
}

}  // namespace

extern "C" {
__attribute__((visibility("default"))) void* mmap(void* addr, std::size_t length, int prot,
                                                  int flags, int fd, off_t offset) {
  return Mapped(addr, length, prot, flags, fd, offset);
}
__attribute__((visibility("default"))) void* mmap64(void* addr, std::size_t length, int prot,
                                                    int flags, int fd, off_t offset) {
  return Mapped(addr, length, prot, flags, fd, offset);
}
}
