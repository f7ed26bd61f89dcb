// The one way kiln writes an output file.
//
// OutputFile creates a fresh file with a short random name
// (".kiln-tmp.PID.XXXXXX", PID the creating process, XXXXXX six random
// letters and digits; mkstemp: O_CREAT | O_EXCL, so never an existing file,
// never through a symlink or a hard link) in the target's directory, and
// Commit() fsyncs it and renames it over the target. So:
// - the target path is never opened for writing: a symlink or hard link
//   planted there is replaced, the file it points to is untouched;
// - a failed or abandoned write (full disk, error, destructor without
//   Commit) unlinks the temporary file: the target keeps its earlier
//   contents, or stays absent;
// - an output may replace an input that is memory-mapped: the input's inode
//   is never truncated;
// - the temporary name does not grow with the target's (at most 30 bytes),
//   so any name the file system accepts for the target works;
// - one a SIGKILL leaves behind is recognisable by its name, which says
//   which process made it (TemporaryNamePid; `kiln clean` removes those
//   whose process is gone);
// - a target that exists and is neither a regular file nor a symlink (a
//   FIFO, device, socket or directory) is refused before anything is
//   created: "exists and is not a regular file (a FIFO)";
// - in a program that installed base::InstallBusGuard(), Commit() refuses
//   (EIO) once any mapped input was truncated under the process
//   (mapping_guard.h): the bytes written were not the input's;
// - with Replace::kNever, Commit() never replaces a target, even one created
//   while the file was being written (renameat2 RENAME_NOREPLACE, or link()
//   then unlink() where the file system lacks it): "exists (use --force to
//   replace it)", error_number() EEXIST;
// - every temporary is listed in a fixed table (below) while it exists, so
//   a process that installs InstallSignalCleanup() removes it when killed by
//   SIGINT, SIGTERM or SIGHUP. SIGKILL cannot be caught: its temporary stays.
#ifndef KILN_BASE_OUTPUT_FILE_H_
#define KILN_BASE_OUTPUT_FILE_H_

#include <signal.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kiln::base {

// Whether Commit() may replace an existing target.
enum class Replace { kAllowed, kNever };

class OutputFile {
 public:
  // Creates the temporary file next to `path`. On failure ok() is false.
  explicit OutputFile(std::string path, Replace replace = Replace::kAllowed);
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
  bool RefuseSpecialTarget();
  bool MoveIntoPlace();
  void RemoveTemporary();

  std::string path_;
  Replace replace_;
  std::string tmp_;
  int slot_ = -1;  // in the temporaries table, -1 when not listed
  int fd_ = -1;
  int errno_ = 0;
  std::string error_;
};

// Every temporary file and staging directory kiln creates is named
// kTemporaryPrefix + PID + "." + six random letters or digits:
// ".kiln-tmp.4242.a1B2c3".
inline constexpr char kTemporaryPrefix[] = ".kiln-tmp.";
// DIRECTORY/.kiln-tmp.<this process's PID>.XXXXXX: a template for mkstemp
// or mkdtemp.
[[nodiscard]] std::string TemporaryTemplate(const std::string& directory);
// The PID in `name` if it is exactly such a name (a decimal PID without a
// leading zero, at most 2^31-1; then six letters or digits), else nullopt.
[[nodiscard]] std::optional<long> TemporaryNamePid(std::string_view name);

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

// The temporaries table: what a signal handler removes. Fixed size, no
// allocation, read by the handler with async-signal-safe calls only. A
// temporary that does not fit (more than kMaxTemporaries at once, or a path
// of PATH_MAX bytes or more) is not listed: it is still removed on every
// ordinary exit, just not when killed.
inline constexpr int kMaxTemporaries = 16;
enum class TemporaryKind { kFile, kDirectory };

// Lists `path`; returns its slot, or -1 when it does not fit.
[[nodiscard]] int ListTemporary(const char* path, TemporaryKind kind);
// Forgets a slot (after the rename or the removal); -1 is ignored.
void UnlistTemporary(int slot);
// Removes every listed temporary: unlink for a file; for a directory
// (kiln unpack's staging directory, which holds only the plain files kiln
// created in it) unlinkat of each entry, then rmdir. Async-signal-safe.
void RemoveListedTemporaries();
// Installs handlers for SIGINT, SIGTERM, SIGHUP and every other signal
// that ends a process by default and can be caught (SIGQUIT, SIGUSR1,
// SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU; a signal ignored at
// startup, e.g. SIGHUP under nohup, stays ignored) that call
// RemoveListedTemporaries(), restore the default action and raise the
// signal again, so the exit status still says "killed by signal". Also
// ignores SIGXFSZ, so a file-size limit (RLIMIT_FSIZE) hit mid-write is a
// write error (EFBIG) that removes the temporary, not a death that leaves
// it. For programs (kiln's main); the library never installs handlers.
void InstallSignalCleanup();

// Says that the program's output is in place. From then on the handlers of
// InstallSignalCleanup remove nothing and no longer end the process: the
// program finishes and exits with its own status, so that exit 0 alone says
// the output was committed, never a death by signal with the output already
// in place. Call it while SignalsHeld, with the rename. It takes effect only
// after InstallSignalCleanup, whose callers make one output per process (a
// kiln command); elsewhere it does nothing.
void NoteOutputCommitted();

// Blocks those signals in this thread for its lifetime, so a
// temporary's creation and its listing (or its rename and unlisting) happen
// as one step for the handler.
class SignalsHeld {
 public:
  SignalsHeld();
  ~SignalsHeld();
  SignalsHeld(const SignalsHeld&) = delete;
  SignalsHeld& operator=(const SignalsHeld&) = delete;

 private:
  sigset_t saved_;
};

}  // namespace kiln::base

#endif  // KILN_BASE_OUTPUT_FILE_H_
