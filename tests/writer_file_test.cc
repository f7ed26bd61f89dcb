// BlockWriter::WriteToFile against a hostile or failing file system: a
// planted symlink is replaced, never followed; a full disk is an I/O error
// (WriteError, with errno), not a format rule, and leaves nothing behind.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "gtest/gtest.h"
#include "kiln/kiln.h"
#include "kiln/writer.h"
#include "support/golden.h"
#include "support/tmpfs.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

const std::uint8_t kBytes[8] = {1, 2, 3, 4, 5, 6, 7, 8};

BlockWriter SmallBlock() {
  BlockWriter w;
  TensorRequest r;
  r.name = "w";
  r.dtype = Dtype::kU8;
  r.shape = {8};
  EXPECT_TRUE(w.Add(r, Payload::Bytes(kBytes)).ok());
  return w;
}

// `size` bytes of u8 payload, produced while the block is written.
BlockWriter StreamedBlock(std::uint64_t size) {
  BlockWriter w;
  TensorRequest r;
  r.dtype = Dtype::kU8;
  r.shape = {size};
  EXPECT_TRUE(w.Add(r, Payload::Stream(size,
                                       [](std::span<std::uint8_t> out) {
                                         std::fill(out.begin(), out.end(), std::uint8_t{7});
                                         return true;
                                       }))
                  .ok());
  return w;
}

std::string Text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

struct TempDir {
  TempDir() {
    std::string pattern = ::testing::TempDir() + "kiln-writer-XXXXXX";
    EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path path;
};

std::size_t Entries(const fs::path& dir) {
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

// The old writer opened path + ".tmp" with fopen, which follows a symlink
// planted there: the block went into the file it pointed to.
TEST(WriterFile, SymlinkAtTheOldTemporaryNameIsNotFollowed) {
  TempDir tmp;
  const fs::path victim = tmp.path / "victim";
  std::ofstream(victim) << "keep";
  const fs::path out = tmp.path / "out.klnt";
  fs::create_symlink(victim, out.string() + ".tmp");
  const WriteFileResult n = SmallBlock().WriteToFile(out);
  ASSERT_TRUE(n.ok()) << n.ToString();
  EXPECT_EQ(Text(victim), "keep");
  EXPECT_TRUE(Parse(testing::ReadFile(out)).ok());
}

TEST(WriterFile, SymlinkAtTheTargetIsReplacedNotFollowed) {
  TempDir tmp;
  const fs::path victim = tmp.path / "victim";
  std::ofstream(victim) << "keep";
  const fs::path out = tmp.path / "out.klnt";
  fs::create_symlink(victim, out);
  const WriteFileResult n = SmallBlock().WriteToFile(out);
  ASSERT_TRUE(n.ok()) << n.ToString();
  EXPECT_EQ(Text(victim), "keep");
  EXPECT_FALSE(fs::is_symlink(out));
  EXPECT_TRUE(Parse(testing::ReadFile(out)).ok());
  EXPECT_EQ(Entries(tmp.path), 2u);  // victim, out.klnt: no temporary left
}

TEST(WriterFile, HardLinkAtTheTargetIsReplacedNotWrittenThrough) {
  TempDir tmp;
  const fs::path victim = tmp.path / "victim";
  std::ofstream(victim) << "keep";
  const fs::path out = tmp.path / "out.klnt";
  fs::create_hard_link(victim, out);
  ASSERT_TRUE(SmallBlock().WriteToFile(out).ok());
  EXPECT_EQ(Text(victim), "keep");
  EXPECT_TRUE(Parse(testing::ReadFile(out)).ok());
}

// A target name as long as the file system allows (255 bytes) still works:
// the temporary name does not grow with it.
TEST(WriterFile, LongestFileNameWorks) {
  TempDir tmp;
  const fs::path out = tmp.path / std::string(255, 'n');
  const WriteFileResult n = SmallBlock().WriteToFile(out);
  ASSERT_TRUE(n.ok()) << n.ToString();
  EXPECT_TRUE(Parse(testing::ReadFile(out)).ok());
}

TEST(WriterFile, MissingDirectoryIsAnIoErrorWithErrno) {
  TempDir tmp;
  const WriteFileResult n = SmallBlock().WriteToFile(tmp.path / "no/such/dir/out.klnt");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.format_error(), nullptr);
  ASSERT_NE(n.io_error(), nullptr);
  EXPECT_EQ(n.io_error()->error_number, ENOENT);
  EXPECT_NE(n.ToString().find("cannot write"), std::string::npos) << n.ToString();
}

TEST(WriterFile, RuleBrokenIsAFormatErrorAndWritesNothing) {
  TempDir tmp;
  BlockWriter w;
  TensorRequest r;
  r.dtype = Dtype::kI8;
  r.shape = {4, 6};
  r.scheme = QuantScheme::kPerAxis;
  r.axis = 1;
  r.scale_index = 1;  // no tensor 1: Q5, found when the block is written
  static const std::uint8_t kPayload[24] = {};
  ASSERT_TRUE(w.Add(r, Payload::Bytes(kPayload)).ok());
  const WriteFileResult n = w.WriteToFile(tmp.path / "out.klnt");
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.format_error(), nullptr);
  EXPECT_EQ(n.io_error(), nullptr);
  EXPECT_EQ(Entries(tmp.path), 0u);
}

TEST(WriterFile, FullFileSystemIsAnIoErrorAndLeavesNothingBehind) {
  testing::SmallTmpfs fs1("1m");
  if (!fs1.mounted()) GTEST_SKIP() << fs1.why();
  const fs::path out = fs::path(fs1.path()) / "big.klnt";
  std::ofstream(out) << "earlier";
  const WriteFileResult n = StreamedBlock(std::uint64_t{3} << 20).WriteToFile(out);
  ASSERT_FALSE(n.ok());
  ASSERT_NE(n.io_error(), nullptr) << n.ToString();
  EXPECT_EQ(n.io_error()->error_number, ENOSPC) << n.ToString();
  EXPECT_EQ(n.format_error(), nullptr);
  EXPECT_EQ(Text(out), "earlier");  // the target keeps its contents
  EXPECT_EQ(Entries(fs1.path()), 1u);
}

}  // namespace
}  // namespace kiln
