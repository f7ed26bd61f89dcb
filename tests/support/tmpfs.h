// A small tmpfs mounted for one test, to make "the disk is full" real.
// Needs root (CAP_SYS_ADMIN); a test skips with a message when the mount
// fails.
#ifndef KILN_TESTS_SUPPORT_TMPFS_H_
#define KILN_TESTS_SUPPORT_TMPFS_H_

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace kiln::testing {

class SmallTmpfs {
 public:
  // Mounts a tmpfs of `size` ("1m") on a fresh directory.
  explicit SmallTmpfs(const char* size) {
    std::string pattern = "/tmp/kiln-tmpfs-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      why_ = std::string("mkdtemp: ") + std::strerror(errno);
      return;
    }
    path_ = pattern;
    const std::string options = std::string("size=") + size;
    if (::mount("tmpfs", path_.c_str(), "tmpfs", 0, options.c_str()) != 0) {
      why_ = std::string("cannot mount a tmpfs (needs root): ") + std::strerror(errno);
      return;
    }
    mounted_ = true;
  }
  ~SmallTmpfs() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
    if (!path_.empty()) ::rmdir(path_.c_str());
  }
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;

  [[nodiscard]] bool mounted() const { return mounted_; }
  // Why it is not mounted.
  [[nodiscard]] const std::string& why() const { return why_; }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string why_;
  bool mounted_ = false;
};

}  // namespace kiln::testing

#endif  // KILN_TESTS_SUPPORT_TMPFS_H_
