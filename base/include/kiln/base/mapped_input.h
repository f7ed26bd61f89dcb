// One mapped input: a whole regular file, mapped read-only, whose prefix is
// this process's own copy. The one way kiln maps a file it is given (the
// command's MappedFile, the Python package's Mapping).
//
// Opening never blocks (base::InputFile: a FIFO does not wait for a writer, a
// terminal does not become the controlling one), and a file that is not a
// regular one is refused before a byte is read ("not a regular file (a
// FIFO)").
//
// Another process may write the file while it is read. The first
// prefix_length(bytes) bytes (a Kiln block's header, descriptors and name
// heap; a foreign file's first 16 MiB: kiln/stable_prefix.h) are made this
// process's own copy before anything parses them (base/private_prefix.h),
// so what was checked is what is read later. The rest can still change; a
// reader that copies it does so once and takes every size and offset from
// the private copy.
//
// A file truncated while it is mapped does not kill the process with SIGBUS:
// the mapping is guarded (base/mapping_guard.h), the prefix is privatized
// under a BusGuardScope, its lost tail reads as zeros and cut() turns true.
// A cut inside the last page raises no SIGBUS; cut() also compares the
// file's size now with its size when it was mapped.
#ifndef KILN_BASE_MAPPED_INPUT_H_
#define KILN_BASE_MAPPED_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "kiln/base/mapping_guard.h"
#include "kiln/base/private_prefix.h"

namespace kiln::base {

class MappedInput {
 public:
  // Maps `path` and privatizes [0, prefix_length(bytes)). May block only as
  // long as open() and mmap() do on the file's file system. On failure ok()
  // is false, error() says why, what() and error_number() name the step
  // and its errno value.
  MappedInput(const std::string& path, PrefixLength prefix_length);
  ~MappedInput();
  MappedInput(const MappedInput&) = delete;
  MappedInput& operator=(const MappedInput&) = delete;

  [[nodiscard]] bool ok() const { return what_ == nullptr; }
  // "cannot open: No such file or directory", "not a regular file (a FIFO)",
  // "too large to map", "cannot map: ...", "cannot protect the mapping:
  // ...", or kInputCutMessage (truncated before its prefix was read).
  [[nodiscard]] const std::string& error() const { return error_; }
  // The failed step alone: "cannot open", "cannot stat", "not a regular
  // file", "too large to map", "cannot map", "cannot protect the mapping" or
  // kInputCutMessage; nullptr when ok().
  [[nodiscard]] const char* what() const { return what_; }
  // The errno value of the failure: open's, stat's or mmap's; EINVAL for a
  // file that is not a regular one, EFBIG for one too large to map, EIO for
  // one truncated while its prefix was read; 0 when ok().
  [[nodiscard]] int error_number() const { return error_number_; }

  // The whole file (empty for an empty file or on failure).
  [[nodiscard]] std::span<const std::uint8_t> bytes() const {
    return {static_cast<const std::uint8_t*>(map_), size_};
  }
  // Whether the file was truncated (by another process) while it was mapped
  // (base::MappingCut). Whatever was read from bytes() is then not the
  // file: the caller reports an I/O error, never a verdict.
  [[nodiscard]] bool cut() const { return MappingCut(guard_); }

 private:
  void Fail(const char* what, int error_number, const std::string& detail);

  void* map_ = nullptr;
  std::size_t size_ = 0;
  int guard_ = -1;  // in base's table of guarded mappings
  int fd_ = -1;     // kept open so that cut() can ask the file's size
  const char* what_ = nullptr;
  int error_number_ = 0;
  std::string error_;
};

}  // namespace kiln::base

#endif  // KILN_BASE_MAPPED_INPUT_H_
