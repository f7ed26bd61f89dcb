// base::OutputFile where its usual path is not available.
//
// With Replace::kNever where the file system has no renameat2
// RENAME_NOREPLACE: Commit falls back to link() then unlink(),
// which must leave the target and nothing else, and refuse an existing
// target the same way. The missing support is simulated with a seccomp
// filter (renameat2 fails with EINVAL, ENOSYS or ENOTSUP, as file systems
// and kernels without it say) in a child process; any other failure of
// renameat2 is an error, never a reason to try link().
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <ios>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "kiln/base/mapped_input.h"
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

// Runs step(dir) in a child process, whose exit status names the step that
// failed (0: every step held).
void ExpectEveryStepHeld(int (*step)(const fs::path&), const fs::path& dir) {
  const int failed = testing::ExitStatusInChild([&] { return step(dir); });
  EXPECT_EQ(failed, 0) << "step " << failed << " failed";
}

// The child's exit status says which step failed (0: all held; kNoSeccomp: no
// seccomp here).
int Child(const fs::path& dir, int error) {
  if (!testing::FailRenameat2(error)) return testing::kNoSeccomp;
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
  for (const int error : {EINVAL, ENOSYS, ENOTSUP}) {
    testing::ScratchDir tmp;
    const int st = testing::ExitStatusInChild([&] { return Child(tmp.path(), error); });
    if (st == testing::kNoSeccomp) GTEST_SKIP() << "seccomp filters are not allowed here";
    EXPECT_EQ(st, 0) << std::strerror(error) << ": step " << st << " failed";
  }
}

// renameat2 refused for another reason (EPERM: a policy, not a missing
// feature): Commit fails with it, nothing is linked in its place, and the
// temporary goes.
int RefusedChild(const fs::path& dir) {
  if (!testing::FailRenameat2(EPERM)) return testing::kNoSeccomp;
  const std::string target = (dir / "out").string();
  const std::uint8_t bytes[3] = {1, 2, 3};
  {
    base::OutputFile f(target, base::Replace::kNever);
    if (!f.ok() || !f.Write(bytes)) return 1;
    if (f.Commit()) return 2;
    if (f.error() != "rename into place: Operation not permitted" || f.error_number() != EPERM) {
      return 3;
    }
  }
  return Names(dir).empty() ? 0 : 4;
}

TEST(OutputFile, NoReplaceRenameRefusedForAnotherReasonIsAnError) {
  testing::ScratchDir tmp;
  const int st = testing::ExitStatusInChild([&] { return RefusedChild(tmp.path()); });
  if (st == testing::kNoSeccomp) GTEST_SKIP() << "seccomp filters are not allowed here";
  EXPECT_EQ(st, 0) << "step " << st << " failed";
}

// error_number() is 0 while ok(), as documented: after the temporary is
// made, after a write, after the commit.
TEST(OutputFile, ErrorNumberIsZeroWhileOk) {
  testing::ScratchDir tmp;
  const std::uint8_t bytes[3] = {1, 2, 3};
  base::OutputFile f(tmp / "out");
  ASSERT_TRUE(f.ok()) << f.error();
  EXPECT_EQ(f.error_number(), 0);
  ASSERT_TRUE(f.Write(bytes)) << f.error();
  EXPECT_EQ(f.error_number(), 0);
  ASSERT_TRUE(f.Commit()) << f.error();
  EXPECT_EQ(f.error_number(), 0);
  EXPECT_EQ(Names(tmp.path()), std::set<std::string>{"out"});
}

// A stale errno left by the caller, one that means "no RENAME_NOREPLACE
// here", does not make a successful renameat2 look failed: committed once,
// nothing else left.
TEST(OutputFile, AStaleErrnoDoesNotUndoACommit) {
  for (const int stale : {EINVAL, ENOSYS, ENOTSUP}) {
    testing::ScratchDir tmp;
    const std::uint8_t bytes[3] = {1, 2, 3};
    base::OutputFile f(tmp / "out", base::Replace::kNever);
    ASSERT_TRUE(f.ok() && f.Write(bytes)) << f.error();
    errno = stale;
    EXPECT_TRUE(f.Commit()) << std::strerror(stale) << ": " << f.error();
    EXPECT_EQ(Names(tmp.path()), std::set<std::string>{"out"});
  }
}

// A file whose temporary could not be made: Commit fails and keeps the
// reason (not a later step's complaint about a missing descriptor).
TEST(OutputFile, CommitOfAFailedFileKeepsItsReason) {
  testing::ScratchDir tmp;
  base::OutputFile f(tmp / "missing/out");
  ASSERT_FALSE(f.ok());
  const std::string why = f.error();
  const int number = f.error_number();
  EXPECT_EQ(number, ENOENT) << why;
  EXPECT_FALSE(f.Commit());
  EXPECT_EQ(f.error(), why);
  EXPECT_EQ(f.error_number(), number);
  EXPECT_TRUE(Names(tmp.path()).empty());
}

// An input mapped by this process was cut short by another (here by its
// last byte, which only the size tells): an output built from it is not
// committed, the temporary goes, and the reason says so.
int CutInputChild(const fs::path& dir) {
  const std::string input = (dir / "in").string();
  {
    const std::vector<char> bytes(3 * 4096, 'x');
    std::FILE* w = std::fopen(input.c_str(), "wb");
    if (w == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), w) != bytes.size()) return 1;
    std::fclose(w);
  }
  const base::MappedInput in(input, [](std::span<const std::uint8_t>) -> std::size_t { return 1; });
  if (!in.ok()) return 2;
  const std::string target = (dir / "out").string();
  base::OutputFile f(target);
  if (!f.ok() || !f.Write(in.bytes())) return 3;
  if (::truncate(input.c_str(), 3 * 4096 - 1) != 0) return 4;
  if (f.Commit()) return 5;
  if (f.error() != std::string(base::kInputCutMessage) + ": Input/output error" ||
      f.error_number() != EIO) {
    return 6;
  }
  return Names(dir) == std::set<std::string>{"in"} ? 0 : 7;
}

TEST(OutputFile, NotCommittedWhenAnInputWasCutWhileItWasRead) {
  testing::ScratchDir tmp;
  EXPECT_EQ(testing::ExitStatusInChild([&] { return CutInputChild(tmp.path()); }), 0);
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
  ExpectEveryStepHeld(WriteFailsOnDescriptorZero, tmp.path());
}

// A staging directory listed for the signal handler is emptied and removed
// by RemoveListedTemporaries even when it is opened as descriptor 0 (a
// kiln whose standard input was closed, interrupted while it unpacks).
int RemovesAStagingDirectoryOpenedAsDescriptorZero(const fs::path& dir) {
  const fs::path staging = dir / "staging";
  std::error_code ec;
  if (!fs::create_directory(staging, ec)) return 1;
  for (const char* name : {"a", "b", ".c", "..d"}) {
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
  ExpectEveryStepHeld(RemovesAStagingDirectoryOpenedAsDescriptorZero, tmp.path());
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

// Descriptor 0 is an ordinary descriptor to an output (standard input
// closed: a daemon's child): the temporary opened on it is closed when the
// output is dropped, and a commit leaves no descriptor open (the directory
// it opens to make the rename durable takes 0 again).
// The child's exit status names the step that failed (0: all held).
int OutputsOnDescriptorZeroLeaveItClosed(const fs::path& dir) {
  if (::close(0) != 0) return 1;
  {
    const base::OutputFile dropped((dir / "dropped").string());
    if (!dropped.ok() || ::fcntl(0, F_GETFD) == -1) return 2;  // not opened on 0
  }
  if (::fcntl(0, F_GETFD) != -1) return 3;  // left open by the dropped output
  const std::uint8_t byte[1] = {1};
  base::OutputFile kept((dir / "kept").string());
  if (!kept.ok() || ::fcntl(0, F_GETFD) == -1) return 4;
  if (!kept.Write(byte) || !kept.Commit()) return 5;
  if (::fcntl(0, F_GETFD) != -1) return 6;  // left open by the commit
  return 0;
}

TEST(OutputFile, OutputsOnDescriptorZeroLeaveItClosed) {
  kiln::testing::ScratchDir tmp;
  ExpectEveryStepHeld(OutputsOnDescriptorZeroLeaveItClosed, tmp.path());
  EXPECT_EQ(Names(tmp.path()), std::set<std::string>{"kept"});
}

// A temporary opened as descriptor 0 is listed like any other: a signal
// removes it.
TEST(OutputFile, SignalRemovesATemporaryOpenedAsDescriptorZero) {
  kiln::testing::ScratchDir tmp;
  const fs::path target = tmp.path() / "out";
  const int status = testing::WaitStatusInChild([&] {
    ::signal(SIGTERM, SIG_DFL);
    return ::close(0) == 0 ? SignalledChild(target, false) : 1;
  });
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "status " << status;
  EXPECT_EQ(Names(tmp.path()), std::set<std::string>{});
}

// A signal ignored when the handlers are installed (SIGHUP under nohup)
// stays ignored: it neither ends the program nor removes its temporary.
int IgnoredSignalStaysIgnored(const fs::path& dir) {
  if (::signal(SIGHUP, SIG_IGN) == SIG_ERR) return 1;
  base::InstallSignalCleanup();
  const std::uint8_t byte[1] = {1};
  base::OutputFile f((dir / "out").string());
  if (!f.ok() || !f.Write(byte)) return 2;
  ::raise(SIGHUP);
  if (Names(dir).size() != 1) return 3;  // the temporary is still there
  return f.Commit() ? 0 : 4;
}

TEST(OutputFile, AnIgnoredSignalStaysIgnored) {
  kiln::testing::ScratchDir tmp;
  ExpectEveryStepHeld(IgnoredSignalStaysIgnored, tmp.path());
  EXPECT_EQ(Names(tmp.path()), std::set<std::string>{"out"});
}

// The temporaries table holds exactly 16 paths (kMaxTemporaries, the
// number SECURITY.md gives; counted here, not read from the constant), in
// slots 0 to 15; one more does not fit (-1); a slot given back is taken
// again, the first included; -1 and numbers past the table are ignored by
// UnlistTemporary. In a child: the table is the process's.
int TableOfExactlyKMaxTemporaries() {
  constexpr int kDocumentedCapacity = 16;  // SECURITY.md
  std::set<int> slots;
  for (int i = 0; i < kDocumentedCapacity; ++i) {
    const int slot = base::ListTemporary("/nonexistent/kiln-test", base::TemporaryKind::kFile);
    if (slot < 0 || slot >= base::kMaxTemporaries || !slots.insert(slot).second) return 1;
  }
  if (base::ListTemporary("/nonexistent/kiln-test", base::TemporaryKind::kFile) != -1) return 2;
  base::UnlistTemporary(-1);
  base::UnlistTemporary(base::kMaxTemporaries);
  if (base::ListTemporary("/nonexistent/kiln-test", base::TemporaryKind::kFile) != -1) return 3;
  for (const int slot : {0, base::kMaxTemporaries - 1}) {
    base::UnlistTemporary(slot);
    if (base::ListTemporary("/nonexistent/kiln-test", base::TemporaryKind::kFile) != slot) return 4;
  }
  for (const int slot : slots) base::UnlistTemporary(slot);
  return 0;
}

TEST(TemporariesTable, HoldsExactlyKMaxTemporaries) {
  const int step = testing::ExitStatusInChild(TableOfExactlyKMaxTemporaries);
  EXPECT_EQ(step, 0) << "step " << step << " failed";
}

// A path of PATH_MAX - 1 bytes is listed, one of PATH_MAX is not (the
// handler's copy holds PATH_MAX bytes with the terminator). Nothing past
// the terminator is read: the path ends a page that a PROT_NONE page
// follows.
int LongestListedPath() {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t pages = (PATH_MAX + 1 + page - 1) / page + 1;
  void* const area =
      ::mmap(nullptr, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (area == MAP_FAILED) return 1;
  auto* const bytes = static_cast<char*>(area);
  char* const end = bytes + (pages - 1) * page;  // the guard page
  if (::mprotect(end, page, PROT_NONE) != 0) return 2;
  for (const std::size_t length : {std::size_t{PATH_MAX} - 1, std::size_t{PATH_MAX}}) {
    char* const path = end - length - 1;
    std::memset(path, 'x', length);
    path[0] = '/';
    path[length] = '\0';  // the last byte before the guard page
    const int slot = base::ListTemporary(path, base::TemporaryKind::kDirectory);
    if (length < PATH_MAX && slot < 0) return 3;
    if (length == PATH_MAX && slot != -1) return 4;
    base::UnlistTemporary(slot);
  }
  return 0;
}

TEST(TemporariesTable, ListsPathsShorterThanPathMaxAndReadsNoFurther) {
  const int step = testing::ExitStatusInChild(LongestListedPath);
  EXPECT_EQ(step, 0) << "step " << step << " failed";
}

// TemporaryNamePid takes exactly the names kiln gives its temporaries and
// nothing near them.
TEST(TemporaryName, PidOnlyFromAnExactName) {
  const struct {
    std::string_view name;
    std::optional<long> pid;
  } cases[] = {
      {".kiln-tmp.4242.a1B2c3", 4242},
      {".kiln-tmp.1.000000", 1},
      {".kiln-tmp.9.999999", 9},
      {".kiln-tmp.10.azAZ09", 10},
      {".kiln-tmp.1234567890.abcdef", 1234567890},  // ten digits
      {".kiln-tmp.2147483647.abcdef", 2147483647},  // 2^31-1
      {".kiln-tmp.2147483648.abcdef", std::nullopt},
      {".kiln-tmp.9999999999.abcdef", std::nullopt},
      {".kiln-tmp.12345678901.abcdef", std::nullopt},  // eleven digits
      {".kiln-tmp.0.abcdef", std::nullopt},            // a leading zero
      {".kiln-tmp.042.abcdef", std::nullopt},
      {".kiln-tmp..abcdef", std::nullopt},
      {".kiln-tmp.42", std::nullopt},
      {".kiln-tmp.42.", std::nullopt},
      {".kiln-tmp.42.abcde", std::nullopt},
      {".kiln-tmp.42.abcdefg", std::nullopt},
      {".kiln-tmp.4a.abcdef", std::nullopt},
      {".kiln-tmp.4/.abcdef", std::nullopt},  // '/' and ':' border the digits
      {".kiln-tmp.4:.abcdef", std::nullopt},
      {".kiln-tmp.42.abc/ef", std::nullopt},
      {".kiln-tmp.42.abc:ef", std::nullopt},
      {".kiln-tmp.42.abc`ef", std::nullopt},  // '`' and '{' border a-z
      {".kiln-tmp.42.abc{ef", std::nullopt},
      {".kiln-tmp.42.abc@ef", std::nullopt},  // '@' and '[' border A-Z
      {".kiln-tmp.42.abc[ef", std::nullopt},
      {".kiln-tmp.42.abc.ef", std::nullopt},
      {"kiln-tmp.42.abcdef", std::nullopt},
      {".kiln-tmp-42.abcdef", std::nullopt},
      {"x.kiln-tmp.42.abcdef", std::nullopt},
      {"", std::nullopt},
  };
  for (const auto& c : cases) EXPECT_EQ(base::TemporaryNamePid(c.name), c.pid) << c.name;
}

}  // namespace
}  // namespace kiln
