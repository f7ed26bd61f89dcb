// StagedDirectory and InspectTarget (kiln unpack's output) on targets that
// change between kiln unpack's check and the final rename, or cannot be
// read: never replaced without --force, and the reason said.
#include "staged_dir.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>  // RENAME_EXCHANGE
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "formats/test_util.h"
#include "gtest/gtest.h"
#include "support/immutable.h"
#include "support/sanitizers.h"
#include "support/syscall_fault.h"

namespace kiln::testing_formats {
namespace {

namespace fs = std::filesystem;

// Another process creates the target, with a file in it, after the staging
// directory was made: Commit(false) leaves it whole and names the way out.
TEST(StagedDirectory, TargetFilledMeanwhileIsNotReplacedWithoutForce) {
  TempDir tmp;
  const std::string target = tmp / "out";
  {
    cli::StagedDirectory staged(target);
    ASSERT_TRUE(staged.ok()) << staged.error();
    const int fd = ::openat(staged.fd(), "mine", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    ::close(fd);
    fs::create_directory(target);
    WriteBytes(target + "/theirs", {2});
    EXPECT_FALSE(staged.Commit(false));
    EXPECT_EQ(staged.error(), "exists (use --force to replace it)");
  }
  EXPECT_TRUE(fs::exists(target + "/theirs"));
  EXPECT_FALSE(fs::exists(target + "/mine"));
  // The staging directory is gone with the StagedDirectory.
  for (const auto& e : fs::directory_iterator(tmp.path())) {
    EXPECT_NE(e.path().filename().string().rfind(".kiln-", 0), 0u) << e.path();
  }
}

// Another process puts a file, or a link to a directory, where DIR was
// absent, after the staging directory was made: Commit refuses, with or
// without --force, saying what is there; the file, the link and what the
// link points to stay as they were, and the staging directory goes.
TEST(StagedDirectory, TargetSwappedForAFileOrALinkMeanwhileIsRefused) {
  struct Case {
    bool link;
    bool replace;
    const char* why;
  };
  for (const Case c : {Case{false, false, "exists and is not a directory"},
                       Case{false, true, "exists and is not a directory"},
                       Case{true, false, "is a symbolic link (give the directory itself)"},
                       Case{true, true, "is a symbolic link (give the directory itself)"}}) {
    TempDir tmp;
    const std::string target = tmp / "out";
    const std::string elsewhere = tmp / "elsewhere";
    fs::create_directory(elsewhere);
    WriteBytes(elsewhere + "/theirs", {2});
    {
      cli::StagedDirectory staged(target);
      ASSERT_TRUE(staged.ok()) << staged.error();
      const int fd = ::openat(staged.fd(), "mine", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      ASSERT_GE(fd, 0);
      ::close(fd);
      if (c.link) {
        fs::create_directory_symlink(elsewhere, target);
      } else {
        WriteBytes(target, {3});
      }
      EXPECT_FALSE(staged.Commit(c.replace)) << c.why;
      EXPECT_EQ(staged.error(), c.why);
    }
    EXPECT_EQ(fs::is_symlink(target), c.link);
    if (!c.link) {
      EXPECT_EQ(ReadBytes(target), std::vector<std::uint8_t>{3});
    }
    EXPECT_EQ(ReadBytes(elsewhere + "/theirs"), std::vector<std::uint8_t>{2});
    EXPECT_FALSE(fs::exists(elsewhere + "/mine"));
    for (const auto& e : fs::directory_iterator(tmp.path())) {
      EXPECT_NE(e.path().filename().string().rfind(".kiln-", 0), 0u) << e.path();
    }
  }
}

// A directory whose emptiness cannot be asked (no descriptor left to open
// it: RLIMIT_NOFILE at the lowest free descriptor, in a child) is an error
// with the reason, not a directory with files in it.
TEST(InspectTarget, DirectoryThatCannotBeOpenedIsAnError) {
  if (kiln::testing::kAddressSanitizer) {
    GTEST_SKIP() << "the sanitizer runtime's own checks need a descriptor (UBSan's vptr check "
                    "opens a pipe): it fails first, out of descriptors";
  }
  TempDir tmp;
  const std::string target = tmp / "full";
  fs::create_directory(target);
  WriteBytes(target + "/f", {1});
  const int status = kiln::testing::ExitStatusInChild([&] {
    const int lowest = ::dup(0);
    if (lowest < 0) return 1;
    ::close(lowest);
    const rlimit limit = {static_cast<rlim_t>(lowest), static_cast<rlim_t>(lowest)};
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) return 2;
    std::string why;
    if (cli::InspectTarget(target, &why) != cli::TargetState::kError) return 3;
    return why == std::strerror(EMFILE) ? 0 : 4;
  });
  EXPECT_EQ(status, 0) << "the step that failed";
}

// DIR's parent is a file: no staging directory can be made beside DIR, and
// the error says that, with the reason.
TEST(StagedDirectory, ParentThatIsAFileIsRefused) {
  TempDir tmp;
  WriteBytes(tmp / "file", {1});
  const cli::StagedDirectory staged(tmp / "file/out");
  EXPECT_FALSE(staged.ok());
  EXPECT_EQ(staged.error(), "cannot create a directory beside it: Not a directory");
}

// A rename refused for a reason other than a filled DIR (the parent made
// immutable after staging: EPERM, even for root) is reported as it is, not
// as "exists".
TEST(StagedDirectory, RenameRefusedIsReportedWithItsReason) {
  TempDir tmp;
  fs::create_directory(tmp / "p");
  const std::string target = tmp / "p/out";
  cli::StagedDirectory staged(target);
  ASSERT_TRUE(staged.ok()) << staged.error();
  if (!kiln::testing::SetImmutable(tmp / "p", true)) {
    GTEST_SKIP() << "no immutable attribute here (file system or capability)";
  }
  const bool committed = staged.Commit(false);
  ASSERT_TRUE(kiln::testing::SetImmutable(tmp / "p", false));
  EXPECT_FALSE(committed);
  EXPECT_EQ(staged.error(), "rename into place: Operation not permitted");
  EXPECT_FALSE(fs::exists(target));
}

// --force over a directory that holds a file nobody may remove (immutable):
// the new directory is in place, and the error names where the earlier one
// was left and why it could not be removed.
TEST(StagedDirectory, ForceWhoseEarlierDirectoryCannotBeRemovedSaysWhereItIs) {
  TempDir tmp;
  const std::string target = tmp / "out";
  fs::create_directory(target);
  WriteBytes(target + "/stuck", {1});
  if (!kiln::testing::SetImmutable(target + "/stuck", true)) {
    GTEST_SKIP() << "no immutable attribute here (file system or capability)";
  }
  std::string error;
  {
    cli::StagedDirectory staged(target);
    ASSERT_TRUE(staged.ok()) << staged.error();
    const int fd = ::openat(staged.fd(), "new", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    ::close(fd);
    EXPECT_FALSE(staged.Commit(true));
    error = staged.error();
  }
  EXPECT_TRUE(fs::exists(target + "/new"));
  const std::string prefix = "unpacked, but the earlier directory, now at ";
  const std::string suffix = ", could not be removed: Operation not permitted";
  ASSERT_TRUE(error.starts_with(prefix) && error.ends_with(suffix)) << error;
  const std::string old = error.substr(prefix.size(), error.size() - prefix.size() - suffix.size());
  EXPECT_TRUE(fs::exists(old + "/stuck")) << error;
  ASSERT_TRUE(kiln::testing::SetImmutable(old + "/stuck", false));
  fs::remove_all(old);
}

// A directory that cannot be listed is neither empty nor full: an error,
// with the reason. (root lists any directory, so this runs only without.)
TEST(InspectTarget, UnreadableDirectoryIsAnError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root can list a mode-000 directory";
  TempDir tmp;
  const std::string target = tmp / "locked";
  fs::create_directory(target);
  fs::permissions(target, fs::perms::none);
  std::string why;
  EXPECT_EQ(cli::InspectTarget(target, &why), cli::TargetState::kError);
  EXPECT_NE(why.find("ermission denied"), std::string::npos) << why;
  fs::permissions(target, fs::perms::owner_all);
}

// --force over an existing directory where the exchange cannot be made.
// The file system or kernel says it does not support RENAME_EXCHANGE
// (EINVAL, ENOSYS, ENOTSUP): the old directory is moved aside, the new one
// put in place, the old one removed. Any other failure (EPERM here) is an
// error, with the old directory left in place and nothing else left behind.
// In a child, whose renameat2(RENAME_EXCHANGE) fails with that errno
// (seccomp). Its exit status names the step that failed (kNoSeccomp: no seccomp).
int SwapWhereTheExchangeFails(const std::string& dir, int error) {
  if (!kiln::testing::FailRenameat2(error, RENAME_EXCHANGE)) return kiln::testing::kNoSeccomp;
  const std::string target = dir + "/out";
  fs::create_directory(target);
  WriteBytes(target + "/old", {1});
  const bool unsupported = error != EPERM;
  {
    cli::StagedDirectory staged(target);
    if (!staged.ok()) return 1;
    const int fd = ::openat(staged.fd(), "new", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return 2;
    ::close(fd);
    const bool committed = staged.Commit(true);
    if (committed != unsupported) return 3;
    if (!unsupported && staged.error() != "rename into place: Operation not permitted") return 4;
  }
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  if (names != std::vector<std::string>{"out"}) return 5;  // nothing at a temporary name
  const bool has_new = fs::exists(target + "/new");
  const bool has_old = fs::exists(target + "/old");
  if (has_new != unsupported || has_old == unsupported) return 6;
  return 0;
}

TEST(StagedDirectory, ForceWhereTheExchangeIsUnsupportedFallsBackOtherFailuresDoNot) {
  for (const int error : {EINVAL, ENOSYS, ENOTSUP, EPERM}) {
    TempDir tmp;
    const int status = kiln::testing::ExitStatusInChild(
        [&] { return SwapWhereTheExchangeFails(tmp.path(), error); });
    if (status == kiln::testing::kNoSeccomp) {
      GTEST_SKIP() << "seccomp filters are not allowed here";
    }
    EXPECT_EQ(status, 0) << std::strerror(error) << ": step " << status;
  }
}

// Where the exchange is unsupported and moving the earlier directory aside
// is refused too (rename() fails with EPERM): the error says so, the earlier
// directory stays whole at DIR, and nothing is left at a temporary name. In
// a child (the seccomp filters stay there).
int SwapWhoseMoveAsideFails(const std::string& dir) {
  if (!kiln::testing::FailRenameat2(ENOSYS, RENAME_EXCHANGE) ||
      !kiln::testing::FailSyscall(SYS_rename, EPERM)) {
    return kiln::testing::kNoSeccomp;
  }
  const std::string target = dir + "/out";
  fs::create_directory(target);
  WriteBytes(target + "/old", {1});
  {
    cli::StagedDirectory staged(target);
    if (!staged.ok()) return 1;
    if (staged.Commit(true)) return 2;
    if (staged.error() != "cannot move the earlier directory aside: Operation not permitted") {
      return 3;
    }
  }
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  if (names != std::vector<std::string>{"out"}) return 4;
  return fs::exists(target + "/old") ? 0 : 5;
}

TEST(StagedDirectory, ForceWhoseMoveAsideIsRefusedKeepsTheEarlierDirectory) {
  TempDir tmp;
  const int status =
      kiln::testing::ExitStatusInChild([&] { return SwapWhoseMoveAsideFails(tmp.path()); });
  if (status == kiln::testing::kNoSeccomp) GTEST_SKIP() << "seccomp filters are not allowed here";
  EXPECT_EQ(status, 0) << "step " << status;
}

}  // namespace
}  // namespace kiln::testing_formats
