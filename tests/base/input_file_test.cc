// base::InputFile and base::MappedInput: what the descriptor opened is, and
// why opening or mapping failed.
#include "kiln/base/input_file.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "kiln/base/mapped_input.h"
#include "support/syscall_fault.h"
#include "support/temp_dir.h"
#include "support/tmpfs.h"

namespace kiln {
namespace {

using base::InputFile;
using base::InputKind;

TEST(InputFile, ARegularFileIsOpenedWithItsSize) {
  const testing::ScratchDir dir;
  const std::string path = dir / "five";
  std::ofstream(path) << "12345";
  const InputFile f(path);
  ASSERT_TRUE(f.ok()) << f.error();
  EXPECT_EQ(f.kind(), InputKind::kRegular);
  EXPECT_STREQ(f.kind_name(), "regular file");
  EXPECT_EQ(f.size(), 5u);
  EXPECT_GE(f.fd(), 0);
}

TEST(InputFile, AMissingFileSaysWhy) {
  const testing::ScratchDir dir;
  const InputFile f(dir / "absent");
  EXPECT_FALSE(f.ok());
  EXPECT_EQ(f.error(), "cannot open: No such file or directory");
  EXPECT_EQ(f.fd(), -1);
}

// A process started with standard input closed (a daemon, `kiln validate F
// 0<&-`) gets descriptor 0 from the first open(): that is a file like any
// other, not a failure.
TEST(InputFile, DescriptorZeroIsAFile) {
  const testing::ScratchDir dir;
  const std::string path = dir / "three";
  std::ofstream(path) << "abc";
  const int saved = ::fcntl(0, F_DUPFD_CLOEXEC, 3);
  ASSERT_GE(saved, 0);
  ASSERT_EQ(::close(0), 0);
  {
    const InputFile f(path);
    EXPECT_TRUE(f.ok()) << f.error();
    EXPECT_EQ(f.fd(), 0);
    EXPECT_EQ(f.size(), 3u);
  }
  EXPECT_EQ(::fcntl(0, F_GETFD), -1) << "the destructor leaves descriptor 0 open";
  ASSERT_EQ(::dup2(saved, 0), 0);
  ::close(saved);
}

std::size_t NoPrefix(std::span<const std::uint8_t>) { return 0; }

// A file mapped whole: ok(), errno value 0 and no message
// (as documented for success), its bytes, and no cut; an empty file maps
// nothing and is ok the same way.
TEST(MappedInput, AFileMappedWholeReportsNoError) {
  const testing::ScratchDir dir;
  std::ofstream(dir / "five") << "12345";
  std::ofstream(dir / "empty").close();
  for (const std::string content : {"12345", ""}) {
    const base::MappedInput in(dir / (content.empty() ? "empty" : "five"), &NoPrefix);
    ASSERT_TRUE(in.ok()) << in.error();  // ok(): no failed step (what() is null)
    EXPECT_EQ(in.error_number(), 0);
    EXPECT_EQ(in.error(), "");
    EXPECT_EQ(std::string(in.bytes().begin(), in.bytes().end()), content);
    EXPECT_FALSE(in.cut());
  }
}

// A failure keeps open()'s own errno: a missing file is ENOENT (what a
// binding turns into FileNotFoundError), not a generic EIO.
TEST(MappedInput, AFailedOpenKeepsItsErrno) {
  const testing::ScratchDir dir;
  const base::MappedInput missing(dir / "absent", &NoPrefix);
  EXPECT_FALSE(missing.ok());
  EXPECT_STREQ(missing.what(), "cannot open");
  EXPECT_EQ(missing.error_number(), ENOENT);
  EXPECT_EQ(missing.error(), "cannot open: No such file or directory");
  const base::MappedInput directory(dir.path().string(), &NoPrefix);
  EXPECT_STREQ(directory.what(), "not a regular file");
  EXPECT_EQ(directory.error_number(), EINVAL);
  EXPECT_EQ(directory.error(), "not a regular file (a directory)");
}

// An open() refused with EPERM (errno 1; here by a seccomp filter, in a
// child) is reported as EPERM, whatever its value: the child's exit status
// says which step failed (0: all held; kNoSeccomp: no seccomp here).
int OpenRefusedChild(const std::string& path) {
  if (!testing::FailSyscall(SYS_openat, EPERM)) return testing::kNoSeccomp;
  const base::MappedInput refused(path, &NoPrefix);
  if (refused.ok()) return 1;
  if (refused.error_number() != EPERM) return 2;
  if (refused.error() != "cannot open: Operation not permitted") return 3;
  return 0;
}

TEST(MappedInput, AnOpenRefusedWithEpermIsEperm) {
  const testing::ScratchDir dir;
  const std::string path = dir / "file";
  std::ofstream(path) << "x";
  const int st = testing::ExitStatusInChild([&] { return OpenRefusedChild(path); });
  if (st == testing::kNoSeccomp) GTEST_SKIP() << "seccomp filters are not allowed here";
  EXPECT_EQ(st, 0) << "step " << st << " failed";
}

// "too large to map" is for a length a signed size cannot hold; on a 64-bit
// target every file fits, so even a sparse file of 2^63-1 bytes (tmpfs
// allows one) is tried, and the kernel's refusal to map it is reported.
TEST(MappedInput, AFileOf2Pow63Minus1BytesIsTriedNotCalledTooLarge) {
  if (sizeof(std::size_t) < 8) GTEST_SKIP() << "a 64-bit target";
  const testing::SmallTmpfs fs("1m");
  if (!fs.mounted()) GTEST_SKIP() << fs.why();
  const std::string path = fs.path() + "/huge";
  std::ofstream(path).close();
  std::filesystem::resize_file(path, std::uint64_t{INT64_MAX});  // sparse
  const base::MappedInput huge(path, &NoPrefix);
  EXPECT_FALSE(huge.ok());
  EXPECT_STREQ(huge.what(), "cannot map") << huge.error();
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace kiln
