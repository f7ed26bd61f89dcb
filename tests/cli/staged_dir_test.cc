// StagedDirectory and InspectTarget (kiln unpack's output) on targets that
// change between kiln unpack's check and the final rename, or cannot be
// read: never replaced without --force, and the reason said.
#include "staged_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "formats/test_util.h"
#include "gtest/gtest.h"

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

}  // namespace
}  // namespace kiln::testing_formats
