// A read-only memory map of a whole file. Validation then touches only the
// pages it reads: the header, the directory, the padding and the payload gaps.
//
// Another process may write the file while kiln reads it (finding F3). The
// first StablePrefixLength bytes (a Kiln block's header, descriptors and name
// heap; a foreign file's first 16 MiB) are made this process's own copy before
// anything parses them, so what was checked is what is read later. The rest
// (payload bytes and gaps) can still change under us: P2 reads each gap once,
// unpack and convert copy payloads once, and every size and offset comes from
// the private copy, so a change there cannot make kiln crash or read out of
// bounds; it can only make the output differ from the bytes that were checked.
//
// A file truncated while it is mapped does not kill kiln with SIGBUS: the
// mapping is guarded (base/mapping_guard.h), its lost tail reads as zeros,
// cut() turns true, and no output is committed (base::AnyMappingCut). A cut
// inside the last page raises no SIGBUS; cut() and AnyMappingCut() also
// compare the file's size now with its size when it was mapped.
#ifndef KILN_CLI_MAPPED_FILE_H_
#define KILN_CLI_MAPPED_FILE_H_

#include <cstdint>
#include <span>
#include <string>

#include "kiln/base/mapping_guard.h"

namespace kiln::cli {

class MappedFile {
 public:
  // Maps `path`, opened with kiln::base::InputFile (never blocks, even on a
  // FIFO). A file that is not a regular file is refused before anything is
  // read ("not a regular file (a FIFO)"). On failure ok() is false and
  // error() says why.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  [[nodiscard]] bool ok() const { return error_.empty(); }
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] std::span<const std::uint8_t> bytes() const { return {data_, size_}; }
  // Whether the file was truncated (by another process) while it was mapped
  // and a read past its new end found zeros instead of killing kiln with
  // SIGBUS (base/mapping_guard.h). Whatever was read from bytes() is then
  // not the file: the caller must report an I/O error, never a verdict.
  [[nodiscard]] bool cut() const { return base::MappingCut(guard_); }

 private:
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  void* map_ = nullptr;
  int guard_ = -1;  // in base's table of guarded mappings
  int fd_ = -1;     // kept open so that cut() can ask the file's size
  std::string error_;
};

}  // namespace kiln::cli

#endif  // KILN_CLI_MAPPED_FILE_H_
