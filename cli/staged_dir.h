// A directory built under a temporary name beside its target and put in
// place whole, for kiln unpack.
//
// The staging directory is made by mkdtemp (a fresh, empty directory, mode
// 0700, that no one else can plant a link in), so files created inside it
// are never an existing file, a symlink or a hard link. The target is never
// written into: Commit() renames the staging directory over it. What each
// failure leaves:
// - before Commit, or Commit failing before its rename: the staging
//   directory is removed, and so are the target's parents this run made
//   (while they are empty); the target is as it was (absent, or whole);
// - --force over an existing directory: the two are swapped atomically
//   (renameat2 RENAME_EXCHANGE), or, where the file system cannot, the old
//   one is renamed aside, the new one in, and the old one renamed back if
//   that fails; only then is the old one removed. If removing it fails, the
//   new directory is in place and complete and the old one's path is
//   reported.
// - kiln killed by SIGINT, SIGTERM or SIGHUP before Commit: the handler
//   (base::InstallSignalCleanup) empties and removes the staging directory.
// Nothing here follows a symlink: the target itself may not be one, and
// removal (std::filesystem::remove_all) unlinks links, never their targets.
#ifndef KILN_CLI_STAGED_DIR_H_
#define KILN_CLI_STAGED_DIR_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace kiln::cli {

// What is at the target path now.
enum class TargetState { kAbsent, kEmptyDirectory, kDirectory, kNotADirectory, kError };

// Looks at `target` without following a final symlink (a symlink is
// kNotADirectory). *error is set for kNotADirectory and kError.
[[nodiscard]] TargetState InspectTarget(const std::string& target, std::string* error);

class StagedDirectory {
 public:
  // Creates the parent of `target` and its missing parents, as mkdir -p
  // would, then PARENT/.kiln-XXXXXX.
  explicit StagedDirectory(std::string target);
  // Without a successful Commit, removes the staging directory and the
  // parents the constructor made (rmdir: only those still empty).
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  [[nodiscard]] bool ok() const { return error_.empty(); }
  [[nodiscard]] const std::string& error() const { return error_; }
  // The staging directory, open, for openat().
  [[nodiscard]] int fd() const { return fd_; }

  // Makes the contents durable (syncfs), gives the directory the mode a
  // plain mkdir would, and renames it to the target. Without `replace` the
  // target must be absent or an empty directory; with it an existing
  // directory is replaced whole (swapped, then removed).
  bool Commit(bool replace);

 private:
  bool Fail(const std::string& what, int error_number);
  bool Swap();
  void Unlist();
  void Committed();
  void MakeParents();

  std::string target_;
  std::string parent_;
  std::string path_;  // the staging directory; empty once committed
  int fd_ = -1;
  int slot_ = -1;  // in base's temporaries table (removed if kiln is killed)
  std::string error_;
  struct Made {
    std::string path;
    dev_t dev;
    ino_t ino;
  };
  std::vector<Made> made_;  // the parents this run made, outermost first
};

}  // namespace kiln::cli

#endif  // KILN_CLI_STAGED_DIR_H_
