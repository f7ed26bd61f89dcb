// Writing the outputs of pack, unpack and convert.
#ifndef KILN_CLI_OUTPUT_FILE_H_
#define KILN_CLI_OUTPUT_FILE_H_

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "kiln/writer.h"
#include "progress.h"

namespace kiln::cli {

// A file written under a temporary name in the target's directory and
// renamed over the target by Commit(). A failed conversion leaves no half
// file behind, and an output that replaces one of the inputs (which is
// memory-mapped) never truncates the bytes being read.
class OutputFile {
 public:
  explicit OutputFile(std::string path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  [[nodiscard]] bool ok() const { return error_.empty(); }
  [[nodiscard]] const std::string& error() const { return error_; }
  // Appends bytes; false (and error()) on an I/O error.
  bool Write(std::span<const std::uint8_t> bytes, Progress* progress = nullptr);
  // Starts writing what was written so far to the disk, without waiting
  // (Linux sync_file_range), so a later Sync() has less left to do.
  void StartWriteback();
  // Flushes what was written to the disk (fsync); false (and error()) on
  // an I/O error.
  bool Sync();
  // Closes the file and renames it into place.
  bool Commit();

 private:
  std::string path_;
  std::string tmp_;
  int fd_ = -1;
  std::string error_;
};

// Writes all of `bytes` to `fd` in chunks of at most 1 MiB, advancing
// `progress` as it goes. Returns an errno value, 0 on success.
[[nodiscard]] int WriteAll(int fd, std::span<const std::uint8_t> bytes, Progress* progress);

// Writes a block to `path` through an OutputFile. Returns an exit code and
// reports on `err`, prefixed by `who` ("kiln pack"): a rule the block
// breaks is 1 when `input_fault` (the input cannot be represented in kiln),
// else 2; an I/O error is 2.
[[nodiscard]] int WriteBlockFile(const BlockWriter& writer, const std::string& path,
                                 std::string_view who, bool input_fault, std::ostream& err);

}  // namespace kiln::cli

#endif  // KILN_CLI_OUTPUT_FILE_H_
