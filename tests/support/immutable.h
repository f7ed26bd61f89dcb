// The immutable attribute (chattr +i): a file or directory even root cannot
// change, remove or rename into, for tests of what kiln does when a removal
// or a rename is refused.
#ifndef KILN_TESTS_SUPPORT_IMMUTABLE_H_
#define KILN_TESTS_SUPPORT_IMMUTABLE_H_

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <filesystem>

namespace kiln::testing {

// Sets or clears the immutable attribute of `path`; false where the file
// system or the process's capabilities do not allow it.
inline bool SetImmutable(const std::filesystem::path& path, bool on) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  int flags = 0;
  bool ok = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
  flags = on ? (flags | FS_IMMUTABLE_FL) : (flags & ~FS_IMMUTABLE_FL);
  ok = ok && ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
  ::close(fd);
  return ok;
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_SUPPORT_IMMUTABLE_H_
