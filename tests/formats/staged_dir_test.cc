// StagedDirectory (kiln unpack's output) when the target changes between
// kiln unpack's check and the final rename: a directory that gained files
// in the meantime is never replaced without --force, and says so.
#include "staged_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "test_util.h"

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

}  // namespace
}  // namespace kiln::testing_formats
