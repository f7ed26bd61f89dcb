#include "kiln/base/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kiln::base {
const char* FileKindName(mode_t mode) {
  if (S_ISREG(mode)) return "regular file";
  if (S_ISFIFO(mode)) return "FIFO";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  if (S_ISDIR(mode)) return "directory";
  return "special file";
}

InputFile::InputFile(const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd_ < 0) {
    error_ = std::string("cannot open: ") + std::strerror(errno);
    return;
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    error_ = std::string("cannot stat: ") + std::strerror(errno);
    ::close(fd_);
    fd_ = -1;
    return;
  }
  kind_name_ = FileKindName(st.st_mode);
  if (S_ISREG(st.st_mode)) {
    kind_ = InputKind::kRegular;
    size_ = static_cast<std::uint64_t>(st.st_size);
  }
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace kiln::base
