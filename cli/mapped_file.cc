#include "mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kiln::cli {

MappedFile::MappedFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error_ = std::string("cannot open: ") + std::strerror(errno);
    return;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error_ = std::string("cannot stat: ") + std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    error_ = "not a regular file";
  } else if (st.st_size > 0) {
    size_ = static_cast<std::size_t>(st.st_size);
    map_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map_ == MAP_FAILED) {
      map_ = nullptr;
      size_ = 0;
      error_ = std::string("cannot map: ") + std::strerror(errno);
    } else {
      data_ = static_cast<const std::uint8_t*>(map_);
    }
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (map_ != nullptr) ::munmap(map_, size_);
}

}  // namespace kiln::cli
