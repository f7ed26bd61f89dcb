#include "kiln/base/mapped_input.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "kiln/base/input_file.h"

namespace kiln::base {

void MappedInput::Fail(const char* what, int error_number, const std::string& detail) {
  what_ = what;
  error_number_ = error_number;
  error_ = detail;
}

MappedInput::MappedInput(const std::string& path, PrefixLength prefix_length) {
  // Opened without blocking (a FIFO would wait for a writer forever) and
  // checked to be a regular file before a byte is read.
  const InputFile file(path);
  if (!file.ok()) {
    // InputFile leaves errno as open() or fstat() set it.
    const int err = errno != 0 ? errno : EIO;
    const bool stat_failed = file.error().starts_with("cannot stat");
    Fail(stat_failed ? "cannot stat" : "cannot open", err, file.error());
    return;
  }
  if (file.kind() != InputKind::kRegular) {
    Fail("not a regular file", EINVAL,
         std::string("not a regular file (a ") + file.kind_name() + ")");
    return;
  }
  if (file.size() == 0) return;
  // A buffer's length is a signed size (Py_ssize_t, ptrdiff_t).
  if (file.size() > std::numeric_limits<std::size_t>::max() / 2) {
    Fail("too large to map", EFBIG, "too large to map");
    return;
  }
  const auto size = static_cast<std::size_t>(file.size());
  // Writable so that PrivatizePrefix can take this process's own copy of the
  // prefix (other processes' writes show through a MAP_PRIVATE map until
  // then); read-only again before anything is parsed.
  void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, file.fd(), 0);
  if (map == MAP_FAILED) {
    const int err = errno;
    Fail("cannot map", err, std::string("cannot map: ") + std::strerror(err));
    return;
  }
  // Guarded before the first byte is touched: PrivatizePrefix reads too, and
  // the file may already be shorter than its size.
  fd_ = ::fcntl(file.fd(), F_DUPFD_CLOEXEC, 3);  // -1: the size is not asked again
  int err = 0;
  {
    const BusGuardScope scope;
    guard_ = GuardMapping(map, size, fd_);
    err = PrivatizePrefix(map, size, prefix_length);
  }
  if (err == 0 && MappingCut(guard_)) {  // truncated before its prefix was read
    Fail(kInputCutMessage, EIO, kInputCutMessage);
  } else if (err != 0) {
    Fail("cannot protect the mapping", err,
         std::string("cannot protect the mapping: ") + std::strerror(err));
  }
  if (!ok()) {
    UnguardMapping(guard_);
    guard_ = -1;
    ::munmap(map, size);
    return;
  }
  map_ = map;
  size_ = size;
}

MappedInput::~MappedInput() {
  UnguardMapping(guard_);
  if (map_ != nullptr) ::munmap(map_, size_);
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace kiln::base
