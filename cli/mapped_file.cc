#include "mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kiln/base/input_file.h"
#include "kiln/base/private_prefix.h"
#include "kiln/stable_prefix.h"

namespace kiln::cli {

MappedFile::MappedFile(const std::string& path) {
  // Opened without blocking (a FIFO would wait for a writer forever) and
  // checked to be a regular file before a byte is read.
  const base::InputFile file(path);
  if (!file.ok()) {
    error_ = file.error();
    return;
  }
  if (file.kind() != base::InputKind::kRegular) {
    error_ = std::string("not a regular file (a ") + file.kind_name() + ")";
    return;
  }
  if (file.size() == 0) return;
  if (file.size() > SIZE_MAX) {
    error_ = "too large to map";
    return;
  }
  size_ = static_cast<std::size_t>(file.size());
  // Writable so that PrivatizePrefix can take this process's own copy of the
  // header and directory (other processes' writes show through a MAP_PRIVATE
  // map until then); read-only again before anything is parsed.
  map_ = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, file.fd(), 0);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    size_ = 0;
    error_ = std::string("cannot map: ") + std::strerror(errno);
    return;
  }
  // Guarded before the first byte is touched: PrivatizePrefix reads too.
  fd_ = ::fcntl(file.fd(), F_DUPFD_CLOEXEC, 3);  // -1: the size is not asked again
  guard_ = base::GuardMapping(map_, size_, fd_);
  if (const int err = base::PrivatizePrefix(map_, size_, &StablePrefixLength); err != 0) {
    base::UnguardMapping(guard_);
    guard_ = -1;
    ::munmap(map_, size_);
    map_ = nullptr;
    size_ = 0;
    error_ = std::string("cannot protect the mapping: ") + std::strerror(err);
    return;
  }
  if (base::MappingCut(guard_)) {  // truncated before its header was read
    base::UnguardMapping(guard_);
    guard_ = -1;
    ::munmap(map_, size_);
    map_ = nullptr;
    size_ = 0;
    error_ = base::kInputCutMessage;
    return;
  }
  data_ = static_cast<const std::uint8_t*>(map_);
}

MappedFile::~MappedFile() {
  base::UnguardMapping(guard_);
  if (map_ != nullptr) ::munmap(map_, size_);
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace kiln::cli
