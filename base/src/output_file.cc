#include "kiln/base/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace kiln::base {
namespace {

// Short and fixed-length: mkstemp replaces the six X.
constexpr char kTempName[] = "/.kiln-XXXXXX";

mode_t CreateMode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return static_cast<mode_t>(0666 & ~mask);
}

}  // namespace

std::string DirectoryOf(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  std::string name = DirectoryOf(path_) + kTempName;
  if (name.starts_with("//")) name.erase(0, 1);
  std::vector<char> buffer(name.begin(), name.end());
  buffer.push_back('\0');
  fd_ = ::mkstemp(buffer.data());  // O_CREAT | O_EXCL | O_RDWR, mode 0600
  if (fd_ < 0) {
    Fail("cannot create a temporary file in its directory", errno);
    return;
  }
  tmp_ = buffer.data();
  // The mode a plain creation would give.
  if (::fchmod(fd_, CreateMode()) != 0) Fail("chmod", errno);
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

bool OutputFile::Fail(const char* what, int error_number) {
  errno_ = error_number;
  error_ = std::string(what) + ": " + std::strerror(error_number);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  tmp_.clear();
  return false;
}

bool OutputFile::Write(std::span<const std::uint8_t> bytes) {
  if (!ok()) return false;
  if (const int e = WriteAll(fd_, bytes)) return Fail("write", e);
  return true;
}

void OutputFile::StartWriteback() {
  if (ok()) (void)::sync_file_range(fd_, 0, 0, SYNC_FILE_RANGE_WRITE);
}

bool OutputFile::Commit() {
  if (!ok()) return false;
  if (::fsync(fd_) != 0) return Fail("fsync", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return Fail("close", errno);
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) return Fail("rename into place", errno);
  tmp_.clear();
  // Make the rename itself durable; the file is in place either way.
  const int dir = ::open(DirectoryOf(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
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
