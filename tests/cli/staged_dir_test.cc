// StagedDirectory and InspectTarget (kiln unpack's output) on targets that
// change between kiln unpack's check and the final rename, or cannot be
// read: never replaced without --force, and the reason said.
#include "staged_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>  // RENAME_EXCHANGE
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "formats/test_util.h"
#include "gtest/gtest.h"
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

}  // namespace
}  // namespace kiln::testing_formats
