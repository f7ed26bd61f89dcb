#include "output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "commands.h"

namespace kiln::cli {

OutputFile::OutputFile(std::string path) : path_(std::move(path)), tmp_(path_ + ".kiln-XXXXXX") {
  std::vector<char> name(tmp_.begin(), tmp_.end());
  name.push_back('\0');
  fd_ = ::mkstemp(name.data());
  if (fd_ < 0) {
    error_ = std::string("cannot create a file next to it: ") + std::strerror(errno);
    tmp_.clear();
    return;
  }
  tmp_ = name.data();
  // mkstemp creates the file 0600; give it the mode a plain create would.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd_, 0666 & ~mask);
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

bool OutputFile::Write(std::span<const std::uint8_t> bytes, Progress* progress) {
  if (!ok()) return false;
  if (const int e = WriteAll(fd_, bytes, progress))
    error_ = std::string("write: ") + std::strerror(e);
  return ok();
}

bool OutputFile::Commit() {
  if (!ok()) return false;
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0 || ::rename(tmp_.c_str(), path_.c_str()) != 0) {
    error_ = std::strerror(errno);
    return false;
  }
  tmp_.clear();
  return true;
}

int WriteAll(int fd, std::span<const std::uint8_t> bytes, Progress* progress) {
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), std::min(bytes.size(), kChunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    bytes = bytes.subspan(static_cast<std::size_t>(n));
    if (progress != nullptr) progress->Advance(static_cast<std::uint64_t>(n));
  }
  return 0;
}

int WriteBlockFile(const BlockWriter& writer, const std::string& path, std::string_view who,
                   bool input_fault, std::ostream& err) {
  OutputFile file(path);
  if (!file.ok()) {
    err << who << ": " << base::Escape(path) << ": " << file.error() << "\n";
    return kExitUsage;
  }
  const Result<std::uint64_t> n =
      writer.WriteTo([&](std::span<const std::uint8_t> b) { return file.Write(b); });
  if (!file.ok()) {
    err << who << ": " << base::Escape(path) << ": " << file.error() << "\n";
    return kExitUsage;
  }
  if (!n.ok()) {
    err << who << ": cannot be stored in kiln: " << n.error().ToString() << "\n";
    return input_fault ? kExitInvalid : kExitUsage;
  }
  if (!file.Commit()) {
    err << who << ": " << base::Escape(path) << ": " << file.error() << "\n";
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace kiln::cli
