// A read-only memory map of a whole file. Validation then touches only the
// pages it reads: the header, the directory, the padding and the payload gaps.
#ifndef KILN_CLI_MAPPED_FILE_H_
#define KILN_CLI_MAPPED_FILE_H_

#include <cstdint>
#include <span>
#include <string>

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

 private:
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  void* map_ = nullptr;
  std::string error_;
};

}  // namespace kiln::cli

#endif  // KILN_CLI_MAPPED_FILE_H_
