#include "staged_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "kiln/base/mapping_guard.h"
#include "kiln/base/output_file.h"

namespace kiln::cli {
namespace {

namespace fs = std::filesystem;

// mkdtemp in `parent`; empty with errno set on failure.
std::string MakeTempDirectory(const std::string& parent) {
  const std::string name = base::TemporaryTemplate(parent);
  std::vector<char> buffer(name.begin(), name.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) return "";
  return buffer.data();
}

void SyncDirectory(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);  // best effort: the rename is done either way
  ::close(fd);
}

}  // namespace

TargetState InspectTarget(const std::string& target, std::string* error) {
  struct stat st {};
  if (::lstat(target.c_str(), &st) != 0) {
    if (errno == ENOENT) return TargetState::kAbsent;
    *error = std::strerror(errno);
    return TargetState::kError;
  }
  if (S_ISLNK(st.st_mode)) {
    *error = "is a symbolic link (give the directory itself)";
    return TargetState::kNotADirectory;
  }
  if (!S_ISDIR(st.st_mode)) {
    *error = "exists and is not a directory";
    return TargetState::kNotADirectory;
  }
  std::error_code ec;
  const bool empty = fs::is_empty(target, ec);
  if (ec) {
    *error = ec.message();
    return TargetState::kError;
  }
  return empty ? TargetState::kEmptyDirectory : TargetState::kDirectory;
}

StagedDirectory::StagedDirectory(std::string target)
    : target_(std::move(target)), parent_(base::DirectoryOf(target_)) {
  int e = 0;
  // A parent another unpack made, and removed when it failed, between this
  // one's look and its mkdtemp: made again (a few times, then the error).
  for (int attempt = 0; attempt < 3 && path_.empty(); ++attempt) {
    MakeParents();
    const base::SignalsHeld held;  // created and listed as one step
    path_ = MakeTempDirectory(parent_);
    e = errno;
    if (!path_.empty()) slot_ = base::ListTemporary(path_.c_str(), base::TemporaryKind::kDirectory);
    if (e != ENOENT) break;
  }
  if (path_.empty()) {
    Fail("cannot create a directory beside it", e);
    return;
  }
  fd_ = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd_ < 0) Fail("cannot open the staging directory", errno);
}

StagedDirectory::~StagedDirectory() {
  if (fd_ >= 0) ::close(fd_);
  std::error_code ec;
  if (!path_.empty()) fs::remove_all(path_, ec);
  Unlist();
  // The parents this run made, innermost first, each only while empty (a
  // committed target is in one of them, and Commit forgets them) and still
  // the directory it made (not one another process put at that path).
  for (auto it = made_.rbegin(); it != made_.rend(); ++it) {
    struct stat st {};
    if (::lstat(it->path.c_str(), &st) != 0 || st.st_dev != it->dev || st.st_ino != it->ino ||
        ::rmdir(it->path.c_str()) != 0) {
      break;
    }
  }
}

// The missing directories above the staging directory, outermost first, as
// mkdir -p makes them; made_ lists the ones this run made (one another
// process made meanwhile is theirs). A failure shows in mkdtemp's error.
void StagedDirectory::MakeParents() {
  std::vector<std::string> missing;  // innermost first
  for (std::string p = parent_; p != "." && p != "/"; p = base::DirectoryOf(p)) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) == 0 || errno != ENOENT) break;
    missing.push_back(p);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0777) != 0) {
      if (errno == EEXIST) continue;
      return;
    }
    struct stat st {};
    if (::lstat(it->c_str(), &st) != 0) return;
    made_.push_back({*it, st.st_dev, st.st_ino});
  }
}

void StagedDirectory::Unlist() {
  base::UnlistTemporary(slot_);
  slot_ = -1;
}

// DIR is in place: nothing of this run is removed any more (not the staging
// name, not the parents, which hold DIR now), and the rename is made durable.
void StagedDirectory::Committed() {
  path_.clear();
  made_.clear();
  Unlist();
  base::NoteOutputCommitted();
  SyncDirectory(parent_);
}

bool StagedDirectory::Fail(const std::string& what, int error_number) {
  if (error_.empty()) error_ = what + ": " + std::strerror(error_number);
  return false;
}

bool StagedDirectory::Commit(bool replace) {
  if (!ok()) return false;
  if (base::AnyMappingCut()) {  // the files were copied from an input that changed
    error_ = base::kInputCutMessage;
    return false;
  }
  // Every file written inside is on disk before the directory appears.
  if (::syncfs(fd_) != 0) return Fail("syncfs", errno);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd_, 0777 & ~mask) != 0) return Fail("chmod", errno);
  std::string why;
  const TargetState state = InspectTarget(target_, &why);
  if (state == TargetState::kNotADirectory || state == TargetState::kError) {
    error_ = why;
    return false;
  }
  if (replace && state == TargetState::kDirectory) return Swap();
  // Absent, or an empty directory (which rename replaces atomically).
  const base::SignalsHeld held;  // renamed and unlisted as one step
  if (::rename(path_.c_str(), target_.c_str()) != 0) {
    if (errno == ENOTEMPTY || errno == EEXIST) {
      error_ = "exists (use --force to replace it)";
      return false;
    }
    return Fail("rename into place", errno);
  }
  Committed();
  return true;
}

bool StagedDirectory::Swap() {
  const base::SignalsHeld held;  // swapped, unlisted and noted as one step
  std::string old;
  if (::renameat2(AT_FDCWD, path_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0) {
    old = path_;  // the staging name now holds the earlier directory
  } else if (errno == EINVAL || errno == ENOSYS || errno == ENOTSUP) {
    // No atomic exchange here: rename the old one aside (over an empty
    // directory of our own), the new one in, and back if that fails.
    old = MakeTempDirectory(parent_);
    if (old.empty()) return Fail("cannot create a directory beside it", errno);
    if (::rename(target_.c_str(), old.c_str()) != 0) {
      const int e = errno;
      ::rmdir(old.c_str());
      return Fail("cannot move the earlier directory aside", e);
    }
    if (::rename(path_.c_str(), target_.c_str()) != 0) {
      const int e = errno;
      if (::rename(old.c_str(), target_.c_str()) != 0) {
        error_ = std::string("rename into place: ") + std::strerror(e) +
                 "; the earlier directory is at " + old;
        return false;
      }
      return Fail("rename into place", e);
    }
  } else {
    return Fail("rename into place", errno);
  }
  Committed();  // what is left at a temporary name is the earlier directory
  std::error_code ec;
  fs::remove_all(old, ec);  // unlinks links, never follows them
  if (ec) {
    error_ = "unpacked, but the earlier directory, now at " + old +
             ", could not be removed: " + ec.message();
    return false;
  }
  return true;
}

}  // namespace kiln::cli
