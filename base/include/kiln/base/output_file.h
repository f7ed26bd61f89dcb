// The one way kiln writes an output file.
//
// OutputFile creates a fresh file with a short random name (".kiln-XXXXXX",
// mkstemp: O_CREAT | O_EXCL, so never an existing file, never through a
// symlink or a hard link) in the target's directory, and Commit() fsyncs it
// and renames it over the target. So:
// - the target path is never opened for writing: a symlink or hard link
//   planted there is replaced, the file it points to is untouched;
// - a failed or abandoned write (full disk, error, destructor without
//   Commit) unlinks the temporary file: the target keeps its earlier
//   contents, or stays absent;
// - an output may replace an input that is memory-mapped: the input's inode
//   is never truncated;
// - the temporary name does not grow with the target's, so any name the
//   file system accepts for the target works.
#ifndef KILN_BASE_OUTPUT_FILE_H_
#define KILN_BASE_OUTPUT_FILE_H_

#include <cstdint>
#include <span>
#include <string>

namespace kiln::base {

class OutputFile {
 public:
  // Creates the temporary file next to `path`. On failure ok() is false.
  explicit OutputFile(std::string path);
  // Without a successful Commit(), removes the temporary file.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  [[nodiscard]] bool ok() const { return error_.empty(); }
  // What failed and the system's message, e.g. "write: No space left on device".
  [[nodiscard]] const std::string& error() const { return error_; }
  // The errno of the failure (0 while ok()).
  [[nodiscard]] int error_number() const { return errno_; }
  // Appends bytes; false (and error()) on an I/O error.
  bool Write(std::span<const std::uint8_t> bytes);
  // Starts writing what was written so far to the disk without waiting
  // (Linux sync_file_range), so Commit()'s fsync has less left to do; a
  // hint, not a promise: errors surface at Write() or Commit().
  void StartWriteback();
  // fsync, close, rename over the target (and fsync its directory, best
  // effort). False (and error()) on failure, with the temporary removed.
  bool Commit();

 private:
  bool Fail(const char* what, int error_number);

  std::string path_;
  std::string tmp_;
  int fd_ = -1;
  int errno_ = 0;
  std::string error_;
};

// The directory part of `path` ("." when it has none, "/" for "/x").
[[nodiscard]] std::string DirectoryOf(const std::string& path);

// Writes all of `bytes` to `fd` (retrying short writes and EINTR, in chunks
// of at most 1 MiB). Returns an errno value, 0 on success.
[[nodiscard]] int WriteAll(int fd, std::span<const std::uint8_t> bytes);

// Creates `name` in the directory `dirfd` for writing with O_CREAT | O_EXCL
// | O_NOFOLLOW (never an existing file, never through a link), mode 0666
// less the umask. Returns the descriptor, or -1 with errno set. For writers
// that own a fresh private directory (kiln unpack's mkdtemp one), where the
// directory, not each file, is renamed into place.
[[nodiscard]] int OpenNewFileAt(int dirfd, const std::string& name);

}  // namespace kiln::base

#endif  // KILN_BASE_OUTPUT_FILE_H_
