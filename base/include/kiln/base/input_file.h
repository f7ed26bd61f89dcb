// Opening an input file without ever blocking on it.
//
// A FIFO opened for reading waits for a writer; a terminal can become the
// controlling one. OpenInput opens with O_RDONLY | O_NONBLOCK | O_NOCTTY |
// O_CLOEXEC, which returns at once for both, and fstat()s the descriptor, so
// the caller decides from the kind, before reading a byte, what to do with a
// file that is not a regular one (the commands refuse it; a reader that
// streams may accept a pipe).
#ifndef KILN_BASE_INPUT_FILE_H_
#define KILN_BASE_INPUT_FILE_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace kiln::base {

enum class InputKind {
  kRegular,     // a regular file: size() is its length
  kNotRegular,  // a FIFO, socket, device or directory
};

class InputFile {
 public:
  // Opens `path`. On failure ok() is false and error() says why
  // ("cannot open: No such file or directory").
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  [[nodiscard]] bool ok() const { return error_.empty(); }
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] InputKind kind() const { return kind_; }
  // "regular file", "FIFO", "socket", "character device", "block device",
  // "directory" or "special file".
  [[nodiscard]] const char* kind_name() const { return kind_name_; }
  [[nodiscard]] std::uint64_t size() const { return size_; }
  // The descriptor (still O_NONBLOCK), owned by this object; -1 unless ok().
  [[nodiscard]] int fd() const { return fd_; }

 private:
  int fd_ = -1;
  InputKind kind_ = InputKind::kNotRegular;
  const char* kind_name_ = "special file";
  std::uint64_t size_ = 0;
  std::string error_;
};

// "regular file", "FIFO", "socket", "character device", "block device",
// "directory" or "special file", for a stat() st_mode.
[[nodiscard]] const char* FileKindName(mode_t mode);

}  // namespace kiln::base

#endif  // KILN_BASE_INPUT_FILE_H_
