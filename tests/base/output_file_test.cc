// base::OutputFile where its usual path is not available.
//
// With Replace::kNever where the file system has no renameat2
// RENAME_NOREPLACE: Commit falls back to link() then unlink(),
// which must leave the target and nothing else, and refuse an existing
// target the same way. The missing support is simulated with a seccomp
// filter (renameat2 fails with ENOSYS) in a child process.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <unistd.h>
#include <csignal>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <ios>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kiln/base/output_file.h"
#include "support/syscall_fault.h"
#include "support/temp_dir.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

std::set<std::string> Names(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

// The child's exit status says which step failed (0: all held; kNoSeccomp: no
// seccomp here).
int Child(const fs::path& dir) {
  if (!testing::FailRenameat2(ENOSYS)) return testing::kNoSeccomp;
  const std::string target = (dir / "out").string();
  const std::uint8_t bytes[3] = {1, 2, 3};
  {
    base::OutputFile f(target, base::Replace::kNever);
    if (!f.ok() || !f.Write(bytes) || !f.Commit()) return 1;
  }
  if (Names(dir) != std::set<std::string>{"out"} || fs::file_size(target) != 3) return 2;
  {
    base::OutputFile again(target, base::Replace::kNever);
    if (!again.ok() || !again.Write(bytes) || !again.Write(bytes)) return 3;
    if (again.Commit()) return 4;
    if (again.error() != "exists (use --force to replace it)" || again.error_number() != EEXIST)
      return 5;
  }
  if (Names(dir) != std::set<std::string>{"out"} || fs::file_size(target) != 3) return 6;
  return 0;
}

TEST(OutputFile, NoReplaceFallbackWithoutRenameat2LeavesOnlyTheTarget) {
  testing::ScratchDir tmp;
  const int st = testing::ExitStatusInChild([&] { return Child(tmp.path()); });
  if (st == testing::kNoSeccomp) GTEST_SKIP() << "seccomp filters are not allowed here";
  EXPECT_EQ(st, 0) << "step " << st << " failed";
}

// More temporaries at once than the signal-cleanup table has slots: the
// ones past it are not listed (a signal would leave them behind) but are
// written and committed all the same.
TEST(OutputFile, MoreTemporariesThanTableSlotsStillCommit) {
  testing::ScratchDir tmp;
  const std::uint8_t byte[1] = {7};
  std::vector<std::unique_ptr<base::OutputFile>> files;
  for (int i = 0; i < base::kMaxTemporaries + 2; ++i) {
    std::string name = "f";  // not "f" + to_string(i): GCC 12's false -Wrestrict
    name += std::to_string(i);
    files.push_back(std::make_unique<base::OutputFile>(tmp / name));
    ASSERT_TRUE(files.back()->ok()) << i << ": " << files.back()->error();
    ASSERT_TRUE(files.back()->Write(byte)) << i;
  }
  for (auto& f : files) EXPECT_TRUE(f->Commit()) << f->error();
  files.clear();
  EXPECT_EQ(Names(tmp.path()).size(), static_cast<std::size_t>(base::kMaxTemporaries + 2));
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// A signal that arrives once the output is in place must not end the
// program (whose exit status would then say "nothing committed"); one that
// arrives before must, and remove the temporary. Before NoteOutputCommitted
// a SIGTERM right after the rename killed kiln with OUT in place.
int SignalledChild(const fs::path& target, bool commit_first) {
  base::InstallSignalCleanup();
  const std::uint8_t bytes[3] = {1, 2, 3};
  base::OutputFile f(target.string());
  if (!f.ok() || !f.Write(bytes)) return 1;
  if (commit_first && !f.Commit()) return 2;
  ::raise(SIGTERM);
  return commit_first ? 0 : 3;  // 3: the signal did not end the process
}

TEST(OutputFile, SignalAfterTheCommitDoesNotEndTheProgram) {
  for (const bool commit_first : {false, true}) {
    kiln::testing::ScratchDir tmp;
    const fs::path target = tmp.path() / "out";
    const int status = testing::WaitStatusInChild([&] {
      ::signal(SIGTERM, SIG_DFL);
      return SignalledChild(target, commit_first);
    });
    if (commit_first) {
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
      EXPECT_TRUE(fs::exists(target));
    } else {
      EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "status " << status;
      EXPECT_FALSE(fs::exists(target));
    }
    EXPECT_EQ(Names(tmp.path()),
              commit_first ? std::set<std::string>{"out"} : std::set<std::string>{});
  }
}

// A library caller whose standard input is closed: the temporary file is
// opened as descriptor 0. A write that fails (the bytes to write are not
// readable: a mapped input cut short) closes it and removes the temporary,
// as on any other descriptor. The child's exit status names the step that
// failed.
int WriteFailsOnDescriptorZero(const fs::path& dir) {
  if (::close(0) != 0) return 1;
  const fs::path target = dir / "out";
  base::OutputFile f(target.string());
  if (!f.ok()) return 2;
  if (::fcntl(0, F_GETFD) == -1) return 3;  // the temporary is not descriptor 0
  void* const unreadable = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (unreadable == MAP_FAILED) return 4;
  if (f.Write({static_cast<const std::uint8_t*>(unreadable), 4096})) return 5;
  if (f.error_number() != EFAULT) return 6;
  if (::fcntl(0, F_GETFD) != -1 || errno != EBADF) return 7;  // still open
  if (!Names(dir).empty()) return 8;
  return 0;
}

TEST(OutputFile, FailingWriteClosesDescriptorZero) {
  kiln::testing::ScratchDir tmp;
  const int step =
      testing::ExitStatusInChild([&] { return WriteFailsOnDescriptorZero(tmp.path()); });
  EXPECT_EQ(step, 0) << "step " << step << " failed";
}

// A staging directory listed for the signal handler is emptied and removed
// by RemoveListedTemporaries even when it is opened as descriptor 0 (a
// kiln whose standard input was closed, interrupted while it unpacks).
int RemovesAStagingDirectoryOpenedAsDescriptorZero(const fs::path& dir) {
  const fs::path staging = dir / "staging";
  std::error_code ec;
  if (!fs::create_directory(staging, ec)) return 1;
  for (const char* name : {"a", "b", ".c"}) {
    const int fd = ::open((staging / name).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || ::close(fd) != 0) return 2;
  }
  const int slot = base::ListTemporary(staging.c_str(), base::TemporaryKind::kDirectory);
  if (slot < 0) return 3;
  if (::close(0) != 0) return 4;
  base::RemoveListedTemporaries();
  if (fs::exists(staging, ec) || ec) return 5;
  base::UnlistTemporary(slot);
  return 0;
}

TEST(OutputFile, RemovesAStagingDirectoryOpenedAsDescriptorZero) {
  kiln::testing::ScratchDir tmp;
  const int step = testing::ExitStatusInChild(
      [&] { return RemovesAStagingDirectoryOpenedAsDescriptorZero(tmp.path()); });
  EXPECT_EQ(step, 0) << "step " << step << " failed";
}

// The committed file has the mode a plain creation would have (0666 less
// the umask), not the temporary's 0600. In a child: it sets the umask.
int ModeOfACommittedFile(const fs::path& dir, mode_t mask) {
  ::umask(mask);
  const fs::path target = dir / "out";
  const std::uint8_t byte[1] = {1};
  {
    base::OutputFile f(target.string());
    if (!f.ok() || !f.Write(byte) || !f.Commit()) return 1;
  }
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0) return 2;
  return (st.st_mode & 07777) == (0666 & ~mask) ? 0 : 3;
}

TEST(OutputFile, CommittedFileHasThePlainCreationMode) {
  for (const mode_t mask : {mode_t{0}, mode_t{022}, mode_t{077}}) {
    kiln::testing::ScratchDir tmp;
    const int step =
        testing::ExitStatusInChild([&] { return ModeOfACommittedFile(tmp.path(), mask); });
    EXPECT_EQ(step, 0) << "umask " << std::oct << mask << ": step " << std::dec << step
                       << " failed";
  }
}

}  // namespace
}  // namespace kiln
